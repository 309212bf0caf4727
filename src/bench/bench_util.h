/*
 * bench/bench_util.h — small helpers shared by the benchmarks and the demo:
 * a monotonic clock, a fast deterministic per-thread PRNG, a scratch data
 * directory, and a relation of N stamped pages.
 *
 * They live apart from the benchmarks so that each benchmark file is only
 * about what it measures, and so that later benchmarks (scan, vacuum, ...)
 * build relations and directories the same way.
 */
#ifndef HOTSET_BENCH_UTIL_H
#define HOTSET_BENCH_UTIL_H

#include "hotset/status.h"
#include "hotset/storage.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- time ---- */

/* CLOCK_MONOTONIC in nanoseconds: immune to wall-clock steps. */
uint64_t bench_now_ns(void);
/* Sleeps `seconds` (fractional), resuming after signals. */
void bench_sleep(double seconds);

/* ---- random numbers ---- */

/* xoshiro256** (Blackman & Vigna): a few ns per number, 256 bits of state,
 * good enough statistics for picking blocks. One per thread: sharing one would
 * put a contended cache line into the very loop being measured. */
typedef struct bench_rng {
  uint64_t s[4];
} bench_rng;

/* Seeds from (seed, stream) through splitmix64, so thread i of a run with a
 * given --seed always draws the same sequence. */
void bench_rng_seed(bench_rng *r, uint64_t seed, uint64_t stream);
uint64_t bench_rng_next(bench_rng *r);
/* Uniform in [0, n), n > 0 (Lemire's multiply-shift; the bias for n < 2^32
 * is below 2^-32, far under anything a benchmark could notice). */
uint32_t bench_rng_below(bench_rng *r, uint32_t n);
/* Uniform in [0, 1). */
double bench_rng_double(bench_rng *r);

/* ---- scratch directories ---- */

/* Creates a fresh directory $TMPDIR/hotset-<tag>-XXXXXX (or under /tmp) and
 * writes its path to buf. */
hs_status bench_tempdir_make(const char *tag, char *buf, size_t len);
/* Removes `dir` and everything under it (without following symlinks). */
hs_status bench_tempdir_remove(const char *dir);

/* ---- stamped relations ---- */

/* Page layout of a stamped page (little header at the start of the page; the
 * rest is zeros). The stamp lets every reader check it got the page it asked
 * for; the demo keeps an LSN and an update count in the header as well. */
#define BENCH_PAGE_OFF_BLOCK   0  /* uint32: the block number */
#define BENCH_PAGE_OFF_REL     4  /* uint32: the relation id */
#define BENCH_PAGE_OFF_LSN     8  /* uint64: LSN of the last change (demo) */
#define BENCH_PAGE_OFF_UPDATES 16 /* uint64: number of changes (demo) */
#define BENCH_PAGE_HEADER      24

/* Writes the stamp of (rel, block) into a zeroed page header. */
void bench_page_stamp(void *page, hs_relid rel, hs_blockno block);
/* True if the page carries the stamp of (rel, block). */
bool bench_page_check(const void *page, hs_relid rel, hs_blockno block);
/* The block number a page is stamped with (for messages). */
hs_blockno bench_page_block(const void *page);

uint64_t bench_page_get_u64(const void *page, size_t off);
void bench_page_set_u64(void *page, size_t off, uint64_t v);

/* Makes the main fork of `rel` exactly `npages` stamped pages long: creates
 * it if missing, otherwise truncates it to zero first (a directory reused
 * with --dir must not keep pages of an earlier, differently sized run). */
hs_status bench_make_relation(hs_smgr *smgr, hs_relid rel, hs_blockno npages);

#endif
