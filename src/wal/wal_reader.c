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
 *
 * At a segment's start the reader checks the segment header (wal_format.h):
 * zeros (never written) and a header naming another start (a recycled
 * spare) are the end; a header of another system id ends the log as
 * corruption. Switch records and sync points (the log's own records,
 * wal_format.h) are followed, never handed out.
 *
 * Why the log ended. After an invalid record (or header) the reader looks
 * for valid records past it: the rest of that segment at 8-byte steps (a
 * header whose LSN field is its own position and whose CRC passes), then
 * every record position of every later segment that is this log's (its
 * header valid and naming its own start, or damaged; spares made from
 * recycled segments and segments never written hold none of this log's
 * records). What is found decides:
 *
 *  - a valid record in a later segment proves the log went on past the
 *    invalid one: a segment is fdatasynced whole before the writer leaves
 *    it, so the invalid bytes had been synced, and what failed is damage,
 *    not a crash (HS_WAL_END_CORRUPT). Opening past it would give up every
 *    record after it, acknowledged commits among them: the log refuses to
 *    write there (wal.c) and a pool refuses to open;
 *  - valid records later in the same segment prove damage when what
 *    failed cannot be a torn write (one_sector below: a damaged segment
 *    header, or a record naming its own position that fails within one
 *    sector, or whose CRC passes with a broken chain), or when a sync
 *    point among them claims the log durable past where reading stopped.
 *    The log inserts one (WAL_LOG_SYNCED, payload X) after each fdatasync
 *    that made it durable below X, only once that sync returned: every
 *    byte before X was on disk before the sync point was written, and a
 *    power cut tears only what was not synced. So a failed record at P
 *    with a valid sync point of X > P after it in its segment is damage
 *    (HS_WAL_END_CORRUPT), the why naming the sync point and its claim;
 *  - otherwise they prove nothing: an unsynced write is torn sector by
 *    sector by a power cut, so its later sectors may survive its earlier
 *    ones, and the sync points after it (if any) claim no more than the
 *    syncs before it covered. That is a torn end (HS_WAL_END_TORN), and the
 *    bytes past it are kept as evidence before anything overwrites them
 *    (wal_reader_valid_after);
 *  - an invalid record with nothing valid after it is a torn end, and
 *    zeros, a stale header or record, or no next segment a clean end.
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
  hs_lsn pos, prev;   /* the next record's start; the last record's start */
  hs_lsn last_end;    /* the end of the last record read (or the start) */
  bool first;         /* no record read yet: its prev is not checked */
  bool oldest;        /* start 0: from the oldest segment present */
  uint64_t system_id; /* from the first segment header read, 0 before */
  int fd;
  uint64_t fd_segment;
  unsigned char *buf;
  size_t cap;
  /* Read-ahead: [win_start, win_start + win_len) of the log, in win. A
   * record of a few dozen bytes would otherwise cost two preads. */
  unsigned char *win;
  hs_lsn win_start;
  size_t win_len;
  hs_lsn end, fail_at;
  hs_wal_end_kind kind;
  hs_lsn valid_after; /* a valid record past fail_at in its segment (0: none) */
  char why[640];
};

hs_status hs_wal_reader_open(const char *dir, uint64_t segment_bytes, hs_lsn start,
                             hs_wal_reader **out) {
  if (!out) return hs_fail(HS_ERR_MISUSE, 0, "hs_wal_reader_open: out is NULL");
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
  r->pos = r->last_end = start;
  r->first = true;
  r->oldest = start == 0;
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

hs_wal_end_kind hs_wal_reader_end_kind(const hs_wal_reader *r) {
  return r->kind;
}

const char *hs_wal_end_kind_name(hs_wal_end_kind kind) {
  switch (kind) {
  case HS_WAL_END_CLEAN:
    return "clean";
  case HS_WAL_END_TORN:
    return "torn";
  case HS_WAL_END_CORRUPT:
    return "corrupt";
  }
  return "unknown";
}

hs_lsn wal_reader_prev(const hs_wal_reader *r) {
  return r->first ? 0 : r->prev;
}

hs_lsn wal_reader_fail_at(const hs_wal_reader *r) {
  return r->fail_at;
}

hs_lsn wal_reader_valid_after(const hs_wal_reader *r) {
  return r->valid_after;
}

uint64_t wal_reader_system_id(const hs_wal_reader *r) {
  return r->system_id;
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
      return hs_fail(HS_ERR_IO, errno, "%s: cannot open the log segment: %s", path,
                     strerror(errno));
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
      return hs_fail(HS_ERR_IO, errno, "%s: reading the log at %" PRIX64 " failed: %s", r->dir,
                     lsn + have, strerror(errno));
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

/* ---- looking past the end ---------------------------------------------- */

/* Whether a whole record whose CRC passes starts at `pos` of the segment at
 * `seg` (open as fd): its LSN field is its position, its length fits the
 * segment. Such bytes past an invalid record are the evidence of damage.
 * *synced (may be NULL): the position a valid sync point claims durable
 * (WAL_LOG_SYNCED, wal_format.h), 0 for any other record. */
static hs_status valid_record_at(int fd, const char *path, uint64_t seg, uint64_t segment_bytes,
                                 uint64_t pos, bool *valid, uint64_t *synced) {
  *valid = false;
  if (synced) *synced = 0;
  unsigned char h[WAL_HEADER];
  ssize_t got = pread(fd, h, sizeof h, (off_t)(pos - seg));
  if (got < 0)
    return hs_fail(HS_ERR_IO, errno, "%s: reading the log at %" PRIX64 " failed: %s", path, pos,
                   strerror(errno));
  if (got != (ssize_t)sizeof h || wal_get64(h + 8) != pos) return HS_OK;
  uint32_t total = wal_get32(h);
  if (total < WAL_HEADER || total > segment_bytes - (pos - seg)) return HS_OK;
  unsigned char *b = malloc(total);
  if (!b)
    return hs_fail(HS_ERR_NOMEM, ENOMEM, "no memory to check a log record of %u bytes", total);
  got = pread(fd, b, total, (off_t)(pos - seg));
  if (got == (ssize_t)total) {
    uint32_t crc = hs_crc32c(0, b + 8, total - 8);
    crc = hs_crc32c(crc, b, 4);
    *valid = crc == wal_get32(b + 4);
    uint16_t npages;
    memcpy(&npages, b + 26, 2);
    if (*valid && synced && b[24] == HS_WAL_RMGR_LOG && b[25] == WAL_LOG_SYNCED && npages == 0 &&
        total == WAL_SYNC_POINT_BYTES && wal_get32(b + 28) == WAL_SYNC_POINT_LEN)
      *synced = wal_get64(b + WAL_HEADER);
  }
  free(b);
  return HS_OK;
}

#define SCAN_CHUNK (1u << 20)

/* The first valid record in [from, end of its segment), at 8-byte steps,
 * if any (*found); with want_sync, the first valid sync point there that
 * claims the log durable past sync_past (*synced: its claim).
 * A missing segment holds none. */
static hs_status scan_segment(hs_wal_reader *r, uint64_t from, bool want_sync, uint64_t sync_past,
                              bool *found, uint64_t *at, uint64_t *synced) {
  *found = false;
  uint64_t S = r->segment_bytes, seg = from - from % S;
  char path[4200];
  wal_segment_path(r->dir, seg, path, sizeof path);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return HS_OK;
    return hs_fail(HS_ERR_IO, errno, "%s: cannot open the log segment: %s", path, strerror(errno));
  }
  unsigned char *chunk = malloc(SCAN_CHUNK + WAL_HEADER);
  if (!chunk) {
    close(fd);
    return hs_fail(HS_ERR_NOMEM, ENOMEM, "no memory to scan the log past its end");
  }
  hs_status st = HS_OK;
  for (uint64_t off = from - seg; st == HS_OK && !*found && off + WAL_HEADER <= S;
       off += SCAN_CHUNK) {
    /* A chunk and the 16 bytes past it, so a header at its last step is
     * seen whole enough to compare its LSN field. */
    uint64_t want = S - off < SCAN_CHUNK + 16 ? S - off : SCAN_CHUNK + 16;
    ssize_t got = pread(fd, chunk, (size_t)want, (off_t)off);
    if (got < 0) {
      st = hs_fail(HS_ERR_IO, errno, "%s: reading the log at %" PRIX64 " failed: %s", path,
                   seg + off, strerror(errno));
      break;
    }
    for (uint64_t k = 0; k + 16 <= (uint64_t)got && k < SCAN_CHUNK; k += WAL_ALIGN) {
      uint64_t pos = seg + off + k;
      if (wal_get64(chunk + k + 8) != pos) continue; /* the cheap test first */
      bool valid;
      uint64_t claim = 0;
      st = valid_record_at(fd, path, seg, S, pos, &valid, want_sync ? &claim : NULL);
      if (st != HS_OK) break;
      /* A claim past sync_past, even when that is 0 (the log's very first
       * bytes): a sync point's claim is never 0. */
      if (valid && (!want_sync || claim > sync_past)) {
        *found = true;
        *at = pos;
        if (synced) *synced = claim;
        break;
      }
    }
  }
  free(chunk);
  close(fd);
  return st;
}

/* The first sign of this log in a segment after the one at `seg`: a valid
 * record at any record position of a later segment whose header is this
 * log's and names its own start, or is damaged — or such a header itself
 * (a spare keeps the header of the segment it was, naming another start; a
 * segment made ahead has zeros: neither holds records of this log). */
static hs_status scan_later(hs_wal_reader *r, uint64_t seg, bool *found, uint64_t *at) {
  *found = false;
  uint64_t *starts;
  size_t n;
  hs_status st = wal_segment_list(r->dir, r->segment_bytes, &starts, &n);
  if (st != HS_OK) return st;
  for (size_t i = 0; i < n && st == HS_OK && !*found; i++) {
    if (starts[i] <= seg) continue;
    wal_seg_header_kind kind;
    wal_seg_header h;
    st = wal_segment_header(r->dir, starts[i], &kind, &h);
    if (st != HS_OK) break;
    bool own_header = kind == WAL_SEG_VALID && h.start == starts[i] &&
                      (r->system_id == 0 || h.system_id == r->system_id);
    if (own_header || kind == WAL_SEG_DAMAGED)
      st = scan_segment(r, starts[i] + WAL_SEG_HEADER, false, 0, found, at, NULL);
    /* A header naming its own segment is proof by itself: the log writes
     * it with that segment's first records, after the segment before was
     * synced whole. */
    if (st == HS_OK && !*found && own_header) {
      *found = true;
      *at = starts[i];
    }
  }
  free(starts);
  return st;
}

/* How reading stopped, before looking past it. */
typedef enum stop_how {
  STOP_CLEAN,   /* zeros, a stale header or record, no segment */
  STOP_INVALID, /* a record or header that is not zeros and not valid */
  STOP_UNTORN,  /* ... that no torn write can leave (sector_atomic): damage */
  STOP_FOREIGN  /* a segment of another log */
} stop_how;

/* A power cut tears a write only at sector boundaries: each 512-byte
 * sector of it is either all new or all as it was (what devices promise,
 * and what the power-cut simulator models; larger atomic units only
 * strengthen this). Bytes as they were are zeros (a new segment) or a
 * recycled segment's stale records, which name other positions. So a
 * segment header that is neither zeros nor valid, or a record that names
 * its own position yet fails its checks while lying within one sector,
 * cannot be a torn write: it is damage. With valid records after it, even
 * in its own segment, the log provably went on past it. */
#define SECTOR 512u
static bool one_sector(uint64_t pos, uint64_t len) {
  return len > 0 && pos / SECTOR == (pos + len - 1) / SECTOR;
}

static hs_status stop(hs_wal_reader *r, bool *got, stop_how how, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static hs_status stop(hs_wal_reader *r, bool *got, stop_how how, const char *fmt, ...) {
  char what[300];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  *got = false;
  r->end = r->last_end;
  r->fail_at = r->pos;
  uint64_t S = r->segment_bytes, seg = r->pos - r->pos % S;
  bool in_segment = false, later = false, synced = false;
  uint64_t same_at = 0, later_at = 0, sync_at = 0, sync_claim = 0;
  hs_status st = HS_OK;
  if (how != STOP_FOREIGN) {
    /* Past a segment header that failed, records start after its place. */
    uint64_t from = r->pos % S == 0 ? r->pos + WAL_SEG_HEADER : r->pos + WAL_ALIGN;
    st = scan_segment(r, from, false, 0, &in_segment, &same_at, NULL);
    if (st == HS_OK) st = scan_later(r, seg, &later, &later_at);
    /* Valid records after it in its own segment only: a sync point among
     * them that claims the log durable past it says it was synced. */
    if (st == HS_OK && in_segment && !later && how != STOP_UNTORN)
      st = scan_segment(r, same_at, true, r->pos, &synced, &sync_at, &sync_claim);
    if (st != HS_OK) return st;
  }
  r->valid_after = in_segment ? same_at : 0;
  char same[160] = "";
  if (in_segment)
    snprintf(same, sizeof same,
             "; valid records follow at %" PRIX64 " in the same segment (a write torn before it "
             "was synced, or damage: they are kept before anything overwrites them)",
             same_at);
  if (how == STOP_FOREIGN) {
    r->kind = HS_WAL_END_CORRUPT;
    snprintf(r->why, sizeof r->why, "%s", what);
  } else if (how == STOP_UNTORN && in_segment) {
    r->kind = HS_WAL_END_CORRUPT;
    snprintf(r->why, sizeof r->why,
             "the record at %" PRIX64 " in segment %016" PRIX64 " %s, within one %u-byte sector "
             "(which a crash writes whole or not at all); valid records follow at %" PRIX64
             ": the log is damaged there, not cut short",
             r->pos, seg, what, SECTOR, same_at);
  } else if (later) {
    r->kind = HS_WAL_END_CORRUPT;
    snprintf(r->why, sizeof r->why,
             "the record at %" PRIX64 " in segment %016" PRIX64 " %s; valid records of this log "
             "follow in segment %016" PRIX64 " (at %" PRIX64 "), written after that segment was "
             "synced: the log is damaged there, not cut short",
             r->pos, seg, what, later_at - later_at % S, later_at);
  } else if (synced) {
    r->kind = HS_WAL_END_CORRUPT;
    snprintf(r->why, sizeof r->why,
             "the record at %" PRIX64 " in segment %016" PRIX64 " %s; valid records follow at "
             "%" PRIX64 ", and the sync point at %" PRIX64 " says the log was synced to %" PRIX64
             " before the record at %" PRIX64 " was written (a crash tears only what was not "
             "synced): the log is damaged there, not cut short",
             r->pos, seg, what, same_at, sync_at, sync_claim, sync_at);
  } else if (how == STOP_INVALID || how == STOP_UNTORN || in_segment) {
    r->kind = HS_WAL_END_TORN;
    snprintf(r->why, sizeof r->why, "torn last record at %" PRIX64 ": %s%s", r->pos, what, same);
  } else {
    r->kind = HS_WAL_END_CLEAN;
    snprintf(r->why, sizeof r->why, "clean end at %" PRIX64 ": %s", r->pos, what);
  }
  return HS_OK;
}

/* For a reader from the oldest segment: the first segment whose header is
 * not zeros (a segment made ahead and never written holds no log) and does
 * not name another start (a spare made of a recycled segment, or a second
 * name of a segment that a crash left while an older hotset recycled it:
 * its records are read, if at all, under the name its header gives), or
 * the first segment if none is. A damaged header is read, and ends the log
 * there as damage: never skipped. */
static hs_status find_oldest(hs_wal_reader *r) {
  uint64_t *starts;
  size_t n;
  hs_status st = wal_segment_list(r->dir, r->segment_bytes, &starts, &n);
  if (st != HS_OK) return st;
  for (size_t i = 0; i < n; i++) {
    wal_seg_header_kind kind;
    wal_seg_header h;
    st = wal_segment_header(r->dir, starts[i], &kind, &h);
    if (st != HS_OK) break;
    if (i == 0) r->pos = r->last_end = starts[0];
    if (kind == WAL_SEG_DAMAGED || (kind == WAL_SEG_VALID && h.start == starts[i])) {
      r->pos = r->last_end = starts[i];
      break;
    }
  }
  free(starts);
  return st;
}

hs_status hs_wal_reader_next(hs_wal_reader *r, hs_wal_read_record *rec, bool *got) {
  *got = false;
  if (r->why[0]) return HS_OK; /* already at the end */
  hs_status st;
  if (r->oldest) {
    r->oldest = false;
    if ((st = find_oldest(r)) != HS_OK) return st;
  }
  const uint64_t S = r->segment_bytes;
  bool whole;
  for (;;) {
    uint64_t seg = r->pos - r->pos % S;
    if (r->pos != seg && S - (r->pos - seg) < WAL_HEADER) {
      r->pos = seg + S; /* the gap rule (wal_format.h) */
      continue;
    }
    if (r->pos == seg) {
      unsigned char hb[WAL_SEG_HEADER];
      st = read_log(r, r->pos, hb, WAL_SEG_HEADER, &whole);
      if (st != HS_OK) return st;
      if (!whole) return stop(r, got, STOP_CLEAN, "no segment %016" PRIX64, seg);
      wal_seg_header h;
      switch (wal_seg_header_decode(hb, &h)) {
      case WAL_SEG_ZEROS:
        return stop(r, got, STOP_CLEAN, "zeros (a segment never written)");
      case WAL_SEG_DAMAGED:
        return stop(r, got, STOP_UNTORN,
                    "the segment header is damaged: %s (segment %016" PRIX64 ")", h.damage, seg);
      case WAL_SEG_OTHER_VERSION:
        return hs_fail(HS_ERR_INVALID, 0,
                       "%s/%016" PRIX64 ": a log segment of format %u; this hotset reads format %u",
                       r->dir, seg, h.version, WAL_SEG_VERSION);
      case WAL_SEG_VALID:
        break;
      }
      if (h.start != seg)
        return stop(r, got, STOP_CLEAN,
                    "a recycled segment (its header says it starts at %" PRIX64 ")", h.start);
      if (h.segment_bytes != S)
        return hs_fail(HS_ERR_INVALID, 0,
                       "%s/%016" PRIX64 ": a log segment of format %u with %" PRIu64
                       "-byte segments, read as format %u with %" PRIu64 "-byte segments",
                       r->dir, seg, h.version, h.segment_bytes, WAL_SEG_VERSION, S);
      if (r->system_id && h.system_id != r->system_id)
        return stop(r, got, STOP_FOREIGN,
                    "segment %s/%016" PRIX64 " belongs to another log (system id %016" PRIX64
                    ", this log's %016" PRIX64 ")",
                    r->dir, seg, h.system_id, r->system_id);
      r->system_id = h.system_id;
      r->pos += WAL_SEG_HEADER;
    }
    unsigned char h[WAL_HEADER];
    st = read_log(r, r->pos, h, WAL_HEADER, &whole);
    if (st != HS_OK) return st;
    if (!whole) return stop(r, got, STOP_CLEAN, "no more log (segment short)");
    static const unsigned char zeros[WAL_HEADER];
    if (memcmp(h, zeros, WAL_HEADER) == 0) return stop(r, got, STOP_CLEAN, "zeros");
    uint32_t total = wal_get32(h);
    uint16_t npages;
    memcpy(&npages, h + 26, 2);
    uint32_t len = wal_get32(h + 28);
    if (npages > HS_WAL_MAX_PAGES_PER_RECORD || total < wal_record_total(npages, len) ||
        total > wal_record_total(npages, len) + (uint64_t)npages * HS_PAGE_SIZE_MAX ||
        total > seg + S - r->pos)
      return stop(
          r, got,
          wal_get64(h + 8) == r->pos && one_sector(r->pos, WAL_HEADER) ? STOP_UNTORN : STOP_INVALID,
          "has an impossible length %u (%u pages, %u bytes, %" PRIu64 " left in its segment)",
          total, npages, len, seg + S - r->pos);
    if (wal_get64(h + 8) != r->pos)
      return stop(r, got, STOP_CLEAN, "a stale record (it says it starts at %" PRIX64 ")",
                  wal_get64(h + 8));
    if (!r->first && wal_get64(h + 16) != r->prev)
      return stop(r, got, one_sector(r->pos, total) ? STOP_UNTORN : STOP_INVALID,
                  "breaks the chain (it follows %" PRIX64 ", the record before is at %" PRIX64 ")",
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
    if (!whole) return stop(r, got, STOP_INVALID, "is cut short (its segment is short)");
    uint32_t crc = hs_crc32c(0, r->buf + 8, total - 8);
    crc = hs_crc32c(crc, r->buf, 4);
    if (crc != wal_get32(r->buf + 4))
      return stop(r, got, one_sector(r->pos, total) ? STOP_UNTORN : STOP_INVALID,
                  "fails its CRC (%08X, stored %08X)", crc, wal_get32(r->buf + 4));
    if (h[24] == HS_WAL_RMGR_LOG && h[25] == WAL_LOG_SWITCH) {
      /* The rest of the segment is the switch's: the next record starts
       * after the next segment's header. */
      r->prev = r->pos;
      r->first = false;
      r->pos = r->last_end = seg + S;
      continue;
    }
    if (h[24] == HS_WAL_RMGR_LOG && h[25] == WAL_LOG_SYNCED) {
      /* A sync point: the log's own evidence for stop(), followed. */
      r->prev = r->pos;
      r->first = false;
      r->pos = r->last_end = r->pos + wal_align(total);
      continue;
    }
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
      return stop(r, got, STOP_UNTORN,
                  /* its CRC passed: whole, as written */ "has %u bytes, its parts %" PRIu64, total,
                  wal_record_total(npages, len) + images);
    rec->data = r->buf + WAL_HEADER + (size_t)WAL_PAGE_REF * npages;
    rec->len = len;
    r->prev = r->pos;
    r->first = false;
    r->pos = r->last_end = rec->end;
    *got = true;
    return HS_OK;
  }
}
