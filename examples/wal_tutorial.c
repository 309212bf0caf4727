/* wal_tutorial.c — a commit survives a crash: `wal_tutorial DIR write` logs a change,
 * commits and dies before the page is written; `DIR check` replays and checks it. */
#include <hotset/durability.h>
#include <hotset/page.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

static int fail(const char *what) {
  fprintf(stderr, "wal_tutorial: %s: %s\n", what, hs_last_error());
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 3) return fprintf(stderr, "usage: wal_tutorial DIR write|check\n"), 2;
  /* The log first: the pool opens over it, and opening the pool replays it. */
  char wal_dir[4096];
  snprintf(wal_dir, sizeof wal_dir, "%s/wal", argv[1]);
  hs_wal_options wo;
  hs_wal_options_init(&wo);
  wo.dir = wal_dir;
  hs_wal *wal;
  if (hs_wal_open(&wo, &wal) != HS_OK) return fail("open the log");
  hs_pool_options po;
  hs_pool_options_init(&po);
  po.dir = argv[1];
  po.wal = wal; /* a dirty page is written only once the log is durable up to its LSN */
  hs_pool *pool;
  if (hs_pool_open(&po, &pool) != HS_OK) return fail("open the pool");
  const char text[] = "balance=100";
  hs_buf buf;
  if (strcmp(argv[2], "write") == 0) {
    hs_blockno block;
    hs_lsn end;
    if (hs_smgr_create_if_missing(hs_pool_smgr(pool), 16384, HS_FORK_MAIN, NULL) != HS_OK ||
        hs_pool_extend(pool, 16384, HS_FORK_MAIN, NULL, true, &buf, &block) != HS_OK)
      return fail("add a block");
    memcpy((char *)hs_buf_page(pool, buf) + HS_PAGE_HEADER_SIZE, text, sizeof text);
    hs_wal_range changed = {HS_PAGE_HEADER_SIZE, sizeof text}; /* logging marks it dirty */
    if (hs_buf_log_change(pool, buf, &changed, 1, &end) != HS_OK) return fail("log the change");
    hs_buf_unlock(pool, buf);
    hs_buf_release(pool, buf);
    /* The commit: the change is durable once the log is, up to its end. */
    if (hs_wal_flush(wal, end, HS_WAL_CAUSE_COMMIT, NULL) != HS_OK) return fail("commit");
    printf("committed block %u at LSN %llX; crashing\n", block, (unsigned long long)end);
    fflush(stdout);
    raise(SIGKILL); /* no close, no checkpoint: the page is only in memory */
  }
  if (hs_pool_read(pool, 16384, HS_FORK_MAIN, 0, HS_READ_NORMAL, NULL, &buf, NULL) != HS_OK)
    return fail("read block 0");
  hs_buf_lock(pool, buf, HS_LOCK_SHARE);
  const char *found = (const char *)hs_buf_page(pool, buf) + HS_PAGE_HEADER_SIZE;
  printf("block 0 after recovery: %s\n", found);
  bool recovered = strcmp(found, text) == 0;
  hs_buf_unlock(pool, buf);
  hs_buf_release(pool, buf);
  if (hs_pool_close(pool) != HS_OK || hs_wal_close(wal) != HS_OK) return fail("close");
  return recovered ? 0 : 1;
}
