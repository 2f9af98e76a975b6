// The generator tile (paper §4.6) sits above the root router. It injects primary
// rays in scan-ordered batches as far as the root's credit and the in-flight cap
// allow, and it is the root's spill store: rays the root sends up are kept here and
// re-injected first. The cap never exceeds the spill capacity, so the root can
// always send up — the guarantee the routers' deadlock freedom rests on.
//
// Every primary ray starts in the cell nearest the camera, so in the paper's design
// every ray of the frame first queues for the one tracer that owns it, and then for
// the few tracers around it. Here the generator holds copies of the shards nearest
// the camera (foam_region_header, written by the host with the camera) and marches
// new rays through them itself; they enter the tree already addressed to wherever
// they leave that region.
#include <poplar/Vertex.hpp>

#include "foam/codelet.h"

#include <stddef.h>
#include <string.h>

#include "foam/layout.h"
#include "foam/march.h"
#include "foam/ray.h"

using namespace poplar;


class Generator : public Vertex {
public:
  Input<Bytes> params;
  Input<Bytes> camera;
  Input<Bytes> inbox;
  InOut<Bytes> outbox;
  InOut<Bytes> spill;
  InOut<Words> ctl;
  InOut<Bytes> status;
  InOut<Bytes> stats;

  bool compute() {
    const foam_params p = load<foam_params>(params);
    const foam_camera cam = load<foam_camera>(camera);
    const foam_link_header in = load<foam_link_header>(inbox);
    foam_generator_ctl c = load<foam_generator_ctl>(ctl);
    foam_frame_status fs = load<foam_frame_status>(status);
    foam_tile_stats st = load<foam_tile_stats>(stats);
    const unsigned stride = p.ray_bytes, cap = p.link_capacity;
    const uint32_t total = cam.width * cam.height;
    unsigned char *store = &spill[0];
    unsigned char *out = &outbox[0] + sizeof(foam_link_header);

    // Take what the root sent up (its credit guaranteed the room).
    const unsigned char *arrivals = &inbox[0] + sizeof(foam_link_header);
    for (unsigned i = 0; i < in.count; ++i) {
      const unsigned char *src = arrivals + (size_t)i * stride;
      if (foam_slot_shard(src) == FOAM_INVALID_SHARD) continue;
      if (c.spill < p.queue_capacity) memcpy(store + (size_t)c.spill++ * stride, src, stride);
      else st.overflow++;
    }

    const uint32_t limit = in.credit < cap ? in.credit : cap;
    uint32_t sent = 0;
    // Spilled rays first: they are the oldest.
    uint32_t respill = c.spill < limit ? c.spill : limit;
    memcpy(out, store, (size_t)respill * stride);
    sent = respill;
    memmove(store, store + (size_t)respill * stride, (size_t)(c.spill - respill) * stride);
    c.spill -= respill;

    // New primary rays in scan order, batch after batch, as far as the root's credit
    // and the in-flight cap allow. With drain iterations the generator idles that
    // many steps after each batch (the paper's hand-tuned schedule); without, batches
    // follow each other within a step, so only the credits pace the injection.
    const uint32_t inFlight = fs.injected - in.finished;
    uint32_t room = inFlight < p.max_in_flight ? p.max_in_flight - inFlight : 0;
    if (room > limit - sent) room = limit - sent;
    bool idle = false;
    if (c.batch_left == 0 && c.next < total && c.drain_left > 0) {
      c.drain_left--;
      idle = true;
    }
    c.march_begin = sent;
    uint32_t emit = 0;
    while (!idle && emit < room && c.next < total) {
      if (c.batch_left == 0) {
        if (c.drain_left > 0) break;  // the drain window starts next step
        uint32_t lines = p.batch_kind == 0 ? cam.width : cam.height;
        uint32_t batch = p.batch_lines * lines;
        c.batch_left = total - c.next < batch ? total - c.next : batch;
        c.drain_left = p.drain_iters;
      }
      uint32_t x, y;
      if (p.batch_kind == 0) {
        x = c.next % cam.width;
        y = c.next / cam.width;
      } else {
        x = c.next / cam.height;
        y = c.next % cam.height;
      }
      foam_ray r;
      r.shard = cam.start_shard;
      r.cell = cam.start_cell;
      r.px = foam_px_make(x, y, 0);
      r.t = 0.0f;
      r.T = 1.0f;
      r.r = r.g = r.b = 0.0f;
      r.depth = -1.0f;
      r.router_hops = r.tracer_hops = 0;
      foam_ray_store(out + (size_t)sent++ * stride, p.layout, p.hops, &r);
      ++c.next;
      --c.batch_left;
      ++emit;
    }
    c.march_end = sent;
    fs.injected += emit;
    if (sent < cap) foam_slot_invalidate(out + (size_t)sent * stride);

    uint32_t reserved = c.spill + c.granted;
    uint32_t grant = reserved < p.queue_capacity ? p.queue_capacity - reserved : 0;
    if (grant > cap) grant = cap;
    foam_link_header h;
    h.count = sent;
    h.credit = grant;
    h.finished = 0;
    h.pending = c.spill;
    memcpy(&outbox[0], &h, sizeof h);
    c.granted = grant;

    fs.finished = in.finished;
    fs.spilled = c.spill;
    fs.iterations++;
    fs.total = total;
    fs.overflow = st.overflow;
    if (c.spill > st.peak_queue) st.peak_queue = c.spill;
    uint32_t marched = 0, steps = 0;
    for (unsigned w = 0; w < FOAM_WORKERS; ++w) {
      marched += c.work[w][0];
      steps += c.work[w][1];
    }
    st.rays_in = marched;
    st.cell_steps = steps;
    st.iterations++;
    memcpy(&ctl[0], &c, sizeof c);
    memcpy(&status[0], &fs, sizeof fs);
    memcpy(&stats[0], &st, sizeof st);
    return true;
  }
};

namespace {

// Index of `shard` among the region's copies (listed by ascending id), or -1.
inline int regionIndex(const foam_region_header &h, uint16_t shard) {
  uint32_t lo = 0, hi = h.count;
  while (lo < hi) {
    uint32_t mid = (lo + hi) / 2;
    if (h.shard[mid] < shard) lo = mid + 1;
    else hi = mid;
  }
  return lo < h.count && h.shard[lo] == shard ? (int)lo : -1;
}

}  // namespace

// Phase 2: six workers march this step's new primary rays, in place in the outbox,
// through the camera region's shards, as the tracers owning them would.
class GeneratorMarch : public MultiVertex {
public:
  Input<Bytes> region;
  Input<Bytes> camera;
  Input<Bytes> params;
  InOut<Bytes> outbox;
  InOut<Words> ctl;  // writes only work[workerId]

  bool compute(unsigned workerId) {
    const foam_params p = load<foam_params>(params);
    const foam_camera cam = load<foam_camera>(camera);
    const foam_generator_ctl c = load<foam_generator_ctl>(ctl);
    const foam_region_header rh = load<foam_region_header>(region);
    const unsigned n = c.march_end - c.march_begin, workers = numWorkers();
    const unsigned begin = c.march_begin + n * workerId / workers;
    const unsigned end = c.march_begin + n * (workerId + 1) / workers;
    unsigned char *slots = &outbox[0] + sizeof(foam_link_header);
    unsigned *work = &ctl[0] + offsetof(foam_generator_ctl, work) / 4 + workerId * 2;
    for (unsigned i = begin; i < end; ++i) {
      unsigned char *slot = slots + (size_t)i * p.ray_bytes;
      foam_ray ray;
      foam_ray_load(slot, p.layout, p.hops, &ray);
      // A finished ray is addressed to its pixel's owner, which may be a shard held
      // here too: it stops marching all the same. Between shards the ray goes
      // through its payload, as it would between tracer tiles, so the image does
      // not depend on which shards the region holds.
      for (int k = regionIndex(rh, ray.shard); k >= 0 && ray.cell != FOAM_FINISHED_CELL;
           k = regionIndex(rh, ray.shard)) {
        foam_shard_view view;
        foam_shard_open(&region[0] + rh.offset[k], &view);
        work[1] += foam_visit(&view, &cam, &ray);
        work[0]++;  // one visit = one tracer hop, as on a tracer tile
        foam_ray_store(slot, p.layout, p.hops, &ray);
        foam_ray_load(slot, p.layout, p.hops, &ray);
      }
    }
    return true;
  }
};

#ifndef __IPU__
FOAM_HOST_VERTEX(GeneratorMarch, region, camera, params, outbox, ctl)
FOAM_HOST_VERTEX(Generator, params, camera, inbox, outbox, spill, ctl, status, stats)
#endif
