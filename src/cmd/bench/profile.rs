//! Per-iteration work of a frame, for the cycle model (`cycles.rs`): an instrumented
//! run with rc 1 reads every tile's cumulative `foam_tile_stats` and per-worker work
//! counters (`poplar_bridge::WORK_HANDLE`) after each host call (one iteration), prices
//! each tile's compute sets from the deltas and keeps the busiest tile per set and every
//! tile's total. The extra reads slow the host runtime down, so this run is never the
//! timed one.

use foam_layout::{
    FOAM_CATS, FOAM_IW_COUNTERS, FOAM_IW_NEIGHBOURS, FOAM_IW_RAYS, FOAM_IW_STEPS, FOAM_IW_VISITS, FOAM_TW_COUNTERS,
    FOAM_TW_LOADED, FOAM_TW_MARCHED, FOAM_TW_NEIGHBOURS, FOAM_TW_PIXELS, FOAM_TW_RAYS, FOAM_TW_RESULTS, FOAM_TW_STEPS,
    foam_frame_status, foam_tile_stats,
};
use serde::Serialize;

use super::costs::Shares;
use super::cycles::{
    MAX_SETS, MarchWork, Part, SendWalk, SetCycles, WORKERS, counts_in_one_worker, injector_cycles, place,
    router_cycles, sets_of, spill_cycles, tracer_cycles,
};
use crate::camera::Camera;
use crate::device::Schedule;
use crate::device::edges::EdgeKind;
use crate::device::frame::{ROUTER_HEAD_WORDS, TRACER_HEAD_WORDS, router_share_word, work_offsets, work_words};
use crate::device::tree::Role;
use crate::device::{DeviceError, DevicePlan, DeviceRenderer};

pub use crate::device::ipus::LINK_HEADER_BYTES;

/// The busiest tiles of one compute/exchange iteration.
#[derive(Clone, Debug, Default, Serialize)]
pub struct IterationLoad {
    /// Slowest tile of each compute set of the step (cycles, without launch and sync;
    /// 0 past the schedule's sets).
    pub step_cycles: SetCycles,
    /// What the SH colour adds to the slowest tiles of the compute sets (the same
    /// iteration costed without the SH terms, subtracted).
    pub sh_cycles: f64,
    pub busiest_cell_steps: u64,
    pub busiest_router_rays: u64,
    /// Pixels the tracers finished (each tracer's count the spill store sums).
    pub pixels: u64,
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
    /// Each compute set's dearest tile when no tile has work (every vertex still runs).
    pub idle_cycles: SetCycles,
    /// Compute sets per step (the schedule's).
    pub sets: usize,
    /// Every tile's compute cycles over the frame (node order), and its role.
    pub tile_cycles: Vec<f64>,
    pub tile_roles: Vec<String>,
    /// Tiles of the chip.
    pub chip_tiles: u64,
    /// Bytes one link buffer holds (header + capacity · ray bytes).
    pub link_bytes: u64,
    /// Links of the best-connected tile (a router: children + parent).
    pub links_max: u64,
    /// Bytes the best-connected tile sends each iteration as built.
    pub busiest_link_bytes: u64,
    /// Bytes the tile that receives the most takes in each iteration as built (the
    /// root: every injector's lane comes to it whole).
    pub busiest_receive_bytes: u64,
    /// Bytes all tiles send each iteration as built.
    pub link_bytes_total: u64,
    /// Bytes the host reads after the frame (framebuffer slices, result stores,
    /// tile statistics: [`DevicePlan::readback_bytes`]).
    pub readback_bytes: u64,
    /// Bytes the host writes for a camera the device does not hold (every
    /// injector's camera region and block list).
    pub view_bytes: u64,
    /// IPUs of the target; link-buffer bytes the exchange copies between IPUs each
    /// iteration (all IPUs), and the most any one IPU sends or receives.
    pub ipus: u32,
    pub cross_ipu_bytes: u64,
    pub busiest_ipu_link_bytes: u64,
    /// The instrumented frame's own statistics.
    pub frame: crate::device::FrameStats,
    /// The plan's steps loop ends with the frame (`DeviceOptions::ends_on_device`).
    pub ends_on_device: bool,
    /// The device's part of the frame start ([`super::cycles::frame_start_cycles`]).
    pub frame_start_cycles: f64,
}

/// Where a tile sits: the tree's root or not, the tracer tiles whose finished
/// pixels the spill store sums, and a tracer's side links.
struct TileAt {
    root: bool,
    tracers: u64,
    side_links: u32,
}

/// Words of `foam_tracer_ctl.pending`, `.held` and `.unread` in a tracer's
/// `WORK_HANDLE` words.
const PENDING: usize = std::mem::offset_of!(foam_layout::foam_tracer_ctl, pending) / 4;
const HELD: usize = std::mem::offset_of!(foam_layout::foam_tracer_ctl, held) / 4;
const UNREAD: usize = std::mem::offset_of!(foam_layout::foam_tracer_ctl, unread) / 4;
/// Words of `foam_router_ctl.src_up_count` and `.src_down_count` in a router's
/// `WORK_HANDLE` words (which start at `src_up_count`).
const SRC_UP: usize = 0;
const SRC_DOWN: usize = (std::mem::offset_of!(foam_layout::foam_router_ctl, src_down_count)
    - std::mem::offset_of!(foam_layout::foam_router_ctl, src_up_count))
    / 4;

/// Words of `foam_router_ctl.share_*` in a router's `WORK_HANDLE` words.
const SHARE_AVAIL: usize = router_share_word(std::mem::offset_of!(foam_layout::foam_router_ctl, share_avail));
const SHARE_WANTED: usize = router_share_word(std::mem::offset_of!(foam_layout::foam_router_ctl, share_wanted));
const SHARE_ROOM: usize = router_share_word(std::mem::offset_of!(foam_layout::foam_router_ctl, share_room));
const SHARE_ASKED: usize = router_share_word(std::mem::offset_of!(foam_layout::foam_router_ctl, share_asked));

/// Pixels a tracer finished between two readings of its work counters (its
/// `WORK_HANDLE` words past [`TRACER_HEAD_WORDS`]), over its workers.
fn finished_pixels(work: &[u32], prev: &[u32]) -> u64 {
    let at = |w: &[u32], k: usize| w[k * FOAM_TW_COUNTERS as usize + FOAM_TW_PIXELS as usize];
    (0..WORKERS).map(|k| at(work, k).wrapping_sub(at(prev, k)) as u64).sum()
}

/// Per-worker deltas of cumulative counters (`now` − `before`, rows of `counters`).
fn worker_deltas(
    now: &[u32],
    before: &[u32],
    counters: usize,
    f: impl Fn(&dyn Fn(u32) -> u64) -> MarchWork,
) -> [MarchWork; WORKERS] {
    std::array::from_fn(|w| {
        let row = w * counters;
        f(&|k: u32| (now[row + k as usize].wrapping_sub(before[row + k as usize])) as u64)
    })
}

/// A tile's cycles in the compute sets of `schedule` from its counters before and
/// after an iteration (`work`: its slice of the `WORK_HANDLE` stream; `sh_rest`: SH
/// coefficients per colour channel beyond DC; `at`: where the tile sits).
fn tile_cycles(
    n: &crate::device::tree::Node,
    (s, p): (&foam_tile_stats, &foam_tile_stats),
    work: &[u32],
    prev: &[u32],
    schedule: Schedule,
    sh_rest: usize,
    at: &TileAt,
) -> SetCycles {
    let (root, tracers) = (at.root, at.tracers);
    match n.role {
        Role::Tracer => {
            // The rays waiting in the store as the step before left it are what
            // TracerSend walks again; of the held ones it leaves, those past the
            // prefix it passed over are the ones it kept unmarched this step.
            let walk = SendWalk {
                side_links: at.side_links,
                waiting: prev[PENDING].saturating_sub(prev[HELD]) as u64,
                unmarched: work[HELD].saturating_sub(work[UNREAD]) as u64,
            };
            let (work, prev) = (&work[TRACER_HEAD_WORDS..], &prev[TRACER_HEAD_WORDS..]);
            let w = worker_deltas(work, prev, FOAM_TW_COUNTERS as usize, |d| MarchWork {
                loaded: d(FOAM_TW_LOADED),
                marched_on: d(FOAM_TW_RAYS),
                visits: d(FOAM_TW_MARCHED),
                steps: d(FOAM_TW_STEPS),
                neighbours: d(FOAM_TW_NEIGHBOURS),
                results: d(FOAM_TW_RESULTS),
            });
            let [march, send] = tracer_cycles(&w, finished_pixels(work, prev), sh_rest, walk);
            place(schedule, &[(Part::TracerMarch, march), (Part::TracerSend, send)])
        }
        Role::Injector => {
            let w = worker_deltas(work, prev, FOAM_IW_COUNTERS as usize, |d| MarchWork {
                marched_on: d(FOAM_IW_RAYS),
                visits: d(FOAM_IW_VISITS),
                steps: d(FOAM_IW_STEPS),
                neighbours: d(FOAM_IW_NEIGHBOURS),
                ..MarchWork::default()
            });
            let [emit, march, deal] = injector_cycles(&w, (s.pixels - p.pixels) as u64, sh_rest);
            place(schedule, &[(Part::Emit, emit), (Part::InjectorMarch, march), (Part::Deal, deal)])
        }
        // The counts are this iteration's (RouterCount rewrites them every step), and
        // so are the queue sizes before them (RouterPlan sets them every step).
        Role::Router => {
            let (up, down) = (work[SRC_UP] as u64, work[SRC_DOWN] as u64);
            let counts = &work[ROUTER_HEAD_WORDS..];
            let rays: [u64; WORKERS] = std::array::from_fn(|w| {
                counts[w * FOAM_CATS as usize..(w + 1) * FOAM_CATS as usize].iter().map(|&c| c as u64).sum()
            });
            // RouterCount counts its slices of the queues by their runs, not ray by ray.
            let slice = |n: u64, w: usize| crate::device::tree::worker_lanes(n as usize, w, WORKERS).len() as u64;
            let classified: [u64; WORKERS] =
                std::array::from_fn(|w| rays[w].saturating_sub(slice(up, w) + slice(down, w)));
            let replicas = n.replica_bits.iter().any(|&b| b > 0);
            let shares = Shares {
                short: work[SHARE_WANTED] > work[SHARE_AVAIL],
                rationed: root && work[SHARE_ASKED] > work[SHARE_ROOM],
            };
            let [count, plan, forward] = router_cycles(
                &classified,
                &rays,
                (n.fanout, n.inject_lanes),
                root,
                replicas,
                shares,
                counts_in_one_worker(schedule),
            );
            place(schedule, &[(Part::Count, count), (Part::Plan, plan), (Part::Forward, forward)])
        }
        Role::Spill => place(schedule, &[(Part::Spill, spill_cycles((s.rays_in - p.rays_in) as u64, tracers))]),
    }
}

/// Bytes each node sends and receives in every exchange, as the static `Copy` moves
/// every buffer whole: the buffers of its edges going away from it, and those coming
/// to it (an injector's lanes carry only a header down). With them, per node, the
/// links it counts as its own (tree edges and side links at either end; an
/// injector's lanes at the injector) and every edge at it. Every tracer also sends
/// the spill store its word of finished pixels.
fn exchange_per_node(plan: &DevicePlan) -> (Vec<u64>, Vec<u64>, Vec<(u64, u64)>) {
    let n = plan.tree.nodes.len();
    let (mut sent, mut received, mut links) = (vec![0u64; n], vec![0u64; n], vec![(0u64, 0u64); n]);
    for e in &plan.spec.edges {
        let (from, to) = (e.from as usize, e.to as usize);
        let injected = matches!(EdgeKind::of(e), EdgeKind::Injector | EdgeKind::Direct);
        let [there, back] = crate::device::ipus::edge_bytes(e, plan.ray_bytes);
        sent[from] += there;
        sent[to] += back;
        received[to] += there;
        received[from] += back;
        links[from].0 += 1;
        links[to].0 += !injected as u64;
        links[from].1 += 1;
        links[to].1 += 1;
    }
    let spill = plan.tree.spill();
    for t in crate::device::ipus::finish_senders(plan) {
        sent[t] += crate::device::ipus::FINISH_WORD_BYTES;
        received[spill] += crate::device::ipus::FINISH_WORD_BYTES;
    }
    (sent, received, links)
}

/// Renders `cam` once with `plan` (which must have rc 1) and records every iteration.
pub fn profile(plan: DevicePlan, scene: &crate::scene::Scene, cam: &Camera) -> Result<Profile, DeviceError> {
    if plan.options.rc != 1 {
        return Err(DeviceError::Options(format!(
            "a profile needs rc 1 (one iteration per host call), not {}",
            plan.options.rc
        )));
    }
    let sh_rest = crate::scene::sh_rest_len(plan.sh.degree) / 3;
    let ends_on_device = plan.options.ends_on_device;
    let tree = plan.tree.clone();
    let ray_bytes = plan.ray_bytes as u64;
    let (sent, received, links) = exchange_per_node(&plan);
    let (busiest_link_bytes, links_max) = sent.iter().copied().zip(links.iter().map(|l| l.0)).max().unwrap_or((0, 1));
    let busiest_receive_bytes = received.iter().copied().max().unwrap_or(0);
    let link_bytes_total = sent.iter().sum();
    let link_bytes = busiest_link_bytes / links_max;
    let readback_bytes = plan.readback_bytes();
    let view_bytes = plan.view_bytes();
    let resets: Vec<(u32, u64)> =
        poplar_bridge::spec_reset_vertices(&plan.spec)?.iter().map(|r| (r.node, r.bytes)).collect();
    let frame_start_cycles = super::cycles::frame_start_cycles(&resets, plan.options.ipus);
    let chip_tiles = plan.options.target_tiles() as u64;
    let ipus = plan.options.ipus;
    let per_ipu = crate::device::ipus::per_ipu(&plan)?;
    let cross_ipu_bytes = per_ipu.iter().map(|l| l.bytes_out_per_iteration).sum();
    let busiest_ipu_link_bytes =
        per_ipu.iter().map(|l| l.bytes_out_per_iteration.max(l.bytes_in_per_iteration)).max().unwrap_or(0);
    let schedule = plan.options.schedule.unwrap_or_default();
    let sets = sets_of(schedule);
    let tracers = crate::device::ipus::finish_senders(&plan).count() as u64;
    let side_links: Vec<u32> = (0..tree.nodes.len()).map(|i| plan.sides.get(i).map_or(0, |s| s.len() as u32)).collect();
    let at = |i: usize| TileAt { root: i == tree.root(), tracers, side_links: side_links[i] };
    let (offsets, words) = work_offsets(&tree.nodes);
    let mut prev_work = vec![0u32; words];
    let mut tile_totals = vec![0.0f64; tree.nodes.len()];
    let zero = vec![0u32; prev_work.len()];
    let none = foam_tile_stats::default();
    let mut idle_cycles = [0.0f64; MAX_SETS];
    for (i, (n, &o)) in tree.nodes.iter().zip(&offsets).enumerate() {
        let w = &zero[o..o + work_words(n.role)];
        let c = tile_cycles(n, (&none, &none), w, w, schedule, sh_rest, &at(i));
        for (idle, c) in idle_cycles.iter_mut().zip(c) {
            *idle = idle.max(c);
        }
    }
    let mut renderer = DeviceRenderer::new(plan)?;
    // Research tooling (tools/costs/frame_model.py): every tile's work per iteration.
    let mut dump = std::env::var_os("FOAM_PROFILE_DUMP").and_then(|path| {
        let file = std::fs::File::create(&path)
            .map_err(|e| eprintln!("warning: FOAM_PROFILE_DUMP={}: {e}; no profile dump", path.to_string_lossy()))
            .ok()?;
        let mut f = std::io::BufWriter::new(file);
        use std::io::Write;
        writeln!(
            f,
            "# link_bytes {} busiest_link_bytes {} busiest_receive_bytes {} links_max {} ray_bytes {} sets {}",
            link_bytes, busiest_link_bytes, busiest_receive_bytes, links_max, ray_bytes, sets
        )
        .ok();
        let mut shard = vec![-1i64; tree.nodes.len()];
        for (n, s) in tree.tracer_nodes() {
            shard[n] = s as i64;
        }
        for (i, n) in tree.nodes.iter().enumerate() {
            writeln!(
                f,
                "tile {i} {:?} level {} fanout {} inject_lanes {} links {} sent_bytes {} received_bytes {} shard {}",
                n.role, n.level, n.fanout, n.inject_lanes, links[i].0, sent[i], received[i], shard[i]
            )
            .ok();
        }
        Some(f)
    });

    let mut prev = vec![foam_tile_stats::default(); tree.nodes.len()];
    let (mut prev_injected, mut prev_iterations) = (0u64, 0u64);
    let mut loads = Vec::new();
    let mut bad_step = None;
    let mut per_call = |st: &foam_frame_status, tiles: &[foam_tile_stats], work: &[u32]| {
        if st.iterations as u64 != prev_iterations + 1 {
            bad_step.get_or_insert(st.iterations as u64 - prev_iterations);
        }
        prev_iterations = st.iterations as u64;
        let mut it = IterationLoad { injected: st.injected as u64 - prev_injected, ..IterationLoad::default() };
        prev_injected = st.injected as u64;
        let mut without_sh = [0.0f64; MAX_SETS];
        for (ti, (((n, s), p), &(_, links))) in tree.nodes.iter().zip(tiles).zip(&prev).zip(&links).enumerate() {
            let rays = (s.rays_in - p.rays_in) as u64;
            let span = offsets[ti]..offsets[ti] + work_words(n.role);
            let c = tile_cycles(n, (s, p), &work[span.clone()], &prev_work[span.clone()], schedule, sh_rest, &at(ti));
            if let Some(f) = dump.as_mut() {
                use std::io::Write;
                let (steps, px) = (s.cell_steps - p.cell_steps, s.pixels - p.pixels);
                if rays > 0 || steps > 0 || px > 0 {
                    write!(f, "{prev_iterations} {ti} {rays} {steps} {px}").ok();
                    for c in &c[..sets] {
                        write!(f, " {c:.0}").ok();
                    }
                    writeln!(f).ok();
                }
            }
            for (slowest, c) in it.step_cycles.iter_mut().zip(c) {
                *slowest = slowest.max(c);
            }
            let plain = if sh_rest > 0 {
                tile_cycles(n, (s, p), &work[span.clone()], &prev_work[span.clone()], schedule, 0, &at(ti))
            } else {
                c
            };
            for (k, v) in plain.into_iter().enumerate() {
                without_sh[k] = without_sh[k].max(v);
            }
            tile_totals[ti] += c.iter().sum::<f64>();
            let steps = (s.cell_steps - p.cell_steps) as u64;
            match n.role {
                Role::Tracer | Role::Injector => {
                    it.busiest_cell_steps = it.busiest_cell_steps.max(steps);
                    it.cell_steps += steps;
                    if n.role == Role::Tracer {
                        let rows = span.start + TRACER_HEAD_WORDS..span.end;
                        it.pixels += finished_pixels(&work[rows.clone()], &prev_work[rows]);
                    }
                }
                Role::Router => {
                    it.busiest_router_rays = it.busiest_router_rays.max(rays);
                    it.router_rays += rays;
                }
                Role::Spill => {}
            }
            let sent = if n.role == Role::Injector { (s.pixels - p.pixels) as u64 } else { rays };
            it.occupied_bytes = it.occupied_bytes.max(sent * ray_bytes + links * LINK_HEADER_BYTES);
        }
        it.sh_cycles = it.step_cycles.iter().sum::<f64>() - without_sh.iter().sum::<f64>();
        prev.copy_from_slice(tiles);
        prev_work.copy_from_slice(work);
        loads.push(it);
    };
    let frame = renderer.render_observed(scene, cam, &mut |_, _| {}, Some(&mut per_call))?.stats;
    if let Some(k) = bad_step {
        return Err(DeviceError::Incomplete(format!("a host call of the profile ran {k} iterations, not 1")));
    }
    let tile_roles = tree.nodes.iter().map(|n| format!("{:?}", n.role)).collect();
    Ok(Profile {
        iterations: loads,
        idle_cycles,
        sets,
        tile_cycles: tile_totals,
        tile_roles,
        chip_tiles,
        link_bytes,
        links_max,
        busiest_link_bytes,
        busiest_receive_bytes,
        link_bytes_total,
        readback_bytes,
        view_bytes,
        ipus,
        cross_ipu_bytes,
        busiest_ipu_link_bytes,
        frame,
        ends_on_device,
        frame_start_cycles,
    })
}
