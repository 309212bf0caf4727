/*
 * policy/ghost.h — a bounded history of evicted keys, newest first.
 *
 * What 2Q keeps in A1out, S3-FIFO in its ghost queue and twolist as its
 * shadow entries: keys (and sizes) of entries that were evicted, found again
 * by key when they come back, forgotten oldest-first when the list exceeds
 * its bound in entries or in units. 20 bytes per entry (key, size, links)
 * plus the key index (5–11 bytes). ARC and CAR, whose two ghost lists share
 * one store, use ghost_dir.h instead.
 */
#ifndef HOTSET_POLICY_GHOST_H
#define HOTSET_POLICY_GHOST_H

#include "policy/dlist.h"
#include "policy/keymap.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ghost_list {
  uint64_t *keys;
  uint32_t *sizes;
  dl_node *links; /* list links; free entries chain through .next */
  keymap map;
  dl_list list; /* head: newest */
  uint32_t free_head;
  uint32_t max_entries;
  uint64_t max_units; /* bound in units; 0 = bounded by entries only */
} ghost_list;

bool ghost_init(ghost_list *g, uint32_t max_entries, uint64_t max_units, uint64_t key_space);
void ghost_free(ghost_list *g);
/* The entry remembering `key`, or KM_ABSENT. */
static inline uint32_t ghost_find(const ghost_list *g, uint64_t key) {
  return g->list.count ? keymap_get(&g->map, key) : KM_ABSENT;
}
/* Remembers key as the newest entry, forgetting the oldest ones while a
 * bound is exceeded, and returns that entry; an entry larger than
 * max_units is not kept (KM_ABSENT). */
uint32_t ghost_add(ghost_list *g, uint64_t key, uint32_t size);
/* Forgets entry e (from ghost_find). */
void ghost_remove(ghost_list *g, uint32_t e);
/* Forgets the oldest entry, if any. */
void ghost_drop_oldest(ghost_list *g);
/* Shrinks to at most `units` (bytes or pages), oldest first. */
void ghost_trim_units(ghost_list *g, uint64_t units);
static inline uint32_t ghost_count(const ghost_list *g) {
  return g->list.count;
}
static inline uint64_t ghost_units(const ghost_list *g) {
  return g->list.units;
}
size_t ghost_memory(const ghost_list *g);

#endif
