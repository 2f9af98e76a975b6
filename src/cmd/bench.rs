//! `foam-ipu bench`: the device renderer against the reference in one run — iterations,
//! hops, drops, router traffic per tree level, buffer peaks, PSNR, both wall times and
//! their ratio — plus a cycle estimate for a real Mk2 IPU; `--sweep` reruns it over rc
//! or batch settings (paper Fig. 13, Tab. 3/5/6) as tables, JSON and plots.

pub mod costs;
pub mod cycles;
mod plots;
pub mod profile;
mod report;
mod sweep;

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use serde::Serialize;

use crate::camera::{Camera, CameraArgs, load_camera};
use crate::cmd::device_args::DeviceArgs;
use crate::cmd::progress;
use crate::cmd::render::default_camera;
use crate::device::{Batch, DeviceOptions, DevicePlan, DeviceRenderer, FrameStats, PlanTimes};
use crate::metrics::psnr;
use crate::outfiles::OutFiles;
use crate::reference::{SiteIndex, TraceOptions, Tracer, render_with};
use crate::scene::Scene;
use cycles::Estimate;
use profile::Profile;
pub use sweep::Sweep;

#[derive(clap::Args, Debug)]
#[command(
    about = "Measure the device renderer against the reference: iterations, hops, traffic, time, PSNR",
    long_about = "Render one frame with the device design (host runtime) and with the reference renderer \
(at the SH degree the device renders) in the same run, and print iterations, host calls, hops, drops, router traffic per tree \
level, peak buffer occupancy, PSNR, both wall times (medians over --frames) and their ratio, and an \
estimated frame time on a Mk2 IPU from a cycle model fed by an instrumented rc-1 run.\n\n\
--sweep reruns the device over repeat counts or batch settings (the graph is rebuilt per value; \
only frames are timed) and prints a table per sweep; with --out it also writes bench.json and plots.\n\n\
With no camera option, SCENE.camera.json next to the scene is used.\n\n\
Examples:\n  foam-ipu bench assets/garden.ply\n  \
foam-ipu bench assets/garden.ply --sweep rc=1,5,10,20,40 --sweep 'batch=rows:1,2,3|cols:1,2,4' --out bench/"
)]
pub struct Args {
    /// The scene (scene.ply as the original trainer writes it).
    pub scene: PathBuf,
    #[command(flatten)]
    pub camera: CameraArgs,
    #[command(flatten)]
    pub device: DeviceArgs,
    /// Timed frames per configuration (device and reference); medians are reported.
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub frames: u32,
    /// Print the results as JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Sweep a parameter: rc=1,5,10,20,40 or batch=rows:1,2,3|cols:1,2,4 (repeatable).
    #[arg(long, value_name = "PARAM=VALUES")]
    pub sweep: Vec<Sweep>,
    /// Write bench.json and the sweep plots (PNG) here.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Skip the instrumented run and the IPU cycle estimate.
    #[arg(long)]
    pub no_estimate: bool,
    /// Also run the paper's configuration (quadtree routers, rows:1, one injector, no
    /// direct lanes, side links, shard copies, replicas or result stores, 256-ray links) on the
    /// same scene and camera, and report it beside this run as `paper`.
    #[arg(long, conflicts_with = "sweep")]
    pub compare_paper: bool,
}

/// Most timed frames per configuration.
pub const MAX_FRAMES: u32 = 1000;

/// The report's file in `--out DIR`, beside the sweep plots.
const BENCH_JSON: &str = "bench.json";

/// One device configuration, measured.
#[derive(Clone, Debug, Serialize)]
pub struct Point {
    pub rc: u32,
    pub batch: String,
    /// Rays per link buffer by tree level (tracer edges first) and per side-link
    /// buffer, as planned, and whether they were sized to the camera.
    pub link_capacity: Vec<u32>,
    pub side_capacity: u32,
    /// Side links planned, both directions counted once (tracer pairs).
    pub side_links: u64,
    pub links_sized_to_camera: bool,
    /// Seconds to cut, pack and plan (see [`PlanTimes`]), and to build and compile
    /// the graph.
    pub plan_times: PlanTimes,
    pub graph_s: f64,
    /// Shard copies planned on all tracers together.
    pub shard_copies: u64,
    /// Replica tiles of hot shards, the shards they replicate, and how many of those
    /// tiles hang on lanes of their tracer's router (the rest under routers of their own).
    pub replica_tiles: u64,
    pub replicated_shards: u64,
    pub replicas_on_lanes: u64,
    /// Where the plan cut the scene again by the camera's load, how full (percent
    /// of a tile's room) the shards nobody looks at may grow; null: cut by bytes.
    pub load_cut: Option<u32>,
    /// Direct lanes from the injectors to the routers under the root, and rays per
    /// buffer of each; the lanes a lane from every injector to every router would
    /// make, and the share of an injector's sampled rays that keeps one (percent).
    pub direct_lanes: u64,
    pub direct_capacity: u32,
    pub direct_lanes_every: u64,
    pub direct_share: u32,
    /// Injector tiles planned, and the most asked for (`--tune injectors`): the plan
    /// takes the most the tiles have room for whose lanes leave the root room for
    /// its queues; rays per buffer of each one's lane to the root.
    pub injectors: u32,
    pub injectors_asked: u32,
    /// The share of the sampled cell steps the injectors march in their regions,
    /// by which the plan gave them free tiles.
    pub injector_share: f64,
    /// Cell steps an injector's worker marches per iteration (0: no limit), and
    /// whether the plan chose it from the camera's sample.
    pub march_budget: u32,
    pub march_budget_planned: bool,
    /// Cell steps a tracer's worker marches per iteration (0: no limit), and whether
    /// the plan chose it.
    pub tracer_budget: u32,
    pub tracer_budget_planned: bool,
    pub inject_capacity: u32,
    /// Rays each injector's queue holds (what it may have emitted and not dealt yet).
    pub injector_queue: u32,
    /// The step's schedule (`--tune schedule`'s number) as the plan chose it or as
    /// asked, and whether asked.
    pub schedule: u32,
    pub schedule_asked: bool,
    /// Statistics of the last timed frame (`wall_s` of that frame).
    pub stats: FrameStats,
    /// Median device frame time (host runtime) and every timed frame.
    pub device_s: f64,
    pub device_frames_s: Vec<f64>,
    pub reference_s: f64,
    /// device_s / reference_s (the issue-5 goal is ≤ 3).
    pub time_ratio: f64,
    /// PSNR of the device image against the reference (null when identical).
    pub psnr_db: f64,
    pub estimate: Option<Estimate>,
    /// Each IPU's tiles, bytes and link-buffer bytes to and from the others.
    pub per_ipu: Vec<crate::device::ipus::IpuLoad>,
}

#[derive(Debug, Serialize)]
pub struct SweepReport {
    pub parameter: String,
    pub points: Vec<Point>,
}

#[derive(Debug, Serialize)]
pub struct Report {
    pub scene: String,
    pub cells: usize,
    pub mean_neighbours: f64,
    pub camera: String,
    pub width: u32,
    pub height: u32,
    /// Shards of all IPUs, and the IPUs.
    pub shards: u64,
    pub ipus: u32,
    pub layout: String,
    /// SH degree the tracers evaluate, and the reference renders (0: DC only).
    pub sh_degree: u8,
    /// The configuration every run uses unless a sweep varies it.
    pub rc: u32,
    pub batch: String,
    pub drain: u32,
    pub frames: u32,
    /// Threads of the host runtime and of the reference (both use the whole machine).
    pub threads: usize,
    /// Seconds to read and validate the scene.
    pub read_s: f64,
    /// Bytes of the scene file.
    pub file_bytes: u64,
    /// The process's peak resident memory at the end of the run (Linux; null
    /// elsewhere).
    pub host_peak_bytes: Option<u64>,
    pub reference_s: f64,
    pub reference_frames_s: Vec<f64>,
    pub run: Option<Point>,
    /// The paper's configuration (`--compare-paper`), same scene, camera, layout, rc
    /// and frames; the same shards where `--shards` is given, else 1024 an IPU.
    pub paper: Option<Point>,
    pub sweeps: Vec<SweepReport>,
}

struct Bench<'a> {
    args: &'a Args,
    /// The options every run uses, with rc and batch set per run.
    options: DeviceOptions,
    scene: &'a Scene,
    cam: Camera,
    reference: Vec<f64>,
    reference_s: f64,
    /// Profiles by configuration (at rc 1): rc does not change what an iteration
    /// does, only how often the host looks, so one rc-1 profile serves every rc.
    profiles: Vec<(String, Profile)>,
    /// Shards of all IPUs.
    shards: u64,
}

/// The process's peak resident set (VmHWM), where Linux's /proc tells it.
fn peak_resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kib: u64 =
        status.lines().find_map(|l| l.strip_prefix("VmHWM:"))?.trim().trim_end_matches("kB").trim().parse().ok()?;
    Some(kib * 1024)
}

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    s[s.len() / 2]
}

fn composite(out: &crate::reference::RenderOutput) -> Vec<f64> {
    out.composite([1.0; 3]).into_iter().map(f64::from).collect()
}

/// The paper's configuration (§5, Tab. 3) on top of `base` (its layout, rc and limits):
/// a quadtree of routers, primary rays in scan-order rows one per batch, one ray
/// generator on the root, no direct lanes, side links, shard copies, replicas,
/// result stores or cut by load, 256 rays per link buffer, and rc iterations every
/// host call (the loop does not end with the frame). The generator's lane to the root is
/// its queue too, as one injector's was before the lanes were narrowed.
pub fn paper_options(base: &DeviceOptions) -> DeviceOptions {
    DeviceOptions {
        fanout: vec![4],
        batch: Batch::Rows(1),
        injectors: 1,
        inject_capacity: Some(crate::device::options::INJECT_CAPACITY),
        direct_capacity: Some(0),
        side_links: 0,
        copies: 0,
        replicas: 0,
        results: 0,
        load_cut: Some(0),
        link_capacity: vec![256],
        ends_on_device: false,
        ..base.clone()
    }
}

impl Bench<'_> {
    fn options(&self, rc: u32, batch: Batch) -> DeviceOptions {
        DeviceOptions { rc, batch, ..self.options.clone() }
    }

    fn plan(&self, shards: u64, o: &DeviceOptions) -> Result<DevicePlan> {
        let steps = progress::Steps::new();
        let plan = DevicePlan::for_camera(self.scene, shards, &self.cam, o, &steps)
            .with_context(|| format!("planning {} for the device", self.args.scene.display()));
        steps.finish();
        super::heap::release_freed();
        plan
    }

    fn build(&self, plan: DevicePlan, what: &str) -> Result<DeviceRenderer> {
        let building = progress::spinner(format!("building the render graph ({what})"));
        let renderer = DeviceRenderer::new(plan).with_context(|| format!("building the render graph ({what})"));
        building.finish_and_clear();
        renderer
    }

    fn profile(&mut self, shards: u64, o: &DeviceOptions) -> Result<&Profile> {
        let o = DeviceOptions { rc: 1, ..o.clone() };
        let key = format!("{shards} {o:?}");
        if let Some(i) = self.profiles.iter().position(|(k, _)| *k == key) {
            return Ok(&self.profiles[i].1);
        }
        let batch = o.batch;
        let plan = self.plan(shards, &o)?;
        let spinner = progress::spinner(format!("instrumented rc-1 run with batch {batch} for the IPU estimate"));
        let p = profile::profile(plan, self.scene, &self.cam)
            .with_context(|| format!("instrumented rc-1 run with batch {batch}"));
        spinner.finish_and_clear();
        let p = p?;
        self.profiles.push((key, p));
        Ok(&self.profiles.last().expect("just pushed").1)
    }

    fn measure(&mut self, rc: u32, batch: Batch) -> Result<Point> {
        self.measure_options(self.shards, &self.options(rc, batch))
    }

    fn measure_options(&mut self, shards: u64, o: &DeviceOptions) -> Result<Point> {
        let (rc, batch) = (o.rc, o.batch);
        let what = format!("rc {rc}, batch {batch}");
        let links_sized_to_camera = o.sizes_links_to_camera();
        let plan = self.plan(shards, o)?;
        let (link_capacity, side_capacity) = (plan.options.link_capacity.clone(), plan.options.side_capacity);
        let side_links = plan.side_links();
        let direct_lanes = plan.tree.direct_lanes().iter().map(|l| l.len() as u64).sum::<u64>();
        let direct_lanes_every = (plan.tree.direct_lanes().len() * plan.tree.direct_targets().len()) as u64;
        let direct_share = plan.options.direct_share;
        let injectors = plan.tree.injectors().len() as u32;
        let march_budget = plan.march_budget();
        let tracer_budget = plan.tracer_budget();
        let injector_share = plan.injector_share();
        let direct_capacity = if direct_lanes > 0 { plan.options.direct_lane_capacity(injectors) } else { 0 };
        let inject_capacity = plan.options.inject_lane_capacity(injectors);
        let injector_queue = plan.options.injector_queue(injectors);
        let shard_copies = plan.copies.iter().map(|c| c.len() as u64).sum();
        let replicas = plan.tree.replicas();
        let replica_tiles = replicas.len() as u64;
        let mut replicated: Vec<usize> = replicas.iter().map(|&(_, s)| s).collect();
        replicated.dedup();
        let replicated_shards = replicated.len() as u64;
        let replicas_on_lanes = replicas.iter().filter(|&&(n, _)| plan.tree.on_router_lanes(n)).count() as u64;
        let load_cut = plan.load_cut;
        let schedule = plan.options.schedule.unwrap_or_default() as u32;
        let plan_times = plan.times;
        let per_ipu = crate::device::ipus::per_ipu(&plan)?;
        let mut renderer = self.build(plan, &what)?;
        let mut times = Vec::new();
        let mut last = None;
        for k in 0..self.args.frames {
            let bar = progress::bar(
                self.cam.width as u64 * self.cam.height as u64,
                &format!("frame {}/{} rays", k + 1, self.args.frames),
            );
            let f = renderer
                .render(self.scene, &self.cam, &mut |done, _| bar.set_position(done))
                .with_context(|| format!("rendering ({what})"));
            bar.finish_and_clear();
            let f = f?;
            times.push(f.stats.wall_s);
            last = Some(f);
        }
        drop(renderer);
        let frame = last.expect("at least one frame");
        let device_s = median(&times);
        let estimate = if self.args.no_estimate { None } else { Some(cycles::estimate(self.profile(shards, o)?, rc)) };
        Ok(Point {
            rc,
            batch: batch.to_string(),
            link_capacity,
            side_capacity,
            side_links,
            links_sized_to_camera,
            plan_times,
            graph_s: frame.stats.setup_s,
            shard_copies,
            replica_tiles,
            replicated_shards,
            replicas_on_lanes,
            load_cut,
            direct_lanes,
            direct_capacity,
            direct_lanes_every,
            direct_share,
            injectors,
            injectors_asked: o.injectors,
            injector_share,
            march_budget,
            march_budget_planned: o.march_budget.is_none(),
            tracer_budget,
            tracer_budget_planned: o.tracer_budget.is_none(),
            inject_capacity,
            injector_queue,
            schedule,
            schedule_asked: o.schedule.is_some(),
            psnr_db: psnr(&composite(&frame.output), &self.reference),
            stats: frame.stats,
            device_s,
            device_frames_s: times,
            reference_s: self.reference_s,
            time_ratio: device_s / self.reference_s,
            estimate,
            per_ipu,
        })
    }
}

pub fn run(args: Args) -> Result<()> {
    let swept_rc = args.sweep.iter().flat_map(|s| match s {
        Sweep::Rc(values) => values.clone(),
        Sweep::Batch(_) => Vec::new(),
    });
    let mut options = args.device.options()?;
    for rc in swept_rc {
        DeviceOptions { rc, ..options.clone() }.check_bounds().map_err(anyhow::Error::msg)?;
    }
    if args.frames == 0 {
        bail!("--frames 0: at least one frame must be timed");
    }
    if args.frames > MAX_FRAMES {
        bail!("--frames {}: time at most {MAX_FRAMES} frames per configuration", args.frames);
    }
    let camera = default_camera(&args.scene, &args.camera)?;
    let mut files = OutFiles::new();
    files.input(&args.scene)?;
    for p in camera.input_files() {
        files.input(&p)?;
    }
    if let Some(dir) = &args.out {
        files.dir(dir)?;
        files.output(&dir.join(BENCH_JSON))?;
        let mut names: Vec<&str> = args.sweep.iter().map(Sweep::name).collect();
        names.dedup();
        for name in names {
            files.output(&plots::path(dir, name))?;
        }
    }
    let (cam, cam_label) = load_camera(&camera)?;
    let t_read = Instant::now();
    let loaded = progress::load_scene(&args.scene)?;
    let (read_s, file_bytes, scene) = (t_read.elapsed().as_secs_f64(), loaded.file_bytes, loaded.scene);
    let index = SiteIndex::new(&scene).context("the scene has no sites")?;
    let start = index.nearest(cam.position.to_array());
    // The SH degree is chosen once (auto: the highest that fits), so that every
    // configuration renders it and the reference is rendered at it.
    let (shards, sh) = args
        .device
        .resolve_ipus(&scene, &mut options, cam.width, cam.height)
        .with_context(|| format!("planning {} for the device", args.scene.display()))?;
    if let Some(note) = &sh.note {
        eprintln!("{note}");
    }
    options.sh_degree = Some(sh.degree);
    let opts = TraceOptions { sh_degree: sh.degree, ..TraceOptions::default() };
    let tracer = Tracer::new(&scene);
    let mut ref_times = Vec::new();
    let mut reference = None;
    for k in 0..args.frames {
        let spinner = progress::spinner(format!("reference frame {}/{}", k + 1, args.frames));
        let t = Instant::now();
        let out = render_with(&tracer, &cam, start, &opts);
        ref_times.push(t.elapsed().as_secs_f64());
        spinner.finish_and_clear();
        reference = Some(out);
    }
    let reference = composite(&reference.expect("at least one frame"));
    let mean_degree = scene.adjacency.len() as f64 / scene.len().max(1) as f64;
    let mut bench = Bench {
        args: &args,
        options,
        scene: &scene,
        cam,
        reference,
        reference_s: median(&ref_times),
        profiles: Vec::new(),
        shards,
    };

    let mut report = Report {
        scene: args.scene.display().to_string(),
        cells: scene.len(),
        mean_neighbours: mean_degree,
        camera: cam_label,
        width: cam.width,
        height: cam.height,
        shards,
        ipus: bench.options.ipus,
        layout: args.device.layout.name().into(),
        sh_degree: sh.degree,
        rc: args.device.rc,
        batch: bench.options.batch.to_string(),
        drain: bench.options.drain_iters,
        frames: args.frames,
        threads: rayon::current_num_threads(),
        read_s,
        file_bytes,
        host_peak_bytes: None,
        reference_s: bench.reference_s,
        reference_frames_s: ref_times,
        run: None,
        paper: None,
        sweeps: Vec::new(),
    };
    if args.sweep.is_empty() {
        report.run = Some(bench.measure(args.device.rc, bench.options.batch)?);
    }
    if args.compare_paper {
        let base = bench.options(args.device.rc, bench.options.batch);
        // The paper's 1024 shards an IPU, unless --shards says otherwise.
        let shards =
            if args.device.shards.0.is_none() { crate::device::plan::SHARDS * base.ipus as u64 } else { bench.shards };
        report.paper = Some(bench.measure_options(shards, &paper_options(&base))?);
    }
    for s in &args.sweep {
        let points = match s {
            Sweep::Rc(values) => {
                values.iter().map(|&rc| bench.measure(rc, bench.options.batch)).collect::<Result<Vec<_>>>()?
            }
            Sweep::Batch(values) => {
                values.iter().map(|&b| bench.measure(args.device.rc, b)).collect::<Result<Vec<_>>>()?
            }
        };
        report.sweeps.push(SweepReport { parameter: s.name().into(), points });
    }

    report.host_peak_bytes = peak_resident_bytes();
    let json = serde_json::to_string_pretty(&report)? + "\n";
    if args.json {
        print!("{json}");
    } else {
        print!("{}", report::text(&report));
    }
    if let Some(dir) = &args.out {
        files.write(&dir.join(BENCH_JSON), |f| f.write_all(json.as_bytes()))?;
        for s in &report.sweeps {
            plots::write(dir, s, &mut files)?;
        }
    }
    files.commit()
}
