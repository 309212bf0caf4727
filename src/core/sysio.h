/*
 * core/sysio.h — the system calls that change files in a data or log
 * directory (internal, not part of the public API).
 *
 * Every call in src/ that creates, writes, syncs, resizes, renames, links
 * or removes a file of a data or log directory goes through one of these
 * wrappers, so a test can see (and cut) every change the library makes to
 * its files: the power-cut recorder of the lab (installed through
 * core/seams.h) journals each change
 * with what it overwrote, and can stop the process at the Nth change. The
 * wrappers take and return exactly what the system call does (-1 and errno
 * on failure; no EINTR retry, no message: callers keep their own loops and
 * hs_fail). With nothing installed, a wrapper costs one relaxed atomic load
 * before the system call.
 *
 * Rules for callers:
 *  - sys_open is for opens that may create a file (O_CREAT) or truncate
 *    one (O_TRUNC); a read-only or plain read-write open of an existing
 *    file may stay open(2). A directory opened only to fsync it may use
 *    open(2) too: the sync itself goes through sys_fsync, which notices
 *    the descriptor is a directory.
 *  - Reads (pread, preadv), stat and listing stay as they are.
 *  - Files that are not data or log files (lock files, benchmark output,
 *    CLI output) do not use these: nothing in them is recovered.
 */
#ifndef HOTSET_CORE_SYSIO_H
#define HOTSET_CORE_SYSIO_H

#include <stdatomic.h>
#include <stdbool.h>
#include <sys/types.h>
#include <sys/uio.h>

/* open(2); the mode is used only with O_CREAT. */
int sys_open(const char *path, int flags, mode_t mode);
/* pwrite(2) / pwritev(2) / write(2). */
ssize_t sys_pwrite(int fd, const void *buf, size_t len, off_t off);
ssize_t sys_pwritev(int fd, const struct iovec *iov, int iovcnt, off_t off);
ssize_t sys_write(int fd, const void *buf, size_t len);
/* fsync(2) of a file or of a directory; fdatasync(2). */
int sys_fsync(int fd);
int sys_fdatasync(int fd);
/* ftruncate(2); fallocate(2) (mode 0 only changes the file's size). */
int sys_ftruncate(int fd, off_t len);
int sys_fallocate(int fd, int mode, off_t off, off_t len);
/* rename(2), link(2), unlink(2), mkdir(2). */
int sys_rename(const char *from, const char *to);
/* rename(2) that never replaces an existing `to` (EEXIST instead):
 * renameat2's RENAME_NOREPLACE, or — on a file system without it — a look
 * for `to` first, which the caller makes safe by being the only one that
 * creates names in that directory. One file never has two names at any
 * moment, which link() then unlink() cannot promise across a crash. */
int sys_rename_noreplace(const char *from, const char *to);
int sys_link(const char *from, const char *to);
int sys_unlink(const char *path);
int sys_mkdir(const char *path, mode_t mode);

/* The system's rename without replacing, never through a seam: what
 * sys_rename_noreplace does when nothing is installed, for the installed
 * file operations themselves to call. */
int rename_noreplace(const char *from, const char *to);

#endif
