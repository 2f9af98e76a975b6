//! `foam-ipu bench` from the command line: the report's fields, its JSON, sweeps with
//! plots, and bad input.

mod common;

use common::{expect_error, repo_path, run};
use serde_json::Value;

fn garden() -> String {
    repo_path("assets/garden.ply").display().to_string()
}

const SMALL: [&str; 6] = ["--width", "64", "--height", "48", "--shards", "64"];

fn bench(extra: &[&str]) -> String {
    let mut args = vec!["bench", "assets/garden.ply"];
    args.extend_from_slice(&SMALL);
    args.extend_from_slice(extra);
    let args: Vec<String> =
        args.iter().map(|a| if *a == "assets/garden.ply" { garden() } else { a.to_string() }).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let r = run(&args);
    assert!(r.status.success(), "{:?}: {}", args, String::from_utf8_lossy(&r.stderr));
    String::from_utf8(r.stdout).unwrap()
}

#[test]
fn prints_every_field() {
    // Without replicas, whose routers would count among the level-1 routers.
    let out = bench(&["--frames", "1", "--tune", "replicas=0"]);
    for field in [
        "reference wall time:",
        "device wall time:",
        "time ratio device/reference:",
        "iterations:",
        "host calls:",
        "router hops/ray:",
        "tracer hops/ray:",
        "router hops per tracer hop:",
        "0 dropped",
        "peak buffer occupancy:",
        "PSNR vs reference:",
        "router traffic per tree level",
        "IPU estimate",
        "NOT a measurement",
        "instrumented rc-1 run",
        "estimated IPU frame time:",
        "rays behind a queue of",
        "shards: balanced by bytes",
        // Not cut by load: the four-set default.
        "schedule: 2 (4 compute sets a step; planned)",
    ] {
        assert!(out.contains(field), "missing {field:?} in:\n{out}");
    }
    // 64 shards under 16-wide routers: two router levels (4 and 1 routers).
    for row in ["      1       4 ", "      2       1 "] {
        assert!(out.contains(row), "missing level row {row:?} in:\n{out}");
    }
}

#[test]
fn json_has_the_keys_and_consistent_numbers() {
    // Without replicas, whose routers would count among the level-1 routers.
    let out = bench(&["--frames", "2", "--json", "--tune", "replicas=0"]);
    let v: Value = serde_json::from_str(&out).expect("valid JSON on stdout");
    for key in ["scene", "cells", "width", "height", "shards", "layout", "rc", "batch", "reference_s", "run", "sweeps"]
    {
        assert!(v.get(key).is_some(), "no {key} in {v}");
    }
    assert_eq!(v["reference_frames_s"].as_array().unwrap().len(), 2);
    let p = &v["run"];
    for key in ["device_s", "device_frames_s", "reference_s", "time_ratio", "psnr_db", "stats", "estimate"] {
        assert!(p.get(key).is_some(), "no run.{key} in {p}");
    }
    let ratio = p["device_s"].as_f64().unwrap() / p["reference_s"].as_f64().unwrap();
    assert!((p["time_ratio"].as_f64().unwrap() - ratio).abs() < 1e-9);
    assert!(p["psnr_db"].as_f64().unwrap() >= 50.0, "{}", p["psnr_db"]);

    let st = &p["stats"];
    assert_eq!(st["rays"], 3072);
    assert_eq!(st["rays_finished"], 3072);
    assert_eq!(st["rays_dropped"], 0);
    for key in [
        "iterations",
        "host_calls",
        "router_hops_mean",
        "tracer_hops_mean",
        "router_hops_per_tracer_hop",
        "max_buffer_occupancy",
        "router_levels",
    ] {
        assert!(st.get(key).is_some(), "no stats.{key}");
    }
    // Per-level traffic adds up to the router hops of all rays.
    let levels = st["router_levels"].as_array().unwrap();
    // 64 shards under 16-wide routers: four level-1 routers and a root with four children.
    assert_eq!(levels.len(), 2);
    assert_eq!(levels.iter().map(|l| l["routers"].as_u64().unwrap()).collect::<Vec<_>>(), vec![4, 1]);
    let forwarded: u64 = levels.iter().map(|l| l["rays_forwarded"].as_u64().unwrap()).sum();
    let hops = st["router_hops_mean"].as_f64().unwrap() * 3072.0;
    assert!((forwarded as f64 - hops).abs() < 0.5, "{forwarded} vs {hops}");
    for l in levels {
        assert!(l["busiest_router_rays"].as_u64().unwrap() <= l["rays_forwarded"].as_u64().unwrap());
    }

    let e = &p["estimate"];
    let iterations = st["iterations"].as_u64().unwrap();
    // The loop ends with the frame: the timed run (rc 20) takes exactly the
    // iterations of the rc-1 profile, in as many calls as rc 20 needs.
    assert_eq!(e["iterations"].as_u64().unwrap(), iterations);
    assert_eq!(e["iterations_needed"].as_u64().unwrap(), iterations);
    assert!(e["ends_on_device"].as_bool().unwrap());
    assert_eq!(e["host_round_trips"].as_u64().unwrap(), iterations.div_ceil(20));
    let frame = e["frame_s"].as_f64().unwrap();
    assert!(frame > 0.0 && e["frame_s_occupied_only"].as_f64().unwrap() <= frame);
    // Half payload, links as planned (the tracer edges sized to the camera, the
    // router edges at their defaults): the busiest sender is the wider of the
    // level-1 routers (16 tracer lanes and a parent lane) and the root (4 child
    // lanes, the spill store's, and a bare credit header down each injector lane).
    let caps: Vec<u64> = p["link_capacity"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
    assert!(p["links_sized_to_camera"].as_bool().unwrap());
    assert!(caps[0] >= 64 && caps[0] <= 256 && caps[1..] == [384, 256], "{caps:?}");
    assert!((8..=32).contains(&p["side_capacity"].as_u64().unwrap()));
    let lb = |c: u64| 16 + c * 20;
    let level1 = 16 * lb(caps[0]) + lb(caps[1]);
    let injectors = p["injectors"].as_u64().unwrap();
    assert_eq!(
        (injectors, p["injectors_asked"].as_u64().unwrap()),
        (256, 256),
        "a root of 4 children has room for all"
    );
    assert_eq!(p["inject_capacity"].as_u64(), Some(8), "256 injectors share the lanes of 16 of 128 rays");
    assert_eq!(p["injector_queue"].as_u64(), Some(48), "and queues of 12,288 rays, apart from their lanes");
    assert!(p["load_cut"].is_null(), "garden's regions march all its steps: its shards stay balanced by bytes");
    assert_eq!(
        (p["schedule"].as_u64(), p["schedule_asked"].as_bool()),
        (Some(2), Some(false)),
        "not cut: the default schedule"
    );
    let root = 4 * lb(caps[1]) + lb(caps[2]) + injectors * lb(0);
    // The root also takes in every injector's lane whole, and the exchange waits for
    // the tile that receives the most as for the one that sends the most.
    let root_in = 4 * lb(caps[1]) + lb(caps[2]) + injectors * lb(p["inject_capacity"].as_u64().unwrap());
    assert_eq!(e["exchange_bytes_per_iteration"].as_u64().unwrap(), level1.max(root).max(root_in));
    assert!(e["busiest_cell_steps_max"].as_u64().unwrap() > 0);
    assert!(e["busiest_router_rays_max"].as_u64().unwrap() > 0);
    // Balance: the busiest tile's compute per frame over the mean tile's, over the
    // whole chip (unused tiles count 0) and over the tiles used.
    let b = &e["balance"];
    let f = |k: &str| b[k].as_f64().unwrap_or_else(|| panic!("no estimate.balance.{k} in {b}"));
    assert_eq!(b["tiles_chip"].as_u64(), Some(1472));
    let used = b["tiles_used"].as_u64().unwrap();
    assert!(used > 64 && used < 1472, "{used} tiles used");
    assert!((f("busiest_over_mean_chip") - f("busiest_s") / f("mean_chip_s")).abs() < 1e-9);
    assert!((f("busiest_over_mean_used") - f("busiest_s") / f("mean_used_s")).abs() < 1e-9);
    assert!((f("mean_chip_s") * 1472.0 - f("mean_used_s") * used as f64).abs() < 1e-12);
    assert!(f("busiest_over_mean_used") >= 1.0 && f("busiest_s") <= frame);
}

#[test]
fn compare_paper_runs_the_papers_configuration_beside_the_default() {
    let out = bench(&["--frames", "1", "--json", "--compare-paper"]);
    let v: Value = serde_json::from_str(&out).expect("valid JSON on stdout");
    let (run, paper) = (&v["run"], &v["paper"]);
    for p in [run, paper] {
        assert!(p["stats"]["iterations"].as_u64().unwrap() > 0, "{p}");
        assert!(p["estimate"]["frame_s"].as_f64().unwrap() > 0.0, "{p}");
        assert_eq!(p["stats"]["rays_finished"], 3072);
        assert_eq!(p["stats"]["rays_dropped"], 0);
    }
    // The paper's configuration: quadtree routers (64 shards: 16, 4, 1 per level),
    // rows:1, one injector, 256-ray links, and none of this design's shortcuts.
    assert_eq!(paper["batch"], "rows:1");
    let levels: Vec<u64> =
        paper["stats"]["router_levels"].as_array().unwrap().iter().map(|l| l["routers"].as_u64().unwrap()).collect();
    assert_eq!(levels, [16, 4, 1]);
    assert!(paper["link_capacity"].as_array().unwrap().iter().all(|c| c == 256), "{}", paper["link_capacity"]);
    for key in ["side_links", "shard_copies", "direct_lanes"] {
        assert_eq!(paper[key], 0, "paper.{key}");
    }
    // This design's injectors keep direct lanes where their sampled rays head.
    let (kept, every) = (run["direct_lanes"].as_u64().unwrap(), run["direct_lanes_every"].as_u64().unwrap());
    assert!(kept > 0 && kept <= every && run["direct_share"] == 3, "{kept} of {every}");
    // The paper's loop runs rc iterations every host call: its frame ends at a
    // multiple of rc (20), this design's where the frame does.
    assert!(!paper["estimate"]["ends_on_device"].as_bool().unwrap());
    assert_eq!(paper["stats"]["iterations"].as_u64().unwrap() % 20, 0);
    assert!(run["estimate"]["ends_on_device"].as_bool().unwrap());
    assert_ne!(run["batch"], "rows:1");
    // The same frame either way: the configuration changes only speed.
    assert_eq!(paper["psnr_db"], run["psnr_db"]);
    // The text form reports both and the paper's own measurement.
    let text = bench(&["--frames", "1", "--compare-paper", "--no-estimate"]);
    for field in ["the paper's configuration", "paper config:", "paper Tab. 3:", "680 iterations"] {
        assert!(text.contains(field), "missing {field:?} in:\n{text}");
    }
}

#[test]
fn a_tiny_sweep_writes_tables_json_and_plots() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("out");
    let out =
        bench(&["--frames", "1", "--sweep", "rc=1,40", "--sweep", "batch=rows:1|cols:2", "--out", d.to_str().unwrap()]);
    assert!(out.contains("sweep rc (batch blocks:8):"), "{out}");
    assert!(out.contains("sweep batch (rc 20):"), "{out}");
    assert!(out.contains("cols:2"), "{out}");
    for f in ["sweep_rc.png", "sweep_batch.png"] {
        let img = image::open(d.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
        assert!(img.width() > 800 && img.height() > 300);
    }
    let v: Value = serde_json::from_str(&std::fs::read_to_string(d.join("bench.json")).unwrap()).unwrap();
    assert!(v["run"].is_null());
    let sweeps = v["sweeps"].as_array().unwrap();
    assert_eq!(sweeps.len(), 2);
    let rc = sweeps[0]["points"].as_array().unwrap();
    assert_eq!(rc.iter().map(|p| p["rc"].as_u64().unwrap()).collect::<Vec<_>>(), vec![1, 40]);
    // rc changes how often the host looks, not what the device does per iteration.
    let needed: Vec<u64> = rc.iter().map(|p| p["estimate"]["iterations_needed"].as_u64().unwrap()).collect();
    assert_eq!(needed[0], needed[1]);
    assert_eq!(rc[0]["stats"]["iterations"].as_u64().unwrap(), needed[0]);
    assert!(rc[0]["stats"]["host_calls"].as_u64().unwrap() > rc[1]["stats"]["host_calls"].as_u64().unwrap());
    let batch: Vec<&str> =
        sweeps[1]["points"].as_array().unwrap().iter().map(|p| p["batch"].as_str().unwrap()).collect();
    assert_eq!(batch, vec!["rows:1", "cols:2"]);
}

/// Tuning either tracer link size fixes both: the plan sizes the links to the camera
/// only while neither is tuned (the default run, in the test above, sizes them).
#[test]
fn tuned_link_sizes_are_kept() {
    let point = |tune: &str| -> Value {
        let out = bench(&["--frames", "1", "--no-estimate", "--json", "--tune", tune]);
        let v: Value = serde_json::from_str(&out).expect("valid JSON on stdout");
        v["run"].clone()
    };
    let caps = |p: &Value| -> Vec<u64> {
        p["link_capacity"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect()
    };
    let p = point("side_capacity=32");
    assert!(!p["links_sized_to_camera"].as_bool().unwrap());
    assert_eq!((caps(&p), p["side_capacity"].as_u64().unwrap()), (vec![256, 384, 256], 32));
    let p = point("link_capacity=128,768,384");
    assert!(!p["links_sized_to_camera"].as_bool().unwrap());
    assert_eq!((caps(&p), p["side_capacity"].as_u64().unwrap()), (vec![128, 768, 384], 32));
    // Any other key leaves the links to the plan.
    let p = point("copies=2");
    assert!(p["links_sized_to_camera"].as_bool().unwrap());
}

#[test]
fn bad_input_is_a_one_line_error() {
    let g = garden();
    let base = ["bench", g.as_str(), "--width", "16", "--height", "12"];
    for (extra, want) in [
        (&["--sweep", "rc=0"][..], "at least 1"),
        (&["--sweep", "foo=1"][..], "unknown sweep parameter 'foo'"),
        (&["--sweep", "rc=1,,2"][..], "is not a whole number"),
        (&["--sweep", "rc=5,x"][..], "'x' is not a whole number"),
        (&["--sweep", "rc"][..], "must be rc="),
        (&["--sweep", "rc="][..], "no values"),
        (&["--sweep", "batch=rows"][..], "must be rows:N"),
        (&["--sweep", "batch=diag:1"][..], "unknown scan order 'diag'"),
        (&["--sweep", "batch=rows:1|cols:0"][..], "at least 1"),
        (&["--rc", "0"][..], "--rc 0"),
        (&["--frames", "0"][..], "--frames 0"),
        (&["--batch", "rows:0"][..], "at least 1"),
        (&["--shards", "48"][..], "48"),
        (&["--shards", "many"][..], "unknown shard count 'many' (a power of two, or auto)"),
        (&["--tune", "spil=1"][..], "--tune spil=1: unknown key 'spil'"),
        (&["--tune", "spill=0"][..], "--tune spill=0: 0 is out of range (spill takes 1 to 65536)"),
        (
            &["--tune", "ends_on_device=2"][..],
            "--tune ends_on_device=2: 2 is out of range (ends_on_device takes 0 to 1)",
        ),
        (&["--backend", "ipu"][..], "--features poplar"),
        (&["--compare-paper", "--sweep", "rc=1"][..], "--compare-paper"),
    ] {
        let mut args = base.to_vec();
        args.extend_from_slice(extra);
        let e = expect_error(&args);
        assert!(e.contains(want), "{extra:?}: {e}");
    }
    let e = expect_error(&[
        "bench",
        "no/such/scene.ply",
        "--camera",
        &repo_path("assets/garden.camera.json").display().to_string(),
    ]);
    assert!(e.contains("no/such/scene.ply"), "{e}");
}

/// Where `--shards auto` gives the view to 512 injectors the default batch is
/// blocks:4 (`Batch::FINE`); a batch given is kept, and a shard
/// count given keeps blocks:8.
#[test]
fn the_default_batch_is_finer_where_512_injectors_share_the_view() {
    let g = garden();
    let batch = |extra: &[&str]| {
        let mut args = vec!["bench", g.as_str(), "--width", "64", "--height", "48", "--frames", "1", "--no-estimate"];
        args.extend_from_slice(extra);
        let r = run(&args);
        assert!(r.status.success(), "{:?}: {}", args, String::from_utf8_lossy(&r.stderr));
        let out = String::from_utf8(r.stdout).unwrap();
        let line = out
            .lines()
            .find(|l| l.starts_with("configuration:"))
            .unwrap_or_else(|| panic!("no configuration in:\n{out}"));
        line.split("batch ").nth(1).unwrap().to_string()
    };
    assert_eq!(batch(&[]), "blocks:4");
    assert_eq!(batch(&["--batch", "blocks:8"]), "blocks:8");
    assert_eq!(batch(&["--shards", "64"]), "blocks:8");
}
