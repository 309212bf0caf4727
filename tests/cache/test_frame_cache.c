/*
 * test_frame_cache — the frame cache (hotset/frame_cache.h): every fetch
 * mode at its limits (a cache all pinned refuses CREATE, gives CREATE_HARD
 * an overflow frame that goes at unpin, the 90 % rule), content kept across
 * unpin and refetch, extra bytes zeroed on create (all, or extra_zeroed), discard, rekey, truncate
 * (pinned frames too), set_capacity down and up with pinned frames and the
 * old victim order kept, shrink, the lean fetch (hs_frame_cache_get), non-purgeable caches that
 * never evict, random operations against a model under every policy the cache accepts (pinned
 * frames never evicted, stamps intact, stats adding up), scan resistance (a hot set survives a scan
 * ten times the cache under lru, clock-sweep and arc, and does not without detection), a frame
 * pinned while searches pass over it leaving the policy and coming back as just used, four threads
 * racing on one cache, caller_serializes (no mutex of the cache's; statistics read from another
 * thread meanwhile), a second unpin refused (or stopped in a debug build), and bad options refused
 * with messages.
 */
#include "cache/frame_cache_internal.h"
#include "check.h"
#include "core/debug.h"
#include "core/error.h"
#include "hotset/frame_cache.h"
#include "hotset/policy.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>

#define FRAME 1024u

static hs_frame_cache_options cache_options(uint32_t capacity, const char *policy, bool purgeable,
                                            uint32_t scan_run, uint32_t extra) {
  hs_frame_cache_options o;
  hs_frame_cache_options_init(&o);
  o.frame_bytes = FRAME;
  o.extra_bytes = extra;
  o.capacity = capacity;
  o.policy = policy;
  o.purgeable = purgeable;
  o.scan_run = scan_run;
  return o;
}

static hs_frame_cache *open_cache(uint32_t capacity, const char *policy, bool purgeable,
                                  uint32_t scan_run, uint32_t extra) {
  hs_frame_cache_options o = cache_options(capacity, policy, purgeable, scan_run, extra);
  hs_frame_cache *c = NULL;
  REQUIRE(hs_frame_cache_create(&o, &c) == HS_OK);
  return c;
}

/* A frame's content: `v` at both ends of the page and at the start of the
 * extra bytes (when there are at least 8). */
static void stamp(hs_frame *f, uint64_t v, uint32_t extra) {
  memcpy(f->data, &v, 8);
  memcpy((char *)f->data + FRAME - 8, &v, 8);
  if (extra >= 8) memcpy(f->extra, &v, 8);
}

static bool stamped(const hs_frame *f, uint64_t v, uint32_t extra) {
  uint64_t a, b, e = v;
  memcpy(&a, f->data, 8);
  memcpy(&b, (const char *)f->data + FRAME - 8, 8);
  if (extra >= 8) memcpy(&e, f->extra, 8);
  return a == v && b == v && e == v;
}

/* hs_frame_cache_fetch's frame, or NULL; its status stays in last_fetch
 * (HS_OK for a frame, a lookup that missed or a refusal). */
static _Thread_local hs_status last_fetch;
static hs_frame *fetch_frame(hs_frame_cache *c, uint64_t key, hs_fetch_mode mode, bool *created) {
  hs_frame *f = (hs_frame *)1; /* the call must set it whatever happens */
  last_fetch = hs_frame_cache_fetch(c, key, mode, &f, created);
  REQUIRE(f != (hs_frame *)1);
  if (last_fetch != HS_OK) REQUIRE(f == NULL);
  return f;
}

static hs_frame *must_fetch(hs_frame_cache *c, uint64_t key, hs_fetch_mode mode) {
  hs_frame *f = fetch_frame(c, key, mode, NULL);
  REQUIRE(f != NULL);
  return f;
}

static bool cached(hs_frame_cache *c, uint64_t key) {
  hs_frame *f = fetch_frame(c, key, HS_FETCH_LOOKUP, NULL);
  if (f) hs_frame_cache_unpin(c, f, false);
  return f != NULL;
}

static hs_frame_cache_stats stats_of(hs_frame_cache *c) {
  hs_frame_cache_stats s;
  hs_frame_cache_stats_get(c, &s);
  return s;
}

/* ---- an engine's own allocator -------------------------------------------- */

/* Blocks 8-aligned and no more (as sqlite3_malloc promises), counted, and
 * failing on demand; the pressure flag is the engine's word. */
typedef struct engine_memory {
  int64_t blocks, bytes, allocs;
  bool fail, pressure;
} engine_memory;

static void *test_alloc(size_t bytes, void *ctx) {
  engine_memory *m = ctx;
  if (m->fail) return NULL;
  unsigned char *p = malloc(bytes + 16);
  REQUIRE(p);
  memcpy(p, &bytes, sizeof bytes);
  m->blocks++, m->bytes += (int64_t)bytes, m->allocs++;
  return p + 8; /* 8 past malloc's 16-aligned block: 8-aligned only */
}

static void test_free(void *block, void *ctx) {
  engine_memory *m = ctx;
  unsigned char *p = (unsigned char *)block - 8;
  size_t bytes;
  memcpy(&bytes, p, sizeof bytes);
  m->blocks--, m->bytes -= (int64_t)bytes;
  free(p);
}

static bool test_pressure(void *ctx) {
  return ((engine_memory *)ctx)->pressure;
}

static hs_frame_cache *open_engine_cache(uint32_t capacity, engine_memory *m) {
  hs_frame_cache_options o;
  hs_frame_cache_options_init(&o);
  o.frame_bytes = FRAME;
  o.extra_bytes = 120; /* SQLite's MemPage + PgHdr are of this order, not a multiple of 64 */
  o.capacity = capacity;
  o.alloc_block = test_alloc;
  o.free_block = test_free;
  o.under_pressure = test_pressure;
  o.memory_ctx = m;
  hs_frame_cache *c = NULL;
  REQUIRE(hs_frame_cache_create(&o, &c) == HS_OK);
  return c;
}

/* Every frame's memory comes from the engine's allocator and goes back to
 * it (shrink, destroy, capacity down); a failed allocation makes the fetch
 * return NULL and changes nothing; under pressure a new frame takes an
 * unpinned frame's place, and CREATE refuses when fewer are unpinned than
 * pinned. */
static void test_engine_memory(void) {
  engine_memory m = {0};
  hs_frame_cache *c = open_engine_cache(10, &m);
  hs_frame *f[10];
  for (uint64_t k = 0; k < 6; k++) {
    f[k] = must_fetch(c, k, HS_FETCH_CREATE);
    CHECK_EQ((uintptr_t)f[k]->data % 8, 0);
    CHECK_EQ((uintptr_t)f[k]->extra % 8, 0);
    stamp(f[k], k, 120);
    memset((char *)f[k]->extra + 8, 0xAB, 112); /* the whole extra area is ours */
  }
  CHECK_EQ(m.blocks, 6);
  int64_t per = m.bytes / 6;
  CHECK(per >= FRAME + 120 && per <= FRAME + 120 + 128);
  for (uint64_t k = 0; k < 6; k++) CHECK(stamped(f[k], k, 120));
  for (uint64_t k = 3; k < 6; k++) hs_frame_cache_unpin(c, f[k], false);
  /* A failing allocator: a new frame that needs memory is not made. */
  m.fail = true;
  CHECK(fetch_frame(c, 50, HS_FETCH_CREATE_HARD, NULL) == NULL);
  CHECK_EQ(last_fetch, HS_ERR_NOMEM); /* not a refusal: memory ran out */
  CHECK(fetch_frame(c, 50, HS_FETCH_CREATE, NULL) == NULL);
  CHECK_EQ(last_fetch, HS_ERR_NOMEM);
  CHECK_EQ(hs_frame_cache_count(c), 6);
  CHECK(!cached(c, 50));
  CHECK_OK(frame_cache_check(c));
  m.fail = false;
  /* Under pressure: 3 pinned, 3 unpinned — a new frame recycles one. */
  m.pressure = true;
  int64_t allocs = m.allocs;
  hs_frame *g = must_fetch(c, 60, HS_FETCH_CREATE);
  CHECK_EQ(m.allocs, allocs);
  CHECK_EQ(stats_of(c).evictions, 1);
  CHECK_EQ(hs_frame_cache_count(c), 6);
  /* Now 4 pinned, 2 unpinned: CREATE refuses, CREATE_HARD recycles. */
  CHECK(fetch_frame(c, 61, HS_FETCH_CREATE, NULL) == NULL);
  CHECK_EQ(last_fetch, HS_OK); /* a refusal is no error */
  hs_frame *none = NULL;
  CHECK_EQ(hs_frame_cache_fetch(c, 61, (hs_fetch_mode)7, &none, NULL), HS_ERR_MISUSE);
  CHECK_EQ(hs_frame_cache_fetch(c, 61, HS_FETCH_CREATE, NULL, NULL), HS_ERR_MISUSE);
  hs_frame *h = must_fetch(c, 61, HS_FETCH_CREATE_HARD);
  CHECK_EQ(m.allocs, allocs);
  CHECK_EQ(stats_of(c).evictions, 2);
  m.pressure = false;
  hs_frame_cache_unpin(c, g, false);
  hs_frame_cache_unpin(c, h, false);
  CHECK_OK(frame_cache_check(c));
  /* Shrink gives every unpinned frame's memory back; pinned ones stay. */
  hs_frame_cache_shrink(c);
  CHECK_EQ(m.blocks, 3);
  for (uint64_t k = 0; k < 3; k++) CHECK(stamped(f[k], k, 120));
  /* Capacity down to 0: pinned frames stay until unpinned, then go. */
  CHECK_OK(hs_frame_cache_set_capacity(c, 0));
  for (uint64_t k = 0; k < 3; k++) hs_frame_cache_unpin(c, f[k], false);
  CHECK_EQ(m.blocks, 0);
  CHECK_EQ(m.bytes, 0);
  /* Overflow frames too: capacity 0 makes every frame one. */
  hs_frame *o = must_fetch(c, 7, HS_FETCH_CREATE_HARD);
  CHECK_EQ(m.blocks, 1);
  hs_frame_cache_destroy(c); /* frees the pinned overflow frame */
  (void)o;
  CHECK_EQ(m.blocks, 0);
  CHECK_EQ(m.bytes, 0);
}

/* SQLite's counting. recycle_early: a cache of N pages used one at a time
 * holds N - 1 (1 for N = 1 and 2). A frame unpinned while the cache holds
 * more than its capacity goes (the one let go of, as pcache1 does); an
 * overflow frame unpinned within the capacity takes a free slot and stays;
 * a smaller capacity counts the overflow frames too. */
static void test_pcache1_counting(void) {
  static const uint32_t caps[] = {1, 2, 3, 4, 10};
  static const uint32_t held[] = {1, 1, 2, 3, 9};
  for (int i = 0; i < 5; i++) {
    hs_frame_cache_options o;
    hs_frame_cache_options_init(&o);
    o.frame_bytes = FRAME;
    o.capacity = caps[i];
    o.recycle_early = true;
    hs_frame_cache *c = NULL;
    REQUIRE(hs_frame_cache_create(&o, &c) == HS_OK);
    for (uint64_t k = 0; k < 30; k++)
      hs_frame_cache_unpin(c, must_fetch(c, k, HS_FETCH_CREATE_HARD), 0);
    CHECK_EQ(hs_frame_cache_count(c), held[i]);
    CHECK(cached(c, 29));
    CHECK_OK(frame_cache_check(c));
    hs_frame_cache_destroy(c);
  }
  hs_frame_cache *c = open_cache(3, NULL, true, 0, 0);
  hs_frame *f[5];
  for (uint64_t k = 0; k < 5; k++) f[k] = must_fetch(c, k, HS_FETCH_CREATE_HARD);
  CHECK_EQ(stats_of(c).overflows, 2);
  hs_frame_cache_unpin(c, f[0], false); /* 5 > 3: it goes */
  CHECK(!cached(c, 0));
  hs_frame_cache_unpin(c, f[3], false); /* 4 > 3: an overflow frame goes */
  CHECK(!cached(c, 3));
  CHECK_EQ(hs_frame_cache_count(c), 3);
  hs_frame_cache_unpin(c, f[4], false); /* 3: it takes the free slot */
  CHECK_EQ(hs_frame_cache_count(c), 3);
  CHECK(cached(c, 4));
  CHECK_OK(frame_cache_check(c));
  /* It is in the policy like any frame: a victim once unpinned, stays pinned-safe. */
  hs_frame_cache_unpin(c, f[1], false);
  hs_frame_cache_unpin(c, f[2], false);
  for (uint64_t k = 10; k < 20; k++) hs_frame_cache_unpin(c, must_fetch(c, k, HS_FETCH_CREATE), 0);
  CHECK(!cached(c, 4));
  CHECK_EQ(hs_frame_cache_count(c), 3);
  CHECK_OK(frame_cache_check(c));
  /* Down with overflow frames: 2 in slots pinned, 2 overflow pinned, 1
   * unpinned in a slot; capacity 3 keeps 4 (all pinned) and evicts one. */
  hs_frame_cache_destroy(c);
  c = open_cache(3, NULL, true, 0, 0);
  for (uint64_t k = 0; k < 5; k++) f[k] = must_fetch(c, k, HS_FETCH_CREATE_HARD);
  hs_frame_cache_unpin(c, f[0], false); /* goes: 5 > 3 */
  CHECK_OK(hs_frame_cache_set_capacity(c, 8));
  hs_frame *g = must_fetch(c, 9, HS_FETCH_CREATE_HARD);
  hs_frame_cache_unpin(c, g, false);
  CHECK_EQ(hs_frame_cache_count(c), 5); /* 4 pinned (2 overflow), 1 not */
  CHECK_OK(hs_frame_cache_set_capacity(c, 3));
  CHECK_EQ(hs_frame_cache_count(c), 4);
  CHECK(!cached(c, 9));
  CHECK_OK(frame_cache_check(c));
  for (uint64_t k = 1; k < 5; k++) hs_frame_cache_unpin(c, f[k], false);
  CHECK_EQ(hs_frame_cache_count(c), 3);
  CHECK_OK(frame_cache_check(c));
  hs_frame_cache_destroy(c);
}

/* A frame parked by a victim search, then detached (truncate) and keyed
 * again (rekey) while pinned: it is an overflow frame, not parked, and at
 * its unpin within the capacity it joins the policy once (a stale parked
 * mark made a later insert of its slot fail: "already resident", found by
 * test_threads). */
static void test_parked_then_detached(void) {
  hs_frame_cache *c = open_cache(4, "clock-sweep", true, 0, 0);
  hs_frame *p[3];
  for (uint64_t k = 0; k < 3; k++) p[k] = must_fetch(c, 100 + k, HS_FETCH_CREATE_HARD);
  hs_frame_cache_unpin(c, must_fetch(c, 3, HS_FETCH_CREATE_HARD), false);
  hs_frame *n = must_fetch(c, 10, HS_FETCH_CREATE_HARD); /* passes the pinned three */
  CHECK_EQ(stats_of(c).evictions, 1);
  hs_frame_cache_truncate(c, 100); /* the three pinned leave their keys */
  CHECK_OK(frame_cache_check(c));
  hs_frame_cache_rekey(c, p[0], 50);
  CHECK_OK(frame_cache_check(c));
  hs_frame_cache_unpin(c, p[1], false);
  hs_frame_cache_unpin(c, p[2], false);
  hs_frame_cache_unpin(c, p[0], false); /* within the capacity: adopted */
  CHECK(cached(c, 50));
  CHECK_OK(frame_cache_check(c));
  hs_frame_cache_unpin(c, n, false);
  for (uint64_t k = 200; k < 220; k++)
    hs_frame_cache_unpin(c, must_fetch(c, k, HS_FETCH_CREATE), 0);
  CHECK_OK(frame_cache_check(c));
  hs_frame_cache_destroy(c);
}

/* Every frame pinned: CREATE refuses, CREATE_HARD gives an overflow frame
 * (findable by its key) that leaves at unpin; LOOKUP finds nothing new. */
static void test_all_pinned(void) {
  hs_frame_cache *c = open_cache(10, NULL, true, 0, 0);
  hs_frame *f[10];
  for (uint64_t k = 0; k < 10; k++) f[k] = must_fetch(c, k, HS_FETCH_CREATE_HARD);
  CHECK(fetch_frame(c, 100, HS_FETCH_LOOKUP, NULL) == NULL);
  bool created = true;
  CHECK(fetch_frame(c, 100, HS_FETCH_CREATE, &created) == NULL);
  CHECK(!created);
  CHECK_EQ(stats_of(c).refusals, 1);
  hs_frame *o = fetch_frame(c, 100, HS_FETCH_CREATE_HARD, &created);
  REQUIRE(o != NULL);
  CHECK(created);
  stamp(o, 100, 0);
  CHECK_EQ(hs_frame_cache_count(c), 11);
  hs_frame_cache_stats s = stats_of(c);
  CHECK_EQ(s.overflows, 1);
  CHECK_EQ(s.pinned, 11);
  CHECK_EQ(s.evictions, 0);
  /* Fetched again while pinned: the same frame, still pinned once. */
  CHECK(fetch_frame(c, 100, HS_FETCH_LOOKUP, NULL) == o);
  CHECK(hs_frame_key(o) == 100);
  CHECK_EQ(stats_of(c).pinned, 11);
  CHECK_OK(frame_cache_check(c));
  hs_frame_cache_unpin(c, o, false);
  CHECK_EQ(hs_frame_cache_count(c), 10);
  CHECK(!cached(c, 100));
  for (uint64_t k = 0; k < 10; k++) CHECK(hs_frame_key(f[k]) == k);
  /* One unpinned: CREATE_HARD recycles it rather than overflow. */
  hs_frame_cache_unpin(c, f[3], false);
  o = must_fetch(c, 200, HS_FETCH_CREATE_HARD);
  s = stats_of(c);
  CHECK_EQ(s.overflows, 1);
  CHECK_EQ(s.evictions, 1);
  CHECK(!cached(c, 3));
  CHECK_OK(frame_cache_check(c));
  hs_frame_cache_destroy(c); /* frees pinned frames too */
}

/* A fetch of a frame the engine already holds is one more reference to a
 * page in use, not an access. With lru and two frames: A created and held,
 * B used after it, A fetched again while still held; the next miss takes
 * A, the older access. (Were the second fetch an access, B would go.) */
static void test_pinned_refetch(void) {
  hs_frame_cache *c = open_cache(2, "lru", true, 0, 0);
  hs_frame *a = must_fetch(c, 1, HS_FETCH_CREATE_HARD);
  hs_frame_cache_unpin(c, must_fetch(c, 2, HS_FETCH_CREATE_HARD), false);
  CHECK(fetch_frame(c, 1, HS_FETCH_LOOKUP, NULL) == a);
  CHECK(fetch_frame(c, 1, HS_FETCH_CREATE, NULL) == a);
  hs_frame_cache_stats s = stats_of(c);
  CHECK_EQ(s.hits, 2);
  CHECK_EQ(s.pinned, 1);
  hs_frame_cache_unpin(c, a, false);
  hs_frame_cache_unpin(c, must_fetch(c, 3, HS_FETCH_CREATE_HARD), false);
  CHECK(!cached(c, 1));
  CHECK(cached(c, 2));
  CHECK_OK(frame_cache_check(c));
  hs_frame_cache_destroy(c);

  /* A hit is heard at the unpin, when the engine is done with the page
   * (SQLite's own cache orders its LRU list by unpin): 1 and 2 cached, 1
   * fetched, 2 fetched and let go, then 1 let go; 2 is the older use. */
  c = open_cache(2, "lru", true, 0, 0);
  hs_frame_cache_unpin(c, must_fetch(c, 1, HS_FETCH_CREATE_HARD), false);
  hs_frame_cache_unpin(c, must_fetch(c, 2, HS_FETCH_CREATE_HARD), false);
  a = must_fetch(c, 1, HS_FETCH_LOOKUP);
  hs_frame_cache_unpin(c, must_fetch(c, 2, HS_FETCH_LOOKUP), false);
  hs_frame_cache_unpin(c, a, false);
  hs_frame_cache_unpin(c, must_fetch(c, 3, HS_FETCH_CREATE_HARD), false);
  CHECK(cached(c, 1));
  CHECK(!cached(c, 2));
  CHECK_OK(frame_cache_check(c));
  hs_frame_cache_destroy(c);
}

/* hs_frame_cache_get, the lean fetch: the same frames, pins and counts as
 * hs_frame_cache_fetch, with and without the cache's mutex; NULL for a
 * lookup that missed, a refusal, no memory (recorded) and misuse
 * (recorded); *created set only by a create. */
static void lean_fetch(bool serialized) {
  engine_memory m = {0};
  hs_frame_cache_options o = cache_options(2, "lru", true, 0, 16);
  o.caller_serializes = serialized;
  o.alloc_block = test_alloc;
  o.free_block = test_free;
  o.memory_ctx = &m;
  hs_frame_cache *c = NULL;
  REQUIRE(hs_frame_cache_create(&o, &c) == HS_OK);
  bool created = false;
  CHECK(hs_frame_cache_get(c, 1, HS_FETCH_LOOKUP, &created) == NULL);
  CHECK(!created);
  hs_frame *a = hs_frame_cache_get(c, 1, HS_FETCH_CREATE, &created);
  REQUIRE(a != NULL);
  CHECK(created);
  stamp(a, 11, 16);
  created = false;
  CHECK(hs_frame_cache_get(c, 1, HS_FETCH_CREATE, &created) == a); /* pinned: the same */
  CHECK(!created);
  CHECK_EQ(stats_of(c).pinned, 1);
  CHECK_OK(hs_frame_cache_unpin(c, a, false));
  CHECK(hs_frame_cache_get(c, 1, HS_FETCH_LOOKUP, NULL) == a); /* a hit */
  CHECK(stamped(a, 11, 16));
  hs_frame *b = hs_frame_cache_get(c, 2, HS_FETCH_CREATE_HARD, NULL);
  REQUIRE(b != NULL);
  /* Both pinned: CREATE is refused (NULL), and no error is recorded. */
  hs_clear_error();
  CHECK(hs_frame_cache_get(c, 3, HS_FETCH_CREATE, NULL) == NULL);
  CHECK(strcmp(hs_last_error(), "") == 0);
  /* No memory for an overflow frame: NULL, and the error says so. */
  m.fail = true;
  CHECK(hs_frame_cache_get(c, 3, HS_FETCH_CREATE_HARD, NULL) == NULL);
  CHECK(strstr(hs_last_error(), "no memory for the frame of key 3") != NULL);
  hs_frame *out = (hs_frame *)1;
  CHECK(hs_frame_cache_fetch(c, 3, HS_FETCH_CREATE_HARD, &out, NULL) == HS_ERR_NOMEM);
  CHECK(out == NULL);
  m.fail = false;
  hs_frame_cache_stats s = stats_of(c);
  CHECK_EQ(s.hits, 2);
  CHECK_EQ(s.misses, 6);
  CHECK_EQ(s.creates, 2);
  CHECK(hs_frame_cache_get(c, 4, (hs_fetch_mode)7, NULL) == NULL);
  CHECK(strstr(hs_last_error(), "mode 7 is not a fetch mode") != NULL);
  CHECK(hs_frame_cache_get(NULL, 4, HS_FETCH_LOOKUP, NULL) == NULL);
  CHECK(strstr(hs_last_error(), "the cache is NULL") != NULL);
  CHECK_OK(hs_frame_cache_unpin(c, a, false));
  CHECK_OK(hs_frame_cache_unpin(c, b, false));
  CHECK_OK(frame_cache_check(c));
  hs_frame_cache_destroy(c);
  CHECK_EQ(m.blocks, 0);
}

static void test_lean_fetch(void) {
  lean_fetch(false);
  lean_fetch(true);
}

/* CREATE is refused once 90 % of the capacity (rounded down) is pinned,
 * whether or not the cache is full — SQLite's own cache's rule, which
 * makes SQLite spill dirty pages early rather than pin the last frames. */
static void test_ninety_percent(void) {
  hs_frame_cache *c = open_cache(20, NULL, true, 0, 0);
  hs_frame *f[20];
  for (uint64_t k = 0; k < 18; k++) f[k] = must_fetch(c, k, HS_FETCH_CREATE);
  CHECK_EQ(hs_frame_cache_count(c), 18);                    /* two slots still free */
  CHECK(fetch_frame(c, 50, HS_FETCH_CREATE, NULL) == NULL); /* 18 of 20 pinned */
  CHECK_EQ(stats_of(c).refusals, 1);
  hs_frame_cache_unpin(c, f[17], false); /* 17 pinned */
  hs_frame *g = fetch_frame(c, 50, HS_FETCH_CREATE, NULL);
  CHECK(g != NULL);
  CHECK_EQ(stats_of(c).evictions, 0); /* a free slot */
  CHECK_EQ(stats_of(c).refusals, 1);
  CHECK_EQ(hs_frame_cache_count(c), 19);
  /* Full, 18 pinned: CREATE_HARD still recycles the one unpinned frame. */
  g = fetch_frame(c, 51, HS_FETCH_CREATE_HARD, NULL);
  CHECK(g != NULL);
  CHECK_EQ(stats_of(c).evictions, 0);
  hs_frame_cache_unpin(c, g, false);
  g = fetch_frame(c, 52, HS_FETCH_CREATE_HARD, NULL);
  CHECK(g != NULL);
  CHECK_EQ(stats_of(c).evictions, 1); /* 17 or 51, the two unpinned */
  CHECK_EQ(hs_frame_cache_count(c), 20);
  CHECK_OK(frame_cache_check(c));
  hs_frame_cache_destroy(c);
  /* The rule at the smallest capacities: 0 and 1 refuse every CREATE
   * (90 % of them is 0), 10 refuses at 9 pinned. */
  for (uint32_t cap = 0; cap <= 10; cap++) {
    c = open_cache(cap, NULL, true, 0, 0);
    uint32_t made = 0;
    hs_frame *h[10];
    while (made < 10 && (h[made] = fetch_frame(c, made, HS_FETCH_CREATE, NULL)) != NULL) made++;
    CHECK_EQ(made, cap * 9 / 10);
    CHECK_EQ(stats_of(c).refusals, 1);
    for (uint32_t i = 0; i < made; i++) hs_frame_cache_unpin(c, h[i], false);
    hs_frame_cache_destroy(c);
  }
}

/* Capacity 0 keeps nothing: a frame exists only while it is pinned
 * (CREATE_HARD makes it), and unpinning drops it; SQLite's
 * "PRAGMA cache_size=0". Capacity 1 keeps one. */
static void test_capacity_zero(void) {
  hs_frame_cache *c = open_cache(0, NULL, true, 0, 0);
  CHECK(fetch_frame(c, 1, HS_FETCH_CREATE, NULL) == NULL);
  hs_frame *a = must_fetch(c, 1, HS_FETCH_CREATE_HARD);
  hs_frame *b = must_fetch(c, 2, HS_FETCH_CREATE_HARD);
  stamp(a, 1, 0);
  stamp(b, 2, 0);
  CHECK_EQ(hs_frame_cache_count(c), 2);
  CHECK(fetch_frame(c, 1, HS_FETCH_LOOKUP, NULL) == a); /* still pinned once */
  CHECK(stamped(a, 1, 0));
  hs_frame_cache_unpin(c, a, false);
  hs_frame_cache_unpin(c, b, false);
  CHECK_EQ(hs_frame_cache_count(c), 0);
  CHECK(!cached(c, 1));
  CHECK_OK(frame_cache_check(c));
  /* Up to 1: one frame stays; back to 0: it goes, a pinned one at unpin. */
  CHECK_OK(hs_frame_cache_set_capacity(c, 1));
  hs_frame_cache_unpin(c, must_fetch(c, 5, HS_FETCH_CREATE_HARD), false);
  hs_frame_cache_unpin(c, must_fetch(c, 6, HS_FETCH_CREATE_HARD), false);
  CHECK_EQ(hs_frame_cache_count(c), 1);
  CHECK(cached(c, 6));
  hs_frame *p = must_fetch(c, 6, HS_FETCH_LOOKUP);
  CHECK_OK(hs_frame_cache_set_capacity(c, 0));
  CHECK_EQ(hs_frame_cache_count(c), 1);
  CHECK_OK(frame_cache_check(c));
  hs_frame_cache_unpin(c, p, false);
  CHECK_EQ(hs_frame_cache_count(c), 0);
  CHECK_OK(frame_cache_check(c));
  hs_frame_cache_destroy(c);
}

/* Content survives unpin and refetch; extra is zero on every create, also
 * when the memory is recycled from a discarded or evicted frame. */
static void test_content_and_extra(void) {
  const uint32_t extra = 40;
  hs_frame_cache *c = open_cache(2, "lru", true, 0, extra);
  hs_frame *f = must_fetch(c, 7, HS_FETCH_CREATE);
  CHECK(((uintptr_t)f->data & 63) == 0);
  static const char zero[40];
  CHECK(memcmp(f->extra, zero, extra) == 0);
  stamp(f, 0x1234, extra);
  hs_frame_cache_unpin(c, f, false);
  bool created = true;
  hs_frame *g = fetch_frame(c, 7, HS_FETCH_CREATE, &created);
  CHECK(g == f);
  CHECK(!created);
  CHECK(stamped(g, 0x1234, extra));
  memset(g->extra, 0xab, extra);
  hs_frame_cache_unpin(c, g, true); /* discard */
  CHECK(!cached(c, 7));
  CHECK_EQ(stats_of(c).discards, 1);
  CHECK_EQ(hs_frame_cache_count(c), 0);
  g = must_fetch(c, 8, HS_FETCH_CREATE);
  CHECK(memcmp(g->extra, zero, extra) == 0);
  memset(g->extra, 0xcd, extra);
  hs_frame_cache_unpin(c, g, false);
  hs_frame *h = must_fetch(c, 9, HS_FETCH_CREATE);
  memset(h->extra, 0xcd, extra);
  hs_frame_cache_unpin(c, h, false);
  /* Two more keys evict both, reusing their memory. */
  for (uint64_t k = 10; k < 12; k++) {
    hs_frame *n = must_fetch(c, k, HS_FETCH_CREATE);
    CHECK(memcmp(n->extra, zero, extra) == 0);
    CHECK(n == g || n == h);
    hs_frame_cache_unpin(c, n, false);
  }
  CHECK_EQ(stats_of(c).evictions, 2);
  hs_frame_cache_destroy(c);

  /* extra_zeroed: only the first bytes (SQLite's first pointer) are
   * zeroed, on a fresh frame and on one reusing a victim's memory; one
   * past extra_bytes zeroes them all. */
  for (uint32_t zeroed = 8; zeroed <= 24; zeroed += 16) {
    hs_frame_cache_options o = cache_options(1, "lru", true, 0, extra);
    o.extra_zeroed = zeroed;
    REQUIRE(hs_frame_cache_create(&o, &c) == HS_OK);
    hs_frame *a = must_fetch(c, 1, HS_FETCH_CREATE_HARD);
    CHECK(memcmp(a->extra, zero, zeroed) == 0);
    memset(a->extra, 0xee, extra);
    hs_frame_cache_unpin(c, a, false);
    hs_frame *b = must_fetch(c, 2, HS_FETCH_CREATE_HARD);
    CHECK(b == a); /* the victim's memory */
    CHECK(memcmp(b->extra, zero, zeroed) == 0);
    CHECK(((unsigned char *)b->extra)[zeroed] == 0xee);
    hs_frame_cache_unpin(c, b, false);
    hs_frame_cache_destroy(c);
  }
  hs_frame_cache_options o = cache_options(1, "lru", true, 0, extra);
  o.extra_zeroed = extra + 1;
  REQUIRE(hs_frame_cache_create(&o, &c) == HS_OK);
  hs_frame *a = must_fetch(c, 1, HS_FETCH_CREATE_HARD);
  memset(a->extra, 0xee, extra);
  hs_frame_cache_unpin(c, a, false);
  a = must_fetch(c, 2, HS_FETCH_CREATE_HARD);
  CHECK(memcmp(a->extra, zero, extra) == 0);
  hs_frame_cache_unpin(c, a, false);
  hs_frame_cache_destroy(c);
}

/* Rekey moves the frame and its content; the frame under the new key goes.
 * A pinned frame displaced so keeps its memory until it is unpinned. */
static void test_rekey(void) {
  hs_frame_cache *c = open_cache(10, NULL, true, 0, 0);
  hs_frame *a = must_fetch(c, 1, HS_FETCH_CREATE);
  stamp(a, 0xa, 0);
  hs_frame_cache_unpin(c, a, false);
  hs_frame *b = must_fetch(c, 2, HS_FETCH_CREATE);
  stamp(b, 0xb, 0);
  hs_frame_cache_rekey(c, b, 1);
  CHECK(hs_frame_key(b) == 1);
  CHECK_EQ(hs_frame_cache_count(c), 1);
  CHECK_EQ(stats_of(c).discards, 1);
  CHECK(!cached(c, 2));
  hs_frame_cache_unpin(c, b, false);
  hs_frame *g = must_fetch(c, 1, HS_FETCH_LOOKUP);
  CHECK(g == b);
  CHECK(stamped(g, 0xb, 0));
  /* Onto a pinned frame's key (the engine's mistake): that one is detached. */
  hs_frame *d = must_fetch(c, 3, HS_FETCH_CREATE);
  stamp(d, 0xd, 0);
  hs_frame_cache_rekey(c, d, 1);
  CHECK(fetch_frame(c, 1, HS_FETCH_LOOKUP, NULL) == d);
  CHECK(stamped(g, 0xb, 0));
  CHECK_EQ(hs_frame_cache_count(c), 2);
  CHECK_OK(frame_cache_check(c));
  hs_frame_cache_unpin(c, g, false);
  CHECK_EQ(hs_frame_cache_count(c), 1);
  hs_frame_cache_unpin(c, d, false);
  CHECK_OK(frame_cache_check(c));
  hs_frame_cache_destroy(c);
}

/* Truncate drops every key at or past the limit, pinned ones too (whose
 * memory stays theirs until unpinned). */
static void test_truncate(void) {
  hs_frame_cache *c = open_cache(20, NULL, true, 0, 0);
  hs_frame *f[10];
  for (uint64_t k = 0; k < 10; k++) {
    f[k] = must_fetch(c, k, HS_FETCH_CREATE_HARD);
    stamp(f[k], k, 0);
    if (k % 3 != 0) hs_frame_cache_unpin(c, f[k], false);
  }
  hs_frame_cache_truncate(c, 5); /* 0, 3, 6 and 9 are pinned */
  for (uint64_t k = 0; k < 10; k++)
    if (k % 3 == 0)
      CHECK(fetch_frame(c, k, HS_FETCH_LOOKUP, NULL) == (k < 5 ? f[k] : NULL));
    else
      CHECK(cached(c, k) == (k < 5));
  CHECK(stamped(f[6], 6, 0) && stamped(f[9], 9, 0));
  CHECK_EQ(stats_of(c).discards, 5);
  CHECK_EQ(hs_frame_cache_count(c), 7);
  CHECK_OK(frame_cache_check(c));
  hs_frame_cache_unpin(c, f[6], false);
  hs_frame_cache_unpin(c, f[9], false);
  CHECK_EQ(hs_frame_cache_count(c), 5);
  hs_frame_cache_truncate(c, 0);
  CHECK_EQ(hs_frame_cache_count(c), 2); /* 0 and 3, pinned */
  hs_frame_cache_unpin(c, f[0], false);
  hs_frame_cache_unpin(c, f[3], false);
  CHECK_EQ(hs_frame_cache_count(c), 0);
  CHECK_OK(frame_cache_check(c));
  hs_frame_cache_destroy(c);
}

/* Down: unpinned frames go, victims first; pinned ones beyond the capacity
 * become overflow frames, found by key until unpinned. Up: room again. */
static void test_set_capacity(void) {
  hs_frame_cache *c = open_cache(10, "lru", true, 0, 0);
  hs_frame *f[10];
  for (uint64_t k = 0; k < 10; k++) {
    f[k] = must_fetch(c, k, HS_FETCH_CREATE_HARD);
    stamp(f[k], k, 0);
  }
  for (uint64_t k = 6; k < 10; k++) hs_frame_cache_unpin(c, f[k], false);
  CHECK_OK(hs_frame_cache_set_capacity(c, 4)); /* 6 pinned, 4 unpinned */
  hs_frame_cache_stats s = stats_of(c);
  CHECK_EQ(s.evictions, 4);
  CHECK_EQ(s.count, 6);
  CHECK_EQ(s.capacity, 4);
  CHECK_OK(frame_cache_check(c));
  for (uint64_t k = 0; k < 6; k++) {
    CHECK(fetch_frame(c, k, HS_FETCH_LOOKUP, NULL) == f[k]);
    CHECK(stamped(f[k], k, 0));
  }
  for (uint64_t k = 0; k < 6; k++) hs_frame_cache_unpin(c, f[k], false);
  CHECK_EQ(hs_frame_cache_count(c), 4);
  CHECK_OK(frame_cache_check(c));
  CHECK_OK(hs_frame_cache_set_capacity(c, 20));
  for (uint64_t k = 100; k < 116; k++)
    hs_frame_cache_unpin(c, must_fetch(c, k, HS_FETCH_CREATE), 0);
  CHECK_EQ(stats_of(c).evictions, 4);
  CHECK_EQ(hs_frame_cache_count(c), 20);
  hs_frame_cache_destroy(c);

  /* The old victim order survives the new policy: lru keeps the most
   * recent, clock-sweep the most used, and the next victim is still the
   * one the old policy would have named. */
  c = open_cache(10, "lru", true, 0, 0);
  for (uint64_t k = 0; k < 10; k++) hs_frame_cache_unpin(c, must_fetch(c, k, HS_FETCH_CREATE), 0);
  CHECK_OK(hs_frame_cache_set_capacity(c, 5));
  for (uint64_t k = 0; k < 10; k++) CHECK(cached(c, k) == (k >= 5));
  /* LRU order now 5..9 touched again in that order by `cached`: next is 5. */
  hs_frame_cache_unpin(c, must_fetch(c, 50, HS_FETCH_CREATE), false);
  CHECK(!cached(c, 5));
  hs_frame_cache_destroy(c);
  c = open_cache(10, "clock-sweep", true, 0, 0);
  for (uint64_t k = 0; k < 10; k++) hs_frame_cache_unpin(c, must_fetch(c, k, HS_FETCH_CREATE), 0);
  for (int round = 0; round < 3; round++)
    for (uint64_t k = 0; k < 10; k += 2) CHECK(cached(c, k));
  CHECK_OK(hs_frame_cache_set_capacity(c, 5));
  for (uint64_t k = 0; k < 10; k++) CHECK(cached(c, k) == (k % 2 == 0));
  CHECK_OK(hs_frame_cache_set_capacity(c, 10));
  for (uint64_t k = 20; k < 25; k++) hs_frame_cache_unpin(c, must_fetch(c, k, HS_FETCH_CREATE), 0);
  /* Full again: the next victim is a new frame, not a used one. */
  hs_frame_cache_unpin(c, must_fetch(c, 30, HS_FETCH_CREATE), false);
  for (uint64_t k = 0; k < 10; k += 2) CHECK(cached(c, k));
  hs_frame_cache_destroy(c);
}

static void test_shrink(void) {
  hs_frame_cache *c = open_cache(10, NULL, true, 0, 0);
  hs_frame *f[10];
  for (uint64_t k = 0; k < 10; k++) {
    f[k] = must_fetch(c, k, HS_FETCH_CREATE_HARD);
    stamp(f[k], k, 0);
    if (k >= 3) hs_frame_cache_unpin(c, f[k], false);
  }
  hs_frame_cache_shrink(c);
  CHECK_EQ(hs_frame_cache_count(c), 3);
  for (uint64_t k = 0; k < 3; k++) CHECK(stamped(f[k], k, 0));
  for (uint64_t k = 3; k < 10; k++) CHECK(!cached(c, k));
  CHECK_OK(frame_cache_check(c));
  /* The slots come back as they are needed. */
  for (uint64_t k = 20; k < 27; k++) hs_frame_cache_unpin(c, must_fetch(c, k, HS_FETCH_CREATE), 0);
  CHECK_EQ(hs_frame_cache_count(c), 10);
  CHECK_EQ(stats_of(c).evictions, 0);
  hs_frame_cache_destroy(c);
}

/* A non-purgeable cache grows past its capacity and evicts nothing, not
 * even when shrunk or given a smaller capacity (its frames are the only
 * copy of an in-memory database). */
static void test_not_purgeable(void) {
  hs_frame_cache *c = open_cache(10, NULL, false, 32, 8);
  for (uint64_t k = 0; k < 100; k++) {
    hs_frame *f = must_fetch(c, k * 3, k % 2 ? HS_FETCH_CREATE : HS_FETCH_CREATE_HARD);
    stamp(f, k, 8);
    if (k >= 95) continue; /* the last five stay pinned */
    hs_frame_cache_unpin(c, f, false);
  }
  CHECK_OK(hs_frame_cache_set_capacity(c, 5));
  hs_frame_cache_shrink(c);
  CHECK_EQ(hs_frame_cache_count(c), 100);
  for (uint64_t k = 0; k < 100; k++) {
    hs_frame *f = fetch_frame(c, k * 3, HS_FETCH_LOOKUP, NULL);
    CHECK(f && stamped(f, k, 8));
    if (f) hs_frame_cache_unpin(c, f, false);
  }
  hs_frame_cache_stats s = stats_of(c);
  CHECK_EQ(s.evictions, 0);
  CHECK_EQ(s.overflows, 0);
  CHECK_EQ(s.refusals, 0);
  CHECK_EQ(s.capacity, 5);
  hs_frame_cache_unpin(c, must_fetch(c, 3, HS_FETCH_LOOKUP), true);
  CHECK_EQ(hs_frame_cache_count(c), 99);
  hs_frame_cache_truncate(c, 150);
  CHECK_EQ(hs_frame_cache_count(c), 49);
  CHECK_OK(frame_cache_check(c));
  hs_frame_cache_destroy(c);
}

/* ---- random operations against a model ------------------------------------ */

static uint64_t next_rand(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

#define MODEL_KEYS 64
#define MODEL_PINS 24

typedef struct model {
  /* Per key: 0 absent, else the stamp its frame holds (the frame may have
   * been evicted since, unless it is pinned). */
  uint64_t stamp[MODEL_KEYS];
  hs_frame *pin[MODEL_KEYS];      /* the pinned frame of a key, or NULL */
  hs_frame *detached[MODEL_PINS]; /* pinned frames that lost their key */
  uint64_t detached_stamp[MODEL_PINS];
  uint32_t ndetached;
  uint64_t lookup_misses;
} model;

static uint32_t pinned_keys(const model *m) {
  uint32_t n = 0;
  for (uint32_t k = 0; k < MODEL_KEYS; k++) n += m->pin[k] != NULL;
  return n;
}

static void model_detach(model *m, uint32_t k) {
  if (m->pin[k] && m->ndetached < MODEL_PINS) {
    m->detached[m->ndetached] = m->pin[k];
    m->detached_stamp[m->ndetached++] = m->stamp[k];
  }
  m->pin[k] = NULL;
  m->stamp[k] = 0;
}

static void model_run(const char *policy, uint64_t seed, unsigned steps) {
  hs_frame_cache *c = open_cache(16, policy, true, 4, 16);
  model *m = calloc(1, sizeof *m);
  REQUIRE(m != NULL);
  uint64_t next_stamp = 1;
  unsigned errors = 0;
  for (unsigned step = 0; step < steps && errors < 10; step++) {
    uint64_t r = next_rand(&seed);
    uint32_t k = (uint32_t)(r >> 8) % MODEL_KEYS;
    /* Sometimes a run of consecutive keys, so scans are detected. */
    if ((step / 64) % 3 == 2) k = step % MODEL_KEYS;
    unsigned op = (unsigned)(r % 100);
    if (op < 55) {
      hs_fetch_mode mode = (hs_fetch_mode)((r >> 40) % 3);
      if (mode == HS_FETCH_CREATE_HARD && pinned_keys(m) + m->ndetached >= MODEL_PINS)
        mode = HS_FETCH_CREATE;
      bool created = false;
      hs_frame *f = fetch_frame(c, k, mode, &created);
      if (!f) {
        /* A pinned frame is never gone; CREATE_HARD never fails here. */
        if (m->pin[k] || mode == HS_FETCH_CREATE_HARD) errors++;
        if (mode == HS_FETCH_LOOKUP) m->lookup_misses++;
        continue;
      }
      if (m->pin[k] && f != m->pin[k]) errors++;
      if (created) {
        if (m->pin[k]) errors++;
        m->stamp[k] = next_stamp++;
        stamp(f, m->stamp[k], 16);
      } else if (!m->stamp[k] || !stamped(f, m->stamp[k], 16)) {
        errors++;
      }
      if (hs_frame_key(f) != k) errors++;
      m->pin[k] = f;
      if (pinned_keys(m) + m->ndetached > MODEL_PINS) { /* keep most unpinned */
        hs_frame_cache_unpin(c, f, false);
        m->pin[k] = NULL;
      }
    } else if (op < 80) {
      if (!m->pin[k]) continue;
      bool discard = (r >> 20) % 4 == 0;
      hs_frame_cache_unpin(c, m->pin[k], discard);
      m->pin[k] = NULL;
      if (discard) m->stamp[k] = 0;
    } else if (op < 86) {
      if (!m->pin[k]) continue;
      uint32_t to = (uint32_t)(r >> 24) % MODEL_KEYS;
      if (m->pin[to] && to != k) continue; /* the API's rule: not pinned */
      hs_frame *f = m->pin[k];
      uint64_t st = m->stamp[k];
      m->pin[k] = NULL;
      m->stamp[k] = 0;
      hs_frame_cache_rekey(c, f, to);
      m->pin[to] = f;
      m->stamp[to] = st;
    } else if (op < 90) {
      if (m->ndetached == 0) continue;
      uint32_t i = (uint32_t)(r >> 24) % m->ndetached;
      if (!stamped(m->detached[i], m->detached_stamp[i], 16)) errors++;
      hs_frame_cache_unpin(c, m->detached[i], false);
      m->detached[i] = m->detached[--m->ndetached];
      m->detached_stamp[i] = m->detached_stamp[m->ndetached];
    } else if (op < 92) {
      uint32_t limit = MODEL_KEYS / 2 + (uint32_t)(r >> 24) % (MODEL_KEYS / 2);
      hs_frame_cache_truncate(c, limit);
      for (uint32_t j = limit; j < MODEL_KEYS; j++) model_detach(m, j);
    } else if (op < 95) {
      CHECK_OK(hs_frame_cache_set_capacity(c, 8 + (uint32_t)(r >> 24) % 24));
    } else if (op < 96) {
      hs_frame_cache_shrink(c);
    } else {
      for (uint32_t j = 0; j < MODEL_KEYS; j++)
        if (m->pin[j] && (hs_frame_key(m->pin[j]) != j || !stamped(m->pin[j], m->stamp[j], 16)))
          errors++;
      for (uint32_t i = 0; i < m->ndetached; i++)
        if (!stamped(m->detached[i], m->detached_stamp[i], 16)) errors++;
    }
    if (frame_cache_check(c) != HS_OK) {
      fprintf(stderr, "%s step %u: %s\n", policy, step, hs_last_error());
      errors++;
    }
    hs_frame_cache_stats s = stats_of(c);
    if (s.pinned != pinned_keys(m) + m->ndetached || s.hits + s.misses != s.fetches ||
        s.misses != s.creates + s.refusals + m->lookup_misses)
      errors++;
    if (errors) fprintf(stderr, "%s: step %u: errors %u\n", policy, step, errors);
  }
  CHECK_EQ(errors, 0);
  hs_frame_cache_stats s = stats_of(c);
  CHECK(s.evictions > 0 && s.hits > 0 && s.refusals + s.overflows > 0);
  CHECK(s.scan_fetches > 0);
  free(m);
  hs_frame_cache_destroy(c);
}

/* Every policy the cache accepts; the ones that need the future refuse. */
static void test_model_every_policy(void) {
  char names[512];
  snprintf(names, sizeof names, "%s", hs_policy_names());
  unsigned tried = 0;
  for (char *save = NULL, *n = strtok_r(names, ",", &save); n; n = strtok_r(NULL, ",", &save)) {
    hs_policy *p;
    REQUIRE(hs_policy_create(n, 8, 8, NULL, &p) == HS_OK);
    bool sim_only = hs_policy_flags(p) &
                    (HS_POLICY_SIM_ONLY | HS_POLICY_NEEDS_FUTURE | HS_POLICY_NEEDS_HINDSIGHT);
    hs_policy_destroy(p);
    if (sim_only) continue;
    model_run(n, 0x9e3779b97f4a7c15ULL + tried, 4000);
    tried++;
  }
  CHECK(tried >= 14);
}

/* ---- scans ------------------------------------------------------------------ */

/* The hot set's hit ratio after a scan of 1,000 consecutive keys through a
 * 100-frame cache and 30 new pages. Hot keys are 7 apart: never a run. */
static double hot_after_scan(const char *policy, uint32_t scan_run, uint64_t *scan_fetches) {
  hs_frame_cache *c = open_cache(100, policy, true, scan_run, 0);
  for (int round = 0; round < 10; round++)
    for (uint64_t i = 0; i < 30; i++)
      hs_frame_cache_unpin(c, must_fetch(c, 1000000 + 7 * i, HS_FETCH_CREATE), false);
  for (uint64_t k = 0; k < 1000; k++)
    hs_frame_cache_unpin(c, must_fetch(c, k, HS_FETCH_CREATE), false);
  /* New pages the lookups need: they must push out the scan's, not the
   * hot set (so the scan's pages, even those it did not recycle, must stand
   * below the hot ones). */
  for (uint64_t i = 0; i < 30; i++)
    hs_frame_cache_unpin(c, must_fetch(c, 5000000 + 11 * i, HS_FETCH_CREATE), false);
  unsigned hits = 0;
  for (uint64_t i = 0; i < 30; i++) {
    bool created = true;
    hs_frame *f = fetch_frame(c, 1000000 + 7 * i, HS_FETCH_CREATE, &created);
    REQUIRE(f != NULL);
    hits += !created;
    hs_frame_cache_unpin(c, f, false);
  }
  *scan_fetches = stats_of(c).scan_fetches;
  hs_frame_cache_destroy(c);
  return hits / 30.0;
}

static void test_scan_resistance(void) {
  static const char *const policies[] = {"lru", "clock-sweep", "arc"};
  uint64_t scans;
  for (size_t i = 0; i < sizeof policies / sizeof *policies; i++) {
    double ratio = hot_after_scan(policies[i], 32, &scans);
    printf("%s, scan_run 32: hot set hit ratio after the scan %.3f\n", policies[i], ratio);
    CHECK(ratio >= 0.97);
    /* The run of consecutive keys is a scan from its 33rd key; the hot
     * set's first round (30 misses, and its later hits on pages not
     * fetched just before, which say nothing) leaves a run of misses the
     * scan's first misses extend, so it may be taken for a scan a little
     * earlier; the 30 new pages after it, all misses, extend that run, and
     * the hot set's 30 hits after them, none on a page fetched lately,
     * count as the scan's too (they reach the policy as "used once", and
     * the hit ratio above shows it costs the hot set nothing here). */
    CHECK(scans >= 1000 - 32 && scans <= 1000 + 60);
  }
  double ratio = hot_after_scan("lru", 0, &scans);
  printf("lru, no detection: hot set hit ratio after the scan %.3f\n", ratio);
  CHECK(ratio < 0.5);
  CHECK_EQ(scans, 0);
}

/* Fetches `key` (created if missing) and unpins it; whether it was cached. */
static bool touch(hs_frame_cache *c, uint64_t key) {
  bool created = false;
  hs_frame *f = fetch_frame(c, key, HS_FETCH_CREATE, &created);
  REQUIRE(f != NULL);
  hs_frame_cache_unpin(c, f, false);
  return !created;
}

/* The share of `n` fetches the detector took for a scan. */
static double scan_share(hs_frame_cache *c, uint64_t before, uint64_t n) {
  return (double)(stats_of(c).scan_fetches - before) / (double)n;
}

/* What SQLite's scans look like when a table did not grow by appends, and
 * what its lookups look like: the scans must be taken for scans from
 * their first few dozen pages, the lookups never. */
static void test_scan_shapes(void) {
  hs_frame_cache *c = open_cache(100, "s3fifo", true, 32, 0);
  /* A scan with gaps (rows' overflow pages skipped: +3 a page), a page
   * elsewhere every 40 (an interior page) and pages a little out of order
   * (a leaf a balance put before its neighbour). */
  uint64_t before = stats_of(c).scan_fetches, n = 0;
  for (uint64_t i = 0; i < 1000; i++) {
    uint64_t k = 100 + 3 * (i % 5 == 1 ? i + 1 : i % 5 == 2 ? i - 1 : i);
    touch(c, k), n++;
    if (i % 40 == 39) touch(c, 900000 + i), n++;
  }
  double gapped = scan_share(c, before, n);
  /* Backwards, as ORDER BY ... DESC reads a table. */
  before = stats_of(c).scan_fetches;
  for (uint64_t i = 0; i < 1000; i++) touch(c, 50000 - i);
  double down = scan_share(c, before, 1000);
  /* In no order at all (a table grown by random inserts: its leaves are
   * where its page splits put them), every page a miss. */
  before = stats_of(c).scan_fetches;
  for (uint64_t i = 0; i < 1000; i++) touch(c, 1000000 + ((i * 2654435761u) & 0xfffff));
  double shuffled = scan_share(c, before, 1000);
  printf("scan shapes taken for scans: gapped %.3f, downwards %.3f, shuffled %.3f\n", gapped, down,
         shuffled);
  CHECK(gapped >= 0.9);
  CHECK(down >= 0.9);
  CHECK(shuffled >= 0.9);
  /* Lookups: page 1, the root, an interior page, a leaf of 5,000 (mostly
   * misses) — never a scan. Right after the scan, the first few of them,
   * all misses (this cache has none of their pages), still extend its run
   * of misses: a handful of fetches; after that, none. */
  uint64_t x = 12345;
  for (int batch = 0; batch < 2; batch++) {
    before = stats_of(c).scan_fetches;
    for (int i = 0; i < 3000; i++) {
      x = x * 6364136223846793005u + 1442695040888963407u;
      touch(c, 1);
      touch(c, 2);
      touch(c, 3 + (x >> 60));
      touch(c, 3000000 + (x >> 33) % 5000);
    }
    uint64_t taken = stats_of(c).scan_fetches - before;
    if (batch == 0)
      CHECK(taken <= 8);
    else
      CHECK_EQ(taken, 0);
  }
  hs_frame_cache_destroy(c);

  /* A scan of 60 pages read again and again in a cache of 100 full of
   * other pages: it fits, and once it is seen coming back to pages its
   * ring let go it is cached as any page — SQLite's repeated scans of a
   * small table (speedtest1's) hit as on SQLite's own cache. */
  c = open_cache(100, "s3fifo", true, 32, 0);
  for (uint64_t k = 0; k < 100; k++) touch(c, 7000000 + 13 * k);
  unsigned hits = 0;
  for (int rep = 0; rep < 10; rep++) {
    hits = 0;
    for (uint64_t k = 0; k < 60; k++) hits += touch(c, 500 + k);
  }
  printf("a 60-page scan read 10 times in a 100-frame cache: %u of 60 hit the last time\n", hits);
  CHECK_EQ(hits, 60);
  hs_frame_cache_destroy(c);

  /* A scan twice the cache, its pages in no order (a WITHOUT ROWID table
   * grown out of order), read again and again with 200 lookups of a
   * 48-page hot set between: each time it starts with pages still cached
   * from the time before. Those hits must count as the scan's, from its
   * first page on: counted as uses they keep the head of the table cached,
   * and more of it every round, until the hot set goes. */
  c = open_cache(100, "s3fifo", true, 32, 0);
  uint64_t y = 777;
  double least_share = 1, least_hot = 1;
  for (int round = 0; round < 14; round++) {
    unsigned lookup_hits = 0;
    for (int i = 0; i < 200; i++) {
      y = y * 6364136223846793005u + 1442695040888963407u;
      touch(c, 1);
      touch(c, 2);
      lookup_hits += touch(c, 3 + (y >> 33) % 48);
    }
    before = stats_of(c).scan_fetches;
    touch(c, 50000); /* the table's root, then its leaves in key order */
    for (uint64_t i = 0; i < 200; i++) touch(c, 60000 + ((i * 2654435761u) & 0xffff));
    double share = scan_share(c, before, 201);
    if (round >= 1 && share < least_share) least_share = share;
    if (round >= 2 && lookup_hits / 200.0 < least_hot) least_hot = lookup_hits / 200.0;
  }
  printf("a 200-page scan in no order read 14 times in a 100-frame cache: at least %.3f of it "
         "taken for a scan after the first time, the hot set's hit ratio at least %.3f\n",
         least_share, least_hot);
  CHECK(least_share >= 0.9);
  CHECK(least_hot >= 0.99);
  hs_frame_cache_destroy(c);
}

/* A scan whose leaves come ten at a time between two interior pages the
 * engine goes back to (a cursor's descent to the next leaves through
 * pages it fetched a few pages ago, near each other, far from the
 * leaves): those fetches come back to pages fetched lately, so they end
 * the run of new pages each time, and the leaves' run of keys must go on
 * across them (the detector's rule 3: a reuse does nothing else). Were
 * they outliers, the second would restart the run at the first every ten
 * leaves, and none of the scan would be taken for one. */
static void test_scan_across_descents(void) {
  hs_frame_cache *c = open_cache(100, "s3fifo", true, 32, 0);
  uint64_t before = stats_of(c).scan_fetches;
  for (uint64_t g = 0; g < 100; g++) {
    touch(c, 900000);
    touch(c, 900003);
    for (uint64_t k = 0; k < 10; k++) touch(c, 1000 + 10 * g + k);
  }
  double share = (double)(stats_of(c).scan_fetches - before) / 1000.0;
  printf("a 1,000-leaf scan with two interior pages fetched again every ten leaves: %.3f of the "
         "leaves taken for a scan\n",
         share);
  CHECK(share >= 0.9);
  hs_frame_cache_destroy(c);
}

/* The engine's boundary key (SQLite's page 1, read at the start of every
 * statement, and here before each scan too): its fetch ends the scan's run,
 * so no lookup after a scan is taken for part of it, and its pages are
 * never the ring's to take back. (With the key off, 376 of the 1,000
 * lookup fetches are: page 1 becomes one of the scan's first pages in the
 * history, and a lookup starting there looks like the scan again.) */
static void test_boundary_key(void) {
  hs_frame_cache_options o = cache_options(100, "lru", true, 32, 0);
  o.boundary_key = 1;
  o.has_boundary_key = true;
  hs_frame_cache *c = NULL;
  REQUIRE(hs_frame_cache_create(&o, &c) == HS_OK);
  uint64_t x = 99;
  unsigned taken_after = 0, scan_taken = 0;
  for (int round = 0; round < 5; round++) {
    touch(c, 1); /* the scan's statement begins */
    uint64_t before = stats_of(c).scan_fetches;
    for (uint64_t i = 0; i < 1000; i++) touch(c, 1000000 + ((i * 2654435761u) & 0xfffff));
    scan_taken = (unsigned)(stats_of(c).scan_fetches - before);
    before = stats_of(c).scan_fetches;
    for (int i = 0; i < 50; i++) { /* lookups, each its own statement */
      x = x * 6364136223846793005u + 1442695040888963407u;
      touch(c, 1);
      touch(c, 2);
      touch(c, 3 + (x >> 60));
      touch(c, 3000000 + (x >> 33) % 5000);
    }
    taken_after += (unsigned)(stats_of(c).scan_fetches - before);
  }
  printf("boundary key: %u of the last scan's 1000 fetches taken for a scan, %u lookup "
         "fetches after the scans\n",
         scan_taken, taken_after);
  CHECK(scan_taken >= 900);
  CHECK_EQ(taken_after, 0);
  hs_frame_cache_destroy(c);
}

/* ---- threads ---------------------------------------------------------------- */

#define NTHREADS   4
#define OWN_KEYS   100
#define SHARED     64
#define HELD       4
#define THREAD_OPS 6000

typedef struct worker {
  hs_frame_cache *c;
  pthread_mutex_t *shared_locks;
  uint64_t seed, base;
  unsigned stamp_errors, null_hard;
} worker;

/* Own keys are pinned and stamped by this thread alone; shared keys
 * (0 .. SHARED-1) by any thread holding that key's test lock, so a frame is
 * never read while another thread may be recycling it. */
static void *work(void *arg) {
  worker *w = arg;
  hs_frame *held[HELD] = {0};
  for (unsigned i = 0; i < THREAD_OPS; i++) {
    uint64_t r = next_rand(&w->seed);
    unsigned op = (unsigned)(r % 1000);
    unsigned h = (unsigned)(r >> 12) % HELD;
    uint64_t own = w->base + (r >> 20) % OWN_KEYS;
    if (op < 500) {
      if (held[h]) {
        hs_frame_cache_unpin(w->c, held[h], (r >> 40) % 8 == 0);
        held[h] = NULL;
      }
      bool mine = false;
      for (unsigned j = 0; j < HELD; j++) mine |= held[j] && hs_frame_key(held[j]) == own;
      if (mine) continue;
      hs_fetch_mode mode = (hs_fetch_mode)((r >> 44) % 3);
      bool created;
      hs_frame *f = fetch_frame(w->c, own, mode, &created);
      if (!f) {
        w->null_hard += mode == HS_FETCH_CREATE_HARD;
        continue;
      }
      if (created)
        stamp(f, own, 8);
      else if (!stamped(f, own, 8))
        w->stamp_errors++;
      held[h] = f;
    } else if (op < 900) {
      uint64_t k = (r >> 20) % SHARED;
      pthread_mutex_lock(&w->shared_locks[k]);
      bool created;
      hs_frame *f = fetch_frame(w->c, k, HS_FETCH_CREATE_HARD, &created);
      if (!f) {
        w->null_hard++;
      } else {
        if (created)
          stamp(f, k, 8);
        else if (!stamped(f, k, 8))
          w->stamp_errors++;
        hs_frame_cache_unpin(w->c, f, (r >> 40) % 16 == 0);
      }
      pthread_mutex_unlock(&w->shared_locks[k]);
    } else if (op < 980) {
      if (!held[h]) continue;
      bool mine = false;
      for (unsigned j = 0; j < HELD; j++) mine |= held[j] && hs_frame_key(held[j]) == own;
      if (mine) continue;
      hs_frame_cache_rekey(w->c, held[h], own);
      stamp(held[h], own, 8);
    } else if (op < 990) {
      /* Mostly past the shared keys; now and then through them. */
      uint64_t limit = op == 980 ? (r >> 20) % SHARED
                                 : (1 + (r >> 20) % NTHREADS) * 1000000 + (r >> 30) % OWN_KEYS;
      hs_frame_cache_truncate(w->c, limit);
    } else {
      (void)hs_frame_cache_set_capacity(w->c, 16 + (uint32_t)(r >> 20) % 112);
    }
  }
  for (unsigned j = 0; j < HELD; j++)
    if (held[j]) {
      if (!stamped(held[j], hs_frame_key(held[j]), 8)) w->stamp_errors++;
      hs_frame_cache_unpin(w->c, held[j], false);
    }
  return NULL;
}

static void test_threads(void) {
  hs_frame_cache *c = open_cache(64, NULL, true, 8, 8);
  pthread_mutex_t locks[SHARED];
  for (unsigned k = 0; k < SHARED; k++) pthread_mutex_init(&locks[k], NULL);
  worker w[NTHREADS];
  pthread_t t[NTHREADS];
  for (unsigned i = 0; i < NTHREADS; i++) {
    w[i] = (worker){.c = c, .shared_locks = locks, .seed = 77 + i, .base = (i + 1) * 1000000};
    pthread_create(&t[i], NULL, work, &w[i]);
  }
  for (unsigned i = 0; i < NTHREADS; i++) pthread_join(t[i], NULL);
  for (unsigned i = 0; i < NTHREADS; i++) {
    CHECK_EQ(w[i].stamp_errors, 0);
    CHECK_EQ(w[i].null_hard, 0);
  }
  CHECK_OK(frame_cache_check(c));
  hs_frame_cache_stats s = stats_of(c);
  CHECK_EQ(s.pinned, 0);
  CHECK(s.count <= s.capacity);
  CHECK_EQ(s.hits + s.misses, s.fetches);
  CHECK(s.overflows > 0 || s.evictions > 0);
  /* Every frame is found under its own key, once, with its stamp. */
  uint32_t found = 0;
  for (unsigned i = 0; i <= NTHREADS; i++)
    for (uint64_t k = 0; k < (i ? OWN_KEYS : SHARED); k++) {
      uint64_t key = i * 1000000 + k;
      hs_frame *f = fetch_frame(c, key, HS_FETCH_LOOKUP, NULL);
      if (!f) continue;
      found++;
      CHECK(hs_frame_key(f) == key);
      CHECK(stamped(f, key, 8));
      hs_frame_cache_unpin(c, f, false);
    }
  CHECK_EQ(found, s.count);
  for (unsigned k = 0; k < SHARED; k++) pthread_mutex_destroy(&locks[k]);
  hs_frame_cache_destroy(c);
}

/* ---- options ---------------------------------------------------------------- */

/* An unpin of a frame that is not pinned (a second unpin), with the
 * cache's mutex and without it: a release build refuses it with a message
 * and changes nothing (the pinned count, the frame, the policy); a debug
 * build stops there. The unpin's common path tests the flags first, and
 * the refusal must not be lost on the way out of line. */
static void double_unpin(bool serialized) {
  hs_frame_cache_options o = cache_options(4, "lru", true, 0, 16);
  o.caller_serializes = serialized;
  hs_frame_cache *c = NULL;
  REQUIRE(hs_frame_cache_create(&o, &c) == HS_OK);
  hs_frame *f = must_fetch(c, 5, HS_FETCH_CREATE);
  hs_frame *g = must_fetch(c, 6, HS_FETCH_CREATE);
  stamp(f, 5, 16);
  hs_frame_cache_unpin(c, f, false);
  hs_frame_cache_unpin(c, f, false); /* the misuse */
  CHECK_CONTAINS(hs_last_error(), "unpin of frame 5, which is not pinned");
  hs_frame_cache_stats st = stats_of(c);
  CHECK_EQ(st.pinned, 1); /* 6 still, and only 6 */
  CHECK_EQ(st.count, 2);
  CHECK_OK(frame_cache_check(c));
  hs_frame *again = must_fetch(c, 5, HS_FETCH_LOOKUP);
  CHECK(again == f && stamped(again, 5, 16));
  hs_frame_cache_unpin(c, again, false);
  hs_frame_cache_unpin(c, g, false);
  CHECK_EQ(stats_of(c).pinned, 0);
  hs_frame_cache_destroy(c);
}

static void test_double_unpin(void) {
  for (int serialized = 0; serialized < 2; serialized++) {
    if (!HS_DEBUG_CHECKS) {
      double_unpin(serialized);
      continue;
    }
    fflush(NULL);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      freopen("/dev/null", "w", stderr);
      double_unpin(serialized);
      _exit(0);
    }
    int status;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
  }
}

static void test_bad_options(void) {
  hs_frame_cache_options o;
  hs_frame_cache *c = NULL;
  hs_frame_cache_options_init(&o);
  CHECK_EQ(o.frame_bytes, 4096);
  CHECK_EQ(o.capacity, 100);
  CHECK(o.purgeable);
  CHECK_EQ(o.scan_run, 32);
  o.frame_bytes = 511;
  CHECK_ST(hs_frame_cache_create(&o, &c), HS_ERR_INVALID);
  CHECK_CONTAINS(hs_last_error(), "frame_bytes 511");
  o.frame_bytes = 65537;
  CHECK_ST(hs_frame_cache_create(&o, &c), HS_ERR_INVALID);
  CHECK_CONTAINS(hs_last_error(), "frame_bytes 65537");
  o.frame_bytes = 65536;
  o.alloc_block = test_alloc; /* without free_block */
  CHECK_ST(hs_frame_cache_create(&o, &c), HS_ERR_INVALID);
  CHECK_CONTAINS(hs_last_error(), "free_block");
  o.alloc_block = NULL;
  o.free_block = test_free;
  CHECK_ST(hs_frame_cache_create(&o, &c), HS_ERR_INVALID);
  o.free_block = NULL;
  o.capacity = 10;
  o.policy = "no-such-policy";
  CHECK_ST(hs_frame_cache_create(&o, &c), HS_ERR_INVALID);
  CHECK_CONTAINS(hs_last_error(), "no-such-policy");
  o.policy = "s3fifo:small=7";
  CHECK_ST(hs_frame_cache_create(&o, &c), HS_ERR_INVALID);
  CHECK_CONTAINS(hs_last_error(), "small");
  o.policy = "belady";
  CHECK_ST(hs_frame_cache_create(&o, &c), HS_ERR_INVALID);
  CHECK_CONTAINS(hs_last_error(), "simulator");
  o.purgeable = false; /* checked even where no policy will run */
  CHECK_ST(hs_frame_cache_create(&o, &c), HS_ERR_INVALID);
  CHECK(c == NULL);
  o.policy = "midpoint";
  o.purgeable = true;
  CHECK_OK(hs_frame_cache_create(&o, &c));
  hs_frame_cache_unpin(c, must_fetch(c, 1, HS_FETCH_CREATE), false);
  hs_frame_cache_destroy(c);
}

/* A frame pinned while victim searches pass over it leaves the policy and
 * comes back at unpin as just used (SQLite keeps a transaction's dirty
 * pages pinned until it commits). lru, 4 frames: key 1 pinned at the tail
 * while key 5's search passes over it (taking 2); unpinned, 1 is the
 * newest, so key 6's search takes 3. Were 1 still at the tail, 6 would
 * take it. */
static void test_parking(void) {
  hs_frame_cache *c = open_cache(4, "lru", true, 0, 0);
  hs_frame *one = must_fetch(c, 1, HS_FETCH_CREATE);
  for (uint64_t k = 2; k <= 4; k++)
    hs_frame_cache_unpin(c, must_fetch(c, k, HS_FETCH_CREATE), false);
  hs_frame *five = must_fetch(c, 5, HS_FETCH_CREATE);
  CHECK_OK(frame_cache_check(c));
  hs_frame_cache_unpin(c, five, false);
  hs_frame_cache_unpin(c, one, false);
  CHECK_OK(frame_cache_check(c));
  hs_frame_cache_unpin(c, must_fetch(c, 6, HS_FETCH_CREATE), false);
  CHECK_OK(frame_cache_check(c));
  CHECK(!cached(c, 2));
  CHECK(!cached(c, 3));
  CHECK(cached(c, 1));
  CHECK(cached(c, 4) && cached(c, 5) && cached(c, 6));
  /* Parked, then resized, then unpinned: every frame is in the new
   * policy. */
  one = must_fetch(c, 1, HS_FETCH_CREATE);
  hs_frame_cache_unpin(c, must_fetch(c, 7, HS_FETCH_CREATE), false);
  CHECK_OK(hs_frame_cache_set_capacity(c, 6));
  CHECK_OK(frame_cache_check(c));
  hs_frame_cache_unpin(c, one, false);
  CHECK_OK(frame_cache_check(c));
  hs_frame_cache_destroy(c);
}

/* caller_serializes: the engine's lock, not the cache's, serializes two
 * threads' fetches and unpins, while a third reads the statistics with no
 * lock at all (TSan checks that it may); the counts it sees never go back,
 * and the last reading adds up. */
typedef struct serial_run {
  hs_frame_cache *c;
  pthread_mutex_t engine_lock;
  _Atomic int done;
  uint64_t seed;
  bool reader_ok;
} serial_run;

static void *serial_worker(void *arg) {
  serial_run *r = arg;
  uint64_t s = r->seed;
  for (int i = 0; i < 20000; i++) {
    s = s * 6364136223846793005u + 1442695040888963407u;
    pthread_mutex_lock(&r->engine_lock);
    hs_frame *f = fetch_frame(r->c, (s >> 33) % 64, HS_FETCH_CREATE_HARD, NULL);
    if (f) hs_frame_cache_unpin(r->c, f, false);
    pthread_mutex_unlock(&r->engine_lock);
  }
  return NULL;
}

static void *serial_reader(void *arg) {
  serial_run *r = arg;
  uint64_t last = 0;
  r->reader_ok = true;
  while (!atomic_load(&r->done)) {
    hs_frame_cache_stats st;
    hs_frame_cache_stats_get(r->c, &st);
    if (st.fetches < last || st.count > 64) r->reader_ok = false;
    last = st.fetches;
  }
  return NULL;
}

static void test_caller_serializes(void) {
  hs_frame_cache_options o;
  hs_frame_cache_options_init(&o);
  o.frame_bytes = FRAME;
  o.capacity = 16;
  o.policy = "s3fifo";
  o.caller_serializes = true;
  serial_run r = {.seed = 7};
  REQUIRE(hs_frame_cache_create(&o, &r.c) == HS_OK);
  pthread_mutex_init(&r.engine_lock, NULL);
  atomic_init(&r.done, 0);
  pthread_t w[2], rd;
  REQUIRE(pthread_create(&rd, NULL, serial_reader, &r) == 0);
  for (int i = 0; i < 2; i++) REQUIRE(pthread_create(&w[i], NULL, serial_worker, &r) == 0);
  for (int i = 0; i < 2; i++) pthread_join(w[i], NULL);
  atomic_store(&r.done, 1);
  pthread_join(rd, NULL);
  CHECK(r.reader_ok);
  hs_frame_cache_stats st = stats_of(r.c);
  CHECK_EQ(st.fetches, 40000);
  CHECK_EQ(st.hits + st.misses, st.fetches);
  CHECK_EQ(st.pinned, 0);
  CHECK_OK(frame_cache_check(r.c));
  pthread_mutex_destroy(&r.engine_lock);
  hs_frame_cache_destroy(r.c);
}

int main(void) {
  test_all_pinned();
  test_pinned_refetch();
  test_lean_fetch();
  test_ninety_percent();
  test_capacity_zero();
  test_engine_memory();
  test_pcache1_counting();
  test_parked_then_detached();
  test_content_and_extra();
  test_rekey();
  test_truncate();
  test_set_capacity();
  test_shrink();
  test_not_purgeable();
  test_model_every_policy();
  test_scan_resistance();
  test_scan_shapes();
  test_scan_across_descents();
  test_boundary_key();
  test_parking();
  test_threads();
  test_caller_serializes();
  test_double_unpin();
  test_bad_options();
  return check_finish();
}
