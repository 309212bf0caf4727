/*
 * bench/bench_sqlite.c — `hotset bench sqlite`: SQLite's own page cache
 * against hotset's (libhotset-sqlite, adapters/sqlite) in one process.
 *
 * The question: a SQLite connection whose lookups touch some 150 hot
 * pages, while full scans of a table bigger than the cache run between
 * them. SQLite's cache is an LRU list, so each scan pushes the hot pages
 * out and the next lookups read them again; hotset's cache takes a run of
 * nearby page numbers (or of misses) for a scan and keeps its pages at the
 * victim end. Two workloads (bench_sqlite_work.c), and the family
 * (bench_sqlite_family.c): the lookups in 24 shapes, each against the
 * ceiling of a cache that never evicts:
 *   lookups  rounds of --lookups-between point lookups by key through an
 *            index, each followed by a full scan of the big table. The hit
 *            ratio is SQLite's own count (sqlite3_db_status CACHE_HIT and
 *            CACHE_MISS, reset just before and read just after each batch
 *            of lookups, so the scans' fetches never count), the p99 from
 *            each lookup timed from bind to reset;
 *   mix      a speedtest-style run of bulk inserts, indexed selects,
 *            updates, range scans, a join and deletes: what the cache costs
 *            or saves on ordinary work, per step.
 * Every configuration — SQLite's own cache ("stock"), then hotset's with
 * each --policy, scan detection on and off — runs in this process: SQLite
 * is shut down, hotset installed (or SQLite's cache put back), SQLite
 * initialized again and the database reopened, so all of them read the
 * same file from the same OS page cache and look up the same keys.
 */
#include "bench/bench_sqlite.h"

#include <stdio.h>

#ifndef HOTSET_BENCH_SQLITE

int bench_sqlite_main(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fputs("hotset bench sqlite: this hotset was built without SQLite (it needs libsqlite3-dev, "
        "and HOTSET_SQLITE not turned off)\n",
        stderr);
  return 1;
}

#else

#include "bench/bench_sqlite_internal.h"
#include "common/clock.h"
#include "common/flags.h"
#include "common/interrupt.h"
#include "common/json.h"
#include "common/scratch.h"
#include "hotset/policy.h"
#include "hotset_sqlite.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <unistd.h>

#define DEFAULT_SCAN_RUN 32 /* the adapter's, if the environment turned it off */

static const args_command command = {
    .cmd = {.prog = SQL_PROG},
    .about = "SQLite's own page cache against hotset's (libhotset-sqlite), in one process.\n"
             "lookups: rounds of point lookups by key on a 5,000-row table (about 150 pages\n"
             "with its index), each round followed by a full scan of a 100,000-row table\n"
             "bigger than the cache; the lookups' hit ratio is SQLite's own count. mix: bulk\n"
             "inserts, indexed selects, updates, range scans, a join and deletes, per step.\n"
             "Configurations: stock (SQLite's cache), then hotset with each policy, scan\n"
             "detection on and off (the mix: on). The report ends with the targets checked.\n"
             "family: the lookups in 24 shapes (journal, layout, scan, page size, lookups\n"
             "between, scan size, rows, insert order); per shape stock, the ceiling (a cache\n"
             "that never evicts), hotset's default and each policy; ends with the worst case.\n",
    .notes = "Pages are 4 KiB. The mix runs with synchronous = OFF (no fsyncs), --mix-runs\n"
             "times per configuration, interleaved; its figures are the medians. Beside\n"
             "them: each run's CPU seconds (user, system; the whole run, setup included),\n"
             "and the median over the rounds of a run's total over stock's run in the same\n"
             "round (wall and CPU), which a busy minute of a shared machine disturbs less\n"
             "than a ratio of two medians; every run counts in each. --policy\n"
             "default names the adapter's default policy. The databases (in --dir or a\n"
             "temporary directory) are removed at the end.\n",
};
static const args_cmd *const cmd = &command.cmd;

/* ---- flags ---------------------------------------------------------------- */

static void parse_flags(sql_bench *b, int argc, char **argv) {
  const args_opt opts[] = {
      {.name = "cache",
       .kind = ARGS_UINT,
       .dest = &b->cache_pages,
       .min = 10,
       .max = 1u << 20,
       .def = "500",
       .arg = "N",
       .help = "PRAGMA cache_size, in pages"},
      {.name = "policy",
       .kind = ARGS_STRING,
       .dest = &b->policy_flag,
       .arg = "LIST",
       .def = "arc,clock-sweep,lru,2q,s3fifo",
       .help = "hotset's replacement policies, comma-separated specs (\"default\": the "
               "adapter's)"},
      {.name = "scan-detect",
       .kind = ARGS_STRING,
       .dest = &b->scan_flag,
       .arg = "LIST",
       .def = "on,off",
       .help = "on, off or on,off: hotset's scan detection in the lookups' configurations"},
      {.name = "workload",
       .kind = ARGS_STRING,
       .dest = &b->workload_flag,
       .arg = "LIST",
       .def = "lookups,mix",
       .help = "lookups, mix, family, or a comma-separated list of them"},
      {.name = "shape",
       .kind = ARGS_STRING,
       .dest = &b->shape_flag,
       .arg = "LIST",
       .def = "all",
       .help = "the family's shapes to run: all, or their numbers (0-23), comma-separated"},
      {.name = "family-seed",
       .kind = ARGS_UINT,
       .dest = &b->family_seed,
       .def = "1",
       .help = "draws the family's page sizes, lookups between, scales, rows and orders"},
      {.name = "family-rounds",
       .kind = ARGS_UINT,
       .dest = &b->family_rounds,
       .min = 1,
       .max = 1000000,
       .def = "12",
       .help = "measured rounds of lookups and a scan per shape and configuration"},
      {.name = "lookups-between",
       .kind = ARGS_UINT,
       .dest = &b->lookups_between,
       .min = 1,
       .max = 100000000,
       .def = "100",
       .arg = "N",
       .help = "point lookups between two scans"},
      {.name = "rounds",
       .kind = ARGS_UINT,
       .dest = &b->rounds,
       .min = 1,
       .max = 1000000,
       .def = "200",
       .help = "measured rounds of lookups and a scan, after every key looked up once and a scan"},
      {.name = "mix-runs",
       .kind = ARGS_UINT,
       .dest = &b->mix_runs,
       .min = 1,
       .max = 99,
       .def = "3",
       .help = "runs of the mix per configuration (medians reported)"},
      {.name = "seed", .kind = ARGS_UINT, .dest = &b->seed, .def = "1", .help = "random seed"},
      BENCH_OPT_DIR(&b->dir_flag),
      {.name = "json",
       .kind = ARGS_FLAG,
       .dest = &b->json,
       .help = "one JSON object per line per configuration and workload"},
  };
  args_parse(cmd, opts, sizeof opts / sizeof opts[0], argc, argv, 0);
}

/* Splits a two-word list flag ("on,off", "lookups,mix"): which words it
 * named; anything else is a usage error. */
static void parse_pair(const char *flag, const char *value, const char *w0, const char *w1,
                       bool *got0, bool *got1) {
  const char *const names[2] = {w0, w1};
  int got[2];
  int n = args_choice_list(cmd, flag, value, names, 2, got);
  for (int i = 0; i < n; i++) *(got[i] == 0 ? got0 : got1) = true;
}

/* Every spec must make a policy the cache can run, checked here rather
 * than after the database is built. */
static void check_policies(sql_bench *b) {
  const char *why = NULL;
  /* "default" (the adapter's policy) is no policy name: it is taken out
   * before the others are checked, and goes first. */
  char *rest = malloc(strlen(b->policy_flag) + 1);
  if (!rest) args_usage_error(cmd, "--policy: out of memory");
  rest[0] = 0;
  bool with_default = false;
  char *copy = strdup(b->policy_flag), *save = NULL;
  if (!copy) args_usage_error(cmd, "--policy: out of memory");
  for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    if (strcmp(t, "default") == 0) {
      with_default = true;
      continue;
    }
    if (rest[0]) strcat(rest, ",");
    strcat(rest, t);
  }
  free(copy);
  int first = with_default ? 1 : 0;
  if (with_default) snprintf(b->specs[0], sizeof b->specs[0], "default");
  b->npolicies =
      rest[0] ? args_split_policies(rest, true, b->specs + first, ARGS_LIST_MAX - first, &why) : 0;
  free(rest);
  if (b->npolicies < 0 || (b->npolicies == 0 && !with_default))
    args_usage_error(cmd, "--policy: \"%s\": %s", b->policy_flag, why ? why : "no policy given");
  b->npolicies += first;
  for (int i = 0; i < b->npolicies; i++) {
    if (strcmp(b->specs[i], "default") == 0) continue;
    hs_policy *p;
    if (hs_policy_create(b->specs[i], 64, 64, NULL, &p) != HS_OK)
      args_usage_error(cmd, "--policy: \"%s\": %s", b->specs[i], hs_last_error());
    bool sim_only = hs_policy_flags(p) & HS_POLICY_SIM_ONLY;
    hs_policy_destroy(p);
    if (sim_only) args_usage_error(cmd, "--policy: \"%s\" only runs in the simulator", b->specs[i]);
  }
}

static void parse_workloads(sql_bench *b) {
  char buf[64];
  if (strlen(b->workload_flag) >= sizeof buf)
    args_usage_error(cmd, "--workload: \"%s\" is not a list of lookups, mix, family",
                     b->workload_flag);
  strcpy(buf, b->workload_flag);
  char *save = NULL;
  for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    if (strcmp(t, "lookups") == 0)
      b->do_lookups = true;
    else if (strcmp(t, "mix") == 0)
      b->do_mix = true;
    else if (strcmp(t, "family") == 0)
      b->do_family = true;
    else
      args_usage_error(cmd, "--workload: \"%s\" is not lookups, mix or family", t);
  }
  if (!b->do_lookups && !b->do_mix && !b->do_family)
    args_usage_error(cmd, "--workload: missing value");
}

static void parse_shapes(sql_bench *b) {
  if (strcmp(b->shape_flag, "all") == 0) {
    for (int i = 0; i < FAMILY_SHAPES; i++) b->shape_on[i] = true;
    return;
  }
  const char *p = b->shape_flag;
  while (*p) {
    char *end;
    unsigned long v = strtoul(p, &end, 10);
    if (end == p || v >= FAMILY_SHAPES || (*end && *end != ','))
      args_usage_error(cmd, "--shape: \"%s\" is not all or numbers 0-%d, comma-separated",
                       b->shape_flag, FAMILY_SHAPES - 1);
    b->shape_on[v] = true;
    p = *end ? end + 1 : end;
  }
}

static void check_flags(sql_bench *b) {
  check_policies(b);
  parse_pair("scan-detect", b->scan_flag, "on", "off", &b->detect_on, &b->detect_off);
  parse_workloads(b);
  parse_shapes(b);
}

/* ---- switching caches ------------------------------------------------------ */

static bool hotset_installed;

/* Shuts SQLite down, installs the configuration's cache, starts SQLite
 * again. 0, or 1 after saying why. */
int sql_use_cache(sql_config *c) {
  int rc = sqlite3_shutdown();
  if (rc != SQLITE_OK) return sql_fail(NULL, rc, "sqlite3_shutdown");
  if (hotset_installed) {
    rc = hotset_sqlite_uninstall();
    if (rc != SQLITE_OK) return sql_fail(NULL, rc, "putting SQLite's own page cache back");
    hotset_installed = false;
  }
  if (c->hotset) {
    hotset_sqlite_options o;
    hotset_sqlite_options_init(&o);
    o.policy = c->policy;
    if (!c->scan_detect)
      o.scan_run = 0;
    else if (o.scan_run == 0)
      o.scan_run = DEFAULT_SCAN_RUN;
    o.stats_at_exit = false;
    c->scan_run = o.scan_run;
    rc = hotset_sqlite_install_ex(&o);
    if (rc != SQLITE_OK) return sql_fail(NULL, rc, "installing hotset as SQLite's page cache");
    hotset_installed = true;
  }
  rc = sqlite3_initialize();
  return rc == SQLITE_OK ? 0 : sql_fail(NULL, rc, "sqlite3_initialize");
}

static const char *policy_label(const sql_config *c) {
  return !c->hotset ? "-" : c->policy ? c->policy : "default";
}

/* Starts a JSON line with what every row has: the workload and the
 * configuration (policy and scan_detect null for SQLite's own cache). */
static void json_config_fields(json_out *j, const char *workload, const sql_bench *b,
                               const sql_config *c) {
  json_begin(j, stdout);
  json_str(j, "workload", workload);
  json_str(j, "cache", c->hotset ? "hotset" : "stock");
  json_str(j, "policy", c->hotset ? policy_label(c) : NULL);
  if (c->hotset)
    json_bool(j, "scan_detect", c->scan_detect);
  else
    json_str(j, "scan_detect", NULL);
  json_u64(j, "cache_pages", b->cache_pages);
}

/* ---- the lookups workload ---------------------------------------------------- */

typedef struct lookup_row {
  sql_config c;
  lookup_result r;
} lookup_row;

static int measure_lookups(sql_bench *b, lookup_row *row) {
  memset(&row->r, 0, sizeof row->r);
  if (sql_use_cache(&row->c) != 0) return 1;
  if (row->c.hotset) hotset_sqlite_stats_reset();
  uint64_t t0 = bench_now_ns();
  sqlite3 *db;
  if (sql_open(b, b->db_path, &db) != 0) return 1;
  int rc = sql_run_lookups(b, db, &row->r);
  sqlite3_close(db);
  row->r.total_seconds = (double)(bench_now_ns() - t0) / 1e9;
  if (row->c.hotset) {
    hotset_sqlite_stats s;
    hotset_sqlite_stats_get(&s);
    row->r.scan_fetches = s.scan_fetches;
  }
  return rc;
}

static void print_lookup_json(const sql_bench *b, const lookup_row *row) {
  json_out j;
  json_config_fields(&j, "lookups", b, &row->c);
  json_u64(&j, "lookups_between", b->lookups_between);
  json_u64(&j, "rounds", b->rounds);
  json_u64(&j, "hot_pages", b->hot_pages);
  json_u64(&j, "big_pages", b->big_pages);
  json_u64(&j, "lookups", row->r.lookups);
  json_u64(&j, "cache_hits", row->r.hits);
  json_u64(&j, "cache_misses", row->r.misses);
  json_double(&j, "lookup_hit_ratio", "%.4f", row->r.hit_ratio);
  json_double(&j, "lookups_per_sec", "%.0f", row->r.lookups_per_sec);
  json_double(&j, "lookup_p99_us", "%.2f", row->r.p99_us);
  json_double(&j, "scan_seconds", "%.4f", row->r.scan_seconds);
  json_double(&j, "total_seconds", "%.4f", row->r.total_seconds);
  if (row->c.hotset) {
    json_u64(&j, "scan_run", row->c.scan_run);
    json_u64(&j, "scan_fetches", row->r.scan_fetches);
  }
  json_end_line(&j);
}

static void print_lookup_row(const lookup_row *row) {
  const char *scan = !row->c.hotset ? "-" : row->c.scan_detect ? "on" : "off";
  printf("  %-7s %-14s %-5s %9.4f %11.0f %9.1f %9.3f %9.3f\n", row->c.hotset ? "hotset" : "stock",
         policy_label(&row->c), scan, row->r.hit_ratio, row->r.lookups_per_sec, row->r.p99_us,
         row->r.scan_seconds, row->r.total_seconds);
}

/* The configurations: stock, then each policy with detection on, off. */
static int lookup_configs(const sql_bench *b, lookup_row *rows) {
  int n = 0;
  rows[n++].c = (sql_config){.hotset = false};
  for (int p = 0; p < b->npolicies; p++) {
    const char *spec = strcmp(b->specs[p], "default") == 0 ? NULL : b->specs[p];
    if (b->detect_on)
      rows[n++].c = (sql_config){.hotset = true, .policy = spec, .scan_detect = true};
    if (b->detect_off) rows[n++].c = (sql_config){.hotset = true, .policy = spec};
  }
  return n;
}

static int run_lookups(sql_bench *b, lookup_row *rows, int n) {
  if (sql_build_lookups_db(b) != 0) return 1;
  if (!b->json) {
    printf("lookups: %" PRIu64 " between full scans, %" PRIu64 " rounds; cache %" PRIu64
           " pages of 4 KiB; hot table and index %" PRIu64 " pages, scanned table %" PRIu64
           " pages\n",
           b->lookups_between, b->rounds, b->cache_pages, b->hot_pages, b->big_pages);
    printf("  %-7s %-14s %-5s %9s %11s %9s %9s %9s\n", "cache", "policy", "scan", "hit ratio",
           "lookups/s", "p99 us", "scans s", "total s");
  }
  for (int i = 0; i < n; i++) {
    if (measure_lookups(b, &rows[i]) != 0) return 1;
    if (b->json)
      print_lookup_json(b, &rows[i]);
    else
      print_lookup_row(&rows[i]);
  }
  return 0;
}

/* ---- the mix --------------------------------------------------------------------- */

/* A run's figures: its steps' wall seconds, their total, then the CPU
 * seconds the run took (user, system: the process's, whose one thread
 * runs the mix). */
#define MIX_TOTAL        MIX_STEPS
#define MIX_USER         (MIX_STEPS + 1)
#define MIX_SYS          (MIX_STEPS + 2)
#define MIX_COLS         (MIX_STEPS + 3)

typedef struct mix_row {
  sql_config c;
  mix_result r;
  double *runs;          /* mix_runs × MIX_COLS */
  double user_s, sys_s;  /* medians of the runs' CPU seconds */
  double pair, pair_cpu; /* medians over the rounds of this run's total
                            (wall, CPU) over stock's in the same round */
} mix_row;

static double timeval_seconds(const struct timeval *t) {
  return (double)t->tv_sec + (double)t->tv_usec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, uint64_t n) {
  qsort(v, n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Medians per step and of the totals, each on its own. */
static void mix_medians(const sql_bench *b, mix_row *row) {
  double v[99];
  for (int s = 0; s <= MIX_STEPS; s++) {
    for (uint64_t k = 0; k < b->mix_runs; k++) v[k] = row->runs[k * MIX_COLS + s];
    double m = median(v, b->mix_runs);
    if (s < MIX_STEPS)
      row->r.step_seconds[s] = m;
    else
      row->r.total_seconds = m;
  }
  for (uint64_t k = 0; k < b->mix_runs; k++) v[k] = row->runs[k * MIX_COLS + MIX_USER];
  row->user_s = median(v, b->mix_runs);
  for (uint64_t k = 0; k < b->mix_runs; k++) v[k] = row->runs[k * MIX_COLS + MIX_SYS];
  row->sys_s = median(v, b->mix_runs);
}

/* Each round runs every configuration once, one after another: a run's
 * ratio to stock's run of the same round sees the same minute of a shared
 * machine, which a ratio of medians taken apart does not. */
static void mix_pairs(const sql_bench *b, mix_row *row, const mix_row *stock) {
  double v[99], w[99];
  for (uint64_t k = 0; k < b->mix_runs; k++) {
    const double *r = &row->runs[k * MIX_COLS], *s = &stock->runs[k * MIX_COLS];
    v[k] = s[MIX_TOTAL] > 0 ? r[MIX_TOTAL] / s[MIX_TOTAL] : 0;
    double cpu = s[MIX_USER] + s[MIX_SYS];
    w[k] = cpu > 0 ? (r[MIX_USER] + r[MIX_SYS]) / cpu : 0;
  }
  row->pair = median(v, b->mix_runs);
  row->pair_cpu = median(w, b->mix_runs);
}

static double mix_hit_ratio(const mix_result *r) {
  uint64_t fetches = r->hits + r->misses;
  return fetches ? (double)r->hits / (double)fetches : 0;
}

static void print_mix_json(const sql_bench *b, const mix_row *row) {
  json_out j;
  json_config_fields(&j, "mix", b, &row->c);
  json_u64(&j, "runs", b->mix_runs);
  for (int s = 0; s < MIX_STEPS; s++) {
    char key[32];
    snprintf(key, sizeof key, "%s_seconds", mix_step_names[s]);
    json_double(&j, key, "%.4f", row->r.step_seconds[s]);
  }
  json_double(&j, "total_seconds", "%.4f", row->r.total_seconds);
  json_u64(&j, "cache_hits", row->r.hits);
  json_u64(&j, "cache_misses", row->r.misses);
  json_double(&j, "hit_ratio", "%.4f", mix_hit_ratio(&row->r));
  json_double(&j, "user_seconds", "%.4f", row->user_s);
  json_double(&j, "system_seconds", "%.4f", row->sys_s);
  json_double(&j, "paired_ratio", "%.4f", row->pair);
  json_double(&j, "paired_cpu_ratio", "%.4f", row->pair_cpu);
  json_end_line(&j);
}

static void print_mix_row(const mix_row *row, double stock_total) {
  printf("  %-7s %-14s", row->c.hotset ? "hotset" : "stock", policy_label(&row->c));
  for (int s = 0; s < MIX_STEPS; s++) printf(" %7.3f", row->r.step_seconds[s]);
  printf(" %7.3f %7.3f %9.4f\n", row->r.total_seconds,
         stock_total > 0 ? row->r.total_seconds / stock_total : 0, mix_hit_ratio(&row->r));
}

static void print_mix_cpu_row(const mix_row *row) {
  printf("  %-7s %-14s %7.3f %7.3f %10.3f %10.3f\n", row->c.hotset ? "hotset" : "stock",
         policy_label(&row->c), row->user_s, row->sys_s, row->pair, row->pair_cpu);
}

/* Runs are interleaved, each round starting one configuration further
 * on, so that a slow minute of a shared machine falls on all of them. */
static int run_mix(sql_bench *b, mix_row *rows, int n) {
  for (uint64_t k = 0; k < b->mix_runs; k++) {
    for (int i0 = 0; i0 < n; i0++) {
      mix_row *row = &rows[(i0 + (int)k) % n];
      if (bench_interrupted()) return 1;
      if (sql_use_cache(&row->c) != 0) return 1;
      double *run = &row->runs[k * MIX_COLS];
      struct rusage before, after;
      getrusage(RUSAGE_SELF, &before);
      if (sql_run_mix(b, run, &row->r.hits, &row->r.misses) != 0) return 1;
      getrusage(RUSAGE_SELF, &after);
      run[MIX_TOTAL] = 0;
      for (int s = 0; s < MIX_STEPS; s++) run[MIX_TOTAL] += run[s];
      run[MIX_USER] = timeval_seconds(&after.ru_utime) - timeval_seconds(&before.ru_utime);
      run[MIX_SYS] = timeval_seconds(&after.ru_stime) - timeval_seconds(&before.ru_stime);
    }
  }
  for (int i = 0; i < n; i++) mix_medians(b, &rows[i]);
  for (int i = 0; i < n; i++) mix_pairs(b, &rows[i], &rows[0]);
  if (!b->json) {
    printf("\nmix: %" PRIu64 " runs per configuration (medians, seconds); cache %" PRIu64
           " pages\n  %-7s %-14s",
           b->mix_runs, b->cache_pages, "cache", "policy");
    for (int s = 0; s < MIX_STEPS; s++) printf(" %7s", mix_step_names[s]);
    printf(" %7s %7s %9s\n", "total", "/stock", "hit ratio");
  }
  for (int i = 0; i < n; i++) {
    if (b->json)
      print_mix_json(b, &rows[i]);
    else
      print_mix_row(&rows[i], rows[0].r.total_seconds);
  }
  if (!b->json) {
    printf("\nmix, steadier: CPU seconds of a whole run (medians; user, system), and the median\n"
           "over the rounds of each run's total over stock's in the same round (wall, CPU)\n"
           "  %-7s %-14s %7s %7s %10s %10s\n",
           "cache", "policy", "user", "system", "paired", "paired cpu");
    for (int i = 0; i < n; i++) print_mix_cpu_row(&rows[i]);
  }
  return 0;
}

/* ---- the targets ----------------------------------------------------------------- */

/* The mix row of a lookups configuration's policy, or NULL. */
static const mix_row *mix_of(const sql_config *c, const mix_row *mrows, int nm) {
  for (int i = 1; i < nm; i++)
    if (strcmp(policy_label(&mrows[i].c), policy_label(c)) == 0) return &mrows[i];
  return NULL;
}

/* The best hotset configuration, the one to ship as the default: among
 * those with scan detection on (the shipped setting; all of them when none
 * has it), the ones within 0.0005 of the highest lookup hit ratio, and of
 * these the fastest on the mix — or, without a mix, the lowest p99. */
#define HIT_RATIO_TIE    0.0005
static const lookup_row *best_lookup(const lookup_row *rows, int n, const mix_row *mrows, int nm) {
  bool any_on = false;
  for (int i = 1; i < n; i++) any_on |= rows[i].c.scan_detect;
  double top = -1;
  for (int i = 1; i < n; i++)
    if (rows[i].c.scan_detect == any_on && rows[i].r.hit_ratio > top) top = rows[i].r.hit_ratio;
  const lookup_row *best = NULL;
  double best_cost = 0;
  for (int i = 1; i < n; i++) {
    const lookup_row *r = &rows[i];
    if (r->c.scan_detect != any_on || r->r.hit_ratio < top - HIT_RATIO_TIE) continue;
    const mix_row *m = mix_of(&r->c, mrows, nm);
    double cost = m ? m->r.total_seconds : r->r.p99_us;
    if (!best || cost < best_cost) {
      best = r;
      best_cost = cost;
    }
  }
  return best;
}

static void print_targets(const sql_bench *b, const lookup_row *lrows, int nl, const mix_row *mrows,
                          int nm) {
  printf("\ntargets:\n");
  const lookup_row *best = b->do_lookups ? best_lookup(lrows, nl, mrows, nm) : NULL;
  if (best) {
    const lookup_result *s = &lrows[0].r, *h = &best->r;
    printf("  best hotset configuration (top lookup hit ratio, then %s): %s, scan detection "
           "%s\n",
           nm > 1 ? "the fastest mix" : "the lowest p99", policy_label(&best->c),
           best->c.scan_detect ? "on" : "off");
    const char *verdict = s->hit_ratio >= 0.90   ? "does not apply (stock is at 0.90 or more)"
                          : h->hit_ratio >= 0.99 ? "met"
                                                 : "missed";
    printf("  lookup hit ratio >= 0.99 where stock < 0.90: %.4f against stock %.4f: %s\n",
           h->hit_ratio, s->hit_ratio, verdict);
    printf("  lookup p99 no worse than stock: %.1f us against %.1f us: %s\n", h->p99_us, s->p99_us,
           h->p99_us <= s->p99_us ? "met" : "missed");
  }
  if (nm > 1) {
    /* The mix row of the best lookups policy, or the first hotset one. */
    const mix_row *m = best ? mix_of(&best->c, mrows, nm) : NULL;
    if (!m) m = &mrows[1];
    double ratio = m->r.total_seconds / mrows[0].r.total_seconds;
    printf("  mix total <= 1.05 x stock (%s): %.3f s against %.3f s = %.3f x: %s"
           " (paired %.3f x, CPU %.3f x)\n",
           policy_label(&m->c), m->r.total_seconds, mrows[0].r.total_seconds, ratio,
           ratio <= 1.05 ? "met" : "missed", m->pair, m->pair_cpu);
  }
}

/* ---- the run -------------------------------------------------------------------- */

static int run_all(sql_bench *b, lookup_row *lrows, int nl, mix_row *mrows, int nm) {
  if (b->do_lookups && run_lookups(b, lrows, nl) != 0) return 1;
  if (b->do_mix && run_mix(b, mrows, nm) != 0) return 1;
  if (b->do_family && sql_run_family(b) != 0) return 1;
  if (!b->json && (b->do_lookups || b->do_mix))
    print_targets(b, lrows, b->do_lookups ? nl : 0, mrows, b->do_mix ? nm : 0);
  /* Leave SQLite as it was found: its own cache. */
  sql_config stock = {.hotset = false};
  return sql_use_cache(&stock);
}

static int bench_sqlite_run(sql_bench *b) {
  int maxconf = 1 + 2 * b->npolicies;
  lookup_row *lrows = calloc((size_t)maxconf, sizeof *lrows);
  mix_row *mrows = calloc((size_t)maxconf, sizeof *mrows);
  double *runs = calloc((size_t)maxconf * b->mix_runs * MIX_COLS, sizeof *runs);
  int rc = 1;
  if (!lrows || !mrows || !runs) {
    fprintf(stderr, SQL_PROG ": out of memory\n");
    goto out;
  }
  int nl = lookup_configs(b, lrows);
  /* The mix: stock, then each policy with the detection of the lookups'
   * first configuration. */
  int nm = 0;
  mrows[nm++].c = (sql_config){.hotset = false};
  for (int p = 0; p < b->npolicies; p++)
    mrows[nm++].c = (sql_config){.hotset = true,
                                 .policy = strcmp(b->specs[p], "default") ? b->specs[p] : NULL,
                                 .scan_detect = b->detect_on};
  for (int i = 0; i < nm; i++) mrows[i].runs = &runs[(size_t)i * b->mix_runs * MIX_COLS];

  bench_signals_install();
  if (bench_base_dir(b->dir_flag, "bench-sqlite", b->tmpdir, sizeof b->tmpdir, &b->dir) != HS_OK) {
    fprintf(stderr, SQL_PROG ": making its directory: %s\n", hs_last_error());
    goto out;
  }
  snprintf(b->db_path, sizeof b->db_path, "%s/lookups.db", b->dir);
  snprintf(b->mix_path, sizeof b->mix_path, "%s/mix.db", b->dir);
  rc = run_all(b, lrows, nl, mrows, nm);
  unlink(b->db_path);
  if (!b->dir_flag) bench_tempdir_remove(b->tmpdir);
  if (bench_interrupted()) bench_exit_interrupted(SQL_PROG);
out:
  free(lrows);
  free(mrows);
  free(runs);
  return rc;
}

int bench_sqlite_main(int argc, char **argv) {
  sql_bench *b = calloc(1, sizeof *b);
  if (!b) {
    fprintf(stderr, SQL_PROG ": out of memory\n");
    return 1;
  }
  parse_flags(b, argc, argv);
  check_flags(b);
  int rc = bench_sqlite_run(b);
  free(b);
  return rc;
}

#endif
