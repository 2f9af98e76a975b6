//! Per-pixel hop maps and their histogram (paper Fig. 14): where rays cross many
//! shard boundaries, and how long they live in the routing tree.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use plotters::prelude::*;

use crate::device::DeviceFrame;
use crate::imageio::{self, plot};
use crate::outfiles::OutFiles;

const MAPS: [&str; 2] = ["router_hops.png", "tracer_hops.png"];
const HISTOGRAM: &str = "hops_histogram.png";
const HISTOGRAM_SIZE: (u32, u32) = (900, 500);

/// The files [`write`] makes in `dir`.
pub fn files(dir: &Path) -> Vec<PathBuf> {
    MAPS.iter().chain([&HISTOGRAM]).map(|n| dir.join(n)).collect()
}

/// Writes `router_hops.png`, `tracer_hops.png` (hops as grey levels, 255 = 255 or
/// more, as in the paper) and `hops_histogram.png` into the declared outputs [`files`].
pub fn write(dir: &Path, frame: &DeviceFrame, out: &mut OutFiles) -> Result<()> {
    let (Some(router), Some(tracer)) = (&frame.router_hops, &frame.tracer_hops) else {
        anyhow::bail!("the frame was rendered without hop counters");
    };
    let (w, h) = (frame.output.width, frame.output.height);
    for (name, hops) in MAPS.iter().zip([router, tracer]) {
        let grey: Vec<u8> = hops.iter().map(|&v| v.min(255) as u8).collect();
        out.write(&dir.join(name), |f| imageio::encode_png_gray8(f, w, h, &grey))?;
    }
    let path = dir.join(HISTOGRAM);
    let (hw, hh) = HISTOGRAM_SIZE;
    let px = plot::draw(hw, hh, |root| histogram(root, router, tracer))
        .with_context(|| format!("plotting {}", path.display()))?;
    out.write(&path, |f| imageio::encode_png_rgb8(f, hw, hh, &px))
}

fn histogram(
    root: &DrawingArea<BitMapBackend<'_>, plotters::coord::Shift>,
    router: &[u16],
    tracer: &[u16],
) -> Result<()> {
    let max = router.iter().chain(tracer).copied().max().unwrap_or(0) as usize + 1;
    let count = |v: &[u16]| {
        let mut c = vec![0u32; max];
        for &x in v {
            c[x as usize] += 1;
        }
        c
    };
    let (cr, ct) = (count(router), count(tracer));
    let top = cr.iter().chain(&ct).copied().max().unwrap_or(1).max(1);
    let mean = |v: &[u16]| v.iter().map(|&x| x as f64).sum::<f64>() / v.len().max(1) as f64;
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(root)
        .caption(
            format!("Hops per pixel: router mean {:.1}, tracer mean {:.1}", mean(router), mean(tracer)),
            ("sans-serif", 20),
        )
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0usize..max, 0u32..top + top / 10 + 1)?;
    chart.configure_mesh().x_desc("hops until the ray finished").y_desc("pixels").draw()?;
    for (c, colour, label) in [(&cr, BLUE, "router hops"), (&ct, RED, "tracer hops")] {
        chart
            .draw_series(LineSeries::new(c.iter().enumerate().map(|(i, &n)| (i, n)), colour.stroke_width(2)))?
            .label(label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2)));
    }
    chart.configure_series_labels().background_style(WHITE.mix(0.8)).border_style(BLACK).draw()?;
    Ok(())
}
