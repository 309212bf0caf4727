/*
 * bench/bench_util.h — small helpers shared by the benchmarks and `hotset
 * workload`: a monotonic clock, a fast deterministic per-thread PRNG, a
 * scratch data directory, a relation of N stamped pages, the raw read rate
 * of a file, and the alignment O_DIRECT needs on a file.
 *
 * They live apart from the benchmarks so that each benchmark file is only
 * about what it measures, and so that later benchmarks (scan, vacuum, ...)
 * build relations and directories the same way.
 */
#ifndef HOTSET_BENCH_UTIL_H
#define HOTSET_BENCH_UTIL_H

#include "hotset/pool.h"
#include "hotset/status.h"
#include "hotset/storage.h"
#include "hotset/wal.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- time ---- */

/* CLOCK_MONOTONIC in nanoseconds: immune to wall-clock steps. */
uint64_t bench_now_ns(void);
/* Sleeps `seconds` (fractional), resuming after signals, but returns early
 * once bench_interrupted() is set: it sleeps in slices of at most
 * BENCH_SLEEP_SLICE seconds, so a main thread waiting out a measurement
 * notices a SIGTERM whichever thread the kernel delivered it to. */
#define BENCH_SLEEP_SLICE 0.05
void bench_sleep(double seconds);
/* CPU time in nanoseconds: of the whole process (every thread, live or
 * exited), of the calling thread, or of another thread of this process
 * (0 if its clock cannot be read). */
uint64_t bench_process_cpu_ns(void);
uint64_t bench_thread_cpu_ns(void);
uint64_t bench_other_thread_cpu_ns(pthread_t thread);

/* ---- interruption ---- */

/* The benchmarks and `hotset workload` make scratch directories and relations that a
 * Ctrl-C or a SIGTERM must not leave behind. bench_signals_install (call it
 * after parsing the flags, before making anything) sets handlers for SIGINT,
 * SIGTERM and SIGHUP that only record the signal (async-signal-safe); the
 * commands' loops and sleeps look at bench_interrupted() and leave by their
 * normal cleanup path, which ends with bench_exit_interrupted. A signal that
 * was ignored when the program started (nohup, a shell's background job)
 * stays ignored. A second signal of the same kind kills at once (the
 * handlers are one-shot): the way out when cleaning up takes too long. */
void bench_signals_install(void);
/* The signal number received, or 0. */
int bench_interrupted(void);
/* Prints "<prog>: interrupted by SIG..." and ends the process by the signal
 * itself, so the parent sees the usual status (128 + the signal in a
 * shell). Call it after cleaning up. */
_Noreturn void bench_exit_interrupted(const char *prog);

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

/* The flag-table entries (cli/args.h) every tool that makes relations has,
 * written once: the page size and the data directory. */
#define BENCH_OPT_PAGE_SIZE(dest_)                                                                 \
  {                                                                                                \
    .name = "page-size", .kind = ARGS_SIZE, .dest = (dest_), .power_of_two = true,                 \
    .min = HS_PAGE_SIZE_MIN, .max = HS_PAGE_SIZE_MAX, .def = "8KiB",                               \
    .help = "page size, a power of two from 1KiB to 64KiB"                                         \
  }
/* --page-size for a tool that opens an existing data directory: no
 * default in the table (dest starts 0), so bench_dir_page_size can tell a
 * size asked for from one left to the directory. */
#define BENCH_OPT_DIR_PAGE_SIZE(dest_)                                                             \
  {                                                                                                \
    .name = "page-size", .kind = ARGS_SIZE, .dest = (dest_), .power_of_two = true,                 \
    .min = HS_PAGE_SIZE_MIN, .max = HS_PAGE_SIZE_MAX,                                              \
    .help = "page size, a power of two from 1KiB to 64KiB (default: the data directory's, from "   \
            "its control file; 8KiB for a new one)"                                                \
  }
#define BENCH_OPT_DIR(dest_)                                                                       \
  {                                                                                                \
    .name = "dir", .kind = ARGS_PATH, .dest = (dest_), .max = BENCH_DIR_MAX, .arg = "DIR",         \
    .help = "data directory to use (created with its parents if missing, never removed) instead "  \
            "of a temporary one"                                                                   \
  }
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

/* The --segment flag of the benchmarks that open a log (an args_opt
 * initializer; needs cli/args.h and hotset/wal.h). */
#define BENCH_SEGMENT_FLAG(dest_ptr)                                                               \
  {                                                                                                \
    .name = "segment", .kind = ARGS_SIZE, .dest = (dest_ptr), .min = HS_WAL_MIN_SEGMENT,           \
    .max = HS_WAL_MAX_SEGMENT, .power_of_two = true, .def = "16MiB",                               \
    .help = "the log's segment size, a power of two from 64KiB to 1GiB"                            \
  }

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

/* ---- raw read rate ---- */

/* What the file system gives one thread reading a file from the page cache:
 * the ceiling a scan through the pool is held against. */
typedef struct bench_raw_rate {
  double mb_per_sec;     /* 10^6 bytes per second of wall time */
  double mb_per_cpu_sec; /* ... per second of the reading thread's CPU time
                            (above the first when it was preempted) */
} bench_raw_rate;

/* Reads the file at `path` into a `buf_bytes` buffer, `io` bytes per pread
 * (io == buf_bytes: big reads; a page size: one page at a time cycling
 * through the buffer the way a ring does): one untimed pass to bring it into
 * the page cache, then timed passes for at least `seconds` (one pass over a
 * cached 256 MiB takes some 15 ms: a rate from one or two of them moves by a
 * quarter from run to run). Fails (hs_fail) on an I/O error or when
 * bench_interrupted() is set.
 *
 * With `direct` the reads use O_DIRECT: the device's rate for reads of
 * `io` bytes, with no untimed pass (there is no cache to fill) and the clock
 * checked inside a pass, since one pass over a big file at a device's
 * page-at-a-time rate can take seconds; io must then be a multiple of the
 * file system's direct I/O alignment. */
hs_status bench_raw_read_rate(const char *path, uint32_t io, uint32_t buf_bytes, double seconds,
                              bool direct, bench_raw_rate *rate);

/* ---- direct I/O ---- */

/* The alignment O_DIRECT needs on `fd`, for offsets, lengths and buffers:
 * the larger of storage/direct_io.h's dio_alignment (statx STATX_DIOALIGN),
 * or 4096 where the file system does no direct I/O on it (a page:
 * what every device accepts). (The file system's name for messages is
 * storage/direct_io.h's dio_fs_name.) */
uint32_t bench_dio_align(int fd);

#endif
