//! The accelerated Voronoi adjacency against two oracles: our own O(n²) clipping (exact
//! equality, domain cells included) and scipy's Delaunay (every site off the outer shell).

mod common;

use std::collections::BTreeSet;
use std::io::Write;

use foam_ipu::synth::rng::Rng;
use foam_ipu::synth::voronoi::{Adjacency, adjacency, adjacency_brute_force};

fn uniform(n: usize, seed: u64) -> Vec<[f32; 3]> {
    let mut r = Rng::new(seed);
    (0..n).map(|_| [r.f64() as f32, r.f64() as f32, r.f64() as f32]).collect()
}

/// Sites crowded onto a thin wavy sheet plus sparse sites around it: the shape of a foam
/// fitted to a surface, with very anisotropic cells.
fn sheet(n: usize, seed: u64) -> Vec<[f32; 3]> {
    let mut r = Rng::new(seed);
    (0..n)
        .map(|i| {
            let (x, y) = (r.range(-1.0, 1.0), r.range(-1.0, 1.0));
            let z = if i % 5 == 0 { r.range(-1.0, 1.0) } else { 0.1 * (3.0 * x).sin() + 0.002 * r.normal() };
            [x as f32, y as f32, z as f32]
        })
        .collect()
}

/// Dense clump inside a sparse halo far away (scales differ by ~1000).
fn clump_and_halo(n: usize, seed: u64) -> Vec<[f32; 3]> {
    let mut r = Rng::new(seed);
    (0..n)
        .map(|i| {
            let s = if i % 10 == 0 { 100.0 } else { 0.1 };
            let v = r.unit_vector();
            let rad = s * r.f64().cbrt();
            [(v[0] * rad) as f32, (v[1] * rad) as f32, (v[2] * rad) as f32]
        })
        .collect()
}

fn scipy_delaunay(points: &[[f32; 3]]) -> (Vec<BTreeSet<u32>>, BTreeSet<u32>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pts.txt");
    let mut f = std::fs::File::create(&path).unwrap();
    for p in points {
        // f32 → f64 is exact, and Rust prints the shortest round-tripping decimal.
        writeln!(f, "{} {} {}", p[0] as f64, p[1] as f64, p[2] as f64).unwrap();
    }
    drop(f);
    let script = r#"
import sys, numpy as np
from scipy.spatial import Delaunay
p = np.loadtxt(sys.argv[1], dtype=np.float64)
d = Delaunay(p)
edges = set()
for s in d.simplices:
    for a in range(4):
        for b in range(a + 1, 4):
            i, j = int(s[a]), int(s[b])
            edges.add((min(i, j), max(i, j)))
print(" ".join(str(i) for i in sorted(set(d.convex_hull.ravel().tolist()))))
for i, j in sorted(edges):
    print(i, j)
"#;
    let out = common::python().arg("-c").arg(script).arg(&path).output().expect("python runs");
    assert!(out.status.success(), "scipy failed: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines();
    let hull: BTreeSet<u32> = lines.next().unwrap().split_whitespace().map(|s| s.parse().unwrap()).collect();
    let mut adj = vec![BTreeSet::new(); points.len()];
    for l in lines {
        let mut it = l.split_whitespace().map(|s| s.parse::<u32>().unwrap());
        let (i, j) = (it.next().unwrap(), it.next().unwrap());
        adj[i as usize].insert(j);
        adj[j as usize].insert(i);
    }
    (adj, hull)
}

fn check_against_scipy(points: &[[f32; 3]], min_compared: f64) {
    let adj = adjacency(points).unwrap();
    assert_eq!(adj.asymmetric, 0, "cells disagreed on shared faces before symmetrisation");
    let (oracle, hull) = scipy_delaunay(points);
    for &h in &hull {
        assert!(adj.on_boundary[h as usize], "hull site {h} has an unbounded cell but did not touch the domain");
    }
    let mut compared = 0;
    for (i, expected) in oracle.iter().enumerate() {
        if adj.on_boundary[i] {
            // Shell cells only lose hull faces: what they have must still be Delaunay edges.
            assert!(adj.of(i).iter().all(|j| expected.contains(j)), "site {i}: non-Delaunay neighbour");
            continue;
        }
        let ours: BTreeSet<u32> = adj.of(i).iter().copied().collect();
        assert_eq!(&ours, expected, "site {i} differs from scipy's Delaunay");
        compared += 1;
    }
    let frac = compared as f64 / points.len() as f64;
    assert!(frac >= min_compared, "only {compared} of {} sites off the shell", points.len());
}

fn assert_symmetric(adj: &Adjacency) {
    for i in 0..adj.end.len() {
        for &j in adj.of(i) {
            assert_ne!(j as usize, i);
            assert!(adj.of(j as usize).binary_search(&(i as u32)).is_ok(), "edge {i}-{j} one-sided");
        }
    }
}

#[test]
fn uniform_cube_matches_scipy() {
    check_against_scipy(&uniform(600, 1), 0.5);
}

#[test]
fn thin_sheet_matches_scipy() {
    check_against_scipy(&sheet(800, 2), 0.5);
}

#[test]
fn clump_in_halo_matches_scipy() {
    check_against_scipy(&clump_and_halo(700, 3), 0.6);
}

#[test]
fn accelerated_equals_brute_force_clipping() {
    for pts in [uniform(300, 4), sheet(300, 5), clump_and_halo(300, 6)] {
        let fast = adjacency(&pts).unwrap();
        let slow = adjacency_brute_force(&pts).unwrap();
        assert_eq!(fast, slow);
        assert_symmetric(&fast);
        let mean = fast.neighbours.len() as f64 / pts.len() as f64;
        assert!((8.0..20.0).contains(&mean), "mean neighbour count {mean}");
    }
}

#[test]
fn adjacency_does_not_depend_on_thread_count() {
    let pts = sheet(6_000, 7);
    let run = |threads| {
        rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap().install(|| adjacency(&pts).unwrap())
    };
    let one = run(1);
    assert_eq!(one.asymmetric, 0);
    assert_symmetric(&one);
    assert_eq!(one, run(3));
}
