/*
 * tests/support/misuse_child.h — a broken rule checked in a child process:
 * a release build refuses it (the child exits with what `fn` returned, 0
 * when every refusal was right), a -DHOTSET_DEBUG=ON build stops there
 * (SIGABRT), as docs/api.md says misuse does.
 */
#ifndef HOTSET_TESTS_MISUSE_CHILD_H
#define HOTSET_TESTS_MISUSE_CHILD_H

#include "check.h"
#include "core/debug.h"

#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static inline void in_child(const char *what, int (*fn)(void)) {
  fflush(NULL);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    int bad = fn();
    _exit(bad);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (HS_DEBUG_CHECKS) {
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
  } else if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
    check_failed++;
    fprintf(stderr, "misuse case %s: status %d\n", what, status);
  } else {
    check_passed++;
  }
}

#endif
