/*
 * test_sqlite_crash — a process killed in the middle of a transaction on
 * hotset's page cache leaves a database SQLite recovers: a forked child
 * commits transactions one by one through the adapter, telling the parent
 * each commit through a pipe, then starts one more that outgrows the cache
 * (so hotset's cache refuses to grow and SQLite spills dirty pages: into
 * the database file with the rollback journal holding the way back, or
 * into the WAL), says so, and is killed with SIGKILL. The file the spill
 * went to must have grown past its size at the last commit. The parent
 * reopens the database through the adapter: integrity_check says ok, and
 * exactly the committed transactions are there, whole. Once with the
 * rollback journal, once with the WAL.
 */
#include "check.h"
#include "hotset_sqlite.h"
#include "killed_child.h"
#include "sqlite_util.h"
#include "testdir.h"

#include <sys/stat.h>

enum { COMMITS = 5, ROWS_PER_TX = 400 };

typedef struct crash_ctx {
  char path[600];
  const char *journal_mode;
} crash_ctx;

/* What the child reports: the transactions it committed, the size of the
 * file the next transaction's spilled pages go to (the database with the
 * rollback journal, the WAL with WAL), then 1 once that transaction is
 * under way. */
typedef struct crash_report { /* int64_t only: sent field by field, no padding */
  int64_t committed[COMMITS];
  int64_t committed_bytes;
  int64_t mid_transaction;
} crash_report;

/* Where a spill writes: the database itself, or its WAL. */
static void spill_file(const crash_ctx *c, char *out, size_t len) {
  snprintf(out, len, "%s%s", c->path, strcmp(c->journal_mode, "wal") ? "" : "-wal");
}

static int64_t file_bytes(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 ? (int64_t)st.st_size : -1;
}

static void insert_tx_rows(digest *d, sqlite3 *db, int tx) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db, "INSERT INTO t(tx, n, pad) VALUES (?, ?, zeroblob(700))", -1, &st,
                         NULL) != SQLITE_OK) {
    digest_error(d, "prepare", db);
    return;
  }
  for (int n = 0; n < ROWS_PER_TX; n++) {
    sqlite3_bind_int(st, 1, tx);
    sqlite3_bind_int(st, 2, n);
    digest_step(d, db, st, "insert");
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
}

static void child(void *p, int out) {
  crash_ctx *c = p;
  digest d;
  digest_init(&d);
  sqlite3 *db = NULL;
  if (sqlite3_open(c->path, &db) != SQLITE_OK) _exit(2);
  char pragma[100];
  snprintf(pragma, sizeof pragma, "PRAGMA journal_mode = %s", c->journal_mode);
  sql(&d, db, pragma);
  /* A cache far smaller than one transaction: SQLite must spill. */
  sql(&d, db, "PRAGMA cache_size = 30");
  sql(&d, db, "CREATE TABLE t(tx INTEGER, n INTEGER, pad BLOB)");
  for (int64_t tx = 1; tx <= COMMITS; tx++) {
    sql(&d, db, "BEGIN");
    insert_tx_rows(&d, db, (int)tx);
    sql(&d, db, "COMMIT");
    if (d.errors) _exit(3);
    killed_child_send(out, &tx, sizeof tx, 4);
  }
  char spill[640];
  spill_file(c, spill, sizeof spill);
  int64_t bytes = file_bytes(spill);
  killed_child_send(out, &bytes, sizeof bytes, 7);
  sql(&d, db, "BEGIN");
  insert_tx_rows(&d, db, COMMITS + 1);
  sql(&d, db, "UPDATE t SET n = -n WHERE tx = 1");
  if (d.errors) _exit(5);
  int64_t mid = 1;
  /* Killed right after this, the transaction open: no COMMIT, no ROLLBACK,
   * no close. */
  killed_child_send(out, &mid, sizeof mid, 6);
}

static void crash_once(const char *dir, const char *journal_mode) {
  crash_ctx c = {.journal_mode = journal_mode};
  snprintf(c.path, sizeof c.path, "%s/crash-%s.db", dir, journal_mode);
  crash_report r;
  memset(&r, 0, sizeof r);
  CHECK(run_killed_child(child, &c, &r, sizeof r));
  for (int i = 0; i < COMMITS; i++) CHECK_EQ(r.committed[i], i + 1);
  CHECK_EQ(r.mid_transaction, 1);

  /* The cache was too small for the transaction, so SQLite spilled it:
   * uncommitted pages reached the database (a hot journal holds the way
   * back) or the WAL (frames past the last commit). */
  char spill[640];
  spill_file(&c, spill, sizeof spill);
  CHECK(r.committed_bytes > 0);
  if (file_bytes(spill) <= r.committed_bytes)
    fprintf(stderr, "%s: %s did not grow past %lld bytes: nothing spilled\n", journal_mode, spill,
            (long long)r.committed_bytes);
  CHECK(file_bytes(spill) > r.committed_bytes);
  if (strcmp(journal_mode, "wal") != 0) {
    char journal[640];
    snprintf(journal, sizeof journal, "%s-journal", c.path);
    CHECK(file_bytes(journal) > 0);
  }

  digest d;
  digest_init(&d);
  sqlite3 *db = NULL;
  REQUIRE(sqlite3_open(c.path, &db) == SQLITE_OK);
  integrity(&d, db);
  CHECK_EQ(d.integrity_ok, 1);
  sqlite3_stmt *st = NULL;
  REQUIRE(sqlite3_prepare_v2(db,
                             "SELECT tx, count(*), min(n), max(n), count(DISTINCT n) FROM t "
                             "GROUP BY tx ORDER BY tx",
                             -1, &st, NULL) == SQLITE_OK);
  int seen = 0;
  while (sqlite3_step(st) == SQLITE_ROW) {
    seen++;
    CHECK_EQ(sqlite3_column_int(st, 0), seen);
    CHECK_EQ(sqlite3_column_int(st, 1), ROWS_PER_TX);
    CHECK_EQ(sqlite3_column_int(st, 2), 0); /* the unfinished UPDATE is gone */
    CHECK_EQ(sqlite3_column_int(st, 3), ROWS_PER_TX - 1);
    CHECK_EQ(sqlite3_column_int(st, 4), ROWS_PER_TX);
  }
  sqlite3_finalize(st);
  CHECK_EQ(seen, COMMITS);
  if (d.errors) fprintf(stderr, "%s: %s\n", journal_mode, d.first_error);
  CHECK_EQ(d.errors, 0);
  sqlite3_close(db);
}

int main(void) {
  char dir[512];
  testdir_make(dir, sizeof dir, "sqlite-crash");
  hotset_sqlite_options o;
  hotset_sqlite_options_init(&o);
  o.stats_at_exit = false;
  REQUIRE(hotset_sqlite_install_ex(&o) == SQLITE_OK);
  crash_once(dir, "delete");
  crash_once(dir, "wal");
  /* The parent's reopening went through hotset too. */
  hotset_sqlite_stats s;
  hotset_sqlite_stats_get(&s);
  CHECK(s.caches >= 2);
  CHECK(s.fetches > 0);
  sqlite3_shutdown();
  testdir_remove(dir);
  return check_finish();
}
