/*
 * test_object_cache — the object cache (hotset/object_cache.h) against its
 * contract (docs/object-cache.md): handles outlive erase, replace and
 * shrink; frees are deferred to the last release and happen exactly once,
 * with no lock held; the strict limit; usage and pinned usage against a
 * shadow model for every policy the pool runs; for_each; slot growth;
 * misuse; the scan detector's family of cases; four threads racing.
 */
#include "cache/object_cache_internal.h"
#include "check.h"
#include "core/debug.h"
#include "core/seams.h"
#include "hotset/object_cache.h"
#include "misuse_child.h"
#include "policy/policy_impl.h"
#include "pool_policies.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- values: each counts how often it was freed ------------------------- */

#define MAX_VALUES 200000
typedef struct val {
  atomic_int freed;
  size_t charge;
  int key; /* the threads' test: which key it was inserted under */
} val;
static val *vals;
static atomic_int nvals;
/* When set (single-threaded tests), free_object checks that it runs with
 * no shard's lock held (rule 6). */
static hs_object_cache *freeing_cache;
static atomic_int frees_under_lock;

static val *new_val(size_t charge) {
  int i = atomic_fetch_add(&nvals, 1);
  REQUIRE(i < MAX_VALUES);
  atomic_init(&vals[i].freed, 0);
  vals[i].charge = charge;
  return &vals[i];
}

static void free_val(const void *key, size_t key_len, void *value, void *tag, void *ctx) {
  (void)key, (void)key_len, (void)tag, (void)ctx;
  val *v = value;
  atomic_fetch_add(&v->freed, 1);
  hs_object_cache *c = freeing_cache;
  for (uint32_t i = 0; c && i < c->nshards; i++) {
    if (pthread_mutex_trylock(&c->shards[i].mu) == 0)
      pthread_mutex_unlock(&c->shards[i].mu);
    else
      atomic_fetch_add(&frees_under_lock, 1);
  }
}

static void reset_vals(void) {
  atomic_store(&nvals, 0);
}

/* Every value inserted so far was freed exactly once. */
static void check_all_freed_once(void) {
  int n = atomic_load(&nvals), bad = 0;
  for (int i = 0; i < n; i++)
    if (atomic_load(&vals[i].freed) != 1) bad++;
  CHECK_EQ(bad, 0);
}

static hs_object_cache *make(uint64_t capacity, int shard_bits, bool strict, const char *policy) {
  hs_object_cache_options o;
  hs_object_cache_options_init(&o);
  o.capacity = capacity;
  o.shard_bits = shard_bits;
  o.strict_capacity = strict;
  o.policy = policy;
  o.free_object = free_val;
  hs_object_cache *c = NULL;
  CHECK_OK(hs_object_cache_create(&o, &c));
  REQUIRE(c);
  freeing_cache = c;
  return c;
}

static hs_status done(hs_object_cache *c) {
  freeing_cache = NULL;
  CHECK_EQ(atomic_load(&frees_under_lock), 0);
  return hs_object_cache_destroy(c);
}

static hs_object *put(hs_object_cache *c, const char *key, val *v, bool handle) {
  hs_object *h = NULL;
  CHECK_OK(hs_object_cache_insert(c, key, strlen(key), v, v->charge, NULL, HS_OBJECT_NORMAL,
                                  handle ? &h : NULL, NULL));
  return h;
}

static hs_object *get(hs_object_cache *c, const char *key) {
  return hs_object_cache_lookup(c, key, strlen(key));
}

/* ---- basics --------------------------------------------------------------- */

static void test_basics(void) {
  reset_vals();
  hs_object_cache *c = make(1 << 20, 0, false, NULL);
  val *a = new_val(100);
  int tag;
  hs_object *h = NULL;
  CHECK_OK(hs_object_cache_insert(c, "alpha", 5, a, 100, &tag, HS_OBJECT_HIGH, &h, NULL));
  REQUIRE(h);
  CHECK(hs_object_value(h) == a);
  CHECK_EQ(hs_object_charge(h), 100);
  CHECK(hs_object_tag(h) == &tag);
  size_t len = 0;
  CHECK(memcmp(hs_object_key(h, &len), "alpha", 5) == 0);
  CHECK_EQ(len, 5);
  CHECK_EQ(hs_object_cache_usage(c), 100);
  CHECK_EQ(hs_object_cache_pinned_usage(c), 100);
  CHECK_OK(hs_object_ref(c, h));
  CHECK(!hs_object_release(c, h, false));
  CHECK_EQ(hs_object_cache_pinned_usage(c), 100);
  CHECK(!hs_object_release(c, h, false));
  CHECK_EQ(hs_object_cache_pinned_usage(c), 0);
  CHECK_EQ(hs_object_cache_count(c), 1);
  hs_object *g = get(c, "alpha");
  CHECK(g == h);
  CHECK(get(c, "alphb") == NULL);
  CHECK(hs_object_release(c, g, true)); /* erase_if_last: freed now */
  CHECK_EQ(atomic_load(&a->freed), 1);
  CHECK_EQ(hs_object_cache_count(c), 0);
  CHECK_EQ(hs_object_cache_usage(c), 0);
  CHECK(hs_object_cache_new_id(c) != hs_object_cache_new_id(c));
  hs_object_cache_stats st;
  CHECK_OK(hs_object_cache_stats_get(c, &st));
  CHECK_EQ(st.lookups, 2);
  CHECK_EQ(st.hits, 1);
  CHECK_EQ(st.misses, 1);
  CHECK_EQ(st.inserts, 1);
  CHECK_EQ(st.erasures, 1);
  CHECK_EQ(st.shards, 1);
  CHECK_OK(done(c));
  check_all_freed_once();

  /* shard_bits -1: one shard per 512 KiB, at most 64. */
  c = make(4 << 20, -1, false, NULL);
  CHECK_OK(hs_object_cache_stats_get(c, &st));
  CHECK_EQ(st.shards, 8);
  CHECK_OK(done(c));
  c = make(1ull << 34, -1, false, NULL);
  CHECK_OK(hs_object_cache_stats_get(c, &st));
  CHECK_EQ(st.shards, 64);
  CHECK_OK(done(c));
  CHECK_OK(hs_object_cache_create(NULL, &c)); /* NULL options: the defaults */
  CHECK_EQ(hs_object_cache_capacity(c), 64 << 20);
  CHECK_OK(done(c));
}

/* A handle stays valid, its value unfreed, until released, whatever
 * happens to its key: erase, replace, a shrink to 0. */
static void test_handles_outlive(void) {
  reset_vals();
  hs_object_cache *c = make(10000, 0, false, NULL);
  val *a = new_val(1000), *b = new_val(1000), *d = new_val(1000);
  hs_object *ha = put(c, "a", a, true);
  hs_object *hb = put(c, "b", b, true);
  put(c, "d", d, false);

  hs_object_cache_erase(c, "a", 1); /* referenced: deferred */
  CHECK(get(c, "a") == NULL);
  CHECK_EQ(atomic_load(&a->freed), 0);
  CHECK_EQ(hs_object_cache_usage(c), 3000); /* still counted */
  CHECK_EQ(hs_object_cache_count(c), 2);

  val *b2 = new_val(500);
  hs_object *hb2 = put(c, "b", b2, true); /* replaces a referenced entry */
  CHECK_EQ(atomic_load(&b->freed), 0);
  CHECK(hs_object_value(hb) == b);
  hs_object *g = get(c, "b");
  CHECK(g && hs_object_value(g) == b2);
  CHECK_EQ(hs_object_cache_usage(c), 3500);
  CHECK_EQ(hs_object_cache_pinned_usage(c), 2500);

  hs_object_cache_set_capacity(c, 0); /* unreferenced d goes; the rest stay */
  CHECK_EQ(atomic_load(&d->freed), 1);
  CHECK(get(c, "d") == NULL);
  CHECK_EQ(hs_object_cache_usage(c), 2500);
  CHECK(hs_object_value(ha) == a && hs_object_value(hb) == b);

  CHECK(hs_object_release(c, ha, false)); /* erased: the last release frees */
  CHECK_EQ(atomic_load(&a->freed), 1);
  CHECK(hs_object_release(c, hb, false));
  CHECK_EQ(atomic_load(&b->freed), 1);
  CHECK(!hs_object_release(c, g, false)); /* b2 still held by hb2 */
  CHECK_EQ(atomic_load(&b2->freed), 0);
  /* Over capacity (0): the last release of b2 evicts it (LRUCache's rule). */
  CHECK(hs_object_release(c, hb2, false));
  CHECK_EQ(atomic_load(&b2->freed), 1);
  CHECK_EQ(hs_object_cache_usage(c), 0);
  CHECK_EQ(hs_object_cache_pinned_usage(c), 0);
  CHECK_EQ(hs_object_cache_count(c), 0);

  /* Grow again: entries are kept. */
  hs_object_cache_set_capacity(c, 5000);
  for (int i = 0; i < 4; i++) {
    char k[16]; /* room for any int: -O1 sees i unbounded */
    snprintf(k, sizeof k, "g%d", i);
    put(c, k, new_val(1000), false);
  }
  CHECK_EQ(hs_object_cache_count(c), 4);
  hs_object_cache_set_capacity(c, 2000); /* shrink: two go, victims first */
  CHECK_EQ(hs_object_cache_count(c), 2);
  CHECK_EQ(hs_object_cache_usage(c), 2000);
  CHECK(get(c, "g0") == NULL); /* the first in is the first victim */
  CHECK_OK(done(c));
  check_all_freed_once();
}

static void test_strict(void) {
  reset_vals();
  hs_object_cache *c = make(3000, 0, true, NULL);
  CHECK(hs_object_cache_strict(c));
  hs_object *h1 = put(c, "1", new_val(1500), true);
  hs_object *h2 = put(c, "2", new_val(1500), true);
  /* With a handle: refused, nothing inserted, the value still ours. */
  val *v = new_val(100);
  hs_object *h = (hs_object *)1;
  CHECK_ST(hs_object_cache_insert(c, "3", 1, v, 100, NULL, HS_OBJECT_NORMAL, &h, NULL),
           HS_ERR_NO_BUFFERS);
  CHECK(h == NULL);
  CHECK(get(c, "3") == NULL);
  CHECK_EQ(atomic_load(&v->freed), 0);
  atomic_store(&v->freed, 1); /* the caller frees it itself */
  /* Without: freed at once through free_object, HS_OK. */
  val *w = new_val(100);
  CHECK_OK(hs_object_cache_insert(c, "4", 1, w, 100, NULL, HS_OBJECT_NORMAL, NULL, NULL));
  CHECK_EQ(atomic_load(&w->freed), 1);
  CHECK(get(c, "4") == NULL);
  CHECK_EQ(hs_object_cache_usage(c), 3000);
  hs_object_cache_stats st;
  CHECK_OK(hs_object_cache_stats_get(c, &st));
  CHECK_EQ(st.refusals, 2);
  /* Not strict: overfills, with and without a handle. */
  hs_object_cache_set_strict(c, false);
  CHECK(!hs_object_cache_strict(c));
  hs_object *h5 = put(c, "5", new_val(100), true);
  CHECK(h5 != NULL);
  put(c, "6", new_val(100), false);
  CHECK_EQ(hs_object_cache_usage(c), 3200);
  hs_object *g6 = get(c, "6");
  CHECK(g6 != NULL);
  /* Releases while over capacity free what they let go of. */
  CHECK(hs_object_release(c, h5, false));
  CHECK(hs_object_release(c, g6, false));
  CHECK_EQ(hs_object_cache_usage(c), 3000);
  CHECK(!hs_object_release(c, h1, false));
  CHECK(!hs_object_release(c, h2, false));
  CHECK_EQ(hs_object_cache_usage(c), 3000);
  CHECK_EQ(hs_object_cache_pinned_usage(c), 0);
  /* A huge charge: never fits. */
  hs_object_cache_set_strict(c, true);
  val *huge = new_val((size_t)1 << 40);
  CHECK_ST(hs_object_cache_insert(c, "h", 1, huge, huge->charge, NULL, HS_OBJECT_NORMAL, &h, NULL),
           HS_ERR_NO_BUFFERS);
  atomic_store(&huge->freed, 1);
  CHECK_EQ(hs_object_cache_count(c), 2); /* nothing was evicted for it in vain */
  hs_object_cache_set_strict(c, false);
  val *huge2 = new_val((size_t)1 << 40);
  hs_object *hh = put(c, "h", huge2, true);
  CHECK(hh && hs_object_cache_usage(c) == 3000 + huge2->charge);
  CHECK(hs_object_release(c, hh, false)); /* over capacity: goes */
  CHECK_EQ(hs_object_cache_usage(c), 3000);
  CHECK_OK(done(c));
  check_all_freed_once();
}

/* Rule 8 on the release's fast path: an entry of the policy (not an
 * outsider, which always releases under the lock) let go of while its
 * shard is over capacity goes, whether its reference came from its insert
 * or from a lookup; once the shard is back under, a release keeps. */
static void test_release_over_capacity(void) {
  reset_vals();
  hs_object_cache *c = make(1000, 0, false, "s3fifo");
  val *a = new_val(600), *b = new_val(600);
  hs_object *ha = put(c, "a", a, true);
  hs_object_release(c, ha, false); /* in the policy, unreferenced */
  ha = get(c, "a");                /* referenced by a lookup */
  CHECK(ha != NULL);
  hs_object *hb = put(c, "b", b, true); /* no room: overfilled */
  CHECK_EQ(hs_object_cache_usage(c), 1200);
  CHECK(hs_object_release(c, ha, false)); /* over capacity: goes */
  CHECK_EQ(atomic_load(&a->freed), 1);
  CHECK_EQ(hs_object_cache_usage(c), 600);
  CHECK(!hs_object_release(c, hb, false)); /* under now: kept */
  hs_object *g = get(c, "b");
  CHECK(g != NULL);
  if (g) CHECK(!hs_object_release(c, g, false));
  CHECK_OK(done(c));
  check_all_freed_once();
}

/* Capacity 0, charge 0, keys long and empty. */
static void test_edges(void) {
  reset_vals();
  hs_object_cache *c = make(0, 0, false, NULL);
  put(c, "x", new_val(10), false);
  CHECK(get(c, "x") == NULL); /* 0 holds nothing unreferenced */
  hs_object *h = put(c, "y", new_val(10), true);
  CHECK(get(c, "y") == h);
  hs_object_release(c, h, false);
  CHECK(hs_object_release(c, h, false)); /* over capacity */
  CHECK_EQ(hs_object_cache_usage(c), 0);
  CHECK_OK(done(c));

  c = make(1000, 0, true, NULL);
  for (int i = 0; i < 200; i++) { /* zero charges: usage stays 0 */
    char k[16];
    snprintf(k, sizeof k, "z%d", i);
    put(c, k, new_val(0), i % 2 == 0);
  }
  CHECK_EQ(hs_object_cache_usage(c), 0);
  CHECK_EQ(hs_object_cache_pinned_usage(c), 0);
  CHECK(hs_object_cache_count(c) >= 100); /* the referenced ones at least */
  static char big[100000];
  memset(big, 'k', sizeof big);
  hs_object *hb = NULL;
  CHECK_OK(
      hs_object_cache_insert(c, big, sizeof big, new_val(1), 1, NULL, HS_OBJECT_NORMAL, &hb, NULL));
  big[sizeof big - 1] = 'j';
  CHECK(hs_object_cache_lookup(c, big, sizeof big) == NULL);
  big[sizeof big - 1] = 'k';
  hs_object *g = hs_object_cache_lookup(c, big, sizeof big);
  CHECK(g == hb);
  hs_object_release(c, g, false);
  hs_object *he = NULL;
  CHECK_OK(hs_object_cache_insert(c, NULL, 0, new_val(1), 1, NULL, HS_OBJECT_LOW, &he, NULL));
  g = hs_object_cache_lookup(c, "", 0); /* the empty key, however spelled */
  CHECK(g == he);
  size_t len = 9;
  hs_object_key(g, &len);
  CHECK_EQ(len, 0);
  hs_object_release(c, g, false);
  hs_object_release(c, he, false);
  hs_object_release(c, hb, false);
  /* The held zero-charge entries: release them all. */
  for (int i = 0; i < 200; i += 2) {
    char k[16];
    snprintf(k, sizeof k, "z%d", i);
    hs_object *z = get(c, k);
    REQUIRE(z);
    hs_object_release(c, z, false);
    hs_object_release(c, z, false); /* the insert's reference */
  }
  CHECK_EQ(hs_object_cache_pinned_usage(c), 0);
  CHECK_OK(done(c));
  check_all_freed_once();
}

/* Thousands of tiny entries in a cache sized for big ones: the policy's
 * slots grow, nothing is evicted that fits. */
static void test_slot_growth(void) {
  reset_vals();
  hs_object_cache_options o;
  hs_object_cache_options_init(&o);
  o.capacity = 1 << 20;
  o.shard_bits = 1;
  o.expected_charge = 64 << 10;
  o.free_object = free_val;
  hs_object_cache *c = NULL;
  CHECK_OK(hs_object_cache_create(&o, &c));
  hs_object *held = put(c, "held", new_val(16), true);
  for (int i = 0; i < 20000; i++) {
    char k[16];
    snprintf(k, sizeof k, "t%d", i);
    put(c, k, new_val(16), false);
  }
  CHECK_EQ(hs_object_cache_count(c), 20001);
  CHECK_EQ(hs_object_cache_usage(c), 20001 * 16);
  hs_object_cache_stats st;
  CHECK_OK(hs_object_cache_stats_get(c, &st));
  CHECK_EQ(st.evictions, 0);
  hs_object *g = get(c, "t123");
  CHECK(g != NULL);
  if (g) hs_object_release(c, g, false);
  CHECK(hs_object_value(held) != NULL);
  hs_object_release(c, held, false);
  CHECK_OK(done(c));
  check_all_freed_once();
}

/* ---- misuse --------------------------------------------------------------- */

static int destroy_held(void) {
  reset_vals();
  hs_object_cache *c = make(1000, 0, false, NULL);
  val *v = new_val(10);
  hs_object *h = put(c, "k", v, true);
  int bad = hs_object_cache_destroy(c) != HS_ERR_MISUSE;
  bad |= atomic_load(&v->freed) != 0;       /* nothing freed */
  bad |= hs_object_value(get(c, "k")) != v; /* still usable */
  hs_object_cache_erase(c, "k", 1);         /* erased but held */
  bad |= hs_object_cache_destroy(c) != HS_ERR_MISUSE;
  hs_object_release(c, h, false);
  bad |= atomic_load(&v->freed) != 0;
  hs_object_release(c, h, false);
  bad |= atomic_load(&v->freed) != 1;
  bad |= hs_object_cache_destroy(c) != HS_OK;
  return bad;
}

static int release_unreferenced(void) {
  reset_vals();
  hs_object_cache *c = make(1000, 0, false, NULL);
  hs_object *h = put(c, "k", new_val(10), true);
  hs_object_release(c, h, false);
  hs_object *g = get(c, "k");
  hs_object_release(c, g, false);
  int bad = hs_object_release(c, g, false) != false; /* refs 0: refused */
  bad |= hs_object_ref(c, g) != HS_ERR_MISUSE;
  bad |= hs_object_cache_usage(c) != 10 || hs_object_cache_pinned_usage(c) != 0;
  return bad;
}

static void test_misuse(void) {
  reset_vals();
  hs_object_cache *c = make(1000, 0, false, NULL);
  hs_object *h = (hs_object *)1;
  CHECK_ST(hs_object_cache_create(NULL, NULL), HS_ERR_MISUSE);
  hs_object_cache_options o;
  hs_object_cache_options_init(&o);
  o.shard_bits = 17;
  hs_object_cache *bad = (hs_object_cache *)1;
  CHECK_ST(hs_object_cache_create(&o, &bad), HS_ERR_INVALID);
  CHECK(bad == NULL);
  o.shard_bits = 0;
  o.policy = "no-such-policy";
  CHECK_ST(hs_object_cache_create(&o, &bad), HS_ERR_INVALID);
  o.policy = "belady";
  CHECK_ST(hs_object_cache_create(&o, &bad), HS_ERR_INVALID);
  CHECK_ST(hs_object_cache_insert(NULL, "k", 1, NULL, 1, NULL, HS_OBJECT_NORMAL, &h, NULL),
           HS_ERR_MISUSE);
  CHECK(h == NULL);
  CHECK_ST(hs_object_cache_insert(c, NULL, 1, NULL, 1, NULL, HS_OBJECT_NORMAL, NULL, NULL),
           HS_ERR_MISUSE);
  CHECK_ST(hs_object_cache_insert(c, "k", 1, NULL, 1, NULL, (hs_object_priority)7, NULL, NULL),
           HS_ERR_MISUSE);
  CHECK(hs_object_cache_lookup(NULL, "k", 1) == NULL);
  CHECK(hs_object_cache_lookup(c, NULL, 3) == NULL);
  CHECK_ST(hs_object_ref(NULL, h), HS_ERR_MISUSE);
  CHECK_ST(hs_object_ref(c, NULL), HS_ERR_MISUSE);
  CHECK(!hs_object_release(c, NULL, false));
  CHECK(!hs_object_release(NULL, h, false));
  CHECK(hs_object_value(NULL) == NULL && hs_object_charge(NULL) == 0 &&
        hs_object_tag(NULL) == NULL);
  CHECK(hs_object_key(NULL, NULL) == NULL);
  hs_object_cache_erase(NULL, "k", 1);
  hs_object_cache_erase(c, NULL, 1);
  hs_object_cache_erase_unreferenced(NULL);
  hs_object_cache_set_capacity(NULL, 1);
  hs_object_cache_set_strict(NULL, true);
  CHECK(!hs_object_cache_strict(NULL));
  CHECK_EQ(hs_object_cache_capacity(NULL), 0);
  CHECK_EQ(hs_object_cache_usage(NULL) + hs_object_cache_pinned_usage(NULL), 0);
  CHECK_EQ(hs_object_cache_count(NULL) + hs_object_cache_new_id(NULL), 0);
  hs_object_cache_for_each(NULL, NULL, NULL, 0);
  hs_object_cache_stats st;
  CHECK_ST(hs_object_cache_stats_get(NULL, &st), HS_ERR_MISUSE);
  CHECK_ST(hs_object_cache_stats_get(c, NULL), HS_ERR_MISUSE);
  CHECK_OK(hs_object_cache_destroy(NULL));
  CHECK_OK(done(c));
  in_child("destroy with a handle held", destroy_held);
  in_child("release of an unreferenced entry", release_unreferenced);
}

/* ---- for_each --------------------------------------------------------------- */

static int seen_count[1000];
static void count_seen(const void *key, size_t key_len, void *value, size_t charge, void *tag,
                       void *arg) {
  (void)value, (void)charge, (void)tag, (void)arg;
  char k[16] = {0};
  memcpy(k, key, key_len < sizeof k ? key_len : sizeof k - 1); /* keys are not terminated */
  seen_count[atoi(k + 1)]++;
}

static void test_for_each(void) {
  reset_vals();
  hs_object_cache *c = make(1 << 20, 2, false, NULL);
  hs_object *held[1000];
  for (int i = 0; i < 1000; i++) {
    char k[16];
    snprintf(k, sizeof k, "f%d", i);
    held[i] = put(c, k, new_val(10), i % 3 == 0);
  }
  memset(seen_count, 0, sizeof seen_count);
  hs_object_cache_for_each(c, count_seen, NULL, 3);
  int wrong = 0;
  for (int i = 0; i < 1000; i++) wrong += seen_count[i] != 1;
  CHECK_EQ(wrong, 0);
  hs_object_cache_erase_unreferenced(c);
  CHECK_EQ(hs_object_cache_count(c), 334);
  memset(seen_count, 0, sizeof seen_count);
  hs_object_cache_for_each(c, count_seen, NULL, 0);
  wrong = 0;
  for (int i = 0; i < 1000; i++) wrong += seen_count[i] != (i % 3 == 0);
  CHECK_EQ(wrong, 0);
  for (int i = 0; i < 1000; i += 3) hs_object_release(c, held[i], false);
  CHECK_OK(done(c));
  check_all_freed_once();
}

/* ---- the shadow model, for every policy the pool runs --------------------- */

#define MK 48  /* keys */
#define MH 400 /* handles held at most */
typedef struct model {
  val *cur[MK]; /* the key's value in the table, per the model, or NULL */
  int refs[MH + 4096];
  hs_object *held[MH];
  int nheld;
} model;

static uint64_t rng_state;
/* xorshift64 from a small seed starts with small, correlated numbers:
 * the seed is mixed first. */
static void seed_rng(uint64_t seed) {
  seed = (seed + 0x9e3779b97f4a7c15ull) * 0xbf58476d1ce4e5b9ull;
  rng_state = (seed ^ (seed >> 31)) | 1;
}
static uint64_t rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

static void model_check(hs_object_cache *c, const model *m, int step) {
  /* Usage: every value not yet freed; pinned: every value held. */
  uint64_t usage = 0, pinned = 0, count = 0;
  int n = atomic_load(&nvals);
  for (int i = 0; i < n; i++)
    if (atomic_load(&vals[i].freed) == 0) usage += vals[i].charge;
  for (int i = 0; i < n; i++)
    if (m->refs[i] > 0) {
      pinned += vals[i].charge;
      CHECK_EQ(atomic_load(&vals[i].freed), 0); /* a held value is never freed */
    }
  for (int k = 0; k < MK; k++)
    if (m->cur[k] && atomic_load(&m->cur[k]->freed) == 0) count++;
  if (hs_object_cache_usage(c) != usage || hs_object_cache_pinned_usage(c) != pinned ||
      hs_object_cache_count(c) != count) {
    check_failed++;
    fprintf(stderr, "step %d: usage %llu/%llu pinned %llu/%llu count %llu/%llu\n", step,
            (unsigned long long)hs_object_cache_usage(c), (unsigned long long)usage,
            (unsigned long long)hs_object_cache_pinned_usage(c), (unsigned long long)pinned,
            (unsigned long long)hs_object_cache_count(c), (unsigned long long)count);
  } else {
    check_passed++;
  }
}

static void model_run(const char *policy, int shard_bits, uint64_t seed) {
  reset_vals();
  static model m;
  memset(&m, 0, sizeof m);
  seed_rng(seed);
  bool strict = seed & 1;
  hs_object_cache *c = make(4000, shard_bits, strict, policy);
  int steps = 6000;
  for (int step = 0; step < steps; step++) {
    int k = (int)(rnd() % MK);
    char key[8];
    snprintf(key, sizeof key, "m%d", k);
    unsigned op = (unsigned)(rnd() % 100);
    if (op < 35) { /* insert */
      size_t charge = rnd() % 8 == 0 ? 0 : 1 + rnd() % 600;
      if (rnd() % 200 == 0) charge = 5000; /* above the capacity */
      val *v = new_val(charge);
      bool handle = m.nheld < MH && rnd() % 3 == 0;
      hs_object *h = NULL;
      hs_status st =
          hs_object_cache_insert(c, key, strlen(key), v, charge, NULL,
                                 (hs_object_priority)(rnd() % 3), handle ? &h : NULL, NULL);
      if (st == HS_ERR_NO_BUFFERS) {
        CHECK(strict && handle && h == NULL && atomic_load(&v->freed) == 0);
        atomic_store(&v->freed, 1); /* ours again: "freed" by us */
        continue;
      }
      CHECK_OK(st);
      /* Inserted (or, strict without a handle, freed at once): the old
       * value of the key left the table either way. */
      if (atomic_load(&v->freed) == 0)
        m.cur[k] = v;
      else /* refused, freed at once: the key's old value stays */
        CHECK(!handle && (strict || charge > c->shards[0].capacity));
      if (h) {
        CHECK(hs_object_value(h) == v);
        m.refs[v - vals]++;
        m.held[m.nheld++] = h;
      }
    } else if (op < 70) { /* lookup */
      hs_object *h = get(c, key);
      val *want = m.cur[k] && atomic_load(&m.cur[k]->freed) == 0 ? m.cur[k] : NULL;
      CHECK(h == NULL ? want == NULL : hs_object_value(h) == want);
      if (h) {
        if (m.nheld < MH && rnd() % 2) {
          m.refs[want - vals]++;
          m.held[m.nheld++] = h;
        } else {
          hs_object_release(c, h, rnd() % 4 == 0);
          if (atomic_load(&want->freed)) m.cur[k] = NULL;
        }
      }
    } else if (op < 88) { /* release one held */
      if (!m.nheld) continue;
      int i = (int)(rnd() % (uint64_t)m.nheld);
      hs_object *h = m.held[i];
      val *v = hs_object_value(h);
      if (rnd() % 5 == 0) { /* another reference, then two releases */
        CHECK_OK(hs_object_ref(c, h));
        CHECK(!hs_object_release(c, h, false));
      }
      bool erase = rnd() % 4 == 0;
      m.held[i] = m.held[--m.nheld];
      bool freed = hs_object_release(c, h, erase);
      m.refs[v - vals]--;
      CHECK_EQ(freed, atomic_load(&v->freed) == 1);
      if (m.refs[v - vals] > 0) CHECK(!freed);
      if (freed) {
        for (int j = 0; j < MK; j++)
          if (m.cur[j] == v) m.cur[j] = NULL;
      }
    } else if (op < 95) {
      hs_object_cache_erase(c, key, strlen(key));
      m.cur[k] = NULL;
    } else if (op < 97) {
      hs_object_cache_erase_unreferenced(c);
    } else if (op < 99) {
      hs_object_cache_set_capacity(c, rnd() % 3 == 0 ? 0 : 500 + rnd() % 8000);
    } else {
      hs_object_cache_set_strict(c, strict = !strict);
    }
    model_check(c, &m, step);
    if (check_failed > 20) break;
  }
  while (m.nheld) {
    hs_object *h = m.held[--m.nheld];
    m.refs[(val *)hs_object_value(h) - vals]--;
    hs_object_release(c, h, false);
  }
  model_check(c, &m, steps);
  CHECK_OK(done(c));
  check_all_freed_once();
}

static void model_policy(const char *name, void *arg) {
  int *n = arg; /* the policy's place in the list: its seeds */
  unsigned before = check_failed;
  model_run(name, 0, 0x9e3779b97f4a7c15ull + (uint64_t)*n);
  model_run(name, 2, 0x1234567ull * (uint64_t)(*n + 3));
  if (check_failed != before) fprintf(stderr, "  (policy %s)\n", name);
  (*n)++;
}

static void test_model_every_policy(void) {
  int n = 0;
  CHECK_EQ(each_pool_policy(model_policy, &n), n);
  CHECK(n >= 10);
}

/* ---- the scan detector ---------------------------------------------------- */

/* Keys are a stream (a file number) and a position (an offset). */
typedef struct skey {
  uint32_t stream;
  uint64_t pos;
} __attribute__((packed)) skey;

static bool locate_skey(const void *key, size_t key_len, uint64_t *stream, uint64_t *position,
                        void *ctx) {
  (void)ctx;
  if (key_len != sizeof(skey)) return false;
  skey k;
  memcpy(&k, key, sizeof k);
  *stream = k.stream;
  *position = k.pos;
  return true;
}

#define BLOCK      4096u
#define FILE_BYTES (64ull << 20)

static hs_object_cache *make_scanning(uint64_t capacity, const char *policy, uint32_t scan_run) {
  hs_object_cache_options o;
  hs_object_cache_options_init(&o);
  o.capacity = capacity;
  o.shard_bits = 2;
  o.policy = policy;
  o.locate = scan_run ? locate_skey : NULL;
  o.scan_run = scan_run;
  o.free_object = free_val;
  hs_object_cache *c = NULL;
  CHECK_OK(hs_object_cache_create(&o, &c));
  REQUIRE(c);
  return c;
}

/* A block read as RocksDB does it: lookup; on a miss, insert. */
static bool read_block(hs_object_cache *c, uint32_t stream, uint64_t pos) {
  skey k = {stream, pos};
  hs_object *h = hs_object_cache_lookup(c, &k, sizeof k);
  if (h) {
    hs_object_release(c, h, false);
    return true;
  }
  REQUIRE(atomic_load(&nvals) < MAX_VALUES - 1);
  CHECK_OK(hs_object_cache_insert(c, &k, sizeof k, new_val(BLOCK), BLOCK, NULL, HS_OBJECT_NORMAL,
                                  NULL, NULL));
  return false;
}

static uint64_t scans_of(hs_object_cache *c) {
  hs_object_cache_stats st;
  hs_object_cache_stats_get(c, &st);
  return st.scans;
}

/* (a): a scanning thread, lockstep with a thread reading a hot set. */
typedef struct scan_job {
  hs_object_cache *c;
  pthread_barrier_t *go;
  int rounds, per_round, streams;
  bool backward;
} scan_job;

static void *scanner(void *arg) {
  scan_job *j = arg;
  uint64_t next[8] = {0};
  for (int r = 0; r < j->rounds; r++) {
    pthread_barrier_wait(j->go);
    for (int i = 0; i < j->per_round; i++) {
      int s = (r * j->per_round + i) % j->streams;
      uint64_t n = next[s]++;
      uint64_t pos = j->backward ? FILE_BYTES - (n + 1) * BLOCK : n * BLOCK;
      read_block(j->c, 1 + (uint32_t)s, pos % FILE_BYTES);
    }
    pthread_barrier_wait(j->go);
  }
  return NULL;
}

#define HOT 400
static uint32_t hot_stream(int i) {
  return 1000 + (uint32_t)(i % 50);
}
static uint64_t hot_pos(int i) {
  return (uint64_t)(i / 50) * (8ull << 20) + 5 * BLOCK;
}

/* The hot set's hit ratio over `rounds` point reads, each followed by
 * per_round scan reads on another thread (0: no scan). */
static double hot_ratio(const char *policy, int streams, bool backward, int per_round,
                        uint64_t *scans) {
  reset_vals();
  hs_object_cache *c = make_scanning(4 << 20, policy, 16);
  seed_rng(42);
  for (int pass = 0; pass < 3; pass++)
    for (int i = 0; i < HOT; i++) read_block(c, hot_stream(i), hot_pos(i));
  pthread_barrier_t go;
  pthread_barrier_init(&go, NULL, 2);
  /* Each round is two barrier waits, which the sanitizer runs make slow:
   * HOTSET_TEST_QUICK takes a fifth (the reads are the same, seeded). */
  const char *quick = getenv("HOTSET_TEST_QUICK");
  int rounds = quick && !strcmp(quick, "1") ? 4000 : 20000;
  scan_job j = {c, &go, rounds, per_round, streams, backward};
  pthread_t t;
  REQUIRE(pthread_create(&t, NULL, scanner, &j) == 0);
  int hits = 0;
  for (int r = 0; r < rounds; r++) {
    int i = (int)(rnd() % HOT);
    hits += read_block(c, hot_stream(i), hot_pos(i));
    pthread_barrier_wait(&go); /* the scanner's turn */
    pthread_barrier_wait(&go);
  }
  pthread_join(t, NULL);
  pthread_barrier_destroy(&go);
  *scans = scans_of(c);
  CHECK_OK(done(c));
  check_all_freed_once();
  return (double)hits / rounds;
}

static void test_scan_protects_hot_set(void) {
  const char *policies[] = {"s3fifo", "lru", "clock-sweep", "sieve", "2q"};
  for (size_t p = 0; p < sizeof policies / sizeof *policies; p++) {
    uint64_t scans = 0;
    double base = hot_ratio(policies[p], 1, false, 0, &scans);
    CHECK_EQ(scans, 0);
    struct {
      int streams;
      bool backward;
    } cases[] = {{1, false}, {3, false}, {1, true}, {3, true}};
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
      double with = hot_ratio(policies[p], cases[k].streams, cases[k].backward, 3, &scans);
      if (with < 0.99 * base) {
        check_failed++;
        fprintf(stderr, "scan (%s, %d streams%s): hot set hit ratio %.4f, %.4f without\n",
                policies[p], cases[k].streams, cases[k].backward ? ", backward" : "", with, base);
      } else {
        check_passed++;
      }
      CHECK(scans >= (uint64_t)cases[k].streams);
    }
  }
}

/* (b), (c), (e): point reads, short ranges, random reads that miss a
 * lot: never a scan. */
static void test_not_scans(void) {
  reset_vals();
  hs_object_cache *c = make_scanning(1 << 20, NULL, 16);
  seed_rng(7);
  for (int g = 0; g < 5000; g++) { /* (b) index block at the end, then a data block */
    uint32_t f = (uint32_t)(rnd() % 20);
    read_block(c, f, FILE_BYTES - BLOCK);
    read_block(c, f, rnd() % (FILE_BYTES / BLOCK) * BLOCK);
  }
  CHECK_EQ(scans_of(c), 0);
  for (int g = 0; g < 2000; g++) { /* (c) a seek and up to 10 next blocks */
    uint32_t f = (uint32_t)(rnd() % 20);
    read_block(c, f, FILE_BYTES - BLOCK);
    uint64_t at = rnd() % (FILE_BYTES / BLOCK - 16) * BLOCK;
    for (int n = 0, len = 1 + (int)(rnd() % 11); n < len; n++) read_block(c, f, at + n * BLOCK);
  }
  CHECK_EQ(scans_of(c), 0);
  for (int g = 0; g < 20000; g++) /* (e) random reads over 20 small files, mostly misses */
    read_block(c, (uint32_t)(rnd() % 20), rnd() % 4096 * BLOCK);
  CHECK_EQ(scans_of(c), 0);
  hs_object_cache_stats st;
  hs_object_cache_stats_get(c, &st);
  CHECK(st.misses > st.hits); /* they did miss a lot */
  CHECK_EQ(st.scan_accesses, 0);
  CHECK_OK(done(c));
  check_all_freed_once();
}

/* (f): RocksDB's block keys, a per-file base XOR (offset >> 2). A scan's
 * consecutive positions are near by XOR except where the offset crosses a
 * power-of-two boundary above scan_gap's bits; the scan must stay one scan
 * across them (flagged nearly whole, counted once), forward and backward,
 * while random reads over 20 such files never form one. */
static uint64_t xor_pos(uint32_t file, uint64_t offset) {
  return (0x9e3779b97f4a7c15ull * (file + 1)) ^ (offset >> 2);
}

static void test_xor_scans(void) {
  for (int backward = 0; backward <= 1; backward++) {
    reset_vals();
    hs_object_cache *c = make_scanning(1 << 20, NULL, 16);
    int blocks = 2048; /* 8 MiB: 15 crossings of 512 KiB, 7 of 1 MiB, 1 of 4 MiB */
    for (int b = 0; b < blocks; b++) {
      uint64_t off = (uint64_t)(backward ? blocks - 1 - b : b) * BLOCK;
      read_block(c, 3, xor_pos(3, off));
    }
    hs_object_cache_stats st;
    hs_object_cache_stats_get(c, &st);
    /* each block of the scan past its first scan_run + 1: its miss and
     * its insert */
    uint64_t whole = 2 * (uint64_t)(blocks - 17);
    if (st.scan_accesses < whole * 99 / 100 || st.scans != 1) {
      check_failed++;
      fprintf(stderr,
              "an XOR-keyed scan%s: %llu of %llu accesses inside the scan, counted as %llu "
              "scans\n",
              backward ? " (backward)" : "", (unsigned long long)st.scan_accesses,
              (unsigned long long)whole, (unsigned long long)st.scans);
    } else {
      check_passed++;
    }
    CHECK_OK(done(c));
    check_all_freed_once();
  }
  reset_vals();
  hs_object_cache *c = make_scanning(1 << 20, NULL, 16);
  seed_rng(11);
  for (int g = 0; g < 20000; g++) { /* random reads over 20 files of 64 MiB */
    uint32_t f = (uint32_t)(rnd() % 20);
    read_block(c, f, xor_pos(f, rnd() % (FILE_BYTES / BLOCK) * BLOCK));
  }
  for (int g = 0; g < 5000; g++) { /* an index block at the end, then a data block */
    uint32_t f = (uint32_t)(rnd() % 20);
    read_block(c, f, xor_pos(f, FILE_BYTES - BLOCK));
    read_block(c, f, xor_pos(f, rnd() % (FILE_BYTES / BLOCK) * BLOCK));
  }
  CHECK_EQ(scans_of(c), 0);
  CHECK_OK(done(c));
  check_all_freed_once();
}

/* (d): a scan over a range that fits, read again and again, ends up
 * cached. Point reads elsewhere between the passes keep the cache full, so
 * the scan's entries, first victims while it is taken for a scan, are
 * evicted unless the range is known to fit. Returns the hits of the last
 * four passes (of 300 blocks each); scan_run 0: no detection. */
static int fits_hits(const char *policy, uint32_t scan_run) {
  reset_vals();
  hs_object_cache *c = make_scanning(4 << 20, policy, scan_run);
  int blocks = 300, hits = 0; /* 1.2 MiB of 4 */
  seed_rng(99);
  for (int pass = 0; pass < 8; pass++) {
    for (int i = 0; i < 600; i++) read_block(c, 100 + (uint32_t)(rnd() % 50), rnd() % 4096 * BLOCK);
    for (int b = 0; b < blocks; b++) {
      bool hit = read_block(c, 9, (uint64_t)b * BLOCK);
      hits += pass >= 4 && hit;
    }
  }
  CHECK(scans_of(c) >= (scan_run ? 1u : 0u));
  CHECK_OK(done(c));
  check_all_freed_once();
  return hits;
}

static void test_scan_that_fits(void) {
  /* s3fifo and lru keep the range whole; clock-sweep, under this
   * pressure, keeps part of it even with no scan detection at all: the
   * detector must not make it keep less. */
  const char *policies[] = {"s3fifo", "lru", "clock-sweep"};
  for (size_t p = 0; p < sizeof policies / sizeof *policies; p++) {
    int with = fits_hits(policies[p], 16), without = fits_hits(policies[p], 0);
    bool whole = strcmp(policies[p], "clock-sweep") != 0;
    if ((whole && with < 4 * 300 * 9 / 10) || with < without * 9 / 10) {
      check_failed++;
      fprintf(stderr,
              "a scan that fits (%s): %d of 1200 blocks hit in the last passes, %d without "
              "scan detection\n",
              policies[p], with, without);
    } else {
      check_passed++;
    }
  }
}

/* (d), at its start: a range read again after its scan's entries were
 * evicted is known to fit within OT_GHOSTS misses of its run (rule 10's
 * ghosts), long before scan_run, so none of the second pass is taken for
 * a scan — under a lock-free policy, whose misses outside a scan take no
 * lock and must still ask the ghosts (rule 11), as under a locked one.
 * The second pass starts past the first's first scan_run blocks, which
 * were not yet the scan's and left no ghosts. Its first miss is still
 * the first pass's (a stray the old run outlives): that one, and its
 * insert, are all that may be taken for a scan's. */
static void test_fit_known_early(void) {
  const char *policies[] = {"s3fifo", "lru"};
  uint64_t taken[2];
  for (size_t p = 0; p < sizeof policies / sizeof *policies; p++) {
    reset_vals();
    hs_object_cache *c = make_scanning(4 << 20, policies[p], 16);
    seed_rng(5);
    for (int i = 0; i < 1500; i++) /* point reads: the cache full, no scan */
      read_block(c, 100 + (uint32_t)(rnd() % 50), rnd() % 4096 * BLOCK);
    for (int b = 0; b < 300; b++) read_block(c, 9, (uint64_t)b * BLOCK); /* a scan */
    hs_object_cache_stats first, second;
    hs_object_cache_stats_get(c, &first);
    for (int b = 100; b < 300; b++) read_block(c, 9, (uint64_t)b * BLOCK);
    hs_object_cache_stats_get(c, &second);
    CHECK_EQ(first.scans, 1);
    CHECK(first.scan_accesses > 2 * 200);      /* the first pass was a scan */
    CHECK(second.misses > first.misses + 100); /* its entries were evicted */
    taken[p] = second.scan_accesses - first.scan_accesses;
    CHECK_OK(done(c));
    check_all_freed_once();
  }
  if (taken[0] > 2 || taken[1] > 2) {
    check_failed++;
    fprintf(stderr,
            "the range read again: %llu (s3fifo) and %llu (lru) accesses taken for a "
            "scan's, want at most 2\n",
            (unsigned long long)taken[0], (unsigned long long)taken[1]);
  } else {
    check_passed++;
  }
}

/* ---- threads -------------------------------------------------------------- */

#define TKEYS 16
typedef struct tjob {
  hs_object_cache *c;
  uint64_t seed;
  int ops;
} tjob;

static void count_each(const void *key, size_t key_len, void *value, size_t charge, void *tag,
                       void *arg) {
  (void)key, (void)key_len, (void)tag;
  const val *v = value;
  CHECK(atomic_load(&v->freed) == 0 && v->charge == charge); /* in the table: never freed */
  (*(int *)arg)++;
}

static void *racer(void *arg) {
  tjob *j = arg;
  uint64_t x = j->seed;
  hs_object *held[8];
  int nheld = 0;
  for (int op = 0; op < j->ops; op++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    int k = (int)(x % TKEYS);
    char key[8];
    snprintf(key, sizeof key, "r%d", k);
    unsigned what = (unsigned)((x >> 20) % 100);
    for (int i = 0; i < nheld; i++) { /* what we hold is intact */
      const val *v = hs_object_value(held[i]);
      if (atomic_load(&v->freed) != 0) {
        check_failed++;
        fprintf(stderr, "a held value was freed\n");
      }
    }
    if (what < 30) {
      val *v = new_val(1 + (x >> 40) % 300);
      v->key = k;
      hs_object *h = NULL;
      hs_status st = hs_object_cache_insert(j->c, key, strlen(key), v, v->charge, NULL,
                                            (hs_object_priority)((x >> 50) % 3),
                                            nheld < 8 && (x & 1) ? &h : NULL, NULL);
      if (st == HS_ERR_NO_BUFFERS) atomic_store(&v->freed, 1); /* ours again */
      if (h) held[nheld++] = h;
    } else if (what < 65) {
      hs_object *h = hs_object_cache_lookup(j->c, key, strlen(key));
      if (h) {
        const val *v = hs_object_value(h);
        if (v->key != k || atomic_load(&v->freed) != 0) {
          check_failed++;
          fprintf(stderr, "lookup of %s found a wrong or freed value\n", key);
        }
        if (nheld < 8)
          held[nheld++] = h;
        else
          hs_object_release(j->c, h, (x >> 30) % 5 == 0);
      }
    } else if (what < 85) {
      if (nheld) {
        int i = (int)((x >> 33) % (uint64_t)nheld);
        if ((x >> 36) % 4 == 0 && hs_object_ref(j->c, held[i]) == HS_OK)
          hs_object_release(j->c, held[i], false);
        hs_object_release(j->c, held[i], (x >> 30) % 5 == 0);
        held[i] = held[--nheld];
      }
    } else if (what < 93) {
      hs_object_cache_erase(j->c, key, strlen(key));
    } else if (what < 95) {
      hs_object_cache_erase_unreferenced(j->c);
    } else if (what < 97) {
      hs_object_cache_set_capacity(j->c, 1000 + (x >> 40) % 6000);
    } else if (what < 98) {
      hs_object_cache_set_strict(j->c, (x >> 41) & 1);
    } else {
      int n = 0;
      hs_object_cache_for_each(j->c, count_each, &n, 5);
      CHECK(n <= TKEYS);
    }
  }
  while (nheld) hs_object_release(j->c, held[--nheld], false);
  return NULL;
}

/* After the threads: nothing pinned, the usage is the values not freed,
 * and every value is freed exactly once by the destroy. */
static void race_over(hs_object_cache *c) {
  CHECK_EQ(hs_object_cache_pinned_usage(c), 0);
  uint64_t usage = 0;
  int n = atomic_load(&nvals);
  for (int i = 0; i < n; i++)
    if (atomic_load(&vals[i].freed) == 0) usage += vals[i].charge;
  CHECK_EQ(hs_object_cache_usage(c), usage);
  CHECK_OK(done(c));
  check_all_freed_once();
}

static void test_threads(void) {
  for (int shard_bits = 0; shard_bits <= 2; shard_bits += 2) {
    reset_vals();
    hs_object_cache *c = make(3000, shard_bits, false, NULL);
    freeing_cache = NULL; /* other threads hold locks legitimately */
    pthread_t t[4];
    tjob jobs[4];
    for (int i = 0; i < 4; i++) {
      jobs[i] = (tjob){c, 0x51ed2701u * (uint64_t)(i + 1) + (uint64_t)shard_bits, 30000};
      REQUIRE(pthread_create(&t[i], NULL, racer, &jobs[i]) == 0);
    }
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    race_over(c);
  }
}

/* Lock-free lookups (rule 11) against a hostile writer: keys erased and
 * inserted again and again in one small shard, so the block a reader just
 * found is freed and reused for another key (or the same key) while the
 * reader is between the bucket and the reference; and a capacity that
 * keeps the inserts evicting. A reader must never get a handle to another
 * key's entry, nor hold a value that gets freed. */
#define HKEYS 6
typedef struct hjob {
  hs_object_cache *c;
  uint64_t seed;
  int ops;
  bool writer;
  atomic_int *stop;
  char (*keys)[64]; /* HKEYS keys to use; NULL: hkey's */
  bool resize;      /* the writer also changes the capacity and erases all */
} hjob;

static void hkey(char *key, int k) {
  /* a long key now and then: out of the entry's line */
  if (k % 3 == 2)
    snprintf(key, 64, "h%d-a-key-longer-than-the-inline-twenty-four-bytes", k);
  else
    snprintf(key, 64, "h%d", k);
}

static void *hostile(void *arg) {
  hjob *j = arg;
  uint64_t x = j->seed;
  char key[64];
  for (int op = 0; j->writer ? op < j->ops : !atomic_load(j->stop); op++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    int k = (int)(x % HKEYS);
    if (j->keys)
      strcpy(key, j->keys[k]);
    else
      hkey(key, k);
    if (j->writer) {
      unsigned what = (unsigned)((x >> 20) % 8);
      if (j->resize && (x >> 50) % 16 == 0) {
        /* rule 12 under a policy rebuilt smaller and larger: the windows
         * stay, the entries they hold are evicted or kept */
        hs_object_cache_set_capacity(j->c, 100 + (x >> 40) % 800);
        if ((x >> 45) % 4 == 0) hs_object_cache_erase_unreferenced(j->c);
      } else if (what < 3) {
        hs_object_cache_erase(j->c, key, strlen(key));
      } else {
        val *v = new_val(100);
        v->key = k;
        CHECK_OK(hs_object_cache_insert(j->c, key, strlen(key), v, v->charge, NULL,
                                        HS_OBJECT_NORMAL, NULL, NULL));
      }
      continue;
    }
    hs_object *h = hs_object_cache_lookup(j->c, key, strlen(key));
    if (!h) continue;
    const val *v = hs_object_value(h);
    size_t len = 0;
    const void *hk = hs_object_key(h, &len);
    if (v->key != k || len != strlen(key) || memcmp(hk, key, len) != 0 ||
        atomic_load(&v->freed) != 0) {
      check_failed++;
      fprintf(stderr, "a lock-free lookup of %s got key %d's entry%s\n", key, v->key,
              atomic_load(&v->freed) ? " (freed)" : "");
    } else {
      check_passed++;
    }
    for (int spin = 0; spin < (int)(x >> 59); spin++) /* hold it a while */
      if (atomic_load(&v->freed) != 0) {
        check_failed++;
        fprintf(stderr, "a held value was freed (evicted while referenced)\n");
        break;
      }
    hs_object_release(j->c, h, (x >> 40) % 16 == 0);
  }
  return NULL;
}

/* Two writers, then two readers until the writers are done. */
static void run_hostile(hs_object_cache *c, uint64_t seed, char (*keys)[64], bool resize) {
  atomic_int stop = 0;
  pthread_t t[4];
  hjob jobs[4];
  for (int i = 0; i < 4; i++) {
    jobs[i] = (hjob){c, seed * (uint64_t)(i + 7), 40000, i < 2, &stop, keys, resize};
    REQUIRE(pthread_create(&t[i], NULL, hostile, &jobs[i]) == 0);
  }
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  atomic_store(&stop, 1);
  for (int i = 2; i < 4; i++) pthread_join(t[i], NULL);
}

static uint64_t lockfree_hits(const hs_object_cache *c) {
  uint64_t n = 0;
  for (uint32_t i = 0; i < OC_STRIPES; i++) n += atomic_load(&c->stripes[i].hits);
  return n;
}

/* Whether the racing readers' hits took the lock-free path depends on how
 * the threads were scheduled; one more hit, alone, on `key` (inserted
 * here) shows which path the cache takes. */
static void check_hit_path(hs_object_cache *c, const char *key) {
  uint64_t before = lockfree_hits(c);
  val *v = new_val(100);
  v->key = -1;
  CHECK_OK(hs_object_cache_insert(c, key, strlen(key), v, v->charge, NULL, HS_OBJECT_NORMAL, NULL,
                                  NULL));
  hs_object *h = hs_object_cache_lookup(c, key, strlen(key));
  CHECK(h != NULL);
  if (h) hs_object_release(c, h, false);
  CHECK_EQ(lockfree_hits(c) - before, c->lockfree ? 1 : 0);
}

static const char *hkey_of(int k) {
  static char key[64];
  hkey(key, k);
  return key;
}

static void test_lockfree_hostile(void) {
  const char *policies[] = {"s3fifo", "clock", "sieve", "lru"};
  for (size_t p = 0; p < sizeof policies / sizeof *policies; p++) {
    reset_vals();
    /* 3 entries of 100 bytes fit: inserts of 6 keys keep evicting */
    hs_object_cache *c = make(300, 0, false, policies[p]);
    freeing_cache = NULL;
    CHECK(c->lockfree == (strcmp(policies[p], "lru") != 0));
    run_hostile(c, 0x9e3779b9u, NULL, false);
    check_hit_path(c, hkey_of(0));
    race_over(c);
  }
}

/* ---- home windows (rule 12) ----------------------------------------------- */

/* n keys of the one shard of `c` whose home windows start at the same
 * block (every third a long key, out of the entry's line): the window
 * fills and its keys race each other for its blocks. */
static int window_keys(hs_object_cache *c, char (*keys)[64], int n) {
  const oc_shard *s = &c->shards[0];
  const hs_object *want = NULL;
  int k = 0;
  for (int i = 0; k < n && i < 10000000; i++) {
    char key[64];
    if (k % 3 == 2)
      snprintf(key, sizeof key, "w%d-a-key-longer-than-the-inline-twenty-four-bytes", i);
    else
      snprintf(key, sizeof key, "w%d", i);
    const hs_object *w = oc_window(s, oc_hash(key, strlen(key)));
    if (!want) want = w;
    if (w == want) strcpy(keys[k++], key);
  }
  return k;
}

static int key_of(hs_object *h) {
  return h ? ((const val *)hs_object_value(h))->key : -1;
}

/* A window that fills: the keys beyond it go to the overflow and are found
 * there without the lock; a home entry erased while held keeps its block
 * until its last release (no insert of its window takes it meanwhile, not
 * even its own key's); then the next insert of the window takes it. */
static void test_home_windows(void) {
  reset_vals();
  hs_object_cache *c = make(100000, 0, false, NULL);
  const oc_shard *s = &c->shards[0];
  char keys[12][64];
  REQUIRE(window_keys(c, keys, 12) == 12);
  const int n = 10;
  for (int i = 0; i < n; i++) {
    val *v = new_val(10);
    v->key = i;
    hs_object *h = put(c, keys[i], v, true);
    CHECK(oc_is_home(s, h) == (i < (int)OC_WINDOW));
    hs_object_release(c, h, false);
  }
  CHECK_EQ(s->ocount, n - OC_WINDOW);
  CHECK_EQ(oc_window_meta(s, oc_hash(keys[0], strlen(keys[0])))->spill, n - OC_WINDOW);
  CHECK_EQ(hs_object_cache_count(c), n);
  uint64_t before = lockfree_hits(c);
  for (int i = 0; i < n; i++) {
    hs_object *h = get(c, keys[i]);
    CHECK_EQ(key_of(h), i);
    if (h) hs_object_release(c, h, false);
  }
  CHECK_EQ(lockfree_hits(c) - before, (uint64_t)n); /* the overflow's too, lock-free */

  /* keys[0] erased while held, then inserted again: the window is full
   * (its held block is not free), so the new entry goes to the overflow,
   * and a lookup steps over the held block to find it without the lock */
  hs_object *held = get(c, keys[0]);
  REQUIRE(held && oc_is_home(s, held));
  hs_object_cache_erase(c, keys[0], strlen(keys[0]));
  val *v = new_val(10);
  v->key = 100;
  hs_object *again = put(c, keys[0], v, true);
  CHECK(again != held && !oc_is_home(s, again));
  hs_object_release(c, again, false);
  before = lockfree_hits(c);
  hs_object *h = get(c, keys[0]);
  CHECK_EQ(key_of(h), 100);
  CHECK_EQ(lockfree_hits(c) - before, 1);
  if (h) hs_object_release(c, h, false);
  size_t len = 0;
  CHECK_EQ(key_of(held), 0);
  CHECK(memcmp(hs_object_key(held, &len), keys[0], strlen(keys[0])) == 0);
  uintptr_t held_at = (uintptr_t)held;
  CHECK(hs_object_release(c, held, false)); /* out of the table: freed */
  v = new_val(10);
  v->key = 101;
  h = put(c, keys[n], v, true); /* the freed block is the window's one free block */
  CHECK((uintptr_t)h == held_at);
  hs_object_release(c, h, false);

  /* the overflow emptied: home entries are found still, lock-free */
  for (int i = OC_WINDOW; i < n; i++) hs_object_cache_erase(c, keys[i], strlen(keys[i]));
  hs_object_cache_erase(c, keys[0], strlen(keys[0]));
  CHECK_EQ(s->ocount, 0);
  CHECK_EQ(oc_window_meta(s, oc_hash(keys[0], strlen(keys[0])))->spill, 0);
  before = lockfree_hits(c);
  for (int i = 1; i < (int)OC_WINDOW; i++) {
    h = get(c, keys[i]);
    CHECK_EQ(key_of(h), i);
    if (h) hs_object_release(c, h, false);
  }
  h = get(c, keys[n]);
  CHECK_EQ(key_of(h), 101);
  if (h) hs_object_release(c, h, false);
  CHECK_EQ(lockfree_hits(c) - before, OC_WINDOW);
  CHECK(get(c, keys[0]) == NULL && get(c, keys[n + 1]) == NULL);
  CHECK_OK(done(c));
  check_all_freed_once();
}

/* free_object may call the cache (rule 7), and runs while the entry's home
 * block is still its: an insert into the same window meanwhile must not
 * take that block (rule 12: a home block is free once its value is given
 * back), or the key free_object was given changes under it. */
static hs_object_cache *reenter;
static char (*reenter_keys)[64];
static atomic_int reenter_bad, reenter_done;

static void reenter_free(const void *key, size_t key_len, void *value, void *tag, void *ctx) {
  val *v = value;
  free_val(key, key_len, value, tag, ctx);
  if (v->key != 0 || atomic_exchange(&reenter_done, 1)) return;
  char copy[64];
  memcpy(copy, key, key_len);
  for (int i = OC_WINDOW; i < (int)OC_WINDOW + 2; i++) {
    val *w = new_val(10);
    w->key = i;
    CHECK_OK(hs_object_cache_insert(reenter, reenter_keys[i], strlen(reenter_keys[i]), w, 10, NULL,
                                    HS_OBJECT_NORMAL, NULL, NULL));
  }
  if (memcmp(key, copy, key_len) != 0 || ((const val *)value)->key != 0)
    atomic_fetch_add(&reenter_bad, 1);
}

static void test_home_reused_after_free(void) {
  reset_vals();
  hs_object_cache_options o;
  hs_object_cache_options_init(&o);
  o.capacity = 100000;
  o.shard_bits = 0;
  o.free_object = reenter_free;
  CHECK_OK(hs_object_cache_create(&o, &reenter));
  REQUIRE(reenter);
  static char keys[8][64];
  REQUIRE(window_keys(reenter, keys, 8) == 8);
  reenter_keys = keys;
  atomic_store(&reenter_done, 0);
  for (int i = 0; i < (int)OC_WINDOW; i++) { /* the window full */
    val *v = new_val(10);
    v->key = i;
    hs_object *h = NULL;
    CHECK_OK(hs_object_cache_insert(reenter, keys[i], strlen(keys[i]), v, 10, NULL,
                                    HS_OBJECT_NORMAL, &h, NULL));
    CHECK(h && oc_is_home(&reenter->shards[0], h));
    if (h) hs_object_release(reenter, h, false);
  }
  hs_object_cache_erase(reenter, keys[0], strlen(keys[0])); /* frees it: reenter_free inserts */
  CHECK_EQ(atomic_load(&reenter_done), 1);
  CHECK_EQ(atomic_load(&reenter_bad), 0);
  for (int i = 1; i < (int)OC_WINDOW + 2; i++) {
    hs_object *h = hs_object_cache_lookup(reenter, keys[i], strlen(keys[i]));
    CHECK_EQ(key_of(h), i);
    if (h) hs_object_release(reenter, h, false);
  }
  CHECK_OK(hs_object_cache_destroy(reenter));
  reenter = NULL;
  check_all_freed_once();
}

/* Entries much smaller than expected (most of them in the overflow) and
 * much larger (a few, all at home), against the shadow of what was put. */
static void test_home_sizes(void) {
  const size_t charges[] = {8, 64 << 10};
  for (size_t t = 0; t < 2; t++) {
    reset_vals();
    hs_object_cache *c = make(1 << 20, 0, false, NULL); /* 4 KiB expected: 320 windows */
    const oc_shard *s = &c->shards[0];
    int n = t == 0 ? 20000 : 64, found = 0, home = 0;
    for (int i = 0; i < n; i++) {
      char key[32];
      snprintf(key, sizeof key, "size%d", i);
      val *v = new_val(charges[t]);
      v->key = i;
      put(c, key, v, false);
    }
    for (int i = 0; i < n; i++) {
      char key[32];
      snprintf(key, sizeof key, "size%d", i);
      hs_object *h = get(c, key);
      if (!h) continue;
      found++;
      home += oc_is_home(s, h);
      CHECK_EQ(key_of(h), i);
      hs_object_release(c, h, false);
    }
    CHECK_EQ((uint64_t)found, hs_object_cache_count(c));
    CHECK_EQ(hs_object_cache_count(c) - home, s->ocount);
    if (t == 0) {
      CHECK(found > 10000 && s->ocount > (uint32_t)found / 2); /* the overflow holds most */
    } else {
      CHECK(found >= 1 && s->ocount == 0); /* a few, all at home */
    }
    CHECK_OK(done(c));
    check_all_freed_once();
  }
}

/* Lock-free lookups racing erase and insert of keys that share one home
 * window (four blocks for six keys: some in the overflow, blocks reused
 * by the window's other keys at once), with and without capacity changes
 * and erase_unreferenced (policy rebuilds) beside them. */
static void widen(void) {
  static _Thread_local uint32_t x = 0x2545f491u;
  x ^= x << 13, x ^= x >> 17, x ^= x << 5;
  if (x % 4 == 0) sched_yield(); /* a writer runs between the hash and the reference */
}

static void test_home_hostile(void) {
  seams.object_probe = widen; /* debug builds: the probe's window widened */
  for (int resize = 0; resize <= 1; resize++) {
    reset_vals();
    hs_object_cache *c = make(300, 0, false, "s3fifo");
    freeing_cache = NULL;
    static char keys[HKEYS][64];
    REQUIRE(window_keys(c, keys, HKEYS) == HKEYS);
    run_hostile(c, 0x7f4a7c15u, keys, resize);
    check_hit_path(c, keys[0]);
    race_over(c);
  }
  seams.object_probe = NULL;
}

/* Every test, or (arguments) only the ones named: a rule broken on
 * purpose can then be checked against the test written for it. */
int main(int argc, char **argv) {
  static const struct {
    const char *name;
    void (*fn)(void);
  } tests[] = {
#define T(f) {#f, f}
      T(test_basics),
      T(test_handles_outlive),
      T(test_strict),
      T(test_release_over_capacity),
      T(test_edges),
      T(test_slot_growth),
      T(test_misuse),
      T(test_for_each),
      T(test_model_every_policy),
      T(test_not_scans),
      T(test_xor_scans),
      T(test_scan_that_fits),
      T(test_fit_known_early),
      T(test_scan_protects_hot_set),
      T(test_threads),
      T(test_lockfree_hostile),
      T(test_home_windows),
      T(test_home_reused_after_free),
      T(test_home_sizes),
      T(test_home_hostile),
#undef T
  };
  vals = calloc(MAX_VALUES, sizeof *vals);
  REQUIRE(vals);
  for (size_t i = 0; i < sizeof tests / sizeof *tests; i++) {
    bool run = argc < 2;
    for (int a = 1; a < argc; a++) run |= strcmp(argv[a], tests[i].name) == 0;
    if (run) tests[i].fn();
  }
  free(vals);
  return check_finish();
}
