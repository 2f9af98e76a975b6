//! Reads a scene.ply into a [`Scene`] and validates it.
//!
//! ply-rs-bw parses the header (and the ascii payload, see `ply_ascii.rs`). Binary
//! payloads are decoded here from the packed records: the layout is fixed by the header
//! check, and ply-rs-bw's typed path (`read_payload_for_element` with a `PropertyAccess`
//! record: a name-keyed setter call per value, and a `Vec` of records per element) was
//! measured at 0.03 GB/s wall and ~0.8 s of user CPU on the 264 MB, 1 M-cell SH-3 file of
//! `examples/ply_io_bench.rs`, far from the 0.5 GB/s target. A straight decode of 8 MiB
//! chunks into the structure-of-arrays, split over the cores, takes ~0.17 s of CPU.
//! Nothing per vertex is allocated: records go straight into the scene's arrays.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

use rayon::prelude::*;

use super::Scene;
use super::error::{Elem, Problem, SceneError};
use super::ply_ascii::read_ascii;
use super::ply_schema::{PlyFormat, Schema, read_schema};
use super::validate::validate;

/// A validated scene with what the file said about itself.
#[derive(Clone, Debug)]
pub struct LoadedScene {
    pub scene: Scene,
    pub format: PlyFormat,
    /// Bytes read, header included.
    pub file_bytes: u64,
}

/// Reads and validates `path`.
pub fn read_scene(path: &Path) -> Result<Scene, SceneError> {
    load_scene(path).map(|l| l.scene)
}

/// Reads and validates `path`, also reporting its format and size.
pub fn load_scene(path: &Path) -> Result<LoadedScene, SceneError> {
    let name = path.display().to_string();
    let open = || -> io::Result<(File, u64)> {
        let f = File::open(path)?;
        let len = f.metadata()?.len();
        Ok((f, len))
    };
    let (file, len) = open().map_err(|e| Problem::Io(e).in_file(&name))?;
    read_scene_from(&name, file, Some(len))
}

/// Reads and validates an in-memory file; `name` is used in error messages.
pub fn read_scene_bytes(name: &str, bytes: &[u8]) -> Result<Scene, SceneError> {
    read_scene_from(name, bytes, Some(bytes.len() as u64)).map(|l| l.scene)
}

/// Reads and validates from any reader. With `len` (the total byte count) element counts
/// are checked against the data present before anything is allocated; without it, arrays
/// grow only as records actually arrive, so a lying header still cannot exhaust memory.
pub fn read_scene_from<R: Read>(name: &str, reader: R, len: Option<u64>) -> Result<LoadedScene, SceneError> {
    let (scene, schema) = parse_scene(reader, len).map_err(|p| p.in_file(name))?;
    validate(&scene).map_err(|p| p.in_file(name))?;
    let file_bytes = len.unwrap_or(schema.header_len + payload_bytes(&schema).unwrap_or(0));
    Ok(LoadedScene { scene, format: schema.format, file_bytes })
}

/// Decodes without the semantic checks of [`validate`] (offsets, ranges, symmetry, values).
pub fn parse_scene<R: Read>(reader: R, len: Option<u64>) -> Result<(Scene, Schema), Problem> {
    let mut reader = BufReader::with_capacity(1 << 20, reader);
    let schema = read_schema(&mut reader)?;
    let remaining = len.map(|l| l.saturating_sub(schema.header_len));
    if let Some(remaining) = remaining {
        check_fits(&schema, remaining)?;
    }
    let mut scene = with_capacity(&schema, remaining.is_some());
    match schema.format {
        PlyFormat::BinaryLittleEndian => read_binary::<true, _>(&mut reader, &schema, &mut scene)?,
        PlyFormat::BinaryBigEndian => read_binary::<false, _>(&mut reader, &schema, &mut scene)?,
        PlyFormat::Ascii => read_ascii(&mut reader, &schema, &mut scene)?,
    }
    Ok((scene, schema))
}

fn payload_bytes(schema: &Schema) -> Option<u64> {
    let v = (schema.vertices as u64).checked_mul(schema.vertex_record_len() as u64)?;
    v.checked_add((schema.adjacency as u64).checked_mul(4)?)
}

/// Rejects element counts the bytes after the header cannot hold, naming the record
/// where the data would run out.
fn check_fits(schema: &Schema, remaining: u64) -> Result<(), Problem> {
    let (vrec, arec) = match schema.format {
        PlyFormat::Ascii => {
            // Every value takes at least one digit and one separator or newline.
            (2 * schema.vertex_def.properties.len() as u64, 2)
        }
        _ => (schema.vertex_record_len() as u64, 4),
    };
    let unit = if schema.format == PlyFormat::Ascii { "at least " } else { "" };
    let vbytes = (schema.vertices as u64).saturating_mul(vrec);
    if vbytes > remaining {
        let at = remaining / vrec;
        return Err(Problem::record(
            Elem::Vertex,
            at as usize,
            format!(
                "data ends in this record: the header declares {} records of {unit}{vrec} bytes, \
                 but only {remaining} bytes follow the header",
                schema.vertices
            ),
        ));
    }
    let left = remaining - vbytes;
    if (schema.adjacency as u64).saturating_mul(arec) > left {
        let at = left / arec;
        return Err(Problem::record(
            Elem::Adjacency,
            at as usize,
            format!(
                "data ends in this entry: the header declares {} entries of {unit}{arec} bytes, \
                 but only {left} bytes follow the vertex element",
                schema.adjacency
            ),
        ));
    }
    Ok(())
}

/// Arrays sized exactly when the counts were checked against the file size; otherwise
/// a modest start that grows with the data.
fn with_capacity(schema: &Schema, counts_checked: bool) -> Scene {
    let cap = |n: usize| if counts_checked { n } else { n.min(1 << 16) };
    let n = cap(schema.vertices);
    Scene {
        positions: Vec::with_capacity(n),
        density: Vec::with_capacity(n),
        color: Vec::with_capacity(n),
        sh_degree: schema.sh_degree,
        sh_rest: Vec::with_capacity(n * schema.sh_rest_len),
        adjacency_end: Vec::with_capacity(n),
        adjacency: Vec::with_capacity(cap(schema.adjacency)),
    }
}

/// Reads until `buf` is full or the input ends; returns the bytes read.
fn fill<R: Read>(r: &mut R, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

#[inline(always)]
fn u32_at<const LE: bool>(b: &[u8], at: usize) -> u32 {
    let w = [b[at], b[at + 1], b[at + 2], b[at + 3]];
    if LE { u32::from_le_bytes(w) } else { u32::from_be_bytes(w) }
}

#[inline(always)]
fn f32_at<const LE: bool>(b: &[u8], at: usize) -> f32 {
    f32::from_bits(u32_at::<LE>(b, at))
}

/// Large enough that each read is one cheap syscall and each decode splits over the cores.
const CHUNK_BYTES: usize = 8 << 20;
/// Records decoded per rayon task.
const TASK_RECORDS: usize = 8192;

fn read_binary<const LE: bool, R: BufRead>(r: &mut R, schema: &Schema, scene: &mut Scene) -> Result<(), Problem> {
    let rec = schema.vertex_record_len();
    let k = schema.sh_rest_len;
    let mut buf = vec![0u8; CHUNK_BYTES.max(rec)];
    let per_chunk = buf.len() / rec;
    let mut done = 0;
    while done < schema.vertices {
        let want = (schema.vertices - done).min(per_chunk) * rec;
        let got = fill(r, &mut buf[..want])?;
        let count = got / rec;
        let dst = VertexSlices::grow(scene, count, k);
        decode_vertices::<LE>(&buf[..count * rec], dst, rec, k);
        if got < want {
            let at = done + count;
            return Err(Problem::record(
                Elem::Vertex,
                at,
                format!("file ends inside this record ({at} of {} records complete)", schema.vertices),
            ));
        }
        done += count;
    }
    let per_chunk = buf.len() / 4;
    let mut done = 0;
    while done < schema.adjacency {
        let want = (schema.adjacency - done).min(per_chunk) * 4;
        let got = fill(r, &mut buf[..want])?;
        let count = got / 4;
        let base = scene.adjacency.len();
        scene.adjacency.resize(base + count, 0);
        buf[..count * 4]
            .par_chunks(4 * TASK_RECORDS)
            .zip(scene.adjacency[base..].par_chunks_mut(TASK_RECORDS))
            .for_each(|(src, dst)| {
                for (d, w) in dst.iter_mut().zip(src.chunks_exact(4)) {
                    *d = u32_at::<LE>(w, 0);
                }
            });
        if got < want {
            let at = done + count;
            return Err(Problem::record(
                Elem::Adjacency,
                at,
                format!("file ends inside this entry ({at} of {} entries complete)", schema.adjacency),
            ));
        }
        done += count;
    }
    let trailing = io::copy(r, &mut io::sink())?;
    if trailing > 0 { Err(Problem::TrailingData(trailing)) } else { Ok(()) }
}

/// The not-yet-decoded tails of the vertex arrays.
struct VertexSlices<'a> {
    pos: &'a mut [[f32; 3]],
    color: &'a mut [[u8; 3]],
    density: &'a mut [f32],
    end: &'a mut [u32],
    sh: &'a mut [f32],
}

impl<'a> VertexSlices<'a> {
    /// Extends every vertex array by `count` entries and returns the new tails.
    fn grow(scene: &'a mut Scene, count: usize, k: usize) -> Self {
        let base = scene.positions.len();
        scene.positions.resize(base + count, [0.0; 3]);
        scene.color.resize(base + count, [0; 3]);
        scene.density.resize(base + count, 0.0);
        scene.adjacency_end.resize(base + count, 0);
        scene.sh_rest.resize((base + count) * k, 0.0);
        VertexSlices {
            pos: &mut scene.positions[base..],
            color: &mut scene.color[base..],
            density: &mut scene.density[base..],
            end: &mut scene.adjacency_end[base..],
            sh: &mut scene.sh_rest[base * k..],
        }
    }

    fn split_at(self, mid: usize, k: usize) -> (Self, Self) {
        let (p0, p1) = self.pos.split_at_mut(mid);
        let (c0, c1) = self.color.split_at_mut(mid);
        let (d0, d1) = self.density.split_at_mut(mid);
        let (e0, e1) = self.end.split_at_mut(mid);
        let (s0, s1) = self.sh.split_at_mut(mid * k);
        (
            VertexSlices { pos: p0, color: c0, density: d0, end: e0, sh: s0 },
            VertexSlices { pos: p1, color: c1, density: d1, end: e1, sh: s1 },
        )
    }
}

fn decode_vertices<const LE: bool>(src: &[u8], dst: VertexSlices, rec: usize, k: usize) {
    let n = dst.pos.len();
    if n > TASK_RECORDS {
        let mid = n / 2;
        let (a, b) = dst.split_at(mid, k);
        let (sa, sb) = src.split_at(mid * rec);
        rayon::join(|| decode_vertices::<LE>(sa, a, rec, k), || decode_vertices::<LE>(sb, b, rec, k));
        return;
    }
    for (i, b) in src.chunks_exact(rec).enumerate() {
        dst.pos[i] = [f32_at::<LE>(b, 0), f32_at::<LE>(b, 4), f32_at::<LE>(b, 8)];
        dst.color[i] = [b[12], b[13], b[14]];
        dst.density[i] = f32_at::<LE>(b, 15);
        dst.end[i] = u32_at::<LE>(b, 19);
        for (s, w) in dst.sh[i * k..(i + 1) * k].iter_mut().zip(b[23..].chunks_exact(4)) {
            *s = f32_at::<LE>(w, 0);
        }
    }
}
