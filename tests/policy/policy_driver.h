/*
 * tests/policy/policy_driver.h — a minimal cache simulator around one policy, for
 * the policy tests: keys are small integers, slots come from a free stack,
 * a set of pinned slots can be kept, and every step checks the contract
 * (capacity, victims resident and unpinned, counts agreeing).
 */
#ifndef HOTSET_TESTS_POLICY_DRIVER_H
#define HOTSET_TESTS_POLICY_DRIVER_H

#include "check.h"
#include "hotset/policy.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct driver {
  hs_policy *p;
  uint32_t nkeys, nslots;
  int64_t *slot_of; /* key -> slot or -1 */
  int64_t *key_of;  /* slot -> key or -1 */
  uint32_t *free_stack;
  uint32_t nfree;
  bool *pinned; /* by slot */
  uint64_t requests, misses, violations;
  uint64_t now;
  hs_access_hint hint; /* the hint driver_access passes (HS_HINT_NORMAL unless set) */
  /* Told the key of every victim the policy names, before it is evicted, or
   * -1 when it names none (or a slot that is not resident): for the
   * reference tests, which compare victims one by one. */
  void (*on_victim)(void *ctx, int64_t key);
  void *on_victim_ctx;
} driver;

static bool driver_is_pinned(void *ctx, uint32_t slot) {
  driver *d = ctx;
  return d->pinned[slot];
}

/* driver_init with the caller's facts given to the policy (NULL: none). */
static inline void driver_init_env(driver *d, const char *spec, uint64_t capacity, uint32_t nslots,
                                   uint32_t nkeys, const hs_policy_env *env) {
  memset(d, 0, sizeof *d);
  hs_status st = hs_policy_create(spec, capacity, nslots, env, &d->p);
  if (st != HS_OK) {
    fprintf(stderr, "hs_policy_create(%s): %s\n", spec, hs_last_error());
    exit(1);
  }
  d->nkeys = nkeys;
  d->nslots = nslots;
  d->slot_of = malloc(sizeof *d->slot_of * nkeys);
  d->key_of = malloc(sizeof *d->key_of * nslots);
  d->free_stack = malloc(sizeof *d->free_stack * nslots);
  d->pinned = calloc(nslots, sizeof *d->pinned);
  for (uint32_t k = 0; k < nkeys; k++) d->slot_of[k] = -1;
  for (uint32_t s = 0; s < nslots; s++) {
    d->key_of[s] = -1;
    d->free_stack[s] = nslots - 1 - s; /* slot 0 is handed out first */
  }
  d->nfree = nslots;
}

static inline void driver_init(driver *d, const char *spec, uint64_t capacity, uint32_t nslots,
                               uint32_t nkeys) {
  driver_init_env(d, spec, capacity, nslots, nkeys, NULL);
}

static inline void driver_free(driver *d) {
  hs_policy_destroy(d->p);
  free(d->slot_of);
  free(d->key_of);
  free(d->free_stack);
  free(d->pinned);
}

static inline void driver_violation(driver *d, const char *what, uint64_t a, uint64_t b) {
  if (d->violations++ < 5)
    fprintf(stderr, "%s: request %llu: %s (%llu, %llu)\n", hs_policy_spec(d->p),
            (unsigned long long)d->requests, what, (unsigned long long)a, (unsigned long long)b);
}

/* One request. Returns true on a hit. `next` is the request number of the
 * key's next access (HS_NEXT_NEVER if none), for belady. */
static inline bool driver_access(driver *d, uint32_t key, uint32_t size, int64_t next,
                                 hs_access_kind kind) {
  hs_access a = {
      .key = key, .size = size, .now = d->now++, .next = next, .kind = kind, .hint = d->hint};
  d->requests++;
  int64_t slot = d->slot_of[key];
  if (slot >= 0) {
    hs_policy_hit(d->p, (uint32_t)slot, &a);
    return true;
  }
  d->misses++;
  if (size > hs_policy_capacity(d->p)) return false; /* never admitted */
  while (hs_policy_used(d->p) + size > hs_policy_capacity(d->p) || d->nfree == 0) {
    int64_t v = hs_policy_victim(d->p, &a, driver_is_pinned, d);
    if (d->on_victim)
      d->on_victim(d->on_victim_ctx, v >= 0 && (uint64_t)v < d->nslots ? d->key_of[v] : -1);
    if (v < 0) {
      /* Only allowed when nothing unpinned is resident. */
      for (uint32_t s = 0; s < d->nslots; s++)
        if (d->key_of[s] >= 0 && !d->pinned[s]) {
          driver_violation(d, "no victim though an unpinned slot is resident", s, 0);
          break;
        }
      return false;
    }
    if ((uint64_t)v >= d->nslots || d->key_of[v] < 0) {
      driver_violation(d, "victim is not a resident slot", (uint64_t)v, 0);
      return false;
    }
    if (d->pinned[v]) driver_violation(d, "victim is pinned", (uint64_t)v, 0);
    hs_policy_evict(d->p, (uint32_t)v);
    d->slot_of[d->key_of[v]] = -1;
    d->key_of[v] = -1;
    d->free_stack[d->nfree++] = (uint32_t)v;
  }
  uint32_t s = d->free_stack[--d->nfree];
  if (hs_policy_insert(d->p, s, &a) != HS_OK) {
    driver_violation(d, "insert refused", s, size);
    d->free_stack[d->nfree++] = s;
    return false;
  }
  d->slot_of[key] = s;
  d->key_of[s] = key;
  if (hs_policy_used(d->p) > hs_policy_capacity(d->p))
    driver_violation(d, "over capacity", hs_policy_used(d->p), hs_policy_capacity(d->p));
  if (hs_policy_resident(d->p) != d->nslots - d->nfree)
    driver_violation(d, "resident count disagrees", hs_policy_resident(d->p), d->nslots - d->nfree);
  return false;
}

/* One access of unit size with the ring hint (a scan's buffer ring); any
 * broken rule of the policy during it stops the test at once. */
static inline bool driver_access_ring(driver *d, uint32_t key) {
  hs_access_hint saved = d->hint;
  uint64_t violations = d->violations;
  d->hint = HS_HINT_RING;
  bool hit = driver_access(d, key, 1, HS_NEXT_UNKNOWN, HS_ACCESS_READ);
  d->hint = saved;
  REQUIRE(d->violations == violations);
  return hit;
}

/* A resident key leaves without being a victim (hs_policy_remove: a dropped
 * relation in the pool). */
static inline void driver_remove(driver *d, uint32_t key) {
  int64_t s = d->slot_of[key];
  REQUIRE(s >= 0);
  hs_policy_remove(d->p, (uint32_t)s);
  d->slot_of[key] = -1;
  d->key_of[s] = -1;
  d->pinned[s] = false;
  d->free_stack[d->nfree++] = (uint32_t)s;
}

static inline bool driver_resident(const driver *d, uint32_t key) {
  return d->slot_of[key] >= 0;
}

/* The standing (hotset/policy.h) of a key that must be resident. */
static inline uint32_t driver_standing(const driver *d, uint32_t key) {
  REQUIRE(driver_resident(d, key));
  return hs_policy_standing(d->p, (uint32_t)d->slot_of[key]);
}

/* The resident keys are exactly `keys` (n of them). */
static inline bool driver_resident_exactly(const driver *d, const uint32_t *keys, uint32_t n) {
  if (hs_policy_resident(d->p) != n) return false;
  for (uint32_t i = 0; i < n; i++)
    if (!driver_resident(d, keys[i])) return false;
  return true;
}
#define RESIDENT(d, ...)                                                                           \
  CHECK(driver_resident_exactly(d, (const uint32_t[]){__VA_ARGS__},                                \
                                sizeof((const uint32_t[]){__VA_ARGS__}) / sizeof(uint32_t)))

/* splitmix64: the tests' deterministic random numbers. */
static inline uint64_t test_rand(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

/* A trace mixing a skewed hot set, uniform noise and sequential scans. */
static inline void make_trace(uint32_t *keys, uint32_t n, uint32_t nkeys, uint64_t seed) {
  uint64_t r = seed;
  uint32_t scan_pos = 0, scan_left = 0;
  for (uint32_t i = 0; i < n; i++) {
    uint64_t x = test_rand(&r);
    if (scan_left) {
      keys[i] = scan_pos++ % nkeys;
      scan_left--;
    } else if (x % 2000 == 0) { /* about a quarter of the requests are scans */
      scan_pos = (uint32_t)(x >> 32) % nkeys;
      scan_left = nkeys / 4;
      keys[i] = scan_pos++ % nkeys;
    } else if (x % 100 < 70) {
      keys[i] = (uint32_t)((x >> 16) % (nkeys / 10 + 1)); /* hot tenth */
    } else {
      keys[i] = (uint32_t)((x >> 16) % nkeys);
    }
  }
}

/* next[i] = index of the next request for keys[i], or HS_NEXT_NEVER. */
static inline void make_next(const uint32_t *keys, int64_t *next, uint32_t n, uint32_t nkeys) {
  int64_t *last = malloc(sizeof *last * nkeys);
  for (uint32_t k = 0; k < nkeys; k++) last[k] = HS_NEXT_NEVER;
  for (uint32_t i = n; i-- > 0;) {
    next[i] = last[keys[i]];
    last[keys[i]] = i;
  }
  free(last);
}

/* Lock-free hits racing misses, for policies flagged HS_POLICY_CONCURRENT_HIT:
 * `nthreads` threads hit random slots while this thread drives `nreqs`
 * requests through the driver (two of three over twice the slots, the third
 * over all `nkeys`). Meant to run under ThreadSanitizer. */
typedef struct driver_hitter {
  hs_policy *p;
  uint32_t nslots;
  uint64_t seed;
} driver_hitter;

static inline void *driver_hit_loop(void *arg) {
  driver_hitter *h = arg;
  uint64_t r = h->seed;
  hs_access a = {.size = 1, .next = HS_NEXT_UNKNOWN};
  for (int i = 0; i < 200000; i++) {
    uint32_t slot = (uint32_t)(test_rand(&r) % h->nslots);
    a.key = slot;
    hs_policy_hit(h->p, slot, &a);
  }
  return NULL;
}

static inline void driver_race_hits(driver *d, int nthreads, uint32_t nreqs) {
  enum { MAX_HITTERS = 16 };
  pthread_t t[MAX_HITTERS];
  driver_hitter h[MAX_HITTERS];
  if (nthreads > MAX_HITTERS) nthreads = MAX_HITTERS;
  for (int i = 0; i < nthreads; i++) {
    h[i] = (driver_hitter){.p = d->p, .nslots = d->nslots, .seed = 11u + (uint64_t)i};
    REQUIRE(pthread_create(&t[i], NULL, driver_hit_loop, &h[i]) == 0);
  }
  uint64_t r = 5;
  for (uint32_t i = 0; i < nreqs; i++) {
    uint32_t key = (uint32_t)(test_rand(&r) % (i % 3 ? d->nslots * 2 : d->nkeys));
    driver_access(d, key, 1, HS_NEXT_UNKNOWN, HS_ACCESS_READ);
  }
  for (int i = 0; i < nthreads; i++) pthread_join(t[i], NULL);
}

#endif
