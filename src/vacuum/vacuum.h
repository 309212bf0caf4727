/*
 * vacuum/vacuum.h — removing dead versions from a heap, with PostgreSQL's
 * cost-based delay.
 *
 * One pass over the heap's pages, read through a strategy (the vacuum ring,
 * hotset/strategy.h, or none), skipping those the visibility map calls
 * all-visible (unless freezing): each page is pruned (heap_prune: versions
 * whose deleter committed below the oldest-running horizon, and those whose
 * creator aborted, are removed, the page compacted; with `freeze`, live
 * versions get the frozen creator), the index entries of removed chain
 * roots moved to their successors first.
 *
 * Cost-based delay, PostgreSQL's knobs and meanings: each page read costs
 * cost_page_hit (found in the pool) or cost_page_miss (read), each page
 * vacuum changes from clean to dirty costs cost_page_dirty; when the
 * balance reaches cost_limit, vacuum sleeps cost_delay_ms (scaled by how
 * far past the limit it is, at most 4×, as PostgreSQL's vacuum_delay_point)
 * and the balance starts again. cost_delay_ms 0: never sleeps, but the
 * costs are still counted.
 */
#ifndef HOTSET_VACUUM_VACUUM_H
#define HOTSET_VACUUM_VACUUM_H

#include "heap/pk_index.h"
#include "hotset/strategy.h"
#include "vacuum/throttle.h"

typedef struct vacuum_options {
  hs_strategy *strategy; /* NULL: through the normal policy */
  bool freeze;
  uint32_t cost_page_hit;   /* 1 */
  uint32_t cost_page_miss;  /* 2 (PostgreSQL 14+; 10 before) */
  uint32_t cost_page_dirty; /* 20 */
  uint32_t cost_limit;      /* 200 */
  double cost_delay_ms;     /* 0: no sleeping */
  /* `--throttle auto` (vacuum/throttle.h): started when the run starts
   * (what the foreground reported so far is its baseline), asked after
   * every page; the costs above are still counted, and still slept on if
   * cost_delay_ms is set. NULL: no throttle. */
  throttle *throttle;
  /* The free-space map learns each page's room every fsm_every pages
   * during the run (default 8), not only at its end: inserts during a long
   * vacuum can use what it has freed so far (the 2017 finding). 0: at the
   * end only, as PostgreSQL before 11 did for big tables. */
  uint32_t fsm_every;
  /* Skip pages the visibility map calls all-visible (default true;
   * PostgreSQL's DISABLE_PAGE_SKIPPING is false). Freezing never skips. */
  bool skip_all_visible;
  /* Called after each page with its number (progress reports; tests act
   * in the middle of a run with it). NULL: none. */
  void (*after_page)(void *ctx, hs_blockno block);
  void *after_page_ctx;
} vacuum_options;

void vacuum_options_init(vacuum_options *o);

typedef struct vacuum_stats {
  uint64_t pages_scanned, pages_dirtied, page_hits, page_misses;
  uint64_t pages_skipped;        /* all-visible in the visibility map: not read */
  uint64_t pages_marked_visible; /* found all-visible and marked so */
  uint64_t removed, frozen, live, freed_bytes, index_moves;
  uint64_t kept; /* dead but further down an update chain: left for the next pass */
  uint64_t cost_total, cost_sleeps;
  uint64_t fsm_updates;       /* pages whose room the free-space map was told */
  double sleep_ms, seconds;   /* sleep_ms: cost-based delay's */
  double throttle_sleep_ms;   /* the throttle's sleeps */
  double throttle_mean_duty;  /* its mean duty cycle (1 without one) */
  bool idle_priority;         /* the run began at SCHED_IDLE (throttle's idle_priority) */
  bool idle_priority_dropped; /* ... and left it, starved by a busy foreground */
} vacuum_stats;

/* Vacuums the heap (and moves `ix`'s entries, if given). */
hs_status vacuum_heap(heap *h, pk_index *ix, const vacuum_options *o, vacuum_stats *out);

#endif
