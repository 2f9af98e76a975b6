//! scene.ply from any bytes (binary and ASCII: the header decides): a scene that
//! passes validation or a one-line error naming the file, never a panic, and the
//! streamed and sized readers agree.
#![no_main]

use foam_ipu::scene::ply_read::parse_scene;
use foam_ipu::scene::read_scene_bytes;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    match read_scene_bytes("fuzz.ply", data) {
        Ok(scene) => assert!(!scene.is_empty()),
        Err(e) => {
            let msg = e.to_string();
            assert!(msg.starts_with("fuzz.ply: ") && !msg.contains('\n'), "{msg:?}");
        }
    }
    let sized = parse_scene(data, Some(data.len() as u64)).is_ok();
    let streamed = parse_scene(data, None).is_ok();
    assert_eq!(sized, streamed, "streamed and sized parses disagree");
});
