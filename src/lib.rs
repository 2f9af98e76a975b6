//! foam-ipu: render trained Radiant Foam scenes on the Graphcore IPU, or on the
//! project's host runtime of the Poplar API where no IPU is present.

pub mod cmd;
pub mod scene;
pub mod camera;
pub mod device;
pub mod imageio;
pub mod metrics;
pub mod outfiles;
pub mod reference;
pub mod synth;
