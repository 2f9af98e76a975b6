// The render graph of the paper (§4.8), built through the Poplar API only, so the
// same code runs on an IPU and on the host runtime. The topology (which tile plays
// which role, who is whose parent) comes from the Rust device plan.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>

namespace foam {

enum class Role : uint8_t { Tracer = 0, Router = 1, Spill = 2, Injector = 3 };

struct NodeSpec {
  Role role;
  unsigned tile;
  int parent;       // index into RenderSpec::nodes; -1 for the spill store
  unsigned lane;    // which of the parent's lanes this node is on (injectors: after the children)
  unsigned fanout;  // children (routers: 2..16; spill store: 1; tracers, injectors: 0)
  std::vector<uint8_t> params;  // foam_params bytes
  std::size_t shardOffset = 0;  // tracers: blob within RenderSpec::shardBytes
  std::size_t shardBytes = 0;
  // Tracers: the tracer nodes of its side links, lane k to sides[k]; injectors: the
  // routers of its direct lanes, lane k to sides[k] (the root's child k).
  std::vector<unsigned> sides;
  // Tracers: the foam_region_header of the shard copies it holds (empty: none); the
  // builder appends the listed shards' blobs at the offsets the header names.
  std::vector<uint8_t> copies;
};

struct RenderSpec {
  std::vector<NodeSpec> nodes;
  std::vector<uint8_t> shardBytes;
  unsigned rayBytes = 20;
  unsigned slicePixels = 0;
  std::size_t regionBytes = 0;  // each injector's camera region (foam_region_header + blobs)
  unsigned rc = 20;
  std::vector<std::string> codeletFiles;
  std::string codeletFlags;
};

// Host stream handles the frame loop uses.
inline constexpr const char *kCameraHandle = "camera";
inline constexpr const char *kRegionHandle = "camera_region";  // every injector's, in node order
inline constexpr const char *kBlocksHandle = "blocks";          // every injector's block list, in node order
inline constexpr const char *kStatusHandle = "status";  // the spill store's, then every injector's
inline constexpr const char *kPixelsHandle = "pixels";
inline constexpr const char *kResultsHandle = "results";
inline constexpr const char *kStatsHandle = "stats";

// Programs, by index in the returned vector.
enum Program : unsigned { kFrameStart = 0, kSteps = 1, kNumPrograms = 2 };

// Builds tensors, vertices, compute sets and copies; returns the programs.
std::vector<poplar::program::Program> buildRenderGraph(poplar::Graph &graph, const RenderSpec &spec);

}  // namespace foam
