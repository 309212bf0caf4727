/*
 * tests/policy/key_space.c — a caller that says all its keys are below a bound
 * (hs_policy_env.key_space, as the simulator does) changes how the
 * ghost-keeping policies index evicted keys (a direct array instead of a
 * hash table), never what they decide: for every policy, the same requests
 * with and without the bound name the same victims in the same order, with
 * prefetch hints (hs_policy_prefetch) for random keys, inside the space and
 * beyond it, between every request. A key outside the space is refused at
 * insert. And hs_sim_run's hindsight: fixedset is refused until the ranking
 * is made (hs_sim_need_hindsight), belady until the next-access times are.
 */
#include "policy/policy_impl.h"
#include "policy_driver.h"
#include "policy_sections.h"
#include "sim/sim.h"
#include "sim_trace_util.h"

enum { NKEYS = 3000, NSLOTS = 200, NREQ = 60000, MAX_VICTIMS = NREQ };

typedef struct victim_log {
  int64_t *keys;
  uint64_t n;
} victim_log;

static void log_victim(void *ctx, int64_t key) {
  victim_log *l = ctx;
  if (l->n < MAX_VICTIMS) l->keys[l->n++] = key;
}

/* The requests: a skewed, shifting popularity over NKEYS keys, so ghosts are
 * found, forgotten and found again; next-access times for belady. */
static void make_requests(uint32_t *keys, int64_t *next) {
  uint64_t r = 42;
  for (uint32_t i = 0; i < NREQ; i++) {
    uint64_t x = test_rand(&r);
    uint32_t hot = (uint32_t)(x % 10 < 7 ? x / 10 % 400 : x / 10 % NKEYS);
    keys[i] = (hot + i / 5000 * 97) % NKEYS;
  }
  int64_t last[NKEYS];
  for (uint32_t k = 0; k < NKEYS; k++) last[k] = HS_NEXT_NEVER;
  for (uint32_t i = NREQ; i-- > 0;) {
    next[i] = last[keys[i]];
    last[keys[i]] = i;
  }
}

static uint64_t run(const char *name, const hs_policy_env *env, const uint32_t *keys,
                    const int64_t *next, victim_log *log) {
  driver d;
  driver_init_env(&d, name, NSLOTS, NSLOTS, NKEYS, env);
  d.on_victim = log_victim;
  d.on_victim_ctx = log;
  uint64_t r = 7;
  for (uint32_t i = 0; i < NREQ; i++) {
    /* Hints that must change nothing: keys soon asked for, random ones,
     * and ones the space does not hold. */
    if (i + 16 < NREQ) hs_policy_prefetch(d.p, keys[i + 16]);
    hs_policy_prefetch(d.p, test_rand(&r) % (2 * NKEYS));
    hs_policy_prefetch(d.p, UINT64_MAX - i);
    driver_access(&d, keys[i], 1, next[i], HS_ACCESS_READ);
  }
  CHECK_EQ(d.violations, 0);
  uint64_t misses = d.misses;
  driver_free(&d);
  return misses;
}

static void test_same_decisions(const char *name) {
  static uint32_t keys[NREQ];
  static int64_t next[NREQ];
  if (registered_policy(name)->flags & HS_POLICY_NEEDS_HINDSIGHT) return; /* fixedset: below */
  make_requests(keys, next);
  victim_log hashed = {malloc(sizeof(int64_t) * MAX_VICTIMS), 0};
  victim_log dense = {malloc(sizeof(int64_t) * MAX_VICTIMS), 0};
  REQUIRE(hashed.keys && dense.keys);
  {
    hashed.n = dense.n = 0;
    hs_policy_env env = {.key_space = NKEYS};
    uint64_t m1 = run(name, NULL, keys, next, &hashed);
    uint64_t m2 = run(name, &env, keys, next, &dense);
    if (m1 != m2 || hashed.n != dense.n ||
        memcmp(hashed.keys, dense.keys, sizeof(int64_t) * hashed.n) != 0)
      fprintf(stderr, "%s: %llu misses hashed, %llu with key_space; %llu against %llu victims\n",
              name, (unsigned long long)m1, (unsigned long long)m2, (unsigned long long)hashed.n,
              (unsigned long long)dense.n);
    CHECK_EQ(m1, m2);
    CHECK_EQ(hashed.n, dense.n);
    CHECK(memcmp(hashed.keys, dense.keys, sizeof(int64_t) * hashed.n) == 0);
    CHECK(m1 > NKEYS / 2); /* the trace evicts: ghosts were used */
  }
  free(hashed.keys);
  free(dense.keys);
}

/* A key at or beyond the space the caller promised: refused, not indexed
 * out of bounds. */
static void test_key_outside_space(const char *name) {
  {
    hs_policy *p;
    hs_policy_env env = {.key_space = 10};
    REQUIRE(hs_policy_create(name, 4, 4, &env, &p) == HS_OK);
    hs_access a = {.key = 10, .size = 1, .kind = HS_ACCESS_READ, .next = HS_NEXT_NEVER};
    CHECK_ST(hs_policy_insert(p, 0, &a), HS_ERR_INVALID);
    CHECK_CONTAINS(hs_last_error(), "key 10 is outside the key space (below 10)");
    CHECK_EQ(hs_policy_resident(p), 0);
    a.key = 9;
    CHECK_OK(hs_policy_insert(p, 0, &a));
    CHECK_EQ(hs_policy_resident(p), 1);
    hs_policy_destroy(p);
  }
}

/* The simulator computes what a policy's flags ask for, and refuses to run
 * one whose facts are missing. */
static void test_sim_needs(void) {
  uint64_t rng = 3;
  hs_sim_trace *t = sim_trace_zipf(20000, 2000, 0.8, &rng);
  hs_sim_result res;
  CHECK_ST(hs_sim_run(t, "fixedset", 50, true, NULL, &res), HS_ERR_INVALID);
  CHECK_CONTAINS(hs_last_error(), "hs_sim_need_hindsight");
  CHECK_ST(hs_sim_run(t, "belady", 50, true, NULL, &res), HS_ERR_INVALID);
  CHECK_CONTAINS(hs_last_error(), "hs_sim_need_future");
  CHECK_OK(hs_sim_need_future(t));
  CHECK(t->rank == NULL); /* belady's facts alone: no ranking made */
  CHECK_OK(hs_sim_run(t, "belady", 50, true, NULL, &res));
  CHECK_ST(hs_sim_run(t, "fixedset", 50, true, NULL, &res), HS_ERR_INVALID);
  CHECK_OK(hs_sim_need_hindsight(t));
  hs_sim_result fixed;
  CHECK_OK(hs_sim_run(t, "fixedset", 50, true, NULL, &fixed));
  CHECK(res.misses <= fixed.misses); /* belady is the lower bound */
  hs_sim_trace_free(t);
}

/* A policy whose ghost index was never made (no A1out, no ghost queue, no
 * history) takes prefetch hints too: nothing to fetch, nothing touched
 * (UBSan in CI checks no arithmetic is done on its missing array). */
static void test_prefetch_without_ghosts(void) {
  const char *specs[] = {"2q:out=0", "s3fifo:ghost=0", "lru-k:history=0", "arc", "lirs"};
  for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
    for (int dense = 0; dense < 2; dense++) {
      hs_policy *p;
      hs_policy_env env = {.key_space = dense ? 1000 : 0};
      REQUIRE(hs_policy_create(specs[i], 1, 1, &env, &p) == HS_OK);
      for (uint64_t k = 0; k < 2000; k += 7) hs_policy_prefetch(p, k);
      hs_access a = {.key = 3, .size = 1, .kind = HS_ACCESS_READ, .next = HS_NEXT_NEVER};
      CHECK_OK(hs_policy_insert(p, 0, &a));
      hs_policy_destroy(p);
    }
  }
}

/* The direct array is used only where it pays: a cache of 10 entries over
 * ten million keys keeps its hash table (a few hundred bytes, not 40 MB of
 * array); over 2,000 keys it goes direct. */
static void test_dense_only_where_it_pays(void) {
  hs_policy *p;
  hs_policy_env big = {.key_space = 10000000}, small = {.key_space = 2000};
  REQUIRE(hs_policy_create("arc", 10, 10, &big, &p) == HS_OK);
  size_t hashed = hs_policy_memory(p);
  hs_policy_destroy(p);
  REQUIRE(hs_policy_create("arc", 10, 10, &small, &p) == HS_OK);
  size_t dense = hs_policy_memory(p);
  hs_policy_destroy(p);
  CHECK(hashed < 64 * 1024);
  CHECK(dense >= 2000 * sizeof(uint32_t));
}

const policy_section key_space_sections[] = {
    SECTION_COMMON_CHECK(test_prefetch_without_ghosts),
    SECTION_ONE("arc", test_dense_only_where_it_pays),
    SECTION_FOR_EVERY(test_same_decisions),
    SECTION_FOR_EVERY(test_key_outside_space),
    SECTION_COMMON_CHECK(test_sim_needs),
    SECTIONS_END,
};
