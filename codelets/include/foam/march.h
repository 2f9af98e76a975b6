/* Marching a ray through the cells of one shard with the rules of the original
 * Radiant Foam tracer (shared/reference/radfoam.md), with the view-dependent colour
 * of the SH coefficients the shard carries. Used by the Tracer codelet; plain C++ so
 * host tests can call it too. */
#ifndef FOAM_MARCH_H
#define FOAM_MARCH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#if defined(__SSE__) && !defined(__IPU__)
#include <immintrin.h>
#endif

#include "foam/half.h"
#include "foam/layout.h"
#include "foam/probe.h"
#include "foam/ray.h"

/* Cells with density at or below this contribute nothing (as the original). */
#define FOAM_MIN_DENSITY 1e-6f
/* Depth is reported where transmittance falls below this quantile. */
#define FOAM_DEPTH_QUANTILE 0.5f

typedef struct foam_vec3 {
  float x, y, z;
} foam_vec3;

static inline float foam_dot(foam_vec3 a, foam_vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }

/* Origin and unit direction of the ray through pixel (x, y)'s centre. A degenerate
 * camera (zero focal length or direction: a zeroed camera block) gives a zero
 * direction, which leaves the start cell through no face, instead of a division by
 * zero: floating-point exceptions trap on the IPU. */
static inline void foam_camera_ray(const foam_camera *cam, uint32_t x, uint32_t y, foam_vec3 *o,
                                   foam_vec3 *d) {
  float u = cam->fx != 0.0f ? ((float)x + 0.5f - cam->cx) / cam->fx : 0.0f;
  float v = cam->fy != 0.0f ? ((float)y + 0.5f - cam->cy) / cam->fy : 0.0f;
  const float *m = cam->c2w;
  foam_vec3 w = {m[0] * u + m[1] * v + m[2], m[4] * u + m[5] * v + m[6], m[8] * u + m[9] * v + m[10]};
  float len = sqrtf(foam_dot(w, w));
  d->x = len > 0.0f ? w.x / len : 0.0f;
  d->y = len > 0.0f ? w.y / len : 0.0f;
  d->z = len > 0.0f ? w.z / len : 0.0f;
  o->x = m[3];
  o->y = m[7];
  o->z = m[11];
}

/* The real SH basis Y_1..Y_rest (Y_0 is in the DC byte) for unit direction d, as the
 * original evaluates it (and src/reference/sh.rs, from the same layout.h constants);
 * `rest` is 0, 3, 8 or 15. A ray's direction is fixed along its walk, so the basis is
 * evaluated once per shard visit and each cell's colour is a dot product with it.
 * Each Y_k is stored twice, (Y_k, Y_k), so the red-green pair multiplies by it
 * straight from one 64-bit load (ld64 on the IPU); blue takes (Y_k, Y_k+1) from
 * the first halves of two pairs.
 * Out of line: it runs once per visit. */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static void foam_sh_basis(foam_vec3 d, uint32_t rest, foam_float2 *b) {
  const float x = d.x, y = d.y, z = d.z;
  if (rest >= 3) {
    b[0] = foam_f2_splat(-(float)FOAM_SH_C1 * y);
    b[1] = foam_f2_splat((float)FOAM_SH_C1 * z);
    b[2] = foam_f2_splat(-(float)FOAM_SH_C1 * x);
  }
  const float xx = x * x, yy = y * y, zz = z * z;
  const float xy = x * y, yz = y * z, xz = x * z;
  if (rest >= 8) {
    b[3] = foam_f2_splat((float)FOAM_SH_C2_0 * xy);
    b[4] = foam_f2_splat((float)FOAM_SH_C2_1 * yz);
    b[5] = foam_f2_splat((float)FOAM_SH_C2_2 * (2.0f * zz - xx - yy));
    b[6] = foam_f2_splat((float)FOAM_SH_C2_3 * xz);
    b[7] = foam_f2_splat((float)FOAM_SH_C2_4 * (xx - yy));
  }
  if (rest >= 15) {
    b[8] = foam_f2_splat((float)FOAM_SH_C3_0 * y * (3.0f * xx - yy));
    b[9] = foam_f2_splat((float)FOAM_SH_C3_1 * xy * z);
    b[10] = foam_f2_splat((float)FOAM_SH_C3_2 * y * (4.0f * zz - xx - yy));
    b[11] = foam_f2_splat((float)FOAM_SH_C3_3 * z * (2.0f * zz - 3.0f * xx - 3.0f * yy));
    b[12] = foam_f2_splat((float)FOAM_SH_C3_4 * x * (4.0f * zz - xx - yy));
    b[13] = foam_f2_splat((float)FOAM_SH_C3_5 * z * (xx - yy));
    b[14] = foam_f2_splat((float)FOAM_SH_C3_6 * x * (xx - 3.0f * yy));
  }
}

/* Read-only view of a packed shard blob (layout.h). */
typedef struct foam_shard_view {
  foam_shard_header h;
  const unsigned char *cells; /* foam_cell[n_local] then foam_halo[n_halo]: every entry's site */
  const unsigned char *info;  /* foam_cell_info[n_local] */
  const unsigned char *sh;    /* SH section: 3 * h.sh_rest coefficients per local cell */
  const unsigned char *halo;
  const unsigned char *adj;
} foam_shard_view;

static inline void foam_shard_open(const unsigned char *blob, foam_shard_view *s) {
  memcpy(&s->h, blob, sizeof s->h);
  s->cells = blob + s->h.cells_offset;
  s->info = blob + foam_shard_info_offset(&s->h);
  s->sh = s->info + (size_t)s->h.n_local * sizeof(foam_cell_info);
  s->halo = blob + s->h.halo_offset;
  s->adj = blob + s->h.adj_offset;
#ifdef FOAM_COST_NO_SH
  /* tools/costs only: the same walk with DC colour, so the SH colour's instructions
   * are the difference on the same recorded inputs (never in a renderer build). */
  s->h.sh_rest = 0;
#endif
}

/* x > 0 ? x : 0 (NaN and -0 to +0): one f32max on the IPU. GCC keeps the select as
 * a compare and a blend on x86 (it may not reorder NaN operands), so there it is
 * maxss, which returns its second operand unless the first is greater. */
static inline float foam_clamp0(float x) {
#if defined(__SSE__) && !defined(__IPU__)
  return _mm_cvtss_f32(_mm_max_ss(_mm_set_ss(x), _mm_setzero_ps()));
#else
  return x > 0.0f ? x : 0.0f;
#endif
}

/* foam_clamp0 of both halves of a pair: one f32v2max on the IPU, maxps here. */
static inline foam_float2 foam_clamp0_2(foam_float2 x) {
#if defined(__SSE__) && !defined(__IPU__)
  const __m128 v = _mm_max_ps(_mm_castsi128_ps(_mm_cvtsi64_si128(__builtin_bit_cast(long long, x))), _mm_setzero_ps());
  return __builtin_shufflevector(v, v, 0, 1);
#else
  const foam_float2 r = {foam_clamp0(x[0]), foam_clamp0(x[1])};
  return r;
#endif
}

/* The binary16 sum of foam_sh_add for `rest` coefficients, unrolled whole where rest
 * is a constant (no loop control: that was a fifth of the colour at degree 3). Two
 * coefficients a round: red-green k and k+1 from one 64-bit load (8-byte aligned:
 * layout.h pads each cell's binary16 to 8), blues k and k+1 from one word, each pair
 * converted in one step (f16v2tof32 on the IPU). Both blue products come from one
 * f32v2 multiply by (Y_k, Y_k+1) and are added in order. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline void foam_sh_add_half(const unsigned char *p, const uint32_t rest, const foam_float2 *basis,
                                    foam_float2 *rg_io, float *b_io) {
  foam_float2 rg = *rg_io;
  float b = *b_io;
  const unsigned char *pb = p + (size_t)rest * 4u;
  uint32_t k = 0;
#if defined(__GNUC__)
#pragma GCC unroll 8
#endif
  for (; k + 1 < rest; k += 2) {
    uint64_t w01;
    uint32_t wb;
    memcpy(&w01, p + (size_t)k * 4u, 8);
    memcpy(&wb, pb + (size_t)k * 2u, 4);
    foam_float2 c0, c1;
    foam_h4f2x2(w01, &c0, &c1);
    const foam_float2 y0 = basis[k], y1 = basis[k + 1];
    rg += y0 * c0;
    rg += y1 * c1;
    const foam_float2 bb = __builtin_shufflevector(y0, y1, 0, 2) * foam_h2f2(wb);
    b += bb[0];
    b += bb[1];
  }
  if (k < rest) { /* an odd count's last coefficient; its blue's word ends in the cell's padding */
    uint32_t w0, wb;
    memcpy(&w0, p + (size_t)k * 4u, 4);
    memcpy(&wb, pb + (size_t)k * 2u, 4);
    rg += basis[k] * foam_h2f2(w0);
    b += basis[k][0] * foam_h2f2(wb)[0];
  }
  *rg_io = rg;
  *b_io = b;
}

/* Adds the view-dependent part, sum_k Y_k c_k, to rgb for one cell whose
 * coefficients start at p (layout.h: the red-green pairs, then the blues; binary16,
 * or float with f32), each channel summing its terms in the reference's order, then
 * clamps each channel at 0 (foam_clamp0). `rest` is 3, 8 or 15. */
static inline void foam_sh_add(const unsigned char *p, uint32_t rest, uint32_t f32, const foam_float2 *basis,
                               float *rgb) {
  foam_float2 rg = {rgb[0], rgb[1]};
  float b = rgb[2];
  if (f32) {
    const unsigned char *pb = p + (size_t)rest * 8u;
    for (uint32_t k = 0; k < rest; ++k) {
      float v[3];
      memcpy(&v[0], p + (size_t)k * 8u, 4);
      memcpy(&v[1], p + (size_t)k * 8u + 4u, 4);
      memcpy(&v[2], pb + (size_t)k * 4u, 4);
      const foam_float2 c = {v[0], v[1]};
      rg += basis[k] * c;
      b += basis[k][0] * v[2];
    }
  } else if (rest == 15) {
    foam_sh_add_half(p, 15, basis, &rg, &b);
  } else if (rest == 8) {
    foam_sh_add_half(p, 8, basis, &rg, &b);
  } else {
    foam_sh_add_half(p, 3, basis, &rg, &b);
  }
  rg = foam_clamp0_2(rg);
  rgb[0] = rg[0];
  rgb[1] = rg[1];
  rgb[2] = foam_clamp0(b);
}

/* Colour of local cell i for the ray whose basis is `basis` (foam_sh_basis with
 * the shard's sh_rest): max(0, DC + sum_k Y_k c_k) per channel, summed in the
 * reference's order. DC only where the shard carries no coefficients. */
static inline void foam_cell_rgb(const foam_shard_view *s, const foam_cell_info *cell, uint32_t i,
                                 const foam_float2 *basis, float *rgb) {
  rgb[0] = (float)cell->r / 255.0f;
  rgb[1] = (float)cell->g / 255.0f;
  rgb[2] = (float)cell->b / 255.0f;
  const uint32_t rest = s->h.sh_rest;
  if (rest == 0) return;
  const size_t bytes = foam_sh_cell_bytes(rest, s->h.sh_f32);
  FOAM_PROBE(sh_colour);
  FOAM_PROBE_ADD(sh_coeff, rest);
  foam_sh_add(s->sh + (size_t)i * bytes, rest, s->h.sh_f32, basis, rgb);
}

static inline foam_cell foam_shard_cell(const foam_shard_view *s, uint32_t i) {
  foam_cell c;
  memcpy(&c, s->cells + (size_t)i * sizeof(foam_cell), sizeof c);
  return c;
}

static inline foam_cell_info foam_shard_info(const foam_shard_view *s, uint32_t i) {
  foam_cell_info c;
  memcpy(&c, s->info + (size_t)i * sizeof(foam_cell_info), sizeof c);
  return c;
}

/* Site of an adjacency entry, a local cell or a halo record: both are 16 bytes
 * with the site first, halo records right after the cells (layout.h), so one
 * scaled index reaches either without a compare. (x, y) is one 64-bit load (ld64
 * on the IPU): every site is 8-aligned (layout.h). */
static inline void foam_shard_site(const foam_shard_view *s, uint32_t n, foam_float2 *xy, float *z) {
  const unsigned char *src = s->cells + (size_t)n * sizeof(foam_cell);
  memcpy(xy, __builtin_assume_aligned(src, 8), 8);
  memcpy(z, src + 8, 4);
}

typedef enum foam_march_end {
  FOAM_MARCH_LEFT_SHARD = 0, /* ray->shard / ray->cell name the neighbour to enter */
  FOAM_MARCH_FINISHED = 1,   /* opaque enough, out of the scene, or out of steps */
  FOAM_MARCH_PAUSED = 2      /* its budget spent: ray->cell is the local cell to go on from */
} foam_march_end;

/* Marches `ray` from its current local cell until it finishes, crosses into a halo
 * cell, or has taken the step that spends `left_q8` (a worker's budget left, in
 * foam_budget_q8's measure: each step FOAM_BUDGET_STEP_Q8 and FOAM_BUDGET_FACE_Q8 a
 * face of its cell; INT32_MAX: no budget; at least one step) and would go on inside
 * the shard. Accumulates colour, transmittance, depth and the step count in `ray`; the
 * walk's whole state is then in `ray` in fp32, so a paused ray marched on from it
 * takes exactly the steps it would have taken without the pause.
 * `basis` is foam_sh_basis of `d` for the shard's sh_rest (unread without SH).
 * `cells_marched` receives the number of cells visited on this tile, and
 * `neighbours_tested` the faces tested on the way (the cost model's unit). */
static inline foam_march_end foam_march(const foam_shard_view *s, foam_vec3 o, foam_vec3 d, const foam_float2 *basis,
                                        float t_stop, int32_t left_q8, foam_ray *ray, uint32_t *cells_marched,
                                        uint32_t *neighbours_tested) {
  uint32_t c = ray->cell;
  uint32_t steps = foam_px_steps(ray->px);
  uint32_t marched = 0, tested = 0;
  float t0 = ray->t;
  float T = ray->T;
  foam_march_end end = FOAM_MARCH_FINISHED;
  /* The faces' x and y as pairs (f32v2 on the IPU): each lane rounds as the scalar
   * expression would, and a pair's two halves are two registers, so the dot
   * products' first sums are one f32add. */
  const foam_float2 oxy = {o.x, o.y}, dxy = {d.x, d.y}, half = foam_f2_splat(0.5f);
  FOAM_PROBE(visit);
  for (;;) {
    foam_cell cell = foam_shard_cell(s, c);
    foam_cell_info info = foam_shard_info(s, c);
    const foam_float2 pxy = {cell.x, cell.y};
    const float pz = cell.z;
    uint32_t begin = c == 0 ? 0u : foam_shard_info(s, c - 1).adj_end;
    float best_t = INFINITY;
    uint32_t best = 0xFFFFFFFFu;
    const uint32_t faces = info.adj_end - begin;
    tested += faces;
    for (uint32_t k = begin; k < info.adj_end; ++k) {
      uint16_t n;
      memcpy(&n, s->adj + (size_t)k * 2, 2);
      foam_float2 qxy;
      float qz;
      foam_shard_site(s, n, &qxy, &qz);
      FOAM_PROBE(neighbour);
      /* nrm = q - p; dp = nrm . d; face = p + nrm / 2 - o; t = (face . nrm) / dp,
       * each sum left to right. */
      const foam_float2 nxy = qxy - pxy;
      const float nz = qz - pz;
      const foam_float2 nd = nxy * dxy;
      const float dp = nd[0] + nd[1] + nz * d.z;
      if (dp > 0.0f) {
        FOAM_PROBE(ahead);
        const foam_float2 fxy = pxy + nxy * half - oxy;
        const float fz = pz + nz * 0.5f - o.z;
        const foam_float2 fn = fxy * nxy;
        const float t = (fn[0] + fn[1] + fz * nz) / dp;
        if (t < best_t) {
          best_t = t;
          best = n;
        }
      }
    }
    marched++;
    FOAM_PROBE(step);
    FOAM_PROBE_ADD(sh_step, s->h.sh_rest != 0);
    FOAM_PROBE_ADD(sh_stepcoeff, s->h.sh_rest);
    if (best == 0xFFFFFFFFu) { /* hull cell: the last, infinite segment is not composited */
      steps++;
      end = FOAM_MARCH_FINISHED;
      break;
    }
    if (best_t > t0) {
      float sigma = cell.density;
      FOAM_PROBE(composite);
      float alpha = 1.0f - expf(-sigma * (best_t - t0));
      float T_next = T * (1.0f - alpha);
      if (sigma > FOAM_MIN_DENSITY) { /* near-empty cells attenuate but add no colour */
        float w = T * alpha;
        float rgb[3];
        foam_cell_rgb(s, &info, c, basis, rgb);
        ray->r += w * rgb[0];
        ray->g += w * rgb[1];
        ray->b += w * rgb[2];
      }
      /* sigma > 0: a payload without depth (fp32, mixed) arrives below the
       * quantile with depth unset, and may then cross an empty cell. */
      if (ray->depth < 0.0f && T_next < FOAM_DEPTH_QUANTILE && sigma > 0.0f)
        FOAM_PROBE(depth), ray->depth = t0 + logf(T / FOAM_DEPTH_QUANTILE) / sigma;
      T = T_next;
    }
    if (best_t > t0) t0 = best_t;
    steps++;
    /* The budget's own measure of the step: a visit counted in 15-face steps ended
     * over its budget in cells of more faces (the busiest worker of a step at degree
     * 2 was 5.8 % over the median), and under it in cells of fewer. */
    left_q8 -= (int32_t)(FOAM_BUDGET_STEP_Q8 + FOAM_BUDGET_FACE_Q8 * faces);
    if (T <= t_stop || steps >= FOAM_MAX_CELL_STEPS || left_q8 <= 0) {
      if (T <= t_stop || steps >= FOAM_MAX_CELL_STEPS) {
        end = FOAM_MARCH_FINISHED;
        break;
      }
      if (best < s->h.n_local) { /* the budget spent, and it goes on here */
        ray->cell = (uint16_t)best;
        end = FOAM_MARCH_PAUSED;
        break;
      }
    } else if (best < s->h.n_local) {
      c = best;
      continue;
    }
    foam_halo h;
    memcpy(&h, s->halo + (size_t)(best - s->h.n_local) * sizeof(foam_halo), sizeof h);
    ray->shard = h.shard;
    ray->cell = h.cell;
    end = FOAM_MARCH_LEFT_SHARD;
    break;
  }
  ray->t = t0;
  ray->T = T;
  ray->px = foam_px_make(foam_px_x(ray->px), foam_px_y(ray->px), steps < FOAM_MAX_CELL_STEPS ? steps : FOAM_MAX_CELL_STEPS - 1u);
  *cells_marched = marched;
  *neighbours_tested = tested;
  return end;
}

/* Scan-order index of a ray's pixel. */
static inline uint32_t foam_pixel_index(const foam_camera *cam, uint32_t px) {
  return foam_px_y(px) * cam->width + foam_px_x(px);
}

/* Id of the shard whose tracer holds pixel `pixel`'s framebuffer slot (layout.h
 * foam_camera: (pixel % homes) << home_shift). Homes are the 2^depth leaves of the
 * k-d tree, so a mask: the IPU divides integers in software, and this runs for every
 * finished ray. */
static inline uint32_t foam_pixel_home(const foam_camera *cam, uint32_t pixel) {
  return (pixel & (cam->homes - 1u)) << cam->home_shift;
}

/* One marching visit of a ray with origin `o` and direction `d` (foam_camera_ray
 * of its pixel) on a tile holding `s`: march it (until its steps spend `left_q8`,
 * foam_march), and address a finished ray to the tracer that owns its pixel's
 * framebuffer slice. `basis` is foam_sh_basis of `d` for the shard's sh_rest. A
 * visit that goes on from a pause (`resumed`) is the same tracer hop. Adds the
 * cells marched to *cells and the neighbours tested to *neighbours. */
static inline foam_march_end foam_visit_ray(const foam_shard_view *s, const foam_camera *cam, foam_vec3 o, foam_vec3 d,
                                            const foam_float2 *basis, int32_t left_q8, int resumed, foam_ray *ray,
                                            uint32_t *cells, uint32_t *neighbours) {
  uint32_t marched = 0, tested = 0;
  if (!resumed) ray->tracer_hops++;
  const foam_march_end end = foam_march(s, o, d, basis, cam->t_stop, left_q8, ray, &marched, &tested);
  *cells += marched;
  *neighbours += tested;
  if (end == FOAM_MARCH_FINISHED) {
    ray->shard = (uint16_t)foam_pixel_home(cam, foam_pixel_index(cam, ray->px));
    ray->cell = FOAM_FINISHED_CELL;
  }
  return end;
}

/* A ray paused inside a shard keeps its payload in its slot, where t, T, colour and
 * depth are rounded to the layout's precision, and these in fp32 beside it
 * (foam_paused_ray): marched on from both, it is the ray that was paused. */
static inline void foam_ray_pause(const foam_ray *ray, foam_paused_ray *p) {
  p->shard = ray->shard;
  p->cell = ray->cell;
  p->t = ray->t;
  p->T = ray->T;
  p->r = ray->r;
  p->g = ray->g;
  p->b = ray->b;
  p->depth = ray->depth;
}

static inline void foam_ray_resume(const foam_paused_ray *p, foam_ray *ray) {
  ray->shard = p->shard;
  ray->cell = p->cell;
  ray->t = p->t;
  ray->T = p->T;
  ray->r = p->r;
  ray->g = p->g;
  ray->b = p->b;
  ray->depth = p->depth;
}

/* A visit's and a ray's weights: an injector's differ (layout.h), and injector.cpp
 * says so before it includes this header; each vertex file has its own copy of this
 * function, foam_budget_q8. */
#ifndef FOAM_MARCH_VISIT_Q8
#define FOAM_MARCH_VISIT_Q8 FOAM_BUDGET_VISIT_Q8
#define FOAM_MARCH_RAY_Q8 FOAM_BUDGET_RAY_Q8
#endif

/* What a worker's march budget has spent (layout.h march_budget): its cell steps,
 * each FOAM_BUDGET_STEP_Q8 and FOAM_BUDGET_FACE_Q8 a face tested, each shard visit
 * FOAM_BUDGET_VISIT_Q8 and each ray marched on FOAM_BUDGET_RAY_Q8 (an injector's:
 * FOAM_BUDGET_INJECTOR_*), in 1/256 of a step of 15 faces (`work`: visits, steps,
 * faces, rays, as foam_march_copies and the marching vertices count them), modulo
 * 2^32: the counters run over the frame, and only the difference between two
 * readings of one step is used, which is exact. Without the visits, the busiest
 * tile of a step was the one whose rays crossed the most shards (an injector visits
 * a shard every 1.2 to 3.7 cell steps on the bicycle scene cut by load); without the
 * rays, a tracer worker that marched many short visits. Not inlined: TracerMarch
 * asks it in three places, and the tracer program has no room for three copies. */
static __attribute__((noinline)) uint32_t foam_budget_q8(const uint32_t *work) {
  return work[0] * FOAM_MARCH_VISIT_Q8 + work[1] * FOAM_BUDGET_STEP_Q8 + work[2] * FOAM_BUDGET_FACE_Q8 +
         work[3] * FOAM_MARCH_RAY_Q8;
}

/* Where a worker's budget of `steps` (march_budget, at most 65536) ends, for
 * foam_budget_q8 readings of the same step: a budget is spent once `limit` minus
 * the reading is 0 or less as a signed number (a step's spending is far below 2^31).
 * Odd, so never 0, which says there is no budget; that moves the end by 1/256 step. */
static inline uint32_t foam_budget_limit(const uint32_t *work, uint32_t steps) {
  return steps ? (foam_budget_q8(work) + (steps << 8)) | 1u : 0u;
}

/* What is left of a budget that ends at `limit` (foam_budget_limit), in 1/256 of a
 * step: 0 or less once it is spent; INT32_MAX without a budget (limit 0), more than
 * any march spends. */
static inline int32_t foam_budget_left(const uint32_t *work, uint32_t limit) {
  return limit ? (int32_t)(limit - foam_budget_q8(work)) : INT32_MAX;
}

/* Whether a worker whose budget ends at `limit` (foam_budget_limit) has spent it.
 * `limit &&` repeats foam_budget_left's test: without it the vertices' calls compile
 * to one instruction more than the measured cost table's. */
static inline int foam_budget_spent(const uint32_t *work, uint32_t limit) {
  return limit && foam_budget_left(work, limit) <= 0;
}

/* Index of `shard` among a region's copies (layout.h foam_region_header, listed by
 * ascending id), or -1 if the region does not hold it. */
static inline int foam_region_find(const foam_region_header *h, uint16_t shard) {
  uint32_t lo = 0, hi = h->count;
  while (lo < hi) {
    uint32_t mid = (lo + hi) / 2;
    if (h->shard[mid] < shard) lo = mid + 1;
    else hi = mid;
  }
  return lo < h->count && h->shard[lo] == shard ? (int)lo : -1;
}

/* foam_region_find for a directory padded with FOAM_INVALID_SHARD past `count`
 * (layout.h foam_region_header; camera regions are): eight halvings of all 256
 * entries, each a compare and an add with no branch: 34 x86 instructions a find on
 * the bicycle scene's camera regions where the loop took 53. */
static inline int foam_region_find_fixed(const foam_region_header *h, uint16_t shard) {
  static_assert(FOAM_REGION_MAX_SHARDS == 256, "eight halvings");
  uint32_t k = 0;
  k += (uint32_t)(h->shard[k + 127] < shard) << 7;
  k += (uint32_t)(h->shard[k + 63] < shard) << 6;
  k += (uint32_t)(h->shard[k + 31] < shard) << 5;
  k += (uint32_t)(h->shard[k + 15] < shard) << 4;
  k += (uint32_t)(h->shard[k + 7] < shard) << 3;
  k += (uint32_t)(h->shard[k + 3] < shard) << 2;
  k += (uint32_t)(h->shard[k + 1] < shard) << 1;
  k += (uint32_t)(h->shard[k] < shard);
  return k < h->count && h->shard[k] == shard ? (int)k : -1;
}

/* Marches `ray`, loaded from payload `slot`, on through every shard this tile holds:
 * `own` (shard `own_shard`; null for none) and the shard copies of `region`
 * (`directory`, its foam_region_header). Between shards the ray is rounded as its
 * payload (`layout`, `hops`) would round it, and after the last it is written to
 * its payload, as between tiles, so the image does not depend on which shards a
 * tile holds or where a ray ends. A
 * finished ray stops, even when its pixel's home is a shard copied here. Adds the
 * shard visits (tracer hops), the cells marched and the neighbours tested to
 * work[0], work[1] and work[2] (layout.h: FOAM_TW_MARCHED.. and FOAM_IW_VISITS..
 * are in that order).
 *
 * The ray's payload is written once, as the ray leaves this march; between shards
 * its fields are rounded in registers to what the payload keeps (foam_ray_round),
 * which is what a write and a read gave. An injector's ray crosses a shard every 1.2
 * to 3.7 cell steps on the bicycle scene, and the write and the read after every
 * visit, with the search, were a third of its visit's instructions (316 x86
 * instructions, 206 now, and a ray's one write 89 more); a tracer read back every
 * ray it had just written (a visit 318 → 219, a ray 67 more; both measured,
 * tools/costs/data/diff-march-o2.json). `camera_region`, a constant at each call (an
 * injector's 1, a tracer's 0): the directory is a camera region, padded past its
 * count, and searched by fixed halvings (foam_region_find_fixed); a tracer's few
 * copies by the loop.
 *
 * Once the budget spent (foam_budget_q8(work)) reaches `limit` (foam_budget_limit;
 * 0: none) the ray stops and 1 is returned: inside the shard, after the step whose
 * faces spend it, or at the shard boundary it reached, its fp32 state in *pause (foam_ray_pause; a
 * worker's budget then ends where it should, not a shard's rest of cells later). A
 * ray loaded from such a pause goes on with `resumed` set, after foam_ray_resume.
 *
 * Always inlined: called, its stack-passed arguments give the vertex a dynamic
 * frame, which the build's stack measure (codelet_costs.rs) cannot bound. */
static inline __attribute__((always_inline)) int foam_march_copies(const foam_camera *cam, uint32_t layout, uint32_t hops,
                                                                    unsigned char *slot, uint16_t own_shard,
                                                                    const unsigned char *own,
                                                                    const foam_region_header *directory,
                                                                    const unsigned char *region, foam_ray *ray,
                                                                    uint32_t *work, uint32_t limit,
                                                                    foam_paused_ray *pause, int resumed,
                                                                    int camera_region) {
  foam_vec3 o, d; /* the pixel's ray, the same on every shard it crosses here */
  FOAM_PROBE(held);
  foam_camera_ray(cam, foam_px_x(ray->px), foam_px_y(ray->px), &o, &d);
  /* The SH basis of d, evaluated for the first shard's sh_rest and again only for a
   * shard with another: a ray crosses a shard every 2.7 cell steps on an injector of
   * the bicycle scene cut by load, and evaluating it on every visit cost each visit
   * an eighth of its instructions at degree 2. */
  foam_float2 basis[FOAM_SH_MAX_REST];
  uint32_t basis_rest = 0xFFFFFFFFu;
  uint32_t visits = 0;
  for (; ray->cell != FOAM_FINISHED_CELL; ++visits) {
    const unsigned char *blob = own && ray->shard == own_shard ? own : (const unsigned char *)0;
    if (!blob) {
      FOAM_PROBE(region_find);
      const int k =
          camera_region ? foam_region_find_fixed(directory, ray->shard) : foam_region_find(directory, ray->shard);
      if (k < 0) break; /* it leaves the tile, its payload in its slot (below) */
      blob = region + directory->offset[k];
    }
    const int32_t left_q8 = foam_budget_left(work, limit);
    if (visits && left_q8 <= 0) {
      foam_ray_store(slot, layout, hops, ray);
      foam_ray_pause(ray, pause); /* what its payload holds: resumed, the same */
      return 1;
    }
    foam_shard_view view;
    foam_shard_open(blob, &view);
    if (view.h.sh_rest != basis_rest) {
      basis_rest = view.h.sh_rest;
      foam_sh_basis(d, basis_rest, basis);
      FOAM_PROBE_ADD(sh_visit, basis_rest != 0);
      FOAM_PROBE_ADD(sh_basis, basis_rest);
    }
    /* foam_march takes at least one step, so a worker past its limit still moves its
     * ray on. */
    const foam_march_end end =
        foam_visit_ray(&view, cam, o, d, basis, left_q8, resumed && visits == 0, ray, &work[1], &work[2]);
    work[0] += 1;
    if (end == FOAM_MARCH_PAUSED) {
      foam_ray_store(slot, layout, hops, ray);
      foam_ray_pause(ray, pause);
      return 1;
    }
    foam_ray_round(layout, hops, ray);
  }
  if (visits) foam_ray_store(slot, layout, hops, ray); /* rounded: the same bytes */
  return 0;
}

#endif /* FOAM_MARCH_H */
