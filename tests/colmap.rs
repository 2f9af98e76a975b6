//! COLMAP cameras: the fixture against an independent scipy reading, test split, view
//! selection, and every refusal.

mod common;

use common::{expect_error, python, repo_path, run};

fn fixture() -> String {
    repo_path("tests/fixtures/colmap_small").to_str().unwrap().to_owned()
}

fn cameras_json(extra: &[&str]) -> serde_json::Value {
    let dir = fixture();
    let mut args = vec!["cameras", "--colmap", &dir, "--json"];
    args.extend_from_slice(extra);
    let out = run(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn poses_match_scipy() {
    // Python parses the text files itself and inverts cam_from_world with scipy.
    let script = r#"
import sys, json, numpy as np
from scipy.spatial.transform import Rotation
d = sys.argv[1]
cams = {}
for l in open(d + '/cameras.txt'):
    if l.startswith('#') or not l.strip(): continue
    t = l.split(); p = list(map(float, t[4:]))
    cams[int(t[0])] = (int(t[2]), int(t[3]), p if t[1] == 'PINHOLE' else [p[0], p[0], p[1], p[2]])
lines = [l.rstrip('\n') for l in open(d + '/images.txt') if not l.startswith('#')]
views = []
for i in range(0, len(lines), 2):
    t = lines[i].split()
    if not t: continue
    qw, qx, qy, qz, tx, ty, tz = map(float, t[1:8])
    R = Rotation.from_quat([qx, qy, qz, qw]).as_matrix()
    w2c = np.eye(4); w2c[:3, :3] = R; w2c[:3, 3] = [tx, ty, tz]
    w, h, (fx, fy, cx, cy) = cams[int(t[8])]
    views.append(dict(name=t[9], c2w=np.linalg.inv(w2c).tolist(), width=w, height=h, fx=fx, fy=fy, cx=cx, cy=cy))
views.sort(key=lambda v: v['name'])
print(json.dumps(views))
"#;
    let out = python().arg("-c").arg(script).arg(fixture()).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let want: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let got = cameras_json(&[]);
    let (want, got) = (want.as_array().unwrap(), got.as_array().unwrap());
    assert_eq!(want.len(), 10);
    assert_eq!(got.len(), 10);
    for (k, (w, g)) in want.iter().zip(got).enumerate() {
        assert_eq!(g["index"], k);
        assert_eq!(g["name"], w["name"]);
        assert_eq!(g["test"], k % 8 == 0);
        let c = &g["camera"];
        for key in ["width", "height"] {
            assert_eq!(c[key], w[key], "{key}");
        }
        for key in ["fx", "fy", "cx", "cy"] {
            assert!((c[key].as_f64().unwrap() - w[key].as_f64().unwrap()).abs() < 1e-4, "{key}");
        }
        for r in 0..4 {
            for col in 0..4 {
                let (a, b) = (c["c2w"][r][col].as_f64().unwrap(), w["c2w"][r][col].as_f64().unwrap());
                assert!((a - b).abs() < 1e-6, "view {k} c2w[{r}][{col}]: {a} vs {b}");
            }
        }
    }
}

#[test]
fn test_split_and_downsample() {
    let got = cameras_json(&["--test-views", "--downsample", "2"]);
    let got = got.as_array().unwrap();
    let names: Vec<&str> = got.iter().map(|v| v["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["frame_000.png", "frame_008.png"]);
    assert_eq!(got[1]["index"], 8);
    let c = &got[0]["camera"];
    assert_eq!((c["width"].as_u64(), c["height"].as_u64()), (Some(80), Some(60)));
    assert_eq!(c["fx"].as_f64(), Some(75.25));
    let text = run(&["cameras", "--colmap", &fixture(), "--test-views"]);
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("10 views") && text.contains("8 frame_008.png 160 120"), "{text}");
    assert_eq!(text.lines().filter(|l| !l.starts_with('#')).count(), 2);
}

#[test]
fn views_by_name_stem_or_index_resolve_in_reference() {
    // `reference` loads the camera before it reads the scene (a scene that cannot be
    // opened is the error first), so a bad view is reported before the scene is read; a
    // good one gets as far as the scene.
    let dir = fixture();
    for view in ["frame_003.png", "frame_003", "3"] {
        let e = expect_error(&["reference", "missing.ply", "--colmap", &dir, "--view", view, "-o", "x.png"]);
        assert!(e.contains("missing.ply"), "view {view}: {e}");
    }
    // A scene that opens but is not one: only its reader would say so.
    let not_a_scene = repo_path("README.md").display().to_string();
    let e = expect_error(&["reference", &not_a_scene, "--colmap", &dir, "--view", "nope.png", "-o", "x.png"]);
    assert!(e.contains("no view named \"nope.png\""), "{e}");
    let e = expect_error(&["reference", &not_a_scene, "--colmap", &dir, "--view", "10", "-o", "x.png"]);
    assert!(e.contains("view index 10 out of range"), "{e}");
    let e = expect_error(&["reference", &not_a_scene, "--colmap", &dir, "-o", "x.png"]);
    assert!(e.contains("--colmap needs --view"), "{e}");
    let e =
        expect_error(&["reference", &not_a_scene, "--colmap", &dir, "--view", "0", "--downsample", "0", "-o", "x.png"]);
    assert!(e.contains("--downsample"), "{e}");
}

#[test]
fn bad_models_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let src = repo_path("tests/fixtures/colmap_small");
    let images = std::fs::read_to_string(src.join("images.txt")).unwrap();
    let write = |cams: &str, imgs: &str| {
        std::fs::write(tmp.path().join("cameras.txt"), cams).unwrap();
        std::fs::write(tmp.path().join("images.txt"), imgs).unwrap();
    };
    let d = tmp.path().to_str().unwrap();
    write("1 OPENCV 160 120 150 150 80 60 0.1 0.01 0 0\n2 PINHOLE 8 6 7 7 4 3\n", &images);
    let e = expect_error(&["cameras", "--colmap", d]);
    assert!(e.contains("cameras.txt") && e.contains("distortion model OPENCV") && e.contains("line 1"), "{e}");
    write("1 PINHOLE 160 120 150 150 80\n", &images);
    let e = expect_error(&["cameras", "--colmap", d]);
    assert!(e.contains("expected 4"), "{e}");
    write("1 PINHOLE 160 120 150 150 80 60\n", &images);
    let e = expect_error(&["cameras", "--colmap", d]);
    assert!(e.contains("images.txt") && e.contains("undefined camera 2"), "{e}");
    write("1 PINHOLE 160 120 150 150 80 60\n", "1 1 0 0 0 0 0 0 1\n\n");
    let e = expect_error(&["cameras", "--colmap", d]);
    assert!(e.contains("image 1 has no name"), "{e}");
    write("1 PINHOLE 160 120 150 150 80 60\n", "1 1 0 0 zero 0 0 0 1 a.png\n\n");
    let e = expect_error(&["cameras", "--colmap", d]);
    assert!(e.contains("line 1: bad QZ"), "{e}");
    write("1 PINHOLE 160 120 150 150 80 60\n", "# nothing\n");
    let e = expect_error(&["cameras", "--colmap", d]);
    assert!(e.contains("no images"), "{e}");
    std::fs::remove_file(tmp.path().join("cameras.txt")).unwrap();
    std::fs::write(tmp.path().join("cameras.bin"), b"").unwrap();
    let e = expect_error(&["cameras", "--colmap", d]);
    assert!(e.contains("model_converter"), "{e}");
    let e = expect_error(&["cameras", "--colmap", "/nonexistent/colmap"]);
    assert!(e.contains("/nonexistent/colmap") && e.contains("not found"), "{e}");
}
