/*
 * test_wal_order — WAL before data. A fake log records how far it has been
 * flushed, and flushes exactly as far as it is asked (a real log may flush
 * further, which would hide a pool that asks for too little). The storage
 * manager's I/O observer looks at every page as it is about to be written
 * and checks that the log is already flushed up to the page's current LSN:
 * the highest LSN the page was dirtied at, which is also the value stamped
 * in it. Pages are dirtied several times while resident with rising LSNs
 * (the pool must keep the last one, not the first), once with a lower LSN
 * (which must not lower it), and then forced out both by eviction and by
 * flush_all.
 */
#include "pool_util.h"

#include <pthread.h>

static const hs_relid REL = 5;
#define NBLOCKS 64

typedef struct fake_log {
  pthread_mutex_t mu;
  hs_lsn flushed;        /* durable up to here */
  unsigned calls;        /* flush_wal_up_to calls */
  unsigned real_flushes; /* calls that moved `flushed` */
  unsigned writes_seen;
  unsigned violations;      /* pages written before their WAL */
  bool fail_next;           /* make the next flush fail */
  hs_lsn page_lsn[NBLOCKS]; /* the highest LSN each block was dirtied at */
} fake_log;

static hs_status log_flush(void *ctx, hs_lsn upto, bool *flushed) {
  fake_log *log = ctx;
  pthread_mutex_lock(&log->mu);
  log->calls++;
  if (log->fail_next) {
    log->fail_next = false;
    pthread_mutex_unlock(&log->mu);
    return HS_ERR_IO;
  }
  *flushed = upto > log->flushed;
  if (*flushed) {
    log->flushed = upto;
    log->real_flushes++;
  }
  pthread_mutex_unlock(&log->mu);
  return HS_OK;
}

static void observe(void *ctx, hs_io_op op, hs_relid rel, hs_fork fork, hs_blockno block,
                    const void *page) {
  fake_log *log = ctx;
  (void)fork;
  if (op != HS_IO_WRITE || rel != REL) return;
  uint64_t w[3];
  memcpy(w, page, sizeof w);
  pthread_mutex_lock(&log->mu);
  log->writes_seen++;
  hs_lsn want = block < NBLOCKS ? log->page_lsn[block] : 0;
  if (w[2] > want) want = w[2];
  if (want > log->flushed) {
    log->violations++;
    fprintf(stderr, "block %u written with LSN %llu (stamp %llu), log flushed to %llu\n", block,
            (unsigned long long)want, (unsigned long long)w[2], (unsigned long long)log->flushed);
  }
  pthread_mutex_unlock(&log->mu);
}

/* Dirties a block at `lsn` (stamping the page with its highest LSN so far)
 * and returns the LSN the pool now holds for the buffer. */
static hs_lsn dirty(hs_pool *pool, fake_log *log, hs_blockno block, hs_lsn lsn) {
  hs_buf b = must_read(pool, REL, block, NULL);
  hs_buf_lock(pool, b, HS_LOCK_EXCLUSIVE);
  pthread_mutex_lock(&log->mu);
  if (lsn > log->page_lsn[block]) log->page_lsn[block] = lsn;
  hs_lsn stamp = log->page_lsn[block];
  pthread_mutex_unlock(&log->mu);
  stamp_page(hs_buf_page(pool, b), REL, block, stamp);
  REQUIRE(hs_buf_mark_dirty(pool, b, lsn, NULL) == HS_OK);
  hs_lsn held = hs_buf_lsn(pool, b);
  hs_buf_unlock(pool, b);
  hs_buf_release(pool, b);
  return held;
}

int main(void) {
  char dir[256];
  testdir_make(dir, sizeof dir, "wal-order");
  fake_log log = {.mu = PTHREAD_MUTEX_INITIALIZER};
  hs_pool *pool = open_pool(dir, 8, 4096, log_flush, &log);
  make_relation(pool, REL, NBLOCKS);
  hs_smgr_set_observer(hs_pool_smgr(pool), observe, &log);

  /* Dirty 64 blocks through an 8-buffer pool, each three times in a row
   * with rising LSNs: 56 evictions of dirty pages, each of which must flush
   * the WAL up to the page's third LSN, not its first. */
  hs_lsn lsn = 0;
  unsigned lsn_wrong = 0;
  for (hs_blockno i = 0; i < NBLOCKS; i++) {
    for (int k = 0; k < 3; k++) {
      lsn += 10;
      hs_lsn held = dirty(pool, &log, i, lsn);
      if (held != lsn && lsn_wrong++ < 3)
        fprintf(stderr, "block %u dirtied at LSN %llu: the buffer holds %llu\n", i,
                (unsigned long long)lsn, (unsigned long long)held);
    }
  }
  CHECK_EQ(lsn_wrong, 0);
  CHECK_OK(hs_pool_flush_all(pool));
  CHECK_EQ(log.writes_seen, 64);
  CHECK_EQ(log.violations, 0);
  CHECK_EQ(log.flushed, lsn); /* exactly: the newest page asked for its own LSN */
  hs_pool_stats s;
  hs_pool_stats_get(pool, &s);
  CHECK_EQ(hs_pool_stats_total(&s, HS_STAT_WAL_FLUSHES), log.real_flushes);
  CHECK_EQ(log.calls, 64);
  /* Every eviction writes a page newer than the last flush; flush_all's
   * eight may come in any order, so some of them find their WAL flushed. */
  CHECK(log.real_flushes >= 57 && log.real_flushes <= 64);

  /* A lower LSN never lowers the page's: the write still waits for the
   * higher one. Then, written and dirtied again later, the page asks for
   * its new LSN. */
  lsn += 100;
  hs_lsn high = lsn;
  CHECK_EQ(dirty(pool, &log, 3, high), high);
  CHECK_EQ(dirty(pool, &log, 3, high - 50), high);
  CHECK_OK(hs_pool_flush_all(pool));
  CHECK_EQ(log.flushed, high);
  lsn += 10;
  CHECK_EQ(dirty(pool, &log, 3, lsn), lsn);
  CHECK_OK(hs_pool_flush_all(pool));
  CHECK_EQ(log.flushed, lsn);
  CHECK_EQ(log.writes_seen, 66);
  CHECK_EQ(log.violations, 0);

  /* Already-durable WAL: the hook is called but no flush is counted. */
  log.flushed = 1000000;
  unsigned before_calls = log.calls, before_flushes = log.real_flushes;
  for (hs_blockno i = 0; i < 8; i++) dirty(pool, &log, i, lsn += 10);
  CHECK_OK(hs_pool_flush_all(pool));
  CHECK_EQ(log.calls - before_calls, 8);
  CHECK_EQ(log.real_flushes, before_flushes);
  hs_pool_stats_get(pool, &s);
  CHECK_EQ(hs_pool_stats_total(&s, HS_STAT_WAL_FLUSHES), log.real_flushes);

  /* A failing WAL flush stops the write; the page stays dirty and a later
   * flush writes it. */
  log.flushed = 0;
  dirty(pool, &log, 3, 2000000);
  log.fail_next = true;
  unsigned writes_before = log.writes_seen;
  CHECK_ST(hs_pool_flush_all(pool), HS_ERR_WAL);
  CHECK_CONTAINS(hs_last_error(), "WAL");
  CHECK_EQ(log.writes_seen, writes_before);
  hs_buffer_info info;
  REQUIRE(find_buffer(pool, REL, 3, &info) >= 0);
  CHECK(info.dirty);
  CHECK(info.io_error);
  CHECK_OK(hs_pool_flush_all(pool));
  CHECK_EQ(log.writes_seen, writes_before + 1);
  CHECK_EQ(log.violations, 0);

  CHECK_OK(hs_pool_close(pool));
  testdir_remove(dir);
  return check_finish();
}
