/*
 * cli/replay.c — `hotset replay`: a trace driven through the real pool.
 *
 * `hotset sim` models a policy over object ids; this runs the same trace
 * through hs_pool_read over real relation files, so what it reports is what
 * the buffer pool itself does: its misses (the `hit` out-parameter), its
 * reads from the files and its speed, frames, pins and locks included.
 *
 * Each request names a block. With the split layout a 64-bit id is a
 * PostgreSQL page (hs_pg_page_id): relation id >> 32, fork
 * (id >> 28) & 15, block id & 0x0fffffff, the way hotset's PostgreSQL
 * traces number pages, and each relation fork is made as long as the
 * highest block the trace reads in it. Ids that are not such pages (hashed
 * or scrambled keys) would ask for relations of billions of blocks; the
 * dense layout then numbers the distinct ids 0, 1, 2... in order of first
 * request, as the blocks of one relation. Which block an id becomes does
 * not change which requests miss: the pool's policies see frames, never
 * block numbers.
 *
 * Modes. --ordered (the default) keeps the trace's order on one thread,
 * which is what makes its misses equal `hotset sim --ignore-size`'s at the
 * same number of pages, with or without the ring rule, for every policy:
 * the pool's clock is the trace's time (hs_pool_options.clock_ms), as the
 * simulator's is. --by-pid gives each process id its own thread, in its
 * own order, as the traced server ran; --threads N deals the requests out
 * in turn. Under the ring rule (sim/scan_runs.h) each scan gets a new
 * bulkread strategy of the pool's own, so the rings are the pool's, not a
 * model of them.
 */
#include "cli/replay.h"

#include "cli/sim_cmd.h"
#include "common/args.h"
#include "common/clock.h"
#include "common/flags.h"
#include "common/interrupt.h"
#include "common/json.h"
#include "common/resources.h"
#include "common/scratch.h"
#include "common/stamped.h"
#include "core/error.h"
#include "core/mkdirs.h"
#include "hotset/policy.h"
#include "hotset/pool.h"
#include "hotset/stats.h"
#include "hotset/strategy.h"
#include "sim/key_map.h"
#include "sim/scan_runs.h"
#include "sim/trace.h"
#include "sim/trace_clock.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROG "hotset replay"
/* The relation of the dense layout (PostgreSQL's first user relfilenode). */
#define DENSE_REL 16384u
/* Requests between two looks at bench_interrupted(). */
#define CHECK_INTERVAL 65536u
/* --layout auto: blocks the split layout may add beyond twice the distinct ids. */
#define AUTO_SPLIT_SLACK 65536u
#define READ_CHUNK       4096u
/* --threads and --by-pid run at most this many threads. */
#define REPLAY_MAX_THREADS 1024u

static const args_command command = {
    .cmd = {.prog = PROG},
    .synopsis = "--trace FILE --pool SIZE [flags]\n       hotset replay FILE --pool SIZE [flags]",
    .about = "Creates real relation files sized from the trace and drives the trace through\n"
             "the real buffer pool (hs_pool_read, then release), once per policy: in the\n"
             "trace's order on one thread (--ordered, the default), on a thread per pid\n"
             "(--by-pid) or on N threads (--threads N). Misses are reads the pool had to\n"
             "make; ordered, they equal `hotset sim --ignore-size` at the same number of\n"
             "pages, with the same --ring-rule and clock.\n",
    .notes = ARGS_SIZE_NOTE
    "Layouts: split reads a 64-bit id as a PostgreSQL page: relation id >> 32, fork\n"
    "(id >> 28) & 15, block id & 0x0fffffff (hotset's PostgreSQL traces), each\n"
    "relation fork as long as the highest block read in it; dense numbers the distinct ids 0, 1, "
    "2... in order\n"
    "of first request, as blocks of one relation; auto takes split unless its\n"
    "relations would hold more than twice the trace's distinct ids plus 65536\n"
    "blocks. Which block an id becomes does not change which requests miss.\n"
    "It refuses to start (exit 1) when the relations would not fit in the free\n"
    "space. On SIGINT or SIGTERM it stops, removes its temporary directory and dies\n"
    "by that signal.\n",
};
static const args_cmd *const cmd = &command.cmd;

/* ---- the trace, read into memory as PostgreSQL page ids ---- */

/* Page ids as PostgreSQL pages (hs_pg_page_id): relation, fork, block. */
#define ID_REL(id)   ((hs_relid)((id) >> 32))
#define ID_FORK(id)  ((unsigned)((id) >> HS_PG_BLOCK_BITS) & 0xfu)
#define ID_BLOCK(id) ((hs_blockno)((id) & (HS_PG_BLOCK_LIMIT - 1)))

typedef struct replay_rel {
  hs_relid rel;
  hs_fork fork;
  hs_blockno nblocks;
} replay_rel;

typedef struct replay_trace {
  uint64_t *req;              /* per request: the trace's id, then a page id */
  uint32_t *pid;              /* per request: the trace's pid (NULL: no pids) */
  uint64_t *time_ms;          /* per request: its time in ms, or its number when the
                                 trace has no clock (NULL: no policy reads time) */
  bool clock_counts_requests; /* time_ms holds request numbers */
  uint64_t n, cap;
  uint64_t distinct;  /* distinct ids */
  const char *layout; /* "split" or "dense" */
  replay_rel *rels;   /* the relation forks to make */
  size_t nrels;
  uint64_t blocks;     /* their blocks, together */
  hs_scan_runs runs;   /* --ring-rule pg: the scans (stream NULL otherwise) */
  double load_seconds; /* reading the trace and laying it out */
} replay_trace;

static void replay_trace_free(replay_trace *t) {
  free(t->req);
  free(t->pid);
  free(t->time_ms);
  free(t->rels);
  hs_scan_runs_free(&t->runs);
}

/* Reads the ids, the pids and, when `want_time`, each request's time: in
 * milliseconds when the trace (or ms_per_request) tells time, else its
 * number, as the simulator's clock counts (then durations must be 0). */
static hs_status read_trace(const char *path, const hs_trace_options *topts, bool want_pids,
                            bool want_time, double ms_per_request, replay_trace *t) {
  hs_trace *tr;
  hs_status st = hs_trace_open(path, topts, &tr);
  if (st != HS_OK) return st;
  if (want_pids && !hs_trace_has_pids(tr)) {
    hs_trace_close(tr);
    return hs_fail(HS_ERR_INVALID, 0,
                   "%s: --by-pid needs a trace with a pid column (a csv naming \"pid\")", path);
  }
  trace_clock clock = trace_clock_make(hs_trace_time_unit_ns(tr), ms_per_request);
  bool with_time = want_time;
  t->clock_counts_requests = !trace_clock_tells_time(&clock);
  bool with_pids = hs_trace_has_pids(tr);
  hs_request *chunk = malloc(READ_CHUNK * sizeof *chunk);
  if (!chunk) {
    hs_trace_close(tr);
    return hs_fail(HS_ERR_NOMEM, 0, "out of memory reading %s", path);
  }
  for (;;) {
    size_t got = 0;
    st = hs_trace_read(tr, chunk, READ_CHUNK, &got);
    if (st != HS_OK) break;
    if (t->n + got > t->cap) {
      uint64_t cap = t->cap ? t->cap * 2 : 1u << 16;
      uint64_t *bigger = realloc(t->req, cap * sizeof *bigger);
      if (bigger) t->req = bigger;
      uint32_t *pids = with_pids ? realloc(t->pid, cap * sizeof *pids) : NULL;
      if (pids) t->pid = pids;
      uint64_t *times = with_time ? realloc(t->time_ms, cap * sizeof *times) : NULL;
      if (times) t->time_ms = times;
      if (!bigger || (with_pids && !pids) || (with_time && !times)) {
        st = hs_fail(HS_ERR_NOMEM, 0, "out of memory holding %" PRIu64 " requests of %s", t->n,
                     path);
        break;
      }
      t->cap = cap;
    }
    for (size_t i = 0; i < got; i++) {
      if (with_pids) t->pid[t->n] = chunk[i].pid;
      if (with_time)
        t->time_ms[t->n] =
            t->clock_counts_requests ? t->n : trace_clock_next(&clock, chunk[i].time);
      t->req[t->n++] = chunk[i].id;
    }
    if (got < READ_CHUNK) break;
    if (bench_interrupted()) {
      st = hs_fail(HS_ERR_INVALID, 0, "interrupted");
      break;
    }
  }
  free(chunk);
  hs_trace_close(tr);
  return st;
}

static int rel_order(const void *a, const void *b) {
  const replay_rel *x = a, *y = b;
  if (x->rel != y->rel) return x->rel < y->rel ? -1 : 1;
  return x->fork < y->fork ? -1 : x->fork > y->fork;
}

/* Chooses the layout and rewrites every request as a page id whose
 * relation fork is one of t->rels. */
static hs_status lay_out(const char *layout_flag, replay_trace *t) {
  key_map ids = {0}, rels = {0};
  hs_status st = HS_OK;
  if (!key_map_init(&ids, 1024) || !key_map_init(&rels, 64)) {
    st = hs_fail(HS_ERR_NOMEM, 0, "out of memory mapping the trace's ids");
    goto out;
  }
  /* One pass finds the distinct ids (numbered in order of first request)
   * and, per relation fork of the split layout, the highest block read. */
  bool split_ok = true;
  for (uint64_t i = 0; i < t->n; i++) {
    uint64_t id = t->req[i];
    uint32_t *v = key_map_place(&ids, id);
    uint32_t *r = v ? key_map_place(&rels, id >> HS_PG_BLOCK_BITS) : NULL;
    if (!v || !r) {
      st = hs_fail(HS_ERR_NOMEM, 0, "out of memory mapping the trace's ids");
      goto out;
    }
    if (*v == KEY_MAP_EMPTY) {
      if (ids.n >= HS_PG_BLOCK_LIMIT) {
        st = hs_fail(HS_ERR_INVALID, 0, "more than %u distinct ids", HS_PG_BLOCK_LIMIT - 1);
        goto out;
      }
      *v = (uint32_t)(ids.n - 1);
    }
    if (ID_FORK(id) >= HS_FORK_COUNT) split_ok = false; /* no fork of that number */
    /* The map's values are block counts: the highest block read, plus one. */
    uint32_t block = ID_BLOCK(id);
    if (*r == KEY_MAP_EMPTY || *r < block + 1) *r = block + 1;
  }
  t->distinct = ids.n;
  uint64_t split_blocks = 0;
  for (size_t i = 0; i < rels.cap; i++)
    if (rels.vals[i] != KEY_MAP_EMPTY) split_blocks += rels.vals[i];

  bool split;
  if (strcmp(layout_flag, "split") == 0) {
    if (!split_ok) {
      st = hs_fail(HS_ERR_INVALID, 0,
                   "an id's fork ((id >> 28) & 15) is %u or more, and a relation has %u forks: "
                   "try --layout dense",
                   HS_FORK_COUNT, HS_FORK_COUNT);
      goto out;
    }
    split = true;
  } else if (strcmp(layout_flag, "dense") == 0) {
    split = false;
  } else {
    /* Holes are cheap in a few relations (PostgreSQL's traces read most of a
     * table's blocks), absurd for hashed ids. */
    split = split_ok && split_blocks <= 2 * t->distinct + AUTO_SPLIT_SLACK;
  }

  if (split) {
    t->layout = "split";
    t->rels = malloc(rels.n * sizeof *t->rels);
    if (!t->rels) {
      st = hs_fail(HS_ERR_NOMEM, 0, "out of memory for %zu relations", rels.n);
      goto out;
    }
    for (size_t i = 0; i < rels.cap; i++)
      if (rels.vals[i] != KEY_MAP_EMPTY) {
        uint64_t id = rels.keys[i] << HS_PG_BLOCK_BITS;
        t->rels[t->nrels++] = (replay_rel){ID_REL(id), (hs_fork)ID_FORK(id), rels.vals[i]};
      }
    qsort(t->rels, t->nrels, sizeof *t->rels, rel_order);
    t->blocks = split_blocks; /* the ids are page ids already */
  } else {
    t->layout = "dense";
    t->rels = malloc(sizeof *t->rels);
    if (!t->rels) {
      st = hs_fail(HS_ERR_NOMEM, 0, "out of memory");
      goto out;
    }
    t->rels[0] = (replay_rel){DENSE_REL, HS_FORK_MAIN, (hs_blockno)t->distinct};
    t->nrels = 1;
    t->blocks = t->distinct;
    for (uint64_t i = 0; i < t->n; i++)
      t->req[i] = hs_pg_page_id(DENSE_REL, HS_FORK_MAIN, *key_map_find(&ids, t->req[i]));
  }
out:
  key_map_free(&ids);
  key_map_free(&rels);
  return st;
}

/* ---- running ---- */

/* Everything main cleans up after a failure or a signal. */
typedef struct replay_run {
  char tmpdir[4096];
  char datadir[4200];
  hs_pool *pool;
  replay_trace trace;
} replay_run;

static void replay_cleanup(replay_run *d) {
  if (d->pool) hs_pool_abandon(d->pool);
  d->pool = NULL;
  if (d->tmpdir[0]) bench_tempdir_remove(d->tmpdir);
  d->tmpdir[0] = '\0';
  replay_trace_free(&d->trace);
  memset(&d->trace, 0, sizeof d->trace);
}

static int replay_fail(replay_run *d, const char *what, const char *msg) {
  /* msg is often hs_last_error(), which the cleanup may overwrite. */
  char why[1024];
  snprintf(why, sizeof why, "%s", msg);
  replay_cleanup(d);
  if (bench_interrupted()) bench_exit_interrupted(PROG); /* the failure is the signal's doing */
  if (what)
    fprintf(stderr, PROG ": %s: %s\n", what, why);
  else
    fprintf(stderr, PROG ": %s\n", why);
  return 1;
}

static void replay_stop_if_interrupted(replay_run *d) {
  if (!bench_interrupted()) return;
  replay_cleanup(d);
  bench_exit_interrupted(PROG);
}

typedef struct replay_result {
  char spec[ARGS_SPEC_LEN * 2];
  uint32_t pool_pages;
  uint64_t misses, reads, ring_requests;
  double seconds;
} replay_result;

/* How the requests are shared out among threads. */
typedef enum replay_mode {
  MODE_ORDERED, /* one thread, the trace's order */
  MODE_THREADS, /* N threads, request i to thread i mod N */
  MODE_BY_PID   /* a thread per pid, each in its pid's order */
} replay_mode;

/* What every thread of one policy's replay shares. */
typedef struct replay_shared {
  hs_pool *pool;
  const replay_trace *trace;
  replay_mode mode;
  uint32_t nthreads;
  const uint64_t *by_pid;    /* MODE_BY_PID: request numbers, pid after pid */
  const uint64_t *pid_start; /* ... thread k's are by_pid[pid_start[k] .. pid_start[k+1]) */
  hs_strategy **rings;       /* per stream of the ring rule (NULL: no rule) */
  uint32_t ring_bytes;       /* a ring's bytes (0: the pool is too small for one) */
  _Atomic uint64_t now_ms;   /* the trace's time: the pool's clock */
  _Atomic uint64_t misses, ring_requests;
  /* A progress line on a terminal, about once a second: requests done (in
   * steps of CHECK_INTERVAL per thread), and when it was last printed. */
  bool progress;
  const char *spec;
  uint64_t start_ns;
  _Atomic uint64_t done, printed_ns;
  _Atomic bool failed;
  hs_status st;
  char error[640];
  pthread_mutex_t error_lock;
} replay_shared;

typedef struct replay_thread {
  replay_shared *sh;
  uint32_t index;
} replay_thread;

static uint64_t replay_clock(void *ctx) {
  replay_shared *sh = ctx;
  return atomic_load_explicit(&sh->now_ms, memory_order_relaxed);
}

static void replay_error(replay_shared *sh, hs_status st, const char *fmt, ...) {
  pthread_mutex_lock(&sh->error_lock);
  if (!atomic_load(&sh->failed)) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(sh->error, sizeof sh->error, fmt, ap);
    va_end(ap);
    sh->st = st;
    atomic_store(&sh->failed, true);
  }
  pthread_mutex_unlock(&sh->error_lock);
}

/* The ring request i reads through under the ring rule, or NULL. A run's
 * first request gets a new ring: PostgreSQL gives every scan its own. */
static hs_status ring_for(replay_shared *sh, uint64_t i, hs_strategy **out) {
  *out = NULL;
  const hs_scan_runs *runs = &sh->trace->runs;
  uint32_t v = runs->stream[i];
  if (v == 0 || sh->ring_bytes == 0) return HS_OK;
  uint32_t s = (v & ~HS_RUN_START) - 1;
  if (!hs_pg_scan_uses_ring(runs->rel_blocks[s], hs_pool_nbuffers(sh->pool))) return HS_OK;
  if ((v & HS_RUN_START) || !sh->rings[s]) {
    hs_strategy_destroy(sh->rings[s]);
    sh->rings[s] = NULL;
    hs_strategy_options cfg = {.rule = HS_RING_FIXED, .bytes = sh->ring_bytes};
    hs_status st = hs_strategy_create(sh->pool, HS_STRATEGY_BULKREAD, &cfg, &sh->rings[s]);
    if (st != HS_OK) return st;
  }
  *out = sh->rings[s];
  return HS_OK;
}

/* One request through the pool: read, check a read page's stamp, release. */
static hs_status replay_request(replay_shared *sh, uint64_t i, uint64_t *misses,
                                uint64_t *ring_requests) {
  const replay_trace *t = sh->trace;
  uint64_t id = t->req[i];
  hs_relid rel = ID_REL(id);
  hs_fork fork = (hs_fork)ID_FORK(id);
  hs_blockno block = ID_BLOCK(id);
  hs_strategy *ring = NULL;
  if (sh->rings) {
    hs_status st = ring_for(sh, i, &ring);
    if (st != HS_OK) return st;
    *ring_requests += ring != NULL;
  }
  if (t->time_ms) {
    /* The clock never goes back, also when threads race ahead of each other. */
    uint64_t now = atomic_load_explicit(&sh->now_ms, memory_order_relaxed);
    while (t->time_ms[i] > now &&
           !atomic_compare_exchange_weak_explicit(&sh->now_ms, &now, t->time_ms[i],
                                                  memory_order_relaxed, memory_order_relaxed)) {
    }
  }
  hs_buf b;
  bool hit = false;
  hs_status st = hs_pool_read(sh->pool, rel, fork, block, HS_READ_NORMAL, ring, &b, &hit);
  if (st != HS_OK) return st;
  if (!hit) {
    (*misses)++;
    /* A page read from its file must be the block asked for. */
    const void *page = hs_buf_page(sh->pool, b);
    if (!bench_page_check(page, rel, block)) {
      hs_blockno found = bench_page_block(page);
      hs_buf_release(sh->pool, b);
      return hs_fail(HS_ERR_CORRUPT, 0, "block %u holds block %u's stamp", block, found);
    }
  }
  hs_buf_release(sh->pool, b);
  return HS_OK;
}

/* Counts CHECK_INTERVAL more requests done and, on a terminal, prints how
 * far the policy's replay is if a second has passed since the last line
 * (one thread prints: the one whose exchange wins). */
static void replay_progress(replay_shared *sh) {
  uint64_t done = atomic_fetch_add(&sh->done, CHECK_INTERVAL) + CHECK_INTERVAL;
  if (!sh->progress) return;
  uint64_t last = atomic_load(&sh->printed_ns), now = bench_now_ns(); /* last first: now >= it */
  if (now < last + 1000000000u || !atomic_compare_exchange_strong(&sh->printed_ns, &last, now))
    return;
  uint64_t total = sh->trace->n ? sh->trace->n : 1;
  fprintf(stderr, "\rreplay %s: %.0f%% (%.1f M of %.1f M requests, %.0f s)\033[K", sh->spec,
          100.0 * (double)done / (double)total, (double)done / 1e6, (double)total / 1e6,
          (double)(now - sh->start_ns) / 1e9);
}

static void *replay_thread_main(void *arg) {
  replay_thread *th = arg;
  replay_shared *sh = th->sh;
  const replay_trace *t = sh->trace;
  uint64_t misses = 0, ring_requests = 0, done = 0;
  uint64_t lo = 0, hi = t->n, step = 1;
  if (sh->mode == MODE_THREADS) {
    lo = th->index;
    step = sh->nthreads;
  } else if (sh->mode == MODE_BY_PID) {
    lo = sh->pid_start[th->index];
    hi = sh->pid_start[th->index + 1];
  }
  for (uint64_t k = lo; k < hi; k += step) {
    uint64_t i = sh->mode == MODE_BY_PID ? sh->by_pid[k] : k;
    hs_status st = replay_request(sh, i, &misses, &ring_requests);
    if (st != HS_OK) {
      char why[512];
      snprintf(why, sizeof why, "%s", hs_last_error());
      uint64_t id = t->req[i];
      replay_error(sh, st, "request %" PRIu64 " (relation %u, fork %u, block %u): %s", i + 1,
                   ID_REL(id), ID_FORK(id), ID_BLOCK(id), why);
      break;
    }
    if (++done % CHECK_INTERVAL == 0) {
      if (bench_interrupted() || atomic_load(&sh->failed)) {
        if (bench_interrupted()) replay_error(sh, HS_ERR_INVALID, "interrupted");
        break;
      }
      replay_progress(sh);
    }
  }
  atomic_fetch_add(&sh->misses, misses);
  atomic_fetch_add(&sh->ring_requests, ring_requests);
  return NULL;
}

/* The threads' shares under --by-pid: request numbers grouped by pid (in
 * order of each pid's first request), each group in trace order. */
static hs_status group_by_pid(const replay_trace *t, uint64_t **by_pid, uint64_t **start,
                              uint32_t *npids) {
  key_map pids = {0};
  uint32_t *group = malloc((t->n ? t->n : 1) * sizeof *group);
  uint64_t *count = NULL;
  hs_status st = HS_OK;
  if (!group || !key_map_init(&pids, 64)) goto nomem;
  for (uint64_t i = 0; i < t->n; i++) {
    uint32_t *v = key_map_place(&pids, t->pid[i]);
    if (!v) goto nomem;
    if (*v == KEY_MAP_EMPTY) *v = (uint32_t)(pids.n - 1);
    group[i] = *v;
  }
  if (pids.n > REPLAY_MAX_THREADS) {
    st = hs_fail(HS_ERR_INVALID, 0, "the trace has %zu pids; --by-pid runs at most %u threads",
                 pids.n, REPLAY_MAX_THREADS);
    goto out;
  }
  *npids = (uint32_t)pids.n;
  count = calloc(pids.n + 1, sizeof *count);
  *start = calloc(pids.n + 1, sizeof **start);
  *by_pid = malloc((t->n ? t->n : 1) * sizeof **by_pid);
  if (!count || !*start || !*by_pid) goto nomem;
  for (uint64_t i = 0; i < t->n; i++) count[group[i]]++;
  for (size_t g = 0; g < pids.n; g++) (*start)[g + 1] = (*start)[g] + count[g];
  memset(count, 0, (pids.n + 1) * sizeof *count);
  for (uint64_t i = 0; i < t->n; i++) (*by_pid)[(*start)[group[i]] + count[group[i]]++] = i;
  goto out;
nomem:
  st = hs_fail(HS_ERR_NOMEM, 0, "out of memory grouping the requests by pid");
out:
  if (st != HS_OK) {
    free(*by_pid);
    free(*start);
    *by_pid = *start = NULL;
  }
  free(group);
  free(count);
  key_map_free(&pids);
  return st;
}

/* One policy: a fresh pool over the relations, the whole trace through it. */
static hs_status replay_one(replay_run *d, const char *spec, uint32_t page_size,
                            uint64_t pool_bytes, replay_mode mode, uint32_t nthreads,
                            const uint64_t *by_pid, const uint64_t *pid_start, bool ring_rule,
                            replay_result *res) {
  replay_shared sh = {.trace = &d->trace,
                      .mode = mode,
                      .nthreads = nthreads,
                      .by_pid = by_pid,
                      .pid_start = pid_start,
                      .progress = isatty(STDERR_FILENO),
                      .spec = spec,
                      .start_ns = bench_now_ns()};
  sh.printed_ns = sh.start_ns;
  pthread_mutex_init(&sh.error_lock, NULL);
  hs_pool_options po;
  hs_pool_options_init(&po);
  po.dir = d->datadir;
  po.page_size = page_size;
  po.pool_bytes = pool_bytes;
  po.policy = spec;
  if (d->trace.time_ms) {
    /* Time-reading policies see the trace's time, as the simulator does. */
    po.clock_ms = replay_clock;
    po.clock_ctx = &sh;
  }
  hs_status st = hs_pool_open(&po, &d->pool);
  if (st != HS_OK) {
    pthread_mutex_destroy(&sh.error_lock);
    return st;
  }
  sh.pool = d->pool;
  res->pool_pages = hs_pool_nbuffers(d->pool);
  if (ring_rule) {
    sh.ring_bytes = hs_pg_bulkread_ring_size(res->pool_pages) * page_size;
    sh.rings = calloc(d->trace.runs.nstreams ? d->trace.runs.nstreams : 1, sizeof *sh.rings);
    if (!sh.rings) {
      pthread_mutex_destroy(&sh.error_lock);
      return hs_fail(HS_ERR_NOMEM, 0, "out of memory for %u rings", d->trace.runs.nstreams);
    }
  }

  pthread_t tids[REPLAY_MAX_THREADS];
  replay_thread ths[REPLAY_MAX_THREADS];
  uint32_t started = 0;
  uint64_t t0 = bench_now_ns();
  if (mode == MODE_ORDERED) {
    ths[0] = (replay_thread){&sh, 0};
    replay_thread_main(&ths[0]);
  } else {
    for (; started < nthreads; started++) {
      ths[started] = (replay_thread){&sh, started};
      if (pthread_create(&tids[started], NULL, replay_thread_main, &ths[started]) != 0) {
        replay_error(&sh, HS_ERR_NOMEM, "could not start thread %u of %u", started + 1, nthreads);
        break;
      }
    }
    for (uint32_t k = 0; k < started; k++) pthread_join(tids[k], NULL);
  }
  res->seconds = (double)(bench_now_ns() - t0) / 1e9;
  if (sh.progress && atomic_load(&sh.printed_ns) != sh.start_ns)
    fputs("\r\033[K", stderr); /* the progress line gives way to the results */
  if (sh.rings) {
    for (uint32_t s = 0; s < d->trace.runs.nstreams; s++) hs_strategy_destroy(sh.rings[s]);
    free(sh.rings);
  }
  pthread_mutex_destroy(&sh.error_lock);
  if (atomic_load(&sh.failed)) return hs_fail(sh.st, 0, "%s", sh.error);
  res->misses = atomic_load(&sh.misses);
  res->ring_requests = atomic_load(&sh.ring_requests);
  hs_pool_stats stats;
  hs_pool_stats_get(d->pool, &stats);
  res->reads = hs_pool_stats_total(&stats, HS_STAT_READS);

  /* The spec with every parameter spelled out, as `hotset sim` prints it. */
  hs_policy *p;
  if (hs_policy_create(spec, 1, 1, NULL, &p) == HS_OK) {
    snprintf(res->spec, sizeof res->spec, "%s", hs_policy_spec(p));
    hs_policy_destroy(p);
  } else {
    snprintf(res->spec, sizeof res->spec, "%.*s", ARGS_SPEC_LEN - 1, spec);
  }
  st = hs_pool_close(d->pool);
  if (st != HS_OK) return st;
  d->pool = NULL;
  return HS_OK;
}

int replay_main(int argc, char **argv) {
  const char *trace_path = NULL, *format_name = "auto", *csv_spec = NULL, *policy = NULL,
             *layout = NULL, *dir_flag = NULL;
  uint64_t pool_bytes = 0, page_size = 0, threads = 0;
  bool ordered = false, by_pid = false, json = false;
  const char *ring_rule_arg = NULL, *time_unit = NULL;
  double ms_per_request = 0;
  const args_opt opts[] = {
      TRACE_OPT_FILE(&trace_path, "the trace (or give it as the one argument; any format "
                                  "`hotset sim` reads)"),
      TRACE_OPT_FORMAT(&format_name),
      {.name = "csv",
       .kind = ARGS_STRING,
       .dest = &csv_spec,
       .arg = "SPEC",
       .help = "csv columns: id=COL[,header][,delimiter=X] (1-based)"},
      {.name = "pool",
       .kind = ARGS_SIZE,
       .dest = &pool_bytes,
       .min = 1,
       .help = "pool size (required); its pages are SIZE / --page-size"},
      BENCH_OPT_DIR_PAGE_SIZE(&page_size),
      {.name = "policy",
       .kind = ARGS_STRING,
       .dest = &policy,
       .arg = "LIST",
       .def = "clock-sweep",
       .help = "pool policies, comma-separated, each name[:key=value,...]; \"all\": every "
               "policy the pool takes"},
      {.name = "layout",
       .kind = ARGS_STRING,
       .dest = &layout,
       .arg = "MODE",
       .def = "auto",
       .help = "how ids become blocks: auto, split or dense (below)"},
      {.name = "ordered",
       .kind = ARGS_FLAG,
       .dest = &ordered,
       .help = "one thread in the trace's order (the default): misses equal `hotset sim`'s"},
      {.name = "threads",
       .kind = ARGS_UINT,
       .dest = &threads,
       .arg = "N",
       .min = 1,
       .max = REPLAY_MAX_THREADS,
       .help = "N threads, request i to thread i mod N, each in trace order"},
      {.name = "by-pid",
       .kind = ARGS_FLAG,
       .dest = &by_pid,
       .help = "a thread per process id (a csv with a pid column), each in its own order, "
               "as the traced server ran"},
      {.name = "ring-rule",
       .kind = ARGS_STRING,
       .dest = &ring_rule_arg,
       .arg = "MODE",
       .def = "none",
       .help = "pg: runs of consecutive blocks of a relation larger than a quarter of the "
               "pool, per pid and relation, read through a new 32-buffer bulkread ring each "
               "(as `hotset sim --ring-rule pg`)"},
      {.name = "time-unit",
       .kind = ARGS_STRING,
       .dest = &time_unit,
       .arg = "MODE",
       .def = "s",
       .help = "what one tick of a csv time column is: s, ms, us or ns"},
      {.name = "ms-per-request",
       .kind = ARGS_DOUBLE,
       .dest = &ms_per_request,
       .arg = "MS",
       .dmin = 1e-9,
       .dmax = 1e9,
       .help = "the clock of a trace without time stamps (midpoint's time, lru-k's crp are "
               "milliseconds of the trace's time)"},
      BENCH_OPT_DIR(&dir_flag),
      {.name = "json",
       .kind = ARGS_FLAG,
       .dest = &json,
       .help = "one JSON object per policy per line"},
  };
  int npos = args_parse(cmd, opts, sizeof opts / sizeof opts[0], argc, argv, 1);
  trace_path = trace_path_from_args(cmd, trace_path, npos, argv);
  if (!pool_bytes) args_usage_error(cmd, "--pool: the pool's size is required (e.g. 16MiB)");
  if (by_pid && threads) args_usage_error(cmd, "--by-pid and --threads exclude each other");
  if (ordered && (by_pid || threads > 1))
    args_usage_error(cmd, "--ordered runs one thread: it excludes --by-pid and --threads %" PRIu64,
                     threads);
  replay_mode mode = by_pid ? MODE_BY_PID : threads > 1 ? MODE_THREADS : MODE_ORDERED;
  bool ring_rule = parse_ring_rule(cmd, ring_rule_arg);
  if (ring_rule && mode == MODE_THREADS)
    args_usage_error(cmd,
                     "--ring-rule pg needs each scan on one thread: use --ordered or --by-pid");
  /* An existing --dir says its page size (its control file). */
  if (bench_dir_page_size(dir_flag, &page_size) != HS_OK) {
    fprintf(stderr, PROG ": %s\n", hs_last_error());
    return 1;
  }
  if (pool_bytes / page_size == 0) {
    char pool[32], page[32];
    args_usage_error(cmd, "--pool: %s holds no page of %s",
                     args_format_size(pool_bytes, pool, sizeof pool),
                     args_format_size(page_size, page, sizeof page));
  }
  if (strcmp(layout, "auto") != 0 && strcmp(layout, "split") != 0 && strcmp(layout, "dense") != 0)
    args_usage_error(cmd, "--layout: \"%s\" is not auto, split or dense", layout);
  hs_trace_options topts = trace_options_from_flags(cmd, format_name, csv_spec, false, time_unit);
  static char specs[ARGS_LIST_MAX][ARGS_SPEC_LEN];
  const char *why = NULL;
  int nspecs = args_split_policies(policy, true, specs, ARGS_LIST_MAX, &why);
  if (nspecs < 0) args_usage_error(cmd, "--policy: \"%s\": %s", policy, why);
  bool reads_time = false;
  for (int i = 0; i < nspecs; i++) {
    hs_policy *p;
    if (hs_policy_create(specs[i], 1, 1, NULL, &p) != HS_OK)
      args_usage_error(cmd, "--policy: %s", hs_last_error());
    reads_time |= (hs_policy_flags(p) & HS_POLICY_NEEDS_TIME) != 0;
    hs_policy_destroy(p);
  }
  if (bench_check_memory(pool_bytes, "its pool") != HS_OK) {
    fprintf(stderr, PROG ": %s\n", hs_last_error());
    return 1;
  }
  bench_signals_install();

  replay_run d = {0};
  uint64_t t0 = bench_now_ns();
  if (read_trace(trace_path, &topts, by_pid, reads_time, ms_per_request, &d.trace) != HS_OK)
    return replay_fail(&d, NULL, hs_last_error());
  if (d.trace.n == 0) return replay_fail(&d, trace_path, "the trace holds no request");
  if (reads_time && d.trace.clock_counts_requests) {
    /* As `hotset sim`: a request count gives no duration a meaning. */
    if (!policies_run_on_request_clock(specs, nspecs)) {
      char no_clock[512];
      snprintf(no_clock, sizeof no_clock,
               "no time stamps, so the clock counts requests: %s; or give --ms-per-request MS",
               hs_last_error());
      return replay_fail(&d, trace_path, no_clock);
    }
  }
  if (ring_rule && hs_scan_runs_find(d.trace.req, d.trace.pid, d.trace.n, &d.trace.runs) != HS_OK)
    return replay_fail(&d, trace_path, hs_last_error());
  if (lay_out(layout, &d.trace) != HS_OK) return replay_fail(&d, trace_path, hs_last_error());
  d.trace.load_seconds = (double)(bench_now_ns() - t0) / 1e9;
  replay_stop_if_interrupted(&d);

  /* Refuse now what could only end in ENOSPC after minutes of writing:
   * ids read as (relation, block) pairs may ask for absurd relations. */
  char need_what[160];
  snprintf(need_what, sizeof need_what, "its %zu relation%s of %" PRIu64 " blocks (%s layout)",
           d.trace.nrels, d.trace.nrels == 1 ? "" : "s", d.trace.blocks, d.trace.layout);
  uint64_t need = d.trace.blocks > UINT64_MAX / page_size ? UINT64_MAX : d.trace.blocks * page_size;
  if (bench_check_space(dir_flag ? dir_flag : bench_tempdir_parent(), need, need_what) != HS_OK)
    return replay_fail(&d, NULL, hs_last_error());

  if (dir_flag) {
    /* --dir is created with its missing parents (mkdir -p), as by every
     * command that makes a directory. */
    if (make_dirs(dir_flag, 0700, "the directory") != HS_OK)
      return replay_fail(&d, "--dir", hs_last_error());
    snprintf(d.datadir, sizeof d.datadir, "%s", dir_flag);
  } else {
    if (bench_tempdir_make("replay", d.tmpdir, sizeof d.tmpdir) != HS_OK)
      return replay_fail(&d, "creating a temporary directory", hs_last_error());
    snprintf(d.datadir, sizeof d.datadir, "%s/data", d.tmpdir);
  }
  hs_smgr *smgr;
  if (hs_smgr_open(d.datadir, &(hs_smgr_options){.page_size = (uint32_t)page_size}, &smgr) != HS_OK)
    return replay_fail(&d, "opening the data directory", hs_last_error());
  for (size_t i = 0; i < d.trace.nrels; i++) {
    const replay_rel *rr = &d.trace.rels[i];
    if (bench_make_relation_fork(smgr, rr->rel, rr->fork, rr->nblocks) != HS_OK) {
      char what[64];
      snprintf(what, sizeof what, "creating relation %u fork %d", rr->rel, (int)rr->fork);
      hs_smgr_close(smgr);
      return replay_fail(&d, what, hs_last_error());
    }
  }
  hs_smgr_close(smgr);
  replay_stop_if_interrupted(&d);

  uint64_t *by_pid_order = NULL, *pid_start = NULL;
  uint32_t nthreads = mode == MODE_THREADS ? (uint32_t)threads : 1;
  if (mode == MODE_BY_PID && group_by_pid(&d.trace, &by_pid_order, &pid_start, &nthreads) != HS_OK)
    return replay_fail(&d, trace_path, hs_last_error());

  if (!json)
    printf("%-40s %10s %12s %12s %10s %12s %8s %12s\n", "policy", "pool_pages", "requests",
           "misses", "miss%", "reads", "seconds", "ops/s");
  for (int i = 0; i < nspecs; i++) {
    replay_result r = {0};
    if (replay_one(&d, specs[i], (uint32_t)page_size, pool_bytes, mode, nthreads, by_pid_order,
                   pid_start, ring_rule, &r) != HS_OK) {
      free(by_pid_order);
      free(pid_start);
      return replay_fail(&d, specs[i], hs_last_error());
    }
    double mr = (double)r.misses / (double)d.trace.n;
    double ops = r.seconds > 0 ? (double)d.trace.n / r.seconds : 0;
    if (json) {
      json_out j;
      json_begin(&j, stdout);
      json_str(&j, "trace", trace_path);
      json_str(&j, "policy", r.spec);
      json_u64(&j, "pool_pages", r.pool_pages);
      json_u64(&j, "page_size", page_size);
      json_u64(&j, "requests", d.trace.n);
      json_u64(&j, "misses", r.misses);
      json_double(&j, "miss_ratio", "%.6f", mr);
      json_u64(&j, "reads", r.reads);
      json_double(&j, "seconds", "%.3f", r.seconds);
      json_double(&j, "load_seconds", "%.3f", d.trace.load_seconds);
      json_double(&j, "ops_per_sec", "%.1f", ops);
      json_u64(&j, "threads", nthreads);
      json_bool(&j, "ordered", mode == MODE_ORDERED);
      json_str(&j, "mode",
               mode == MODE_ORDERED  ? "ordered"
               : mode == MODE_BY_PID ? "by-pid"
                                     : "threads");
      json_str(&j, "ring_rule", ring_rule ? "pg" : "none");
      if (ring_rule) json_u64(&j, "ring_requests", r.ring_requests);
      json_str(&j, "layout", d.trace.layout);
      json_u64(&j, "relations", d.trace.nrels);
      json_u64(&j, "blocks", d.trace.blocks);
      json_end_line(&j);
    } else {
      printf("%-40s %10u %12" PRIu64 " %12" PRIu64 " %9.4f%% %12" PRIu64 " %8.3f %12.0f\n", r.spec,
             r.pool_pages, d.trace.n, r.misses, 100 * mr, r.reads, r.seconds, ops);
      fflush(stdout);
    }
  }
  free(by_pid_order);
  free(pid_start);
  if (!json) {
    char how[96];
    if (mode == MODE_ORDERED)
      snprintf(how, sizeof how, "one thread in trace order");
    else if (mode == MODE_BY_PID)
      snprintf(how, sizeof how, "%u threads, one per pid, each in its order", nthreads);
    else
      snprintf(how, sizeof how, "%u threads sharing the requests in turn", nthreads);
    printf("%s: %" PRIu64 " requests over %" PRIu64 " blocks in %zu relation fork%s (%s layout), "
           "%s%s\n",
           trace_path, d.trace.n, d.trace.blocks, d.trace.nrels, d.trace.nrels == 1 ? "" : "s",
           d.trace.layout, how, ring_rule ? ", PostgreSQL's ring rule" : "");
  }
  replay_cleanup(&d);
  return 0;
}
