/*
 * policy/keymap.h — an index from 64-bit keys to the entries that hold them,
 * for the ghost (history) entries policies remember by key.
 *
 * The map stores only 32-bit entry numbers; the key of entry v is read from
 * the owner's own array, keys[v], which the owner fills in before putting v.
 * So the index costs 4 bytes a slot: open addressing with linear probing at
 * most 3/4 full (5–11 bytes per entry), backward-shift deletion (no
 * tombstones, so lookups stay short however many deletions happen). Keys are
 * mixed with a 64-bit finalizer, so sequential block numbers spread out.
 *
 * Dense mode: when the caller knows every key is below a bound small enough
 * (hs_policy_env.key_space: the simulator's object numbers), slots is a
 * direct array indexed by the key itself holding entry + 1 (0 = none), so
 * a lookup is one memory access and a deletion one store. The array is
 * calloc'd: only the pages keys land on are ever touched.
 */
#ifndef HOTSET_POLICY_KEYMAP_H
#define HOTSET_POLICY_KEYMAP_H

#include "core/hash.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KM_ABSENT UINT32_MAX

typedef struct keymap {
  uint32_t *slots;      /* entry numbers, KM_ABSENT = empty; dense: entry + 1
                           by key, 0 = empty */
  const uint64_t *keys; /* the owner's array: keys[entry] */
  uint32_t mask;
  uint32_t count, max_count;
  uint64_t dense_keys; /* dense mode: keys are below this; 0: hashed */
} keymap;

/* The most keys a dense map covers (64 MiB of slots): beyond it, hashing. */
#define KM_DENSE_MAX_KEYS ((uint64_t)1 << 24)
/* A dense map is worth its array when the keys are at most this many times
 * the entries it may hold (or few in all): a small cache over a big trace
 * keeps hashing, rather than 4 bytes per object for a handful of ghosts. */
#define KM_DENSE_RATIO  32
#define KM_DENSE_ANYWAY ((uint64_t)1 << 16)

/* The key_space to give keymap_init for a map of at most `max_entries`
 * entries over keys below `key_space` (hs_policy_env.key_space): itself
 * when a direct array pays, else 0 (hashing). */
static inline uint64_t keymap_dense_space(uint64_t key_space, uint64_t max_entries) {
  if (!key_space || key_space > KM_DENSE_MAX_KEYS) return 0;
  if (key_space <= KM_DENSE_ANYWAY || key_space / KM_DENSE_RATIO <= max_entries) return key_space;
  return 0;
}

/* Room for `max_entries` entries; the owner then sets m->keys to its array
 * of keys (keys[entry]) before the first put. `key_space` (0: hashed) makes
 * the map dense over keys below it: pass keymap_dense_space's answer. In a
 * dense map a key at or above it is never found, and putting it does
 * nothing (returns false). */
bool keymap_init(keymap *m, uint32_t max_entries, uint64_t key_space);
void keymap_free(keymap *m);
/* The entry holding `key`, or KM_ABSENT. */
uint32_t keymap_get(const keymap *m, uint64_t key);
/* Indexes entry v under keys[v]; false if the map is full. An entry with
 * the same key must not be indexed already. */
bool keymap_put(keymap *m, uint32_t v);
/* Removes entry v (indexed under keys[v]); false if it was not there. */
bool keymap_del(keymap *m, uint32_t v);
size_t keymap_memory(const keymap *m);

/* The slot `key` would be found at: its home in a hashed map. */
static inline const uint32_t *keymap_home(const keymap *m, uint64_t key) {
  if (!m->slots) return NULL; /* a map never made (a policy without ghosts) */
  if (m->dense_keys) return key < m->dense_keys ? &m->slots[key] : NULL;
  return &m->slots[(uint32_t)hs_mix64(key) & m->mask];
}

/* Starts fetching where `key` would be found into the CPU's cache, for a
 * lookup soon (hs_policy_prefetch): nothing else changes. */
static inline void keymap_prefetch(const keymap *m, uint64_t key) {
  const uint32_t *home = keymap_home(m, key);
  if (home) __builtin_prefetch(home);
}

#endif
