//! A cubic lattice of sites (spacing 1, coordinates 0..n): its Voronoi cells are unit cubes
//! (semi-infinite columns on the boundary), and the 6-neighbour adjacency is its Delaunay
//! edge set up to degenerate zero-area faces. Closed-form answers follow from that.
#![allow(dead_code)]

use foam_ipu::scene::{Scene, sh_rest_len};

pub struct Lattice {
    pub n: usize,
    pub scene: Scene,
}

impl Lattice {
    /// `cell(ix, iy, iz) -> (density, colour)` fills every site; SH rest zero.
    pub fn new(n: usize, sh_degree: u8, cell: impl Fn(usize, usize, usize) -> (f32, [u8; 3])) -> Lattice {
        let idx = |x: usize, y: usize, z: usize| (x + n * (y + n * z)) as u32;
        let mut s = Scene { sh_degree, ..Default::default() };
        for z in 0..n {
            for y in 0..n {
                for x in 0..n {
                    s.positions.push([x as f32, y as f32, z as f32]);
                    let (d, c) = cell(x, y, z);
                    s.density.push(d);
                    s.color.push(c);
                    let p = [x as i64, y as i64, z as i64];
                    for (a, step) in [(0, -1), (0, 1), (1, -1), (1, 1), (2, -1), (2, 1)] {
                        let mut q = p;
                        q[a] += step;
                        if q.iter().all(|&v| v >= 0 && v < n as i64) {
                            s.adjacency.push(idx(q[0] as usize, q[1] as usize, q[2] as usize));
                        }
                    }
                    s.adjacency_end.push(s.adjacency.len() as u32);
                }
            }
        }
        s.sh_rest = vec![0.0; n * n * n * sh_rest_len(sh_degree)];
        Lattice { n, scene: s }
    }

    pub fn index(&self, x: usize, y: usize, z: usize) -> usize {
        x + self.n * (y + self.n * z)
    }
}
