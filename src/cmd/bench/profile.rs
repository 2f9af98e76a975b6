//! Per-iteration work of a frame, for the cycle model (`cycles.rs`): an instrumented
//! run with rc 1 reads every tile's cumulative `foam_tile_stats` after each host call
//! (one iteration) and keeps the busiest tile's work per phase from the deltas. The
//! extra reads slow the host runtime down, so this run is never the timed one.

use std::mem::size_of;

use foam_layout::{foam_frame_status, foam_link_header, foam_tile_stats};
use serde::Serialize;

use super::cycles::{
    SPILL_RAY_INSTR, INJECTOR_RAY_INSTR, ROUTER_PLAN_INSTR, ROUTER_RAY_INSTR, SEND_RAY_INSTR, TRACER_RAY_INSTR,
    cell_step_instr, multi_worker_cycles, single_worker_cycles,
};
use crate::device::edges::EdgeKind;
use crate::device::tree::Role;
use crate::device::{DeviceError, DevicePlan, DeviceRenderer};
use crate::camera::Camera;

pub const LINK_HEADER_BYTES: u64 = size_of::<foam_link_header>() as u64;

/// The busiest tiles of one compute/exchange iteration.
#[derive(Clone, Debug, Default, Serialize)]
pub struct IterationLoad {
    /// Slowest tile of each compute set (cycles, without launch and sync).
    pub step1_cycles: f64,
    pub step2_cycles: f64,
    pub step3_cycles: f64,
    pub busiest_cell_steps: u64,
    pub busiest_router_rays: u64,
    /// Cells marched and rays forwarded on all tiles (the frame's counters are their sums).
    pub cell_steps: u64,
    pub router_rays: u64,
    pub injected: u64,
    /// Bytes of rays the busiest sender put on the exchange (plus its link headers).
    pub occupied_bytes: u64,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct Profile {
    pub iterations: Vec<IterationLoad>,
    /// Neighbours per cell of the scene, for the tracer's per-step cost.
    pub mean_degree: f64,
    /// Bytes one link buffer holds (header + capacity · ray bytes).
    pub link_bytes: u64,
    /// Links of the best-connected tile (a router: children + parent).
    pub links_max: u64,
    /// Bytes the best-connected tile sends each iteration as built.
    pub busiest_link_bytes: u64,
    /// Bytes all tiles send each iteration as built.
    pub link_bytes_total: u64,
    pub framebuffer_bytes: u64,
    /// The instrumented frame's own statistics.
    pub frame: crate::device::FrameStats,
}

/// Bytes each node sends in every exchange, as the static `Copy` moves every buffer
/// whole: the buffers of its edges going away from it (an injector's lanes carry
/// only a header down). With them, per node, the links it counts as its own (tree
/// edges and side links at either end; an injector's lanes at the injector) and
/// every edge at it.
fn exchange_per_node(plan: &DevicePlan) -> (Vec<u64>, Vec<(u64, u64)>) {
    let n = plan.tree.nodes.len();
    let (mut sent, mut links) = (vec![0u64; n], vec![(0u64, 0u64); n]);
    let bytes = |capacity: u32| crate::device::options::link_bytes(capacity, plan.ray_bytes) as u64;
    for e in &plan.spec.edges {
        let (from, to) = (e.from as usize, e.to as usize);
        let injected = matches!(EdgeKind::of(e), EdgeKind::Injector | EdgeKind::Direct);
        sent[from] += bytes(e.capacity);
        sent[to] += if injected { LINK_HEADER_BYTES } else { bytes(e.capacity) };
        links[from].0 += 1;
        links[to].0 += !injected as u64;
        links[from].1 += 1;
        links[to].1 += 1;
    }
    (sent, links)
}

/// Renders `cam` once with `plan` (which must have rc 1) and records every iteration.
pub fn profile(plan: DevicePlan, scene: &crate::scene::Scene, cam: &Camera, mean_degree: f64) -> Result<Profile, DeviceError> {
    if plan.options.rc != 1 {
        return Err(DeviceError::Options(format!(
            "a profile needs rc 1 (one iteration per host call), not {}",
            plan.options.rc
        )));
    }
    let tree = plan.tree.clone();
    let ray_bytes = plan.ray_bytes as u64;
    let (sent, links) = exchange_per_node(&plan);
    let (busiest_link_bytes, links_max) = sent.iter().copied().zip(links.iter().map(|l| l.0)).max().unwrap_or((0, 1));
    let link_bytes_total = sent.iter().sum();
    let link_bytes = busiest_link_bytes / links_max;
    let framebuffer_bytes =
        plan.shards() as u64 * plan.slice_pixels as u64 * size_of::<foam_layout::foam_pixel>() as u64;
    let step_instr = cell_step_instr(mean_degree);
    let mut renderer = DeviceRenderer::new(plan)?;
    // Research tooling (tools/costs/frame_model.py): every tile's work per iteration.
    let mut dump = std::env::var_os("FOAM_PROFILE_DUMP").and_then(|path| {
        let file = std::fs::File::create(&path)
            .map_err(|e| eprintln!("warning: FOAM_PROFILE_DUMP={}: {e}; no profile dump", path.to_string_lossy()))
            .ok()?;
        let mut f = std::io::BufWriter::new(file);
        use std::io::Write;
        writeln!(f, "# link_bytes {} busiest_link_bytes {} links_max {} ray_bytes {}", link_bytes, busiest_link_bytes, links_max, ray_bytes).ok();
        for (i, n) in tree.nodes.iter().enumerate() {
            writeln!(f, "tile {i} {:?} level {} fanout {} inject_lanes {} links {} sent_bytes {}", n.role, n.level, n.fanout, n.inject_lanes, links[i].0, sent[i]).ok();
        }
        Some(f)
    });

    let mut prev = vec![foam_tile_stats::default(); tree.nodes.len()];
    let (mut prev_injected, mut prev_iterations) = (0u64, 0u64);
    let mut loads = Vec::new();
    let mut bad_step = None;
    let mut per_call = |st: &foam_frame_status, tiles: &[foam_tile_stats]| {
        if st.iterations as u64 != prev_iterations + 1 {
            bad_step.get_or_insert(st.iterations as u64 - prev_iterations);
        }
        prev_iterations = st.iterations as u64;
        let mut it = IterationLoad {
            injected: st.injected as u64 - prev_injected,
            ..IterationLoad::default()
        };
        prev_injected = st.injected as u64;
        for (ti, (((n, s), p), &(_, links))) in tree.nodes.iter().zip(tiles).zip(&prev).zip(&links).enumerate() {
            let rays = (s.rays_in - p.rays_in) as u64;
            if let Some(f) = dump.as_mut() {
                use std::io::Write;
                let (steps, px) = (s.cell_steps - p.cell_steps, s.pixels - p.pixels);
                if rays > 0 || steps > 0 || px > 0 {
                    writeln!(f, "{} {ti} {rays} {steps} {px}", prev_iterations).ok();
                }
            }
            match n.role {
                Role::Tracer => {
                    let steps = (s.cell_steps - p.cell_steps) as u64;
                    let instr = rays as f64 * TRACER_RAY_INSTR + steps as f64 * step_instr;
                    it.step1_cycles = it.step1_cycles.max(multi_worker_cycles(instr, rays));
                    it.step2_cycles = it.step2_cycles.max(single_worker_cycles(rays as f64 * SEND_RAY_INSTR));
                    it.busiest_cell_steps = it.busiest_cell_steps.max(steps);
                    it.cell_steps += steps;
                }
                Role::Router => {
                    // Count and forward are separate compute sets with the same split.
                    let half = multi_worker_cycles(rays as f64 * ROUTER_RAY_INSTR / 2.0, rays);
                    it.step1_cycles = it.step1_cycles.max(half);
                    it.step2_cycles = it.step2_cycles.max(single_worker_cycles(ROUTER_PLAN_INSTR));
                    it.step3_cycles = it.step3_cycles.max(half);
                    it.busiest_router_rays = it.busiest_router_rays.max(rays);
                    it.router_rays += rays;
                }
                Role::Spill => {
                    // Spilled rays sent back down (rays_in counts them).
                    it.step1_cycles = it.step1_cycles.max(single_worker_cycles(rays as f64 * SPILL_RAY_INSTR));
                }
                Role::Injector => {
                    // Emitting is one worker; marching the region is six, like a tracer.
                    let steps = (s.cell_steps - p.cell_steps) as u64;
                    let emitted = (s.pixels - p.pixels) as u64;
                    it.step1_cycles = it.step1_cycles.max(single_worker_cycles(emitted as f64 * INJECTOR_RAY_INSTR));
                    let instr = rays as f64 * TRACER_RAY_INSTR + steps as f64 * step_instr;
                    it.step2_cycles = it.step2_cycles.max(multi_worker_cycles(instr, emitted.max(1)));
                    // Dealing the rays out to its lanes (rays held back a step count once).
                    it.step3_cycles = it.step3_cycles.max(single_worker_cycles(emitted as f64 * SEND_RAY_INSTR));
                    it.busiest_cell_steps = it.busiest_cell_steps.max(steps);
                    it.cell_steps += steps;
                }
            }
            let sent = if n.role == Role::Injector { (s.pixels - p.pixels) as u64 } else { rays };
            it.occupied_bytes = it.occupied_bytes.max(sent * ray_bytes + links * LINK_HEADER_BYTES);
        }
        prev.copy_from_slice(tiles);
        loads.push(it);
    };
    let frame = renderer.render_observed(scene, cam, &mut |_, _| {}, Some(&mut per_call))?.stats;
    if let Some(k) = bad_step {
        return Err(DeviceError::Incomplete(format!(
            "a host call of the profile ran {k} iterations, not 1"
        )));
    }
    Ok(Profile {
        iterations: loads,
        mean_degree,
        link_bytes,
        links_max,
        busiest_link_bytes,
        link_bytes_total,
        framebuffer_bytes,
        frame,
    })
}
