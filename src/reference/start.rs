//! The start cell of a ray: the Voronoi cell containing its origin, i.e. the site nearest
//! to it (exact nearest neighbour, as the original).

use kiddo::{ImmutableKdTree, SquaredEuclidean};

use crate::scene::Scene;

/// A k-d tree over the scene's sites, built once and queried per camera.
pub struct SiteIndex {
    tree: ImmutableKdTree<f32, 3>,
}

impl SiteIndex {
    /// Builds the index; `None` for an empty scene (it has no cells to start in).
    pub fn new(scene: &Scene) -> Option<SiteIndex> {
        if scene.is_empty() {
            return None;
        }
        // Construction only fails when item indices overflow u32, which a scene.ply
        // (u32 adjacency) cannot express.
        let tree = ImmutableKdTree::new_from_slice(&scene.positions).ok()?;
        Some(SiteIndex { tree })
    }

    /// Index of the site nearest to `p`.
    pub fn nearest(&self, p: [f32; 3]) -> u32 {
        self.tree.query(&p).nearest_one::<SquaredEuclidean<f32>>().execute().item
    }
}

/// The start cell for a point: the nearest site. Builds a throw-away index; use
/// [`SiteIndex`] when several points are looked up in the same scene.
pub fn start_cell(scene: &Scene, p: [f32; 3]) -> Option<u32> {
    SiteIndex::new(scene).map(|ix| ix.nearest(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_brute_force() {
        // A deterministic pseudo-random cloud; compare against a linear scan.
        let mut s = 0x2545F491u32;
        let mut rnd = || {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            s as f32 / u32::MAX as f32
        };
        let positions: Vec<[f32; 3]> = (0..5000).map(|_| [rnd(), rnd(), rnd()]).collect();
        let scene = Scene { positions, ..Default::default() };
        let ix = SiteIndex::new(&scene).unwrap();
        for _ in 0..200 {
            let q = [rnd() * 1.2 - 0.1, rnd() * 1.2 - 0.1, rnd() * 1.2 - 0.1];
            let d2 = |p: &[f32; 3]| (0..3).map(|a| (p[a] - q[a]) * (p[a] - q[a])).sum::<f32>();
            let best = scene.positions.iter().map(d2).fold(f32::INFINITY, f32::min);
            let got = ix.nearest(q) as usize;
            assert_eq!(d2(&scene.positions[got]), best);
        }
        assert!(SiteIndex::new(&Scene::default()).is_none());
    }
}
