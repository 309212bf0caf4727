/*
 * bench/bench_vacuum_internal.h — what the vacuum lab's files share: the
 * run's settings, one cell's settings and figures, and the foreground
 * clients (bench_vacuum_fg.c) the cells run vacuum beside.
 */
#ifndef HOTSET_BENCH_BENCH_VACUUM_INTERNAL_H
#define HOTSET_BENCH_BENCH_VACUUM_INTERNAL_H

#include "bench/latency_hist.h"
#include "common/clock.h"
#include "common/flags.h"
#include "common/interrupt.h"
#include "common/resources.h"
#include "common/rng.h"
#include "common/scratch.h"
#include "common/stamped.h"
#include "hotset/heap.h"
#include "hotset/strategy.h"
#include "hotset/vacuum.h"

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>

#define VAC_ROW_BYTES   100u /* pgbench_accounts' rows: a key and ~90 bytes */
#define VAC_MAX_CELLS   64
#define VAC_MAX_CLIENTS 64
/* The table's size when --table is not given, as a multiple of the pool:
 * twice it by default (a run of about 2 to 3 minutes on 2 vCPUs), five
 * times with --full (the lab's size until 2026-12-05, about 5 minutes). */
#define VAC_TABLE_DEFAULT "2x"
#define VAC_TABLE_FULL    "5x"

typedef enum vac_fg_mode { VAC_FG_PACED = 0, VAC_FG_UNPACED } vac_fg_mode;

/* What a cell runs beside the clients: vacuum, or one of the calibration
 * windows of --calibrate (bench_vacuum_calibrate.c). */
typedef enum vac_cell_kind {
  VAC_CELL_VACUUM = 0,
  VAC_CELL_ALONE,
  VAC_CELL_IDLE_SPIN
} vac_cell_kind;

/* One cell: how vacuum ran, and what it and the foreground measured. */
typedef struct vac_cell {
  /* settings */
  vac_cell_kind kind;
  vac_fg_mode fg;
  char ring[48]; /* as given: "256KiB", "adaptive", "off" */
  hs_strategy_options ring_config;
  double cost_delay_ms;
  bool throttle_auto;
  /* vacuum */
  double vacuum_seconds;
  uint64_t pages_scanned, pages_dirtied, pages_written, removed;
  /* Pages written meanwhile in the normal context: the foreground's
   * evictions and checkpoints; and the checkpoints' share (those that
   * finished in the window). */
  uint64_t other_pages_written, checkpoint_pages_written;
  uint64_t ring_recycles, wal_flushes_forced, wal_syncs;
  uint64_t wal_syncs_by_cause[HS_WAL_CAUSE_COUNT];
  double wal_sync_seconds;
  uint32_t ring_buffers_end;
  double ring_change_last_quarter; /* (max − min) / max of the ring's size */
  double throttle_mean_duty;
  double throttle_slope, throttle_slope_se;
  bool throttle_slope_trusted;
  bool idle_priority, idle_priority_dropped;
  uint64_t cost_sleeps;
  /* the foreground */
  double fg_tps_baseline, fg_tps_during;
  double fg_p99_us_baseline, fg_p99_us_during;
  double fg_mean_us_baseline, fg_mean_us_during;
  double fg_p50_us_baseline, fg_p50_us_during;
  double fg_service_p99_us_baseline, fg_service_p99_us_during;
  double fg_runq_us_per_op_baseline, fg_runq_us_per_op_during;
  /* The operations' own time at the 99.99th percentile: one stall of a few
   * milliseconds makes every lookup due during it late, so a p99 of the
   * latency from due times can come from a tail of service times far
   * beyond their p99. */
  double fg_service_p9999_us_baseline, fg_service_p9999_us_during;
  double fg_hit_ratio_baseline, fg_hit_ratio_during;
  /* the machine: the share of all CPUs idle (−1: unknown), and the CPU a
   * calibration cell's spinner got */
  double cpu_idle_baseline, cpu_idle_during;
  double corunner_cpu_seconds;
} vac_cell;

/* The run's settings (flags). */
typedef struct vac_bench {
  uint64_t pool_bytes;
  /* The table: --table as given (NULL: not given), the spec used (that, or
   * VAC_TABLE_DEFAULT, or VAC_TABLE_FULL with --full), its bytes, and what
   * the load made of it. */
  const char *table_flag, *table_spec;
  uint64_t table_bytes, table_pages, table_rows;
  bool full; /* --full: the full-size defaults */
  double dead, baseline_seconds, fg_rate, fg_tick_ms;
  uint64_t clients, seed;
  bool freeze, json, fg_updates, recycle_first, idle_priority;
  bool direct; /* --direct: the pool reads and writes with O_DIRECT */
  const char *ring_flag, *cost_delay_flag, *throttle_flag, *fg_flag, *fg_ops_flag;
  const char *own_writes_flag; /* auto (throttled cells), on, off */
  const char *policy, *plot_file, *dir_flag;
  double budget;
  double calibrate_seconds; /* 0: no calibration cells */
} vac_bench;

/* ---- calibration (bench_vacuum_calibrate.c) ---- */

const char *vac_cell_kind_name(vac_cell_kind k);
/* The machine's CPU time so far, in clock ticks (/proc/stat). */
typedef struct vac_cpu_mark {
  uint64_t idle, total;
  bool ok; /* false: /proc/stat could not be read */
} vac_cpu_mark;
vac_cpu_mark vac_cpu_now(void);
/* The share of all CPUs' time idle between two marks; −1 if unknown. */
double vac_cpu_idle_between(const vac_cpu_mark *a, const vac_cpu_mark *b);
/* A calibration cell's window of `seconds`: nothing beside the clients
 * (alone), or the idle-priority spinner, whose CPU seconds it returns. */
hs_status vac_calibration_window(vac_cell_kind kind, double seconds, double *corunner_cpu_s);

/* ---- the foreground ---- */

/* The epochs a client files its figures under: the main thread moves them
 * on; a client reads the epoch before each operation. */
enum { FG_WARMUP = 0, FG_BASELINE, FG_BETWEEN, FG_DURING, FG_EPOCHS };

typedef struct fg_tally {
  uint64_t ops, errors, sum_ns;
  /* Time the client thread spent runnable but not running (the kernel's
   * schedstat run delay), over the epoch: lateness the scheduler caused,
   * as against a timer's or the operations' own. */
  uint64_t runq_ns;
  latency_hist hist;    /* from when each operation was due (paced) or began */
  latency_hist service; /* from when it began: its own time, without lag */
} fg_tally;

typedef struct fg_group fg_group;

typedef struct fg_client {
  alignas(64) fg_group *g;
  uint32_t id;
  pthread_t tid;
  bool started;
  fg_tally tally[FG_EPOCHS];
} fg_client;

struct fg_group {
  hs_heap *h;
  hs_pk_index *ix;
  hs_xact_mgr *x;
  uint64_t rows;
  uint64_t seed;
  bool updates;
  double rate_per_client;          /* operations per second; 0: unpaced */
  uint64_t tick_ns;                /* paced: wake on multiples of this (0: at each due time) */
  _Atomic(hs_throttle *) throttle; /* told each operation's latency, or NULL */
  _Atomic int epoch;
  _Atomic bool stop;
  uint32_t nclients;
  fg_client *clients;
  pthread_mutex_t err_lock;
  char err[512]; /* the first error */
};

/* Starts `n` clients on the heap (keys 0 .. rows−1). On failure nothing is
 * left running or allocated. */
hs_status fg_start(fg_group *g, uint32_t n);
/* Stops and joins them. */
void fg_stop(fg_group *g);
/* Frees what fg_start made (after fg_stop, and after fg_collect). */
void fg_release(fg_group *g);
/* The clients' figures for one epoch, merged; *seconds is the epoch's
 * length as the caller measured it. */
void fg_collect(const fg_group *g, int epoch, fg_tally *out);

/* ---- the report (bench_vacuum_report.c) ---- */

const char *vac_fg_name(vac_fg_mode m);
/* The cell with these settings, or NULL. */
const vac_cell *vac_find_cell(const vac_cell *cells, size_t n, vac_fg_mode fg, const char *ring,
                              double delay, bool autothrottle);
void vac_print_json(const vac_bench *b, const vac_cell *c);
void vac_print_table(const vac_bench *b, const vac_cell *cells, size_t n);
/* The Pareto view (vacuum time against foreground loss) and the targets'
 * checks, after the table. */
void vac_print_pareto(const vac_cell *cells, size_t n);
int vac_plot(const char *file, const vac_cell *cells, size_t n);
double vac_tps_loss(const vac_cell *c);
/* The cost-delay curve's loss at vacuum time t (see the report). */
double vac_curve_loss(const vac_cell *cells, size_t n, vac_fg_mode fg, double t);

#endif
