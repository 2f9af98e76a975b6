/* Unsigned integer quotients by a divisor that stays fixed over many dividends.
 * The tile divides integers in a library call (~40 instructions, tools/costs
 * ipu_mix.py), and a router's credit and allowance shares took one or two a lane
 * every step: at the root, a lane per injector. One f32 multiply by the divisor's
 * reciprocal, taken once, lands within one of the quotient, and the remainder's
 * sign or size corrects it. */
#ifndef FOAM_DIVIDE_H
#define FOAM_DIVIDE_H

#include <stdint.h>

/* Quotients below this are exact (see foam_divide): 2^22. */
#define FOAM_DIVIDE_MAX_QUOTIENT (1u << 22)
/* Divisors below this are exact: the remainder before the correction, in
 * (-d, 2d), must fit an int32. */
#define FOAM_DIVIDE_MAX_DIVISOR (1u << 30)

typedef struct foam_divisor {
  uint32_t d;
  float inv; /* 1 / d rounded, 0 for d = 0 */
} foam_divisor;

/* d = 0 gives a divisor whose every quotient is unspecified (no trap: the IPU traps
 * on a division by zero): a caller divides only by what it checked is not 0. */
static inline foam_divisor foam_divisor_of(uint32_t d) {
  foam_divisor v;
  v.d = d;
  v.inv = d ? 1.0f / (float)d : 0.0f;
  return v;
}

/* floor(n / v.d), exactly, where the quotient is below FOAM_DIVIDE_MAX_QUOTIENT and
 * v.d below FOAM_DIVIDE_MAX_DIVISOR (tests: the `divisor_exact` scenario). n, 1/d
 * and their product are each rounded once, by at most 2^-24 relatively, so the
 * product is within 3 * 2^-24 * q < 0.75 of n / d, and truncated it is q - 1, q or
 * q + 1: n - q * d, exact modulo 2^32 and within (-d, 2d), says which. */
static inline uint32_t foam_divide(foam_divisor v, uint32_t n) {
  uint32_t q = (uint32_t)((float)n * v.inv);
  const int32_t r = (int32_t)(n - q * v.d);
  if (r < 0) --q;
  else if ((uint32_t)r >= v.d) ++q;
  return q;
}

#endif /* FOAM_DIVIDE_H */
