/*
 * bench/bench_sqlite_family.c — `hotset bench sqlite --workload family`:
 * the lookups workload in many shapes, so that scan resistance is judged
 * on a family of programs and never on one.
 *
 * Each shape is a database with a small `hot` table read by point lookups
 * and a `big` table, several times the cache, scanned between every batch
 * of lookups. The shapes differ in what SQLite does underneath:
 *   journal   WAL or a rollback journal (DELETE);
 *   layout    rowid tables; WITHOUT ROWID tables; rowid tables with a
 *             secondary index (the lookups go through it, and the big
 *             table's index, built as rows arrive, interleaves its pages
 *             with the table's);
 *   scan      count(*) (leaves only, overflow pages skipped); LIKE over
 *             the text column (overflow pages read); ORDER BY an unindexed
 *             column (a full scan feeding the sorter); a range of the key
 *             covering the middle of the table;
 *   page      1 to 64 KiB pages, the cache always the same bytes (--cache
 *             pages of 4 KiB: SQLite's default 2 MiB at 500);
 *   between   100 to 1,000 lookups between two scans;
 *   scale     the big table 2 to 20 times the cache;
 *   rows      narrow big rows, or wide ones that overflow their page;
 *   order     rows inserted in key order, or shuffled (page splits out of
 *             page-number order).
 * The 24 combinations of journal, layout and scan each get the other five
 * from seeded permutations (--family-seed), so every value appears about
 * equally often and no two of them always together; another seed draws
 * another family of the same kind.
 *
 * Per shape: stock (SQLite's cache), hotset's default and each --policy,
 * and the ceiling — the same lookups with a cache that never evicts (SQLite's
 * own, cache_size above the database's pages), measured in the same run.
 * The hit ratio is SQLite's own count over the lookups only, as in the
 * lookups workload; for hotset also the share of the scans' page fetches
 * the detector took for a scan.
 */
#include "bench/bench_sqlite_internal.h"
#include "common/clock.h"
#include "common/interrupt.h"
#include "common/json.h"
#include "common/rng.h"
#include "hotset_sqlite.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const uint32_t page_sizes[] = {1024, 4096, 8192, 16384, 65536};
static const uint32_t betweens[] = {100, 300, 1000};
static const uint32_t scales[] = {2, 5, 10, 20};
static const char *const journal_names[] = {"delete", "wal"};
static const char *const layout_names[] = {"rowid", "norowid", "index"};
static const char *const scan_names[] = {"count", "like", "order", "range"};
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* The hot table's share of the cache (its index included). */
#define HOT_SHARE 0.3
/* Rows are inserted this many at a time between looks at page_count. */
#define BATCH 64

/* A seeded permutation of 0 .. n-1. */
static void permutation(bench_rng *rng, int *p, int n) {
  for (int i = 0; i < n; i++) p[i] = i;
  for (int i = n - 1; i > 0; i--) {
    int j = (int)bench_rng_below(rng, (uint32_t)i + 1);
    int t = p[i];
    p[i] = p[j];
    p[j] = t;
  }
}

void sql_family_shapes(uint64_t seed, sql_shape shapes[FAMILY_SHAPES]) {
  bench_rng rng;
  bench_rng_seed(&rng, seed, 11);
  int perm[5][FAMILY_SHAPES];
  for (int k = 0; k < 5; k++) permutation(&rng, perm[k], FAMILY_SHAPES);
  for (int i = 0; i < FAMILY_SHAPES; i++) {
    sql_shape *s = &shapes[i];
    *s = (sql_shape){.index = i, .journal = i % 2, .layout = (i / 2) % 3, .scan = (i / 6) % 4};
    s->page = page_sizes[(size_t)perm[0][i] % NELEM(page_sizes)];
    s->between = betweens[(size_t)perm[1][i] % NELEM(betweens)];
    s->scale = scales[(size_t)perm[2][i] % NELEM(scales)];
    s->wide = perm[3][i] % 2;
    s->shuffled = perm[4][i] % 2;
  }
}

static void shape_label(const sql_shape *s, char *buf, size_t len) {
  snprintf(buf, len, "%s/%s/%s/%uK/%u/x%u/%s/%s", journal_names[s->journal],
           layout_names[s->layout], scan_names[s->scan], s->page / 1024, s->between, s->scale,
           s->wide ? "wide" : "narrow", s->shuffled ? "shuffled" : "ordered");
}

/* ---- the shape's database ----------------------------------------------------- */

typedef struct fam_db {
  const sql_shape *s;
  uint32_t cache_pages; /* the run's cache in this shape's pages */
  int64_t *hot_keys;    /* what a lookup binds */
  uint32_t nhot;
  int64_t id_lo, id_hi; /* the big table's keys, for the range scan */
  int64_t pages, hot_pages, big_pages;
} fam_db;

static int fam_prepare(sqlite3 *db, const char *sql, sqlite3_stmt **st) {
  int rc = sqlite3_prepare_v2(db, sql, -1, st, NULL);
  return rc == SQLITE_OK ? 0 : sql_fail(db, rc, sql);
}

static int64_t fam_page_count(sqlite3 *db) {
  sqlite3_stmt *st;
  if (fam_prepare(db, "PRAGMA page_count", &st) != 0) return -1;
  int64_t n = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
  sqlite3_finalize(st);
  return n;
}

static void fill(bench_rng *rng, char *buf, size_t n) {
  for (size_t i = 0; i < n; i++) buf[i] = (char)('a' + bench_rng_below(rng, 26));
}

/* The i-th key: 1, 2, 3 ... or, shuffled, a bijection of the 31-bit
 * integers (an odd multiplier modulo 2^31), spread and never repeated. */
static int64_t nth_key(const sql_shape *s, uint32_t i) {
  if (!s->shuffled) return (int64_t)i + 1;
  return (int64_t)(((uint64_t)i * 0x9E3779B1u) & 0x7fffffffu) + 1;
}

/* cache: negative, in KiB (SQLite converts it to pages with its own
 * per-page overhead); positive, in pages. */
static int open_shape(const sql_bench *b, const char *path, const sql_shape *s, int64_t cache,
                      sqlite3 **db) {
  int rc = sqlite3_open_v2(path, db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
  if (rc != SQLITE_OK) {
    sql_fail(*db, rc, path);
    sqlite3_close(*db);
    return 1;
  }
  char sql[160];
  snprintf(sql, sizeof sql, "PRAGMA page_size = %u; PRAGMA cache_size = %lld", s->page,
           (long long)cache);
  (void)b;
  if (sql_exec(*db, sql) != 0) {
    sqlite3_close(*db);
    return 1;
  }
  return 0;
}

/* Inserts rows into `table` through `ins` (key, a, c, text) until the
 * database has `until` pages; *n counts the rows. */
static int insert_until(sqlite3 *db, sqlite3_stmt *ins, const sql_shape *s, bench_rng *rng,
                        uint32_t pad, int64_t until, uint32_t *n, int64_t **keys) {
  char *text = malloc(pad + 1);
  if (!text) return sql_fail(NULL, SQLITE_NOMEM, "a row");
  int rc = 0;
  uint32_t cap = 0;
  while (rc == 0) {
    int64_t pages = fam_page_count(db);
    if (pages < 0) rc = 1;
    if (rc || pages >= until) break;
    for (int k = 0; rc == 0 && k < BATCH; k++) {
      int64_t key = nth_key(s, *n);
      if (keys) {
        if (*n == cap) {
          cap = cap ? cap * 2 : 1024;
          int64_t *grown = realloc(*keys, sizeof **keys * cap);
          if (!grown) {
            rc = sql_fail(NULL, SQLITE_NOMEM, "the keys");
            break;
          }
          *keys = grown;
        }
        (*keys)[*n] = key;
      }
      fill(rng, text, pad);
      sqlite3_bind_int64(ins, 1, key);
      sqlite3_bind_int64(ins, 2, (int64_t)bench_rng_below(rng, 1000000));
      sqlite3_bind_int64(ins, 3, (int64_t)bench_rng_below(rng, 1000000));
      sqlite3_bind_text(ins, 4, text, (int)pad, SQLITE_STATIC);
      int r = sqlite3_step(ins);
      sqlite3_reset(ins);
      if (r != SQLITE_DONE) rc = sql_fail(db, r, "inserting");
      (*n)++;
    }
  }
  free(text);
  return rc;
}

static int build_shape(const sql_bench *b, const sql_shape *s, fam_db *d) {
  unlink(b->db_path);
  char side[4300];
  snprintf(side, sizeof side, "%s-wal", b->db_path);
  unlink(side);
  snprintf(side, sizeof side, "%s-shm", b->db_path);
  unlink(side);
  snprintf(side, sizeof side, "%s-journal", b->db_path);
  unlink(side);
  sqlite3 *db;
  if (open_shape(b, b->db_path, s, -(int64_t)b->cache_pages * 4, &db) != 0) return 1;
  bench_rng rng;
  bench_rng_seed(&rng, b->seed, 100 + (uint64_t)s->index);
  const char *tail = s->layout == 1 ? " WITHOUT ROWID" : "";
  const char *pk = s->layout == 1 ? "INTEGER PRIMARY KEY NOT NULL" : "INTEGER PRIMARY KEY";
  char sql[512];
  snprintf(sql, sizeof sql,
           "PRAGMA journal_mode = %s; PRAGMA synchronous = OFF; BEGIN;"
           "CREATE TABLE hot(id %s, k INTEGER, c INTEGER, pad TEXT)%s;"
           "CREATE TABLE big(id %s, a INTEGER, c INTEGER, b TEXT)%s;%s",
           journal_names[s->journal], pk, tail, pk, tail,
           s->layout == 2 ? "CREATE INDEX big_a ON big(a);" : "");
  int rc = sql_exec(db, sql);
  sqlite3_stmt *ins = NULL;
  uint32_t nhot = 0, nbig = 0;
  /* hot: about HOT_SHARE of the cache, rows of a twelfth of a page. */
  int64_t start = rc ? -1 : fam_page_count(db);
  if (start < 0) rc = 1;
  if (rc == 0) rc = fam_prepare(db, "INSERT INTO hot VALUES (?, ?, ?, ?)", &ins);
  int64_t hot_target = (int64_t)((double)d->cache_pages * HOT_SHARE);
  if (hot_target < 3) hot_target = 3;
  if (rc == 0)
    rc = insert_until(db, ins, s, &rng, s->page / 12, start + hot_target, &nhot, &d->hot_keys);
  sqlite3_finalize(ins);
  ins = NULL;
  if (rc == 0 && s->layout == 2)
    rc = sql_exec(db, "UPDATE hot SET k = id * 7 + 3; CREATE INDEX hot_k ON hot(k)");
  int64_t after_hot = rc ? -1 : fam_page_count(db);
  if (after_hot < 0) rc = 1;
  /* big: scale times the cache; narrow rows of 200 bytes, or wide ones of
   * 1.6 pages (an overflow page or two each). */
  uint32_t pad = s->wide ? s->page * 8 / 5 : 200;
  if (rc == 0) rc = fam_prepare(db, "INSERT INTO big VALUES (?, ?, ?, ?)", &ins);
  if (rc == 0)
    rc = insert_until(db, ins, s, &rng, pad, after_hot + (int64_t)d->cache_pages * s->scale, &nbig,
                      NULL);
  sqlite3_finalize(ins);
  if (rc == 0) rc = sql_exec(db, "COMMIT");
  if (rc == 0 && s->journal == 1) rc = sql_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)");
  d->pages = rc ? 0 : fam_page_count(db);
  if (sqlite3_close(db) != SQLITE_OK && rc == 0) rc = sql_fail(NULL, SQLITE_BUSY, "closing");
  d->nhot = nhot;
  d->hot_pages = after_hot - start;
  d->big_pages = d->pages - after_hot;
  int64_t lo = nth_key(s, 0), hi = lo;
  for (uint32_t i = 0; i < nbig; i++) {
    int64_t k = nth_key(s, i);
    lo = k < lo ? k : lo;
    hi = k > hi ? k : hi;
  }
  d->id_lo = lo + (hi - lo) / 5;
  d->id_hi = hi - (hi - lo) / 5;
  if (rc == 0 && s->layout == 2)
    for (uint32_t i = 0; i < nhot; i++) d->hot_keys[i] = d->hot_keys[i] * 7 + 3;
  return rc;
}

/* ---- one configuration on one shape -------------------------------------------- */

typedef struct fam_result {
  uint64_t hits, misses;
  double hit_ratio;
  uint64_t scan_fetches, scan_detected; /* hotset: the scans' fetches, and those in a scan */
  double seconds;
} fam_result;

static const char *scan_sql(const sql_shape *s) {
  switch (s->scan) {
  case 0:
    return "SELECT count(*) FROM big";
  case 1:
    return "SELECT count(*) FROM big WHERE b LIKE '%qzj%'";
  case 2:
    return "SELECT id, c FROM big ORDER BY c";
  default:
    return "SELECT count(*), sum(length(b)) FROM big WHERE id BETWEEN ? AND ?";
  }
}

static int fam_scan(sqlite3 *db, sqlite3_stmt *scan, const fam_db *d, bool hotset, fam_result *r) {
  hotset_sqlite_stats before, after;
  if (hotset) hotset_sqlite_stats_get(&before);
  if (d->s->scan == 3) {
    sqlite3_bind_int64(scan, 1, d->id_lo);
    sqlite3_bind_int64(scan, 2, d->id_hi);
  }
  int rc;
  while ((rc = sqlite3_step(scan)) == SQLITE_ROW) {
  }
  sqlite3_reset(scan);
  if (rc != SQLITE_DONE) return sql_fail(db, rc, "the scan");
  if (hotset && r) {
    hotset_sqlite_stats_get(&after);
    r->scan_fetches += after.fetches - before.fetches;
    r->scan_detected += after.scan_fetches - before.scan_fetches;
  }
  return 0;
}

static int fam_lookups(sqlite3 *db, sqlite3_stmt *get, const fam_db *d, bench_rng *rng, uint32_t n,
                       fam_result *r) {
  sql_take_cache_counts(db, NULL, NULL);
  for (uint32_t i = 0; i < n; i++) {
    int64_t key = d->hot_keys[rng ? bench_rng_below(rng, d->nhot) : i % d->nhot];
    sqlite3_bind_int64(get, 1, key);
    int rc, rows = 0;
    while ((rc = sqlite3_step(get)) == SQLITE_ROW) rows++;
    sqlite3_reset(get);
    if (rc != SQLITE_DONE) return sql_fail(db, rc, "a lookup");
    if (rows != 1) {
      fprintf(stderr, SQL_PROG ": family: key %lld found %d rows, not 1\n", (long long)key, rows);
      return 1;
    }
  }
  if (r) sql_take_cache_counts(db, &r->hits, &r->misses);
  return 0;
}

/* A scan first (the cache full of the big table's pages, as in a program
 * that has run a while), then the measured rounds: the hot pages come into
 * the cache only through the lookups, so a cache must take a page looked
 * up once a round or so as hot even though a scan came between. The first
 * touch of each hot page is a miss for every cache, the ceiling's too. */
static int fam_measure(const sql_bench *b, const fam_db *d, sql_config *c, bool ceiling,
                       fam_result *r) {
  memset(r, 0, sizeof *r);
  if (sql_use_cache(c) != 0) return 1;
  uint64_t t0 = bench_now_ns();
  /* The ceiling's cache holds every page of the database, and more. */
  int64_t cache = ceiling ? d->pages + 64 : -(int64_t)b->cache_pages * 4;
  sqlite3 *db;
  if (open_shape(b, b->db_path, d->s, cache, &db) != 0) return 1;
  sqlite3_stmt *get = NULL, *scan = NULL;
  const char *get_sql =
      d->s->layout == 2 ? "SELECT pad FROM hot WHERE k = ?" : "SELECT pad FROM hot WHERE id = ?";
  int rc = fam_prepare(db, get_sql, &get);
  if (rc == 0) rc = fam_prepare(db, scan_sql(d->s), &scan);
  bench_rng rng;
  bench_rng_seed(&rng, b->seed, 200 + (uint64_t)d->s->index);
  if (rc == 0) rc = fam_scan(db, scan, d, false, NULL);
  for (uint64_t i = 0; rc == 0 && i < b->family_rounds; i++) {
    if (bench_interrupted()) rc = 1;
    if (rc == 0) rc = fam_lookups(db, get, d, &rng, d->s->between, r);
    if (rc == 0) rc = fam_scan(db, scan, d, c->hotset, r);
  }
  sqlite3_finalize(get);
  sqlite3_finalize(scan);
  sqlite3_close(db);
  uint64_t fetches = r->hits + r->misses;
  r->hit_ratio = fetches ? (double)r->hits / (double)fetches : 0;
  r->seconds = (double)(bench_now_ns() - t0) / 1e9;
  return rc;
}

/* ---- the run ------------------------------------------------------------------------ */

typedef struct fam_config {
  sql_config c;
  char label[ARGS_SPEC_LEN + 8];
} fam_config;

/* hotset's default (detection on), then each --policy with detection on
 * and/or off. */
static int fam_configs(const sql_bench *b, fam_config *out) {
  int n = 0;
  out[n].c = (sql_config){.hotset = true, .scan_detect = true};
  snprintf(out[n++].label, sizeof out[0].label, "default");
  for (int p = 0; p < b->npolicies; p++) {
    if (strcmp(b->specs[p], "default") == 0) continue;
    for (int on = 1; on >= 0; on--) {
      if ((on && !b->detect_on) || (!on && !b->detect_off)) continue;
      out[n].c = (sql_config){.hotset = true, .policy = b->specs[p], .scan_detect = on};
      snprintf(out[n++].label, sizeof out[0].label, "%s%s", b->specs[p], on ? "" : "/off");
    }
  }
  return n;
}

typedef struct fam_summary {
  int eligible;     /* shapes where stock is 0.05 or more below the ceiling */
  int met;          /* of those, default within 0.01 of the ceiling */
  double worst_gap; /* ceiling - default, the largest over eligible shapes */
  int worst_shape;
  double worst_any_gap; /* over every shape */
} fam_summary;

static void print_shape_text(const sql_shape *s, const fam_db *d, double stock, double ceiling,
                             const fam_result *res, const fam_config *cf, int n) {
  char label[96];
  shape_label(s, label, sizeof label);
  printf("  %2d %-44s %6" PRId64 " %6.4f %6.4f", s->index, label, d->pages, stock, ceiling);
  for (int i = 0; i < n; i++) {
    double share =
        res[i].scan_fetches ? (double)res[i].scan_detected / (double)res[i].scan_fetches : 0;
    printf(" %6.4f(%3.0f%%)", res[i].hit_ratio, 100 * share);
  }
  (void)cf;
  printf("\n");
}

static void print_shape_json(const sql_bench *b, const sql_shape *s, const fam_db *d, double stock,
                             double ceiling, const fam_result *res, const fam_config *cf, int n) {
  char label[96];
  shape_label(s, label, sizeof label);
  json_out j;
  json_begin(&j, stdout);
  json_str(&j, "workload", "family");
  json_u64(&j, "shape", (uint64_t)s->index);
  json_str(&j, "label", label);
  json_str(&j, "journal", journal_names[s->journal]);
  json_str(&j, "layout", layout_names[s->layout]);
  json_str(&j, "scan", scan_names[s->scan]);
  json_u64(&j, "page_size", s->page);
  json_u64(&j, "lookups_between", s->between);
  json_u64(&j, "scale", s->scale);
  json_bool(&j, "wide", s->wide);
  json_bool(&j, "shuffled", s->shuffled);
  json_u64(&j, "cache_pages", d->cache_pages);
  json_u64(&j, "db_pages", (uint64_t)d->pages);
  json_u64(&j, "hot_pages", (uint64_t)d->hot_pages);
  json_u64(&j, "rounds", b->family_rounds);
  json_double(&j, "stock", "%.4f", stock);
  json_double(&j, "ceiling", "%.4f", ceiling);
  json_double(&j, "default", "%.4f", res[0].hit_ratio);
  json_object_begin(&j, "hotset");
  for (int i = 0; i < n; i++) json_double(&j, cf[i].label, "%.4f", res[i].hit_ratio);
  json_object_end(&j);
  json_object_begin(&j, "detected");
  for (int i = 0; i < n; i++)
    json_double(&j, cf[i].label, "%.4f",
                res[i].scan_fetches ? (double)res[i].scan_detected / (double)res[i].scan_fetches
                                    : 0);
  json_object_end(&j);
  json_end_line(&j);
}

static int run_shape(sql_bench *b, const sql_shape *s, const fam_config *cf, int n,
                     fam_summary *sum) {
  fam_db d = {.s = s};
  d.cache_pages = (uint32_t)((b->cache_pages * 4096) / s->page);
  if (d.cache_pages < 10) d.cache_pages = 10;
  int rc = build_shape(b, s, &d);
  fam_result stock, ceiling, res[(ARGS_LIST_MAX * 2 + 1)];
  sql_config st = {.hotset = false};
  if (rc == 0) rc = fam_measure(b, &d, &st, false, &stock);
  if (rc == 0) rc = fam_measure(b, &d, &st, true, &ceiling);
  for (int i = 0; rc == 0 && i < n; i++) {
    sql_config c = cf[i].c;
    rc = fam_measure(b, &d, &c, false, &res[i]);
  }
  free(d.hot_keys);
  if (rc) return rc;
  if (b->json)
    print_shape_json(b, s, &d, stock.hit_ratio, ceiling.hit_ratio, res, cf, n);
  else
    print_shape_text(s, &d, stock.hit_ratio, ceiling.hit_ratio, res, cf, n);
  fflush(stdout);
  double gap = ceiling.hit_ratio - res[0].hit_ratio;
  if (gap > sum->worst_any_gap) sum->worst_any_gap = gap;
  if (ceiling.hit_ratio - stock.hit_ratio >= 0.05) {
    sum->eligible++;
    if (gap <= 0.01) sum->met++;
    if (sum->worst_shape < 0 || gap > sum->worst_gap) {
      sum->worst_gap = gap;
      sum->worst_shape = s->index;
    }
  }
  return 0;
}

int sql_run_family(sql_bench *b) {
  sql_shape shapes[FAMILY_SHAPES];
  sql_family_shapes(b->family_seed, shapes);
  fam_config cf[(ARGS_LIST_MAX * 2 + 1)];
  int n = fam_configs(b, cf);
  if (!b->json) {
    printf("family: seed %" PRIu64 ", %" PRIu64 " rounds per shape, cache %" PRIu64
           " KiB; hit ratios of the lookups (SQLite's count), hotset's with the share of the "
           "scans' fetches taken for a scan\n",
           b->family_seed, b->family_rounds, b->cache_pages * 4);
    printf("  %2s %-44s %6s %6s %6s", "#", "journal/layout/scan/page/between/scale/rows/order",
           "pages", "stock", "ceil");
    for (int i = 0; i < n; i++) printf(" %12s", cf[i].label);
    printf("\n");
  }
  fam_summary sum = {.worst_shape = -1};
  for (int i = 0; i < FAMILY_SHAPES; i++) {
    if (!b->shape_on[i]) continue;
    if (run_shape(b, &shapes[i], cf, n, &sum) != 0) return 1;
  }
  if (b->json) {
    json_out j;
    json_begin(&j, stdout);
    json_str(&j, "workload", "family-summary");
    json_u64(&j, "eligible", (uint64_t)sum.eligible);
    json_u64(&j, "met", (uint64_t)sum.met);
    json_double(&j, "worst_gap", "%.4f", sum.worst_gap);
    if (sum.worst_shape >= 0)
      json_u64(&j, "worst_shape", (uint64_t)sum.worst_shape);
    else
      json_str(&j, "worst_shape", NULL);
    json_double(&j, "worst_gap_any", "%.4f", sum.worst_any_gap);
    json_end_line(&j);
  } else {
    printf("  shapes where stock is 0.05 or more below the ceiling: %d; hotset's default within "
           "0.01 of the ceiling on %d: %s\n",
           sum.eligible, sum.met, sum.met == sum.eligible ? "met" : "missed");
    if (sum.worst_shape >= 0)
      printf("  worst case: shape %d, %.4f below the ceiling\n", sum.worst_shape, sum.worst_gap);
  }
  return 0;
}
