/*
 * cli/workload.h — `hotset workload`: a short multi-threaded read/update
 * workload on a relation larger than the pool, with the pool's statistics
 * and a check on disk that no update was lost.
 */
#ifndef HOTSET_CLI_WORKLOAD_H
#define HOTSET_CLI_WORKLOAD_H

/* The subcommand's entry point: argv[0] is "workload". Returns the exit
 * status (0, or 1 on a run-time error; usage errors exit 2 from the parser). */
int workload_main(int argc, char **argv);

#endif
