//! The device renderer: the paper's IPU design (tracers, a tree of routers, a
//! spill store, injectors) built through the Poplar API and run on the host runtime
//! here or on an IPU with the SDK.

pub mod blocks;
pub mod copies;
pub mod direct;
pub mod edges;
pub mod executable;
pub mod frame;
pub mod ipus;
pub mod options;
pub mod plan;
pub mod program;
pub mod progress;
pub mod region;
pub mod replicas;
pub mod sample;
pub mod sides;
pub mod stats;
pub mod topology;
pub mod tree;

pub use frame::{DeviceFrame, DeviceRenderer};
pub use options::{Backend, Batch, DeviceOptions, Schedule};
pub use plan::{DevicePlan, ShChoice, auto_shards, resolve_sh_degree};
pub use progress::{PlanTimes, Progress};
pub use stats::FrameStats;

#[derive(Debug, thiserror::Error)]
pub enum DeviceError {
    #[error(transparent)]
    Tree(#[from] tree::TreeError),
    #[error(transparent)]
    Partition(#[from] partition::PartitionError),
    #[error("{0}")]
    Options(String),
    #[error(transparent)]
    Graph(#[from] poplar_bridge::Error),
    #[error("frame incomplete: {0}")]
    Incomplete(String),
}
