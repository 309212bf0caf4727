/*
 * tests/testdir.h — a fresh temporary data directory per test, removed at
 * the end (unless HOTSET_KEEP_TESTDIR is set, for post-mortems).
 */
#ifndef HOTSET_TESTS_TESTDIR_H
#define HOTSET_TESTS_TESTDIR_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int testdir_unlink_cb(const char *path, const struct stat *sb, int type, struct FTW *ftw) {
  (void)sb;
  (void)type;
  (void)ftw;
  return remove(path);
}

/* Creates $TMPDIR/hotset-<name>-XXXXXX into buf; exits on failure. */
static inline void testdir_make(char *buf, size_t len, const char *name) {
  const char *tmp = getenv("TMPDIR");
  snprintf(buf, len, "%s/hotset-%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", name);
  if (!mkdtemp(buf)) {
    perror("mkdtemp");
    exit(1);
  }
}

static inline void testdir_remove(const char *dir) {
  if (getenv("HOTSET_KEEP_TESTDIR")) return;
  nftw(dir, testdir_unlink_cb, 16, FTW_DEPTH | FTW_PHYS);
}

#endif
