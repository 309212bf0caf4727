/*
 * bench/readtest.h — `hotset bench readtest`: 8 KiB reads cycling through a working
 * set of a given size (the 2007 L2 experiment), and its plot.
 */
#ifndef HOTSET_BENCH_READTEST_H
#define HOTSET_BENCH_READTEST_H

#include <stddef.h>
#include <stdint.h>

int readtest_main(int argc, char **argv);

/* One measured cell, for the plot: a size on one curve (a mode, with or
 * without huge pages). Cells come in order of size. */
typedef struct readtest_cell {
  uint64_t size;
  int series; /* index into the curves' names */
  double mb_per_sec;
} readtest_cell;

/* Draws MB/s against the working-set size (log x), one line per series
 * that has cells (series_names[i] its title), with a vertical line at each
 * cache size (level[i] names it, bytes[i] its size). 0, or -1 after
 * printing one line. */
int readtest_plot(const char *file, const readtest_cell *cells, size_t n,
                  const char *const *series_names, int nseries, const char *const *level,
                  const uint64_t *bytes, int ncaches);

#endif
