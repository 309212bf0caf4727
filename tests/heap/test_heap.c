/*
 * tests/test_heap.c — the heap (hotset/heap.h): versions seen through
 * snapshots (a reader sees what committed before its snapshot, its own
 * changes, never an aborted one); updates chain to the new version, on the
 * same page or a new one; write conflicts (a running deleter: BUSY; a
 * committed one: refused; an aborted one: taken over); pages fill and new
 * ones are added; and after a real crash (a child killed with SIGKILL)
 * recovery replays the heap's records: committed rows are there with their
 * latest values, uncommitted changes are not visible. Threads inserting and
 * updating at once (TSan).
 */
#include "check.h"
#include "heap/heap.h"
#include "heap_env.h"
#include "killed_child.h"
#include "testdir.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#define REL 20u

static char dir[4096];
static _Atomic unsigned thread_failures;

typedef heap_env env;

static hs_status env_open(env *e, uint32_t pages) {
  return heap_env_open(e, dir, pages, REL, 0);
}

/* What `self` (0: nobody) sees at tid through a fresh snapshot: the value,
 * or -1 if nothing is visible. */
static long seen(env *e, hs_tid tid, hs_xid self) {
  /* No CHECK or REQUIRE here: worker threads call it (check.h's counters
   * are the main thread's). */
  hs_snapshot *s = malloc(sizeof *s);
  if (!s || hs_xact_take_snapshot(e->x, s) != HS_OK) {
    free(s);
    return -2;
  }
  long v = -1;
  char buf[64];
  uint32_t len;
  bool visible;
  if (hs_heap_fetch(e->h, tid, s, self, buf, sizeof buf - 1, &len, &visible) == HS_OK && visible) {
    buf[len < sizeof buf - 1 ? len : sizeof buf - 1] = 0;
    v = strtol(buf, NULL, 10);
  }
  hs_xact_release_snapshot(e->x, s);
  free(s);
  return v;
}

static hs_status put(env *e, hs_xid x, long v, hs_tid *tid) {
  char buf[32];
  int n = snprintf(buf, sizeof buf, "%ld", v);
  return hs_heap_insert(e->h, x, buf, (uint32_t)n, tid);
}
static hs_status change(env *e, hs_xid x, hs_tid tid, long v, hs_tid *next) {
  char buf[32];
  int n = snprintf(buf, sizeof buf, "%ld", v);
  return hs_heap_update(e->h, x, tid, buf, (uint32_t)n, next);
}

static void test_versions(void) {
  testdir_make(dir, sizeof dir, "heap");
  env e;
  REQUIRE(env_open(&e, 32) == HS_OK);
  hs_xid a, b, c;
  hs_tid t1, t2, t3;
  REQUIRE(hs_xact_begin(e.x, &a) == HS_OK);
  CHECK_OK(put(&e, a, 100, &t1));
  CHECK_EQ(seen(&e, t1, a), 100); /* its own insert */
  CHECK_EQ(seen(&e, t1, 0), -1);  /* not yet committed */
  CHECK_OK(hs_xact_commit(e.x, a));
  CHECK_EQ(seen(&e, t1, 0), 100);
  /* An update: the old version stays for older snapshots. */
  REQUIRE(hs_xact_begin(e.x, &b) == HS_OK);
  hs_snapshot *before = malloc(sizeof *before);
  REQUIRE(hs_xact_take_snapshot(e.x, before) == HS_OK);
  CHECK_OK(change(&e, b, t1, 101, &t2));
  CHECK_EQ(seen(&e, t1, b), -1); /* b deleted the old version */
  CHECK_EQ(seen(&e, t2, b), 101);
  CHECK_EQ(seen(&e, t1, 0), 100); /* others still see the old one */
  hs_heap_tuple_info info;
  CHECK_OK(hs_heap_tuple_info_get(e.h, t1, &info));
  CHECK(info.xmin == a && info.xmax == b && info.next.block == t2.block &&
        info.next.slot == t2.slot);
  /* A second writer of the old version while b runs: BUSY. */
  REQUIRE(hs_xact_begin(e.x, &c) == HS_OK);
  CHECK_ST(hs_heap_delete(e.h, c, t1), HS_ERR_BUSY);
  CHECK_CONTAINS(hs_last_error(), "still running");
  CHECK_OK(hs_xact_commit(e.x, b));
  CHECK_ST(hs_heap_delete(e.h, c, t1), HS_ERR_INVALID); /* b committed it away */
  CHECK_EQ(seen(&e, t2, 0), 101);
  char buf[16];
  uint32_t len;
  bool vis;
  CHECK_OK(hs_heap_fetch(e.h, t1, before, 0, buf, sizeof buf, &len, &vis));
  CHECK(vis); /* the old snapshot still sees 100 */
  hs_xact_release_snapshot(e.x, before);
  free(before);
  /* c deletes t2 then aborts: t2 lives, and another may take it over. */
  CHECK_OK(hs_heap_delete(e.h, c, t2));
  CHECK_EQ(seen(&e, t2, c), -1);
  CHECK_OK(hs_xact_abort(e.x, c));
  CHECK_EQ(seen(&e, t2, 0), 101);
  REQUIRE(hs_xact_begin(e.x, &c) == HS_OK);
  CHECK_OK(change(&e, c, t2, 102, &t3));
  CHECK_OK(hs_xact_commit(e.x, c));
  CHECK_EQ(seen(&e, t3, 0), 102);
  CHECK_EQ(seen(&e, t2, 0), -1);
  /* An aborted insert is never seen. */
  hs_tid t4;
  REQUIRE(hs_xact_begin(e.x, &a) == HS_OK);
  CHECK_OK(put(&e, a, 7, &t4));
  CHECK_OK(hs_xact_abort(e.x, a));
  CHECK_EQ(seen(&e, t4, 0), -1);
  /* Misuse and limits. */
  /* The largest tuple an 8 KiB page takes: an empty page less one line
   * pointer and the tuple header. */
  static char big[8192];
  uint32_t most = 8192 - HEAP_PAGE_FIRST_LP - HEAP_LINE_POINTER - HEAP_TUPLE_HEADER;
  REQUIRE(hs_xact_begin(e.x, &a) == HS_OK);
  CHECK_ST(hs_heap_insert(e.h, a, big, most + 1, &t4), HS_ERR_INVALID);
  CHECK_CONTAINS(hs_last_error(), "8192-byte pages");
  CHECK_OK(hs_heap_insert(e.h, a, big, most, &t4)); /* fits a fresh page */
  hs_tid nowhere = {t1.block, 999};
  CHECK_ST(hs_heap_delete(e.h, a, nowhere), HS_ERR_NOENT);
  CHECK_OK(hs_xact_commit(e.x, a));
  heap_env_close(&e);
  testdir_remove(dir);
}

/* Many rows: pages fill, updates move to new pages, all survive reopen. */
static void test_many_rows(void) {
  testdir_make(dir, sizeof dir, "heap-many");
  env e;
  REQUIRE(env_open(&e, 16) == HS_OK); /* a small pool: pages are evicted */
  enum { N = 3000 };
  static hs_tid tid[N];
  hs_xid x;
  REQUIRE(hs_xact_begin(e.x, &x) == HS_OK);
  for (int i = 0; i < N; i++) CHECK_OK(put(&e, x, i, &tid[i]));
  CHECK_OK(hs_xact_commit(e.x, x));
  CHECK(tid[N - 1].block > 10); /* many pages */
  REQUIRE(hs_xact_begin(e.x, &x) == HS_OK);
  for (int i = 0; i < N; i += 3) CHECK_OK(change(&e, x, tid[i], i + 1000000, &tid[i]));
  CHECK_OK(hs_xact_commit(e.x, x));
  heap_env_close(&e);
  REQUIRE(env_open(&e, 16) == HS_OK);
  uint32_t wrong = 0;
  for (int i = 0; i < N; i++)
    if (seen(&e, tid[i], 0) != (i % 3 == 0 ? i + 1000000 : i)) wrong++;
  CHECK_EQ(wrong, 0);
  heap_env_close(&e);
  testdir_remove(dir);
}

#define CRASH_ROWS 500

/* The child: rows committed, then updated by a committed transaction and
 * by one left running; it sends the rows' tids (now, then as inserted) and
 * dies. */
static void crash_child(void *ctx, int out) {
  (void)ctx;
  enum { N = CRASH_ROWS };
  env e;
  if (env_open(&e, 16) != HS_OK) _exit(2);
  static hs_tid tid[2 * N];
  hs_xid x;
  if (hs_xact_begin(e.x, &x) != HS_OK) _exit(3);
  for (int i = 0; i < N; i++)
    if (put(&e, x, i, &tid[i]) != HS_OK) _exit(4);
  if (hs_xact_commit(e.x, x) != HS_OK) _exit(5);
  memcpy(tid + N, tid, N * sizeof *tid);
  if (hs_pool_checkpoint(e.pool) != HS_OK) _exit(6);
  /* Committed updates of the even rows, after the checkpoint. */
  if (hs_xact_begin(e.x, &x) != HS_OK) _exit(7);
  for (int i = 0; i < N; i += 2)
    if (change(&e, x, tid[i], i + 5000, &tid[i]) != HS_OK) _exit(8);
  if (hs_xact_commit(e.x, x) != HS_OK) _exit(9);
  /* Uncommitted updates of rows 1, 3: must not show after the crash. */
  if (hs_xact_begin(e.x, &x) != HS_OK) _exit(10);
  hs_tid lost;
  for (int i = 1; i < 5; i += 2)
    if (change(&e, x, tid[i], -7, &lost) != HS_OK) _exit(11);
  hs_wal_flush(e.wal, hs_wal_insert_lsn(e.wal), HS_WAL_CAUSE_COMMIT, NULL);
  killed_child_send(out, tid, sizeof tid, 12);
}

/* A child changes rows and dies; recovery replays the heap's records. */
static void test_crash(void) {
  testdir_make(dir, sizeof dir, "heap-crash");
  enum { N = CRASH_ROWS };
  static hs_tid tid[2 * N];
  REQUIRE(run_killed_child(crash_child, NULL, tid, sizeof tid));
  env e;
  REQUIRE(env_open(&e, 16) == HS_OK);
  hs_pool_recovery_stats rep;
  hs_pool_recovery_stats_get(e.pool, &rep);
  CHECK(rep.ran && rep.applied + rep.images > 0);
  uint32_t wrong = 0;
  for (int i = 0; i < N; i++)
    if (seen(&e, tid[i], 0) != (i % 2 == 0 ? i + 5000 : i)) wrong++;
  CHECK_EQ(wrong, 0);
  /* The versions the committed updates replaced are gone for a new
   * snapshot, and point at their successors. */
  wrong = 0;
  for (int i = 0; i < N; i += 2) {
    hs_heap_tuple_info info;
    if (seen(&e, tid[N + i], 0) != -1 || hs_heap_tuple_info_get(e.h, tid[N + i], &info) != HS_OK ||
        info.next.block != tid[i].block || info.next.slot != tid[i].slot)
      wrong++;
  }
  CHECK_EQ(wrong, 0);
  heap_env_close(&e);
  testdir_remove(dir);
}

#define THREADS 3
#define ROWS    200

static void *worker_main(void *arg) {
  env *e = arg;
  hs_tid tid[ROWS];
  for (int i = 0; i < ROWS; i++) {
    hs_xid x;
    if (hs_xact_begin(e->x, &x) != HS_OK || put(e, x, i, &tid[i]) != HS_OK ||
        change(e, x, tid[i], i + 1, &tid[i]) != HS_OK || hs_xact_commit(e->x, x) != HS_OK)
      atomic_fetch_add(&thread_failures, 1);
  }
  for (int i = 0; i < ROWS; i++)
    if (seen(e, tid[i], 0) != i + 1) atomic_fetch_add(&thread_failures, 1);
  return NULL;
}

static void test_threads(void) {
  testdir_make(dir, sizeof dir, "heap-mt");
  env e;
  REQUIRE(env_open(&e, 24) == HS_OK);
  pthread_t t[THREADS];
  for (int i = 0; i < THREADS; i++) pthread_create(&t[i], NULL, worker_main, &e);
  for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
  CHECK_EQ(atomic_load(&thread_failures), 0);
  heap_env_close(&e);
  testdir_remove(dir);
}

int main(void) {
  test_versions();
  test_many_rows();
  test_crash();
  test_threads();
  return check_finish();
}
