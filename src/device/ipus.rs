//! How a plan spreads over the IPUs of its target: each IPU's tiles and bytes, and the
//! link buffers the exchange copies between IPUs every iteration. The exchange is one
//! static `Copy` of every link buffer whole, so what crosses the IPU-Links per
//! iteration is fixed by the plan, whatever the rays do.

use std::mem::size_of;

use poplar_bridge::RenderEdge;
use serde::Serialize;

use super::edges::EdgeKind;
use super::{DeviceError, DevicePlan};

/// Bytes of a link header: all an injector's lane carries back up.
pub const LINK_HEADER_BYTES: u64 = size_of::<foam_layout::foam_link_header>() as u64;

/// Bytes the exchange copies over edge `e` each iteration: the `from` end's buffer
/// to `to`, and `to`'s back (an injector's lanes carry only a header back).
pub fn edge_bytes(e: &RenderEdge, ray_bytes: u32) -> [u64; 2] {
    let full = super::options::link_bytes(e.capacity, ray_bytes) as u64;
    let injected = matches!(EdgeKind::of(e), EdgeKind::Injector | EdgeKind::Direct);
    [full, if injected { LINK_HEADER_BYTES } else { full }]
}

/// Bytes each tracer's count of finished pixels takes to the spill store every
/// exchange (codelets/graph/render_graph.cpp, finishesToSpill).
pub const FINISH_WORD_BYTES: u64 = size_of::<u32>() as u64;

/// The tracer nodes of `plan`, each of which sends the spill store
/// [`FINISH_WORD_BYTES`] every exchange.
pub fn finish_senders(plan: &DevicePlan) -> impl Iterator<Item = usize> + '_ {
    plan.tree.tracer_nodes().map(|(node, _)| node)
}

/// One IPU of a plan.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct IpuLoad {
    pub ipu: u32,
    /// Tiles the plan puts on it (of `tiles_per_ipu`), and of them tracers.
    pub tiles_used: u64,
    pub tracers: u64,
    /// Bytes the graph builder allocates on its tiles (tile_bytes.h: tensors and
    /// records, without code and stacks): all of them, and the fullest tile's.
    pub bytes: u64,
    pub busiest_tile_bytes: u64,
    /// Link-buffer bytes the exchange copies to and from other IPUs per iteration.
    pub bytes_out_per_iteration: u64,
    pub bytes_in_per_iteration: u64,
}

/// Every IPU of `plan`'s target, in order.
pub fn per_ipu(plan: &DevicePlan) -> Result<Vec<IpuLoad>, DeviceError> {
    let (ipus, per) = (plan.options.ipus, plan.options.tiles);
    let ipu_of = |node: usize| plan.tree.nodes[node].tile / per;
    let mut loads: Vec<IpuLoad> = (0..ipus).map(|ipu| IpuLoad { ipu, ..IpuLoad::default() }).collect();
    let bytes = poplar_bridge::spec_tile_bytes(&plan.spec)?;
    for (i, (n, b)) in plan.tree.nodes.iter().zip(&bytes).enumerate() {
        let l = &mut loads[ipu_of(i) as usize];
        l.tiles_used += 1;
        l.tracers += (n.role == super::tree::Role::Tracer) as u64;
        l.bytes += b.total() as u64;
        l.busiest_tile_bytes = l.busiest_tile_bytes.max(b.total() as u64);
    }
    for e in &plan.spec.edges {
        let (a, b) = (ipu_of(e.from as usize), ipu_of(e.to as usize));
        if a != b {
            let [there, back] = edge_bytes(e, plan.ray_bytes);
            loads[a as usize].bytes_out_per_iteration += there;
            loads[b as usize].bytes_in_per_iteration += there;
            loads[b as usize].bytes_out_per_iteration += back;
            loads[a as usize].bytes_in_per_iteration += back;
        }
    }
    let spill = ipu_of(plan.tree.spill());
    for t in finish_senders(plan).filter(|&t| ipu_of(t) != spill) {
        loads[ipu_of(t) as usize].bytes_out_per_iteration += FINISH_WORD_BYTES;
        loads[spill as usize].bytes_in_per_iteration += FINISH_WORD_BYTES;
    }
    Ok(loads)
}
