//! The march budgets (foam_params `march_budget`, of the injectors and of the
//! tracers): a worker leaves the rays it has no budget left for unmarched (in the
//! injector's queue, or held at the front of the tracer's pending store), and they
//! march the next step. Nothing but the speed may change — the image, depth
//! included, is the same with any budget, in fp32 and half, and every ray finishes
//! exactly once, with roomy buffers or shrunk ones.

use foam_ipu::camera::Camera;
use foam_ipu::device::{DeviceFrame, DeviceOptions, DevicePlan, DeviceRenderer};
use foam_ipu::scene::Scene;
use foam_layout::{foam_frame_status, foam_tile_stats};
use partition::RayLayout;

mod common;

use common::{garden, tight_buffers};

const SHARDS: u64 = 64;

/// The frame `o` plans for `cam`, the budget the plan gave the injectors, and the
/// cell steps the injectors marched.
fn render(scene: &Scene, cam: &Camera, o: &DeviceOptions) -> (DeviceFrame, u32, u64) {
    let plan = DevicePlan::for_camera(scene, SHARDS, cam, o, &()).unwrap();
    let budget = plan.march_budget();
    let injectors: Vec<usize> = plan.tree.injectors().collect();
    let mut steps = 0u64;
    let mut per_call = |_: &foam_frame_status, tiles: &[foam_tile_stats], _: &[u32]| {
        steps = injectors.iter().map(|&n| tiles[n].cell_steps as u64).sum();
    };
    let mut r = DeviceRenderer::new(plan).unwrap();
    let f = r.render_observed(scene, cam, &mut |_, _| {}, Some(&mut per_call)).unwrap();
    assert_eq!(f.stats.rays_finished, (cam.width * cam.height) as u64, "every ray finishes once");
    (f, budget, steps)
}

/// 32 injectors: on a 160 × 120 view the default's 256 have too few pixels each
/// for a budget to hold any back for long.
fn options(layout: RayLayout, budget: Option<u32>) -> DeviceOptions {
    DeviceOptions { layout, march_budget: budget, rc: 1, injectors: 32, ..DeviceOptions::default() }
}

#[test]
fn a_march_budget_changes_nothing_but_speed() {
    let (scene, garden_cam) = garden();
    let cam = garden_cam.resized(160, 120).unwrap();
    for layout in [RayLayout::Fp32, RayLayout::Half] {
        let (free, b, on_injectors) = render(scene, &cam, &options(layout, Some(0)));
        assert_eq!(b, 0);
        assert!(on_injectors > 0);
        let (planned, b, _) = render(scene, &cam, &options(layout, None));
        assert!(b > 0, "{}: the plan sets a budget from the camera's sample", layout.name());
        // One cell step: every worker marches one ray a step, and leaves the rest.
        let (tight, b, held_back) = render(scene, &cam, &options(layout, Some(1)));
        assert_eq!(b, 1);
        // The rays held back march on their injector, not on the tracers.
        assert_eq!(held_back, on_injectors, "{}: cell steps the injectors marched", layout.name());
        assert!(
            tight.stats.iterations > free.stats.iterations,
            "{}: a budget of one step must hold rays back ({} iterations against {})",
            layout.name(),
            tight.stats.iterations,
            free.stats.iterations
        );
        for (name, f) in [("planned", &planned), ("one step", &tight)] {
            assert_eq!(f.output, free.output, "{} {name}: colour, opacity and depth must not depend on the budget", layout.name());
            assert_eq!(f.stats.cell_steps, free.stats.cell_steps, "{} {name}: the same marching, in other steps", layout.name());
        }
    }
}

#[test]
fn a_march_budget_loses_no_ray_with_buffers_shrunk() {
    let (scene, garden_cam) = garden();
    let cam = garden_cam.resized(96, 72).unwrap();
    let (roomy, _, _) = render(scene, &cam, &options(RayLayout::Half, Some(0)));
    let tight = tight_buffers(options(RayLayout::Half, Some(1)));
    let (squeezed, _, _) = render(scene, &cam, &tight);
    assert!(squeezed.stats.max_buffer_occupancy <= 8);
    assert_eq!(squeezed.output, roomy.output, "the image must depend on neither the budget nor buffer sizes");
}

fn tracer_options(layout: RayLayout, budget: Option<u32>) -> DeviceOptions {
    DeviceOptions { tracer_budget: budget, ..options(layout, Some(0)) }
}

/// The frame `o` plans, the budget it gave the tracers, and the cell steps the
/// tracers marched.
fn render_tracers(scene: &Scene, cam: &Camera, o: &DeviceOptions) -> (DeviceFrame, u32, u64) {
    let plan = DevicePlan::for_camera(scene, SHARDS, cam, o, &()).unwrap();
    let budget = plan.tracer_budget();
    let tracers: Vec<usize> = plan.tree.tracer_nodes().map(|(n, _)| n).collect();
    let mut steps = 0u64;
    let mut per_call = |_: &foam_frame_status, tiles: &[foam_tile_stats], _: &[u32]| {
        steps = tracers.iter().map(|&n| tiles[n].cell_steps as u64).sum();
    };
    let mut r = DeviceRenderer::new(plan).unwrap();
    let f = r.render_observed(scene, cam, &mut |_, _| {}, Some(&mut per_call)).unwrap();
    assert_eq!(f.stats.rays_finished, (cam.width * cam.height) as u64, "every ray finishes once");
    (f, budget, steps)
}

#[test]
fn a_tracer_budget_changes_nothing_but_speed() {
    let (scene, garden_cam) = garden();
    let cam = garden_cam.resized(160, 120).unwrap();
    for layout in [RayLayout::Fp32, RayLayout::Half] {
        let (free, b, on_tracers) = render_tracers(scene, &cam, &tracer_options(layout, Some(0)));
        assert_eq!(b, 0);
        assert!(on_tracers > 0);
        let (planned, _, _) = render_tracers(scene, &cam, &tracer_options(layout, None));
        // One cell step: every worker marches one ray a step, and holds the rest.
        let (tight, b, held_back) = render_tracers(scene, &cam, &tracer_options(layout, Some(1)));
        assert_eq!(b, 1);
        // Held rays march on the tracer that held them.
        assert_eq!(held_back, on_tracers, "{}: cell steps the tracers marched", layout.name());
        assert!(
            tight.stats.iterations > free.stats.iterations,
            "{}: a budget of one step must hold rays back ({} iterations against {})",
            layout.name(),
            tight.stats.iterations,
            free.stats.iterations
        );
        for (name, f) in [("planned", &planned), ("one step", &tight)] {
            assert_eq!(f.output, free.output, "{} {name}: colour, opacity and depth must not depend on the budget", layout.name());
            assert_eq!(f.stats.cell_steps, free.stats.cell_steps, "{} {name}: the same marching, in other steps", layout.name());
        }
    }
}

#[test]
fn a_tracer_budget_loses_no_ray_with_buffers_shrunk() {
    let (scene, garden_cam) = garden();
    let cam = garden_cam.resized(96, 72).unwrap();
    let (roomy, _, _) = render_tracers(scene, &cam, &tracer_options(RayLayout::Half, Some(0)));
    let tight = tight_buffers(DeviceOptions { tracer_budget: Some(1), ..options(RayLayout::Half, Some(1)) });
    let (squeezed, _, _) = render_tracers(scene, &cam, &tight);
    assert!(squeezed.stats.max_buffer_occupancy <= 8);
    assert_eq!(squeezed.output, roomy.output, "the image must depend on neither budget nor buffer sizes");
}
