//! Image files in and out: 8-bit PNG, 16-bit depth PNG with a scale sidecar, colour-mapped
//! depth preview, and `.npy` for raw floats (chosen by the `.npy` extension).

pub mod npy;
pub mod plot;

use std::io::{self, Write};
use std::path::Path;

use anyhow::{Context, Result, bail};
use image::ExtendedColorType;
use image::ImageEncoder;
use image::codecs::png::PngEncoder;

pub fn is_npy(path: &Path) -> bool {
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case("npy"))
}

/// 8-bit quantisation as the original's test script and viewer do: clip to [0, 1], then
/// truncate `v·255`.
#[inline]
pub fn to_u8(v: f32) -> u8 {
    (v.clamp(0.0, 1.0) * 255.0) as u8
}

/// Encodes a PNG of `color` samples (16-bit ones in native byte order) into `w`.
fn encode_png(w: &mut dyn Write, width: u32, height: u32, bytes: &[u8], color: ExtendedColorType) -> io::Result<()> {
    PngEncoder::new(w).write_image(bytes, width, height, color).map_err(|e| match e {
        image::ImageError::IoError(e) => e,
        e => io::Error::other(e),
    })
}

/// An 8-bit RGB PNG of `width` × `height` pixels, 3 bytes each.
pub fn encode_png_rgb8(w: &mut dyn Write, width: u32, height: u32, px: &[u8]) -> io::Result<()> {
    encode_png(w, width, height, px, ExtendedColorType::Rgb8)
}

/// An 8-bit grey PNG of `width` × `height` pixels.
pub fn encode_png_gray8(w: &mut dyn Write, width: u32, height: u32, px: &[u8]) -> io::Result<()> {
    encode_png(w, width, height, px, ExtendedColorType::L8)
}

/// An RGB image (3 floats per pixel in [0, 1]): PNG (8-bit) or `.npy` (H×W×3 f32).
pub fn encode_rgb(w: &mut dyn Write, npy: bool, width: u32, height: u32, rgb: &[f32]) -> io::Result<()> {
    if npy {
        npy::encode_npy_f32(w, &[height as usize, width as usize, 3], rgb)
    } else {
        let px: Vec<u8> = rgb.iter().map(|&v| to_u8(v)).collect();
        encode_png_rgb8(w, width, height, &px)
    }
}

/// Writes [`encode_rgb`] to `path` (all or nothing; `.npy` by the extension).
pub fn write_rgb(path: &Path, width: u32, height: u32, rgb: &[f32]) -> Result<()> {
    crate::outfiles::write_file(path, |w| encode_rgb(w, is_npy(path), width, height, rgb))
}

/// A grey plane (e.g. opacity in [0, 1]): PNG (8-bit) or `.npy` (H×W f32).
pub fn encode_gray(w: &mut dyn Write, npy: bool, width: u32, height: u32, v: &[f32]) -> io::Result<()> {
    if npy {
        npy::encode_npy_f32(w, &[height as usize, width as usize], v)
    } else {
        let px: Vec<u8> = v.iter().map(|&x| to_u8(x)).collect();
        encode_png_gray8(w, width, height, &px)
    }
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

/// Depth (−1 = none) as a 16-bit PNG: `value = round(depth / scale)` (at least 1),
/// `scale = max depth / 65535`, 0 where there is no depth. Returns the PNG's samples
/// and the scale for its sidecar.
pub fn depth_png(depth: &[f32]) -> (Vec<u16>, DepthScale) {
    let max = depth.iter().copied().filter(|d| *d >= 0.0).fold(0.0f32, f32::max) as f64;
    let scale = if max > 0.0 { max / 65535.0 } else { 1.0 };
    let px = depth.iter().map(|&d| if d < 0.0 { 0 } else { ((d as f64 / scale).round() as u16).max(1) }).collect();
    let meta = DepthScale {
        scale,
        invalid_value: 0,
        max_depth: max,
        note: "depth = value * scale (distance along the unit ray); value 0 = transmittance never fell to the quantile"
            .into(),
    };
    (px, meta)
}

/// A 16-bit grey PNG of `width` × `height` samples.
pub fn encode_png_gray16(w: &mut dyn Write, width: u32, height: u32, px: &[u16]) -> io::Result<()> {
    let bytes: Vec<u8> = px.iter().flat_map(|v| v.to_ne_bytes()).collect();
    encode_png(w, width, height, &bytes, ExtendedColorType::L16)
}

/// Viridis sampled at 0, ¼, ½, ¾, 1; interpolated linearly (enough for a preview).
const VIRIDIS: [[f32; 3]; 5] =
    [[68.0, 1.0, 84.0], [59.0, 82.0, 139.0], [33.0, 145.0, 140.0], [94.0, 201.0, 98.0], [253.0, 231.0, 37.0]];

fn viridis(t: f32) -> [u8; 3] {
    let x = t.clamp(0.0, 1.0) * 4.0;
    let i = (x as usize).min(3);
    let f = x - i as f32;
    [0, 1, 2].map(|c| (VIRIDIS[i][c] + f * (VIRIDIS[i + 1][c] - VIRIDIS[i][c])).round() as u8)
}

/// A colour-mapped depth preview (viridis, near = dark, over the frame's depth range);
/// pixels without depth are black.
pub fn encode_depth_preview(w: &mut dyn Write, width: u32, height: u32, depth: &[f32]) -> io::Result<()> {
    encode_png_rgb8(w, width, height, &depth_preview_px(depth, depth_range(depth)))
}

/// The range of the valid (non-negative) depths, `(lo, hi)`; `lo > hi` when none is.
pub fn depth_range(depth: &[f32]) -> (f32, f32) {
    depth
        .iter()
        .copied()
        .filter(|d| *d >= 0.0)
        .fold((f32::INFINITY, f32::NEG_INFINITY), |(a, b), d| (a.min(d), b.max(d)))
}

/// RGB bytes of the depth preview over the depth range `(lo, hi)`.
pub fn depth_preview_px(depth: &[f32], (lo, hi): (f32, f32)) -> Vec<u8> {
    let span = if hi > lo { hi - lo } else { 1.0 };
    depth.iter().flat_map(|&d| if d < 0.0 { [0; 3] } else { viridis((d - lo) / span) }).collect()
}

/// An image loaded for comparison: RGB as f64 in [0, 1], row-major.
pub struct LoadedImage {
    pub width: usize,
    pub height: usize,
    pub rgb: Vec<f64>,
}

/// What reading back an RGB image written by [`encode_rgb`] gives: the floats of a
/// `.npy`, or the 8-bit levels of a PNG.
pub fn as_written(npy: bool, width: u32, height: u32, rgb: &[f32]) -> LoadedImage {
    let rgb = if npy {
        rgb.iter().map(|&v| v as f64).collect()
    } else {
        rgb.iter().map(|&v| to_u8(v) as f64 / 255.0).collect()
    };
    LoadedImage { width: width as usize, height: height as usize, rgb }
}

/// Reads a PNG (8/16-bit grey, grey+alpha, RGB or RGBA; alpha ignored) or a `.npy` of
/// shape H×W×3, H×W×4 (alpha ignored) or H×W (grey), floats in [0, 1] or u8.
pub fn read_image(path: &Path) -> Result<LoadedImage> {
    let ctx = || format!("reading {}", path.display());
    if is_npy(path) {
        let a = npy::read_npy(path).map_err(anyhow::Error::msg).with_context(ctx)?;
        let (h, w, ch) = match a.shape[..] {
            [h, w] => (h, w, 1),
            [h, w, c @ (1 | 3 | 4)] => (h, w, c),
            _ => bail!("{}: .npy shape {:?} is not H×W, H×W×3 or H×W×4", path.display(), a.shape),
        };
        if let Some(i) = a.data.iter().position(|v| !v.is_finite()) {
            let (p, c) = (i / ch, i % ch);
            bail!(
                "{}: value {} at row {}, column {}, channel {c} is not a finite number",
                path.display(),
                a.data[i],
                p / w,
                p % w
            );
        }
        let norm = if a.is_u8 { 1.0 / 255.0 } else { 1.0 };
        let rgb = a
            .data
            .chunks_exact(ch)
            .flat_map(|p| if ch == 1 { [p[0]; 3] } else { [p[0], p[1], p[2]] })
            .map(|v| v * norm)
            .collect();
        return Ok(LoadedImage { width: w, height: h, rgb });
    }
    // The message alone: image's errors also return their io::Error as the source.
    let img = image::open(path).map_err(|e| anyhow::anyhow!("{}: {e}", ctx()))?;
    let (w, h) = (img.width() as usize, img.height() as usize);
    let rgb = match img {
        image::DynamicImage::ImageLuma16(_)
        | image::DynamicImage::ImageLumaA16(_)
        | image::DynamicImage::ImageRgb16(_)
        | image::DynamicImage::ImageRgba16(_) => {
            img.to_rgb16().into_raw().iter().map(|&v| v as f64 / 65535.0).collect()
        }
        _ => img.to_rgb8().into_raw().iter().map(|&v| v as f64 / 255.0).collect(),
    };
    Ok(LoadedImage { width: w, height: h, rgb })
}
