/*
 * sim/sim.h — the trace simulator's engine.
 *
 * A trace is loaded once into memory with its object ids mapped to dense
 * numbers 0 .. objects-1 (so a simulation indexes arrays instead of hashing
 * ids on every request), with each request's size and, when a policy needs
 * the future, the request number of the object's next request (computed in
 * one backward pass, also for formats that carry it, so every encoding of a
 * trace gives the same results). Many simulations then
 * run over the same loaded trace, each single-threaded, each with its own
 * policy instance — the same policy code the buffer pool runs.
 */
#ifndef HOTSET_SIM_SIM_H
#define HOTSET_SIM_SIM_H

#include "hotset/status.h"
#include "sim/scan_runs.h"
#include "sim/trace.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct hs_sim_trace {
  char *path;
  uint64_t requests;
  uint64_t objects;      /* distinct ids */
  uint32_t *obj;         /* per request: dense object number */
  uint32_t *size;        /* per request: bytes (at least 1); NULL while every
                            request has uniform_size (most block traces): read
                            through hs_sim_size */
  uint32_t uniform_size; /* the first request's size: every request's when
                            size is NULL */
  int64_t *next;         /* per request: next request of the same object, or
                            HS_NEXT_NEVER; NULL until hs_sim_need_future */
  uint64_t *hindsight;   /* per object: the units of every object read more
                            often (or as often, first read earlier), plus its
                            own, at first sizes (hs_access.hindsight_units);
                            NULL until hs_sim_need_hindsight */
  uint32_t *rank;        /* per object: its place in that order (0: read
                            most); NULL until hs_sim_need_hindsight */
  uint64_t *time_ms;     /* per request: milliseconds since the first request,
                            never decreasing (a time stamp earlier than the one
                            before counts as that one); NULL unless keep_time
                            and the trace has time stamps or ms_per_request */
  bool timed;            /* the format carries time stamps (hs_trace_time_unit_ns) */
  bool has_pids;         /* the format carries process ids (hs_trace_has_pids) */
  hs_scan_runs runs;     /* the sequential scans (runs.stream NULL unless loaded
                            with find_scans): with them every run applies
                            PostgreSQL's ring rule (sim.c) */
  uint64_t ws_bytes;     /* sum over objects of their first request's size */
  uint64_t one_hit;      /* objects requested exactly once */
  uint64_t bytes_requested;
  uint64_t bad_records;
  uint32_t min_size, max_size; /* over requests (0, 0 for an empty trace) */
  bool sized;                  /* the format carries sizes (hs_trace_has_sizes): if not,
                                  every size is 1 and bytes are objects */
  int8_t *found;               /* per request: whether the traced cache found it (1)
                                  or not (0); NULL when the trace has no found
                                  column (hs_trace_has_found) */
  uint64_t found_hits;         /* requests the traced cache found, and missed */
  uint64_t found_misses;       /* (both 0 without a found column) */
  uint64_t pids;               /* distinct process ids (0: the trace has none) */
  /* The request the simulations are judged from (--from; 0: the first).
   * The requests before it warm the cache and are not counted; fixedset
   * keeps the objects read most among them — a set an online learner
   * could know — instead of choosing with hindsight. Set before
   * hs_sim_need_hindsight. */
  uint64_t judge_from;
  hs_trace_format format;
  bool compressed;
  char format_reason[320]; /* hs_trace_format_reason's, whole */
} hs_sim_trace;

/* Request r's size in bytes (at least 1). */
static inline uint32_t hs_sim_size(const hs_sim_trace *t, uint64_t r) {
  return t->size ? t->size[r] : t->uniform_size;
}

typedef void (*hs_sim_progress_fn)(void *ctx, uint64_t done, uint64_t total_hint);

/* What one loaded request is budgeted at: 8 bytes in the request arrays, 8
 * of next-access times when a policy needs the future, and, when every
 * request is a new object, about 48 more in the id map and the per-object
 * counters of loading. Generous for real traces, where objects repeat. */
#define HS_SIM_BYTES_PER_REQUEST 64u

/* The memory this process may use: physical memory, or less when ulimit -v
 * or -d, or the cgroup's memory limit, says so. */
uint64_t hs_sim_usable_memory(void);
/* The default cap on requests loaded: as many as fit, at
 * HS_SIM_BYTES_PER_REQUEST each, in half of hs_sim_usable_memory(). */
uint64_t hs_sim_default_max_requests(void);

typedef struct hs_sim_load_options {
  uint64_t max_requests; /* 0: hs_sim_default_max_requests() */
  const char *flag;      /* for the message: what raises the limit (e.g.
                            "--max-requests"); NULL: nothing said */
  /* The clock of time-reading policies (midpoint, lru-k), whose durations
   * are milliseconds. keep_time keeps each request's time stamp, converted
   * to milliseconds (hs_sim_trace.time_ms); a trace without time stamps
   * gets ms_per_request milliseconds per request when that is > 0, and
   * otherwise only a request count (policies may then use no duration). */
  bool keep_time;
  double ms_per_request;
  /* Find the sequential scans (sim/scan_runs.h), so that each simulation
   * reads the scans of relations larger than a quarter of its cache
   * through PostgreSQL's bulkread ring (--ring-rule pg). */
  bool find_scans;
} hs_sim_load_options;

/* Reads the whole trace. A trace with more than the limit's requests (an
 * endless stream such as /dev/zero, or a trace too big for memory) fails
 * with HS_ERR_NOMEM and a message saying how far loading got, before the
 * memory is gone; `load` NULL means the defaults. `progress` (may be
 * NULL) is called now and then. */
hs_status hs_sim_load(const char *path, const hs_trace_options *opts,
                      const hs_sim_load_options *load, hs_sim_progress_fn progress, void *ctx,
                      hs_sim_trace **out);
/* Fills t->next (backward pass) if it is not there yet: for policies
 * flagged HS_POLICY_NEEDS_FUTURE. Not thread-safe: call before starting
 * simulations that need it. */
hs_status hs_sim_need_future(hs_sim_trace *t);
/* Fills t->rank and t->hindsight (the objects ranked by reads before
 * t->judge_from, or in the whole trace) if they are not there yet: for
 * policies flagged HS_POLICY_NEEDS_HINDSIGHT. Not thread-safe either. */
hs_status hs_sim_need_hindsight(hs_sim_trace *t);
void hs_sim_trace_free(hs_sim_trace *t);

typedef struct hs_sim_result {
  uint64_t requests, misses;
  uint64_t bytes, byte_misses;
  uint64_t not_admitted; /* misses larger than the whole cache */
  double seconds;
  uint64_t peak_ghosts;   /* most ghost entries the policy held */
  uint64_t ring_requests; /* requests read through a ring (the ring rule) */
  uint64_t policy_bytes;  /* policy metadata at the end */
} hs_sim_result;

/* One simulation: `spec` with `capacity` bytes (or objects, with
 * ignore_size). When every entry has one size (ignore_size, or every
 * request of the trace has one size) the policy's slots are frames taken
 * as the pool takes buffers (free ones in order, then the victim's), at
 * most capacity / size of them, so the misses are the pool's; with mixed
 * sizes a slot is an object's dense number (sim.c). `done`, if not NULL,
 * is bumped every 64 Ki requests (for a progress line across threads). */
hs_status hs_sim_run(const hs_sim_trace *t, const char *spec, uint64_t capacity, bool ignore_size,
                     _Atomic uint64_t *done, hs_sim_result *out);
/* hs_sim_run that also sets bit r % 64 of miss_bits[r / 64] for every
 * request r that missed (the caller zeroes (requests + 63) / 64 words), so
 * the misses can be compared request by request (sim/compare_found.h). */
hs_status hs_sim_run_marking(const hs_sim_trace *t, const char *spec, uint64_t capacity,
                             bool ignore_size, _Atomic uint64_t *done, uint64_t *miss_bits,
                             hs_sim_result *out);

#endif
