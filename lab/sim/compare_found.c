/*
 * sim/compare_found.c — a simulation's misses against the traced cache's.
 *
 * One pass over the requests, reading the simulation's miss bit and the
 * trace's found flag; requests whose found is unknown (-1) count nowhere.
 */
#include "sim/compare_found.h"

#include "core/error.h"

#include <string.h>

hs_status hs_compare_found(const hs_sim_trace *t, const uint64_t *miss_bits,
                           hs_found_compare *out) {
  memset(out, 0, sizeof *out);
  if (!t->found)
    return hs_fail(HS_ERR_INVALID, 0, "%s: the trace has no found column to compare with", t->path);
  for (uint64_t r = 0; r < t->requests; r++) {
    bool sim_missed = miss_bits[r >> 6] >> (r & 63) & 1;
    int8_t found = t->found[r];
    if (found < 0) continue;
    out->agree += sim_missed && found == 0;
    out->sim_only += sim_missed && found == 1;
    out->server_only += !sim_missed && found == 0;
  }
  return HS_OK;
}
