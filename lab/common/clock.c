/*
 * common/clock.c — see clock.h.
 */
#include "common/clock.h"

#include "common/interrupt.h"

#include <pthread.h>
#include <time.h>

uint64_t bench_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void bench_sleep(double seconds) {
  if (seconds <= 0) return;
  /* An absolute deadline, so a signal that interrupts the sleep does not
   * stretch it when we go back to sleep. */
  uint64_t until = bench_now_ns() + (uint64_t)(seconds * 1e9);
  const uint64_t slice = (uint64_t)(BENCH_SLEEP_SLICE * 1e9);
  while (!bench_interrupted()) {
    uint64_t now = bench_now_ns();
    if (now >= until) return;
    uint64_t wake = until - now > slice ? now + slice : until;
    struct timespec ts = {.tv_sec = (time_t)(wake / 1000000000u),
                          .tv_nsec = (long)(wake % 1000000000u)};
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
  }
}

static uint64_t clock_ns(clockid_t clock) {
  struct timespec ts;
  if (clock_gettime(clock, &ts) != 0) return 0;
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t bench_process_cpu_ns(void) {
  return clock_ns(CLOCK_PROCESS_CPUTIME_ID);
}

uint64_t bench_thread_cpu_ns(void) {
  return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

uint64_t bench_other_thread_cpu_ns(pthread_t thread) {
  clockid_t clock;
  if (pthread_getcpuclockid(thread, &clock) != 0) return 0;
  return clock_ns(clock);
}
