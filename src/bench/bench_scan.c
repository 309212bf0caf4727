/*
 * bench/bench_scan.c — `hotset bench scan`: the scan-resistance lab.
 *
 * The question PostgreSQL 8.3 answered with rings: when a big sequential
 * scan runs beside an OLTP workload, does it push the OLTP workload's hot
 * pages out of the buffer pool? Two relations are made, with real files, in
 * one data directory:
 *   hot  a small relation (default a quarter of the pool) that OLTP threads
 *        read at random, skewed 80/20: 80 % of the reads go to the first
 *        20 % of its blocks, the rest to the other 80 %, uniformly within
 *        each part (the demo's pattern: simple, and it leaves a warm tail
 *        of pages read only now and then, which is what a scan evicts first);
 *   big  a relation several times the pool (default 4x) that scanner
 *        threads read over and over, either sequentially ("seq": a scan
 *        starts where hs_syncscan_start says, reports each block, wraps
 *        around at the end, and with --ring on reads under a bulkread ring
 *        whenever hs_pool_scan_needs_ring says the relation is big enough)
 *        or in random block order ("index": what an index scan over a big
 *        table does, and no ring can help with it, as in PostgreSQL).
 *
 * OLTP clients are paced (--oltp-rate reads per second per thread), the
 * scanners run flat out. A server does much more per request than read one
 * page — parse, plan, execute, answer over the network — so its per-page
 * rate is far below what a tight loop over a resident set could do. And that
 * matters here: unpaced, one thread re-reads every hot page so often that
 * even plain LRU keeps them all however fast the scan goes, and no policy
 * would look polluted. Each read is timed (read, content lock, look at the
 * page, unlock, release) into a latency histogram; --update-ratio makes that
 * share of reads updates (exclusive lock, change, hs_buf_mark_dirty with an
 * LSN from a stand-in WAL: an atomic insert position, and a flush callback
 * that just records how far the log is "durable").
 *
 * The matrix: for each policy, a baseline with no scanner, then each scan
 * kind with each ring setting — except that an index scan never uses a ring,
 * so it runs once, labelled ring "off". Every cell opens a fresh pool with
 * its policy on the same data directory, fills it (a pool-full of the big
 * relation, then the hot relation), lets the OLTP clients run alone and
 * unpaced for --settle seconds (cells with a scan), starts the scanners,
 * waits --warmup seconds and until they have read --warmup-turns pools'
 * worth, resets the pool's statistics and the threads' counters, and
 * measures for --seconds. docs/strategies.md says why each step is there.
 *
 * Per cell: OLTP reads/s; the OLTP hit ratio (counted from hs_pool_read's
 * `hit`, hot-relation reads only); p50/p99 OLTP latency; hot_share, the
 * share of all buffers holding a hot page when the cell ends (from
 * hs_pool_dump); the scanners' MB/s (10^6 bytes of big-relation pages per
 * second) and its ratio to a raw pread rate, measured in the same run by
 * reading the big relation's file (then in the page cache) 256 KiB at a
 * time — the best one thread's reads could hope for — once at the start and
 * again around each sequential-scan cell. Sequential scans go through a read
 * stream (hotset/stream.h) on a pool with --io-workers I/O threads, so with
 * a worker the scan keeps two threads busy against the raw reads' one: each
 * cell also gives the scan's MB per CPU-second (the CPU time of the
 * scanners and the I/O workers over the measured interval: the process's
 * CPU time less the OLTP threads' and the main thread's) and its ratio to
 * the raw reads' MB per CPU-second ("per CPU"), which compares the work each
 * spends per byte whatever the number of threads.
 *
 * Every page read, by either kind of thread, is checked against its stamp
 * (bench_util.h): a ring that handed back the wrong buffer would be caught.
 */
#include "bench/bench_scan.h"

#include "bench/bench_scan_plot.h"
#include "bench/bench_util.h"
#include "bench/latency_hist.h"
#include "cli/args.h"
#include "cli/gnuplot.h"
#include "core/error.h"
#include "hotset/pool.h"
#include "hotset/strategy.h"
#include "hotset/stream.h"
#include "hotset/syncscan.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROG             "hotset bench scan"
#define HOT_REL          16384u
#define BIG_REL          16385u
#define HOT_PART         0.2 /* the hot relation's most-read share of blocks */
#define HOT_PART_READS   0.8 /* ... and the share of reads that go there */
#define WAL_RECORD       64u /* bytes per stand-in log record */
#define RAW_CHUNK        (256u * 1024u)
#define WARMUP_MAX_EXTRA 10.0 /* seconds the warm-up may wait for its pool turns */
#define RAW_SECONDS      0.5  /* timed passes go on at least this long */
#define RAW_CELL_SECONDS 0.25 /* the same, just before and after each sequential-scan cell */
#define MAX_THREADS      64
#define MAX_SLEEP_NS     10000000u /* a paced client re-checks for "stop" this often */
#define MIN_NAP_NS       1000000u  /* and sleeps at least this long (see pacer) */
#define PROGRESS_SLICE   0.1       /* seconds between looks at the clock and the workers */
#define MAX_CELLS        (ARGS_LIST_MAX * 6)

static const char usage[] =
    "usage: hotset bench scan [flags]\n"
    "\n"
    "The scan-resistance lab: OLTP threads read a hot relation that fits in the pool\n"
    "while scanner threads read a relation several times the pool, for each policy,\n"
    "with and without a ring. Per cell: OLTP reads/s, hit ratio, p50/p99 latency, the\n"
    "share of the pool holding hot pages, and the scan's MB/s and MB per CPU-second\n"
    "against one thread's raw preads.\n"
    "\n"
    "flags:\n"
    "  --policy LIST       replacement policies, comma-separated specs, or \"all\"\n"
    "                      (default clock-sweep,lru,2q,arc,lirs,s3fifo,twolist,\n"
    "                      midpoint)\n"
    "  --ring LIST         on, off or on,off (default on,off): seq scans with a\n"
    "                      bulkread ring or through the normal policy (a ring only\n"
    "                      when --big is over a quarter of the pool, PostgreSQL's rule)\n"
    "  --scan LIST         seq, index, vacuum, or a list (default seq,index); every\n"
    "                      policy also gets a baseline cell with no scan. index\n"
    "                      (random blocks) never uses a ring: it runs once, as ring\n"
    "                      off. vacuum: a sequential pass with the vacuum strategy\n"
    "                      that dirties every page (a WAL record each); its cells\n"
    "                      get a second table of WAL flushes per recycled buffer\n"
    "  --ring-size SPEC    the ring's sizing rule: fixed[:SIZE], workers:N,\n"
    "                      fraction:X, adaptive, each optionally ,recycle-first\n"
    "                      (default fixed: 256 KiB)\n"
    "  --pool SIZE         pool size (default 64MiB); SIZE takes B, KiB, MiB, GiB\n"
    "  --hot SIZE          hot relation (default a quarter of the pool)\n"
    "  --big SIZE          scanned relation (default four times the pool)\n"
    "  --page-size SIZE    page size, a power of two from 1KiB to 64KiB (default 8KiB)\n"
    "  --oltp-threads N    OLTP threads (default 1)\n"
    "  --scan-threads N    scanner threads in the cells with a scan (default 1)\n"
    "  --oltp-rate N       reads per second per OLTP thread, 0 = as fast as possible\n"
    "                      (default 80000)\n"
    "  --scan-rate N       pages per second per sequential scanner, 0 = as fast as\n"
    "                      possible (default 0)\n"
    "  --index-rate N      pages per second per index scanner, 0 = as fast as\n"
    "                      possible (default 40000: half the OLTP clients' rate; see\n"
    "                      docs/strategies.md)\n"
    "  --io-combine SIZE   sequential scans read through a read stream that combines\n"
    "                      up to SIZE of consecutive missing pages into one preadv\n"
    "                      (default 128KiB, PostgreSQL's io_combine_limit; one page\n"
    "                      = a read per page)\n"
    "  --io-workers N      the pool's I/O worker threads: a read stream's next batch\n"
    "                      is read on one while the scanner uses the one before\n"
    "                      (default 1; 0 = the scanner reads itself)\n"
    "  --update-ratio R    share of OLTP operations that update the page (default 0)\n"
    "  --seconds S         measured time per cell (default 1)\n"
    "  --settle S          in cells with a scan, the OLTP clients run alone, unpaced,\n"
    "                      this long before the scanners start (default 1.1: longer\n"
    "                      than InnoDB's old_blocks_time)\n"
    "  --warmup S          time per cell before measuring, scanners running\n"
    "                      (default 0.3) ...\n"
    "  --warmup-turns N    ... and until the scanners have read N times the pool's\n"
    "                      pages (default 3; at most 10 s more)\n"
    "  --dir DIR           data directory to use (kept) instead of a temporary one\n"
    "  --seed N            seed of the random choices (default 1)\n"
    "  --json              one JSON object per line per cell\n"
    "  --plot FILE         bar charts of the cells (.png or .svg; needs gnuplot)\n"
    "  --help              show this help\n"
    "\n"
    "MB/s are 10^6 bytes per second. OLTP reads go 80% to the first 20% of the hot\n"
    "relation's blocks, 20% to the rest. A scan's CPU time is that of its scanner\n"
    "threads and of the pool's I/O workers (--io-workers): scan/raw holds them,\n"
    "together, against one thread's preads; \"per CPU\" compares MB per CPU-second.\n"
    "It refuses to start (exit 1) when the relations would not fit in the free space\n"
    "or the pool is over half the physical memory; on SIGINT or SIGTERM it stops and\n"
    "removes its temporary directory.\n";

static const args_cmd cmd = {PROG, usage};

typedef enum scan_kind { SCAN_NONE = 0, SCAN_SEQ, SCAN_INDEX, SCAN_VACUUM } scan_kind;
static const char *const scan_names[] = {"none", "seq", "index", "vacuum"};

/* One cell of the matrix. */
typedef struct cell {
  int policy; /* index into the policy specs */
  scan_kind scan;
  bool ring;
} cell;

typedef struct cell_result {
  double seconds; /* measured time (the OLTP threads' average) */
  uint64_t oltp_ops, oltp_hits, oltp_updates;
  double oltp_ops_per_sec; /* summed over OLTP threads */
  double hit_ratio;
  double p50_us, p99_us;
  double hot_share;
  uint64_t scan_bytes;
  double scan_mb_per_sec;
  uint32_t ring_buffers; /* the scanners' ring size at the end (0: no ring) */
  uint64_t evictions, reuses, wal_flushes, writes;
  double raw_mb_per_sec; /* the 256 KiB pread rate this cell's scan is held against */
  /* CPU time of the scanners plus the pool's I/O workers over the measured
   * interval, of the scanners alone, and that interval (main's clock). */
  double scan_cpu_seconds, scanner_cpu_seconds, measured_seconds;
  double raw_mb_per_cpu_sec; /* the raw preads' MB per CPU-second of their thread */
} cell_result;

/* A raw pread measurement: MB per second and per CPU-second of the reading
 * thread (above the first when the thread was preempted now and then). */
typedef struct raw_rate {
  double mb_per_sec, mb_per_cpu_sec;
} raw_rate;

/* The stand-in write-ahead log: where the next record goes, how far the log
 * is "durable". The pool calls flush_wal before writing a dirty page. */
typedef struct scan_wal {
  _Atomic uint64_t inserted;
  _Atomic uint64_t flushed;
} scan_wal;

/* Like a real log's flush (PostgreSQL's XLogFlush writes all it can), it
 * makes everything inserted so far durable, not just up to `upto`: one
 * flush then covers the pages dirtied after the one that asked. */
static hs_status wal_flush(void *ctx, hs_lsn upto, bool *did_flush) {
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

static bool wal_needs_flush(void *ctx, hs_lsn lsn) {
  scan_wal *wal = ctx;
  return lsn > atomic_load(&wal->flushed);
}

/* The progress line: on a terminal only, on stderr. */
typedef struct progress {
  bool on;
  bool printed;
  uint64_t t0;        /* start of the run */
  uint64_t cells_ns;  /* time spent in finished cells */
  int done, total;    /* cells */
  uint64_t cell_t0;   /* start of the current cell */
  double cell_budget; /* warm-up + measurement of one cell, in seconds */
  char what[ARGS_SPEC_LEN + 64];
} progress;

static void progress_show(progress *p) {
  if (!p->on) return;
  uint64_t now = bench_now_ns();
  double elapsed = (double)(now - p->t0) / 1e9;
  /* A finished cell took what cells have taken so far on average (pool
   * open, warming the hot set and closing included); before the first one
   * ends, its budget. */
  double per_cell = p->done ? (double)p->cells_ns / 1e9 / p->done : p->cell_budget + 0.5;
  double in_cell = p->cell_t0 ? (double)(now - p->cell_t0) / 1e9 : 0;
  double eta = per_cell * (p->total - p->done) - in_cell;
  if (eta < 0) eta = 0;
  if (!p->cell_t0) /* still preparing */
    fprintf(stderr, "\r\033[K" PROG ": %s, %.0f s elapsed, ETA %.0f s", p->what, elapsed, eta);
  else
    fprintf(stderr, "\r\033[K" PROG ": cell %d of %d (%s), %.0f s elapsed, ETA %.0f s",
            p->done + 1 <= p->total ? p->done + 1 : p->total, p->total, p->what, elapsed, eta);
  p->printed = true;
}

static void progress_clear(progress *p) {
  if (p->printed) fputs("\r\033[K", stderr);
  p->printed = false;
}

/* Everything the command needs, flags first. */
typedef struct scan_bench {
  uint64_t pool_bytes, hot_bytes, big_bytes, page_size, seed, io_combine, io_workers;
  uint64_t oltp_threads, scan_threads, oltp_rate, scan_rate, index_rate;
  double seconds, warmup, warmup_turns, settle, update_ratio;
  const char *policy_flag, *ring_flag, *scan_flag, *ring_size_flag, *dir_flag, *plot_file;
  bool json;

  int npolicies;
  bool ring_on, ring_off; /* which ring settings seq scans run with */
  scan_kind scans[3];     /* in the order given */
  int nscans;
  hs_ring_config ring_cfg;
  const hs_ring_config *ring; /* NULL: the default fixed 256 KiB */
  uint32_t nbuffers;
  hs_blockno hot_pages, hot_head, big_pages;
  raw_rate raw;      /* 256 KiB preads */
  raw_rate raw_page; /* page-sized preads into the same buffer */

  char tmpdir[4096];
  const char *dir;
  scan_wal wal;
  progress prog;
} scan_bench;

static char specs[ARGS_LIST_MAX][ARGS_SPEC_LEN];

/* ---- the threads --------------------------------------------------------- */

/* A cell with a scan goes SETTLE (OLTP alone, unpaced) -> WARMUP (scanners
 * too) -> MEASURE -> STOP; a baseline starts at WARMUP. */
enum { PHASE_WARMUP = 0, PHASE_MEASURE, PHASE_STOP, PHASE_SETTLE };

/* What one cell's threads share. */
typedef struct cell_shared {
  const scan_bench *b;
  hs_pool *pool;
  scan_wal *wal;
  scan_kind scan;
  bool ring;
  /* The start gate: threads wait until `go` (pthread barriers cannot be
   * released early when creating a thread fails). */
  pthread_mutex_t gate_lock;
  pthread_cond_t gate;
  bool go;
  bool scan_go; /* scanners start after the OLTP clients have settled */
  _Atomic int phase;
  pthread_mutex_t err_lock;
  _Atomic bool failed;
  char err[768]; /* the first error, copied: hs_last_error is per thread */
} cell_shared;

/* Aligned to a cache line (each thread writes its own counters on every
 * operation; neighbours must not share a line). */
typedef struct worker {
  alignas(64) cell_shared *sh;
  uint32_t id;
  bool scanner;
  pthread_t tid;
  int seen_phase;
  uint64_t t_start, t_end; /* the measured interval (t_start 0: none) */
  uint64_t ops, hits, updates, bytes;
  _Atomic uint64_t pages; /* scanners: pages read since the cell began */
  uint32_t ring_buffers;
  latency_hist hist;
} worker;

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

static void gate_wait(cell_shared *sh) {
  gate_wait_for(sh, &sh->go);
}

static void gate_open(cell_shared *sh, bool *flag) {
  pthread_mutex_lock(&sh->gate_lock);
  *flag = true;
  pthread_cond_broadcast(&sh->gate);
  pthread_mutex_unlock(&sh->gate_lock);
}

static hs_status stamp_error(hs_relid rel, hs_blockno want, const void *page) {
  return hs_fail(HS_ERR_CORRUPT, 0, "relation %u block %u holds the page stamped as block %u", rel,
                 want, bench_page_block(page));
}

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
    hs_lsn lsn = atomic_fetch_add(&sh->wal->inserted, WAL_RECORD) + WAL_RECORD;
    bench_page_set_u64(page, BENCH_PAGE_OFF_LSN, lsn);
    bench_page_set_u64(page, BENCH_PAGE_OFF_UPDATES,
                       bench_page_get_u64(page, BENCH_PAGE_OFF_UPDATES) + 1);
    st = hs_buf_mark_dirty(pool, buf, lsn, NULL);
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

/* Pacing: each operation has its time slot; a paced loop that is ahead
 * sleeps (in naps of at most MAX_SLEEP_NS, so it notices "stop"), and then
 * runs every operation whose slot has come. Naps last at least MIN_NAP_NS:
 * a client waking up for every one of 80000 operations a second would
 * preempt the scanner (and an I/O worker) on a two-core machine tens of
 * thousands of times a second, which costs the scan more than the clients'
 * work does. A client far behind — the pool stalled it — does not try to
 * make up for more than a second of lost operations in a burst. */
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

static void *oltp_main(void *arg) {
  worker *w = arg;
  cell_shared *sh = w->sh;
  const scan_bench *b = sh->b;
  bench_rng rng;
  bench_rng_seed(&rng, b->seed, w->id);
  latency_hist_reset(&w->hist);
  gate_wait(sh);
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
    w->updates += update;
    latency_hist_add(&w->hist, t1 - t0);
  }
  if (!w->t_end) w->t_end = bench_now_ns();
  return NULL;
}

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
 * lock, logs the change (a record in the stand-in WAL) and marks it dirty
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
    hs_lsn lsn = atomic_fetch_add(&sh->wal->inserted, WAL_RECORD) + WAL_RECORD;
    bench_page_set_u64(page, BENCH_PAGE_OFF_LSN, lsn);
    st = hs_buf_mark_dirty(pool, buf, lsn, NULL);
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
      hs_strategy_create(pool, vacuum ? HS_STRATEGY_VACUUM : HS_STRATEGY_BULKREAD, b->ring,
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
  hs_strategy_free(ring);
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

static void *scanner_main(void *arg) {
  worker *w = arg;
  gate_wait_for(w->sh, &w->sh->scan_go);
  if (w->sh->scan != SCAN_INDEX)
    seq_scans(w);
  else
    index_scans(w);
  if (!w->t_end) w->t_end = bench_now_ns();
  return NULL;
}

/* ---- one cell ------------------------------------------------------------ */

static const char *ring_label(const cell *c) {
  return c->ring ? "on" : "off";
}

static void cell_name(const cell *c, char *buf, size_t len) {
  if (c->scan == SCAN_NONE)
    snprintf(buf, len, "no scan");
  else if (c->scan == SCAN_INDEX)
    snprintf(buf, len, "index scan");
  else
    snprintf(buf, len, "%s, ring %s", scan_names[c->scan], ring_label(c));
}

/* Sleeps `seconds` in slices, keeping the progress line fresh; returns
 * early if a worker failed. */
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

/* Reads every hot block once, so the cell starts with the hot set resident
 * (as far as the pool holds it). */
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
static hs_status warm_pool(scan_bench *b, hs_pool *pool) {
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
static void cpu_scan_seconds(const cpu_sample *a, const cpu_sample *z, cell_result *r) {
  int64_t rest = (int64_t)(z->process - a->process) - (int64_t)(z->oltp - a->oltp) -
                 (int64_t)(z->main - a->main);
  r->scan_cpu_seconds = rest > 0 ? (double)rest / 1e9 : 0;
  r->scanner_cpu_seconds = (double)(z->scanners - a->scanners) / 1e9;
  r->measured_seconds = (double)(z->wall - a->wall) / 1e9;
}

/* Runs one cell. Returns 0, or 1 after printing the error line. */
static int run_cell(scan_bench *b, const cell *c, cell_result *r) {
  memset(r, 0, sizeof *r);
  const char *what = b->prog.what; /* the cell's title, set by the caller */

  hs_pool_options po;
  hs_pool_options_init(&po);
  po.dir = b->dir;
  po.page_size = (uint32_t)b->page_size;
  po.pool_bytes = b->pool_bytes;
  po.policy = specs[c->policy];
  po.flush_wal_up_to = wal_flush;
  po.wal_needs_flush = wal_needs_flush;
  po.wal_ctx = &b->wal;
  po.io_workers = (uint32_t)b->io_workers;
  hs_pool *pool;
  if (hs_pool_open(&po, &pool) != HS_OK) return cell_error(b, what, hs_last_error());
  if (warm_pool(b, pool) != HS_OK) {
    char msg[600];
    snprintf(msg, sizeof msg, "reading the hot relation: %s", hs_last_error());
    hs_pool_abandon(pool);
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
    return cell_error(b, what, "out of memory");
  }
  sh->b = b;
  sh->pool = pool;
  sh->wal = &b->wal;
  sh->scan = c->scan;
  sh->ring = c->ring;
  pthread_mutex_init(&sh->gate_lock, NULL);
  pthread_cond_init(&sh->gate, NULL);
  pthread_mutex_init(&sh->err_lock, NULL);
  atomic_init(&sh->phase, PHASE_SETTLE);
  atomic_init(&sh->failed, false);

  uint32_t started = 0;
  int create_err = 0;
  for (; started < nthreads; started++) {
    worker *x = &w[started];
    x->sh = sh;
    atomic_init(&x->pages, 0);
    x->scanner = started >= noltp;
    x->id = x->scanner ? started - noltp : started;
    create_err = pthread_create(&x->tid, NULL, x->scanner ? scanner_main : oltp_main, x);
    if (create_err) break;
  }
  if (create_err) atomic_store(&sh->phase, PHASE_STOP);
  gate_open(sh, &sh->go);
  /* The hot set has been in use for a long time before a scan comes along:
   * the OLTP clients run alone first, unpaced, so that every policy has seen
   * it often (and, at 1.1 s, for longer than InnoDB's old_blocks_time lets
   * its pages become young) — hours of OLTP, compressed. A baseline has no
   * scan to wait for: its warm-up is that settling (LIRS, for one, needs a
   * few hundred thousand accesses to turn the hot pages into LIR blocks). */
  if (!create_err) {
    wait_phase(b, sh, c->scan != SCAN_NONE ? b->settle : b->warmup);
    int expect = PHASE_SETTLE;
    atomic_compare_exchange_strong(&sh->phase, &expect, PHASE_WARMUP);
  }
  gate_open(sh, &sh->scan_go);

  if (!create_err) {
    if (c->scan != SCAN_NONE) wait_phase(b, sh, b->warmup);
    /* The scan's effect on a policy settles once it has cycled the pool a
     * few times: flat-out sequential scans do that within milliseconds, a
     * paced index scan takes seconds. */
    if (nscan) wait_turns(b, sh, w + noltp, nscan);
    /* Reset first: a worker counts from the moment it sees the new phase.
     * A worker that failed meanwhile has set PHASE_STOP, which stays. */
    hs_pool_stats_reset(pool);
    cpu_sample before, after;
    cpu_take(&before, w, noltp, nthreads);
    int expect = PHASE_WARMUP;
    if (atomic_compare_exchange_strong(&sh->phase, &expect, PHASE_MEASURE))
      wait_phase(b, sh, b->seconds);
    atomic_store(&sh->phase, PHASE_STOP);
    cpu_take(&after, w, noltp, nthreads);
    cpu_scan_seconds(&before, &after, r);
  }
  for (uint32_t i = 0; i < started; i++) pthread_join(w[i].tid, NULL);

  int rc = 0;
  if (create_err) {
    rc = cell_error(b, what, strerror(create_err));
  } else if (atomic_load(&sh->failed)) {
    rc = cell_error(b, what, sh->err);
  } else {
    /* Keep what cpu_scan_seconds filled in. */
    double scan_cpu = r->scan_cpu_seconds, scanner_cpu = r->scanner_cpu_seconds;
    double measured = r->measured_seconds;
    memset(r, 0, sizeof *r);
    r->scan_cpu_seconds = scan_cpu;
    r->scanner_cpu_seconds = scanner_cpu;
    r->measured_seconds = measured;
    latency_hist all;
    latency_hist_reset(&all);
    double oltp_secs = 0;
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
        r->oltp_updates += x->updates;
        if (secs > 0) r->oltp_ops_per_sec += (double)x->ops / secs;
        oltp_secs += secs;
        latency_hist_merge(&all, &x->hist);
      }
    }
    r->seconds = noltp ? oltp_secs / noltp : 0;
    r->hit_ratio = r->oltp_ops ? (double)r->oltp_hits / (double)r->oltp_ops : 0;
    r->p50_us = latency_hist_quantile_us(&all, 0.50);
    r->p99_us = latency_hist_quantile_us(&all, 0.99);
    hs_io_stats s;
    hs_pool_stats(pool, &s);
    r->evictions = hs_io_stats_total(&s, HS_STAT_EVICTIONS);
    r->reuses = hs_io_stats_total(&s, HS_STAT_REUSES);
    r->wal_flushes = hs_io_stats_total(&s, HS_STAT_WAL_FLUSHES);
    r->writes = hs_io_stats_total(&s, HS_STAT_WRITES);
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
  return rc;
}

/* ---- the raw pread rate ------------------------------------------------ */

/* Reads the big relation's file into a 256 KiB buffer, `io` bytes per pread
 * (256 KiB at a time, or one page at a time cycling through the buffer the
 * way a ring does): one pass to make sure it is in the page cache, then
 * timed ones for at least RAW_SECONDS (a pass over a cached 256 MiB takes
 * some 15 ms: a rate from one or two of them moves by a quarter from run to
 * run). */
static hs_status measure_raw_io(scan_bench *b, uint32_t io, double seconds, raw_rate *rate) {
  char name[64], path[4200];
  hs_smgr_fork_filename(BIG_REL, HS_FORK_MAIN, name, sizeof name);
  if ((size_t)snprintf(path, sizeof path, "%s/%s", b->dir, name) >= sizeof path)
    return hs_fail(HS_ERR_INVALID, 0, "the relation's path under %s is too long", b->dir);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    return hs_fail(hs_status_from_errno(err), err, "opening %s: %s", path, strerror(err));
  }
  void *buf = NULL;
  if (posix_memalign(&buf, 4096, RAW_CHUNK) != 0) {
    close(fd);
    return hs_fail(HS_ERR_NOMEM, ENOMEM, "allocating a %u-byte read buffer", RAW_CHUNK);
  }
  hs_status st = HS_OK;
  uint64_t bytes = 0, t0 = 0, cpu0 = 0;
  for (int pass = 0; st == HS_OK; pass++) {
    if (pass == 1) {
      t0 = bench_now_ns();
      cpu0 = bench_thread_cpu_ns();
    }
    if (pass > 1 && bench_now_ns() - t0 >= (uint64_t)(seconds * 1e9)) break;
    if (bench_interrupted()) {
      st = hs_fail(HS_ERR_IO, EINTR, "reading %s: interrupted", path);
      break;
    }
    off_t off = 0;
    for (;;) {
      size_t at = (size_t)(off % RAW_CHUNK) / io * io;
      ssize_t got = pread(fd, (char *)buf + at, io, off);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) {
        int err = errno;
        st = hs_fail(hs_status_from_errno(err), err, "reading %s: %s", path, strerror(err));
        break;
      }
      if (got == 0) break;
      off += got;
      if (pass > 0) bytes += (uint64_t)got;
    }
  }
  uint64_t ns = bench_now_ns() - t0;
  uint64_t cpu = bench_thread_cpu_ns() - cpu0;
  free(buf);
  close(fd);
  if (st == HS_OK) {
    rate->mb_per_sec = ns ? (double)bytes / 1e6 / ((double)ns / 1e9) : 0;
    rate->mb_per_cpu_sec = cpu ? (double)bytes / 1e6 / ((double)cpu / 1e9) : 0;
  }
  return st;
}

/* Both limits: 256 KiB reads (the file system's best) and page-sized reads
 * (the same system calls a page-at-a-time buffer manager makes). */
static hs_status measure_raw(scan_bench *b) {
  hs_status st = measure_raw_io(b, RAW_CHUNK, RAW_SECONDS, &b->raw);
  if (st == HS_OK) st = measure_raw_io(b, (uint32_t)b->page_size, RAW_SECONDS, &b->raw_page);
  return st;
}

/* ---- output -------------------------------------------------------------- */

static void json_string(const char *s) {
  putchar('"');
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\')
      printf("\\%c", ch);
    else if (ch < 0x20)
      printf("\\u%04x", ch);
    else
      putchar(ch);
  }
  putchar('"');
}

static double scan_ratio(const cell_result *r) {
  return r->raw_mb_per_sec > 0 ? r->scan_mb_per_sec / r->raw_mb_per_sec : 0;
}

/* Scan MB per CPU-second of the scanners and the I/O workers. */
static double scan_mb_per_cpu_sec(const cell_result *r) {
  return r->scan_cpu_seconds > 0 ? (double)r->scan_bytes / 1e6 / r->scan_cpu_seconds : 0;
}

/* That over the raw preads' MB per CPU-second. */
static double scan_cpu_ratio(const cell_result *r) {
  return r->raw_mb_per_cpu_sec > 0 ? scan_mb_per_cpu_sec(r) / r->raw_mb_per_cpu_sec : 0;
}

static void print_json(const scan_bench *b, const cell *c, const cell_result *r) {
  printf("{\"policy\":");
  json_string(specs[c->policy]);
  printf(",\"ring\":\"%s\",\"scan\":\"%s\",\"oltp_ops_per_sec\":%.1f,\"oltp_hit_ratio\":%.6f,"
         "\"oltp_p50_us\":%.3f,\"oltp_p99_us\":%.3f,\"hot_share\":%.6f,\"scan_mb_per_sec\":%.1f,"
         "\"raw_mb_per_sec\":%.1f,\"scan_raw_ratio\":%.4f",
         ring_label(c), scan_names[c->scan], r->oltp_ops_per_sec, r->hit_ratio, r->p50_us,
         r->p99_us, r->hot_share, r->scan_mb_per_sec, r->raw_mb_per_sec, scan_ratio(r));
  printf(",\"raw_page_mb_per_sec\":%.1f,\"scan_page_raw_ratio\":%.4f", b->raw_page.mb_per_sec,
         b->raw_page.mb_per_sec > 0 ? r->scan_mb_per_sec / b->raw_page.mb_per_sec : 0);
  /* CPU: scan_cpu_seconds is the scanners' and the I/O workers' CPU time
   * over measured_seconds of wall time; scan_cpus their quotient (cores
   * kept busy); scan_raw_cpu_ratio the scan's MB per CPU-second over the
   * raw preads' (one thread). */
  printf(",\"scan_cpu_seconds\":%.4f,\"scanner_cpu_seconds\":%.4f,\"measured_seconds\":%.4f,"
         "\"scan_cpus\":%.3f,\"scan_mb_per_cpu_sec\":%.1f,\"raw_mb_per_cpu_sec\":%.1f,"
         "\"scan_raw_cpu_ratio\":%.4f",
         r->scan_cpu_seconds, r->scanner_cpu_seconds, r->measured_seconds,
         r->measured_seconds > 0 ? r->scan_cpu_seconds / r->measured_seconds : 0,
         scan_mb_per_cpu_sec(r), r->raw_mb_per_cpu_sec, scan_cpu_ratio(r));
  printf(",\"ring_buffers\":%u,\"ring_size\":", r->ring_buffers);
  json_string(b->ring_size_flag ? b->ring_size_flag : "fixed");
  printf(",\"oltp_ops\":%" PRIu64 ",\"oltp_updates\":%" PRIu64 ",\"scan_bytes\":%" PRIu64
         ",\"evictions\":%" PRIu64 ",\"reuses\":%" PRIu64 ",\"writes\":%" PRIu64
         ",\"wal_flushes\":%" PRIu64 ",\"seconds\":%.3f,\"oltp_threads\":%" PRIu64
         ",\"scan_threads\":%" PRIu64 ",\"oltp_rate\":%" PRIu64 ",\"scan_rate\":%" PRIu64
         ",\"index_rate\":%" PRIu64
         ",\"update_ratio\":%g,\"pool_pages\":%u,\"hot_pages\":%u,\"big_pages\":%u,"
         "\"page_size\":%" PRIu64 "}\n",
         r->oltp_ops, r->oltp_updates, r->scan_bytes, r->evictions, r->reuses, r->writes,
         r->wal_flushes, r->seconds, b->oltp_threads, c->scan == SCAN_NONE ? 0 : b->scan_threads,
         b->oltp_rate, b->scan_rate, b->index_rate, b->update_ratio, b->nbuffers, b->hot_pages,
         b->big_pages, b->page_size);
  fflush(stdout);
}

static void print_header(const scan_bench *b) {
  char pool[32], page[32], hot[32], big[32], raw[64], raw_page[48];
  args_format_size((uint64_t)b->nbuffers * b->page_size, pool, sizeof pool);
  args_format_size(b->page_size, page, sizeof page);
  args_format_size((uint64_t)b->hot_pages * b->page_size, hot, sizeof hot);
  args_format_size((uint64_t)b->big_pages * b->page_size, big, sizeof big);
  snprintf(raw, sizeof raw, "%.0f MB/s (%.0f per CPU-s)", b->raw.mb_per_sec, b->raw.mb_per_cpu_sec);
  snprintf(raw_page, sizeof raw_page, "%.0f MB/s", b->raw_page.mb_per_sec);
  printf("pool %s (%u buffers of %s); hot relation %s (%u pages, %.0f%% of reads to the first "
         "%.0f%%)\n",
         pool, b->nbuffers, page, hot, b->hot_pages, 100 * HOT_PART_READS, 100 * HOT_PART);
  printf("big relation %s (%u pages, %.1fx the pool); raw pread of it, 256 KiB at a time: %s,\n"
         "one %s page at a time into a 256 KiB buffer: %s\n",
         big, b->big_pages, (double)b->big_pages / b->nbuffers, raw, page, raw_page);
  char rate[48];
  if (b->oltp_rate)
    snprintf(rate, sizeof rate, "%" PRIu64 " ops/s each", b->oltp_rate);
  else
    snprintf(rate, sizeof rate, "unpaced");
  char seq_rate[48], index_rate[48];
  if (b->scan_rate)
    snprintf(seq_rate, sizeof seq_rate, "%" PRIu64 " pages/s", b->scan_rate);
  else
    snprintf(seq_rate, sizeof seq_rate, "flat out");
  if (b->index_rate)
    snprintf(index_rate, sizeof index_rate, "%" PRIu64 " pages/s", b->index_rate);
  else
    snprintf(index_rate, sizeof index_rate, "flat out");
  printf("%" PRIu64 " OLTP thread%s (%s, %.0f%% updates), %" PRIu64
         " scanner%s (seq %s, index %s); ring %s; %g s warm-up + %g s per cell\n\n",
         b->oltp_threads, b->oltp_threads == 1 ? "" : "s", rate, 100 * b->update_ratio,
         b->scan_threads, b->scan_threads == 1 ? "" : "s", seq_rate, index_rate,
         b->ring_size_flag ? b->ring_size_flag : "fixed (256 KiB)", b->warmup, b->seconds);
  printf("%-22s %-4s %-5s %12s %8s %9s %9s %9s %10s %9s %8s %8s %7s\n", "policy", "ring", "scan",
         "oltp ops/s", "hit%", "p50 us", "p99 us", "hot share", "scan MB/s", "MB/CPU-s", "raw MB/s",
         "scan/raw", "per CPU");
  fflush(stdout);
}

static void print_row(const cell *c, const cell_result *r) {
  char mb[16] = "-", per_cpu[16] = "-", raw[16] = "-", ratio[16] = "-", cpu_ratio[16] = "-";
  if (c->scan != SCAN_NONE) {
    snprintf(mb, sizeof mb, "%.0f", r->scan_mb_per_sec);
    snprintf(per_cpu, sizeof per_cpu, "%.0f", scan_mb_per_cpu_sec(r));
    snprintf(ratio, sizeof ratio, "%.2f", scan_ratio(r));
    snprintf(cpu_ratio, sizeof cpu_ratio, "%.2f", scan_cpu_ratio(r));
  }
  if (c->scan == SCAN_SEQ) snprintf(raw, sizeof raw, "%.0f", r->raw_mb_per_sec);
  printf("%-22s %-4s %-5s %12.0f %7.2f%% %9.2f %9.2f %8.1f%% %10s %9s %8s %8s %7s\n",
         specs[c->policy], ring_label(c), scan_names[c->scan], r->oltp_ops_per_sec,
         100 * r->hit_ratio, r->p50_us, r->p99_us, 100 * r->hot_share, mb, per_cpu, raw, ratio,
         cpu_ratio);
  fflush(stdout);
}

static void print_footer(void) {
  printf("\nhit%%: OLTP reads found in the pool; p50/p99: OLTP operation latency; hot share:\n"
         "buffers holding hot-relation pages at the end of the cell; MB/CPU-s: scan MB per\n"
         "CPU-second of the scanners and the pool's I/O workers together; raw MB/s: 256 KiB\n"
         "preads of the big relation by one thread, just before and after each\n"
         "sequential-scan cell (the mean); scan/raw: scan MB/s over that (index scans: over\n"
         "the first measurement) -- with an I/O worker, two threads' work against one;\n"
         "per CPU: MB/CPU-s over the raw preads' MB per CPU-second, the same comparison per\n"
         "unit of CPU. Index scans and the baselines (scan none) never use a ring.\n");
}

/* Vacuum cells get a second table: what the ring's size did to WAL flushes
 * (the 2007 measurement: a 1-page ring flushed on 82 % of its recycles, a
 * 128-page one on 1.4 %) and what size an adaptive ring ended at. */
static void print_vacuum_table(const cell *cells, const cell_result *res, int n) {
  bool any = false;
  for (int i = 0; i < n; i++) any |= cells[i].scan == SCAN_VACUUM;
  if (!any) return;
  printf("\nvacuum scans: buffers the ring held at the end, buffers recycled, WAL flushes\n"
         "the recycling forced, and flushes per recycle\n\n");
  printf("%-22s %-4s %12s %12s %12s %10s\n", "policy", "ring", "ring bufs", "recycles",
         "WAL flushes", "per recycle");
  for (int i = 0; i < n; i++) {
    const cell_result *r = &res[i];
    if (cells[i].scan != SCAN_VACUUM) continue;
    printf("%-22s %-4s %12u %12" PRIu64 " %12" PRIu64 " %10.4f\n", specs[cells[i].policy],
           ring_label(&cells[i]), r->ring_buffers, r->reuses, r->wal_flushes,
           r->reuses ? (double)r->wal_flushes / (double)r->reuses : 0.0);
  }
}

static int plot(const scan_bench *b, const cell *cells, const cell_result *res, int n) {
  static scan_plot_cell pc[MAX_CELLS];
  static char names[MAX_CELLS][32];
  for (int i = 0; i < n; i++) {
    cell_name(&cells[i], names[i], sizeof names[i]);
    pc[i] = (scan_plot_cell){.policy = specs[cells[i].policy],
                             .variant = names[i],
                             .hit_ratio = res[i].hit_ratio,
                             .oltp_ops = res[i].oltp_ops_per_sec,
                             .scan_mb = res[i].scan_mb_per_sec,
                             .p99_us = res[i].p99_us};
  }
  char title[256], pool[32], big[32];
  args_format_size((uint64_t)b->nbuffers * b->page_size, pool, sizeof pool);
  args_format_size((uint64_t)b->big_pages * b->page_size, big, sizeof big);
  snprintf(title, sizeof title, "hotset bench scan: pool %s, scanned relation %s", pool, big);
  return bench_scan_plot(b->plot_file, title, pc, (size_t)n) == 0 ? 0 : 1;
}

/* ---- flags --------------------------------------------------------------- */

/* Calls take(b, token) for each comma-separated token of a list flag's
 * value; `want` says what the flag takes, for the messages. */
static void parse_list(scan_bench *b, const char *flag, const char *value, const char *want,
                       void (*take)(scan_bench *, const char *)) {
  char buf[64];
  if (strlen(value) >= sizeof buf)
    args_usage_error(&cmd, "--%s: \"%s\": want %s", flag, value, want);
  strcpy(buf, value);
  char *save = NULL;
  bool any = false;
  for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    take(b, t);
    any = true;
  }
  if (!any) args_usage_error(&cmd, "--%s: missing value", flag);
}

/* --ring: "on", "off" or both. */
static void take_ring(scan_bench *b, const char *t) {
  bool on;
  if (!args_parse_bool(t, &on)) args_usage_error(&cmd, "--ring: \"%s\" is not on or off", t);
  if (on)
    b->ring_on = true;
  else
    b->ring_off = true;
}

/* --scan: "seq", "index", "vacuum", in the order given, once each. */
static void take_scan(scan_bench *b, const char *t) {
  scan_kind k;
  if (strcmp(t, "seq") == 0)
    k = SCAN_SEQ;
  else if (strcmp(t, "index") == 0)
    k = SCAN_INDEX;
  else if (strcmp(t, "vacuum") == 0)
    k = SCAN_VACUUM;
  else
    args_usage_error(&cmd, "--scan: \"%s\" is not seq, index or vacuum", t);
  bool dup = false;
  for (int i = 0; i < b->nscans; i++) dup |= b->scans[i] == k;
  if (!dup) b->scans[b->nscans++] = k;
}

static bool is_power_of_two(uint64_t v) {
  return v && (v & (v - 1)) == 0;
}

/* Bytes to pages for --hot and --big: at least one page, at most what a
 * block number can count. */
static hs_blockno size_to_pages(const scan_bench *b, const char *flag, uint64_t bytes) {
  uint64_t pages = bytes / b->page_size;
  char sz[32], page[32];
  if (pages < 1)
    args_usage_error(&cmd, "--%s: %s is less than one page of %s", flag,
                     args_format_size(bytes, sz, sizeof sz),
                     args_format_size(b->page_size, page, sizeof page));
  if (pages >= HS_INVALID_BLOCK)
    args_usage_error(&cmd, "--%s: %s is more than %u pages", flag,
                     args_format_size(bytes, sz, sizeof sz), HS_INVALID_BLOCK - 1);
  return (hs_blockno)pages;
}

static void check_flags(scan_bench *b) {
  if (!is_power_of_two(b->page_size))
    args_usage_error(&cmd, "--page-size: %" PRIu64 " is not a power of two", b->page_size);
  const char *why = NULL;
  b->npolicies = args_split_policies(b->policy_flag, true, specs, ARGS_LIST_MAX, &why);
  if (b->npolicies < 0) args_usage_error(&cmd, "--policy: \"%s\": %s", b->policy_flag, why);
  parse_list(b, "ring", b->ring_flag, "on, off or on,off", take_ring);
  parse_list(b, "scan", b->scan_flag, "seq, index, vacuum or a list", take_scan);
  if (b->ring_size_flag) {
    if (hs_ring_config_parse(b->ring_size_flag, &b->ring_cfg) != HS_OK)
      args_usage_error(&cmd, "--ring-size: %s", hs_last_error());
    b->ring = &b->ring_cfg;
  }
  uint64_t npages = b->pool_bytes / b->page_size;
  uint64_t threads = b->oltp_threads + b->scan_threads;
  /* Each thread pins one buffer at a time; leave the policies room to work. */
  if (npages < 16 || npages < 2 * threads + 16) {
    char pool[32], page[32];
    args_usage_error(&cmd,
                     "--pool: %s holds %" PRIu64 " pages of %s; %" PRIu64
                     " threads need at least %" PRIu64,
                     args_format_size(b->pool_bytes, pool, sizeof pool), npages,
                     args_format_size(b->page_size, page, sizeof page), threads, 2 * threads + 16);
  }
  if (npages > (1u << 30)) args_usage_error(&cmd, "--pool: more than 2^30 pages");
  b->nbuffers = (uint32_t)npages;
  if (!b->hot_bytes) b->hot_bytes = b->pool_bytes / 4;
  if (!b->big_bytes) b->big_bytes = b->pool_bytes * 4;
  b->hot_pages = size_to_pages(b, "hot", b->hot_bytes);
  b->big_pages = size_to_pages(b, "big", b->big_bytes);
  b->hot_head = (hs_blockno)((double)b->hot_pages * HOT_PART);
  if (b->hot_head < 1) b->hot_head = 1;
}

/* The matrix, in run order: per policy the baseline, then each scan kind
 * with each ring setting (index: once, ring off). */
static int build_cells(const scan_bench *b, cell *cells) {
  int n = 0;
  for (int p = 0; p < b->npolicies; p++) {
    cells[n++] = (cell){.policy = p, .scan = SCAN_NONE, .ring = false};
    for (int s = 0; s < b->nscans; s++) {
      if (b->scans[s] == SCAN_INDEX) {
        cells[n++] = (cell){.policy = p, .scan = SCAN_INDEX, .ring = false};
        continue;
      }
      if (b->ring_on) cells[n++] = (cell){.policy = p, .scan = b->scans[s], .ring = true};
      if (b->ring_off) cells[n++] = (cell){.policy = p, .scan = b->scans[s], .ring = false};
    }
  }
  return n;
}

/* ---- main ---------------------------------------------------------------- */

static void remove_tmpdir(scan_bench *b) {
  if (b->tmpdir[0]) bench_tempdir_remove(b->tmpdir);
  b->tmpdir[0] = '\0';
}

/* After a SIGINT or SIGTERM (every wait and loop returns early then): the
 * temporary directory removed, the process ended by the signal. */
static void stop_if_interrupted(scan_bench *b) {
  if (!bench_interrupted()) return;
  progress_clear(&b->prog);
  remove_tmpdir(b);
  bench_exit_interrupted(PROG);
}

static int fail(scan_bench *b, const char *what) {
  stop_if_interrupted(b); /* a failure that is the signal's doing */
  progress_clear(&b->prog);
  fprintf(stderr, PROG ": %s: %s\n", what, hs_last_error());
  return 1;
}

/* Makes both relations with stamped pages through a storage manager of
 * their own (closed before any pool opens the directory). */
static int make_relations(scan_bench *b) {
  hs_smgr *smgr;
  if (hs_smgr_open(b->dir, (uint32_t)b->page_size, &smgr) != HS_OK)
    return fail(b, "opening the data directory");
  int rc = 0;
  if (bench_make_relation(smgr, HOT_REL, b->hot_pages) != HS_OK)
    rc = fail(b, "creating the hot relation");
  else if (bench_make_relation(smgr, BIG_REL, b->big_pages) != HS_OK)
    rc = fail(b, "creating the big relation");
  /* Written back now, so that the kernel's writeback of a few hundred MiB
   * does not run during the raw measurement or the first cells. */
  else if (hs_smgr_sync_all(smgr) != HS_OK)
    rc = fail(b, "syncing the relations");
  hs_smgr_close(smgr);
  return rc;
}

/* The raw rate next to a cell; on failure says why and cleans up. */
static int measure_cell_raw(scan_bench *b, raw_rate *rate) {
  if (measure_raw_io(b, RAW_CHUNK, RAW_CELL_SECONDS, rate) == HS_OK) return 0;
  stop_if_interrupted(b);
  progress_clear(&b->prog);
  fprintf(stderr, PROG ": measuring raw pread throughput: %s\n", hs_last_error());
  remove_tmpdir(b);
  return 1;
}

int bench_scan_main(int argc, char **argv) {
  static scan_bench bench;
  scan_bench *b = &bench;
  memset(b, 0, sizeof *b);
  b->pool_bytes = 64u << 20;
  b->page_size = HS_PAGE_SIZE_DEFAULT;
  b->seed = 1;
  b->oltp_threads = 1;
  b->scan_threads = 1;
  b->oltp_rate = 80000;
  b->scan_rate = 0;
  /* Index scans read a heap page per index entry, each after an index
   * descent: far below sequential speed. Flat out in this lab they would
   * re-read the big relation's pages more often than the OLTP clients read
   * the hot relation's tail, and no policy could keep the two apart. */
  b->index_rate = 40000;
  b->io_combine = HS_STREAM_COMBINE_DEFAULT;
  b->io_workers = 1;
  b->seconds = 1;
  b->warmup = 0.3;
  b->warmup_turns = 3;
  b->settle = 1.1;
  b->policy_flag = "clock-sweep,lru,2q,arc,lirs,s3fifo,twolist,midpoint";
  b->ring_flag = "on,off";
  b->scan_flag = "seq,index";
  const args_opt opts[] = {
      {.name = "policy", .kind = ARGS_STRING, .dest = &b->policy_flag},
      {.name = "ring", .kind = ARGS_STRING, .dest = &b->ring_flag},
      {.name = "scan", .kind = ARGS_STRING, .dest = &b->scan_flag},
      {.name = "ring-size", .kind = ARGS_STRING, .dest = &b->ring_size_flag},
      {.name = "pool", .kind = ARGS_SIZE, .dest = &b->pool_bytes, .min = 1},
      {.name = "hot", .kind = ARGS_SIZE, .dest = &b->hot_bytes, .min = 1},
      {.name = "big", .kind = ARGS_SIZE, .dest = &b->big_bytes, .min = 1},
      {.name = "page-size",
       .kind = ARGS_SIZE,
       .dest = &b->page_size,
       .min = HS_PAGE_SIZE_MIN,
       .max = HS_PAGE_SIZE_MAX},
      {.name = "oltp-threads",
       .kind = ARGS_UINT,
       .dest = &b->oltp_threads,
       .min = 1,
       .max = MAX_THREADS},
      {.name = "scan-threads",
       .kind = ARGS_UINT,
       .dest = &b->scan_threads,
       .min = 1,
       .max = MAX_THREADS},
      {.name = "oltp-rate", .kind = ARGS_UINT, .dest = &b->oltp_rate, .max = 1000000000},
      {.name = "scan-rate", .kind = ARGS_UINT, .dest = &b->scan_rate, .max = 1000000000},
      {.name = "index-rate", .kind = ARGS_UINT, .dest = &b->index_rate, .max = 1000000000},
      {.name = "io-combine",
       .kind = ARGS_SIZE,
       .dest = &b->io_combine,
       .min = HS_PAGE_SIZE_MIN,
       .max = 16u << 20},
      {.name = "io-workers", .kind = ARGS_UINT, .dest = &b->io_workers, .max = 64},
      {.name = "update-ratio", .kind = ARGS_DOUBLE, .dest = &b->update_ratio, .dmax = 1},
      {.name = "seconds", .kind = ARGS_DOUBLE, .dest = &b->seconds, .dmin = 0.01, .dmax = 86400},
      {.name = "warmup", .kind = ARGS_DOUBLE, .dest = &b->warmup, .dmax = 86400},
      {.name = "warmup-turns", .kind = ARGS_DOUBLE, .dest = &b->warmup_turns, .dmax = 1000},
      {.name = "settle", .kind = ARGS_DOUBLE, .dest = &b->settle, .dmax = 86400},
      {.name = "dir", .kind = ARGS_STRING, .dest = &b->dir_flag},
      {.name = "seed", .kind = ARGS_UINT, .dest = &b->seed},
      {.name = "json", .kind = ARGS_FLAG, .dest = &b->json},
      {.name = "plot", .kind = ARGS_STRING, .dest = &b->plot_file},
  };
  args_parse(&cmd, opts, sizeof opts / sizeof opts[0], argc, argv, 0);
  if (b->dir_flag && strlen(b->dir_flag) > BENCH_DIR_MAX)
    args_usage_error(&cmd, "--dir: a path of %zu characters (at most %d)", strlen(b->dir_flag),
                     BENCH_DIR_MAX);
  check_flags(b);

  static cell cells[MAX_CELLS];
  static cell_result res[MAX_CELLS];
  int ncells = build_cells(b, cells);

  /* Find out now, not after a minute of measuring, that no chart can be
   * drawn. */
  if (b->plot_file && !gnuplot_installed()) {
    fprintf(stderr, PROG ": --plot: gnuplot is not installed (apt-get install gnuplot-nox)\n");
    return 1;
  }

  /* Refuse now what could only end in ENOSPC or an out-of-memory kill
   * after minutes of writing. */
  uint64_t rel_bytes = ((uint64_t)b->hot_pages + b->big_pages) * b->page_size;
  if (bench_check_memory(b->pool_bytes, "its pool") != HS_OK ||
      bench_check_space(b->dir_flag ? b->dir_flag : bench_tempdir_parent(), rel_bytes,
                        "its relations") != HS_OK) {
    fprintf(stderr, PROG ": %s\n", hs_last_error());
    return 1;
  }
  bench_signals_install();

  b->prog = (progress){.on = isatty(2),
                       .t0 = bench_now_ns(),
                       .total = ncells,
                       .cell_budget = b->warmup + b->seconds};
  snprintf(b->prog.what, sizeof b->prog.what, "creating the relations");
  b->prog.cell_t0 = 0;
  progress_show(&b->prog);

  if (b->dir_flag) {
    b->dir = b->dir_flag;
  } else {
    if (bench_tempdir_make("bench-scan", b->tmpdir, sizeof b->tmpdir) != HS_OK)
      return fail(b, "creating a temporary directory");
    b->dir = b->tmpdir;
  }
  int rc = make_relations(b);
  if (rc == 0 && measure_raw(b) != HS_OK) rc = fail(b, "measuring raw pread throughput");
  if (rc != 0) {
    remove_tmpdir(b);
    return rc;
  }

  if (!b->json) {
    progress_clear(&b->prog);
    print_header(b);
  }
  for (int i = 0; i < ncells; i++) {
    char name[32];
    cell_name(&cells[i], name, sizeof name);
    snprintf(b->prog.what, sizeof b->prog.what, "%s, %s", specs[cells[i].policy], name);
    b->prog.cell_t0 = bench_now_ns();
    progress_show(&b->prog);
    /* A sequential scan is held against the raw rate of the same moment,
     * measured just before and just after it: from run to run (and minute
     * to minute) this machine's copy rate from the page cache moves by a
     * fifth. */
    bool seq = cells[i].scan == SCAN_SEQ;
    raw_rate before = b->raw, after = b->raw;
    if (seq && measure_cell_raw(b, &before) != 0) return 1;
    int cell_rc = run_cell(b, &cells[i], &res[i]);
    stop_if_interrupted(b); /* before printing a cell cut short */
    if (cell_rc != 0) {
      /* run_cell cleared the progress line and printed the error. */
      remove_tmpdir(b);
      return 1;
    }
    if (seq && measure_cell_raw(b, &after) != 0) return 1;
    res[i].raw_mb_per_sec = (before.mb_per_sec + after.mb_per_sec) / 2;
    res[i].raw_mb_per_cpu_sec = (before.mb_per_cpu_sec + after.mb_per_cpu_sec) / 2;
    b->prog.cells_ns += bench_now_ns() - b->prog.cell_t0;
    b->prog.done++;
    progress_clear(&b->prog);
    if (b->json)
      print_json(b, &cells[i], &res[i]);
    else
      print_row(&cells[i], &res[i]);
  }
  progress_clear(&b->prog);
  if (!b->json) {
    print_footer();
    print_vacuum_table(cells, res, ncells);
  }
  remove_tmpdir(b);
  if (b->plot_file) return plot(b, cells, res, ncells);
  return 0;
}
