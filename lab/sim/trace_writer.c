/*
 * sim/trace_writer.c — writing traces, plain or zstd: oraclegeneral, csv
 * or txt, as the file's name says.
 *
 * The format follows the name because the reader goes by the name first:
 * oracleGeneral bytes in a file called x.csv would be refused as bad CSV
 * by the very tool that wrote them. Names that say nothing get
 * oraclegeneral, the one format that keeps every field.
 *
 * Records are encoded byte by byte (little-endian whatever the host), or
 * as decimal text, into a 1 MiB buffer, which goes out with write() when
 * full: one system call per ~43,000 binary records. With a name ending in .zst the buffer goes
 * through ZSTD_compressStream2 instead, at zstd's default level (fast, and traces compress
 * several-fold), with the frame checksum on so that a damaged file is caught when read rather than
 * simulated.
 *
 * Write errors are sticky and reported by the write that hits them or at
 * the latest by hs_trace_writer_close, which flushes and also checks
 * close() (network file systems report deferred errors there). There is no
 * fsync: a trace is regenerable, and the caller can sync if it cares. A
 * failed writer leaves its partial file behind, for the caller to inspect
 * or remove.
 */
#include "core/endian.h"
#include "core/error.h"
#include "sim/trace_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define WRITER_BUF_SIZE (1u << 20)
#define OG_SIZE         24
/* The longest record in any format: a csv row of four 20-digit numbers. */
#define MAX_RECORD 96

struct hs_trace_writer {
  char *path;
  hs_trace_format format;
  int fd;
  unsigned char *buf;
  size_t len;
  ZSTD_CCtx *cctx; /* NULL for a plain file */
  unsigned char *zbuf;
  size_t zcap;
  hs_status failed;
  int failed_errno;
  char failed_msg[512];
};

static hs_status writer_fail(hs_trace_writer *w, hs_status st, int err, const char *what) {
  hs_fail(st, err, "%s: %s", w->path, what);
  w->failed = st;
  w->failed_errno = err;
  snprintf(w->failed_msg, sizeof w->failed_msg, "%s", hs_last_error());
  return st;
}

static hs_status write_all(hs_trace_writer *w, const unsigned char *p, size_t n) {
  while (n > 0) {
    ssize_t r = write(w->fd, p, n);
    if (r < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      char what[160];
      snprintf(what, sizeof what, "write failed: %s", strerror(e));
      return writer_fail(w, hs_status_from_errno(e), e, what);
    }
    p += r;
    n -= (size_t)r;
  }
  return HS_OK;
}

/* Writes out the buffer; `end` also finishes the zstd frame. */
static hs_status flush(hs_trace_writer *w, bool end) {
  if (!w->cctx) {
    hs_status st = write_all(w, w->buf, w->len);
    w->len = 0;
    return st;
  }
  ZSTD_inBuffer in = {w->buf, w->len, 0};
  ZSTD_EndDirective mode = end ? ZSTD_e_end : ZSTD_e_continue;
  for (;;) {
    ZSTD_outBuffer out = {w->zbuf, w->zcap, 0};
    size_t left = ZSTD_compressStream2(w->cctx, &out, &in, mode);
    if (ZSTD_isError(left)) {
      char what[160];
      snprintf(what, sizeof what, "zstd: %s", ZSTD_getErrorName(left));
      return writer_fail(w, HS_ERR_IO, 0, what);
    }
    hs_status st = write_all(w, w->zbuf, out.pos);
    if (st != HS_OK) return st;
    /* continue: done once the input is taken; end: once zstd says 0. */
    if (end ? left == 0 : in.pos == in.size) break;
  }
  w->len = 0;
  return HS_OK;
}

static void writer_free(hs_trace_writer *w) {
  if (w->fd >= 0) close(w->fd);
  ZSTD_freeCCtx(w->cctx);
  free(w->zbuf);
  free(w->buf);
  free(w->path);
  free(w);
}

hs_status hs_trace_writer_open(const char *path, hs_trace_writer **out) {
  if (!out) return hs_fail(HS_ERR_INVALID, 0, "hs_trace_writer_open: no result pointer");
  *out = NULL;
  if (!path || !*path)
    return hs_fail(HS_ERR_INVALID, 0, "hs_trace_writer_open: no trace path given");
  hs_trace_writer *w = calloc(1, sizeof *w);
  if (!w) return hs_fail(HS_ERR_NOMEM, ENOMEM, "%s: out of memory", path);
  w->fd = -1;
  w->path = strdup(path);
  w->buf = malloc(WRITER_BUF_SIZE);
  if (!w->path || !w->buf) {
    writer_free(w);
    return hs_fail(HS_ERR_NOMEM, ENOMEM, "%s: out of memory", path);
  }
  hs_trace_format named = HS_TRACE_AUTO;
  const char *suffix = "";
  bool zst;
  if (!trace_format_from_name(path, &named, &suffix, &zst)) named = HS_TRACE_ORACLEGENERAL;
  if (named == HS_TRACE_VSCSI) {
    writer_free(w);
    return hs_fail(HS_ERR_INVALID, 0,
                   "%s: the name says vscsi, which hotset does not write (name the file "
                   ".oracleGeneral, .bin, .csv or .txt, maybe with .zst)",
                   path);
  }
  w->format = named;
  size_t len = strlen(path);
  if (len > 4 && strcasecmp(path + len - 4, ".zst") == 0) {
    w->cctx = ZSTD_createCCtx();
    w->zcap = ZSTD_CStreamOutSize();
    w->zbuf = malloc(w->zcap);
    if (!w->cctx || !w->zbuf) {
      writer_free(w);
      return hs_fail(HS_ERR_NOMEM, ENOMEM, "%s: out of memory for zstd compression", path);
    }
    size_t r = ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_checksumFlag, 1);
    if (ZSTD_isError(r)) {
      writer_free(w);
      return hs_fail(HS_ERR_IO, 0, "%s: zstd: %s", path, ZSTD_getErrorName(r));
    }
  }
  w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (w->fd < 0) {
    int e = errno;
    writer_free(w);
    return hs_fail(hs_status_from_errno(e), e, "%s: cannot create: %s", path, strerror(e));
  }
  if (w->format == HS_TRACE_CSV) {
    static const char header[] = "time,obj_id,obj_size,next_access_vtime\n";
    memcpy(w->buf, header, sizeof header - 1);
    w->len = sizeof header - 1;
  }
  *out = w;
  return HS_OK;
}

hs_trace_format hs_trace_writer_format(const hs_trace_writer *w) {
  return w->format;
}

/* Writes v in decimal at p; returns the end. */
static unsigned char *put_decimal(unsigned char *p, uint64_t v) {
  unsigned char digits[20];
  size_t n = 0;
  do {
    digits[n++] = (unsigned char)('0' + v % 10);
    v /= 10;
  } while (v);
  while (n) *p++ = digits[--n];
  return p;
}

hs_status hs_trace_write(hs_trace_writer *w, uint32_t time, uint64_t id, uint32_t size,
                         int64_t next) {
  if (!w) return hs_fail(HS_ERR_INVALID, 0, "hs_trace_write: no writer");
  if (w->failed) return hs_fail(w->failed, w->failed_errno, "%s", w->failed_msg);
  if (w->len + MAX_RECORD > WRITER_BUF_SIZE) {
    hs_status st = flush(w, false);
    if (st != HS_OK) return st;
  }
  unsigned char *p = w->buf + w->len;
  switch (w->format) {
  case HS_TRACE_CSV:
    p = put_decimal(p, time);
    *p++ = ',';
    p = put_decimal(p, id);
    *p++ = ',';
    p = put_decimal(p, size);
    *p++ = ',';
    if (next < 0) {
      *p++ = '-';
      p = put_decimal(p, (uint64_t)0 - (uint64_t)next); /* also right for INT64_MIN */
    } else {
      p = put_decimal(p, (uint64_t)next);
    }
    *p++ = '\n';
    break;
  case HS_TRACE_TXT:
    p = put_decimal(p, id);
    *p++ = '\n';
    break;
  default:
    le_put32(p, time);
    le_put64(p + 4, id);
    le_put32(p + 12, size);
    le_put64(p + 16, (uint64_t)next);
    p += OG_SIZE;
    break;
  }
  w->len = (size_t)(p - w->buf);
  return HS_OK;
}

hs_status hs_trace_writer_close(hs_trace_writer *w) {
  if (!w) return HS_OK;
  hs_status st =
      w->failed ? hs_fail(w->failed, w->failed_errno, "%s", w->failed_msg) : flush(w, true);
  int fd = w->fd;
  w->fd = -1;
  if (close(fd) != 0 && st == HS_OK) {
    int e = errno;
    st = hs_fail(hs_status_from_errno(e), e, "%s: close failed: %s", w->path, strerror(e));
  }
  writer_free(w);
  return st;
}
