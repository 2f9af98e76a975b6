//! SRAM footprint of a tracer tile: its shard, its framebuffer slice, its ray buffers,
//! its program (code and worker stacks) and a fixed overhead, against the target's
//! bytes per tile.

use serde::Serialize;
use std::mem::size_of;

use crate::layout::{foam_pixel, foam_ray_fp32, foam_ray_half, foam_ray_hops, foam_ray_mixed};

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

/// Plan parameters that decide what a tracer tile holds besides its shard.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct FootprintParams {
    pub width: u32,
    pub height: u32,
    pub layout: RayLayout,
    /// Append `foam_ray_hops` (4 B) to every payload.
    pub hop_counters: bool,
    /// Ray slots a tracer tile holds over all its buffers (input and output link).
    pub tracer_ray_slots: u32,
    /// The code of a tracer tile's vertex types and its six worker stacks: see
    /// [`FootprintParams::DEFAULT_PROGRAM_BYTES`].
    pub program_bytes: u64,
    /// Other fixed bytes per tile besides data: see [`FootprintParams::DEFAULT_OVERHEAD_BYTES`].
    pub overhead_bytes: u64,
    /// SRAM per tile of the target.
    pub budget_bytes: u64,
}

impl FootprintParams {
    /// A tracer tile's program as the host runtime counts it: its vertex types' code
    /// (TracerMarch, TracerSend, ZeroBytes, ZeroWords) and six worker stacks as deep
    /// as the deepest, measured on the host build and scaled to the IPU
    /// (poplar-bridge/build/codelet_costs.rs, poplar_host/Report.hpp). `foam-ipu
    /// partition` takes the build's own measure; a test keeps this default to it.
    pub const DEFAULT_PROGRAM_BYTES: u64 = 15_514;
    /// The rest of a tile that is not scene, framebuffer or ray data: the camera
    /// block, vertex state and edge descriptors, exchange and control code. The paper
    /// measures ≈ 48 kB for all of it with the program (§5.5: after program memory a
    /// router tile keeps ≈ 576 kB of its 624 kB); this is what it leaves beside the
    /// program measured here.
    pub const DEFAULT_OVERHEAD_BYTES: u64 = 48 * 1024 - Self::DEFAULT_PROGRAM_BYTES;
    /// An input and an output link buffer of 2,880 rays each: the capacity the paper
    /// gives a router link for the 20 B layout (Tab. 4), so a tracer never throttles
    /// the router above it. With fp32 payloads and hop counters this is 184 kB, which
    /// still fits beside the paper's worst shard (≈ 276 kB).
    pub const DEFAULT_TRACER_RAY_SLOTS: u32 = 2 * 2880;

    /// Ray payload including the optional hop counters.
    pub fn ray_bytes(&self) -> u64 {
        self.layout.payload_bytes() + if self.hop_counters { size_of::<foam_ray_hops>() as u64 } else { 0 }
    }

    /// Pixels of one tracer's framebuffer slice: ceil(W·H / shards).
    pub fn slice_pixels(&self, shards: usize) -> u64 {
        (self.width as u64 * self.height as u64).div_ceil(shards as u64)
    }

    pub fn framebuffer_bytes(&self, shards: usize) -> u64 {
        self.slice_pixels(shards) * size_of::<foam_pixel>() as u64
    }

    pub fn ray_buffer_bytes(&self) -> u64 {
        self.tracer_ray_slots as u64 * self.ray_bytes()
    }

    /// Everything on a tracer tile except its shard.
    pub fn fixed_tile_bytes(&self, shards: usize) -> u64 {
        self.framebuffer_bytes(shards) + self.ray_buffer_bytes() + self.program_bytes + self.overhead_bytes
    }

    /// Whole tracer tile holding a shard blob of `shard_bytes`.
    pub fn tile_bytes(&self, shard_bytes: u64, shards: usize) -> u64 {
        shard_bytes + self.fixed_tile_bytes(shards)
    }
}

impl Default for FootprintParams {
    fn default() -> Self {
        FootprintParams {
            width: 640,
            height: 480,
            layout: RayLayout::Half,
            hop_counters: false,
            tracer_ray_slots: Self::DEFAULT_TRACER_RAY_SLOTS,
            program_bytes: Self::DEFAULT_PROGRAM_BYTES,
            overhead_bytes: Self::DEFAULT_OVERHEAD_BYTES,
            budget_bytes: MK2_TILE_BYTES,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blob_len;

    #[test]
    fn paper_worst_shard_fits_with_fp32_and_hops() {
        // §5.2: worst Bicycle shard of 1024 has 4102 local, 3155 halo, 63,557 adjacency.
        let shard = blob_len(4102, 3155, 63_557) as u64;
        assert!((270_000..280_000).contains(&shard), "{shard}");
        let p = FootprintParams { layout: RayLayout::Fp32, hop_counters: true, ..Default::default() };
        assert_eq!(p.ray_bytes(), 32);
        assert_eq!(p.slice_pixels(1024), 300);
        assert!(p.tile_bytes(shard, 1024) <= MK2_TILE_BYTES);
    }

    #[test]
    fn payload_sizes_follow_the_paper() {
        assert_eq!([RayLayout::Fp32, RayLayout::Mixed, RayLayout::Half].map(RayLayout::payload_bytes), [28, 24, 20]);
    }
}
