// FOAM_PROBE (codelets/include/foam/probe.h) as the probe build of the replay harness
// defines it: one counter per event, force-included before every codelet.
#ifndef FOAM_PROBE_COUNTS_H
#define FOAM_PROBE_COUNTS_H
#include <array>

#define FOAM_PROBE_EVENTS(X) \
  X(visit) X(neighbour) X(ahead) X(step) X(composite) X(depth) X(region_find) X(held) X(ray) X(result) \
  X(pixel) X(send) X(scan) X(moved) X(emit) X(deal) X(arrival) \
  X(sh_visit) X(sh_basis) X(sh_step) X(sh_stepcoeff) X(sh_colour) X(sh_coeff) X(finish_word) X(link) X(wait_walk) \
  X(unmarched)

#define FOAM_PROBE_DECL(e) inline unsigned long foam_probe_##e;
FOAM_PROBE_EVENTS(FOAM_PROBE_DECL)
#undef FOAM_PROBE_DECL

#define FOAM_PROBE(e) ((void)(foam_probe_##e++))
#define FOAM_PROBE_ADD(e, n) ((void)(foam_probe_##e += (n)))

#define FOAM_PROBE_NAME(e) #e,
inline const char *const foam_probe_names[] = {FOAM_PROBE_EVENTS(FOAM_PROBE_NAME)};
#undef FOAM_PROBE_NAME

inline void foam_probe_reset() {
#define FOAM_PROBE_ZERO(e) foam_probe_##e = 0;
  FOAM_PROBE_EVENTS(FOAM_PROBE_ZERO)
#undef FOAM_PROBE_ZERO
}

#define FOAM_PROBE_VALUE(e) foam_probe_##e,
inline std::array<unsigned long, sizeof foam_probe_names / sizeof *foam_probe_names> foam_probe_values() {
  return {FOAM_PROBE_EVENTS(FOAM_PROBE_VALUE)};
}
#undef FOAM_PROBE_VALUE

#endif
