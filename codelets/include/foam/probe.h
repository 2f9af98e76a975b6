/* Event counts for measuring the codelets' costs off-line (tools/costs builds a replay
 * harness with FOAM_PROBE counting events such as neighbours tested per cell step).
 * Everywhere else a probe is nothing. */
#ifndef FOAM_PROBE_H
#define FOAM_PROBE_H

#ifndef FOAM_PROBE
#define FOAM_PROBE(event) ((void)0)
#endif
/* Counts `n` events at once (n is not evaluated outside the probe build). */
#ifndef FOAM_PROBE_ADD
#define FOAM_PROBE_ADD(event, n) ((void)0)
#endif

#endif /* FOAM_PROBE_H */
