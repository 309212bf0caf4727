/*
 * tests/test_header_ranges.c — every field of the two headers hotset reads
 * before anything else, the data directory's control file
 * (storage/control_file.h) and a log segment's header (wal/wal_format.h),
 * is range-checked before use, also when its CRC passes:
 *
 *   - a control file with any field out of range (page size, segment size,
 *     state, flags, reserved bytes, system id, checkpoint and redo LSNs) is
 *     HS_ERR_CORRUPT naming the file, the field and its value, and leaves
 *     *out zeroed; the edges of every range are accepted and round-trip
 *     byte for byte; control_write refuses to write what would be refused
 *     (the old file stays as it was);
 *   - a segment header with a field out of range is WAL_SEG_DAMAGED saying
 *     which, another format version is WAL_SEG_OTHER_VERSION; the reader
 *     ends the log at such a header (segment size 0 is never divided by)
 *     and refuses another version.
 */
#include "check.h"
#include "core/crc32c.h"
#include "core/endian.h"
#include "hotset/control.h"
#include "hotset/storage.h"
#include "hotset/wal.h"
#include "storage/control_file.h"
#include "testdir.h"
#include "wal/wal_durable.h"
#include "wal/wal_format.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MiB (1ull << 20)

/* A control file as a shut-down directory with a log leaves it. */
static hs_control good_control(void) {
  return (hs_control){.format = HS_CONTROL_FORMAT,
                      .page_size = 8192,
                      .checksums = true,
                      .segment_bytes = 16 * MiB,
                      .system_id = 0x1234567890ABCDEFull,
                      .state = HS_DB_SHUT_DOWN,
                      .has_checkpoint = true,
                      .checkpoint = 3 * 16 * MiB + 4096,
                      .redo = 3 * 16 * MiB + 1024};
}

static void reseal_control(unsigned char *b) {
  le_put32(b + 124, hs_crc32c(0, b, 124));
}

static bool same_control(const hs_control *a, const hs_control *b) {
  return a->format == b->format && a->page_size == b->page_size && a->checksums == b->checksums &&
         a->segment_bytes == b->segment_bytes && a->system_id == b->system_id &&
         a->state == b->state && a->has_checkpoint == b->has_checkpoint &&
         a->checkpoint == b->checkpoint && a->redo == b->redo && a->has_catalog == b->has_catalog;
}

/* `c` is accepted and its bytes decode back to it, and encode again to the
 * same bytes. */
static void accepted(const hs_control *c, const char *what) {
  unsigned char b[CONTROL_FILE_BYTES], again[CONTROL_FILE_BYTES];
  control_encode(c, 1700000000000ull, b);
  hs_control out;
  hs_status st = control_decode(b, sizeof b, "D", &out);
  if (st != HS_OK) fprintf(stderr, "refused: %s: %s\n", what, hs_last_error());
  CHECK_EQ(st, HS_OK);
  CHECK(same_control(&out, c));
  CHECK_EQ(out.time_ms, 1700000000000ull);
  control_encode(&out, out.time_ms, again);
  CHECK(memcmp(b, again, sizeof b) == 0);
}

/* The bytes `b` (CRC resealed) are refused naming `needle`. */
static void refused_bytes(unsigned char *b, const char *needle) {
  reseal_control(b);
  hs_control out;
  memset(&out, 0xAB, sizeof out);
  CHECK_ST(control_decode(b, CONTROL_FILE_BYTES, "D", &out), HS_ERR_CORRUPT);
  CHECK_CONTAINS(hs_last_error(), "D/" HS_CONTROL_FILE ": ");
  CHECK_CONTAINS(hs_last_error(), needle);
  CHECK_CONTAINS(hs_last_error(), "reset-log --dir D");
  hs_control zero;
  memset(&zero, 0, sizeof zero);
  CHECK(memcmp(&out, &zero, sizeof out) == 0);
}

static void refused(const hs_control *c, const char *needle) {
  unsigned char b[CONTROL_FILE_BYTES];
  control_encode(c, 0, b);
  refused_bytes(b, needle);
}

static void test_control_edges_accepted(void) {
  hs_control c = good_control();
  accepted(&c, "a shut-down directory");
  c.has_catalog = true;
  accepted(&c, "a directory that lists its relation files");
  c.has_catalog = false;
  c.page_size = HS_PAGE_SIZE_MIN;
  accepted(&c, "the smallest page");
  c.page_size = HS_PAGE_SIZE_MAX;
  accepted(&c, "the largest page");
  c = good_control();
  c.segment_bytes = HS_WAL_MIN_SEGMENT;
  c.checkpoint = 7 * HS_WAL_MIN_SEGMENT + WAL_SEG_HEADER;
  c.redo = 7 * HS_WAL_MIN_SEGMENT; /* reset-log's shape: redo at a segment's start */
  accepted(&c, "the smallest segment, redo at a segment start");
  c.segment_bytes = HS_WAL_MAX_SEGMENT;
  c.checkpoint = HS_WAL_MAX_SEGMENT - WAL_HEADER; /* the last place a record can start */
  c.redo = c.checkpoint;
  accepted(&c, "the largest segment, redo at the checkpoint");
  c = good_control();
  c.checkpoint = WAL_SEG_HEADER;
  c.redo = 0;
  accepted(&c, "a log's first checkpoint, redo 0");
  c = good_control();
  c.redo = 4 * 16 * MiB - 8; /* a redo point in the gap of a segment's last 8 bytes */
  c.checkpoint = 4 * 16 * MiB + WAL_SEG_HEADER;
  accepted(&c, "redo in a segment's last bytes");
  c = good_control();
  c.has_checkpoint = false;
  c.checkpoint = c.redo = 0;
  c.state = HS_DB_IN_PRODUCTION;
  accepted(&c, "no checkpoint yet");
  c.segment_bytes = 0;
  c.checksums = false;
  c.state = HS_DB_IN_RECOVERY;
  accepted(&c, "never had a log");
}

static void test_control_fields_refused(void) {
  const hs_control good = good_control();
  static const uint32_t pages[] = {0, 3, 512, 1000, 8193, 131072, UINT32_MAX};
  for (size_t i = 0; i < sizeof pages / sizeof pages[0]; i++) {
    hs_control c = good_control();
    c.page_size = pages[i];
    char needle[64];
    snprintf(needle, sizeof needle, "page_size is %" PRIu32 ", not a power of two", pages[i]);
    refused(&c, needle);
  }
  static const uint64_t segments[] = {12345, 32768, 3 * MiB, 2ull << 30, UINT64_MAX};
  for (size_t i = 0; i < sizeof segments / sizeof segments[0]; i++) {
    hs_control c = good_control();
    c.segment_bytes = segments[i];
    char needle[64];
    snprintf(needle, sizeof needle, "segment_bytes is %" PRIu64 ", neither 0", segments[i]);
    refused(&c, needle);
  }
  static const uint32_t states[] = {0, 4, 99, UINT32_MAX};
  for (size_t i = 0; i < sizeof states / sizeof states[0]; i++) {
    hs_control c = good_control();
    c.state = (hs_db_state)states[i];
    char needle[64];
    snprintf(needle, sizeof needle, "state is %" PRIu32 ", not 1", states[i]);
    refused(&c, needle);
  }
  hs_control c = good_control();
  c.system_id = 0;
  refused(&c, "system_id is 0");

  c = good_control();
  c.redo = c.checkpoint + 8;
  refused(&c, "redo is 3001008, past the checkpoint record at 3001000");
  c = good_control();
  c.checkpoint += 4;
  refused(&c, "checkpoint is 3001004, not where a record can start");
  c = good_control();
  c.checkpoint = 5 * 16 * MiB + 40; /* inside the segment header */
  c.redo = 5 * 16 * MiB;
  refused(&c, "checkpoint is 5000028, not where a record can start");
  c = good_control();
  c.checkpoint = 5 * 16 * MiB - 24; /* fewer than a record header's bytes left */
  refused(&c, "checkpoint is 4FFFFE8, not where a record can start");
  c = good_control();
  c.redo = 3 * 16 * MiB + 8; /* inside the segment header */
  refused(&c, "redo is 3000008, not a log position");
  c = good_control();
  c.redo = 3 * 16 * MiB + 1028;
  refused(&c, "redo is 3000404, not a log position");
  c = good_control();
  c.checkpoint = c.redo = (1ull << 62) + WAL_SEG_HEADER;
  refused(&c, "checkpoint is 4000000000000030, not where a record can start");
  c = good_control();
  c.segment_bytes = 0;
  refused(&c, "checkpoint is 3001000, but its segment_bytes is 0");
  c = good_control();
  c.has_checkpoint = false;
  refused(&c, "checkpoint is 3001000 (redo 3000400), but its flags say there is no checkpoint");
  c = good_control();
  c.has_checkpoint = false;
  c.checkpoint = 0;
  refused(&c, "checkpoint is 0 (redo 3000400)");

  unsigned char b[CONTROL_FILE_BYTES];
  control_encode(&good, 0, b);
  le_put32(b + 16, le_get32(b + 16) | 8u); /* bits 0-2 are known, 3 is not */
  refused_bytes(b, "flags is 0xB, but only bits 0");
  for (unsigned off = 72; off < 124; off += 51) {
    control_encode(&good, 0, b);
    b[off] = 0x80;
    char needle[64];
    snprintf(needle, sizeof needle, "reserved area is 0x80 at offset %u", off);
    refused_bytes(b, needle);
  }
}

/* What was refused before the fields: size, magic, CRC, format. */
static void test_control_whole_file(void) {
  const hs_control good = good_control();
  unsigned char b[CONTROL_FILE_BYTES + 1] = {0};
  control_encode(&good, 0, b);
  hs_control out;
  CHECK_OK(control_decode(b, CONTROL_FILE_BYTES, "D", &out));
  CHECK_ST(control_decode(b, CONTROL_FILE_BYTES - 1, "D", &out), HS_ERR_CORRUPT);
  CHECK_CONTAINS(hs_last_error(), "127 bytes, bad magic or CRC");
  CHECK_ST(control_decode(b, CONTROL_FILE_BYTES + 1, "D", &out), HS_ERR_CORRUPT);
  CHECK_ST(control_decode(b, 0, "D", &out), HS_ERR_CORRUPT);
  b[60] ^= 1; /* time_ms: covered by the CRC */
  CHECK_ST(control_decode(b, CONTROL_FILE_BYTES, "D", &out), HS_ERR_CORRUPT);
  CHECK_CONTAINS(hs_last_error(), "bad magic or CRC");
  control_encode(&good, 0, b);
  b[0] = 'X';
  refused_bytes(b, "bad magic or CRC");
  control_encode(&good, 0, b);
  le_put32(b + 8, HS_CONTROL_FORMAT + 1);
  reseal_control(b);
  CHECK_ST(control_decode(b, CONTROL_FILE_BYTES, "D", &out), HS_ERR_CORRUPT);
  CHECK_CONTAINS(hs_last_error(), "control file format 3");
}

/* Through the file: hs_control_read names the path; control_write never
 * writes a file that would be refused, and leaves the old one. */
static void test_control_file(void) {
  char dir[4096], path[4200];
  testdir_make(dir, sizeof dir, "ctlranges");
  snprintf(path, sizeof path, "%s/" HS_CONTROL_FILE, dir);
  hs_control c = good_control();
  c.page_size = 0;
  unsigned char b[CONTROL_FILE_BYTES];
  control_encode(&c, 0, b);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  REQUIRE(fd >= 0);
  REQUIRE(write(fd, b, sizeof b) == (ssize_t)sizeof b);
  close(fd);
  hs_control out;
  CHECK_ST(hs_control_read(dir, &out), HS_ERR_CORRUPT);
  CHECK_CONTAINS(hs_last_error(), path);
  CHECK_CONTAINS(hs_last_error(), "page_size is 0");
  CHECK_EQ(out.page_size, 0);

  hs_control good = good_control();
  CHECK_OK(control_write(dir, &good));
  CHECK_OK(hs_control_read(dir, &out));
  CHECK(same_control(&out, &good));
  unsigned char before[CONTROL_FILE_BYTES], after[CONTROL_FILE_BYTES];
  fd = open(path, O_RDONLY);
  REQUIRE(fd >= 0 && read(fd, before, sizeof before) == (ssize_t)sizeof before);
  close(fd);
  c = good_control();
  c.segment_bytes = 12345;
  CHECK_ST(control_write(dir, &c), HS_ERR_INVALID);
  CHECK_CONTAINS(hs_last_error(), "segment_bytes would be 12345");
  c = good_control();
  c.redo = c.checkpoint + 8;
  CHECK_ST(control_write(dir, &c), HS_ERR_INVALID);
  CHECK_CONTAINS(hs_last_error(), "redo would be");
  fd = open(path, O_RDONLY);
  REQUIRE(fd >= 0 && read(fd, after, sizeof after) == (ssize_t)sizeof after);
  close(fd);
  CHECK(memcmp(before, after, sizeof before) == 0);
  char tmp[4300];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  struct stat sb;
  CHECK(stat(tmp, &sb) != 0);
  testdir_remove(dir);
}

/* ---- segment headers ---------------------------------------------------- */

static void reseal_segment(unsigned char *h) {
  le_put32(h + 40, hs_crc32c(0, h, 40));
}

static void seg_damaged(unsigned char *h, const char *needle) {
  wal_seg_header out;
  CHECK_EQ(wal_seg_header_decode(h, &out), WAL_SEG_DAMAGED);
  CHECK_CONTAINS(out.damage, needle);
  CHECK_EQ(out.segment_bytes, 0);
  CHECK_EQ(out.system_id, 0);
}

static void test_segment_header_fields(void) {
  const uint64_t S = HS_WAL_MIN_SEGMENT, id = 0x0123456789ABCDEFull;
  unsigned char h[WAL_SEG_HEADER];
  wal_seg_header out;
  for (uint64_t seg = HS_WAL_MIN_SEGMENT; seg <= HS_WAL_MAX_SEGMENT; seg *= 2) {
    wal_seg_header_encode(h, id, 5 * seg, seg);
    CHECK_EQ(wal_seg_header_decode(h, &out), WAL_SEG_VALID);
    CHECK_EQ(out.segment_bytes, seg);
    CHECK_EQ(out.start, 5 * seg);
    CHECK_EQ(out.system_id, id);
    CHECK_EQ(out.version, WAL_SEG_VERSION);
  }
  memset(h, 0, sizeof h);
  CHECK_EQ(wal_seg_header_decode(h, &out), WAL_SEG_ZEROS);

  wal_seg_header_encode(h, id, 0, S);
  h[3] ^= 1;
  seg_damaged(h, "bad magic");
  wal_seg_header_encode(h, id, 0, S);
  h[20] ^= 1;
  seg_damaged(h, "fails its CRC");

  static const uint64_t sizes[] = {0, 12345, 32768, 3 * MiB, 2ull << 30, UINT64_MAX};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    wal_seg_header_encode(h, id, 0, sizes[i]); /* encode writes what it is given */
    char needle[64];
    snprintf(needle, sizeof needle, "segment size %" PRIu64 ", not a power of two", sizes[i]);
    seg_damaged(h, needle);
  }
  wal_seg_header_encode(h, 0, 0, S);
  seg_damaged(h, "system id 0");
  wal_seg_header_encode(h, id, S + 8, S);
  seg_damaged(h, "start 10008, not a multiple of its segment size 65536");
  wal_seg_header_encode(h, id, 0, S);
  le_put32(h + 12, 40);
  reseal_segment(h);
  seg_damaged(h, "header size 40, not 48");
  wal_seg_header_encode(h, id, 0, S);
  h[46] = 1; /* outside the CRC */
  seg_damaged(h, "bytes 44-47 hold 00010000, not zeros");

  wal_seg_header_encode(h, id, 0, S);
  le_put32(h + 8, 2);
  le_put64(h + 32, 0); /* another format's fields mean nothing here */
  reseal_segment(h);
  CHECK_EQ(wal_seg_header_decode(h, &out), WAL_SEG_OTHER_VERSION);
  CHECK_EQ(out.version, 2);
  CHECK_EQ(out.segment_bytes, 0);
}

/* A one-segment log whose header is replaced by `h`: what the reader makes
 * of it, from the oldest segment. */
static hs_status read_log_with_header(const char *d, const unsigned char *h, bool *got,
                                      hs_wal_end_kind *kind, char *why, size_t why_len) {
  char path[4200];
  snprintf(path, sizeof path, "%s/%016" PRIX64, d, (uint64_t)0);
  int fd = open(path, O_WRONLY);
  REQUIRE(fd >= 0);
  REQUIRE(pwrite(fd, h, WAL_SEG_HEADER, 0) == (ssize_t)WAL_SEG_HEADER);
  close(fd);
  hs_wal_reader *r;
  REQUIRE(hs_wal_reader_open(d, HS_WAL_MIN_SEGMENT, 0, &r) == HS_OK);
  hs_wal_read_record rec;
  hs_status st = hs_wal_reader_next(r, &rec, got);
  *kind = hs_wal_reader_end_kind(r);
  snprintf(why, why_len, "%s", hs_wal_reader_why_end(r));
  hs_wal_reader_close(r);
  return st;
}

static void test_reader_at_bad_header(void) {
  const uint64_t S = HS_WAL_MIN_SEGMENT;
  char d[4096];
  testdir_make(d, sizeof d, "segranges");
  hs_wal_options o;
  hs_wal_options_init(&o);
  o.dir = d;
  o.segment_bytes = S;
  o.writer_delay_ms = 0;
  hs_wal *w;
  REQUIRE(hs_wal_open(&o, &w) == HS_OK);
  uint64_t id = wal_system_id(w);
  unsigned char payload[100] = {1, 2, 3};
  hs_wal_record rec = {.rmgr = HS_WAL_RMGR_FIRST_USER, .type = 1, .data = payload, .len = 100};
  hs_lsn end = 0;
  for (int i = 0; i < 20; i++) CHECK_OK(hs_wal_insert(w, &rec, &end));
  CHECK_OK(hs_wal_close(w));

  unsigned char h[WAL_SEG_HEADER];
  bool got = true;
  hs_wal_end_kind kind;
  char why[512];
  /* The log's own header reads. */
  wal_seg_header_encode(h, id, 0, S);
  CHECK_OK(read_log_with_header(d, h, &got, &kind, why, sizeof why));
  CHECK(got);
  /* Segment size 0 behind a valid CRC: damage, with the records after it
   * as the evidence — never a division by it. */
  wal_seg_header_encode(h, id, 0, 0);
  CHECK_OK(read_log_with_header(d, h, &got, &kind, why, sizeof why));
  CHECK(!got);
  CHECK_EQ(kind, HS_WAL_END_CORRUPT);
  CHECK_CONTAINS(why, "the segment header is damaged: segment size 0");
  /* Another format version: refused, naming it. */
  wal_seg_header_encode(h, id, 0, S);
  le_put32(h + 8, 9);
  reseal_segment(h);
  got = true;
  CHECK_ST(read_log_with_header(d, h, &got, &kind, why, sizeof why), HS_ERR_INVALID);
  CHECK(!got);
  CHECK_CONTAINS(hs_last_error(), "a log segment of format 9; this hotset reads format 1");
  testdir_remove(d);
}

int main(void) {
  test_control_edges_accepted();
  test_control_fields_refused();
  test_control_whole_file();
  test_control_file();
  test_segment_header_fields();
  test_reader_at_bad_header();
  return check_finish();
}
