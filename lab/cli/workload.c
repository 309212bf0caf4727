/*
 * cli/workload.c — `hotset workload`: the pool doing real work for a few
 * seconds.
 *
 * It builds a relation several times larger than the pool, then runs threads
 * that read and update pages with a skewed access pattern (80% of accesses go
 * to 20% of the blocks, about 20% of accesses are updates), and prints the
 * throughput and the pool's I/O statistics. It is meant as a first thing to
 * run and as a smoke test of the whole stack, so it also checks what it can:
 *
 *  - WAL before data. Each update logs a record in hotset's write-ahead log
 *    (--wal log, the default; hotset/wal.h) — or, with --wal counter, takes
 *    an LSN from an atomic counter standing in for one, "flushed" by the
 *    pool's flush_wal_up_to callback — stores the LSN in the page and
 *    passes it to hs_buf_mark_dirty. An I/O observer (hotset/fault.h) looks
 *    at every page just before it is written: a page whose LSN is beyond the
 *    log's durable end would be data written ahead of its log record, and is
 *    counted as a violation.
 *  - No lost updates. After the pool is closed (which writes every dirty
 *    page) the relation is read back from disk: every page must carry its
 *    stamp, and the update counters in the pages must add up to the number
 *    of updates made.
 */
#include "cli/workload.h"

#include "common/args.h"
#include "common/clock.h"
#include "common/flags.h"
#include "common/interrupt.h"
#include "common/json.h"
#include "common/resources.h"
#include "common/rng.h"
#include "common/scratch.h"
#include "common/stamped.h"
#include "core/error.h"
#include "core/mkdirs.h"
#include "hotset/fault.h"
#include "hotset/pool.h"
#include "hotset/wal.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROG          "hotset workload"
#define WL_REL        16384u
#define HOT_FRACTION  0.2
#define HOT_ACCESS    0.8
#define UPDATE_RATIO  0.2
#define STOP_INTERVAL 64

static const args_command command = {
    .cmd = {.prog = PROG},
    .about = "Runs a skewed read/update workload (80% of accesses to 20% of the blocks, 20%\n"
             "updates) on a relation larger than the pool, prints ops/s and the pool's I/O\n"
             "statistics, then checks on disk that no update was lost and that no page was\n"
             "written ahead of its log record.\n",
    .notes = ARGS_SIZE_NOTE
    "It refuses to start (exit 1) when the relation would not fit in the free space\n"
    "or the pool is over half the physical memory. On SIGINT or SIGTERM it stops,\n"
    "removes its temporary directory and dies by that signal.\n",
};
static const args_cmd *const cmd = &command.cmd;

/* The stand-in write-ahead log: an insert position and a flush position. */
typedef struct wl_wal {
  hs_wal *log;                               /* the real log (--wal log), or NULL */
  _Atomic uint64_t inserted;                 /* end of the last record handed out */
  _Atomic uint64_t flushed;                  /* the log is "durable" up to here */
  _Atomic uint64_t flushes;                  /* callbacks that had to flush */
  _Atomic uint64_t ahead;                    /* pages seen written with LSN > flushed */
  _Atomic uint64_t ahead_lsn, ahead_flushed; /* an example, for the message */
} wl_wal;

static hs_status wl_flush_wal(void *ctx, hs_lsn upto, bool *did_flush) {
  wl_wal *wal = ctx;
  uint64_t end = atomic_load(&wal->inserted);
  *did_flush = false;
  if (upto > end)
    return hs_fail(HS_ERR_WAL, 0,
                   "asked to flush the log up to LSN %" PRIu64 ", past its end at %" PRIu64, upto,
                   end);
  /* Like PostgreSQL's XLogFlush, flush everything inserted so far, not just
   * up to the request: one flush then covers many pages. */
  uint64_t cur = atomic_load(&wal->flushed);
  while (cur < upto) {
    if (atomic_compare_exchange_weak(&wal->flushed, &cur, end)) {
      atomic_fetch_add(&wal->flushes, 1);
      *did_flush = true;
      break;
    }
  }
  return HS_OK;
}

/* Sees every page just before it is written (hotset/fault.h). */
static void wl_observe(void *ctx, hs_io_op op, hs_relid rel, hs_fork fork, hs_blockno block,
                       const void *page) {
  wl_wal *wal = ctx;
  (void)rel;
  (void)fork;
  (void)block;
  if (op != HS_IO_WRITE || !page) return;
  uint64_t lsn = bench_page_get_u64(page, BENCH_PAGE_OFF_LSN);
  uint64_t flushed = wal->log ? hs_wal_flushed_lsn(wal->log) : atomic_load(&wal->flushed);
  if (lsn > flushed) {
    if (atomic_fetch_add(&wal->ahead, 1) == 0) {
      atomic_store(&wal->ahead_lsn, lsn);
      atomic_store(&wal->ahead_flushed, flushed);
    }
  }
}

/* Logs an update of `blk` in the real log, or takes an LSN from the counter
 * (records of the same size either way). */
static hs_status wl_log_update(wl_wal *wal, hs_blockno blk, hs_lsn *lsn) {
  if (wal->log) return bench_log_change(wal->log, WL_REL, blk, lsn);
  *lsn = atomic_fetch_add(&wal->inserted, BENCH_LOG_RECORD) + BENCH_LOG_RECORD;
  return HS_OK;
}

typedef struct wl_shared {
  hs_pool *pool;
  wl_wal *wal;
  hs_blockno pages, hot;
  uint64_t seed;
  pthread_barrier_t start;
  atomic_bool stop;
  pthread_mutex_t err_lock;
  bool failed;
  char err[768];
} wl_shared;

typedef struct wl_worker {
  wl_shared *sh;
  uint32_t id;
  pthread_t tid;
  uint64_t reads, updates;
  uint64_t t_start, t_end;
} wl_worker;

static hs_blockno pick_block(wl_shared *sh, bench_rng *rng) {
  hs_blockno cold = sh->pages - sh->hot;
  if (cold == 0 || bench_rng_double(rng) < HOT_ACCESS) return bench_rng_below(rng, sh->hot);
  return sh->hot + bench_rng_below(rng, cold);
}

/* One access: a read under a share lock, or an update under an exclusive
 * lock that logs (takes an LSN), changes the page and marks it dirty. */
static hs_status wl_access(wl_worker *w, bench_rng *rng, hs_blockno blk) {
  wl_shared *sh = w->sh;
  bool update = bench_rng_double(rng) < UPDATE_RATIO;
  hs_buf b;
  hs_status st = hs_pool_read(sh->pool, WL_REL, HS_FORK_MAIN, blk, HS_READ_NORMAL, NULL, &b, NULL);
  if (st != HS_OK) return st;
  hs_buf_lock(sh->pool, b, update ? HS_LOCK_EXCLUSIVE : HS_LOCK_SHARE);
  unsigned char *page = hs_buf_page(sh->pool, b);
  if (!bench_page_check(page, WL_REL, blk)) {
    st = hs_fail(HS_ERR_CORRUPT, 0, "block %u holds the page stamped as block %u", blk,
                 bench_page_block(page));
  } else if (update) {
    /* The LSN is taken under the exclusive lock, so a page's LSNs only grow. */
    hs_lsn lsn;
    st = wl_log_update(sh->wal, blk, &lsn);
    if (st == HS_OK) {
      bench_page_set_u64(page, BENCH_PAGE_OFF_LSN, lsn);
      bench_page_set_u64(page, BENCH_PAGE_OFF_UPDATES,
                         bench_page_get_u64(page, BENCH_PAGE_OFF_UPDATES) + 1);
      st = hs_buf_mark_dirty(sh->pool, b, lsn, NULL);
    }
    if (st == HS_OK) w->updates++;
  } else {
    w->reads++;
  }
  hs_buf_unlock(sh->pool, b);
  hs_buf_release(sh->pool, b);
  return st;
}

static void *wl_worker_main(void *arg) {
  wl_worker *w = arg;
  wl_shared *sh = w->sh;
  bench_rng rng;
  bench_rng_seed(&rng, sh->seed, w->id);

  pthread_barrier_wait(&sh->start);
  w->t_start = bench_now_ns();
  while (!atomic_load_explicit(&sh->stop, memory_order_relaxed)) {
    for (int i = 0; i < STOP_INTERVAL; i++) {
      hs_blockno blk = pick_block(sh, &rng);
      if (wl_access(w, &rng, blk) != HS_OK) {
        pthread_mutex_lock(&sh->err_lock);
        if (!sh->failed) {
          sh->failed = true;
          snprintf(sh->err, sizeof sh->err, "thread %u, block %u: %s", w->id, blk, hs_last_error());
        }
        pthread_mutex_unlock(&sh->err_lock);
        atomic_store(&sh->stop, true);
        goto out;
      }
    }
  }
out:
  w->t_end = bench_now_ns();
  return NULL;
}

/* Reads the relation back from disk after the pool is closed: every page
 * must carry its stamp; returns the sum of the update counters and the
 * highest page LSN. */
static hs_status verify_on_disk(const char *dir, uint32_t page_size, hs_blockno pages,
                                uint64_t *updates, uint64_t *max_lsn) {
  *updates = 0;
  *max_lsn = 0;
  hs_smgr *smgr;
  hs_status st = hs_smgr_open(dir, &(hs_smgr_options){.page_size = page_size}, &smgr);
  if (st != HS_OK) return st;
  void *page = aligned_alloc(4096, page_size);
  if (!page) {
    hs_smgr_close(smgr);
    return hs_fail(HS_ERR_NOMEM, 0, "allocating a page");
  }
  hs_blockno n = 0;
  st = hs_smgr_nblocks(smgr, WL_REL, HS_FORK_MAIN, &n);
  if (st == HS_OK && n != pages)
    st = hs_fail(HS_ERR_CORRUPT, 0, "the relation has %u blocks, not %u", n, pages);
  for (hs_blockno blk = 0; st == HS_OK && blk < pages && !bench_interrupted(); blk++) {
    st = hs_smgr_read(smgr, WL_REL, HS_FORK_MAIN, blk, page);
    if (st != HS_OK) break;
    if (!bench_page_check(page, WL_REL, blk)) {
      st = hs_fail(HS_ERR_CORRUPT, 0, "block %u on disk is stamped as block %u", blk,
                   bench_page_block(page));
      break;
    }
    uint64_t lsn = bench_page_get_u64(page, BENCH_PAGE_OFF_LSN);
    if (lsn > *max_lsn) *max_lsn = lsn;
    *updates += bench_page_get_u64(page, BENCH_PAGE_OFF_UPDATES);
  }
  free(page);
  hs_smgr_close(smgr);
  return st;
}

/* Everything main needs to clean up after a failure. */
typedef struct wl_run {
  char tmpdir[4096];
  char datadir[4200];
  bool keep;
  hs_pool *pool;
  hs_wal *log;
} wl_run;

static void wl_cleanup(wl_run *d) {
  if (d->pool) hs_pool_abandon(d->pool);
  d->pool = NULL;
  if (d->log) hs_wal_close(d->log); /* after the pool, which flushes through it */
  d->log = NULL;
  if (d->tmpdir[0] && !d->keep) bench_tempdir_remove(d->tmpdir);
}

static int wl_fail(wl_run *d, const char *what, const char *msg) {
  wl_cleanup(d);
  if (bench_interrupted()) bench_exit_interrupted(PROG); /* the failure is the signal's doing */
  fprintf(stderr, PROG ": %s: %s\n", what, msg);
  return 1;
}

/* After a SIGINT or SIGTERM: the pool abandoned (nothing written), the
 * temporary directory removed, and the process ended by the signal. */
static void wl_stop_if_interrupted(wl_run *d) {
  if (!bench_interrupted()) return;
  wl_cleanup(d);
  bench_exit_interrupted(PROG);
}

/* The command line, as given and as checked. */
typedef struct wl_flags {
  uint64_t threads, pool_bytes, pages, page_size, seed, bgwriter_delay, bgwriter_maxpages;
  double seconds;
  bool json, keep, direct;
  const char *policy, *dir_flag, *wal_flag;
} wl_flags;

/* What the run measured, and what the pool and the log said before they
 * were closed (closing frees their statistics). */
typedef struct wl_result {
  uint64_t reads, updates;
  uint64_t elapsed; /* ns, from the first worker's start to the last one's end */
  hs_pool_stats stats;
  hs_pool_bgwriter_stats bgw;
  /* The policy's name is a constant of its implementation: it outlives the
   * pool. */
  const char *policy_name;
  uint32_t nbuffers;
  hs_wal_stats wst;
  uint64_t log_inserted, log_flushed;
  uint64_t disk_updates;
} wl_result;

/* Reads the command line into *f; a usage error exits. The table is also
 * what --help prints, in its order, so it stays in one piece. */
static void wl_parse_flags(int argc, char **argv, wl_flags *f) {
  *f = (wl_flags){0};
  const args_opt opts[] = {
      {.name = "threads",
       .kind = ARGS_UINT,
       .dest = &f->threads,
       .min = 1,
       .max = 1024,
       .def = "4",
       .help = "worker threads"},
      {.name = "seconds",
       .kind = ARGS_DOUBLE,
       .dest = &f->seconds,
       .dmin = 0.01,
       .dmax = 86400,
       .def = "3",
       .arg = "S",
       .help = "duration"},
      {.name = "pool",
       .kind = ARGS_SIZE,
       .dest = &f->pool_bytes,
       .min = 1,
       .def = "4MiB",
       .help = "pool size"},
      {.name = "pages",
       .kind = ARGS_UINT,
       .dest = &f->pages,
       .min = 1,
       .max = HS_INVALID_BLOCK - 1,
       .def = "4096",
       .help = "blocks in the relation"},
      BENCH_OPT_DIR_PAGE_SIZE(&f->page_size),
      {.name = "policy",
       .kind = ARGS_STRING,
       .dest = &f->policy,
       .arg = "NAME",
       .def = "clock-sweep",
       .help = "replacement policy"},
      BENCH_OPT_DIR(&f->dir_flag),
      {.name = "keep",
       .kind = ARGS_FLAG,
       .dest = &f->keep,
       .help = "keep the temporary data directory and print its path"},
      {.name = "seed",
       .kind = ARGS_UINT,
       .dest = &f->seed,
       .def = "1",
       .help = "seed of the access pattern"},
      {.name = "wal",
       .kind = ARGS_STRING,
       .dest = &f->wal_flag,
       .arg = "MODE",
       .def = "log",
       .help = "log: updates are logged in hotset's write-ahead log (in DIR/wal), flushed before "
               "each page write; counter: a counter stands in for the log (free flushes)"},
      {.name = "bgwriter-delay",
       .kind = ARGS_UINT,
       .dest = &f->bgwriter_delay,
       .max = HS_POOL_BGWRITER_MAX_DELAY_MS,
       .def = "0",
       .arg = "MS",
       .help = "run the pool's background writer every MS milliseconds (10 .. 10000; 0: none)"},
      {.name = "bgwriter-maxpages",
       .kind = ARGS_UINT,
       .dest = &f->bgwriter_maxpages,
       .max = HS_POOL_MAX_PAGES,
       .def = "100",
       .help = "pages the background writer writes at most per round"},
      {.name = "direct",
       .kind = ARGS_FLAG,
       .dest = &f->direct,
       .help = "the pool reads and writes the relation with O_DIRECT (fails, naming the file "
               "system, where it refuses)"},
      {.name = "json",
       .kind = ARGS_FLAG,
       .dest = &f->json,
       .help = "print the results as one JSON object"},
  };
  args_parse(cmd, opts, sizeof opts / sizeof opts[0], argc, argv, 0);
}

/* Checks the flags against each other, the directory and the machine,
 * before anything is written. A usage error exits; 1 after a message. */
static int wl_check_flags(wl_flags *f) {
  if (f->bgwriter_delay != 0 && f->bgwriter_delay < HS_POOL_BGWRITER_MIN_DELAY_MS)
    args_usage_error(cmd, "--bgwriter-delay: %" PRIu64 " ms is neither 0 nor at least %u ms",
                     f->bgwriter_delay, HS_POOL_BGWRITER_MIN_DELAY_MS);
  if (strcmp(f->wal_flag, "log") != 0 && strcmp(f->wal_flag, "counter") != 0)
    args_usage_error(cmd, "--wal: \"%s\" is not log or counter", f->wal_flag);
  /* One policy the pool runs, checked as the other pool commands check
   * theirs: an unknown one is answered with the pool's policies. */
  static char spec[1][ARGS_SPEC_LEN];
  const char *why = NULL;
  if (args_split_policies(f->policy, true, spec, 1, &why) < 0)
    args_usage_error(cmd, "--policy: \"%s\": %s", f->policy, why);
  f->policy = spec[0];
  /* An existing --dir says its page size (its control file). */
  if (bench_dir_page_size(f->dir_flag, &f->page_size) != HS_OK) {
    fprintf(stderr, PROG ": %s\n", hs_last_error());
    return 1;
  }
  if (f->pool_bytes / f->page_size <= f->threads) {
    char pool[32];
    args_usage_error(cmd, "--pool: %s holds %" PRIu64 " pages; %" PRIu64 " threads need more",
                     args_format_size(f->pool_bytes, pool, sizeof pool),
                     f->pool_bytes / f->page_size, f->threads);
  }
  /* Refuse now what could only end in ENOSPC or an out-of-memory kill
   * after minutes of writing. */
  if (bench_check_memory(f->pool_bytes, "its pool") != HS_OK ||
      bench_check_space(f->dir_flag ? f->dir_flag : bench_tempdir_parent(), f->pages * f->page_size,
                        "its relation") != HS_OK) {
    fprintf(stderr, PROG ": %s\n", hs_last_error());
    return 1;
  }
  return 0;
}

/* The data directory (--dir, or a temporary one) with the relation built
 * in it, by a storage manager of our own, before the pool (and its
 * observer) exist. 0, or what wl_fail returns. */
static int wl_make_relation(const wl_flags *f, wl_run *d) {
  if (f->dir_flag) {
    /* --dir is created with its missing parents (mkdir -p), as by every
     * command that makes a directory. */
    if (make_dirs(f->dir_flag, 0700, "the directory") != HS_OK)
      return wl_fail(d, "--dir", hs_last_error());
    snprintf(d->datadir, sizeof d->datadir, "%s", f->dir_flag);
  } else {
    if (bench_tempdir_make("workload", d->tmpdir, sizeof d->tmpdir) != HS_OK)
      return wl_fail(d, "creating a temporary directory", hs_last_error());
    snprintf(d->datadir, sizeof d->datadir, "%s/data", d->tmpdir);
  }
  hs_smgr *smgr;
  if (hs_smgr_open(d->datadir, &(hs_smgr_options){.page_size = (uint32_t)f->page_size}, &smgr) !=
      HS_OK)
    return wl_fail(d, "opening the data directory", hs_last_error());
  hs_status st = bench_make_relation(smgr, WL_REL, (hs_blockno)f->pages);
  hs_smgr_close(smgr);
  if (st != HS_OK) return wl_fail(d, "creating the relation", hs_last_error());
  return 0;
}

/* The log (--wal log) or the counter standing in for it, and the pool
 * over the data directory, its writes watched by wl_observe. 0, or what
 * wl_fail returns. */
static int wl_open_pool(const wl_flags *f, wl_run *d, wl_wal *wal) {
  if (strcmp(f->wal_flag, "log") == 0) {
    char logdir[4300];
    if (bench_log_open_fresh(d->datadir, logdir, sizeof logdir, &d->log) != HS_OK)
      return wl_fail(d, "opening the log", hs_last_error());
    wal->log = d->log;
  }
  hs_pool_options po;
  hs_pool_options_init(&po);
  po.dir = d->datadir;
  po.page_size = (uint32_t)f->page_size;
  po.pool_bytes = f->pool_bytes;
  po.policy = f->policy;
  po.bgwriter_delay_ms = (uint32_t)f->bgwriter_delay;
  po.bgwriter_lru_maxpages = (uint32_t)f->bgwriter_maxpages;
  po.direct_io = f->direct;
  if (wal->log) {
    po.wal = wal->log;
  } else {
    po.flush_wal_up_to = wl_flush_wal;
    po.wal_ctx = wal;
  }
  if (hs_pool_open(&po, &d->pool) != HS_OK) return wl_fail(d, "opening the pool", hs_last_error());
  hs_smgr_set_observer(hs_pool_smgr(d->pool), wl_observe, wal);
  return 0;
}

/* Waits out --seconds, or a signal. On a terminal, a line a second: how
 * far the run is and what the pool has done so far (its statistics are
 * safe to read while it runs). */
static void wl_wait(const wl_flags *f, hs_pool *pool) {
  bool progress = isatty(STDERR_FILENO);
  uint64_t begin = bench_now_ns(), end = begin + (uint64_t)(f->seconds * 1e9);
  for (uint64_t now = begin; now < end && !bench_interrupted(); now = bench_now_ns()) {
    /* Up to the next whole second of the run, or its end: one deadline,
     * so printing does not stretch the run. */
    uint64_t tick = begin + ((now - begin) / 1000000000u + 1) * 1000000000u;
    bench_sleep((double)((tick < end ? tick : end) - now) / 1e9);
    if (!progress) continue;
    hs_pool_stats io;
    hs_pool_stats_get(pool, &io);
    fprintf(stderr, "\rworkload: %.0f of %.0f s, %" PRIu64 " reads, hit%% %.2f\033[K",
            (double)(bench_now_ns() - begin) / 1e9, f->seconds,
            hs_pool_stats_total(&io, HS_STAT_HITS) + hs_pool_stats_total(&io, HS_STAT_READS),
            100.0 * hs_pool_stats_hit_ratio(&io));
  }
  if (progress) fputs("\r\033[K", stderr);
}

/* The workers, started together at a barrier, stopped after --seconds (or
 * a signal, or the first failure); their counts summed into *res. 0, or
 * what wl_fail returns. */
static int wl_run_workers(const wl_flags *f, wl_run *d, wl_wal *wal, wl_result *res) {
  wl_shared sh = {.pool = d->pool, .wal = wal, .pages = (hs_blockno)f->pages, .seed = f->seed};
  sh.hot = (hs_blockno)(f->pages * HOT_FRACTION);
  if (sh.hot == 0) sh.hot = 1;
  atomic_init(&sh.stop, false);
  pthread_mutex_init(&sh.err_lock, NULL);
  pthread_barrier_init(&sh.start, NULL, (unsigned)f->threads + 1);
  wl_worker *w = calloc(f->threads, sizeof *w);
  if (!w) return wl_fail(d, "allocating workers", "out of memory");
  for (uint32_t i = 0; i < f->threads; i++) {
    w[i].sh = &sh;
    w[i].id = i;
    int err = pthread_create(&w[i].tid, NULL, wl_worker_main, &w[i]);
    if (err) {
      /* Threads already started wait at the barrier for ever: just leave. */
      wl_fail(d, "pthread_create", strerror(err));
      exit(1);
    }
  }
  pthread_barrier_wait(&sh.start);
  wl_wait(f, d->pool);
  atomic_store(&sh.stop, true);
  uint64_t t0 = UINT64_MAX, t1 = 0;
  for (uint32_t i = 0; i < f->threads; i++) {
    pthread_join(w[i].tid, NULL);
    res->reads += w[i].reads;
    res->updates += w[i].updates;
    if (w[i].t_start < t0) t0 = w[i].t_start;
    if (w[i].t_end > t1) t1 = w[i].t_end;
  }
  res->elapsed = t1 > t0 ? t1 - t0 : 1;
  free(w);
  pthread_barrier_destroy(&sh.start);
  pthread_mutex_destroy(&sh.err_lock);
  wl_stop_if_interrupted(d);
  if (sh.failed) return wl_fail(d, "workload", sh.err);
  return 0;
}

/* Closes the pool (which writes every dirty page) and the log, keeping
 * their statistics first: they describe the run, and closing frees them.
 * 0, or what wl_fail returns. */
static int wl_close(wl_run *d, wl_result *res) {
  hs_pool_stats_get(d->pool, &res->stats);
  hs_pool_bgwriter_stats_get(d->pool, &res->bgw);
  res->policy_name = hs_pool_policy_name(d->pool);
  res->nbuffers = hs_pool_nbuffers(d->pool);
  if (hs_pool_close(d->pool) != HS_OK) return wl_fail(d, "closing the pool", hs_last_error());
  d->pool = NULL;
  if (d->log) {
    hs_wal_stats_get(d->log, &res->wst);
    res->log_inserted = hs_wal_insert_lsn(d->log);
    res->log_flushed = hs_wal_flushed_lsn(d->log);
    hs_status cst = hs_wal_close(d->log);
    d->log = NULL;
    if (cst != HS_OK) return wl_fail(d, "closing the log", hs_last_error());
  }
  wl_stop_if_interrupted(d);
  return 0;
}

/* The checks: no page written ahead of the log while the pool ran, and on
 * disk every page stamped, none with an LSN past the log's durable end,
 * and every update there. 0, or what wl_fail returns. */
static int wl_verify(const wl_flags *f, wl_run *d, wl_wal *wal, wl_result *res) {
  uint64_t ahead = atomic_load(&wal->ahead);
  if (ahead) {
    char msg[200];
    snprintf(msg, sizeof msg,
             "%" PRIu64 " page write(s) ahead of the log (e.g. page LSN %" PRIu64
             " with the log flushed to %" PRIu64 ")",
             ahead, atomic_load(&wal->ahead_lsn), atomic_load(&wal->ahead_flushed));
    return wl_fail(d, "WAL before data violated", msg);
  }
  uint64_t disk_max_lsn = 0;
  if (verify_on_disk(d->datadir, (uint32_t)f->page_size, (hs_blockno)f->pages, &res->disk_updates,
                     &disk_max_lsn) != HS_OK)
    return wl_fail(d, "verifying the relation on disk", hs_last_error());
  wl_stop_if_interrupted(d);
  uint64_t durable = wal->log ? res->log_flushed : atomic_load(&wal->flushed);
  if (disk_max_lsn > durable) {
    char msg[160];
    snprintf(msg, sizeof msg, "a page on disk has LSN %" PRIu64 ", the log is flushed to %" PRIu64,
             disk_max_lsn, durable);
    return wl_fail(d, "WAL before data violated", msg);
  }
  if (res->disk_updates != res->updates) {
    char msg[160];
    snprintf(msg, sizeof msg, "the pages on disk count %" PRIu64 " updates; %" PRIu64 " were made",
             res->disk_updates, res->updates);
    return wl_fail(d, "verifying the relation on disk", msg);
  }
  return 0;
}

/* The report's figures that both forms print. */
typedef struct wl_summary {
  uint64_t ops;
  double ops_per_sec;
  uint64_t flushed;     /* the log's durable end */
  uint64_t wal_flushes; /* page writes that had to flush the log first (the pool's count) */
  const char *kept;     /* the temporary directory kept (--keep), or NULL */
} wl_summary;

static wl_summary wl_summarize(const wl_flags *f, const wl_run *d, wl_wal *wal,
                               const wl_result *res) {
  wl_summary s;
  s.ops = res->reads + res->updates;
  s.ops_per_sec = (double)s.ops / ((double)res->elapsed / 1e9);
  s.flushed = wal->log ? res->log_flushed : atomic_load(&wal->flushed);
  s.wal_flushes =
      wal->log ? hs_pool_stats_total(&res->stats, HS_STAT_WAL_FLUSHES) : atomic_load(&wal->flushes);
  s.kept = d->tmpdir[0] && f->keep ? d->datadir : NULL;
  return s;
}

/* One object: the run's numbers with the pool's statistics inside. 0, or
 * what wl_fail returns. */
static int wl_print_json(const wl_flags *f, wl_run *d, wl_wal *wal, const wl_result *res,
                         const wl_summary *s) {
  char stats_json[HS_POOL_STATS_FORMAT_BYTES];
  if (hs_pool_stats_format(&res->stats, true, stats_json, sizeof stats_json) != HS_OK)
    return wl_fail(d, "hs_pool_stats_format", hs_last_error());
  json_out j;
  json_begin(&j, stdout);
  json_str(&j, "policy", res->policy_name);
  json_bool(&j, "direct", f->direct);
  json_u64(&j, "threads", f->threads);
  json_double(&j, "seconds", "%.3f", (double)res->elapsed / 1e9);
  json_u64(&j, "ops", s->ops);
  json_u64(&j, "reads", res->reads);
  json_u64(&j, "updates", res->updates);
  json_double(&j, "ops_per_sec", "%.1f", s->ops_per_sec);
  json_u64(&j, "pool_pages", res->nbuffers);
  json_u64(&j, "pages", f->pages);
  json_u64(&j, "page_size", f->page_size);
  json_str(&j, "wal", wal->log ? "log" : "counter");
  json_u64(&j, "wal_inserted_lsn", wal->log ? res->log_inserted : atomic_load(&wal->inserted));
  json_u64(&j, "wal_flushed_lsn", s->flushed);
  json_u64(&j, "wal_flushes", s->wal_flushes);
  json_u64(&j, "wal_records", res->wst.records);
  json_u64(&j, "wal_syncs", res->wst.syncs);
  json_double(&j, "wal_sync_seconds", "%.4f", (double)res->wst.sync_ns / 1e9);
  json_u64(&j, "wal_writer_syncs", res->wst.flush_syncs[HS_WAL_CAUSE_WRITER]);
  json_u64(&j, "writes_ahead_of_wal", 0);
  json_u64(&j, "updates_on_disk", res->disk_updates);
  json_u64(&j, "bgwriter_delay_ms", f->bgwriter_delay);
  json_u64(&j, "bgwriter_lru_maxpages", f->bgwriter_maxpages);
  json_u64(&j, "bgwriter_rounds", res->bgw.rounds);
  json_u64(&j, "buffers_clean", res->bgw.buffers_clean);
  json_u64(&j, "maxwritten_clean", res->bgw.maxwritten_clean);
  json_u64(&j, "buffers_backend", res->bgw.buffers_backend);
  json_u64(&j, "buffers_alloc", res->bgw.buffers_alloc);
  json_str(&j, "dir", s->kept ? s->kept : f->dir_flag);
  /* The statistics object as the library writes it. */
  json_raw(&j, "stats", stats_json);
  json_end_line(&j);
  return 0;
}

/* The report for a reader: the run, the log, the background writer, the
 * pool's statistics table and what the check on disk found. */
static void wl_print_text(const wl_flags *f, const wl_wal *wal, const wl_result *res,
                          const wl_summary *s) {
  char pool[32], page[32], rel[32];
  args_format_size((uint64_t)res->nbuffers * f->page_size, pool, sizeof pool);
  args_format_size(f->page_size, page, sizeof page);
  args_format_size(f->pages * f->page_size, rel, sizeof rel);
  printf("hotset workload: %" PRIu64 " threads for %.2f s; pool %s (%u buffers of %s, %s%s); "
         "relation %" PRIu64 " pages (%s)\n",
         f->threads, (double)res->elapsed / 1e9, pool, res->nbuffers, page, res->policy_name,
         f->direct ? ", O_DIRECT" : "", f->pages, rel);
  printf("  %" PRIu64 " ops (%" PRIu64 " reads, %" PRIu64 " updates): %.0f ops/s\n", s->ops,
         res->reads, res->updates, s->ops_per_sec);
  const hs_wal_stats *wst = &res->wst;
  if (wal->log)
    printf("  log (hotset's write-ahead log): %" PRIu64 " records, durable up to LSN %" PRIu64
           "; %" PRIu64 " fdatasyncs (%.3f s), %" PRIu64 " of them by the WAL writer; %" PRIu64
           " page writes had to flush it first; no page was written ahead of it\n\n",
           wst->records, s->flushed, wst->syncs, (double)wst->sync_ns / 1e9,
           wst->flush_syncs[HS_WAL_CAUSE_WRITER], s->wal_flushes);
  else
    printf("  log (a counter standing in): %" PRIu64 " records, flushed %" PRIu64 " time%s, up to "
           "LSN %" PRIu64 " (counting those at close); no page was written ahead of it\n\n",
           res->updates, s->wal_flushes, s->wal_flushes == 1 ? "" : "s", s->flushed);
  char every[48] = "off";
  if (f->bgwriter_delay)
    snprintf(every, sizeof every, "every %" PRIu64 " ms, %" PRIu64 " rounds", f->bgwriter_delay,
             res->bgw.rounds);
  printf("  background writer (%s): %" PRIu64 " pages written by it, %" PRIu64
         " dirty victims written by the misses themselves, %" PRIu64 " buffers allocated\n\n",
         every, res->bgw.buffers_clean, res->bgw.buffers_backend, res->bgw.buffers_alloc);
  char table[HS_POOL_STATS_FORMAT_BYTES];
  if (hs_pool_stats_format(&res->stats, false, table, sizeof table) == HS_OK) fputs(table, stdout);
  printf("\nclosed the pool; verified %" PRIu64 " pages on disk: stamps intact, all %" PRIu64
         " updates there\n",
         f->pages, res->disk_updates);
  if (s->kept) printf("data directory kept: %s\n", s->kept);
}

/* The steps in order. A step that fails has called wl_fail, which cleans
 * up (pool, log, temporary directory) and prints the message; the run that
 * succeeds is cleaned up here, by the same wl_cleanup. */
int workload_main(int argc, char **argv) {
  wl_flags f;
  wl_parse_flags(argc, argv, &f);
  if (wl_check_flags(&f) != 0) return 1;
  bench_signals_install();

  wl_run d = {.keep = f.keep};
  wl_wal wal = {0}; /* the pool's observer and flush callback use it until it is closed */
  wl_result res = {0};
  if (wl_make_relation(&f, &d) != 0) return 1;
  wl_stop_if_interrupted(&d);
  if (wl_open_pool(&f, &d, &wal) != 0 || wl_run_workers(&f, &d, &wal, &res) != 0 ||
      wl_close(&d, &res) != 0 || wl_verify(&f, &d, &wal, &res) != 0)
    return 1;
  wl_summary s = wl_summarize(&f, &d, &wal, &res);
  if (f.json) {
    if (wl_print_json(&f, &d, &wal, &res, &s) != 0) return 1;
  } else {
    wl_print_text(&f, &wal, &res, &s);
  }
  wl_cleanup(&d);
  return 0;
}
