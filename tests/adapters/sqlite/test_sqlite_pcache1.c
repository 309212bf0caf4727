/*
 * test_sqlite_pcache1 — hotset's page cache counts and spends as SQLite's
 * own (pcache1) does, judged against pcache1 itself in the same process:
 *
 *  1. The same calls, the same answers. Random sequences of xFetch with
 *     createFlag 1 and 2 (always new keys, so the answer cannot depend on
 *     which page a policy chose to recycle), xUnpin with and without
 *     discard, xCachesize from 0 to 40, xShrink and xTruncate (above the
 *     pinned pages, as SQLite calls it) go to
 *     pcache1's methods and to hotset's; after every call both must give
 *     the same xPagecount, and every createFlag-1 fetch must be refused by
 *     both or by neither.
 *  2. What SQLite shows. cache_size 0 and 1 inside a transaction (SQLite's
 *     cache.test 2.3 and 2.4): the pages the cache holds after each step
 *     (SQLITE_DBSTATUS_CACHE_USED, which SQLite computes from xPagecount),
 *     and whether a second connection can still read — it cannot once the
 *     first spilled a page and took the EXCLUSIVE lock. Equal on both.
 *  3. Memory. Page memory is SQLite's: sqlite3_memory_used for a 2,000-page
 *     cache within ±25 % of pcache1's; a 1 MiB soft heap limit holds
 *     (recycling instead of growing); allocations that fail (SQLite's OOM
 *     injection goes through the allocator installed with
 *     SQLITE_CONFIG_MALLOC) make the statement fail with SQLITE_NOMEM, and
 *     the database works again once memory is back.
 */
#include "check.h"
#include "hotset_sqlite.h"
#include "sqlite_util.h"
#include "testdir.h"

#include <stdatomic.h>

static char dir[4096];

/* ---- 1. the methods, side by side ------------------------------------------ */

typedef struct side {
  const sqlite3_pcache_methods2 *m;
  sqlite3_pcache *c;
  sqlite3_pcache_page *pinned[64];
  unsigned keys[64];
  int npinned;
} side;

static bool same_calls(const sqlite3_pcache_methods2 *stock, const sqlite3_pcache_methods2 *ours,
                       int page_size, uint64_t seed) {
  side s[2] = {{.m = stock}, {.m = ours}};
  for (int i = 0; i < 2; i++) {
    s[i].c = s[i].m->xCreate(page_size, 120, 1);
    REQUIRE(s[i].c);
    s[i].m->xCachesize(s[i].c, 10);
  }
  unsigned next_key = 1;
  bool ok = true;
  for (int step = 0; step < 3000 && ok; step++) {
    uint64_t r = rng_next(&seed) % 100;
    char what[96];
    if (r < 55) { /* a new page */
      int flag = rng_next(&seed) % 3 ? 1 : 2;
      unsigned key = next_key++;
      snprintf(what, sizeof what, "xFetch(%u, %d)", key, flag);
      bool got[2];
      for (int i = 0; i < 2; i++) {
        sqlite3_pcache_page *p = s[i].npinned < 64 ? s[i].m->xFetch(s[i].c, key, flag) : NULL;
        got[i] = p != NULL;
        if (p) {
          memset(p->pBuf, (int)key, (size_t)page_size);
          s[i].keys[s[i].npinned] = key;
          s[i].pinned[s[i].npinned++] = p;
        }
      }
      if (got[0] != got[1]) {
        fprintf(stderr, "step %d %s: pcache1 %s, hotset %s\n", step, what,
                got[0] ? "gave a page" : "refused", got[1] ? "gave a page" : "refused");
        ok = false;
      }
    } else if (r < 90) { /* let go of a pinned page (the same one on both) */
      if (!s[0].npinned) continue;
      int k = (int)(rng_next(&seed) % (uint64_t)s[0].npinned);
      int discard = rng_next(&seed) % 8 == 0;
      snprintf(what, sizeof what, "xUnpin(%u, %d)", s[0].keys[k], discard);
      for (int i = 0; i < 2; i++) {
        unsigned char *b = s[i].pinned[k]->pBuf;
        CHECK(b[0] == (s[i].keys[k] & 0xff) && b[page_size - 1] == (s[i].keys[k] & 0xff));
        s[i].m->xUnpin(s[i].c, s[i].pinned[k], discard);
        s[i].pinned[k] = s[i].pinned[s[i].npinned - 1];
        s[i].keys[k] = s[i].keys[--s[i].npinned];
      }
    } else if (r < 96) {
      int n = (int)(rng_next(&seed) % 41);
      snprintf(what, sizeof what, "xCachesize(%d)", n);
      for (int i = 0; i < 2; i++) s[i].m->xCachesize(s[i].c, n);
    } else if (r < 99) {
      snprintf(what, sizeof what, "xShrink");
      for (int i = 0; i < 2; i++) s[i].m->xShrink(s[i].c);
    } else { /* cut the newest keys off, above every pinned one: SQLite
              * makes its pages clean and unpinned before it truncates */
      unsigned limit = next_key > 20 ? next_key - 10 : 1;
      for (int k = 0; k < s[0].npinned; k++)
        if (s[0].keys[k] >= limit) limit = s[0].keys[k] + 1;
      snprintf(what, sizeof what, "xTruncate(%u)", limit);
      for (int i = 0; i < 2; i++) s[i].m->xTruncate(s[i].c, limit);
    }
    int n0 = s[0].m->xPagecount(s[0].c), n1 = s[1].m->xPagecount(s[1].c);
    if (ok && n0 != n1) {
      fprintf(stderr, "step %d, after %s: pcache1 holds %d pages, hotset %d (%d pinned)\n", step,
              what, n0, n1, s[0].npinned);
      ok = false;
    }
  }
  for (int i = 0; i < 2; i++) s[i].m->xDestroy(s[i].c);
  return ok;
}

/* ---- 2. what SQLite shows ------------------------------------------------- */

typedef struct observed {
  int cache_used[8]; /* bytes, per step */
  int other_reads[8];
  int n;
} observed;

static int cache_used(sqlite3 *db) {
  int cur = 0, hi = 0;
  REQUIRE(sqlite3_db_status(db, SQLITE_DBSTATUS_CACHE_USED, &cur, &hi, 0) == SQLITE_OK);
  return cur;
}

/* Whether `other` can read t1 now (SQLITE_OK) or is locked out. */
static int try_read(sqlite3 *other) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(other, "SELECT count(*) FROM t1", -1, &st, NULL);
  if (rc == SQLITE_OK) {
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) rc = SQLITE_OK;
  }
  sqlite3_finalize(st);
  return rc;
}

static void note(observed *o, sqlite3 *db, sqlite3 *other) {
  REQUIRE(o->n < 8);
  o->cache_used[o->n] = cache_used(db);
  o->other_reads[o->n] = try_read(other);
  o->n++;
}

/* cache.test's 2.3 (cache_size 1) and 2.4 (0), on a fresh database. */
static void spill_story(int cache_size, observed *o) {
  char path[4200];
  snprintf(path, sizeof path, "%s/spill-%d.db", dir, cache_size);
  unlink(path);
  digest d;
  digest_init(&d);
  sqlite3 *db = NULL, *other = NULL;
  REQUIRE(sqlite3_open(path, &db) == SQLITE_OK);
  sql(&d, db,
      "PRAGMA auto_vacuum=OFF; PRAGMA journal_mode=DELETE; CREATE TABLE t1(a, b); "
      "CREATE TABLE t2(c, d); INSERT INTO t1 VALUES('x', 'y'); INSERT INTO t2 VALUES('i', 'j')");
  REQUIRE(sqlite3_open(path, &other) == SQLITE_OK);
  sqlite3_busy_timeout(other, 0);
  char pragma[64];
  snprintf(pragma, sizeof pragma, "PRAGMA cache_size = %d", cache_size);
  o->n = 0;
  sql(&d, db, pragma);
  sql(&d, db, "BEGIN; INSERT INTO t1 VALUES(1, 2)");
  note(o, db, other); /* RESERVED: the other connection still reads */
  sql(&d, db, "INSERT INTO t2 VALUES(1, 2)");
  note(o, db, other); /* a spill: EXCLUSIVE */
  sql(&d, db, "COMMIT");
  note(o, db, other);
  sql(&d, db, "SELECT * FROM t1 UNION SELECT * FROM t2");
  note(o, db, other);
  if (d.errors) fprintf(stderr, "cache_size %d: %s\n", cache_size, d.first_error);
  CHECK_EQ(d.errors, 0);
  sqlite3_close(other);
  sqlite3_close(db);
}

/* ---- 3. memory ------------------------------------------------------------- */

/* The allocator SQLite runs on: the default one, wrapped so that blocks of
 * at least a page can be made to fail, and counted. */
static sqlite3_mem_methods real_mem;
static atomic_int fail_big;
static atomic_llong big_allocs;

static void *wrap_malloc(int n) {
  if (n >= 4096) {
    if (atomic_load(&fail_big)) return NULL;
    atomic_fetch_add(&big_allocs, 1);
  }
  return real_mem.xMalloc(n);
}

static void *wrap_realloc(void *p, int n) {
  if (n >= 4096 && atomic_load(&fail_big)) return NULL;
  return real_mem.xRealloc(p, n);
}

static void install_wrapped_allocator(void) {
  REQUIRE(sqlite3_config(SQLITE_CONFIG_GETMALLOC, &real_mem) == SQLITE_OK);
  sqlite3_mem_methods w = real_mem;
  w.xMalloc = wrap_malloc;
  w.xRealloc = wrap_realloc;
  REQUIRE(sqlite3_config(SQLITE_CONFIG_MALLOC, &w) == SQLITE_OK);
}

#define BIG_ROWS 3000 /* about 3,100 pages of 4 KiB */

static void make_big(const char *path) {
  unlink(path);
  digest d;
  digest_init(&d);
  sqlite3 *db = NULL;
  REQUIRE(sqlite3_open(path, &db) == SQLITE_OK);
  sql(&d, db,
      "PRAGMA page_size = 4096; PRAGMA journal_mode = DELETE; CREATE TABLE big(x, pad); "
      "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 3000) "
      "INSERT INTO big SELECT i, randomblob(3900) FROM c");
  CHECK_EQ(d.errors, 0);
  sqlite3_close(db);
}

typedef struct memory_seen {
  long long used_full;    /* after reading everything with cache_size 2000 */
  long long used_limited; /* the same under a 1 MiB soft heap limit */
  long long big_allocs;   /* page-sized allocations through SQLite's allocator */
  int nomem_rc, after_rc;
} memory_seen;

static long long sum_big(sqlite3 *db, int *rc_out) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db, "SELECT sum(x), sum(length(pad)) FROM big", -1, &st, NULL);
  long long sum = -1;
  if (rc == SQLITE_OK) {
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
      sum = sqlite3_column_int64(st, 0);
      rc = SQLITE_OK;
    }
  }
  sqlite3_finalize(st);
  if (rc_out) *rc_out = rc;
  return sum;
}

static void memory_story(const char *path, memory_seen *m) {
  sqlite3 *db = NULL;
  sqlite3_soft_heap_limit64(0);
  long long base_allocs = atomic_load(&big_allocs);
  REQUIRE(sqlite3_open(path, &db) == SQLITE_OK);
  digest d;
  digest_init(&d);
  sql(&d, db, "PRAGMA cache_size = 2000");
  CHECK_EQ(sum_big(db, NULL), (long long)BIG_ROWS * (BIG_ROWS + 1) / 2);
  m->used_full = sqlite3_memory_used();
  m->big_allocs = atomic_load(&big_allocs) - base_allocs;
  sqlite3_close(db);

  sqlite3_soft_heap_limit64(1 << 20);
  REQUIRE(sqlite3_open(path, &db) == SQLITE_OK);
  sql(&d, db, "PRAGMA cache_size = 2000");
  CHECK_EQ(sum_big(db, NULL), (long long)BIG_ROWS * (BIG_ROWS + 1) / 2);
  m->used_limited = sqlite3_memory_used();
  sqlite3_close(db);
  sqlite3_soft_heap_limit64(0);

  /* Out of memory for pages: the statement fails, nothing breaks. */
  REQUIRE(sqlite3_open(path, &db) == SQLITE_OK);
  sql(&d, db, "PRAGMA cache_size = 2000");
  atomic_store(&fail_big, 1);
  (void)sum_big(db, &m->nomem_rc);
  atomic_store(&fail_big, 0);
  CHECK_EQ(sum_big(db, &m->after_rc), (long long)BIG_ROWS * (BIG_ROWS + 1) / 2);
  integrity(&d, db);
  CHECK_EQ(d.integrity_ok, 1);
  sqlite3_close(db);
  if (d.errors) fprintf(stderr, "memory: %s\n", d.first_error);
  CHECK_EQ(d.errors, 0);
}

int main(void) {
  testdir_make(dir, sizeof dir, "sqlite-pcache1");
  install_wrapped_allocator();

  /* pcache1's methods, taken before hotset's are installed; SQLite then
   * initializes on hotset's, and pcache1 is initialized by hand (it needs
   * SQLite's mutexes, which are there now). */
  sqlite3_pcache_methods2 stock, ours;
  REQUIRE(sqlite3_config(SQLITE_CONFIG_GETPCACHE2, &stock) == SQLITE_OK);
  REQUIRE(hotset_sqlite_install(NULL) == SQLITE_OK);
  REQUIRE(sqlite3_config(SQLITE_CONFIG_GETPCACHE2, &ours) == SQLITE_OK);
  CHECK(ours.xFetch != stock.xFetch);
  REQUIRE(sqlite3_initialize() == SQLITE_OK);
  REQUIRE(stock.xInit(stock.pArg) == SQLITE_OK);
  static const int page_sizes[] = {512, 1024, 4096, 65536};
  for (int p = 0; p < 4; p++)
    for (uint64_t seed = 1; seed <= 8; seed++) {
      bool same = same_calls(&stock, &ours, page_sizes[p], seed * 7919);
      if (!same)
        fprintf(stderr, "page size %d, seed %llu\n", page_sizes[p], (unsigned long long)seed);
      CHECK(same);
    }
  stock.xShutdown(stock.pArg);

  /* SQLite on hotset's cache (installed above), then on its own. */
  char big[4200];
  snprintf(big, sizeof big, "%s/big.db", dir);
  make_big(big);
  observed spills[2][2];
  memory_seen mem[2];
  for (int on_hotset = 1; on_hotset >= 0; on_hotset--) {
    if (!on_hotset) {
      REQUIRE(sqlite3_shutdown() == SQLITE_OK);
      REQUIRE(hotset_sqlite_uninstall() == SQLITE_OK);
    }
    hotset_sqlite_stats_reset();
    for (int cs = 0; cs < 2; cs++) spill_story(cs, &spills[on_hotset][cs]);
    memory_story(big, &mem[on_hotset]);
    hotset_sqlite_stats s;
    hotset_sqlite_stats_get(&s);
    CHECK_EQ(s.fetches > 0, on_hotset); /* the cache meant was the one used */
  }
  for (int cs = 0; cs < 2; cs++)
    for (int i = 0; i < spills[0][cs].n; i++) {
      printf("cache_size %d step %d: cache used %d / %d bytes, other connection %s / %s "
             "(pcache1 / hotset)\n",
             cs, i, spills[0][cs].cache_used[i], spills[1][cs].cache_used[i],
             spills[0][cs].other_reads[i] ? "locked out" : "reads",
             spills[1][cs].other_reads[i] ? "locked out" : "reads");
      CHECK_EQ(spills[1][cs].cache_used[i], spills[0][cs].cache_used[i]);
      CHECK_EQ(spills[1][cs].other_reads[i], spills[0][cs].other_reads[i]);
    }
  /* SQLite's own story: RESERVED, then a spill to EXCLUSIVE. */
  for (int cs = 0; cs < 2; cs++) {
    CHECK_EQ(spills[0][cs].other_reads[0], SQLITE_OK);
    CHECK(spills[0][cs].other_reads[1] != SQLITE_OK);
  }
  printf("memory used, cache_size 2000: pcache1 %lld, hotset %lld bytes (%.2f)\n", mem[0].used_full,
         mem[1].used_full, (double)mem[1].used_full / (double)mem[0].used_full);
  printf("memory used under a 1 MiB soft heap limit: pcache1 %lld, hotset %lld bytes\n",
         mem[0].used_limited, mem[1].used_limited);
  printf("page-sized allocations through SQLite: pcache1 %lld, hotset %lld\n", mem[0].big_allocs,
         mem[1].big_allocs);
  CHECK(mem[1].used_full * 4 >= mem[0].used_full * 3 &&
        mem[1].used_full * 4 <= mem[0].used_full * 5);
  CHECK(mem[0].used_full > 4 * (1 << 20)); /* the check above compares something */
  CHECK(mem[1].used_limited <= (1 << 20) * 5 / 4);
  CHECK(mem[1].big_allocs >= 1000);
  for (int i = 0; i < 2; i++) {
    CHECK_EQ(mem[i].nomem_rc, SQLITE_NOMEM);
    CHECK_EQ(mem[i].after_rc, SQLITE_OK);
  }
  sqlite3_shutdown();
  testdir_remove(dir);
  return check_finish();
}
