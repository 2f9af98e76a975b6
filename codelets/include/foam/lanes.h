/* How a tile packs the buffers of its lanes, one inbound and one outbound tensor
 * per group of lanes, lanes back to back:
 * - a router: child lanes 0..fanout-1 of link_capacity rays, then its injector
 *   lanes of inject_capacity rays in and a bare foam_inject_down out, then the
 *   parent lane of parent_capacity rays;
 * - a tracer: its side links of side_capacity rays each way;
 * - an injector: its direct lanes of direct_capacity rays out and a bare
 *   foam_inject_down in.
 * The codelets read and write lanes with these offsets, and the graph builder
 * sizes the tensors and slices the exchange copies out of them with the same. */
#ifndef FOAM_LANES_H
#define FOAM_LANES_H

#include <stddef.h>
#include <stdint.h>

#include "foam/layout.h"

FOAM_STATIC_ASSERT(sizeof(foam_inject_up) == sizeof(foam_link_header) &&
                       sizeof(foam_inject_down) == sizeof(foam_link_header),
                   "every lane's header has one size");

static inline unsigned foam_parent_lane(const foam_params *p) { return p->fanout + p->inject_lanes; }

/* Rays of a router's lane l inbound (`out` 0) or outbound. */
static inline unsigned foam_lane_capacity(const foam_params *p, unsigned l, int out) {
  if (l < p->fanout) return p->link_capacity;
  if (l < foam_parent_lane(p)) return out ? 0u : p->inject_capacity;
  return p->parent_capacity;
}

/* Bytes of one buffer of `capacity` rays. */
static inline size_t foam_link_bytes(const foam_params *p, unsigned capacity) {
  return sizeof(foam_link_header) + (size_t)capacity * p->ray_bytes;
}

/* Bytes between a router's child lanes and between its injector lanes, inbound
 * (`out` 0) or outbound: the strides of foam_lane_offset, for codelets that walk
 * the lanes in order. */
static inline size_t foam_child_stride(const foam_params *p) { return foam_link_bytes(p, p->link_capacity); }
static inline size_t foam_inject_stride(const foam_params *p, int out) {
  return foam_link_bytes(p, out ? 0u : p->inject_capacity);
}

/* Worker w's share [*lo, *hi) of `n` items split over `workers`: a router's workers
 * cut every source of rays and its injector lanes this way, so that RouterCount's
 * worker counts what RouterForward's worker of the same index moves. */
static inline void foam_worker_share(unsigned n, unsigned w, unsigned workers, unsigned *lo, unsigned *hi) {
  *lo = n * w / workers;
  *hi = n * (w + 1) / workers;
}

/* Worker w's share [*lo, *hi) of a router's injector lanes, whole lanes: RouterCount
 * and RouterForward split them the same way, so each worker sums, moves and answers
 * its own lanes and none walks the others'. */
static inline void foam_inject_chunk(const foam_params *p, unsigned w, unsigned workers, unsigned *lo, unsigned *hi) {
  foam_worker_share(p->inject_lanes, w, workers, lo, hi);
}

/* Byte offset of a router's lane l; lane foam_parent_lane(p) + 1 gives the total. */
static inline size_t foam_lane_offset(const foam_params *p, unsigned l, int out) {
  const unsigned f = p->fanout, g = p->inject_lanes;
  const unsigned children = l < f ? l : f;
  const unsigned injectors = l <= f ? 0u : (l - f < g ? l - f : g);
  return children * foam_child_stride(p) + injectors * foam_inject_stride(p, out) +
         (l > f + g ? foam_link_bytes(p, p->parent_capacity) : 0u);
}

/* Rays an injector's queue holds: what it may have emitted and not yet dealt out.
 * Apart from its lane to the root, which the exchange copies whole every step, so
 * that the lane can be narrow where the queue is not (0: as many as the lane). */
static inline unsigned foam_injector_queue(const foam_params *p) {
  return p->queue_capacity ? p->queue_capacity : p->link_capacity;
}

/* Byte offset of a tracer's side link k; k = side_links gives the total. */
static inline size_t foam_side_offset(const foam_params *p, unsigned k) {
  return k * foam_link_bytes(p, p->side_capacity);
}

/* Byte offset of an injector's direct lane k in its outbound (`out` 1: lanes of
 * direct_capacity rays) or inbound (a bare foam_inject_down each) tensor; k =
 * direct_lanes gives the total. */
static inline size_t foam_direct_offset(const foam_params *p, unsigned k, int out) {
  return k * foam_link_bytes(p, out ? p->direct_capacity : 0u);
}

#endif /* FOAM_LANES_H */
