/* heap_engine.c — an engine's use of the heap: a table of 100 keyed rows,
 * each run adds one to every row's value in one transaction, then vacuums
 * the versions that made dead, paced by the throttle that the lookups
 * report to. Run it twice on one directory: the rows are recovered. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <hotset/heap.h>
#include <hotset/vacuum.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define ROWS      100u
#define HEAP_REL  16384u
#define INDEX_REL 16385u

/* A row: its key first (the index checks it), then its value. */
typedef struct row {
  uint64_t key, value;
} row;

static int fail(const char *what) {
  fprintf(stderr, "heap_engine: %s: %s\n", what, hs_last_error());
  return 1;
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Every row's current version as `snap` sees it, as transaction `self`;
 * with `th`, each lookup's latency is reported to the throttle. */
static hs_status read_row(hs_pk_index *ix, hs_heap *h, const hs_snapshot *snap, hs_xid self,
                          uint64_t key, hs_throttle *th, hs_tid *tid, row *r, bool *found) {
  uint32_t len;
  uint64_t t0 = now_ns();
  hs_status st = hs_pk_index_lookup(ix, h, key, snap, self, tid, r, sizeof *r, &len, found);
  if (th) hs_throttle_observe(th, now_ns() - t0);
  return st;
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : "heap-engine-data";
  char wal_dir[4096];
  snprintf(wal_dir, sizeof wal_dir, "%s/wal", dir);
  if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
    perror(dir);
    return 1;
  }

  /* The log first, with the heap's redo on it: opening the pool replays
   * whatever the last run logged. */
  hs_wal_options wo;
  hs_wal_options_init(&wo);
  wo.dir = wal_dir;
  hs_wal *wal;
  if (hs_wal_open(&wo, &wal) != HS_OK) return fail("open the log");
  if (hs_heap_register_redo(wal) != HS_OK) return fail("register the heap's redo");
  hs_pool_options po;
  hs_pool_options_init(&po);
  po.dir = dir;
  po.pool_bytes = 1 << 20;
  po.wal = wal;
  hs_pool *pool;
  if (hs_pool_open(&po, &pool) != HS_OK) return fail("open the pool");
  hs_xact_mgr *xm;
  hs_heap *h;
  hs_pk_index *ix;
  if (hs_xact_open(pool, &xm) != HS_OK) return fail("open the transaction manager");
  if (hs_heap_open(pool, xm, HEAP_REL, &h) != HS_OK) return fail("open the heap");
  if (hs_pk_index_open(pool, INDEX_REL, &ix) != HS_OK) return fail("open the index");

  /* One transaction: the rows are loaded if missing, else each one gets a
   * new version with its value plus one (the old version dies with the
   * commit). A snapshot is large: it lives on the heap, not the stack. */
  hs_throttle *th;
  if (hs_throttle_create(NULL, &th) != HS_OK) return fail("create the throttle");
  hs_snapshot *snap = malloc(sizeof *snap);
  if (!snap) return 1;
  hs_xid x;
  if (hs_xact_begin(xm, &x) != HS_OK) return fail("begin");
  if (hs_xact_take_snapshot(xm, snap) != HS_OK) return fail("take a snapshot");
  for (uint64_t key = 1; key <= ROWS; key++) {
    hs_tid tid;
    row r;
    bool found;
    if (read_row(ix, h, snap, x, key, th, &tid, &r, &found) != HS_OK) return fail("look up");
    if (!found) {
      r = (row){key, 0};
      if (hs_heap_insert(h, x, &r, sizeof r, &tid) != HS_OK) return fail("insert");
      if (hs_pk_index_insert(ix, key, tid) != HS_OK) return fail("index");
    } else {
      r.value++;
      if (hs_heap_update(h, x, tid, &r, sizeof r, &tid) != HS_OK) return fail("update");
    }
  }
  hs_xact_release_snapshot(xm, snap);
  if (hs_xact_commit(xm, x) != HS_OK) return fail("commit");

  /* What a new snapshot sees. */
  if (hs_xact_take_snapshot(xm, snap) != HS_OK) return fail("take a snapshot");
  hs_tid tid;
  row r;
  bool found;
  if (read_row(ix, h, snap, HS_XACT_INVALID, 42, th, &tid, &r, &found) != HS_OK || !found)
    return fail("read row 42");
  hs_xact_release_snapshot(xm, snap);
  free(snap);
  printf("row 42: value %llu\n", (unsigned long long)r.value);

  /* Vacuum the dead versions, throttled against the lookups' latency. */
  hs_vacuum_options vo;
  hs_vacuum_options_init(&vo);
  vo.throttle = th;
  hs_vacuum_stats vs;
  if (hs_vacuum(h, ix, &vo, &vs) != HS_OK) return fail("vacuum");
  printf("vacuum: %llu dead versions removed, %llu index entries moved\n",
         (unsigned long long)vs.removed, (unsigned long long)vs.index_moves);
  hs_throttle_destroy(th);

  hs_pk_index_close(ix);
  hs_heap_close(h);
  hs_xact_close(xm);
  if (hs_pool_close(pool) != HS_OK) return fail("close the pool");
  if (hs_wal_close(wal) != HS_OK) return fail("close the log");
  return 0;
}
