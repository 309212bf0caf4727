/*
 * tests/test_pk_reindex.c — rebuilding the primary-key index from its heap
 * (hs_pk_index_rebuild, `hotset reindex`) and the lookups that send an
 * operator there:
 *
 *   - a rebuild of a healthy index changes no answer, with updated,
 *     deleted, aborted and never-indexed versions on the heap;
 *   - an index file replaced by zeros (the same size) after a clean
 *     shutdown: its pages pass as empty ones, but the page the last
 *     checkpoint wrote newest is older than it wrote it, so a lookup refuses
 *     with the reindex command first; a rebuild brings every answer back,
 *     and the index is no longer taken for stale;
 *   - an index page that fails its checksum makes a lookup refuse with the
 *     reindex command; the rebuild replaces the page without reading it;
 *   - a heap page lost (zeroed) under an update chain: a lookup refuses
 *     naming the chain and the command, rather than retrying as if vacuum
 *     had moved the entry; the rebuild leaves out the key whose newest
 *     version is gone (never answering with an older one) and the keys
 *     whose only versions were on the page, and keeps every other answer.
 */
#include "check.h"
#include "heap_env.h"
#include "testdir.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#define HEAP_REL  40u
#define INDEX_REL 41u

static char dir[4096];

typedef heap_env env;

static hs_status env_open(env *e) {
  return heap_env_open(e, dir, 64, HEAP_REL, INDEX_REL);
}

/* A row: its key, a value, and padding so a page holds few rows. */
typedef struct row {
  uint64_t key;
  int64_t value;
  char pad[1000];
} row;

static hs_status add(env *e, hs_xid x, uint64_t key, int64_t value, hs_tid *tid) {
  row r = {.key = key, .value = value};
  hs_status st = hs_heap_insert(e->h, x, &r, sizeof r, tid);
  return st == HS_OK ? hs_pk_index_insert(e->ix, key, *tid) : st;
}

/* Looks key up through a fresh snapshot: its value, or -1 for none. */
static hs_status lookup(env *e, uint64_t key, int64_t *value, hs_tid *tid) {
  row r;
  uint32_t len;
  bool found;
  hs_tid at;
  hs_status st = heap_env_lookup(e, key, NULL, HS_XACT_INVALID, &at, &r, sizeof r, &len, &found);
  *value = st == HS_OK && found && len == sizeof r && r.key == key ? r.value : -1;
  if (tid) *tid = at;
  return st;
}

static hs_status update(env *e, hs_xid x, uint64_t key, int64_t value, hs_tid *new_tid) {
  hs_snapshot *s = malloc(sizeof *s);
  if (!s || hs_xact_take_snapshot(e->x, s) != HS_OK) return HS_ERR_NOMEM;
  row r;
  uint32_t len;
  bool found;
  hs_tid tid;
  hs_status st = hs_pk_index_lookup(e->ix, e->h, key, s, x, &tid, &r, sizeof r, &len, &found);
  hs_xact_release_snapshot(e->x, s);
  free(s);
  if (st != HS_OK) return st;
  if (!found) return HS_ERR_NOENT;
  r.value = value;
  return hs_heap_update(e->h, x, tid, &r, sizeof r, new_tid);
}

enum { KEYS = 120 };

/* Rows 1..KEYS; key 7 updated twice, key 9 deleted, key 11's update
 * aborted, and a version of key 13 inserted by a transaction that aborted
 * when the index refused the duplicate. */
static void populate(env *e) {
  hs_xid x;
  hs_tid tid;
  REQUIRE(hs_xact_begin(e->x, &x) == HS_OK);
  for (uint64_t k = 1; k <= KEYS; k++) REQUIRE(add(e, x, k, (int64_t)k * 10, &tid) == HS_OK);
  REQUIRE(hs_xact_commit(e->x, x) == HS_OK);
  for (int64_t v = 71; v <= 72; v++) {
    REQUIRE(hs_xact_begin(e->x, &x) == HS_OK);
    REQUIRE(update(e, x, 7, v, &tid) == HS_OK);
    REQUIRE(hs_xact_commit(e->x, x) == HS_OK);
  }
  REQUIRE(hs_xact_begin(e->x, &x) == HS_OK);
  int64_t v;
  hs_tid at;
  REQUIRE(lookup(e, 9, &v, &at) == HS_OK);
  REQUIRE(hs_heap_delete(e->h, x, at) == HS_OK);
  REQUIRE(hs_xact_commit(e->x, x) == HS_OK);
  REQUIRE(hs_xact_begin(e->x, &x) == HS_OK);
  REQUIRE(update(e, x, 11, -1, &tid) == HS_OK);
  REQUIRE(hs_xact_abort(e->x, x) == HS_OK);
  REQUIRE(hs_xact_begin(e->x, &x) == HS_OK);
  REQUIRE(add(e, x, 13, -13, &tid) == HS_ERR_EXISTS);
  REQUIRE(hs_xact_abort(e->x, x) == HS_OK);
}

/* Every key's answer (and two past the end) into out[0..KEYS+2]. */
static void answers(env *e, int64_t *out) {
  for (uint64_t k = 1; k <= KEYS + 2; k++) CHECK_OK(lookup(e, k, &out[k], NULL));
}

static void expect_populated(const int64_t *a) {
  uint32_t wrong = 0;
  for (uint64_t k = 1; k <= KEYS + 2; k++) {
    int64_t want = k > KEYS ? -1 : k == 7 ? 72 : k == 9 ? -1 : (int64_t)k * 10;
    if (a[k] != want) {
      if (wrong++ < 5)
        fprintf(stderr, "key %llu: %lld, want %lld\n", (unsigned long long)k, (long long)a[k],
                (long long)want);
    }
  }
  CHECK_EQ(wrong, 0);
}

static void file_path(hs_relid rel, char *out, size_t cap) {
  snprintf(out, cap, "%s/%u", dir, rel);
}

static void overwrite(const char *path, uint64_t offset, const void *bytes, size_t n) {
  int fd = open(path, O_WRONLY);
  REQUIRE(fd >= 0);
  REQUIRE(pwrite(fd, bytes, n, (off_t)offset) == (ssize_t)n);
  REQUIRE(fsync(fd) == 0);
  close(fd);
}

static void test_rebuild_keeps_every_answer(void) {
  testdir_make(dir, sizeof dir, "reindex");
  env e;
  REQUIRE(env_open(&e) == HS_OK);
  populate(&e);
  int64_t a[KEYS + 3];
  answers(&e, a);
  expect_populated(a);
  uint64_t keys = 0, lost = 99;
  CHECK_OK(hs_pk_index_rebuild(e.ix, e.h, &keys, &lost));
  CHECK_EQ(keys, KEYS); /* the deleted key keeps its root until vacuum */
  CHECK_EQ(lost, 0);
  answers(&e, a);
  expect_populated(a);
  heap_env_close(&e);
  /* And after a restart (the rebuild was logged and checkpointed). */
  REQUIRE(env_open(&e) == HS_OK);
  answers(&e, a);
  expect_populated(a);
  heap_env_close(&e);
  testdir_remove(dir);
}

static void test_zeroed_index_rebuilt(void) {
  testdir_make(dir, sizeof dir, "reindex-zero");
  env e;
  REQUIRE(env_open(&e) == HS_OK);
  populate(&e);
  uint32_t page_size = hs_pool_page_size(e.pool);
  heap_env_close(&e);
  char path[4200];
  file_path(INDEX_REL, path, sizeof path);
  unsigned char *zeros = calloc(1, page_size);
  REQUIRE(zeros != NULL);
  overwrite(path, 0, zeros, page_size);
  free(zeros);
  REQUIRE(env_open(&e) == HS_OK);
  /* Zeros pass as an empty index, but the page the last checkpoint wrote
   * newest is older than it wrote it: refused, the rebuild first. */
  int64_t v;
  CHECK_ST(lookup(&e, 1, &v, NULL), HS_ERR_CORRUPT);
  char want[4400];
  snprintf(want, sizeof want,
           "rebuild it from the heap with `hotset reindex --dir %s --heap %u --index %u --force`",
           dir, HEAP_REL, INDEX_REL);
  CHECK_CONTAINS(hs_last_error(), want);
  CHECK_CONTAINS(hs_last_error(), "older or zeroed copy");
  int64_t a[KEYS + 3];
  CHECK_OK(hs_pk_index_rebuild(e.ix, e.h, NULL, NULL));
  answers(&e, a);
  expect_populated(a);
  heap_env_close(&e);
  testdir_remove(dir);
}

static void test_damaged_index_page(void) {
  testdir_make(dir, sizeof dir, "reindex-flip");
  env e;
  REQUIRE(env_open(&e) == HS_OK);
  populate(&e);
  heap_env_close(&e);
  char path[4200];
  file_path(INDEX_REL, path, sizeof path);
  unsigned char byte = 0x5A;
  overwrite(path, 100, &byte, 1); /* inside entries 10 and 11 */
  REQUIRE(env_open(&e) == HS_OK);
  int64_t v;
  CHECK_ST(lookup(&e, 1, &v, NULL), HS_ERR_CORRUPT);
  const char *msg = hs_last_error();
  CHECK(strstr(msg, "checksum") != NULL);
  char want[4400];
  snprintf(want, sizeof want, "`hotset reindex --dir %s --heap %u --index %u --force`", dir,
           HEAP_REL, INDEX_REL);
  CHECK(strstr(msg, want) != NULL);
  if (!strstr(msg, want)) fprintf(stderr, "message: %s\n", msg);
  CHECK_OK(hs_pk_index_rebuild(e.ix, e.h, NULL, NULL));
  int64_t a[KEYS + 3];
  answers(&e, a);
  expect_populated(a);
  heap_env_close(&e);
  testdir_remove(dir);
}

static void test_lost_heap_page(void) {
  testdir_make(dir, sizeof dir, "reindex-chain");
  env e;
  REQUIRE(env_open(&e) == HS_OK);
  populate(&e);
  /* Key 1's new version goes where there is room: past the first page. */
  hs_xid x;
  hs_tid root, moved;
  int64_t v;
  REQUIRE(lookup(&e, 1, &v, &root) == HS_OK);
  REQUIRE(hs_xact_begin(e.x, &x) == HS_OK);
  REQUIRE(update(&e, x, 1, 11, &moved) == HS_OK);
  REQUIRE(hs_xact_commit(e.x, x) == HS_OK);
  REQUIRE(moved.block != root.block);
  /* The keys whose chain starts on that page (gone), and those whose
   * chain reaches it through a committed update (their newest version is
   * gone): key 1, and whichever others the page holds. */
  bool only_there[KEYS + 3] = {0}, broken[KEYS + 3] = {0};
  uint32_t gone = 0, nbroken = 0;
  for (uint64_t k = 1; k <= KEYS; k++) {
    hs_tid at;
    bool found;
    CHECK_OK(hs_pk_index_get(e.ix, k, &at, &found));
    REQUIRE(found);
    if (at.block == moved.block) {
      only_there[k] = true, gone++;
      continue;
    }
    for (;;) {
      hs_heap_tuple_info info;
      REQUIRE(hs_heap_tuple_info_get(e.h, at, &info) == HS_OK);
      hs_xact_status s = HS_XACT_ABORTED;
      if (info.xmax) REQUIRE(hs_xact_status_of(e.x, info.xmax, &s) == HS_OK);
      if (!info.next.slot || s != HS_XACT_COMMITTED) break;
      at = info.next;
      if (at.block == moved.block) {
        broken[k] = true, nbroken++;
        break;
      }
    }
  }
  REQUIRE(broken[1]);
  uint32_t page_size = hs_pool_page_size(e.pool);
  heap_env_close(&e);
  REQUIRE(gone > 0);
  char path[4200];
  file_path(HEAP_REL, path, sizeof path);
  unsigned char *zeros = calloc(1, page_size);
  REQUIRE(zeros != NULL);
  overwrite(path, (uint64_t)moved.block * page_size, zeros, page_size);
  free(zeros);

  REQUIRE(env_open(&e) == HS_OK);
  /* Key 1: its root is there, deleted by a committed update whose
   * version is gone. Not retried as a vacuum race: refused, naming it. */
  CHECK_ST(lookup(&e, 1, &v, NULL), HS_ERR_CORRUPT);
  const char *msg = hs_last_error();
  CHECK(strstr(msg, "update chain") != NULL);
  CHECK(strstr(msg, "hotset reindex") != NULL);
  if (!strstr(msg, "update chain")) fprintf(stderr, "message: %s\n", msg);
  /* A key whose root was on the page: the entry points at nothing. */
  for (uint64_t k = 1; k <= KEYS; k++)
    if (only_there[k]) {
      CHECK_ST(lookup(&e, k, &v, NULL), HS_ERR_CORRUPT);
      CHECK(strstr(hs_last_error(), "holds no version") != NULL);
      break;
    }
  uint64_t keys = 0, lost = 0;
  CHECK_OK(hs_pk_index_rebuild(e.ix, e.h, &keys, &lost));
  CHECK_EQ(lost, nbroken);
  CHECK_EQ(keys, KEYS - nbroken - gone);
  uint32_t wrong = 0;
  for (uint64_t k = 1; k <= KEYS; k++) {
    int64_t want = broken[k] || only_there[k] ? -1 : k == 7 ? 72 : k == 9 ? -1 : (int64_t)k * 10;
    if (lookup(&e, k, &v, NULL) != HS_OK || v != want) wrong++;
  }
  CHECK_EQ(wrong, 0);
  heap_env_close(&e);
  testdir_remove(dir);
}

int main(void) {
  test_rebuild_keeps_every_answer();
  test_zeroed_index_rebuilt();
  test_damaged_index_page();
  test_lost_heap_page();
  return check_finish();
}
