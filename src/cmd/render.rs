//! `foam-ipu render`: the product — the paper's IPU renderer, on the host runtime
//! here or on an IPU with the SDK.

mod animation;
mod evaluate;
mod hopmaps;
mod views;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::camera::views::{ViewArgs, ViewSet, load_views, numbered};
use crate::camera::{CameraArgs, load_camera};
use crate::cmd::compare::compare_images;
use crate::cmd::device_args::DeviceArgs;
use crate::cmd::outputs::OutputArgs;
use crate::cmd::progress;
use crate::device::{DeviceOptions, DevicePlan, DeviceRenderer};
use crate::imageio::{self, read_image};
use crate::outfiles::OutFiles;
use partition::RayLayout;

#[derive(clap::Args, Debug)]
#[command(
    about = "Render a scene with the IPU design: tracer tiles, router tree, ray injectors and a spill store",
    long_about = "Render a scene with the design of Radiant Foam on the IPU: the scene is cut into \
k-d shards, one per tracer tile; rays are marched on the tile that owns their cell and moved \
between tiles by exchange copies, through a tree of router tiles (by default 16 tracers under each router, 8 \
routers under each above) or across side links between neighbouring shards; the framebuffer lives in \
slices on the tracers. The fused program Repeat(rc){compute; exchange} runs until the device \
reports every pixel finished.\n\n\
With no camera option, SCENE.camera.json next to the scene is used.\n\n\
Examples:\n  foam-ipu render assets/garden.ply -o garden.png\n  \
foam-ipu render scene.ply --camera cam.json --rc 20 --layout fp32 --stats stats.json --compare gpu.png\n  \
foam-ipu render assets/garden.ply --tune side_links=0 --tune fanout=4\n  \
foam-ipu render assets/garden.ply --orbit 24 -o orbit/ --animation orbit.gif\n  \
foam-ipu render scene.ply --colmap DIR --test-views --downsample 4 -o test/ --compare gpu_test/ --stats s.json\n\n\
With several views (--test-views, --all-views, --cameras, --camera-path, --orbit) the device is \
planned for all of them and its graph built once; -o names the output directory, each view \
is written as NAME.png there (--depth, --depth-preview and --opacity then name directories too) \
and --compare names a directory of reference images NAME.png."
)]
pub struct Args {
    /// The scene (scene.ply as the original trainer writes it).
    pub scene: PathBuf,
    #[command(flatten)]
    pub camera: CameraArgs,
    #[command(flatten)]
    pub views: ViewArgs,
    /// Outputs (colour defaults to SCENE-STEM.png; depth needs --layout half, the only
    /// payload that carries depth between tiles).
    #[command(flatten)]
    pub out: OutputArgs,
    #[command(flatten)]
    pub device: DeviceArgs,
    /// Write frame statistics as JSON.
    #[arg(long, value_name = "S.json")]
    pub stats: Option<PathBuf>,
    /// Write per-pixel router/tracer hop maps and a histogram (turns on hop counters).
    #[arg(long, value_name = "DIR")]
    pub hop_maps: Option<PathBuf>,
    /// Print PSNR/SSIM of the colour output against this image (e.g. a GPU render);
    /// with several views, a directory holding NAME.png for every view.
    #[arg(long, value_name = "GPU.png|DIR")]
    pub compare: Option<PathBuf>,
    /// Keep the compiled graph in DIR and load it from there on the next run of the
    /// same scene, options and target (Poplar's Executable::serialize; --backend ipu
    /// in a build with the Poplar SDK only).
    #[arg(long, value_name = "DIR")]
    pub executable_cache: Option<PathBuf>,
    /// With several views: also estimate each view's frame on a Mk2 IPU with bench's
    /// cycle model, from an instrumented rc-1 run of the view (each in a graph of its
    /// own: slow, and counted apart from graph_builds).
    #[arg(long)]
    pub estimate: bool,
    /// With several views: write them as one animation (.gif, or .png as APNG),
    /// depth beside colour when depth is asked for.
    #[arg(long, value_name = "OUT.gif")]
    pub animation: Option<PathBuf>,
}

/// `SCENE.camera.json` beside the scene, used when no camera option is given
/// (`render`, `bench` and `reference`). A scene that cannot be opened is the error,
/// the reader's own (`Problem::Io`): a mistyped scene path otherwise reported the
/// camera missing beside it.
pub fn default_camera(scene: &Path, args: &CameraArgs) -> Result<CameraArgs> {
    std::fs::File::open(scene).map_err(|e| crate::scene::Problem::Io(e).in_file(scene.display().to_string()))?;
    let mut args = args.clone();
    if args.camera.is_none() && args.colmap.is_none() {
        let beside = scene.with_extension("camera.json");
        if beside.exists() {
            args.camera = Some(beside);
        }
    }
    Ok(args)
}

impl Args {
    pub fn device_options(&self) -> Result<DeviceOptions> {
        Ok(DeviceOptions { hops: self.hop_maps.is_some(), ..self.device.options()? })
    }
}

pub fn run(args: Args) -> Result<()> {
    let mut opts = args.device_options()?;
    if args.out.wants_depth() && opts.layout != RayLayout::Half {
        bail!("--depth needs --layout half: the {} payload has no depth field (paper Tab. 1)", opts.layout.name());
    }
    if let Some(dir) = &args.executable_cache {
        if opts.backend != crate::device::Backend::Ipu {
            bail!(
                "--executable-cache {}: the host runtime compiles in memory and stores no executables; it needs --backend ipu",
                dir.display()
            );
        }
        if !dir.is_dir() {
            bail!("--executable-cache {}: not a directory", dir.display());
        }
    }
    let set = load_views(&args.camera, &args.views)?;
    let camera = default_camera(&args.scene, &args.camera)?;
    if !matches!(set, ViewSet::Single) {
        return run_views(&args, opts, set, &camera);
    }
    if args.animation.is_some() || args.estimate {
        bail!(
            "--animation and --estimate need several views (--orbit, --camera-path, --cameras, --test-views or --all-views; bench estimates one)"
        );
    }
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
                bail!(
                    "--compare {}: the image is {}x{}, the render {}x{}",
                    p.display(),
                    img.width,
                    img.height,
                    cam.width,
                    cam.height
                );
            }
            Some(img)
        }
        None => None,
    };
    let mut scene = progress::load_scene(&args.scene)?.scene;
    let shards = args.device.shards_on_ipus(&scene, &mut opts, cam.width, cam.height)?;
    let steps = progress::Steps::new();
    let plan = DevicePlan::for_camera(&scene, shards, &cam, &opts, &steps)
        .with_context(|| format!("planning {} for the device", args.scene.display()));
    steps.finish();
    // The shards carry the SH the tiles need; the frame reads only the scene's cells.
    scene.drop_sh();
    super::heap::release_freed();
    if let Some(note) = plan.as_ref().ok().and_then(|p| p.sh.note.as_deref()) {
        eprintln!("{note}");
    }
    let building = progress::spinner("building the render graph");
    let renderer = DeviceRenderer::with_executable_cache(plan?, args.executable_cache.as_deref())
        .context("building the render graph");
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
            let ours =
                imageio::as_written(imageio::is_npy(&output), w, h, &frame.output.composite(args.out.background()?));
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

/// `render` with several views: one plan and one graph for all of them.
fn run_views(args: &Args, mut opts: DeviceOptions, set: ViewSet, camera: &CameraArgs) -> Result<()> {
    let Some(out_dir) = args.out.output.as_deref() else {
        bail!("several views need -o DIR: the directory their images are written to");
    };
    if args.hop_maps.is_some() {
        bail!("--hop-maps takes one view: leave it out or render the view alone");
    }
    if let Some(p) = &args.animation {
        animation::check_path(p)?;
    }
    let mut files = OutFiles::new();
    files.input(&args.scene)?;
    for p in camera.input_files().iter().chain(&args.views.input_files()) {
        files.input(p)?;
    }
    let has_camera = camera.camera.is_some() || camera.colmap.is_some();
    let base = match set {
        ViewSet::Orbit(_) if has_camera => Some(load_camera(camera)?.0),
        _ => None,
    };
    let scene = progress::load_scene(&args.scene)?.scene;
    let views = match (set, base) {
        (ViewSet::Listed(v), _) => v,
        (ViewSet::Orbit(n), base) => {
            let base = match base {
                Some(b) => b,
                None => {
                    // 4:3 unless both sides are given.
                    let (w, h) = match (args.camera.width, args.camera.height) {
                        (Some(w), Some(h)) => (w, h),
                        (Some(w), None) => (w, ((w as u64 * 3 / 4) as u32).max(1)),
                        (None, Some(h)) => ((h as u64 * 4 / 3).min(u32::MAX as u64) as u32, h),
                        (None, None) => (640, 480),
                    };
                    crate::camera::path::bounds_camera(&scene.positions, w, h)
                        .map_err(|e| anyhow::anyhow!("{}: {e}", args.scene.display()))?
                }
            };
            let bounds = scene
                .bbox()
                .ok_or_else(|| anyhow::anyhow!("{}: the scene has no cells to orbit", args.scene.display()))?;
            let centre = crate::camera::path::centre_of_interest(&base, bounds);
            numbered(crate::camera::path::orbit(&base, centre, n).map_err(anyhow::Error::msg)?)
        }
        (ViewSet::Single, _) => unreachable!("a single view does not come here"),
    };
    let (w, h) = views.first().map_or((0, 0), |v| (v.camera.width, v.camera.height));
    let shards = args.device.shards_on_ipus(&scene, &mut opts, w, h)?;
    let run = views::Run {
        scene_path: &args.scene,
        scene,
        views,
        opts,
        shards,
        out: &args.out,
        out_dir,
        stats: args.stats.as_deref(),
        compare: args.compare.as_deref(),
        animation: args.animation.as_deref(),
        executable_cache: args.executable_cache.as_deref(),
        estimate: args.estimate,
    };
    let refs = views::prepare(&run, &mut files)?;
    views::render(run, &mut files, refs)?;
    files.commit()
}
