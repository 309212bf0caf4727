/*
 * wal/wal_control.c — the control file: where recovery starts.
 *
 * One small file in the log's directory, hotset.control, names the last
 * checkpoint: where its record starts and its redo point (where replay
 * begins: every change before it is in the data files). It is replaced
 * whole, never changed in place — written under a temporary name,
 * fsynced, renamed over the old one, the directory fsynced — so a crash at
 * any moment leaves either the old checkpoint or the new one, both valid
 * (PostgreSQL writes pg_control in place, relying on its 512-byte sector
 * writes being atomic; the rename costs a directory fsync per checkpoint
 * and needs no such promise from the disk).
 *
 * Layout, 48 bytes, little-endian: "HSCTRL01" (8), u64 segment_bytes,
 * u64 checkpoint LSN, u64 redo LSN, u64 time (ms since the epoch), u32
 * CRC-32C of the bytes before it, u32 0.
 */
#include "core/crc32c.h"
#include "core/error.h"
#include "core/sysio.h"
#include "wal/wal_format.h"
#include "wal/wal_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define CONTROL_NAME  "hotset.control"
#define CONTROL_MAGIC "HSCTRL01"
#define CONTROL_SIZE  48u

hs_status wal_control_read(const char *dir, uint64_t segment_bytes, wal_control *c, bool *found) {
  char path[4200];
  snprintf(path, sizeof path, "%s/%s", dir, CONTROL_NAME);
  memset(c, 0, sizeof *c);
  *found = false;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return HS_OK;
    return wal_sys_fail(HS_ERR_IO, errno, "%s: cannot open the control file", path);
  }
  unsigned char b[CONTROL_SIZE];
  ssize_t got = pread(fd, b, sizeof b, 0);
  int err = errno;
  close(fd);
  if (got < 0) return wal_sys_fail(HS_ERR_IO, err, "%s: cannot read the control file", path);
  if (got != (ssize_t)sizeof b || memcmp(b, CONTROL_MAGIC, 8) != 0 ||
      hs_crc32c(0, b, 40) != wal_get32(b + 40))
    return hs_fail(HS_ERR_CORRUPT, 0,
                   "%s: the control file is damaged (%zd bytes, bad magic or CRC): recovery "
                   "cannot know where to start",
                   path, got);
  if (wal_get64(b + 8) != segment_bytes)
    return hs_fail(HS_ERR_INVALID, 0,
                   "%s: the log was written with %" PRIu64 "-byte segments, opened with %" PRIu64,
                   path, wal_get64(b + 8), segment_bytes);
  c->checkpoint = wal_get64(b + 16);
  c->redo = wal_get64(b + 24);
  c->time_ms = wal_get64(b + 32);
  *found = true;
  return HS_OK;
}

hs_status wal_control_write(hs_wal *w, const wal_control *c) {
  char path[4200], tmp[4300];
  snprintf(path, sizeof path, "%s/%s", w->dir, CONTROL_NAME);
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  unsigned char b[CONTROL_SIZE] = {0};
  memcpy(b, CONTROL_MAGIC, 8);
  wal_put64(b + 8, w->segment_bytes);
  wal_put64(b + 16, c->checkpoint);
  wal_put64(b + 24, c->redo);
  wal_put64(b + 32, c->time_ms);
  wal_put32(b + 40, hs_crc32c(0, b, 40));
  int fd = sys_open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return wal_sys_fail(HS_ERR_IO, errno, "%s: cannot create the new control file", tmp);
  hs_status st = HS_OK;
  ssize_t put = sys_pwrite(fd, b, sizeof b, 0);
  if (put != (ssize_t)sizeof b) /* A short write of 48 bytes is the disk filling up. */
    st = wal_sys_fail(HS_ERR_IO, put < 0 ? errno : ENOSPC, "%s: cannot write the new control file",
                      tmp);
  else if (sys_fsync(fd) != 0)
    st = wal_sys_fail(HS_ERR_IO, errno, "%s: fsync of the new control file failed", tmp);
  close(fd);
  if (st == HS_OK && sys_rename(tmp, path) != 0)
    st = wal_sys_fail(HS_ERR_IO, errno, "%s: cannot rename the new control file to %s", tmp, path);
  if (st == HS_OK) st = wal_sync_dir(w->dir);
  if (st != HS_OK) sys_unlink(tmp);
  return st;
}
