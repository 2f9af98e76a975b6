//! What a user can choose about the device run (the CLI's device flags and `--tune`
//! keys, src/cmd/device_args.rs and src/cmd/tune.rs), with the paper's rc 20 and half
//! payload and 8×8 blocks as the batches by default.

use partition::RayLayout;

/// Where the graph runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Backend {
    /// The project's host runtime of the Poplar API (every machine here).
    Host,
    /// A real IPU through the Poplar SDK (needs a build with `--features poplar`).
    Ipu,
}

/// How the injectors take the frame's pixels: in blocks, each a batch of primary
/// rays. `Rows(n)` and `Cols(n)` are the paper's scan-ordered batches of whole lines
/// (dealt out to the injectors in turn); `Blocks(n)` are n×n squares that each
/// injector takes from its own part of the view, longest sampled path first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Batch {
    Rows(u32),
    Cols(u32),
    Blocks(u32),
}

/// Pixels a side of [`Batch::FINE`]'s blocks.
const FINE_BLOCK: u32 = 4;

impl Default for Batch {
    fn default() -> Self {
        Batch::Blocks(8)
    }
}

impl Batch {
    /// The batch where 512 injectors share the view (the CLI's default where
    /// `--shards auto` gives them every router lane): with blocks of 8 each gets about
    /// nine, and cuts along whole lines of blocks (`blocks::balance`) miss an even
    /// share of the sampled cost by up to a block a side; blocks of 4 give each about
    /// 37 (the 1 M scene's dearest injector sampled at 1.30 times the median instead
    /// of 1.40; modelled 52.4 → 48.6 ms with its budget, garden 34.7 → 26.5 ms).
    pub const FINE: Batch = Batch::Blocks(FINE_BLOCK);

    /// Whether the view is cut as finely as [`Batch::FINE`] or more: the march
    /// budgets are then planned for an even cut ([`planned_march_budget`],
    /// [`planned_tracer_budget`]).
    pub fn is_fine(self) -> bool {
        matches!(self, Batch::Blocks(n) if n <= FINE_BLOCK)
    }

    /// The kind of batch a `--batch` or `--sweep batch=` value names before its `:N`.
    pub fn kind(name: &str) -> Option<fn(u32) -> Batch> {
        match name {
            "rows" => Some(Batch::Rows),
            "cols" | "columns" => Some(Batch::Cols),
            "blocks" => Some(Batch::Blocks),
            _ => None,
        }
    }

    /// Block width and height for a `width` × `height` frame.
    pub fn block_size(self, width: u32, height: u32) -> (u32, u32) {
        match self {
            Batch::Rows(n) => (width, n),
            Batch::Cols(n) => (n, height),
            Batch::Blocks(n) => (n, n),
        }
    }
}

impl std::str::FromStr for Batch {
    type Err = String;

    /// `rows:N`, `cols:N` or `blocks:N`.
    fn from_str(s: &str) -> Result<Batch, String> {
        let bad = || format!("batch '{s}' must be rows:N, cols:N or blocks:N");
        let (kind, n) = s.split_once(':').ok_or_else(bad)?;
        let make = Batch::kind(kind).ok_or_else(bad)?;
        let lines: u32 = n.parse().map_err(|_| format!("batch '{s}': N must be a whole number"))?;
        if lines == 0 || lines > 2048 {
            return Err(format!("batch '{s}': N must be at least 1 and at most 2048"));
        }
        Ok(make(lines))
    }
}

impl std::fmt::Display for Batch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Batch::Rows(n) => write!(f, "rows:{n}"),
            Batch::Cols(n) => write!(f, "cols:{n}"),
            Batch::Blocks(n) => write!(f, "blocks:{n}"),
        }
    }
}

/// Which compute set of a step runs each vertex (codelets/graph/spec.h, `Schedule`).
/// Every tile does its own work in the same order under each; the schedules differ in
/// which tiles' work shares a set, so in which busiest tiles a step waits for one
/// after another. The image is the same under each.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Schedule {
    /// Three sets: the injectors emit beside the tracers' march, march in the second
    /// and deal in the last.
    Apart,
    /// Three sets: the injectors march beside the tracers, deal in the second and
    /// emit in the last, for the next step's march.
    MergedMarch,
    /// Four sets: the routers count (and the injectors emit), the routers plan, the
    /// tracers and injectors march beside the routers' forward, they send and deal.
    #[default]
    ForwardBesideMarch,
    /// Three sets: the tracers and injectors march beside the routers' count, the
    /// routers plan (and the injectors deal), the tracers send beside the routers'
    /// forward (and the injectors emit, for the next step's march).
    SendBesideForward,
    /// Two sets: [`Schedule::SendBesideForward`]'s order, with the routers' plan in
    /// the march's set, in the same vertex as their count (one worker), and the
    /// injectors' deal in the last set, in the same vertex as their emit.
    PlanBesideMarch,
}

impl Schedule {
    pub const ALL: [Schedule; 5] = [
        Schedule::Apart,
        Schedule::MergedMarch,
        Schedule::ForwardBesideMarch,
        Schedule::SendBesideForward,
        Schedule::PlanBesideMarch,
    ];
}

#[derive(Clone, Debug)]
pub struct DeviceOptions {
    pub backend: Backend,
    pub layout: RayLayout,
    /// Carry per-ray hop counters (+4 B per payload) for hop maps.
    pub hops: bool,
    /// Compute/exchange iterations per host call, at most.
    pub rc: u32,
    /// A host call's loop ends as soon as the spill store's sum of every tracer's
    /// finished pixels, copied to it each step, reaches the frame (the steps
    /// program's `RepeatWhileTrue` on its count), so a frame takes the iterations it needs rather than the next
    /// multiple of `rc`; `false`: every call runs `rc` (the paper's `Repeat`).
    pub ends_on_device: bool,
    pub batch: Batch,
    /// Idle iterations between batches.
    pub drain_iters: u32,
    /// Which compute set of a step runs each vertex; None: the plan's
    /// ([`planned_schedule`]).
    pub schedule: Option<Schedule>,
    /// Injector tiles on lanes of the root (1 to 256), at most: the plan takes the
    /// most up to this many that the target has tiles for and that leave the root
    /// room for its queues ([`DeviceOptions::root_has_room`]).
    pub injectors: u32,
    /// Rays per injector-lane buffer. `None`: the injectors share
    /// [`ROOT_LANES_RAYS`] (see [`DeviceOptions::inject_lane_capacity`]).
    pub inject_capacity: Option<u32>,
    /// Rays each injector's queue holds (what it may have emitted and not dealt
    /// out yet), apart from its lane. `None`: as many as a given `inject_capacity`,
    /// or the injectors share [`INJECT_LANES_RAYS`] (see [`DeviceOptions::injector_queue`]).
    pub injector_queue: Option<u32>,
    /// Rays per buffer of each injector's direct lanes to routers under the root
    /// (those `direct_share` keeps), which carry primary rays past the root; 0: none
    /// (every primary ray crosses the root, as in the paper). `None`: the injectors share
    /// [`DIRECT_LANES_RAYS`] (see [`DeviceOptions::direct_lane_capacity`]).
    pub direct_capacity: Option<u32>,
    /// Percent of an injector's sampled rays that must head for a router under the
    /// root, in some view, for the injector to keep a direct lane to it
    /// ([`super::direct::choose`]); 0: a lane to every one.
    pub direct_share: u32,
    /// Router children per level, from the tracers up; the last entry repeats and
    /// the top router takes the shard-id bits that remain.
    pub fanout: Vec<u32>,
    /// Rays per link buffer (each direction of a tree edge) by the level of the
    /// edge's lower end: tracer edges first, then edges above level-1 routers, and
    /// so on; the last entry repeats up to the spill store's edge. Empty: the
    /// defaults, [`HALF_LINK_CAPACITY`] scaled to the payload so that buffers keep
    /// their bytes.
    pub link_capacity: Vec<u32>,
    /// Rays a tracer can hold waiting for upward credit.
    pub tracer_queue: u32,
    /// With a cut by load, the room the cut gives a shard is a tracer's whose
    /// pending store holds this many rays and whose result store one ray per worker
    /// (a lean tracer); every tracer's pending store then takes what its tile has
    /// left, up to `tracer_queue`, and its result store what the sample expects to
    /// end there. None: the room of a tracer with both at their defaults. Where the
    /// cut by bytes leaves the tiles nearly full (bicycle at SH degree 2: 98.6 %),
    /// the shards nobody looks at then take the cells the hot shards give up.
    pub lean_queue: Option<u32>,
    /// Rays of upward credit a router grants each child beyond its demand while
    /// its queue has room for that on every child (layout.h foam_params), so that
    /// a quiet child's ray goes up in the step it arrives; 0: the demand only.
    /// Measured (bench, modelled ms and iterations; 0 → 8): the 1 M scene 48.553,
    /// 216 → 47.374, 206; bicycle at degree 0 86.225, 247 → 84.932, 239; at degree 2
    /// 145.477, 491 → 144.666, 482; garden 24.725, 117 → 23.918, 109. 2, 4, 16 and
    /// 32 land within half a millisecond of 8.
    pub idle_credit: u32,
    /// Side links per tracer: direct edges to the neighbouring shards whose
    /// crossings would cost the most router hops (see [`super::sides`]); 0: none.
    pub side_links: u32,
    /// Rays per side-link buffer (each direction).
    pub side_capacity: u32,
    /// [`DevicePlan::for_camera`](super::DevicePlan::for_camera) sizes the tracer
    /// links (edges and side links) to the camera's expected load when no
    /// `link_capacity` is given (see [`tracer_links_for_load`] and
    /// [`DeviceOptions::sizes_links_to_camera`]); the CLI sets it unless
    /// `link_capacity` or `side_capacity` is tuned.
    pub size_links: bool,
    /// Most copies of neighbouring shards a tracer holds beside its own, to march
    /// rays on through in the same step (see [`super::copies`]); only planned for a
    /// camera, and only as many as fit the tile beside its grown result store.
    /// 0: none.
    pub copies: u32,
    /// Hot shards get replicas on the tiles the tree leaves free until no tile's
    /// sampled load is over this many times the mean tracer's, as far as the tiles
    /// go (see [`super::replicas`]); only planned for a camera. 0: none.
    pub replicas: u32,
    /// Replicas on lanes of their tracer's router ([`super::tree::Tree::replicate_on_lanes`]),
    /// up to this many child lanes a router; 0: under a router of their own
    /// ([`super::tree::Tree::replicate`]). `None`: as the plan says
    /// ([`planned_replica_lanes`]).
    pub replica_lanes: Option<u32>,
    /// Planned for a camera on one IPU, the k-d cut is made again so that the
    /// cell steps its sampled rays take on each tracer balance as far as the tiles'
    /// room allows: the shards nobody looks at grow to this many percent of a
    /// tile's room for its shard, and the shards where the rays gather shrink (see
    /// [`partition::balance_load`]). `None`: the plan does so at
    /// [`LOAD_CUT_FILL`] where [`load_cut_fill`] says it pays; `Some(0)`: never.
    pub load_cut: Option<u32>,
    /// Finished rays a tracer keeps in its result store instead of sending them
    /// to their pixel's home tracer (split evenly over its six workers).
    pub results: u32,
    /// Rays per router queue (up and down each; double-buffered on the tile).
    /// `None` fills the router tile.
    pub router_queue: Option<u32>,
    /// Rays the spill store holds; also the in-flight cap. `None` fills
    /// the spill tile.
    pub spill: Option<u32>,
    /// Bytes of each injector's camera region (copies of the shards its rays cross
    /// first, which it marches them through). `None`: what its tile has left.
    pub region_bytes: Option<u32>,
    /// Cell steps each InjectorMarch worker marches per step before it leaves the
    /// rest of its rays for the next (0: no limit). `None`: planned from the
    /// camera's sample (see [`planned_march_budget`]).
    pub march_budget: Option<u32>,
    /// Cell steps each TracerMarch worker marches per step before it leaves the
    /// rest of its rays, held in its pending store, for the next (0: no limit).
    /// `None`: planned from the injectors' budget (see [`planned_tracer_budget`]).
    pub tracer_budget: Option<u32>,
    /// Stop a ray once its transmittance is at or below this.
    pub t_stop: f32,
    /// Tiles per IPU of the target (1472 on a Mk2).
    pub tiles: u32,
    /// IPUs the graph spans (a power of two up to [`super::tree::MAX_IPUS`]); tiles
    /// are numbered across them, `tiles` on each.
    pub ipus: u32,
    /// Host calls without any progress before the frame is declared stuck.
    pub stall_calls: u32,
    /// Iterations a frame may take before it is given up (`rc` may not exceed it:
    /// one host call may run `rc` iterations whatever happens in them).
    pub max_iterations: u32,
    /// SH degree the tracers carry beyond DC (at most the scene's; binary16
    /// coefficients, f32 with the fp32 payload); `None`: the highest that fits
    /// (`--sh-degree auto`, the CLI's default). The library's default is 0, DC only.
    pub sh_degree: Option<u8>,
}

/// Bytes of a Mk2 tile's SRAM.
pub const TILE_BYTES: u32 = 638_976;

/// The most rays one buffer or store may be given: more than a tile can hold of the
/// smallest payload (31,948 rays of 20 bytes).
pub const MAX_BUFFER_RAYS: u32 = 1 << 16;
// `--tune march_budget` and `tracer_budget` take up to MAX_BUFFER_RAYS, which the
// march must be able to count (layout.h FOAM_MAX_MARCH_BUDGET).
const _: () = assert!(MAX_BUFFER_RAYS <= foam_layout::FOAM_MAX_MARCH_BUDGET);

/// The most `max_iterations` (and so `rc`) may be: about an hour of host-runtime
/// iterations at 1024 shards.
pub const MAX_ITERATIONS: u32 = 1_000_000;

impl DeviceOptions {
    /// Iteration counts and buffer sizes within their bounds (cheap: check before any
    /// work). Sizes past these could not fit a tile anyway, and byte counts computed
    /// from them would overflow.
    pub fn check_bounds(&self) -> Result<(), String> {
        let sizes = self.link_capacity.iter().map(|&c| ("link_capacity", c)).chain([
            ("tracer_queue", self.tracer_queue),
            ("lean_queue", self.lean_queue.unwrap_or(0)),
            ("side_capacity", self.side_capacity),
            ("router_queue", self.router_queue.unwrap_or(0)),
            ("spill", self.spill.unwrap_or(0)),
            ("inject_capacity", self.inject_capacity.unwrap_or(0)),
            ("direct_capacity", self.direct_capacity.unwrap_or(0)),
            ("results", self.results),
        ]);
        for (key, rays) in sizes {
            if rays > MAX_BUFFER_RAYS {
                return Err(format!(
                    "--tune {key}={rays}: at most {MAX_BUFFER_RAYS} rays (a tile holds {} bytes)",
                    TILE_BYTES
                ));
            }
        }
        for (key, rays) in [
            ("idle_credit", self.idle_credit),
            ("inject_capacity", self.inject_capacity.unwrap_or(0)),
            ("direct_capacity", self.direct_capacity.unwrap_or(0)),
        ] {
            if rays > u16::MAX as u32 {
                return Err(format!(
                    "--tune {key}={rays}: at most {} rays (foam_params holds it in 16 bits)",
                    u16::MAX
                ));
            }
        }
        if self.region_bytes.is_some_and(|b| b > TILE_BYTES) {
            return Err(format!("--tune region_kib: a camera region cannot exceed a tile's {} KiB", TILE_BYTES / 1024));
        }
        if self.drain_iters > self.max_iterations {
            return Err(format!(
                "--tune drain={}: more idle iterations than a frame may take (--max-iterations {})",
                self.drain_iters, self.max_iterations
            ));
        }
        if !self.ipus.is_power_of_two() || self.ipus > super::tree::MAX_IPUS {
            return Err(format!("--ipus {}: 1, 2, 4, 8 or 16 IPUs", self.ipus));
        }
        if self.rc == 0 {
            return Err("--rc 0: the device needs at least one compute/exchange iteration per host call".into());
        }
        if !(1..=MAX_ITERATIONS).contains(&self.max_iterations) {
            return Err(format!(
                "--max-iterations {}: a frame may take 1 to {MAX_ITERATIONS} iterations",
                self.max_iterations
            ));
        }
        if self.rc > self.max_iterations {
            return Err(format!(
                "--rc {}: a host call runs that many iterations, more than a frame may take (--max-iterations {})",
                self.rc, self.max_iterations
            ));
        }
        Ok(())
    }
}

/// Injectors whose tiles split leaves never take: a scene whose shards need
/// splitting to fit (or to fit a higher SH degree) gets the free tiles before any
/// more injectors, and the plan's injectors take the tiles its splits leave
/// ([`super::topology`]), so a scene fits as it did with 32 injectors.
pub const SPLIT_INJECTORS: u32 = 32;

/// Bytes a tile keeps for what is not a ray buffer (vertex state, code and worker
/// stacks: see [`super::program`], small tensors) when buffers are sized to fill it.
pub const TILE_RESERVE_BYTES: u32 = 32 * 1024;

/// Bytes of the camera region's directory (layout.h foam_region_header).
pub const REGION_HEADER_BYTES: u32 = std::mem::size_of::<foam_layout::foam_region_header>() as u32;

/// Bytes of one link buffer of `capacity` rays.
pub fn link_bytes(capacity: u32, ray_bytes: u32) -> u32 {
    std::mem::size_of::<foam_layout::foam_link_header>() as u32 + capacity * ray_bytes
}

/// Rays the root's injector lanes hold together when their capacity is left to
/// the plan, and each router's direct lanes under the root: 32 injectors' worth of
/// lanes of [`INJECT_CAPACITY`] and [`DIRECT_CAPACITY`] rays. Up to 32 injectors
/// each lane keeps those; more share these totals, so that the root and the
/// routers under it keep the room for their queues that 32 left them (with 128
/// injectors, lanes of 96 and 32 rays; with 256, 48 and 16).
pub const INJECT_LANES_RAYS: u32 = 32 * INJECT_CAPACITY;
/// Rays the root's injector lanes hold together when left to the plan: the exchange
/// copies each lane whole every step, and the root takes them all in, so they are
/// narrower than the queues behind them ([`INJECT_LANES_RAYS`] shared), which pace
/// what the injectors emit (8 rays a lane with 256 injectors, 16 with 81, 64 with
/// 32). The direct lanes share [`DIRECT_LANES_RAYS`] alike, and every router under
/// the root takes one from each injector. An injector emits a few rays a step (the
/// bicycle scene's 81 about 14, its 256 at degree 0 about 6), so 16 injectors'
/// worth of lanes, not the 32 of before: the busiest tile's exchange 148 → 96 kB a
/// step at 81 injectors, 155 → 114 kB at 256, and the bicycle scene at SH degree 2
/// 171.4 → 166.1 ms, at degree 0 82.6 → 81.9 ms (257 → 247 iterations), the 2.1 M
/// bicycle preset at degree 0 92.2 → 82.7 ms (346 → 260). Lanes of 32 to the root
/// at 81 injectors: 168.8 ms; direct lanes of 8 there 166.4 ms, and of 4 at 256
/// injectors 100.1 ms at degree 0 (316 iterations): the injectors then wait.
pub const ROOT_LANES_RAYS: u32 = 16 * ROOT_LANE_CAPACITY;
/// Rays per injector lane to the root, at most, when left to the plan.
pub const ROOT_LANE_CAPACITY: u32 = 128;
pub const DIRECT_LANES_RAYS: u32 = 16 * DIRECT_CAPACITY;
/// The default [`DeviceOptions::direct_share`].
pub const DIRECT_SHARE: u32 = 3;
/// Rays an injector's queue holds at least when left to the plan (more than 384
/// injectors would share [`INJECT_LANES_RAYS`] into less): with 512 injectors, queues
/// of 24 left the 1 M scene's injectors short of rays, 58.7 → 61.3 ms (260 iterations
/// instead of 240).
pub const INJECTOR_QUEUE_MIN: u32 = 32;
/// Rays per injector lane and per direct lane, at most, when left to the plan.
pub const INJECT_CAPACITY: u32 = 384;
pub const DIRECT_CAPACITY: u32 = 128;

/// `total` rays shared by `lanes` lanes: at most `most` each, in whole multiples of
/// 16, 8 where the share is 8 to 15, or `narrow` where it is less (more than 256
/// injectors: with 512, lanes of 16, the floor before, made every router under the
/// root take in 512 × 16 rays each step, 241 kB, and the exchange waited for it; the
/// 1 M scene 66.1 → 60.5 ms with direct lanes of 8).
fn shared_lane(total: u32, lanes: u32, most: u32, narrow: u32) -> u32 {
    let share = total / lanes.max(1);
    (match share {
        0..8 => narrow,
        8..16 => 8,
        _ => share / 16 * 16,
    })
    .min(most)
}

/// Rays per lane to the root and per injector queue where more than 256 injectors
/// share [`ROOT_LANES_RAYS`] and [`INJECT_LANES_RAYS`].
const NARROW_LANE: u32 = 8;
/// Rays per direct lane where more than 256 injectors share [`DIRECT_LANES_RAYS`]:
/// an injector deals its rays over all the routers under the root (four at 512
/// shards), so each direct lane carries a part of what its lane to the root could,
/// and every router under the root takes in all 512 whole each step. Lanes of 4
/// instead of 8: the 1 M scene 58.7 → 55.9 ms, garden 38.4 → 35.5 ms, the same
/// iterations (the busiest tile's exchange 159 → 129 kB); lanes of 2 cost the 1 M
/// scene 20 iterations (59.8 ms).
const NARROW_DIRECT_LANE: u32 = 4;

/// Default rays per link buffer by level for the 20-byte half payload: narrow
/// tracer edges (most of the bytes exchanged), and router edges no wider than the
/// routers under the root can take in beside every injector's direct lane (the
/// exchange copies each buffer whole, and waits for the tile that receives the
/// most: 768 above the tracers' parents cost the 1 M scene 4.8 ms a frame against
/// 384, for the same iterations); below the root, edges narrow enough that the
/// root, which also takes the injectors' lanes, keeps a queue of about 2500 rays
/// (its credit loop reserves a step's worth of queue for what it granted, so its
/// queue bounds what crosses it). Above the second level (into the root with 512
/// or 1024 shards, and the root's edge to the spill store) 256: the root takes in
/// every child's lane and every injector's, and once the routers under it hear only
/// the injectors that send them rays ([`super::direct`]) the root was the busiest
/// tile of the exchange. With lanes kept where 1 % of an injector's rays head,
/// bicycle 4.2 M at SH degree 2 86.9 → 85.9 ms (the busiest tile's exchange 103 → 90
/// kB a step, the level-1 routers' now), the 1 M scene 44.4 → 43.8, garden 22.4 →
/// 22.1; 256 alone, with a direct lane from every injector, 86.4 on the bicycle scene
/// (docs/performance-log.md, session 72).
pub const HALF_LINK_CAPACITY: [u32; 3] = [256, 384, 256];

/// The default link capacities for `ray_bytes` payloads: the half payload's bytes.
pub fn default_link_capacity(ray_bytes: u32) -> Vec<u32> {
    HALF_LINK_CAPACITY.iter().map(|&c| (c * 20 / ray_bytes.max(1)).max(16) / 16 * 16).collect()
}

/// Iterations over which links sized to a camera should carry the rays the
/// busiest tracer is expected to take in: a sixth of the issue-5 frame budget of
/// 240, because rays arrive in bursts, not evenly (longer spans left the busiest
/// tracers' edges too narrow: docs/performance-log.md).
pub const SIZING_ITERATIONS: f64 = 40.0;

/// Smallest tracer edge and side-link buffers when links are sized to a camera.
pub const MIN_SIZED_EDGE: u32 = 64;
pub const MIN_SIZED_SIDE: u32 = 8;

/// `options` with tracer links sized for a busiest tracer that expects `peak`
/// marching visits a frame: the default buffers (tracer edges and side links
/// together) when it needs their rate ([`SIZING_ITERATIONS`]) or more, otherwise
/// scaled down in proportion, to at least [`MIN_SIZED_EDGE`] and
/// [`MIN_SIZED_SIDE`] rays. Router edges keep their defaults.
pub fn tracer_links_for_load(options: &DeviceOptions, ray_bytes: u32, peak: f64) -> DeviceOptions {
    let mut o = options.clone();
    let defaults = default_link_capacity(ray_bytes);
    let full = defaults[0] + o.side_links * o.side_capacity;
    let share = (peak / SIZING_ITERATIONS / full as f64).min(1.0);
    let edge = ((defaults[0] as f64 * share).ceil() as u32).div_ceil(16) * 16;
    o.link_capacity = defaults.clone();
    o.link_capacity[0] = edge.clamp(MIN_SIZED_EDGE.min(defaults[0]), defaults[0]);
    o.side_capacity =
        ((o.side_capacity as f64 * share).ceil() as u32).clamp(MIN_SIZED_SIDE.min(o.side_capacity), o.side_capacity);
    o
}

/// Bytes of the link buffers of a router of `fanout` children's lanes of `child`
/// rays, a parent lane of `parent` and `injectors` lanes of `inject`, as the graph
/// builder allocates them (codelets/graph/tile_bytes.h); None for parameters it refuses.
pub fn router_link_bytes(
    ray_bytes: u32,
    fanout: u32,
    child: u32,
    parent: u32,
    injectors: u32,
    inject: u32,
) -> Option<u32> {
    // foam_params holds these in 16 bits; the graph builder refuses more.
    let p = foam_layout::foam_params {
        ray_bytes,
        fanout: u16::try_from(fanout).ok()?,
        link_capacity: child,
        parent_capacity: u16::try_from(parent).ok()?,
        inject_lanes: u16::try_from(injectors).ok()?,
        inject_capacity: u16::try_from(inject).ok()?,
        ..Default::default()
    };
    let role = super::tree::Role::Router as u8;
    poplar_bridge::role_tile_bytes(role, &super::plan::record_bytes(&p), &Default::default())
        .ok()
        .map(|b| b.links() as u32)
}

/// Everything a tracer tile holds besides its shard and its shard copies, item by
/// item, as the graph builder allocates it (`poplar_bridge::role_tile_bytes`:
/// codelets/graph/tile_bytes.h), with its links at their largest: the default or
/// given tracer edge and `side_links` side links of `side_capacity`, so that copies
/// chosen before the links are sized still fit after. Tiles hold framebuffer slices
/// of `slice_pixels`.
pub fn tracer_footprint(o: &DeviceOptions, ray_bytes: u32, slice_pixels: u32) -> partition::TracerFootprint {
    use foam_layout::{FOAM_WORKERS, foam_params};
    let edge = if o.link_capacity.is_empty() { default_link_capacity(ray_bytes)[0] } else { o.edge_capacity(0) };
    let params = foam_params {
        ray_bytes,
        link_capacity: edge,
        queue_capacity: o.tracer_queue,
        result_slots: o.results / FOAM_WORKERS,
        side_links: o.side_links,
        side_capacity: if o.side_links > 0 { o.side_capacity } else { 0 },
        ..foam_params::default()
    };
    // Without copies a tracer still holds their directory.
    let contents =
        poplar_bridge::TileContents { slice_pixels, copies_bytes: REGION_HEADER_BYTES as usize, ..Default::default() };
    let b = poplar_bridge::role_tile_bytes(
        super::tree::Role::Tracer as u8,
        super::plan::record_bytes(&params).as_slice(),
        &contents,
    )
    .expect("a tracer's foam_params");
    // The program as this build measures it, out of the tile reserve the plan keeps.
    let program = super::program::program_bytes(super::tree::Role::Tracer)
        .unwrap_or(partition::TracerFootprint::DEFAULT_PROGRAM_BYTES);
    partition::TracerFootprint {
        ray_bytes: ray_bytes as u64,
        slice_pixels: slice_pixels as u64,
        framebuffer: b.pixels as u64,
        links: (b.inbox + b.outbox) as u64,
        side_links: (b.side_in + b.side_out) as u64,
        pending: b.store as u64,
        results: b.results as u64,
        records: (b.params + b.stats + b.ctl + b.camera + b.copies) as u64,
        program,
        reserve: (TILE_RESERVE_BYTES as u64).saturating_sub(program),
        budget: partition::MK2_TILE_BYTES,
    }
}

/// Bytes of a tracer's result store of `slots_per_worker` slots for each of its six
/// workers, as the graph builder makes it: a store with no slot is one placeholder word.
pub fn result_store_bytes(slots_per_worker: u32) -> u32 {
    use foam_layout::{FOAM_WORKERS, foam_result};
    (FOAM_WORKERS * slots_per_worker * std::mem::size_of::<foam_result>() as u32).max(4)
}

/// Bytes a tracer tile has for shard copies (their blobs, beyond the copies'
/// directory) beside its own shard of `shard_bytes` and [`tracer_footprint`].
pub fn copy_budget(o: &DeviceOptions, ray_bytes: u32, shard_bytes: u32, slice_pixels: u32) -> u32 {
    tracer_footprint(o, ray_bytes, slice_pixels).shard_budget().saturating_sub(shard_bytes as u64) as u32
}

impl DeviceOptions {
    /// Leaves of a `shards`-shard k-d tree that can be split in two on the tiles its
    /// router tree and up to [`SPLIT_INJECTORS`] injectors leave free (see
    /// [`super::tree::Tree::free_splits`]).
    pub fn free_splits(&self, shards: u64) -> usize {
        let depth = shards.trailing_zeros();
        let injectors = self.injectors.min(SPLIT_INJECTORS);
        super::tree::Tree::free_splits_on(depth, self.ipus, self.tiles, &self.tree_fanouts(depth), injectors)
    }

    /// Router fanouts per level for a k-d tree of `depth` levels. On several IPUs
    /// with the default fanouts, the tree takes as few levels as routers of
    /// [`MAX_FANOUT`](super::tree::MAX_FANOUT) allow, each level taking the default's
    /// bits where the levels above can still take the rest: the root then spans the
    /// IPUs directly (2048 shards: 16, 8, 16) rather than over a level of two routers
    /// and a root of two, which every ray between halves of a chip would climb. One
    /// IPU, or fanouts tuned, keep the fanouts as given.
    pub fn tree_fanouts(&self, depth: u32) -> Vec<u32> {
        if self.ipus == 1 || self.fanout != DeviceOptions::default().fanout {
            return self.fanout.clone();
        }
        let most = super::tree::MAX_FANOUT.trailing_zeros();
        let levels = depth.div_ceil(most).max(1);
        let mut left = depth;
        (0..levels)
            .map(|l| {
                let want = self.fanout[(l as usize).min(self.fanout.len() - 1)].trailing_zeros();
                let above = most * (levels - l - 1);
                let bits = want.max(left.saturating_sub(above)).min(most).min(left).max(1);
                left -= bits.min(left);
                1 << bits
            })
            .collect()
    }

    /// Tiles of the whole target: `tiles` on each of the `ipus` IPUs.
    pub fn target_tiles(&self) -> u32 {
        self.tiles.saturating_mul(self.ipus)
    }

    /// Whether [`DevicePlan::for_camera`](super::DevicePlan::for_camera) sizes and
    /// places the tracer links for its camera: asked to, and no link sizes given.
    pub fn sizes_links_to_camera(&self) -> bool {
        self.size_links && self.link_capacity.is_empty()
    }

    /// Rays per buffer of an edge whose lower end is at tree `level` (0 = tracers);
    /// with no capacities given, the half payload's defaults.
    pub fn edge_capacity(&self, level: u32) -> u32 {
        let c: &[u32] = if self.link_capacity.is_empty() { &HALF_LINK_CAPACITY } else { &self.link_capacity };
        c[(level as usize).min(c.len() - 1)]
    }

    /// An injector's camera region: as given (at least the largest shard), or what
    /// its tile has beside its `links` bytes of link buffers and its block list of
    /// `block_list` bytes, in whole KiB.
    pub fn region_capacity(&self, tile_bytes: u32, largest_shard: u32, links: u32, block_list: u32) -> u32 {
        let least = REGION_HEADER_BYTES + largest_shard;
        let bytes = self
            .region_bytes
            .unwrap_or_else(|| tile_bytes.saturating_sub(TILE_RESERVE_BYTES + links + block_list) / 1024 * 1024);
        bytes.max(least).next_multiple_of(4)
    }

    /// The spill capacity: as given, or as many rays as fit the spill tile beside
    /// its `beside` bytes (its link buffers and the tracers' words of finished
    /// pixels), in whole multiples of 256.
    pub fn spill_capacity(&self, ray_bytes: u32, tile_bytes: u32, beside: u32) -> u32 {
        self.spill.unwrap_or_else(|| {
            let free = tile_bytes.saturating_sub(TILE_RESERVE_BYTES + beside);
            (free / ray_bytes) / 256 * 256
        })
    }

    /// Rays per buffer of each injector's lane to the root with `injectors` injectors:
    /// as given, or their share of [`ROOT_LANES_RAYS`].
    pub fn inject_lane_capacity(&self, injectors: u32) -> u32 {
        self.inject_capacity.unwrap_or_else(|| shared_lane(ROOT_LANES_RAYS, injectors, ROOT_LANE_CAPACITY, NARROW_LANE))
    }

    /// Rays each injector's queue holds with `injectors` injectors: as given, as
    /// many as its lane when only the lane's capacity is given, or their share of
    /// [`INJECT_LANES_RAYS`], at least [`INJECTOR_QUEUE_MIN`].
    pub fn injector_queue(&self, injectors: u32) -> u32 {
        self.injector_queue.or(self.inject_capacity).unwrap_or_else(|| {
            shared_lane(INJECT_LANES_RAYS, injectors, INJECT_CAPACITY, NARROW_LANE).max(INJECTOR_QUEUE_MIN)
        })
    }

    /// Rays per buffer of each direct lane with `injectors` injectors: as given (0:
    /// no direct lanes), or their share of [`DIRECT_LANES_RAYS`].
    pub fn direct_lane_capacity(&self, injectors: u32) -> u32 {
        self.direct_capacity
            .unwrap_or_else(|| shared_lane(DIRECT_LANES_RAYS, injectors, DIRECT_CAPACITY, NARROW_DIRECT_LANE))
    }

    /// Whether a root router of `fanout` children, with `injectors` injector lanes
    /// and its links at these options' capacities for `ray_bytes` payloads (child
    /// edges at `level - 1`, its edge to the spill store at `edge_level`), keeps
    /// queues of at least one of those links' buffers on its tile, as the plan
    /// requires of every router (the injector lanes, [`Self::inject_lane_capacity`]
    /// rays each, take the room the queues would have).
    pub fn root_has_room(&self, ray_bytes: u32, fanout: u32, level: u32, edge_level: u32, injectors: u32) -> bool {
        let caps =
            if self.link_capacity.is_empty() { default_link_capacity(ray_bytes) } else { self.link_capacity.clone() };
        let cap = |l: u32| caps[(l as usize).min(caps.len() - 1)];
        let (child, parent) = (cap(level.saturating_sub(1)), cap(edge_level));
        let Some(links) =
            router_link_bytes(ray_bytes, fanout, child, parent, injectors, self.inject_lane_capacity(injectors))
        else {
            return false;
        };
        self.router_queue_capacity(ray_bytes, partition::MK2_TILE_BYTES as u32, links) >= child.max(parent)
    }

    /// A tracer's pending store: `tracer_queue` rays, or as many as fit its tile
    /// beside its `beside` bytes where fewer do (a lean cut filled the tile).
    pub fn tracer_queue_capacity(&self, ray_bytes: u32, tile_bytes: u32, beside: u32) -> u32 {
        (tile_bytes.saturating_sub(TILE_RESERVE_BYTES + beside) / ray_bytes).min(self.tracer_queue)
    }

    /// Router queue capacity: as given, or what fills the router tile beside its
    /// `links` bytes of link buffers (every lane, both directions) as four queues
    /// (up and down, each double-buffered), in multiples of 256.
    pub fn router_queue_capacity(&self, ray_bytes: u32, tile_bytes: u32, links: u32) -> u32 {
        self.router_queue.unwrap_or_else(|| {
            let free = tile_bytes.saturating_sub(TILE_RESERVE_BYTES + links);
            (free / (4 * ray_bytes)) / 256 * 256
        })
    }
}

impl Default for DeviceOptions {
    fn default() -> Self {
        DeviceOptions {
            backend: Backend::Host,
            layout: RayLayout::Half,
            hops: false,
            rc: 20,
            ends_on_device: true,
            batch: Batch::default(),
            drain_iters: 0,
            march_budget: None,
            tracer_budget: None,
            schedule: None,
            injectors: 256,
            inject_capacity: None,
            injector_queue: None,
            direct_capacity: None,
            direct_share: DIRECT_SHARE,
            fanout: vec![16, 8],
            link_capacity: Vec::new(),
            tracer_queue: 2048,
            lean_queue: None,
            idle_credit: 8,
            side_links: 16,
            side_capacity: 32,
            size_links: false,
            copies: 3,
            replicas: 2,
            replica_lanes: None,
            load_cut: None,
            results: 1536,
            router_queue: None,
            spill: None,
            region_bytes: None,
            t_stop: 0.001,
            tiles: 1472,
            ipus: 1,
            stall_calls: 200,
            max_iterations: 100_000,
            sh_degree: Some(0),
        }
    }
}

/// Iterations the planned march budget spreads the dearest injector's marching
/// over. Without a budget an injector marches every ray it emitted the step before,
/// and emission follows the root's allowance: the busiest injector of each step
/// differs from step to step, and the frame pays each step's. Measured with
/// `--tune march_budget` (garden and the 1 M scene): budgets that spread the
/// marching over 80-300 iterations all cut the frame, by about the same; past
/// 180 they add iterations.
pub const BUDGET_ITERATIONS: u64 = 160;

/// As [`BUDGET_ITERATIONS`] where the injectors' regions march (nearly) every
/// sampled step ([`INJECTORS_ALONE_SHARE`]), so that the injectors are the whole
/// frame and their view is cut by balance alone (`blocks::order`). Garden, its
/// injectors even (`march_budget`; modelled ms, iterations): 34 → 50.0, 240; 38 →
/// 48.3, 220; 41 → 48.7, 220; 46 (over 160) → 50.7, 200; 56 → 51.8, 200. Over 180
/// on the 1 M and bicycle scenes, whose tracers march a quarter and three quarters
/// of the steps, gained nothing (1 M 81.4 ms against 78.1 with the tracers' budget
/// kept), so they keep 160. Since a shard visit counts against the budget
/// (`FOAM_BUDGET_VISIT_Q8`) a budget covers fewer steps, and garden wants fewer
/// iterations' worth: 41 (over 180) → 49.3 ms, 260 iterations; 46 → 47.9, 240; 50 →
/// 46.5, 220; 55 → 48.0, 220; 60 → 51.0, 200. So 150.
pub const BUDGET_ITERATIONS_INJECTORS_ALONE: u64 = 150;

/// As [`BUDGET_ITERATIONS`] where the plan cut the scene by the camera's load
/// ([`load_cut_fill`]): the tracers are even, all the injectors march, and the
/// busiest of them bind the frame. The bicycle scene at SH degree 0
/// (`march_budget`; modelled ms, iterations): 80 → 100.6, 260; 92 → 98.5, 240; 108
/// → 100.9, 240; 114 → 102.4, 240; 128 (over 160) → 108.2, 240; 150 → 115.2, 220.
/// A 2.1 M bicycle preset: 102 (over 220) → 112.8 ms, 140 (over 160) → 115.0.
pub const BUDGET_ITERATIONS_LOAD_CUT: u64 = 220;

/// As [`BUDGET_ITERATIONS_LOAD_CUT`] where the cut by load made the tracers lean
/// ([`planned_lean_queue`]), under the schedule a cut by load plans
/// ([`planned_schedule`]). The bicycle scene at SH degree 2 (budget, both
/// injectors' and tracers'; modelled ms, iterations): 96 (over 220) → 119.2, 287;
/// 88 → 115.0, 301; 80 → 111.6, 312; 72 → 111.5, 334; 64 → 112.0, 367; 48 →
/// 116.7, 471. At degree 1: 105 (over 220) → 108.6, 288; 89 → 102.6, 294; 80 →
/// 102.3, 310. At degree 0, not lean, 220 stays best: 93 → 82.4, 239; 80 → 84.7,
/// 274. The injectors' budget alone lower does not pay (degree 2, 96 and the
/// tracers' 64: 132.6 ms). So 260, a few more iterations for a frame 7 % shorter.
/// Once [`super::blocks`] moved blocks off the dearest injector (its cell steps 1.34
/// → 1.22 times the mean injector's), the same iterations gave a lower budget (session 57,
/// degree 2; modelled ms, iterations): 260 → 98.2, 333; 240 → 97.6, 314; 230 → 96.7,
/// 291; 215 → 98.7, 282; 200 → 101.4, 267. So 230.
pub const BUDGET_ITERATIONS_LEAN_CUT: u64 = 230;

/// The share of the sampled cell steps the injectors' regions march from which the
/// plan takes the injectors for the whole frame.
pub const INJECTORS_ALONE_SHARE: f64 = 0.99;

/// As [`BUDGET_ITERATIONS_INJECTORS_ALONE`] and [`BUDGET_ITERATIONS_LOAD_CUT`] where
/// the view is cut in blocks of 4 or less (`--batch`; the default with 512
/// injectors): the cut is even enough that the dearest injector marches little more
/// than the mean, so its marching can end sooner without the others idling long
/// before it. Measured with blocks of 4 (`march_budget`; modelled ms, iterations):
/// garden 23 (over 150) → 29.4, 180; 35 → 27.4, 140; 43 → 26.5, 120; 50 → 28.0, 120;
/// 60 → 30.6, 120; the 1 M scene 39 (over 220) → 51.2, 260; 41 → 49.4, 240; 44 →
/// 48.6, 220; 47 → 49.0, 220. So 80 and 190. With the injectors' cut refined
/// ([`super::blocks`]) the 1 M scene's dearest injector fell, and 190 gave it 40
/// (session 57: 37 → 45.8, 233; 40 → 44.6, 217; 43 → 43.7, 204; 46 → 44.4, 201; 50 →
/// 45.9, 199), so 175.
pub const BUDGET_ITERATIONS_FINE_ALONE: u64 = 80;
pub const BUDGET_ITERATIONS_FINE_LOAD_CUT: u64 = 175;

/// Cell steps per InjectorMarch worker per step: the dearest injector's sampled
/// steps (`dearest_steps`) over [`BUDGET_ITERATIONS`] steps of its six workers, or
/// [`BUDGET_ITERATIONS_INJECTORS_ALONE`] where the regions' `share` of the sampled
/// steps is [`INJECTORS_ALONE_SHARE`] or more, or [`BUDGET_ITERATIONS_LOAD_CUT`]
/// where the scene was cut `by_load` ([`BUDGET_ITERATIONS_LEAN_CUT`] where that cut
/// was `lean`), their `FINE` versions where the view's blocks are `fine`, 4 pixels
/// or less; 0 (no limit) when nothing was sampled.
pub fn planned_march_budget(dearest_steps: u64, share: f64, (by_load, lean): (bool, bool), fine: bool) -> u32 {
    let iterations = match (share >= INJECTORS_ALONE_SHARE, by_load, fine) {
        (true, _, false) => BUDGET_ITERATIONS_INJECTORS_ALONE,
        (true, _, true) => BUDGET_ITERATIONS_FINE_ALONE,
        (false, true, false) if lean => BUDGET_ITERATIONS_LEAN_CUT,
        (false, true, false) => BUDGET_ITERATIONS_LOAD_CUT,
        (false, true, true) => BUDGET_ITERATIONS_FINE_LOAD_CUT,
        (false, false, _) => BUDGET_ITERATIONS,
    };
    let per = iterations * foam_layout::FOAM_WORKERS as u64;
    dearest_steps.div_ceil(per).min(u32::MAX as u64) as u32
}

/// How many times the dearest injector's steps at its planned budget the hottest
/// tracer tile must take at the tracers' before the injectors march at the tracers'
/// pace ([`paced_march_budget`]). The bicycle scene at SH degree 2 is at 2.2 (the
/// injectors 950 steps' worth, the hottest tracer 2083), and paced it models 130.7
/// ms against 148.2; the 1 M scene is at 1.1, and paced (45 → 41) it models 48.2
/// ms against 46.5: where the two are close, the tracers' work comes from the
/// injectors' rays, and slower injectors only delay it.
///
/// With the injectors' cut refined ([`super::blocks`]) the dearest injector's
/// sampled steps fell and degree 2 came to 1.63: paced at 1.5 (budget 43) it
/// modelled 134.1 ms in 454 iterations against 98.2 in 333 unpaced (both over 260
/// iterations), so 2.
pub const PACE_RATIO: f64 = 2.0;

/// The injectors' budget `planned` (cell steps per worker per step), lowered where
/// the hottest tracer tile (`hottest` sampled steps, its shard's over its tiles)
/// needs [`PACE_RATIO`] times the steps at the tracers' budget (`tracer_budget`)
/// that the dearest injector (`dearest` sampled steps) needs at `planned`: the
/// frame then lasts as long as that tracer marches, and the injectors march at its
/// pace, `dearest × tracer_budget / hottest`, instead of racing ahead. Every step
/// pays its busiest tile, and an injector marching its budget was that tile: on the
/// bicycle scene at SH degree 2 (81 injectors over 160 iterations: 99; the tracers'
/// 60) the injectors bound the march in 326 of 451 steps. Measured there (`--tune
/// march_budget`, tracer_budget 60; modelled ms, iterations): 99 → 148.2, 462; 85
/// → 146.0, 459; 70 → 138.4, 459; 60 → 132.9, 464; 50 → 132.0, 467; 46 (paced) →
/// 130.7, 462; 40 → 128.4, 460; 30 → 151.1, 561; 22 → 195.2, 736. `planned` where
/// nothing was sampled or the tracers have no budget.
pub fn paced_march_budget(planned: u32, dearest: u64, hottest: f64, tracer_budget: u32) -> u32 {
    if planned == 0 || tracer_budget == 0 || hottest <= 0.0 || dearest == 0 {
        return planned;
    }
    let paced = (dearest as f64 * tracer_budget as f64 / hottest).ceil().max(1.0);
    if paced * PACE_RATIO <= planned as f64 { paced as u32 } else { planned }
}

/// Cell steps per TracerMarch worker per step: the injectors' planned budget
/// (`injector_budget`, steps per worker) scaled by (1 + `share`) / 2, where `share` is
/// the camera regions' share of the sampled cell steps; 0 (no limit) with no
/// injector budget. A tracer marches every ray that reached it otherwise, and the
/// frame pays each step's busiest tracer, a different tile from step to step; held
/// to a budget, a hot tracer's marching spreads over the steps in which it would
/// have idled. Where the injectors march most of the frame they already pace it, and
/// tracers held below their pace only wait; where the tracers march most, a tighter
/// budget pays. Measured with `--tune tracer_budget` (modelled ms, iterations; the
/// injectors' budgets 93 and 104; the rule gives 82 and 63):
///
/// | budget | 50 | 60 | 70 | 75 | 80 | 93 | 100 | 110 | 150 | none |
/// | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
/// | 1 M scene (share 0.75) | | 110.5, 220 | 106.7, 200 | 105.6, 200 | | 105.3, 200 | | 105.6, 200 | 107.4, 200 | 110.7, 200 |
/// | bicycle (share 0.22) | 226.0, 580 | 221.8, 520 | 225.3, 480 | | 228.6, 460 | | 246.7, 440 | | 290.0, 440 | 313.3, 440 |
///
/// Garden, whose regions march everything, holds no ray back at 60-100.
///
/// Where the shards were cut by load and the view in blocks of 8 (`even`), the cut
/// has evened the tracers, and held below the injectors' pace the hot ones were left
/// a backlog that they marched for 80 iterations after the injectors finished: they
/// get the injectors' budget. The 4.2 M bicycle scene at SH degree 0 (`tracer_budget`;
/// modelled ms, iterations; the injectors' 84): 66 (the rule) → 88.6, 300; 75 →
/// 84.3, 280; 84 → 82.8, 260; 100 → 90.7, 260; 120 → 101.7, 260. The 2.1 M bicycle
/// preset at degree 0 (injectors' 95): 80 → 92.6, 360; 95 → 93.3, 360. The 1 M
/// scene in blocks of 4 (injectors' 45): 40 → 46.8, 220; 45 → 48.6, 220.
pub fn planned_tracer_budget(injector_budget: u32, share: f64, even: bool) -> u32 {
    if even {
        return injector_budget;
    }
    (injector_budget as f64 * (1.0 + share.clamp(0.0, 1.0)) / 2.0).round() as u32
}

/// Iterations a budget may at most stretch the hottest tracer tile's sampled steps
/// over: twice issue 21's goal of 240 ([`tracer_budget_floor`]).
pub const MAX_BUDGET_ITERATIONS: f64 = 480.0;

/// The least tracers' budget (cell steps per worker per step) that marches the
/// hottest tracer tile's `hottest` sampled steps within [`MAX_BUDGET_ITERATIONS`];
/// 0 with nothing sampled. The planned budgets come from the injectors'; on one IPU
/// the replicas keep the hottest tracer tile within a few times the dearest
/// injector's steps, and the floor is under every plan's budget. On two IPUs,
/// before they had replicas, the bicycle scene's hottest tracer at SH degree 2 was
/// held to 12 steps a worker, the injectors paced to it to 1, and the frame took
/// 38,403 iterations (13.9 s modelled).
pub fn tracer_budget_floor(hottest: f64) -> u32 {
    (hottest.max(0.0) / (foam_layout::FOAM_WORKERS as f64 * MAX_BUDGET_ITERATIONS)).ceil() as u32
}

/// How full a cut by load lets the shards nobody looks at grow, in percent of a
/// tile's room for its shard: a little short of full, as a shard's halo is only
/// known once it is cut.
pub const LOAD_CUT_FILL: u32 = 95;
/// A cut by load is made where the sampled camera regions march less than this
/// share of the cell steps: the tracers march the rest, and the hottest of them
/// bind the frame (the 4.2 M bicycle scene: 22 to 32 %); where the injectors
/// march most of it (the 1 M scene: 75 %, garden 100 %) they bind it, and smaller
/// shards only make their regions' rays cross more shard boundaries.
pub const LOAD_CUT_SHARE: f64 = 0.6;
/// ... and where the heaviest shard of the cut by bytes leaves this share of its
/// room free at least: with the tiles nearly full (bicycle at SH degree 2: 98.6 %)
/// the cut has no cells to move.
pub const LOAD_CUT_ROOM: f64 = 0.2;

/// The fill (percent) of a cut by load for a plan whose camera regions march
/// `share` of the sampled steps, whose heaviest shard cut by bytes is `heaviest`
/// bytes of `room`: as `o.load_cut` says, or, left to the plan, [`LOAD_CUT_FILL`]
/// on one IPU where [`LOAD_CUT_SHARE`] and [`LOAD_CUT_ROOM`] hold.
pub fn load_cut_fill(o: &DeviceOptions, share: f64, heaviest: u64, room: u64) -> Option<u32> {
    match o.load_cut {
        Some(0) => None,
        Some(fill) => Some(fill),
        None => (o.ipus == 1 && share < LOAD_CUT_SHARE && (heaviest as f64) <= (1.0 - LOAD_CUT_ROOM) * room as f64)
            .then_some(LOAD_CUT_FILL),
    }
}

/// The pending store of a lean tracer ([`DeviceOptions::lean_queue`]) where the plan
/// chooses one.
pub const LEAN_QUEUE: u32 = 256;

/// A lean tracer's pending store (rays) for a plan whose camera regions march `share`
/// of the sampled steps and whose heaviest shard cut by bytes is `heaviest` bytes of
/// `room`: as `o.lean_queue` says, or, left to the plan, [`LEAN_QUEUE`] on one IPU
/// where a cut by load would pay ([`LOAD_CUT_SHARE`]) but the tiles have no room
/// for it ([`LOAD_CUT_ROOM`]) and no cut is asked for.
pub fn planned_lean_queue(o: &DeviceOptions, share: f64, heaviest: u64, room: u64) -> Option<u32> {
    if o.lean_queue.is_some() {
        return o.lean_queue;
    }
    (o.load_cut.is_none()
        && o.ipus == 1
        && share < LOAD_CUT_SHARE
        && (heaviest as f64) > (1.0 - LOAD_CUT_ROOM) * room as f64)
        .then_some(LEAN_QUEUE)
}

/// The camera regions' share of the sampled cell steps, after a cut by load, under
/// which the plan sends beside the routers' forward ([`planned_schedule`]).
pub const SEND_BESIDE_FORWARD_SHARE: f64 = 0.75;

/// The schedule `o` asks for, or the plan's: [`Schedule::PlanBesideMarch`] where
/// the shards were cut `by_load` and the camera regions march under
/// [`SEND_BESIDE_FORWARD_SHARE`] of the sampled steps after the cut (`share`), else
/// the default. There the tracers are even and march a quarter of the frame or
/// more, many of them send every step, and a step waited for the busiest of their
/// sends after the march; beside the routers' forward it waits for the larger of
/// the two. Where the injectors march most of the frame, most rays come from them
/// through the routers, and the routers' forward after the march costs more than
/// the sends save. Measured (modelled ms, iterations; four sets against three):
///
/// | scene (share after the cut) | 4 sets | 3 sets |
/// | --- | --- | --- |
/// | bicycle 4.2 M, SH degree 2 (lean, 0.44) | 124.3, 286 | 119.2, 287 |
/// | bicycle 4.2 M, SH degree 0 (0.58) | 84.1, 238 | 82.4, 239 |
/// | bicycle preset 2.1 M (0.69) | 86.0, 241 | 85.3, 242 |
/// | synth 1 M, 512 shards (0.79) | 46.7, 211 | 51.4, 212 |
/// | garden (not cut, 1.0) | 23.4, 110 | 28.6, 116 |
///
/// The threshold sits between the 2.1 M and 1 M scenes' shares; no scene between
/// them was measured.
///
/// Where the tracers send beside the forward, the routers also count and plan in
/// one worker beside the march ([`Schedule::PlanBesideMarch`], two sets): the same
/// steps in the same order, so the same rays and iterations, but the march outlasts
/// a router's count and plan on most steps, where the three-set step then waited
/// for a set in which only the routers planned (the busiest a router of 32 lanes,
/// about 20 µs a step however idle). Where the injectors march most of the frame
/// the routers count many rays, and one worker counting them costs more than that
/// set: the 1 M scene 43.7 → 45.1 ms under it, garden 22.9 → 30.7.
///
/// The root counts the rays of every injector's lane and plans each lane, so above
/// [`ONE_WORKER_COUNT_LANES`] of them (512 injectors, where `--shards auto` takes 512
/// shards) its one worker outlasts the march in most steps even where the tracers
/// are even, and the plan keeps the three-set step
/// ([`Schedule::SendBesideForward`]): the sends beside the forward, the count on six
/// workers beside the march and the plan apart. The 1 M scene with SH at degree 1
/// (512 injectors, 0.74 after its cut), modelled ms and iterations: two sets 56.7
/// in 274 (the root the march set's busiest tile in 195 of its steps), three 54.6
/// in 274, four 55.5 in 273; at degree 3 (256 injectors, 0.72) two sets 70.7 in 255,
/// three 73.1 in 255.
pub fn planned_schedule(o: &DeviceOptions, by_load: bool, share: f64, root_lanes: u32) -> Schedule {
    o.schedule.unwrap_or(if !by_load || share >= SEND_BESIDE_FORWARD_SHARE {
        Schedule::default()
    } else if root_lanes > ONE_WORKER_COUNT_LANES {
        Schedule::SendBesideForward
    } else {
        Schedule::PlanBesideMarch
    })
}

/// The most injector lanes at the root under which the plan counts and plans a
/// router's rays in one worker beside the march ([`planned_schedule`]).
pub const ONE_WORKER_COUNT_LANES: u32 = 256;

/// How much more than their regions' share of the tiles beside the tree the
/// injectors take where the replicas hang on their routers' lanes
/// ([`injectors_for_share`]). The replicas then need no routers of their own, so the
/// tracers reach a given busiest tile with fewer tiles, and the injectors, which
/// march the camera regions, bind the march before they do. Measured on the bicycle
/// scene at SH degree 2 (regions 44 % after the lean cut; modelled ms, iterations,
/// injectors; budgets at 80, and as planned):
///
/// | scale | injectors | budgets 80 | planned budgets |
/// | --- | --- | --- | --- |
/// | 1.0 | 169 | 107.507, 302 | (80) |
/// | 1.1 | 186 | 100.895, 280 | |
/// | 1.15 | 194 | 100.160, 279 | 99.243, 299 (71) |
/// | 1.2 | 202 | 104.006, 284 | |
/// | 1.3 | 219 | 105.840, 299 | |
pub const LANES_INJECTOR_SCALE: f64 = 1.15;

/// The camera regions' share of the sampled cell steps under which the plan puts
/// replicas on their routers' lanes ([`planned_replica_lanes`]): between SH degree
/// 1's 0.52, where they pay since session 55's routers (below), and degree 0's 0.58,
/// where they do not.
pub const REPLICA_LANES_SHARE: f64 = 0.55;

/// Child lanes a router takes for replicas as `o` asks, or the plan's: every lane
/// it has (FOAM_MAX_LANES) on one IPU where the camera regions march under
/// [`REPLICA_LANES_SHARE`] of the sampled steps (`share`, after any cut), else none
/// (replicas under routers of their own). The tiles a replica's router took go to
/// more replicas, which pays where the tracers bind the march; but a router with
/// replica lanes plans them in its one-worker RouterPlan, 106 x86 instructions a
/// lane, and counts and forwards them, which is dearer than the replicas' routers
/// where the injectors bind it. Measured (modelled ms, iterations; replicas on
/// lanes against under routers; the same partition; session 54, the injectors'
/// share not yet scaled with the lanes):
///
/// | scene (share after the cut) | routers | lanes |
/// | --- | --- | --- |
/// | bicycle 4.2 M, SH degree 2 (lean, 0.44) | 111.481, 312 | 107.143, 299 |
/// | bicycle 4.2 M, SH degree 1 (lean, 0.52) | 102.311, 294 | 103.483, 292 |
/// | bicycle 4.2 M, SH degree 0 (0.58) | 82.392, 239 | 82.974, 237 |
/// | synth 1 M, 512 shards (0.79) | 46.724, 211 | 48.956, 210 |
/// | garden (not cut, 1.0) | 23.199, 110 | 23.199, 110 |
///
/// Session 55's routers (a lane's share without an integer divide) and their table,
/// measured on recordings with busy routers (bicycle at degree 2), make a ray a
/// router forwards dearer (85.8 IPU instructions, was 71.0) and a lane cheaper, so a
/// hop saved counts for more: degree 1 (0.52) 101.744 ms, 294 iterations, under
/// routers against 94.250, 286 on lanes (with the injectors' scale); degree 0 (0.58)
/// 81.491, 239 against 81.899, 237.
pub fn planned_replica_lanes(o: &DeviceOptions, share: f64) -> u32 {
    o.replica_lanes.unwrap_or(if o.ipus == 1 && share < REPLICA_LANES_SHARE { foam_layout::FOAM_MAX_LANES } else { 0 })
}

/// What a cell step with `faces` faces counts of a march budget, in steps of 15
/// faces (layout.h `FOAM_BUDGET_STEP_Q8` and `FOAM_BUDGET_FACE_Q8`, march.h
/// foam_budget_q8).
pub fn budget_step_units(faces: f64) -> f64 {
    (foam_layout::FOAM_BUDGET_STEP_Q8 as f64 + foam_layout::FOAM_BUDGET_FACE_Q8 as f64 * faces) / 256.0
}

/// Fewer injectors than the `taken` ones of a plan of `nodes` tiles, if the sample
/// gives the camera regions a `share` of the frame's cell steps under a proportional
/// share of the free tiles (those the tree, the spill store and the injectors do
/// not take, which replicas of hot shards take otherwise): the injectors get that
/// share of the tiles beside the tree, at least one. On several IPUs the injectors
/// keep every tile they have room for on IPU 0, beside the root, and each IPU's
/// other free tiles take replicas of its own shards.
///
/// Measured (bench, the routers' lanes costed): garden, whose regions march
/// everything, keeps all 256 asked (109.6 ms; 114.1 with 128); the bicycle scene
/// (22 %; its hot tracers need the replicas) takes 81. With `replica_lanes` (the
/// replicas on their routers' lanes: [`planned_replica_lanes`]) the share is scaled
/// by [`LANES_INJECTOR_SCALE`].
pub fn injectors_for_share(share: f64, taken: u32, nodes: u32, o: &DeviceOptions, replica_lanes: bool) -> Option<u32> {
    if o.ipus != 1 || taken <= 1 {
        return None;
    }
    let beside = (o.tiles as u64).saturating_sub(nodes as u64 - taken as u64);
    let scale = if replica_lanes { LANES_INJECTOR_SCALE } else { 1.0 };
    let want = ((share.clamp(0.0, 1.0) * scale * beside as f64).round() as u32).max(1);
    (want < taken).then_some(want)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replicas_take_router_lanes_where_the_tracers_bind_the_march() {
        let o = DeviceOptions::default();
        // Bicycle at SH degree 2 (0.44) and 1 (0.52): lanes; degree 0, 1 M, garden: routers.
        for share in [0.44, 0.52] {
            assert_eq!(planned_replica_lanes(&o, share), foam_layout::FOAM_MAX_LANES, "{share}");
        }
        for share in [0.58, 0.79, 1.0] {
            assert_eq!(planned_replica_lanes(&o, share), 0, "{share}");
        }
        // As asked, whatever the sample says.
        assert_eq!(planned_replica_lanes(&DeviceOptions { replica_lanes: Some(20), ..o.clone() }, 1.0), 20);
        assert_eq!(planned_replica_lanes(&DeviceOptions { replica_lanes: Some(0), ..o.clone() }, 0.1), 0);
        // Several IPUs were not measured with them.
        assert_eq!(planned_replica_lanes(&DeviceOptions { ipus: 2, ..o }, 0.44), 0);
    }

    #[test]
    fn a_budget_counts_a_step_of_15_faces_as_one() {
        assert!((budget_step_units(15.0) - 1.0).abs() < 0.01, "{}", budget_step_units(15.0));
        // The bicycle scene's cells have 15.5 faces on average.
        assert!(budget_step_units(15.5) > 1.0 && budget_step_units(8.0) < 0.7 && budget_step_units(30.0) > 1.7);
    }

    #[test]
    fn the_plan_cuts_by_load_where_the_tracers_march_most_and_tiles_have_room() {
        let o = DeviceOptions::default();
        let room = 480_504;
        // The 4.2 M bicycle scene at SH degree 0 (regions 33 %, heaviest shard 324 kB)
        // and a 2.1 M one (48 %): cut by load. At degree 2 (459 kB) no room; the 1 M
        // scene (75 %) and garden (100 %): the injectors bind the frame.
        assert_eq!(load_cut_fill(&o, 0.33, 324_184, room), Some(LOAD_CUT_FILL));
        assert_eq!(load_cut_fill(&o, 0.485, 178_072, room), Some(LOAD_CUT_FILL));
        assert_eq!(load_cut_fill(&o, 0.22, 471_416, room), None);
        assert_eq!(load_cut_fill(&o, 0.75, 80_000, room), None);
        assert_eq!(load_cut_fill(&o, 1.0, 10_000, room), None);
        // Not on several IPUs unless asked; as asked, whatever the sample says.
        assert_eq!(load_cut_fill(&DeviceOptions { ipus: 2, ..o.clone() }, 0.33, 324_184, room), None);
        assert_eq!(load_cut_fill(&DeviceOptions { load_cut: Some(80), ..o.clone() }, 1.0, 471_416, room), Some(80));
        assert_eq!(load_cut_fill(&DeviceOptions { load_cut: Some(0), ..o.clone() }, 0.33, 324_184, room), None);
    }

    #[test]
    fn the_plan_sends_beside_the_forward_after_a_cut_by_load_where_the_tracers_march_a_quarter() {
        let o = DeviceOptions::default();
        // Bicycle at degree 2 (0.44 after its lean cut), degree 0 (0.58), 2.1 M (0.69).
        for (share, lanes) in [(0.44, 194), (0.58, 256), (0.69, 256), (0.72, 256)] {
            assert_eq!(planned_schedule(&o, true, share, lanes), Schedule::PlanBesideMarch, "{share}");
        }
        // The 1 M scene with SH at degree 1 (0.74, 512 injectors): the root's one
        // worker would count 512 lanes.
        assert_eq!(planned_schedule(&o, true, 0.74, 512), Schedule::SendBesideForward);
        // The 1 M scene (0.79 after its cut), garden (not cut), a scene not cut at all.
        assert_eq!(planned_schedule(&o, true, 0.79, 512), Schedule::ForwardBesideMarch);
        assert_eq!(planned_schedule(&o, false, 1.0, 512), Schedule::ForwardBesideMarch);
        assert_eq!(planned_schedule(&o, false, 0.3, 256), Schedule::ForwardBesideMarch);
        // As asked, whatever the cut.
        let asked = DeviceOptions { schedule: Some(Schedule::Apart), ..o.clone() };
        assert_eq!(planned_schedule(&asked, true, 0.44, 194), Schedule::Apart);
    }

    #[test]
    fn the_plan_makes_tracers_lean_where_a_cut_by_load_pays_but_tiles_are_full() {
        let o = DeviceOptions::default();
        let room = 480_504;
        // Bicycle at SH degree 2 (regions 22 %, heaviest shard 471 kB): lean. At
        // degree 0 (324 kB) the tiles have room for a plain cut; the 1 M scene and
        // garden are not cut.
        assert_eq!(planned_lean_queue(&o, 0.22, 471_416, room), Some(LEAN_QUEUE));
        assert_eq!(planned_lean_queue(&o, 0.33, 324_184, room), None);
        assert_eq!(planned_lean_queue(&o, 0.75, 471_416, room), None);
        // As asked; not where a cut is tuned, nor on several IPUs.
        assert_eq!(planned_lean_queue(&DeviceOptions { lean_queue: Some(64), ..o.clone() }, 0.75, 10, room), Some(64));
        assert_eq!(planned_lean_queue(&DeviceOptions { load_cut: Some(0), ..o.clone() }, 0.22, 471_416, room), None);
        assert_eq!(planned_lean_queue(&DeviceOptions { load_cut: Some(95), ..o.clone() }, 0.22, 471_416, room), None);
        assert_eq!(planned_lean_queue(&DeviceOptions { ipus: 2, ..o.clone() }, 0.22, 471_416, room), None);
    }

    #[test]
    fn injectors_get_the_regions_share_of_the_free_tiles() {
        let o = DeviceOptions::default();
        // 1354 tiles planned, 256 of them injectors: 1098 for the tree, 374 beside it.
        assert_eq!(injectors_for_share(1.0, 256, 1354, &o, false), None);
        assert_eq!(injectors_for_share(0.754, 256, 1354, &o, false), None, "282 wanted: keep 256");
        assert_eq!(injectors_for_share(0.216, 256, 1354, &o, false), Some(81));
        // With replicas on lanes, 15 % more: 0.216 · 1.15 of the 374 tiles beside the tree.
        assert_eq!(injectors_for_share(0.216, 256, 1354, &o, true), Some(93));
        assert_eq!(injectors_for_share(0.0, 256, 1354, &o, false), Some(1));
        // Not on several IPUs (the injectors all sit on IPU 0), and never more than taken.
        assert_eq!(injectors_for_share(0.216, 256, 1354, &DeviceOptions { ipus: 2, ..o.clone() }, false), None);
        assert_eq!(injectors_for_share(0.5, 32, 1130, &o, false), None);
    }

    #[test]
    fn tracers_march_tighter_where_the_injectors_march_less() {
        // The bicycle scene at SH degree 2 and the 1 M scene, as sampled.
        assert_eq!(paced_march_budget(99, 94_117, 124_982.0, 60), 46, "the tracers take 2.2 times as long: their pace");
        assert_eq!(paced_march_budget(45, 50_415, 49_308.0, 40), 45, "1.1 times: the plan's");
        assert_eq!(paced_march_budget(99, 94_117, 0.0, 60), 99, "no tracer steps sampled");
        assert_eq!(paced_march_budget(99, 94_117, 124_982.0, 0), 99, "no tracer budget");
        assert_eq!(paced_march_budget(0, 94_117, 124_982.0, 60), 0, "no injector budget");
        assert_eq!(paced_march_budget(99, 10, 1e12, 60), 1, "at least one step");
        assert_eq!(planned_tracer_budget(93, 0.754, false), 82, "the 1 M scene");
        assert_eq!(planned_tracer_budget(104, 0.216, false), 63, "the bicycle scene");
        assert_eq!(planned_tracer_budget(75, 1.0, false), 75, "garden: the injectors' own");
        assert_eq!(planned_tracer_budget(0, 0.5, false), 0, "no injector budget, none for the tracers");
        assert_eq!(planned_tracer_budget(100, 7.0, false), 100, "a share is at most 1");
        assert_eq!(planned_tracer_budget(84, 0.58, true), 84, "tracers evened by a cut by load: the injectors' pace");
        // The bicycle scene's hottest tile at degree 2: 124,982 sampled steps, within
        // 480 iterations at 44 a worker (the plan's 60 stands); a tile of 1.3 M
        // steps needs 452.
        assert_eq!(tracer_budget_floor(124_982.0), 44);
        assert_eq!(tracer_budget_floor(1_300_000.0), 452);
        assert_eq!(tracer_budget_floor(0.0), 0);
        // The injectors alone spread the dearest one's steps over more iterations.
        assert_eq!(planned_march_budget(89_280, 0.754, (false, false), false), 93, "the 1 M scene");
        assert_eq!(planned_march_budget(44_000, 1.0, (false, false), false), 49, "garden");
        assert_eq!(planned_march_budget(0, 1.0, (false, false), false), 0, "nothing sampled: no limit");
        assert_eq!(planned_march_budget(122_000, 0.58, (true, false), false), 93, "bicycle at degree 0, cut by load");
        assert_eq!(planned_march_budget(122_000, 0.58, (false, false), false), 128);
        // Lean tracers: over 230 (bicycle at degree 2's dearest injector, 125,000 steps).
        assert_eq!(planned_march_budget(125_000, 0.44, (true, true), false), 91, "bicycle at degree 2, cut lean");
        assert_eq!(
            planned_march_budget(44_000, 1.0, (true, false), false),
            49,
            "injectors alone: 150 whatever the cut"
        );
        // A view cut in blocks of 4: 80 and 175 iterations; the shared rule is unchanged.
        assert_eq!(planned_march_budget(20_640, 1.0, (false, false), true), 43, "garden in blocks of 4");
        assert_eq!(planned_march_budget(50_415, 0.79, (true, false), true), 49, "the 1 M scene in blocks of 4");
        assert_eq!(planned_march_budget(89_280, 0.754, (false, false), true), 93);
    }

    #[test]
    fn several_ipus_take_the_fewest_router_levels() {
        let on = |ipus: u32, fanout: Vec<u32>| DeviceOptions { ipus, fanout, ..DeviceOptions::default() };
        let default = DeviceOptions::default().fanout;
        // One IPU keeps the default's levels: 1024 shards 16, 8, 8; 2048 16, 8, 8, 2.
        assert_eq!(on(1, default.clone()).tree_fanouts(11), default);
        let two = on(2, default.clone());
        assert_eq!(two.tree_fanouts(11), vec![16, 8, 16]);
        assert_eq!(two.tree_fanouts(10), vec![16, 8, 8]);
        assert_eq!(two.tree_fanouts(12), vec![16, 16, 16]);
        assert_eq!(two.tree_fanouts(14), vec![16, 8, 8, 16]);
        assert_eq!(two.tree_fanouts(3), vec![8]);
        // Fanouts tuned are the user's.
        assert_eq!(on(2, vec![4]).tree_fanouts(11), vec![4]);
        for depth in 1..=15 {
            let f = two.tree_fanouts(depth);
            assert_eq!(f.iter().map(|x| x.trailing_zeros()).sum::<u32>(), depth, "{f:?}");
            assert_eq!(f.len() as u32, depth.div_ceil(4), "{f:?}");
        }
    }

    /// The paper's worst Bicycle shard (§5.2, about 270 kB) fits a tracer tile with
    /// every buffer at its default, whatever the payload, with hop counters on.
    #[test]
    fn paper_worst_shard_fits_the_default_tracer() {
        let shard = partition::blob_len(4102, 3155, 63_557) as u64;
        for layout in [RayLayout::Half, RayLayout::Mixed, RayLayout::Fp32] {
            let rb = layout.payload_bytes() as u32 + 4;
            let f = tracer_footprint(&DeviceOptions { layout, ..DeviceOptions::default() }, rb, 300);
            assert_eq!(f.framebuffer, 300 * 28);
            assert!(f.tile_bytes(shard) <= partition::MK2_TILE_BYTES, "{layout:?}: {f:?}");
        }
    }

    #[test]
    fn links_sized_to_a_load_scale_with_it_between_the_floor_and_the_defaults() {
        let o = DeviceOptions { size_links: true, side_links: 8, ..DeviceOptions::default() };
        let sized = |rb, peak| {
            let s = tracer_links_for_load(&o, rb, peak);
            (s.link_capacity, s.side_capacity)
        };
        // No tracer load: the floor; the router edges keep their defaults.
        assert_eq!(sized(20, 0.0), (vec![64, 384, 256], 8));
        // A busiest tracer that needs the default buffers' rate, or more: the defaults.
        let full = (256 + 8 * 32) as f64 * SIZING_ITERATIONS;
        assert_eq!(sized(20, full), (HALF_LINK_CAPACITY.to_vec(), 32));
        assert_eq!(sized(20, 10.0 * full), (HALF_LINK_CAPACITY.to_vec(), 32));
        // Half the rate: half the buffers, edges in whole 16-ray steps.
        assert_eq!(sized(20, full / 2.0), (vec![128, 384, 256], 16));
        assert_eq!(sized(20, full / 3.0), (vec![96, 384, 256], 11));
        // Other payloads start from their own (byte-equal) defaults.
        assert_eq!(sized(28, 10.0 * full).0, default_link_capacity(28));
        // Without side links the edges carry the whole rate.
        let none = DeviceOptions { side_links: 0, ..o.clone() };
        assert_eq!(tracer_links_for_load(&none, 20, 256.0 * SIZING_ITERATIONS).link_capacity[0], 256);
        // Floors never exceed what was asked for.
        let small = DeviceOptions { side_capacity: 4, ..o };
        assert_eq!(tracer_links_for_load(&small, 20, 0.0).side_capacity, 4);
    }

    fn router_links(ray_bytes: u32, fanout: u32, child: u32, parent: u32, injectors: u32, inject: u32) -> u32 {
        router_link_bytes(ray_bytes, fanout, child, parent, injectors, inject).unwrap()
    }

    #[test]
    fn auto_sizes_fill_but_fit_the_tile() {
        let o = DeviceOptions::default();
        for rb in [20, 24, 28, 32] {
            for (f, c, p) in [(16, 256, 512), (16, 512, 1024), (4, 1024, 1024), (4, 512, 512)] {
                let q = o.router_queue_capacity(rb, 638_976, router_links(rb, f, c, p, 0, 0));
                let bytes = 2 * (f * link_bytes(c, rb) + link_bytes(p, rb)) + 4 * q * rb;
                assert!(bytes + TILE_RESERVE_BYTES <= 638_976, "ray {rb} B, {f}x{c}+{p}: queue {q}, {bytes} B");
                assert!(rb > 24 || q >= c.max(p), "half and mixed payloads fit queues of a link at least: {q}");
            }
            let e = o.edge_capacity(9);
            let s = o.spill_capacity(rb, 638_976, 2 * link_bytes(e, rb));
            assert!(s >= 16384 && 2 * link_bytes(e, rb) + s * rb + TILE_RESERVE_BYTES <= 638_976);
            // An injector: its lane to the root (a bare header down), as many rays
            // held, eight direct lanes.
            let (inject, direct) = (o.inject_lane_capacity(o.injectors), o.direct_lane_capacity(o.injectors));
            let links = link_bytes(inject, rb)
                + link_bytes(0, rb)
                + inject * rb
                + 8 * (link_bytes(direct, rb) + link_bytes(0, rb));
            let r = o.region_capacity(638_976, 1000, links, 2404);
            assert!(r >= 480 * 1024 && r + links + 2404 + TILE_RESERVE_BYTES <= 638_976, "{r}");
            // A router under the root with a direct lane from every injector still
            // has a queue of several of its parent's buffers.
            let q = o.router_queue_capacity(
                rb,
                638_976,
                router_links(rb, 8, 384 * 20 / rb, 384 * 20 / rb, o.injectors, direct),
            );
            assert!(q >= 6 * 384 * 20 / rb, "ray {rb} B: queue under the root {q}");
            // The root over 8 routers with the default injectors' lanes still has queues
            // of a link buffer, of three with half and mixed payloads (the injector
            // lanes' rays are not scaled to the payload).
            let q = o.router_queue_capacity(
                rb,
                638_976,
                router_links(rb, 8, 384 * 20 / rb, 384 * 20 / rb, o.injectors, inject),
            );
            assert!(q >= 384 * 20 / rb && (rb > 24 || q >= 3 * 384 * 20 / rb), "ray {rb} B: root queue {q}");
            assert!(o.root_has_room(rb, 8, 3, 3, o.injectors), "ray {rb} B: a 1024-shard root takes every injector");
        }
        assert_eq!((o.edge_capacity(0), o.edge_capacity(1), o.edge_capacity(7)), (256, 384, 256));
        // Up to 16 injectors keep whole lanes, up to 32 whole queues; more share
        // those, in multiples of 16, then 8, and beyond 256 lanes of 8 to the
        // root and 4 direct, behind queues of at least 32.
        let lanes = |n: u32| (o.inject_lane_capacity(n), o.direct_lane_capacity(n), o.injector_queue(n));
        assert_eq!(
            (lanes(1), lanes(16), lanes(32), lanes(64), lanes(81), lanes(256), lanes(400), lanes(512)),
            (
                (128, 128, 384),
                (128, 128, 384),
                (64, 64, 384),
                (32, 32, 192),
                (16, 16, 144),
                (8, 8, 48),
                (8, 4, 32),
                (8, 4, 32)
            )
        );
        // Leaves split onto free tiles never make room for more than 32 injectors:
        // 1472 - 1024 tracers - 73 routers - the spill store - 32, two tiles a split.
        assert_eq!((o.free_splits(1024), DeviceOptions { injectors: 8, ..o.clone() }.free_splits(1024)), (171, 183));
        let given = DeviceOptions { inject_capacity: Some(500), direct_capacity: Some(0), ..o.clone() };
        assert_eq!(
            (given.inject_lane_capacity(256), given.direct_lane_capacity(256), given.injector_queue(256)),
            (500, 0, 500)
        );
        let apart = DeviceOptions { injector_queue: Some(64), ..given };
        assert_eq!((apart.inject_lane_capacity(256), apart.injector_queue(256)), (500, 64));
        assert_eq!(default_link_capacity(20), HALF_LINK_CAPACITY.to_vec());
        assert_eq!(default_link_capacity(32), vec![160, 240, 160]);
        assert_eq!("cols:2".parse::<Batch>(), Ok(Batch::Cols(2)));
        assert_eq!("blocks:8".parse::<Batch>().map(|b| b.to_string()), Ok("blocks:8".into()));
        assert!("rows:0".parse::<Batch>().is_err());
        assert!("tiles:8".parse::<Batch>().is_err());
        assert_eq!(Batch::Rows(2).block_size(640, 480), (640, 2));
    }
}
