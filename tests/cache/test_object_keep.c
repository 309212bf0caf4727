/*
 * test_object_keep — an insert of a cached key under keep_cached
 * (hotset/object_cache.h, docs/object-cache.md rule 3; the essay's rule 13):
 *
 *   - the cached entry stays: lookups find its value, and it is not freed;
 *   - without a handle the new value is freed at once, exactly once, and
 *     nothing else changes (usage, count);
 *   - with a handle the new value is held by an entry of its own that no
 *     lookup nor for_each finds, charged in the usage and pinned usage
 *     until its last release frees it; destroy refuses while it is held;
 *   - the strict limit refuses a held one there is no room for, the value
 *     still the caller's;
 *   - the insert is a hit on the cached entry: under every pool policy,
 *     step for step beside a stream, a kept insert does what a lookup does
 *     (HIGH, what two lookups do);
 *   - the default replaces, as before;
 *   - the insert's outcome: "kept" for a kept insert, "replaced" where the
 *     default took the old entry out, "added" for a new key, a key erased
 *     first, or a strict refusal (which replaces nothing);
 *   - four threads racing kept inserts (with and without handles), lookups,
 *     releases and erases on a few keys: a handle always holds its own
 *     key's value, unfreed while held; every value is freed exactly once,
 *     and the usage is exact when they stop.
 */
#include "check.h"
#include "hotset/object_cache.h"
#include "misuse_child.h"
#include "pool_policies.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- values: each counts how often it was freed ------------------------- */

#define MAX_VALUES 400000
typedef struct val {
  atomic_int freed;
  size_t charge;
  int key;
} val;
static val *vals;
static atomic_int nvals;

static val *new_val(size_t charge, int key) {
  int i = atomic_fetch_add(&nvals, 1);
  REQUIRE(i < MAX_VALUES);
  atomic_init(&vals[i].freed, 0);
  vals[i].charge = charge;
  vals[i].key = key;
  return &vals[i];
}

static void free_val(const void *key, size_t key_len, void *value, void *tag, void *ctx) {
  (void)key, (void)key_len, (void)tag, (void)ctx;
  if (value) atomic_fetch_add(&((val *)value)->freed, 1);
}

static int freed(const val *v) {
  return atomic_load(&v->freed);
}

static void check_all_freed_once(void) {
  int n = atomic_load(&nvals), bad = 0;
  for (int i = 0; i < n; i++) bad += freed(&vals[i]) != 1;
  CHECK_EQ(bad, 0);
  atomic_store(&nvals, 0);
}

static hs_object_cache *make(uint64_t capacity, bool keep, bool strict, const char *policy) {
  hs_object_cache_options o;
  hs_object_cache_options_init(&o);
  o.capacity = capacity;
  o.shard_bits = 0;
  o.strict_capacity = strict;
  o.policy = policy;
  o.keep_cached = keep;
  o.scan_run = 0;
  o.free_object = free_val;
  hs_object_cache *c = NULL;
  REQUIRE(hs_object_cache_create(&o, &c) == HS_OK);
  return c;
}

/* What the calling thread's last put() did with the key's cached entry. */
static _Thread_local hs_object_insert_outcome last_outcome;

static hs_status put(hs_object_cache *c, const char *key, val *v, hs_object **out) {
  last_outcome = (hs_object_insert_outcome)-1;
  return hs_object_cache_insert(c, key, strlen(key), v, v ? v->charge : 100, NULL, HS_OBJECT_NORMAL,
                                out, &last_outcome);
}

static hs_object_cache_stats stats(hs_object_cache *c) {
  hs_object_cache_stats st;
  CHECK_OK(hs_object_cache_stats_get(c, &st));
  return st;
}

/* The value a lookup of `key` finds (released at once), or NULL. */
static val *found(hs_object_cache *c, const char *key) {
  hs_object *h = hs_object_cache_lookup(c, key, strlen(key));
  if (!h) return NULL;
  val *v = hs_object_value(h);
  hs_object_release(c, h, false);
  return v;
}

static void count_entry(const void *key, size_t key_len, void *value, size_t charge, void *tag,
                        void *arg) {
  (void)key, (void)key_len, (void)value, (void)tag;
  uint64_t *sum = arg;
  sum[0]++;
  sum[1] += charge;
}

/* ---- one thread ----------------------------------------------------------- */

static void test_kept_without_handle(void) {
  hs_object_cache *c = make(10000, true, false, NULL);
  val *v1 = new_val(300, 0), *v2 = new_val(500, 0);
  CHECK_OK(put(c, "k", v1, NULL));
  CHECK_EQ(last_outcome, HS_OBJECT_ADDED);
  CHECK_OK(put(c, "k", v2, NULL));
  CHECK_EQ(last_outcome, HS_OBJECT_KEPT);
  CHECK_EQ(freed(v2), 1); /* at once, before any release or destroy */
  CHECK_EQ(freed(v1), 0);
  CHECK(found(c, "k") == v1);
  hs_object_cache_stats st = stats(c);
  CHECK_EQ(st.kept, 1);
  CHECK_EQ(st.inserts, 2);
  CHECK_EQ(st.erasures, 0);
  CHECK_EQ(st.usage, 300);
  CHECK_EQ(st.count, 1);
  CHECK_OK(hs_object_cache_destroy(c));
  check_all_freed_once();
}

static void test_kept_with_handle(void) {
  hs_object_cache *c = make(10000, true, false, NULL);
  val *v1 = new_val(300, 0), *v2 = new_val(500, 0);
  CHECK_OK(put(c, "k", v1, NULL));
  hs_object *h = NULL;
  CHECK_OK(put(c, "k", v2, &h));
  CHECK_EQ(last_outcome, HS_OBJECT_KEPT);
  REQUIRE(h);
  CHECK(hs_object_value(h) == v2); /* the caller's own value */
  CHECK_EQ(hs_object_charge(h), 500);
  size_t len = 0;
  const void *key = hs_object_key(h, &len);
  CHECK(len == 1 && memcmp(key, "k", 1) == 0);
  CHECK(found(c, "k") == v1); /* no lookup finds the held one */
  uint64_t seen[2] = {0, 0};
  hs_object_cache_for_each(c, count_entry, seen, 0);
  CHECK_EQ(seen[0], 1);
  CHECK_EQ(seen[1], 300);
  hs_object_cache_stats st = stats(c);
  CHECK_EQ(st.usage, 800); /* the held one is charged */
  CHECK_EQ(st.pinned_usage, 500);
  CHECK_EQ(st.count, 1);
  /* a second reference, then two releases: the last one frees it */
  CHECK_OK(hs_object_ref(c, h));
  CHECK(!hs_object_release(c, h, false));
  CHECK_EQ(freed(v2), 0);
  CHECK(hs_object_release(c, h, false));
  CHECK_EQ(freed(v2), 1);
  CHECK_EQ(freed(v1), 0);
  st = stats(c);
  CHECK_EQ(st.usage, 300);
  CHECK_EQ(st.pinned_usage, 0);
  /* erase_unreferenced and erase touch only the table's entry */
  CHECK_OK(put(c, "k", new_val(200, 0), &h));
  hs_object_cache_erase(c, "k", 1);
  CHECK_EQ(freed(v1), 1);
  CHECK(found(c, "k") == NULL);
  CHECK(hs_object_release(c, h, false));
  CHECK_EQ(stats(c).usage, 0);
  CHECK_OK(hs_object_cache_destroy(c));
  check_all_freed_once();
}

/* Destroy while a kept entry's handle is held: refused, nothing freed
 * (in a child: a debug build stops there). */
static int destroy_kept_held(void) {
  hs_object_cache *c = make(10000, true, false, NULL);
  val *v1 = new_val(300, 0), *v2 = new_val(500, 0);
  hs_object *h = NULL;
  int bad = put(c, "k", v1, NULL) != HS_OK || put(c, "k", v2, &h) != HS_OK || !h;
  bad |= hs_object_cache_destroy(c) != HS_ERR_MISUSE;
  bad |= freed(v1) + freed(v2) != 0;
  bad |= hs_object_release(c, h, false) != true;
  bad |= hs_object_cache_destroy(c) != HS_OK;
  bad |= freed(v1) != 1 || freed(v2) != 1;
  return bad;
}

/* A held kept entry makes room like any insert, and the strict limit
 * refuses it when the rest is referenced. */
static void test_kept_strict(void) {
  hs_object_cache *c = make(1000, true, true, NULL);
  val *v1 = new_val(600, 0);
  hs_object *h1 = NULL, *h2 = NULL;
  CHECK_OK(put(c, "k", v1, &h1));
  val *v2 = new_val(600, 0);
  CHECK_EQ(put(c, "k", v2, &h2), HS_ERR_NO_BUFFERS);
  CHECK_EQ(last_outcome, HS_OBJECT_ADDED); /* refused: nothing done */
  CHECK(h2 == NULL);
  CHECK_EQ(freed(v2), 0); /* still the caller's */
  CHECK_EQ(stats(c).refusals, 1);
  CHECK_EQ(stats(c).usage, 600);
  /* without a handle nothing needs room: freed at once, HS_OK */
  CHECK_OK(put(c, "k", v2, NULL));
  CHECK_EQ(freed(v2), 1);
  CHECK(hs_object_release(c, h1, false) == false);
  /* unreferenced, the cached entry is a victim like any: made room for */
  val *v3 = new_val(600, 0);
  CHECK_OK(put(c, "k", v3, &h2));
  CHECK(hs_object_value(h2) == v3);
  CHECK_EQ(freed(v1), 1);
  CHECK(found(c, "k") == NULL);
  CHECK(hs_object_release(c, h2, false));
  CHECK_OK(hs_object_cache_destroy(c));
  check_all_freed_once();
}

/* Without keep_cached, an insert replaces (the default). */
static void test_default_replaces(void) {
  hs_object_cache_options o;
  hs_object_cache_options_init(&o);
  CHECK(!o.keep_cached);
  hs_object_cache *c = make(10000, false, false, NULL);
  val *v1 = new_val(300, 0), *v2 = new_val(500, 0);
  CHECK_OK(put(c, "k", v1, NULL));
  CHECK_EQ(last_outcome, HS_OBJECT_ADDED);
  CHECK_OK(put(c, "k", v2, NULL));
  CHECK_EQ(last_outcome, HS_OBJECT_REPLACED);
  CHECK_EQ(freed(v1), 1);
  CHECK(found(c, "k") == v2);
  hs_object_cache_erase(c, "k", 1);
  CHECK_OK(put(c, "k", new_val(100, 0), NULL)); /* erased first: added */
  CHECK_EQ(last_outcome, HS_OBJECT_ADDED);
  CHECK_EQ(stats(c).kept, 0);
  CHECK_EQ(stats(c).erasures, 2);
  CHECK_OK(hs_object_cache_destroy(c));
  check_all_freed_once();
}

/* A strict refusal without a handle replaces nothing: the value is freed
 * as if evicted at once, the cached entry stays, and the outcome is
 * "added" (nothing was replaced nor kept). */
static void test_refused_outcome(void) {
  hs_object_cache *c = make(1000, false, true, NULL);
  val *v1 = new_val(600, 0), *v2 = new_val(600, 0);
  hs_object *h1 = NULL;
  CHECK_OK(put(c, "k", v1, &h1));
  CHECK_OK(put(c, "k", v2, NULL));
  CHECK_EQ(last_outcome, HS_OBJECT_ADDED);
  CHECK_EQ(freed(v2), 1);
  CHECK_EQ(stats(c).refusals, 1);
  CHECK(found(c, "k") == v1);
  if (h1) CHECK(!hs_object_release(c, h1, false));
  CHECK_OK(hs_object_cache_destroy(c));
  check_all_freed_once();
}

/* ---- a kept insert is a hit ------------------------------------------------ */

#define ENTRIES 48
#define CHARGE  100

typedef struct probe {
  const char *key;
  int n;
} probe;

static void probe_entry(const void *key, size_t key_len, void *value, size_t charge, void *tag,
                        void *arg) {
  (void)value, (void)charge, (void)tag;
  probe *p = arg;
  p->n += key_len == strlen(p->key) && memcmp(key, p->key, key_len) == 0;
}

/* Whether `key` is in the table, asked through for_each, which does not
 * touch the policy (a lookup would hit it). */
static bool held(hs_object_cache *c, const char *key) {
  probe p = {key, 0};
  hs_object_cache_for_each(c, probe_entry, &p, 0);
  return p.n == 1;
}

/* Two caches of one policy, the same history: a few entries, some looked
 * up; then "key" inserted again in one (kept, with `priority`) and looked
 * up `lookups` times in the other; then single-use entries one by one.
 * After each, "key" must be held in both or in neither. */
static void kept_is_lookup(const char *policy, hs_object_priority priority, int lookups) {
  hs_object_cache *kept = make((uint64_t)ENTRIES * CHARGE, true, false, policy);
  hs_object_cache *looked = make((uint64_t)ENTRIES * CHARGE, true, false, policy);
  hs_object_cache *both[2] = {kept, looked};
  char key[32];
  for (int w = 0; w < 2; w++) {
    CHECK_OK(hs_object_cache_insert(both[w], "key", 3, NULL, CHARGE, NULL, HS_OBJECT_NORMAL, NULL,
                                    NULL));
    for (int i = 0; i < ENTRIES / 2; i++) {
      snprintf(key, sizeof key, "warm%d", i);
      CHECK_OK(hs_object_cache_insert(both[w], key, strlen(key), NULL, CHARGE, NULL,
                                      HS_OBJECT_NORMAL, NULL, NULL));
      if (i % 3 == 0) {
        hs_object *h = hs_object_cache_lookup(both[w], key, strlen(key));
        CHECK(h != NULL);
        if (h) hs_object_release(both[w], h, false);
      }
    }
  }
  CHECK_OK(hs_object_cache_insert(kept, "key", 3, NULL, CHARGE, NULL, priority, NULL, NULL));
  for (int i = 0; i < lookups; i++) {
    hs_object *h = hs_object_cache_lookup(looked, "key", 3);
    CHECK(h != NULL);
    if (h) hs_object_release(looked, h, false);
  }
  int differ = -1;
  for (int i = 0; i < 3 * ENTRIES && differ < 0; i++) {
    snprintf(key, sizeof key, "once%d", i);
    for (int w = 0; w < 2; w++)
      CHECK_OK(hs_object_cache_insert(both[w], key, strlen(key), NULL, CHARGE, NULL,
                                      HS_OBJECT_NORMAL, NULL, NULL));
    if (held(kept, "key") != held(looked, "key")) differ = i;
  }
  CHECK_EQ(differ, -1);
  if (differ >= 0)
    fprintf(stderr, "  (policy %s, priority %d: a kept insert and %d lookups part at entry %d)\n",
            policy, (int)priority, lookups, differ);
  CHECK_EQ(stats(kept).kept, 1);
  CHECK_OK(hs_object_cache_destroy(kept));
  CHECK_OK(hs_object_cache_destroy(looked));
}

static void hit_under(const char *policy, void *arg) {
  (void)arg;
  kept_is_lookup(policy, HS_OBJECT_NORMAL, 1);
  kept_is_lookup(policy, HS_OBJECT_HIGH, 2);
}

static void test_kept_is_a_hit(void) {
  CHECK(each_pool_policy(hit_under, NULL) >= 10);
  /* and a hit matters: under LRU the entry inserted first outlives the
   * next eviction only because it was hit */
  hs_object_cache *c = make(3 * CHARGE, true, false, "lru");
  CHECK_OK(hs_object_cache_insert(c, "a", 1, NULL, CHARGE, NULL, HS_OBJECT_NORMAL, NULL, NULL));
  CHECK_OK(hs_object_cache_insert(c, "b", 1, NULL, CHARGE, NULL, HS_OBJECT_NORMAL, NULL, NULL));
  CHECK_OK(hs_object_cache_insert(c, "c", 1, NULL, CHARGE, NULL, HS_OBJECT_NORMAL, NULL, NULL));
  CHECK_OK(hs_object_cache_insert(c, "a", 1, NULL, CHARGE, NULL, HS_OBJECT_NORMAL, NULL, NULL));
  CHECK_OK(hs_object_cache_insert(c, "d", 1, NULL, CHARGE, NULL, HS_OBJECT_NORMAL, NULL, NULL));
  CHECK(held(c, "a"));
  CHECK(!held(c, "b"));
  CHECK_OK(hs_object_cache_destroy(c));
}

/* ---- threads ---------------------------------------------------------------- */

#define TKEYS 8
typedef struct tjob {
  hs_object_cache *c;
  uint64_t seed;
  int ops;
} tjob;

static void tkey(char *key, int k) {
  if (k % 4 == 3) /* some keys longer than an entry's inline bytes */
    snprintf(key, 64, "t%d-a-key-longer-than-the-inline-twenty-four-bytes", k);
  else
    snprintf(key, 64, "t%d", k);
}

static void *racer(void *arg) {
  tjob *j = arg;
  uint64_t x = j->seed;
  hs_object *held_h[4] = {0};
  val *held_v[4] = {0};
  char key[64];
  for (int op = 0; op < j->ops; op++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    int k = (int)(x % TKEYS), slot = (int)((x >> 8) % 4);
    tkey(key, k);
    unsigned what = (unsigned)((x >> 16) % 10);
    if (held_h[slot]) { /* a handle always holds its own value, unfreed */
      const val *v = hs_object_value(held_h[slot]);
      if ((held_v[slot] && v != held_v[slot]) || freed(v) != 0) {
        check_failed++;
        fprintf(stderr, "a held handle lost its value (key %d, freed %d)\n", v->key, freed(v));
      } else {
        check_passed++;
      }
      hs_object_release(j->c, held_h[slot], (x >> 30) % 8 == 0);
      held_h[slot] = NULL;
      held_v[slot] = NULL;
    }
    if (what < 4) {
      val *v = new_val(50 + (x >> 40) % 200, k);
      hs_object **out = what < 2 ? &held_h[slot] : NULL;
      hs_status st =
          hs_object_cache_insert(j->c, key, strlen(key), v, v->charge, NULL,
                                 (x >> 36) % 4 == 0 ? HS_OBJECT_HIGH : HS_OBJECT_NORMAL, out, NULL);
      if (st == HS_ERR_NO_BUFFERS && out) /* strict, no room: still ours */
        atomic_fetch_add(&v->freed, 1);
      else
        CHECK_OK(st);
      if (out && st == HS_OK) held_v[slot] = v;
    } else if (what < 8) {
      held_h[slot] = hs_object_cache_lookup(j->c, key, strlen(key));
      if (held_h[slot]) {
        const val *v = hs_object_value(held_h[slot]);
        if (v->key != k) {
          check_failed++;
          fprintf(stderr, "a lookup of key %d found key %d's value\n", k, v->key);
        }
      }
    } else {
      hs_object_cache_erase(j->c, key, strlen(key));
    }
  }
  for (int i = 0; i < 4; i++)
    if (held_h[i]) hs_object_release(j->c, held_h[i], false);
  return NULL;
}

static void test_threads(void) {
  for (int strict = 0; strict <= 1; strict++) {
    hs_object_cache *c = make(900, true, strict, NULL);
    pthread_t t[4];
    tjob jobs[4];
    for (int i = 0; i < 4; i++) {
      jobs[i] = (tjob){c, 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1) + (uint64_t)strict, 20000};
      REQUIRE(pthread_create(&t[i], NULL, racer, &jobs[i]) == 0);
    }
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    /* no handle held: the usage is exactly the table's entries */
    uint64_t seen[2] = {0, 0};
    hs_object_cache_for_each(c, count_entry, seen, 0);
    hs_object_cache_stats st = stats(c);
    CHECK_EQ(st.usage, seen[1]);
    CHECK_EQ(st.count, seen[0]);
    CHECK_EQ(st.pinned_usage, 0);
    CHECK(st.kept > 0);
    CHECK_OK(hs_object_cache_destroy(c));
    check_all_freed_once();
  }
}

int main(int argc, char **argv) {
  (void)argc, (void)argv;
  vals = calloc(MAX_VALUES, sizeof *vals);
  REQUIRE(vals);
  test_kept_without_handle();
  test_refused_outcome();
  test_kept_with_handle();
  in_child("destroy with a kept entry held", destroy_kept_held);
  test_kept_strict();
  test_default_replaces();
  test_kept_is_a_hit();
  test_threads();
  free(vals);
  return check_finish();
}
