/*
 * wal/wal_segment.c — the log's segment files.
 *
 * A segment is created whole before any record goes into it: written with
 * zeros under a temporary name, fsynced, renamed to its name (16 hex digits
 * of its first LSN) and the directory fsynced. So a segment that exists has
 * its full size on disk — later writes into it change no file size, and
 * fdatasync need not touch the inode — and a crash while creating one
 * leaves only a temporary file, never a short segment. PostgreSQL's
 * XLogFileInit does the same.
 */
#include "core/crc32c.h"
#include "core/error.h"
#include "core/sysio.h"
#include "wal/wal_format.h"
#include "wal/wal_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

hs_status wal_sys_fail(hs_status st, int err, const char *fmt, ...) {
  char what[4600];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  if (err == ENOSPC || err == EDQUOT)
    return hs_fail(HS_ERR_NOSPACE, err, "%s: the disk is full (%s)", what, strerror(err));
  return hs_fail(st, err, "%s: %s", what, err ? strerror(err) : "no error number");
}

void wal_seg_header_encode(unsigned char *h, uint64_t system_id, uint64_t start,
                           uint64_t segment_bytes) {
  memset(h, 0, WAL_SEG_HEADER);
  memcpy(h, WAL_SEG_MAGIC, 8);
  wal_put32(h + 8, WAL_SEG_VERSION);
  wal_put32(h + 12, WAL_SEG_HEADER);
  wal_put64(h + 16, system_id);
  wal_put64(h + 24, start);
  wal_put64(h + 32, segment_bytes);
  wal_put32(h + 40, hs_crc32c(0, h, 40));
}

/* Sets the reason a header is damaged; returns WAL_SEG_DAMAGED. */
static wal_seg_header_kind damaged(wal_seg_header *out, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static wal_seg_header_kind damaged(wal_seg_header *out, const char *fmt, ...) {
  uint32_t version = out->version;
  memset(out, 0, sizeof *out);
  out->version = version;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(out->damage, sizeof out->damage, fmt, ap);
  va_end(ap);
  return WAL_SEG_DAMAGED;
}

wal_seg_header_kind wal_seg_header_decode(const unsigned char *h, wal_seg_header *out) {
  static const unsigned char zeros[WAL_SEG_HEADER];
  memset(out, 0, sizeof *out);
  if (memcmp(h, zeros, WAL_SEG_HEADER) == 0) return WAL_SEG_ZEROS;
  if (memcmp(h, WAL_SEG_MAGIC, 8) != 0) return damaged(out, "bad magic");
  if (hs_crc32c(0, h, 40) != wal_get32(h + 40)) return damaged(out, "fails its CRC");
  out->version = wal_get32(h + 8);
  if (out->version != WAL_SEG_VERSION) return WAL_SEG_OTHER_VERSION;
  uint32_t size = wal_get32(h + 12), reserved = wal_get32(h + 44);
  uint64_t id = wal_get64(h + 16), start = wal_get64(h + 24), S = wal_get64(h + 32);
  if (size != WAL_SEG_HEADER)
    return damaged(out, "header size %" PRIu32 ", not %u", size, WAL_SEG_HEADER);
  if (reserved != 0) return damaged(out, "bytes 44-47 hold %08" PRIX32 ", not zeros", reserved);
  if (id == 0) return damaged(out, "system id 0");
  if (S < HS_WAL_MIN_SEGMENT || S > HS_WAL_MAX_SEGMENT || (S & (S - 1)) != 0)
    return damaged(out, "segment size %" PRIu64 ", not a power of two from %u to %llu", S,
                   HS_WAL_MIN_SEGMENT, (unsigned long long)HS_WAL_MAX_SEGMENT);
  if (start % S != 0)
    return damaged(out, "start %" PRIX64 ", not a multiple of its segment size %" PRIu64, start, S);
  out->system_id = id;
  out->start = start;
  out->segment_bytes = S;
  return WAL_SEG_VALID;
}

hs_status wal_segment_header(const char *dir, uint64_t start, wal_seg_header_kind *kind,
                             wal_seg_header *h) {
  /* Set on every path: gcc -O3 cannot see that the callers stop on failure. */
  *kind = WAL_SEG_ZEROS;
  memset(h, 0, sizeof *h);
  char path[4200];
  wal_segment_path(dir, start, path, sizeof path);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return wal_sys_fail(HS_ERR_IO, errno, "%s: cannot open the log segment", path);
  unsigned char hb[WAL_SEG_HEADER];
  ssize_t got = pread(fd, hb, sizeof hb, 0);
  int err = errno;
  close(fd);
  if (got < 0)
    return wal_sys_fail(HS_ERR_IO, err, "%s: cannot read the log segment's header", path);
  if (got == (ssize_t)sizeof hb) *kind = wal_seg_header_decode(hb, h);
  return HS_OK;
}

hs_status wal_sync_older_segments(hs_wal *w, uint64_t pos) {
  uint64_t *starts;
  size_t n;
  hs_status st = wal_segment_list(w->dir, w->segment_bytes, &starts, &n);
  if (st != HS_OK) return st;
  uint64_t seg = pos - pos % w->segment_bytes;
  for (size_t i = 0; i < n && st == HS_OK && starts[i] < seg; i++) {
    char path[4200];
    wal_segment_path(w->dir, starts[i], path, sizeof path);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      st = wal_sys_fail(HS_ERR_IO, errno, "%s: cannot open the log segment to sync it", path);
      break;
    }
    if (sys_fsync(fd) != 0)
      st = wal_sys_fail(HS_ERR_IO, errno, "%s: fsync of the log segment failed", path);
    close(fd);
  }
  free(starts);
  if (st == HS_OK && n) st = wal_sync_dir(w->dir);
  if (st == HS_OK) w->older_synced = true;
  return st;
}

/* Zeros written at a time while preallocating. */
#define ZERO_CHUNK (1u << 20)

void wal_segment_path(const char *dir, uint64_t segment_start, char *out, size_t len) {
  snprintf(out, len, "%s/%016" PRIX64, dir, segment_start);
}

hs_status wal_sync_dir(const char *dir) {
  int fd = open(dir, O_RDONLY | O_DIRECTORY);
  if (fd < 0)
    return wal_sys_fail(HS_ERR_IO, errno, "%s: cannot open the directory to sync it", dir);
  int rc = sys_fsync(fd);
  int err = errno;
  close(fd);
  if (rc != 0) return wal_sys_fail(HS_ERR_IO, err, "%s: fsync of the directory failed", dir);
  return HS_OK;
}

hs_status wal_write_zeros(hs_wal *w, int fd, uint64_t from, uint64_t to, const char *what) {
  size_t chunk = to - from < ZERO_CHUNK ? (size_t)(to - from) : ZERO_CHUNK;
  void *zeros = calloc(1, chunk ? chunk : 1);
  if (!zeros) return hs_fail(HS_ERR_NOMEM, ENOMEM, "no memory to write zeros into %s", what);
  hs_status st = HS_OK;
  for (uint64_t off = from; st == HS_OK && off < to;) {
    size_t k = to - off < chunk ? (size_t)(to - off) : chunk;
    ssize_t n = wal_pwrite(w, fd, zeros, k, (off_t)off);
    if (n != (ssize_t)k)
      st = wal_sys_fail(HS_ERR_IO, n < 0 ? errno : ENOSPC,
                        "%s: writing zeros at %" PRIu64 " failed", what, off);
    off += k;
  }
  free(zeros);
  /* fsync, not fdatasync: a new segment's zeros are its growth from 0
   * bytes, and only fsync is promised to make a file's size durable (the
   * later fdatasyncs of records then change no size). PostgreSQL's
   * XLogFileInit fsyncs here too. A power cut that kept the name but not
   * the size would leave a short segment under acknowledged commits. */
  if (st == HS_OK && wal_fsync(w, fd) != 0)
    st = wal_sys_fail(HS_ERR_IO, errno, "%s: fsync after writing zeros failed", what);
  return st;
}

static hs_status create_segment(hs_wal *w, const char *path) {
  char tmp[4300];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  int fd = sys_open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return wal_sys_fail(HS_ERR_IO, errno, "%s: cannot create a log segment", tmp);
  char what[4400];
  snprintf(what, sizeof what, "%s (a new log segment)", tmp);
  hs_status st = wal_write_zeros(w, fd, 0, w->segment_bytes, what);
  close(fd);
  if (st == HS_OK && sys_rename(tmp, path) != 0)
    st = wal_sys_fail(HS_ERR_IO, errno, "%s: cannot rename the new log segment to %s", tmp, path);
  if (st == HS_OK) st = wal_sync_dir(w->dir);
  if (st != HS_OK) {
    sys_unlink(tmp);
    return st;
  }
  atomic_fetch_add_explicit(&w->st_segments, 1, memory_order_relaxed);
  return HS_OK;
}

hs_status wal_segment_open_write(hs_wal *w, uint64_t start, int *fd) {
  char path[4200];
  wal_segment_path(w->dir, start, path, sizeof path);
  int f = open(path, O_WRONLY | O_CLOEXEC);
  if (f < 0 && errno == ENOENT) {
    hs_status st = create_segment(w, path);
    if (st != HS_OK) return st;
    f = open(path, O_WRONLY | O_CLOEXEC);
  }
  if (f < 0) return wal_sys_fail(HS_ERR_IO, errno, "%s: cannot open the log segment", path);
  *fd = f;
  return HS_OK;
}

static int start_order(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

hs_status wal_segment_list(const char *dir, uint64_t segment_bytes, uint64_t **starts, size_t *n) {
  *starts = NULL;
  *n = 0;
  DIR *d = opendir(dir);
  if (!d) return wal_sys_fail(HS_ERR_IO, errno, "%s: cannot list the log directory", dir);
  size_t cap = 0;
  hs_status st = HS_OK;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    const char *name = e->d_name;
    if (strlen(name) != WAL_SEGMENT_NAME_LEN ||
        strspn(name, "0123456789ABCDEF") != WAL_SEGMENT_NAME_LEN)
      continue; /* temporary files of a creation a crash interrupted, and anything else */
    uint64_t start = strtoull(name, NULL, 16);
    if (start % segment_bytes != 0) {
      st = hs_fail(HS_ERR_INVALID, 0,
                   "%s/%s: a log segment whose first LSN is no multiple of the segment size "
                   "%" PRIu64 " (the log was written with another segment size?)",
                   dir, name, segment_bytes);
      break;
    }
    if (*n == cap) {
      cap = cap ? cap * 2 : 16;
      uint64_t *more = realloc(*starts, cap * sizeof *more);
      if (!more) {
        st = hs_fail(HS_ERR_NOMEM, ENOMEM, "no memory listing %s", dir);
        break;
      }
      *starts = more;
    }
    (*starts)[(*n)++] = start;
  }
  closedir(d);
  if (st != HS_OK) {
    free(*starts);
    *starts = NULL;
    *n = 0;
    return st;
  }
  if (*n) qsort(*starts, *n, sizeof **starts, start_order);
  return HS_OK;
}
