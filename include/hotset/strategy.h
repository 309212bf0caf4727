/*
 * hotset/strategy.h — buffer access strategies: rings of buffers for big
 * scans, bulk writes and vacuum, after PostgreSQL's BufferAccessStrategy.
 *
 * A big sequential scan that reads through the normal policy pushes every
 * hot page out of the pool ("the buffer cache is not scan resistant").
 * PostgreSQL 8.3's answer: the scan recycles a small ring of buffers. A
 * strategy is that ring, owned by one scan (one thread at a time):
 *
 *   - each read under the strategy advances to the ring's next slot; if the
 *     slot's buffer is unpinned and nobody but this ring used it since, it is
 *     reused for the new block (a "reuse"); otherwise a buffer comes from the
 *     policy and takes the slot (an "eviction" in the strategy's context);
 *   - an access under a ring never raises a page's standing in the policy
 *     beyond "used once" (HS_HINT_RING), so the ring cannot push hot pages
 *     out;
 *   - a dirty slot buffer whose WAL is not yet durable: a bulkread ring
 *     rejects it and takes another buffer (a "reject"); bulkwrite and vacuum
 *     rings flush the WAL up to its LSN and write it (a "WAL flush" in the
 *     strategy's context) — the cost the vacuum ring-size debate is about.
 *
 * Ring sizes (hs_strategy_options): a fixed size (defaults 256 KiB bulkread,
 * 16 MiB bulkwrite, 2 MiB vacuum), min(pool/8/workers, 16 MiB), a fraction
 * of the pool, off (no ring: the access goes through the normal policy), or
 * adaptive, for vacuum: it starts at 16 buffers and grows by one each time
 * reusing a slot forces a WAL flush, while that pays — such flushes come at
 * least once per 100 recycles, and about once per lap of the ring, so a
 * longer lap spaces them out (up to 16 MiB; with a foreground about, only
 * once 8 windows of it have given a baseline); when the foreground
 * (normal-context) hit ratio falls below its baseline by more than a point
 * and more than three times the noise (a window's binomial error, or the
 * spread the baseline's windows showed) in two windows of at least 1024
 * foreground accesses running, it gives back a quarter of its buffers and
 * never grows past that size again. So it settles instead of halving and
 * regrowing. Every ring is capped at 1/8 of the pool.
 *
 * Names, errors, ownership and threads follow docs/api.md; a call says
 * only where it differs.
 */
#ifndef HOTSET_STRATEGY_H
#define HOTSET_STRATEGY_H

#include "hotset/pool.h"
#include "hotset/status.h"

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The public API: exported from libhotset.so, which is otherwise built with
 * -fvisibility=hidden so its internals stay private. */
#pragma GCC visibility push(default)

typedef enum hs_strategy_kind {
  HS_STRATEGY_BULKREAD = 0, /* large sequential scans */
  HS_STRATEGY_BULKWRITE,    /* bulk loads (COPY) */
  HS_STRATEGY_VACUUM,       /* vacuum */
  HS_STRATEGY_KIND_COUNT
} hs_strategy_kind;

typedef enum hs_ring_rule {
  HS_RING_FIXED = 0, /* `bytes`, or the kind's default when 0 */
  HS_RING_WORKERS,   /* min(pool / 8 / workers, 16 MiB) */
  HS_RING_FRACTION,  /* fraction * pool */
  HS_RING_OFF,       /* no ring */
  HS_RING_ADAPTIVE   /* grows on forced WAL flushes, shrinks for good when
                        the foreground's hits suffer */
} hs_ring_rule;

typedef struct hs_strategy_options {
  hs_ring_rule rule;
  uint64_t bytes;     /* HS_RING_FIXED: 0 = the kind's default */
  unsigned workers;   /* HS_RING_WORKERS */
  double fraction;    /* HS_RING_FRACTION */
  bool recycle_first; /* lru only (the other policies ignore it): pages read
                         under the ring go to the victim end (the 2003
                         proposal) */
  /* The ring writes the pages it dirtied itself, when it comes round to
   * them (or a checkpoint does): other readers' victim searches pass over
   * them while they are dirty and nobody else has used them, so a
   * foreground never pays a background job's page writes (nor the log
   * flushes before them). Off: PostgreSQL's rule, where whoever's clock
   * hand finds the page writes it. Only when nothing else can be evicted
   * does a search take one of them. */
  bool own_writes;
} hs_strategy_options;

/* Parses "fixed", "fixed:256KiB", "workers:4", "fraction:0.03", "off",
 * "adaptive", each optionally followed by ",recycle-first" and
 * ",own-writes" (either order). A fixed size is
 * a whole number of bytes with an optional unit B, K, M, G or T (also
 * written KB or KiB, MB or MiB, ...; any case), each a power of 1024. */
hs_status hs_strategy_options_parse(const char *spec, hs_strategy_options *out);
/* Fills in the defaults: HS_RING_FIXED at the kind's default size, no
 * recycle-first, no own writes. */
void hs_strategy_options_init(hs_strategy_options *opts);
/* The kind's default size in bytes (256 KiB, 16 MiB, 2 MiB). */
uint64_t hs_strategy_default_bytes(hs_strategy_kind kind);
const char *hs_strategy_kind_name(hs_strategy_kind kind);

/* A ring for one scan. config NULL: the defaults (hs_strategy_options_init).
 * With HS_RING_OFF the strategy still counts its I/O in its context but
 * reads through the normal policy. */
hs_status hs_strategy_create(hs_pool *pool, hs_strategy_kind kind,
                             const hs_strategy_options *config, hs_strategy **out);
/* Frees the ring. An own_writes ring hands the dirty pages it still holds
 * back to everyone's victim searches, so it must be freed before its pool
 * is closed. */
void hs_strategy_destroy(hs_strategy *s);
/* Buffers the ring may hold now (0 when off). */
uint32_t hs_strategy_ring_size(const hs_strategy *s);

/* What one ring did. The pool counts per I/O context (hotset/stats.h), which
 * adds up every strategy of a kind; these are this ring's own. All zero for
 * a strategy that is off (it has no ring). */
typedef struct hs_strategy_stats {
  uint32_t size;         /* buffers the ring may hold now */
  uint32_t ceiling;      /* the most it may grow to: its size under the
                            fixed rules; for adaptive, its cap (16 MiB, at
                            most 1/8 of the pool), lowered when it shrank
                            because the foreground suffered */
  uint64_t allocations;  /* buffers taken under the ring: reuses, plus
                            buffers from the free list or the policy */
  uint64_t reuses;       /* its own slots recycled */
  uint64_t wal_flushes;  /* WAL flushes those reuses forced */
  uint64_t grows;        /* adaptive: buffers added, one per forced flush */
  uint64_t shrinks;      /* adaptive: quarters given back */
  uint64_t windows;      /* adaptive: foreground windows judged */
  uint64_t harm_windows; /* adaptive: of which the hit ratio had dropped
                            significantly */
} hs_strategy_stats;

/* The ring's counts and sizes; the owner's thread reads them, as it uses
 * the strategy (one thread at a time). */
hs_status hs_strategy_stats_get(const hs_strategy *s, hs_strategy_stats *out);
hs_strategy_kind hs_strategy_kind_of(const hs_strategy *s);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
