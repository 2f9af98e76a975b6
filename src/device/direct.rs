//! Which routers under the root each injector gets a direct lane to. The exchange
//! copies every lane whole every step, and each router under the root takes in
//! every lane it hears: with a lane from every injector those bytes set the
//! exchange's pace (the bicycle scene's 194 injectors, 34 kB of the 103 kB the
//! busiest router takes in a step). An injector's rays mostly leave its camera region
//! towards one or two of the routers (1.96 of 8 on average there), so each keeps
//! lanes only to the routers that take a share of its sampled rays in some view;
//! its other rays take its lane to the root. A ray that finishes in the region goes
//! to its pixel's home, and the homes take turns over every router: where many
//! finish there, the injector keeps a lane to every router.

use super::sample::CameraSample;
use super::tree::Tree;

/// Each injector's direct lanes, by the lane at the root of the router each leads to
/// (ascending): those that at least `min_share` percent of its sampled rays head
/// for in some view of `samples` (those that finish in its region counted evenly
/// over every router); with `min_share` 0, or no view sampled, every router under
/// the root.
pub fn choose(tree: &Tree, samples: &[CameraSample], min_share: u32) -> Vec<Vec<u32>> {
    let root = tree.root();
    let children = tree.nodes[root].fanout as usize;
    if min_share == 0 || samples.is_empty() {
        return vec![(0..children as u32).collect(); tree.injectors().len()];
    }
    // The root's child above each shard's tracer.
    let child_of: Vec<usize> = (0..tree.tracers())
        .map(|s| {
            let mut at = s;
            while let Some(p) = tree.nodes[at].parent.filter(|&p| p != root) {
                at = p;
            }
            tree.nodes[at].lane as usize
        })
        .collect();
    let mut kept = vec![vec![false; children]; tree.injectors().len()];
    for sample in samples {
        // Once per set of sampled paths: every injector shares one with scan-ordered
        // batches.
        let shares: Vec<Vec<f64>> = sample
            .order
            .paths
            .iter()
            .zip(&sample.regions)
            .map(|(paths, region)| {
                let mut inside = vec![false; tree.tracers()];
                for &s in region {
                    inside[s] = true;
                }
                heading(paths, &inside, &child_of, children)
            })
            .collect();
        for (j, keep) in kept.iter_mut().enumerate() {
            for (k, &share) in shares[sample.order.paths_of(j)].iter().enumerate() {
                keep[k] |= share > 0.0 && share * 100.0 >= min_share as f64;
            }
        }
    }
    kept.iter().map(|keep| (0..children as u32).filter(|&k| keep[k as usize]).collect()).collect()
}

/// The share of `paths` (shard by shard) that heads for each of the root's
/// `children` on leaving the shards `inside` a camera region (`child_of` each
/// shard): where the first shard outside lies, or, for a path that ends inside, its
/// pixel's home, which takes turns over every child.
fn heading(paths: &[Vec<u16>], inside: &[bool], child_of: &[usize], children: usize) -> Vec<f64> {
    let (mut out, mut finished) = (vec![0.0; children], 0.0);
    for path in paths {
        match path.iter().find(|&&s| !inside[s as usize]) {
            Some(&s) => out[child_of[s as usize]] += 1.0,
            None => finished += 1.0,
        }
    }
    let all = paths.len().max(1) as f64;
    out.iter().map(|&n| (n + finished / children as f64) / all).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rays_head_for_the_child_of_the_first_shard_past_the_region_or_home() {
        // Shards 0..8 under four children (two each); the region holds 0 and 1.
        let child_of = [0, 0, 1, 1, 2, 2, 3, 3];
        let inside = [true, true, false, false, false, false, false, false];
        let paths = vec![vec![0, 2, 4], vec![1, 0, 3], vec![6], vec![0, 1]];
        // Two to child 1, one to child 3, and the last, ending inside, a quarter each.
        assert_eq!(heading(&paths, &inside, &child_of, 4), vec![0.0625, 0.5625, 0.0625, 0.3125]);
        assert_eq!(heading(&[], &inside, &child_of, 4), vec![0.0; 4]);
    }
}
