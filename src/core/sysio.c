/*
 * core/sysio.c — the wrappers of core/sysio.h. Each is one relaxed load of
 * seams.file_ops and the system call; with file operations installed (the
 * power-cut recorder of the lab, core/seams.h), the installed one instead.
 */
#include "core/sysio.h"

#include "core/seams.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

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

static const seam_file_ops *installed(void) {
  return atomic_load_explicit(&seams.file_ops, memory_order_relaxed);
}

int sys_open(const char *path, int flags, mode_t mode) {
  const seam_file_ops *ops;
  if ((flags & (O_CREAT | O_TRUNC)) && (ops = installed())) return ops->open(path, flags, mode);
  return open(path, flags, mode);
}

ssize_t sys_pwrite(int fd, const void *buf, size_t len, off_t off) {
  const seam_file_ops *ops;
  if ((ops = installed())) return ops->pwrite(fd, buf, len, off);
  return pwrite(fd, buf, len, off);
}

ssize_t sys_pwritev(int fd, const struct iovec *iov, int iovcnt, off_t off) {
  const seam_file_ops *ops;
  if ((ops = installed())) return ops->pwritev(fd, iov, iovcnt, off);
  return pwritev(fd, iov, iovcnt, off);
}

ssize_t sys_write(int fd, const void *buf, size_t len) {
  const seam_file_ops *ops;
  if ((ops = installed())) return ops->write(fd, buf, len);
  return write(fd, buf, len);
}

int sys_fsync(int fd) {
  const seam_file_ops *ops;
  if ((ops = installed())) return ops->sync(fd, false);
  return fsync(fd);
}

int sys_fdatasync(int fd) {
  const seam_file_ops *ops;
  if ((ops = installed())) return ops->sync(fd, true);
  return fdatasync(fd);
}

int sys_ftruncate(int fd, off_t len) {
  const seam_file_ops *ops;
  if ((ops = installed())) return ops->ftruncate(fd, len);
  return ftruncate(fd, len);
}

int sys_fallocate(int fd, int mode, off_t off, off_t len) {
  const seam_file_ops *ops;
  if ((ops = installed())) return ops->fallocate(fd, mode, off, len);
  return fallocate(fd, mode, off, len);
}

int sys_rename(const char *from, const char *to) {
  const seam_file_ops *ops;
  if ((ops = installed())) return ops->rename(from, to);
  return rename(from, to);
}

int sys_rename_noreplace(const char *from, const char *to) {
  const seam_file_ops *ops;
  if ((ops = installed())) return ops->rename_noreplace(from, to);
  return rename_noreplace(from, to);
}

int sys_link(const char *from, const char *to) {
  const seam_file_ops *ops;
  if ((ops = installed())) return ops->link(from, to);
  return link(from, to);
}

int sys_unlink(const char *path) {
  const seam_file_ops *ops;
  if ((ops = installed())) return ops->unlink(path);
  return unlink(path);
}

int sys_mkdir(const char *path, mode_t mode) {
  const seam_file_ops *ops;
  if ((ops = installed())) return ops->mkdir(path, mode);
  return mkdir(path, mode);
}
