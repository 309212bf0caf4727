/*
 * tests/test_xact.c — transactions (hotset/heap.h): statuses through
 * commit and abort; snapshots see exactly the transactions that committed
 * before them; the horizon follows the oldest running transaction and the
 * oldest held snapshot; the commit log spans pages; after a real crash (a
 * child killed with SIGKILL) commits are there, aborts and transactions
 * that were running read as aborted, and ids are never given twice;
 * threads beginning and committing at once (TSan); misuse refused.
 */
#include "check.h"
#include "heap_env.h"
#include "killed_child.h"
#include "storage/catalog.h"
#include "testdir.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[4096];
static _Atomic unsigned thread_failures;

typedef heap_env env;

static hs_status env_open(env *e) {
  return heap_env_open(e, dir, 16, 0, 0);
}

static hs_xact_status status(env *e, hs_xid x) {
  hs_xact_status s = (hs_xact_status)-1;
  CHECK_OK(hs_xact_status_of(e->x, x, &s));
  return s;
}

static void test_statuses_and_snapshots(void) {
  testdir_make(dir, sizeof dir, "xact");
  env e;
  REQUIRE(env_open(&e) == HS_OK);
  hs_xid a, b, c;
  CHECK_OK(hs_xact_begin(e.x, &a));
  CHECK_OK(hs_xact_begin(e.x, &b));
  CHECK(a >= HS_XACT_FIRST && b == a + 1);
  CHECK_EQ(status(&e, a), HS_XACT_IN_PROGRESS);
  hs_snapshot s1;
  CHECK_OK(hs_xact_take_snapshot(e.x, &s1)); /* a and b running */
  CHECK_EQ(s1.xmin, a);
  CHECK_EQ(s1.xmax, b + 1);
  CHECK_OK(hs_xact_commit(e.x, a));
  CHECK_OK(hs_xact_abort(e.x, b));
  CHECK_EQ(status(&e, a), HS_XACT_COMMITTED);
  CHECK_EQ(status(&e, b), HS_XACT_ABORTED);
  CHECK_OK(hs_xact_begin(e.x, &c));
  hs_snapshot s2;
  CHECK_OK(hs_xact_take_snapshot(e.x, &s2)); /* c running */
  bool v;
  /* s1 was taken while a ran: a's work stays invisible to it. */
  CHECK_OK(hs_xact_visible(e.x, &s1, a, &v));
  CHECK(!v);
  CHECK_OK(hs_xact_visible(e.x, &s2, a, &v));
  CHECK(v);
  CHECK_OK(hs_xact_visible(e.x, &s2, b, &v)); /* aborted */
  CHECK(!v);
  CHECK_OK(hs_xact_visible(e.x, &s2, c, &v)); /* running */
  CHECK(!v);
  CHECK_OK(hs_xact_visible(e.x, &s1, c, &v)); /* began after */
  CHECK(!v);
  CHECK_OK(hs_xact_visible(e.x, &s1, HS_XACT_FROZEN, &v));
  CHECK(v);
  /* The horizon: s1 (xmin a) holds it at a, though a and b are done. */
  CHECK_EQ(hs_xact_horizon(e.x), a);
  hs_xact_release_snapshot(e.x, &s1);
  CHECK_EQ(hs_xact_horizon(e.x), c); /* c runs, s2's xmin is c */
  CHECK_OK(hs_xact_commit(e.x, c));
  CHECK_EQ(hs_xact_horizon(e.x), c); /* s2 still held */
  hs_xact_release_snapshot(e.x, &s2);
  CHECK_EQ(hs_xact_horizon(e.x), hs_xact_next(e.x));
  /* Misuse. */
  CHECK_ST(hs_xact_commit(e.x, c), HS_ERR_INVALID); /* finished already */
  CHECK_CONTAINS(hs_last_error(), "not running");
  CHECK_ST(hs_xact_abort(e.x, 999999), HS_ERR_INVALID);
  hs_xact_status st;
  CHECK_ST(hs_xact_status_of(e.x, hs_xact_next(e.x), &st), HS_ERR_INVALID); /* never given */
  CHECK_ST(hs_xact_status_of(e.x, HS_XACT_INVALID, &st), HS_ERR_INVALID);
  heap_env_close(&e);
  testdir_remove(dir);
}

static void test_many_across_pages(void) {
  testdir_make(dir, sizeof dir, "xact-many");
  env e;
  REQUIRE(env_open(&e) == HS_OK);
  /* 8 KiB pages hold 32,704 ids: 40,000 cross a page and two reservations. */
  enum { N = 40000 };
  hs_xid first = 0, x;
  for (uint32_t i = 0; i < N; i++) {
    REQUIRE(hs_xact_begin(e.x, &x) == HS_OK);
    if (!first) first = x;
    hs_status st = i % 3 == 0 ? hs_xact_abort(e.x, x) : hs_xact_commit(e.x, x);
    if (st != HS_OK) {
      CHECK_OK(st);
      break;
    }
  }
  uint32_t wrong = 0;
  for (uint32_t i = 0; i < N; i++)
    if (status(&e, first + i) != (i % 3 == 0 ? HS_XACT_ABORTED : HS_XACT_COMMITTED)) wrong++;
  CHECK_EQ(wrong, 0);
  /* Closed and reopened: the same, and new ids past every old one. */
  heap_env_close(&e);
  REQUIRE(env_open(&e) == HS_OK);
  wrong = 0;
  for (uint32_t i = 0; i < N; i++)
    if (status(&e, first + i) != (i % 3 == 0 ? HS_XACT_ABORTED : HS_XACT_COMMITTED)) wrong++;
  CHECK_EQ(wrong, 0);
  CHECK_OK(hs_xact_begin(e.x, &x));
  CHECK(x >= first + N);
  CHECK_OK(hs_xact_commit(e.x, x));
  heap_env_close(&e);
  testdir_remove(dir);
}

/* The child: commits, aborts, leaves some running, sends the ids, dies. */
static void crash_child(void *ctx, int out) {
  (void)ctx;
  env e;
  if (env_open(&e) != HS_OK) _exit(2);
  hs_xid ids[30];
  for (int i = 0; i < 30; i++)
    if (hs_xact_begin(e.x, &ids[i]) != HS_OK) _exit(3);
  for (int i = 0; i < 30; i++) {
    hs_status st = HS_OK;
    if (i % 3 == 0) st = hs_xact_commit(e.x, ids[i]);
    if (i % 3 == 1) st = hs_xact_abort(e.x, ids[i]);
    if (st != HS_OK) _exit(4);
  }
  killed_child_send(out, ids, sizeof ids, 5);
}

static void test_crash(void) {
  testdir_make(dir, sizeof dir, "xact-crash");
  hs_xid ids[30];
  REQUIRE(run_killed_child(crash_child, NULL, ids, sizeof ids));
  env e;
  REQUIRE(env_open(&e) == HS_OK);
  for (int i = 0; i < 30; i++) {
    /* Commits were flushed; aborts may or may not have reached the log,
     * and the running ones died: both read as aborted. */
    hs_xact_status want = i % 3 == 0 ? HS_XACT_COMMITTED : HS_XACT_ABORTED;
    if (status(&e, ids[i]) != want) fprintf(stderr, "id %d: status %d\n", i, status(&e, ids[i]));
    CHECK_EQ(status(&e, ids[i]), want);
  }
  hs_xid x;
  CHECK_OK(hs_xact_begin(e.x, &x));
  CHECK(x > ids[29]); /* never given twice */
  CHECK_OK(hs_xact_abort(e.x, x));
  heap_env_close(&e);
  testdir_remove(dir);
}

#define THREADS 4
#define PER     300

static void *worker_main(void *arg) {
  hs_xact_mgr *x = arg;
  for (int i = 0; i < PER; i++) {
    hs_xid id;
    if (hs_xact_begin(x, &id) != HS_OK) {
      atomic_fetch_add(&thread_failures, 1);
      continue;
    }
    hs_status st = id % 2 ? hs_xact_commit(x, id) : hs_xact_abort(x, id);
    if (st != HS_OK) atomic_fetch_add(&thread_failures, 1);
  }
  return NULL;
}

static void test_threads(void) {
  testdir_make(dir, sizeof dir, "xact-mt");
  env e;
  REQUIRE(env_open(&e) == HS_OK);
  hs_xid first = hs_xact_next(e.x);
  pthread_t t[THREADS];
  for (int i = 0; i < THREADS; i++) pthread_create(&t[i], NULL, worker_main, e.x);
  for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
  CHECK_EQ(atomic_load(&thread_failures), 0);
  CHECK_EQ(hs_xact_next(e.x) - first, THREADS * PER);
  uint32_t wrong = 0;
  for (hs_xid id = first; id < first + THREADS * PER; id++)
    if (status(&e, id) != (id % 2 ? HS_XACT_COMMITTED : HS_XACT_ABORTED)) wrong++;
  CHECK_EQ(wrong, 0); /* neighbours in one byte did not lose each other's bits */
  CHECK_EQ(hs_xact_horizon(e.x), hs_xact_next(e.x));
  heap_env_close(&e);
  testdir_remove(dir);
}

/* The commit log's page 0 lost (zeros: the file replaced by a new one
 * that `hotset relations --forget` let the directory take, or zeroed):
 * the reservation is gone, and starting ids at the first one again would
 * hand out ids already used — every snapshot would take the committed
 * ones for the future, and a new commit would stand for an old one. The
 * start takes its floor from the highest id the commit log still shows. */
static void test_lost_reservation(void) {
  testdir_make(dir, sizeof dir, "xact-lost-page0");
  env e;
  REQUIRE(env_open(&e) == HS_OK);
  enum { N = 9000 }; /* past two reservations */
  hs_xid x = 0, last = 0;
  for (uint32_t i = 0; i < N; i++) {
    REQUIRE(hs_xact_begin(e.x, &x) == HS_OK);
    REQUIRE(hs_xact_commit(e.x, x) == HS_OK);
    last = x;
  }
  heap_env_close(&e);
  char path[4400];
  hs_smgr_fork_filename(HS_XACT_CLOG_REL, HS_FORK_MAIN, path, sizeof path);
  char full[8800];
  snprintf(full, sizeof full, "%s/%s", dir, path);
  int fd = open(full, O_WRONLY);
  REQUIRE(fd >= 0);
  static unsigned char zeros[8192];
  REQUIRE(pwrite(fd, zeros, sizeof zeros, 0) == (ssize_t)sizeof zeros); /* page 0 */
  close(fd);
  REQUIRE(env_open(&e) == HS_OK);
  hs_snapshot snap;
  REQUIRE(hs_xact_take_snapshot(e.x, &snap) == HS_OK);
  bool visible = false;
  CHECK_OK(hs_xact_visible(e.x, &snap, last, &visible));
  CHECK(visible); /* not taken for the future */
  hs_xact_release_snapshot(e.x, &snap);
  CHECK_OK(hs_xact_begin(e.x, &x));
  CHECK(x > last); /* no id given twice */
  CHECK_OK(hs_xact_commit(e.x, x));
  heap_env_close(&e);
  testdir_remove(dir);
}

/* The whole commit log zeroed (the same size), refused, then given up: its
 * pages say no id was ever given, but the control file's id floor does, so
 * no id is given twice — a new transaction's commit must never make an old
 * row, whose outcome was lost, visible. */
static void test_lost_commit_log(void) {
  testdir_make(dir, sizeof dir, "xact-lost-clog");
  env e;
  REQUIRE(env_open(&e) == HS_OK);
  enum { N = 5000 }; /* past one reservation */
  hs_xid x = 0, last = 0;
  for (uint32_t i = 0; i < N; i++) {
    REQUIRE(hs_xact_begin(e.x, &x) == HS_OK);
    REQUIRE(hs_xact_commit(e.x, x) == HS_OK);
    last = x;
  }
  uint64_t floor = hs_pool_id_floor(e.pool);
  CHECK(floor > last);
  heap_env_close(&e);
  char name[64], full[8800];
  hs_smgr_fork_filename(HS_XACT_CLOG_REL, HS_FORK_MAIN, name, sizeof name);
  snprintf(full, sizeof full, "%s/%s", dir, name);
  struct stat sb;
  REQUIRE(stat(full, &sb) == 0);
  int fd = open(full, O_WRONLY);
  REQUIRE(fd >= 0);
  unsigned char *zeros = calloc(1, (size_t)sb.st_size);
  REQUIRE(zeros != NULL);
  REQUIRE(pwrite(fd, zeros, (size_t)sb.st_size, 0) == (ssize_t)sb.st_size);
  free(zeros);
  close(fd);
  /* Shut down cleanly: the zeroed file is found older than the last
   * checkpoint wrote it, and refused. */
  CHECK_ST(env_open(&e), HS_ERR_CORRUPT);
  CHECK_CONTAINS(hs_last_error(), "older or zeroed copy");
  heap_env_close(&e);
  /* Given up, as `hotset relations --forget` does: the file is taken as
   * it is, its outcomes lost — but not its ids. */
  catalog list;
  REQUIRE(catalog_read(dir, &list) == HS_OK);
  catalog_remove(&list, HS_XACT_CLOG_REL, HS_FORK_MAIN);
  REQUIRE(catalog_write(dir, &list) == HS_OK);
  catalog_free(&list);
  REQUIRE(env_open(&e) == HS_OK);
  CHECK(hs_pool_id_floor(e.pool) >= floor); /* from the control file, then raised */
  CHECK_OK(hs_xact_begin(e.x, &x));
  CHECK(x > last); /* no id given twice */
  CHECK_OK(hs_xact_commit(e.x, x));
  heap_env_close(&e);
  testdir_remove(dir);
}

int main(void) {
  test_statuses_and_snapshots();
  test_many_across_pages();
  test_crash();
  test_lost_reservation();
  test_lost_commit_log();
  test_threads();
  return check_finish();
}
