/*
 * bench/bench_wal_sync.h — `hotset bench wal-sync`: the ways of making a log
 * write durable (fdatasync, fsync, O_DSYNC, O_DIRECT, ...) measured on this
 * machine, as PostgreSQL's pg_test_fsync does for wal_sync_method.
 */
#ifndef HOTSET_BENCH_BENCH_WAL_SYNC_H
#define HOTSET_BENCH_BENCH_WAL_SYNC_H

/* The experiment's entry point: argv[0] is "wal-sync". Returns the exit
 * status (0, or 1 on a run-time error; usage errors exit 2 from the
 * parser). */
int bench_wal_sync_main(int argc, char **argv);

#endif
