//! Outputs are all or nothing and never an input: a run that fails at any point leaves
//! every existing file as it was (and no temporary behind), an output that is the same
//! file as an input or another output is refused before any work, and a write that
//! fails (a full disk) is an error.

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use common::{arg as s, expect_error, garden_arg as garden, garden_camera_arg as camera, run};

/// The directory's file names, sorted (temporaries would show up here).
fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

/// A directory holding `old.png`, `old.npy` and `old.ply` with known contents.
fn with_old_files() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_owned();
    for name in ["old.png", "old.npy", "old.ply", "old.json"] {
        fs::write(d.join(name), format!("precious {name}\n")).unwrap();
    }
    (dir, d)
}

fn assert_untouched(d: &Path, extra: &[&str]) {
    for name in ["old.png", "old.npy", "old.ply", "old.json"] {
        assert_eq!(fs::read_to_string(d.join(name)).unwrap(), format!("precious {name}\n"), "{name} was written over");
    }
    let mut want: Vec<String> =
        ["old.json", "old.npy", "old.ply", "old.png"].iter().chain(extra).map(|s| s.to_string()).collect();
    want.sort();
    assert_eq!(listing(d), want, "a failed run left files behind");
}

#[test]
fn a_later_failing_output_leaves_the_earlier_ones_untouched() {
    let (_t, d) = with_old_files();
    let o = d.join("old.png");
    let small = ["--width", "16", "--height", "12"];
    let reference = |extra: &[&str]| {
        let mut a = ["reference", &garden(), "--camera", &camera(), "-o", s(&o)]
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>();
        a.extend(small.iter().chain(extra).map(|s| s.to_string()));
        a
    };
    // --depth into a missing directory, after the colour image.
    let missing = d.join("nodir/d.png");
    let e = expect_error(&refs(&reference(&["--depth", s(&missing)])));
    assert!(e.contains("nodir"), "{e}");
    assert_untouched(&d, &[]);
    // A write that fails after the colour image and the depth were made: the opacity on
    // a full disk.
    let e = expect_error(&refs(&reference(&["--depth", s(&d.join("d.png")), "--opacity", "/dev/full"])));
    assert!(e.contains("No space left"), "{e}");
    assert_untouched(&d, &[]);

    let render = |extra: &[&str]| {
        let mut a: Vec<String> =
            ["render", &garden(), "--shards", "16", "-o", s(&o)].iter().map(|s| s.to_string()).collect();
        a.extend(small.iter().chain(extra).map(|s| s.to_string()));
        a
    };
    let e = expect_error(&refs(&render(&["--stats", s(&d.join("nodir/s.json"))])));
    assert!(e.contains("nodir"), "{e}");
    // --hop-maps naming an existing file.
    let e = expect_error(&refs(&render(&["--hop-maps", s(&d.join("old.json"))])));
    assert!(e.contains("not a directory"), "{e}");
    // --compare against a missing image, and against one of another size.
    let e = expect_error(&refs(&render(&["--compare", s(&d.join("missing.png"))])));
    assert!(e.contains("missing.png"), "{e}");
    let other = d.join("other.png");
    foam_ipu::imageio::write_rgb(&other, 5, 5, &[0.5; 75]).unwrap();
    let e = expect_error(&refs(&render(&["--compare", s(&other)])));
    assert!(e.contains("5x5") && e.contains("16x12"), "{e}");
    // A stats file on a full disk fails after the frame and the colour image.
    let e = expect_error(&refs(&render(&["--stats", "/dev/full"])));
    assert!(e.contains("No space left"), "{e}");
    assert_untouched(&d, &["other.png"]);

    let e = expect_error(&refs(&render(&["--compare", s(&d.join("old.json"))])));
    assert!(e.contains("old.json"), "{e}");
    assert_untouched(&d, &["other.png"]);

    // The same runs that succeed write everything, and leave no temporary.
    let r = run(&refs(&reference(&["--depth", s(&d.join("d.png"))])));
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    fs::rename(&o, d.join("ref.png")).unwrap();
    let r = run(&refs(&render(&[
        "--stats",
        s(&d.join("s.json")),
        "--hop-maps",
        s(&d.join("hops")),
        "--compare",
        s(&d.join("ref.png")),
    ])));
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert!(String::from_utf8_lossy(&r.stdout).contains("compare with"));
    let mut want = vec![
        "d.png",
        "d.png.json",
        "hops",
        "old.json",
        "old.npy",
        "old.ply",
        "old.png",
        "other.png",
        "ref.png",
        "s.json",
    ];
    want.sort();
    assert_eq!(listing(&d), want);
    assert_eq!(listing(&d.join("hops")), ["hops_histogram.png", "router_hops.png", "tracer_hops.png"]);
    assert_eq!(image::open(&o).unwrap().width(), 16);
}

fn refs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

#[test]
fn synth_keeps_the_old_scene_until_the_new_one_is_complete() {
    let (_t, d) = with_old_files();
    let ply = d.join("old.ply");
    // The camera file fails only after the scene was generated and written.
    let e = expect_error(&["synth", "-o", s(&ply), "--cells", "5000", "--camera-out", "/dev/full"]);
    assert!(e.contains("/dev/full") && e.contains("No space left"), "{e}");
    let e = expect_error(&["synth", "-o", s(&ply), "--cells", "5000", "--camera-out", s(&d.join("nodir/c.json"))]);
    assert!(e.contains("nodir"), "{e}");
    let e = expect_error(&["synth", "-o", "/dev/full", "--cells", "5000"]);
    assert!(e.contains("No space left"), "{e}");
    assert_untouched(&d, &[]);
    let r = run(&["synth", "-o", s(&ply), "--cells", "5000", "--camera-out", s(&d.join("old.json"))]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert!(fs::read(&ply).unwrap().starts_with(b"ply\n"));
    assert!(fs::read_to_string(d.join("old.json")).unwrap().contains("fov_y_deg"));
}

#[test]
fn an_output_that_is_an_input_or_another_output_is_refused() {
    let (_t, d) = with_old_files();
    let scene = d.join("g.ply");
    fs::copy(garden(), &scene).unwrap();
    let cam = d.join("cam.json");
    fs::copy(camera(), &cam).unwrap();
    let before = fs::read(&scene).unwrap();
    let small = ["--width", "16", "--height", "12"];
    let check = |args: &[&str], needle: &str| {
        let mut a: Vec<&str> = args.to_vec();
        a.extend(small);
        let e = expect_error(&a);
        assert!(e.contains(needle), "{args:?}: {e}");
    };
    check(&["render", s(&scene), "--camera", s(&cam), "--shards", "16", "-o", s(&scene)], "the same file as the input");
    check(&["reference", s(&scene), "--camera", s(&cam), "-o", s(&cam)], "the same file as the input");
    check(
        &["reference", s(&scene), "--camera", s(&cam), "-o", s(&d.join("a.png")), "--depth", s(&d.join("a.png"))],
        "the same file as the output",
    );
    // The depth sidecar is an output too.
    check(
        &["reference", s(&scene), "--camera", s(&cam), "-o", s(&d.join("d.png.json")), "--depth", s(&d.join("d.png"))],
        "the same file as the output",
    );
    // Told apart by inode, not by spelling: another path to the scene, and a hard link.
    let dotted = d.join("sub/../g.ply");
    fs::create_dir(d.join("sub")).unwrap();
    check(&["reference", s(&scene), "--camera", s(&cam), "-o", s(&dotted)], "the same file as the input");
    let link = d.join("link.ply");
    fs::hard_link(&scene, &link).unwrap();
    check(&["render", s(&scene), "--camera", s(&cam), "--shards", "16", "-o", s(&link)], "the same file as the input");
    let e = expect_error(&["synth", "-o", s(&d.join("a.ply")), "--cells", "5000", "--camera-out", s(&d.join("a.ply"))]);
    assert!(e.contains("the same file as the output"), "{e}");
    // Nothing was written: no a.png, a.ply or temporaries, and the inputs are as they were.
    assert_eq!(fs::read(&scene).unwrap(), before);
    assert_eq!(fs::read(&cam).unwrap(), fs::read(camera()).unwrap());
    assert_eq!(listing(&d), ["cam.json", "g.ply", "link.ply", "old.json", "old.npy", "old.ply", "old.png", "sub"]);
}

#[test]
fn a_failed_write_is_an_error_and_a_device_is_written_in_place() {
    let g = garden();
    let cam = camera();
    let e = expect_error(&["reference", &g, "--camera", &cam, "--width", "8", "--height", "6", "-o", "/dev/full"]);
    assert!(e.contains("writing /dev/full") && e.contains("No space left"), "{e}");
    let e = expect_error(&["partition", &g, "--shards", "16", "--report", "/dev/full"]);
    assert!(e.contains("not a directory"), "{e}");
    // /dev/null takes the image: the device is written, not replaced.
    let r = run(&["reference", &g, "--camera", &cam, "--width", "8", "--height", "6", "-o", "/dev/null"]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert!(!fs::metadata("/dev/null").unwrap().is_file());
}

#[test]
fn report_directories_are_written_whole() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("new/report");
    let r = run(&["partition", &garden(), "--shards", "16", "--report", s(&report)]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert_eq!(listing(&report), ["partition.json", "shards.png", "tile_bytes.png"]);
    assert_eq!(image::open(report.join("shards.png")).unwrap().width(), 1600);
    // A failing run does not leave the directories it made.
    let other = dir.path().join("other/report");
    let e = expect_error(&["partition", &garden(), "--shards", "3", "--report", s(&other)]);
    assert!(e.contains("power of two"), "{e}");
    let e = expect_error(&["partition", "/nonexistent.ply", "--shards", "16", "--report", s(&other)]);
    assert!(e.contains("nonexistent"), "{e}");
    assert_eq!(listing(dir.path()), ["new"]);
}

/// An image output's name says its format: `.png`, or `.npy` where the output has one
/// (colour, opacity, depth; the depth preview is a PNG). Any other name was written as a
/// PNG under it (`-o out.jpg`); now it is refused, and nothing is written.
#[test]
fn an_image_output_named_for_another_format_is_refused() {
    let (_t, d) = with_old_files();
    let small = ["--width", "16", "--height", "12"];
    for (cmd, flag, name, formats) in [
        ("reference", "-o", "out.jpg", ".png or .npy"),
        ("reference", "-o", "out", ".png or .npy"),
        ("render", "-o", "out.jpeg", ".png or .npy"),
        ("reference", "--opacity", "a.tif", ".png or .npy"),
        ("reference", "--depth", "d.exr", ".png or .npy"),
        ("reference", "--depth-preview", "p.npy", ".png;"),
    ] {
        let (out, colour, garden, cam) = (d.join(name), d.join("c.png"), garden(), camera());
        let mut a = vec![cmd, garden.as_str(), "--camera", cam.as_str()];
        if flag != "-o" {
            a.extend(["-o", s(&colour)]);
        }
        a.extend([flag, s(&out)]);
        a.extend(small);
        let e = expect_error(&a);
        assert!(e.contains(&format!("cannot write {}: this output is written as {formats}", out.display())), "{e}");
        assert_untouched(&d, &[]);
    }
    // Either case of a known extension is that format.
    let upper = d.join("up.PNG");
    let r = run(&["reference", &garden(), "--camera", &camera(), "-o", s(&upper), "--width", "8", "--height", "6"]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert_eq!(&fs::read(&upper).unwrap()[1..4], b"PNG");
}
