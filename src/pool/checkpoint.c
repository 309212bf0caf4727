/*
 * pool/checkpoint.c — checkpoints: hs_pool_checkpoint and the checkpointer
 * thread (hotset/durability.h).
 *
 * A checkpoint bounds recovery: once every page changed before its redo
 * point is on disk and fsynced, replay can start there. The steps, as in
 * PostgreSQL's CreateCheckPoint:
 *
 *  1. the redo point is set to the end of the log reserved so far
 *     (wal_checkpoint_begin); from here on a page's first change logs its
 *     whole image (page_log.c);
 *  2. the log is flushed to the redo point, once, so the page writes below
 *     find their WAL durable (WAL before data) instead of each paying a sync;
 *  3. the dirty buffers are collected and written in relation, fork, block
 *     order — sequential runs in each file, as PostgreSQL sorts since 9.6 —
 *     and, for a spread checkpoint, paced so that the writes end at
 *     checkpoint_completion_target of the interval, measured both in time
 *     and in log written, whichever is further along (IsCheckpointOnSchedule);
 *  4. every file written since its last fsync is fsynced (the storage
 *     manager tracks them, so pages the background writer or an eviction
 *     wrote since the last checkpoint are covered too), and the list of
 *     the files the directory must hold records each one's size, which
 *     the next open requires (storage/smgr_catalog.h);
 *  5. the checkpoint record is logged and flushed (wal_checkpoint_log),
 *     the data directory's control file replaced to name it
 *     (pool_control.c), and only then old log segments recycled
 *     (wal_recycle).
 *
 * A page dirtied after the collection in step 3 need not be written: its
 * change is after the redo point, in the log. A page dirtied before the
 * redo point is dirty at the collection unless something wrote it since,
 * and then step 4 fsyncs it.
 *
 * One checkpoint runs at a time (checkpoint_lock). hs_pool_checkpoint asked
 * while a spread one runs makes that one finish at full speed and then runs
 * its own, so everything changed before the call is on disk when it
 * returns.
 */
#include "core/error.h"
#include "core/seams.h"
#include "core/thread_name.h"
#include "hotset/durability.h"
#include "pool/pins.h"
#include "storage/smgr_catalog.h"
#include "wal/wal_durable.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct dirty_page {
  hs_buftag tag;
  hs_buf buf;
} dirty_page;

static int tag_order(const void *a, const void *b) {
  const hs_buftag *x = &((const dirty_page *)a)->tag, *y = &((const dirty_page *)b)->tag;
  if (x->rel != y->rel) return x->rel < y->rel ? -1 : 1;
  if (x->fork != y->fork) return x->fork < y->fork ? -1 : 1;
  return x->block < y->block ? -1 : x->block > y->block;
}

static uint64_t ms_since(uint64_t t0_ns) {
  return (pool_now_ns() - t0_ns) / 1000000u;
}

/* Waits up to `ms` on the checkpointer's condvar (woken early by close or
 * an immediate request). Under ckpt_mu. */
static void ckpt_wait(hs_pool *pool, uint64_t ms) {
  struct timespec until;
  clock_gettime(CLOCK_MONOTONIC, &until);
  uint64_t ns = (uint64_t)until.tv_nsec + ms * 1000000u;
  until.tv_sec += (time_t)(ns / 1000000000u);
  until.tv_nsec = (long)(ns % 1000000000u);
  pthread_cond_timedwait(&pool->ckpt_cv, &pool->ckpt_mu, &until);
}

/* The share of its pages a spread checkpoint should have written by now,
 * by time (the interval × target) or by log (the log written since its redo
 * point against max_wal_size × target), whichever is further along. Without
 * a timeout there is no time schedule: it is due at once (and so never
 * ahead), as it always was — pacing by log alone would stall a checkpoint
 * while nothing writes log. */
static double schedule_due(hs_pool *pool, uint64_t t0_ns, hs_lsn redo) {
  if (!pool->ckpt_timeout_ms && !pool->max_wal_size) return 1.0;
  double target = pool->ckpt_target;
  double by_time =
      pool->ckpt_timeout_ms ? (double)ms_since(t0_ns) / (pool->ckpt_timeout_ms * target) : 1.0;
  double by_log = pool->max_wal_size ? (double)(hs_wal_insert_lsn(pool->wal) - redo) /
                                           ((double)pool->max_wal_size * target)
                                     : 0.0;
  double due = by_time > by_log ? by_time : by_log;
  return due < 1.0 ? due : 1.0;
}

/* Whether a spread checkpoint that has written `done` of `total` pages is
 * ahead of its schedule. */
static bool ahead_of_schedule(hs_pool *pool, uint64_t t0_ns, hs_lsn redo, uint32_t done,
                              uint32_t total) {
  if (!pool->ckpt_timeout_ms && !pool->max_wal_size) return false;
  return (double)done / total > schedule_due(pool, t0_ns, redo);
}

/* What hs_pool_checkpoint_stats says of the checkpoint under way (a throttled
 * vacuum slows its dirtying while it runs behind). */
static void note_progress(hs_pool *pool, bool running, uint32_t done, uint32_t total, double due) {
  pthread_mutex_lock(&pool->ckpt_stats_lock);
  pool->ckpt_stats.in_progress = running;
  pool->ckpt_stats.progress = total ? (double)done / total : 1.0;
  pool->ckpt_stats.due = due;
  pthread_mutex_unlock(&pool->ckpt_stats_lock);
}

/* Writes the collected pages; a spread checkpoint sleeps while it is ahead
 * of schedule, unless someone asks for an immediate one (or close). */
static hs_status write_pages(hs_pool *pool, dirty_page *pages, uint32_t n, bool spread,
                             uint64_t t0_ns, hs_lsn redo, uint64_t *written) {
  hs_status first = HS_OK;
  char first_msg[512] = "";
  int first_errno = 0;
  for (uint32_t i = 0; i < n; i++) {
    hs_buf b = pages[i].buf;
    hs_bufdesc *d = pool_desc(pool, b);
    uint32_t s = pool_pin(pool, b);
    hs_buftag now = buf_tag_get(d);
    if ((s & BM_TAG_VALID) && now.rel == pages[i].tag.rel && now.fork == pages[i].tag.fork &&
        now.block == pages[i].tag.block) {
      bool wrote = false;
      /* What is written carries at least this LSN (a page's only grows). */
      hs_lsn lsn = atomic_load_explicit(&d->lsn, memory_order_relaxed);
      hs_status st = pool_flush_pinned(pool, b, &wrote);
      if (wrote) (*written)++;
      if (wrote && pool->checksums)
        smgr_catalog_note_write(pool->smgr, now.rel, now.fork, now.block, lsn);
      if (st != HS_OK && first == HS_OK) {
        first = st;
        first_errno = hs_last_errno();
        snprintf(first_msg, sizeof first_msg, "%s", hs_last_error());
      }
    }
    pool_unpin(pool, b);
    note_progress(pool, true, i + 1, n, spread ? schedule_due(pool, t0_ns, redo) : 1.0);
    if (!spread) continue;
    pthread_mutex_lock(&pool->ckpt_mu);
    while (!pool->ckpt_hurry && ahead_of_schedule(pool, t0_ns, redo, i + 1, n)) ckpt_wait(pool, 10);
    pthread_mutex_unlock(&pool->ckpt_mu);
  }
  if (first != HS_OK)
    return hs_fail(first, first_errno, "checkpoint: %s (the page stays dirty)", first_msg);
  return HS_OK;
}

static hs_status run_checkpoint_steps(hs_pool *pool, bool spread, bool timed);

/* A checkpoint, marked for whoever watches the seams (core/seams.h: the
 * power-cut recorder aims cuts inside the nth checkpoint). */
static hs_status run_checkpoint(hs_pool *pool, bool spread, bool timed) {
  if (seams.checkpoint_begin) seams.checkpoint_begin();
  hs_status st = run_checkpoint_steps(pool, spread, timed);
  if (seams.checkpoint_end) seams.checkpoint_end();
  return st;
}

static hs_status run_checkpoint_steps(hs_pool *pool, bool spread, bool timed) {
  uint64_t t0 = pool_now_ns();
  hs_lsn redo = wal_checkpoint_begin(pool->wal);
  hs_status st = hs_wal_flush(pool->wal, redo, HS_WAL_CAUSE_CHECKPOINT, NULL);
  if (st != HS_OK) return st;

  uint32_t n = 0;
  dirty_page *pages = malloc((size_t)pool->nbuffers * sizeof *pages);
  if (!pages) return hs_fail(HS_ERR_NOMEM, ENOMEM, "checkpoint: no memory for the dirty list");
  for (uint32_t i = 0; i < pool->nbuffers; i++) {
    hs_bufdesc *d = pool_desc(pool, (hs_buf)i);
    hs_bufstate *ds = pool_bstate(pool, (hs_buf)i);
    uint32_t s = atomic_load_explicit(&ds->state, memory_order_acquire);
    if ((s & (BM_VALID | BM_DIRTY | BM_TAG_VALID)) != (BM_VALID | BM_DIRTY | BM_TAG_VALID))
      continue;
    pages[n++] = (dirty_page){.tag = buf_tag_get(d), .buf = (hs_buf)i};
  }
  qsort(pages, n, sizeof *pages, tag_order);
  if (seams.pool_collected) seams.pool_collected(pool, seams.pool_durability_ctx);
  uint64_t written = 0;
  st = write_pages(pool, pages, n, spread, t0, redo, &written);
  free(pages);
  note_progress(pool, false, 0, 0, 0);
  uint64_t t_sync = pool_now_ns();
  if (st == HS_OK) st = hs_smgr_sync_all(pool->smgr);
  /* Each listed file's size, now durable, is what it must have from here on. */
  if (st == HS_OK) st = smgr_catalog_record_sizes(pool->smgr);
  uint64_t sync_ms = ms_since(t_sync);
  hs_lsn at = 0;
  uint64_t recycled = 0, removed = 0;
  /* The record, then the control file naming it, then recycling: a crash
   * between any two leaves a control file whose checkpoint and redo
   * segment are still in the log. */
  if (st == HS_OK) st = wal_checkpoint_log(pool->wal, redo, &at);
  if (st == HS_OK) st = pool_control_note_checkpoint(pool, at, redo);
  if (st == HS_OK) st = wal_recycle(pool->wal, redo, pool->keep_wal_bytes, &recycled, &removed);
  pthread_mutex_lock(&pool->ckpt_stats_lock);
  hs_pool_checkpoint_stats *cs = &pool->ckpt_stats;
  if (timed)
    cs->timed++;
  else
    cs->requested++;
  cs->buffers_written += written;
  cs->write_ms += (t_sync - t0) / 1000000u;
  cs->sync_ms += sync_ms;
  if (st == HS_OK) {
    cs->segments_recycled += recycled;
    cs->segments_removed += removed;
    cs->last_redo = redo;
    cs->last_checkpoint = at;
  }
  pthread_mutex_unlock(&pool->ckpt_stats_lock);
  return st;
}

hs_status hs_pool_checkpoint(hs_pool *pool) {
  if (!pool) return hs_fail(HS_ERR_MISUSE, 0, "hs_pool_checkpoint: no pool");
  if (!pool->wal)
    return hs_fail(HS_ERR_INVALID, 0,
                   "hs_pool_checkpoint: the pool has no log (hs_pool_options.wal)");
  /* A spread checkpoint under way finishes at full speed first. */
  pthread_mutex_lock(&pool->ckpt_mu);
  pool->ckpt_hurry++;
  pthread_cond_broadcast(&pool->ckpt_cv);
  pthread_mutex_unlock(&pool->ckpt_mu);
  pthread_mutex_lock(&pool->ckpt_run_lock);
  hs_status st = run_checkpoint(pool, false, false);
  pthread_mutex_unlock(&pool->ckpt_run_lock);
  pthread_mutex_lock(&pool->ckpt_mu);
  pool->ckpt_hurry--;
  pthread_mutex_unlock(&pool->ckpt_mu);
  return st;
}

hs_status hs_pool_checkpoint_stats_get(const hs_pool *cpool, hs_pool_checkpoint_stats *out) {
  if (!cpool || !out)
    return hs_fail(HS_ERR_MISUSE, 0, "hs_pool_checkpoint_stats_get: pool and out are required");
  hs_pool *pool = (hs_pool *)cpool; /* takes the statistics' mutex; changes nothing */
  pthread_mutex_lock(&pool->ckpt_stats_lock);
  *out = pool->ckpt_stats;
  out->failed = pool->ckpt_failures;
  snprintf(out->last_error, sizeof out->last_error, "%s", pool->ckpt_last_error);
  pthread_mutex_unlock(&pool->ckpt_stats_lock);
  return HS_OK;
}

/* ---- the checkpointer thread ---------------------------------------------- */

static void *checkpointer_main(void *arg) {
  hs_pool *pool = arg;
  uint64_t last = pool_now_ns();
  pthread_mutex_lock(&pool->ckpt_mu);
  while (!pool->ckpt_stop) {
    /* Looks every 50 ms whether the log outgrew max_wal_size. */
    uint64_t since = ms_since(last);
    uint64_t left = since < pool->ckpt_timeout_ms ? pool->ckpt_timeout_ms - since : 0;
    if (left) ckpt_wait(pool, left < 50 ? left : 50);
    if (pool->ckpt_stop) break;
    bool by_time = ms_since(last) >= pool->ckpt_timeout_ms;
    bool by_log = pool->max_wal_size &&
                  hs_wal_insert_lsn(pool->wal) - wal_redo_point(pool->wal) >= pool->max_wal_size;
    if (!by_time && !by_log) continue;
    pthread_mutex_unlock(&pool->ckpt_mu);
    last = pool_now_ns();
    pthread_mutex_lock(&pool->ckpt_run_lock);
    hs_status st = run_checkpoint(pool, true, by_time && !by_log);
    pthread_mutex_unlock(&pool->ckpt_run_lock);
    if (st != HS_OK) {
      pthread_mutex_lock(&pool->ckpt_stats_lock);
      pool->ckpt_failures++;
      snprintf(pool->ckpt_last_error, sizeof pool->ckpt_last_error, "%s", hs_last_error());
      pthread_mutex_unlock(&pool->ckpt_stats_lock);
    }
    pthread_mutex_lock(&pool->ckpt_mu);
  }
  pthread_mutex_unlock(&pool->ckpt_mu);
  return NULL;
}

hs_status pool_checkpointer_start(hs_pool *pool) {
  if (!pool->wal || !pool->ckpt_timeout_ms) return HS_OK;
  pthread_mutex_lock(&pool->ckpt_mu);
  pool->ckpt_stop = false;
  pthread_mutex_unlock(&pool->ckpt_mu);
  if (pthread_create(&pool->ckpt_thread, NULL, checkpointer_main, pool) != 0)
    return hs_fail(HS_ERR_NOMEM, EAGAIN, "could not start the checkpointer thread");
  hs_name_thread(pool->ckpt_thread, "hs-checkpoint");
  pool->ckpt_running = true;
  return HS_OK;
}

void pool_checkpointer_stop(hs_pool *pool) {
  if (!pool->ckpt_running) return;
  pthread_mutex_lock(&pool->ckpt_mu);
  pool->ckpt_stop = true;
  pool->ckpt_hurry++;
  pthread_cond_broadcast(&pool->ckpt_cv);
  pthread_mutex_unlock(&pool->ckpt_mu);
  pthread_join(pool->ckpt_thread, NULL);
  pthread_mutex_lock(&pool->ckpt_mu);
  pool->ckpt_hurry--;
  pthread_mutex_unlock(&pool->ckpt_mu);
  pool->ckpt_running = false;
}
