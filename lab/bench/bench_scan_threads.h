/*
 * bench/bench_scan_threads.h — the threads of one scan-lab cell and what
 * they share with the cell that runs them (bench_scan_cell.c).
 */
#ifndef HOTSET_BENCH_BENCH_SCAN_THREADS_H
#define HOTSET_BENCH_BENCH_SCAN_THREADS_H

#include "bench/bench_scan_internal.h"
#include "bench/latency_hist.h"
#include "hotset/wal.h"

#include <pthread.h>
#include <stdalign.h>

/* A cell with a scan goes SETTLE (OLTP alone, unpaced) -> WARMUP (scanners
 * too) -> MEASURE -> STOP; a baseline starts at WARMUP. */
enum { PHASE_WARMUP = 0, PHASE_MEASURE, PHASE_STOP, PHASE_SETTLE };

/* What one cell's threads share. */
typedef struct cell_shared {
  const scan_bench *b;
  hs_pool *pool;
  scan_wal *wal; /* the counter (--wal counter), or NULL */
  hs_wal *log;   /* hotset's log (--wal log), or NULL */
  scan_kind scan;
  bool ring;
  const hs_strategy_options *ring_cfg; /* the cell's ring spec */
  /* The start gate: threads wait until `go` (pthread barriers cannot be
   * released early when creating a thread fails). */
  pthread_mutex_t gate_lock;
  pthread_cond_t gate;
  bool go;
  bool scan_go; /* scanners start after the OLTP clients have settled */
  _Atomic int phase;
  pthread_mutex_t err_lock;
  _Atomic bool failed;
  char err[768]; /* the first error, copied: hs_last_error is per thread */
} cell_shared;

/* Aligned to a cache line (each thread writes its own counters on every
 * operation; neighbours must not share a line). */
typedef struct worker {
  alignas(64) cell_shared *sh;
  uint32_t id;
  bool scanner;
  pthread_t tid;
  int seen_phase;
  uint64_t t_start, t_end; /* the measured interval (t_start 0: none) */
  uint64_t ops, hits, updates, bytes;
  uint64_t miss_ns;       /* OLTP: the time spent in reads that missed */
  _Atomic uint64_t pages; /* scanners: pages read since the cell began */
  uint32_t ring_buffers;
  latency_hist hist;
} worker;

/* Thread bodies (pthread_create): an OLTP client, a scanner of the cell's
 * kind. Each waits at the gate (`go`; a scanner also `scan_go`). */
void *scan_oltp_main(void *arg);
void *scan_scanner_main(void *arg);

/* Opens a gate flag (sh->go or sh->scan_go) for every waiting thread. */
void scan_gate_open(cell_shared *sh, bool *flag);

#endif
