/*
 * test_sqlite_adapter — SQLite on hotset's page cache answers exactly as on
 * its own. One seeded workload runs twice, first on SQLite's own cache,
 * then (sqlite3_shutdown, hotset_sqlite_install) on hotset's with the
 * policy named on the command line, each on fresh databases; every query's
 * rows are hashed part by part and the hashes must be equal, with PRAGMA
 * integrity_check "ok" everywhere. The workload: bulk inserts in
 * transactions into a file database five times its cache, an index,
 * updates, deletes, rolled-back transactions and savepoints, cache_size
 * changes mid-run, shrink_memory, a temp table, VACUUM; an in-memory
 * database (a non-purgeable cache); three connections writing and reading
 * one file in turn; four threads, each on its own connection in serialized
 * mode. Then SQLite's own cache is put back (hotset_sqlite_uninstall) and
 * the statistics stop moving.
 *
 *   test_sqlite_adapter [policy | noscan]
 * "noscan" is the default policy with scan detection off.
 */
#include "check.h"
#include "hotset_sqlite.h"
#include "sqlite_util.h"
#include "testdir.h"

#include <pthread.h>
#include <sys/stat.h>

enum { PART_FILE, PART_MEMORY, PART_CONNS, PART_THREAD0, NTHREADS = 4, NPARTS = PART_THREAD0 + 4 };
static const char *const part_names[NPARTS] = {
    "file database", "in-memory database", "three connections", "thread 0",
    "thread 1",      "thread 2",           "thread 3"};

static sqlite3 *open_db(digest *d, const char *path) {
  sqlite3 *db = NULL;
  if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                      NULL) != SQLITE_OK)
    digest_error(d, path, db);
  return db;
}

/* `rows` rows of random k, text and blob into `table`, `per_tx` per
 * transaction; ids follow on from the table's. */
static void fill(digest *d, sqlite3 *db, const char *table, uint64_t *seed, int rows, int per_tx) {
  char text[600];
  unsigned char blob[700];
  char stmt[128];
  snprintf(stmt, sizeof stmt, "INSERT INTO %s(k, v, b) VALUES (?, ?, ?)", table);
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db, stmt, -1, &st, NULL) != SQLITE_OK) {
    digest_error(d, stmt, db);
    return;
  }
  for (int i = 0; i < rows; i++) {
    if (per_tx && i % per_tx == 0) sql(d, db, "BEGIN");
    int tlen = 20 + (int)(rng_next(seed) % 400), blen = (int)(rng_next(seed) % 600);
    for (int j = 0; j < tlen; j++) text[j] = (char)('a' + rng_next(seed) % 26);
    for (int j = 0; j < blen; j++) blob[j] = (unsigned char)rng_next(seed);
    sqlite3_bind_int64(st, 1, (int64_t)(rng_next(seed) % 100000));
    sqlite3_bind_text(st, 2, text, tlen, SQLITE_TRANSIENT);
    sqlite3_bind_blob(st, 3, blob, blen, SQLITE_TRANSIENT);
    digest_step(d, db, st, stmt);
    sqlite3_reset(st);
    if (per_tx && (i % per_tx == per_tx - 1 || i == rows - 1)) sql(d, db, "COMMIT");
  }
  sqlite3_finalize(st);
}

/* Point lookups and point updates by random id. */
static void lookups(digest *d, sqlite3 *db, uint64_t *seed, int n, int max_id) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db, "SELECT id, k, length(v), v FROM t WHERE id = ?", -1, &st, NULL)) {
    digest_error(d, "lookup", db);
    return;
  }
  for (int i = 0; i < n; i++) {
    sqlite3_bind_int64(st, 1, 1 + (int64_t)(rng_next(seed) % (uint64_t)max_id));
    digest_step(d, db, st, "lookup");
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
}

static void updates(digest *d, sqlite3 *db, uint64_t *seed, int n, int max_id) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db, "UPDATE t SET k = ?, v = v || ? WHERE id = ?", -1, &st, NULL)) {
    digest_error(d, "update", db);
    return;
  }
  sql(d, db, "BEGIN");
  for (int i = 0; i < n; i++) {
    sqlite3_bind_int64(st, 1, (int64_t)(rng_next(seed) % 100000));
    sqlite3_bind_text(st, 2, "-updated-", -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, 1 + (int64_t)(rng_next(seed) % (uint64_t)max_id));
    digest_step(d, db, st, "update");
    sqlite3_reset(st);
  }
  sql(d, db, "COMMIT");
  sqlite3_finalize(st);
}

static const char table_sql[] = "CREATE TABLE t(id INTEGER PRIMARY KEY, k INTEGER, v TEXT, b BLOB)";
static const char summary_sql[] =
    "SELECT count(*), sum(k), sum(length(v)), sum(length(b)), max(id) FROM t";
static const char everything_sql[] = "SELECT id, k, v, b FROM t ORDER BY id";

/* A file database several times its cache, through everything that moves
 * pages in and out of it. */
static void part_file(digest *d, const char *dir) {
  char path[700];
  snprintf(path, sizeof path, "%s/file.db", dir);
  sqlite3 *db = open_db(d, path);
  if (!db) return;
  uint64_t seed = 0x5eed0001;
  sql(d, db, "PRAGMA cache_size = 100");
  sql(d, db, table_sql);
  fill(d, db, "t", &seed, 6000, 500);
  sql(d, db, "CREATE INDEX t_k ON t(k)");
  sql(d, db, summary_sql);
  updates(d, db, &seed, 400, 6000);
  /* Rows that grow into overflow pages, then rows that go. */
  sql(d, db, "UPDATE t SET b = zeroblob(length(b) + 3000) WHERE id % 17 = 3");
  sql(d, db, "DELETE FROM t WHERE k % 13 = 0");
  sql(d, db, summary_sql);
  /* A big transaction that spills, seen from inside, then rolled back. */
  sql(d, db, "BEGIN");
  fill(d, db, "t", &seed, 1500, 0);
  sql(d, db, "UPDATE t SET k = k + 1; DELETE FROM t WHERE id % 3 = 0");
  sql(d, db, summary_sql);
  sql(d, db, "ROLLBACK");
  sql(d, db, summary_sql);
  sql(d, db,
      "SAVEPOINT a; DELETE FROM t WHERE id < 2000; SELECT count(*) FROM t;"
      "ROLLBACK TO a; RELEASE a");
  /* A cache shrunk under the workload, then grown, then emptied. */
  sql(d, db, "PRAGMA cache_size = 20");
  sql(d, db, "SELECT k % 97, count(*), sum(length(v)) FROM t GROUP BY 1 ORDER BY 1");
  sql(d, db, "SELECT id, k FROM t WHERE k BETWEEN 20000 AND 30000 ORDER BY k, id");
  lookups(d, db, &seed, 2000, 6000);
  sql(d, db, "PRAGMA cache_size = 500");
  updates(d, db, &seed, 300, 6000);
  sql(d, db, everything_sql);
  sql(d, db, "PRAGMA shrink_memory");
  lookups(d, db, &seed, 500, 6000);
  sql(d, db, "PRAGMA cache_size = -200"); /* 200 KiB */
  /* A temp table (its own cache) joined with the main one. */
  sql(d, db,
      "CREATE TEMP TABLE tt AS SELECT id, k FROM t WHERE id % 5 = 0;"
      "SELECT count(*), sum(t.k + tt.k) FROM tt JOIN t USING (id)");
  /* A table made and dropped leaves free pages for VACUUM to take back. */
  sql(d, db, "CREATE TABLE u(id INTEGER PRIMARY KEY, k INTEGER, v TEXT, b BLOB)");
  fill(d, db, "u", &seed, 2000, 1000);
  sql(d, db, "CREATE INDEX t_v ON t(v); DROP TABLE u");
  sql(d, db, "PRAGMA page_count; PRAGMA freelist_count");
  integrity(d, db);
  sql(d, db, "VACUUM");
  sql(d, db, "PRAGMA page_count; PRAGMA freelist_count");
  sql(d, db, everything_sql);
  integrity(d, db);
  sqlite3_close(db);
}

/* An in-memory database: SQLite's cache is the database (not purgeable). */
static void part_memory(digest *d) {
  sqlite3 *db = open_db(d, ":memory:");
  if (!db) return;
  uint64_t seed = 0x5eed0002;
  sql(d, db, table_sql);
  fill(d, db, "t", &seed, 3000, 1000);
  sql(d, db, "CREATE INDEX t_k ON t(k)");
  updates(d, db, &seed, 300, 3000);
  sql(d, db, "BEGIN; DELETE FROM t WHERE id % 2 = 0; SELECT count(*) FROM t; ROLLBACK");
  sql(d, db, "DELETE FROM t WHERE k % 7 = 0");
  sql(d, db, "PRAGMA shrink_memory");
  lookups(d, db, &seed, 1000, 3000);
  sql(d, db, "VACUUM");
  sql(d, db, everything_sql);
  integrity(d, db);
  sqlite3_close(db);
}

/* Three connections to one file, each with its own cache, writing and
 * reading in turn: each must see the others' commits. */
static void part_conns(digest *d, const char *dir) {
  char path[700];
  snprintf(path, sizeof path, "%s/shared.db", dir);
  sqlite3 *c[3];
  for (int i = 0; i < 3; i++) {
    c[i] = open_db(d, path);
    if (!c[i]) return;
    sql(d, c[i], "PRAGMA cache_size = 50");
  }
  uint64_t seed = 0x5eed0003;
  sql(d, c[0], table_sql);
  fill(d, c[0], "t", &seed, 1500, 500);
  for (int round = 0; round < 6; round++) {
    sqlite3 *writer = c[round % 3], *reader = c[(round + 1) % 3];
    sql(d, reader, summary_sql);
    updates(d, writer, &seed, 100, 1500);
    fill(d, writer, "t", &seed, 200, 200);
    sql(d, reader, summary_sql);
    lookups(d, reader, &seed, 200, 1500 + 200 * (round + 1));
    sql(d, c[(round + 2) % 3], "DELETE FROM t WHERE id % 11 = 0 AND k % 2 = 0");
    sql(d, writer, summary_sql);
  }
  sql(d, c[1], everything_sql);
  integrity(d, c[2]);
  for (int i = 0; i < 3; i++) sqlite3_close(c[i]);
}

typedef struct thread_arg {
  const char *dir;
  int index;
  digest d;
} thread_arg;

/* One thread's own connection and database (no lock waits, so the result
 * is deterministic), its caches made and dropped beside the others'. */
static void *thread_main(void *p) {
  thread_arg *a = p;
  char path[700];
  snprintf(path, sizeof path, "%s/thread%d.db", a->dir, a->index);
  sqlite3 *db = open_db(&a->d, path);
  if (!db) return NULL;
  uint64_t seed = 0x5eed0100 + (uint64_t)a->index;
  sql(&a->d, db, "PRAGMA cache_size = 60");
  sql(&a->d, db, table_sql);
  fill(&a->d, db, "t", &seed, 1500, 300);
  sql(&a->d, db, "CREATE INDEX t_k ON t(k)");
  for (int round = 0; round < 3; round++) {
    updates(&a->d, db, &seed, 200, 1500);
    lookups(&a->d, db, &seed, 400, 1500);
    sql(&a->d, db, summary_sql);
  }
  sql(&a->d, db, "DELETE FROM t WHERE k % 5 = 1");
  sql(&a->d, db, everything_sql);
  integrity(&a->d, db);
  sqlite3_close(db);
  return NULL;
}

static void run_workload(const char *dir, digest parts[NPARTS]) {
  for (int i = 0; i < NPARTS; i++) digest_init(&parts[i]);
  part_file(&parts[PART_FILE], dir);
  part_memory(&parts[PART_MEMORY]);
  part_conns(&parts[PART_CONNS], dir);
  pthread_t th[NTHREADS];
  thread_arg args[NTHREADS];
  bool started[NTHREADS];
  for (int i = 0; i < NTHREADS; i++) {
    args[i] = (thread_arg){.dir = dir, .index = i};
    digest_init(&args[i].d);
    started[i] = pthread_create(&th[i], NULL, thread_main, &args[i]) == 0;
  }
  for (int i = 0; i < NTHREADS; i++) {
    REQUIRE(started[i]);
    pthread_join(th[i], NULL);
    parts[PART_THREAD0 + i] = args[i].d;
  }
}

static void check_parts(const char *label, const digest ref[NPARTS], const digest got[NPARTS]) {
  for (int i = 0; i < NPARTS; i++) {
    if (got[i].errors)
      fprintf(stderr, "%s: %s: %u errors, first: %s\n", label, part_names[i], got[i].errors,
              got[i].first_error);
    CHECK_EQ(got[i].errors, 0);
    CHECK(got[i].integrity_ok >= 1);
    CHECK(got[i].rows > 0);
    if (got[i].hash != ref[i].hash || got[i].rows != ref[i].rows)
      fprintf(stderr, "%s: %s differs from SQLite's own cache (%u rows, %u there)\n", label,
              part_names[i], got[i].rows, ref[i].rows);
    CHECK(got[i].hash == ref[i].hash);
    CHECK_EQ(got[i].rows, ref[i].rows);
  }
}

static void run_in(const char *top, const char *sub, digest parts[NPARTS]) {
  char dir[600];
  snprintf(dir, sizeof dir, "%s/%s", top, sub);
  REQUIRE(mkdir(dir, 0700) == 0);
  run_workload(dir, parts);
}

int main(int argc, char **argv) {
  const char *arg = argc > 1 ? argv[1] : NULL;
  hotset_sqlite_options o;
  hotset_sqlite_options_init(&o);
  o.stats_at_exit = false;
  if (arg && strcmp(arg, "noscan") == 0)
    o.scan_run = 0;
  else
    o.policy = arg;
  printf("policy %s, scan_run %u\n", o.policy ? o.policy : "(default)", o.scan_run);
  if (!sqlite3_threadsafe()) {
    printf("SKIPPED: test_sqlite_adapter: this libsqlite3 is built without threads\n");
    return CHECK_SKIP_STATUS;
  }

  char top[512];
  testdir_make(top, sizeof top, "sqlite-adapter");
  static digest ref[NPARTS], got[NPARTS], again[NPARTS];

  /* SQLite's own cache first: the answers to compare with. */
  hotset_sqlite_stats_reset();
  run_in(top, "own", ref);
  for (int i = 0; i < NPARTS; i++) {
    if (ref[i].errors) fprintf(stderr, "own cache: %s: %s\n", part_names[i], ref[i].first_error);
    CHECK_EQ(ref[i].errors, 0);
    CHECK(ref[i].integrity_ok >= 1);
  }
  hotset_sqlite_stats s;
  hotset_sqlite_stats_get(&s);
  CHECK_EQ(s.fetches, 0);
  CHECK_EQ(s.caches, 0);

  /* Then hotset's. */
  REQUIRE(sqlite3_shutdown() == SQLITE_OK);
  REQUIRE(hotset_sqlite_install_ex(&o) == SQLITE_OK);
  REQUIRE(sqlite3_initialize() == SQLITE_OK);
  run_in(top, "hotset", got);
  check_parts("hotset", ref, got);
  hotset_sqlite_stats_get(&s);
  printf("hotset: caches %llu fetches %llu hits %llu misses %llu creates %llu refusals %llu "
         "evictions %llu overflows %llu discards %llu scan_fetches %llu\n",
         (unsigned long long)s.caches, (unsigned long long)s.fetches, (unsigned long long)s.hits,
         (unsigned long long)s.misses, (unsigned long long)s.creates,
         (unsigned long long)s.refusals, (unsigned long long)s.evictions,
         (unsigned long long)s.overflows, (unsigned long long)s.discards,
         (unsigned long long)s.scan_fetches);
  /* Every connection's main database, the temp database, the in-memory
   * one: a cache each. */
  CHECK(s.caches >= 1 + 1 + 1 + 3 + NTHREADS);
  CHECK(s.fetches > 0);
  CHECK_EQ(s.fetches, s.hits + s.misses);
  /* The databases outgrow their caches: pages were given up and read again. */
  CHECK(s.evictions > 0);
  CHECK(s.discards > 0);
  /* Big transactions in small caches: the 90 % rule refused creates (and
   * SQLite spilled), and with everything pinned, overflow frames. */
  CHECK(s.refusals > 0);
  CHECK(s.overflows > 0);
  if (o.scan_run)
    CHECK(s.scan_fetches > 0);
  else
    CHECK_EQ(s.scan_fetches, 0);

  /* SQLite's own cache back: same answers, and hotset sees nothing more. */
  REQUIRE(sqlite3_shutdown() == SQLITE_OK);
  CHECK_EQ(hotset_sqlite_uninstall(), SQLITE_OK);
  REQUIRE(sqlite3_initialize() == SQLITE_OK);
  hotset_sqlite_stats_reset();
  run_in(top, "own-again", again);
  check_parts("own cache again", ref, again);
  hotset_sqlite_stats_get(&s);
  CHECK_EQ(s.fetches, 0);
  CHECK_EQ(s.caches, 0);

  sqlite3_shutdown();
  testdir_remove(top);
  return check_finish();
}
