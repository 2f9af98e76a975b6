//! COLMAP images.txt from any text, against a fixed cameras.txt: views whose rays are
//! finite in f32, or an error naming the line.
#![no_main]

use foam_ipu::camera::colmap::{parse_cameras, parse_images};
use libfuzzer_sys::fuzz_target;

const CAMERAS: &str = "1 PINHOLE 100 80 90 91 50 40\n2 SIMPLE_PINHOLE 640 480 500 320 240\n";

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let cams = parse_cameras(CAMERAS).expect("fixed cameras parse");
    match parse_images(text, &cams) {
        Ok(views) => {
            for v in views {
                let (o, d) = v.camera.pixel_ray(0, 0);
                assert!(o.is_finite() && d.is_finite(), "{:?}", v.camera);
            }
        }
        Err(e) => assert!(e.starts_with("line ") && !e.contains('\n'), "{e:?}"),
    }
});
