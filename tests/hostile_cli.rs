//! Hostile input: sizes and counts that would run for weeks or allocate without bound,
//! values that pass as f64 but not as the f32 the renderers use, malformed headers and
//! NaN images are each a one-line error (control characters escaped, nothing said
//! twice) with exit status 1, never a panic, abort or hang.

mod common;

use std::fs;
use std::path::Path;

use common::{arg as s, expect_error, garden_arg as garden, garden_camera_arg as camera, run};

#[test]
fn iterations_are_bounded() {
    let g = garden();
    let small = ["--width", "16", "--height", "12", "--shards", "16"];
    let render = |extra: &[&str]| {
        let mut a = vec!["render", g.as_str(), "-o", "/dev/null"];
        a.extend(small);
        a.extend(extra);
        expect_error(&a)
    };
    let e = render(&["--rc", "1000000000"]);
    assert!(e.contains("--rc 1000000000") && e.contains("--max-iterations 100000"), "{e}");
    let e = render(&["--max-iterations", "2000000"]);
    assert!(e.contains("1 to 1000000"), "{e}");
    let e = render(&["--tune", "drain=4000000000"]);
    assert!(e.contains("--tune drain=4000000000: 4000000000 is out of range (drain takes 0 to 1000000)"), "{e}");
    let e = render(&["--tune", "drain=200", "--max-iterations", "100"]);
    assert!(e.contains("--tune drain=200: more idle iterations than a frame may take (--max-iterations 100)"), "{e}");
    // The frame's own bound: this frame needs about 60 iterations.
    let e = render(&["--max-iterations", "10", "--rc", "5"]);
    assert!(e.contains("did not finish in 10 iterations") && e.contains("of 192 pixels"), "{e}");
    let e = expect_error(&["bench", &g, "--rc", "200000", "--frames", "1", "--no-estimate"]);
    assert!(e.contains("--rc 200000"), "{e}");
    let e = expect_error(&["bench", &g, "--sweep", "rc=1,200000", "--frames", "1"]);
    assert!(e.contains("--rc 200000"), "{e}");
    let e = expect_error(&["bench", &g, "--frames", "4000000000"]);
    assert!(e.contains("--frames 4000000000"), "{e}");
}

#[test]
fn every_allocating_size_is_checked_first() {
    let (g, cam) = (garden(), camera());
    let e =
        expect_error(&["reference", &g, "--camera", &cam, "--width", "65536", "--height", "65536", "-o", "/dev/null"]);
    assert!(e.contains("65536x65536 is too large"), "{e}");
    let e =
        expect_error(&["reference", &g, "--camera", &cam, "--width", "16384", "--height", "16384", "-o", "/dev/null"]);
    assert!(e.contains("too large"), "{e}");
    let e = expect_error(&["reference", &g, "--camera", &cam, "--width", "8", "--bench", "4000000000"]);
    assert!(e.contains("--bench 4000000000"), "{e}");
    // Buffer sizes whose byte counts overflowed u32 (a panic in debug builds, a wrong
    // plan in release ones).
    for key in [
        "results",
        "link_capacity",
        "tracer_queue",
        "lean_queue",
        "inject_capacity",
        "side_capacity",
        "spill",
        "router_queue",
        "direct_capacity",
    ] {
        let tune = format!("{key}=4000000000");
        let e = expect_error(&[
            "render",
            &g,
            "--width",
            "16",
            "--height",
            "12",
            "--shards",
            "16",
            "-o",
            "/dev/null",
            "--tune",
            &tune,
        ]);
        assert!(
            e.contains(&format!("--tune {tune}: 4000000000 is out of range ({key} takes ")) && e.contains(" to 65536)"),
            "{e}"
        );
    }
    let e = expect_error(&[
        "render",
        &g,
        "--width",
        "16",
        "--height",
        "12",
        "--shards",
        "16",
        "-o",
        "/dev/null",
        "--tune",
        "lean_queue=0",
    ]);
    assert!(e.contains("--tune lean_queue=0: 0 is out of range (lean_queue takes 1 to 65536)"), "{e}");
    let e = expect_error(&[
        "render",
        &g,
        "--width",
        "16",
        "--height",
        "12",
        "--shards",
        "16",
        "-o",
        "/dev/null",
        "--tune",
        "region_kib=4000000000",
    ]);
    assert!(e.contains("--tune region_kib=4000000000: 4000000000 is out of range (region_kib takes 0 to 624)"), "{e}");
    for flag in ["--width", "--height"] {
        let e = expect_error(&["partition", &g, "--shards", "16", flag, "0"]);
        assert!(e.contains(&format!("{flag} 0")), "{e}");
        let e = expect_error(&["partition", &g, "--shards", "16", flag, "4000000000"]);
        assert!(e.contains("1 to 65536"), "{e}");
    }
}

#[test]
fn camera_values_are_checked_as_f32() {
    let dir = tempfile::tempdir().unwrap();
    let g = garden();
    let c2w = |fx: &str, cx: &str, tx: &str| {
        format!(
            r#"{{"width": 8, "height": 6, "fx": {fx}, "fy": 5, "cx": {cx}, "cy": 3, "c2w": [[1,0,0,{tx}],[0,1,0,0],[0,0,1,0],[0,0,0,1]]}}"#
        )
    };
    for (name, text, needle) in [
        ("pos.json", c2w("5", "4", "1e39"), "position"),
        ("fx.json", c2w("1e300", "4", "0"), "fx=inf"),
        ("tiny.json", c2w("1e-50", "4", "0"), "fx=0"),
        ("cx.json", c2w("5", "1e39", "0"), "principal point"),
        ("ray.json", c2w("1e-38", "3e38", "0"), "not finite in f32"),
    ] {
        let p = dir.path().join(name);
        fs::write(&p, text).unwrap();
        let e = expect_error(&["reference", &g, "--camera", s(&p), "-o", "/dev/null"]);
        assert!(e.contains(needle) && e.contains(name), "{name}: {e}");
    }
}

/// The garden scene with its header's line `from` replaced by `to`.
fn garden_with(dir: &Path, from: &str, to: &[u8]) -> String {
    let mut b = fs::read(garden()).unwrap();
    let at = b.windows(from.len()).position(|w| w == from.as_bytes()).unwrap();
    b.splice(at..at + from.len(), to.iter().copied());
    let p = dir.join("scene.ply");
    fs::write(&p, b).unwrap();
    p.display().to_string()
}

#[test]
fn headers_are_checked_and_explained_in_words() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let p = garden_with(d, "format binary_little_endian 1.0", b"format binary_little_endian 2.0");
    let e = expect_error(&["info", &p]);
    assert!(e.contains("line 2: format version \"2.0\" is not supported"), "{e}");
    for (line, needle) in [
        (&b"element vertex many"[..], "line 3: expected 'element NAME COUNT'"),
        (b"elemnt vertex 30000", "line 3: unknown keyword \"elemnt\""),
        (b"format binary 1.0", "line 2: expected 'format ascii|binary_little_endian|binary_big_endian 1.0'"),
    ] {
        let from = if line.starts_with(b"format") { "format binary_little_endian 1.0" } else { "element vertex 60000" };
        let p = garden_with(d, from, line);
        let e = expect_error(&["info", &p]);
        assert!(e.contains(needle), "{e}");
        for internal in ["ParseError", "ExpectedSet", "\\t", "String:"] {
            assert!(!e.contains(internal), "parser internals in {e}");
        }
    }
    // A header that would clear the screen is quoted with its escape escaped.
    let p = garden_with(d, "property float density", b"property float \x1b[2Jdensity");
    let e = expect_error(&["info", &p]);
    assert!(e.contains("\\u{1b}[2J") && e.contains("line "), "{e}");
}

#[test]
fn control_characters_in_any_quoted_input_are_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("cam\x1b[2J.json");
    fs::write(&bad, "{\"width\": \x1b[2J}").unwrap();
    let e = expect_error(&["reference", &garden(), "--camera", s(&bad), "-o", "/dev/null"]);
    assert!(e.contains("cam\\u{1b}[2J.json"), "{e}");
    // Bad arguments too (expect_error checks for raw control characters).
    for value in ["\x1b[2J", "\x07bell"] {
        let e = expect_error(&["render", &garden(), "--rc", value]);
        assert!(e.contains("--rc"), "{e}");
    }
    let e = expect_error(&["cameras", "--colmap", "\x1b[31mred"]);
    assert!(e.contains("\\u{1b}[31mred"), "{e}");
}

#[test]
fn nothing_is_said_twice() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::create_dir(d.join("cam.json")).unwrap();
    let e = expect_error(&["reference", &garden(), "--camera", s(&d.join("cam.json")), "-o", "/dev/null"]);
    assert_eq!(e.matches("Is a directory").count(), 1, "{e}");
    fs::create_dir(d.join("a.png")).unwrap();
    foam_ipu::imageio::write_rgb(&d.join("b.png"), 2, 2, &[0.0; 12]).unwrap();
    let e = expect_error(&["compare", s(&d.join("b.png")), s(&d.join("a.png"))]);
    assert!(e.matches("Is a directory").count() <= 1 && e.contains("a.png"), "{e}");
    let missing = d.join("missing.ply");
    let cam = camera();
    for args in [
        vec!["reference", s(&missing), "--camera", &cam, "-o", "/dev/null"],
        vec!["render", s(&missing), "--camera", &cam, "-o", "/dev/null"],
        vec!["bench", s(&missing), "--camera", &cam],
        vec!["partition", s(&missing)],
        vec!["info", s(&missing)],
    ] {
        let e = expect_error(&args);
        assert_eq!(e.matches("missing.ply").count(), 1, "{args:?}: {e}");
    }
}

#[test]
fn compare_refuses_nan() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.npy"), dir.path().join("b.npy"));
    foam_ipu::imageio::npy::write_npy_f32(&a, &[4, 4, 3], &[f32::NAN; 48]).unwrap();
    let mut v = vec![0.5f32; 48];
    foam_ipu::imageio::npy::write_npy_f32(&b, &[4, 4, 3], &v).unwrap();
    let e = expect_error(&["compare", s(&a), s(&b)]);
    assert!(e.contains("a.npy") && e.contains("NaN at row 0, column 0, channel 0"), "{e}");
    v[3 * 5 + 2] = f32::INFINITY;
    foam_ipu::imageio::npy::write_npy_f32(&a, &[4, 4, 3], &v).unwrap();
    let e = expect_error(&["compare", s(&b), s(&a)]);
    assert!(e.contains("inf at row 1, column 1, channel 2"), "{e}");
    let e = expect_error(&["compare", s(&b), s(&b), "--min-psnr", "nan"]);
    assert!(e.contains("--min-psnr NaN"), "{e}");
    let r = run(&["compare", s(&b), s(&b), "--min-psnr", "inf"]);
    assert!(r.status.success(), "identical images pass any threshold");
}
