//! `foam-ipu synth`: writes a procedural Radiant Foam scene with true Voronoi adjacency.

use std::io::IsTerminal;
use std::path::PathBuf;

use crate::outfiles::OutFiles;
use crate::scene::ply_write::write_ply;
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
    /// Factor on the SH coefficients beyond DC (drawn with deviation 0.04 / l at
    /// band l): larger makes the colour depend strongly on the direction.
    #[arg(long, default_value_t = 1.0, value_name = "S")]
    pub sh_scale: f32,
    /// Scene layout: garden or room (sparse empty space against dense surfaces: the
    /// partitioner's stress case), or bicycle (graded as trained scenes are).
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
    if !(args.sh_scale.is_finite() && args.sh_scale >= 0.0) {
        anyhow::bail!("--sh-scale {} must be a finite number ≥ 0", args.sh_scale);
    }
    let tty = std::io::stderr().is_terminal();
    let progress = |stage: &str| {
        if tty {
            eprint!("\r\x1b[2Ksynth: {stage}…");
        }
    };
    // Declared first so that an unwritable path fails fast, not after the adjacency.
    let mut files = OutFiles::new();
    files.output(&args.output)?;
    if let Some(path) = &args.camera_out {
        files.output(path)?;
    }
    let mut scene = scene_gen::generate(&params, &progress)?;
    scene.sh_rest.iter_mut().for_each(|v| *v *= args.sh_scale);
    progress("writing");
    files.write(&args.output, |f| write_ply(&scene, f))?;
    if let Some(path) = &args.camera_out {
        let json = serde_json::to_string(&preset.camera)? + "\n";
        files.write(path, |f| f.write_all(json.as_bytes()))?;
    }
    files.commit()?;
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
