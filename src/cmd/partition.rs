//! `foam-ipu partition SCENE.ply`: cut a scene into tracer-tile shards, pack them and
//! check every tile's SRAM footprint (paper §4.2, §5.2, appendix B).

mod plots;

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, bail};
use indicatif::{ProgressBar, ProgressStyle};
use partition::{FootprintParams, Method, PartitionReport, RayLayout, pack_all};

use super::CheckFailed;
use crate::device::tree::Role;
use crate::outfiles::OutFiles;
use crate::scene::read_scene;

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum LayoutArg {
    Half,
    Mixed,
    Fp32,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum MethodArg {
    Kdtree,
    Octree,
}

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The scene.ply to partition.
    pub scene: PathBuf,
    /// Number of shards (tracer tiles): a power of two from 2 to 65,536.
    #[arg(long, default_value_t = 1024)]
    pub shards: u64,
    /// Ray payload layout (paper Tab. 1): 20, 24 or 28 bytes per ray.
    #[arg(long, value_enum, default_value_t = LayoutArg::Half)]
    pub layout: LayoutArg,
    /// Image width, for the framebuffer slice each tracer holds.
    #[arg(long, default_value_t = 640)]
    pub width: u32,
    /// Image height.
    #[arg(long, default_value_t = 480)]
    pub height: u32,
    /// Add 4-byte hop counters to every ray payload.
    #[arg(long)]
    pub hop_counters: bool,
    /// Ray slots per tracer tile (input + output buffers).
    #[arg(long, default_value_t = FootprintParams::DEFAULT_TRACER_RAY_SLOTS)]
    pub ray_slots: u32,
    /// Write partition.json and PNG plots into this directory.
    #[arg(long)]
    pub report: Option<PathBuf>,
    /// Print the report as JSON on stdout instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Exit with code 2 if any tracer tile is over the SRAM budget.
    #[arg(long)]
    pub require_fit: bool,
    /// Partitioning method: the balanced k-d tree, or the octree of appendix B.
    #[arg(long, value_enum, default_value_t = MethodArg::Kdtree)]
    pub method: MethodArg,
}

/// The largest image side a report is made for.
const MAX_SIDE: u32 = 65536;

/// The report's file in `--report DIR`, beside the plots.
const REPORT_JSON: &str = "partition.json";

/// Scenes at least this large get a progress bar (on a terminal).
const PROGRESS_MIN_CELLS: usize = 200_000;

pub fn run(args: Args) -> anyhow::Result<()> {
    // Before reading a possibly large scene.
    partition::check_shard_count(args.shards)?;
    // Larger than the device renders (2048 per side), so that a report can show by how
    // much a frame would not fit.
    for (flag, v) in [("--width", args.width), ("--height", args.height)] {
        if !(1..=MAX_SIDE).contains(&v) {
            bail!("{flag} {v}: the image side must be 1 to {MAX_SIDE} pixels");
        }
    }
    let mut files = OutFiles::new();
    files.input(&args.scene)?;
    if let Some(dir) = &args.report {
        files.dir(dir)?;
        for name in std::iter::once(&REPORT_JSON).chain(&plots::FILES) {
            files.output(&dir.join(name))?;
        }
    }
    let scene = read_scene(&args.scene)?;
    let view = scene.partition_view();
    let method = match args.method {
        MethodArg::Kdtree => Method::Kdtree,
        MethodArg::Octree => Method::Octree,
    };
    let params = FootprintParams {
        width: args.width,
        height: args.height,
        layout: match args.layout {
            LayoutArg::Half => RayLayout::Half,
            LayoutArg::Mixed => RayLayout::Mixed,
            LayoutArg::Fp32 => RayLayout::Fp32,
        },
        hop_counters: args.hop_counters,
        tracer_ray_slots: args.ray_slots,
        // As this build's host runtime measures and counts it (none with the SDK).
        program_bytes: crate::device::program::program_bytes(Role::Tracer)
            .unwrap_or(FootprintParams::DEFAULT_PROGRAM_BYTES),
        ..FootprintParams::default()
    };
    let name = args.scene.display();

    let t0 = Instant::now();
    let part = partition::partition(&view, args.shards, method).with_context(|| format!("{name}"))?;
    let t_partition = t0.elapsed().as_secs_f64();
    let bar = if scene.len() >= PROGRESS_MIN_CELLS && std::io::stderr().is_terminal() {
        let bar = ProgressBar::new(part.shards() as u64);
        bar.set_style(ProgressStyle::with_template("packing shards {bar:40} {pos}/{len} {eta}")?);
        bar
    } else {
        ProgressBar::hidden()
    };
    let packed = pack_all(&view, &part, &|| bar.inc(1)).with_context(|| format!("{name}"))?;
    bar.finish_and_clear();
    let t_pack = t0.elapsed().as_secs_f64() - t_partition;
    let counts: Vec<_> = packed.into_iter().map(|p| p.counts).collect();
    let report = PartitionReport::new(method, scene.len(), &counts, &params);

    if let Some(dir) = &args.report {
        let json = serde_json::to_string_pretty(&report)?;
        files.write(&dir.join(REPORT_JSON), |f| f.write_all(json.as_bytes()))?;
        plots::write_all(&report, dir, &mut files)?;
    }
    files.commit()?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_table(&name.to_string(), &report, t_partition, t_pack);
    }
    if args.require_fit && !report.fits {
        return Err(CheckFailed(format!(
            "{name}: tracer tile of shard {} needs {} B, over the {} B budget ({} of {} shards over)",
            report.worst_shard,
            report.max_bytes,
            report.budget_bytes,
            report.over_budget.len(),
            report.shard_count
        ))
        .into());
    }
    Ok(())
}

fn print_table(name: &str, r: &PartitionReport, t_partition: f64, t_pack: f64) {
    let method = match r.method {
        Method::Kdtree => "k-d tree",
        Method::Octree => "octree",
    };
    let p = &r.params;
    println!("scene        {name}: {} cells", r.cells);
    println!(
        "shards       {} ({method}, depth {}), layout {} ({} B/ray), {}x{}",
        r.shard_count,
        r.depth,
        p.layout.name(),
        r.ray_bytes,
        p.width,
        p.height
    );
    println!("{:<12} {:>10} {:>12} {:>10}", "per shard", "min", "mean", "max");
    for (label, s) in [
        ("local", r.local),
        ("halo", r.halo),
        ("adjacency", r.adjacency),
        ("neighbours", r.neighbour_shards),
        ("tile bytes", r.tile_bytes),
    ] {
        println!("{label:<12} {:>10} {:>12.1} {:>10}", s.min, s.mean, s.max);
    }
    println!("balance      max/min local cells = {:.4}", r.balance_ratio);
    println!(
        "tile         shard + framebuffer {} B ({} px) + rays {} B ({} slots) + code and stacks {} B + overhead {} B",
        r.framebuffer_slice_bytes,
        r.framebuffer_slice_pixels,
        r.ray_buffer_bytes,
        p.tracer_ray_slots,
        r.program_bytes,
        r.overhead_bytes
    );
    let pct = 100.0 * r.max_bytes as f64 / r.budget_bytes as f64;
    let verdict = if r.fits {
        "fits".to_string()
    } else {
        format!("DOES NOT FIT: {} of {} shards over budget", r.over_budget.len(), r.shard_count)
    };
    println!(
        "worst        shard {}: {} B of {} B ({pct:.1}%), {verdict}",
        r.worst_shard, r.max_bytes, r.budget_bytes
    );
    println!("time         partition {t_partition:.2} s, pack {t_pack:.2} s");
}
