//! Balanced k-d tree sharding, halo and adjacency packing, SRAM footprint.
//!
//! A scene is cut into 2^depth shards, one per tracer tile (paper §4.2). Each shard is
//! packed into the exact bytes of `codelets/include/foam/layout.h`, and the footprint
//! of every tracer tile (shard + framebuffer slice + ray buffers + fixed overhead) is
//! checked against the target's bytes per tile (§5.2).

mod balance;
mod error;
mod fit;
pub mod fixtures;
mod footprint;
mod kdtree;
mod morton;
mod octree;
mod pack;
mod partition;
mod report;
mod scene_ref;
mod shard;

pub use balance::{BALANCE_TOLERANCE, Counted, MAX_ROUNDS, balance_bytes, balance_load, count_shards};
pub use error::PartitionError;
pub use fit::{Balance, Cut, cut, shard_fits};
pub use footprint::{MK2_TILE_BYTES, RayLayout, TracerFootprint};
pub use pack::{PackedShard, ShardCounts, UnpackedShard, blob_len, blob_len_sh, pack_all, pack_shard, unpack_shard};
pub use partition::{Method, Partition, check_shard_count, partition};
pub use report::{PartitionReport, ShardStats, Summary};
pub use scene_ref::{SceneRef, ShPayload};
pub use shard::{Halo, Shard, build_shard};

/// Largest shard count: shard ids are 16-bit.
pub const MAX_SHARDS: usize = 65_536;
/// Local + halo cells one shard may hold: adjacency entries are 16-bit indices.
pub const MAX_SHARD_ENTRIES: usize = foam_layout::FOAM_MAX_SHARD_ENTRIES as usize;
