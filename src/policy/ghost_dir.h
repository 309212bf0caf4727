/*
 * policy/ghost_dir.h — one growable store of ghost keys for several ghost
 * lists, as ARC's and CAR's B1 and B2 need.
 *
 * ghost.h keeps one list in a fixed array; B1 and B2 each may need up to c
 * entries but together never more than about c (pages) or 2c (units), so
 * two such lists would cost twice the memory. Here the entries of all the
 * lists share one array and one key index, and each entry records which
 * list it is on (1..255, 0 = free); the lists themselves are dl_lists the
 * owner keeps, threaded through `links`. The store starts with room for
 * `initial` entries and doubles, up to `max` (rebuilding the key index), when
 * an add finds no free entry; at `max` (or out of memory) gd_room() says no
 * and the owner drops an entry of its choice first.
 *
 * 21 bytes per entry (key, size, links, list) plus the key index (5–11).
 */
#ifndef HOTSET_POLICY_GHOST_DIR_H
#define HOTSET_POLICY_GHOST_DIR_H

#include "policy/dlist.h"
#include "policy/keymap.h"

#include <stdbool.h>
#include <stdlib.h>

typedef struct ghost_dir {
  uint64_t *keys;
  uint32_t *sizes;
  dl_node *links; /* list links; free entries chain through .next */
  uint8_t *list;  /* which list an entry is on, 0 = free */
  keymap map;     /* entry e indexed under keys[e] */
  uint32_t cap, max, free_head, used;
} ghost_dir;

static inline void gd_free(ghost_dir *g) {
  keymap_free(&g->map);
  free(g->keys);
  free(g->sizes);
  free(g->links);
  free(g->list);
  g->keys = NULL;
  g->sizes = NULL;
  g->links = NULL;
  g->list = NULL;
}

/* Chains entries from .. cap-1 as free (they are unused). */
static inline void gd_chain_free(ghost_dir *g, uint32_t from) {
  for (uint32_t e = g->cap; e-- > from;) {
    g->list[e] = 0;
    g->links[e].next = g->free_head;
    g->free_head = e;
  }
}

static inline bool gd_init(ghost_dir *g, uint32_t initial, uint32_t max, uint64_t key_space) {
  if (initial == 0) initial = 1;
  if (max < initial) max = initial;
  g->keys = malloc(sizeof *g->keys * initial);
  g->sizes = malloc(sizeof *g->sizes * initial);
  g->links = malloc(sizeof *g->links * initial);
  g->list = malloc(sizeof *g->list * initial);
  g->map.slots = NULL;
  if (!g->keys || !g->sizes || !g->links || !g->list ||
      !keymap_init(&g->map, initial, keymap_dense_space(key_space, max))) {
    gd_free(g);
    return false;
  }
  g->map.keys = g->keys;
  g->cap = initial;
  g->max = max;
  g->used = 0;
  g->free_head = DL_NIL;
  gd_chain_free(g, 0);
  return true;
}

/* The entry remembering `key`, or KM_ABSENT. */
static inline uint32_t gd_find(const ghost_dir *g, uint64_t key) {
  return g->used ? keymap_get(&g->map, key) : KM_ABSENT;
}

/* Doubles the store (up to max); false if it cannot. */
static inline bool gd_grow(ghost_dir *g) {
  if (g->cap >= g->max) return false;
  uint32_t ncap = g->cap > g->max / 2 ? g->max : 2 * g->cap;
  uint64_t *keys = realloc(g->keys, sizeof *keys * ncap);
  if (keys) g->keys = keys;
  uint32_t *sizes = keys ? realloc(g->sizes, sizeof *sizes * ncap) : NULL;
  if (sizes) g->sizes = sizes;
  dl_node *links = sizes ? realloc(g->links, sizeof *links * ncap) : NULL;
  if (links) g->links = links;
  uint8_t *list = links ? realloc(g->list, sizeof *list * ncap) : NULL;
  if (list) g->list = list;
  g->map.keys = g->keys; /* the keys may have moved */
  if (!list) return false;
  if (g->map.dense_keys) {
    g->map.max_count = ncap; /* indexed by key: nothing moves */
  } else {
    keymap map;
    map.slots = NULL;
    if (!keymap_init(&map, ncap, 0)) return false;
    map.keys = g->keys;
    for (uint32_t e = 0; e < g->cap; e++)
      if (g->list[e]) keymap_put(&map, e);
    keymap_free(&g->map);
    g->map = map;
  }
  uint32_t old = g->cap;
  g->cap = ncap;
  gd_chain_free(g, old);
  return true;
}

/* True if an add will find a free entry (growing if need be). */
static inline bool gd_room(ghost_dir *g) {
  return g->free_head != DL_NIL || gd_grow(g);
}

/* Forgets entry e, which is on list `l`. */
static inline void gd_forget(ghost_dir *g, dl_list *l, uint32_t e) {
  keymap_del(&g->map, e);
  dl_remove(l, g->links, e, g->sizes[e]);
  g->list[e] = 0;
  g->links[e].next = g->free_head;
  g->free_head = e;
  g->used--;
}

/* Remembers `key` as the newest entry of list `l` (number `id`); there must
 * be room (gd_room) and the key must not be remembered already. */
static inline void gd_add(ghost_dir *g, dl_list *l, uint8_t id, uint64_t key, uint32_t size) {
  uint32_t e = g->free_head;
  g->free_head = g->links[e].next;
  g->keys[e] = key;
  g->sizes[e] = size;
  g->list[e] = id;
  dl_push_head(l, g->links, e, size);
  keymap_put(&g->map, e);
  g->used++;
}

/* ---- B1 and B2: the two ghost lists ARC and CAR keep in one directory --- */

/* List numbers ARC and CAR give their ghost lists (after T1 = 1, T2 = 2). */
enum { GD_B1 = 3, GD_B2 = 4 };

/* Forgets entry e, on whichever of B1 and B2 holds it. */
static inline void gd_forget_b(ghost_dir *g, dl_list *b1, dl_list *b2, uint32_t e) {
  gd_forget(g, g->list[e] == GD_B1 ? b1 : b2, e);
}

/* Forgets the oldest entry of `l` (B1 or B2), if any. */
static inline void gd_drop_lru_b(ghost_dir *g, dl_list *b1, dl_list *b2, dl_list *l) {
  if (l->tail != DL_NIL) gd_forget_b(g, b1, b2, l->tail);
}

/* Remembers `key` as the newest entry of B1 or B2 (`which`). If the
 * directory is at its bound (only in byte mode or after removals), first
 * drops early the key the algorithm would discard next: B1's oldest when
 * T1 + B1 fill the cache, else B2's. */
static inline void gd_add_b(ghost_dir *g, dl_list *b1, dl_list *b2, uint64_t t1_units,
                            uint64_t capacity, uint64_t key, uint32_t size, uint8_t which) {
  uint32_t old = gd_find(g, key);
  if (old != KM_ABSENT) gd_forget_b(g, b1, b2, old);
  if (!gd_room(g)) {
    bool from_b1 = b1->count && (!b2->count || t1_units + b1->units >= capacity);
    gd_drop_lru_b(g, b1, b2, from_b1 ? b1 : b2);
  }
  gd_add(g, which == GD_B1 ? b1 : b2, which, key, size);
}

static inline size_t gd_memory(const ghost_dir *g) {
  return (size_t)g->cap *
             (sizeof *g->keys + sizeof *g->sizes + sizeof *g->links + sizeof *g->list) +
         keymap_memory(&g->map);
}

#endif
