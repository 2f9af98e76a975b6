//! Sweep plots: iterations, host-runtime frame time and estimated IPU frame time per
//! swept value (rc like the paper's Fig. 13; batch settings like its Tab. 3/5/6).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use plotters::prelude::*;

use super::SweepReport;
use crate::imageio::{self, plot};
use crate::outfiles::OutFiles;

/// The plot's path for a sweep of `parameter`.
pub fn path(dir: &Path, parameter: &str) -> PathBuf {
    dir.join(format!("sweep_{parameter}.png"))
}

/// Draws the sweep's plot into the declared output [`path`].
pub fn write(dir: &Path, s: &SweepReport, files: &mut OutFiles) -> Result<()> {
    let path = path(dir, &s.parameter);
    let (width, height) = (420 * panels(s).len() as u32, 420);
    let px = plot::draw(width, height, |root| draw(root, s)).with_context(|| format!("plotting {}", path.display()))?;
    files.write(&path, |w| imageio::encode_png_rgb8(w, width, height, &px))
}

type Panel = (&'static str, &'static str, Vec<f64>);

/// Iterations, host time and (when every point has one) the IPU estimate per point.
fn panels(s: &SweepReport) -> Vec<Panel> {
    let mut panels: Vec<Panel> = vec![
        ("Iterations per frame", "iterations", s.points.iter().map(|p| p.stats.iterations as f64).collect()),
        ("Frame time, host runtime", "seconds", s.points.iter().map(|p| p.device_s).collect()),
    ];
    if s.points.iter().all(|p| p.estimate.is_some()) {
        let ms = s.points.iter().filter_map(|p| p.estimate.as_ref()).map(|e| e.frame_s * 1e3).collect();
        panels.push(("Frame time, Mk2 IPU (estimate)", "milliseconds", ms));
    }
    panels
}

fn draw(root: &DrawingArea<BitMapBackend<'_>, plotters::coord::Shift>, s: &SweepReport) -> Result<()> {
    let labels: Vec<String> =
        s.points.iter().map(|p| if s.parameter == "rc" { p.rc.to_string() } else { p.batch.clone() }).collect();
    let panels = panels(s);
    root.fill(&WHITE)?;
    let areas = root.split_evenly((1, panels.len()));
    let n = labels.len();
    for (area, (title, unit, values)) in areas.iter().zip(&panels) {
        let top = values.iter().copied().fold(0.0f64, f64::max);
        let top = if top > 0.0 { top * 1.15 } else { 1.0 };
        let mut chart = ChartBuilder::on(area)
            .caption(*title, ("sans-serif", 18))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(-0.5f64..n as f64 - 0.5, 0.0..top)?;
        chart
            .configure_mesh()
            .x_labels(n)
            .x_label_formatter(&|x| {
                let i = x.round();
                if (x - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < n {
                    labels[i as usize].clone()
                } else {
                    String::new()
                }
            })
            .x_desc(s.parameter.as_str())
            .y_desc(*unit)
            .draw()?;
        let pts: Vec<(f64, f64)> = values.iter().enumerate().map(|(i, &v)| (i as f64, v)).collect();
        chart.draw_series(LineSeries::new(pts.clone(), BLUE.stroke_width(2)))?;
        chart.draw_series(pts.iter().map(|&p| Circle::new(p, 4, BLUE.filled())))?;
    }
    Ok(())
}
