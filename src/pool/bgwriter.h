/*
 * pool/bgwriter.h — the pool's background writer: its state and the hooks
 * the rest of the pool calls (bgwriter.c says how it works).
 */
#ifndef HOTSET_POOL_BGWRITER_H
#define HOTSET_POOL_BGWRITER_H

#include "hotset/pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* The counters behind hs_pool_bgwriter_stats, in its field order. */
enum { BGW_ROUNDS, BGW_CLEAN, BGW_MAXWRITTEN, BGW_BACKEND, BGW_ALLOC, BGW_NSTATS };

typedef struct bgwriter {
  uint32_t delay_ms; /* 0: no thread */
  uint32_t lru_maxpages;
  double lru_multiplier;

  /* The thread: sleeps on `wake` for delay_ms, or until close sets stop. */
  pthread_mutex_t mu;
  pthread_cond_t wake;
  bool stop;
  bool running;
  pthread_t thread;

  /* One round at a time (the thread's or hs_pool_bgwriter_round's); guards
   * what rounds carry from one to the next. */
  pthread_mutex_t round_lock;
  uint64_t allocs_before; /* buffers_alloc at the last round */
  double smoothed_allocs; /* allocations per round, smoothed */
  uint32_t *upcoming;     /* nbuffers: the policy's upcoming victims (NULL
                             until a round needs it) */

  /* Monotonic counters; a reset records a baseline to subtract. */
  _Atomic uint64_t count[BGW_NSTATS];
  uint64_t base[BGW_NSTATS]; /* under the pool's stats_lock */
  bool initialized;
} bgwriter;

/* The options' ranges, each refusal naming the option (HS_ERR_INVALID). */
hs_status bgwriter_check_options(const hs_pool_options *opts);
/* Sets the writer up for an opened pool and starts its thread if
 * bgwriter_delay_ms is not 0. */
hs_status bgwriter_start(hs_pool *pool, const hs_pool_options *opts);
/* Stops the thread (waking it, never waiting out its delay) and frees the
 * writer; nothing if it was never started. */
void bgwriter_stop(hs_pool *pool);
/* The thread alone, for hs_pool_close: stopped before it looks for pins
 * (the writer pins the buffer it writes), started again if the close
 * fails and the pool stays open. */
void bgwriter_thread_stop(hs_pool *pool);
hs_status bgwriter_thread_start(hs_pool *pool);
/* Zeroes hs_pool_bgwriter_stats_get (the caller holds stats_lock). */
void bgwriter_stats_reset(bgwriter *w);

/* A buffer taken for a new page: the allocations the estimate follows. */
static inline void bgwriter_note_alloc(bgwriter *w) {
  atomic_fetch_add_explicit(&w->count[BGW_ALLOC], 1, memory_order_relaxed);
}
/* A miss wrote its dirty victim itself: the write the writer is for. */
static inline void bgwriter_note_backend_write(bgwriter *w) {
  atomic_fetch_add_explicit(&w->count[BGW_BACKEND], 1, memory_order_relaxed);
}

#endif
