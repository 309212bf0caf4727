/*
 * common/gnuplot.h — running gnuplot for the tools' plots.
 *
 * hotset draws nothing itself: gnuplot (Debian's gnuplot-nox) is optional.
 * A plot is a script and its data in a temporary directory, and gnuplot run
 * on the script with fork + exec (no shell, so no file name needs quoting
 * for one). These are the steps every plotting command shares.
 */
#ifndef HOTSET_LAB_COMMON_GNUPLOT_H
#define HOTSET_LAB_COMMON_GNUPLOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Whether a gnuplot executable is on $PATH. */
bool gnuplot_installed(void);
/* Before a run whose plot is drawn at its end: that gnuplot is installed
 * and that `output` can be written (its directory exists and takes a new
 * file), so that a typo fails at once, not after the run, and leaves
 * nothing behind. 0, or -1 after printing one line "<prog>: --plot: ...". */
int gnuplot_check_output(const char *prog, const char *output);
/* Writes s as a gnuplot string literal (single quotes, a quote doubled). */
void gnuplot_quote(FILE *f, const char *s);
/* Writes the terminal line for `output` (svg when it ends in .svg, else
 * png) at width × height, then "set output" and the quoted name. */
void gnuplot_terminal(FILE *script, const char *output, int width, int height);
/* Creates a fresh temporary directory into dir. 0, or -1 after printing one
 * line starting with `prog`. */
int gnuplot_workdir(const char *prog, char *dir, size_t len);
/* fopen(path, "w") for a plot's data or script: the stream, or NULL after
 * printing "<prog>: writing <path>: <why>". */
FILE *gnuplot_create(const char *prog, const char *path);
/* fclose(f) of such a file: 0, or -1 after printing the same line (a full
 * disk shows first here). */
int gnuplot_close(const char *prog, FILE *f, const char *path);
/* Runs gnuplot on `script` (in `dir`) to draw `output`. 0, or -1 after
 * printing one line starting with `prog`; on failure the directory is kept
 * for a look, and its name is in the message. */
int gnuplot_run(const char *prog, const char *script, const char *dir, const char *output);

#endif
