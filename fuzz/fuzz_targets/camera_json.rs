//! Camera JSON from any text: a camera whose rays are finite in f32, or an error.
#![no_main]

use foam_ipu::camera::json::parse_camera_json;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(cam) = parse_camera_json(text) {
        for (x, y) in [(0, 0), (cam.width - 1, cam.height - 1)] {
            let (o, d) = cam.pixel_ray(x, y);
            assert!(o.is_finite() && d.is_finite(), "{cam:?}");
        }
    }
});
