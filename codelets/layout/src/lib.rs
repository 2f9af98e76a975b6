//! Every byte layout of the device program (`codelets/include/foam/layout.h`) for
//! Rust: `bindings.rs` is bindgen's output, committed, and `tests/bindings.rs` fails
//! when it is not what bindgen makes of the header today. The partitioner packs
//! shards with these records and the device plan writes parameters and cameras
//! with them, so host and codelets cannot drift apart.
#![allow(non_camel_case_types, non_upper_case_globals, non_snake_case, dead_code, clippy::all)]

include!("bindings.rs");

// SAFETY: layout.h records are `repr(C)` structs of fixed-width integer and float
// fields (and arrays of them) whose sizes its static_asserts fix without padding
// (tests/sizes.rs checks the same of these bindings), so every bit pattern is a
// valid value and their bytes are all initialised.
macro_rules! plain_old_data {
    ($($t:ty),* $(,)?) => {$(
        unsafe impl bytemuck::Zeroable for $t {}
        unsafe impl bytemuck::Pod for $t {}
    )*};
}
plain_old_data!(foam_cell, foam_halo, foam_cell_info, foam_shard_header, foam_params);
