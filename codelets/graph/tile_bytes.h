// The bytes of every tensor a tile holds, by role: the one source of tile sizes.
// The graph builder allocates with these; the host's plan asks the same functions
// through the bridge (poplar_bridge::spec_tile_bytes, role_tile_bytes) to fit
// shards, stores and regions into the tiles and to report them.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "foam/layout.h"
#include "spec.h"

namespace foam {

// A tile's tensors (0 where its role has none).
struct TileBytes {
  std::size_t params, stats, ctl, camera, status;  // records
  // Its edge up (a tracer's, the spill store's from the root, an injector's lane to
  // the root), or on a router every lane: children, injectors, parent.
  std::size_t inbox, outbox;
  std::size_t sideIn, sideOut;      // tracer: side links
  std::size_t directIn, directOut;  // injector: direct lanes
  // Rays waiting: a tracer's pending store, a router's four queues, the spill store,
  // an injector's held rays.
  std::size_t store;
  std::size_t pixels, results;  // tracer: framebuffer slice and result store
  std::size_t shard, copies;    // tracer: its shard blob, its shard copies with their directory
  std::size_t region, blocks;   // injector: camera region, block list
  // Spill store: each tracer's count of finished pixels, copied from the header of
  // its edge up every step, so the frame's end is known one exchange after its last
  // pixel rather than once that count has climbed the router tree.
  std::size_t finishes;

  std::size_t total() const;
};

// What fixes a tile's sizes beyond its foam_params (with its [lanes] fields).
struct TileContents {
  unsigned slicePixels = 0;      // tracer
  std::size_t shardBytes = 0;    // tracer
  std::size_t copiesBytes = 0;   // tracer: directory and blobs of its shard copies
  std::size_t regionBytes = 0;   // injector
  std::size_t tracers = 0;       // spill store: the tracer tiles whose finishes it sums
};

// The tensors a tile's frame start zeroes (render_graph.cpp: one ZeroBytes vertex a
// tensor, ZeroWords for the ctl record), listed once here so that the cycle model
// prices the reset the graph builds (the bridge's spec_reset_vertices). Not a
// tracer's result store: the host reads as many of its slots as each worker's count
// says (kResultCountsHandle), and the ctl record holding the counts is zeroed.
enum class Zeroed { Inbox, Outbox, SideIn, SideOut, DirectIn, DirectOut, Pixels, Status, Stats, Finishes, Ctl };
const std::vector<Zeroed> &zeroedAtFrameStart(Role role);
std::size_t bytesOf(const TileBytes &b, Zeroed z);
// Where the reset cuts a tensor of `bytes` into vertices (its slices, [begin, end)):
// a router's, the spill store's or an injector's tensor of kZeroSplitBytes or more in
// six, one a worker, at 8-byte boundaries (the root's inbox takes in every
// injector's lane, over 100 KB); anything else whole. Not a tracer's: the tracer
// program's vertex state has no room for more vertices, and its tensors are small.
constexpr std::size_t kZeroSplitBytes = 8192;
std::vector<std::pair<std::size_t, std::size_t>> zeroSlices(Role role, Zeroed z, std::size_t bytes);

TileBytes tracerBytes(const foam_params &p, const TileContents &c);
TileBytes routerBytes(const foam_params &p);
TileBytes spillBytes(const foam_params &p, const TileContents &c);
TileBytes injectorBytes(const foam_params &p, const TileContents &c);
TileBytes tileBytes(Role role, const foam_params &p, const TileContents &c);

}  // namespace foam
