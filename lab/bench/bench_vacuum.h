/*
 * bench/bench_vacuum.h — `hotset bench vacuum` (bench/bench_vacuum.c).
 */
#ifndef HOTSET_BENCH_BENCH_VACUUM_H
#define HOTSET_BENCH_BENCH_VACUUM_H

int bench_vacuum_main(int argc, char **argv);

#endif
