#include "render_bridge.h"

#include "poplar-bridge/bridge/session.h"
#include "poplar-bridge/src/lib.rs.h"
#include "render_graph.h"

namespace foam_bridge {

rust::Vec<std::uint32_t> build_render_graph(Session &session, const RenderSpec &spec) {
  foam::RenderSpec s;
  s.shardBytes.assign(spec.shards.begin(), spec.shards.end());
  s.rayBytes = spec.ray_bytes;
  s.slicePixels = spec.slice_pixels;
  s.regionBytes = spec.region_bytes;
  s.rc = spec.rc;
  s.codeletFiles.push_back(std::string(codelets_gp()));
  s.nodes.reserve(spec.nodes.size());
  for (const RenderNode &n : spec.nodes) {
    foam::NodeSpec ns;
    ns.role = static_cast<foam::Role>(n.role);
    ns.tile = n.tile;
    ns.params.assign(n.params.begin(), n.params.end());
    ns.shardOffset = n.shard_offset;
    ns.shardBytes = n.shard_bytes;
    ns.copies.assign(n.copies.begin(), n.copies.end());
    s.nodes.push_back(std::move(ns));
  }
  s.edges.reserve(spec.edges.size());
  for (const RenderEdge &e : spec.edges)
    s.edges.push_back({static_cast<foam::EdgeKind>(e.kind), e.from, e.to, e.from_lane, e.to_lane, e.capacity});
  std::vector<poplar::program::Program> progs = foam::buildRenderGraph(session.graph(), s);
  rust::Vec<std::uint32_t> ids;
  for (auto &p : progs) ids.push_back(session.addProgram(std::move(p)));
  return ids;
}

} // namespace foam_bridge
