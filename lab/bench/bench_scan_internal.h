/*
 * bench/bench_scan_internal.h — what the files of `hotset bench scan` share.
 *
 * The lab is split along its seams:
 *   bench_scan.c          flags, the matrix of cells, main
 *   bench_scan_cell.c     one cell: a fresh pool, its phases, its numbers
 *   bench_scan_threads.c  the threads of a cell: paced OLTP clients and the
 *                         sequential, index and vacuum scanners
 *   bench_scan_report.c   the table, its conclusion, JSON, the vacuum table,
 *                         the progress line and the plot
 *   raw_read.c            the raw read rate the scans are held against
 * Nothing is kept in file-level or function-level variables: everything a
 * run knows is in one scan_bench, passed down.
 */
#ifndef HOTSET_BENCH_BENCH_SCAN_INTERNAL_H
#define HOTSET_BENCH_BENCH_SCAN_INTERNAL_H

#include "bench/raw_read.h"
#include "common/args.h"
#include "common/clock.h"
#include "common/flags.h"
#include "common/interrupt.h"
#include "common/resources.h"
#include "common/rng.h"
#include "common/scratch.h"
#include "common/stamped.h"
#include "hotset/pool.h"
#include "hotset/strategy.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROG           "hotset bench scan"
#define HOT_REL        16384u
#define BIG_REL        16385u
#define HOT_PART       0.2 /* the hot relation's most-read share of blocks */
#define HOT_PART_READS 0.8 /* ... and the share of reads that go there */
#define RAW_CHUNK      (256u * 1024u)
#define MAX_RING_SPECS 32
#define RING_NAME_LEN  64

typedef enum scan_kind { SCAN_NONE = 0, SCAN_SEQ, SCAN_INDEX, SCAN_VACUUM } scan_kind;
extern const char *const scan_kind_names[];

/* One cell of the matrix. */
typedef struct cell {
  int policy; /* index into scan_bench.specs */
  scan_kind scan;
  bool ring;
  int ring_spec; /* with a ring: index into scan_bench.ring_cfgs */
} cell;

typedef struct cell_result {
  double seconds; /* measured time (the OLTP threads' average) */
  uint64_t oltp_ops, oltp_hits, oltp_updates;
  double oltp_ops_per_sec; /* summed over OLTP threads */
  double hit_ratio;
  double p50_us, p99_us;
  double miss_us; /* the OLTP reads that missed: their mean latency */
  uint64_t oltp_misses;
  double hot_share;
  uint64_t scan_bytes;
  double scan_mb_per_sec;
  uint32_t ring_buffers; /* the scanners' ring size at the end (0: no ring) */
  uint64_t evictions, reuses, wal_flushes, writes;
  uint64_t wal_syncs; /* the log's fdatasyncs in the cell (0 with the counter) */
  double wal_sync_seconds;
  double raw_mb_per_sec; /* the 256 KiB pread rate this cell's scan is held against */
  /* CPU time of the scanners plus the pool's I/O workers over the measured
   * interval, of the scanners alone, and that interval (main's clock). */
  double scan_cpu_seconds, scanner_cpu_seconds, measured_seconds;
  double raw_mb_per_cpu_sec; /* the raw preads' MB per CPU-second of their thread */
} cell_result;

/* The counter standing in for a log (--wal counter): where the next record
 * goes, how far the log is "durable", at no cost. The pool calls
 * scan_wal_flush before writing a dirty page. With --wal log (the default)
 * each cell writes hotset's real log instead (hotset/wal.h). */
typedef struct scan_wal {
  _Atomic uint64_t inserted;
  _Atomic uint64_t flushed;
} scan_wal;

hs_status scan_wal_flush(void *ctx, hs_lsn upto, bool *did_flush);
bool scan_wal_needs_flush(void *ctx, hs_lsn lsn);

/* The progress line: on a terminal only, on stderr. */
typedef struct progress {
  bool on;
  bool printed;
  uint64_t t0;                    /* start of the run */
  uint64_t cells_ns;              /* time spent in finished cells */
  int done, total;                /* cells */
  uint64_t cell_t0;               /* start of the current cell (0: still preparing) */
  double cell_budget;             /* warm-up + measurement of one cell, in seconds */
  char what[ARGS_SPEC_LEN + 104]; /* "<policy>, <cell name>" */
} progress;

/* Everything a run knows: the flags, what follows from them, the run's
 * state and its results. */
typedef struct scan_bench {
  /* flags */
  uint64_t pool_bytes, hot_bytes, big_bytes, page_size, seed, io_combine, io_workers;
  uint64_t oltp_threads, scan_threads, oltp_rate, scan_rate, index_rate;
  double seconds, warmup, warmup_turns, settle, update_ratio;
  const char *policy_flag, *ring_flag, *scan_flag, *ring_size_flag, *dir_flag, *plot_file;
  const char *wal_flag; /* "log" (hotset's write-ahead log) or "counter" */
  bool real_wal;
  bool json;
  const char *io_flag; /* --io: buffered, direct or auto */
  bool direct_flag;    /* --direct: --io direct */
  bool direct;         /* what runs: the pool and the raw reads use O_DIRECT */
  char io_note[512];   /* --io auto fell back to buffered: why */

  /* from the flags */
  char specs[ARGS_LIST_MAX][ARGS_SPEC_LEN];
  int npolicies;
  bool ring_on, ring_off; /* which ring settings seq scans run with */
  scan_kind scans[3];     /* in the order given */
  int nscans;
  /* --ring-size: one ring spec (default "fixed", the kind's own size), or
   * a list, where each ring cell runs once per spec. A list's fixed ring
   * over the cap (1/8 of the pool) for a scan kind is skipped for it,
   * rather than run capped as a copy of the largest ring that fits. */
  hs_strategy_options ring_cfgs[MAX_RING_SPECS];
  char ring_names[MAX_RING_SPECS][RING_NAME_LEN]; /* as the JSON names them */
  bool ring_over[MAX_RING_SPECS][SCAN_VACUUM + 1];
  int nrings;
  bool ring_list;
  uint32_t nbuffers;
  hs_blockno hot_pages, hot_head, big_pages;

  /* the run */
  bench_raw_rate raw;      /* 256 KiB preads */
  bench_raw_rate raw_page; /* page-sized preads into the same buffer */
  char tmpdir[4096];
  const char *dir;
  scan_wal wal;
  progress prog;
  cell *cells; /* in run order */
  cell_result *res;
  int ncells;
} scan_bench;

/* ---- bench_scan_cell.c ---- */

/* Runs one cell. Returns 0, or 1 after printing the error line. */
int scan_run_cell(scan_bench *b, const cell *c, cell_result *r);

/* ---- bench_scan_report.c ---- */

void progress_show(progress *p);
void progress_clear(progress *p);
const char *scan_ring_label(const cell *c);
/* "no scan", "index scan", "seq, ring on" ("seq, ring fixed:64KiB" with a
 * list of rings) ... */
void scan_cell_name(const scan_bench *b, const cell *c, char *buf, size_t len);
void scan_print_header(const scan_bench *b);
void scan_print_row(const scan_bench *b, const cell *c, const cell_result *r);
/* After the last row: what the columns mean, what the run showed, and the
 * vacuum cells' WAL table when there are any. */
void scan_print_footer(const scan_bench *b);
void scan_print_json(const scan_bench *b, const cell *c, const cell_result *r);
/* The cells as bar charts into b->plot_file; 0, or 1 after saying why. */
int scan_plot(const scan_bench *b);

#endif
