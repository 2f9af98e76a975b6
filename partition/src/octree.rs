//! Adaptive octree with a fixed leaf budget, for the paper's appendix-B comparison
//! (B.2): the most populated leaf is split into its non-empty octants for as long as
//! the leaf count stays within the shard count. Octants cut space, not the population,
//! so leaves come out unbalanced — which is the point of the comparison.

use std::collections::BinaryHeap;

use crate::kdtree::{Site, bounds};

/// Finest octree level; a leaf this small is not split further (coincident sites).
const MAX_LEVEL: u8 = 21;

struct Leaf {
    start: usize,
    len: usize,
    center: [f32; 3],
    half: f32,
    level: u8,
}

fn octant(p: [f32; 3], c: [f32; 3]) -> usize {
    (p[0] >= c[0]) as usize | ((p[1] >= c[1]) as usize) << 1 | ((p[2] >= c[2]) as usize) << 2
}

/// Reorders `sites` so every leaf is a contiguous run in depth-first octant order and
/// returns the leaf sizes in that order, padded with empty leaves to `shards`.
pub(crate) fn split(sites: &mut [Site], shards: usize) -> Vec<usize> {
    let (lo, hi) = bounds(sites.iter().map(|s| s.p));
    let half = (0..3).map(|a| hi[a] - lo[a]).fold(0.0f32, f32::max) / 2.0;
    let mut leaves = vec![Leaf {
        start: 0,
        len: sites.len(),
        center: std::array::from_fn(|a| (lo[a] + hi[a]) / 2.0),
        half,
        level: 0,
    }];
    // Max-heap on population; ties go to the earlier leaf, so the result is unique.
    let mut heap = BinaryHeap::from([(sites.len(), std::cmp::Reverse(0usize))]);
    let mut live = 1usize;
    let mut scratch = Vec::new();
    while let Some((len, std::cmp::Reverse(k))) = heap.pop() {
        let leaf = &leaves[k];
        if len < 2 || leaf.level >= MAX_LEVEL || leaf.half <= 0.0 {
            continue;
        }
        let (start, c, h, level) = (leaf.start, leaf.center, leaf.half, leaf.level);
        let run = &mut sites[start..start + len];
        let mut counts = [0usize; 8];
        for s in run.iter() {
            counts[octant(s.p, c)] += 1;
        }
        let nonempty = counts.iter().filter(|&&n| n > 0).count();
        if live - 1 + nonempty > shards {
            break;
        }
        // Stable counting sort by octant keeps the order deterministic.
        let mut offs = [0usize; 8];
        for o in 1..8 {
            offs[o] = offs[o - 1] + counts[o - 1];
        }
        scratch.clear();
        scratch.extend_from_slice(run);
        let mut next = offs;
        for s in &scratch {
            let o = octant(s.p, c);
            run[next[o]] = *s;
            next[o] += 1;
        }
        leaves[k].len = 0; // now an inner node
        live = live - 1 + nonempty;
        for o in (0..8).filter(|&o| counts[o] > 0) {
            let sign = |bit: usize| if o >> bit & 1 == 1 { 0.5 } else { -0.5 };
            leaves.push(Leaf {
                start: start + offs[o],
                len: counts[o],
                center: std::array::from_fn(|a| c[a] + sign(a) * h),
                half: h / 2.0,
                level: level + 1,
            });
            heap.push((counts[o], std::cmp::Reverse(leaves.len() - 1)));
        }
    }
    let mut runs: Vec<(usize, usize)> = leaves.iter().filter(|l| l.len > 0).map(|l| (l.start, l.len)).collect();
    runs.sort_unstable();
    let mut sizes: Vec<usize> = runs.into_iter().map(|(_, len)| len).collect();
    sizes.resize(shards, 0);
    sizes
}
