/*
 * fuzz/fuzz_segment_header.c — libFuzzer harness for a log segment's header
 * (wal/wal_format.h: wal_seg_header_decode) and for reading a one-segment
 * log that begins with it (hs_wal_reader, hs_wal_find_end).
 *
 * An input is one mode byte, then the segment's first bytes (the rest of
 * its HS_WAL_MIN_SEGMENT bytes are zeros). The mode's bit 0 reseals the
 * header's CRC-32C and bit 1 each record's along the length chain from the
 * first record, so that the fuzzer reaches the checks behind the CRCs.
 * The segment is written over 0000000000000000 in a scratch directory made
 * once per process (TMPDIR, or /tmp). Besides the sanitizers' findings (a segment size of 0
 * divided by), the harness aborts when a promise breaks:
 *
 *   - all-zero header bytes, and only those, are WAL_SEG_ZEROS;
 *   - WAL_SEG_VALID fields are in range (system id non-zero, a power-of-two
 *     segment size from HS_WAL_MIN_SEGMENT to HS_WAL_MAX_SEGMENT, the
 *     start a multiple of it) and encode back to the same 48 bytes;
 *   - WAL_SEG_DAMAGED says why and sets no field; WAL_SEG_OTHER_VERSION
 *     sets only a version other than WAL_SEG_VERSION;
 *   - the reader hands out records in increasing, 8-aligned LSNs within the
 *     segment, past its header; it ends (at most one call per 8 bytes)
 *     inside the segment with a reason, and stays ended; its only failure
 *     is HS_ERR_INVALID (a header of another format or segment size);
 *   - hs_wal_find_end agrees: the same end, or a refusal.
 *
 * Build (clang only) and run: see fuzz/README.md.
 */
#include "core/crc32c.h"
#include "core/endian.h"
#include "core/error.h"
#include "hotset/wal.h"
#include "wal/wal_format.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SEGMENT HS_WAL_MIN_SEGMENT

static char dir[4096], path[4200];
static int segment_fd = -1;
static unsigned char segment[SEGMENT];

static void check(int ok, const char *what) {
  if (!ok) {
    fprintf(stderr, "fuzz_segment_header: broken promise: %s (%s)\n", what, hs_last_error());
    abort();
  }
}

static void remove_scratch(void) {
  unlink(path);
  rmdir(dir);
}

static void make_scratch(void) {
  const char *tmp = getenv("TMPDIR");
  snprintf(dir, sizeof dir, "%s/hotset-fuzz-segment-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  check(mkdtemp(dir) != NULL, "mkdtemp");
  snprintf(path, sizeof path, "%s/%016X", dir, 0u);
  segment_fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  check(segment_fd >= 0, "creating the segment");
  atexit(remove_scratch);
}

/* Writes the right CRC into every record along the length chain. */
static void reseal_records(unsigned char *s) {
  for (uint64_t pos = WAL_SEG_HEADER; SEGMENT - pos >= WAL_HEADER;) {
    uint32_t total = le_get32(s + pos);
    if (total < WAL_HEADER || total > SEGMENT - pos) break;
    uint32_t crc = hs_crc32c(0, s + pos + 8, total - 8);
    le_put32(s + pos + 4, hs_crc32c(crc, s + pos, 4));
    pos += wal_align(total);
  }
}

static void check_header(const unsigned char *h) {
  static const unsigned char zeros[WAL_SEG_HEADER];
  wal_seg_header out;
  memset(&out, 0x5A, sizeof out);
  wal_seg_header_kind kind = wal_seg_header_decode(h, &out);
  check((kind == WAL_SEG_ZEROS) == (memcmp(h, zeros, WAL_SEG_HEADER) == 0),
        "zeros, and only zeros, are WAL_SEG_ZEROS");
  switch (kind) {
  case WAL_SEG_ZEROS:
    break;
  case WAL_SEG_DAMAGED:
    check(out.damage[0] != 0 && memchr(out.damage, 0, sizeof out.damage) != NULL,
          "a damaged header without a reason");
    check(out.system_id == 0 && out.start == 0 && out.segment_bytes == 0,
          "a damaged header with fields set");
    break;
  case WAL_SEG_OTHER_VERSION:
    check(out.version != WAL_SEG_VERSION, "another version that is this one");
    check(out.system_id == 0 && out.start == 0 && out.segment_bytes == 0,
          "another version's fields set");
    break;
  case WAL_SEG_VALID: {
    uint64_t S = out.segment_bytes;
    check(out.version == WAL_SEG_VERSION, "a valid header of another version");
    check(S >= HS_WAL_MIN_SEGMENT && S <= HS_WAL_MAX_SEGMENT && (S & (S - 1)) == 0,
          "a valid header with a segment size out of range");
    check(out.start % S == 0, "a valid header whose start is no multiple of its size");
    check(out.system_id != 0, "a valid header with system id 0");
    unsigned char again[WAL_SEG_HEADER];
    wal_seg_header_encode(again, out.system_id, out.start, S);
    check(memcmp(again, h, WAL_SEG_HEADER) == 0, "a valid header that does not encode back");
    break;
  }
  default:
    check(0, "an unknown outcome");
  }
}

static void check_reader(void) {
  hs_wal_reader *r;
  check(hs_wal_reader_open(dir, SEGMENT, 0, &r) == HS_OK, "hs_wal_reader_open");
  hs_wal_read_record rec;
  bool got = false;
  hs_status st = HS_OK;
  hs_lsn last = 0;
  size_t records = 0;
  for (size_t calls = 0; calls <= SEGMENT / WAL_ALIGN + 1; calls++) {
    st = hs_wal_reader_next(r, &rec, &got);
    if (st != HS_OK || !got) break;
    check(rec.lsn >= WAL_SEG_HEADER && rec.lsn % WAL_ALIGN == 0, "a record LSN out of place");
    check(records == 0 || rec.lsn > last, "record LSNs that do not increase");
    check(rec.end > rec.lsn && rec.end <= SEGMENT, "a record that ends outside the segment");
    check(rec.npages <= HS_WAL_MAX_PAGES_PER_RECORD, "too many pages");
    check(rec.len == 0 || rec.data != NULL, "a payload without data");
    last = rec.lsn;
    records++;
  }
  check(st == HS_OK || st == HS_ERR_INVALID, "a reader failure other than HS_ERR_INVALID");
  hs_lsn end = 0;
  if (st == HS_OK) {
    check(!got, "the reader never ends");
    end = hs_wal_reader_end(r);
    check(end <= SEGMENT && end % WAL_ALIGN == 0, "an end outside the segment");
    check(hs_wal_reader_why_end(r)[0] != 0, "an end without a reason");
    check(strcmp(hs_wal_end_kind_name(hs_wal_reader_end_kind(r)), "unknown") != 0,
          "an unknown end kind");
    check(hs_wal_reader_next(r, &rec, &got) == HS_OK && !got, "the end is not sticky");
  }
  hs_wal_reader_close(r);
  hs_lsn found = 0;
  hs_status fst = hs_wal_find_end(dir, SEGMENT, &found);
  check(fst == HS_OK || fst == HS_ERR_INVALID || fst == HS_ERR_CORRUPT,
        "hs_wal_find_end failed otherwise");
  if (st == HS_OK && fst == HS_OK) check(found == end, "hs_wal_find_end finds another end");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  if (!dir[0]) make_scratch();
  hs_clear_error(); /* a broken promise prints this input's message, or none */
  unsigned mode = data[0];
  size_t n = size - 1 < SEGMENT ? size - 1 : SEGMENT;
  memset(segment, 0, sizeof segment);
  memcpy(segment, data + 1, n);
  if (mode & 1) le_put32(segment + 40, hs_crc32c(0, segment, 40));
  if (mode & 2) reseal_records(segment);
  check_header(segment);

  /* Written over in place: truncating and growing the file each time
   * would cost more than reading it. */
  check(pwrite(segment_fd, segment, sizeof segment, 0) == (ssize_t)sizeof segment,
        "writing the segment");
  check_reader();
  return 0;
}
