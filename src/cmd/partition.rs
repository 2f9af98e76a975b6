//! `foam-ipu partition SCENE.ply`: cut a scene into tracer-tile shards, pack them and
//! check every tile's SRAM footprint (paper §4.2, §5.2, appendix B).

mod plots;

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, bail};
use partition::{Balance, Method, PartitionReport, RayLayout, pack_all};

use super::CheckFailed;
use super::progress;
use crate::device::DeviceOptions;
use crate::device::plan::{check_fit, tracer_footprint};
use crate::outfiles::OutFiles;

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
    /// Number of shards (tracer tiles) per IPU: a power of two from 2 to 65,536.
    #[arg(long, default_value_t = 1024)]
    pub shards: u64,
    /// IPUs the scene is cut for (1, 2, 4, 8 or 16; --shards on each; the k-d tree's
    /// top levels split the scene between them), or auto: the fewest that hold it (at
    /// --sh-degree D if one is given). The SH table shows 1, 2 and 4 IPUs.
    #[arg(long, default_value = "1", value_parser = super::device_args::parse_ipus, value_name = "N|auto")]
    pub ipus: super::device_args::IpusArg,
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
    let name = args.scene.display();

    let f32 = layout == RayLayout::Fp32;
    let t0 = Instant::now();
    // Every degree up to the scene's is cut as `render` would cut it, on 1, 2 and 4
    // IPUs and the count asked for, to say which fit where.
    let counts_tried: Vec<u32> = match args.ipus.0 {
        None => super::device_args::ipu_counts().collect(),
        Some(n) if [1, 2, 4].contains(&n) => vec![1, 2, 4],
        Some(n) => vec![1, 2, 4, n],
    };
    // The counts shown beside the one asked for are left out where they cannot be cut.
    let asked = args.ipus.0.unwrap_or(1);
    let mut cuts = Vec::new(); // (fit, balance, partition, footprint, the cut's own seconds)
    for &ipus in &counts_tried {
        let shards = args.shards.saturating_mul(ipus as u64);
        if ipus != asked && (partition::check_shard_count(shards).is_err() || shards > scene.len() as u64) {
            continue;
        }
        let options = DeviceOptions { ipus, ..options.clone() };
        let footprint = tracer_footprint(&options, args.width, args.height, shards);
        for degree in 0..=scene.sh_degree {
            let t_cut = Instant::now();
            let view = scene.partition_view_sh(degree, f32);
            let (balance, part) = match args.method {
                MethodArg::Octree => {
                    let bar = progress::spinner(format!("cutting (octree), SH degree {degree}, {ipus} IPU(s)"));
                    let part =
                        partition::partition(&view, shards, Method::Octree).with_context(|| format!("{name}"))?;
                    bar.finish_and_clear();
                    (Balance::Cells, part)
                }
                MethodArg::Kdtree => {
                    let balance = match args.balance {
                        BalanceArg::Auto => None,
                        BalanceArg::Cells => Some(Balance::Cells),
                        BalanceArg::Bytes => Some(Balance::Bytes),
                    };
                    let bar = progress::spinner(format!("cutting, SH degree {degree}, {ipus} IPU(s)"));
                    let (budget, splits) = (footprint.shard_budget(), options.free_splits(shards));
                    let cut = partition::cut(&view, shards, balance, budget, splits, &|m: &str| {
                        bar.set_message(m.to_string())
                    })
                    .with_context(|| format!("{name}"))?;
                    bar.finish_and_clear();
                    (cut.balance, cut.cut.partition)
                }
            };
            let counts = partition::count_shards(&view, &part);
            let fits = check_fit(&part, &counts, balance, &footprint, ipus).is_ok();
            let max_shard = counts.iter().map(|c| c.bytes as u64).max().unwrap_or(0);
            let fit = ShFit {
                ipus,
                degree,
                max_tile_bytes: footprint.tile_bytes(max_shard),
                budget_bytes: footprint.budget,
                fits,
            };
            cuts.push((fit, balance, part, footprint, t_cut.elapsed().as_secs_f64()));
        }
        // Auto: the fewest IPUs that hold the degree asked for (or any degree).
        if args.ipus.0.is_none()
            && cuts.iter().any(|c| c.0.ipus == ipus && c.0.fits && args.sh_degree.0.is_none_or(|d| d == c.0.degree))
        {
            break;
        }
    }
    let ipus = match args.ipus.0 {
        Some(n) => n,
        None => {
            let n = cuts.last().map_or(1, |c| c.0.ipus);
            eprintln!("--ipus auto: {n} IPU{}", if n == 1 { "" } else { "s" });
            n
        }
    };
    let degree = args
        .sh_degree
        .0
        .unwrap_or_else(|| cuts.iter().rev().find(|c| c.0.ipus == ipus && c.0.fits).map_or(0, |c| c.0.degree));
    let sh_degrees_on_ipus: Vec<ShFit> = cuts.iter().map(|c| c.0).collect();
    let sh_degrees = sh_degrees_on_ipus.iter().copied().filter(|f| f.ipus == ipus).collect();
    let at = cuts
        .iter()
        .position(|c| c.0.ipus == ipus && c.0.degree == degree)
        .expect("every degree is cut on the IPUs chosen");
    let cuts_made = cuts.len();
    let (_, balance, part, footprint, cut_s) = cuts.swap_remove(at);
    let view = scene.partition_view_sh(degree, f32);
    let t_partition = (cut_s, t0.elapsed().as_secs_f64(), cuts_made);
    let bar = progress::bar(part.shards() as u64, "packing shards");
    let packed = pack_all(&view, &part, &|| bar.inc(1)).with_context(|| format!("{name}"))?;
    bar.finish_and_clear();
    let t_pack = t0.elapsed().as_secs_f64() - t_partition.1;
    let counts: Vec<_> = packed.into_iter().map(|p| p.counts).collect();
    let report = ShReport {
        sh_degree: degree,
        sh_degrees,
        sh_degrees_on_ipus,
        ipus,
        per_ipu: per_ipu(&scene, &part, &counts, &footprint, ipus),
        report: PartitionReport::new(&part, balance, &counts, &footprint),
    };
    if args.require_fit {
        check_fit(&part, &counts, balance, &footprint, ipus).map_err(|e| CheckFailed(format!("{name}: {e}")))?;
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
        print_ipus(&report);
    }
    Ok(())
}

/// How the tiles fare with the shards carrying SH up to one degree, on some IPUs.
#[derive(Clone, Copy, Debug, serde::Serialize)]
struct ShFit {
    ipus: u32,
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
    /// Every degree on the IPUs chosen, and on every IPU count tried.
    sh_degrees: Vec<ShFit>,
    sh_degrees_on_ipus: Vec<ShFit>,
    /// IPUs the shards above are cut for, and each one's share.
    ipus: u32,
    per_ipu: Vec<IpuShards>,
    #[serde(flatten)]
    report: PartitionReport,
}

fn print_sh(r: &ShReport, f32: bool) {
    let precision = if f32 { "f32" } else { "binary16" };
    let on = if r.ipus > 1 { format!(" on {} IPUs", r.ipus) } else { String::new() };
    println!("SH           the shards above carry degree {} ({precision} coefficients){on}; per degree:", r.sh_degree);
    for f in &r.sh_degrees_on_ipus {
        let verdict = if f.fits {
            "fits".to_string()
        } else {
            format!("does not fit ({} B over)", f.max_tile_bytes.saturating_sub(f.budget_bytes))
        };
        let ipus = if f.ipus == 1 { "1 IPU ".to_string() } else { format!("{} IPUs", f.ipus) };
        println!(
            "  {ipus:<8} degree {}   heaviest tile {:>7} B of {} B: {verdict}",
            f.degree, f.max_tile_bytes, f.budget_bytes
        );
    }
}

/// One IPU's shards: the tracer tiles on it and the faces its cells share with
/// cells on other IPUs, where rays cross between chips.
#[derive(Clone, Debug, serde::Serialize)]
struct IpuShards {
    ipu: u32,
    tracers: u64,
    /// Tracer tiles' bytes (shard and everything beside it): all, and the fullest.
    tile_bytes: u64,
    max_tile_bytes: u64,
    /// Voronoi faces between its cells and another IPU's, and between its cells and
    /// another shard's on the same IPU.
    faces_to_other_ipus: u64,
    faces_between_shards_here: u64,
}

/// Shard ids' top bits choose the IPU (the k-d tree's first splits), as the device
/// places them (`tree::ipu_of_id`).
fn per_ipu(
    scene: &crate::scene::Scene,
    part: &partition::Partition,
    counts: &[partition::ShardCounts],
    footprint: &partition::TracerFootprint,
    ipus: u32,
) -> Vec<IpuShards> {
    let ipu_of_shard = |s: usize| crate::device::tree::ipu_of_id(part.ids[s] as u64, part.id_bits, ipus);
    let mut out: Vec<IpuShards> = (0..ipus)
        .map(|ipu| IpuShards {
            ipu,
            tracers: 0,
            tile_bytes: 0,
            max_tile_bytes: 0,
            faces_to_other_ipus: 0,
            faces_between_shards_here: 0,
        })
        .collect();
    for (s, c) in counts.iter().enumerate() {
        let l = &mut out[ipu_of_shard(s) as usize];
        let tile = footprint.tile_bytes(c.bytes as u64);
        l.tracers += 1;
        l.tile_bytes += tile;
        l.max_tile_bytes = l.max_tile_bytes.max(tile);
    }
    for g in 0..scene.len() {
        let a = part.owner(g as u32);
        for &n in scene.neighbours(g) {
            let b = part.owner(n);
            if b == a {
                continue;
            }
            let l = &mut out[ipu_of_shard(a) as usize];
            if ipu_of_shard(b) == ipu_of_shard(a) {
                l.faces_between_shards_here += 1
            } else {
                l.faces_to_other_ipus += 1
            }
        }
    }
    out
}

fn print_ipus(r: &ShReport) {
    if r.ipus < 2 {
        return;
    }
    println!(
        "IPUs         {} (shard ids' top bits: the k-d tree's first {} split(s) between them); faces are where rays cross:",
        r.ipus,
        r.ipus.trailing_zeros()
    );
    println!(
        "  {:>3} {:>8} {:>14} {:>13} {:>18} {:>16}",
        "ipu", "tracers", "tile bytes", "fullest tile", "faces other IPUs", "faces same IPU"
    );
    for l in &r.per_ipu {
        println!(
            "  {:>3} {:>8} {:>14} {:>13} {:>18} {:>16}",
            l.ipu, l.tracers, l.tile_bytes, l.max_tile_bytes, l.faces_to_other_ipus, l.faces_between_shards_here
        );
    }
    println!(
        "  (link bytes crossing IPUs per iteration and per frame depend on the camera's plan: bench and render print them)"
    );
}

fn print_table(
    name: &str,
    r: &PartitionReport,
    layout: RayLayout,
    (width, height): (u32, u32),
    (t_cut, t_cuts, cuts): (f64, f64, usize),
    t_pack: f64,
) {
    let method = match r.method {
        Method::Kdtree => "k-d tree",
        Method::Octree => "octree",
    };
    let balance = match r.balance {
        Balance::Cells => "cell counts balanced",
        Balance::Bytes => "shard bytes balanced",
    };
    println!("scene        {name}: {} cells", r.cells);
    let split =
        if r.split_leaves > 0 { format!(", {} leaves split onto free tiles", r.split_leaves) } else { String::new() };
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
    println!("tile         shard + {} B: {} ({} px)", r.fixed_bytes, items.join(", "), r.framebuffer_slice_pixels);
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
    println!("worst        shard {}: {} B of {} B ({pct:.1}%), {verdict}", r.worst_shard, r.max_bytes, r.budget_bytes);
    if cuts > 1 {
        println!(
            "time         partition {t_cut:.2} s ({t_cuts:.2} s for the SH table's {cuts} cuts), pack {t_pack:.2} s"
        );
    } else {
        println!("time         partition {t_cut:.2} s, pack {t_pack:.2} s");
    }
}
