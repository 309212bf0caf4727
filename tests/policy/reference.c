/*
 * tests/policy/reference.c — the exact policies against slow, obviously right
 * reference implementations written here from their definitions: on random
 * traces the resident set must agree after every request, so the miss
 * counts do too. lru and fifo in object and byte mode, clock in object mode.
 */
#include "policy_driver.h"
#include "policy_sections.h"

#define NKEYS 500
#define NREQ  20000

typedef enum ref_kind { REF_LRU, REF_FIFO, REF_CLOCK } ref_kind;

/* The reference cache: an array ordered oldest first. */
typedef struct ref {
  ref_kind kind;
  uint64_t capacity, used;
  uint32_t n;
  uint32_t key[NKEYS];
  uint32_t size[NKEYS];
  bool bit[NKEYS];
} ref;

static int ref_find(const ref *c, uint32_t key) {
  for (uint32_t i = 0; i < c->n; i++)
    if (c->key[i] == key) return (int)i;
  return -1;
}

static void ref_delete(ref *c, uint32_t i) {
  c->used -= c->size[i];
  memmove(&c->key[i], &c->key[i + 1], (c->n - i - 1) * sizeof c->key[0]);
  memmove(&c->size[i], &c->size[i + 1], (c->n - i - 1) * sizeof c->size[0]);
  memmove(&c->bit[i], &c->bit[i + 1], (c->n - i - 1) * sizeof c->bit[0]);
  c->n--;
}

static void ref_append(ref *c, uint32_t key, uint32_t size, bool bit) {
  c->key[c->n] = key;
  c->size[c->n] = size;
  c->bit[c->n] = bit;
  c->n++;
  c->used += size;
}

static bool ref_access(ref *c, uint32_t key, uint32_t size) {
  int i = ref_find(c, key);
  if (i >= 0) {
    if (c->kind == REF_LRU) { /* move to the newest end */
      ref_delete(c, (uint32_t)i);
      ref_append(c, key, size, false);
    } else if (c->kind == REF_CLOCK) {
      c->bit[i] = true;
    }
    return true;
  }
  if (size > c->capacity) return false;
  while (c->used + size > c->capacity) {
    if (c->kind == REF_CLOCK && c->bit[0]) { /* second chance: to the back */
      uint32_t k = c->key[0], s = c->size[0];
      ref_delete(c, 0);
      ref_append(c, k, s, false);
      continue;
    }
    ref_delete(c, 0);
  }
  ref_append(c, key, size, false);
  return false;
}

static void compare(const char *spec, ref_kind kind, uint64_t capacity, bool bytes, uint64_t seed) {
  static uint32_t keys[NREQ];
  static uint32_t size_of[NKEYS];
  make_trace(keys, NREQ, NKEYS, seed);
  uint64_t r = seed * 7 + 1;
  for (uint32_t k = 0; k < NKEYS; k++) size_of[k] = bytes ? 1 + (uint32_t)(test_rand(&r) % 60) : 1;
  static ref c;
  memset(&c, 0, sizeof c);
  c.kind = kind;
  c.capacity = capacity;
  driver d;
  driver_init(&d, spec, capacity, NKEYS, NKEYS);
  uint64_t ref_misses = 0, mismatched_steps = 0;
  for (uint32_t i = 0; i < NREQ; i++) {
    bool hit_ref = ref_access(&c, keys[i], size_of[keys[i]]);
    bool hit = driver_access(&d, keys[i], size_of[keys[i]], HS_NEXT_UNKNOWN, HS_ACCESS_READ);
    ref_misses += !hit_ref;
    bool same = hit == hit_ref && c.n == hs_policy_resident(d.p);
    for (uint32_t j = 0; same && j < c.n; j++) same = driver_resident(&d, c.key[j]);
    if (!same && mismatched_steps++ == 0)
      fprintf(stderr, "%s (capacity %llu%s): differs from the reference at request %u\n", spec,
              (unsigned long long)capacity, bytes ? ", bytes" : "", i);
  }
  CHECK_EQ(mismatched_steps, 0);
  CHECK_EQ(d.misses, ref_misses);
  CHECK_EQ(d.violations, 0);
  driver_free(&d);
}

/* Hand-worked: capacity 3, requests 0 1 2 0 3 4 0.
 *   lru:   3 evicts 1 (0 was used again), 4 evicts 2, 0 hits      -> {0,3,4}
 *   fifo:  3 evicts 0 (first in), 4 evicts 1, 0 misses, evicts 2 -> {3,4,0}
 *   clock: 0's bit is set by its hit; 3: the hand clears 0 and moves on,
 *          evicts 1; 4 evicts 2; 0 hits                           -> {0,3,4} */
static void hand_worked(const char *spec, const bool want_hit[7], const uint32_t want_res[3]) {
  static const uint32_t reqs[7] = {0, 1, 2, 0, 3, 4, 0};
  driver d;
  driver_init(&d, spec, 3, 8, 8);
  for (int i = 0; i < 7; i++) {
    bool hit = driver_access(&d, reqs[i], 1, HS_NEXT_UNKNOWN, HS_ACCESS_READ);
    if (hit != want_hit[i]) fprintf(stderr, "%s: request %d (key %u)\n", spec, i, reqs[i]);
    CHECK_EQ(hit, want_hit[i]);
  }
  for (int k = 0; k < 3; k++) CHECK(driver_resident(&d, want_res[k]));
  CHECK_EQ(hs_policy_resident(d.p), 3);
  driver_free(&d);
}

static const bool lru_hits[7] = {0, 0, 0, 1, 0, 0, 1}, fifo_hits[7] = {0, 0, 0, 1, 0, 0, 0};
static const uint32_t lru_res[3] = {0, 3, 4}, fifo_res[3] = {3, 4, 0};

/* The hand-worked example, then the reference on random traces in object
 * and byte mode. */
static void test_lru(void) {
  hand_worked("lru", lru_hits, lru_res);
  for (uint64_t seed = 1; seed <= 3; seed++) {
    for (uint64_t cap = 1; cap <= 200; cap *= 3) {
      compare("lru", REF_LRU, cap, false, seed);
      compare("lru", REF_LRU, cap * 30, true, seed);
    }
  }
}

static void test_fifo(void) {
  hand_worked("fifo", fifo_hits, fifo_res);
  for (uint64_t seed = 1; seed <= 3; seed++) {
    for (uint64_t cap = 1; cap <= 200; cap *= 3) {
      compare("fifo", REF_FIFO, cap, false, seed);
      compare("fifo", REF_FIFO, cap * 30, true, seed);
    }
  }
}

static void test_clock(void) {
  hand_worked("clock", lru_hits, lru_res);
  for (uint64_t seed = 1; seed <= 3; seed++) {
    for (uint64_t cap = 1; cap <= 200; cap *= 3) {
      compare("clock", REF_CLOCK, cap, false, seed);
      compare("clock", REF_CLOCK, cap * 30, true, seed);
    }
  }
}

const policy_section reference_sections[] = {
    SECTION_ONE("lru", test_lru),
    SECTION_ONE("fifo", test_fifo),
    SECTION_ONE("clock", test_clock),
    SECTIONS_END,
};
