/* A ray in working precision, and its load/store for the three payload layouts of
 * layout.h. Codelets and host tests move payloads only through these two functions,
 * so the byte layout has exactly one reader and one writer. */
#ifndef FOAM_RAY_H
#define FOAM_RAY_H

#include <stdint.h>
#include <string.h>

#include "foam/half.h"
#include "foam/layout.h"

typedef struct foam_ray {
  uint16_t shard, cell;
  uint32_t px;   /* column | row << 11 | steps << 22 */
  float t, T;    /* t to depth in a row: foam_ray_round rounds them four and two at a time */
  float r, g, b;
  float depth;   /* < 0 until the 50% quantile is crossed (half layout only keeps it) */
  uint16_t router_hops, tracer_hops;
} foam_ray;

static inline uint32_t foam_px_x(uint32_t px) { return px & FOAM_PX_MASK; }
static inline uint32_t foam_px_y(uint32_t px) { return (px >> FOAM_PX_BITS) & FOAM_PX_MASK; }
static inline uint32_t foam_px_steps(uint32_t px) { return px >> FOAM_STEPS_SHIFT; }
static inline uint32_t foam_px_make(uint32_t x, uint32_t y, uint32_t steps) {
  return x | (y << FOAM_PX_BITS) | (steps << FOAM_STEPS_SHIFT);
}

/* Destination shard of the slot: the only field routers look at. */
static inline uint16_t foam_slot_shard(const unsigned char *slot) {
  uint16_t s;
  memcpy(&s, slot, 2);
  return s;
}
/* Local cell of the slot's destination (a paused ray's: its worker). */
static inline uint16_t foam_slot_cell(const unsigned char *slot) {
  uint16_t c;
  memcpy(&c, slot + 2, 2);
  return c;
}
/* The pixel word of the slot (every payload has it at offset 4), steps included. */
static inline uint32_t foam_slot_px(const unsigned char *slot) {
  uint32_t px;
  memcpy(&px, slot + 4, 4);
  return px;
}
/* Whether the slot's ray has not taken a cell step yet: a primary ray that no
 * InjectorMarch worker reached within its budget (every march takes one). */
static inline int foam_slot_unmarched(const unsigned char *slot) { return foam_px_steps(foam_slot_px(slot)) == 0; }
/* A hash of a ray's pixel (its steps masked off). */
static inline uint32_t foam_pick_hash(uint32_t px) {
  return (px & ((1u << FOAM_STEPS_SHIFT) - 1u)) * 0x9E3779B1u * 0x2C1B3C6Du;
}
/* Which of the 2^bits tiles of a replicated shard marches the ray of pixel word
 * `px`, its class (0 of a shard's one tile): the top bits of one hash of the pixel, the same for
 * every shard, so a ray goes to the same tile whenever it comes back, neighbouring
 * pixels (which a block emits together) spread over all of them, and a shard of
 * 2^b tiles splits each class of a shard of fewer. The side links follow the
 * classes (layout.h side_class; src/device/replicas.rs lines them up), so a ray
 * crosses from its class's tile of one hot shard to its class's tile of the next,
 * and every tile marches its class's rays whichever way they came. Keyed by shard,
 * as the pick was, a tile took the rays of its own pixels from the routers but
 * those its neighbour tiles' links brought it: on the bicycle scene at SH degree
 * 2, tiles of one shard marched up to 5.7 times what their twins did. */
static inline uint32_t foam_replica_class(uint32_t px, uint32_t bits) {
  return (foam_pick_hash(px) >> 1) >> (31u - bits); /* bits 0: class 0 */
}
static inline void foam_slot_invalidate(unsigned char *slot) {
  uint16_t s = FOAM_INVALID_SHARD;
  memcpy(slot, &s, 2);
}

/* The primary ray of pixel word `px` (steps 0) as an injector emits it: in the
 * camera's start cell, nothing composited, no hops. Every layout keeps these values
 * exactly, so a ray not yet marched is this and its slot's pixel word: InjectorMarch
 * builds it from them instead of reading back the payload its emit just wrote. */
static inline void foam_ray_primary(const foam_camera *cam, uint32_t px, foam_ray *r) {
  r->shard = (uint16_t)cam->start_shard;
  r->cell = (uint16_t)cam->start_cell;
  r->px = px;
  r->t = 0.0f;
  r->T = 1.0f;
  r->r = r->g = r->b = 0.0f;
  r->depth = -1.0f;
  r->router_hops = r->tracer_hops = 0;
}

static inline void foam_ray_load(const unsigned char *p, uint32_t layout, uint32_t hops, foam_ray *r) {
  r->depth = -1.0f;
  if (layout == FOAM_LAYOUT_FP32) {
    foam_ray_fp32 v;
    memcpy(&v, p, sizeof v);
    r->shard = v.dest.shard; r->cell = v.dest.cell; r->px = v.px;
    r->t = v.t; r->T = v.T; r->r = v.r; r->g = v.g; r->b = v.b;
    p += sizeof v;
  } else if (layout == FOAM_LAYOUT_MIXED) {
    foam_ray_mixed v;
    memcpy(&v, p, sizeof v);
    r->shard = v.dest.shard; r->cell = v.dest.cell; r->px = v.px;
    r->t = foam_h2f(v.t); r->T = foam_h2f(v.T); r->r = v.r; r->g = v.g; r->b = v.b;
    p += sizeof v;
  } else {
    foam_ray_half v;
    memcpy(&v, p, sizeof v);
    r->shard = v.dest.shard; r->cell = v.dest.cell; r->px = v.px;
    r->t = foam_h2f(v.t); r->T = foam_h2f(v.T);
    r->r = foam_h2f(v.r); r->g = foam_h2f(v.g); r->b = foam_h2f(v.b);
    r->depth = foam_h2f(v.depth);
    p += sizeof v;
  }
  if (hops) {
    foam_ray_hops h;
    memcpy(&h, p, sizeof h);
    r->router_hops = h.router; r->tracer_hops = h.tracer;
  } else {
    r->router_hops = 0; r->tracer_hops = 0;
  }
}

static inline void foam_ray_store(unsigned char *p, uint32_t layout, uint32_t hops, const foam_ray *r) {
  if (layout == FOAM_LAYOUT_FP32) {
    foam_ray_fp32 v;
    v.dest.shard = r->shard; v.dest.cell = r->cell; v.px = r->px;
    v.t = r->t; v.T = r->T; v.r = r->r; v.g = r->g; v.b = r->b;
    memcpy(p, &v, sizeof v);
    p += sizeof v;
  } else if (layout == FOAM_LAYOUT_MIXED) {
    foam_ray_mixed v;
    v.dest.shard = r->shard; v.dest.cell = r->cell; v.px = r->px;
    v.t = foam_f2h(r->t); v.T = foam_f2h(r->T); v.r = r->r; v.g = r->g; v.b = r->b;
    memcpy(p, &v, sizeof v);
    p += sizeof v;
  } else {
    foam_ray_half v;
    v.dest.shard = r->shard; v.dest.cell = r->cell; v.px = r->px;
    v.t = foam_f2h(r->t); v.T = foam_f2h(r->T);
    v.r = foam_f2h(r->r); v.g = foam_f2h(r->g); v.b = foam_f2h(r->b);
    v.depth = foam_f2h(r->depth);
    memcpy(p, &v, sizeof v);
    p += sizeof v;
  }
  if (hops) {
    foam_ray_hops h;
    h.router = r->router_hops; h.tracer = r->tracer_hops;
    memcpy(p, &h, sizeof h);
  }
}

/* What foam_ray_store then foam_ray_load of the same layout leave in `r`, without
 * the bytes: the fields the payload keeps in binary16 rounded to it, the depth of a
 * layout without one unset, the hop counters of a payload without them zero. A
 * second store of the result writes the same bytes as the first (a binary16 value
 * converts back exactly). */
static inline void foam_ray_round(uint32_t layout, uint32_t hops, foam_ray *r) {
  if (layout == FOAM_LAYOUT_FP32) {
    r->depth = -1.0f;
  } else if (layout == FOAM_LAYOUT_MIXED) {
    foam_round_half(&r->t, 2);
    r->depth = -1.0f;
  } else {
    foam_round_half(&r->t, 4); /* t, T, r, g */
    foam_round_half(&r->b, 2); /* b, depth */
  }
  if (!hops) r->router_hops = r->tracer_hops = 0;
}

/* Payload bytes for a layout, with or without hop counters. */
static inline uint32_t foam_ray_bytes(uint32_t layout, uint32_t hops) {
  uint32_t base = layout == FOAM_LAYOUT_FP32 ? (uint32_t)sizeof(foam_ray_fp32)
                : layout == FOAM_LAYOUT_MIXED ? (uint32_t)sizeof(foam_ray_mixed)
                : (uint32_t)sizeof(foam_ray_half);
  return base + (hops ? (uint32_t)sizeof(foam_ray_hops) : 0u);
}

/* Copies one payload slot (`bytes`: foam_ray_bytes, 20 to 32 in steps of 4) between
 * 4-aligned slots (every slot is: byte vectors are 4-aligned, headers 16 bytes and
 * strides whole words). Routers, tracers and injectors move every ray they pass on
 * with it: a memcpy of a run-time length is a library call on both targets, one of a
 * constant length a few word moves, and rays are moved far more often than marched.
 * Slots never overlap (compaction moves a slot to an earlier, free one). */
static inline void foam_slot_copy(unsigned char *dst, const unsigned char *src, uint32_t bytes) {
  unsigned char *d = (unsigned char *)__builtin_assume_aligned(dst, 4);
  const unsigned char *s = (const unsigned char *)__builtin_assume_aligned(src, 4);
  switch (bytes) {
  case 20: memcpy(d, s, 20); break;
  case 24: memcpy(d, s, 24); break;
  case 28: memcpy(d, s, 28); break;
  case 32: memcpy(d, s, 32); break;
  default: memcpy(d, s, bytes); break;
  }
}

/* foam_slot_copy of a half payload (the default layout), for loops that ask the
 * layout once: no switch over the sizes, which tests 20 bytes second. */
static inline void foam_half_slot_copy(unsigned char *dst, const unsigned char *src) {
  memcpy(__builtin_assume_aligned(dst, 4), __builtin_assume_aligned(src, 4), sizeof(foam_ray_half));
}

#endif /* FOAM_RAY_H */
