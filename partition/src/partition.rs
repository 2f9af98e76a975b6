//! Assigning every cell to a shard: the global, light-weight result of partitioning.

use rayon::prelude::*;
use serde::Serialize;

use crate::kdtree::{self, Site};
use crate::{MAX_SHARD_ENTRIES, MAX_SHARDS, PartitionError, SceneRef, morton, octree};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// Balanced k-d tree (the paper's choice, §4.2).
    #[default]
    Kdtree,
    /// Adaptive octree with the same leaf budget (appendix B.2), for comparison.
    Octree,
}

/// Which shard owns each cell and where. Shard `s`'s local cells are
/// `order[shard_start[s]..shard_start[s + 1]]`, in local-index order.
///
/// Shards are numbered 0.. in k-d tree order. On the device a shard goes by its id
/// (`ids[s]`): its k-d path, first split in the top bit, which the routers read bit
/// by bit. The tree has `2^depth` leaves; a leaf may be split once more into two
/// shards (on tiles the router tree leaves free), and then every id has one more
/// bit: a split leaf's halves end in 0 and 1, every other leaf's shard in 0.
#[derive(Clone, Debug)]
pub struct Partition {
    /// Levels of the k-d tree above its leaves.
    pub depth: u32,
    pub method: Method,
    /// Global cell ids, shard after shard, each shard in Morton order.
    pub order: Vec<u32>,
    /// `shards + 1` offsets into `order`.
    pub shard_start: Vec<u32>,
    /// Where every cell lives: owning shard << 16 | local index there. One array, so
    /// resolving a neighbour costs one random memory access, not two.
    pub slot: Vec<u32>,
    /// Each shard's id on the device, ascending.
    pub ids: Vec<u16>,
    /// Bits of the ids: `depth`, or `depth + 1` when some leaf is split.
    pub id_bits: u32,
}

impl Partition {
    pub fn shards(&self) -> usize {
        self.shard_start.len() - 1
    }

    /// Global ids of shard `s`'s local cells; local index i is `cells(s)[i]`.
    pub fn cells(&self, s: usize) -> &[u32] {
        &self.order[self.shard_start[s] as usize..self.shard_start[s + 1] as usize]
    }

    /// Owning shard of cell `g`.
    pub fn owner(&self, g: u32) -> usize {
        (self.slot[g as usize] >> 16) as usize
    }

    /// Local index of cell `g` in its owning shard.
    pub fn local_index(&self, g: u32) -> usize {
        (self.slot[g as usize] & 0xFFFF) as usize
    }

    /// Shards of each of the `2^depth` leaves of the k-d tree: 1, or 2 where the leaf
    /// is split.
    pub fn shards_per_leaf(&self) -> Vec<u8> {
        let extra = self.id_bits - self.depth;
        let mut per = vec![0u8; 1 << self.depth];
        for &id in &self.ids {
            per[(id >> extra) as usize] += 1;
        }
        per
    }

    /// Ids of the shards of `shards_per_leaf` (each leaf 1 or 2 shards, at least one 2
    /// for an extra id bit), and their bits.
    pub(crate) fn ids_for(depth: u32, shards_per_leaf: &[u8]) -> (Vec<u16>, u32) {
        let split = shards_per_leaf.contains(&2);
        let extra = split as u32;
        let ids = shards_per_leaf
            .iter()
            .enumerate()
            .flat_map(|(leaf, &k)| (0..k as usize).map(move |half| ((leaf << extra) | half) as u16))
            .collect();
        (ids, depth + extra)
    }
}

/// Checks a requested shard count: a power of two in 2..=65,536.
pub fn check_shard_count(shards: u64) -> Result<u32, PartitionError> {
    if shards < 2 || shards > MAX_SHARDS as u64 || !shards.is_power_of_two() {
        return Err(PartitionError::BadShardCount(shards));
    }
    Ok(shards.trailing_zeros())
}

/// Cuts `scene` into `shards` shards (a power of two) with `method`, balancing local
/// cell counts (the paper's k-d tree, §4.2).
pub fn partition(scene: &SceneRef, shards: u64, method: Method) -> Result<Partition, PartitionError> {
    let depth = check_shard_count(shards)?;
    let shards = shards as usize;
    scene.validate()?;
    let n = scene.len();
    if shards > n {
        return Err(PartitionError::MoreShardsThanCells { shards, cells: n });
    }
    let mut sites: Vec<Site> = scene.positions.par_iter().enumerate().map(|(i, &p)| Site { p, id: i as u32 }).collect();
    let sizes = match method {
        Method::Kdtree => {
            kdtree::split(&mut sites, depth);
            kdtree::leaf_sizes(n, depth)
        }
        Method::Octree => octree::split(&mut sites, shards),
    };
    let order: Vec<u32> = sites.par_iter().map(|s| s.id).collect();
    drop(sites);
    let (ids, id_bits) = Partition::ids_for(depth, &vec![1; shards]);
    Partition::from_leaves(scene, (depth, id_bits), method, order, &sizes, ids, true)
}

impl Partition {
    /// The partition whose shard `s` (id `ids[s]`) holds the next `sizes[s]` cells of
    /// `order`, in a k-d tree of `depth` levels with ids of `id_bits`. With `morton`,
    /// each shard's cells are put in Morton order (the local order the tiles get);
    /// without, they keep `order`'s, which is enough to count shards.
    pub(crate) fn from_leaves(
        scene: &SceneRef,
        (depth, id_bits): (u32, u32),
        method: Method,
        mut order: Vec<u32>,
        sizes: &[usize],
        ids: Vec<u16>,
        morton: bool,
    ) -> Result<Partition, PartitionError> {
        let n = order.len();
        let mut shard_start = Vec::with_capacity(sizes.len() + 1);
        shard_start.push(0u32);
        for (s, &len) in sizes.iter().enumerate() {
            if len > MAX_SHARD_ENTRIES {
                return Err(PartitionError::ShardTooLarge { shard: s, local: len, halo: None });
            }
            shard_start.push(shard_start[s] + len as u32);
        }
        let mut runs = Vec::with_capacity(sizes.len());
        let mut rest = order.as_mut_slice();
        for &len in sizes {
            let (run, tail) = rest.split_at_mut(len);
            runs.push(run);
            rest = tail;
        }
        if morton {
            runs.par_iter_mut().for_each(|run| morton::sort_by_morton(run, scene.positions));
        }
        let mut slot = vec![0u32; n];
        for (s, run) in runs.iter().enumerate() {
            for (i, &g) in run.iter().enumerate() {
                slot[g as usize] = (s as u32) << 16 | i as u32;
            }
        }
        Ok(Partition { depth, method, order, shard_start, slot, ids, id_bits })
    }
}
