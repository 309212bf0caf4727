/* core/powercut.c — the power-cut recorder and applier (core/powercut.h). */
#include "core/powercut.h"

#include "core/error.h"
#include "core/sysio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

hs_status pc_arm_recorder(const pc_arm *arm) {
  (void)arm;
  return hs_fail(HS_ERR_INVALID, 0, "the power-cut recorder is not built yet");
}
void pc_mark(void) {}
uint64_t pc_operations(void) {
  return 0;
}
hs_status pc_apply(const char *root, const char *journal, uint64_t seed, pc_result *out) {
  (void)root, (void)journal, (void)seed, (void)out;
  return hs_fail(HS_ERR_INVALID, 0, "the power-cut applier is not built yet");
}
int pc_open(const char *path, int flags, mode_t mode) {
  return open(path, flags, mode);
}
ssize_t pc_pwrite(int fd, const void *buf, size_t len, off_t off) {
  return pwrite(fd, buf, len, off);
}
ssize_t pc_pwritev(int fd, const struct iovec *iov, int iovcnt, off_t off) {
  return pwritev(fd, iov, iovcnt, off);
}
ssize_t pc_write(int fd, const void *buf, size_t len) {
  return write(fd, buf, len);
}
int pc_sync(int fd, bool data_only) {
  return data_only ? fdatasync(fd) : fsync(fd);
}
int pc_ftruncate(int fd, off_t len) {
  return ftruncate(fd, len);
}
int pc_fallocate(int fd, int mode, off_t off, off_t len) {
  return fallocate(fd, mode, off, len);
}
int pc_rename(const char *from, const char *to) {
  return rename(from, to);
}
int pc_link(const char *from, const char *to) {
  return link(from, to);
}
int pc_unlink(const char *path) {
  return unlink(path);
}
int pc_mkdir(const char *path, mode_t mode) {
  return mkdir(path, mode);
}
