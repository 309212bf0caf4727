/*
 * bench/readtest_plot.c — `hotset bench readtest --plot`: MB/s against the
 * working-set size through gnuplot.
 *
 * One data file (a row per size, a column per curve — a mode, with or
 * without huge pages — '-' where a cell was skipped) and one script: log-2
 * x axis, a line per curve, and a dashed
 * vertical line at each cache size, so a knee can be matched with the cache
 * it falls out of. Kept apart from the measuring, as the other labs' plots
 * are (common/gnuplot.c runs it; the files stay for a look if it fails).
 */
#include "bench/readtest.h"
#include "common/gnuplot.h"
#include "common/human_size.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define PLOT_PROG  "hotset bench readtest: --plot"
#define MAX_SERIES 8

/* The data file: size in bytes, then one MB/s column per series in use. */
static int write_data(const char *path, const readtest_cell *cells, size_t n, const bool *used,
                      int nseries) {
  FILE *d = gnuplot_create(PLOT_PROG, path);
  if (!d) return -1;
  for (size_t i = 0; i < n; i++) {
    if (i > 0 && cells[i].size == cells[i - 1].size) continue;
    fprintf(d, "%" PRIu64, cells[i].size);
    for (int m = 0; m < nseries; m++) {
      if (!used[m]) continue;
      const readtest_cell *c = NULL;
      for (size_t k = i; k < n && cells[k].size == cells[i].size; k++)
        if (cells[k].series == m) c = &cells[k];
      if (c)
        fprintf(d, " %.6g", c->mb_per_sec);
      else
        fputs(" -", d);
    }
    fputc('\n', d);
  }
  return gnuplot_close(PLOT_PROG, d, path);
}

int readtest_plot(const char *file, const readtest_cell *cells, size_t n,
                  const char *const *series_names, int nseries, const char *const *level,
                  const uint64_t *bytes, int ncaches) {
  if (!gnuplot_installed()) {
    fprintf(stderr, PLOT_PROG ": gnuplot is not installed (apt-get install gnuplot-nox)\n");
    return -1;
  }
  if (nseries > MAX_SERIES) nseries = MAX_SERIES;
  bool used[MAX_SERIES] = {false};
  for (size_t i = 0; i < n; i++)
    if (cells[i].series < nseries) used[cells[i].series] = true;
  char dir[4096], script[4200], data[4200];
  if (gnuplot_workdir(PLOT_PROG, dir, sizeof dir) != 0) return -1;
  snprintf(script, sizeof script, "%s/readtest.gp", dir);
  snprintf(data, sizeof data, "%s/readtest.dat", dir);
  int rc = -1;
  FILE *s = NULL;
  if (write_data(data, cells, n, used, nseries) != 0) goto out;
  s = gnuplot_create(PLOT_PROG, script);
  if (!s) goto out;
  gnuplot_terminal(s, file, 1000, 600);
  fputs("set title 'readtest: reads cycling through a working set'\n"
        "set logscale x 2\nset format x '%.0b%B'\nset xlabel 'working set (bytes)'\n"
        "set ylabel 'MB/s'\nset yrange [0:*]\nset grid\nset key outside right top\n"
        "set datafile missing '-'\n",
        s);
  for (int i = 0; i < ncaches; i++) {
    char b[32];
    fprintf(s, "set arrow from %" PRIu64 ", graph 0 to %" PRIu64 ", graph 1 nohead dt 2\n",
            bytes[i], bytes[i]);
    fprintf(s, "set label %d '%s %s' at %" PRIu64 ", graph 0.97 left offset 0.5,0\n", i + 1,
            level[i], human_size(bytes[i], b, sizeof b), bytes[i]);
  }
  fputs("plot ", s);
  int col = 2;
  for (int m = 0; m < nseries; m++) {
    if (!used[m]) continue;
    if (col > 2) fputs(", ", s);
    gnuplot_quote(s, data);
    fprintf(s, " using 1:%d with linespoints title ", col++);
    gnuplot_quote(s, series_names[m]);
  }
  fputc('\n', s);
  if (gnuplot_close(PLOT_PROG, s, script) != 0) goto out;
  if (gnuplot_run(PLOT_PROG, script, dir, file) != 0) return -1; /* input kept */
  rc = 0;
out:
  unlink(data);
  unlink(script);
  rmdir(dir);
  return rc;
}
