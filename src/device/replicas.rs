//! Replicas of hot shards on the tiles the tree leaves free.
//!
//! A frame costs, per iteration, its busiest tile; and the camera decides which
//! tiles those are: the shards most of the view's rays cross, near the camera,
//! march most of the frame while most tracers march nothing. The host's sample of
//! the camera's rays ([`super::copies::busiest_view`], [`super::copies::tile_steps`])
//! says how many rays each tracer takes in and how many cell steps it marches, so
//! the plan gives the hottest shards more tiles: a shard with
//! `r` tiles (a power of two) has the tracer and `r - 1` replicas holding the same
//! shard, its copies and its result store, either on lanes of the tracer's own
//! router after its children ([`super::tree::Tree::replicate_on_lanes`]: a tile
//! each) or under a router of `r` children in the tracer's place
//! ([`super::tree::Tree::replicate`]: a tile more, and a router hop more a ray).
//! No other router changes: they route by the same shard id. The router sends a ray
//! to the tile its pixel picks (layout.h foam_params.replicas), so each takes an
//! equal share of the shard's rays, and a ray marches there exactly as it would
//! on the tracer: the image does not depend on the replicas. The pick is the
//! pixel's class (ray.h foam_replica_class: one hash of the pixel for every
//! shard), and the side links between hot shards' tiles follow the classes
//! ([`with_replica_sides`]), so a tile takes its class's rays from its neighbours
//! as from its router.

use std::collections::HashMap;

use super::tree::Tree;

/// How many tiles (1, or a power of two up to `most`) each of `load.len()` shards
/// gets, as `(shard, tiles, on_lanes)` for those with more than one, in shard
/// order: while some tile's share of the load (its shard's load over its tiles) is
/// over `ratio` times the mean shard's, the busiest shard's tiles double, as long as
/// the `free` tiles left pay for it. With `lanes` (each shard's router, and the
/// child lanes left, indexed by router) a shard's replicas go on lanes of its router
/// ([`Tree::replicate_on_lanes`]: doubling from `t` tiles takes `t` tiles and `t`
/// lanes) while the router has them, else under a router of their own
/// ([`Tree::replicate`]: doubling from 1 takes 2 tiles, the router and a replica, and
/// from `t` then `t`); a shard on lanes whose router has no more stays as it is, and
/// the next busiest goes on. Without `lanes`, every shard's replicas have a router of
/// their own. Ties go to the lower shard. Deterministic; `ratio` 0 or nothing free:
/// none. A multi-IPU plan constrains this per IPU by calling it with each IPU's
/// shards and free tiles.
pub fn choose(
    load: &[f64],
    free: usize,
    ratio: u32,
    most: u32,
    lanes: Option<(&[usize], &[u32])>,
) -> Vec<(usize, u32, bool)> {
    if ratio == 0 || load.is_empty() || most < 2 {
        return Vec::new();
    }
    let mean = load.iter().sum::<f64>() / load.len() as f64;
    let target = ratio as f64 * mean;
    let mut tiles = vec![1u32; load.len()];
    let mut on_lanes = vec![false; load.len()];
    let mut left = free;
    let mut room: Vec<u32> = lanes.map_or(Vec::new(), |(_, r)| r.to_vec());
    // Shards on lanes whose router has none left for their next doubling.
    let mut capped = vec![false; load.len()];
    loop {
        let share = |s: usize| load[s] / tiles[s] as f64;
        let Some(s) =
            (0..load.len()).filter(|&s| !capped[s]).max_by(|&a, &b| share(a).total_cmp(&share(b)).then(b.cmp(&a)))
        else {
            break;
        };
        let lanes_left = lanes.is_some_and(|(group, _)| room[group[s]] >= tiles[s]);
        let lane = (tiles[s] == 1 || on_lanes[s]) && lanes_left;
        // Doubling another shard cannot lower the busiest tile's share.
        let cost = if tiles[s] == 1 && !lane { 2 } else { tiles[s] as usize };
        if share(s) <= target || tiles[s] * 2 > most || cost > left {
            break;
        }
        if on_lanes[s] && !lane {
            capped[s] = true;
            continue;
        }
        if lane {
            let (group, _) = lanes.expect("lanes left");
            room[group[s]] -= tiles[s];
            on_lanes[s] = true;
        }
        tiles[s] *= 2;
        left -= cost;
    }
    (0..load.len()).filter(|&s| tiles[s] > 1).map(|s| (s, tiles[s], on_lanes[s])).collect()
}

/// Side links of every tracer node of `tree` (by node), from the shards' `sides`
/// (each tracer's side-link neighbours by shard, symmetric, in lane order) and the
/// sampled rays that cross from tracer to tracer (`flows`, `(from, to, rays)` as
/// [`super::copies::Traffic`] has them; none given: 1 each way), at most `most`
/// links a node where no shard has more than `most` side neighbours (the plan's
/// have at most `side_links`): every pair keeps one link on each of the smaller
/// shard's tiles, and only the room left spreads them.
///
/// Two side-linked shards of `m` and `n` tiles (`m <= n`, powers of two; a shard
/// without replicas has one) get `m·k` links: `k` on each of the smaller shard's
/// tiles, to as many tiles of the larger one, one each. `k` is `n / m` where every
/// small tile has room for it beside one link for each of its shard's pairs still
/// to come, else the largest power of two below that has. The links follow the
/// pixels' classes (ray.h foam_replica_class: a shard's tile i marches the rays
/// whose class is i, and a class of `m` splits into `n / m` classes of `n`), so
/// small tile t links to tiles of the classes t·n/m .. (t+1)·n/m of the large
/// shard: all of them where it has room, else the run of `k` whose busiest tile
/// the links so far bring the fewest rays, then whose sum is least. Pairs go in
/// falling order of crossings (both ways). A link brings its far end its share of
/// the rays that way: the small shard's rays into the large one split over all
/// `m·k` links, the large shard's rays into the small one only from its `m·k`
/// linked tiles, `1/n` of them each (the rest take the tree). A tracer sends a ray
/// bound for a replicated shard over its link to the ray's class's tile, the one
/// a router would send it to, so each tile of a hot shard marches the same share
/// of its rays whichever way they came. Picked by a hash keyed by both shards
/// instead, with the links in runs placed by the sampled flows, the rays that
/// entered one tile of a cluster of hot shards stayed on the tiles its links led
/// to: on the bicycle scene at SH degree 2 tiles of one shard marched up to 5.7
/// times what their twins did. A ray whose class's tile this tile has no link to
/// takes the tree where the shard's tiles hang on its router's lanes, else the link
/// its class picks modulo the links (layout.h side_class). Symmetric, each node's links in its
/// shard's lane order (a shard's several links in class order).
pub fn with_replica_sides(sides: &[Vec<u32>], tree: &Tree, flows: &[(u32, u32, f64)], most: u32) -> Vec<Vec<u32>> {
    let shards = sides.len().min(tree.tracers());
    let tiles = tree.shard_tiles();
    let flow: HashMap<(usize, usize), f64> = flows.iter().map(|&(a, b, w)| ((a as usize, b as usize), w)).collect();
    let towards = |a: usize, b: usize| if flow.is_empty() { 1.0 } else { flow.get(&(a, b)).copied().unwrap_or(0.0) };
    let mut pairs: Vec<(usize, usize, f64)> = (0..shards)
        .flat_map(|a| sides[a].iter().filter(move |&&b| a < b as usize).map(move |&b| (a, b as usize)))
        .map(|(a, b)| (a, b, towards(a, b) + towards(b, a)))
        .collect();
    pairs.sort_by(|x, y| y.2.total_cmp(&x.2).then((x.0, x.1).cmp(&(y.0, y.1))));
    // Rays the links so far bring each node.
    let mut load = vec![0.0f64; tree.nodes.len()];
    // Links each node has, and each shard's pairs still to place (one link each at
    // least, on any of its tiles).
    let mut used = vec![0usize; tree.nodes.len()];
    let mut to_come: Vec<usize> = vec![0; shards];
    for &(a, b, _) in &pairs {
        to_come[a] += 1;
        to_come[b] += 1;
    }
    // partner[node] holds (neighbour shard, neighbour node).
    let mut partner: Vec<Vec<(usize, usize)>> = vec![Vec::new(); tree.nodes.len()];
    for (a, b, _) in pairs {
        to_come[a] -= 1;
        to_come[b] -= 1;
        let (small, big) = if tiles[a].len() <= tiles[b].len() { (a, b) } else { (b, a) };
        let (m, n) = (tiles[small].len(), tiles[big].len());
        let room = |k: usize| tiles[small].iter().all(|&t| used[t] + to_come[small] + k <= most as usize);
        let mut k = n / m;
        while k > 1 && !room(k) {
            k /= 2;
        }
        // Small tile t marches the rays of class t (of m; ray.h foam_replica_class),
        // which are classes t·K .. t·K + K of the big shard's n: it links to k of
        // those tiles, in class order, the run whose busiest its links so far
        // bring the fewest rays, then whose sum is least, then the first.
        let big_per_small = n / m;
        let (into_big, into_small) = (towards(small, big) / (m * k) as f64, towards(big, small) / n as f64);
        for t in 0..m {
            let block = &tiles[big][t * big_per_small..(t + 1) * big_per_small];
            let score = |o: usize| {
                let run = block[o..o + k].iter().map(|&q| load[q]);
                (run.clone().fold(0.0, f64::max), run.sum::<f64>())
            };
            let o = (0..big_per_small)
                .step_by(k)
                .min_by(|&x, &y| score(x).partial_cmp(&score(y)).unwrap().then(x.cmp(&y)))
                .unwrap_or(0);
            let p = tiles[small][t];
            for &q in &block[o..o + k] {
                load[p] += into_small;
                load[q] += into_big;
                used[p] += 1;
                used[q] += 1;
                partner[p].push((big, q));
                partner[q].push((small, p));
            }
        }
    }
    let mut out = sides.to_vec();
    out.resize(tree.nodes.len(), Vec::new());
    for (s, nodes) in tiles.iter().enumerate() {
        for &node in nodes {
            let lane = |shard: usize| sides[s].iter().position(|&b| b as usize == shard).unwrap_or(usize::MAX);
            // Stable: a shard's several links stay in class order.
            let mut links = std::mem::take(&mut partner[node]);
            links.sort_by_key(|&(shard, _)| lane(shard));
            out[node] = links.into_iter().map(|(_, n)| n as u32).collect();
        }
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
        assert_eq!(choose(&load, 100, 2, 16, None), vec![(0, 4, false), (3, 2, false)]);
        assert_eq!(choose(&load, 6, 2, 16, None), vec![(0, 4, false), (3, 2, false)]);
        // Short of tiles, the busiest shard takes them first.
        assert_eq!(choose(&load, 5, 2, 16, None), vec![(0, 4, false)]);
        assert_eq!(choose(&load, 3, 2, 16, None), vec![(0, 2, false)]);
        // At most 10 a tile: 8 tiles for shard 0, 4 for shard 3.
        assert_eq!(choose(&load, 100, 1, 16, None), vec![(0, 8, false), (3, 4, false)]);
        // Doubling stops at the busiest shard: capped at 4 tiles (17.5 each), shard 0
        // is the busiest again once shard 3 has 2, and more for shard 3 would not
        // lower the frame's peak.
        assert_eq!(choose(&load, 100, 1, 4, None), vec![(0, 4, false), (3, 2, false)]);
        // A ratio of 0 or no tiles: none. An even load needs none.
        assert!(choose(&load, 100, 0, 16, None).is_empty() && choose(&load, 1, 2, 16, None).is_empty());
        assert!(choose(&[5.0; 4], 100, 1, 16, None).is_empty());
    }

    #[test]
    fn replicas_on_lanes_cost_a_tile_each_and_their_routers_lanes() {
        let load = [70.0, 1.0, 1.0, 25.0, 1.0, 1.0, 0.0, 1.0, 0.0, 0.0];
        // Shards 0-4 under router 0, 5-9 under router 1, 16 lanes left each.
        let group = [0, 0, 0, 0, 0, 1, 1, 1, 1, 1];
        let lanes = Some((&group[..], &[16u32, 16][..]));
        // 3 + 1 tiles where a router of their own took 6.
        assert_eq!(choose(&load, 4, 2, 16, lanes), vec![(0, 4, true), (3, 2, true)]);
        assert_eq!(choose(&load, 3, 2, 16, lanes), vec![(0, 4, true)]);
        // At most 10 a tile: 8 for shard 0 and 4 for shard 3 take 10 lanes.
        assert_eq!(choose(&load, 100, 1, 16, lanes), vec![(0, 8, true), (3, 4, true)]);
        // With 8 lanes left, shard 0's 7 and shard 3's first take them all; with 2,
        // shard 0 stops at 2 tiles and shard 3, the next busiest, still takes one.
        assert_eq!(choose(&load, 100, 1, 16, Some((&group[..], &[8u32, 16][..]))), vec![(0, 8, true), (3, 2, true)]);
        assert_eq!(choose(&load, 100, 1, 16, Some((&group[..], &[2u32, 16][..]))), vec![(0, 2, true), (3, 2, true)]);
        // A router with no lanes left: its shards' replicas get a router of their own.
        assert_eq!(choose(&load, 100, 1, 16, Some((&group[..], &[0u32, 16][..]))), vec![(0, 8, false), (3, 4, false)]);
        assert_eq!(choose(&load, 100, 1, 16, Some((&group[..], &[1u32, 16][..]))), vec![(0, 2, true), (3, 4, false)]);
    }

    /// The sampled rays between [`four_shards`]' side-linked pairs, each way: 100,
    /// 60, 40 and 10 a pair, most of 1-2's from shard 1 into shard 2.
    const FLOWS: [(u32, u32, f64); 8] =
        [(1, 2, 60.0), (2, 1, 40.0), (1, 3, 30.0), (3, 1, 30.0), (0, 1, 20.0), (1, 0, 20.0), (0, 2, 5.0), (2, 0, 5.0)];

    /// Shards 0 to 3 of a tree of 16, shard 1 on four tiles and shard 2 on two,
    /// side-linked 0-1, 0-2, 1-2 and 1-3.
    fn four_shards() -> (Tree, Vec<Vec<u32>>) {
        let mut tree = Tree::new(4, 1472, &[4], 1).unwrap();
        tree.replicate(1, 4, 1472).unwrap();
        tree.replicate(2, 2, 1472).unwrap();
        let mut sides = vec![vec![1, 2], vec![0, 2, 3], vec![0, 1], vec![1]];
        sides.resize(16, Vec::new());
        (tree, sides)
    }

    /// The node of shard `s`'s tile `k` (0: its tracer).
    fn tile(tree: &Tree, s: usize, k: u32) -> usize {
        if k == 0 { s } else { tree.replicas().iter().find(|&&(n, r)| r == s && tree.nodes[n].lane == k).unwrap().0 }
    }

    fn nodes(v: &[usize]) -> Vec<u32> {
        v.iter().map(|&n| n as u32).collect()
    }

    #[test]
    fn side_links_follow_the_classes_busiest_pairs_first() {
        let (tree, sides) = four_shards();
        let of = |s: usize, k: u32| tile(&tree, s, k);
        let symmetric = |all: &[Vec<u32>]| {
            for (a, lanes) in all.iter().enumerate() {
                assert!(lanes.iter().all(|&b| all[b as usize].contains(&(a as u32))), "{a}: {lanes:?}");
            }
        };
        // Without replicas the links are the shards' own.
        let plain = Tree::new(4, 1472, &[4], 1).unwrap();
        assert_eq!(&with_replica_sides(&sides, &plain, &[], 16)[..4], &sides[..4]);
        // `most` 1 leaves no tile room for a second link to one shard (a pair's one
        // link each is always placed): one link on each of the smaller shard's
        // tiles, to a tile of its class's half of the larger shard. Pairs by
        // falling crossings: 1-2 (100: shard 2's tile 0 to shard 1's tile 0 of
        // classes 0-1, its tile 1 to tile 2 of classes 2-3, bringing them 20 rays
        // each), 1-3 (60: shard 1's tile 1, which no link brings rays yet), 0-1
        // (40: its tile 3, the last), 0-2 (10: shard 2's tiles are brought 15
        // each, so its first).
        let all = with_replica_sides(&sides, &tree, &FLOWS, 1);
        symmetric(&all);
        assert_eq!(all[of(1, 0)], nodes(&[of(2, 0)]));
        assert_eq!(all[of(1, 1)], nodes(&[of(3, 0)]));
        assert_eq!(all[of(1, 2)], nodes(&[of(2, 1)]));
        assert_eq!(all[of(1, 3)], nodes(&[of(0, 0)]));
        // Each node's links in its shard's lane order: shard 0's are 1 then 2.
        assert_eq!(all[0], nodes(&[of(1, 3), of(2, 0)]));
        assert_eq!(all[of(2, 0)], nodes(&[0, of(1, 0)]));
        assert_eq!(all[of(2, 1)], nodes(&[of(1, 2)]));
        assert_eq!(all[3], nodes(&[of(1, 1)]));
    }

    #[test]
    fn runs_go_where_the_links_bring_fewest_rays_not_where_most_leave() {
        // Shard 1 on four tiles, single-tile neighbours 0, 2 and 3 with room for
        // two links each: runs of two. 0-1 (100 rays) goes first, on tiles 0 and 1,
        // but 90 of its rays leave shard 1, so those tiles are brought 5 each; 1-2
        // (50 into shard 1) takes tiles 2 and 3; 1-3 (35 into shard 1) then belongs
        // on tiles 0 and 1. Charging each link both ways put it on 2 and 3 (both
        // runs at 50 by that count), which took 42.5 rays each and 0 and 1 5.
        let mut tree = Tree::new(4, 1472, &[4], 1).unwrap();
        tree.replicate(1, 4, 1472).unwrap();
        let mut sides = vec![vec![1], vec![0, 2, 3], vec![1], vec![1]];
        sides.resize(16, Vec::new());
        let flows = [(1, 0, 90.0), (0, 1, 10.0), (1, 2, 10.0), (2, 1, 50.0), (1, 3, 5.0), (3, 1, 35.0)];
        let all = with_replica_sides(&sides, &tree, &flows, 2);
        let of = |k: u32| tile(&tree, 1, k);
        assert_eq!(all[0], nodes(&[of(0), of(1)]));
        assert_eq!(all[2], nodes(&[of(2), of(3)]));
        assert_eq!(all[3], nodes(&[of(0), of(1)]));
    }

    #[test]
    fn a_neighbour_links_to_every_tile_of_a_hot_shard_where_it_has_room() {
        let (tree, sides) = four_shards();
        let of = |s: usize, k: u32| tile(&tree, s, k);
        let all = with_replica_sides(&sides, &tree, &FLOWS, 16);
        for (a, lanes) in all.iter().enumerate() {
            assert!(lanes.len() <= 16);
            for &b in lanes {
                assert_eq!(
                    all[b as usize].iter().filter(|&&x| x == a as u32).count(),
                    1,
                    "one link a pair of nodes, both ways"
                );
            }
        }
        // 1-2: shard 2's two tiles take two links each, to all four of shard 1's;
        // 1-3 and 0-1: the lone tracers link to every tile of shard 1 (they carry
        // the same, so each run starts at the first); 0-2: both of shard 2's tiles.
        assert_eq!(all[of(2, 0)], nodes(&[0, of(1, 0), of(1, 1)]));
        assert_eq!(all[of(2, 1)], nodes(&[0, of(1, 2), of(1, 3)]));
        assert_eq!(all[3], nodes(&[of(1, 0), of(1, 1), of(1, 2), of(1, 3)]));
        assert_eq!(all[0], nodes(&[of(1, 0), of(1, 1), of(1, 2), of(1, 3), of(2, 0), of(2, 1)]));
        assert_eq!(all[of(1, 0)], nodes(&[0, of(2, 0), 3]));
        // At most three links a node: shard 3 takes two of shard 1's tiles (four do
        // not fit), shard 0 two more (one left for its pair to come, 0-2), which go to
        // the two its other links carry least; then 0-2 has room for one.
        let three = with_replica_sides(&sides, &tree, &FLOWS, 3);
        assert_eq!(three[3], nodes(&[of(1, 0), of(1, 1)]));
        assert_eq!(three[0], nodes(&[of(1, 2), of(1, 3), of(2, 0)]));
        assert_eq!(three[of(2, 1)], nodes(&[of(1, 2), of(1, 3)]));
        assert!(three.iter().all(|l| l.len() <= 3));
    }
}
