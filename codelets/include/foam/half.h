/* IEEE binary16 <-> float for payload fields stored as uint16_t bit patterns.
 * On the IPU the hardware converts. On a host the F16C instructions do when the
 * build enables them (poplar-bridge/build.rs does where the build machine has them:
 * every ray crossing between shards goes through these), and otherwise a portable
 * round-to-nearest-even conversion gives the same bits, so host and device agree on
 * every payload. The portable pair is always built off the IPU so tests can hold it
 * against the instructions.
 *
 * A float beyond the largest half (65504) becomes inf or 65504 on the IPU depending
 * on its floating-point control settings (NaN-on-overflow mode); so the payload's
 * conversion, foam_f2h, saturates explicitly before converting, and gives the same
 * bits everywhere: +-65504 for anything larger in magnitude, infinities included.
 * NaN stays NaN. */
#ifndef FOAM_HALF_H
#define FOAM_HALF_H

#include <stdint.h>
#include <string.h>

#ifdef __IPU__
#include <poplar/HalfFloat.hpp>
#elif defined(__F16C__)
#include <immintrin.h>
#endif

/* The largest finite half. */
#define FOAM_HALF_MAX 65504.0f

#ifndef __IPU__
static inline float foam_h2f_soft(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1Fu;
  uint32_t man = h & 0x3FFu;
  uint32_t bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else { /* subnormal: renormalise */
      exp = 127 - 15 + 1;
      while ((man & 0x400u) == 0) {
        man <<= 1;
        exp--;
      }
      man &= 0x3FFu;
      bits = sign | (exp << 23) | (man << 13);
    }
  } else if (exp == 0x1F) {
    bits = sign | 0x7F800000u | (man << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
  }
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

static inline uint16_t foam_f2h_soft(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t absx = x & 0x7FFFFFFFu;
  if (absx >= 0x7F800000u) { /* inf or nan */
    return (uint16_t)(sign | 0x7C00u | (absx > 0x7F800000u ? 0x200u : 0u));
  }
  if (absx >= 0x477FF000u) { /* rounds to >= 65520: overflow to inf */
    return (uint16_t)(sign | 0x7C00u);
  }
  if (absx < 0x38800000u) { /* below the smallest normal half: subnormal or zero */
    if (absx < 0x33000000u) return (uint16_t)sign; /* < 2^-25 rounds to zero */
    uint32_t e = absx >> 23;
    uint32_t m = (absx & 0x7FFFFFu) | 0x800000u;
    uint32_t shift = 126u - e; /* 14 + (113 - e) - 1 ... aligns to 2^-24 units */
    uint32_t r = m >> shift;
    uint32_t rem = m & ((1u << shift) - 1u);
    uint32_t halfway = 1u << (shift - 1u);
    if (rem > halfway || (rem == halfway && (r & 1u))) r++;
    return (uint16_t)(sign | r);
  }
  uint32_t r = ((absx >> 13) - ((127u - 15u) << 10));
  uint32_t rem = absx & 0x1FFFu;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) r++;
  return (uint16_t)(sign | r);
}
#endif

static inline float foam_h2f(uint16_t h) {
#ifdef __IPU__
  half v;
  memcpy(&v, &h, 2);
  return (float)v;
#elif defined(__F16C__)
  return _cvtsh_ss(h);
#else
  return foam_h2f_soft(h);
#endif
}

/* Two floats as one value (the IPU's float2: f32v2 arithmetic works on both). */
typedef float foam_float2 __attribute__((vector_size(8)));

static inline foam_float2 foam_f2_splat(float v) {
  const foam_float2 p = {v, v};
  return p;
}

/* Two binary16 values packed in one word (the lower address's in the low bits) to
 * floats in one conversion, as f16v2tof32 does on the IPU and vcvtph2ps with F16C. */
static inline foam_float2 foam_h2f2(uint32_t w) {
#ifdef __IPU__
  half v[2];
  memcpy(v, &w, 4);
  foam_float2 f = {(float)v[0], (float)v[1]};
  return f;
#elif defined(__F16C__)
  const __m128 f = _mm_cvtph_ps(_mm_cvtsi32_si128((int)w));
  return __builtin_shufflevector(f, f, 0, 1);
#else
  foam_float2 v = {foam_h2f_soft((uint16_t)w), foam_h2f_soft((uint16_t)(w >> 16))};
  return v;
#endif
}

/* Four binary16 values packed in 64 bits (lowest address in the low bits) to two
 * float pairs: one 64-bit load and two f16v2tof32 on the IPU; one 4-wide vcvtph2ps and
 * a move of the high pair with F16C. */
static inline void foam_h4f2x2(uint64_t w, foam_float2 *lo, foam_float2 *hi) {
#if defined(__F16C__) && !defined(__IPU__)
  const __m128 f = _mm_cvtph_ps(_mm_cvtsi64_si128((long long)w));
  *lo = __builtin_shufflevector(f, f, 0, 1);
  *hi = __builtin_shufflevector(f, f, 2, 3);
#else
  *lo = foam_h2f2((uint32_t)w);
  *hi = foam_h2f2((uint32_t)(w >> 32));
#endif
}

/* Round to nearest even, IEEE overflow (inf) on a host; the target's own
 * conversion on the IPU. Only for values within +-FOAM_HALF_MAX (or NaN): see
 * foam_f2h. */
static inline uint16_t foam_f2h_rne(float f) {
#ifdef __IPU__
  half v = (half)f;
  uint16_t h;
  memcpy(&h, &v, 2);
  return h;
#elif defined(__F16C__)
  return (uint16_t)_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT);
#else
  return foam_f2h_soft(f);
#endif
}

/* The payload's float -> half: saturating, the same bits on every target. The
 * comparisons let NaN through unchanged. */
static inline uint16_t foam_f2h(float f) {
  const float c = f > FOAM_HALF_MAX ? FOAM_HALF_MAX : f < -FOAM_HALF_MAX ? -FOAM_HALF_MAX : f;
  return foam_f2h_rne(c);
}

/* `n` (2 or 4) floats at `v` rounded to binary16 and back as foam_f2h then foam_h2f
 * round each (saturating, NaN through): with F16C one clamp, one conversion each
 * way for all of them, as f32v2 clamps and f32v2tof16/f16v2tof32 pairs do on the
 * IPU; a payload's worth is rounded wherever a ray crosses between shards on one
 * tile (ray.h foam_ray_round). */
static inline void foam_round_half(float *v, unsigned n) {
#if defined(__F16C__) && !defined(__IPU__)
  const __m128 x = n == 4 ? _mm_loadu_ps(v) : _mm_castsi128_ps(_mm_loadl_epi64((const __m128i *)v));
  /* min(MAX, x) and max(-MAX, .) return x itself where x is NaN, as foam_f2h does. */
  const __m128 c = _mm_max_ps(_mm_set1_ps(-FOAM_HALF_MAX), _mm_min_ps(_mm_set1_ps(FOAM_HALF_MAX), x));
  const __m128 r = _mm_cvtph_ps(_mm_cvtps_ph(c, _MM_FROUND_TO_NEAREST_INT));
  if (n == 4) _mm_storeu_ps(v, r);
  else _mm_storel_pi((__m64 *)v, r);
#else
  for (unsigned i = 0; i < n; ++i) v[i] = foam_h2f(foam_f2h(v[i]));
#endif
}

#endif /* FOAM_HALF_H */
