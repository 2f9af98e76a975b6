//! Sets of views for one run: a COLMAP model's test split or every view, a
//! directory or JSON array of cameras, a nerfstudio camera path, or an orbit.
//! Every view is named: the output of view `name` is `name.png`.

use std::path::{Path, PathBuf};

use super::args::{CameraArgs, adjusted};
use super::{Camera, CameraError, colmap, json, path};

#[derive(clap::Args, Clone, Debug, Default)]
pub struct ViewArgs {
    /// With --colmap: render the test split (every 8th view in name order, as the
    /// original's evaluation) into the -o directory.
    #[arg(long, help_heading = "Views")]
    pub test_views: bool,
    /// With --colmap: render every view into the -o directory.
    #[arg(long, help_heading = "Views", conflicts_with = "test_views")]
    pub all_views: bool,
    /// A directory of camera JSON files (each view named for its file, in name
    /// order) or one JSON file holding an array of cameras (views 00000, 00001, …).
    #[arg(long, value_name = "PATH", help_heading = "Views")]
    pub cameras: Option<PathBuf>,
    /// A nerfstudio camera_path.json (render_width, render_height, camera_path[] of
    /// camera_to_world and fov; OpenGL axes): views 00000, 00001, ….
    #[arg(long, value_name = "FILE", help_heading = "Views")]
    pub camera_path: Option<PathBuf>,
    /// N views on a circle around the scene's centre of interest, the first the
    /// camera given (or SCENE.camera.json; with neither, one looking down on the
    /// middle of the scene's sites), turning about the vertical.
    #[arg(long, value_name = "N", help_heading = "Views")]
    pub orbit: Option<usize>,
}

/// The most views `--orbit` makes: every view is sampled for the plan and kept
/// until the run ends.
pub const MAX_ORBIT_VIEWS: usize = 10_000;

/// A camera and the name its outputs take.
#[derive(Clone, Debug)]
pub struct View {
    pub name: String,
    pub camera: Camera,
}

/// What the options ask for.
pub enum ViewSet {
    /// One camera, as `--camera` or `--colmap --view` give it.
    Single,
    Listed(Vec<View>),
    /// This many views around the single camera (needs the scene's bounds).
    Orbit(usize),
}

impl ViewArgs {
    /// The files the options read.
    pub fn input_files(&self) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = self.camera_path.iter().cloned().collect();
        match &self.cameras {
            Some(p) if p.is_dir() => files.extend(camera_files(p).unwrap_or_default()),
            Some(p) => files.push(p.clone()),
            None => {}
        }
        files
    }
}

/// The views `views` asks for, each adjusted by `cams`' size options. Options that
/// contradict each other are a one-line error.
pub fn load_views(cams: &CameraArgs, views: &ViewArgs) -> Result<ViewSet, CameraError> {
    let args = |m: &str| Err(CameraError::Args(m.into()));
    let split = views.test_views || views.all_views;
    let chosen = [split, views.cameras.is_some(), views.camera_path.is_some(), views.orbit.is_some()];
    if chosen.iter().filter(|&&c| c).count() > 1 {
        return args("give one of --test-views/--all-views, --cameras, --camera-path and --orbit");
    }
    if split {
        let Some(dir) = &cams.colmap else {
            return args("--test-views and --all-views pick views of a COLMAP model: they need --colmap DIR");
        };
        if cams.view.is_some() {
            return args("--view picks one view; --test-views and --all-views pick many: give one");
        }
        let model = colmap::read_colmap(dir)?;
        let step = if views.test_views { 8 } else { 1 };
        let listed = model
            .views
            .iter()
            .step_by(step)
            .map(|v| Ok(View { name: stem(&v.name), camera: adjusted(cams, v.camera)? }));
        return Ok(ViewSet::Listed(listed.collect::<Result<_, CameraError>>()?));
    }
    if views.cameras.is_some() || views.camera_path.is_some() {
        if cams.camera.is_some() || cams.colmap.is_some() {
            return args("--cameras and --camera-path give the views: leave out --camera and --colmap");
        }
        let listed = match (&views.cameras, &views.camera_path) {
            (Some(p), _) if p.is_dir() => camera_dir(p)?,
            (Some(p), _) => camera_array(p)?,
            (None, Some(p)) => numbered(path::read_camera_path(p)?),
            (None, None) => unreachable!("one of them is given"),
        };
        let listed = listed.into_iter().map(|v| Ok(View { camera: adjusted(cams, v.camera)?, ..v }));
        return Ok(ViewSet::Listed(listed.collect::<Result<_, CameraError>>()?));
    }
    Ok(match views.orbit {
        Some(0) => return args("--orbit needs at least 1 view"),
        Some(n) if n > MAX_ORBIT_VIEWS => {
            return Err(CameraError::Args(format!("--orbit {n}: at most {MAX_ORBIT_VIEWS} views")));
        }
        Some(n) => ViewSet::Orbit(n),
        None => ViewSet::Single,
    })
}

/// Views `00000`, `00001`, … (the names 3DGS gives its test renders).
pub fn numbered(cams: Vec<Camera>) -> Vec<View> {
    cams.into_iter().enumerate().map(|(i, camera)| View { name: format!("{i:05}"), camera }).collect()
}

fn stem(name: &str) -> String {
    Path::new(name).file_stem().map_or_else(|| name.to_string(), |s| s.to_string_lossy().into_owned())
}

/// The `*.json` files of `dir`, in name order.
fn camera_files(dir: &Path) -> Result<Vec<PathBuf>, CameraError> {
    let io = |err| CameraError::Io { path: dir.display().to_string(), err };
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let p = entry.map_err(io)?.path();
        if p.extension().is_some_and(|e| e.eq_ignore_ascii_case("json")) && p.is_file() {
            files.push(p);
        }
    }
    files.sort();
    Ok(files)
}

fn camera_dir(dir: &Path) -> Result<Vec<View>, CameraError> {
    let files = camera_files(dir)?;
    if files.is_empty() {
        return Err(CameraError::invalid(dir.display(), "no camera JSON files (*.json) in the directory"));
    }
    files
        .iter()
        .map(|p| {
            Ok(View {
                name: stem(&p.file_name().unwrap_or_default().to_string_lossy()),
                camera: json::read_camera_json(p)?,
            })
        })
        .collect()
}

/// One camera object, or an array of them.
fn camera_array(file: &Path) -> Result<Vec<View>, CameraError> {
    let text =
        std::fs::read_to_string(file).map_err(|err| CameraError::Io { path: file.display().to_string(), err })?;
    let bad = |m: String| CameraError::invalid(file.display(), m);
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| bad(format!("malformed camera JSON: {e}")))?;
    let Some(items) = value.as_array() else {
        let camera = json::parse_camera_json(&text).map_err(bad)?;
        return Ok(vec![View { name: stem(&file.file_name().unwrap_or_default().to_string_lossy()), camera }]);
    };
    if items.is_empty() {
        return Err(bad("an empty array of cameras".into()));
    }
    let cams = items
        .iter()
        .enumerate()
        .map(|(i, v)| json::parse_camera_json(&v.to_string()).map_err(|m| bad(format!("camera [{i}]: {m}"))))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(numbered(cams))
}
