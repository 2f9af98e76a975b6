//! Replicas of hot shards (src/device/replicas.rs): a replicated shard's rays are
//! marched on several tiles, and nothing but the speed may change — the image,
//! depth included, is the same with them on and off, in fp32 and half, and every
//! ray finishes exactly once, with roomy buffers or shrunk ones. Tracers beside a
//! replicated shard hold side links to several of its tiles and pick the one of
//! the ray's class (the tile a router would pick); with shrunk buffers a full pick
//! falls to the others. Replicas on
//! lanes of their tracer's router (the default) and under a router of their own
//! give the same image.

use std::collections::HashMap;

use foam_ipu::camera::Camera;
use foam_ipu::device::edges::EdgeKind;
use foam_ipu::device::tree::Role;
use foam_ipu::device::{DeviceFrame, DeviceOptions, DevicePlan, DeviceRenderer};
use foam_ipu::scene::Scene;
use foam_layout::{foam_frame_status, foam_tile_stats};
use partition::RayLayout;

mod common;

use common::{garden, tight_buffers};

const SHARDS: u64 = 256;

/// The frame `o` plans for `cam`, and the cell steps each replica tile marched and
/// the pixels it wrote (into its result store, or its slice when it replicates a
/// home tracer). Checks that every tile of a replicated shard marched within 15 %
/// of its twins.
fn render(scene: &Scene, cam: &Camera, o: &DeviceOptions) -> (DeviceFrame, Vec<u64>, u64) {
    let plan = DevicePlan::for_camera(scene, SHARDS, cam, o, &()).unwrap();
    let replicas: Vec<usize> = plan.tree.replicas().iter().map(|&(n, _)| n).collect();
    assert_eq!(replicas.is_empty(), o.replicas == 0, "replicas {}: {} planned", o.replicas, replicas.len());
    // Tracers with several side links to one replicated shard's tiles, which pick
    // among them by the ray's pixel (replicas::with_replica_sides).
    let shard_of =
        |n: u32| plan.tree.replicas().iter().find(|&&(r, _)| r == n as usize).map_or(n as usize, |&(_, s)| s);
    let mut links: HashMap<(u32, usize), u32> = HashMap::new();
    for e in plan.spec.edges.iter().filter(|e| EdgeKind::of(e) == EdgeKind::Side) {
        *links.entry((e.from, shard_of(e.to))).or_default() += 1;
    }
    let spread = links.values().filter(|&&n| n > 1).count();
    assert_eq!(spread > 0, o.replicas > 0 && o.side_links > 0, "{spread} tracers with several links to one shard");
    let mut on_lanes = 0;
    for &(n, s) in plan.tree.replicas() {
        let (node, tracer) = (&plan.tree.nodes[n], &plan.tree.nodes[s]);
        assert_eq!((node.role, node.prefix), (Role::Tracer, tracer.prefix), "a replica holds its shard's id");
        // A sibling of its tracer: on lanes of a router of the tree (one that routes
        // by shard-id bits), or under a router of one shard's tiles (route bits 0;
        // also where the tracer's router has no lanes left).
        assert_eq!(node.parent, tracer.parent, "replica node {n} of shard {s}");
        on_lanes += plan.tree.on_router_lanes(n) as usize;
        assert_eq!(plan.spec.nodes[n].shard_offset, plan.spec.nodes[s].shard_offset, "and its blob");
        assert_eq!(plan.spec.nodes[n].copies, plan.spec.nodes[s].copies, "and its copies");
        assert_ne!(node.tile, tracer.tile);
    }
    assert_eq!(on_lanes > 0, o.replica_lanes > Some(0) && !replicas.is_empty(), "{on_lanes} replicas on lanes");
    let (mut steps, mut pixels) = (vec![0u64; replicas.len()], 0u64);
    let shard_tiles: Vec<Vec<usize>> = plan.tree.shard_tiles().into_iter().filter(|t| t.len() > 1).collect();
    let mut per_shard = vec![Vec::new(); shard_tiles.len()];
    let mut per_call = |_: &foam_frame_status, tiles: &[foam_tile_stats], _: &[u32]| {
        for (k, &n) in replicas.iter().enumerate() {
            steps[k] = tiles[n].cell_steps as u64;
        }
        pixels = replicas.iter().map(|&n| tiles[n].pixels as u64).sum();
        for (all, ts) in per_shard.iter_mut().zip(&shard_tiles) {
            *all = ts.iter().map(|&n| tiles[n].cell_steps as u64).collect();
        }
    };
    let mut r = DeviceRenderer::new(plan).unwrap();
    let f = r.render_observed(scene, cam, &mut |_, _| {}, Some(&mut per_call)).unwrap();
    assert_eq!(f.stats.rays_finished, (cam.width * cam.height) as u64, "every ray finishes once");
    // Each tile of a replicated shard marches its class's rays (ray.h
    // foam_replica_class), whichever way they came: an even share.
    for tiles in &per_shard {
        let (least, most) = (tiles.iter().min().unwrap(), tiles.iter().max().unwrap());
        assert!(*most as f64 <= 1.15 * *least as f64, "a replicated shard's tiles march {tiles:?}");
    }
    (f, steps, pixels)
}

/// A view whose injectors hold only the start shard, so that the tracers around
/// the camera carry most of the frame, and the plan replicates them. Shards cut by
/// bytes: a cut by load (which the plan would make here) evens the tracers out
/// instead, and with shrunk buffers cuts differently (tests/device_load_cut.rs).
fn options(layout: RayLayout, replicas: u32) -> DeviceOptions {
    DeviceOptions {
        layout,
        replicas,
        load_cut: Some(0),
        region_bytes: Some(0),
        size_links: true,
        rc: 1,
        ..DeviceOptions::default()
    }
}

#[test]
fn replicas_march_the_hot_shards_and_change_nothing_but_speed() {
    let (scene, garden_cam) = garden();
    let cam = garden_cam.resized(160, 120).unwrap();
    for layout in [RayLayout::Fp32, RayLayout::Half] {
        let (off, _, _) = render(scene, &cam, &options(layout, 0));
        for replica_lanes in [Some(32), Some(0)] {
            let (on, steps, _) = render(scene, &cam, &DeviceOptions { replica_lanes, ..options(layout, 2) });
            let what = format!("{} (replica_lanes={replica_lanes:?})", layout.name());
            assert!(
                steps.iter().filter(|&&s| s > 0).count() * 2 > steps.len(),
                "{what}: most replicas march: {steps:?}"
            );
            assert_eq!(on.output, off.output, "{what}: colour, opacity and depth must not depend on replicas");
            assert_eq!(on.stats.cell_steps, off.stats.cell_steps, "{what}: the same marching, on other tiles");
        }
    }
}

#[test]
fn replicas_lose_no_ray_with_buffers_shrunk() {
    let (scene, garden_cam) = garden();
    let cam = garden_cam.resized(96, 72).unwrap();
    let (roomy, _, _) = render(scene, &cam, &options(RayLayout::Half, 0));
    // Every finished ray goes to its pixel's home: replicas of homes write their
    // slices, which the host adds to the home's.
    for replica_lanes in [Some(32), Some(0)] {
        let tight = tight_buffers(DeviceOptions { results: 0, replica_lanes, ..options(RayLayout::Half, 1) });
        let (squeezed, steps, pixels) = render(scene, &cam, &tight);
        assert!(steps.iter().any(|&s| s > 0) && pixels > 0, "the replicas march and write pixels: {steps:?}, {pixels}");
        assert!(squeezed.stats.max_buffer_occupancy <= 8);
        assert_eq!(squeezed.output, roomy.output, "the image must depend on neither replicas nor buffer sizes");
    }
}
