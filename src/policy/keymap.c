/*
 * policy/keymap.c — see keymap.h.
 */
#include "policy/keymap.h"

#include "core/hash.h"

#include <stdlib.h>

static inline uint32_t km_home(const keymap *m, uint64_t k) {
  return (uint32_t)hs_mix64(k) & m->mask;
}

bool keymap_init(keymap *m, uint32_t max_entries, uint64_t key_space) {
  m->keys = NULL;
  m->count = 0;
  m->max_count = max_entries;
  m->mask = 0;
  m->dense_keys = 0;
  if (key_space) {
    m->slots = calloc(key_space, sizeof *m->slots);
    if (!m->slots) return false;
    m->dense_keys = key_space;
    return true;
  }
  uint64_t want = (uint64_t)(max_entries ? max_entries : 1) * 4 / 3 + 1;
  uint64_t cap = 8;
  while (cap < want) cap <<= 1;
  m->slots = cap <= (1ull << 32) ? malloc(sizeof *m->slots * cap) : NULL;
  if (!m->slots) return false;
  for (uint64_t i = 0; i < cap; i++) m->slots[i] = KM_ABSENT;
  m->mask = (uint32_t)(cap - 1);
  return true;
}

void keymap_free(keymap *m) {
  free(m->slots);
  m->slots = NULL;
}

uint32_t keymap_get(const keymap *m, uint64_t key) {
  if (m->dense_keys) return key < m->dense_keys ? m->slots[key] - 1 : KM_ABSENT; /* 0 - 1: absent */
  for (uint32_t i = km_home(m, key);; i = (i + 1) & m->mask) {
    uint32_t v = m->slots[i];
    if (v == KM_ABSENT || m->keys[v] == key) return v;
  }
}

bool keymap_put(keymap *m, uint32_t v) {
  if (m->count >= m->max_count) return false;
  if (m->dense_keys) {
    uint64_t k = m->keys[v];
    if (k >= m->dense_keys) return false;
    m->slots[k] = v + 1;
    m->count++;
    return true;
  }
  uint32_t i = km_home(m, m->keys[v]);
  while (m->slots[i] != KM_ABSENT) i = (i + 1) & m->mask;
  m->slots[i] = v;
  m->count++;
  return true;
}

bool keymap_del(keymap *m, uint32_t v) {
  if (m->dense_keys) {
    uint64_t k = m->keys[v];
    if (k >= m->dense_keys || m->slots[k] != v + 1) return false;
    m->slots[k] = 0;
    m->count--;
    return true;
  }
  uint32_t i = km_home(m, m->keys[v]);
  while (m->slots[i] != v) {
    if (m->slots[i] == KM_ABSENT) return false;
    i = (i + 1) & m->mask;
  }
  /* Backward shift: pull later members of the probe run into the hole when
   * their home position allows it, so no tombstone is needed. */
  uint32_t hole = i;
  for (uint32_t j = (i + 1) & m->mask; m->slots[j] != KM_ABSENT; j = (j + 1) & m->mask) {
    uint32_t home = km_home(m, m->keys[m->slots[j]]);
    /* The entry at j may fill the hole unless its home lies in (hole, j]. */
    bool home_after_hole = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
    if (!home_after_hole) {
      m->slots[hole] = m->slots[j];
      hole = j;
    }
  }
  m->slots[hole] = KM_ABSENT;
  m->count--;
  return true;
}

size_t keymap_memory(const keymap *m) {
  return (m->dense_keys ? m->dense_keys : (size_t)m->mask + 1) * sizeof *m->slots;
}
