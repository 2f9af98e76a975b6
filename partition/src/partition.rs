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
#[derive(Clone, Debug)]
pub struct Partition {
    pub depth: u32,
    pub method: Method,
    /// Global cell ids, shard after shard, each shard in Morton order.
    pub order: Vec<u32>,
    /// `shards + 1` offsets into `order`.
    pub shard_start: Vec<u32>,
    /// Where every cell lives: owning shard << 16 | local index there. One array, so
    /// resolving a neighbour costs one random memory access, not two.
    pub slot: Vec<u32>,
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
    let mut sites: Vec<Site> =
        scene.positions.par_iter().enumerate().map(|(i, &p)| Site { p, id: i as u32 }).collect();
    let sizes = match method {
        Method::Kdtree => {
            kdtree::split(&mut sites, depth);
            kdtree::leaf_sizes(n, depth)
        }
        Method::Octree => octree::split(&mut sites, shards),
    };
    let order: Vec<u32> = sites.par_iter().map(|s| s.id).collect();
    drop(sites);
    Partition::from_leaves(scene, depth, method, order, &sizes, true)
}

impl Partition {
    /// The partition whose shard `s` holds the next `sizes[s]` cells of `order`.
    /// With `morton`, each shard's cells are put in Morton order (the local order the
    /// tiles get); without, they keep `order`'s, which is enough to count shards.
    pub(crate) fn from_leaves(
        scene: &SceneRef,
        depth: u32,
        method: Method,
        mut order: Vec<u32>,
        sizes: &[usize],
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
        Ok(Partition { depth, method, order, shard_start, slot })
    }
}
