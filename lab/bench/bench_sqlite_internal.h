/*
 * bench/bench_sqlite_internal.h — what the parts of `hotset bench sqlite`
 * share: the run's settings, a configuration (SQLite's own page cache or
 * hotset's with a policy and scan detection on or off) and what each
 * workload measured in it.
 *
 * bench_sqlite.c holds the flags, the switching between caches, the run
 * and the report; bench_sqlite_work.c the databases and the two workloads
 * (SQL only: they never know which cache serves them).
 */
#ifndef HOTSET_BENCH_SQLITE_INTERNAL_H
#define HOTSET_BENCH_SQLITE_INTERNAL_H

#include "bench/latency_hist.h"
#include "common/args.h"

#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>

#define SQL_PROG "hotset bench sqlite"

/* The lookups workload's tables: `hot` is read by key through its index,
 * `big` (no index) is scanned whole between the batches of lookups. The
 * row sizes give some 150 pages of 4 KiB for hot and its index (the
 * issue's shape) and about 980 for big, twice the default cache. */
#define HOT_ROWS 5000
#define HOT_PAD  95 /* bytes of text per hot row */
#define BIG_ROWS 100000
#define BIG_PAD  28

/* The mix's steps, in the order they run. */
enum { MIX_INSERT, MIX_SELECT, MIX_UPDATE, MIX_RANGE, MIX_JOIN, MIX_DELETE, MIX_STEPS };
extern const char *const mix_step_names[MIX_STEPS];

/* One cache configuration. */
typedef struct sql_config {
  bool hotset;        /* false: SQLite's own page cache */
  const char *policy; /* hotset's policy spec; NULL: the adapter's default */
  bool scan_detect;
  uint32_t scan_run; /* what the adapter was given (0 with detection off) */
} sql_config;

typedef struct lookup_result {
  double hit_ratio; /* SQLite's own cache hits / (hits + misses), lookups only */
  uint64_t hits, misses, lookups;
  uint64_t lookup_ns;     /* time spent in the measured lookups */
  double lookups_per_sec; /* lookups over the time spent in them */
  double p99_us;
  double scan_seconds;   /* every round's scan, added up */
  double total_seconds;  /* the configuration whole: open, warm-up, rounds */
  uint64_t scan_fetches; /* hotset only: fetches it took for a scan */
} lookup_result;

typedef struct mix_result {
  double step_seconds[MIX_STEPS]; /* medians over --mix-runs */
  double total_seconds;           /* median of the runs' totals */
  uint64_t hits, misses;          /* SQLite's cache, every run's steps */
} mix_result;

/* One shape of the family workload (bench_sqlite_family.c). */
typedef struct sql_shape {
  int index;
  int journal, layout, scan; /* indices into the names below */
  uint32_t page, between, scale;
  bool wide, shuffled;
} sql_shape;

#define FAMILY_SHAPES 24

typedef struct sql_bench {
  /* flags */
  uint64_t cache_pages, lookups_between, rounds, seed, mix_runs;
  uint64_t family_seed, family_rounds;
  const char *policy_flag, *scan_flag, *workload_flag, *dir_flag, *shape_flag;
  bool json;
  /* parsed */
  char specs[ARGS_LIST_MAX][ARGS_SPEC_LEN];
  int npolicies;
  bool detect_on, detect_off;
  bool do_lookups, do_mix, do_family;
  bool shape_on[FAMILY_SHAPES];
  /* the run */
  const char *dir;
  char tmpdir[4096];
  char db_path[4200], mix_path[4200];
  uint64_t hot_pages, big_pages; /* of the lookups database */
} sql_bench;

/* Prints "hotset bench sqlite: <what>: <SQLite's message>" (db may be
 * NULL: then `rc`'s text) and returns 1. */
int sql_fail(sqlite3 *db, int rc, const char *what);
/* The connection's page cache hits and misses since the last call (SQLite's
 * own counts), added to *hits and *misses when they are not NULL; the
 * counts start again from zero. */
void sql_take_cache_counts(sqlite3 *db, uint64_t *hits, uint64_t *misses);

/* Builds the lookups database at b->db_path (any file there is replaced)
 * and sets b->hot_pages, b->big_pages. 0, or 1 after saying why. */
int sql_build_lookups_db(sql_bench *b);
/* The lookups workload on an open connection to it: a warm-up (every key once, a scan), then
 * b->rounds of (lookups, scan). Fills every field of *r but total_seconds
 * and scan_fetches. 0, or 1 after saying why. */
int sql_run_lookups(const sql_bench *b, sqlite3 *db, lookup_result *r);
/* One run of the mix on a fresh database at b->mix_path, removed after:
 * seconds per step; SQLite's cache hits and misses over the steps are
 * added to *hits, *misses. 0, or 1 after saying why. */
int sql_run_mix(const sql_bench *b, double step_seconds[MIX_STEPS], uint64_t *hits,
                uint64_t *misses);
/* The family workload: every shape --shape names, each with stock, the
 * ceiling, hotset's default and every --policy. 0, or 1 after saying why. */
int sql_run_family(sql_bench *b);
/* The family's shapes for a seed: FAMILY_SHAPES of them. */
void sql_family_shapes(uint64_t seed, sql_shape shapes[FAMILY_SHAPES]);
/* Shuts SQLite down, installs the configuration's cache, starts SQLite
 * again (bench_sqlite.c). 0, or 1 after saying why. */
int sql_use_cache(sql_config *c);

/* Opens `path` with the cache size of the run. */
int sql_open(const sql_bench *b, const char *path, sqlite3 **db);
/* Runs SQL that returns no rows (several statements allowed). */
int sql_exec(sqlite3 *db, const char *sql);

#endif
