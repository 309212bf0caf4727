/*
 * bench/latency_hist.c — log-bucketed latency histograms (latency_hist.h).
 *
 * Bucket of a value v >= 8: with m the index of v's highest set bit, the
 * bucket is (m - 2) * 8 plus the three bits below the highest one; values
 * 0..7 have buckets 0..7 to themselves. The buckets are therefore contiguous
 * (8..15 are the values 8..15, 16..23 cover 16..31 two at a time, ...) and a
 * bucket's width is 1/8 of its lower bound.
 */
#include "bench/latency_hist.h"

#include <math.h>
#include <string.h>

#define SUB (1u << LATENCY_SUB_BITS)

static uint32_t bucket_of(uint64_t v) {
  if (v < SUB) return (uint32_t)v;
  uint32_t msb = 63u - (uint32_t)__builtin_clzll(v);
  uint32_t sub = (uint32_t)(v >> (msb - LATENCY_SUB_BITS)) & (SUB - 1);
  return ((msb - LATENCY_SUB_BITS + 1) << LATENCY_SUB_BITS) + sub;
}

/* The bucket's lowest value and its width. */
static void bucket_range(uint32_t i, double *lo, double *width) {
  if (i < SUB) {
    *lo = i;
    *width = 1;
    return;
  }
  uint32_t msb = (i >> LATENCY_SUB_BITS) + LATENCY_SUB_BITS - 1;
  uint32_t sub = i & (SUB - 1);
  *width = ldexp(1.0, (int)(msb - LATENCY_SUB_BITS));
  *lo = (double)(SUB + sub) * *width;
}

void latency_hist_reset(latency_hist *h) {
  memset(h, 0, sizeof *h);
  h->min_ns = UINT64_MAX;
}

void latency_hist_add(latency_hist *h, uint64_t ns) {
  h->count[bucket_of(ns)]++;
  h->n++;
  if (ns < h->min_ns) h->min_ns = ns;
  if (ns > h->max_ns) h->max_ns = ns;
}

void latency_hist_merge(latency_hist *into, const latency_hist *from) {
  for (uint32_t i = 0; i < LATENCY_BUCKETS; i++) into->count[i] += from->count[i];
  into->n += from->n;
  if (from->min_ns < into->min_ns) into->min_ns = from->min_ns;
  if (from->max_ns > into->max_ns) into->max_ns = from->max_ns;
}

double latency_hist_quantile_us(const latency_hist *h, double q) {
  if (h->n == 0) return 0;
  if (q > 1) q = 1;
  uint64_t rank = (uint64_t)ceil(q * (double)h->n);
  if (rank == 0) rank = 1;
  uint64_t seen = 0;
  for (uint32_t i = 0; i < LATENCY_BUCKETS; i++) {
    seen += h->count[i];
    if (seen < rank) continue;
    double lo, width;
    bucket_range(i, &lo, &width);
    double v = lo + width / 2;
    if (v < (double)h->min_ns) v = (double)h->min_ns;
    if (v > (double)h->max_ns) v = (double)h->max_ns;
    return v / 1000.0;
  }
  return (double)h->max_ns / 1000.0;
}
