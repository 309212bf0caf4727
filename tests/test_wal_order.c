/*
 * test_wal_order — WAL before data. A fake log records how far it has been
 * flushed; the storage manager's I/O observer looks at every page as it is
 * about to be written and checks that the log is already flushed past the
 * LSN stamped in that page. Pages are dirtied with rising LSNs and then
 * forced out both by eviction and by flush_all.
 */
#include "pool_util.h"

#include <pthread.h>

static const hs_relid REL = 5;

typedef struct fake_log {
  pthread_mutex_t mu;
  hs_lsn flushed;        /* durable up to here */
  unsigned calls;        /* flush_wal_up_to calls */
  unsigned real_flushes; /* calls that moved `flushed` */
  unsigned writes_seen;
  unsigned violations; /* pages written before their WAL */
  bool fail_next;      /* make the next flush fail */
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
    /* Group commit: flush a little past what was asked, as a real log
     * writer flushes whole pages of WAL. */
    log->flushed = upto + 5;
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
  if (w[2] > log->flushed) {
    log->violations++;
    fprintf(stderr, "block %u written with LSN %llu, log flushed to %llu\n", block,
            (unsigned long long)w[2], (unsigned long long)log->flushed);
  }
  pthread_mutex_unlock(&log->mu);
}

int main(void) {
  char dir[256];
  testdir_make(dir, sizeof dir, "wal-order");
  fake_log log = {.mu = PTHREAD_MUTEX_INITIALIZER};
  hs_pool *pool = open_pool(dir, 8, 4096, log_flush, &log);
  make_relation(pool, REL, 64);
  hs_smgr_set_observer(hs_pool_smgr(pool), observe, &log);

  /* Dirty 64 blocks through an 8-buffer pool: 56 evictions of dirty pages,
   * each stamped with its LSN (the stamp value is the LSN). */
  hs_lsn lsn = 0;
  for (hs_blockno i = 0; i < 64; i++) {
    lsn += 10;
    must_update(pool, REL, i, lsn, lsn);
  }
  CHECK_OK(hs_pool_flush_all(pool));
  CHECK_EQ(log.writes_seen, 64);
  CHECK_EQ(log.violations, 0);
  CHECK(log.flushed >= lsn);
  hs_io_stats s;
  hs_pool_stats(pool, &s);
  CHECK_EQ(hs_io_stats_total(&s, HS_STAT_WAL_FLUSHES), log.real_flushes);
  CHECK_EQ(log.calls, 64);
  CHECK_EQ(log.real_flushes, 64); /* each page's LSN was past the last flush */

  /* Already-durable WAL: the hook is called but no flush is counted. */
  log.flushed = 1000000;
  unsigned before_calls = log.calls, before_flushes = log.real_flushes;
  for (hs_blockno i = 0; i < 8; i++) must_update(pool, REL, i, lsn + i, lsn + i);
  CHECK_OK(hs_pool_flush_all(pool));
  CHECK_EQ(log.calls - before_calls, 8);
  CHECK_EQ(log.real_flushes, before_flushes);
  hs_pool_stats(pool, &s);
  CHECK_EQ(hs_io_stats_total(&s, HS_STAT_WAL_FLUSHES), log.real_flushes);

  /* A failing WAL flush stops the write; the page stays dirty and a later
   * flush writes it. */
  log.flushed = 0;
  must_update(pool, REL, 3, 2000000, 2000000);
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
