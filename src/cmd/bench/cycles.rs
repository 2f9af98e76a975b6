//! A cycle model of one frame on a real Mk2 IPU, fed with the per-iteration, per-worker
//! work an instrumented run counted (see `profile.rs`). No IPU is available here, so this
//! is an *estimate*, calibrated by measurement: the instructions each vertex spends per
//! event come from `costs.rs` (the codelets run on recorded inputs under callgrind, x86-64
//! instructions per event fitted, times each type's measured IPU/x86 instruction ratio; the
//! routers' fitted in IPU instructions directly, each x86 instruction weighed as on the tile).
//!
//! The model follows the program the graph builder emits per iteration: one `Execute`
//! per compute set of the schedule (three or four, [`set_of`] places each vertex as
//! render_graph.cpp does), then `Copy(all links)`. Under BSP every phase ends in a
//! chip-wide sync, so a phase lasts as long as its busiest tile:
//!
//! ```text
//! iteration = Σ_phase (max_tile cycles(phase) + VERTEX_CYCLES + SYNC_CYCLES)
//!           + EXCHANGE_SETUP_CYCLES + max_tile bytes / EXCHANGE_BYTES_PER_CYCLE + SYNC_CYCLES
//!           + LOOP_TEST_CYCLES where the loop ends with the frame
//! frame     = Σ iterations (where the loop runs rc a call, incl. the idle tail up to
//!             a multiple of rc) / CLOCK_HZ
//!           + host round trips · HOST_ROUND_TRIP_S + read-back bytes / HOST_LINK_BYTES_PER_S
//! ```
//!
//! A tile's six workers are barrel-scheduled: each issues one instruction every six
//! cycles, so a MultiVertex takes 6 × its busiest worker's instructions (the counters
//! are per worker: a tile waits for the worker that drew the longest rays), and a
//! single-worker Vertex 6 × its instructions. Every vertex pays its per-call cost every
//! iteration, busy or not.
//!
//! The exchange is modelled as built: a static `Copy` moves every link buffer in full
//! each iteration, whatever it holds, so the phase waits for the tile that sends the
//! most bytes (a router's lanes down) or the one that receives the most (the root,
//! into which every injector's lane is copied whole), each at its own port's rate. The "occupied slots
//! only" figure shows what an exchange moving just the rays present would cost (a
//! lower bound for that design). The launch, sync and exchange constants below are
//! assumptions (orders of magnitude from Graphcore's documents), not measurements;
//! together they are under 1 % of the modelled frames.

use std::sync::LazyLock;

use serde::Serialize;

use super::costs::{COSTS, Shares, Walk};
use super::profile::Profile;
use crate::device::Schedule;

/// Mk2 (GC200) tile clock.
pub const CLOCK_HZ: f64 = 1.33e9;
/// Hardware worker threads per tile.
pub const WORKERS: usize = 6;
/// Bytes a tile sends (and, independently, receives) per cycle over the exchange.
pub const EXCHANGE_BYTES_PER_CYCLE: f64 = 4.0;
/// Fixed start-up of an exchange phase (exchange code fetch, first-word latency).
pub const EXCHANGE_SETUP_CYCLES: f64 = 100.0;
/// One chip-wide sync between BSP phases ("hundreds of cycles").
pub const SYNC_CYCLES: f64 = 300.0;
/// Starting a compute set's vertices on a tile (supervisor, worker launch).
pub const VERTEX_CYCLES: f64 = 100.0;
/// Bytes an IPU sends (and, independently, receives) per cycle over its IPU-Links:
/// GC200's ten IPU-Links carry 320 GB/s chip to chip (Graphcore's Mk2 figure), taken
/// as both directions together, 160 GB/s each way at CLOCK_HZ.
pub const IPU_LINK_BYTES_PER_CYCLE: f64 = 160e9 / CLOCK_HZ;
/// One sync of a graph spanning several IPUs: every BSP phase then ends in a sync
/// across the chips (over the Sync-Links), assumed 5 × the on-chip one (the
/// IPU-Link latencies measured on Mk1 were 4 to 8 × the on-chip exchange's).
pub const MULTI_IPU_SYNC_CYCLES: f64 = 5.0 * SYNC_CYCLES;

/// Testing the steps loop's predicate where the frame ends on the device
/// (`RepeatWhileTrue`, [`crate::device::DeviceOptions::ends_on_device`]) on one IPU:
/// the word on the spill tile must reach every tile's control program before the
/// next iteration starts, assumed one exchange phase's start-up and one sync after
/// each iteration (assumed, not measured: how Poplar brings a predicate to every
/// tile was not checked on hardware). On several IPUs the sync is theirs
/// ([`loop_test_cycles`]).
pub const LOOP_TEST_CYCLES: f64 = EXCHANGE_SETUP_CYCLES + SYNC_CYCLES;

/// [`LOOP_TEST_CYCLES`] for a graph on `ipus` IPUs.
pub fn loop_test_cycles(ipus: u32) -> f64 {
    EXCHANGE_SETUP_CYCLES + sync_cycles(ipus)
}

/// One host round trip on real hardware: `Engine::run` of the fused loop plus the read
/// of the frame status, 32 bytes from the spill store and from each injector (16 KB
/// with 512 injectors, 1.6 µs of it at [`HOST_LINK_BYTES_PER_S`]); an order of
/// magnitude for an IPU-M2000 host link.
pub const HOST_ROUND_TRIP_S: f64 = 20e-6;
/// Host-link bandwidth for what the host reads after a frame (framebuffer slices,
/// result stores, tile statistics), and for the camera regions and block lists a new
/// camera writes.
pub const HOST_LINK_BYTES_PER_S: f64 = 10e9;

/// A worker's instructions to zero one tensor at the frame start beyond its stores:
/// reading the field's base and size, the loop's set-up and the return (assumed).
pub const ZERO_VERTEX_INSTRUCTIONS: f64 = 20.0;
/// Bytes a worker zeroes an instruction: one 64-bit store in a repeat loop (every
/// tensor starts 8-aligned on its tile).
pub const ZERO_BYTES_PER_INSTRUCTION: f64 = 8.0;

/// Compute sets per step, at most (the four-set schedule; the others leave the last 0).
pub const MAX_SETS: usize = 4;

/// A tile's cycles in each compute set of a step.
pub type SetCycles = [f64; MAX_SETS];

/// The vertices of a step, each in the order its tile runs them: a tracer marches then
/// sends; a router counts, plans, forwards; an injector emits, marches, deals. Listed
/// in the order `poplar_bridge::step_layout` gives their sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    TracerMarch,
    TracerSend,
    Count,
    Plan,
    Forward,
    Spill,
    Emit,
    InjectorMarch,
    Deal,
}

/// The compute set (from 0) that runs `part` under `schedule`: the graph builder's own
/// table (`stepLayout` in codelets/graph/render_graph.cpp, through the bridge), so the
/// model cannot place a vertex where the graph does not run it.
pub fn set_of(schedule: Schedule, part: Part) -> usize {
    // After the set count, TracerMarch .. InjectorSend as `Part` lists them.
    step_layout(schedule)[1 + part as usize] as usize
}

/// Compute sets per step under `schedule`, as the graph builder makes them.
pub fn sets_of(schedule: Schedule) -> usize {
    step_layout(schedule)[0] as usize
}

/// `poplar_bridge::step_layout` of `schedule`, asked once per schedule.
fn step_layout(schedule: Schedule) -> &'static [u8] {
    static LAYOUTS: LazyLock<Vec<Vec<u8>>> = LazyLock::new(|| {
        Schedule::ALL
            .iter()
            .map(|&s| poplar_bridge::step_layout(s as u8).expect("the graph builder lays out every schedule"))
            .collect()
    });
    &LAYOUTS[schedule as usize]
}

/// A tile's vertices' cycles placed in the compute sets of `schedule`.
pub fn place(schedule: Schedule, parts: &[(Part, f64)]) -> SetCycles {
    let mut sets = [0.0; MAX_SETS];
    for &(part, cycles) in parts {
        sets[set_of(schedule, part)] += cycles;
    }
    sets
}

/// One marching worker's work in one iteration (TracerMarch or InjectorMarch).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MarchWork {
    /// Rays loaded from the inboxes (tracer; an injector's are its `marched_on`).
    pub loaded: u64,
    /// Rays marched on (foam_march_copies: the camera ray is rebuilt).
    pub marched_on: u64,
    pub visits: u64,
    pub steps: u64,
    pub neighbours: u64,
    /// Finished rays kept in the result store.
    pub results: u64,
}

/// View-dependent colour (march.h: foam_sh_basis once per ray a worker marches on,
/// in foam_march_copies, and foam_cell_rgb per cell step) with `rest` coefficients
/// per channel beyond DC (0: none), from the measured table's SH terms (fitted on
/// runs of one scene at degrees 0 to 3). Every cell step is charged: near-empty cells
/// skip the colour, but they are under 1 % of the steps measured.
pub fn sh_instr(c: &super::costs::March, rest: usize, w: &MarchWork) -> f64 {
    if rest == 0 {
        0.0
    } else {
        let r = rest as f64;
        (c.sh_visit + c.sh_basis * r) * w.marched_on as f64 + (c.sh_step + c.sh_stepcoeff * r) * w.steps as f64
    }
}

/// Cycles of a MultiVertex whose workers spend `instr` instructions each.
pub fn multi_worker_cycles(instr: impl IntoIterator<Item = f64>) -> f64 {
    instr.into_iter().fold(0.0, f64::max) * WORKERS as f64
}

/// Cycles of a single-worker Vertex doing `instr` instructions.
pub fn single_worker_cycles(instr: f64) -> f64 {
    instr * WORKERS as f64
}

fn march_instr(c: &super::costs::March, w: &MarchWork) -> f64 {
    let active = if w.loaded + w.marched_on > 0 { c.active } else { 0.0 };
    c.fixed
        + active
        + c.ray * w.loaded as f64
        + c.marched_on * w.marched_on as f64
        + c.visit * w.visits as f64
        + c.step * w.steps as f64
        + c.neighbour * w.neighbours as f64
        + c.result * w.results as f64
}

fn item_instr(c: &super::costs::PerItem, items: u64) -> f64 {
    c.fixed + if items > 0 { c.active + c.item * items as f64 } else { 0.0 }
}

/// What a tracer's TracerSend walks besides the rays the march loaded: its side links,
/// the rays waiting for credit in its pending store from the step before, and the
/// rays it keeps unmarched this step (read, and moved into the held prefix; those held
/// unmarched that no worker reached it passes over unread).
#[derive(Clone, Copy, Debug, Default)]
pub struct SendWalk {
    pub side_links: u32,
    pub waiting: u64,
    pub unmarched: u64,
}

/// A tracer's cycles: TracerMarch (six workers), TracerSend (one: it scans every ray
/// loaded and sends on those not finished here, answers every side link, and walks
/// the rays waiting in its pending store again).
pub fn tracer_cycles(workers: &[MarchWork; WORKERS], finished: u64, sh_rest: usize, walk: SendWalk) -> [f64; 2] {
    let c = &*COSTS;
    let loaded: u64 = workers.iter().map(|w| w.loaded).sum();
    let sent = loaded.saturating_sub(finished);
    let s = &c.TracerSend;
    // It reads every ray the march loaded and every one it keeps unmarched.
    let scanned = loaded + walk.unmarched;
    let busy = scanned + walk.waiting > 0;
    let send = s.fixed
        + s.link * walk.side_links as f64
        + s.wait_walk * walk.waiting as f64
        + if busy {
            s.active + s.scan * scanned as f64 + s.send * sent as f64 + s.unmarched * walk.unmarched as f64
        } else {
            0.0
        };
    let march = workers.iter().map(|w| march_instr(&c.TracerMarch, w) + sh_instr(&c.TracerMarch, sh_rest, w));
    [multi_worker_cycles(march), single_worker_cycles(send)]
}

/// An injector's cycles: Injector emits (one worker), InjectorMarch marches (six),
/// InjectorSend deals the marched rays out (one).
pub fn injector_cycles(workers: &[MarchWork; WORKERS], emitted: u64, sh_rest: usize) -> [f64; 3] {
    let c = &*COSTS;
    let marched: u64 = workers.iter().map(|w| w.marched_on).sum();
    let emit = single_worker_cycles(item_instr(&c.Injector, emitted));
    let march = multi_worker_cycles(
        workers.iter().map(|w| march_instr(&c.InjectorMarch, w) + sh_instr(&c.InjectorMarch, sh_rest, w)),
    );
    let deal = single_worker_cycles(item_instr(&c.InjectorSend, marched));
    [emit, march, deal]
}

/// A router's cycles: RouterCount classifies (six workers, `classified` rays each:
/// those of its inboxes; it counts its queues' slices by their runs, per child),
/// RouterPlan plans (one), RouterForward moves every ray, queued or arrived (six,
/// `moved` rays each); every worker of each walks all `children` and its own share
/// of the `lanes` injector (or direct) lanes, and at the `root` also sums and
/// answers its injectors' allowance on them; a router with `replicas` lanes also
/// picks a replicated shard's tile by each ray's pixel. With `one_worker_count` one
/// vertex, RouterCountPlan, counts the six workers' shares and plans in one worker:
/// its cycles are the count's, and the plan's are 0. RouterForward's workers also
/// divide their lanes' shares of what `shares` says is short this step.
pub fn router_cycles(
    classified: &[u64; WORKERS],
    moved: &[u64; WORKERS],
    (children, lanes): (u32, u32),
    root: bool,
    replicas: bool,
    shares: Shares,
    one_worker_count: bool,
) -> [f64; 3] {
    let c = &*COSTS;
    let own = |w: usize| crate::device::tree::worker_lanes(lanes as usize, w, WORKERS).len() as u32;
    let walk = |cost: &Walk, rays: &[u64; WORKERS], shares: Shares| {
        multi_worker_cycles(
            rays.iter().enumerate().map(|(w, &n)| cost.per_worker(children, own(w), root, n, replicas, shares)),
        )
    };
    let forward = walk(&c.RouterForward, moved, shares);
    if one_worker_count {
        let both =
            c.RouterCountPlan.per_worker(children, lanes, root, classified.iter().sum(), replicas, Shares::default());
        return [single_worker_cycles(both), 0.0, forward];
    }
    [
        walk(&c.RouterCount, classified, Shares::default()),
        single_worker_cycles(c.RouterPlan.per_call(children, lanes, root)),
        forward,
    ]
}

/// Whether `schedule` counts a router's rays in one worker (RouterCountPlan), with
/// its plan.
pub fn counts_in_one_worker(schedule: Schedule) -> bool {
    set_of(schedule, Part::Count) == set_of(schedule, Part::Plan)
}

/// The spill store's cycles: rays taken from the root or sent back, and the
/// finished pixels of `tracers` tracer tiles summed (one worker).
pub fn spill_cycles(rays: u64, tracers: u64) -> f64 {
    let c = &COSTS.SpillStore;
    let busy = if rays > 0 { c.active + c.arrival * rays as f64 } else { 0.0 };
    single_worker_cycles(c.fixed + busy + c.finish_word * tracers as f64)
}

/// Fixed cycles of every iteration, busy or idle: vertex launches and syncs of the
/// `sets` compute sets, the exchange set-up and its sync.
pub fn fixed_iteration_cycles(sets: usize) -> f64 {
    fixed_iteration_cycles_on(1, sets)
}

/// A sync between BSP phases of a graph on `ipus` IPUs.
pub fn sync_cycles(ipus: u32) -> f64 {
    if ipus > 1 { MULTI_IPU_SYNC_CYCLES } else { SYNC_CYCLES }
}

/// As [`fixed_iteration_cycles`] for a graph on `ipus` IPUs.
pub fn fixed_iteration_cycles_on(ipus: u32, sets: usize) -> f64 {
    sets as f64 * (VERTEX_CYCLES + sync_cycles(ipus)) + EXCHANGE_SETUP_CYCLES + sync_cycles(ipus)
}

/// The device's part of a frame start: the camera record copied from the spill store
/// to every tile that marches (one exchange, a broadcast: each tile receives its 96
/// bytes), then the reset set, in which each tile runs a vertex for every tensor it
/// zeroes (`resets`: node and bytes, `poplar_bridge::spec_reset_vertices`), a sync
/// after each. A tile's vertices are dealt to its six workers, the largest first to
/// the least loaded, and a worker issues an instruction every sixth cycle, so the
/// tile takes six cycles an instruction of its busiest worker. The host's call that
/// runs it is [`HOST_ROUND_TRIP_S`] more (`estimate`).
pub fn frame_start_cycles(resets: &[(u32, u64)], ipus: u32) -> f64 {
    let mut busiest = 0.0f64;
    let mut at = 0;
    while at < resets.len() {
        let node = resets[at].0;
        let end = at + resets[at..].iter().take_while(|r| r.0 == node).count();
        let mut costs: Vec<f64> = resets[at..end]
            .iter()
            .map(|&(_, bytes)| ZERO_VERTEX_INSTRUCTIONS + (bytes as f64 / ZERO_BYTES_PER_INSTRUCTION).ceil())
            .collect();
        costs.sort_by(|a, b| b.total_cmp(a));
        let mut workers = [0.0f64; WORKERS];
        for c in costs {
            let least = workers.iter_mut().min_by(|a, b| a.total_cmp(b)).expect("six workers");
            *least += c;
        }
        busiest = busiest.max(workers.iter().fold(0.0f64, |m, &w| m.max(w)));
        at = end;
    }
    let camera = std::mem::size_of::<foam_layout::foam_camera>() as f64 / EXCHANGE_BYTES_PER_CYCLE;
    EXCHANGE_SETUP_CYCLES + camera + VERTEX_CYCLES + WORKERS as f64 * busiest + 2.0 * sync_cycles(ipus)
}

/// How a frame's compute spreads over the tiles: every tile's compute cycles summed
/// over the frame's iterations (idle vertices' per-call costs included).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Balance {
    /// Tiles of the chip and tiles the plan uses (tree nodes).
    pub tiles_chip: u64,
    pub tiles_used: u64,
    /// The busiest tile (node index) and its role.
    pub busiest_tile: u64,
    pub busiest_role: String,
    pub busiest_s: f64,
    /// Mean compute per frame over all tiles of the chip (unused ones count 0) and
    /// over the tiles used.
    pub mean_chip_s: f64,
    pub mean_used_s: f64,
    /// Busiest ÷ mean (the issue's goal: ≤ 5 over the chip).
    pub busiest_over_mean_chip: f64,
    pub busiest_over_mean_used: f64,
}

/// The estimated IPU frame time, with its parts.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Estimate {
    pub note: String,
    pub clock_hz: f64,
    /// Iterations the instrumented (rc 1) run needed.
    pub iterations_needed: u64,
    /// Iterations at this rc: those needed where the loop ends with the frame
    /// (`ends_on_device`), else the next multiple of rc.
    pub iterations: u64,
    pub ends_on_device: bool,
    pub host_round_trips: u64,
    /// Busiest tracer's cells marched in one iteration: mean over busy iterations, max.
    pub busiest_cell_steps_mean: f64,
    pub busiest_cell_steps_max: u64,
    /// Busiest router's rays forwarded in one iteration: mean over busy iterations, max.
    pub busiest_router_rays_mean: f64,
    pub busiest_router_rays_max: u64,
    /// Bytes the busiest tile sends or receives per iteration as built (full link
    /// buffers), whichever is more.
    pub exchange_bytes_per_iteration: u64,
    /// IPUs the graph spans; link-buffer bytes copied between IPUs per iteration (all
    /// IPUs) and per frame, and the busiest IPU's out or in over its IPU-Links per
    /// iteration, in cycles.
    pub ipus: u32,
    pub cross_ipu_bytes_per_iteration: u64,
    pub cross_ipu_bytes_per_frame: u64,
    pub ipu_link_cycles_per_iteration: f64,
    pub compute_cycles: f64,
    pub exchange_cycles: f64,
    pub sync_cycles: f64,
    pub cycles_per_iteration_mean: f64,
    /// Of the frame, what evaluating the SH colour costs (the same iterations costed
    /// without the SH terms, subtracted; 0 at SH degree 0).
    pub sh_s: f64,
    pub host_s: f64,
    /// Of the frame, its start: the camera's broadcast, the reset of every tile's
    /// buffers and counters ([`frame_start_cycles`]) and the host call that runs them
    /// (that call is also one of `host_s`'s round trips).
    pub frame_start_s: f64,
    pub frame_s: f64,
    /// What a camera the device does not hold writes before its first frame (every
    /// injector's camera region and block list), and its time on the host link: not
    /// in `frame_s`, which is a frame of a camera whose regions are on the device.
    pub view_upload_bytes: u64,
    pub view_upload_s: f64,
    /// The same frame if the exchange moved only occupied slots.
    pub frame_s_occupied_only: f64,
    pub fps: f64,
    pub balance: Balance,
}

/// Estimates the frame at repeat count `rc` from a per-iteration profile.
pub fn estimate(p: &Profile, rc: u32) -> Estimate {
    let needed = p.iterations.len() as u64;
    let rc = rc.max(1) as u64;
    let calls = needed.div_ceil(rc).max(1);
    // A loop that ends with the frame runs what it needs and tests after each
    // iteration; Repeat(rc) runs to the next multiple of rc.
    let (iterations, test) = if p.ends_on_device { (needed, loop_test_cycles(p.ipus)) } else { (calls * rc, 0.0) };
    let idle = (iterations - needed) as f64;
    // Chip and IPU-Links exchange at once: the phase waits for the slower of the
    // busiest tile's port and the busiest IPU's links.
    let ipu_links = p.busiest_ipu_link_bytes as f64 / IPU_LINK_BYTES_PER_CYCLE;
    // A tile sends and receives at the same rate, each on its own: the phase waits
    // for the tile that sends the most or the one that receives the most.
    let tile_bytes = p.busiest_link_bytes.max(p.busiest_receive_bytes);
    let full_exchange = (tile_bytes as f64 / EXCHANGE_BYTES_PER_CYCLE).max(ipu_links);

    // The idle tail still runs every vertex: each set waits for its dearest idle tile.
    let compute: f64 = p.iterations.iter().map(|i| i.step_cycles.iter().sum::<f64>()).sum::<f64>()
        + idle * p.idle_cycles.iter().sum::<f64>();
    let fixed = (fixed_iteration_cycles_on(p.ipus, p.sets) + test) * iterations as f64;
    let exchange = full_exchange * iterations as f64;
    let occupied: f64 = p.iterations.iter().map(|i| i.occupied_bytes as f64 / EXCHANGE_BYTES_PER_CYCLE).sum::<f64>()
        + idle * (p.links_max * super::profile::LINK_HEADER_BYTES) as f64 / EXCHANGE_BYTES_PER_CYCLE;
    // The frame start's program is one more call, with the camera record's write.
    let host_s = (calls + 1) as f64 * HOST_ROUND_TRIP_S + p.readback_bytes as f64 / HOST_LINK_BYTES_PER_S;
    let frame_s = (compute + fixed + exchange + p.frame_start_cycles) / CLOCK_HZ + host_s;
    let busy: Vec<_> = p.iterations.iter().filter(|i| i.busiest_cell_steps > 0 || i.busiest_router_rays > 0).collect();
    let mean = |f: &dyn Fn(&super::profile::IterationLoad) -> u64| {
        busy.iter().map(|i| f(i) as f64).sum::<f64>() / busy.len().max(1) as f64
    };
    Estimate {
        note: "estimate for a Mk2 IPU from a cycle model (src/cmd/bench/cycles.rs) with measured per-event \
               instruction costs (tools/costs/constants.json) fed with per-worker tile counters of an \
               instrumented rc-1 run on the host runtime; not a measurement"
            .into(),
        clock_hz: CLOCK_HZ,
        iterations_needed: needed,
        iterations,
        ends_on_device: p.ends_on_device,
        host_round_trips: calls,
        busiest_cell_steps_mean: mean(&|i| i.busiest_cell_steps),
        busiest_cell_steps_max: p.iterations.iter().map(|i| i.busiest_cell_steps).max().unwrap_or(0),
        busiest_router_rays_mean: mean(&|i| i.busiest_router_rays),
        busiest_router_rays_max: p.iterations.iter().map(|i| i.busiest_router_rays).max().unwrap_or(0),
        exchange_bytes_per_iteration: tile_bytes,
        ipus: p.ipus,
        cross_ipu_bytes_per_iteration: p.cross_ipu_bytes,
        cross_ipu_bytes_per_frame: p.cross_ipu_bytes * iterations,
        ipu_link_cycles_per_iteration: ipu_links,
        compute_cycles: compute,
        exchange_cycles: exchange,
        // A sync after each set and the exchange, and the loop's test's.
        sync_cycles: (p.sets + 1 + p.ends_on_device as usize) as f64 * sync_cycles(p.ipus) * iterations as f64,
        cycles_per_iteration_mean: (compute + fixed + exchange) / iterations as f64,
        sh_s: p.iterations.iter().map(|i| i.sh_cycles).sum::<f64>() / CLOCK_HZ,
        host_s,
        frame_s,
        view_upload_bytes: p.view_bytes,
        view_upload_s: p.view_bytes as f64 / HOST_LINK_BYTES_PER_S,
        frame_s_occupied_only: (compute + fixed + occupied + p.frame_start_cycles) / CLOCK_HZ + host_s,
        frame_start_s: p.frame_start_cycles / CLOCK_HZ + HOST_ROUND_TRIP_S,
        fps: 1.0 / frame_s,
        balance: balance(p),
    }
}

/// The busiest tile's compute per frame against the mean tile's.
pub fn balance(p: &Profile) -> Balance {
    let used = p.tile_cycles.len() as u64;
    let chip = p.chip_tiles.max(used);
    let (busiest, &max) = p.tile_cycles.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)).unwrap_or((0, &0.0));
    let total: f64 = p.tile_cycles.iter().sum();
    let (mean_chip, mean_used) = (total / chip.max(1) as f64, total / used.max(1) as f64);
    let ratio = |mean: f64| if mean > 0.0 { max / mean } else { 0.0 };
    Balance {
        tiles_chip: chip,
        tiles_used: used,
        busiest_tile: busiest as u64,
        busiest_role: p.tile_roles.get(busiest).cloned().unwrap_or_default(),
        busiest_s: max / CLOCK_HZ,
        mean_chip_s: mean_chip / CLOCK_HZ,
        mean_used_s: mean_used / CLOCK_HZ,
        busiest_over_mean_chip: ratio(mean_chip),
        busiest_over_mean_used: ratio(mean_used),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tile_waits_for_its_busiest_worker() {
        // Six workers issue one instruction per cycle together: a tile takes six
        // cycles per instruction of its busiest worker, whatever the others do.
        assert_eq!(multi_worker_cycles([100.0, 10.0, 0.0]), 600.0);
        assert_eq!(multi_worker_cycles([100.0; 6]), 600.0);
        assert_eq!(single_worker_cycles(10.0), 60.0);
        let c = &COSTS.TracerMarch;
        let busy = MarchWork { loaded: 6, marched_on: 6, visits: 6, steps: 600, neighbours: 10_200, results: 0 };
        let mut workers = [MarchWork::default(); WORKERS];
        workers[2] = busy;
        let one = tracer_cycles(&workers, 0, 0, SendWalk::default());
        let want =
            c.fixed + c.active + 6.0 * (c.ray + c.marched_on + c.visit) + 600.0 * c.step + 10_200.0 * c.neighbour;
        assert!((one[0] - 6.0 * want).abs() < 1e-6, "{} != 6 x {want}", one[0]);
        // The same rays over all six workers: the busiest worker does a sixth.
        let share = MarchWork { loaded: 1, marched_on: 1, visits: 1, steps: 100, neighbours: 1700, results: 0 };
        let even = tracer_cycles(&[share; WORKERS], 0, 0, SendWalk::default());
        let want = c.fixed + c.active + c.ray + c.marched_on + c.visit + 100.0 * c.step + 1700.0 * c.neighbour;
        assert!((even[0] - 6.0 * want).abs() < 1e-6 && even[0] < one[0] / 5.0);
        assert_eq!(even[1], one[1], "TracerSend is one worker: the same rays cost the same");
        let idle = tracer_cycles(&[MarchWork::default(); WORKERS], 0, 0, SendWalk::default());
        assert!((idle[0] - 6.0 * c.fixed).abs() < 1e-9 && idle[1] > 0.0, "idle vertices still pay their calls");
        // Rays finished here are not sent on.
        assert!(tracer_cycles(&workers, 6, 0, SendWalk::default())[1] < one[1]);
        // Every side link, and every ray waiting in the pending store, costs
        // TracerSend on every call, busy or idle.
        let s = &COSTS.TracerSend;
        let walk = SendWalk { side_links: 16, waiting: 10, unmarched: 0 };
        let walked = tracer_cycles(&[MarchWork::default(); WORKERS], 0, 0, walk)[1];
        let want = s.fixed + s.active + 16.0 * s.link + 10.0 * s.wait_walk;
        assert!((walked - 6.0 * want).abs() < 1e-6, "{walked} != 6 x {want}");
        assert!(s.link > 0.0 && s.wait_walk > 0.0, "the table charges links and waiting rays");
        // A ray kept unmarched is read (a scan) and moved into the held prefix, though
        // the march never loaded it: alone, it makes the call busy.
        let held =
            tracer_cycles(&[MarchWork::default(); WORKERS], 0, 0, SendWalk { unmarched: 5, ..SendWalk::default() })[1];
        let want = s.fixed + s.active + 5.0 * (s.scan + s.unmarched);
        assert!((held - 6.0 * want).abs() < 1e-6, "{held} != 6 x {want}");
        assert!(s.unmarched > 0.0, "the table charges the rays kept unmarched");
    }

    #[test]
    fn sh_colour_is_charged_per_ray_marched_on_and_cell_step() {
        // Six rays over 18 shard visits: the basis is evaluated once per ray (march.h
        // foam_march_copies), not per visit.
        let busy = MarchWork { loaded: 6, marched_on: 6, visits: 18, steps: 600, neighbours: 10_200, results: 0 };
        let mut workers = [MarchWork::default(); WORKERS];
        workers[2] = busy;
        let dc = tracer_cycles(&workers, 0, 0, SendWalk::default());
        let sh = tracer_cycles(&workers, 0, 15, SendWalk::default());
        let want = |c: &super::super::costs::March| {
            6.0 * (6.0 * (c.sh_visit + 15.0 * c.sh_basis) + 600.0 * (c.sh_step + 15.0 * c.sh_stepcoeff))
        };
        let want_t = want(&COSTS.TracerMarch);
        assert!(want_t > 0.0, "the table has SH terms");
        assert!((sh[0] - dc[0] - want_t).abs() < 1e-6, "{} - {} != {want_t}", sh[0], dc[0]);
        assert_eq!(sh[1], dc[1], "only the march evaluates SH");
        let (i0, i3) = (injector_cycles(&workers, 6, 0), injector_cycles(&workers, 6, 15));
        let want_i = want(&COSTS.InjectorMarch);
        assert!((i3[1] - i0[1] - want_i).abs() < 1e-6 && i3[0] == i0[0] && i3[2] == i0[2], "{i0:?} {i3:?}");
    }

    #[test]
    fn each_vertex_runs_in_the_set_its_schedule_puts_it() {
        let mut workers = [MarchWork::default(); WORKERS];
        workers[0] = MarchWork { marched_on: 40, visits: 60, steps: 900, neighbours: 15_000, ..MarchWork::default() };
        let [emit, march, deal] = injector_cycles(&workers, 40, 0);
        assert!(march > 10.0 * emit.max(deal), "marching dominates: {emit} {march} {deal}");
        let parts = [(Part::Emit, emit), (Part::InjectorMarch, march), (Part::Deal, deal)];
        assert_eq!(place(Schedule::Apart, &parts), [emit, march, deal, 0.0]);
        assert_eq!(place(Schedule::MergedMarch, &parts), [march, deal, emit, 0.0], "merged: march, deal, emit");
        assert_eq!(place(Schedule::ForwardBesideMarch, &parts), [emit, 0.0, march, deal]);
        use Part::*;
        for s in Schedule::ALL {
            // Every tile keeps its own order, in sets of the schedule.
            // Two of a tile's vertices share a set only as one vertex that does both
            // in order (RouterCountPlan, InjectorDealEmit).
            let fused = [(Count, Plan), (Deal, Emit)];
            let before = |a: Part, b: Part| {
                set_of(s, a) < set_of(s, b) || (fused.contains(&(a, b)) && set_of(s, a) == set_of(s, b))
            };
            for order in [&[TracerMarch, TracerSend][..], &[Count, Plan, Forward], &[Spill]] {
                assert!(order.windows(2).all(|w| before(w[0], w[1])), "{s:?}: {order:?}");
            }
            let merged = matches!(s, Schedule::MergedMarch | Schedule::SendBesideForward | Schedule::PlanBesideMarch);
            let inj = if merged { [InjectorMarch, Deal, Emit] } else { [Emit, InjectorMarch, Deal] };
            assert!(inj.windows(2).all(|w| before(w[0], w[1])), "{s:?}: {inj:?}");
            let all = [TracerMarch, TracerSend, Count, Plan, Forward, Spill, Emit, InjectorMarch, Deal];
            assert!(all.iter().all(|&p| set_of(s, p) < sets_of(s)), "{s:?}: a set past its last");
            assert!(
                (0..sets_of(s)).all(|k| all.iter().any(|&p| set_of(s, p) == k)),
                "{s:?}: a set that runs no vertex"
            );
        }
        // The graph builder's table: three sets, three, four, three, two; and no other schedule.
        assert_eq!(Schedule::ALL.map(sets_of), [3, 3, 4, 3, 2]);
        let e = poplar_bridge::step_layout(Schedule::ALL.len() as u8).unwrap_err().to_string();
        assert!(e.contains("schedule 5 is none of"), "{e}");
        assert_eq!(Schedule::ALL.map(counts_in_one_worker), [false, false, false, false, true]);
        // Four sets: the routers' forward beside the march.
        let f = Schedule::ForwardBesideMarch;
        assert_eq!((set_of(f, Forward), set_of(f, Count)), (set_of(f, TracerMarch), set_of(f, Emit)));
        // Three: the routers' count beside the march, their forward beside the send.
        let s = Schedule::SendBesideForward;
        assert_eq!((set_of(s, Count), set_of(s, Forward)), (set_of(s, TracerMarch), set_of(s, TracerSend)));
        assert_eq!(place(s, &parts), [march, deal, emit, 0.0], "beside: march, deal, emit");
        // Two: the plan beside the march too, and the deal with the emit.
        let t = Schedule::PlanBesideMarch;
        assert_eq!((set_of(t, Count), set_of(t, Plan), set_of(t, Forward)), (0, 0, set_of(t, TracerSend)));
        assert_eq!(place(t, &parts), [march, deal + emit, 0.0, 0.0], "two sets: march, then deal and emit");
    }

    #[test]
    fn a_router_counting_in_one_worker_counts_and_plans_there() {
        let classified = [30, 10, 0, 5, 0, 0];
        let moved = [7, 0, 0, 0, 0, 2];
        let none_short = Shares::default();
        let [count, plan, forward] = router_cycles(&classified, &moved, (32, 12), true, false, none_short, false);
        let [both, none, forward_one] = router_cycles(&classified, &moved, (32, 12), true, false, none_short, true);
        assert_eq!((none, forward_one), (0.0, forward), "the plan is in the count's vertex; the forward is as before");
        assert_eq!(both, single_worker_cycles(COSTS.RouterCountPlan.per_worker(32, 12, true, 45, false, none_short)));
        // One worker counts what six counted, and then plans.
        assert!(both > count.max(plan), "{both} against {count} and {plan}");
        // Replica lanes cost the one-worker count a term per ray of its own.
        let [replicated, _, _] = router_cycles(&classified, &moved, (32, 12), true, true, none_short, true);
        assert!(COSTS.RouterCountPlan.replica_item > 0.0 && replicated > both, "{replicated} against {both}");
    }

    #[test]
    fn a_router_dividing_its_lanes_shares_pays_per_lane_in_its_forward_only() {
        let classified = [30, 10, 0, 5, 0, 0];
        let moved = [7, 0, 0, 0, 0, 2];
        let at = |lanes, root, shares| router_cycles(&classified, &moved, (8, lanes), root, false, shares, false);
        let short = Shares { short: true, rationed: false };
        let both = Shares { short: true, rationed: true };
        let [count, plan, calm] = at(194, true, Shares::default());
        let [count_s, plan_s, divided] = at(194, true, short);
        assert_eq!((count_s, plan_s), (count, plan), "only RouterForward divides shares");
        // 194 lanes over six workers: each owns 32 or 33 of them.
        let f = &COSTS.RouterForward;
        assert!(f.short_lane > 0.0 && f.ration_lane > 0.0, "{f:?}");
        let extra = (divided - calm) / WORKERS as f64;
        assert!(extra >= 32.0 * f.short_lane - 1e-6 && extra <= 33.0 * f.short_lane + 1e-6, "{extra}");
        assert!(at(194, true, both)[2] > divided);
        // A router with no lanes of its own has nothing to divide.
        assert_eq!(at(0, false, both)[2], at(0, false, Shares::default())[2]);
    }

    #[test]
    fn frame_pays_for_the_idle_tail_up_to_a_multiple_of_rc_unless_it_ends_on_the_device() {
        use super::super::profile::{IterationLoad, Profile};
        let busy =
            IterationLoad { step_cycles: [1000.0, 10.0, 90.0, 0.0], busiest_cell_steps: 3, ..Default::default() };
        let p = Profile {
            iterations: vec![busy.clone(), busy.clone(), busy],
            idle_cycles: [5.0, 6.0, 7.0, 0.0],
            sets: 3,
            tile_cycles: vec![3000.0, 100.0, 200.0],
            tile_roles: vec!["Tracer".into(), "Router".into(), "Tracer".into()],
            chip_tiles: 10,
            link_bytes: 400,
            links_max: 5,
            busiest_link_bytes: 2000,
            busiest_receive_bytes: 1500,
            link_bytes_total: 8000,
            readback_bytes: 0,
            view_bytes: 0,
            ipus: 1,
            cross_ipu_bytes: 0,
            busiest_ipu_link_bytes: 0,
            frame: Default::default(),
            ends_on_device: false,
            frame_start_cycles: 700.0,
        };
        let e = estimate(&p, 2);
        assert_eq!((e.iterations_needed, e.iterations, e.host_round_trips), (3, 4, 2));
        // Two calls of the steps and one of the frame start.
        let cycles =
            700.0 + 3.0 * 1100.0 + 18.0 + 4.0 * (fixed_iteration_cycles(3) + 2000.0 / EXCHANGE_BYTES_PER_CYCLE);
        assert!((e.frame_s - (cycles / CLOCK_HZ + 3.0 * HOST_ROUND_TRIP_S)).abs() < 1e-12);
        assert!((e.frame_start_s - (700.0 / CLOCK_HZ + HOST_ROUND_TRIP_S)).abs() < 1e-15);
        assert_eq!(e.busiest_cell_steps_mean, 3.0);
        // A tile that receives more than the busiest one sends sets the exchange.
        let into = estimate(&Profile { busiest_receive_bytes: 3000, ..p.clone() }, 2);
        assert_eq!(into.exchange_bytes_per_iteration, 3000);
        assert!((into.frame_s - e.frame_s - 4.0 * 1000.0 / EXCHANGE_BYTES_PER_CYCLE / CLOCK_HZ).abs() < 1e-12);
        // rc 1: no idle tail, more round trips.
        let e1 = estimate(&p, 1);
        assert_eq!((e1.iterations, e1.host_round_trips), (3, 3));
        // A loop that ends with the frame: no idle tail at rc 2, a test each iteration.
        let ends = estimate(&Profile { ends_on_device: true, ..p.clone() }, 2);
        assert_eq!((ends.iterations_needed, ends.iterations, ends.host_round_trips), (3, 3, 2));
        let cycles = 700.0
            + 3.0 * 1100.0
            + 3.0 * (fixed_iteration_cycles(3) + LOOP_TEST_CYCLES + 2000.0 / EXCHANGE_BYTES_PER_CYCLE);
        assert!((ends.frame_s - (cycles / CLOCK_HZ + 3.0 * HOST_ROUND_TRIP_S)).abs() < 1e-12);
        // Balance: busiest 3000 against 330 per chip tile and 1100 per tile used.
        let b = &e.balance;
        assert_eq!((b.tiles_chip, b.tiles_used, b.busiest_tile, b.busiest_role.as_str()), (10, 3, 0, "Tracer"));
        assert!((b.busiest_over_mean_chip - 3000.0 / 330.0).abs() < 1e-9);
        assert!((b.busiest_over_mean_used - 3000.0 / 1100.0).abs() < 1e-9);
    }

    #[test]
    fn a_frame_start_waits_for_the_tile_whose_busiest_worker_zeroes_most() {
        let fixed = EXCHANGE_SETUP_CYCLES + 96.0 / EXCHANGE_BYTES_PER_CYCLE + VERTEX_CYCLES + 2.0 * SYNC_CYCLES;
        let worker = |bytes: f64| ZERO_VERTEX_INSTRUCTIONS + bytes / ZERO_BYTES_PER_INSTRUCTION;
        // Node 0: seven tensors on six workers, the two smallest on one; node 1: one
        // large tensor, on one worker however many the tile has.
        let small: Vec<(u32, u64)> = [800, 800, 800, 800, 800, 80, 80].iter().map(|&b| (0, b)).collect();
        let one = fixed + WORKERS as f64 * worker(800.0);
        assert!((frame_start_cycles(&small, 1) - one).abs() < 1e-9);
        let both: Vec<(u32, u64)> = small.iter().copied().chain([(1, 8000)]).collect();
        assert!((frame_start_cycles(&both, 1) - (fixed + WORKERS as f64 * worker(8000.0))).abs() < 1e-9);
        // A third 80-byte tensor joins the other two on the sixth worker, still under an 800.
        let three: Vec<(u32, u64)> = small.iter().copied().chain([(0, 80)]).collect();
        assert!((frame_start_cycles(&three, 1) - one).abs() < 1e-9, "dealt largest first to the least loaded");
        // Several IPUs sync across the chips.
        assert!(frame_start_cycles(&small, 2) > frame_start_cycles(&small, 1));
    }
}
