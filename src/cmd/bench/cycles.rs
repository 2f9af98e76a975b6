//! A cycle model of one frame on a real Mk2 IPU, fed with the per-iteration work an
//! instrumented run measured (see `profile.rs`). No IPU is available here, so this
//! is an *estimate*: every constant below is an assumption, stated where it is set.
//!
//! The model follows the program the graph builder emits per iteration:
//! `Execute(step1) ; Execute(step2) ; Execute(step3) ; Copy(all links)`. Under BSP every
//! phase ends in a chip-wide sync, so a phase lasts as long as its busiest tile:
//!
//! ```text
//! iteration = Σ_phase (max_tile cycles(phase) + VERTEX_CYCLES + SYNC_CYCLES)
//!           + EXCHANGE_SETUP_CYCLES + max_tile bytes / EXCHANGE_BYTES_PER_CYCLE + SYNC_CYCLES
//! frame     = Σ iterations (incl. the idle tail up to a multiple of rc) / CLOCK_HZ
//!           + host round trips · HOST_ROUND_TRIP_S + framebuffer bytes / HOST_LINK_BYTES_PER_S
//! ```
//!
//! A tile issues one instruction per cycle from its six barrel-scheduled workers; one
//! worker alone issues one every six cycles. A MultiVertex whose work is spread over
//! `k ≤ 6` busy workers therefore takes `instructions · 6 / k` cycles (work assumed even
//! across workers — a lower bound, the codelets split rays by count, not by cells);
//! a single-worker Vertex takes `instructions · 6`.
//!
//! Instruction counts per operation are read off the codelets (`codelets/vertices/*.cpp`,
//! `foam/march.h`) by hand, counting loads, stores, arithmetic and branches with IPU
//! f32 division and transcendental functions at library cost; they are not measured.
//! Router work counts the rays a router *forwarded* in the iteration (the statistics
//! the tiles keep); rays that stayed queued are re-classified too, so router cost is a
//! lower bound under congestion.
//!
//! The exchange is modelled as built: a static `Copy` moves every link buffer in full
//! each iteration, whatever it holds, so the busiest tile (the router whose lanes
//! hold the most bytes) moves all of its buffers each way. The "occupied slots
//! only" figure shows what an exchange moving just the rays present would cost (a
//! lower bound for that design).

use serde::Serialize;

use super::profile::Profile;

/// Mk2 (GC200) tile clock.
pub const CLOCK_HZ: f64 = 1.33e9;
/// Hardware worker threads per tile.
pub const WORKERS: f64 = 6.0;
/// Bytes a tile sends (and, independently, receives) per cycle over the exchange.
pub const EXCHANGE_BYTES_PER_CYCLE: f64 = 4.0;
/// Fixed start-up of an exchange phase (exchange code fetch, first-word latency).
pub const EXCHANGE_SETUP_CYCLES: f64 = 100.0;
/// One chip-wide sync between BSP phases ("hundreds of cycles").
pub const SYNC_CYCLES: f64 = 300.0;
/// Starting a compute set's vertices on a tile (supervisor, worker launch, field loads).
pub const VERTEX_CYCLES: f64 = 100.0;

/// Tracer, per ray marched: unpack the payload, rebuild origin and direction (divides,
/// a square root), repack or write the pixel.
pub const TRACER_RAY_INSTR: f64 = 120.0;
/// Tracer, per cell step outside the neighbour loop: load the cell, `expf`, composite.
pub const CELL_STEP_INSTR: f64 = 60.0;
/// Tracer, per neighbour of a visited cell: load the site, the face plane test and, for
/// faces ahead (about half), the division for the crossing distance.
pub const NEIGHBOUR_INSTR: f64 = 30.0;
/// TracerSend (one worker), per ray moved to the outbox or pending store; InjectorSend,
/// per ray dealt out to a lane or the held store.
pub const SEND_RAY_INSTR: f64 = 14.0;
/// RouterCount + RouterForward, per ray forwarded: classify twice, rank, copy 20–28 B.
pub const ROUTER_RAY_INSTR: f64 = 45.0;
/// RouterPlan (one worker): ranks, credits and headers for five lanes.
pub const ROUTER_PLAN_INSTR: f64 = 250.0;
/// Spill store (one worker), per ray taken from the root or sent back: copy a payload.
pub const SPILL_RAY_INSTR: f64 = 40.0;
/// Injector (one worker), per primary ray emitted: pixel of the block, build a payload.
pub const INJECTOR_RAY_INSTR: f64 = 40.0;

/// One host round trip on real hardware: `Engine::run` of the fused loop plus the read
/// of the 32-byte frame status (order of magnitude for an IPU-M2000 host link).
pub const HOST_ROUND_TRIP_S: f64 = 20e-6;
/// Host-link bandwidth for the framebuffer readback at the end of a frame.
pub const HOST_LINK_BYTES_PER_S: f64 = 10e9;

/// Cycles of a MultiVertex doing `instr` instructions of work split over `items`.
pub fn multi_worker_cycles(instr: f64, items: u64) -> f64 {
    if items == 0 {
        0.0
    } else {
        instr * WORKERS / (items as f64).min(WORKERS)
    }
}

/// Cycles of a single-worker Vertex doing `instr` instructions.
pub fn single_worker_cycles(instr: f64) -> f64 {
    instr * WORKERS
}

/// Instructions per cell step for a scene with `mean_degree` neighbours per cell.
pub fn cell_step_instr(mean_degree: f64) -> f64 {
    CELL_STEP_INSTR + NEIGHBOUR_INSTR * mean_degree
}

/// Fixed cycles of every iteration, busy or idle: vertex launches and syncs of the
/// three compute sets, the exchange set-up and its sync.
pub fn fixed_iteration_cycles() -> f64 {
    3.0 * (VERTEX_CYCLES + SYNC_CYCLES) + EXCHANGE_SETUP_CYCLES + SYNC_CYCLES
}

/// The estimated IPU frame time, with its parts.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Estimate {
    pub note: String,
    pub clock_hz: f64,
    /// Iterations the instrumented (rc 1) run needed.
    pub iterations_needed: u64,
    /// Iterations at this rc: the frame completes at the next multiple of rc.
    pub iterations: u64,
    pub host_round_trips: u64,
    /// Busiest tracer's cells marched in one iteration: mean over busy iterations, max.
    pub busiest_cell_steps_mean: f64,
    pub busiest_cell_steps_max: u64,
    /// Busiest router's rays forwarded in one iteration: mean over busy iterations, max.
    pub busiest_router_rays_mean: f64,
    pub busiest_router_rays_max: u64,
    /// Bytes the busiest tile sends per iteration as built (full link buffers).
    pub exchange_bytes_per_iteration: u64,
    pub compute_cycles: f64,
    pub exchange_cycles: f64,
    pub sync_cycles: f64,
    pub cycles_per_iteration_mean: f64,
    pub host_s: f64,
    pub frame_s: f64,
    /// The same frame if the exchange moved only occupied slots.
    pub frame_s_occupied_only: f64,
    pub fps: f64,
}

/// Estimates the frame at repeat count `rc` from a per-iteration profile.
pub fn estimate(p: &Profile, rc: u32) -> Estimate {
    let needed = p.iterations.len() as u64;
    let rc = rc.max(1) as u64;
    let calls = needed.div_ceil(rc).max(1);
    let iterations = calls * rc;
    let idle = (iterations - needed) as f64;
    let full_exchange = p.busiest_link_bytes as f64 / EXCHANGE_BYTES_PER_CYCLE;

    let compute: f64 = p
        .iterations
        .iter()
        .map(|i| i.step1_cycles + i.step2_cycles + i.step3_cycles)
        .sum::<f64>();
    let fixed = fixed_iteration_cycles() * iterations as f64;
    let exchange = full_exchange * iterations as f64;
    let occupied: f64 = p
        .iterations
        .iter()
        .map(|i| i.occupied_bytes as f64 / EXCHANGE_BYTES_PER_CYCLE)
        .sum::<f64>()
        + idle * (p.links_max * super::profile::LINK_HEADER_BYTES) as f64 / EXCHANGE_BYTES_PER_CYCLE;
    let host_s = calls as f64 * HOST_ROUND_TRIP_S + p.framebuffer_bytes as f64 / HOST_LINK_BYTES_PER_S;
    let frame_s = (compute + fixed + exchange) / CLOCK_HZ + host_s;
    let busy: Vec<_> = p
        .iterations
        .iter()
        .filter(|i| i.busiest_cell_steps > 0 || i.busiest_router_rays > 0)
        .collect();
    let mean = |f: &dyn Fn(&super::profile::IterationLoad) -> u64| {
        busy.iter().map(|i| f(i) as f64).sum::<f64>() / busy.len().max(1) as f64
    };
    Estimate {
        note: "estimate for a Mk2 IPU from a cycle model (src/cmd/bench/cycles.rs) fed with per-iteration \
               tile statistics of an instrumented rc-1 run on the host runtime; not a measurement"
            .into(),
        clock_hz: CLOCK_HZ,
        iterations_needed: needed,
        iterations,
        host_round_trips: calls,
        busiest_cell_steps_mean: mean(&|i| i.busiest_cell_steps),
        busiest_cell_steps_max: p.iterations.iter().map(|i| i.busiest_cell_steps).max().unwrap_or(0),
        busiest_router_rays_mean: mean(&|i| i.busiest_router_rays),
        busiest_router_rays_max: p.iterations.iter().map(|i| i.busiest_router_rays).max().unwrap_or(0),
        exchange_bytes_per_iteration: p.busiest_link_bytes,
        compute_cycles: compute,
        exchange_cycles: exchange,
        sync_cycles: 4.0 * SYNC_CYCLES * iterations as f64,
        cycles_per_iteration_mean: (compute + fixed + exchange) / iterations as f64,
        host_s,
        frame_s,
        frame_s_occupied_only: (compute + fixed + occupied) / CLOCK_HZ + host_s,
        fps: 1.0 / frame_s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workers_share_the_pipeline() {
        // Six busy workers retire one instruction per cycle; one worker one per six.
        assert_eq!(multi_worker_cycles(600.0, 100), 600.0);
        assert_eq!(multi_worker_cycles(100.0, 1), 600.0);
        assert_eq!(multi_worker_cycles(300.0, 3), 600.0);
        assert_eq!(multi_worker_cycles(300.0, 0), 0.0);
        assert_eq!(single_worker_cycles(10.0), 60.0);
    }

    #[test]
    fn frame_pays_for_the_idle_tail_up_to_a_multiple_of_rc() {
        use super::super::profile::{IterationLoad, Profile};
        let busy = IterationLoad {
            step1_cycles: 1000.0,
            step2_cycles: 10.0,
            step3_cycles: 90.0,
            busiest_cell_steps: 3,
            ..Default::default()
        };
        let p = Profile {
            iterations: vec![busy.clone(), busy.clone(), busy],
            mean_degree: 15.0,
            link_bytes: 400,
            links_max: 5,
            busiest_link_bytes: 2000,
            link_bytes_total: 8000,
            framebuffer_bytes: 0,
            frame: Default::default(),
        };
        let e = estimate(&p, 2);
        assert_eq!((e.iterations_needed, e.iterations, e.host_round_trips), (3, 4, 2));
        let cycles = 3.0 * 1100.0 + 4.0 * (fixed_iteration_cycles() + 2000.0 / EXCHANGE_BYTES_PER_CYCLE);
        assert!((e.frame_s - (cycles / CLOCK_HZ + 2.0 * HOST_ROUND_TRIP_S)).abs() < 1e-12);
        assert_eq!(e.busiest_cell_steps_mean, 3.0);
        // rc 1: no idle tail, more round trips.
        let e1 = estimate(&p, 1);
        assert_eq!((e1.iterations, e1.host_round_trips), (3, 3));
    }
}
