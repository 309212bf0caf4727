/*
 * test_sqlite_install — installing and uninstalling hotset's page cache:
 * a policy hotset does not know is refused with one line on stderr and
 * SQLite's own cache stays; installing once SQLite is initialized answers
 * SQLITE_MISUSE and SQLite goes on working (the LD_PRELOAD constructor's
 * path says so on stderr); uninstalling puts SQLite's own cache back; the
 * environment variables set the options; the statistics add up and reset.
 */
#include "check.h"
#include "hotset_sqlite.h"
#include "hotset_sqlite_internal.h"
#include "sqlite_util.h"

#include <limits.h>

static char err[4096];

/* A small query on an in-memory database; its result must be right
 * whichever cache serves it. */
static void query_works(const char *label) {
  digest d;
  digest_init(&d);
  sqlite3 *db = NULL;
  REQUIRE(sqlite3_open(":memory:", &db) == SQLITE_OK);
  sql(&d, db,
      "CREATE TABLE t(x); WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c "
      "WHERE i < 2000) INSERT INTO t SELECT i FROM c");
  sqlite3_stmt *st = NULL;
  REQUIRE(sqlite3_prepare_v2(db, "SELECT sum(x) FROM t", -1, &st, NULL) == SQLITE_OK);
  CHECK_EQ(sqlite3_step(st), SQLITE_ROW);
  CHECK_EQ(sqlite3_column_int64(st, 0), 2000 * 2001 / 2);
  sqlite3_finalize(st);
  if (d.errors) fprintf(stderr, "%s: %s\n", label, d.first_error);
  CHECK_EQ(d.errors, 0);
  sqlite3_close(db);
}

static uint64_t fetches_now(void) {
  hotset_sqlite_stats s;
  hotset_sqlite_stats_get(&s);
  return s.fetches;
}

static void test_environment(void) {
  hotset_sqlite_options o;
  unsetenv("HOTSET_SQLITE_POLICY");
  unsetenv("HOTSET_SQLITE_SCAN");
  unsetenv("HOTSET_SQLITE_STATS");
  hotset_sqlite_options_init(&o);
  CHECK(o.policy == NULL);
  CHECK_EQ(o.scan_run, 32);
  CHECK(!o.stats_at_exit);
  setenv("HOTSET_SQLITE_POLICY", "arc", 1);
  setenv("HOTSET_SQLITE_SCAN", "off", 1);
  setenv("HOTSET_SQLITE_STATS", "1", 1);
  hotset_sqlite_options_init(&o);
  CHECK(o.policy && strcmp(o.policy, "arc") == 0);
  CHECK_EQ(o.scan_run, 0);
  CHECK(o.stats_at_exit);
  setenv("HOTSET_SQLITE_SCAN", "17", 1);
  setenv("HOTSET_SQLITE_STATS", "0", 1);
  hotset_sqlite_options_init(&o);
  CHECK_EQ(o.scan_run, 17);
  CHECK(!o.stats_at_exit);
  /* Not a number: said once, the default kept. */
  setenv("HOTSET_SQLITE_SCAN", "lots", 1);
  stderr_catch c;
  stderr_catch_begin(&c);
  hotset_sqlite_options_init(&o);
  stderr_catch_end(&c, err, sizeof err);
  CHECK_EQ(o.scan_run, 32);
  CHECK_CONTAINS(err, "HOTSET_SQLITE_SCAN=lots");
  unsetenv("HOTSET_SQLITE_POLICY");
  unsetenv("HOTSET_SQLITE_SCAN");
  unsetenv("HOTSET_SQLITE_STATS");
}

static sqlite3_pcache_page *fetch(const sqlite3_pcache_methods2 *m, sqlite3_pcache *c, unsigned key,
                                  int flag) {
  return m->xFetch(c, key, flag);
}

/* Fills page `key` with its own number, as SQLite would its content. */
static sqlite3_pcache_page *fetch_new(const sqlite3_pcache_methods2 *m, sqlite3_pcache *c,
                                      unsigned key) {
  sqlite3_pcache_page *p = fetch(m, c, key, 2);
  REQUIRE(p);
  memset(p->pBuf, (int)(key & 0xff), 1024);
  memset(p->pExtra, 0x5a, 48);
  return p;
}

static bool page_is(const sqlite3_pcache_page *p, unsigned key) {
  const unsigned char *b = p->pBuf;
  return b[0] == (key & 0xff) && b[1023] == (key & 0xff);
}

static bool zeroed(const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++)
    if (b[i]) return false;
  return true;
}

/* The process's resident memory, KiB (-1 if unknown). */
static long rss_kib(void) {
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  long kib = -1;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "VmRSS: %ld kB", &kib) == 1) break;
  fclose(f);
  return kib;
}

static void test_methods(void) {
  sqlite3_pcache_methods2 m;
  REQUIRE(sqlite3_config(SQLITE_CONFIG_GETPCACHE2, &m) == SQLITE_OK);
  REQUIRE(m.xInit(m.pArg) == SQLITE_OK);
  sqlite3_pcache *c = m.xCreate(1024, 48, 1);
  REQUIRE(c);
  m.xCachesize(c, 10);
  CHECK(fetch(&m, c, 1, 0) == NULL);
  sqlite3_pcache_page *p1 = fetch(&m, c, 1, 1);
  REQUIRE(p1);
  /* pcache.c reads its first pointer (PgHdr.pPage: NULL, a new page) and
   * sets up the rest itself; pcache1 zeroes that much and no more. */
  CHECK(zeroed(p1->pExtra, sizeof(void *)));
  memset(p1->pBuf, 1, 1024);
  memset(p1->pExtra, 0x5a, 48);
  m.xUnpin(c, p1, 0);
  /* Unpinned, kept: the same page with its content. */
  sqlite3_pcache_page *again = fetch(&m, c, 1, 0);
  CHECK(again == p1);
  CHECK(again && page_is(again, 1));
  CHECK_EQ(m.xPagecount(c), 1);
  /* Unpinned with discard: gone. */
  m.xUnpin(c, p1, 1);
  CHECK(fetch(&m, c, 1, 0) == NULL);
  CHECK_EQ(m.xPagecount(c), 0);

  /* Every page pinned: createFlag 1 says no, 2 makes one anyway. */
  sqlite3_pcache_page *pinned[11];
  for (unsigned k = 1; k <= 10; k++) pinned[k - 1] = fetch_new(&m, c, k);
  CHECK(fetch(&m, c, 11, 1) == NULL);
  pinned[10] = fetch(&m, c, 11, 2);
  CHECK(pinned[10] != NULL);
  CHECK_EQ(m.xPagecount(c), 11);
  for (unsigned k = 1; k <= 11; k++)
    if (pinned[k - 1]) m.xUnpin(c, pinned[k - 1], 0);
  /* Unpinned again (the first unpinned went: the cache held more than its
   * 10), createFlag 1 may recycle. */
  sqlite3_pcache_page *p12 = fetch(&m, c, 12, 1);
  CHECK(p12 != NULL);
  if (p12) {
    CHECK(zeroed(p12->pExtra, sizeof(void *))); /* a recycled frame too (it held 0x5a) */
    m.xUnpin(c, p12, 1);
  }

  /* Rekey onto a cached key: that page is dropped, the moved one answers. */
  sqlite3_pcache_page *a = fetch(&m, c, 3, 0), *b = fetch(&m, c, 4, 0);
  if (a && b) {
    m.xUnpin(c, b, 0);
    CHECK(page_is(a, 3));
    m.xRekey(c, a, 3, 4);
    CHECK(fetch(&m, c, 3, 0) == NULL);
    sqlite3_pcache_page *moved = fetch(&m, c, 4, 0);
    CHECK(moved == a);
    CHECK(moved && page_is(moved, 3));
    m.xUnpin(c, a, 0);
  } else {
    CHECK(!"pages 3 and 4 were still cached");
  }

  /* Truncate drops pages at and past the limit, pinned ones too. Page 2
   * is made again if a recycle took it: the check below needs one low page
   * cached, whichever the policy chose to keep. */
  sqlite3_pcache_page *p2 = fetch(&m, c, 2, 0);
  if (!p2) p2 = fetch_new(&m, c, 2);
  m.xUnpin(c, p2, 0);
  sqlite3_pcache_page *p9 = fetch(&m, c, 9, 2);
  REQUIRE(p9);
  m.xTruncate(c, 5);
  CHECK(fetch(&m, c, 9, 0) == NULL);
  for (unsigned k = 5; k <= 11; k++) CHECK(fetch(&m, c, k, 0) == NULL);
  sqlite3_pcache_page *low = fetch(&m, c, 2, 0);
  CHECK(low && page_is(low, 2));
  if (low) m.xUnpin(c, low, 0);
  m.xShrink(c);
  CHECK(m.xPagecount(c) <= 4);
  m.xDestroy(c);

  /* SQLite's "no limit" (PRAGMA cache_size = 2000000000): memory comes
   * with the pages, not with the number, and nothing is evicted. */
  c = m.xCreate(1024, 48, 1);
  REQUIRE(c);
  long before = rss_kib();
  m.xCachesize(c, INT_MAX);
  long after = rss_kib();
  CHECK(before > 0 && after - before < 64 * 1024);
  for (unsigned k = 1; k <= 5000; k++) {
    sqlite3_pcache_page *p = fetch(&m, c, k, 1);
    CHECK(p != NULL);
    if (p) m.xUnpin(c, p, 0);
  }
  CHECK_EQ(m.xPagecount(c), 5000);
  sqlite3_pcache_page *first = fetch(&m, c, 1, 0);
  CHECK(first != NULL);
  if (first) m.xUnpin(c, first, 0);
  /* And back down: the cache gives up what it holds beyond. */
  m.xCachesize(c, 100);
  CHECK_EQ(m.xPagecount(c), 100);
  m.xDestroy(c);

  /* Not purgeable (an in-memory database): a cache_size of 10 bounds
   * nothing, every page stays until discarded. */
  c = m.xCreate(1024, 48, 0);
  REQUIRE(c);
  m.xCachesize(c, 10);
  for (unsigned k = 1; k <= 100; k++) {
    sqlite3_pcache_page *p = fetch(&m, c, k, 2);
    REQUIRE(p);
    memset(p->pBuf, (int)k, 1024);
  }
  CHECK_EQ(m.xPagecount(c), 100);
  unsigned intact = 0;
  for (unsigned k = 1; k <= 100; k++) {
    sqlite3_pcache_page *p = fetch(&m, c, k, 0);
    intact += p && page_is(p, k);
  }
  CHECK_EQ(intact, 100);
  sqlite3_pcache_page *p50 = fetch(&m, c, 50, 0);
  if (p50) m.xUnpin(c, p50, 1);
  CHECK(fetch(&m, c, 50, 0) == NULL);
  CHECK_EQ(m.xPagecount(c), 99);
  m.xDestroy(c); /* with its pages still pinned: all freed */
  m.xShutdown(m.pArg);
}

int main(void) {
  test_environment();

  /* A policy hotset does not know: refused, said in one line, nothing
   * installed. */
  stderr_catch c;
  stderr_catch_begin(&c);
  CHECK_EQ(hotset_sqlite_install("bogus"), SQLITE_ERROR);
  stderr_catch_end(&c, err, sizeof err);
  CHECK_CONTAINS(err, "\"bogus\"");
  CHECK_CONTAINS(err, "SQLite's own page cache stays");
  CHECK(strchr(err, '\n') == err + strlen(err) - 1);
  /* belady needs the future, which no cache knows. */
  stderr_catch_begin(&c);
  CHECK_EQ(hotset_sqlite_install("belady"), SQLITE_ERROR);
  stderr_catch_end(&c, err, sizeof err);
  CHECK_CONTAINS(err, "belady");
  query_works("after a refused policy");
  CHECK_EQ(fetches_now(), 0);

  /* Installed after the fact: SQLITE_MISUSE, SQLite's own cache goes on. */
  CHECK_EQ(hotset_sqlite_install(NULL), SQLITE_MISUSE);
  query_works("after SQLITE_MISUSE");
  CHECK_EQ(fetches_now(), 0);
  /* The constructor's path says so in one line. */
  stderr_catch_begin(&c);
  CHECK_EQ(hotset_sqlite_preload_install(), SQLITE_MISUSE);
  stderr_catch_end(&c, err, sizeof err);
  CHECK_CONTAINS(err, "not installed: SQLite was initialized before");
  CHECK(strchr(err, '\n') == err + strlen(err) - 1);
  query_works("after the constructor's SQLITE_MISUSE");
  CHECK_EQ(fetches_now(), 0);

  /* Installed properly: SQLite's pages go through hotset. */
  REQUIRE(sqlite3_shutdown() == SQLITE_OK);
  CHECK_EQ(hotset_sqlite_install("lru"), SQLITE_OK);
  /* Again with another policy (it must not save hotset's methods as
   * SQLite's own). */
  CHECK_EQ(hotset_sqlite_install("arc"), SQLITE_OK);
  test_methods();
  query_works("on hotset");
  uint64_t fetched = fetches_now();
  CHECK(fetched > 0);
  /* Uninstalling needs SQLite shut down. */
  CHECK_EQ(hotset_sqlite_uninstall(), SQLITE_MISUSE);
  hotset_sqlite_stats_reset();
  CHECK_EQ(fetches_now(), 0);
  query_works("on hotset after a reset");
  CHECK(fetches_now() > 0);

  /* SQLite's own cache back. */
  REQUIRE(sqlite3_shutdown() == SQLITE_OK);
  CHECK_EQ(hotset_sqlite_uninstall(), SQLITE_OK);
  CHECK_EQ(hotset_sqlite_uninstall(), SQLITE_OK); /* nothing left to do */
  hotset_sqlite_stats_reset();
  query_works("after uninstall");
  CHECK_EQ(fetches_now(), 0);

  /* A refused policy leaves an installed hotset as it was. */
  REQUIRE(sqlite3_shutdown() == SQLITE_OK);
  CHECK_EQ(hotset_sqlite_install("clock-sweep"), SQLITE_OK);
  stderr_catch_begin(&c);
  CHECK_EQ(hotset_sqlite_install("nosuchpolicy:x=1"), SQLITE_ERROR);
  stderr_catch_end(&c, err, sizeof err);
  CHECK_CONTAINS(err, "nosuchpolicy");
  query_works("hotset after a refused reinstall");
  CHECK(fetches_now() > 0);
  sqlite3_shutdown();
  return check_finish();
}
