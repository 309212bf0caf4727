/*
 * tests/test_durability.c — the pool on its own log (hotset/durability.h,
 * hotset/page.h): page checksums catch a damaged page on every read path
 * and name it; the first change after a checkpoint logs the whole page and
 * later ones do not; a checkpoint writes the control file and recycles old
 * segments; recovery after a real crash (a child process killed with
 * SIGKILL) brings back every logged change exactly once — including a
 * non-idempotent redo of an engine's own resource manager, and a page torn
 * half way by a failed write; recovery leaves a control file naming its own
 * checkpoint and pages stamped with the end of the last record applied, so
 * a second crash or a replay from an older start applies nothing twice;
 * threads logging changes while checkpoints run
 * lose nothing across a crash (labelled concurrency: TSan runs it); misuse
 * and bad options are refused.
 */
#include "check.h"
#include "direct_mode.h"
#include "hotset/control.h"
#include "hotset/durability.h"
#include "hotset/fault.h"
#include "hotset/page.h"
#include "hotset/pool.h"
#include "hotset/stream.h"
#include "hotset/wal.h"
#include "killed_child.h"
#include "testdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PAGE     8192u
#define REL      7u
#define COUNTERS 24u /* blocks of REL that hold counters */

static char dir[4096];
static _Atomic unsigned thread_failures;

typedef struct env {
  hs_wal *wal;
  hs_pool *pool;
} env;

static void wal_dir(char *out, size_t len) {
  snprintf(out, len, "%s/wal", dir);
}

/* Opens log and pool over `dir` (recovery runs in hs_pool_open). */
static hs_status env_open(env *e, bool checksums, uint32_t pages, uint64_t segment,
                          hs_wal_redo_fn user_redo) {
  char wd[4200];
  wal_dir(wd, sizeof wd);
  hs_wal_options wo;
  hs_wal_options_init(&wo);
  wo.dir = wd;
  wo.segment_bytes = segment;
  wo.writer_delay_ms = 0;
  hs_status st = hs_wal_open(&wo, &e->wal);
  if (st != HS_OK) return st;
  if (user_redo) st = hs_wal_register_rmgr(e->wal, 20, "counter", user_redo, NULL);
  if (st != HS_OK) return st;
  hs_pool_options po;
  hs_pool_options_init(&po);
  po.dir = dir;
  po.page_size = PAGE;
  po.pool_pages = pages;
  po.wal = e->wal;
  po.checksums = checksums;
  st = hs_pool_open(&po, &e->pool);
  if (st != HS_OK) {
    hs_wal_close(e->wal);
    e->wal = NULL;
  }
  return st;
}

static void env_close(env *e) {
  CHECK_OK(hs_pool_close(e->pool));
  CHECK_OK(hs_wal_close(e->wal));
}

/* A counter at offset 64 of a page (past the header). */
#define COUNTER_AT 64u
static uint64_t page_counter(const void *page) {
  uint64_t v;
  memcpy(&v, (const unsigned char *)page + COUNTER_AT, 8);
  return v;
}

/* Bytes derived from the counter near both ends of the page, so a page
 * torn half way shows (and fails its checksum). */
static void fill_from_counter(unsigned char *p, uint64_t v) {
  memset(p + COUNTER_AT + 8, (int)(v & 0xFF), 512);
  memset(p + PAGE - 512, (int)(v & 0xFF), 512);
}

/* Adds `by` to the counter of a page and refills what derives from it. */
static void add_to_counter(unsigned char *p, uint64_t by) {
  uint64_t v = page_counter(p) + by;
  memcpy(p + COUNTER_AT, &v, 8);
  fill_from_counter(p, v);
}

/* Adds `by` to the counter of block `blk` and logs it: as byte ranges
 * (generic), or with `own_rmgr` as a record of the counter resource
 * manager (rmgr 20, payload `by`: counter_redo). */
static hs_status change_counter(env *e, hs_blockno blk, uint64_t by, bool own_rmgr, hs_lsn *end) {
  hs_buf b;
  hs_status st = hs_pool_read(e->pool, REL, HS_FORK_MAIN, blk, HS_READ_NORMAL, NULL, &b, NULL);
  if (st != HS_OK) return st;
  hs_buf_lock(e->pool, b, HS_LOCK_EXCLUSIVE);
  add_to_counter(hs_buf_page(e->pool, b), by);
  if (own_rmgr) {
    hs_wal_record rec = {.rmgr = 20, .type = 1, .npages = 1, .data = &by, .len = 8};
    st = hs_buf_log_record(e->pool, &rec, &b, end);
  } else {
    hs_wal_range r[2] = {{COUNTER_AT, 8 + 512}, {PAGE - 512, 512}};
    st = hs_buf_log_change(e->pool, b, r, 2, end);
  }
  hs_buf_unlock(e->pool, b);
  hs_buf_release(e->pool, b);
  return st;
}

static hs_status bump(env *e, hs_blockno blk, uint64_t by, hs_lsn *end) {
  return change_counter(e, blk, by, false, end);
}

static uint64_t read_counter(env *e, hs_blockno blk) {
  hs_buf b;
  if (hs_pool_read(e->pool, REL, HS_FORK_MAIN, blk, HS_READ_NORMAL, NULL, &b, NULL) != HS_OK) {
    fprintf(stderr, "read_counter %u: %s\n", blk, hs_last_error());
    return UINT64_MAX;
  }
  hs_buf_lock(e->pool, b, HS_LOCK_SHARE);
  const unsigned char *p = hs_buf_page(e->pool, b);
  uint64_t v = page_counter(p);
  for (uint32_t i = 0; i < 512; i++)
    if (p[COUNTER_AT + 8 + i] != (unsigned char)(v & 0xFF) ||
        p[PAGE - 512 + i] != (unsigned char)(v & 0xFF))
      v = UINT64_MAX - 1; /* torn */
  hs_buf_unlock(e->pool, b);
  hs_buf_release(e->pool, b);
  return v;
}

static void make_relation(env *e, uint32_t blocks) {
  hs_smgr *smgr = hs_pool_smgr(e->pool);
  REQUIRE(hs_smgr_create_if_missing(smgr, REL, HS_FORK_MAIN, NULL) == HS_OK);
  hs_blockno n;
  REQUIRE(hs_smgr_nblocks(smgr, REL, HS_FORK_MAIN, &n) == HS_OK);
  for (; n < blocks; n++) {
    hs_buf b;
    REQUIRE(hs_pool_extend(e->pool, REL, HS_FORK_MAIN, NULL, false, &b, NULL) == HS_OK);
    hs_buf_release(e->pool, b);
  }
}

static char rel_path[4400];
static const char *relation_file(void) {
  /* The storage manager's file for REL's main fork: the only data file. */
  DIR *d = opendir(dir);
  rel_path[0] = 0;
  for (struct dirent *x; d && (x = readdir(d));)
    if (strcmp(x->d_name, "7") == 0 || strncmp(x->d_name, "7.", 2) == 0 ||
        strncmp(x->d_name, "7_", 2) == 0)
      if (!rel_path[0]) snprintf(rel_path, sizeof rel_path, "%s/%s", dir, x->d_name);
  if (d) closedir(d);
  return rel_path;
}

/* ---- checksums ----------------------------------------------------------- */

static void test_page_functions(void) {
  static _Alignas(4096) unsigned char page[PAGE];
  memset(page, 0, sizeof page);
  uint32_t want = 1, have = 1;
  CHECK(hs_page_verify(page, PAGE, 3, &want, &have)); /* zeros: a new page */
  CHECK_EQ(want, 0);
  page[100] = 42;
  CHECK(!hs_page_verify(page, PAGE, 3, NULL, NULL)); /* not zeros, no header */
  hs_page_stamp(page, PAGE, 3, 777);
  CHECK(hs_page_verify(page, PAGE, 3, NULL, NULL));
  CHECK_EQ(hs_page_lsn(page), 777);
  CHECK(!hs_page_verify(page, PAGE, 4, NULL, NULL)); /* the wrong place */
  page[PAGE - 1] ^= 1;
  CHECK(!hs_page_verify(page, PAGE, 3, &want, &have));
  CHECK(want != have);
  page[PAGE - 1] ^= 1;
  page[0] ^= 0x80; /* the LSN is covered too */
  CHECK(!hs_page_verify(page, PAGE, 3, NULL, NULL));
  page[0] ^= 0x80;
  /* The directory's mark: carried, covered by the checksum, never 0. */
  CHECK_EQ(hs_page_system(page), 0); /* stamped without one */
  uint16_t mark = hs_page_system_tag(0x0123456789ABCDEFull);
  CHECK(mark != 0);
  CHECK_EQ(hs_page_system_tag(0), 1); /* mixes to 0: 1 instead */
  CHECK(hs_page_system_tag(1) != hs_page_system_tag(2));
  CHECK(hs_page_system_tag(1) != hs_page_system_tag(1ull << 48));
  hs_page_stamp_system(page, PAGE, 3, 778, mark);
  CHECK(hs_page_verify(page, PAGE, 3, NULL, NULL));
  CHECK_EQ(hs_page_system(page), mark);
  page[14] ^= 1; /* another mark written over it fails the checksum */
  CHECK(!hs_page_verify(page, PAGE, 3, NULL, NULL));
}

static hs_blockno next_of_eight(void *ctx) {
  hs_blockno *next = ctx;
  return *next < 8 ? (*next)++ : HS_INVALID_BLOCK;
}

static void test_checksum_on_read(void) {
  testdir_make(dir, sizeof dir, "dur-sum");
  env e;
  REQUIRE(env_open(&e, true, 16, 1 << 20, NULL) == HS_OK);
  make_relation(&e, 8);
  for (hs_blockno b = 0; b < 6; b++) CHECK_OK(bump(&e, b, b + 1, NULL));
  env_close(&e);

  /* Every written page carries a valid header; block 7 was never written. */
  int fd = open(relation_file(), O_RDWR);
  REQUIRE(fd >= 0);
  static _Alignas(4096) unsigned char page[PAGE];
  for (hs_blockno b = 0; b < 8; b++) {
    REQUIRE(pread(fd, page, PAGE, (off_t)b * PAGE) == PAGE);
    CHECK(hs_page_verify(page, PAGE, b, NULL, NULL));
    if (b < 6) CHECK(hs_page_lsn(page) > 0);
  }
  /* One flipped bit in block 2's engine area. */
  REQUIRE(pread(fd, page, PAGE, 2 * PAGE) == PAGE);
  page[4000] ^= 0x10;
  REQUIRE(pwrite(fd, page, PAGE, 2 * PAGE) == PAGE);
  close(fd);

  REQUIRE(env_open(&e, true, 16, 1 << 20, NULL) == HS_OK);
  hs_buf b;
  CHECK_ST(hs_pool_read(e.pool, REL, HS_FORK_MAIN, 2, HS_READ_NORMAL, NULL, &b, NULL),
           HS_ERR_CORRUPT);
  CHECK_CONTAINS(hs_last_error(), "relation 7 fork 0 block 2");
  CHECK_CONTAINS(hs_last_error(), "expected");
  /* Never silently returned: a second read fails the same way. */
  CHECK_ST(hs_pool_read(e.pool, REL, HS_FORK_MAIN, 2, HS_READ_NORMAL, NULL, &b, NULL),
           HS_ERR_CORRUPT);
  CHECK_EQ(read_counter(&e, 1), 2);
  CHECK_EQ(read_counter(&e, 7), 0); /* zeros: valid */
  /* A read stream over the relation stops at block 2 with the same error,
   * and hands out the blocks before it. */
  hs_read_stream *s;
  hs_blockno next = 0;
  REQUIRE(hs_read_stream_open(e.pool, REL, HS_FORK_MAIN, NULL, next_of_eight, &next, 0, &s) ==
          HS_OK);
  hs_status st = HS_OK;
  uint32_t good = 0;
  for (;;) {
    hs_blockno blk;
    st = hs_read_stream_next(s, &b, &blk);
    if (st != HS_OK || b == HS_INVALID_BUF) break;
    good++;
    hs_buf_release(e.pool, b);
  }
  CHECK_EQ(st, HS_ERR_CORRUPT);
  CHECK(good <= 2);
  hs_read_stream_close(s);
  /* The page LSN came back from the header. */
  REQUIRE(hs_pool_read(e.pool, REL, HS_FORK_MAIN, 1, HS_READ_NORMAL, NULL, &b, NULL) == HS_OK);
  CHECK(hs_buf_lsn(e.pool, b) > 0);
  hs_buf_release(e.pool, b);
  /* The header belongs to hotset: a change inside it is refused. */
  REQUIRE(hs_pool_read(e.pool, REL, HS_FORK_MAIN, 1, HS_READ_NORMAL, NULL, &b, NULL) == HS_OK);
  hs_buf_lock(e.pool, b, HS_LOCK_EXCLUSIVE);
  hs_wal_range in_header = {8, 4};
  CHECK_ST(hs_buf_log_change(e.pool, b, &in_header, 1, NULL), HS_ERR_INVALID);
  CHECK_CONTAINS(hs_last_error(), "page header");
  hs_buf_unlock(e.pool, b);
  hs_buf_release(e.pool, b);
  hs_pool_abandon(e.pool); /* block 2 stays bad: close would not write it anyway */
  CHECK_OK(hs_wal_close(e.wal));
  testdir_remove(dir);
}

/* ---- full-page writes and checkpoints ------------------------------------ */

/* A miss takes a clean buffer over a dirty one whose write would first
 * force a WAL flush (a lookup landing on a page vacuum just dirtied must
 * not wait for an fdatasync while clean buffers are there); with every
 * buffer dirty and unflushed, it pays the flush. Pool of 8: blocks 0..3
 * dirtied and logged (not flushed), 4..7 clean and used more often; reading
 * 8..11 must evict the clean ones and sync nothing. Then everything dirty: reading one more
 * block syncs once, and the page it evicted is on disk. */
static void test_victims_avoid_wal_flushes(void) {
  testdir_make(dir, sizeof dir, "dur-victim");
  env e;
  REQUIRE(env_open(&e, false, 8, 1 << 20, NULL) == HS_OK);
  make_relation(&e, 16);
  CHECK_OK(hs_pool_checkpoint(e.pool)); /* everything clean and on disk */
  for (hs_blockno blk = 0; blk < 8; blk++) {
    hs_buf b;
    REQUIRE(hs_pool_read(e.pool, REL, HS_FORK_MAIN, blk, HS_READ_NORMAL, NULL, &b, NULL) == HS_OK);
    hs_buf_release(e.pool, b);
  }
  for (hs_blockno blk = 0; blk < 4; blk++) CHECK_OK(bump(&e, blk, 1, NULL));
  /* The clean pages hotter than the dirty ones: the policy's own order
   * would evict the dirty ones first. */
  for (int round = 0; round < 4; round++)
    for (hs_blockno blk = 4; blk < 8; blk++) {
      hs_buf b;
      REQUIRE(hs_pool_read(e.pool, REL, HS_FORK_MAIN, blk, HS_READ_NORMAL, NULL, &b, NULL) ==
              HS_OK);
      hs_buf_release(e.pool, b);
    }
  hs_wal_stats ws0, ws1;
  hs_wal_stats_get(e.wal, &ws0);
  for (hs_blockno blk = 8; blk < 12; blk++) {
    hs_buf b;
    REQUIRE(hs_pool_read(e.pool, REL, HS_FORK_MAIN, blk, HS_READ_NORMAL, NULL, &b, NULL) == HS_OK);
    hs_buf_release(e.pool, b);
  }
  hs_wal_stats_get(e.wal, &ws1);
  CHECK_EQ(ws1.syncs - ws0.syncs, 0);
  CHECK_EQ(ws1.flush_syncs[HS_WAL_CAUSE_EVICT_NORMAL] - ws0.flush_syncs[HS_WAL_CAUSE_EVICT_NORMAL],
           0);
  for (hs_blockno blk = 0; blk < 4; blk++) { /* still resident, still dirty */
    hs_buf b;
    bool hit = false;
    REQUIRE(hs_pool_read(e.pool, REL, HS_FORK_MAIN, blk, HS_READ_NORMAL, NULL, &b, &hit) == HS_OK);
    CHECK(hit);
    CHECK(hs_buf_is_dirty(e.pool, b));
    hs_buf_release(e.pool, b);
  }
  for (hs_blockno blk = 8; blk < 12; blk++) CHECK_OK(bump(&e, blk, 1, NULL));
  hs_wal_stats_get(e.wal, &ws0);
  hs_buf b;
  CHECK_OK(hs_pool_read(e.pool, REL, HS_FORK_MAIN, 12, HS_READ_NORMAL, NULL, &b, NULL));
  hs_buf_release(e.pool, b);
  hs_wal_stats_get(e.wal, &ws1);
  CHECK_EQ(ws1.flush_syncs[HS_WAL_CAUSE_EVICT_NORMAL] - ws0.flush_syncs[HS_WAL_CAUSE_EVICT_NORMAL],
           1);
  env_close(&e);
  testdir_remove(dir);
}

static void test_full_page_writes(void) {
  testdir_make(dir, sizeof dir, "dur-fpw");
  env e;
  REQUIRE(env_open(&e, true, 16, 1 << 20, NULL) == HS_OK);
  make_relation(&e, 4);
  hs_wal_stats ws;
  hs_wal_stats_get(e.wal, &ws);
  uint64_t fpi0 = ws.full_page_images;
  CHECK_OK(bump(&e, 0, 1, NULL)); /* first change: an image */
  CHECK_OK(bump(&e, 0, 1, NULL)); /* then ranges */
  CHECK_OK(bump(&e, 1, 1, NULL)); /* another page's first: an image */
  hs_wal_stats_get(e.wal, &ws);
  CHECK_EQ(ws.full_page_images - fpi0, 2);
  CHECK_OK(hs_pool_checkpoint(e.pool));
  CHECK_OK(bump(&e, 0, 1, NULL)); /* first change since the redo point */
  CHECK_OK(bump(&e, 0, 1, NULL));
  hs_wal_stats_get(e.wal, &ws);
  CHECK_EQ(ws.full_page_images - fpi0, 3);
  hs_pool_checkpoint_stats cs;
  hs_pool_checkpoint_stats_get(e.pool, &cs);
  CHECK(cs.requested >= 1);
  CHECK(cs.buffers_written >= 2);
  CHECK(cs.last_redo > 0 && cs.last_checkpoint >= cs.last_redo);
  env_close(&e);
  testdir_remove(dir);
}

static unsigned count_segments(void) {
  char wd[4200];
  wal_dir(wd, sizeof wd);
  DIR *d = opendir(wd);
  unsigned n = 0;
  for (struct dirent *x; d && (x = readdir(d));)
    if (strlen(x->d_name) == 16) n++;
  if (d) closedir(d);
  return n;
}

static void test_checkpoint_recycles(void) {
  testdir_make(dir, sizeof dir, "dur-recycle");
  env e;
  REQUIRE(env_open(&e, true, 16, 1 << 16, NULL) == HS_OK); /* 64 KiB segments */
  make_relation(&e, COUNTERS);
  for (int round = 0; round < 20; round++) {
    for (hs_blockno b = 0; b < COUNTERS; b++) CHECK_OK(bump(&e, b, 1, NULL));
    CHECK_OK(hs_pool_checkpoint(e.pool));
  }
  hs_pool_checkpoint_stats cs;
  hs_pool_checkpoint_stats_get(e.pool, &cs);
  CHECK(cs.segments_recycled > 0);
  /* 20 rounds of 24 images each is ~60 segments of log; what is left is
   * the redo point's segment, the current one and the spares. */
  CHECK(count_segments() <= 5);
  hs_wal_stats ws;
  hs_wal_stats_get(e.wal, &ws);
  CHECK(ws.bytes > 40u * (1 << 16));
  CHECK_EQ(ws.segments_recycled, cs.segments_recycled);
  CHECK_EQ(ws.segments_removed, cs.segments_removed);
  /* Recycled segments are reused, not created: far fewer creations than
   * segments of log written. */
  CHECK(ws.segments_created < ws.bytes / (1 << 16) / 2);
  hs_lsn inserted = hs_wal_insert_lsn(e.wal);
  env_close(&e);
  /* The log's end, found read-only: after the shutdown checkpoint's record. */
  char wd[4200];
  wal_dir(wd, sizeof wd);
  hs_lsn found = 0;
  CHECK_OK(hs_wal_find_end(wd, 1 << 16, &found));
  CHECK(found > inserted);
  /* Reopened: nothing to replay past the shutdown checkpoint; values kept. */
  REQUIRE(env_open(&e, true, 16, 1 << 16, NULL) == HS_OK);
  CHECK_EQ(hs_wal_insert_lsn(e.wal), found);
  hs_pool_recovery_stats rep;
  hs_pool_recovery_stats_get(e.pool, &rep);
  CHECK_EQ(rep.images + rep.applied, 0);
  for (hs_blockno b = 0; b < COUNTERS; b++) CHECK_EQ(read_counter(&e, b), 20);
  env_close(&e);
  /* A damaged control file is an error naming it, never a silent restart. */
  char path[4300];
  snprintf(path, sizeof path, "%s/hotset.control", dir); /* the data directory's */
  int fd = open(path, O_WRONLY);
  REQUIRE(fd >= 0);
  REQUIRE(pwrite(fd, "X", 1, 20) == 1);
  close(fd);
  CHECK_ST(env_open(&e, true, 16, 1 << 16, NULL), HS_ERR_CORRUPT);
  CHECK_CONTAINS(hs_last_error(), "control file");
  testdir_remove(dir);
}

/* ---- crash recovery in a child process ----------------------------------- */

/* The counter resource manager: adds the record's payload (u64) to the
 * counter — not idempotent, so applying a record twice shows. */
static hs_status counter_redo(void *ctx, const hs_wal_read_record *rec, void *const *pages,
                              uint32_t page_size) {
  (void)ctx;
  (void)page_size;
  uint64_t by;
  memcpy(&by, rec->data, 8);
  for (uint16_t i = 0; i < rec->npages; i++) {
    if (!pages[i]) continue;
    add_to_counter(pages[i], by);
  }
  return HS_OK;
}

/* A child that sends nothing back, through run_killed_child
 * (killed_child.h). */
typedef struct plain_child {
  void (*body)(void);
} plain_child;

static void run_plain(void *ctx, int out) {
  (void)out;
  ((plain_child *)ctx)->body();
}

static bool run_killed(void (*child)(void)) {
  plain_child c = {child};
  return run_killed_child(run_plain, &c, NULL, 0);
}

static void fail_child(const char *what) {
  fprintf(stderr, "child: %s: %s\n", what, hs_last_error());
  _exit(2);
}

/* Child: counters changed by generic ranges and by the counter rmgr, some
 * pages written in between (so recovery must skip what they hold), a
 * checkpoint in the middle; the log flushed; then killed. */
static void crash_child(void) {
  env e;
  if (env_open(&e, true, 8, 1 << 20, counter_redo) != HS_OK) fail_child("open");
  make_relation(&e, COUNTERS);
  hs_lsn end = 0;
  for (int round = 0; round < 6; round++) {
    for (hs_blockno b = 0; b < COUNTERS; b++) {
      hs_status st = b % 2 ? change_counter(&e, b, 3, true, &end) : bump(&e, b, 1, &end);
      if (st != HS_OK) fail_child("change");
    }
    if (round == 2 && hs_pool_checkpoint(e.pool) != HS_OK) fail_child("checkpoint");
  }
  if (hs_wal_flush(e.wal, end, HS_WAL_CAUSE_COMMIT, NULL) != HS_OK) fail_child("flush");
}

static void test_crash_recovery(void) {
  testdir_make(dir, sizeof dir, "dur-crash");
  REQUIRE(run_killed(crash_child));
  env e;
  REQUIRE(env_open(&e, true, 8, 1 << 20, counter_redo) == HS_OK);
  hs_pool_recovery_stats rep;
  hs_pool_recovery_stats_get(e.pool, &rep);
  CHECK(rep.ran);
  CHECK(rep.records > 0 && rep.bytes > 0 && rep.end > rep.start);
  CHECK(rep.start > 0); /* from the checkpoint's redo point, not the start */
  CHECK(rep.images > 0 && rep.applied > 0);
  CHECK_CONTAINS(rep.why_end, "at");
  for (hs_blockno b = 0; b < COUNTERS; b++) CHECK_EQ(read_counter(&e, b), b % 2 ? 18 : 6);
  env_close(&e);
  /* Once more: the end-of-recovery checkpoint left nothing to replay. */
  REQUIRE(env_open(&e, true, 8, 1 << 20, counter_redo) == HS_OK);
  hs_pool_recovery_stats_get(e.pool, &rep);
  CHECK_EQ(rep.images + rep.applied, 0);
  env_close(&e);
  /* And after that clean close, nothing ran at all: its checkpoint record
   * is where replay starts, not a record to replay. */
  REQUIRE(env_open(&e, true, 8, 1 << 20, counter_redo) == HS_OK);
  hs_pool_recovery_stats_get(e.pool, &rep);
  CHECK(!rep.ran);
  CHECK_EQ(rep.records, 0);
  CHECK_EQ(rep.images + rep.applied, 0);
  env_close(&e);
  /* Without its resource manager the log cannot be replayed: refused. */
  REQUIRE(run_killed(crash_child));
  CHECK_ST(env_open(&e, true, 8, 1 << 20, NULL), HS_ERR_INVALID);
  CHECK_CONTAINS(hs_last_error(), "not registered");
  testdir_remove(dir);
}

/* A crash in this process: the pool's dirty pages are lost, the log's
 * durable part stays. */
static void env_crash(env *e) {
  hs_pool_abandon(e->pool);
  CHECK_OK(hs_wal_close(e->wal));
}

static bool segment_exists(hs_lsn lsn, uint64_t segment) {
  char wd[4200], path[4300];
  wal_dir(wd, sizeof wd);
  snprintf(path, sizeof path, "%s/%016llX", wd, (unsigned long long)(lsn - lsn % segment));
  return access(path, F_OK) == 0;
}

/* The control file recovery leaves names the end-of-recovery checkpoint,
 * whose checkpoint recycled the segments before its redo point. A control
 * file still naming the checkpoint from before the crash (recovery writing
 * "in production" over a stale copy of it) names a redo point whose segment
 * is gone: after a second crash, before anything else rewrote the control
 * file, the directory never opened again. */
static void test_control_after_recovery(void) {
  testdir_make(dir, sizeof dir, "dur-control");
  const uint64_t segment = 1 << 16;
  env e;
  REQUIRE(env_open(&e, true, 32, segment, NULL) == HS_OK);
  make_relation(&e, 4);
  hs_lsn end = 0;
  for (hs_blockno b = 0; b < 4; b++) CHECK_OK(bump(&e, b, 1, &end));
  CHECK_OK(hs_pool_checkpoint(e.pool));
  hs_control first;
  REQUIRE(hs_control_read(dir, &first) == HS_OK && first.has_checkpoint);
  /* More than two segments of changes: the end-of-recovery checkpoint
   * recycles the first checkpoint's segment. */
  uint64_t rounds = 1;
  for (; hs_wal_insert_lsn(e.wal) < first.redo + 3 * segment; rounds++)
    for (hs_blockno b = 0; b < 4; b++) CHECK_OK(bump(&e, b, 1, &end));
  CHECK_OK(hs_wal_flush(e.wal, end, HS_WAL_CAUSE_COMMIT, NULL));
  env_crash(&e);

  REQUIRE(env_open(&e, true, 32, segment, NULL) == HS_OK);
  hs_pool_recovery_stats rep;
  hs_pool_recovery_stats_get(e.pool, &rep);
  CHECK(rep.images + rep.applied > 0); /* so the end-of-recovery checkpoint ran */
  hs_pool_checkpoint_stats cs;
  hs_pool_checkpoint_stats_get(e.pool, &cs);
  hs_control now;
  REQUIRE(hs_control_read(dir, &now) == HS_OK);
  CHECK(now.has_checkpoint);
  CHECK_EQ(now.checkpoint, cs.last_checkpoint);
  CHECK_EQ(now.redo, cs.last_redo);
  CHECK_EQ(now.state, HS_DB_IN_PRODUCTION);
  REQUIRE(!segment_exists(first.redo, segment)); /* what a stale control file would need */
  env_crash(&e);                                 /* again, right away */

  hs_status st = env_open(&e, true, 32, segment, NULL);
  CHECK_OK(st);
  if (st == HS_OK) {
    for (hs_blockno b = 0; b < 4; b++) CHECK_EQ(read_counter(&e, b), rounds);
    env_close(&e);
  }
  testdir_remove(dir);
}

/* A page recovery changed carries the end of the last record applied to it
 * (PostgreSQL's PageSetLSN at the record's EndRecPtr), as it would have had
 * the change been made live. Stamped with the record's start instead, the
 * page looks as if it lacked that record: a replay that starts before it
 * again — the control file lost, so replay starts at the oldest segment
 * left, past the page's image — applies the record a second time. With the
 * counter resource manager, whose redo adds, the counter then goes up twice
 * for one acknowledged change. */
static void test_replayed_page_lsn(void) {
  testdir_make(dir, sizeof dir, "dur-lsn");
  const uint64_t segment = 1 << 16;
  const hs_blockno counter = 0, filler = 1;
  env e;
  REQUIRE(env_open(&e, true, 16, segment, counter_redo) == HS_OK);
  make_relation(&e, 2);
  CHECK_OK(hs_pool_checkpoint(e.pool));
  hs_lsn image_end, last_end = 0, end = 0;
  /* The counter's first change since the redo point: its image. */
  CHECK_OK(change_counter(&e, counter, 1, true, &image_end));
  /* Two segments of another page's changes: the end-of-recovery checkpoint
   * recycles the segment holding the image. */
  while (hs_wal_insert_lsn(e.wal) < image_end - image_end % segment + 2 * segment)
    CHECK_OK(bump(&e, filler, 1, &end));
  /* The counter's last change: no image (changed since the redo point). */
  CHECK_OK(change_counter(&e, counter, 1, true, &last_end));
  CHECK_OK(hs_wal_flush(e.wal, last_end, HS_WAL_CAUSE_COMMIT, NULL));
  env_crash(&e);

  REQUIRE(env_open(&e, true, 16, segment, counter_redo) == HS_OK);
  hs_pool_recovery_stats rep;
  hs_pool_recovery_stats_get(e.pool, &rep);
  CHECK(rep.images > 0 && rep.applied > 0);
  CHECK_EQ(read_counter(&e, counter), 2);
  hs_buf b;
  REQUIRE(hs_pool_read(e.pool, REL, HS_FORK_MAIN, counter, HS_READ_NORMAL, NULL, &b, NULL) ==
          HS_OK);
  CHECK_EQ(hs_buf_lsn(e.pool, b), last_end);
  hs_buf_release(e.pool, b);
  env_close(&e);
  /* The setting: the log now starts after the image (replay without a
   * control file starts at its oldest segment), before the last change. */
  REQUIRE(!segment_exists(image_end, segment));
  REQUIRE(segment_exists(last_end - 1, segment));

  char control[4300];
  snprintf(control, sizeof control, "%s/%s", dir, HS_CONTROL_FILE);
  REQUIRE(unlink(control) == 0);
  REQUIRE(env_open(&e, true, 16, segment, counter_redo) == HS_OK); /* page_size given */
  hs_pool_recovery_stats_get(e.pool, &rep);
  CHECK(rep.skipped > 0); /* the last change met again, and found on the page */
  CHECK_EQ(read_counter(&e, counter), 2);
  env_close(&e);
  testdir_remove(dir);
}

/* Child: a page changed after a checkpoint (its image logged), the log
 * flushed, then its write torn half way by the fault layer, then killed. */
static void torn_child(void) {
  env e;
  if (env_open(&e, true, 8, 1 << 20, NULL) != HS_OK) fail_child("open");
  make_relation(&e, 4);
  for (hs_blockno b = 0; b < 4; b++)
    if (bump(&e, b, 5, NULL) != HS_OK) fail_child("change");
  if (hs_pool_checkpoint(e.pool) != HS_OK) fail_child("checkpoint");
  hs_lsn end;
  if (bump(&e, 1, 2, &end) != HS_OK) fail_child("change after");
  if (hs_wal_flush(e.wal, end, HS_WAL_CAUSE_COMMIT, NULL) != HS_OK) fail_child("flush");
  hs_smgr_inject_fault(hs_pool_smgr(e.pool), HS_IO_WRITE, 1, 0, 1); /* half a page */
  if (hs_pool_flush_all(e.pool) == HS_OK) fail_child("the torn write did not fail");
}

static void test_torn_page_repaired(void) {
  testdir_make(dir, sizeof dir, "dur-torn");
  REQUIRE(run_killed(torn_child));
  /* On disk, block 1 is torn: half new, half old — its checksum fails. */
  int fd = open(relation_file(), O_RDONLY);
  REQUIRE(fd >= 0);
  static _Alignas(4096) unsigned char page[PAGE];
  REQUIRE(pread(fd, page, PAGE, 1 * PAGE) == PAGE);
  close(fd);
  CHECK(!hs_page_verify(page, PAGE, 1, NULL, NULL));
  env e;
  REQUIRE(env_open(&e, true, 8, 1 << 20, NULL) == HS_OK);
  hs_pool_recovery_stats rep;
  hs_pool_recovery_stats_get(e.pool, &rep);
  CHECK(rep.images >= 1);
  CHECK_EQ(read_counter(&e, 1), 7);
  CHECK_EQ(read_counter(&e, 0), 5);
  env_close(&e);
  fd = open(relation_file(), O_RDONLY);
  REQUIRE(fd >= 0);
  REQUIRE(pread(fd, page, PAGE, 1 * PAGE) == PAGE);
  close(fd);
  CHECK(hs_page_verify(page, PAGE, 1, NULL, NULL));
  testdir_remove(dir);
}

/* ---- threads changing pages while checkpoints run ------------------------- */

#define WORKERS 3
#define BUMPS   400

typedef struct worker {
  env *e;
  uint32_t id;
} worker;

static void *worker_main(void *arg) {
  worker *w = arg;
  /* Each worker owns the counters b with b % WORKERS == id. */
  for (uint32_t i = 0; i < BUMPS; i++) {
    hs_blockno b = (hs_blockno)(w->id + WORKERS * (i % (COUNTERS / WORKERS)));
    if (bump(w->e, b, 1, NULL) != HS_OK) atomic_fetch_add(&thread_failures, 1);
  }
  return NULL;
}

static _Atomic bool stop_checkpoints;
static void *checkpoint_main(void *arg) {
  env *e = arg;
  while (!atomic_load(&stop_checkpoints))
    if (hs_pool_checkpoint(e->pool) != HS_OK) atomic_fetch_add(&thread_failures, 1);
  return NULL;
}

static void test_checkpoints_race_changes(void) {
  testdir_make(dir, sizeof dir, "dur-race");
  env e;
  REQUIRE(env_open(&e, true, 12, 1 << 16, NULL) == HS_OK);
  make_relation(&e, COUNTERS);
  pthread_t t[WORKERS], c;
  worker w[WORKERS];
  atomic_store(&stop_checkpoints, false);
  pthread_create(&c, NULL, checkpoint_main, &e);
  for (uint32_t i = 0; i < WORKERS; i++) {
    w[i] = (worker){&e, i};
    pthread_create(&t[i], NULL, worker_main, &w[i]);
  }
  for (uint32_t i = 0; i < WORKERS; i++) pthread_join(t[i], NULL);
  atomic_store(&stop_checkpoints, true);
  pthread_join(c, NULL);
  CHECK_EQ(atomic_load(&thread_failures), 0);
  /* A crash: the pool's dirty pages are lost, the log is durable. */
  CHECK_OK(hs_wal_flush(e.wal, hs_wal_insert_lsn(e.wal), HS_WAL_CAUSE_COMMIT, NULL));
  hs_pool_abandon(e.pool);
  CHECK_OK(hs_wal_close(e.wal));
  REQUIRE(env_open(&e, true, 12, 1 << 16, NULL) == HS_OK);
  uint64_t total = 0;
  for (hs_blockno b = 0; b < COUNTERS; b++) total += read_counter(&e, b);
  CHECK_EQ(total, (uint64_t)WORKERS * BUMPS);
  env_close(&e);
  testdir_remove(dir);
}

/* The checkpointer thread runs on its own by time. */
static void test_checkpointer_thread(void) {
  testdir_make(dir, sizeof dir, "dur-thread");
  char wd[4200];
  wal_dir(wd, sizeof wd);
  hs_wal_options wo;
  hs_wal_options_init(&wo);
  wo.dir = wd;
  hs_wal *wal;
  REQUIRE(hs_wal_open(&wo, &wal) == HS_OK);
  hs_pool_options po;
  hs_pool_options_init(&po);
  po.dir = dir;
  po.pool_pages = 16;
  po.wal = wal;
  po.checksums = true;
  po.checkpoint_timeout_ms = 20;
  hs_pool *pool;
  REQUIRE(hs_pool_open(&po, &pool) == HS_OK);
  env e = {wal, pool};
  make_relation(&e, 4);
  /* Waits for the timer-driven event itself, bounded (10 s). */
  hs_pool_checkpoint_stats cs = {0};
  for (int i = 0; i < 10000 && cs.timed < 2; i++) {
    CHECK_OK(bump(&e, (hs_blockno)(i % 4), 1, NULL));
    struct timespec ms = {0, 1000000};
    nanosleep(&ms, NULL);
    hs_pool_checkpoint_stats_get(pool, &cs);
  }
  CHECK(cs.timed >= 2);
  CHECK_EQ(cs.failed, 0);
  env_close(&e);
  testdir_remove(dir);
}

/* ---- misuse and options ---------------------------------------------------- */

static void test_refusals(void) {
  testdir_make(dir, sizeof dir, "dur-refuse");
  hs_pool_options po;
  hs_pool_options_init(&po);
  po.dir = dir;
  po.pool_pages = 8;
  hs_pool *pool;
  po.checkpoint_timeout_ms = 100;
  CHECK_ST(hs_pool_open(&po, &pool), HS_ERR_INVALID);
  CHECK_CONTAINS(hs_last_error(), "checkpoint_timeout_ms");
  po.checkpoint_timeout_ms = 0;
  po.checkpoint_completion_target = 0;
  CHECK_ST(hs_pool_open(&po, &pool), HS_ERR_INVALID);
  po.checkpoint_completion_target = 1.5;
  CHECK_ST(hs_pool_open(&po, &pool), HS_ERR_INVALID);
  CHECK_CONTAINS(hs_last_error(), "checkpoint_completion_target");
  po.checkpoint_completion_target = 1.0;
  REQUIRE(hs_pool_open(&po, &pool) == HS_OK); /* no log */
  CHECK_ST(hs_pool_checkpoint(pool), HS_ERR_INVALID);
  env e = {NULL, pool};
  REQUIRE(hs_smgr_create_if_missing(hs_pool_smgr(pool), REL, HS_FORK_MAIN, NULL) == HS_OK);
  hs_buf b;
  REQUIRE(hs_pool_extend(pool, REL, HS_FORK_MAIN, NULL, true, &b, NULL) == HS_OK);
  hs_wal_range r = {64, 8};
  CHECK_ST(hs_buf_log_change(pool, b, &r, 1, NULL), HS_ERR_INVALID);
  CHECK_CONTAINS(hs_last_error(), "no log");
  hs_buf_unlock(pool, b);
  hs_buf_release(pool, b);
  CHECK_OK(hs_pool_close(pool));
  (void)e;
  testdir_remove(dir);

  testdir_make(dir, sizeof dir, "dur-refuse2");
  REQUIRE(env_open(&e, true, 8, 1 << 20, NULL) == HS_OK);
  make_relation(&e, 1);
  REQUIRE(hs_pool_read(e.pool, REL, HS_FORK_MAIN, 0, HS_READ_NORMAL, NULL, &b, NULL) == HS_OK);
  /* (Logging without the exclusive lock is misuse: test_misuse.) */
  hs_buf_lock(e.pool, b, HS_LOCK_EXCLUSIVE);
  hs_wal_record rec = {.rmgr = HS_WAL_RMGR_GENERIC, .npages = 1};
  CHECK_ST(hs_buf_log_record(e.pool, &rec, &b, NULL), HS_ERR_INVALID); /* hotset's own rmgr */
  hs_wal_page wrong = {.rel = REL, .fork = HS_FORK_MAIN, .block = 5};
  hs_wal_record rec2 = {.rmgr = 20, .npages = 1, .pages = &wrong};
  CHECK_ST(hs_buf_log_record(e.pool, &rec2, &b, NULL), HS_ERR_INVALID); /* names another page */
  CHECK_CONTAINS(hs_last_error(), "block 5");
  hs_buf_unlock(e.pool, b);
  hs_buf_release(e.pool, b);
  env_close(&e);
  testdir_remove(dir);

  /* A log too small for the records full-page writes make: refused up
   * front, whatever the checkpoints' timing, with nothing logged or
   * marked. 64 KiB segments give a 64 KiB buffer: records of at most
   * ~31.6 KiB, three 8 KiB images but not four. */
  testdir_make(dir, sizeof dir, "dur-refuse3");
  REQUIRE(env_open(&e, true, 8, 1 << 16, NULL) == HS_OK);
  make_relation(&e, 4);
  for (hs_blockno blk = 0; blk < 4; blk++)
    CHECK_OK(bump(&e, blk, 1, NULL)); /* changed since the redo point: no image needed */
  hs_buf two[4];
  for (int i = 0; i < 4; i++) {
    REQUIRE(hs_pool_read(e.pool, REL, HS_FORK_MAIN, (hs_blockno)i, HS_READ_NORMAL, NULL, &two[i],
                         NULL) == HS_OK);
    hs_buf_lock(e.pool, two[i], HS_LOCK_EXCLUSIVE);
  }
  for (int i = 0; i < 4; i++) CHECK_OK(hs_pool_flush_buffer(e.pool, two[i]));
  uint64_t by = 1;
  hs_wal_record rec3 = {.rmgr = 20, .npages = 4, .data = &by, .len = 8};
  hs_lsn before = hs_wal_insert_lsn(e.wal);
  CHECK_ST(hs_buf_log_record(e.pool, &rec3, two, NULL), HS_ERR_INVALID);
  CHECK_CONTAINS(hs_last_error(), "largest record");
  CHECK_EQ(hs_wal_insert_lsn(e.wal), before);
  hs_buffer_info info[8];
  REQUIRE(hs_pool_dump(e.pool, info, 8) == HS_OK);
  for (int i = 0; i < 4; i++) CHECK(!info[two[i]].dirty);
  for (int i = 0; i < 4; i++) {
    hs_buf_unlock(e.pool, two[i]);
    hs_buf_release(e.pool, two[i]);
  }
  env_close(&e);
  testdir_remove(dir);
  /* A pool with pages its log cannot carry a full image of: refused. */
  testdir_make(dir, sizeof dir, "dur-refuse4");
  char wd[4200];
  wal_dir(wd, sizeof wd);
  hs_wal_options wo;
  hs_wal_options_init(&wo);
  wo.dir = wd;
  wo.segment_bytes = 1 << 16;
  wo.buffer_bytes = 1 << 15; /* records of at most 15.5 KiB */
  hs_wal *small;
  REQUIRE(hs_wal_open(&wo, &small) == HS_OK);
  hs_pool_options po2;
  hs_pool_options_init(&po2);
  po2.dir = dir;
  po2.pool_pages = 8;
  po2.wal = small;
  po2.page_size = 32768;
  hs_pool *p2;
  CHECK_ST(hs_pool_open(&po2, &p2), HS_ERR_INVALID);
  CHECK_CONTAINS(hs_last_error(), "cannot carry a full image");
  /* One opener of a log at a time (opening clears its tail). */
  hs_wal *second;
  CHECK_ST(hs_wal_open(&wo, &second), HS_ERR_BUSY);
  CHECK_CONTAINS(hs_last_error(), "log directory");
  CHECK_CONTAINS(hs_last_error(), "in use by process");
  po2.page_size = 4096;
  CHECK_OK(hs_pool_open(&po2, &p2));
  CHECK_OK(hs_pool_close(p2));
  CHECK_OK(hs_wal_close(small));
  CHECK_OK(hs_wal_open(&wo, &second)); /* free again */
  CHECK_OK(hs_wal_close(second));
  testdir_remove(dir);
}

int main(void) {
  test_victims_avoid_wal_flushes();
  test_page_functions();
  test_checksum_on_read();
  test_full_page_writes();
  test_checkpoint_recycles();
  test_crash_recovery();
  test_control_after_recovery();
  test_replayed_page_lsn();
  test_torn_page_repaired();
  test_checkpoints_race_changes();
  test_checkpointer_thread();
  test_refusals();
  CHECK_EQ(atomic_load(&thread_failures), 0u);
  return check_finish();
}
