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
pub fn bcc(opts: Bcc) -> OwnedScene {
    let m = opts.m as i64;
    let n = (2 * m * m * m) as usize;
    let lattice = |i: i64, j: i64, k: i64, c: i64| (((i * m + j) * m + k) * 2 + c) as u64;
    // Lattice index → scene id: identity, or a bijective multiplicative shuffle.
    let perm: Box<dyn Fn(u64) -> u32 + Sync> = if opts.shuffle {
        let a = (0..).map(|t| 0x9E37_79B9u64 + 2 * t).find(|&a| gcd(a, n as u64) == 1).unwrap();
        Box::new(move |x| ((x * a + 12_345) % n as u64) as u32)
    } else {
        Box::new(|x| x as u32)
    };
    let mut positions = vec![[0f32; 3]; n];
    let mut lists = vec![Vec::new(); n];
    let inside = |v: i64| (0..m).contains(&v);
    for i in 0..m {
        for j in 0..m {
            for k in 0..m {
                for c in 0..2 {
                    let l = lattice(i, j, k, c);
                    let id = perm(l) as usize;
                    let h = c as f32 * 0.5;
                    positions[id] = std::array::from_fn(|a| {
                        let base = [i, j, k][a] as f32 + h + opts.jitter * (unit(l, a as u64) - 0.5);
                        if opts.warp { base * base / m as f32 } else { base }
                    });
                    let list = &mut lists[id];
                    // Other sublattice: corners see centres at offsets {-1, 0}, centres see corners at {0, +1}.
                    let s = if c == 0 { -1 } else { 0 };
                    for (a, b, d) in (0..8).map(|t| (s + (t & 1), s + (t >> 1 & 1), s + (t >> 2 & 1))) {
                        if inside(i + a) && inside(j + b) && inside(k + d) {
                            list.push(perm(lattice(i + a, j + b, k + d, 1 - c)));
                        }
                    }
                    for (a, b, d) in [(-1, 0, 0), (1, 0, 0), (0, -1, 0), (0, 1, 0), (0, 0, -1), (0, 0, 1)] {
                        if inside(i + a) && inside(j + b) && inside(k + d) {
                            list.push(perm(lattice(i + a, j + b, k + d, c)));
                        }
                    }
                }
            }
        }
    }
    OwnedScene::from_lists(positions, &lists)
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
