//! Writes `scene.ply` byte-for-byte as the original trainer does through Python `plyfile`:
//! `binary_little_endian`, packed records, elements `vertex` then `adjacency`.

use std::io::{self, Write};

use super::Scene;

/// The header plyfile emits for the trainer's dtype (no comments, no obj_info).
pub fn header(scene: &Scene) -> String {
    let mut h = String::with_capacity(512);
    h.push_str("ply\nformat binary_little_endian 1.0\n");
    h.push_str(&format!("element vertex {}\n", scene.len()));
    for p in ["x", "y", "z"] {
        h.push_str(&format!("property float {p}\n"));
    }
    for p in ["red", "green", "blue"] {
        h.push_str(&format!("property uchar {p}\n"));
    }
    h.push_str("property float density\n");
    h.push_str("property uint adjacency_offset\n");
    for k in 0..scene.sh_rest_len() {
        h.push_str(&format!("property float color_sh_{k}\n"));
    }
    h.push_str(&format!("element adjacency {}\n", scene.adjacency.len()));
    h.push_str("property uint adjacency\n");
    h.push_str("end_header\n");
    h
}

/// Bytes of one packed vertex record.
pub fn vertex_record_len(sh_rest_len: usize) -> usize {
    12 + 3 + 4 + 4 + 4 * sh_rest_len
}

pub fn write_ply<W: Write>(scene: &Scene, out: W) -> io::Result<()> {
    let mut out = io::BufWriter::with_capacity(1 << 20, out);
    out.write_all(header(scene).as_bytes())?;
    let k = scene.sh_rest_len();
    let rec = vertex_record_len(k);
    // Records are assembled in chunks so the writer sees large, contiguous slices.
    let chunk_sites = ((1usize << 20) / rec).max(1);
    let mut buf = Vec::with_capacity(chunk_sites * rec);
    for start in (0..scene.len()).step_by(chunk_sites) {
        buf.clear();
        for i in start..(start + chunk_sites).min(scene.len()) {
            for c in scene.positions[i] {
                buf.extend_from_slice(&c.to_le_bytes());
            }
            buf.extend_from_slice(&scene.color[i]);
            buf.extend_from_slice(&scene.density[i].to_le_bytes());
            buf.extend_from_slice(&scene.adjacency_end[i].to_le_bytes());
            for s in scene.sh_coeffs(i) {
                buf.extend_from_slice(&s.to_le_bytes());
            }
        }
        out.write_all(&buf)?;
    }
    for chunk in scene.adjacency.chunks(1 << 18) {
        buf.clear();
        for a in chunk {
            buf.extend_from_slice(&a.to_le_bytes());
        }
        out.write_all(&buf)?;
    }
    out.flush()
}

pub fn write_ply_file(scene: &Scene, path: &std::path::Path) -> io::Result<()> {
    write_ply(scene, std::fs::File::create(path)?)
}
