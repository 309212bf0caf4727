/*
 * core/mkdirs.c — mkdir -p with a reason (core/mkdirs.h).
 *
 * Each prefix ending at a '/' is created in turn; EEXIST is fine as long as
 * what exists is a directory. The message names the component that could
 * not be made, since "cannot create /a/b/c" alone leaves the user to find
 * out which of the three is missing or read-only.
 */
#include "core/mkdirs.h"

#include "core/error.h"
#include "core/sysio.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static hs_status failed(int err, const char *what, const char *path, const char *part) {
  hs_status st = hs_status_from_errno(err);
  if (st == HS_OK || st == HS_ERR_EXISTS) st = HS_ERR_IO;
  /* The component is named only when it is not the whole path. */
  char where[4200] = "";
  if (strcmp(part, path) != 0) snprintf(where, sizeof where, " (at %s)", part);
  if (st == HS_ERR_NOSPACE)
    return hs_fail(st, err, "creating %s %s%s: the disk is full (%s)", what, path, where,
                   strerror(err));
  return hs_fail(st, err, "creating %s %s%s: %s", what, path, where, strerror(err));
}

hs_status make_dirs(const char *path, mode_t mode, const char *what) {
  char buf[4096];
  size_t len = strlen(path);
  if (len == 0 || len >= sizeof buf)
    return hs_fail(HS_ERR_INVALID, 0, "creating %s: the path \"%s\" is empty or too long", what,
                   path);
  memcpy(buf, path, len + 1);
  while (len > 1 && buf[len - 1] == '/') buf[--len] = 0;
  for (size_t i = 1; i <= len; i++) {
    if (buf[i] != '/' && buf[i] != 0) continue;
    char saved = buf[i];
    buf[i] = 0;
    if (sys_mkdir(buf, mode) != 0) {
      int err = errno;
      struct stat sb;
      if (err != EEXIST) return failed(err, what, path, buf);
      if (stat(buf, &sb) != 0) return failed(errno, what, path, buf);
      if (!S_ISDIR(sb.st_mode)) return failed(ENOTDIR, what, path, buf);
    }
    buf[i] = saved;
  }
  return HS_OK;
}
