/*
 * common/resources.c — see resources.h.
 */
#include "common/resources.h"

#include "core/error.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

/* ---- resource checks ---- */

char *bench_format_bytes(uint64_t bytes, char *buf, size_t len) {
  static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) {
    snprintf(buf, len, "%llu B", (unsigned long long)bytes);
    return buf;
  }
  double v = (double)bytes / 1024;
  int u = 0;
  while (v >= 1024 && u < 5) {
    v /= 1024;
    u++;
  }
  snprintf(buf, len, "%.1f %s", v, units[u]);
  return buf;
}

const char *bench_huge_used_name(hs_huge_pages_used used) {
  return used == HS_HUGE_PAGES_EXPLICIT      ? "explicit"
         : used == HS_HUGE_PAGES_TRANSPARENT ? "transparent"
                                             : "none";
}

const char *bench_tempdir_parent(void) {
  const char *tmp = getenv("TMPDIR");
  return tmp && *tmp ? tmp : "/tmp";
}

hs_status bench_check_space(const char *dir, uint64_t need, const char *what) {
  /* A --dir that does not exist yet will be made in its nearest existing
   * parent: that file system is the one to ask. */
  char path[4096];
  if ((size_t)snprintf(path, sizeof path, "%s", dir) >= sizeof path)
    return hs_fail(HS_ERR_INVALID, 0, "the directory path %.64s... is longer than %zu characters",
                   dir, sizeof path - 1);
  struct stat sb;
  while (stat(path, &sb) != 0) {
    char *slash = strrchr(path, '/');
    while (slash && slash > path && slash[1] == '\0') { /* trailing slashes */
      *slash = '\0';
      slash = strrchr(path, '/');
    }
    if (!slash) {
      snprintf(path, sizeof path, ".");
      break;
    }
    if (slash == path) {
      path[1] = '\0'; /* the root */
      break;
    }
    *slash = '\0';
  }
  struct statvfs vfs;
  if (statvfs(path, &vfs) != 0) {
    int err = errno;
    return hs_fail(hs_status_from_errno(err), err, "asking how much space %s has: %s", path,
                   strerror(err));
  }
  uint64_t avail = (uint64_t)vfs.f_bavail * (uint64_t)vfs.f_frsize;
  if (need <= avail && avail - need >= BENCH_SPACE_SPARE) return HS_OK;
  char n[32], f[32];
  return hs_fail(HS_ERR_NOSPACE, ENOSPC, "needs %s in %s for %s, %s free",
                 bench_format_bytes(need, n, sizeof n), dir, what,
                 bench_format_bytes(avail, f, sizeof f));
}

hs_status bench_check_memory(uint64_t need, const char *what) {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return HS_OK; /* cannot tell: let the allocation decide */
  uint64_t phys = (uint64_t)pages * (uint64_t)page;
  if (need <= phys / 2) return HS_OK;
  char n[32], p[32];
  return hs_fail(HS_ERR_NOMEM, ENOMEM,
                 "needs %s of memory for %s, more than half of the %s of physical memory",
                 bench_format_bytes(need, n, sizeof n), what,
                 bench_format_bytes(phys, p, sizeof p));
}
