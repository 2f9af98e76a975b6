//! `foam-ipu compare`: PSNR/SSIM and pixel differences between two images or two
//! directories of images paired by file name.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use serde::Serialize;

use crate::imageio::{LoadedImage, read_image};
use crate::metrics::{diff_stats, psnr, ssim};

#[derive(clap::Args, Debug)]
#[command(
    about = "Compare two images (or two directories of images paired by name): PSNR, SSIM, differences",
    long_about = "Compare two images, or two directories whose .png/.npy files are paired by \
name. Images are RGB in [0, 1] (8/16-bit PNG, alpha ignored; .npy float H×W×3 or H×W). \
PSNR is 20·log10(1/√mse) as the original's test script computes it (inf for identical \
images; null in JSON); SSIM is scikit-image's structural_similarity(gaussian_weights=True, \
sigma=1.5, use_sample_covariance=False, data_range=1) averaged over RGB (null below 11×11). \
Also the largest absolute difference and the number of pixels differing by more than \
--tolerance. Images of different sizes are refused.\n\n\
Exit status: 0 when compared, 1 on bad input, 2 when --min-psnr is given and the PSNR (the \
mean PSNR for directories) is below it."
)]
pub struct Args {
    /// First image or directory (e.g. the reference rendering).
    pub a: PathBuf,
    /// Second image or directory.
    pub b: PathBuf,
    /// Print JSON (keys psnr, ssim, max_abs_diff, differing_pixels; for directories also
    /// mean_psnr, mean_ssim and per-pair entries).
    #[arg(long)]
    pub json: bool,
    /// Exit with status 2 if the PSNR (mean for directories) is below X dB.
    #[arg(long, value_name = "X")]
    pub min_psnr: Option<f64>,
    /// A pixel counts as differing when a channel differs by more than this (in [0, 1]).
    #[arg(long, default_value_t = 0.0, value_name = "T")]
    pub tolerance: f64,
}

#[derive(Serialize, Debug)]
pub struct PairResult {
    pub name: String,
    pub width: usize,
    pub height: usize,
    pub psnr: f64,
    pub ssim: Option<f64>,
    pub max_abs_diff: f64,
    pub differing_pixels: usize,
    pub pixels: usize,
}

pub fn compare_files(a: &Path, b: &Path, tolerance: f64) -> Result<PairResult> {
    let ia = read_image(a)?;
    let ib = read_image(b)?;
    compare_images(&ia, &ib, a, b, tolerance)
}

pub fn compare_images(ia: &LoadedImage, ib: &LoadedImage, a: &Path, b: &Path, tolerance: f64) -> Result<PairResult> {
    if (ia.width, ia.height) != (ib.width, ib.height) {
        bail!(
            "size mismatch: {} is {}x{}, {} is {}x{}",
            a.display(),
            ia.width,
            ia.height,
            b.display(),
            ib.width,
            ib.height
        );
    }
    let d = diff_stats(&ia.rgb, &ib.rgb, 3, tolerance);
    Ok(PairResult {
        name: a.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
        width: ia.width,
        height: ia.height,
        psnr: psnr(&ia.rgb, &ib.rgb),
        ssim: ssim(&ia.rgb, &ib.rgb, ia.width, ia.height, 3),
        max_abs_diff: d.max_abs,
        differing_pixels: d.differing_pixels,
        pixels: ia.width * ia.height,
    })
}

fn image_names(dir: &Path) -> Result<Vec<String>> {
    let mut names = Vec::new();
    let entries = std::fs::read_dir(dir).map_err(|e| anyhow::anyhow!("{}: {e}", dir.display()))?;
    for e in entries {
        let e = e.map_err(|e| anyhow::anyhow!("{}: {e}", dir.display()))?;
        let name = e.file_name().to_string_lossy().into_owned();
        let lower = name.to_ascii_lowercase();
        if e.path().is_file() && (lower.ends_with(".png") || lower.ends_with(".npy")) {
            names.push(name);
        }
    }
    names.sort();
    Ok(names)
}

#[derive(Serialize)]
struct DirResult {
    pairs: Vec<PairResult>,
    mean_psnr: f64,
    mean_ssim: Option<f64>,
    /// Files present in only one of the directories (not compared).
    unpaired: Vec<String>,
}

fn fmt_psnr(p: f64) -> String {
    if p.is_infinite() { "inf".into() } else { format!("{p:.4}") }
}

fn fmt_ssim(s: Option<f64>) -> String {
    s.map_or("n/a (smaller than 11x11)".into(), |v| format!("{v:.6}"))
}

pub fn run(args: Args) -> Result<()> {
    for p in [&args.a, &args.b] {
        if !p.exists() {
            bail!("{}: no such file or directory", p.display());
        }
    }
    if args.min_psnr.is_some_and(f64::is_nan) {
        bail!("--min-psnr NaN: expected a number of dB");
    }
    if args.tolerance.is_nan() || args.tolerance < 0.0 {
        bail!("--tolerance {} must be ≥ 0", args.tolerance);
    }
    let (a_dir, b_dir) = (args.a.is_dir(), args.b.is_dir());
    let score = if a_dir != b_dir {
        bail!("{} and {}: compare two files or two directories, not one of each", args.a.display(), args.b.display());
    } else if !a_dir {
        let r = compare_files(&args.a, &args.b, args.tolerance)?;
        if args.json {
            println!("{}", serde_json::to_string_pretty(&r)?);
        } else {
            println!(
                "psnr {} dB  ssim {}  max |diff| {:.6}  differing pixels {} / {}",
                fmt_psnr(r.psnr),
                fmt_ssim(r.ssim),
                r.max_abs_diff,
                r.differing_pixels,
                r.pixels
            );
        }
        r.psnr
    } else {
        let (na, nb) = (image_names(&args.a)?, image_names(&args.b)?);
        let common: Vec<&String> = na.iter().filter(|n| nb.contains(n)).collect();
        if common.is_empty() {
            bail!("{} and {}: no .png/.npy files with the same name", args.a.display(), args.b.display());
        }
        let unpaired: Vec<String> = na.iter().chain(&nb).filter(|n| !common.contains(n)).cloned().collect();
        let pairs = common
            .iter()
            .map(|n| compare_files(&args.a.join(n), &args.b.join(n), args.tolerance))
            .collect::<Result<Vec<_>>>()?;
        let k = pairs.len() as f64;
        let mean_psnr = pairs.iter().map(|p| p.psnr).sum::<f64>() / k;
        let mean_ssim = pairs.iter().map(|p| p.ssim).sum::<Option<f64>>().map(|s| s / k);
        let res = DirResult { pairs, mean_psnr, mean_ssim, unpaired };
        if args.json {
            println!("{}", serde_json::to_string_pretty(&res)?);
        } else {
            for p in &res.pairs {
                println!(
                    "{}: psnr {} dB  ssim {}  max |diff| {:.6}  differing pixels {} / {}",
                    p.name,
                    fmt_psnr(p.psnr),
                    fmt_ssim(p.ssim),
                    p.max_abs_diff,
                    p.differing_pixels,
                    p.pixels
                );
            }
            println!(
                "mean over {} pairs: psnr {} dB  ssim {}",
                res.pairs.len(),
                fmt_psnr(mean_psnr),
                fmt_ssim(mean_ssim)
            );
            if !res.unpaired.is_empty() {
                println!("unpaired (not compared): {}", res.unpaired.join(", "));
            }
        }
        mean_psnr
    };
    if let Some(min) = args.min_psnr
        && (score.is_nan() || score < min)
    {
        std::io::stdout().flush()?;
        return Err(crate::cmd::CheckFailed(format!("PSNR {} dB is below --min-psnr {min}", fmt_psnr(score))).into());
    }
    Ok(())
}
