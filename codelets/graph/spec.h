// The render spec: what the host's plan hands the graph builder. Nodes are tiles
// with a role; edges are the links between them, each with the lane it takes at
// either end and its buffers' capacity. A tile's lanes come from its edges alone
// (topology.h), so no lane is described twice.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace foam {

enum class Role : uint8_t { Tracer = 0, Router = 1, Spill = 2, Injector = 3 };

// Which compute set of a step runs each vertex (render_graph.h, stepLayout). A
// tile's own order never changes: a tracer marches then sends, a router counts,
// plans then forwards, an injector emits, marches then deals (merged: marches,
// deals, then emits for the next step). Where two of a tile's vertices share a set,
// one vertex does both, in that order. What changes is which tiles' work shares a
// set, and so which busiest tiles a step waits for one after another.
enum class Schedule : uint8_t {
  Apart = 0,        // 3 sets: tracers march beside the count; injectors march in the plan's set
  MergedMarch = 1,  // 3 sets: injectors march beside the tracers, emit in the forward's set
  // 4 sets: count (+ emit), plan, march beside the routers' forward, send (+ deal)
  ForwardBesideMarch = 2,
  // 3 sets: march (+ count), plan (+ deal), send beside the routers' forward (+ emit)
  SendBesideForward = 3,
  // 2 sets: march beside the routers' count and plan (one vertex, RouterCountPlan),
  // send beside the routers' forward (+ the injectors' deal and emit, InjectorDealEmit)
  PlanBesideMarch = 4,
};

// Every edge has one buffer each way; `capacity` rays up (from -> to) and, on tree
// edges and side links, as many down. An injector's edges carry rays up only and a
// bare header down.
enum class EdgeKind : uint8_t {
  Tree = 0,      // child (tracer, router) -> parent (router; the spill store above the root)
  Side = 1,      // tracer -> tracer: a side link
  Injector = 2,  // injector -> the root: its lane to the root
  Direct = 3,    // injector -> a router under the root: a direct lane
};

struct EdgeSpec {
  EdgeKind kind;
  unsigned from, to;  // indices into RenderSpec::nodes
  // The lane the edge takes among its end's edges of its kind: at `from` a side
  // link's or a direct lane's index (0 for the one up edge of a tree or injector
  // edge); at `to` the child lane (tree; 0 at the spill store), side link index, or
  // injector lane (injector and direct edges: which injector).
  unsigned fromLane, toLane;
  unsigned capacity;
};

struct NodeSpec {
  Role role;
  unsigned tile;
  // foam_params bytes, the fields marked [lanes] in layout.h left zero: the builder
  // derives them from the edges.
  std::vector<uint8_t> params;
  std::size_t shardOffset = 0;  // tracers: blob within RenderSpec::shardBytes
  std::size_t shardBytes = 0;
  // Tracers: the foam_region_header of the shard copies it holds (empty: none); the
  // builder appends the listed shards' blobs at the offsets the header names.
  std::vector<uint8_t> copies;
};

// Bytes the spec borrows from its caller, who keeps them alive while the graph is
// built: the shard blobs are most of the plan (600 MB on a 4.2 M-cell scene), and a
// copy of them beside the caller's was the host tool's peak.
struct ByteView {
  const uint8_t *ptr = nullptr;
  std::size_t len = 0;
  const uint8_t *data() const { return ptr; }
  std::size_t size() const { return len; }
};

struct RenderSpec {
  std::vector<NodeSpec> nodes;
  std::vector<EdgeSpec> edges;
  ByteView shardBytes;  // every tracer's blob, at its node's shardOffset
  unsigned rayBytes = 20;
  unsigned slicePixels = 0;
  std::size_t regionBytes = 0;  // each injector's camera region (foam_region_header + blobs)
  unsigned rc = 20;
  // The steps program: RepeatWhileTrue on the spill store's foam_spill_ctl.steps_left,
  // which ends a host call after rc iterations or as soon as the frame is finished;
  // false: Repeat(rc), every call runs rc iterations (the paper's loop).
  bool endsOnDevice = true;
  Schedule schedule = Schedule::ForwardBesideMarch;
  std::vector<std::string> codeletFiles;
  std::string codeletFlags;
};

// "tracer12@12": a node's role, index and tile, for messages and tensor names.
std::string nodeName(const NodeSpec &n, std::size_t i);

}  // namespace foam
