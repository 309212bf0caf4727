/*
 * wal_tutorial.c — a change that survives a crash, in the order an engine
 * makes it (docs/wal.md, "A first logged change"):
 *
 *   wal_tutorial DIR write   open the log, open the pool over it, change a
 *                            page under the write-ahead rule, commit, then
 *                            crash: the process kills itself before any
 *                            page is written
 *   wal_tutorial DIR check   open the log and the pool again (opening the
 *                            pool replays the log) and print the page
 *
 * The page's bytes are the engine's from HS_PAGE_HEADER_SIZE on: the first
 * HS_PAGE_HEADER_SIZE bytes of every page belong to hotset (its LSN and
 * checksum).
 */
#include <errno.h>
#include <hotset/durability.h>
#include <hotset/page.h>
#include <hotset/pool.h>
#include <hotset/wal.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define REL 16384

static int fail(const char *what) {
  fprintf(stderr, "wal_tutorial: %s: %s\n", what, hs_last_error());
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 3 || (strcmp(argv[2], "write") != 0 && strcmp(argv[2], "check") != 0)) {
    fprintf(stderr, "usage: wal_tutorial DIR write|check\n");
    return 2;
  }
  const char *dir = argv[1];
  bool writing = strcmp(argv[2], "write") == 0;
  if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
    perror(dir);
    return 1;
  }

  /* 1. The log first: the pool is opened over it, and opening the pool
   *    replays it. (An engine with resource managers of its own registers
   *    them on the log here, before the pool opens.) */
  char wal_dir[4096];
  snprintf(wal_dir, sizeof wal_dir, "%s/wal", dir);
  hs_wal_options wo;
  hs_wal_options_init(&wo);
  wo.dir = wal_dir;
  hs_wal *wal;
  if (hs_wal_open(&wo, &wal) != HS_OK) return fail("open the log");

  /* 2. The pool, with the log in its options: it now writes a dirty page
   *    only once the log is durable up to the page's LSN. */
  hs_pool_options po;
  hs_pool_options_init(&po);
  po.dir = dir;
  po.pool_bytes = 1 << 20;
  po.wal = wal;
  hs_pool *pool;
  if (hs_pool_open(&po, &pool) != HS_OK) return fail("open the pool");

  if (writing) {
    if (hs_smgr_create_if_missing(hs_pool_smgr(pool), REL, HS_FORK_MAIN, NULL) != HS_OK)
      return fail("create the relation");
    /* 3. A change: made under the buffer's exclusive content lock (a new
     *    block comes locked), then logged with the byte ranges it touched.
     *    hs_buf_log_change also marks the buffer dirty with the record's
     *    end LSN; the first change after a checkpoint logs the whole page. */
    hs_buf buf;
    hs_blockno block;
    if (hs_pool_extend(pool, REL, HS_FORK_MAIN, NULL, true, &buf, &block) != HS_OK)
      return fail("add a block");
    char *page = hs_buf_page(pool, buf);
    const char text[] = "balance=100";
    memcpy(page + HS_PAGE_HEADER_SIZE, text, sizeof text);
    hs_wal_range changed = {HS_PAGE_HEADER_SIZE, sizeof text};
    hs_lsn end;
    if (hs_buf_log_change(pool, buf, &changed, 1, &end) != HS_OK) return fail("log the change");
    hs_buf_unlock(pool, buf);
    hs_buf_release(pool, buf);

    /* 4. Commit: the change is durable once the log is, up to its end. */
    if (hs_wal_flush(wal, end, HS_WAL_CAUSE_COMMIT, NULL) != HS_OK) return fail("commit");
    printf("committed block %u at LSN %llu; crashing before the page is written\n", block,
           (unsigned long long)end);
    fflush(stdout);

    /* 5. A crash: no close, no checkpoint, the page only in memory. */
    raise(SIGKILL);
  }

  /* 6. After the crash: opening the pool replayed the log. */
  hs_buf buf;
  if (hs_pool_read(pool, REL, HS_FORK_MAIN, 0, HS_READ_NORMAL, NULL, &buf, NULL) != HS_OK)
    return fail("read block 0");
  hs_buf_lock(pool, buf, HS_LOCK_SHARE);
  printf("block 0 after recovery: %s\n", (char *)hs_buf_page(pool, buf) + HS_PAGE_HEADER_SIZE);
  hs_buf_unlock(pool, buf);
  hs_buf_release(pool, buf);

  /* Close the pool first (it checkpoints through the log), then the log. */
  if (hs_pool_close(pool) != HS_OK) return fail("close the pool");
  if (hs_wal_close(wal) != HS_OK) return fail("close the log");
  return 0;
}
