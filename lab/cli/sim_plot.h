/*
 * cli/sim_plot.h — drawing miss-ratio curves with gnuplot.
 */
#ifndef HOTSET_CLI_SIM_PLOT_H
#define HOTSET_CLI_SIM_PLOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct sim_point {
  const char *policy; /* points of one policy are consecutive */
  uint64_t size;
  double miss_ratio;
} sim_point;

/* Draws miss ratio against cache size (log x), one line per policy, belady
 * (if present) dashed as the lower bound, into `file` (.png or .svg).
 * Returns 0, or -1 after printing one line saying why. */
int sim_plot_write(const char *file, const char *title, bool objects, const sim_point *pts,
                   size_t n);

#endif
