/*
 * test_bgwriter — the background writer and the policy operation it rests
 * on.
 *
 *  1. Every policy the pool can use lists its upcoming victims without
 *     changing anything (twice the same list, standings and ghosts as they
 *     were), and the next victim search names the first one listed — over
 *     many rounds of hits and misses from a fixed seed. Belady lists none.
 *  2. A synchronous round (hs_pool_bgwriter_round) writes the dirty
 *     upcoming victims, so the misses after it write nothing themselves
 *     (buffers_backend 0, where the same misses without the round write
 *     every victim) — for every pool policy.
 *  3. It stops at bgwriter_lru_maxpages (counted in maxwritten_clean),
 *     passes a pinned buffer and an exclusively locked one, and flushes the
 *     WAL before each page (the I/O observer checks the log was durable up
 *     to the page's LSN when the write began).
 *  4. The options at their limits and beyond.
 *  5. The writer thread beside foreground threads dirtying pages, under
 *     every pool policy: every update survives close and reopen;
 *     abandoning a pool whose writer sleeps for 10 s returns at once
 *     (close wakes it). With direct I/O and HOTSET_TEST_QUICK, one policy
 *     of each locking kind.
 */
#include "policy/policy_impl.h"
#include "pool/pool_internal.h"
#include "pool_util.h"

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>

static const hs_relid REL = 7;

/* ---- 1. the policy operation ------------------------------------------ */

static uint64_t rng_state = 12345;
static uint32_t rnd(uint32_t n) {
  rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(rng_state >> 33) % n;
}

static hs_access access_of(uint64_t key, uint64_t now) {
  return (hs_access){.key = key, .size = 1, .now = now, .next = HS_NEXT_UNKNOWN};
}

#define SLOTS 48

/* The state the operation must not change: every slot's standing, the
 * ghosts, the residency. */
static void snapshot(const hs_policy *p, uint32_t out[SLOTS + 2]) {
  for (uint32_t s = 0; s < SLOTS; s++) out[s] = hs_policy_standing(p, s);
  out[SLOTS] = (uint32_t)hs_policy_ghosts(p);
  out[SLOTS + 1] = hs_policy_resident(p);
}

static void check_policy_prediction(const hs_policy_ops *ops) {
  hs_policy_env env = {.unit_bytes = 8192, .clock = HS_CLOCK_MILLISECONDS};
  hs_policy *p = NULL;
  REQUIRE(hs_policy_create(ops->name, SLOTS, SLOTS, &env, &p) == HS_OK);
  uint64_t now = 1, next_key = 1;
  uint64_t key_of[SLOTS];
  for (uint32_t s = 0; s < SLOTS; s++) {
    key_of[s] = next_key++;
    hs_access a = access_of(key_of[s], now++);
    REQUIRE(hs_policy_insert(p, s, &a) == HS_OK);
  }
  uint32_t first[SLOTS], again[SLOTS], before[SLOTS + 2], after[SLOTS + 2];
  unsigned matched = 0, rounds = 200, listed_none = 0;
  for (unsigned r = 0; r < rounds; r++) {
    /* Some hits, skewed to low slots so that standings differ. */
    for (int h = rnd(6); h > 0; h--) {
      uint32_t s = rnd(SLOTS) / (1 + rnd(3));
      hs_access a = access_of(key_of[s], now++);
      hs_policy_hit(p, s, &a);
    }
    snapshot(p, before);
    uint32_t n = hs_policy_upcoming_victims(p, first, SLOTS);
    uint32_t n2 = hs_policy_upcoming_victims(p, again, SLOTS);
    snapshot(p, after);
    CHECK(memcmp(before, after, sizeof before) == 0);
    CHECK_EQ(n, n2);
    CHECK(n <= SLOTS && memcmp(first, again, sizeof *first * (n < n2 ? n : n2)) == 0);
    bool seen[SLOTS] = {false};
    for (uint32_t i = 0; i < n; i++) {
      CHECK(first[i] < SLOTS && hs_policy_standing(p, first[i]) == before[first[i]]);
      CHECK(!seen[first[i]]); /* listed once */
      seen[first[i]] = true;
    }
    /* A miss on a key never seen: the victim must be the first listed.
     * A policy may list none when it cannot tell (clockpro with no cold
     * page); that must stay rare. */
    hs_access miss = access_of(next_key++, now++);
    int64_t v = hs_policy_victim(p, &miss, NULL, NULL);
    REQUIRE(v >= 0);
    if (n == 0)
      listed_none++;
    else if ((uint32_t)v == first[0])
      matched++;
    else
      fprintf(stderr, "%s round %u: victim %lld, first listed %u\n", ops->name, r, (long long)v,
              first[0]);
    REQUIRE(hs_policy_evict(p, (uint32_t)v) == HS_OK);
    key_of[v] = miss.key;
    REQUIRE(hs_policy_insert(p, (uint32_t)v, &miss) == HS_OK);
  }
  CHECK_EQ(matched + listed_none, rounds);
  CHECK(listed_none <= rounds / 10);
  if (listed_none)
    printf("%s: listed no victim in %u of %u rounds\n", ops->name, listed_none, rounds);
  hs_policy_destroy(p);
}

static void test_upcoming_every_policy(void) {
  for (int i = 0; hs_all_policies[i]; i++) {
    const hs_policy_ops *ops = hs_all_policies[i];
    if (!ops->upcoming) {
      /* Belady needs the incoming access's future: it cannot tell. */
      CHECK(ops->flags & HS_POLICY_SIM_ONLY);
      hs_policy *p = NULL;
      REQUIRE(hs_policy_create(ops->name, 4, 4, NULL, &p) == HS_OK);
      hs_access a = access_of(1, 1);
      a.next = 5;
      REQUIRE(hs_policy_insert(p, 0, &a) == HS_OK);
      uint32_t slots[4];
      CHECK_EQ(hs_policy_upcoming_victims(p, slots, 4), 0);
      hs_policy_destroy(p);
      continue;
    }
    check_policy_prediction(ops); /* fixedset too: without hindsight it names slots in order */
  }
}

/* ---- 2, 3. synchronous rounds ----------------------------------------- */

/* A log that flushes exactly as far as asked, and an observer checking it
 * was flushed up to each page's LSN before the page's write began. */
typedef struct fake_log {
  pthread_mutex_t mu;
  hs_lsn flushed;
  hs_lsn lsn_of[256]; /* the LSN each block was last dirtied at */
  unsigned writes, violations;
} fake_log;

static hs_status log_flush(void *ctx, hs_lsn upto, bool *flushed) {
  fake_log *log = ctx;
  pthread_mutex_lock(&log->mu);
  *flushed = upto > log->flushed;
  if (*flushed) log->flushed = upto;
  pthread_mutex_unlock(&log->mu);
  return HS_OK;
}

static void observe(void *ctx, hs_io_op op, hs_relid rel, hs_fork fork, hs_blockno block,
                    const void *page) {
  fake_log *log = ctx;
  (void)fork;
  (void)page;
  if (op != HS_IO_WRITE || rel != REL) return;
  pthread_mutex_lock(&log->mu);
  log->writes++;
  if (block < 256 && log->lsn_of[block] > log->flushed) log->violations++;
  pthread_mutex_unlock(&log->mu);
}

static hs_pool *open_small(const char *dir, const char *policy, uint32_t pages, uint32_t maxpages,
                           fake_log *log) {
  hs_pool_options o;
  hs_pool_options_init(&o);
  o.dir = dir;
  o.policy = policy;
  o.pool_pages = pages;
  o.page_size = 4096;
  o.bgwriter_lru_maxpages = maxpages;
  o.flush_wal_up_to = log ? log_flush : NULL;
  o.wal_ctx = log;
  hs_pool *pool = open_pool_from(&o);
  if (log) hs_smgr_set_observer(hs_pool_smgr(pool), observe, log);
  return pool;
}

/* Dirties blocks first .. first+n-1, each at LSN 1000 + block. */
static void dirty_blocks(hs_pool *pool, fake_log *log, hs_blockno first, uint32_t n) {
  for (hs_blockno b = first; b < first + n; b++) {
    if (log) {
      pthread_mutex_lock(&log->mu);
      log->lsn_of[b] = 1000 + b;
      pthread_mutex_unlock(&log->mu);
    }
    must_update(pool, REL, b, 1 + b, 1000 + b);
  }
}

static void read_blocks(hs_pool *pool, hs_blockno first, uint32_t n) {
  for (hs_blockno b = first; b < first + n; b++)
    hs_buf_release(pool, must_read(pool, REL, b, NULL));
}

/* Fill a 32-page pool with dirty pages, then read 32 new ones: with a round
 * in between the misses write nothing; without, each writes its victim. */
static void test_round_cleans_victims(const char *policy) {
  for (int with_round = 0; with_round < 2; with_round++) {
    char dir[256];
    testdir_make(dir, sizeof dir, "bgwriter-round");
    fake_log log = {.mu = PTHREAD_MUTEX_INITIALIZER};
    hs_pool *pool = open_small(dir, policy, 32, 100, &log);
    make_relation(pool, REL, 96);
    dirty_blocks(pool, &log, 0, 32);
    hs_pool_bgwriter_stats st;
    hs_pool_bgwriter_stats_get(pool, &st);
    CHECK_EQ(st.buffers_alloc, 32);
    CHECK_EQ(st.rounds, 0);
    if (with_round) {
      uint32_t written = 0;
      CHECK_OK(hs_pool_bgwriter_round(pool, &written));
      /* 32 allocations × 2, capped at the pool: every page — except under
       * clockpro, which lists only its cold pages, and most pages are hot
       * right after the pool filled. */
      if (strcmp(policy, "clockpro") == 0)
        CHECK(written >= 1);
      else
        CHECK_EQ(written, 32);
      hs_pool_bgwriter_stats_get(pool, &st);
      CHECK_EQ(st.buffers_clean, written);
      CHECK_EQ(st.rounds, 1);
      CHECK_EQ(st.maxwritten_clean, 0);
    }
    hs_pool_stats_reset(pool);
    hs_pool_bgwriter_stats_get(pool, &st);
    CHECK_EQ(st.buffers_clean + st.rounds + st.buffers_alloc + st.buffers_backend, 0);
    read_blocks(pool, 32, 32);
    hs_pool_bgwriter_stats_get(pool, &st);
    CHECK_EQ(st.buffers_alloc, 32);
    if (with_round) {
      CHECK_EQ(st.buffers_backend, 0);
    } else {
      /* Every victim is dirty at first; lirs, clockpro and lru-k then take
       * the new (clean) pages again, the others the next old dirty one. */
      CHECK(st.buffers_backend >= 1);
      if (st.buffers_backend != 32)
        printf("%s: %llu misses wrote their victim\n", policy,
               (unsigned long long)st.buffers_backend);
    }
    CHECK_EQ(log.violations, 0);
    CHECK_OK(hs_pool_close(pool));
    testdir_remove(dir);
  }
}

/* maxpages stops a round; a pinned and an exclusively locked buffer are
 * passed; WAL before data on every page written. */
static void test_round_limits(void) {
  char dir[256];
  testdir_make(dir, sizeof dir, "bgwriter-limits");
  fake_log log = {.mu = PTHREAD_MUTEX_INITIALIZER};
  hs_pool *pool = open_small(dir, "clock-sweep", 32, 5, &log);
  make_relation(pool, REL, 64);
  dirty_blocks(pool, &log, 0, 32);
  uint32_t written = 0;
  CHECK_OK(hs_pool_bgwriter_round(pool, &written));
  CHECK_EQ(written, 5);
  hs_pool_bgwriter_stats st;
  hs_pool_bgwriter_stats_get(pool, &st);
  CHECK_EQ(st.buffers_clean, 5);
  CHECK_EQ(st.maxwritten_clean, 1);
  CHECK_EQ(log.writes, 5);
  CHECK_EQ(log.violations, 0);
  CHECK_OK(hs_pool_close(pool));

  /* Pinned and locked: a pool with room for a whole round. */
  memset(log.lsn_of, 0, sizeof log.lsn_of);
  log.writes = 0;
  pool = open_small(dir, "clock-sweep", 32, 100, &log);
  dirty_blocks(pool, &log, 0, 32);
  hs_buf pinned = must_read(pool, REL, 3, NULL);
  hs_buf locked = must_read(pool, REL, 4, NULL);
  CHECK_OK(hs_buf_lock(pool, locked, HS_LOCK_EXCLUSIVE));
  /* A lock is held with a pin, so the pin check passes block 4 already;
   * the writer's *try* of the content lock guards the moment between its
   * pin check and its write. White-box: block 6's lock word taken without
   * a pin, as a thread that pinned and locked it just then would hold it. */
  hs_buf raced = find_buffer(pool, REL, 6, NULL);
  REQUIRE(raced >= 0);
  REQUIRE(content_lock_try(&pool_desc(pool, raced)->content_lock, HS_LOCK_EXCLUSIVE));
  CHECK_OK(hs_pool_bgwriter_round(pool, &written));
  content_lock_release(&pool_desc(pool, raced)->content_lock, lock_stripe(pool, raced));
  CHECK_EQ(written, 29);
  hs_buffer_info info;
  REQUIRE(find_buffer(pool, REL, 3, &info) == pinned);
  CHECK(info.dirty);
  REQUIRE(find_buffer(pool, REL, 4, &info) == locked);
  CHECK(info.dirty);
  REQUIRE(find_buffer(pool, REL, 6, &info) == raced);
  CHECK(info.dirty);
  REQUIRE(find_buffer(pool, REL, 5, &info) >= 0);
  CHECK(!info.dirty);
  CHECK_EQ(log.writes, 29);
  CHECK_EQ(log.violations, 0);
  /* The WAL was flushed up to the highest LSN written, no further. */
  CHECK_EQ(log.flushed, 1000 + 31);
  CHECK_OK(hs_buf_unlock(pool, locked));
  CHECK_OK(hs_buf_release(pool, locked));
  CHECK_OK(hs_buf_release(pool, pinned));
  /* The next round, with no allocation since, still aims at the smoothed
   * estimate (it decays by 1/16 a round): it writes the three let go. */
  CHECK_OK(hs_pool_bgwriter_round(pool, &written));
  CHECK_EQ(written, 3);
  hs_pool_bgwriter_stats_get(pool, &st);
  CHECK_EQ(st.rounds, 2);
  CHECK_OK(hs_pool_close(pool));
  testdir_remove(dir);
}

/* ---- 4. options ---------------------------------------------------------- */

static hs_status open_with(const char *dir, uint32_t delay, uint32_t maxpages, double mult) {
  hs_pool_options o;
  hs_pool_options_init(&o);
  o.dir = dir;
  o.pool_pages = 16;
  o.bgwriter_delay_ms = delay;
  o.bgwriter_lru_maxpages = maxpages;
  o.bgwriter_lru_multiplier = mult;
  hs_pool *pool = NULL;
  hs_status st = hs_pool_open(&o, &pool);
  if (st == HS_OK) CHECK_OK(hs_pool_close(pool));
  return st;
}

static void test_options(void) {
  char dir[256];
  testdir_make(dir, sizeof dir, "bgwriter-options");
  hs_pool_options o;
  hs_pool_options_init(&o);
  CHECK_EQ(o.bgwriter_delay_ms, 0);
  CHECK_EQ(o.bgwriter_lru_maxpages, 100);
  CHECK(o.bgwriter_lru_multiplier == 2.0);
  CHECK_OK(open_with(dir, 0, 0, 0));
  CHECK_OK(open_with(dir, HS_POOL_BGWRITER_MIN_DELAY_MS, HS_POOL_MAX_PAGES,
                     HS_POOL_BGWRITER_MAX_MULTIPLIER));
  CHECK_OK(open_with(dir, HS_POOL_BGWRITER_MAX_DELAY_MS, 1, 0.5));
  CHECK_ST(open_with(dir, HS_POOL_BGWRITER_MIN_DELAY_MS - 1, 100, 2), HS_ERR_INVALID);
  CHECK_CONTAINS(hs_last_error(), "bgwriter_delay_ms");
  CHECK_ST(open_with(dir, HS_POOL_BGWRITER_MAX_DELAY_MS + 1, 100, 2), HS_ERR_INVALID);
  CHECK_CONTAINS(hs_last_error(), "bgwriter_delay_ms");
  CHECK_ST(open_with(dir, 0, HS_POOL_MAX_PAGES + 1, 2), HS_ERR_INVALID);
  CHECK_CONTAINS(hs_last_error(), "bgwriter_lru_maxpages");
  CHECK_ST(open_with(dir, 0, 100, -0.5), HS_ERR_INVALID);
  CHECK_CONTAINS(hs_last_error(), "bgwriter_lru_multiplier");
  CHECK_ST(open_with(dir, 0, 100, HS_POOL_BGWRITER_MAX_MULTIPLIER + 0.5), HS_ERR_INVALID);
  CHECK_CONTAINS(hs_last_error(), "bgwriter_lru_multiplier");
  CHECK_ST(open_with(dir, 0, 100, NAN), HS_ERR_INVALID);
  CHECK_CONTAINS(hs_last_error(), "bgwriter_lru_multiplier");
  uint32_t written = 7;
  CHECK_ST(hs_pool_bgwriter_round(NULL, &written), HS_ERR_MISUSE);
  CHECK_EQ(written, 0);
  /* Multiplier 0 or maxpages 0: rounds run and write nothing. */
  for (int k = 0; k < 2; k++) {
    hs_pool_options_init(&o);
    o.dir = dir;
    o.pool_pages = 16;
    o.page_size = 4096;
    if (k == 0)
      o.bgwriter_lru_multiplier = 0;
    else
      o.bgwriter_lru_maxpages = 0;
    hs_pool *pool = open_pool_from(&o);
    make_relation(pool, REL + 1 + k, 16);
    for (hs_blockno b = 0; b < 16; b++) must_update(pool, REL + 1 + k, b, b, 0);
    CHECK_OK(hs_pool_bgwriter_round(pool, &written));
    CHECK_EQ(written, 0);
    hs_pool_bgwriter_stats st;
    hs_pool_bgwriter_stats_get(pool, &st);
    CHECK_EQ(st.rounds, 1);
    CHECK_OK(hs_pool_close(pool));
  }
  testdir_remove(dir);
}

/* ---- 5. the thread --------------------------------------------------------- */

#define WRITERS       3
#define BLOCKS_EACH   40
#define UPDATES_EACH  4000
#define THREAD_BLOCKS (WRITERS * BLOCKS_EACH)

typedef struct worker {
  hs_pool *pool;
  int id;
  uint64_t last[BLOCKS_EACH]; /* the value each of its blocks holds */
  unsigned failures;          /* counted here: check.h's counters are not for threads */
} worker;

/* must_update without check.h: false if a call failed. */
static bool update_block(hs_pool *pool, hs_blockno block, uint64_t value) {
  hs_buf b;
  if (hs_pool_read(pool, REL, HS_FORK_MAIN, block, HS_READ_NORMAL, NULL, &b, NULL) != HS_OK)
    return false;
  bool ok = hs_buf_lock(pool, b, HS_LOCK_EXCLUSIVE) == HS_OK;
  if (ok) {
    stamp_page(hs_buf_page(pool, b), REL, block, value);
    ok = hs_buf_mark_dirty(pool, b, 0, NULL) == HS_OK;
    ok = hs_buf_unlock(pool, b) == HS_OK && ok;
  }
  return hs_buf_release(pool, b) == HS_OK && ok;
}

static void *worker_main(void *arg) {
  worker *w = arg;
  uint64_t seed = 99 + (uint64_t)w->id;
  for (uint64_t k = 1; k <= UPDATES_EACH; k++) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    uint32_t i = (uint32_t)(seed >> 33) % BLOCKS_EACH;
    hs_blockno block = (hs_blockno)(w->id * BLOCKS_EACH + i);
    uint64_t value = k * WRITERS + (uint64_t)w->id;
    if (update_block(w->pool, block, value))
      w->last[i] = value;
    else
      w->failures++;
    /* A reader's miss between updates: other blocks move through the pool. */
    hs_buf b;
    if (hs_pool_read(w->pool, REL, HS_FORK_MAIN, THREAD_BLOCKS + (hs_blockno)((seed >> 40) % 200),
                     HS_READ_NORMAL, NULL, &b, NULL) == HS_OK)
      hs_buf_release(w->pool, b);
    else
      w->failures++;
  }
  return NULL;
}

static void test_thread(const char *policy) {
  char dir[256];
  testdir_make(dir, sizeof dir, "bgwriter-thread");
  hs_pool_options o;
  hs_pool_options_init(&o);
  o.dir = dir;
  o.pool_pages = 48;
  o.page_size = 4096;
  o.policy = policy;
  o.bgwriter_delay_ms = HS_POOL_BGWRITER_MIN_DELAY_MS;
  hs_pool *pool = open_pool_from(&o);
  make_relation(pool, REL, THREAD_BLOCKS + 200);
  worker w[WRITERS];
  pthread_t t[WRITERS];
  for (int i = 0; i < WRITERS; i++) {
    w[i] = (worker){.pool = pool, .id = i};
    for (int b = 0; b < BLOCKS_EACH; b++) w[i].last[b] = 0;
    REQUIRE(pthread_create(&t[i], NULL, worker_main, &w[i]) == 0);
  }
  for (int i = 0; i < WRITERS; i++) {
    pthread_join(t[i], NULL);
    CHECK_EQ(w[i].failures, 0);
  }
  hs_pool_bgwriter_stats st;
  hs_pool_bgwriter_stats_get(pool, &st);
  printf("thread, %s: %llu rounds, %llu written by the writer, %llu by misses, %llu allocations\n",
         policy, (unsigned long long)st.rounds, (unsigned long long)st.buffers_clean,
         (unsigned long long)st.buffers_backend, (unsigned long long)st.buffers_alloc);
  CHECK_OK(hs_pool_close(pool)); /* with the writer running */

  o.bgwriter_delay_ms = 0;
  pool = open_pool_from(&o);
  for (int i = 0; i < WRITERS; i++)
    for (int b = 0; b < BLOCKS_EACH; b++) {
      hs_blockno block = (hs_blockno)(i * BLOCKS_EACH + b);
      hs_buf buf = must_read(pool, REL, block, NULL);
      CHECK_EQ(stamp_value(hs_buf_page(pool, buf), REL, block), w[i].last[b]);
      hs_buf_release(pool, buf);
    }
  CHECK_OK(hs_pool_close(pool));

  /* A writer asleep for 10 s: abandon and close wake it rather than wait.
   * Each waits until the thread's first round is done (the thread runs one
   * as it starts, then sleeps), so that the thread is asleep, or about to
   * be, when the pool goes. */
  o.bgwriter_delay_ms = HS_POOL_BGWRITER_MAX_DELAY_MS;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int close = 0; close < 2; close++) {
    pool = open_pool_from(&o);
    for (;;) {
      hs_pool_bgwriter_stats_get(pool, &st);
      if (st.rounds >= 1) break;
      sched_yield();
    }
    if (close)
      CHECK_OK(hs_pool_close(pool));
    else
      hs_pool_abandon(pool);
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
  CHECK(secs < 5.0);
  testdir_remove(dir);
}

/* The writer thread under `policy` in this run. With direct I/O every miss
 * is a device read and a write a device write, the same calls whatever the
 * policy: HOTSET_TEST_QUICK (the sanitizer runs) takes one policy of each
 * locking kind there, the plain run every policy. */
static bool thread_run_wanted(const char *policy) {
  const char *quick = getenv("HOTSET_TEST_QUICK");
  if (!test_direct_io() || !quick || strcmp(quick, "1") != 0) return true;
  return strcmp(policy, "clock-sweep") == 0 || strcmp(policy, "clock") == 0 ||
         strcmp(policy, "lru") == 0;
}

int main(void) {
  test_upcoming_every_policy();
  for (int i = 0; hs_all_policies[i]; i++)
    if (!(hs_all_policies[i]->flags & HS_POLICY_SIM_ONLY))
      test_round_cleans_victims(hs_all_policies[i]->name);
  test_round_limits();
  test_options();
  /* Every pool policy: lock-free (clock-sweep), lock-free hits beside a
   * locked upcoming list (clock, sieve, s3fifo, car, clockpro, fifo), every
   * call locked (the list policies). */
  for (int i = 0; hs_all_policies[i]; i++)
    if (!(hs_all_policies[i]->flags & HS_POLICY_SIM_ONLY) &&
        thread_run_wanted(hs_all_policies[i]->name))
      test_thread(hs_all_policies[i]->name);
  return check_finish();
}
