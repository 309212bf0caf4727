/*
 * pool/strategy_internal.h — a ring, as the pool's victim choice sees it
 * (freelist.c asks it first; strategy.c says what it may reuse).
 */
#ifndef HOTSET_POOL_STRATEGY_INTERNAL_H
#define HOTSET_POOL_STRATEGY_INTERNAL_H

#include "hotset/stats.h"
#include "hotset/strategy.h"

/* Forced WAL flushes the adaptive ring's growth rule looks back over. */
#define STRATEGY_FLUSH_GAPS 8u

struct hs_strategy {
  hs_pool *pool;
  hs_strategy_kind kind;
  hs_io_context ctx;
  hs_strategy_options config;
  uint32_t size;       /* slots in use now */
  uint32_t max_size;   /* slots allocated (the adaptive ring's cap) */
  uint32_t current;    /* the slot used last */
  hs_buf *bufs;        /* max_size slots; HS_INVALID_BUF = empty */
  uint32_t floor_size; /* the adaptive ring never shrinks below this */
  uint32_t ceiling;    /* nor grows past this: max_size, lowered where harm was seen */
  /* What the ring did (hs_strategy_stats_get). */
  uint64_t allocations, reuses, wal_flushes, grows, shrinks, windows, harm_windows;
  /* Growth: the recycles between each of the last few forced WAL flushes. */
  uint64_t flush_gaps[STRATEGY_FLUSH_GAPS];
  uint32_t nflush_gaps;     /* filled entries */
  uint64_t reuses_at_flush; /* reuses counted at the last forced flush */
  /* Harm: the foreground (normal-context) window, looked at every few
   * dozen ring allocations, judged once it holds enough accesses. */
  uint32_t since_check;
  uint64_t last_hits, last_reads;      /* the counters when the window began */
  bool foreground_seen;                /* some window had foreground accesses */
  uint32_t baseline_windows;           /* harmless windows in the baseline */
  double hit_ratio_avg, hit_ratio_var; /* the baseline: their mean and spread */
  uint32_t harm_streak;                /* harmful windows in a row */
};

/* The ring's next slot, pinned by us in its state word (*state: its state
 * as pinned), if its buffer may be recycled; else HS_INVALID_BUF (a dirty
 * buffer a bulkread ring rejects is dropped from its slot). */
hs_buf strategy_get_buffer(hs_strategy *ring, uint32_t *state);
/* Buffer b, taken from the free list or the policy for this ring, fills
 * the slot strategy_get_buffer last looked at. */
void strategy_add_buffer(hs_strategy *ring, hs_buf b);

/* What victim choice (freelist.c) tells the ring: counted for every ring,
 * and the adaptive ring's inputs. */
void strategy_note_wal_flush(hs_strategy *s);
/* A buffer was taken under the ring: its own slot's (reused) or one from
 * the free list or the policy. */
void strategy_note_allocation(hs_strategy *s, bool reused);

#endif
