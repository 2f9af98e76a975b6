//! The second stage of a plan: the device laid out for a partitioned scene — its
//! tree of tiles, the injectors' blocks, and the camera region each injector has
//! room for. Nothing here depends on a camera, so a camera plan
//! ([`super::sample`]) can sample rays through it before the tracers are planned.

use std::mem::size_of;

use foam_layout::foam_ray_hops;
use partition::{PackedShard, Partition};
use poplar_bridge::{RenderNode, RenderSpec};

use super::DeviceError;
use super::blocks::Block;
use super::options::{DeviceOptions, TILE_RESERVE_BYTES};
use super::plan::{node_params, record_bytes};
use super::sample::Sampling;
use super::tree::{Role, Tree, TreeError};

pub struct Topology {
    pub tree: Tree,
    /// The options with every link capacity given (the payload's defaults where none was).
    pub options: DeviceOptions,
    pub width: u32,
    pub height: u32,
    pub ray_bytes: u32,
    /// Framebuffer slots per tracer (see [`super::DevicePlan::home_tracer`]).
    pub slice_pixels: u32,
    /// The blocks each injector emits (see [`super::blocks`]); their order is chosen per frame.
    pub groups: Vec<Vec<Block>>,
    pub block_slots: u32,
    /// Bytes of each injector's camera region (its directory and shard blobs).
    pub region_bytes: u32,
    /// Each tracer's shard bytes.
    pub shard_bytes: Vec<usize>,
    /// Each k-d leaf's first shard, whose tracer holds the leaf's framebuffer slice.
    pub home_of_leaf: Vec<usize>,
}

impl Topology {
    /// Lays out the device for `packed` shards of `part` and `width` × `height` frames.
    pub fn new(
        part: &Partition,
        packed: &[PackedShard],
        width: u32,
        height: u32,
        options: &DeviceOptions,
    ) -> Result<Topology, DeviceError> {
        let ray_bytes = (options.layout.payload_bytes() as usize
            + if options.hops { size_of::<foam_ray_hops>() } else { 0 }) as u32;
        let (tree, injectors) = Topology::tree_with_injectors(part, options, ray_bytes)?;
        let options = &DeviceOptions { injectors, ..options.clone() };
        let home_of_leaf = part
            .ids
            .iter()
            .enumerate()
            .filter(|&(_, &id)| id & 1 == 0 || part.id_bits == part.depth)
            .map(|(s, _)| s)
            .collect();
        // One slice per leaf of the k-d tree (see [`DevicePlan::home_tracer`]).
        let slice_pixels = (width as u64 * height as u64).div_ceil(1 << part.depth) as u32;
        let budget = partition::MK2_TILE_BYTES;
        if let Some((s, p)) = packed.iter().enumerate().find(|(_, p)| p.blob.len() as u64 > budget) {
            return Err(DeviceError::Options(format!(
                "shard {s} (tracer tile {s}) needs {} bytes for its cells alone but a tile has {budget}: use more shards",
                p.blob.len()
            )));
        }
        let groups = super::blocks::groups(options.batch, width, height, options.injectors);
        let block_slots = super::blocks::slots(options.batch, &groups);
        let mut topology = Topology {
            tree,
            options: options.clone(),
            width,
            height,
            ray_bytes,
            slice_pixels,
            groups,
            block_slots,
            region_bytes: 0,
            shard_bytes: packed.iter().map(|p| p.blob.len()).collect(),
            home_of_leaf,
        };
        topology.resolve_links(options);
        let o = &topology.options;
        let top_edge = o.edge_capacity(topology.tree.nodes[topology.tree.root()].level);
        if let Some(s) = o.spill.filter(|&s| s < top_edge) {
            return Err(DeviceError::Options(format!(
                "the spill store ({s}) must hold at least one link buffer ({top_edge} rays)"
            )));
        }
        if o.inject_capacity == Some(0) {
            return Err(DeviceError::Options("--tune inject_capacity must be at least 1 ray".into()));
        }
        topology.region_bytes = topology.region()?;
        Ok(topology)
    }

    /// The tree of `part`'s shards with the most injectors, up to `options.injectors`,
    /// that the target has tiles for beside the tree and whose lanes leave the root
    /// room for its queues (the wider the root and the larger the payload, the
    /// fewer), and that count. One injector always gets a tree: if the tiles or the
    /// root have no room even then, building the tree or filling the stores says so.
    fn tree_with_injectors(
        part: &Partition,
        options: &DeviceOptions,
        ray_bytes: u32,
    ) -> Result<(Tree, u32), DeviceError> {
        let mut injectors = options.injectors;
        loop {
            let fanouts = options.tree_fanouts(part.depth);
            let mut tree = match Tree::with_leaves(&part.shards_per_leaf(), options.target_tiles(), &fanouts, injectors)
            {
                Err(TreeError::TooManyTiles { needed, available, .. })
                    if injectors > 1 && needed - (available as u64) < injectors as u64 =>
                {
                    injectors -= (needed - available as u64) as u32;
                    continue;
                }
                t => t?,
            };
            let root = &tree.nodes[tree.root()];
            if injectors > 1 && !options.root_has_room(ray_bytes, root.fanout, root.level, root.edge_level, injectors) {
                injectors -= 1;
                continue;
            }
            // The injectors sit on IPU 0 beside the root.
            match tree.place_on_ipus(options.ipus, options.tiles) {
                Err(TreeError::IpuFull { ipu: 0, needed, available, .. })
                    if injectors > 1 && needed - (available as u64) < injectors as u64 =>
                {
                    injectors -= (needed - available as u64) as u32;
                    continue;
                }
                placed => placed?,
            }
            if options.direct_lane_capacity(injectors) > 0 {
                tree.add_direct_lanes();
            }
            return Ok((tree, injectors));
        }
    }

    /// Takes `options`' links (tracer edges and side links sized for a camera: see
    /// [`super::options::tracer_links_for_load`]), the payload's defaults where none
    /// are given. What the topology fixed does not depend on them; it keeps its
    /// injector count.
    pub fn resolve_links(&mut self, options: &DeviceOptions) {
        self.options = DeviceOptions { injectors: self.tree.injectors().len() as u32, ..options.clone() };
        if self.options.link_capacity.is_empty() {
            self.options.link_capacity = super::options::default_link_capacity(self.ray_bytes);
        }
    }

    pub fn shards(&self) -> usize {
        self.tree.tracers()
    }

    /// What sampling a camera reads of the topology of `partition` (with `sites`).
    pub fn sampling<'a>(&'a self, partition: &'a Partition, sites: &'a crate::reference::SiteIndex) -> Sampling<'a> {
        Sampling {
            partition,
            sites,
            groups: &self.groups,
            block_slots: self.block_slots,
            options: &self.options,
            shard_bytes: &self.shard_bytes,
            region_bytes: self.region_bytes as usize,
        }
    }

    /// The render spec's nodes, each with its own foam_params (the stores that fill
    /// their tiles empty), tracer s holding shard s at `offsets[s]` of the spec's
    /// blobs with the copies directory `copies[s]` and `result_slots[s]` slots per worker,
    /// as does every replica of shard s.
    pub fn nodes(&self, offsets: &[(usize, usize)], copies: &[Vec<u8>], result_slots: &[u32]) -> Vec<RenderNode> {
        let (tree, o) = (&self.tree, &self.options);
        (0..tree.nodes.len())
            .map(|i| {
                let n = &tree.nodes[i];
                let mut params = node_params(tree, i, o, self.ray_bytes, (self.width, self.height), self.block_slots);
                // A replica is its shard's tracer again on another tile.
                let shard = tree.shard_of(i).filter(|_| n.role == Role::Tracer);
                if let Some(s) = shard {
                    params.result_slots = result_slots[s];
                }
                let (shard_offset, shard_bytes) = shard.map_or((0, 0), |s| offsets[s]);
                let copies = shard.map_or_else(Vec::new, |s| copies[s].clone());
                RenderNode {
                    role: n.role as u8,
                    tile: n.tile,
                    params: record_bytes(&params),
                    shard_offset,
                    shard_bytes,
                    copies,
                }
            })
            .collect()
    }

    /// The camera region an injector has room for beside its links, held rays and
    /// block list, as the graph builder allocates them for this tree
    /// (`poplar_bridge::spec_tile_bytes`).
    fn region(&self) -> Result<u32, DeviceError> {
        let tile = partition::MK2_TILE_BYTES as u32;
        let shards = self.shards();
        let mut offsets = Vec::with_capacity(shards);
        let mut at = 0;
        for &b in &self.shard_bytes {
            offsets.push((at, b));
            at += b;
        }
        let slots = vec![self.options.results / foam_layout::FOAM_WORKERS; shards];
        let spec = RenderSpec {
            nodes: self.nodes(&offsets, &vec![Vec::new(); shards], &slots),
            edges: super::edges::edges(&self.tree, &vec![Vec::new(); shards], &self.options, self.ray_bytes),
            shards: Vec::new(),
            ray_bytes: self.ray_bytes,
            slice_pixels: self.slice_pixels,
            region_bytes: 0,
            rc: self.options.rc,
            ends_on_device: self.options.ends_on_device,
            schedule: self.options.schedule.unwrap_or_default() as u8,
        };
        let bytes = poplar_bridge::spec_tile_bytes(&spec)?;
        let injector = &bytes[self.tree.injectors().next().expect("a tree has injectors")];
        let (links, block_list) = ((injector.links() + injector.store) as u32, injector.blocks as u32);
        let largest_shard = self.shard_bytes.iter().copied().max().unwrap_or(0) as u32;
        let region_bytes = self.options.region_capacity(tile, largest_shard, links, block_list);
        let injector_bytes = region_bytes + block_list + links;
        if injector_bytes + TILE_RESERVE_BYTES > tile {
            return Err(DeviceError::Options(format!(
                "an injector tile needs {injector_bytes} B for its camera region ({region_bytes} B, the largest shard is {largest_shard} B), block list and links but a tile has {tile}: use more shards, or tune a smaller region_kib, inject_capacity or direct_capacity"
            )));
        }
        Ok(region_bytes)
    }
}
