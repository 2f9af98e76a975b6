//! Writes `scene.ply` byte-for-byte as the original trainer does through Python `plyfile`:
//! `binary_little_endian`, packed records, elements `vertex` then `adjacency`.
//! The same layout can also be written as `binary_big_endian` or `ascii` (what plyfile
//! writes with `byte_order='>'` or `text=True`), which the reader accepts too.

use std::fmt::Write as _;
use std::io::{self, Write};

use rayon::prelude::*;

use super::Scene;
use super::ply_schema::PlyFormat;

/// The header plyfile emits for the trainer's dtype (no comments, no obj_info).
pub fn header(scene: &Scene) -> String {
    header_as(scene, PlyFormat::BinaryLittleEndian)
}

pub fn header_as(scene: &Scene, format: PlyFormat) -> String {
    let mut h = String::with_capacity(512);
    // Writing into a String cannot fail.
    let _ = write!(h, "ply\nformat {format} 1.0\nelement vertex {}\n", scene.len());
    for p in ["x", "y", "z"] {
        let _ = writeln!(h, "property float {p}");
    }
    for p in ["red", "green", "blue"] {
        let _ = writeln!(h, "property uchar {p}");
    }
    h.push_str("property float density\n");
    h.push_str("property uint adjacency_offset\n");
    for k in 0..scene.sh_rest_len() {
        let _ = writeln!(h, "property float color_sh_{k}");
    }
    let _ = writeln!(h, "element adjacency {}", scene.adjacency.len());
    h.push_str("property uint adjacency\n");
    h.push_str("end_header\n");
    h
}

/// Bytes of one packed vertex record.
pub fn vertex_record_len(sh_rest_len: usize) -> usize {
    12 + 3 + 4 + 4 + 4 * sh_rest_len
}

pub fn write_ply<W: Write>(scene: &Scene, out: W) -> io::Result<()> {
    write_ply_as(scene, out, PlyFormat::BinaryLittleEndian)
}

pub fn write_ply_as<W: Write>(scene: &Scene, out: W, format: PlyFormat) -> io::Result<()> {
    let mut out = io::BufWriter::with_capacity(1 << 20, out);
    out.write_all(header_as(scene, format).as_bytes())?;
    match format {
        PlyFormat::BinaryLittleEndian => write_binary::<true>(scene, &mut out)?,
        PlyFormat::BinaryBigEndian => write_binary::<false>(scene, &mut out)?,
        PlyFormat::Ascii => write_ascii(scene, &mut out)?,
    }
    out.flush()
}

#[inline(always)]
fn put_u32<const LE: bool>(out: &mut [u8], at: usize, v: u32) {
    out[at..at + 4].copy_from_slice(&if LE { v.to_le_bytes() } else { v.to_be_bytes() });
}

#[inline(always)]
fn put_f32<const LE: bool>(out: &mut [u8], at: usize, v: f32) {
    put_u32::<LE>(out, at, v.to_bits());
}

/// Bytes assembled per write call, and records encoded per rayon task.
const CHUNK_BYTES: usize = 8 << 20;
const TASK_RECORDS: usize = 8192;

fn write_binary<const LE: bool>(scene: &Scene, out: &mut impl Write) -> io::Result<()> {
    let k = scene.sh_rest_len();
    let rec = vertex_record_len(k);
    let chunk_sites = (CHUNK_BYTES / rec).max(1);
    let mut buf = Vec::with_capacity(chunk_sites * rec);
    for start in (0..scene.len()).step_by(chunk_sites) {
        let count = chunk_sites.min(scene.len() - start);
        buf.resize(count * rec, 0);
        buf.par_chunks_mut(rec * TASK_RECORDS).enumerate().for_each(|(task, bytes)| {
            let first = start + task * TASK_RECORDS;
            for (b, i) in bytes.chunks_exact_mut(rec).zip(first..) {
                let [x, y, z] = scene.positions[i];
                put_f32::<LE>(b, 0, x);
                put_f32::<LE>(b, 4, y);
                put_f32::<LE>(b, 8, z);
                b[12..15].copy_from_slice(&scene.color[i]);
                put_f32::<LE>(b, 15, scene.density[i]);
                put_u32::<LE>(b, 19, scene.adjacency_end[i]);
                for (s, w) in scene.sh_coeffs(i).iter().zip(b[23..].chunks_exact_mut(4)) {
                    put_f32::<LE>(w, 0, *s);
                }
            }
        });
        out.write_all(&buf)?;
    }
    for chunk in scene.adjacency.chunks(CHUNK_BYTES / 4) {
        buf.resize(chunk.len() * 4, 0);
        buf.par_chunks_mut(4 * TASK_RECORDS).zip(chunk.par_chunks(TASK_RECORDS)).for_each(|(bytes, adj)| {
            for (w, &a) in bytes.chunks_exact_mut(4).zip(adj) {
                put_u32::<LE>(w, 0, a);
            }
        });
        out.write_all(&buf)?;
    }
    Ok(())
}

/// One record per line; floats in Rust's shortest round-trip form, so reading back is exact.
fn write_ascii(scene: &Scene, out: &mut impl Write) -> io::Result<()> {
    let mut line = String::with_capacity(1024);
    for i in 0..scene.len() {
        line.clear();
        let [x, y, z] = scene.positions[i];
        let [r, g, b] = scene.color[i];
        let _ = write!(line, "{x:?} {y:?} {z:?} {r} {g} {b} {:?} {}", scene.density[i], scene.adjacency_end[i]);
        for s in scene.sh_coeffs(i) {
            let _ = write!(line, " {s:?}");
        }
        line.push('\n');
        out.write_all(line.as_bytes())?;
    }
    for a in &scene.adjacency {
        writeln!(out, "{a}")?;
    }
    Ok(())
}

/// Writes `path` all or nothing (see [`crate::outfiles`]).
pub fn write_ply_file(scene: &Scene, path: &std::path::Path) -> anyhow::Result<()> {
    write_ply_file_as(scene, path, PlyFormat::BinaryLittleEndian)
}

pub fn write_ply_file_as(scene: &Scene, path: &std::path::Path, format: PlyFormat) -> anyhow::Result<()> {
    crate::outfiles::write_file(path, |f| write_ply_as(scene, f, format))
}
