/*
 * sim/key_map.c — a map from 64-bit keys to 32-bit values (key_map.h).
 */
#include "sim/key_map.h"

#include "core/hash.h"

#include <stdlib.h>
#include <string.h>

bool key_map_init(key_map *m, size_t cap) {
  m->cap = cap;
  m->n = 0;
  m->keys = malloc(cap * sizeof *m->keys);
  m->vals = malloc(cap * sizeof *m->vals);
  if (!m->keys || !m->vals) return false;
  memset(m->vals, 0xff, cap * sizeof *m->vals);
  return true;
}

void key_map_free(key_map *m) {
  free(m->keys);
  free(m->vals);
  m->keys = NULL;
  m->vals = NULL;
}

uint32_t *key_map_find(const key_map *m, uint64_t key) {
  size_t mask = m->cap - 1;
  for (size_t i = hs_mix64(key) & mask;; i = (i + 1) & mask) {
    if (m->vals[i] == KEY_MAP_EMPTY) return NULL;
    if (m->keys[i] == key) return &m->vals[i];
  }
}

uint32_t *key_map_place(key_map *m, uint64_t key) {
  if ((m->n + 1) * 2 > m->cap) {
    key_map bigger;
    if (!key_map_init(&bigger, m->cap * 2)) {
      key_map_free(&bigger);
      return NULL;
    }
    for (size_t i = 0; i < m->cap; i++)
      if (m->vals[i] != KEY_MAP_EMPTY) *key_map_place(&bigger, m->keys[i]) = m->vals[i];
    key_map_free(m);
    *m = bigger;
  }
  size_t mask = m->cap - 1;
  size_t i = hs_mix64(key) & mask;
  for (; m->vals[i] != KEY_MAP_EMPTY; i = (i + 1) & mask)
    if (m->keys[i] == key) return &m->vals[i];
  m->keys[i] = key;
  m->n++;
  return &m->vals[i];
}
