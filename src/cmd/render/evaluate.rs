//! Scoring many views against reference renders, in the files users know: per
//! view prediction | reference | absolute error side by side named
//! `<name>_psnr_XX.XXX.png` (the original's test script), and 3DGS's
//! `results.json` (means) and `per_view.json` (per metric, per image). LPIPS needs
//! network weights and is not computed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use crate::camera::Camera;
use crate::cmd::compare::compare_images;
use crate::imageio::{self, LoadedImage, read_image};
use crate::outfiles::OutFiles;
use crate::reference::RenderOutput;

/// The key `results.json` and `per_view.json` file the scores under, as 3DGS files
/// them under its method (`ours_<iterations>`).
const METHOD: &str = "foam-ipu";

#[derive(Clone, Debug)]
pub struct Scores {
    pub psnr: f64,
    pub ssim: Option<f64>,
}

/// The summary files the scores are written to in `dir`.
pub fn summary_files(dir: &Path) -> [PathBuf; 2] {
    [dir.join("results.json"), dir.join("per_view.json")]
}

/// View `name`'s reference image in `dir` (`name.png`, else `name.npy`), checked
/// against the camera's size.
pub fn reference(dir: &Path, name: &str, cam: &Camera, files: &mut OutFiles) -> Result<LoadedImage> {
    if !dir.is_dir() {
        bail!("--compare {}: with several views, --compare names a directory of reference images", dir.display());
    }
    let Some(path) = ["png", "npy"].iter().map(|e| dir.join(format!("{name}.{e}"))).find(|p| p.is_file()) else {
        bail!("--compare {}: no reference image for view {name} ({name}.png or {name}.npy)", dir.display());
    };
    files.input(&path)?;
    let img = read_image(&path)?;
    if (img.width, img.height) != (cam.width as usize, cam.height as usize) {
        bail!(
            "--compare {}: the image is {}x{}, view {name} renders {}x{}",
            path.display(),
            img.width,
            img.height,
            cam.width,
            cam.height
        );
    }
    Ok(img)
}

/// Scores view `name`'s colour output against `reference` as its PNG holds it,
/// and writes the side-by-side picture into `dir`.
pub fn score(
    dir: &Path,
    name: &str,
    out: &RenderOutput,
    background: [f32; 3],
    reference: &LoadedImage,
    files: &mut OutFiles,
) -> Result<Scores> {
    let ours = super::views::as_png(out, background);
    let at = dir.join(format!("{name}.png"));
    let r = compare_images(&ours, reference, &at, Path::new(name), 0.0)?;
    let side = dir.join(format!("{name}_psnr_{:.3}.png", r.psnr));
    files.output(&side)?;
    let (w, h) = (ours.width, ours.height);
    let px = side_by_side(&ours, reference);
    files.write(&side, |f| imageio::encode_png_rgb8(f, 3 * w as u32, h as u32, &px))?;
    Ok(Scores { psnr: r.psnr, ssim: r.ssim })
}

/// 8-bit rows of `a | b | |a − b|`.
fn side_by_side(a: &LoadedImage, b: &LoadedImage) -> Vec<u8> {
    let (w, h) = (a.width, a.height);
    let level = |v: f64| (v.clamp(0.0, 1.0) * 255.0).round() as u8;
    let mut px = Vec::with_capacity(9 * w * h);
    for y in 0..h {
        let span = 3 * y * w..3 * (y + 1) * w;
        let (ra, rb) = (&a.rgb[span.clone()], &b.rgb[span]);
        px.extend(ra.iter().map(|&v| level(v)));
        px.extend(rb.iter().map(|&v| level(v)));
        px.extend(ra.iter().zip(rb).map(|(&x, &y)| level((x - y).abs())));
    }
    px
}

/// `results.json` and `per_view.json` in `dir`, as 3DGS's metrics script writes them
/// (LPIPS left out).
pub fn write_summaries(dir: &Path, names: &[&str], scores: &[Scores], files: &mut OutFiles) -> Result<()> {
    let n = scores.len().max(1) as f64;
    let mut means = serde_json::Map::new();
    means.insert("PSNR".into(), (scores.iter().map(|s| s.psnr).sum::<f64>() / n).into());
    if let Some(ssim) = scores.iter().map(|s| s.ssim).collect::<Option<Vec<f64>>>() {
        means.insert("SSIM".into(), (ssim.iter().sum::<f64>() / n).into());
    }
    let mut per_view: BTreeMap<&str, BTreeMap<String, f64>> = BTreeMap::new();
    for (name, s) in names.iter().zip(scores) {
        per_view.entry("PSNR").or_default().insert(format!("{name}.png"), s.psnr);
        if let Some(v) = s.ssim {
            per_view.entry("SSIM").or_default().insert(format!("{name}.png"), v);
        }
    }
    let [results, per] = summary_files(dir);
    let results_json = serde_json::to_string_pretty(&serde_json::json!({ METHOD: means }))? + "\n";
    let per_json = serde_json::to_string_pretty(&serde_json::json!({ METHOD: per_view }))? + "\n";
    files.write(&results, |f| f.write_all(results_json.as_bytes()))?;
    files.write(&per, |f| f.write_all(per_json.as_bytes()))?;
    Ok(())
}
