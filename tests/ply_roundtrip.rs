//! scene.ply write → read round trips for every SH degree and encoding, and
//! `foam-ipu info` on the result.

mod common;

use foam_ipu::scene::ply_read::parse_scene;
use foam_ipu::scene::ply_write::{write_ply_as, write_ply_file_as};
use foam_ipu::scene::random::random_scene;
use foam_ipu::scene::{PlyFormat, read_scene_bytes, read_scene_from};

const FORMATS: [PlyFormat; 3] = [PlyFormat::BinaryLittleEndian, PlyFormat::BinaryBigEndian, PlyFormat::Ascii];

#[test]
fn every_degree_and_encoding_round_trips_exactly() {
    for degree in 0..=3u8 {
        let scene = random_scene(700, degree, 11 + degree as u64);
        for format in FORMATS {
            let mut bytes = Vec::new();
            write_ply_as(&scene, &mut bytes, format).unwrap();
            let what = format!("degree {degree}, {format}");
            let back = read_scene_bytes("mem.ply", &bytes).unwrap_or_else(|e| panic!("{what}: {e}"));
            assert!(back == scene, "{what}: read-back differs");
            let sh_bits = |s: &[f32]| s.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
            assert_eq!(sh_bits(&back.sh_rest), sh_bits(&scene.sh_rest), "{what}");
            // The streaming path (no length known up front) decodes the same scene.
            let streamed = read_scene_from("stream.ply", bytes.as_slice(), None).unwrap();
            assert!(streamed.scene == scene, "{what}: streamed read differs");
            assert_eq!(streamed.format, format);
        }
    }
}

#[test]
fn large_chunks_round_trip() {
    // More than one 8 MiB decode chunk for both elements.
    let scene = random_scene(60_000, 3, 5);
    let mut bytes = Vec::new();
    write_ply_as(&scene, &mut bytes, PlyFormat::BinaryLittleEndian).unwrap();
    assert!(bytes.len() > 12 << 20);
    assert!(read_scene_bytes("big.ply", &bytes).unwrap() == scene);
}

#[test]
fn streamed_truncation_names_the_record() {
    let scene = random_scene(50, 1, 3);
    let mut bytes = Vec::new();
    write_ply_as(&scene, &mut bytes, PlyFormat::BinaryLittleEndian).unwrap();
    let header = bytes.windows(11).position(|w| w == b"end_header\n").unwrap() + 11;
    let cut = &bytes[..header + 7 * 59 + 30];
    let err = parse_scene(cut, None).unwrap_err().to_string();
    assert!(err.contains("element vertex 7: file ends inside this record"), "{err}");
}

#[test]
fn info_reports_counts_bbox_and_neighbour_stats() {
    let dir = tempfile::tempdir().unwrap();
    for (degree, format) in
        [(0u8, PlyFormat::BinaryLittleEndian), (3, PlyFormat::Ascii), (2, PlyFormat::BinaryBigEndian)]
    {
        let scene = random_scene(400, degree, 9);
        let path = dir.path().join(format!("s{degree}.ply"));
        write_ply_file_as(&scene, &path, format).unwrap();
        let out = common::run(&["info", path.to_str().unwrap(), "--json"]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(j["vertices"], 400);
        assert_eq!(j["adjacency"], scene.adjacency.len());
        assert_eq!(j["sh_degree"], degree);
        assert_eq!(j["format"], format.to_string());
        assert_eq!(j["valid"], true);
        assert_eq!(j["file_bytes"], std::fs::metadata(&path).unwrap().len());
        for a in 0..3 {
            let lo = scene.positions.iter().map(|p| p[a]).fold(f32::INFINITY, f32::min);
            let hi = scene.positions.iter().map(|p| p[a]).fold(f32::NEG_INFINITY, f32::max);
            assert_eq!(j["bbox_min"][a].as_f64().unwrap() as f32, lo);
            assert_eq!(j["bbox_max"][a].as_f64().unwrap() as f32, hi);
        }
        let counts: Vec<usize> = (0..400).map(|i| scene.neighbours(i).len()).collect();
        assert_eq!(j["max_neighbours"], *counts.iter().max().unwrap());
        assert_eq!(j["min_neighbours"], *counts.iter().min().unwrap());
        let mean = j["mean_neighbours"].as_f64().unwrap();
        assert!((mean - scene.adjacency.len() as f64 / 400.0).abs() < 1e-12);
        let zero = scene.density.iter().filter(|&&d| d <= 1e-3).count() as f64 / 400.0;
        assert!((j["density_near_zero_fraction"].as_f64().unwrap() - zero).abs() < 1e-12);
    }
    let path = dir.path().join("s0.ply");
    let out = common::run(&["info", path.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(text.contains("vertices    400") && text.contains("validation  ok"), "{text}");
}
