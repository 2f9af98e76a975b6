//! Balanced k-d tree sharding, halo and adjacency packing, SRAM footprint.
