/*
 * bench/bench_scan_plot.h — the scan lab's results as bar charts (gnuplot).
 */
#ifndef HOTSET_BENCH_BENCH_SCAN_PLOT_H
#define HOTSET_BENCH_BENCH_SCAN_PLOT_H

#include <stddef.h>

/* One measured cell. `variant` names what ran beside the OLTP threads
 * ("no scan", "seq, ring on", ...); cells of one policy share a group. */
typedef struct scan_plot_cell {
  const char *policy;
  const char *variant;
  double hit_ratio; /* OLTP hit ratio, 0..1 */
  double oltp_ops;  /* OLTP operations per second */
  double scan_mb;   /* scan MB/s */
  double p99_us;    /* OLTP p99 latency */
} scan_plot_cell;

/* Draws one panel per measure (hit ratio, OLTP ops/s, OLTP p99, scan MB/s),
 * each a clustered bar chart with one group per policy and one bar per
 * variant, into `file` (.png, or .svg by its suffix). Returns 0, or -1 after
 * printing one line to stderr saying why. */
int bench_scan_plot(const char *file, const char *title, const scan_plot_cell *cells, size_t n);

#endif
