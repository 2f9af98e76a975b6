//! Rust side of the cxx bridge to the Poplar graph builder and host runtime.
