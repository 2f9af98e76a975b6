//! Procedural Radiant Foam scenes: sites, densities and colours from a preset, and the
//! true Voronoi adjacency of the sites.

pub mod cell;
pub mod presets;
pub mod rng;
pub mod scene_gen;
pub mod shapes;
pub mod voronoi;
