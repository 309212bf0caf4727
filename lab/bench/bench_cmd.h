/*
 * bench/bench_cmd.h — `hotset bench <experiment>`: the labs that re-run the
 * buffer-management experiments behind PostgreSQL's design decisions.
 */
#ifndef HOTSET_BENCH_BENCH_CMD_H
#define HOTSET_BENCH_BENCH_CMD_H

/* The subcommand's entry point: argv[0] is "bench", argv[1] the experiment.
 * Returns the experiment's exit status; a missing or unknown experiment is
 * a usage error (status 2). */
int bench_main(int argc, char **argv);

#endif
