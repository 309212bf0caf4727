/*
 * cli/sim_plot.c — miss-ratio curves through gnuplot.
 *
 * gnuplot is an optional Debian package (gnuplot-nox); hotset does not draw
 * anything itself. The data and a script go to a temporary directory and
 * gnuplot is run on them directly (fork + exec, no shell, so no quoting
 * trouble with file names).
 */
#include "cli/sim_plot.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int find_gnuplot(char *path, size_t len) {
  const char *env = getenv("PATH");
  char dirs[4096];
  snprintf(dirs, sizeof dirs, "%s", env && *env ? env : "/usr/bin:/bin");
  char *save = NULL;
  for (char *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
    snprintf(path, len, "%s/gnuplot", d);
    if (access(path, X_OK) == 0) return 0;
  }
  return -1;
}

int sim_plot_check(void) {
  char path[4096];
  return find_gnuplot(path, sizeof path);
}

/* Writes s as a gnuplot string literal (single quotes doubled). */
static void gp_string(FILE *f, const char *s) {
  fputc('\'', f);
  for (; *s; s++) {
    if (*s == '\'') fputc('\'', f);
    fputc(*s, f);
  }
  fputc('\'', f);
}

int sim_plot_write(const char *file, const char *title, bool objects, const sim_point *pts,
                   size_t n) {
  char gp[4096];
  if (find_gnuplot(gp, sizeof gp) != 0) {
    fprintf(stderr, "hotset sim: --plot: gnuplot is not installed (apt-get install gnuplot-nox)\n");
    return -1;
  }
  const char *tmp = getenv("TMPDIR");
  char dir[4096], data[4200], script[4200];
  snprintf(dir, sizeof dir, "%s/hotset-plot-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) {
    fprintf(stderr, "hotset sim: --plot: could not create a temporary directory: %s\n",
            strerror(errno));
    return -1;
  }
  snprintf(data, sizeof data, "%s/mrc.dat", dir);
  snprintf(script, sizeof script, "%s/mrc.gp", dir);
  FILE *d = fopen(data, "w"), *s = fopen(script, "w");
  int rc = -1;
  if (!d || !s) {
    fprintf(stderr, "hotset sim: --plot: could not write to %s: %s\n", dir, strerror(errno));
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
  const char *dot = strrchr(file, '.');
  bool svg = dot && strcmp(dot, ".svg") == 0;
  fprintf(s, "set terminal %s size 900,600\n", svg ? "svg" : "png");
  fputs("set output ", s);
  gp_string(s, file);
  fputs("\nset title ", s);
  gp_string(s, title);
  fprintf(s,
          "\nset logscale x\nset xlabel 'cache size (%s)'\nset ylabel 'miss ratio'\n"
          "set yrange [0:*]\nset key outside right\nset grid\nplot ",
          objects ? "objects" : "bytes");
  for (size_t b = 0; b < blocks && b < 256; b++) {
    bool lower_bound = strncmp(names[b], "belady", 6) == 0;
    fprintf(s, "%s", b ? ", " : "");
    gp_string(s, data);
    fprintf(s, " index %zu with linespoints %s title ", b, lower_bound ? "dashtype 2 lw 2" : "");
    gp_string(s, lower_bound ? "belady (lower bound)" : names[b]);
  }
  fputc('\n', s);
  if (fclose(d) != 0 || fclose(s) != 0) {
    d = s = NULL;
    fprintf(stderr, "hotset sim: --plot: could not write to %s: %s\n", dir, strerror(errno));
    goto out;
  }
  d = s = NULL;
  pid_t pid = fork();
  if (pid == 0) {
    execl(gp, "gnuplot", script, (char *)NULL);
    _exit(127);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    fprintf(stderr, "hotset sim: --plot: gnuplot failed drawing %s (script kept in %s)\n", file,
            dir);
  else
    rc = 0;
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
