/*
 * bench/raw_read.h — the rate the file system gives one thread reading a
 * file, the ceiling a scan through the pool is held against, and the
 * alignment O_DIRECT needs.
 */
#ifndef HOTSET_LAB_BENCH_RAW_READ_H
#define HOTSET_LAB_BENCH_RAW_READ_H

#include "hotset/status.h"

#include <stdbool.h>
#include <stdint.h>

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
