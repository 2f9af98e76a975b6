//! Voronoi (Delaunay) adjacency of a point set by clipping each cell with the bisector
//! planes of its nearest neighbours.
//!
//! Each cell starts as the clip domain and is cut by the bisectors of its nearest sites in
//! order of distance. A neighbour farther than twice the cell's radius (largest
//! site-to-vertex distance) cannot cut it — the security-radius test — so clipping stops
//! there. When the nearest sites run out first (flattened surface cells, sparse cells by a
//! dense sheet), each remaining vertex is checked on its own: it is final once the sphere
//! through the site centred on it holds no other site, which asks the tree only about the
//! few sites near the vertex instead of every site in the cell's security ball. Two sites
//! are adjacent iff each one's bisector bounds a face of non-zero area of the other's cell.
//!
//! The clip domain is the sites' bounding box with a margin, intersected with a polytope
//! circumscribing their bounding sphere. Every cell is its Voronoi cell intersected with
//! this common domain, so the adjacency of a site whose cell does not touch the domain is
//! exactly its Delaunay neighbour set; cells on the outer shell lose the faces (hull edges)
//! the domain cuts away. The sphere polytope keeps the cells of far, sparse shell sites
//! small, which keeps their neighbour searches short.

use std::num::NonZeroUsize;

use kiddo::{Eytzinger, ImmutableKdTree, QueryScratch, SquaredEuclidean};
use rayon::prelude::*;

use super::cell::{ConvexCell, DOMAIN, bisector};

/// Neighbours fetched in a first search; most cells of a trained-looking foam finish here.
const FIRST_K: usize = 40;
/// Sites fetched per vertex check: the site and the (usually three) owners of the
/// vertex's planes lie on its sphere, so the rest show whether anything is inside.
const PROBE: usize = 8;
/// Sites per parallel work item (consecutive in Morton order, so their searches share cache).
const CHUNK: usize = 2048;
/// Planes of the polytope around the bounding sphere.
const SPHERE_PLANES: usize = 128;
/// Relative margin of the domain around the sites.
const MARGIN: f64 = 0.05;
/// Slack on the security-radius test: the tree ranks candidates by f32 distances.
const SAFETY: f64 = 1.0 + 1e-5;
/// A face whose area is below this fraction of |q−p|² is a rounding artefact, not a face.
const MIN_REL_AREA: f64 = 1e-18;

#[derive(Debug, thiserror::Error)]
pub enum VoronoiError {
    #[error("site {0} has a non-finite coordinate")]
    NonFinite(usize),
    #[error("sites {0} and {1} coincide")]
    Duplicate(usize, usize),
    #[error("too many sites for u32 indices: {0}")]
    TooMany(usize),
    #[error("Voronoi cell of site {0} degenerated while clipping ({1:?})")]
    Degenerate(usize, super::cell::ClipError),
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Adjacency {
    /// Exclusive end of each site's neighbour slice (the scene.ply convention).
    pub end: Vec<u32>,
    /// Neighbours of each site, ascending.
    pub neighbours: Vec<u32>,
    /// Whether the site's cell touches the clip domain (outer shell).
    pub on_boundary: Vec<bool>,
    /// Directed edges whose reverse the other cell did not find, added by symmetrisation.
    /// Zero in exact arithmetic; tests pin it at zero for sites in general position.
    pub asymmetric: usize,
}

impl Adjacency {
    pub fn of(&self, i: usize) -> &[u32] {
        let start = if i == 0 { 0 } else { self.end[i - 1] as usize };
        &self.neighbours[start..self.end[i] as usize]
    }
}

/// Clip domain shared by all cells.
#[derive(Clone, Debug)]
pub struct Domain {
    lo: [f64; 3],
    hi: [f64; 3],
    /// Half-spaces `n·x ≤ d` in world coordinates, circumscribing the bounding sphere.
    sphere: Vec<[f64; 4]>,
    centre: [f64; 3],
    /// Radius of the ball the sphere polytope contains: cells inside it are never cut.
    inner: f64,
}

impl Domain {
    pub fn around(points: &[[f32; 3]]) -> Domain {
        let mut lo = [f64::INFINITY; 3];
        let mut hi = [f64::NEG_INFINITY; 3];
        for p in points {
            for a in 0..3 {
                lo[a] = lo[a].min(p[a] as f64);
                hi[a] = hi[a].max(p[a] as f64);
            }
        }
        let centre = [0, 1, 2].map(|a| 0.5 * (lo[a] + hi[a]));
        let radius = points
            .iter()
            .map(|p| (0..3).map(|a| (p[a] as f64 - centre[a]).powi(2)).sum::<f64>())
            .fold(0.0, f64::max)
            .sqrt();
        let extent = (0..3).map(|a| hi[a] - lo[a]).fold(0.0, f64::max).max(1e-6);
        let pad = MARGIN * extent;
        let lo = lo.map(|x| x - pad);
        let hi = hi.map(|x| x + pad);
        let d_sphere = radius + pad;
        // Fibonacci-sphere directions: an even, deterministic spread.
        let golden = std::f64::consts::PI * (3.0 - 5f64.sqrt());
        let sphere = (0..SPHERE_PLANES)
            .map(|i| {
                let z = 1.0 - (2.0 * i as f64 + 1.0) / SPHERE_PLANES as f64;
                let r = (1.0 - z * z).sqrt();
                let phi = golden * i as f64;
                let n = [r * phi.cos(), r * phi.sin(), z];
                let d = d_sphere + n[0] * centre[0] + n[1] * centre[1] + n[2] * centre[2];
                [n[0], n[1], n[2], d]
            })
            .collect();
        Domain { lo, hi, sphere, centre, inner: d_sphere }
    }

    fn start(&self, cell: &mut ConvexCell, p: [f32; 3]) {
        let p = p.map(f64::from);
        cell.reset_box([0, 1, 2].map(|a| self.lo[a] - p[a]), [0, 1, 2].map(|a| self.hi[a] - p[a]));
    }

    /// Clips by the sphere polytope unless the cell's ball lies inside it; returns whether
    /// it clipped (after which later calls for this cell are unnecessary).
    fn clip_sphere(&self, cell: &mut ConvexCell, p: [f32; 3]) -> Result<bool, super::cell::ClipError> {
        let p = p.map(f64::from);
        let off: f64 = (0..3).map(|a| (p[a] - self.centre[a]).powi(2)).sum::<f64>().sqrt();
        if off + cell.radius2().sqrt() < self.inner {
            return Ok(false);
        }
        for s in &self.sphere {
            let d = s[3] - (s[0] * p[0] + s[1] * p[1] + s[2] * p[2]);
            cell.clip([s[0], s[1], s[2], d], DOMAIN)?;
        }
        Ok(true)
    }
}

/// Interleaves the top 21 bits of three quantised coordinates into a Morton code.
fn morton(q: [u32; 3]) -> u64 {
    fn spread(x: u32) -> u64 {
        let mut x = (x & 0x1F_FFFF) as u64;
        x = (x | x << 32) & 0x1F_0000_0000_FFFF;
        x = (x | x << 16) & 0x1F_0000_FF00_00FF;
        x = (x | x << 8) & 0x100F_00F0_0F00_F00F;
        x = (x | x << 4) & 0x10C3_0C30_C30C_30C3;
        x = (x | x << 2) & 0x1249_2492_4924_9249;
        x
    }
    spread(q[0]) | spread(q[1]) << 1 | spread(q[2]) << 2
}

/// Site indices sorted along a Morton curve over the sites' bounding box.
pub fn morton_order(points: &[[f32; 3]]) -> Vec<u32> {
    let mut lo = [f32::INFINITY; 3];
    let mut hi = [f32::NEG_INFINITY; 3];
    for p in points {
        for a in 0..3 {
            lo[a] = lo[a].min(p[a]);
            hi[a] = hi[a].max(p[a]);
        }
    }
    let scale = [0, 1, 2].map(|a| {
        let e = (hi[a] as f64 - lo[a] as f64).max(1e-30);
        ((1u32 << 21) - 1) as f64 / e
    });
    let mut keyed: Vec<(u64, u32)> = points
        .par_iter()
        .enumerate()
        .map(|(i, p)| {
            let q = [0, 1, 2].map(|a| ((p[a] as f64 - lo[a] as f64) * scale[a]) as u32);
            (morton(q), i as u32)
        })
        .collect();
    keyed.par_sort_unstable();
    keyed.into_iter().map(|(_, i)| i).collect()
}

/// Per-thread state: the cell and its scratch buffers.
#[derive(Default)]
struct Worker {
    cell: ConvexCell,
    candidates: Vec<(f64, u32)>,
    faces: Vec<(u32, f64)>,
    face_scratch: Vec<u64>,
    /// Sites clipped while checking vertices, beyond the first candidates.
    extra: Vec<u32>,
    /// Squared radius of the next first search, adapted from the previous site's (its
    /// neighbour along the Morton curve); zero when unknown.
    reach2: f32,
    scratch: Option<QueryScratch<Eytzinger, f32, 3>>,
}

/// One chunk's output: for each site, its neighbours (ascending) and boundary flag.
struct ChunkOut {
    sites: Vec<u32>,
    counts: Vec<u32>,
    neighbours: Vec<u32>,
    boundary: Vec<bool>,
}

pub fn adjacency(points: &[[f32; 3]]) -> Result<Adjacency, VoronoiError> {
    let n = points.len();
    if n > u32::MAX as usize - 1 {
        return Err(VoronoiError::TooMany(n));
    }
    if let Some(i) = points.iter().position(|p| p.iter().any(|x| !x.is_finite())) {
        return Err(VoronoiError::NonFinite(i));
    }
    if n == 0 {
        return Ok(Adjacency::default());
    }
    let domain = Domain::around(points);
    let tree: ImmutableKdTree<f32, 3> =
        ImmutableKdTree::new_from_slice(points).expect("kd-tree construction over finite points");
    let order = morton_order(points);

    let chunks: Vec<ChunkOut> = order
        .par_chunks(CHUNK)
        .map_init(Worker::default, |w, sites| {
            let mut out = ChunkOut {
                sites: sites.to_vec(),
                counts: Vec::with_capacity(sites.len()),
                neighbours: Vec::with_capacity(sites.len() * 16),
                boundary: Vec::with_capacity(sites.len()),
            };
            // Each chunk starts afresh, so results never depend on how rayon splits work.
            w.reach2 = 0.0;
            for &i in sites {
                let before = out.neighbours.len();
                let touches = cell_neighbours(points, &tree, &domain, i as usize, w, &mut out.neighbours)?;
                out.counts.push((out.neighbours.len() - before) as u32);
                out.boundary.push(touches);
            }
            Ok(out)
        })
        .collect::<Result<_, VoronoiError>>()?;

    // Scatter the chunks into per-site lists.
    let mut counts = vec![0u32; n];
    let mut on_boundary = vec![false; n];
    for c in &chunks {
        for (k, &i) in c.sites.iter().enumerate() {
            counts[i as usize] = c.counts[k];
            on_boundary[i as usize] = c.boundary[k];
        }
    }
    let mut start = vec![0usize; n + 1];
    for i in 0..n {
        start[i + 1] = start[i] + counts[i] as usize;
    }
    let mut neighbours = vec![0u32; start[n]];
    for c in chunks {
        let mut off = 0;
        for (k, &i) in c.sites.iter().enumerate() {
            let len = c.counts[k] as usize;
            let s = start[i as usize];
            neighbours[s..s + len].copy_from_slice(&c.neighbours[off..off + len]);
            off += len;
        }
    }
    symmetrise(start, neighbours, on_boundary)
}

/// Adds the reverse of every edge that one side missed (rounding on near-degenerate faces).
fn symmetrise(start: Vec<usize>, neighbours: Vec<u32>, on_boundary: Vec<bool>) -> Result<Adjacency, VoronoiError> {
    let n = start.len() - 1;
    let list = |i: usize| &neighbours[start[i]..start[i + 1]];
    let missing: Vec<(u32, u32)> = (0..n)
        .into_par_iter()
        .flat_map_iter(|i| {
            list(i)
                .iter()
                .filter(move |&&j| list(j as usize).binary_search(&(i as u32)).is_err())
                .map(move |&j| (j, i as u32))
                .collect::<Vec<_>>()
        })
        .collect();
    let asymmetric = missing.len();
    let (end, neighbours) = if missing.is_empty() {
        (start[1..].iter().map(|&e| e as u32).collect(), neighbours)
    } else {
        let mut extra: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (a, b) in missing {
            extra[a as usize].push(b);
        }
        let mut merged = Vec::with_capacity(neighbours.len() + asymmetric);
        let mut end = Vec::with_capacity(n);
        for (i, more) in extra.iter().enumerate() {
            let from = merged.len();
            merged.extend_from_slice(list(i));
            merged.extend_from_slice(more);
            merged[from..].sort_unstable();
            end.push(merged.len() as u32);
        }
        (end, merged)
    };
    Ok(Adjacency { end, neighbours, on_boundary, asymmetric })
}

/// Clips site `i`'s cell and appends its neighbours (ascending); returns whether the cell
/// touches the domain boundary.
fn cell_neighbours(
    points: &[[f32; 3]],
    tree: &ImmutableKdTree<f32, 3>,
    domain: &Domain,
    i: usize,
    w: &mut Worker,
    out: &mut Vec<u32>,
) -> Result<bool, VoronoiError> {
    let p = points[i];
    let n = points.len();
    let k = FIRST_K.min(n);
    let degenerate = |e| VoronoiError::Degenerate(i, e);
    // Candidates sorted by exact f64 distance, then index, so ties never depend on the
    // tree's internal order. A radius search (cheaper than a k-nearest one) is tried
    // first; every site closer than √covered2 is a candidate (the tree ranks by f32
    // distances, which SAFETY covers).
    w.candidates.clear();
    let mut covered2 = 0.0;
    if w.reach2 > 0.0 {
        let scratch = w.scratch.get_or_insert_with(|| tree.create_scratch::<SquaredEuclidean<f32>>());
        let found = &mut w.candidates;
        tree.query(&p)
            .within::<SquaredEuclidean<f32>>(w.reach2)
            .unsorted()
            .with_scratch(scratch)
            .visit(|r| found.push((0.0, r.item)));
        let count = found.len().saturating_sub(1);
        if count >= k / 2 {
            covered2 = w.reach2 as f64 / SAFETY;
            // Aim the next search at about k sites.
            let scale = (k as f32 / count as f32).powf(2.0 / 3.0).clamp(0.5, 2.0);
            w.reach2 *= scale;
        } else {
            w.candidates.clear();
        }
    }
    if w.candidates.is_empty() {
        let found = tree.query(&p).nearest_n::<SquaredEuclidean<f32>>(NonZeroUsize::new(k).unwrap()).execute();
        w.candidates.extend(found.iter().map(|r| (0.0, r.item)));
        w.reach2 = found.last().map_or(0.0, |r| r.distance);
    }
    let mut kept = 0;
    for c in 0..w.candidates.len() {
        let j = w.candidates[c].1 as usize;
        if j != i {
            w.candidates[kept] = (site_distance2(points, i, j)?, j as u32);
            kept += 1;
        }
    }
    w.candidates.truncate(kept);
    w.candidates.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    if covered2 == 0.0 {
        covered2 = w.candidates.last().map_or(0.0, |c| c.0) / SAFETY;
    }

    domain.start(&mut w.cell, p);
    let mut sphere_clipped = false;
    let mut done = w.candidates.len() + 1 >= n;
    for (c, &(d2, j)) in w.candidates.iter().enumerate() {
        // Cells still large after their nearest neighbours are on the outer shell; the
        // sphere polytope bounds them before the farther candidates are tried.
        if c == FIRST_K / 2 {
            sphere_clipped = domain.clip_sphere(&mut w.cell, p).map_err(degenerate)?;
        }
        // Bisector at distance √d2/2 cannot reach a cell of radius R when d2 > 4R².
        if d2 > SAFETY * 4.0 * w.cell.radius2() {
            done = true;
            break;
        }
        w.cell.clip(bisector(p, points[j as usize]), j).map_err(degenerate)?;
    }
    // The domain belongs to every cell (a no-op for cells well inside it).
    if !sphere_clipped {
        domain.clip_sphere(&mut w.cell, p).map_err(degenerate)?;
    }
    done = done || w.candidates.last().is_some_and(|&(d2, _)| d2 > SAFETY * 4.0 * w.cell.radius2());
    if !done {
        check_vertices(points, tree, i, covered2, w)?;
    }
    w.cell.faces(&mut w.faces, &mut w.face_scratch);
    let from = out.len();
    for &(j, area) in &w.faces {
        let q = points[j as usize];
        let d2: f64 = (0..3).map(|a| (q[a] as f64 - p[a] as f64).powi(2)).sum();
        if area > MIN_REL_AREA * d2 {
            out.push(j);
        }
    }
    out[from..].sort_unstable();
    Ok(w.cell.touches_domain())
}

/// Squared distance between two sites in f64 (exact inputs, so symmetric in i and j).
fn site_distance2(points: &[[f32; 3]], i: usize, j: usize) -> Result<f64, VoronoiError> {
    let (p, q) = (points[i], points[j]);
    let d2: f64 = (0..3).map(|a| (q[a] as f64 - p[a] as f64).powi(2)).sum();
    if d2 == 0.0 {
        return Err(VoronoiError::Duplicate(i.min(j), i.max(j)));
    }
    Ok(d2)
}

/// Finishes a cell that the nearest candidates did not bound: the cell is the Voronoi cell
/// once no site lies strictly inside the sphere through the site centred on any vertex
/// (the empty-circumsphere property), since then no bisector cuts any vertex. Each vertex
/// asks the tree for the sites in its sphere and is cut by them; the vertices a cut creates
/// are checked in turn. Unlike growing the security ball, this never visits the many sites
/// of a dense sheet that a large sparse cell's ball covers but that cannot reach the cell.
fn check_vertices(
    points: &[[f32; 3]],
    tree: &ImmutableKdTree<f32, 3>,
    i: usize,
    covered2: f64,
    w: &mut Worker,
) -> Result<(), VoronoiError> {
    let p = points[i];
    let pd = p.map(f64::from);
    let n = points.len();
    let degenerate = |e| VoronoiError::Degenerate(i, e);
    w.extra.clear();
    while let Some(t) = w.cell.unchecked() {
        let v = w.cell.vertices()[t];
        let r2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
        // The sphere lies in the ball of radius 2|v| around the site, all clipped already.
        if SAFETY * 4.0 * r2 < covered2 {
            w.cell.mark_checked(t);
            continue;
        }
        // The query centre is rounded to f32; widen the radius by that shift and by the
        // tree's f32 distance error so no site inside the exact sphere is missed.
        let c = [0, 1, 2].map(|a| pd[a] + v[a]);
        let cf = c.map(|x| x as f32);
        let shift: f64 = (0..3).map(|a| (c[a] - cf[a] as f64).powi(2)).sum::<f64>().sqrt();
        let reach = (r2.sqrt() + shift) * SAFETY;
        let reach2 = (reach * reach * SAFETY) as f32;
        let mut m = PROBE.min(n);
        loop {
            let found = tree
                .query(&cf)
                .nearest_n::<SquaredEuclidean<f32>>(NonZeroUsize::new(m).unwrap())
                .within(reach2)
                .execute();
            let mut cut = false;
            for r in &found {
                let j = r.item as usize;
                if j == i || w.extra.contains(&(j as u32)) {
                    continue;
                }
                if site_distance2(points, i, j)? < covered2 {
                    continue;
                }
                w.extra.push(j as u32);
                cut |= w.cell.clip(bisector(p, points[j]), j as u32).map_err(degenerate)?;
            }
            if cut {
                // Vertex t may be gone; its survivors and successors are checked anew.
                break;
            }
            if found.len() < m || m >= n {
                w.cell.mark_checked(t);
                break;
            }
            // Sites on the sphere (within rounding) hid the rest of it: look further.
            m = (2 * m).min(n);
        }
    }
    Ok(())
}

/// Reference: clips each cell by every other site's bisector, in the same domain. O(n²);
/// for tests of the accelerated path.
pub fn adjacency_brute_force(points: &[[f32; 3]]) -> Result<Adjacency, VoronoiError> {
    let domain = Domain::around(points);
    let n = points.len();
    let mut cell = ConvexCell::default();
    let (mut faces, mut scratch) = (Vec::new(), Vec::new());
    let mut start = vec![0usize];
    let mut neighbours = Vec::new();
    let mut on_boundary = Vec::new();
    for i in 0..n {
        let p = points[i];
        domain.start(&mut cell, p);
        domain.clip_sphere(&mut cell, p).map_err(|e| VoronoiError::Degenerate(i, e))?;
        for j in (0..n).filter(|&j| j != i) {
            cell.clip(bisector(p, points[j]), j as u32).map_err(|e| VoronoiError::Degenerate(i, e))?;
        }
        cell.faces(&mut faces, &mut scratch);
        let from = neighbours.len();
        for &(j, area) in &faces {
            let q = points[j as usize];
            let d2: f64 = (0..3).map(|a| (q[a] as f64 - p[a] as f64).powi(2)).sum();
            if area > MIN_REL_AREA * d2 {
                neighbours.push(j);
            }
        }
        neighbours[from..].sort_unstable();
        start.push(neighbours.len());
        on_boundary.push(cell.touches_domain());
    }
    symmetrise(start, neighbours, on_boundary)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn morton_interleaves_bits() {
        assert_eq!(morton([1, 0, 0]), 1);
        assert_eq!(morton([0, 1, 0]), 2);
        assert_eq!(morton([0, 0, 1]), 4);
        assert_eq!(morton([3, 0, 0]), 0b1001);
        assert_eq!(morton([0x1F_FFFF; 3]), (1u64 << 63) - 1);
    }

    #[test]
    fn cube_corners_plus_centre() {
        // The centre of a cube is adjacent to all 8 corners (its cell is an octahedron-free
        // cube around it); jitter breaks the cospherical ties deterministically.
        let mut pts = vec![[0.013f32, -0.007, 0.011]];
        for c in 0..8 {
            let s = |b: u32| if c >> b & 1 == 1 { 1.0 } else { -1.0 };
            pts.push([s(0) + 0.01 * c as f32, s(1) - 0.003 * c as f32, s(2) + 0.002 * c as f32]);
        }
        let adj = adjacency(&pts).unwrap();
        assert_eq!(adj.of(0), &[1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(adj, adjacency_brute_force(&pts).unwrap());
    }

    #[test]
    fn duplicate_sites_are_an_error() {
        let pts = vec![[0.0f32; 3], [1.0, 0.0, 0.0], [0.0; 3]];
        assert!(matches!(adjacency(&pts), Err(VoronoiError::Duplicate(0, 2))));
    }
}
