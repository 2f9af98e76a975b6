// Every tile's lanes, from the spec's edges: the one place where a tile's links are
// derived and checked, and written into its foam_params (the fields layout.h marks
// [lanes]) for its codelets and for the size of its buffers (tile_bytes.h).
#pragma once

#include <cstddef>
#include <vector>

#include "foam/layout.h"
#include "spec.h"

namespace foam {

// A node's edges by the lanes they take there.
struct NodeLanes {
  const EdgeSpec *up = nullptr;             // tracer, router: its tree edge; injector: its lane to the root
  std::vector<const EdgeSpec *> children;   // router: by child lane; spill store: the root's edge
  std::vector<const EdgeSpec *> injectors;  // router: by injector (the root's lanes, or direct lanes)
  std::vector<const EdgeSpec *> sides;      // tracer: side links, by lane
  std::vector<const EdgeSpec *> direct;     // injector: direct lanes, by lane
};

// The lanes of node `i`, checked: each edge fits the roles at its ends and every
// group's lanes are 0..n-1, each taken once. `edgesAt` lists the edges touching
// each node (edgesAt(spec)).
NodeLanes lanesOf(const RenderSpec &spec, const std::vector<std::vector<unsigned>> &edgesAt, std::size_t i);

std::vector<std::vector<unsigned>> edgesAt(const RenderSpec &spec);

// Node i's foam_params: its spec's record with the [lanes] fields from `lanes`
// (neighbours' records give the shard ids of side links and the root's bits); a
// router's child lanes' tiles of their shards (layout.h side_class, unaligned) to
// `laneTiles`.
foam_params withLanes(const RenderSpec &spec, std::size_t i, const NodeLanes &lanes, std::vector<uint8_t> &laneTiles);

// The whole device: every node's lanes and params, and its special nodes.
struct Topology {
  std::vector<NodeLanes> lanes;
  std::vector<foam_params> params;
  std::vector<std::vector<uint8_t>> laneTiles;  // routers: each child lane's tile of its shard
  std::size_t spill = 0;               // the spill store
  std::size_t root = 0;                // the router under it
  std::vector<std::size_t> injectors;  // in node order
  std::size_t tracers = 0;             // tracer tiles (the spill store sums a word of each)
};

// Throws std::invalid_argument naming the node or edge that is not a device.
Topology topology(const RenderSpec &spec);

}  // namespace foam
