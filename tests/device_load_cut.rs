//! The cut by the camera's load (`--tune load_cut`, partition::balance_load): the
//! plan cuts the scene again so that the sampled rays' cell steps balance over the
//! shards. The shards change, so the tiles a ray crosses do, and nothing else may:
//! the fp32 image, depth included, and the cells marched are the same as with the
//! cut by bytes, with roomy buffers or shrunk ones; in half (which rounds a ray
//! where it leaves a shard) every ray still finishes exactly once.

use foam_ipu::camera::Camera;
use foam_ipu::device::{DeviceFrame, DeviceOptions, DevicePlan, DeviceRenderer};
use foam_ipu::scene::Scene;
use partition::RayLayout;

mod common;

use common::{garden, tight_buffers};

const SHARDS: u64 = 256;

fn render(scene: &Scene, cam: &Camera, o: &DeviceOptions) -> (DeviceFrame, DevicePlan) {
    render_in(scene, cam, o, SHARDS)
}

fn render_in(scene: &Scene, cam: &Camera, o: &DeviceOptions, shards: u64) -> (DeviceFrame, DevicePlan) {
    let plan = DevicePlan::for_camera(scene, shards, cam, o, &()).unwrap();
    let mut r = DeviceRenderer::new(plan.clone()).unwrap();
    let f = r.render(scene, cam, &mut |_, _| {}).unwrap();
    assert_eq!(f.stats.rays_finished, (cam.width * cam.height) as u64, "every ray finishes once");
    (f, plan)
}

/// Injectors that hold only the start shard leave the tracers most of the frame,
/// so that the load lands on them.
fn options(layout: RayLayout, load_cut: u32) -> DeviceOptions {
    DeviceOptions {
        layout,
        load_cut: Some(load_cut),
        region_bytes: Some(0),
        size_links: true,
        rc: 1,
        ..DeviceOptions::default()
    }
}

/// Cells per shard of the plan's cut.
fn cells(plan: &DevicePlan) -> Vec<usize> {
    (0..plan.partition.shards()).map(|s| plan.partition.cells(s).len()).collect()
}

#[test]
fn a_cut_by_load_changes_the_shards_and_not_the_image() {
    let (scene, garden_cam) = garden();
    let cam = garden_cam.resized(160, 120).unwrap();
    for layout in [RayLayout::Fp32, RayLayout::Half] {
        let (off, plain) = render(scene, &cam, &options(layout, 0));
        let (on, by_load) = render(scene, &cam, &options(layout, 95));
        assert_eq!((plain.load_cut, by_load.load_cut), (None, Some(95)), "{}", layout.name());
        let (a, b) = (cells(&plain), cells(&by_load));
        let spread = |v: &[usize]| *v.iter().max().unwrap() as f64 / *v.iter().min().unwrap() as f64;
        assert!(
            spread(&b) > 2.0 * spread(&a),
            "{}: shards of {}..{} cells, by bytes {}..{}",
            layout.name(),
            b.iter().min().unwrap(),
            b.iter().max().unwrap(),
            a.iter().min().unwrap(),
            a.iter().max().unwrap()
        );
        // The half payload rounds a ray at every shard it leaves, so only fp32
        // marches the very same cells whatever the shards.
        if layout == RayLayout::Fp32 {
            assert_eq!(on.stats.cell_steps, off.stats.cell_steps, "fp32: the same cells marched, on other tiles");
            assert!(on.output == off.output, "fp32: colour, opacity and depth must not depend on the cut");
        }
    }
}

#[test]
fn a_cut_by_load_loses_no_ray_with_buffers_shrunk() {
    let (scene, garden_cam) = garden();
    let cam = garden_cam.resized(96, 72).unwrap();
    // fp32: smaller buffers leave the tile more room for its shard, so the cut by
    // load differs too, and only fp32 rays do not depend on the shards.
    let (roomy, _) = render(scene, &cam, &options(RayLayout::Fp32, 0));
    let (squeezed, plan) =
        render(scene, &cam, &tight_buffers(DeviceOptions { results: 0, ..options(RayLayout::Fp32, 95) }));
    assert_eq!(plan.load_cut, Some(95));
    assert!(squeezed.stats.max_buffer_occupancy <= 8);
    assert!(squeezed.output == roomy.output, "the image must depend on neither the cut nor buffer sizes");
}

/// `lean_queue`: the cut fills the shards nobody looks at to the room of a tracer
/// with a pending store of that many rays and one result slot per worker, so their
/// tiles' stores shrink to what is left (never under it), and the image is the
/// cut by bytes' own. A long pending store, so that the cold shards' tiles cannot keep it whole.
#[test]
fn a_lean_cut_fills_the_cold_tiles_and_changes_nothing_but_the_tiles() {
    let (scene, garden_cam) = garden();
    let cam = garden_cam.resized(96, 72).unwrap();
    let at = |o: &DeviceOptions| render_in(scene, &cam, o, 16);
    let queues = |plan: &DevicePlan| -> Vec<u32> {
        plan.tree
            .tracer_nodes()
            .map(|(i, _)| {
                bytemuck::pod_read_unaligned::<foam_layout::foam_params>(&plan.spec.nodes[i].params).queue_capacity
            })
            .collect()
    };
    let full = DeviceOptions::default().tracer_queue;
    let (plain, by_bytes) = at(&options(RayLayout::Fp32, 0));
    let (cut, by_load) = at(&options(RayLayout::Fp32, 95));
    // A long pending store, which the cold shards' tiles have no room for.
    let long = 8192;
    let (lean, leaner) =
        at(&DeviceOptions { lean_queue: Some(64), tracer_queue: long, ..options(RayLayout::Fp32, 95) });
    assert_eq!((by_load.load_cut, leaner.load_cut), (Some(95), Some(95)));
    assert!(
        queues(&by_bytes).iter().chain(&queues(&by_load)).all(|&q| q == full),
        "without lean_queue every store is whole"
    );
    let q = queues(&leaner);
    assert!(q.iter().any(|&q| q < long) && q.contains(&long) && q.iter().all(|&q| q >= 64), "lean stores: {q:?}");
    let biggest = |p: &DevicePlan| cells(p).into_iter().max().unwrap();
    assert!(
        biggest(&leaner) > biggest(&by_load),
        "the cold shards take more cells: {} against {}",
        biggest(&leaner),
        biggest(&by_load)
    );
    assert!(lean.output == plain.output && cut.output == plain.output, "fp32: the image must not depend on the cut");
}
