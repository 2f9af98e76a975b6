//! Semantic checks of a decoded scene: array shapes, CSR offsets, neighbour indices,
//! symmetry of the Delaunay adjacency, and finite, non-negative values.
//!
//! Sites are checked in parallel but the fault reported is always the one at the lowest
//! vertex index, so messages are deterministic.

use std::collections::HashMap;

use rayon::prelude::*;

use super::Scene;
use super::error::{Elem, Problem};

/// Neighbour slices longer than this get a sorted copy for binary search, so a hub site
/// with thousands of neighbours cannot make the symmetry check quadratic.
const SHORT_SLICE: usize = 32;

pub fn validate(scene: &Scene) -> Result<(), Problem> {
    check_shapes(scene)?;
    check_offsets(scene)?;
    let long = sorted_long_slices(scene);
    // Faults within one site (values, ranges, self-loops, repeats) everywhere come first:
    // a bad index would otherwise surface as a confusing asymmetry at an earlier site.
    first_fault(scene, |i| check_values(scene, i).or_else(|| check_slice(scene, &long, i)))?;
    if forward_entries_mirrored(scene, &long) {
        return Ok(());
    }
    first_fault(scene, |i| check_symmetry(scene, &long, i))
}

/// Half-cost symmetry test. With no repeated entries, if every entry i→j with i < j has
/// its mirror j→i, mirroring is an injection from the forward entries into the backward
/// ones; equal counts make it a bijection, so every backward entry is mirrored too.
/// When this fails, the full per-site check finds the first fault to report.
fn forward_entries_mirrored(scene: &Scene, long: &HashMap<u32, Vec<u32>>) -> bool {
    let (forward, mirrored) = (0..scene.len())
        .into_par_iter()
        .with_min_len(1024)
        .map(|i| {
            let mut forward = 0usize;
            let mut mirrored = true;
            for &j in scene.neighbours(i) {
                if j as usize > i {
                    forward += 1;
                    mirrored &= lists(scene, long, j as usize, i as u32);
                }
            }
            (forward, mirrored)
        })
        .reduce(|| (0, true), |a, b| (a.0 + b.0, a.1 & b.1));
    mirrored && 2 * forward == scene.adjacency.len()
}

/// The fault at the lowest vertex index, checking sites in parallel.
fn first_fault(scene: &Scene, check: impl Fn(usize) -> Option<Problem> + Sync + Send) -> Result<(), Problem> {
    (0..scene.len()).into_par_iter().with_min_len(1024).find_map_first(check).map_or(Ok(()), Err)
}

/// Array lengths agree (always true for decoded files; guards scenes built in code).
fn check_shapes(scene: &Scene) -> Result<(), Problem> {
    let n = scene.len();
    let bad = |what: &str, len: usize, want: usize| {
        Err(Problem::element(Elem::Vertex, format!("{what} has {len} entries, expected {want}")))
    };
    if scene.sh_degree > 3 {
        return Err(Problem::element(Elem::Vertex, format!("SH degree {} is above 3", scene.sh_degree)));
    }
    if n == 0 {
        return Err(Problem::element(Elem::Vertex, "count is 0; a scene needs at least one site"));
    }
    for (what, len) in [
        ("density", scene.density.len()),
        ("colour", scene.color.len()),
        ("adjacency_offset", scene.adjacency_end.len()),
    ] {
        if len != n {
            return bad(what, len, n);
        }
    }
    if scene.sh_rest.len() != n * scene.sh_rest_len() {
        return bad("color_sh", scene.sh_rest.len(), n * scene.sh_rest_len());
    }
    Ok(())
}

fn check_offsets(scene: &Scene) -> Result<(), Problem> {
    let m = scene.adjacency.len();
    let mut prev = 0u32;
    for (i, &end) in scene.adjacency_end.iter().enumerate() {
        if end < prev {
            return Err(Problem::record(
                Elem::Vertex,
                i,
                format!("adjacency_offset {end} is below the previous end {prev}"),
            ));
        }
        if end as usize > m {
            return Err(Problem::record(
                Elem::Vertex,
                i,
                format!("adjacency_offset {end} is past the end of the {m} adjacency entries"),
            ));
        }
        prev = end;
    }
    if prev as usize != m {
        return Err(Problem::record(
            Elem::Vertex,
            scene.len() - 1,
            format!(
                "the last adjacency_offset {prev} must equal the adjacency count {m} \
                 (offsets are exclusive ends)"
            ),
        ));
    }
    Ok(())
}

fn sorted_long_slices(scene: &Scene) -> HashMap<u32, Vec<u32>> {
    (0..scene.len())
        .into_par_iter()
        .filter(|&i| scene.neighbours(i).len() > SHORT_SLICE)
        .map(|i| {
            let mut s = scene.neighbours(i).to_vec();
            s.sort_unstable();
            (i as u32, s)
        })
        .collect()
}

fn check_values(scene: &Scene, i: usize) -> Option<Problem> {
    let bad = |detail: String| Some(Problem::record(Elem::Vertex, i, detail));
    for (v, name) in scene.positions[i].into_iter().zip(["x", "y", "z"]) {
        if !v.is_finite() {
            return bad(format!("{name} is {v}"));
        }
    }
    let d = scene.density[i];
    if !d.is_finite() {
        return bad(format!("density is {d}"));
    }
    if d < 0.0 {
        return bad(format!("density {d} is negative"));
    }
    if let Some(k) = scene.sh_coeffs(i).iter().position(|v| !v.is_finite()) {
        return bad(format!("color_sh_{k} is {}", scene.sh_coeffs(i)[k]));
    }
    None
}

fn check_slice(scene: &Scene, long: &HashMap<u32, Vec<u32>>, i: usize) -> Option<Problem> {
    let n = scene.len();
    let start = scene.adjacency_start(i);
    let slice = scene.neighbours(i);
    for (p, &j) in slice.iter().enumerate() {
        let bad = |detail: String| Some(Problem::record(Elem::Adjacency, start + p, detail));
        if j as usize >= n {
            return bad(format!("neighbour {j} of vertex {i} is out of range ({n} vertices)"));
        }
        if j as usize == i {
            return bad(format!("vertex {i} lists itself as a neighbour"));
        }
        if repeats_earlier(slice, sorted_of(long, slice.len(), i), p) {
            return bad(format!("vertex {i} lists neighbour {j} twice"));
        }
    }
    None
}

/// Every neighbour of site `i` lists `i` back; needs valid offsets and indices.
fn check_symmetry(scene: &Scene, long: &HashMap<u32, Vec<u32>>, i: usize) -> Option<Problem> {
    let start = scene.adjacency_start(i);
    let slice = scene.neighbours(i);
    for (p, &j) in slice.iter().enumerate() {
        let bad = |detail: String| Some(Problem::record(Elem::Adjacency, start + p, detail));
        if !lists(scene, long, j as usize, i as u32) {
            return bad(format!("vertex {i} lists neighbour {j}, but vertex {j} does not list {i}"));
        }
    }
    None
}

/// Whether `slice[p]` already occurred in `slice[..p]`.
fn repeats_earlier(slice: &[u32], sorted: Option<&Vec<u32>>, p: usize) -> bool {
    let v = slice[p];
    match sorted {
        None => has(&slice[..p], v),
        // Only scan the prefix when the value is present more than once at all.
        Some(s) => {
            let first = s.partition_point(|&x| x < v);
            s.get(first + 1) == Some(&v) && has(&slice[..p], v)
        }
    }
}

/// The sorted copy of a site's slice, if it is long enough to have one (looked up only
/// then: hashing on every check would dominate the run time).
#[inline]
fn sorted_of(long: &HashMap<u32, Vec<u32>>, len: usize, site: usize) -> Option<&Vec<u32>> {
    if len > SHORT_SLICE { long.get(&(site as u32)) } else { None }
}

#[inline]
fn lists(scene: &Scene, long: &HashMap<u32, Vec<u32>>, site: usize, who: u32) -> bool {
    let slice = scene.neighbours(site);
    match sorted_of(long, slice.len(), site) {
        Some(sorted) => sorted.binary_search(&who).is_ok(),
        None => has(slice, who),
    }
}

/// Branch-free membership test: it vectorises, unlike the early-exit `contains`, which
/// matters because it runs twice per adjacency entry.
#[inline]
fn has(slice: &[u32], v: u32) -> bool {
    // Groups of four keep typical 15-entry slices mostly in vector compares.
    let (quads, tail) = slice.as_chunks::<4>();
    let mut found = false;
    for q in quads {
        found |= (q[0] == v) | (q[1] == v) | (q[2] == v) | (q[3] == v);
    }
    for &x in tail {
        found |= x == v;
    }
    found
}
