//! Choosing the cut: the paper's equal cell counts where every shard fits its tile,
//! shard bytes balanced where they do not (see [`crate::balance`]).

use serde::Serialize;

use crate::{Counted, MAX_ROUNDS, MAX_SHARD_ENTRIES, Method, PartitionError, SceneRef, ShardCounts, balance_bytes, count_shards};

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
/// always were here.
/// `progress` hears what is being done.
pub fn cut(
    scene: &SceneRef,
    shards: u64,
    balance: Option<Balance>,
    shard_budget: u64,
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
    let round = |r: u32| progress(&format!("balancing shard bytes, round {r}"));
    let cut = balance_bytes(scene, counted, MAX_ROUNDS, &round)?;
    Ok(Cut { cut, balance: Balance::Bytes })
}
