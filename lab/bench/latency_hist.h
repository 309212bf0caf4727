/*
 * bench/latency_hist.h — a latency histogram with log-spaced buckets, for
 * percentiles of operations timed in nanoseconds.
 *
 * Keeping every sample would cost memory in proportion to the run and a
 * sort at the end; a fixed histogram costs 4 KiB per thread, one increment
 * per sample, and merges by addition. Buckets are eight per power of two
 * (values below 8 ns exactly), so a reported percentile is within 1/16 of
 * the true value either way — far finer than the run-to-run noise of any
 * latency a benchmark measures.
 */
#ifndef HOTSET_BENCH_LATENCY_HIST_H
#define HOTSET_BENCH_LATENCY_HIST_H

#include <stdint.h>

#define LATENCY_SUB_BITS 3 /* 2^3 buckets per power of two */
#define LATENCY_BUCKETS  (62 << LATENCY_SUB_BITS)

typedef struct latency_hist {
  uint64_t count[LATENCY_BUCKETS];
  uint64_t n;
  uint64_t min_ns, max_ns; /* exact, for clamping the estimates */
} latency_hist;

void latency_hist_reset(latency_hist *h);
void latency_hist_add(latency_hist *h, uint64_t ns);
/* Adds every sample of `from` to `into`. */
void latency_hist_merge(latency_hist *into, const latency_hist *from);
/* The q-quantile (0 < q <= 1) in microseconds: the middle of the bucket that
 * holds the ceil(q * n)-th smallest sample, clamped to [min, max]. 0 when
 * the histogram is empty. */
double latency_hist_quantile_us(const latency_hist *h, double q);

#endif
