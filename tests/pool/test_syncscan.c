/*
 * tests/test_syncscan.c — synchronized scans (hotset/syncscan.h) on a real
 * pool: what a report records and when, which relation the table forgets
 * first, where a scan starts when the recorded position is past the end,
 * and that a scan started behind another one catches up with it and reads
 * from the pool what the first one just read in.
 */
#include "check.h"
#include "hotset/syncscan.h"
#include "pool_util.h"

#include <pthread.h>

#define REL      16384u
#define INTERVAL HS_SYNCSCAN_REPORT_INTERVAL

/* Nothing recorded: every scan starts at 0; reports off the interval are
 * dropped; a report on it is what the next start sees. */
static void test_positions(hs_pool *pool) {
  CHECK_EQ(hs_syncscan_start(pool, REL, 1000), 0);
  CHECK_EQ(hs_syncscan_start(pool, REL, 0), 0);

  hs_syncscan_report(pool, REL, INTERVAL * 2);
  CHECK_EQ(hs_syncscan_start(pool, REL, 1000), INTERVAL * 2);
  /* Other relations are not affected. */
  CHECK_EQ(hs_syncscan_start(pool, REL + 1, 1000), 0);

  /* Blocks between two multiples of the interval are not recorded. */
  for (hs_blockno b = INTERVAL * 2 + 1; b < INTERVAL * 3; b++) hs_syncscan_report(pool, REL, b);
  CHECK_EQ(hs_syncscan_start(pool, REL, 1000), INTERVAL * 2);
  hs_syncscan_report(pool, REL, INTERVAL * 3);
  CHECK_EQ(hs_syncscan_start(pool, REL, 1000), INTERVAL * 3);

  /* A scan may go backwards (it wrapped around): the newest report wins. */
  hs_syncscan_report(pool, REL, 0);
  CHECK_EQ(hs_syncscan_start(pool, REL, 1000), 0);
  hs_syncscan_report(pool, REL, INTERVAL * 5);
  CHECK_EQ(hs_syncscan_start(pool, REL, 1000), INTERVAL * 5);

  /* Starting a scan does not record anything. */
  CHECK_EQ(hs_syncscan_start(pool, REL + 2, 1000), 0);
  CHECK_EQ(hs_syncscan_start(pool, REL + 2, 1000), 0);

  /* No pool: nothing to remember, nothing to crash on. */
  hs_syncscan_report(NULL, REL, 0);
  CHECK_EQ(hs_syncscan_start(NULL, REL, 1000), 0);
}

/* A recorded position at or past the end of a (now shorter) relation means
 * the scan starts at block 0. */
static void test_wrap(hs_pool *pool) {
  hs_relid rel = REL + 50;
  hs_syncscan_report(pool, rel, INTERVAL * 4);
  CHECK_EQ(hs_syncscan_start(pool, rel, INTERVAL * 4 + 1), INTERVAL * 4);
  CHECK_EQ(hs_syncscan_start(pool, rel, INTERVAL * 4), 0);
  CHECK_EQ(hs_syncscan_start(pool, rel, INTERVAL * 2), 0);
  CHECK_EQ(hs_syncscan_start(pool, rel, 1), 0);
  /* The entry is still there for a scan of the longer relation. */
  CHECK_EQ(hs_syncscan_start(pool, rel, 100000), INTERVAL * 4);
}

/* The table holds HS_SYNCSCAN_TABLE_SIZE relations; the least recently
 * reported one makes room for a new one. */
static void test_lru(hs_pool *pool) {
  const hs_relid base = 20000;
  const uint32_t n = HS_SYNCSCAN_TABLE_SIZE;
  for (uint32_t i = 0; i < n; i++) hs_syncscan_report(pool, base + i, INTERVAL * (i + 1));
  for (uint32_t i = 0; i < n; i++)
    CHECK_EQ(hs_syncscan_start(pool, base + i, 100000), INTERVAL * (i + 1));

  /* The 21st relation pushes out the first. */
  hs_syncscan_report(pool, base + n, INTERVAL * 100);
  CHECK_EQ(hs_syncscan_start(pool, base + n, 100000), INTERVAL * 100);
  CHECK_EQ(hs_syncscan_start(pool, base, 100000), 0);
  for (uint32_t i = 1; i < n; i++)
    CHECK_EQ(hs_syncscan_start(pool, base + i, 100000), INTERVAL * (i + 1));

  /* A report moves its relation to the front: base+1 was next in line to
   * go; reported again, it stays and base+2 goes instead. */
  hs_syncscan_report(pool, base + 1, INTERVAL * 7);
  hs_syncscan_report(pool, base + n + 1, INTERVAL);
  CHECK_EQ(hs_syncscan_start(pool, base + 1, 100000), INTERVAL * 7);
  CHECK_EQ(hs_syncscan_start(pool, base + 2, 100000), 0);
  CHECK_EQ(hs_syncscan_start(pool, base + n + 1, 100000), INTERVAL);

  /* A report off the interval neither records nor refreshes: base+3 is now
   * the oldest and still goes first. */
  hs_syncscan_report(pool, base + 3, INTERVAL * 9 + 1);
  hs_syncscan_report(pool, base + n + 2, INTERVAL);
  CHECK_EQ(hs_syncscan_start(pool, base + 3, 100000), 0);
  CHECK_EQ(hs_syncscan_start(pool, base + 4, 100000), INTERVAL * 5);

  /* Starting scans does not refresh an entry either. */
  for (int k = 0; k < 5; k++) CHECK_EQ(hs_syncscan_start(pool, base + 4, 100000), INTERVAL * 5);
  hs_syncscan_report(pool, base + n + 3, INTERVAL);
  CHECK_EQ(hs_syncscan_start(pool, base + 4, 100000), 0);
}

/* One step of a sequential scan of `nblocks` that began at `start`: reads
 * block (start + i) % nblocks through the pool, checks its stamp, reports
 * the position. Returns the block read; *hit says whether it was a hit. */
static hs_blockno scan_step(hs_pool *pool, hs_relid rel, hs_blockno nblocks, hs_blockno start,
                            hs_blockno i, bool *hit) {
  hs_blockno blk = (hs_blockno)((start + (uint64_t)i) % nblocks);
  hs_buf b = must_read(pool, rel, blk, hit);
  hs_buf_lock(pool, b, HS_LOCK_SHARE);
  CHECK_EQ(stamp_value(hs_buf_page(pool, b), rel, blk), 0);
  hs_buf_unlock(pool, b);
  hs_buf_release(pool, b);
  hs_syncscan_report(pool, rel, blk);
  return blk;
}

/* Two scans of a relation four times the pool, the second started while
 * the first is a third of the way through: the second starts within one
 * report interval behind the first, reads along with it (nearly all hits,
 * where on its own every read would miss), wraps at the end and covers
 * every block exactly once. */
static void test_scans_meet(const char *dir) {
  const uint32_t pool_pages = 64;
  const hs_blockno nblocks = pool_pages * 4;
  const hs_relid rel = 30000;
  /* LRU: which pages are resident follows from the reads alone. */
  hs_pool *pool = open_pool_with(dir, pool_pages, 1024, "lru", NULL, NULL);
  make_relation(pool, rel, nblocks);

  hs_blockno a_start = hs_syncscan_start(pool, rel, nblocks);
  CHECK_EQ(a_start, 0);
  bool hit;
  hs_blockno a_done = 0;
  /* 90 blocks: the last report was at block 80. */
  for (; a_done < 90; a_done++) scan_step(pool, rel, nblocks, a_start, a_done, &hit);

  hs_blockno b_start = hs_syncscan_start(pool, rel, nblocks);
  CHECK_EQ(b_start, 80);
  CHECK(b_start <= a_done && a_done - b_start <= INTERVAL);

  /* Now both advance one block at a time, A first. */
  unsigned char *seen = calloc(nblocks, 1);
  REQUIRE(seen);
  uint32_t b_hits = 0, max_gap = 0;
  for (hs_blockno i = 0; i < nblocks; i++) {
    hs_blockno a_blk = scan_step(pool, rel, nblocks, a_start, a_done++, &hit);
    hs_blockno b_blk = scan_step(pool, rel, nblocks, b_start, i, &hit);
    b_hits += hit;
    seen[b_blk]++;
    uint32_t gap = (a_blk + nblocks - b_blk) % nblocks;
    if (gap > max_gap) max_gap = gap;
  }
  /* B trails A by the few blocks A read before B's start was reported. */
  CHECK(max_gap <= INTERVAL);
  CHECK(b_hits == nblocks);
  uint32_t once = 0;
  for (hs_blockno b = 0; b < nblocks; b++) once += seen[b] == 1;
  CHECK_EQ(once, nblocks);
  free(seen);

  /* A third scan that starts alone later finds the last report: A's. */
  hs_blockno a_last = (hs_blockno)((a_start + (uint64_t)a_done - 1) % nblocks);
  CHECK_EQ(hs_syncscan_start(pool, rel, nblocks), a_last - a_last % INTERVAL);

  CHECK_OK(hs_pool_close(pool));
}

/* Concurrent reports on many relations and starts: the table must stay
 * consistent (each start returns a position some scan reported, a multiple
 * of the interval below that relation's size). */
typedef struct hammer_arg {
  hs_pool *pool;
  uint32_t id;
  uint32_t bad;
} hammer_arg;

#define HAMMER_THREADS 4
#define HAMMER_RELS    (HS_SYNCSCAN_TABLE_SIZE * 2)
#define HAMMER_BLOCKS  4096u

static void *hammer(void *p) {
  hammer_arg *a = p;
  uint64_t x = a->id * 7919u + 1;
  for (uint32_t i = 0; i < 200000; i++) {
    x = x * 6364136223846793005u + 1442695040888963407u;
    hs_relid rel = 40000 + (hs_relid)((x >> 33) % HAMMER_RELS);
    hs_blockno blk = (hs_blockno)((x >> 13) % HAMMER_BLOCKS);
    if (i % 8 == 0) {
      hs_blockno s = hs_syncscan_start(a->pool, rel, HAMMER_BLOCKS);
      if (s % INTERVAL != 0 || s >= HAMMER_BLOCKS) a->bad++;
    } else {
      hs_syncscan_report(a->pool, rel, blk);
    }
  }
  return NULL;
}

static void test_concurrent(hs_pool *pool) {
  pthread_t t[HAMMER_THREADS];
  hammer_arg a[HAMMER_THREADS];
  for (uint32_t i = 0; i < HAMMER_THREADS; i++) {
    a[i] = (hammer_arg){.pool = pool, .id = i};
    REQUIRE(pthread_create(&t[i], NULL, hammer, &a[i]) == 0);
  }
  uint32_t bad = 0;
  for (uint32_t i = 0; i < HAMMER_THREADS; i++) {
    pthread_join(t[i], NULL);
    bad += a[i].bad;
  }
  CHECK_EQ(bad, 0);
  /* The table still holds at most HS_SYNCSCAN_TABLE_SIZE relations. (A
   * relation whose last report was block 0 looks like an unknown one, so
   * only this upper bound can be checked.) */
  uint32_t known = 0;
  for (hs_relid r = 40000; r < 40000 + HAMMER_RELS; r++)
    known += hs_syncscan_start(pool, r, HAMMER_BLOCKS) != 0;
  CHECK(known <= HS_SYNCSCAN_TABLE_SIZE);
}

int main(void) {
  char dir[4096];
  testdir_make(dir, sizeof dir, "syncscan");
  hs_pool *pool = open_pool(dir, 16, 1024, NULL, NULL);
  test_positions(pool);
  test_wrap(pool);
  test_lru(pool);
  test_concurrent(pool);
  CHECK_OK(hs_pool_close(pool));

  /* Each pool has its own table: a new pool remembers nothing. */
  pool = open_pool(dir, 16, 1024, NULL, NULL);
  CHECK_EQ(hs_syncscan_start(pool, REL, 1000), 0);
  CHECK_OK(hs_pool_close(pool));

  char dir2[4096];
  testdir_make(dir2, sizeof dir2, "syncscan-meet");
  test_scans_meet(dir2);
  testdir_remove(dir2);
  testdir_remove(dir);
  return check_finish();
}
