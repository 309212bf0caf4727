/*
 * tests/sim_trace_util.h — simulator traces built in memory the way
 * hs_sim_load leaves one (dense object numbers in order of first request,
 * unit sizes), shared by the tests of the one-pass curves and of sampling.
 */
#ifndef HOTSET_TESTS_SIM_TRACE_UTIL_H
#define HOTSET_TESTS_SIM_TRACE_UTIL_H

#include "check.h"
#include "sim/sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* xorshift64*: a test's own fixed seed, the same trace everywhere. */
static inline uint64_t sim_rng_next(uint64_t *state) {
  *state ^= *state >> 12;
  *state ^= *state << 25;
  *state ^= *state >> 27;
  return *state * 0x2545F4914F6CDD1Dull;
}

/* `requests` requests of size 1 with no objects yet; the caller fills obj[]
 * and objects (and ws_bytes). */
static inline hs_sim_trace *sim_trace_new(const char *name, uint64_t requests) {
  hs_sim_trace *t = calloc(1, sizeof *t);
  REQUIRE(t);
  t->path = strdup(name);
  t->requests = requests;
  t->obj = calloc(requests, sizeof *t->obj);
  t->size = calloc(requests, sizeof *t->size);
  REQUIRE(t->path && t->obj && t->size);
  for (uint64_t r = 0; r < requests; r++) t->size[r] = 1;
  t->bytes_requested = requests;
  t->min_size = t->max_size = 1;
  return t;
}

/* Requests over `universe` ids with Zipf(alpha) popularity; the ids that
 * occur are renumbered densely in order of first request, as loading does. */
static inline hs_sim_trace *sim_trace_zipf(uint64_t requests, uint32_t universe, double alpha,
                                           uint64_t *rng) {
  hs_sim_trace *t = sim_trace_new("zipf", requests);
  double *cdf = malloc(universe * sizeof *cdf);
  uint32_t *dense = malloc(universe * sizeof *dense);
  REQUIRE(cdf && dense);
  double sum = 0;
  for (uint32_t i = 0; i < universe; i++) {
    sum += 1.0 / pow(i + 1.0, alpha);
    cdf[i] = sum;
    dense[i] = UINT32_MAX;
  }
  for (uint64_t r = 0; r < requests; r++) {
    double u = (double)(sim_rng_next(rng) >> 11) / 9007199254740992.0 * sum;
    uint32_t lo = 0, hi = universe - 1;
    while (lo < hi) { /* the first id whose cumulative weight reaches u */
      uint32_t mid = lo + (hi - lo) / 2;
      if (cdf[mid] < u)
        lo = mid + 1;
      else
        hi = mid;
    }
    if (dense[lo] == UINT32_MAX) {
      dense[lo] = (uint32_t)t->objects++;
      t->ws_bytes++;
    }
    t->obj[r] = dense[lo];
  }
  free(cdf);
  free(dense);
  return t;
}

#endif
