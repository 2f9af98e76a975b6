//! `foam-ipu partition SCENE.ply`: cut a scene into tracer-tile shards, pack them and
//! check every tile's SRAM footprint (paper §4.2, §5.2, appendix B).

mod plots;

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, bail};
use partition::{Balance, Method, PartitionReport, RayLayout, pack_all};

use super::CheckFailed;
use super::progress;
use crate::outfiles::OutFiles;
use crate::device::DeviceOptions;
use crate::device::plan::{check_fit, tracer_footprint};

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

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum BalanceArg {
    /// Equal local cell counts where every tile then fits, shard bytes where not
    /// (as `render` cuts).
    Auto,
    /// Equal local cell counts (the paper).
    Cells,
    /// Equal shard bytes.
    Bytes,
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
    /// What the k-d cut balances: auto (cell counts where every tile then fits,
    /// shard bytes where not, as `render` cuts), cells or bytes.
    #[arg(long, value_enum, default_value_t = BalanceArg::Auto)]
    pub balance: BalanceArg,
    /// Write partition.json and PNG plots into this directory.
    #[arg(long)]
    pub report: Option<PathBuf>,
    /// Print the report as JSON on stdout instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Exit with code 2 if any tracer tile is over the SRAM budget (before writing
    /// anything).
    #[arg(long)]
    pub require_fit: bool,
    /// SH degree the shards carry (binary16, f32 with --layout fp32): auto (the
    /// highest up to the scene's for which every tile fits, as `render` picks) or 0 to 3.
    /// The table shows every degree up to the scene's.
    #[arg(long, default_value = "auto", value_parser = super::device_args::parse_sh_degree, value_name = "auto|0|1|2|3")]
    pub sh_degree: super::device_args::ShDegreeArg,
    /// Partitioning method: the balanced k-d tree, or the octree of appendix B.
    #[arg(long, value_enum, default_value_t = MethodArg::Kdtree)]
    pub method: MethodArg,
}

/// The largest image side a report is made for.
const MAX_SIDE: u32 = 65536;

/// The report's file in `--report DIR`, beside the plots.
const REPORT_JSON: &str = "partition.json";

pub fn run(args: Args) -> anyhow::Result<()> {
    // Before reading a possibly large scene.
    partition::check_shard_count(args.shards)?;
    if matches!(args.method, MethodArg::Octree) && args.balance == BalanceArg::Bytes {
        bail!("--balance bytes moves k-d split planes: it needs --method kdtree");
    }
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
    let scene = progress::load_scene(&args.scene)?.scene;
    if let Some(d) = args.sh_degree.0.filter(|&d| d > scene.sh_degree) {
        bail!("--sh-degree {d} exceeds the SH degree {} of {}", scene.sh_degree, args.scene.display());
    }
    scene.partition_view().validate().with_context(|| format!("{}", args.scene.display()))?;
    let layout = match args.layout {
        LayoutArg::Half => RayLayout::Half,
        LayoutArg::Mixed => RayLayout::Mixed,
        LayoutArg::Fp32 => RayLayout::Fp32,
    };
    // The tracer tiles `render` would build with its defaults.
    let options = DeviceOptions { layout, hops: args.hop_counters, ..DeviceOptions::default() };
    let footprint = tracer_footprint(&options, args.width, args.height, args.shards);
    let name = args.scene.display();

    let f32 = layout == RayLayout::Fp32;
    let t0 = Instant::now();
    // Every degree up to the scene's is cut as `render` would cut it, to say which fit.
    let mut cuts = Vec::new();
    for degree in 0..=scene.sh_degree {
        let view = scene.partition_view_sh(degree, f32);
        let (balance, part) = match args.method {
            MethodArg::Octree => {
                let bar = progress::spinner(format!("cutting (octree), SH degree {degree}"));
                let part = partition::partition(&view, args.shards, Method::Octree).with_context(|| format!("{name}"))?;
                bar.finish_and_clear();
                (Balance::Cells, part)
            }
            MethodArg::Kdtree => {
                let balance = match args.balance {
                    BalanceArg::Auto => None,
                    BalanceArg::Cells => Some(Balance::Cells),
                    BalanceArg::Bytes => Some(Balance::Bytes),
                };
                let bar = progress::spinner(format!("cutting, SH degree {degree}"));
                let (budget, splits) = (footprint.shard_budget(), options.free_splits(args.shards));
                let cut = partition::cut(&view, args.shards, balance, budget, splits, &|m: &str| bar.set_message(m.to_string()))
                    .with_context(|| format!("{name}"))?;
                bar.finish_and_clear();
                (cut.balance, cut.cut.partition)
            }
        };
        let counts = partition::count_shards(&view, &part);
        let fits = check_fit(&part, &counts, balance, &footprint).is_ok();
        let max_shard = counts.iter().map(|c| c.bytes as u64).max().unwrap_or(0);
        cuts.push((ShFit { degree, max_tile_bytes: footprint.tile_bytes(max_shard), budget_bytes: footprint.budget, fits }, balance, part));
    }
    let degree = args.sh_degree.0.unwrap_or_else(|| cuts.iter().rev().find(|c| c.0.fits).map_or(0, |c| c.0.degree));
    let sh_degrees: Vec<ShFit> = cuts.iter().map(|c| c.0).collect();
    let (_, balance, part) = cuts.swap_remove(degree as usize);
    let view = scene.partition_view_sh(degree, f32);
    let t_partition = t0.elapsed().as_secs_f64();
    let bar = progress::bar(part.shards() as u64, "packing shards");
    let packed = pack_all(&view, &part, &|| bar.inc(1)).with_context(|| format!("{name}"))?;
    bar.finish_and_clear();
    let t_pack = t0.elapsed().as_secs_f64() - t_partition;
    let counts: Vec<_> = packed.into_iter().map(|p| p.counts).collect();
    let report = ShReport { sh_degree: degree, sh_degrees, report: PartitionReport::new(&part, balance, &counts, &footprint) };
    if args.require_fit {
        check_fit(&part, &counts, balance, &footprint).map_err(|e| CheckFailed(format!("{name}: {e}")))?;
    }

    if let Some(dir) = &args.report {
        let json = serde_json::to_string_pretty(&report)?;
        files.write(&dir.join(REPORT_JSON), |f| f.write_all(json.as_bytes()))?;
        plots::write_all(&report.report, dir, &mut files)?;
    }
    files.commit()?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_table(&name.to_string(), &report.report, layout, (args.width, args.height), t_partition, t_pack);
        print_sh(&report, f32);
    }
    Ok(())
}

/// How the tiles fare with the shards carrying SH up to one degree.
#[derive(Clone, Copy, Debug, serde::Serialize)]
struct ShFit {
    degree: u8,
    /// The heaviest tracer tile: its shard and everything else it holds.
    max_tile_bytes: u64,
    budget_bytes: u64,
    fits: bool,
}

/// The partition report at the SH degree chosen, with how every degree fares.
#[derive(serde::Serialize)]
struct ShReport {
    sh_degree: u8,
    sh_degrees: Vec<ShFit>,
    #[serde(flatten)]
    report: PartitionReport,
}

fn print_sh(r: &ShReport, f32: bool) {
    let precision = if f32 { "f32" } else { "binary16" };
    println!("SH           the shards above carry degree {} ({precision} coefficients); per degree:", r.sh_degree);
    for f in &r.sh_degrees {
        let verdict = if f.fits {
            "fits".to_string()
        } else {
            format!("does not fit ({} B over)", f.max_tile_bytes.saturating_sub(f.budget_bytes))
        };
        println!("  degree {}   heaviest tile {:>7} B of {} B: {verdict}", f.degree, f.max_tile_bytes, f.budget_bytes);
    }
}

fn print_table(name: &str, r: &PartitionReport, layout: RayLayout, (width, height): (u32, u32), t_partition: f64, t_pack: f64) {
    let method = match r.method {
        Method::Kdtree => "k-d tree",
        Method::Octree => "octree",
    };
    let balance = match r.balance {
        Balance::Cells => "cell counts balanced",
        Balance::Bytes => "shard bytes balanced",
    };
    println!("scene        {name}: {} cells", r.cells);
    let split = if r.split_leaves > 0 { format!(", {} leaves split onto free tiles", r.split_leaves) } else { String::new() };
    println!(
        "shards       {} ({method}, depth {}, {balance}{split}), layout {} ({} B/ray), {width}x{height}",
        r.shard_count,
        r.depth,
        layout.name(),
        r.ray_bytes,
    );
    println!("{:<12} {:>10} {:>12} {:>10}", "per shard", "min", "mean", "max");
    for (label, s) in [
        ("local", r.local),
        ("halo", r.halo),
        ("adjacency", r.adjacency),
        ("neighbours", r.neighbour_shards),
        ("shard bytes", r.shard_bytes),
        ("tile bytes", r.tile_bytes),
    ] {
        println!("{label:<12} {:>10} {:>12.1} {:>10}", s.min, s.mean, s.max);
    }
    println!("balance      max/min local cells = {:.4}, max/mean shard bytes = {:.4}", r.balance_ratio, r.bytes_ratio);
    let items: Vec<String> = r.footprint.items().iter().map(|(label, b)| format!("{label} {b}")).collect();
    println!(
        "tile         shard + {} B: {} ({} px)",
        r.fixed_bytes,
        items.join(", "),
        r.framebuffer_slice_pixels
    );
    let pct = 100.0 * r.max_bytes as f64 / r.budget_bytes as f64;
    let verdict = if r.fits {
        "fits".to_string()
    } else {
        format!(
            "DOES NOT FIT: {} of {} shards over budget, the worst by {} B",
            r.over_budget.len(),
            r.shard_count,
            r.max_bytes - r.budget_bytes
        )
    };
    println!(
        "worst        shard {}: {} B of {} B ({pct:.1}%), {verdict}",
        r.worst_shard, r.max_bytes, r.budget_bytes
    );
    println!("time         partition {t_partition:.2} s, pack {t_pack:.2} s");
}
