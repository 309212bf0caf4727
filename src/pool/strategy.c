/*
 * pool/strategy.c — buffer access strategies (hotset/strategy.h): creating
 * rings, sizing them, and using them. As PostgreSQL keeps GetBufferFromRing
 * and StrategyRejectBuffer beside StrategyGetBuffer, a ring's use lives here,
 * beside its size: victim choice (freelist.c) asks strategy_get_buffer for
 * the ring's next slot first, and tells the ring about the buffers it joins
 * (strategy_add_buffer), the allocations it makes and the WAL flushes its
 * reuses force (the adaptive ring's inputs).
 *
 * What a ring may reuse. A slot's buffer is recycled only if it still holds
 * a page (TAG_VALID), nobody has it pinned, and nobody but a ring has used it
 * since it was read (BM_RING, cleared by any normal access: the page has
 * become someone else's, PostgreSQL's usage count > 1). A bulkread ring also
 * rejects a dirty buffer whose write would force a WAL flush (the owner's
 * wal_needs_flush says so): the slot is emptied and the read takes a victim
 * from the free list or the policy instead, which then joins the ring. The
 * other rings write a dirty slot back, WAL first (freelist.c), and vacuum's
 * adaptive ring grows by one buffer each time that forced a flush.
 *
 * The sizing rules are the ones argued over on pgsql-hackers: 8.3's fixed
 * 256 KiB for scans and vacuum, 8.4's 16 MiB for bulk writes, 17's 2 MiB
 * vacuum default; the 2017 proposal min(pool/8/workers, 16 MiB); a share of
 * the pool per ring type; and the adaptive ring that was proposed and never
 * built. Whatever the rule, a ring never exceeds 1/8 of the pool: beyond that
 * it stops being a small ring and becomes a second policy.
 *
 * The adaptive ring. A small ring makes vacuum flush the WAL for almost every
 * page it dirties (82 % of recycles with a 1-page ring, 1.4 % with 128 pages,
 * as measured on the list); a big one protects the WAL but takes buffers from
 * the foreground. The first rule — grow by one buffer per forced flush, and
 * halve whenever the foreground (normal-context) hit ratio of the last 64
 * ring allocations fell a point below its running average — never settled:
 * 64 allocations see a few dozen foreground reads, whose hit ratio moves by
 * several points by chance alone, so it halved on noise, regrew one buffer
 * per lap, halved again. The rule now:
 *
 *   - grow by one buffer per forced flush, as before, but only while the
 *     last 8 forced flushes came at least once per 100 recycles (1 %).
 *     With every page dirtied a flush makes a whole lap durable, so a ring
 *     of n buffers forces one flush per n recycles: growth stops near 100
 *     buffers, where the next doubling would save one flush per 200 pages
 *     at the price of 100 more buffers taken from the foreground; and it
 *     stops at once when something else (a WAL writer) keeps the log
 *     flushed, since growth then buys nothing;
 *   - judge the foreground per window of at least 1024 foreground accesses
 *     (looked for every 64 ring allocations), not per 64 allocations: a
 *     window is harmful when its hit ratio is below the running average
 *     (weight 1/10 per window) by more than a point *and* by more than
 *     three binomial standard errors for its size, sqrt(p(1-p)/n) — a
 *     constant-probability foreground trips that once in ~700 windows;
 *   - shrink only when two windows running were harmful (a sustained drop;
 *     by chance about once in half a million windows), and then by a
 *     quarter, not a half, never below 16 buffers;
 *   - remember the size it shrank to as a ceiling that growth never crosses
 *     again. The harm appeared somewhere between the baseline's size and
 *     this one; the size after the cut is the biggest with no evidence
 *     against it. Without a ceiling the WAL pressure would grow the ring
 *     straight back into the harm and the cycle would return, only slower.
 *
 * Sizes only grow up to a fixed point (the 1 % target or the ceiling) and
 * each shrink lowers the ceiling, so after at most log4/3(cap / 16) shrinks
 * the size stops moving: it settles. The price is that a ceiling is never
 * raised: if the foreground goes quiet later in the pass, the ring stays
 * where harm was once seen. A strategy lives for one pass of one vacuum;
 * the next pass starts afresh.
 */
#include "core/error.h"
#include "core/size.h"
#include "pool/pins.h"
#include "pool/strategy_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB                  (1024ull * 1024ull)
#define ADAPTIVE_MIN_BUFFERS 16u
#define ADAPTIVE_CHECK_EVERY 64u   /* ring allocations between looks at the counters */
#define ADAPTIVE_WINDOW      1024u /* foreground accesses a window needs */
#define ADAPTIVE_DROP        0.01  /* a drop smaller than a point is no harm */
#define ADAPTIVE_SIGMAS      3.0   /* ... nor one within 3 standard errors */
#define ADAPTIVE_SUSTAINED   2u    /* harmful windows in a row before a shrink */
#define ADAPTIVE_FLUSH_EVERY 100u  /* grow while forced flushes come at least this often */

static const char *const kind_names[HS_STRATEGY_KIND_COUNT] = {"bulkread", "bulkwrite", "vacuum"};
static const hs_io_context kind_ctx[HS_STRATEGY_KIND_COUNT] = {HS_IOCTX_BULKREAD,
                                                               HS_IOCTX_BULKWRITE, HS_IOCTX_VACUUM};

const char *hs_strategy_kind_name(hs_strategy_kind kind) {
  return (unsigned)kind < HS_STRATEGY_KIND_COUNT ? kind_names[kind] : "unknown";
}

uint64_t hs_strategy_default_bytes(hs_strategy_kind kind) {
  switch (kind) {
  case HS_STRATEGY_BULKWRITE:
    return 16 * MIB;
  case HS_STRATEGY_VACUUM:
    return 2 * MIB;
  default:
    return 256 * 1024;
  }
}

hs_status hs_ring_config_parse(const char *spec, hs_ring_config *out) {
  if (!spec || !out) return hs_fail(HS_ERR_INVALID, 0, "hs_ring_config_parse: bad argument");
  char buf[128];
  if (strlen(spec) >= sizeof buf) return hs_fail(HS_ERR_INVALID, 0, "ring spec too long");
  strcpy(buf, spec);
  hs_ring_config c = {.rule = HS_RING_FIXED};
  char *recycle = strstr(buf, ",recycle-first");
  if (recycle) {
    if (strcmp(recycle, ",recycle-first") != 0)
      return hs_fail(HS_ERR_INVALID, 0, "ring \"%s\": recycle-first must come last", spec);
    c.recycle_first = true;
    *recycle = '\0';
  }
  char *arg = strchr(buf, ':');
  if (arg) *arg++ = '\0';
  if (!strcmp(buf, "fixed")) {
    c.rule = HS_RING_FIXED;
    /* One size grammar (core/size.h): a ring's size is written as every
     * size flag of the tool is, and "1GB" is refused here as there. */
    if (arg && hs_size_parse(arg, &c.bytes) != HS_OK) {
      char why[256];
      snprintf(why, sizeof why, "%s", hs_last_error());
      return hs_fail(HS_ERR_INVALID, 0, "ring \"%s\": %s", spec, why);
    }
    if (arg && c.bytes == 0)
      return hs_fail(HS_ERR_INVALID, 0, "ring \"%s\": a ring of 0 bytes (write off)", spec);
  } else if (!strcmp(buf, "workers")) {
    c.rule = HS_RING_WORKERS;
    char *end = NULL;
    unsigned long w = arg ? strtoul(arg, &end, 10) : 0;
    if (!arg || *end || w == 0 || w > 100000)
      return hs_fail(HS_ERR_INVALID, 0, "ring \"%s\": workers:N needs a positive count", spec);
    c.workers = (unsigned)w;
  } else if (!strcmp(buf, "fraction")) {
    c.rule = HS_RING_FRACTION;
    char *end = NULL;
    double f = arg ? strtod(arg, &end) : 0;
    if (!arg || *end || !(f > 0 && f <= 1))
      return hs_fail(HS_ERR_INVALID, 0, "ring \"%s\": fraction:X needs 0 < X <= 1", spec);
    c.fraction = f;
  } else if (!strcmp(buf, "off") && !arg) {
    c.rule = HS_RING_OFF;
  } else if (!strcmp(buf, "adaptive") && !arg) {
    c.rule = HS_RING_ADAPTIVE;
  } else {
    return hs_fail(HS_ERR_INVALID, 0,
                   "ring \"%s\": want fixed[:SIZE], workers:N, fraction:X, off or adaptive", spec);
  }
  *out = c;
  return HS_OK;
}

/* The ring's size in buffers under its rule, capped at 1/8 of the pool. */
static uint32_t ring_buffers(const hs_pool *pool, hs_strategy_kind kind, const hs_ring_config *c,
                             uint32_t *adaptive_max) {
  uint32_t nbuffers = hs_pool_nbuffers(pool), page = hs_pool_page_size(pool);
  uint32_t cap = nbuffers / 8 ? nbuffers / 8 : 1;
  uint64_t bytes;
  switch (c->rule) {
  case HS_RING_OFF:
    return 0;
  case HS_RING_WORKERS: {
    uint64_t share = (uint64_t)nbuffers * page / 8 / c->workers;
    bytes = share < 16 * MIB ? share : 16 * MIB;
    break;
  }
  case HS_RING_FRACTION:
    bytes = (uint64_t)((double)nbuffers * c->fraction) * page;
    break;
  case HS_RING_ADAPTIVE:
    *adaptive_max = (uint32_t)(16 * MIB / page);
    if (*adaptive_max > cap) *adaptive_max = cap;
    return ADAPTIVE_MIN_BUFFERS < *adaptive_max ? ADAPTIVE_MIN_BUFFERS : *adaptive_max;
  default:
    bytes = c->bytes ? c->bytes : hs_strategy_default_bytes(kind);
    break;
  }
  uint64_t n = bytes / page;
  if (n == 0) n = 1;
  return n > cap ? cap : (uint32_t)n;
}

hs_status hs_strategy_create(hs_pool *pool, hs_strategy_kind kind, const hs_ring_config *config,
                             hs_strategy **out) {
  if (!pool || !out || (unsigned)kind >= HS_STRATEGY_KIND_COUNT)
    return hs_fail(HS_ERR_INVALID, 0, "hs_strategy_create: bad argument");
  *out = NULL;
  hs_ring_config c = config ? *config : (hs_ring_config){.rule = HS_RING_FIXED};
  hs_strategy *s = calloc(1, sizeof *s);
  if (!s) return hs_fail(HS_ERR_NOMEM, 0, "could not allocate a %s ring", kind_names[kind]);
  s->pool = pool;
  s->kind = kind;
  s->ctx = kind_ctx[kind];
  s->config = c;
  uint32_t adaptive_max = 0;
  s->size = ring_buffers(pool, kind, &c, &adaptive_max);
  s->max_size = c.rule == HS_RING_ADAPTIVE ? adaptive_max : s->size;
  s->current = 0;
  s->floor_size = ADAPTIVE_MIN_BUFFERS < s->max_size ? ADAPTIVE_MIN_BUFFERS : s->max_size;
  s->ceiling = s->max_size;
  s->hit_ratio_avg = -1;
  if (s->config.rule == HS_RING_ADAPTIVE) {
    /* The first window starts now, not when the pool opened. */
    uint64_t counts[HS_IOCTX_COUNT][HS_STAT_COUNT];
    pool_counters(pool, counts);
    s->last_hits = counts[HS_IOCTX_NORMAL][HS_STAT_HITS];
    s->last_reads = counts[HS_IOCTX_NORMAL][HS_STAT_READS];
  }
  if (s->max_size) {
    s->bufs = malloc(sizeof *s->bufs * s->max_size);
    if (!s->bufs) {
      uint32_t n = s->max_size;
      free(s);
      return hs_fail(HS_ERR_NOMEM, 0, "could not allocate a ring of %u buffers", n);
    }
    for (uint32_t i = 0; i < s->max_size; i++) s->bufs[i] = HS_INVALID_BUF;
  }
  *out = s;
  return HS_OK;
}

void hs_strategy_free(hs_strategy *s) {
  if (!s) return;
  free(s->bufs);
  free(s);
}

uint32_t hs_strategy_ring_size(const hs_strategy *s) {
  return s ? s->size : 0;
}

void hs_strategy_stats(const hs_strategy *s, hs_ring_stats *out) {
  if (!out) return;
  if (!s) {
    *out = (hs_ring_stats){0};
    return;
  }
  *out = (hs_ring_stats){.size = s->size,
                         .ceiling = s->ceiling,
                         .allocations = s->allocations,
                         .reuses = s->reuses,
                         .wal_flushes = s->wal_flushes,
                         .grows = s->grows,
                         .shrinks = s->shrinks,
                         .windows = s->windows,
                         .harm_windows = s->harm_windows};
}

hs_strategy_kind hs_strategy_kind_of(const hs_strategy *s) {
  return s->kind;
}

bool hs_pool_scan_needs_ring(const hs_pool *pool, hs_blockno rel_blocks, uint32_t threshold_pages) {
  uint32_t threshold = threshold_pages ? threshold_pages : hs_pool_nbuffers(pool) / 4;
  return rel_blocks > threshold;
}

hs_buf strategy_get_buffer(hs_strategy *ring, uint32_t *state) {
  hs_pool *pool = ring->pool;
  ring->current = ring->current + 1 < ring->size ? ring->current + 1 : 0;
  hs_buf b = ring->bufs[ring->current];
  if (b == HS_INVALID_BUF) return HS_INVALID_BUF;
  hs_bufdesc *d = pool_desc(pool, b);
  uint32_t s = buf_hdr_lock(d);
  if ((s & (BM_RING | BM_TAG_VALID)) != (BM_RING | BM_TAG_VALID) || pool_pinned(pool, b, s)) {
    buf_hdr_unlock(d, s);
    return HS_INVALID_BUF;
  }
  if ((s & BM_DIRTY) && ring->kind == HS_STRATEGY_BULKREAD && pool_needs_wal_flush(pool, d)) {
    buf_hdr_unlock(d, s);
    ring->bufs[ring->current] = HS_INVALID_BUF;
    stat_add(&pool->stats, ring->ctx, HS_STAT_REJECTS, 1);
    return HS_INVALID_BUF;
  }
  s += BUF_REFCOUNT_ONE;
  buf_hdr_unlock(d, s);
  *state = s;
  return b;
}

void strategy_add_buffer(hs_strategy *ring, hs_buf b) {
  ring->bufs[ring->current] = b;
}

/* Whether the forced flushes are still frequent enough for growth to pay:
 * at least one per ADAPTIVE_FLUSH_EVERY recycles over the last few flushes
 * (this one included). */
static bool flushes_frequent(hs_strategy *s) {
  uint64_t gap = s->reuses + 1 - s->reuses_at_flush; /* the reuse being made counts */
  s->reuses_at_flush = s->reuses + 1;
  if (s->nflush_gaps == STRATEGY_FLUSH_GAPS)
    memmove(s->flush_gaps, s->flush_gaps + 1, sizeof s->flush_gaps - sizeof(uint64_t));
  else
    s->nflush_gaps++;
  s->flush_gaps[s->nflush_gaps - 1] = gap;
  uint64_t recycles = 0;
  for (uint32_t i = 0; i < s->nflush_gaps; i++) recycles += s->flush_gaps[i];
  return (uint64_t)s->nflush_gaps * ADAPTIVE_FLUSH_EVERY >= recycles;
}

void strategy_note_wal_flush(hs_strategy *s) {
  s->wal_flushes++;
  if (s->config.rule != HS_RING_ADAPTIVE) return;
  if (flushes_frequent(s) && s->size < s->ceiling) {
    s->size++;
    s->grows++;
  }
}

/* The foreground suffered: give back a quarter of the ring, and never grow
 * past what is left. */
static void shrink(hs_strategy *s) {
  uint32_t to = s->size - s->size / 4;
  if (to < s->floor_size) to = s->floor_size;
  s->ceiling = to;
  if (to == s->size) return;
  s->size = to;
  s->shrinks++;
  if (s->current >= s->size) s->current = 0;
}

/* One window of the foreground: `hits` of `n` accesses. */
static void judge_window(hs_strategy *s, uint64_t hits, uint64_t n) {
  s->windows++;
  double ratio = (double)hits / (double)n, avg = s->hit_ratio_avg;
  if (avg < 0) {
    s->hit_ratio_avg = ratio;
    return;
  }
  /* drop > 3 standard errors, squared: no sqrt, no libm. With a baseline
   * of 1 the error is 0 and the one-point rule alone decides. */
  double drop = avg - ratio;
  bool harmful = drop > ADAPTIVE_DROP &&
                 drop * drop > ADAPTIVE_SIGMAS * ADAPTIVE_SIGMAS * avg * (1 - avg) / (double)n;
  if (!harmful) {
    /* Only harmless windows make the baseline: harm folded into it would
     * soon look normal, and the ring would stop giving buffers back while
     * the foreground still suffered. */
    s->hit_ratio_avg = 0.9 * avg + 0.1 * ratio;
    s->harm_streak = 0;
    return;
  }
  s->harm_windows++;
  if (++s->harm_streak < ADAPTIVE_SUSTAINED) return;
  s->harm_streak = 0;
  shrink(s);
}

void strategy_note_allocation(hs_strategy *s, bool reused) {
  s->allocations++;
  if (reused) s->reuses++;
  if (s->config.rule != HS_RING_ADAPTIVE || ++s->since_check < ADAPTIVE_CHECK_EVERY) return;
  s->since_check = 0;
  uint64_t c[HS_IOCTX_COUNT][HS_STAT_COUNT];
  pool_counters(s->pool, c);
  uint64_t hits = c[HS_IOCTX_NORMAL][HS_STAT_HITS];
  uint64_t reads = c[HS_IOCTX_NORMAL][HS_STAT_READS];
  /* The counters go back when hs_pool_stats_reset runs: that window is
   * unknown, start a new one from here rather than read a wrapped delta. */
  if (hits < s->last_hits || reads < s->last_reads) {
    s->last_hits = hits;
    s->last_reads = reads;
    return;
  }
  uint64_t dh = hits - s->last_hits, dr = reads - s->last_reads;
  if (dh + dr < ADAPTIVE_WINDOW) return; /* too few to tell a drop from chance */
  s->last_hits = hits;
  s->last_reads = reads;
  judge_window(s, dh, dh + dr);
}
