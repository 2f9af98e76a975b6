//! Which shards an injector's camera region holds.
//!
//! Every primary ray starts in the camera's cell, so the shards around the camera
//! see the whole frame; but which shards a frame's rays *keep* crossing depends on
//! the view, not on distance alone (large near-empty cells at the edge of the view
//! may be crossed by most rays, and shards behind the camera by none). So before a
//! frame the host traces a sample of each injector's rays through the cells (see
//! [`super::blocks`]), records the shards each one crosses in order, and grows the
//! region from the start shard one shard at a time: always the shard where most
//! sampled rays would leave the region so far. The injector marches a ray only
//! while it stays in the region, so this greedy choice is what maximises the
//! visits that never enter the tree.
//!
//! The choice only moves work between tiles: rays cross region shards through their
//! payloads exactly as they cross tracer tiles, so the image does not depend on it.

use rayon::prelude::*;

use crate::camera::Camera;
use crate::reference::Tracer;

/// Walks pixel (`x`, `y`)'s ray of `cam` from the camera's cell `start` as the
/// device's rays go, until it stops (`t_stop`, a hull cell, or the step limit),
/// handing `visit` each cell it steps through.
pub fn walk_pixel(
    tracer: &Tracer,
    cam: &Camera,
    start: u32,
    t_stop: f32,
    (x, y): (u32, u32),
    mut visit: impl FnMut(u32),
) {
    let (o, d) = cam.pixel_ray(x, y);
    let density = &tracer.scene.density;
    let mut transmittance = 1.0f32;
    tracer.walk(start, o, d, 0.0, foam_layout::FOAM_MAX_CELL_STEPS, |cell, t0, t1| {
        visit(cell);
        transmittance *= (-density[cell as usize] * (t1 - t0)).exp();
        transmittance > t_stop
    });
}

/// The shards (deduplicated consecutive runs) that the rays of the `samples` pixels
/// cross, in order, each path ending where the ray stops ([`walk_pixel`]), with the
/// cell steps in each.
pub fn sample_paths(
    tracer: &Tracer,
    owner: &(dyn Fn(u32) -> usize + Sync),
    cam: &Camera,
    start: u32,
    t_stop: f32,
    samples: &[(u32, u32)],
) -> Vec<super::blocks::SampledRay> {
    samples
        .par_iter()
        .map(|&pixel| {
            let mut ray = super::blocks::SampledRay::default();
            walk_pixel(tracer, cam, start, t_stop, pixel, |cell| {
                let s = owner(cell) as u16;
                if ray.shards.last() != Some(&s) {
                    ray.shards.push(s);
                    ray.steps.push(0);
                }
                *ray.steps.last_mut().expect("a run per shard") += 1;
            });
            if ray.shards.is_empty() {
                ray.shards.push(owner(start) as u16);
                ray.steps.push(0);
            }
            ray
        })
        .collect()
}

/// Grows the region from `start`: repeatedly adds the shard where most sampled
/// `paths` would leave the region, as long as its blob (`sizes[s]` bytes) fits in
/// `budget` bytes and the region holds fewer than `max_shards`. Shards no sampled ray
/// reaches are not worth their bytes. Deterministic: ties go to the lower shard id.
pub fn choose<P: AsRef<[u16]>>(
    paths: &[P],
    start: usize,
    sizes: &[usize],
    budget: usize,
    max_shards: usize,
) -> Vec<usize> {
    let n = sizes.len();
    let mut inside = vec![false; n];
    let mut chosen = vec![start];
    inside[start] = true;
    let mut used = sizes[start];
    // Rays waiting at each frontier shard, and how far along its path each ray is.
    let mut waiting: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut pos = vec![0usize; paths.len()];
    let advance = |r: usize, pos: &mut [usize], inside: &[bool], waiting: &mut [Vec<u32>]| {
        let p = paths[r].as_ref();
        while pos[r] < p.len() && inside[p[pos[r]] as usize] {
            pos[r] += 1;
        }
        if let Some(&s) = p.get(pos[r]) {
            waiting[s as usize].push(r as u32);
        }
    };
    for r in 0..paths.len() {
        advance(r, &mut pos, &inside, &mut waiting);
    }
    while chosen.len() < max_shards {
        let best = (0..n)
            .filter(|&s| !inside[s] && !waiting[s].is_empty() && used + sizes[s] <= budget)
            .max_by(|&a, &b| waiting[a].len().cmp(&waiting[b].len()).then(b.cmp(&a)));
        let Some(s) = best else { break };
        inside[s] = true;
        chosen.push(s);
        used += sizes[s];
        for r in std::mem::take(&mut waiting[s]) {
            advance(r as usize, &mut pos, &inside, &mut waiting);
        }
    }
    chosen
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_along_the_paths_most_rays_take() {
        // Ten rays leave shard 0 into shard 1, then 2; three go 0 -> 3 -> 4.
        let mut paths = vec![vec![0u16, 1, 2]; 10];
        paths.extend(vec![vec![0u16, 3, 4]; 3]);
        paths.push(vec![0, 5, 0, 6]); // comes back to the start: only its prefix counts
        let sizes = vec![10usize; 8];
        assert_eq!(choose(&paths, 0, &sizes, 1000, 8), vec![0, 1, 2, 3, 4, 5, 6]);
        assert_eq!(choose(&paths, 0, &sizes, 1000, 3), vec![0, 1, 2]);
        // The budget skips what does not fit and takes what still does.
        let mut sizes = vec![10usize; 8];
        sizes[2] = 500;
        assert_eq!(choose(&paths, 0, &sizes, 45, 8), vec![0, 1, 3, 4]);
        // Shards no sampled ray reaches stay out; the start shard is always in.
        assert_eq!(choose::<Vec<u16>>(&[], 7, &sizes, 0, 8), vec![7]);
    }
}
