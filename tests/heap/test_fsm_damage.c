/*
 * tests/test_fsm_damage.c — a free-space-map page that fails its checksum
 * is read as an empty one ("no free space known") and rewritten, as
 * PostgreSQL reads its FSM (RBM_ZERO_ON_ERROR): the map is only a hint.
 *
 * A heap with checksums on and rows big enough that every full page has
 * room left to record gets an FSM page; after a clean close one byte of
 * that page is flipped in the `<rel>_fsm` file. Reopened, inserts and
 * updates go on and every row reads back; the map's page is rewritten with
 * a valid checksum, and after a crash recovery replays the map's logged
 * changes over the damaged page still on disk (the first change after the
 * zeroing carries the page's full image). A flipped byte in the heap's own
 * pages, or in its visibility map, is still refused with HS_ERR_CORRUPT.
 */
#include "check.h"
#include "heap/fsm.h"
#include "heap/heap.h"
#include "heap_env.h"
#include "hotset/page.h"
#include "hotset/vacuum.h"
#include "testdir.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define REL 30u
/* Two rows a page on 8 KiB pages, about 2 KiB left over: a full page's
 * room is a category the map records (page_size / 256 = 32 bytes each). */
#define ROW   3000u
#define FIRST 40 /* rows before the damage: 20 heap pages */
#define MORE  20 /* rows added after it */
#define ALL   (FIRST + MORE)

static char dir[4096];
static uint32_t page_size;

/* Row i at version v: its numbers, then a pattern of both. */
static void row_bytes(int i, int v, unsigned char *out) {
  for (uint32_t k = 0; k < ROW; k++) out[k] = (unsigned char)(i * 7 + v * 13 + k);
  snprintf((char *)out, 32, "row %d version %d", i, v);
}

static hs_status put(heap_env *e, hs_xid x, int i, hs_tid *tid) {
  static unsigned char buf[ROW];
  row_bytes(i, 0, buf);
  return hs_heap_insert(e->h, x, buf, ROW, tid);
}

static hs_status change(heap_env *e, hs_xid x, int i, int v, hs_tid *tid) {
  static unsigned char buf[ROW];
  row_bytes(i, v, buf);
  return hs_heap_update(e->h, x, *tid, buf, ROW, tid);
}

/* The row at tid through a fresh snapshot: HS_OK and *same if it is
 * visible and holds row i at version v. */
static hs_status fetch(heap_env *e, hs_tid tid, int i, int v, bool *same) {
  static unsigned char want[ROW], got[ROW];
  *same = false;
  hs_snapshot *s = malloc(sizeof *s);
  REQUIRE(s && hs_xact_take_snapshot(e->x, s) == HS_OK);
  uint32_t len;
  bool visible;
  hs_status st = hs_heap_fetch(e->h, tid, s, 0, got, ROW, &len, &visible);
  hs_xact_release_snapshot(e->x, s);
  free(s);
  row_bytes(i, v, want);
  *same = st == HS_OK && visible && len == ROW && memcmp(got, want, ROW) == 0;
  return st;
}

/* How many of rows 0..n-1 (row i at version[i], at tid[i]) do not read back. */
static int wrong_rows(heap_env *e, const hs_tid *tid, const int *version, int n) {
  int wrong = 0;
  for (int i = 0; i < n; i++) {
    bool same;
    hs_status st = fetch(e, tid[i], i, version[i], &same);
    if (st != HS_OK || !same) {
      if (wrong++ == 0)
        fprintf(stderr, "row %d at (%u, %u): %s, %s\n", i, tid[i].block, tid[i].slot,
                hs_status_name(st), st == HS_OK ? "other contents" : hs_last_error());
    }
  }
  return wrong;
}

static void fork_path(hs_fork fork, char *out, size_t cap) {
  char name[64];
  hs_smgr_fork_filename(REL, fork, name, sizeof name);
  snprintf(out, cap, "%s/%s", dir, name);
}

/* Flips one byte of a fork's file (XOR 0xFF). */
static void flip(hs_fork fork, uint64_t offset) {
  char path[4300];
  fork_path(fork, path, sizeof path);
  int fd = open(path, O_RDWR);
  REQUIRE(fd >= 0);
  unsigned char c;
  REQUIRE(pread(fd, &c, 1, (off_t)offset) == 1);
  c ^= 0xFF;
  REQUIRE(pwrite(fd, &c, 1, (off_t)offset) == 1);
  REQUIRE(fsync(fd) == 0);
  close(fd);
}

/* Whether block `block` of a fork's file passes its checksum, read from
 * the file (not through a pool, which would recover first). */
static bool on_disk_valid(hs_fork fork, hs_blockno block) {
  char path[4300];
  fork_path(fork, path, sizeof path);
  int fd = open(path, O_RDONLY);
  REQUIRE(fd >= 0);
  unsigned char *page = malloc(page_size);
  REQUIRE(page);
  REQUIRE(pread(fd, page, page_size, (off_t)block * page_size) == (ssize_t)page_size);
  close(fd);
  bool ok = hs_page_verify(page, page_size, block, NULL, NULL);
  free(page);
  return ok;
}

static uint64_t file_size(hs_fork fork) {
  char path[4300];
  fork_path(fork, path, sizeof path);
  struct stat sb;
  return stat(path, &sb) == 0 ? (uint64_t)sb.st_size : 0;
}

/* Reads FSM block 0 through the pool: its status, and whether it records
 * room for any heap page. */
static hs_status read_fsm_page(heap_env *e, bool *records_room) {
  *records_room = false;
  hs_buf b;
  hs_status st = hs_pool_read(e->pool, REL, HS_FORK_FSM, 0, HS_READ_NORMAL, NULL, &b, NULL);
  if (st != HS_OK) return st;
  hs_buf_lock(e->pool, b, HS_LOCK_SHARE);
  const unsigned char *p = hs_buf_page(e->pool, b);
  for (uint32_t i = HS_PAGE_HEADER_SIZE; i < page_size; i++)
    if (p[i]) *records_room = true;
  hs_buf_unlock(e->pool, b);
  hs_buf_release(e->pool, b);
  return HS_OK;
}

/* The crash: nothing written since the last checkpoint reaches the files. */
static void crash(heap_env *e) {
  hs_heap_close(e->h);
  hs_xact_close(e->x);
  hs_pool_abandon(e->pool);
  CHECK_OK(hs_wal_close(e->wal));
}

static void test_damaged_fsm_page_reads_as_empty(void) {
  testdir_make(dir, sizeof dir, "fsm-damage");
  heap_env e;
  REQUIRE(heap_env_open(&e, dir, 128, REL, 0) == HS_OK);
  page_size = hs_pool_page_size(e.pool);
  static hs_tid tid[ALL];
  static int version[ALL];
  hs_xid x;
  REQUIRE(hs_xact_begin(e.x, &x) == HS_OK);
  for (int i = 0; i < FIRST; i++) CHECK_OK(put(&e, x, i, &tid[i]));
  CHECK_OK(hs_xact_commit(e.x, x));
  bool room;
  CHECK_OK(read_fsm_page(&e, &room));
  CHECK(room); /* the full pages' room is in the map */
  hs_blockno last = tid[FIRST - 1].block;
  heap_env_close(&e);

  REQUIRE(file_size(HS_FORK_FSM) >= page_size);
  CHECK(on_disk_valid(HS_FORK_FSM, 0));
  flip(HS_FORK_FSM, HS_PAGE_HEADER_SIZE + 1); /* heap block 1's category */
  CHECK(!on_disk_valid(HS_FORK_FSM, 0));

  REQUIRE(heap_env_open(&e, dir, 128, REL, 0) == HS_OK);
  /* The pool refuses the page, as for any fork... */
  CHECK_ST(read_fsm_page(&e, &room), HS_ERR_CORRUPT);
  CHECK_CONTAINS(hs_last_error(), "page checksum failed");
  CHECK_EQ(wrong_rows(&e, tid, version, FIRST), 0);
  uint32_t free_bytes = 1;
  CHECK_OK(fsm_get(heap_fsm(e.h), 1, &free_bytes));
  CHECK_EQ(free_bytes, 0); /* neither the flipped value nor the one before */
  /* ...but the heap reads it as "no free space known" and goes on. */
  REQUIRE(hs_xact_begin(e.x, &x) == HS_OK);
  for (int i = FIRST; i < ALL; i++) {
    version[i] = 0;
    CHECK_OK(put(&e, x, i, &tid[i]));
  }
  for (int i = 0; i < ALL; i += 3) CHECK_OK(change(&e, x, i, ++version[i], &tid[i]));
  CHECK_OK(hs_xact_commit(e.x, x));
  CHECK_EQ(wrong_rows(&e, tid, version, ALL), 0);
  /* The first insert found the last page full and told the map its room. */
  CHECK_OK(fsm_get(heap_fsm(e.h), last, &free_bytes));
  CHECK(free_bytes > 0);
  CHECK_OK(read_fsm_page(&e, &room)); /* the zeroed page, with what was learnt since */
  CHECK(room);

  /* A crash before any checkpoint wrote the map: the damaged page is still
   * on disk, and recovery replays the map's changes over it. */
  crash(&e);
  CHECK(!on_disk_valid(HS_FORK_FSM, 0));
  REQUIRE(heap_env_open(&e, dir, 128, REL, 0) == HS_OK);
  CHECK(on_disk_valid(HS_FORK_FSM, 0)); /* the end-of-recovery checkpoint wrote it */
  CHECK_OK(read_fsm_page(&e, &room));
  CHECK(room);
  CHECK_EQ(wrong_rows(&e, tid, version, ALL), 0);
  REQUIRE(hs_xact_begin(e.x, &x) == HS_OK);
  for (int i = 0; i < ALL; i += 5) CHECK_OK(change(&e, x, i, ++version[i], &tid[i]));
  CHECK_OK(hs_xact_commit(e.x, x));
  heap_env_close(&e);

  /* A clean close and open: the map page is valid on disk, every row there. */
  CHECK(on_disk_valid(HS_FORK_FSM, 0));
  REQUIRE(heap_env_open(&e, dir, 128, REL, 0) == HS_OK);
  CHECK_OK(read_fsm_page(&e, &room));
  CHECK_EQ(wrong_rows(&e, tid, version, ALL), 0);
  heap_env_close(&e);
  testdir_remove(dir);
}

/* The heap's own pages and its visibility map are no hints: a flipped byte
 * there is still refused. */
static void test_other_forks_still_refused(void) {
  testdir_make(dir, sizeof dir, "fsm-damage-other");
  heap_env e;
  REQUIRE(heap_env_open(&e, dir, 128, REL, 0) == HS_OK);
  page_size = hs_pool_page_size(e.pool);
  static hs_tid tid[FIRST];
  hs_xid x;
  REQUIRE(hs_xact_begin(e.x, &x) == HS_OK);
  for (int i = 0; i < FIRST; i++) CHECK_OK(put(&e, x, i, &tid[i]));
  CHECK_OK(hs_xact_commit(e.x, x));
  hs_vacuum_stats vs;
  CHECK_OK(hs_vacuum(e.h, NULL, NULL, &vs)); /* sets the pages' visibility-map bits */
  CHECK(vs.pages_marked_visible > 0);
  heap_env_close(&e);

  REQUIRE(tid[0].block == 0 && tid[FIRST - 1].block > 1);
  REQUIRE(file_size(HS_FORK_VM) >= page_size);
  flip(HS_FORK_MAIN, page_size / 2); /* inside block 0's tuples */
  flip(HS_FORK_VM, HS_PAGE_HEADER_SIZE);
  CHECK(!on_disk_valid(HS_FORK_MAIN, 0));
  CHECK(!on_disk_valid(HS_FORK_VM, 0));

  REQUIRE(heap_env_open(&e, dir, 128, REL, 0) == HS_OK);
  bool same;
  CHECK_ST(fetch(&e, tid[0], 0, 0, &same), HS_ERR_CORRUPT);
  CHECK_CONTAINS(hs_last_error(), "page checksum failed");
  CHECK_OK(fetch(&e, tid[2], 2, 0, &same)); /* block 1 is whole */
  CHECK(same);
  REQUIRE(hs_xact_begin(e.x, &x) == HS_OK);
  hs_tid t = tid[0];
  CHECK_ST(change(&e, x, 0, 1, &t), HS_ERR_CORRUPT); /* the heap page */
  t = tid[2];
  /* Block 1 is all-visible: the update clears its bit in the damaged map. */
  CHECK_ST(change(&e, x, 2, 1, &t), HS_ERR_CORRUPT);
  CHECK_CONTAINS(hs_last_error(), "page checksum failed");
  CHECK_OK(hs_xact_abort(e.x, x));
  heap_env_close(&e);
  testdir_remove(dir);
}

int main(void) {
  test_damaged_fsm_page_reads_as_empty();
  test_other_forks_still_refused();
  return check_finish();
}
