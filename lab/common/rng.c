/*
 * common/rng.c — see rng.h.
 */
#include "common/rng.h"

static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9E3779B97F4A7C15u);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
  return z ^ (z >> 31);
}

void bench_rng_seed(bench_rng *r, uint64_t seed, uint64_t stream) {
  /* Mix the stream in through its own splitmix step so that (seed, 1) and
   * (seed + 1, 0) do not start from the same state. */
  uint64_t x = seed;
  uint64_t y = stream;
  x ^= splitmix64(&y);
  for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&x);
  /* xoshiro's only bad state is all zeros; splitmix64 cannot produce four
   * zeros in a row, but say so rather than rely on it silently. */
  if (!(r->s[0] | r->s[1] | r->s[2] | r->s[3])) r->s[0] = 1;
}

static inline uint64_t rotl(uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}

uint64_t bench_rng_next(bench_rng *r) {
  uint64_t *s = r->s;
  uint64_t result = rotl(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

uint32_t bench_rng_below(bench_rng *r, uint32_t n) {
  return (uint32_t)(((bench_rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

double bench_rng_double(bench_rng *r) {
  return (double)(bench_rng_next(r) >> 11) * 0x1.0p-53;
}
