/*
 * test_stress — many threads reading and updating random blocks through a
 * small pool (so most accesses evict a page, often a dirty one).
 *
 * Every page carries (rel, block, version, lsn), a payload derived from them
 * and a checksum over all of it. Readers check the checksum under a share
 * lock (no torn page) and that the version never goes back; updaters bump the
 * version under an exclusive lock and count their updates per block. At the
 * end every block's version must equal its count of updates (no lost update)
 * — in the pool, and again from the files after the pool is closed and a new
 * one opened. A fake WAL checks that no page reaches its file before the log
 * is flushed past its LSN, and two more threads extend another relation
 * through the pool at the same time.
 *
 * Deterministic seeds; run under ThreadSanitizer in CI, once per
 * replacement policy the pool accepts (the policy is argv[1]). Under
 * HOTSET_TEST_QUICK (the sanitizer runs) each thread does a third of the
 * operations: the same calls, under the same contention, for less time.
 */
#include "hotset/strategy.h"
#include "pool_util.h"

#include <pthread.h>
#include <stdatomic.h>

#define NTHREADS       6
#define NBLOCKS        200
#define POOL_PAGES     24
#define PAGE_SIZE      1024
#define OPS_PER_THREAD 15000
#define EXTENDERS      2
#define EXTEND_BLOCKS  100
#define SCANNERS       1
#define SCAN_LAPS      20

static const hs_relid REL = 100, GROW_REL = 101;

typedef struct page_header {
  uint64_t rel, block, version, lsn;
} page_header;

static uint32_t page_checksum(const unsigned char *p) {
  uint32_t h = 2166136261u; /* FNV-1a */
  for (size_t i = 0; i < PAGE_SIZE - 4; i++) h = (h ^ p[i]) * 16777619u;
  return h;
}

static void fill_page(unsigned char *p, uint64_t rel, uint64_t block, uint64_t version,
                      uint64_t lsn) {
  page_header h = {rel, block, version, lsn};
  memcpy(p, &h, sizeof h);
  uint64_t x = block * 0x9E3779B97F4A7C15ULL ^ version;
  for (size_t i = sizeof h; i < PAGE_SIZE - 4; i++) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    p[i] = (unsigned char)(x >> 56);
  }
  uint32_t c = page_checksum(p);
  memcpy(p + PAGE_SIZE - 4, &c, 4);
}

static bool page_ok(const unsigned char *p, uint64_t rel, uint64_t block, page_header *out) {
  uint32_t c;
  memcpy(&c, p + PAGE_SIZE - 4, 4);
  memcpy(out, p, sizeof *out);
  return c == page_checksum(p) && out->rel == rel && out->block == block;
}

static _Atomic uint64_t updates[NBLOCKS];
static _Atomic uint64_t next_lsn = 1;
static _Atomic uint64_t wal_flushed;
static _Atomic unsigned bad_pages, lost_versions, wal_violations, errors;

static hs_status wal_flush(void *ctx, hs_lsn upto, bool *flushed) {
  (void)ctx;
  uint64_t cur = atomic_load(&wal_flushed);
  *flushed = false;
  while (cur < upto) {
    if (atomic_compare_exchange_weak(&wal_flushed, &cur, upto)) {
      *flushed = true;
      break;
    }
  }
  return HS_OK;
}

static void observe(void *ctx, hs_io_op op, hs_relid rel, hs_fork fork, hs_blockno block,
                    const void *page) {
  (void)ctx;
  (void)fork;
  (void)block;
  if (op != HS_IO_WRITE || rel != REL) return;
  page_header h;
  memcpy(&h, page, sizeof h);
  if (h.lsn > (uint64_t)atomic_load(&wal_flushed)) atomic_fetch_add(&wal_violations, 1);
}

typedef struct worker {
  hs_pool *pool;
  uint64_t seed;
  unsigned id;
} worker;

static uint64_t next_rand(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

static int ops_per_thread = OPS_PER_THREAD;

static void *work(void *arg) {
  worker *w = arg;
  for (int op = 0; op < ops_per_thread; op++) {
    uint64_t r = next_rand(&w->seed);
    hs_blockno blk = (hs_blockno)(r % NBLOCKS);
    bool update = (r >> 32) % 10 < 3;
    uint64_t committed = atomic_load(&updates[blk]);
    hs_buf b;
    if (hs_pool_read(w->pool, REL, HS_FORK_MAIN, blk, HS_READ_NORMAL, NULL, &b, NULL) != HS_OK) {
      fprintf(stderr, "read failed: %s\n", hs_last_error());
      atomic_fetch_add(&errors, 1);
      continue;
    }
    unsigned char *page = hs_buf_page(w->pool, b);
    page_header h;
    hs_buf_lock(w->pool, b, update ? HS_LOCK_EXCLUSIVE : HS_LOCK_SHARE);
    if (!page_ok(page, REL, blk, &h)) atomic_fetch_add(&bad_pages, 1);
    if (h.version < committed) atomic_fetch_add(&lost_versions, 1);
    if (update) {
      uint64_t lsn = atomic_fetch_add(&next_lsn, 1);
      fill_page(page, REL, blk, h.version + 1, lsn);
      if (hs_buf_mark_dirty(w->pool, b, lsn, NULL) != HS_OK) atomic_fetch_add(&errors, 1);
      atomic_fetch_add(&updates[blk], 1);
    }
    hs_buf_unlock(w->pool, b);
    hs_buf_release(w->pool, b);
  }
  return NULL;
}

/* A sequential scanner through a small bulkread ring, checking every page,
 * while the others update: rings and normal accesses share buffers. */
static void *scan_with_ring(void *arg) {
  worker *w = arg;
  hs_strategy_options c;
  hs_strategy *ring = NULL;
  if (hs_strategy_options_parse("fixed:4KiB", &c) != HS_OK ||
      hs_strategy_create(w->pool, HS_STRATEGY_BULKREAD, &c, &ring) != HS_OK) {
    atomic_fetch_add(&errors, 1);
    return NULL;
  }
  for (int lap = 0; lap < SCAN_LAPS; lap++) {
    for (hs_blockno blk = 0; blk < NBLOCKS; blk++) {
      uint64_t committed = atomic_load(&updates[blk]);
      hs_buf b;
      if (hs_pool_read(w->pool, REL, HS_FORK_MAIN, blk, HS_READ_NORMAL, ring, &b, NULL) != HS_OK) {
        fprintf(stderr, "scan read failed: %s\n", hs_last_error());
        atomic_fetch_add(&errors, 1);
        continue;
      }
      page_header h;
      hs_buf_lock(w->pool, b, HS_LOCK_SHARE);
      if (!page_ok(hs_buf_page(w->pool, b), REL, blk, &h)) atomic_fetch_add(&bad_pages, 1);
      if (h.version < committed) atomic_fetch_add(&lost_versions, 1);
      hs_buf_unlock(w->pool, b);
      hs_buf_release(w->pool, b);
    }
  }
  hs_strategy_destroy(ring);
  return NULL;
}

static void *extend(void *arg) {
  worker *w = arg;
  for (int i = 0; i < EXTEND_BLOCKS; i++) {
    hs_buf b;
    if (hs_pool_extend(w->pool, GROW_REL, HS_FORK_MAIN, NULL, false, &b, NULL) != HS_OK) {
      fprintf(stderr, "extend failed: %s\n", hs_last_error());
      atomic_fetch_add(&errors, 1);
      continue;
    }
    hs_buf_lock(w->pool, b, HS_LOCK_EXCLUSIVE);
    fill_page(hs_buf_page(w->pool, b), GROW_REL, hs_buf_block(w->pool, b), w->id, 0);
    if (hs_buf_mark_dirty(w->pool, b, 0, NULL) != HS_OK) atomic_fetch_add(&errors, 1);
    hs_buf_unlock(w->pool, b);
    hs_buf_release(w->pool, b);
  }
  return NULL;
}

static void verify_all(hs_pool *pool, const char *when) {
  unsigned bad = 0, wrong_version = 0, per_extender[EXTENDERS] = {0};
  for (hs_blockno blk = 0; blk < NBLOCKS; blk++) {
    hs_buf b = must_read(pool, REL, blk, NULL);
    page_header h;
    if (!page_ok(hs_buf_page(pool, b), REL, blk, &h)) bad++;
    if (h.version != atomic_load(&updates[blk])) wrong_version++;
    hs_buf_release(pool, b);
  }
  hs_blockno n = 0;
  CHECK_OK(hs_smgr_nblocks(hs_pool_smgr(pool), GROW_REL, HS_FORK_MAIN, &n));
  CHECK_EQ(n, EXTENDERS * EXTEND_BLOCKS);
  for (hs_blockno blk = 0; blk < n; blk++) {
    hs_buf b = must_read(pool, GROW_REL, blk, NULL);
    page_header h;
    if (!page_ok(hs_buf_page(pool, b), GROW_REL, blk, &h) || h.version >= (uint64_t)EXTENDERS)
      bad++;
    else
      per_extender[h.version]++;
    hs_buf_release(pool, b);
  }
  printf("%s: %u bad pages, %u wrong versions\n", when, bad, wrong_version);
  CHECK_EQ(bad, 0);
  CHECK_EQ(wrong_version, 0);
  for (int i = 0; i < EXTENDERS; i++) CHECK_EQ(per_extender[i], EXTEND_BLOCKS);
}

int main(int argc, char **argv) {
  const char *policy = argc > 1 ? argv[1] : "clock-sweep";
  const char *quick = getenv("HOTSET_TEST_QUICK");
  if (quick && strcmp(quick, "1") == 0) ops_per_thread = OPS_PER_THREAD / 3;
  char dir[256];
  testdir_make(dir, sizeof dir, "stress");
  hs_pool *pool = open_pool_with(dir, POOL_PAGES, PAGE_SIZE, policy, wal_flush, NULL);
  printf("policy %s\n", hs_pool_policy_name(pool));
  hs_smgr *smgr = hs_pool_smgr(pool);
  REQUIRE(hs_smgr_create(smgr, REL, HS_FORK_MAIN) == HS_OK);
  REQUIRE(hs_smgr_create(smgr, GROW_REL, HS_FORK_MAIN) == HS_OK);
  _Alignas(4096) unsigned char page[PAGE_SIZE];
  for (hs_blockno blk = 0; blk < NBLOCKS; blk++) {
    hs_blockno got;
    fill_page(page, REL, blk, 0, 0);
    REQUIRE(hs_smgr_extend(smgr, REL, HS_FORK_MAIN, page, &got) == HS_OK);
  }
  hs_smgr_set_observer(smgr, observe, NULL);

  enum { ALL = NTHREADS + EXTENDERS + SCANNERS };
  pthread_t t[ALL];
  worker w[ALL];
  for (unsigned i = 0; i < ALL; i++) {
    w[i] = (worker){.pool = pool, .seed = 1000 + i, .id = i < NTHREADS ? i : i - NTHREADS};
    void *(*fn)(void *) = i < NTHREADS ? work : i < NTHREADS + EXTENDERS ? extend : scan_with_ring;
    pthread_create(&t[i], NULL, fn, &w[i]);
  }
  for (unsigned i = 0; i < ALL; i++) pthread_join(t[i], NULL);

  CHECK_EQ(atomic_load(&errors), 0);
  CHECK_EQ(atomic_load(&bad_pages), 0);
  CHECK_EQ(atomic_load(&lost_versions), 0);
  uint64_t total = 0;
  for (int i = 0; i < NBLOCKS; i++) total += atomic_load(&updates[i]);
  CHECK(total > (uint64_t)NTHREADS * (uint64_t)ops_per_thread / 5);
  hs_pool_stats s;
  hs_pool_stats_get(pool, &s);
  CHECK(hs_pool_stats_total(&s, HS_STAT_EVICTIONS) > 1000);
  CHECK(hs_pool_stats_total(&s, HS_STAT_WRITES) > 100);
  CHECK_EQ(hs_pool_stats_total(&s, HS_STAT_HITS) + hs_pool_stats_total(&s, HS_STAT_READS),
           (uint64_t)NTHREADS * (uint64_t)ops_per_thread + SCANNERS * SCAN_LAPS * NBLOCKS);
  CHECK(s.count[HS_IOCTX_BULKREAD][HS_STAT_REUSES] > 0);
  CHECK_EQ(s.pinned, 0);

  verify_all(pool, "in the pool");
  CHECK_OK(hs_pool_close(pool));
  CHECK_EQ(atomic_load(&wal_violations), 0);

  pool = open_pool(dir, POOL_PAGES, PAGE_SIZE, NULL, NULL);
  verify_all(pool, "after reopening");
  CHECK_OK(hs_pool_close(pool));
  testdir_remove(dir);
  return check_finish();
}
