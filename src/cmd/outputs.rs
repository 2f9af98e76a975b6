//! The image outputs every rendering command offers, declared and written once.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use crate::imageio;
use crate::outfiles::OutFiles;
use crate::reference::RenderOutput;

#[derive(clap::Args, Clone, Debug)]
pub struct OutputArgs {
    /// Colour output (.png 8-bit or .npy float32), composited on --background.
    #[arg(short, long, value_name = "OUT.png")]
    pub output: Option<PathBuf>,
    /// Depth output (.png: 16-bit + D.png.json scale sidecar; .npy: float32).
    #[arg(long, value_name = "D.png")]
    pub depth: Option<PathBuf>,
    /// Colour-mapped depth preview (8-bit PNG, viridis, near = dark, no depth = black).
    #[arg(long, value_name = "P.png")]
    pub depth_preview: Option<PathBuf>,
    /// Opacity (1 − T) output (.png 8-bit or .npy float32).
    #[arg(long, value_name = "A.png")]
    pub opacity: Option<PathBuf>,
    /// Background: white (the original's test renders), black, or R,G,B in [0, 1].
    #[arg(long, default_value = "white", value_name = "white|black|R,G,B")]
    pub background: String,
}

impl OutputArgs {
    pub fn wants_depth(&self) -> bool {
        self.depth.is_some() || self.depth_preview.is_some()
    }

    /// Declares every file [`write`](Self::write) will make, colour at `colour` (the
    /// caller decides its default); call it before the work, after the inputs.
    pub fn declare(&self, files: &mut OutFiles, colour: Option<&Path>) -> Result<()> {
        self.background()?;
        // Which may be .npy: all but the depth preview.
        let images = [(colour, true), (self.opacity.as_deref(), true), (self.depth.as_deref(), true)]
            .into_iter()
            .chain([(self.depth_preview.as_deref(), false)])
            .filter_map(|(p, npy)| p.map(|p| (p, npy)))
            .collect::<Vec<_>>();
        for &(path, _) in &images {
            files.output(path)?;
        }
        if let Some(path) = self.depth.as_deref().filter(|p| !imageio::is_npy(p)) {
            files.output(&imageio::depth_sidecar_path(path))?;
        }
        images.into_iter().try_for_each(|(path, npy)| check_format(path, npy))
    }

    /// Writes every requested output of `out` into the declared `files`.
    pub fn write(&self, files: &mut OutFiles, out: &RenderOutput, colour: Option<&Path>) -> Result<()> {
        let (w, h) = (out.width, out.height);
        if let Some(path) = colour {
            let rgb = out.composite(self.background()?);
            files.write(path, |f| imageio::encode_rgb(f, imageio::is_npy(path), w, h, &rgb))?;
        }
        if let Some(path) = &self.opacity {
            files.write(path, |f| imageio::encode_gray(f, imageio::is_npy(path), w, h, &out.opacity))?;
        }
        if let Some(path) = &self.depth {
            if imageio::is_npy(path) {
                files.write(path, |f| imageio::npy::encode_npy_f32(f, &[h as usize, w as usize], &out.depth))?;
            } else {
                let (px, scale) = imageio::depth_png(&out.depth);
                files.write(path, |f| imageio::encode_png_gray16(f, w, h, &px))?;
                let json = serde_json::to_string_pretty(&scale)? + "\n";
                files.write(&imageio::depth_sidecar_path(path), |f| f.write_all(json.as_bytes()))?;
            }
        }
        if let Some(path) = &self.depth_preview {
            files.write(path, |f| imageio::encode_depth_preview(f, w, h, &out.depth))?;
        }
        Ok(())
    }

    pub fn background(&self) -> Result<[f32; 3]> {
        parse_background(&self.background)
    }
}

/// An image output's name says how it is written: `.png`, or `.npy` where the output
/// has one (`npy`). Any other name (`.jpg`, none) was written as a PNG under it.
/// A device (`/dev/null`) takes whatever is written. Checked after every output is
/// declared, so that an output that is an input or another output is refused as that.
fn check_format(path: &Path, npy: bool) -> Result<()> {
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) {
        return Ok(());
    }
    // `is_npy` is what the writers go by, so the check cannot disagree with them.
    let png = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("png"));
    if png || (npy && imageio::is_npy(path)) {
        return Ok(());
    }
    let formats = if npy { ".png or .npy" } else { ".png" };
    bail!("cannot write {}: this output is written as {formats}; name it so", path.display())
}

/// Parses `white`, `black` or `R,G,B` with components in [0, 1].
pub fn parse_background(s: &str) -> Result<[f32; 3]> {
    match s.trim().to_ascii_lowercase().as_str() {
        "white" => return Ok([1.0; 3]),
        "black" => return Ok([0.0; 3]),
        _ => {}
    }
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    if parts.len() != 3 {
        bail!("--background {s:?}: expected white, black or R,G,B (three numbers in [0, 1])");
    }
    let mut bg = [0.0f32; 3];
    for (v, p) in bg.iter_mut().zip(&parts) {
        *v = p.parse().map_err(|_| anyhow::anyhow!("--background {s:?}: {p:?} is not a number"))?;
        if !(0.0..=1.0).contains(v) {
            bail!("--background {s:?}: component {p} is outside [0, 1]");
        }
    }
    Ok(bg)
}
