/*
 * wal/wal_names.c — which names of the log directory the log may write
 * through.
 *
 * A segment file must have exactly one name. hotset before 0.2 recycled an
 * old segment by link() to its future name, then unlink() of the old one;
 * a crash between the two (SIGKILL), or a power cut that kept the link but
 * lost the unlink, left one file under two names. The next checkpoint then
 * gave the old name a second future name: two future segments were one
 * file, and when the log reached the second it overwrote the first — the
 * last checkpoint and acknowledged commits with it. Recycling now renames
 * (never two names at any moment), and a file found under two names is
 * repaired before anything writes:
 *
 *  - the name its header gives is its own: the log wrote through it, or it
 *    is the name it had before recycling (a spare's header still names its
 *    old start);
 *  - with no name matching the header (zeros, damaged), its lowest name is
 *    its own: future names are always above the name a segment had, and
 *    a segment the log wrote through has a header naming it;
 *  - every other name is extra, and removed — no byte is lost, since the
 *    file keeps its own name — just before the log's first write.
 *
 * Reading needs no repair: a reader from the oldest segment skips a
 * segment whose header names another start (wal_reader.c), and an extra
 * name above the end is where a spare would be — the end.
 */
#include "core/error.h"
#include "core/sysio.h"
#include "wal/wal_format.h"
#include "wal/wal_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct named_file {
  uint64_t start; /* the name */
  dev_t dev;
  ino_t ino;
  bool own; /* this name is the file's own */
} named_file;

static int by_inode(const void *a, const void *b) {
  const named_file *x = a, *y = b;
  if (x->dev != y->dev) return x->dev < y->dev ? -1 : 1;
  if (x->ino != y->ino) return x->ino < y->ino ? -1 : 1;
  return x->start < y->start ? -1 : x->start > y->start;
}

/* The start the header of the segment named `start` gives, if valid. */
static bool header_start(const char *dir, uint64_t start, uint64_t *named) {
  wal_seg_header_kind kind;
  wal_seg_header h;
  bool valid = wal_segment_header(dir, start, &kind, &h) == HS_OK && kind == WAL_SEG_VALID;
  if (valid) *named = h.start;
  return valid;
}

hs_status wal_find_extra_names(const char *dir, uint64_t segment_bytes, uint64_t **extra,
                               size_t *n) {
  *extra = NULL;
  *n = 0;
  uint64_t *starts;
  size_t count;
  hs_status st = wal_segment_list(dir, segment_bytes, &starts, &count);
  if (st != HS_OK || count < 2) {
    free(starts);
    return st;
  }
  named_file *files = calloc(count, sizeof *files);
  uint64_t *out = calloc(count, sizeof *out);
  if (!files || !out) {
    free(files);
    free(out);
    free(starts);
    return hs_fail(HS_ERR_NOMEM, ENOMEM, "no memory listing the names of %s", dir);
  }
  size_t nfiles = 0;
  for (size_t i = 0; i < count; i++) {
    char path[4200];
    wal_segment_path(dir, starts[i], path, sizeof path);
    struct stat sb;
    if (lstat(path, &sb) != 0) {
      st = wal_sys_fail(HS_ERR_IO, errno, "%s: cannot look at the log segment", path);
      break;
    }
    if (sb.st_nlink < 2 || !S_ISREG(sb.st_mode)) continue; /* one name: nothing to decide */
    files[nfiles++] = (named_file){.start = starts[i], .dev = sb.st_dev, .ino = sb.st_ino};
  }
  free(starts);
  if (st == HS_OK) qsort(files, nfiles, sizeof *files, by_inode);
  /* Each run of one inode: its own name, then the others are extra. */
  for (size_t i = 0; st == HS_OK && i < nfiles;) {
    size_t j = i;
    while (j < nfiles && files[j].dev == files[i].dev && files[j].ino == files[i].ino) j++;
    if (j - i > 1) {
      uint64_t named = 0;
      size_t own = i; /* the lowest name, sorted first in the run */
      if (header_start(dir, files[i].start, &named))
        for (size_t k = i; k < j; k++)
          if (files[k].start == named) own = k;
      for (size_t k = i; k < j; k++)
        if (k != own) out[(*n)++] = files[k].start;
    }
    i = j;
  }
  free(files);
  if (st != HS_OK || *n == 0) {
    free(out);
    *n = 0;
    return st;
  }
  *extra = out;
  return HS_OK;
}

hs_status wal_remove_extra_names(hs_wal *w) {
  hs_status st = HS_OK;
  size_t removed = 0;
  for (size_t i = 0; i < w->n_extra_names && st == HS_OK; i++) {
    char path[4200];
    wal_segment_path(w->dir, w->extra_names[i], path, sizeof path);
    struct stat sb;
    /* Still a second name (nothing else ran here: the log directory is
     * locked): removing it loses no byte. */
    if (lstat(path, &sb) != 0 || sb.st_nlink < 2) continue;
    if (sys_unlink(path) != 0)
      st = wal_sys_fail(HS_ERR_IO, errno, "%s: cannot remove a second name of a log segment", path);
    else
      removed++;
  }
  if (st == HS_OK && removed) st = wal_sync_dir(w->dir);
  if (st == HS_OK) w->n_extra_names = 0;
  return st;
}

hs_status wal_own_segments_after(const char *dir, uint64_t segment_bytes, uint64_t seg,
                                 uint64_t **out, size_t *n) {
  *out = NULL;
  *n = 0;
  uint64_t *starts;
  size_t count;
  hs_status st = wal_segment_list(dir, segment_bytes, &starts, &count);
  if (st != HS_OK) return st;
  for (size_t i = 0; i < count && st == HS_OK; i++) {
    if (starts[i] <= seg) continue;
    wal_seg_header_kind kind;
    wal_seg_header h;
    st = wal_segment_header(dir, starts[i], &kind, &h);
    if (st != HS_OK) break;
    if (kind == WAL_SEG_DAMAGED || (kind == WAL_SEG_VALID && h.start == starts[i]))
      starts[(*n)++] = starts[i];
  }
  if (st != HS_OK || *n == 0) {
    free(starts);
    *n = 0;
    return st;
  }
  *out = starts;
  return HS_OK;
}
