/*
 * test_pool_basic — the pool's API on one thread: read, pin counts, hit and
 * miss, new and zeroed blocks, dirty pages reaching the file, flush and drop,
 * statistics that add up, bad arguments; relations created if missing,
 * extension and zeroing with the content lock handed back held
 * (test_zero_and_lock races other threads against those).
 */
#include "pool_util.h"

#include <sys/stat.h>
#include <unistd.h>

/* hs_smgr_exists, which must not fail here. */
static bool fork_exists(hs_smgr *smgr, hs_relid rel, hs_fork fork) {
  bool exists = false;
  REQUIRE(hs_smgr_exists(smgr, rel, fork, &exists) == HS_OK);
  return exists;
}

static const hs_relid REL = 16384;

static void test_open_errors(const char *dir) {
  hs_pool_options o;
  hs_pool_options_init(&o);
  hs_pool *pool = NULL;
  CHECK_ST(hs_pool_open(&o, &pool), HS_ERR_INVALID); /* no directory */
  CHECK_CONTAINS(hs_last_error(), "directory");
  o.dir = dir;
  o.policy = "no-such-policy";
  CHECK_ST(hs_pool_open(&o, &pool), HS_ERR_INVALID);
  CHECK_CONTAINS(hs_last_error(), "no-such-policy");
  o.policy = NULL;
  o.pool_bytes = 100; /* less than a page */
  CHECK_ST(hs_pool_open(&o, &pool), HS_ERR_INVALID);
  o.pool_bytes = 1 << 20;
  o.page_size = 3000;
  CHECK_ST(hs_pool_open(&o, &pool), HS_ERR_INVALID);
  CHECK(pool == NULL);
}

static void test_read_pin_hit(const char *dir) {
  hs_pool *pool = open_pool(dir, 8, 4096, NULL, NULL);
  CHECK_EQ(hs_pool_nbuffers(pool), 8);
  CHECK(strcmp(hs_pool_policy_name(pool), "clock-sweep") == 0);
  make_relation(pool, REL, 4);

  bool hit = true;
  hs_buf b = must_read(pool, REL, 2, &hit);
  CHECK(!hit);
  CHECK_EQ(stamp_value(hs_buf_page(pool, b), REL, 2), 0);
  CHECK_EQ(hs_buf_block(pool, b), 2);
  CHECK_EQ(hs_buf_rel(pool, b), REL);
  hs_buffer_info info;
  CHECK_EQ(find_buffer(pool, REL, 2, &info), b);
  CHECK_EQ(info.pins, 1);
  CHECK_EQ(info.usage, 1);
  CHECK(info.valid && !info.dirty);

  hs_buf b2 = must_read(pool, REL, 2, &hit);
  CHECK(hit);
  CHECK_EQ(b2, b);
  hs_buf_pin_again(pool, b);
  find_buffer(pool, REL, 2, &info);
  CHECK_EQ(info.pins, 3);
  CHECK_EQ(info.usage, 2); /* pin_again does not count as a use */
  hs_buf_release(pool, b);
  hs_buf_release(pool, b);
  hs_buf_release(pool, b);
  find_buffer(pool, REL, 2, &info);
  CHECK_EQ(info.pins, 0);

  hs_pool_stats s;
  hs_pool_stats_get(pool, &s);
  CHECK_EQ(s.count[HS_IOCTX_NORMAL][HS_STAT_HITS], 1);
  CHECK_EQ(s.count[HS_IOCTX_NORMAL][HS_STAT_READS], 1);
  CHECK_EQ(s.valid, 1);
  CHECK_EQ(s.pinned, 0);

  /* Reading past the end, and a relation that does not exist. */
  hs_buf bad = HS_INVALID_BUF;
  CHECK_ST(hs_pool_read(pool, REL, HS_FORK_MAIN, 99, HS_READ_NORMAL, NULL, &bad, NULL), HS_ERR_EOF);
  CHECK_CONTAINS(hs_last_error(), "99");
  CHECK_ST(hs_pool_read(pool, 777, HS_FORK_MAIN, 0, HS_READ_NORMAL, NULL, &bad, NULL),
           HS_ERR_NOENT);
  CHECK_ST(hs_pool_read(pool, REL, (hs_fork)9, 0, HS_READ_NORMAL, NULL, &bad, NULL), HS_ERR_MISUSE);
  hs_pool_stats_get(pool, &s);
  CHECK_EQ(s.count[HS_IOCTX_NORMAL][HS_STAT_READ_ERRORS], 2);
  CHECK_EQ(s.pinned, 0); /* failed reads leave no pin behind */
  CHECK_OK(hs_pool_close(pool));
}

static void test_dirty_roundtrip(const char *dir) {
  hs_pool *pool = open_pool(dir, 4, 4096, NULL, NULL);
  /* Extend through the pool. */
  REQUIRE(hs_smgr_create(hs_pool_smgr(pool), REL + 1, HS_FORK_MAIN) == HS_OK);
  hs_buf b;
  for (hs_blockno i = 0; i < 6; i++) {
    hs_blockno got = HS_INVALID_BLOCK;
    REQUIRE(hs_pool_extend(pool, REL + 1, HS_FORK_MAIN, NULL, false, &b, &got) == HS_OK);
    CHECK_EQ(got, i);
    CHECK_EQ(hs_buf_block(pool, b), i);
    unsigned char *page = hs_buf_page(pool, b);
    CHECK_EQ(page[0] | page[4095], 0);
    hs_buf_lock(pool, b, HS_LOCK_EXCLUSIVE);
    stamp_page(page, REL + 1, i, 100 + i);
    bool was_clean = false;
    CHECK_OK(hs_buf_mark_dirty(pool, b, 0, &was_clean));
    CHECK(was_clean);
    CHECK_OK(hs_buf_mark_dirty(pool, b, 0, &was_clean));
    CHECK(!was_clean);
    hs_buf_unlock(pool, b);
    hs_buf_release(pool, b);
  }
  /* A share lock keeps an exclusive one out; marking dirty without the
   * exclusive lock is refused (test_misuse covers every such rule). */
  b = must_read(pool, REL + 1, 5, NULL);
  CHECK_OK(hs_buf_lock(pool, b, HS_LOCK_SHARE));
  CHECK_OK(hs_buf_unlock(pool, b));
  CHECK_OK(hs_buf_trylock(pool, b, HS_LOCK_EXCLUSIVE));
  CHECK_OK(hs_buf_unlock(pool, b));
  CHECK_OK(hs_buf_release(pool, b));

  hs_pool_stats s;
  hs_pool_stats_get(pool, &s);
  CHECK_EQ(s.count[HS_IOCTX_NORMAL][HS_STAT_EXTENDS], 6);
  CHECK_EQ(s.count[HS_IOCTX_NORMAL][HS_STAT_EVICTIONS], 2); /* 6 blocks, 4 buffers */
  CHECK_EQ(s.count[HS_IOCTX_NORMAL][HS_STAT_WRITES], 2);    /* the evicted were dirty */
  CHECK_EQ(s.dirty, 4);

  /* The pages are on disk after flush_relation, in the file itself. */
  CHECK_OK(hs_pool_flush_relation(pool, REL + 1));
  hs_pool_stats_get(pool, &s);
  CHECK_EQ(s.dirty, 0);
  CHECK_EQ(s.count[HS_IOCTX_NORMAL][HS_STAT_WRITES], 6);
  _Alignas(4096) unsigned char page[4096];
  for (hs_blockno i = 0; i < 6; i++) {
    CHECK_OK(hs_smgr_read(hs_pool_smgr(pool), REL + 1, HS_FORK_MAIN, i, page));
    CHECK_EQ(stamp_value(page, REL + 1, i), 100 + i);
  }

  /* HS_READ_ZERO gives a zeroed page without reading. */
  hs_pool_stats_reset(pool);
  CHECK_OK(hs_pool_drop_relation(pool, REL + 1));
  CHECK_EQ(find_buffer(pool, REL + 1, 3, NULL), HS_INVALID_BUF);
  CHECK_OK(hs_pool_read(pool, REL + 1, HS_FORK_MAIN, 3, HS_READ_ZERO, NULL, &b, NULL));
  CHECK_EQ(((unsigned char *)hs_buf_page(pool, b))[0], 0);
  hs_pool_stats_get(pool, &s);
  CHECK_EQ(hs_pool_stats_total(&s, HS_STAT_READS), 0);

  /* Dropping a relation with a pinned buffer is refused, not done halfway
   * silently. */
  CHECK_ST(hs_pool_drop_relation(pool, REL + 1), HS_ERR_BUSY);
  CHECK_CONTAINS(hs_last_error(), "pinned");
  CHECK_ST(hs_pool_close(pool), HS_ERR_BUSY);
  hs_buf_release(pool, b);
  CHECK_OK(hs_pool_drop_relation(pool, REL + 1));
  CHECK_OK(hs_pool_close(pool));
}

static void test_close_writes_everything(const char *parent) {
  /* 8 KiB pages: a directory of its own (the others hold 4 KiB pages, and a
   * data directory's control file fixes its page size). */
  char dir[300];
  snprintf(dir, sizeof dir, "%s/8k", parent);
  hs_pool *pool = open_pool(dir, 16, 8192, NULL, NULL);
  make_relation(pool, REL + 2, 10);
  for (hs_blockno i = 0; i < 10; i++) must_update(pool, REL + 2, i, 7000 + i, 0);
  CHECK_OK(hs_pool_close(pool));
  pool = open_pool(dir, 16, 8192, NULL, NULL);
  for (hs_blockno i = 0; i < 10; i++) {
    hs_buf b = must_read(pool, REL + 2, i, NULL);
    CHECK_EQ(stamp_value(hs_buf_page(pool, b), REL + 2, i), 7000 + i);
    hs_buf_release(pool, b);
  }
  CHECK_OK(hs_pool_close(pool));
}

static void test_stats_printing(const char *dir) {
  hs_pool *pool = open_pool(dir, 4, 4096, NULL, NULL);
  make_relation(pool, REL + 3, 8);
  for (int round = 0; round < 3; round++)
    for (hs_blockno i = 0; i < 8; i++) hs_buf_release(pool, must_read(pool, REL + 3, i, NULL));
  hs_pool_stats s;
  hs_pool_stats_get(pool, &s);
  /* Every read call is exactly one hit or one read. */
  CHECK_EQ(hs_pool_stats_total(&s, HS_STAT_HITS) + hs_pool_stats_total(&s, HS_STAT_READS), 24);
  CHECK_EQ(hs_pool_stats_total(&s, HS_STAT_EVICTIONS), hs_pool_stats_total(&s, HS_STAT_READS) - 4);
  char buf[HS_POOL_STATS_FORMAT_BYTES];
  CHECK_OK(hs_pool_stats_format(&s, true, buf, sizeof buf));
  size_t len = strlen(buf);
  CHECK_CONTAINS(buf, "\"contexts\":{\"normal\":{\"hits\":");
  CHECK_CONTAINS(buf, "\"bulkread\"");
  CHECK_CONTAINS(buf, "\"wal_flushes\"");
  CHECK(buf[len - 1] == '\n' && strchr(buf, '\n') == buf + len - 1); /* one line */
  CHECK_OK(hs_pool_stats_format(&s, false, buf, sizeof buf));
  CHECK_CONTAINS(buf, "evictions");
  /* Too small a buffer: refused, what fitted is there and ends in a NUL. */
  char tiny[16];
  CHECK_ST(hs_pool_stats_format(&s, false, tiny, sizeof tiny), HS_ERR_INVALID);
  CHECK_EQ(strlen(tiny), sizeof tiny - 1);
  CHECK_CONTAINS(hs_last_error(), "needs");
  /* The dump has the relation's buffers. */
  uint32_t nb = hs_pool_nbuffers(pool);
  hs_buffer_info *info = calloc(nb, sizeof *info);
  REQUIRE(info);
  CHECK_OK(hs_pool_dump(pool, info, nb));
  bool found = false;
  for (uint32_t i = 0; i < nb; i++) found |= info[i].valid && info[i].rel == REL + 3;
  CHECK(found);
  free(info);
  CHECK_OK(hs_pool_close(pool));
}

/* hs_smgr_create_if_missing: creates once, then leaves the file alone. */
static void test_create_if_missing(const char *dir) {
  hs_pool *pool = open_pool(dir, 4, 4096, NULL, NULL);
  hs_smgr *smgr = hs_pool_smgr(pool);
  bool created = false;
  CHECK_OK(hs_smgr_create_if_missing(smgr, REL + 102, HS_FORK_MAIN, &created));
  CHECK(created);
  hs_blockno n = 0;
  CHECK_OK(hs_smgr_extend(smgr, REL + 102, HS_FORK_MAIN, NULL, &n));
  created = true;
  CHECK_OK(hs_smgr_create_if_missing(smgr, REL + 102, HS_FORK_MAIN, &created));
  CHECK(!created);
  CHECK_OK(hs_smgr_nblocks(smgr, REL + 102, HS_FORK_MAIN, &n));
  CHECK_EQ(n, 1); /* the existing file kept its block */
  CHECK_OK(hs_smgr_create_if_missing(smgr, REL + 102, HS_FORK_FSM, NULL));
  CHECK(fork_exists(smgr, REL + 102, HS_FORK_FSM));
  CHECK_ST(hs_smgr_create(smgr, REL + 102, HS_FORK_MAIN), HS_ERR_EXISTS);
  /* Something that is not a relation's file under its name is refused. */
  char path[512];
  snprintf(path, sizeof path, "%s/%u", dir, REL + 103);
  REQUIRE(mkdir(path, 0700) == 0);
  CHECK_ST(hs_smgr_create_if_missing(smgr, REL + 103, HS_FORK_MAIN, &created), HS_ERR_EXISTS);
  CHECK_CONTAINS(hs_last_error(), "not a regular file");
  CHECK_ST(hs_smgr_create_if_missing(smgr, REL + 102, HS_FORK_COUNT, NULL), HS_ERR_MISUSE);
  REQUIRE(rmdir(path) == 0);
  CHECK_OK(hs_pool_close(pool));
}

/* hs_pool_extend and HS_READ_ZERO_LOCKED on one thread: block numbers, the
 * lock held by the caller (marking dirty needs it), hits, refusals. */
static void test_extend_and_zero_locked(const char *dir) {
  hs_pool *pool = open_pool(dir, 4, 4096, NULL, NULL);
  hs_smgr *smgr = hs_pool_smgr(pool);
  REQUIRE(hs_smgr_create_if_missing(smgr, REL + 104, HS_FORK_MAIN, NULL) == HS_OK);
  for (hs_blockno i = 0; i < 3; i++) {
    hs_buf b = HS_INVALID_BUF;
    hs_blockno block = HS_INVALID_BLOCK;
    CHECK_OK(hs_pool_extend(pool, REL + 104, HS_FORK_MAIN, NULL, true, &b, &block));
    CHECK_EQ(block, i);
    CHECK_EQ(hs_buf_block(pool, b), i);
    unsigned char *page = hs_buf_page(pool, b);
    CHECK_EQ(page[0] | page[4095], 0);
    stamp_page(page, REL + 104, i, 10 + i);
    CHECK_OK(hs_buf_mark_dirty(pool, b, 0, NULL)); /* the exclusive lock is ours */
    CHECK_OK(hs_buf_unlock(pool, b));
    CHECK_OK(hs_buf_release(pool, b));
  }
  /* Without the lock, and without asking for the block number. */
  hs_buf b = HS_INVALID_BUF;
  CHECK_OK(hs_pool_extend(pool, REL + 104, HS_FORK_MAIN, NULL, false, &b, NULL));
  CHECK_EQ(hs_buf_block(pool, b), 3);
  CHECK_OK(hs_buf_trylock(pool, b, HS_LOCK_EXCLUSIVE)); /* nobody holds it */
  CHECK_OK(hs_buf_unlock(pool, b));
  CHECK_OK(hs_buf_release(pool, b));
  CHECK_OK(hs_pool_flush_relation(pool, REL + 104));
  hs_blockno n = 0;
  CHECK_OK(hs_smgr_nblocks(smgr, REL + 104, HS_FORK_MAIN, &n));
  CHECK_EQ(n, 4);

  /* HS_READ_ZERO_LOCKED of a block not in the pool: zeros, locked, no read. */
  CHECK_OK(hs_pool_drop_relation(pool, REL + 104));
  hs_pool_stats_reset(pool);
  bool hit = true;
  CHECK_OK(hs_pool_read(pool, REL + 104, HS_FORK_MAIN, 1, HS_READ_ZERO_LOCKED, NULL, &b, &hit));
  CHECK(!hit);
  CHECK_EQ(((unsigned char *)hs_buf_page(pool, b))[0], 0);
  stamp_page(hs_buf_page(pool, b), REL + 104, 1, 21);
  CHECK_OK(hs_buf_mark_dirty(pool, b, 0, NULL));
  CHECK_OK(hs_buf_unlock(pool, b));
  CHECK_OK(hs_buf_release(pool, b));
  hs_pool_stats s;
  hs_pool_stats_get(pool, &s);
  CHECK_EQ(hs_pool_stats_total(&s, HS_STAT_READS), 0);
  /* Of a block in the pool: a hit, locked, its page as it was. */
  CHECK_OK(hs_pool_read(pool, REL + 104, HS_FORK_MAIN, 1, HS_READ_ZERO_LOCKED, NULL, &b, &hit));
  CHECK(hit);
  CHECK_EQ(stamp_value(hs_buf_page(pool, b), REL + 104, 1), 21);
  CHECK_OK(hs_buf_mark_dirty(pool, b, 0, NULL));
  CHECK_OK(hs_buf_unlock(pool, b));
  CHECK_OK(hs_buf_release(pool, b));
  CHECK_OK(hs_pool_flush_relation(pool, REL + 104));
  _Alignas(4096) unsigned char page[4096];
  CHECK_OK(hs_smgr_read(smgr, REL + 104, HS_FORK_MAIN, 1, page));
  CHECK_EQ(stamp_value(page, REL + 104, 1), 21);

  /* Past the end, as for HS_READ_ZERO; bad arguments. */
  CHECK_ST(hs_pool_read(pool, REL + 104, HS_FORK_MAIN, 4, HS_READ_ZERO_LOCKED, NULL, &b, NULL),
           HS_ERR_EOF);
  CHECK_CONTAINS(hs_last_error(), "hs_pool_extend");
  CHECK_ST(hs_pool_read(pool, REL + 104, HS_FORK_MAIN, 0, (hs_read_mode)(HS_READ_ZERO_LOCKED + 1),
                        NULL, &b, NULL),
           HS_ERR_MISUSE);
  CHECK_ST(hs_pool_extend(NULL, REL + 104, HS_FORK_MAIN, NULL, true, &b, NULL), HS_ERR_MISUSE);
  CHECK_ST(hs_pool_extend(pool, REL + 104, HS_FORK_COUNT, NULL, true, &b, NULL), HS_ERR_MISUSE);
  CHECK_ST(hs_pool_extend(pool, REL + 104, HS_FORK_MAIN, NULL, true, NULL, NULL), HS_ERR_MISUSE);
  CHECK_ST(hs_pool_extend(pool, REL + 105, HS_FORK_MAIN, NULL, true, &b, NULL), HS_ERR_NOENT);
  hs_pool_stats_get(pool, &s);
  CHECK_EQ(s.pinned, 0);
  CHECK_OK(hs_pool_close(pool));
}

int main(void) {
  char dir[256];
  testdir_make(dir, sizeof dir, "pool-basic");
  test_open_errors(dir);
  test_read_pin_hit(dir);
  test_dirty_roundtrip(dir);
  test_close_writes_everything(dir);
  test_stats_printing(dir);
  test_create_if_missing(dir);
  test_extend_and_zero_locked(dir);
  testdir_remove(dir);
  return check_finish();
}
