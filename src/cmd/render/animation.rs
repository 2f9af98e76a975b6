//! A sequence of views as one animation: a GIF (`.gif`, 256 colours per frame)
//! or an animated PNG (`.png`, lossless), 25 frames a second, looping; with
//! depth asked for, each frame shows the depth (viridis, over the whole
//! sequence's depth range) beside the colour, as gsplat's trajectory videos do.

use std::io;
use std::path::Path;

use anyhow::{Result, bail};

use crate::imageio;
use crate::outfiles::OutFiles;
use crate::reference::RenderOutput;

/// Hundredths of a second per frame.
const DELAY_CS: u16 = 4;

/// One view's pictures, as the animation shows them.
pub struct Frame {
    width: u32,
    height: u32,
    rgb: Vec<u8>,
    depth: Option<Vec<f32>>,
}

impl Frame {
    pub fn of(out: &RenderOutput, background: [f32; 3], depth: bool) -> Frame {
        let rgb = out.composite(background).iter().map(|&v| imageio::to_u8(v)).collect();
        Frame { width: out.width, height: out.height, rgb, depth: depth.then(|| out.depth.clone()) }
    }
}

/// Whether `path` names an animation format this writes.
pub fn check_path(path: &Path) -> Result<()> {
    match format(path) {
        Some(_) => Ok(()),
        None => bail!("--animation {}: the name must end in .gif or .png (APNG)", path.display()),
    }
}

fn format(path: &Path) -> Option<bool> {
    let ext = path.extension()?.to_string_lossy().to_ascii_lowercase();
    match ext.as_str() {
        "gif" => Some(true),
        "png" => Some(false),
        _ => None,
    }
}

/// Writes `frames` (all of one size) to the declared output `path`.
pub fn write(path: &Path, frames: &[Frame], files: &mut OutFiles) -> Result<()> {
    let Some(first) = frames.first() else { bail!("--animation {}: no frames", path.display()) };
    let range = frames
        .iter()
        .filter_map(|f| f.depth.as_deref())
        .map(imageio::depth_range)
        .fold((f32::INFINITY, f32::NEG_INFINITY), |(a, b), (lo, hi)| (a.min(lo), b.max(hi)));
    let wide = if first.depth.is_some() { 2 } else { 1 };
    let (w, h) = (first.width * wide, first.height);
    let pictures: Vec<Vec<u8>> = frames.iter().map(|f| picture(f, range)).collect();
    let gif = format(path) == Some(true);
    files.write(path, |out| if gif { encode_gif(out, w, h, &pictures) } else { encode_apng(out, w, h, &pictures) })
}

/// The frame's RGB rows, colour then (if any) depth preview.
fn picture(f: &Frame, range: (f32, f32)) -> Vec<u8> {
    let Some(depth) = &f.depth else { return f.rgb.clone() };
    let preview = imageio::depth_preview_px(depth, range);
    let row = 3 * f.width as usize;
    f.rgb.chunks_exact(row).zip(preview.chunks_exact(row)).flat_map(|(a, b)| a.iter().chain(b).copied()).collect()
}

fn encode_gif(out: &mut dyn io::Write, w: u32, h: u32, pictures: &[Vec<u8>]) -> io::Result<()> {
    let too_big = || io::Error::other(format!("a {w}x{h} frame is larger than a GIF holds (65535 per side)"));
    let (gw, gh) = (u16::try_from(w).map_err(|_| too_big())?, u16::try_from(h).map_err(|_| too_big())?);
    let mut enc = gif::Encoder::new(out, gw, gh, &[]).map_err(io::Error::other)?;
    enc.set_repeat(gif::Repeat::Infinite).map_err(io::Error::other)?;
    for px in pictures {
        let mut frame = gif::Frame::from_rgb_speed(gw, gh, px, 10);
        frame.delay = DELAY_CS;
        enc.write_frame(&frame).map_err(io::Error::other)?;
    }
    Ok(())
}

fn encode_apng(out: &mut dyn io::Write, w: u32, h: u32, pictures: &[Vec<u8>]) -> io::Result<()> {
    let mut enc = png::Encoder::new(out, w, h);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    enc.set_animated(pictures.len() as u32, 0).map_err(io::Error::other)?;
    enc.set_frame_delay(DELAY_CS, 100).map_err(io::Error::other)?;
    let mut writer = enc.write_header().map_err(io::Error::other)?;
    for px in pictures {
        writer.write_image_data(px).map_err(io::Error::other)?;
    }
    writer.finish().map_err(io::Error::other)
}
