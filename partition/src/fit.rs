//! Choosing the cut: the paper's equal cell counts where every shard fits its tile,
//! shard bytes balanced where they do not (see [`crate::balance`]), and where even
//! that does not fit, the heaviest leaves split in two onto tiles the router tree
//! leaves free.

use serde::Serialize;

use crate::{
    Counted, MAX_ROUNDS, MAX_SHARD_ENTRIES, Method, PartitionError, SceneRef, ShardCounts, balance_bytes, count_shards,
};

/// What a k-d cut balances between the two halves at every node.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Balance {
    /// Local cell counts, as the paper does (§4.2).
    #[default]
    Cells,
    /// Shard bytes: what the tiles hold.
    Bytes,
}

/// A cut, its shards' counts, and what it balanced.
#[derive(Clone, Debug)]
pub struct Cut {
    pub cut: Counted,
    pub balance: Balance,
}

/// Whether a shard of `c` fits a tile with `shard_budget` bytes for its blob.
pub fn shard_fits(c: &ShardCounts, shard_budget: u64) -> bool {
    c.bytes as u64 <= shard_budget && (c.local + c.halo) as usize <= MAX_SHARD_ENTRIES
}

/// Cuts `scene` into `shards` with a k-d tree balancing `balance`, or, with `None`,
/// cell counts if every shard then fits `shard_budget` bytes (or none could) and
/// shard bytes if not: scenes that fit are cut as the paper cuts them, and as they
/// always were here. If shard bytes balanced still do not fit, up to `max_splits`
/// leaves are split in two, the heaviest first: as many as the scene's bytes call
/// for at the balance reached, then more until the shards fit or none are left.
/// `progress` hears what is being done.
pub fn cut(
    scene: &SceneRef,
    shards: u64,
    balance: Option<Balance>,
    shard_budget: u64,
    max_splits: usize,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Cut, PartitionError> {
    progress("cutting");
    let partition = crate::partition(scene, shards, Method::Kdtree)?;
    progress("counting shards");
    let counts = count_shards(scene, &partition);
    let counted = Counted { partition, counts };
    // Where the tile has no room for any shard, no cut helps.
    let fits = shard_budget == 0 || counted.counts.iter().all(|c| shard_fits(c, shard_budget));
    if balance == Some(Balance::Cells) || (balance.is_none() && fits) {
        return Ok(Cut { cut: counted, balance: Balance::Cells });
    }
    let leaves = counted.partition.shards();
    let round = |r: u32| progress(&format!("balancing shard bytes, round {r}"));
    let mut best = balance_bytes(scene, counted, &vec![1; leaves], MAX_ROUNDS, &round)?;
    let fit = |c: &Counted| c.counts.iter().all(|c| shard_fits(c, shard_budget));
    if balance.is_some() || fit(&best) || max_splits == 0 || shard_budget == 0 {
        return Ok(Cut { cut: best, balance: Balance::Bytes });
    }
    let total: f64 = best.counts.iter().map(|c| c.bytes as f64).sum();
    let ratio = best.max_bytes() as f64 * leaves as f64 / total;
    let mut splits =
        ((total * ratio / shard_budget as f64).ceil() as usize).saturating_sub(leaves).clamp(1, max_splits);
    loop {
        let per_leaf = heaviest_leaves_split(&best, splits);
        let round = |r: u32| progress(&format!("splitting {splits} leaves onto free tiles, round {r}"));
        let cut = balance_bytes(scene, best.clone(), &per_leaf, MAX_ROUNDS, &round)?;
        if cut.max_bytes() < best.max_bytes() {
            best = cut;
        }
        if fit(&best) || splits == max_splits {
            return Ok(Cut { cut: best, balance: Balance::Bytes });
        }
        splits = (splits + splits / 2 + 1).min(max_splits);
    }
}

/// Shards per leaf of `cut`'s k-d tree with its `splits` heaviest leaves (by the bytes
/// of their shards in `cut`) split in two.
fn heaviest_leaves_split(cut: &Counted, splits: usize) -> Vec<u8> {
    let part = &cut.partition;
    let extra = part.id_bits - part.depth;
    let mut bytes = vec![0u64; 1 << part.depth];
    for (id, c) in part.ids.iter().zip(&cut.counts) {
        bytes[(id >> extra) as usize] += c.bytes as u64;
    }
    let mut order: Vec<usize> = (0..bytes.len()).collect();
    order.sort_by_key(|&l| (std::cmp::Reverse(bytes[l]), l));
    let mut per_leaf = vec![1u8; bytes.len()];
    for &l in order.iter().take(splits) {
        per_leaf[l] = 2;
    }
    per_leaf
}
