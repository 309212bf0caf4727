/*
 * sim/mrc.h — LRU's exact miss-ratio curve in one pass over a loaded trace.
 *
 * LRU has the inclusion property: a cache of s objects holds the s objects
 * most recently used. A request therefore hits at size s exactly when its
 * stack distance — the number of distinct objects requested since this
 * object's previous request — is below s; a first request misses at every
 * size. One pass that measures every request's distance gives the misses
 * at all sizes at once, equal to a separate `lru` simulation at each size
 * in object mode (every object counts 1).
 *
 * The distance is counted with a Fenwick tree over request positions in
 * which only each object's latest position is set: the distinct objects
 * since position p are the set positions after p. O(log n) a request,
 * 4 bytes a request for the tree and 8 an object for latest positions.
 */
#ifndef HOTSET_SIM_MRC_H
#define HOTSET_SIM_MRC_H

#include "hotset/status.h"
#include "sim/sim.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* Object-mode LRU at each of the n capacities (objects, each at least 1):
 * out[k] gets requests, misses, bytes (= requests) and byte misses
 * (= misses), as hs_sim_run(t, "lru", capacities[k], true, ...) would,
 * and in seconds the time of the one pass (the same for every k);
 * peak_ghosts and policy_bytes are 0 (no policy runs). `done`, if not
 * NULL, is bumped every 64 Ki requests. */
hs_status hs_mrc_lru(const hs_sim_trace *t, const uint64_t *capacities, size_t n,
                     _Atomic uint64_t *done, hs_sim_result *out);

#endif
