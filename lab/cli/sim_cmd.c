/*
 * cli/sim_cmd.c — `hotset sim`: replay a trace through replacement policies.
 *
 * Every (policy, size) pair is one simulation; the pairs run in parallel on
 * --threads threads, each simulation single-threaded over the one copy of the
 * trace loaded in memory (sim/sim.h). Results are printed in the order the
 * pairs were given, whatever order they finish in, so runs are comparable
 * line by line. Sizes: bytes with a suffix, a plain integer (objects with
 * --ignore-size, else bytes), or a fraction 0 < x < 1 of the trace's working
 * set. --mrc sweeps log-spaced sizes instead; --plot draws them with gnuplot.
 * In object mode --mrc computes plain lru's whole curve in one pass of stack
 * distances (sim/mrc.h), exact, instead of a simulation per size.
 *
 * --sample R simulates every (policy, size) pair on one spatially hashed
 * sample of the trace (SHARDS, sim/shards.h) at R × the size, and reports
 * the estimate scaled back to the whole trace, marked as sampled.
 *
 * --shard I/N runs the I-th of N contiguous slices of the (policy, size)
 * job list, so that separate processes or machines can share a sweep: the
 * N outputs, concatenated in order, are the unsharded output (only shard 1
 * prints the table's or CSV's header).
 *
 * Every flag is checked before the trace is opened (only fractions wait for
 * the working set), and loading stops at --max-requests (sim/sim.h), so
 * neither a typo nor an endless trace costs more than a moment.
 */
#include "cli/sim_cmd.h"

#include "cli/cachesim_args.h"
#include "cli/sim_plot.h"
#include "common/args.h"
#include "common/gnuplot.h"
#include "common/human_size.h"
#include "common/json.h"
#include "core/error.h"
#include "core/size.h"
#include "hotset/policy.h"
#include "sim/compare_found.h"
#include "sim/mrc.h"
#include "sim/shards.h"
#include "sim/sim.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PROG "hotset sim"
/* The most points --mrc sweeps (--size lists have no limit). */
#define MAX_MRC_POINTS 256

static const char usage[] =
    "usage: hotset sim --trace FILE --policy LIST (--size LIST | --mrc [N]) [flags]\n"
    "       hotset sim FILE --policy LIST (--size LIST | --mrc [N]) [flags]\n"
    "       hotset sim FILE TYPE ALGO[,ALGO...] SIZE[,SIZE...] [cachesim's flags]\n"
    "\n"
    "The third form is libCacheSim's cachesim command line: TYPE oracleGeneral,\n"
    "vscsi, csv or txt; ALGO cachesim's names (LRU, TwoQ, S3FIFO...); SIZE as\n"
    "cachesim writes it (1gb, 16MB, 0.01, 1000); --ignore-obj-size 0|1,\n"
    "--num-thread N and -t \"obj-id-col=N,...\" (csv) taken; results printed as\n"
    "cachesim prints them (--cachesim-lines), --json as here.\n"
    "\n"
    "Replays a trace through replacement policies and reports miss ratios. Every\n"
    "(policy, size) pair is one simulation; pairs run in parallel.\n"
    "\n"
    "flags:\n"
    "  --trace FILE       the trace (a .zst suffix or zstd content is decompressed\n"
    "                     on the fly)\n"
    "  --format FORMAT    auto (default), oraclegeneral, vscsi, csv or txt\n"
    "  --csv SPEC         csv columns: id=COL,size=COL,time=COL[,header][,delimiter=X]\n"
    "                     (1-based), also pid=COL, found=COL, and rel=COL,block=COL\n"
    "                     [,fork=COL] instead of id for PostgreSQL traces; without a\n"
    "                     SPEC, --csv prints CSV output\n"
    "  --policy LIST      policies, comma-separated, each name[:key=value,...];\n"
    "                     \"all\" runs every policy (listed below, \"policies\")\n"
    "  --size LIST        cache sizes: 512MiB, 1GiB, 64KiB (bytes); 1000 (objects\n"
    "                     with --ignore-size, else bytes); 0.1 (a share of the\n"
    "                     working set: distinct bytes, or distinct objects)\n"
    "  --ignore-size      every object counts 1 (object mode)\n"
    "  --time-unit MODE   what one tick of a csv time column is: s (default),\n"
    "                     ms, us or ns (oraclegeneral counts seconds, vscsi\n"
    "                     microseconds)\n"
    "  --ring-rule MODE   none (default) or pg: a run of consecutive blocks of a\n"
    "                     relation larger than a quarter of the cache, read by\n"
    "                     one process (one access stream: pid and relation),\n"
    "                     goes through a bulkread ring of 32 entries (at most\n"
    "                     an eighth of the cache), one new ring per run, as\n"
    "                     PostgreSQL's sequential scans do; ids are PostgreSQL\n"
    "                     pages (relation id >> 32, fork (id >> 28) & 15, block\n"
    "                     id & 0x0fffffff); entries of one size only\n"
    "  --ms-per-request MS  the clock for a trace without time stamps (txt, csv\n"
    "                     without a time column): each request MS milliseconds\n"
    "                     after the one before. Durations in policy parameters\n"
    "                     (midpoint's time, lru-k's crp) are milliseconds of\n"
    "                     the trace's time; without time stamps or this flag\n"
    "                     they must be 0\n"
    "  --mrc [N]          a miss-ratio curve: N sizes (default 20, at most 256)\n"
    "                     log-spaced from 0.1%% to 100%% of the working set, for\n"
    "                     every policy; plain lru in object mode (--ignore-size,\n"
    "                     or a trace without sizes) is computed exactly in one\n"
    "                     pass of stack distances (\"method\" in --json)\n"
    "  --plot FILE        draw miss ratio against size (.png or .svg) with gnuplot\n"
    "  --threads N        simulations run at once (default: number of cores)\n"
    "  --skip-bad         skip bad records (counted and reported) instead of\n"
    "                     stopping at the first\n"
    "  --max-requests N   load at most N requests, else stop with an error that\n"
    "                     says how far loading got (the trace is held in memory,\n"
    "                     up to 64 bytes a request; default: what fits in half\n"
    "                     of the memory this process may use, %llu here)\n"
    "  --sample R         simulate a spatially hashed sample (SHARDS) of the\n"
    "                     trace: the objects whose hash falls in a share R of\n"
    "                     the hash space (2^-24 <= R <= 1), at R x each size;\n"
    "                     misses (and bytes) are the sample's divided by R, out\n"
    "                     of the whole trace's requests. Estimates, marked as\n"
    "                     such (\"sample\" in --json); about R of the time\n"
    "  --sample-floor E   with --sample: a size whose sampled cache would hold\n"
    "                     fewer than E entries (default 32) is sampled at the\n"
    "                     rate that gives it E (at most 1), since a miniature of\n"
    "                     a few entries hangs on which hot objects the hash\n"
    "                     kept; 0: one rate for every size (plain SHARDS)\n"
    "  --shard I/N        run only the I-th (1..N) of N equal slices of the\n"
    "                     (policy, size) list; the N outputs concatenated in\n"
    "                     order are the whole run's (shard 1 prints the header)\n"
    "  --from N           judge from request N (0-based), or from N%% of the\n"
    "                     trace: the requests before it warm the cache and are not\n"
    "                     counted (requests, misses and bytes are the rest's), and\n"
    "                     fixedset keeps the objects read most before it — a set\n"
    "                     an online learner could know — instead of choosing with\n"
    "                     hindsight\n"
    "  --cachesim-lines   one line per (policy, size) as libCacheSim's cachesim\n"
    "                     prints it (trace, policy, cache size, req, miss ratio,\n"
    "                     byte miss ratio, throughput), then hotset's misses\n"
    "  --compare-found    for a trace with a found column (tools/pg-trace's\n"
    "                     PostgreSQL csv): beside the misses, those the server\n"
    "                     missed too (agree), the simulated misses the server\n"
    "                     found (sim-only) and the server misses the simulation\n"
    "                     found (server-only)\n"
    "  --json             one JSON object per simulation per line; \"seconds\" is\n"
    "                     the simulation's, \"load_seconds\" reading and mapping\n"
    "                     the trace (and next-access times, if needed)\n"
    "  --verbose          say on stderr how the trace's format was chosen\n"
    "  --help             show this help\n"
    "\n"
    "policies: ";

typedef struct job {
  const char *spec;
  uint64_t size;
  const hs_sim_trace *trace; /* what it simulates: the trace or a sample */
  uint64_t threshold;        /* its sample's (sim/shards.h); 0: not sampled */
  hs_sim_result res;
  hs_status st;
  bool one_pass;        /* res comes from hs_mrc_lru: no simulation to run */
  hs_found_compare cmp; /* with --compare-found */
  char err[512];
} job;

typedef struct pool_ctx {
  const hs_sim_trace *full;
  job *jobs;
  size_t njobs;
  bool ignore_size;
  bool compare_found;
  _Atomic size_t next;
  _Atomic uint64_t done;
} pool_ctx;

/* One simulation marking its misses, then set against the trace's found
 * column (--compare-found; never with --sample, so the size is the job's). */
static hs_status run_compared(job *j, bool ignore_size, _Atomic uint64_t *done) {
  uint64_t *bits = calloc(j->trace->requests / 64 + 1, sizeof *bits);
  if (!bits) return hs_fail(HS_ERR_NOMEM, 0, "no memory for a miss bitmap");
  hs_status st = hs_sim_run_marking(j->trace, j->spec, j->size, ignore_size, done, bits, &j->res);
  if (st == HS_OK) st = hs_compare_found(j->trace, bits, &j->cmp);
  free(bits);
  return st;
}

static void *worker(void *arg) {
  pool_ctx *c = arg;
  for (;;) {
    size_t i = atomic_fetch_add(&c->next, 1);
    if (i >= c->njobs) return NULL;
    job *j = &c->jobs[i];
    if (j->one_pass) continue;
    uint64_t capacity = j->threshold ? hs_shards_scale_size(j->size, j->threshold) : j->size;
    if (c->compare_found)
      j->st = run_compared(j, c->ignore_size, &c->done);
    else
      j->st = hs_sim_run(j->trace, j->spec, capacity, c->ignore_size, &c->done, &j->res);
    if (j->st != HS_OK)
      snprintf(j->err, sizeof j->err, "%s", hs_last_error());
    else if (j->threshold)
      hs_shards_scale_result(&j->res, j->threshold, j->trace, c->full);
  }
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The progress line: on a terminal, for runs longer than two seconds. */
typedef struct progress {
  bool on;
  double start;
  _Atomic bool stop;
  _Atomic uint64_t *done;
  uint64_t total;
  const char *what;
  bool printed;
} progress;

static void *progress_main(void *arg) {
  progress *p = arg;
  while (!atomic_load(&p->stop)) {
    struct timespec ts = {0, 200 * 1000 * 1000};
    nanosleep(&ts, NULL);
    double el = now_s() - p->start;
    if (el < 2.0) continue;
    uint64_t d = atomic_load(p->done);
    double rate = d / el;
    double eta = rate > 0 && p->total > d ? (double)(p->total - d) / rate : 0;
    fprintf(stderr, "\r%s: %" PRIu64 "/%" PRIu64 " requests, %.1f MQPS, ETA %.0f s   ", p->what, d,
            p->total, rate / 1e6, eta);
    p->printed = true;
  }
  if (p->printed) fputs("\r\033[K", stderr);
  return NULL;
}

static void load_progress(void *ctx, uint64_t done, uint64_t total) {
  progress *p = ctx;
  if (!p->on) return;
  double el = now_s() - p->start;
  if (el < 2.0) return;
  fprintf(stderr, "\rloading: %.0f%%   ", total ? 100.0 * (double)done / (double)total : 0.0);
  p->printed = true;
}

/* One item of --size: a size, or a share of the working set, which is
 * known only once the trace is loaded. */
typedef struct size_item {
  bool fraction;
  double share;   /* fraction: 0 < share < 1 */
  uint64_t value; /* otherwise: bytes, or objects with --ignore-size */
} size_item;

/* Parses the --size list before the trace is read, so that a typo costs
 * nothing, whatever the trace. The list is taken whole, whatever its
 * length; a bad or empty item is a usage error quoting it. Returns the
 * number of items (in a malloc'ed *out). */
static size_t parse_sizes(const args_cmd *cmd, const char *s, bool ignore_size, size_item **out) {
  size_t n = 1;
  for (const char *c = s; *c; c++) n += *c == ',';
  size_item *items = calloc(n, sizeof *items);
  char *copy = strdup(s);
  if (!items || !copy) {
    fprintf(stderr, PROG ": out of memory for %zu sizes\n", n);
    exit(1);
  }
  char *item = copy;
  for (size_t i = 0; i < n; i++) {
    char *comma = strchr(item, ',');
    if (comma) *comma = '\0';
    size_item *it = &items[i];
    if (!*item) args_usage_error(cmd, "--size: item %zu of \"%s\" is empty", i + 1, s);
    if (strchr(item, '.') && args_parse_double(item, &it->share)) {
      if (!(it->share > 0 && it->share < 1))
        args_usage_error(cmd, "--size: \"%s\": a fraction must be between 0 and 1", item);
      it->fraction = true;
    } else if (hs_size_parse(item, &it->value) == HS_OK && it->value > 0) {
      bool suffixed = strspn(item, "0123456789") != strlen(item);
      if (suffixed && ignore_size)
        args_usage_error(cmd,
                         "--size: \"%s\": a byte size with --ignore-size (give a number of "
                         "objects)",
                         item);
    } else if (strspn(item, "0123456789") > 0 && hs_size_parse(item, &it->value) != HS_OK) {
      args_usage_error(cmd, "--size: %s", hs_last_error()); /* says what to write instead */
    } else {
      args_usage_error(cmd, "--size: \"%s\" is not a size (e.g. 512MiB, 1000, 0.1)", item);
    }
    item = comma ? comma + 1 : item + strlen(item);
  }
  free(copy);
  *out = items;
  return n;
}

/* The sizes of the list, fractions resolved against the loaded trace. */
static void resolve_sizes(const size_item *items, size_t n, const hs_sim_trace *t, bool ignore_size,
                          uint64_t *out) {
  uint64_t ws = ignore_size ? t->objects : t->ws_bytes;
  for (size_t i = 0; i < n; i++) {
    if (!items[i].fraction) {
      out[i] = items[i].value;
      continue;
    }
    uint64_t v = (uint64_t)llround(items[i].share * (double)ws);
    out[i] = v ? v : 1;
  }
}

static void mrc_sizes(const hs_sim_trace *t, bool ignore_size, int points, uint64_t *out,
                      size_t *n) {
  uint64_t ws = ignore_size ? t->objects : t->ws_bytes;
  *n = 0;
  for (int i = 0; i < points; i++) {
    double frac = points == 1 ? 1.0 : pow(10.0, -3.0 + 3.0 * i / (points - 1));
    uint64_t v = (uint64_t)llround(frac * (double)ws);
    if (v == 0) v = 1;
    if (*n && out[*n - 1] == v) continue;
    out[(*n)++] = v;
  }
}

/* A CSV field in quotes, a quote inside doubled (RFC 4180). */
static void csv_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"') fputc('"', f);
    fputc(*s, f);
  }
  fputc('"', f);
}

/* The policy's spec with every parameter spelled out (malloc'ed; the spec
 * as given if it does not parse, which args_split_policies has ruled out). */
static char *canonical(const char *spec) {
  hs_policy *p;
  if (hs_policy_create(spec, 1, 1, NULL, &p) != HS_OK) return strdup(spec);
  char *c = strdup(hs_policy_spec(p));
  hs_policy_destroy(p);
  return c;
}

/* Rewrites the optional-value flags into plain ones, so that args_parse
 * can take them: `--csv SPEC` (a value with '=') -> --csv-spec SPEC, bare
 * `--csv` -> --csv-out; a bare `--mrc` (no number after it) -> --mrc=20.
 * `--mrc N` is left as it is, so that messages about N name --mrc. */
static char **rewrite_optional(const args_cmd *cmd, int argc, char **argv, int *out_argc) {
  char **v = calloc((size_t)argc * 2 + 1, sizeof *v);
  if (!v) return NULL;
  int n = 0;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--csv") == 0) {
      if (i + 1 < argc && argv[i + 1][0] != '-' && strchr(argv[i + 1], '=')) {
        v[n++] = "--csv-spec";
        v[n++] = argv[++i];
      } else {
        v[n++] = "--csv-out";
      }
    } else if (strcmp(a, "--no-csv") == 0) {
      v[n++] = "--no-csv-out"; /* the output flag's opposite, as for any flag */
    } else if (strncmp(a, "--csv=", 6) == 0) {
      if (a[6] == '\0') args_usage_error(cmd, "--csv: missing value after '='");
      v[n++] = "--csv-spec";
      v[n++] = (char *)a + 6;
    } else if (strcmp(a, "--mrc") == 0) {
      uint64_t pts;
      if (i + 1 < argc && args_parse_uint(argv[i + 1], &pts)) {
        v[n++] = argv[i];
        v[n++] = argv[++i];
      } else {
        v[n++] = "--mrc=20";
      }
    } else {
      v[n++] = argv[i];
    }
  }
  *out_argc = n;
  return v;
}

static int sim_with_args(const args_cmd *cmd, int nargc, char **nargv);

/* --shard I/N: 1 <= I <= N; a usage error otherwise. */
static void parse_shard(const args_cmd *cmd, const char *s, uint64_t *index, uint64_t *count) {
  const char *slash = strchr(s, '/');
  char head[32];
  size_t len = slash ? (size_t)(slash - s) : 0;
  bool good = slash && len > 0 && len < sizeof head;
  if (good) {
    memcpy(head, s, len);
    head[len] = '\0';
    good = args_parse_uint(head, index) && args_parse_uint(slash + 1, count) && *count >= 1 &&
           *index >= 1 && *index <= *count;
  }
  if (!good) args_usage_error(cmd, "--shard: \"%s\" is not I/N with 1 <= I <= N (e.g. 2/8)", s);
}

/* The lru jobs of [lo, hi) on trace `t` that one pass of stack distances
 * answers exactly: plain lru (no parameter changed) in object mode. With
 * --sample (threshold > 0) the pass runs over the sample `t` at scaled
 * sizes and its results are scaled back to `full`. 0, or 1 after printing
 * one line. */
static int run_one_pass(const hs_sim_trace *t, const hs_sim_trace *full, uint64_t threshold,
                        job *jobs, size_t lo, size_t hi, _Atomic uint64_t *done) {
  char *plain = canonical("lru");
  if (!plain) return fprintf(stderr, PROG ": out of memory\n"), 1;
  size_t n = 0;
  uint64_t *caps = calloc(hi - lo + 1, sizeof *caps);
  size_t *which = calloc(hi - lo + 1, sizeof *which);
  hs_sim_result *res = calloc(hi - lo + 1, sizeof *res);
  if (!caps || !which || !res) {
    free(plain), free(caps), free(which), free(res);
    return fprintf(stderr, PROG ": out of memory\n"), 1;
  }
  for (size_t i = lo; i < hi; i++) {
    char *spec = jobs[i].trace == t ? canonical(jobs[i].spec) : NULL;
    if (spec && strcmp(spec, plain) == 0) {
      caps[n] = threshold ? hs_shards_scale_size(jobs[i].size, threshold) : jobs[i].size;
      which[n++] = i;
    }
    free(spec);
  }
  int rc = 0;
  if (n > 0) {
    if (hs_mrc_lru(t, caps, n, done, res) == HS_OK) {
      for (size_t k = 0; k < n; k++) {
        if (threshold) hs_shards_scale_result(&res[k], threshold, t, full);
        jobs[which[k]].res = res[k];
        jobs[which[k]].st = HS_OK;
        jobs[which[k]].one_pass = true;
      }
    } else {
      fprintf(stderr, PROG ": lru: %s\n", hs_last_error());
      rc = 1;
    }
  }
  free(plain), free(caps), free(which), free(res);
  return rc;
}

/* The samples of a --sample run: one per distinct rate the sizes need
 * (hs_shards_threshold_for), each built once and shared read-only by the
 * jobs of its sizes. A rate of 1 is the trace itself, not a copy. */
typedef struct sample_set {
  size_t n;
  uint64_t *threshold;  /* per sample */
  hs_sim_trace **trace; /* per sample */
  size_t *of_size;      /* per size: its sample */
} sample_set;

static void sample_set_free(sample_set *ss, const hs_sim_trace *full) {
  for (size_t i = 0; i < ss->n; i++)
    if (ss->trace[i] != full) hs_sim_trace_free(ss->trace[i]);
  free(ss->threshold);
  free(ss->trace);
  free(ss->of_size);
  memset(ss, 0, sizeof *ss);
}

/* Builds the samples for `sizes` (in the trace's units: entries with
 * --ignore-size or without sizes, else bytes, counted in objects of the
 * trace's mean size). HS_OK, or an error with the message set. */
static hs_status sample_set_build(sample_set *ss, hs_sim_trace *t, uint64_t threshold,
                                  unsigned floor, bool ignore_size, const uint64_t *sizes,
                                  size_t nsizes) {
  memset(ss, 0, sizeof *ss);
  ss->threshold = calloc(nsizes ? nsizes : 1, sizeof *ss->threshold);
  ss->trace = calloc(nsizes ? nsizes : 1, sizeof *ss->trace);
  ss->of_size = calloc(nsizes ? nsizes : 1, sizeof *ss->of_size);
  if (!ss->threshold || !ss->trace || !ss->of_size)
    return hs_fail(HS_ERR_NOMEM, 0, "out of memory for the samples");
  double unit =
      ignore_size || !t->sized || t->objects == 0 ? 1 : (double)t->ws_bytes / (double)t->objects;
  for (size_t k = 0; k < nsizes; k++) {
    uint64_t th = hs_shards_threshold_for(threshold, (double)sizes[k] / unit, floor);
    size_t i = 0;
    while (i < ss->n && ss->threshold[i] != th) i++;
    if (i == ss->n) {
      ss->threshold[i] = th;
      if (th == HS_SHARDS_MODULUS) {
        ss->trace[i] = t;
      } else {
        hs_status st = hs_shards_sample(t, th, &ss->trace[i]);
        if (st != HS_OK) return st;
      }
      ss->n++;
    }
    ss->of_size[k] = i;
  }
  return HS_OK;
}

/* --ring-rule: "pg" (PostgreSQL's bulkread rings for big scans) or "none". */
bool parse_ring_rule(const args_cmd *cmd, const char *arg) {
  if (strcmp(arg, "pg") == 0) return true;
  if (strcmp(arg, "none") != 0) args_usage_error(cmd, "--ring-rule: \"%s\" is not pg or none", arg);
  return false;
}

/* Whether a policy of the list reads the clock (so the trace's time stamps
 * are worth keeping). */
static bool any_reads_time(char specs[][ARGS_SPEC_LEN], int nspecs) {
  for (int i = 0; i < nspecs; i++) {
    hs_policy *p;
    if (hs_policy_create(specs[i], 1, 1, NULL, &p) != HS_OK) continue;
    bool reads = hs_policy_flags(p) & HS_POLICY_NEEDS_TIME;
    hs_policy_destroy(p);
    if (reads) return true;
  }
  return false;
}

/* A trace whose clock counts requests cannot give a duration in
 * milliseconds a meaning: say so once, before any simulation, with the two
 * ways out. */
bool policies_run_on_request_clock(char specs[][ARGS_SPEC_LEN], int nspecs) {
  const hs_policy_env env = {.clock = HS_CLOCK_REQUESTS};
  for (int i = 0; i < nspecs; i++) {
    hs_policy *p;
    if (hs_policy_create(specs[i], 1, 1, &env, &p) != HS_OK) return false;
    hs_policy_destroy(p);
  }
  return true;
}

static int check_durations(const hs_sim_trace *t, char specs[][ARGS_SPEC_LEN], int nspecs) {
  if (!policies_run_on_request_clock(specs, nspecs)) {
    fprintf(stderr,
            PROG ": %s has no time stamps (%s), so its clock counts requests: %s; or give "
                 "--ms-per-request MS\n",
            t->path, t->format == HS_TRACE_CSV ? "no csv time column" : "a txt trace",
            hs_last_error());
    return 1;
  }
  return 0;
}

const char *trace_path_from_args(const args_cmd *cmd, const char *flag, int npos, char **argv) {
  if (npos == 1 && flag)
    args_usage_error(cmd, "the trace is given twice (--trace %s and %s)", flag, argv[1]);
  if (npos == 1) return argv[1];
  if (!flag)
    args_usage_error(cmd, "--trace: a trace is required (--trace FILE, or FILE as the one "
                          "argument)");
  return flag;
}

hs_trace_options trace_options_from_flags(const args_cmd *cmd, const char *format_name,
                                          const char *csv_spec, bool skip_bad,
                                          const char *time_unit) {
  hs_trace_options topts = {.format = HS_TRACE_AUTO, .skip_bad = skip_bad};
  static const struct {
    const char *name;
    uint64_t ns;
  } units[] = {{"s", 1000000000u}, {"ms", 1000000u}, {"us", 1000u}, {"ns", 1u}};
  if (time_unit) {
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
      if (strcmp(time_unit, units[i].name) == 0) topts.csv_time_unit_ns = units[i].ns;
    if (!topts.csv_time_unit_ns)
      args_usage_error(cmd, "--time-unit: \"%s\" is not s, ms, us or ns", time_unit);
  }
  if (!hs_trace_format_parse(format_name, &topts.format))
    args_usage_error(cmd, "--format: \"%s\" is not auto, oraclegeneral, vscsi, csv or txt",
                     format_name);
  if (csv_spec && hs_csv_spec_parse(csv_spec, &topts.csv) != HS_OK)
    args_usage_error(cmd, "--csv: %s", hs_last_error());
  return topts;
}

/* The usage with this machine's default --max-requests and the policy
 * names filled in (malloc'ed, sized to fit: nothing is cut). */
static char *usage_text(void) {
  unsigned long long max = (unsigned long long)hs_sim_default_max_requests();
  int len = snprintf(NULL, 0, usage, max);
  const char *names = hs_policy_names();
  char *text = malloc((size_t)len + strlen(names) + 2);
  if (!text) return NULL;
  snprintf(text, (size_t)len + 1, usage, max);
  strcpy(text + len, names);
  strcat(text + len, "\n");
  return text;
}

int sim_main(int argc, char **argv) {
  char *text = usage_text();
  if (!text) {
    fprintf(stderr, PROG ": out of memory\n");
    return 1;
  }
  const args_cmd cmd = {PROG, text};
  /* cachesim's form (TRACE TYPE ALGO SIZE [flags]): read as hotset's flags */
  char **cs_argv = NULL;
  if (cachesim_form(argc, argv)) {
    cs_argv = cachesim_translate(&cmd, argc, argv, &argc);
    if (!cs_argv) {
      fprintf(stderr, PROG ": out of memory\n");
      free(text);
      return 1;
    }
    argv = cs_argv;
  }
  int nargc;
  char **nargv = rewrite_optional(&cmd, argc, argv, &nargc);
  if (!nargv) {
    fprintf(stderr, PROG ": out of memory\n");
    free(text);
    return 1;
  }
  int rc = sim_with_args(&cmd, nargc, nargv);
  free(nargv);
  cachesim_free(cs_argv);
  free(text);
  return rc;
}

/* The flags of one run: as given on the command line, then what checking
 * them derives. All of it is known before the trace is opened. */
typedef struct sim_flags {
  const char *trace_path, *format_name, *csv_spec, *policy, *sizes_arg, *plot, *shard_arg,
      *sample_arg, *time_unit, *ring_rule_arg, *from_arg;
  double ms_per_request;
  bool ignore_size, skip_bad, json, csv_out, compare_found, cachesim_lines, verbose;
  uint64_t mrc_points, max_requests, sample_floor, threads;
  /* derived by check_flags */
  uint64_t shard_index, shard_count;
  uint64_t threshold;    /* --sample's; 0: the whole trace */
  uint64_t from_request; /* --from as a request number, */
  double from_percent;   /* or as a share of the trace (>= 0), resolved once it is loaded */
  hs_trace_options topts;
  bool ring_rule;
  char (*specs)[ARGS_SPEC_LEN];
  int nspecs;
  size_item *size_items; /* --size's items (malloc'ed; NULL with --mrc) */
  size_t nitems;
} sim_flags;

/* What a run builds once the trace is read, released by release_run. */
typedef struct sim_run {
  hs_sim_trace *t;
  double load_start, load_seconds;
  uint64_t *sizes; /* resolved: the trace's units */
  size_t nsizes;
  sample_set samples; /* with --sample */
  job *jobs;          /* every (policy, size) pair, policy-major */
  size_t njobs;
  size_t lo, hi; /* this shard's slice of jobs */
} sim_run;

/* Reads the command line into *f, defaults first; a usage error exits. */
static void parse_flags(const args_cmd *cmd, int nargc, char **nargv, sim_flags *f) {
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  *f = (sim_flags){.format_name = "auto",
                   .ring_rule_arg = "none",
                   .sample_floor = HS_SHARDS_DEFAULT_FLOOR,
                   .threads = ncpu > 0 ? (uint64_t)ncpu : 1,
                   .shard_index = 1,
                   .shard_count = 1,
                   .from_percent = -1};
  const args_opt opts[] = {
      {.name = "trace", .kind = ARGS_STRING, .dest = &f->trace_path},
      {.name = "format", .kind = ARGS_STRING, .dest = &f->format_name},
      {.name = "csv-spec", .kind = ARGS_STRING, .dest = &f->csv_spec},
      {.name = "csv-out", .kind = ARGS_FLAG, .dest = &f->csv_out},
      {.name = "policy", .kind = ARGS_STRING, .dest = &f->policy},
      {.name = "size", .kind = ARGS_STRING, .dest = &f->sizes_arg},
      {.name = "ignore-size", .kind = ARGS_FLAG, .dest = &f->ignore_size},
      {.name = "mrc", .kind = ARGS_UINT, .dest = &f->mrc_points, .min = 1, .max = MAX_MRC_POINTS},
      {.name = "plot", .kind = ARGS_STRING, .dest = &f->plot},
      {.name = "threads", .kind = ARGS_UINT, .dest = &f->threads, .min = 1, .max = 1024},
      {.name = "skip-bad", .kind = ARGS_FLAG, .dest = &f->skip_bad},
      {.name = "json", .kind = ARGS_FLAG, .dest = &f->json},
      {.name = "compare-found", .kind = ARGS_FLAG, .dest = &f->compare_found},
      {.name = "shard", .kind = ARGS_STRING, .dest = &f->shard_arg},
      {.name = "sample", .kind = ARGS_STRING, .dest = &f->sample_arg},
      {.name = "sample-floor", .kind = ARGS_UINT, .dest = &f->sample_floor, .max = 1u << 20},
      {.name = "max-requests", .kind = ARGS_UINT, .dest = &f->max_requests, .min = 1},
      {.name = "time-unit", .kind = ARGS_STRING, .dest = &f->time_unit},
      {.name = "ring-rule", .kind = ARGS_STRING, .dest = &f->ring_rule_arg},
      {.name = "from", .kind = ARGS_STRING, .dest = &f->from_arg},
      {.name = "cachesim-lines", .kind = ARGS_FLAG, .dest = &f->cachesim_lines},
      {.name = "verbose", .kind = ARGS_FLAG, .dest = &f->verbose},
      {.name = "ms-per-request",
       .kind = ARGS_DOUBLE,
       .dest = &f->ms_per_request,
       .dmin = 1e-9,
       .dmax = 1e9},
  };
  int npos = args_parse(cmd, opts, sizeof opts / sizeof opts[0], nargc, nargv, 1);
  f->trace_path = trace_path_from_args(cmd, f->trace_path, npos, nargv);
}

/* What to simulate and how to print it: the flags that need or exclude
 * one another, --plot's file name, --shard and --sample. */
static void check_combinations(const args_cmd *cmd, sim_flags *f) {
  if (!f->policy) args_usage_error(cmd, "--policy: at least one policy is required");
  if (!f->sizes_arg && !f->mrc_points) args_usage_error(cmd, "--size or --mrc is required");
  if (f->sizes_arg && f->mrc_points) args_usage_error(cmd, "--size and --mrc exclude each other");
  if (f->json && f->csv_out) args_usage_error(cmd, "--json and --csv (output) exclude each other");
  if (f->plot && !f->mrc_points && !f->sizes_arg)
    args_usage_error(cmd, "--plot needs --mrc or --size");
  if (f->plot) {
    const char *dot = strrchr(f->plot, '.');
    if (!dot || (strcmp(dot, ".png") != 0 && strcmp(dot, ".svg") != 0))
      args_usage_error(cmd, "--plot: \"%s\" must end in .png or .svg", f->plot);
  }
  if (f->shard_arg) parse_shard(cmd, f->shard_arg, &f->shard_index, &f->shard_count);
  if (f->shard_arg && f->plot)
    args_usage_error(cmd, "--plot and --shard exclude each other (a shard draws part of a sweep)");
  if (f->sample_arg) {
    double rate;
    if (args_parse_double(f->sample_arg, &rate)) f->threshold = hs_shards_threshold(rate);
    if (f->threshold == 0)
      args_usage_error(cmd, "--sample: \"%s\" is not a rate R with 2^-24 <= R <= 1 (e.g. 0.01)",
                       f->sample_arg);
  }
  if (f->compare_found && f->sample_arg)
    args_usage_error(cmd, "--compare-found and --sample exclude each other (a sample's misses "
                          "are not the trace's requests)");
}

/* --from: a request number, or a share of the trace (resolved once it is
 * loaded). */
static void parse_from(const args_cmd *cmd, sim_flags *f) {
  const char *arg = f->from_arg;
  size_t len = strlen(arg);
  bool ok;
  if (len > 1 && arg[len - 1] == '%') {
    char num[64];
    ok = len < sizeof num;
    if (ok) {
      memcpy(num, arg, len - 1);
      num[len - 1] = 0;
      ok =
          args_parse_double(num, &f->from_percent) && f->from_percent >= 0 && f->from_percent < 100;
    }
  } else {
    ok = args_parse_uint(arg, &f->from_request);
  }
  if (!ok)
    args_usage_error(cmd, "--from: \"%s\" is not a request number or a share below 100%%", arg);
  if (f->mrc_points || f->sample_arg || f->compare_found)
    args_usage_error(cmd, "--from excludes --mrc, --sample and --compare-found (they count "
                          "every request)");
}

/* Every flag, checked before the trace is read: a typo must not cost the
 * minutes a big trace takes to load. A usage error exits; 1 after a
 * message when the plot could not be drawn, else 0. */
static int check_flags(const args_cmd *cmd, sim_flags *f) {
  check_combinations(cmd, f);
  if (f->from_arg) parse_from(cmd, f);
  f->topts = trace_options_from_flags(cmd, f->format_name, f->csv_spec, f->skip_bad, f->time_unit);
  f->ring_rule = parse_ring_rule(cmd, f->ring_rule_arg);
  if (f->ring_rule && f->sample_arg)
    args_usage_error(cmd, "--ring-rule pg and --sample exclude each other (a sample breaks the "
                          "scans the rule looks for)");
  static char specs[ARGS_LIST_MAX][ARGS_SPEC_LEN];
  const char *why = NULL;
  f->specs = specs;
  f->nspecs = args_split_policies(f->policy, false, specs, ARGS_LIST_MAX, &why);
  if (f->nspecs < 0) args_usage_error(cmd, "--policy: \"%s\": %s", f->policy, why);
  if (f->sizes_arg) f->nitems = parse_sizes(cmd, f->sizes_arg, f->ignore_size, &f->size_items);
  /* The plot is drawn after every simulation has run: what would stop it
   * must show before. */
  if (f->plot && gnuplot_check_output(PROG, f->plot) != 0) return 1;
  return 0;
}

/* Frees what a run built, whichever step it stopped at. */
static void release_run(sim_flags *f, sim_run *r) {
  free(r->jobs);
  r->jobs = NULL;
  if (r->t) sample_set_free(&r->samples, r->t);
  free(r->sizes);
  r->sizes = NULL;
  hs_sim_trace_free(r->t);
  r->t = NULL;
  free(f->size_items);
  f->size_items = NULL;
}

/* Loads the trace (stopping at --max-requests), then checks what only the
 * trace can tell: a found column for --compare-found, --from within it,
 * --ms-per-request only without time stamps, and durations in the
 * policies' parameters only with a clock in milliseconds. 0, or 1 after a
 * message. */
static int load_trace(const args_cmd *cmd, sim_flags *f, sim_run *r) {
  progress prog = {.on = isatty(2), .start = now_s(), .what = "sim"};
  r->load_start = now_s();
  const hs_sim_load_options load = {.max_requests = f->max_requests,
                                    .flag = "--max-requests",
                                    .keep_time = any_reads_time(f->specs, f->nspecs),
                                    .ms_per_request = f->ms_per_request,
                                    .find_scans = f->ring_rule};
  hs_sim_trace *t;
  hs_status st = hs_sim_load(f->trace_path, &f->topts, &load, load_progress, &prog, &t);
  if (prog.printed) fputs("\r\033[K", stderr);
  if (st != HS_OK) return fprintf(stderr, PROG ": %s\n", hs_last_error()), 1;
  r->t = t;
  if (f->compare_found && !t->found) {
    release_run(f, r); /* the usage error exits */
    args_usage_error(cmd,
                     "--compare-found: %s has no found column (a PostgreSQL trace csv from "
                     "tools/pg-trace has one: seq,pid,rel,fork,block,found)",
                     f->trace_path);
  }
  /* A run that worked says nothing on stderr (scripts treat stderr output
   * as trouble); how the format was chosen is there for who asks. */
  if (f->verbose && f->topts.format == HS_TRACE_AUTO)
    fprintf(stderr, PROG ": %s: %s\n", f->trace_path, t->format_reason);
  if (f->from_arg) {
    uint64_t from = f->from_request;
    if (f->from_percent >= 0) from = (uint64_t)((double)t->requests * f->from_percent / 100);
    if (from >= t->requests) {
      fprintf(stderr, PROG ": --from %s: %s has %" PRIu64 " requests; nothing would be judged\n",
              f->from_arg, f->trace_path, t->requests);
      return 1;
    }
    t->judge_from = from;
    if (!f->json && !f->csv_out)
      fprintf(stderr,
              PROG ": judged from request %" PRIu64 " (the %" PRIu64
                   " before warm the cache; fixedset keeps the objects read most in them)\n",
              from, from);
  }
  if (f->ms_per_request > 0 && t->timed) {
    fprintf(stderr,
            PROG ": --ms-per-request: %s has time stamps of its own; the flag is for traces "
                 "without them\n",
            f->trace_path);
    return 1;
  }
  if (!t->time_ms && check_durations(t, f->specs, f->nspecs) != 0) return 1;
  return 0;
}

/* What the policies need of the traces they run on (next-access times,
 * the hindsight ranking), built now: not thread-safe, so before any
 * simulation starts. A sampled run's policies run on the samples only. */
static int build_policy_needs(const sim_flags *f, sim_run *r) {
  for (int i = 0; i < f->nspecs; i++) {
    hs_policy *p;
    if (hs_policy_create(f->specs[i], 1, 1, NULL, &p) != HS_OK) continue;
    unsigned flags = hs_policy_flags(p);
    hs_policy_destroy(p);
    bool future = flags & HS_POLICY_NEEDS_FUTURE, hindsight = flags & HS_POLICY_NEEDS_HINDSIGHT;
    bool ok = true;
    if (future && !f->threshold) ok = hs_sim_need_future(r->t) == HS_OK;
    if (hindsight && !f->threshold && ok) ok = hs_sim_need_hindsight(r->t) == HS_OK;
    for (size_t k = 0; ok && k < r->samples.n; k++) {
      if (future) ok = hs_sim_need_future(r->samples.trace[k]) == HS_OK;
      if (hindsight && ok) ok = hs_sim_need_hindsight(r->samples.trace[k]) == HS_OK;
    }
    if (!ok) return fprintf(stderr, PROG ": %s\n", hs_last_error()), 1;
  }
  return 0;
}

/* The sizes, resolved against the trace (--mrc's sweep, or --size's
 * items), the samples they need, and what the policies need; the load's
 * time ends here. 0, or 1 after a message. */
static int prepare_sims(const sim_flags *f, sim_run *r) {
  r->sizes = calloc(f->mrc_points ? f->mrc_points : f->nitems, sizeof *r->sizes);
  if (!r->sizes) return fprintf(stderr, PROG ": out of memory\n"), 1;
  if (f->mrc_points) {
    mrc_sizes(r->t, f->ignore_size, (int)f->mrc_points, r->sizes, &r->nsizes);
  } else {
    resolve_sizes(f->size_items, f->nitems, r->t, f->ignore_size, r->sizes);
    r->nsizes = f->nitems;
  }
  /* Sizes are the whole trace's (resolved above); what is simulated is a
   * sample per rate the sizes need, each built once and shared read-only. */
  if (f->threshold && sample_set_build(&r->samples, r->t, f->threshold, (unsigned)f->sample_floor,
                                       f->ignore_size, r->sizes, r->nsizes) != HS_OK)
    return fprintf(stderr, PROG ": --sample: %s\n", hs_last_error()), 1;
  if (build_policy_needs(f, r) != 0) return 1;
  r->load_seconds = now_s() - r->load_start;
  return 0;
}

/* One job per (policy, size), policy-major, each on the trace or the
 * sample its size is simulated on, and this shard's slice of them. */
static int build_jobs(const sim_flags *f, sim_run *r) {
  r->njobs = (size_t)f->nspecs * r->nsizes;
  r->jobs = calloc(r->njobs, sizeof *r->jobs);
  if (!r->jobs) return fprintf(stderr, PROG ": out of memory for %zu simulations\n", r->njobs), 1;
  const sample_set *ss = &r->samples;
  for (int i = 0; i < f->nspecs; i++)
    for (size_t k = 0; k < r->nsizes; k++) {
      job *j = &r->jobs[(size_t)i * r->nsizes + k];
      j->spec = f->specs[i];
      j->size = r->sizes[k];
      j->trace = f->threshold ? ss->trace[ss->of_size[k]] : r->t;
      j->threshold = f->threshold ? ss->threshold[ss->of_size[k]] : 0;
    }
  /* This shard's slice: [lo, hi), contiguous so that the shards' outputs
   * concatenate in order; the whole list when not sharded. */
  r->lo = (size_t)((f->shard_index - 1) * r->njobs / f->shard_count);
  r->hi = (size_t)(f->shard_index * r->njobs / f->shard_count);
  return 0;
}

/* Runs the slice's jobs: plain lru's in one pass of stack distances where
 * that is exact, the others on --threads workers, with the progress line.
 * 0, or 1 after a message (a job's own failure is in the job). */
static int run_sims(const sim_flags *f, sim_run *r) {
  pool_ctx c = {.full = r->t,
                .jobs = r->jobs + r->lo,
                .njobs = r->hi - r->lo,
                .ignore_size = f->ignore_size,
                .compare_found = f->compare_found};
  atomic_init(&c.next, 0);
  atomic_init(&c.done, 0);
  /* The one pass of stack distances marks no misses: --compare-found
   * simulates every size. */
  bool one_pass =
      f->mrc_points && (f->ignore_size || !r->t->sized) && !f->ring_rule && !f->compare_found;
  const sample_set *ss = &r->samples;
  for (size_t k = 0; one_pass && k < (f->threshold ? ss->n : 1); k++)
    if (run_one_pass(f->threshold ? ss->trace[k] : r->t, r->t, f->threshold ? ss->threshold[k] : 0,
                     r->jobs, r->lo, r->hi, &c.done) != 0)
      return 1;
  uint64_t threads = f->threads;
  if (threads > r->hi - r->lo) threads = r->hi - r->lo;
  if (threads == 0) threads = 1; /* an empty slice: the one thread finds no job */
  progress prog = {.on = isatty(2), .what = "sim", .done = &c.done};
  for (size_t i = r->lo; i < r->hi; i++) prog.total += r->jobs[i].trace->requests;
  prog.start = now_s();
  atomic_init(&prog.stop, false);
  pthread_t prog_thread, *tids = calloc(threads, sizeof *tids);
  if (!tids) return fprintf(stderr, PROG ": out of memory\n"), 1;
  if (prog.on) pthread_create(&prog_thread, NULL, progress_main, &prog);
  for (uint64_t i = 0; i < threads; i++) pthread_create(&tids[i], NULL, worker, &c);
  for (uint64_t i = 0; i < threads; i++) pthread_join(tids[i], NULL);
  atomic_store(&prog.stop, true);
  if (prog.on) pthread_join(prog_thread, NULL);
  free(tids);
  return 0;
}

/* With every request of one size (or sizes ignored) the byte miss ratio
 * is the miss ratio: the table does not repeat it. */
static bool byte_column(const sim_flags *f, const hs_sim_trace *t) {
  return !f->ignore_size && t->min_size != t->max_size;
}

/* The table's note on a sampled run: the sample against the trace, and
 * how many sizes --sample-floor raised to a higher rate. */
static void print_sample_note(const sim_flags *f, const sim_run *r) {
  const sample_set *ss = &r->samples;
  const hs_sim_trace *base = NULL;
  size_t raised = 0;
  for (size_t k = 0; k < r->nsizes; k++) {
    if (ss->threshold[ss->of_size[k]] == f->threshold)
      base = ss->trace[ss->of_size[k]];
    else
      raised++;
  }
  printf("# sampled (SHARDS) at rate %.4g", hs_shards_rate(f->threshold));
  if (base)
    printf(": %" PRIu64 " of %" PRIu64 " requests, %" PRIu64 " of %" PRIu64 " objects",
           base->requests, r->t->requests, base->objects, r->t->objects);
  printf(", each size simulated at rate x size; misses are estimates, the sample's / rate");
  if (raised)
    printf("; %zu of %zu sizes at higher rates, so that their caches hold %u entries "
           "(--sample-floor)",
           raised, r->nsizes, (unsigned)f->sample_floor);
  printf("\n");
}

/* What comes before the lines: notes and the column names for the table,
 * the header row for CSV, nothing for JSON. Only shard 1 prints it, so
 * that the shards' outputs concatenate into the unsharded one. */
static void print_header(const sim_flags *f, const sim_run *r) {
  const hs_sim_trace *t = r->t;
  bool table = !f->json && !f->csv_out;
  if (f->shard_index != 1) return;
  if (table && f->threshold) print_sample_note(f, r);
  if (table && f->compare_found)
    printf("# the server missed %" PRIu64 " of %" PRIu64 " requests (%.4f%%); agree: missed in "
           "both, sim-only: simulated misses the server found, server-only: server misses the "
           "simulation found\n",
           t->found_misses, t->requests,
           t->requests ? 100.0 * (double)t->found_misses / (double)t->requests : 0.0);
  if (table && !f->cachesim_lines) {
    printf("%-40s %14s %12s %12s %10s", "policy", "size", "requests", "misses", "miss%");
    if (byte_column(f, t)) printf(" %10s", "bytemiss%");
    if (f->compare_found) printf(" %12s %12s %12s", "agree", "sim-only", "server-only");
    printf(" %8s %8s\n", "seconds", "MQPS");
  }
  if (f->csv_out)
    printf("trace,policy,size,size_unit,requests,misses,miss_ratio,byte_misses,byte_miss_ratio,"
           "seconds,mqps%s%s\n",
           f->threshold ? ",sample" : "",
           f->compare_found ? ",server_misses,agree_misses,sim_only_misses,server_only_misses"
                            : "");
}

/* One job's figures, as every output form prints them. */
typedef struct sim_figures {
  double mr, bmr; /* miss ratio, byte miss ratio */
  double rate;    /* the sample's (1 when not sampled) */
  double mqps;
} sim_figures;

static sim_figures figures_of(const job *j) {
  const hs_sim_result *r = &j->res;
  sim_figures fig;
  fig.mr = r->requests ? (double)r->misses / (double)r->requests : 0;
  fig.bmr = r->bytes ? (double)r->byte_misses / (double)r->bytes : 0;
  /* A sampled run's speed is over the requests it simulated. */
  uint64_t simulated = j->threshold ? j->trace->requests : r->requests;
  fig.rate = hs_shards_rate(j->threshold);
  fig.mqps = r->seconds > 0 ? (double)simulated / r->seconds / 1e6 : 0;
  return fig;
}

static const char *size_unit(const sim_flags *f) {
  return f->ignore_size ? "objects" : "bytes";
}

static void print_json_line(const sim_flags *f, const sim_run *run, const job *j, const char *spec,
                            const sim_figures *fig) {
  const hs_sim_result *r = &j->res;
  const hs_sim_trace *t = run->t;
  json_out jo;
  json_begin(&jo, stdout);
  json_str(&jo, "trace", f->trace_path);
  json_str(&jo, "policy", spec);
  json_u64(&jo, "size", j->size);
  json_str(&jo, "size_unit", size_unit(f));
  json_u64(&jo, "requests", r->requests);
  if (t->judge_from) json_u64(&jo, "judged_from", t->judge_from);
  json_u64(&jo, "misses", r->misses);
  json_double(&jo, "miss_ratio", "%.6f", fig->mr);
  json_u64(&jo, "byte_misses", r->byte_misses);
  json_double(&jo, "byte_miss_ratio", "%.6f", fig->bmr);
  json_double(&jo, "seconds", "%.3f", r->seconds);
  json_double(&jo, "load_seconds", "%.3f", run->load_seconds);
  json_str(&jo, "method", j->one_pass ? "stack-distance" : "simulation");
  json_str(&jo, "ring_rule", f->ring_rule ? "pg" : "none");
  if (f->ring_rule) json_u64(&jo, "ring_requests", r->ring_requests);
  if (f->threshold) {
    json_double(&jo, "sample", "%.4g", fig->rate);
    json_u64(&jo, "sampled_requests", j->trace->requests);
    json_u64(&jo, "sampled_size", hs_shards_scale_size(j->size, j->threshold));
  }
  json_double(&jo, "mqps", "%.2f", fig->mqps);
  json_u64(&jo, "objects", t->objects);
  json_u64(&jo, "policy_bytes", r->policy_bytes);
  json_u64(&jo, "peak_ghosts", r->peak_ghosts);
  if (f->compare_found) {
    json_u64(&jo, "server_misses", t->found_misses);
    json_u64(&jo, "agree_misses", j->cmp.agree);
    json_u64(&jo, "sim_only_misses", j->cmp.sim_only);
    json_u64(&jo, "server_only_misses", j->cmp.server_only);
  }
  json_end_line(&jo);
}

static void print_csv_row(const sim_flags *f, const sim_run *run, const job *j, const char *spec,
                          const sim_figures *fig) {
  const hs_sim_result *r = &j->res;
  csv_string(stdout, f->trace_path);
  fputc(',', stdout);
  csv_string(stdout, spec);
  printf(",%" PRIu64 ",%s,%" PRIu64 ",%" PRIu64 ",%.6f,%" PRIu64 ",%.6f,%.3f,%.2f", j->size,
         size_unit(f), r->requests, r->misses, fig->mr, r->byte_misses, fig->bmr, r->seconds,
         fig->mqps);
  if (f->threshold) printf(",%.4g", fig->rate);
  if (f->compare_found)
    printf(",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64, run->t->found_misses, j->cmp.agree,
           j->cmp.sim_only, j->cmp.server_only);
  putchar('\n');
}

/* A line of the table, or with --cachesim-lines cachesim's result line
 * followed by hotset's own figures. */
static void print_table_line(const sim_flags *f, const sim_run *run, const job *j, const char *spec,
                             const sim_figures *fig) {
  const hs_sim_result *r = &j->res;
  /* A size as the table writes it ("1000 objects", "1 MiB"), or as
   * cachesim does ("1000", "1MiB"). Without sizes every object is 1
   * "byte". */
  char sz[40];
  if (f->ignore_size || !run->t->sized)
    snprintf(sz, sizeof sz, "%" PRIu64 "%s", j->size, f->cachesim_lines ? "" : " objects");
  else
    human_size(j->size, sz, sizeof sz);
  char *space = f->cachesim_lines ? strchr(sz, ' ') : NULL;
  if (space) memmove(space, space + 1, strlen(space));
  if (f->cachesim_lines) {
    printf("%s %s cache size %s, %" PRIu64 " req, miss ratio %.4f, byte miss ratio %.4f, "
           "throughput %.2f MQPS, misses %" PRIu64 "\n",
           f->trace_path, spec, sz, r->requests, fig->mr, fig->bmr, fig->mqps, r->misses);
    return;
  }
  printf("%-40s %14s %12" PRIu64 " %12" PRIu64 " %9.4f%%", spec, sz, r->requests, r->misses,
         100 * fig->mr);
  if (byte_column(f, run->t)) printf(" %9.4f%%", 100 * fig->bmr);
  if (f->compare_found)
    printf(" %12" PRIu64 " %12" PRIu64 " %12" PRIu64, j->cmp.agree, j->cmp.sim_only,
           j->cmp.server_only);
  printf(" %8.2f %8.2f\n", r->seconds, fig->mqps);
}

/* The slice's results in the order the pairs were given, a failed job
 * reported on stderr in its place; then the bad records skipped. 0, or 1
 * when a job failed. */
static int print_results(const sim_flags *f, const sim_run *r) {
  int rc = 0;
  print_header(f, r);
  for (size_t i = r->lo; i < r->hi; i++) {
    const job *j = &r->jobs[i];
    if (j->st != HS_OK) {
      fprintf(stderr, PROG ": %s at size %" PRIu64 ": %s\n", j->spec, j->size, j->err);
      rc = 1;
      continue;
    }
    char *spec = canonical(j->spec);
    if (!spec) {
      fprintf(stderr, PROG ": out of memory\n");
      rc = 1;
      break;
    }
    sim_figures fig = figures_of(j);
    if (f->json)
      print_json_line(f, r, j, spec, &fig);
    else if (f->csv_out)
      print_csv_row(f, r, j, spec, &fig);
    else
      print_table_line(f, r, j, spec, &fig);
    free(spec);
  }
  if (r->t->bad_records)
    fprintf(stderr, PROG ": %s: skipped %" PRIu64 " bad records\n", f->trace_path,
            r->t->bad_records);
  return rc;
}

/* --plot: miss ratio against size, every job (a plot is never sharded). */
static int draw_plot(const sim_flags *f, const sim_run *r) {
  sim_point *pts = calloc(r->njobs, sizeof *pts);
  if (!pts) return fprintf(stderr, PROG ": out of memory\n"), 1;
  for (size_t i = 0; i < r->njobs; i++) {
    const job *j = &r->jobs[i];
    pts[i].policy = j->spec;
    pts[i].size = j->size;
    pts[i].miss_ratio = j->res.requests ? (double)j->res.misses / (double)j->res.requests : 0;
  }
  int rc = sim_plot_write(f->plot, f->trace_path, f->ignore_size, pts, r->njobs) != 0;
  free(pts);
  return rc;
}

/* The steps in order, each 0 or 1 after its message; whatever a step
 * stopped at, the one release below frees what was built. */
static int sim_with_args(const args_cmd *cmd, int nargc, char **nargv) {
  sim_flags f;
  sim_run r = {0};
  parse_flags(cmd, nargc, nargv, &f);
  int rc = check_flags(cmd, &f);
  if (rc == 0) rc = load_trace(cmd, &f, &r);
  if (rc == 0) rc = prepare_sims(&f, &r);
  if (rc == 0) rc = build_jobs(&f, &r);
  if (rc == 0) rc = run_sims(&f, &r);
  if (rc == 0) rc = print_results(&f, &r);
  if (rc == 0 && f.plot) rc = draw_plot(&f, &r);
  release_run(&f, &r);
  return rc;
}
