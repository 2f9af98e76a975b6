#include "topology.h"

#include "foam/lanes.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

namespace foam {
namespace {

// The node at the other end of side link `e` from node `i`.
unsigned farEnd(const EdgeSpec &e, std::size_t i) { return e.from == i ? e.to : e.from; }

const char *kindName(EdgeKind k) {
  switch (k) {
  case EdgeKind::Tree: return "tree edge";
  case EdgeKind::Side: return "side link";
  case EdgeKind::Injector: return "injector lane";
  case EdgeKind::Direct: return "direct lane";
  }
  return "edge";
}

std::string edgeName(const RenderSpec &spec, const EdgeSpec &e) {
  auto end = [&](unsigned n) { return n < spec.nodes.size() ? nodeName(spec.nodes[n], n) : "node " + std::to_string(n); };
  return std::string(kindName(e.kind)) + " " + end(e.from) + " -> " + end(e.to);
}

[[noreturn]] void refuse(const std::string &what) { throw std::invalid_argument(what); }

// The roles an edge of `kind` joins, from its lower end to its upper end.
bool joins(EdgeKind kind, Role from, Role to) {
  switch (kind) {
  case EdgeKind::Tree: return (from == Role::Tracer || from == Role::Router) && (to == Role::Router || to == Role::Spill);
  case EdgeKind::Side: return from == Role::Tracer && to == Role::Tracer;
  case EdgeKind::Injector:
  case EdgeKind::Direct: return from == Role::Injector && to == Role::Router;
  }
  return false;
}

// Puts `e` at `lane` of `group`, which must be free.
void place(std::vector<const EdgeSpec *> &group, unsigned lane, const EdgeSpec &e, const RenderSpec &spec) {
  if (lane >= spec.edges.size()) refuse(edgeName(spec, e) + ": lane " + std::to_string(lane) + " is out of range");
  if (group.size() <= lane) group.resize(lane + 1, nullptr);
  if (group[lane]) refuse(edgeName(spec, e) + ": lane " + std::to_string(lane) + " is taken by the " + edgeName(spec, *group[lane]));
  group[lane] = &e;
}

// Every lane of `group` taken, and all of one capacity (a tile packs a group's
// lanes with one stride: foam/lanes.h). Returns that capacity (0 for no lanes).
unsigned complete(const std::vector<const EdgeSpec *> &group, const std::string &node, const char *what) {
  for (std::size_t l = 0; l < group.size(); ++l)
    if (!group[l]) refuse(node + ": " + what + " lane " + std::to_string(l) + " has no edge");
  for (const EdgeSpec *e : group)
    if (e->capacity != group[0]->capacity)
      refuse(node + ": " + what + " lanes of " + std::to_string(group[0]->capacity) + " and " + std::to_string(e->capacity) +
             " rays (a tile's lanes of one kind have one capacity)");
  return group.empty() ? 0u : group[0]->capacity;
}

// Node n's own foam_params as the spec gives it (checked by withLanes on n).
foam_params ownParams(const NodeSpec &n) {
  foam_params p{};
  if (n.params.size() == sizeof p) std::memcpy(&p, n.params.data(), sizeof p);
  return p;
}

// Router i's child lanes as its routing reads them (router.cpp classify): lanes
// 0 .. 2^route_bits - 1 the children its shard-id bits choose (a power of two up to
// FOAM_MAX_FANOUT), every lane after them a tile of one child's replicated shard,
// each such lane named by exactly one child's run (replica_lane, 2^replica_bits - 1
// lanes) and leading to a tracer of the same shard as the child's own lane. A lane
// no run names would never be sent a ray; one that two name, or that leads to
// another shard, would take rays it cannot march. Returns each lane's tile of its
// child's shard as layout.h side_class names it (log2 of the shard's tiles << 4 |
// the lane's index in the run, 0 the child's own lane).
std::vector<uint8_t> checkReplicaLanes(const RenderSpec &spec, std::size_t i, const NodeLanes &lanes, const foam_params &p) {
  constexpr unsigned maxBits = 4;  // route bits and a shard's tiles, as powers of two
  static_assert((1u << maxBits) == FOAM_MAX_FANOUT, "route bits up to log2 FOAM_MAX_FANOUT");
  const std::string name = nodeName(spec.nodes[i], i);
  const std::size_t lanesTotal = lanes.children.size();
  if (p.route_bits > maxBits || (std::size_t(1) << p.route_bits) > lanesTotal)
    refuse(name + ": routes by " + std::to_string(p.route_bits) + " shard-id bits over " + std::to_string(lanesTotal) +
           " child lanes (at most " + std::to_string(maxBits) + " bits, 2^bits lanes)");
  const unsigned children = 1u << p.route_bits;
  std::vector<int> owner(lanesTotal, -1);
  std::vector<uint8_t> tile(lanesTotal, 0);
  for (unsigned c = 0; c < children; ++c) owner[c] = (int)c;
  auto childOf = [&](std::size_t lane) { return lanes.children[lane]->from; };
  for (unsigned c = 0; c < FOAM_MAX_FANOUT; ++c) {
    const unsigned bits = p.replicas.replica_bits[c];
    if (bits == 0) continue;
    const std::string run = name + ": child " + std::to_string(c) + "'s " + std::to_string(1u << std::min(bits, 16u)) + " tiles";
    if (c >= children || bits > maxBits)
      refuse(run + ": no such child, or more than " + std::to_string(FOAM_MAX_FANOUT) + " tiles");
    const unsigned first = p.replicas.replica_lane[c], last = first + (1u << bits) - 2u;
    if (first < children || last >= lanesTotal)
      refuse(run + " take lanes " + std::to_string(first) + " to " + std::to_string(last) + ", outside its " +
             std::to_string(lanesTotal - children) + " replica lanes");
    const NodeSpec &own = spec.nodes[childOf(c)];
    tile[c] = (uint8_t)(bits << 4);
    for (unsigned l = first; l <= last; ++l) {
      if (owner[l] >= 0) refuse(run + ": lane " + std::to_string(l) + " is child " + std::to_string(owner[l]) + "'s already");
      owner[l] = (int)c;
      tile[l] = (uint8_t)(bits << 4 | (l - first + 1u));
      const NodeSpec &far = spec.nodes[childOf(l)];
      if (own.role != Role::Tracer || far.role != Role::Tracer || ownParams(far).shard != ownParams(own).shard)
        refuse(run + ": lane " + std::to_string(l) + " leads to " + nodeName(far, childOf(l)) + ", not a tracer of " +
               nodeName(own, childOf(c)) + "'s shard");
    }
  }
  for (std::size_t l = 0; l < lanesTotal; ++l)
    if (owner[l] < 0) refuse(name + ": child lane " + std::to_string(l) + " is no child's replica (replica_lane)");
  return tile;
}

}  // namespace

std::string nodeName(const NodeSpec &n, std::size_t i) {
  const char *role = n.role == Role::Tracer ? "tracer" : n.role == Role::Router ? "router" : n.role == Role::Injector ? "injector" : "spill";
  return std::string(role) + std::to_string(i) + "@" + std::to_string(n.tile);
}

std::vector<std::vector<unsigned>> edgesAt(const RenderSpec &spec) {
  std::vector<std::vector<unsigned>> at(spec.nodes.size());
  for (std::size_t k = 0; k < spec.edges.size(); ++k) {
    const EdgeSpec &e = spec.edges[k];
    if (e.from >= spec.nodes.size() || e.to >= spec.nodes.size() || e.from == e.to)
      refuse(edgeName(spec, e) + " does not join two nodes of the spec");
    if (!joins(e.kind, spec.nodes[e.from].role, spec.nodes[e.to].role))
      refuse(edgeName(spec, e) + " joins roles that edges of its kind do not");
    at[e.from].push_back((unsigned)k);
    at[e.to].push_back((unsigned)k);
  }
  return at;
}

NodeLanes lanesOf(const RenderSpec &spec, const std::vector<std::vector<unsigned>> &edgesAt, std::size_t i) {
  const std::string name = nodeName(spec.nodes[i], i);
  NodeLanes lanes;
  for (unsigned k : edgesAt[i]) {
    const EdgeSpec &e = spec.edges[k];
    const bool lower = e.from == i;
    if (lower && (e.kind == EdgeKind::Tree || e.kind == EdgeKind::Injector)) {
      if (lanes.up) refuse(name + ": a second edge up, the " + edgeName(spec, e));
      if (e.fromLane != 0) refuse(edgeName(spec, e) + ": an edge up takes lane 0 below");
      lanes.up = &e;
    } else if (e.kind == EdgeKind::Tree) {
      place(lanes.children, e.toLane, e, spec);
    } else if (e.kind == EdgeKind::Side) {
      place(lanes.sides, lower ? e.fromLane : e.toLane, e, spec);
    } else if (lower) {
      place(lanes.direct, e.fromLane, e, spec);
    } else {
      place(lanes.injectors, e.toLane, e, spec);
    }
  }
  complete(lanes.children, name, "child");
  complete(lanes.injectors, name, "injector");
  complete(lanes.sides, name, "side-link");
  complete(lanes.direct, name, "direct");
  return lanes;
}

foam_params withLanes(const RenderSpec &spec, std::size_t i, const NodeLanes &lanes, std::vector<uint8_t> &laneTiles) {
  const NodeSpec &n = spec.nodes[i];
  const std::string name = nodeName(n, i);
  if (n.params.size() != sizeof(foam_params)) refuse(name + ": params must be a foam_params");
  foam_params p = ownParams(n);
  const bool up = lanes.up != nullptr;
  switch (n.role) {
  case Role::Tracer:
    if (!up || !lanes.children.empty() || !lanes.injectors.empty())
      refuse(name + ": a tracer has one edge up to its router, side links and nothing else");
    if (lanes.sides.size() > FOAM_MAX_SIDES) refuse(name + ": more than " + std::to_string(FOAM_MAX_SIDES) + " side links");
    p.link_capacity = lanes.up->capacity;
    p.side_links = (uint32_t)lanes.sides.size();
    p.side_capacity = lanes.sides.empty() ? 0u : lanes.sides[0]->capacity;
    for (std::size_t k = 0; k < lanes.sides.size(); ++k) {
      const unsigned far = farEnd(*lanes.sides[k], i);
      p.side_shard[k] = (uint16_t)ownParams(spec.nodes[far]).shard;
      // TracerSend tries one link into a shard of one tile: a second link to a tile
      // would carry nothing.
      for (std::size_t j = 0; j < k; ++j)
        if (farEnd(*lanes.sides[j], i) == far)
          refuse(name + ": side links " + std::to_string(j) + " and " + std::to_string(k) + " both lead to " +
                 nodeName(spec.nodes[far], far));
      // TracerSend finds a ray's links by bisection.
      if (k > 0 && p.side_shard[k] < p.side_shard[k - 1])
        refuse(name + ": side link " + std::to_string(k) + " leads to shard " + std::to_string(p.side_shard[k]) +
               ", below link " + std::to_string(k - 1) + "'s " + std::to_string(p.side_shard[k - 1]) +
               " (side links go in ascending order of their shard)");
    }
    // Past the links, a shard above every shard: TracerSend's bisection takes the
    // same four steps whatever the links.
    for (std::size_t k = lanes.sides.size(); k < FOAM_MAX_SIDES; ++k) p.side_shard[k] = FOAM_INVALID_SHARD;
    break;
  case Role::Router:
    if (!up || lanes.up->kind != EdgeKind::Tree)
      refuse(name + ": a router has one tree edge up, to its parent or the spill store");
    if (lanes.children.size() < 2 || lanes.children.size() > FOAM_MAX_LANES)
      refuse(name + ": " + std::to_string(lanes.children.size()) + " child lanes; a router has 2 to " +
             std::to_string(FOAM_MAX_LANES));
    laneTiles = checkReplicaLanes(spec, i, lanes, p);
    if (lanes.injectors.size() > FOAM_MAX_INJECTORS)
      refuse(name + ": at most " + std::to_string(FOAM_MAX_INJECTORS) + " injector lanes");
    if (lanes.up->capacity > 0xFFFFu || (!lanes.injectors.empty() && lanes.injectors[0]->capacity > 0xFFFFu))
      refuse(name + ": a parent edge of " + std::to_string(lanes.up->capacity) + " rays or injector lanes of more than 65535 (16 bits)");
    p.fanout = (uint16_t)lanes.children.size();
    p.link_capacity = lanes.children[0]->capacity;
    p.parent_capacity = (uint16_t)lanes.up->capacity;
    p.inject_lanes = (uint16_t)lanes.injectors.size();
    p.inject_capacity = lanes.injectors.empty() ? 0u : (uint16_t)lanes.injectors[0]->capacity;
    break;
  case Role::Spill:
    if (up || lanes.children.size() != 1) refuse(name + ": the spill store has one edge, from the root");
    p.link_capacity = lanes.children[0]->capacity;
    break;
  case Role::Injector:
    if (!up || lanes.up->kind != EdgeKind::Injector || lanes.direct.size() > FOAM_MAX_FANOUT)
      refuse(name + ": an injector has one lane to the root and up to " + std::to_string(FOAM_MAX_FANOUT) + " direct lanes");
    p.link_capacity = lanes.up->capacity;
    if (p.link_capacity > 0xFFFFu || foam_injector_queue(&p) > 0xFFFFu)  // foam_inject_up's `next` is 16 bits
      refuse(name + ": a lane to the root of " + std::to_string(p.link_capacity) + " rays and a queue of " +
             std::to_string(foam_injector_queue(&p)) + "; at most 65535 each");
    p.direct_lanes = (uint16_t)lanes.direct.size();
    if (!lanes.direct.empty() && lanes.direct[0]->capacity > 0xFFFFu)
      refuse(name + ": direct lanes of " + std::to_string(lanes.direct[0]->capacity) + " rays; at most 65535 (16 bits)");
    p.direct_capacity = lanes.direct.empty() ? 0u : (uint16_t)lanes.direct[0]->capacity;
    // The root's bits choose a ray's child, and the child its direct lane
    // (directLanes fills the map, which needs the routers' lanes).
    if (!lanes.direct.empty()) p.level_shift = ownParams(spec.nodes[lanes.up->to]).level_shift;
    break;
  }
  return p;
}

namespace {

// Injector `i`'s direct lanes lead to children of the root its lane leads to, in
// ascending order of child, one at most to each: its map (foam_params.direct_lane)
// gives each child's lane, and a ray for a child without one takes the root's lane.
void directLanes(const RenderSpec &spec, Topology &t, std::size_t i) {
  const NodeLanes &lanes = t.lanes[i];
  foam_params &p = t.params[i];
  for (unsigned k = 0; k < FOAM_MAX_FANOUT; ++k) p.direct_lane[k] = FOAM_NO_DIRECT_LANE;
  if (lanes.direct.empty()) return;
  const std::string name = nodeName(spec.nodes[i], i);
  if (lanes.up->to != t.root) refuse(name + ": its lane leads to a router that is not the root");
  const foam_params &root = t.params[t.root];
  if (root.fanout != (1u << root.route_bits) || root.fanout > FOAM_MAX_FANOUT)
    refuse(name + ": direct lanes, but the root's " + std::to_string(root.fanout) +
           " child lanes are not the children its shard-id bits choose");
  p.route_bits = root.route_bits;
  for (std::size_t k = 0; k < lanes.direct.size(); ++k) {
    const NodeLanes &at = t.lanes[lanes.direct[k]->to];
    if (!at.up || at.up->to != t.root)
      refuse(name + ": direct lane " + std::to_string(k) + " does not lead to a child of the root");
    const unsigned child = at.up->toLane;
    if (k > 0 && t.lanes[lanes.direct[k - 1]->to].up->toLane >= child)
      refuse(name + ": direct lane " + std::to_string(k) + " leads to child " + std::to_string(child) +
             " of the root, not past lane " + std::to_string(k - 1) + "'s (direct lanes go in ascending order of child)");
    p.direct_lane[child] = (uint8_t)k;
  }
}

// A router shares out upward credit with 32-bit products (the IPU has no 64-bit
// multiply or divide): its queue's room times a prefix of its lanes' demands, at most
// every upward lane's capacity.
void checkCreditProducts(const NodeSpec &n, std::size_t i, const foam_params &p) {
  const uint64_t lanes = (uint64_t)p.fanout * p.link_capacity + (uint64_t)p.inject_lanes * p.inject_capacity;
  if (lanes * p.queue_capacity > UINT32_MAX)
    refuse(nodeName(n, i) + ": upward lanes of " + std::to_string(lanes) + " rays in all with a queue of " +
           std::to_string(p.queue_capacity) + " overflow 32 bits");
}

// Which tile of its shard tracer `i` is (layout.h side_class): its lane's at its
// router (checkReplicaLanes), aligned where that router routes by shard-id bits
// too (a replicas' router of its own routes by none).
uint8_t tileClass(const Topology &t, std::size_t i) {
  const EdgeSpec &up = *t.lanes[i].up;
  const uint8_t tile = t.laneTiles[up.to][up.toLane];
  return (uint8_t)(tile && t.params[up.to].route_bits ? tile | FOAM_SIDE_CLASS_ALIGNED : tile);
}

}  // namespace

Topology topology(const RenderSpec &spec) {
  Topology t;
  const auto at = edgesAt(spec);
  bool spill = false;
  for (std::size_t i = 0; i < spec.nodes.size(); ++i) {
    t.lanes.push_back(lanesOf(spec, at, i));
    t.laneTiles.emplace_back();
    t.params.push_back(withLanes(spec, i, t.lanes.back(), t.laneTiles.back()));
    switch (spec.nodes[i].role) {
    case Role::Spill:
      if (spill) refuse("more than one spill store");
      spill = true;
      t.spill = i;
      t.root = t.lanes[i].children[0]->from;
      break;
    case Role::Injector: t.injectors.push_back(i); break;
    case Role::Router: checkCreditProducts(spec.nodes[i], i, t.params[i]); break;
    case Role::Tracer: t.tracers++; break;
    }
  }
  if (!spill) refuse("the plan has no spill store");
  if (spec.nodes[t.root].role != Role::Router) refuse("the spill store's edge must come from the root router");
  if (t.injectors.empty()) refuse("the plan has no injector");
  for (std::size_t i = 0; i < spec.nodes.size(); ++i)
    if (spec.nodes[i].role == Role::Tracer)
      for (std::size_t k = 0; k < t.lanes[i].sides.size(); ++k)
        t.params[i].side_class[k] = tileClass(t, farEnd(*t.lanes[i].sides[k], i));
  for (std::size_t i : t.injectors) {
    if (t.lanes[i].up->to != t.root) refuse(nodeName(spec.nodes[i], i) + ": its lane must lead to the root");
    directLanes(spec, t, i);
  }
  return t;
}

}  // namespace foam
