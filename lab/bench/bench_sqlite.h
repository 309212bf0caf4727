/*
 * bench/bench_sqlite.h — `hotset bench sqlite`: SQLite's own page cache
 * against hotset's, on lookups beside scans and a speedtest-style mix.
 */
#ifndef HOTSET_BENCH_SQLITE_H
#define HOTSET_BENCH_SQLITE_H

/* Without SQLite in the build it says so on one line and returns 1. */
int bench_sqlite_main(int argc, char **argv);

#endif
