/*
 * core/dir_lock.c — a directory's lock file (core/dir_lock.h).
 *
 * flock belongs to the open file description, so a second open of the file
 * is refused even inside the process that holds it, and the lock goes away
 * with the holder however it ends (a crash included): no stale lock to
 * clean up, unlike a pid file alone. The pid inside is only for the message.
 */
#include "core/dir_lock.h"

#include "core/error.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <unistd.h>

/* The pid a lock file holds ("<pid>\n"), or 0 if it holds none: empty (the
 * holder has not written it yet, or could not) or not a number. */
static long lock_file_pid(int fd) {
  char buf[32];
  ssize_t n;
  do {
    n = pread(fd, buf, sizeof buf - 1, 0);
  } while (n < 0 && errno == EINTR);
  if (n <= 0) return 0;
  buf[n] = '\0';
  char *end;
  errno = 0;
  long pid = strtol(buf, &end, 10);
  if (errno != 0 || end == buf || *end != '\n' || pid <= 0) return 0;
  return pid;
}

/* Writes our pid into the locked lock file. The pid is written over the
 * old content and the file then cut to its length, so a reader sees the old
 * pid, the new one, or the new one followed by a stale tail it stops
 * reading at the newline. If that fails the file is emptied, so nobody is
 * told a wrong pid; the lock itself still holds. */
static void lock_file_write_pid(int fd) {
  char buf[32];
  int len = snprintf(buf, sizeof buf, "%ld\n", (long)getpid());
  ssize_t done;
  do {
    done = pwrite(fd, buf, (size_t)len, 0);
  } while (done < 0 && errno == EINTR);
  if (done != len || ftruncate(fd, len) != 0) {
    int rc = ftruncate(fd, 0);
    (void)rc; /* if even that fails, a stale pid may show: it is only advice */
  }
}

/* Opens and locks the lock file at `path`; returns the descriptor in *out. */
hs_status dir_lock_take(const char *what, const char *dir, const char *path, int *out) {
  int fd;
  do {
    fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return hs_fail(HS_ERR_IO, errno, "could not open lock file \"%s\"", path);
  int rc;
  do {
    rc = flock(fd, LOCK_EX | LOCK_NB);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    int err = errno;
    hs_status st;
    if (err == EWOULDBLOCK) {
      long pid = lock_file_pid(fd);
      char holder[48] = "another process";
      if (pid > 0) snprintf(holder, sizeof holder, "process %ld", pid);
      st = hs_fail(HS_ERR_BUSY, err, "%s %s is in use by %s (lock file %s)", what, dir, holder,
                   path);
    } else {
      st = hs_fail(HS_ERR_IO, err, "could not lock \"%s\"", path);
    }
    close(fd);
    return st;
  }
  lock_file_write_pid(fd);
  *out = fd;
  return HS_OK;
}

void dir_lock_release(int fd) {
  if (fd < 0) return;
  /* Still holding the lock: nobody else can be writing their pid yet. */
  int rc = ftruncate(fd, 0);
  (void)rc; /* if it fails, the old pid shows: it is only advice */
  close(fd);
}
