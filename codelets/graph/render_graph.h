// The render graph of the paper (§4.8), built through the Poplar API only, so the
// same code runs on an IPU and on the host runtime. What to build comes from the
// host's plan as a spec of nodes and typed edges (spec.h).
#pragma once

#include <vector>

#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>

#include "spec.h"
#include "tile_bytes.h"

namespace foam {

// Host stream handles the frame loop uses.
inline constexpr const char *kCameraHandle = "camera";
inline constexpr const char *kRegionHandle = "camera_region";  // every injector's, in node order
inline constexpr const char *kBlocksHandle = "blocks";          // every injector's block list, in node order
inline constexpr const char *kStatusHandle = "status";          // the spill store's, then every injector's
inline constexpr const char *kPixelsHandle = "pixels";
inline constexpr const char *kResultsHandle = "results";
inline constexpr const char *kResultCountsHandle = "result_counts";
inline constexpr const char *kStatsHandle = "stats";
// Per-worker work of the last iteration's compute sets, for the cost model, in node
// order: a tracer's foam_tracer_ctl from its start through work (the rays its
// pending store holds and how many of them are held unmarched: TracerSend walks the
// others again next step; then the cumulative work), an injector's
// foam_injector_ctl.work (cumulative), a router's foam_router_ctl.counts (this
// iteration's); nothing for the spill store.
inline constexpr const char *kWorkHandle = "work";

// Programs, by index in the returned vector.
enum Program : unsigned { kFrameStart = 0, kSteps = 1, kNumPrograms = 2 };

// Which compute set of a step runs each vertex, by the spec's Schedule, and the
// sets' names in program order. The one table of it: the cost model reads it through
// the bridge (poplar_bridge::step_layout, src/cmd/bench/cycles.rs set_of).
struct StepLayout {
  std::vector<const char *> names;
  unsigned tracerMarch, tracerSend, count, plan, forward, spill, emit, injectorMarch, deal;
};
StepLayout stepLayout(Schedule schedule);

// Builds tensors, vertices, compute sets and copies; returns the programs.
std::vector<poplar::program::Program> buildRenderGraph(poplar::Graph &graph, const RenderSpec &spec);

// The bytes of every node's tensors as buildRenderGraph allocates them (its
// topology checked the same way), without building anything. `spec.shardBytes`
// may be empty: only the nodes' shard sizes count.
std::vector<TileBytes> specTileBytes(const RenderSpec &spec);

}  // namespace foam
