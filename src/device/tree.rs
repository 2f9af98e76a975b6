//! Tile roles: tracers at the leaves, a tree of routers over the shard-id bits,
//! the spill store above the root (the paper's generator, §4.1, §4.3), and injector tiles on lanes of
//! their own at the root that emit the primary rays.
//!
//! Shard ids are k-d tree paths (first split = most significant bit), so grouping
//! ids by their high bits puts spatial neighbours under the same routers. Each
//! router level takes log2(fanout) bits; the paper's quadtree takes two per level.
//! Wider routers make paths shorter: a ray crossing between two shards climbs to
//! their lowest common router and back, and with 16 children per router most
//! crossings of a 1024-shard k-d tree stay under one router instead of three.
//!
//! A leaf of the k-d tree may be split into two shards on tiles the tree leaves
//! free (see [`partition::cut`]): then every shard id has one more bit, the two
//! halves hang off a router of two children of their own in the leaf's place, and
//! every other leaf's tracer takes the id ending in 0. The routers above read the
//! same bits as before, one place higher.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Tracer,
    Router,
    Spill,
    Injector,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    pub role: Role,
    pub tile: u32,
    /// Index of the parent node; `None` only for the spill store.
    pub parent: Option<usize>,
    /// This node's lane among its parent's children (injectors: after them).
    pub lane: u32,
    /// Children: a power of two up to FOAM_MAX_FANOUT for routers, 1 for the
    /// spill store, 0 for tracers and injectors.
    pub fanout: u32,
    /// Routers: injector lanes after the children (the root, and with direct lanes
    /// the routers under it: [`Tree::add_direct_lanes`]).
    pub inject_lanes: u32,
    /// Shard-id bits below this node's subtree: a shard `s` is inside iff
    /// `s >> subtree_shift == prefix`.
    pub subtree_shift: u32,
    pub prefix: u32,
    /// Routers: shard-id bits below their children (`child = (s >> level_shift) & (fanout-1)`).
    pub level_shift: u32,
    /// Router level above the tracers (1 = parents of tracers, and the routers of
    /// split leaves); 0 for tracers.
    pub level: u32,
    /// Level of the edge to its parent, whose link capacity it takes: a router's
    /// level, 0 for tracers and for the router of a split leaf or of replicas
    /// (which sit in a tracer's place).
    pub edge_level: u32,
    /// Routers: log2 of the children the shard-id bits choose (`fanout` counts
    /// their replicas' lanes too); 0 for a router of one shard's replicas
    /// ([`Tree::replicate`]).
    pub route_bits: u32,
    /// Routers: child `c`'s shard has `2^replica_bits[c]` tiles, the child's own lane
    /// and lanes `replica_lane[c]..` (layout.h foam_params.replica_bits).
    pub replica_bits: [u8; MAX_FANOUT as usize],
    pub replica_lane: [u8; MAX_FANOUT as usize],
}

#[derive(Clone, Debug)]
pub struct Tree {
    /// Levels of the k-d tree above its leaves.
    pub depth: u32,
    /// Bits of a shard id: `depth`, or one more with split leaves.
    pub id_bits: u32,
    pub nodes: Vec<Node>,
    tracers: usize,
    root: usize,
    spill: usize,
    /// Node indices of the injectors.
    injectors: std::ops::Range<usize>,
    /// Each replica tracer's node and the shard it holds a replica of.
    replica_of: Vec<(usize, usize)>,
    /// Each injector's direct lanes, by the lane at the root of the router each
    /// leads to, ascending (empty without direct lanes).
    direct: Vec<Vec<u32>>,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TreeError {
    #[error(
        "{shards} shards: the device needs a power of two from 2 to 32,768 (payloads address shards in 16 bits and 0xFFFF marks an empty slot)"
    )]
    BadDepth { shards: u64 },
    #[error(
        "{needed} tiles needed ({tracers} tracers, {routers} routers, 1 spill store, {injectors} injectors) but the target has {available}"
    )]
    TooManyTiles { needed: u64, tracers: u64, routers: u64, injectors: u32, available: u32 },
    #[error("{0} injectors: the root takes 1 to {max} injector lanes", max = MAX_INJECTORS)]
    BadInjectors(u32),
    #[error("router fanout {0} must be a power of two from 2 to {max}", max = MAX_FANOUT)]
    BadFanout(u32),
    #[error("router node {router} has {lanes} child lanes: {more} more for replicas would pass {max}", max = MAX_LANES)]
    NoLanes { router: usize, lanes: u32, more: u32 },
    #[error("{ipus} IPUs: the device needs a power of two from 1 to {max} and at least as many k-d leaves ({leaves})", max = MAX_IPUS)]
    BadIpus { ipus: u32, leaves: u64 },
    #[error(
        "IPU {ipu} needs {needed} tiles ({tracers} tracers, {others} routers, spill store and injectors) but has {available}"
    )]
    IpuFull { ipu: u32, needed: u64, tracers: u64, others: u64, available: u32 },
}

/// Most IPUs one graph spans here (an IPU-POD16's).
pub const MAX_IPUS: u32 = 16;

/// Widest router the codelets handle (layout.h).
pub const MAX_FANOUT: u32 = foam_layout::FOAM_MAX_FANOUT;
/// Most child lanes of a router: its children and their replicas' tiles (layout.h).
pub const MAX_LANES: u32 = foam_layout::FOAM_MAX_LANES;
/// Most injector lanes the root takes (layout.h).
pub const MAX_INJECTORS: u32 = foam_layout::FOAM_MAX_INJECTORS;

/// Router fanouts per level from the tracers up; the last entry repeats and the
/// top level takes whatever shard-id bits remain (so it may be narrower).
fn check_fanouts(fanouts: &[u32]) -> Result<(), TreeError> {
    match fanouts.iter().find(|&&f| !(2..=MAX_FANOUT).contains(&f) || !f.is_power_of_two()) {
        Some(&f) => Err(TreeError::BadFanout(f)),
        None if fanouts.is_empty() => Err(TreeError::BadFanout(0)),
        None => Ok(()),
    }
}

/// The IPU of shard id `id` (of `id_bits` bits) on `ipus` IPUs: the id's top
/// `log2(ipus)` bits, the k-d tree's first splits. `ipus` is a power of two no
/// larger than the `2^id_bits` shards.
pub fn ipu_of_id(id: u64, id_bits: u32, ipus: u32) -> u32 {
    (id >> (id_bits - ipus.trailing_zeros())) as u32
}

/// The injector (or direct) lanes, of a router's `lanes`, that its worker `w` of
/// `workers` walks whole, and as well its share of any source of rays: the host's
/// copy of lanes.h `foam_worker_share` (`foam_inject_chunk` for lanes).
pub fn worker_lanes(lanes: usize, w: usize, workers: usize) -> std::ops::Range<usize> {
    lanes * w / workers..lanes * (w + 1) / workers
}

impl Tree {
    /// The tree for `2^depth` shards with router `fanouts` per level (see
    /// [`check_fanouts`]) and `injectors` injector tiles on root lanes; tracer `s` is
    /// on tile `s`, routers follow level by level from the bottom, then the
    /// spill store, then the injectors.
    pub fn new(depth: u32, tiles_available: u32, fanouts: &[u32], injectors: u32) -> Result<Tree, TreeError> {
        if !(1..=15).contains(&depth) {
            return Err(TreeError::BadDepth { shards: 1u64 << depth.min(63) });
        }
        Tree::with_leaves(&vec![1; 1 << depth], tiles_available, fanouts, injectors)
    }

    /// As [`new`](Self::new) for a k-d tree of `shards_per_leaf.len()` leaves (a power
    /// of two), each 1 shard or 2 for a split leaf: tracers in shard order, the
    /// split leaves' routers first among the routers.
    pub fn with_leaves(
        shards_per_leaf: &[u8],
        tiles_available: u32,
        fanouts: &[u32],
        injectors: u32,
    ) -> Result<Tree, TreeError> {
        let leaves = shards_per_leaf.len();
        let depth = leaves.trailing_zeros();
        let split = shards_per_leaf.contains(&2);
        let id_bits = depth + split as u32;
        let shards = shards_per_leaf.iter().map(|&k| k as u64).sum::<u64>();
        if !leaves.is_power_of_two()
            || !(1..=15).contains(&id_bits)
            || shards_per_leaf.iter().any(|&k| !(1..=2).contains(&k))
        {
            return Err(TreeError::BadDepth { shards });
        }
        check_fanouts(fanouts)?;
        let node = |role, tile, fanout, (subtree_shift, prefix, level_shift), level| Node {
            role,
            tile,
            parent: None,
            lane: 0,
            fanout,
            inject_lanes: 0,
            subtree_shift,
            prefix,
            level_shift,
            level,
            edge_level: level,
            route_bits: if role == Role::Router { fanout.trailing_zeros() } else { 0 },
            replica_bits: [0; MAX_FANOUT as usize],
            replica_lane: [0; MAX_FANOUT as usize],
        };
        let mut nodes: Vec<Node> = Vec::with_capacity(shards as usize);
        for (leaf, &k) in shards_per_leaf.iter().enumerate() {
            for half in 0..k as u32 {
                let id = (leaf as u32) << split as u32 | half;
                nodes.push(node(Role::Tracer, nodes.len() as u32, 0, (0, id, 0), 0));
            }
        }
        let tracers = nodes.len();
        // Level by level, each subtree as (node, its shard-id prefix above `shift`).
        let mut level: Vec<(usize, u32)> = Vec::with_capacity(leaves);
        let mut next_tracer = 0;
        for (leaf, &k) in shards_per_leaf.iter().enumerate() {
            if k == 1 {
                level.push((next_tracer, leaf as u32));
            } else {
                let id = nodes.len();
                nodes.push(Node { edge_level: 0, ..node(Role::Router, id as u32, 2, (1, leaf as u32, 0), 1) });
                for half in 0..2 {
                    nodes[next_tracer + half].parent = Some(id);
                    nodes[next_tracer + half].lane = half as u32;
                }
                level.push((id, leaf as u32));
            }
            next_tracer += k as usize;
        }
        let mut shift = split as u32;
        let mut lvl = 0;
        while shift < id_bits {
            let want = fanouts[(lvl as usize).min(fanouts.len() - 1)].trailing_zeros();
            let bits = want.min(id_bits - shift);
            let fanout = 1u32 << bits;
            lvl += 1;
            let mut next = Vec::with_capacity(level.len() / fanout as usize);
            for group in level.chunks(fanout as usize) {
                let id = nodes.len();
                let prefix = group[0].1 >> bits;
                nodes.push(node(Role::Router, id as u32, fanout, (shift + bits, prefix, shift), lvl));
                for &(c, p) in group {
                    nodes[c].parent = Some(id);
                    nodes[c].lane = p & (fanout - 1);
                }
                next.push((id, prefix));
            }
            level = next;
            shift += bits;
        }
        let root = level[0].0;
        let root_fanout = nodes[root].fanout;
        if !(1..=MAX_INJECTORS).contains(&injectors) {
            return Err(TreeError::BadInjectors(injectors));
        }
        let spill = nodes.len();
        nodes.push(node(Role::Spill, spill as u32, 1, (id_bits, 0, id_bits), lvl + 1));
        nodes[root].parent = Some(spill);
        nodes[root].lane = 0;
        nodes[root].inject_lanes = injectors;
        for i in 0..injectors {
            let id = nodes.len();
            nodes.push(Node {
                parent: Some(root),
                lane: root_fanout + i,
                ..node(Role::Injector, id as u32, 0, (id_bits, 0, id_bits), lvl + 1)
            });
        }
        let needed = nodes.len() as u64;
        if needed > tiles_available as u64 {
            return Err(TreeError::TooManyTiles {
                needed,
                tracers: tracers as u64,
                routers: needed - tracers as u64 - 1 - injectors as u64,
                injectors,
                available: tiles_available,
            });
        }
        let injectors = spill + 1..nodes.len();
        Ok(Tree { depth, id_bits, nodes, tracers, root, spill, injectors, replica_of: Vec::new(), direct: Vec::new() })
    }

    /// Tiles a tree of `2^depth` unsplit leaves leaves free on a target of
    /// `tiles_available`, halved: each split leaf takes a tracer and a router more.
    pub fn free_splits(depth: u32, tiles_available: u32, fanouts: &[u32], injectors: u32) -> usize {
        Tree::free_splits_on(depth, 1, tiles_available, fanouts, injectors)
    }

    /// As [`free_splits`](Self::free_splits) on `ipus` IPUs of `tiles_per_ipu` tiles:
    /// a split leaf's tracer and router go on its IPU, and the heaviest leaves may
    /// all be on one, so the IPU with the fewest free tiles decides.
    pub fn free_splits_on(depth: u32, ipus: u32, tiles_per_ipu: u32, fanouts: &[u32], injectors: u32) -> usize {
        let Ok(mut t) = Tree::new(depth, tiles_per_ipu.saturating_mul(ipus), fanouts, injectors) else { return 0 };
        if t.place_on_ipus(ipus, tiles_per_ipu).is_err() {
            return 0;
        }
        let used = t.tiles_per_ipu_used(ipus, tiles_per_ipu);
        used.iter().map(|&u| (tiles_per_ipu as usize).saturating_sub(u) / 2).min().unwrap_or(0)
    }

    /// The IPU a node goes on when shard ids' top `log2(ipus)` bits choose the IPU:
    /// tracers and routers on their subtree's first IPU (a router whose subtree spans
    /// IPUs, as the root does, on the first of them), the spill store and the
    /// injectors on IPU 0 beside the root, whose lanes they use.
    pub fn ipu_of(&self, node: usize, ipus: u32) -> u32 {
        let bits = ipus.trailing_zeros();
        let n = &self.nodes[node];
        if bits == 0 || matches!(n.role, Role::Spill | Role::Injector) {
            return 0;
        }
        ipu_of_id((n.prefix as u64) << n.subtree_shift, self.id_bits, ipus)
    }

    /// Numbers the tiles across `ipus` IPUs of `tiles_per_ipu` as Poplar does (IPU
    /// i's tiles are `i * tiles_per_ipu ..`), each node on [`ipu_of`](Self::ipu_of)'s
    /// IPU in node order there. The k-d tree's top levels split the scene between the
    /// IPUs, so a ray crossing between shards stays on its chip unless it crosses one
    /// of those few planes. On one IPU every node keeps tile = its index.
    pub fn place_on_ipus(&mut self, ipus: u32, tiles_per_ipu: u32) -> Result<(), TreeError> {
        let leaves = 1u64 << self.depth;
        if !ipus.is_power_of_two() || ipus > MAX_IPUS || ipus as u64 > leaves {
            return Err(TreeError::BadIpus { ipus, leaves });
        }
        let mut next = vec![0u32; ipus as usize];
        for i in 0..self.nodes.len() {
            let ipu = self.ipu_of(i, ipus);
            self.nodes[i].tile = ipu * tiles_per_ipu + next[ipu as usize];
            next[ipu as usize] += 1;
        }
        if let Some(ipu) = (0..ipus).find(|&k| next[k as usize] > tiles_per_ipu) {
            let tracers = (0..self.tracers).filter(|&i| self.ipu_of(i, ipus) == ipu).count() as u64;
            let needed = next[ipu as usize] as u64;
            return Err(TreeError::IpuFull {
                ipu,
                needed,
                tracers,
                others: needed - tracers,
                available: tiles_per_ipu,
            });
        }
        Ok(())
    }

    /// Tiles each IPU's nodes take (after [`place_on_ipus`](Self::place_on_ipus)).
    pub fn tiles_per_ipu_used(&self, ipus: u32, tiles_per_ipu: u32) -> Vec<usize> {
        let mut used = vec![0usize; ipus as usize];
        for n in &self.nodes {
            used[((n.tile / tiles_per_ipu) as usize).min(ipus as usize - 1)] += 1;
        }
        used
    }

    pub fn tracers(&self) -> usize {
        self.tracers
    }

    pub fn routers(&self) -> impl Iterator<Item = &Node> {
        self.nodes.iter().filter(|n| n.role == Role::Router)
    }

    pub fn spill(&self) -> usize {
        self.spill
    }

    pub fn root(&self) -> usize {
        self.root
    }

    /// Node indices of the injectors, in lane order.
    pub fn injectors(&self) -> std::ops::Range<usize> {
        self.injectors.clone()
    }

    /// The shard a tracer node holds: tracer `s` holds shard `s`, a replica the
    /// shard it replicates. `None` for other roles.
    pub fn shard_of(&self, node: usize) -> Option<usize> {
        if node < self.tracers {
            return Some(node);
        }
        self.replica_of.iter().find(|&&(n, _)| n == node).map(|&(_, s)| s)
    }

    /// Every tracer node (originals in shard order, then replicas in node order) and
    /// the shard it holds: the order the graph reads their slices and result stores.
    pub fn tracer_nodes(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        (0..self.tracers).map(|s| (s, s)).chain(self.replica_of.iter().copied())
    }

    /// Replica tracer nodes and the shard each replicates.
    pub fn replicas(&self) -> &[(usize, usize)] {
        &self.replica_of
    }

    /// Each shard's tracer nodes: its tracer (child 0 of a replicas' router) first,
    /// then its replicas in lane order.
    pub fn shard_tiles(&self) -> Vec<Vec<usize>> {
        let mut tiles: Vec<Vec<usize>> = (0..self.tracers).map(|s| vec![s]).collect();
        let mut replicas = self.replica_of.clone();
        replicas.sort_by_key(|&(n, s)| (s, self.nodes[n].lane));
        for (n, s) in replicas {
            tiles[s].push(n);
        }
        tiles
    }

    /// Puts `count` tiles in shard `shard`'s place, each holding it: a router of
    /// `count` children (a power of two, 2..=FOAM_MAX_FANOUT) takes the tracer's lane
    /// at its parent, with the tracer as its child 0 and `count - 1` replica tracers
    /// on new tiles after it. The router reads the same shard id as the tracer did,
    /// so no other router changes; below it a ray goes to the replica its pixel
    /// picks (layout.h foam_params.replicas). `tiles_available` bounds the tiles.
    pub fn replicate(&mut self, shard: usize, count: u32, tiles_available: u32) -> Result<(), TreeError> {
        self.check_replicas(shard, count, 1, tiles_available)?;
        let tracer = self.nodes[shard].clone();
        let id = tracer.prefix;
        let router = self.nodes.len();
        let mut replica_bits = [0u8; MAX_FANOUT as usize];
        let mut replica_lane = [0u8; MAX_FANOUT as usize];
        (replica_bits[0], replica_lane[0]) = (count.trailing_zeros() as u8, 1);
        self.nodes.push(Node {
            role: Role::Router,
            tile: router as u32,
            fanout: count,
            subtree_shift: 0,
            prefix: id,
            level_shift: 0,
            level: 1,
            edge_level: 0,
            route_bits: 0,
            replica_bits,
            replica_lane,
            ..tracer.clone()
        });
        self.nodes[shard].parent = Some(router);
        self.nodes[shard].lane = 0;
        for lane in 1..count {
            let node = self.nodes.len();
            self.nodes.push(Node { tile: node as u32, parent: Some(router), lane, ..tracer.clone() });
            self.replica_of.push((node, shard));
        }
        Ok(())
    }

    /// Puts `count - 1` replica tracers of shard `shard` (`count` a power of two,
    /// 2..=FOAM_MAX_FANOUT) on new tiles, on lanes of the tracer's own router after
    /// its children and the replicas it has: no router of their own, so they cost a
    /// tile each and a ray reaches them in the hops it takes to the tracer. The
    /// router sends a ray bound for the shard to the tile its pixel picks (layout.h
    /// foam_params.replica_bits), pick 0 the tracer. At most FOAM_MAX_LANES child
    /// lanes a router; `tiles_available` bounds the tiles.
    pub fn replicate_on_lanes(&mut self, shard: usize, count: u32, tiles_available: u32) -> Result<(), TreeError> {
        self.check_replicas(shard, count, 0, tiles_available)?;
        let parent = self.nodes[shard].parent.expect("tracers have parents");
        let child = self.nodes[shard].lane as usize;
        let p = &self.nodes[parent];
        if p.fanout + count - 1 > MAX_LANES || p.replica_bits[child] != 0 {
            return Err(TreeError::NoLanes { router: parent, lanes: p.fanout, more: count - 1 });
        }
        let first = p.fanout;
        let tracer = self.nodes[shard].clone();
        let p = &mut self.nodes[parent];
        (p.replica_bits[child], p.replica_lane[child]) = (count.trailing_zeros() as u8, first as u8);
        p.fanout += count - 1;
        // The root's injector lanes come after its child lanes.
        if parent == self.root {
            for i in self.injectors.clone() {
                self.nodes[i].lane += count - 1;
            }
        }
        for k in 0..count - 1 {
            let node = self.nodes.len();
            self.nodes.push(Node { tile: node as u32, lane: first + k, ..tracer.clone() });
            self.replica_of.push((node, shard));
        }
        Ok(())
    }

    /// Whether `count` tiles of shard `shard` (`count - 1` replicas and `routers` new
    /// routers) are a replication [`replicate`](Self::replicate) and
    /// [`replicate_on_lanes`](Self::replicate_on_lanes) make: a power of two from 2
    /// to FOAM_MAX_FANOUT tiles of a tracer's shard, within `tiles_available`.
    fn check_replicas(&self, shard: usize, count: u32, routers: u32, tiles_available: u32) -> Result<(), TreeError> {
        if !(2..=MAX_FANOUT).contains(&count) || !count.is_power_of_two() || shard >= self.tracers {
            return Err(TreeError::BadFanout(count));
        }
        let needed = self.nodes.len() as u64 + (count - 1 + routers) as u64;
        if needed > tiles_available as u64 {
            return Err(TreeError::TooManyTiles {
                needed,
                tracers: (self.tracers + self.replica_of.len()) as u64 + count as u64 - 1,
                routers: self.routers().count() as u64 + routers as u64,
                injectors: self.injectors.len() as u32,
                available: tiles_available,
            });
        }
        Ok(())
    }

    /// Whether tracer node `node` is a replica on lanes of a router of the tree (one
    /// that routes by shard-id bits: [`replicate_on_lanes`](Self::replicate_on_lanes)),
    /// not under a router of its shard's tiles ([`replicate`](Self::replicate)).
    pub fn on_router_lanes(&self, node: usize) -> bool {
        self.replica_of.iter().any(|&(n, _)| n == node)
            && self.nodes[node].parent.is_some_and(|p| self.nodes[p].route_bits > 0)
    }

    /// Child lanes router `router` has left for replicas up to `most` (at most
    /// FOAM_MAX_LANES).
    pub fn lanes_left(&self, router: usize, most: u32) -> u32 {
        most.min(MAX_LANES).saturating_sub(self.nodes[router].fanout)
    }

    /// Gives every injector a direct lane to every router under the root, which
    /// carries primary rays past the root ([`Self::keep_direct_lanes`] keeps fewer).
    /// A root with tracers among its children gets none: direct lanes lead to routers
    /// (a tracer under the root is a root's lane away).
    pub fn add_direct_lanes(&mut self) {
        let children: Vec<u32> = (0..self.nodes[self.root].fanout).collect();
        self.keep_direct_lanes(vec![children; self.injectors.len()]);
    }

    /// Keeps each injector's direct lanes to the routers under the root at lanes
    /// `lanes[j]` (ascending) of it, and gives each of those routers a lane per
    /// injector that keeps one to it. Without direct lanes (or with tracers under
    /// the root), none.
    pub fn keep_direct_lanes(&mut self, lanes: Vec<Vec<u32>>) {
        let root = self.root;
        if lanes.is_empty() || self.nodes.iter().any(|n| n.parent == Some(root) && n.role == Role::Tracer) {
            return;
        }
        debug_assert!(lanes.len() == self.injectors.len() && lanes.iter().all(|l| l.is_sorted()));
        for n in self.nodes.iter_mut().filter(|n| n.parent == Some(root) && n.role == Role::Router) {
            n.inject_lanes = lanes.iter().filter(|l| l.contains(&n.lane)).count() as u32;
        }
        self.direct = lanes;
    }

    /// Each injector's direct lanes, by the lane at the root of the router each
    /// leads to (empty without direct lanes).
    pub fn direct_lanes(&self) -> &[Vec<u32>] {
        &self.direct
    }

    /// The routers under the root that take direct lanes, by their lane at the root
    /// (empty without direct lanes).
    pub fn direct_targets(&self) -> Vec<usize> {
        if self.direct.is_empty() {
            return Vec::new();
        }
        let mut under: Vec<usize> = (0..self.nodes.len())
            .filter(|&i| self.nodes[i].parent == Some(self.root) && self.nodes[i].role == Role::Router)
            .collect();
        under.sort_by_key(|&i| self.nodes[i].lane);
        under
    }

    /// Router hops on the tree path between two tracers (up to the lowest common
    /// router and down again): the minimum a ray pays to move between shards.
    pub fn path_hops(&self, a: u32, b: u32) -> u32 {
        let height = |mut x: usize| {
            let mut h = 0;
            while let Some(p) = self.nodes[x].parent {
                x = p;
                h += 1;
            }
            h
        };
        let (mut x, mut y) = (a as usize, b as usize);
        let (mut hx, mut hy) = (height(x), height(y));
        let mut hops = 0u32;
        // Routers passed: climbing from x and from y to the lowest common router,
        // which both climbs reach (counted once).
        while x != y {
            if hx >= hy {
                x = self.nodes[x].parent.expect("tracers have parents");
                hx -= 1;
            } else {
                y = self.nodes[y].parent.expect("tracers have parents");
                hy -= 1;
            }
            hops += 1;
        }
        hops.saturating_sub(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paper_tree_has_341_routers_in_five_levels() {
        let t = Tree::new(10, 1472, &[4], 1).unwrap();
        let per_level: Vec<usize> = (1..=5).map(|l| t.routers().filter(|n| n.level == l).count()).collect();
        assert_eq!(per_level, vec![256, 64, 16, 4, 1]);
        assert_eq!(t.nodes.len(), 1024 + 341 + 1 + 1);
        assert!(t.routers().all(|n| n.fanout == 4));
    }

    #[test]
    fn odd_depth_root_has_two_children() {
        let t = Tree::new(5, 1472, &[4], 2).unwrap();
        let root = &t.nodes[t.root()];
        assert_eq!((root.fanout, root.subtree_shift, root.prefix), (2, 5, 0));
        assert_eq!(t.routers().count(), 8 + 2 + 1);
        let t1 = Tree::new(1, 16, &[4], 1).unwrap();
        assert_eq!(t1.nodes[t1.root()].fanout, 2);
        assert_eq!(t1.nodes.len(), 5);
    }

    #[test]
    fn every_shard_routes_down_from_the_root_to_its_tracer() {
        for depth in 1..=8 {
            let t = Tree::new(depth, 1 << 20, &[4], 1).unwrap();
            for s in 0..(1u32 << depth) {
                let mut at = t.root();
                while t.nodes[at].role == Role::Router {
                    let n = &t.nodes[at];
                    assert_eq!(s >> n.subtree_shift, n.prefix);
                    let lane = (s >> n.level_shift) & ((1 << n.route_bits) - 1);
                    at = t.nodes.iter().position(|c| c.parent == Some(at) && c.lane == lane).unwrap();
                }
                assert_eq!(t.nodes[at].tile, s);
            }
        }
    }

    #[test]
    fn siblings_share_the_first_router() {
        let t = Tree::new(10, 1472, &[4], 1).unwrap();
        assert_eq!(t.path_hops(0, 1), 1);
        assert_eq!(t.path_hops(0, 4), 3);
        assert_eq!(t.path_hops(0, 1023), 9);
    }

    #[test]
    fn wide_routers_take_four_bits_per_level() {
        let t = Tree::new(10, 1472, &[16], 8).unwrap();
        let per_level: Vec<(usize, u32)> = (1..=3)
            .map(|l| {
                let r: Vec<_> = t.routers().filter(|n| n.level == l).collect();
                (r.len(), r[0].fanout)
            })
            .collect();
        assert_eq!(per_level, vec![(64, 16), (4, 16), (1, 4)]);
        assert_eq!(t.path_hops(0, 15), 1);
        assert_eq!(t.path_hops(0, 16), 3);
        assert_eq!(t.path_hops(0, 1023), 5);
        let mixed = Tree::new(10, 1472, &[16, 8], 8).unwrap();
        assert_eq!(mixed.routers().map(|n| n.fanout).filter(|&f| f == 8).count(), 8 + 1);
        for bad in [&[3u32][..], &[32], &[1], &[]] {
            assert!(Tree::new(10, 1472, bad, 1).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn too_many_tiles_is_an_error() {
        let e = Tree::new(11, 1472, &[4], 1).unwrap_err();
        assert!(e.to_string().contains("the target has 1472"), "{e}");
        assert!(Tree::new(0, 1472, &[4], 1).is_err());
        // Shard 0xFFFF would read as an empty slot.
        assert!(Tree::new(16, u32::MAX, &[4], 1).unwrap_err().to_string().contains("32,768"));
        // At least one injector, at most 512, beside any root.
        let e = Tree::new(9, 1472, &[16, 8], 513).unwrap_err();
        assert!(e.to_string().contains("1 to 512 injector lanes"), "{e}");
        assert!(Tree::new(10, 1472, &[16, 8], 0).is_err());
        let t = Tree::new(10, 1472, &[16, 8], 8).unwrap();
        assert_eq!(t.nodes.len(), 1024 + 73 + 1 + 8);
        let root = &t.nodes[t.root()];
        assert_eq!((root.fanout, root.inject_lanes, root.parent), (8, 8, Some(t.spill())));
        let lanes: Vec<u32> = t.injectors().map(|i| t.nodes[i].lane).collect();
        assert_eq!(lanes, (8..16).collect::<Vec<u32>>());
        assert!(t.injectors().all(|i| t.nodes[i].role == Role::Injector && t.nodes[i].parent == Some(t.root())));
        let t = Tree::new(4, 1472, &[16], 8).unwrap();
        assert_eq!(t.nodes[t.root()].fanout + t.nodes[t.root()].inject_lanes, 24);
    }

    /// Walks down from the root by shard-id bits, as the router codelets do.
    fn route_down(t: &Tree, id: u32) -> usize {
        let mut at = t.root();
        while t.nodes[at].role == Role::Router {
            let n = &t.nodes[at];
            assert_eq!(id >> n.subtree_shift, n.prefix, "id {id} routed into the wrong subtree");
            let lane = (id >> n.level_shift) & ((1 << n.route_bits) - 1);
            at = t
                .nodes
                .iter()
                .position(|c| c.parent == Some(at) && c.lane == lane && c.role != Role::Injector)
                .unwrap();
        }
        at
    }

    #[test]
    fn split_leaves_hang_off_routers_of_two_and_ids_gain_a_bit() {
        // 64 leaves, every third split in two.
        let per: Vec<u8> = (0..64).map(|l| if l % 3 == 0 { 2 } else { 1 }).collect();
        let t = Tree::with_leaves(&per, 1472, &[16, 8], 8).unwrap();
        assert_eq!((t.depth, t.id_bits, t.tracers()), (6, 7, 64 + 22));
        let ids: Vec<u32> = (0..t.tracers()).map(|i| t.nodes[i].prefix).collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "tracers in id order");
        assert_eq!(&ids[..4], &[0, 1, 2, 4]);
        for (i, &id) in ids.iter().enumerate() {
            assert_eq!((t.nodes[i].role, t.nodes[i].tile), (Role::Tracer, i as u32));
            assert_eq!(route_down(&t, id), i);
        }
        let pairs: Vec<&Node> = t.routers().filter(|n| n.fanout == 2).collect();
        assert_eq!(pairs.len(), 22);
        assert!(pairs.iter().all(|n| (n.level, n.edge_level, n.level_shift, n.subtree_shift) == (1, 0, 0, 1)));
        assert!(t.routers().filter(|n| n.fanout != 2).all(|n| n.edge_level == n.level && n.level_shift >= 1));
        // The halves of leaf 0 are one router apart; leaf 1 is one more away from them.
        assert_eq!(t.path_hops(0, 1), 1);
        assert_eq!(t.path_hops(0, 2), 2);
        assert_eq!(t.path_hops(2, 3), 1);
        assert_eq!(t.path_hops(2, 0), t.path_hops(0, 2));
        // 64 tracers + 4 + 1 routers, spill store, 8 injectors: the rest is free.
        assert_eq!(Tree::free_splits(6, 1472, &[16, 8], 8), (1472 - 78) / 2);
        assert_eq!(Tree::free_splits(10, 1472, &[16, 8], 8), (1472 - 1106) / 2);
        let e = Tree::with_leaves(&vec![2; 1024], 1472, &[16, 8], 8).unwrap_err();
        assert!(e.to_string().contains("the target has 1472"), "{e}");
        assert!(Tree::with_leaves(&[1, 3], 1472, &[16], 1).is_err());
        // Unsplit leaves give the tree of `new`.
        assert_eq!(
            Tree::with_leaves(&[1; 1024], 1472, &[16, 8], 8).unwrap().nodes,
            Tree::new(10, 1472, &[16, 8], 8).unwrap().nodes
        );
    }

    #[test]
    fn top_bits_choose_the_ipu_and_tiles_are_numbered_across_ipus() {
        let mut t = Tree::new(11, 2 * 1472, &[16, 8, 16], 8).unwrap();
        t.place_on_ipus(2, 1472).unwrap();
        assert_eq!(t.tiles_per_ipu_used(2, 1472), vec![1024 + 64 + 8 + 1 + 1 + 8, 1024 + 64 + 8]);
        for (i, n) in t.nodes.iter().enumerate() {
            let ipu = match n.role {
                Role::Tracer => n.prefix >> 10,
                Role::Router if n.subtree_shift <= 10 => n.prefix >> (10 - n.subtree_shift),
                _ => 0,
            };
            assert_eq!((n.tile / 1472, t.ipu_of(i, 2)), (ipu, ipu), "node {i}: {n:?}");
        }
        let mut tiles: Vec<u32> = t.nodes.iter().map(|n| n.tile).collect();
        tiles.sort();
        tiles.dedup();
        assert_eq!(tiles.len(), t.nodes.len(), "one node per tile");
        // One IPU: every node keeps tile = its index.
        let mut one = Tree::new(10, 1472, &[16, 8], 8).unwrap();
        one.place_on_ipus(1, 1472).unwrap();
        assert_eq!(one.nodes, Tree::new(10, 1472, &[16, 8], 8).unwrap().nodes);
        // IPU 0 also holds the root, spill store and injectors, so it has the fewest free tiles.
        assert_eq!(Tree::free_splits_on(11, 2, 1472, &[16, 8, 16], 8), (1472 - 1106) / 2);
        let e = t.clone().place_on_ipus(2, 1100).unwrap_err();
        assert!(
            e.to_string()
                .contains("IPU 0 needs 1106 tiles (1024 tracers, 82 routers, spill store and injectors) but has 1100"),
            "{e}"
        );
        for bad in [3, 32] {
            assert!(t.clone().place_on_ipus(bad, 1472).unwrap_err().to_string().contains(&format!("{bad} IPUs")));
        }
        assert!(Tree::new(1, 1472, &[16], 1).unwrap().place_on_ipus(4, 1472).is_err(), "more IPUs than leaves");
    }

    #[test]
    fn replicas_take_their_tracers_place_under_a_router_of_their_own() {
        let mut t = Tree::new(6, 1472, &[16, 8], 8).unwrap();
        let before = t.clone();
        t.replicate(5, 4, 1472).unwrap();
        assert_eq!(t.nodes.len(), before.nodes.len() + 4, "a router and three replicas");
        assert_eq!(
            (t.injectors(), t.root(), t.spill(), t.tracers()),
            (before.injectors(), before.root(), before.spill(), 64)
        );
        let r = t.nodes[5].parent.unwrap();
        let router = &t.nodes[r];
        assert_eq!(
            (router.role, router.fanout, router.route_bits, router.prefix, router.subtree_shift),
            (Role::Router, 4, 0, 5, 0)
        );
        assert_eq!((router.replica_bits[0], router.replica_lane[0]), (2, 1));
        assert_eq!(
            (router.parent, router.lane, router.edge_level, router.tile),
            (before.nodes[5].parent, 5, 0, r as u32)
        );
        assert_eq!((t.nodes[5].lane, t.nodes[5].tile), (0, 5));
        let replicas: Vec<(usize, usize)> = (1..4).map(|k| (r + k, 5)).collect();
        assert_eq!(t.replicas(), &replicas[..]);
        for (k, &(n, _)) in replicas.iter().enumerate() {
            let node = &t.nodes[n];
            assert_eq!(
                (node.role, node.prefix, node.parent, node.lane, node.tile),
                (Role::Tracer, 5, Some(r), k as u32 + 1, n as u32)
            );
        }
        assert_eq!(t.tracer_nodes().count(), 64 + 3);
        assert!(replicas.iter().all(|&(n, _)| !t.on_router_lanes(n)));
        assert_eq!((t.shard_of(5), t.shard_of(r + 2), t.shard_of(r)), (Some(5), Some(5), None));
        // Every other node is as it was.
        assert!((0..before.nodes.len()).filter(|&i| i != 5).all(|i| t.nodes[i] == before.nodes[i]));
        // A power of two from 2 to 16 tiles, within the target.
        for bad in [1, 3, 32] {
            assert!(t.replicate(6, bad, 1472).is_err(), "{bad}");
        }
        let e = t.replicate(6, 2, t.nodes.len() as u32 + 1).unwrap_err();
        assert!(e.to_string().contains("the target has"), "{e}");
    }

    #[test]
    fn replicas_on_lanes_take_a_tile_each_after_their_routers_children() {
        let mut t = Tree::new(10, 1472, &[16, 8], 8).unwrap();
        let before = t.clone();
        let r = t.nodes[5].parent.unwrap();
        t.replicate_on_lanes(5, 4, 1472).unwrap();
        t.replicate_on_lanes(7, 2, 1472).unwrap();
        assert_eq!(t.nodes.len(), before.nodes.len() + 3 + 1, "one tile a replica, no router");
        assert_eq!(t.routers().count(), before.routers().count());
        let router = &t.nodes[r];
        assert_eq!((router.fanout, router.route_bits), (16 + 4, 4));
        assert_eq!(
            (router.replica_bits[5], router.replica_lane[5], router.replica_bits[7], router.replica_lane[7]),
            (2, 16, 1, 19)
        );
        let lanes: Vec<(u32, usize)> = t.replicas().iter().map(|&(n, s)| (t.nodes[n].lane, s)).collect();
        assert_eq!(lanes, vec![(16, 5), (17, 5), (18, 5), (19, 7)]);
        assert!(t.replicas().iter().all(|&(n, s)| t.nodes[n].parent == Some(r) && t.nodes[n].prefix == s as u32));
        assert!(t.replicas().iter().all(|&(n, _)| t.on_router_lanes(n)) && !t.on_router_lanes(5));
        assert_eq!(t.shard_tiles()[5], vec![5, before.nodes.len(), before.nodes.len() + 1, before.nodes.len() + 2]);
        // A replica is one router away from its tracer, as from the tracer's siblings.
        let replica = before.nodes.len();
        assert_eq!((t.path_hops(5, replica as u32), t.path_hops(6, replica as u32)), (1, 1));
        // Every child's bits still route it; 32 lanes at most, a shard once.
        for s in 0..1024 {
            assert_eq!(route_down(&t, s), s as usize);
        }
        assert!(matches!(t.replicate_on_lanes(5, 2, 1472), Err(TreeError::NoLanes { .. })));
        t.replicate_on_lanes(0, 8, 1472).unwrap();
        assert_eq!((t.lanes_left(r, 32), t.lanes_left(r, 28), t.lanes_left(r, 16)), (5, 1, 0));
        let e = t.replicate_on_lanes(1, 8, 1472).unwrap_err();
        assert!(e.to_string().contains("27 child lanes: 7 more for replicas would pass 32"), "{e}");
        // Replicas on a root's lanes move its injector lanes after them.
        let mut small = Tree::new(3, 1472, &[16], 2).unwrap();
        small.replicate_on_lanes(2, 2, 1472).unwrap();
        let inj: Vec<u32> = small.injectors().map(|i| small.nodes[i].lane).collect();
        assert_eq!((small.nodes[small.root()].fanout, inj), (9, vec![9, 10]));
    }

    #[test]
    fn direct_lanes_reach_every_router_under_the_root() {
        let mut t = Tree::new(10, 1472, &[16, 8], 8).unwrap();
        assert!(t.direct_targets().is_empty());
        t.add_direct_lanes();
        let under = t.direct_targets();
        assert_eq!(under.len(), 8);
        for (k, &r) in under.iter().enumerate() {
            let n = &t.nodes[r];
            assert_eq!((n.role, n.parent, n.lane, n.inject_lanes), (Role::Router, Some(t.root()), k as u32, 8));
        }
        // Only the routers under the root: the level-1 routers keep none.
        assert_eq!(t.routers().filter(|n| n.inject_lanes > 0).count(), 1 + 8);
        assert!(t.direct_lanes().iter().all(|l| *l == (0..8).collect::<Vec<u32>>()));
        // Fewer kept: each router hears the injectors that keep a lane to it, and
        // one that none keeps is still a direct target (its lane at the root fixed).
        let mut kept = vec![vec![2]; 8];
        kept[0] = vec![0, 2, 7];
        t.keep_direct_lanes(kept);
        let heard: Vec<u32> = under.iter().map(|&r| t.nodes[r].inject_lanes).collect();
        assert_eq!((heard, t.direct_targets()), (vec![1, 0, 8, 0, 0, 0, 0, 1], under));
        // A root over tracers has no routers under it to reach, nor one over tracers
        // and the routers of split leaves.
        let mut small = Tree::new(4, 1472, &[16], 3).unwrap();
        small.add_direct_lanes();
        assert!(small.direct_targets().is_empty());
        let mut split = Tree::with_leaves(&[1, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1], 1472, &[16], 3).unwrap();
        split.add_direct_lanes();
        assert!(
            split.direct_targets().is_empty()
                && split.routers().all(|n| n.inject_lanes == 0 || n.parent == Some(split.spill()))
        );
    }
}
