/*
 * tests/test_storage.c — the storage manager (hotset/storage.h) and its fault
 * injection (hotset/fault.h), on real files in a fresh temporary directory.
 *
 * Every page written carries contents derived from a seed, so a read that
 * returns the wrong block, a stale block or zeros is caught. Faults are
 * injected through the public API and checked for status, errno and message.
 */
#include "check.h"
#include "direct_mode.h"
#include "hotset/fault.h"
#include "hotset/storage.h"
#include "testdir.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* hs_smgr_exists, which must not fail here. */
static bool fork_exists(hs_smgr *smgr, hs_relid rel, hs_fork fork) {
  bool exists = false;
  REQUIRE(hs_smgr_exists(smgr, rel, fork, &exists) == HS_OK);
  return exists;
}

#define REL 16384u

typedef struct fixture {
  char dir[PATH_MAX - 64];
  hs_smgr *smgr;
} fixture;

static void fixture_open(fixture *fx, const char *name, uint32_t page_size) {
  testdir_make(fx->dir, sizeof fx->dir, name);
  hs_status st = test_smgr_open(fx->dir, page_size, &fx->smgr);
  REQUIRE(st == HS_OK);
}

static void fixture_close(fixture *fx) {
  hs_smgr_close(fx->smgr);
  testdir_remove(fx->dir);
}

/* The path of a fork's file, as the storage manager names it. */
static void fork_path(const fixture *fx, hs_relid rel, hs_fork fork, char *buf) {
  char name[32];
  hs_smgr_fork_filename(rel, fork, name, sizeof name);
  snprintf(buf, PATH_MAX, "%s/%s", fx->dir, name);
}

static long long file_size(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0 ? (long long)sb.st_size : -1;
}

static uint8_t pattern(uint32_t seed, uint32_t i) {
  return (uint8_t)(seed * 131u + i * 7u + (i >> 8) + 1u);
}

/* A page whose every byte depends on `seed` and its position. */
static void fill_page(uint8_t *p, uint32_t size, uint32_t seed) {
  for (uint32_t i = 0; i < size; i++) p[i] = pattern(seed, i);
}

static bool page_is(const uint8_t *p, uint32_t from, uint32_t to, uint32_t seed) {
  for (uint32_t i = from; i < to; i++)
    if (p[i] != pattern(seed, i)) return false;
  return true;
}

static bool page_is_zero(const uint8_t *p, uint32_t size) {
  for (uint32_t i = 0; i < size; i++)
    if (p[i]) return false;
  return true;
}

/* Creates REL's main fork with n blocks, block b filled from seed b. */
static void make_rel(fixture *fx, uint32_t n) {
  uint32_t ps = hs_smgr_page_size(fx->smgr);
  uint8_t *page = test_page_alloc(ps);
  REQUIRE(page != NULL);
  REQUIRE(hs_smgr_create(fx->smgr, REL, HS_FORK_MAIN) == HS_OK);
  for (uint32_t b = 0; b < n; b++) {
    hs_blockno got = HS_INVALID_BLOCK;
    fill_page(page, ps, b);
    REQUIRE(hs_smgr_extend(fx->smgr, REL, HS_FORK_MAIN, page, &got) == HS_OK);
    REQUIRE(got == b);
  }
  free(page);
}

/* ---- basics ------------------------------------------------------------ */

static void test_open_options(void) {
  char dir[PATH_MAX - 64], path[PATH_MAX];
  hs_smgr *smgr = (hs_smgr *)&smgr; /* must be reset to NULL on failure */
  testdir_make(dir, sizeof dir, "storage-open");

  /* Page size 0 is the default (hs_smgr_options_init's), not an error. */
  CHECK_OK(test_smgr_open(dir, 0, &smgr));
  CHECK_EQ(hs_smgr_page_size(smgr), HS_PAGE_SIZE_DEFAULT);
  hs_smgr_close(smgr);
  const uint32_t bad[] = {1, 512, 1000, 3000, 8193, 131072, 0x80000000u};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    CHECK_ST(test_smgr_open(dir, bad[i], &smgr), HS_ERR_INVALID);
    CHECK(smgr == NULL);
    CHECK_CONTAINS(hs_last_error(), "invalid page size");
  }
  CHECK_ST(test_smgr_open(NULL, 8192, &smgr), HS_ERR_INVALID);
  CHECK_ST(test_smgr_open("", 8192, &smgr), HS_ERR_INVALID);

  /* The last component is created; a missing parent is an error. */
  snprintf(path, sizeof path, "%s/data/", dir);
  CHECK_OK(test_smgr_open(path, 1024, &smgr));
  struct stat sb;
  snprintf(path, sizeof path, "%s/data", dir);
  CHECK(stat(path, &sb) == 0 && S_ISDIR(sb.st_mode));
  CHECK(strcmp(hs_smgr_dir(smgr), path) == 0); /* trailing slash dropped */
  CHECK_EQ(hs_smgr_page_size(smgr), 1024);
  hs_smgr_close(smgr);
  CHECK_OK(test_smgr_open(path, 65536, &smgr)); /* already there: fine */
  hs_smgr_close(smgr);

  snprintf(path, sizeof path, "%s/no/such", dir);
  CHECK_ST(test_smgr_open(path, 8192, &smgr), HS_ERR_NOENT);
  CHECK_EQ(hs_last_errno(), ENOENT);
  CHECK_CONTAINS(hs_last_error(), path);

  /* A file where the directory should be. */
  snprintf(path, sizeof path, "%s/plain", dir);
  int fd = open(path, O_CREAT | O_WRONLY, 0600);
  REQUIRE(fd >= 0);
  close(fd);
  CHECK_ST(test_smgr_open(path, 8192, &smgr), HS_ERR_NOENT);
  CHECK_EQ(hs_last_errno(), ENOTDIR);
  CHECK_CONTAINS(hs_last_error(), path);
  testdir_remove(dir);
}

static void test_filenames(void) {
  char buf[32];
  hs_smgr_fork_filename(16384, HS_FORK_MAIN, buf, sizeof buf);
  CHECK(strcmp(buf, "16384") == 0);
  hs_smgr_fork_filename(16384, HS_FORK_FSM, buf, sizeof buf);
  CHECK(strcmp(buf, "16384_fsm") == 0);
  hs_smgr_fork_filename(7, HS_FORK_VM, buf, sizeof buf);
  CHECK(strcmp(buf, "7_vm") == 0);
  hs_smgr_fork_filename(4294967295u, HS_FORK_INIT, buf, sizeof buf);
  CHECK(strcmp(buf, "4294967295_init") == 0);
  hs_smgr_fork_filename(16384, HS_FORK_FSM, buf, 4);
  CHECK(strcmp(buf, "163") == 0); /* truncated, still terminated */
  /* The inverse takes exactly what the names above are, for every fork. */
  hs_relid rel = 0;
  hs_fork fork = HS_FORK_COUNT;
  static const hs_relid rels[] = {0, 7, 16384, 4294967295u};
  for (size_t i = 0; i < sizeof rels / sizeof rels[0]; i++)
    for (int f = 0; f < HS_FORK_COUNT; f++) {
      hs_smgr_fork_filename(rels[i], (hs_fork)f, buf, sizeof buf);
      CHECK(hs_smgr_parse_fork_filename(buf, &rel, &fork));
      CHECK_EQ(rel, rels[i]);
      CHECK_EQ((int)fork, f);
    }
  static const char *const not_relations[] = {"",
                                              "_vm",
                                              "16384_tmp",
                                              "16384_",
                                              "016384",
                                              "4294967296",
                                              "99999999999",
                                              "16384_vm.bak",
                                              "hotset.control",
                                              "hotset.lock",
                                              "wal",
                                              "16384 ",
                                              "-1",
                                              "+7",
                                              "7_fork4"};
  for (size_t i = 0; i < sizeof not_relations / sizeof not_relations[0]; i++)
    CHECK(!hs_smgr_parse_fork_filename(not_relations[i], NULL, NULL));
  CHECK(!hs_smgr_parse_fork_filename(NULL, NULL, NULL));
  CHECK(strcmp(hs_io_op_name(HS_IO_OPEN), "open") == 0);
  CHECK(strcmp(hs_io_op_name(HS_IO_EXTEND), "extend") == 0);
  CHECK(strcmp(hs_io_op_name(HS_IO_OP_COUNT), "unknown") == 0);
}

/* create, extend, write, read back, nblocks, on every fork. */
static void test_round_trip(uint32_t ps) {
  fixture fx;
  char path[PATH_MAX];
  uint8_t *page = test_page_alloc(ps), *got = test_page_alloc(ps);
  REQUIRE(page && got);
  fixture_open(&fx, "storage-rt", ps);

  for (hs_fork fork = HS_FORK_MAIN; fork < HS_FORK_COUNT; fork++) {
    hs_relid rel = REL + (hs_relid)fork;
    hs_blockno n = 99, b = 99;
    CHECK(!fork_exists(fx.smgr, rel, fork));
    CHECK_OK(hs_smgr_create(fx.smgr, rel, fork));
    CHECK(fork_exists(fx.smgr, rel, fork));
    fork_path(&fx, rel, fork, path);
    CHECK_EQ(file_size(path), 0);
    CHECK_OK(hs_smgr_nblocks(fx.smgr, rel, fork, &n));
    CHECK_EQ(n, 0);

    for (uint32_t i = 0; i < 5; i++) {
      fill_page(page, ps, 10 * fork + i);
      CHECK_OK(hs_smgr_extend(fx.smgr, rel, fork, page, &b));
      CHECK_EQ(b, i);
    }
    CHECK_OK(hs_smgr_extend(fx.smgr, rel, fork, NULL, &b)); /* a zero block */
    CHECK_EQ(b, 5);
    CHECK_OK(hs_smgr_nblocks(fx.smgr, rel, fork, &n));
    CHECK_EQ(n, 6);
    CHECK_EQ(file_size(path), 6LL * ps);

    fill_page(page, ps, 1000 + fork); /* overwrite block 3 */
    CHECK_OK(hs_smgr_write(fx.smgr, rel, fork, 3, page));
    for (uint32_t i = 0; i < 5; i++) {
      memset(got, 0xEE, ps);
      CHECK_OK(hs_smgr_read(fx.smgr, rel, fork, i, got));
      CHECK(page_is(got, 0, ps, i == 3 ? 1000 + fork : 10 * fork + i));
    }
    memset(got, 0xEE, ps);
    CHECK_OK(hs_smgr_read(fx.smgr, rel, fork, 5, got));
    CHECK(page_is_zero(got, ps));
    CHECK_OK(hs_smgr_sync(fx.smgr, rel, fork));
    CHECK_EQ(file_size(path), 6LL * ps); /* writes don't grow the file */
  }

  /* A second handle on the same directory sees the data (opened lazily). */
  hs_smgr *other;
  CHECK_OK(test_smgr_open(fx.dir, ps, &other));
  CHECK_OK(hs_smgr_read(other, REL + 1, HS_FORK_FSM, 3, got));
  CHECK(page_is(got, 0, ps, 1001));
  hs_smgr_close(other);
  free(page);
  free(got);
  fixture_close(&fx);
}

/* More relations than the table's first bucket array holds. */
static void test_many_relations(void) {
  fixture fx;
  _Alignas(4096) uint8_t page[1024], got[1024];
  fixture_open(&fx, "storage-many", 1024);
  for (hs_relid r = 1; r <= 300; r++) {
    hs_blockno b;
    CHECK_OK(hs_smgr_create(fx.smgr, r, HS_FORK_VM));
    fill_page(page, sizeof page, r);
    CHECK_OK(hs_smgr_extend(fx.smgr, r, HS_FORK_VM, page, &b));
    CHECK_EQ(b, 0);
  }
  for (hs_relid r = 300; r >= 1; r--) {
    CHECK_OK(hs_smgr_read(fx.smgr, r, HS_FORK_VM, 0, got));
    CHECK(page_is(got, 0, sizeof got, r));
  }
  for (hs_relid r = 1; r <= 300; r += 2) CHECK_OK(hs_smgr_unlink(fx.smgr, r, HS_FORK_VM));
  for (hs_relid r = 1; r <= 300; r++) CHECK(fork_exists(fx.smgr, r, HS_FORK_VM) == (r % 2 == 0));
  fixture_close(&fx);
}

static void test_truncate(void) {
  fixture fx;
  char path[PATH_MAX];
  _Alignas(4096) uint8_t page[4096];
  hs_blockno n, b;
  fixture_open(&fx, "storage-trunc", 4096);
  make_rel(&fx, 4);
  fork_path(&fx, REL, HS_FORK_MAIN, path);

  CHECK_OK(hs_smgr_truncate(fx.smgr, REL, HS_FORK_MAIN, 2));
  CHECK_OK(hs_smgr_nblocks(fx.smgr, REL, HS_FORK_MAIN, &n));
  CHECK_EQ(n, 2);
  CHECK_EQ(file_size(path), 2 * 4096);
  CHECK_ST(hs_smgr_read(fx.smgr, REL, HS_FORK_MAIN, 2, page), HS_ERR_EOF);
  CHECK_OK(hs_smgr_read(fx.smgr, REL, HS_FORK_MAIN, 1, page));
  CHECK(page_is(page, 0, sizeof page, 1));

  CHECK_ST(hs_smgr_truncate(fx.smgr, REL, HS_FORK_MAIN, 3), HS_ERR_INVALID);
  CHECK_CONTAINS(hs_last_error(), path);
  CHECK_CONTAINS(hs_last_error(), "it has only 2");
  CHECK_OK(hs_smgr_truncate(fx.smgr, REL, HS_FORK_MAIN, 2)); /* same size: fine */

  CHECK_OK(hs_smgr_truncate(fx.smgr, REL, HS_FORK_MAIN, 0));
  CHECK_OK(hs_smgr_nblocks(fx.smgr, REL, HS_FORK_MAIN, &n));
  CHECK_EQ(n, 0);
  CHECK_OK(hs_smgr_extend(fx.smgr, REL, HS_FORK_MAIN, NULL, &b));
  CHECK_EQ(b, 0);
  fixture_close(&fx);
}

static void test_create_unlink(void) {
  fixture fx;
  char path[PATH_MAX];
  _Alignas(4096) uint8_t page[8192];
  hs_blockno n, b;
  fixture_open(&fx, "storage-unlink", 8192);
  make_rel(&fx, 3);
  fork_path(&fx, REL, HS_FORK_MAIN, path);

  CHECK_ST(hs_smgr_create(fx.smgr, REL, HS_FORK_MAIN), HS_ERR_EXISTS);
  CHECK_EQ(hs_last_errno(), EEXIST);
  CHECK_CONTAINS(hs_last_error(), "could not create");
  CHECK_CONTAINS(hs_last_error(), path);

  CHECK_OK(hs_smgr_unlink(fx.smgr, REL, HS_FORK_MAIN));
  CHECK(!fork_exists(fx.smgr, REL, HS_FORK_MAIN));
  CHECK_EQ(file_size(path), -1);
  CHECK_ST(hs_smgr_read(fx.smgr, REL, HS_FORK_MAIN, 0, page), HS_ERR_NOENT);
  CHECK_ST(hs_smgr_unlink(fx.smgr, REL, HS_FORK_MAIN), HS_ERR_NOENT);
  CHECK_CONTAINS(hs_last_error(), "could not unlink");
  CHECK_CONTAINS(hs_last_error(), path);

  /* Re-created, it starts empty (the old descriptor is gone). */
  CHECK_OK(hs_smgr_create(fx.smgr, REL, HS_FORK_MAIN));
  CHECK_OK(hs_smgr_nblocks(fx.smgr, REL, HS_FORK_MAIN, &n));
  CHECK_EQ(n, 0);

  /* Removed behind the manager's back, then created again: the stale open
   * descriptor must not be used. */
  CHECK_OK(hs_smgr_extend(fx.smgr, REL, HS_FORK_MAIN, NULL, &b));
  CHECK(unlink(path) == 0);
  CHECK_OK(hs_smgr_create(fx.smgr, REL, HS_FORK_MAIN));
  fill_page(page, sizeof page, 77);
  CHECK_OK(hs_smgr_extend(fx.smgr, REL, HS_FORK_MAIN, page, &b));
  CHECK_EQ(b, 0);
  CHECK_EQ(file_size(path), 8192);

  CHECK_ST(hs_smgr_create(fx.smgr, REL, (hs_fork)7), HS_ERR_MISUSE);
  CHECK_ST(hs_smgr_read(fx.smgr, REL, (hs_fork)-1, 0, page), HS_ERR_MISUSE);
  bool exists = true;
  CHECK_ST(hs_smgr_exists(fx.smgr, REL, (hs_fork)4, &exists), HS_ERR_MISUSE);
  CHECK(!exists);
  fixture_close(&fx);
}

/* ---- what is never turned into zeros ----------------------------------- */

static void test_past_end(void) {
  fixture fx;
  char path[PATH_MAX];
  _Alignas(4096) uint8_t page[8192];
  fixture_open(&fx, "storage-eof", 8192);
  make_rel(&fx, 5);
  fork_path(&fx, REL, HS_FORK_MAIN, path);

  memset(page, 0xAA, sizeof page);
  CHECK_ST(hs_smgr_read(fx.smgr, REL, HS_FORK_MAIN, 7, page), HS_ERR_EOF);
  CHECK_EQ(hs_last_errno(), 0);
  CHECK_CONTAINS(hs_last_error(), "could not read block 7 of");
  CHECK_CONTAINS(hs_last_error(), path);
  CHECK_CONTAINS(hs_last_error(), "block 7 is past the end of the file (5 blocks)");
  CHECK_ST(hs_smgr_read(fx.smgr, REL, HS_FORK_MAIN, 5, page), HS_ERR_EOF);
  CHECK_ST(hs_smgr_read(fx.smgr, REL, HS_FORK_MAIN, HS_INVALID_BLOCK - 1, page), HS_ERR_EOF);

  /* Writes never grow the relation. */
  fill_page(page, sizeof page, 9);
  CHECK_ST(hs_smgr_write(fx.smgr, REL, HS_FORK_MAIN, 5, page), HS_ERR_EOF);
  CHECK_CONTAINS(hs_last_error(), "could not write block 5 of");
  CHECK_CONTAINS(hs_last_error(), "(5 blocks)");
  CHECK_ST(hs_smgr_write(fx.smgr, REL, HS_FORK_MAIN, 100, page), HS_ERR_EOF);
  CHECK_EQ(file_size(path), 5 * 8192);
  fixture_close(&fx);
}

/* A file that ends in the middle of a block. */
static void test_partial_block(void) {
  fixture fx;
  char path[PATH_MAX];
  _Alignas(4096) uint8_t page[8192];
  hs_blockno n, b;
  fixture_open(&fx, "storage-partial", 8192);
  make_rel(&fx, 2);
  fork_path(&fx, REL, HS_FORK_MAIN, path);
  CHECK(truncate(path, 8192 + 4096) == 0);

  CHECK_OK(hs_smgr_nblocks(fx.smgr, REL, HS_FORK_MAIN, &n));
  CHECK_EQ(n, 1); /* the partial block is not counted */
  CHECK_ST(hs_smgr_read(fx.smgr, REL, HS_FORK_MAIN, 1, page), HS_ERR_SHORT_IO);
  CHECK_EQ(hs_last_errno(), 0);
  CHECK_CONTAINS(hs_last_error(), "could not read block 1 of");
  CHECK_CONTAINS(hs_last_error(), path);
  CHECK_CONTAINS(hs_last_error(), "read only 4096 of 8192 bytes");
  CHECK_OK(hs_smgr_read(fx.smgr, REL, HS_FORK_MAIN, 0, page));
  CHECK(page_is(page, 0, sizeof page, 0));
  CHECK_ST(hs_smgr_write(fx.smgr, REL, HS_FORK_MAIN, 1, page), HS_ERR_EOF);

  /* The next extend writes its block over the partial one. */
  fill_page(page, sizeof page, 50);
  CHECK_OK(hs_smgr_extend(fx.smgr, REL, HS_FORK_MAIN, page, &b));
  CHECK_EQ(b, 1);
  CHECK_EQ(file_size(path), 2 * 8192);
  memset(page, 0, sizeof page);
  CHECK_OK(hs_smgr_read(fx.smgr, REL, HS_FORK_MAIN, 1, page));
  CHECK(page_is(page, 0, sizeof page, 50));
  fixture_close(&fx);
}

static void test_missing_fork(void) {
  fixture fx;
  char path[PATH_MAX];
  _Alignas(4096) uint8_t page[8192] = {0};
  hs_blockno n = 42, b = 42;
  fixture_open(&fx, "storage-noent", 8192);
  make_rel(&fx, 1);
  fork_path(&fx, REL, HS_FORK_FSM, path);

  CHECK_ST(hs_smgr_read(fx.smgr, REL, HS_FORK_FSM, 3, page), HS_ERR_NOENT);
  CHECK_EQ(hs_last_errno(), ENOENT);
  CHECK_CONTAINS(hs_last_error(), path);
  CHECK_CONTAINS(hs_last_error(), "_fsm\" to read block 3: No such file or directory");
  CHECK_ST(hs_smgr_write(fx.smgr, REL, HS_FORK_FSM, 0, page), HS_ERR_NOENT);
  CHECK_CONTAINS(hs_last_error(), "to write block 0");
  CHECK_ST(hs_smgr_extend(fx.smgr, REL, HS_FORK_FSM, page, &b), HS_ERR_NOENT);
  CHECK_EQ(b, 42);
  CHECK_ST(hs_smgr_nblocks(fx.smgr, REL, HS_FORK_FSM, &n), HS_ERR_NOENT);
  CHECK_EQ(n, 42);
  CHECK_ST(hs_smgr_sync(fx.smgr, REL, HS_FORK_FSM), HS_ERR_NOENT);
  CHECK_ST(hs_smgr_truncate(fx.smgr, REL, HS_FORK_FSM, 0), HS_ERR_NOENT);
  CHECK_ST(hs_smgr_read(fx.smgr, REL + 1, HS_FORK_MAIN, 0, page), HS_ERR_NOENT);
  CHECK_EQ(file_size(path), -1); /* nothing was created on the way */
  fixture_close(&fx);
}

/* A real permission problem (root ignores file modes, so not as root). */
static void test_real_permission(void) {
  if (geteuid() == 0) {
    check_skip("test_storage", "real_permission: running as root, which ignores file modes");
    return;
  }
  fixture fx;
  char path[PATH_MAX];
  _Alignas(4096) uint8_t page[8192];
  hs_smgr *other;
  fixture_open(&fx, "storage-perm", 8192);
  make_rel(&fx, 1);
  fork_path(&fx, REL, HS_FORK_MAIN, path);
  CHECK(chmod(path, 0) == 0);
  CHECK_OK(test_smgr_open(fx.dir, 8192, &other)); /* has no descriptor open yet */
  CHECK_ST(hs_smgr_read(other, REL, HS_FORK_MAIN, 0, page), HS_ERR_ACCESS);
  CHECK_EQ(hs_last_errno(), EACCES);
  CHECK_CONTAINS(hs_last_error(), path);
  CHECK_CONTAINS(hs_last_error(), "Permission denied");
  hs_smgr_close(other);
  CHECK(chmod(path, 0600) == 0);
  fixture_close(&fx);
}

/* ---- fault injection --------------------------------------------------- */

static void test_fault_read_eio(void) {
  fixture fx;
  char path[PATH_MAX], want[PATH_MAX + 64];
  _Alignas(4096) uint8_t page[8192];
  fixture_open(&fx, "storage-eio", 8192);
  make_rel(&fx, 4);
  fork_path(&fx, REL, HS_FORK_MAIN, path);

  CHECK_OK(hs_smgr_inject_fault(fx.smgr, HS_IO_READ, 3, EIO, 1));
  CHECK_OK(hs_smgr_read(fx.smgr, REL, HS_FORK_MAIN, 0, page));
  CHECK(page_is(page, 0, sizeof page, 0));
  CHECK_OK(hs_smgr_read(fx.smgr, REL, HS_FORK_MAIN, 1, page));
  CHECK(page_is(page, 0, sizeof page, 1));
  CHECK_ST(hs_smgr_read(fx.smgr, REL, HS_FORK_MAIN, 2, page), HS_ERR_IO);
  CHECK_EQ(hs_last_errno(), EIO);
  snprintf(want, sizeof want, "could not read block 2 of \"%s\": Input/output error", path);
  CHECK_CONTAINS(hs_last_error(), want);
  CHECK_EQ(strlen(hs_last_error()), strlen(want));
  CHECK_OK(hs_smgr_read(fx.smgr, REL, HS_FORK_MAIN, 2, page));
  CHECK(page_is(page, 0, sizeof page, 2));
  /* Writes are a different kind of op: never affected. */
  CHECK_OK(hs_smgr_write(fx.smgr, REL, HS_FORK_MAIN, 2, page));
  fixture_close(&fx);
}

static void test_fault_write_enospc(void) {
  fixture fx;
  _Alignas(4096) uint8_t page[8192], got[8192];
  fixture_open(&fx, "storage-wnospc", 8192);
  make_rel(&fx, 3);

  CHECK_OK(hs_smgr_inject_fault(fx.smgr, HS_IO_WRITE, 1, ENOSPC, 1));
  fill_page(page, sizeof page, 100);
  CHECK_ST(hs_smgr_write(fx.smgr, REL, HS_FORK_MAIN, 1, page), HS_ERR_NOSPACE);
  CHECK_EQ(hs_last_errno(), ENOSPC);
  CHECK_CONTAINS(hs_last_error(), "could not write block 1 of");
  CHECK_CONTAINS(hs_last_error(), "No space left on device");
  CHECK_OK(hs_smgr_read(fx.smgr, REL, HS_FORK_MAIN, 1, got));
  CHECK(page_is(got, 0, sizeof got, 1)); /* nothing was written */
  CHECK_OK(hs_smgr_write(fx.smgr, REL, HS_FORK_MAIN, 1, page));
  CHECK_OK(hs_smgr_read(fx.smgr, REL, HS_FORK_MAIN, 1, got));
  CHECK(page_is(got, 0, sizeof got, 100));
  fixture_close(&fx);
}

static void test_fault_extend(void) {
  fixture fx;
  char path[PATH_MAX];
  _Alignas(4096) uint8_t page[8192], got[8192];
  hs_blockno n, b = 99;
  fixture_open(&fx, "storage-extend", 8192);
  make_rel(&fx, 3);
  fork_path(&fx, REL, HS_FORK_MAIN, path);

  /* ENOSPC: nothing is written, the relation keeps its size. */
  CHECK_OK(hs_smgr_inject_fault(fx.smgr, HS_IO_EXTEND, 1, ENOSPC, 1));
  fill_page(page, sizeof page, 3);
  CHECK_ST(hs_smgr_extend(fx.smgr, REL, HS_FORK_MAIN, page, &b), HS_ERR_NOSPACE);
  CHECK_EQ(b, 99);
  CHECK_EQ(hs_last_errno(), ENOSPC);
  CHECK_CONTAINS(hs_last_error(), "could not extend \"");
  CHECK_CONTAINS(hs_last_error(), path);
  CHECK_CONTAINS(hs_last_error(), "with block 3: the disk is full: No space left on device");
  CHECK_OK(hs_smgr_nblocks(fx.smgr, REL, HS_FORK_MAIN, &n));
  CHECK_EQ(n, 3);
  CHECK_EQ(file_size(path), 3 * 8192);

  /* A short extend really writes half the block; nblocks floors it, reading
   * it is a short read, and the next extend reuses the block number. */
  CHECK_OK(hs_smgr_inject_fault(fx.smgr, HS_IO_EXTEND, 1, 0, 1));
  CHECK_ST(hs_smgr_extend(fx.smgr, REL, HS_FORK_MAIN, page, &b), HS_ERR_SHORT_IO);
  CHECK_EQ(hs_last_errno(), 0);
  CHECK_CONTAINS(hs_last_error(), "with block 3: wrote only 4096 of 8192 bytes");
  CHECK_EQ(file_size(path), 3 * 8192 + 4096);
  CHECK_OK(hs_smgr_nblocks(fx.smgr, REL, HS_FORK_MAIN, &n));
  CHECK_EQ(n, 3);
  CHECK_ST(hs_smgr_read(fx.smgr, REL, HS_FORK_MAIN, 3, got), HS_ERR_SHORT_IO);
  CHECK_OK(hs_smgr_extend(fx.smgr, REL, HS_FORK_MAIN, page, &b));
  CHECK_EQ(b, 3);
  CHECK_EQ(file_size(path), 4 * 8192);
  CHECK_OK(hs_smgr_read(fx.smgr, REL, HS_FORK_MAIN, 3, got));
  CHECK(page_is(got, 0, sizeof got, 3));
  fixture_close(&fx);
}

static void test_fault_short_transfers(void) {
  fixture fx;
  _Alignas(4096) uint8_t page[8192], got[8192];
  fixture_open(&fx, "storage-short", 8192);
  make_rel(&fx, 3);

  /* A short write: the first half is the new page, the rest still old. */
  CHECK_OK(hs_smgr_inject_fault(fx.smgr, HS_IO_WRITE, 1, 0, 1));
  fill_page(page, sizeof page, 200);
  CHECK_ST(hs_smgr_write(fx.smgr, REL, HS_FORK_MAIN, 1, page), HS_ERR_SHORT_IO);
  CHECK_EQ(hs_last_errno(), 0);
  CHECK_CONTAINS(hs_last_error(), "could not write block 1 of");
  CHECK_CONTAINS(hs_last_error(), "wrote only 4096 of 8192 bytes");
  CHECK_OK(hs_smgr_read(fx.smgr, REL, HS_FORK_MAIN, 1, got));
  CHECK(page_is(got, 0, 4096, 200));
  CHECK(page_is(got, 4096, 8192, 1));

  /* A short read fills half the buffer and fails. */
  CHECK_OK(hs_smgr_inject_fault(fx.smgr, HS_IO_READ, 1, 0, 1));
  memset(got, 0, sizeof got);
  CHECK_ST(hs_smgr_read(fx.smgr, REL, HS_FORK_MAIN, 2, got), HS_ERR_SHORT_IO);
  CHECK_CONTAINS(hs_last_error(), "could not read block 2 of");
  CHECK_CONTAINS(hs_last_error(), "read only 4096 of 8192 bytes");
  CHECK(page_is(got, 0, 4096, 2));
  CHECK(page_is_zero(got + 4096, 4096));
  CHECK_OK(hs_smgr_read(fx.smgr, REL, HS_FORK_MAIN, 2, got));
  CHECK(page_is(got, 0, sizeof got, 2));
  fixture_close(&fx);
}

/* A later sync's message after a failed fsync of `path`: "an earlier fsync
 * of "<path>" failed (<why>) ...". */
static void check_earlier_sync_failed(const char *path, const char *why, int err) {
  char want[PATH_MAX + 64];
  snprintf(want, sizeof want, "an earlier fsync of \"%s\" failed (%s)", path, why);
  CHECK_CONTAINS(hs_last_error(), want);
  CHECK_CONTAINS(hs_last_error(), "may not be on disk");
  CHECK_EQ(hs_last_errno(), err);
}

/* Appends one block to a fork (creating it if needed), so it needs a sync. */
static void dirty_fork(fixture *fx, hs_relid rel, hs_fork fork) {
  if (!fork_exists(fx->smgr, rel, fork)) REQUIRE(hs_smgr_create(fx->smgr, rel, fork) == HS_OK);
  REQUIRE(hs_smgr_extend(fx->smgr, rel, fork, NULL, NULL) == HS_OK);
}

/* A failed fsync is sticky: once a file's fsync fails, no later sync of it
 * (alone, by relation or all) reports success in this handle, though no
 * fault is armed any more; other files are not affected; writes go on. */
static void test_fault_sync(void) {
  fixture fx;
  char path[PATH_MAX], fsm_path[PATH_MAX];
  _Alignas(4096) uint8_t page[8192];
  fixture_open(&fx, "storage-sync", 8192);
  make_rel(&fx, 1);
  dirty_fork(&fx, REL + 1, HS_FORK_MAIN);
  fork_path(&fx, REL, HS_FORK_MAIN, path);
  CHECK_OK(hs_smgr_inject_fault(fx.smgr, HS_IO_SYNC, 2, EIO, 1));
  CHECK_OK(hs_smgr_sync(fx.smgr, REL, HS_FORK_MAIN));
  CHECK_ST(hs_smgr_sync(fx.smgr, REL, HS_FORK_MAIN), HS_ERR_IO);
  CHECK_EQ(hs_last_errno(), EIO);
  CHECK_CONTAINS(hs_last_error(), "could not fsync \"");
  CHECK_CONTAINS(hs_last_error(), path);
  CHECK_CONTAINS(hs_last_error(), "Input/output error");

  /* The fault fired once and is disarmed, yet every later sync fails. */
  for (int i = 0; i < 2; i++) {
    CHECK_ST(hs_smgr_sync(fx.smgr, REL, HS_FORK_MAIN), HS_ERR_IO);
    check_earlier_sync_failed(path, "Input/output error", EIO);
  }
  CHECK_ST(hs_smgr_sync_relation(fx.smgr, REL), HS_ERR_IO);
  check_earlier_sync_failed(path, "Input/output error", EIO);
  CHECK_ST(hs_smgr_sync_all(fx.smgr), HS_ERR_IO);
  check_earlier_sync_failed(path, "Input/output error", EIO);

  /* Another file syncs fine, alone and by relation. */
  CHECK_OK(hs_smgr_sync(fx.smgr, REL + 1, HS_FORK_MAIN));
  dirty_fork(&fx, REL + 1, HS_FORK_MAIN);
  CHECK_OK(hs_smgr_sync_relation(fx.smgr, REL + 1));

  /* Writes to the failed file go on, but never become durable; nor does
   * truncating it (the blocks it keeps may be the lost ones) help. */
  fill_page(page, sizeof page, 77);
  CHECK_OK(hs_smgr_write(fx.smgr, REL, HS_FORK_MAIN, 0, page));
  CHECK_ST(hs_smgr_sync(fx.smgr, REL, HS_FORK_MAIN), HS_ERR_IO);
  CHECK_OK(hs_smgr_truncate(fx.smgr, REL, HS_FORK_MAIN, 0));
  CHECK_ST(hs_smgr_sync_relation(fx.smgr, REL), HS_ERR_IO);
  check_earlier_sync_failed(path, "Input/output error", EIO);

  /* A second failed file: its first failure keeps its own status, later
   * ones are HS_ERR_IO with the first errno. sync_all still names a failure
   * after the other file's. */
  dirty_fork(&fx, REL, HS_FORK_FSM);
  fork_path(&fx, REL, HS_FORK_FSM, fsm_path);
  CHECK_OK(hs_smgr_inject_fault(fx.smgr, HS_IO_SYNC, 1, ENOSPC, 1));
  CHECK_ST(hs_smgr_sync(fx.smgr, REL, HS_FORK_FSM), HS_ERR_NOSPACE);
  CHECK_ST(hs_smgr_sync(fx.smgr, REL, HS_FORK_FSM), HS_ERR_IO);
  check_earlier_sync_failed(fsm_path, "No space left on device", ENOSPC);

  /* A new handle on the directory starts with no failure on record. */
  hs_smgr *other;
  CHECK_OK(test_smgr_open(fx.dir, 8192, &other));
  CHECK_OK(hs_smgr_sync(other, REL, HS_FORK_MAIN));
  CHECK_OK(hs_smgr_sync(other, REL, HS_FORK_FSM));
  CHECK_OK(hs_smgr_sync_all(other));
  hs_smgr_close(other);

  /* Removing a failed file forgets its failure: a new file of that name
   * syncs fine. Once both failed files are gone, sync_all succeeds. */
  CHECK_OK(hs_smgr_unlink(fx.smgr, REL, HS_FORK_MAIN));
  dirty_fork(&fx, REL, HS_FORK_MAIN);
  CHECK_OK(hs_smgr_sync(fx.smgr, REL, HS_FORK_MAIN));
  CHECK_ST(hs_smgr_sync_all(fx.smgr), HS_ERR_IO);
  check_earlier_sync_failed(fsm_path, "No space left on device", ENOSPC);
  CHECK_OK(hs_smgr_unlink(fx.smgr, REL, HS_FORK_FSM));
  CHECK_OK(hs_smgr_sync_all(fx.smgr));
  fixture_close(&fx);
}

/* A file removed behind the handle's back and created again through it is
 * a new file: the old one's failure is not held against it. */
static void test_fault_sync_recreated(void) {
  fixture fx;
  char path[PATH_MAX];
  fixture_open(&fx, "storage-sync-recreate", 1024);
  dirty_fork(&fx, REL, HS_FORK_MAIN);
  fork_path(&fx, REL, HS_FORK_MAIN, path);
  CHECK_OK(hs_smgr_inject_fault(fx.smgr, HS_IO_SYNC, 1, EIO, 1));
  CHECK_ST(hs_smgr_sync(fx.smgr, REL, HS_FORK_MAIN), HS_ERR_IO);
  REQUIRE(unlink(path) == 0);
  CHECK_OK(hs_smgr_create(fx.smgr, REL, HS_FORK_MAIN));
  dirty_fork(&fx, REL, HS_FORK_MAIN);
  CHECK_OK(hs_smgr_sync(fx.smgr, REL, HS_FORK_MAIN));
  CHECK_OK(hs_smgr_sync_all(fx.smgr));
  fixture_close(&fx);
}

/* The directory's fsync (in sync_all, after a create) is sticky too. */
static void test_fault_sync_dir(void) {
  fixture fx;
  fixture_open(&fx, "storage-sync-dir", 1024);
  CHECK_OK(hs_smgr_create(fx.smgr, REL, HS_FORK_MAIN)); /* no file needs an fsync: the dir does */
  CHECK_OK(hs_smgr_inject_fault(fx.smgr, HS_IO_SYNC, 1, EIO, 1));
  CHECK_ST(hs_smgr_sync_all(fx.smgr), HS_ERR_IO);
  CHECK_CONTAINS(hs_last_error(), "could not fsync directory");
  CHECK_ST(hs_smgr_sync_all(fx.smgr), HS_ERR_IO);
  CHECK_CONTAINS(hs_last_error(), "an earlier fsync of directory \"");
  CHECK_CONTAINS(hs_last_error(), fx.dir);
  CHECK_EQ(hs_last_errno(), EIO);
  /* A file of it still syncs on its own. */
  dirty_fork(&fx, REL, HS_FORK_MAIN);
  CHECK_OK(hs_smgr_sync(fx.smgr, REL, HS_FORK_MAIN));
  fixture_close(&fx);
}

static void test_fault_open(void) {
  fixture fx;
  char path[PATH_MAX];
  _Alignas(4096) uint8_t page[8192];
  hs_smgr *other;
  fixture_open(&fx, "storage-open-fault", 8192);
  make_rel(&fx, 2);

  /* Creating a file. */
  fork_path(&fx, REL, HS_FORK_VM, path);
  CHECK_OK(hs_smgr_inject_fault(fx.smgr, HS_IO_OPEN, 1, EACCES, 1));
  CHECK_ST(hs_smgr_create(fx.smgr, REL, HS_FORK_VM), HS_ERR_ACCESS);
  CHECK_EQ(hs_last_errno(), EACCES);
  CHECK_CONTAINS(hs_last_error(), "could not create \"");
  CHECK_CONTAINS(hs_last_error(), path);
  CHECK_CONTAINS(hs_last_error(), "Permission denied");
  CHECK(!fork_exists(fx.smgr, REL, HS_FORK_VM));
  CHECK_OK(hs_smgr_create(fx.smgr, REL, HS_FORK_VM));

  /* Opening an existing file on first use, in a handle that has none open;
   * the failed open is retried by the next call. */
  fork_path(&fx, REL, HS_FORK_MAIN, path);
  CHECK_OK(test_smgr_open(fx.dir, 8192, &other));
  CHECK_OK(hs_smgr_inject_fault(other, HS_IO_OPEN, 1, EACCES, 1));
  CHECK_ST(hs_smgr_read(other, REL, HS_FORK_MAIN, 1, page), HS_ERR_ACCESS);
  CHECK_EQ(hs_last_errno(), EACCES);
  CHECK_CONTAINS(hs_last_error(), path);
  CHECK_CONTAINS(hs_last_error(), "\" to read block 1: Permission denied");
  CHECK_OK(hs_smgr_read(other, REL, HS_FORK_MAIN, 1, page));
  CHECK(page_is(page, 0, sizeof page, 1));
  /* Once open, no further open happens, so an armed open fault stays put. */
  CHECK_OK(hs_smgr_inject_fault(other, HS_IO_OPEN, 1, ENOENT, 1));
  CHECK_OK(hs_smgr_read(other, REL, HS_FORK_MAIN, 0, page));
  CHECK_ST(hs_smgr_nblocks(other, REL, HS_FORK_VM, &(hs_blockno){0}), HS_ERR_NOENT);
  CHECK_EQ(hs_last_errno(), ENOENT);
  hs_smgr_close(other);
  fixture_close(&fx);
}

static void test_fault_times_and_clear(void) {
  fixture fx;
  _Alignas(4096) uint8_t page[1024];
  fixture_open(&fx, "storage-times", 1024);
  make_rel(&fx, 1);

  /* nth 2, times 3: reads 2, 3 and 4 fail. */
  CHECK_OK(hs_smgr_inject_fault(fx.smgr, HS_IO_READ, 2, EIO, 3));
  CHECK_OK(hs_smgr_read(fx.smgr, REL, HS_FORK_MAIN, 0, page));
  for (int i = 0; i < 3; i++)
    CHECK_ST(hs_smgr_read(fx.smgr, REL, HS_FORK_MAIN, 0, page), HS_ERR_IO);
  for (int i = 0; i < 3; i++) CHECK_OK(hs_smgr_read(fx.smgr, REL, HS_FORK_MAIN, 0, page));

  /* Cleared faults never fire. */
  CHECK_OK(hs_smgr_inject_fault(fx.smgr, HS_IO_READ, 1, EIO, 100));
  CHECK_OK(hs_smgr_inject_fault(fx.smgr, HS_IO_WRITE, 1, EIO, 100));
  hs_smgr_clear_faults(fx.smgr);
  CHECK_OK(hs_smgr_read(fx.smgr, REL, HS_FORK_MAIN, 0, page));
  CHECK_OK(hs_smgr_write(fx.smgr, REL, HS_FORK_MAIN, 0, page));

  /* Re-arming replaces the earlier fault of that op. */
  CHECK_OK(hs_smgr_inject_fault(fx.smgr, HS_IO_READ, 1, EIO, 1));
  CHECK_OK(hs_smgr_inject_fault(fx.smgr, HS_IO_READ, 2, EPERM, 1));
  CHECK_OK(hs_smgr_read(fx.smgr, REL, HS_FORK_MAIN, 0, page));
  CHECK_ST(hs_smgr_read(fx.smgr, REL, HS_FORK_MAIN, 0, page), HS_ERR_ACCESS);
  CHECK_EQ(hs_last_errno(), EPERM);
  CHECK_OK(hs_smgr_read(fx.smgr, REL, HS_FORK_MAIN, 0, page));

  /* Nonsense is refused. */
  CHECK_ST(hs_smgr_inject_fault(fx.smgr, HS_IO_OP_COUNT, 1, EIO, 1), HS_ERR_MISUSE);
  CHECK_ST(hs_smgr_inject_fault(fx.smgr, HS_IO_READ, 0, EIO, 1), HS_ERR_INVALID);
  CHECK_ST(hs_smgr_inject_fault(fx.smgr, HS_IO_READ, 1, EIO, 0), HS_ERR_INVALID);
  CHECK_ST(hs_smgr_inject_fault(fx.smgr, HS_IO_READ, 1, -5, 1), HS_ERR_INVALID);
  CHECK_ST(hs_smgr_inject_fault(fx.smgr, HS_IO_SYNC, 1, 0, 1), HS_ERR_INVALID);
  CHECK_ST(hs_smgr_inject_fault(fx.smgr, HS_IO_OPEN, 1, 0, 1), HS_ERR_INVALID);
  CHECK_OK(hs_smgr_read(fx.smgr, REL, HS_FORK_MAIN, 0, page));
  fixture_close(&fx);
}

/* ---- the data directory's lock ----------------------------------------- */

static void lock_path(const fixture *fx, char *buf) {
  snprintf(buf, PATH_MAX, "%s/%s", fx->dir, HS_SMGR_LOCK_FILE);
}

static void read_file(const char *path, char *buf, size_t len) {
  buf[0] = '\0';
  FILE *f = fopen(path, "r");
  if (!f) return;
  size_t n = fread(buf, 1, len - 1, f);
  buf[n] = '\0';
  fclose(f);
}

/* The message hs_smgr_lock_dir gives when `pid` holds the directory. */
static void busy_message(const fixture *fx, long pid, char *buf, size_t len) {
  char lp[PATH_MAX];
  lock_path(fx, lp);
  snprintf(buf, len, "data directory %s is in use by process %ld (lock file %s)", fx->dir, pid, lp);
}

/* What a child process got from hs_smgr_lock_dir on `dir`: its status, and
 * its message in msg. The child opens its own handle and exits at once
 * (closing it, so releasing any lock it took). */
static hs_status lock_in_child(const char *dir, char *msg, size_t len) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  fflush(NULL);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    hs_smgr *s;
    char out[1024];
    hs_status st = test_smgr_open(dir, 1024, &s);
    if (st == HS_OK) st = hs_smgr_lock_dir(s);
    int n = snprintf(out, sizeof out, "%d %s", (int)st, st == HS_OK ? "" : hs_last_error());
    ssize_t w = write(fds[1], out, (size_t)n);
    hs_smgr_close(s);
    _exit(w == n ? 0 : 1);
  }
  close(fds[1]);
  char in[1024];
  size_t got = 0;
  ssize_t n;
  while (got < sizeof in - 1 && (n = read(fds[0], in + got, sizeof in - 1 - got)) > 0)
    got += (size_t)n;
  in[got] = '\0';
  close(fds[0]);
  int wstatus;
  REQUIRE(waitpid(pid, &wstatus, 0) == pid);
  CHECK(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0);
  char *rest;
  long st = strtol(in, &rest, 10);
  snprintf(msg, len, "%s", *rest == ' ' ? rest + 1 : rest);
  return (hs_status)st;
}

static void test_lock_dir(void) {
  fixture fx;
  char lp[PATH_MAX], content[64], want[PATH_MAX * 3], msg[1024];
  fixture_open(&fx, "storage-lock", 1024);
  lock_path(&fx, lp);
  CHECK(file_size(lp) < 0); /* opening a handle takes no lock */

  CHECK_OK(hs_smgr_lock_dir(fx.smgr));
  CHECK_OK(hs_smgr_lock_dir(fx.smgr)); /* this handle holds it already */
  struct stat sb;
  CHECK(stat(lp, &sb) == 0 && (sb.st_mode & 0777) == 0600);
  char mine[32];
  snprintf(mine, sizeof mine, "%ld\n", (long)getpid());
  read_file(lp, content, sizeof content);
  CHECK(strcmp(content, mine) == 0);

  /* A second handle in this process is refused: the lock belongs to the
   * first handle's open file, not to the process. */
  hs_smgr *other;
  CHECK_OK(test_smgr_open(fx.dir, 1024, &other));
  CHECK_ST(hs_smgr_lock_dir(other), HS_ERR_BUSY);
  busy_message(&fx, (long)getpid(), want, sizeof want);
  CHECK_CONTAINS(hs_last_error(), want);
  /* The lock file is no relation's, and does not disturb the others. */
  CHECK_OK(hs_smgr_create(other, REL, HS_FORK_MAIN));
  CHECK_OK(hs_smgr_extend(other, REL, HS_FORK_MAIN, NULL, NULL));
  CHECK_OK(hs_smgr_sync_all(other));

  /* Another process is refused, and told our pid. */
  CHECK_ST(lock_in_child(fx.dir, msg, sizeof msg), HS_ERR_BUSY);
  CHECK_CONTAINS(msg, want);

  /* Closing the holder releases the lock (the file stays, emptied: no pid
   * of a process that let go), and the other handle gets it; a child is
   * refused by that one in turn. */
  hs_smgr_close(fx.smgr);
  CHECK_EQ(file_size(lp), 0);
  CHECK_OK(hs_smgr_lock_dir(other));
  CHECK_ST(lock_in_child(fx.dir, msg, sizeof msg), HS_ERR_BUSY);
  CHECK_CONTAINS(msg, want);
  hs_smgr_close(other);
  CHECK_ST(lock_in_child(fx.dir, msg, sizeof msg), HS_OK);
  CHECK_EQ(file_size(lp), 0); /* the child let go too */

  /* A stale lock file nobody holds, with junk in it, is simply locked. */
  FILE *f = fopen(lp, "w");
  REQUIRE(f != NULL);
  fputs("99999999999999999999 junk that is longer than a pid\n", f);
  fclose(f);
  CHECK_OK(test_smgr_open(fx.dir, 1024, &fx.smgr));
  CHECK_OK(hs_smgr_lock_dir(fx.smgr));
  read_file(lp, content, sizeof content);
  CHECK(strcmp(content, mine) == 0);
  /* A holder whose file shows no pid is "another process". */
  REQUIRE(truncate(lp, 0) == 0);
  CHECK_OK(test_smgr_open(fx.dir, 1024, &other));
  CHECK_ST(hs_smgr_lock_dir(other), HS_ERR_BUSY);
  snprintf(want, sizeof want, "data directory %s is in use by another process (lock file %s)",
           fx.dir, lp);
  CHECK_CONTAINS(hs_last_error(), want);
  hs_smgr_close(other);
  CHECK_ST(hs_smgr_lock_dir(NULL), HS_ERR_MISUSE);
  fixture_close(&fx);
}

/* ---- the observer ------------------------------------------------------ */

typedef struct obs_event {
  hs_io_op op;
  hs_relid rel;
  hs_fork fork;
  hs_blockno block;
  bool has_page;
  uint8_t first; /* the page's first byte */
} obs_event;

typedef struct obs_log {
  obs_event ev[16];
  int n;
} obs_log;

static void record(void *ctx, hs_io_op op, hs_relid rel, hs_fork fork, hs_blockno block,
                   const void *page) {
  obs_log *log = ctx;
  if (log->n == 16) return;
  log->ev[log->n++] =
      (obs_event){op, rel, fork, block, page != NULL, page ? *(const uint8_t *)page : 0};
}

static void check_event(const obs_log *log, int i, hs_io_op op, hs_fork fork, hs_blockno block,
                        bool has_page, uint8_t first) {
  CHECK(i < log->n);
  if (i >= log->n) return;
  CHECK_EQ(log->ev[i].op, op);
  CHECK_EQ(log->ev[i].rel, REL);
  CHECK_EQ(log->ev[i].fork, fork);
  CHECK_EQ(log->ev[i].block, block);
  CHECK_EQ(log->ev[i].has_page, has_page);
  CHECK_EQ(log->ev[i].first, first);
}

static void test_observer(void) {
  fixture fx;
  obs_log log = {.n = 0};
  _Alignas(4096) uint8_t page[1024];
  hs_blockno b;
  fixture_open(&fx, "storage-observer", 1024);
  CHECK_OK(hs_smgr_create(fx.smgr, REL, HS_FORK_FSM));
  hs_smgr_set_observer(fx.smgr, record, &log);

  memset(page, 0x11, sizeof page);
  CHECK_OK(hs_smgr_extend(fx.smgr, REL, HS_FORK_FSM, page, &b));
  CHECK_OK(hs_smgr_extend(fx.smgr, REL, HS_FORK_FSM, NULL, &b));
  memset(page, 0x22, sizeof page);
  CHECK_OK(hs_smgr_write(fx.smgr, REL, HS_FORK_FSM, 0, page));
  CHECK_OK(hs_smgr_read(fx.smgr, REL, HS_FORK_FSM, 1, page));
  CHECK_OK(hs_smgr_sync(fx.smgr, REL, HS_FORK_FSM)); /* not observed */
  CHECK_OK(hs_smgr_inject_fault(fx.smgr, HS_IO_READ, 1, EIO, 1));
  CHECK_ST(hs_smgr_read(fx.smgr, REL, HS_FORK_FSM, 0, page), HS_ERR_IO);     /* observed first */
  CHECK_ST(hs_smgr_read(fx.smgr, REL, HS_FORK_MAIN, 0, page), HS_ERR_NOENT); /* never began */
  CHECK_ST(hs_smgr_write(fx.smgr, REL, HS_FORK_FSM, 9, page), HS_ERR_EOF);   /* never began */

  CHECK_EQ(log.n, 5);
  check_event(&log, 0, HS_IO_EXTEND, HS_FORK_FSM, 0, true, 0x11);
  check_event(&log, 1, HS_IO_EXTEND, HS_FORK_FSM, 1, true, 0); /* the zero page */
  check_event(&log, 2, HS_IO_WRITE, HS_FORK_FSM, 0, true, 0x22);
  check_event(&log, 3, HS_IO_READ, HS_FORK_FSM, 1, false, 0);
  check_event(&log, 4, HS_IO_READ, HS_FORK_FSM, 0, false, 0);

  hs_smgr_set_observer(fx.smgr, NULL, NULL);
  CHECK_OK(hs_smgr_read(fx.smgr, REL, HS_FORK_FSM, 0, page));
  CHECK_EQ(log.n, 5);
  fixture_close(&fx);
}

/* ---- concurrency ------------------------------------------------------- */

#define EXTENDERS     4
#define PER_EXTENDER  200
#define CONC_PAGE     1024u
#define CONC_FAILURES 3

typedef struct extender {
  hs_smgr *smgr;
  uint32_t id;
  hs_blockno block[PER_EXTENDER];
  int nospace; /* injected failures this thread saw */
  hs_status bad;
  char bad_msg[256];
} extender;

static uint32_t extender_seed(uint32_t id, uint32_t seq) {
  return id * 1000u + seq;
}

/* Extends REL by PER_EXTENDER blocks, retrying injected ENOSPC, and reads
 * back each block at once (reads run concurrently with other extends). */
static void *extender_main(void *arg) {
  extender *x = arg;
  _Alignas(4096) uint8_t page[CONC_PAGE], got[CONC_PAGE];
  for (uint32_t seq = 0; seq < PER_EXTENDER; seq++) {
    fill_page(page, CONC_PAGE, extender_seed(x->id, seq));
    hs_status st;
    while ((st = hs_smgr_extend(x->smgr, REL, HS_FORK_MAIN, page, &x->block[seq])) ==
           HS_ERR_NOSPACE)
      x->nospace++;
    if (!st) st = hs_smgr_read(x->smgr, REL, HS_FORK_MAIN, x->block[seq], got);
    if (!st && !page_is(got, 0, CONC_PAGE, extender_seed(x->id, seq))) st = HS_ERR_CORRUPT;
    if (st) {
      x->bad = st;
      snprintf(x->bad_msg, sizeof x->bad_msg, "%s", hs_last_error());
      return NULL;
    }
  }
  return NULL;
}

static atomic_uint observed_extends;

/* Counts extends, and pauses in each: the observer runs after the new block
 * number is chosen and before it is written, so the pause lets other
 * extenders pile in just where an unserialized extend would go wrong. */
static void count_extends(void *ctx, hs_io_op op, hs_relid rel, hs_fork fork, hs_blockno block,
                          const void *page) {
  (void)ctx, (void)rel, (void)fork, (void)block, (void)page;
  if (op != HS_IO_EXTEND) return;
  atomic_fetch_add_explicit(&observed_extends, 1, memory_order_relaxed);
  nanosleep(&(struct timespec){.tv_nsec = 20000}, NULL);
}

static void test_concurrent_extend(void) {
  fixture fx;
  extender x[EXTENDERS];
  pthread_t tid[EXTENDERS];
  static bool seen[EXTENDERS * PER_EXTENDER];
  fixture_open(&fx, "storage-conc", CONC_PAGE);
  CHECK_OK(hs_smgr_create(fx.smgr, REL, HS_FORK_MAIN));
  hs_smgr_set_observer(fx.smgr, count_extends, NULL);
  /* The armed path runs concurrently too: exactly 3 extends fail. */
  CHECK_OK(hs_smgr_inject_fault(fx.smgr, HS_IO_EXTEND, 400, ENOSPC, CONC_FAILURES));

  for (uint32_t i = 0; i < EXTENDERS; i++) {
    x[i] = (extender){.smgr = fx.smgr, .id = i + 1};
    REQUIRE(pthread_create(&tid[i], NULL, extender_main, &x[i]) == 0);
  }
  int nospace = 0;
  for (uint32_t i = 0; i < EXTENDERS; i++) {
    pthread_join(tid[i], NULL);
    CHECK_ST(x[i].bad, HS_OK);
    if (x[i].bad) fprintf(stderr, "extender %u: %s\n", x[i].id, x[i].bad_msg);
    nospace += x[i].nospace;
  }
  CHECK_EQ(nospace, CONC_FAILURES);
  CHECK_EQ(atomic_load(&observed_extends), EXTENDERS * PER_EXTENDER + CONC_FAILURES);

  hs_blockno n;
  CHECK_OK(hs_smgr_nblocks(fx.smgr, REL, HS_FORK_MAIN, &n));
  CHECK_EQ(n, EXTENDERS * PER_EXTENDER);
  int distinct = 0, intact = 0;
  _Alignas(4096) uint8_t got[CONC_PAGE];
  for (uint32_t i = 0; i < EXTENDERS; i++) {
    for (uint32_t seq = 0; seq < PER_EXTENDER; seq++) {
      hs_blockno b = x[i].block[seq];
      if (b >= n || seen[b]) continue;
      seen[b] = true;
      distinct++;
      if (hs_smgr_read(fx.smgr, REL, HS_FORK_MAIN, b, got) == HS_OK &&
          page_is(got, 0, CONC_PAGE, extender_seed(x[i].id, seq)))
        intact++;
    }
  }
  CHECK_EQ(distinct, EXTENDERS * PER_EXTENDER);
  CHECK_EQ(intact, EXTENDERS * PER_EXTENDER);
  hs_smgr_set_observer(fx.smgr, NULL, NULL);
  fixture_close(&fx);
}

int main(void) {
  test_open_options();
  test_filenames();
  test_round_trip(1024);
  test_round_trip(8192);
  test_round_trip(65536);
  test_many_relations();
  test_truncate();
  test_create_unlink();
  test_past_end();
  test_partial_block();
  test_missing_fork();
  test_real_permission();
  test_fault_read_eio();
  test_fault_write_enospc();
  test_fault_extend();
  test_fault_short_transfers();
  test_fault_sync();
  test_fault_sync_recreated();
  test_fault_sync_dir();
  test_fault_open();
  test_fault_times_and_clear();
  test_lock_dir();
  test_observer();
  test_concurrent_extend();
  return check_finish();
}
