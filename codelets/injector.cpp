// Injector tiles emit the frame's primary rays. Each one hangs off the root
// router on a lane of its own, owns a list of pixel blocks the host chose for the
// frame, and emits them as far as the root's credit allows; the root's credit also
// keeps the rays in flight within what the generator's spill store could take.
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

#include "foam/layout.h"
#include "foam/march.h"
#include "foam/ray.h"

using namespace poplar;


class Injector : public Vertex {
public:
  Input<Bytes> params;
  Input<Bytes> camera;
  Input<Bytes> blocks;
  Input<Bytes> inbox;  // a bare header: the root's credit
  InOut<Bytes> outbox;
  InOut<Words> ctl;
  InOut<Bytes> status;
  InOut<Bytes> stats;

  bool compute() {
    const foam_params p = load<foam_params>(params);
    const foam_camera cam = load<foam_camera>(camera);
    const foam_link_header in = load<foam_link_header>(inbox);
    foam_injector_ctl c = load<foam_injector_ctl>(ctl);
    foam_frame_status fs = load<foam_frame_status>(status);
    foam_tile_stats st = load<foam_tile_stats>(stats);
    const unsigned stride = p.ray_bytes, cap = p.link_capacity;
    const uint32_t listed = load<uint32_t>(blocks);
    const uint32_t count = listed < p.block_slots ? listed : p.block_slots;
    const uint32_t area = p.block_w * p.block_h;
    unsigned char *out = &outbox[0] + sizeof(foam_link_header);

    const uint32_t limit = in.credit < cap ? in.credit : cap;
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
      }
      const foam_block b = load<foam_block>(blocks, 4 + (c.next - 1) * sizeof(foam_block));
      const uint32_t k = area - c.block_left--;
      const uint32_t x = b.x + (p.batch_kind == 0 ? k % p.block_w : k / p.block_h);
      const uint32_t y = b.y + (p.batch_kind == 0 ? k / p.block_w : k % p.block_h);
      if (x >= cam.width || y >= cam.height) continue;
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
    }
    c.march_begin = 0;
    c.march_end = sent;
    if (sent < cap) foam_slot_invalidate(out + (size_t)sent * stride);

    // Demand for the root's credit: a full lane while blocks are left.
    const bool more = c.block_left > 0 || c.next < count;
    foam_link_header h;
    h.count = sent;
    h.credit = 0;  // nothing comes down to an injector
    h.finished = 0;
    h.pending = more ? cap : 0;
    memcpy(&outbox[0], &h, sizeof h);

    fs.injected += sent;
    fs.iterations++;
    fs.total = cam.width * cam.height;
    uint32_t marched = 0, steps = 0;
    for (unsigned w = 0; w < FOAM_WORKERS; ++w) {
      marched += c.work[w][0];
      steps += c.work[w][1];
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
};

// Phase 2: six workers march this step's new primary rays, in place in the outbox,
// through the region's shards, as the tracers owning them would.
class InjectorMarch : public MultiVertex {
public:
  Input<Bytes> region;
  Input<Bytes> camera;
  Input<Bytes> params;
  InOut<Bytes> outbox;
  InOut<Words> ctl;  // writes only work[workerId]

  bool compute(unsigned workerId) {
    const foam_params p = load<foam_params>(params);
    const foam_camera cam = load<foam_camera>(camera);
    const foam_injector_ctl c = load<foam_injector_ctl>(ctl);
    const foam_region_header rh = load<foam_region_header>(region);
    const unsigned n = c.march_end - c.march_begin, workers = numWorkers();
    const unsigned begin = c.march_begin + n * workerId / workers;
    const unsigned end = c.march_begin + n * (workerId + 1) / workers;
    unsigned char *slots = &outbox[0] + sizeof(foam_link_header);
    unsigned *work = &ctl[0] + offsetof(foam_injector_ctl, work) / 4 + workerId * 2;
    for (unsigned i = begin; i < end; ++i) {
      unsigned char *slot = slots + (size_t)i * p.ray_bytes;
      foam_ray ray;
      foam_ray_load(slot, p.layout, p.hops, &ray);
      // One shard visit = one tracer hop, as on a tracer tile; no shard of its own.
      foam_march_held(&cam, p.layout, p.hops, slot, FOAM_INVALID_SHARD, nullptr, &rh, &region[0], &ray, &work[0], &work[1]);
    }
    return true;
  }
};

#ifndef __IPU__
FOAM_HOST_VERTEX(InjectorMarch, region, camera, params, outbox, ctl)
FOAM_HOST_VERTEX(Injector, params, camera, blocks, inbox, outbox, ctl, status, stats)
#endif
