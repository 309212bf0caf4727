/*
 * bench/bench_scan_plot.c — bar charts of `hotset bench scan` through
 * gnuplot.
 *
 * hotset draws nothing itself: gnuplot (Debian's gnuplot-nox) is optional,
 * so it lives apart from the experiment, which only hands over its numbers.
 * Each measure gets a data file — one row per policy, one column per
 * variant, so gnuplot's clustered histogram puts a policy's cells side by
 * side — and one script draws the panels stacked in a single image
 * (common/gnuplot.c runs it; the files are kept for a look if it fails).
 */
#include "bench/bench_scan_plot.h"

#include "common/gnuplot.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PLOT_PROG  "hotset bench scan: --plot"
#define MAX_GROUPS 64
#define MAX_BARS   16
#define NPANELS    4

/* A string in a data file's double quotes (none can hold a double quote:
 * policy specs and variant names are ours). */
static void data_quote(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) fputc(*s == '"' ? '\'' : *s, f);
  fputc('"', f);
}

/* Index of `s` in names[0 .. *n), appending it if new; -1 if full. */
static int intern(const char **names, int *n, int max, const char *s) {
  for (int i = 0; i < *n; i++)
    if (strcmp(names[i], s) == 0) return i;
  if (*n == max) return -1;
  names[*n] = s;
  return (*n)++;
}

static double measure(const scan_plot_cell *c, int panel) {
  switch (panel) {
  case 0:
    return c->hit_ratio;
  case 1:
    return c->oltp_ops;
  case 2:
    return c->p99_us;
  default:
    return c->scan_mb;
  }
}

static const char *const panel_label[NPANELS] = {"OLTP hit ratio", "OLTP ops/s", "OLTP p99 (us)",
                                                 "scan MB/s"};

int bench_scan_plot(const char *file, const char *title, const scan_plot_cell *cells, size_t n) {
  const char *groups[MAX_GROUPS], *bars[MAX_BARS];
  int ngroups = 0, nbars = 0;
  static int cell_of[MAX_GROUPS][MAX_BARS];
  for (int g = 0; g < MAX_GROUPS; g++)
    for (int v = 0; v < MAX_BARS; v++) cell_of[g][v] = -1;
  for (size_t i = 0; i < n; i++) {
    int g = intern(groups, &ngroups, MAX_GROUPS, cells[i].policy);
    int v = intern(bars, &nbars, MAX_BARS, cells[i].variant);
    if (g < 0 || v < 0) {
      fprintf(stderr, PLOT_PROG ": more than %d policies or %d variants to draw\n", MAX_GROUPS,
              MAX_BARS);
      return -1;
    }
    cell_of[g][v] = (int)i;
  }
  if (!gnuplot_installed()) {
    fprintf(stderr, PLOT_PROG ": gnuplot is not installed (apt-get install gnuplot-nox)\n");
    return -1;
  }

  char dir[4096], script[4200], data[NPANELS][4200] = {{0}};
  if (gnuplot_workdir(PLOT_PROG, dir, sizeof dir) != 0) return -1;
  snprintf(script, sizeof script, "%s/scan.gp", dir);
  int rc = -1;
  for (int p = 0; p < NPANELS; p++) {
    snprintf(data[p], sizeof data[p], "%s/panel%d.dat", dir, p);
    FILE *d = gnuplot_create(PLOT_PROG, data[p]);
    if (!d) goto out;
    fputs("policy", d);
    for (int v = 0; v < nbars; v++) {
      fputc(' ', d);
      data_quote(d, bars[v]);
    }
    fputc('\n', d);
    for (int g = 0; g < ngroups; g++) {
      data_quote(d, groups[g]);
      for (int v = 0; v < nbars; v++) {
        if (cell_of[g][v] < 0)
          fputs(" -", d);
        else
          fprintf(d, " %.6g", measure(&cells[cell_of[g][v]], p));
      }
      fputc('\n', d);
    }
    if (gnuplot_close(PLOT_PROG, d, data[p]) != 0) goto out;
  }

  FILE *s = gnuplot_create(PLOT_PROG, script);
  if (!s) goto out;
  int width = 300 + 90 * ngroups * (nbars + 1);
  if (width < 900) width = 900;
  gnuplot_terminal(s, file, width, 300 * NPANELS);
  fputs("set multiplot layout " /* panels stacked */, s);
  fprintf(s, "%d,1 title ", NPANELS);
  gnuplot_quote(s, title);
  fputs("\nset style data histograms\nset style histogram clustered gap 1\n"
        "set style fill solid 0.85 border -1\nset boxwidth 0.9\nset datafile missing '-'\n"
        "set key outside right top\nset grid ytics\nset xtics nomirror\n",
        s);
  /* Groups sit at x = 0, 1, ...: no empty margin beside them. */
  fprintf(s, "set xrange [-0.5:%d.5]\n", ngroups - 1);
  for (int p = 0; p < NPANELS; p++) {
    fputs(p == 0 ? "set yrange [0:1.05]\n" : "set yrange [0:*]\n", s);
    fputs("set ylabel ", s);
    gnuplot_quote(s, panel_label[p]);
    fputs("\nplot ", s);
    for (int v = 0; v < nbars; v++) {
      if (v) fputs(", ", s);
      if (v == 0) {
        gnuplot_quote(s, data[p]);
        fprintf(s, " using 2:xtic(1) title columnheader(2)");
      } else {
        fprintf(s, "'' using %d title columnheader(%d)", v + 2, v + 2);
      }
    }
    fputc('\n', s);
  }
  fputs("unset multiplot\n", s);
  if (gnuplot_close(PLOT_PROG, s, script) != 0) goto out;

  if (gnuplot_run(PLOT_PROG, script, dir, file) != 0) return -1; /* input kept */
  rc = 0;
out:
  for (int p = 0; p < NPANELS; p++)
    if (data[p][0]) unlink(data[p]);
  unlink(script);
  rmdir(dir);
  return rc;
}
