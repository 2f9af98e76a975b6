//! One ray through the foam, with the original CUDA tracer's semantics in f32.

use glam::{Vec3, Vec3A};

use super::sh;
use crate::scene::Scene;

/// Per-ray settings. Defaults are the original's test-time values.
#[derive(Clone, Copy, Debug)]
pub struct TraceOptions {
    /// SH degree used for colour (≤ the scene's); 0 is DC only, as on the device.
    pub sh_degree: u8,
    /// Compositing starts at this distance along the ray (the original starts at 0).
    pub t_min: f32,
    /// Stop once the transmittance is at or below this (original default 0.001).
    pub weight_threshold: f32,
    /// Stop after this many cells (original default 1024).
    pub max_steps: u32,
    /// Depth is where the transmittance first falls below this quantile.
    pub depth_quantile: f32,
}

impl Default for TraceOptions {
    fn default() -> Self {
        TraceOptions { sh_degree: 0, t_min: 0.0, weight_threshold: 0.001, max_steps: 1024, depth_quantile: 0.5 }
    }
}

/// What a ray accumulates.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RaySample {
    /// Σ w·rgb, not composited on any background.
    pub rgb: [f32; 3],
    /// 1 − T.
    pub opacity: f32,
    /// Distance along the unit ray at the depth quantile; −1 if never reached.
    pub depth: f32,
    /// Cells whose faces were tested (the work measure of the benchmark).
    pub steps: u32,
}

/// The scene prepared for tracing: site positions padded to 16 bytes so the face test
/// runs on SIMD lanes. Build once per scene, trace many rays.
pub struct Tracer<'a> {
    pub scene: &'a Scene,
    positions: Vec<Vec3A>,
}

impl<'a> Tracer<'a> {
    pub fn new(scene: &'a Scene) -> Tracer<'a> {
        Tracer { scene, positions: scene.positions.iter().map(|&p| Vec3A::from_array(p)).collect() }
    }

    /// Walks the ray `origin + t·dir` (dir of unit length) from cell `start`, which must
    /// contain `origin`, calling `segment(cell, t_0, t_exit)` for every cell crossed with
    /// `t_exit > t_0` until it returns false. The scene must be valid (adjacency indices
    /// in range). Returns the number of cells visited (at most `max_steps`).
    ///
    /// Exit face of cell p: over neighbours q with `dp = (q − p)·dir > 0`, the smallest
    /// `t = ((p + (q − p)/2) − origin)·(q − p) / dp`, first index winning ties. A cell with
    /// no such face is a hull cell: the walk ends there without a segment for it (its
    /// segment would be infinite). `t_0` starts at `t_min` and becomes `max(t_0, t_exit)`.
    #[inline]
    pub fn walk(
        &self,
        start: u32,
        origin: Vec3,
        dir: Vec3,
        t_min: f32,
        max_steps: u32,
        mut segment: impl FnMut(u32, f32, f32) -> bool,
    ) -> u32 {
        let scene = self.scene;
        let (o, d) = (Vec3A::from(origin), Vec3A::from(dir));
        let mut t0 = t_min;
        let mut steps = 0u32;
        let mut cell = start;
        let mut p = self.positions[cell as usize];
        while steps < max_steps {
            steps += 1;
            let begin = scene.adjacency_start(cell as usize);
            let end = scene.adjacency_end[cell as usize] as usize;
            let neighbours = &scene.adjacency[begin..end];
            let mut t1 = f32::INFINITY;
            let mut best = usize::MAX;
            for (k, &n) in neighbours.iter().enumerate() {
                let q = self.positions[n as usize];
                let normal = q - p;
                let dp = normal.dot(d);
                if dp > 0.0 {
                    let face_point = p + normal * 0.5;
                    let t = (face_point - o).dot(normal) / dp;
                    if t < t1 {
                        t1 = t;
                        best = k;
                    }
                }
            }
            if best == usize::MAX {
                break;
            }
            if t1 > t0 && !segment(cell, t0, t1) {
                break;
            }
            t0 = t0.max(t1);
            cell = neighbours[best];
            p = self.positions[cell as usize];
        }
        steps
    }

    /// Traces one ray (see [`Tracer::walk`] for the geometry): `alpha = 1 − exp(−σ·δ)`,
    /// colour from SH up to `opts.sh_degree` (none where σ ≤ 1e-6), stop once
    /// `T ≤ weight_threshold`, depth where T first drops below the quantile.
    #[inline]
    pub fn trace(&self, start: u32, origin: Vec3, dir: Vec3, opts: &TraceOptions) -> RaySample {
        let scene = self.scene;
        let n_coeffs = crate::scene::sh_rest_len(opts.sh_degree) / 3;
        let stride = scene.sh_rest_len();
        let basis = if n_coeffs > 0 { sh::basis(dir, opts.sh_degree) } else { [0.0; 15] };
        let mut transmittance = 1.0f32;
        let mut acc = [0.0f32; 3];
        let mut depth = -1.0f32;
        let mut depth_found = false;
        let steps = self.walk(start, origin, dir, opts.t_min, opts.max_steps, |cell, t0, t1| {
            let i = cell as usize;
            let sigma = scene.density[i];
            let rgb = if sigma > 1e-6 {
                sh::sh_rgb(scene.color[i], &scene.sh_rest[i * stride..(i + 1) * stride], &basis, n_coeffs)
            } else {
                [0.0; 3]
            };
            let delta = (t1 - t0).max(0.0);
            let alpha = 1.0 - (-sigma * delta).exp();
            let w = transmittance * alpha;
            for c in 0..3 {
                acc[c] += w * rgb[c];
            }
            let next_t = transmittance * (1.0 - alpha);
            if !depth_found && next_t < opts.depth_quantile {
                depth = t0 + (transmittance / opts.depth_quantile).ln() / sigma;
                depth_found = true;
            }
            transmittance = next_t;
            transmittance > opts.weight_threshold
        });
        RaySample { rgb: acc, opacity: 1.0 - transmittance, depth, steps }
    }
}

/// One ray without a prepared [`Tracer`] (convenient for tests; slower per ray).
pub fn trace_ray(scene: &Scene, start: u32, origin: Vec3, dir: Vec3, opts: &TraceOptions) -> RaySample {
    Tracer::new(scene).trace(start, origin, dir, opts)
}
