/*
 * sim/idmap.h — trace ids to dense object numbers, for loading a trace.
 *
 * A trace names objects by 64-bit ids; the simulator indexes arrays by
 * dense numbers 0 .. objects-1, given in order of first appearance (so the
 * numbering depends only on the trace, never on the table's layout). The
 * map is an open-addressing table of 16-byte slots, id, number and a
 * request count side by side, so a lookup costs one cache line; lookups
 * come in batches whose slots are prefetched some requests ahead, since on
 * a big trace nearly every lookup misses the CPU's caches and the loader
 * would otherwise wait on memory once per request.
 */
#ifndef HOTSET_SIM_IDMAP_H
#define HOTSET_SIM_IDMAP_H

#include "core/hash.h"
#include "sim/trace.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct hs_idmap_slot {
  uint64_t id;
  uint32_t dense; /* HS_IDMAP_EMPTY: the slot is free */
  uint32_t seen;  /* requests of the object, saturating at 2: only "once"
                     is asked (hs_idmap_seen_once) */
} hs_idmap_slot;

#define HS_IDMAP_EMPTY UINT32_MAX
/* The most ids a map numbers: the numbers stay below UINT32_MAX - 1, as
 * the simulator's arrays of uint32_t (and their "none" values) need. */
#define HS_IDMAP_MAX_IDS ((uint64_t)UINT32_MAX - 1)

typedef struct hs_idmap {
  hs_idmap_slot *slots;
  uint64_t mask;  /* slots - 1; slots is a power of two */
  uint64_t count; /* ids mapped: the next new id gets this number */
} hs_idmap;

/* An empty map with room for about `expected` ids before it grows. False
 * if out of memory. */
bool hs_idmap_init(hs_idmap *m, uint64_t expected);
/* Makes room for `more` new ids without growing inside hs_idmap_map
 * (which must not move slots it has prefetched). False if out of memory;
 * the map is unchanged then. */
bool hs_idmap_reserve(hs_idmap *m, uint64_t more);
/* The hash hs_idmap_map places `id` by: callers that have a spare thread
 * compute it there (hs_idmap_map then only probes the table). */
static inline uint64_t hs_idmap_hash(uint64_t id) {
  return hs_mix64(id);
}

/* Maps the ids of reqs[0 .. n-1] to out[0 .. n-1], numbering new ids
 * count, count+1, ... as they first appear. hs_idmap_reserve(m, n) must
 * have succeeded first. An id is new exactly when its number is the count
 * before it was mapped: that is how a caller sees first appearances.
 * Returns how many were mapped: n, or fewer when the next one would be
 * new with HS_IDMAP_MAX_IDS ids already numbered. */
size_t hs_idmap_map(hs_idmap *m, const hs_request *reqs, size_t n, uint32_t *out);
/* The same, with hash[i] = hs_idmap_hash(reqs[i].id) given. */
size_t hs_idmap_map_hashed(hs_idmap *m, const hs_request *reqs, const uint64_t *hash, size_t n,
                           uint32_t *out);
/* Numbers one id (reserving room first). False if out of memory. */
bool hs_idmap_add(hs_idmap *m, uint64_t id);
/* Objects mapped exactly once. */
uint64_t hs_idmap_seen_once(const hs_idmap *m);
void hs_idmap_free(hs_idmap *m);

#endif
