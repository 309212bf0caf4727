/*
 * bench/bench_scan_threads.c — the threads of a scan-lab cell.
 *
 * OLTP clients read (and with --update-ratio update) the hot relation,
 * 80/20, paced; scanners read the big relation flat out or paced:
 * sequentially through a read stream under a ring (seq), sequentially
 * dirtying every page under a vacuum ring (vacuum), or in random block order
 * with no ring (index). Every page read is checked against its stamp
 * (common/stamped.h), so a ring that handed back the wrong buffer is caught.
 *
 * A thread counts only from the moment it sees PHASE_MEASURE: worker_tick,
 * called before every operation, zeroes its counters then and notes the
 * time, so the counts and the interval they cover always agree.
 */
#include "bench/bench_scan_threads.h"

#include "core/error.h"
#include "hotset/stream.h"
#include "hotset/syncscan.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define MAX_SLEEP_NS 10000000u /* a paced client re-checks for "stop" this often */
#define MIN_NAP_NS   1000000u  /* and sleeps at least this long (see pacer) */

const char *const scan_kind_names[] = {"none", "seq", "index", "vacuum"};

/* ---- the stand-in WAL ---- */

/* Like a real log's flush (PostgreSQL's XLogFlush writes all it can), it
 * makes everything inserted so far durable, not just up to `upto`: one
 * flush then covers the pages dirtied after the one that asked. */
hs_status scan_wal_flush(void *ctx, hs_lsn upto, bool *did_flush) {
  scan_wal *wal = ctx;
  uint64_t cur = atomic_load(&wal->flushed);
  uint64_t target = atomic_load(&wal->inserted);
  if (target < upto) target = upto;
  *did_flush = false;
  while (cur < upto) {
    if (atomic_compare_exchange_weak(&wal->flushed, &cur, target)) {
      *did_flush = true;
      break;
    }
  }
  return HS_OK;
}

bool scan_wal_needs_flush(void *ctx, hs_lsn lsn) {
  scan_wal *wal = ctx;
  return lsn > atomic_load(&wal->flushed);
}

/* Logs a change to (rel, blk) in hotset's log, or takes an LSN from the
 * counter (records of the same size either way). */
static hs_status log_change(cell_shared *sh, hs_relid rel, hs_blockno blk, hs_lsn *lsn) {
  if (sh->log) return bench_log_change(sh->log, rel, blk, lsn);
  *lsn = atomic_fetch_add(&sh->wal->inserted, BENCH_LOG_RECORD) + BENCH_LOG_RECORD;
  return HS_OK;
}

/* ---- phases, the gate, failures ---- */

/* Keeps the first failure and stops every thread of the cell. */
static void worker_fail(worker *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void worker_fail(worker *w, const char *fmt, ...) {
  cell_shared *sh = w->sh;
  pthread_mutex_lock(&sh->err_lock);
  if (!atomic_load(&sh->failed)) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(sh->err, sizeof sh->err, fmt, ap);
    va_end(ap);
    atomic_store(&sh->failed, true);
  }
  pthread_mutex_unlock(&sh->err_lock);
  atomic_store(&sh->phase, PHASE_STOP);
}

/* Called before every operation: starts the measured interval (zeroing the
 * counters) when the main thread moves to PHASE_MEASURE, and says whether
 * to go on. One relaxed load when nothing changed. */
static bool worker_tick(worker *w) {
  int ph = atomic_load_explicit(&w->sh->phase, memory_order_relaxed);
  if (__builtin_expect(ph == w->seen_phase, 1)) return true;
  w->seen_phase = ph;
  if (ph == PHASE_WARMUP || ph == PHASE_SETTLE) return true;
  if (ph == PHASE_MEASURE) {
    w->ops = w->hits = w->updates = w->bytes = 0;
    latency_hist_reset(&w->hist);
    w->t_start = bench_now_ns();
    return true;
  }
  w->t_end = bench_now_ns();
  return false;
}

static void gate_wait_for(cell_shared *sh, bool *flag) {
  pthread_mutex_lock(&sh->gate_lock);
  while (!*flag) pthread_cond_wait(&sh->gate, &sh->gate_lock);
  pthread_mutex_unlock(&sh->gate_lock);
}

void scan_gate_open(cell_shared *sh, bool *flag) {
  pthread_mutex_lock(&sh->gate_lock);
  *flag = true;
  pthread_cond_broadcast(&sh->gate);
  pthread_mutex_unlock(&sh->gate_lock);
}

static hs_status stamp_error(hs_relid rel, hs_blockno want, const void *page) {
  return hs_fail(HS_ERR_CORRUPT, 0, "relation %u block %u holds the page stamped as block %u", rel,
                 want, bench_page_block(page));
}

/* ---- pacing ---- */

/* Each operation has its time slot; a paced loop that is ahead sleeps (in
 * naps of at most MAX_SLEEP_NS, so it notices "stop"), and then runs every
 * operation whose slot has come. Naps last at least MIN_NAP_NS: a client
 * waking up for every one of 80000 operations a second would preempt the
 * scanner (and an I/O worker) on a two-core machine tens of thousands of
 * times a second, which costs the scan more than the clients' work does. A
 * client far behind — the pool stalled it — does not try to make up for
 * more than a second of lost operations in a burst. */
typedef struct pacer {
  uint64_t interval; /* ns between operations; 0 = unpaced */
  uint64_t next;
} pacer;

static void pacer_init(pacer *p, uint64_t rate) {
  p->interval = rate ? 1000000000u / rate : 0;
  if (rate && p->interval == 0) p->interval = 1;
  p->next = bench_now_ns();
}

/* True when the next operation may run now; false after a nap. */
static bool pacer_ready(pacer *p) {
  if (!p->interval) return true;
  uint64_t now = bench_now_ns();
  if (now < p->next) {
    uint64_t nap = p->next - now < MAX_SLEEP_NS ? p->next - now : MAX_SLEEP_NS;
    if (nap < MIN_NAP_NS) nap = MIN_NAP_NS;
    bench_sleep((double)nap / 1e9);
    return false;
  }
  if (now - p->next > 1000000000u) p->next = now;
  p->next += p->interval;
  return true;
}

/* ---- OLTP clients ---- */

/* One OLTP operation on a hot block: a read under a share lock, or an
 * update under an exclusive one. */
static hs_status oltp_op(cell_shared *sh, hs_blockno blk, bool update, bool *hit) {
  hs_pool *pool = sh->pool;
  hs_buf buf;
  hs_status st = hs_pool_read(pool, HOT_REL, HS_FORK_MAIN, blk, HS_READ_NORMAL, NULL, &buf, hit);
  if (st != HS_OK) return st;
  unsigned char *page = hs_buf_page(pool, buf);
  hs_buf_lock(pool, buf, update ? HS_LOCK_EXCLUSIVE : HS_LOCK_SHARE);
  if (!bench_page_check(page, HOT_REL, blk)) {
    st = stamp_error(HOT_REL, blk, page);
  } else if (update) {
    hs_lsn lsn;
    st = log_change(sh, HOT_REL, blk, &lsn);
    if (st == HS_OK) {
      bench_page_set_u64(page, BENCH_PAGE_OFF_LSN, lsn);
      bench_page_set_u64(page, BENCH_PAGE_OFF_UPDATES,
                         bench_page_get_u64(page, BENCH_PAGE_OFF_UPDATES) + 1);
      st = hs_buf_mark_dirty(pool, buf, lsn, NULL);
    }
  } else {
    /* Look at a byte past the header, as a reader of a tuple would. */
    volatile unsigned char byte = page[BENCH_PAGE_HEADER + blk % 64];
    (void)byte;
  }
  hs_buf_unlock(pool, buf);
  hs_buf_release(pool, buf);
  return st;
}

/* A block of the hot relation, 80/20. */
static hs_blockno pick_hot(const scan_bench *b, bench_rng *rng) {
  if (b->hot_head >= b->hot_pages || bench_rng_double(rng) < HOT_PART_READS)
    return bench_rng_below(rng, b->hot_head);
  return b->hot_head + bench_rng_below(rng, b->hot_pages - b->hot_head);
}

void *scan_oltp_main(void *arg) {
  worker *w = arg;
  cell_shared *sh = w->sh;
  const scan_bench *b = sh->b;
  bench_rng rng;
  bench_rng_seed(&rng, b->seed, w->id);
  latency_hist_reset(&w->hist);
  gate_wait_for(sh, &sh->go);
  pacer pace;
  pacer_init(&pace, b->oltp_rate);
  while (worker_tick(w)) {
    if (w->seen_phase == PHASE_SETTLE) {
      pacer_init(&pace, b->oltp_rate); /* paced from the end of the settling on */
    } else if (!pacer_ready(&pace)) {
      continue;
    }
    hs_blockno blk = pick_hot(b, &rng);
    bool update = b->update_ratio > 0 && bench_rng_double(&rng) < b->update_ratio;
    bool hit = false;
    uint64_t t0 = bench_now_ns();
    hs_status st = oltp_op(sh, blk, update, &hit);
    uint64_t t1 = bench_now_ns();
    if (st != HS_OK) {
      worker_fail(w, "OLTP thread %u %s block %u of the hot relation: %s", w->id,
                  update ? "updating" : "reading", blk, hs_last_error());
      break;
    }
    w->ops++;
    w->hits += hit;
    if (!hit) w->miss_ns += t1 - t0;
    w->updates += update;
    latency_hist_add(&w->hist, t1 - t0);
  }
  if (!w->t_end) w->t_end = bench_now_ns();
  return NULL;
}

/* ---- scanners ---- */

/* One more page read by scanner w (only w writes the count: no RMW). */
static inline void count_page(worker *w) {
  atomic_store_explicit(&w->pages, atomic_load_explicit(&w->pages, memory_order_relaxed) + 1,
                        memory_order_relaxed);
}

/* Checks the page a scan was given (share-locked, as a scan reads tuples)
 * and releases it. */
static hs_status scan_check(hs_pool *pool, hs_buf buf, hs_blockno blk) {
  hs_status st = HS_OK;
  const void *page = hs_buf_page(pool, buf);
  hs_buf_lock(pool, buf, HS_LOCK_SHARE);
  if (!bench_page_check(page, BIG_REL, blk)) st = stamp_error(BIG_REL, blk, page);
  hs_buf_unlock(pool, buf);
  hs_buf_release(pool, buf);
  return st;
}

/* What a vacuum does to a page it cleans: changes it under an exclusive
 * lock, logs the change (a record in the log) and marks it dirty
 * with that LSN. When its ring comes back to the buffer, the WAL up to that
 * LSN must be durable before the page may be written: the cost the vacuum
 * ring-size threads measured. */
static hs_status vacuum_page(cell_shared *sh, hs_buf buf, hs_blockno blk) {
  hs_pool *pool = sh->pool;
  unsigned char *page = hs_buf_page(pool, buf);
  hs_status st = HS_OK;
  hs_buf_lock(pool, buf, HS_LOCK_EXCLUSIVE);
  if (!bench_page_check(page, BIG_REL, blk)) {
    st = stamp_error(BIG_REL, blk, page);
  } else {
    hs_lsn lsn;
    st = log_change(sh, BIG_REL, blk, &lsn);
    if (st == HS_OK) {
      bench_page_set_u64(page, BENCH_PAGE_OFF_LSN, lsn);
      st = hs_buf_mark_dirty(pool, buf, lsn, NULL);
    }
  }
  hs_buf_unlock(pool, buf);
  hs_buf_release(pool, buf);
  return st;
}

/* One block of the big relation, read and checked. */
static hs_status scan_read(hs_pool *pool, hs_blockno blk, hs_strategy *strategy) {
  hs_buf buf;
  hs_status st =
      hs_pool_read(pool, BIG_REL, HS_FORK_MAIN, blk, HS_READ_NORMAL, strategy, &buf, NULL);
  return st == HS_OK ? scan_check(pool, buf, blk) : st;
}

/* The source of a sequential scan's read stream: the next block of this
 * pass, once the pacer allows it; none when the cell ends. */
typedef struct seq_source {
  worker *w;
  pacer pace;
  hs_block_range range;
  bool stop;
} seq_source;

static hs_blockno seq_next(void *arg) {
  seq_source *src = arg;
  bool go = worker_tick(src->w);
  while (go && !pacer_ready(&src->pace)) go = worker_tick(src->w);
  if (!go) {
    src->stop = true;
    return HS_INVALID_BLOCK;
  }
  return hs_block_range_next(&src->range);
}

/* Sequential scans, one after another, each a read stream (I/O combined up
 * to --io-combine) starting where the pool's syncscan table says. The ring
 * is made once per scanner, not per pass: in the page cache a pass over the
 * big relation takes a fraction of a second, and a fresh ring takes its
 * first buffers from the policy, so re-creating it per pass would charge the
 * policy a ring's worth of evictions hundreds of times more often than a
 * scan of a real big table does. */
static void seq_scans(worker *w) {
  cell_shared *sh = w->sh;
  hs_pool *pool = sh->pool;
  const scan_bench *b = sh->b;
  hs_blockno n = b->big_pages;
  uint32_t page_size = (uint32_t)b->page_size;
  /* A vacuum always uses its ring (PostgreSQL's rule); a read-only scan
   * only when the relation is big. */
  bool vacuum = sh->scan == SCAN_VACUUM;
  hs_strategy *ring = NULL;
  if (sh->ring && (vacuum || hs_pool_scan_needs_ring(pool, n, 0)) &&
      hs_strategy_create(pool, vacuum ? HS_STRATEGY_VACUUM : HS_STRATEGY_BULKREAD, sh->ring_cfg,
                         &ring) != HS_OK) {
    worker_fail(w, "scanner %u creating its ring: %s", w->id, hs_last_error());
    return;
  }
  seq_source src = {.w = w};
  pacer_init(&src.pace, b->scan_rate);
  while (!src.stop) {
    hs_block_range_init(&src.range, hs_syncscan_start(pool, BIG_REL, n), n);
    hs_read_stream *stream;
    if (hs_read_stream_open(pool, BIG_REL, HS_FORK_MAIN, ring, seq_next, &src,
                            (uint32_t)b->io_combine, &stream) != HS_OK) {
      worker_fail(w, "scanner %u opening a read stream: %s", w->id, hs_last_error());
      break;
    }
    for (;;) {
      hs_buf buf;
      hs_blockno blk = 0;
      hs_status st = hs_read_stream_next(stream, &buf, &blk);
      if (st == HS_OK && buf == HS_INVALID_BUF) break;
      if (st == HS_OK) st = vacuum ? vacuum_page(sh, buf, blk) : scan_check(pool, buf, blk);
      if (st != HS_OK) {
        worker_fail(w, "scanner %u reading block %u of the big relation: %s", w->id, blk,
                    hs_last_error());
        src.stop = true;
        break;
      }
      hs_syncscan_report(pool, BIG_REL, blk);
      w->bytes += page_size;
      count_page(w);
    }
    hs_read_stream_close(stream);
  }
  /* The size it ended with: an adaptive ring grows and shrinks. */
  w->ring_buffers = ring ? hs_strategy_ring_size(ring) : 0;
  hs_strategy_destroy(ring);
}

/* Random blocks, as an index scan over a big table reads them: no ring. */
static void index_scans(worker *w) {
  cell_shared *sh = w->sh;
  const scan_bench *b = sh->b;
  bench_rng rng;
  bench_rng_seed(&rng, b->seed, 1000u + w->id);
  pacer pace;
  pacer_init(&pace, b->index_rate);
  while (worker_tick(w)) {
    if (!pacer_ready(&pace)) continue;
    hs_blockno blk = bench_rng_below(&rng, b->big_pages);
    if (scan_read(sh->pool, blk, NULL) != HS_OK) {
      worker_fail(w, "index scanner %u reading block %u of the big relation: %s", w->id, blk,
                  hs_last_error());
      return;
    }
    w->bytes += b->page_size;
    count_page(w);
  }
}

void *scan_scanner_main(void *arg) {
  worker *w = arg;
  gate_wait_for(w->sh, &w->sh->scan_go);
  if (w->sh->scan != SCAN_INDEX)
    seq_scans(w);
  else
    index_scans(w);
  if (!w->t_end) w->t_end = bench_now_ns();
  return NULL;
}
