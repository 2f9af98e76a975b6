//! `foam-ipu synth`: writes a procedural Radiant Foam scene with true Voronoi adjacency.

use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::Context;

use crate::scene::ply_write::write_ply_file;
use crate::synth::scene_gen::{self, Params};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Output scene.ply.
    #[arg(short, long)]
    pub output: PathBuf,
    /// Number of Voronoi sites (cells).
    #[arg(long)]
    pub cells: usize,
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Spherical-harmonics degree of the colours (0..=3).
    #[arg(long, default_value_t = 0)]
    pub sh_degree: u8,
    /// Scene layout: garden or room.
    #[arg(long, default_value = "garden")]
    pub preset: String,
    /// Also write the preset's camera (JSON) here.
    #[arg(long)]
    pub camera_out: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let params = Params { cells: args.cells, seed: args.seed, sh_degree: args.sh_degree, preset: args.preset };
    // Fail on bad arguments before minutes of work.
    let preset = scene_gen::check(&params)?;
    let tty = std::io::stderr().is_terminal();
    let progress = |stage: &str| {
        if tty {
            eprint!("\r\x1b[2Ksynth: {stage}…");
        }
    };
    // Probe the output first so an unwritable path fails fast, not after the adjacency.
    std::fs::File::create(&args.output).with_context(|| format!("cannot write {}", args.output.display()))?;
    let scene = scene_gen::generate(&params, &progress)?;
    progress("writing");
    write_ply_file(&scene, &args.output).with_context(|| format!("cannot write {}", args.output.display()))?;
    if let Some(path) = &args.camera_out {
        let json = serde_json::to_string(&preset.camera)?;
        std::fs::write(path, json + "\n").with_context(|| format!("cannot write {}", path.display()))?;
    }
    if tty {
        eprintln!(
            "\r\x1b[2Ksynth: {} cells, {} adjacency entries -> {}",
            scene.len(),
            scene.adjacency.len(),
            args.output.display()
        );
    }
    Ok(())
}
