//! One shard's contents: local cells, halo cells and the shard-local adjacency.

use crate::{MAX_SHARD_ENTRIES, Partition, PartitionError, SceneRef};

/// A neighbour across the shard boundary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Halo {
    pub global: u32,
    /// Owning shard (its index in the partition: the blob holds its id) and the
    /// cell's local index there.
    pub shard: u16,
    pub cell: u16,
}

#[derive(Clone, Debug)]
pub struct Shard<'p> {
    pub id: usize,
    /// Global ids of the local cells, in local-index order.
    pub cells: &'p [u32],
    /// Sorted by (owning shard, local index there): one run per neighbouring shard.
    pub halo: Vec<Halo>,
    /// Exclusive end of each local cell's slice of `adjacency`.
    pub adjacency_end: Vec<u32>,
    /// Indices into [local | halo]: i < cells.len() is local cell i, else halo i - cells.len().
    pub adjacency: Vec<u16>,
    /// Distinct owners of the halo cells, ascending.
    pub neighbour_shards: Vec<u16>,
}

/// Builds shard `s`. Each cell keeps its neighbours in the scene's order, so the global
/// adjacency can be rebuilt exactly from the shards.
pub fn build_shard<'p>(scene: &SceneRef, part: &'p Partition, s: usize) -> Result<Shard<'p>, PartitionError> {
    let cells = part.cells(s);
    let n_local = cells.len();
    // One pass over the scene: every neighbour as its slot (owner << 16 | local index),
    // which names a cell uniquely and sorts the halo by neighbouring shard.
    let mut adjacency_end = Vec::with_capacity(n_local);
    let mut slots: Vec<u32> = Vec::with_capacity(n_local * 16);
    for &c in cells {
        slots.extend(scene.neighbours(c as usize).iter().map(|&g| part.slot[g as usize]));
        adjacency_end.push(slots.len() as u32);
    }
    let own = |slot: u32| (slot >> 16) as usize == s;
    let mut keys: Vec<u32> = slots.iter().copied().filter(|&k| !own(k)).collect();
    keys.sort_unstable();
    keys.dedup();
    if n_local + keys.len() > MAX_SHARD_ENTRIES {
        return Err(PartitionError::ShardTooLarge { shard: s, local: n_local, halo: Some(keys.len()) });
    }
    let adjacency: Vec<u16> = slots
        .iter()
        .map(|&k| {
            if own(k) {
                k as u16
            } else {
                let h = keys.binary_search(&k).expect("every cross-shard neighbour is in the halo");
                (n_local + h) as u16
            }
        })
        .collect();
    drop(slots);
    let halo: Vec<Halo> = keys
        .iter()
        .map(|&k| {
            let (shard, cell) = ((k >> 16) as u16, k as u16);
            Halo { global: part.cells(shard as usize)[cell as usize], shard, cell }
        })
        .collect();
    let mut neighbour_shards: Vec<u16> = halo.iter().map(|h| h.shard).collect();
    neighbour_shards.dedup();
    Ok(Shard { id: s, cells, halo, adjacency_end, adjacency, neighbour_shards })
}
