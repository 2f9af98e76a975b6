//! In-memory scenes for tests and benchmarks, with exact Voronoi adjacency.
//!
//! The body-centred cubic lattice is the one whose Voronoi cells (truncated octahedra)
//! have 14 faces — close to the ≈ 15 neighbours of trained Radiant Foam scenes — and
//! whose adjacency is known in closed form, so large scenes need no Delaunay step.

use crate::SceneRef;

/// Owned scene arrays; [`OwnedScene::as_ref`] gives the partitioner's view.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OwnedScene {
    pub positions: Vec<[f32; 3]>,
    pub density: Vec<f32>,
    pub color: Vec<[u8; 3]>,
    pub adjacency_end: Vec<u32>,
    pub adjacency: Vec<u32>,
}

impl OwnedScene {
    pub fn as_ref(&self) -> SceneRef<'_> {
        SceneRef {
            positions: &self.positions,
            density: &self.density,
            color: &self.color,
            adjacency_end: &self.adjacency_end,
            adjacency: &self.adjacency,
            sh: crate::ShPayload::NONE,
        }
    }

    pub fn len(&self) -> usize {
        self.positions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }

    /// Bytes of the arrays (for memory budgets).
    pub fn heap_bytes(&self) -> usize {
        self.positions.len() * 12
            + self.density.len() * 4
            + self.color.len() * 3
            + self.adjacency_end.len() * 4
            + self.adjacency.len() * 4
    }

    /// A scene from sites and per-cell neighbour lists (attributes derived from the id).
    pub fn from_lists(positions: Vec<[f32; 3]>, lists: &[Vec<u32>]) -> OwnedScene {
        let mut adjacency_end = Vec::with_capacity(lists.len());
        let mut adjacency = Vec::new();
        for l in lists {
            adjacency.extend_from_slice(l);
            adjacency_end.push(adjacency.len() as u32);
        }
        let n = positions.len();
        OwnedScene {
            positions,
            density: (0..n).map(|i| (hash(i as u64, 7) % 1000) as f32 / 100.0).collect(),
            color: (0..n).map(|i| hash(i as u64, 11).to_le_bytes()[..3].try_into().unwrap()).collect(),
            adjacency_end,
            adjacency,
        }
    }
}

/// splitmix64 of (index, stream): deterministic pseudo-random bits without state.
fn hash(i: u64, stream: u64) -> u64 {
    let mut z = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ stream.wrapping_mul(0xD1B5_4A32_D192_ED2D);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn unit(i: u64, stream: u64) -> f32 {
    (hash(i, stream) >> 40) as f32 / (1u64 << 24) as f32
}

/// Options of [`bcc`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Bcc {
    /// Lattice cells per axis: the scene has 2·m³ sites.
    pub m: u32,
    /// Each site moves by up to ±jitter/2 per axis (keep < 0.25 to keep the topology).
    pub jitter: f32,
    /// Squares each coordinate (monotone, so the adjacency stays valid): sites crowd
    /// towards the origin, as trained scenes crowd around their subject.
    pub warp: bool,
    /// Numbers the sites in a pseudo-random order instead of lattice order.
    pub shuffle: bool,
}

/// A body-centred cubic lattice: corners (i, j, k) and centres (i, j, k) + ½ for
/// i, j, k < m. Neighbours: the 8 nearest of the other sublattice and the 6 axis
/// neighbours of the same one, dropped at the boundary. Symmetric by construction.
/// Built straight into CSR arrays, so a 4.2 M-cell scene costs only its own bytes.
pub fn bcc(opts: Bcc) -> OwnedScene {
    let m = opts.m as i64;
    let n = (2 * m * m * m) as u64;
    // Scene id ↔ lattice index: identity, or a bijective affine map modulo n.
    let (a, b) = if opts.shuffle {
        let a = (0..).map(|t| 0x9E37_79B9u64 + 2 * t).find(|&a| gcd(a, n) == 1).unwrap();
        (a % n, 12_345 % n)
    } else {
        (1, 0)
    };
    let a_inv = mod_inverse(a, n);
    let id_of = |l: u64| ((l as u128 * a as u128 + b as u128) % n as u128) as u32;
    let lattice_of = |id: u64| (((id + n - b) as u128 * a_inv as u128) % n as u128) as u64;
    let inside = |v: i64| (0..m).contains(&v);
    let mut scene = OwnedScene {
        positions: Vec::with_capacity(n as usize),
        density: Vec::with_capacity(n as usize),
        color: Vec::with_capacity(n as usize),
        adjacency_end: Vec::with_capacity(n as usize),
        adjacency: Vec::with_capacity(n as usize * 14),
    };
    for id in 0..n {
        let l = lattice_of(id);
        let (c, cell) = ((l % 2) as i64, (l / 2) as i64);
        let (i, j, k) = (cell / (m * m), cell / m % m, cell % m);
        let h = c as f32 * 0.5;
        scene.positions.push(std::array::from_fn(|ax| {
            let base = [i, j, k][ax] as f32 + h + opts.jitter * (unit(l, ax as u64) - 0.5);
            if opts.warp { base * base / m as f32 } else { base }
        }));
        scene.density.push((hash(id, 7) % 1000) as f32 / 100.0);
        scene.color.push(hash(id, 11).to_le_bytes()[..3].try_into().unwrap());
        let mut push = |di: i64, dj: i64, dk: i64, sub: i64| {
            if inside(i + di) && inside(j + dj) && inside(k + dk) {
                let nl = (((i + di) * m + j + dj) * m + k + dk) * 2 + sub;
                scene.adjacency.push(id_of(nl as u64));
            }
        };
        // Other sublattice: corners see centres at offsets {-1, 0}, centres see corners at {0, +1}.
        let s = if c == 0 { -1 } else { 0 };
        for t in 0..8 {
            push(s + (t & 1), s + (t >> 1 & 1), s + (t >> 2 & 1), 1 - c);
        }
        for (di, dj, dk) in [(-1, 0, 0), (1, 0, 0), (0, -1, 0), (0, 1, 0), (0, 0, -1), (0, 0, 1)] {
            push(di, dj, dk, c);
        }
        scene.adjacency_end.push(scene.adjacency.len() as u32);
    }
    scene
}

fn mod_inverse(a: u64, n: u64) -> u64 {
    let (mut t, mut new_t, mut r, mut new_r) = (0i128, 1i128, n as i128, a as i128);
    while new_r != 0 {
        let q = r / new_r;
        (t, new_t) = (new_t, t - q * new_t);
        (r, new_r) = (new_r, r - q * new_r);
    }
    t.rem_euclid(n as i128) as u64
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bcc_adjacency_is_symmetric_with_14_interior_neighbours() {
        for shuffle in [false, true] {
            let s = bcc(Bcc { m: 5, jitter: 0.1, warp: true, shuffle });
            let r = s.as_ref();
            r.validate().unwrap();
            let mut max = 0;
            for i in 0..s.len() {
                max = max.max(r.neighbours(i).len());
                for &j in r.neighbours(i) {
                    assert!(r.neighbours(j as usize).contains(&(i as u32)), "{i}-{j} not symmetric");
                }
            }
            assert_eq!(max, 14);
            let mut ids: Vec<[u32; 3]> = s.positions.iter().map(|p| p.map(f32::to_bits)).collect();
            ids.sort();
            ids.dedup();
            assert_eq!(ids.len(), s.len(), "every site is placed once");
        }
    }
}
