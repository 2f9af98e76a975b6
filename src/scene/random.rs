//! Random but valid scenes for I/O tests and benchmarks: uniform sites, arbitrary
//! attributes and a symmetric random adjacency of about 15 neighbours per site. The
//! adjacency is not a Voronoi one (see `synth` for that); it only has the right shape.

use rayon::prelude::*;

use super::{Scene, sh_rest_len};
pub use crate::synth::rng::Rng;

/// Partners drawn per site, forward within a window so that neighbours are near in
/// index (as in the trainer's spatially sorted scenes); both directions are stored.
const PARTNERS: usize = 8;
const WINDOW: u64 = 64;

pub fn random_scene(cells: usize, sh_degree: u8, seed: u64) -> Scene {
    assert!(cells > 0 && cells < u32::MAX as usize && sh_degree <= 3);
    let mut rng = Rng::new(seed);
    let k = sh_rest_len(sh_degree);
    let mut scene = Scene { sh_degree, ..Scene::default() };
    scene.positions = (0..cells).map(|_| [(); 3].map(|_| rng.uniform(-10.0, 10.0))).collect();
    // A quarter of the sites are empty space, as in trained scenes.
    scene.density =
        (0..cells).map(|_| if rng.next_u64().is_multiple_of(4) { 0.0 } else { rng.uniform(0.0, 50.0) }).collect();
    scene.color = (0..cells).map(|_| rng.next_u64().to_le_bytes()[..3].try_into().unwrap()).collect();
    scene.sh_rest = (0..cells * k).map(|_| rng.uniform(-0.5, 0.5)).collect();

    let mut edges: Vec<u64> = Vec::with_capacity(cells * PARTNERS * 2);
    for i in 0..cells as u64 {
        for _ in 0..PARTNERS {
            let j = i + 1 + rng.next_u64() % WINDOW;
            if j < cells as u64 {
                edges.push(i << 32 | j);
                edges.push(j << 32 | i);
            }
        }
    }
    edges.par_sort_unstable();
    edges.dedup();
    scene.adjacency = edges.iter().map(|&e| e as u32).collect();
    scene.adjacency_end = vec![0; cells];
    for &e in &edges {
        scene.adjacency_end[(e >> 32) as usize] += 1;
    }
    let mut end = 0;
    for c in &mut scene.adjacency_end {
        end += *c;
        *c = end;
    }
    scene
}
