/*
 * bench/bench_wal.h — `hotset bench wal`: commit throughput of the
 * write-ahead log with N clients, with group commit and without it, against
 * one thread's bare fdatasync rate on the same file system.
 */
#ifndef HOTSET_BENCH_BENCH_WAL_H
#define HOTSET_BENCH_BENCH_WAL_H

/* The experiment's entry point: argv[0] is "wal". Returns the exit status
 * (0, or 1 on a run-time error; usage errors exit 2 from the parser). */
int bench_wal_main(int argc, char **argv);

#endif
