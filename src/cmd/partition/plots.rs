//! PNG plots of a partition report: the four per-shard panels of the paper's Fig. 11
//! and the bytes of every tracer tile against the SRAM budget.

use std::path::Path;

use anyhow::{Context, anyhow};
use partition::{PartitionReport, ShardStats};
use plotters::prelude::*;

use crate::imageio::{self, plot};
use crate::outfiles::OutFiles;

/// The plots' file names in a report directory.
pub const FILES: [&str; 2] = ["shards.png", "tile_bytes.png"];

/// Draws both plots into the declared outputs `dir/FILES`.
pub fn write_all(report: &PartitionReport, dir: &Path, files: &mut OutFiles) -> anyhow::Result<()> {
    let shards = dir.join(FILES[0]);
    let px =
        plot::draw(1600, 1000, |root| fig11(report, root)).with_context(|| format!("plotting {}", shards.display()))?;
    files.write(&shards, |w| imageio::encode_png_rgb8(w, 1600, 1000, &px))?;
    let bytes = dir.join(FILES[1]);
    let px = plot::draw(1600, 600, |root| tile_bytes(report, root))
        .with_context(|| format!("plotting {}", bytes.display()))?;
    files.write(&bytes, |w| imageio::encode_png_rgb8(w, 1600, 600, &px))
}

type Root<'a> = DrawingArea<BitMapBackend<'a>, plotters::coord::Shift>;

/// A per-shard quantity to plot.
type Metric = fn(&ShardStats) -> u64;

/// plotters' errors borrow the backend; keep only their text.
fn err(e: impl std::fmt::Display) -> anyhow::Error {
    anyhow!("{e}")
}

/// One panel: a value per shard id.
fn panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    title: &str,
    shards: &[ShardStats],
    value: Metric,
    colour: RGBColor,
    budget: Option<u64>,
) -> anyhow::Result<()> {
    let n = shards.len() as u64;
    let max = shards.iter().map(value).max().unwrap_or(0).max(budget.unwrap_or(0)).max(1);
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 20))
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(70)
        .build_cartesian_2d(0..n, 0..max + max / 10)
        .map_err(err)?;
    chart.configure_mesh().x_desc("shard").disable_x_mesh().draw().map_err(err)?;
    chart
        .draw_series(shards.iter().map(|s| {
            let x = s.id as u64;
            Rectangle::new([(x, 0), (x + 1, value(s))], colour.filled())
        }))
        .map_err(err)?;
    if let Some(b) = budget {
        chart
            .draw_series(LineSeries::new([(0, b), (n, b)], RED.stroke_width(2)))
            .map_err(err)?
            .label(format!("budget {b} B"))
            .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], RED.stroke_width(2)));
        chart.configure_series_labels().border_style(BLACK).background_style(WHITE).draw().map_err(err)?;
    }
    Ok(())
}

fn fig11(r: &PartitionReport, root: &Root) -> anyhow::Result<()> {
    root.fill(&WHITE).map_err(err)?;
    let panels = root.split_evenly((2, 2));
    let specs: [(&str, Metric, RGBColor); 4] = [
        ("local cells", |s| s.local as u64, RGBColor(31, 119, 180)),
        ("halo (neighbour) cells", |s| s.halo as u64, RGBColor(255, 127, 14)),
        ("adjacency entries", |s| s.adjacency as u64, RGBColor(44, 160, 44)),
        ("neighbouring shards", |s| s.neighbour_shards as u64, RGBColor(148, 103, 189)),
    ];
    for (area, (title, value, colour)) in panels.iter().zip(specs) {
        panel(area, title, &r.shards, value, colour, None)?;
    }
    Ok(())
}

fn tile_bytes(r: &PartitionReport, root: &Root) -> anyhow::Result<()> {
    root.fill(&WHITE).map_err(err)?;
    let title =
        format!("tracer tile bytes ({} shards; worst shard {}: {} B)", r.shard_count, r.worst_shard, r.max_bytes);
    panel(root, &title, &r.shards, |s| s.bytes, RGBColor(31, 119, 180), Some(r.budget_bytes))
}
