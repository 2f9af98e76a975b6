//! Shard copies on tracer tiles.
//!
//! A ray that crosses from one shard into the next costs at least one
//! compute/exchange iteration, and usually a few router hops more, however few
//! cells it marches on either side; a long ray crosses a dozen shards or more, so
//! the frame's iteration count is mostly that. But a shard of a large scene takes
//! a fraction of its tile (under 80 KB of 624 KiB for a 1 M-cell scene in 1024
//! shards), so a tracer can also hold copies of the neighbouring shards its rays
//! leave into most, and march them on through those in the same step.
//!
//! Which neighbours is the camera's business: the host's sample of the frame's
//! rays ([`super::DevicePlan::tracer_traffic`]) gives the shards each sampled ray
//! crosses after leaving its injector's region. For each tracer, every place a
//! sampled path enters its shard is a ray that tracer would march; from there the
//! copies grow as the injectors' regions do ([`super::region::choose`]): always
//! the shard where most of those rays would leave what the tile holds so far, as
//! long as its blob fits the bytes the tile has left.
//!
//! The copies only move work between tiles: a ray crosses them through its payload
//! as it would cross tiles, so the image does not depend on them.

use rayon::prelude::*;

/// The shard copies of each of `budgets.len()` tracers (tracer `a` holds shard `a`):
/// at most `most` each, their blobs (`sizes[s]` bytes) within `budgets[a]` bytes,
/// in ascending shard order. `paths` are the sampled rays' shard sequences after
/// their injector's region. Deterministic.
pub fn choose(paths: &[Vec<u16>], sizes: &[usize], budgets: &[usize], most: usize) -> Vec<Vec<usize>> {
    let tracers = budgets.len();
    if most == 0 {
        return vec![Vec::new(); tracers];
    }
    // Where each tracer's rays start: (path, position) of every entry into its shard.
    let mut entries: Vec<Vec<(u32, u32)>> = vec![Vec::new(); tracers];
    for (p, path) in paths.iter().enumerate() {
        for (i, &s) in path.iter().enumerate() {
            if (s as usize) < tracers {
                entries[s as usize].push((p as u32, i as u32));
            }
        }
    }
    entries
        .par_iter()
        .enumerate()
        .map(|(a, from)| {
            if from.is_empty() {
                return Vec::new();
            }
            let onward: Vec<&[u16]> = from.iter().map(|&(p, i)| &paths[p as usize][i as usize..]).collect();
            // The tile's own shard is where every path starts; it is not a copy.
            let mut held = super::region::choose(&onward, a, sizes, budgets[a] + sizes[a], most + 1);
            held.remove(0);
            held.sort_unstable();
            held
        })
        .collect()
}

/// What the sampled rays do on tiles holding `held` copies (see [`traffic`]).
pub struct Traffic {
    /// Rays each tracer takes in: where a path starts, and wherever it leaves what
    /// its tile holds.
    pub arrivals: Vec<f64>,
    /// Rays that end on each tracer.
    pub finishes: Vec<f64>,
    /// Crossings from tile to tile `(from, to, rays)`, sorted: what a link into a
    /// replicated shard brings its far end depends on which way the rays go.
    pub flows: Vec<(u32, u32, f64)>,
}

impl Traffic {
    fn new(arrivals: Vec<f64>, finishes: Vec<f64>, flows: std::collections::BTreeMap<(u32, u32), f64>) -> Self {
        Traffic { arrivals, finishes, flows: flows.into_iter().map(|((a, b), w)| (a, b, w)).collect() }
    }

    /// Crossings between tiles `(a, b, rays)`, `a < b`, both directions together,
    /// sorted: the flows folded.
    pub fn crossings(&self) -> Vec<(u32, u32, f64)> {
        let mut crossings: std::collections::BTreeMap<(u32, u32), f64> = Default::default();
        for &(a, b, w) in &self.flows {
            *crossings.entry((a.min(b), a.max(b))).or_default() += w;
        }
        crossings.into_iter().map(|((a, b), w)| (a, b, w)).collect()
    }
}

/// The tile that marches each shard of `path` on tiles holding `held` copies: the
/// path's first shard's tile, until the path enters a shard that tile holds no copy
/// of, whose tile then takes over.
fn tiles_along<'a>(path: &'a [u16], held: &'a [Vec<usize>]) -> impl Iterator<Item = usize> + 'a {
    let mut tile = path.first().map_or(0, |&s| s as usize);
    path.iter().map(move |&s| {
        let s = s as usize;
        if s != tile && held[tile].binary_search(&s).is_err() {
            tile = s;
        }
        tile
    })
}

/// What the sampled `paths` do on tiles holding `held` copies, each path standing
/// for `weight` pixels.
pub fn traffic(paths: &[Vec<u16>], weight: f64, held: &[Vec<usize>]) -> Traffic {
    let mut arrivals = vec![0.0f64; held.len()];
    let mut finishes = vec![0.0f64; held.len()];
    let mut flows: std::collections::BTreeMap<(u32, u32), f64> = Default::default();
    for path in paths {
        let mut last: Option<usize> = None;
        for tile in tiles_along(path, held) {
            if last != Some(tile) {
                if let Some(from) = last {
                    *flows.entry((from as u32, tile as u32)).or_default() += weight;
                }
                arrivals[tile] += weight;
            }
            last = Some(tile);
        }
        if let Some(tile) = last {
            finishes[tile] += weight;
        }
    }
    Traffic::new(arrivals, finishes, flows)
}

/// The traffic of several views' sampled paths (each set with its weight) on
/// tiles holding `held` copies, as the view that loads each tracer most: per
/// tracer the most arrivals and endings of any view, and the crossings of all
/// views summed (they only rank pairs). For one view, its [`traffic`].
pub fn busiest_view(views: &[(Vec<Vec<u16>>, f64)], held: &[Vec<usize>]) -> Traffic {
    let mut arrivals = vec![0.0f64; held.len()];
    let mut finishes = vec![0.0f64; held.len()];
    let mut flows: std::collections::BTreeMap<(u32, u32), f64> = Default::default();
    for (paths, weight) in views {
        let t = traffic(paths, *weight, held);
        for (most, v) in arrivals.iter_mut().zip(&t.arrivals).chain(finishes.iter_mut().zip(&t.finishes)) {
            *most = most.max(*v);
        }
        for (a, b, w) in t.flows {
            *flows.entry((a, b)).or_default() += w;
        }
    }
    Traffic::new(arrivals, finishes, flows)
}

/// A view's sampled paths (the shards each crosses), their cell steps shard by
/// shard, and the pixels a path stands for.
pub type ViewSteps<'a> = (&'a [Vec<u16>], &'a [Vec<u32>], f64);

/// The cell steps each tracer tile marches for the sampled `views` (paths, their
/// `steps` shard by shard, the pixels a path stands for) on tiles holding `held`
/// copies, as the view that loads each tile most: a path's steps in a shard its
/// tile holds a copy of are marched there, as [`traffic`] counts arrivals.
pub fn tile_steps(views: &[ViewSteps<'_>], held: &[Vec<usize>]) -> Vec<f64> {
    let mut most = vec![0.0f64; held.len()];
    for &(paths, steps, weight) in views {
        let mut on = vec![0.0f64; held.len()];
        for (path, steps) in paths.iter().zip(steps) {
            for (tile, &n) in tiles_along(path, held).zip(steps) {
                on[tile] += n as f64 * weight;
            }
        }
        for (m, v) in most.iter_mut().zip(on) {
            *m = m.max(v);
        }
    }
    most
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_follow_where_each_tracers_rays_go_next_within_its_bytes() {
        // Tracer 0's rays go on to 1 (five), then 2; two go to 3. Tracer 1's rays,
        // counted from wherever a path enters 1, go on to 2.
        let mut paths = vec![vec![0u16, 1, 2]; 5];
        paths.extend(vec![vec![0u16, 3]; 2]);
        paths.push(vec![4, 1, 2]);
        let sizes = vec![10usize; 5];
        let held = choose(&paths, &sizes, &[100; 5], 8);
        assert_eq!(held[0], vec![1, 2, 3]);
        assert_eq!(held[1], vec![2]);
        assert_eq!(held[4], vec![1, 2]);
        assert!(held[2].is_empty() && held[3].is_empty(), "nothing leaves 2 or 3");
        // Room for one copy: the busiest next shard. No room, or none wanted: nothing.
        assert_eq!(choose(&paths, &sizes, &[15; 5], 8)[0], vec![1]);
        assert_eq!(choose(&paths, &sizes, &[100; 5], 1)[0], vec![1]);
        assert!(choose(&paths, &sizes, &[5; 5], 8).iter().all(Vec::is_empty));
        assert!(choose(&paths, &sizes, &[100; 5], 0).iter().all(Vec::is_empty));
    }

    #[test]
    fn traffic_counts_arrivals_and_crossings_between_tiles_not_shards() {
        let paths = vec![vec![0u16, 1, 2, 3], vec![2, 1, 0]];
        let none = vec![Vec::new(); 4];
        let t = traffic(&paths, 2.0, &none);
        assert_eq!(t.arrivals, vec![4.0, 4.0, 4.0, 2.0]);
        assert_eq!(t.finishes, vec![2.0, 0.0, 0.0, 2.0]);
        assert_eq!(t.crossings(), vec![(0, 1, 4.0), (1, 2, 4.0), (2, 3, 2.0)]);
        assert_eq!(t.flows, vec![(0, 1, 2.0), (1, 0, 2.0), (1, 2, 2.0), (2, 1, 2.0), (2, 3, 2.0)]);
        // Tile 0 holds 1 and 2: the first ray stays there until it leaves for 3.
        let held = vec![vec![1, 2], vec![], vec![], vec![]];
        let t = traffic(&paths, 1.0, &held);
        assert_eq!(t.arrivals, vec![2.0, 1.0, 1.0, 1.0]);
        assert_eq!(t.finishes, vec![1.0, 0.0, 0.0, 1.0]);
        assert_eq!(t.crossings(), vec![(0, 1, 1.0), (0, 3, 1.0), (1, 2, 1.0)]);
        assert_eq!(t.flows, vec![(0, 3, 1.0), (1, 0, 1.0), (2, 1, 1.0)]);
    }

    #[test]
    fn several_views_load_each_tracer_as_their_busiest() {
        let a = (vec![vec![0u16, 1, 2, 3], vec![2, 1, 0]], 2.0);
        let b = (vec![vec![3u16, 2]], 5.0);
        let none = vec![Vec::new(); 4];
        let one = busiest_view(std::slice::from_ref(&a), &none);
        let alone = traffic(&a.0, a.1, &none);
        assert_eq!((one.arrivals, one.finishes, one.flows), (alone.arrivals, alone.finishes, alone.flows));
        let t = busiest_view(&[a, b], &none);
        assert_eq!(t.arrivals, vec![4.0, 4.0, 5.0, 5.0]);
        assert_eq!(t.finishes, vec![2.0, 0.0, 5.0, 2.0]);
        assert_eq!(t.crossings(), vec![(0, 1, 4.0), (1, 2, 4.0), (2, 3, 7.0)]);
        assert_eq!(t.flows[5], (3, 2, 5.0));
    }

    #[test]
    fn tile_steps_go_where_the_copies_march_them_busiest_view_per_tile() {
        // Path 0 -> 1 -> 2 -> 1 with 3, 4, 5 and 6 steps; tile 0 holds a copy of 1,
        // so it marches 1's first 4 steps, and 2 hands the last 6 to tile 1.
        let paths = vec![vec![0u16, 1, 2, 1]];
        let steps = vec![vec![3u32, 4, 5, 6]];
        let held = vec![vec![1], vec![], vec![], vec![]];
        assert_eq!(tile_steps(&[(&paths, &steps, 2.0)], &held), vec![14.0, 12.0, 10.0, 0.0]);
        // No copies: each shard's own; of two views, the larger per tile.
        let none = vec![Vec::new(); 4];
        let other = (vec![vec![3u16, 1]], vec![vec![7u32, 1]]);
        let both = tile_steps(&[(&paths, &steps, 1.0), (&other.0, &other.1, 1.0)], &none);
        assert_eq!(both, vec![3.0, 10.0, 5.0, 7.0]);
    }
}
