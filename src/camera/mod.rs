//! Pinhole cameras in the original's convention: OpenCV axes (x right, y down, z forward),
//! camera-to-world pose, intrinsics in pixels, pixel `(i, j)` sampled at its centre
//! `(i + 0.5, j + 0.5)`.
//!
//! Sources: a JSON file (`json.rs`), a COLMAP text model (`colmap.rs`), and the shared CLI
//! options that pick one (`args.rs`).

pub mod args;
pub mod colmap;
pub mod json;
pub mod path;
pub mod views;

use glam::{DMat3, DVec3, Mat3, Vec3};
use thiserror::Error;

pub use args::{CameraArgs, load_camera};

#[derive(Debug, Error)]
pub enum CameraError {
    #[error("{path}: {err}")]
    Io { path: String, err: std::io::Error },
    #[error("{path}: {msg}")]
    Invalid { path: String, msg: String },
    #[error("{0}")]
    Args(String),
}

impl CameraError {
    pub(crate) fn invalid(path: impl std::fmt::Display, msg: impl Into<String>) -> Self {
        CameraError::Invalid { path: path.to_string(), msg: msg.into() }
    }
}

/// A pinhole camera. Intrinsics and pose are f32 like the GPU original's ray generation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Camera {
    pub width: u32,
    pub height: u32,
    pub fx: f32,
    pub fy: f32,
    pub cx: f32,
    pub cy: f32,
    /// Camera-to-world rotation; its columns are the camera's x (right), y (down) and
    /// z (forward) axes in world coordinates.
    pub rotation: Mat3,
    /// Camera centre in world coordinates (the origin of every ray).
    pub position: Vec3,
}

impl Camera {
    /// Builds a camera, checking what would make rays meaningless. `rotation` must be
    /// orthonormal and right-handed (tolerance 1e-4 on RᵀR − I and det − 1).
    pub fn new(
        width: u32,
        height: u32,
        [fx, fy, cx, cy]: [f64; 4],
        rotation: DMat3,
        position: DVec3,
    ) -> Result<Camera, String> {
        if width == 0 || height == 0 {
            return Err(format!("image size {width}x{height} must be positive"));
        }
        if !(fx.is_finite() && fx > 0.0 && fy.is_finite() && fy > 0.0) {
            return Err(format!("focal lengths fx={fx}, fy={fy} must be positive and finite"));
        }
        if !(cx.is_finite() && cy.is_finite()) {
            return Err(format!("principal point ({cx}, {cy}) must be finite"));
        }
        if !position.is_finite() {
            return Err(format!("camera position {position:?} must be finite"));
        }
        check_rotation(&rotation)?;
        Camera {
            width,
            height,
            fx: fx as f32,
            fy: fy as f32,
            cx: cx as f32,
            cy: cy as f32,
            rotation: rotation.as_mat3(),
            position: position.as_vec3(),
        }
        .checked()
    }

    /// The camera if its f32 values, what the renderers compute with, are usable: every
    /// value finite, focal lengths positive, and the rays through the image's corners
    /// finite (a value that fits an f64 can overflow or vanish as an f32).
    fn checked(self) -> Result<Camera, String> {
        let (fx, fy, cx, cy) = (self.fx, self.fy, self.cx, self.cy);
        if !(fx.is_finite() && fx > 0.0 && fy.is_finite() && fy > 0.0) {
            return Err(format!("focal lengths fx={fx}, fy={fy} must be positive and finite as f32"));
        }
        if !(cx.is_finite() && cy.is_finite()) {
            return Err(format!("principal point ({cx}, {cy}) must be finite as f32"));
        }
        if !self.position.is_finite() {
            return Err(format!("camera position {} must be finite as f32", self.position));
        }
        for (px, py) in [(0.0, 0.0), (self.width as f32, self.height as f32)] {
            let (_, d) = self.ray(px, py);
            if !d.is_finite() {
                return Err(format!(
                    "the ray through image point ({px}, {py}) is not finite in f32 (fx={fx}, fy={fy}, cx={cx}, cy={cy})"
                ));
            }
        }
        Ok(self)
    }

    /// A camera at `position` looking at `target`, with `up` the world direction that
    /// appears upwards in the image (image y points along −up). Vertical field of view in
    /// degrees; square pixels; principal point at the image centre.
    pub fn look_at(
        width: u32,
        height: u32,
        fov_y_deg: f64,
        position: DVec3,
        target: DVec3,
        up: DVec3,
    ) -> Result<Camera, String> {
        if !(fov_y_deg.is_finite() && fov_y_deg > 0.0 && fov_y_deg < 180.0) {
            return Err(format!("fov_y_deg {fov_y_deg} must lie strictly between 0 and 180"));
        }
        let rotation = look_at_rotation(position, target, up)?;
        let fy = 0.5 * height as f64 / (0.5 * fov_y_deg.to_radians()).tan();
        let intr = [fy, fy, 0.5 * width as f64, 0.5 * height as f64];
        Camera::new(width, height, intr, rotation, position)
    }

    /// The camera-to-world matrix as 4×4 rows (OpenCV axes).
    pub fn c2w(&self) -> [[f32; 4]; 4] {
        let (r, t) = (self.rotation, self.position);
        let row = |i: usize| [r.x_axis[i], r.y_axis[i], r.z_axis[i], t[i]];
        [row(0), row(1), row(2), [0.0, 0.0, 0.0, 1.0]]
    }

    /// The forward axis (camera z) in world coordinates.
    pub fn forward(&self) -> Vec3 {
        self.rotation.z_axis
    }

    /// The world direction shown upwards in the image (−camera y).
    pub fn up(&self) -> Vec3 {
        -self.rotation.y_axis
    }

    /// The ray through image point `(px, py)` in continuous pixel coordinates: pixel
    /// `(i, j)` covers `[i, i+1) × [j, j+1)`, so its centre is `(i + 0.5, j + 0.5)`.
    /// Returns the origin and the unit direction.
    #[inline]
    pub fn ray(&self, px: f32, py: f32) -> (Vec3, Vec3) {
        let d_cam = Vec3::new((px - self.cx) / self.fx, (py - self.cy) / self.fy, 1.0);
        let d = self.rotation * d_cam;
        (self.position, d / d.length())
    }

    /// The ray through the centre of pixel `(i, j)`.
    #[inline]
    pub fn pixel_ray(&self, i: u32, j: u32) -> (Vec3, Vec3) {
        self.ray(i as f32 + 0.5, j as f32 + 0.5)
    }

    /// The same view at another resolution: focal lengths and principal point scale with
    /// the image size per axis.
    pub fn resized(&self, width: u32, height: u32) -> Result<Camera, String> {
        if width == 0 || height == 0 {
            return Err(format!("image size {width}x{height} must be positive"));
        }
        let sx = width as f64 / self.width as f64;
        let sy = height as f64 / self.height as f64;
        Camera {
            width,
            height,
            fx: (self.fx as f64 * sx) as f32,
            fy: (self.fy as f64 * sy) as f32,
            cx: (self.cx as f64 * sx) as f32,
            cy: (self.cy as f64 * sy) as f32,
            ..*self
        }
        .checked()
    }

    /// Downsampling by an integer factor as the original's data loader does: intrinsics
    /// divided by `k` exactly; the image size is that of the downsampled image files,
    /// `round(size / k)` with halves rounded up (e.g. 4946 px / 4 → 1237 px).
    pub fn downsampled(&self, k: u32) -> Result<Camera, String> {
        if k == 0 {
            return Err("downsample factor must be at least 1".into());
        }
        let kf = k as f32;
        let size = |s: u32| ((s as u64 * 2 + k as u64) / (2 * k as u64)).max(1) as u32;
        Camera {
            width: size(self.width),
            height: size(self.height),
            fx: self.fx / kf,
            fy: self.fy / kf,
            cx: self.cx / kf,
            cy: self.cy / kf,
            ..*self
        }
        .checked()
    }

    /// Principal point moved to the image centre, as the original's COLMAP loader does
    /// (it builds rays with `center = (W/2, H/2)` and ignores cx, cy).
    pub fn centred(&self) -> Camera {
        Camera { cx: 0.5 * self.width as f32, cy: 0.5 * self.height as f32, ..*self }
    }
}

/// Camera-to-world rotation (columns right, down, forward) of a camera at `position`
/// looking at `target` with world `up` shown upwards.
pub fn look_at_rotation(position: DVec3, target: DVec3, up: DVec3) -> Result<DMat3, String> {
    if !(position.is_finite() && target.is_finite() && up.is_finite()) {
        return Err("position, look_at and up must be finite".into());
    }
    let fwd = target - position;
    if fwd.length() < 1e-12 {
        return Err("look_at equals position: no viewing direction".into());
    }
    let fwd = fwd.normalize();
    let right = fwd.cross(up);
    if up.length() < 1e-12 || right.length() < 1e-9 * up.length() {
        return Err("up is zero or parallel to the viewing direction".into());
    }
    let right = right.normalize();
    let down = fwd.cross(right);
    Ok(DMat3::from_cols(right, down, fwd))
}

fn check_rotation(r: &DMat3) -> Result<(), String> {
    if !r.is_finite() {
        return Err("rotation has non-finite entries".into());
    }
    let e = r.transpose() * *r - DMat3::IDENTITY;
    let err = e.to_cols_array().iter().fold(0.0f64, |m, v| m.max(v.abs()));
    if err > 1e-4 {
        return Err(format!("rotation part is not orthonormal (|RᵀR − I| = {err:.2e})"));
    }
    let det = r.determinant();
    if (det - 1.0).abs() > 1e-4 {
        return Err(format!("rotation part has determinant {det:.4}, expected +1 (a reflection?)"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cam() -> Camera {
        Camera::look_at(64, 48, 60.0, DVec3::new(1.0, 2.0, 3.0), DVec3::new(0.0, 0.0, 0.0), DVec3::new(0.0, 1.0, 0.0))
            .unwrap()
    }

    #[test]
    fn look_at_axes_follow_opencv() {
        // Looking down −z with +y up: image x is +x, image y is −y.
        let c = Camera::look_at(10, 10, 90.0, DVec3::ZERO, -DVec3::Z, DVec3::Y).unwrap();
        assert!((c.rotation.x_axis - Vec3::X).length() < 1e-6);
        assert!((c.rotation.y_axis + Vec3::Y).length() < 1e-6);
        assert!((c.rotation.z_axis + Vec3::Z).length() < 1e-6);
        // 90° vertical fov: the top edge of the image is 45° up.
        let (_, d) = c.ray(5.0, 0.0);
        assert!((d - Vec3::new(0.0, 1.0, -1.0).normalize()).length() < 1e-6);
        // Pixel centres at +0.5: the centre pixel of an odd-sized image looks forward.
        let c = Camera::look_at(11, 11, 90.0, DVec3::ZERO, -DVec3::Z, DVec3::Y).unwrap();
        let (_, d) = c.pixel_ray(5, 5);
        assert!((d + Vec3::Z).length() < 1e-6);
    }

    #[test]
    fn look_at_round_trip_through_c2w() {
        let c = cam();
        let m = c.c2w();
        let pos = DVec3::new(m[0][3] as f64, m[1][3] as f64, m[2][3] as f64);
        let fwd = DVec3::new(m[0][2] as f64, m[1][2] as f64, m[2][2] as f64);
        let down = DVec3::new(m[0][1] as f64, m[1][1] as f64, m[2][1] as f64);
        let c2 = Camera::look_at(64, 48, 60.0, pos, pos + fwd, -down).unwrap();
        assert!((c2.rotation - c.rotation).abs_diff_eq(Mat3::ZERO, 1e-6));
        assert_eq!(c2.position, c.position);
        // The forward axis points at the target; up is the part of world up orthogonal to it.
        let want_fwd = (-DVec3::new(1.0, 2.0, 3.0)).normalize().as_vec3();
        assert!((c.forward() - want_fwd).length() < 1e-6);
        assert!(c.up().dot(c.forward()).abs() < 1e-6);
        assert!(c.up().y > 0.0);
    }

    #[test]
    fn resize_and_downsample_scale_intrinsics() {
        let c = cam();
        let r = c.resized(128, 96).unwrap();
        assert_eq!((r.fx, r.cx, r.cy), (2.0 * c.fx, 64.0, 48.0));
        // A pixel centre's ray hits the same world direction at both resolutions
        // when the pixel grid nests: pixel (2i+1)'s left edge is pixel i's centre.
        let (_, a) = c.ray(10.5, 7.5);
        let (_, b) = r.ray(21.0, 15.0);
        assert!((a - b).length() < 1e-6);
        let d = Camera { width: 4946, height: 3286, ..c }.downsampled(4).unwrap();
        assert_eq!((d.width, d.height), (1237, 822));
        assert_eq!(d.fx, c.fx / 4.0);
        assert!(c.downsampled(0).is_err());
    }

    #[test]
    fn bad_cameras_are_refused() {
        let up = DVec3::Y;
        assert!(Camera::look_at(4, 4, 60.0, DVec3::ZERO, DVec3::ZERO, up).is_err());
        assert!(Camera::look_at(4, 4, 60.0, DVec3::ZERO, DVec3::Y, up).is_err());
        assert!(Camera::look_at(4, 4, 180.0, DVec3::ZERO, DVec3::Z, up).is_err());
        assert!(Camera::look_at(0, 4, 60.0, DVec3::ZERO, DVec3::Z, up).is_err());
        let mirror = DMat3::from_diagonal(DVec3::new(1.0, 1.0, -1.0));
        assert!(Camera::new(4, 4, [1.0, 1.0, 2.0, 2.0], mirror, DVec3::ZERO).is_err());
        let scaled = DMat3::from_diagonal(DVec3::splat(2.0));
        assert!(Camera::new(4, 4, [1.0, 1.0, 2.0, 2.0], scaled, DVec3::ZERO).is_err());
        assert!(Camera::new(4, 4, [0.0, 1.0, 2.0, 2.0], DMat3::IDENTITY, DVec3::ZERO).is_err());
    }

    #[test]
    fn values_are_checked_as_the_f32_the_renderers_use() {
        let new = |intr: [f64; 4], pos: DVec3| Camera::new(4, 4, intr, DMat3::IDENTITY, pos);
        assert!(new([1.0, 1.0, 2.0, 2.0], DVec3::ZERO).is_ok());
        let e = new([1.0, 1.0, 2.0, 2.0], DVec3::new(1e39, 0.0, 0.0)).unwrap_err();
        assert!(e.contains("position") && e.contains("f32"), "{e}");
        let e = new([1e300, 1.0, 2.0, 2.0], DVec3::ZERO).unwrap_err();
        assert!(e.contains("fx=inf"), "{e}");
        let e = new([1e-50, 1.0, 2.0, 2.0], DVec3::ZERO).unwrap_err();
        assert!(e.contains("fx=0"), "{e}");
        let e = new([1.0, 1.0, 1e39, 2.0], DVec3::ZERO).unwrap_err();
        assert!(e.contains("principal point"), "{e}");
        // Each value fits an f32, but (px − cx) / fx does not.
        let e = new([1e-38, 1.0, 3e38, 2.0], DVec3::ZERO).unwrap_err();
        assert!(e.contains("not finite in f32"), "{e}");
    }
}
