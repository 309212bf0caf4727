/*
 * bench/pool_bench.h — `hotset bench pool`: throughput of the pool's hit path
 * and of a miss-heavy mix, hotset against a global-mutex LRU baseline.
 */
#ifndef HOTSET_BENCH_POOL_BENCH_H
#define HOTSET_BENCH_POOL_BENCH_H

/* The subcommand's entry point: argv[0] is "pool". Returns the exit
 * status (0, 1 on a run-time error; usage errors exit 2 from the parser). */
int pool_bench_main(int argc, char **argv);

#endif
