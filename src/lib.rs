//! foam-ipu: render trained Radiant Foam scenes on the Graphcore IPU, or on the
//! project's host runtime of the Poplar API where no IPU is present.

pub mod camera;
pub mod cmd;
pub mod device;
pub mod imageio;
pub mod metrics;
pub mod outfiles;
pub mod reference;
pub mod scene;
pub mod synth;
