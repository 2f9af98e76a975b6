//! The march budgets (foam_params `march_budget`, of the injectors and of the
//! tracers): a worker leaves the rays it has no budget left for unmarched (in the
//! injector's queue, or held at the front of the tracer's pending store), and they
//! march the next step; the ray a worker's budget ends in pauses there, inside its
//! shard, and its worker marches it on the next step from its fp32 state. Nothing
//! but the speed may change — the image, depth included, is the same with any
//! budget, in fp32 and half, and every ray finishes exactly once, with roomy
//! buffers or shrunk ones.

use foam_ipu::camera::Camera;
use foam_ipu::device::frame::{TRACER_HEAD_WORDS, work_offsets};
use foam_ipu::device::tree::Role;
use foam_ipu::device::{DeviceFrame, DeviceOptions, DevicePlan, DeviceRenderer};
use foam_ipu::scene::Scene;
use foam_layout::{FOAM_IW_COUNTERS, FOAM_TW_COUNTERS, FOAM_WORKERS, foam_frame_status, foam_tile_stats};
use partition::RayLayout;

mod common;

use common::{garden, tight_buffers};

const SHARDS: u64 = 64;

/// Which march budget a test sets: the injectors' or the tracers'.
#[derive(Clone, Copy)]
enum Budget {
    Injectors,
    Tracers,
}

/// 32 injectors: on a 160 × 120 view the default's 256 have too few pixels each
/// for a budget to hold any back for long. The tracers' budget is off when the
/// injectors' is tested, and the injectors' when a tracer budget is given (paced
/// injectors set the iterations); planned, both are (the tracers' derives from it).
fn options(layout: RayLayout, which: Budget, budget: Option<u32>) -> DeviceOptions {
    let o = DeviceOptions { layout, rc: 1, injectors: 32, ..DeviceOptions::default() };
    match which {
        Budget::Injectors => DeviceOptions { march_budget: budget, tracer_budget: Some(0), ..o },
        Budget::Tracers => DeviceOptions { march_budget: budget.map(|_| 0), tracer_budget: budget, ..o },
    }
}

/// The frame `o` plans for `cam`, the budget the plan gave the role `which` names,
/// and the cell steps that role's tiles marched. With a budget, no worker of the
/// role spends more in a step (rc 1: the observer sees every step, and each worker's
/// counters) than its budget allows: it counts each cell step by its faces, each
/// shard visit and each ray marched on (march.h foam_budget_q8: `FOAM_BUDGET_STEP_Q8`,
/// `_FACE_Q8`, `_VISIT_Q8`, `_RAY_Q8`, an injector's visits and rays
/// `FOAM_BUDGET_INJECTOR_*`, in 1/256 of a 15-face step), starts a ray or a
/// visit only under the budget, and ends a visit at the step that spends it: at most
/// the budget, a ray, a step of the scene's dearest cell (its most faces) and a visit.
fn render(scene: &Scene, cam: &Camera, o: &DeviceOptions, which: Budget) -> (DeviceFrame, u32, u64) {
    let plan = DevicePlan::for_camera(scene, SHARDS, cam, o, &()).unwrap();
    let (budget, nodes): (u32, Vec<usize>) = match which {
        Budget::Injectors => (plan.march_budget(), plan.tree.injectors().collect()),
        Budget::Tracers => (plan.tracer_budget(), plan.tree.tracer_nodes().map(|(n, _)| n).collect()),
    };
    // Each node's per-worker counters (visits, steps, faces and rays first) in the work stream.
    let (starts, at) = work_offsets(&plan.tree.nodes);
    let offsets: Vec<(usize, usize)> = plan
        .tree
        .nodes
        .iter()
        .zip(starts)
        .map(|(n, o)| match n.role {
            Role::Tracer => (o + TRACER_HEAD_WORDS, FOAM_TW_COUNTERS as usize),
            Role::Injector => (o, FOAM_IW_COUNTERS as usize),
            Role::Router | Role::Spill => (o, 0),
        })
        .collect();
    let faces = (0..scene.len()).map(|i| scene.neighbours(i).len() as u64).max().unwrap_or(0);
    let spent_q8 = match which {
        Budget::Injectors => common::injector_budget_spent_q8,
        Budget::Tracers => common::budget_spent_q8,
    };
    // A visit, one step of the dearest cell and a ray: what a worker under its budget may still start.
    let last = spent_q8(1, 1, faces, 1);
    let mut steps = 0u64;
    let mut prev = vec![0u32; at];
    let (mut most_spent, mut misrouted) = (0u64, 0u64);
    let mut per_call = |_: &foam_frame_status, tiles: &[foam_tile_stats], work: &[u32]| {
        steps = nodes.iter().map(|&n| tiles[n].cell_steps as u64).sum();
        misrouted = tiles.iter().map(|t| t.misrouted as u64).sum();
        for &n in &nodes {
            let (o, row) = offsets[n];
            for w in 0..FOAM_WORKERS as usize {
                let d = |k: usize| (work[o + w * row + k].wrapping_sub(prev[o + w * row + k])) as u64;
                // In 1/256 of a 15-face step.
                let spent = spent_q8(d(0), d(1), d(2), d(3));
                most_spent = most_spent.max(spent);
            }
        }
        prev.copy_from_slice(work);
    };
    let mut r = DeviceRenderer::new(plan).unwrap();
    let f = r.render_observed(scene, cam, &mut |_, _| {}, Some(&mut per_call)).unwrap();
    assert_eq!(f.stats.rays_finished, (cam.width * cam.height) as u64, "every ray finishes once");
    // A paused ray's slot is its worker's alone: when TracerSend kept it among the
    // held rays the workers share out, another worker's stride could reach it while
    // its own worker marched it on (counted here when the ray had moved on; marched
    // twice when it read it half-way).
    assert_eq!(misrouted, 0, "a tracer worker read a slot that was not its own");
    if budget > 0 {
        let bound = budget as u64 * 256 + last;
        assert!(
            most_spent <= bound,
            "a worker spent {most_spent}/256 steps of budget {budget} in one step, over {bound}/256"
        );
    }
    (f, budget, steps)
}

/// No budget, the planned one and one cell step (every worker marches one ray, or
/// with the injectors' one shard of it, a step and holds the rest): the same image
/// and the same cell steps, on the tiles that held the rays.
fn a_budget_changes_nothing_but_speed(which: Budget) {
    let (scene, garden_cam) = garden();
    let cam = garden_cam.resized(160, 120).unwrap();
    for layout in [RayLayout::Fp32, RayLayout::Half] {
        let (free, b, on_role) = render(scene, &cam, &options(layout, which, Some(0)), which);
        assert_eq!(b, 0);
        assert!(on_role > 0);
        let (planned, b, _) = render(scene, &cam, &options(layout, which, None), which);
        assert!(b > 0, "{}: the plan sets a budget from the camera's sample", layout.name());
        let (tight, b, held_back) = render(scene, &cam, &options(layout, which, Some(1)), which);
        assert_eq!(b, 1);
        // The rays held back march where they were held, not further on.
        assert_eq!(held_back, on_role, "{}: cell steps the tiles holding the budget marched", layout.name());
        assert!(
            tight.stats.iterations > free.stats.iterations,
            "{}: a budget of one step must hold rays back ({} iterations against {})",
            layout.name(),
            tight.stats.iterations,
            free.stats.iterations
        );
        for (name, f) in [("planned", &planned), ("one step", &tight)] {
            assert_eq!(
                f.output,
                free.output,
                "{} {name}: colour, opacity and depth must not depend on the budget",
                layout.name()
            );
            assert_eq!(
                f.stats.cell_steps,
                free.stats.cell_steps,
                "{} {name}: the same marching, in other steps",
                layout.name()
            );
        }
    }
}

fn a_budget_loses_no_ray_with_buffers_shrunk(which: Budget) {
    let (scene, garden_cam) = garden();
    let cam = garden_cam.resized(96, 72).unwrap();
    let (roomy, _, _) = render(scene, &cam, &options(RayLayout::Half, which, Some(0)), which);
    let tight = tight_buffers(options(RayLayout::Half, which, Some(1)));
    let (squeezed, _, _) = render(scene, &cam, &tight, which);
    assert!(squeezed.stats.max_buffer_occupancy <= 8);
    assert_eq!(squeezed.output, roomy.output, "the image must depend on neither the budget nor buffer sizes");
}

#[test]
fn a_march_budget_changes_nothing_but_speed() {
    a_budget_changes_nothing_but_speed(Budget::Injectors);
}

#[test]
fn a_march_budget_loses_no_ray_with_buffers_shrunk() {
    a_budget_loses_no_ray_with_buffers_shrunk(Budget::Injectors);
}

#[test]
fn a_tracer_budget_changes_nothing_but_speed() {
    a_budget_changes_nothing_but_speed(Budget::Tracers);
}

#[test]
fn a_tracer_budget_loses_no_ray_with_buffers_shrunk() {
    a_budget_loses_no_ray_with_buffers_shrunk(Budget::Tracers);
}
