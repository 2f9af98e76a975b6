//! Scenes over several IPUs: one graph on a target of N IPUs (tiles numbered across
//! them), the k-d tree's top levels choosing each shard's IPU. The image must not
//! depend on the IPU count, no ray may be lost on the links between IPUs, and a
//! scene too big for one IPU renders on the fewest that hold it.

use foam_ipu::camera::Camera;
use foam_ipu::device::ipus::{edge_bytes, per_ipu};
use foam_ipu::device::tree::Role;
use foam_ipu::device::{DeviceFrame, DeviceOptions, DevicePlan, DeviceRenderer};
use foam_ipu::scene::Scene;
use partition::RayLayout;

mod common;

use common::{arg, garden, garden_arg, garden_camera_arg, run};

const TILES: u32 = 1472;

fn plan(scene: &Scene, cam: &Camera, shards: u64, o: &DeviceOptions) -> DevicePlan {
    DevicePlan::for_camera(scene, shards, cam, o, &()).unwrap()
}

fn render(scene: &Scene, cam: &Camera, plan: DevicePlan) -> DeviceFrame {
    DeviceRenderer::new(plan).unwrap().render(scene, cam, &mut |_, _| {}).unwrap()
}

fn fp32(ipus: u32) -> DeviceOptions {
    DeviceOptions { layout: RayLayout::Fp32, ipus, ..DeviceOptions::default() }
}

/// The same 64 shards on one IPU and on two (32 each, and replicas of hot shards on
/// each IPU's free tiles): the same floats, while the second graph really spans two
/// IPUs and the runtime counts what crosses them.
#[test]
fn two_ipus_render_the_image_of_one_bit_for_bit() {
    let (scene, garden_cam) = garden();
    let cam = garden_cam.resized(96, 72).unwrap();
    let one = render(scene, &cam, plan(scene, &cam, 64, &fp32(1)));
    let two_plan = plan(scene, &cam, 64, &fp32(2));

    // Shard ids' top bit chooses the IPU: tracers 0..32 on IPU 0, 32..64 on IPU 1,
    // each IPU's tiles numbered from i * 1472; the root, spill store and injectors
    // on IPU 0.
    let tree = &two_plan.tree;
    for (i, n) in tree.nodes.iter().enumerate() {
        let want = if n.role == Role::Tracer { n.prefix >> (tree.id_bits - 1) } else { tree.ipu_of(i, 2) };
        assert_eq!(n.tile / TILES, want, "node {i} ({:?}) on tile {}", n.role, n.tile);
    }
    assert!(tree.nodes.iter().all(|n| matches!(n.role, Role::Tracer | Role::Router) || n.tile < TILES));
    // Each IPU's free tiles hold replicas of its own hot shards (the tracer role,
    // on their shard's IPU by the loop above), beside its 32 tracers.
    let loads = per_ipu(&two_plan).unwrap();
    let replicas =
        |ipu: u32| tree.replicas().iter().filter(|&&(n, _)| tree.nodes[n].tile / TILES == ipu).count() as u64;
    assert_eq!(loads.iter().map(|l| l.tracers).collect::<Vec<_>>(), vec![32 + replicas(0), 32 + replicas(1)]);
    assert!(replicas(0) > 0 && replicas(1) > 0, "{} and {} replicas", replicas(0), replicas(1));
    let per_iteration: u64 = loads.iter().map(|l| l.bytes_out_per_iteration).sum();
    assert!(per_iteration > 0 && loads[0].bytes_out_per_iteration == loads[1].bytes_in_per_iteration);

    // What crossed, as the runtime counted its Copy bytes between tiles of different
    // IPUs: every iteration's link buffers plus the frame start's camera broadcast
    // to the marching tiles on IPU 1.
    let camera_bytes: u64 = {
        let bytes = poplar_bridge::spec_tile_bytes(&two_plan.spec).unwrap();
        tree.nodes
            .iter()
            .zip(&bytes)
            .filter(|(n, _)| matches!(n.role, Role::Tracer | Role::Injector) && n.tile >= TILES)
            .map(|(_, b)| b.camera as u64)
            .sum()
    };
    let edges_across: u64 = two_plan
        .spec
        .edges
        .iter()
        .filter(|e| tree.nodes[e.from as usize].tile / TILES != tree.nodes[e.to as usize].tile / TILES)
        .map(|e| edge_bytes(e, two_plan.ray_bytes).iter().sum::<u64>())
        .sum();
    // ...and every tracer on the second IPU sends its word of finished pixels to the
    // spill store on the first.
    let words_across =
        foam_ipu::device::ipus::finish_senders(&two_plan).filter(|&t| tree.nodes[t].tile >= TILES).count() as u64
            * foam_ipu::device::ipus::FINISH_WORD_BYTES;
    assert!(words_across > 0);
    assert_eq!(edges_across + words_across, per_iteration);
    let two = render(scene, &cam, two_plan);
    assert_eq!(two.stats.rays_dropped, 0);
    assert_eq!((one.stats.ipus, two.stats.ipus), (1, 2));
    assert_eq!(one.stats.bytes_across_ipus, 0);
    assert_eq!(two.stats.bytes_across_ipus, per_iteration * two.stats.iterations + camera_bytes);

    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<u32>>();
    assert_eq!(bits(&two.output.rgb), bits(&one.output.rgb), "colour differs between 1 and 2 IPUs");
    assert_eq!(bits(&two.output.opacity), bits(&one.output.opacity), "opacity differs between 1 and 2 IPUs");
    assert_eq!(two.stats.iterations, one.stats.iterations, "the schedule does not depend on tile numbers");
}

/// Every link buffer a few rays wide, the ones between the IPUs among them, and the
/// in-flight cap one buffer: back-pressure across the IPU-Links, nothing dropped,
/// the same image as roomy buffers on one IPU.
#[test]
fn no_ray_is_lost_with_the_links_between_ipus_a_few_rays_wide() {
    let (scene, garden_cam) = garden();
    let cam = garden_cam.resized(96, 72).unwrap();
    let roomy = render(scene, &cam, plan(scene, &cam, 64, &fp32(1)));
    let tight = DeviceOptions {
        link_capacity: vec![2],
        side_capacity: 1,
        tracer_queue: 3,
        router_queue: Some(4),
        spill: Some(8),
        inject_capacity: Some(2),
        direct_capacity: Some(1),
        ..fp32(4)
    };
    let p = plan(scene, &cam, 64, &tight);
    let loads = per_ipu(&p).unwrap();
    assert!(loads.iter().all(|l| l.bytes_out_per_iteration > 0), "every IPU has links to another: {loads:?}");
    let squeezed = render(scene, &cam, p);
    assert_eq!((squeezed.stats.rays_dropped, squeezed.stats.rays_finished), (0, 96 * 72));
    assert!(squeezed.stats.iterations > 4 * roomy.stats.iterations, "back-pressure should slow the frame down");
    assert!(squeezed.stats.bytes_across_ipus > 0);
    assert_eq!(squeezed.output, roomy.output, "the image must not depend on IPUs or buffer sizes");
}

/// Garden in 2 shards per IPU at 64×48 does not fit one IPU (even with its leaves
/// split onto free tiles), fits two: `--ipus auto` renders it there with every ray,
/// within 50 dB of the reference; `--ipus 1` is the one-line error; partition says
/// which SH degrees fit on 1, 2 and 4 IPUs, and auto with a degree takes the
/// fewest IPUs that hold it.
#[test]
fn a_scene_too_big_for_one_ipu_renders_on_the_fewest_that_hold_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name);
    let (g, cam) = (garden_arg(), garden_camera_arg());
    let size = ["--width", "64", "--height", "48"];
    let device = |extra: &[&str]| -> Vec<String> {
        let mut v: Vec<String> =
            ["render", g.as_str(), "--shards", "2"].iter().chain(&size).map(|s| s.to_string()).collect();
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    let one =
        run(&device(&["--ipus", "1", "-o", arg(&path("one.png"))]).iter().map(String::as_str).collect::<Vec<_>>());
    let e = String::from_utf8_lossy(&one.stderr);
    assert!(!one.status.success() && e.contains("does not fit one Mk2 in ") && e.lines().count() == 1, "{e}");
    // Degree 1 needs 4 IPUs: on 2 the error counts the IPUs it was cut for.
    let two = run(&device(&["--ipus", "2", "--sh-degree", "1", "-o", arg(&path("two.png"))])
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>());
    let e = String::from_utf8_lossy(&two.stderr);
    assert!(!two.status.success() && e.contains("does not fit 2 Mk2 IPUs in ") && e.lines().count() == 1, "{e}");
    assert!(!path("two.png").exists());

    let stats = path("s.json");
    let r = run(&device(&["--ipus", "auto", "-o", arg(&path("auto.png")), "--stats", arg(&stats)])
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>());
    let (out, err) = (String::from_utf8_lossy(&r.stdout), String::from_utf8_lossy(&r.stderr));
    assert!(r.status.success(), "{err}");
    assert!(err.contains("--ipus auto: the scene fits on 2 IPUs (4 shards, SH degree 0)"), "{err}");
    assert!(out.contains("3072/3072 finished, 0 dropped") && out.contains("2 IPUs"), "{out}");
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    assert_eq!((json["ipus"].as_u64(), json["rays_dropped"].as_u64()), (Some(2), Some(0)));
    assert!(json["bytes_across_ipus"].as_u64().unwrap() > 0, "{json}");

    let reference = path("ref.png");
    let r = run(&[
        "reference",
        g.as_str(),
        "--camera",
        cam.as_str(),
        "--sh-degree",
        "0",
        "-o",
        arg(&reference),
        size[0],
        size[1],
        size[2],
        size[3],
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let r = run(&["compare", arg(&path("auto.png")), arg(&reference), "--min-psnr", "50"]);
    assert!(r.status.success(), "{}{}", String::from_utf8_lossy(&r.stdout), String::from_utf8_lossy(&r.stderr));

    // partition: degree 0 fits on 2 IPUs, not on 1; degree 1 needs 4.
    let mut p = vec!["partition", g.as_str(), "--shards", "2", "--json"];
    p.extend(size);
    let v: serde_json::Value = serde_json::from_slice(&run(&p).stdout).unwrap();
    let fit = |ipus: u64, degree: u64| {
        v["sh_degrees_on_ipus"].as_array().unwrap().iter().find(|f| f["ipus"] == ipus && f["degree"] == degree).unwrap()
            ["fits"]
            .as_bool()
            .unwrap()
    };
    assert!(!fit(1, 0) && fit(2, 0) && !fit(2, 1) && fit(4, 1), "{}", v["sh_degrees_on_ipus"]);
    p.extend(["--ipus", "auto", "--sh-degree", "1"]);
    let r = run(&p);
    let v: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    assert_eq!(
        (v["ipus"].as_u64(), v["sh_degree"].as_u64(), v["fits"].as_bool()),
        (Some(4), Some(1), Some(true)),
        "{v}"
    );
    assert_eq!(v["per_ipu"].as_array().unwrap().len(), 4);
    assert!(String::from_utf8_lossy(&r.stderr).contains("--ipus auto: 4 IPUs"));
}

#[test]
fn a_bad_ipu_count_is_a_one_line_error() {
    let g = garden_arg();
    for cmd in ["render", "bench", "partition"] {
        for bad in ["3", "0", "32", "two"] {
            let e = common::expect_error(&[cmd, g.as_str(), "--ipus", bad]);
            assert!(
                e.contains(&format!("unknown IPU count '{bad}' (1, 2, 4, 8, 16 or auto)")),
                "{cmd} --ipus {bad}: {e}"
            );
        }
    }
    // An IPU with too few tiles for its share of the tree names itself (the plan
    // takes fewer injectors, which sit on IPU 0, while that leaves one).
    let e = common::expect_error(&[
        "render",
        g.as_str(),
        "--ipus",
        "2",
        "--shards",
        "8",
        "--width",
        "64",
        "--height",
        "48",
        "--tune",
        "tiles=10",
        "--tune",
        "injectors=8",
    ]);
    assert!(e.contains("IPU 0 needs 12 tiles (8 tracers, 4 routers, spill store and injectors) but has 10"), "{e}");
}
