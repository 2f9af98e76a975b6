//! Balanced k-d tree: median split on the axis of widest extent, `depth` levels.
//!
//! Leaves come out in tree order with the first split as the most significant bit of
//! the shard id, so siblings (ids differing in the low bits) share routers: a router
//! of fanout F takes log2(F) k-d levels (two for the paper's quadtree, four for the
//! default 16-wide level-1 routers).

use rayon::prelude::*;

/// A site travelling with its id, so the selects below read contiguous memory
/// instead of chasing ids into the position array.
#[derive(Clone, Copy)]
pub(crate) struct Site {
    pub p: [f32; 3],
    pub id: u32,
}

/// Below this many sites a subtree is split on one thread.
const PAR_MIN: usize = 1 << 15;

pub(crate) fn bounds(points: impl Iterator<Item = [f32; 3]>) -> ([f32; 3], [f32; 3]) {
    points.fold(([f32::INFINITY; 3], [f32::NEG_INFINITY; 3]), |(mut lo, mut hi), p| {
        for a in 0..3 {
            lo[a] = lo[a].min(p[a]);
            hi[a] = hi[a].max(p[a]);
        }
        (lo, hi)
    })
}

fn site_bounds(sites: &[Site]) -> ([f32; 3], [f32; 3]) {
    let merge = |(l0, h0): ([f32; 3], [f32; 3]), (l1, h1): ([f32; 3], [f32; 3])| {
        (std::array::from_fn(|a| l0[a].min(l1[a])), std::array::from_fn(|a| h0[a].max(h1[a])))
    };
    if sites.len() < PAR_MIN {
        bounds(sites.iter().map(|s| s.p))
    } else {
        sites.par_chunks(PAR_MIN).map(|c| bounds(c.iter().map(|s| s.p))).reduce(|| bounds(std::iter::empty()), merge)
    }
}

/// Widest axis of the box; ties go to the lower axis.
fn widest_axis(lo: [f32; 3], hi: [f32; 3]) -> usize {
    let e = |a: usize| hi[a] - lo[a];
    let mut best = 0;
    for a in 1..3 {
        if e(a) > e(best) {
            best = a;
        }
    }
    best
}

/// Reorders `sites` so that each of the `2^depth` leaves is a contiguous run, leaves in
/// shard-id order. A node of n sites gives floor(n/2) to its low child and ceil(n/2)
/// to its high child; ties in the coordinate break by id, so the result is unique.
pub(crate) fn split(sites: &mut [Site], depth: u32) {
    if depth == 0 || sites.len() < 2 {
        return;
    }
    let (lo, hi) = site_bounds(sites);
    let axis = widest_axis(lo, hi);
    let mid = sites.len() / 2;
    sites.select_nth_unstable_by(mid, |a, b| a.p[axis].total_cmp(&b.p[axis]).then(a.id.cmp(&b.id)));
    let (low, high) = sites.split_at_mut(mid);
    if low.len() + high.len() >= PAR_MIN {
        rayon::join(|| split(low, depth - 1), || split(high, depth - 1));
    } else {
        split(low, depth - 1);
        split(high, depth - 1);
    }
}

/// A site with the bytes it is expected to bring its tile (see [`crate::balance`]).
#[derive(Clone, Copy)]
pub(crate) struct WeightedSite {
    pub p: [f32; 3],
    pub id: u32,
    pub w: f32,
}

fn weighted_bounds(sites: &[WeightedSite]) -> ([f32; 3], [f32; 3]) {
    if sites.len() < PAR_MIN {
        bounds(sites.iter().map(|s| s.p))
    } else {
        let merge = |(l0, h0): ([f32; 3], [f32; 3]), (l1, h1): ([f32; 3], [f32; 3])| {
            (std::array::from_fn(|a| l0[a].min(l1[a])), std::array::from_fn(|a| h0[a].max(h1[a])))
        };
        sites.par_chunks(PAR_MIN).map(|c| bounds(c.iter().map(|s| s.p))).reduce(|| bounds(std::iter::empty()), merge)
    }
}

/// Total weight, summed in the same order whatever the threads do, so that the cut
/// is deterministic.
fn weight(sites: &[WeightedSite]) -> f64 {
    let chunk = |c: &[WeightedSite]| c.iter().map(|s| s.w as f64).sum::<f64>();
    if sites.len() < PAR_MIN {
        chunk(sites)
    } else {
        sites.par_chunks(PAR_MIN).map(chunk).collect::<Vec<f64>>().iter().sum()
    }
}

/// Orders `sites` along `axis` far enough that the first `k` of them hold `share`
/// of the weight, and returns `k` within `low..=len - high`: of the two cuts around
/// that point, the one closer to it. Ties in the coordinate break by id.
fn weighted_cut(sites: &mut [WeightedSite], axis: usize, share: f64, (low, high): (usize, usize)) -> usize {
    let cmp = |a: &WeightedSite, b: &WeightedSite| a.p[axis].total_cmp(&b.p[axis]).then(a.id.cmp(&b.id));
    let half = weight(sites) * share;
    // [lo, hi) holds the cut; `below` is the weight of sites[..lo], all before it.
    let (mut lo, mut hi, mut below) = (0, sites.len(), 0.0);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        sites[lo..hi].select_nth_unstable_by(mid - lo, cmp);
        let w = weight(&sites[lo..mid]);
        if below + w > half {
            hi = mid;
        } else {
            below += w;
            lo = mid;
        }
    }
    // sites[..lo] weigh `below` <= half; adding sites[lo] passes half.
    let k = if half - below <= below + sites[lo].w as f64 - half { lo } else { lo + 1 };
    let kept = k.clamp(low, sites.len() - high);
    if kept != k {
        // Only the order around the weighted cut is settled; settle it at `kept`.
        sites.select_nth_unstable_by(kept, cmp);
    }
    kept
}

/// As [`split`], but each node gives its halves weight in proportion to the shards
/// below them instead of equal counts, and each of the `2^depth` leaves is cut into
/// `shards_per_leaf[leaf]` (1 or 2) shards of equal weight. Every shard keeps at
/// least one site. Returns the shard sizes in shard order.
pub(crate) fn split_weighted(sites: &mut [WeightedSite], depth: u32, shards_per_leaf: &[u8]) -> Vec<usize> {
    let (low_leaves, high_leaves) = shards_per_leaf.split_at(shards_per_leaf.len() / 2);
    let (low_shards, high_shards) = if depth == 0 {
        if shards_per_leaf[0] < 2 || sites.len() < 2 {
            return vec![sites.len()];
        }
        (1, 1)
    } else {
        let count = |l: &[u8]| l.iter().map(|&k| k as usize).sum::<usize>();
        (count(low_leaves), count(high_leaves))
    };
    let (lo, hi) = weighted_bounds(sites);
    let share = low_shards as f64 / (low_shards + high_shards) as f64;
    let mid = weighted_cut(sites, widest_axis(lo, hi), share, (low_shards, high_shards));
    let (low, high) = sites.split_at_mut(mid);
    if depth == 0 {
        return vec![low.len(), high.len()];
    }
    let (mut a, b) = if low.len() + high.len() >= PAR_MIN {
        rayon::join(|| split_weighted(low, depth - 1, low_leaves), || split_weighted(high, depth - 1, high_leaves))
    } else {
        (split_weighted(low, depth - 1, low_leaves), split_weighted(high, depth - 1, high_leaves))
    };
    a.extend(b);
    a
}

/// Leaf sizes of [`split`] for `n` sites, in shard-id order.
pub(crate) fn leaf_sizes(n: usize, depth: u32) -> Vec<usize> {
    let mut sizes = vec![n];
    for _ in 0..depth {
        sizes = sizes.iter().flat_map(|&s| [s / 2, s - s / 2]).collect();
    }
    sizes
}
