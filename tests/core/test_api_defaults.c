/*
 * test_api_defaults — the defaults docs/api.md and hotset/pool.h promise:
 * page checksums on for a new data directory opened with a log
 * (HS_CHECKSUMS_DEFAULT, hs_pool_options_init's), off without one; an
 * existing directory keeps its own setting under the default, and an
 * explicit setting that contradicts it is refused; NULL options are the
 * defaults where no field is required.
 */
#include "check.h"
#include "hotset/control.h"
#include "hotset/pool.h"
#include "hotset/storage.h"
#include "hotset/strategy.h"
#include "hotset/wal.h"
#include "testdir.h"

#include <stdio.h>

/* Opens a pool on root/data (with root/wal as its log if with_log) with
 * `checksums`, closes it, and returns what hs_pool_open said. */
static hs_status open_close(const char *root, bool with_log, hs_checksums checksums,
                            bool make_relation) {
  char data[300], wal_dir[300];
  snprintf(data, sizeof data, "%s/data", root);
  snprintf(wal_dir, sizeof wal_dir, "%s/wal", root);
  hs_wal *wal = NULL;
  if (with_log) {
    hs_wal_options wo;
    hs_wal_options_init(&wo);
    wo.dir = wal_dir;
    wo.segment_bytes = 1u << 20;
    REQUIRE(hs_wal_open(&wo, &wal) == HS_OK);
  }
  hs_pool_options po;
  hs_pool_options_init(&po);
  po.dir = data;
  po.pool_pages = 16;
  po.wal = wal;
  po.checksums = checksums;
  hs_pool *pool = NULL;
  hs_status st = hs_pool_open(&po, &pool);
  if (st == HS_OK) {
    if (make_relation) REQUIRE(hs_smgr_create(hs_pool_smgr(pool), 1, HS_FORK_MAIN) == HS_OK);
    REQUIRE(hs_pool_close(pool) == HS_OK);
  }
  if (wal) REQUIRE(hs_wal_close(wal) == HS_OK);
  return st;
}

static bool dir_checksums(const char *root) {
  char data[300];
  snprintf(data, sizeof data, "%s/data", root);
  hs_control c;
  REQUIRE(hs_control_read(data, &c) == HS_OK);
  return c.checksums;
}

static void test_checksums_default(void) {
  hs_pool_options po;
  hs_pool_options_init(&po);
  CHECK_EQ(po.checksums, HS_CHECKSUMS_DEFAULT);

  char a[256], b[256], c[256];
  /* A new directory with a log: on. Reopened under the default: still on;
   * explicitly off: refused, naming the option. */
  testdir_make(a, sizeof a, "defaults-log");
  CHECK_OK(open_close(a, true, HS_CHECKSUMS_DEFAULT, true));
  CHECK(dir_checksums(a));
  CHECK_OK(open_close(a, true, HS_CHECKSUMS_DEFAULT, false));
  CHECK(dir_checksums(a));
  CHECK_ST(open_close(a, true, HS_CHECKSUMS_OFF, false), HS_ERR_INVALID);
  CHECK_CONTAINS(hs_last_error(), "checksums");
  testdir_remove(a);

  /* A new directory without a log: off; it keeps that when a log comes. */
  testdir_make(b, sizeof b, "defaults-nolog");
  CHECK_OK(open_close(b, false, HS_CHECKSUMS_DEFAULT, true));
  CHECK(!dir_checksums(b));
  CHECK_OK(open_close(b, true, HS_CHECKSUMS_DEFAULT, false));
  CHECK(!dir_checksums(b));
  testdir_remove(b);

  /* Explicit settings win on a new directory; false and true still mean
   * off and on (0.1 programs set a bool); an unknown value is refused. */
  testdir_make(c, sizeof c, "defaults-explicit");
  CHECK_OK(open_close(c, true, HS_CHECKSUMS_OFF, true));
  CHECK(!dir_checksums(c));
  testdir_remove(c);
  testdir_make(c, sizeof c, "defaults-explicit");
  CHECK_OK(open_close(c, false, (hs_checksums) true, true));
  CHECK(dir_checksums(c));
  CHECK_ST(open_close(c, false, (hs_checksums)7, false), HS_ERR_INVALID);
  testdir_remove(c);
}

static void test_null_options(void) {
  char d[256];
  testdir_make(d, sizeof d, "defaults-smgr");
  hs_smgr *smgr = NULL;
  CHECK_OK(hs_smgr_open(d, NULL, &smgr));
  CHECK_EQ(hs_smgr_page_size(smgr), HS_PAGE_SIZE_DEFAULT);
  CHECK(!hs_smgr_direct_io(smgr));
  hs_smgr_close(smgr);
  testdir_remove(d);

  hs_smgr_options so;
  hs_smgr_options_init(&so);
  CHECK_EQ(so.page_size, HS_PAGE_SIZE_DEFAULT);
  CHECK(!so.direct_io);
  hs_strategy_options to;
  hs_strategy_options_init(&to);
  CHECK_EQ(to.rule, HS_RING_FIXED);
  CHECK_EQ(to.bytes, 0);
}

int main(void) {
  test_checksums_default();
  test_null_options();
  return check_finish();
}
