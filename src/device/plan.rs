//! The device plan: shards packed for their tracer tiles, every tile's role and
//! parameters, buffer capacities, framebuffer slices, and the camera block with
//! the start cell of a view.

use std::mem::size_of;

use partition::RayLayout;
use partition::layout::{foam_camera, foam_params, foam_ray_hops, foam_region_header};
use partition::{Method, Partition, SceneRef};
use poplar_bridge::{RenderNode, RenderSpec};

use super::options::DeviceOptions;
use super::tree::{Role, Tree};
use super::DeviceError;
use crate::camera::Camera;
use crate::reference::SiteIndex;
use crate::scene::Scene;

/// Largest image side: pixel coordinates travel in 11 bits of the payload (layout.h).
pub const MAX_IMAGE_SIDE: u32 = partition::layout::FOAM_MAX_IMAGE_SIDE;

/// Bytes of a `#[repr(C)]` layout.h record, as the tile holds it.
pub(crate) fn record_bytes<T: Copy>(v: &T) -> Vec<u8> {
    // SAFETY: layout.h records are plain C structs of fixed-width fields whose sizes
    // are static_asserted without padding; reading them as bytes is well defined.
    unsafe { std::slice::from_raw_parts((v as *const T).cast::<u8>(), size_of::<T>()) }.to_vec()
}

pub(crate) fn layout_code(layout: RayLayout) -> u32 {
    match layout {
        RayLayout::Fp32 => partition::layout::foam_layout_FOAM_LAYOUT_FP32,
        RayLayout::Mixed => partition::layout::foam_layout_FOAM_LAYOUT_MIXED,
        RayLayout::Half => partition::layout::foam_layout_FOAM_LAYOUT_HALF,
    }
}

pub struct DevicePlan {
    pub tree: Tree,
    pub partition: Partition,
    pub options: DeviceOptions,
    pub width: u32,
    pub height: u32,
    pub ray_bytes: u32,
    /// Framebuffer slots per tracer: pixel p lives on tracer p % shards, slot p / shards.
    pub slice_pixels: u32,
    pub spec: RenderSpec,
    sites: SiteIndex,
    /// The blocks each injector emits (see [`super::blocks`]); their order is chosen per frame.
    groups: Vec<Vec<super::blocks::Block>>,
    block_slots: u32,
}

impl DevicePlan {
    /// Partitions `scene` into `shards` and lays out the device for `width` × `height`
    /// frames. `progress` is called once per packed shard.
    pub fn new(
        scene: &Scene,
        shards: u64,
        width: u32,
        height: u32,
        options: &DeviceOptions,
        progress: &(dyn Fn() + Sync),
    ) -> Result<DevicePlan, DeviceError> {
        check_options(options, width, height)?;
        let (part, packed, sites) = Self::cut(scene, shards, progress)?;
        Self::assemble(scene, (part, sites), &packed, width, height, options, None)
    }

    /// As [`new`](Self::new) for frames from `cam`. With `options.size_links` and no
    /// `link_capacity` given, the tracers' links follow a sample of the camera's rays
    /// ([`DevicePlan::tracer_traffic`]): their buffers are sized to the load on the
    /// busiest tracer ([`super::options::tracer_links_for_load`]), and side links
    /// join the shards the sampled rays cross between ([`super::sides::choose_by_traffic`])
    /// instead of those sharing the most faces. Every link is exchanged whole every
    /// iteration, so a view that the injectors mostly march themselves should not
    /// pay for links sized and placed for one that floods a few tracers. Other
    /// cameras still render with the plan, only perhaps in more iterations.
    pub fn for_camera(
        scene: &Scene,
        shards: u64,
        cam: &Camera,
        options: &DeviceOptions,
        progress: &(dyn Fn() + Sync),
    ) -> Result<DevicePlan, DeviceError> {
        check_options(options, cam.width, cam.height)?;
        let (part, packed, sites) = Self::cut(scene, shards, progress)?;
        let sizing = options.sizes_links_to_camera();
        // Side links are chosen from the traffic below when sizing: none until then.
        let no_sides = sizing.then(|| vec![Vec::new(); packed.len()]);
        let plan = Self::assemble(scene, (part, sites), &packed, cam.width, cam.height, options, no_sides)?;
        if !sizing {
            return Ok(plan);
        }
        let (load, crossings) = plan.tracer_traffic(scene, cam);
        let peak = load.into_iter().fold(0.0, f64::max);
        let sized = super::options::tracer_links_for_load(options, plan.ray_bytes, peak);
        let sides = super::sides::choose_by_traffic(&crossings, &plan.tree, options.side_links);
        let DevicePlan { partition, sites, .. } = plan;
        Self::assemble(scene, (partition, sites), &packed, cam.width, cam.height, &sized, Some(sides))
    }

    /// The scene cut into shards and packed for their tiles, and the site index.
    fn cut(
        scene: &Scene,
        shards: u64,
        progress: &(dyn Fn() + Sync),
    ) -> Result<(Partition, Vec<partition::PackedShard>, SiteIndex), DeviceError> {
        partition::check_shard_count(shards)?;
        let sref = SceneRef {
            positions: &scene.positions,
            density: &scene.density,
            color: &scene.color,
            adjacency_end: &scene.adjacency_end,
            adjacency: &scene.adjacency,
        };
        sref.validate()?;
        let part = partition::partition(&sref, shards, Method::Kdtree)?;
        let packed = partition::pack_all(&sref, &part, progress)?;
        let sites = SiteIndex::new(scene).ok_or_else(|| DeviceError::Options("the scene has no sites".into()))?;
        Ok((part, packed, sites))
    }

    /// Lays out the device for shards already cut and packed.
    fn assemble(
        scene: &Scene,
        (part, sites): (Partition, SiteIndex),
        packed: &[partition::PackedShard],
        width: u32,
        height: u32,
        options: &DeviceOptions,
        // Side neighbours per tracer if chosen already (by traffic); by faces if not.
        sides: Option<Vec<Vec<u32>>>,
    ) -> Result<DevicePlan, DeviceError> {
        let depth = partition::check_shard_count(packed.len() as u64)?;
        let tree = Tree::new(depth, options.tiles, &options.fanout, options.injectors)?;

        let ray_bytes = (options.layout.payload_bytes() as usize + if options.hops { size_of::<foam_ray_hops>() } else { 0 }) as u32;
        let mut resolved = options.clone();
        if resolved.link_capacity.is_empty() {
            resolved.link_capacity = super::options::default_link_capacity(ray_bytes);
        }
        let options = &resolved;
        let pixels = width as u64 * height as u64;
        let slice_pixels = pixels.div_ceil(packed.len() as u64) as u32;
        let budget = partition::MK2_TILE_BYTES;
        if let Some((s, p)) = packed.iter().enumerate().find(|(_, p)| p.blob.len() as u64 > budget) {
            return Err(DeviceError::Options(format!(
                "shard {s} (tracer tile {s}) needs {} bytes for its cells alone but a tile has {budget}: use more shards",
                p.blob.len()
            )));
        }
        let largest_shard = packed.iter().map(|p| p.blob.len() as u32).max().unwrap_or(0);
        let top_edge = options.edge_capacity(tree.nodes[tree.root()].level);
        let tile = partition::MK2_TILE_BYTES as u32;
        let groups = super::blocks::groups(options.batch, width, height, options.injectors);
        let block_slots = groups.iter().map(Vec::len).max().unwrap_or(0) as u32;
        let block_list = super::blocks::list_bytes(block_slots) as u32;
        let region_bytes = options.region_capacity(ray_bytes, tile, largest_shard, options.inject_capacity, block_list);
        let spill = options.spill_capacity(ray_bytes, tile, top_edge);
        if let Some(s) = options.spill.filter(|&s| s < top_edge) {
            return Err(DeviceError::Options(format!(
                "the spill store ({s}) must hold at least one link buffer ({top_edge} rays)"
            )));
        }
        if options.inject_capacity == 0 {
            return Err(DeviceError::Options("--inject-capacity must be at least 1 ray".into()));
        }
        let injector_bytes = region_bytes + block_list + super::options::inject_link_bytes(options.inject_capacity, ray_bytes);
        if injector_bytes + super::options::TILE_RESERVE_BYTES > tile {
            return Err(DeviceError::Options(format!(
                "an injector tile needs {injector_bytes} B for its camera region ({region_bytes} B, the largest shard is {largest_shard} B), block list and link but a tile has {tile}: use more shards, a smaller --region-kib or --inject-capacity"
            )));
        }
        let mut router_queue = vec![0u32; tree.nodes.len()];
        for (i, n) in tree.nodes.iter().enumerate().filter(|(_, n)| n.role == Role::Router) {
            let (child, parent) = (options.edge_capacity(n.level - 1), options.edge_capacity(n.level));
            let q = options.router_queue_capacity(ray_bytes, tile, n.fanout, child, parent, n.inject_lanes, options.inject_capacity);
            if q < child.max(parent) {
                return Err(DeviceError::Options(format!(
                    "a level-{} router ({} children) has no room for queues beside its links of {child} and {parent} rays: lower --link-capacity or --fanout",
                    n.level, n.fanout
                )));
            }
            router_queue[i] = q;
        }

        let owner = |c: u32| part.owner(c);
        let mut sides = sides.unwrap_or_else(|| {
            super::sides::choose(&scene.adjacency_end, &scene.adjacency, &owner, &tree, options.side_links)
        });

        let mut blobs = Vec::with_capacity(packed.iter().map(|p| p.blob.len()).sum());
        let mut offsets = Vec::with_capacity(packed.len());
        for p in packed {
            offsets.push((blobs.len(), p.blob.len()));
            blobs.extend_from_slice(&p.blob);
        }
        let nodes = tree
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let mut params = node_params(n, options, ray_bytes, spill, router_queue[i], (width, height), block_slots);
                let (shard_offset, shard_bytes) = if n.role == Role::Tracer { offsets[n.prefix as usize] } else { (0, 0) };
                // Tracer node i holds shard i, so a side neighbour's shard is its node.
                let sides = if n.role == Role::Tracer { std::mem::take(&mut sides[i]) } else { Vec::new() };
                params.side_lanes = sides.len() as u32;
                for (k, &s) in sides.iter().enumerate() {
                    params.side_shard[k] = s as u16;
                }
                RenderNode {
                    role: n.role as u8,
                    tile: n.tile,
                    parent: n.parent.map_or(-1, |p| p as i32),
                    lane: n.lane,
                    fanout: n.fanout,
                    params: record_bytes(&params),
                    shard_offset,
                    shard_bytes,
                    sides,
                }
            })
            .collect();
        let spec = RenderSpec {
            nodes,
            shards: blobs,
            ray_bytes,
            slice_pixels,
            region_bytes: region_bytes as usize,
            rc: options.rc,
        };
        Ok(DevicePlan {
            tree,
            options: options.clone(),
            width,
            height,
            ray_bytes,
            slice_pixels,
            partition: part,
            spec,
            sites,
            groups,
            block_slots,
        })
    }

    pub fn shards(&self) -> usize {
        self.tree.tracers()
    }

    /// Bytes of all tracers' result stores as the host reads them (the graph gives
    /// an empty store one word).
    pub fn result_store_bytes(&self) -> usize {
        let per_tracer = (self.options.results / partition::layout::FOAM_WORKERS) as usize
            * partition::layout::FOAM_WORKERS as usize
            * size_of::<partition::layout::foam_result>();
        self.shards() * per_tracer.max(4)
    }

    /// What the host writes to the device for one frame: the camera block broadcast to
    /// every tile, and the generator's camera region (see [`super::region`]) for the
    /// view. `scene` must be the scene the plan was made from.
    pub fn frame_blocks(&self, scene: &Scene, cam: &Camera, frame: u32) -> Result<FrameBlocks, DeviceError> {
        if cam.width != self.width || cam.height != self.height {
            return Err(DeviceError::Options(format!(
                "camera is {}x{} but the device was planned for {}x{}",
                cam.width, cam.height, self.width, self.height
            )));
        }
        if scene.positions.len() != self.partition.slot.len() {
            return Err(DeviceError::Options(format!(
                "the scene has {} cells but the device was planned for {}",
                scene.positions.len(),
                self.partition.slot.len()
            )));
        }
        let start = self.sites.nearest(cam.position.to_array());
        let owner = self.partition.owner(start);
        let m = cam.c2w();
        let mut c2w = [0.0f32; 12];
        for r in 0..3 {
            c2w[r * 4..r * 4 + 4].copy_from_slice(&m[r]);
        }
        let block = foam_camera {
            c2w,
            fx: cam.fx,
            fy: cam.fy,
            cx: cam.cx,
            cy: cam.cy,
            width: cam.width,
            height: cam.height,
            t_stop: self.options.t_stop,
            start_shard: owner as u16,
            start_cell: self.partition.local_index(start) as u16,
            slice_pixels: self.slice_pixels,
            frame,
            tracers: self.shards() as u32,
        };
        let (order, chosen) = self.sample_frame(scene, cam, start, owner);
        let chosen: Vec<Vec<u8>> = chosen.iter().map(|shards| self.camera_region(shards)).collect();
        let mut regions = Vec::with_capacity(self.groups.len() * self.spec.region_bytes);
        let mut lists = Vec::with_capacity(self.groups.len() * super::blocks::list_bytes(self.block_slots));
        for (i, blocks) in order.blocks.iter().enumerate() {
            regions.extend_from_slice(&chosen[order.paths_of(i)]);
            lists.extend_from_slice(&super::blocks::list(blocks, self.block_slots));
        }
        Ok(FrameBlocks { camera: record_bytes(&block), regions, blocks: lists })
    }

    /// Orders the injectors' blocks for `cam` from a sample of their rays (see
    /// [`super::blocks::order`]) and chooses each set of sampled paths' camera region
    /// (see [`super::region::choose`]); `start` is the camera's cell, owned by shard
    /// `owner`.
    fn sample_frame(&self, scene: &Scene, cam: &Camera, start: u32, owner: usize) -> (super::blocks::FrameOrder, Vec<Vec<usize>>) {
        let tracer = crate::reference::Tracer::new(scene);
        let part = &self.partition;
        let owner_of = |c: u32| part.owner(c);
        let sizes: Vec<usize> = self.spec.nodes[..self.shards()].iter().map(|n| n.shard_bytes).collect();
        let budget = self.spec.region_bytes - size_of::<foam_region_header>();
        let order = super::blocks::order(&self.groups, self.options.batch, cam, &|samples: &[(u32, u32)]| {
            super::region::sample_paths(&tracer, &owner_of, cam, start, self.options.t_stop, samples)
        });
        let chosen = order.paths.iter().map(|paths| super::region::choose(paths, owner, &sizes, budget, REGION_SHARDS)).collect();
        (order, chosen)
    }

    /// Shard visits each tracer can expect to march in a frame from `cam`, estimated
    /// from the sampled rays that pick the camera regions: every visit after a ray
    /// leaves its injector's region, each sampled ray standing for an equal share of
    /// the frame's pixels.
    pub fn tracer_load(&self, scene: &Scene, cam: &Camera) -> Vec<f64> {
        self.tracer_traffic(scene, cam).0
    }

    /// [`tracer_load`](Self::tracer_load), and the crossings between tracers it
    /// implies: `(a, b, rays)` with `a < b`, both directions together, for every
    /// pair of shards some sampled ray crosses between outside its injector's region.
    pub fn tracer_traffic(&self, scene: &Scene, cam: &Camera) -> (Vec<f64>, Vec<(u32, u32, f64)>) {
        let start = self.sites.nearest(cam.position.to_array());
        let (order, chosen) = self.sample_frame(scene, cam, start, self.partition.owner(start));
        let mut crossings: std::collections::BTreeMap<(u32, u32), f64> = Default::default();
        let mut load = vec![0.0f64; self.shards()];
        let samples: usize = order.paths.iter().map(Vec::len).sum();
        let weight = cam.width as f64 * cam.height as f64 / samples.max(1) as f64;
        for (paths, region) in order.paths.iter().zip(&chosen) {
            let mut inside = vec![false; self.shards()];
            for &s in region {
                inside[s] = true;
            }
            for path in paths {
                let out: Vec<u16> = path.iter().copied().skip_while(|&s| inside[s as usize]).collect();
                for &s in &out {
                    load[s as usize] += weight;
                }
                for w in out.windows(2) {
                    let (a, b) = (w[0].min(w[1]) as u32, w[0].max(w[1]) as u32);
                    *crossings.entry((a, b)).or_default() += weight;
                }
            }
        }
        (load, crossings.into_iter().map(|((a, b), w)| (a, b, w)).collect())
    }

    /// An injector's camera region holding copies of `shards` (which must fit: see
    /// [`super::region::choose`]), listed by shard id so the injector can search it.
    pub fn camera_region(&self, shards: &[usize]) -> Vec<u8> {
        let mut sorted = shards.to_vec();
        sorted.sort_unstable();
        let mut header = foam_region_header { count: 0, total_bytes: 0, shard: [0; REGION_SHARDS], offset: [0; REGION_SHARDS] };
        let mut blobs = Vec::new();
        let head = size_of::<foam_region_header>();
        for s in sorted {
            let node = &self.spec.nodes[s];
            header.shard[header.count as usize] = s as u16;
            header.offset[header.count as usize] = (head + blobs.len()) as u32;
            header.count += 1;
            blobs.extend_from_slice(&self.spec.shards[node.shard_offset..node.shard_offset + node.shard_bytes]);
        }
        header.total_bytes = (head + blobs.len()) as u32;
        assert!(header.total_bytes as usize <= self.spec.region_bytes, "camera region over its budget");
        let mut region = record_bytes(&header);
        region.extend_from_slice(&blobs);
        region.resize(self.spec.region_bytes, 0);
        region
    }
}

const REGION_SHARDS: usize = partition::layout::FOAM_REGION_MAX_SHARDS as usize;

/// Host-written bytes of one frame (see [`DevicePlan::frame_blocks`]).
pub struct FrameBlocks {
    pub camera: Vec<u8>,
    /// Every injector's camera region, in node order.
    pub regions: Vec<u8>,
    /// Every injector's block list (layout.h foam_block), in node order.
    pub blocks: Vec<u8>,
}

fn check_options(o: &DeviceOptions, width: u32, height: u32) -> Result<(), DeviceError> {
    let bad = |m: String| Err(DeviceError::Options(m));
    if o.rc == 0 {
        return bad("--rc must be at least 1 (compute/exchange iterations per host call)".into());
    }
    if width == 0 || height == 0 || width > MAX_IMAGE_SIDE || height > MAX_IMAGE_SIDE {
        return bad(format!(
            "resolution {width}x{height} is outside 1..={MAX_IMAGE_SIDE} per side (pixel coordinates travel in 11 bits)"
        ));
    }
    if o.link_capacity.contains(&0) || o.tracer_queue == 0 || o.router_queue == Some(0) {
        return bad("link, tracer and router capacities must be at least 1 ray".into());
    }
    let most = partition::layout::FOAM_MAX_SIDES;
    if o.side_links > most {
        return bad(format!("--side-links {}: a tracer has at most {most} side links", o.side_links));
    }
    if o.side_links > 0 && o.side_capacity == 0 {
        return bad("--side-capacity must be at least 1 ray when tracers have side links".into());
    }
    if !(0.0..1.0).contains(&o.t_stop) {
        return bad(format!("transmittance threshold {} must be in [0, 1)", o.t_stop));
    }
    Ok(())
}

fn node_params(
    n: &super::tree::Node,
    o: &DeviceOptions,
    ray_bytes: u32,
    spill: u32,
    router_queue: u32,
    (width, height): (u32, u32),
    block_slots: u32,
) -> foam_params {
    let (block_w, block_h) = o.batch.block_size(width, height);
    let mut p = foam_params {
        layout: layout_code(o.layout),
        ray_bytes,
        hops: o.hops as u32,
        link_capacity: match n.role {
            Role::Tracer => o.edge_capacity(0),
            Role::Router | Role::Generator => o.edge_capacity(n.level - 1),
            Role::Injector => o.inject_capacity,
        },
        queue_capacity: 0,
        shard: n.prefix,
        level_shift: n.level_shift,
        fanout: n.fanout,
        subtree_shift: n.subtree_shift,
        max_in_flight: 0,
        batch_kind: 0,
        block_w: 0,
        block_h: 0,
        drain_iters: 0,
        parent_capacity: if n.role == Role::Router { o.edge_capacity(n.level) } else { 0 },
        result_slots: if n.role == Role::Tracer { o.results / partition::layout::FOAM_WORKERS } else { 0 },
        inject_lanes: n.inject_lanes,
        inject_capacity: if n.inject_lanes > 0 { o.inject_capacity } else { 0 },
        block_slots: 0,
        side_lanes: 0,
        side_capacity: if n.role == Role::Tracer { o.side_capacity } else { 0 },
        side_shard: [0; partition::layout::FOAM_MAX_SIDES as usize],
    };
    match n.role {
        Role::Tracer => p.queue_capacity = o.tracer_queue,
        Role::Router => {
            p.queue_capacity = router_queue;
            // The root admits new rays only while the generator could take every ray
            // in flight: that is what makes the routers deadlock free (codelets/router.cpp).
            if n.inject_lanes > 0 {
                p.max_in_flight = spill;
            }
        }
        Role::Generator => p.queue_capacity = spill,
        Role::Injector => {
            p.batch_kind = matches!(o.batch, super::options::Batch::Cols(_)) as u32;
            p.block_w = block_w;
            p.block_h = block_h;
            p.drain_iters = o.drain_iters;
            p.block_slots = block_slots;
        }
    }
    p
}
