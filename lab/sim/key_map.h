/*
 * sim/key_map.h — a map from 64-bit keys to 32-bit values.
 *
 * Open addressing with linear probing over a power-of-two table, grown to
 * twice its size when half full, so a probe stays short whatever the keys
 * (they are mixed with hs_mix64 first: trace ids are often sequential).
 * Values are the caller's; KEY_MAP_EMPTY marks a free place, so it is no
 * value. Used where ids are numbered or counted once per request of a
 * trace: the replay's layout and pids, the scans of the ring rule.
 */
#ifndef HOTSET_LAB_KEY_MAP_H
#define HOTSET_LAB_KEY_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KEY_MAP_EMPTY UINT32_MAX

typedef struct key_map {
  uint64_t *keys;
  uint32_t *vals; /* KEY_MAP_EMPTY: the place is free */
  size_t cap;     /* a power of two */
  size_t n;       /* keys held */
} key_map;

/* An empty map of `cap` places (a power of two); false when out of
 * memory (then key_map_free is still safe). */
bool key_map_init(key_map *m, size_t cap);
void key_map_free(key_map *m);
/* The value of `key`, or NULL if it is not there. */
uint32_t *key_map_find(const key_map *m, uint64_t key);
/* The value of `key`, inserted holding KEY_MAP_EMPTY (which the caller
 * overwrites) if missing; NULL when out of memory. */
uint32_t *key_map_place(key_map *m, uint64_t key);

#endif
