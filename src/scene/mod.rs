//! The scene model: a trained Radiant Foam scene as structure-of-arrays.
//!
//! Field semantics follow the original trainer's `scene.ply` (see `ply_write.rs`):
//! density is already activated, colour is the quantised SH DC term, and the
//! adjacency is a CSR whose offsets are *exclusive ends*.

pub mod error;
mod partition_view;
mod ply_ascii;
pub mod ply_read;
pub mod ply_schema;
pub mod ply_write;
pub mod random;
pub mod stats;
pub mod validate;

pub use error::{Problem, SceneError};
pub use ply_read::{LoadedScene, load_scene, read_scene, read_scene_bytes, read_scene_from};
pub use ply_schema::PlyFormat;

/// Number of non-DC SH floats stored per site for an SH degree (0..=3): 3·((d+1)²−1).
pub const fn sh_rest_len(degree: u8) -> usize {
    let d = degree as usize;
    3 * ((d + 1) * (d + 1) - 1)
}

/// SH degree for a per-site count of `color_sh_*` floats, if it is one of 0, 9, 24, 45.
pub fn sh_degree_for_len(k: usize) -> Option<u8> {
    (0..=3u8).find(|&d| sh_rest_len(d) == k)
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Scene {
    /// Voronoi sites.
    pub positions: Vec<[f32; 3]>,
    /// Activated density σ (softplus already applied by the trainer).
    pub density: Vec<f32>,
    /// SH DC colour as stored: `clip(255·(0.5 + C0·dc), 0, 255)`.
    pub color: Vec<[u8; 3]>,
    /// SH degree of `sh_rest` (0..=3).
    pub sh_degree: u8,
    /// `sh_rest_len(sh_degree)` floats per site, in the file's interleaved order:
    /// index `3·(k−1)+c` is coefficient k ≥ 1 of channel c.
    pub sh_rest: Vec<f32>,
    /// Exclusive end of each site's neighbour slice in `adjacency`.
    pub adjacency_end: Vec<u32>,
    /// Flat neighbour list (Delaunay edges, symmetric).
    pub adjacency: Vec<u32>,
}

impl Scene {
    pub fn len(&self) -> usize {
        self.positions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }

    pub fn sh_rest_len(&self) -> usize {
        sh_rest_len(self.sh_degree)
    }

    /// Start of site `i`'s neighbour slice (the previous site's end, 0 for the first).
    pub fn adjacency_start(&self, i: usize) -> usize {
        if i == 0 { 0 } else { self.adjacency_end[i - 1] as usize }
    }

    pub fn neighbours(&self, i: usize) -> &[u32] {
        &self.adjacency[self.adjacency_start(i)..self.adjacency_end[i] as usize]
    }

    pub fn sh_coeffs(&self, i: usize) -> &[f32] {
        let k = self.sh_rest_len();
        &self.sh_rest[i * k..(i + 1) * k]
    }

    /// Frees the coefficients beyond DC, leaving the scene DC only: for a caller done
    /// with them, such as `render` once its plan has packed what the tiles carry. On a
    /// trained scene (degree 3) they are two thirds of its bytes.
    pub fn drop_sh(&mut self) {
        self.sh_rest = Vec::new();
        self.sh_degree = 0;
    }

    /// Axis-aligned bounds of the sites; `None` for an empty scene.
    pub fn bbox(&self) -> Option<([f32; 3], [f32; 3])> {
        let first = *self.positions.first()?;
        Some(self.positions.iter().fold((first, first), |(mut lo, mut hi), p| {
            for a in 0..3 {
                lo[a] = lo[a].min(p[a]);
                hi[a] = hi[a].max(p[a]);
            }
            (lo, hi)
        }))
    }

    /// Bytes the arrays occupy in memory (used by memory budgets in benchmarks).
    pub fn heap_bytes(&self) -> usize {
        self.positions.len() * 12
            + self.density.len() * 4
            + self.color.len() * 3
            + self.sh_rest.len() * 4
            + self.adjacency_end.len() * 4
            + self.adjacency.len() * 4
    }
}
