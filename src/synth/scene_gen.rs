//! Builds a Scene that looks like a trained foam: most sites in a thin skin on surfaces
//! with high density, graded layers of sites off the surfaces (near-zero density on the
//! air side, opaque on the solid side) so cells stay compact, sparse near-zero-density
//! sites in the empty space, and a far shell of zero-density sites as the trainer adds.

use super::presets::{self, Grading, Preset};
use super::rng::Rng;
use super::shapes::{self, V3};
use super::voronoi::{self, VoronoiError};
use crate::scene::{Scene, sh_rest_len};

pub const MIN_CELLS: usize = 1_000;
/// Beyond this the adjacency would need more memory than a workstation should give a
/// synthetic scene (~150 B per site at its peak).
pub const MAX_CELLS: usize = 20_000_000;

/// Share of a surface's sites in its skin; the rest form the graded layers.
const SKIN: f64 = 0.7;
/// Skin density times the surface's site spacing: rays stop within a few skin cells.
const OPACITY: f64 = 6.0;

#[derive(Clone, Debug)]
pub struct Params {
    pub cells: usize,
    pub seed: u64,
    pub sh_degree: u8,
    pub preset: String,
}

#[derive(Debug, thiserror::Error)]
pub enum SynthError {
    #[error("--cells {0} is below the minimum of {MIN_CELLS}")]
    TooFew(usize),
    #[error("--cells {0} is above the maximum of {MAX_CELLS}")]
    TooMany(usize),
    #[error("unknown preset {0:?} (known: {known})", known = presets::NAMES.join(", "))]
    UnknownPreset(String),
    #[error("--sh-degree {0} is out of range (0..=3)")]
    ShDegree(u8),
    #[error("adjacency: {0}")]
    Voronoi(VoronoiError),
}

// By hand rather than #[from]: that would also make the error its source, and the
// CLI's chain of causes would print it twice.
impl From<VoronoiError> for SynthError {
    fn from(e: VoronoiError) -> Self {
        SynthError::Voronoi(e)
    }
}

/// Sites before they are ordered and meshed.
#[derive(Default)]
struct Sites {
    p: Vec<V3>,
    density: Vec<f32>,
    rgb: Vec<V3>,
}

impl Sites {
    fn push(&mut self, p: V3, density: f64, rgb: V3) {
        self.p.push(p);
        self.density.push(density.max(0.0) as f32);
        self.rgb.push(rgb);
    }
}

pub fn check(params: &Params) -> Result<Preset, SynthError> {
    if params.cells < MIN_CELLS {
        return Err(SynthError::TooFew(params.cells));
    }
    if params.cells > MAX_CELLS {
        return Err(SynthError::TooMany(params.cells));
    }
    if params.sh_degree > 3 {
        return Err(SynthError::ShDegree(params.sh_degree));
    }
    presets::by_name(&params.preset).ok_or_else(|| SynthError::UnknownPreset(params.preset.clone()))
}

/// Far-shell site count: the trainer's 5,000 for full-size scenes, scaled down for small ones.
pub fn shell_count(cells: usize) -> usize {
    (cells / 200).clamp(32, 5_000)
}

pub fn generate(params: &Params, progress: &dyn Fn(&str)) -> Result<Scene, SynthError> {
    let preset = check(params)?;
    let n = params.cells;
    progress("placing sites");
    let mut sites = Sites::default();
    let shell = shell_count(n);
    match preset.grading {
        Grading::Layers { air } => {
            let fill = n / 10;
            place_surfaces(&preset, n - shell - fill, params.seed, &mut sites);
            place_fill(&preset, air, fill, params.seed, &mut sites);
        }
        Grading::Smooth { rate } => {
            let fill = smooth_fill_count(&preset, rate).min(n / 10);
            place_graded_surfaces(&preset, rate, n - shell - fill, params.seed, &mut sites);
            place_graded_fill(&preset, fill, params.seed, &mut sites);
        }
    }
    place_shell(&preset, shell, params.seed, &mut sites);
    debug_assert_eq!(sites.p.len(), n);

    // Spatial order: the adjacency search walks it, and renderers and partitioners get
    // neighbouring cells close together in memory.
    let mut positions: Vec<[f32; 3]> = sites.p.iter().map(|p| p.map(|x| x as f32)).collect();
    let order = voronoi::morton_order(&positions);
    positions = order.iter().map(|&i| positions[i as usize]).collect();
    separate_duplicates(&mut positions);

    progress("computing Voronoi adjacency");
    let adj = voronoi::adjacency(&positions)?;

    let k = sh_rest_len(params.sh_degree);
    let mut sh_rest = Vec::with_capacity(n * k);
    let mut sh_rng = Rng::stream(params.seed, 4);
    for _ in 0..n {
        push_sh(&mut sh_rng, params.sh_degree, &mut sh_rest);
    }
    Ok(Scene {
        density: order.iter().map(|&i| sites.density[i as usize]).collect(),
        color: order.iter().map(|&i| quantise(sites.rgb[i as usize])).collect(),
        positions,
        sh_degree: params.sh_degree,
        sh_rest,
        adjacency_end: adj.end,
        adjacency: adj.neighbours,
    })
}

/// Sites per surface: `budget` shared by area times detail.
fn surface_counts(preset: &Preset, budget: usize) -> Vec<usize> {
    let share = |s: &presets::Surface| s.shape.area() * s.detail;
    let total: f64 = preset.surfaces.iter().map(share).sum();
    let mut counts: Vec<usize> =
        preset.surfaces.iter().map(|s| (budget as f64 * share(s) / total).floor() as usize).collect();
    // The rounding remainder goes to the first surface.
    counts[0] += budget - counts.iter().sum::<usize>();
    counts
}

/// One site to place near a surface: where on it, its colour there, a density
/// jitter, the surface's site spacing (`spacing(area, sites)`) and how deep its solid
/// goes.
struct SurfaceSite {
    at: shapes::Sample,
    rgb: V3,
    jitter: f64,
    spacing: f64,
    depth: f64,
}

/// Shares `budget` sites over the surfaces and calls `place` for each with its
/// surface's own random stream.
fn for_surface_sites(
    preset: &Preset,
    budget: usize,
    seed: u64,
    spacing: impl Fn(f64, usize) -> f64,
    mut place: impl FnMut(&mut Rng, SurfaceSite),
) {
    let counts = surface_counts(preset, budget);
    for (idx, (surf, &count)) in preset.surfaces.iter().zip(&counts).enumerate() {
        let mut r = Rng::stream(seed, 100 + idx as u64);
        let (spacing, depth) = (spacing(surf.shape.area(), count.max(1)), surf.shape.depth());
        for _ in 0..count {
            let at = surf.shape.sample(&mut r);
            let rgb = surf.pattern.colour(at.p);
            let jitter = r.range(0.8, 1.2);
            place(&mut r, SurfaceSite { at, rgb, jitter, spacing, depth });
        }
    }
}

fn place_surfaces(preset: &Preset, budget: usize, seed: u64, sites: &mut Sites) {
    let spacing = |area: f64, count: usize| (area / (SKIN * count as f64)).sqrt();
    for_surface_sites(preset, budget, seed, spacing, |r, x| {
        let (s, sigma) = (&x.at, OPACITY / x.spacing);
        if r.f64() < SKIN {
            // A slab one spacing thick: skin cells are about as deep as they are wide,
            // which keeps the neighbour searches short.
            let h = x.spacing * r.range(-0.5, 0.5);
            sites.push(shapes::offset(s.p, s.n, h), sigma * x.jitter, x.rgb);
            return;
        }
        // Layer j sits ~2^(j-1) spacings off the surface and holds 1/4 of layer j-1's
        // sites, so its lateral spacing grows with its height and cells stay round.
        let mut j = 1;
        while j < 10 && r.f64() < 0.25 {
            j += 1;
        }
        let h = x.spacing * (0.5 + (1u32 << (j - 1)) as f64 * r.range(0.6, 1.4));
        if r.f64() < 0.6 {
            sites.push(shapes::offset(s.p, s.n, h), 1e-3 * r.f64(), x.rgb);
        } else {
            let h = h.min(x.depth * r.range(0.3, 1.0));
            sites.push(shapes::offset(s.p, s.n, -h), 0.5 * sigma * x.jitter, x.rgb);
        }
    });
}

/// Sites graded smoothly off every surface, half on either side: the spacing is `h`
/// at the surface and `h + rate·t` at distance `t`, so the sites lie at a distance
/// with density ∝ (h + rate·t)⁻³ and a side holds 1/(2·rate·h²) of them per unit of
/// area. Sites within half a spacing of the surface are its opaque skin; deeper on
/// the solid side they are half as dense, on the air side nearly empty. A solid too
/// thin for a site's distance sends it to the air side.
fn place_graded_surfaces(preset: &Preset, rate: f64, budget: usize, seed: u64, sites: &mut Sites) {
    let farthest = 0.8 * preset.shell_radius;
    let spacing = |area: f64, count: usize| (area / (rate * count as f64)).sqrt();
    for_surface_sites(preset, budget, seed, spacing, |r, x| {
        let (s, sigma) = (&x.at, OPACITY / x.spacing);
        // Inverse of the distance's distribution, 1 − (h / (h + rate·t))².
        let t = loop {
            let t = x.spacing / rate * ((1.0 - r.f64()).powf(-0.5) - 1.0);
            if t < farthest {
                break t;
            }
        };
        let solid = r.f64() < 0.5 && t < x.depth;
        let (h, density) = if t < 0.5 * x.spacing {
            (if solid { -t } else { t }, sigma * x.jitter)
        } else if solid {
            (-t, 0.5 * sigma * x.jitter)
        } else {
            (t, 1e-3 * r.f64())
        };
        sites.push(shapes::offset(s.p, s.n, h), density, x.rgb);
    });
}

/// Radii of the fill around the scene's centre: from well inside the scene, so no
/// region (under the ground, inside a solid) is left without sites — a hole would
/// give one huge cell that meets hundreds of others — to inside the far shell.
fn fill_radii(preset: &Preset) -> (f64, f64) {
    (0.5, 0.8 * preset.shell_radius)
}

/// Sites that fill space at spacing `rate·r` at radius r (density (rate·r)⁻³), as
/// far from every surface the graded sites thin out at the same rate.
fn smooth_fill_count(preset: &Preset, rate: f64) -> usize {
    let (inner, outer) = fill_radii(preset);
    (4.0 * std::f64::consts::PI / rate.powi(3) * (outer / inner).ln()).ceil() as usize
}

/// `count` near-zero-density sites uniform in log-radius between the fill radii.
fn place_graded_fill(preset: &Preset, count: usize, seed: u64, sites: &mut Sites) {
    let mut r = Rng::stream(seed, 2);
    let (inner, outer) = fill_radii(preset);
    for _ in 0..count {
        let rad = inner * (outer / inner).powf(r.f64());
        let grey = 0.5 + 0.1 * r.normal();
        sites.push(shapes::offset([0.0; 3], r.unit_vector(), rad), 1e-4 * r.f64(), [grey; 3]);
    }
}

/// Sparse sites in empty space: half spread through the `air` box, half thinning out
/// towards the shell (uniform in log-radius).
fn place_fill(preset: &Preset, (lo, hi): ([f64; 3], [f64; 3]), count: usize, seed: u64, sites: &mut Sites) {
    let mut r = Rng::stream(seed, 2);
    let (inner, outer) = fill_radii(preset);
    for i in 0..count {
        let p = if i % 2 == 0 {
            [0, 1, 2].map(|a| r.range(lo[a], hi[a]))
        } else {
            let rad = inner * (outer / inner).powf(r.f64());
            shapes::offset([0.0; 3], r.unit_vector(), rad)
        };
        let grey = 0.5 + 0.1 * r.normal();
        sites.push(p, 1e-4 * r.f64(), [grey; 3]);
    }
}

/// Evenly spread (Fibonacci) directions with a little jitter, at the shell radius.
fn place_shell(preset: &Preset, count: usize, seed: u64, sites: &mut Sites) {
    let mut r = Rng::stream(seed, 3);
    let golden = std::f64::consts::PI * (3.0 - 5f64.sqrt());
    for i in 0..count {
        let z = 1.0 - (2.0 * i as f64 + 1.0) / count as f64;
        let rho = (1.0 - z * z).sqrt();
        let phi = golden * i as f64 + r.range(-0.1, 0.1);
        let rad = preset.shell_radius * r.range(0.98, 1.02);
        sites.push([rad * rho * phi.cos(), rad * rho * phi.sin(), rad * z], 0.0, [0.5; 3]);
    }
}

/// Nudges exact duplicates (possible after rounding to f32) apart by one ulp in x; sorted
/// by Morton code, duplicates are adjacent.
fn separate_duplicates(positions: &mut [[f32; 3]]) {
    for i in 1..positions.len() {
        while positions[..i].last() == Some(&positions[i]) {
            positions[i][0] = f32::from_bits(positions[i][0].to_bits() + 1);
        }
    }
}

/// The stored colour: `clip(255·(0.5 + C0·dc))` of a DC term whose colour is `rgb`.
fn quantise(rgb: V3) -> [u8; 3] {
    rgb.map(|c| (255.0 * c).round().clamp(0.0, 255.0) as u8)
}

/// Small view-dependent terms: coefficient k (band l) of each channel ~ N(0, (0.04/l)²),
/// interleaved as coefficient-major, channel-minor.
fn push_sh(r: &mut Rng, degree: u8, out: &mut Vec<f32>) {
    let coeffs = (degree as usize + 1).pow(2);
    for k in 1..coeffs {
        let l = (k as f64).sqrt().floor();
        for _ in 0..3 {
            out.push((0.04 / l * r.normal()) as f32);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicates_are_separated() {
        let mut p = vec![[1.0f32, 2.0, 3.0]; 3];
        separate_duplicates(&mut p);
        assert!(p[0] != p[1] && p[1] != p[2]);
    }

    #[test]
    fn quantise_clips() {
        assert_eq!(quantise([-0.2, 0.5, 1.3]), [0, 128, 255]);
    }
}
