//! Where a compiled render graph is kept between runs (`render --executable-cache
//! DIR`, the Poplar SDK only): one file per graph, named by a hash of everything the
//! graph is built from — the render spec (the scene's shards, every tile's
//! parameters and links, the repeat count), the target's tiles, the codelet bundle
//! and this build's version — so a file is only ever loaded for the graph it holds.

use std::path::{Path, PathBuf};

use poplar_bridge::RenderSpec;

/// FNV-1a, 64 bits: stable across builds and platforms, unlike std's hasher.
struct Fnv(u64);

impl Fnv {
    fn bytes(&mut self, b: &[u8]) -> &mut Self {
        for &x in b {
            self.0 = (self.0 ^ x as u64).wrapping_mul(0x0000_0100_0000_01b3);
        }
        self
    }
    fn num(&mut self, v: u64) -> &mut Self {
        self.bytes(&v.to_le_bytes())
    }
    /// A length first, so that neighbouring fields cannot trade bytes.
    fn field(&mut self, b: &[u8]) -> &mut Self {
        self.num(b.len() as u64).bytes(b)
    }
}

/// The hash that names the executable of `spec` on a target of `tiles` tiles
/// with the codelets `codelets` (the bundle's bytes, or its name when it is not a
/// file).
pub fn key(spec: &RenderSpec, tiles: u32, codelets: &[u8]) -> u64 {
    let mut h = Fnv(0xcbf2_9ce4_8422_2325);
    h.field(env!("CARGO_PKG_VERSION").as_bytes()).num(tiles as u64).field(codelets);
    h.num(spec.nodes.len() as u64);
    for n in &spec.nodes {
        h.num(n.role as u64)
            .num(n.tile as u64)
            .field(&n.params)
            .num(n.shard_offset as u64)
            .num(n.shard_bytes as u64)
            .field(&n.copies);
    }
    h.num(spec.edges.len() as u64);
    for e in &spec.edges {
        for v in [e.kind as u32, e.from, e.to, e.from_lane, e.to_lane, e.capacity] {
            h.num(v as u64);
        }
    }
    h.field(&spec.shards);
    for v in [
        spec.ray_bytes as u64,
        spec.slice_pixels as u64,
        spec.region_bytes as u64,
        spec.rc as u64,
        spec.ends_on_device as u64,
        spec.schedule as u64,
    ] {
        h.num(v);
    }
    h.0
}

/// The file in `dir` that holds the executable of `spec` for `tiles` tiles.
pub fn path(dir: &Path, spec: &RenderSpec, tiles: u32) -> PathBuf {
    let gp = poplar_bridge::codelets_gp();
    let codelets = std::fs::read(&gp).unwrap_or_else(|_| gp.into_bytes());
    dir.join(format!("foam-render-{:016x}.poplar_exe", key(spec, tiles, &codelets)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_part_of_the_spec_and_target_changes_the_key() {
        let spec = RenderSpec {
            nodes: vec![poplar_bridge::RenderNode {
                role: 0,
                tile: 3,
                params: vec![1, 2],
                shard_offset: 0,
                shard_bytes: 2,
                copies: vec![],
            }],
            edges: vec![],
            shards: vec![9, 9],
            ray_bytes: 20,
            slice_pixels: 4,
            region_bytes: 0,
            rc: 20,
            ends_on_device: true,
            schedule: 2,
        };
        let k = key(&spec, 1472, b"gp");
        assert_eq!(k, key(&spec.clone(), 1472, b"gp"), "deterministic");
        assert_ne!(k, key(&spec, 1216, b"gp"));
        assert_ne!(k, key(&spec, 1472, b"gq"));
        let mut other = spec.clone();
        other.rc = 10;
        assert_ne!(k, key(&other, 1472, b"gp"));
        let mut other = spec.clone();
        other.ends_on_device = false;
        assert_ne!(k, key(&other, 1472, b"gp"), "Repeat and RepeatWhileTrue are other programs");
        let mut other = spec.clone();
        other.schedule = 1;
        assert_ne!(k, key(&other, 1472, b"gp"), "the injectors' schedule is another graph");
        let mut other = spec.clone();
        other.shards[1] = 8;
        assert_ne!(k, key(&other, 1472, b"gp"));
        let mut other = spec.clone();
        other.nodes[0].params = vec![1];
        other.nodes[0].copies = vec![2];
        assert_ne!(k, key(&other, 1472, b"gp"), "bytes do not move between fields");
    }
}
