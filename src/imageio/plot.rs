//! Charts drawn into memory, so that they are written like every other output: to a
//! temporary first, and into place only when the whole run succeeded.

use anyhow::{Result, anyhow};
use plotters::coord::Shift;
use plotters::prelude::*;

/// A chart of `width` × `height` pixels, as RGB bytes for [`super::encode_png_rgb8`].
pub fn draw(
    width: u32,
    height: u32,
    chart: impl FnOnce(&DrawingArea<BitMapBackend<'_>, Shift>) -> Result<()>,
) -> Result<Vec<u8>> {
    let mut px = vec![0u8; width as usize * height as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut px, (width, height)).into_drawing_area();
        chart(&root)?;
        root.present().map_err(|e| anyhow!("{e}"))?;
    }
    Ok(px)
}
