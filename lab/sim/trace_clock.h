/*
 * sim/trace_clock.h — a trace's requests on a clock of milliseconds.
 *
 * Time-reading policies (midpoint's `time`, lru-k's `crp`) take durations
 * in milliseconds, in the pool and in the simulator alike, so a trace's
 * time stamps are turned into milliseconds since its first request, in the
 * units its format counts (hs_trace_time_unit_ns). A trace without time
 * stamps gets a fixed time per request when the user gives one. Policies
 * need a clock that never goes backwards: a time stamp earlier than the one
 * before it (traces merged from several sources are not always sorted)
 * counts as that one.
 */
#ifndef HOTSET_SIM_TRACE_CLOCK_H
#define HOTSET_SIM_TRACE_CLOCK_H

#include <stdbool.h>
#include <stdint.h>

typedef struct trace_clock {
  uint64_t unit_ns;      /* per time-stamp tick; 0: no time stamps */
  double ms_per_request; /* without time stamps; 0: no clock at all */
  uint64_t first, last_ms;
  uint64_t requests; /* seen so far */
} trace_clock;

static inline trace_clock trace_clock_make(uint64_t unit_ns, double ms_per_request) {
  return (trace_clock){.unit_ns = unit_ns, .ms_per_request = ms_per_request};
}

/* Whether the clock tells time (else only the request count is known). */
static inline bool trace_clock_tells_time(const trace_clock *c) {
  return c->unit_ns != 0 || c->ms_per_request > 0;
}

/* The next request's time in milliseconds, from its time stamp. */
static inline uint64_t trace_clock_next(trace_clock *c, uint64_t stamp) {
  uint64_t r = c->requests++, ms;
  if (c->unit_ns == 0) {
    ms = (uint64_t)((double)r * c->ms_per_request);
  } else {
    if (r == 0) c->first = stamp;
    uint64_t ticks = stamp > c->first ? stamp - c->first : 0;
    /* Units are powers of 1000 of a second, so one divides the other. */
    ms = c->unit_ns >= 1000000 ? ticks * (c->unit_ns / 1000000) : ticks / (1000000 / c->unit_ns);
  }
  if (ms > c->last_ms) c->last_ms = ms;
  return c->last_ms;
}

#endif
