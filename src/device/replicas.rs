//! Replicas of hot shards on the tiles the tree leaves free.
//!
//! A frame costs, per iteration, its busiest tile; and the camera decides which
//! tiles those are: the shards most of the view's rays cross, near the camera,
//! march most of the frame while most tracers march nothing. The host's sample of
//! the camera's rays ([`super::copies::busiest_view`]) says how many rays each
//! tracer takes in, so the plan gives the hottest shards more tiles: a shard with
//! `r` tiles (a power of two) has a router of `r` children in its tracer's place,
//! the tracer and `r - 1` replicas holding the same shard, its copies and its
//! result store ([`super::tree::Tree::replicate`]). No other router changes: they
//! route by the same shard id. Below the replicas' router a ray goes to the
//! replica its pixel picks (layout.h foam_params.replicas), so each takes an
//! equal share of the shard's rays, and a ray marches there exactly as it would
//! on the tracer: the image does not depend on the replicas.

use std::collections::HashMap;

use super::tree::Tree;

/// How many tiles (1, or a power of two up to `most`) each of `load.len()` shards
/// gets, as `(shard, tiles)` for those with more than one, in shard order: while
/// some tile's share of the load (its shard's load over its tiles) is over
/// `ratio` times the mean shard's, the busiest shard's tiles double, as long as
/// the `free` tiles left pay for it (doubling from 1 takes 2: the router and a
/// replica). Ties go to the lower shard. Deterministic; `ratio` 0 or nothing free:
/// none. A multi-IPU plan constrains this per IPU by calling it with each IPU's
/// shards and free tiles.
pub fn choose(load: &[f64], free: usize, ratio: u32, most: u32) -> Vec<(usize, u32)> {
    if ratio == 0 || load.is_empty() || most < 2 {
        return Vec::new();
    }
    let mean = load.iter().sum::<f64>() / load.len() as f64;
    let target = ratio as f64 * mean;
    let mut tiles = vec![1u32; load.len()];
    let mut left = free;
    loop {
        let share = |s: usize| load[s] / tiles[s] as f64;
        let Some(s) = (0..load.len()).max_by(|&a, &b| share(a).total_cmp(&share(b)).then(b.cmp(&a))) else { break };
        // Doubling another shard cannot lower the busiest tile's share.
        let cost = if tiles[s] == 1 { 2 } else { tiles[s] as usize };
        if share(s) <= target || tiles[s] * 2 > most || cost > left {
            break;
        }
        tiles[s] *= 2;
        left -= cost;
    }
    tiles.iter().enumerate().filter(|&(_, &t)| t > 1).map(|(s, &t)| (s, t)).collect()
}

/// Side links of every tracer node of `tree` (by node), from the shards' `sides`
/// (each tracer's side-link neighbours by shard, symmetric, in lane order): a
/// tracer keeps its own, and replica k of a shard links to replica k of each of
/// its side neighbours that has one, so that a ray between two hot shards skips
/// both replicas' routers as it skipped the routers between their tracers. Any
/// replica may march a ray (they hold the same shard), so the link need not lead
/// to the replica its pixel picks. Symmetric, in the shards' lane order.
pub fn with_replica_sides(sides: &[Vec<u32>], tree: &Tree) -> Vec<Vec<u32>> {
    let replica: HashMap<(usize, u32), usize> = tree.replicas().iter().map(|&(n, s)| ((s, tree.nodes[n].lane), n)).collect();
    let mut out = sides.to_vec();
    out.resize(tree.nodes.len(), Vec::new());
    for &(n, a) in tree.replicas() {
        let k = tree.nodes[n].lane;
        out[n] = sides[a].iter().filter_map(|&b| replica.get(&(b as usize, k)).map(|&m| m as u32)).collect();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_busiest_shards_double_until_every_tile_is_under_the_ratio() {
        // Mean 10, at most 20 a tile: shard 0 (70) takes 4 tiles (17.5 each), shard 3
        // (25) takes 2; the rest stay alone. That is 2 + 2 + 2 free tiles.
        let load = [70.0, 1.0, 1.0, 25.0, 1.0, 1.0, 0.0, 1.0, 0.0, 0.0];
        assert_eq!(choose(&load, 100, 2, 16), vec![(0, 4), (3, 2)]);
        assert_eq!(choose(&load, 6, 2, 16), vec![(0, 4), (3, 2)]);
        // Short of tiles, the busiest shard takes them first.
        assert_eq!(choose(&load, 5, 2, 16), vec![(0, 4)]);
        assert_eq!(choose(&load, 3, 2, 16), vec![(0, 2)]);
        // At most 10 a tile: 8 tiles for shard 0, 4 for shard 3.
        assert_eq!(choose(&load, 100, 1, 16), vec![(0, 8), (3, 4)]);
        // Doubling stops at the busiest shard: capped at 4 tiles (17.5 each), shard 0
        // is the busiest again once shard 3 has 2, and more for shard 3 would not
        // lower the frame's peak.
        assert_eq!(choose(&load, 100, 1, 4), vec![(0, 4), (3, 2)]);
        // A ratio of 0 or no tiles: none. An even load needs none.
        assert!(choose(&load, 100, 0, 16).is_empty() && choose(&load, 1, 2, 16).is_empty());
        assert!(choose(&[5.0; 4], 100, 1, 16).is_empty());
    }

    #[test]
    fn replicas_link_to_the_same_replica_of_their_side_neighbours() {
        let mut tree = Tree::new(4, 1472, &[4], 1).unwrap();
        tree.replicate(1, 4, 1472).unwrap();
        tree.replicate(2, 2, 1472).unwrap();
        let mut sides = vec![vec![1, 2], vec![0, 2, 3], vec![0, 1], vec![1]];
        sides.resize(16, Vec::new());
        let all = with_replica_sides(&sides, &tree);
        let of = |s: usize, k: u32| tree.replicas().iter().find(|&&(n, r)| r == s && tree.nodes[n].lane == k).unwrap().0;
        assert_eq!(&all[..16], &sides[..], "tracers keep their own links");
        // Replica 1 of shard 1 meets replica 1 of shard 2; shards 0 and 3 have none.
        assert_eq!(all[of(1, 1)], vec![of(2, 1) as u32]);
        assert_eq!(all[of(2, 1)], vec![of(1, 1) as u32]);
        assert!(all[of(1, 2)].is_empty() && all[of(1, 3)].is_empty());
        // Symmetric, as the edges need.
        for (a, lanes) in all.iter().enumerate() {
            assert!(lanes.iter().all(|&b| all[b as usize].contains(&(a as u32))), "{a}: {lanes:?}");
        }
    }
}
