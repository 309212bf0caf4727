/*
 * sim/compare_found.h — a simulation's misses against the traced cache's.
 *
 * A trace with a found column (hotset's PostgreSQL trace csv) says, request
 * by request, whether the server that made it found the page in its cache.
 * A simulation run with hs_sim_run_marking says which requests it missed.
 * Set side by side, the two give how far the model agrees with the server
 * access by access, not just in total: equal miss counts can hide misses
 * in different places.
 */
#ifndef HOTSET_SIM_COMPARE_FOUND_H
#define HOTSET_SIM_COMPARE_FOUND_H

#include "hotset/status.h"
#include "sim/sim.h"

#include <stdint.h>

typedef struct hs_found_compare {
  uint64_t agree;       /* missed in the simulation and in the server */
  uint64_t sim_only;    /* simulated misses the server found */
  uint64_t server_only; /* server misses the simulation found */
} hs_found_compare;

/* Counts over every request of `t` whose found is known (0 or 1);
 * `miss_bits` as hs_sim_run_marking fills it. HS_ERR_INVALID if the trace
 * has no found column. */
hs_status hs_compare_found(const hs_sim_trace *t, const uint64_t *miss_bits, hs_found_compare *out);

#endif
