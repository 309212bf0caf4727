/*
 * storage/control.c — the data directory's control file (hotset/control.h).
 *
 * 128 bytes, little-endian, one sector so that even a file system that
 * tore a rename's data would tear nothing here:
 *
 *    0  "HSCONTRL"          magic
 *    8  u32 format          HS_CONTROL_FORMAT
 *   12  u32 page_size
 *   16  u32 flags           bit 0: checksums; bit 1: has a checkpoint;
 *                           bit 2: keeps a list of its relation files
 *   20  u32 state           hs_db_state
 *   24  u64 segment_bytes   0: never opened with a log
 *   32  u64 system_id
 *   40  u64 checkpoint
 *   48  u64 redo
 *   56  u64 time_ms
 *   64  ... zeros ...
 *  124  u32 CRC-32C of bytes [0, 124)
 *
 * Replaced, never changed in place: a temporary file is written and
 * fsynced, renamed over the old one, and the directory fsynced (the rename
 * is a directory entry: until the directory is synced a power cut may undo
 * it, which is fine — the old file names an older checkpoint whose log is
 * still there, because segments are recycled only after this returns).
 */
#include "core/crc32c.h"
#include "core/endian.h"
#include "core/error.h"
#include "core/sysio.h"
#include "storage/control_file.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#define CONTROL_MAGIC "HSCONTRL"
#define CONTROL_BYTES 128u
#define CONTROL_CRC   124u

#define FLAG_CHECKSUMS  1u
#define FLAG_CHECKPOINT 2u
#define FLAG_CATALOG    4u

const char *hs_db_state_name(hs_db_state state) {
  switch (state) {
  case HS_DB_SHUT_DOWN:
    return "shut down";
  case HS_DB_IN_PRODUCTION:
    return "in production";
  case HS_DB_IN_RECOVERY:
    return "in recovery";
  }
  return "unknown";
}

uint64_t control_new_system_id(void) {
  uint64_t id = 0;
  if (getrandom(&id, sizeof id, 0) != (ssize_t)sizeof id) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    id = ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 16);
  }
  return id ? id : 1;
}

hs_status hs_control_read(const char *dir, hs_control *out) {
  if (!dir || !out) return hs_fail(HS_ERR_INVALID, 0, "hs_control_read: dir and out needed");
  memset(out, 0, sizeof *out);
  char path[4200];
  snprintf(path, sizeof path, "%s/%s", dir, HS_CONTROL_FILE);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT || err == ENOTDIR)
      return hs_fail(HS_ERR_NOENT, err, "%s: no control file", path);
    return hs_fail(err == EACCES ? HS_ERR_ACCESS : HS_ERR_IO, err,
                   "%s: cannot open the control file: %s", path, strerror(err));
  }
  unsigned char b[CONTROL_BYTES + 1];
  ssize_t got = pread(fd, b, sizeof b, 0);
  int err = errno;
  close(fd);
  if (got < 0)
    return hs_fail(HS_ERR_IO, err, "%s: cannot read the control file: %s", path, strerror(err));
  if (got != (ssize_t)CONTROL_BYTES || memcmp(b, CONTROL_MAGIC, 8) != 0 ||
      hs_crc32c(0, b, CONTROL_CRC) != le_get32(b + CONTROL_CRC))
    return hs_fail(HS_ERR_CORRUPT, 0,
                   "%s: the control file is damaged (%zd bytes, bad magic or CRC): the directory's "
                   "page size and last checkpoint are unknown; restore it from a backup, or "
                   "`hotset reset-log --dir DIR --force --page-size SIZE` to write a new one",
                   path, got);
  out->format = le_get32(b + 8);
  if (out->format != HS_CONTROL_FORMAT)
    return hs_fail(HS_ERR_CORRUPT, 0,
                   "%s: control file format %u, this hotset reads format %u: open the directory "
                   "with the hotset that wrote it",
                   path, out->format, HS_CONTROL_FORMAT);
  out->page_size = le_get32(b + 12);
  uint32_t flags = le_get32(b + 16);
  out->checksums = flags & FLAG_CHECKSUMS;
  out->has_checkpoint = flags & FLAG_CHECKPOINT;
  out->has_catalog = flags & FLAG_CATALOG;
  out->state = (hs_db_state)le_get32(b + 20);
  out->segment_bytes = le_get64(b + 24);
  out->system_id = le_get64(b + 32);
  out->checkpoint = le_get64(b + 40);
  out->redo = le_get64(b + 48);
  out->time_ms = le_get64(b + 56);
  return HS_OK;
}

/* The failure of a step of writing `path`: a full disk says so. */
static hs_status write_failed(int err, const char *path, const char *what) {
  if (err == ENOSPC || err == EDQUOT)
    return hs_fail(HS_ERR_NOSPACE, err, "%s: %s: the disk is full (%s)", path, what, strerror(err));
  return hs_fail(HS_ERR_IO, err, "%s: %s: %s", path, what, strerror(err));
}

hs_status control_write(const char *dir, const hs_control *c) {
  char path[4200], tmp[4300];
  snprintf(path, sizeof path, "%s/%s", dir, HS_CONTROL_FILE);
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  unsigned char b[CONTROL_BYTES] = {0};
  memcpy(b, CONTROL_MAGIC, 8);
  le_put32(b + 8, HS_CONTROL_FORMAT);
  le_put32(b + 12, c->page_size);
  le_put32(b + 16, (c->checksums ? FLAG_CHECKSUMS : 0) | (c->has_checkpoint ? FLAG_CHECKPOINT : 0) |
                       (c->has_catalog ? FLAG_CATALOG : 0));
  le_put32(b + 20, (uint32_t)c->state);
  le_put64(b + 24, c->segment_bytes);
  le_put64(b + 32, c->system_id);
  le_put64(b + 40, c->checkpoint);
  le_put64(b + 48, c->redo);
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  le_put64(b + 56, (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u);
  le_put32(b + CONTROL_CRC, hs_crc32c(0, b, CONTROL_CRC));

  int fd = sys_open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return write_failed(errno, tmp, "cannot create the new control file");
  hs_status st = HS_OK;
  ssize_t n = sys_pwrite(fd, b, sizeof b, 0);
  if (n != (ssize_t)sizeof b)
    st = write_failed(n < 0 ? errno : ENOSPC, tmp, "cannot write the new control file");
  else if (sys_fsync(fd) != 0)
    st = write_failed(errno, tmp, "fsync of the new control file failed");
  close(fd);
  if (st == HS_OK && sys_rename(tmp, path) != 0)
    st = write_failed(errno, tmp, "cannot rename the new control file into place");
  if (st == HS_OK) {
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0 || sys_fsync(dfd) != 0)
      st = write_failed(errno, dir,
                        "fsync of the data directory after replacing its control "
                        "file failed");
    if (dfd >= 0) close(dfd);
  }
  if (st != HS_OK) sys_unlink(tmp);
  return st;
}
