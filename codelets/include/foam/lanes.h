/* How a router tile packs its link buffers (one inbound and one outbound tensor,
 * lanes back to back): child lanes 0..fanout-1 of link_capacity rays, then the
 * root's injector lanes of inject_capacity rays in and a bare header (credit) out,
 * then the parent lane of parent_capacity rays; and how a tracer packs its side
 * links (side lanes of side_capacity rays back to back, one tensor each way), and an
 * injector its direct lanes to the routers under the root. The
 * codelets and the graph builder, which slices the exchange copies out of these
 * tensors, both use this. */
#ifndef FOAM_LANES_H
#define FOAM_LANES_H

#include <stddef.h>
#include <stdint.h>

#include "foam/layout.h"

static inline unsigned foam_parent_lane(const foam_params *p) { return p->fanout + p->inject_lanes; }

/* Rays of lane l's inbound (`out` 0) or outbound buffer. */
static inline unsigned foam_lane_capacity(const foam_params *p, unsigned l, int out) {
  if (l < p->fanout) return p->link_capacity;
  if (l < foam_parent_lane(p)) return out ? 0u : p->inject_capacity;
  return p->parent_capacity;
}

/* Bytes of one buffer of `capacity` rays. */
static inline size_t foam_link_bytes(const foam_params *p, unsigned capacity) {
  return sizeof(foam_link_header) + (size_t)capacity * p->ray_bytes;
}

/* Byte offset of lane l's buffer; lane foam_parent_lane(p) + 1 gives the total. */
static inline size_t foam_lane_offset(const foam_params *p, unsigned l, int out) {
  const unsigned f = p->fanout, g = p->inject_lanes;
  const unsigned children = l < f ? l : f;
  const unsigned injectors = l <= f ? 0u : (l - f < g ? l - f : g);
  return children * foam_link_bytes(p, p->link_capacity) +
         injectors * foam_link_bytes(p, out ? 0u : p->inject_capacity) +
         (l > f + g ? foam_link_bytes(p, p->parent_capacity) : 0u);
}

/* Byte offset of a tracer's side lane k; k = side_lanes gives the total. */
static inline size_t foam_side_offset(const foam_params *p, unsigned k) {
  return k * foam_link_bytes(p, p->side_capacity);
}

/* Byte offset of an injector's direct lane k in its outbound (`out` 1: lanes of
 * side_capacity rays) or inbound (a bare credit header each) tensor; k =
 * side_lanes gives the total. */
static inline size_t foam_direct_offset(const foam_params *p, unsigned k, int out) {
  return k * foam_link_bytes(p, out ? p->side_capacity : 0u);
}

#endif /* FOAM_LANES_H */
