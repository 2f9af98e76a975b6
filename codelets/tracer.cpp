// Tracer tiles: march the rays their parent router delivered through the local
// shard, keep the rays that finish in its result store or framebuffer slice, and
// hand the rest back to the router tree (paper §4.5, §4.7).
#include <poplar/Vertex.hpp>

#include "foam/codelet.h"

#include <stddef.h>
#include <string.h>

#include "foam/layout.h"
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

// Writes a finished ray into this tracer's framebuffer slice; false if the pixel is
// not in the slice (a routing bug: counted, never silently ignored).
bool writePixel(unsigned char *pixels, unsigned slicePixels, const foam_params &p, const foam_camera &cam,
                const foam_ray &ray) {
  const foam_result r = outcome(cam, p, ray);
  const uint32_t pixel = r.pixel - 1;
  if (pixel % cam.tracers != p.shard || pixel / cam.tracers >= slicePixels) return false;
  unsigned char *slot = pixels + (size_t)(pixel / cam.tracers) * sizeof(foam_pixel);
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

}  // namespace

// Phase 1 of a step: six workers march disjoint ranges of the inbox in place. A
// ray that finishes here goes to the worker's part of the result store, or to this
// slice if it is home, and its slot is freed; every other ray keeps its slot with
// its new destination for TracerSend.
class TracerMarch : public MultiVertex {
public:
  Input<Bytes> shard;
  Input<Bytes> camera;
  Input<Bytes> params;
  InOut<Bytes> inbox;
  InOut<Bytes> pixels;
  InOut<Bytes> results;  // result store: worker w owns slots [w, w + 1) * result_slots
  InOut<Words> ctl;  // foam_tracer_ctl; this vertex writes only work[workerId]

  bool compute(unsigned workerId) {
    const foam_params p = load<foam_params>(params);
    const foam_camera cam = load<foam_camera>(camera);
    const foam_link_header hdr = load<foam_link_header>(inbox);
    foam_shard_view view;
    foam_shard_open(&shard[0], &view);
    const unsigned slicePixels = pixels.size() / sizeof(foam_pixel);
    const unsigned workers = numWorkers();
    const unsigned begin = hdr.count * workerId / workers;
    const unsigned end = hdr.count * (workerId + 1) / workers;
    unsigned char *slots = &inbox[0] + sizeof(foam_link_header);
    unsigned *work = &ctl[0] + offsetof(foam_tracer_ctl, work) / 4 + workerId * FOAM_TW_COUNTERS;
    unsigned char *store = &results[0] + (size_t)workerId * p.result_slots * sizeof(foam_result);

    for (unsigned i = begin; i < end; ++i) {
      unsigned char *slot = slots + (size_t)i * p.ray_bytes;
      foam_ray ray;
      foam_ray_load(slot, p.layout, p.hops, &ray);
      if (ray.shard != p.shard) {  // not ours: TracerSend returns it to the tree
        work[FOAM_TW_MISROUTED]++;
        continue;
      }
      if (ray.cell != FOAM_FINISHED_CELL) {
        work[FOAM_TW_STEPS] += foam_visit(&view, &cam, &ray);
        work[FOAM_TW_MARCHED]++;
        // Back into its slot: it travels on from there, and a ray that ended here
        // takes the payload's precision, as if it had travelled once more, so its
        // pixel does not depend on where it is written.
        foam_ray_store(slot, p.layout, p.hops, &ray);
        if (ray.cell != FOAM_FINISHED_CELL) continue;
        foam_ray_load(slot, p.layout, p.hops, &ray);
        // Finished here: keep it in this worker's part of the result store if
        // there is room, instead of sending it home through the tree.
        if (work[FOAM_TW_RESULTS] < p.result_slots) {
          const foam_result r = outcome(cam, p, ray);
          memcpy(store + (size_t)work[FOAM_TW_RESULTS]++ * sizeof r, &r, sizeof r);
          work[FOAM_TW_PIXELS]++;
          foam_slot_invalidate(slot);
          continue;
        }
      }
      // Finished, and home (arrived, or ended here): write the pixel and free the
      // slot. A finished ray whose home is elsewhere is already in its slot.
      if (ray.shard == p.shard) {
        if (writePixel(&pixels[0], slicePixels, p, cam, ray))
          work[FOAM_TW_PIXELS]++;
        else
          work[FOAM_TW_MISROUTED]++;
        foam_slot_invalidate(slot);
      }
    }
    return true;
  }
};

// Phase 2: one worker moves outgoing rays (the pending store first, oldest first,
// then this step's inbox) into the outbox as far as the parent's credit allows;
// the rest wait in the pending store. Then it grants the parent credit for the
// rays this tile can still take without overflowing the pending store.
class TracerSend : public Vertex {
public:
  Input<Bytes> params;
  Input<Bytes> inbox;
  InOut<Bytes> outbox;
  InOut<Bytes> pending;
  InOut<Words> ctl;
  InOut<Bytes> stats;

  bool compute() {
    const foam_params p = load<foam_params>(params);
    const foam_link_header in = load<foam_link_header>(inbox);
    foam_tracer_ctl c = load<foam_tracer_ctl>(ctl);
    const unsigned stride = p.ray_bytes;
    const unsigned capacity = p.queue_capacity;
    const unsigned limit = in.credit < p.link_capacity ? in.credit : p.link_capacity;
    unsigned char *out = &outbox[0] + sizeof(foam_link_header);
    unsigned char *store = &pending[0];
    unsigned sent = 0, kept = 0;

    for (unsigned i = 0; i < c.pending; ++i) {
      unsigned char *src = store + (size_t)i * stride;
      if (sent < limit) {
        memcpy(out + (size_t)sent++ * stride, src, stride);
      } else {
        if (kept != i) memmove(store + (size_t)kept * stride, src, stride);
        kept++;
      }
    }
    const unsigned char *slots = &inbox[0] + sizeof(foam_link_header);
    for (unsigned i = 0; i < in.count; ++i) {
      const unsigned char *src = slots + (size_t)i * stride;
      if (foam_slot_shard(src) == FOAM_INVALID_SHARD) continue;
      if (sent < limit) {
        memcpy(out + (size_t)sent++ * stride, src, stride);
      } else if (kept < capacity) {
        memcpy(store + (size_t)kept++ * stride, src, stride);
      } else {
        c.overflow++;  // credits make this impossible; counted so a bug cannot hide
      }
    }
    if (sent < p.link_capacity) foam_slot_invalidate(out + (size_t)sent * stride);

    // Arrivals under the grant given last step are still to come: reserve for them.
    unsigned reserved = kept + c.granted;
    unsigned grant = reserved < capacity ? capacity - reserved : 0;
    if (grant > p.link_capacity) grant = p.link_capacity;

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

    c.pending = kept;
    c.granted = grant;
    memcpy(&ctl[0], &c, sizeof c);

    st.rays_in = totals[FOAM_TW_MARCHED];
    st.cell_steps = totals[FOAM_TW_STEPS];
    st.pixels = totals[FOAM_TW_PIXELS];
    st.misrouted = totals[FOAM_TW_MISROUTED];
    st.overflow = c.overflow;
    if (kept > st.peak_queue) st.peak_queue = kept;
    st.iterations++;
    memcpy(&stats[0], &st, sizeof st);
    return true;
  }
};

#ifndef __IPU__
FOAM_HOST_VERTEX(TracerMarch, shard, camera, params, inbox, pixels, results, ctl)
FOAM_HOST_VERTEX(TracerSend, params, inbox, outbox, pending, ctl, stats)
#endif
