//! Summary numbers of a scene (what `foam-ipu info` prints).

use serde::Serialize;

use super::Scene;

/// Densities at or below this count as "near zero": with cells ~0.01–1 units across they
/// absorb well under 0.1 % of the light (the trainer's empty-space and shell sites sit here).
pub const NEAR_ZERO_DENSITY: f32 = 1e-3;

#[derive(Clone, Debug, Serialize)]
pub struct SceneStats {
    pub vertices: usize,
    pub adjacency: usize,
    pub sh_degree: u8,
    pub sh_coefficients: usize,
    pub bbox_min: [f32; 3],
    pub bbox_max: [f32; 3],
    pub min_neighbours: usize,
    pub mean_neighbours: f64,
    pub max_neighbours: usize,
    pub density_min: f32,
    pub density_mean: f64,
    pub density_max: f32,
    pub density_near_zero_threshold: f32,
    pub density_near_zero_fraction: f64,
}

impl SceneStats {
    /// Statistics of a non-empty scene (validated scenes always are).
    pub fn of(scene: &Scene) -> Self {
        let n = scene.len();
        let (bbox_min, bbox_max) = scene.bbox().unwrap_or(([0.0; 3], [0.0; 3]));
        let counts = (0..n).map(|i| scene.neighbours(i).len());
        let min_neighbours = counts.clone().min().unwrap_or(0);
        let max_neighbours = counts.max().unwrap_or(0);
        let d = &scene.density;
        let density_min = d.iter().copied().fold(f32::INFINITY, f32::min);
        let density_max = d.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let sum: f64 = d.iter().map(|&v| v as f64).sum();
        let near = d.iter().filter(|&&v| v <= NEAR_ZERO_DENSITY).count();
        let per_site = |x: f64| if n == 0 { 0.0 } else { x / n as f64 };
        SceneStats {
            vertices: n,
            adjacency: scene.adjacency.len(),
            sh_degree: scene.sh_degree,
            sh_coefficients: scene.sh_rest_len(),
            bbox_min,
            bbox_max,
            min_neighbours,
            mean_neighbours: per_site(scene.adjacency.len() as f64),
            max_neighbours,
            density_min,
            density_mean: per_site(sum),
            density_max,
            density_near_zero_threshold: NEAR_ZERO_DENSITY,
            density_near_zero_fraction: per_site(near as f64),
        }
    }
}
