/*
 * common/scratch.h — the directory a lab run works in: the one --dir names,
 * or a fresh temporary one it removes.
 */
#ifndef HOTSET_LAB_COMMON_SCRATCH_H
#define HOTSET_LAB_COMMON_SCRATCH_H

#include "hotset/status.h"

#include <stddef.h>

/* ---- scratch directories ---- */

/* Creates a fresh directory $TMPDIR/hotset-<tag>-XXXXXX (or under /tmp) and
 * writes its path to buf. */
hs_status bench_tempdir_make(const char *tag, char *buf, size_t len);
/* Removes `dir` and everything under it (without following symlinks). */
hs_status bench_tempdir_remove(const char *dir);
/* The directory a benchmark runs in: `dir_flag` (its --dir), created if
 * missing and kept, or a fresh temporary one written to tmp (the caller
 * removes it). *base points at whichever it is. */
hs_status bench_base_dir(const char *dir_flag, const char *tag, char *tmp, size_t len,
                         const char **base);

#endif
