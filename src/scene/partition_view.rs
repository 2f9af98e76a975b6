//! The partitioner's borrowed view of a scene (the `partition` crate cannot depend on
//! this crate, which depends on it).

use super::Scene;

impl Scene {
    pub fn partition_view(&self) -> partition::SceneRef<'_> {
        partition::SceneRef {
            positions: &self.positions,
            density: &self.density,
            color: &self.color,
            adjacency_end: &self.adjacency_end,
            adjacency: &self.adjacency,
        }
    }
}
