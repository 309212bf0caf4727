/*
 * cli/evidence.c — the log directory's evidence (cli/evidence.h).
 */
#include "cli/evidence.h"

#include <ftw.h>
#include <string.h>
#include <sys/stat.h>

bool evidence_name(const char *name) {
  return strncmp(name, "kept-", 5) == 0 || strncmp(name, "reset-", 6) == 0;
}

/* nftw gives its callback no context: one walk at a time, on one thread. */
static uint64_t walked_bytes;

static int add_bytes(const char *path, const struct stat *sb, int type, struct FTW *ftw) {
  (void)path;
  (void)ftw;
  if (type == FTW_F) walked_bytes += (uint64_t)sb->st_size;
  return 0;
}

uint64_t evidence_bytes(const char *path) {
  walked_bytes = 0;
  nftw(path, add_bytes, 16, FTW_PHYS);
  return walked_bytes;
}
