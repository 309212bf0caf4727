/*
 * test_object_priority — what an insert's priority does (hotset/object_cache.h,
 * docs/object-cache.md rule 11), under every policy the pool runs:
 *
 *   - HS_OBJECT_LOW: a scan's entry from the start. It is the first victim,
 *     before an older ordinary entry; a lookup outside a scan makes it
 *     ordinary, after which the policy alone picks the victim.
 *   - HS_OBJECT_HIGH: as if looked up twice on arrival. Its fate beside a
 *     stream of single-use entries is the fate of a NORMAL twin looked up
 *     twice, under every policy; under the default policy (S3-FIFO) it
 *     outlives the stream, where a NORMAL entry does not.
 *   - A priority that is none is refused as misuse, nothing inserted.
 */
#include "check.h"
#include "hotset/object_cache.h"
#include "pool_policies.h"

#include <stdio.h>
#include <string.h>

#define ENTRIES 64 /* the cache's capacity, in entries */
#define CHARGE  4096

static hs_object_cache *make(const char *policy) {
  hs_object_cache_options o;
  hs_object_cache_options_init(&o);
  o.capacity = (uint64_t)ENTRIES * CHARGE;
  o.shard_bits = 0;
  o.policy = policy;
  o.expected_charge = CHARGE;
  o.scan_run = 0; /* no detected scans: only the priorities make one */
  hs_object_cache *c = NULL;
  REQUIRE(hs_object_cache_create(&o, &c) == HS_OK);
  return c;
}

static void put(hs_object_cache *c, const char *key, hs_object_priority priority) {
  CHECK_OK(hs_object_cache_insert(c, key, strlen(key), NULL, CHARGE, NULL, priority, NULL, NULL));
}

static bool held(hs_object_cache *c, const char *key) {
  hs_object *h = hs_object_cache_lookup(c, key, strlen(key));
  if (h) hs_object_release(c, h, false);
  return h != NULL;
}

/* Single-use entries, never looked up. */
static void stream(hs_object_cache *c, const char *prefix, int n) {
  char key[32];
  for (int i = 0; i < n; i++) {
    snprintf(key, sizeof key, "%s%d", prefix, i);
    put(c, key, HS_OBJECT_NORMAL);
  }
}

/* NORMAL "old", then LOW "low", then fill to one eviction: "low" goes,
 * whatever the policy would have picked. */
static void low_is_first_victim(const char *policy) {
  hs_object_cache *c = make(policy);
  put(c, "old", HS_OBJECT_NORMAL);
  put(c, "low", HS_OBJECT_LOW);
  stream(c, "f", ENTRIES - 1); /* one more than fits */
  hs_object_cache_stats st;
  CHECK_OK(hs_object_cache_stats_get(c, &st));
  CHECK_EQ(st.evictions, 1);
  bool low = held(c, "low"), old = held(c, "old");
  CHECK(!low);
  CHECK(old);
  if (low || !old) fprintf(stderr, "  (policy %s: low %d old %d)\n", policy, low, old);
  CHECK_OK(hs_object_cache_destroy(c));
}

/* A LOW entry looked up is ordinary: under LRU and FIFO the older "old"
 * is then the victim. */
static void low_looked_up_is_ordinary(const char *policy) {
  hs_object_cache *c = make(policy);
  put(c, "old", HS_OBJECT_NORMAL);
  put(c, "low", HS_OBJECT_LOW);
  CHECK(held(c, "low"));
  stream(c, "f", ENTRIES - 1);
  CHECK(held(c, "low"));
  CHECK(!held(c, "old"));
  CHECK_OK(hs_object_cache_destroy(c));
}

/* Whether `key`, inserted first (HIGH, or NORMAL and then looked up
 * `lookups` times), is still held after two cacheloads of single-use
 * entries. */
static bool outlives_stream(const char *policy, hs_object_priority priority, int lookups) {
  hs_object_cache *c = make(policy);
  put(c, "key", priority);
  for (int i = 0; i < lookups; i++) CHECK(held(c, "key"));
  stream(c, "s", 2 * ENTRIES);
  bool kept = held(c, "key");
  CHECK_OK(hs_object_cache_destroy(c));
  return kept;
}

static void high_is_two_lookups(const char *policy) {
  bool high = outlives_stream(policy, HS_OBJECT_HIGH, 0);
  bool twin = outlives_stream(policy, HS_OBJECT_NORMAL, 2);
  CHECK_EQ(high, twin);
  if (high != twin)
    fprintf(stderr, "  (policy %s: HIGH kept %d, looked up twice %d)\n", policy, high, twin);
}

static void priorities_of(const char *policy, void *arg) {
  (void)arg;
  low_is_first_victim(policy);
  high_is_two_lookups(policy);
}

static void test_every_policy(void) {
  CHECK(each_pool_policy(priorities_of, NULL) >= 10);
  low_looked_up_is_ordinary("lru");
  low_looked_up_is_ordinary("fifo");
}

/* The default policy: HIGH is what keeps index and filter blocks beside a
 * stream of data blocks read once; NORMAL alone, or looked up once, is not. */
static void test_default_policy(void) {
  CHECK(outlives_stream(NULL, HS_OBJECT_HIGH, 0));
  CHECK(!outlives_stream(NULL, HS_OBJECT_NORMAL, 0));
  CHECK(!outlives_stream(NULL, HS_OBJECT_NORMAL, 1));
}

static void test_not_a_priority(void) {
  hs_object_cache *c = make(NULL);
  int value = 0;
  hs_object *h = (hs_object *)&value;
  CHECK_ST(hs_object_cache_insert(c, "k", 1, &value, CHARGE, NULL, (hs_object_priority)3, &h, NULL),
           HS_ERR_MISUSE);
  CHECK(h == NULL);
  CHECK_EQ(hs_object_cache_count(c), 0);
  CHECK_EQ(hs_object_cache_usage(c), 0);
  CHECK_OK(hs_object_cache_destroy(c));
}

int main(void) {
  test_every_policy();
  test_default_policy();
  test_not_a_priority();
  return check_finish();
}
