/*
 * tests/support/traces_dir.h — where the tests find the sample traces, one rule
 * for every test (the shell tests' is traces_dir in tests/support/cli_lib.sh):
 *
 *   $HOTSET_TRACES, if set (and then only it: a directory given is the one
 *   meant); else REPO/../shared/traces; else REPO/../traces.
 *
 * A test that finds none skips the checks that need them with one line
 *   SKIPPED: <what> (looked in: <each path>; set HOTSET_TRACES=DIR)
 * so that the reader knows where to put them.
 */
#ifndef HOTSET_TESTS_TRACES_DIR_H
#define HOTSET_TESTS_TRACES_DIR_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* s at the end of buf (len bytes in all), cut if it does not fit. */
static inline void traces_append(char *buf, size_t len, const char *s) {
  size_t used = strlen(buf), n = strlen(s);
  if (used + n >= len) n = len - used - 1;
  memcpy(buf + used, s, n);
  buf[used + n] = 0;
}

/* The first directory of the rule that exists, into dir (true); or false,
 * with every path looked at, comma-separated, in looked. */
static inline bool traces_dir(const char *repo, char *dir, size_t dir_len, char *looked,
                              size_t looked_len) {
  const char *env = getenv("HOTSET_TRACES");
  char candidates[2][4096];
  int n = 0;
  if (env && *env) {
    snprintf(candidates[n++], sizeof candidates[0], "%s", env);
  } else {
    snprintf(candidates[n++], sizeof candidates[0], "%s/../shared/traces", repo);
    snprintf(candidates[n++], sizeof candidates[0], "%s/../traces", repo);
  }
  looked[0] = 0;
  for (int i = 0; i < n; i++) {
    struct stat st;
    size_t len = strlen(candidates[i]);
    if (len < dir_len && stat(candidates[i], &st) == 0 && S_ISDIR(st.st_mode)) {
      memcpy(dir, candidates[i], len + 1);
      return true;
    }
    if (i) traces_append(looked, looked_len, ", ");
    traces_append(looked, looked_len, candidates[i]);
  }
  return false;
}

#endif
