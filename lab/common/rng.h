/*
 * common/rng.h — a fast deterministic random number generator, one per
 * thread.
 */
#ifndef HOTSET_LAB_COMMON_RNG_H
#define HOTSET_LAB_COMMON_RNG_H

#include <stdint.h>

/* ---- random numbers ---- */

/* xoshiro256** (Blackman & Vigna): a few ns per number, 256 bits of state,
 * good enough statistics for picking blocks. One per thread: sharing one would
 * put a contended cache line into the very loop being measured. */
typedef struct bench_rng {
  uint64_t s[4];
} bench_rng;

/* Seeds from (seed, stream) through splitmix64, so thread i of a run with a
 * given --seed always draws the same sequence. */
void bench_rng_seed(bench_rng *r, uint64_t seed, uint64_t stream);
uint64_t bench_rng_next(bench_rng *r);
/* Uniform in [0, n), n > 0 (Lemire's multiply-shift; the bias for n < 2^32
 * is below 2^-32, far under anything a benchmark could notice). */
uint32_t bench_rng_below(bench_rng *r, uint32_t n);
/* Uniform in [0, 1). */
double bench_rng_double(bench_rng *r);

#endif
