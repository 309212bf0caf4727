/*
 * common/scratch.c — see scratch.h.
 */
#include "common/scratch.h"

#include "common/resources.h"
#include "core/error.h"
#include "core/mkdirs.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

hs_status bench_base_dir(const char *dir_flag, const char *tag, char *tmp, size_t len,
                         const char **base) {
  if (dir_flag) {
    hs_status st = make_dirs(dir_flag, 0700, "the directory");
    if (st != HS_OK) return st;
    *base = dir_flag;
    return HS_OK;
  }
  hs_status st = bench_tempdir_make(tag, tmp, len);
  if (st == HS_OK) *base = tmp;
  return st;
}

hs_status bench_tempdir_make(const char *tag, char *buf, size_t len) {
  const char *tmp = bench_tempdir_parent();
  int n = snprintf(buf, len, "%s/hotset-%s-XXXXXX", tmp, tag);
  if (n < 0 || (size_t)n >= len)
    return hs_fail(HS_ERR_INVALID, 0, "temporary directory name under %s is too long", tmp);
  if (!mkdtemp(buf)) {
    int err = errno;
    return hs_fail(hs_status_from_errno(err), err, "creating a directory %s: %s", buf,
                   strerror(err));
  }
  return HS_OK;
}

/* nftw offers no context pointer; the first failure is kept here. The
 * removal runs on one thread at the end of a command, so a static is fine. */
static int remove_errno;
static char remove_failed_path[512];

static int remove_cb(const char *path, const struct stat *sb, int type, struct FTW *ftw) {
  (void)sb;
  (void)type;
  (void)ftw;
  if (remove(path) != 0 && remove_errno == 0) {
    remove_errno = errno;
    snprintf(remove_failed_path, sizeof remove_failed_path, "%s", path);
  }
  return 0; /* go on: remove as much as we can */
}

hs_status bench_tempdir_remove(const char *dir) {
  remove_errno = 0;
  if (nftw(dir, remove_cb, 16, FTW_DEPTH | FTW_PHYS) != 0) {
    int err = errno;
    return hs_fail(hs_status_from_errno(err), err, "removing %s: %s", dir, strerror(err));
  }
  if (remove_errno)
    return hs_fail(hs_status_from_errno(remove_errno), remove_errno, "removing %s: %s",
                   remove_failed_path, strerror(remove_errno));
  return HS_OK;
}
