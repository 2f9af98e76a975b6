//! Every `FOAM_STATIC_ASSERT(sizeof(T) == N, ...)` in layout.h holds for the Rust
//! bindings too, and no struct has padding (so packing byte images is well-defined).
//! Field offsets are checked against clang's layout by bindgen's asserts in layout.rs.

use foam_layout::*;
use std::mem::size_of;

fn rust_size(name: &str) -> Option<usize> {
    Some(match name {
        "foam_cell" => size_of::<foam_cell>(),
        "foam_halo" => size_of::<foam_halo>(),
        "foam_cell_info" => size_of::<foam_cell_info>(),
        "foam_shard_header" => size_of::<foam_shard_header>(),
        "foam_camera" => size_of::<foam_camera>(),
        "foam_pixel" => size_of::<foam_pixel>(),
        "foam_result" => size_of::<foam_result>(),
        "foam_ray_dest" => size_of::<foam_ray_dest>(),
        "foam_ray_fp32" => size_of::<foam_ray_fp32>(),
        "foam_ray_mixed" => size_of::<foam_ray_mixed>(),
        "foam_ray_half" => size_of::<foam_ray_half>(),
        "foam_ray_hops" => size_of::<foam_ray_hops>(),
        "foam_link_header" => size_of::<foam_link_header>(),
        "foam_inject_up" => size_of::<foam_inject_up>(),
        "foam_inject_down" => size_of::<foam_inject_down>(),
        "foam_params" => size_of::<foam_params>(),
        "foam_tile_stats" => size_of::<foam_tile_stats>(),
        "foam_frame_status" => size_of::<foam_frame_status>(),
        "foam_region_header" => size_of::<foam_region_header>(),
        "foam_router_ctl" => size_of::<foam_router_ctl>(),
        "foam_tracer_ctl" => size_of::<foam_tracer_ctl>(),
        "foam_spill_ctl" => size_of::<foam_spill_ctl>(),
        "foam_injector_ctl" => size_of::<foam_injector_ctl>(),
        "foam_block" => size_of::<foam_block>(),
        "foam_paused_ray" => size_of::<foam_paused_ray>(),
        _ => return None,
    })
}

#[test]
fn static_asserted_sizes_match() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../include/foam/layout.h");
    let header = std::fs::read_to_string(path).unwrap();
    let mut checked = Vec::new();
    for line in header.lines().filter(|l| l.starts_with("FOAM_STATIC_ASSERT(sizeof(")) {
        let rest = &line["FOAM_STATIC_ASSERT(sizeof(".len()..];
        let (name, rest) = rest.split_once(')').unwrap();
        let n: usize = rest.trim_start().strip_prefix("==").unwrap().trim().split(',').next().unwrap().parse().unwrap();
        let got = rust_size(name).unwrap_or_else(|| panic!("layout.h asserts the size of {name}; add it to this test"));
        assert_eq!(got, n, "{name}: Rust {got} B, layout.h {n} B");
        checked.push(name.to_string());
    }
    assert_eq!(checked.len(), 25, "every struct of layout.h is asserted: {checked:?}");
}

#[test]
fn structs_have_no_padding() {
    // Sum of field sizes, read off the bindings.
    assert_eq!(size_of::<foam_cell>(), 4 * 4);
    assert_eq!(size_of::<foam_cell_info>(), 4 + 4);
    assert_eq!(size_of::<foam_halo>(), 3 * 4 + 2 * 2);
    assert_eq!(size_of::<foam_shard_header>(), 4 + 2 * 2 + 8 * 4);
    assert_eq!(size_of::<foam_pixel>(), 5 * 4 + 2 * 2 + 4);
    assert_eq!(size_of::<foam_result>(), 6 * 4 + 2 * 2);
    assert_eq!(size_of::<foam_camera>(), 16 * 4 + 3 * 4 + 2 * 2 + 4 * 4);
    let sides = FOAM_MAX_SIDES as usize;
    assert_eq!(size_of::<foam_params>(), 24 * 4 + sides * 2);
    let (f, cats) = (FOAM_MAX_LANES as usize, FOAM_CATS as usize);
    assert_eq!(cats, 2 * f + 1);
    let (workers, sums) = (FOAM_WORKERS as usize, FOAM_LS_COUNT as usize);
    assert_eq!(
        size_of::<foam_router_ctl>(),
        (5 + (f + 1) + 1 + 2 * workers * cats + 3 * cats + 2 * f + 1 + workers * sums + 6 + workers) * 4
    );
    assert_eq!(size_of::<foam_spill_ctl>(), 4 * 4);
    assert_eq!(size_of::<foam_paused_ray>(), 2 * 2 + 6 * 4);
    let paused = workers * size_of::<foam_paused_ray>();
    assert_eq!(size_of::<foam_injector_ctl>(), (8 + FOAM_IW_COUNTERS as usize * 6 + 6) * 4 + paused);
    assert_eq!(size_of::<foam_block>(), 2 * 2);
    let shards = FOAM_REGION_MAX_SHARDS as usize;
    assert_eq!(size_of::<foam_region_header>(), 2 * 4 + shards * (2 + 4));
    assert_eq!(size_of::<foam_tracer_ctl>(), (4 + 6 * FOAM_TW_COUNTERS as usize + sides + workers) * 4 + paused);
}

#[test]
fn constants_match_the_ray_and_pixel_markers() {
    assert_eq!(FOAM_MAX_SHARD_ENTRIES, 65_535);
    assert_eq!(FOAM_INVALID_SHARD, 0xFFFF);
    assert_eq!(FOAM_FINISHED_CELL, 0xFFFF);
    assert_eq!(&FOAM_SHARD_MAGIC.to_le_bytes(), b"FOAM");
    assert_eq!(FOAM_MAX_IMAGE_SIDE, 2048);
    assert_eq!(FOAM_STEPS_SHIFT, 22);
}
