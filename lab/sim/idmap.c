/*
 * sim/idmap.c — trace ids to dense object numbers (sim/idmap.h).
 *
 * Linear probing at a load factor of at most 3/4. A batch is mapped in
 * chunks: the chunk's home slots are hashed first, then each lookup
 * prefetches the home slot of the lookup PREFETCH_AHEAD places later, so
 * that by the time a lookup runs its cache line is (usually) on its way.
 * Nothing else about the order changes: ids are looked up, and new ones
 * numbered, strictly in the order given.
 */
#include "sim/idmap.h"

#include "core/big_alloc.h"

#include <stdlib.h>

/* Lookups in flight: enough to cover a memory access at the rate the loop
 * retires them; more only pollutes the cache. */
#define PREFETCH_AHEAD 32
#define CHUNK          1024

static bool alloc_slots(hs_idmap *m, uint64_t nslots) {
  hs_idmap_slot *s = malloc(sizeof *s * nslots);
  if (!s) return false;
  big_advise_huge(s, sizeof *s * nslots);
  for (uint64_t i = 0; i < nslots; i++) s[i].dense = HS_IDMAP_EMPTY;
  m->slots = s;
  m->mask = nslots - 1;
  return true;
}

/* Slots needed for `ids` ids at a load factor of at most 3/4. */
static uint64_t slots_for(uint64_t ids) {
  uint64_t n = 1u << 10;
  while (n / 4 * 3 < ids) n *= 2;
  return n;
}

bool hs_idmap_init(hs_idmap *m, uint64_t expected) {
  m->count = 0;
  return alloc_slots(m, slots_for(expected));
}

bool hs_idmap_reserve(hs_idmap *m, uint64_t more) {
  uint64_t want = slots_for(m->count + more);
  if (want <= m->mask + 1) return true;
  hs_idmap bigger = {.count = m->count};
  if (!alloc_slots(&bigger, want)) return false;
  for (uint64_t i = 0; i <= m->mask; i++) {
    const hs_idmap_slot *s = &m->slots[i];
    if (s->dense == HS_IDMAP_EMPTY) continue;
    uint64_t j = hs_idmap_hash(s->id) & bigger.mask;
    while (bigger.slots[j].dense != HS_IDMAP_EMPTY) j = (j + 1) & bigger.mask;
    bigger.slots[j] = *s;
  }
  free(m->slots);
  *m = bigger;
  return true;
}

/* Looks up (or numbers) reqs[i].id, i < k, whose home slots are home[i]:
 * the home slot of the lookup PREFETCH_AHEAD places on is fetched first.
 * Returns how many were mapped (k, or fewer at HS_IDMAP_MAX_IDS). */
static size_t map_chunk(hs_idmap *m, const hs_request *reqs, const uint64_t *home, size_t k,
                        uint32_t *out) {
  hs_idmap_slot *slots = m->slots;
  const uint64_t mask = m->mask;
  for (size_t i = 0; i < k && i < PREFETCH_AHEAD; i++)
    __builtin_prefetch(&slots[home[i] & mask], 1);
  for (size_t i = 0; i < k; i++) {
    if (i + PREFETCH_AHEAD < k) __builtin_prefetch(&slots[home[i + PREFETCH_AHEAD] & mask], 1);
    uint64_t id = reqs[i].id;
    uint64_t j = home[i] & mask;
    while (slots[j].dense != HS_IDMAP_EMPTY && slots[j].id != id) j = (j + 1) & mask;
    hs_idmap_slot *s = &slots[j];
    if (s->dense == HS_IDMAP_EMPTY) {
      if (m->count == HS_IDMAP_MAX_IDS) return i;
      s->id = id;
      s->dense = (uint32_t)m->count++;
      s->seen = 0;
    }
    s->seen += s->seen < 2;
    out[i] = s->dense;
  }
  return k;
}

size_t hs_idmap_map(hs_idmap *m, const hs_request *reqs, size_t n, uint32_t *out) {
  uint64_t home[CHUNK];
  for (size_t base = 0; base < n; base += CHUNK) {
    size_t k = n - base < CHUNK ? n - base : CHUNK;
    for (size_t i = 0; i < k; i++) home[i] = hs_idmap_hash(reqs[base + i].id);
    size_t done = map_chunk(m, reqs + base, home, k, out + base);
    if (done < k) return base + done;
  }
  return n;
}

size_t hs_idmap_map_hashed(hs_idmap *m, const hs_request *reqs, const uint64_t *hash, size_t n,
                           uint32_t *out) {
  return map_chunk(m, reqs, hash, n, out);
}

bool hs_idmap_add(hs_idmap *m, uint64_t id) {
  if (!hs_idmap_reserve(m, 1)) return false;
  hs_request one = {.id = id};
  uint32_t dense;
  return hs_idmap_map(m, &one, 1, &dense) == 1;
}

uint64_t hs_idmap_seen_once(const hs_idmap *m) {
  uint64_t once = 0;
  for (uint64_t i = 0; i <= m->mask; i++)
    once += m->slots[i].dense != HS_IDMAP_EMPTY && m->slots[i].seen == 1;
  return once;
}

void hs_idmap_free(hs_idmap *m) {
  free(m->slots);
  m->slots = NULL;
}
