/*
 * tests/killed_child.h — a real crash for the tests: run some work in a
 * forked child that then kills itself with SIGKILL, and bring back what it
 * reported through a pipe (the ids, tids or values it acknowledged).
 */
#ifndef HOTSET_TESTS_KILLED_CHILD_H
#define HOTSET_TESTS_KILLED_CHILD_H

#include "check.h"

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

/* Runs child(ctx, out) in a forked process, which is then killed by
 * SIGKILL (a child that fails leaves with _exit and a code of its own).
 * `out` is a pipe's write end: up to `len` bytes the child writes there
 * land in `result` (out is -1 when len is 0). Returns whether the child
 * died by SIGKILL with all `len` bytes sent. */
static inline bool run_killed_child(void (*child)(void *ctx, int out), void *ctx, void *result,
                                    size_t len) {
  int fds[2] = {-1, -1};
  if (len) REQUIRE(pipe(fds) == 0);
  fflush(NULL);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    if (len) close(fds[0]);
    child(ctx, fds[1]);
    raise(SIGKILL);
    _exit(99);
  }
  size_t got = 0;
  if (len) {
    close(fds[1]);
    while (got < len) {
      ssize_t n = read(fds[0], (char *)result + got, len - got);
      if (n <= 0) break;
      got += (size_t)n;
    }
    close(fds[0]);
  }
  int status;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  bool killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
  if (!killed || got != len)
    fprintf(stderr, "child ended with status %d after sending %zu of %zu bytes\n", status, got,
            len);
  return killed && got == len;
}

/* As run_killed_child, for a child whose report has no fixed length:
 * whatever it writes to `out` before it dies lands in *result (malloc'd,
 * *len bytes; the caller frees it). Returns whether the child died by
 * SIGKILL. */
static inline bool run_killed_child_stream(void (*child)(void *ctx, int out), void *ctx,
                                           void **result, size_t *len) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  fflush(NULL);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    child(ctx, fds[1]);
    raise(SIGKILL);
    _exit(99);
  }
  close(fds[1]);
  size_t cap = 1 << 16, got = 0;
  char *buf = malloc(cap);
  REQUIRE(buf != NULL);
  for (;;) {
    if (got == cap) {
      cap *= 2;
      buf = realloc(buf, cap);
      REQUIRE(buf != NULL);
    }
    ssize_t n = read(fds[0], buf + got, cap - got);
    if (n <= 0) break;
    got += (size_t)n;
  }
  close(fds[0]);
  int status;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  bool killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
  if (!killed) fprintf(stderr, "child ended with status %d, not by SIGKILL\n", status);
  *result = buf;
  *len = got;
  return killed;
}

/* In the child: sends `len` bytes to the parent, or leaves with `code`. */
static inline void killed_child_send(int out, const void *data, size_t len, int code) {
  if (write(out, data, len) != (ssize_t)len) _exit(code);
}

#endif
