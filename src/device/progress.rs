//! What planning and rendering report while they run, and how long their steps took.

use serde::Serialize;

/// Hears the long steps of planning and rendering as they go: the CLI draws them on
/// stderr; tests and timed runs pass `&()`.
pub trait Progress: Sync {
    /// A step begins: what it does, and how many items it takes if that is known.
    fn step(&self, _what: &str, _items: Option<u64>) {}
    /// One more item of the current step is done.
    fn item(&self) {}
}

impl Progress for () {}

/// Seconds each step of making a plan took (see [`super::DevicePlan::for_camera`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct PlanTimes {
    /// Cutting the scene into shards (the k-d cut and, where it does not fit, the
    /// byte-balancing rounds).
    pub partition_s: f64,
    /// Building and packing every shard's blob.
    pub pack_s: f64,
    /// Everything else: sampling the camera's rays, choosing copies, links and result
    /// stores, and laying out the tiles.
    pub plan_s: f64,
}
