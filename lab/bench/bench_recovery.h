/*
 * bench/bench_recovery.h — `hotset bench recovery`: how fast crash recovery
 * replays the log.
 */
#ifndef HOTSET_BENCH_RECOVERY_H
#define HOTSET_BENCH_RECOVERY_H

int bench_recovery_main(int argc, char **argv);

#endif
