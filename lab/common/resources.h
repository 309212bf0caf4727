/*
 * common/resources.h — checks of disk space and memory before a run makes
 * its files, and byte counts for people.
 */
#ifndef HOTSET_LAB_COMMON_RESOURCES_H
#define HOTSET_LAB_COMMON_RESOURCES_H

#include "hotset/pool.h"
#include "hotset/status.h"

#include <stddef.h>
#include <stdint.h>

/* ---- resource checks ---- */

/* Refusing at once beats writing tens of GB and failing with ENOSPC (or
 * being killed for memory) a minute later. Each returns HS_OK or fails
 * (hs_fail) with one line fit to follow "<prog>: ", e.g. "needs 1.0 TiB in
 * /tmp for its relations, 53.2 GiB free". */

/* `need` bytes of files under `dir`, or under its nearest existing parent
 * when `dir` does not exist yet; `what` says what they are for. Leaves
 * BENCH_SPACE_SPARE bytes free besides, for everyone else on the disk. */
#define BENCH_SPACE_SPARE (64ull << 20)
hs_status bench_check_space(const char *dir, uint64_t need, const char *what);

/* The longest --dir the tools take: paths are built in fixed buffers beside
 * it, and no file system path is longer than PATH_MAX (4096) anyway. */
#define BENCH_DIR_MAX 3900

/* `need` bytes of memory for `what` (pools): at most half the machine's
 * physical memory (sysconf(_SC_PHYS_PAGES)). */
hs_status bench_check_memory(uint64_t need, const char *what);
/* Where bench_tempdir_make puts its directories: $TMPDIR, or /tmp. */
const char *bench_tempdir_parent(void);
/* A byte count for people: "512 B", "8.0 KiB", "53.2 GiB", "1.0 TiB". */
char *bench_format_bytes(uint64_t bytes, char *buf, size_t len);

/* What big_alloc gave a region (hotset/pool.h's hs_huge_pages_used), as
 * the JSON lines name it: "none", "transparent" or "explicit". */
const char *bench_huge_used_name(hs_huge_pages_used used);

#endif
