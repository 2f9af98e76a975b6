//! Procedural Radiant Foam scenes: sites, densities and colours from a preset, and the
//! true Voronoi adjacency of the sites.

pub mod cell;
pub mod rng;
pub mod voronoi;
pub mod presets;
pub mod scene_gen;
pub mod shapes;
