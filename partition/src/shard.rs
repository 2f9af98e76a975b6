//! One shard's contents: local cells, halo cells and the shard-local adjacency.

use crate::{MAX_SHARD_ENTRIES, Partition, PartitionError, SceneRef};

/// A neighbour across the shard boundary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Halo {
    pub global: u32,
    /// Owning shard and the cell's local index there.
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
    // A halo cell is named by (owner, local index) packed in a u32: unique per cell and
    // sorting by it groups the halo by neighbouring shard.
    let key = |g: u32| (part.owner[g as usize] as u32) << 16 | part.local_index[g as usize] as u32;
    let mut keys: Vec<u32> = cells
        .iter()
        .flat_map(|&c| scene.neighbours(c as usize))
        .filter(|&&g| part.owner[g as usize] as usize != s)
        .map(|&g| key(g))
        .collect();
    keys.sort_unstable();
    keys.dedup();
    if n_local + keys.len() > MAX_SHARD_ENTRIES {
        return Err(PartitionError::ShardTooLarge { shard: s, local: n_local, halo: Some(keys.len()) });
    }
    let halo: Vec<Halo> = keys
        .iter()
        .map(|&k| {
            let (shard, cell) = ((k >> 16) as u16, k as u16);
            Halo { global: part.cells(shard as usize)[cell as usize], shard, cell }
        })
        .collect();
    let mut neighbour_shards: Vec<u16> = halo.iter().map(|h| h.shard).collect();
    neighbour_shards.dedup();

    let mut adjacency_end = Vec::with_capacity(n_local);
    let mut adjacency = Vec::new();
    for &c in cells {
        for &g in scene.neighbours(c as usize) {
            let idx = if part.owner[g as usize] as usize == s {
                part.local_index[g as usize]
            } else {
                let h = keys.binary_search(&key(g)).expect("every cross-shard neighbour is in the halo");
                (n_local + h) as u16
            };
            adjacency.push(idx);
        }
        adjacency_end.push(adjacency.len() as u32);
    }
    Ok(Shard { id: s, cells, halo, adjacency_end, adjacency, neighbour_shards })
}
