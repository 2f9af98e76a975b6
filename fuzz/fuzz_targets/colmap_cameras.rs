//! COLMAP cameras.txt from any text: intrinsics or an error naming the line.
#![no_main]

use foam_ipu::camera::colmap::parse_cameras;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Err(e) = parse_cameras(text) {
        assert!(e.starts_with("line ") && !e.contains('\n'), "{e:?}");
    }
});
