/*
 * tests/policy/concurrency_flags.c — the concurrency flags each policy
 * declares are the ones include/hotset/policy.h and docs/policies.md list
 * (the pool locks by them), and they are true: for every policy whose hits
 * may run without a lock, other threads hit it while this one misses
 * (victim, evict, insert), which ThreadSanitizer checks in CI.
 */
#include "policy/policy_impl.h"
#include "policy_driver.h"
#include "policy_sections.h"

/* Exactly what policy.h says: clock-sweep alone is HS_POLICY_CONCURRENT;
 * these hit without a lock; the rest move entries on a hit. */
static const struct {
  const char *name;
  unsigned concurrency;
} documented[] = {
    {"clock-sweep", HS_POLICY_CONCURRENT | HS_POLICY_CONCURRENT_HIT},
    {"fifo", HS_POLICY_CONCURRENT_HIT},
    {"clock", HS_POLICY_CONCURRENT_HIT},
    {"sieve", HS_POLICY_CONCURRENT_HIT},
    {"s3fifo", HS_POLICY_CONCURRENT_HIT},
    {"car", HS_POLICY_CONCURRENT_HIT},
    {"clockpro", HS_POLICY_CONCURRENT_HIT},
    {"clock-admit", HS_POLICY_CONCURRENT_HIT},
    {"lru", 0},
    {"2q", 0},
    {"arc", 0},
    {"lirs", 0},
    {"slru", 0},
    {"lru-k", 0},
    {"twolist", 0},
    {"midpoint", 0},
    {"belady", 0},
    {"fixedset", 0},
};
enum { NDOCUMENTED = sizeof documented / sizeof documented[0] };

static void test_flags_as_documented(const char *name) {
  const hs_policy_ops *ops = registered_policy(name);
  int k = 0;
  while (k < NDOCUMENTED && strcmp(documented[k].name, ops->name) != 0) k++;
  if (k == NDOCUMENTED) {
    fprintf(stderr, "policy %s is not in the documented list\n", ops->name);
    CHECK(false);
    return;
  }
  unsigned flags = ops->flags & (HS_POLICY_CONCURRENT | HS_POLICY_CONCURRENT_HIT);
  if (flags != documented[k].concurrency)
    fprintf(stderr, "policy %s: concurrency flags %#x, documented %#x\n", ops->name, flags,
            documented[k].concurrency);
  CHECK_EQ(flags, documented[k].concurrency);
}

/* The documented list names no policy the registry lacks. */
static void test_documented_count(void) {
  int registered = 0;
  for (int i = 0; hs_all_policies[i]; i++) registered++;
  CHECK_EQ(registered, NDOCUMENTED);
}

/* Lock-free hits racing misses on every policy that allows them. */
static void test_lock_free_hits(const char *name) {
  enum { NSLOTS = 64, NKEYS = 1000, NREQS = 20000, NTHREADS = 3 };
  const hs_policy_ops *ops = registered_policy(name);
  if (!(ops->flags & (HS_POLICY_CONCURRENT | HS_POLICY_CONCURRENT_HIT))) return;
  driver d;
  driver_init(&d, ops->name, NSLOTS, NSLOTS, NKEYS);
  driver_race_hits(&d, NTHREADS, NREQS);
  CHECK_EQ(d.violations, 0);
  CHECK_EQ(hs_policy_resident(d.p), NSLOTS);
  driver_free(&d);
}

/* The worst interleaving of lock-free hits, made deterministic: each slot
 * the victim search looks at is hit right then (the pinned callback, which
 * the search calls on each slot, does the hit), for four rounds' worth of
 * looks. Nothing is pinned, so the search must still name a victim. Clock
 * once answered "no victim" here: its three bounded rounds never found a
 * clear bit. (Unbounded, such hits would keep clock-sweep sweeping, as they
 * would PostgreSQL's: its bound restarts whenever it lowers a count.) */
typedef struct hit_racer {
  hs_policy *p;
  uint64_t hits, budget;
} hit_racer;

static bool hit_while_looking(void *ctx, uint32_t slot) {
  hit_racer *r = ctx;
  if (r->hits < r->budget) {
    hs_access a = {.key = slot, .size = 1, .kind = HS_ACCESS_READ};
    hs_policy_hit(r->p, slot, &a);
    r->hits++;
  }
  return false;
}

static void test_victim_despite_racing_hits(const char *name) {
  enum { NSLOTS = 16 };
  {
    const hs_policy_ops *ops = registered_policy(name);
    if (!(ops->flags & (HS_POLICY_CONCURRENT | HS_POLICY_CONCURRENT_HIT))) return;
    driver d;
    driver_init(&d, ops->name, NSLOTS, NSLOTS, 1000);
    for (uint32_t k = 0; k < NSLOTS; k++) driver_access(&d, k, 1, HS_NEXT_UNKNOWN, HS_ACCESS_READ);
    for (uint32_t k = 0; k < NSLOTS; k++) driver_access(&d, k, 1, HS_NEXT_UNKNOWN, HS_ACCESS_READ);
    hit_racer r = {d.p, 0, 4 * NSLOTS};
    hs_access in = {.key = 5000, .size = 1, .kind = HS_ACCESS_READ};
    int64_t v = hs_policy_victim(d.p, &in, hit_while_looking, &r);
    if (v < 0)
      fprintf(stderr, "%s: no victim with every slot hit as it was looked at\n", ops->name);
    CHECK(v >= 0 && v < NSLOTS);
    CHECK(r.hits > 0);
    driver_free(&d);
  }
}

const policy_section concurrency_flags_sections[] = {
    SECTION_FOR_EVERY(test_flags_as_documented),
    SECTION_FOR_EVERY_THREADS(test_lock_free_hits),
    SECTION_FOR_EVERY(test_victim_despite_racing_hits),
    SECTION_COMMON_CHECK(test_documented_count),
    SECTIONS_END,
};
