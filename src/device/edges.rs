//! The links of the device as the render spec's typed edges (codelets/graph/spec.h):
//! tree edges from the router tree, side links between tracers, and each injector's
//! lane to the root and direct lanes to the routers under it. Every edge names the
//! lane it takes at either end and its buffers' capacity; the graph builder derives
//! each tile's lanes from them.

use poplar_bridge::RenderEdge;

use super::options::DeviceOptions;
use super::tree::{Role, Tree};

/// What an edge joins (codelets/graph/spec.h EdgeKind).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum EdgeKind {
    /// Child (tracer, router) to parent (router; the spill store above the root).
    Tree = 0,
    /// Tracer to tracer.
    Side = 1,
    /// An injector's lane to the root.
    Injector = 2,
    /// An injector's lane to a router under the root.
    Direct = 3,
}

impl EdgeKind {
    pub fn of(edge: &RenderEdge) -> EdgeKind {
        match edge.kind {
            0 => EdgeKind::Tree,
            1 => EdgeKind::Side,
            2 => EdgeKind::Injector,
            _ => EdgeKind::Direct,
        }
    }
}

fn edge(kind: EdgeKind, (from, from_lane): (usize, u32), (to, to_lane): (usize, u32), capacity: u32) -> RenderEdge {
    RenderEdge { kind: kind as u8, from: from as u32, to: to as u32, from_lane, to_lane, capacity }
}

/// Rays a buffer of each router's child lanes holds where the router has replicas
/// on lanes of its own ([`Tree::replicate_on_lanes`]), by node (other nodes: 0, the
/// planned capacity). The exchange costs a step what the busiest tile moves, so such
/// a router's lanes take the planned capacity where its buffers stay within the
/// most any router's buffers hold without replica lanes, and the largest multiple
/// of 16 rays that does otherwise (at least 16): the replicas' tiles then cost no
/// exchange time, only their router's lanes' smaller bursts.
fn replica_lane_capacities(tree: &Tree, o: &DeviceOptions, ray_bytes: u32) -> Vec<u32> {
    let injectors = tree.injectors().len() as u32;
    let (inject, direct) = (o.inject_lane_capacity(injectors), o.direct_lane_capacity(injectors));
    let mut children = vec![None; tree.nodes.len()];
    for n in &tree.nodes {
        if let Some(p) = n.parent.filter(|_| n.role != Role::Injector) {
            children[p] = Some(o.edge_capacity(n.edge_level));
        }
    }
    let bytes = |i: usize, lanes: u32, child: u32| {
        let n = &tree.nodes[i];
        let inject = if i == tree.root() { inject } else { direct };
        let parent = o.edge_capacity(n.edge_level);
        super::options::router_link_bytes(ray_bytes, lanes, child, parent, n.inject_lanes, inject).unwrap_or(u32::MAX)
    };
    let on_lanes = |n: &super::tree::Node| n.role == Role::Router && n.route_bits > 0 && n.fanout > 1 << n.route_bits;
    let routers = || (0..tree.nodes.len()).filter(|&i| tree.nodes[i].role == Role::Router && children[i].is_some());
    let budget = routers()
        .map(|i| {
            let n = &tree.nodes[i];
            let lanes = if on_lanes(n) { 1 << n.route_bits } else { n.fanout };
            bytes(i, lanes, children[i].unwrap())
        })
        .max()
        .unwrap_or(0);
    let mut out = vec![0; tree.nodes.len()];
    for i in routers().filter(|&i| on_lanes(&tree.nodes[i])) {
        let mut c = children[i].unwrap();
        while c > 16 && bytes(i, tree.nodes[i].fanout, c) > budget {
            c = (c - 1) / 16 * 16;
        }
        out[i] = c;
    }
    out
}

/// Every edge of `tree` with tracers joined by side links to `sides[a]` (symmetric,
/// in lane order), buffers sized by `o`: tree edges by the level of their lower end,
/// injector lanes and direct lanes (those [`Tree::direct_lanes`] keeps) at their own
/// capacities.
pub fn edges(tree: &Tree, sides: &[Vec<u32>], o: &DeviceOptions, ray_bytes: u32) -> Vec<RenderEdge> {
    let mut out = Vec::new();
    let narrowed = replica_lane_capacities(tree, o, ray_bytes);
    let root = tree.root();
    let injectors = tree.injectors().len() as u32;
    let (inject, direct_capacity) = (o.inject_lane_capacity(injectors), o.direct_lane_capacity(injectors));
    for (i, n) in tree.nodes.iter().enumerate() {
        let Some(parent) = n.parent else { continue };
        match n.role {
            Role::Injector => {
                let lane = n.lane - tree.nodes[root].fanout;
                out.push(edge(EdgeKind::Injector, (i, 0), (parent, lane), inject));
            }
            _ => {
                let capacity = if narrowed[parent] > 0 { narrowed[parent] } else { o.edge_capacity(n.edge_level) };
                out.push(edge(EdgeKind::Tree, (i, 0), (parent, n.lane), capacity));
            }
        }
    }
    for (a, lanes) in sides.iter().enumerate() {
        for (k, &b) in lanes.iter().enumerate().filter(|&(_, &b)| a < b as usize) {
            let back = sides[b as usize].iter().position(|&x| x as usize == a).expect("side links are symmetric");
            out.push(edge(EdgeKind::Side, (a, k as u32), (b as usize, back as u32), o.side_capacity));
        }
    }
    // A router's lanes from injectors go in injector order, an injector's in the
    // order of the routers they lead to.
    let under = tree.direct_targets();
    let mut heard = vec![0u32; under.len()];
    for (i, lanes) in tree.injectors().zip(tree.direct_lanes()) {
        for (k, &child) in lanes.iter().enumerate() {
            let c = child as usize;
            out.push(edge(EdgeKind::Direct, (i, k as u32), (under[c], heard[c]), direct_capacity));
            heard[c] += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_lane_of_the_tree_is_an_edge_once() {
        let mut tree = Tree::new(10, 1472, &[16, 8], 8).unwrap();
        tree.add_direct_lanes();
        let mut sides = vec![Vec::new(); 1024];
        sides[3] = vec![17, 500];
        sides[17] = vec![3];
        sides[500] = vec![3];
        let o = DeviceOptions { link_capacity: vec![64, 768, 384], ..DeviceOptions::default() };
        let e = edges(&tree, &sides, &o, 20);
        let count = |k: EdgeKind| e.iter().filter(|x| EdgeKind::of(x) == k).count();
        // Every node but the spill store has one edge up; 8 injectors × 8 direct lanes.
        assert_eq!(count(EdgeKind::Tree), tree.nodes.len() - 1 - 8);
        assert_eq!((count(EdgeKind::Injector), count(EdgeKind::Direct), count(EdgeKind::Side)), (8, 64, 2));
        let side: Vec<_> = e
            .iter()
            .filter(|x| EdgeKind::of(x) == EdgeKind::Side)
            .map(|x| (x.from, x.from_lane, x.to, x.to_lane))
            .collect();
        assert_eq!(side, vec![(3, 0, 17, 0), (3, 1, 500, 0)]);
        // Tracer edges take the tracer level's capacity, the root's edge the top's.
        assert!(
            e.iter()
                .filter(|x| (x.from as usize) < 1024 && EdgeKind::of(x) == EdgeKind::Tree)
                .all(|x| x.capacity == 64)
        );
        let top = e.iter().find(|x| x.from as usize == tree.root()).unwrap();
        assert_eq!((top.to as usize, top.capacity), (tree.spill(), 384));
        let lanes: Vec<u32> = e.iter().filter(|x| EdgeKind::of(x) == EdgeKind::Injector).map(|x| x.to_lane).collect();
        assert_eq!(lanes, (0..8).collect::<Vec<u32>>());
    }

    #[test]
    fn direct_lanes_lead_where_the_tree_keeps_them_and_routers_hear_them_in_injector_order() {
        let mut tree = Tree::new(10, 1472, &[16, 8], 3).unwrap();
        tree.add_direct_lanes();
        tree.keep_direct_lanes(vec![vec![1, 5], vec![], vec![0, 5]]);
        let (under, injectors): (Vec<usize>, Vec<usize>) = (tree.direct_targets(), tree.injectors().collect());
        let e = edges(&tree, &vec![Vec::new(); 1024], &DeviceOptions::default(), 20);
        let direct: Vec<_> = e
            .iter()
            .filter(|x| EdgeKind::of(x) == EdgeKind::Direct)
            .map(|x| (x.from as usize, x.from_lane, x.to as usize, x.to_lane))
            .collect();
        let want = vec![
            (injectors[0], 0, under[1], 0),
            (injectors[0], 1, under[5], 0),
            (injectors[2], 0, under[0], 0),
            (injectors[2], 1, under[5], 1),
        ];
        assert_eq!(direct, want);
    }
}
