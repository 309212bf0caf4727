/*
 * test_concurrent_read — two threads missing on the same block cause one
 * read; the second waits for it. And a failed read wakes its waiter, which
 * then retries the read itself.
 *
 * No sleeps: the I/O observer holds the first read inside the storage
 * manager until the pool reports the second thread asleep on that I/O.
 */
#include "pool/pool_internal.h"
#include "pool_util.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>

static const hs_relid REL = 3;

typedef struct shared {
  hs_pool *pool;
  _Atomic unsigned reads_of_target;
  _Atomic bool release_first_read;
  hs_blockno target;
} shared;

static void observe(void *ctx, hs_io_op op, hs_relid rel, hs_fork fork, hs_blockno block,
                    const void *page) {
  shared *sh = ctx;
  (void)fork;
  (void)page;
  if (op != HS_IO_READ || rel != REL || block != sh->target) return;
  if (atomic_fetch_add(&sh->reads_of_target, 1) == 0) {
    /* Hold the first read until the other thread waits on it. */
    while (!atomic_load(&sh->release_first_read)) {
      if (hs_pool_debug_io_waiters(sh->pool) >= 1) atomic_store(&sh->release_first_read, true);
      sched_yield();
    }
  }
}

typedef struct reader {
  shared *sh;
  hs_status st;
  bool hit;
  uint64_t value;
} reader;

static void *read_target(void *arg) {
  reader *r = arg;
  hs_buf b;
  r->st = hs_pool_read(r->sh->pool, REL, HS_FORK_MAIN, r->sh->target, HS_READ_NORMAL, NULL, &b,
                       &r->hit);
  if (r->st == HS_OK) {
    r->value = stamp_value(hs_buf_page(r->sh->pool, b), REL, r->sh->target);
    hs_buf_release(r->sh->pool, b);
  }
  return NULL;
}

static void run_pair(shared *sh, reader *r) {
  pthread_t t[2];
  for (int i = 0; i < 2; i++) {
    r[i].sh = sh;
    pthread_create(&t[i], NULL, read_target, &r[i]);
  }
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
}

int main(void) {
  char dir[256];
  testdir_make(dir, sizeof dir, "concurrent-read");
  shared sh = {0};
  sh.pool = open_pool(dir, 8, 4096, NULL, NULL);
  make_relation(sh.pool, REL, 4);
  hs_smgr_set_observer(hs_pool_smgr(sh.pool), observe, &sh);

  /* One read for two readers; one of them saw a miss, the other a hit. */
  sh.target = 2;
  reader r[2] = {0};
  run_pair(&sh, r);
  CHECK_OK(r[0].st);
  CHECK_OK(r[1].st);
  CHECK_EQ(atomic_load(&sh.reads_of_target), 1);
  CHECK_EQ(r[0].hit + r[1].hit, 1);
  CHECK_EQ(r[0].value, 0);
  CHECK_EQ(r[1].value, 0);
  hs_pool_stats s;
  hs_pool_stats_get(sh.pool, &s);
  CHECK_EQ(hs_pool_stats_total(&s, HS_STAT_READS), 1);
  CHECK_EQ(hs_pool_stats_total(&s, HS_STAT_HITS), 1);

  /* The first read fails: its waiter wakes up and reads again, itself. */
  sh.target = 3;
  atomic_store(&sh.reads_of_target, 0);
  atomic_store(&sh.release_first_read, false);
  CHECK_OK(hs_smgr_inject_fault(hs_pool_smgr(sh.pool), HS_IO_READ, 1, EIO, 1));
  memset(r, 0, sizeof r);
  run_pair(&sh, r);
  CHECK_EQ(atomic_load(&sh.reads_of_target), 2);
  CHECK_EQ((r[0].st == HS_OK) + (r[1].st == HS_OK), 1);
  CHECK_EQ((r[0].st == HS_ERR_IO) + (r[1].st == HS_ERR_IO), 1);
  CHECK_EQ(r[0].value + r[1].value, 0);

  CHECK_OK(hs_pool_close(sh.pool));
  testdir_remove(dir);
  return check_finish();
}
