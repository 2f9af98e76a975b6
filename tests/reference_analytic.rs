//! The reference renderer against closed-form answers on lattice scenes.

mod common;
mod lattice;

use foam_ipu::camera::Camera;
use foam_ipu::reference::{TraceOptions, render, start_cell, trace_ray};
use glam::{DVec3, Vec3};
use lattice::Lattice;

const N: usize = 12;
const SLAB: (usize, usize) = (4, 6); // z-indices of the dense cells: z ∈ [3.5, 6.5]

fn slab(sigma: f32, c: [u8; 3], sh_degree: u8) -> Lattice {
    Lattice::new(N, sh_degree, |_, _, z| if (SLAB.0..=SLAB.1).contains(&z) { (sigma, c) } else { (0.0, [0; 3]) })
}

const EYE: [f64; 3] = [5.3, 5.4, 0.2];

fn camera(w: u32, h: u32, fov: f64) -> Camera {
    let eye = DVec3::from(EYE);
    Camera::look_at(w, h, fov, eye, eye + DVec3::Z, -DVec3::Y).unwrap()
}

/// Path length through the slab of a unit ray with z-component dz.
fn slab_length(dz: f32) -> f32 {
    (SLAB.1 - SLAB.0 + 1) as f32 / dz
}

#[test]
fn slab_colour_is_closed_form() {
    let sigma = 0.7f32;
    let c = [200u8, 100, 30];
    let l = slab(sigma, c, 0);
    let cam = camera(24, 18, 40.0);
    let out = render(&l.scene, &cam, &TraceOptions::default()).unwrap();
    let bg = [1.0f32, 0.5, 0.0];
    let img = out.composite(bg);
    for j in 0..cam.height {
        for i in 0..cam.width {
            let (_, d) = cam.pixel_ray(i, j);
            let trans = (-sigma * slab_length(d.z)).exp();
            let px = (j * cam.width + i) as usize;
            for ch in 0..3 {
                let want = c[ch] as f32 / 255.0 * (1.0 - trans) + bg[ch] * trans;
                let got = img[3 * px + ch];
                assert!((got - want).abs() < 2e-5, "pixel ({i},{j}) ch {ch}: {got} vs {want}");
            }
            assert!((out.opacity[px] - (1.0 - trans)).abs() < 2e-5);
            // Uniform σ through the slab: the 50% point is ln 2/σ past the entry.
            let entry = (SLAB.0 as f32 - 0.5 - EYE[2] as f32) / d.z;
            let want = if trans < 0.5 { entry + std::f32::consts::LN_2 / sigma } else { -1.0 };
            assert!((out.depth[px] - want).abs() < 1e-5 * want.abs(), "({i},{j}): {} vs {want}", out.depth[px]);
        }
    }
}

#[test]
fn depth_of_a_dense_surface() {
    let sigma = 1.0e4f32;
    let l = slab(sigma, [255, 255, 255], 0);
    let cam = camera(16, 12, 50.0);
    let out = render(&l.scene, &cam, &TraceOptions::default()).unwrap();
    for j in 0..cam.height {
        for i in 0..cam.width {
            let (_, d) = cam.pixel_ray(i, j);
            // Surface at z = 3.5; the 50% quantile lies ln(2)/σ further along the ray.
            let want = (SLAB.0 as f32 - 0.5 - EYE[2] as f32) / d.z + std::f32::consts::LN_2 / sigma;
            let px = (j * cam.width + i) as usize;
            assert!((out.depth[px] - want).abs() < 1e-4 * want, "({i},{j}): {} vs {want}", out.depth[px]);
            assert!(out.opacity[px] >= 0.999);
        }
    }
    // Straight along +z the ray stops at T ≤ 0.001 in the first dense cell: z = 0..=4.
    let (o, d) = (cam.position, Vec3::Z);
    let s = trace_ray(&l.scene, start_cell(&l.scene, o.to_array()).unwrap(), o, d, &TraceOptions::default());
    assert_eq!(s.steps, 5);
}

#[test]
fn sh_colour_and_dc_only_mode() {
    let sigma = 2.0f32;
    let dc = [120u8, 60, 200];
    let mut l = slab(sigma, dc, 1);
    let coeffs = [0.3f32, -0.2, 0.1, 0.05, 0.4, -0.3, -0.25, 0.15, 0.2];
    for k in 0..l.scene.len() {
        l.scene.sh_rest[9 * k..9 * k + 9].copy_from_slice(&coeffs);
    }
    let cam = camera(9, 7, 60.0);
    let opts = TraceOptions { sh_degree: 1, ..Default::default() };
    let out = render(&l.scene, &cam, &opts).unwrap();
    let dc_out = render(&l.scene, &cam, &TraceOptions::default()).unwrap();
    const C1: f32 = 0.488_602_5;
    for j in 0..cam.height {
        for i in 0..cam.width {
            let (_, d) = cam.pixel_ray(i, j);
            let y = [-C1 * d.y, C1 * d.z, -C1 * d.x];
            let a = 1.0 - (-sigma * slab_length(d.z)).exp();
            let px = (j * cam.width + i) as usize;
            for c in 0..3 {
                let rgb = (dc[c] as f32 / 255.0 + (0..3).map(|k| y[k] * coeffs[3 * k + c]).sum::<f32>()).max(0.0);
                let got = out.rgb[3 * px + c];
                assert!((got - a * rgb).abs() < 1e-4, "({i},{j}) ch {c}: {got} vs {}", a * rgb);
                assert!((dc_out.rgb[3 * px + c] - a * dc[c] as f32 / 255.0).abs() < 1e-4);
            }
        }
    }
    // Degree 0 on an SH scene is exactly the DC-only scene's rendering.
    let dc_scene = slab(sigma, dc, 0);
    assert_eq!(render(&dc_scene.scene, &cam, &TraceOptions::default()).unwrap(), dc_out);
    let err = render(&dc_scene.scene, &cam, &opts).unwrap_err();
    assert!(err.to_string().contains("exceeds the scene's SH degree 0"), "{err}");
}

#[test]
fn t_min_skips_the_start_of_the_ray() {
    // Camera inside the slab looking along +z: the segment [0, t_min) is not composited.
    let sigma = 0.5f32;
    let l = slab(sigma, [255, 0, 0], 0);
    let o = Vec3::new(5.3, 5.4, 4.2);
    let start = start_cell(&l.scene, o.to_array()).unwrap();
    assert_eq!(start as usize, l.index(5, 5, 4));
    for t_min in [0.0f32, 0.25, 1.0] {
        let s = trace_ray(&l.scene, start, o, Vec3::Z, &TraceOptions { t_min, ..Default::default() });
        let want = 1.0 - (-sigma * (6.5 - 4.2 - t_min)).exp();
        assert!((s.opacity - want).abs() < 1e-6, "t_min {t_min}: {} vs {want}", s.opacity);
    }
}

#[test]
fn hull_cells_and_step_limit() {
    // Looking straight out of the lattice from a dense boundary cell: no exit face with
    // dp > 0, so the (infinite) last segment is not composited.
    let l = Lattice::new(N, 0, |_, _, _| (5.0, [255; 3]));
    let o = Vec3::new(5.3, 5.4, 0.2);
    let start = start_cell(&l.scene, o.to_array()).unwrap();
    let s = trace_ray(&l.scene, start, o, -Vec3::Z, &TraceOptions::default());
    assert_eq!((s.opacity, s.steps, s.rgb), (0.0, 1, [0.0; 3]));
    // The step limit counts cells.
    let thin = Lattice::new(N, 0, |_, _, _| (1e-3, [255; 3]));
    let s = trace_ray(&thin.scene, start, o, Vec3::Z, &TraceOptions { max_steps: 3, ..Default::default() });
    assert_eq!(s.steps, 3);
    assert!((s.opacity - (1.0 - (-1e-3f32 * 2.3).exp())).abs() < 1e-7);
    // Densities at or below 1e-6 add no colour (but still attenuate, as in the original).
    let faint = Lattice::new(N, 0, |_, _, _| (1e-6, [255; 3]));
    let s = trace_ray(&faint.scene, start, o, Vec3::Z, &TraceOptions::default());
    assert_eq!(s.rgb, [0.0; 3]);
    assert!(s.opacity > 0.0);
}

#[test]
fn rendering_is_deterministic_across_thread_counts() {
    let l = slab(0.9, [10, 200, 90], 0);
    let cam = camera(31, 17, 45.0);
    // Pools of their own, so that a one-core machine's default pool does not make
    // both runs single-threaded.
    let with = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        assert_eq!(pool.current_num_threads(), threads);
        pool.install(|| render(&l.scene, &cam, &TraceOptions::default()).unwrap())
    };
    let one = with(1);
    assert_eq!(one, with(4));
    assert_eq!(one, render(&l.scene, &cam, &TraceOptions::default()).unwrap());
}

/// The SH basis of degrees 1–3, function by function, against scipy's complex
/// spherical harmonics (Condon–Shortley phase) turned into the real 3DGS basis: for
/// index l² − 1 + (l + m), `√2·Re Y_l^m` for m > 0, `√2·Im Y_l^|m|` for m < 0 and
/// `Y_l^0` itself. A sign or an order swapped within a degree fails here.
#[test]
fn sh_basis_is_scipys_real_harmonics() {
    let dirs: Vec<Vec3> = (0..64)
        .map(|k| {
            // Spread over the sphere, none on an axis or a symmetry plane.
            let z = 1.0 - 2.0 * (k as f32 + 0.5) / 64.0;
            let phi = 2.399_963 * k as f32 + 0.3;
            let r = (1.0 - z * z).sqrt();
            Vec3::new(r * phi.cos(), r * phi.sin(), z).normalize()
        })
        .collect();
    let script = r#"
import sys
import numpy as np
from scipy.special import sph_harm_y
for line in sys.stdin:
    x, y, z = map(float, line.split())
    polar, azimuth = np.arccos(z), np.arctan2(y, x)
    out = []
    for l in (1, 2, 3):
        for m in range(-l, l + 1):
            v = sph_harm_y(l, abs(m), polar, azimuth)
            out.append(np.sqrt(2) * v.real if m > 0 else np.sqrt(2) * v.imag if m < 0 else v.real)
    print(" ".join(repr(float(v)) for v in out))
"#;
    let input: String = dirs.iter().map(|d| format!("{} {} {}\n", d.x, d.y, d.z)).collect();
    let mut child = common::python()
        .arg("-c")
        .arg(script)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("python runs");
    use std::io::Write;
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "python failed: {}", String::from_utf8_lossy(&out.stderr));
    let rows: Vec<Vec<f64>> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.split_whitespace().map(|v| v.parse().unwrap()).collect())
        .collect();
    assert_eq!(rows.len(), dirs.len());
    for (d, want) in dirs.iter().zip(&rows) {
        let got = foam_ipu::reference::sh::basis(*d, 3);
        for (k, (&g, &w)) in got.iter().zip(want).enumerate() {
            assert!((g as f64 - w).abs() < 2e-6, "Y[{k}] at {d}: {g} vs scipy {w}");
        }
        // Each degree alone leaves the higher ones zero.
        assert_eq!(&foam_ipu::reference::sh::basis(*d, 2)[8..], &[0.0; 7]);
    }
}
