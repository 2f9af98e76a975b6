//! Cutting a scene so that what each tile holds balances, not its cell count.
//!
//! Equal cell counts (the paper's k-d tree) leave the bytes of a shard free: a shard of
//! large cells that border a dense surface holds thousands of halo cells more than one
//! inside the surface. What must fit is the tile, so [`balance_bytes`] moves the split
//! planes until the shards' packed bytes (local cells, halo cells, adjacency: see
//! [`blob_len_sh`]) are even. Every other part of a tracer tile is the same on every
//! tracer, so equal shard bytes are equal tile bytes.
//!
//! A shard's halo depends on where the planes fall, so the bytes a cell brings its tile
//! are only known after a cut. Each round cuts with weighted medians (each node's
//! halves weigh the same), counts the shards, and hands each cell the bytes its shard
//! came to per unit of weight predicted for it: cells in shards that came out heavy
//! weigh more in the next cut, so their shards get fewer of them. The halo does not
//! spread evenly over a shard's cells, so the rounds do not settle on one cut; the
//! lightest cut seen is kept. (On the 4.2 M-cell garden scene the heaviest shard
//! falls from 1.9 to about 1.25 times the mean within eight rounds; sharper
//! attributions — a halo record's bytes to the cells that border it — or weights
//! smoothed over neighbours did no better.)

use rayon::prelude::*;

use crate::kdtree::{self, WeightedSite};
use crate::{Method, Partition, PartitionError, SceneRef, ShardCounts, blob_len_sh};

/// A cut is balanced once its heaviest shard is within this fraction of the mean.
pub const BALANCE_TOLERANCE: f64 = 0.05;
/// Most re-cuts [`balance_bytes`] tries.
pub const MAX_ROUNDS: u32 = 8;

/// Bytes a shard's blob would take, and what goes into them, for every shard of
/// `part`, without building or packing any shard: the local cells, the distinct cells
/// outside the shard that they border (the halo), the adjacency entries, and the
/// distinct shards owning the halo. The counts are those [`crate::pack_all`] reports.
pub fn count_shards(scene: &SceneRef, part: &Partition) -> Vec<ShardCounts> {
    let (n, shards) = (scene.len(), part.shards());
    // Each worker marks the cells and shards it has met with the shard it is counting,
    // so every shard costs a pass over its adjacency and nothing more; a worker's marks
    // take 4 bytes per cell, so there are few workers.
    let workers = rayon::current_num_threads().clamp(1, 8).min(shards);
    let mut counted: Vec<(usize, ShardCounts)> = (0..workers)
        .into_par_iter()
        .flat_map_iter(|w| {
            let mut cell_seen = vec![u32::MAX; n];
            let mut shard_seen = vec![u32::MAX; shards];
            (w..shards)
                .step_by(workers)
                .map(|s| {
                    let mut c = ShardCounts { local: part.cells(s).len() as u32, ..ShardCounts::default() };
                    for &g in part.cells(s) {
                        let neighbours = scene.neighbours(g as usize);
                        c.adjacency += neighbours.len() as u32;
                        for &h in neighbours {
                            let owner = part.owner(h);
                            if owner != s && cell_seen[h as usize] != s as u32 {
                                cell_seen[h as usize] = s as u32;
                                c.halo += 1;
                                if shard_seen[owner] != s as u32 {
                                    shard_seen[owner] = s as u32;
                                    c.neighbour_shards += 1;
                                }
                            }
                        }
                    }
                    c.bytes = blob_len_sh(c.local as usize, c.halo as usize, c.adjacency as usize, &scene.sh) as u32;
                    (s, c)
                })
                .collect::<Vec<_>>()
        })
        .collect();
    counted.sort_unstable_by_key(|&(s, _)| s);
    counted.into_iter().map(|(_, c)| c).collect()
}

/// A cut and its shards' counts.
#[derive(Clone, Debug)]
pub struct Counted {
    pub partition: Partition,
    pub counts: Vec<ShardCounts>,
}

impl Counted {
    /// Bytes of the heaviest shard blob.
    pub fn max_bytes(&self) -> u64 {
        self.counts.iter().map(|c| c.bytes as u64).max().unwrap_or(0)
    }

    fn mean_bytes(&self) -> f64 {
        self.counts.iter().map(|c| c.bytes as f64).sum::<f64>() / self.counts.len().max(1) as f64
    }
}

/// What a cell brings its shard whatever the cut: its record and its adjacency. No
/// cell weighs less, so no shard can be handed more cells than its bytes allow.
fn own_bytes(scene: &SceneRef) -> Vec<f32> {
    (0..scene.len())
        .into_par_iter()
        .map(|g| (crate::pack::CELL_BYTES + scene.sh.cell_bytes() + 2 * scene.neighbours(g).len()) as f32)
        .collect()
}

/// Each cell's `w` times its shard's factor (at least its own bytes).
fn reweigh(w: &mut [f32], own: &[f32], part: &Partition, factor: &[f32]) {
    w.par_iter_mut().enumerate().for_each(|(g, x)| *x = (*x * factor[part.owner(g as u32)]).max(own[g]));
}

/// The cut of `scene` by a k-d tree of `depth` levels whose nodes halve the weight
/// `weigh` gives each cell, its leaves split as `shards_per_leaf` says, with ids
/// `ids` of `id_bits`, and its shards counted; `None` where a leaf holds more cells
/// than a shard can index. Each shard's cells in cut order (enough to count them).
fn cut_by_weight(
    scene: &SceneRef,
    (depth, id_bits, ids): (u32, u32, &[u16]),
    shards_per_leaf: &[u8],
    weigh: &(dyn Fn(usize) -> f32 + Sync),
) -> Option<Counted> {
    let mut sites: Vec<WeightedSite> =
        scene.positions.par_iter().enumerate().map(|(i, &p)| WeightedSite { p, id: i as u32, w: weigh(i) }).collect();
    let sizes = kdtree::split_weighted(&mut sites, depth, shards_per_leaf);
    let order: Vec<u32> = sites.par_iter().map(|s| s.id).collect();
    drop(sites);
    let partition =
        Partition::from_leaves(scene, (depth, id_bits), Method::Kdtree, order, &sizes, ids.to_vec(), false).ok()?;
    let counts = count_shards(scene, &partition);
    Some(Counted { partition, counts })
}

/// Per shard of `cut`, the bytes it came to per unit of the weight `w` predicted.
fn bytes_per_weight(cut: &Counted, w: &[f32]) -> Vec<f32> {
    (0..cut.partition.shards())
        .into_par_iter()
        .map(|s| {
            let predicted: f64 = cut.partition.cells(s).iter().map(|&g| w[g as usize] as f64).sum();
            (cut.counts[s].bytes as f64 / predicted.max(1.0)) as f32
        })
        .collect()
}

/// `cut` with each shard's cells in Morton order, as [`crate::partition`] gives them.
fn in_morton_order(scene: &SceneRef, cut: Counted) -> Result<Counted, PartitionError> {
    let Counted { partition: p, counts } = cut;
    let sizes: Vec<usize> = p.shard_start.windows(2).map(|w| (w[1] - w[0]) as usize).collect();
    let partition = Partition::from_leaves(scene, (p.depth, p.id_bits), p.method, p.order, &sizes, p.ids, true)?;
    Ok(Counted { partition, counts })
}

/// Re-cuts `scene` with the k-d tree of `start`, each of its leaves into
/// `shards_per_leaf[leaf]` shards (1, or 2 for a split leaf), so that the shards'
/// bytes balance, in up to `rounds` rounds (see the module doc), calling `progress`
/// after each. Returns the cut with the lightest heaviest shard, `start` included,
/// with each shard's cells in Morton order as [`crate::partition`] gives them.
pub fn balance_bytes(
    scene: &SceneRef,
    start: Counted,
    shards_per_leaf: &[u8],
    rounds: u32,
    progress: &(dyn Fn(u32) + Sync),
) -> Result<Counted, PartitionError> {
    let depth = start.partition.depth;
    let (ids, id_bits) = Partition::ids_for(depth, shards_per_leaf);
    let own = own_bytes(scene);
    // To begin with, a cell weighs what its shard in `start` came to per cell.
    let mut w = vec![1f32; scene.len()];
    let per_cell: Vec<f32> = start.counts.iter().map(|c| c.bytes as f32 / c.local.max(1) as f32).collect();
    reweigh(&mut w, &own, &start.partition, &per_cell);
    // Until a round has cut the leaves as asked, `start` is only the cut to beat.
    let asked = start.partition.shards_per_leaf() == shards_per_leaf;
    let (mut best, mut recut) = (start, false);
    for round in 0..rounds {
        if (asked || recut) && best.max_bytes() as f64 <= (1.0 + BALANCE_TOLERANCE) * best.mean_bytes() {
            break;
        }
        // A leaf of more cells than a shard can index cannot be packed: keep the best so far.
        let Some(cut) = cut_by_weight(scene, (depth, id_bits, &ids), shards_per_leaf, &|g| w[g]) else {
            break;
        };
        progress(round + 1);
        // Each cell takes its shard's bytes per unit of the weight the cut predicted.
        let factor = bytes_per_weight(&cut, &w);
        reweigh(&mut w, &own, &cut.partition, &factor);
        if cut.max_bytes() < best.max_bytes() {
            (best, recut) = (cut, true);
        }
    }
    if !recut {
        return Ok(best);
    }
    in_morton_order(scene, best)
}

/// Re-cuts `scene` with the k-d tree of `start` (its leaves split as they are) so
/// that shards balance a per-cell `load` (the cell steps of a camera's sampled
/// rays) as far as their bytes allow. A cell weighs the larger of its bytes and `k`
/// times its load, with `k` such that the weights come to `fill` bytes a shard:
/// where nobody looks a shard fills to about `fill`, and where the rays gather it
/// takes as few cells as their steps allow. A cell's bytes are first its shard's
/// bytes per cell in `start` (what balance_bytes settled on); a shard's halo
/// depends on the cut, so, as balance_bytes does, each of up to `rounds` rounds
/// hands every cell the bytes its shard came to per byte predicted, until no shard
/// is over `budget`. Returns the first cut within `budget`, else the one with the
/// lightest heaviest shard.
pub fn balance_load(
    scene: &SceneRef,
    start: &Counted,
    load: &[f32],
    (fill, budget): (f64, u64),
    rounds: u32,
) -> Result<Counted, PartitionError> {
    let part = &start.partition;
    let shards_per_leaf = part.shards_per_leaf();
    let (ids, id_bits) = Partition::ids_for(part.depth, &shards_per_leaf);
    let own = own_bytes(scene);
    let per_cell: Vec<f32> = start.counts.iter().map(|c| c.bytes as f32 / c.local.max(1) as f32).collect();
    let mut bytes: Vec<f32> = (0..scene.len() as u32).into_par_iter().map(|g| per_cell[part.owner(g)]).collect();
    let want = fill * part.shards() as f64;
    let mut best: Option<Counted> = None;
    for _ in 0..rounds.max(1) {
        let weigh = |g: usize, k: f32| bytes[g].max(k * load.get(g).copied().unwrap_or(0.0));
        // Summed in fixed chunks, in order, so that k, and the cut, do not depend on
        // how the threads split the work.
        const CHUNK: usize = 1 << 15;
        let n = bytes.len();
        let total = |k: f32| -> f64 {
            let parts: Vec<f64> = (0..n.div_ceil(CHUNK))
                .into_par_iter()
                .map(|c| (c * CHUNK..n.min((c + 1) * CHUNK)).map(|g| weigh(g, k) as f64).sum::<f64>())
                .collect();
            parts.iter().sum()
        };
        // The sum grows with k: bisect between 0 and a k that reaches `want`.
        let (mut lo, mut hi) = (0f32, 1f32);
        while total(hi) < want && hi < 1e30 {
            hi *= 2.0;
        }
        for _ in 0..40 {
            let mid = 0.5 * (lo + hi);
            if total(mid) < want { lo = mid } else { hi = mid }
        }
        let Some(cut) = cut_by_weight(scene, (part.depth, id_bits, &ids), &shards_per_leaf, &|g| weigh(g, lo)) else {
            break;
        };
        let fits = cut.max_bytes() <= budget;
        let factor = bytes_per_weight(&cut, &bytes);
        reweigh(&mut bytes, &own, &cut.partition, &factor);
        if best.as_ref().is_none_or(|b| cut.max_bytes() < b.max_bytes()) {
            best = Some(cut);
        }
        if fits {
            break;
        }
    }
    match best {
        Some(cut) => in_morton_order(scene, cut),
        None => Ok(start.clone()),
    }
}
