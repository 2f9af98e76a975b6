//! The camera JSON file. Two forms (all lengths in scene units, angles in degrees):
//!
//! ```json
//! {"width": 640, "height": 480, "fx": 500, "fy": 500, "cx": 320, "cy": 240,
//!  "c2w": [[1,0,0,0],[0,1,0,0],[0,0,1,0],[0,0,0,1]]}
//! {"width": 640, "height": 480, "fov_y_deg": 50,
//!  "position": [0,0,-3], "look_at": [0,0,0], "up": [0,-1,0]}
//! ```
//!
//! `c2w` is camera-to-world with OpenCV axes (x right, y down, z forward), rows first.
//! In the look-at form `up` is the world direction shown upwards in the image, the
//! principal point is the image centre and pixels are square.

use std::path::Path;

use glam::{DMat3, DVec3};
use serde::{Deserialize, Serialize};

use super::{Camera, CameraError, look_at_rotation};

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct IntrinsicsJson {
    pub width: u32,
    pub height: u32,
    pub fx: f64,
    pub fy: f64,
    pub cx: f64,
    pub cy: f64,
    pub c2w: [[f64; 4]; 4],
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LookAtJson {
    width: u32,
    height: u32,
    fov_y_deg: f64,
    position: [f64; 3],
    look_at: [f64; 3],
    up: [f64; 3],
}

pub fn read_camera_json(path: &Path) -> Result<Camera, CameraError> {
    let text =
        std::fs::read_to_string(path).map_err(|err| CameraError::Io { path: path.display().to_string(), err })?;
    parse_camera_json(&text).map_err(|msg| CameraError::invalid(path.display(), msg))
}

/// Parses either JSON form; the form is chosen by the presence of `c2w` or `fov_y_deg`
/// so that a typo in one form is reported against that form's fields.
pub fn parse_camera_json(text: &str) -> Result<Camera, String> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| format!("malformed camera JSON: {e}"))?;
    let obj = value.as_object().ok_or("camera JSON must be an object")?;
    if obj.contains_key("c2w") {
        let j: IntrinsicsJson = serde_json::from_value(value).map_err(|e| format!("camera JSON (c2w form): {e}"))?;
        let m = j.c2w;
        if m[3] != [0.0, 0.0, 0.0, 1.0] {
            return Err(format!("c2w last row must be [0, 0, 0, 1], found {:?}", m[3]));
        }
        let rot = DMat3::from_cols_array_2d(&[
            [m[0][0], m[1][0], m[2][0]],
            [m[0][1], m[1][1], m[2][1]],
            [m[0][2], m[1][2], m[2][2]],
        ]);
        let pos = DVec3::new(m[0][3], m[1][3], m[2][3]);
        Camera::new(j.width, j.height, [j.fx, j.fy, j.cx, j.cy], rot, pos).map_err(|e| format!("c2w camera: {e}"))
    } else if obj.contains_key("fov_y_deg") {
        let j: LookAtJson = serde_json::from_value(value).map_err(|e| format!("camera JSON (look-at form): {e}"))?;
        let (p, t, u) = (DVec3::from(j.position), DVec3::from(j.look_at), DVec3::from(j.up));
        look_at_rotation(p, t, u).map_err(|e| format!("look-at camera: {e}"))?;
        Camera::look_at(j.width, j.height, j.fov_y_deg, p, t, u).map_err(|e| format!("look-at camera: {e}"))
    } else {
        Err("camera JSON needs either \"c2w\" (with fx, fy, cx, cy) or \"fov_y_deg\" \
             (with position, look_at, up)"
            .into())
    }
}

/// The c2w form of a camera (what `foam-ipu cameras --json` prints).
pub fn camera_to_json(cam: &Camera) -> IntrinsicsJson {
    let m = cam.c2w();
    IntrinsicsJson {
        width: cam.width,
        height: cam.height,
        fx: cam.fx as f64,
        fy: cam.fy as f64,
        cx: cam.cx as f64,
        cy: cam.cy as f64,
        c2w: m.map(|r| r.map(|v| v as f64)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_forms_parse_and_round_trip() {
        let look = r#"{"width": 32, "height": 24, "fov_y_deg": 60,
            "position": [0, 0, -3], "look_at": [0, 0, 0], "up": [0, 1, 0]}"#;
        let a = parse_camera_json(look).unwrap();
        let text = serde_json::to_string(&camera_to_json(&a)).unwrap();
        let b = parse_camera_json(&text).unwrap();
        assert_eq!(a.width, b.width);
        assert!((a.rotation - b.rotation).abs_diff_eq(glam::Mat3::ZERO, 1e-7));
        assert_eq!((a.fx, a.cx, a.position), (b.fx, b.cx, b.position));
    }

    #[test]
    fn errors_name_the_problem() {
        let e = parse_camera_json("{\"width\": 3").unwrap_err();
        assert!(e.contains("malformed"), "{e}");
        let e = parse_camera_json("{\"width\": 3}").unwrap_err();
        assert!(e.contains("c2w") && e.contains("fov_y_deg"), "{e}");
        let e =
            parse_camera_json(r#"{"width": 3, "height": 3, "fov_y_deg": 60, "position": [0,0,0], "look_at": [0,0,1]}"#)
                .unwrap_err();
        assert!(e.contains("up"), "{e}");
        let e = parse_camera_json(
            r#"{"width": 3, "height": 3, "fx": 1, "fy": 1, "cx": 1, "cy": 1,
                "c2w": [[1,0,0,0],[0,1,0,0],[0,0,1,0],[0,0,1,1]]}"#,
        )
        .unwrap_err();
        assert!(e.contains("last row"), "{e}");
    }
}
