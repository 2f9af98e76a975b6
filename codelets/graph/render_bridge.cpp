#include "render_bridge.h"

#include "poplar-bridge/bridge/session.h"
#include "poplar-bridge/src/lib.rs.h"
#include "render_graph.h"

#include <cstring>
#include <stdexcept>
#include <string>

namespace foam_bridge {

namespace {

foam::Schedule toSchedule(std::uint8_t schedule) {
  if (schedule > static_cast<uint8_t>(foam::Schedule::PlanBesideMarch))
    throw std::invalid_argument("render spec: schedule " + std::to_string(schedule) + " is none of 0, 1, 2, 3, 4");
  return static_cast<foam::Schedule>(schedule);
}

// The plan's spec for the graph builder, its shards' bytes (borrowed from `spec`) only
// if `shards`.
foam::RenderSpec toSpec(const RenderSpec &spec, bool shards) {
  foam::RenderSpec s;
  if (shards) s.shardBytes = {spec.shards.data(), spec.shards.size()};
  s.rayBytes = spec.ray_bytes;
  s.slicePixels = spec.slice_pixels;
  s.regionBytes = spec.region_bytes;
  s.rc = spec.rc;
  s.endsOnDevice = spec.ends_on_device;
  s.schedule = toSchedule(spec.schedule);
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
  return s;
}

TileBytes toRust(const foam::TileBytes &b) {
  return TileBytes{b.params, b.stats,    b.ctl,       b.camera, b.status, b.inbox,   b.outbox, b.sideIn, b.sideOut,
                   b.directIn, b.directOut, b.store, b.pixels, b.results, b.shard, b.copies, b.region, b.blocks,
                   b.finishes};
}

}  // namespace

rust::Vec<std::uint32_t> build_render_graph(Session &session, const RenderSpec &spec) {
  foam::RenderSpec s = toSpec(spec, true);
  s.codeletFiles.push_back(std::string(codelets_gp()));
  std::vector<poplar::program::Program> progs = foam::buildRenderGraph(session.graph(), s);
  rust::Vec<std::uint32_t> ids;
  for (auto &p : progs) ids.push_back(session.addProgram(std::move(p)));
  return ids;
}

rust::Vec<TileBytes> spec_tile_bytes(const RenderSpec &spec) {
  rust::Vec<TileBytes> out;
  for (const foam::TileBytes &b : foam::specTileBytes(toSpec(spec, false))) out.push_back(toRust(b));
  return out;
}

rust::Vec<ResetVertex> spec_reset_vertices(const RenderSpec &spec) {
  const foam::RenderSpec s = toSpec(spec, false);
  const std::vector<foam::TileBytes> bytes = foam::specTileBytes(s);
  rust::Vec<ResetVertex> out;
  for (std::size_t i = 0; i < bytes.size(); ++i)
    for (foam::Zeroed z : foam::zeroedAtFrameStart(s.nodes[i].role))
      for (const auto &[begin, end] : foam::zeroSlices(s.nodes[i].role, z, foam::bytesOf(bytes[i], z)))
        out.push_back(ResetVertex{static_cast<std::uint32_t>(i), static_cast<std::uint64_t>(end - begin)});
  return out;
}

rust::Vec<std::uint8_t> step_layout(std::uint8_t schedule) {
  const foam::StepLayout at = foam::stepLayout(toSchedule(schedule));
  rust::Vec<std::uint8_t> out;
  out.push_back(static_cast<std::uint8_t>(at.names.size()));
  for (unsigned set : {at.tracerMarch, at.tracerSend, at.count, at.plan, at.forward, at.spill, at.emit,
                       at.injectorMarch, at.deal})
    out.push_back(static_cast<std::uint8_t>(set));
  return out;
}

TileBytes role_tile_bytes(std::uint8_t role, rust::Slice<const std::uint8_t> params, const TileContents &c) {
  foam_params p{};
  if (params.size() != sizeof p) throw std::invalid_argument("tile bytes: params must be a foam_params");
  if (role > static_cast<std::uint8_t>(foam::Role::Injector)) throw std::invalid_argument("tile bytes: no role " + std::to_string(role));
  std::memcpy(&p, params.data(), sizeof p);
  return toRust(foam::tileBytes(static_cast<foam::Role>(role), p, {c.slice_pixels, c.shard_bytes, c.copies_bytes, c.region_bytes}));
}

} // namespace foam_bridge
