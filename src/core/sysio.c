/*
 * core/sysio.c — the wrappers of core/sysio.h. Unarmed, each is one relaxed
 * load of sys_recording and the system call; armed, the power-cut recorder
 * (core/powercut.c) journals the change first, and may stop the process
 * instead of doing it.
 */
#include "core/sysio.h"

#include "core/powercut.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

atomic_bool sys_recording;

int rename_noreplace(const char *from, const char *to) {
  if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0) return 0;
  if (errno != EINVAL && errno != ENOSYS) return -1;
  struct stat sb;
  if (lstat(to, &sb) == 0) {
    errno = EEXIST;
    return -1;
  }
  return rename(from, to);
}

static bool armed(void) {
  return atomic_load_explicit(&sys_recording, memory_order_relaxed);
}

int sys_open(const char *path, int flags, mode_t mode) {
  if (armed() && (flags & (O_CREAT | O_TRUNC))) return pc_open(path, flags, mode);
  return open(path, flags, mode);
}

ssize_t sys_pwrite(int fd, const void *buf, size_t len, off_t off) {
  if (armed()) return pc_pwrite(fd, buf, len, off);
  return pwrite(fd, buf, len, off);
}

ssize_t sys_pwritev(int fd, const struct iovec *iov, int iovcnt, off_t off) {
  if (armed()) return pc_pwritev(fd, iov, iovcnt, off);
  return pwritev(fd, iov, iovcnt, off);
}

ssize_t sys_write(int fd, const void *buf, size_t len) {
  if (armed()) return pc_write(fd, buf, len);
  return write(fd, buf, len);
}

int sys_fsync(int fd) {
  if (armed()) return pc_sync(fd, false);
  return fsync(fd);
}

int sys_fdatasync(int fd) {
  if (armed()) return pc_sync(fd, true);
  return fdatasync(fd);
}

int sys_ftruncate(int fd, off_t len) {
  if (armed()) return pc_ftruncate(fd, len);
  return ftruncate(fd, len);
}

int sys_fallocate(int fd, int mode, off_t off, off_t len) {
  if (armed()) return pc_fallocate(fd, mode, off, len);
  return fallocate(fd, mode, off, len);
}

int sys_rename(const char *from, const char *to) {
  if (armed()) return pc_rename(from, to);
  return rename(from, to);
}

int sys_rename_noreplace(const char *from, const char *to) {
  if (armed()) return pc_rename_noreplace(from, to);
  return rename_noreplace(from, to);
}

int sys_link(const char *from, const char *to) {
  if (armed()) return pc_link(from, to);
  return link(from, to);
}

int sys_unlink(const char *path) {
  if (armed()) return pc_unlink(path);
  return unlink(path);
}

int sys_mkdir(const char *path, mode_t mode) {
  if (armed()) return pc_mkdir(path, mode);
  return mkdir(path, mode);
}
