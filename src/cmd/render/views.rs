//! `render` with many views: one plan for all of them, one graph, one frame per
//! view, each written into the output directory as `<name>.png`.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::Serialize;

use super::evaluate::{self, Scores};
use crate::camera::json::{IntrinsicsJson, camera_to_json};
use crate::camera::views::View;
use crate::cmd::outputs::OutputArgs;
use crate::cmd::progress;
use crate::device::{DeviceOptions, DevicePlan, DeviceRenderer};
use crate::imageio::{self, LoadedImage};
use crate::outfiles::OutFiles;
use crate::scene::Scene;

/// One view's outputs, each where the options put it for this view.
fn view_outputs(out: &OutputArgs, dir: &Path, name: &str) -> OutputArgs {
    let at = |d: &Option<PathBuf>, suffix: &str| d.as_ref().map(|d| d.join(format!("{name}{suffix}.png")));
    OutputArgs {
        output: Some(dir.join(format!("{name}.png"))),
        depth: at(&out.depth, "_depth"),
        depth_preview: at(&out.depth_preview, "_depth_preview"),
        opacity: at(&out.opacity, "_opacity"),
        background: out.background.clone(),
    }
}

/// What `--stats` holds for a run of many views.
#[derive(Serialize)]
struct RunStats {
    graph_builds: u64,
    views: Vec<ViewStats>,
    /// Means over the views (PSNR and SSIM only with --compare).
    mean: Means,
    /// Views per second of frame time on the host runtime (graph build and planning
    /// excluded).
    fps_host: f64,
    /// Views per second of estimated Mk2 IPU time (--estimate): each view's frame
    /// and its upload.
    fps_ipu_estimated: Option<f64>,
    /// Instrumented graphs --estimate built, one per view (not in graph_builds).
    estimate_graph_builds: u64,
    plan_s: f64,
    setup_s: f64,
}

#[derive(Serialize)]
struct ViewStats {
    name: String,
    psnr: Option<f64>,
    ssim: Option<f64>,
    iterations: u64,
    rays_dropped: u64,
    host_calls: u64,
    host_s: f64,
    /// Estimated Mk2 IPU frame time (cycle model, not a measurement; --estimate).
    ipu_ms: Option<f64>,
    /// Bytes the host wrote to start the view's frame: its camera record and, as the
    /// device held another camera, every injector's camera region and block list.
    host_bytes_written: u64,
    /// Those bytes' time on the host link (--estimate), not in `ipu_ms`.
    ipu_upload_ms: Option<f64>,
    camera: IntrinsicsJson,
}

#[derive(Serialize)]
struct Means {
    psnr: Option<f64>,
    ssim: Option<f64>,
    iterations: f64,
    host_s: f64,
    ipu_ms: Option<f64>,
    ipu_upload_ms: Option<f64>,
}

/// The run's inputs and options, as `render` checked them.
pub struct Run<'a> {
    pub scene_path: &'a Path,
    /// Its SH coefficients are dropped once the plan has packed them.
    pub scene: Scene,
    pub views: Vec<View>,
    pub opts: DeviceOptions,
    pub shards: u64,
    pub out: &'a OutputArgs,
    pub out_dir: &'a Path,
    pub stats: Option<&'a Path>,
    pub compare: Option<&'a Path>,
    pub animation: Option<&'a Path>,
    pub executable_cache: Option<&'a Path>,
    pub estimate: bool,
}

/// Checks every view's outputs and references and declares the outputs, before
/// the work: a name with no reference image or one of another size is an error
/// that leaves nothing written.
pub fn prepare(run: &Run<'_>, files: &mut OutFiles) -> Result<Vec<Option<LoadedImage>>> {
    if let Some(w) = run
        .views
        .windows(2)
        .find(|w| (w[0].camera.width, w[0].camera.height) != (w[1].camera.width, w[1].camera.height))
    {
        bail!(
            "view {} is {}x{} but view {} is {}x{}: one graph renders one image size (use --width/--height)",
            w[0].name,
            w[0].camera.width,
            w[0].camera.height,
            w[1].name,
            w[1].camera.width,
            w[1].camera.height
        );
    }
    let mut names: Vec<&str> = run.views.iter().map(|v| v.name.as_str()).collect();
    names.sort_unstable();
    if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
        bail!("two views are named {:?}: their outputs would collide", w[0]);
    }
    files.dir(run.out_dir)?;
    for d in [&run.out.depth, &run.out.depth_preview, &run.out.opacity].into_iter().flatten() {
        files.dir(d)?;
    }
    for v in &run.views {
        let out = view_outputs(run.out, run.out_dir, &v.name);
        out.declare(files, out.output.as_deref())?;
    }
    if let Some(p) = run.stats {
        files.output(p)?;
    }
    if let Some(p) = run.animation {
        files.output(p)?;
    }
    match run.compare {
        Some(dir) => {
            for f in evaluate::summary_files(run.out_dir) {
                files.output(&f)?;
            }
            run.views.iter().map(|v| evaluate::reference(dir, &v.name, &v.camera, files).map(Some)).collect()
        }
        None => Ok(run.views.iter().map(|_| None).collect()),
    }
}

pub fn render(mut run: Run<'_>, files: &mut OutFiles, refs: Vec<Option<LoadedImage>>) -> Result<()> {
    let cams: Vec<_> = run.views.iter().map(|v| v.camera).collect();
    let steps = progress::Steps::new();
    let plan = DevicePlan::for_cameras(&run.scene, run.shards, &cams, &run.opts, &steps)
        .with_context(|| format!("planning {} for the device", run.scene_path.display()));
    steps.finish();
    // The shards carry the SH the tiles need; the frames read only the scene's cells.
    run.scene.drop_sh();
    crate::cmd::heap::release_freed();
    let plan = plan?;
    let plan_s = plan.times.partition_s + plan.times.pack_s + plan.times.plan_s;
    let building = progress::spinner("building the render graph");
    let renderer =
        DeviceRenderer::with_executable_cache(plan, run.executable_cache).context("building the render graph");
    building.finish_and_clear();
    let mut renderer = renderer?;
    let background = run.out.background()?;
    let mut rows = Vec::with_capacity(run.views.len());
    let mut frames = Vec::new();
    for (i, (view, reference)) in run.views.iter().zip(&refs).enumerate() {
        let cam = &view.camera;
        let bar = progress::bar(
            cam.width as u64 * cam.height as u64,
            &format!("view {}/{} ({}) rays", i + 1, run.views.len(), view.name),
        );
        let frame = renderer
            .render(&run.scene, cam, &mut |done, _| bar.set_position(done))
            .with_context(|| format!("rendering view {}", view.name));
        bar.finish_and_clear();
        let frame = frame?;
        let out = view_outputs(run.out, run.out_dir, &view.name);
        out.write(files, &frame.output, out.output.as_deref())?;
        let scores = match reference {
            Some(r) => Some(evaluate::score(run.out_dir, &view.name, &frame.output, background, r, files)?),
            None => None,
        };
        if run.animation.is_some() {
            frames.push(super::animation::Frame::of(&frame.output, background, run.out.wants_depth()));
        }
        rows.push((view, frame.stats, scores));
    }
    let graph_builds = poplar_bridge::graph_builds();
    let estimates = if run.estimate { Some(estimate(&run, renderer.plan())?) } else { None };
    let stats = run_stats(&rows, estimates.as_deref(), graph_builds, plan_s, renderer.setup_s());
    print_table(&stats);
    if let (Some(p), Some(scores)) = (run.compare, rows.iter().map(|r| r.2.clone()).collect::<Option<Vec<Scores>>>()) {
        let names: Vec<&str> = run.views.iter().map(|v| v.name.as_str()).collect();
        evaluate::write_summaries(run.out_dir, &names, &scores, files)?;
        println!(
            "compared with {}: mean PSNR {:.3} dB, SSIM {:.5} (LPIPS not computed: its network weights are not available here)",
            p.display(),
            stats.mean.psnr.unwrap_or(f64::NAN),
            stats.mean.ssim.unwrap_or(f64::NAN)
        );
    }
    if let Some(p) = run.animation {
        super::animation::write(p, &frames, files)?;
    }
    if let Some(p) = run.stats {
        let json = serde_json::to_string_pretty(&stats)? + "\n";
        files.write(p, |f| f.write_all(json.as_bytes()))?;
    }
    Ok(())
}

/// Each view's estimated Mk2 IPU frame time (seconds) at the run's rc, from an
/// instrumented rc-1 run of `plan` for it (bench's cycle model).
fn estimate(run: &Run<'_>, plan: &DevicePlan) -> Result<Vec<f64>> {
    run.views
        .iter()
        .map(|v| {
            let spinner = progress::spinner(format!("instrumented rc-1 run of view {} for the IPU estimate", v.name));
            let p = crate::cmd::bench::profile::profile(plan.with_rc(1), &run.scene, &v.camera)
                .with_context(|| format!("instrumented rc-1 run of view {}", v.name));
            spinner.finish_and_clear();
            Ok(crate::cmd::bench::cycles::estimate(&p?, run.opts.rc).frame_s)
        })
        .collect()
}

fn run_stats(
    rows: &[(&View, crate::device::FrameStats, Option<Scores>)],
    estimates: Option<&[f64]>,
    graph_builds: u64,
    plan_s: f64,
    setup_s: f64,
) -> RunStats {
    let views: Vec<ViewStats> = rows
        .iter()
        .enumerate()
        .map(|(i, (v, s, sc))| ViewStats {
            name: v.name.clone(),
            psnr: sc.as_ref().map(|s| s.psnr),
            ssim: sc.as_ref().and_then(|s| s.ssim),
            iterations: s.iterations,
            rays_dropped: s.rays_dropped,
            host_calls: s.host_calls,
            host_s: s.wall_s,
            ipu_ms: estimates.map(|e| e[i] * 1e3),
            host_bytes_written: s.host_bytes_written,
            ipu_upload_ms: estimates
                .map(|_| s.host_bytes_written as f64 / crate::cmd::bench::cycles::HOST_LINK_BYTES_PER_S * 1e3),
            camera: camera_to_json(&v.camera),
        })
        .collect();
    let n = views.len().max(1) as f64;
    let mean = |f: &dyn Fn(&ViewStats) -> Option<f64>| -> Option<f64> {
        views.iter().map(f).collect::<Option<Vec<f64>>>().map(|v| v.iter().sum::<f64>() / n)
    };
    let host_total: f64 = views.iter().map(|v| v.host_s).sum();
    RunStats {
        graph_builds,
        mean: Means {
            psnr: mean(&|v| v.psnr),
            ssim: mean(&|v| v.ssim),
            iterations: views.iter().map(|v| v.iterations as f64).sum::<f64>() / n,
            host_s: host_total / n,
            ipu_ms: mean(&|v| v.ipu_ms),
            ipu_upload_ms: mean(&|v| v.ipu_upload_ms),
        },
        fps_host: views.len() as f64 / host_total.max(f64::MIN_POSITIVE),
        fps_ipu_estimated: mean(&|v| Some(v.ipu_ms? + v.ipu_upload_ms?)).map(|ms| 1e3 / ms),
        estimate_graph_builds: poplar_bridge::graph_builds() - graph_builds,
        views,
        plan_s,
        setup_s,
    }
}

fn print_table(s: &RunStats) {
    let opt = |v: Option<f64>, prec: usize| v.map_or("-".to_string(), |v| format!("{v:.prec$}"));
    println!(
        "{:<24} {:>9} {:>8} {:>10} {:>9} {:>10} {:>10}",
        "view", "PSNR dB", "SSIM", "iterations", "host s", "IPU ms est", "upload ms"
    );
    for v in &s.views {
        println!(
            "{:<24} {:>9} {:>8} {:>10} {:>9.3} {:>10} {:>10}",
            v.name,
            opt(v.psnr, 3),
            opt(v.ssim, 4),
            v.iterations,
            v.host_s,
            opt(v.ipu_ms, 1),
            opt(v.ipu_upload_ms, 1)
        );
    }
    let m = &s.mean;
    println!(
        "{:<24} {:>9} {:>8} {:>10.1} {:>9.3} {:>10} {:>10}",
        "mean",
        opt(m.psnr, 3),
        opt(m.ssim, 4),
        m.iterations,
        m.host_s,
        opt(m.ipu_ms, 1),
        opt(m.ipu_upload_ms, 1)
    );
    let ipu = s.fps_ipu_estimated.map_or(String::new(), |f| {
        format!(
            ", {f:.2} on a Mk2 IPU (estimated; each view's frame and its camera regions' upload at {:.0} GB/s)",
            crate::cmd::bench::cycles::HOST_LINK_BYTES_PER_S / 1e9
        )
    });
    println!(
        "{} views, graph builds {}, plan {:.2} s, graph {:.2} s; views/s: {:.2} on the host runtime{ipu}",
        s.views.len(),
        s.graph_builds,
        s.plan_s,
        s.setup_s,
        s.fps_host
    );
}

/// What a written colour output reads back as (8-bit levels), for scoring.
pub fn as_png(out: &crate::reference::RenderOutput, background: [f32; 3]) -> LoadedImage {
    imageio::as_written(false, out.width, out.height, &out.composite(background))
}
