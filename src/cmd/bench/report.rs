//! The text form of a bench report: one block per single run, one table per sweep.

use std::fmt::Write;

use super::cycles;
use super::{Point, Report};

fn db(v: f64) -> String {
    if v.is_finite() { format!("{v:.2} dB") } else { "inf (identical)".into() }
}

pub fn text(r: &Report) -> String {
    let mut s = String::new();
    let w = &mut s;
    let _ = writeln!(
        w,
        "scene: {} ({} cells, {:.2} neighbours per cell); camera {} at {}x{}",
        r.scene, r.cells, r.mean_neighbours, r.camera, r.width, r.height
    );
    let on = if r.ipus > 1 { format!(" on {} IPUs", r.ipus) } else { String::new() };
    let _ = writeln!(
        w,
        "device: {} shards{on}, {} layout, SH degree {}, drain {}; {} timed frame(s) per configuration, {} threads",
        r.shards, r.layout, r.sh_degree, r.drain, r.frames, r.threads
    );
    let _ = writeln!(w, "read: {:.2} s ({:.1} MB file, validated)", r.read_s, r.file_bytes as f64 / 1e6);
    let colour = if r.sh_degree == 0 { "DC colour".to_string() } else { format!("SH degree {}", r.sh_degree) };
    let _ = writeln!(w, "reference wall time: {:.4} s (median, {colour})", r.reference_s);
    if let Some(p) = &r.run {
        point(w, p);
    }
    if let Some(q) = &r.paper {
        let _ = writeln!(
            w,
            "\nthe paper's configuration (quadtree, rows:1, one injector, no direct lanes, side links, copies or result stores, 256-ray links):"
        );
        point(w, q);
        paper_summary(w, r.run.as_ref(), q);
    }
    if let Some(peak) = r.host_peak_bytes {
        let _ = writeln!(
            w,
            "host peak memory: {:.1} MB ({:.2}x the scene file; whole run, reference renders included)",
            peak as f64 / 1e6,
            peak as f64 / r.file_bytes.max(1) as f64
        );
    }
    for sw in &r.sweeps {
        let fixed = if sw.parameter == "rc" { format!("batch {}", r.batch) } else { format!("rc {}", r.rc) };
        let _ = writeln!(w, "\nsweep {} ({fixed}):", sw.parameter);
        let _ = writeln!(
            w,
            "{:>8} {:>10} {:>10} {:>10} {:>8} {:>8} {:>9} {:>8} {:>10} {:>12} {:>11}",
            sw.parameter,
            "iterations",
            "host calls",
            "device s",
            "ratio",
            "rtr/trc",
            "dropped",
            "peak q",
            "PSNR dB",
            "est. IPU ms",
            "est. iter/s"
        );
        for p in &sw.points {
            let label = if sw.parameter == "rc" { p.rc.to_string() } else { p.batch.clone() };
            let (ms, ips) = p.estimate.as_ref().map_or(("-".to_string(), "-".to_string()), |e| {
                (format!("{:.3}", e.frame_s * 1e3), format!("{:.0}", e.iterations as f64 / e.frame_s))
            });
            let _ = writeln!(
                w,
                "{:>8} {:>10} {:>10} {:>10.4} {:>8.2} {:>8.2} {:>9} {:>8} {:>10.2} {:>12} {:>11}",
                label,
                p.stats.iterations,
                p.stats.host_calls,
                p.device_s,
                p.time_ratio,
                p.stats.router_hops_per_tracer_hop,
                p.stats.rays_dropped,
                p.stats.max_buffer_occupancy,
                p.psnr_db,
                ms,
                ips
            );
        }
    }
    s
}

/// The paper's Tab. 3 (R = 1), measured on a Mk2 IPU on multi-million-cell scenes.
const PAPER_TAB3_ITERATIONS: u64 = 680;
const PAPER_TAB3_FRAME_S: f64 = 0.952;

fn paper_summary(w: &mut String, run: Option<&Point>, q: &Point) {
    let frame = |p: &Point| p.estimate.as_ref().map(|e| e.frame_s);
    let _ = writeln!(w, "this design against the paper's (modelled Mk2 frame, iterations):");
    if let Some(p) = run {
        let _ = writeln!(
            w,
            "  this run:      {} iterations, {}",
            p.stats.iterations,
            frame(p).map_or("no estimate".into(), |f| format!("{:.1} ms", f * 1e3))
        );
    }
    let _ = writeln!(
        w,
        "  paper config:  {} iterations, {}",
        q.stats.iterations,
        frame(q).map_or("no estimate".into(), |f| format!("{:.1} ms", f * 1e3))
    );
    let _ = writeln!(
        w,
        "  paper Tab. 3:  {PAPER_TAB3_ITERATIONS} iterations, {:.1} ms (measured on an IPU, trained multi-million-cell scenes)",
        PAPER_TAB3_FRAME_S * 1e3
    );
    if let (Some(p), Some(fq)) = (run.and_then(frame), frame(q)) {
        let _ = writeln!(
            w,
            "  paper config / this run: {:.2}x; paper config / Tab. 3: {:.2}x",
            fq / p,
            fq / PAPER_TAB3_FRAME_S
        );
    }
}

/// A march budget's weights of a shard visit and a ray (layout.h FOAM_BUDGET_*_Q8), in
/// 15-face steps.
fn weights(visit_q8: u32, ray_q8: u32) -> String {
    format!("a shard visit {:.2} of one, a ray {:.2}", visit_q8 as f64 / 256.0, ray_q8 as f64 / 256.0)
}

fn point(w: &mut String, p: &Point) {
    let st = &p.stats;
    let _ = writeln!(w, "configuration: rc {}, batch {}", p.rc, p.batch);
    let caps: Vec<String> = p.link_capacity.iter().map(u32::to_string).collect();
    let _ = writeln!(
        w,
        "links: {} rays per buffer by level; {} side links of {} rays{}",
        caps.join(","),
        p.side_links,
        p.side_capacity,
        if p.links_sized_to_camera { " (tracer links sized to the camera's sampled load)" } else { "" }
    );
    match p.load_cut {
        Some(fill) => {
            let _ = writeln!(
                w,
                "shards: cut again by the camera's sampled load (those nobody looks at up to {fill} % of a tile's room)"
            );
        }
        None => {
            let _ = writeln!(w, "shards: balanced by bytes");
        }
    }
    let _ = writeln!(w, "shard copies on tracers: {}", p.shard_copies);
    let _ = writeln!(
        w,
        "replicas: {} tiles for {} hot shards, {} of them on lanes of their tracer's router, the rest under routers of their own",
        p.replica_tiles, p.replicated_shards, p.replicas_on_lanes
    );
    let _ = writeln!(
        w,
        "injectors: {} (of at most {}: their regions march {:.0} % of the sampled cell steps, and get {}, as far as the tiles and the root's room go), each on a lane to the root of {} rays behind a queue of {}",
        p.injectors,
        p.injectors_asked,
        100.0 * p.injector_share,
        if p.load_cut.is_some() {
            "the free tiles they can take (the cut by load evens the tracers)"
        } else {
            "that share of the free tiles"
        },
        p.inject_capacity,
        p.injector_queue
    );
    let _ = writeln!(
        w,
        "direct lanes from injectors past the root: {} of {} rays (of {} to every router under the root: kept where {} % of an injector's sampled rays head)",
        p.direct_lanes, p.direct_capacity, p.direct_lanes_every, p.direct_share
    );
    let planned = if p.march_budget_planned { format!(" (planned: {})", march_budget_rule()) } else { String::new() };
    if p.march_budget == 0 {
        let _ = writeln!(w, "march budget: none (injectors march every ray they emitted){planned}");
    } else {
        let (visit, ray) = (foam_layout::FOAM_BUDGET_INJECTOR_VISIT_Q8, foam_layout::FOAM_BUDGET_INJECTOR_RAY_Q8);
        let _ = writeln!(
            w,
            "march budget: {} cell steps (of 15 faces; {}) per injector worker per iteration{planned}",
            p.march_budget,
            weights(visit, ray)
        );
    }
    let planned = if p.tracer_budget_planned {
        " (planned: the injectors' budget scaled by their regions' share, or theirs after a cut by load in blocks of 8; at least what marches the hottest tracer's sampled steps in 480 iterations)"
    } else {
        ""
    };
    if p.tracer_budget == 0 {
        let _ = writeln!(w, "tracer budget: none (tracers march every ray that reaches them){planned}");
    } else {
        let _ = writeln!(
            w,
            "tracer budget: {} cell steps (of 15 faces; {}) per tracer worker per iteration{planned}",
            p.tracer_budget,
            weights(foam_layout::FOAM_BUDGET_VISIT_Q8, foam_layout::FOAM_BUDGET_RAY_Q8)
        );
    }
    let schedule = crate::device::Schedule::ALL[p.schedule as usize];
    let sets = crate::cmd::bench::cycles::sets_of(schedule);
    let why = match (p.schedule_asked, schedule) {
        (true, _) => "as asked".to_string(),
        (false, crate::device::Schedule::PlanBesideMarch) => format!(
            "planned: the routers count and plan beside the march, and the tracers send beside their forward, after a cut by load where the camera regions march under {:.0} % of the sampled steps",
            100.0 * crate::device::options::SEND_BESIDE_FORWARD_SHARE
        ),
        (false, crate::device::Schedule::SendBesideForward) => format!(
            "planned: the tracers send beside the routers' forward after a cut by load where the camera regions march under {:.0} % of the sampled steps; the routers count on six workers and plan apart, as the root counts more than {} injectors' lanes",
            100.0 * crate::device::options::SEND_BESIDE_FORWARD_SHARE,
            crate::device::options::ONE_WORKER_COUNT_LANES
        ),
        (false, _) => "planned".to_string(),
    };
    let _ = writeln!(w, "schedule: {} ({sets} compute sets a step; {why})", p.schedule);
    let t = &p.plan_times;
    let _ = writeln!(
        w,
        "steps: partition {:.2} s, pack {:.2} s, plan {:.2} s, graph build {:.2} s, frame {:.2} s (median)",
        t.partition_s, t.pack_s, t.plan_s, p.graph_s, p.device_s
    );
    let _ = writeln!(w, "device wall time: {:.4} s (median, host runtime)", p.device_s);
    let _ = writeln!(w, "time ratio device/reference: {:.2} (issue-5 goal <= 3)", p.time_ratio);
    let _ = writeln!(w, "iterations: {}", st.iterations);
    let _ = writeln!(w, "host calls: {}", st.host_calls);
    let _ = writeln!(w, "rays: {} finished of {}, {} dropped", st.rays_finished, st.rays, st.rays_dropped);
    let _ = writeln!(w, "router hops/ray: {:.2}", st.router_hops_mean);
    let _ = writeln!(w, "tracer hops/ray: {:.2}", st.tracer_hops_mean);
    let _ = writeln!(w, "router hops per tracer hop: {:.2}", st.router_hops_per_tracer_hop);
    let _ = writeln!(w, "side-link hops/ray (tracer to tracer, no router): {:.2}", st.side_hops_mean);
    let _ = writeln!(w, "peak buffer occupancy: {} rays (spill store peak {})", st.max_buffer_occupancy, st.spill_peak);
    let _ = writeln!(w, "PSNR vs reference: {}", db(p.psnr_db));
    if p.per_ipu.len() > 1 {
        per_ipu(w, p);
    }
    let total: u64 = st.router_levels.iter().map(|l| l.rays_forwarded).sum();
    let _ = writeln!(w, "router traffic per tree level (1 = parents of tracers):");
    let _ = writeln!(
        w,
        "  {:>5} {:>7} {:>14} {:>6} {:>14} {:>10}",
        "level", "routers", "rays forwarded", "share", "busiest router", "peak queue"
    );
    for l in &st.router_levels {
        let _ = writeln!(
            w,
            "  {:>5} {:>7} {:>14} {:>5.1}% {:>14} {:>10}",
            l.level,
            l.routers,
            l.rays_forwarded,
            100.0 * l.rays_forwarded as f64 / total.max(1) as f64,
            l.busiest_router_rays,
            l.peak_queue
        );
    }
    if let Some(e) = &p.estimate {
        let _ = writeln!(
            w,
            "IPU estimate (Mk2 at {:.2} GHz; cycle model with measured per-event costs, NOT a measurement):",
            e.clock_hz / 1e9
        );
        let _ = writeln!(
            w,
            "  per-iteration data: an instrumented rc-1 run reading all tile statistics and per-worker work after each iteration"
        );
        if e.ends_on_device {
            let _ = writeln!(
                w,
                "  iterations: {} (the loop ends with the frame) in {} host round trips of at most rc {}",
                e.iterations, e.host_round_trips, p.rc
            );
        } else {
            let _ = writeln!(
                w,
                "  iterations: {} needed, {} at rc {} in {} host round trips",
                e.iterations_needed, e.iterations, p.rc, e.host_round_trips
            );
        }
        if e.iterations != st.iterations {
            // The schedule is meant not to depend on rc; say so when it did.
            let _ = writeln!(
                w,
                "  note: the timed run took {} iterations, not the {} the profile implies",
                st.iterations, e.iterations
            );
        }
        let _ = writeln!(
            w,
            "  busiest tracer, cell steps per iteration: mean {:.1}, max {}; busiest router, rays per iteration: mean {:.1}, max {}",
            e.busiest_cell_steps_mean, e.busiest_cell_steps_max, e.busiest_router_rays_mean, e.busiest_router_rays_max
        );
        let _ = writeln!(
            w,
            "  exchange: {} B per iteration into or out of the busiest tile (full link buffers) = {:.0} cycles",
            e.exchange_bytes_per_iteration,
            e.exchange_bytes_per_iteration as f64 / cycles::EXCHANGE_BYTES_PER_CYCLE
        );
        if e.ipus > 1 {
            let _ = writeln!(
                w,
                "  IPU-Links: {} B per iteration between the {} IPUs, the busiest IPU's = {:.0} cycles at {:.0} B/cycle; {} B per frame; syncs across IPUs {:.0} cycles",
                e.cross_ipu_bytes_per_iteration,
                e.ipus,
                e.ipu_link_cycles_per_iteration,
                cycles::IPU_LINK_BYTES_PER_CYCLE,
                e.cross_ipu_bytes_per_frame,
                cycles::MULTI_IPU_SYNC_CYCLES
            );
        }
        let _ = writeln!(
            w,
            "  cycles per iteration: mean {:.0} (frame: compute {:.3e}, exchange {:.3e}, syncs {:.3e})",
            e.cycles_per_iteration_mean, e.compute_cycles, e.exchange_cycles, e.sync_cycles
        );
        let _ = writeln!(
            w,
            "  estimated IPU frame time: {:.3} ms ({:.0} fps; host {:.3} ms; frame start {:.3} ms); exchanging occupied slots only: {:.3} ms",
            e.frame_s * 1e3,
            e.fps,
            e.host_s * 1e3,
            e.frame_start_s * 1e3,
            e.frame_s_occupied_only * 1e3
        );
        let _ = writeln!(
            w,
            "  a new camera first writes its camera regions and block lists: {:.1} MB = {:.3} ms on the host link at {:.0} GB/s (not in the frame above, a frame of a camera the device holds; frame and upload {:.3} ms)",
            e.view_upload_bytes as f64 / 1e6,
            e.view_upload_s * 1e3,
            super::cycles::HOST_LINK_BYTES_PER_S / 1e9,
            (e.frame_s + e.view_upload_s) * 1e3
        );
        if e.sh_s > 0.0 {
            let _ = writeln!(
                w,
                "  of which SH colour evaluation: {:.3} ms ({:.1} % of the frame; the table's sh_* terms)",
                e.sh_s * 1e3,
                100.0 * e.sh_s / e.frame_s
            );
        }
        let b = &e.balance;
        let _ = writeln!(
            w,
            "  balance: busiest tile ({} {}) computes {:.3} ms per frame = {:.1}x the mean over all {} tiles of the chip ({:.3} ms), {:.1}x the mean over the {} tiles used ({:.3} ms)",
            b.busiest_role,
            b.busiest_tile,
            b.busiest_s * 1e3,
            b.busiest_over_mean_chip,
            b.tiles_chip,
            b.mean_chip_s * 1e3,
            b.busiest_over_mean_used,
            b.tiles_used,
            b.mean_used_s * 1e3
        );
    }
}

fn per_ipu(w: &mut String, p: &Point) {
    let per_iteration: u64 = p.per_ipu.iter().map(|l| l.bytes_out_per_iteration).sum();
    let _ = writeln!(
        w,
        "across IPUs: {per_iteration} B of link buffers per iteration as built, {} B in the timed frame ({} iterations; counted by the runtime)",
        p.stats.bytes_across_ipus, p.stats.iterations
    );
    let _ = writeln!(
        w,
        "  {:>3} {:>10} {:>7} {:>12} {:>13} {:>18} {:>18}",
        "ipu", "tiles used", "tracers", "bytes", "fullest tile", "out B/iteration", "in B/iteration"
    );
    for l in &p.per_ipu {
        let _ = writeln!(
            w,
            "  {:>3} {:>10} {:>7} {:>12} {:>13} {:>18} {:>18}",
            l.ipu,
            l.tiles_used,
            l.tracers,
            l.bytes,
            l.busiest_tile_bytes,
            l.bytes_out_per_iteration,
            l.bytes_in_per_iteration
        );
    }
}

/// The planned march budget's rule as bench prints it, from the constants that make it
/// (`planned_march_budget`, `paced_march_budget`).
pub fn march_budget_rule() -> String {
    use crate::device::options::*;
    format!(
        "the dearest injector's sampled steps over {BUDGET_ITERATIONS} iterations, {BUDGET_ITERATIONS_INJECTORS_ALONE} where its regions march all, \
         {BUDGET_ITERATIONS_LOAD_CUT} after a cut by load, {BUDGET_ITERATIONS_LEAN_CUT} after a lean one; {BUDGET_ITERATIONS_FINE_ALONE} and \
         {BUDGET_ITERATIONS_FINE_LOAD_CUT} in blocks of 4; the tracers' pace where the hottest tracer takes {PACE_RATIO} times as long"
    )
}
