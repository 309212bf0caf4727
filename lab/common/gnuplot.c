/*
 * common/gnuplot.c — see gnuplot.h.
 */
#include "common/gnuplot.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

bool gnuplot_installed(void) {
  const char *path = getenv("PATH");
  if (!path || !*path) path = "/usr/bin:/bin";
  while (*path) {
    size_t len = strcspn(path, ":");
    char exe[4096];
    if (len > 0 && len < sizeof exe - 9) {
      snprintf(exe, sizeof exe, "%.*s/gnuplot", (int)len, path);
      if (access(exe, X_OK) == 0) return true;
    }
    path += len;
    if (*path == ':') path++;
  }
  return false;
}

int gnuplot_check_output(const char *prog, const char *output) {
  if (!gnuplot_installed()) {
    fprintf(stderr, "%s: --plot: gnuplot is not installed (apt-get install gnuplot-nox)\n", prog);
    return -1;
  }
  /* Creating the file (and removing it again if it was not there) is the
   * one test that answers for a missing directory, permissions, read-only
   * mounts and the like; an existing file is kept as it is until drawn. */
  int fd = open(output, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd >= 0) {
    close(fd);
    unlink(output);
    return 0;
  }
  if (errno == EEXIST) fd = open(output, O_WRONLY | O_CLOEXEC);
  if (fd >= 0) {
    close(fd);
    return 0;
  }
  fprintf(stderr, "%s: --plot: cannot write %s: %s\n", prog, output, strerror(errno));
  return -1;
}

void gnuplot_quote(FILE *f, const char *s) {
  fputc('\'', f);
  for (; *s; s++) {
    if (*s == '\'') fputc('\'', f);
    fputc(*s, f);
  }
  fputc('\'', f);
}

void gnuplot_terminal(FILE *script, const char *output, int width, int height) {
  const char *dot = strrchr(output, '.');
  bool svg = dot && strcmp(dot, ".svg") == 0;
  fprintf(script, "set terminal %s size %d,%d\nset output ", svg ? "svg" : "png", width, height);
  gnuplot_quote(script, output);
  fputc('\n', script);
}

int gnuplot_workdir(const char *prog, char *dir, size_t len) {
  const char *tmp = getenv("TMPDIR");
  snprintf(dir, len, "%s/hotset-plot-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (mkdtemp(dir)) return 0;
  fprintf(stderr, "%s: creating a temporary directory %s: %s\n", prog, dir, strerror(errno));
  return -1;
}

int gnuplot_run(const char *prog, const char *script, const char *dir, const char *output) {
  fflush(NULL); /* the child must not write our buffered output twice */
  pid_t pid = fork();
  if (pid < 0) {
    fprintf(stderr, "%s: fork: %s\n", prog, strerror(errno));
    return -1;
  }
  if (pid == 0) {
    execlp("gnuplot", "gnuplot", script, (char *)NULL);
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      status = -1;
      break;
    }
  }
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "%s: gnuplot failed drawing %s (its input is kept in %s)\n", prog, output, dir);
    return -1;
  }
  return 0;
}

FILE *gnuplot_create(const char *prog, const char *path) {
  FILE *f = fopen(path, "w");
  if (!f) fprintf(stderr, "%s: writing %s: %s\n", prog, path, strerror(errno));
  return f;
}

int gnuplot_close(const char *prog, FILE *f, const char *path) {
  if (fclose(f) == 0) return 0;
  fprintf(stderr, "%s: writing %s: %s\n", prog, path, strerror(errno));
  return -1;
}
