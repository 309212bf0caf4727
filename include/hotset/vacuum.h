/*
 * hotset/vacuum.h — removing dead versions from a heap (hotset/heap.h),
 * paced by PostgreSQL's cost-based delay or by a throttle that watches the
 * foreground.
 *
 * One pass over the heap's pages, read through a strategy (the vacuum ring,
 * hotset/strategy.h, or none), skipping those the visibility map calls
 * all-visible (unless freezing): on each page, versions whose deleter
 * committed below the horizon taken at the start (hs_xact_horizon) and
 * those whose creator aborted are removed and the page compacted; with
 * `freeze`, live versions get HS_XACT_FROZEN as creator. The index entries
 * of removed chain roots move to their successors first.
 *
 * Cost-based delay, PostgreSQL's knobs and meanings: each page read costs
 * cost_page_hit (found in the pool) or cost_page_miss (read), each page
 * vacuum changes from clean to dirty costs cost_page_dirty; when the
 * balance reaches cost_limit, vacuum sleeps cost_delay_ms (scaled by how
 * far past the limit it is, at most 4×, as PostgreSQL's vacuum_delay_point)
 * and the balance starts again. cost_delay_ms 0: never sleeps, but the
 * costs are still counted.
 *
 * The throttle (`--throttle auto`): the foreground reports each operation's
 * latency (hs_throttle_observe); what it reported before the vacuum started
 * is its baseline, and the vacuum works only the share of wall time that
 * keeps the foreground's mean latency within `budget` of it, sleeping in
 * short slices, less while a checkpoint runs behind its schedule.
 *
 * Threads: hs_vacuum runs on the calling thread while other threads insert,
 * update, delete and look up in the same heap and index. It locks one heap
 * page at a time, exclusively while it prunes it, and inside that lock the
 * index page of an entry it moves; the heap and index calls never take
 * those locks the other way round. Run one vacuum of a heap at a time.
 *
 * Names, errors, ownership and threads follow docs/api.md; a call says
 * only where it differs.
 */
#ifndef HOTSET_VACUUM_H
#define HOTSET_VACUUM_H

#include "hotset/heap.h"
#include "hotset/status.h"
#include "hotset/strategy.h"

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The public API: exported from libhotset.so, which is otherwise built with
 * -fvisibility=hidden so its internals stay private. */
#pragma GCC visibility push(default)

/* ---- the throttle ---- */

typedef struct hs_throttle_options {
  double budget;         /* the foreground may be this much slower: 0.05 */
  double window_ms;      /* how often the controller decides: 25 */
  uint32_t min_samples;  /* foreground operations a window needs to count: 64 */
  double gain;           /* 0.1 */
  double min_duty;       /* vacuum never drops below this share: 0.1 (a vacuum
                            that never finishes fails the foreground too) */
  double start_duty;     /* 0.25 */
  double slice_ms;       /* vacuum works in slices about this long: 2 */
  bool checkpoint_aware; /* true */
  bool idle_priority;    /* true: SCHED_IDLE while vacuuming (Linux) */
  bool yield_each_page;  /* true: give the CPU up after each page */
} hs_throttle_options;

/* Fills in the defaults above. */
void hs_throttle_options_init(hs_throttle_options *o);

typedef struct hs_throttle hs_throttle;

/* A throttle with options `o` (NULL: the defaults), for one vacuum run
 * (hs_vacuum_options.throttle): its baseline is everything the foreground
 * reported since it was created. HS_ERR_INVALID naming an option out of
 * range; HS_ERR_NOMEM. */
hs_status hs_throttle_create(const hs_throttle_options *o, hs_throttle **out);
/* Frees the throttle, once no vacuum uses it and no thread reports to it. */
void hs_throttle_destroy(hs_throttle *t);
/* The foreground: one operation took `ns` nanoseconds. Any thread, at any
 * time (before, during and after the vacuum); lock-free, two relaxed atomic
 * adds. */
void hs_throttle_observe(hs_throttle *t, uint64_t ns);

/* ---- vacuum ---- */

typedef struct hs_vacuum_options {
  hs_strategy *strategy; /* NULL: through the normal policy */
  bool freeze;
  uint32_t cost_page_hit;   /* 1 */
  uint32_t cost_page_miss;  /* 2 (PostgreSQL 14+; 10 before) */
  uint32_t cost_page_dirty; /* 20 */
  uint32_t cost_limit;      /* 200 */
  double cost_delay_ms;     /* 0: no sleeping */
  /* The throttle, started when the run starts (what the foreground
   * reported so far is its baseline), asked after every page; the costs
   * above are still counted, and still slept on if cost_delay_ms is set.
   * One vacuum at a time may use a throttle. NULL: no throttle. */
  hs_throttle *throttle;
  /* The free-space map learns each page's room every fsm_every pages
   * during the run (default 8), not only at its end: inserts during a long
   * vacuum can use what it has freed so far (the 2017 finding). 0: at the
   * end only, as PostgreSQL before 11 did for big tables. */
  uint32_t fsm_every;
  /* Skip pages the visibility map calls all-visible (default true;
   * PostgreSQL's DISABLE_PAGE_SKIPPING is false). Freezing never skips. */
  bool skip_all_visible;
  /* Called on the vacuuming thread after each page with its number
   * (progress reports; tests act in the middle of a run with it). NULL:
   * none. */
  void (*after_page)(void *ctx, hs_blockno block);
  void *after_page_ctx;
} hs_vacuum_options;

/* Fills in the defaults above. */
void hs_vacuum_options_init(hs_vacuum_options *o);

typedef struct hs_vacuum_stats {
  uint64_t pages_scanned, pages_dirtied, page_hits, page_misses;
  uint64_t pages_skipped;        /* all-visible in the visibility map: not read */
  uint64_t pages_marked_visible; /* found all-visible and marked so */
  uint64_t removed, frozen, live, freed_bytes, index_moves;
  uint64_t kept; /* dead but further down an update chain: left for the next pass */
  uint64_t cost_total, cost_sleeps;
  uint64_t fsm_updates;      /* pages whose room the free-space map was told */
  double sleep_ms, seconds;  /* sleep_ms: cost-based delay's */
  double throttle_sleep_ms;  /* the throttle's sleeps */
  double throttle_mean_duty; /* its mean duty cycle (1 without one) */
  /* The throttle's last measured slope of the foreground's excess in duty
   * and its standard error (0 if duty never varied enough to measure one),
   * and whether it stood out of its noise (docs/vacuum.md). */
  double throttle_slope, throttle_slope_se;
  bool throttle_slope_trusted;
  bool idle_priority;         /* the run began at SCHED_IDLE (throttle's idle_priority) */
  bool idle_priority_dropped; /* ... and left it, starved by a busy foreground */
} hs_vacuum_stats;

/* Vacuums heap `h` with options `o` (NULL: the defaults), moving the
 * entries of index `ix` (NULL: none) off the versions it removes; *out
 * says what it did, also after an error (the pages done by then). Errors:
 * HS_ERR_INVALID when the throttle has no baseline (the foreground
 * reported nothing before the start); HS_ERR_NOMEM; storage, log and
 * index errors, which stop the pass at the page where they happened. */
hs_status hs_vacuum(hs_heap *h, hs_pk_index *ix, const hs_vacuum_options *o, hs_vacuum_stats *out);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
