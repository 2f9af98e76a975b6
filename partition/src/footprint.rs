//! SRAM footprint of a tracer tile: its shard and every other item the renderer puts
//! on it (buffers, framebuffer slice, its program of code and worker stacks), against
//! the target's bytes per tile.

use serde::Serialize;
use std::mem::size_of;

use foam_layout::{foam_ray_fp32, foam_ray_half, foam_ray_mixed};

/// Bytes of SRAM per tile on a Mk2 IPU (624 KiB).
pub const MK2_TILE_BYTES: u64 = 638_976;

/// Ray payload layout (paper Tab. 1); sizes come from layout.h.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RayLayout {
    Fp32,
    Mixed,
    #[default]
    Half,
}

impl RayLayout {
    pub fn payload_bytes(self) -> u64 {
        (match self {
            RayLayout::Fp32 => size_of::<foam_ray_fp32>(),
            RayLayout::Mixed => size_of::<foam_ray_mixed>(),
            RayLayout::Half => size_of::<foam_ray_half>(),
        }) as u64
    }

    pub fn name(self) -> &'static str {
        match self {
            RayLayout::Fp32 => "fp32",
            RayLayout::Mixed => "mixed",
            RayLayout::Half => "half",
        }
    }
}

/// What a tracer tile holds besides its shard, item by item, against the target's
/// bytes per tile. The device plan sizes every item (`DeviceOptions::tracer_footprint`
/// in the host tool, which mirrors the graph builder), so that the partitioner judges
/// a shard by the tile the renderer will build: every item is the same on every
/// tracer, so a shard fits iff its blob fits [`shard_budget`](Self::shard_budget).
/// Shard copies are not an item: the plan adds them only into what is left.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TracerFootprint {
    /// Bytes of one ray payload (with hop counters if on).
    pub ray_bytes: u64,
    /// Pixels of the framebuffer slice.
    pub slice_pixels: u64,
    /// The framebuffer slice.
    pub framebuffer: u64,
    /// The edge to the router above: an inbox and an outbox.
    pub links: u64,
    /// Side links to other tracers, both directions (one empty header each way
    /// without any).
    pub side_links: u64,
    /// Rays waiting for credit.
    pub pending: u64,
    /// The result store: finished rays kept where they end.
    pub results: u64,
    /// Parameters, statistics, camera, control block and the shard copies' directory.
    pub records: u64,
    /// The tile's program: its vertex types' code and six worker stacks.
    pub program: u64,
    /// The rest of what the plan keeps free on every tile: vertex state, edge
    /// descriptors, exchange and control code.
    pub reserve: u64,
    /// SRAM per tile of the target.
    pub budget: u64,
}

impl TracerFootprint {
    /// A tracer tile's program as the host runtime counts it (its vertex types' code:
    /// TracerMarch, TracerSend, ZeroBytes, ZeroWords; and six worker stacks as deep as
    /// the deepest), measured on the host build and scaled to the IPU
    /// (poplar-bridge/build/codelet_costs.rs, poplar_host/Report.hpp), for builds that
    /// cannot measure it (against the SDK); a test keeps it to the measure.
    pub const DEFAULT_PROGRAM_BYTES: u64 = 24_568;

    /// Every item besides the shard, named as the partition report prints them.
    pub fn items(&self) -> [(&'static str, u64); 8] {
        [
            ("framebuffer", self.framebuffer),
            ("links", self.links),
            ("side links", self.side_links),
            ("pending", self.pending),
            ("results", self.results),
            ("records", self.records),
            ("program", self.program),
            ("reserve", self.reserve),
        ]
    }

    /// Everything on a tracer tile except its shard.
    pub fn fixed(&self) -> u64 {
        self.items().iter().map(|&(_, b)| b).sum()
    }

    /// Whole tracer tile holding a shard blob of `shard_bytes`.
    pub fn tile_bytes(&self, shard_bytes: u64) -> u64 {
        shard_bytes + self.fixed()
    }

    /// Largest shard blob that fits the tile.
    pub fn shard_budget(&self) -> u64 {
        self.budget.saturating_sub(self.fixed())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blob_len;

    #[test]
    fn paper_worst_shard_is_about_270_kb() {
        // §5.2: worst Bicycle shard of 1024 has 4102 local, 3155 halo, 63,557 adjacency.
        let shard = blob_len(4102, 3155, 63_557) as u64;
        assert!((270_000..280_000).contains(&shard), "{shard}");
    }

    #[test]
    fn a_tile_is_its_shard_and_every_item() {
        let f = TracerFootprint {
            framebuffer: 1,
            links: 2,
            side_links: 4,
            pending: 8,
            results: 16,
            records: 32,
            program: 64,
            reserve: 128,
            budget: 1000,
            ..Default::default()
        };
        assert_eq!(f.fixed(), 255);
        assert_eq!(f.tile_bytes(500), 755);
        assert_eq!(f.shard_budget(), 745);
        assert_eq!(TracerFootprint { budget: 100, ..f }.shard_budget(), 0);
    }

    #[test]
    fn payload_sizes_follow_the_paper() {
        assert_eq!([RayLayout::Fp32, RayLayout::Mixed, RayLayout::Half].map(RayLayout::payload_bytes), [28, 24, 20]);
    }
}
