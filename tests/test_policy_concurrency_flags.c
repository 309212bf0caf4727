/*
 * test_policy_concurrency_flags — the concurrency flags each policy
 * declares are the ones include/hotset/policy.h and docs/policies.md list
 * (the pool locks by them), and they are true: for every policy whose hits
 * may run without a lock, other threads hit it while this one misses
 * (victim, evict, insert), which ThreadSanitizer checks in CI.
 */
#include "policy/policy_impl.h"
#include "policy_driver.h"

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
    {"lru", 0},
    {"2q", 0},
    {"arc", 0},
    {"lirs", 0},
    {"slru", 0},
    {"lru-k", 0},
    {"twolist", 0},
    {"midpoint", 0},
    {"belady", 0},
};
enum { NDOCUMENTED = sizeof documented / sizeof documented[0] };

static void test_flags_as_documented(void) {
  int registered = 0;
  for (int i = 0; hs_all_policies[i]; i++) {
    const hs_policy_ops *ops = hs_all_policies[i];
    registered++;
    int k = 0;
    while (k < NDOCUMENTED && strcmp(documented[k].name, ops->name) != 0) k++;
    if (k == NDOCUMENTED) {
      fprintf(stderr, "policy %s is not in the documented list\n", ops->name);
      CHECK(false);
      continue;
    }
    unsigned flags = ops->flags & (HS_POLICY_CONCURRENT | HS_POLICY_CONCURRENT_HIT);
    if (flags != documented[k].concurrency)
      fprintf(stderr, "policy %s: concurrency flags %#x, documented %#x\n", ops->name, flags,
              documented[k].concurrency);
    CHECK_EQ(flags, documented[k].concurrency);
  }
  CHECK_EQ(registered, NDOCUMENTED);
}

/* Lock-free hits racing misses on every policy that allows them. */
static void test_lock_free_hits(void) {
  enum { NSLOTS = 64, NKEYS = 1000, NREQS = 20000, NTHREADS = 3 };
  for (int i = 0; hs_all_policies[i]; i++) {
    const hs_policy_ops *ops = hs_all_policies[i];
    if (!(ops->flags & (HS_POLICY_CONCURRENT | HS_POLICY_CONCURRENT_HIT))) continue;
    driver d;
    driver_init(&d, ops->name, NSLOTS, NSLOTS, NKEYS);
    driver_race_hits(&d, NTHREADS, NREQS);
    CHECK_EQ(d.violations, 0);
    CHECK_EQ(hs_policy_resident(d.p), NSLOTS);
    driver_free(&d);
  }
}

int main(void) {
  test_flags_as_documented();
  test_lock_free_hits();
  return check_finish();
}
