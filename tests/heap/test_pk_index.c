/*
 * tests/test_pk_index.c — the primary-key index (hotset/heap.h):
 * every key found through its index page and heap page; a lookup follows
 * the update chain from its root to the version its snapshot sees (the
 * latest committed one, the caller's own change, an older snapshot's older
 * version, never an aborted one); duplicates refused; entries moved and
 * removed only from what they say; keys spanning index pages; and after a
 * real crash the index and heap recovered together.
 */
#include "check.h"
#include "heap_env.h"
#include "killed_child.h"
#include "testdir.h"

#include <string.h>
#include <unistd.h>

#define HEAP_REL  30u
#define INDEX_REL 31u

static char dir[4096];

typedef heap_env env;

static hs_status env_open(env *e) {
  return heap_env_open(e, dir, 32, HEAP_REL, INDEX_REL);
}

/* A row: its key, then a value. */
typedef struct row {
  uint64_t key;
  int64_t value;
} row;

static hs_status add(env *e, hs_xid x, uint64_t key, int64_t value) {
  row r = {key, value};
  hs_tid tid;
  hs_status st = hs_heap_insert(e->h, x, &r, sizeof r, &tid);
  return st == HS_OK ? hs_pk_index_insert(e->ix, key, tid) : st;
}

/* Updates the version `self` sees. */
static hs_status set(env *e, hs_xid x, uint64_t key, int64_t value) {
  hs_snapshot *s = malloc(sizeof *s);
  if (!s || hs_xact_take_snapshot(e->x, s) != HS_OK) return HS_ERR_NOMEM;
  row r;
  uint32_t len;
  bool found;
  hs_tid tid, next;
  hs_status st = hs_pk_index_lookup(e->ix, e->h, key, s, x, &tid, &r, sizeof r, &len, &found);
  hs_xact_release_snapshot(e->x, s);
  free(s);
  if (st != HS_OK) return st;
  if (!found) return HS_ERR_NOENT;
  r.value = value;
  return hs_heap_update(e->h, x, tid, &r, sizeof r, &next);
}

/* The value `self` (0: nobody) sees for key through snapshot s (NULL: a
 * fresh one), or -1. */
static int64_t value_of(env *e, uint64_t key, const hs_snapshot *s, hs_xid self) {
  row r;
  uint32_t len;
  bool found;
  hs_tid tid;
  hs_status st = heap_env_lookup(e, key, s, self, &tid, &r, sizeof r, &len, &found);
  if (st != HS_OK) fprintf(stderr, "lookup %llu: %s\n", (unsigned long long)key, hs_last_error());
  return st == HS_OK && found && len == sizeof r && r.key == key ? r.value : -1;
}

static void test_lookups_and_chains(void) {
  testdir_make(dir, sizeof dir, "pk");
  env e;
  REQUIRE(env_open(&e) == HS_OK);
  enum { N = 3000 }; /* 8 KiB index pages hold 1,022 entries: three pages */
  hs_xid x;
  REQUIRE(hs_xact_begin(e.x, &x) == HS_OK);
  for (uint64_t k = 1; k <= N; k++) CHECK_OK(add(&e, x, k, (int64_t)k * 10));
  CHECK_EQ(value_of(&e, 5, NULL, 0), -1); /* not committed */
  CHECK_EQ(value_of(&e, 5, NULL, x), 50); /* but the inserter sees it */
  CHECK_OK(hs_xact_commit(e.x, x));
  uint32_t wrong = 0;
  for (uint64_t k = 1; k <= N; k++)
    if (value_of(&e, k, NULL, 0) != (int64_t)k * 10) wrong++;
  CHECK_EQ(wrong, 0);
  CHECK_EQ(value_of(&e, N + 1, NULL, 0), -1);             /* past the index: none */
  CHECK_EQ(value_of(&e, 100000, NULL, 0), -1);            /* past its pages */
  CHECK_ST(add(&e, HS_XACT_FROZEN, 7, 1), HS_ERR_EXISTS); /* a duplicate */

  /* Two committed updates of key 7; an older snapshot keeps the first. */
  hs_snapshot *old = malloc(sizeof *old);
  REQUIRE(hs_xact_take_snapshot(e.x, old) == HS_OK);
  for (int64_t v = 71; v <= 72; v++) {
    REQUIRE(hs_xact_begin(e.x, &x) == HS_OK);
    CHECK_OK(set(&e, x, 7, v));
    CHECK_OK(hs_xact_commit(e.x, x));
  }
  CHECK_EQ(value_of(&e, 7, NULL, 0), 72);
  CHECK_EQ(value_of(&e, 7, old, 0), 70);
  hs_xact_release_snapshot(e.x, old);
  free(old);
  /* An aborted update: the chain's committed end is still found. */
  REQUIRE(hs_xact_begin(e.x, &x) == HS_OK);
  CHECK_OK(set(&e, x, 7, 73));
  CHECK_EQ(value_of(&e, 7, NULL, x), 73); /* its own change */
  CHECK_EQ(value_of(&e, 7, NULL, 0), 72); /* others: the committed one */
  CHECK_OK(hs_xact_abort(e.x, x));
  CHECK_EQ(value_of(&e, 7, NULL, 0), 72);
  /* Moving and removing an entry only from what it says. */
  hs_tid root, other = {0, 1};
  bool found;
  CHECK_OK(hs_pk_index_get(e.ix, 7, &root, &found));
  CHECK(found);
  CHECK_ST(hs_pk_index_move(e.ix, 7, other, other), HS_ERR_BUSY);
  CHECK_OK(hs_pk_index_move(e.ix, 7, root, (hs_tid){0, 0}));
  CHECK_OK(hs_pk_index_get(e.ix, 7, &root, &found));
  CHECK(!found);
  CHECK_EQ(value_of(&e, 7, NULL, 0), -1);
  heap_env_close(&e);
  testdir_remove(dir);
}

#define CRASH_KEYS 1500

/* The child: keys committed, every 5th updated and committed, others
 * updated by a transaction left running; then it dies. */
static void crash_child(void *ctx, int out) {
  (void)ctx;
  (void)out;
  enum { N = CRASH_KEYS };
  env e;
  if (env_open(&e) != HS_OK) _exit(2);
  hs_xid x;
  if (hs_xact_begin(e.x, &x) != HS_OK) _exit(3);
  for (uint64_t k = 1; k <= N; k++)
    if (add(&e, x, k, (int64_t)k) != HS_OK) _exit(4);
  if (hs_xact_commit(e.x, x) != HS_OK || hs_pool_checkpoint(e.pool) != HS_OK) _exit(5);
  if (hs_xact_begin(e.x, &x) != HS_OK) _exit(6);
  for (uint64_t k = 1; k <= N; k += 5)
    if (set(&e, x, k, (int64_t)k + 100000) != HS_OK) _exit(7);
  if (hs_xact_commit(e.x, x) != HS_OK) _exit(8);
  if (hs_xact_begin(e.x, &x) != HS_OK) _exit(9); /* left running: lost */
  for (uint64_t k = 2; k <= N; k += 5)
    if (set(&e, x, k, -5) != HS_OK) _exit(10);
}

static void test_crash(void) {
  testdir_make(dir, sizeof dir, "pk-crash");
  enum { N = CRASH_KEYS };
  REQUIRE(run_killed_child(crash_child, NULL, NULL, 0));
  env e;
  REQUIRE(env_open(&e) == HS_OK);
  uint32_t wrong = 0;
  for (uint64_t k = 1; k <= N; k++)
    if (value_of(&e, k, NULL, 0) != (k % 5 == 1 ? (int64_t)k + 100000 : (int64_t)k)) wrong++;
  CHECK_EQ(wrong, 0);
  heap_env_close(&e);
  testdir_remove(dir);
}

int main(void) {
  test_lookups_and_chains();
  test_crash();
  return check_finish();
}
