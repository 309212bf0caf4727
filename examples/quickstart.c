/* quickstart.c — open a pool, write a page through it, read it back. */
#include <hotset/pool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The engine's log: hotset calls this before it writes a page whose LSN is
 * `upto`. A real engine fsyncs its WAL here; this one has none. */
static hs_status flush_wal(void *ctx, hs_lsn upto, bool *flushed) {
  hs_lsn *durable = ctx;
  *flushed = upto > *durable;
  if (*flushed) *durable = upto;
  return HS_OK;
}

static int fail(const char *what) {
  fprintf(stderr, "quickstart: %s: %s\n", what, hs_last_error());
  return 1;
}

int main(int argc, char **argv) {
  hs_lsn durable = 0;
  hs_pool_options opts;
  hs_pool_options_init(&opts);
  opts.dir = argc > 1 ? argv[1] : "quickstart-data";
  opts.pool_bytes = 1 << 20; /* 128 pages of 8 KiB */
  opts.flush_wal_up_to = flush_wal;
  opts.wal_ctx = &durable;

  hs_pool *pool;
  if (hs_pool_open(&opts, &pool) != HS_OK) return fail("open");
  hs_relid rel = 16384;
  if (hs_smgr_create_if_missing(hs_pool_smgr(pool), rel, HS_FORK_MAIN, NULL) != HS_OK)
    return fail("create relation");

  /* Add a block to the relation and write into it. The new page comes
   * locked (the `true`): no other thread can see it before it is filled. */
  hs_buf buf;
  hs_blockno block;
  if (hs_pool_extend(pool, rel, HS_FORK_MAIN, NULL, true, &buf, &block) != HS_OK)
    return fail("extend");
  strcpy(hs_buf_page(pool, buf), "hello, buffer pool");
  hs_buf_mark_dirty(pool, buf, /* LSN of the change's log record */ 42, NULL);
  hs_buf_unlock(pool, buf);
  hs_buf_release(pool, buf);

  /* Read it back: a hit, the page never left the pool. */
  bool hit;
  if (hs_pool_read(pool, rel, HS_FORK_MAIN, block, HS_READ_NORMAL, NULL, &buf, &hit) != HS_OK)
    return fail("read");
  hs_buf_lock(pool, buf, HS_LOCK_SHARE);
  printf("block %u: \"%s\" (%s)\n", block, (char *)hs_buf_page(pool, buf), hit ? "hit" : "miss");
  hs_buf_unlock(pool, buf);
  hs_buf_release(pool, buf);

  hs_pool_stats stats;
  hs_pool_stats_get(pool, &stats);
  char table[HS_POOL_STATS_FORMAT_BYTES];
  if (hs_pool_stats_format(&stats, false, table, sizeof table) == HS_OK) fputs(table, stdout);

  /* close writes the dirty page — after flushing the WAL up to 42. */
  if (hs_pool_close(pool) != HS_OK) return fail("close");
  printf("WAL durable up to %llu\n", (unsigned long long)durable);
  return durable >= 42 ? 0 : 1;
}
