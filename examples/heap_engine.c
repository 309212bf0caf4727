/* heap_engine.c — 100 keyed rows: each run adds one to every row's value in one transaction,
 * then vacuums the versions that made dead. Run twice on one directory: rows are recovered. */
#include <hotset/vacuum.h>
#include <stdio.h>

static int fail(const char *what) {
  fprintf(stderr, "heap_engine: %s: %s\n", what, hs_last_error());
  return 1;
}

int main(int argc, char **argv) {
  static hs_snapshot snap; /* about 8 KiB: kept off the stack */
  hs_pool_options po;
  hs_pool_options_init(&po);
  po.dir = argc > 1 ? argv[1] : "heap-engine-data";
  char wal_dir[4096];
  snprintf(wal_dir, sizeof wal_dir, "%s/wal", po.dir);
  hs_wal_options wo;
  hs_wal_options_init(&wo);
  wo.dir = wal_dir;
  hs_pool *pool;
  hs_xact_mgr *xm;
  hs_heap *h;
  hs_pk_index *ix;
  hs_xid x;
  /* The heap's redo goes on the log before the pool opens: opening replays it. */
  if (hs_wal_open(&wo, &po.wal) != HS_OK || hs_heap_register_redo(po.wal) != HS_OK ||
      hs_pool_open(&po, &pool) != HS_OK || hs_xact_open(pool, &xm) != HS_OK ||
      hs_heap_open(pool, xm, 16384, &h) != HS_OK || hs_pk_index_open(pool, 16385, &ix) != HS_OK ||
      hs_xact_begin(xm, &x) != HS_OK || hs_xact_take_snapshot(xm, &snap) != HS_OK)
    return fail("open, then begin a transaction");
  uint64_t row[2]; /* key, value: an indexed row starts with its key */
  hs_tid tid;
  uint32_t len;
  bool found;
  for (uint64_t key = 1; key <= 100; key++) { /* load a row, or add one to its value */
    if (hs_pk_index_lookup(ix, h, key, &snap, x, &tid, row, sizeof row, &len, &found) != HS_OK)
      return fail("look up");
    row[0] = key, row[1] = found ? row[1] + 1 : 0;
    hs_status st = found ? hs_heap_update(h, x, tid, row, sizeof row, &tid)
                         : hs_heap_insert(h, x, row, sizeof row, &tid);
    if (st != HS_OK || (!found && hs_pk_index_insert(ix, key, tid) != HS_OK)) return fail("write");
  }
  hs_xact_release_snapshot(xm, &snap);
  if (hs_xact_commit(xm, x) != HS_OK || hs_xact_take_snapshot(xm, &snap) != HS_OK ||
      hs_pk_index_lookup(ix, h, 42, &snap, 0, &tid, row, sizeof row, &len, &found) || !found)
    return fail("commit, then read row 42 in a new snapshot");
  hs_xact_release_snapshot(xm, &snap);
  printf("row 42: value %llu\n", (unsigned long long)row[1]);
  hs_vacuum_stats vs; /* NULL options: no cost-based delay, no throttle */
  if (hs_vacuum(h, ix, NULL, &vs) != HS_OK) return fail("vacuum");
  printf("vacuum: %llu dead versions removed, %llu index entries moved\n",
         (unsigned long long)vs.removed, (unsigned long long)vs.index_moves);
  hs_pk_index_close(ix);
  hs_heap_close(h);
  hs_xact_close(xm);
  if (hs_pool_close(pool) != HS_OK || hs_wal_close(po.wal) != HS_OK) return fail("close");
  return vs.removed == (row[1] > 0 ? 100u : 0u) ? 0 : 1;
}
