//! One module per CLI subcommand: its clap `Args` and its `run`.
pub mod info;
pub mod cameras;
pub mod compare;
pub mod reference;
pub mod synth;
