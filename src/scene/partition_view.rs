//! The partitioner's borrowed view of a scene (the `partition` crate cannot depend on
//! this crate, which depends on it).

use super::Scene;

impl Scene {
    /// The scene as the partitioner sees it, its shards carrying no SH coefficients.
    pub fn partition_view(&self) -> partition::SceneRef<'_> {
        self.partition_view_sh(0, false)
    }

    /// As [`partition_view`](Self::partition_view), each shard carrying its cells' SH
    /// coefficients up to `degree` (at most the scene's), as f32 or binary16.
    pub fn partition_view_sh(&self, degree: u8, f32: bool) -> partition::SceneRef<'_> {
        let rest = super::sh_rest_len(degree.min(self.sh_degree)) / 3;
        let sh = if rest == 0 {
            partition::ShPayload::NONE
        } else {
            partition::ShPayload { coeffs: &self.sh_rest, stride: self.sh_rest_len(), rest, f32 }
        };
        partition::SceneRef {
            positions: &self.positions,
            density: &self.density,
            color: &self.color,
            adjacency_end: &self.adjacency_end,
            adjacency: &self.adjacency,
            sh,
        }
    }
}
