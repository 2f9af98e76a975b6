//! Packing a shard into the exact bytes its tracer tile holds (layout.h):
//! `foam_shard_header | foam_cell[n_local] | foam_halo[n_halo] | foam_cell_info[n_local] | SH section
//! | u16 adjacency[n_adj] | pad to 8`.
//! Blobs are little-endian, as are the IPU and every host we build on.

use rayon::prelude::*;
use serde::Serialize;
use std::mem::size_of;

use crate::{MAX_SHARD_ENTRIES, Partition, PartitionError, SceneRef, ShPayload, Shard, build_shard};
use foam_layout::{FOAM_SHARD_MAGIC, foam_cell, foam_cell_info, foam_halo, foam_shard_header};

#[cfg(target_endian = "big")]
compile_error!("shard blobs are little-endian byte images of layout.h structs");

const HEADER: usize = size_of::<foam_shard_header>();
const CELL: usize = size_of::<foam_cell>();
const HALO: usize = size_of::<foam_halo>();
const INFO: usize = size_of::<foam_cell_info>();
/// Bytes a local cell brings its blob besides its SH coefficients and adjacency.
pub(crate) const CELL_BYTES: usize = CELL + INFO;

/// Bytes of a packed shard without SH coefficients, padded to a multiple of 8.
pub fn blob_len(n_local: usize, n_halo: usize, n_adj: usize) -> usize {
    blob_len_sh(n_local, n_halo, n_adj, &ShPayload::NONE)
}

/// Bytes of a packed shard carrying `sh` for its local cells, padded to a multiple of 8
/// (blobs follow each other in regions, and each starts 8-aligned: layout.h).
pub fn blob_len_sh(n_local: usize, n_halo: usize, n_adj: usize, sh: &ShPayload) -> usize {
    (HEADER + CELL_BYTES * n_local + sh.section_bytes(n_local) + HALO * n_halo + 2 * n_adj).next_multiple_of(8)
}

/// What the report needs of one shard.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ShardCounts {
    pub local: u32,
    pub halo: u32,
    pub adjacency: u32,
    pub neighbour_shards: u32,
    /// Packed blob bytes.
    pub bytes: u32,
}

#[derive(Clone, Debug)]
pub struct PackedShard {
    pub blob: Vec<u8>,
    pub counts: ShardCounts,
}

/// Packs one built shard of `part`, naming shards by their ids on the device.
pub fn pack_shard(scene: &SceneRef, part: &Partition, shard: &Shard) -> Vec<u8> {
    let (n_local, n_halo, n_adj) = (shard.cells.len(), shard.halo.len(), shard.adjacency.len());
    let sh = &scene.sh;
    let total = blob_len_sh(n_local, n_halo, n_adj, sh);
    let cells_offset = HEADER;
    let halo_offset = cells_offset + CELL * n_local;
    let adj_offset = halo_offset + HALO * n_halo + INFO * n_local + sh.section_bytes(n_local);
    let header = foam_shard_header {
        magic: FOAM_SHARD_MAGIC,
        shard_id: part.ids[shard.id],
        depth: part.id_bits as u16,
        n_local: n_local as u32,
        n_halo: n_halo as u32,
        n_adj: n_adj as u32,
        cells_offset: cells_offset as u32,
        halo_offset: halo_offset as u32,
        adj_offset: adj_offset as u32,
        total_bytes: total as u32,
        sh_rest: sh.rest as u16,
        sh_f32: sh.f32 as u16,
    };
    let mut blob = Vec::with_capacity(total);
    blob.extend_from_slice(bytemuck::bytes_of(&header));
    for &g in shard.cells {
        let [x, y, z] = scene.positions[g as usize];
        blob.extend_from_slice(bytemuck::bytes_of(&foam_cell { x, y, z, density: scene.density[g as usize] }));
    }
    for h in &shard.halo {
        let [x, y, z] = scene.positions[h.global as usize];
        let shard = part.ids[h.shard as usize];
        blob.extend_from_slice(bytemuck::bytes_of(&foam_halo { x, y, z, shard, cell: h.cell }));
    }
    for (&g, &adj_end) in shard.cells.iter().zip(&shard.adjacency_end) {
        let [r, g, b] = scene.color[g as usize];
        blob.extend_from_slice(bytemuck::bytes_of(&foam_cell_info { r, g, b, pad: 0, adj_end }));
    }
    for &g in shard.cells {
        let start = blob.len();
        let coeffs = &sh.coeffs[g as usize * sh.stride..][..3 * sh.rest];
        let mut put = |v: f32| {
            if sh.f32 {
                blob.extend_from_slice(&v.to_le_bytes());
            } else {
                blob.extend_from_slice(&half::f16::from_f32(v).to_bits().to_le_bytes());
            }
        };
        // layout.h: the red-green pairs, then blue (scene.ply interleaves r, g, b).
        for rgb in coeffs.chunks_exact(3) {
            put(rgb[0]);
            put(rgb[1]);
        }
        for rgb in coeffs.chunks_exact(3) {
            put(rgb[2]);
        }
        blob.resize(start + sh.cell_bytes(), 0);
    }
    debug_assert_eq!(blob.len(), adj_offset);
    blob.extend_from_slice(bytemuck::cast_slice(&shard.adjacency));
    blob.resize(total, 0);
    blob
}

/// Builds and packs every shard in parallel, calling `progress` once per shard. Shards
/// are dropped as soon as they are packed, so only the blobs stay in memory. On error,
/// the lowest failing shard is reported, whatever the thread timing.
pub fn pack_all(
    scene: &SceneRef,
    part: &Partition,
    progress: &(dyn Fn() + Sync),
) -> Result<Vec<PackedShard>, PartitionError> {
    let results: Vec<Result<PackedShard, PartitionError>> = (0..part.shards())
        .into_par_iter()
        .map(|s| {
            let shard = build_shard(scene, part, s)?;
            let blob = pack_shard(scene, part, &shard);
            let counts = ShardCounts {
                local: shard.cells.len() as u32,
                halo: shard.halo.len() as u32,
                adjacency: shard.adjacency.len() as u32,
                neighbour_shards: shard.neighbour_shards.len() as u32,
                bytes: blob.len() as u32,
            };
            progress();
            Ok(PackedShard { blob, counts })
        })
        .collect();
    results.into_iter().collect()
}

/// A blob read back into layout.h records.
#[derive(Clone, Debug)]
pub struct UnpackedShard {
    pub header: foam_shard_header,
    pub cells: Vec<foam_cell>,
    pub halo: Vec<foam_halo>,
    pub info: Vec<foam_cell_info>,
    pub adjacency: Vec<u16>,
}

impl UnpackedShard {
    /// Adjacency slice of local cell `i`.
    pub fn neighbours(&self, i: usize) -> &[u16] {
        let start = if i == 0 { 0 } else { self.info[i - 1].adj_end as usize };
        &self.adjacency[start..self.info[i].adj_end as usize]
    }
}

/// Parses and checks a blob: magic, offsets, counts, CSR ends and index ranges.
pub fn unpack_shard(blob: &[u8]) -> Result<UnpackedShard, PartitionError> {
    let shard = if blob.len() >= 6 { u16::from_le_bytes([blob[4], blob[5]]) as usize } else { 0 };
    let bad = |msg: String| PartitionError::BadBlob { shard, msg };
    if blob.len() < HEADER {
        return Err(bad(format!("{} bytes, shorter than the {HEADER}-byte header", blob.len())));
    }
    let header: foam_shard_header = bytemuck::pod_read_unaligned(&blob[..HEADER]);
    if header.magic != FOAM_SHARD_MAGIC {
        return Err(bad(format!("magic {:#010x}, expected {FOAM_SHARD_MAGIC:#010x}", header.magic)));
    }
    let (n_local, n_halo, n_adj) = (header.n_local as usize, header.n_halo as usize, header.n_adj as usize);
    if !matches!(header.sh_rest, 0 | 3 | 8 | 15) || header.sh_f32 > 1 {
        return Err(bad(format!(
            "sh_rest {} / sh_f32 {}: expected 0, 3, 8 or 15 and 0 or 1",
            header.sh_rest, header.sh_f32
        )));
    }
    let sh = ShPayload { coeffs: &[], stride: 0, rest: header.sh_rest as usize, f32: header.sh_f32 == 1 };
    let sh_bytes = sh.section_bytes(n_local);
    if n_local + n_halo > MAX_SHARD_ENTRIES {
        return Err(bad(format!("{n_local} local + {n_halo} halo cells exceed {MAX_SHARD_ENTRIES}")));
    }
    let expect = [
        ("cells_offset", header.cells_offset as usize, HEADER),
        ("halo_offset", header.halo_offset as usize, HEADER + CELL * n_local),
        ("adj_offset", header.adj_offset as usize, HEADER + CELL_BYTES * n_local + HALO * n_halo + sh_bytes),
        ("total_bytes", header.total_bytes as usize, blob_len_sh(n_local, n_halo, n_adj, &sh)),
        ("blob length", blob.len(), blob_len_sh(n_local, n_halo, n_adj, &sh)),
    ];
    for (name, got, want) in expect {
        if got != want {
            return Err(bad(format!("{name} is {got}, expected {want}")));
        }
    }
    let records = |off: usize, size: usize, n: usize| blob[off..off + size * n].chunks_exact(size);
    let cells: Vec<foam_cell> =
        records(header.cells_offset as usize, CELL, n_local).map(bytemuck::pod_read_unaligned).collect();
    let halo: Vec<foam_halo> =
        records(header.halo_offset as usize, HALO, n_halo).map(bytemuck::pod_read_unaligned).collect();
    let info_offset = header.halo_offset as usize + HALO * n_halo;
    let info: Vec<foam_cell_info> = records(info_offset, INFO, n_local).map(bytemuck::pod_read_unaligned).collect();
    let adjacency: Vec<u16> =
        records(header.adj_offset as usize, 2, n_adj).map(|b| u16::from_le_bytes([b[0], b[1]])).collect();
    let mut prev = 0;
    for (i, c) in info.iter().enumerate() {
        if c.adj_end < prev || c.adj_end as usize > n_adj {
            return Err(bad(format!("cell {i} has adj_end {} after {prev} (n_adj {n_adj})", c.adj_end)));
        }
        prev = c.adj_end;
    }
    if prev as usize != n_adj {
        return Err(bad(format!("adjacency ends at {prev} but n_adj is {n_adj}")));
    }
    if let Some(k) = adjacency.iter().position(|&a| a as usize >= n_local + n_halo) {
        return Err(bad(format!("adjacency entry {k} is {}, past the {} cells", adjacency[k], n_local + n_halo)));
    }
    if header.depth > 16 {
        return Err(bad(format!("depth {} is over 16 (shard ids are 16-bit)", header.depth)));
    }
    let shards = 1usize << header.depth;
    if let Some(h) = halo.iter().position(|h| h.shard as usize >= shards || h.shard as usize == shard) {
        return Err(bad(format!("halo {h} names shard {}, not another of the {shards} shards", halo[h].shard)));
    }
    Ok(UnpackedShard { header, cells, halo, info, adjacency })
}
