// Injector tiles emit the frame's primary rays. Each one hangs off the root
// router on a lane of its own, with direct lanes to routers under the root
// beside it, owns a list of pixel blocks the host chose for the frame, and emits
// them as far as the root allows: the root keeps the rays in flight within what
// the spill store could take.
//
// Every primary ray starts in the cell nearest the camera, so in the paper's design
// every ray of the frame first queues for the one tracer that owns it, and then for
// the few tracers around it. Here each injector holds copies of the shards its own
// blocks' rays cross first (foam_region_header, written by the host with the
// camera) and marches new rays through them itself; they enter the tree already
// addressed to wherever they leave that region. Several injectors split both the
// marching and the injection, and each one's region follows its part of the view.
#include <poplar/Vertex.hpp>

#include "foam/codelet.h"

#include <stddef.h>
#include <string.h>

#include "foam/lanes.h"
#include "foam/layout.h"
#include "foam/probe.h"
// Before march.h: an injector's shard visits and rays weigh what they cost it in its
// budget (layout.h).
#define FOAM_MARCH_VISIT_Q8 FOAM_BUDGET_INJECTOR_VISIT_Q8
#define FOAM_MARCH_RAY_Q8 FOAM_BUDGET_INJECTOR_RAY_Q8
#include "foam/march.h"
#include "foam/ray.h"

using namespace poplar;


// The injector's rays wait in its queue (the held store's tensor): rays marched
// that no lane took yet at [0, held), then the newest emitted ones, not yet marched,
// at [march_begin, march_end) (march_begin == held). The three vertices each do one
// thing to the queue, so the graph builder may run them in either of two orders
// (render_graph.cpp, by the spec's Schedule): emit, march, deal, or march beside the
// tracers first, deal, and emit last for the next step's march (where the deal and
// the emit share a set, InjectorDealEmit does both). Each writes the
// header fields it knows; `next` is written by both Injector and InjectorSend, so
// whichever runs last leaves it current.

// Emits this step's new primary rays into the queue behind the held ones (one
// worker), as many as the root allows and the queue holds.
namespace {

// The new rays the root lets this injector emit at its next emit: the root's
// answer, or in a frame's first step, which no answer reaches in time, the share
// the plan gave it (layout.h foam_params.max_in_flight). `st` counts the steps.
inline uint32_t emitAllowance(const foam_params &p, const foam_inject_down &root, const foam_tile_stats &st) {
  return st.iterations == 0 ? p.max_in_flight : root.allowance;
}

// Injector's step, for it or for InjectorDealEmit after its deal.
template <class V> bool emitStep(V &vx) {
  // One declaration a field: `auto` deduces one type per declaration.
  const auto &params = vx.params;
  const auto &camera = vx.camera;
  const auto &blocks = vx.blocks;
  const auto &inbox = vx.inbox;
  auto &queue = vx.queue;
  auto &outbox = vx.outbox;
  auto &ctl = vx.ctl;
  auto &status = vx.status;
  auto &stats = vx.stats;
  const foam_params p = load<foam_params>(params);
  const foam_camera cam = load<foam_camera>(camera);
  const foam_inject_down in = load<foam_inject_down>(inbox);
  foam_injector_ctl c = load<foam_injector_ctl>(ctl);
  foam_frame_status fs = load<foam_frame_status>(status);
  foam_tile_stats st = load<foam_tile_stats>(stats);
  const unsigned stride = p.ray_bytes, cap = foam_injector_queue(&p);
  const uint32_t listed = load<uint32_t>(blocks);
  const uint32_t count = listed < p.block_slots ? listed : p.block_slots;
  const uint32_t area = (uint32_t)p.block_w * p.block_h;
  // The next pixel of the open block, (u, v) along its rows (batch_kind 0) or
  // columns (1): one division per step, none per ray (the IPU divides integers
  // in software).
  const uint32_t inner = p.batch_kind == 0 ? p.block_w : p.block_h;
  if (area == 0) return false;  // the host never plans an empty block
  uint32_t u = (area - c.block_left) % inner, v = (area - c.block_left) / inner;
  unsigned char *out = &queue[0];

  const uint32_t kept = c.held;
  const uint32_t allowance = emitAllowance(p, in, st);
  const uint32_t limit = allowance < cap - kept ? allowance : cap - kept;
  uint32_t sent = 0;
  bool idle = false;
  if (c.block_left == 0 && c.next < count && c.drain_left > 0) {
    c.drain_left--;
    idle = true;
  }
  // Blocks follow each other within a step unless drain iterations separate them
  // (the paper's hand-tuned schedule); without, only the credits pace injection.
  while (!idle && sent < limit) {
    if (c.block_left == 0) {
      if (c.next >= count || c.drain_left > 0) break;
      c.next++;
      c.block_left = area;
      c.drain_left = p.drain_iters;
      u = v = 0;
    }
    const foam_block b = load<foam_block>(blocks, 4 + (c.next - 1) * sizeof(foam_block));
    c.block_left--;
    const uint32_t x = b.x + (p.batch_kind == 0 ? u : v);
    const uint32_t y = b.y + (p.batch_kind == 0 ? v : u);
    if (++u == inner) u = 0, ++v;
    if (x >= cam.width || y >= cam.height) continue;
    foam_ray r;
    FOAM_PROBE(emit);
    foam_ray_primary(&cam, foam_px_make(x, y, 0), &r);
    foam_ray_store(out + (size_t)(kept + sent++) * stride, p.layout, p.hops, &r);
  }
  // Rays left unmarched last step (InjectorSend put march_begin at the first of
  // them) march again, before the new ones.
  if (c.unmarched == 0) c.march_begin = kept;
  c.march_end = kept + sent;
  c.more = c.block_left > 0 || c.next < count;

  // The root counts every ray in flight from `emitted`, and lets this injector
  // emit next at most `next` (layout.h foam_inject_up).
  foam_inject_up h = load<foam_inject_up>(outbox);
  h.emitted = sent;
  h.next = (uint16_t)(c.more ? cap - kept : 0);
  // Whole blocks left, the open one's rest, and the pixels off the frame's edge
  // with them: the root only compares injectors' shares.
  const uint32_t left = c.block_left + (count - (c.next < count ? c.next : count)) * area;
  const uint32_t units = left / FOAM_LEFT_UNIT + (left % FOAM_LEFT_UNIT != 0);
  h.left = (uint16_t)(units < FOAM_LEFT_MAX ? units : FOAM_LEFT_MAX);
  memcpy(&outbox[0], &h, sizeof h);

  fs.injected += sent;
  fs.iterations++;
  fs.total = cam.width * cam.height;
  uint32_t marched = 0, steps = 0;
  for (unsigned w = 0; w < FOAM_WORKERS; ++w) {
    marched += c.work[w][FOAM_IW_VISITS];
    steps += c.work[w][FOAM_IW_STEPS];
  }
  st.rays_in = marched;
  st.cell_steps = steps;
  st.pixels += sent;  // rays emitted
  st.iterations++;
  memcpy(&ctl[0], &c, sizeof c);
  memcpy(&status[0], &fs, sizeof fs);
  memcpy(&stats[0], &st, sizeof st);
  return true;
}

}  // namespace

class Injector : public Vertex {
public:
  Input<Bytes> params;
  Input<Bytes> camera;
  Input<Bytes> blocks;
  Input<Bytes> inbox;  // a bare foam_inject_down: the root's credit and what it may emit
  InOut<Bytes> queue;
  InOut<Bytes> outbox;  // only its header's `emitted` and `next`
  InOut<Words> ctl;
  InOut<Bytes> status;
  InOut<Bytes> stats;

  bool compute() { return emitStep(*this); }
};

// Six workers march the queue's newly emitted rays in place through the region's
// shards, as the tracers owning them would.
class InjectorMarch : public MultiVertex {
public:
  Input<Blobs> region;
  Input<Bytes> camera;
  Input<Bytes> params;
  InOut<Bytes> queue;
  InOut<Words> ctl;  // writes only work[workerId], stopped[workerId] and paused[workerId]

  bool compute(unsigned workerId) {
    const foam_params &p = cview<foam_params>(params);
    const foam_camera &cam = cview<foam_camera>(camera);
    const foam_injector_ctl &c = cview<foam_injector_ctl>(ctl);
    const foam_region_header &rh = cview<foam_region_header>(region);
    const unsigned workers = numWorkers();
    unsigned char *slots = &queue[0];
    unsigned *work = &ctl[0] + offsetof(foam_injector_ctl, work) / 4 + workerId * FOAM_IW_COUNTERS;
    // Worker w takes rays w, w + 6, ... as TracerMarch does: rays emitted together
    // (neighbouring pixels) cost alike, so contiguous ranges left one worker the
    // dearest part of the region.
    const uint32_t limit = foam_budget_limit(&work[FOAM_IW_VISITS], p.march_budget);
    unsigned *stopped = &ctl[0] + offsetof(foam_injector_ctl, stopped) / 4 + workerId;
    // A worker's budget runs out inside a ray, after the step that spends it, not at the
    // ray's end (rays cross up to a few hundred of the region's cells) nor at the
    // next shard boundary (the tile waits for its busiest worker, and a shard's
    // rest of cells made it 1.3x the mean): the ray it pauses stays held, and it
    // marches that one on first, from the fp32 state it kept.
    const uint32_t resume = *stopped;
    *stopped = 0;
    unsigned *pausedAt = &ctl[0] + (offsetof(foam_injector_ctl, paused) + workerId * sizeof(foam_paused_ray)) / 4;
    foam_paused_ray paused;
    memcpy(&paused, pausedAt, sizeof paused);
    auto march = [&](unsigned i, bool resumed) {
      unsigned char *slot = slots + (size_t)i * p.ray_bytes;
      foam_ray ray;
      FOAM_PROBE(ray);
      // Every ray but the one a worker paused is marched here first, as its emit
      // made it (foam_slot_unmarched): its pixel word says all the rest.
      if (resumed) {
        foam_ray_load(slot, p.layout, p.hops, &ray);
        foam_ray_resume(&paused, &ray);
      } else {
        foam_ray_primary(&cam, foam_slot_px(slot), &ray);
      }
      // One shard visit = one tracer hop, as on a tracer tile; no shard of its own.
      work[FOAM_IW_RAYS]++;
      if (foam_march_copies(&cam, p.layout, p.hops, slot, FOAM_INVALID_SHARD, nullptr, &rh, &region[0], &ray,
                            &work[FOAM_IW_VISITS], limit, &paused, resumed, 1))
        *stopped = i + 1;
    };
    if (resume) march(resume - 1, true);
    for (unsigned i = c.march_begin + workerId; i < c.march_end && !*stopped; i += workers) {
      if (foam_budget_spent(&work[FOAM_IW_VISITS], limit)) break;
      // Held rays between the unmarched ones were marched already (a stopped one
      // is its worker's to resume).
      if (c.unmarched && !foam_slot_unmarched(slots + (size_t)i * p.ray_bytes)) continue;
      march(i, false);
    }
    if (*stopped) memcpy(pausedAt, &paused, sizeof paused);
    return true;
  }
};

// Deals the queue's marched rays out (one worker): every ray whose router under the
// root has credit on this injector's direct lane to it goes there, past the root
// (an injector has lanes only to the routers its rays mostly head for); the rest
// take the root's lane while it has room, and stay held in the queue after that.
// Every primary ray crossed the root in the paper's design, and the root's queue,
// which reserves a step of room for each credit it grants, paced the whole frame.
// The root now grants room on its lane only for the rays that want it, and
// separately lets the injector emit as many as the spill store could still take.
namespace {

// InjectorSend's step, for it or for InjectorDealEmit.
template <class V> void dealStep(V &vx) {
  const auto &params = vx.params;
  const auto &inbox = vx.inbox;
  const auto &directIn = vx.directIn;
  auto &queue = vx.queue;
  auto &outbox = vx.outbox;
  auto &directOut = vx.directOut;
  auto &ctl = vx.ctl;
  auto &stats = vx.stats;
  const foam_params p = load<foam_params>(params);
  foam_inject_up h = load<foam_inject_up>(outbox);
  foam_injector_ctl c = load<foam_injector_ctl>(ctl);
  // `cap`: the lane to the root; `qcap`: the queue, which may hold more.
  const unsigned stride = p.ray_bytes, lanes = p.direct_lanes, cap = p.link_capacity, qcap = foam_injector_queue(&p);
  const foam_inject_down root = load<foam_inject_down>(inbox);
  const uint32_t rootCredit = root.credit;
  const uint32_t rootLimit = rootCredit < cap ? rootCredit : cap;
  const bool more = c.more != 0;
  unsigned char *slots = &outbox[0] + sizeof(foam_inject_up);
  const unsigned children = (1u << p.route_bits) - 1u;  // the root's child bits, as a mask
  uint32_t limit[FOAM_MAX_FANOUT], sent[FOAM_MAX_FANOUT];
  for (unsigned k = 0; k < lanes; ++k) {
    const uint32_t credit = load<foam_inject_down>(directIn, foam_direct_offset(&p, k, 0)).credit;
    limit[k] = credit < p.direct_capacity ? credit : p.direct_capacity;
    sent[k] = 0;
  }
  // The rays workers stopped inside the region (at most one each), by slot: they
  // stay held like unmarched ones, and their workers find them where they move.
  uint32_t stop[FOAM_WORKERS], stopWorker[FOAM_WORKERS], stops = 0, nextStop = 0;
  for (unsigned w = 0; w < FOAM_WORKERS; ++w) {
    if (!c.stopped[w]) continue;
    unsigned j = stops++;
    for (; j > 0 && stop[j - 1] > c.stopped[w] - 1; --j) stop[j] = stop[j - 1], stopWorker[j] = stopWorker[j - 1];
    stop[j] = c.stopped[w] - 1;
    stopWorker[j] = w;
    c.stopped[w] = 0;
  }
  uint32_t up = 0, kept = 0, direct = 0, unmarched = 0, first = 0;
  for (uint32_t i = 0; i < c.march_end; ++i) {
    unsigned char *slot = &queue[0] + (size_t)i * stride;
    FOAM_PROBE(deal);
    const bool stoppedHere = nextStop < stops && stop[nextStop] == i;
    if (stoppedHere) c.stopped[stopWorker[nextStop++]] = kept + 1;
    // A ray no worker reached within the budget, or one stopped in the region,
    // stays, and marches next step.
    if (stoppedHere || (p.march_budget && i >= c.march_begin && foam_slot_unmarched(slot))) {
      if (unmarched++ == 0) first = kept;
      if (kept != i) foam_slot_copy(&queue[0] + (size_t)kept * stride, slot, stride);
      kept++;
      continue;
    }
    const unsigned k = lanes ? p.direct_lane[((uint32_t)foam_slot_shard(slot) >> p.level_shift) & children] : 0;
    if (k < lanes && sent[k] < limit[k]) {
      foam_slot_copy(&directOut[0] + foam_direct_offset(&p, k, 1) + sizeof(foam_inject_up) + (size_t)sent[k]++ * stride,
                     slot, stride);
      direct++;
    } else if (up < rootLimit) {
      foam_slot_copy(slots + (size_t)up++ * stride, slot, stride);
    } else {
      if (kept != i) foam_slot_copy(&queue[0] + (size_t)kept * stride, slot, stride);
      kept++;
    }
  }
  // A direct lane is wanted for the rays held back and those the root lets this
  // injector emit next (the allowance it emits by at its next emit), whichever router
  // they head for, up to a full lane. Not a full lane whenever pixels are left:
  // while the root holds emission back no ray would take that credit, and a
  // router reserves its queue for a step for every credit it grants, so its own
  // children starved, the more the more injectors there are.
  const uint32_t room = qcap - kept, next = root.allowance < room ? root.allowance : room;
  const uint32_t coming = kept + (more ? next : 0);
  for (unsigned k = 0; k < lanes; ++k) {
    unsigned char *box = &directOut[0] + foam_direct_offset(&p, k, 1);
    foam_inject_up d;
    d.count = sent[k];
    d.next = 0;
    d.left = 0;
    d.emitted = 0;
    d.pending = coming < p.direct_capacity ? coming : p.direct_capacity;
    memcpy(box, &d, sizeof d);
    if (sent[k] < p.direct_capacity) foam_slot_invalidate(box + sizeof d + (size_t)sent[k] * stride);
  }
  // The root's lane is wanted for what was held back and what took it now, and,
  // without direct lanes, for what is coming too; the injector would emit as many
  // new rays as its queue could hold beside those held.
  const uint32_t wants = up + (lanes ? kept : coming);
  h.count = up;
  h.pending = wants < cap ? wants : cap;
  h.next = (uint16_t)(more ? qcap - kept : 0);
  memcpy(&outbox[0], &h, sizeof h);
  if (up < cap) foam_slot_invalidate(slots + (size_t)up * stride);
  c.held = kept;
  c.unmarched = unmarched;
  c.march_begin = unmarched ? first : kept;
  c.march_end = kept;
  memcpy(&ctl[0], &c, sizeof c);
  foam_tile_stats st = load<foam_tile_stats>(stats);
  st.side_sent += direct;
  memcpy(&stats[0], &st, sizeof st);
}

}  // namespace

class InjectorSend : public Vertex {
public:
  Input<Bytes> params;
  Input<Bytes> inbox;     // the root's foam_inject_down: room on its lane
  Input<Bytes> directIn;  // a bare foam_inject_down per direct lane: that router's credit
  InOut<Bytes> queue;
  InOut<Bytes> outbox;
  InOut<Bytes> directOut;
  InOut<Words> ctl;
  InOut<Bytes> stats;

  bool compute() {
    dealStep(*this);
    return true;
  }
};

// The deal, then the emit for the next step's march, in one worker: the order
// Schedule::SendBesideForward runs them in two sets, for a schedule that has one
// set after the march (Schedule::PlanBesideMarch). The root's header in `inbox`
// serves both: the room on its lane, and what this injector may emit.
class InjectorDealEmit : public Vertex {
public:
  Input<Bytes> params;
  Input<Bytes> camera;
  Input<Bytes> blocks;
  Input<Bytes> inbox;
  Input<Bytes> directIn;
  InOut<Bytes> queue;
  InOut<Bytes> outbox;
  InOut<Bytes> directOut;
  InOut<Words> ctl;
  InOut<Bytes> status;
  InOut<Bytes> stats;

  bool compute() {
    dealStep(*this);
    return emitStep(*this);
  }
};

FOAM_STACK(Injector);
FOAM_STACK(InjectorMarch);
FOAM_STACK(InjectorSend);
FOAM_STACK(InjectorDealEmit);

#ifndef __POPC__
FOAM_HOST_VERTEX(InjectorDealEmit, params, camera, blocks, inbox, directIn, queue, outbox, directOut, ctl, status, stats)
FOAM_HOST_VERTEX(InjectorSend, params, inbox, directIn, queue, outbox, directOut, ctl, stats)
FOAM_HOST_VERTEX(InjectorMarch, region, camera, params, queue, ctl)
FOAM_HOST_VERTEX(Injector, params, camera, blocks, inbox, queue, outbox, ctl, status, stats)
#endif
