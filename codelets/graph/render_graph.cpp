#include "render_graph.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>

#include <poplar/ArrayRef.hpp>

#include "foam/lanes.h"
#include "foam/layout.h"

namespace foam {
namespace {

using poplar::ComputeSet;
using poplar::Graph;
using poplar::Tensor;
using poplar::UNSIGNED_CHAR;
using poplar::UNSIGNED_INT;
namespace program = poplar::program;

// The tensors one node owns, all mapped to its tile.
struct NodeTensors {
  Tensor params, inboxes, outboxes, ctl, stats;
  Tensor shard, copies, camera, pending, pixels, results;  // tracers
  Tensor sideIn, sideOut;  // tracers: side links; injectors: direct lanes (lane after lane)
  Tensor queues;                          // routers
  Tensor spill, status;                   // spill store (status: injectors too)
  Tensor region, blocks, held;            // injectors
};

Tensor bytes(Graph &g, unsigned tile, std::size_t n, const std::string &name) {
  Tensor t = g.addVariable(UNSIGNED_CHAR, {n}, name);
  g.setTileMapping(t, tile);
  return t;
}

Tensor words(Graph &g, unsigned tile, std::size_t n, const std::string &name) {
  Tensor t = g.addVariable(UNSIGNED_INT, {n}, name);
  g.setTileMapping(t, tile);
  return t;
}

Tensor constBytes(Graph &g, unsigned tile, const uint8_t *data, std::size_t n, const std::string &name) {
  Tensor t = g.addConstant<unsigned char>(UNSIGNED_CHAR, {n}, poplar::ArrayRef<unsigned char>(data, n), name);
  g.setTileMapping(t, tile);
  return t;
}

std::string nodeName(const NodeSpec &n, std::size_t i) {
  const char *role = n.role == Role::Tracer    ? "tracer"
                     : n.role == Role::Router  ? "router"
                     : n.role == Role::Injector ? "injector"
                                               : "spill";
  return std::string(role) + std::to_string(i) + "@" + std::to_string(n.tile);
}

// A tracer's copies: the header the plan made, then the blobs it lists, each at
// the offset the header gives it; `tracerOf` finds the tracer holding a shard id.
std::vector<uint8_t> copyRegion(const RenderSpec &spec, const NodeSpec &n, const std::string &name,
                                const std::vector<int> &tracerOf) {
  foam_region_header h{};
  if (!n.copies.empty() && n.copies.size() != sizeof h)
    throw std::invalid_argument(name + ": copies must be a foam_region_header");
  if (!n.copies.empty()) std::memcpy(&h, n.copies.data(), sizeof h);
  std::vector<uint8_t> region(sizeof h);
  if (h.count > FOAM_REGION_MAX_SHARDS) throw std::invalid_argument(name + ": too many shard copies");
  for (uint32_t k = 0; k < h.count; ++k) {
    const std::string what = name + ": copy " + std::to_string(k);
    if (h.shard[k] >= tracerOf.size() || tracerOf[h.shard[k]] < 0 || (k > 0 && h.shard[k] <= h.shard[k - 1]))
      throw std::invalid_argument(what + " is not a tracer's shard in ascending order");
    if (h.offset[k] != region.size()) throw std::invalid_argument(what + " is not where the header puts it");
    const NodeSpec &src = spec.nodes[(std::size_t)tracerOf[h.shard[k]]];
    if (src.shardOffset + src.shardBytes > spec.shardBytes.size()) throw std::invalid_argument(what + ": shard blob out of range");
    const uint8_t *blob = spec.shardBytes.data() + src.shardOffset;
    region.insert(region.end(), blob, blob + src.shardBytes);
  }
  h.total_bytes = (uint32_t)region.size();
  std::memcpy(region.data(), &h, sizeof h);
  return region;
}

// The lanes a node's spec lists (a tracer's side links, an injector's direct
// lanes) must be the ones its params give its codelets, and no more than `most`.
void checkLanes(const NodeSpec &n, const foam_params &p, unsigned most, const std::string &name, const char *what) {
  if (n.sides.size() != p.side_lanes || p.side_lanes > most)
    throw std::invalid_argument(name + ": " + std::to_string(n.sides.size()) + " " + what + " but params say " +
                                std::to_string(p.side_lanes) + " (at most " + std::to_string(most) + ")");
}

using Fields = std::initializer_list<std::pair<const char *, Tensor>>;

// A vertex on `tile` whose fields each connect one contiguous tensor region on that
// tile. The graph's exchange is its explicit Copy programs (one merged exchange per
// step), so a field must never lean on the exchange Poplar inserts for data that is
// elsewhere: that would add an unplanned exchange to every step.
void addLocalVertex(Graph &g, ComputeSet cs, const char *type, unsigned tile, Fields fields) {
  auto v = g.addVertex(cs, type);
  for (const auto &f : fields) {
    const Graph::TileToTensorMapping mapping = g.getTileMapping(f.second);
    for (unsigned other = 0; other < mapping.size(); ++other)
      if (other != tile && !mapping[other].empty())
        throw std::logic_error(std::string("render graph: ") + type + " on tile " + std::to_string(tile) + ": field '" +
                               f.first + "' has data on tile " + std::to_string(other));
    if (!f.second.isContiguous())
      throw std::logic_error(std::string("render graph: ") + type + " on tile " + std::to_string(tile) + ": field '" +
                             f.first + "' is not one contiguous region");
    g.connect(v[f.first], f.second);
  }
  g.setTileMapping(v, tile);
}

}  // namespace

std::vector<program::Program> buildRenderGraph(Graph &g, const RenderSpec &spec) {
  for (const auto &file : spec.codeletFiles) g.addCodelets(file, poplar::CodeletFileType::Auto, spec.codeletFlags);

  auto linkBytes = [&](uint32_t capacity) { return sizeof(foam_link_header) + (std::size_t)capacity * spec.rayBytes; };
  std::vector<foam_params> params(spec.nodes.size());
  if (spec.regionBytes < sizeof(foam_region_header) || spec.regionBytes % 4)
    throw std::invalid_argument("the camera region must hold its header and be whole words");
  std::vector<NodeTensors> t(spec.nodes.size());
  int spill = -1;
  std::vector<std::size_t> injectors;
  // Which node is the tracer of each shard id (-1: none), for the shard copies.
  std::vector<int> tracerOf;
  for (std::size_t i = 0; i < spec.nodes.size(); ++i) {
    const NodeSpec &n = spec.nodes[i];
    if (n.role != Role::Tracer || n.params.size() != sizeof(foam_params)) continue;
    foam_params p;
    std::memcpy(&p, n.params.data(), sizeof p);
    if (p.shard >= tracerOf.size()) tracerOf.resize(p.shard + 1, -1);
    tracerOf[p.shard] = (int)i;
  }

  for (std::size_t i = 0; i < spec.nodes.size(); ++i) {
    const NodeSpec &n = spec.nodes[i];
    const std::string name = nodeName(n, i);
    if (n.params.size() != sizeof(foam_params)) throw std::invalid_argument(name + ": params must be a foam_params");
    foam_params &p = params[i];
    std::memcpy(&p, n.params.data(), sizeof p);
    const std::size_t link = linkBytes(p.link_capacity);
    NodeTensors &x = t[i];
    x.params = constBytes(g, n.tile, n.params.data(), n.params.size(), name + "/params");
    x.stats = bytes(g, n.tile, sizeof(foam_tile_stats), name + "/stats");
    switch (n.role) {
    case Role::Tracer:
      if (n.shardOffset + n.shardBytes > spec.shardBytes.size())
        throw std::invalid_argument(name + ": shard blob out of range");
      x.shard = constBytes(g, n.tile, spec.shardBytes.data() + n.shardOffset, n.shardBytes, name + "/shard");
      {
        const std::vector<uint8_t> held = copyRegion(spec, n, name, tracerOf);
        x.copies = constBytes(g, n.tile, held.data(), held.size(), name + "/copies");
      }
      x.camera = bytes(g, n.tile, sizeof(foam_camera), name + "/camera");
      x.inboxes = bytes(g, n.tile, link, name + "/inbox");
      x.outboxes = bytes(g, n.tile, link, name + "/outbox");
      x.pending = bytes(g, n.tile, (std::size_t)p.queue_capacity * spec.rayBytes, name + "/pending");
      checkLanes(n, p, FOAM_MAX_SIDES, name, "side links");
      // A tracer without side links still gets one empty header, so the fields exist.
      x.sideIn = bytes(g, n.tile, foam_side_offset(&p, std::max(1u, p.side_lanes)), name + "/side-in");
      x.sideOut = bytes(g, n.tile, foam_side_offset(&p, std::max(1u, p.side_lanes)), name + "/side-out");
      x.ctl = words(g, n.tile, sizeof(foam_tracer_ctl) / 4, name + "/ctl");
      x.pixels = bytes(g, n.tile, (std::size_t)spec.slicePixels * sizeof(foam_pixel), name + "/pixels");
      // At least one word, so that no result store (--results 0) is still a tensor.
      x.results = bytes(g, n.tile, std::max<std::size_t>(4, (std::size_t)FOAM_WORKERS * p.result_slots * sizeof(foam_result)),
                        name + "/results");
      break;
    case Role::Router:
      if (n.fanout < 2 || n.fanout > FOAM_MAX_FANOUT || (n.fanout & (n.fanout - 1)) || n.fanout != p.fanout)
        throw std::invalid_argument(name + ": fanout must be a power of two from 2 to " + std::to_string(FOAM_MAX_FANOUT));
      if (p.inject_lanes > FOAM_MAX_INJECTORS)
        throw std::invalid_argument(name + ": at most " + std::to_string(FOAM_MAX_INJECTORS) + " injector lanes");
      // RouterPlan shares out credit with 32-bit products (the IPU has no 64-bit
      // multiply or divide): a lane's capacity times the queue's or the in-flight cap.
      if ((uint64_t)std::max(p.link_capacity, p.inject_capacity) * std::max(p.queue_capacity, p.max_in_flight) > UINT32_MAX)
        throw std::invalid_argument(name + ": lanes of " + std::to_string(std::max(p.link_capacity, p.inject_capacity)) +
                                    " rays with a queue or in-flight cap of " +
                                    std::to_string(std::max(p.queue_capacity, p.max_in_flight)) + " overflow 32 bits");
      // Injector lanes: rays come in, only a credit header goes out.
      x.inboxes = bytes(g, n.tile, foam_lane_offset(&p, foam_parent_lane(&p) + 1, 0), name + "/inboxes");
      x.outboxes = bytes(g, n.tile, foam_lane_offset(&p, foam_parent_lane(&p) + 1, 1), name + "/outboxes");
      x.queues = bytes(g, n.tile, (std::size_t)4 * p.queue_capacity * spec.rayBytes, name + "/queues");
      x.ctl = words(g, n.tile, sizeof(foam_router_ctl) / 4, name + "/ctl");
      break;
    case Role::Spill:
      if (spill >= 0) throw std::invalid_argument("more than one spill store");
      spill = (int)i;
      x.camera = bytes(g, n.tile, sizeof(foam_camera), name + "/camera");
      x.inboxes = bytes(g, n.tile, link, name + "/inbox");
      x.outboxes = bytes(g, n.tile, link, name + "/outbox");
      x.spill = bytes(g, n.tile, (std::size_t)p.queue_capacity * spec.rayBytes, name + "/spill");
      x.ctl = words(g, n.tile, sizeof(foam_spill_ctl) / 4, name + "/ctl");
      x.status = bytes(g, n.tile, sizeof(foam_frame_status), name + "/status");
      break;
    case Role::Injector:
      injectors.push_back(i);
      x.camera = bytes(g, n.tile, sizeof(foam_camera), name + "/camera");
      x.inboxes = bytes(g, n.tile, linkBytes(0), name + "/inbox");
      x.outboxes = bytes(g, n.tile, link, name + "/outbox");
      x.ctl = words(g, n.tile, sizeof(foam_injector_ctl) / 4, name + "/ctl");
      x.status = bytes(g, n.tile, sizeof(foam_frame_status), name + "/status");
      checkLanes(n, p, FOAM_MAX_FANOUT, name, "direct lanes");
      // Without direct lanes one empty header each way, so that the fields exist.
      x.sideIn = bytes(g, n.tile, foam_direct_offset(&p, std::max(1u, p.side_lanes), 0), name + "/direct-in");
      x.sideOut = bytes(g, n.tile, foam_direct_offset(&p, std::max(1u, p.side_lanes), 1), name + "/direct-out");
      x.held = bytes(g, n.tile, (std::size_t)p.link_capacity * spec.rayBytes, name + "/held");
      // Written with each camera: the shards its rays cross first, and its blocks.
      x.region = bytes(g, n.tile, spec.regionBytes, name + "/camera-region");
      x.blocks = bytes(g, n.tile, sizeof(uint32_t) + (std::size_t)p.block_slots * sizeof(foam_block), name + "/blocks");
      break;
    }
  }
  if (spill < 0) throw std::invalid_argument("the plan has no spill store");
  if (injectors.empty()) throw std::invalid_argument("the plan has no injector");

  ComputeSet step1 = g.addComputeSet("step/march+count+generate");
  ComputeSet step2 = g.addComputeSet("step/send+plan");
  ComputeSet step3 = g.addComputeSet("step/forward");
  ComputeSet reset = g.addComputeSet("frame/reset");
  auto zero = [&](const Tensor &tensor, unsigned tile) { addLocalVertex(g, reset, "ZeroBytes", tile, {{"data", tensor}}); };
  auto zeroWords = [&](const Tensor &tensor, unsigned tile) {
    // ZeroBytes works on bytes; word tensors are zeroed through a byte view of the
    // same shape on the same tile, so they get their own small vertex instead.
    addLocalVertex(g, reset, "ZeroWords", tile, {{"data", tensor}});
  };

  std::vector<Tensor> exSrc, exDst, camDst, pixelSlices, resultStores, statsAll;
  // Tracer i's side lane k sends to the lane of tracer sides[k] that leads back to i.
  auto sideLinks = [&](std::size_t i) {
    const NodeSpec &n = spec.nodes[i];
    const foam_params &p = params[i];
    for (unsigned k = 0; k < n.sides.size(); ++k) {
      const std::size_t j = n.sides[k];
      const std::string what = nodeName(n, i) + ": side link " + std::to_string(k);
      if (j >= spec.nodes.size() || spec.nodes[j].role != Role::Tracer || j == i)
        throw std::invalid_argument(what + " does not lead to another tracer");
      const auto &back = spec.nodes[j].sides;
      const auto it = std::find(back.begin(), back.end(), (unsigned)i);
      if (it == back.end()) throw std::invalid_argument(what + " has no way back");
      if (params[j].side_capacity != p.side_capacity || p.side_shard[k] != params[j].shard)
        throw std::invalid_argument(what + ": the two ends disagree on its shard or capacity");
      const unsigned backLane = (unsigned)(it - back.begin());
      exSrc.push_back(t[i].sideOut.slice(foam_side_offset(&p, k), foam_side_offset(&p, k + 1)));
      exDst.push_back(t[j].sideIn.slice(foam_side_offset(&p, backLane), foam_side_offset(&p, backLane + 1)));
    }
  };
  // Injector i's direct lane k feeds its lane on the root's child k, which sends
  // back only credit. wired counts, per router, the injector lanes something feeds.
  std::vector<unsigned> wired(spec.nodes.size(), 0);
  auto directLanes = [&](std::size_t i) {
    const NodeSpec &n = spec.nodes[i];
    const foam_params &p = params[i];
    if (n.sides.empty()) return;
    const std::string name = nodeName(n, i);
    const std::size_t root = n.parent < 0 ? 0 : (std::size_t)n.parent;
    const foam_params &rp = params[root];
    if (n.parent < 0 || spec.nodes[root].role != Role::Router || p.side_lanes != rp.fanout || p.level_shift != rp.level_shift)
      throw std::invalid_argument(name + ": direct lanes must lead to every child of its root, by the root's shard bits");
    const unsigned injector = n.lane - rp.fanout;
    for (unsigned k = 0; k < n.sides.size(); ++k) {
      const std::size_t r = n.sides[k];
      const std::string what = name + ": direct lane " + std::to_string(k);
      if (r >= spec.nodes.size() || spec.nodes[r].role != Role::Router || spec.nodes[r].parent != (int)root ||
          spec.nodes[r].lane != k)
        throw std::invalid_argument(what + " does not lead to child " + std::to_string(k) + " of its root");
      const foam_params &q = params[r];
      if (injector >= q.inject_lanes || q.inject_capacity != p.side_capacity)
        throw std::invalid_argument(what + ": the router has no injector lane " + std::to_string(injector) + " of " +
                                    std::to_string(p.side_capacity) + " rays");
      const unsigned lane = q.fanout + injector;
      exSrc.push_back(t[i].sideOut.slice(foam_direct_offset(&p, k, 1), foam_direct_offset(&p, k + 1, 1)));
      exDst.push_back(t[r].inboxes.slice(foam_lane_offset(&q, lane, 0), foam_lane_offset(&q, lane + 1, 0)));
      exSrc.push_back(t[r].outboxes.slice(foam_lane_offset(&q, lane, 1), foam_lane_offset(&q, lane + 1, 1)));
      exDst.push_back(t[i].sideIn.slice(foam_direct_offset(&p, k, 0), foam_direct_offset(&p, k + 1, 0)));
      wired[r]++;
    }
  };
  for (std::size_t i = 0; i < spec.nodes.size(); ++i) {
    const NodeSpec &n = spec.nodes[i];
    NodeTensors &x = t[i];
    const unsigned tile = n.tile;
    statsAll.push_back(x.stats);
    switch (n.role) {
    case Role::Tracer: {
      addLocalVertex(g, step1, "TracerMarch", tile,
                     {{"shard", x.shard}, {"copies", x.copies}, {"camera", x.camera}, {"params", x.params},
                      {"inbox", x.inboxes}, {"sideIn", x.sideIn}, {"pixels", x.pixels}, {"results", x.results},
                      {"ctl", x.ctl}});
      addLocalVertex(g, step2, "TracerSend", tile,
                     {{"params", x.params}, {"inbox", x.inboxes}, {"sideIn", x.sideIn}, {"outbox", x.outboxes},
                      {"sideOut", x.sideOut}, {"pending", x.pending}, {"ctl", x.ctl}, {"stats", x.stats}});
      camDst.push_back(x.camera);
      pixelSlices.push_back(x.pixels);
      resultStores.push_back(x.results);
      for (const Tensor *z : {&x.inboxes, &x.outboxes, &x.sideIn, &x.sideOut, &x.pixels, &x.results, &x.stats})
        zero(*z, tile);
      zeroWords(x.ctl, tile);
      sideLinks(i);
      break;
    }
    case Role::Router: {
      addLocalVertex(g, step1, "RouterCount", tile,
                     {{"params", x.params}, {"inboxes", x.inboxes}, {"queues", x.queues}, {"ctl", x.ctl}});
      addLocalVertex(g, step2, "RouterPlan", tile,
                     {{"params", x.params}, {"inboxes", x.inboxes}, {"outboxes", x.outboxes},
                      {"ctl", x.ctl}, {"stats", x.stats}});
      addLocalVertex(g, step3, "RouterForward", tile,
                     {{"params", x.params}, {"inboxes", x.inboxes}, {"queues", x.queues},
                      {"outboxes", x.outboxes}, {"ctl", x.ctl}});
      for (const Tensor *z : {&x.inboxes, &x.outboxes, &x.stats}) zero(*z, tile);
      zeroWords(x.ctl, tile);
      break;
    }
    case Role::Spill: {
      addLocalVertex(g, step1, "SpillStore", tile,
                     {{"params", x.params}, {"camera", x.camera}, {"inbox", x.inboxes},
                      {"outbox", x.outboxes}, {"spill", x.spill}, {"ctl", x.ctl},
                      {"status", x.status}, {"stats", x.stats}});
      for (const Tensor *z : {&x.inboxes, &x.outboxes, &x.status, &x.stats}) zero(*z, tile);
      zeroWords(x.ctl, tile);
      break;
    }
    case Role::Injector: {
      addLocalVertex(g, step1, "Injector", tile,
                     {{"params", x.params}, {"camera", x.camera}, {"blocks", x.blocks}, {"inbox", x.inboxes},
                      {"held", x.held}, {"outbox", x.outboxes}, {"ctl", x.ctl}, {"status", x.status},
                      {"stats", x.stats}});
      addLocalVertex(g, step2, "InjectorMarch", tile,
                     {{"region", x.region}, {"camera", x.camera}, {"params", x.params},
                      {"outbox", x.outboxes}, {"ctl", x.ctl}});
      addLocalVertex(g, step3, "InjectorSend", tile,
                     {{"params", x.params}, {"inbox", x.inboxes}, {"directIn", x.sideIn}, {"outbox", x.outboxes},
                      {"directOut", x.sideOut}, {"held", x.held}, {"ctl", x.ctl}, {"stats", x.stats}});
      camDst.push_back(x.camera);
      for (const Tensor *z : {&x.inboxes, &x.outboxes, &x.sideIn, &x.sideOut, &x.status, &x.stats}) zero(*z, tile);
      zeroWords(x.ctl, tile);
      directLanes(i);
      break;
    }
    }
    // Each node's upward link: its outbox (or its parent-lane outbox) to the
    // parent's lane inbox, and the parent's lane outbox back down.
    if (n.parent >= 0) {
      const NodeSpec &pn = spec.nodes[(std::size_t)n.parent];
      NodeTensors &px = t[(std::size_t)n.parent];
      const foam_params &p = params[i], &pp = params[(std::size_t)n.parent];
      const bool injector = n.role == Role::Injector;
      if (injector ? pn.role != Role::Router || n.lane < pn.fanout || n.lane >= pn.fanout + pp.inject_lanes
                   : n.lane >= pn.fanout)
        throw std::invalid_argument(nodeName(n, i) + ": lane " + std::to_string(n.lane) + " is not one of its parent's " +
                                    (injector ? "injector lanes" : "child lanes"));
      // Both ends of an edge must agree on its capacity: the exchange copies whole buffers.
      const uint32_t upCap = n.role == Role::Router ? p.parent_capacity : p.link_capacity;
      const uint32_t laneCap = injector ? pp.inject_capacity : pp.link_capacity;
      if (upCap != laneCap)
        throw std::invalid_argument(nodeName(n, i) + ": its edge holds " + std::to_string(upCap) + " rays but its parent's lane " +
                                    std::to_string(laneCap));
      const std::size_t link = linkBytes(upCap), downLink = linkBytes(injector ? 0 : upCap);
      Tensor up = x.outboxes, upIn = x.inboxes;
      if (n.role == Role::Router) {
        up = x.outboxes.slice(foam_lane_offset(&p, foam_parent_lane(&p), 1), foam_lane_offset(&p, foam_parent_lane(&p) + 1, 1));
        upIn = x.inboxes.slice(foam_lane_offset(&p, foam_parent_lane(&p), 0), foam_lane_offset(&p, foam_parent_lane(&p) + 1, 0));
      }
      Tensor parentOut = px.outboxes, parentIn = px.inboxes;
      if (pn.role == Role::Router) {
        parentOut = px.outboxes.slice(foam_lane_offset(&pp, n.lane, 1), foam_lane_offset(&pp, n.lane, 1) + downLink);
        parentIn = px.inboxes.slice(foam_lane_offset(&pp, n.lane, 0), foam_lane_offset(&pp, n.lane, 0) + link);
      }
      if (injector) wired[(std::size_t)n.parent]++;
      exSrc.push_back(up);
      exDst.push_back(parentIn);
      exSrc.push_back(parentOut);
      exDst.push_back(upIn);
    }
  }

  for (std::size_t i = 0; i < spec.nodes.size(); ++i)
    if (spec.nodes[i].role == Role::Router && wired[i] != params[i].inject_lanes)
      throw std::invalid_argument(nodeName(spec.nodes[i], i) + ": " + std::to_string(params[i].inject_lanes) +
                                  " injector lanes but " + std::to_string(wired[i]) + " injectors feed them");

  // One merged exchange for every link (paper §4.8), one broadcast for the camera.
  Tensor cam = t[(std::size_t)spill].camera;
  program::Sequence frameStart;
  frameStart.add(program::Copy(poplar::concat(std::vector<Tensor>(camDst.size(), cam)), poplar::concat(camDst)));
  frameStart.add(program::Execute(reset));
  program::Sequence body;
  body.add(program::Execute(step1));
  body.add(program::Execute(step2));
  body.add(program::Execute(step3));
  body.add(program::Copy(poplar::concat(exSrc), poplar::concat(exDst)));
  program::Repeat steps(spec.rc, body);

  g.createHostWrite(kCameraHandle, cam);
  std::vector<Tensor> regions, blockLists, statuses{t[(std::size_t)spill].status};
  for (std::size_t i : injectors) {
    regions.push_back(t[i].region);
    blockLists.push_back(t[i].blocks);
    statuses.push_back(t[i].status);
  }
  g.createHostWrite(kRegionHandle, poplar::concat(regions));
  g.createHostWrite(kBlocksHandle, poplar::concat(blockLists));
  g.createHostRead(kStatusHandle, poplar::concat(statuses));
  g.createHostRead(kPixelsHandle, poplar::concat(pixelSlices));
  g.createHostRead(kResultsHandle, poplar::concat(resultStores));
  g.createHostRead(kStatsHandle, poplar::concat(statsAll));

  std::vector<program::Program> progs(kNumPrograms);
  progs[kFrameStart] = frameStart;
  progs[kSteps] = steps;
  return progs;
}

}  // namespace foam
