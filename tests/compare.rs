//! `foam-ipu compare` against scikit-image (PSNR, SSIM) and its bad-input paths.

mod common;

use std::path::Path;

use common::{expect_error, python, run};
use foam_ipu::imageio::{npy::write_npy_f32, write_rgb};

/// A deterministic test image: smooth structure plus hash noise, in [0, 1].
fn image(w: usize, h: usize, seed: u32, noise: f32) -> Vec<f32> {
    let mut v = Vec::with_capacity(w * h * 3);
    for j in 0..h {
        for i in 0..w {
            for c in 0..3 {
                let mut x = (i as u32).wrapping_mul(73856093)
                    ^ (j as u32).wrapping_mul(19349663)
                    ^ (c as u32).wrapping_mul(83492791)
                    ^ seed;
                x ^= x >> 13;
                x = x.wrapping_mul(0x5bd1e995);
                x ^= x >> 15;
                let n = (x & 0xffff) as f32 / 65535.0 - 0.5;
                let base = 0.5 + 0.4 * ((i as f32 * 0.21 + c as f32).sin() * (j as f32 * 0.13).cos());
                v.push((base + noise * n).clamp(0.0, 1.0));
            }
        }
    }
    v
}

fn skimage_metrics(a: &Path, b: &Path) -> (f64, f64) {
    let script = r#"
import sys, numpy as np
from skimage.io import imread
from skimage.metrics import structural_similarity
def load(p):
    if p.endswith('.npy'):
        return np.load(p).astype(np.float64)
    im = imread(p)
    return im.astype(np.float64) / (65535.0 if im.dtype == np.uint16 else 255.0)
a, b = load(sys.argv[1]), load(sys.argv[2])
mse = np.mean((a - b) ** 2)
psnr = 20 * np.log10(1.0 / np.sqrt(mse))
ssim = structural_similarity(a, b, gaussian_weights=True, sigma=1.5, use_sample_covariance=False,
                             data_range=1.0, channel_axis=2)
print(repr(float(psnr)), repr(float(ssim)))
"#;
    let out = python().arg("-c").arg(script).arg(a).arg(b).output().expect("python runs");
    assert!(out.status.success(), "python failed: {}", String::from_utf8_lossy(&out.stderr));
    let s = String::from_utf8(out.stdout).unwrap();
    let v: Vec<f64> = s.split_whitespace().map(|t| t.parse().unwrap()).collect();
    (v[0], v[1])
}

fn compare_json(args: &[&str]) -> serde_json::Value {
    let out = run(args);
    assert!(out.status.success(), "compare failed: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn psnr_and_ssim_match_scikit_image() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n);
    for (w, h, noise) in [(37usize, 23usize, 0.05f32), (64, 48, 0.3), (11, 11, 0.5)] {
        let a = image(w, h, 1, noise);
        let b = image(w, h, 2, noise);
        write_rgb(&p("a.png"), w as u32, h as u32, &a).unwrap();
        write_rgb(&p("b.png"), w as u32, h as u32, &b).unwrap();
        write_npy_f32(&p("a.npy"), &[h, w, 3], &a).unwrap();
        write_npy_f32(&p("b.npy"), &[h, w, 3], &b).unwrap();
        for (x, y) in [("a.png", "b.png"), ("a.npy", "b.npy"), ("a.png", "b.npy")] {
            let (want_psnr, want_ssim) = skimage_metrics(&p(x), &p(y));
            let j = compare_json(&["compare", p(x).to_str().unwrap(), p(y).to_str().unwrap(), "--json"]);
            let (psnr, ssim) = (j["psnr"].as_f64().unwrap(), j["ssim"].as_f64().unwrap());
            assert!((psnr - want_psnr).abs() < 1e-4, "{w}x{h} {x} {y}: psnr {psnr} vs {want_psnr}");
            assert!((ssim - want_ssim).abs() < 1e-4, "{w}x{h} {x} {y}: ssim {ssim} vs {want_ssim}");
            assert!(ssim < 0.999, "test images should differ");
        }
    }
}

#[test]
fn identical_images_and_pixel_counts() {
    let dir = tempfile::tempdir().unwrap();
    let a = image(20, 16, 3, 0.2);
    let mut b = a.clone();
    let pa = dir.path().join("a.npy");
    let pb = dir.path().join("b.npy");
    write_npy_f32(&pa, &[16, 20, 3], &a).unwrap();
    write_npy_f32(&pb, &[16, 20, 3], &a).unwrap();
    let j = compare_json(&["compare", pa.to_str().unwrap(), pb.to_str().unwrap(), "--json"]);
    assert!(j["psnr"].is_null(), "identical images: infinite PSNR is null in JSON");
    assert_eq!(j["ssim"].as_f64(), Some(1.0));
    assert_eq!(j["differing_pixels"].as_u64(), Some(0));
    // Three pixels changed, one by 0.25 (the max), two by 0.01.
    b[0] += 0.01;
    b[3 * 7 + 2] -= 0.25;
    b[3 * 100 + 1] += 0.01;
    write_npy_f32(&pb, &[16, 20, 3], &b).unwrap();
    let j = compare_json(&["compare", pa.to_str().unwrap(), pb.to_str().unwrap(), "--json"]);
    assert_eq!(j["differing_pixels"].as_u64(), Some(3));
    assert!((j["max_abs_diff"].as_f64().unwrap() - 0.25).abs() < 1e-6);
    let j = compare_json(&["compare", pa.to_str().unwrap(), pb.to_str().unwrap(), "--json", "--tolerance", "0.02"]);
    assert_eq!(j["differing_pixels"].as_u64(), Some(1));
}

#[test]
fn directories_pair_by_name_and_min_psnr_sets_exit_status() {
    let dir = tempfile::tempdir().unwrap();
    let (da, db) = (dir.path().join("a"), dir.path().join("b"));
    std::fs::create_dir_all(&da).unwrap();
    std::fs::create_dir_all(&db).unwrap();
    let mut psnrs = Vec::new();
    for (k, name) in ["x.png", "y.png"].iter().enumerate() {
        let a = image(24, 24, 10 + k as u32, 0.1);
        let b = image(24, 24, 20 + k as u32, 0.1 + 0.2 * k as f32);
        write_rgb(&da.join(name), 24, 24, &a).unwrap();
        write_rgb(&db.join(name), 24, 24, &b).unwrap();
        psnrs.push(skimage_metrics(&da.join(name), &db.join(name)));
    }
    write_rgb(&da.join("only_a.png"), 24, 24, &image(24, 24, 5, 0.1)).unwrap();
    let (a, b) = (da.to_str().unwrap(), db.to_str().unwrap());
    let j = compare_json(&["compare", a, b, "--json"]);
    assert_eq!(j["pairs"].as_array().unwrap().len(), 2);
    assert_eq!(j["unpaired"][0], "only_a.png");
    let mean_psnr = (psnrs[0].0 + psnrs[1].0) / 2.0;
    let mean_ssim = (psnrs[0].1 + psnrs[1].1) / 2.0;
    assert!((j["mean_psnr"].as_f64().unwrap() - mean_psnr).abs() < 1e-4);
    assert!((j["mean_ssim"].as_f64().unwrap() - mean_ssim).abs() < 1e-4);
    assert_eq!(j["pairs"][1]["name"], "y.png");

    let ok = run(&["compare", a, b, "--min-psnr", &format!("{}", mean_psnr - 0.01)]);
    assert_eq!(ok.status.code(), Some(0));
    let text = String::from_utf8(ok.stdout).unwrap();
    assert!(text.contains("x.png: psnr") && text.contains("mean over 2 pairs"), "{text}");
    let low = run(&["compare", a, b, "--min-psnr", &format!("{}", mean_psnr + 0.01)]);
    assert_eq!(low.status.code(), Some(2), "below --min-psnr exits 2");
    assert!(String::from_utf8_lossy(&low.stderr).contains("below --min-psnr"));
}

#[test]
fn bad_inputs_are_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_owned();
    write_rgb(Path::new(&p("a.png")), 20, 10, &image(20, 10, 1, 0.1)).unwrap();
    write_rgb(Path::new(&p("b.png")), 10, 20, &image(10, 20, 1, 0.1)).unwrap();
    let e = expect_error(&["compare", &p("a.png"), &p("b.png")]);
    assert!(e.contains("size mismatch") && e.contains("20x10") && e.contains("10x20"), "{e}");
    let e = expect_error(&["compare", &p("a.png"), &p("missing.png")]);
    assert!(e.contains("missing.png") && e.contains("no such file"), "{e}");
    std::fs::write(p("junk.png"), b"not a png").unwrap();
    let e = expect_error(&["compare", &p("a.png"), &p("junk.png")]);
    assert!(e.contains("junk.png"), "{e}");
    std::fs::write(p("junk.npy"), b"\x93NUMPY\x01\x00\x10\x00{'descr': '<i8',}").unwrap();
    let e = expect_error(&["compare", &p("junk.npy"), &p("junk.npy")]);
    assert!(e.contains("junk.npy"), "{e}");
    write_npy_f32(Path::new(&p("flat.npy")), &[200], &[0.0; 200]).unwrap();
    let e = expect_error(&["compare", &p("flat.npy"), &p("flat.npy")]);
    assert!(e.contains("shape"), "{e}");
    std::fs::create_dir(p("d")).unwrap();
    let e = expect_error(&["compare", &p("a.png"), &p("d")]);
    assert!(e.contains("not one of each"), "{e}");
    std::fs::create_dir(p("e")).unwrap();
    let e = expect_error(&["compare", &p("d"), &p("e")]);
    assert!(e.contains("no .png/.npy files with the same name"), "{e}");
}
