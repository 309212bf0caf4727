/*
 * pool/strategy_internal.h — a ring, as pool.c sees it.
 */
#ifndef HOTSET_POOL_STRATEGY_INTERNAL_H
#define HOTSET_POOL_STRATEGY_INTERNAL_H

#include "hotset/stats.h"
#include "hotset/strategy.h"

struct hs_strategy {
  hs_pool *pool;
  hs_strategy_kind kind;
  hs_io_context ctx;
  hs_ring_config config;
  uint32_t size;     /* slots in use now */
  uint32_t max_size; /* slots allocated (the adaptive ring's ceiling) */
  uint32_t min_size; /* the adaptive ring's floor */
  uint32_t current;  /* the slot used last */
  hs_buf *bufs;      /* max_size slots; HS_INVALID_BUF = empty */
  /* Adaptive sizing: the foreground hit ratio, watched every few dozen ring
   * allocations. */
  uint32_t since_check;
  uint64_t last_hits, last_reads;
  double hit_ratio_avg; /* < 0: no baseline yet */
};

/* The adaptive ring's hooks, called by pool.c. */
void strategy_note_wal_flush(hs_strategy *s);
void strategy_note_allocation(hs_strategy *s);

#endif
