/*
 * tests/test_wal.c — the write-ahead log (hotset/wal.h): what goes in comes
 * back out, in order, across segment boundaries and reopenings; many
 * threads inserting and committing at once lose nothing and get a durable
 * LSN from every flush; a torn or corrupt tail ends the log exactly there
 * and new records continue from it; the WAL writer flushes on its own; bad
 * options and oversized records are refused.
 *
 * Payloads are derived from (thread, sequence) so every record read back
 * can be checked byte for byte without keeping copies. The threaded tests
 * are labelled concurrency (TSan runs them).
 */
#include "check.h"
#include "hotset/fault.h"
#include "hotset/pool.h"
#include "hotset/wal.h"
#include "testdir.h"
#include "wal/wal_format.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char dir[4096];
/* The open log's largest payload: what payload_len capped the big ones at. */
static uint32_t g_max_record;
/* Failures seen on inserting threads: CHECK's counters are not for them;
 * the main thread checks this after joining. */
static _Atomic unsigned thread_failures;

/* The payload of (thread, seq): its length and bytes, deterministic. */
static uint32_t payload_len(uint32_t thread, uint32_t seq, uint32_t max) {
  uint64_t x = (uint64_t)thread * 2654435761u ^ (uint64_t)seq * 40503u;
  x ^= x >> 13;
  uint32_t len = (uint32_t)(x % 700);                 /* mostly small, as commit records are */
  if (seq % 97 == 5) len = max < 20000 ? max : 20000; /* now and then a big one */
  return len < 8 ? 8 : len;
}

static void payload_fill(unsigned char *p, uint32_t len, uint32_t thread, uint32_t seq) {
  memcpy(p, &thread, 4);
  memcpy(p + 4, &seq, 4);
  for (uint32_t i = 8; i < len; i++) p[i] = (unsigned char)(thread * 31 + seq * 7 + i);
}

static bool payload_ok(const unsigned char *p, uint32_t len, uint32_t *thread, uint32_t *seq) {
  if (len < 8) return false;
  memcpy(thread, p, 4);
  memcpy(seq, p + 4, 4);
  for (uint32_t i = 8; i < len; i++)
    if (p[i] != (unsigned char)(*thread * 31 + *seq * 7 + i)) return false;
  return true;
}

static hs_wal *open_log(const char *d, uint64_t segment, uint64_t buffer, uint32_t writer_ms) {
  hs_wal_options o;
  hs_wal_options_init(&o);
  o.dir = d;
  o.segment_bytes = segment;
  o.buffer_bytes = buffer;
  o.writer_delay_ms = writer_ms;
  hs_wal *w = NULL;
  CHECK_OK(hs_wal_open(&o, &w));
  REQUIRE(w);
  g_max_record = hs_wal_max_record(w);
  return w;
}

static hs_lsn insert_one(hs_wal *w, uint32_t thread, uint32_t seq) {
  static _Thread_local unsigned char buf[1 << 16];
  uint32_t len = payload_len(thread, seq, hs_wal_max_record(w));
  payload_fill(buf, len, thread, seq);
  hs_wal_page pages[3] = {
      {thread, HS_FORK_MAIN, seq}, {7, HS_FORK_VM, seq + 1}, {9, HS_FORK_FSM, 3}};
  hs_wal_record rec = {.rmgr = HS_WAL_RMGR_FIRST_USER + (uint8_t)(thread % 4),
                       .type = (uint8_t)(seq % 256),
                       .npages = (uint16_t)(seq % 4),
                       .pages = pages,
                       .data = buf,
                       .len = len};
  hs_lsn end = 0;
  if (hs_wal_insert(w, &rec, &end) != HS_OK) {
    fprintf(stderr, "insert (%u, %u): %s\n", thread, seq, hs_last_error());
    atomic_fetch_add(&thread_failures, 1);
  }
  return end;
}

/* Reads the whole log from 0; checks each record against its payload and
 * per-thread order; returns how many there were. */
/* Whether a record at `lsn` is the next after a record ending at
 * `prev_end`: right there, or — when it did not fit in the rest of that
 * segment — right after the next segment's 48-byte header. */
static bool next_after(hs_lsn prev_end, hs_lsn lsn, uint64_t segment) {
  if (prev_end % segment == 0) return lsn == prev_end + 48;
  return lsn == prev_end || lsn == prev_end - prev_end % segment + segment + 48;
}

/* Whether a sync point (the log's own record after a sync, which the
 * reader follows and never hands out) lies at `pos` of the log in d: read
 * from the segment file, its header at its place, of its type and size. */
static bool sync_point_at(const char *d, uint64_t segment, hs_lsn pos) {
  char path[4200];
  snprintf(path, sizeof path, "%s/%016" PRIX64, d, pos - pos % segment);
  int fd = open(path, O_RDONLY);
  if (fd < 0) return false;
  unsigned char h[WAL_HEADER];
  bool whole = pread(fd, h, sizeof h, (off_t)(pos % segment)) == (ssize_t)sizeof h;
  close(fd);
  return whole && wal_get32(h) == WAL_SYNC_POINT_BYTES && wal_get64(h + 8) == pos &&
         h[24] == HS_WAL_RMGR_LOG && h[25] == WAL_LOG_SYNCED;
}

/* Whether a record at `lsn` is the next handed out after a record ending
 * at `prev_end`: next_after it, or after sync points lying there (each
 * checked on disk: no other record is skipped). */
static bool follows(const char *d, hs_lsn prev_end, hs_lsn lsn, uint64_t segment) {
  for (hs_lsn pos = prev_end;; pos += WAL_SYNC_POINT_BYTES) {
    if (next_after(pos, lsn, segment)) return true;
    if (pos % segment == 0 || !sync_point_at(d, segment, pos)) return false;
  }
}

static uint64_t read_back(const char *d, uint64_t segment, uint32_t threads, uint32_t *per_thread,
                          hs_lsn *end_out) {
  hs_wal_reader *r;
  CHECK_OK(hs_wal_reader_open(d, segment, 0, &r));
  REQUIRE(r);
  uint32_t *next = calloc(threads, sizeof *next);
  uint64_t n = 0;
  hs_lsn prev_end = 0;
  hs_wal_read_record rec;
  bool got;
  while (hs_wal_reader_next(r, &rec, &got) == HS_OK && got) {
    uint32_t t = UINT32_MAX, s = UINT32_MAX;
    bool ok =
        payload_ok(rec.data, rec.len, &t, &s) && t < threads && s == next[t] &&
        follows(d, prev_end, rec.lsn, segment) && rec.len == payload_len(t, s, g_max_record) &&
        rec.rmgr == HS_WAL_RMGR_FIRST_USER + t % 4 && rec.type == s % 256 && rec.npages == s % 4 &&
        (rec.npages == 0 || (rec.pages[0].rel == t && rec.pages[0].block == s));
    if (!ok) {
      fprintf(stderr, "record %llu at %llx: thread %u seq %u (want seq %u), len %u\n",
              (unsigned long long)n, (unsigned long long)rec.lsn, t, s, t < threads ? next[t] : 0,
              rec.len);
      CHECK(ok);
      break;
    }
    next[t]++;
    prev_end = rec.end;
    n++;
  }
  if (per_thread)
    for (uint32_t t = 0; t < threads; t++) per_thread[t] = next[t];
  if (end_out) *end_out = hs_wal_reader_end(r);
  free(next);
  hs_wal_reader_close(r);
  return n;
}

/* Records go in and come back, across 64 KiB segments (each record of up to
 * 20 KB crossing boundaries) and a reopening that continues the log. */
static void test_round_trip(void) {
  testdir_make(dir, sizeof dir, "wal");
  hs_wal *w = open_log(dir, 1 << 16, 1 << 15, 0);
  hs_lsn last = 0;
  for (uint32_t s = 0; s < 600; s++) last = insert_one(w, 0, s);
  CHECK_EQ(hs_wal_insert_lsn(w), last);
  bool synced;
  CHECK_OK(hs_wal_flush(w, last, HS_WAL_CAUSE_COMMIT, &synced));
  CHECK(synced);
  CHECK_EQ(hs_wal_flushed_lsn(w), last);
  CHECK_OK(hs_wal_flush(w, last, HS_WAL_CAUSE_COMMIT, &synced)); /* nothing left to do */
  CHECK(!synced);
  hs_wal_stats st;
  hs_wal_stats_get(w, &st);
  CHECK_EQ(st.records, 600u);
  CHECK_EQ(st.bytes, last); /* what was inserted: the sync point is the log's own */
  CHECK(st.segments_created >= 3);
  /* The sync made the log durable up to last, and a sync point says so
   * (the close flushes it: the log ends past it). */
  hs_lsn with_sync_point = last + WAL_SYNC_POINT_BYTES;
  CHECK_EQ(hs_wal_insert_lsn(w), with_sync_point);
  CHECK_OK(hs_wal_close(w));
  CHECK(sync_point_at(dir, 1 << 16, last));
  uint32_t got[1];
  hs_lsn end;
  CHECK_EQ(read_back(dir, 1 << 16, 1, got, &end), 600u);
  CHECK_EQ(end, with_sync_point);

  /* Reopened, the log continues where it ended. */
  w = open_log(dir, 1 << 16, 1 << 15, 0);
  CHECK_EQ(hs_wal_insert_lsn(w), with_sync_point);
  for (uint32_t s = 600; s < 900; s++) last = insert_one(w, 0, s);
  CHECK_OK(hs_wal_close(w)); /* close flushes */
  CHECK_EQ(read_back(dir, 1 << 16, 1, got, &end), 900u);
  CHECK_EQ(end, last);
  testdir_remove(dir);
}

/* A torn or corrupt last record is the end of the log: reopening stops
 * before it and new records overwrite it. (A flipped record with valid
 * records after it is damage: tests/test_wal_format.c.) */
static void test_torn_tail(void) {
  testdir_make(dir, sizeof dir, "wal-torn");
  hs_wal *w = open_log(dir, 1 << 16, 1 << 15, 0);
  hs_lsn ends[40];
  for (uint32_t s = 0; s < 40; s++) ends[s] = insert_one(w, 0, s);
  CHECK_OK(hs_wal_close(w));
  /* Flip one byte in the middle of the last record's payload. */
  char path[4200];
  hs_lsn at = ends[38] + 40;
  snprintf(path, sizeof path, "%s/%016llX", dir, (unsigned long long)(at - at % (1 << 16)));
  int fd = open(path, O_RDWR);
  REQUIRE(fd >= 0);
  unsigned char b;
  CHECK(pread(fd, &b, 1, (off_t)(at % (1 << 16))) == 1);
  b ^= 0x40;
  CHECK(pwrite(fd, &b, 1, (off_t)(at % (1 << 16))) == 1);
  close(fd);
  hs_wal_reader *r;
  CHECK_OK(hs_wal_reader_open(dir, 1 << 16, 0, &r));
  hs_wal_read_record rec;
  bool got;
  uint32_t n = 0;
  while (hs_wal_reader_next(r, &rec, &got) == HS_OK && got) n++;
  CHECK_EQ(n, 39u);
  CHECK_EQ(hs_wal_reader_end(r), ends[38]);
  CHECK_CONTAINS(hs_wal_reader_why_end(r), "fails its CRC");
  hs_wal_reader_close(r);
  /* Reopened: the log ends before the bad record, new ones follow. */
  w = open_log(dir, 1 << 16, 1 << 15, 0);
  CHECK_EQ(hs_wal_insert_lsn(w), ends[38]);
  for (uint32_t s = 39; s < 44; s++) insert_one(w, 0, s);
  CHECK_OK(hs_wal_close(w));
  CHECK_EQ(read_back(dir, 1 << 16, 1, NULL, NULL), 44u);
  testdir_remove(dir);
}

#define THREADS    4
#define PER_THREAD 1500

typedef struct inserter {
  hs_wal *w;
  uint32_t thread;
  bool commit; /* flush after every record and check it is durable */
} inserter;

static void *insert_main(void *arg) {
  inserter *in = arg;
  for (uint32_t s = 0; s < PER_THREAD; s++) {
    hs_lsn end = insert_one(in->w, in->thread, s);
    if (in->commit && (s % 3 == 0 || s == PER_THREAD - 1)) {
      /* Acknowledged only once durable: the flushed LSN covers the record. */
      if (hs_wal_flush(in->w, end, HS_WAL_CAUSE_COMMIT, NULL) != HS_OK ||
          hs_wal_flushed_lsn(in->w) < end) {
        fprintf(stderr, "commit (%u, %u) at %llx: %s\n", in->thread, s, (unsigned long long)end,
                hs_last_error());
        atomic_fetch_add(&thread_failures, 1);
      }
    }
  }
  return NULL;
}

/* Threads inserting (some committing) at once, with a small buffer that
 * forces inserters to write out each other's bytes: every record is there
 * once, each thread's in its order, the chain unbroken. */
static void test_concurrent(bool commit, uint32_t writer_ms) {
  testdir_make(dir, sizeof dir, "wal-mt");
  hs_wal *w = open_log(dir, 1 << 17, 1 << 16, writer_ms);
  pthread_t t[THREADS];
  inserter in[THREADS];
  for (uint32_t i = 0; i < THREADS; i++) {
    in[i] = (inserter){w, i, commit};
    pthread_create(&t[i], NULL, insert_main, &in[i]);
  }
  for (uint32_t i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
  CHECK_EQ(atomic_load(&thread_failures), 0u);
  hs_wal_stats st;
  hs_wal_stats_get(w, &st);
  CHECK_EQ(st.records, (uint64_t)THREADS * PER_THREAD);
  if (commit) {
    uint64_t commits = st.flush_calls[HS_WAL_CAUSE_COMMIT];
    CHECK_EQ(commits, (uint64_t)THREADS * (PER_THREAD / 3 + 1));
    /* A commit either synced or found its LSN durable already. */
    CHECK(st.flush_syncs[HS_WAL_CAUSE_COMMIT] <= commits);
    printf("%u threads: %llu commits, %llu fdatasyncs (commit %llu, writer %llu)\n", THREADS,
           (unsigned long long)commits, (unsigned long long)st.syncs,
           (unsigned long long)st.flush_syncs[HS_WAL_CAUSE_COMMIT],
           (unsigned long long)st.flush_syncs[HS_WAL_CAUSE_WRITER]);
  }
  hs_lsn end_lsn = hs_wal_insert_lsn(w);
  CHECK_OK(hs_wal_close(w));
  uint32_t per[THREADS];
  hs_lsn end;
  CHECK_EQ(read_back(dir, 1 << 17, THREADS, per, &end), (uint64_t)THREADS * PER_THREAD);
  for (uint32_t i = 0; i < THREADS; i++) CHECK_EQ(per[i], (uint32_t)PER_THREAD);
  CHECK_EQ(end, end_lsn);
  testdir_remove(dir);
}

/* The WAL writer makes records durable without anyone flushing. */
static void test_writer(void) {
  testdir_make(dir, sizeof dir, "wal-writer");
  hs_wal *w = open_log(dir, 1 << 16, 1 << 15, 5);
  hs_lsn end = insert_one(w, 0, 0);
  /* Bounded wait for a condition, not a sleep standing in for one. */
  for (int i = 0; i < 2000 && hs_wal_flushed_lsn(w) < end; i++) {
    struct timespec ts = {0, 5000000};
    nanosleep(&ts, NULL);
  }
  CHECK(hs_wal_flushed_lsn(w) >= end);
  hs_wal_stats st;
  hs_wal_stats_get(w, &st);
  CHECK(st.flush_syncs[HS_WAL_CAUSE_WRITER] >= 1);
  CHECK_EQ(st.flush_calls[HS_WAL_CAUSE_COMMIT], 0u);
  CHECK_OK(hs_wal_close(w));
  testdir_remove(dir);
}

static void test_refusals(void) {
  testdir_make(dir, sizeof dir, "wal-bad");
  hs_wal_options o;
  hs_wal_options_init(&o);
  hs_wal *w = NULL;
  CHECK_ST(hs_wal_open(&o, &w), HS_ERR_INVALID); /* no dir */
  CHECK_CONTAINS(hs_last_error(), "dir");
  o.dir = dir;
  o.segment_bytes = 3 << 20;
  CHECK_ST(hs_wal_open(&o, &w), HS_ERR_INVALID);
  CHECK_CONTAINS(hs_last_error(), "segment_bytes");
  o.segment_bytes = 1 << 12;
  CHECK_ST(hs_wal_open(&o, &w), HS_ERR_INVALID);
  o.segment_bytes = 1 << 16;
  o.buffer_bytes = 3000;
  CHECK_ST(hs_wal_open(&o, &w), HS_ERR_INVALID);
  CHECK_CONTAINS(hs_last_error(), "buffer_bytes");
  CHECK(w == NULL);
  w = open_log(dir, 1 << 16, 1 << 15, 0);
  static unsigned char big[1 << 16];
  hs_wal_record rec = {.rmgr = 1, .data = big, .len = hs_wal_max_record(w) + 1};
  hs_lsn end;
  CHECK_ST(hs_wal_insert(w, &rec, &end), HS_ERR_INVALID);
  rec.len = 10;
  rec.npages = HS_WAL_MAX_PAGES_PER_RECORD + 1;
  CHECK_ST(hs_wal_insert(w, &rec, &end), HS_ERR_INVALID);
  rec.npages = 1; /* and no page array */
  CHECK_ST(hs_wal_insert(w, &rec, &end), HS_ERR_INVALID);
  CHECK_ST(hs_wal_flush(w, 0, HS_WAL_CAUSE_COUNT, NULL), HS_ERR_MISUSE);
  CHECK_EQ(hs_wal_insert_lsn(w), 0u); /* nothing went in */
  CHECK_OK(hs_wal_close(w));
  /* A segment named for another segment size is refused, not misread. */
  char path[4200];
  snprintf(path, sizeof path, "%s/%016llX", dir, 0x3000ull);
  FILE *f = fopen(path, "w");
  REQUIRE(f);
  fclose(f);
  hs_wal_options_init(&o);
  o.dir = dir;
  o.segment_bytes = 1 << 16;
  CHECK_ST(hs_wal_open(&o, &w), HS_ERR_INVALID);
  CHECK_CONTAINS(hs_last_error(), "segment size");
  testdir_remove(dir);
}

/* The pool with hotset's log: every page write finds the log durable up to
 * the page's LSN (checked by an observer at the moment of the write), the
 * flushes are counted as evictions, and a bulkread ring's question "would
 * this write need a flush?" is the log's own answer. */
typedef struct write_watch {
  hs_wal *wal;
  hs_pool *pool;
  hs_lsn page_lsn[64];
  unsigned writes, early;
} write_watch;

static void watch_write(void *ctx, hs_io_op op, hs_relid rel, hs_fork fork, hs_blockno block,
                        const void *page) {
  (void)rel;
  (void)fork;
  (void)page;
  write_watch *ww = ctx;
  if (op != HS_IO_WRITE || block >= 64) return;
  ww->writes++;
  if (hs_wal_flushed_lsn(ww->wal) < ww->page_lsn[block]) ww->early++;
}

static void test_pool_with_log(void) {
  testdir_make(dir, sizeof dir, "wal-pool");
  char logdir[4200];
  snprintf(logdir, sizeof logdir, "%s/wal", dir);
  write_watch ww = {0};
  ww.wal = open_log(logdir, 1 << 16, 1 << 15, 0);
  hs_pool_options po;
  hs_pool_options_init(&po);
  po.dir = dir;
  po.page_size = 4096;
  po.pool_pages = 8;
  po.policy = "lru";
  po.wal = ww.wal;
  po.flush_wal_up_to = NULL;
  REQUIRE(hs_pool_open(&po, &ww.pool) == HS_OK);
  hs_smgr_set_observer(hs_pool_smgr(ww.pool), watch_write, &ww);
  bool created;
  CHECK_OK(hs_smgr_create_if_missing(hs_pool_smgr(ww.pool), 1, HS_FORK_MAIN, &created));
  /* 32 pages, each changed under a log record, through an 8-page pool:
   * most are evicted dirty, each eviction flushing the log first. */
  for (hs_blockno i = 0; i < 32; i++) {
    hs_buf b;
    hs_blockno block;
    CHECK_OK(hs_pool_extend(ww.pool, 1, HS_FORK_MAIN, NULL, true, &b, &block));
    unsigned char *page = hs_buf_page(ww.pool, b);
    page[100] = (unsigned char)i;
    hs_wal_page ref = {1, HS_FORK_MAIN, block};
    hs_wal_record rec = {.rmgr = HS_WAL_RMGR_GENERIC,
                         .type = 1,
                         .npages = 1,
                         .pages = &ref,
                         .data = &page[100],
                         .len = 1};
    hs_lsn end;
    CHECK_OK(hs_wal_insert(ww.wal, &rec, &end));
    if (block < 64) ww.page_lsn[block] = end;
    CHECK_OK(hs_buf_mark_dirty(ww.pool, b, end, NULL));
    CHECK_OK(hs_buf_unlock(ww.pool, b));
    hs_buf_release(ww.pool, b);
  }
  CHECK(ww.writes >= 24);
  CHECK_EQ(ww.early, 0u);
  hs_wal_stats st;
  hs_wal_stats_get(ww.wal, &st);
  CHECK(st.flush_calls[HS_WAL_CAUSE_EVICT_NORMAL] >= 24);
  CHECK(st.flush_syncs[HS_WAL_CAUSE_EVICT_NORMAL] >= 1);
  CHECK_OK(hs_pool_close(ww.pool));
  CHECK_EQ(ww.early, 0u);
  CHECK_OK(hs_wal_close(ww.wal));
  /* The log and the callbacks exclude each other. */
  hs_wal *w2 = open_log(logdir, 1 << 16, 1 << 15, 0);
  po.wal = w2;
  po.wal_needs_flush = NULL;
  po.flush_wal_up_to = (hs_wal_flush_fn)1; /* never called: refused first */
  hs_pool *p2 = NULL;
  CHECK_ST(hs_pool_open(&po, &p2), HS_ERR_INVALID);
  CHECK_CONTAINS(hs_last_error(), "exclude");
  CHECK_OK(hs_wal_close(w2));
  testdir_remove(dir);
}

/* Generic records: an image and byte-range changes, read back and redone
 * onto a page, rebuild exactly the page that was logged; a record that does
 * not fit its page is refused and changes nothing. Resource managers:
 * generic is there from the start, engines register from the first user
 * id, once each. */
static void test_generic_records(void) {
  testdir_make(dir, sizeof dir, "wal-generic");
  hs_wal *w = open_log(dir, 1 << 16, 1 << 15, 0);
  enum { PAGE = 4096 };
  static unsigned char page[PAGE], copy[PAGE], redone[PAGE];
  for (int i = 0; i < PAGE; i++) page[i] = (unsigned char)(i * 7);
  hs_wal_page ref = {42, HS_FORK_MAIN, 7};
  hs_lsn end;
  CHECK_OK(hs_wal_log_image(w, &ref, page, PAGE, &end));
  /* Three changes, logged as ranges of the changed page. */
  memset(page + 100, 0xAB, 50);
  page[4095] = 1;
  memcpy(page, "header", 6);
  hs_wal_range ranges[3] = {{100, 50}, {4095, 1}, {0, 6}};
  CHECK_OK(hs_wal_log_change(w, &ref, page, PAGE, ranges, 3, &end));
  memcpy(copy, page, PAGE);
  hs_wal_range bad = {4090, 7};
  CHECK_ST(hs_wal_log_change(w, &ref, page, PAGE, &bad, 1, &end), HS_ERR_INVALID);
  hs_wal_stats st;
  hs_wal_stats_get(w, &st);
  CHECK_EQ(st.full_page_images, 1u);
  CHECK_EQ(st.records, 2u);
  /* Registration. */
  CHECK_EQ(strcmp(hs_wal_rmgr_name(w, HS_WAL_RMGR_GENERIC), "generic"), 0);
  CHECK(hs_wal_rmgr_name(w, HS_WAL_RMGR_FIRST_USER) == NULL);
  CHECK_ST(hs_wal_register_rmgr(w, HS_WAL_RMGR_GENERIC, "mine", hs_wal_generic_redo, NULL),
           HS_ERR_INVALID);
  CHECK_OK(hs_wal_register_rmgr(w, HS_WAL_RMGR_FIRST_USER, "heap", hs_wal_generic_redo, NULL));
  CHECK_ST(hs_wal_register_rmgr(w, HS_WAL_RMGR_FIRST_USER, "heap2", hs_wal_generic_redo, NULL),
           HS_ERR_BUSY);
  CHECK_EQ(strcmp(hs_wal_rmgr_name(w, HS_WAL_RMGR_FIRST_USER), "heap"), 0);
  CHECK_OK(hs_wal_close(w));

  hs_wal_reader *r;
  CHECK_OK(hs_wal_reader_open(dir, 1 << 16, 0, &r));
  hs_wal_read_record rec;
  bool got;
  void *pages[1] = {redone};
  int n = 0;
  while (hs_wal_reader_next(r, &rec, &got) == HS_OK && got) {
    CHECK_EQ(rec.rmgr, (uint8_t)HS_WAL_RMGR_GENERIC);
    CHECK(rec.npages == 1 && rec.pages[0].rel == 42 && rec.pages[0].block == 7);
    CHECK_OK(hs_wal_generic_redo(NULL, &rec, pages, PAGE));
    n++;
  }
  CHECK_EQ(n, 2);
  CHECK(memcmp(redone, copy, PAGE) == 0);
  /* A change whose range runs past the page: refused, the page untouched. */
  unsigned char data[4 + 8];
  uint16_t off = 4092, len = 8;
  memcpy(data, &off, 2);
  memcpy(data + 2, &len, 2);
  memset(data + 4, 0xEE, 8);
  hs_wal_read_record forged = rec;
  forged.type = HS_WAL_GENERIC_CHANGE;
  forged.data = data;
  forged.len = sizeof data;
  CHECK_ST(hs_wal_generic_redo(NULL, &forged, pages, PAGE), HS_ERR_CORRUPT);
  CHECK_CONTAINS(hs_last_error(), "outside the page");
  CHECK(memcmp(redone, copy, PAGE) == 0);
  forged.type = HS_WAL_GENERIC_IMAGE; /* an image of the wrong size */
  CHECK_ST(hs_wal_generic_redo(NULL, &forged, pages, PAGE), HS_ERR_CORRUPT);
  CHECK(memcmp(redone, copy, PAGE) == 0);
  hs_wal_reader_close(r);
  testdir_remove(dir);
}

/* Faults: a failed fdatasync or write stops the log — that flush fails,
 * and so does every later insert, flush and the close, naming the first
 * failure; nothing is called durable that was not; a torn write leaves a
 * log that reopens at its last whole record. Also when the failing write
 * is an inserter's own, making room in a full buffer. */
static void test_faults(void) {
  testdir_make(dir, sizeof dir, "wal-fault");
  hs_wal *w = open_log(dir, 1 << 16, 1 << 15, 0);
  hs_lsn end = insert_one(w, 0, 0);
  CHECK_OK(hs_wal_flush(w, end, HS_WAL_CAUSE_COMMIT, NULL));
  hs_lsn durable = hs_wal_flushed_lsn(w);
  end = insert_one(w, 0, 1);
  CHECK_OK(hs_wal_inject_fault(w, HS_WAL_FAULT_SYNC, 1, EIO, 1));
  CHECK_ST(hs_wal_flush(w, end, HS_WAL_CAUSE_COMMIT, NULL), HS_ERR_IO);
  CHECK_CONTAINS(hs_last_error(), "fdatasync");
  CHECK_EQ(hs_wal_flushed_lsn(w), durable);
  hs_wal_record rec = {.rmgr = 1, .data = "x", .len = 1};
  CHECK_ST(hs_wal_insert(w, &rec, &end), HS_ERR_IO);
  CHECK_CONTAINS(hs_last_error(), "earlier failure");
  CHECK_ST(hs_wal_flush(w, end, HS_WAL_CAUSE_COMMIT, NULL), HS_ERR_IO);
  CHECK_ST(hs_wal_close(w), HS_ERR_IO);
  /* Reopened without faults: the log is whole up to where it got. */
  w = open_log(dir, 1 << 16, 1 << 15, 0);
  CHECK(hs_wal_insert_lsn(w) >= durable);
  CHECK_OK(hs_wal_close(w));
  testdir_remove(dir);

  /* A torn write: half of the bytes reach the file. */
  testdir_make(dir, sizeof dir, "wal-torn-write");
  w = open_log(dir, 1 << 16, 1 << 15, 0);
  for (uint32_t s = 0; s < 10; s++) end = insert_one(w, 0, s);
  CHECK_OK(hs_wal_flush(w, end, HS_WAL_CAUSE_COMMIT, NULL));
  durable = end;
  for (uint32_t s = 10; s < 20; s++) end = insert_one(w, 0, s);
  CHECK_OK(hs_wal_inject_fault(w, HS_WAL_FAULT_WRITE, 1, 0, 1));
  CHECK_ST(hs_wal_flush(w, end, HS_WAL_CAUSE_COMMIT, NULL), HS_ERR_IO);
  CHECK_ST(hs_wal_close(w), HS_ERR_IO);
  hs_lsn log_end;
  uint64_t n = read_back(dir, 1 << 16, 1, NULL, &log_end);
  CHECK(n >= 10 && n < 20);
  CHECK(log_end >= durable && log_end < end);
  w = open_log(dir, 1 << 16, 1 << 15, 0);
  CHECK_EQ(hs_wal_insert_lsn(w), log_end);
  CHECK_OK(hs_wal_close(w));
  testdir_remove(dir);

  /* An inserter writing out a full buffer hits ENOSPC: its insert fails,
   * and so does the next one; no thread hangs. */
  testdir_make(dir, sizeof dir, "wal-full");
  w = open_log(dir, 1 << 16, 1 << 15, 0);
  CHECK_OK(hs_wal_inject_fault(w, HS_WAL_FAULT_WRITE, 1, ENOSPC, 1));
  hs_status st = HS_OK;
  static unsigned char data[4000];
  hs_wal_record big = {.rmgr = 1, .data = data, .len = sizeof data};
  for (int i = 0; i < 64 && st == HS_OK; i++) st = hs_wal_insert(w, &big, &end);
  CHECK_EQ(st, HS_ERR_NOSPACE); /* a full disk says so, with the file */
  CHECK_CONTAINS(hs_last_error(), "segment");
  CHECK_CONTAINS(hs_last_error(), "the disk is full");
  CHECK_ST(hs_wal_insert(w, &big, &end), HS_ERR_NOSPACE);
  CHECK_ST(hs_wal_close(w), HS_ERR_NOSPACE);
  CHECK_ST(hs_wal_inject_fault(NULL, HS_WAL_FAULT_WRITE, 1, EIO, 1), HS_ERR_INVALID);
  testdir_remove(dir);
}

int main(void) {
  test_round_trip();
  test_torn_tail();
  test_concurrent(false, 0);
  test_concurrent(true, 0);
  test_concurrent(true, 2);
  test_writer();
  test_refusals();
  test_pool_with_log();
  test_generic_records();
  test_faults();
  CHECK_EQ(atomic_load(&thread_failures), 0u);
  return check_finish();
}
