//! The device plan: shards packed for their tracer tiles, every tile's role and
//! parameters, buffer capacities, framebuffer slices, and the camera block with
//! the start cell of a view.

use std::mem::size_of;

use foam_layout::{FOAM_WORKERS, foam_camera, foam_params, foam_ray_hops, foam_region_header};
use partition::Partition;
use partition::RayLayout;
use poplar_bridge::RenderSpec;

use std::time::Instant;

use super::DeviceError;
use super::options::DeviceOptions;
use super::progress::{PlanTimes, Progress};
use super::sample::{CameraSample, Sampling};
use super::topology::Topology;
use super::tree::{Role, Tree};
use crate::camera::Camera;
use crate::reference::SiteIndex;
use crate::scene::Scene;

/// Largest image side: pixel coordinates travel in 11 bits of the payload (layout.h).
pub const MAX_IMAGE_SIDE: u32 = foam_layout::FOAM_MAX_IMAGE_SIDE;
/// A cut by load samples every this many pixels across and down.
const LOAD_STRIDE: u32 = 4;
/// Rounds a cut by load takes to bring its shards' bytes within the tile, at each
/// of `LOAD_CUT_FILLS` fills, each `LOAD_CUT_LESS` of the last.
const LOAD_CUT_ROUNDS: u32 = 4;
const LOAD_CUT_FILLS: u32 = 3;
const LOAD_CUT_LESS: f64 = 0.85;

/// Bytes of a `#[repr(C)]` layout.h record, as the tile holds it.
pub(crate) fn record_bytes<T: Copy>(v: &T) -> Vec<u8> {
    // SAFETY: layout.h records are plain C structs of fixed-width fields whose sizes
    // are static_asserted without padding; reading them as bytes is well defined.
    unsafe { std::slice::from_raw_parts((v as *const T).cast::<u8>(), size_of::<T>()) }.to_vec()
}

pub(crate) fn layout_code(layout: RayLayout) -> u32 {
    match layout {
        RayLayout::Fp32 => foam_layout::foam_ray_layout_FOAM_LAYOUT_FP32,
        RayLayout::Mixed => foam_layout::foam_ray_layout_FOAM_LAYOUT_MIXED,
        RayLayout::Half => foam_layout::foam_ray_layout_FOAM_LAYOUT_HALF,
    }
}

#[derive(Clone)]
pub struct DevicePlan {
    pub tree: Tree,
    pub partition: Partition,
    pub options: DeviceOptions,
    pub width: u32,
    pub height: u32,
    pub ray_bytes: u32,
    /// Framebuffer slots per tracer: pixel p lives on tracer p % shards, slot p / shards.
    pub slice_pixels: u32,
    pub spec: RenderSpec,
    sites: std::sync::Arc<SiteIndex>,
    /// The planned scene's sites' bounds (`Scene::bbox`), for the half layouts' reach
    /// check of every frame's camera without a pass over the scene per frame.
    bounds: Option<([f32; 3], [f32; 3])>,
    /// Each tracer's shard copies (see [`super::copies`]), ascending; empty unless
    /// planned for a camera.
    pub copies: Vec<Vec<usize>>,
    /// Each node's side-link neighbours (see [`super::sides`]; replicas':
    /// [`super::replicas::with_replica_sides`]), in lane order; empty but for tracers.
    pub sides: Vec<Vec<u32>>,
    /// Each tracer's result-store slots per worker (see [`super::options::DeviceOptions::results`]).
    pub result_slots: Vec<u32>,
    /// The blocks each injector emits (see [`super::blocks`]); their order is chosen per frame.
    groups: Vec<Vec<super::blocks::Block>>,
    block_slots: u32,
    /// How long making this plan took, step by step.
    pub times: PlanTimes,
    /// Each k-d leaf's first shard, whose tracer holds the leaf's framebuffer slice.
    home_of_leaf: Vec<usize>,
    /// Each tracer's shard bytes.
    shard_bytes: Vec<usize>,
    /// The cameras the plan was made for, sampled (see [`super::sample`]).
    samples: Vec<CameraSample>,
    /// The SH degree the tracers carry, and why not the scene's.
    pub sh: ShChoice,
    /// Where the plan cut the scene again by the camera's load: how full (percent
    /// of a tile's room for its shard) it let the shards nobody looks at grow.
    pub load_cut: Option<u32>,
}

impl DevicePlan {
    /// Partitions `scene` into `shards` and lays out the device for `width` × `height`
    /// frames, telling `progress` what it does.
    pub fn new(
        scene: &Scene,
        shards: u64,
        width: u32,
        height: u32,
        options: &DeviceOptions,
        progress: &dyn Progress,
    ) -> Result<DevicePlan, DeviceError> {
        check_options(options, width, height)?;
        let (part, packed, sites, mut times, sh) = Self::cut(scene, shards, options, width, height, progress)?;
        let t0 = Instant::now();
        let topology = Topology::new(&part, &packed, width, height, options)?;
        let mut plan =
            Self::assemble(scene, (part, sites), packed, topology, Neighbours::default(), (Vec::new(), None))?;
        times.plan_s = t0.elapsed().as_secs_f64();
        plan.times = times;
        plan.sh = sh;
        Ok(plan)
    }

    /// As [`new`](Self::new) for frames from `cam`, which a sample of the camera's
    /// rays ([`DevicePlan::tracer_traffic`]) plans the tracers for:
    /// - each tracer holds copies of the neighbouring shards its rays leave into
    ///   most, as many as `options.copies` and its tile allow ([`super::copies`]);
    /// - with `options.size_links` and no `link_capacity` given, the tracers'
    ///   buffers are sized to the rays the busiest tracer takes in
    ///   ([`super::options::tracer_links_for_load`]) and side links join the tiles
    ///   the sampled rays cross between ([`super::sides::choose_by_traffic`])
    ///   instead of the shards sharing the most faces. Every link is exchanged
    ///   whole every iteration, so a view that the injectors mostly march
    ///   themselves should not pay for links sized and placed for one that floods
    ///   a few tracers.
    ///
    /// Other cameras still render with the plan, only perhaps in more iterations.
    pub fn for_camera(
        scene: &Scene,
        shards: u64,
        cam: &Camera,
        options: &DeviceOptions,
        progress: &dyn Progress,
    ) -> Result<DevicePlan, DeviceError> {
        Self::for_cameras(scene, shards, std::slice::from_ref(cam), options, progress)
    }

    /// As [`for_camera`](Self::for_camera) for frames from every camera of `cams`
    /// (all of one size): the copies are chosen from all their sampled rays
    /// together, and each tracer's result store and links are sized for the view
    /// that loads it most, so one graph serves them all. With one camera this is
    /// exactly the plan for it.
    pub fn for_cameras(
        scene: &Scene,
        shards: u64,
        cams: &[Camera],
        options: &DeviceOptions,
        progress: &dyn Progress,
    ) -> Result<DevicePlan, DeviceError> {
        let Some(cam) = cams.first() else {
            return Err(DeviceError::Options("no camera to plan for".into()));
        };
        if let Some(other) = cams.iter().find(|c| (c.width, c.height) != (cam.width, cam.height)) {
            return Err(DeviceError::Options(format!(
                "the views differ in size ({}x{} and {}x{}): one graph renders one image size",
                cam.width, cam.height, other.width, other.height
            )));
        }
        check_options(options, cam.width, cam.height)?;
        // Before the cut, so that a view the layout cannot render fails in a moment.
        check_half_reach(scene.bbox(), cams, options.layout)?;
        let (mut part, mut packed, sites, mut times, sh) =
            Self::cut(scene, shards, options, cam.width, cam.height, progress)?;
        let t0 = Instant::now();
        progress.step(
            if cams.len() == 1 { "planning tiles for the camera" } else { "planning tiles for the cameras" },
            None,
        );
        // The free tiles go to injectors and to replicas of hot shards as the sample
        // splits the marching between the camera regions and the tracers; after a
        // cut by load the tracers are even without replicas, and the injectors, which
        // then march the dearest tiles' work, keep them all.
        let lay_out = |part: &Partition, packed: &[partition::PackedShard], options: &DeviceOptions| {
            let topology = Topology::new(part, packed, cam.width, cam.height, options)?;
            let samples: Vec<CameraSample> =
                cams.iter().map(|c| CameraSample::take(scene, c, &topology.sampling(part, &sites))).collect();
            Ok::<_, DeviceError>((topology, samples))
        };
        let (mut topology, mut samples) = lay_out(&part, &packed, options)?;
        let heaviest = topology.shard_bytes.iter().copied().max().unwrap_or(0) as u64;
        let share = regions_share(&samples);
        // Where the cut by bytes leaves no room for a cut by load, lean tracers may.
        let whole = tracer_footprint(options, cam.width, cam.height, shards).shard_budget();
        let lean = super::options::planned_lean_queue(options, share, heaviest, whole);
        let leaned = DeviceOptions { lean_queue: lean, ..options.clone() };
        let options = &leaned;
        let footprint = tracer_footprint(&cut_options(options), cam.width, cam.height, shards);
        let mut load_cut = None;
        let fill = match (lean, options.load_cut) {
            (Some(_), None) => Some(super::options::LOAD_CUT_FILL),
            _ => super::options::load_cut_fill(options, share, heaviest, footprint.shard_budget()),
        };
        if let Some(fill) = fill {
            let t = Instant::now();
            if let Some((p, k)) =
                Self::cut_by_load(scene, (&part, &packed), &samples, options, sh.degree, &footprint, fill, progress)?
            {
                (part, packed) = (p, k);
                (topology, samples) = lay_out(&part, &packed, options)?;
                load_cut = Some(fill);
            }
            times.partition_s += t.elapsed().as_secs_f64();
        }
        // After a lean cut the hot shards still take replicas, and the camera regions
        // march a larger share of the sampled steps than before the cut.
        let lean_cut = load_cut.is_some() && options.lean_queue.is_some();
        let regions = regions_share(&samples);
        // Where the tracers bind the march, replicas hang on their routers' lanes.
        let replica_lanes = super::options::planned_replica_lanes(options, regions);
        if (load_cut.is_none() || lean_cut)
            && let Some(fewer) = super::options::injectors_for_share(
                if lean_cut { regions } else { share },
                topology.tree.injectors().len() as u32,
                topology.tree.nodes.len() as u32,
                options,
                replica_lanes > 0,
            )
        {
            (topology, samples) = lay_out(&part, &packed, &DeviceOptions { injectors: fewer, ..options.clone() })?;
        }
        let per_view: Vec<(Vec<Vec<u16>>, f64)> = samples.iter().map(|s| s.paths_beyond_regions()).collect();
        let paths: Vec<Vec<u16>> = per_view.iter().flat_map(|(p, _)| p.iter().cloned()).collect();
        let (ray_bytes, slice_pixels) = (topology.ray_bytes, topology.slice_pixels);
        let sizes = &topology.shard_bytes;
        // After a lean cut (`lean_queue`) a result store grows from one slot per worker
        // to what the sample expects to end on it, as far as its tile has room.
        let base = if lean_cut { cut_options(options).results } else { options.results };
        let room_options = DeviceOptions { results: base, ..options.clone() };
        let room: Vec<usize> = sizes
            .iter()
            .map(|&b| super::options::copy_budget(&room_options, ray_bytes, b as u32, slice_pixels) as usize)
            .collect();
        // Every ray a tracer keeps in its result store is one that need not cross
        // the root to reach its pixel's home, so the stores grow first, to what
        // the sample expects to end on each tracer, and the copies take what is
        // left; then the stores take what the copies left. (A store with no slot
        // per worker is a placeholder word, so only stores with one grow: the
        // host reads them back to back.)
        let record = size_of::<foam_layout::foam_result>();
        let grow = options.results >= FOAM_WORKERS;
        let extra = |ending: &[f64], spare: &dyn Fn(usize) -> usize| -> Vec<usize> {
            (0..packed.len())
                .map(|a| {
                    let want = results_wanted(ending[a]) as usize;
                    if grow { want.saturating_sub(base as usize).min(spare(a) / record) } else { 0 }
                })
                .collect()
        };
        let alone = super::copies::busiest_view(&per_view, &vec![Vec::new(); packed.len()]);
        let first_extra = extra(&alone.finishes, &|a| room[a]);
        let budgets: Vec<usize> = (0..packed.len()).map(|a| room[a] - first_extra[a] * record).collect();
        let copies = super::copies::choose(&paths, sizes, &budgets, options.copies as usize);
        let traffic = super::copies::busiest_view(&per_view, &copies);
        let spare = |a: usize| room[a] - copies[a].iter().map(|&s| sizes[s]).sum::<usize>();
        let results: Vec<u32> = extra(&traffic.finishes, &spare)
            .into_iter()
            .zip(&traffic.finishes)
            .map(|(x, &ending)| {
                // The host reads every store whole after each frame (39 MB of the 1 M
                // scene's at 1536 slots): a tracer the sample expects few rays to end
                // on keeps what it expects, down to a few a worker.
                if x > 0 || !grow {
                    base + x as u32
                } else {
                    results_wanted(ending).max(RESULT_FLOOR).next_multiple_of(FOAM_WORKERS).min(base)
                }
            })
            .collect();
        // The hot shards' tiles, each replica a clone of its tracer on a free tile.
        // Side links into a replicated shard are spread over its tiles by the
        // sampled rays each way (replicas::with_replica_sides): dropping them cost
        // more router hops than they save.
        // On several IPUs each IPU's free tiles take replicas of its own shards, so
        // that a replica exchanges with its router on its chip (the replicas' router
        // and the replicas sit on their shard's IPU: Tree::ipu_of).
        let steps: Vec<Vec<Vec<u32>>> = samples.iter().map(|s| s.steps_beyond_regions()).collect();
        let views: Vec<_> = per_view.iter().zip(&steps).map(|((p, w), s)| (p.as_slice(), s.as_slice(), *w)).collect();
        let load = replica_load(&super::copies::tile_steps(&views, &copies), &traffic.arrivals);
        let ipus = options.ipus;
        let used = topology.tree.tiles_per_ipu_used(ipus, options.tiles);
        for ipu in 0..ipus {
            let shards: Vec<usize> = (0..load.len()).filter(|&s| topology.tree.ipu_of(s, ipus) == ipu).collect();
            let own: Vec<f64> = shards.iter().map(|&s| load[s]).collect();
            let free = (options.tiles as usize).saturating_sub(used[ipu as usize]);
            let tree = &mut topology.tree;
            // Each shard's router, and the lanes every node has left (by node).
            let parents: Vec<usize> =
                shards.iter().map(|&s| tree.nodes[s].parent.expect("tracers have parents")).collect();
            let room: Vec<u32> = (0..tree.nodes.len()).map(|r| tree.lanes_left(r, replica_lanes)).collect();
            let lanes = (replica_lanes > 0).then_some((&parents[..], &room[..]));
            for (i, tiles, on_lanes) in
                super::replicas::choose(&own, free, options.replicas, super::tree::MAX_FANOUT, lanes)
            {
                if on_lanes {
                    tree.replicate_on_lanes(shards[i], tiles, ipus * options.tiles)?;
                } else {
                    tree.replicate(shards[i], tiles, ipus * options.tiles)?;
                }
            }
        }
        topology.tree.place_on_ipus(ipus, options.tiles)?;
        let sides = if options.sizes_links_to_camera() {
            // The lane into a replicated shard's router carries all its rays.
            let peak = traffic.arrivals.iter().copied().fold(0.0, f64::max);
            topology.resolve_links(&super::options::tracer_links_for_load(options, ray_bytes, peak));
            Some(super::sides::choose_by_traffic(&traffic.crossings(), &topology.tree, options.side_links))
        } else {
            None
        };
        keep_regions_room(&mut topology, &mut samples, options);
        let planned = Neighbours { sides, copies, results, flows: traffic.flows };
        let mut plan = Self::assemble(scene, (part, sites), packed, topology, planned, (samples, load_cut))?;
        times.plan_s = t0.elapsed().as_secs_f64();
        plan.times = times;
        plan.sh = sh;
        Ok(plan)
    }

    /// The cut made again so that the cell steps of every `LOAD_STRIDE`-th pixel's
    /// ray of each sampled view balance over the shards as far as the tiles' room
    /// allows ([`partition::balance_load`]: where nobody looks, a shard fills to
    /// `fill` percent of the room), and packed; `None` where it does not fit.
    #[allow(clippy::too_many_arguments)]
    fn cut_by_load(
        scene: &Scene,
        (part, packed): (&Partition, &[partition::PackedShard]),
        samples: &[CameraSample],
        options: &DeviceOptions,
        degree: u8,
        footprint: &partition::TracerFootprint,
        fill: u32,
        progress: &dyn Progress,
    ) -> Result<Option<(Partition, Vec<partition::PackedShard>)>, DeviceError> {
        progress.step("cutting the scene by the camera's load", None);
        let mut load = vec![0f32; scene.len()];
        for s in samples {
            load.iter_mut().zip(s.cell_loads(scene, options.t_stop, LOAD_STRIDE)).for_each(|(a, b)| *a += b);
        }
        let sref = scene.partition_view_sh(degree, sh_f32(options));
        // The packer counted the shards of the cut by bytes already.
        let start = partition::Counted { partition: part.clone(), counts: packed.iter().map(|p| p.counts).collect() };
        let budget = footprint.shard_budget();
        // A shard's halo is only known once it is cut, and thin shards where the
        // rays gather can hold more of it than the rounds foresee: fill less.
        for k in 0..LOAD_CUT_FILLS {
            let fill = budget as f64 * fill as f64 / 100.0 * LOAD_CUT_LESS.powi(k as i32);
            let cut = partition::balance_load(&sref, &start, &load, (fill, budget), LOAD_CUT_ROUNDS)?;
            if check_fit(&cut.partition, &cut.counts, partition::Balance::Bytes, footprint, options.ipus).is_ok() {
                let packed = partition::pack_all(&sref, &cut.partition, &|| {})?;
                return Ok(Some((cut.partition, packed)));
            }
        }
        Ok(None)
    }

    /// The scene cut into shards that fit their tracer tiles (see [`partition::cut`])
    /// and packed for them, and the site index.
    fn cut(
        scene: &Scene,
        shards: u64,
        options: &DeviceOptions,
        width: u32,
        height: u32,
        progress: &dyn Progress,
    ) -> Result<(Partition, Vec<partition::PackedShard>, SiteIndex, PlanTimes, ShChoice), DeviceError> {
        let t0 = Instant::now();
        let (cut, sh) = choose_sh_degree(scene, shards, options, width, height, progress)?;
        // A degree asked for was checked before the cut; auto's is known only now.
        if options.sh_degree.is_none() {
            check_half_sh(scene, sh.degree, options)?;
        }
        let sref = scene.partition_view_sh(sh.degree, sh_f32(options));
        let partition_s = t0.elapsed().as_secs_f64();
        progress.step("packing shards", Some(shards));
        let packed = partition::pack_all(&sref, &cut.cut.partition, &|| progress.item())?;
        let pack_s = t0.elapsed().as_secs_f64() - partition_s;
        let part = cut.cut.partition;
        let sites = SiteIndex::new(scene).ok_or_else(|| DeviceError::Options("the scene has no sites".into()))?;
        Ok((part, packed, sites, PlanTimes { partition_s, pack_s, plan_s: 0.0 }, sh))
    }

    /// The render spec for shards already cut and packed, laid out as `topology`,
    /// with the tracers planned as `neighbours` (for the cameras `samples` were taken
    /// of; `load_cut`: the fill the shards were cut by load to, if they were).
    fn assemble(
        scene: &Scene,
        (part, sites): (Partition, SiteIndex),
        packed: Vec<partition::PackedShard>,
        mut topology: Topology,
        neighbours: Neighbours,
        (samples, load_cut): (Vec<CameraSample>, Option<u32>),
    ) -> Result<DevicePlan, DeviceError> {
        // The step's schedule and the budgets below follow the cut and the camera
        // regions' share of the sampled steps after it.
        let share = regions_share(&samples);
        let lean_cut = load_cut.is_some() && topology.options.lean_queue.is_some();
        let root_lanes = topology.tree.nodes[topology.tree.root()].inject_lanes;
        topology.options.schedule =
            Some(super::options::planned_schedule(&topology.options, load_cut.is_some(), share, root_lanes));
        if !topology.tree.direct_lanes().is_empty() {
            let lanes = super::direct::choose(&topology.tree, &samples, topology.options.direct_share);
            topology.tree.keep_direct_lanes(lanes);
        }
        let (tree, options) = (&topology.tree, &topology.options);
        let owner = |c: u32| part.owner(c);
        let Neighbours { sides, copies, results, flows } = neighbours;
        let result_slots: Vec<u32> =
            (0..packed.len()).map(|a| results.get(a).copied().unwrap_or(options.results) / FOAM_WORKERS).collect();
        let copies = if copies.is_empty() { vec![Vec::new(); packed.len()] } else { copies };
        let sides = sides.unwrap_or_else(|| {
            super::sides::choose(&scene.adjacency_end, &scene.adjacency, &owner, tree, options.side_links)
        });
        let sides = super::replicas::with_replica_sides(&sides, tree, &flows, options.side_links);

        // Each blob is freed as it joins the spec's: both whole at once were the host
        // tool's peak on a 4.2 M-cell scene.
        let shards = packed.len();
        let mut blobs = Vec::with_capacity(packed.iter().map(|p| p.blob.len()).sum());
        let mut offsets = Vec::with_capacity(shards);
        for p in packed {
            offsets.push((blobs.len(), p.blob.len()));
            blobs.extend_from_slice(&p.blob);
        }
        // Tracer node s holds shard s (whose id is its prefix), and copies' directory.
        let directories: Vec<Vec<u8>> = copies
            .iter()
            .map(|c| {
                if c.is_empty() { Vec::new() } else { record_bytes(&region_header(c, &part.ids, &|s| offsets[s].1).0) }
            })
            .collect();
        let mut spec = RenderSpec {
            nodes: topology.nodes(&offsets, &directories, &result_slots),
            edges: super::edges::edges(tree, &sides, options, topology.ray_bytes),
            shards: blobs,
            ray_bytes: topology.ray_bytes,
            slice_pixels: topology.slice_pixels,
            region_bytes: topology.region_bytes as usize,
            rc: options.rc,
            ends_on_device: options.ends_on_device,
            schedule: options.schedule.unwrap_or_default() as u8,
        };
        fill_stores(tree, &mut spec, options)?;
        let fine = options.batch.is_fine();
        let dearest = samples.iter().map(|s| s.order.dearest_steps).max().unwrap_or(0);
        let planned = options.march_budget.unwrap_or_else(|| {
            super::options::planned_march_budget(dearest, share, (load_cut.is_some(), lean_cut), fine)
        });
        let even = load_cut.is_some() && !fine;
        // The hottest tracer tile's sampled steps: its shard's over its tiles.
        let tiles = tree.shard_tiles();
        let hottest = samples
            .iter()
            .flat_map(|v| v.tracer_steps(shards).into_iter().zip(&tiles).map(|(n, t)| n / t.len() as f64))
            .fold(0.0, f64::max);
        let tracer_budget = options.tracer_budget.unwrap_or_else(|| {
            let planned = super::options::planned_tracer_budget(planned, share, even);
            if planned == 0 { 0 } else { planned.max(super::options::tracer_budget_floor(hottest)) }
        });
        let budget = match options.march_budget {
            Some(b) => b,
            None => super::options::paced_march_budget(planned, dearest, hottest, tracer_budget),
        };
        // The sample counts cell steps; a budget counts each step by its faces
        // (march.h foam_budget_q8), so a planned one buys the scene's mean step.
        let step = super::options::budget_step_units(scene.adjacency.len() as f64 / scene.len().max(1) as f64);
        // A planned budget past the largest the march counts is no limit that matters.
        let units = |b: u32, tuned: bool| {
            if tuned { b } else { ((b as f64 * step).round() as u32).min(foam_layout::FOAM_MAX_MARCH_BUDGET) }
        };
        let (budget, tracer_budget) =
            (units(budget, options.march_budget.is_some()), units(tracer_budget, options.tracer_budget.is_some()));
        for (i, n) in tree.nodes.iter().enumerate() {
            let b = match n.role {
                Role::Injector => budget,
                Role::Tracer => tracer_budget,
                Role::Router | Role::Spill => continue,
            };
            let mut p: foam_params = bytemuck::pod_read_unaligned(&spec.nodes[i].params);
            p.march_budget = b;
            spec.nodes[i].params = record_bytes(&p);
        }
        let Topology {
            tree,
            options,
            width,
            height,
            ray_bytes,
            slice_pixels,
            groups,
            block_slots,
            home_of_leaf,
            shard_bytes,
            ..
        } = topology;
        Ok(DevicePlan {
            tree,
            options,
            width,
            height,
            ray_bytes,
            slice_pixels,
            partition: part,
            spec,
            sites: std::sync::Arc::new(sites),
            bounds: scene.bbox(),
            copies,
            sides,
            result_slots,
            groups,
            block_slots,
            times: PlanTimes::default(),
            home_of_leaf,
            shard_bytes,
            samples,
            sh: ShChoice::default(),
            load_cut,
        })
    }

    /// The same plan with `rc` iterations per host call (the graph's only change).
    pub fn with_rc(&self, rc: u32) -> DevicePlan {
        let mut plan = self.clone();
        plan.options.rc = rc;
        plan.spec.rc = rc;
        plan
    }

    pub fn shards(&self) -> usize {
        self.tree.tracers()
    }

    /// The side links between tracers: the spec's edges of that kind.
    pub fn side_links(&self) -> u64 {
        self.spec.edges.iter().filter(|e| super::edges::EdgeKind::of(e) == super::edges::EdgeKind::Side).count() as u64
    }

    /// The tracer whose framebuffer slice holds pixel `p`, and the slot there: pixels
    /// are dealt out over the leaves of the k-d tree (layout.h foam_camera), pixel p
    /// to the shard with id `(p % leaves) << id_bits - depth`: the leaf's only shard,
    /// or the first half of a split leaf.
    pub fn home_tracer(&self, p: usize) -> (usize, usize) {
        let leaves = 1usize << self.partition.depth;
        (self.home_of_leaf[p % leaves], p / leaves)
    }

    /// Bytes of all tracers' result stores as the host reads them, replicas' included
    /// (the graph gives an empty store one word).
    pub fn result_store_bytes(&self) -> usize {
        self.tree.tracer_nodes().map(|(_, s)| super::options::result_store_bytes(self.result_slots[s]) as usize).sum()
    }

    /// What the host writes to the device for one frame: the camera block broadcast to
    /// every tile and, with `view`, every injector's camera region (see
    /// [`super::region`]) and block list for the camera; without, both are empty (the
    /// device holds a frame's of the same camera: nothing on it writes them). `scene`
    /// must be the scene the plan was made from.
    pub fn frame_blocks(
        &self,
        scene: &Scene,
        cam: &Camera,
        frame: u32,
        view: bool,
    ) -> Result<FrameBlocks, DeviceError> {
        if cam.width != self.width || cam.height != self.height {
            return Err(DeviceError::Options(format!(
                "camera is {}x{} but the device was planned for {}x{}",
                cam.width, cam.height, self.width, self.height
            )));
        }
        if scene.positions.len() != self.partition.slot.len() {
            return Err(DeviceError::Options(format!(
                "the scene has {} cells but the device was planned for {}",
                scene.positions.len(),
                self.partition.slot.len()
            )));
        }
        check_half_reach(self.bounds, std::slice::from_ref(cam), self.options.layout)?;
        let (start, owner) = super::sample::camera_cell(&self.sampling(), cam);
        let m = cam.c2w();
        let mut c2w = [0.0f32; 12];
        for r in 0..3 {
            c2w[r * 4..r * 4 + 4].copy_from_slice(&m[r]);
        }
        let block = foam_camera {
            c2w,
            fx: cam.fx,
            fy: cam.fy,
            cx: cam.cx,
            cy: cam.cy,
            width: cam.width,
            height: cam.height,
            t_stop: self.options.t_stop,
            start_shard: self.partition.ids[owner],
            start_cell: self.partition.local_index(start) as u16,
            slice_pixels: self.slice_pixels,
            frame,
            homes: 1 << self.partition.depth,
            home_shift: self.partition.id_bits - self.partition.depth,
        };
        let camera = record_bytes(&block);
        if !view {
            return Ok(FrameBlocks { camera, regions: Vec::new(), blocks: Vec::new() });
        }
        // A camera the plan was not made for is sampled here, once per view.
        let sampled;
        let sample = match self.sample_of(cam) {
            Some(s) => s,
            None => {
                sampled = CameraSample::take(scene, cam, &self.sampling());
                &sampled
            }
        };
        let order = &sample.order;
        let chosen: Vec<Vec<u8>> = sample.regions.iter().map(|shards| self.camera_region(shards)).collect();
        let mut regions = Vec::with_capacity(self.groups.len() * self.spec.region_bytes);
        let mut lists = Vec::with_capacity(self.groups.len() * super::blocks::list_bytes(self.block_slots));
        for (i, blocks) in order.blocks.iter().enumerate() {
            regions.extend_from_slice(&chosen[order.paths_of(i)]);
            lists.extend_from_slice(&super::blocks::list(blocks, self.block_slots));
        }
        Ok(FrameBlocks { camera, regions, blocks: lists })
    }

    /// Bytes the host reads back after every frame: every tracer tile's framebuffer
    /// slice (replicas' too), every result store whole with its workers' counts, and
    /// every tile's statistics (`DeviceRenderer::render`).
    pub fn readback_bytes(&self) -> u64 {
        (self.framebuffer_bytes() + self.result_store_bytes() + self.result_counts_bytes() + self.tile_stats_bytes())
            as u64
    }

    /// Bytes of every tracer worker's count of the results it kept (a word each), which
    /// say how much of each store holds this frame's.
    pub fn result_counts_bytes(&self) -> usize {
        self.tree.tracer_nodes().count() * FOAM_WORKERS as usize * size_of::<u32>()
    }

    /// Bytes of every tracer tile's framebuffer slice (replicas' too), as the host
    /// reads them.
    pub fn framebuffer_bytes(&self) -> usize {
        self.tree.tracer_nodes().count() * self.slice_pixels as usize * size_of::<foam_layout::foam_pixel>()
    }

    /// Bytes of every tile's statistics (layout.h foam_tile_stats), as the host reads them.
    pub fn tile_stats_bytes(&self) -> usize {
        self.tree.nodes.len() * size_of::<foam_layout::foam_tile_stats>()
    }

    /// Bytes the host writes for a camera the device does not hold yet: every
    /// injector's camera region and block list ([`Self::frame_blocks`] with `view`).
    pub fn view_bytes(&self) -> u64 {
        (self.groups.len() * (self.spec.region_bytes + super::blocks::list_bytes(self.block_slots))) as u64
    }

    /// What sampling a camera reads of this plan.
    fn sampling(&self) -> Sampling<'_> {
        Sampling {
            partition: &self.partition,
            sites: &self.sites,
            groups: &self.groups,
            block_slots: self.block_slots,
            options: &self.options,
            shard_bytes: &self.shard_bytes,
            region_bytes: self.spec.region_bytes,
        }
    }

    /// Rays each tracer can expect to take in during a frame from `cam` (see
    /// [`tracer_traffic`](Self::tracer_traffic)).
    pub fn tracer_load(&self, scene: &Scene, cam: &Camera) -> Vec<f64> {
        self.tracer_traffic(scene, cam).arrivals
    }

    /// What the sampled rays that pick the injectors' camera regions do once they
    /// leave their injector's region, each standing for an equal share of the
    /// frame's pixels, on tracers holding this plan's shard copies: the rays each
    /// tracer takes in through its links, the rays that end on it, and the
    /// crossings between tracers (see [`super::copies::traffic`]).
    pub fn tracer_traffic(&self, scene: &Scene, cam: &Camera) -> super::copies::Traffic {
        let (paths, weight) = self.sampled_paths(scene, cam);
        super::copies::traffic(&paths, weight, &self.copies)
    }

    /// The shards each sampled ray of `cam` crosses after it leaves its injector's
    /// region, and the pixels each path stands for.
    fn sampled_paths(&self, scene: &Scene, cam: &Camera) -> (Vec<Vec<u16>>, f64) {
        match self.sample_of(cam) {
            Some(s) => s.paths_beyond_regions(),
            None => CameraSample::take(scene, cam, &self.sampling()).paths_beyond_regions(),
        }
    }

    /// The share of the sampled rays' cell steps the injectors march in their
    /// camera regions (the most of the plan's cameras; see
    /// [`super::options::injectors_for_share`]).
    pub fn injector_share(&self) -> f64 {
        regions_share(&self.samples)
    }

    /// Cell steps an injector's worker marches per step (foam_params march_budget;
    /// 0: no limit).
    pub fn march_budget(&self) -> u32 {
        self.march_budget_of(self.tree.injectors().next())
    }

    /// Cell steps a tracer's worker marches per step (foam_params march_budget of
    /// the tracers; 0: no limit).
    pub fn tracer_budget(&self) -> u32 {
        self.march_budget_of(self.tree.tracer_nodes().next().map(|(i, _)| i))
    }

    /// foam_params march_budget of `node` (the plan gives every node of a role the
    /// same); 0 without one.
    fn march_budget_of(&self, node: Option<usize>) -> u32 {
        node.map_or(0, |i| bytemuck::pod_read_unaligned::<foam_params>(&self.spec.nodes[i].params).march_budget)
    }

    /// The sample the plan was made with of `cam`, if it was made for `cam`.
    fn sample_of(&self, cam: &Camera) -> Option<&CameraSample> {
        let sampling = self.sampling();
        self.samples.iter().find(|s| s.is_of(cam, &sampling))
    }

    /// An injector's camera region holding copies of `shards` (which must fit: see
    /// [`super::region::choose`]), listed by shard id so the injector can search it.
    pub fn camera_region(&self, shards: &[usize]) -> Vec<u8> {
        let bytes = |s: usize| self.spec.nodes[s].shard_bytes;
        let (header, sorted) = region_header(shards, &self.partition.ids, &bytes);
        assert!(header.total_bytes as usize <= self.spec.region_bytes, "camera region over its budget");
        let mut region = record_bytes(&header);
        for s in sorted {
            let node = &self.spec.nodes[s];
            region.extend_from_slice(&self.spec.shards[node.shard_offset..node.shard_offset + node.shard_bytes]);
        }
        region.resize(self.spec.region_bytes, 0);
        region
    }
}

/// The directory of a region holding copies of `shards` (blobs of `bytes(s)` bytes),
/// listed by their `ids`, and the shards in the order their blobs follow it: by
/// ascending id (shard order is id order), so that a tile can search it, and the
/// entries past them FOAM_INVALID_SHARD, above every id, so that an injector can
/// search all 256 by fixed halvings (march.h foam_region_find_fixed). The same
/// layout serves injectors' camera regions and tracers' shard copies.
fn region_header(shards: &[usize], ids: &[u16], bytes: &dyn Fn(usize) -> usize) -> (foam_region_header, Vec<usize>) {
    let mut sorted = shards.to_vec();
    sorted.sort_unstable();
    assert!(sorted.len() <= REGION_SHARDS, "more shards than a region lists");
    let mut header = foam_region_header {
        count: 0,
        total_bytes: 0,
        shard: [foam_layout::FOAM_INVALID_SHARD as u16; REGION_SHARDS],
        offset: [0; REGION_SHARDS],
    };
    let mut at = size_of::<foam_region_header>();
    for &s in &sorted {
        header.shard[header.count as usize] = ids[s];
        header.offset[header.count as usize] = at as u32;
        header.count += 1;
        at += bytes(s);
    }
    header.total_bytes = at as u32;
    (header, sorted)
}

/// Gives each camera region the bytes the largest of the plan's views' regions takes
/// (and at least the largest shard, so that any camera's start shard fits) instead of
/// all its injector tile has, unless `region_kib` asks for a size: a region is written
/// whole for each new camera, and garden's took a third of its room (206 of 604 KB on
/// average, 451 KB at most). The greedy choice ([`super::region::choose`]) picks the
/// same shards under any budget its picks fit, so the samples keep their regions.
fn keep_regions_room(topology: &mut Topology, samples: &mut [CameraSample], options: &DeviceOptions) {
    if options.region_bytes.is_some() {
        return;
    }
    let sizes = &topology.shard_bytes;
    let used = |r: &Vec<usize>| r.iter().map(|&s| sizes[s]).sum::<usize>();
    let largest_region = samples.iter().flat_map(|s| s.regions.iter()).map(used).max().unwrap_or(0);
    let largest_shard = sizes.iter().copied().max().unwrap_or(0);
    let bytes = (size_of::<foam_region_header>() + largest_region.max(largest_shard)).next_multiple_of(4);
    if bytes < topology.region_bytes as usize {
        topology.region_bytes = bytes as u32;
        for s in samples {
            s.keep_for_region(bytes);
        }
    }
}

/// What is planned per tracer before assembly: side links (`None`: by shared
/// faces), shard copies (empty: none) and result-store slots (empty: the options').
#[derive(Default)]
struct Neighbours {
    sides: Option<Vec<Vec<u32>>>,
    copies: Vec<Vec<usize>>,
    results: Vec<u32>,
    /// The sampled rays from tracer to tracer, for the replicas' side links.
    flows: Vec<(u32, u32, f64)>,
}

/// Result slots a tracer gets per ray the sample expects to end on it: the rays
/// are split between its six workers' parts of the store, not evenly.
const RESULT_MARGIN: f64 = 1.5;

/// The result slots a tracer on which the camera's sample expects `ending` rays to end
/// wants: [`RESULT_MARGIN`] times those.
fn results_wanted(ending: f64) -> u32 {
    (ending * RESULT_MARGIN).ceil() as u32
}

/// The fewest result slots a tracer gets where it could keep any: eight a worker.
/// Modelled (`bench … --frames 1`, the host's read of the stores included), against
/// every tracer's store at least `results`: the 1 M scene 46.306 → 44.243 ms (208 →
/// 207 iterations; 96 slots 44.246, 12 slots 44.404 in 210), garden 24.509 → 22.376
/// (113 both; 12 slots 22.534 in 116).
const RESULT_FLOOR: u32 = 8 * FOAM_WORKERS;

/// What a ray a tracer takes in weighs beside a cell step, in the load the hot
/// shards' replicas are chosen by ([`replica_load`]). More than its march (about one
/// step, and two thirds of one in the sends' set, fitted per tile): each arrival is
/// also room in the links and queues, and an iteration's wait. It was 20 from
/// session 48 (at a 138 ms frame); once a shard visit was a third cheaper (session
/// 75), 5 gave, in modelled ms against 20: bicycle 4.2 M at degree 2 82.271 / 83.484,
/// degree 1 75.372 / 75.807, degree 0 66.286 / 66.028, the 8 M preset 98.586 /
/// 98.160, the 1 M scene 41.826 / 42.075, its SH-3 version at degrees 1, 2, 3
/// 50.382 / 55.403, 70.297 / 70.589, 67.031 / 67.368, garden the same (no replicas);
/// 3 gave degree 2 82.154 but degree 0 66.625 and the 8 M preset 98.837
/// (docs/performance-log.md, session 76).
const REPLICA_ARRIVAL_STEPS: f64 = 5.0;

/// Each tracer tile's sampled load, which [`super::replicas::choose`] spreads over
/// replicas: the cell steps it marches (`steps`, its copies' included) and
/// [`REPLICA_ARRIVAL_STEPS`] for each ray it takes in (`arrivals`).
fn replica_load(steps: &[f64], arrivals: &[f64]) -> Vec<f64> {
    steps.iter().zip(arrivals).map(|(s, a)| s + REPLICA_ARRIVAL_STEPS * a).collect()
}

pub(crate) const REGION_SHARDS: usize = foam_layout::FOAM_REGION_MAX_SHARDS as usize;

/// The share of the sampled cell steps the camera regions march, the most over the
/// plan's cameras (see [`CameraSample::injector_share`]).
fn regions_share(samples: &[CameraSample]) -> f64 {
    samples.iter().map(CameraSample::injector_share).fold(0.0, f64::max)
}

/// Host-written bytes of one frame (see [`DevicePlan::frame_blocks`]).
pub struct FrameBlocks {
    pub camera: Vec<u8>,
    /// Every injector's camera region, in node order.
    pub regions: Vec<u8>,
    /// Every injector's block list (layout.h foam_block), in node order.
    pub blocks: Vec<u8>,
}

/// What every tracer tile of a `width` × `height` device in `shards` shards holds
/// besides its shard.
pub fn tracer_footprint(options: &DeviceOptions, width: u32, height: u32, shards: u64) -> partition::TracerFootprint {
    let ray_bytes =
        options.layout.payload_bytes() as u32 + if options.hops { size_of::<foam_ray_hops>() as u32 } else { 0 };
    let slice_pixels = (width as u64 * height as u64).div_ceil(shards) as u32;
    super::options::tracer_footprint(options, ray_bytes, slice_pixels)
}

/// The SH degree a plan's shards carry.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ShChoice {
    pub degree: u8,
    /// Where `--sh-degree auto` chose less than the scene's degree: one line saying
    /// which degree did not fit and by how much.
    pub note: Option<String>,
}

/// Whether the shards carry f32 SH coefficients (with the fp32 payload) or binary16.
pub fn sh_f32(options: &DeviceOptions) -> bool {
    options.layout == RayLayout::Fp32
}

/// The cut of `scene` into `shards` tracer tiles (over `options.ipus` IPUs, leaves
/// split onto free tiles as `options` allows) whose shards carry SH up to `degree`,
/// or the one line saying why it does not fit.
pub fn cut_at_degree(
    scene: &Scene,
    shards: u64,
    footprint: &partition::TracerFootprint,
    options: &DeviceOptions,
    degree: u8,
    progress: &dyn Progress,
) -> Result<partition::Cut, DeviceError> {
    let sref = scene.partition_view_sh(degree, sh_f32(options));
    let splits = options.free_splits(shards);
    let cut = partition::cut(&sref, shards, None, footprint.shard_budget(), splits, &|what| progress.step(what, None))?;
    check_fit(&cut.cut.partition, &cut.cut.counts, cut.balance, footprint, options.ipus)?;
    Ok(cut)
}

/// Shards per IPU when `--shards` is left to the plan: the paper's 1024, whose tiles
/// a multi-million-cell scene fills.
pub const SHARDS: u64 = 1024;
/// Shards when a scene is small enough for them ([`auto_shards`]).
pub const FEW_SHARDS: u64 = 512;
/// The most of a tracer tile's room for its shard that the mean shard may take at
/// [`FEW_SHARDS`] for the plan to cut that few. Half the tracers leave 512 tiles to
/// injectors and replicas, and the injectors bind such a scene's frame: the 1 M
/// synth (29 % at 512) 69.3 → 58.7 ms, garden (3 %) 46.2 → 38.4 ms. Where the tiles
/// fill, the tracers bind and have no room for copies or a cut by load: the 2.1 M
/// bicycle preset at SH degree 0 (55 %) 103.3 → 137.8 ms.
pub const FEW_SHARDS_FILL: f64 = 0.4;

/// The shards of all IPUs when `--shards` is left to the plan: [`FEW_SHARDS`] on one
/// IPU where the scene cut by bytes at the SH degree asked for (or the scene's) fits
/// them without split leaves and its mean shard takes at most [`FEW_SHARDS_FILL`]
/// of a tile's room; [`SHARDS`] on each IPU otherwise. One cut of the scene.
pub fn auto_shards(scene: &Scene, options: &DeviceOptions, width: u32, height: u32, progress: &dyn Progress) -> u64 {
    let many = SHARDS * options.ipus as u64;
    if options.ipus != 1 || scene.is_empty() {
        return many;
    }
    let degree = options.sh_degree.unwrap_or(scene.sh_degree).min(scene.sh_degree);
    let footprint = tracer_footprint(options, width, height, FEW_SHARDS);
    let budget = footprint.shard_budget();
    let sref = scene.partition_view_sh(degree, sh_f32(options));
    let Ok(cut) = partition::cut(&sref, FEW_SHARDS, None, budget, 0, &|what| progress.step(what, None)) else {
        return many;
    };
    let counts = &cut.cut.counts;
    let fits = check_fit(&cut.cut.partition, counts, cut.balance, &footprint, 1).is_ok();
    let mean = counts.iter().map(|c| c.bytes as f64).sum::<f64>() / counts.len().max(1) as f64;
    if fits && mean <= FEW_SHARDS_FILL * budget as f64 { FEW_SHARDS } else { many }
}

/// The SH degree a plan for `options` would carry (see [`choose_sh_degree`]): plan
/// with it fixed to cut the scene once more, not once per degree.
pub fn resolve_sh_degree(
    scene: &Scene,
    shards: u64,
    options: &DeviceOptions,
    width: u32,
    height: u32,
    progress: &dyn Progress,
) -> Result<ShChoice, DeviceError> {
    check_options(options, width, height)?;
    Ok(choose_sh_degree(scene, shards, options, width, height, progress)?.1)
}

/// Binary16's largest finite value is 65504; from this magnitude on, f32 rounds to an
/// infinity in it (the half and mixed layouts' SH coefficients and ray distances).
const BINARY16_OVERFLOW: f32 = 65520.0;

/// Refuses a scene whose SH coefficients up to `degree` include one that binary16,
/// in which the half and mixed layouts carry them, cannot hold: it would become an
/// infinity on the tile and turn its cell's colour to NaN, black in the image, where
/// the reference's f32 gives a colour. Trained scenes' coefficients are far inside the
/// range; this names the first that is not. f32 coefficients (`sh_f32`) pass.
fn check_half_sh(scene: &Scene, degree: u8, options: &DeviceOptions) -> Result<(), DeviceError> {
    let used = crate::scene::sh_rest_len(degree.min(scene.sh_degree));
    if used == 0 || sh_f32(options) {
        return Ok(());
    }
    let stride = scene.sh_rest_len();
    let bad =
        scene.sh_rest.chunks_exact(stride).enumerate().find_map(|(vertex, c)| {
            c[..used].iter().position(|v| v.abs() >= BINARY16_OVERFLOW).map(|k| (vertex, k, c[k]))
        });
    match bad {
        None => Ok(()),
        Some((vertex, k, v)) => Err(DeviceError::Options(format!(
            "vertex {vertex}: color_sh_{k} = {v:e} is beyond binary16's range (±65504), in which the {} layout \
             carries SH coefficients: render with --layout fp32, or at --sh-degree {}",
            options.layout.name(),
            // color_sh_k belongs to SH coefficient k / 3 + 1, of band ⌊√(k / 3 + 1)⌋.
            (1..=3u8).rev().find(|&l| usize::from(l * l) <= k / 3 + 1).unwrap_or(1) - 1
        ))),
    }
}

/// Refuses a view (of `cams`) from which a ray could cross a face further than
/// binary16, in which the half and mixed layouts keep a ray's distance `t` between
/// steps, can hold: the stored `t` would become an infinity, and the ray composite
/// nothing more, silently. Every face a ray crosses before the hull lies inside the
/// sites' bounding box, so its farthest corner bounds `t` (loosely: a corner may be out
/// of every ray's reach; `bounds`: `Scene::bbox`). The fp32 layout keeps `t` in f32
/// and passes.
fn check_half_reach(
    bounds: Option<([f32; 3], [f32; 3])>,
    cams: &[Camera],
    layout: RayLayout,
) -> Result<(), DeviceError> {
    if layout == RayLayout::Fp32 {
        return Ok(());
    }
    let Some((lo, hi)) = bounds else { return Ok(()) };
    for (k, cam) in cams.iter().enumerate() {
        let far: f64 = (0..3)
            .map(|a| {
                let p = f64::from(cam.position[a]);
                let d = (p - f64::from(lo[a])).abs().max((f64::from(hi[a]) - p).abs());
                d * d
            })
            .sum::<f64>()
            .sqrt();
        if far < f64::from(BINARY16_OVERFLOW) {
            continue;
        }
        let far = if far < 1e7 { format!("{far:.0}") } else { format!("{far:.2e}") };
        let camera = if cams.len() > 1 { format!("view {k}'s camera") } else { "the camera".to_string() };
        return Err(DeviceError::Options(format!(
            "the scene's bounding box reaches {far} from {camera}, beyond binary16's range (65504), in which the {} \
             layout keeps a ray's distance: render with --layout fp32",
            layout.name()
        )));
    }
    Ok(())
}

/// The cut and SH degree for `options.sh_degree`: the one asked for, which must fit
/// (its error names the highest degree that does), or with `None` the highest up to
/// the scene's that fits, with a note where that is less than the scene's.
fn choose_sh_degree(
    scene: &Scene,
    shards: u64,
    options: &DeviceOptions,
    width: u32,
    height: u32,
    progress: &dyn Progress,
) -> Result<(partition::Cut, ShChoice), DeviceError> {
    partition::check_shard_count(shards)?;
    scene.partition_view().validate()?;
    let footprint = tracer_footprint(options, width, height, shards);
    let at = |d: u8| cut_at_degree(scene, shards, &footprint, options, d, progress);
    let top = match options.sh_degree {
        Some(d) if d > scene.sh_degree => {
            return Err(DeviceError::Options(format!(
                "--sh-degree {d} exceeds the scene's SH degree {}",
                scene.sh_degree
            )));
        }
        Some(d) => d,
        None => scene.sh_degree,
    };
    if options.sh_degree.is_some() {
        check_half_sh(scene, top, options)?;
    }
    let first = match at(top) {
        Ok(cut) => return Ok((cut, ShChoice { degree: top, note: None })),
        Err(e) if top == 0 => return Err(e),
        Err(e) => e,
    };
    let lower = (0..top).rev().find_map(|d| at(d).ok().map(|cut| (d, cut)));
    let why = format!("SH degree {top} does not fit: {first}");
    match (options.sh_degree, lower) {
        (None, Some((d, cut))) => Ok((
            cut,
            ShChoice { degree: d, note: Some(format!("{why}; rendering at SH degree {d}, the highest that fits")) },
        )),
        (Some(_), Some((d, _))) => Err(DeviceError::Options(format!("{why}; SH degree {d} fits"))),
        (_, None) => Err(first),
    }
}

/// One line naming the heaviest tracer tile, its bytes and the budget, unless every
/// shard of `part` (with `counts`, a cut balancing `balance`) fits beside `footprint`
/// on the tracer tiles of `ipus` IPUs.
pub fn check_fit(
    part: &Partition,
    counts: &[partition::ShardCounts],
    balance: partition::Balance,
    footprint: &partition::TracerFootprint,
    ipus: u32,
) -> Result<(), DeviceError> {
    if footprint.shard_budget() == 0 {
        let items: Vec<String> = footprint.items().iter().map(|(label, b)| format!("{label} {b} B")).collect();
        return Err(DeviceError::Options(format!(
            "a tracer tile needs {} B before its shard ({}), over the {} B budget: use more shards or a smaller image",
            footprint.fixed(),
            items.join(", "),
            footprint.budget
        )));
    }
    let budget = footprint.shard_budget();
    let over = counts.iter().filter(|c| !partition::shard_fits(c, budget)).count();
    let Some((s, c)) =
        counts.iter().enumerate().rev().max_by_key(|(_, c)| (c.bytes, c.local + c.halo)).filter(|_| over > 0)
    else {
        return Ok(());
    };
    let tile = footprint.tile_bytes(c.bytes as u64);
    let entries = if (c.local + c.halo) as usize > partition::MAX_SHARD_ENTRIES {
        format!(
            ", and its {} local + {} halo cells exceed the {} that 16-bit indices address",
            c.local,
            c.halo,
            partition::MAX_SHARD_ENTRIES
        )
    } else {
        String::new()
    };
    let balanced = match balance {
        partition::Balance::Cells => "cell counts",
        partition::Balance::Bytes => "shard bytes",
    };
    let leaves = 1usize << part.depth;
    let split = match counts.len() - leaves {
        0 => String::new(),
        k => format!(" and {k} of its {leaves} leaves split onto free tiles"),
    };
    let chips = if ipus == 1 { "one Mk2".to_string() } else { format!("{ipus} Mk2 IPUs") };
    Err(DeviceError::Options(format!(
        "the scene does not fit {chips} in {} shards with {balanced} balanced{split}: tracer tile {s} needs {tile} B ({} B of shard, {} B of buffers and code), {} B over the {} B budget{entries}; {over} tiles are over",
        counts.len(),
        c.bytes,
        footprint.fixed(),
        tile.saturating_sub(footprint.budget),
        footprint.budget
    )))
}

fn check_options(o: &DeviceOptions, width: u32, height: u32) -> Result<(), DeviceError> {
    let bad = |m: String| Err(DeviceError::Options(m));
    o.check_bounds().map_err(DeviceError::Options)?;
    if width == 0 || height == 0 || width > MAX_IMAGE_SIDE || height > MAX_IMAGE_SIDE {
        return bad(format!(
            "resolution {width}x{height} is outside 1..={MAX_IMAGE_SIDE} per side (pixel coordinates travel in 11 bits)"
        ));
    }
    if o.link_capacity.contains(&0) || o.tracer_queue == 0 || o.router_queue == Some(0) {
        return bad("link, tracer and router capacities must be at least 1 ray".into());
    }
    let most = foam_layout::FOAM_MAX_SIDES;
    if o.side_links > most {
        return bad(format!("--tune side_links={}: a tracer has at most {most} side links", o.side_links));
    }
    if o.side_links > 0 && o.side_capacity == 0 {
        return bad("--tune side_capacity must be at least 1 ray when tracers have side links".into());
    }
    if o.copies as usize > REGION_SHARDS {
        return bad(format!("--tune copies={}: a tracer holds at most {REGION_SHARDS} shard copies", o.copies));
    }
    if !(0.0..1.0).contains(&o.t_stop) {
        return bad(format!("transmittance threshold {} must be in [0, 1)", o.t_stop));
    }
    Ok(())
}

/// Sizes the stores that fill what their tiles have beside everything else (the
/// router queues and the spill store) from the bytes the graph builder allocates for
/// `spec` with them empty (`poplar_bridge::spec_tile_bytes`, codelets/graph/tile_bytes.h),
/// and caps the rays in flight at the spill store's: the root's cap, and each
/// injector's share of it for a frame's first step ([`first_allowance`]).
fn fill_stores(tree: &Tree, spec: &mut RenderSpec, o: &DeviceOptions) -> Result<(), DeviceError> {
    let tile = partition::MK2_TILE_BYTES as u32;
    let ray_bytes = spec.ray_bytes;
    let bytes = poplar_bridge::spec_tile_bytes(spec)?;
    let at_spill = &bytes[tree.spill()];
    let spill = o.spill_capacity(ray_bytes, tile, (at_spill.links() + at_spill.finishes) as u32);
    for (i, n) in tree.nodes.iter().enumerate() {
        let mut p: foam_params = bytemuck::pod_read_unaligned(&spec.nodes[i].params);
        match n.role {
            Role::Router => {
                let q = o.router_queue_capacity(ray_bytes, tile, bytes[i].links() as u32);
                let (child, parent) = (o.edge_capacity(n.level - 1), o.edge_capacity(n.edge_level));
                if q < child.max(parent) {
                    return Err(DeviceError::Options(format!(
                        "a level-{} router ({} children) has no room for queues beside its links of {child} and {parent} rays: tune a lower link_capacity or fanout",
                        n.level, n.fanout
                    )));
                }
                p.queue_capacity = q;
                // The root admits new rays only while the spill store could take every
                // ray in flight: that is what makes the routers deadlock free
                // (codelets/vertices/router.cpp).
                if i == tree.root() {
                    p.max_in_flight = spill;
                }
            }
            Role::Spill => p.queue_capacity = spill,
            // A tracer's pending store takes what its tile has left, up to
            // tracer_queue: all of it but where a lean cut filled the tile.
            Role::Tracer => {
                let fit = o.tracer_queue_capacity(ray_bytes, tile, (bytes[i].total() - bytes[i].store) as u32);
                if fit == p.queue_capacity {
                    continue;
                }
                let least = o.lean_queue.unwrap_or(p.queue_capacity).min(p.queue_capacity);
                if fit < least {
                    return Err(DeviceError::Options(format!(
                        "tracer tile {} has room for a pending store of {fit} rays, under the {least} it needs",
                        n.tile
                    )));
                }
                p.queue_capacity = fit;
            }
            Role::Injector => p.max_in_flight = first_allowance(p.queue_capacity, spill, tree.injectors().len()),
        }
        spec.nodes[i].params = record_bytes(&p);
    }
    Ok(())
}

/// The rays each of `injectors` injectors with queues of `queue` emits in a frame's
/// first step, before the root's first allowance reaches it (layout.h
/// `foam_params.max_in_flight`): a full queue, or an even share of the `spill`
/// store's rays where the queues together would overfill it, so that the root's
/// count of the rays in flight never passes what the spill store takes.
fn first_allowance(queue: u32, spill: u32, injectors: usize) -> u32 {
    queue.min(spill / injectors.max(1) as u32)
}

/// The options whose tracer footprint a cut by load fills shards to: a lean
/// tracer's (`lean_queue`) where asked, else the options as given.
fn cut_options(o: &DeviceOptions) -> DeviceOptions {
    match o.lean_queue {
        Some(q) => DeviceOptions { tracer_queue: q.min(o.tracer_queue), results: FOAM_WORKERS, ..o.clone() },
        None => o.clone(),
    }
}

/// Node `i`'s own parameters: its routing, stores and schedule. Its lanes
/// ([lanes] in layout.h) the graph builder derives from the spec's edges.
/// The stores that fill their tiles ([`fill_stores`]) are left empty.
pub(crate) fn node_params(
    tree: &Tree,
    i: usize,
    o: &DeviceOptions,
    ray_bytes: u32,
    (width, height): (u32, u32),
    block_slots: u32,
) -> foam_params {
    let n = &tree.nodes[i];
    let mut p = foam_params {
        layout: layout_code(o.layout),
        ray_bytes,
        hops: o.hops as u32,
        shard: n.prefix,
        level_shift: n.level_shift as u16,
        route_bits: n.route_bits as u16,
        ..foam_params::default()
    };
    if n.role == Role::Router {
        p.__bindgen_anon_1.replicas =
            foam_layout::foam_replica_lanes { replica_bits: n.replica_bits, replica_lane: n.replica_lane };
    }
    match n.role {
        Role::Tracer => p.queue_capacity = o.tracer_queue,
        Role::Router => p.idle_credit = o.idle_credit as u16,
        Role::Spill => {}
        Role::Injector => {
            let (block_w, block_h) = o.batch.block_size(width, height);
            p.batch_kind = matches!(o.batch, super::options::Batch::Cols(_)) as u16;
            (p.block_w, p.block_h) = (block_w as u16, block_h as u16);
            p.drain_iters = o.drain_iters;
            p.block_slots = block_slots;
            p.queue_capacity = o.injector_queue(tree.injectors().len() as u32);
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_region_directory_lists_its_shards_by_id_and_pads_the_rest_above_every_id() {
        let ids = [0u16, 2, 4, 6, 9];
        let (h, sorted) = region_header(&[3, 0, 4], &ids, &|s| 100 + s);
        assert_eq!(sorted, vec![0, 3, 4]);
        assert_eq!(h.count, 3);
        assert_eq!(&h.shard[..3], &[0, 6, 9]);
        assert!(h.shard[3..].iter().all(|&s| s as u32 == foam_layout::FOAM_INVALID_SHARD));
        let first = size_of::<foam_region_header>() as u32;
        assert_eq!(&h.offset[..3], &[first, first + 100, first + 203]);
        assert_eq!(h.total_bytes, first + 307);
    }
}
