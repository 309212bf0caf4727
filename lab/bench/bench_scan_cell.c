/*
 * bench/bench_scan_cell.c — one cell of the scan lab.
 *
 * A cell opens a fresh pool with its policy on the data directory, fills it
 * (a pool-full of the big relation, then the hot relation), lets the OLTP
 * clients run alone and unpaced for --settle seconds (cells with a scan),
 * starts the scanners, waits --warmup seconds and until they have read
 * --warmup-turns pools' worth, resets the pool's statistics and the
 * threads' counters, measures for --seconds, and reads the results: the
 * threads' counters, the pool's statistics, and the share of buffers
 * holding hot pages (hs_pool_dump). docs/strategies.md says why each step
 * is there.
 */
#include "bench/bench_scan_threads.h"
#include "core/error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WARMUP_MAX_EXTRA 10.0 /* seconds the warm-up may wait for its pool turns */
#define PROGRESS_SLICE   0.1  /* seconds between looks at the clock and the workers */

/* Waits until the scanners have read --warmup-turns times the pool's pages,
 * or WARMUP_MAX_EXTRA more seconds have gone by. */
static void wait_turns(scan_bench *b, cell_shared *sh, const worker *scanners, uint32_t n) {
  uint64_t want = (uint64_t)(b->warmup_turns * b->nbuffers);
  uint64_t until = bench_now_ns() + (uint64_t)(WARMUP_MAX_EXTRA * 1e9);
  for (;;) {
    uint64_t pages = 0;
    for (uint32_t i = 0; i < n; i++)
      pages += atomic_load_explicit(&scanners[i].pages, memory_order_relaxed);
    if (pages >= want || bench_now_ns() >= until || atomic_load(&sh->failed) || bench_interrupted())
      return;
    bench_sleep(0.01);
    progress_show(&b->prog);
  }
}

/* Sleeps `seconds` in slices, keeping the progress line fresh; returns
 * early if a worker failed or a signal came. */
static void wait_phase(scan_bench *b, cell_shared *sh, double seconds) {
  uint64_t until = bench_now_ns() + (uint64_t)(seconds * 1e9);
  for (;;) {
    uint64_t now = bench_now_ns();
    if (now >= until || atomic_load(&sh->failed) || bench_interrupted()) return;
    double left = (double)(until - now) / 1e9;
    bench_sleep(left < PROGRESS_SLICE ? left : PROGRESS_SLICE);
    progress_show(&b->prog);
  }
}

/* Reads `n` blocks of `rel` from 0 on, normally (no ring). */
static hs_status read_blocks(hs_pool *pool, hs_relid rel, hs_blockno n) {
  for (hs_blockno blk = 0; blk < n; blk++) {
    if (blk % 256 == 0 && bench_interrupted())
      return hs_fail(HS_ERR_IO, EINTR, "interrupted at block %u", blk);
    hs_buf buf;
    hs_status st = hs_pool_read(pool, rel, HS_FORK_MAIN, blk, HS_READ_NORMAL, NULL, &buf, NULL);
    if (st != HS_OK) return st;
    hs_buf_release(pool, buf);
  }
  return HS_OK;
}

/* A pool that has been in use: full of older pages (the big relation's
 * first pool-full), then the hot relation read in over them. The pool is
 * then full and has already evicted pages, as a database's pool has: a
 * policy that behaves differently while it warms up (InnoDB's midpoint
 * promotes nothing before its first eviction) starts in its steady state. */
static hs_status warm_pool(const scan_bench *b, hs_pool *pool) {
  hs_blockno filler = b->nbuffers < b->big_pages ? b->nbuffers : b->big_pages;
  hs_status st = read_blocks(pool, BIG_REL, filler);
  return st == HS_OK ? read_blocks(pool, HOT_REL, b->hot_pages) : st;
}

static hs_status hot_share(hs_pool *pool, double *share) {
  uint32_t n = hs_pool_nbuffers(pool);
  hs_buffer_info *info = calloc(n, sizeof *info);
  if (!info) return hs_fail(HS_ERR_NOMEM, ENOMEM, "allocating a dump of %u buffers", n);
  hs_status st = hs_pool_dump(pool, info, n);
  uint32_t hot = 0;
  for (uint32_t i = 0; st == HS_OK && i < n; i++)
    hot += info[i].valid && info[i].rel == HOT_REL && info[i].fork == HS_FORK_MAIN;
  free(info);
  *share = n ? (double)hot / n : 0;
  return st;
}

static int cell_error(scan_bench *b, const char *what, const char *why) {
  progress_clear(&b->prog);
  if (bench_interrupted()) return 1; /* the caller says so, in one line */
  fprintf(stderr, PROG ": %s: %s\n", what, why);
  return 1;
}

/* CPU clocks read by the main thread at the start and the end of the
 * measured interval, all at (nearly) the same moment. */
typedef struct cpu_sample {
  uint64_t wall, process, main, oltp, scanners;
} cpu_sample;

static void cpu_take(cpu_sample *s, const worker *w, uint32_t noltp, uint32_t nthreads) {
  s->oltp = s->scanners = 0;
  for (uint32_t i = 0; i < nthreads; i++) {
    uint64_t ns = bench_other_thread_cpu_ns(w[i].tid);
    if (i < noltp)
      s->oltp += ns;
    else
      s->scanners += ns;
  }
  s->main = bench_thread_cpu_ns();
  s->process = bench_process_cpu_ns();
  s->wall = bench_now_ns();
}

/* The scan's CPU time: everything the process spent but the OLTP clients'
 * and the main thread's, i.e. the scanners' and the pool's I/O workers'
 * (the only other threads). */
static uint64_t grown(uint64_t before, uint64_t after) {
  /* A thread that ended before the second sample has no CPU clock left to
   * read (it counts 0 there): its time is unknown, not negative. */
  return after > before ? after - before : 0;
}

static void cpu_scan_seconds(const cpu_sample *a, const cpu_sample *z, cell_result *r) {
  int64_t rest = (int64_t)grown(a->process, z->process) - (int64_t)grown(a->oltp, z->oltp) -
                 (int64_t)grown(a->main, z->main);
  r->scan_cpu_seconds = rest > 0 ? (double)rest / 1e9 : 0;
  r->scanner_cpu_seconds = (double)grown(a->scanners, z->scanners) / 1e9;
  r->measured_seconds = (double)(z->wall - a->wall) / 1e9;
}

/* Runs the threads through the phases; fills r's CPU figures. Returns the
 * pthread_create error, or 0. */
static int run_phases(scan_bench *b, const cell *c, cell_shared *sh, worker *w, uint32_t noltp,
                      uint32_t nscan, cell_result *r) {
  uint32_t nthreads = noltp + nscan;
  uint32_t started = 0;
  int create_err = 0;
  for (; started < nthreads; started++) {
    worker *x = &w[started];
    x->sh = sh;
    atomic_init(&x->pages, 0);
    x->scanner = started >= noltp;
    x->id = x->scanner ? started - noltp : started;
    create_err = pthread_create(&x->tid, NULL, x->scanner ? scan_scanner_main : scan_oltp_main, x);
    if (create_err) break;
  }
  if (create_err) atomic_store(&sh->phase, PHASE_STOP);
  scan_gate_open(sh, &sh->go);
  /* The hot set has been in use for a long time before a scan comes along:
   * the OLTP clients run alone first, unpaced, so that every policy has seen
   * it often (and, at 1.1 s, for longer than InnoDB's old_blocks_time lets
   * its pages become young) — hours of OLTP, compressed. A baseline has no
   * scan to wait for: its warm-up is that settling (LIRS, for one, needs a
   * few hundred thousand accesses to turn the hot pages into LIR blocks). */
  if (!create_err) {
    /* With no OLTP clients (--oltp-threads 0: the scan alone, e.g. to size
     * its ring) there is nothing to settle. */
    if (noltp) wait_phase(b, sh, c->scan != SCAN_NONE ? b->settle : b->warmup);
    int expect = PHASE_SETTLE;
    atomic_compare_exchange_strong(&sh->phase, &expect, PHASE_WARMUP);
  }
  scan_gate_open(sh, &sh->scan_go);

  if (!create_err) {
    if (c->scan != SCAN_NONE) wait_phase(b, sh, b->warmup);
    /* The scan's effect on a policy settles once it has cycled the pool a
     * few times: flat-out sequential scans do that within milliseconds, a
     * paced index scan takes seconds. */
    if (nscan) wait_turns(b, sh, w + noltp, nscan);
    /* Reset first: a worker counts from the moment it sees the new phase.
     * A worker that failed meanwhile has set PHASE_STOP, which stays. */
    hs_pool_stats_reset(sh->pool);
    cpu_sample before, after;
    cpu_take(&before, w, noltp, nthreads);
    int expect = PHASE_WARMUP;
    if (atomic_compare_exchange_strong(&sh->phase, &expect, PHASE_MEASURE))
      wait_phase(b, sh, b->seconds);
    /* Sampled before STOP: a thread that sees it may exit, and an exited
     * thread's CPU clock can no longer be read. */
    cpu_take(&after, w, noltp, nthreads);
    atomic_store(&sh->phase, PHASE_STOP);
    cpu_scan_seconds(&before, &after, r);
  }
  for (uint32_t i = 0; i < started; i++) pthread_join(w[i].tid, NULL);
  return create_err;
}

/* The threads' counters and the pool's statistics into r (whose CPU
 * figures run_phases filled in). */
static void collect(const worker *w, uint32_t nthreads, uint32_t noltp, hs_pool *pool,
                    cell_result *r) {
  latency_hist all;
  latency_hist_reset(&all);
  double oltp_secs = 0;
  uint64_t miss_ns = 0;
  for (uint32_t i = 0; i < nthreads; i++) {
    const worker *x = &w[i];
    double secs = x->t_start && x->t_end > x->t_start ? (double)(x->t_end - x->t_start) / 1e9 : 0;
    if (x->scanner) {
      r->scan_bytes += x->bytes;
      if (secs > 0) r->scan_mb_per_sec += (double)x->bytes / 1e6 / secs;
      if (x->ring_buffers > r->ring_buffers) r->ring_buffers = x->ring_buffers;
    } else {
      r->oltp_ops += x->ops;
      r->oltp_hits += x->hits;
      miss_ns += x->miss_ns;
      r->oltp_updates += x->updates;
      if (secs > 0) r->oltp_ops_per_sec += (double)x->ops / secs;
      oltp_secs += secs;
      latency_hist_merge(&all, &x->hist);
    }
  }
  r->seconds = noltp ? oltp_secs / noltp : 0;
  r->hit_ratio = r->oltp_ops ? (double)r->oltp_hits / (double)r->oltp_ops : 0;
  r->oltp_misses = r->oltp_ops - r->oltp_hits;
  r->miss_us = r->oltp_misses ? (double)miss_ns / 1e3 / (double)r->oltp_misses : 0;
  r->p50_us = latency_hist_quantile_us(&all, 0.50);
  r->p99_us = latency_hist_quantile_us(&all, 0.99);
  hs_pool_stats s;
  hs_pool_stats_get(pool, &s);
  r->evictions = hs_pool_stats_total(&s, HS_STAT_EVICTIONS);
  r->reuses = hs_pool_stats_total(&s, HS_STAT_REUSES);
  r->wal_flushes = hs_pool_stats_total(&s, HS_STAT_WAL_FLUSHES);
  r->writes = hs_pool_stats_total(&s, HS_STAT_WRITES);
}

/* Closes the cell's log, keeping its sync figures, and removes it. */
static hs_status close_cell_log(hs_wal *log, const char *logdir, cell_result *r) {
  hs_wal_stats st;
  hs_wal_stats_get(log, &st);
  hs_status rc = hs_wal_close(log);
  r->wal_syncs = st.syncs;
  r->wal_sync_seconds = (double)st.sync_ns / 1e9;
  bench_tempdir_remove(logdir);
  return rc;
}

int scan_run_cell(scan_bench *b, const cell *c, cell_result *r) {
  memset(r, 0, sizeof *r);
  const char *what = b->prog.what; /* the cell's title, set by the caller */

  char logdir[4200];
  hs_wal *log = NULL;
  /* A fresh log per cell: each cell starts from an empty one. */
  if (b->real_wal && bench_log_open_fresh(b->dir, logdir, sizeof logdir, &log) != HS_OK) {
    char msg[600];
    snprintf(msg, sizeof msg, "opening the log: %s", hs_last_error());
    return cell_error(b, what, msg);
  }
  hs_pool_options po;
  hs_pool_options_init(&po);
  po.dir = b->dir;
  po.page_size = (uint32_t)b->page_size;
  po.pool_bytes = b->pool_bytes;
  po.policy = b->specs[c->policy];
  if (log) {
    po.wal = log;
  } else {
    po.flush_wal_up_to = scan_wal_flush;
    po.wal_needs_flush = scan_wal_needs_flush;
    po.wal_ctx = &b->wal;
  }
  po.io_workers = (uint32_t)b->io_workers;
  po.direct_io = b->direct;
  hs_pool *pool;
  if (hs_pool_open(&po, &pool) != HS_OK) {
    char msg[600];
    snprintf(msg, sizeof msg, "%s", hs_last_error());
    if (log) close_cell_log(log, logdir, r);
    return cell_error(b, what, msg);
  }
  if (warm_pool(b, pool) != HS_OK) {
    char msg[600];
    snprintf(msg, sizeof msg, "reading the hot relation: %s", hs_last_error());
    hs_pool_abandon(pool);
    if (log) close_cell_log(log, logdir, r);
    return cell_error(b, what, msg);
  }

  uint32_t noltp = (uint32_t)b->oltp_threads;
  uint32_t nscan = c->scan == SCAN_NONE ? 0 : (uint32_t)b->scan_threads;
  uint32_t nthreads = noltp + nscan;
  cell_shared *sh = calloc(1, sizeof *sh);
  worker *w = aligned_alloc(64, nthreads * sizeof *w);
  if (w) memset(w, 0, nthreads * sizeof *w);
  if (!sh || !w) {
    free(sh);
    free(w);
    hs_pool_abandon(pool);
    if (log) close_cell_log(log, logdir, r);
    return cell_error(b, what, "out of memory");
  }
  sh->b = b;
  sh->pool = pool;
  sh->wal = log ? NULL : &b->wal;
  sh->log = log;
  sh->scan = c->scan;
  sh->ring = c->ring;
  sh->ring_cfg = &b->ring_cfgs[c->ring_spec];
  pthread_mutex_init(&sh->gate_lock, NULL);
  pthread_cond_init(&sh->gate, NULL);
  pthread_mutex_init(&sh->err_lock, NULL);
  atomic_init(&sh->phase, PHASE_SETTLE);
  atomic_init(&sh->failed, false);

  int create_err = run_phases(b, c, sh, w, noltp, nscan, r);
  int rc = 0;
  if (create_err) {
    rc = cell_error(b, what, strerror(create_err));
  } else if (atomic_load(&sh->failed)) {
    rc = cell_error(b, what, sh->err);
  } else {
    collect(w, nthreads, noltp, pool, r);
    if (hot_share(pool, &r->hot_share) != HS_OK) {
      char msg[600];
      snprintf(msg, sizeof msg, "looking at the pool's buffers: %s", hs_last_error());
      rc = cell_error(b, what, msg);
    }
  }
  pthread_mutex_destroy(&sh->gate_lock);
  pthread_cond_destroy(&sh->gate);
  pthread_mutex_destroy(&sh->err_lock);
  free(sh);
  free(w);

  /* Closing writes the pages OLTP updates dirtied. */
  if (hs_pool_close(pool) != HS_OK) {
    if (rc == 0) {
      char msg[600];
      snprintf(msg, sizeof msg, "closing the pool: %s", hs_last_error());
      rc = cell_error(b, what, msg);
    }
    hs_pool_abandon(pool);
  }
  /* The pool is closed first: its last writes may flush the log. */
  if (log && close_cell_log(log, logdir, r) != HS_OK && rc == 0) {
    char msg[600];
    snprintf(msg, sizeof msg, "closing the log: %s", hs_last_error());
    rc = cell_error(b, what, msg);
  }
  return rc;
}
