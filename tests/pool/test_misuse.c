/*
 * test_misuse — every broken rule of the pool's API is detected, not spread.
 *
 * Each case runs in a child process. A release build must refuse the call
 * with HS_ERR_MISUSE, leave the pool's state as it was (another thread's pin
 * still there, the lock word intact), count it in hs_pool_stats.misuse and say
 * what happened in hs_last_error(). A debug build (-DHOTSET_DEBUG=ON) must
 * stop at the broken rule: the child dies of SIGABRT after one stderr line
 * naming the call and the buffer.
 */
#include "core/debug.h"
#include "hotset/durability.h"
#include "hotset/frame_cache.h"
#include "hotset/heap.h"
#include "hotset/policy.h"
#include "hotset/strategy.h"
#include "hotset/stream.h"
#include "hotset/vacuum.h"
#include "hotset/wal.h"
#include "pool_util.h"

#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static const hs_relid REL = 3;

typedef struct fixture {
  char dir[256];
  hs_pool *pool;
} fixture;

static void fixture_open(fixture *f) {
  testdir_make(f->dir, sizeof f->dir, "misuse");
  f->pool = open_pool(f->dir, 8, 1024, NULL, NULL);
  make_relation(f->pool, REL, 8);
}

static uint64_t misuse_count(hs_pool *pool) {
  hs_pool_stats s;
  hs_pool_stats_get(pool, &s);
  return s.misuse;
}

static uint32_t pins_on(hs_pool *pool, hs_blockno block) {
  hs_buffer_info info;
  return find_buffer(pool, REL, block, &info) >= 0 ? info.pins : 0;
}

/* A second thread that pins a block (and optionally share-locks it) and
 * holds on until told to let go. */
typedef struct other_thread {
  hs_pool *pool;
  hs_blockno block;
  bool share_lock;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool holding, let_go;
  pthread_t t;
} other_thread;

static void *other_main(void *arg) {
  other_thread *o = arg;
  hs_buf b = must_read(o->pool, REL, o->block, NULL);
  /* Not CHECK or REQUIRE here: their counters are the main thread's. */
  if (o->share_lock && hs_buf_lock(o->pool, b, HS_LOCK_SHARE) != HS_OK) abort();
  pthread_mutex_lock(&o->mu);
  o->holding = true;
  pthread_cond_broadcast(&o->cv);
  while (!o->let_go) pthread_cond_wait(&o->cv, &o->mu);
  pthread_mutex_unlock(&o->mu);
  if (o->share_lock && hs_buf_unlock(o->pool, b) != HS_OK) abort();
  if (hs_buf_release(o->pool, b) != HS_OK) abort();
  return NULL;
}

static void other_start(other_thread *o, hs_pool *pool, hs_blockno block, bool share_lock) {
  *o = (other_thread){.pool = pool, .block = block, .share_lock = share_lock};
  pthread_mutex_init(&o->mu, NULL);
  pthread_cond_init(&o->cv, NULL);
  REQUIRE(pthread_create(&o->t, NULL, other_main, o) == 0);
  pthread_mutex_lock(&o->mu);
  while (!o->holding) pthread_cond_wait(&o->cv, &o->mu);
  pthread_mutex_unlock(&o->mu);
}

static void other_stop(other_thread *o) {
  pthread_mutex_lock(&o->mu);
  o->let_go = true;
  pthread_cond_broadcast(&o->cv);
  pthread_mutex_unlock(&o->mu);
  pthread_join(o->t, NULL);
}

/* ---- the cases: each returns through check_finish() in the child -------- */

static void refused(hs_status st, const char *rule) {
  CHECK_EQ(st, HS_ERR_MISUSE);
  CHECK_CONTAINS(hs_last_error(), rule);
  CHECK_CONTAINS(hs_last_error(), "block");
}

static void case_double_release(fixture *f) {
  hs_buf b = must_read(f->pool, REL, 1, NULL);
  other_thread o;
  other_start(&o, f->pool, 1, false);
  CHECK_EQ(pins_on(f->pool, 1), 2);
  CHECK_OK(hs_buf_release(f->pool, b));
  refused(hs_buf_release(f->pool, b), "not pinned by this thread");
  CHECK_EQ(pins_on(f->pool, 1), 1); /* the other thread's pin is still there */
  CHECK_EQ(misuse_count(f->pool), 1);
  other_stop(&o);
  CHECK_EQ(pins_on(f->pool, 1), 0);
}

static void case_stray_unlock(fixture *f) {
  other_thread o;
  other_start(&o, f->pool, 2, true); /* holds block 2's share lock */
  hs_buf b = must_read(f->pool, REL, 2, NULL);
  refused(hs_buf_unlock(f->pool, b), "does not hold");
  /* The other thread's share lock was not released by it. */
  CHECK_EQ(hs_buf_trylock(f->pool, b, HS_LOCK_EXCLUSIVE), HS_ERR_BUSY); /* busy, not refused */
  other_stop(&o);
  CHECK_OK(hs_buf_lock(f->pool, b, HS_LOCK_EXCLUSIVE)); /* the word is intact: no hang */
  CHECK_OK(hs_buf_unlock(f->pool, b));
  CHECK_OK(hs_buf_release(f->pool, b));
  CHECK_EQ(misuse_count(f->pool), 1);
}

static void case_lock_unpinned(fixture *f) {
  hs_buf b = must_read(f->pool, REL, 3, NULL);
  CHECK_OK(hs_buf_release(f->pool, b));
  refused(hs_buf_lock(f->pool, b, HS_LOCK_SHARE), "not pinned");
  CHECK_EQ(hs_buf_trylock(f->pool, b, HS_LOCK_SHARE), HS_ERR_MISUSE); /* refused, not busy */
  CHECK_EQ(misuse_count(f->pool), 2);
}

static void case_lock_twice(fixture *f) {
  hs_buf b = must_read(f->pool, REL, 4, NULL);
  CHECK_OK(hs_buf_lock(f->pool, b, HS_LOCK_SHARE));
  refused(hs_buf_lock(f->pool, b, HS_LOCK_SHARE), "holds its content lock already");
  CHECK_OK(hs_buf_unlock(f->pool, b));
  CHECK_OK(hs_buf_lock(f->pool, b, HS_LOCK_EXCLUSIVE));
  CHECK_OK(hs_buf_unlock(f->pool, b));
  CHECK_OK(hs_buf_release(f->pool, b));
}

static void case_mark_dirty_unlocked(fixture *f) {
  hs_buf b = must_read(f->pool, REL, 5, NULL);
  refused(hs_buf_mark_dirty(f->pool, b, 1, NULL), "exclusive");
  CHECK_OK(hs_buf_lock(f->pool, b, HS_LOCK_SHARE));
  refused(hs_buf_mark_dirty(f->pool, b, 1, NULL), "exclusive");
  CHECK_OK(hs_buf_unlock(f->pool, b));
  hs_buffer_info info;
  CHECK(find_buffer(f->pool, REL, 5, &info) >= 0 && !info.dirty);
  CHECK_OK(hs_buf_release(f->pool, b));
}

static void case_release_while_locked(fixture *f) {
  hs_buf b = must_read(f->pool, REL, 6, NULL);
  CHECK_OK(hs_buf_lock(f->pool, b, HS_LOCK_EXCLUSIVE));
  refused(hs_buf_release(f->pool, b), "still holds its content lock");
  CHECK_EQ(pins_on(f->pool, 6), 1);
  CHECK_OK(hs_buf_unlock(f->pool, b));
  CHECK_OK(hs_buf_release(f->pool, b));
}

static void case_pin_again_unpinned(fixture *f) {
  hs_buf b = must_read(f->pool, REL, 7, NULL);
  CHECK_OK(hs_buf_release(f->pool, b));
  refused(hs_buf_pin_again(f->pool, b), "not pinned");
  CHECK_EQ(pins_on(f->pool, 7), 0);
}

static void case_flush_unpinned(fixture *f) {
  hs_buf b = must_read(f->pool, REL, 0, NULL);
  CHECK_OK(hs_buf_release(f->pool, b));
  refused(hs_pool_flush_buffer(f->pool, b), "not pinned");
}

/* Release builds do not check hs_buf_page (hotset/pool.h): the page comes
 * back; debug builds stop. */
static void case_page_unpinned(fixture *f) {
  hs_buf b = must_read(f->pool, REL, 0, NULL);
  CHECK_OK(hs_buf_release(f->pool, b));
  CHECK(hs_buf_page(f->pool, b) != NULL);
}

static void case_policy_evict_not_resident(fixture *f) {
  (void)f;
  hs_policy *p;
  REQUIRE(hs_policy_create("lru", 4, 4, NULL, &p) == HS_OK);
  CHECK_ST(hs_policy_evict(p, 2), HS_ERR_MISUSE);
  CHECK_CONTAINS(hs_last_error(), "not resident");
  CHECK_ST(hs_policy_remove(p, 9), HS_ERR_MISUSE);
  CHECK_EQ(hs_policy_resident(p), 0);
  hs_policy_destroy(p);
}

/* Logging a change to a buffer needs its exclusive content lock, as
 * marking it dirty does; nothing reaches the log when refused. */
static void case_log_change_unlocked(fixture *f) {
  char wal_dir[300], data_dir[300];
  snprintf(wal_dir, sizeof wal_dir, "%s/wal", f->dir);
  snprintf(data_dir, sizeof data_dir, "%s/logged", f->dir);
  hs_wal_options wo;
  hs_wal_options_init(&wo);
  wo.dir = wal_dir;
  hs_wal *wal;
  REQUIRE(hs_wal_open(&wo, &wal) == HS_OK);
  hs_pool_options po;
  hs_pool_options_init(&po);
  po.dir = data_dir;
  po.pool_pages = 8;
  po.wal = wal;
  /* make_relation writes its pages straight to the file, without hotset's
   * page header: off, not the default a log brings. */
  po.checksums = HS_CHECKSUMS_OFF;
  hs_pool *pool;
  REQUIRE(hs_pool_open(&po, &pool) == HS_OK);
  make_relation(pool, REL, 1);
  hs_buf b = must_read(pool, REL, 0, NULL);
  hs_lsn before = hs_wal_insert_lsn(wal);
  hs_wal_range r = {64, 8};
  CHECK_OK(hs_buf_lock(pool, b, HS_LOCK_SHARE));
  refused(hs_buf_log_change(pool, b, &r, 1, NULL), "hs_buf_log_change");
  CHECK_EQ(hs_wal_insert_lsn(wal), before);
  CHECK_OK(hs_buf_unlock(pool, b));
  CHECK_OK(hs_buf_release(pool, b));
  CHECK_OK(hs_pool_close(pool));
  CHECK_OK(hs_wal_close(wal));
}

typedef struct misuse_case {
  const char *name;
  void (*run)(fixture *f);
  const char *debug_says; /* in the debug build's one line */
} misuse_case;

static const misuse_case cases[] = {
    {"double release", case_double_release, "hs_buf_release: buffer"},
    {"stray unlock", case_stray_unlock, "hs_buf_unlock: buffer"},
    {"lock of an unpinned buffer", case_lock_unpinned, "hs_buf_lock: buffer"},
    {"lock held twice", case_lock_twice, "holds its content lock already"},
    {"mark dirty without the exclusive lock", case_mark_dirty_unlocked, "hs_buf_mark_dirty"},
    {"last pin released while locked", case_release_while_locked, "still holds its content lock"},
    {"pin again of an unpinned buffer", case_pin_again_unpinned, "hs_buf_pin_again"},
    {"flush of an unpinned buffer", case_flush_unpinned, "hs_pool_flush_buffer"},
    {"page of an unpinned buffer", case_page_unpinned, "hs_buf_page: buffer"},
    {"policy evict of a slot not resident", case_policy_evict_not_resident, "not resident"},
    {"log a change without the exclusive lock", case_log_change_unlocked, "hs_buf_log_change"},
};

/* Runs one case in a child; its stderr comes back through a pipe. */
static void run_case(const misuse_case *c) {
  int pipefd[2];
  REQUIRE(pipe(pipefd) == 0);
  fflush(NULL);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(pipefd[0]);
    dup2(pipefd[1], 2);
    fixture f;
    fixture_open(&f);
    c->run(&f);
    int failed = check_finish();
    hs_pool_abandon(f.pool);
    testdir_remove(f.dir);
    _exit(failed ? 1 : 0);
  }
  close(pipefd[1]);
  char err[4096] = "";
  size_t got = 0;
  ssize_t n;
  while (got < sizeof err - 1 && (n = read(pipefd[0], err + got, sizeof err - 1 - got)) > 0)
    got += (size_t)n;
  err[got] = '\0';
  close(pipefd[0]);
  int status;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  if (HS_DEBUG_CHECKS) {
    bool aborted = WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
    if (!aborted || !strstr(err, "broken rule") || !strstr(err, c->debug_says))
      fprintf(stderr, "%s: want a stop naming \"%s\"; status %d, stderr:\n%s\n", c->name,
              c->debug_says, status, err);
    CHECK(aborted);
    CHECK_CONTAINS(err, "broken rule");
    CHECK_CONTAINS(err, c->debug_says);
  } else {
    bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (!ok) fprintf(stderr, "%s: the child failed (status %d):\n%s\n", c->name, status, err);
    CHECK(ok);
  }
}

/* Closing with a buffer pinned names the buffer and the pinning thread. */
static void test_close_names_the_pinner(void) {
  fixture f;
  fixture_open(&f);
  hs_buf b = must_read(f.pool, REL, 2, NULL);
  char want[64];
  snprintf(want, sizeof want, "by thread %ld (1 pin)", (long)syscall(SYS_gettid));
  CHECK_ST(hs_pool_close(f.pool), HS_ERR_BUSY);
  CHECK_CONTAINS(hs_last_error(), "block 2 of relation 3");
  CHECK_CONTAINS(hs_last_error(), want);
  CHECK_OK(hs_buf_release(f.pool, b));
  CHECK_OK(hs_pool_close(f.pool));
  testdir_remove(f.dir);
}

/* The line docs/api.md draws: a broken rule is HS_ERR_MISUSE, bad input a
 * correct program may pass is HS_ERR_INVALID. None of these stops a debug
 * build (only the rules a debug build checks where they happen do). */
static void test_misuse_or_invalid(void) {
  fixture f;
  fixture_open(&f);
  hs_pool *pool = f.pool;
  hs_buf b = HS_INVALID_BUF;
  /* Misuse: no handle, a handle that is none, an unknown mode. */
  CHECK_ST(hs_buf_release(pool, 1u << 20), HS_ERR_MISUSE);
  CHECK_ST(hs_buf_lock(pool, -5, HS_LOCK_SHARE), HS_ERR_MISUSE);
  CHECK_ST(hs_buf_trylock(pool, 1u << 20, HS_LOCK_SHARE), HS_ERR_MISUSE);
  CHECK_ST(hs_pool_read(pool, REL, HS_FORK_MAIN, 0, (hs_read_mode)1, NULL, &b, NULL),
           HS_ERR_MISUSE); /* 0.1's HS_READ_NEW */
  CHECK_ST(hs_pool_read(pool, REL, HS_FORK_MAIN, 0, HS_READ_NORMAL, NULL, NULL, NULL),
           HS_ERR_MISUSE);
  CHECK_ST(hs_pool_flush_all(NULL), HS_ERR_MISUSE);
  hs_pool_stats ps;
  CHECK_ST(hs_pool_stats_get(NULL, &ps), HS_ERR_MISUSE);
  CHECK_ST(hs_pool_stats_get(pool, NULL), HS_ERR_MISUSE);
  hs_pool_checkpoint_stats cs;
  CHECK_ST(hs_pool_checkpoint_stats_get(NULL, &cs), HS_ERR_MISUSE);
  hs_strategy_stats ss;
  CHECK_ST(hs_strategy_stats_get(NULL, &ss), HS_ERR_MISUSE);
  CHECK_ST(hs_strategy_create(pool, HS_STRATEGY_KIND_COUNT, NULL, &(hs_strategy *){NULL}),
           HS_ERR_MISUSE);
  CHECK_ST(hs_smgr_open("/tmp", NULL, NULL), HS_ERR_MISUSE);
  bool exists;
  CHECK_ST(hs_smgr_exists(hs_pool_smgr(pool), REL, HS_FORK_COUNT, &exists), HS_ERR_MISUSE);
  CHECK_ST(hs_smgr_create(hs_pool_smgr(pool), REL, HS_FORK_COUNT), HS_ERR_MISUSE);
  CHECK_ST(hs_pool_flush_buffer(pool, 1u << 20), HS_ERR_MISUSE);
  hs_policy *p = NULL;
  CHECK_OK(hs_policy_create("lru", 4, 4, NULL, &p));
  hs_access a = {.key = 1, .size = 1};
  CHECK_OK(hs_policy_insert(p, 0, &a));
  CHECK_ST(hs_policy_insert(p, 0, &a), HS_ERR_MISUSE); /* the slot is held */
  CHECK_ST(hs_policy_insert(p, 9, &a), HS_ERR_MISUSE); /* no such slot */
  /* Bad input: a value a correct program may pass, turned down. */
  a.size = 99;
  CHECK_ST(hs_policy_insert(p, 1, &a), HS_ERR_INVALID); /* larger than the cache */
  hs_policy_destroy(p);
  CHECK_ST(hs_policy_create("no-such-policy", 4, 4, NULL, &p), HS_ERR_INVALID);
  hs_strategy_options so;
  CHECK_ST(hs_strategy_options_parse("fixed:3XB", &so), HS_ERR_INVALID); /* no such unit */
  hs_pool_options po;
  hs_pool_options_init(&po);
  po.dir = f.dir;
  po.page_size = 3000;
  hs_pool *other = NULL;
  CHECK_ST(hs_pool_open(&po, &other), HS_ERR_INVALID);
  CHECK_OK(hs_pool_stats_get(pool, &ps));
  char tiny[8];
  CHECK_ST(hs_pool_stats_format(&ps, true, tiny, sizeof tiny), HS_ERR_INVALID);
  /* Busy is neither: another thread holds the lock. */
  other_thread o;
  other_start(&o, pool, 4, true);
  b = must_read(pool, REL, 4, NULL);
  CHECK_ST(hs_buf_trylock(pool, b, HS_LOCK_EXCLUSIVE), HS_ERR_BUSY);
  other_stop(&o);
  CHECK_OK(hs_buf_trylock(pool, b, HS_LOCK_EXCLUSIVE));
  CHECK_OK(hs_buf_unlock(pool, b));
  CHECK_OK(hs_buf_release(pool, b));
  CHECK_OK(hs_pool_close(pool));
  testdir_remove(f.dir);
}

/* A snapshot released twice, and a frame unpinned twice, are misuse too
 * (the second one stops a debug build, so it runs in release builds only). */
static void test_double_release_of_snapshot_and_frame(void) {
  char dir[256], wal_dir[300], data_dir[300];
  testdir_make(dir, sizeof dir, "misuse-snapshot");
  snprintf(wal_dir, sizeof wal_dir, "%s/wal", dir);
  snprintf(data_dir, sizeof data_dir, "%s/data", dir);
  hs_wal_options wo;
  hs_wal_options_init(&wo);
  wo.dir = wal_dir;
  hs_wal *wal;
  REQUIRE(hs_wal_open(&wo, &wal) == HS_OK);
  hs_pool_options po;
  hs_pool_options_init(&po);
  po.dir = data_dir;
  po.pool_pages = 16;
  po.wal = wal;
  hs_pool *pool;
  REQUIRE(hs_pool_open(&po, &pool) == HS_OK);
  hs_xact_mgr *x;
  REQUIRE(hs_xact_open(pool, &x) == HS_OK);
  static hs_snapshot snap;
  CHECK_OK(hs_xact_take_snapshot(x, &snap));
  CHECK_OK(hs_xact_release_snapshot(x, &snap));
  CHECK_ST(hs_xact_release_snapshot(x, &snap), HS_ERR_MISUSE);
  CHECK_CONTAINS(hs_last_error(), "released twice");
  hs_xact_close(x);
  CHECK_OK(hs_pool_close(pool));
  CHECK_OK(hs_wal_close(wal));
  testdir_remove(dir);

  if (HS_DEBUG_CHECKS) return;
  hs_frame_cache *c;
  REQUIRE(hs_frame_cache_create(NULL, &c) == HS_OK);
  hs_frame *fr = NULL;
  CHECK_OK(hs_frame_cache_fetch(c, 7, HS_FETCH_CREATE, &fr, NULL));
  REQUIRE(fr);
  CHECK_OK(hs_frame_cache_unpin(c, fr, false));
  CHECK_ST(hs_frame_cache_unpin(c, fr, false), HS_ERR_MISUSE);
  hs_frame_cache_destroy(c);
}

/* Refused as misuse, with the call and the argument named. */
static void null_refused(hs_status st, const char *call, const char *arg) {
  CHECK_EQ(st, HS_ERR_MISUSE);
  CHECK_CONTAINS(hs_last_error(), call);
  CHECK_CONTAINS(hs_last_error(), arg);
}

/* Every call of hotset/heap.h and hotset/vacuum.h that takes an object (or
 * a required out-pointer) refuses NULL as misuse instead of crashing; the
 * void ones do nothing, and the getters say 0. */
static void test_null_heap_and_vacuum(void) {
  char dir[256], wal_dir[300], data_dir[300];
  testdir_make(dir, sizeof dir, "misuse-null");
  snprintf(wal_dir, sizeof wal_dir, "%s/wal", dir);
  snprintf(data_dir, sizeof data_dir, "%s/data", dir);
  hs_wal_options wo;
  hs_wal_options_init(&wo);
  wo.dir = wal_dir;
  hs_wal *wal;
  REQUIRE(hs_wal_open(&wo, &wal) == HS_OK);
  null_refused(hs_heap_register_redo(NULL), "hs_heap_register_redo", "the log is NULL");
  CHECK_OK(hs_heap_register_redo(wal));
  hs_pool_options po;
  hs_pool_options_init(&po);
  po.dir = data_dir;
  po.pool_pages = 16;
  po.wal = wal;
  hs_pool *pool;
  REQUIRE(hs_pool_open(&po, &pool) == HS_OK);

  /* Opens: a NULL pool or manager is misuse, *out set to NULL. */
  hs_xact_mgr *x = (hs_xact_mgr *)&x;
  null_refused(hs_xact_open(NULL, &x), "hs_xact_open", "the pool is NULL");
  CHECK(x == NULL);
  null_refused(hs_xact_open(pool, NULL), "hs_xact_open", "out is NULL");
  REQUIRE(hs_xact_open(pool, &x) == HS_OK);
  hs_heap *h = (hs_heap *)&h;
  null_refused(hs_heap_open(NULL, x, 20, &h), "hs_heap_open", "the pool is NULL");
  CHECK(h == NULL);
  null_refused(hs_heap_open(pool, NULL, 20, &h), "hs_heap_open", "the transaction manager");
  null_refused(hs_heap_open(pool, x, 20, NULL), "hs_heap_open", "out is NULL");
  REQUIRE(hs_heap_open(pool, x, 20, &h) == HS_OK);
  hs_pk_index *ix = (hs_pk_index *)&ix;
  null_refused(hs_pk_index_open(NULL, 21, &ix), "hs_pk_index_open", "the pool is NULL");
  CHECK(ix == NULL);
  null_refused(hs_pk_index_open(pool, 21, NULL), "hs_pk_index_open", "out is NULL");
  REQUIRE(hs_pk_index_open(pool, 21, &ix) == HS_OK);

  /* Transactions. */
  hs_xid xid = 0;
  null_refused(hs_xact_begin(NULL, &xid), "hs_xact_begin", "the manager is NULL");
  null_refused(hs_xact_begin(x, NULL), "hs_xact_begin", "xid is NULL");
  REQUIRE(hs_xact_begin(x, &xid) == HS_OK);
  null_refused(hs_xact_commit(NULL, xid), "hs_xact_commit", "the manager is NULL");
  null_refused(hs_xact_abort(NULL, xid), "hs_xact_abort", "the manager is NULL");
  hs_xact_status xs;
  null_refused(hs_xact_status_of(NULL, xid, &xs), "hs_xact_status_of", "the manager is NULL");
  null_refused(hs_xact_status_of(x, xid, NULL), "hs_xact_status_of", "out is NULL");
  static hs_snapshot snap;
  null_refused(hs_xact_take_snapshot(NULL, &snap), "hs_xact_take_snapshot", "the manager");
  null_refused(hs_xact_take_snapshot(x, NULL), "hs_xact_take_snapshot", "the snapshot is NULL");
  null_refused(hs_xact_release_snapshot(NULL, &snap), "hs_xact_release_snapshot", "the manager");
  null_refused(hs_xact_release_snapshot(x, NULL), "hs_xact_release_snapshot", "the snapshot");
  REQUIRE(hs_xact_take_snapshot(x, &snap) == HS_OK);
  bool vis = true;
  null_refused(hs_xact_visible(NULL, &snap, xid, &vis), "hs_xact_visible", "the manager is NULL");
  null_refused(hs_xact_visible(x, NULL, xid, &vis), "hs_xact_visible", "the snapshot is NULL");
  null_refused(hs_xact_visible(x, &snap, xid, NULL), "hs_xact_visible", "visible is NULL");
  CHECK_EQ(hs_xact_horizon(NULL), HS_XACT_INVALID);
  CHECK_EQ(hs_xact_next(NULL), HS_XACT_INVALID);

  /* The heap. */
  uint64_t row[2] = {1, 42};
  hs_tid tid = {0, 0};
  null_refused(hs_heap_insert(NULL, xid, row, sizeof row, &tid), "hs_heap_insert", "the heap");
  null_refused(hs_heap_insert(h, xid, row, sizeof row, NULL), "hs_heap_insert", "tid is NULL");
  REQUIRE(hs_heap_insert(h, xid, row, sizeof row, &tid) == HS_OK);
  char buf[64];
  uint32_t len = 0;
  null_refused(hs_heap_fetch(NULL, tid, &snap, xid, buf, sizeof buf, &len, &vis), "hs_heap_fetch",
               "the heap is NULL");
  null_refused(hs_heap_fetch(h, tid, NULL, xid, buf, sizeof buf, &len, &vis), "hs_heap_fetch",
               "the snapshot is NULL");
  null_refused(hs_heap_fetch(h, tid, &snap, xid, NULL, sizeof buf, &len, &vis), "hs_heap_fetch",
               "out is NULL");
  null_refused(hs_heap_fetch(h, tid, &snap, xid, buf, sizeof buf, NULL, &vis), "hs_heap_fetch",
               "len is NULL");
  null_refused(hs_heap_fetch(h, tid, &snap, xid, buf, sizeof buf, &len, NULL), "hs_heap_fetch",
               "visible is NULL");
  CHECK_OK(hs_heap_fetch(h, tid, &snap, xid, NULL, 0, &len, &vis)); /* no room asked: fine */
  CHECK(vis);
  CHECK_EQ(len, sizeof row);
  hs_tid new_tid;
  null_refused(hs_heap_update(NULL, xid, tid, row, sizeof row, &new_tid), "hs_heap_update",
               "the heap is NULL");
  null_refused(hs_heap_update(h, xid, tid, row, sizeof row, NULL), "hs_heap_update",
               "new_tid is NULL");
  null_refused(hs_heap_delete(NULL, xid, tid), "hs_heap_delete", "the heap is NULL");
  hs_heap_tuple_info ti;
  null_refused(hs_heap_tuple_info_get(NULL, tid, &ti), "hs_heap_tuple_info_get", "the heap");
  null_refused(hs_heap_tuple_info_get(h, tid, NULL), "hs_heap_tuple_info_get", "out is NULL");
  CHECK_EQ(hs_heap_max_data(NULL), 0);

  /* The index. */
  null_refused(hs_pk_index_insert(NULL, 1, tid), "hs_pk_index_insert", "the index is NULL");
  REQUIRE(hs_pk_index_insert(ix, 1, tid) == HS_OK);
  bool found = true;
  hs_tid got;
  null_refused(hs_pk_index_get(NULL, 1, &got, &found), "hs_pk_index_get", "the index is NULL");
  null_refused(hs_pk_index_get(ix, 1, NULL, &found), "hs_pk_index_get", "tid is NULL");
  null_refused(hs_pk_index_get(ix, 1, &got, NULL), "hs_pk_index_get", "found is NULL");
  null_refused(hs_pk_index_move(NULL, 1, tid, tid), "hs_pk_index_move", "the index is NULL");
  null_refused(hs_pk_index_lookup(NULL, h, 1, &snap, xid, &got, buf, sizeof buf, &len, &found),
               "hs_pk_index_lookup", "the index is NULL");
  null_refused(hs_pk_index_lookup(ix, NULL, 1, &snap, xid, &got, buf, sizeof buf, &len, &found),
               "hs_pk_index_lookup", "the heap is NULL");
  null_refused(hs_pk_index_lookup(ix, h, 1, NULL, xid, &got, buf, sizeof buf, &len, &found),
               "hs_pk_index_lookup", "the snapshot is NULL");
  null_refused(hs_pk_index_lookup(ix, h, 1, &snap, xid, NULL, buf, sizeof buf, &len, &found),
               "hs_pk_index_lookup", "tid is NULL");
  null_refused(hs_pk_index_lookup(ix, h, 1, &snap, xid, &got, NULL, sizeof buf, &len, &found),
               "hs_pk_index_lookup", "out is NULL");
  null_refused(hs_pk_index_lookup(ix, h, 1, &snap, xid, &got, buf, sizeof buf, NULL, &found),
               "hs_pk_index_lookup", "len is NULL");
  null_refused(hs_pk_index_lookup(ix, h, 1, &snap, xid, &got, buf, sizeof buf, &len, NULL),
               "hs_pk_index_lookup", "found is NULL");
  CHECK_OK(hs_pk_index_lookup(ix, h, 1, &snap, xid, &got, buf, sizeof buf, &len, &found));
  CHECK(found);
  CHECK_OK(hs_pk_index_lookup(ix, h, 1, &snap, xid, &got, NULL, 0, &len, &found)); /* no room */
  CHECK(found);
  null_refused(hs_pk_index_rebuild(NULL, h, NULL, NULL), "hs_pk_index_rebuild", "the index");
  null_refused(hs_pk_index_rebuild(ix, NULL, NULL, NULL), "hs_pk_index_rebuild", "the heap");

  /* Vacuum and its throttle. */
  hs_vacuum_stats vs;
  null_refused(hs_vacuum(NULL, ix, NULL, &vs), "hs_vacuum", "the heap is NULL");
  null_refused(hs_vacuum(h, ix, NULL, NULL), "hs_vacuum", "out is NULL");
  null_refused(hs_throttle_create(NULL, NULL), "hs_throttle_create", "out is NULL");
  hs_throttle_options_init(NULL);
  hs_vacuum_options_init(NULL);
  hs_throttle_observe(NULL, 1000);
  hs_throttle_destroy(NULL);

  CHECK_OK(hs_xact_release_snapshot(x, &snap));
  CHECK_OK(hs_xact_commit(x, xid));
  CHECK_OK(hs_vacuum(h, ix, NULL, &vs));
  hs_pk_index_close(ix);
  hs_heap_close(h);
  hs_xact_close(x);
  CHECK_OK(hs_pool_close(pool));
  CHECK_OK(hs_wal_close(wal));
  testdir_remove(dir);
}

static hs_blockno no_blocks(void *ctx) {
  (void)ctx;
  return HS_INVALID_BLOCK;
}

/* A failed open or create leaves *out NULL, the misuse paths too; the
 * messages name the argument at fault and its value. */
static void test_failed_open_clears_out(void) {
  fixture f;
  fixture_open(&f);
  hs_pool *pool = f.pool;
  hs_pool *p = (hs_pool *)&p;
  null_refused(hs_pool_open(NULL, &p), "hs_pool_open", "the options are NULL");
  CHECK(p == NULL);
  null_refused(hs_pool_open(NULL, NULL), "hs_pool_open", "out is NULL");
  hs_wal *w = (hs_wal *)&w;
  null_refused(hs_wal_open(NULL, &w), "hs_wal_open", "the options are NULL");
  CHECK(w == NULL);
  null_refused(hs_wal_open(NULL, NULL), "hs_wal_open", "out is NULL");
  hs_strategy *s = (hs_strategy *)&s;
  null_refused(hs_strategy_create(NULL, HS_STRATEGY_BULKREAD, NULL, &s), "hs_strategy_create",
               "the pool is NULL");
  CHECK(s == NULL);
  s = (hs_strategy *)&s;
  null_refused(hs_strategy_create(pool, HS_STRATEGY_KIND_COUNT, NULL, &s), "hs_strategy_create",
               "kind 3");
  CHECK(s == NULL);
  null_refused(hs_strategy_create(pool, HS_STRATEGY_BULKREAD, NULL, NULL), "hs_strategy_create",
               "out is NULL");
  hs_policy *pol = (hs_policy *)&pol;
  null_refused(hs_policy_create(NULL, 4, 4, NULL, &pol), "hs_policy_create", "spec is NULL");
  CHECK(pol == NULL);
  hs_read_stream *rs = (hs_read_stream *)&rs;
  null_refused(hs_read_stream_open(NULL, REL, HS_FORK_MAIN, NULL, no_blocks, NULL, 0, &rs),
               "hs_read_stream_open", "the pool is NULL");
  CHECK(rs == NULL);
  rs = (hs_read_stream *)&rs;
  null_refused(hs_read_stream_open(pool, REL, HS_FORK_MAIN, NULL, NULL, NULL, 0, &rs),
               "hs_read_stream_open", "next_block is NULL");
  CHECK(rs == NULL);
  rs = (hs_read_stream *)&rs;
  null_refused(hs_read_stream_open(pool, REL, (hs_fork)9, NULL, no_blocks, NULL, 0, &rs),
               "hs_read_stream_open", "fork 9");
  CHECK(rs == NULL);
  null_refused(hs_wal_reader_open(f.dir, 1u << 20, 0, NULL), "hs_wal_reader_open", "out is NULL");
  hs_wal_reader *r = (hs_wal_reader *)&r;
  CHECK_ST(hs_wal_reader_open(NULL, 1u << 20, 0, &r), HS_ERR_INVALID);
  CHECK(r == NULL);
  /* The pool's own calls name the argument and its value. */
  hs_buf b;
  null_refused(hs_pool_read(NULL, REL, HS_FORK_MAIN, 0, HS_READ_NORMAL, NULL, &b, NULL),
               "hs_pool_read", "the pool is NULL");
  null_refused(hs_pool_read(pool, REL, HS_FORK_MAIN, 0, HS_READ_NORMAL, NULL, NULL, NULL),
               "hs_pool_read", "out is NULL");
  null_refused(hs_pool_read(pool, REL, (hs_fork)7, 0, HS_READ_NORMAL, NULL, &b, NULL),
               "hs_pool_read", "fork 7");
  null_refused(hs_pool_read(pool, REL, HS_FORK_MAIN, 0, (hs_read_mode)9, NULL, &b, NULL),
               "hs_pool_read", "mode 9");
  null_refused(hs_pool_extend(NULL, REL, HS_FORK_MAIN, NULL, false, &b, NULL), "hs_pool_extend",
               "the pool is NULL");
  null_refused(hs_pool_extend(pool, REL, HS_FORK_MAIN, NULL, false, NULL, NULL), "hs_pool_extend",
               "out is NULL");
  null_refused(hs_pool_extend(pool, REL, (hs_fork)8, NULL, false, &b, NULL), "hs_pool_extend",
               "fork 8");
  bool exists;
  null_refused(hs_smgr_exists(hs_pool_smgr(pool), REL, (hs_fork)6, &exists), "hs_smgr_exists",
               "fork 6");
  CHECK_OK(hs_pool_close(pool));
  testdir_remove(f.dir);
}

/* An unknown policy is answered with the policies the pool runs, from the
 * registry: never the simulator's own (belady, fixedset). */
static void test_unknown_policy_lists_the_pools(void) {
  char dir[256];
  testdir_make(dir, sizeof dir, "misuse-policy");
  hs_pool_options po;
  hs_pool_options_init(&po);
  po.dir = dir;
  po.pool_pages = 16;
  po.policy = "no-such-policy:k=2";
  hs_pool *p = (hs_pool *)&p;
  CHECK_ST(hs_pool_open(&po, &p), HS_ERR_INVALID);
  CHECK(p == NULL);
  const char *e = hs_last_error();
  CHECK_CONTAINS(e, "\"no-such-policy\"");
  CHECK_CONTAINS(e, "clock-sweep");
  CHECK_CONTAINS(e, "lru");
  CHECK(!strstr(e, "belady"));
  CHECK(!strstr(e, "fixedset"));
  po.policy = "Belady";
  CHECK_ST(hs_pool_open(&po, &p), HS_ERR_INVALID);
  CHECK(p == NULL);
  e = hs_last_error();
  CHECK_CONTAINS(e, "runs only in the simulator");
  CHECK_CONTAINS(e, "clock-sweep");
  CHECK(!strstr(e, "fixedset"));
  po.policy = "LRU";
  CHECK_OK(hs_pool_open(&po, &p));
  CHECK_OK(hs_pool_close(p));
  testdir_remove(dir);
}

int main(void) {
  printf("debug checks: %s\n",
         HS_DEBUG_CHECKS ? "on (misuse stops the program)" : "off (misuse is refused and counted)");
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) run_case(&cases[i]);
  test_close_names_the_pinner();
  test_misuse_or_invalid();
  test_double_release_of_snapshot_and_frame();
  test_null_heap_and_vacuum();
  test_failed_open_clears_out();
  test_unknown_policy_lists_the_pools();
  return check_finish();
}
