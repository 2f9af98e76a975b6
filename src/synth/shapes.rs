//! Surfaces a preset is built from, sampled uniformly by area, and their colour patterns.

use super::rng::Rng;

pub type V3 = [f64; 3];

fn add(a: V3, b: V3) -> V3 {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

fn scale(a: V3, s: f64) -> V3 {
    [a[0] * s, a[1] * s, a[2] * s]
}

fn sub(a: V3, b: V3) -> V3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn norm(a: V3) -> f64 {
    (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt()
}

fn cross(a: V3, b: V3) -> V3 {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

/// Two unit vectors that make a right-handed frame with the unit vector `n`.
fn basis(n: V3) -> (V3, V3) {
    let helper = if n[0].abs() < 0.9 { [1.0, 0.0, 0.0] } else { [0.0, 1.0, 0.0] };
    let u = cross(helper, n);
    let u = scale(u, 1.0 / norm(u));
    (u, cross(n, u))
}

pub fn offset(p: V3, n: V3, h: f64) -> V3 {
    add(p, scale(n, h))
}

#[derive(Clone, Debug)]
pub enum Shape {
    /// Horizontal disc facing +z.
    Disc {
        centre: V3,
        radius: f64,
    },
    /// Axis-aligned box, all six faces.
    Cuboid {
        lo: V3,
        hi: V3,
    },
    Sphere {
        centre: V3,
        radius: f64,
    },
    /// Vertical cylinder standing on `base`, side and top cap.
    Cylinder {
        base: V3,
        radius: f64,
        height: f64,
    },
    /// Vertical wall around the z axis whose radius and height wobble like a hedge;
    /// its normal faces inwards (towards the viewer).
    Hedge {
        radius: f64,
        height: f64,
    },
    /// Sphere around the origin seen from inside (normal inwards): the sky, and below the
    /// horizon the earth. A whole sphere, so no rim of cells borders empty space.
    Dome {
        radius: f64,
    },
    /// Inside of an axis-aligned box (a room): all six faces with inward normals.
    Room {
        lo: V3,
        hi: V3,
    },
    /// Ring around `axis` (a unit vector) through `centre`: a wheel's tyre.
    Torus {
        centre: V3,
        axis: V3,
        major: f64,
        minor: f64,
    },
    /// Side of a cylinder from `a` to `b` in any direction (its ends are left open:
    /// tubes meet other parts there): a bicycle's frame, a bench's rails.
    Tube {
        a: V3,
        b: V3,
        radius: f64,
    },
}

pub struct Sample {
    pub p: V3,
    /// Unit normal pointing into empty space.
    pub n: V3,
}

impl Shape {
    pub fn area(&self) -> f64 {
        use std::f64::consts::PI;
        match *self {
            Shape::Disc { radius, .. } => PI * radius * radius,
            Shape::Cuboid { lo, hi } | Shape::Room { lo, hi } => box_faces(lo, hi).iter().map(|f| f.0).sum(),
            Shape::Sphere { radius, .. } => 4.0 * PI * radius * radius,
            Shape::Cylinder { radius, height, .. } => 2.0 * PI * radius * height + PI * radius * radius,
            Shape::Hedge { radius, height } => 2.0 * PI * radius * height + 2.0 * PI * radius * 0.6,
            Shape::Dome { radius } => 4.0 * PI * radius * radius,
            Shape::Torus { major, minor, .. } => 4.0 * PI * PI * major * minor,
            Shape::Tube { a, b, radius } => 2.0 * PI * radius * norm(sub(b, a)),
        }
    }

    /// How deep below the surface the solid extends (where interior sites may go).
    pub fn depth(&self) -> f64 {
        match *self {
            Shape::Disc { .. } => 15.0,
            Shape::Cuboid { lo, hi } => (0..3).map(|a| hi[a] - lo[a]).fold(f64::INFINITY, f64::min) * 0.5,
            Shape::Sphere { radius, .. } => radius * 0.9,
            Shape::Cylinder { radius, .. } => radius * 0.9,
            Shape::Hedge { .. } => 0.3,
            Shape::Dome { radius } => radius * 1.2,
            Shape::Room { .. } => 0.3,
            Shape::Torus { minor, .. } => minor * 0.9,
            Shape::Tube { radius, .. } => radius * 0.9,
        }
    }

    pub fn sample(&self, r: &mut Rng) -> Sample {
        use std::f64::consts::TAU;
        match *self {
            Shape::Disc { centre, radius } => {
                let (rad, phi) = (radius * r.f64().sqrt(), r.range(0.0, TAU));
                Sample { p: add(centre, [rad * phi.cos(), rad * phi.sin(), 0.0]), n: [0.0, 0.0, 1.0] }
            }
            Shape::Cuboid { lo, hi } => sample_box(lo, hi, r, 1.0),
            Shape::Room { lo, hi } => sample_box(lo, hi, r, -1.0),
            Shape::Sphere { centre, radius } => {
                let n = r.unit_vector();
                Sample { p: offset(centre, n, radius), n }
            }
            Shape::Cylinder { base, radius, height } => {
                let side = 2.0 * height;
                if r.f64() * (side + radius) < side {
                    let phi = r.range(0.0, TAU);
                    let n = [phi.cos(), phi.sin(), 0.0];
                    Sample { p: add(base, [radius * n[0], radius * n[1], r.range(0.0, height)]), n }
                } else {
                    let (rad, phi) = (radius * r.f64().sqrt(), r.range(0.0, TAU));
                    Sample { p: add(base, [rad * phi.cos(), rad * phi.sin(), height]), n: [0.0, 0.0, 1.0] }
                }
            }
            Shape::Hedge { radius, height } => {
                let phi = r.range(0.0, TAU);
                let wobble = |phi: f64, z: f64| 0.25 * fbm([phi.cos() * 3.0, phi.sin() * 3.0, z * 1.5], 3, 11);
                let top = height * (1.0 + 0.25 * fbm([phi.cos() * 2.0, phi.sin() * 2.0, 0.0], 2, 12));
                if r.f64() * (height + 0.6) < height {
                    let z = r.range(0.0, top);
                    let rr = radius + wobble(phi, z);
                    Sample { p: [rr * phi.cos(), rr * phi.sin(), z], n: [-phi.cos(), -phi.sin(), 0.0] }
                } else {
                    let rr = radius + r.range(0.0, 0.6) + wobble(phi, top);
                    Sample { p: [rr * phi.cos(), rr * phi.sin(), top], n: [0.0, 0.0, 1.0] }
                }
            }
            Shape::Dome { radius } => {
                let n = r.unit_vector();
                Sample { p: scale(n, radius), n: scale(n, -1.0) }
            }
            Shape::Torus { centre, axis, major, minor } => {
                let (u, v) = basis(axis);
                let phi = r.range(0.0, TAU);
                // The outer side of the ring has more area than the inner: accept the
                // tube angle in proportion to the circle it sweeps.
                let theta = loop {
                    let t = r.range(0.0, TAU);
                    if r.f64() * (major + minor) < major + minor * t.cos() {
                        break t;
                    }
                };
                let radial = add(scale(u, phi.cos()), scale(v, phi.sin()));
                let n = add(scale(radial, theta.cos()), scale(axis, theta.sin()));
                Sample { p: add(add(centre, scale(radial, major)), scale(n, minor)), n }
            }
            Shape::Tube { a, b, radius } => {
                let d = sub(b, a);
                let (u, v) = basis(scale(d, 1.0 / norm(d)));
                let phi = r.range(0.0, TAU);
                let n = add(scale(u, phi.cos()), scale(v, phi.sin()));
                Sample { p: add(add(a, scale(d, r.f64())), scale(n, radius)), n }
            }
        }
    }
}

/// The six faces of a box: (area, axis, side) with side +1 for the `hi` face.
fn box_faces(lo: V3, hi: V3) -> [(f64, usize, f64); 6] {
    let e = [hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]];
    let a = [e[1] * e[2], e[0] * e[2], e[0] * e[1]];
    [(a[0], 0, 1.0), (a[0], 0, -1.0), (a[1], 1, 1.0), (a[1], 1, -1.0), (a[2], 2, 1.0), (a[2], 2, -1.0)]
}

fn sample_box(lo: V3, hi: V3, r: &mut Rng, facing: f64) -> Sample {
    let faces = box_faces(lo, hi);
    let total: f64 = faces.iter().map(|f| f.0).sum();
    let mut pick = r.f64() * total;
    let mut face = faces[5];
    for f in faces {
        if pick < f.0 {
            face = f;
            break;
        }
        pick -= f.0;
    }
    let (_, axis, side) = face;
    let mut p = [0, 1, 2].map(|a| r.range(lo[a], hi[a]));
    p[axis] = if side > 0.0 { hi[axis] } else { lo[axis] };
    let mut n = [0.0; 3];
    n[axis] = side * facing;
    Sample { p, n }
}

/// Hash of a lattice point to [0, 1).
fn lattice(x: i64, y: i64, z: i64, salt: u64) -> f64 {
    let mut h = Rng::new(
        (x as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ (y as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F)
            ^ (z as u64).wrapping_mul(0x1656_67B1_9E37_79F9)
            ^ salt.wrapping_mul(0x27D4_EB2F_1656_67C5),
    );
    h.f64()
}

/// Smooth value noise in [-1, 1].
pub fn noise(p: V3, salt: u64) -> f64 {
    let f = p.map(f64::floor);
    let t = [0, 1, 2].map(|a| {
        let u = p[a] - f[a];
        u * u * (3.0 - 2.0 * u)
    });
    let [x, y, z] = f.map(|v| v as i64);
    let mut acc = 0.0;
    for c in 0..8 {
        let (dx, dy, dz) = (c & 1, (c >> 1) & 1, (c >> 2) & 1);
        let w =
            [(dx, 0), (dy, 1), (dz, 2)].iter().map(|&(d, a)| if d == 1 { t[a] } else { 1.0 - t[a] }).product::<f64>();
        acc += w * lattice(x + dx, y + dy, z + dz, salt);
    }
    2.0 * acc - 1.0
}

/// Fractal sum of `octaves` noise layers, roughly in [-1, 1].
pub fn fbm(p: V3, octaves: u32, salt: u64) -> f64 {
    let (mut sum, mut amp, mut freq, mut norm) = (0.0, 1.0, 1.0, 0.0);
    for o in 0..octaves {
        sum += amp * noise(scale(p, freq), salt + o as u64);
        norm += amp;
        amp *= 0.5;
        freq *= 2.03;
    }
    sum / norm
}

fn mix(a: V3, b: V3, t: f64) -> V3 {
    let t = t.clamp(0.0, 1.0);
    [0, 1, 2].map(|k| a[k] + (b[k] - a[k]) * t)
}

/// Procedural colour of a surface point, in [0, 1].
#[derive(Clone, Debug)]
pub enum Pattern {
    /// Grass with darker patches and a gravel path crossing it.
    Lawn,
    /// Wood grain along x.
    Wood,
    /// Beach-ball segments by azimuth around `centre`.
    Segments { centre: V3, a: V3, b: V3, count: u32 },
    /// Horizontal bands.
    Bands { a: V3, b: V3, period: f64 },
    /// 3D checkerboard.
    Checker { a: V3, b: V3, cell: f64 },
    /// Leaves: green noise with darker holes.
    Leaves,
    /// Blue sky brightening to the horizon, with clouds.
    Sky,
    /// Plain colour with faint mottling.
    Plaster(V3),
}

impl Pattern {
    pub fn colour(&self, p: V3) -> V3 {
        match self {
            Pattern::Lawn => {
                let path = (p[1] - 0.8 * (0.35 * p[0]).sin() + 2.2).abs() < 0.45 + 0.1 * noise(scale(p, 2.0), 1);
                if path {
                    let g = 0.5 + 0.5 * fbm(scale(p, 9.0), 3, 2);
                    mix([0.55, 0.50, 0.42], [0.75, 0.72, 0.66], g)
                } else {
                    let patch = 0.5 + 0.5 * fbm(scale(p, 0.8), 3, 3);
                    let blade = 0.5 + 0.5 * noise(scale(p, 25.0), 4);
                    let base = mix([0.18, 0.36, 0.10], [0.40, 0.55, 0.18], patch);
                    mix(base, [0.10, 0.22, 0.05], 0.5 * blade)
                }
            }
            Pattern::Wood => {
                let grain = (p[0] * 30.0 + 4.0 * fbm([p[0] * 2.0, p[1] * 6.0, p[2] * 6.0], 3, 5)).sin();
                mix([0.45, 0.28, 0.14], [0.62, 0.42, 0.22], 0.5 + 0.5 * grain)
            }
            Pattern::Segments { centre, a, b, count } => {
                let phi = (p[1] - centre[1]).atan2(p[0] - centre[0]);
                let k = ((phi + std::f64::consts::PI) / std::f64::consts::TAU * *count as f64) as u32;
                if k.is_multiple_of(2) { *a } else { *b }
            }
            Pattern::Bands { a, b, period } => {
                if (p[2] / period).rem_euclid(1.0) < 0.5 {
                    *a
                } else {
                    *b
                }
            }
            Pattern::Checker { a, b, cell } => {
                let s: i64 = p.iter().map(|x| (x / cell).floor() as i64).sum();
                if s.rem_euclid(2) == 0 { *a } else { *b }
            }
            Pattern::Leaves => {
                let g = 0.5 + 0.5 * fbm(scale(p, 4.0), 4, 6);
                let hole = noise(scale(p, 12.0), 7) > 0.55;
                let leaf = mix([0.08, 0.25, 0.06], [0.30, 0.50, 0.16], g);
                if hole { mix(leaf, [0.03, 0.08, 0.02], 0.7) } else { leaf }
            }
            Pattern::Sky => {
                let len = (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]).sqrt().max(1e-9);
                if p[2] < 0.0 {
                    return [0.30, 0.24, 0.18];
                }
                let up = (p[2] / len).clamp(0.0, 1.0);
                let sky = mix([0.80, 0.88, 0.95], [0.30, 0.52, 0.85], up.sqrt());
                let cloud = (fbm(scale(p, 0.15), 4, 8) - 0.1).max(0.0) * 2.5;
                mix(sky, [0.97, 0.97, 0.97], cloud)
            }
            Pattern::Plaster(c) => {
                let m = 0.06 * fbm(scale(p, 3.0), 2, 9);
                c.map(|x| x + m)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_lie_on_their_shapes() {
        let mut r = Rng::new(3);
        for _ in 0..1000 {
            let s = Shape::Sphere { centre: [1.0, 2.0, 3.0], radius: 0.5 }.sample(&mut r);
            let d = ((s.p[0] - 1.0).powi(2) + (s.p[1] - 2.0).powi(2) + (s.p[2] - 3.0).powi(2)).sqrt();
            assert!((d - 0.5).abs() < 1e-12);
            let b = Shape::Cuboid { lo: [0.0; 3], hi: [1.0, 2.0, 3.0] }.sample(&mut r);
            let on_face = (0..3).any(|a| b.p[a] == 0.0 || b.p[a] == [1.0, 2.0, 3.0][a]);
            assert!(on_face && (0..3).all(|a| (0.0..=[1.0, 2.0, 3.0][a]).contains(&b.p[a])));
        }
    }

    #[test]
    fn rings_and_tubes_are_sampled_on_their_surfaces_by_area() {
        let mut r = Rng::new(5);
        let (centre, axis, major, minor) = ([1.0, 0.0, 0.5], [0.0, 1.0, 0.0], 0.3, 0.05);
        let ring = Shape::Torus { centre, axis, major, minor };
        let (a, b, radius) = ([0.0, 0.0, 0.0], [1.0, 2.0, 2.0], 0.1);
        let tube = Shape::Tube { a, b, radius };
        let mut outer = 0;
        for _ in 0..4000 {
            let s = ring.sample(&mut r);
            let d = sub(s.p, centre);
            let along = d[1];
            let across = (d[0] * d[0] + d[2] * d[2]).sqrt();
            assert!(((across - major).powi(2) + along * along - minor * minor).abs() < 1e-9);
            assert!((norm(s.n) - 1.0).abs() < 1e-12);
            // The normal points away from the ring's core circle.
            let core = add(centre, scale([d[0] / across, 0.0, d[2] / across], major));
            assert!((norm(sub(s.p, offset(core, s.n, minor)))) < 1e-9);
            outer += (across > major) as u32;
            let t = tube.sample(&mut r);
            let axis_dir = scale(sub(b, a), 1.0 / 3.0);
            let h = sub(t.p, a);
            let foot = h[0] * axis_dir[0] + h[1] * axis_dir[1] + h[2] * axis_dir[2];
            assert!((0.0..=3.0).contains(&foot));
            assert!((norm(sub(h, scale(axis_dir, foot))) - radius).abs() < 1e-9);
        }
        // The outer half of a ring has (R + 2r/π)/(R − 2r/π) times the inner's area.
        let share = outer as f64 / 4000.0;
        let expect = (major + 2.0 * minor / std::f64::consts::PI) / (2.0 * major);
        assert!((share - expect).abs() < 0.03, "{share} vs {expect}");
        assert!((ring.area() - 4.0 * std::f64::consts::PI.powi(2) * major * minor).abs() < 1e-12);
        assert!((tube.area() - 2.0 * std::f64::consts::PI * radius * 3.0).abs() < 1e-12);
    }

    #[test]
    fn noise_is_bounded_and_continuous() {
        for i in 0..1000 {
            let p = [i as f64 * 0.013, i as f64 * 0.007, 0.3];
            let v = noise(p, 1);
            assert!((-1.0..=1.0).contains(&v));
            let w = noise([p[0] + 1e-6, p[1], p[2]], 1);
            assert!((v - w).abs() < 1e-4);
        }
    }
}
