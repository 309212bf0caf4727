/*
 * tests/test_wal_format.c — the log's on-disk format and its end
 * (wal/wal_format.h, docs/wal.md), at every allowed segment size:
 *
 *   - every segment starts with a header carrying the log's system id;
 *     records never cross a segment: a record that does not fit goes after
 *     the next segment's header, behind a switch record (or, with fewer
 *     than 32 bytes left, a gap of zeros), and the prev chain runs on;
 *   - a reopened log finds the same end from its oldest segment;
 *   - a segment of another log is refused, naming both ids;
 *   - a flipped byte in a record with records of later segments after it
 *     is damage: the log opens (nothing on disk changes), its first write
 *     refuses, changing nothing; accepted, the bytes from the bad record on
 *     are kept, byte-identical, in kept-<LSN>/; with valid records after
 *     it in its own segment only, it is a torn end whose rest is kept; a
 *     flipped byte in the last record is a torn end;
 *   - ENOSPC is HS_ERR_NOSPACE saying the disk is full; missing parents of
 *     the log's directory are created.
 *
 * The big sizes stay cheap in records (a few hundred of the largest), not
 * in bytes: each writes its segments whole once.
 */
#include "check.h"
#include "core/crc32c.h"
#include "hotset/fault.h"
#include "hotset/wal.h"
#include "testdir.h"
#include "wal/wal_durable.h"
#include "wal/wal_format.h"
#include "wal/wal_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[4096];

static hs_wal *open_log(const char *d, uint64_t segment) {
  hs_wal_options o;
  hs_wal_options_init(&o);
  o.dir = d;
  o.segment_bytes = segment;
  o.writer_delay_ms = 0;
  hs_wal *w = NULL;
  CHECK_OK(hs_wal_open(&o, &w));
  REQUIRE(w);
  return w;
}

/* What was inserted: to check what is read back. */
typedef struct inserted {
  hs_lsn lsn, end;
  uint32_t len, tag;
} inserted;

static inserted *recs;
static size_t nrecs, caprecs;
static unsigned char *payload; /* the largest payload, tag in its first 4 bytes */

static hs_lsn put(hs_wal *w, uint32_t len) {
  REQUIRE(len >= 8 && len <= hs_wal_max_record(w));
  uint32_t tag = (uint32_t)nrecs + 1;
  memcpy(payload, &tag, 4);
  memcpy(payload + len - 4, &tag, 4);
  hs_wal_record rec = {.rmgr = HS_WAL_RMGR_FIRST_USER, .type = 7, .data = payload, .len = len};
  hs_lsn end = 0;
  CHECK_OK(hs_wal_insert(w, &rec, &end));
  if (nrecs == caprecs) {
    caprecs = caprecs ? caprecs * 2 : 256;
    recs = realloc(recs, caprecs * sizeof *recs);
    REQUIRE(recs);
  }
  recs[nrecs++] =
      (inserted){.lsn = end - wal_align(WAL_HEADER + len), .end = end, .len = len, .tag = tag};
  return end;
}

/* Inserts records until exactly `left` bytes remain in the current
 * segment (left: a multiple of 8, less than a segment). */
static void fill_leaving(hs_wal *w, uint64_t segment, uint64_t left) {
  uint64_t biggest = (WAL_HEADER + hs_wal_max_record(w)) & ~(uint64_t)7;
  for (;;) {
    uint64_t pos = hs_wal_insert_lsn(w);
    if (pos % segment == 0) pos += WAL_SEG_HEADER; /* the next record opens a segment */
    uint64_t room = segment - pos % segment;
    REQUIRE(room >= left);
    uint64_t need = room - left;
    if (need == 0) return;
    REQUIRE(need >= WAL_HEADER + 8);
    uint64_t take = need;
    if (need > biggest) take = need - biggest >= WAL_HEADER + 8 ? biggest : biggest - 64;
    put(w, (uint32_t)(take - WAL_HEADER));
  }
}

static void seg_path(char *out, size_t len, const char *d, uint64_t start) {
  snprintf(out, len, "%s/%016" PRIX64, d, start);
}

static void read_at(const char *path, uint64_t off, void *buf, size_t n) {
  int fd = open(path, O_RDONLY);
  REQUIRE(fd >= 0);
  REQUIRE(pread(fd, buf, n, (off_t)off) == (ssize_t)n);
  close(fd);
}

static void flip_byte(const char *path, uint64_t off) {
  int fd = open(path, O_RDWR);
  REQUIRE(fd >= 0);
  unsigned char b;
  REQUIRE(pread(fd, &b, 1, (off_t)off) == 1);
  b ^= 0x20;
  REQUIRE(pwrite(fd, &b, 1, (off_t)off) == 1);
  close(fd);
}

/* CRC-32C and size of a whole file. */
static uint64_t file_sum(const char *path) {
  int fd = open(path, O_RDONLY);
  REQUIRE(fd >= 0);
  static unsigned char b[1 << 20];
  uint32_t crc = 0;
  uint64_t size = 0;
  for (ssize_t got; (got = read(fd, b, sizeof b)) > 0; size += (uint64_t)got)
    crc = hs_crc32c(crc, b, (size_t)got);
  close(fd);
  return (size << 32) ^ crc;
}

/* Every regular file in d (not in subdirectories) but the lock file: its
 * name and sum. */
typedef struct snapshot {
  size_t n;
  char names[64][256];
  uint64_t sums[64];
} snapshot;

static void take_snapshot(const char *d, snapshot *s) {
  memset(s, 0, sizeof *s);
  DIR *dd = opendir(d);
  REQUIRE(dd);
  for (struct dirent *e; (e = readdir(dd)) != NULL;) {
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", d, e->d_name);
    struct stat sb;
    if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode) || strcmp(e->d_name, "wal.lock") == 0)
      continue;
    REQUIRE(s->n < 64);
    snprintf(s->names[s->n], sizeof s->names[0], "%s", e->d_name);
    s->sums[s->n++] = file_sum(path);
  }
  closedir(dd);
}

static bool same_snapshot(const snapshot *a, const snapshot *b) {
  if (a->n != b->n) return false;
  for (size_t i = 0; i < a->n; i++) {
    bool found = false;
    for (size_t j = 0; j < b->n; j++)
      if (strcmp(a->names[i], b->names[j]) == 0) found = a->sums[i] == b->sums[j];
    if (!found) return false;
  }
  return true;
}

/* Reads the log back and checks it is recs[0 .. n) (skipping those marked
 * lost, tag 0), in order, each where the format puts it. Returns the kind. */
static hs_wal_end_kind read_back(const char *d, uint64_t segment, hs_lsn *end_out, size_t *count) {
  hs_wal_reader *r;
  CHECK_OK(hs_wal_reader_open(d, segment, 0, &r));
  REQUIRE(r);
  hs_wal_read_record rec;
  bool got;
  size_t i = 0, n = 0;
  while (hs_wal_reader_next(r, &rec, &got) == HS_OK && got) {
    while (i < nrecs && recs[i].tag == 0) i++;
    REQUIRE(i < nrecs);
    uint32_t tag;
    memcpy(&tag, rec.data, 4);
    if (rec.lsn != recs[i].lsn || rec.end != recs[i].end || rec.len != recs[i].len ||
        tag != recs[i].tag) {
      fprintf(stderr, "record %zu at %" PRIX64 " (want %" PRIX64 "), tag %u (want %u)\n", i,
              rec.lsn, recs[i].lsn, tag, recs[i].tag);
      CHECK(false);
      break;
    }
    CHECK(rec.rmgr == HS_WAL_RMGR_FIRST_USER && rec.type == 7); /* no switch record handed out */
    i++;
    n++;
  }
  if (end_out) *end_out = hs_wal_reader_end(r);
  if (count) *count = n;
  hs_wal_end_kind kind = hs_wal_reader_end_kind(r);
  hs_wal_reader_close(r);
  return kind;
}

static void test_size(uint64_t S) {
  testdir_make(dir, sizeof dir, "walfmt");
  nrecs = 0;
  hs_wal *w = open_log(dir, S);
  CHECK(wal_is_empty(w));
  uint64_t id = wal_system_id(w);
  CHECK(id != 0);
  uint32_t M = hs_wal_max_record(w);
  CHECK(M <= S - WAL_SEG_HEADER - WAL_HEADER);
  if (S == HS_WAL_MIN_SEGMENT) CHECK(M >= 3 * 8192); /* two 8 KiB images and 8 KiB more */

  /* Segment 0 ends with a gap: 16 bytes left, no room for a switch record. */
  fill_leaving(w, S, 16);
  size_t last0 = nrecs - 1;
  put(w, 8);
  CHECK_EQ(recs[nrecs - 1].lsn, S + WAL_SEG_HEADER);
  size_t after_gap = nrecs - 1;
  /* Segment 1 ends with a switch record: 64 bytes left, then a record of
   * the largest size, which goes after segment 2's header. */
  fill_leaving(w, S, 64);
  size_t last1 = nrecs - 1;
  hs_lsn end = put(w, M);
  CHECK_EQ(recs[nrecs - 1].lsn, 2 * S + WAL_SEG_HEADER);
  size_t after_switch = nrecs - 1;
  put(w, 100);
  CHECK_OK(hs_wal_flush(w, hs_wal_insert_lsn(w), HS_WAL_CAUSE_COMMIT, NULL));
  CHECK(!wal_is_empty(w));
  end = hs_wal_insert_lsn(w);
  CHECK_OK(hs_wal_close(w));

  /* On disk: headers at every segment's start; the gap's zeros; the switch. */
  char p0[4200], p1[4200], p2[4200];
  seg_path(p0, sizeof p0, dir, 0);
  seg_path(p1, sizeof p1, dir, S);
  seg_path(p2, sizeof p2, dir, 2 * S);
  unsigned char hb[WAL_SEG_HEADER];
  wal_seg_header h;
  const char *paths[3] = {p0, p1, p2};
  for (unsigned i = 0; i < 3; i++) {
    read_at(paths[i], 0, hb, sizeof hb);
    CHECK_EQ(wal_seg_header_decode(hb, &h), WAL_SEG_VALID);
    CHECK_EQ(h.system_id, id);
    CHECK_EQ(h.start, i * S);
    CHECK_EQ(h.segment_bytes, S);
  }
  unsigned char tail[WAL_HEADER], zeros[WAL_HEADER] = {0};
  read_at(p0, S - 16, tail, 16);
  CHECK(memcmp(tail, zeros, 16) == 0);
  read_at(p1, S - 64, tail, WAL_HEADER);
  CHECK_EQ(wal_get64(tail + 8), 2 * S - 64); /* a switch record where segment 1 ends */
  CHECK_EQ(wal_get64(tail + 16), recs[last1].lsn);
  CHECK(tail[24] == HS_WAL_RMGR_LOG && tail[25] == WAL_LOG_SWITCH);

  /* Read back: every record, the chain across the gap and the switch. */
  hs_wal_reader *r;
  CHECK_OK(hs_wal_reader_open(dir, S, 0, &r));
  hs_wal_read_record rec;
  bool got;
  size_t n = 0;
  while (hs_wal_reader_next(r, &rec, &got) == HS_OK && got) {
    if (n == after_gap) CHECK_EQ(rec.prev, recs[last0].lsn);
    if (n == after_switch) CHECK_EQ(rec.prev, 2 * S - 64);
    n++;
  }
  CHECK_EQ(n, nrecs);
  CHECK_EQ(hs_wal_reader_end(r), end);
  CHECK_EQ(hs_wal_reader_end_kind(r), HS_WAL_END_CLEAN);
  hs_wal_reader_close(r);
  hs_lsn found = 0;
  CHECK_EQ(read_back(dir, S, &found, &n), HS_WAL_END_CLEAN);
  CHECK_EQ(n, nrecs);
  CHECK_OK(hs_wal_find_end(dir, S, &found));
  CHECK_EQ(found, end);
  w = open_log(dir, S); /* reopened: the same end, the same identity */
  CHECK_EQ(hs_wal_insert_lsn(w), end);
  CHECK_EQ(wal_system_id(w), id);
  CHECK(!wal_is_empty(w));
  CHECK_EQ(wal_adopt_identity(w, 5, 0), HS_ERR_INVALID);
  CHECK(!wal_open_end_corrupt(w));
  CHECK_CONTAINS(wal_open_why_end(w), "clean end");
  CHECK_OK(hs_wal_close(w));

  /* A flipped byte in the last record of segment 0 but one: corruption. */
  size_t bad = last0 - 1;
  hs_lsn bad_at = recs[bad].lsn;
  flip_byte(p0, bad_at + WAL_HEADER + 5);
  size_t tail_len = (size_t)(S - bad_at);
  unsigned char *kept_want = malloc(tail_len);
  REQUIRE(kept_want);
  read_at(p0, bad_at, kept_want, tail_len);
  uint64_t sum1 = file_sum(p1), sum2 = file_sum(p2);
  snapshot before, after;
  take_snapshot(dir, &before);
  CHECK_EQ(read_back(dir, S, &found, &n), HS_WAL_END_CORRUPT);
  CHECK_EQ(found, bad_at);
  CHECK_EQ(n, bad);
  w = open_log(dir, S);
  CHECK(wal_open_end_corrupt(w));
  CHECK_CONTAINS(wal_open_why_end(w), "fails its CRC");
  CHECK_CONTAINS(wal_open_why_end(w), "kept in");
  char kept[4400];
  snprintf(kept, sizeof kept, "%s/kept-%016" PRIX64, dir, bad_at);
  CHECK_CONTAINS(wal_open_why_end(w), kept);
  CHECK_EQ(hs_wal_insert_lsn(w), bad_at);
  take_snapshot(dir, &after);
  CHECK(same_snapshot(&before, &after)); /* opening changed nothing */
  struct stat sb;
  CHECK(stat(kept, &sb) != 0);
  /* Segments 1 and 2 were written after segment 0 was synced whole: the
   * flipped byte is damage, not a crash, and writing at bad_at would give
   * up records 1 and 2 hold. The first write refuses, naming the segment,
   * and changes nothing. */
  size_t nrecs_before = nrecs;
  put(w, 1000);
  take_snapshot(dir, &after);
  CHECK(same_snapshot(&before, &after)); /* an insert alone writes nothing */
  CHECK_ST(hs_wal_flush(w, hs_wal_insert_lsn(w), HS_WAL_CAUSE_COMMIT, NULL), HS_ERR_CORRUPT);
  CHECK_CONTAINS(hs_last_error(), p0);
  CHECK_CONTAINS(hs_last_error(), "reset-log");
  (void)hs_wal_close(w);
  take_snapshot(dir, &after);
  CHECK(same_snapshot(&before, &after)); /* the refusal wrote nothing */
  /* Accepted (what `hotset reset-log --force` does): the records after
   * the damage are given up, their bytes kept. */
  nrecs = nrecs_before;
  w = open_log(dir, S);
  CHECK(wal_open_end_corrupt(w));
  wal_accept_damage(w);
  for (size_t i = bad; i < nrecs; i++) recs[i].tag = 0; /* gone from the log */
  put(w, 1000);
  /* Made durable by the close alone: no sync point follows it (one after
   * a commit's flush would say it had been synced, and its flipped byte
   * below would be damage: test_sync_point_proves_damage). */
  CHECK_OK(hs_wal_close(w));
  /* The evidence, byte-identical: the rest of segment 0 from the bad
   * record on, and segments 1 and 2 whole. */
  char kp[4600];
  snprintf(kp, sizeof kp, "%s/%016" PRIX64 ".from-%016" PRIX64, kept, (uint64_t)0, bad_at);
  unsigned char *kept_got = malloc(tail_len);
  REQUIRE(kept_got);
  read_at(kp, 0, kept_got, tail_len);
  CHECK(memcmp(kept_got, kept_want, tail_len) == 0);
  CHECK_EQ(stat(kp, &sb), 0);
  CHECK_EQ((uint64_t)sb.st_size, (uint64_t)tail_len);
  free(kept_got);
  free(kept_want);
  snprintf(kp, sizeof kp, "%s/%016" PRIX64, kept, S);
  CHECK_EQ(file_sum(kp), sum1);
  snprintf(kp, sizeof kp, "%s/%016" PRIX64, kept, 2 * S);
  CHECK_EQ(file_sum(kp), sum2);
  CHECK(stat(p1, &sb) != 0 && stat(p2, &sb) != 0);
  CHECK_EQ(read_back(dir, S, &found, &n), HS_WAL_END_CLEAN);
  CHECK_EQ(n, bad + 1);

  /* A flipped byte in the last record: a torn end, cleared on the first
   * write; the new record is shorter, so the rest of the torn one must be
   * zeros afterwards. */
  inserted last = recs[nrecs - 1];
  flip_byte(p0, last.lsn + WAL_HEADER + 500);
  recs[nrecs - 1].tag = 0;
  take_snapshot(dir, &before);
  CHECK_EQ(read_back(dir, S, &found, &n), HS_WAL_END_TORN);
  CHECK_EQ(found, last.lsn);
  w = open_log(dir, S);
  CHECK(!wal_open_end_corrupt(w));
  CHECK_CONTAINS(wal_open_why_end(w), "torn last record at");
  take_snapshot(dir, &after);
  CHECK(same_snapshot(&before, &after));
  put(w, 8);
  CHECK_OK(hs_wal_flush(w, hs_wal_insert_lsn(w), HS_WAL_CAUSE_COMMIT, NULL));
  CHECK_OK(hs_wal_close(w));
  /* The new record (40 bytes), the sync point its flush left (40 more),
   * then zeros. */
  unsigned char sp[WAL_HEADER];
  read_at(p0, last.lsn + 40, sp, sizeof sp);
  CHECK(wal_get64(sp + 8) == last.lsn + 40 && sp[24] == HS_WAL_RMGR_LOG &&
        sp[25] == WAL_LOG_SYNCED);
  uint64_t cleared = 40 + WAL_SYNC_POINT_BYTES;
  unsigned char rest[1000];
  read_at(p0, last.lsn + cleared, rest, last.end - last.lsn - cleared);
  bool all_zero = true;
  for (size_t i = 0; i < last.end - last.lsn - cleared; i++) all_zero &= rest[i] == 0;
  CHECK(all_zero);
  CHECK_EQ(read_back(dir, S, &found, &n), HS_WAL_END_CLEAN);
  CHECK_EQ(n, bad + 1);
  CHECK_EQ(stat(kept, &sb), 0); /* the evidence stays: nothing deletes it */

  /* A segment of another log (another system id): refused, naming it, both
   * ids, and what to do. */
  char foreign[4200];
  seg_path(foreign, sizeof foreign, dir, 3 * S);
  wal_seg_header_encode(hb, id ^ 0x5A5A5A5A5A5A5A5Aull, 3 * S, S);
  int fd = open(foreign, O_WRONLY | O_CREAT, 0600);
  REQUIRE(fd >= 0);
  REQUIRE(pwrite(fd, hb, sizeof hb, 0) == (ssize_t)sizeof hb);
  close(fd);
  hs_wal_options o;
  hs_wal_options_init(&o);
  o.dir = dir;
  o.segment_bytes = S;
  hs_wal *refused = NULL;
  CHECK_ST(hs_wal_open(&o, &refused), HS_ERR_CORRUPT);
  CHECK(refused == NULL);
  char ids[2][32];
  snprintf(ids[0], sizeof ids[0], "%016" PRIX64, id);
  snprintf(ids[1], sizeof ids[1], "%016" PRIX64, id ^ (uint64_t)0x5A5A5A5A5A5A5A5Aull);
  CHECK_CONTAINS(hs_last_error(), foreign);
  CHECK_CONTAINS(hs_last_error(), ids[0]);
  CHECK_CONTAINS(hs_last_error(), ids[1]);
  /* One segment of each: which is this log's is not said, both are named. */
  CHECK_CONTAINS(hs_last_error(), "as many of each");
  CHECK_CONTAINS(hs_last_error(), p0);
  CHECK_ST(hs_wal_find_end(dir, S, &found), HS_ERR_CORRUPT);
  unlink(foreign);
  testdir_remove(dir);
}

/* A new segment is fdatasynced after its zeros, before it is renamed into
 * place: with that sync failing, no segment may exist under its name (a
 * crash then would leave a segment whose zeros may not be on disk). */
static void test_segment_synced_before_rename(void) {
  testdir_make(dir, sizeof dir, "walfmt-sync");
  hs_wal *w = open_log(dir, HS_WAL_MIN_SEGMENT);
  CHECK_OK(hs_wal_inject_fault(w, HS_WAL_FAULT_SYNC, 1, EIO, 1));
  nrecs = 0;
  put(w, 100);
  CHECK_ST(hs_wal_flush(w, hs_wal_insert_lsn(w), HS_WAL_CAUSE_COMMIT, NULL), HS_ERR_IO);
  CHECK_CONTAINS(hs_last_error(), "zeros");
  char p0[4200];
  seg_path(p0, sizeof p0, dir, 0);
  struct stat sb;
  CHECK(stat(p0, &sb) != 0 && errno == ENOENT);
  (void)hs_wal_close(w);
  testdir_remove(dir);
}

/* A record whose CRC passes and that says it starts where it does, but
 * names the wrong record before it, ends the log: the chain is checked. */
static void test_broken_chain(void) {
  testdir_make(dir, sizeof dir, "walfmt-chain");
  const uint64_t S = HS_WAL_MIN_SEGMENT;
  hs_wal *w = open_log(dir, S);
  nrecs = 0;
  for (int i = 0; i < 5; i++) put(w, 40);
  CHECK_OK(hs_wal_close(w));
  char p0[4200];
  seg_path(p0, sizeof p0, dir, 0);
  /* Record 2 now names record 0 as its prev, with a CRC to match. */
  hs_lsn at = recs[2].lsn;
  uint32_t total = WAL_HEADER + 40;
  unsigned char b[WAL_HEADER + 40];
  read_at(p0, at, b, total);
  CHECK_EQ(wal_get64(b + 16), recs[1].lsn);
  wal_put64(b + 16, recs[0].lsn);
  uint32_t crc = hs_crc32c(0, b + 8, total - 8);
  wal_put32(b + 4, hs_crc32c(crc, b, 4));
  int fd = open(p0, O_WRONLY);
  REQUIRE(fd >= 0);
  REQUIRE(pwrite(fd, b, total, (off_t)at) == (ssize_t)total);
  close(fd);
  hs_wal_reader *r;
  CHECK_OK(hs_wal_reader_open(dir, S, 0, &r));
  hs_wal_read_record rec;
  bool got;
  size_t n = 0;
  while (hs_wal_reader_next(r, &rec, &got) == HS_OK && got) n++;
  CHECK_EQ(n, 2u);
  CHECK_EQ(hs_wal_reader_end(r), at);
  CHECK_CONTAINS(hs_wal_reader_why_end(r), "chain");
  /* Its CRC passes: it is whole, as written, so no torn write left it;
   * with records 3 and 4 after it, the log is damaged there. */
  CHECK_EQ(hs_wal_reader_end_kind(r), HS_WAL_END_CORRUPT);
  CHECK_EQ(wal_reader_valid_after(r), recs[3].lsn);
  hs_wal_reader_close(r);
  testdir_remove(dir);
}

/* A record that fails its CRC with valid records after it in its own
 * segment: damage if it lies within one 512-byte sector (a power cut
 * writes a sector whole or not at all, so no tear leaves it), a torn end
 * whose rest is kept if it spans sectors (its later sectors may have
 * reached the disk without its earlier ones). */
static void test_torn_or_damaged_by_sector(void) {
  const uint64_t S = HS_WAL_MIN_SEGMENT;
  for (int spans = 0; spans < 2; spans++) {
    testdir_make(dir, sizeof dir, "walfmt-sector");
    hs_wal *w = open_log(dir, S);
    nrecs = 0;
    for (int i = 0; i < 6; i++) put(w, spans ? 1000 : 40);
    CHECK_OK(hs_wal_close(w));
    char p0[4200];
    seg_path(p0, sizeof p0, dir, 0);
    hs_lsn at = recs[2].lsn;
    CHECK_EQ(at / 512 != (recs[2].end - 1) / 512, spans);
    flip_byte(p0, at + WAL_HEADER + 2);
    hs_wal_reader *r;
    CHECK_OK(hs_wal_reader_open(dir, S, 0, &r));
    hs_wal_read_record rec;
    bool got;
    while (hs_wal_reader_next(r, &rec, &got) == HS_OK && got) {
    }
    CHECK_EQ(hs_wal_reader_end(r), at);
    CHECK_EQ(hs_wal_reader_end_kind(r), spans ? HS_WAL_END_TORN : HS_WAL_END_CORRUPT);
    CHECK_EQ(wal_reader_valid_after(r), recs[3].lsn);
    CHECK_CONTAINS(hs_wal_reader_why_end(r), spans ? "torn" : "one 512-byte sector");
    hs_wal_reader_close(r);
    testdir_remove(dir);
  }
}

/* Reads the log in dir from its oldest segment to its end. */
static hs_wal_reader *read_to_end(const char *d, uint64_t S) {
  hs_wal_reader *r;
  CHECK_OK(hs_wal_reader_open(d, S, 0, &r));
  REQUIRE(r);
  hs_wal_read_record rec;
  bool got;
  while (hs_wal_reader_next(r, &rec, &got) == HS_OK && got) {
  }
  return r;
}

/* A flipped byte in a record that spans sectors, in the log's last
 * segment, with only that segment's records after it: a torn unsynced
 * write would look the same, but a sync point after it (the log's own
 * record, inserted once a sync returned) says the log was synced past it
 * before that sync point was written — damage, and the open refuses to
 * write over the acknowledged commits after it. */
static void test_sync_point_proves_damage(void) {
  const uint64_t S = HS_WAL_MIN_SEGMENT;
  testdir_make(dir, sizeof dir, "walfmt-synced");
  hs_wal *w = open_log(dir, S);
  nrecs = 0;
  for (int i = 0; i < 3; i++) put(w, 1000);
  CHECK_OK(hs_wal_flush(w, hs_wal_insert_lsn(w), HS_WAL_CAUSE_COMMIT, NULL));
  hs_lsn claim = recs[2].end; /* what that sync made durable */
  /* The sync point is where the next record would have gone. */
  CHECK_EQ(hs_wal_insert_lsn(w), claim + WAL_SYNC_POINT_BYTES);
  for (int i = 0; i < 3; i++) put(w, 1000);
  CHECK_EQ(recs[3].lsn, claim + WAL_SYNC_POINT_BYTES);
  CHECK_OK(hs_wal_flush(w, hs_wal_insert_lsn(w), HS_WAL_CAUSE_COMMIT, NULL));
  CHECK_OK(hs_wal_close(w));
  char p0[4200];
  seg_path(p0, sizeof p0, dir, 0);
  /* The sync point on disk: the log's own type, claiming `claim`. */
  unsigned char sp[WAL_SYNC_POINT_BYTES];
  read_at(p0, claim, sp, sizeof sp);
  CHECK_EQ(wal_get32(sp), WAL_SYNC_POINT_BYTES);
  CHECK(sp[24] == HS_WAL_RMGR_LOG && sp[25] == WAL_LOG_SYNCED);
  CHECK_EQ(wal_get64(sp + WAL_HEADER), claim);
  /* Read back, the sync points are followed, never handed out. */
  hs_wal_reader *r = read_to_end(dir, S);
  CHECK_EQ(hs_wal_reader_end_kind(r), HS_WAL_END_CLEAN);
  hs_wal_reader_close(r);
  size_t n = 0;
  hs_lsn found = 0;
  CHECK_EQ(read_back(dir, S, &found, &n), HS_WAL_END_CLEAN);
  CHECK_EQ(n, (size_t)6);

  /* A byte flipped in record 1, which spans sectors and lies below the
   * claim. */
  hs_lsn at = recs[1].lsn;
  REQUIRE(at / 512 != (recs[1].end - 1) / 512 && recs[1].end <= claim);
  flip_byte(p0, at + WAL_HEADER + 700);
  r = read_to_end(dir, S);
  CHECK_EQ(hs_wal_reader_end(r), at);
  CHECK_EQ(hs_wal_reader_end_kind(r), HS_WAL_END_CORRUPT);
  CHECK_EQ(wal_reader_valid_after(r), recs[2].lsn);
  char want[200];
  snprintf(want, sizeof want,
           "the sync point at %" PRIX64 " says the log was synced to %" PRIX64
           " before the record at %" PRIX64 " was written",
           claim, claim, claim);
  CHECK_CONTAINS(hs_wal_reader_why_end(r), want);
  CHECK_CONTAINS(hs_wal_reader_why_end(r), "segment 0000000000000000");
  CHECK_CONTAINS(hs_wal_reader_why_end(r), "fails its CRC");
  hs_wal_reader_close(r);
  /* The open: proven damage, the first write refused, nothing changed. */
  snapshot before, after;
  take_snapshot(dir, &before);
  w = open_log(dir, S);
  CHECK(wal_open_end_corrupt(w));
  CHECK_EQ(hs_wal_insert_lsn(w), at);
  put(w, 100);
  CHECK_ST(hs_wal_flush(w, hs_wal_insert_lsn(w), HS_WAL_CAUSE_COMMIT, NULL), HS_ERR_CORRUPT);
  CHECK_CONTAINS(hs_last_error(), p0);
  CHECK_CONTAINS(hs_last_error(), "reset-log");
  (void)hs_wal_close(w);
  take_snapshot(dir, &after);
  CHECK(same_snapshot(&before, &after));
  testdir_remove(dir);
}

/* A write a power cut tore sector by sector: a multi-sector record written
 * after the last sync, one of its sectors reverted to the zeros it was,
 * the records after it surviving. No sync point claims the log durable
 * past it — the one before it claims less, and so may one after it (a
 * sync point lies where the insert position was, past records inserted
 * while its sync ran, and claims only what that sync covered): a torn
 * end, its remains kept, never called damage. */
static void test_torn_unsynced_stays_torn(void) {
  const uint64_t S = HS_WAL_MIN_SEGMENT;
  for (int after = 0; after < 2; after++) {
    testdir_make(dir, sizeof dir, "walfmt-unsynced");
    hs_wal *w = open_log(dir, S);
    nrecs = 0;
    memset(payload, 0xA5, 1000); /* no sector of zeros: reverting one changes it */
    for (int i = 0; i < 3; i++) put(w, 1000);
    CHECK_OK(hs_wal_flush(w, hs_wal_insert_lsn(w), HS_WAL_CAUSE_COMMIT, NULL));
    hs_lsn claim = recs[2].end;
    for (int i = 0; i < 3; i++) put(w, 1000); /* written by the close: no sync point after */
    CHECK_OK(hs_wal_close(w));
    char p0[4200];
    seg_path(p0, sizeof p0, dir, 0);
    hs_lsn torn = recs[3].lsn;
    REQUIRE(torn > claim);
    if (after) {
      /* A sync point after the torn record whose sync covered only what
       * came before it: as the log writes one when record 3 was inserted
       * while that sync ran. */
      hs_lsn pos = recs[5].end;
      unsigned char b[WAL_SYNC_POINT_BYTES] = {0};
      wal_put32(b, WAL_SYNC_POINT_BYTES);
      wal_put64(b + 8, pos);
      wal_put64(b + 16, recs[5].lsn);
      b[24] = HS_WAL_RMGR_LOG;
      b[25] = WAL_LOG_SYNCED;
      wal_put32(b + 28, WAL_SYNC_POINT_LEN);
      wal_put64(b + WAL_HEADER, torn); /* every byte before the torn record */
      uint32_t crc = hs_crc32c(0, b + 8, sizeof b - 8);
      wal_put32(b + 4, hs_crc32c(crc, b, 4));
      int fd = open(p0, O_WRONLY);
      REQUIRE(fd >= 0);
      REQUIRE(pwrite(fd, b, sizeof b, (off_t)pos) == (ssize_t)sizeof b);
      close(fd);
    }
    /* The first sector that lies wholly inside record 3, reverted to zeros. */
    uint64_t sector = (torn / 512 + 1) * 512;
    REQUIRE(sector + 512 <= recs[3].end);
    static const unsigned char zeros[512];
    int fd = open(p0, O_WRONLY);
    REQUIRE(fd >= 0);
    REQUIRE(pwrite(fd, zeros, sizeof zeros, (off_t)sector) == (ssize_t)sizeof zeros);
    close(fd);
    hs_wal_reader *r = read_to_end(dir, S);
    CHECK_EQ(hs_wal_reader_end(r), torn);
    CHECK_EQ(hs_wal_reader_end_kind(r), HS_WAL_END_TORN);
    CHECK_EQ(wal_reader_valid_after(r), recs[4].lsn);
    CHECK_CONTAINS(hs_wal_reader_why_end(r), "torn last record at");
    hs_wal_reader_close(r);
    /* Opened, the log goes on at the torn record; the rest is kept. */
    w = open_log(dir, S);
    CHECK(!wal_open_end_corrupt(w));
    CHECK_EQ(hs_wal_insert_lsn(w), torn);
    put(w, 100);
    CHECK_OK(hs_wal_flush(w, hs_wal_insert_lsn(w), HS_WAL_CAUSE_COMMIT, NULL));
    CHECK_OK(hs_wal_close(w));
    char kept[4400];
    snprintf(kept, sizeof kept, "%s/kept-%016" PRIX64, dir, torn);
    struct stat sb;
    CHECK_EQ(stat(kept, &sb), 0);
    memset(payload, 0, 1000);
    testdir_remove(dir);
  }
}

/* A damaged segment header (neither zeros nor valid) with records after
 * it is damage: no torn write leaves one. */
static void test_damaged_header_with_records(void) {
  const uint64_t S = HS_WAL_MIN_SEGMENT;
  testdir_make(dir, sizeof dir, "walfmt-header");
  hs_wal *w = open_log(dir, S);
  nrecs = 0;
  for (int i = 0; i < 4; i++) put(w, 100);
  CHECK_OK(hs_wal_close(w));
  char p0[4200];
  seg_path(p0, sizeof p0, dir, 0);
  flip_byte(p0, 20); /* the system id: the header's CRC fails */
  hs_wal_reader *r;
  CHECK_OK(hs_wal_reader_open(dir, S, 0, &r));
  hs_wal_read_record rec;
  bool got;
  CHECK_OK(hs_wal_reader_next(r, &rec, &got));
  CHECK(!got);
  CHECK_EQ(hs_wal_reader_end_kind(r), HS_WAL_END_CORRUPT);
  hs_wal_reader_close(r);
  testdir_remove(dir);
}

/* A full disk, wherever the log meets it, is HS_ERR_NOSPACE naming the
 * file and saying the disk is full. */
static void test_no_space(void) {
  const uint64_t S = HS_WAL_MIN_SEGMENT;
  nrecs = 0;
  /* Zero-filling a new segment. */
  testdir_make(dir, sizeof dir, "walfmt-full1");
  hs_wal *w = open_log(dir, S);
  CHECK_OK(hs_wal_inject_fault(w, HS_WAL_FAULT_WRITE, 1, ENOSPC, 1));
  put(w, 100);
  CHECK_ST(hs_wal_flush(w, hs_wal_insert_lsn(w), HS_WAL_CAUSE_COMMIT, NULL), HS_ERR_NOSPACE);
  CHECK_CONTAINS(hs_last_error(), "the disk is full");
  CHECK_CONTAINS(hs_last_error(), dir);
  CHECK_CONTAINS(hs_last_error(), "new log segment");
  CHECK_ST(hs_wal_close(w), HS_ERR_NOSPACE);
  testdir_remove(dir);
  /* Writing records, and syncing them. */
  testdir_make(dir, sizeof dir, "walfmt-full2");
  w = open_log(dir, S);
  put(w, 100);
  CHECK_OK(hs_wal_flush(w, hs_wal_insert_lsn(w), HS_WAL_CAUSE_COMMIT, NULL));
  CHECK_OK(hs_wal_inject_fault(w, HS_WAL_FAULT_WRITE, 1, EDQUOT, 1));
  put(w, 100);
  CHECK_ST(hs_wal_flush(w, hs_wal_insert_lsn(w), HS_WAL_CAUSE_COMMIT, NULL), HS_ERR_NOSPACE);
  CHECK_CONTAINS(hs_last_error(), "the disk is full");
  CHECK_CONTAINS(hs_last_error(), "segment");
  CHECK_CONTAINS(hs_last_error(), dir);
  (void)hs_wal_close(w);
  w = open_log(dir, S);
  put(w, 100);
  CHECK_OK(hs_wal_inject_fault(w, HS_WAL_FAULT_SYNC, 1, ENOSPC, 1));
  CHECK_ST(hs_wal_flush(w, hs_wal_insert_lsn(w), HS_WAL_CAUSE_COMMIT, NULL), HS_ERR_NOSPACE);
  CHECK_CONTAINS(hs_last_error(), "the disk is full");
  (void)hs_wal_close(w);
  testdir_remove(dir);
}

/* hs_wal_open creates missing parents; a component that is a file is an
 * error naming it and why. */
static void test_parents(void) {
  testdir_make(dir, sizeof dir, "walfmt-mkdir");
  char d[4400];
  snprintf(d, sizeof d, "%s/fresh/a/b/wal", dir);
  hs_wal *w = open_log(d, HS_WAL_MIN_SEGMENT);
  nrecs = 0;
  put(w, 8);
  CHECK_OK(hs_wal_close(w));
  hs_lsn end;
  CHECK_OK(hs_wal_find_end(d, HS_WAL_MIN_SEGMENT, &end));
  CHECK_EQ(end, recs[0].end);
  char file[4400];
  snprintf(file, sizeof file, "%s/file", dir);
  int fd = open(file, O_WRONLY | O_CREAT, 0600);
  REQUIRE(fd >= 0);
  close(fd);
  snprintf(d, sizeof d, "%s/file/wal", dir);
  hs_wal_options o;
  hs_wal_options_init(&o);
  o.dir = d;
  o.segment_bytes = HS_WAL_MIN_SEGMENT;
  CHECK_ST(hs_wal_open(&o, &w), HS_ERR_NOENT);
  CHECK_CONTAINS(hs_last_error(), "creating the log's directory");
  CHECK_CONTAINS(hs_last_error(), d);
  CHECK_CONTAINS(hs_last_error(), strerror(ENOTDIR));
  testdir_remove(dir);
}

/* The checkpoint's three steps: the record's start as the insert reserved
 * it (behind a switch record here), read back as a checkpoint; an empty
 * log adopting an identity starts where it is told, with that id. */
static void test_checkpoint_and_identity(void) {
  const uint64_t S = HS_WAL_MIN_SEGMENT;
  testdir_make(dir, sizeof dir, "walfmt-ckpt");
  hs_wal *w = open_log(dir, S);
  nrecs = 0;
  fill_leaving(w, S, 40); /* a switch record fits, the checkpoint does not */
  hs_lsn redo = wal_checkpoint_begin(w);
  hs_lsn ckpt = 0;
  CHECK_OK(wal_checkpoint_log(w, redo, &ckpt));
  CHECK_EQ(ckpt, S + WAL_SEG_HEADER);
  /* Flushed through the checkpoint record, and a sync point saying so
   * after it (written with the next flush: the close's). */
  hs_lsn ckpt_end = ckpt + wal_align(WAL_HEADER + 16);
  CHECK_EQ(hs_wal_flushed_lsn(w), ckpt_end);
  CHECK_EQ(hs_wal_insert_lsn(w), ckpt_end + WAL_SYNC_POINT_BYTES);
  uint64_t recycled = 9, removed = 9;
  CHECK_OK(wal_recycle(w, redo, 0, &recycled, &removed));
  CHECK_EQ(recycled + removed, 0u); /* the redo point's segment is still needed */
  CHECK_OK(hs_wal_close(w));
  hs_wal_reader *r;
  CHECK_OK(hs_wal_reader_open(dir, S, 0, &r));
  hs_wal_read_record rec;
  bool got;
  bool seen = false;
  while (hs_wal_reader_next(r, &rec, &got) == HS_OK && got) {
    hs_lsn rp = 0;
    if (wal_record_is_checkpoint(&rec, &rp)) {
      seen = true;
      CHECK_EQ(rec.lsn, ckpt);
      CHECK_EQ(rp, redo);
    }
  }
  CHECK(seen);
  hs_wal_reader_close(r);
  testdir_remove(dir);

  testdir_make(dir, sizeof dir, "walfmt-adopt");
  w = open_log(dir, S);
  CHECK(wal_is_empty(w));
  CHECK_ST(wal_adopt_identity(w, 0x1234, S / 2), HS_ERR_INVALID);
  CHECK_OK(wal_adopt_identity(w, 0x1234, 7 * S));
  CHECK_EQ(wal_system_id(w), 0x1234u);
  CHECK_EQ(hs_wal_insert_lsn(w), 7 * S);
  nrecs = 0;
  put(w, 8);
  CHECK_EQ(recs[0].lsn, 7 * S + WAL_SEG_HEADER);
  CHECK_OK(hs_wal_close(w));
  w = open_log(dir, S);
  CHECK_EQ(wal_system_id(w), 0x1234u);
  CHECK_EQ(hs_wal_insert_lsn(w), recs[0].end);
  CHECK(!wal_is_empty(w));
  CHECK_OK(hs_wal_close(w));
  testdir_remove(dir);
}

/* A real segment of another log (its header names its own place), put in
 * this log's directory: refused at open, and by hs_wal_find_end. */
static void test_other_log(void) {
  const uint64_t S = HS_WAL_MIN_SEGMENT;
  char other[4096];
  testdir_make(dir, sizeof dir, "walfmt-mine");
  testdir_make(other, sizeof other, "walfmt-other");
  nrecs = 0;
  hs_wal *a = open_log(dir, S);
  put(a, 8);
  uint64_t id_a = wal_system_id(a);
  CHECK_OK(hs_wal_close(a));
  hs_wal *b = open_log(other, S);
  CHECK_OK(wal_adopt_identity(b, id_a + 1, 4 * S)); /* starts where a's log has no segment */
  put(b, 8);
  CHECK_OK(hs_wal_close(b));
  char from[4200], to[4200];
  seg_path(from, sizeof from, other, 4 * S);
  seg_path(to, sizeof to, dir, 4 * S);
  REQUIRE(rename(from, to) == 0);
  hs_wal_options o;
  hs_wal_options_init(&o);
  o.dir = dir;
  o.segment_bytes = S;
  CHECK_ST(hs_wal_open(&o, &a), HS_ERR_CORRUPT);
  CHECK_CONTAINS(hs_last_error(), to);
  CHECK_CONTAINS(hs_last_error(), "two logs"); /* one segment each: neither blamed */
  hs_lsn end;
  CHECK_ST(hs_wal_find_end(dir, S, &end), HS_ERR_CORRUPT);
  REQUIRE(rename(to, from) == 0); /* moved back out: this log opens again */
  a = open_log(dir, S);
  CHECK_EQ(wal_system_id(a), id_a);
  CHECK_EQ(hs_wal_insert_lsn(a), recs[0].end);
  CHECK_OK(hs_wal_close(a));
  testdir_remove(other);
  testdir_remove(dir);
}

/* A segment of another log whose name sorts below this log's own: the
 * foreign one is blamed (this log's id is the one most segments carry),
 * and the way out is a command that runs as printed. It used to be the
 * first name's id, so a genuine segment was blamed and the operator told
 * to move it out. */
static void test_foreign_below(void) {
  const uint64_t S = HS_WAL_MIN_SEGMENT;
  char other[4096];
  testdir_make(dir, sizeof dir, "walfmt-below");
  testdir_make(other, sizeof other, "walfmt-below-other");
  hs_wal *a = open_log(dir, S);
  CHECK_OK(wal_adopt_identity(a, 0x1111, 4 * S));
  nrecs = 0;
  while (hs_wal_insert_lsn(a) < 6 * S) put(a, 4000); /* segments 4, 5, 6 */
  CHECK_OK(hs_wal_close(a));
  hs_wal *b = open_log(other, S);
  CHECK_OK(wal_adopt_identity(b, 0x2222, S));
  put(b, 8);
  CHECK_OK(hs_wal_close(b));
  char from[4200], to[4200];
  seg_path(from, sizeof from, other, S);
  seg_path(to, sizeof to, dir, S);
  REQUIRE(rename(from, to) == 0);
  hs_wal_options o;
  hs_wal_options_init(&o);
  o.dir = dir;
  o.segment_bytes = S;
  CHECK_ST(hs_wal_open(&o, &a), HS_ERR_CORRUPT);
  char mv[9000];
  snprintf(mv, sizeof mv, "`mv %s %s/foreign-%016" PRIX64 "`", to, dir, S);
  CHECK_CONTAINS(hs_last_error(), mv);
  CHECK_CONTAINS(hs_last_error(), "0000000000002222");
  /* The command as printed (without its quotes) is the way out. */
  char cmd[9000];
  snprintf(cmd, sizeof cmd, "%.*s", (int)strlen(mv) - 2, mv + 1);
  REQUIRE(system(cmd) == 0);
  a = open_log(dir, S);
  CHECK_EQ(wal_system_id(a), 0x1111u);
  CHECK_OK(hs_wal_close(a));
  testdir_remove(other);
  testdir_remove(dir);
}

/* Spares — segments recycled for reuse, or made ahead — hold none of the
 * log's records: a torn end's evidence never takes them (one power cut
 * used to move 28 MB of spares into kept-*). Only the rest of the end's
 * segment is kept, when valid records follow in it. */
static void test_spares_stay(void) {
  const uint64_t S = HS_WAL_MIN_SEGMENT;
  testdir_make(dir, sizeof dir, "walfmt-spares");
  hs_wal *w = open_log(dir, S);
  nrecs = 0;
  while (hs_wal_insert_lsn(w) < 3 * S + 4096) put(w, 1000);
  CHECK_OK(hs_wal_flush(w, hs_wal_insert_lsn(w), HS_WAL_CAUSE_COMMIT, NULL));
  hs_lsn redo = wal_checkpoint_begin(w), ckpt;
  CHECK_OK(wal_checkpoint_log(w, redo, &ckpt));
  uint64_t recycled = 0, removed = 0;
  CHECK_OK(wal_recycle(w, redo, 8 * S, &recycled, &removed));
  CHECK(recycled >= 2); /* spares above the log's end */
  size_t first_new = nrecs;
  for (int i = 0; i < 4; i++) put(w, 1000); /* records that span sectors */
  CHECK_OK(hs_wal_close(w));
  /* A flip in the first of the last four: the others follow it in its
   * segment, so its rest is kept; the spares are not. */
  inserted bad = recs[first_new];
  char p[4200];
  seg_path(p, sizeof p, dir, bad.lsn - bad.lsn % S);
  flip_byte(p, bad.lsn % S + WAL_HEADER + 700);
  w = open_log(dir, S);
  CHECK(!wal_open_end_corrupt(w));
  CHECK_EQ(hs_wal_insert_lsn(w), bad.lsn);
  put(w, 8);
  CHECK_OK(hs_wal_flush(w, hs_wal_insert_lsn(w), HS_WAL_CAUSE_COMMIT, NULL));
  CHECK_OK(hs_wal_close(w));
  char kept[4400];
  snprintf(kept, sizeof kept, "%s/kept-%016" PRIX64, dir, bad.lsn);
  DIR *d = opendir(kept);
  REQUIRE(d != NULL);
  size_t files = 0, segments = 0;
  for (struct dirent *e; (e = readdir(d));) {
    if (e->d_name[0] == '.') continue;
    files++;
    if (strlen(e->d_name) == 16) segments++;
  }
  closedir(d);
  CHECK_EQ(files, 1u);    /* the rest of the segment, from the bad record */
  CHECK_EQ(segments, 0u); /* no spare */
  /* The spares are where they were: the log can still use them. */
  uint64_t *starts;
  size_t n;
  CHECK_OK(wal_segment_list(dir, S, &starts, &n));
  size_t above = 0;
  for (size_t i = 0; i < n; i++) above += starts[i] > bad.lsn;
  CHECK(above >= 2);
  free(starts);
  testdir_remove(dir);
}

/* The same damage met twice at one LSN: the second evidence goes to a
 * directory of its own, the first is left as it was. */
static void test_kept_twice(void) {
  const uint64_t S = HS_WAL_MIN_SEGMENT;
  testdir_make(dir, sizeof dir, "walfmt-twice");
  char p0[4200], first[4400], second[4400];
  seg_path(p0, sizeof p0, dir, 0);
  nrecs = 0;
  hs_wal *w = open_log(dir, S);
  for (int i = 0; i < 4; i++) put(w, 640); /* each spans sectors: a flip may be a tear */
  CHECK_OK(hs_wal_close(w));
  hs_lsn at = recs[1].lsn;
  snprintf(first, sizeof first, "%s/kept-%016" PRIX64 "/%016" PRIX64 ".from-%016" PRIX64, dir, at,
           (uint64_t)0, at);
  snprintf(second, sizeof second, "%s/kept-%016" PRIX64 ".2/%016" PRIX64 ".from-%016" PRIX64, dir,
           at, (uint64_t)0, at);
  uint64_t sum_first = 0;
  for (int round = 0; round < 2; round++) {
    flip_byte(p0, at + WAL_HEADER + 3);
    w = open_log(dir, S);
    CHECK(!wal_open_end_corrupt(w)); /* one segment: a torn end whose rest is kept */
    CHECK_CONTAINS(wal_open_why_end(w), "valid records follow");
    CHECK_EQ(hs_wal_insert_lsn(w), at);
    nrecs = 1;
    for (int i = 0; i < 3; i++) put(w, 720 + 8 * (uint32_t)round); /* other bytes each time */
    CHECK_OK(hs_wal_close(w));
    if (round == 0) sum_first = file_sum(first);
  }
  CHECK_EQ(file_sum(first), sum_first); /* left as it was */
  CHECK(file_sum(second) != sum_first); /* the second damage, in its own directory */
  CHECK_EQ(file_sum(second) >> 32, S - at);
  testdir_remove(dir);
}

int main(void) {
  payload = calloc(1, 1u << 22);
  REQUIRE(payload);
  test_segment_synced_before_rename();
  test_broken_chain();
  test_torn_or_damaged_by_sector();
  test_sync_point_proves_damage();
  test_torn_unsynced_stays_torn();
  test_damaged_header_with_records();
  test_no_space();
  test_parents();
  test_checkpoint_and_identity();
  test_other_log();
  test_foreign_below();
  test_spares_stay();
  test_kept_twice();
  uint64_t max = check_max_segment("test_wal_format", HS_WAL_MAX_SEGMENT);
  for (uint64_t S = HS_WAL_MIN_SEGMENT; S <= max; S *= 2) test_size(S);
  free(payload);
  free(recs);
  return check_finish();
}
