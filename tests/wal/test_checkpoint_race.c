/*
 * tests/test_checkpoint_race.c — a checkpoint that runs while a change is
 * being logged must not lose it (white-box, deterministic).
 *
 * The window: a thread holding a page's exclusive lock has inserted the
 * record of its change; a checkpoint now sets its redo point past that
 * record and collects the dirty buffers. If the page were marked dirty only
 * after the insert (the order before the fix), the checkpoint would not
 * collect it, would finish with its redo point past the record, and after
 * a crash replay would start past the change: lost, though it was flushed.
 * Marked dirty before the insert, the page is collected and the
 * checkpoint's write waits for the thread's lock.
 *
 * Two hooks hold the interleaving: the logging thread stops after its
 * insert (logged_hook) until the checkpoint has collected (collected_hook).
 * Then the change is committed, the pool abandoned (the crash) and reopened.
 */
#include "check.h"
#include "core/seams.h"
#include "direct_mode.h"
#include "hotset/durability.h"
#include "hotset/pool.h"
#include "hotset/wal.h"
#include "pool/pool_internal.h"
#include "testdir.h"

#include <pthread.h>
#include <string.h>

#define REL 3u

static char dir[4096], waldir[4200];

typedef struct gate {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool inserted, collected;
} gate;
static gate g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, false};

static void set_and_wait(bool *set, bool *wait_for) {
  pthread_mutex_lock(&g.mu);
  *set = true;
  pthread_cond_broadcast(&g.cv);
  while (wait_for && !*wait_for) pthread_cond_wait(&g.cv, &g.mu);
  pthread_mutex_unlock(&g.mu);
}

static void after_insert(hs_pool *pool, void *ctx) {
  (void)pool;
  (void)ctx;
  seams.pool_logged = NULL; /* once */
  set_and_wait(&g.inserted, &g.collected);
}
static void after_collect(hs_pool *pool, void *ctx) {
  (void)pool;
  (void)ctx;
  seams.pool_collected = NULL;
  set_and_wait(&g.collected, NULL);
}

static void *checkpoint_main(void *arg) {
  hs_pool *pool = arg;
  pthread_mutex_lock(&g.mu);
  while (!g.inserted) pthread_cond_wait(&g.cv, &g.mu);
  pthread_mutex_unlock(&g.mu);
  hs_status st = hs_pool_checkpoint(pool);
  return (void *)(intptr_t)st;
}

static void open_both(hs_wal **wal, hs_pool **pool) {
  hs_wal_options wo;
  hs_wal_options_init(&wo);
  wo.dir = waldir;
  wo.writer_delay_ms = 0;
  REQUIRE(hs_wal_open(&wo, wal) == HS_OK);
  hs_pool_options po;
  hs_pool_options_init(&po);
  po.dir = dir;
  po.pool_pages = 8;
  po.wal = *wal;
  po.checksums = true;
  REQUIRE(hs_pool_open(&po, pool) == HS_OK);
}

int main(void) {
  testdir_make(dir, sizeof dir, "ckpt-race");
  snprintf(waldir, sizeof waldir, "%s/wal", dir);
  hs_wal *wal;
  hs_pool *pool;
  open_both(&wal, &pool);
  REQUIRE(hs_smgr_create_if_missing(hs_pool_smgr(pool), REL, HS_FORK_MAIN, NULL) == HS_OK);
  hs_buf b;
  REQUIRE(hs_pool_extend(pool, REL, HS_FORK_MAIN, NULL, true, &b, NULL) == HS_OK);
  hs_wal_range r = {64, 8};
  memcpy((char *)hs_buf_page(pool, b) + 64, "first!!!", 8);
  REQUIRE(hs_buf_log_change(pool, b, &r, 1, NULL) == HS_OK);
  hs_buf_unlock(pool, b);
  REQUIRE(hs_pool_checkpoint(pool) == HS_OK); /* the page clean, on disk */

  seams.pool_logged = after_insert;
  seams.pool_collected = after_collect;
  pthread_t c;
  pthread_create(&c, NULL, checkpoint_main, pool);
  REQUIRE(hs_buf_lock(pool, b, HS_LOCK_EXCLUSIVE) == HS_OK);
  memcpy((char *)hs_buf_page(pool, b) + 64, "second!!", 8);
  hs_lsn lsn;
  CHECK_OK(hs_buf_log_change(pool, b, &r, 1, &lsn)); /* the checkpoint runs inside */
  hs_buf_unlock(pool, b);
  void *ret;
  pthread_join(c, &ret);
  CHECK_EQ((hs_status)(intptr_t)ret, HS_OK);
  hs_pool_checkpoint_stats cs;
  hs_pool_checkpoint_stats_get(pool, &cs);
  CHECK(cs.last_redo >= lsn); /* the redo point is past the change's record */
  CHECK_OK(hs_wal_flush(wal, lsn, HS_WAL_CAUSE_COMMIT, NULL)); /* committed */
  hs_buf_release(pool, b);
  hs_pool_abandon(pool); /* the crash */
  CHECK_OK(hs_wal_close(wal));

  open_both(&wal, &pool);
  REQUIRE(hs_pool_read(pool, REL, HS_FORK_MAIN, 0, HS_READ_NORMAL, NULL, &b, NULL) == HS_OK);
  const char *got = (const char *)hs_buf_page(pool, b) + 64;
  if (memcmp(got, "second!!", 8) != 0) fprintf(stderr, "after recovery: \"%.8s\"\n", got);
  CHECK(memcmp(got, "second!!", 8) == 0);
  hs_buf_release(pool, b);
  CHECK_OK(hs_pool_close(pool));
  CHECK_OK(hs_wal_close(wal));
  testdir_remove(dir);
  return check_finish();
}
