//! `foam-ipu info SCENE.ply [--json]`: read, validate and summarise a scene.

use std::path::PathBuf;

use serde::Serialize;

use crate::scene::load_scene;
use crate::scene::stats::SceneStats;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The scene.ply to inspect.
    pub scene: PathBuf,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct Report<'a> {
    path: String,
    format: String,
    file_bytes: u64,
    /// Always true: an invalid file is an error, not a report.
    valid: bool,
    #[serde(flatten)]
    stats: &'a SceneStats,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let loaded = load_scene(&args.scene)?;
    let stats = SceneStats::of(&loaded.scene);
    let report = Report {
        path: args.scene.display().to_string(),
        format: loaded.format.to_string(),
        file_bytes: loaded.file_bytes,
        valid: true,
        stats: &stats,
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_table(&report);
    }
    Ok(())
}

fn print_table(r: &Report) {
    let s = r.stats;
    let v3 = |v: [f32; 3]| format!("[{}, {}, {}]", v[0], v[1], v[2]);
    println!("file        {} ({} bytes, {})", r.path, r.file_bytes, r.format);
    println!("vertices    {}", s.vertices);
    println!("adjacency   {} entries", s.adjacency);
    println!("sh degree   {} ({} color_sh floats per site)", s.sh_degree, s.sh_coefficients);
    println!("bbox        {} .. {}", v3(s.bbox_min), v3(s.bbox_max));
    println!("neighbours  min {}  mean {:.2}  max {}", s.min_neighbours, s.mean_neighbours, s.max_neighbours);
    println!(
        "density     min {}  mean {:.4}  max {}  ({:.1}% <= {})",
        s.density_min,
        s.density_mean,
        s.density_max,
        100.0 * s.density_near_zero_fraction,
        s.density_near_zero_threshold
    );
    println!("validation  ok (offsets, neighbour ranges, symmetry, finite non-negative values)");
}
