//! COLMAP text models (`cameras.txt`, `images.txt`) as the original's data loader reads
//! them: views sorted by image name, `c2w = inverse(cam_from_world)`, test split = every
//! 8th view of that order.
//!
//! Only undistorted models (PINHOLE, SIMPLE_PINHOLE) are accepted: the original assumes
//! them too, and rendering a distorted model as a pinhole would silently misplace pixels.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use glam::{DMat3, DQuat, DVec3};

use super::{Camera, CameraError};

/// Models with distortion parameters COLMAP can write; named so the error can say why.
const DISTORTED_MODELS: &[&str] = &[
    "SIMPLE_RADIAL",
    "RADIAL",
    "OPENCV",
    "OPENCV_FISHEYE",
    "FULL_OPENCV",
    "FOV",
    "SIMPLE_RADIAL_FISHEYE",
    "RADIAL_FISHEYE",
    "THIN_PRISM_FISHEYE",
    "RAD_TAN_THIN_PRISM_FISHEYE",
];

/// One registered image of a COLMAP model.
#[derive(Clone, Debug)]
pub struct ColmapView {
    pub image_id: u32,
    pub name: String,
    pub camera: Camera,
}

#[derive(Clone, Debug)]
pub struct ColmapModel {
    /// The directory holding `cameras.txt` and `images.txt`.
    pub dir: PathBuf,
    /// Views sorted by image name (the original's index order).
    pub views: Vec<ColmapView>,
}

impl ColmapModel {
    /// Indices (into `views`) of the original's test split: every 8th view by name.
    pub fn test_indices(&self) -> Vec<usize> {
        (0..self.views.len()).step_by(8).collect()
    }

    /// A view by exact image name, by name without extension, or by index in name order.
    pub fn select(&self, sel: &str) -> Result<(usize, &ColmapView), CameraError> {
        if let Some(i) = self.views.iter().position(|v| v.name == sel) {
            return Ok((i, &self.views[i]));
        }
        let stem_hits: Vec<usize> = (0..self.views.len())
            .filter(|&i| Path::new(&self.views[i].name).with_extension("") == Path::new(sel))
            .collect();
        if let [i] = stem_hits[..] {
            return Ok((i, &self.views[i]));
        }
        if let Ok(i) = sel.parse::<usize>() {
            return match self.views.get(i) {
                Some(v) => Ok((i, v)),
                None => Err(CameraError::Args(format!(
                    "{}: view index {i} out of range (the model has {} views, 0..{})",
                    self.dir.display(),
                    self.views.len(),
                    self.views.len().saturating_sub(1)
                ))),
            };
        }
        Err(CameraError::Args(format!(
            "{}: no view named {sel:?} (the model has {} views; list them with `foam-ipu cameras --colmap {}`)",
            self.dir.display(),
            self.views.len(),
            self.dir.display()
        )))
    }
}

/// Finds the text model under `dir`: `dir` itself or `dir/sparse/0` (a dataset root as the
/// original takes it).
pub fn model_dir(dir: &Path) -> Result<PathBuf, CameraError> {
    for cand in [dir.to_path_buf(), dir.join("sparse/0")] {
        if cand.join("cameras.txt").is_file() {
            return Ok(cand);
        }
    }
    for cand in [dir.to_path_buf(), dir.join("sparse/0")] {
        if cand.join("cameras.bin").is_file() {
            return Err(CameraError::invalid(
                cand.display(),
                "has a binary COLMAP model (cameras.bin) but no cameras.txt; convert it with \
                 `colmap model_converter --input_path DIR --output_path DIR --output_type TXT`",
            ));
        }
    }
    if !dir.is_dir() {
        return Err(CameraError::invalid(dir.display(), "COLMAP directory not found"));
    }
    Err(CameraError::invalid(dir.display(), "no cameras.txt here or in sparse/0"))
}

pub fn read_colmap(dir: &Path) -> Result<ColmapModel, CameraError> {
    let dir = model_dir(dir)?;
    let read = |name: &str| {
        let p = dir.join(name);
        std::fs::read_to_string(&p)
            .map(|t| (p.clone(), t))
            .map_err(|err| CameraError::Io { path: p.display().to_string(), err })
    };
    let (cam_path, cam_text) = read("cameras.txt")?;
    let (img_path, img_text) = read("images.txt")?;
    let cameras = parse_cameras(&cam_text).map_err(|m| CameraError::invalid(cam_path.display(), m))?;
    let mut views = parse_images(&img_text, &cameras).map_err(|m| CameraError::invalid(img_path.display(), m))?;
    if views.is_empty() {
        return Err(CameraError::invalid(img_path.display(), "no images"));
    }
    views.sort_by(|a, b| a.name.cmp(&b.name));
    if let Some(w) = views.windows(2).find(|w| w[0].name == w[1].name) {
        return Err(CameraError::invalid(img_path.display(), format!("image name {:?} appears twice", w[0].name)));
    }
    Ok(ColmapModel { dir, views })
}

/// Intrinsics by camera id: (width, height, [fx, fy, cx, cy]).
pub type Intrinsics = HashMap<u32, (u32, u32, [f64; 4])>;

fn data_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines().enumerate().map(|(i, l)| (i + 1, l.trim())).filter(|(_, l)| !l.starts_with('#'))
}

fn num<T: std::str::FromStr>(tok: Option<&str>, what: &str, line: usize) -> Result<T, String> {
    let tok = tok.ok_or_else(|| format!("line {line}: missing {what}"))?;
    tok.parse().map_err(|_| format!("line {line}: bad {what} {tok:?}"))
}

pub fn parse_cameras(text: &str) -> Result<Intrinsics, String> {
    let mut cams = Intrinsics::new();
    for (ln, line) in data_lines(text).filter(|(_, l)| !l.is_empty()) {
        let mut tok = line.split_whitespace();
        let id: u32 = num(tok.next(), "camera id", ln)?;
        let model = tok.next().ok_or_else(|| format!("line {ln}: missing camera model"))?;
        let w: u32 = num(tok.next(), "width", ln)?;
        let h: u32 = num(tok.next(), "height", ln)?;
        let params: Vec<f64> = tok.map(|t| num(Some(t), "camera parameter", ln)).collect::<Result<_, _>>()?;
        let intr = match (model, params.as_slice()) {
            ("SIMPLE_PINHOLE", &[f, cx, cy]) => [f, f, cx, cy],
            ("PINHOLE", &[fx, fy, cx, cy]) => [fx, fy, cx, cy],
            ("SIMPLE_PINHOLE" | "PINHOLE", p) => {
                let want = if model == "PINHOLE" { 4 } else { 3 };
                return Err(format!("line {ln}: camera {id} ({model}) has {} parameters, expected {want}", p.len()));
            }
            (m, _) if DISTORTED_MODELS.contains(&m) => {
                return Err(format!(
                    "line {ln}: camera {id} uses the distortion model {m}; only PINHOLE and \
                     SIMPLE_PINHOLE are supported (undistort the dataset with `colmap image_undistorter`)"
                ));
            }
            (m, _) => return Err(format!("line {ln}: camera {id} has unknown model {m:?}")),
        };
        if w == 0 || h == 0 {
            return Err(format!("line {ln}: camera {id} has image size {w}x{h}"));
        }
        if cams.insert(id, (w, h, intr)).is_some() {
            return Err(format!("line {ln}: camera id {id} defined twice"));
        }
    }
    Ok(cams)
}

/// The camera-to-world pose of a COLMAP image: `cam_from_world` is `R(q)·x + t`.
pub fn colmap_pose(qwxyz: [f64; 4], t: [f64; 3]) -> Result<(DMat3, DVec3), String> {
    let [w, x, y, z] = qwxyz;
    let q = DQuat::from_xyzw(x, y, z, w);
    let n = q.length();
    if !n.is_finite() || n < 1e-12 || !t.iter().all(|v| v.is_finite()) {
        return Err(format!("degenerate pose q={qwxyz:?} t={t:?}"));
    }
    let r = DMat3::from_quat(q / n);
    let rt = r.transpose();
    Ok((rt, -(rt * DVec3::from(t))))
}

pub fn parse_images(text: &str, cams: &Intrinsics) -> Result<Vec<ColmapView>, String> {
    let mut views = Vec::new();
    let mut lines = data_lines(text);
    while let Some((ln, line)) = lines.next() {
        if line.is_empty() {
            continue;
        }
        // Each image is two lines; the second (its 2-D points) may be empty.
        lines.next();
        let mut tok = line.split_whitespace();
        let id: u32 = num(tok.next(), "image id", ln)?;
        let mut q = [0.0; 4];
        for (k, v) in q.iter_mut().enumerate() {
            *v = num(tok.next(), ["QW", "QX", "QY", "QZ"][k], ln)?;
        }
        let mut t = [0.0; 3];
        for (k, v) in t.iter_mut().enumerate() {
            *v = num(tok.next(), ["TX", "TY", "TZ"][k], ln)?;
        }
        let cam_id: u32 = num(tok.next(), "camera id", ln)?;
        let name = tok.collect::<Vec<_>>().join(" ");
        if name.is_empty() {
            return Err(format!("line {ln}: image {id} has no name"));
        }
        let &(w, h, intr) =
            cams.get(&cam_id).ok_or_else(|| format!("line {ln}: image {name} uses undefined camera {cam_id}"))?;
        let (rot, pos) = colmap_pose(q, t).map_err(|e| format!("line {ln}: image {name}: {e}"))?;
        let camera = Camera::new(w, h, intr, rot, pos).map_err(|e| format!("line {ln}: image {name}: {e}"))?;
        views.push(ColmapView { image_id: id, name, camera });
    }
    Ok(views)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quaternion_pose_inverts_cam_from_world() {
        // 90° about +y: cam_from_world maps world +z to camera +x... check by transforming
        // a world point into the camera and back through c2w.
        let half = std::f64::consts::FRAC_PI_4;
        let q = [half.cos(), 0.0, half.sin(), 0.0];
        let t = [0.5, -1.0, 2.0];
        let (c2w_r, c2w_t) = colmap_pose(q, t).unwrap();
        let world = DVec3::new(0.3, 0.7, -1.1);
        let r = DMat3::from_quat(DQuat::from_xyzw(q[1], q[2], q[3], q[0]));
        let cam = r * world + DVec3::from(t);
        let back = c2w_r * cam + c2w_t;
        assert!((back - world).length() < 1e-12);
        // Explicit: rotation by +90° about y sends world x to camera −z.
        assert!((r * DVec3::X - DVec3::new(0.0, 0.0, -1.0)).length() < 1e-12);
        // Unnormalised quaternions are normalised as COLMAP does.
        let (r2, _) = colmap_pose([2.0 * q[0], 0.0, 2.0 * q[2], 0.0], t).unwrap();
        assert!((r2 - c2w_r).abs_diff_eq(DMat3::ZERO, 1e-12));
        assert!(colmap_pose([0.0; 4], t).is_err());
    }

    #[test]
    fn camera_lines() {
        let c = parse_cameras("# c\n1 PINHOLE 100 80 90 91 50 40\n2 SIMPLE_PINHOLE 10 10 5 5 5\n").unwrap();
        assert_eq!(c[&1], (100, 80, [90.0, 91.0, 50.0, 40.0]));
        assert_eq!(c[&2].2, [5.0, 5.0, 5.0, 5.0]);
        let e = parse_cameras("1 OPENCV 10 10 5 5 5 5 0 0 0 0\n").unwrap_err();
        assert!(e.contains("distortion model OPENCV"), "{e}");
        let e = parse_cameras("1 PINHOLE 10 10 5 5 5\n").unwrap_err();
        assert!(e.contains("expected 4"), "{e}");
        let e = parse_cameras("1 WEIRD 10 10 5\n").unwrap_err();
        assert!(e.contains("unknown model"), "{e}");
        let e = parse_cameras("1 PINHOLE ten 10 5 5 5 5\n").unwrap_err();
        assert!(e.contains("line 1: bad width"), "{e}");
    }

    #[test]
    fn image_lines_allow_empty_point_lines() {
        let cams = parse_cameras("1 PINHOLE 100 80 90 91 50 40\n").unwrap();
        let text = "# header\n1 1 0 0 0 0 0 0 1 b.png\n\n2 1 0 0 0 1 2 3 1 a.png\n1.0 2.0 -1\n";
        let v = parse_images(text, &cams).unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!(v[1].name, "a.png");
        assert_eq!(v[1].camera.position, glam::Vec3::new(-1.0, -2.0, -3.0));
        let e = parse_images("1 1 0 0 0 0 0 0 7 x.png\n\n", &cams).unwrap_err();
        assert!(e.contains("undefined camera 7"), "{e}");
    }
}
