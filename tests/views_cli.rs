//! `render` with many views: one graph for the whole set, every view as a
//! single-view render of its camera would make it, evaluation against a directory
//! of references, animations, and bad input.

mod common;

use std::path::Path;

use common::{arg, expect_error, garden_arg, run};
use foam_ipu::camera::Camera;
use glam::{DQuat, DVec3};
use serde_json::Value;

fn ok(args: &[&str]) -> String {
    let out = run(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?} failed: {err}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

#[test]
fn an_orbit_builds_one_graph_and_each_view_is_its_single_render() {
    let t = tempfile::tempdir().unwrap();
    let (dir, stats) = (t.path().join("orbit"), t.path().join("s.json"));
    let scene = garden_arg();
    let (gif, depth) = (t.path().join("orbit.gif"), t.path().join("depth"));
    ok(&[
        "render",
        &scene,
        "--orbit",
        "24",
        "--width",
        "96",
        "-o",
        arg(&dir),
        "--stats",
        arg(&stats),
        "--animation",
        arg(&gif),
        "--depth",
        arg(&depth),
    ]);
    // The animation: every view, depth beside colour.
    let mut opts = gif::DecodeOptions::new();
    opts.set_color_output(gif::ColorOutput::RGBA);
    let mut dec = opts.read_info(std::fs::File::open(&gif).unwrap()).unwrap();
    assert_eq!((dec.width(), dec.height()), (192, 72));
    let mut frames = 0;
    while dec.read_next_frame().unwrap().is_some() {
        frames += 1;
    }
    assert_eq!(frames, 24);
    assert!(depth.join("00023_depth.png").is_file() && depth.join("00023_depth.png.json").is_file());
    let s = json(&stats);
    assert_eq!(s["graph_builds"], 1, "{s}");
    let views = s["views"].as_array().unwrap();
    assert_eq!(views.len(), 24);
    let names: Vec<String> = (0..24).map(|i| format!("{i:05}.png")).collect();
    assert_eq!(files_in(&dir), names);
    for v in views {
        assert_eq!(v["rays_dropped"], 0);
        assert!(v["iterations"].as_u64().unwrap() > 0);
    }
    // The orbit goes round: the first and the middle view see different things.
    let png = |p: &Path| std::fs::read(p).unwrap();
    assert_ne!(png(&dir.join("00000.png")), png(&dir.join("00012.png")));
    // A view rendered alone, with a plan and a graph of its own, is the same image.
    for i in [0usize, 5, 12, 19] {
        let cam = t.path().join(format!("cam{i}.json"));
        std::fs::write(&cam, views[i]["camera"].to_string()).unwrap();
        let single = t.path().join(format!("single{i}.png"));
        ok(&["render", &scene, "--camera", arg(&cam), "-o", arg(&single)]);
        assert!(png(&single) == png(&dir.join(format!("{i:05}.png"))), "view {i} differs from its single-view render");
    }
}

#[test]
fn an_orbit_without_a_camera_starts_from_the_scene_bounds() {
    let t = tempfile::tempdir().unwrap();
    let scene = t.path().join("bare.ply");
    std::fs::copy(garden_arg(), &scene).unwrap();
    let (dir, stats) = (t.path().join("o"), t.path().join("s.json"));
    ok(&["render", arg(&scene), "--orbit", "3", "--width", "48", "-o", arg(&dir), "--stats", arg(&stats)]);
    assert_eq!(files_in(&dir), ["00000.png", "00001.png", "00002.png"]);
    let s = json(&stats);
    assert_eq!(
        (s["views"][0]["camera"]["width"].as_u64(), s["views"][0]["camera"]["height"].as_u64()),
        (Some(48), Some(36))
    );
}

/// A nerfstudio camera path entry for `cam` (square pixels, centred principal
/// point): its pose with OpenGL axes, row by row.
fn nerfstudio_entry(cam: &Camera, fov: f64) -> Value {
    let m = cam.c2w();
    let mut c2w = Vec::new();
    for row in &m {
        // OpenCV y (down) and z (forward) are OpenGL's −y and −z.
        c2w.extend([row[0] as f64, -row[1] as f64, -row[2] as f64, row[3] as f64]);
    }
    serde_json::json!({"camera_to_world": c2w, "fov": fov, "aspect": cam.width as f64 / cam.height as f64})
}

#[test]
fn a_camera_path_renders_as_the_same_cameras_written_as_json() {
    let t = tempfile::tempdir().unwrap();
    let (w, h, fov) = (80u32, 60u32, 50.0f64);
    let fy = 0.5 * h as f64 / (0.5 * fov.to_radians()).tan();
    let cams: Vec<Camera> = [[0.3, -4.4, 1.6], [2.0, -3.5, 1.2]]
        .iter()
        .map(|p| Camera::look_at(w, h, fov, DVec3::from(*p), DVec3::new(0.0, 0.0, 0.8), DVec3::Z).unwrap())
        .collect();
    let path = serde_json::json!({
        "render_width": w, "render_height": h, "seconds": 1.0, "camera_type": "perspective",
        "camera_path": cams.iter().map(|c| nerfstudio_entry(c, fov)).collect::<Vec<_>>(),
    });
    let path_file = t.path().join("camera_path.json");
    std::fs::write(&path_file, path.to_string()).unwrap();
    let cam_dir = t.path().join("cams");
    std::fs::create_dir(&cam_dir).unwrap();
    for (i, c) in cams.iter().enumerate() {
        let m = c.c2w().map(|r| r.map(f64::from));
        let j = serde_json::json!({"width": w, "height": h, "fx": fy, "fy": fy, "cx": 0.5 * w as f64, "cy": 0.5 * h as f64, "c2w": m});
        std::fs::write(cam_dir.join(format!("{i:05}.json")), j.to_string()).unwrap();
    }
    let scene = garden_arg();
    let (a, b) = (t.path().join("a"), t.path().join("b"));
    let anim = t.path().join("path.png");
    ok(&["render", &scene, "--camera-path", arg(&path_file), "-o", arg(&a), "--animation", arg(&anim)]);
    ok(&["render", &scene, "--cameras", arg(&cam_dir), "-o", arg(&b)]);
    assert_eq!(files_in(&a), ["00000.png", "00001.png"]);
    for n in files_in(&a) {
        assert!(std::fs::read(a.join(&n)).unwrap() == std::fs::read(b.join(&n)).unwrap(), "{n} differs");
    }
    // The APNG holds both frames at the views' size.
    let dec = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&anim).unwrap()));
    let reader = dec.read_info().unwrap();
    let info = reader.info();
    assert_eq!((info.width, info.height), (w, h));
    assert_eq!(info.animation_control.map(|c| c.num_frames), Some(2));
}

#[test]
fn a_view_set_of_one_estimates_its_ipu_frame_as_bench_does() {
    let t = tempfile::tempdir().unwrap();
    let cams = t.path().join("cams");
    std::fs::create_dir(&cams).unwrap();
    let cam = cams.join("garden.json");
    std::fs::copy(common::garden_camera_arg(), &cam).unwrap();
    let scene = garden_arg();
    let (out, stats) = (t.path().join("out"), t.path().join("s.json"));
    let text = ok(&[
        "render",
        &scene,
        "--cameras",
        arg(&cams),
        "--width",
        "80",
        "-o",
        arg(&out),
        "--estimate",
        "--stats",
        arg(&stats),
    ]);
    assert!(text.contains("on a Mk2 IPU (estimated; each view's frame and its camera regions' upload"), "{text}");
    let s = json(&stats);
    assert_eq!((s["graph_builds"].as_u64(), s["estimate_graph_builds"].as_u64()), (Some(1), Some(1)), "{s}");
    let ipu_ms = s["views"][0]["ipu_ms"].as_f64().unwrap();
    let b: Value = serde_json::from_str(&ok(&[
        "bench",
        &scene,
        "--camera",
        arg(&cam),
        "--width",
        "80",
        "--frames",
        "1",
        "--json",
    ]))
    .unwrap();
    let bench_ms = b["run"]["estimate"]["frame_s"].as_f64().unwrap() * 1e3;
    assert!((ipu_ms - bench_ms).abs() <= 1e-9 * bench_ms, "render --estimate {ipu_ms} ms, bench {bench_ms} ms");
    assert_eq!(s["views"][0]["iterations"], b["run"]["stats"]["iterations"]);
    // The view's camera was new to the device: it wrote its camera regions and block
    // lists, bench's upload for a new camera, and its record; the rate counts them.
    let view = b["run"]["estimate"]["view_upload_bytes"].as_u64().unwrap();
    let record = std::mem::size_of::<foam_layout::foam_camera>() as u64;
    assert!(view > 0);
    assert_eq!(s["views"][0]["host_bytes_written"].as_u64(), Some(view + record), "{s}");
    let upload_ms = s["views"][0]["ipu_upload_ms"].as_f64().unwrap();
    let bench_upload_ms = b["run"]["estimate"]["view_upload_s"].as_f64().unwrap() * 1e3;
    assert!((upload_ms - bench_upload_ms).abs() <= 1e-4, "{upload_ms} ms against bench's {bench_upload_ms} ms");
    let fps = s["fps_ipu_estimated"].as_f64().unwrap();
    assert!((fps * (ipu_ms + upload_ms) - 1e3).abs() < 1e-6, "{fps} views/s for {ipu_ms} + {upload_ms} ms");
}

/// A COLMAP text model of 16 views around the garden (image names view_00.png …).
fn garden_colmap(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("cameras.txt"), "1 PINHOLE 80 60 70.0 70.0 40.0 30.0\n").unwrap();
    let mut images = String::new();
    for i in 0..16 {
        let a = std::f64::consts::TAU * i as f64 / 16.0;
        let pos = DVec3::new(4.5 * a.sin(), -4.5 * a.cos(), 1.6);
        let cam = Camera::look_at(80, 60, 50.0, pos, DVec3::new(0.0, 0.0, 0.8), DVec3::Z).unwrap();
        let r = cam.rotation.as_dmat3().transpose();
        let q = DQuat::from_mat3(&r);
        let tr = -(r * cam.position.as_dvec3());
        images +=
            &format!("{} {} {} {} {} {} {} {} 1 view_{i:02}.png\n\n", i + 1, q.w, q.x, q.y, q.z, tr.x, tr.y, tr.z);
    }
    std::fs::write(dir.join("images.txt"), images).unwrap();
}

#[test]
fn the_test_split_is_evaluated_against_reference_renders() {
    let t = tempfile::tempdir().unwrap();
    let model = t.path().join("colmap");
    garden_colmap(&model);
    let scene = garden_arg();
    let refs = t.path().join("gpu");
    std::fs::create_dir(&refs).unwrap();
    for name in ["view_00", "view_08"] {
        let out = refs.join(format!("{name}.png"));
        // At the scene's SH degree, which the device renders by default (--sh-degree auto).
        ok(&["reference", &scene, "--colmap", arg(&model), "--view", name, "-o", arg(&out)]);
    }
    let (out, stats) = (t.path().join("test"), t.path().join("s.json"));
    let text = ok(&[
        "render",
        &scene,
        "--colmap",
        arg(&model),
        "--test-views",
        "-o",
        arg(&out),
        "--compare",
        arg(&refs),
        "--stats",
        arg(&stats),
    ]);
    assert!(text.contains("mean") && text.contains("LPIPS not computed"), "{text}");
    let s = json(&stats);
    assert_eq!(s["graph_builds"], 1);
    let views = s["views"].as_array().unwrap();
    assert_eq!(views.iter().map(|v| v["name"].as_str().unwrap()).collect::<Vec<_>>(), ["view_00", "view_08"]);
    let per_view = json(&out.join("per_view.json"));
    let results = json(&out.join("results.json"));
    let mut psnr_sum = 0.0;
    for v in views {
        let name = v["name"].as_str().unwrap();
        let psnr = v["psnr"].as_f64().unwrap();
        assert!(psnr > 40.0, "{name}: {psnr} dB");
        assert!(v["ssim"].as_f64().unwrap() > 0.95, "{v}");
        assert_eq!(per_view["foam-ipu"]["PSNR"][format!("{name}.png")].as_f64(), Some(psnr));
        psnr_sum += psnr;
        // The side-by-side picture: prediction | reference | error, three widths.
        let side = out.join(format!("{name}_psnr_{psnr:.3}.png"));
        let dec = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&side).unwrap()));
        let info = dec.read_info().unwrap().info().clone();
        assert_eq!((info.width, info.height), (240, 60));
        // The same PSNR `compare` finds between the written files.
        let c =
            ok(&["compare", arg(&out.join(format!("{name}.png"))), arg(&refs.join(format!("{name}.png"))), "--json"]);
        let c: Value = serde_json::from_str(&c).unwrap();
        assert!((c["psnr"].as_f64().unwrap() - psnr).abs() < 1e-9, "{c} vs {psnr}");
    }
    assert!((results["foam-ipu"]["PSNR"].as_f64().unwrap() - psnr_sum / 2.0).abs() < 1e-9, "{results}");
    // Every view: 16 images, by image name.
    let all = t.path().join("all");
    ok(&["render", &scene, "--colmap", arg(&model), "--all-views", "-o", arg(&all)]);
    let names: Vec<String> = (0..16).map(|i| format!("view_{i:02}.png")).collect();
    assert_eq!(files_in(&all), names);
}

/// Runs a failing render and checks that nothing was left in `dir` (absent or empty).
fn fails_leaving_nothing(args: &[&str], dir: &Path) -> String {
    let e = expect_error(args);
    assert!(!dir.exists() || files_in(dir).is_empty(), "{args:?} left {:?}", files_in(dir));
    e
}

#[test]
fn bad_view_sets_are_one_line_errors_that_write_nothing() {
    let t = tempfile::tempdir().unwrap();
    let model = t.path().join("colmap");
    garden_colmap(&model);
    let scene = garden_arg();
    let out = t.path().join("out");
    let refs = t.path().join("refs");
    std::fs::create_dir(&refs).unwrap();
    // A view with no reference image.
    let e = fails_leaving_nothing(
        &["render", &scene, "--colmap", arg(&model), "--test-views", "-o", arg(&out), "--compare", arg(&refs)],
        &out,
    );
    assert!(e.contains("no reference image for view view_00"), "{e}");
    // A reference of another size.
    for name in ["view_00", "view_08"] {
        ok(&[
            "reference",
            &scene,
            "--colmap",
            arg(&model),
            "--view",
            name,
            "--width",
            "40",
            "-o",
            arg(&refs.join(format!("{name}.png"))),
        ]);
    }
    let e = fails_leaving_nothing(
        &["render", &scene, "--colmap", arg(&model), "--test-views", "-o", arg(&out), "--compare", arg(&refs)],
        &out,
    );
    assert!(e.contains("view_00.png") && e.contains("40x30") && e.contains("80x60"), "{e}");
    // An empty camera directory.
    let cams = t.path().join("cams");
    std::fs::create_dir(&cams).unwrap();
    let e = fails_leaving_nothing(&["render", &scene, "--cameras", arg(&cams), "-o", arg(&out)], &out);
    assert!(e.contains("no camera JSON files"), "{e}");
    // A malformed camera among good ones: named.
    let good = std::fs::read_to_string(common::garden_camera_arg()).unwrap();
    for n in ["a", "b", "d"] {
        std::fs::write(cams.join(format!("{n}.json")), &good).unwrap();
    }
    std::fs::write(cams.join("c.json"), good.replace("\"height\"", "\"heigth\"")).unwrap();
    let e = fails_leaving_nothing(&["render", &scene, "--cameras", arg(&cams), "-o", arg(&out)], &out);
    assert!(e.contains("c.json"), "{e}");
    // Options that contradict each other.
    let e = expect_error(&["render", &scene, "--orbit", "3", "--cameras", arg(&cams), "-o", arg(&out)]);
    assert!(e.contains("give one of"), "{e}");
    let e = expect_error(&["render", &scene, "--test-views", "-o", arg(&out)]);
    assert!(e.contains("--colmap"), "{e}");
    let e = expect_error(&["render", &scene, "--orbit", "1000000000", "-o", arg(&out)]);
    assert!(e.contains("at most 10000"), "{e}");
    let e = expect_error(&["render", &scene, "--orbit", "3"]);
    assert!(e.contains("-o DIR"), "{e}");
    let e =
        expect_error(&["render", &scene, "--orbit", "3", "-o", arg(&out), "--animation", arg(&t.path().join("a.mp4"))]);
    assert!(e.contains(".gif"), "{e}");
    let e = expect_error(&["render", &scene, "--executable-cache", arg(t.path()), "-o", arg(&out)]);
    assert!(e.contains("--backend ipu"), "{e}");
    assert!(!out.exists());
}
