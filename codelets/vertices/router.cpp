// Router tiles of the ray-routing tree (paper §4.3, with wider nodes): every step
// each router moves the rays of its inboxes (one per child and the parent) and of
// its two queues onto its outboxes, in three compute sets — count, plan, forward —
// so that workers write disjoint ranges without atomics, locks or barriers.
//
// Lane l < fanout is child lane l: the children the shard-id bits choose, then the
// tiles of replicated children's shards (layout.h replica_bits); the root, and
// with direct lanes the routers under it, then have one lane per injector tile,
// and the last lane is the parent
// (foam/lanes.h packs them). RouterPlan is one worker and never walks the injector
// lanes: RouterCount's workers sum them and RouterForward's answer them, each its
// own share (layout.h, foam_router_ctl).
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
#include "foam/divide.h"

#include <stddef.h>
#include <string.h>

#include "foam/lanes.h"
#include "foam/layout.h"
#include "foam/probe.h"
#include "foam/ray.h"

using namespace poplar;


namespace {

// Which shard ids a router's subtree holds and which child lane each goes to: by
// the id's bits, then over a replicated child's tiles by the pixel. `replicas` is
// null for a router without replica lanes, the most: one test a ray, as the
// pick by bits or by pixel of a router of one shard's replicas was.
struct Route {
  uint32_t prefix, subtreeShift, levelShift, childMask;
  const foam_replica_lanes *replicas;
};

inline Route routeOf(const foam_params &p) {
  uint32_t any[FOAM_MAX_FANOUT / 4], set = 0;
  memcpy(any, p.replicas.replica_bits, sizeof any);
  for (uint32_t w : any) set |= w;
  return Route{p.shard, (uint32_t)p.level_shift + p.route_bits, p.level_shift, (1u << p.route_bits) - 1u,
               set ? &p.replicas : nullptr};
}

// Category of the ray in `slot` (FOAM_CAT_*), or -1 for an empty slot.
inline int classify(const Route &r, const unsigned char *slot, bool fromParent) {
  const uint16_t shard = foam_slot_shard(slot);
  if (shard == FOAM_INVALID_SHARD) return -1;
  bool inSubtree = ((uint32_t)shard >> r.subtreeShift) == r.prefix;
  if (!inSubtree) return FOAM_CAT_UP;
  const int base = fromParent ? FOAM_CAT_DOWN : FOAM_CAT_TURN;
  const uint32_t child = ((uint32_t)shard >> r.levelShift) & r.childMask;
  if (!r.replicas) return base + (int)child;
  uint32_t lane = child;
  if (const uint32_t bits = r.replicas->replica_bits[child]) {
    const uint32_t pick = foam_replica_class(foam_slot_px(slot), bits);
    if (pick) lane = r.replicas->replica_lane[child] + pick - 1u;
  }
  return base + (int)lane;
}

inline uint32_t minu(uint32_t a, uint32_t b) { return a < b ? a : b; }

// The categories a router of `fanout` children can put a ray in (classify): down
// and turn to each child, and up. The others stay 0 from the frame's reset (their
// counts RouterCount copies as 0 with its row), and RouterPlan and RouterForward
// walk only these: RouterPlan, one worker, walked all FOAM_CATS of each worker's
// counts every step, 33 where a 4-wide root uses 9.
template <typename F> inline void forEachCat(unsigned fanout, F f) {
  for (unsigned ch = 0; ch < fanout; ++ch) {
    f(FOAM_CAT_DOWN + ch);
    f(FOAM_CAT_TURN + ch);
  }
  f(FOAM_CAT_UP);
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
};

// Injector lane k's inbound buffer.
inline const unsigned char *injectorIn(const foam_params &p, const unsigned char *inboxes, unsigned k) {
  return inboxes + p.fanout * foam_child_stride(&p) + k * foam_inject_stride(&p, 0);
}

// A worker's share of the sources with rays, in order: worker w of `workers`
// takes rays [count * w / workers, count * (w + 1) / workers) of each fixed source
// and child lane, and its own injector lanes whole (foam_inject_chunk): a root, or
// a router under it, has a lane per injector, and if every worker took a slice of
// each, every worker would read every lane's count. Without `injectorLanes` it
// stops after the child lanes (RouterCount walks its own lanes once, for their
// rays and their sums together).
class Slices {
public:
  Slices(const Sources &s, unsigned workerId, unsigned workers, bool injectorLanes = true)
      : s_(s), w_(workerId), workers_(workers), child_(foam_child_stride(&s.p)), inject_(foam_inject_stride(&s.p, 0)) {
    foam_inject_chunk(&s.p, workerId, workers, &j_, &hi_);
    if (!injectorLanes) hi_ = j_;
    in_ = s.inboxes;
    injIn_ = injectorIn(s.p, s.inboxes, j_);
  }

  // The next source with rays for this worker, and its slice [begin, end).
  bool next(Source &src, unsigned &begin, unsigned &end) {
    for (;;) {
      if (k_ < 3) {
        src = s_.fixed[k_++];
      } else if (k_ - 3 < s_.p.fanout) {
        src = lane(in_);
        in_ += child_;
        ++k_;
      } else if (j_ < hi_) {
        src = lane(injIn_);
        injIn_ += inject_;
        ++j_;
        if (src.count == 0) continue;
        begin = 0;
        end = src.count;
        return true;
      } else {
        return false;
      }
      if (src.count == 0) continue;
      foam_worker_share(src.count, w_, workers_, &begin, &end);
      if (begin < end) return true;
    }
  }

private:
  // Every lane's header starts with its count.
  static Source lane(const unsigned char *at) { return Source{at + sizeof(foam_link_header), load<uint32_t>(at), false}; }

  const Sources &s_;
  unsigned w_, workers_, k_ = 0, j_ = 0, hi_ = 0;
  const unsigned char *in_, *injIn_;
  size_t child_, inject_;
};

// The parent's inbox.
inline Source parentSource(const foam_params &p, const unsigned char *inboxes) {
  const unsigned char *parentIn = inboxes + foam_lane_offset(&p, foam_parent_lane(&p), 0);
  return Source{parentIn + sizeof(foam_link_header), load<foam_link_header>(parentIn).count, true};
}

inline Sources sources(const foam_params &p, const unsigned char *inboxes, const unsigned char *queues,
                       unsigned parity, unsigned upCount, unsigned downCount) {
  const unsigned stride = p.ray_bytes, q = p.queue_capacity;
  const unsigned char *upHalf = queues + (size_t)parity * q * stride;
  const unsigned char *downHalf = queues + (size_t)(2 + parity) * q * stride;
  return Sources{p, inboxes, {Source{downHalf, downCount, true}, parentSource(p, inboxes), Source{upHalf, upCount, false}}};
}

// An injector's weight in the root's allowance: its pixels left, at least one
// while it asks to emit, none when it asks nothing. With more pixels left it
// emits faster, so that the injectors finish together rather than one trailing
// the frame alone.
inline uint32_t weightOf(const foam_inject_up &in, uint32_t cap) {
  return in.next == 0 || cap == 0 ? 0u : in.left ? in.left : 1u;
}

// `total` shared over lanes in order by amounts that sum to `sum`: the lane whose
// amount ends the prefix at x gets floor(total * x / sum) less the prefix's before
// it. The shares sum to exactly `total`, each within a ray of its amount's part (so
// none beyond its amount when total <= sum), and each is found from the prefix
// before it alone, so that each worker shares out its own lanes.
//
// floor(total * x / sum) = whole * x + floor(part * x / sum) for total = whole * sum
// + part, in 32 bits where part * x fits, as it does for sum < 2^16, or for total <
// sum when total * sum fits (the graph builder checks a router's queue against its
// lanes' capacities). The one integer divide is the constructor's: each lane's
// quotient is foam_divide's, exact, since part * x / sum is under both sum and
// 2^32 / sum, so under 2^16; two divides a lane were most of a lane's instructions
// at the root.
struct PrefixShare {
  uint32_t whole, part, at;  // `at`: the share of the prefix so far
  foam_divisor sum;

  // Nothing divided for a share never asked (sum 0).
  PrefixShare(uint32_t total, uint32_t amounts, uint32_t before)
      : whole(amounts ? total / amounts : 0), part(total - whole * amounts), at(0), sum(foam_divisor_of(amounts)) {
    if (amounts) at = shareOf(before);
  }

  uint32_t shareOf(uint32_t x) const { return whole * x + foam_divide(sum, part * x); }

  uint32_t upTo(uint32_t x) {
    const uint32_t a = shareOf(x), d = a - at;
    at = a;
    return d;
  }
};

// Worker `workerId`'s injector lanes' headers down (foam_inject_down): the credit
// and the allowance RouterPlan shares out, each from the prefix of the lanes before
// (the children's demand, then RouterCount's sums of the workers before). Returns
// the allowance given.
inline uint32_t answerInjectors(const foam_params &p, const unsigned char *inboxes, unsigned char *outboxes,
                                const foam_router_ctl &c, unsigned workerId, unsigned workers) {
  unsigned lo, hi;
  foam_inject_chunk(&p, workerId, workers, &lo, &hi);
  uint32_t demand = c.share_before, weight = 0, weights = 0;
  for (unsigned w = 0; w < FOAM_WORKERS; ++w) {
    if (w < workerId) demand += c.lane_sums[w][FOAM_LS_DEMAND], weight += c.lane_sums[w][FOAM_LS_WEIGHT];
    weights += c.lane_sums[w][FOAM_LS_WEIGHT];
  }
  const uint32_t cap = p.inject_capacity, shift = c.share_shift;
  const bool oversubscribed = c.share_wanted > c.share_avail;
  const bool root = p.max_in_flight != 0, rationed = root && c.share_asked > c.share_room;
  PrefixShare credit{c.share_avail, oversubscribed ? c.share_wanted : 0, demand};
  PrefixShare allowance{c.share_room, rationed ? weights >> shift : 0, weight >> shift};
  const size_t inStride = foam_inject_stride(&p, 0), outStride = foam_inject_stride(&p, 1);
  const unsigned char *in = injectorIn(p, inboxes, lo);
  unsigned char *out = outboxes + foam_lane_offset(&p, p.fanout + lo, 1);
  uint32_t allowed = 0;
  for (unsigned k = lo; k < hi; ++k, in += inStride, out += outStride) {
    const foam_inject_up &up = *reinterpret_cast<const foam_inject_up *>(in);
    const uint32_t d = minu(up.pending, cap);
    foam_inject_down down;
    down.count = 0;
    down.credit = oversubscribed ? credit.upTo(demand += d) : d;
    down.reserved = 0;
    down.allowance = 0;
    if (root) {
      // What the injector's queue has room for, which may be more than its lane
      // holds: the allowance paces emission, the lane's credit what goes on it.
      const uint32_t ask = up.next;
      down.allowance = rationed ? minu(ask, allowance.upTo((weight += weightOf(up, cap)) >> shift)) : ask;
    }
    allowed += down.allowance;
    memcpy(out, &down, sizeof down);
  }
  return allowed;
}

// Adds to `counts` the categories of rays [begin, end) of a queue RouterForward
// left in `runs` runs of one category each, without reading a ray: run r is
// category cat(r) from slot start(r) to the next run's start (the last to `total`).
// Rays wait in a router's queues while the lane they go to has no credit, hundreds
// or thousands of them behind a hot tracer, and counting them ray by ray every step
// made the busiest RouterCount of the step several times its inboxes' work.
template <typename Cat, typename Start>
inline void countRuns(unsigned begin, unsigned end, unsigned runs, unsigned total, Cat cat, Start start,
                      uint32_t counts[FOAM_CATS]) {
  for (unsigned r = 0; r < runs && begin < end; ++r) {
    const unsigned lo = start(r), hi = r + 1 < runs ? start(r + 1) : total;
    const unsigned from = lo > begin ? lo : begin, to = hi < end ? hi : end;
    if (from < to) counts[cat(r)] += to - from;
  }
}

// The queues with rays, each as the runs RouterForward left it in (RouterPlan's
// stay_off): `each(total, runs, cat, start)` for the down queue, a run per child in
// child order, then the up queue, the rays going up, then the blocked turns by child.
template <typename F> inline void forEachQueue(const foam_router_ctl &c, unsigned fanout, F each) {
  if (c.down_count)
    each(c.down_count, fanout, [](unsigned r) { return FOAM_CAT_DOWN + r; },
         [&c](unsigned r) { return c.stay_off[FOAM_CAT_DOWN + r]; });
  if (c.up_count)
    each(c.up_count, fanout + 1, [](unsigned r) { return r ? FOAM_CAT_TURN + r - 1 : FOAM_CAT_UP; },
         [&c](unsigned r) { return r ? c.stay_off[FOAM_CAT_TURN + r - 1] : 0u; });
}

// Adds the categories of `n` rays from `at` to `counts`.
inline void countRays(const Route &route, const unsigned char *at, unsigned n, unsigned stride, bool fromParent,
                      uint32_t counts[FOAM_CATS]) {
  for (unsigned i = 0; i < n; ++i, at += stride) {
    FOAM_PROBE(ray);
    int cat = classify(route, at, fromParent);
    if (cat >= 0) counts[cat]++;
  }
}

// Worker w's injector lanes (of `workers`' chunks) in one walk: their rays into
// `counts` (in any order: a worker's counts are totals, and RouterForward's Slices
// give it the same rays), and their sums for RouterPlan into `sums`. Inlined: as a
// call it took RouterCount's worker 448 → 632 B of stack.
__attribute__((always_inline)) inline void countInjectorLanes(const foam_params &p, const Route &route, const unsigned char *inboxes, unsigned w,
                               unsigned workers, uint32_t counts[FOAM_CATS], uint32_t sums[FOAM_LS_COUNT]) {
  unsigned lo, hi;
  foam_inject_chunk(&p, w, workers, &lo, &hi);
  const uint32_t cap = p.inject_capacity;
  const bool root = p.max_in_flight != 0;
  const size_t stride = foam_inject_stride(&p, 0);
  const unsigned char *lane = injectorIn(p, inboxes, lo);
  for (unsigned k = lo; k < hi; ++k, lane += stride) {
    const foam_inject_up &in = *reinterpret_cast<const foam_inject_up *>(lane);
    countRays(route, lane + sizeof(foam_link_header), in.count, p.ray_bytes, false, counts);
    sums[FOAM_LS_DEMAND] += minu(in.pending, cap);
    if (root) {
      sums[FOAM_LS_ASKED] += in.next;  // as answerInjectors asks
      sums[FOAM_LS_WEIGHT] += weightOf(in, cap);
      sums[FOAM_LS_EMITTED] += in.emitted;
    }
  }
}

}  // namespace

// Phase 1: each worker counts, per category, the rays of its slice of every source,
// and sums its own injector lanes. The queues' rays it counts from the runs
// RouterForward left them in (RouterPlan's stay_off): the down queue a run per
// child in child order, the up queue the rays going up, then the blocked turns by
// child. A ray's category is its route's, the same every step, so the runs say
// what classifying each ray would.
namespace {

// Worker `workerId`'s share of the count (of `workers`), RouterCount's: its row is
// the ranks RouterForward's worker starts from (countAll writes all six rows, the
// same, in one walk).
template <class V> void countShare(V &vx, unsigned workerId, unsigned workers) {
  const foam_params &p = cview<foam_params>(vx.params);
  const foam_router_ctl &c = cview<foam_router_ctl>(vx.ctl);
  const auto &inboxes = vx.inboxes;
  auto &ctl = vx.ctl;
  // The inboxes' rays, ray by ray: the queues are empty sources here.
  const Sources s{p, &inboxes[0], {Source{nullptr, 0, true}, parentSource(p, &inboxes[0]), Source{nullptr, 0, false}}};
  const Route route = routeOf(p);
  uint32_t counts[FOAM_CATS] = {};
  Source src;
  unsigned begin, end;
  for (Slices w(s, workerId, workers, false); w.next(src, begin, end);)
    countRays(route, src.ptr + (size_t)begin * p.ray_bytes, end - begin, p.ray_bytes, src.fromParent, counts);
  // This worker's slices of the queues, as Slices cuts every source for RouterForward
  // (most routers' queues are empty most steps: nothing to cut).
  forEachQueue(c, p.fanout, [&](unsigned total, unsigned runs, auto cat, auto start) {
    unsigned lo, hi;
    foam_worker_share(total, workerId, workers, &lo, &hi);
    countRuns(lo, hi, runs, total, cat, start, counts);
  });

  uint32_t sums[FOAM_LS_COUNT] = {};
  countInjectorLanes(p, route, &inboxes[0], workerId, workers, counts, sums);
  memcpy(&ctl[0] + offsetof(foam_router_ctl, counts) / 4 + workerId * FOAM_CATS, counts, sizeof counts);
  memcpy(&ctl[0] + offsetof(foam_router_ctl, lane_sums) / 4 + workerId * FOAM_LS_COUNT, sums, sizeof sums);
}

// Every worker's share of the count in one walk, for RouterCountPlan: the rows
// countShare writes for workers 0 to 5, byte for byte, reading each source once.
// Counting the six shares one after another walked every child lane and queue run
// six times and divided twice a lane a share (a library call on the IPU): 354 IPU
// instructions a child lane, against 15 in RouterCount's busiest worker.
template <class V> void countAll(V &vx) {
  const foam_params &p = cview<foam_params>(vx.params);
  const foam_router_ctl &c = cview<foam_router_ctl>(vx.ctl);
  const unsigned char *inboxes = &vx.inboxes[0];
  uint32_t *rows = &vx.ctl[0] + offsetof(foam_router_ctl, counts) / 4;
  const unsigned f = p.fanout, stride = p.ray_bytes;
  // The categories no ray can take here stay 0 from the frame's reset (forEachCat).
  for (unsigned w = 0; w < FOAM_WORKERS; ++w) forEachCat(f, [&](unsigned k) { rows[w * FOAM_CATS + k] = 0; });
  const Route route = routeOf(p);
  const foam_divisor six = foam_divisor_of(FOAM_WORKERS);
  // Worker w's slice of n rays ends at n * (w + 1) / 6 (foam_worker_share); `ends`
  // holds the six ends.
  auto shareEnds = [&](unsigned n, unsigned ends[FOAM_WORKERS]) {
    for (unsigned w = 0; w + 1 < FOAM_WORKERS; ++w) ends[w] = foam_divide(six, n * (w + 1));
    ends[FOAM_WORKERS - 1] = n;
  };
  unsigned ends[FOAM_WORKERS];
  auto walk = [&](const unsigned char *at, unsigned n, bool fromParent) {
    shareEnds(n, ends);
    for (unsigned w = 0, i = 0; w < FOAM_WORKERS; i = ends[w++]) {
      countRays(route, at + (size_t)i * stride, ends[w] - i, stride, fromParent, rows + w * FOAM_CATS);
    }
  };
  const Source parent = parentSource(p, inboxes);
  if (parent.count) walk(parent.ptr, parent.count, true);
  const size_t child = foam_child_stride(&p);
  const unsigned char *lane = inboxes;
  for (unsigned ch = 0; ch < f; ++ch, lane += child) {
    const uint32_t n = load<uint32_t>(lane);
    if (n) walk(lane + sizeof(foam_link_header), n, false);
  }
  // The queues' runs (countRuns) cut at the workers' ends: each run's rays go to the
  // workers whose slices it overlaps.
  forEachQueue(c, f, [&](unsigned total, unsigned count, auto cat, auto start) {
    shareEnds(total, ends);
    unsigned w = 0;
    for (unsigned r = 0; r < count; ++r) {
      unsigned lo = start(r);
      const unsigned hi = r + 1 < count ? start(r + 1) : total;
      while (lo < hi) {
        while (ends[w] <= lo) ++w;
        const unsigned to = hi < ends[w] ? hi : ends[w];
        rows[w * FOAM_CATS + cat(r)] += to - lo;
        lo = to;
      }
    }
  });
  // The injector lanes, each worker's chunk whole, and their sums, as countShare.
  uint32_t *lsums = &vx.ctl[0] + offsetof(foam_router_ctl, lane_sums) / 4;
  for (unsigned w = 0; w < FOAM_WORKERS; ++w) {
    uint32_t sums[FOAM_LS_COUNT] = {};
    countInjectorLanes(p, route, inboxes, w, FOAM_WORKERS, rows + w * FOAM_CATS, sums);
    memcpy(lsums + w * FOAM_LS_COUNT, sums, sizeof sums);
  }
}

}  // namespace

class RouterCount : public MultiVertex {
public:
  Input<Bytes> params;
  Input<Bytes> inboxes;
  InOut<Words> ctl;  // writes only counts[workerId] and lane_sums[workerId]

  bool compute(unsigned workerId) {
    countShare(*this, workerId, numWorkers());
    return true;
  }
};

// ---- Phase 2 (one worker): ranks, what leaves on which lane within the receivers'
// credits, where the rest waits, and the credits this router grants for next step.
// It reads the child and parent lanes, and of the injector lanes only RouterCount's
// sums: what it decides for them RouterForward's workers write.

namespace {

// Each worker's rank base in category `k` (worker 0's is 0: RouterForward's worker 0
// reads no row), and the category's total. RouterPlan
// sums only the categories a ray can take here (2 a child and up; the others'
// totals are never read). The six workers' rows are spelled out: as a loop they
// took ~40 % of a 16-wide router's RouterPlan, one worker, in loop control alone.
FOAM_STATIC_ASSERT(FOAM_WORKERS == 6, "sumCat spells out six workers' counts");
inline uint32_t sumCat(foam_router_ctl &c, unsigned k) {
  uint32_t sum = c.counts[0][k];
  c.base[1][k] = sum;
  sum += c.counts[1][k];
  c.base[2][k] = sum;
  sum += c.counts[2][k];
  c.base[3][k] = sum;
  sum += c.counts[3][k];
  c.base[4][k] = sum;
  sum += c.counts[4][k];
  c.base[5][k] = sum;
  return sum + c.counts[5][k];
}

// The root lets its injectors emit new rays only while every ray in flight
// (emitted, or allowed and on its way) still fits the spill store (layout.h
// foam_inject_up): the room left and how RouterForward shares it, from RouterCount's
// sums and the allowance RouterForward gave last step. Routers under it take rays
// the root has already let in.
inline void allowInjectors(const foam_params &p, foam_router_ctl &c, unsigned pl, uint32_t finished) {
  c.share_room = c.share_asked = c.share_shift = 0;
  if (pl == p.fanout || p.max_in_flight == 0) return;
  uint32_t asked = 0, weights = 0, allowed = 0;
  for (unsigned w = 0; w < FOAM_WORKERS; ++w) {
    c.injected += c.lane_sums[w][FOAM_LS_EMITTED];
    asked += c.lane_sums[w][FOAM_LS_ASKED];
    weights += c.lane_sums[w][FOAM_LS_WEIGHT];
    allowed += c.allowed_by[w];
  }
  const uint32_t flying = c.injected - minu(finished, c.injected) + allowed;
  c.share_room = flying < p.max_in_flight ? p.max_in_flight - flying : 0;
  c.share_asked = asked;
  // The weights' prefixes are shifted until their sum is under 2^16, which keeps
  // PrefixShare's products in 32 bits (the IPU has no 64-bit multiply or divide).
  while ((weights >> c.share_shift) > 0xFFFFu) ++c.share_shift;
}

inline void writeHeader(unsigned char *box, unsigned capacity, uint32_t rayBytes, const foam_link_header &lh) {
  memcpy(box, &lh, sizeof lh);
  if (lh.count < capacity) foam_slot_invalidate(box + sizeof lh + (size_t)lh.count * rayBytes);
}

// RouterPlan's step, for it or for RouterCountPlan after its counts.
template <class V> void planStep(V &vx) {
  const foam_params &p = cview<foam_params>(vx.params);
  foam_router_ctl &c = view<foam_router_ctl>(vx.ctl);
  const auto &inboxes = vx.inboxes;
  auto &outboxes = vx.outboxes;
  auto &stats = vx.stats;
  const unsigned f = p.fanout, q = p.queue_capacity, pl = foam_parent_lane(&p);
  const unsigned char *in = &inboxes[0];
  unsigned char *out = &outboxes[0];
  const size_t child = foam_child_stride(&p);
  // Two passes over the children, each doing all it can before the next needs a
  // sum over them all: a pass per quantity (seven) cost a 16-wide router, one
  // worker, a loop and a header's address each.
  //
  // First the rays going up, within the parent's credit: what is left of it the
  // turns blocked at their child may escape by.
  const uint32_t totalUp = sumCat(c, FOAM_CAT_UP);
  uint32_t up = minu(reinterpret_cast<const foam_link_header *>(in + foam_lane_offset(&p, pl, 0))->credit, p.parent_capacity);
  c.send[FOAM_CAT_UP] = minu(totalUp, up);
  c.lane_off[FOAM_CAT_UP] = 0;
  c.stay_off[FOAM_CAT_UP] = 0;
  up -= c.send[FOAM_CAT_UP];
  //
  // 1. Each child's categories summed, what goes down to it within its credit
  // (down rays first, then turns), where the rest waits in the down queue; its
  // turns blocked that escape up, and where the rest waits in the up queue (up,
  // then turns by child); and what it asks of the upward credit: what it reported
  // still waiting plus what goes down to it now, which it marches and mostly hands
  // back (an even split left most of the credit reserved for quiet children while
  // the one beside the camera waited).
  uint32_t laneCount[FOAM_MAX_LANES + 1], childDemand[FOAM_MAX_LANES];
  uint32_t down = 0, wanted = 0, finished = 0;
  uint32_t off = c.send[FOAM_CAT_UP], upq = totalUp - c.send[FOAM_CAT_UP];
  for (unsigned ch = 0; ch < f; ++ch) {  // escape[ch] of no child stays 0
    const foam_link_header &h = *reinterpret_cast<const foam_link_header *>(in + ch * child);
    const unsigned d = FOAM_CAT_DOWN + ch, t = FOAM_CAT_TURN + ch;
    const uint32_t totalDown = sumCat(c, d), totalTurn = sumCat(c, t);
    uint32_t credit = minu(h.credit, p.link_capacity);
    c.send[d] = minu(totalDown, credit);
    credit -= c.send[d];
    c.send[t] = minu(totalTurn, credit);
    c.lane_off[d] = 0;
    c.lane_off[t] = c.send[d];
    laneCount[ch] = c.send[d] + c.send[t];
    c.stay_off[d] = down;
    down += totalDown - c.send[d];
    childDemand[ch] = minu(h.pending + laneCount[ch], p.link_capacity);
    wanted += childDemand[ch];
    finished += h.finished;
    // 2. Its blocked turns that escape up.
    const uint32_t blocked = totalTurn - c.send[t];
    c.escape[ch] = minu(blocked, up);
    up -= c.escape[ch];
    c.esc_off[ch] = off;
    off += c.escape[ch];
    c.stay_off[t] = upq;
    upq += blocked - c.escape[ch];
  }
  laneCount[FOAM_MAX_LANES] = off;

  foam_tile_stats st = load<foam_tile_stats>(stats);
  if (upq > q) st.overflow += upq - q;  // credits make this impossible
  if (down > q) st.overflow += down - q;

  c.src_up_count = c.up_count;
  c.src_down_count = c.down_count;
  c.up_count = upq;
  c.down_count = down;
  c.parity ^= 1u;

  // Credits for next step. Rays granted last step arrive after this exchange,
  // so they are reserved as if already queued.
  const uint32_t reservedUp = upq + c.granted_up;
  const uint32_t availUp = reservedUp < q ? q - reservedUp : 0;
  // An injector lane's demand: what its injector holds and may emit (RouterCount's sums).
  for (unsigned w = 0; w < FOAM_WORKERS; ++w) wanted += c.lane_sums[w][FOAM_LS_DEMAND];
  allowInjectors(p, c, pl, finished);
  const uint32_t reservedDown = down + c.granted[FOAM_MAX_LANES];
  c.granted[FOAM_MAX_LANES] = minu(reservedDown < q ? q - reservedDown : 0, p.parent_capacity);
  // 3. Upward credit shared out by demand over the child lanes, then the injector
  // lanes (RouterForward shares their part: PrefixShare), when they want more, and
  // each child's header out. Beyond its demand a child gets the idle credit only
  // where the queue has room for it on every child: credit stays reserved for a
  // step whether or not rays arrive under it, so a quiet child's otherwise reports
  // its demand and waits a step for the grant, and a busy router hands out none.
  c.share_avail = availUp;
  c.share_wanted = wanted;
  c.granted_up = minu(wanted, availUp);
  const bool room = wanted <= availUp;
  PrefixShare credit{availUp, room ? 0 : wanted, 0};
  uint32_t before = 0;
  const uint32_t idle = wanted + f * p.idle_credit <= availUp ? p.idle_credit : 0u;
  for (unsigned ch = 0; ch < f; ++ch) {
    before += childDemand[ch];
    if (room) {
      c.granted[ch] = minu(childDemand[ch] + idle, p.link_capacity);
      c.granted_up += c.granted[ch] - childDemand[ch];
    } else {
      c.granted[ch] = credit.upTo(before);
    }
    writeHeader(out + ch * child, p.link_capacity, p.ray_bytes, foam_link_header{laneCount[ch], c.granted[ch], 0, down});
  }
  c.share_before = before;
  writeHeader(out + foam_lane_offset(&p, pl, 1), p.parent_capacity, p.ray_bytes,
              foam_link_header{laneCount[FOAM_MAX_LANES], c.granted[FOAM_MAX_LANES], finished, upq});

  uint32_t moved = laneCount[FOAM_MAX_LANES];  // the parent's lane, then the children's
  for (unsigned l = 0; l < f; ++l) moved += laneCount[l];
  st.rays_in += moved;
  if (upq + down > st.peak_queue) st.peak_queue = upq + down;
  st.iterations++;
  memcpy(&stats[0], &st, sizeof st);
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
    planStep(*this);
    return true;
  }
};

// Phases 1 and 2 in one worker, for a schedule that runs them beside the tracers'
// march (Schedule::PlanBesideMarch): the march outlasts a router's count and plan
// together on most steps, so the step no longer waits for a set in which only the
// plan runs. It counts the six workers' shares in one walk (countAll), so its
// rows, and with them RouterForward's ranks, are those RouterCount's workers write.
class RouterCountPlan : public Vertex {
public:
  Input<Bytes> params;
  Input<Bytes> inboxes;
  InOut<Bytes> outboxes;
  InOut<Words> ctl;
  InOut<Bytes> stats;

  bool compute() {
    countAll(*this);
    planStep(*this);
    return true;
  }
};

namespace {

// Where RouterForward's worker puts the rays it moves: the lanes out and the queue
// halves rays stay in.
struct ForwardTo {
  const foam_params &p;
  const foam_router_ctl &c;
  unsigned char *childSlots, *upSlots, *upDst, *downDst;
  size_t childStride;
};

// RouterForward's walk over worker `workerId`'s slices of the sources, for a half
// payload (`Half`) or any other (p.ray_bytes, read at run time). The half layout, the
// default, gets its own copy of the walk: every ray moved then copies a constant
// length and finds its slot by a constant stride, without foam_slot_copy's switch
// over the sizes (with the flag read once below, 14 % of the busy forwards'
// instructions on a degree 2 recording of the bicycle scene).
// `rank`: the worker's next rank in every category. Inlined, as the walk was.
template <bool Half>
__attribute__((always_inline)) inline void forwardRays(const Sources &s, unsigned workerId, unsigned workers,
                                                       const ForwardTo &to, uint32_t rank[FOAM_CATS]) {
  const foam_params &p = to.p;
  const foam_router_ctl &c = to.c;
  const unsigned st = Half ? (unsigned)sizeof(foam_ray_half) : p.ray_bytes, q = p.queue_capacity;
  const Route route = routeOf(p);
  // Read before the walk: the rays' copies are byte stores, which may alias the
  // params as far as the compiler knows, so it read the flag again for every ray.
  const bool countHops = p.hops != 0;
  auto lane = [&](unsigned ch, uint32_t slot) { return to.childSlots + ch * to.childStride + (size_t)slot * st; };
  auto upLane = [&](uint32_t slot) { return to.upSlots + (size_t)slot * st; };
  // A queue slot, or null past the capacity (never with correct credits).
  auto stay = [&](unsigned char *half, uint32_t slot) -> unsigned char * {
    return slot < q ? half + (size_t)slot * st : nullptr;
  };
  Source from;
  unsigned begin, end;
  for (Slices w(s, workerId, workers); w.next(from, begin, end);) {
    for (unsigned i = begin; i < end; ++i) {
      const unsigned char *src = from.ptr + (size_t)i * st;
      FOAM_PROBE(ray);
      int cat = classify(route, src, from.fromParent);
      if (cat < 0) continue;
      uint32_t r = rank[cat]++;
      unsigned char *dst;
      bool leaves = true;
      if (cat == FOAM_CAT_UP) {
        if (r < c.send[cat]) dst = upLane(r);
        else { dst = stay(to.upDst, c.stay_off[cat] + r - c.send[cat]); leaves = false; }
      } else if (cat < FOAM_CAT_TURN) {
        unsigned ch = (unsigned)cat - FOAM_CAT_DOWN;
        if (r < c.send[cat]) dst = lane(ch, c.lane_off[cat] + r);
        else { dst = stay(to.downDst, c.stay_off[cat] + r - c.send[cat]); leaves = false; }
      } else {
        unsigned ch = (unsigned)cat - FOAM_CAT_TURN;
        if (r < c.send[cat]) dst = lane(ch, c.lane_off[cat] + r);
        else if (r < c.send[cat] + c.escape[ch]) dst = upLane(c.esc_off[ch] + r - c.send[cat]);
        else {
          dst = stay(to.upDst, c.stay_off[cat] + r - c.send[cat] - c.escape[ch]);
          leaves = false;
        }
      }
      if (!dst) continue;  // over capacity: RouterPlan counted it as overflow
      FOAM_PROBE(moved);
      if (Half) foam_half_slot_copy(dst, src);
      else foam_slot_copy(dst, src, st);
      if (leaves && countHops) {  // one more router visited
        foam_ray_hops h;
        memcpy(&h, dst + st - sizeof h, sizeof h);
        h.router++;
        memcpy(dst + st - sizeof h, &h, sizeof h);
      }
    }
  }
}

}  // namespace

// Phase 3: each worker walks its slices in the same order as RouterCount and puts
// every ray where its rank says: a lane slot or a slot in the other queue half.
class RouterForward : public MultiVertex {
public:
  Input<Bytes> params;
  Input<Bytes> inboxes;
  InOut<Bytes> queues;
  InOut<Bytes> outboxes;
  InOut<Words> ctl;  // writes only allowed_by[workerId]

  bool compute(unsigned workerId) {
    const foam_params &p = cview<foam_params>(params);
    const foam_router_ctl &c = cview<foam_router_ctl>(ctl);
    const unsigned stride = p.ray_bytes, q = p.queue_capacity, up = foam_parent_lane(&p);
    const unsigned srcParity = c.parity ^ 1u;
    unsigned char *qs = &queues[0];
    const Sources s = sources(p, &inboxes[0], qs, srcParity, c.src_up_count, c.src_down_count);
    unsigned char *boxes = &outboxes[0];
    // The lanes' slots start after their headers; children's lanes are all alike.
    ForwardTo to{p,
                 c,
                 boxes + sizeof(foam_link_header),
                 boxes + foam_lane_offset(&p, up, 1) + sizeof(foam_link_header),
                 qs + (size_t)c.parity * q * stride,
                 qs + (size_t)(2 + c.parity) * q * stride,
                 foam_child_stride(&p)};
    uint32_t rank[FOAM_CATS];
    // Worker 0's ranks start at 0 in every category (RouterPlan writes no base for it).
    if (workerId) forEachCat(p.fanout, [&](unsigned k) { rank[k] = c.base[workerId][k]; });
    else forEachCat(p.fanout, [&](unsigned k) { rank[k] = 0; });
    const unsigned workers = numWorkers();
    if (stride == sizeof(foam_ray_half)) forwardRays<true>(s, workerId, workers, to, rank);
    else forwardRays<false>(s, workerId, workers, to, rank);
    const uint32_t allowed = p.inject_lanes ? answerInjectors(p, &inboxes[0], boxes, c, workerId, workers) : 0;
    memcpy(&ctl[0] + offsetof(foam_router_ctl, allowed_by) / 4 + workerId, &allowed, sizeof allowed);
    return true;
  }
};

FOAM_STACK(RouterCount);
FOAM_STACK(RouterPlan);
FOAM_STACK(RouterCountPlan);
FOAM_STACK(RouterForward);

#ifndef __POPC__
FOAM_HOST_VERTEX(RouterCount, params, inboxes, ctl)
FOAM_HOST_VERTEX(RouterPlan, params, inboxes, outboxes, ctl, stats)
FOAM_HOST_VERTEX(RouterCountPlan, params, inboxes, outboxes, ctl, stats)
FOAM_HOST_VERTEX(RouterForward, params, inboxes, queues, outboxes, ctl)
#endif
