#include "render_graph.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

#include <poplar/ArrayRef.hpp>

#include "foam/lanes.h"
#include "foam/layout.h"
#include "tile_bytes.h"
#include "topology.h"

namespace foam {
namespace {

using poplar::ComputeSet;
using poplar::Graph;
using poplar::Tensor;
using poplar::UNSIGNED_CHAR;
using poplar::UNSIGNED_INT;
namespace program = poplar::program;

// The tensors one node owns, all mapped to its tile (tile_bytes.h names them).
struct NodeTensors {
  Tensor params, stats, ctl, camera, status;
  Tensor inbox, outbox, sideIn, sideOut, directIn, directOut, store;
  Tensor pixels, results, shard, copies, region, blocks;
  Tensor repeatCount;  // spill store: the steps loop's iterations per host call
  Tensor finishes;     // spill store: every tracer's finished pixels (tile_bytes.h)
};

// Where an edge's rays arrive at one end, and the buffer that end sends from.
struct LaneEnd {
  Tensor in, out;
};

// The compute sets of a step in program order and where each vertex runs; `reset`
// zeroes a frame's state. Indices into `steps`, so that no ComputeSet is ever
// default-constructed.
struct ComputeSets {
  StepLayout at;
  std::vector<ComputeSet> steps;
  ComputeSet reset;
  ComputeSet operator[](unsigned step) const { return steps.at(step); }
};

ComputeSets computeSets(Graph &g, Schedule schedule) {
  ComputeSets cs{stepLayout(schedule), {}, g.addComputeSet("frame/reset")};
  for (const char *name : cs.at.names) cs.steps.push_back(g.addComputeSet(name));
  return cs;
}

using Fields = std::initializer_list<std::pair<const char *, Tensor>>;

// A tracer's copies directory as the plan made it (an empty one for none), checked:
// shards of tracers (`tracerOf` finds the tracer holding a shard id) in ascending
// order, each at the offset the directory gives it after the ones before.
foam_region_header copyDirectory(const RenderSpec &spec, const NodeSpec &n, const std::string &name,
                                 const std::vector<int> &tracerOf) {
  foam_region_header h{};
  if (!n.copies.empty() && n.copies.size() != sizeof h)
    throw std::invalid_argument(name + ": copies must be a foam_region_header");
  if (!n.copies.empty()) std::memcpy(&h, n.copies.data(), sizeof h);
  if (h.count > FOAM_REGION_MAX_SHARDS) throw std::invalid_argument(name + ": too many shard copies");
  std::size_t end = sizeof h;
  for (uint32_t k = 0; k < h.count; ++k) {
    const std::string what = name + ": copy " + std::to_string(k);
    if (h.shard[k] >= tracerOf.size() || tracerOf[h.shard[k]] < 0 || (k > 0 && h.shard[k] <= h.shard[k - 1]))
      throw std::invalid_argument(what + " is not a tracer's shard in ascending order");
    if (h.offset[k] != end) throw std::invalid_argument(what + " is not where the header puts it");
    end += spec.nodes[(std::size_t)tracerOf[h.shard[k]]].shardBytes;
  }
  h.total_bytes = (uint32_t)end;
  return h;
}

// A tracer's copies: its directory, then the blobs it lists.
std::vector<uint8_t> copyRegion(const RenderSpec &spec, const foam_region_header &h, const std::vector<int> &tracerOf) {
  std::vector<uint8_t> region(sizeof h);
  std::memcpy(region.data(), &h, sizeof h);
  for (uint32_t k = 0; k < h.count; ++k) {
    const NodeSpec &src = spec.nodes[(std::size_t)tracerOf[h.shard[k]]];
    const uint8_t *blob = spec.shardBytes.data() + src.shardOffset;
    region.insert(region.end(), blob, blob + src.shardBytes);
  }
  return region;
}

// The tracer node of each shard id, -1 for none.
std::vector<int> tracersByShard(const RenderSpec &spec, const Topology &topo) {
  std::vector<int> tracerOf;
  for (std::size_t i = 0; i < spec.nodes.size(); ++i) {
    if (spec.nodes[i].role != Role::Tracer) continue;
    const uint32_t id = topo.params[i].shard;
    if (id >= tracerOf.size()) tracerOf.resize(id + 1, -1);
    tracerOf[id] = (int)i;
  }
  return tracerOf;
}

// Node i's tensor bytes, with its copies' directory (tracers).
TileBytes nodeBytes(const RenderSpec &spec, const Topology &topo, const std::vector<int> &tracerOf, std::size_t i,
                    foam_region_header *directory) {
  const NodeSpec &n = spec.nodes[i];
  std::size_t copies = 0;
  if (n.role == Role::Tracer) {
    *directory = copyDirectory(spec, n, nodeName(n, i), tracerOf);
    copies = directory->total_bytes;
  }
  return tileBytes(n.role, topo.params[i], {spec.slicePixels, n.shardBytes, copies, spec.regionBytes, topo.tracers});
}

class Builder {
public:
  Builder(Graph &g, const RenderSpec &spec) : g_(g), spec_(spec), topo_(topology(spec)), t_(spec.nodes.size()) {}

  std::vector<program::Program> build() {
    for (const auto &file : spec_.codeletFiles) g_.addCodelets(file, poplar::CodeletFileType::Auto, spec_.codeletFlags);
    checkBlobs();
    for (std::size_t i = 0; i < spec_.nodes.size(); ++i) allocate(i);
    const ComputeSets cs = computeSets(g_, spec_.schedule);
    for (std::size_t i = 0; i < spec_.nodes.size(); ++i) addVertices(cs, i);
    for (const EdgeSpec &e : spec_.edges) exchange(e);
    finishesToSpill();
    addHostStreams();
    return programs(cs);
  }

private:
  // ---- tensors ----

  Tensor bytes(unsigned tile, std::size_t n, const std::string &name) {
    Tensor t = g_.addVariable(UNSIGNED_CHAR, {n}, name);
    g_.setTileMapping(t, tile);
    return t;
  }

  Tensor words(unsigned tile, std::size_t n, const std::string &name) {
    Tensor t = g_.addVariable(UNSIGNED_INT, {n / 4}, name);
    g_.setTileMapping(t, tile);
    return t;
  }

  Tensor constant(unsigned tile, const uint8_t *data, std::size_t n, const std::string &name) {
    Tensor t = g_.addConstant<unsigned char>(UNSIGNED_CHAR, {n}, poplar::ArrayRef<unsigned char>(data, n), name);
    g_.setTileMapping(t, tile);
    return t;
  }

  // Shard blobs within the spec's bytes, and a camera region of whole words that
  // holds at least its directory.
  void checkBlobs() {
    if (spec_.regionBytes < sizeof(foam_region_header) || spec_.regionBytes % 4)
      throw std::invalid_argument("the camera region must hold its header and be whole words");
    for (std::size_t i = 0; i < spec_.nodes.size(); ++i) {
      const NodeSpec &n = spec_.nodes[i];
      if (n.role != Role::Tracer) continue;
      if (n.shardOffset + n.shardBytes > spec_.shardBytes.size())
        throw std::invalid_argument(nodeName(n, i) + ": shard blob out of range");
    }
    tracerOf_ = tracersByShard(spec_, topo_);
  }

  void allocate(std::size_t i) {
    const NodeSpec &n = spec_.nodes[i];
    const foam_params &p = topo_.params[i];
    const std::string name = nodeName(n, i);
    NodeTensors &x = t_[i];
    foam_region_header directory{};
    const TileBytes b = nodeBytes(spec_, topo_, tracerOf_, i, &directory);
    x.params = constant(n.tile, reinterpret_cast<const uint8_t *>(&p), b.params, name + "/params");
    x.stats = bytes(n.tile, b.stats, name + "/stats");
    x.ctl = words(n.tile, b.ctl, name + "/ctl");
    x.inbox = bytes(n.tile, b.inbox, name + (n.role == Role::Router ? "/inboxes" : "/inbox"));
    x.outbox = bytes(n.tile, b.outbox, name + (n.role == Role::Router ? "/outboxes" : "/outbox"));
    if (n.role != Role::Router) x.camera = bytes(n.tile, b.camera, name + "/camera");
    switch (n.role) {
    case Role::Tracer:
      x.shard = constant(n.tile, spec_.shardBytes.data() + n.shardOffset, b.shard, name + "/shard");
      x.copies = constant(n.tile, copyRegion(spec_, directory, tracerOf_).data(), b.copies, name + "/copies");
      x.store = bytes(n.tile, b.store, name + "/pending");
      x.sideIn = bytes(n.tile, b.sideIn, name + "/side-in");
      x.sideOut = bytes(n.tile, b.sideOut, name + "/side-out");
      x.pixels = bytes(n.tile, b.pixels, name + "/pixels");
      x.results = bytes(n.tile, b.results, name + "/results");
      break;
    case Role::Router: x.store = bytes(n.tile, b.store, name + "/queues"); break;
    case Role::Spill:
      x.store = bytes(n.tile, b.store, name + "/spill");
      x.status = bytes(n.tile, b.status, name + "/status");
      x.finishes = bytes(n.tile, b.finishes, name + "/finishes");
      x.repeatCount = g_.addConstant<unsigned>(UNSIGNED_INT, {1}, spec_.rc, name + "/repeat-count");
      g_.setTileMapping(x.repeatCount, n.tile);
      break;
    case Role::Injector:
      x.status = bytes(n.tile, b.status, name + "/status");
      x.directIn = bytes(n.tile, b.directIn, name + "/direct-in");
      x.directOut = bytes(n.tile, b.directOut, name + "/direct-out");
      x.store = bytes(n.tile, b.store, name + "/queue");
      // Written with each camera: the shards its rays cross first, and its blocks.
      x.region = bytes(n.tile, b.region, name + "/camera-region");
      x.blocks = bytes(n.tile, b.blocks, name + "/blocks");
      break;
    }
  }

  // ---- vertices ----

  // A vertex on `tile` whose fields each connect one contiguous tensor region on that
  // tile. The graph's exchange is its explicit Copy programs (one merged exchange per
  // step), so a field must never lean on the exchange Poplar inserts for data that is
  // elsewhere: that would add an unplanned exchange to every step.
  void addLocalVertex(ComputeSet cs, const char *type, unsigned tile, Fields fields) {
    auto v = g_.addVertex(cs, type);
    for (const auto &f : fields) {
      const Graph::TileToTensorMapping mapping = g_.getTileMapping(f.second);
      for (unsigned other = 0; other < mapping.size(); ++other)
        if (other != tile && !mapping[other].empty())
          throw std::logic_error(std::string("render graph: ") + type + " on tile " + std::to_string(tile) + ": field '" +
                                 f.first + "' has data on tile " + std::to_string(other));
      if (!f.second.isContiguous())
        throw std::logic_error(std::string("render graph: ") + type + " on tile " + std::to_string(tile) + ": field '" +
                               f.first + "' is not one contiguous region");
      g_.connect(v[f.first], f.second);
    }
    g_.setTileMapping(v, tile);
  }

  // Frame start zeroes what a frame's rays and counters leave behind: the tensors
  // tile_bytes.h lists for the role.
  void zero(const ComputeSets &cs, std::size_t i) {
    const NodeTensors &x = t_[i];
    const Role role = spec_.nodes[i].role;
    for (Zeroed z : zeroedAtFrameStart(role)) {
      const Tensor &t = tensorOf(x, z);
      if (z == Zeroed::Ctl) {
        addLocalVertex(cs.reset, "ZeroWords", spec_.nodes[i].tile, {{"data", t}});
        continue;
      }
      for (const auto &[begin, end] : zeroSlices(role, z, t.numElements()))
        addLocalVertex(cs.reset, "ZeroBytes", spec_.nodes[i].tile, {{"data", t.slice(begin, end)}});
    }
  }

  static const Tensor &tensorOf(const NodeTensors &x, Zeroed z) {
    switch (z) {
    case Zeroed::Inbox: return x.inbox;
    case Zeroed::Outbox: return x.outbox;
    case Zeroed::SideIn: return x.sideIn;
    case Zeroed::SideOut: return x.sideOut;
    case Zeroed::DirectIn: return x.directIn;
    case Zeroed::DirectOut: return x.directOut;
    case Zeroed::Pixels: return x.pixels;
    case Zeroed::Status: return x.status;
    case Zeroed::Stats: return x.stats;
    case Zeroed::Finishes: return x.finishes;
    case Zeroed::Ctl: return x.ctl;
    }
    throw std::logic_error("render graph: a zeroed tensor of no kind");
  }

  void addVertices(const ComputeSets &cs, std::size_t i) {
    const NodeTensors &x = t_[i];
    const unsigned tile = spec_.nodes[i].tile;
    switch (spec_.nodes[i].role) {
    case Role::Tracer:
      addLocalVertex(cs[cs.at.tracerMarch], "TracerMarch", tile,
                     {{"shard", x.shard}, {"copies", x.copies}, {"camera", x.camera}, {"params", x.params},
                      {"inbox", x.inbox}, {"sideIn", x.sideIn}, {"pending", x.store}, {"pixels", x.pixels},
                      {"results", x.results}, {"ctl", x.ctl}});
      addLocalVertex(cs[cs.at.tracerSend], "TracerSend", tile,
                     {{"params", x.params}, {"inbox", x.inbox}, {"sideIn", x.sideIn}, {"outbox", x.outbox},
                      {"sideOut", x.sideOut}, {"pending", x.store}, {"ctl", x.ctl}, {"stats", x.stats}});
      zero(cs, i);
      break;
    case Role::Router:
      // Counted and planned in one set: one vertex does both, in one worker.
      if (cs.at.count == cs.at.plan) {
        addLocalVertex(cs[cs.at.plan], "RouterCountPlan", tile,
                       {{"params", x.params}, {"inboxes", x.inbox}, {"outboxes", x.outbox}, {"ctl", x.ctl},
                        {"stats", x.stats}});
      } else {
        addLocalVertex(cs[cs.at.count], "RouterCount", tile,
                       {{"params", x.params}, {"inboxes", x.inbox}, {"ctl", x.ctl}});
        addLocalVertex(cs[cs.at.plan], "RouterPlan", tile,
                       {{"params", x.params}, {"inboxes", x.inbox}, {"outboxes", x.outbox}, {"ctl", x.ctl},
                        {"stats", x.stats}});
      }
      addLocalVertex(cs[cs.at.forward], "RouterForward", tile,
                     {{"params", x.params}, {"inboxes", x.inbox}, {"queues", x.store}, {"outboxes", x.outbox},
                      {"ctl", x.ctl}});
      zero(cs, i);
      break;
    case Role::Spill:
      addLocalVertex(cs[cs.at.spill], "SpillStore", tile,
                     {{"params", x.params}, {"camera", x.camera}, {"inbox", x.inbox}, {"outbox", x.outbox},
                      {"spill", x.store}, {"ctl", x.ctl}, {"status", x.status}, {"stats", x.stats},
                      {"finishes", x.finishes}});
      zero(cs, i);
      break;
    case Role::Injector: {
      // Emit, march, deal (injector.cpp) in the sets the schedule gives them; merged,
      // the march comes first beside the tracers' and the emit last, for the next step.
      // Dealt and emitted in one set: one vertex deals, then emits.
      const bool dealEmit = cs.at.deal == cs.at.emit;
      if (!dealEmit)
        addLocalVertex(cs[cs.at.emit], "Injector", tile,
                       {{"params", x.params}, {"camera", x.camera}, {"blocks", x.blocks}, {"inbox", x.inbox},
                        {"queue", x.store}, {"outbox", x.outbox}, {"ctl", x.ctl}, {"status", x.status},
                        {"stats", x.stats}});
      addLocalVertex(cs[cs.at.injectorMarch], "InjectorMarch", tile,
                     {{"region", x.region}, {"camera", x.camera}, {"params", x.params}, {"queue", x.store},
                      {"ctl", x.ctl}});
      if (dealEmit)
        addLocalVertex(cs[cs.at.deal], "InjectorDealEmit", tile,
                       {{"params", x.params}, {"camera", x.camera}, {"blocks", x.blocks}, {"inbox", x.inbox},
                        {"directIn", x.directIn}, {"queue", x.store}, {"outbox", x.outbox},
                        {"directOut", x.directOut}, {"ctl", x.ctl}, {"status", x.status}, {"stats", x.stats}});
      else
        addLocalVertex(cs[cs.at.deal], "InjectorSend", tile,
                       {{"params", x.params}, {"inbox", x.inbox}, {"directIn", x.directIn}, {"queue", x.store},
                        {"outbox", x.outbox}, {"directOut", x.directOut}, {"ctl", x.ctl}, {"stats", x.stats}});
      zero(cs, i);
      break;
    }
    }
  }

  // ---- exchange ----

  // A router's lane l: its slices of the router's inboxes and outboxes.
  LaneEnd routerLane(std::size_t r, unsigned l) const {
    const foam_params &p = topo_.params[r];
    const NodeTensors &x = t_[r];
    return {x.inbox.slice(foam_lane_offset(&p, l, 0), foam_lane_offset(&p, l + 1, 0)),
            x.outbox.slice(foam_lane_offset(&p, l, 1), foam_lane_offset(&p, l + 1, 1))};
  }

  // Where edge `e` ends on node `i` (its `from` or its `to`).
  LaneEnd end(const EdgeSpec &e, std::size_t i) const {
    const NodeTensors &x = t_[i];
    const foam_params &p = topo_.params[i];
    const bool lower = e.from == i;
    switch (e.kind) {
    case EdgeKind::Tree:
      if (spec_.nodes[i].role == Role::Router) return routerLane(i, lower ? foam_parent_lane(&p) : e.toLane);
      return {x.inbox, x.outbox};  // a tracer's edge up, the spill store's edge down
    case EdgeKind::Side: {
      const unsigned k = lower ? e.fromLane : e.toLane;
      return {x.sideIn.slice(foam_side_offset(&p, k), foam_side_offset(&p, k + 1)),
              x.sideOut.slice(foam_side_offset(&p, k), foam_side_offset(&p, k + 1))};
    }
    case EdgeKind::Injector:
      if (lower) return {x.inbox, x.outbox};
      return routerLane(i, p.fanout + e.toLane);
    case EdgeKind::Direct:
      if (lower)
        return {x.directIn.slice(foam_direct_offset(&p, e.fromLane, 0), foam_direct_offset(&p, e.fromLane + 1, 0)),
                x.directOut.slice(foam_direct_offset(&p, e.fromLane, 1), foam_direct_offset(&p, e.fromLane + 1, 1))};
      return routerLane(i, p.fanout + e.toLane);
    }
    throw std::logic_error("render graph: an edge of no kind");
  }

  // Both buffers of an edge, in the one merged exchange of a step (paper §4.8).
  void exchange(const EdgeSpec &e) {
    const LaneEnd a = end(e, e.from), b = end(e, e.to);
    exSrc_.push_back(a.out);
    exDst_.push_back(b.in);
    exSrc_.push_back(b.out);
    exDst_.push_back(a.in);
  }

  // Every tracer's count of finished pixels, the `finished` word of the header on its
  // edge up (TracerSend writes it), to its word of the spill store's `finishes` in
  // the same exchange: the spill store then sees the frame's last pixel one step
  // after it is written, where summed up the router tree it took a step per level.
  void finishesToSpill() {
    const Tensor &to = t_[topo_.spill].finishes;
    const std::size_t at = offsetof(foam_link_header, finished);
    std::size_t k = 0;
    for (std::size_t i = 0; i < spec_.nodes.size(); ++i) {
      if (spec_.nodes[i].role != Role::Tracer) continue;
      exSrc_.push_back(t_[i].outbox.slice(at, at + sizeof(uint32_t)));
      exDst_.push_back(to.slice(k, k + sizeof(uint32_t)));
      k += sizeof(uint32_t);
    }
  }

  // ---- programs and host streams ----

  // Tensors of `field` of the nodes of `roles`, in node order.
  std::vector<Tensor> of(Tensor NodeTensors::*field, std::initializer_list<Role> roles) const {
    std::vector<Tensor> out;
    for (std::size_t i = 0; i < spec_.nodes.size(); ++i)
      for (Role r : roles)
        if (spec_.nodes[i].role == r) out.push_back(t_[i].*field);
    return out;
  }

  void addHostStreams() {
    g_.createHostWrite(kCameraHandle, t_[topo_.spill].camera);
    g_.createHostWrite(kRegionHandle, poplar::concat(of(&NodeTensors::region, {Role::Injector})));
    g_.createHostWrite(kBlocksHandle, poplar::concat(of(&NodeTensors::blocks, {Role::Injector})));
    std::vector<Tensor> statuses{t_[topo_.spill].status};
    for (const Tensor &s : of(&NodeTensors::status, {Role::Injector})) statuses.push_back(s);
    g_.createHostRead(kStatusHandle, poplar::concat(statuses));
    g_.createHostRead(kPixelsHandle, poplar::concat(of(&NodeTensors::pixels, {Role::Tracer})));
    g_.createHostRead(kResultsHandle, poplar::concat(of(&NodeTensors::results, {Role::Tracer})));
    // Each tracer worker's count of the results it kept (foam_tracer_ctl.work): the
    // host reads those slots of the stores and no others, so the frame start need not
    // clear the stores, the largest tensors some tracers zero.
    std::vector<Tensor> counts;
    for (std::size_t i = 0; i < spec_.nodes.size(); ++i) {
      if (spec_.nodes[i].role != Role::Tracer) continue;
      for (unsigned w = 0; w < FOAM_WORKERS; ++w) {
        const std::size_t at = offsetof(foam_tracer_ctl, work) / 4 + w * FOAM_TW_COUNTERS + FOAM_TW_RESULTS;
        counts.push_back(t_[i].ctl.slice(at, at + 1));
      }
    }
    g_.createHostRead(kResultCountsHandle, poplar::concat(counts));
    g_.createHostRead(kStatsHandle, poplar::concat(of(&NodeTensors::stats, {Role::Tracer, Role::Router, Role::Spill, Role::Injector})));
    std::vector<Tensor> work;
    for (std::size_t i = 0; i < spec_.nodes.size(); ++i) {
      const Tensor &c = t_[i].ctl;
      auto words = [&](std::size_t offset, std::size_t bytes) { work.push_back(c.slice(offset / 4, (offset + bytes) / 4)); };
      switch (spec_.nodes[i].role) {
      case Role::Tracer: words(0, offsetof(foam_tracer_ctl, work) + sizeof(foam_tracer_ctl::work)); break;
      case Role::Injector: words(offsetof(foam_injector_ctl, work), sizeof(foam_injector_ctl::work)); break;
      // From the queues' sizes RouterCount walked (their runs, not their rays) to the
      // counts, then the shares RouterForward divides over its lanes when they are short.
      case Role::Router:
        words(offsetof(foam_router_ctl, src_up_count),
              offsetof(foam_router_ctl, counts) + sizeof(foam_router_ctl::counts) - offsetof(foam_router_ctl, src_up_count));
        words(offsetof(foam_router_ctl, share_avail), offsetof(foam_router_ctl, allowed_by) - offsetof(foam_router_ctl, share_avail));
        break;
      case Role::Spill: break;
      }
    }
    g_.createHostRead(kWorkHandle, poplar::concat(work));
  }

  // Frame start: the camera broadcast from the spill store's copy to every tile that
  // marches, and the reset; steps: Repeat(rc){the schedule's compute sets; one exchange},
  // or where the frame ends on the device, the spill store's steps_left set to rc and
  // RepeatWhileTrue(steps_left){the same}: SpillStore counts it down, to 0 once the
  // frame is finished.
  std::vector<program::Program> programs(const ComputeSets &cs) const {
    const Tensor cam = t_[topo_.spill].camera;
    const std::vector<Tensor> cameras = of(&NodeTensors::camera, {Role::Tracer, Role::Injector});
    program::Sequence frameStart;
    frameStart.add(program::Copy(poplar::concat(std::vector<Tensor>(cameras.size(), cam)), poplar::concat(cameras)));
    frameStart.add(program::Execute(cs.reset));
    program::Sequence body;
    for (const ComputeSet &set : cs.steps) body.add(program::Execute(set));
    body.add(program::Copy(poplar::concat(exSrc_), poplar::concat(exDst_)));
    std::vector<program::Program> progs(kNumPrograms);
    progs[kFrameStart] = frameStart;
    if (spec_.endsOnDevice) {
      const NodeTensors &spill = t_[topo_.spill];
      const std::size_t at = offsetof(foam_spill_ctl, steps_left) / sizeof(uint32_t);
      const Tensor left = spill.ctl.slice(at, at + 1);
      progs[kSteps] = program::Sequence({program::Copy(spill.repeatCount, left),
                                         program::RepeatWhileTrue(program::Sequence(), left, body)});
    } else {
      progs[kSteps] = program::Repeat(spec_.rc, body);
    }
    return progs;
  }

  Graph &g_;
  const RenderSpec &spec_;
  const Topology topo_;
  std::vector<NodeTensors> t_;
  std::vector<int> tracerOf_;  // the tracer node of each shard id, -1 for none
  std::vector<Tensor> exSrc_, exDst_;
};

}  // namespace

StepLayout stepLayout(Schedule schedule) {
  switch (schedule) {
  case Schedule::Apart:  // the injectors march in a set of their own
    return {{"step/march+count+spill+emit", "step/send+plan+inject-march", "step/forward+deal"},
            0, 1, 0, 1, 2, 0, 0, 1, 2};
  case Schedule::MergedMarch:  // the injectors march beside the tracers, emit last
    return {{"step/march+count+spill", "step/send+plan+deal", "step/forward+emit"}, 0, 1, 0, 1, 2, 0, 2, 0, 1};
  case Schedule::ForwardBesideMarch:
    // A router's forward costs a few times its count and plan together; beside the
    // march it no longer adds a busiest tile of its own to every step.
    return {{"step/count+emit", "step/plan", "step/march+forward+spill", "step/send+deal"}, 2, 3, 0, 1, 2, 2, 0, 2, 3};
  case Schedule::SendBesideForward:
    // The routers count beside the march and forward beside the send: a step
    // waits for the march, the plan and the larger of forward and send, where
    // the four-set step waited for count, plan, march and send one after another.
    return {{"step/march+count+spill", "step/plan+deal", "step/forward+send+emit"}, 0, 2, 0, 1, 2, 0, 2, 0, 1};
  case Schedule::PlanBesideMarch:
    // The routers count and plan in one worker beside the march, which on most
    // steps outlasts both: the step no longer waits for a set where only the plan
    // (and the injectors' deal) runs.
    return {{"step/march+count+plan+spill", "step/forward+send+deal+emit"}, 0, 1, 0, 0, 1, 0, 1, 0, 1};
  }
  throw std::invalid_argument("render graph: a schedule of no kind");
}

std::vector<program::Program> buildRenderGraph(Graph &g, const RenderSpec &spec) { return Builder(g, spec).build(); }

std::vector<TileBytes> specTileBytes(const RenderSpec &spec) {
  const Topology topo = topology(spec);
  const std::vector<int> tracerOf = tracersByShard(spec, topo);
  std::vector<TileBytes> out;
  foam_region_header directory{};
  for (std::size_t i = 0; i < spec.nodes.size(); ++i) out.push_back(nodeBytes(spec, topo, tracerOf, i, &directory));
  return out;
}

}  // namespace foam
