/*
 * common/clock.h — the lab's clocks: monotonic wall time, CPU time of the
 * process and of threads, and a sleep that notices an interruption.
 */
#ifndef HOTSET_LAB_COMMON_CLOCK_H
#define HOTSET_LAB_COMMON_CLOCK_H

#include <pthread.h>
#include <stdint.h>

/* ---- time ---- */

/* CLOCK_MONOTONIC in nanoseconds: immune to wall-clock steps. */
uint64_t bench_now_ns(void);
/* Sleeps `seconds` (fractional), resuming after signals, but returns early
 * once bench_interrupted() is set: it sleeps in slices of at most
 * BENCH_SLEEP_SLICE seconds, so a main thread waiting out a measurement
 * notices a SIGTERM whichever thread the kernel delivered it to. */
#define BENCH_SLEEP_SLICE 0.05
void bench_sleep(double seconds);
/* CPU time in nanoseconds: of the whole process (every thread, live or
 * exited), of the calling thread, or of another thread of this process
 * (0 if its clock cannot be read). */
uint64_t bench_process_cpu_ns(void);
uint64_t bench_thread_cpu_ns(void);
uint64_t bench_other_thread_cpu_ns(pthread_t thread);

#endif
