//! Named scene layouts: which surfaces, their colours and how the site budget is shared.
//! World coordinates are metres with z up.

use super::shapes::{Pattern, Shape};

pub struct Surface {
    pub shape: Shape,
    pub pattern: Pattern,
    /// Sites per unit area relative to the other surfaces. Close to 1 everywhere: where
    /// spacings of neighbouring surfaces differ a lot, the coarse side's cells grow large
    /// against the fine side and their neighbour searches explode.
    pub detail: f64,
}

pub struct Preset {
    pub surfaces: Vec<Surface>,
    /// Box of the scene's empty space, filled with sparse near-zero-density sites.
    pub air: ([f64; 3], [f64; 3]),
    /// Radius of the far shell of near-zero-density sites.
    pub shell_radius: f64,
    /// A view from inside the scene onto the objects.
    pub camera: Camera,
}

/// A pinhole camera in the camera-file format (OpenCV convention: image y runs opposite
/// to `up`).
#[derive(Clone, Debug, serde::Serialize)]
pub struct Camera {
    pub width: u32,
    pub height: u32,
    pub fov_y_deg: f64,
    pub position: [f64; 3],
    pub look_at: [f64; 3],
    pub up: [f64; 3],
}

pub const NAMES: [&str; 2] = ["garden", "room"];

pub fn by_name(name: &str) -> Option<Preset> {
    match name {
        "garden" => Some(garden()),
        "room" => Some(room()),
        _ => None,
    }
}

fn s(shape: Shape, pattern: Pattern, detail: f64) -> Surface {
    Surface { shape, pattern, detail }
}

/// A table with a ball and a vase, set on a table; legs, the same for every preset.
fn table_and_objects() -> Vec<Surface> {
    let wood = || Pattern::Wood;
    let mut v = vec![s(Shape::Cuboid { lo: [-0.8, -0.5, 0.72], hi: [0.8, 0.5, 0.78] }, wood(), 2.0)];
    for (x, y) in [(-0.72, -0.42), (0.66, -0.42), (-0.72, 0.36), (0.66, 0.36)] {
        v.push(s(Shape::Cuboid { lo: [x, y, 0.0], hi: [x + 0.06, y + 0.06, 0.72] }, wood(), 2.0));
    }
    v.push(s(
        Shape::Sphere { centre: [-0.35, 0.0, 0.96], radius: 0.18 },
        Pattern::Segments { centre: [-0.35, 0.0, 0.96], a: [0.85, 0.12, 0.10], b: [0.95, 0.93, 0.88], count: 6 },
        2.0,
    ));
    v.push(s(
        Shape::Cylinder { base: [0.3, 0.1, 0.78], radius: 0.1, height: 0.35 },
        Pattern::Bands { a: [0.12, 0.25, 0.70], b: [0.95, 0.80, 0.20], period: 0.07 },
        2.0,
    ));
    v.push(s(
        Shape::Sphere { centre: [1.5, -1.2, 0.3], radius: 0.3 },
        Pattern::Checker { a: [0.9, 0.9, 0.9], b: [0.15, 0.15, 0.18], cell: 0.12 },
        2.0,
    ));
    v
}

fn garden() -> Preset {
    let mut surfaces = table_and_objects();
    surfaces.push(s(Shape::Disc { centre: [0.0, 0.0, 0.0], radius: 7.0 }, Pattern::Lawn, 1.0));
    surfaces.push(s(Shape::Hedge { radius: 6.3, height: 1.8 }, Pattern::Leaves, 0.8));
    surfaces.push(s(Shape::Dome { radius: 20.0 }, Pattern::Sky, 0.03));
    Preset { surfaces, air: ([-6.5, -6.5, 0.0], [6.5, 6.5, 3.0]), shell_radius: 50.0, camera: view([0.3, -4.4, 1.6], [0.0, 0.0, 0.8]) }
}

fn room() -> Preset {
    let mut surfaces = table_and_objects();
    surfaces.push(s(Shape::Room { lo: [-3.0, -3.5, 0.0], hi: [3.0, 3.5, 2.6] }, Pattern::Plaster([0.82, 0.78, 0.70]), 1.0));
    surfaces.push(s(Shape::Cuboid { lo: [-2.9, 2.6, 0.0], hi: [-1.2, 3.4, 0.9] }, Pattern::Plaster([0.35, 0.20, 0.45]), 1.5));
    Preset { surfaces, air: ([-3.0, -3.5, 0.0], [3.0, 3.5, 2.6]), shell_radius: 15.0, camera: view([0.8, -3.1, 1.7], [0.0, 0.0, 0.8]) }
}

fn view(position: [f64; 3], look_at: [f64; 3]) -> Camera {
    Camera { width: 640, height: 480, fov_y_deg: 50.0, position, look_at, up: [0.0, 0.0, 1.0] }
}
