//! The unified-memory reference renderer: every ray traced on the host in f32 with the
//! original's semantics (see `trace.rs`); the ground truth device results are held against.

pub mod sh;
pub mod start;
pub mod trace;

use rayon::prelude::*;
use thiserror::Error;

pub use start::{SiteIndex, start_cell};
pub use trace::{RaySample, TraceOptions, Tracer, trace_ray};

use crate::camera::Camera;
use crate::scene::Scene;

#[derive(Debug, Error)]
pub enum RenderError {
    #[error("the scene has no sites")]
    EmptyScene,
    #[error("--sh-degree {asked} exceeds the scene's SH degree {has}")]
    ShDegree { asked: u8, has: u8 },
    #[error("{0}")]
    Options(String),
}

/// A rendered frame as f32 planes, row-major, top row first.
#[derive(Clone, Debug, PartialEq)]
pub struct RenderOutput {
    pub width: u32,
    pub height: u32,
    /// Σ w·rgb per pixel (3 floats), not composited on a background.
    pub rgb: Vec<f32>,
    /// 1 − final transmittance.
    pub opacity: Vec<f32>,
    /// Depth along the unit ray at the quantile; −1 where never reached.
    pub depth: Vec<f32>,
    /// Cells visited per ray.
    pub steps: Vec<u32>,
}

impl RenderOutput {
    /// The image as the original's test script forms it: `rgb + bg·(1 − opacity)`, clipped
    /// to [0, 1] (3 floats per pixel).
    pub fn composite(&self, background: [f32; 3]) -> Vec<f32> {
        self.rgb
            .chunks_exact(3)
            .zip(&self.opacity)
            .flat_map(|(rgb, &a)| {
                let t = 1.0 - a;
                [0, 1, 2].map(|c| (rgb[c] + background[c] * t).clamp(0.0, 1.0))
            })
            .collect()
    }

    pub fn total_steps(&self) -> u64 {
        self.steps.iter().map(|&s| s as u64).sum()
    }
}

/// Checks the options against the scene: SH degree within the file's, sane thresholds.
pub fn check_options(scene: &Scene, opts: &TraceOptions) -> Result<(), RenderError> {
    if scene.is_empty() {
        return Err(RenderError::EmptyScene);
    }
    if opts.sh_degree > scene.sh_degree {
        return Err(RenderError::ShDegree { asked: opts.sh_degree, has: scene.sh_degree });
    }
    if !(opts.t_min.is_finite() && opts.t_min >= 0.0) {
        return Err(RenderError::Options(format!("t_min {} must be finite and ≥ 0", opts.t_min)));
    }
    if !(opts.depth_quantile > 0.0 && opts.depth_quantile < 1.0) {
        return Err(RenderError::Options(format!("depth quantile {} must lie in (0, 1)", opts.depth_quantile)));
    }
    if !(opts.weight_threshold >= 0.0 && opts.weight_threshold < 1.0) {
        return Err(RenderError::Options(format!("weight threshold {} must lie in [0, 1)", opts.weight_threshold)));
    }
    Ok(())
}

/// Renders every pixel of `cam`, all rays starting in `start` (the cell of the camera
/// centre). Square tiles of pixels are spread over the rayon pool; the result does not
/// depend on it.
pub fn render_from(scene: &Scene, cam: &Camera, start: u32, opts: &TraceOptions) -> RenderOutput {
    render_with(&Tracer::new(scene), cam, start, opts)
}

/// As [`render_from`] with a prepared tracer (reuse it across frames).
pub fn render_with(tracer: &Tracer, cam: &Camera, start: u32, opts: &TraceOptions) -> RenderOutput {
    let (w, h) = (cam.width as usize, cam.height as usize);
    let mut out = RenderOutput {
        width: cam.width,
        height: cam.height,
        rgb: vec![0.0; 3 * w * h],
        opacity: vec![0.0; w * h],
        depth: vec![0.0; w * h],
        steps: vec![0; w * h],
    };
    // Square tiles, not rows: a tile's rays cross mostly the same cells, which then
    // stay in the core's caches, where a row's sweep across the view evicts them
    // before the next row comes back.
    const TILE: usize = 8;
    let tiles_x = w.div_ceil(TILE);
    let origin = |t: usize| (t % tiles_x * TILE, t / tiles_x * TILE);
    let traced: Vec<Vec<RaySample>> = (0..tiles_x * h.div_ceil(TILE))
        .into_par_iter()
        .map(|t| {
            let (x0, y0) = origin(t);
            let mut v = Vec::with_capacity(TILE * TILE);
            for j in y0..(y0 + TILE).min(h) {
                for i in x0..(x0 + TILE).min(w) {
                    let (o, d) = cam.pixel_ray(i as u32, j as u32);
                    v.push(tracer.trace(start, o, d, opts));
                }
            }
            v
        })
        .collect();
    for (t, v) in traced.iter().enumerate() {
        let (x0, y0) = origin(t);
        let tw = (x0 + TILE).min(w) - x0;
        for (k, s) in v.iter().enumerate() {
            let p = (y0 + k / tw) * w + x0 + k % tw;
            out.rgb[3 * p..3 * p + 3].copy_from_slice(&s.rgb);
            out.opacity[p] = s.opacity;
            out.depth[p] = s.depth;
            out.steps[p] = s.steps;
        }
    }
    out
}

/// Renders `cam`: finds the start cell (exact nearest site) and traces every pixel.
pub fn render(scene: &Scene, cam: &Camera, opts: &TraceOptions) -> Result<RenderOutput, RenderError> {
    check_options(scene, opts)?;
    let start = start_cell(scene, cam.position.to_array()).ok_or(RenderError::EmptyScene)?;
    Ok(render_from(scene, cam, start, opts))
}
