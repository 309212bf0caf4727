/*
 * pool/bgwriter.c — the background writer: dirty pages written before a
 * miss needs their buffers, so that the miss finds a clean victim and does
 * not wait for a write (and the WAL flush before it) on its own time.
 *
 * The rule is PostgreSQL's BgBufferSync, "LRU" half. Every round:
 *
 *  1. recent allocations: the buffers misses took since the last round
 *     (free list or policy; a ring reusing its own slot does not count);
 *  2. smoothed: if the recent count is at least the smoothed one it
 *     becomes the smoothed one at once (a burst is believed at once), else
 *     the smoothed one moves 1/16 of the way towards it (a lull is believed
 *     slowly) — so the estimate is never below the last round's count;
 *  3. the target: smoothed × bgwriter_lru_multiplier buffers should be
 *     clean and reusable when the misses of the next round come;
 *  4. the policy lists its upcoming victims (hs_policy_upcoming_victims:
 *     clock-sweep looks ahead of its hand, list policies read their victim
 *     end, each policy's file says how), as many as the target, and the
 *     round walks them in order: a clean, unpinned one counts towards the
 *     target as it is; a dirty, unpinned one is written and counts; a
 *     pinned one (in use: its page will not be a victim soon) is passed.
 *     It stops at the target, at the end of the list, or when it has
 *     written bgwriter_lru_maxpages (a round "stopped at the maximum",
 *     maxwritten_clean).
 *
 * Writes go through pool_write_buffer (writeback.c), the pool's one write
 * path: WAL first, IO_IN_PROGRESS against a second writer, a failed write
 * leaving the page dirty. The writer pins the buffer in its state word
 * under the header lock, only if nobody has it pinned, and only *tries*
 * its content lock (share): a thread holding the lock exclusively is
 * changing the page, and the writer never waits for a foreground thread.
 * The context is normal (the writes are counted there, and the WAL flushes
 * they force as a normal eviction's).
 *
 * The thread sleeps on a condition variable with a timeout of
 * bgwriter_delay_ms; closing or abandoning the pool sets `stop` and
 * signals it, so the pool never waits out a delay and never relies on a
 * sleep. Rounds are serialized by round_lock, so hs_pool_bgwriter_round
 * (the tests' deterministic round) may run beside the thread.
 *
 * Left out from PostgreSQL: the "all" scan of 8.x, the minimum progress
 * through the whole pool when nothing is allocated (PostgreSQL scans
 * NBuffers per two minutes so an idle pool ends up clean; here an idle
 * pool's writer writes nothing, and the checkpoint cleans it), and
 * hibernation (a round with nothing to do still wakes every delay).
 */
#include "core/error.h"
#include "core/thread_name.h"
#include "pool/pins.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* PostgreSQL's smoothing_samples: the smoothed allocation rate moves
 * 1/16 of the way towards a lower recent count each round. */
#define SMOOTHING_ROUNDS 16.0

hs_status bgwriter_check_options(const hs_pool_options *opts) {
  uint32_t delay = opts->bgwriter_delay_ms;
  if (delay != 0 &&
      (delay < HS_POOL_BGWRITER_MIN_DELAY_MS || delay > HS_POOL_BGWRITER_MAX_DELAY_MS))
    return hs_fail(HS_ERR_INVALID, 0,
                   "hs_pool_open: option bgwriter_delay_ms: %u is neither 0 (no writer) nor "
                   "from %u to %u",
                   delay, HS_POOL_BGWRITER_MIN_DELAY_MS, HS_POOL_BGWRITER_MAX_DELAY_MS);
  if (opts->bgwriter_lru_maxpages > HS_POOL_MAX_PAGES)
    return hs_fail(HS_ERR_INVALID, 0,
                   "hs_pool_open: option bgwriter_lru_maxpages: %u is more than %u pages",
                   opts->bgwriter_lru_maxpages, HS_POOL_MAX_PAGES);
  double m = opts->bgwriter_lru_multiplier;
  /* Written so that a NaN fails too. */
  if (!(m >= 0 && m <= HS_POOL_BGWRITER_MAX_MULTIPLIER))
    return hs_fail(HS_ERR_INVALID, 0,
                   "hs_pool_open: option bgwriter_lru_multiplier: %g is outside [0, %g]", m,
                   HS_POOL_BGWRITER_MAX_MULTIPLIER);
  return HS_OK;
}

typedef enum sync_result { SYNC_SKIPPED, SYNC_REUSABLE, SYNC_WRITTEN } sync_result;

/* PostgreSQL's SyncOneBuffer for one upcoming victim: pinned, not holding
 * a page or under I/O: passed; clean: reusable as it is; dirty: written if
 * its content lock can be had at once (and the write succeeds). */
static sync_result sync_one(hs_pool *pool, hs_buf b) {
  hs_bufdesc *d = pool_desc(pool, b);
  hs_bufstate *ds = pool_bstate(pool, b);
  uint32_t s = buf_hdr_lock(ds);
  /* Being written by someone else: it will be clean, and the writer never
   * waits for another thread's I/O. */
  if (!(s & BM_VALID) || (s & BM_IO_IN_PROGRESS) || pool_pinned(pool, b, s)) {
    buf_hdr_unlock(ds, s);
    return SYNC_SKIPPED;
  }
  if (!(s & BM_DIRTY)) {
    buf_hdr_unlock(ds, s);
    return SYNC_REUSABLE;
  }
  buf_hdr_unlock(ds, s + BUF_REFCOUNT_ONE);
  sync_result r = SYNC_SKIPPED;
  if (content_lock_try(&d->content_lock, HS_LOCK_SHARE)) {
    bool wrote = false;
    /* A failed write leaves the page dirty and counts as a write error;
     * the miss that wants the buffer will try again and report it. */
    if (pool_write_buffer(pool, b, HS_IOCTX_NORMAL, &wrote, NULL) == HS_OK && wrote)
      r = SYNC_WRITTEN;
    content_lock_release(&d->content_lock, lock_stripe(pool, b));
  }
  unpin_victim(pool, b);
  return r;
}

/* The number of buffers to have reusable: the smoothed allocations times
 * the multiplier, rounded up, at most the pool. The caller holds
 * round_lock. */
static uint32_t round_target(hs_pool *pool, bgwriter *w) {
  uint64_t allocs = atomic_load_explicit(&w->count[BGW_ALLOC], memory_order_relaxed);
  double recent = (double)(allocs - w->allocs_before);
  w->allocs_before = allocs;
  if (recent >= w->smoothed_allocs)
    w->smoothed_allocs = recent;
  else
    w->smoothed_allocs += (recent - w->smoothed_allocs) / SMOOTHING_ROUNDS;
  double want = w->smoothed_allocs * w->lru_multiplier;
  if (want >= (double)pool->nbuffers) return pool->nbuffers;
  uint32_t whole = (uint32_t)want;
  return whole + ((double)whole < want);
}

static hs_status round_locked(hs_pool *pool, uint32_t *written) {
  bgwriter *w = &pool->bgw;
  uint32_t target = round_target(pool, w);
  atomic_fetch_add_explicit(&w->count[BGW_ROUNDS], 1, memory_order_relaxed);
  *written = 0;
  if (target == 0 || w->lru_maxpages == 0) return HS_OK;
  /* Allocated by the first round that needs it: a pool whose writer never
   * runs does not pay 4 bytes a buffer for it. */
  if (!w->upcoming && !(w->upcoming = malloc(sizeof *w->upcoming * pool->nbuffers)))
    return hs_fail(HS_ERR_NOMEM, 0, "background writer: no memory to list %u buffers",
                   pool->nbuffers);
  policy_lock(pool, pool->lock_others);
  uint32_t n = hs_policy_upcoming_victims(pool->policy, w->upcoming, target);
  policy_unlock(pool, pool->lock_others);
  uint32_t reusable = 0;
  for (uint32_t i = 0; i < n && reusable < target; i++) {
    sync_result r = sync_one(pool, (hs_buf)w->upcoming[i]);
    if (r == SYNC_REUSABLE) reusable++;
    if (r != SYNC_WRITTEN) continue;
    reusable++;
    atomic_fetch_add_explicit(&w->count[BGW_CLEAN], 1, memory_order_relaxed);
    if (++*written >= w->lru_maxpages) {
      atomic_fetch_add_explicit(&w->count[BGW_MAXWRITTEN], 1, memory_order_relaxed);
      break;
    }
  }
  return HS_OK;
}

hs_status hs_pool_bgwriter_round(hs_pool *pool, uint32_t *written) {
  uint32_t ignored;
  if (!written) written = &ignored;
  *written = 0;
  if (!pool) return hs_fail(HS_ERR_MISUSE, 0, "hs_pool_bgwriter_round: no pool");
  pthread_mutex_lock(&pool->bgw.round_lock);
  hs_status st = round_locked(pool, written);
  pthread_mutex_unlock(&pool->bgw.round_lock);
  return st;
}

/* The absolute CLOCK_MONOTONIC time delay_ms from now. */
static struct timespec deadline_after(uint32_t delay_ms) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  t.tv_sec += delay_ms / 1000;
  t.tv_nsec += (long)(delay_ms % 1000) * 1000000L;
  if (t.tv_nsec >= 1000000000L) {
    t.tv_sec++;
    t.tv_nsec -= 1000000000L;
  }
  return t;
}

static void *writer_main(void *arg) {
  hs_pool *pool = arg;
  bgwriter *w = &pool->bgw;
  pthread_mutex_lock(&w->mu);
  while (!w->stop) {
    pthread_mutex_unlock(&w->mu);
    uint32_t written;
    /* Out of memory for its list: the next round tries again. */
    (void)hs_pool_bgwriter_round(pool, &written);
    pthread_mutex_lock(&w->mu);
    struct timespec until = deadline_after(w->delay_ms);
    /* Until the delay is over or close says stop (a spurious wake-up goes
     * back to sleep, so the rounds keep their pace). */
    while (!w->stop && pthread_cond_timedwait(&w->wake, &w->mu, &until) != ETIMEDOUT) {
    }
  }
  pthread_mutex_unlock(&w->mu);
  return NULL;
}

hs_status bgwriter_start(hs_pool *pool, const hs_pool_options *opts) {
  bgwriter *w = &pool->bgw;
  w->delay_ms = opts->bgwriter_delay_ms;
  w->lru_maxpages = opts->bgwriter_lru_maxpages;
  w->lru_multiplier = opts->bgwriter_lru_multiplier;
  for (int i = 0; i < BGW_NSTATS; i++) atomic_init(&w->count[i], 0);
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  pthread_cond_init(&w->wake, &attr);
  pthread_condattr_destroy(&attr);
  pthread_mutex_init(&w->mu, NULL);
  pthread_mutex_init(&w->round_lock, NULL);
  w->initialized = true;
  return bgwriter_thread_start(pool);
}

hs_status bgwriter_thread_start(hs_pool *pool) {
  bgwriter *w = &pool->bgw;
  if (!w->initialized || w->running || w->delay_ms == 0) return HS_OK;
  w->stop = false;
  int rc = pthread_create(&w->thread, NULL, writer_main, pool);
  if (rc != 0)
    return hs_fail(HS_ERR_IO, rc, "background writer: could not start its thread: %s",
                   strerror(rc));
  hs_name_thread(w->thread, "hs-bgwriter");
  w->running = true;
  return HS_OK;
}

void bgwriter_thread_stop(hs_pool *pool) {
  bgwriter *w = &pool->bgw;
  if (!w->initialized || !w->running) return;
  pthread_mutex_lock(&w->mu);
  w->stop = true;
  pthread_cond_signal(&w->wake);
  pthread_mutex_unlock(&w->mu);
  pthread_join(w->thread, NULL);
  w->running = false;
}

void bgwriter_stop(hs_pool *pool) {
  bgwriter *w = &pool->bgw;
  if (!w->initialized) return;
  bgwriter_thread_stop(pool);
  pthread_cond_destroy(&w->wake);
  pthread_mutex_destroy(&w->mu);
  pthread_mutex_destroy(&w->round_lock);
  free(w->upcoming);
  w->initialized = false;
}

void bgwriter_stats_reset(bgwriter *w) {
  for (int i = 0; i < BGW_NSTATS; i++)
    w->base[i] = atomic_load_explicit(&w->count[i], memory_order_relaxed);
}

hs_status hs_pool_bgwriter_stats_get(const hs_pool *cpool, hs_pool_bgwriter_stats *out) {
  if (!cpool || !out)
    return hs_fail(HS_ERR_MISUSE, 0, "hs_pool_bgwriter_stats_get: pool and out are required");
  hs_pool *pool = (hs_pool *)cpool; /* takes the statistics' mutex; changes nothing */
  memset(out, 0, sizeof *out);
  bgwriter *w = &pool->bgw;
  uint64_t v[BGW_NSTATS];
  pthread_mutex_lock(&pool->stats_lock);
  for (int i = 0; i < BGW_NSTATS; i++)
    v[i] = atomic_load_explicit(&w->count[i], memory_order_relaxed) - w->base[i];
  pthread_mutex_unlock(&pool->stats_lock);
  out->rounds = v[BGW_ROUNDS];
  out->buffers_clean = v[BGW_CLEAN];
  out->maxwritten_clean = v[BGW_MAXWRITTEN];
  out->buffers_backend = v[BGW_BACKEND];
  out->buffers_alloc = v[BGW_ALLOC];
  return HS_OK;
}
