/*
 * test_reliability — the pool's defects found by trying it as a hostile
 * user would, each with the test that would have caught it:
 *
 *  - a drop of relation B discarding a dirty page of relation A, its buffer
 *    retagged between the drop's unlocked look and its lock (made certain
 *    with a white-box hook in that window);
 *  - HS_ERR_NO_BUFFERS while buffers were free, because a drop had them in
 *    hand;
 *  - one unwritable dirty page making most reads fail under the policies
 *    that do not move a page on a hit (every policy is tried);
 *  - HS_READ_ZERO past the end (a page that could never be written) and
 *    hs_pool_extend (0.1: HS_READ_NEW) extending the file before it knew it had a buffer;
 *  - flushing a buffer whose content lock the caller holds (it hung);
 *  - options out of range (partitions > 2^31 hung);
 *  - the WAL callback's failure quoting an older, unrelated message and
 *    nesting it on every retry.
 * A watchdog alarm turns a hang into a failure.
 */
#include "core/seams.h"
#include "hotset/stream.h"
#include "pool/pool_internal.h"
#include "pool_util.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

static const hs_relid REL_A = 1, REL_B = 2;

static hs_blockno nblocks_of(hs_pool *pool, hs_relid rel) {
  hs_blockno n = 0;
  REQUIRE(hs_smgr_nblocks(hs_pool_smgr(pool), rel, HS_FORK_MAIN, &n) == HS_OK);
  return n;
}

static uint64_t value_on_disk(hs_pool *pool, hs_relid rel, hs_blockno block) {
  _Alignas(4096) unsigned char page[1024];
  REQUIRE(hs_pool_page_size(pool) == sizeof page);
  REQUIRE(hs_smgr_read(hs_pool_smgr(pool), rel, HS_FORK_MAIN, block, page) == HS_OK);
  return stamp_value(page, rel, block);
}

/* ---- 1. drop(B) must not discard A's page -------------------------------- */

typedef struct retag_in_window {
  int calls;
} retag_in_window;

/* Runs inside hs_pool_drop_relation(B), after it saw buffer b holding B's
 * page and before it locked anything: gives the (only) buffer to A's block 0
 * and dirties it, as another thread could at that moment. */
static void give_buffer_to_a(hs_pool *pool, hs_buf b, int phase, void *ctx) {
  retag_in_window *w = ctx;
  if (phase != SEAM_DROP_LOOKED || w->calls++ > 0) return;
  hs_buf a = must_read(pool, REL_A, 0, NULL);
  CHECK_EQ(a, b); /* a one-buffer pool: the same frame */
  must_update(pool, REL_A, 0, 4242, 0);
  hs_buf_release(pool, a);
}

static void test_drop_keeps_other_relations_page(void) {
  char dir[256];
  testdir_make(dir, sizeof dir, "rel-drop");
  hs_pool *pool = open_pool(dir, 1, 1024, NULL, NULL);
  make_relation(pool, REL_A, 1);
  make_relation(pool, REL_B, 1);
  hs_buf_release(pool, must_read(pool, REL_B, 0, NULL));
  retag_in_window w = {0};
  seams.pool_drop = give_buffer_to_a;
  seams.pool_drop_ctx = &w;
  CHECK_OK(hs_pool_drop_relation(pool, REL_B));
  seams.pool_drop = NULL;
  CHECK_EQ(w.calls, 1);
  hs_buffer_info info;
  CHECK(find_buffer(pool, REL_A, 0, &info) >= 0); /* still there, still dirty */
  CHECK(info.dirty);
  CHECK_OK(hs_pool_close(pool));
  pool = open_pool(dir, 4, 1024, NULL, NULL);
  CHECK_EQ(value_on_disk(pool, REL_A, 0), 4242);
  CHECK_OK(hs_pool_close(pool));
  testdir_remove(dir);
}

/* ---- 1 and 2 under threads: counters, evictions, drops, streams ---------- */

#define STRESS_WRITERS  3
#define STRESS_UPDATES  3000
#define STRESS_A_BLOCKS 4
#define STRESS_B_BLOCKS 24
#define STRESS_POOL     6
#define STRESS_DROPS    400
#define STRESS_B_READS  6000
#define STRESS_STREAMS  40
#define COUNTER_OFFSET  64 /* past the stamp */

typedef struct stress {
  hs_pool *pool;
  atomic_bool stop;
  _Atomic uint64_t no_buffers; /* HS_ERR_NO_BUFFERS seen while not all pinned */
  _Atomic uint64_t other_errors;
  char first_error[256];
  atomic_flag error_noted;
} stress;

typedef struct worker {
  stress *st;
  int id;
  uint64_t seed;
} worker;

static uint64_t next_rand(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

static void note_error(stress *st, hs_status s) {
  if (s == HS_ERR_NO_BUFFERS)
    atomic_fetch_add(&st->no_buffers, 1);
  else
    atomic_fetch_add(&st->other_errors, 1);
  if (!atomic_flag_test_and_set(&st->error_noted))
    snprintf(st->first_error, sizeof st->first_error, "%s: %s", hs_status_name(s), hs_last_error());
}

/* Adds one to this writer's counter in a random block of A, under the
 * exclusive lock. The pool has more buffers than there are threads pinning
 * at once, so no read may fail. */
static void *counter_writer(void *arg) {
  worker *w = arg;
  hs_pool *pool = w->st->pool;
  for (int i = 0; i < STRESS_UPDATES; i++) {
    hs_blockno blk = (hs_blockno)(next_rand(&w->seed) % STRESS_A_BLOCKS);
    hs_buf b;
    hs_status s = hs_pool_read(pool, REL_A, HS_FORK_MAIN, blk, HS_READ_NORMAL, NULL, &b, NULL);
    if (s != HS_OK) {
      note_error(w->st, s);
      i--; /* the update is still owed */
      continue;
    }
    hs_buf_lock(pool, b, HS_LOCK_EXCLUSIVE);
    uint64_t *c = (uint64_t *)((unsigned char *)hs_buf_page(pool, b) + COUNTER_OFFSET) + w->id;
    (*c)++;
    hs_buf_mark_dirty(pool, b, 0, NULL);
    hs_buf_unlock(pool, b);
    hs_buf_release(pool, b);
  }
  return NULL;
}

static void *b_reader(void *arg) {
  worker *w = arg;
  hs_pool *pool = w->st->pool;
  for (int i = 0; i < STRESS_B_READS; i++) {
    hs_blockno blk = (hs_blockno)(next_rand(&w->seed) % STRESS_B_BLOCKS);
    hs_buf b;
    hs_status s = hs_pool_read(pool, REL_B, HS_FORK_MAIN, blk, HS_READ_NORMAL, NULL, &b, NULL);
    if (s != HS_OK) {
      note_error(w->st, s);
      continue;
    }
    hs_buf_lock(pool, b, HS_LOCK_SHARE);
    if (stamp_value(hs_buf_page(pool, b), REL_B, blk) != 0)
      atomic_fetch_add(&w->st->other_errors, 1);
    hs_buf_unlock(pool, b);
    hs_buf_release(pool, b);
  }
  return NULL;
}

/* B is never written, so dropping it loses nothing; A must keep every
 * update. Pinned B buffers make a drop answer HS_ERR_BUSY: fine. */
static void *b_dropper(void *arg) {
  worker *w = arg;
  for (int i = 0; i < STRESS_DROPS; i++) {
    hs_status s = hs_pool_drop_relation(w->st->pool, REL_B);
    if (s != HS_OK && s != HS_ERR_BUSY) note_error(w->st, s);
    sched_yield();
  }
  return NULL;
}

static void *b_streamer(void *arg) {
  worker *w = arg;
  hs_pool *pool = w->st->pool;
  for (int lap = 0; lap < STRESS_STREAMS; lap++) {
    hs_block_range r;
    hs_block_range_init(&r, 0, STRESS_B_BLOCKS);
    hs_read_stream *rs;
    hs_status s = hs_read_stream_open(pool, REL_B, HS_FORK_MAIN, NULL, hs_block_range_next, &r,
                                      4 * 1024, &rs);
    if (s != HS_OK) {
      note_error(w->st, s);
      continue;
    }
    hs_buf b;
    hs_blockno blk;
    while ((s = hs_read_stream_next(rs, &b, &blk)) == HS_OK && b != HS_INVALID_BUF)
      hs_buf_release(pool, b);
    if (s != HS_OK) note_error(w->st, s);
    hs_read_stream_close(rs);
  }
  return NULL;
}

static void *flusher(void *arg) {
  worker *w = arg;
  for (int i = 0; i < 200; i++) {
    hs_status s =
        i % 2 ? hs_pool_flush_all(w->st->pool) : hs_pool_flush_relation(w->st->pool, REL_A);
    if (s != HS_OK) note_error(w->st, s);
  }
  return NULL;
}

static void stress_one_policy(const char *policy) {
  char dir[256];
  testdir_make(dir, sizeof dir, "rel-stress");
  hs_pool *pool = open_pool_with(dir, STRESS_POOL, 1024, policy, NULL, NULL);
  make_relation(pool, REL_A, STRESS_A_BLOCKS);
  make_relation(pool, REL_B, STRESS_B_BLOCKS);
  stress st = {.pool = pool};
  atomic_flag_clear(&st.error_noted);
  enum { NW = STRESS_WRITERS + 4 };
  worker w[NW];
  pthread_t t[NW];
  void *(*fn[NW])(void *);
  for (int i = 0; i < NW; i++) {
    w[i] = (worker){.st = &st, .id = i, .seed = 0x9E3779B97F4A7C15ULL * (uint64_t)(i + 1)};
    fn[i] = i < STRESS_WRITERS        ? counter_writer
            : i == STRESS_WRITERS     ? b_reader
            : i == STRESS_WRITERS + 1 ? b_dropper
            : i == STRESS_WRITERS + 2 ? b_streamer
                                      : flusher;
    REQUIRE(pthread_create(&t[i], NULL, fn[i], &w[i]) == 0);
  }
  for (int i = 0; i < NW; i++) pthread_join(t[i], NULL);
  /* At most 5 threads pin at once (a stream holds several, but is one
   * thread of 7 in a pool of 6 pages it may not fill): a NO_BUFFERS here is
   * the defect where a drop's buffers in flight looked "all pinned". */
  if (st.no_buffers || st.other_errors)
    fprintf(stderr, "%s: %llu NO_BUFFERS, %llu other errors; first: %s\n", policy,
            (unsigned long long)st.no_buffers, (unsigned long long)st.other_errors, st.first_error);
  CHECK_EQ(st.other_errors, 0);
  CHECK_OK(hs_pool_close(pool));
  pool = open_pool_with(dir, STRESS_POOL, 1024, policy, NULL, NULL);
  uint64_t sum = 0;
  for (hs_blockno blk = 0; blk < STRESS_A_BLOCKS; blk++) {
    _Alignas(4096) unsigned char page[1024];
    REQUIRE(hs_smgr_read(hs_pool_smgr(pool), REL_A, HS_FORK_MAIN, blk, page) == HS_OK);
    for (int i = 0; i < STRESS_WRITERS; i++) {
      uint64_t c;
      memcpy(&c, page + COUNTER_OFFSET + 8 * i, 8);
      sum += c;
    }
  }
  if (sum != (uint64_t)STRESS_WRITERS * STRESS_UPDATES)
    fprintf(stderr, "%s: %llu updates on disk, %llu made\n", policy, (unsigned long long)sum,
            (unsigned long long)STRESS_WRITERS * STRESS_UPDATES);
  CHECK_EQ(sum, (uint64_t)STRESS_WRITERS * STRESS_UPDATES);
  CHECK_OK(hs_pool_close(pool));
  testdir_remove(dir);
}

/* While a drop holds a buffer between taking its page away and putting it
 * on the free list, a read that finds every other buffer pinned must wait
 * for it, not answer "all pinned". Made certain with the hook in that window:
 * a 2-buffer pool, one pinned by the reader thread, the other being dropped;
 * the hook lets the reader's miss run and waits until it either waits too or
 * has failed. */
typedef struct in_drop_window {
  hs_pool *pool;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool go, done;
  hs_status result;
  char message[256];
} in_drop_window;

static void *read_during_drop(void *arg) {
  in_drop_window *w = arg;
  hs_buf kept = must_read(w->pool, REL_A, 0, NULL);
  pthread_mutex_lock(&w->mu);
  while (!w->go) pthread_cond_wait(&w->cv, &w->mu);
  pthread_mutex_unlock(&w->mu);
  hs_buf b = HS_INVALID_BUF;
  hs_status st = hs_pool_read(w->pool, REL_A, HS_FORK_MAIN, 1, HS_READ_NORMAL, NULL, &b, NULL);
  pthread_mutex_lock(&w->mu);
  w->result = st;
  snprintf(w->message, sizeof w->message, "%s", st == HS_OK ? "" : hs_last_error());
  w->done = true;
  pthread_cond_broadcast(&w->cv);
  pthread_mutex_unlock(&w->mu);
  if (st == HS_OK) hs_buf_release(w->pool, b);
  hs_buf_release(w->pool, kept);
  return NULL;
}

static void let_reader_miss(hs_pool *pool, hs_buf b, int phase, void *ctx) {
  (void)b;
  in_drop_window *w = ctx;
  if (phase != SEAM_DROP_TAKEN) return;
  uint64_t waits_before = atomic_load(&pool->victim_waits);
  pthread_mutex_lock(&w->mu);
  w->go = true;
  pthread_cond_broadcast(&w->cv);
  pthread_mutex_unlock(&w->mu);
  /* Until the reader's search has found nothing and waits, or gave up. */
  for (;;) {
    pthread_mutex_lock(&w->mu);
    bool done = w->done;
    pthread_mutex_unlock(&w->mu);
    if (done || atomic_load(&pool->victim_waits) > waits_before) break;
    sched_yield();
  }
}

static void test_no_buffers_means_all_pinned(void) {
  char dir[256];
  testdir_make(dir, sizeof dir, "rel-nobuf");
  hs_pool *pool = open_pool(dir, 2, 1024, NULL, NULL);
  make_relation(pool, REL_A, 4);
  make_relation(pool, REL_B, 4);
  in_drop_window w = {.pool = pool};
  pthread_mutex_init(&w.mu, NULL);
  pthread_cond_init(&w.cv, NULL);
  pthread_t reader;
  REQUIRE(pthread_create(&reader, NULL, read_during_drop, &w) == 0);
  hs_buf_release(pool, must_read(pool, REL_B, 0, NULL)); /* the other buffer */
  seams.pool_drop = let_reader_miss;
  seams.pool_drop_ctx = &w;
  CHECK_OK(hs_pool_drop_relation(pool, REL_B));
  seams.pool_drop = NULL;
  pthread_join(reader, NULL);
  if (w.result != HS_OK) fprintf(stderr, "read during a drop: %s\n", w.message);
  CHECK_ST(w.result, HS_OK);
  pthread_mutex_destroy(&w.mu);
  pthread_cond_destroy(&w.cv);

  /* Both really pinned: then it is the answer, and names the count. */
  hs_buf held[2];
  for (int i = 0; i < 2; i++) held[i] = must_read(pool, REL_A, (hs_blockno)i, NULL);
  hs_buf b;
  CHECK_ST(hs_pool_read(pool, REL_A, HS_FORK_MAIN, 3, HS_READ_NORMAL, NULL, &b, NULL),
           HS_ERR_NO_BUFFERS);
  CHECK_CONTAINS(hs_last_error(), "all 2 are pinned");
  for (int i = 0; i < 2; i++) hs_buf_release(pool, held[i]);
  CHECK_OK(hs_pool_close(pool));
  testdir_remove(dir);
}

/* ---- 4. one unwritable dirty page, every policy -------------------------- */

static void test_unwritable_page_every_policy(void) {
  char list[512];
  snprintf(list, sizeof list, "%s", hs_policy_names());
  int policies = 0;
  for (char *save = NULL, *name = strtok_r(list, ",", &save); name;
       name = strtok_r(NULL, ",", &save)) {
    hs_policy *probe;
    REQUIRE(hs_policy_create(name, 1, 1, NULL, &probe) == HS_OK);
    bool sim_only = hs_policy_flags(probe) & HS_POLICY_SIM_ONLY;
    hs_policy_destroy(probe);
    if (sim_only) continue; /* belady, fixedset: offline bounds, simulator only */
    policies++;
    char dir[256];
    testdir_make(dir, sizeof dir, "rel-unwritable");
    hs_pool *pool = open_pool_with(dir, 4, 1024, name, NULL, NULL);
    make_relation(pool, REL_A, 32);
    must_update(pool, REL_A, 0, 99, 0);
    REQUIRE(hs_smgr_inject_fault(hs_pool_smgr(pool), HS_IO_WRITE, 1, EIO, UINT32_MAX) == HS_OK);
    int failed = 0;
    uint64_t seed = 12345;
    for (int i = 0; i < 200; i++) {
      hs_blockno blk = 1 + (hs_blockno)(next_rand(&seed) % 31);
      hs_buf b;
      if (hs_pool_read(pool, REL_A, HS_FORK_MAIN, blk, HS_READ_NORMAL, NULL, &b, NULL) != HS_OK) {
        failed++;
        continue;
      }
      if (stamp_value(hs_buf_page(pool, b), REL_A, blk) != 0) failed++;
      hs_buf_release(pool, b);
    }
    if (failed) fprintf(stderr, "%s: %d of 200 reads failed\n", name, failed);
    CHECK_EQ(failed, 0);
    hs_buffer_info info;
    CHECK(find_buffer(pool, REL_A, 0, &info) >= 0 && info.dirty); /* kept, not lost */
    CHECK(hs_pool_close(pool) != HS_OK);                          /* the write still fails */
    hs_smgr_clear_faults(hs_pool_smgr(pool));
    CHECK_OK(hs_pool_close(pool));
    pool = open_pool(dir, 4, 1024, NULL, NULL);
    CHECK_EQ(value_on_disk(pool, REL_A, 0), 99);
    CHECK_OK(hs_pool_close(pool));
    testdir_remove(dir);
  }
  CHECK(policies >= 15);
}

/* ---- 5. read modes at the end of a relation ------------------------------ */

static void test_read_modes_at_the_end(void) {
  char dir[256];
  testdir_make(dir, sizeof dir, "rel-modes");
  hs_pool *pool = open_pool(dir, 2, 1024, NULL, NULL);
  make_relation(pool, REL_A, 2);
  hs_buf b;
  /* A zeroed page past the end could never be written: refused. */
  CHECK_ST(hs_pool_read(pool, REL_A, HS_FORK_MAIN, 2, HS_READ_ZERO, NULL, &b, NULL), HS_ERR_EOF);
  CHECK_CONTAINS(hs_last_error(), "hs_pool_extend");
  /* The value 0.1's HS_READ_NEW had is no mode now: misuse. */
  CHECK_ST(hs_pool_read(pool, REL_A, HS_FORK_MAIN, 0, (hs_read_mode)1, NULL, &b, NULL),
           HS_ERR_MISUSE);
  CHECK_ST(hs_pool_read(pool, REL_A, HS_FORK_MAIN, 7, HS_READ_ZERO, NULL, &b, NULL), HS_ERR_EOF);
  CHECK_OK(hs_pool_read(pool, REL_A, HS_FORK_MAIN, 1, HS_READ_ZERO, NULL, &b, NULL));
  hs_buf_release(pool, b);
  CHECK_OK(hs_pool_flush_all(pool));

  /* hs_pool_extend with every buffer pinned: no buffer, and no new block. */
  hs_buf p0 = must_read(pool, REL_A, 0, NULL), p1 = must_read(pool, REL_A, 1, NULL);
  CHECK_ST(hs_pool_extend(pool, REL_A, HS_FORK_MAIN, NULL, false, &b, NULL), HS_ERR_NO_BUFFERS);
  CHECK_EQ(nblocks_of(pool, REL_A), 2);
  hs_buf_release(pool, p1);
  /* A failed extension gives its buffer back: both frames still usable. */
  REQUIRE(hs_smgr_inject_fault(hs_pool_smgr(pool), HS_IO_EXTEND, 1, ENOSPC, 1) == HS_OK);
  CHECK_ST(hs_pool_extend(pool, REL_A, HS_FORK_MAIN, NULL, false, &b, NULL), HS_ERR_NOSPACE);
  CHECK_EQ(nblocks_of(pool, REL_A), 2);
  CHECK_OK(hs_pool_extend(pool, REL_A, HS_FORK_MAIN, NULL, false, &b, NULL));
  CHECK_EQ(hs_buf_block(pool, b), 2);
  CHECK_EQ(nblocks_of(pool, REL_A), 3);
  hs_buf_release(pool, b);
  hs_buf_release(pool, p0);
  /* And a dirty victim whose write fails: the read fails, the file stays. */
  must_update(pool, REL_A, 0, 5, 0);
  must_update(pool, REL_A, 1, 6, 0);
  REQUIRE(hs_smgr_inject_fault(hs_pool_smgr(pool), HS_IO_WRITE, 1, EIO, UINT32_MAX) == HS_OK);
  CHECK_ST(hs_pool_extend(pool, REL_A, HS_FORK_MAIN, NULL, false, &b, NULL), HS_ERR_IO);
  CHECK_EQ(nblocks_of(pool, REL_A), 3);
  hs_smgr_clear_faults(hs_pool_smgr(pool));
  CHECK_OK(hs_pool_close(pool));
  testdir_remove(dir);
}

/* ---- 8. flushing a buffer the caller holds locked ------------------------ */

static void test_flush_while_locked(void) {
  char dir[256];
  testdir_make(dir, sizeof dir, "rel-flushlock");
  hs_pool *pool = open_pool(dir, 4, 1024, NULL, NULL);
  make_relation(pool, REL_A, 4);
  hs_buf b = must_read(pool, REL_A, 1, NULL);
  CHECK_OK(hs_buf_lock(pool, b, HS_LOCK_EXCLUSIVE));
  stamp_page(hs_buf_page(pool, b), REL_A, 1, 11);
  CHECK_OK(hs_buf_mark_dirty(pool, b, 0, NULL));
  CHECK_OK(hs_pool_flush_buffer(pool, b)); /* hung: took the share lock inside */
  CHECK_EQ(value_on_disk(pool, REL_A, 1), 11);
  stamp_page(hs_buf_page(pool, b), REL_A, 1, 12);
  CHECK_OK(hs_buf_mark_dirty(pool, b, 0, NULL));
  CHECK_OK(hs_pool_flush_all(pool));
  CHECK_EQ(value_on_disk(pool, REL_A, 1), 12);
  stamp_page(hs_buf_page(pool, b), REL_A, 1, 13);
  CHECK_OK(hs_buf_mark_dirty(pool, b, 0, NULL));
  CHECK_OK(hs_pool_flush_relation(pool, REL_A));
  CHECK_EQ(value_on_disk(pool, REL_A, 1), 13);
  CHECK_OK(hs_buf_unlock(pool, b));
  /* Under a share lock too. */
  CHECK_OK(hs_buf_lock(pool, b, HS_LOCK_SHARE));
  CHECK_OK(hs_pool_flush_buffer(pool, b));
  CHECK_OK(hs_buf_unlock(pool, b));
  CHECK_OK(hs_buf_release(pool, b));
  CHECK_OK(hs_pool_close(pool));
  testdir_remove(dir);
}

/* ---- 9. every option's range --------------------------------------------- */

static void expect_refused(hs_pool_options *o, const char *option) {
  hs_pool *pool = NULL;
  CHECK_ST(hs_pool_open(o, &pool), HS_ERR_INVALID);
  CHECK(pool == NULL);
  CHECK_CONTAINS(hs_last_error(), option);
}

static hs_status dummy_wal(void *ctx, hs_lsn upto, bool *flushed) {
  (void)ctx, (void)upto;
  *flushed = false;
  return HS_OK;
}
static bool dummy_needs(void *ctx, hs_lsn lsn) {
  (void)ctx, (void)lsn;
  return true;
}

static void test_option_ranges(void) {
  char dir[256];
  testdir_make(dir, sizeof dir, "rel-options");
  hs_pool_options o;
  hs_pool_options_init(&o);
  o.dir = dir;
  o.pool_pages = 8;
  o.partitions = (1u << 31) + 1; /* the rounding loop never ended */
  expect_refused(&o, "partitions");
  o.partitions = UINT32_MAX;
  expect_refused(&o, "partitions");
  o.partitions = HS_POOL_MAX_PARTITIONS;
  hs_pool *pool = open_pool_from(&o);
  CHECK_OK(hs_pool_close(pool));
  o.partitions = 3; /* rounded up to 4 */
  pool = open_pool_from(&o);
  CHECK_OK(hs_pool_close(pool));
  o.partitions = 0;
  o.page_size = 3000;
  expect_refused(&o, "page_size");
  o.page_size = 512;
  expect_refused(&o, "page_size");
  o.page_size = 1u << 17;
  expect_refused(&o, "page_size");
  o.page_size = 1024;
  o.io_workers = HS_POOL_MAX_IO_WORKERS + 1;
  expect_refused(&o, "io_workers");
  o.io_workers = 0;
  o.pool_pages = HS_POOL_MAX_PAGES + 1u;
  expect_refused(&o, "pool_pages");
  o.pool_pages = 0;
  o.pool_bytes = 100; /* less than a page */
  expect_refused(&o, "pool_bytes");
  o.pool_bytes = (uint64_t)1024 * ((uint64_t)HS_POOL_MAX_PAGES + 1);
  expect_refused(&o, "pool_bytes");
  o.pool_pages = 8;
  o.wal_needs_flush = dummy_needs;
  expect_refused(&o, "wal_needs_flush");
  o.flush_wal_up_to = dummy_wal;
  pool = open_pool_from(&o);
  CHECK_OK(hs_pool_close(pool));
  o.dir = "";
  expect_refused(&o, "dir");
  testdir_remove(dir);
}

/* ---- 11. the WAL callback's failure, said once --------------------------- */

typedef struct failing_wal {
  hs_smgr *smgr;
  bool call_hotset; /* fail through a failing hotset call (which leaves a message) */
} failing_wal;

static hs_status wal_fails(void *ctx, hs_lsn upto, bool *flushed) {
  failing_wal *f = ctx;
  (void)upto;
  *flushed = false;
  if (f->call_hotset) {
    hs_blockno n;
    return hs_smgr_nblocks(f->smgr, 777, HS_FORK_MAIN, &n); /* no relation 777 */
  }
  return HS_ERR_IO;
}

static int occurrences(const char *haystack, const char *needle) {
  int n = 0;
  for (const char *p = haystack; (p = strstr(p, needle)) != NULL; p += strlen(needle)) n++;
  return n;
}

static void test_wal_callback_error(void) {
  char dir[256];
  testdir_make(dir, sizeof dir, "rel-walerr");
  failing_wal f = {0};
  hs_pool *pool = open_pool(dir, 4, 1024, wal_fails, &f);
  f.smgr = hs_pool_smgr(pool);
  make_relation(pool, REL_A, 2);
  must_update(pool, REL_A, 1, 3, 500);
  hs_buf b;
  /* An unrelated failure first: its message must not be quoted later. */
  CHECK_ST(hs_pool_read(pool, REL_A, HS_FORK_MAIN, 99, HS_READ_NORMAL, NULL, &b, NULL), HS_ERR_EOF);
  b = must_read(pool, REL_A, 1, NULL);
  for (int attempt = 0; attempt < 3; attempt++) {
    CHECK_ST(hs_pool_flush_buffer(pool, b), HS_ERR_WAL);
    const char *msg = hs_last_error();
    CHECK_CONTAINS(msg, "flush_wal_up_to");
    CHECK_CONTAINS(msg, "block 1 of relation 1");
    CHECK_CONTAINS(msg, "HS_ERR_IO");
    CHECK(strstr(msg, "99") == NULL);
    CHECK_EQ(occurrences(msg, "flush_wal_up_to"), 1);
  }
  f.call_hotset = true;
  for (int attempt = 0; attempt < 2; attempt++) {
    CHECK_ST(hs_pool_flush_buffer(pool, b), HS_ERR_WAL);
    const char *msg = hs_last_error();
    CHECK_EQ(occurrences(msg, "flush_wal_up_to"), 1);
    CHECK_EQ(occurrences(msg, "777"), 1); /* the callback's own failure, once */
  }
  hs_buf_release(pool, b);
  hs_buffer_info info;
  CHECK(find_buffer(pool, REL_A, 1, &info) >= 0 && info.dirty);
  hs_pool_abandon(pool);
  testdir_remove(dir);
}

int main(int argc, char **argv) {
  alarm(280); /* a hang is a failure, before CTest's own timeout */
  test_drop_keeps_other_relations_page();
  test_no_buffers_means_all_pinned();
  test_unwritable_page_every_policy();
  test_read_modes_at_the_end();
  test_flush_while_locked();
  test_option_ranges();
  test_wal_callback_error();
  if (argc > 1) {
    for (int i = 1; i < argc; i++) stress_one_policy(argv[i]);
  } else {
    const char *policies[] = {"clock-sweep", "lru", "fifo", "2q", "arc", "sieve", "midpoint"};
    for (size_t i = 0; i < sizeof policies / sizeof *policies; i++) stress_one_policy(policies[i]);
  }
  return check_finish();
}
