/*
 * bench/bench_vacuum_calibrate.c — what the vacuum lab measures besides
 * vacuum, so that its figures can be read: how much of the machine's CPU
 * the foreground leaves idle (from /proc/stat), and two calibration cells
 * (`--calibrate SECONDS`):
 *
 * - `alone`: the clients alone for a second window after their baseline.
 *   Its p99 ratio is what the p99 ratio of a vacuum cell is worth: the
 *   foreground's own spread between two windows.
 * - `idle-spin`: beside the clients, a thread at SCHED_IDLE that does
 *   nothing but compute, in units of about a vacuum page's CPU time with a
 *   sched_yield between them (as the throttled vacuum yields after every
 *   page). It touches no memory, takes no lock, writes nothing: whatever
 *   it costs the foreground, any background work using the same idle CPU
 *   costs at least as much, and the CPU it got is all the idle capacity
 *   such work could have had without taking any from the foreground.
 */
#include "bench/bench_vacuum_internal.h"
#include "core/error.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

const char *vac_cell_kind_name(vac_cell_kind k) {
  switch (k) {
  case VAC_CELL_ALONE:
    return "alone";
  case VAC_CELL_IDLE_SPIN:
    return "idle-spin";
  case VAC_CELL_VACUUM:
    break;
  }
  return "vacuum";
}

vac_cpu_mark vac_cpu_now(void) {
  vac_cpu_mark m = {0};
  FILE *f = fopen("/proc/stat", "r");
  if (!f) return m;
  /* cpu user nice system idle iowait irq softirq steal ... (clock ticks) */
  unsigned long long v[8] = {0};
  int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
                 &v[4], &v[5], &v[6], &v[7]);
  fclose(f);
  if (n < 5) return m;
  for (int i = 0; i < n; i++) m.total += v[i];
  m.idle = v[3] + v[4]; /* idle, and idle with I/O outstanding */
  m.ok = true;
  return m;
}

double vac_cpu_idle_between(const vac_cpu_mark *a, const vac_cpu_mark *b) {
  if (!a->ok || !b->ok || b->total <= a->total) return -1;
  return (double)(b->idle - a->idle) / (double)(b->total - a->total);
}

typedef struct spinner {
  _Atomic bool stop;
  double cpu_seconds;
} spinner;

static void *spin_main(void *arg) {
  spinner *s = arg;
  struct sched_param idle = {.sched_priority = 0};
  pthread_setschedparam(pthread_self(), SCHED_IDLE, &idle);
  uint64_t cpu0 = bench_thread_cpu_ns();
  volatile uint64_t x = 1;
  while (!atomic_load_explicit(&s->stop, memory_order_relaxed)) {
    /* About 20–30 µs of dependent multiplies: a vacuum page's CPU time. */
    for (int i = 0; i < 20000; i++) x = x * 6364136223846793005u + 1442695040888963407u;
    sched_yield();
  }
  s->cpu_seconds = (double)(bench_thread_cpu_ns() - cpu0) / 1e9;
  return NULL;
}

hs_status vac_calibration_window(vac_cell_kind kind, double seconds, double *corunner_cpu_s) {
  *corunner_cpu_s = 0;
  if (kind != VAC_CELL_IDLE_SPIN) {
    bench_sleep(seconds);
    return HS_OK;
  }
  spinner s = {.cpu_seconds = 0};
  atomic_init(&s.stop, false);
  pthread_t t;
  int rc = pthread_create(&t, NULL, spin_main, &s);
  if (rc != 0) return hs_fail(HS_ERR_IO, rc, "starting the idle-priority spinner");
  bench_sleep(seconds);
  atomic_store(&s.stop, true);
  pthread_join(t, NULL);
  *corunner_cpu_s = s.cpu_seconds;
  return HS_OK;
}
