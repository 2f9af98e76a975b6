//! The device's own checks and models against what the compiled graph does: the
//! frame loop's overflow and stall detectors in deliberately broken runs, the plan's
//! byte model of every tile role against the graph's memory report, and the cycle
//! model's per-iteration profile against the frame's own counters, and the graph
//! builder's refusal of edges that are not a device.

use std::mem::size_of;

use foam_ipu::device::tree::Role;
use foam_ipu::device::{DeviceError, DeviceOptions, DevicePlan, DeviceRenderer};
use foam_layout::foam_params;

mod common;

use common::garden;

/// Rewrites the foam_params of every node `pick` chooses.
fn patch_params(plan: &mut DevicePlan, pick: &dyn Fn(usize, Role) -> bool, edit: &dyn Fn(&mut foam_params)) {
    for (i, node) in plan.tree.nodes.iter().enumerate() {
        if !pick(i, node.role) {
            continue;
        }
        let bytes = &mut plan.spec.nodes[i].params;
        assert_eq!(bytes.len(), size_of::<foam_params>());
        // SAFETY: foam_params is a plain layout.h record of the same size.
        let mut p: foam_params = unsafe { std::ptr::read_unaligned(bytes.as_ptr().cast()) };
        edit(&mut p);
        // SAFETY: as above, written back byte for byte.
        let raw =
            unsafe { std::slice::from_raw_parts((&p as *const foam_params).cast::<u8>(), size_of::<foam_params>()) };
        bytes.copy_from_slice(raw);
    }
}

/// An in-flight cap no frame here reaches (and within what the graph builder allows
/// the root's 32-bit credit arithmetic).
const UNCAPPED: u32 = 1 << 20;

/// Small buffers everywhere, so that a broken credit shows within a few hundred
/// iterations; an honest frame with them takes about 1300. (Router queues of 128
/// stopped deadlocking the uncapped frame below once the injectors' view was cut
/// by cost: its rays then spread over more of the tree.) 16 injectors: with 128,
/// and with 32 once the routers shared credit by prefix, the frame without the
/// root's in-flight cap happened to finish rather than deadlock (with 16 it
/// deadlocks with router queues of 48, 64 and 96).
fn small_buffers() -> DeviceOptions {
    DeviceOptions {
        injectors: 16,
        link_capacity: vec![32],
        tracer_queue: 32,
        router_queue: Some(64),
        spill: Some(128),
        stall_calls: 10,
        ..DeviceOptions::default()
    }
}

fn frame_with(edit: &dyn Fn(&mut DevicePlan)) -> Result<u64, DeviceError> {
    frame_of(&small_buffers(), edit)
}

fn frame_of(o: &DeviceOptions, edit: &dyn Fn(&mut DevicePlan)) -> Result<u64, DeviceError> {
    let (scene, garden_cam) = garden();
    let cam = garden_cam.resized(96, 72).unwrap();
    let mut plan = DevicePlan::new(scene, 64, cam.width, cam.height, o, &()).unwrap();
    edit(&mut plan);
    let f = DeviceRenderer::new(plan)?.render(scene, &cam, &mut |_, _| {})?;
    Ok(f.stats.iterations)
}

#[test]
fn the_frame_loop_reports_a_deadlock_and_a_credit_violation() {
    let message = |r: Result<u64, DeviceError>| r.expect_err("a broken run must fail").to_string();
    // As planned, the small buffers are slow but finish.
    assert!(frame_with(&|_| {}).unwrap() > 500);
    // The root's in-flight cap is what keeps the router tree deadlock free: lifted,
    // more rays enter than the spill store can take back, the spill
    // store and then every queue fill up, and nothing moves again.
    let e = message(frame_with(&|plan| {
        let root = plan.tree.root();
        patch_params(plan, &|i, _| i == root, &|p| p.max_in_flight = UNCAPPED);
    }));
    assert!(e.contains("no progress in 200 iterations") && e.contains("128 spilled"), "{e}");
    // Tracers that grant credit for room they do not have lose rays: the frame stops
    // and the loop names the tile that dropped them, not just the stall. Extra
    // credit finds a full tracer only where rays pile up on tracers: here the
    // injectors march the start shard alone and the links and router queues are
    // narrower still (with the buffers above, the tracers' rays flow on and 16
    // slots too many never meet a full tracer).
    let congested =
        DeviceOptions { region_bytes: Some(0), link_capacity: vec![8], router_queue: Some(16), ..small_buffers() };
    let e = message(frame_of(&congested, &|plan| {
        patch_params(plan, &|_, role| role == Role::Tracer, &|p| p.extra_credit = 16)
    }));
    assert!(e.contains("rays found no room (a credit violation)") && e.contains("(tracer)"), "{e}");
    // A spill store that over-grants while more rays are in flight than it holds is
    // caught the moment it cannot store one.
    let e = message(frame_with(&|plan| {
        let root = plan.tree.root();
        patch_params(plan, &|i, _| i == root, &|p| p.max_in_flight = UNCAPPED);
        patch_params(plan, &|_, role| role == Role::Spill, &|p| p.extra_credit = 64);
    }));
    assert!(e.contains("the spill store found no room for") && e.contains("a credit violation"), "{e}");
}

/// An injector emits in a frame's first step, before the root's first allowance
/// can reach it (layout.h foam_params.max_in_flight): its share of the root's cap
/// on rays in flight, the shares together within the cap, each a full queue where
/// the queues fit. Observed one step a call: the first step emits exactly what the
/// shares allow, every ray finishes, and no ray is dropped where the shares are cut
/// to the spill store's 128 rays.
#[test]
fn injectors_emit_their_share_of_the_in_flight_cap_in_the_first_step() {
    let (scene, garden_cam) = garden();
    let cam = garden_cam.resized(320, 240).unwrap();
    // 32 injectors: each view part has more pixels than its share (with the default
    // 256, a part of this small view has fewer).
    let roomy = DeviceOptions { injectors: 32, ..DeviceOptions::default() };
    for (o, queues_fit) in [(roomy, true), (small_buffers(), false)] {
        let o = DeviceOptions { rc: 1, ..o };
        let plan = DevicePlan::new(scene, 64, cam.width, cam.height, &o, &()).unwrap();
        let cap = params_of(&plan, plan.tree.root()).max_in_flight;
        let shares: Vec<(u32, u32)> =
            plan.tree.injectors().map(|i| params_of(&plan, i)).map(|p| (p.max_in_flight, p.queue_capacity)).collect();
        let total: u32 = shares.iter().map(|s| s.0).sum();
        assert!(total <= cap, "the injectors' first steps emit {total} rays, over the root's cap of {cap}");
        assert!(shares.iter().all(|&(share, queue)| share > 0 && share <= queue), "{shares:?}");
        assert_eq!(shares.iter().all(|&(share, queue)| share == queue), queues_fit, "{shares:?} under {cap}");
        let mut first = None;
        let mut per_call = |st: &foam_layout::foam_frame_status, _: &[foam_layout::foam_tile_stats], _: &[u32]| {
            first.get_or_insert(st.injected);
        };
        let f = DeviceRenderer::new(plan)
            .unwrap()
            .render_observed(scene, &cam, &mut |_, _| {}, Some(&mut per_call))
            .unwrap();
        assert_eq!(first, Some(total), "the first step's rays");
        assert_eq!(f.stats.rays_finished, (cam.width * cam.height) as u64);
    }
}

fn params_of(plan: &DevicePlan, i: usize) -> foam_params {
    let bytes = &plan.spec.nodes[i].params;
    assert_eq!(bytes.len(), size_of::<foam_params>());
    // SAFETY: foam_params is a plain layout.h record of the same size.
    unsafe { std::ptr::read_unaligned(bytes.as_ptr().cast()) }
}

/// Node `i`'s tensor bytes from the one source of tile sizes (codelets/graph/tile_bytes.h
/// through `poplar_bridge::spec_tile_bytes`), checked against the plan's budgets for
/// its role: a tracer's against partition's footprint with its own links and stores
/// plus its copies, the stores that fill their tiles (router queues, spill store,
/// camera region) against what the plan sized them to and the reserve they leave.
/// Returns its buffers and the small records beside them that the plan leaves to
/// TILE_RESERVE_BYTES (a tracer's footprint counts its records).
fn modelled_bytes(plan: &DevicePlan, bytes: &[poplar_bridge::TileBytes], i: usize) -> (u64, u64) {
    use foam_ipu::device::options::{TILE_RESERVE_BYTES, tracer_footprint};
    use foam_layout::FOAM_WORKERS;
    let (o, rb, n, spec, b) = (&plan.options, plan.ray_bytes, &plan.tree.nodes[i], &plan.spec.nodes[i], &bytes[i]);
    let p = params_of(plan, i);
    let tile = partition::MK2_TILE_BYTES as u32;
    let records = (b.params + b.stats + b.ctl + b.camera + b.status) as u64;
    let buffers = b.total() as u64 - records;
    let fills = |store: u32| {
        assert!(buffers as u32 + TILE_RESERVE_BYTES <= tile, "{:?} {i}: {buffers} B with a store of {store}", n.role)
    };
    match n.role {
        Role::Tracer => {
            let own = DeviceOptions {
                side_links: plan.sides[i].len() as u32,
                results: p.result_slots * FOAM_WORKERS,
                ..o.clone()
            };
            // A replica holds its shard's copies.
            let shard = plan.tree.shard_of(i).expect("a tracer node holds a shard");
            let copies: usize = plan.copies[shard].iter().map(|&s| plan.spec.nodes[s].shard_bytes).sum();
            // The footprint's items but the program and the reserve are tensors, its
            // records included.
            let f = tracer_footprint(&own, rb, plan.slice_pixels);
            assert_eq!(
                f.tile_bytes(spec.shard_bytes as u64) - f.program - f.reserve + copies as u64,
                b.total() as u64,
                "tracer {i}"
            );
            return (b.total() as u64, 0);
        }
        Role::Router => {
            assert_eq!(b.store as u32, 4 * p.queue_capacity * rb);
            assert_eq!(p.queue_capacity, o.router_queue_capacity(rb, tile, b.links() as u32), "router {i}");
            fills(p.queue_capacity);
        }
        Role::Spill => {
            assert_eq!(b.store as u32, p.queue_capacity * rb);
            assert_eq!(b.finishes, 4 * plan.tree.tracer_nodes().count(), "a word of finished pixels a tracer");
            assert_eq!(p.queue_capacity, o.spill_capacity(rb, tile, (b.links() + b.finishes) as u32));
            fills(p.queue_capacity);
        }
        Role::Injector => {
            assert_eq!(
                (b.region, b.blocks),
                (plan.spec.region_bytes, foam_ipu::device::blocks::list_bytes(p.block_slots))
            );
            fills(b.region as u32);
        }
    }
    (buffers, records)
}

/// Every tile of the compiled graph holds what the plan's byte model says its role
/// holds, to the padding between tensors, and the rest (vertex state, code, worker
/// stacks) fits the reserve the model leaves. Returns each tracer's whole bytes.
fn check_tile_model(plan: &DevicePlan, report: &poplar_bridge::MemoryReport, what: &str) -> Vec<u64> {
    use foam_ipu::device::options::TILE_RESERVE_BYTES;
    let mut tracers = Vec::new();
    let mut roles = std::collections::BTreeSet::new();
    let bytes = poplar_bridge::spec_tile_bytes(&plan.spec).unwrap();
    let resets = poplar_bridge::spec_reset_vertices(&plan.spec).unwrap();
    for (i, n) in plan.tree.nodes.iter().enumerate() {
        // The frame start zeroes every link buffer, framebuffer slice and record a
        // step writes, and nothing the steps only read or keep behind a count (the
        // cycle model prices these vertices).
        let b = &bytes[i];
        let zeroed: Vec<u64> = resets.iter().filter(|r| r.node as usize == i).map(|r| r.bytes).collect();
        // A tracer's result store is not cleared: the host reads as many of its slots as
        // each worker counts in the (zeroed) ctl record.
        let touched = b.links() + b.pixels + b.stats + b.status + b.finishes + b.ctl;
        assert_eq!(zeroed.iter().sum::<u64>(), touched as u64, "{what}: {:?} node {i}'s reset", n.role);
        // A tracer zeroes each of its seven tensors whole (its vertex state has no
        // room for more); the other roles cut theirs of 8 KiB or more in six, a worker
        // each (the root's inbox alone is over 100 KB), and their records whole.
        let record_bytes = (b.stats + b.status + b.ctl) as u64;
        let split = |bytes: usize| if bytes >= 8192 { 6 } else { 1 };
        let expected = match n.role {
            Role::Tracer => 7,
            Role::Router => split(b.inbox) + split(b.outbox) + 2,
            Role::Spill => split(b.inbox) + split(b.outbox) + split(b.finishes) + 3,
            Role::Injector => split(b.inbox) + split(b.outbox) + split(b.direct_in) + split(b.direct_out) + 3,
        };
        assert_eq!(zeroed.len(), expected, "{what}: {:?} node {i}'s reset vertices {zeroed:?}", n.role);
        if n.role != Role::Tracer {
            let largest = [b.inbox, b.outbox, b.direct_in, b.direct_out, b.finishes].into_iter().max().unwrap() as u64;
            let cap = (largest / 6 + 8).max(8191).max(record_bytes);
            assert!(zeroed.iter().all(|&z| z <= cap), "{what}: {:?} node {i}: {zeroed:?}", n.role);
        }
        let tile = report.tiles.iter().find(|t| t.tile == n.tile).expect("every node's tile holds something");
        let (model, records) = modelled_bytes(plan, &bytes, i);
        let whole = tile.tensor_bytes + tile.vertex_state_bytes + tile.code_bytes + tile.stack_bytes;
        // Tensors are whole words placed at 8-byte boundaries: at most 4 B between two.
        let tensors = report.items.iter().filter(|m| m.tile == n.tile && m.kind == poplar_bridge::MemoryKind::Tensor);
        let padding = 4 * tensors.count() as u64;
        assert!(
            (model + records..=model + records + padding).contains(&tile.tensor_bytes),
            "{what}: {:?} tile {} has {} B of tensors, the model {model} + {records} B of records",
            n.role,
            n.tile,
            tile.tensor_bytes
        );
        assert!(
            whole <= model + TILE_RESERVE_BYTES as u64,
            "{what}: {:?} tile {}: {whole} B beyond the model's {model} + reserve",
            n.role,
            n.tile
        );
        roles.insert(format!("{:?}", n.role));
        if n.role == Role::Tracer {
            tracers.push(whole);
        }
    }
    assert_eq!(roles.len(), 4, "{what}: every role checked");
    tracers
}

#[test]
fn every_tile_holds_what_the_plan_modelled() {
    let (scene, cam) = garden();
    // Planned without a camera: the tracers' buffers are the defaults and hold no
    // shard copies, which is what `foam-ipu partition` judges a tile by; its verdict
    // must not be optimistic for any tracer.
    let plan = DevicePlan::new(scene, 1024, cam.width, cam.height, &DeviceOptions::default(), &()).unwrap();
    let shard_bytes: Vec<u64> = plan.spec.nodes[..plan.shards()].iter().map(|n| n.shard_bytes as u64).collect();
    let r = DeviceRenderer::new(plan).unwrap();
    let whole = check_tile_model(r.plan(), &r.session().memory_report().unwrap(), "default plan");
    let footprint = foam_ipu::device::plan::tracer_footprint(&DeviceOptions::default(), cam.width, cam.height, 1024);
    for (s, (&w, &b)) in whole.iter().zip(&shard_bytes).enumerate() {
        let predicted = footprint.tile_bytes(b);
        assert!(
            w <= predicted && predicted - w < 64 * 1024,
            "tracer {s}: {w} B on the tile, `partition` predicts {predicted}"
        );
    }
    // Planned for the camera, with the largest payload: shard copies and result
    // stores grown into the tiles, links sized to the view.
    // Sixteen injectors: with 32 their regions hold nearly every sampled path of this
    // small view, and no tracer would need copies.
    let o = DeviceOptions {
        layout: partition::RayLayout::Fp32,
        hops: true,
        size_links: true,
        injectors: 16,
        ..DeviceOptions::default()
    };
    let plan = DevicePlan::for_camera(scene, 1024, cam, &o, &()).unwrap();
    assert!(plan.copies.iter().any(|c| !c.is_empty()));
    let r = DeviceRenderer::new(plan).unwrap();
    check_tile_model(r.plan(), &r.session().memory_report().unwrap(), "fp32 with hops, planned for the camera");
}

/// Garden's view at `width` × `height` planned for it in 256 shards, one iteration
/// per host call, as `profile` needs it.
fn garden_plan_to_profile(
    width: u32,
    height: u32,
) -> (&'static foam_ipu::scene::Scene, foam_ipu::camera::Camera, DevicePlan) {
    let (scene, garden_cam) = garden();
    let cam = garden_cam.resized(width, height).unwrap();
    let o = DeviceOptions { rc: 1, ..DeviceOptions::default() };
    let plan = DevicePlan::for_camera(scene, 256, &cam, &o, &()).unwrap();
    (scene, cam, plan)
}

#[test]
fn the_cycle_model_profile_adds_up_to_the_frame_counters() {
    let (scene, cam, plan) = garden_plan_to_profile(160, 120);
    // Tracer tiles: one per shard and the replicas (each gets the camera block too).
    let (tracers, injectors) = (plan.tree.tracer_nodes().count() as u64, plan.tree.injectors().len() as u64);
    let p = foam_ipu::cmd::bench::profile::profile(plan, scene, &cam).unwrap();
    let f = &p.frame;
    assert_eq!(p.iterations.len() as u64, f.iterations, "one record per iteration");
    let sum =
        |g: &dyn Fn(&foam_ipu::cmd::bench::profile::IterationLoad) -> u64| p.iterations.iter().map(g).sum::<u64>();
    assert_eq!(sum(&|i| i.cell_steps), f.cell_steps, "cells marched");
    let router_hops: u64 = f.router_levels.iter().map(|l| l.rays_forwarded).sum();
    assert_eq!(sum(&|i| i.router_rays), router_hops, "rays forwarded");
    assert_eq!(sum(&|i| i.injected), f.rays, "primary rays emitted");
    assert!(
        p.iterations.iter().all(|i| i.busiest_cell_steps <= i.cell_steps && i.busiest_router_rays <= i.router_rays)
    );
    assert!(p.iterations.iter().any(|i| i.busiest_cell_steps > 0 && i.busiest_router_rays > 0));
    // Every tile's compute per frame is at most what the busiest tiles of each set
    // took, and the busiest tile's is at least the mean.
    let sets: f64 = p.iterations.iter().map(|i| i.step_cycles.iter().sum::<f64>()).sum();
    assert_eq!(p.tile_cycles.len(), p.tile_roles.len());
    assert!(
        p.tile_cycles.iter().all(|&c| c > 0.0 && c <= sets * (1.0 + 1e-12)),
        "a tile's frame compute within the sets'"
    );
    let b = foam_ipu::cmd::bench::cycles::balance(&p);
    assert_eq!((b.tiles_chip, b.tiles_used), (1472, p.tile_cycles.len() as u64));
    assert!(b.busiest_over_mean_used >= 1.0 && b.busiest_over_mean_chip > b.busiest_over_mean_used);
    // The exchange moves every link buffer whole each iteration, as the model charges
    // it; the frame start broadcasts the camera block to tracers and injectors.
    let camera = size_of::<foam_layout::foam_camera>() as u64 * (tracers + injectors);
    assert_eq!(f.bytes_exchanged, f.iterations * p.link_bytes_total + camera, "bytes exchanged");
    assert!(p.busiest_link_bytes * 8 > p.link_bytes_total / tracers && p.busiest_link_bytes < p.link_bytes_total);
}

/// Every tracer's count of finished pixels reaches the spill store in each step's
/// exchange, so the steps loop ends one iteration after the frame's last pixel is
/// finished, not after that count climbed the router tree, a step per level (garden:
/// 120 → 117 iterations).
#[test]
fn the_frame_ends_one_step_after_its_last_pixel() {
    let (scene, cam, plan) = garden_plan_to_profile(96, 72);
    assert!(plan.tree.nodes.iter().any(|n| n.level >= 3), "a tree of three router levels or more");
    let p = foam_ipu::cmd::bench::profile::profile(plan, scene, &cam).unwrap();
    assert_eq!(p.iterations.iter().map(|i| i.pixels).sum::<u64>(), 96 * 72, "every pixel finished once");
    let last = p.iterations.iter().rposition(|i| i.pixels > 0).expect("a frame with pixels");
    assert_eq!(p.iterations.len(), last + 2, "the frame's iterations: its last pixel's, and one to count it");
}

/// A tile's lanes come from the spec's edges alone, so the graph builder refuses,
/// in one line naming the tile or edge, edges that are not a device: a tracer with
/// no edge up, two edges on one lane, an edge between roles its kind cannot join,
/// side links out of their shards' order, two side links to one tile.
#[test]
fn the_builder_refuses_edges_that_are_not_a_device() {
    use foam_ipu::device::edges::EdgeKind;
    let (scene, garden_cam) = garden();
    let cam = garden_cam.resized(96, 72).unwrap();
    let plan = DevicePlan::new(scene, 64, cam.width, cam.height, &DeviceOptions::default(), &()).unwrap();
    let refusal = |edit: &dyn Fn(&mut DevicePlan)| {
        let mut p = DevicePlan::new(scene, 64, cam.width, cam.height, &DeviceOptions::default(), &()).unwrap();
        edit(&mut p);
        let e = DeviceRenderer::new(p).err().expect("a broken spec must be refused").to_string();
        assert!(!e.contains('\n'), "{e}");
        e
    };
    let up = |p: &DevicePlan, node: u32| {
        p.spec.edges.iter().position(|e| e.from == node && EdgeKind::of(e) == EdgeKind::Tree).unwrap()
    };
    let e = refusal(&|p| {
        let k = up(p, 0);
        p.spec.edges.remove(k);
    });
    assert!(e.starts_with("tracer0@0: a tracer has one edge up"), "{e}");
    // Tracers 0 and 1 share a router: tracer 1's edge onto tracer 0's lane.
    let (a, b) = (up(&plan, 0), up(&plan, 1));
    assert_eq!(plan.spec.edges[a].to, plan.spec.edges[b].to);
    let e = refusal(&|p| p.spec.edges[b].to_lane = p.spec.edges[a].to_lane);
    assert!(e.contains("is taken by the tree edge tracer0@0"), "{e}");
    let injector = plan.spec.edges.iter().position(|e| EdgeKind::of(e) == EdgeKind::Injector).unwrap();
    let e = refusal(&|p| p.spec.edges[injector].to = 0);
    assert!(e.starts_with("injector lane injector") && e.ends_with("joins roles that edges of its kind do not"), "{e}");
    // TracerSend finds a ray's side links by bisection: a tracer's first two side
    // links swapped are out of its shards' order.
    let sides_at = |p: &DevicePlan, t: u32| -> Vec<(usize, bool)> {
        let mut at: Vec<(u32, usize, bool)> = (p.spec.edges.iter().enumerate())
            .filter(|(_, e)| EdgeKind::of(e) == EdgeKind::Side && (e.from == t || e.to == t))
            .map(|(k, e)| if e.from == t { (e.from_lane, k, true) } else { (e.to_lane, k, false) })
            .collect();
        at.sort();
        at.into_iter().map(|(_, k, from)| (k, from)).collect()
    };
    let t = (0..plan.tree.nodes.len() as u32)
        .find(|&t| sides_at(&plan, t).len() >= 2)
        .expect("a tracer with two side links");
    let e = refusal(&|p| {
        let s = sides_at(p, t);
        fn lane(p: &mut DevicePlan, (k, from): (usize, bool)) -> &mut u32 {
            let e = &mut p.spec.edges[k];
            if from { &mut e.from_lane } else { &mut e.to_lane }
        }
        let (x, y) = (*lane(p, s[0]), *lane(p, s[1]));
        *lane(p, s[0]) = y;
        *lane(p, s[1]) = x;
    });
    assert!(e.contains("side links go in ascending order of their shard"), "{e}");
    // An injector's map from the root's children to its direct lanes is built from
    // lanes in the children's order: its first two swapped are refused.
    let direct = |p: &DevicePlan, lane: u32| {
        let first = p.tree.injectors().start as u32;
        p.spec.edges.iter().position(|e| EdgeKind::of(e) == EdgeKind::Direct && e.from == first && e.from_lane == lane)
    };
    let (d0, d1) = (direct(&plan, 0).expect("direct lanes"), direct(&plan, 1).expect("two direct lanes"));
    let e = refusal(&|p| {
        p.spec.edges[d0].from_lane = 1;
        p.spec.edges[d1].from_lane = 0;
    });
    assert!(e.contains("direct lanes go in ascending order of child"), "{e}");
    // TracerSend tries one link into a shard of one tile: a side link twinned, the
    // twin on the lane after it at both ends (the links after it moved up one, so
    // both ends keep their shards' order), leads twice to one tile.
    let twin_of = (plan.spec.edges.iter().enumerate())
        .find(|(_, e)| {
            EdgeKind::of(e) == EdgeKind::Side && sides_at(&plan, e.from).len() < 16 && sides_at(&plan, e.to).len() < 16
        })
        .map(|(k, _)| k)
        .expect("a side link whose ends have room for another");
    let e = refusal(&|p| {
        let twin = p.spec.edges[twin_of];
        for (node, lane) in [(twin.from, twin.from_lane), (twin.to, twin.to_lane)] {
            for e in p.spec.edges.iter_mut().filter(|e| EdgeKind::of(e) == EdgeKind::Side) {
                if e.from == node && e.from_lane > lane {
                    e.from_lane += 1;
                }
                if e.to == node && e.to_lane > lane {
                    e.to_lane += 1;
                }
            }
        }
        p.spec.edges.push(poplar_bridge::RenderEdge {
            from_lane: twin.from_lane + 1,
            to_lane: twin.to_lane + 1,
            ..twin
        });
    });
    assert!(e.contains("both lead to"), "{e}");
    // A router's child lanes past the ones its shard-id bits choose must each be a
    // tile of one replicated child (router.cpp classify would never send them a ray,
    // or send them another shard's).
    let r = plan.tree.nodes[0].parent.unwrap();
    fn edit_router(p: &mut DevicePlan, r: usize, edit: &dyn Fn(&mut foam_layout::foam_params)) {
        let mut q: foam_layout::foam_params = bytemuck::pod_read_unaligned(&p.spec.nodes[r].params);
        edit(&mut q);
        p.spec.nodes[r].params = bytemuck::bytes_of(&q).to_vec();
    }
    let e = refusal(&|p| edit_router(p, r, &|q| q.route_bits = 3));
    assert!(e.ends_with("child lane 8 is no child's replica (replica_lane)"), "{e}");
    let e = refusal(&|p| {
        edit_router(p, r, &|q| {
            let mut lanes = foam_layout::foam_replica_lanes::default();
            (lanes.replica_bits[2], lanes.replica_lane[2]) = (1, 8);
            q.route_bits = 3;
            q.__bindgen_anon_1.replicas = lanes;
        })
    });
    assert!(e.contains("child 2's 2 tiles: lane 8 leads to tracer8@8, not a tracer of tracer2@2's shard"), "{e}");
}
