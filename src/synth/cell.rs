//! A convex polytope clipped by half-spaces: one Voronoi cell under construction.
//!
//! The cell is kept in its dual form: a list of planes and a closed triangulation whose
//! triangles are the polytope's vertices (each vertex is where three planes meet). A
//! triangle's edge (a, b) is the polytope edge between faces a and b; the triangulation is
//! consistently oriented, so each edge appears once in each direction. Clipping removes
//! the triangles whose vertex lies outside the new plane and fans the hole's boundary
//! to the new plane. Only the topology decides which triangles go, so the structure stays
//! a closed surface even when rounding makes a near-degenerate vertex land on either side.
//! Coordinates are relative to the cell's site, in f64.

/// Owner of a plane that bounds the clip domain rather than separating two sites.
pub const DOMAIN: u32 = u32::MAX;

/// Distance, relative to the cell's radius, within which a vertex counts as on a plane.
const TOLERANCE: f64 = 1e-12;

#[derive(Debug, PartialEq, Eq)]
pub enum ClipError {
    /// Every vertex lay outside a plane that keeps the site inside: rounding has broken
    /// the cell (coincident or wildly scaled sites).
    Vanished,
    /// Three planes met at a non-finite point.
    NonFinite,
    /// More planes than a u16 index can name.
    TooManyPlanes,
}

#[derive(Clone, Debug, Default)]
pub struct ConvexCell {
    /// `[nx, ny, nz, d]`: the cell is `n·x ≤ d`.
    planes: Vec<[f64; 4]>,
    owner: Vec<u32>,
    tris: Vec<[u16; 3]>,
    verts: Vec<[f64; 3]>,
    /// Largest squared distance from the site to a vertex.
    r2: f64,
    /// Per vertex: whether its circumsphere is known to hold no site that could cut it.
    checked: Vec<bool>,
    // Scratch reused between clips so clipping does not allocate in the steady state.
    outside: Vec<bool>,
    /// Directed edges `a << 16 | b` of the removed triangles.
    edges: Vec<u32>,
    fan: Vec<[u16; 3]>,
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

fn normal(p: &[f64; 4]) -> [f64; 3] {
    [p[0], p[1], p[2]]
}

impl ConvexCell {
    /// Resets to the box `lo ≤ x ≤ hi` (relative to the site; lo < 0 < hi on every axis).
    pub fn reset_box(&mut self, lo: [f64; 3], hi: [f64; 3]) {
        self.planes.clear();
        self.owner.clear();
        self.tris.clear();
        self.verts.clear();
        self.checked.clear();
        for a in 0..3 {
            let mut n = [0.0; 3];
            n[a] = 1.0;
            self.planes.push([n[0], n[1], n[2], hi[a]]);
            n[a] = -1.0;
            self.planes.push([n[0], n[1], n[2], -lo[a]]);
        }
        self.owner.resize(6, DOMAIN);
        // Corner (sx, sy, sz) is where planes x(sx), y(sy), z(sz) meet; order them so the
        // determinant of the normals is positive, the orientation clipping preserves.
        for corner in 0..8u16 {
            let s = [corner & 1, (corner >> 1) & 1, (corner >> 2) & 1];
            let (x, y, z) = (s[0], 2 + s[1], 4 + s[2]);
            let negatives = s[0] + s[1] + s[2];
            let tri = if negatives % 2 == 0 { [x, y, z] } else { [x, z, y] };
            self.tris.push(tri);
            let p = |a: usize| if s[a] == 0 { hi[a] } else { lo[a] };
            self.verts.push([p(0), p(1), p(2)]);
            self.checked.push(false);
        }
        self.r2 = self.verts.iter().map(|v| dot(*v, *v)).fold(0.0, f64::max);
    }

    /// Squared radius of the cell around its site: no plane farther than this can cut it.
    pub fn radius2(&self) -> f64 {
        self.r2
    }

    /// Clips by `n·x ≤ d`; returns whether the plane cut anything off.
    pub fn clip(&mut self, plane: [f64; 4], owner: u32) -> Result<bool, ClipError> {
        let n = normal(&plane);
        // A vertex within rounding distance of the plane stays: re-clipping by a plane the
        // cell already has, or by one through an existing vertex, must not add a sliver.
        let tol = plane[3] + TOLERANCE * dot(n, n).sqrt() * self.r2.sqrt();
        self.outside.clear();
        self.outside.extend(self.verts.iter().map(|v| dot(n, *v) > tol));
        let count = self.outside.iter().filter(|&&o| o).count();
        let (any, all) = (count > 0, count == self.outside.len());
        if !any {
            return Ok(false);
        }
        if all {
            return Err(ClipError::Vanished);
        }
        let h = u16::try_from(self.planes.len()).map_err(|_| ClipError::TooManyPlanes)?;
        self.planes.push(plane);
        self.owner.push(owner);

        // Boundary of the removed region: edges of removed triangles whose twin is kept.
        let key = |a: u16, b: u16| (a as u32) << 16 | b as u32;
        self.edges.clear();
        for (t, _) in self.tris.iter().zip(&self.outside).filter(|(_, o)| **o) {
            self.edges.extend([key(t[0], t[1]), key(t[1], t[2]), key(t[2], t[0])]);
        }
        self.fan.clear();
        for &e in &self.edges {
            let (a, b) = ((e >> 16) as u16, e as u16);
            // A branch-free scan (it vectorises); the lists are short.
            let twin = key(b, a);
            let removed = self.edges.iter().fold(false, |f, &x| f | (x == twin));
            if !removed {
                // Same orientation as the removed triangle (a, b, ·) it replaces.
                self.fan.push([a, b, h]);
            }
        }

        let mut w = 0;
        for i in 0..self.tris.len() {
            if !self.outside[i] {
                self.tris[w] = self.tris[i];
                self.verts[w] = self.verts[i];
                self.checked[w] = self.checked[i];
                w += 1;
            }
        }
        self.tris.truncate(w);
        self.verts.truncate(w);
        self.checked.truncate(w);
        for k in 0..self.fan.len() {
            let t = self.fan[k];
            let v = self.vertex(t)?;
            self.tris.push(t);
            self.verts.push(v);
            self.checked.push(false);
        }
        self.r2 = self.verts.iter().map(|v| dot(*v, *v)).fold(0.0, f64::max);
        Ok(true)
    }

    /// The point where the three planes of a triangle meet (Cramer's rule).
    fn vertex(&self, t: [u16; 3]) -> Result<[f64; 3], ClipError> {
        let [p, q, r] = t.map(|i| self.planes[i as usize]);
        let (a, b, c) = (normal(&p), normal(&q), normal(&r));
        let bc = cross(b, c);
        let ca = cross(c, a);
        let ab = cross(a, b);
        let det = dot(a, bc);
        let v = [0, 1, 2].map(|k| (p[3] * bc[k] + q[3] * ca[k] + r[3] * ab[k]) / det);
        if v.iter().all(|x| x.is_finite()) { Ok(v) } else { Err(ClipError::NonFinite) }
    }

    /// Whether some face of the cell lies on the clip domain's boundary.
    pub fn touches_domain(&self) -> bool {
        self.tris.iter().flatten().any(|&p| self.owner[p as usize] == DOMAIN)
    }

    /// Owners of the faces with area above `min_area(owner)`, in no particular order.
    ///
    /// A face's polygon is the cycle of triangles around its plane: in triangle (a, b, c)
    /// the next vertex around face a is the triangle that holds the directed edge (a, c).
    pub fn faces(&self, out: &mut Vec<(u32, f64)>, scratch: &mut Vec<u64>) {
        // Keys (face, next-edge key, this vertex's key, triangle index), 16 bits each, so
        // sorting groups them by face.
        let pack = |a: u16, b: u16, c: u16, t: u16| (a as u64) << 48 | (b as u64) << 32 | (c as u64) << 16 | t as u64;
        scratch.clear();
        for (ti, t) in self.tris.iter().enumerate() {
            for r in 0..3 {
                let (a, b, c) = (t[r], t[(r + 1) % 3], t[(r + 2) % 3]);
                scratch.push(pack(a, b, c, ti as u16));
            }
        }
        scratch.sort_unstable();
        out.clear();
        let mut start = 0;
        while start < scratch.len() {
            let face = scratch[start] >> 48;
            let mut end = start;
            while end < scratch.len() && scratch[end] >> 48 == face {
                end += 1;
            }
            let group = &scratch[start..end];
            // Area vector ½ Σ v_i × v_next(i); groups are tiny, so lookups are linear scans.
            let mut area = [0.0f64; 3];
            for &e in group {
                let (c, ti) = ((e >> 16) & 0xFFFF, e & 0xFFFF);
                if let Some(&en) = group.iter().find(|&&x| (x >> 32) & 0xFFFF == c) {
                    let tn = en & 0xFFFF;
                    let x = cross(self.verts[ti as usize], self.verts[tn as usize]);
                    for k in 0..3 {
                        area[k] += 0.5 * x[k];
                    }
                }
            }
            let owner = self.owner[face as usize];
            if owner != DOMAIN {
                out.push((owner, dot(area, area).sqrt()));
            }
            start = end;
        }
    }

    pub fn vertices(&self) -> &[[f64; 3]] {
        &self.verts
    }

    /// Index of a vertex not yet marked checked. Clipping keeps marks of the vertices it
    /// keeps; the vertices it creates start unchecked.
    pub fn unchecked(&self) -> Option<usize> {
        self.checked.iter().position(|c| !c)
    }

    pub fn mark_checked(&mut self, v: usize) {
        self.checked[v] = true;
    }
}

/// The bisector half-space of site `p` against site `q`, relative to `p`: `(q−p)·x ≤ |q−p|²/2`.
pub fn bisector(p: [f32; 3], q: [f32; 3]) -> [f64; 4] {
    let n = [0, 1, 2].map(|k| q[k] as f64 - p[k] as f64);
    [n[0], n[1], n[2], 0.5 * dot(n, n)]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn total_area(c: &ConvexCell) -> f64 {
        let mut out = Vec::new();
        c.faces(&mut out, &mut Vec::new());
        out.iter().map(|f| f.1).sum()
    }

    #[test]
    fn box_then_halving_plane() {
        let mut c = ConvexCell::default();
        c.reset_box([-1.0; 3], [1.0; 3]);
        assert_eq!(c.vertices().len(), 8);
        assert!((c.radius2() - 3.0).abs() < 1e-12);
        // Cut at x = 0: the cell becomes a 1×2×2 box with 8 vertices and one 2×2 face.
        assert!(c.clip([1.0, 0.0, 0.0, 0.0], 7).unwrap());
        assert_eq!(c.vertices().len(), 8);
        let mut out = Vec::new();
        c.faces(&mut out, &mut Vec::new());
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].0, 7);
        assert!((out[0].1 - 4.0).abs() < 1e-12, "{out:?}");
        // A plane outside the cell does nothing.
        assert!(!c.clip([1.0, 0.0, 0.0, 0.5], 8).unwrap());
    }

    #[test]
    fn corner_cut_makes_a_triangle_face() {
        let mut c = ConvexCell::default();
        c.reset_box([-1.0; 3], [1.0; 3]);
        // x + y + z ≤ 2 cuts off the (1,1,1) corner: a triangle with side √2.
        assert!(c.clip([1.0, 1.0, 1.0, 2.0], 3).unwrap());
        assert_eq!(c.vertices().len(), 10);
        assert!((total_area(&c) - 3f64.sqrt() / 2.0).abs() < 1e-12);
        assert!(c.touches_domain());
    }

    #[test]
    fn site_enclosed_by_tetrahedron_of_neighbours_is_bounded() {
        let mut c = ConvexCell::default();
        c.reset_box([-100.0; 3], [100.0; 3]);
        let p = [0.0f32; 3];
        for q in [[1.0, 1.0, 1.0], [1.0, -1.0, -1.0], [-1.0, 1.0, -1.0], [-1.0, -1.0, 1.0f32]] {
            c.clip(bisector(p, q), 1).unwrap();
        }
        assert!(!c.touches_domain());
        // Regular tetrahedron with vertices at distance 1.5·√3 from the site.
        assert_eq!(c.vertices().len(), 4);
        assert!((c.radius2() - 6.75).abs() < 1e-9, "{}", c.radius2());
    }
}
