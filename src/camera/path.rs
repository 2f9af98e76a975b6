//! Camera sequences: nerfstudio's `camera_path.json` and orbits around a scene.
//!
//! A nerfstudio camera path (what its viewer's render panel exports) holds
//! `render_width`, `render_height` and `camera_path`, a list of keyframes each with
//! `camera_to_world` (16 numbers, the 4×4 matrix row by row) and `fov` (vertical,
//! degrees). Its camera axes are OpenGL's (x right, y up, z backwards); this
//! project's are OpenCV's (x right, y down, z forward), so the y and z columns of
//! the rotation change sign. Other keys (`aspect`, `keyframes`, `seconds`, …) are
//! the viewer's and are ignored; only perspective cameras are accepted.

use std::path::Path;

use glam::{DMat3, DVec3};
use serde::Deserialize;

use super::{Camera, CameraError};

#[derive(Deserialize)]
struct CameraPathJson {
    render_width: u32,
    render_height: u32,
    camera_path: Vec<KeyframeJson>,
    #[serde(default)]
    camera_type: Option<String>,
}

#[derive(Deserialize)]
struct KeyframeJson {
    camera_to_world: Vec<f64>,
    fov: f64,
}

/// The cameras of a nerfstudio `camera_path.json`, in path order.
pub fn read_camera_path(path: &Path) -> Result<Vec<Camera>, CameraError> {
    let text =
        std::fs::read_to_string(path).map_err(|err| CameraError::Io { path: path.display().to_string(), err })?;
    parse_camera_path(&text).map_err(|msg| CameraError::invalid(path.display(), msg))
}

pub fn parse_camera_path(text: &str) -> Result<Vec<Camera>, String> {
    let j: CameraPathJson = serde_json::from_str(text).map_err(|e| format!("malformed camera path: {e}"))?;
    if let Some(t) = j.camera_type.as_deref().filter(|t| *t != "perspective") {
        return Err(format!("camera_type {t:?}: only perspective cameras are supported"));
    }
    if j.camera_path.is_empty() {
        return Err("camera_path is empty".into());
    }
    j.camera_path
        .iter()
        .enumerate()
        .map(|(i, k)| keyframe_camera(j.render_width, j.render_height, k).map_err(|e| format!("camera_path[{i}]: {e}")))
        .collect()
}

fn keyframe_camera(width: u32, height: u32, k: &KeyframeJson) -> Result<Camera, String> {
    let m = &k.camera_to_world;
    if m.len() != 16 {
        return Err(format!("camera_to_world has {} numbers, not 16 (a 4x4 matrix row by row)", m.len()));
    }
    if m[12..] != [0.0, 0.0, 0.0, 1.0] {
        return Err(format!("camera_to_world's last row must be [0, 0, 0, 1], found {:?}", &m[12..]));
    }
    if !(k.fov.is_finite() && k.fov > 0.0 && k.fov < 180.0) {
        return Err(format!("fov {} must lie strictly between 0 and 180 degrees", k.fov));
    }
    // OpenGL's y (up) and z (backwards) are OpenCV's −y and −z.
    let rotation =
        DMat3::from_cols(DVec3::new(m[0], m[4], m[8]), -DVec3::new(m[1], m[5], m[9]), -DVec3::new(m[2], m[6], m[10]));
    Camera::new(width, height, fov_intrinsics(width, height, k.fov), rotation, DVec3::new(m[3], m[7], m[11]))
}

/// Square pixels, principal point at the centre, `fov_y_deg` vertical field of view
/// (as [`Camera::look_at`]).
pub fn fov_intrinsics(width: u32, height: u32, fov_y_deg: f64) -> [f64; 4] {
    let fy = 0.5 * height as f64 / (0.5 * fov_y_deg.to_radians()).tan();
    [fy, fy, 0.5 * width as f64, 0.5 * height as f64]
}

/// `n` cameras on a circle around `centre`, the first `base`: each is `base`
/// turned by a further `1/n` of a turn about the vertical through `centre`, so
/// every view keeps `base`'s height, distance, tilt and intrinsics. The vertical
/// is the world axis nearest `base`'s up direction (a camera looking down on a
/// scene still has the scene's up nearest its own).
pub fn orbit(base: &Camera, centre: DVec3, n: usize) -> Result<Vec<Camera>, String> {
    if n == 0 {
        return Err("--orbit needs at least 1 view".into());
    }
    let axis = world_up(base.up().as_dvec3());
    let (r0, p0) = (base.rotation.as_dmat3(), base.position.as_dvec3());
    (0..n)
        .map(|i| {
            if i == 0 {
                return Ok(*base);
            }
            let turn = DMat3::from_axis_angle(axis, std::f64::consts::TAU * i as f64 / n as f64);
            let intr = [base.fx, base.fy, base.cx, base.cy].map(|v| v as f64);
            Camera::new(base.width, base.height, intr, turn * r0, centre + turn * (p0 - centre))
                .map_err(|e| format!("orbit view {i}: {e}"))
        })
        .collect()
}

/// The coordinate axis (signed) nearest the direction `up`.
fn world_up(up: DVec3) -> DVec3 {
    let a = up.abs();
    let axis = if a.x >= a.y && a.x >= a.z {
        DVec3::X
    } else if a.y >= a.z {
        DVec3::Y
    } else {
        DVec3::Z
    };
    if axis.dot(up) < 0.0 { -axis } else { axis }
}

/// The point an orbit of `cam` turns about: where its optical axis passes closest
/// to the centre of the scene's bounds `(lo, hi)`, or that centre itself if the
/// closest point lies behind the camera.
pub fn centre_of_interest(cam: &Camera, (lo, hi): ([f32; 3], [f32; 3])) -> DVec3 {
    let mid = (DVec3::from(lo.map(f64::from)) + DVec3::from(hi.map(f64::from))) * 0.5;
    let (p, f) = (cam.position.as_dvec3(), cam.forward().as_dvec3().normalize());
    let t = (mid - p).dot(f);
    if t > 0.0 { p + f * t } else { mid }
}

/// A camera for an orbit of a scene with no camera of its own: `width` × `height`,
/// 50° vertical field of view, looking at the middle of the box holding the middle
/// half of the sites along each axis (where a trained scene packs its cells: its
/// far shell of huge cells would make the whole bounds useless), from 3/4 of that
/// box's half diagonal away and 20° above it. Up is the box's thinnest axis, positive: scenes are
/// usually wider than they are tall.
pub fn bounds_camera(positions: &[[f32; 3]], width: u32, height: u32) -> Result<Camera, String> {
    if positions.is_empty() {
        return Err("the scene has no sites to orbit".into());
    }
    let (mut lo, mut hi) = (DVec3::ZERO, DVec3::ZERO);
    for a in 0..3 {
        let mut v: Vec<f32> = positions.iter().map(|p| p[a]).collect();
        let at = |q: f64, v: &mut Vec<f32>| {
            let k = ((v.len() - 1) as f64 * q).round() as usize;
            *v.select_nth_unstable_by(k, f32::total_cmp).1 as f64
        };
        lo[a] = at(0.25, &mut v);
        hi[a] = at(0.75, &mut v);
    }
    let (centre, extent) = ((lo + hi) * 0.5, hi - lo);
    let up_axis = if extent.x <= extent.y && extent.x <= extent.z {
        0
    } else if extent.y <= extent.z {
        1
    } else {
        2
    };
    let up = DVec3::AXES[up_axis];
    let side = DVec3::AXES[(up_axis + 2) % 3];
    let distance = 0.75 * (extent.length() * 0.5).max(1e-3);
    let elevation = 20f64.to_radians();
    let position = centre - side * distance * elevation.cos() + up * distance * elevation.sin();
    Camera::look_at(width, height, 50.0, position, centre, up)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path_json(c2w: &[f64], fov: f64) -> String {
        format!(
            r#"{{"render_width": 64, "render_height": 48, "camera_type": "perspective", "seconds": 2,
                "camera_path": [{{"camera_to_world": {c2w:?}, "fov": {fov}, "aspect": 1.333}}]}}"#
        )
    }

    #[test]
    fn an_opengl_pose_is_the_opencv_camera_with_y_and_z_flipped() {
        let look =
            Camera::look_at(64, 48, 50.0, DVec3::new(1.0, 2.0, -3.0), DVec3::ZERO, DVec3::new(0.0, -1.0, 0.0)).unwrap();
        let r = look.rotation.as_dmat3();
        let t = look.position.as_dvec3();
        let (x, y, z) = (r.x_axis, -r.y_axis, -r.z_axis);
        let c2w = [x.x, y.x, z.x, t.x, x.y, y.y, z.y, t.y, x.z, y.z, z.z, t.z, 0.0, 0.0, 0.0, 1.0];
        let cams = parse_camera_path(&path_json(&c2w, 50.0)).unwrap();
        assert_eq!(cams, vec![look]);
    }

    #[test]
    fn bad_paths_name_the_keyframe() {
        let id = [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0];
        let e = parse_camera_path(&path_json(&id[..12], 50.0)).unwrap_err();
        assert!(e.contains("camera_path[0]") && e.contains("12 numbers"), "{e}");
        let e = parse_camera_path(&path_json(&id, 180.0)).unwrap_err();
        assert!(e.contains("fov"), "{e}");
        let e = parse_camera_path(r#"{"render_width": 4, "render_height": 4, "camera_path": []}"#).unwrap_err();
        assert!(e.contains("empty"), "{e}");
        let e = parse_camera_path(&path_json(&id, 50.0).replace("perspective", "fisheye")).unwrap_err();
        assert!(e.contains("fisheye"), "{e}");
    }

    #[test]
    fn an_orbit_keeps_distance_and_looks_at_the_centre() {
        let centre = DVec3::new(0.5, 0.0, 0.0);
        let base =
            Camera::look_at(32, 24, 60.0, DVec3::new(0.5, -1.0, -4.0), centre, DVec3::new(0.0, -1.0, 0.0)).unwrap();
        let cams = orbit(&base, centre, 4).unwrap();
        assert_eq!(cams.len(), 4);
        assert_eq!(cams[0], base);
        let d0 = (base.position.as_dvec3() - centre).length();
        for c in &cams {
            let to = centre - c.position.as_dvec3();
            assert!(((to.length() - d0) / d0).abs() < 1e-6);
            assert!(to.normalize().dot(c.forward().as_dvec3()) > 1.0 - 1e-6, "the orbit looks at its centre");
            assert!((c.up().y - base.up().y).abs() < 1e-5, "the tilt is kept: {} and {}", c.up(), base.up());
            assert!((c.position.y + 1.0).abs() < 1e-5, "the orbit keeps the height");
        }
        // Half a turn: the camera is on the far side of the centre.
        assert!((cams[2].position.z - 4.0).abs() < 1e-5, "{:?}", cams[2].position);
        assert!(orbit(&base, centre, 0).is_err());
    }

    #[test]
    fn a_scene_without_a_camera_is_seen_from_above_its_middle() {
        // A flat slab in z, with a few far-off sites that must not move the view.
        let mut pts: Vec<[f32; 3]> =
            (0..1000).map(|i| [(i % 40) as f32 * 0.1, (i / 40) as f32 * 0.1, (i % 7) as f32 * 0.01]).collect();
        pts.extend([[500.0, 0.0, 0.0], [-500.0, 0.0, 0.0]]);
        let cam = bounds_camera(&pts, 64, 48).unwrap();
        assert!(cam.up().z > 0.9, "z is up: {}", cam.up());
        assert!(cam.position.z > 0.1, "above the slab: {}", cam.position);
        let to = DVec3::new(1.95, 1.2, 0.03) - cam.position.as_dvec3();
        assert!(to.normalize().dot(cam.forward().as_dvec3()) > 0.99, "looks at the middle: {}", cam.forward());
        assert!(to.length() < 10.0, "not pushed away by the outliers: {}", to.length());
        assert!(bounds_camera(&[], 64, 48).is_err());
    }
}
