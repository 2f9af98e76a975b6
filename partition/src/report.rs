//! The partition report: per-shard counts and tile bytes, summaries, and the verdict.

use serde::Serialize;

use crate::{Balance, Method, Partition, ShardCounts, TracerFootprint};

#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ShardStats {
    /// Index of the shard (and of its tracer tile).
    pub id: u32,
    /// Its id on the device: its k-d path (see [`Partition`]).
    pub device_id: u16,
    pub local: u32,
    pub halo: u32,
    pub adjacency: u32,
    pub neighbour_shards: u32,
    /// Packed shard blob.
    pub shard_bytes: u64,
    /// Whole tracer tile: the shard and every item of the footprint.
    pub bytes: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Summary {
    pub min: f64,
    pub mean: f64,
    pub max: f64,
}

impl Summary {
    fn of(values: impl Iterator<Item = f64>) -> Summary {
        let (mut min, mut max, mut sum, mut n) = (f64::INFINITY, f64::NEG_INFINITY, 0.0, 0usize);
        for v in values {
            min = min.min(v);
            max = max.max(v);
            sum += v;
            n += 1;
        }
        Summary { min, mean: sum / n.max(1) as f64, max }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PartitionReport {
    pub method: Method,
    /// What the cut balanced: local cell counts, or shard bytes.
    pub balance: Balance,
    pub cells: u64,
    /// Levels of the k-d tree above its leaves.
    pub depth: u32,
    pub shard_count: u32,
    /// Leaves of the k-d tree split in two onto tiles the router tree leaves free.
    pub split_leaves: u32,
    /// What every tracer tile holds besides its shard.
    pub footprint: TracerFootprint,
    pub ray_bytes: u64,
    pub framebuffer_slice_pixels: u64,
    /// The footprint's items together.
    pub fixed_bytes: u64,
    pub budget_bytes: u64,
    /// Largest shard blob that fits a tile.
    pub shard_budget_bytes: u64,
    /// Largest tracer tile.
    pub max_bytes: u64,
    pub worst_shard: u32,
    pub fits: bool,
    /// Shards over budget, ascending.
    pub over_budget: Vec<u32>,
    /// max / min local cells (infinite if a shard is empty).
    pub balance_ratio: f64,
    /// max / mean shard bytes.
    pub bytes_ratio: f64,
    pub local: Summary,
    pub halo: Summary,
    pub adjacency: Summary,
    pub neighbour_shards: Summary,
    pub shard_bytes: Summary,
    pub tile_bytes: Summary,
    pub shards: Vec<ShardStats>,
}

impl PartitionReport {
    /// The report on `part`, a cut balancing `balance` whose shards' counts are
    /// `counts`, for tracer tiles of `footprint`.
    pub fn new(
        part: &Partition,
        balance: Balance,
        counts: &[ShardCounts],
        footprint: &TracerFootprint,
    ) -> PartitionReport {
        let n = counts.len();
        let shards: Vec<ShardStats> = counts
            .iter()
            .enumerate()
            .map(|(id, c)| ShardStats {
                id: id as u32,
                device_id: part.ids[id],
                local: c.local,
                halo: c.halo,
                adjacency: c.adjacency,
                neighbour_shards: c.neighbour_shards,
                shard_bytes: c.bytes as u64,
                bytes: footprint.tile_bytes(c.bytes as u64),
            })
            .collect();
        // The first of the largest tiles, so the name is deterministic.
        let worst = shards.iter().rev().max_by_key(|s| s.bytes).expect("at least two shards");
        let summary = |f: fn(&ShardStats) -> u64| Summary::of(shards.iter().map(|s| f(s) as f64));
        let local = summary(|s| s.local as u64);
        let shard_bytes = summary(|s| s.shard_bytes);
        let budget = footprint.budget;
        PartitionReport {
            method: part.method,
            balance,
            cells: part.order.len() as u64,
            depth: part.depth,
            shard_count: n as u32,
            split_leaves: (n - (1 << part.depth)) as u32,
            footprint: *footprint,
            ray_bytes: footprint.ray_bytes,
            framebuffer_slice_pixels: footprint.slice_pixels,
            fixed_bytes: footprint.fixed(),
            budget_bytes: budget,
            shard_budget_bytes: footprint.shard_budget(),
            max_bytes: worst.bytes,
            worst_shard: worst.id,
            fits: worst.bytes <= budget,
            over_budget: shards.iter().filter(|s| s.bytes > budget).map(|s| s.id).collect(),
            balance_ratio: local.max / local.min,
            bytes_ratio: shard_bytes.max / shard_bytes.mean,
            local,
            halo: summary(|s| s.halo as u64),
            adjacency: summary(|s| s.adjacency as u64),
            neighbour_shards: summary(|s| s.neighbour_shards as u64),
            shard_bytes,
            tile_bytes: summary(|s| s.bytes),
            shards,
        }
    }
}
