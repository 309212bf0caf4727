/*
 * common/stamped.h — relations of stamped pages (each page says which
 * relation and block it is, so every reader checks it got the right one),
 * and the small logged changes the lab's workloads make to them.
 */
#ifndef HOTSET_LAB_COMMON_STAMPED_H
#define HOTSET_LAB_COMMON_STAMPED_H

#include "hotset/status.h"
#include "hotset/storage.h"
#include "hotset/wal.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- stamped relations ---- */

/* Page layout of a stamped page (little header at the start of the page; the
 * rest is zeros). The stamp lets every reader check it got the page it asked
 * for; the workload and the scan lab keep an LSN and an update count in the header as well. */
#define BENCH_PAGE_OFF_BLOCK   0  /* uint32: the block number */
#define BENCH_PAGE_OFF_REL     4  /* uint32: the relation id */
#define BENCH_PAGE_OFF_LSN     8  /* uint64: LSN of the last change (updates) */
#define BENCH_PAGE_OFF_UPDATES 16 /* uint64: number of changes (updates) */
#define BENCH_PAGE_HEADER      24

/* Writes the stamp of (rel, block) into a zeroed page header. */
void bench_page_stamp(void *page, hs_relid rel, hs_blockno block);
/* True if the page carries the stamp of (rel, block). */
bool bench_page_check(const void *page, hs_relid rel, hs_blockno block);
/* The block number a page is stamped with (for messages). */
hs_blockno bench_page_block(const void *page);

uint64_t bench_page_get_u64(const void *page, size_t off);
void bench_page_set_u64(void *page, size_t off, uint64_t v);

/* Logs a change of (rel, main fork, blk) in `log`: one record of
 * BENCH_LOG_RECORD bytes in all (header, the page reference, the block
 * number as payload), the size of a small heap update's record. *lsn is
 * the record's end, what the page is stamped with. */
#define BENCH_LOG_RECORD 64u
/* Opens a fresh log (default options) in <dir>/wal, its path left in
 * logdir: whatever an earlier run left there (a reused --dir) is removed
 * first. */
/* The page size to open data directory `dir` with: its control file's
 * when *page_size is 0 (not given; 8 KiB without a control file), else
 * *page_size, which must then agree with the control file (an error names
 * both). */
hs_status bench_dir_page_size(const char *dir, uint64_t *page_size);
hs_status bench_log_open_fresh(const char *dir, char *logdir, size_t len, hs_wal **out);
hs_status bench_log_change(hs_wal *log, hs_relid rel, hs_blockno blk, hs_lsn *lsn);

/* Makes the main fork of `rel` exactly `npages` stamped pages long: creates
 * it if missing, otherwise truncates it to zero first (a directory reused
 * with --dir must not keep pages of an earlier, differently sized run).
 * Stops early, failing, when bench_interrupted() is set. */
hs_status bench_make_relation(hs_smgr *smgr, hs_relid rel, hs_blockno npages);
/* The same for any fork of `rel`. */
hs_status bench_make_relation_fork(hs_smgr *smgr, hs_relid rel, hs_fork fork, hs_blockno npages);

#endif
