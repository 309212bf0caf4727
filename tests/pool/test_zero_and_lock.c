/*
 * test_zero_and_lock — a page zeroed for its caller (HS_READ_ZERO_LOCKED,
 * hs_pool_extend with the lock) is seen by no other thread before the caller
 * unlocks it.
 *
 * The window: the zeroed page becomes valid, and the call has not returned
 * yet. The pool's zeroed_hook runs exactly there, on the zeroing thread; the
 * hook lets a second thread read the block and try its share lock, and waits
 * for the answer. With the lock taken before the page became valid the try
 * must fail, and the second thread's blocking lock must then return the
 * page as the caller filled it. The same steps with plain HS_READ_ZERO show
 * the window the locked mode closes (the try succeeds on a zeroed page), so
 * the check is known to be able to fail.
 *
 * Then a racing reader: one thread zero-locks blocks one after the other
 * and stamps each, another reads each block as soon as it is announced; the
 * reader must find the old page or the stamped one, never zeros.
 */
#include "core/seams.h"
#include "pool/pool_internal.h"
#include "pool_util.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

static const hs_relid REL = 31000;

/* ---- the window, step by step --------------------------------------------- */

typedef struct window {
  hs_pool *pool;
  hs_relid rel;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  hs_blockno block; /* set by the hook: the block now valid */
  bool go;          /* the hook ran: the reader may read */
  bool answered;    /* the reader tried the lock */
  bool got_early;   /* ... and got it while the zeroing call had not returned */
  bool read_ok;
  uint64_t seen; /* the stamp the reader found once it had the lock */
} window;

static void zeroed_hook(hs_pool *pool, hs_buf b, void *ctx) {
  window *w = ctx;
  (void)pool;
  pthread_mutex_lock(&w->mu);
  if (w->go) { /* only the first zeroing of a run */
    pthread_mutex_unlock(&w->mu);
    return;
  }
  w->block = hs_buf_block(w->pool, b);
  w->go = true;
  pthread_cond_broadcast(&w->cv);
  while (!w->answered) pthread_cond_wait(&w->cv, &w->mu);
  pthread_mutex_unlock(&w->mu);
}

static void *window_reader(void *arg) {
  window *w = arg;
  pthread_mutex_lock(&w->mu);
  while (!w->go) pthread_cond_wait(&w->cv, &w->mu);
  hs_blockno block = w->block;
  pthread_mutex_unlock(&w->mu);

  hs_buf b = HS_INVALID_BUF;
  bool ok =
      hs_pool_read(w->pool, w->rel, HS_FORK_MAIN, block, HS_READ_NORMAL, NULL, &b, NULL) == HS_OK;
  bool early = ok && hs_buf_trylock(w->pool, b, HS_LOCK_SHARE) == HS_OK;
  uint64_t seen = UINT64_MAX;
  if (early) seen = stamp_value(hs_buf_page(w->pool, b), w->rel, block);
  pthread_mutex_lock(&w->mu);
  w->read_ok = ok;
  w->got_early = early;
  w->answered = true;
  pthread_cond_broadcast(&w->cv);
  pthread_mutex_unlock(&w->mu);
  if (!ok) return NULL;
  /* Not early: wait for the zeroing caller's unlock, then look. */
  bool locked = early || hs_buf_lock(w->pool, b, HS_LOCK_SHARE) == HS_OK;
  if (locked && !early) seen = stamp_value(hs_buf_page(w->pool, b), w->rel, block);
  if (locked) hs_buf_unlock(w->pool, b);
  hs_buf_release(w->pool, b);
  w->seen = seen;
  return NULL;
}

typedef enum zeroing { ZERO, ZERO_LOCKED, EXTEND_LOCKED } zeroing;

/* Zeroes block 0 of a fresh relation (or adds it) the way `how` says, with
 * a reader let loose in the window; returns what the reader saw. */
static window run_window(const char *dir, zeroing how, hs_relid rel) {
  hs_pool *pool = open_pool(dir, 8, 4096, NULL, NULL);
  make_relation(pool, rel, how == EXTEND_LOCKED ? 0 : 1);
  window w = {.pool = pool, .rel = rel};
  pthread_mutex_init(&w.mu, NULL);
  pthread_cond_init(&w.cv, NULL);
  seams.pool_zeroed_ctx = &w;
  seams.pool_zeroed = zeroed_hook;
  pthread_t t;
  REQUIRE(pthread_create(&t, NULL, window_reader, &w) == 0);

  hs_buf b = HS_INVALID_BUF;
  hs_blockno block = 0;
  hs_status st;
  if (how == EXTEND_LOCKED)
    st = hs_pool_extend(pool, rel, HS_FORK_MAIN, NULL, true, &b, &block);
  else
    st = hs_pool_read(pool, rel, HS_FORK_MAIN, 0, how == ZERO ? HS_READ_ZERO : HS_READ_ZERO_LOCKED,
                      NULL, &b, NULL);
  CHECK_OK(st);
  CHECK_EQ(block, 0);
  if (st == HS_OK) {
    /* The caller fills the page; only the locked modes hold the lock. */
    if (how == ZERO) CHECK_OK(hs_buf_lock(pool, b, HS_LOCK_EXCLUSIVE));
    stamp_page(hs_buf_page(pool, b), rel, 0, 77);
    CHECK_OK(hs_buf_mark_dirty(pool, b, 0, NULL));
    CHECK_OK(hs_buf_unlock(pool, b));
    CHECK_OK(hs_buf_release(pool, b));
  }
  pthread_join(t, NULL);
  seams.pool_zeroed = NULL;
  CHECK_OK(hs_pool_close(pool));
  pthread_mutex_destroy(&w.mu);
  pthread_cond_destroy(&w.cv);
  return w;
}

static void test_window(const char *dir) {
  /* Plain HS_READ_ZERO: another thread locks the zeroed page first. */
  window w = run_window(dir, ZERO, REL);
  CHECK(w.read_ok);
  CHECK(w.got_early);
  CHECK_EQ(w.seen, UINT64_MAX); /* zeros: not (rel, block) */

  /* The locked modes: the reader waits, then sees the filled page. */
  for (int i = 0; i < 2; i++) {
    w = run_window(dir, i == 0 ? ZERO_LOCKED : EXTEND_LOCKED, REL + 1 + (hs_relid)i);
    CHECK(w.read_ok);
    CHECK(!w.got_early);
    CHECK_EQ(w.seen, 77);
  }
}

/* ---- a racing reader -------------------------------------------------------- */

#define RACE_BLOCKS 200

typedef struct race {
  hs_pool *pool;
  hs_relid rel;
  _Atomic uint32_t announced; /* blocks the zeroer has started on */
  _Atomic uint32_t bad;       /* zeroed pages the reader saw */
  _Atomic uint32_t errors;
} race;

static void *race_reader(void *arg) {
  race *r = arg;
  for (hs_blockno k = 0; k < RACE_BLOCKS; k++) {
    while (atomic_load(&r->announced) <= k) sched_yield();
    hs_buf b;
    if (hs_pool_read(r->pool, r->rel, HS_FORK_MAIN, k, HS_READ_NORMAL, NULL, &b, NULL) != HS_OK) {
      atomic_fetch_add(&r->errors, 1);
      continue;
    }
    if (hs_buf_lock(r->pool, b, HS_LOCK_SHARE) == HS_OK) {
      uint64_t v = stamp_value(hs_buf_page(r->pool, b), r->rel, k);
      if (v != 0 && v != 1000 + k) atomic_fetch_add(&r->bad, 1); /* neither old nor new */
      hs_buf_unlock(r->pool, b);
    } else {
      atomic_fetch_add(&r->errors, 1);
    }
    hs_buf_release(r->pool, b);
  }
  return NULL;
}

static void test_racing_reader(const char *dir) {
  /* Fewer buffers than blocks: most blocks are not in the pool when they
   * are zeroed, so the zeroing claims a buffer and the reader finds it. */
  hs_pool *pool = open_pool(dir, 16, 4096, NULL, NULL);
  race r = {.pool = pool, .rel = REL + 10};
  make_relation(pool, r.rel, RACE_BLOCKS);
  pthread_t t;
  REQUIRE(pthread_create(&t, NULL, race_reader, &r) == 0);
  unsigned failures = 0;
  for (hs_blockno k = 0; k < RACE_BLOCKS; k++) {
    atomic_store(&r.announced, k + 1);
    hs_buf b;
    if (hs_pool_read(pool, r.rel, HS_FORK_MAIN, k, HS_READ_ZERO_LOCKED, NULL, &b, NULL) != HS_OK) {
      failures++;
      continue;
    }
    stamp_page(hs_buf_page(pool, b), r.rel, k, 1000 + k);
    if (hs_buf_mark_dirty(pool, b, 0, NULL) != HS_OK) failures++;
    hs_buf_unlock(pool, b);
    hs_buf_release(pool, b);
  }
  pthread_join(t, NULL);
  CHECK_EQ(failures, 0);
  CHECK_EQ(atomic_load(&r.errors), 0);
  CHECK_EQ(atomic_load(&r.bad), 0);
  CHECK_OK(hs_pool_close(pool));
}

int main(void) {
  char dir[256];
  testdir_make(dir, sizeof dir, "zero-and-lock");
  test_window(dir);
  test_racing_reader(dir);
  testdir_remove(dir);
  return check_finish();
}
