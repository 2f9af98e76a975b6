// Tracer tiles: march the rays their parent router delivered through the local
// shard, keep the rays that finish in its result store or framebuffer slice, and
// hand the rest back to the router tree (paper §4.5, §4.7).
//
// A shard of a large scene fills a fraction of its tile, so a tracer may also hold
// copies of the neighbouring shards its rays cross into most (chosen by the host
// from a sample of the camera's rays, src/device/copies.rs). A ray goes on through
// those in the same step instead of taking one compute/exchange iteration, and a
// trip through the routers, per shard.
#include <poplar/Vertex.hpp>

#include "foam/codelet.h"

#include <stddef.h>
#include <string.h>

#include "foam/lanes.h"
#include "foam/layout.h"
#include "foam/probe.h"
#include "foam/march.h"
#include "foam/ray.h"

using namespace poplar;


namespace {

// What a finished ray leaves behind, wherever it is written.
foam_result outcome(const foam_camera &cam, const foam_params &p, const foam_ray &ray) {
  foam_result r;
  r.pixel = foam_pixel_index(&cam, ray.px) + 1;
  r.r = ray.r;
  r.g = ray.g;
  r.b = ray.b;
  r.opacity = 1.0f - ray.T;
  // Only the half payload carries depth between tiles; the others cannot know it.
  r.depth = p.layout == FOAM_LAYOUT_HALF && ray.depth >= 0.0f ? ray.depth : -1.0f;
  r.router_hops = ray.router_hops;
  r.tracer_hops = ray.tracer_hops;
  return r;
}

// log2 of the framebuffer homes (a power of two), or -1 if they are none: the
// framebuffer slot of a pixel is pixel >> this (layout.h foam_camera), with no
// integer divide.
int slotShift(const foam_camera &cam) {
  int shift = 0;
  while (shift < 31 && (1u << shift) < cam.homes) ++shift;
  return (1u << shift) == cam.homes ? shift : -1;
}

// Writes a finished ray into this tracer's framebuffer slice; false if the pixel is
// not in the slice (a routing bug: counted, never silently ignored).
bool writePixel(unsigned char *pixels, unsigned slicePixels, int shift, const foam_params &p, const foam_camera &cam,
                const foam_ray &ray) {
  const foam_result r = outcome(cam, p, ray);
  const uint32_t pixel = r.pixel - 1;
  if (foam_pixel_home(&cam, pixel) != p.shard || (pixel >> shift) >= slicePixels) return false;
  unsigned char *slot = pixels + (size_t)(pixel >> shift) * sizeof(foam_pixel);
  foam_pixel px;
  memcpy(&px, slot, sizeof px);
  px.r = r.r;
  px.g = r.g;
  px.b = r.b;
  px.opacity = r.opacity;
  px.depth = r.depth;
  px.router_hops = r.router_hops;
  px.tracer_hops = r.tracer_hops;
  px.writes += 1;
  memcpy(slot, &px, sizeof px);
  return true;
}

// The buffers TracerMarch takes rays from each step: its parent's inbox, then one
// per side link, in lane order (it rewrites the rays in place).
struct Inboxes {
  unsigned char *slots[2 + FOAM_MAX_SIDES];  // room for TracerMarch's held rays ahead
  unsigned count[2 + FOAM_MAX_SIDES];
  unsigned n;
};

Inboxes inboxes(const foam_params &p, unsigned char *inbox, unsigned char *sideIn) {
  Inboxes b;
  b.slots[0] = inbox + sizeof(foam_link_header);
  b.count[0] = load<foam_link_header>(inbox).count;
  b.n = 1;
  for (unsigned k = 0; k < p.side_links; ++k, ++b.n) {
    unsigned char *side = sideIn + foam_side_offset(&p, k);
    b.slots[b.n] = side + sizeof(foam_link_header);
    b.count[b.n] = load<foam_link_header>(side).count;
  }
  return b;
}

}  // namespace

// Phase 1 of a step: six workers march disjoint ranges of the inboxes in place. A
// ray that finishes here goes to the worker's part of the result store, or to this
// slice if it is home, and its slot is freed; every other ray keeps its slot with
// its new destination for TracerSend.
class TracerMarch : public MultiVertex {
public:
  Input<Blobs> shard;
  Input<Blobs> copies;  // foam_region_header | blobs: neighbours' shards it marches rays on through
  Input<Bytes> camera;
  Input<Bytes> params;
  InOut<Bytes> inbox;
  InOut<Bytes> sideIn;
  InOut<Bytes> pending;  // rays held unmarched (march_budget) march first, in place
  InOut<Bytes> pixels;
  InOut<Bytes> results;  // result store: worker w owns slots [w, w + 1) * result_slots
  InOut<Words> ctl;  // foam_tracer_ctl; this vertex writes only work, handoff and paused [workerId]

  bool compute(unsigned workerId) {
    const foam_params &p = cview<foam_params>(params);
    Inboxes in = inboxes(p, &inbox[0], &sideIn[0]);
    const unsigned workers = numWorkers();
    // With a march budget, rays no worker reached last step wait at the front of the
    // pending store (TracerSend keeps them there), still addressed to this shard:
    // they march first, as one more inbox ahead of the others.
    const unsigned held = cview<foam_tracer_ctl>(ctl).held;
    if (held) {
      for (unsigned b = in.n; b > 0; --b) in.slots[b] = in.slots[b - 1], in.count[b] = in.count[b - 1];
      in.slots[0] = &pending[0];
      in.count[0] = held;
      in.n++;
    }
    unsigned total = 0;
    for (unsigned b = 0; b < in.n; ++b) total += in.count[b];
    // The ray this worker paused inside a shard last step: TracerSend keeps it with
    // the rays waiting for credit, past the held ones the workers share out, so that
    // no other worker reads its slot while this one marches it on (with the paused
    // slots among the held ones, a worker whose stride reached one after its own
    // worker had stored the ray's next shard there marched it a second time).
    const unsigned handoff = offsetof(foam_tracer_ctl, handoff) / 4 + workerId;
    const unsigned resume = ctl[handoff];
    ctl[handoff] = held;  // now the lowest held slot this worker marches
    if (workerId >= total && !resume) return true;  // most tracers idle most steps: touch nothing more
    const foam_camera &cam = cview<foam_camera>(camera);
    const foam_region_header &directory = cview<foam_region_header>(copies);
    const int shift = slotShift(cam);
    if (shift < 0) return false;  // the host writes 2^depth homes
    const unsigned slicePixels = pixels.size() / sizeof(foam_pixel);
    unsigned *work = &ctl[0] + offsetof(foam_tracer_ctl, work) / 4 + workerId * FOAM_TW_COUNTERS;
    unsigned char *store = &results[0] + (size_t)workerId * p.result_slots * sizeof(foam_result);
    // Worker w takes rays w, w + 6, ... of the inboxes taken as one: neighbouring rays
    // (one source, one part of the view) cost alike, so contiguous ranges left the
    // busiest worker 1.5x the mean, and a tile waits for its busiest worker.
    unsigned next = workerId;
    // The budget ends inside a ray, after the step that spends it: a tile waits for its
    // busiest worker, and ending at a ray's end left it a ray's rest of cells over.
    const uint32_t limit = foam_budget_limit(&work[FOAM_TW_MARCHED], p.march_budget);
    unsigned *pausedAt = &ctl[0] + (offsetof(foam_tracer_ctl, paused) + workerId * sizeof(foam_paused_ray)) / 4;
    foam_paused_ray paused;
    if (resume) memcpy(&paused, pausedAt, sizeof paused);
    // A worker pauses one ray a step (its state has one slot), and stops there.
    bool stopped = false;
    // Marches the ray in `slot` (from its pause if `resumed`) and writes what it left.
    auto visit = [&](unsigned char *slot, bool resumed) {
      foam_ray ray;
      FOAM_PROBE(ray);
      work[FOAM_TW_LOADED]++;
      foam_ray_load(slot, p.layout, p.hops, &ray);
      if (resumed) {
        foam_ray_resume(&paused, &ray);  // on a copy, perhaps: not checked against this shard
      } else if (ray.shard != p.shard) {  // not ours: TracerSend returns it to the tree
        work[FOAM_TW_MISROUTED]++;
        return;
      }
      if (ray.cell != FOAM_FINISHED_CELL) {
        // On through its own shard and its copies (foam_march_copies), each visit a tracer hop.
        work[FOAM_TW_RAYS]++;
        if (foam_march_copies(&cam, p.layout, p.hops, slot, (uint16_t)p.shard, &shard[0], &directory, &copies[0], &ray,
                              &work[FOAM_TW_MARCHED], limit, &paused, resumed, 0)) {
          // Paused: it stays here, its slot naming this worker, its state in ctl.
          foam_ray_dest mark;
          mark.shard = FOAM_PAUSED_SHARD;
          mark.cell = (uint16_t)workerId;
          memcpy(slot, &mark, sizeof mark);
          memcpy(pausedAt, &paused, sizeof paused);
          stopped = true;
          return;
        }
        if (ray.cell != FOAM_FINISHED_CELL) return;  // TracerSend takes it on
        // Finished here: keep it in this worker's part of the result store if
        // there is room, instead of sending it home through the tree.
        if (work[FOAM_TW_RESULTS] < p.result_slots) {
          FOAM_PROBE(result);
          const foam_result r = outcome(cam, p, ray);
          memcpy(store + (size_t)work[FOAM_TW_RESULTS]++ * sizeof r, &r, sizeof r);
          work[FOAM_TW_PIXELS]++;
          foam_slot_invalidate(slot);
          return;
        }
      }
      // Finished, and home (arrived, or ended here): write the pixel and free the
      // slot. A finished ray whose home is elsewhere is already in its slot.
      if (ray.shard == p.shard) {
        FOAM_PROBE(pixel);
        if (writePixel(&pixels[0], slicePixels, shift, p, cam, ray))
          work[FOAM_TW_PIXELS]++;
        else
          work[FOAM_TW_MISROUTED]++;
        foam_slot_invalidate(slot);
      }
    };
    if (resume) visit(&pending[0] + (size_t)(resume - 1) * p.ray_bytes, true);
    for (unsigned b = 0, base = 0; b < in.n; base += in.count[b++]) {
      // The held rays from the last one down: those no worker reaches stay a prefix
      // of the store that TracerSend passes over in place.
      const bool down = b == 0 && held;
      for (; next < base + in.count[b]; next += workers) {
        if (stopped || foam_budget_spent(&work[FOAM_TW_MARCHED], limit)) break;
        const unsigned k = down ? held - 1 - (next - base) : next - base;
        unsigned char *slot = in.slots[b] + (size_t)k * p.ray_bytes;
        visit(slot, false);
      }
      // The last held ray this worker marched is the one before `next` (the budget
      // stopped it there, or the held rays ended): the lowest slot it marched.
      if (down && next >= workerId + workers) ctl[handoff] = held + workers - 1 - next;
    }
    return true;
  }
};

// Phase 2: one worker moves outgoing rays (the pending store first, oldest first,
// then this step's inboxes) out: over the side link to their next shard if it is
// a side neighbour with credit left, else into the parent's outbox as far as its
// credit allows; the rest wait in the pending store. Then it grants credit, the
// parent first, for the rays this tile can still take without overflowing the
// pending store.
class TracerSend : public Vertex {
public:
  Input<Bytes> params;
  Input<Bytes> inbox;
  Input<Bytes> sideIn;
  InOut<Bytes> outbox;
  InOut<Bytes> sideOut;
  InOut<Bytes> pending;
  InOut<Words> ctl;
  InOut<Bytes> stats;

  bool compute() {
    const foam_params &p = cview<foam_params>(params);
    const foam_link_header in = load<foam_link_header>(inbox);
    foam_tracer_ctl &c = view<foam_tracer_ctl>(ctl);
    const unsigned stride = p.ray_bytes;
    const unsigned capacity = p.queue_capacity;
    const unsigned limit = in.credit < p.link_capacity ? in.credit : p.link_capacity;
    unsigned char *out = &outbox[0] + sizeof(foam_link_header);
    unsigned char *store = &pending[0];
    unsigned sent = 0, kept = 0, overflow = 0;
    unsigned sideLimit[FOAM_MAX_SIDES], sideSent[FOAM_MAX_SIDES];
    // The cost model's events: its side links, and the rays waiting for credit in its
    // pending store, which this call walks again.
    FOAM_PROBE_ADD(link, p.side_links);
    FOAM_PROBE_ADD(wait_walk, c.pending - c.held);
    // Where this call takes rays from: the pending store (from `first`), then the
    // parent's inbox and the side links' in lane order, those with rays only.
    struct Source {
      const unsigned char *slots;
      unsigned first, count;
    };
    Source from[2 + FOAM_MAX_SIDES];
    unsigned sources = 0;
    from[sources++] = {store, 0, c.pending};
    if (in.count) from[sources++] = {&inbox[0] + sizeof(foam_link_header), 0, in.count};
    // One pass over the side links (most carry nothing most steps, and a tracer may
    // have sixteen): the rays each brought, the credit its far end gave, and the
    // credit this tile gave it last step, still to be reserved.
    const size_t linkBytes = foam_link_bytes(&p, p.side_capacity);
    unsigned sideGranted = 0;
    const unsigned char *side = &sideIn[0];
    for (unsigned k = 0; k < p.side_links; ++k, side += linkBytes) {
      foam_link_header h;
      memcpy(&h, side, sizeof h);
      if (h.count) from[sources++] = {side + sizeof h, 0, h.count};
      sideLimit[k] = h.credit < p.side_capacity ? h.credit : p.side_capacity;
      sideSent[k] = 0;
      sideGranted += c.side_granted[k];
    }
    // Side link j's slots start at sideSlots + j * linkBytes (foam_side_offset). Found
    // here, not per ray sent: the rays' copies are byte stores, which may alias the
    // vertex's fields and the params as far as the compiler knows, so it read them
    // again and multiplied out the offset for every ray.
    unsigned char *const sideSlots = &sideOut[0] + sizeof(foam_link_header);
    // Sends the ray in `src`, bound for shard `dest`, on if some link has credit for it.
    // Side links are in ascending order of their shard (topology.cpp refuses others),
    // so the ray's first link is found by bisection: walking up to sixteen links cost
    // every ray sent up the tree all of them. Links to one shard's replicas are
    // neighbours in class order; the ray's class picks one (foam_replica_class, as
    // the routers pick), so every tile of a hot shard marches its own class's rays
    // whichever way they came.
    auto send = [&](const unsigned char *src, uint16_t dest) __attribute__((always_inline)) {
      FOAM_PROBE(send);
      // The links to shards below `dest`, in four halvings of the sixteen entries
      // (those past the links hold FOAM_INVALID_SHARD, above every shard): fixed
      // steps with no loop to test. Inlined, as it is called once: a call's saved
      // registers and moves cost a ray sent about a quarter of its instructions.
      static_assert(FOAM_MAX_SIDES == 16, "four halvings");
      unsigned k = 0;
      unsigned char *to = nullptr;
      if (p.side_links) {
        k += (p.side_shard[k + 7] < dest) << 3;
        k += (p.side_shard[k + 3] < dest) << 2;
        k += (p.side_shard[k + 1] < dest) << 1;
        k += p.side_shard[k] < dest;
      }
      if (k < p.side_links && p.side_shard[k] == dest) {
        // A shard of one tile (side_class 0) has one link, and no class to pick.
        const unsigned far = p.side_class[k];
        unsigned group = 1, first = 0;
        // The link to the ray's class's tile: links into one shard go in class
        // order, so it is the group's first plus the classes between (0 where the
        // shard has one tile). Where this tile has no link to that tile (a
        // neighbour with room for fewer links than the shard has tiles), the ray
        // takes the tree to it if the shard's tiles hang on lanes of its router
        // (layout.h side_class: FOAM_SIDE_CLASS_ALIGNED), so it never lands on
        // another class's tile and stays there; else, where the tree's way to its
        // tile is a replicas' router longer, the link its class picks modulo the
        // links. A full pick tries the others. Written for the tracer program's
        // room in the tile reserve (tests program.rs): this form, a walk from the
        // pick, costs 46 host bytes over the pick it replaced, and the one copy
        // below for either link saves 108 (each copy is a switch over the payload
        // sizes).
        if (far) {
          while (k + group < p.side_links && p.side_shard[k + group] == dest) ++group;
          first = foam_replica_class(foam_slot_px(src), (far >> 4) & 7u) - (far & 15u);
          if (first >= group) {
            if (far & FOAM_SIDE_CLASS_ALIGNED) group = 0;
            first &= group - 1u;
          }
        }
        for (unsigned j = k + first, n = group; n; --n) {
          if (sideSent[j] != sideLimit[j]) {
            to = sideSlots + j * linkBytes + (size_t)sideSent[j]++ * stride;
            break;
          }
          if (++j == k + group) j = k;
        }
      }
      if (!to) {
        if (sent == limit) return false;
        to = out + (size_t)sent++ * stride;
      }
      // The half layout, the default, before foam_slot_copy's switch over the sizes.
      if (stride == sizeof(foam_ray_half)) foam_half_slot_copy(to, src);
      else foam_slot_copy(to, src, stride);
      return true;
    };

    // The store keeps the rays held unmarched (march_budget) first, [0, held), so
    // that TracerMarch finds them without scanning the rays waiting for credit,
    // [held, kept). Every held ray moves down to `held`, at or below the slot being
    // read. A ray that waits goes to the back of the store, [capacity - waiting,
    // capacity), and the few that wait join the held ones at the end: kept in place
    // behind them, every held ray after the first one to wait (a ray a worker
    // paused, early in the store) swapped three slots, hundreds a step on a tracer
    // holding rays back. The back is used where it cannot reach the store's rays not
    // yet read (every ray not held might wait); else the swaps. Where the room past
    // the store's rays takes every ray this call reads, it cannot; only where it does
    // not (rare) does a first look count the rays that might wait: on every call, it
    // read each ray twice.
    // The held rays no worker reached lead the store (TracerMarch takes them from the
    // last one down, each worker noting the lowest it marched): they stay where they
    // are, unread. A tracer holding hundreds back read each of them every step.
    unsigned held = c.held;
    for (unsigned w = 0; w < FOAM_WORKERS; ++w) held = c.handoff[w] < held ? c.handoff[w] : held;
    from[0].first = held;
    c.unread = held;
    unsigned mayWait = 0;
    for (unsigned b = 0; b < sources; ++b) mayWait += from[b].count - from[b].first;
    if (capacity - c.pending < mayWait) {
      mayWait = 0;
      for (unsigned b = 0; b < sources; ++b) {
        const Source f = from[b];
        for (unsigned i = f.first; i < f.count; ++i) {
          const uint16_t dest = foam_slot_shard(f.slots + (size_t)i * stride);
          mayWait += dest != FOAM_INVALID_SHARD && dest != p.shard;
        }
      }
    }
    const bool back = capacity - c.pending >= mayWait;
    unsigned waiting = 0;
    kept = held;
    for (unsigned w = 0; w < FOAM_WORKERS; ++w) c.handoff[w] = 0;
    auto keep = [&](const unsigned char *src, bool unmarched) {
      kept++;
      unsigned char *to;
      if (unmarched) {
        FOAM_PROBE(unmarched);
        to = store + (size_t)held++ * stride;
        if (!back && held != kept) {
          static_assert(sizeof(foam_ray_fp32) + sizeof(foam_ray_hops) <= 32, "the widest payload fits");
          // Behind waiting rays, where the back would reach rays not yet read (rare):
          // src may be the slot `kept - 1`, which the waiting ray at `to` takes.
          uint32_t ray[8];
          memcpy(ray, src, stride);
          memcpy(store + (size_t)(kept - 1) * stride, to, stride);
          memcpy(to, ray, stride);
          return;
        }
      } else {
        to = store + (size_t)(back ? capacity - ++waiting : kept - 1) * stride;
      }
      if (to != src) foam_slot_copy(to, src, stride);
    };
    // The pending store first, oldest first, then this step's inboxes: one loop,
    // so that `send` and `keep` are each compiled once.
    for (unsigned b = 0; b < sources; ++b) {
      const Source f = from[b];
      for (unsigned i = f.first; i < f.count; ++i) {
        const unsigned char *src = f.slots + (size_t)i * stride;
        // Every slot read but the rays waiting for credit (wait_walk): the inboxes'
        // and the held ones past the prefix, the rays the march loaded (less the
        // paused ones it resumed, which wait) and the `held - unread` kept unmarched.
        if (b > 0 || i < c.held) FOAM_PROBE(scan);
        // An empty inbox slot, or a held ray that finished here.
        const uint16_t dest = foam_slot_shard(src);
        if (dest == FOAM_INVALID_SHARD) continue;
        // A ray still bound for this shard was left unmarched (march_budget): held
        // here. One paused inside a shard (its slot's cell names the worker) waits
        // with the rays waiting for credit, where only its worker reads it.
        const bool paused = dest == FOAM_PAUSED_SHARD;
        const bool unmarched = dest == p.shard;
        if (!unmarched && !paused && send(src, dest)) continue;
        if (kept < capacity)
          keep(src, unmarched);
        else
          overflow++;  // credits make this impossible; counted so a bug cannot hide
      }
    }
    // The waiting rays from the back to [held, kept): those not already there, into
    // the slots there they do not hold, oldest first where the two do not meet.
    if (back && waiting) {
      const bool apart = kept <= capacity - waiting;
      const unsigned n = apart ? waiting : capacity - kept;
      const unsigned char *src = store + (size_t)(apart ? capacity - 1 : kept) * stride;
      const ptrdiff_t step = apart ? -(ptrdiff_t)stride : (ptrdiff_t)stride;
      for (unsigned j = 0; j < n; ++j, src += step) memcpy(store + (size_t)(held + j) * stride, src, stride);
    }
    // A worker finds the ray it paused where it now waits.
    for (unsigned k = held; k < kept; ++k) {
      const unsigned char *slot = store + (size_t)k * stride;
      if (foam_slot_shard(slot) != FOAM_PAUSED_SHARD) continue;
      const unsigned w = foam_slot_cell(slot);
      if (w < FOAM_WORKERS) c.handoff[w] = k + 1;
    }
    if (sent < p.link_capacity) foam_slot_invalidate(out + (size_t)sent * stride);

    // Arrivals under the grants given last step are still to come: reserve for them.
    const unsigned reserved = kept + c.granted + sideGranted;
    unsigned avail = (reserved < capacity ? capacity - reserved : 0) + p.extra_credit;
    const unsigned grant = avail < p.link_capacity ? avail : p.link_capacity;
    avail -= grant;

    foam_tile_stats st = load<foam_tile_stats>(stats);
    uint32_t totals[FOAM_TW_COUNTERS] = {};
    for (unsigned w = 0; w < FOAM_WORKERS; ++w)
      for (unsigned k = 0; k < FOAM_TW_COUNTERS; ++k) totals[k] += c.work[w][k];
    foam_link_header h;
    h.count = sent;
    h.credit = grant;
    h.finished = totals[FOAM_TW_PIXELS];
    h.pending = kept;
    memcpy(&outbox[0], &h, sizeof h);
    unsigned char *to = &sideOut[0];
    for (unsigned k = 0; k < p.side_links; ++k, to += linkBytes) {
      const unsigned g = avail < p.side_capacity ? avail : p.side_capacity;
      avail -= g;
      c.side_granted[k] = g;
      st.side_sent += sideSent[k];
      if (sideSent[k] < p.side_capacity)
        foam_slot_invalidate(to + sizeof(foam_link_header) + (size_t)sideSent[k] * stride);
      foam_link_header sh;
      sh.count = sideSent[k];
      sh.credit = g;
      sh.finished = 0;
      sh.pending = kept;
      memcpy(to, &sh, sizeof sh);
    }

    c.pending = kept;
    c.held = held;
    c.granted = grant;

    st.rays_in = totals[FOAM_TW_MARCHED];
    st.cell_steps = totals[FOAM_TW_STEPS];
    st.pixels = totals[FOAM_TW_PIXELS];
    st.misrouted = totals[FOAM_TW_MISROUTED];
    st.overflow += overflow;
    if (kept > st.peak_queue) st.peak_queue = kept;
    st.iterations++;
    memcpy(&stats[0], &st, sizeof st);
    return true;
  }
};

FOAM_STACK(TracerMarch);
FOAM_STACK(TracerSend);

#ifndef __POPC__
FOAM_HOST_VERTEX(TracerMarch, shard, copies, camera, params, inbox, sideIn, pending, pixels, results, ctl)
FOAM_HOST_VERTEX(TracerSend, params, inbox, sideIn, outbox, sideOut, pending, ctl, stats)
#endif
