//! `foam-ipu reference`: the unified-memory reference renderer (the ground truth).

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result, bail};

use crate::camera::{CameraArgs, load_camera};
use crate::cmd::outputs::OutputArgs;
use crate::cmd::render::default_camera;
use crate::outfiles::OutFiles;
use crate::reference::{SiteIndex, TraceOptions, Tracer, check_options, render_with};

#[derive(clap::Args, Debug)]
#[command(
    about = "Render a scene on the host with the original renderer's semantics (the ground truth)",
    long_about = "Render a scene on the host with the original CUDA renderer's semantics, in f32: \
start cell = nearest site to the camera, exit face = nearest neighbour plane ahead, \
alpha = 1 − exp(−σδ), stop at T ≤ 0.001 or after 1024 cells, depth at the 50% transmittance \
quantile, composited on a white background as the original's test renders.\n\n\
Outputs ending in .npy are written as float32 NumPy arrays (colour H×W×3 composited and \
clipped, opacity H×W, depth H×W with −1 where the quantile is never reached). PNG colour and \
opacity are 8-bit (clip, then truncate v·255, as the original); a PNG depth is 16-bit grey \
with the scale in D.png.json (depth = value·scale, 0 = none).\n\n\
With no camera option, SCENE.camera.json next to the scene is used.\n\n\
Examples:\n  foam-ipu reference scene.ply --camera cam.json -o out.png --depth d.png\n  \
foam-ipu reference scene.ply --colmap garden --view 0 --downsample 4 -o test0.png\n  \
foam-ipu reference scene.ply --camera cam.json --bench 5"
)]
pub struct Args {
    /// The scene (scene.ply as the original trainer writes it).
    pub scene: PathBuf,
    #[command(flatten)]
    pub camera: CameraArgs,
    /// Outputs; colour (-o) is required unless --bench is given.
    #[command(flatten)]
    pub out: OutputArgs,
    /// SH degree for colour, 0..=3, at most the scene's (default: the scene's). 0 = DC only,
    /// what the device renderer computes.
    #[arg(long, value_name = "0..3")]
    pub sh_degree: Option<u8>,
    /// Distance along the ray where compositing starts (the original starts at 0).
    #[arg(long, default_value_t = 0.0, value_name = "T", allow_negative_numbers = true)]
    pub t_min: f32,
    /// Stop a ray once its transmittance is ≤ this (original default 0.001; its benchmark 0.05).
    #[arg(long, default_value_t = 0.001, value_name = "T")]
    pub weight_threshold: f32,
    /// Stop a ray after this many cells.
    #[arg(long, default_value_t = 1024, value_name = "N")]
    pub max_steps: u32,
    /// Render N timed frames after one warm-up and print rays/s and cell-steps/s.
    #[arg(long, value_name = "N")]
    pub bench: Option<u32>,
}

pub fn run(args: Args) -> Result<()> {
    args.out.background()?;
    if args.out.output.is_none() && args.bench.is_none() {
        bail!("no output: pass -o OUT.png (or --bench N to time renders only)");
    }
    if args.sh_degree.is_some_and(|d| d > 3) {
        bail!("--sh-degree {} is not in 0..=3", args.sh_degree.unwrap());
    }
    if let Some(n) = args.bench.filter(|n| !(1..=MAX_BENCH_FRAMES).contains(n)) {
        bail!("--bench {n}: time 1 to {MAX_BENCH_FRAMES} frames");
    }
    let camera = default_camera(&args.scene, &args.camera)?;
    let mut files = OutFiles::new();
    files.input(&args.scene)?;
    for p in camera.input_files() {
        files.input(&p)?;
    }
    args.out.declare(&mut files, args.out.output.as_deref())?;
    let (cam, cam_label) = load_camera(&camera)?;
    check_image_size(cam.width, cam.height)?;
    let t = Instant::now();
    let scene = crate::scene::read_scene(&args.scene)?;
    let load_s = t.elapsed().as_secs_f64();
    let opts = TraceOptions {
        sh_degree: args.sh_degree.unwrap_or(scene.sh_degree),
        t_min: args.t_min,
        weight_threshold: args.weight_threshold,
        max_steps: args.max_steps,
        ..TraceOptions::default()
    };
    check_options(&scene, &opts).with_context(|| args.scene.display().to_string())?;
    let t = Instant::now();
    let index = SiteIndex::new(&scene).context("the scene has no sites")?;
    let start = index.nearest(cam.position.to_array());
    let index_s = t.elapsed().as_secs_f64();

    let tracer = Tracer::new(&scene);
    let out = render_with(&tracer, &cam, start, &opts);
    if let Some(n) = args.bench {
        bench(&tracer, &cam, start, &opts, n, load_s, index_s, &cam_label);
    }
    args.out.write(&mut files, &out, args.out.output.as_deref())?;
    files.commit()
}

/// Most frames `--bench` times.
pub const MAX_BENCH_FRAMES: u32 = 1000;

/// Largest image side and pixel count the reference renders: its frame holds about
/// 40 bytes per pixel (planes, composite, encoded file), 1.3 GB at the limit.
pub const MAX_SIDE: u32 = 16384;
pub const MAX_PIXELS: u64 = 1 << 25;

fn check_image_size(width: u32, height: u32) -> Result<()> {
    let pixels = width as u64 * height as u64;
    if width > MAX_SIDE || height > MAX_SIDE || pixels > MAX_PIXELS {
        bail!(
            "image {width}x{height} is too large for the reference renderer (at most {MAX_SIDE} per side and {MAX_PIXELS} pixels)"
        );
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn bench(
    tracer: &Tracer,
    cam: &crate::camera::Camera,
    start: u32,
    opts: &TraceOptions,
    n: u32,
    load_s: f64,
    index_s: f64,
    label: &str,
) {
    let rays = cam.width as f64 * cam.height as f64;
    let mut times = Vec::with_capacity(n as usize);
    let mut steps = 0;
    let mut cpu = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let c = process_cpu_seconds();
        let t = Instant::now();
        let out = render_with(tracer, cam, start, opts);
        times.push(t.elapsed().as_secs_f64());
        if let (Some(a), Some(b)) = (c, process_cpu_seconds()) {
            cpu.push(b - a);
        }
        steps = out.total_steps();
    }
    let scene = tracer.scene;
    times.sort_by(f64::total_cmp);
    let med = times[times.len() / 2];
    println!(
        "scene: {} cells, {} adjacency entries, SH degree {} (rendering degree {})",
        scene.len(),
        scene.adjacency.len(),
        scene.sh_degree,
        opts.sh_degree
    );
    println!("camera: {label}, {}x{}, start cell {start}", cam.width, cam.height);
    println!("threads: {}", rayon::current_num_threads());
    println!("load: {load_s:.3} s, nearest-site index: {index_s:.3} s");
    println!("frames: {n}, median {:.4} s (min {:.4} s, max {:.4} s)", med, times[0], times[times.len() - 1]);
    println!("cell-steps per frame: {steps} ({:.1} per ray)", steps as f64 / rays);
    println!("rays/s: {:.3e}", rays / med);
    println!("cell-steps/s: {:.3e}", steps as f64 / med);
    // CPU time makes the number comparable on a machine shared with other work.
    if !cpu.is_empty() {
        cpu.sort_by(f64::total_cmp);
        let c = cpu[cpu.len() / 2];
        println!("cpu per frame: median {c:.3} s; cell-steps per cpu-second: {:.3e}", steps as f64 / c);
    }
}

/// User + system CPU time of this process (all threads), from /proc; None elsewhere.
fn process_cpu_seconds() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/stat").ok()?;
    let f: Vec<&str> = s.get(s.rfind(')')? + 2..)?.split_whitespace().collect();
    let ticks = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}
