/*
 * cli/sim_plot.c — miss-ratio curves through gnuplot.
 *
 * gnuplot is an optional Debian package (gnuplot-nox); hotset does not draw
 * anything itself. The data (one block per policy) and a script go to a
 * temporary directory, and common/gnuplot.c runs gnuplot on them.
 */
#include "cli/sim_plot.h"

#include "common/gnuplot.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define PROG "hotset sim: --plot"

int sim_plot_write(const char *file, const char *title, bool objects, const sim_point *pts,
                   size_t n) {
  if (!gnuplot_installed()) {
    fprintf(stderr, PROG ": gnuplot is not installed (apt-get install gnuplot-nox)\n");
    return -1;
  }
  char dir[4096], data[4200], script[4200];
  if (gnuplot_workdir(PROG, dir, sizeof dir) != 0) return -1;
  snprintf(data, sizeof data, "%s/mrc.dat", dir);
  snprintf(script, sizeof script, "%s/mrc.gp", dir);
  FILE *d = fopen(data, "w"), *s = fopen(script, "w");
  int rc = -1;
  if (!d || !s) {
    fprintf(stderr, PROG ": could not write to %s: %s\n", dir, strerror(errno));
    goto out;
  }
  /* One data block per policy; gnuplot's `index` picks them. */
  size_t blocks = 0;
  const char *names[256];
  for (size_t i = 0; i < n; i++) {
    if (i == 0 || strcmp(pts[i].policy, pts[i - 1].policy) != 0) {
      if (i) fputs("\n\n", d);
      if (blocks < 256) names[blocks] = pts[i].policy;
      blocks++;
    }
    fprintf(d, "%" PRIu64 " %.8f\n", pts[i].size, pts[i].miss_ratio);
  }
  gnuplot_terminal(s, file, 900, 600);
  fputs("set title ", s);
  gnuplot_quote(s, title);
  fprintf(s,
          "\nset logscale x\nset xlabel 'cache size (%s)'\nset ylabel 'miss ratio'\n"
          "set yrange [0:*]\nset key outside right\nset grid\nplot ",
          objects ? "objects" : "bytes");
  for (size_t b = 0; b < blocks && b < 256; b++) {
    /* The offline bounds, dashed: the future's (belady) and hindsight's
     * (fixedset). */
    bool belady = strncmp(names[b], "belady", 6) == 0;
    bool fixedset = strncmp(names[b], "fixedset", 8) == 0;
    fprintf(s, "%s", b ? ", " : "");
    gnuplot_quote(s, data);
    fprintf(s, " index %zu with linespoints %s title ", b,
            belady || fixedset ? "dashtype 2 lw 2" : "");
    gnuplot_quote(s, belady     ? "belady (lower bound)"
                     : fixedset ? "fixedset (best fixed set)"
                                : names[b]);
  }
  fputc('\n', s);
  int closed_d = fclose(d), closed_s = fclose(s);
  if (closed_d != 0 || closed_s != 0) {
    d = s = NULL;
    fprintf(stderr, PROG ": could not write to %s: %s\n", dir, strerror(errno));
    goto out;
  }
  d = s = NULL;
  rc = gnuplot_run(PROG, script, dir, file);
out:
  if (d) fclose(d);
  if (s) fclose(s);
  if (rc == 0) {
    unlink(data);
    unlink(script);
    rmdir(dir);
  }
  return rc;
}
