/*
 * vacuum/vacuum.c — one vacuum pass over a heap (hotset/vacuum.h): each
 * page pruned by heap_prune (heap/heap.h), the index entries of the chain
 * roots it removes moved first, the free-space and visibility maps told
 * what it found.
 *
 * The horizon is taken once, at the start: versions deleted by
 * transactions that committed below it are dead to every snapshot that
 * exists or will; later deletions wait for the next pass (PostgreSQL takes
 * OldestXmin once per vacuum too).
 *
 * Lock order: a heap page's exclusive lock, then (inside heap_prune's
 * callback) an index page's lock. Nothing takes them the other way round:
 * an insert releases its heap page before it touches the index, a lookup
 * its index page before it reads the heap.
 */
#include "hotset/vacuum.h"

#include "core/error.h"
#include "heap/fsm.h"
#include "heap/heap.h"
#include "heap/vm.h"
#include "hotset/durability.h"
#include "vacuum/throttle.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void hs_vacuum_options_init(hs_vacuum_options *o) {
  if (!o) return;
  memset(o, 0, sizeof *o);
  o->cost_page_hit = 1;
  o->cost_page_miss = 2;
  o->cost_page_dirty = 20;
  o->cost_limit = 200;
  o->fsm_every = 8;
  o->skip_all_visible = true;
}

/* Pages pruned whose room the free-space map has not been told yet. */
typedef struct fsm_batch {
  hs_blockno *block;
  uint32_t *room, n, cap;
} fsm_batch;

static hs_status fsm_flush(hs_heap *h, fsm_batch *fb, hs_vacuum_stats *st) {
  hs_status rc = HS_OK;
  for (uint32_t i = 0; i < fb->n && rc == HS_OK; i++)
    rc = fsm_set(heap_fsm(h), fb->block[i], fb->room[i]);
  if (rc == HS_OK) st->fsm_updates += fb->n;
  fb->n = 0;
  return rc;
}

typedef struct vacuum_run {
  hs_pk_index *ix;
  hs_vacuum_stats *st;
} vacuum_run;

/* Dead versions leave their update chain from its root, the version the
 * index entry names: the root is removed and the entry moves to the version
 * after it (or goes, if none). A dead version further down the chain waits
 * (*remove false) until it is the root: its older versions are dead too,
 * but one on a page vacuum has not reached (or already passed) would be
 * left pointing at an empty slot. A chain that runs from a later page back
 * to an earlier one so takes a pass per backward hop to clear. */
static hs_status move_index_entry(void *ctx, hs_tid tid, const void *data, uint32_t len,
                                  hs_tid next, bool *remove) {
  vacuum_run *run = ctx;
  if (!run->ix || len < 8) return HS_OK;
  uint64_t key;
  memcpy(&key, data, 8);
  hs_tid entry;
  bool found;
  hs_status st = hs_pk_index_get(run->ix, key, &entry, &found);
  if (st != HS_OK || !found) return st; /* no entry reaches its key's versions */
  if (entry.block != tid.block || entry.slot != tid.slot) {
    *remove = false;
    return HS_OK;
  }
  st = hs_pk_index_move(run->ix, key, tid, next);
  if (st == HS_OK) run->st->index_moves++;
  return st;
}

static bool checkpoint_behind(void *ctx) {
  hs_pool_checkpoint_stats cs;
  hs_pool_checkpoint_stats_get(ctx, &cs);
  return cs.in_progress && cs.progress < cs.due;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* PostgreSQL's vacuum_delay_point: once the balance reaches the limit,
 * sleep the delay scaled by balance / limit (at most 4×), start again. */
static void delay_point(const hs_vacuum_options *o, uint64_t *balance, hs_vacuum_stats *st) {
  if (o->cost_delay_ms <= 0 || !o->cost_limit || *balance < o->cost_limit) return;
  double scale = (double)*balance / o->cost_limit;
  double ms = o->cost_delay_ms * (scale < 4 ? scale : 4);
  struct timespec ts = {(time_t)(ms / 1e3), (long)(((uint64_t)(ms * 1e6)) % 1000000000u)};
  nanosleep(&ts, NULL);
  st->cost_sleeps++;
  st->sleep_ms += ms;
  *balance = 0;
}

hs_status hs_vacuum(hs_heap *h, hs_pk_index *ix, const hs_vacuum_options *o, hs_vacuum_stats *out) {
  if (!out) return hs_fail(HS_ERR_MISUSE, 0, "hs_vacuum: out is NULL");
  memset(out, 0, sizeof *out);
  if (!h) return hs_fail(HS_ERR_MISUSE, 0, "hs_vacuum: the heap is NULL");
  hs_vacuum_options defaults;
  if (!o) {
    hs_vacuum_options_init(&defaults);
    o = &defaults;
  }
  double t0 = now_ms();
  hs_pool *pool = heap_pool(h);
  hs_xid horizon = hs_xact_horizon(heap_xact(h));
  hs_blockno n;
  hs_status st = hs_smgr_nblocks(hs_pool_smgr(pool), heap_rel(h), HS_FORK_MAIN, &n);
  vacuum_run run = {ix, out};
  uint64_t balance = 0;
  /* fsm_every 0: every page's room held until the end. */
  fsm_batch fb = {.cap = o->fsm_every ? o->fsm_every : (n ? n : 1)};
  fb.block = malloc(fb.cap * sizeof *fb.block);
  fb.room = malloc(fb.cap * sizeof *fb.room);
  if (!fb.block || !fb.room) {
    free(fb.block);
    free(fb.room);
    return hs_fail(HS_ERR_NOMEM, 0, "vacuum: no memory for %u free-space entries", fb.cap);
  }
  /* Last, so that every later exit passes the restore below. */
  hs_throttle *t = o->throttle;
  if (st == HS_OK && t) {
    t->checkpoint_behind = hs_pool_wal(pool) ? checkpoint_behind : NULL;
    t->checkpoint_ctx = pool;
    st = throttle_start(t);
  }
  for (hs_blockno blk = 0; st == HS_OK && blk < n; blk++) {
    /* A page the visibility map calls all-visible has nothing to prune:
     * skipped without being read, unless freezing (which rewrites it). */
    bool skip = false;
    if (o->skip_all_visible && !o->freeze && (st = vm_get(heap_vm(h), blk, &skip)) != HS_OK) break;
    if (skip) {
      out->pages_skipped++;
      continue;
    }
    hs_buf b;
    bool hit;
    st = hs_pool_read(pool, heap_rel(h), HS_FORK_MAIN, blk, HS_READ_NORMAL, o->strategy, &b, &hit);
    if (st != HS_OK) break;
    out->pages_scanned++;
    if (hit)
      out->page_hits++;
    else
      out->page_misses++;
    uint64_t cost = hit ? o->cost_page_hit : o->cost_page_miss;
    hs_buf_lock(pool, b, HS_LOCK_EXCLUSIVE);
    bool was_dirty = hs_buf_is_dirty(pool, b);
    heap_prune_counts c;
    st = heap_prune(h, b, horizon, o->freeze, move_index_entry, &run, &c);
    if (st == HS_OK && c.changed && !was_dirty) {
      out->pages_dirtied++;
      cost += o->cost_page_dirty;
    }
    hs_buf_unlock(pool, b);
    hs_buf_release(pool, b);
    out->removed += c.removed;
    out->frozen += c.frozen;
    out->live += c.live;
    out->kept += c.kept;
    out->freed_bytes += c.freed_bytes;
    if (c.set_visible) out->pages_marked_visible++;
    out->cost_total += cost;
    balance += cost;
    if (st == HS_OK) {
      fb.block[fb.n] = blk;
      fb.room[fb.n++] = c.free_now;
      if (fb.n == fb.cap) st = fsm_flush(h, &fb, out);
    }
    delay_point(o, &balance, out);
    if (t) throttle_point(t, c.changed && !was_dirty);
    if (st == HS_OK && o->after_page) o->after_page(o->after_page_ctx, blk);
  }
  if (st == HS_OK) st = fsm_flush(h, &fb, out);
  free(fb.block);
  free(fb.room);
  if (t) {
    throttle_finish(t);
    out->idle_priority = t->idle_priority;
    out->idle_priority_dropped = t->idle_priority_dropped;
  }
  out->throttle_sleep_ms = t ? t->sleep_ms : 0;
  out->throttle_mean_duty = t ? throttle_mean_duty(t) : 1;
  if (t && t->state.slope_known) {
    out->throttle_slope = t->state.slope;
    out->throttle_slope_se = t->state.slope_se;
    out->throttle_slope_trusted = t->state.slope_trusted;
  }
  out->seconds = (now_ms() - t0) / 1e3;
  return st;
}
