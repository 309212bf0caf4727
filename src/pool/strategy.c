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
 *   - grow by one buffer per forced flush, as before, but only while that
 *     pays (growth_pays): the last 8 forced flushes came at least once per
 *     100 recycles (1 %), and at the ring's pace — gaps of at least a third
 *     of the ring. With a log whose flush takes everything inserted, a ring
 *     of n buffers dirtying every page forces one flush per lap of n
 *     recycles: growth stops near 100 buffers, where the next doubling
 *     would save one flush per 200 pages at the price of 100 more buffers
 *     taken from the foreground. Flushes far more often than once a lap are
 *     paced by something else (a log that syncs only what was asked, a WAL
 *     writer's rhythm): in bench vacuum, on hotset's log, one came every
 *     40-50 recycles at 100 buffers and at 240 alike, and without this
 *     test the ring grew for as long as the pass ran. When a WAL writer
 *     keeps up, nothing is forced and nothing grows;
 *   - with a foreground about, grow only once its baseline exists (8
 *     windows): a baseline taken while the ring already hurt would make
 *     the hurt look normal;
 *   - judge the foreground per window of at least 1024 foreground accesses
 *     (looked for every 64 ring allocations), not per 64 allocations: a
 *     window is harmful when its hit ratio is below the baseline's mean by
 *     more than a point *and* by more than three times the noise — the
 *     binomial standard error of the window, sqrt(p(1-p)/n), or the spread
 *     the baseline's windows really showed, whichever is larger. Binomial
 *     alone was not enough in bench vacuum: windows of ~7000 lookups have
 *     an error of 0.3 points, yet their hit ratios wandered between 90 and
 *     96 % whatever the ring's size (lookups are not independent draws),
 *     and a first version of this rule cut the ring to 16 on that noise.
 *     Only harmless windows join the baseline (a plain mean for the first
 *     10, then weight 1/10): harm folded in would soon look normal;
 *   - shrink only when two windows running were harmful (a sustained drop;
 *     by chance, with Gaussian noise, once in half a million windows), and
 *     then by a quarter, not a half, never below 16 buffers;
 *   - remember the size it shrank to as a ceiling that growth never crosses
 *     again. The harm appeared somewhere between the baseline's size and
 *     this one; the size after the cut is the biggest with no evidence
 *     against it. Without a ceiling the WAL pressure would grow the ring
 *     straight back into the harm and the cycle would return, only slower.
 *
 * Sizes only grow up to a fixed point (where growth stops paying, or the
 * ceiling) and each shrink lowers the ceiling, so after at most
 * log4/3(cap / 16) shrinks the size stops moving: it settles. The price:
 * a ceiling is never raised, so if the foreground goes quiet later in the
 * pass the ring stays where harm was once seen; and a foreground that gets
 * worse on its own (a new query mix) is taken for harm, down to 16 buffers
 * at most — the rule errs on the foreground's side. A strategy lives for
 * one pass of one vacuum; the next pass starts afresh.
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
#define ADAPTIVE_BASELINE    8u    /* windows that make the first baseline */
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

void hs_strategy_options_init(hs_strategy_options *opts) {
  if (opts) *opts = (hs_strategy_options){.rule = HS_RING_FIXED};
}

hs_status hs_strategy_options_parse(const char *spec, hs_strategy_options *out) {
  if (!spec) return hs_fail(HS_ERR_MISUSE, 0, "hs_strategy_options_parse: spec is NULL");
  if (!out) return hs_fail(HS_ERR_MISUSE, 0, "hs_strategy_options_parse: out is NULL");
  char buf[128];
  if (strlen(spec) >= sizeof buf) return hs_fail(HS_ERR_INVALID, 0, "ring spec too long");
  strcpy(buf, spec);
  hs_strategy_options c = {.rule = HS_RING_FIXED};
  /* The options trail the size, in either order. */
  for (char *opt; (opt = strrchr(buf, ',')) != NULL; *opt = '\0') {
    if (!strcmp(opt, ",recycle-first"))
      c.recycle_first = true;
    else if (!strcmp(opt, ",own-writes"))
      c.own_writes = true;
    else
      return hs_fail(HS_ERR_INVALID, 0,
                     "ring \"%s\": unknown option \"%s\" (want recycle-first or own-writes)", spec,
                     opt + 1);
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
static uint32_t ring_buffers(const hs_pool *pool, hs_strategy_kind kind,
                             const hs_strategy_options *c, uint32_t *adaptive_max) {
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

hs_status hs_strategy_create(hs_pool *pool, hs_strategy_kind kind,
                             const hs_strategy_options *config, hs_strategy **out) {
  if (!out) return hs_fail(HS_ERR_MISUSE, 0, "hs_strategy_create: out is NULL");
  *out = NULL;
  if (!pool) return hs_fail(HS_ERR_MISUSE, 0, "hs_strategy_create: the pool is NULL");
  if ((unsigned)kind >= HS_STRATEGY_KIND_COUNT)
    return hs_fail(HS_ERR_MISUSE, 0, "hs_strategy_create: kind %u is not a strategy kind (0 to %u)",
                   (unsigned)kind, HS_STRATEGY_KIND_COUNT - 1);
  hs_strategy_options c = config ? *config : (hs_strategy_options){.rule = HS_RING_FIXED};
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

/* Slot i's buffer leaves the ring: if the ring writes its own pages, the
 * page (dirty or not) is no longer passed over by others' victim searches.
 * (Should the buffer hold some other own_writes ring's page by now, that
 * page only loses its protection: someone else may write it.) */
static void release_slot(hs_strategy *s, uint32_t i) {
  hs_buf b = s->bufs[i];
  if (!s->config.own_writes || b == HS_INVALID_BUF) return;
  hs_bufstate *ds = pool_bstate(s->pool, b);
  uint32_t st = buf_hdr_lock(ds);
  buf_hdr_unlock(ds, st & ~BM_RING_WRITES);
  s->bufs[i] = HS_INVALID_BUF;
}

void hs_strategy_destroy(hs_strategy *s) {
  if (!s) return;
  for (uint32_t i = 0; i < s->max_size; i++) release_slot(s, i);
  free(s->bufs);
  free(s);
}

uint32_t hs_strategy_ring_size(const hs_strategy *s) {
  return s ? s->size : 0;
}

hs_status hs_strategy_stats_get(const hs_strategy *s, hs_strategy_stats *out) {
  if (!s || !out)
    return hs_fail(HS_ERR_MISUSE, 0, "hs_strategy_stats_get: strategy and out are required");
  *out = (hs_strategy_stats){.size = s->size,
                             .ceiling = s->ceiling,
                             .allocations = s->allocations,
                             .reuses = s->reuses,
                             .wal_flushes = s->wal_flushes,
                             .grows = s->grows,
                             .shrinks = s->shrinks,
                             .windows = s->windows,
                             .harm_windows = s->harm_windows};
  return HS_OK;
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
  hs_bufstate *ds = pool_bstate(pool, b);
  uint32_t s = buf_hdr_lock(ds);
  if ((s & (BM_RING | BM_TAG_VALID)) != (BM_RING | BM_TAG_VALID) || pool_pinned(pool, b, s)) {
    buf_hdr_unlock(ds, s);
    return HS_INVALID_BUF;
  }
  if ((s & BM_DIRTY) && ring->kind == HS_STRATEGY_BULKREAD && pool_needs_wal_flush(pool, d)) {
    buf_hdr_unlock(ds, s);
    ring->bufs[ring->current] = HS_INVALID_BUF;
    stat_add(&pool->stats, ring->ctx, HS_STAT_REJECTS, 1);
    return HS_INVALID_BUF;
  }
  s += BUF_REFCOUNT_ONE;
  buf_hdr_unlock(ds, s);
  *state = s;
  return b;
}

void strategy_add_buffer(hs_strategy *ring, hs_buf b) {
  ring->bufs[ring->current] = b;
}

/* Whether one more buffer would space the forced flushes out. A flush makes
 * every page dirtied before it durable, so the next is due when the ring
 * comes round to a page dirtied after it: one flush per lap, and a longer
 * lap means fewer. So growth pays while, over the last few flushes, they
 * came often (at least one per ADAPTIVE_FLUSH_EVERY recycles) and at the
 * ring's pace (gaps of at least a third of the ring; the look-ahead of a
 * read stream takes up to half a small ring off a lap). Flushes far more
 * often than once a lap are paced by something else — a log that syncs
 * only what was asked, a WAL writer's rhythm — and a longer lap does not
 * spread them. The first forced flush has no gap to judge by. */
static bool growth_pays(hs_strategy *s) {
  uint64_t now = s->reuses + 1; /* the reuse being made counts */
  bool first = s->reuses_at_flush == 0;
  uint64_t gap = now - s->reuses_at_flush;
  s->reuses_at_flush = now;
  if (first) return false;
  if (s->nflush_gaps == STRATEGY_FLUSH_GAPS)
    memmove(s->flush_gaps, s->flush_gaps + 1, sizeof s->flush_gaps - sizeof(uint64_t));
  else
    s->nflush_gaps++;
  s->flush_gaps[s->nflush_gaps - 1] = gap;
  uint64_t recycles = 0, n = s->nflush_gaps;
  for (uint32_t i = 0; i < n; i++) recycles += s->flush_gaps[i];
  return n * ADAPTIVE_FLUSH_EVERY >= recycles && 3 * recycles >= n * s->size;
}

void strategy_note_wal_flush(hs_strategy *s) {
  s->wal_flushes++;
  if (s->config.rule != HS_RING_ADAPTIVE) return;
  /* With a foreground about, growth waits for its baseline: taken while
   * the ring already hurt, the hurt would look normal. */
  bool judged = !s->foreground_seen || s->baseline_windows >= ADAPTIVE_BASELINE;
  if (growth_pays(s) && judged && s->size < s->ceiling) {
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
  for (uint32_t i = to; i < s->size; i++) release_slot(s, i);
  s->size = to;
  s->shrinks++;
  if (s->current >= s->size) s->current = 0;
}

/* A harmless window joins the baseline: a plain mean and variance over the
 * first windows (the first sets the mean: weight 1), then moving averages
 * weighting each new window 1/10. */
static void baseline_add(hs_strategy *s, double ratio) {
  uint32_t k = s->baseline_windows;
  double w = k < 10 ? 1.0 / (k + 1) : 0.1, d = ratio - s->hit_ratio_avg;
  s->hit_ratio_avg += w * d;
  s->hit_ratio_var = (1 - w) * (s->hit_ratio_var + w * d * d);
  if (k < UINT32_MAX) s->baseline_windows++;
}

/* One window of the foreground: `hits` of `n` accesses. */
static void judge_window(hs_strategy *s, uint64_t hits, uint64_t n) {
  s->windows++;
  double ratio = (double)hits / (double)n, avg = s->hit_ratio_avg;
  if (s->baseline_windows >= ADAPTIVE_BASELINE) {
    /* The noise: the binomial variance of a window of n accesses, or the
     * spread the baseline's windows really showed if that is larger (a
     * foreground's accesses are not independent draws: its hit ratio
     * wanders by more than sampling alone explains). Compared squared:
     * no sqrt, no libm. */
    double noise = avg * (1 - avg) / (double)n, drop = avg - ratio;
    if (s->hit_ratio_var > noise) noise = s->hit_ratio_var;
    if (drop > ADAPTIVE_DROP && drop * drop > ADAPTIVE_SIGMAS * ADAPTIVE_SIGMAS * noise) {
      /* Harm stays out of the baseline: folded in, it would soon look
       * normal, and the ring would stop giving buffers back while the
       * foreground still suffered. */
      s->harm_windows++;
      if (++s->harm_streak < ADAPTIVE_SUSTAINED) return;
      s->harm_streak = 0;
      shrink(s);
      return;
    }
    s->harm_streak = 0;
  }
  baseline_add(s, ratio);
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
  if (dh + dr > 0) s->foreground_seen = true;
  if (dh + dr < ADAPTIVE_WINDOW) return; /* too few to tell a drop from chance */
  s->last_hits = hits;
  s->last_reads = reads;
  judge_window(s, dh, dh + dr);
}
