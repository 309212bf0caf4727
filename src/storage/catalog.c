/*
 * storage/catalog.c — the list of the relation files a data directory must
 * hold (storage/catalog.h): the in-memory list, the file, and the check of
 * the list against the directory.
 */
#include "storage/catalog.h"

#include "core/crc32c.h"
#include "core/endian.h"
#include "core/error.h"
#include "core/sysio.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CATALOG_MAGIC "HSRELCAT"
#define HEADER_BYTES  20u
#define ENTRY_BYTES   24u
#define ENTRY_BYTES_1 12u /* format 1: no mark */
#define ENTRY_STALE   1u  /* flags: older than its mark */
/* A directory of more relation files than this would not fit the storage
 * manager's descriptors anyway; a count past it is damage. */
#define MAX_ENTRIES (1u << 24)

bool catalog_fork_listed(hs_fork fork) {
  return fork == HS_FORK_MAIN || fork == HS_FORK_INIT;
}

void catalog_init(catalog *c, uint32_t page_size) {
  memset(c, 0, sizeof *c);
  c->page_size = page_size;
}

void catalog_free(catalog *c) {
  free(c->entries);
  c->entries = NULL;
  c->n = c->cap = 0;
}

static int entry_cmp(hs_relid rel, hs_fork fork, const catalog_entry *e) {
  if (rel != e->rel) return rel < e->rel ? -1 : 1;
  if (fork != e->fork) return fork < e->fork ? -1 : 1;
  return 0;
}

/* Where (rel, fork) is or would go. */
static uint32_t lower_bound(const catalog *c, hs_relid rel, hs_fork fork) {
  uint32_t lo = 0, hi = c->n;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (entry_cmp(rel, fork, &c->entries[mid]) > 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

catalog_entry *catalog_find(const catalog *c, hs_relid rel, hs_fork fork) {
  uint32_t i = lower_bound(c, rel, fork);
  if (i < c->n && entry_cmp(rel, fork, &c->entries[i]) == 0) return &c->entries[i];
  return NULL;
}

hs_status catalog_put(catalog *c, hs_relid rel, hs_fork fork, hs_blockno min_blocks) {
  uint32_t i = lower_bound(c, rel, fork);
  if (i < c->n && entry_cmp(rel, fork, &c->entries[i]) == 0) {
    c->entries[i].min_blocks = min_blocks;
    return HS_OK;
  }
  if (c->n == MAX_ENTRIES)
    return hs_fail(HS_ERR_NOSPACE, 0, "the list of relation files is full (%u files)", c->n);
  if (c->n == c->cap) {
    uint32_t cap = c->cap ? c->cap * 2 : 16;
    catalog_entry *more = realloc(c->entries, (size_t)cap * sizeof *more);
    if (!more) return hs_fail(HS_ERR_NOMEM, ENOMEM, "no memory for the list of relation files");
    c->entries = more;
    c->cap = cap;
  }
  memmove(&c->entries[i + 1], &c->entries[i], (size_t)(c->n - i) * sizeof *c->entries);
  c->entries[i] = (catalog_entry){.rel = rel, .fork = fork, .min_blocks = min_blocks};
  c->n++;
  return HS_OK;
}

void catalog_remove(catalog *c, hs_relid rel, hs_fork fork) {
  catalog_entry *e = catalog_find(c, rel, fork);
  if (!e) return;
  uint32_t i = (uint32_t)(e - c->entries);
  memmove(&c->entries[i], &c->entries[i + 1], (size_t)(c->n - i - 1) * sizeof *c->entries);
  c->n--;
}

hs_status catalog_copy(catalog *to, const catalog *from) {
  catalog_init(to, from->page_size);
  if (!from->n) return HS_OK;
  to->entries = malloc((size_t)from->n * sizeof *to->entries);
  if (!to->entries)
    return hs_fail(HS_ERR_NOMEM, ENOMEM, "no memory for the list of relation files");
  memcpy(to->entries, from->entries, (size_t)from->n * sizeof *to->entries);
  to->n = to->cap = from->n;
  return HS_OK;
}

void catalog_path(const char *dir, char *buf, size_t len) {
  snprintf(buf, len, "%s/%s", dir, HS_SMGR_RELATIONS_FILE);
}

/* The way out of a damaged or lost list, for messages. */
static void rebuild_hint(const char *dir, char *buf, size_t len) {
  char word[PATH_MAX + 64];
  catalog_shell_word(dir, word, sizeof word);
  snprintf(buf, len,
           "restore it from a backup, or list the files there now with `hotset relations --dir "
           "%s --rebuild --force` (a file already lost then goes unnoticed)",
           word);
}

static hs_status damaged(const char *dir, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static hs_status damaged(const char *dir, const char *path, const char *fmt, ...) {
  char what[256], hint[PATH_MAX + 256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  rebuild_hint(dir, hint, sizeof hint);
  return hs_fail(HS_ERR_CORRUPT, 0,
                 "%s is damaged (%s): the list of the relation files this directory must hold "
                 "is lost; %s",
                 path, what, hint);
}

/* Decodes the file's bytes into `out` (initialized). */
static hs_status decode(const char *dir, const char *path, const unsigned char *b, size_t len,
                        catalog *out) {
  if (len < HEADER_BYTES + 4 || memcmp(b, CATALOG_MAGIC, 8) != 0)
    return damaged(dir, path, "%zu bytes, %s", len,
                   len < HEADER_BYTES + 4 ? "too short" : "not its magic number");
  uint32_t format = le_get32(b + 8);
  if (format != CATALOG_FORMAT && format != 1)
    return hs_fail(HS_ERR_CORRUPT, 0,
                   "%s: format %u, this hotset reads formats 1 and %u: open the directory with "
                   "the hotset that wrote it",
                   path, format, CATALOG_FORMAT);
  size_t entry_bytes = format == 1 ? ENTRY_BYTES_1 : ENTRY_BYTES;
  uint32_t count = le_get32(b + 16);
  if (count > MAX_ENTRIES || len != HEADER_BYTES + (size_t)count * entry_bytes + 4)
    return damaged(dir, path, "%zu bytes for %u entries", len, count);
  uint32_t crc = le_get32(b + len - 4);
  if (hs_crc32c(0, b, len - 4) != crc) return damaged(dir, path, "CRC mismatch");
  out->page_size = le_get32(b + 12);
  if (out->page_size < HS_PAGE_SIZE_MIN || out->page_size > HS_PAGE_SIZE_MAX ||
      (out->page_size & (out->page_size - 1)))
    return damaged(dir, path, "page size %u", out->page_size);
  if (count) {
    out->entries = malloc((size_t)count * sizeof *out->entries);
    if (!out->entries) return hs_fail(HS_ERR_NOMEM, ENOMEM, "no memory to read %s", path);
    out->cap = count;
  }
  for (uint32_t i = 0; i < count; i++) {
    const unsigned char *p = b + HEADER_BYTES + (size_t)i * entry_bytes;
    uint32_t fork = format == 1 ? le_get32(p + 4) : le_get16(p + 4);
    uint32_t flags = format == 1 ? 0 : le_get16(p + 6);
    catalog_entry e = {.rel = le_get32(p), .fork = (hs_fork)fork, .min_blocks = le_get32(p + 8)};
    if (format != 1) {
      e.mark_block = le_get32(p + 12);
      e.mark_lsn = le_get64(p + 16);
    }
    if (flags & ~ENTRY_STALE) return damaged(dir, path, "entry %u has flags 0x%X", i, flags);
    e.stale = flags & ENTRY_STALE;
    if (fork >= HS_FORK_COUNT || !catalog_fork_listed(e.fork))
      return damaged(dir, path, "entry %u names fork %u", i, fork);
    if (i > 0 && entry_cmp(e.rel, e.fork, &out->entries[i - 1]) <= 0)
      return damaged(dir, path, "entry %u out of order", i);
    out->entries[out->n++] = e;
  }
  return HS_OK;
}

hs_status catalog_read(const char *dir, catalog *out) {
  catalog_init(out, 0);
  char path[PATH_MAX + 32];
  catalog_path(dir, path, sizeof path);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT) return hs_fail(HS_ERR_NOENT, err, "%s: no list of relation files", path);
    return hs_fail(hs_status_from_errno(err), err, "%s: cannot open the list of relation files: %s",
                   path, strerror(err));
  }
  struct stat sb;
  if (fstat(fd, &sb) != 0) {
    int err = errno;
    close(fd);
    return hs_fail(HS_ERR_IO, err, "%s: cannot stat it: %s", path, strerror(err));
  }
  if (!S_ISREG(sb.st_mode) ||
      (uint64_t)sb.st_size > HEADER_BYTES + (uint64_t)MAX_ENTRIES * ENTRY_BYTES + 4) {
    close(fd);
    return damaged(dir, path, "%s of %jd bytes", S_ISREG(sb.st_mode) ? "a file" : "not a file",
                   (intmax_t)sb.st_size);
  }
  size_t len = (size_t)sb.st_size;
  unsigned char *b = malloc(len ? len : 1);
  if (!b) {
    close(fd);
    return hs_fail(HS_ERR_NOMEM, ENOMEM, "no memory to read %s", path);
  }
  size_t got = 0;
  int err = 0;
  while (got < len) {
    ssize_t n = pread(fd, b + got, len - got, (off_t)got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) err = errno;
    if (n <= 0) break;
    got += (size_t)n;
  }
  close(fd);
  hs_status st = err ? hs_fail(HS_ERR_IO, err, "%s: cannot read it: %s", path, strerror(err))
                     : decode(dir, path, b, got, out);
  free(b);
  return st;
}

/* A failed step of writing `path`: a full disk says so. */
static hs_status write_failed(int err, const char *path, const char *what) {
  if (err == ENOSPC || err == EDQUOT)
    return hs_fail(HS_ERR_NOSPACE, err, "%s: %s: the disk is full (%s)", path, what, strerror(err));
  return hs_fail(HS_ERR_IO, err, "%s: %s: %s", path, what, strerror(err));
}

hs_status catalog_write(const char *dir, const catalog *c) {
  char path[PATH_MAX + 32], tmp[PATH_MAX + 48];
  catalog_path(dir, path, sizeof path);
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  size_t len = HEADER_BYTES + (size_t)c->n * ENTRY_BYTES + 4;
  unsigned char *b = malloc(len);
  if (!b) return hs_fail(HS_ERR_NOMEM, ENOMEM, "no memory to write %s", path);
  memcpy(b, CATALOG_MAGIC, 8);
  le_put32(b + 8, CATALOG_FORMAT);
  le_put32(b + 12, c->page_size);
  le_put32(b + 16, c->n);
  for (uint32_t i = 0; i < c->n; i++) {
    unsigned char *p = b + HEADER_BYTES + (size_t)i * ENTRY_BYTES;
    le_put32(p, c->entries[i].rel);
    le_put16(p + 4, (uint16_t)c->entries[i].fork);
    le_put16(p + 6, c->entries[i].stale ? ENTRY_STALE : 0);
    le_put32(p + 8, c->entries[i].min_blocks);
    le_put32(p + 12, c->entries[i].mark_block);
    le_put64(p + 16, c->entries[i].mark_lsn);
  }
  le_put32(b + len - 4, hs_crc32c(0, b, len - 4));

  hs_status st = HS_OK;
  int fd = sys_open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  bool made_tmp = fd >= 0;
  if (fd < 0) {
    st = write_failed(errno, tmp, "cannot create the new list of relation files");
  } else {
    ssize_t n = sys_pwrite(fd, b, len, 0);
    if (n != (ssize_t)len)
      st = write_failed(n < 0 ? errno : ENOSPC, tmp, "cannot write the new list of relation files");
    else if (sys_fsync(fd) != 0)
      st = write_failed(errno, tmp, "fsync of the new list of relation files failed");
    close(fd);
  }
  free(b);
  if (st == HS_OK && sys_rename(tmp, path) != 0)
    st = write_failed(errno, tmp, "cannot rename the new list of relation files into place");
  if (st == HS_OK) {
    /* The rename is a directory entry: durable only once the directory is. */
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0 || sys_fsync(dfd) != 0)
      st = write_failed(errno, dir,
                        "fsync of the data directory after replacing its list of relation files "
                        "failed");
    if (dfd >= 0) close(dfd);
  } else if (made_tmp) {
    sys_unlink(tmp);
  }
  return st;
}

size_t catalog_check(const char *dir, const catalog *c,
                     void (*each)(void *ctx, const catalog_problem *p), void *ctx) {
  size_t bad = 0;
  for (uint32_t i = 0; i < c->n; i++) {
    char name[32], path[PATH_MAX + 32];
    hs_smgr_fork_filename(c->entries[i].rel, c->entries[i].fork, name, sizeof name);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    catalog_problem p = {.want = c->entries[i]};
    struct stat sb;
    if (stat(path, &sb) != 0) {
      p.missing = true;
      p.err = errno;
    } else if (!S_ISREG(sb.st_mode)) {
      p.missing = true;
    } else {
      p.bytes = (uint64_t)sb.st_size;
      p.blocks = p.bytes / c->page_size;
      if (p.blocks >= p.want.min_blocks) continue;
    }
    bad++;
    if (each) each(ctx, &p);
  }
  return bad;
}

void catalog_describe(const char *dir, const catalog *c, const catalog_problem *p, char *buf,
                      size_t len) {
  char name[32], list[PATH_MAX + 32], found[160], want[160];
  hs_smgr_fork_filename(p->want.rel, p->want.fork, name, sizeof name);
  catalog_path(dir, list, sizeof list);
  if (p->missing && p->err == ENOENT)
    snprintf(found, sizeof found, "is missing");
  else if (p->missing && p->err)
    snprintf(found, sizeof found, "cannot be looked at (%s)", strerror(p->err));
  else if (p->missing)
    snprintf(found, sizeof found, "is not a regular file");
  else if (p->bytes % c->page_size)
    snprintf(found, sizeof found, "has %" PRIu64 " block%s of %u bytes and %" PRIu64 " bytes more",
             p->blocks, p->blocks == 1 ? "" : "s", c->page_size, p->bytes % c->page_size);
  else
    snprintf(found, sizeof found, "has %" PRIu64 " block%s of %u bytes", p->blocks,
             p->blocks == 1 ? "" : "s", c->page_size);
  if (p->want.min_blocks)
    snprintf(want, sizeof want, "with at least %u block%s (its size at the last checkpoint)",
             p->want.min_blocks, p->want.min_blocks == 1 ? "" : "s");
  else
    snprintf(want, sizeof want, "(created since the last checkpoint)");
  snprintf(buf, len, "\"%s/%s\" %s, but %s requires it %s", dir, name, found, list, want);
}

void catalog_shell_word(const char *s, char *buf, size_t len) {
  if (!len) return;
  bool plain = *s != '\0';
  for (const char *c = s; *c && plain; c++)
    plain = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
            strchr("/._-+,:@%=", *c) != NULL;
  if (plain) {
    snprintf(buf, len, "%s", s);
    return;
  }
  /* 'it'\''s': each quote closes the quoting, is escaped, and reopens it. */
  size_t o = 0;
  buf[o++] = '\'';
  for (const char *c = s; *c && o + 6 < len; c++) {
    if (*c == '\'') {
      memcpy(buf + o, "'\\''", 4);
      o += 4;
    } else {
      buf[o++] = *c;
    }
  }
  if (o + 1 < len) buf[o++] = '\'';
  buf[o < len ? o : len - 1] = '\0';
}
