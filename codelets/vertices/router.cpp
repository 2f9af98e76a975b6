// Router tiles of the ray-routing tree (paper §4.3, with wider nodes): every step
// each router moves the rays of its inboxes (one per child and the parent) and of
// its two queues onto its outboxes, in three compute sets — count, plan, forward —
// so that workers write disjoint ranges without atomics, locks or barriers.
//
// Lane l < fanout is child l; the root, and with direct lanes the routers under
// it, then have one lane per injector tile, and the last lane is the parent
// (foam/lanes.h packs them).
//
// Deadlock freedom: rays arriving from the parent only go down; rays arriving from
// a child or an injector go down into a subtree ("turn") or up. A turn that finds
// its child lane out of credit may go up instead ("escape"), so the upward path
// never waits on a downward one; at the root the spill store takes
// what goes up, and the root's allowance to the injectors keeps every ray in
// flight within that store. Injector lanes are upward lanes: on a router under
// the root too, their rays turn down or go up. Credits bound every queue, so
// nothing drops.
#include <poplar/Vertex.hpp>

#include "foam/codelet.h"

#include <stddef.h>
#include <string.h>

#include "foam/lanes.h"
#include "foam/layout.h"
#include "foam/probe.h"
#include "foam/ray.h"

using namespace poplar;


namespace {

// Which shard ids a router's subtree holds and which child each goes to: by the
// id's bits, or over the replicas of one shard by the pixel (hashBits > 0).
struct Route {
  uint32_t prefix, subtreeShift, levelShift, childMask, hashBits;
};

inline Route routeOf(const foam_params &p) {
  uint32_t bits = 0;  // log2 of the fanout, a power of two
  while ((1u << bits) < p.fanout) ++bits;
  if (p.replicas) return Route{p.shard, 0, 0, p.fanout - 1, bits};
  return Route{p.shard, p.level_shift + bits, p.level_shift, p.fanout - 1, 0};
}

// Category of the ray in `slot` (FOAM_CAT_*), or -1 for an empty slot.
inline int classify(const Route &r, const unsigned char *slot, bool fromParent) {
  const uint16_t shard = foam_slot_shard(slot);
  if (shard == FOAM_INVALID_SHARD) return -1;
  bool inSubtree = ((uint32_t)shard >> r.subtreeShift) == r.prefix;
  if (!inSubtree) return FOAM_CAT_UP;
  int child = r.hashBits ? (int)foam_replica_child(foam_slot_px(slot), r.hashBits)
                         : (int)(((uint32_t)shard >> r.levelShift) & r.childMask);
  return (fromParent ? FOAM_CAT_DOWN : FOAM_CAT_TURN) + child;
}

// The sources of a step in a fixed order, shared by RouterCount and RouterForward
// so that both see every ray with the same rank: the down queue and the parent
// inbox (rays travelling down), then the up queue and the inbox of every lane but
// the parent's (children, then injectors), walked by Slices.
struct Source {
  const unsigned char *ptr;
  unsigned count;
  bool fromParent;
};

struct Sources {
  const foam_params &p;
  const unsigned char *inboxes;
  Source fixed[3];
  unsigned n;
};

// A worker's slices of the sources with rays, in order: worker w of `workers`
// takes rays [count * w / workers, count * (w + 1) / workers) of each. The lanes'
// inboxes are walked by their strides, not found one by one (foam_lane_offset),
// and an empty lane costs its count's load: a root or a router under it has a lane
// per injector, and every worker walks them all.
class Slices {
public:
  Slices(const Sources &s, unsigned workerId, unsigned workers)
      : s_(s), w_(workerId), workers_(workers), lanes_(s.n - 3), in_(s.inboxes),
        child_(foam_link_bytes(&s.p, s.p.link_capacity)), inject_(foam_link_bytes(&s.p, s.p.inject_capacity)) {}

  // The next source with rays for this worker, and its slice [begin, end).
  bool next(Source &src, unsigned &begin, unsigned &end) {
    for (;;) {
      if (k_ < 3) {
        src = s_.fixed[k_++];
      } else if (k_ - 3 < lanes_) {
        src = Source{in_ + sizeof(foam_link_header), load<uint32_t>(in_), false};  // every lane's header starts with its count
        in_ += k_ - 3 < s_.p.fanout ? child_ : inject_;
        ++k_;
      } else {
        return false;
      }
      if (src.count == 0) continue;
      begin = src.count * w_ / workers_;
      end = src.count * (w_ + 1) / workers_;
      if (begin < end) return true;
    }
  }

private:
  const Sources &s_;
  unsigned w_, workers_, lanes_, k_ = 0;
  const unsigned char *in_;
  size_t child_, inject_;
};

inline Sources sources(const foam_params &p, const unsigned char *inboxes, const unsigned char *queues,
                       unsigned parity, unsigned upCount, unsigned downCount) {
  const unsigned stride = p.ray_bytes, q = p.queue_capacity;
  const unsigned char *upHalf = queues + (size_t)parity * q * stride;
  const unsigned char *downHalf = queues + (size_t)(2 + parity) * q * stride;
  const unsigned char *parentIn = inboxes + foam_lane_offset(&p, foam_parent_lane(&p), 0);
  return Sources{p,
                 inboxes,
                 {Source{downHalf, downCount, true},
                  Source{parentIn + sizeof(foam_link_header), load<foam_link_header>(parentIn).count, true},
                  Source{upHalf, upCount, false}},
                 3 + foam_parent_lane(&p)};
}

}  // namespace

// Phase 1: each worker counts, per category, the rays of its slice of every source.
class RouterCount : public MultiVertex {
public:
  Input<Bytes> params;
  Input<Bytes> inboxes;
  Input<Bytes> queues;
  InOut<Words> ctl;  // writes only counts[workerId]

  bool compute(unsigned workerId) {
    const foam_params &p = cview<foam_params>(params);
    const foam_router_ctl &c = cview<foam_router_ctl>(ctl);
    const Sources s = sources(p, &inboxes[0], &queues[0], c.parity, c.up_count, c.down_count);
    const Route route = routeOf(p);
    const unsigned workers = numWorkers();
    uint32_t counts[FOAM_CATS] = {};
    Source src;
    unsigned begin, end;
    for (Slices w(s, workerId, workers); w.next(src, begin, end);) {
      for (unsigned i = begin; i < end; ++i) {
        FOAM_PROBE(ray);
        int cat = classify(route, src.ptr + (size_t)i * p.ray_bytes, src.fromParent);
        if (cat >= 0) counts[cat]++;
      }
    }
    memcpy(&ctl[0] + offsetof(foam_router_ctl, counts) / 4 + workerId * FOAM_CATS, counts, sizeof counts);
    return true;
  }
};

// ---- Phase 2 (one worker): ranks, what leaves on which lane within the receivers'
// credits, where the rest waits, and the credits this router grants for next step.

namespace {

inline uint32_t minu(uint32_t a, uint32_t b) { return a < b ? a : b; }

// What RouterPlan reads of a router: its parameters and its lanes' inbound headers.
struct PlanInputs {
  const foam_params &p;
  const unsigned char *inboxes;
  unsigned f, pl;  // child lanes [0, f), injector lanes [f, pl), the parent lane pl
  // Bytes of a child lane's and an injector lane's inbound buffer: lane l is at
  // l * child below f, after the children at (l - f) * inject from f, the parent
  // after them all (foam_lane_offset, in a multiply: RouterPlan reads every
  // injector lane several times a step).
  size_t child = foam_link_bytes(&p, p.link_capacity), inject = foam_link_bytes(&p, p.inject_capacity);

  // The inbound header of child or parent lane l, and of injector lane l.
  const foam_link_header &in(unsigned l) const { return load_ref<foam_link_header>(l); }
  const foam_inject_up &injector(unsigned l) const { return load_ref<foam_inject_up>(l); }

  template <typename T> const T &load_ref(unsigned l) const {
    static_assert(alignof(T) <= 4, "layout.h records are 4-byte aligned");
    return *reinterpret_cast<const T *>(inboxes + (l < f ? l * child : f * child + (size_t)(l - f) * inject));
  }
};

// Each worker's rank base per category, and each category's total.
inline void sumCounts(foam_router_ctl &c, uint32_t total[FOAM_CATS]) {
  for (unsigned k = 0; k < FOAM_CATS; ++k) {
    total[k] = 0;
    for (unsigned w = 0; w < FOAM_WORKERS; ++w) {
      c.base[w][k] = total[k];
      total[k] += c.counts[w][k];
    }
    c.send[k] = 0;
    c.lane_off[k] = 0;
    c.stay_off[k] = 0;
  }
}

// What leaves within the receivers' credits: down and turning rays to each child,
// rays going up, then turns blocked at their child that escape up. Fills the ray
// count of each child lane and, after them, of the parent lane.
inline void planSends(const PlanInputs &r, foam_router_ctl &c, const uint32_t total[FOAM_CATS],
                      uint32_t laneCount[FOAM_MAX_FANOUT + 1]) {
  const unsigned f = r.f, pl = r.pl;
  for (unsigned ch = 0; ch < f; ++ch) {
    uint32_t credit = minu(r.in(ch).credit, r.p.link_capacity);
    c.send[FOAM_CAT_DOWN + ch] = minu(total[FOAM_CAT_DOWN + ch], credit);
    credit -= c.send[FOAM_CAT_DOWN + ch];
    c.send[FOAM_CAT_TURN + ch] = minu(total[FOAM_CAT_TURN + ch], credit);
    c.lane_off[FOAM_CAT_DOWN + ch] = 0;
    c.lane_off[FOAM_CAT_TURN + ch] = c.send[FOAM_CAT_DOWN + ch];
    laneCount[ch] = c.send[FOAM_CAT_DOWN + ch] + c.send[FOAM_CAT_TURN + ch];
  }
  uint32_t up = minu(r.in(pl).credit, r.p.parent_capacity);
  c.send[FOAM_CAT_UP] = minu(total[FOAM_CAT_UP], up);
  up -= c.send[FOAM_CAT_UP];
  uint32_t off = c.send[FOAM_CAT_UP];
  for (unsigned ch = 0; ch < FOAM_MAX_FANOUT; ++ch) {
    uint32_t blocked = ch < f ? total[FOAM_CAT_TURN + ch] - c.send[FOAM_CAT_TURN + ch] : 0;
    c.escape[ch] = minu(blocked, up);
    up -= c.escape[ch];
    c.esc_off[ch] = off;
    off += c.escape[ch];
  }
  laneCount[FOAM_MAX_FANOUT] = off;
}

// Where the rays that stay wait: offsets in the down queue (by child) and the up
// queue (up, then turns by child); sets the rays queued each way.
inline void planQueues(unsigned f, foam_router_ctl &c, const uint32_t total[FOAM_CATS], uint32_t *upq, uint32_t *down) {
  *down = 0;
  for (unsigned ch = 0; ch < f; ++ch) {
    c.stay_off[FOAM_CAT_DOWN + ch] = *down;
    *down += total[FOAM_CAT_DOWN + ch] - c.send[FOAM_CAT_DOWN + ch];
  }
  *upq = 0;
  c.stay_off[FOAM_CAT_UP] = *upq;
  *upq += total[FOAM_CAT_UP] - c.send[FOAM_CAT_UP];
  for (unsigned ch = 0; ch < f; ++ch) {
    c.stay_off[FOAM_CAT_TURN + ch] = *upq;
    *upq += total[FOAM_CAT_TURN + ch] - c.send[FOAM_CAT_TURN + ch] - c.escape[ch];
  }
}

// The root lets its injectors emit new rays only while every ray in flight
// (emitted, or allowed and on its way) still fits the spill store (layout.h
// foam_inject_up): each injector lane's allowance, `finished` pixels known so far.
// Routers under it take rays the root has already let in.
// floor(total * w / sum) for w <= sum < 2^16, in 32 bits whatever `total` (the IPU
// has no 64-bit multiply or divide).
inline uint32_t shareOf(uint32_t total, uint32_t w, uint32_t sum) {
  return (total / sum) * w + (total % sum) * w / sum;
}

inline void allowInjectors(const PlanInputs &r, foam_router_ctl &c, uint32_t finished, uint32_t allow[FOAM_MAX_INJECTORS]) {
  if (r.pl == r.f || r.p.max_in_flight == 0) return;
  const unsigned n = r.pl - r.f;
  const uint32_t cap = r.p.inject_capacity;
  // By pixels left: an injector with twice the pixels left emits twice as fast,
  // so the injectors finish together rather than one trailing the frame alone.
  // An injector with nothing to ask weighs nothing, one with pixels left under a
  // unit still one; the weights are scaled down (but not to 0) until they sum
  // under 2^16, which keeps shareOf's products in 32 bits.
  auto raw = [cap](const foam_inject_up &in) -> uint32_t { return in.next == 0 || cap == 0 ? 0u : in.left ? in.left : 1u; };
  // Each lane's record is read once here and its ask and raw weight (16 bits each:
  // foam_inject_up) kept in allow[] until the allowances replace them, rather than
  // found again in every pass below: a root has a lane per injector.
  const unsigned char *lane = r.inboxes + r.f * r.child;
  uint32_t asked = 0, sum = 0;
  for (unsigned k = 0; k < n; ++k, lane += r.inject) {
    const foam_inject_up &in = *reinterpret_cast<const foam_inject_up *>(lane);
    c.injected += in.emitted;
    const uint32_t next = minu(in.next, cap), w = raw(in);
    asked += next;
    sum += w;
    allow[k] = next | w << 16;
  }
  unsigned shift = 0;
  while ((sum >> shift) + n > 0xFFFFu) ++shift;
  auto weight = [shift](uint32_t w) -> uint32_t { return (w >> shift) ? w >> shift : w ? 1u : 0u; };
  uint32_t weights = 0;
  if (shift == 0) {
    weights = sum;  // every weight is its raw weight
  } else {
    for (unsigned k = 0; k < n; ++k) weights += weight(allow[k] >> 16);
  }
  const uint32_t flying = c.injected - minu(finished, c.injected) + c.allowed;
  const uint32_t room = flying < r.p.max_in_flight ? r.p.max_in_flight - flying : 0;
  c.allowed = 0;
  if (asked <= room) {
    for (unsigned k = 0; k < n; ++k) {
      allow[k] &= 0xFFFFu;
      c.allowed += allow[k];
    }
    return;
  }
  // From here allow[k] holds the allowance and, above it, the ask.
  for (unsigned k = 0; k < n; ++k) {
    const uint32_t next = allow[k] & 0xFFFFu;
    const uint32_t a = minu(next, shareOf(room, weight(allow[k] >> 16), weights));
    allow[k] = a | next << 16;
    c.allowed += a;
  }
  // Lanes full before their share leave room: once more by weight among the rest,
  // then what rounding left a ray a lane (with less room than injectors asking, no
  // share would reach one ray and none would ever emit). The weights are read from
  // the records again.
  const uint32_t spare = room - c.allowed;
  weights = 0;
  lane = r.inboxes + r.f * r.child;
  for (unsigned k = 0; k < n; ++k, lane += r.inject)
    if ((allow[k] & 0xFFFFu) < allow[k] >> 16) weights += weight(raw(*reinterpret_cast<const foam_inject_up *>(lane)));
  lane = r.inboxes + r.f * r.child;
  for (unsigned k = 0; k < n && weights > 0; ++k, lane += r.inject) {
    const uint32_t a = allow[k] & 0xFFFFu, next = allow[k] >> 16;
    if (a >= next) continue;
    const uint32_t more = minu(next - a, shareOf(spare, weight(raw(*reinterpret_cast<const foam_inject_up *>(lane))), weights));
    allow[k] += more;
    c.allowed += more;
  }
  for (unsigned k = 0; k < n; ++k) {
    if (c.allowed < room && (allow[k] & 0xFFFFu) < allow[k] >> 16) {
      allow[k]++;
      c.allowed++;
    }
    allow[k] &= 0xFFFFu;
  }
}

// A lane's demand for upward credit next step, at most a lane: a child's is what
// it reported still waiting plus what goes down to it now (`laneCount`, by child),
// which it marches and mostly hands back; an injector's is what it holds and may
// emit. Found when needed, so that RouterPlan's stack does not grow with the lanes.
inline uint32_t demandOf(const PlanInputs &r, const uint32_t laneCount[FOAM_MAX_FANOUT + 1], unsigned l) {
  return l < r.f ? minu(r.in(l).pending + laneCount[l], r.p.link_capacity) : minu(r.injector(l).pending, r.p.inject_capacity);
}

// Upward credit (`availUp` rays of queue) shared out by demand over lanes [0, r.pl),
// into c.granted. Credit beyond demand is not handed out: it would stay reserved
// for a step while nothing arrives under it (a quiet child reports its demand
// next step).
inline void shareUpCredit(const PlanInputs &r, foam_router_ctl &c, const uint32_t laneCount[FOAM_MAX_FANOUT + 1],
                          uint32_t availUp, uint32_t wanted) {
  const unsigned pl = r.pl;
  if (wanted <= availUp) {
    for (unsigned ch = 0; ch < pl; ++ch) c.granted[ch] = demandOf(r, laneCount, ch);
    return;
  }
  // A demand is at most a lane's capacity and availUp at most the queue's: the
  // graph builder keeps their product within 32 bits.
  uint32_t given = 0;
  for (unsigned ch = 0; ch < pl; ++ch) {
    c.granted[ch] = demandOf(r, laneCount, ch) * availUp / wanted;
    given += c.granted[ch];
  }
  // Rounding leftover, rotating from lane rr (< pl, so one wrap suffices).
  for (unsigned i = 0; i < pl && given < availUp; ++i) {
    const unsigned ch = c.rr + i < pl ? c.rr + i : c.rr + i - pl;
    if (c.granted[ch] < demandOf(r, laneCount, ch)) c.granted[ch]++, given++;
  }
  c.rr = c.rr + 1 < pl ? c.rr + 1 : 0;
}

// What this step sends and grants, as each outbound lane's header. Rays go out
// on the child lanes and the parent lane only (an injector's lane takes a bare
// header), so their counts are kept by child, then the parent's: the stack of a
// root with many injector lanes stays small.
struct LaneHeaders {
  uint32_t laneCount[FOAM_MAX_FANOUT + 1] = {};
  uint32_t allow[FOAM_MAX_INJECTORS] = {};  // by injector lane
  uint32_t finished = 0, upq = 0, down = 0;
};

// The credit on each lane is what c.granted now holds.
inline void writeHeaders(const PlanInputs &r, unsigned char *outboxes, const foam_router_ctl &c, const LaneHeaders &h) {
  // Outbound, an injector's lane is a bare header (foam_lane_offset's `out`).
  const size_t down = foam_link_bytes(&r.p, 0);
  unsigned char *box = outboxes;
  for (unsigned l = 0; l <= r.pl; box += l < r.f ? r.child : down, ++l) {
    if (l >= r.f && l < r.pl) {  // an injector's lane: a bare header down
      foam_inject_down d;
      d.count = 0;
      d.credit = c.granted[l];
      d.reserved = 0;
      d.allowance = h.allow[l - r.f];
      memcpy(box, &d, sizeof d);
    } else {
      const uint32_t count = h.laneCount[l < r.f ? l : FOAM_MAX_FANOUT];
      foam_link_header lh;
      lh.count = count;
      lh.credit = c.granted[l];
      lh.finished = l == r.pl ? h.finished : 0;
      lh.pending = l == r.pl ? h.upq : h.down;
      memcpy(box, &lh, sizeof lh);
      if (count < foam_lane_capacity(&r.p, l, 1))
        foam_slot_invalidate(box + sizeof lh + (size_t)count * r.p.ray_bytes);
    }
  }
}

}  // namespace

class RouterPlan : public Vertex {
public:
  Input<Bytes> params;
  Input<Bytes> inboxes;
  InOut<Bytes> outboxes;
  InOut<Words> ctl;
  InOut<Bytes> stats;

  bool compute() {
    const foam_params &p = cview<foam_params>(params);
    foam_router_ctl &c = view<foam_router_ctl>(ctl);
    const unsigned f = p.fanout, q = p.queue_capacity;
    const PlanInputs r{p, &inboxes[0], f, foam_parent_lane(&p)};
    const unsigned pl = r.pl;

    uint32_t total[FOAM_CATS];
    sumCounts(c, total);
    LaneHeaders h;
    planSends(r, c, total, h.laneCount);
    planQueues(f, c, total, &h.upq, &h.down);

    foam_tile_stats st = load<foam_tile_stats>(stats);
    if (h.upq > q) st.overflow += h.upq - q;  // credits make this impossible
    if (h.down > q) st.overflow += h.down - q;

    c.src_up_count = c.up_count;
    c.src_down_count = c.down_count;
    c.up_count = h.upq;
    c.down_count = h.down;
    c.parity ^= 1u;

    // Credits for next step. Rays granted last step arrive after this exchange,
    // so they are reserved as if already queued.
    uint32_t reservedUp = h.upq;
    for (unsigned ch = 0; ch < pl; ++ch) reservedUp += c.granted[ch];
    uint32_t availUp = reservedUp < q ? q - reservedUp : 0;
    // Upward credit follows demand (demandOf): an even split leaves most of it
    // reserved for quiet children while one busy child (the tracer beside the
    // camera) waits, and the wider the router the worse.
    uint32_t wanted = 0;
    for (unsigned l = 0; l < pl; ++l) wanted += demandOf(r, h.laneCount, l);
    for (unsigned ch = 0; ch < f; ++ch) h.finished += r.in(ch).finished;
    allowInjectors(r, c, h.finished, h.allow);
    shareUpCredit(r, c, h.laneCount, availUp, wanted);
    uint32_t reservedDown = h.down + c.granted[pl];
    c.granted[pl] = minu(reservedDown < q ? q - reservedDown : 0, p.parent_capacity);
    writeHeaders(r, &outboxes[0], c, h);

    uint32_t moved = 0;
    for (unsigned l = 0; l <= FOAM_MAX_FANOUT; ++l) moved += h.laneCount[l];
    st.rays_in += moved;
    if (h.upq + h.down > st.peak_queue) st.peak_queue = h.upq + h.down;
    st.iterations++;
    memcpy(&stats[0], &st, sizeof st);
    return true;
  }
};

// Phase 3: each worker walks its slices in the same order as RouterCount and puts
// every ray where its rank says: a lane slot or a slot in the other queue half.
class RouterForward : public MultiVertex {
public:
  Input<Bytes> params;
  Input<Bytes> inboxes;
  InOut<Bytes> queues;
  InOut<Bytes> outboxes;
  Input<Words> ctl;

  bool compute(unsigned workerId) {
    const foam_params &p = cview<foam_params>(params);
    const foam_router_ctl &c = cview<foam_router_ctl>(ctl);
    const unsigned stride = p.ray_bytes, q = p.queue_capacity, up = foam_parent_lane(&p);
    const unsigned srcParity = c.parity ^ 1u;
    unsigned char *qs = &queues[0];
    const Sources s = sources(p, &inboxes[0], qs, srcParity, c.src_up_count, c.src_down_count);
    const Route route = routeOf(p);
    unsigned char *upDst = qs + (size_t)c.parity * q * stride;
    unsigned char *downDst = qs + (size_t)(2 + c.parity) * q * stride;
    unsigned char *boxes = &outboxes[0];
    auto lane = [&](unsigned l, uint32_t slot) {
      return boxes + foam_lane_offset(&p, l, 1) + sizeof(foam_link_header) + (size_t)slot * stride;
    };
    // A queue slot, or null past the capacity (never with correct credits).
    auto stay = [&](unsigned char *half, uint32_t slot) -> unsigned char * {
      return slot < q ? half + (size_t)slot * stride : nullptr;
    };
    uint32_t rank[FOAM_CATS];
    for (unsigned k = 0; k < FOAM_CATS; ++k) rank[k] = c.base[workerId][k];
    const unsigned workers = numWorkers();

    Source from;
    unsigned begin, end;
    for (Slices w(s, workerId, workers); w.next(from, begin, end);) {
      for (unsigned i = begin; i < end; ++i) {
        const unsigned char *src = from.ptr + (size_t)i * stride;
        FOAM_PROBE(ray);
        int cat = classify(route, src, from.fromParent);
        if (cat < 0) continue;
        uint32_t r = rank[cat]++;
        unsigned char *dst;
        bool leaves = true;
        if (cat == FOAM_CAT_UP) {
          if (r < c.send[cat]) dst = lane(up, r);
          else { dst = stay(upDst, c.stay_off[cat] + r - c.send[cat]); leaves = false; }
        } else if (cat < FOAM_CAT_TURN) {
          unsigned ch = (unsigned)cat - FOAM_CAT_DOWN;
          if (r < c.send[cat]) dst = lane(ch, c.lane_off[cat] + r);
          else { dst = stay(downDst, c.stay_off[cat] + r - c.send[cat]); leaves = false; }
        } else {
          unsigned ch = (unsigned)cat - FOAM_CAT_TURN;
          if (r < c.send[cat]) dst = lane(ch, c.lane_off[cat] + r);
          else if (r < c.send[cat] + c.escape[ch]) dst = lane(up, c.esc_off[ch] + r - c.send[cat]);
          else {
            dst = stay(upDst, c.stay_off[cat] + r - c.send[cat] - c.escape[ch]);
            leaves = false;
          }
        }
        if (!dst) continue;  // over capacity: RouterPlan counted it as overflow
        FOAM_PROBE(moved);
        memcpy(dst, src, stride);
        if (leaves && p.hops) {  // one more router visited
          foam_ray_hops h;
          memcpy(&h, dst + stride - sizeof h, sizeof h);
          h.router++;
          memcpy(dst + stride - sizeof h, &h, sizeof h);
        }
      }
    }
    return true;
  }
};

FOAM_STACK(RouterCount);
FOAM_STACK(RouterPlan);
FOAM_STACK(RouterForward);

#ifndef __POPC__
FOAM_HOST_VERTEX(RouterCount, params, inboxes, queues, ctl)
FOAM_HOST_VERTEX(RouterPlan, params, inboxes, outboxes, ctl, stats)
FOAM_HOST_VERTEX(RouterForward, params, inboxes, queues, outboxes, ctl)
#endif
