/*
 * test_stream — combined reads: hs_smgr_readv (contents, past-end and
 * injected faults naming the right block) and read streams (every block in
 * the source's order with the right contents, runs combined into one read,
 * hits in the pool left out of the reads, a ring that never takes more than
 * its size from the pool, failures that release every pin, and concurrent
 * streams over the same relation beside point readers).
 */
#include "hotset/storage.h"
#include "hotset/strategy.h"
#include "hotset/stream.h"
#include "pool_util.h"

#include <errno.h>
#include <pthread.h>

static const hs_relid HOT = 1, BIG = 2;
#define PAGE     1024u
#define NBIG     100u
#define NBUFFERS 64u

static void test_readv(hs_pool *pool) {
  hs_smgr *smgr = hs_pool_smgr(pool);
  _Alignas(4096) unsigned char bufs[5][PAGE];
  void *pages[5];
  for (int i = 0; i < 5; i++) pages[i] = bufs[i];
  CHECK_OK(hs_smgr_readv(smgr, BIG, HS_FORK_MAIN, 10, 5, pages));
  for (int i = 0; i < 5; i++) CHECK_EQ(stamp_value(bufs[i], BIG, 10u + (unsigned)i), 0);

  /* Past the end: the first block not there is named. */
  CHECK_ST(hs_smgr_readv(smgr, BIG, HS_FORK_MAIN, NBIG - 2, 5, pages), HS_ERR_EOF);
  CHECK_CONTAINS(hs_last_error(), "block 100 is past the end");

  /* An injected EIO fails the whole call, naming its first block. */
  CHECK_OK(hs_smgr_inject_fault(smgr, HS_IO_READ, 1, EIO, 1));
  CHECK_ST(hs_smgr_readv(smgr, BIG, HS_FORK_MAIN, 20, 4, pages), HS_ERR_IO);
  CHECK_CONTAINS(hs_last_error(), "could not read block 20 of");
  /* A short transfer: 1.5 of 4 pages arrive, block 21 is the first short. */
  CHECK_OK(hs_smgr_inject_fault(smgr, HS_IO_READ, 1, 0, 1));
  CHECK_ST(hs_smgr_readv(smgr, BIG, HS_FORK_MAIN, 20, 4, pages), HS_ERR_SHORT_IO);
  CHECK_CONTAINS(hs_last_error(), "could not read block 21 of");
  CHECK_EQ(stamp_value(bufs[0], BIG, 20), 0); /* what did arrive is right */
  hs_smgr_clear_faults(smgr);

  CHECK_ST(hs_smgr_readv(smgr, BIG, HS_FORK_MAIN, 0, 0, pages), HS_ERR_INVALID);
  CHECK_ST(hs_smgr_readv(smgr, BIG, HS_FORK_MAIN, 0, HS_SMGR_READV_MAX + 1, pages), HS_ERR_INVALID);
}

/* A pool with `workers` I/O workers (0: streams read on their own thread). */
static hs_pool *open_stream_pool(const char *dir, uint32_t pages, uint32_t workers) {
  hs_pool_options o;
  hs_pool_options_init(&o);
  o.dir = dir;
  o.pool_pages = pages;
  o.page_size = PAGE;
  o.io_workers = workers;
  return open_pool_from(&o);
}

static uint32_t pinned_buffers(hs_pool *pool) {
  uint32_t n = hs_pool_nbuffers(pool), count = 0;
  hs_buffer_info *all = calloc(n, sizeof *all);
  REQUIRE(hs_pool_dump(pool, all, n) == HS_OK);
  for (uint32_t i = 0; i < n; i++) count += all[i].pins > 0;
  free(all);
  return count;
}

/* Reads the whole stream, checking order and contents; returns the count. */
static uint32_t drain(hs_pool *pool, hs_read_stream *s, hs_blockno first, hs_blockno nblocks) {
  uint32_t got = 0;
  for (;;) {
    hs_buf b;
    hs_blockno blk;
    hs_status st = hs_read_stream_next(s, &b, &blk);
    REQUIRE(st == HS_OK);
    if (b == HS_INVALID_BUF) break;
    CHECK_EQ(blk, (first + got) % nblocks);
    CHECK_EQ(hs_buf_block(pool, b), blk);
    CHECK_EQ(stamp_value(hs_buf_page(pool, b), BIG, blk), 0);
    hs_buf_release(pool, b);
    got++;
  }
  return got;
}

/* A whole pass in order, blocks already in the pool counted as hits and
 * not read, the rest read in runs of `combine` pages: the second read
 * system call fails by injection, and the error names the first block of
 * the second run — block 8 with runs of 8 pages, block 1 without combining.
 * With I/O workers the second run is read ahead, on a worker, and its
 * failure is reported when the stream gets to it. */
static void test_stream_basics(const char *dir, uint32_t workers) {
  /* 256 buffers: a stream without a ring may pin 32: batches of 8 fit,
   * two at a time with workers. */
  hs_pool *pool = open_stream_pool(dir, 4 * NBUFFERS, workers);
  make_relation(pool, BIG, NBIG);
  hs_buf b = must_read(pool, BIG, 3, NULL);
  hs_buf_release(pool, b);
  b = must_read(pool, BIG, 50, NULL);
  hs_buf_release(pool, b);
  hs_pool_stats_reset(pool);

  hs_block_range r;
  hs_block_range_init(&r, 90, NBIG); /* wraps around */
  hs_read_stream *s;
  CHECK_OK(
      hs_read_stream_open(pool, BIG, HS_FORK_MAIN, NULL, hs_block_range_next, &r, 8 * PAGE, &s));
  CHECK_EQ(hs_read_stream_combine(s), 8);
  CHECK_EQ(drain(pool, s, 90, NBIG), NBIG);
  hs_read_stream_close(s);
  hs_pool_stats st;
  hs_pool_stats_get(pool, &st);
  CHECK_EQ(st.count[HS_IOCTX_NORMAL][HS_STAT_HITS], 2);
  CHECK_EQ(st.count[HS_IOCTX_NORMAL][HS_STAT_READS], NBIG - 2);
  CHECK_EQ(pinned_buffers(pool), 0);

  /* Combining, seen through a fault on the second read call (the pool
   * forgets the relation's pages first, so every block is a miss). */
  for (int combine = 1; combine <= 8; combine += 7) {
    CHECK_OK(hs_pool_drop_relation(pool, BIG));
    CHECK_OK(hs_smgr_inject_fault(hs_pool_smgr(pool), HS_IO_READ, 2, EIO, 1));
    hs_block_range_init(&r, 0, NBIG);
    CHECK_OK(hs_read_stream_open(pool, BIG, HS_FORK_MAIN, NULL, hs_block_range_next, &r,
                                 (uint32_t)combine * PAGE, &s));
    hs_buf got;
    hs_status rst = HS_OK;
    uint32_t n = 0;
    while ((rst = hs_read_stream_next(s, &got, NULL)) == HS_OK && got != HS_INVALID_BUF) {
      hs_buf_release(pool, got);
      n++;
    }
    CHECK_EQ(rst, HS_ERR_IO);
    if (workers < 2) {                /* one reader at a time: the calls come in block order */
      CHECK_EQ(n, (uint32_t)combine); /* the first run came through */
      CHECK_CONTAINS(hs_last_error(), combine == 8 ? "block 8 of" : "block 1 of");
    } else { /* two workers race: any early run's read may be the second call */
      char want[32];
      snprintf(want, sizeof want, "block %u of", n); /* but it is where delivery stopped */
      CHECK(n % (uint32_t)combine == 0);
      CHECK_CONTAINS(hs_last_error(), want);
    }
    /* The stream is done for; it holds nothing. */
    CHECK_ST(hs_read_stream_next(s, &got, NULL), HS_ERR_INVALID);
    hs_read_stream_close(s);
    CHECK_EQ(pinned_buffers(pool), 0);
    hs_smgr_clear_faults(hs_pool_smgr(pool));
    /* The failed pages are read again by the next reader. */
    b = must_read(pool, BIG, (hs_blockno)combine, NULL);
    CHECK_EQ(stamp_value(hs_buf_page(pool, b), BIG, (hs_blockno)combine), 0);
    hs_buf_release(pool, b);
  }

  /* Closing early releases the read-ahead. */
  hs_block_range_init(&r, 0, NBIG);
  CHECK_OK(
      hs_read_stream_open(pool, BIG, HS_FORK_MAIN, NULL, hs_block_range_next, &r, 8 * PAGE, &s));
  CHECK_OK(hs_read_stream_next(s, &b, NULL));
  hs_buf_release(pool, b);
  CHECK(pinned_buffers(pool) > 0);
  hs_read_stream_close(s);
  CHECK_EQ(pinned_buffers(pool), 0);

  CHECK_ST(hs_read_stream_open(pool, BIG, HS_FORK_MAIN, NULL, NULL, &r, 0, &s), HS_ERR_MISUSE);
  CHECK_OK(hs_pool_close(pool));
}

/* A source that reads through the pool itself (the block before the one it
 * returns): it is never called while the stream holds unread claims, so
 * this cannot deadlock. And one that runs past the end of the relation:
 * HS_ERR_EOF whoever did the read. */
typedef struct reading_source {
  hs_pool *pool;
  hs_blockno next, end;
  unsigned errors;
} reading_source;

static hs_blockno reading_next(void *arg) {
  reading_source *r = arg;
  if (r->next >= r->end) return HS_INVALID_BLOCK;
  if (r->next > 0 && r->next - 1 < NBIG) {
    hs_buf b;
    if (hs_pool_read(r->pool, BIG, HS_FORK_MAIN, r->next - 1, HS_READ_NORMAL, NULL, &b, NULL) !=
        HS_OK)
      r->errors++;
    else
      hs_buf_release(r->pool, b);
  }
  return r->next++;
}

static void test_sources(const char *dir, uint32_t workers) {
  hs_pool *pool = open_stream_pool(dir, 4 * NBUFFERS, workers);
  make_relation(pool, BIG, NBIG);
  reading_source src = {.pool = pool, .next = 0, .end = NBIG};
  hs_read_stream *s;
  CHECK_OK(hs_read_stream_open(pool, BIG, HS_FORK_MAIN, NULL, reading_next, &src, 8 * PAGE, &s));
  CHECK_EQ(drain(pool, s, 0, NBIG), NBIG);
  hs_read_stream_close(s);
  CHECK_EQ(src.errors, 0);

  CHECK_OK(hs_pool_drop_relation(pool, BIG));
  src = (reading_source){.pool = pool, .next = 90, .end = NBIG + 10};
  CHECK_OK(hs_read_stream_open(pool, BIG, HS_FORK_MAIN, NULL, reading_next, &src, 8 * PAGE, &s));
  hs_buf b;
  hs_status st;
  uint32_t n = 0;
  while ((st = hs_read_stream_next(s, &b, NULL)) == HS_OK && b != HS_INVALID_BUF) {
    hs_buf_release(pool, b);
    n++;
  }
  CHECK_EQ(st, HS_ERR_EOF);
  CHECK_CONTAINS(hs_last_error(), "past the end");
  CHECK(n <= NBIG - 90);
  hs_read_stream_close(s);
  CHECK_EQ(pinned_buffers(pool), 0);
  CHECK_OK(hs_pool_close(pool));
}

/* With a ring: the hot relation read normally stays, the ring takes no more
 * than its size from the pool, and the look-ahead is capped by it. */
static void test_stream_ring(const char *dir, uint32_t workers) {
  hs_pool *pool = open_stream_pool(dir, NBUFFERS, workers);
  make_relation(pool, HOT, 40);
  make_relation(pool, BIG, NBIG);
  for (hs_blockno i = 0; i < 40; i++) {
    hs_buf b = must_read(pool, HOT, i, NULL);
    hs_buf_release(pool, b);
  }
  hs_strategy *ring;
  hs_strategy_options cfg = {.rule = HS_RING_FIXED, .bytes = 6 * PAGE};
  CHECK_OK(hs_strategy_create(pool, HS_STRATEGY_BULKREAD, &cfg, &ring));
  CHECK_EQ(hs_strategy_ring_size(ring), 6);
  for (int pass = 0; pass < 3; pass++) {
    hs_block_range r;
    hs_block_range_init(&r, 0, NBIG);
    hs_read_stream *s;
    CHECK_OK(hs_read_stream_open(pool, BIG, HS_FORK_MAIN, ring, hs_block_range_next, &r, 0, &s));
    /* The ring lends the stream all it has: one batch, or two of half. */
    CHECK_EQ(hs_read_stream_combine(s), workers ? 3 : 6);
    CHECK_EQ(drain(pool, s, 0, NBIG), NBIG);
    hs_read_stream_close(s);
  }
  hs_pool_stats st;
  hs_pool_stats_get(pool, &st);
  const uint64_t *br = st.count[HS_IOCTX_BULKREAD];
  CHECK_EQ(br[HS_STAT_READS], 3 * NBIG);
  /* The ring's 6 buffers come from the free list (24 are free), and are
   * then recycled for every other read: nothing is taken from other pages. */
  CHECK_EQ(br[HS_STAT_EVICTIONS], 0);
  CHECK_EQ(br[HS_STAT_REUSES], 3 * NBIG - 6);
  for (hs_blockno i = 0; i < 40; i++) {
    bool hit;
    hs_buf b = must_read(pool, HOT, i, &hit);
    CHECK(hit);
    hs_buf_release(pool, b);
  }
  hs_strategy_destroy(ring);
  CHECK_OK(hs_pool_close(pool));
}

typedef struct racer {
  hs_pool *pool;
  int id;
  hs_strategy *ring;
  unsigned errors;
} racer;

static void *stream_racer(void *arg) {
  racer *r = arg;
  for (int pass = 0; pass < 20; pass++) {
    hs_block_range range;
    hs_block_range_init(&range, (hs_blockno)(pass * 37 + r->id * 50), NBIG);
    hs_read_stream *s;
    if (hs_read_stream_open(r->pool, BIG, HS_FORK_MAIN, r->ring, hs_block_range_next, &range, 0,
                            &s) != HS_OK) {
      r->errors++;
      return NULL;
    }
    for (;;) {
      hs_buf b;
      hs_blockno blk;
      if (hs_read_stream_next(s, &b, &blk) != HS_OK) {
        r->errors++;
        break;
      }
      if (b == HS_INVALID_BUF) break;
      hs_buf_lock(r->pool, b, HS_LOCK_SHARE);
      if (stamp_value(hs_buf_page(r->pool, b), BIG, blk) != 0) r->errors++;
      hs_buf_unlock(r->pool, b);
      hs_buf_release(r->pool, b);
    }
    hs_read_stream_close(s);
  }
  return NULL;
}

static void *point_racer(void *arg) {
  racer *r = arg;
  uint32_t x = 12345u + (uint32_t)r->id;
  for (int i = 0; i < 4000; i++) {
    x = x * 1103515245u + 12345u;
    hs_blockno blk = (x >> 8) % NBIG;
    hs_buf b;
    if (hs_pool_read(r->pool, BIG, HS_FORK_MAIN, blk, HS_READ_NORMAL, NULL, &b, NULL) != HS_OK) {
      r->errors++;
      continue;
    }
    hs_buf_lock(r->pool, b, HS_LOCK_SHARE);
    if (stamp_value(hs_buf_page(r->pool, b), BIG, blk) != 0) r->errors++;
    hs_buf_unlock(r->pool, b);
    hs_buf_release(r->pool, b);
  }
  return NULL;
}

/* Two streams with rings, one without, two point readers: every page seen
 * is the right one, and nothing stays pinned. */
static void test_concurrent(const char *dir, uint32_t workers) {
  hs_pool *pool = open_stream_pool(dir, 48, workers);
  make_relation(pool, BIG, NBIG);
  racer rs[5];
  pthread_t th[5];
  hs_strategy_options cfg = {.rule = HS_RING_FIXED, .bytes = 6 * PAGE};
  for (int i = 0; i < 5; i++) {
    rs[i] = (racer){.pool = pool, .id = i};
    if (i < 2) CHECK_OK(hs_strategy_create(pool, HS_STRATEGY_BULKREAD, &cfg, &rs[i].ring));
    REQUIRE(pthread_create(&th[i], NULL, i < 3 ? stream_racer : point_racer, &rs[i]) == 0);
  }
  for (int i = 0; i < 5; i++) {
    pthread_join(th[i], NULL);
    CHECK_EQ(rs[i].errors, 0);
    hs_strategy_destroy(rs[i].ring);
  }
  CHECK_EQ(pinned_buffers(pool), 0);
  CHECK_OK(hs_pool_close(pool));
}

int main(void) {
  char dir[4096];
  testdir_make(dir, sizeof dir, "stream");
  hs_pool *pool = open_pool(dir, NBUFFERS, PAGE, NULL, NULL);
  make_relation(pool, BIG, NBIG);
  test_readv(pool);
  CHECK_OK(hs_pool_close(pool));
  testdir_remove(dir);

  /* Each on a fresh directory, with no I/O worker, one and two. */
  static const struct {
    const char *name;
    void (*run)(const char *dir, uint32_t workers);
  } tests[] = {{"stream-basics", test_stream_basics},
               {"stream-sources", test_sources},
               {"stream-ring", test_stream_ring},
               {"stream-concurrent", test_concurrent}};
  for (uint32_t workers = 0; workers <= 2; workers++) {
    for (size_t t = 0; t < sizeof tests / sizeof tests[0]; t++) {
      testdir_make(dir, sizeof dir, tests[t].name);
      tests[t].run(dir, workers);
      testdir_remove(dir);
    }
  }
  return check_finish();
}
