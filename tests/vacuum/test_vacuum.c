/*
 * tests/test_vacuum.c — vacuum (hotset/vacuum.h) over a keyed heap:
 * it removes exactly the versions no snapshot can see (committed deleters
 * below the horizon, aborted creators), never one a held snapshot still
 * sees; lookups stay right as index entries move off removed chain roots; a
 * second pass finds nothing; freeze gives live versions the frozen creator;
 * cost accounting charges exactly hit, miss and dirty costs; and after a
 * crash right after a vacuum, the prune records replay to the same heap.
 */
#include "check.h"
#include "core/seams.h"
#include "heap/heap.h"
#include "heap_env.h"
#include "hotset/vacuum.h"
#include "killed_child.h"
#include "testdir.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#define HEAP_REL  40u
#define INDEX_REL 41u
#define N         2000

static char dir[4096];

typedef struct row {
  uint64_t key;
  int64_t value;
  char pad[48];
} row;

static hs_status add(heap_env *e, hs_xid x, uint64_t key, int64_t value) {
  row r = {key, value, {0}};
  hs_tid tid;
  hs_status st = hs_heap_insert(e->h, x, &r, sizeof r, &tid);
  return st == HS_OK ? hs_pk_index_insert(e->ix, key, tid) : st;
}

/* The version `self` sees now, or -1. */
static int64_t value_of(heap_env *e, uint64_t key, const hs_snapshot *s, hs_xid self,
                        hs_tid *where) {
  row r;
  uint32_t len;
  bool found;
  hs_tid tid = {0, 0};
  hs_status st = heap_env_lookup(e, key, s, self, &tid, &r, sizeof r, &len, &found);
  if (where) *where = tid;
  return st == HS_OK && found ? r.value : -1;
}

static hs_status set(heap_env *e, hs_xid x, uint64_t key, int64_t value) {
  hs_tid tid, next;
  if (value_of(e, key, NULL, x, &tid) < 0) return HS_ERR_NOENT;
  row r = {key, value, {0}};
  return hs_heap_update(e->h, x, tid, &r, sizeof r, &next);
}

static hs_status del(heap_env *e, hs_xid x, uint64_t key) {
  hs_tid tid;
  if (value_of(e, key, NULL, x, &tid) < 0) return HS_ERR_NOENT;
  return hs_heap_delete(e->h, x, tid);
}

/* Rows 1..N, then: every 5th updated twice, every 7th deleted (committed),
 * every 11th updated by an aborted transaction. The expected value. */
static int64_t expected(uint64_t k) {
  if (k % 7 == 0) return -1;
  if (k % 5 == 0) return (int64_t)k + 2000000;
  return (int64_t)k;
}

static void load(heap_env *e) {
  hs_xid x;
  REQUIRE(hs_xact_begin(e->x, &x) == HS_OK);
  for (uint64_t k = 1; k <= N; k++) REQUIRE(add(e, x, k, (int64_t)k) == HS_OK);
  REQUIRE(hs_xact_commit(e->x, x) == HS_OK);
}

static void churn(heap_env *e) {
  hs_xid x;
  for (int round = 1; round <= 2; round++) {
    REQUIRE(hs_xact_begin(e->x, &x) == HS_OK);
    for (uint64_t k = 5; k <= N; k += 5)
      REQUIRE(set(e, x, k, (int64_t)k + round * 1000000) == HS_OK);
    REQUIRE(hs_xact_commit(e->x, x) == HS_OK);
  }
  REQUIRE(hs_xact_begin(e->x, &x) == HS_OK);
  for (uint64_t k = 7; k <= N; k += 7) REQUIRE(del(e, x, k) == HS_OK);
  REQUIRE(hs_xact_commit(e->x, x) == HS_OK);
  REQUIRE(hs_xact_begin(e->x, &x) == HS_OK);
  for (uint64_t k = 11; k <= N; k += 11)
    if (k % 7) REQUIRE(set(e, x, k, -3) == HS_OK);
  REQUIRE(hs_xact_abort(e->x, x) == HS_OK);
}

/* A fresh directory named after `name`, the stack opened over it with a
 * pool of `pages`, the rows loaded. */
static void loaded_heap(heap_env *e, const char *name, uint32_t pages) {
  testdir_make(dir, sizeof dir, name);
  REQUIRE(heap_env_open(e, dir, pages, HEAP_REL, INDEX_REL) == HS_OK);
  load(e);
}

/* ... and churned. */
static void churned_heap(heap_env *e, const char *name, uint32_t pages) {
  loaded_heap(e, name, pages);
  churn(e);
}

static uint32_t wrong_values(heap_env *e) {
  uint32_t wrong = 0;
  for (uint64_t k = 1; k <= N; k++)
    if (value_of(e, k, NULL, 0, NULL) != expected(k)) wrong++;
  return wrong;
}

/* Dead versions: 2 per 5th row, 1 per 7th, 1 per 11th not 7th — minus the
 * overlaps of rows both 5th and 7th (updated twice, then deleted: 3). */
static uint64_t dead_versions(void) {
  uint64_t d = 0;
  for (uint64_t k = 1; k <= N; k++) {
    if (k % 5 == 0) d += 2;
    if (k % 7 == 0) d += 1;
    if (k % 11 == 0 && k % 7) d += 1;
  }
  return d;
}

static void test_removes_exactly_the_dead(void) {
  heap_env e;
  loaded_heap(&e, "vac", 64);
  hs_snapshot *old = malloc(sizeof *old);
  REQUIRE(hs_xact_take_snapshot(e.x, old) == HS_OK); /* sees every row as loaded */
  churn(&e);
  CHECK_EQ(wrong_values(&e), 0);
  /* The held snapshot pins the horizon: only aborted versions may go. */
  hs_vacuum_stats vs;
  CHECK_OK(hs_vacuum(e.h, e.ix, NULL, &vs));
  uint64_t aborted = 0;
  for (uint64_t k = 11; k <= N; k += 11)
    if (k % 7) aborted++;
  CHECK_EQ(vs.removed, aborted);
  uint32_t wrong_old = 0;
  for (uint64_t k = 1; k <= N; k++)
    if (value_of(&e, k, old, 0, NULL) != (int64_t)k) wrong_old++;
  CHECK_EQ(wrong_old, 0); /* the old snapshot still sees every original */
  hs_xact_release_snapshot(e.x, old);
  free(old);
  /* Now everything dead goes; lookups unchanged; a second pass: nothing. */
  CHECK_OK(hs_vacuum(e.h, e.ix, NULL, &vs));
  CHECK_EQ(vs.removed, dead_versions() - aborted);
  CHECK(vs.index_moves > 0 && vs.freed_bytes > 0);
  CHECK_EQ(vs.live, N - N / 7);
  CHECK_EQ(wrong_values(&e), 0);
  CHECK_OK(hs_vacuum(e.h, e.ix, NULL, &vs));
  CHECK_EQ(vs.removed, 0);
  CHECK_EQ(vs.pages_dirtied, 0);
  /* Freeze: every live version's creator becomes HS_XACT_FROZEN. */
  hs_vacuum_options o;
  hs_vacuum_options_init(&o);
  o.freeze = true;
  CHECK_OK(hs_vacuum(e.h, e.ix, &o, &vs));
  CHECK_EQ(vs.frozen, N - N / 7);
  hs_tid tid;
  CHECK_EQ(value_of(&e, 3, NULL, 0, &tid), 3);
  hs_heap_tuple_info info;
  CHECK_OK(hs_heap_tuple_info_get(e.h, tid, &info));
  CHECK_EQ(info.xmin, HS_XACT_FROZEN);
  CHECK_EQ(wrong_values(&e), 0);
  heap_env_close(&e);
  testdir_remove(dir);
}

/* A running transaction (no snapshot of its own held apart from it: its
 * xid alone) holds the horizon too: rows deleted and updated by a
 * transaction that committed after it began stay, and it still reads the
 * versions it saw; once it commits, the next pass removes them. */
static void test_running_transaction_holds_the_horizon(void) {
  heap_env e;
  loaded_heap(&e, "vacrun", 64);
  hs_xid reader;
  REQUIRE(hs_xact_begin(e.x, &reader) == HS_OK);
  hs_snapshot *snap = malloc(sizeof *snap);
  REQUIRE(snap && hs_xact_take_snapshot(e.x, snap) == HS_OK);
  hs_xact_release_snapshot(e.x, snap); /* kept as data: only the xid holds */
  hs_xid w;
  REQUIRE(hs_xact_begin(e.x, &w) == HS_OK);
  for (uint64_t k = 2; k <= N; k += 2) REQUIRE(set(&e, w, k, -(int64_t)k) == HS_OK);
  for (uint64_t k = 3; k <= N; k += 6) REQUIRE(del(&e, w, k) == HS_OK);
  REQUIRE(hs_xact_commit(e.x, w) == HS_OK);
  hs_vacuum_stats vs;
  CHECK_OK(hs_vacuum(e.h, e.ix, NULL, &vs));
  CHECK_EQ(vs.removed, 0);
  uint32_t wrong = 0;
  for (uint64_t k = 1; k <= N; k++)
    if (value_of(&e, k, snap, reader, NULL) != (int64_t)k) wrong++;
  CHECK_EQ(wrong, 0);
  REQUIRE(hs_xact_commit(e.x, reader) == HS_OK);
  CHECK_OK(hs_vacuum(e.h, e.ix, NULL, &vs));
  CHECK_EQ(vs.removed, N / 2 + (N - 3) / 6 + 1);
  free(snap);
  heap_env_close(&e);
  testdir_remove(dir);
}

/* Exact charges: after a reopen no heap page is in the pool (misses); a
 * second pass finds them all (hits); the pages a pass prunes for the first
 * time are dirtied. */
static void test_cost_accounting(void) {
  heap_env e;
  churned_heap(&e, "vac-cost", 256);
  heap_env_close(&e); /* a checkpoint: every page clean, none cached after */
  REQUIRE(heap_env_open(&e, dir, 256, HEAP_REL, INDEX_REL) == HS_OK);
  hs_vacuum_options o;
  hs_vacuum_options_init(&o);
  o.cost_page_miss = 10;      /* PostgreSQL before 14: distinct from hit and dirty */
  o.skip_all_visible = false; /* every pass reads every page */
  hs_vacuum_stats vs;
  CHECK_OK(hs_vacuum(e.h, NULL, &o, &vs));
  CHECK_EQ(vs.page_hits, 0);
  CHECK_EQ(vs.page_misses, vs.pages_scanned);
  CHECK(vs.pages_dirtied > 0 && vs.pages_dirtied <= vs.pages_scanned);
  CHECK_EQ(vs.cost_total, vs.page_misses * 10 + vs.pages_dirtied * 20);
  CHECK_OK(hs_vacuum(e.h, NULL, &o, &vs));
  CHECK_EQ(vs.page_hits, vs.pages_scanned);
  CHECK_EQ(vs.pages_dirtied, 0);
  CHECK_EQ(vs.cost_total, vs.pages_scanned * 1);
  /* The delay: a limit of 10 with 1 ms sleeps — one sleep per 10 hits. */
  o.cost_limit = 10;
  o.cost_delay_ms = 1;
  CHECK_OK(hs_vacuum(e.h, NULL, &o, &vs));
  CHECK_EQ(vs.cost_sleeps, vs.pages_scanned / 10);
  CHECK(vs.sleep_ms >= (double)vs.cost_sleeps);
  heap_env_close(&e);
  testdir_remove(dir);
}

/* The child: rows loaded, checkpointed, churned, vacuumed; the log
 * flushed; then it dies. */
static void vacuum_child(void *ctx, int out) {
  (void)ctx;
  (void)out;
  heap_env e;
  if (heap_env_open(&e, dir, 32, HEAP_REL, INDEX_REL) != HS_OK) _exit(2);
  load(&e);
  if (hs_pool_checkpoint(e.pool) != HS_OK) _exit(3);
  churn(&e);
  hs_vacuum_stats vs;
  if (hs_vacuum(e.h, e.ix, NULL, &vs) != HS_OK || vs.removed == 0) _exit(4);
  if (hs_wal_flush(e.wal, hs_wal_insert_lsn(e.wal), HS_WAL_CAUSE_COMMIT, NULL) != HS_OK) _exit(5);
}

static void test_crash_after_vacuum(void) {
  testdir_make(dir, sizeof dir, "vac-crash");
  REQUIRE(run_killed_child(vacuum_child, NULL, NULL, 0));
  heap_env e;
  REQUIRE(heap_env_open(&e, dir, 32, HEAP_REL, INDEX_REL) == HS_OK);
  CHECK_EQ(wrong_values(&e), 0);
  hs_vacuum_stats vs;
  hs_vacuum_options all;
  hs_vacuum_options_init(&all);
  all.skip_all_visible = false; /* read every page, whatever the map says */
  CHECK_OK(hs_vacuum(e.h, e.ix, &all, &vs));
  CHECK_EQ(vs.removed, 0); /* the replayed prunes left nothing dead */
  CHECK_EQ(vs.live, N - N / 7);
  heap_env_close(&e);
  testdir_remove(dir);
}

/* Inserts in the middle of a vacuum run (the after_page hook, at the half
 * way page): with the map told every page, they go into pages the run has
 * already freed; told only at the end, they must grow the relation. */
/* More than the last page's room: the rest must go elsewhere. */
#define MID_ROWS 200

typedef struct mid_run {
  heap_env *e;
  hs_blockno at;
  uint64_t next_key;
  uint32_t in_freed, appended;
  hs_blockno nblocks_before;
} mid_run;

static void insert_mid_run(void *ctx, hs_blockno block) {
  mid_run *m = ctx;
  if (block != m->at) return;
  hs_xid x;
  if (hs_xact_begin(m->e->x, &x) != HS_OK) return;
  for (int i = 0; i < MID_ROWS; i++) {
    row r = {m->next_key++, 1, {0}};
    hs_tid tid;
    if (hs_heap_insert(m->e->h, x, &r, sizeof r, &tid) != HS_OK) break;
    if (tid.block <= m->at)
      m->in_freed++;
    else if (tid.block >= m->nblocks_before)
      m->appended++;
  }
  hs_xact_commit(m->e->x, x);
}

static void test_fsm_during_the_run(uint32_t fsm_every, bool expect_reuse) {
  heap_env e;
  churned_heap(&e, "vac-fsm", 64);
  hs_blockno n;
  REQUIRE(hs_smgr_nblocks(hs_pool_smgr(e.pool), HEAP_REL, HS_FORK_MAIN, &n) == HS_OK);
  mid_run m = {&e, n / 2, 10 * N, 0, 0, n};
  hs_vacuum_options o;
  hs_vacuum_options_init(&o);
  o.fsm_every = fsm_every;
  o.after_page = insert_mid_run;
  o.after_page_ctx = &m;
  hs_vacuum_stats vs;
  CHECK_OK(hs_vacuum(e.h, e.ix, &o, &vs));
  CHECK_EQ(vs.fsm_updates, n);
  if (expect_reuse) {
    /* Past the last page's room, into pages the run freed: none appended. */
    CHECK(m.in_freed > MID_ROWS / 2);
    CHECK_EQ(m.appended, 0);
  } else {
    CHECK_EQ(m.in_freed, 0); /* nothing known yet: the relation grows */
    CHECK(m.appended > 0);
  }
  /* Afterwards the map knows every page: an insert reuses freed room. */
  hs_blockno before;
  REQUIRE(hs_smgr_nblocks(hs_pool_smgr(e.pool), HEAP_REL, HS_FORK_MAIN, &before) == HS_OK);
  hs_xid x;
  REQUIRE(hs_xact_begin(e.x, &x) == HS_OK);
  for (int i = 0; i < 40; i++) CHECK_OK(add(&e, x, m.next_key++, 5));
  CHECK_OK(hs_xact_commit(e.x, x));
  hs_blockno after;
  REQUIRE(hs_smgr_nblocks(hs_pool_smgr(e.pool), HEAP_REL, HS_FORK_MAIN, &after) == HS_OK);
  CHECK_EQ(after, before);
  heap_env_close(&e);
  testdir_remove(dir);
}

/* The visibility map: a pass marks the pages with nothing left to do, the
 * next skips them unread; a change to a page clears its bit, so the next
 * pass reads exactly that page; and the bits survive a crash. */
static void test_visibility_map(void) {
  heap_env e;
  churned_heap(&e, "vac-vm", 64);
  hs_blockno n;
  REQUIRE(hs_smgr_nblocks(hs_pool_smgr(e.pool), HEAP_REL, HS_FORK_MAIN, &n) == HS_OK);
  hs_vacuum_stats vs;
  CHECK_OK(hs_vacuum(e.h, e.ix, NULL, &vs));
  CHECK_EQ(vs.pages_scanned, n);
  CHECK_EQ(vs.pages_marked_visible, n); /* nothing running: every page settles */
  CHECK_OK(hs_vacuum(e.h, e.ix, NULL, &vs));
  CHECK_EQ(vs.pages_skipped, n);
  CHECK_EQ(vs.pages_scanned, 0);
  /* One update in place: one page read by the next pass. */
  hs_xid x;
  REQUIRE(hs_xact_begin(e.x, &x) == HS_OK);
  hs_tid where;
  CHECK_EQ(value_of(&e, 3, NULL, 0, &where), 3);
  CHECK_OK(set(&e, x, 3, 33));
  CHECK_OK(hs_xact_commit(e.x, x));
  hs_tid now_at;
  CHECK_EQ(value_of(&e, 3, NULL, 0, &now_at), 33);
  hs_blockno touched = now_at.block != where.block ? 2 : 1;
  CHECK_OK(hs_vacuum(e.h, e.ix, NULL, &vs));
  CHECK_EQ(vs.pages_scanned, touched);
  CHECK_EQ(vs.removed, 1);
  /* Freeze reads everything regardless. */
  hs_vacuum_options o;
  hs_vacuum_options_init(&o);
  o.freeze = true;
  REQUIRE(hs_smgr_nblocks(hs_pool_smgr(e.pool), HEAP_REL, HS_FORK_MAIN, &n) == HS_OK);
  CHECK_OK(hs_vacuum(e.h, e.ix, &o, &vs));
  CHECK_EQ(vs.pages_scanned, n);
  heap_env_close(&e);
  /* After a restart (and a crash would replay the same records), the map
   * still says all-visible: the next pass skips every page. */
  REQUIRE(heap_env_open(&e, dir, 64, HEAP_REL, INDEX_REL) == HS_OK);
  CHECK_OK(hs_vacuum(e.h, e.ix, NULL, &vs));
  CHECK_EQ(vs.pages_scanned, 0);
  CHECK_EQ(wrong_values(&e), 1); /* key 3, which now holds 33 */
  CHECK_EQ(value_of(&e, 3, NULL, 0, NULL), 33);
  heap_env_close(&e);
  testdir_remove(dir);
}

/* An update chain that runs back to lower slots of its page: the row's
 * root in slot 50, its newer versions in slots 1 and 2 (which a vacuum
 * emptied). Removing the dead middle version first, in slot order, and then
 * the root would move the index entry onto the empty slot 1 — which an
 * insert then fills with another row. The middle version must wait until
 * the root has gone and it is the entry's version (the same prune, a round
 * later). */
static void test_chain_into_lower_slots(void) {
  heap_env e;
  loaded_heap(&e, "vacback", 64);
  hs_tid root;
  REQUIRE(value_of(&e, 50, NULL, 0, &root) == 50);
  REQUIRE(root.block == 0 && root.slot == 50);
  hs_xid x;
  REQUIRE(hs_xact_begin(e.x, &x) == HS_OK);
  for (uint64_t k = 1; k <= 5; k++) REQUIRE(del(&e, x, k) == HS_OK);
  REQUIRE(hs_xact_commit(e.x, x) == HS_OK);
  hs_vacuum_stats st;
  REQUIRE(hs_vacuum(e.h, e.ix, NULL, &st) == HS_OK);
  hs_tid at[3];
  for (int v = 1; v <= 2; v++) {
    REQUIRE(hs_xact_begin(e.x, &x) == HS_OK);
    REQUIRE(set(&e, x, 50, 50 + v) == HS_OK);
    REQUIRE(hs_xact_commit(e.x, x) == HS_OK);
    REQUIRE(value_of(&e, 50, NULL, 0, &at[v]) == 50 + v);
  }
  REQUIRE(at[1].block == 0 && at[1].slot < 50); /* the chain runs back */
  REQUIRE(at[2].block == 0 && at[2].slot < 50);

  CHECK_OK(hs_vacuum(e.h, e.ix, NULL, &st));
  CHECK_EQ(st.kept, 0);
  CHECK_EQ(st.removed, 2);
  CHECK_EQ(value_of(&e, 50, NULL, 0, NULL), 52);
  /* Fill every free slot with new rows: none may land under the chain. */
  REQUIRE(hs_xact_begin(e.x, &x) == HS_OK);
  for (uint64_t k = N + 1; k <= N + 200; k++) REQUIRE(add(&e, x, k, (int64_t)k) == HS_OK);
  REQUIRE(hs_xact_commit(e.x, x) == HS_OK);
  uint32_t wrong = 0;
  for (uint64_t k = 6; k <= N + 200; k++)
    if (value_of(&e, k, NULL, 0, NULL) != (k == 50 ? 52 : (int64_t)k)) wrong++;
  CHECK_EQ(wrong, 0);
  heap_env_close(&e);
  testdir_remove(dir);
}

/* ---- lookups racing vacuum ---- */

typedef struct racing {
  heap_env *e;
  int round; /* every 3rd live row has been updated `round` times */
  _Atomic uint64_t lookups, wrong;
  _Atomic bool stop;
} racing;

static int64_t expected_in_round(uint64_t k, int round) {
  if (k % 7 && k % 3 == 0 && round > 0) return (int64_t)k + round * 10000000;
  return expected(k);
}

static void *lookup_loop(void *arg) {
  racing *r = arg;
  for (uint64_t k = 1; !atomic_load(&r->stop); k = k % N + 1) {
    if (value_of(r->e, k, NULL, 0, NULL) != expected_in_round(k, r->round))
      atomic_fetch_add(&r->wrong, 1);
    atomic_fetch_add(&r->lookups, 1);
  }
  return NULL;
}

/* After each page vacuum waits for the readers to do a few lookups, so
 * that they run in the middle of its run whatever the scheduler does. */
static void let_readers_in(void *ctx, hs_blockno block) {
  (void)block;
  racing *r = ctx;
  uint64_t until = atomic_load(&r->lookups) + 64;
  while (atomic_load(&r->lookups) < until) sched_yield();
}

/* Readers look every key up, over and over, while vacuum removes versions
 * and moves index entries under them: each must find exactly the version
 * it should (a lookup that lands on a slot vacuum just emptied, or on a
 * version vacuum prunes before the lookup reads its successor, must follow
 * the moved entry, not report the row missing). Four rounds of updates
 * make chains that cross pages; a pool of 48 pages makes both sides read
 * from disk. */
static void test_lookups_racing_vacuum(void) {
  heap_env e;
  churned_heap(&e, "vacrace", 48);
  racing r = {.e = &e};
  for (int round = 0; round <= 4; round++) {
    if (round > 0) {
      hs_xid x;
      REQUIRE(hs_xact_begin(e.x, &x) == HS_OK);
      for (uint64_t k = 3; k <= N; k += 3)
        if (k % 7) REQUIRE(set(&e, x, k, (int64_t)k + round * 10000000) == HS_OK);
      REQUIRE(hs_xact_commit(e.x, x) == HS_OK);
    }
    r.round = round;
    atomic_store(&r.stop, false);
    pthread_t th[2];
    for (int i = 0; i < 2; i++) REQUIRE(pthread_create(&th[i], NULL, lookup_loop, &r) == 0);
    hs_vacuum_options o;
    hs_vacuum_options_init(&o);
    o.after_page = let_readers_in;
    o.after_page_ctx = &r;
    hs_vacuum_stats st;
    CHECK_OK(hs_vacuum(e.h, e.ix, &o, &st));
    CHECK(st.removed > 0);
    atomic_store(&r.stop, true);
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
  }
  CHECK_EQ(atomic_load(&r.wrong), 0);
  CHECK(atomic_load(&r.lookups) > 1000);
  uint32_t wrong_after = 0;
  for (uint64_t k = 1; k <= N; k++)
    if (value_of(&e, k, NULL, 0, NULL) != expected_in_round(k, 4)) wrong_after++;
  CHECK_EQ(wrong_after, 0);
  heap_env_close(&e);
  testdir_remove(dir);
}

/* ---- a lookup whose root vacuum removes, its slot reused ---- */

typedef struct reuse {
  heap_env *e;
  hs_tid root;   /* the entry the lookup read */
  hs_tid filled; /* where the other row went */
  hs_xid other;  /* its transaction, running through the lookup */
  bool done;
} reuse;

/* Between the lookup's read of the entry and its walk: vacuum removes the
 * root (moving the entry on), and a running transaction's insert takes the
 * root's slot. */
static void vacuum_and_fill(void *ctx, uint64_t key, const hs_tid *entry) {
  reuse *u = ctx;
  if (u->done || key != 3) return;
  u->done = true;
  u->root = *entry;
  hs_vacuum_stats st;
  CHECK_OK(hs_vacuum(u->e->h, u->e->ix, NULL, &st));
  CHECK_EQ(st.removed, 1);
  REQUIRE(hs_xact_begin(u->e->x, &u->other) == HS_OK);
  row r = {99, 99, {0}};
  CHECK_OK(hs_heap_insert(u->e->h, u->other, &r, sizeof r, &u->filled));
}

/* The walk starts on the other row (invisible: its creator runs, and it
 * has no successor): it must look at the entry again, not report the key
 * missing. */
static void test_lookup_on_a_reused_root_slot(void) {
  heap_env e;
  testdir_make(dir, sizeof dir, "vacreuse");
  REQUIRE(heap_env_open(&e, dir, 64, HEAP_REL, INDEX_REL) == HS_OK);
  hs_xid x;
  REQUIRE(hs_xact_begin(e.x, &x) == HS_OK);
  for (uint64_t k = 1; k <= 5; k++) REQUIRE(add(&e, x, k, (int64_t)k) == HS_OK);
  REQUIRE(hs_xact_commit(e.x, x) == HS_OK);
  REQUIRE(hs_xact_begin(e.x, &x) == HS_OK);
  REQUIRE(set(&e, x, 3, 33) == HS_OK);
  REQUIRE(hs_xact_commit(e.x, x) == HS_OK);
  reuse u = {.e = &e};
  seams.pk_lookup_ctx = &u;
  seams.pk_lookup = vacuum_and_fill;
  CHECK_EQ(value_of(&e, 3, NULL, 0, NULL), 33);
  seams.pk_lookup = NULL;
  CHECK(u.done);
  /* The case this is about: the other row did take the root's slot. */
  CHECK(u.filled.block == u.root.block && u.filled.slot == u.root.slot);
  REQUIRE(hs_xact_abort(e.x, u.other) == HS_OK);
  CHECK_EQ(value_of(&e, 3, NULL, 0, NULL), 33);
  heap_env_close(&e);
  testdir_remove(dir);
}

int main(void) {
  test_removes_exactly_the_dead();
  test_running_transaction_holds_the_horizon();
  test_cost_accounting();
  test_crash_after_vacuum();
  test_fsm_during_the_run(1, true);
  test_fsm_during_the_run(0, false);
  test_visibility_map();
  test_chain_into_lower_slots();
  test_lookups_racing_vacuum();
  test_lookup_on_a_reused_root_slot();
  return check_finish();
}
