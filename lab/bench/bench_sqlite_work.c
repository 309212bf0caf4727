/*
 * bench/bench_sqlite_work.c — the databases and the two workloads of
 * `hotset bench sqlite` (bench_sqlite_internal.h): point lookups by key
 * beside full scans of a table larger than the cache, and a speedtest-style
 * mix of inserts, indexed selects, updates, range scans, a join and
 * deletes. Only SQL: whichever page cache SQLite was started with serves
 * them, and the lookups' hit ratio is SQLite's own count.
 */
#include "bench/bench_sqlite_internal.h"
#include "common/clock.h"
#include "common/interrupt.h"
#include "common/rng.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *const mix_step_names[MIX_STEPS] = {"insert", "select", "update",
                                               "range",  "join",   "delete"};

/* The mix's sizes: t1 and its index take some 2,500 pages, five times
 * the default cache, so its selects, updates and deletes miss often and
 * the cache's choices show; one run takes about a second. */
#define T1_ROWS      100000
#define T2_ROWS      20000
#define T1_PAD       60
#define MIX_SELECTS  20000
#define MIX_UPDATES  20000
#define MIX_RANGES   2000
#define RANGE_WIDTH  100
#define MIX_JOINS    2
#define MIX_DELETES  1000
#define DELETE_WIDTH 20
/* 7919 is prime and divides neither 5,000 nor 100,000: i * 7919 mod n
 * visits every key once, in an order unrelated to the rowids. */
#define SCRAMBLE 7919u

int sql_fail(sqlite3 *db, int rc, const char *what) {
  fprintf(stderr, SQL_PROG ": %s: %s\n", what, db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
  return 1;
}

int sql_exec(sqlite3 *db, const char *sql) {
  char *msg = NULL;
  int rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
  if (rc != SQLITE_OK) {
    fprintf(stderr, SQL_PROG ": %s: %s\n", sql, msg ? msg : sqlite3_errstr(rc));
    sqlite3_free(msg);
    return 1;
  }
  return 0;
}

int sql_open(const sql_bench *b, const char *path, sqlite3 **db) {
  int rc = sqlite3_open_v2(path, db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
  if (rc != SQLITE_OK) {
    int r = sql_fail(*db, rc, path);
    sqlite3_close(*db);
    *db = NULL;
    return r;
  }
  char sql[96];
  snprintf(sql, sizeof sql, "PRAGMA page_size = 4096; PRAGMA cache_size = %llu",
           (unsigned long long)b->cache_pages);
  if (sql_exec(*db, sql) != 0) {
    sqlite3_close(*db);
    *db = NULL;
    return 1;
  }
  return 0;
}

static int prepare(sqlite3 *db, const char *sql, sqlite3_stmt **st) {
  int rc = sqlite3_prepare_v2(db, sql, -1, st, NULL);
  return rc == SQLITE_OK ? 0 : sql_fail(db, rc, sql);
}

/* Steps `st` to its end (rows read and dropped), then resets it. */
static int step_all(sqlite3 *db, sqlite3_stmt *st, const char *what) {
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
  }
  sqlite3_reset(st);
  return rc == SQLITE_DONE ? 0 : sql_fail(db, rc, what);
}

/* Deterministic filler text from the run's generator: eight letters per
 * number drawn (a number per letter was 2 % of the mix's profile). */
static void fill_text(bench_rng *rng, char *buf, size_t n) {
  uint64_t bits = 0;
  for (size_t i = 0; i < n; i++) {
    if (i % 8 == 0) bits = bench_rng_next(rng);
    buf[i] = (char)('a' + (bits & 0xff) % 26);
    bits >>= 8;
  }
  buf[n] = '\0';
}

static int64_t page_count(sqlite3 *db) {
  sqlite3_stmt *st;
  if (prepare(db, "PRAGMA page_count", &st) != 0) return -1;
  int64_t n = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
  sqlite3_finalize(st);
  if (n < 0) sql_fail(db, SQLITE_ERROR, "PRAGMA page_count");
  return n;
}

static void remove_db(const char *path) {
  char journal[4300];
  unlink(path);
  snprintf(journal, sizeof journal, "%s-journal", path);
  unlink(journal);
}

/* ---- the lookups database --------------------------------------------------- */

static int hot_key(uint32_t i) {
  return (int)((i * SCRAMBLE) % HOT_ROWS) * 10 + 3;
}

static int hot_second(uint32_t i, bench_rng *rng) {
  (void)rng;
  return hot_key(i);
}

static int big_second(uint32_t i, bench_rng *rng) {
  (void)i;
  return (int)bench_rng_below(rng, 1000);
}

/* Rows 1 .. n of `table`(id, an integer, text): the integer from second(),
 * pad_len letters of text. */
static int insert_rows(sqlite3 *db, const char *table, uint32_t n, uint32_t pad_len, bench_rng *rng,
                       int (*second)(uint32_t i, bench_rng *rng)) {
  char sql[96], pad[HOT_PAD + BIG_PAD + 1];
  snprintf(sql, sizeof sql, "INSERT INTO %s VALUES (?, ?, ?)", table);
  sqlite3_stmt *ins;
  if (prepare(db, sql, &ins) != 0) return 1;
  int rc = 0;
  for (uint32_t i = 0; rc == 0 && i < n; i++) {
    fill_text(rng, pad, pad_len);
    sqlite3_bind_int(ins, 1, (int)i + 1);
    sqlite3_bind_int(ins, 2, second(i, rng));
    sqlite3_bind_text(ins, 3, pad, (int)pad_len, SQLITE_STATIC);
    rc = step_all(db, ins, sql);
  }
  sqlite3_finalize(ins);
  return rc;
}

static int fill_lookups_db(sql_bench *b, sqlite3 *db) {
  bench_rng rng;
  bench_rng_seed(&rng, b->seed, 1);
  if (sql_exec(db,
               "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; BEGIN;"
               "CREATE TABLE hot(id INTEGER PRIMARY KEY, k INTEGER NOT NULL, pad TEXT NOT NULL)") ||
      insert_rows(db, "hot", HOT_ROWS, HOT_PAD, &rng, hot_second) ||
      sql_exec(db, "CREATE INDEX hot_k ON hot(k)"))
    return 1;
  int64_t after_hot = page_count(db);
  if (after_hot < 0) return 1;
  if (sql_exec(db,
               "CREATE TABLE big(id INTEGER PRIMARY KEY, a INTEGER NOT NULL, b TEXT NOT NULL)") ||
      insert_rows(db, "big", BIG_ROWS, BIG_PAD, &rng, big_second) || sql_exec(db, "COMMIT"))
    return 1;
  int64_t all = page_count(db);
  if (all < 0) return 1;
  b->hot_pages = (uint64_t)after_hot - 1; /* page 1 is the schema's */
  b->big_pages = (uint64_t)(all - after_hot);
  return 0;
}

/* Reads the file through once, so that every configuration finds it in
 * the OS page cache alike. */
static int warm_os_cache(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, SQL_PROG ": reading %s: %s\n", path, strerror(errno));
    return 1;
  }
  char buf[65536];
  while (fread(buf, 1, sizeof buf, f) == sizeof buf) {
  }
  int bad = ferror(f);
  fclose(f);
  if (bad) fprintf(stderr, SQL_PROG ": reading %s: I/O error\n", path);
  return bad ? 1 : 0;
}

int sql_build_lookups_db(sql_bench *b) {
  remove_db(b->db_path);
  sqlite3 *db;
  if (sql_open(b, b->db_path, &db) != 0) return 1;
  int rc = fill_lookups_db(b, db);
  if (sqlite3_close(db) != SQLITE_OK && rc == 0) rc = sql_fail(NULL, SQLITE_BUSY, "closing");
  return rc ? rc : warm_os_cache(b->db_path);
}

/* ---- the lookups workload ------------------------------------------------------ */

typedef struct lookup_stmts {
  sqlite3_stmt *get, *scan;
} lookup_stmts;

/* `n` lookups of random keys (rng NULL: the first n keys in turn); with
 * `r`, each timed into `h` and r->lookup_ns, and the cache's hits and
 * misses over the batch added to r. */
void sql_take_cache_counts(sqlite3 *db, uint64_t *hits, uint64_t *misses) {
  int cur, hi;
  sqlite3_db_status(db, SQLITE_DBSTATUS_CACHE_HIT, &cur, &hi, 1);
  if (hits) *hits += (uint64_t)cur;
  sqlite3_db_status(db, SQLITE_DBSTATUS_CACHE_MISS, &cur, &hi, 1);
  if (misses) *misses += (uint64_t)cur;
}

static int lookup_batch(sqlite3 *db, lookup_stmts *s, bench_rng *rng, uint64_t n, latency_hist *h,
                        lookup_result *r) {
  if (r) sql_take_cache_counts(db, NULL, NULL); /* from zero: only the lookups' fetches count */
  for (uint64_t i = 0; i < n; i++) {
    int key = hot_key(rng ? bench_rng_below(rng, HOT_ROWS) : (uint32_t)i);
    uint64_t t0 = bench_now_ns();
    sqlite3_bind_int(s->get, 1, key);
    int rc, rows = 0;
    while ((rc = sqlite3_step(s->get)) == SQLITE_ROW) rows++;
    sqlite3_reset(s->get);
    uint64_t ns = bench_now_ns() - t0;
    if (rc != SQLITE_DONE) return sql_fail(db, rc, "a lookup");
    if (rows != 1) {
      fprintf(stderr, SQL_PROG ": the lookup of key %d found %d rows, not 1\n", key, rows);
      return 1;
    }
    if (r) {
      latency_hist_add(h, ns);
      r->lookup_ns += ns;
    }
  }
  if (r) sql_take_cache_counts(db, &r->hits, &r->misses);
  return 0;
}

static int scan_big(sqlite3 *db, lookup_stmts *s, double *seconds) {
  uint64_t t0 = bench_now_ns();
  int rc = sqlite3_step(s->scan);
  sqlite3_int64 sum = rc == SQLITE_ROW ? sqlite3_column_int64(s->scan, 0) : -1;
  sqlite3_reset(s->scan);
  *seconds += (double)(bench_now_ns() - t0) / 1e9;
  if (rc != SQLITE_ROW) return sql_fail(db, rc, "the scan");
  if (sum < 0) {
    fprintf(stderr, SQL_PROG ": the scan's sum is %lld\n", (long long)sum);
    return 1;
  }
  return 0;
}

static int lookup_rounds(const sql_bench *b, sqlite3 *db, lookup_stmts *s, lookup_result *r) {
  latency_hist *h = calloc(1, sizeof *h);
  if (!h) return sql_fail(NULL, SQLITE_NOMEM, "the latency histogram");
  latency_hist_reset(h);
  bench_rng rng;
  bench_rng_seed(&rng, b->seed, 2); /* the same keys for every configuration */
  /* Unmeasured: every key looked up once, then a scan. So every hot page
   * has been read before the first measured batch (the misses counted are
   * what the scans cost, not a cold start's), and that batch, as every
   * other, follows a scan. */
  double warm_scan = 0;
  int rc = lookup_batch(db, s, NULL, HOT_ROWS, NULL, NULL);
  if (rc == 0) rc = scan_big(db, s, &warm_scan);
  for (uint64_t i = 0; rc == 0 && i < b->rounds; i++) {
    if (bench_interrupted()) rc = 1;
    if (rc == 0) rc = lookup_batch(db, s, &rng, b->lookups_between, h, r);
    if (rc == 0) rc = scan_big(db, s, &r->scan_seconds);
  }
  if (rc == 0) {
    r->lookups = h->n;
    uint64_t fetches = r->hits + r->misses;
    r->hit_ratio = fetches ? (double)r->hits / (double)fetches : 0;
    r->lookups_per_sec = r->lookup_ns ? (double)r->lookups / ((double)r->lookup_ns / 1e9) : 0;
    r->p99_us = latency_hist_quantile_us(h, 0.99);
  }
  free(h);
  return rc;
}

int sql_run_lookups(const sql_bench *b, sqlite3 *db, lookup_result *r) {
  lookup_stmts s = {0};
  int rc = prepare(db, "SELECT pad FROM hot WHERE k = ?", &s.get);
  if (rc == 0) rc = prepare(db, "SELECT sum(a) FROM big", &s.scan);
  if (rc == 0) rc = lookup_rounds(b, db, &s, r);
  sqlite3_finalize(s.get);
  sqlite3_finalize(s.scan);
  return rc;
}

/* ---- the mix ------------------------------------------------------------------ */

typedef struct mix_stmts {
  sqlite3_stmt *ins1, *ins2, *sel, *upd, *range, *join, *del;
} mix_stmts;

static int mix_prepare(sqlite3 *db, mix_stmts *m) {
  return prepare(db, "INSERT INTO t1(a, b, c) VALUES (?, ?, ?)", &m->ins1) ||
         prepare(db, "INSERT INTO t2(k, v) VALUES (?, ?)", &m->ins2) ||
         prepare(db, "SELECT a, c FROM t1 WHERE b = ?", &m->sel) ||
         prepare(db, "UPDATE t1 SET a = a + 1, c = ? WHERE b = ?", &m->upd) ||
         prepare(db, "SELECT count(*), sum(a) FROM t1 WHERE b BETWEEN ? AND ?", &m->range) ||
         prepare(db, "SELECT count(*), sum(length(t2.v)) FROM t1 JOIN t2 ON t2.k = t1.a",
                 &m->join) ||
         prepare(db, "DELETE FROM t1 WHERE b BETWEEN ? AND ?", &m->del);
}

static void mix_finalize(mix_stmts *m) {
  sqlite3_stmt *all[] = {m->ins1, m->ins2, m->sel, m->upd, m->range, m->join, m->del};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) sqlite3_finalize(all[i]);
}

/* t1's b: every value below T1_ROWS once, scrambled; a: a key of t2. */
static int mix_insert(sqlite3 *db, mix_stmts *m, bench_rng *rng) {
  char pad[T1_PAD + 1];
  if (sql_exec(db, "BEGIN")) return 1;
  for (uint32_t i = 0; i < T1_ROWS; i++) {
    fill_text(rng, pad, T1_PAD);
    sqlite3_bind_int(m->ins1, 1, (int)bench_rng_below(rng, T2_ROWS));
    sqlite3_bind_int(m->ins1, 2, (int)((i * SCRAMBLE) % T1_ROWS));
    sqlite3_bind_text(m->ins1, 3, pad, T1_PAD, SQLITE_STATIC);
    if (step_all(db, m->ins1, "inserting into t1")) return 1;
  }
  for (uint32_t i = 0; i < T2_ROWS; i++) {
    fill_text(rng, pad, T1_PAD / 2);
    sqlite3_bind_int(m->ins2, 1, (int)i);
    sqlite3_bind_text(m->ins2, 2, pad, T1_PAD / 2, SQLITE_STATIC);
    if (step_all(db, m->ins2, "inserting into t2")) return 1;
  }
  return sql_exec(db, "COMMIT");
}

static int mix_select(sqlite3 *db, mix_stmts *m, bench_rng *rng) {
  for (uint32_t i = 0; i < MIX_SELECTS; i++) {
    sqlite3_bind_int(m->sel, 1, (int)bench_rng_below(rng, T1_ROWS));
    if (step_all(db, m->sel, "an indexed select")) return 1;
  }
  return 0;
}

static int mix_update(sqlite3 *db, mix_stmts *m, bench_rng *rng) {
  char pad[T1_PAD + 1];
  if (sql_exec(db, "BEGIN")) return 1;
  for (uint32_t i = 0; i < MIX_UPDATES; i++) {
    fill_text(rng, pad, T1_PAD);
    sqlite3_bind_text(m->upd, 1, pad, T1_PAD, SQLITE_STATIC);
    sqlite3_bind_int(m->upd, 2, (int)bench_rng_below(rng, T1_ROWS));
    if (step_all(db, m->upd, "an update by index")) return 1;
  }
  return sql_exec(db, "COMMIT");
}

/* Range scans over `width` consecutive values of b (the index's order). */
static int mix_ranges(sqlite3 *db, sqlite3_stmt *st, bench_rng *rng, uint32_t n, uint32_t width,
                      const char *what) {
  for (uint32_t i = 0; i < n; i++) {
    int lo = (int)bench_rng_below(rng, T1_ROWS - width);
    sqlite3_bind_int(st, 1, lo);
    sqlite3_bind_int(st, 2, lo + (int)width - 1);
    if (step_all(db, st, what)) return 1;
  }
  return 0;
}

static int mix_join(sqlite3 *db, mix_stmts *m) {
  for (uint32_t i = 0; i < MIX_JOINS; i++)
    if (step_all(db, m->join, "the join")) return 1;
  return 0;
}

static int mix_steps(sqlite3 *db, mix_stmts *m, bench_rng *rng, double secs[MIX_STEPS]) {
  for (int step = 0; step < MIX_STEPS; step++) {
    uint64_t t0 = bench_now_ns();
    int rc;
    switch (step) {
    case MIX_INSERT:
      rc = mix_insert(db, m, rng);
      break;
    case MIX_SELECT:
      rc = mix_select(db, m, rng);
      break;
    case MIX_UPDATE:
      rc = mix_update(db, m, rng);
      break;
    case MIX_RANGE:
      rc = mix_ranges(db, m->range, rng, MIX_RANGES, RANGE_WIDTH, "a range scan");
      break;
    case MIX_JOIN:
      rc = mix_join(db, m);
      break;
    default:
      rc = sql_exec(db, "BEGIN") ||
           mix_ranges(db, m->del, rng, MIX_DELETES, DELETE_WIDTH, "a delete") ||
           sql_exec(db, "COMMIT");
      break;
    }
    secs[step] = (double)(bench_now_ns() - t0) / 1e9;
    if (rc) return 1;
  }
  return 0;
}

int sql_run_mix(const sql_bench *b, double step_seconds[MIX_STEPS], uint64_t *hits,
                uint64_t *misses) {
  remove_db(b->mix_path);
  sqlite3 *db;
  if (sql_open(b, b->mix_path, &db) != 0) return 1;
  bench_rng rng;
  bench_rng_seed(&rng, b->seed, 3);
  mix_stmts m = {0};
  /* No fsyncs: the disk's flush time would swamp what the cache does, and
   * vary more than it from run to run. */
  int rc = sql_exec(db, "PRAGMA synchronous = OFF;"
                        "CREATE TABLE t1(a INTEGER NOT NULL, b INTEGER NOT NULL, c TEXT NOT NULL);"
                        "CREATE INDEX t1_b ON t1(b);"
                        "CREATE TABLE t2(k INTEGER PRIMARY KEY, v TEXT NOT NULL)");
  if (rc == 0) rc = mix_prepare(db, &m);
  sql_take_cache_counts(db, NULL, NULL);
  if (rc == 0) rc = mix_steps(db, &m, &rng, step_seconds);
  sql_take_cache_counts(db, hits, misses);
  mix_finalize(&m);
  sqlite3_close(db);
  remove_db(b->mix_path);
  return rc;
}
