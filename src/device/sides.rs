//! Side links: direct tracer-to-tracer edges beside the router tree.
//!
//! The paper sends every ray that leaves a shard through the routers; a crossing
//! between shards under different level-2 routers then costs five router hops, one
//! compute/exchange iteration each. A long ray crosses dozens of shards, and the
//! frame cannot end before its last ray does, so those hops set a floor under the
//! iteration count. Each tracer therefore gets a few direct links, fixed when the
//! graph is built, to the shards its rays cross into most ([`choose_by_traffic`],
//! from the host's sample of a camera's rays) or, with no camera to plan for, that
//! it shares most faces with ([`choose`]), weighted by the router hops a crossing
//! would otherwise cost. The tree stays: a ray for a shard that is
//! not a side neighbour, or whose link is out of credit, goes through the routers
//! as before, so the deadlock-freedom argument of codelets/vertices/router.cpp is untouched.

use super::tree::Tree;

/// Each shard's side neighbours, in lane order (ascending shard id), at most
/// `per_shard` each, and always symmetric: `b` is in `of[a]` iff `a` is in `of[b]`.
///
/// A pair's weight is the number of Voronoi faces between the two shards (cell
/// adjacencies that cross), times the router hops a crossing costs through the
/// tree; pairs are taken greedily by weight while both ends have lanes left, so
/// the choice is deterministic.
pub fn choose(
    adjacency_end: &[u32],
    adjacency: &[u32],
    owner: &dyn Fn(u32) -> usize,
    tree: &Tree,
    per_shard: u32,
) -> Vec<Vec<u32>> {
    let shards = tree.tracers();
    if per_shard == 0 {
        return vec![Vec::new(); shards];
    }
    let mut faces: Vec<(u32, u32)> = Vec::new();
    let mut start = 0usize;
    for (c, &end) in adjacency_end.iter().enumerate() {
        let a = owner(c as u32) as u32;
        for &g in &adjacency[start..end as usize] {
            let b = owner(g) as u32;
            // Each face once, from its lower-numbered shard (adjacency is symmetric).
            if a < b {
                faces.push((a, b));
            }
        }
        start = end as usize;
    }
    faces.sort_unstable();
    let pairs = faces
        .chunk_by(|x, y| x == y)
        .map(|run| {
            let (a, b) = run[0];
            (run.len() as f64 * router_hops(tree, a as usize, b as usize) as f64, a, b)
        })
        .collect();
    fill(pairs, shards, per_shard)
}

/// Each shard's side neighbours for a known view: as [`choose`], but a pair's
/// weight is the rays expected to cross between the two shards (`crossings`, from
/// [`super::DevicePlan::tracer_traffic`]) times the router hops each crossing would
/// cost. Only pairs some sampled ray crosses between get a link, so tracers the
/// view leaves idle exchange no side buffers at all.
pub fn choose_by_traffic(crossings: &[(u32, u32, f64)], tree: &Tree, per_shard: u32) -> Vec<Vec<u32>> {
    let pairs = crossings
        .iter()
        .filter(|&&(a, b, rays)| a != b && rays > 0.0)
        .map(|&(a, b, rays)| (rays * router_hops(tree, a as usize, b as usize) as f64, a.min(b), a.max(b)))
        .collect();
    fill(pairs, tree.tracers(), per_shard)
}

/// Side neighbours of `shards` tracers from weighted pairs `(weight, a, b)`, `a < b`:
/// heaviest first while both ends have lanes left, each pair once, lanes in
/// ascending shard order.
fn fill(mut pairs: Vec<(f64, u32, u32)>, shards: usize, per_shard: u32) -> Vec<Vec<u32>> {
    let mut of: Vec<Vec<u32>> = vec![Vec::new(); shards];
    // Heaviest first; ties by shard ids, so the choice does not depend on sort internals.
    pairs.sort_by(|x, y| y.0.total_cmp(&x.0).then((x.1, x.2).cmp(&(y.1, y.2))));
    for (_, a, b) in pairs {
        let (la, lb) = (of[a as usize].len(), of[b as usize].len());
        if la < per_shard as usize && lb < per_shard as usize && !of[a as usize].contains(&b) {
            of[a as usize].push(b);
            of[b as usize].push(a);
        }
    }
    for lanes in &mut of {
        lanes.sort_unstable();
    }
    of
}

/// Router tiles a ray visits going from tracer `a` to tracer `b` through the tree.
pub fn router_hops(tree: &Tree, a: usize, b: usize) -> u32 {
    let mut up = Vec::new();
    let mut n = a;
    while let Some(p) = tree.nodes[n].parent {
        up.push(p);
        n = p;
    }
    let mut n = b;
    let mut down = 0;
    while let Some(p) = tree.nodes[n].parent {
        if let Some(i) = up.iter().position(|&x| x == p) {
            return (i + 1 + down) as u32;
        }
        down += 1;
        n = p;
    }
    unreachable!("tracers {a} and {b} share no router")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line of cells, two per shard: shard s touches s - 1 and s + 1 only.
    fn line(shards: usize) -> (Vec<u32>, Vec<u32>) {
        let cells = 2 * shards;
        let (mut end, mut adj) = (Vec::new(), Vec::new());
        for c in 0..cells {
            if c > 0 {
                adj.push(c as u32 - 1);
            }
            if c + 1 < cells {
                adj.push(c as u32 + 1);
            }
            end.push(adj.len() as u32);
        }
        (end, adj)
    }

    #[test]
    fn hops_follow_the_tree() {
        let tree = Tree::new(10, 1472, &[16, 8], 8).unwrap();
        assert_eq!(router_hops(&tree, 0, 15), 1);
        assert_eq!(router_hops(&tree, 0, 16), 3);
        assert_eq!(router_hops(&tree, 0, 127), 3);
        assert_eq!(router_hops(&tree, 127, 128), 5);
    }

    #[test]
    fn links_are_symmetric_bounded_and_prefer_costly_crossings() {
        let tree = Tree::new(10, 1472, &[16, 8], 8).unwrap();
        let (end, adj) = line(1024);
        let owner = |c: u32| c as usize / 2;
        let of = choose(&end, &adj, &owner, &tree, 1);
        for (a, lanes) in of.iter().enumerate() {
            assert!(lanes.len() <= 1);
            for &b in lanes {
                assert!(of[b as usize].contains(&(a as u32)), "{a} -> {b} has no way back");
                assert_eq!((a as i64 - b as i64).abs(), 1);
            }
        }
        // The crossings under the root and under level-2 routers win their lanes.
        assert_eq!(of[127], vec![128]);
        assert_eq!(of[15], vec![16]);
        let two = choose(&end, &adj, &owner, &tree, 2);
        assert_eq!(two[5], vec![4, 6]);
        assert!(choose(&end, &adj, &owner, &tree, 0).iter().all(Vec::is_empty));
    }

    #[test]
    fn traffic_links_follow_the_sampled_crossings_weighted_by_hops() {
        let tree = Tree::new(10, 1472, &[16, 8], 8).unwrap();
        // 0-1 share a level-1 router (1 hop), 15-16 a level-2 router (3), 127-128 only
        // the root (5); 500 and 900 are never crossed between.
        let crossings = [(0, 1, 100.0), (15, 16, 40.0), (127, 128, 30.0), (1, 15, 20.0), (16, 128, 0.0), (0, 0, 9.0)];
        let of = choose_by_traffic(&crossings, &tree, 1);
        // 127-128 (150) beats 15-16 (120) beats 0-1 (100); 1-15 finds 15 taken.
        assert_eq!((of[127].clone(), of[128].clone()), (vec![128], vec![127]));
        assert_eq!((of[15].clone(), of[16].clone()), (vec![16], vec![15]));
        assert_eq!((of[0].clone(), of[1].clone()), (vec![1], vec![0]));
        assert!(of[500].is_empty() && of[900].is_empty());
        let two = choose_by_traffic(&crossings, &tree, 2);
        assert_eq!((two[1].clone(), two[15].clone()), (vec![0, 15], vec![1, 16]));
        // No rays, no lanes; and no lane to itself.
        assert!(two[0].iter().all(|&b| b != 0) && two[16] == vec![15]);
        assert!(choose_by_traffic(&crossings, &tree, 0).iter().all(Vec::is_empty));
    }
}
