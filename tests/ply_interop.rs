//! scene.ply interop with Python plyfile (the trainer's writer), both directions, for
//! SH degrees 0..3 and all three encodings, plus byte equality of the binary files.

mod common;

use std::path::Path;

use foam_ipu::scene::ply_write::{write_ply_file, write_ply_file_as};
use foam_ipu::scene::{PlyFormat, Scene, read_scene};
use serde::Deserialize;

const ORACLE: &str = "tests/python/ply_interop.py";

#[derive(Deserialize)]
struct Arrays {
    sh_degree: u8,
    positions: Vec<f32>,
    colors: Vec<u8>,
    density: Vec<f32>,
    sh_rest: Vec<f32>,
    adjacency_end: Vec<u32>,
    adjacency: Vec<u32>,
}

impl Arrays {
    fn load(path: &Path) -> Scene {
        let a: Arrays = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        Scene {
            positions: a.positions.chunks(3).map(|c| [c[0], c[1], c[2]]).collect(),
            density: a.density,
            color: a.colors.chunks(3).map(|c| [c[0], c[1], c[2]]).collect(),
            sh_degree: a.sh_degree,
            sh_rest: a.sh_rest,
            adjacency_end: a.adjacency_end,
            adjacency: a.adjacency,
        }
    }
}

fn python_ok(args: &[&str]) {
    let out = common::python().arg(common::repo_path(ORACLE)).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "python {args:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Float equality by bit pattern (-0.0 and 0.0 differ; `Scene`'s `==` would not see it).
fn assert_same_bits(got: &Scene, want: &Scene, what: &str) {
    assert_eq!(got, want, "{what}: values differ");
    let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
    let flat = |s: &Scene| s.positions.iter().flatten().copied().collect::<Vec<f32>>();
    assert_eq!(bits(&flat(got)), bits(&flat(want)), "{what}: position bits differ");
    assert_eq!(bits(&got.density), bits(&want.density), "{what}: density bits differ");
    assert_eq!(bits(&got.sh_rest), bits(&want.sh_rest), "{what}: SH bits differ");
}

#[test]
fn plyfile_and_foam_ipu_agree_in_both_directions() {
    for degree in 0..=3u8 {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let ds = d.to_str().unwrap();
        let deg = degree.to_string();
        python_ok(&["gen", ds, "--sh-degree", &deg, "--cells", "300", "--seed", &deg]);
        let arrays = d.join("arrays.json");
        let want = Arrays::load(&arrays);
        assert_eq!(want.sh_rest_len(), [0, 9, 24, 45][degree as usize]);

        // plyfile writes, foam-ipu reads.
        for name in ["plyfile_le.ply", "plyfile_be.ply", "plyfile_ascii.ply"] {
            let got = read_scene(&d.join(name)).unwrap_or_else(|e| panic!("{e}"));
            assert_same_bits(&got, &want, &format!("degree {degree} {name}"));
        }

        // foam-ipu writes the trainer's bytes exactly.
        let ours = d.join("foam_le.ply");
        write_ply_file(&want, &ours).unwrap();
        let theirs = std::fs::read(d.join("plyfile_le.ply")).unwrap();
        assert!(std::fs::read(&ours).unwrap() == theirs, "degree {degree}: bytes differ from plyfile's");

        // foam-ipu writes, plyfile reads, in every encoding.
        python_ok(&["check", ours.to_str().unwrap(), arrays.to_str().unwrap()]);
        for (format, name) in [(PlyFormat::BinaryBigEndian, "foam_be.ply"), (PlyFormat::Ascii, "foam_ascii.ply")] {
            let path = d.join(name);
            write_ply_file_as(&want, &path, format).unwrap();
            python_ok(&["check", path.to_str().unwrap(), arrays.to_str().unwrap()]);
        }
    }
}

#[test]
fn big_endian_file_matches_plyfile_bytes_too() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    python_ok(&["gen", d.to_str().unwrap(), "--sh-degree", "2", "--cells", "120", "--seed", "7"]);
    let want = Arrays::load(&d.join("arrays.json"));
    let ours = d.join("foam_be.ply");
    write_ply_file_as(&want, &ours, PlyFormat::BinaryBigEndian).unwrap();
    assert!(std::fs::read(ours).unwrap() == std::fs::read(d.join("plyfile_be.ply")).unwrap());
}
