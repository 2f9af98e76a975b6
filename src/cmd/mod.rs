//! One module per CLI subcommand: its clap `Args` and its `run`.
pub mod info;
pub mod outputs;
pub mod cameras;
pub mod compare;
pub mod reference;
pub mod render;
pub mod partition;

/// A run that worked but whose requested check failed (e.g. `--require-fit`): main
/// prints it like any error and exits with code 2 instead of 1.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct CheckFailed(pub String);
pub mod synth;
pub mod bench;
