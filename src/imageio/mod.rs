//! Image files in and out: 8-bit PNG, 16-bit depth PNG with a scale sidecar, colour-mapped
//! depth preview, and `.npy` for raw floats (chosen by the `.npy` extension).

pub mod npy;

use std::path::Path;

use anyhow::{Context, Result, bail};
use image::{ImageBuffer, Luma, Rgb};

pub fn is_npy(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("npy"))
}

/// 8-bit quantisation as the original's test script and viewer do: clip to [0, 1], then
/// truncate `v·255`.
#[inline]
pub fn to_u8(v: f32) -> u8 {
    (v.clamp(0.0, 1.0) * 255.0) as u8
}

/// An RGB image (3 floats per pixel in [0, 1]): PNG (8-bit) or `.npy` (H×W×3 f32).
pub fn write_rgb(path: &Path, width: u32, height: u32, rgb: &[f32]) -> Result<()> {
    if is_npy(path) {
        npy::write_npy_f32(path, &[height as usize, width as usize, 3], rgb)
    } else {
        let buf: ImageBuffer<Rgb<u8>, _> = ImageBuffer::from_raw(
            width,
            height,
            rgb.iter().map(|&v| to_u8(v)).collect::<Vec<u8>>(),
        )
        .expect("rgb buffer matches its size");
        buf.save_with_format(path, image::ImageFormat::Png)
            .map_err(std::io::Error::other)
    }
    .with_context(|| format!("writing {}", path.display()))
}

/// A grey plane (e.g. opacity in [0, 1]): PNG (8-bit) or `.npy` (H×W f32).
pub fn write_gray(path: &Path, width: u32, height: u32, v: &[f32]) -> Result<()> {
    if is_npy(path) {
        npy::write_npy_f32(path, &[height as usize, width as usize], v)
    } else {
        let buf: ImageBuffer<Luma<u8>, _> = ImageBuffer::from_raw(
            width,
            height,
            v.iter().map(|&x| to_u8(x)).collect::<Vec<u8>>(),
        )
        .expect("grey buffer matches its size");
        buf.save_with_format(path, image::ImageFormat::Png)
            .map_err(std::io::Error::other)
    }
    .with_context(|| format!("writing {}", path.display()))
}

/// Sidecar describing a 16-bit depth PNG: `depth = value · scale`, value 0 = no depth.
#[derive(Debug, serde::Serialize, serde::Deserialize, PartialEq)]
pub struct DepthScale {
    pub scale: f64,
    pub invalid_value: u16,
    pub max_depth: f64,
    pub note: String,
}

/// The sidecar's path: the depth file name with `.json` appended (`d.png` → `d.png.json`).
pub fn depth_sidecar_path(path: &Path) -> std::path::PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".json");
    s.into()
}

/// Depth (−1 = none): `.npy` keeps the floats; PNG is 16-bit grey with
/// `value = round(depth / scale)` (at least 1), `scale = max depth / 65535`, 0 where there
/// is no depth, and the scale in a sidecar JSON.
pub fn write_depth(path: &Path, width: u32, height: u32, depth: &[f32]) -> Result<()> {
    if is_npy(path) {
        return npy::write_npy_f32(path, &[height as usize, width as usize], depth)
            .with_context(|| format!("writing {}", path.display()));
    }
    let max = depth
        .iter()
        .copied()
        .filter(|d| *d >= 0.0)
        .fold(0.0f32, f32::max) as f64;
    let scale = if max > 0.0 { max / 65535.0 } else { 1.0 };
    let px: Vec<u16> = depth
        .iter()
        .map(|&d| {
            if d < 0.0 {
                0
            } else {
                ((d as f64 / scale).round() as u16).max(1)
            }
        })
        .collect();
    let buf: ImageBuffer<Luma<u16>, _> =
        ImageBuffer::from_raw(width, height, px).expect("depth buffer matches its size");
    buf.save_with_format(path, image::ImageFormat::Png)
        .with_context(|| format!("writing {}", path.display()))?;
    let side = depth_sidecar_path(path);
    let meta = DepthScale {
        scale,
        invalid_value: 0,
        max_depth: max,
        note: "depth = value * scale (distance along the unit ray); value 0 = transmittance never fell to the quantile".into(),
    };
    std::fs::write(&side, serde_json::to_string_pretty(&meta)? + "\n")
        .with_context(|| format!("writing {}", side.display()))
}

/// Viridis sampled at 0, ¼, ½, ¾, 1; interpolated linearly (enough for a preview).
const VIRIDIS: [[f32; 3]; 5] = [
    [68.0, 1.0, 84.0],
    [59.0, 82.0, 139.0],
    [33.0, 145.0, 140.0],
    [94.0, 201.0, 98.0],
    [253.0, 231.0, 37.0],
];

fn viridis(t: f32) -> [u8; 3] {
    let x = t.clamp(0.0, 1.0) * 4.0;
    let i = (x as usize).min(3);
    let f = x - i as f32;
    [0, 1, 2].map(|c| (VIRIDIS[i][c] + f * (VIRIDIS[i + 1][c] - VIRIDIS[i][c])).round() as u8)
}

/// A colour-mapped depth preview (viridis, near = dark, over the frame's depth range);
/// pixels without depth are black.
pub fn write_depth_preview(path: &Path, width: u32, height: u32, depth: &[f32]) -> Result<()> {
    let valid = depth.iter().copied().filter(|d| *d >= 0.0);
    let (lo, hi) = valid.fold((f32::INFINITY, f32::NEG_INFINITY), |(a, b), d| {
        (a.min(d), b.max(d))
    });
    let span = if hi > lo { hi - lo } else { 1.0 };
    let px: Vec<u8> = depth
        .iter()
        .flat_map(|&d| {
            if d < 0.0 {
                [0; 3]
            } else {
                viridis((d - lo) / span)
            }
        })
        .collect();
    let buf: ImageBuffer<Rgb<u8>, _> =
        ImageBuffer::from_raw(width, height, px).expect("preview buffer matches");
    buf.save_with_format(path, image::ImageFormat::Png)
        .with_context(|| format!("writing {}", path.display()))
}

/// An image loaded for comparison: RGB as f64 in [0, 1], row-major.
pub struct LoadedImage {
    pub width: usize,
    pub height: usize,
    pub rgb: Vec<f64>,
}

/// Reads a PNG (8/16-bit grey, grey+alpha, RGB or RGBA; alpha ignored) or a `.npy` of
/// shape H×W×3, H×W×4 (alpha ignored) or H×W (grey), floats in [0, 1] or u8.
pub fn read_image(path: &Path) -> Result<LoadedImage> {
    let ctx = || format!("reading {}", path.display());
    if is_npy(path) {
        let a = npy::read_npy(path)
            .map_err(anyhow::Error::msg)
            .with_context(ctx)?;
        let (h, w, ch) = match a.shape[..] {
            [h, w] => (h, w, 1),
            [h, w, c @ (1 | 3 | 4)] => (h, w, c),
            _ => bail!(
                "{}: .npy shape {:?} is not H×W, H×W×3 or H×W×4",
                path.display(),
                a.shape
            ),
        };
        let norm = if a.is_u8 { 1.0 / 255.0 } else { 1.0 };
        let rgb = a
            .data
            .chunks_exact(ch)
            .flat_map(|p| {
                if ch == 1 {
                    [p[0]; 3]
                } else {
                    [p[0], p[1], p[2]]
                }
            })
            .map(|v| v * norm)
            .collect();
        return Ok(LoadedImage {
            width: w,
            height: h,
            rgb,
        });
    }
    let img = image::open(path).with_context(ctx)?;
    let (w, h) = (img.width() as usize, img.height() as usize);
    let rgb = match img {
        image::DynamicImage::ImageLuma16(_)
        | image::DynamicImage::ImageLumaA16(_)
        | image::DynamicImage::ImageRgb16(_)
        | image::DynamicImage::ImageRgba16(_) => img
            .to_rgb16()
            .into_raw()
            .iter()
            .map(|&v| v as f64 / 65535.0)
            .collect(),
        _ => img
            .to_rgb8()
            .into_raw()
            .iter()
            .map(|&v| v as f64 / 255.0)
            .collect(),
    };
    Ok(LoadedImage {
        width: w,
        height: h,
        rgb,
    })
}
