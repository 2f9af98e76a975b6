//! Camera options shared by every command that renders (`#[command(flatten)]` them).
//!
//! Checks are done here rather than by clap so that a bad combination is a one-line error
//! with exit status 1 like every other bad input.

use std::path::PathBuf;

use super::{Camera, CameraError, colmap, json};

#[derive(clap::Args, Clone, Debug, Default)]
pub struct CameraArgs {
    /// Camera JSON: {"width","height","fx","fy","cx","cy","c2w":[[4x4]]} (camera-to-world,
    /// OpenCV axes: x right, y down, z forward) or {"width","height","fov_y_deg",
    /// "position","look_at","up"}.
    #[arg(long, value_name = "CAM.json", help_heading = "Camera")]
    pub camera: Option<PathBuf>,
    /// COLMAP text model: DIR holds cameras.txt and images.txt (or DIR/sparse/0 does).
    /// PINHOLE and SIMPLE_PINHOLE only.
    #[arg(long, value_name = "DIR", help_heading = "Camera")]
    pub colmap: Option<PathBuf>,
    /// The COLMAP view: image name (with or without extension) or index in name order
    /// (`foam-ipu cameras --colmap DIR` lists them; the test split is every 8th).
    #[arg(long, value_name = "NAME|INDEX", help_heading = "Camera")]
    pub view: Option<String>,
    /// Divide the intrinsics by K, as the original does for images_K (outdoor 4, indoor 2).
    #[arg(long, value_name = "K", help_heading = "Camera")]
    pub downsample: Option<u32>,
    /// Output width; intrinsics are rescaled (height follows the aspect ratio if not given).
    #[arg(long, value_name = "PX", help_heading = "Camera")]
    pub width: Option<u32>,
    /// Output height; intrinsics are rescaled (width follows the aspect ratio if not given).
    #[arg(long, value_name = "PX", help_heading = "Camera")]
    pub height: Option<u32>,
    /// Put the principal point at the image centre, as the original's COLMAP loader does
    /// (it ignores cx, cy).
    #[arg(long, help_heading = "Camera")]
    pub centre_principal_point: bool,
}

impl CameraArgs {
    /// The files the options read (an output may not be one of them).
    pub fn input_files(&self) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = self.camera.iter().cloned().collect();
        if let Some(dir) = self.colmap.as_deref().and_then(|d| colmap::model_dir(d).ok()) {
            files.extend(["cameras.txt", "images.txt"].map(|f| dir.join(f)));
        }
        files
    }
}

/// The camera the options describe; also returns a label for reports (file or view name).
pub fn load_camera(args: &CameraArgs) -> Result<(Camera, String), CameraError> {
    let (cam, label) = match (&args.camera, &args.colmap) {
        (Some(_), Some(_)) => {
            return Err(CameraError::Args("give either --camera or --colmap, not both".into()));
        }
        (None, None) => {
            return Err(CameraError::Args(
                "no camera: pass --camera CAM.json or --colmap DIR --view NAME|INDEX, or put SCENE.camera.json beside the scene"
                    .into(),
            ));
        }
        (Some(path), None) => {
            if args.view.is_some() {
                return Err(CameraError::Args("--view selects a COLMAP view; it needs --colmap DIR".into()));
            }
            (json::read_camera_json(path)?, path.display().to_string())
        }
        (None, Some(dir)) => {
            let sel = args.view.as_deref().ok_or_else(|| {
                CameraError::Args(
                    "--colmap needs --view NAME|INDEX (list views with `foam-ipu cameras --colmap DIR`)".into(),
                )
            })?;
            let model = colmap::read_colmap(dir)?;
            let (i, v) = model.select(sel)?;
            (v.camera, format!("{} (view {i})", v.name))
        }
    };
    Ok((adjusted(args, cam)?, label))
}

/// `cam` with the options' downsampling, resizing and centring applied.
pub fn adjusted(args: &CameraArgs, mut cam: Camera) -> Result<Camera, CameraError> {
    if let Some(k) = args.downsample {
        cam = cam.downsampled(k).map_err(|e| CameraError::Args(format!("--downsample: {e}")))?;
    }
    if args.width.is_some() || args.height.is_some() {
        let aspect = |num: u32, a: u32, b: u32| ((num as f64 * a as f64 / b as f64).round() as u32).max(1);
        let (w, h) = match (args.width, args.height) {
            (Some(w), Some(h)) => (w, h),
            (Some(w), None) => (w, aspect(w, cam.height, cam.width)),
            (None, Some(h)) => (aspect(h, cam.width, cam.height), h),
            (None, None) => unreachable!(),
        };
        cam = cam.resized(w, h).map_err(|e| CameraError::Args(format!("--width/--height: {e}")))?;
    }
    if args.centre_principal_point {
        cam = cam.centred();
    }
    Ok(cam)
}
