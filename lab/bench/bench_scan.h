/*
 * bench/bench_scan.h — `hotset bench scan`: does a big scan push an OLTP
 * workload's hot pages out of the pool, for each replacement policy, with
 * and without a ring?
 */
#ifndef HOTSET_BENCH_BENCH_SCAN_H
#define HOTSET_BENCH_BENCH_SCAN_H

/* The experiment's entry point: argv[0] is "scan". Returns the exit status
 * (0, or 1 on a run-time error; usage errors exit 2 from the parser). */
int bench_scan_main(int argc, char **argv);

#endif
