/*
 * policy/ghost.c — see ghost.h.
 */
#include "policy/ghost.h"

#include <stdlib.h>

bool ghost_init(ghost_list *g, uint32_t max_entries, uint64_t max_units, uint64_t key_space) {
  if (max_entries == 0) max_entries = 1;
  g->keys = malloc(sizeof *g->keys * max_entries);
  g->sizes = malloc(sizeof *g->sizes * max_entries);
  g->links = malloc(sizeof *g->links * max_entries);
  g->map.slots = NULL;
  if (!g->keys || !g->sizes || !g->links ||
      !keymap_init(&g->map, max_entries, keymap_dense_space(key_space, max_entries))) {
    ghost_free(g);
    return false;
  }
  g->map.keys = g->keys;
  for (uint32_t i = 0; i < max_entries; i++)
    g->links[i].next = i + 1 < max_entries ? i + 1 : DL_NIL;
  g->free_head = 0;
  dl_init(&g->list);
  g->max_entries = max_entries;
  g->max_units = max_units;
  return true;
}

void ghost_free(ghost_list *g) {
  keymap_free(&g->map);
  free(g->keys);
  free(g->sizes);
  free(g->links);
  g->keys = NULL;
  g->sizes = NULL;
  g->links = NULL;
}

void ghost_remove(ghost_list *g, uint32_t e) {
  keymap_del(&g->map, e);
  dl_remove(&g->list, g->links, e, g->sizes[e]);
  g->links[e].next = g->free_head;
  g->free_head = e;
}

void ghost_drop_oldest(ghost_list *g) {
  if (g->list.tail != DL_NIL) ghost_remove(g, g->list.tail);
}

void ghost_trim_units(ghost_list *g, uint64_t units) {
  while (g->list.count && g->list.units > units) ghost_drop_oldest(g);
}

uint32_t ghost_add(ghost_list *g, uint64_t key, uint32_t size) {
  if (g->max_units && size > g->max_units) return KM_ABSENT;
  uint32_t old = ghost_find(g, key);
  if (old != KM_ABSENT) ghost_remove(g, old);
  if (g->free_head == DL_NIL) ghost_drop_oldest(g);
  if (g->max_units) ghost_trim_units(g, g->max_units - size);
  uint32_t e = g->free_head;
  g->free_head = g->links[e].next;
  g->keys[e] = key;
  g->sizes[e] = size;
  dl_push_head(&g->list, g->links, e, size);
  keymap_put(&g->map, e);
  return e;
}

size_t ghost_memory(const ghost_list *g) {
  return (size_t)g->max_entries * (sizeof *g->keys + sizeof *g->sizes + sizeof *g->links) +
         keymap_memory(&g->map);
}
