//! The frame loop: broadcast the camera, repeat the fused compute/exchange program
//! until the device's own finished-pixel count (every tracer's, summed on the spill tile) reaches
//! the frame, then read the framebuffer slices and put the image together.

use std::mem::size_of;
use std::time::Instant;

use foam_layout::{
    FOAM_CATS, FOAM_IW_COUNTERS, FOAM_TW_COUNTERS, FOAM_WORKERS, foam_frame_status, foam_pixel, foam_result,
    foam_tile_stats,
};
use poplar_bridge::Session;

use super::DeviceError;
use super::options::Backend;
use super::plan::DevicePlan;
use super::stats::FrameStats;
use super::tree::{Node, Role};
use crate::camera::Camera;
use crate::reference::RenderOutput;
use crate::scene::Scene;

// Program indices in the order compile() received them.
const FRAME_START: u32 = 0;
const STEPS: u32 = 1;

/// A rendered device frame.
pub struct DeviceFrame {
    pub output: RenderOutput,
    pub stats: FrameStats,
    /// Per-pixel router and tracer hops (only with hop counters on).
    pub router_hops: Option<Vec<u16>>,
    pub tracer_hops: Option<Vec<u16>>,
}

/// Called after every host call of an observed frame with the frame status and all
/// tiles' cumulative statistics (node order).
pub type PerCall<'a> = dyn FnMut(&foam_frame_status, &[foam_tile_stats], &[u32]) + 'a;

/// Words of a tracer's `foam_tracer_ctl` before its work counters, which the
/// `WORK_HANDLE` stream carries too: `pending` (the rays its pending store holds
/// after TracerSend) and `held` (of them, those left unmarched): TracerSend walks
/// the others, those waiting for credit, again the next step.
pub const TRACER_HEAD_WORDS: usize = std::mem::offset_of!(foam_layout::foam_tracer_ctl, work) / 4;

/// Words of a router's `foam_router_ctl` before its counts, from `src_up_count`,
/// which the `WORK_HANDLE` stream carries too: `src_up_count` and `src_down_count`
/// (the rays its queues held at the step's start, which RouterCount counts by runs
/// and RouterForward walks ray by ray) first.
pub const ROUTER_HEAD_WORDS: usize = (std::mem::offset_of!(foam_layout::foam_router_ctl, counts)
    - std::mem::offset_of!(foam_layout::foam_router_ctl, src_up_count))
    / 4;

/// Words of a router's shares as its RouterPlan left them (`foam_router_ctl.share_avail`
/// to `.share_shift`), which the `WORK_HANDLE` stream carries after its counts:
/// whether its RouterForward divides its lanes' shares of the upward credit or of the
/// root's allowance that step, which the cost model charges per lane.
pub const ROUTER_SHARE_WORDS: usize = (std::mem::offset_of!(foam_layout::foam_router_ctl, allowed_by)
    - std::mem::offset_of!(foam_layout::foam_router_ctl, share_avail))
    / 4;

/// Where the `foam_router_ctl` share field at byte `offset` (`share_avail` to
/// `share_shift`) sits in a router's [`work_words`]: after its head and its counts.
pub const fn router_share_word(offset: usize) -> usize {
    ROUTER_HEAD_WORDS
        + FOAM_WORKERS as usize * FOAM_CATS as usize
        + (offset - std::mem::offset_of!(foam_layout::foam_router_ctl, share_avail)) / 4
}

/// Words of a node's per-worker work counters in the `WORK_HANDLE` stream (what
/// [`PerCall`] gets as its third argument, in node order); a tracer's follow its
/// [`TRACER_HEAD_WORDS`], a router's its [`ROUTER_HEAD_WORDS`] and come before its
/// [`ROUTER_SHARE_WORDS`].
pub fn work_words(role: Role) -> usize {
    let (head, tail) = match role {
        Role::Tracer => (TRACER_HEAD_WORDS, 0),
        Role::Router => (ROUTER_HEAD_WORDS, ROUTER_SHARE_WORDS),
        _ => (0, 0),
    };
    head + tail
        + FOAM_WORKERS as usize
            * match role {
                Role::Tracer => FOAM_TW_COUNTERS,
                Role::Injector => FOAM_IW_COUNTERS,
                Role::Router => FOAM_CATS,
                Role::Spill => 0,
            } as usize
}

/// Where each of `nodes`' work counters start in the `WORK_HANDLE` stream (node
/// order, [`work_words`] each), and the stream's length.
pub fn work_offsets(nodes: &[Node]) -> (Vec<usize>, usize) {
    let mut at = 0;
    let offsets = nodes
        .iter()
        .map(|n| {
            let o = at;
            at += work_words(n.role);
            o
        })
        .collect();
    (offsets, at)
}

pub struct DeviceRenderer {
    plan: DevicePlan,
    session: Session,
    frame: u32,
    setup_s: f64,
    tile_bytes_max: u64,
    tile_bytes_budget: u64,
    // Read buffers for the framebuffer slices and result stores, kept across frames:
    // the result stores are tens of MB, and a fresh buffer each frame costs its page
    // faults again.
    px_bytes: Vec<u8>,
    res_bytes: Vec<u8>,
    /// Each tracer worker's count of the results it kept this frame, in tracer order.
    res_counts: Vec<u8>,
    /// The camera whose regions and block lists the injectors hold: a frame of it
    /// writes only its camera record (hundreds of MB less over the host link).
    view_on_device: Option<Camera>,
}

fn read_record<T: Copy>(bytes: &[u8]) -> T {
    assert_eq!(bytes.len(), size_of::<T>());
    // SAFETY: T is a layout.h record (plain fixed-width fields, no padding) and the
    // slice has exactly its size; read_unaligned copes with any alignment.
    unsafe { std::ptr::read_unaligned(bytes.as_ptr().cast::<T>()) }
}

fn read_records<T: Copy>(bytes: &[u8]) -> Vec<T> {
    bytes.chunks_exact(size_of::<T>()).map(read_record).collect()
}

impl DeviceRenderer {
    /// Builds and compiles the render graph of `plan` (the expensive, once-per-scene part).
    pub fn new(plan: DevicePlan) -> Result<DeviceRenderer, DeviceError> {
        Self::with_executable_cache(plan, None)
    }

    /// As [`new`](Self::new); with `cache`, the compiled graph is loaded from that
    /// directory if an earlier run compiled the same graph for the same target, and
    /// stored there if not (see [`super::executable`]). Only an IPU build stores
    /// executables.
    pub fn with_executable_cache(
        plan: DevicePlan,
        cache: Option<&std::path::Path>,
    ) -> Result<DeviceRenderer, DeviceError> {
        let t0 = Instant::now();
        if plan.options.backend == Backend::Ipu && !cfg!(feature = "poplar") {
            return Err(DeviceError::Options(
                "--backend ipu needs a build with `--features poplar` against the Poplar SDK and an attached IPU; \
                 this build has the host runtime only (--backend host)"
                    .into(),
            ));
        }
        let mut session = Session::new(plan.options.ipus, plan.options.tiles)?;
        let progs = session.build_render_graph(&plan.spec)?;
        match cache {
            Some(dir) => {
                let file = super::executable::path(dir, &plan.spec, session.num_tiles());
                session.compile_cached(&progs, &file.to_string_lossy())?
            }
            None => session.compile(&progs)?,
        }
        let (tile_bytes_budget, tile_bytes_max) = tile_memory(&session, &plan)?;
        let px_bytes = vec![0u8; plan.framebuffer_bytes()];
        let res_bytes = vec![0u8; plan.result_store_bytes()];
        let res_counts = vec![0u8; plan.result_counts_bytes()];
        Ok(DeviceRenderer {
            tile_bytes_budget,
            px_bytes,
            res_bytes,
            res_counts,
            plan,
            session,
            frame: 0,
            setup_s: t0.elapsed().as_secs_f64(),
            tile_bytes_max,
            view_on_device: None,
        })
    }

    pub fn plan(&self) -> &DevicePlan {
        &self.plan
    }

    /// Seconds it took to build and compile the graph.
    pub fn setup_s(&self) -> f64 {
        self.setup_s
    }

    pub fn session(&self) -> &Session {
        &self.session
    }

    /// Renders one frame. The camera changes only here, between drained frames, so a
    /// ray never meets a camera other than its own (paper §5.6).
    pub fn render(
        &mut self,
        scene: &Scene,
        cam: &Camera,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<DeviceFrame, DeviceError> {
        self.render_observed(scene, cam, progress, None)
    }

    /// As [`render`](Self::render), and after every host call also reads all tiles'
    /// cumulative `foam_tile_stats` (node order) and their per-worker work counters
    /// (`poplar_bridge::WORK_HANDLE`, see `profile::work_words`) and hands them, with
    /// the frame status, to `per_call`. The
    /// extra reads are host calls too: an instrumented frame is for profiles, not timing.
    pub fn render_observed(
        &mut self,
        scene: &Scene,
        cam: &Camera,
        progress: &mut dyn FnMut(u64, u64),
        per_call: Option<&mut PerCall<'_>>,
    ) -> Result<DeviceFrame, DeviceError> {
        let t0 = Instant::now();
        let before = self.session.counters()?;
        let written = self.start_frame(scene, cam)?;
        let total = cam.width as u64 * cam.height as u64;
        let status = self.run_until_done(total, progress, per_call)?;
        let pixels = self.read_pixels(cam)?;
        let mut stats_bytes = vec![0u8; self.plan.tile_stats_bytes()];
        self.session.read_tensor(poplar_bridge::STATS_HANDLE, &mut stats_bytes)?;
        let tiles: Vec<foam_tile_stats> = read_records(&stats_bytes);
        check_counters(&self.plan.tree.nodes, &tiles)?;
        let (output, router_hops, tracer_hops) = frame_output(&pixels, cam, self.plan.options.hops);
        let counters = self.session.counters()?;
        let mut stats = self.frame_stats(cam, &tiles, status.iterations as u64);
        stats.host_calls = counters.host_calls - before.host_calls;
        stats.bytes_exchanged = counters.bytes_exchanged - before.bytes_exchanged;
        stats.bytes_across_ipus = counters.bytes_across_ipus - before.bytes_across_ipus;
        stats.host_bytes_written = written;
        stats.host_bytes_read =
            (self.px_bytes.len() + self.res_bytes.len() + self.res_counts.len() + stats_bytes.len()) as u64;
        stats.wall_s = t0.elapsed().as_secs_f64();
        Ok(DeviceFrame { output, stats, router_hops, tracer_hops })
    }

    /// Writes the frame's camera and, for a camera the device does not hold, its
    /// camera regions and block lists, and runs the frame start. Returns the bytes
    /// written.
    fn start_frame(&mut self, scene: &Scene, cam: &Camera) -> Result<u64, DeviceError> {
        let view = self.view_on_device != Some(*cam);
        let blocks = self.plan.frame_blocks(scene, cam, self.frame, view)?;
        self.frame += 1;
        self.session.write_tensor(poplar_bridge::CAMERA_HANDLE, &blocks.camera)?;
        if view {
            // Forgotten first: a write that fails leaves the device holding neither view.
            self.view_on_device = None;
            self.session.write_tensor(poplar_bridge::REGION_HANDLE, &blocks.regions)?;
            self.session.write_tensor(poplar_bridge::BLOCKS_HANDLE, &blocks.blocks)?;
            self.view_on_device = Some(*cam);
        }
        self.session.run(FRAME_START)?;
        Ok((blocks.camera.len() + blocks.regions.len() + blocks.blocks.len()) as u64)
    }

    /// Runs the steps until `total` pixels are finished; fails on a credit violation,
    /// past the iteration limit, or when nothing moves for `stall_calls` host calls.
    fn run_until_done(
        &mut self,
        total: u64,
        progress: &mut dyn FnMut(u64, u64),
        mut per_call: Option<&mut PerCall<'_>>,
    ) -> Result<foam_frame_status, DeviceError> {
        let mut call_stats = vec![0u8; self.plan.tile_stats_bytes()];
        let words: usize = self.plan.tree.nodes.iter().map(|n| work_words(n.role)).sum();
        let mut call_work = vec![0u8; if per_call.is_some() { words * 4 } else { 0 }];
        // The spill store's status, then every injector's: they count what they emitted.
        let mut status = vec![0u8; (1 + self.plan.tree.injectors().len()) * size_of::<foam_frame_status>()];
        let mut last = (u32::MAX, u32::MAX);
        let mut stalled = 0;
        loop {
            self.session.run(STEPS)?;
            self.session.read_tensor(poplar_bridge::STATUS_HANDLE, &mut status)?;
            let all: Vec<foam_frame_status> = read_records(&status);
            let mut st = all[0];
            st.injected = all[1..].iter().map(|s| s.injected).sum();
            progress(st.finished as u64, total);
            if let Some(f) = per_call.as_mut() {
                self.session.read_tensor(poplar_bridge::STATS_HANDLE, &mut call_stats)?;
                self.session.read_tensor(poplar_bridge::WORK_HANDLE, &mut call_work)?;
                f(&st, &read_records::<foam_tile_stats>(&call_stats), &read_records::<u32>(&call_work));
            }
            if st.overflow > 0 {
                return Err(DeviceError::Incomplete(format!(
                    "the spill store found no room for {} rays (a credit violation)",
                    st.overflow
                )));
            }
            if st.finished as u64 >= total {
                return Ok(st);
            }
            if st.iterations >= self.plan.options.max_iterations {
                return Err(DeviceError::Incomplete(format!(
                    "the frame did not finish in {} iterations (--max-iterations {}): {} of {total} pixels finished",
                    st.iterations, self.plan.options.max_iterations, st.finished
                )));
            }
            if (st.injected, st.finished) != last {
                stalled = 0;
                last = (st.injected, st.finished);
                continue;
            }
            stalled += 1;
            if stalled >= self.plan.options.stall_calls {
                // A ray a tile found no room for never finishes: say so rather
                // than only that the frame stopped.
                self.session.read_tensor(poplar_bridge::STATS_HANDLE, &mut call_stats)?;
                check_counters(&self.plan.tree.nodes, &read_records(&call_stats))?;
                return Err(DeviceError::Incomplete(format!(
                    "no progress in {} iterations: {} of {total} pixels finished, {} rays injected, {} spilled",
                    stalled as u64 * self.plan.options.rc as u64,
                    st.finished,
                    st.injected,
                    st.spilled
                )));
            }
        }
    }

    /// The frame's pixels in scan order, from the framebuffer slices and the result
    /// stores, each written exactly once (slots past the frame never).
    fn read_pixels(&mut self, cam: &Camera) -> Result<Vec<foam_pixel>, DeviceError> {
        self.session.read_tensor(poplar_bridge::PIXELS_HANDLE, &mut self.px_bytes)?;
        // The slices hold the pixels dealt out round-robin over the k-d tree's
        // leaves (layout.h foam_camera): put them back in scan order.
        let slices: Vec<foam_pixel> = read_records(&self.px_bytes);
        let slots = self.plan.slice_pixels as usize;
        let homes = 1usize << self.plan.partition.depth;
        let mut pixels: Vec<foam_pixel> = (0..homes * slots)
            .map(|p| {
                let (tracer, slot) = self.plan.home_tracer(p);
                slices[tracer * slots + slot]
            })
            .collect();
        // A replica of a home tracer writes the pixels that finish on it into its own
        // slice (it holds the same shard id): add what it wrote to the home's.
        let leaf_of_home: std::collections::HashMap<usize, usize> =
            (0..homes).map(|leaf| (self.plan.home_tracer(leaf).0, leaf)).collect();
        for (k, (_, shard)) in self.plan.tree.tracer_nodes().enumerate().skip(self.plan.shards()) {
            let Some(&leaf) = leaf_of_home.get(&shard) else { continue };
            for (slot, px) in slices[k * slots..(k + 1) * slots].iter().enumerate().filter(|(_, px)| px.writes > 0) {
                let home = &mut pixels[slot * homes + leaf];
                *home = foam_pixel { writes: home.writes + px.writes, ..*px };
            }
        }
        // Rays kept where they finished (layout.h foam_result): each worker's part of
        // its tracer's store holds as many as the worker counted this frame, from its
        // start; the slots past them hold an older frame's (the frame start does not
        // clear the stores).
        self.session.read_tensor(poplar_bridge::RESULTS_HANDLE, &mut self.res_bytes)?;
        self.session.read_tensor(poplar_bridge::RESULT_COUNTS_HANDLE, &mut self.res_counts)?;
        let counts: Vec<u32> = read_records(&self.res_counts);
        let record = size_of::<foam_result>();
        let mut kept = Vec::new();
        let mut store = 0usize;
        for (k, (node, shard)) in self.plan.tree.tracer_nodes().enumerate() {
            let per_worker = self.plan.result_slots[shard] as usize;
            for w in 0..FOAM_WORKERS as usize {
                let n = counts[k * FOAM_WORKERS as usize + w] as usize;
                if n > per_worker {
                    return Err(DeviceError::Incomplete(format!(
                        "tracer node {node}'s worker {w} counts {n} results in a part of {per_worker} slots"
                    )));
                }
                let part = store + w * per_worker * record;
                kept.extend(self.res_bytes[part..part + n * record].chunks_exact(record));
            }
            store += super::options::result_store_bytes(per_worker as u32) as usize;
        }
        for rec in kept {
            let r: foam_result = read_record(rec);
            if r.pixel == 0 {
                return Err(DeviceError::Incomplete("a result a tracer counted names no pixel".into()));
            }
            let Some(px) = pixels.get_mut(r.pixel as usize - 1) else {
                return Err(DeviceError::Incomplete(format!("a result names pixel {} outside the frame", r.pixel - 1)));
            };
            *px = foam_pixel {
                r: r.r,
                g: r.g,
                b: r.b,
                opacity: r.opacity,
                depth: r.depth,
                router_hops: r.router_hops,
                tracer_hops: r.tracer_hops,
                writes: px.writes + 1,
            };
        }
        // Every pixel exactly once: the invariant the whole design exists to keep.
        let total = cam.width as u64 * cam.height as u64;
        let bad: Vec<usize> =
            (0..pixels.len()).filter(|&i| pixels[i].writes != if (i as u64) < total { 1 } else { 0 }).collect();
        if let Some(&first) = bad.first() {
            let (x, y) = (first as u64 % cam.width as u64, first as u64 / cam.width as u64);
            return Err(DeviceError::Incomplete(format!(
                "{} pixels were not written exactly once (first: ({x}, {y}) written {} times)",
                bad.len(),
                pixels[first].writes
            )));
        }
        Ok(pixels)
    }

    /// The frame's statistics from every tile's (`tiles`, node order) after
    /// `iterations`; the host's counters and wall time are the caller's to fill in.
    fn frame_stats(&self, cam: &Camera, tiles: &[foam_tile_stats], iterations: u64) -> FrameStats {
        let total = cam.width as u64 * cam.height as u64;
        let sum = |role: Role, f: &dyn Fn(&foam_tile_stats) -> u64| -> u64 {
            self.plan.tree.nodes.iter().zip(tiles).filter(|(n, _)| n.role == role).map(|(_, s)| f(s)).sum()
        };
        let router_hops_total = sum(Role::Router, &|s| s.rays_in as u64);
        // Marching visits: on tracers, and the first ones on the injectors.
        let tracer_hops_total = sum(Role::Tracer, &|s| s.rays_in as u64) + sum(Role::Injector, &|s| s.rays_in as u64);
        FrameStats {
            backend: match self.plan.options.backend {
                Backend::Host => "host".into(),
                Backend::Ipu => "ipu".into(),
            },
            layout: self.plan.options.layout.name().into(),
            sh_degree: self.plan.sh.degree,
            rc: self.plan.options.rc,
            shards: self.plan.shards(),
            width: cam.width,
            height: cam.height,
            host_calls: 0,
            iterations,
            wall_s: 0.0,
            setup_s: self.setup_s,
            rays: total,
            rays_finished: sum(Role::Tracer, &|s| s.pixels as u64),
            // A frame that dropped a ray is an error (check_counters), never a result.
            rays_dropped: 0,
            router_hops_mean: router_hops_total as f64 / total as f64,
            tracer_hops_mean: tracer_hops_total as f64 / total as f64,
            router_hops_per_tracer_hop: router_hops_total as f64 / tracer_hops_total.max(1) as f64,
            side_hops_mean: sum(Role::Tracer, &|s| s.side_sent as u64) as f64 / total as f64,
            cell_steps: sum(Role::Tracer, &|s| s.cell_steps as u64) + sum(Role::Injector, &|s| s.cell_steps as u64),
            max_buffer_occupancy: tiles.iter().map(|s| s.peak_queue as u64).max().unwrap_or(0),
            tile_bytes_max: self.tile_bytes_max,
            tile_bytes_budget: self.tile_bytes_budget,
            bytes_exchanged: 0,
            ipus: self.plan.options.ipus,
            bytes_across_ipus: 0,
            host_bytes_written: 0,
            host_bytes_read: 0,
            spill_peak: tiles[self.plan.tree.spill()].peak_queue as u64,
            router_levels: super::stats::router_levels(&self.plan.tree, tiles),
        }
    }
}

/// Fails on the counters every tile keeps that must stay 0: rays that found no
/// room (a credit violation, so a ray was dropped) and rays that reached a tile
/// not holding their shard (a routing fault: the tracer sends such a ray on,
/// so the image may still be whole, but a ray marched twice by two workers
/// once showed only here).
fn check_counters(nodes: &[Node], tiles: &[foam_tile_stats]) -> Result<(), DeviceError> {
    type Count = fn(&foam_tile_stats) -> u32;
    // The worse fault first: a dropped ray.
    let counters: [(Count, &str); 2] = [
        (|s| s.overflow, "found no room (a credit violation)"),
        (|s| s.misrouted, "reached a tile that does not hold their shard (a routing fault)"),
    ];
    for (count, what) in counters {
        let Some((node, s)) = nodes.iter().zip(tiles).find(|(_, s)| count(s) > 0) else {
            continue;
        };
        let total: u64 = tiles.iter().map(|s| count(s) as u64).sum();
        return Err(DeviceError::Incomplete(format!(
            "{total} rays {what}, {} of them on tile {} ({})",
            count(s),
            node.tile,
            format!("{:?}", node.role).to_lowercase()
        )));
    }
    Ok(())
}

/// The image of the frame's first `cam.width × cam.height` pixels, and their router
/// and tracer hops when the rays counted them.
fn frame_output(pixels: &[foam_pixel], cam: &Camera, hops: bool) -> (RenderOutput, Option<Vec<u16>>, Option<Vec<u16>>) {
    let n = cam.width as usize * cam.height as usize;
    let mut out = RenderOutput {
        width: cam.width,
        height: cam.height,
        rgb: Vec::with_capacity(3 * n),
        opacity: Vec::with_capacity(n),
        depth: Vec::with_capacity(n),
        steps: vec![0; n],
    };
    for p in &pixels[..n] {
        out.rgb.extend_from_slice(&[p.r, p.g, p.b]);
        out.opacity.push(p.opacity);
        out.depth.push(p.depth);
    }
    if !hops {
        return (out, None, None);
    }
    let router = pixels[..n].iter().map(|p| p.router_hops).collect();
    let tracer = pixels[..n].iter().map(|p| p.tracer_hops).collect();
    (out, Some(router), Some(tracer))
}

/// A tile's budget and the largest tile's bytes. The host runtime reports what each tile
/// holds once compiled (tensors, vertex state, code, stacks); the Poplar SDK leaves that
/// to PopVision and its session refuses a memory report, so there the tensor bytes the
/// graph builder allocates (codelets/graph/tile_bytes.h) stand in.
fn tile_memory(session: &Session, plan: &DevicePlan) -> Result<(u64, u64), DeviceError> {
    if cfg!(feature = "poplar") {
        let tiles = poplar_bridge::spec_tile_bytes(&plan.spec)?;
        let max = tiles.iter().map(|t| t.total() as u64).max().unwrap_or(0);
        return Ok((session.bytes_per_tile() as u64, max));
    }
    let report = session.memory_report()?;
    let max = report
        .tiles
        .iter()
        .map(|t| t.tensor_bytes + t.vertex_state_bytes + t.code_bytes + t.stack_bytes)
        .max()
        .unwrap_or(0);
    Ok((report.bytes_per_tile, max))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(role: Role, tile: u32) -> Node {
        Node {
            role,
            tile,
            parent: None,
            lane: 0,
            fanout: 0,
            inject_lanes: 0,
            subtree_shift: 0,
            prefix: 0,
            level_shift: 0,
            level: 0,
            edge_level: 0,
            route_bits: 0,
            replica_bits: [0; 16],
            replica_lane: [0; 16],
        }
    }

    #[test]
    fn counters_that_must_stay_zero_fail_the_frame_and_name_the_tile() {
        let nodes = [node(Role::Tracer, 0), node(Role::Tracer, 1), node(Role::Router, 1024)];
        let mut tiles = vec![foam_tile_stats::default(); 3];
        tiles[0].rays_in = 50;
        assert!(check_counters(&nodes, &tiles).is_ok());

        tiles[1].misrouted = 2;
        let err = check_counters(&nodes, &tiles).unwrap_err().to_string();
        assert!(err.contains("2 rays reached a tile that does not hold their shard"), "{err}");
        assert!(err.contains("tile 1 (tracer)"), "{err}");

        // A dropped ray is named first: it is the worse fault.
        tiles[2].overflow = 3;
        let err = check_counters(&nodes, &tiles).unwrap_err().to_string();
        assert!(err.contains("3 rays found no room") && err.contains("tile 1024 (router)"), "{err}");
    }
}
