/*
 * sim/mrc.c — LRU's exact miss-ratio curve from stack distances (see
 * sim/mrc.h for why one pass is exact).
 */
#include "sim/mrc.h"

#include "core/error.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NEVER UINT64_MAX

static double mrc_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Fenwick tree over positions 1..n: add at a position, sum of a prefix.
 * A count never exceeds the trace's objects, which fit 32 bits. */
static void fenwick_add(uint32_t *tree, uint64_t n, uint64_t pos, int32_t delta) {
  for (; pos <= n; pos += pos & (~pos + 1)) tree[pos] += (uint32_t)delta;
}

static uint64_t fenwick_prefix(const uint32_t *tree, uint64_t pos) {
  uint64_t sum = 0;
  for (; pos > 0; pos -= pos & (~pos + 1)) sum += tree[pos];
  return sum;
}

hs_status hs_mrc_lru(const hs_sim_trace *t, const uint64_t *capacities, size_t n,
                     _Atomic uint64_t *done, hs_sim_result *out) {
  memset(out, 0, n * sizeof *out);
  for (size_t k = 0; k < n; k++)
    if (capacities[k] == 0 || t->objects == 0)
      return hs_fail(HS_ERR_INVALID, 0, "%s: nothing to simulate (%llu objects, capacity %llu)",
                     t->path, (unsigned long long)t->objects, (unsigned long long)capacities[k]);
  uint64_t nreq = t->requests;
  uint32_t *tree = calloc(nreq + 1, sizeof *tree);
  uint64_t *latest = malloc(t->objects * sizeof *latest);
  /* hits_at[d]: requests whose stack distance is d (< objects always). */
  uint64_t *hits_at = calloc(t->objects, sizeof *hits_at);
  if (!tree || !latest || !hits_at) {
    free(tree);
    free(latest);
    free(hits_at);
    return hs_fail(HS_ERR_NOMEM, 0, "no memory for the stack distances of %llu requests",
                   (unsigned long long)nreq);
  }
  for (uint64_t o = 0; o < t->objects; o++) latest[o] = NEVER;
  double t0 = mrc_now();
  uint64_t seen = 0;
  for (uint64_t r = 0; r < nreq; r++) {
    uint32_t o = t->obj[r];
    uint64_t pos = r + 1;
    if (latest[o] == NEVER) {
      seen++;
    } else {
      /* Every seen object has one set position, all before pos: those
       * after latest[o] are the distinct objects requested since. */
      uint64_t distance = seen - fenwick_prefix(tree, latest[o]);
      hits_at[distance]++;
      fenwick_add(tree, nreq, latest[o], -1);
    }
    fenwick_add(tree, nreq, pos, 1);
    latest[o] = pos;
    if (done && (r & 0xFFFF) == 0xFFFF)
      atomic_fetch_add_explicit(done, 0x10000, memory_order_relaxed);
  }
  /* A request with distance d hits at every size above d: the hits at size
   * s are the requests with distance below s. */
  for (uint64_t d = 1; d < t->objects; d++) hits_at[d] += hits_at[d - 1];
  double seconds = mrc_now() - t0;
  for (size_t k = 0; k < n; k++) {
    uint64_t below = capacities[k] < t->objects ? capacities[k] : t->objects;
    uint64_t hits = hits_at[below - 1];
    out[k].requests = nreq;
    out[k].bytes = nreq;
    out[k].misses = nreq - hits;
    out[k].byte_misses = out[k].misses;
    out[k].seconds = seconds;
  }
  if (done) atomic_fetch_add_explicit(done, nreq & 0xFFFF, memory_order_relaxed);
  free(tree);
  free(latest);
  free(hits_at);
  return HS_OK;
}
