//! A nerfstudio camera path from any text: cameras whose rays are finite in f32, or an error.
#![no_main]

use foam_ipu::camera::path::parse_camera_path;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(cams) = parse_camera_path(text) {
        assert!(!cams.is_empty());
        for cam in cams {
            for (x, y) in [(0, 0), (cam.width - 1, cam.height - 1)] {
                let (o, d) = cam.pixel_ray(x, y);
                assert!(o.is_finite() && d.is_finite(), "{cam:?}");
            }
        }
    }
});
