/*
 * sim/shards.h — spatially hashed sampling of a loaded trace (SHARDS,
 * Waldspurger et al., FAST '15), for any policy.
 *
 * An object is in the sample when its hash, taken modulo P = 2^24, is
 * below a threshold T; the rate is R = T / P. Because the choice depends on
 * the object alone, every request of a sampled object is kept and the
 * sampled trace is a faithful miniature: R of the objects, about R of the
 * requests, each object's reuse pattern intact. A cache of R × s entries
 * (or bytes) over the sample then sees about the same miss ratio as a cache
 * of s over the whole trace, at about R of the cost.
 *
 * The hash is taken of the object's dense number (sim/sim.h), which every
 * encoding of a trace assigns alike (order of first request), through the
 * 64-bit mix every hash table here uses (core/hash.h), so a sample is the
 * same from run to run and from format to format.
 *
 * Small caches. A cache of s entries becomes one of R × s: at R = 0.01 a
 * 500-entry cache is a 5-entry miniature, whose miss ratio hangs on which
 * few hot objects the hash happened to keep (0.89 against 0.82 on a Zipf
 * trace). So a size whose miniature would hold fewer than a floor of
 * entries is sampled at the rate that gives it that floor (at most 1):
 * hs_shards_threshold_for. Every rate's sample is a subset of the higher
 * rates' (the same hash, a larger threshold), so the curve stays
 * consistent; the cost grows by the floor's share of each small size.
 */
#ifndef HOTSET_SIM_SHARDS_H
#define HOTSET_SIM_SHARDS_H

#include "hotset/status.h"
#include "sim/sim.h"

#include <stdbool.h>
#include <stdint.h>

/* P: the hash's modulus. A rate below 1 / P samples nothing. */
#define HS_SHARDS_MODULUS (UINT64_C(1) << 24)

/* The default floor: miniature caches hold at least this many entries. */
#define HS_SHARDS_DEFAULT_FLOOR 32u

/* The threshold T for a rate 0 < rate <= 1 (T / P rounded to the nearest
 * representable rate), or 0 when the rate is out of range or rounds to no
 * object at all. */
uint64_t hs_shards_threshold(double rate);
/* The rate a threshold really samples: T / P. */
double hs_shards_rate(uint64_t threshold);
/* The threshold to sample a cache of `entries` entries at: `threshold`,
 * or a higher one (up to P) that leaves its miniature `floor` entries;
 * floor 0 keeps `threshold` for every size (fixed-rate SHARDS). */
uint64_t hs_shards_threshold_for(uint64_t threshold, double entries, unsigned floor);
/* Whether dense object `obj` is in the sample of threshold T. */
bool hs_shards_keeps(uint32_t obj, uint64_t threshold);

/* A new trace of the requests of the sampled objects, in trace order, its
 * objects renumbered densely in order of first request; sizes and totals
 * are the sample's own, next-access times are filled when `t` has them.
 * Nothing is shared with `t` (free it with hs_sim_trace_free). An empty
 * sample (no object hashed below T) is HS_ERR_INVALID. */
hs_status hs_shards_sample(const hs_sim_trace *t, uint64_t threshold, hs_sim_trace **out);

/* The capacity to simulate over the sample for a cache of `size` over the
 * whole trace: size × T / P, rounded, at least 1. */
uint64_t hs_shards_scale_size(uint64_t size, uint64_t threshold);

/* Turns a run over `sample` into an estimate for the whole trace `full`:
 * requests become the whole trace's (known exactly), and bytes too
 * (counted as the run counted them: sizes, or one a request in object
 * mode); misses and byte misses are the sample's divided by the rate
 * (rounded, at most the requests or bytes). Dividing by the whole trace's
 * requests rather than by the sample's own is the paper's SHARDS_adj: a
 * sample that happens to hold more (or fewer) requests than R of them owes
 * that mostly to a popular object, whose requests are hits at nearly every
 * size, so the surplus is counted as hits, not spread over the curve. On a
 * Zipf(0.9) trace at R = 0.01 this takes the mean absolute error from 0.085
 * to 0.011. */
void hs_shards_scale_result(hs_sim_result *r, uint64_t threshold, const hs_sim_trace *sample,
                            const hs_sim_trace *full);

#endif
