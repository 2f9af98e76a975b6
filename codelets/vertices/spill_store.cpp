// The spill store tile (the paper's generator, §4.6) sits above the root router:
// rays the root sends up (turns that found no room below) are kept here and sent
// back down first. The root never lets more rays into the tree than this store
// holds, so the root can always send up — the guarantee the routers' deadlock
// freedom rests on. New primary rays come from the injector tiles (injector.cpp).
#include <poplar/Vertex.hpp>

#include "foam/codelet.h"

#include <stddef.h>
#include <string.h>

#include "foam/layout.h"
#include "foam/probe.h"
#include "foam/ray.h"

using namespace poplar;


class SpillStore : public Vertex {
public:
  Input<Bytes> params;
  Input<Bytes> camera;
  Input<Bytes> inbox;
  InOut<Bytes> outbox;
  InOut<Bytes> spill;
  InOut<Words> ctl;
  InOut<Bytes> status;
  InOut<Bytes> stats;
  Input<Bytes> finishes;  // each tracer's finished pixels, one word each

  bool compute() {
    const foam_params p = load<foam_params>(params);
    const foam_camera cam = load<foam_camera>(camera);
    const foam_link_header in = load<foam_link_header>(inbox);
    foam_spill_ctl c = load<foam_spill_ctl>(ctl);
    foam_frame_status fs = load<foam_frame_status>(status);
    foam_tile_stats st = load<foam_tile_stats>(stats);
    const unsigned stride = p.ray_bytes, cap = p.link_capacity;
    unsigned char *store = &spill[0];
    unsigned char *out = &outbox[0] + sizeof(foam_link_header);

    // Take what the root sent up (its credit guaranteed the room).
    const unsigned char *arrivals = &inbox[0] + sizeof(foam_link_header);
    for (unsigned i = 0; i < in.count; ++i) {
      const unsigned char *src = arrivals + (size_t)i * stride;
      FOAM_PROBE(arrival);
      if (foam_slot_shard(src) == FOAM_INVALID_SHARD) continue;
      if (c.spill < p.queue_capacity) foam_slot_copy(store + (size_t)c.spill++ * stride, src, stride);
      else st.overflow++;
    }

    // Send back down, oldest first, as far as the root's credit allows.
    const uint32_t limit = in.credit < cap ? in.credit : cap;
    const uint32_t sent = c.spill < limit ? c.spill : limit;
    memcpy(out, store, (size_t)sent * stride);
    memmove(store, store + (size_t)sent * stride, (size_t)(c.spill - sent) * stride);
    c.spill -= sent;
    if (sent < cap) foam_slot_invalidate(out + (size_t)sent * stride);

    uint32_t reserved = c.spill + c.granted;
    uint32_t grant = (reserved < p.queue_capacity ? p.queue_capacity - reserved : 0) + p.extra_credit;
    if (grant > cap) grant = cap;

    // The frame's finished pixels straight from the tracers, a word each copied here
    // every step, not the root's sum (in.finished), which is a step behind for every
    // router level. Four sums side by side: with one, each word's loop trip paid a
    // compare and a branch.
    const unsigned tracers = finishes.size() / sizeof(uint32_t);
    const uint32_t *word = reinterpret_cast<const uint32_t *>(&finishes[0]);
    const uint32_t *const fours = word + (tracers & ~3u), *const end = word + tracers;
    uint32_t sum[4] = {0, 0, 0, 0};
    for (; word != fours; word += 4) {
      sum[0] += word[0];
      sum[1] += word[1];
      sum[2] += word[2];
      sum[3] += word[3];
    }
    for (; word != end; ++word) sum[0] += *word;
    FOAM_PROBE_ADD(finish_word, tracers);
    const uint32_t finished = sum[0] + sum[1] + sum[2] + sum[3];

    foam_link_header h;
    h.count = sent;
    h.credit = grant;
    h.finished = 0;
    h.pending = c.spill;
    memcpy(&outbox[0], &h, sizeof h);
    c.granted = grant;

    fs.finished = finished;
    fs.spilled = c.spill;
    fs.iterations++;
    fs.total = cam.width * cam.height;
    // The steps loop's predicate: this call goes on while it has iterations left
    // and the frame has pixels left.
    c.steps_left = fs.finished < fs.total && c.steps_left > 1 ? c.steps_left - 1 : 0;
    fs.overflow = st.overflow;
    if (c.spill > st.peak_queue) st.peak_queue = c.spill;
    st.rays_in += sent;
    st.iterations++;
    memcpy(&ctl[0], &c, sizeof c);
    memcpy(&status[0], &fs, sizeof fs);
    memcpy(&stats[0], &st, sizeof st);
    return true;
  }
};

FOAM_STACK(SpillStore);

#ifndef __POPC__
FOAM_HOST_VERTEX(SpillStore, params, camera, inbox, outbox, spill, ctl, status, stats, finishes)
#endif
