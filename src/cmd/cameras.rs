//! `foam-ipu cameras`: list the views of a COLMAP model (and the original's test split).

use std::path::PathBuf;

use anyhow::Result;
use serde::Serialize;

use crate::camera::colmap::read_colmap;
use crate::camera::json::{IntrinsicsJson, camera_to_json};

#[derive(clap::Args, Debug)]
#[command(
    about = "List the views of a COLMAP model (index, name, intrinsics, position)",
    long_about = "List the views of a COLMAP text model in the original's order (sorted by \
image name); the index is what `--view INDEX` takes. The original's test split is every 8th \
view of that order (index % 8 == 0). With --json each view's camera is printed in the c2w \
form of the camera JSON, ready for --camera."
)]
pub struct Args {
    /// COLMAP text model: DIR holds cameras.txt and images.txt (or DIR/sparse/0 does).
    #[arg(long, value_name = "DIR")]
    pub colmap: PathBuf,
    /// Only the test split (every 8th view by name, as the original's evaluation).
    #[arg(long)]
    pub test_views: bool,
    /// Divide the intrinsics by K (images_K), as the original does.
    #[arg(long, value_name = "K")]
    pub downsample: Option<u32>,
    /// Print JSON: a list of {index, name, test, camera}.
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct ViewJson<'a> {
    index: usize,
    name: &'a str,
    test: bool,
    camera: IntrinsicsJson,
}

pub fn run(args: Args) -> Result<()> {
    let model = read_colmap(&args.colmap)?;
    let mut rows = Vec::new();
    for (i, v) in model.views.iter().enumerate() {
        let test = i % 8 == 0;
        if args.test_views && !test {
            continue;
        }
        let cam = match args.downsample {
            Some(k) => v.camera.downsampled(k).map_err(|e| anyhow::anyhow!("--downsample: {e}"))?,
            None => v.camera,
        };
        rows.push((i, v.name.as_str(), test, cam));
    }
    if args.json {
        let out: Vec<ViewJson> = rows
            .iter()
            .map(|&(index, name, test, ref c)| ViewJson { index, name, test, camera: camera_to_json(c) })
            .collect();
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    println!(
        "# {} views in {} ({} test views: every 8th by name)",
        model.views.len(),
        model.dir.display(),
        model.test_indices().len()
    );
    println!("# index  name  width height  fx fy cx cy  position  [test]");
    for (i, name, test, c) in rows {
        let p = c.position;
        println!(
            "{i} {name} {} {} {} {} {} {} {} {} {}{}",
            c.width,
            c.height,
            c.fx,
            c.fy,
            c.cx,
            c.cy,
            p.x,
            p.y,
            p.z,
            if test { " test" } else { "" }
        );
    }
    Ok(())
}
