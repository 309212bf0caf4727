/*
 * sim/trace_source.c — a trace file as a window of decoded bytes.
 *
 * Plain files are read with read() straight into the window: no stdio, no
 * mmap (traces may be pipes or /proc/self/fd paths, and a read error must
 * be an error, not a SIGBUS). Compressed files are read into a second
 * buffer and run through ZSTD_decompressStream into the window, so a
 * multi-gigabyte trace never touches the disk decompressed and memory stays
 * at two buffers whatever the file's size.
 *
 * Whether a file is compressed is decided by its first bytes, the zstd
 * magic number (or a skippable frame's), not by its name: a renamed file
 * still reads. A name ending in .zst whose bytes are not zstd is an error,
 * because reading it as plain would produce garbage records rather than a
 * useful message.
 *
 * Small plain files get a window the size of the file (the fuzzer opens
 * thousands of them a second); trace_src_fill grows it if a decoder ever
 * needs more in one piece, so no size limit is baked in here.
 *
 * A zstd stream must end at a frame boundary: a file cut inside a frame is
 * reported as truncated instead of yielding what it decoded so far and
 * pretending that was all. Concatenated frames are read one after another,
 * as the zstd tool does.
 */
#include "core/error.h"
#include "sim/trace_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

size_t trace_window_size = TRACE_BUF_SIZE;

#define ZSTD_MAGIC           0xFD2FB528u
#define ZSTD_SKIPPABLE_MAGIC 0x184D2A50u /* low four bits free */

static bool is_zstd_magic(const unsigned char *p, size_t n) {
  if (n < 4) return false;
  uint32_t m = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
  return m == ZSTD_MAGIC || (m & 0xFFFFFFF0u) == ZSTD_SKIPPABLE_MAGIC;
}

/* Reads until `cap` bytes are in or the file ends; retries EINTR. *got
 * is what arrived, also when a later read() of the loop failed. */
static hs_status read_some(trace_src *s, unsigned char *dst, size_t cap, size_t *got) {
  size_t n = 0;
  *got = 0;
  while (n < cap && !s->raw_eof) {
    ssize_t r = read(s->fd, dst + n, cap - n);
    if (r < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      *got = n;
      return hs_fail(hs_status_from_errno(e), e, "%s: read failed after %llu bytes: %s", s->path,
                     (unsigned long long)s->raw_read, strerror(e));
    }
    if (r == 0) s->raw_eof = true;
    n += (size_t)r;
    s->raw_read += (uint64_t)r;
    /* One short read is enough for a pipe; a regular file fills up. */
    if (r > 0 && s->file_size == 0) break;
  }
  *got = n;
  return HS_OK;
}

hs_status trace_src_open(trace_src *s, const char *path, bool named_zst) {
  memset(s, 0, sizeof *s);
  s->path = path;
  s->fd = open(path, O_RDONLY | O_CLOEXEC);
  if (s->fd < 0) {
    int e = errno;
    return hs_fail(hs_status_from_errno(e), e, "%s: cannot open: %s", path, strerror(e));
  }
  struct stat st;
  if (fstat(s->fd, &st) != 0) {
    int e = errno;
    close(s->fd);
    return hs_fail(hs_status_from_errno(e), e, "%s: cannot stat: %s", path, strerror(e));
  }
  if (S_ISDIR(st.st_mode)) {
    close(s->fd);
    return hs_fail(HS_ERR_INVALID, EISDIR, "%s: is a directory, not a trace", path);
  }
  if (S_ISREG(st.st_mode)) s->file_size = (uint64_t)st.st_size;

  s->cap = trace_window_size > 4 ? trace_window_size : 4;
  if (s->file_size && s->file_size + 64 < s->cap) s->cap = (size_t)s->file_size + 64;
  s->buf = malloc(s->cap);
  if (!s->buf) {
    close(s->fd);
    return hs_fail(HS_ERR_NOMEM, ENOMEM, "%s: out of memory for the read buffer", path);
  }
  /* At least the magic number's 4 bytes, unless the file is shorter. */
  size_t got = 0;
  while (got < 4 && !s->raw_eof) {
    size_t more;
    hs_status rs = read_some(s, s->buf + got, s->cap - got, &more);
    got += more;
    if (rs != HS_OK) {
      trace_src_close(s);
      return rs;
    }
  }
  s->len = got;
  if (!is_zstd_magic(s->buf, got)) {
    if (named_zst) {
      trace_src_close(s);
      return hs_fail(HS_ERR_CORRUPT, 0,
                     "%s: the name ends in .zst but the file does not start with the zstd magic "
                     "number",
                     path);
    }
    s->eof = s->raw_eof;
    return HS_OK;
  }

  /* Compressed: what was read becomes the compressed input, and a fresh
   * window receives the decoded bytes. */
  s->zstd = true;
  s->in = s->buf;
  s->in_cap = s->cap;
  s->in_len = got;
  s->in_pos = 0;
  s->cap = trace_window_size > 4 ? trace_window_size : 4;
  s->pos = s->len = 0;
  s->eof = false;
  s->zret = 1; /* inside a frame until one ends */
  s->buf = malloc(s->cap);
  s->zds = ZSTD_createDStream();
  if (!s->buf || !s->zds) {
    trace_src_close(s);
    return hs_fail(HS_ERR_NOMEM, ENOMEM, "%s: out of memory for zstd decompression", path);
  }
  return HS_OK;
}

/* Decompresses into the free tail of the window until it is full or the
 * compressed stream ends. */
static hs_status zstd_fill(trace_src *s) {
  while (s->len < s->cap && !s->eof) {
    if (s->in_pos == s->in_len && !s->raw_eof) {
      size_t got;
      hs_status st = read_some(s, s->in, s->in_cap, &got);
      s->in_pos = 0;
      s->in_len = got;
      if (st != HS_OK) return st;
    }
    ZSTD_inBuffer in = {s->in, s->in_len, s->in_pos};
    ZSTD_outBuffer out = {s->buf, s->cap, s->len};
    size_t r = ZSTD_decompressStream(s->zds, &out, &in);
    if (ZSTD_isError(r))
      return hs_fail(HS_ERR_CORRUPT, 0, "%s: zstd: %s (near compressed byte %llu)", s->path,
                     ZSTD_getErrorName(r),
                     (unsigned long long)(s->raw_read - (s->in_len - in.pos)));
    bool progress = in.pos != s->in_pos || out.pos != s->len;
    s->in_pos = in.pos;
    s->len = out.pos;
    if (progress) {
      s->zret = r;
      continue;
    }
    /* With room in the window and input left, zstd always moves; so no
     * progress means the input ran out (and at the file's end, the
     * stream is over). The first test only guards against a loop. */
    if (s->in_pos < s->in_len)
      return hs_fail(HS_ERR_CORRUPT, 0, "%s: zstd: decompression made no progress", s->path);
    if (s->raw_eof) {
      if (s->zret != 0)
        return hs_fail(HS_ERR_CORRUPT, 0,
                       "%s: zstd: truncated (the file ends inside a compressed frame)", s->path);
      s->eof = true;
    }
  }
  return HS_OK;
}

hs_status trace_src_fill(trace_src *s, size_t want) {
  if (s->len - s->pos >= want || s->eof) return HS_OK;
  if (s->failed) return hs_fail(s->failed, s->failed_errno, "%s", s->failed_msg);
  /* Slide the unread bytes to the front to make room behind them. */
  if (s->pos > 0) {
    memmove(s->buf, s->buf + s->pos, s->len - s->pos);
    s->len -= s->pos;
    s->pos = 0;
  }
  while (s->len < want && !s->eof) {
    if (s->len == s->cap) {
      size_t cap = s->cap * 2 > want ? s->cap * 2 : want; /* doubling: amortized */
      unsigned char *nb = realloc(s->buf, cap);
      if (!nb)
        return hs_fail(HS_ERR_NOMEM, ENOMEM, "%s: out of memory for the read buffer", s->path);
      s->buf = nb;
      s->cap = cap;
    }
    hs_status st;
    if (s->zstd) {
      st = zstd_fill(s);
    } else {
      size_t got;
      st = read_some(s, s->buf + s->len, s->cap - s->len, &got);
      s->len += got;
      s->eof = s->raw_eof;
    }
    if (st != HS_OK) {
      /* Hand out what was decoded before the failure first: the records
       * before a corrupt spot are good, and the error then comes with
       * the right record count behind it. */
      s->failed = st;
      s->failed_errno = hs_last_errno();
      snprintf(s->failed_msg, sizeof s->failed_msg, "%s", hs_last_error());
      return s->len >= want ? HS_OK : st;
    }
  }
  return HS_OK;
}

uint64_t trace_src_consumed(const trace_src *s) {
  if (s->zstd) return s->raw_read - (s->in_len - s->in_pos);
  return s->raw_read - (s->len - s->pos);
}

void trace_src_close(trace_src *s) {
  if (s->fd >= 0) close(s->fd);
  s->fd = -1;
  ZSTD_freeDStream(s->zds);
  s->zds = NULL;
  free(s->buf);
  free(s->in);
  s->buf = s->in = NULL;
}
