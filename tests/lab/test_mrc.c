/*
 * tests/test_mrc.c — the one-pass LRU miss-ratio curve (sim/mrc.h) equals
 * an `lru` simulation (hs_sim_run, object mode) at every size.
 *
 * Traces are built in memory the way hs_sim_load leaves one: a Zipf-like
 * trace (skewed, with a long tail of objects seen once), a loop larger than
 * some sizes (LRU's worst case: every request misses below the loop's
 * length, only first requests miss at or above it), and a trace of one
 * object. Sizes cover 1, every size up to 64, log-spaced sizes up to the
 * object count, the object count itself and beyond it.
 */
#include "check.h"
#include "sim/mrc.h"
#include "sim/sim.h"
#include "sim_trace_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The Zipf trace's seed. */
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static hs_sim_trace *loop_trace(uint64_t requests, uint32_t length) {
  hs_sim_trace *t = sim_trace_new("loop", requests);
  for (uint64_t r = 0; r < requests; r++) t->obj[r] = (uint32_t)(r % length);
  t->objects = requests < length ? requests : length;
  return t;
}

static void check_curve(const hs_sim_trace *t) {
  uint64_t sizes[128];
  size_t n = 0;
  for (uint64_t s = 1; s <= 64; s++) sizes[n++] = s;
  for (double s = 80; s < (double)t->objects && n < 120; s *= 1.5) sizes[n++] = (uint64_t)s;
  sizes[n++] = t->objects > 1 ? t->objects - 1 : 1;
  sizes[n++] = t->objects;
  sizes[n++] = t->objects + 1;
  sizes[n++] = 3 * t->objects + 7;
  hs_sim_result curve[128];
  CHECK_OK(hs_mrc_lru(t, sizes, n, NULL, curve));
  for (size_t k = 0; k < n; k++) {
    hs_sim_result want;
    CHECK_OK(hs_sim_run(t, "lru", sizes[k], true, NULL, &want));
    if (curve[k].misses != want.misses || curve[k].requests != want.requests ||
        curve[k].byte_misses != want.byte_misses || curve[k].bytes != want.bytes)
      fprintf(stderr, "%s at %llu objects: one pass %llu misses, lru simulation %llu\n", t->path,
              (unsigned long long)sizes[k], (unsigned long long)curve[k].misses,
              (unsigned long long)want.misses);
    CHECK_EQ(curve[k].misses, want.misses);
    CHECK_EQ(curve[k].requests, want.requests);
    CHECK_EQ(curve[k].byte_misses, want.byte_misses);
    CHECK_EQ(curve[k].bytes, want.bytes);
  }
}

int main(void) {
  hs_sim_trace *z = sim_trace_zipf(200000, 20000, 0.8, &rng_state);
  check_curve(z);
  hs_sim_trace_free(z);

  /* A loop of 500: below 500 objects LRU misses every request; at 500 and
   * above only the first 500 miss. */
  hs_sim_trace *l = loop_trace(5000, 500);
  uint64_t sizes[] = {1, 499, 500, 501};
  hs_sim_result r[4];
  CHECK_OK(hs_mrc_lru(l, sizes, 4, NULL, r));
  CHECK_EQ(r[0].misses, 5000u);
  CHECK_EQ(r[1].misses, 5000u);
  CHECK_EQ(r[2].misses, 500u);
  CHECK_EQ(r[3].misses, 500u);
  check_curve(l);
  hs_sim_trace_free(l);

  hs_sim_trace *one = loop_trace(100, 1);
  check_curve(one);
  uint64_t zero = 0;
  CHECK_ST(hs_mrc_lru(one, &zero, 1, NULL, r), HS_ERR_INVALID);
  hs_sim_trace_free(one);
  return check_finish();
}
