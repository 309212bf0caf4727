/*
 * pool/strategy_internal.h — a ring, as the pool's victim choice sees it
 * (freelist.c asks it first; strategy.c says what it may reuse).
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
  uint32_t current;  /* the slot used last */
  hs_buf *bufs;      /* max_size slots; HS_INVALID_BUF = empty */
  /* Adaptive sizing: the foreground hit ratio, watched every few dozen ring
   * allocations. */
  uint32_t since_check;
  uint64_t last_hits, last_reads;
  double hit_ratio_avg; /* < 0: no baseline yet */
};

/* The ring's next slot, pinned by us in its state word (*state: its state
 * as pinned), if its buffer may be recycled; else HS_INVALID_BUF (a dirty
 * buffer a bulkread ring rejects is dropped from its slot). */
hs_buf strategy_get_buffer(hs_strategy *ring, uint32_t *state);
/* Buffer b, taken from the free list or the policy for this ring, fills
 * the slot strategy_get_buffer last looked at. */
void strategy_add_buffer(hs_strategy *ring, hs_buf b);

/* The adaptive ring's hooks, called by victim choice (freelist.c). */
void strategy_note_wal_flush(hs_strategy *s);
void strategy_note_allocation(hs_strategy *s);

#endif
