/*
 * bench/mem_chase.c — a dependent-load chase over a region (mem_chase.h).
 */
#include "bench/mem_chase.h"

#include "common/clock.h"
#include "common/rng.h"
#include "core/big_alloc.h"

#include <stdlib.h>

#define LINE        64u
#define MIN_LOADS   (1u << 20)
#define LOADS_SWEEP 4u /* at least this many trips around a big cycle */

double mem_chase_ns(uint64_t bytes, hs_huge_pages huge, uint64_t seed) {
  uint64_t lines = bytes / LINE;
  if (lines < 2) lines = 2;
  if (lines > UINT32_MAX) lines = UINT32_MAX;
  size_t size = (size_t)lines * LINE;
  uint32_t *region = big_alloc(size, huge, NULL);
  uint32_t *order = malloc(sizeof *order * (size_t)lines);
  if (!region || !order) {
    big_free(region, size);
    free(order);
    return -1;
  }
  /* One random cycle through every line (Sattolo's shuffle), so the chase
   * visits all of them before it repeats and no prefetcher can guess the
   * next. Each line's first word holds the next line's index. */
  for (uint32_t i = 0; i < lines; i++) order[i] = i;
  bench_rng rng;
  bench_rng_seed(&rng, seed, 0);
  for (uint32_t i = (uint32_t)lines - 1; i > 0; i--) {
    uint32_t j = (uint32_t)bench_rng_below(&rng, i);
    uint32_t t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  const uint32_t words = LINE / sizeof(uint32_t);
  for (uint32_t i = 0; i < lines; i++) region[(size_t)order[i] * words] = order[(i + 1) % lines];
  free(order);

  uint64_t loads = lines * LOADS_SWEEP > MIN_LOADS ? lines * LOADS_SWEEP : MIN_LOADS;
  volatile uint32_t sink;
  uint32_t at = 0;
  for (uint64_t i = 0; i < lines; i++) at = region[(size_t)at * words]; /* one warm trip */
  uint64_t t0 = bench_now_ns();
  for (uint64_t i = 0; i < loads; i++) at = region[(size_t)at * words];
  uint64_t t1 = bench_now_ns();
  sink = at;
  (void)sink;
  big_free(region, size);
  return (double)(t1 - t0) / (double)loads;
}
