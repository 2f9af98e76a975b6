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

/// How the sites thin out from the surfaces into empty space.
#[derive(Clone, Copy, Debug)]
pub enum Grading {
    /// A skin on each surface, stepped layers off it, and a tenth of all sites as a
    /// sparse fill: half uniform in the `air` box, half thinning out towards the shell.
    /// Where the fill's big cells meet a dense skin, one cell borders dozens of small
    /// ones, and a shard of them borders tens of thousands: real scenes have such
    /// regions too, so this stays as the partitioner's stress case.
    Layers { air: ([f64; 3], [f64; 3]) },
    /// As trained scenes are: site spacing grows smoothly with the distance from the
    /// nearest surface, by `rate` per unit of distance on either side, and empty space
    /// far from every surface is filled at the same rate around the scene's centre.
    /// Neighbouring cells then differ little in size, so a compact shard borders about
    /// as many cells as lie on its surface.
    Smooth { rate: f64 },
}

pub struct Preset {
    pub surfaces: Vec<Surface>,
    pub grading: Grading,
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

pub const NAMES: [&str; 3] = ["garden", "room", "bicycle"];

pub fn by_name(name: &str) -> Option<Preset> {
    match name {
        "garden" => Some(garden()),
        "room" => Some(room()),
        "bicycle" => Some(bicycle()),
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
    Preset {
        surfaces,
        grading: Grading::Layers { air: ([-6.5, -6.5, 0.0], [6.5, 6.5, 3.0]) },
        shell_radius: 50.0,
        camera: view([0.3, -4.4, 1.6], [0.0, 0.0, 0.8]),
    }
}

fn room() -> Preset {
    let mut surfaces = table_and_objects();
    surfaces.push(s(
        Shape::Room { lo: [-3.0, -3.5, 0.0], hi: [3.0, 3.5, 2.6] },
        Pattern::Plaster([0.82, 0.78, 0.70]),
        1.0,
    ));
    surfaces.push(s(
        Shape::Cuboid { lo: [-2.9, 2.6, 0.0], hi: [-1.2, 3.4, 0.9] },
        Pattern::Plaster([0.35, 0.20, 0.45]),
        1.5,
    ));
    Preset {
        surfaces,
        grading: Grading::Layers { air: ([-3.0, -3.5, 0.0], [3.0, 3.5, 2.6]) },
        shell_radius: 15.0,
        camera: view([0.8, -3.1, 1.7], [0.0, 0.0, 0.8]),
    }
}

/// A bicycle beside a bench on a lawn, trees and a hedge behind, under the sky: the
/// paper's largest scene (Mip-NeRF 360 Bicycle) in outline, graded as trained scenes are.
fn bicycle() -> Preset {
    let paint = || Pattern::Plaster([0.72, 0.10, 0.08]);
    let rubber = || Pattern::Plaster([0.07, 0.07, 0.08]);
    let tube = |a: [f64; 3], b: [f64; 3], radius: f64| Shape::Tube { a, b, radius };
    let (rear, front, crank) = ([-0.52, 0.0, 0.34], [0.52, 0.0, 0.34], [0.0, 0.0, 0.30]);
    let (seat, head_top, head_low) = ([-0.12, 0.0, 0.82], [0.40, 0.0, 0.84], [0.43, 0.0, 0.68]);
    let mut surfaces = vec![s(Shape::Disc { centre: [0.0, 0.0, 0.0], radius: 9.0 }, Pattern::Lawn, 1.0)];
    for hub in [rear, front] {
        let wheel = Shape::Torus { centre: hub, axis: [0.0, 1.0, 0.0], major: 0.31, minor: 0.025 };
        surfaces.push(s(wheel, rubber(), BIKE_DETAIL));
    }
    for (a, b) in [
        (crank, seat),
        (crank, head_low),
        (seat, head_top),
        (rear, crank),
        (rear, seat),
        (head_low, front),
        (head_low, head_top),
    ] {
        surfaces.push(s(tube(a, b, 0.018), paint(), BIKE_DETAIL));
    }
    surfaces.push(s(tube([0.38, -0.24, 0.90], [0.38, 0.24, 0.90], 0.014), rubber(), BIKE_DETAIL));
    surfaces.push(s(Shape::Cuboid { lo: [-0.22, -0.05, 0.84], hi: [-0.04, 0.05, 0.88] }, rubber(), BIKE_DETAIL));
    // A bench behind the bicycle: seat, back and four legs.
    let bench = [
        ([-1.1, 0.9, 0.42], [1.1, 1.35, 0.47]),
        ([-1.1, 1.32, 0.50], [1.1, 1.37, 0.92]),
        ([-1.0, 0.95, 0.0], [-0.94, 1.01, 0.42]),
        ([0.94, 0.95, 0.0], [1.0, 1.01, 0.42]),
        ([-1.0, 1.26, 0.0], [-0.94, 1.32, 0.42]),
        ([0.94, 1.26, 0.0], [1.0, 1.32, 0.42]),
    ];
    for (lo, hi) in bench {
        surfaces.push(s(Shape::Cuboid { lo, hi }, Pattern::Wood, 1.5));
    }
    // Trees: a trunk and a crown each.
    for (x, y, h) in [(-3.5, 4.0, 3.0), (2.8, 4.8, 3.6), (5.5, 1.5, 2.8), (-5.8, 0.5, 3.2), (0.5, 6.5, 4.0)] {
        let trunk = Shape::Cylinder { base: [x, y, 0.0], radius: 0.16, height: h };
        surfaces.push(s(trunk, Pattern::Wood, 1.0));
        let crown = Shape::Sphere { centre: [x, y, h + 0.9], radius: 1.3 };
        surfaces.push(s(crown, Pattern::Leaves, 0.8));
    }
    surfaces.push(s(Shape::Hedge { radius: 8.2, height: 1.6 }, Pattern::Leaves, 0.6));
    surfaces.push(s(Shape::Dome { radius: 25.0 }, Pattern::Sky, 0.03));
    Preset {
        surfaces,
        grading: Grading::Smooth { rate: SMOOTH_RATE },
        shell_radius: 60.0,
        camera: view([1.1, -3.4, 1.35], [0.0, 0.3, 0.5]),
    }
}

/// Spacing gained per unit of distance from the surfaces in the bicycle preset.
const SMOOTH_RATE: f64 = 0.1;

/// The bicycle's sites per unit of area against the lawn's: thin tubes need many to
/// keep their shape, as a trainer densifies fine detail.
const BIKE_DETAIL: f64 = 6.0;

fn view(position: [f64; 3], look_at: [f64; 3]) -> Camera {
    Camera { width: 640, height: 480, fov_y_deg: 50.0, position, look_at, up: [0.0, 0.0, 1.0] }
}
