#include "tile_bytes.h"

#include <algorithm>

#include "foam/lanes.h"

namespace foam {
namespace {

// The records every role holds: its parameters and statistics.
TileBytes records(std::size_t ctl) {
  TileBytes b{};
  b.params = sizeof(foam_params);
  b.stats = sizeof(foam_tile_stats);
  b.ctl = ctl;
  return b;
}

std::size_t rays(unsigned n, const foam_params &p) { return (std::size_t)n * p.ray_bytes; }

}  // namespace

std::size_t TileBytes::total() const {
  return params + stats + ctl + camera + status + inbox + outbox + sideIn + sideOut + directIn + directOut + store +
         pixels + results + shard + copies + region + blocks + finishes;
}

TileBytes tracerBytes(const foam_params &p, const TileContents &c) {
  TileBytes b = records(sizeof(foam_tracer_ctl));
  b.camera = sizeof(foam_camera);
  b.inbox = b.outbox = foam_link_bytes(&p, p.link_capacity);
  // Without side links, one empty header each way, so that the fields exist.
  b.sideIn = b.sideOut = p.side_links ? foam_side_offset(&p, p.side_links) : sizeof(foam_link_header);
  b.store = rays(p.queue_capacity, p);
  b.pixels = (std::size_t)c.slicePixels * sizeof(foam_pixel);
  // At least one word, so that a tracer without a result store still has the tensor.
  b.results = std::max<std::size_t>(4, (std::size_t)FOAM_WORKERS * p.result_slots * sizeof(foam_result));
  b.shard = c.shardBytes;
  b.copies = c.copiesBytes;
  return b;
}

TileBytes routerBytes(const foam_params &p) {
  TileBytes b = records(sizeof(foam_router_ctl));
  const unsigned lanes = foam_parent_lane(&p) + 1;
  b.inbox = foam_lane_offset(&p, lanes, 0);
  b.outbox = foam_lane_offset(&p, lanes, 1);
  b.store = 4 * rays(p.queue_capacity, p);  // up and down, each double-buffered
  return b;
}

TileBytes spillBytes(const foam_params &p, const TileContents &c) {
  TileBytes b = records(sizeof(foam_spill_ctl));
  b.params += sizeof(uint32_t);  // and the steps loop's repeat count, also a constant
  b.camera = sizeof(foam_camera);
  b.status = sizeof(foam_frame_status);
  b.inbox = b.outbox = foam_link_bytes(&p, p.link_capacity);
  b.store = rays(p.queue_capacity, p);
  b.finishes = c.tracers * sizeof(uint32_t);
  return b;
}

TileBytes injectorBytes(const foam_params &p, const TileContents &c) {
  TileBytes b = records(sizeof(foam_injector_ctl));
  b.camera = sizeof(foam_camera);
  b.status = sizeof(foam_frame_status);
  b.inbox = sizeof(foam_inject_down);
  b.outbox = foam_link_bytes(&p, p.link_capacity);
  // Without direct lanes, one empty header each way, so that the fields exist.
  const unsigned lanes = std::max(1u, (unsigned)p.direct_lanes);
  b.directIn = foam_direct_offset(&p, lanes, 0);
  b.directOut = foam_direct_offset(&p, lanes, 1);
  b.store = rays(foam_injector_queue(&p), p);
  b.region = c.regionBytes;
  b.blocks = sizeof(uint32_t) + (std::size_t)p.block_slots * sizeof(foam_block);
  return b;
}

const std::vector<Zeroed> &zeroedAtFrameStart(Role role) {
  using Z = Zeroed;
  static const std::vector<Zeroed> tracer{Z::Inbox, Z::Outbox, Z::SideIn, Z::SideOut, Z::Pixels, Z::Stats, Z::Ctl};
  static const std::vector<Zeroed> router{Z::Inbox, Z::Outbox, Z::Stats, Z::Ctl};
  static const std::vector<Zeroed> spill{Z::Inbox, Z::Outbox, Z::Status, Z::Stats, Z::Finishes, Z::Ctl};
  static const std::vector<Zeroed> injector{Z::Inbox, Z::Outbox, Z::DirectIn, Z::DirectOut, Z::Status, Z::Stats, Z::Ctl};
  switch (role) {
  case Role::Tracer: return tracer;
  case Role::Router: return router;
  case Role::Spill: return spill;
  case Role::Injector: return injector;
  }
  return router;
}

std::size_t bytesOf(const TileBytes &b, Zeroed z) {
  switch (z) {
  case Zeroed::Inbox: return b.inbox;
  case Zeroed::Outbox: return b.outbox;
  case Zeroed::SideIn: return b.sideIn;
  case Zeroed::SideOut: return b.sideOut;
  case Zeroed::DirectIn: return b.directIn;
  case Zeroed::DirectOut: return b.directOut;
  case Zeroed::Pixels: return b.pixels;
  case Zeroed::Status: return b.status;
  case Zeroed::Stats: return b.stats;
  case Zeroed::Finishes: return b.finishes;
  case Zeroed::Ctl: return b.ctl;
  }
  return 0;
}

std::vector<std::pair<std::size_t, std::size_t>> zeroSlices(Role role, Zeroed z, std::size_t bytes) {
  if (role == Role::Tracer || z == Zeroed::Ctl || bytes < kZeroSplitBytes) return {{0, bytes}};
  std::vector<std::pair<std::size_t, std::size_t>> slices;
  std::size_t begin = 0;
  for (unsigned w = 1; w <= FOAM_WORKERS; ++w) {
    const std::size_t end = w == FOAM_WORKERS ? bytes : (bytes * w / FOAM_WORKERS) & ~std::size_t{7};
    slices.emplace_back(begin, end);
    begin = end;
  }
  return slices;
}

TileBytes tileBytes(Role role, const foam_params &p, const TileContents &c) {
  switch (role) {
  case Role::Tracer: return tracerBytes(p, c);
  case Role::Router: return routerBytes(p);
  case Role::Spill: return spillBytes(p, c);
  case Role::Injector: return injectorBytes(p, c);
  }
  return TileBytes{};
}

}  // namespace foam
