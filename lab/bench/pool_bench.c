/*
 * bench/pool_bench.c — `hotset bench pool`: how fast is a buffer access, and
 * how does that change with threads?
 *
 * Two workloads, each run for --seconds at every thread count of --threads:
 *   hit    the first min(pages, pool pages) blocks are read in first, then
 *          every thread reads random blocks of that resident set and releases
 *          them at once: no content lock, no page access. This is the pin /
 *          unpin path alone, the one a buffer manager runs millions of times a
 *          second, and the one whose scaling a global lock destroys.
 *   mixed  random blocks over the whole relation (so about 1 - pool/pages of
 *          the accesses miss and really pread), each read under a share
 *          content lock that checks the page's stamp.
 * Both run against the hotset pool (named by its policy, e.g. clock-sweep)
 * and, interleaved with it in the same process on the same relation and
 * frame count, against global_lru_pool.c ("global-mutex-lru"), PostgreSQL's
 * pre-8.1 design: the baseline turns "N ops/s" into a comparison. The mixed
 * comparison is of designs, not of equal work: the baseline reads a missing
 * page while holding its global mutex (so two threads' misses queue behind
 * each other) and takes no content lock, where hotset reads outside its
 * locks and takes a share content lock per access.
 *
 * How sure: on this kind of machine (two vCPUs shared with others) one
 * two-thread run can land several times off the next. So each (variant,
 * workload, threads) runs --repeat times, the policy and its baseline
 * alternating in an ABBA order (policy, baseline, baseline, policy, ...) so
 * that a drift of the machine during the series weighs on both alike, and
 * the output gives the median with the min and max of the runs; "vs base" is
 * the median (and min-max) of the ratios of each policy run to the baseline
 * run beside it. Every policy gets baseline runs of its own.
 *
 * Measurement: the workers start together at a barrier and run until the main
 * thread, after sleeping --seconds, raises a stop flag that they check every
 * 256 operations (so the check costs nothing measurable). The elapsed time is
 * from the first worker's start to the last one's end; ns_per_op is the
 * per-thread cost: elapsed * threads / ops.
 */
#include "bench/pool_bench.h"

#include "bench/global_lru_pool.h"
#include "bench/mem_chase.h"
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
#include "hotset/pool.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG          "hotset bench pool"
#define BENCH_REL     16384u /* PostgreSQL's first user relation OID, for familiarity */
#define STOP_INTERVAL 256
#define MAX_THREADS   1024
#define MAX_REPEAT    100

static const args_command command = {
    .cmd = {.prog = PROG},
    .about = "Measures buffer reads per second: the hit path alone (\"hit\") and random reads\n"
             "over a relation larger than the pool (\"mixed\"), for hotset and for a baseline\n"
             "pool behind one global mutex with LRU replacement (\"global-mutex-lru\").\n"
             "A run lasts about 2 x seconds x repeat x (the thread counts) x 2 workloads\n"
             "x (the policies) x (the translations) x (the huge-pages modes), plus setup:\n"
             "the defaults take about 40 s.\n",
    .notes = ARGS_SIZE_NOTE
    "The mixed comparison is of designs, not of equal work: the baseline does a\n"
    "miss's pread while holding its one mutex (threads' misses queue behind each\n"
    "other) and takes no content lock; hotset reads outside its locks and takes a\n"
    "share content lock per access. It refuses to start (exit 1) when the relation\n"
    "would not fit in the free space or the two pools exceed half the memory.\n",
};
static const args_cmd *const cmd = &command.cmd;

typedef enum workload { WL_HIT = 0, WL_MIXED, WL_COUNT } workload;
static const char *const workload_names[WL_COUNT] = {"hit", "mixed"};

typedef enum variant { V_HOTSET = 0, V_BASELINE, V_COUNT } variant;

/* What one run's workers share. */
typedef struct run_shared {
  variant var;
  workload wl;
  hs_pool *pool;
  glru_pool *glru;
  hs_blockno nblocks; /* blocks are drawn from [0, nblocks) */
  uint64_t seed;
  pthread_barrier_t start;
  atomic_bool stop;
  pthread_mutex_t err_lock;
  bool failed;
  char err[768]; /* the first worker error, copied: hs_last_error is per thread */
} run_shared;

typedef struct worker {
  run_shared *sh;
  uint32_t id;
  pthread_t tid;
  uint64_t ops;
  uint64_t t_start, t_end;
} worker;

typedef struct result {
  uint64_t ops;
  uint64_t elapsed_ns;
  double ops_per_sec;
  double ns_per_op;
  double hit_ratio;
} result;

/* A series of --repeat runs of one (variant, workload, threads). */
typedef struct series {
  int runs;
  double ops_per_sec, ops_min, ops_max; /* median, min, max */
  double ns_per_op;                     /* at the median rate */
  double hit_ratio;                     /* median */
  uint64_t ops, elapsed_ns;             /* totals over the runs */
  double vs, vs_min, vs_max;            /* policy runs / their paired baseline runs */
  uint64_t metadata_bytes;              /* hit runs: what a hit may touch (hs_pool_memory) */
  double chase_ns;                      /* ... and a dependent load over that much: median */
} series;

static hs_status stamp_error(hs_blockno want, hs_blockno got) {
  return hs_fail(HS_ERR_CORRUPT, 0, "block %u holds the page stamped as block %u", want, got);
}

/* Runs `n` operations. The workload switch sits outside the loops so each
 * loop is as tight as its workload allows. */
static hs_status run_batch(run_shared *sh, bench_rng *rng, int n, hs_blockno *failed_block) {
  hs_blockno blk = 0;
  hs_status st = HS_OK;
  switch (sh->var * WL_COUNT + sh->wl) {
  case V_HOTSET *WL_COUNT + WL_HIT:
    for (int i = 0; i < n; i++) {
      hs_buf b;
      blk = bench_rng_below(rng, sh->nblocks);
      st = hs_pool_read(sh->pool, BENCH_REL, HS_FORK_MAIN, blk, HS_READ_NORMAL, NULL, &b, NULL);
      if (st != HS_OK) break;
      hs_buf_release(sh->pool, b);
    }
    break;
  case V_HOTSET *WL_COUNT + WL_MIXED:
    for (int i = 0; i < n; i++) {
      hs_buf b;
      blk = bench_rng_below(rng, sh->nblocks);
      st = hs_pool_read(sh->pool, BENCH_REL, HS_FORK_MAIN, blk, HS_READ_NORMAL, NULL, &b, NULL);
      if (st != HS_OK) break;
      hs_buf_lock(sh->pool, b, HS_LOCK_SHARE);
      hs_blockno got = bench_page_block(hs_buf_page(sh->pool, b));
      hs_buf_unlock(sh->pool, b);
      hs_buf_release(sh->pool, b);
      if (got != blk) {
        st = stamp_error(blk, got);
        break;
      }
    }
    break;
  case V_BASELINE *WL_COUNT + WL_HIT:
    for (int i = 0; i < n; i++) {
      glru_frame f;
      blk = bench_rng_below(rng, sh->nblocks);
      st = glru_read(sh->glru, BENCH_REL, HS_FORK_MAIN, blk, &f, NULL);
      if (st != HS_OK) break;
      glru_release(sh->glru, f);
    }
    break;
  case V_BASELINE *WL_COUNT + WL_MIXED:
    for (int i = 0; i < n; i++) {
      glru_frame f;
      blk = bench_rng_below(rng, sh->nblocks);
      st = glru_read(sh->glru, BENCH_REL, HS_FORK_MAIN, blk, &f, NULL);
      if (st != HS_OK) break;
      hs_blockno got = bench_page_block(glru_page(sh->glru, f));
      glru_release(sh->glru, f);
      if (got != blk) {
        st = stamp_error(blk, got);
        break;
      }
    }
    break;
  }
  *failed_block = blk;
  return st;
}

static void *worker_main(void *arg) {
  worker *w = arg;
  run_shared *sh = w->sh;
  bench_rng rng;
  bench_rng_seed(&rng, sh->seed, w->id);
  uint64_t ops = 0;

  pthread_barrier_wait(&sh->start);
  w->t_start = bench_now_ns();
  while (!atomic_load_explicit(&sh->stop, memory_order_relaxed)) {
    hs_blockno blk;
    if (run_batch(sh, &rng, STOP_INTERVAL, &blk) != HS_OK) {
      pthread_mutex_lock(&sh->err_lock);
      if (!sh->failed) {
        sh->failed = true;
        snprintf(sh->err, sizeof sh->err, "thread %u reading block %u: %s", w->id, blk,
                 hs_last_error());
      }
      pthread_mutex_unlock(&sh->err_lock);
      atomic_store_explicit(&sh->stop, true, memory_order_relaxed);
      break;
    }
    ops += STOP_INTERVAL;
  }
  w->t_end = bench_now_ns();
  w->ops = ops;
  return NULL;
}

/* Everything main needs to run and to clean up. */
typedef struct bench {
  /* flags */
  args_uint_list threads;
  uint64_t pool_bytes, pages, page_size, seed, repeat;
  double seconds;
  bool json;
  const char *policy;
  const char *policy_spec;      /* the one being measured */
  const char *huge_flag;        /* --huge-pages */
  const char *huge_asked;       /* the pool being measured: try, off or on */
  const char *translation_flag; /* --translation */
  const char *translation;      /* the pool being measured: hash or direct */
  char variant[ARGS_SPEC_LEN + 32];
  const char *dir_flag;
  /* state */
  char tmpdir[4096];
  const char *dir;
  hs_smgr *smgr;
  hs_pool *pool;
  glru_pool *glru;
  uint32_t nbuffers;
} bench;

static void cleanup(bench *b) {
  /* Errors here are after the measurement; the first one is reported by the
   * caller through hs_pool_close, the rest are best effort. */
  if (b->glru) glru_abandon(b->glru); /* read-only workloads: nothing dirty */
  if (b->pool) hs_pool_abandon(b->pool);
  if (b->smgr) hs_smgr_close(b->smgr);
  b->glru = NULL;
  b->pool = NULL;
  b->smgr = NULL;
  if (b->tmpdir[0]) bench_tempdir_remove(b->tmpdir);
  b->tmpdir[0] = '\0';
}

static int fail(bench *b, const char *what) {
  cleanup(b);
  if (bench_interrupted()) bench_exit_interrupted(PROG); /* the failure is the signal's doing */
  fprintf(stderr, PROG ": %s: %s\n", what, hs_last_error());
  return 1;
}

/* Reads blocks [0, n) once, so that the hit workload finds them resident. */
static hs_status preload(bench *b, variant var, hs_blockno n) {
  for (hs_blockno blk = 0; blk < n; blk++) {
    hs_status st;
    if (var == V_HOTSET) {
      hs_buf buf;
      st = hs_pool_read(b->pool, BENCH_REL, HS_FORK_MAIN, blk, HS_READ_NORMAL, NULL, &buf, NULL);
      if (st == HS_OK) hs_buf_release(b->pool, buf);
    } else {
      glru_frame f;
      st = glru_read(b->glru, BENCH_REL, HS_FORK_MAIN, blk, &f, NULL);
      if (st == HS_OK) glru_release(b->glru, f);
    }
    if (st != HS_OK) return st;
  }
  return HS_OK;
}

/* The policy as the user named it (with any parameters), or the baseline. */
static const char *variant_name(const bench *b, variant var) {
  return var == V_HOTSET ? b->variant : "global-mutex-lru";
}

/* One (variant, workload, threads) run. On failure prints the error line and
 * returns false. */
static bool run_one(bench *b, variant var, workload wl, uint32_t nthreads, result *res) {
  char what[ARGS_SPEC_LEN + 96];
  snprintf(what, sizeof what, "%s %s with %u thread%s", variant_name(b, var), workload_names[wl],
           nthreads, nthreads == 1 ? "" : "s");

  hs_blockno resident = b->pages < b->nbuffers ? (hs_blockno)b->pages : b->nbuffers;
  hs_blockno nblocks = wl == WL_HIT ? resident : (hs_blockno)b->pages;
  if (wl == WL_HIT && preload(b, var, resident) != HS_OK) {
    fprintf(stderr, PROG ": %s: preloading: %s\n", what, hs_last_error());
    return false;
  }
  if (var == V_HOTSET)
    hs_pool_stats_reset(b->pool);
  else
    glru_reset_stats(b->glru);

  run_shared sh = {
      .var = var, .wl = wl, .pool = b->pool, .glru = b->glru, .nblocks = nblocks, .seed = b->seed};
  atomic_init(&sh.stop, false);
  pthread_mutex_init(&sh.err_lock, NULL);
  pthread_barrier_init(&sh.start, NULL, nthreads + 1);
  worker *w = calloc(nthreads, sizeof *w);
  if (!w) {
    fprintf(stderr, PROG ": %s: out of memory\n", what);
    return false;
  }
  for (uint32_t i = 0; i < nthreads; i++) {
    w[i].sh = &sh;
    w[i].id = i;
    int err = pthread_create(&w[i].tid, NULL, worker_main, &w[i]);
    if (err) {
      /* The threads already started wait at the barrier for ever; nothing
       * sensible is left to do but leave. */
      fprintf(stderr, PROG ": %s: pthread_create: %s\n", what, strerror(err));
      cleanup(b);
      exit(1);
    }
  }
  pthread_barrier_wait(&sh.start);
  bench_sleep(b->seconds);
  atomic_store_explicit(&sh.stop, true, memory_order_relaxed);

  uint64_t ops = 0, t0 = UINT64_MAX, t1 = 0;
  for (uint32_t i = 0; i < nthreads; i++) {
    pthread_join(w[i].tid, NULL);
    ops += w[i].ops;
    if (w[i].t_start < t0) t0 = w[i].t_start;
    if (w[i].t_end > t1) t1 = w[i].t_end;
  }
  free(w);
  pthread_barrier_destroy(&sh.start);
  pthread_mutex_destroy(&sh.err_lock);
  if (sh.failed) {
    fprintf(stderr, PROG ": %s: %s\n", what, sh.err);
    return false;
  }

  res->ops = ops;
  res->elapsed_ns = t1 > t0 ? t1 - t0 : 1;
  res->ops_per_sec = (double)ops / ((double)res->elapsed_ns / 1e9);
  res->ns_per_op = ops ? (double)res->elapsed_ns * nthreads / (double)ops : 0;
  if (var == V_HOTSET) {
    hs_pool_stats s;
    hs_pool_stats_get(b->pool, &s);
    res->hit_ratio = hs_pool_stats_hit_ratio(&s);
  } else {
    glru_stats s;
    glru_get_stats(b->glru, &s);
    uint64_t n = s.hits + s.reads;
    res->hit_ratio = n ? (double)s.hits / (double)n : 0;
  }
  return true;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The median of v[0 .. n) (the mean of the middle two for even n); sorts v. */
static double median_of(double *v, int n, double *min, double *max) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  *min = v[0];
  *max = v[n - 1];
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Sums up runs[0 .. n); `base` (n runs, paired by index) gives the ratios. */
static void summarize(const result *runs, const result *base, int n, uint32_t nthreads, series *s) {
  double v[MAX_REPEAT], lo, hi;
  memset(s, 0, sizeof *s);
  s->runs = n;
  for (int i = 0; i < n; i++) {
    v[i] = runs[i].ops_per_sec;
    s->ops += runs[i].ops;
    s->elapsed_ns += runs[i].elapsed_ns;
  }
  s->ops_per_sec = median_of(v, n, &s->ops_min, &s->ops_max);
  s->ns_per_op = s->ops_per_sec > 0 ? 1e9 * nthreads / s->ops_per_sec : 0;
  for (int i = 0; i < n; i++) v[i] = runs[i].hit_ratio;
  s->hit_ratio = median_of(v, n, &lo, &hi);
  if (!base) return;
  for (int i = 0; i < n; i++)
    v[i] = base[i].ops_per_sec > 0 ? runs[i].ops_per_sec / base[i].ops_per_sec : 0;
  s->vs = median_of(v, n, &s->vs_min, &s->vs_max);
}

static void print_json(const bench *b, variant var, workload wl, uint32_t nthreads,
                       const series *r) {
  json_out j;
  json_begin(&j, stdout);
  json_str(&j, "variant", variant_name(b, var));
  json_str(&j, "workload", workload_names[wl]);
  json_u64(&j, "threads", nthreads);
  json_double(&j, "ops_per_sec", "%.1f", r->ops_per_sec);
  json_double(&j, "ns_per_op", "%.2f", r->ns_per_op);
  json_double(&j, "ops_per_sec_min", "%.1f", r->ops_min);
  json_double(&j, "ops_per_sec_max", "%.1f", r->ops_max);
  json_i64(&j, "runs", r->runs);
  if (var == V_HOTSET) {
    json_str(&j, "policy", b->policy_spec);
    json_str(&j, "huge_pages", b->huge_asked);
    json_str(&j, "huge_pages_used", bench_huge_used_name(hs_pool_huge_pages(b->pool)));
    json_str(&j, "translation", b->translation);
    if (wl == WL_HIT) {
      json_u64(&j, "metadata_bytes", r->metadata_bytes);
      json_double(&j, "chase_ns", "%.2f", r->chase_ns);
    }
    json_double(&j, "vs_baseline", "%.4f", r->vs);
    json_double(&j, "vs_baseline_min", "%.4f", r->vs_min);
    json_double(&j, "vs_baseline_max", "%.4f", r->vs_max);
  } else {
    json_str(&j, "paired_with", b->variant);
  }
  json_u64(&j, "ops", r->ops);
  json_double(&j, "seconds", "%.3f", (double)r->elapsed_ns / 1e9);
  json_double(&j, "hit_ratio", "%.4f", r->hit_ratio);
  json_u64(&j, "pool_pages", b->nbuffers);
  json_u64(&j, "pages", b->pages);
  json_u64(&j, "page_size", b->page_size);
  json_end_line(&j);
}

static void print_table_header(const bench *b) {
  char pool[32], page[32];
  args_format_size((uint64_t)b->nbuffers * b->page_size, pool, sizeof pool);
  args_format_size(b->page_size, page, sizeof page);
  printf("pool: %u buffers of %s (%s); relation: %" PRIu64 " pages; %" PRIu64
         " runs of %g s each, policy and baseline alternating\n\n",
         b->nbuffers, page, pool, b->pages, b->repeat, b->seconds);
  printf("%-18s %-8s %7s %9s %17s %8s %7s %8s %8s %13s %10s %8s\n", "variant", "workload",
         "threads", "Mops/s", "(min-max)", "ns/op", "hit%", "scaling", "vs base", "(min-max)",
         "hit bytes", "chase ns");
}

static void print_table_row(const char *vname, workload wl, uint32_t nthreads, const series *r,
                            const series *first, bool hotset) {
  char range[40], scaling[16] = "-", vs[16] = "-", vs_range[40] = "";
  snprintf(range, sizeof range, "%.2f-%.2f", r->ops_min / 1e6, r->ops_max / 1e6);
  if (first && first->ops_per_sec > 0)
    snprintf(scaling, sizeof scaling, "%.2fx", r->ops_per_sec / first->ops_per_sec);
  if (hotset) {
    snprintf(vs, sizeof vs, "%.2fx", r->vs);
    snprintf(vs_range, sizeof vs_range, "%.2f-%.2f", r->vs_min, r->vs_max);
  }
  printf("%-18s %-8s %7u %9.2f %17s %8.1f %6.1f%% %8s %8s", vname, workload_names[wl], nthreads,
         r->ops_per_sec / 1e6, range, r->ns_per_op, 100.0 * r->hit_ratio, scaling, vs);
  if (hotset) printf(" %13s", vs_range);
  if (hotset && wl == WL_HIT) {
    char bytes[32];
    printf(" %10s %8.1f", args_format_size(r->metadata_bytes, bytes, sizeof bytes), r->chase_ns);
  }
  putchar('\n');
  fflush(stdout);
}

int pool_bench_main(int argc, char **argv) {
  bench b = {0};
  const args_opt opts[] = {
      {.name = "threads",
       .kind = ARGS_UINT_LIST,
       .dest = &b.threads,
       .min = 1,
       .max = MAX_THREADS,
       .def = "1,2",
       .help = "thread counts to run, comma-separated"},
      {.name = "pool",
       .kind = ARGS_SIZE,
       .dest = &b.pool_bytes,
       .min = 1,
       .def = "1MiB",
       .help = "pool size"},
      {.name = "pages",
       .kind = ARGS_UINT,
       .dest = &b.pages,
       .min = 1,
       .max = HS_INVALID_BLOCK - 1,
       .def = "512",
       .help = "blocks in the relation"},
      {.name = "seconds",
       .kind = ARGS_DOUBLE,
       .dest = &b.seconds,
       .dmin = 0.01,
       .dmax = 86400,
       .def = "0.5",
       .arg = "S",
       .help = "duration of each run"},
      {.name = "repeat",
       .kind = ARGS_UINT,
       .dest = &b.repeat,
       .min = 1,
       .max = MAX_REPEAT,
       .def = "5",
       .help = "runs of each (variant, workload, threads), the policy's and the baseline's "
               "alternating; the median and min-max are reported (at most 100)"},
      {.name = "policy",
       .kind = ARGS_STRING,
       .dest = &b.policy,
       .arg = "LIST",
       .def = "clock-sweep",
       .help = "hotset replacement policies, comma-separated, each a spec like "
               "s3fifo:small=0.2; \"all\" runs every policy the pool accepts"},
      BENCH_OPT_PAGE_SIZE(&b.page_size),
      BENCH_OPT_DIR(&b.dir_flag),
      {.name = "huge-pages",
       .kind = ARGS_STRING,
       .dest = &b.huge_flag,
       .arg = "LIST",
       .def = "try",
       .help = "the pool's huge_pages, comma-separated, each run as its own variant: try (huge "
               "pages where the system allows), off, on (fail without them)"},
      {.name = "translation",
       .kind = ARGS_STRING,
       .dest = &b.translation_flag,
       .arg = "LIST",
       .def = "hash,direct",
       .help = "the pool's translation, comma-separated, each run as its own variant: hash (a "
               "hash table of tags), direct (vmcache-style: block number to buffer by "
               "arithmetic, the hash table behind it)"},
      {.name = "seed",
       .kind = ARGS_UINT,
       .dest = &b.seed,
       .def = "1",
       .help = "seed of the block choices"},
      {.name = "json",
       .kind = ARGS_FLAG,
       .dest = &b.json,
       .help = "one JSON object per line per (variant, workload, threads): ops_per_sec (the "
               "median), ops_per_sec_min, _max, runs, ns_per_op (at the median), and for a "
               "policy vs_baseline (median of the per-pair ratios), vs_baseline_min, _max, "
               "translation, and for a hit metadata_bytes (what a hit may touch) and chase_ns "
               "(a dependent random load over that much memory, median of one per run)"},
  };
  args_parse(cmd, opts, sizeof opts / sizeof opts[0], argc, argv, 0);

  static char specs[ARGS_LIST_MAX][ARGS_SPEC_LEN];
  const char *why = NULL;
  int npolicies = args_split_policies(b.policy, true, specs, ARGS_LIST_MAX, &why);
  if (npolicies < 0) args_usage_error(cmd, "--policy: \"%s\": %s", b.policy, why);
  static const char *const huge_all[] = {"try", "off", "on"}; /* the enum's order */
  static const char *const translation_all[] = {"hash", "direct"};
  int huge_modes[3], translations[2];
  int nhuge = args_choice_list(cmd, "huge-pages", b.huge_flag, huge_all, 3, huge_modes);
  int ntrans =
      args_choice_list(cmd, "translation", b.translation_flag, translation_all, 2, translations);
  uint64_t max_threads = 0;
  for (uint32_t i = 0; i < b.threads.n; i++)
    if (b.threads.v[i] > max_threads) max_threads = b.threads.v[i];
  /* Each worker pins one buffer at a time; with no more buffers than
   * threads, a read could find every buffer pinned. */
  if (b.pool_bytes / b.page_size <= max_threads) {
    char pool[32], page[32];
    args_usage_error(cmd,
                     "--pool: %s holds %" PRIu64 " pages of %s; %" PRIu64
                     " threads need more than %" PRIu64,
                     args_format_size(b.pool_bytes, pool, sizeof pool), b.pool_bytes / b.page_size,
                     args_format_size(b.page_size, page, sizeof page), max_threads, max_threads);
  }

  /* Refuse now what could only end in ENOSPC or an out-of-memory kill
   * after minutes of writing. */
  if (bench_check_memory(2 * b.pool_bytes, "its two pools (hotset's and the baseline's)") !=
          HS_OK ||
      bench_check_space(b.dir_flag ? b.dir_flag : bench_tempdir_parent(), b.pages * b.page_size,
                        "its relation") != HS_OK) {
    fprintf(stderr, PROG ": %s\n", hs_last_error());
    return 1;
  }
  bench_signals_install();

  if (b.dir_flag) {
    /* --dir is created with its missing parents (mkdir -p), as by every
     * command that makes a directory. */
    if (make_dirs(b.dir_flag, 0700, "the directory") != HS_OK) return fail(&b, "--dir");
    b.dir = b.dir_flag;
  } else {
    if (bench_tempdir_make("bench", b.tmpdir, sizeof b.tmpdir) != HS_OK)
      return fail(&b, "creating a temporary directory");
    b.dir = b.tmpdir;
  }

  if (hs_smgr_open(b.dir, &(hs_smgr_options){.page_size = (uint32_t)b.page_size}, &b.smgr) != HS_OK)
    return fail(&b, "opening the data directory");
  if (bench_make_relation(b.smgr, BENCH_REL, (hs_blockno)b.pages) != HS_OK)
    return fail(&b, "creating the relation");

  /* The baseline gets exactly as many frames as hotset has buffers. */
  b.nbuffers = (uint32_t)(b.pool_bytes / b.page_size);
  if (glru_open(b.smgr, b.nbuffers, &b.glru) != HS_OK)
    return fail(&b, "opening the global-mutex-lru pool");

  if (!b.json) print_table_header(&b);
  static series agg[WL_COUNT][ARGS_LIST_MAX][V_COUNT];
  static result runs[V_COUNT][MAX_REPEAT];
  int repeat = (int)b.repeat;
  double chase[MAX_REPEAT];
  uint64_t meta_bytes = 0;
  for (int run = 0; run < npolicies * ntrans * nhuge; run++) {
    int pi = run / (ntrans * nhuge), ti = run / nhuge % ntrans, hi = run % nhuge;
    hs_huge_pages huge = (hs_huge_pages)huge_modes[hi];
    hs_pool_options po;
    hs_pool_options_init(&po);
    po.dir = b.dir;
    po.page_size = (uint32_t)b.page_size;
    po.pool_bytes = b.pool_bytes;
    po.policy = specs[pi];
    po.huge_pages = huge;
    po.translation = (hs_translation)translations[ti];
    b.policy_spec = specs[pi];
    b.huge_asked = huge_all[huge_modes[hi]];
    b.translation = translation_all[translations[ti]];
    if (hs_pool_open(&po, &b.pool) != HS_OK) return fail(&b, "opening the pool");
    int len = snprintf(b.variant, sizeof b.variant, "%s", specs[pi]);
    if (ntrans > 1)
      len += snprintf(b.variant + len, sizeof b.variant - (size_t)len, " %s", b.translation);
    if (nhuge > 1)
      snprintf(b.variant + len, sizeof b.variant - (size_t)len, " huge=%s(%s)", b.huge_asked,
               bench_huge_used_name(hs_pool_huge_pages(b.pool)));
    for (int wl = 0; wl < WL_COUNT; wl++) {
      for (uint32_t t = 0; t < b.threads.n; t++) {
        uint32_t nthreads = (uint32_t)b.threads.v[t];
        /* ABBA: policy, baseline, baseline, policy, ... */
        for (int rep = 0; rep < repeat; rep++) {
          for (int k = 0; k < V_COUNT; k++) {
            variant var = (variant)(rep % 2 ? V_COUNT - 1 - k : k);
            if (!run_one(&b, var, (workload)wl, nthreads, &runs[var][rep])) {
              if (bench_interrupted()) break;
              cleanup(&b);
              return 1;
            }
          }
          if (bench_interrupted()) {
            cleanup(&b);
            bench_exit_interrupted(PROG);
          }
          if (wl == WL_HIT) {
            /* Beside each pair of hit runs: the memory limit of a hit on
             * this pool, measured now, on the same kind of pages. */
            hs_pool_memory m;
            hs_pool_memory_usage(b.pool, &m);
            meta_bytes = m.hit_bytes;
            chase[rep] = mem_chase_ns(meta_bytes, huge, b.seed + (uint64_t)rep);
            if (chase[rep] < 0) {
              fprintf(stderr, PROG ": no memory for a %" PRIu64 "-byte chase\n", meta_bytes);
              cleanup(&b);
              return 1;
            }
          }
        }
        summarize(runs[V_HOTSET], runs[V_BASELINE], repeat, nthreads, &agg[wl][t][V_HOTSET]);
        if (wl == WL_HIT) {
          double lo, hi_ns;
          agg[wl][t][V_HOTSET].metadata_bytes = meta_bytes;
          agg[wl][t][V_HOTSET].chase_ns = median_of(chase, repeat, &lo, &hi_ns);
        }
        summarize(runs[V_BASELINE], NULL, repeat, nthreads, &agg[wl][t][V_BASELINE]);
        for (int var = 0; var < V_COUNT; var++) {
          const series *r = &agg[wl][t][var];
          if (b.json)
            print_json(&b, (variant)var, (workload)wl, nthreads, r);
          else
            print_table_row(variant_name(&b, (variant)var), (workload)wl, nthreads, r,
                            &agg[wl][0][var], var == V_HOTSET);
        }
      }
    }
    hs_status st = hs_pool_close(b.pool);
    b.pool = NULL;
    if (st != HS_OK) return fail(&b, "closing the pool");
  }
  if (!b.json) {
    printf("\nMops/s: the median of the runs (min-max of them beside it); ns/op: per thread, at "
           "the median;\nscaling: median ops/s over the same variant and workload's at %" PRIu64
           " thread%s; vs base: the median\n(min-max) of each policy run's ops/s over the "
           "baseline run paired with it. mixed: the baseline\nreads under its global mutex and "
           "takes no content lock; hotset takes a share content lock.\n",
           b.threads.v[0], b.threads.v[0] == 1 ? "" : "s");
  }

  /* A failed close keeps its pool; cleanup() then abandons it. */
  if (glru_close(b.glru) != HS_OK) return fail(&b, "closing the global-mutex-lru pool");
  b.glru = NULL;
  cleanup(&b);
  return 0;
}
