//! `foam-ipu render`: the product — the paper's IPU renderer, on the host runtime
//! here or on an IPU with the SDK.

mod hopmaps;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::camera::{CameraArgs, load_camera};
use crate::cmd::compare::compare_images;
use crate::cmd::outputs::OutputArgs;
use crate::imageio::{self, read_image};
use crate::outfiles::OutFiles;
use crate::cmd::progress;
use crate::device::{Backend, Batch, DeviceOptions, DevicePlan, DeviceRenderer};
use partition::RayLayout;

#[derive(clap::Args, Debug)]
#[command(
    about = "Render a scene with the IPU design: tracer tiles, router tree, ray injectors and a spill store",
    long_about = "Render a scene with the design of Radiant Foam on the IPU: the scene is cut into \
k-d shards, one per tracer tile; rays are marched on the tile that owns their cell and moved \
between tiles through a quadtree of router tiles by exchange copies; the framebuffer lives in \
slices on the tracers. The fused program Repeat(rc){compute; exchange} runs until the device \
reports every pixel finished.\n\n\
With no camera option, SCENE.camera.json next to the scene is used.\n\n\
Examples:\n  foam-ipu render assets/garden.ply -o garden.png\n  \
foam-ipu render scene.ply --camera cam.json --rc 20 --layout fp32 --stats stats.json --compare gpu.png"
)]
pub struct Args {
    /// The scene (scene.ply as the original trainer writes it).
    pub scene: PathBuf,
    #[command(flatten)]
    pub camera: CameraArgs,
    /// Outputs (colour defaults to SCENE-STEM.png; depth needs --layout half, the only
    /// payload that carries depth between tiles).
    #[command(flatten)]
    pub out: OutputArgs,
    /// Compute/exchange iterations per host call (the paper's repeat count).
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub rc: u32,
    /// Iterations a frame may take before it is given up with an error.
    #[arg(long, default_value_t = DeviceOptions::default().max_iterations, value_name = "N")]
    pub max_iterations: u32,
    /// Ray payload: half (20 B, default), mixed (24 B) or fp32 (28 B).
    #[arg(long, default_value = "half", value_parser = parse_layout, value_name = "half|mixed|fp32")]
    pub layout: RayLayout,
    /// Scene shards = tracer tiles (a power of two; 1024 is the paper's).
    #[arg(long, default_value_t = 1024, value_name = "N")]
    pub shards: u64,
    /// Where the graph runs.
    #[arg(long, value_enum, default_value = "host")]
    pub backend: Backend,
    /// Primary-ray batches: blocks:N (N×N squares, each injector its own part of the
    /// view, longest sampled paths first) or the paper's rows:N / cols:N lines in scan order.
    #[arg(long, default_value_t = Batch::default(), value_name = "blocks:N|rows:N|cols:N")]
    pub batch: Batch,
    /// Idle iterations after each batch.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub drain: u32,
    /// Write frame statistics as JSON.
    #[arg(long, value_name = "S.json")]
    pub stats: Option<PathBuf>,
    /// Write per-pixel router/tracer hop maps and a histogram (turns on hop counters).
    #[arg(long, value_name = "DIR")]
    pub hop_maps: Option<PathBuf>,
    /// Print PSNR/SSIM of the colour output against this image (e.g. a GPU render).
    #[arg(long, value_name = "GPU.png")]
    pub compare: Option<PathBuf>,
    /// Router children per tree level from the tracers up (powers of two, 2..16;
    /// the last repeats, the top router takes the bits left): 16,8 by default, 4 is
    /// the paper's quadtree.
    #[arg(long, value_delimiter = ',', default_values_t = DeviceOptions::default().fanout, value_name = "F,..", help_heading = "Buffers")]
    pub fanout: Vec<u32>,
    /// Rays per link buffer by tree level: tracer edges, then the edges above each
    /// router level; the last repeats up to the spill store. Default 256,768,384 for
    /// the half payload, the same bytes for the others, with the tracer edges (and
    /// side links) sized down to what a sample of the camera's rays needs.
    #[arg(long, value_delimiter = ',', value_name = "N,..", help_heading = "Buffers")]
    pub link_capacity: Vec<u32>,
    /// Rays a tracer holds while waiting for credit.
    #[arg(long, default_value_t = DeviceOptions::default().tracer_queue, value_name = "N", help_heading = "Buffers")]
    pub tracer_queue: u32,
    /// Side links per tracer: direct edges to the neighbouring shards whose crossings
    /// would cost the most router hops (0 to 16; 0: every ray takes the router tree).
    #[arg(long, default_value_t = DeviceOptions::default().side_links, value_name = "N", help_heading = "Buffers")]
    pub side_links: u32,
    /// Most copies of neighbouring shards each tracer holds beside its own, to march
    /// rays on through without a trip through the routers; chosen from a sample of
    /// the camera's rays, as many as fit the tile (0: none).
    #[arg(long, default_value_t = DeviceOptions::default().copies, value_name = "N", help_heading = "Buffers")]
    pub copies: u32,
    /// Rays per side-link buffer (each direction). Default 32, sized down with the
    /// tracer edges when --link-capacity is not given either.
    #[arg(long, value_name = "N", help_heading = "Buffers")]
    pub side_capacity: Option<u32>,
    /// Rays per router queue (up and down); default: as many as fit the router tile.
    #[arg(long, value_name = "N", help_heading = "Buffers")]
    pub router_queue: Option<u32>,
    /// Rays the spill store holds (also the cap on rays in flight); default:
    /// as many as fit the spill tile.
    #[arg(long, value_name = "N", help_heading = "Buffers")]
    pub spill: Option<u32>,
    /// KiB of each injector tile for copies of the shards a coarse host pass over its
    /// rays finds them crossing first, which it marches them through (at least the
    /// largest shard); default: all its tile has left.
    #[arg(long, value_name = "KIB")]
    pub region_kib: Option<u32>,
    /// Injector tiles emitting primary rays, each on a root lane of its own (1 to 8).
    #[arg(long, default_value_t = DeviceOptions::default().injectors, value_name = "N", help_heading = "Buffers")]
    pub injectors: u32,
    /// Rays per injector-lane buffer (what one injector can emit per iteration).
    #[arg(long, default_value_t = DeviceOptions::default().inject_capacity, value_name = "N", help_heading = "Buffers")]
    pub inject_capacity: u32,
    /// Rays per buffer of each injector's direct lane to each router under the root,
    /// which carry primary rays past the root (0: none, all cross the root).
    #[arg(long, default_value_t = DeviceOptions::default().direct_capacity, value_name = "N", help_heading = "Buffers")]
    pub direct_capacity: u32,
    /// Finished rays each tracer keeps where they finish instead of sending them to
    /// their pixel's home tracer (split over its six workers; 0: all go home).
    #[arg(long, default_value_t = DeviceOptions::default().results, value_name = "N")]
    pub results: u32,
    /// Tiles of the target (1472 per Mk2 IPU).
    #[arg(long, default_value_t = DeviceOptions::default().tiles, value_name = "N", help_heading = "Buffers")]
    pub tiles: u32,
}

pub fn parse_layout(s: &str) -> Result<RayLayout, String> {
    match s {
        "half" => Ok(RayLayout::Half),
        "mixed" => Ok(RayLayout::Mixed),
        "fp32" => Ok(RayLayout::Fp32),
        _ => Err(format!("unknown layout '{s}' (half, mixed or fp32)")),
    }
}

/// `SCENE.camera.json` beside the scene, used when no camera option is given.
pub fn default_camera(scene: &Path, args: &CameraArgs) -> CameraArgs {
    let mut args = args.clone();
    if args.camera.is_none() && args.colmap.is_none() {
        let beside = scene.with_extension("camera.json");
        if beside.exists() {
            args.camera = Some(beside);
        }
    }
    args
}

impl Args {
    pub fn device_options(&self) -> DeviceOptions {
        DeviceOptions {
            backend: self.backend,
            layout: self.layout,
            hops: self.hop_maps.is_some(),
            rc: self.rc,
            max_iterations: self.max_iterations,
            batch: self.batch,
            drain_iters: self.drain,
            fanout: self.fanout.clone(),
            link_capacity: self.link_capacity.clone(),
            tracer_queue: self.tracer_queue,
            side_links: self.side_links,
            copies: self.copies,
            side_capacity: self.side_capacity.unwrap_or(DeviceOptions::default().side_capacity),
            size_links: self.side_capacity.is_none(),
            router_queue: self.router_queue,
            spill: self.spill,
            region_bytes: self.region_kib.map(|k| k.saturating_mul(1024)),
            injectors: self.injectors,
            inject_capacity: self.inject_capacity,
            direct_capacity: self.direct_capacity,
            results: self.results,
            tiles: self.tiles,
            ..DeviceOptions::default()
        }
    }
}

pub fn run(args: Args) -> Result<()> {
    args.device_options().check_bounds().map_err(anyhow::Error::msg)?;
    if args.out.wants_depth() && args.layout != RayLayout::Half {
        bail!("--depth needs --layout half: the {} payload has no depth field (paper Tab. 1)", args.layout.name());
    }
    let camera = default_camera(&args.scene, &args.camera);
    let output = args.out.output.clone().unwrap_or_else(|| {
        PathBuf::from(format!("{}.png", args.scene.file_stem().and_then(|s| s.to_str()).unwrap_or("render")))
    });
    let mut files = OutFiles::new();
    files.input(&args.scene)?;
    for p in camera.input_files().iter().chain(&args.compare) {
        files.input(p)?;
    }
    args.out.declare(&mut files, Some(&output))?;
    if let Some(p) = &args.stats {
        files.output(p)?;
    }
    if let Some(dir) = &args.hop_maps {
        files.dir(dir)?;
        for p in hopmaps::files(dir) {
            files.output(&p)?;
        }
    }
    let (cam, _) = load_camera(&camera)?;
    let gpu = match &args.compare {
        Some(p) => {
            let img = read_image(p)?;
            if (img.width, img.height) != (cam.width as usize, cam.height as usize) {
                bail!("--compare {}: the image is {}x{}, the render {}x{}", p.display(), img.width, img.height, cam.width, cam.height);
            }
            Some(img)
        }
        None => None,
    };
    let scene = progress::load_scene(&args.scene)?.scene;
    let opts = args.device_options();
    let steps = progress::Steps::new();
    let plan = DevicePlan::for_camera(&scene, args.shards, &cam, &opts, &steps)
        .with_context(|| format!("planning {} for the device", args.scene.display()));
    steps.finish();
    let building = progress::spinner("building the render graph");
    let renderer = DeviceRenderer::new(plan?).context("building the render graph");
    building.finish_and_clear();
    let mut renderer = renderer?;
    let bar = progress::bar(cam.width as u64 * cam.height as u64, "rays");
    let frame = renderer.render(&scene, &cam, &mut |done, _| bar.set_position(done)).context("rendering")?;
    bar.finish_and_clear();

    args.out.write(&mut files, &frame.output, Some(&output))?;
    if let Some(dir) = &args.hop_maps {
        hopmaps::write(dir, &frame, &mut files)?;
    }
    if let Some(p) = &args.stats {
        let json = serde_json::to_string_pretty(&frame.stats)? + "\n";
        files.write(p, |f| f.write_all(json.as_bytes()))?;
    }
    let compared = match (&args.compare, &gpu) {
        (Some(path), Some(gpu)) => {
            let (w, h) = (frame.output.width, frame.output.height);
            let ours = imageio::as_written(imageio::is_npy(&output), w, h, &frame.output.composite(args.out.background()?));
            Some((path, compare_images(&ours, gpu, &output, path, 0.0)?))
        }
        _ => None,
    };
    files.commit()?;
    println!("{}", frame.stats.summary_line());
    if let Some((gpu, r)) = compared {
        let ssim = r.ssim.map_or("n/a (image under 7 px)".to_string(), |v| format!("{v:.5}"));
        println!("compare with {}: PSNR {:.2} dB, SSIM {ssim}", gpu.display(), r.psnr);
    }
    Ok(())
}
