//! `foam-ipu reference` end to end: a lattice slab scene written as scene.ply, rendered
//! through the CLI, checked against the closed form; and every bad-input path.

mod common;
mod lattice;

use std::path::{Path, PathBuf};

use common::{expect_error, run};
use foam_ipu::imageio::npy::read_npy;
use foam_ipu::scene::ply_write::write_ply;
use lattice::Lattice;

const SIGMA: f32 = 0.8;
const COLOUR: [u8; 3] = [230, 40, 120];

struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        // Dense cells for z-index 4..=6, i.e. z ∈ [3.5, 6.5].
        let l = Lattice::new(12, 0, |_, _, z| if (4..=6).contains(&z) { (SIGMA, COLOUR) } else { (0.0, [0; 3]) });
        write_ply(&l.scene, std::fs::File::create(dir.path().join("slab.ply")).unwrap()).unwrap();
        // Camera at (5.3, 5.4, 0.2) looking along +z with OpenCV axes = world axes.
        std::fs::write(
            dir.path().join("cam.json"),
            r#"{"width": 20, "height": 16, "fx": 30, "fy": 30, "cx": 10, "cy": 8,
                "c2w": [[1,0,0,5.3],[0,1,0,5.4],[0,0,1,0.2],[0,0,0,1]]}"#,
        )
        .unwrap();
        Fixture { dir }
    }
    fn p(&self, name: &str) -> String {
        self.dir.path().join(name).to_str().unwrap().to_owned()
    }
    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}

/// Unit ray z-component for pixel (i, j) of the fixture camera.
fn dz(i: u32, j: u32) -> f32 {
    let (x, y) = ((i as f32 + 0.5 - 10.0) / 30.0, (j as f32 + 0.5 - 8.0) / 30.0);
    1.0 / (x * x + y * y + 1.0).sqrt()
}

fn check_ok(args: &[&str]) {
    let out = run(args);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// With no camera option the reference, like `render` and `bench`, takes
/// SCENE.camera.json beside the scene: the same image as naming it.
#[test]
fn the_camera_beside_the_scene_is_the_default() {
    let f = Fixture::new();
    std::fs::copy(f.path("cam.json"), f.path("slab.camera.json")).unwrap();
    let scene = f.p("slab.ply");
    check_ok(&["reference", &scene, "-o", &f.p("beside.png")]);
    check_ok(&["reference", &scene, "--camera", &f.p("cam.json"), "-o", &f.p("named.png")]);
    assert_eq!(std::fs::read(f.path("beside.png")).unwrap(), std::fs::read(f.path("named.png")).unwrap());
    // A scene path that cannot be opened is the error, not the camera missing beside it.
    let (missing, out) = (f.p("slub.ply"), f.p("x.png"));
    for cmd in ["reference", "render", "bench"] {
        let mut args = vec![cmd, missing.as_str()];
        if cmd != "bench" {
            args.extend(["-o", out.as_str()]);
        }
        let e = expect_error(&args);
        assert!(e.contains(&format!("{missing}: cannot read: ")), "{cmd}: {e}");
        assert!(!e.contains("camera"), "{cmd}: {e}");
    }
}

#[test]
fn slab_through_the_cli_matches_the_closed_form() {
    let f = Fixture::new();
    check_ok(&[
        "reference",
        &f.p("slab.ply"),
        "--camera",
        &f.p("cam.json"),
        "-o",
        &f.p("rgb.npy"),
        "--opacity",
        &f.p("a.npy"),
        "--depth",
        &f.p("d.npy"),
        "--background",
        "0,0.5,1",
    ]);
    let rgb = read_npy(&f.path("rgb.npy")).unwrap();
    let a = read_npy(&f.path("a.npy")).unwrap();
    let d = read_npy(&f.path("d.npy")).unwrap();
    assert_eq!(rgb.shape, [16, 20, 3]);
    assert_eq!((a.shape.as_slice(), d.shape.as_slice()), (&[16usize, 20][..], &[16usize, 20][..]));
    let bg = [0.0f32, 0.5, 1.0];
    for j in 0..16 {
        for i in 0..20 {
            let px = (j * 20 + i) as usize;
            let t = (-SIGMA * 3.0 / dz(i, j)).exp();
            for c in 0..3 {
                let want = COLOUR[c] as f32 / 255.0 * (1.0 - t) + bg[c] * t;
                assert!((rgb.data[3 * px + c] as f32 - want).abs() < 3e-5, "({i},{j}) {c}");
            }
            assert!((a.data[px] as f32 - (1.0 - t)).abs() < 3e-5);
            let want_depth = 3.3 / dz(i, j) + std::f32::consts::LN_2 / SIGMA;
            assert!((d.data[px] as f32 - want_depth).abs() < 1e-4 * want_depth);
        }
    }
}

#[test]
fn png_outputs_quantise_like_the_original() {
    let f = Fixture::new();
    check_ok(&[
        "reference",
        &f.p("slab.ply"),
        "--camera",
        &f.p("cam.json"),
        "-o",
        &f.p("rgb.png"),
        "--opacity",
        &f.p("a.png"),
        "--depth",
        &f.p("d.png"),
        "--depth-preview",
        &f.p("p.png"),
    ]);
    let rgb = image::open(f.path("rgb.png")).unwrap().to_rgb8();
    assert_eq!(rgb.dimensions(), (20, 16));
    let depth = image::open(f.path("d.png")).unwrap().to_luma16();
    let side: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(f.p("d.png") + ".json").unwrap()).unwrap();
    let scale = side["scale"].as_f64().unwrap();
    for (i, j) in [(0u32, 0u32), (10, 8), (19, 15)] {
        let t = (-SIGMA * 3.0 / dz(i, j)).exp();
        let got = rgb.get_pixel(i, j).0;
        for c in 0..3 {
            // White background, clip, truncate v·255; allow one level for f32 rounding.
            let v = (COLOUR[c] as f32 / 255.0 * (1.0 - t) + t) * 255.0;
            assert!((got[c] as f32 - v.floor()).abs() <= 1.0, "({i},{j}) {c}: {} vs {v}", got[c]);
        }
        let want_depth = 3.3 / dz(i, j) as f64 + std::f64::consts::LN_2 / SIGMA as f64;
        let d = depth.get_pixel(i, j).0[0] as f64 * scale;
        assert!((d - want_depth).abs() <= scale, "({i},{j}): {d} vs {want_depth}");
    }
    assert_eq!(image::open(f.path("p.png")).unwrap().to_rgb8().dimensions(), (20, 16));
    assert_eq!(image::open(f.path("a.png")).unwrap().to_luma8().dimensions(), (20, 16));
}

#[test]
fn width_and_height_rescale_the_camera() {
    let f = Fixture::new();
    check_ok(&["reference", &f.p("slab.ply"), "--camera", &f.p("cam.json"), "-o", &f.p("big.npy"), "--width", "40"]);
    let big = read_npy(&f.path("big.npy")).unwrap();
    assert_eq!(big.shape, [32, 40, 3], "height follows the aspect ratio");
    check_ok(&[
        "reference",
        &f.p("slab.ply"),
        "--camera",
        &f.p("cam.json"),
        "-o",
        &f.p("small.npy"),
        "--width",
        "10",
        "--height",
        "4",
    ]);
    assert_eq!(read_npy(&f.path("small.npy")).unwrap().shape, [4, 10, 3]);
}

#[test]
fn bad_inputs_are_one_line_errors() {
    let f = Fixture::new();
    let (scene, cam) = (f.p("slab.ply"), f.p("cam.json"));
    let out = f.p("o.png");
    let e = expect_error(&["reference", &scene, "--camera", &f.p("nope.json"), "-o", &out]);
    assert!(e.contains("nope.json"), "{e}");
    std::fs::write(f.path("bad.json"), "{\"width\": 20, ").unwrap();
    let e = expect_error(&["reference", &scene, "--camera", &f.p("bad.json"), "-o", &out]);
    assert!(e.contains("bad.json") && e.contains("malformed camera JSON"), "{e}");
    std::fs::write(
        f.path("neg.json"),
        r#"{"width": 20, "height": 0, "fov_y_deg": 50, "position": [0,0,0], "look_at": [0,0,1], "up": [0,1,0]}"#,
    )
    .unwrap();
    let e = expect_error(&["reference", &scene, "--camera", &f.p("neg.json"), "-o", &out]);
    assert!(e.contains("neg.json") && e.contains("20x0"), "{e}");
    std::fs::write(
        f.path("typo.json"),
        r#"{"width": 20, "height": 10, "fov_y_deg": 50, "positon": [0,0,0], "look_at": [0,0,1], "up": [0,1,0]}"#,
    )
    .unwrap();
    let e = expect_error(&["reference", &scene, "--camera", &f.p("typo.json"), "-o", &out]);
    assert!(e.contains("positon"), "{e}");
    for bg in ["grey", "1,0", "1,0,2", "a,b,c"] {
        let e = expect_error(&["reference", &scene, "--camera", &cam, "-o", &out, "--background", bg]);
        assert!(e.contains("--background"), "{bg}: {e}");
    }
    let e = expect_error(&["reference", &scene, "--camera", &cam]);
    assert!(e.contains("no output"), "{e}");
    let e = expect_error(&["reference", &scene, "-o", &out]);
    assert!(e.contains("no camera"), "{e}");
    let e = expect_error(&["reference", &scene, "--camera", &cam, "--colmap", "x", "-o", &out]);
    assert!(e.contains("not both"), "{e}");
    let e = expect_error(&["reference", &scene, "--camera", &cam, "--view", "3", "-o", &out]);
    assert!(e.contains("--view") && e.contains("--colmap"), "{e}");
    let e = expect_error(&["reference", &scene, "--camera", &cam, "-o", &out, "--sh-degree", "1"]);
    assert!(e.contains("exceeds the scene's SH degree 0"), "{e}");
    let e = expect_error(&["reference", &scene, "--camera", &cam, "-o", &out, "--sh-degree", "4"]);
    assert!(e.contains("0..=3"), "{e}");
    let e = expect_error(&["reference", &scene, "--camera", &cam, "-o", &out, "--t-min", "-1"]);
    assert!(e.contains("t_min"), "{e}");
    let e = expect_error(&["reference", &f.p("missing.ply"), "--camera", &cam, "-o", &out]);
    assert!(e.contains("missing.ply"), "{e}");
    let e = expect_error(&["reference", &scene, "--camera", &cam, "-o", "/nonexistent/dir/o.png"]);
    assert!(e.contains("/nonexistent/dir/o.png"), "{e}");
    assert!(!Path::new(&out).exists());
}
