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
 */
#ifndef HOTSET_POLICY_KEYMAP_H
#define HOTSET_POLICY_KEYMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KM_ABSENT UINT32_MAX

typedef struct keymap {
  uint32_t *slots;      /* entry numbers, KM_ABSENT = empty */
  const uint64_t *keys; /* the owner's array: keys[entry] */
  uint32_t mask;
  uint32_t count, max_count;
} keymap;

/* Room for `max_entries` entries; the owner then sets m->keys to its array
 * of keys (keys[entry]) before the first put. */
bool keymap_init(keymap *m, uint32_t max_entries);
void keymap_free(keymap *m);
/* The entry holding `key`, or KM_ABSENT. */
uint32_t keymap_get(const keymap *m, uint64_t key);
/* Indexes entry v under keys[v]; false if the map is full. An entry with
 * the same key must not be indexed already. */
bool keymap_put(keymap *m, uint32_t v);
/* Removes entry v (indexed under keys[v]); false if it was not there. */
bool keymap_del(keymap *m, uint32_t v);
size_t keymap_memory(const keymap *m);

#endif
