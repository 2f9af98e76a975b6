//! `foam-ipu render` from the command line: outputs, statistics, hop maps, and bad input.

mod common;

use common::{expect_error, repo_path, run};

fn garden() -> String {
    repo_path("assets/garden.ply").display().to_string()
}

#[test]
fn renders_the_shipped_scene_with_its_camera_and_reports_stats() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).display().to_string();
    let stats = dir.path().join("s.json");
    let hops = dir.path().join("hops");
    let r = run(&[
        "reference",
        &garden(),
        "--camera",
        &repo_path("assets/garden.camera.json").display().to_string(),
        "--width",
        "64",
        "--height",
        "48",
        "-o",
        &path("ref.npy"),
        "--opacity",
        &path("ref_a.npy"),
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    // No camera option: assets/garden.camera.json beside the scene is used.
    let r = run(&[
        "render",
        &garden(),
        "--width",
        "64",
        "--height",
        "48",
        "--shards",
        "64",
        "--layout",
        "fp32",
        "-o",
        &path("g.npy"),
        "--opacity",
        &path("g_a.npy"),
        "--stats",
        stats.to_str().unwrap(),
        "--hop-maps",
        hops.to_str().unwrap(),
        "--compare",
        &path("ref.npy"),
    ]);
    let stdout = String::from_utf8_lossy(&r.stdout);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert!(stdout.contains("3072/3072 finished, 0 dropped"), "{stdout}");
    // The scene's SH degree (1) fits, so auto renders it, as the reference does by default.
    assert!(stdout.contains("(fp32 layout, SH degree 1, rc 20)"), "{stdout}");
    assert!(stdout.contains("PSNR inf dB"), "{stdout}");
    // fp32 on the device is the reference, to the byte: the same floats in the same
    // .npy files (shape included).
    for (device, reference) in [("g.npy", "ref.npy"), ("g_a.npy", "ref_a.npy")] {
        let (a, b) = (std::fs::read(path(device)).unwrap(), std::fs::read(path(reference)).unwrap());
        assert!(a.len() > 64 * 48 * 4 && a == b, "{device} differs from the reference's {reference}");
    }
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    for key in [
        "backend",
        "layout",
        "rc",
        "host_calls",
        "iterations",
        "wall_s",
        "rays",
        "rays_finished",
        "rays_dropped",
        "router_hops_mean",
        "tracer_hops_mean",
        "max_buffer_occupancy",
        "tile_bytes_max",
    ] {
        assert!(json.get(key).is_some(), "stats lack {key}: {json}");
    }
    // What the tiles counted: every pixel written by a tracer, every ray marched.
    assert_eq!(json["rays_finished"], 3072);
    assert!(json["tracer_hops_mean"].as_f64().unwrap() >= 1.0, "{json}");
    assert_eq!(json["backend"], "host");
    assert_eq!(json["layout"], "fp32");
    assert_eq!(json["sh_degree"], 1);
    // Router queues and the spill store are sized to fill their tiles, to within the
    // reserve for vertex state and code.
    let (most, budget) = (json["tile_bytes_max"].as_u64().unwrap(), json["tile_bytes_budget"].as_u64().unwrap());
    let reserve = foam_ipu::device::options::TILE_RESERVE_BYTES as u64;
    assert!(budget == 638_976 && most > budget - reserve, "{most} of {budget} B");
    for f in ["router_hops.png", "tracer_hops.png", "hops_histogram.png"] {
        assert!(hops.join(f).exists(), "{f} missing");
    }
}

#[test]
fn depth_needs_the_half_layout_and_is_written_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("d.npy");
    let e = expect_error(&[
        "render",
        &garden(),
        "--width",
        "16",
        "--height",
        "12",
        "--shards",
        "16",
        "--layout",
        "mixed",
        "--depth",
        d.to_str().unwrap(),
    ]);
    assert!(e.contains("--depth needs --layout half"), "{e}");
    let r = run(&[
        "render",
        &garden(),
        "--width",
        "16",
        "--height",
        "12",
        "--shards",
        "16",
        "-o",
        dir.path().join("c.png").to_str().unwrap(),
        "--depth",
        d.to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let want = dir.path().join("ref_d.npy");
    let r = run(&[
        "reference",
        &garden(),
        "--camera",
        &repo_path("assets/garden.camera.json").display().to_string(),
        "--width",
        "16",
        "--height",
        "12",
        "--sh-degree",
        "0",
        "-o",
        dir.path().join("r.png").to_str().unwrap(),
        "--depth",
        want.to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    // The half payload's depth is the reference's to its rounding of depth and of t
    // here; on the whole VGA frame a few pixels stray further (tests/device_render.rs).
    let read = |p: &std::path::Path| foam_ipu::imageio::npy::read_npy(p).unwrap();
    let (got, want) = (read(&d), read(&want));
    assert_eq!((got.shape.clone(), want.shape.clone()), (vec![12, 16], vec![12, 16]));
    let reached = want.data.iter().filter(|&&w| w > 0.0).count();
    assert!(reached > 100, "the view reaches the 50 % point in most pixels: {reached}");
    let mut rel: Vec<f64> = Vec::new();
    for (k, (&g, &w)) in got.data.iter().zip(&want.data).enumerate() {
        assert!((g > 0.0) == (w > 0.0), "pixel {k}: depth {g} vs the reference's {w}");
        if w > 0.0 {
            rel.push((g - w).abs() / w);
        }
    }
    rel.sort_by(f64::total_cmp);
    // Measured: median 2.0e-4 (the half rounding of depth itself), worst 7.2e-4.
    let (median, worst) = (rel[rel.len() / 2], rel[rel.len() - 1]);
    assert!(median <= 2.5e-4 && worst <= 1e-3, "depth error: median {median:.2e}, worst {worst:.2e} of the depth");
}

#[test]
fn bad_input_is_a_one_line_error() {
    let dir = tempfile::tempdir().unwrap();
    let o = dir.path().join("x.png");
    let o = o.to_str().unwrap();
    let g = garden();
    let small = ["--width", "16", "--height", "12"];
    let with = |extra: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = vec!["render".into(), g.clone(), "-o".into(), o.into()];
        if !extra.contains(&"--width") {
            v.extend(small.iter().map(|s| s.to_string()));
        }
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    let check = |extra: &[&str], needle: &str| {
        let args = with(extra);
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let e = expect_error(&refs);
        assert!(e.contains(needle), "{extra:?}: {e}");
    };
    check(&["--rc", "0"], "--rc 0");
    check(&["--shards", "3"], "power of two");
    // Two shards of 30,000 cells cannot fit a tile even with their bytes balanced and
    // both leaves split in two: the error names the heaviest tile, its bytes and the
    // budget.
    check(
        &["--shards", "2"],
        "the scene does not fit one Mk2 in 4 shards with shard bytes balanced and 2 of its 2 leaves split onto free tiles: tracer tile ",
    );
    check(&["--shards", "2"], "B over the 638976 B budget; 4 tiles are over");
    // Sixteen shards' VGA framebuffer slices do not fit beside the buffers.
    check(
        &["--shards", "16", "--width", "640", "--height", "480"],
        " B before its shard (framebuffer 537600 B, links ",
    );
    // A framebuffer slice too large for a tracer tile before any shard.
    check(&["--shards", "16", "--width", "2048", "--height", "2048"], "B before its shard (framebuffer 7340032 B");
    check(&["--width", "2049", "--height", "12"], "outside 1..=2048");
    check(&["--backend", "ipu"], "--features poplar");
    check(&["--batch", "diagonal:3"], "rows:N, cols:N or blocks:N");
    check(&["--shards", "auto512"], "unknown shard count 'auto512' (a power of two, or auto)");
    check(&["--tune", "injectors=0"], "--tune injectors=0: 0 is out of range (injectors takes 1 to 512)");
    check(&["--tune", "tiles=100"], "the target has 100");
    check(
        &["--tune", "direct_capacity=100000"],
        "--tune direct_capacity=100000: 100000 is out of range (direct_capacity takes 0 to 65536)",
    );
    // --tune: each way a key=value can be wrong names the key (and the value).
    check(&["--tune", "side_link=4"], "--tune side_link=4: unknown key 'side_link' (keys: tiles, fanout, ");
    check(&["--tune", "side_links"], "--tune side_links: expected KEY=VALUE");
    check(
        &["--tune", "side_links=four"],
        "--tune side_links=four: 'four' is not a whole number (side_links takes one whole number)",
    );
    check(&["--tune", "side_links=-1"], "--tune side_links=-1: '-1' is not a whole number");
    check(&["--tune", "side_links=4,4"], "--tune side_links=4,4: '4,4' is not a whole number");
    check(
        &["--tune", "fanout=16,x"],
        "--tune fanout=16,x: 'x' is not a whole number (fanout takes numbers separated by ',')",
    );
    check(&["--tune", "side_links=17"], "--tune side_links=17: 17 is out of range (side_links takes 0 to 16)");
    check(&["--tune", "copies=257"], "--tune copies=257: 257 is out of range (copies takes 0 to 256)");
    check(
        &["--tune", "fanout=16,6"],
        "--tune fanout=16,6: 6 is out of range (fanout takes powers of two from 2 to 16)",
    );
    check(&["--tune", "fanout=32"], "--tune fanout=32: 32 is out of range (fanout takes powers of two from 2 to 16)");
    check(&["--tune", "side_capacity=0"], "--tune side_capacity=0: 0 is out of range (side_capacity takes 1 to 65536)");
    check(
        &["--tune", "injector_queue=0"],
        "--tune injector_queue=0: 0 is out of range (injector_queue takes 1 to 65535)",
    );
    check(
        &["--tune", "injector_queue=65536"],
        "--tune injector_queue=65536: 65536 is out of range (injector_queue takes 1 to 65535)",
    );
    check(&["--tune", "schedule=5"], "--tune schedule=5: 5 is out of range (schedule takes 0 to 4)");
    check(&["--tune", "load_cut=101"], "--tune load_cut=101: 101 is out of range (load_cut takes 0 to 100)");
    check(
        &["--tune", "side_links=4", "--tune", "copies=0", "--tune", "side_links=8"],
        "--tune side_links=8: side_links is already tuned (side_links=4); give each key once",
    );
    // The old flags are gone, not aliases.
    check(&["--side-links", "4"], "unexpected argument '--side-links'");
    let e = expect_error(&["render", "/nonexistent/scene.ply", "--camera", "nope.json", "-o", o]);
    assert!(e.contains("nope.json") || e.contains("nonexistent"), "{e}");
}

/// `render --help` and `bench --help` both list the --tune table (keys and defaults,
/// the same text the README's table is held to).
#[test]
fn help_lists_every_tune_key_for_render_and_bench() {
    for cmd in ["render", "bench"] {
        let out = run(&[cmd, "--help"]);
        assert!(out.status.success());
        let help = String::from_utf8(out.stdout).unwrap();
        for row in [
            "tiles=N  [default: 1472]",
            "fanout=F,..  [default: 16,8]",
            "injectors=N  [default: 256]",
            "inject_capacity=N  [default: 2048 / injectors in multiples of 16 (8 from 129 injectors on), at most 128 (16 with 81, 8 with 256 and 512)]",
            "injector_queue=N  [default: inject_capacity if given, else 12288 / injectors, at most 384, at least 32 (48 with 256)]",
            "direct_capacity=N  [default: 2048 / injectors in multiples of 16 (8 with 129 to 256 injectors, 4 beyond), at most 128 (16 with 81, 8 with 256, 4 with 512)]",
            "link_capacity=N,..  [default: 256,384,256",
            "side_links=N  [default: 16]",
            "side_capacity=N  [default: 32, sized to the camera",
            "copies=N  [default: 3]",
            "replicas=N  [default: 2]",
            "load_cut=N  [default: 95 where the camera regions march under",
            "results=N  [default: 1536]",
            "tracer_queue=N  [default: 2048]",
            "router_queue=N  [default: as many as fit the router tile]",
            "spill=N  [default: as many as fit the spill tile]",
            "region_kib=N  [default: the largest region the camera's sampled rays choose in all the injector tile has left (at least the largest shard)]",
            "drain=N  [default: 0]",
            "ends_on_device=N  [default: 1]",
        ] {
            assert!(help.contains(row), "{cmd} --help lacks {row:?}:\n{help}");
        }
        for flag in ["--shards", "--layout", "--rc", "--max-iterations", "--batch", "--backend", "--tune"] {
            assert!(help.contains(&format!("      {flag} <")), "{cmd} --help lacks {flag}");
        }
    }
}

#[test]
fn sh_degree_flag_is_checked() {
    let e = expect_error(&["render", &garden(), "--width", "16", "--height", "12", "--sh-degree", "4"]);
    assert!(e.contains("unknown SH degree '4' (auto, 0, 1, 2 or 3)"), "{e}");
    let e = expect_error(&["bench", &garden(), "--width", "16", "--height", "12", "--sh-degree", "2", "--frames", "1"]);
    assert!(e.contains("--sh-degree 2 exceeds the scene's SH degree 1") && !e.trim().contains('\n'), "{e}");
    let e =
        expect_error(&["render", &garden(), "--width", "16", "--height", "12", "--shards", "16", "--sh-degree", "3"]);
    assert!(e.contains("--sh-degree 3 exceeds the scene's SH degree 1"), "{e}");
}
