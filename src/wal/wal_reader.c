/*
 * wal/wal_reader.c — reading the log back, record by record, to its end.
 *
 * The end of a log is not written anywhere: it is the first place where no
 * whole, valid record starts. A record is taken only if its header is not
 * zeros (a preallocated segment never written), its length is sane, it says
 * it starts where it is read (a stale record of a reused segment, or bytes
 * read from the wrong place, do not), it names the record before it as its
 * predecessor (the chain), and its CRC-32C matches. Anything else ends the
 * log there, with a reason the caller can report — a crash mid-write leaves
 * exactly such a torn last record. A missing segment file ends it too. Only
 * a failed read (EIO) is an error.
 */
#include "core/crc32c.h"
#include "core/error.h"
#include "wal/wal_format.h"
#include "wal/wal_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct hs_wal_reader {
  char *dir;
  uint64_t segment_bytes;
  hs_lsn pos, prev; /* the next record's start; the last record's start */
  bool first;       /* no record read yet: its prev is not checked */
  int fd;
  uint64_t fd_segment;
  unsigned char *buf;
  size_t cap;
  /* Read-ahead: [win_start, win_start + win_len) of the log, in win. A
   * record of a few dozen bytes would otherwise cost two preads. */
  unsigned char *win;
  hs_lsn win_start;
  size_t win_len;
  hs_lsn end;
  char why[200];
};

hs_status hs_wal_reader_open(const char *dir, uint64_t segment_bytes, hs_lsn start,
                             hs_wal_reader **out) {
  *out = NULL;
  if (!dir || segment_bytes < HS_WAL_MIN_SEGMENT || segment_bytes > HS_WAL_MAX_SEGMENT ||
      (segment_bytes & (segment_bytes - 1)) || start % WAL_ALIGN)
    return hs_fail(HS_ERR_INVALID, 0,
                   "hs_wal_reader_open: a directory, a power-of-two segment size and an aligned "
                   "start are needed (start %" PRIX64 ")",
                   start);
  hs_wal_reader *r = calloc(1, sizeof *r);
  if (r) r->dir = strdup(dir);
  if (!r || !r->dir) {
    free(r);
    return hs_fail(HS_ERR_NOMEM, ENOMEM, "no memory for a log reader");
  }
  r->segment_bytes = segment_bytes;
  r->pos = start;
  r->first = true;
  r->fd = -1;
  *out = r;
  return HS_OK;
}

void hs_wal_reader_close(hs_wal_reader *r) {
  if (!r) return;
  if (r->fd >= 0) close(r->fd);
  free(r->buf);
  free(r->win);
  free(r->dir);
  free(r);
}

hs_lsn hs_wal_reader_end(const hs_wal_reader *r) {
  return r->end;
}

const char *hs_wal_reader_why_end(const hs_wal_reader *r) {
  return r->why;
}

#define READ_AHEAD (1u << 20)

/* Fills the window with the log from lsn on, up to READ_AHEAD bytes and
 * never past the end of lsn's segment. win_len 0: the segment is missing or
 * ends before lsn. */
static hs_status fill_window(hs_wal_reader *r, hs_lsn lsn) {
  r->win_start = lsn;
  r->win_len = 0;
  uint64_t seg = lsn - lsn % r->segment_bytes;
  if (r->fd < 0 || r->fd_segment != seg) {
    if (r->fd >= 0) close(r->fd);
    char path[4200];
    wal_segment_path(r->dir, seg, path, sizeof path);
    r->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (r->fd < 0) {
      if (errno == ENOENT) return HS_OK;
      return hs_fail(HS_ERR_IO, errno, "%s: cannot open the log segment", path);
    }
    r->fd_segment = seg;
  }
  if (!r->win && !(r->win = malloc(READ_AHEAD)))
    return hs_fail(HS_ERR_NOMEM, ENOMEM, "no memory for the log reader's window");
  uint64_t in_seg = seg + r->segment_bytes - lsn;
  size_t want = in_seg < READ_AHEAD ? (size_t)in_seg : READ_AHEAD;
  size_t have = 0;
  while (have < want) {
    ssize_t got = pread(r->fd, r->win + have, want - have, (off_t)(lsn - seg + have));
    if (got < 0) {
      if (errno == EINTR) continue;
      return hs_fail(HS_ERR_IO, errno, "%s: reading the log at %" PRIX64 " failed", r->dir,
                     lsn + have);
    }
    if (got == 0) break; /* a short segment */
    have += (size_t)got;
  }
  r->win_len = have;
  return HS_OK;
}

/* Reads n bytes of the log at lsn into dst, through the window. *whole =
 * false (not an error) when a segment is missing or shorter than it should
 * be. */
static hs_status read_log(hs_wal_reader *r, hs_lsn lsn, void *dst, size_t n, bool *whole) {
  *whole = true;
  unsigned char *p = dst;
  while (n > 0) {
    if (lsn < r->win_start || lsn >= r->win_start + r->win_len) {
      hs_status st = fill_window(r, lsn);
      if (st != HS_OK) return st;
      if (r->win_len == 0) {
        *whole = false;
        return HS_OK;
      }
    }
    size_t off = (size_t)(lsn - r->win_start);
    size_t take = r->win_len - off < n ? r->win_len - off : n;
    memcpy(p, r->win + off, take);
    p += take;
    lsn += take;
    n -= take;
  }
  return HS_OK;
}

static hs_status stop(hs_wal_reader *r, bool *got, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static hs_status stop(hs_wal_reader *r, bool *got, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->why, sizeof r->why, fmt, ap);
  va_end(ap);
  r->end = r->pos;
  *got = false;
  return HS_OK;
}

hs_status hs_wal_reader_next(hs_wal_reader *r, hs_wal_read_record *rec, bool *got) {
  *got = false;
  if (r->why[0]) return HS_OK; /* already at the end */
  unsigned char h[WAL_HEADER];
  bool whole;
  hs_status st = read_log(r, r->pos, h, WAL_HEADER, &whole);
  if (st != HS_OK) return st;
  if (!whole) return stop(r, got, "no more log at %" PRIX64 " (segment missing or short)", r->pos);
  static const unsigned char zeros[WAL_HEADER];
  if (memcmp(h, zeros, WAL_HEADER) == 0) return stop(r, got, "zeros at %" PRIX64, r->pos);
  uint32_t total = wal_get32(h);
  uint16_t npages;
  memcpy(&npages, h + 26, 2);
  uint32_t len = wal_get32(h + 28);
  if (npages > HS_WAL_MAX_PAGES_PER_RECORD || total < wal_record_total(npages, len) ||
      total > wal_record_total(npages, len) + (uint64_t)npages * HS_PAGE_SIZE_MAX ||
      total > r->segment_bytes)
    return stop(r, got, "a record of impossible length %u (%u pages, %u bytes) at %" PRIX64, total,
                npages, len, r->pos);
  if (wal_get64(h + 8) != r->pos)
    return stop(r, got, "the record at %" PRIX64 " says it starts at %" PRIX64 " (a stale one)",
                r->pos, wal_get64(h + 8));
  if (!r->first && wal_get64(h + 16) != r->prev)
    return stop(r, got, "the record at %" PRIX64 " follows %" PRIX64 ", not %" PRIX64, r->pos,
                wal_get64(h + 16), r->prev);
  if (r->cap < total) {
    unsigned char *bigger = realloc(r->buf, total);
    if (!bigger)
      return hs_fail(HS_ERR_NOMEM, ENOMEM, "no memory for a log record of %u bytes", total);
    r->buf = bigger;
    r->cap = total;
  }
  st = read_log(r, r->pos, r->buf, total, &whole);
  if (st != HS_OK) return st;
  if (!whole) return stop(r, got, "the record at %" PRIX64 " is cut short", r->pos);
  uint32_t crc = hs_crc32c(0, r->buf + 8, total - 8);
  crc = hs_crc32c(crc, r->buf, 4);
  if (crc != wal_get32(r->buf + 4))
    return stop(r, got, "the record at %" PRIX64 " fails its CRC (%08X, stored %08X)", r->pos, crc,
                wal_get32(r->buf + 4));

  rec->lsn = r->pos;
  rec->prev = wal_get64(h + 16);
  rec->end = r->pos + wal_align(total);
  rec->rmgr = h[24];
  rec->type = h[25];
  rec->npages = npages;
  const unsigned char *ref = r->buf + WAL_HEADER;
  const unsigned char *image = r->buf + wal_record_total(npages, len);
  uint64_t images = 0;
  for (uint16_t i = 0; i < npages; i++, ref += WAL_PAGE_REF) {
    rec->pages[i].rel = wal_get32(ref);
    rec->pages[i].block = wal_get32(ref + 4);
    rec->pages[i].fork = (hs_fork)ref[8];
    uint32_t image_len = wal_ref_image_len(ref);
    rec->images[i] = image_len ? image + images : NULL;
    rec->image_len[i] = image_len;
    images += image_len;
  }
  if (wal_record_total(npages, len) + images != total)
    return stop(r, got, "the record at %" PRIX64 " has %u bytes, its parts %" PRIu64, r->pos, total,
                wal_record_total(npages, len) + images);
  rec->data = r->buf + WAL_HEADER + (size_t)WAL_PAGE_REF * npages;
  rec->len = len;
  r->prev = r->pos;
  r->first = false;
  r->pos = rec->end;
  *got = true;
  return HS_OK;
}
