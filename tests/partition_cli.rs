//! `foam-ipu partition`: table, JSON, report files, and every bad-input case.

mod common;

use std::path::{Path, PathBuf};

use common::{expect_error, run};
use foam_ipu::scene::Scene;
use foam_ipu::scene::ply_write::write_ply;
use partition::fixtures::{Bcc, OwnedScene, bcc};

fn write_scene(dir: &Path, name: &str, s: OwnedScene) -> PathBuf {
    let scene = Scene {
        positions: s.positions,
        density: s.density,
        color: s.color,
        sh_degree: 0,
        sh_rest: Vec::new(),
        adjacency_end: s.adjacency_end,
        adjacency: s.adjacency,
    };
    let path = dir.join(name);
    write_ply(&scene, std::fs::File::create(&path).unwrap()).unwrap();
    path
}

/// 2·8³ = 1024 cells with a 14-neighbour Voronoi adjacency.
fn lattice(dir: &Path) -> PathBuf {
    write_scene(dir, "lattice.ply", bcc(Bcc { m: 8, jitter: 0.2, warp: true, shuffle: true }))
}

fn json(args: &[&str]) -> serde_json::Value {
    let out = run(args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("stdout is JSON")
}

#[test]
fn table_names_counts_and_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let scene = lattice(dir.path());
    let out = run(&["partition", scene.to_str().unwrap(), "--shards", "16", "--width", "160", "--height", "120"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    for row in [
        "1024 cells",
        "16 (k-d tree, depth 4, cell counts balanced)",
        "local",
        "halo",
        "adjacency",
        "neighbours",
        "tile bytes",
        "balance",
        "worst",
        "fits",
    ] {
        assert!(text.contains(row), "missing {row:?} in\n{text}");
    }
    // 1024 cells in 16 shards: exactly 64 local cells each.
    let local = text.lines().find(|l| l.starts_with("local")).unwrap();
    assert_eq!(local.split_whitespace().collect::<Vec<_>>(), ["local", "64", "64.0", "64"]);
}

#[test]
fn json_has_the_documented_keys_and_consistent_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let scene = lattice(dir.path());
    let v = json(&["partition", scene.to_str().unwrap(), "--shards", "64", "--json", "--layout", "fp32"]);
    assert_eq!(v["depth"], 6);
    assert_eq!(v["budget_bytes"], 638_976);
    assert_eq!(v["ray_bytes"], 28);
    assert_eq!(v["fits"], true);
    let shards = v["shards"].as_array().unwrap();
    assert_eq!(shards.len(), 64);
    let mut local = 0;
    let mut max = 0;
    for (i, s) in shards.iter().enumerate() {
        assert_eq!(s["id"], i as u64);
        for key in ["local", "halo", "adjacency", "neighbour_shards", "bytes"] {
            assert!(s[key].is_u64(), "shard {i} lacks {key}");
        }
        local += s["local"].as_u64().unwrap();
        max = max.max(s["bytes"].as_u64().unwrap());
        // Tile = 40 B header + 16 + 8 B/cell + 16 B/halo + 2 B/adjacency (padded) + fixed part.
        let shard_bytes = (40
            + (16 + 8) * s["local"].as_u64().unwrap()
            + 16 * s["halo"].as_u64().unwrap()
            + 2 * s["adjacency"].as_u64().unwrap())
        .next_multiple_of(8);
        assert_eq!(s["shard_bytes"], shard_bytes);
        assert_eq!(s["bytes"], shard_bytes + v["fixed_bytes"].as_u64().unwrap());
    }
    assert_eq!(local, 1024);
    assert_eq!(v["max_bytes"], max);
    // The fixed part is the tile `render` builds, item by item: a 28-byte pixel per
    // framebuffer slot, the default pending store of 2048 fp32 rays, ...
    let f = &v["footprint"];
    assert_eq!(f["framebuffer"], 28 * (640 * 480u64).div_ceil(64));
    assert_eq!(f["pending"], 2048 * 28);
    assert_eq!(f["budget"], 638_976);
    let program = foam_ipu::device::program::program_bytes(foam_ipu::device::tree::Role::Tracer).unwrap();
    assert_eq!(f["program"], program, "this build's measure of the tracer program");
    let items: u64 = ["framebuffer", "links", "side_links", "pending", "results", "records", "program", "reserve"]
        .iter()
        .map(|k| f[k].as_u64().unwrap_or_else(|| panic!("footprint lacks {k}")))
        .sum();
    assert_eq!(v["fixed_bytes"], items);
    assert_eq!(v["shard_budget_bytes"], 638_976 - items);
    assert_eq!(v["balance"], "cells");
}

#[test]
fn report_dir_holds_json_and_plots() {
    let dir = tempfile::tempdir().unwrap();
    let scene = lattice(dir.path());
    let out_dir = dir.path().join("report");
    let v = json(&[
        "partition",
        scene.to_str().unwrap(),
        "--shards",
        "32",
        "--json",
        "--report",
        out_dir.to_str().unwrap(),
    ]);
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("partition.json")).unwrap()).unwrap();
    assert_eq!(written, v);
    for (png, w, h) in [("shards.png", 1600, 1000), ("tile_bytes.png", 1600, 600)] {
        let img = image::open(out_dir.join(png)).unwrap();
        assert_eq!((img.width(), img.height()), (w, h), "{png}");
        // Not a blank canvas: bars and text were drawn.
        let rgb = img.to_rgb8();
        let inked = rgb.pixels().filter(|p| p.0 != [255, 255, 255]).count();
        assert!(inked > 10_000, "{png} has only {inked} non-white pixels");
    }
}

#[test]
fn octree_method_runs_and_is_labelled() {
    let dir = tempfile::tempdir().unwrap();
    let scene = lattice(dir.path());
    let v = json(&["partition", scene.to_str().unwrap(), "--shards", "8", "--json", "--method", "octree"]);
    assert_eq!(v["method"], "octree");
    let total: u64 = v["shards"].as_array().unwrap().iter().map(|s| s["local"].as_u64().unwrap()).sum();
    assert_eq!(total, 1024);
}

#[test]
fn over_budget_is_reported_and_fails_only_with_require_fit() {
    let dir = tempfile::tempdir().unwrap();
    let scene = lattice(dir.path());
    let s = scene.to_str().unwrap();
    // A 4000x4000 framebuffer over 4 tiles is 112 MB per tile.
    let big = ["partition", s, "--shards", "4", "--width", "4000", "--height", "4000"];
    let out = run(&big);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("DOES NOT FIT: 4 of 4 shards over budget, the worst by "), "{text}");
    // With --require-fit: one line, exit status 2, and no report written.
    let report = dir.path().join("report");
    let strict = |args: &[&str]| {
        let mut a = args.to_vec();
        a.extend(["--require-fit", "--report", report.to_str().unwrap()]);
        let err = expect_error(&a);
        assert_eq!(run(&a).status.code(), Some(2));
        assert!(!report.exists(), "a failed --require-fit wrote its report");
        err
    };
    // The framebuffer slice alone is over the budget: the line says so item by item.
    let err = strict(&big);
    assert!(
        err.contains("lattice.ply: a tracer tile needs 1121")
            && err.contains(" B before its shard (framebuffer 112000000 B"),
        "{err}"
    );
    // 54,000 cells in 2 shards cannot fit even balanced and split onto free tiles:
    // the line names the worst tile, its bytes and the budget.
    let large = write_scene(dir.path(), "large.ply", bcc(Bcc { m: 30, jitter: 0.2, warp: true, shuffle: true }));
    let err = strict(&["partition", large.to_str().unwrap(), "--shards", "2", "--width", "64", "--height", "48"]);
    assert!(
        err.contains("large.ply: the scene does not fit one Mk2 in 4 shards with shard bytes balanced and 2 of its 2 leaves split onto free tiles: tracer tile "),
        "{err}"
    );
    assert!(err.contains(" B over the 638976 B budget; 4 tiles are over"), "{err}");
    // 21,296 cells in 2 shards fit once the heavier leaf is split onto free tiles.
    let medium = write_scene(dir.path(), "medium.ply", bcc(Bcc { m: 22, jitter: 0.2, warp: true, shuffle: true }));
    let v = json(&[
        "partition",
        medium.to_str().unwrap(),
        "--shards",
        "2",
        "--width",
        "64",
        "--height",
        "48",
        "--json",
        "--require-fit",
    ]);
    assert_eq!(
        (v["fits"].as_bool(), v["balance"].as_str(), v["split_leaves"].as_u64()),
        (Some(true), Some("bytes"), Some(1))
    );
    let ids: Vec<u64> = v["shards"].as_array().unwrap().iter().map(|s| s["device_id"].as_u64().unwrap()).collect();
    assert!(ids == [0, 1, 2] || ids == [0, 2, 3], "{ids:?}");
    // A fitting plan passes --require-fit.
    // (At 640x480 a quarter of the framebuffer alone is 2 MB, so use a small image.)
    assert!(
        run(&["partition", s, "--shards", "4", "--width", "64", "--height", "48", "--require-fit"]).status.success()
    );
}

#[test]
fn bad_shard_counts() {
    let dir = tempfile::tempdir().unwrap();
    let scene = lattice(dir.path());
    let s = scene.to_str().unwrap();
    for bad in ["0", "1", "3", "48", "131072"] {
        let err = expect_error(&["partition", s, "--shards", bad]);
        assert!(err.contains(&format!("shard count {bad} is not a power of two between 2 and 65,536")), "{err}");
        assert_eq!(run(&["partition", s, "--shards", bad]).status.code(), Some(1));
    }
    let err = expect_error(&["partition", s, "--shards", "2048"]);
    assert!(err.contains("2048 shards for 1024 cells"), "{err}");
}

#[test]
fn shard_over_65535_entries() {
    let dir = tempfile::tempdir().unwrap();
    // Every cell neighbours its mirror image: each of 2 shards has 40,000 local + 40,000 halo.
    let n = 80_000u32;
    let lists: Vec<Vec<u32>> = (0..n).map(|i| vec![n - 1 - i]).collect();
    let s = OwnedScene::from_lists((0..n).map(|i| [i as f32, 0.0, 0.0]).collect(), &lists);
    let scene = write_scene(dir.path(), "mirror.ply", s);
    let err = expect_error(&["partition", scene.to_str().unwrap(), "--shards", "2"]);
    assert!(err.contains("mirror.ply: shard 0 holds 40000 local + 40000 halo = 80000 cells"), "{err}");
}

#[test]
fn missing_scene_and_bad_flags() {
    let err = expect_error(&["partition", "/nonexistent/scene.ply"]);
    assert!(err.contains("/nonexistent/scene.ply"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    let scene = lattice(dir.path());
    for args in [["--layout", "quarter"], ["--method", "bsp"], ["--shards", "many"]] {
        let mut a = vec!["partition", scene.to_str().unwrap()];
        a.extend(args);
        // clap's usage errors (several lines, with the possible values).
        let out = run(&a);
        assert!(!out.status.success(), "{args:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("invalid value"), "{args:?}");
    }
}

/// A lattice of 2·22³ cells carrying SH degree 3, on two shards (64×48 pixels): each degree's
/// heaviest tile is reported, and auto reports the highest that fits.
#[test]
fn sh_degrees_are_reported_and_auto_takes_the_highest_that_fits() {
    let dir = tempfile::tempdir().unwrap();
    let s = bcc(Bcc { m: 22, jitter: 0.2, warp: true, shuffle: true });
    let n = s.positions.len();
    let scene = Scene {
        positions: s.positions,
        density: s.density,
        color: s.color,
        sh_degree: 3,
        sh_rest: (0..45 * n).map(|i| ((i % 17) as f32 - 8.0) * 0.01).collect(),
        adjacency_end: s.adjacency_end,
        adjacency: s.adjacency,
    };
    let path = dir.path().join("sh.ply");
    write_ply(&scene, std::fs::File::create(&path).unwrap()).unwrap();
    let p = path.to_str().unwrap();
    let v = json(&["partition", p, "--shards", "2", "--width", "64", "--height", "48", "--json"]);
    let fits: Vec<&serde_json::Value> = v["sh_degrees"].as_array().unwrap().iter().collect();
    assert_eq!(fits.len(), 4);
    let bytes: Vec<u64> = fits.iter().map(|f| f["max_tile_bytes"].as_u64().unwrap()).collect();
    // Each degree is cut as render would cut it: where one does not fit, the cut
    // balances bytes and splits leaves, so the heaviest tile need not grow with it.
    assert!(bytes[0] < bytes[3], "{bytes:?}");
    let fit: Vec<bool> = fits.iter().map(|f| f["fits"].as_bool().unwrap()).collect();
    let highest = fit.iter().rposition(|&f| f).unwrap_or_else(|| panic!("none fits: {bytes:?}"));
    assert!(fit[0] && !fit[3], "{fit:?} for {bytes:?}");
    assert_eq!(v["sh_degree"], highest);
    assert_eq!(v["max_bytes"].as_u64().unwrap(), bytes[highest]);
    let v3 = json(&["partition", p, "--shards", "2", "--width", "64", "--height", "48", "--json", "--sh-degree", "3"]);
    assert_eq!((v3["sh_degree"].as_u64(), v3["fits"].as_bool()), (Some(3), Some(false)));
    let out = run(&["partition", p, "--shards", "2", "--width", "64", "--height", "48"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains(&format!("the shards above carry degree {highest} (binary16 coefficients)")), "{text}");
    assert!(text.contains("degree 3   heaviest tile") && text.contains("does not fit ("), "{text}");
    let e = expect_error(&["partition", lattice(dir.path()).to_str().unwrap(), "--sh-degree", "2"]);
    assert!(e.contains("--sh-degree 2 exceeds the SH degree 0 of"), "{e}");
    let e = expect_error(&["partition", p, "--sh-degree", "4"]);
    assert!(e.contains("unknown SH degree '4' (auto, 0, 1, 2 or 3)"), "{e}");
}
