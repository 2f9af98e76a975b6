//! What a device frame reports: the summary line and the `--stats` JSON.

use foam_layout::foam_tile_stats;
use serde::Serialize;

use super::tree::{Role, Tree};

#[derive(Clone, Debug, Default, Serialize)]
pub struct FrameStats {
    pub backend: String,
    pub layout: String,
    /// SH degree of the colour the tracers evaluate (0: DC only).
    pub sh_degree: u8,
    pub rc: u32,
    pub shards: usize,
    pub width: u32,
    pub height: u32,
    /// Engine runs and tensor reads/writes for this frame.
    pub host_calls: u64,
    /// Compute/exchange iterations the frame took.
    pub iterations: u64,
    pub wall_s: f64,
    /// Seconds to partition, build and compile the graph (once per scene).
    pub setup_s: f64,
    pub rays: u64,
    pub rays_finished: u64,
    /// Rays that found no room anywhere; the design makes this 0 and the frame fails otherwise.
    pub rays_dropped: u64,
    /// Router tiles a ray passes through, on average.
    pub router_hops_mean: f64,
    /// Tracer tiles a ray is marched on, on average.
    pub tracer_hops_mean: f64,
    pub router_hops_per_tracer_hop: f64,
    /// Shard crossings a ray makes over a side link (tracer to tracer, no router), on average.
    pub side_hops_mean: f64,
    pub cell_steps: u64,
    /// Highest number of rays waiting in any tile's queues at the end of a step.
    pub max_buffer_occupancy: u64,
    /// Largest per-tile memory of the graph (tensors, vertex state, code, worker stacks).
    pub tile_bytes_max: u64,
    pub tile_bytes_budget: u64,
    pub bytes_exchanged: u64,
    /// IPUs the graph spans, and of `bytes_exchanged` the bytes copied between
    /// tiles of different IPUs (over IPU-Links) in this frame.
    pub ipus: u32,
    pub bytes_across_ipus: u64,
    /// Bytes the host wrote to start the frame: the camera record and, for a camera
    /// the device did not hold, every injector's camera region and block list.
    pub host_bytes_written: u64,
    /// Bytes the host read after the frame: every framebuffer slice, result store with
    /// its workers' counts, and tile's statistics (the status it polls between host
    /// calls aside).
    pub host_bytes_read: u64,
    /// Rays the spill store held at the busiest moment.
    pub spill_peak: u64,
    /// Router traffic per tree level, from the parents of the tracers (level 1) to the root.
    pub router_levels: Vec<RouterLevel>,
}

/// The routers of one tree level over a frame.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RouterLevel {
    /// 1 = parents of the tracers; the root has the highest level.
    pub level: u32,
    pub routers: usize,
    /// Rays forwarded by all routers of the level (router hops spent there).
    pub rays_forwarded: u64,
    /// Rays forwarded by the busiest router of the level.
    pub busiest_router_rays: u64,
    /// Highest queue occupancy any router of the level reached.
    pub peak_queue: u64,
}

/// Aggregates the routers' cumulative `foam_tile_stats` (node order) by tree level.
pub fn router_levels(tree: &Tree, tiles: &[foam_tile_stats]) -> Vec<RouterLevel> {
    let top = tree.routers().map(|n| n.level).max().unwrap_or(0);
    let mut levels: Vec<RouterLevel> = (1..=top).map(|level| RouterLevel { level, ..RouterLevel::default() }).collect();
    for (n, s) in tree.nodes.iter().zip(tiles).filter(|(n, _)| n.role == Role::Router) {
        let l = &mut levels[n.level as usize - 1];
        l.routers += 1;
        l.rays_forwarded += s.rays_in as u64;
        l.busiest_router_rays = l.busiest_router_rays.max(s.rays_in as u64);
        l.peak_queue = l.peak_queue.max(s.peak_queue as u64);
    }
    levels
}

impl FrameStats {
    pub fn summary_line(&self) -> String {
        format!(
            "{}x{} on {} ({} layout, SH degree {}, rc {}): {} iterations, {} host calls, {:.2} s; rays {}/{} finished, {} dropped; \
             hops/ray: {:.1} router, {:.1} tracer ({:.2} router per tracer hop); peak queue {}; max tile {} B",
            self.width,
            self.height,
            self.backend,
            self.layout,
            self.sh_degree,
            self.rc,
            self.iterations,
            self.host_calls,
            self.wall_s,
            self.rays_finished,
            self.rays,
            self.rays_dropped,
            self.router_hops_mean,
            self.tracer_hops_mean,
            self.router_hops_per_tracer_hop,
            self.max_buffer_occupancy,
            self.tile_bytes_max
        ) + &if self.ipus > 1 {
            format!("; {} IPUs, {} B across IPUs", self.ipus, self.bytes_across_ipus)
        } else {
            String::new()
        }
    }
}
