/*
 * bench/bench_vacuum_fg.c — the vacuum lab's foreground: `pgbench -S`-like
 * clients, each looking up random keys through the primary-key index (one
 * snapshot per lookup, as one select per transaction), or with
 * --fg-ops update updating them (one update per transaction).
 *
 * Unpaced, a client runs its operations back to back and a latency is the
 * operation's own time. Paced, it offers a fixed rate with exponentially
 * distributed gaps (pgbench -R's schedule) and a latency runs from when the
 * operation was due, not from when it started: a client that fell behind
 * because vacuum held its CPU shows the wait, as pgbench -R does (measuring
 * from the start would hide exactly the harm being measured). When nothing
 * is due it sleeps, with a timer slack of 1 ns, so the CPU it does not use
 * is really idle — the capacity a throttled vacuum is meant to find.
 *
 * It sleeps until a tick (--fg-tick, 1 ms by default: the first multiple of
 * it on the monotonic clock at or after the next due time), then runs every
 * lookup due by then back to back, as a server woken by a batch of
 * requests would. Sleeping until each due time instead (--fg-tick 0) was
 * the first design: at half the unpaced rate the gaps are a few tens of
 * microseconds, shorter than a wake-up on this virtual machine, so the
 * p99 it measured was the timer's jitter — 70 to 190 µs between runs of
 * the same cell with nothing else running — and no vacuum setting could be
 * judged against it (docs/results.md).
 */

#include "bench/bench_vacuum_internal.h"
#include "core/error.h"
#include "core/thread_name.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

static void record_error(fg_group *g, const char *what) {
  pthread_mutex_lock(&g->err_lock);
  if (!g->err[0]) snprintf(g->err, sizeof g->err, "%s: %s", what, hs_last_error());
  pthread_mutex_unlock(&g->err_lock);
}

static bool one_select(fg_group *g, bench_rng *rng, hs_snapshot *snap) {
  uint64_t key = bench_rng_below(rng, (uint32_t)g->rows);
  if (hs_xact_take_snapshot(g->x, snap) != HS_OK) {
    record_error(g, "taking a snapshot");
    return false;
  }
  char row[VAC_ROW_BYTES];
  uint32_t len;
  bool found;
  hs_tid tid;
  hs_status st = hs_pk_index_lookup(g->ix, g->h, key, snap, HS_XACT_INVALID, &tid, row, sizeof row,
                                    &len, &found);
  hs_xact_release_snapshot(g->x, snap);
  if (st != HS_OK || !found) {
    char what[96];
    snprintf(what, sizeof what, "looking up key %" PRIu64 "%s", key, found ? "" : " (not found)");
    record_error(g, what);
    return false;
  }
  return true;
}

/* One update transaction; a key another client holds (HS_ERR_BUSY) is
 * given up and counts as done, as pgbench counts a retried serialization
 * failure's work. */
static bool one_update(fg_group *g, bench_rng *rng, hs_snapshot *snap) {
  uint64_t key = bench_rng_below(rng, (uint32_t)g->rows);
  hs_xid xid;
  if (hs_xact_begin(g->x, &xid) != HS_OK) {
    record_error(g, "beginning a transaction");
    return false;
  }
  hs_status st = hs_xact_take_snapshot(g->x, snap);
  char row[VAC_ROW_BYTES];
  uint32_t len;
  bool found = false;
  hs_tid tid;
  if (st == HS_OK) {
    st = hs_pk_index_lookup(g->ix, g->h, key, snap, xid, &tid, row, sizeof row, &len, &found);
    hs_xact_release_snapshot(g->x, snap);
  }
  if (st == HS_OK && found) {
    uint64_t balance;
    memcpy(&balance, row + 8, 8);
    balance++;
    memcpy(row + 8, &balance, 8);
    hs_tid new_tid;
    st = hs_heap_update(g->h, xid, tid, row, len, &new_tid);
  }
  if (st == HS_ERR_BUSY || st == HS_ERR_INVALID) return hs_xact_abort(g->x, xid) == HS_OK;
  if (st != HS_OK || !found) {
    record_error(g, found ? "updating a row" : "looking up a row to update");
    hs_xact_abort(g->x, xid);
    return false;
  }
  if (hs_xact_commit(g->x, xid) != HS_OK) {
    record_error(g, "committing an update");
    return false;
  }
  return true;
}

/* This thread's run delay so far (ns waiting on a run queue: the second
 * field of /proc/thread-self/schedstat), or 0 where the kernel keeps none. */
static uint64_t run_delay_ns(void) {
  FILE *f = fopen("/proc/thread-self/schedstat", "r");
  unsigned long long on_cpu = 0, waited = 0;
  if (f) {
    if (fscanf(f, "%llu %llu", &on_cpu, &waited) != 2) waited = 0;
    fclose(f);
  }
  return waited;
}

static void sleep_until(uint64_t due_ns) {
  struct timespec ts = {(time_t)(due_ns / 1000000000u), (long)(due_ns % 1000000000u)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
  }
}

static void *client_main(void *arg) {
  fg_client *c = arg;
  fg_group *g = c->g;
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  bench_rng rng;
  bench_rng_seed(&rng, g->seed, c->id);
  hs_snapshot *snap = malloc(sizeof *snap);
  if (!snap) {
    pthread_mutex_lock(&g->err_lock);
    if (!g->err[0]) snprintf(g->err, sizeof g->err, "no memory for a snapshot");
    pthread_mutex_unlock(&g->err_lock);
    return NULL;
  }
  double mean_gap_ns = g->rate_per_client > 0 ? 1e9 / g->rate_per_client : 0;
  uint64_t due = bench_now_ns();
  /* Run delay is read when the epoch changes (a file read, a few times a
   * run) and charged to the epoch that ended. */
  int seen_epoch = -1;
  uint64_t seen_delay = 0;
  while (!atomic_load_explicit(&g->stop, memory_order_relaxed)) {
    if (mean_gap_ns > 0) {
      /* Exponential gaps: 1 − U is in (0, 1], so the log is finite. */
      due += (uint64_t)(-log(1 - bench_rng_double(&rng)) * mean_gap_ns);
      if (due > bench_now_ns())
        sleep_until(g->tick_ns ? (due + g->tick_ns - 1) / g->tick_ns * g->tick_ns : due);
    }
    int epoch = atomic_load_explicit(&g->epoch, memory_order_relaxed);
    if (epoch != seen_epoch) {
      uint64_t d = run_delay_ns();
      if (seen_epoch >= 0) c->tally[seen_epoch].runq_ns += d - seen_delay;
      seen_epoch = epoch;
      seen_delay = d;
    }
    uint64_t began = bench_now_ns();
    uint64_t start = mean_gap_ns > 0 && due < began ? due : began;
    bool ok = g->updates ? one_update(g, &rng, snap) : one_select(g, &rng, snap);
    uint64_t end = bench_now_ns(), ns = end - start;
    fg_tally *t = &c->tally[epoch];
    if (!ok) {
      t->errors++;
      break;
    }
    t->ops++;
    t->sum_ns += ns;
    latency_hist_add(&t->hist, ns);
    latency_hist_add(&t->service, end - began);
    hs_throttle *th = atomic_load_explicit(&g->throttle, memory_order_acquire);
    if (th) hs_throttle_observe(th, ns);
  }
  if (seen_epoch >= 0) c->tally[seen_epoch].runq_ns += run_delay_ns() - seen_delay;
  free(snap);
  return NULL;
}

hs_status fg_start(fg_group *g, uint32_t n) {
  g->clients = calloc(n, sizeof *g->clients);
  if (!g->clients) return hs_fail(HS_ERR_NOMEM, 0, "no memory for %u clients", n);
  g->nclients = n;
  pthread_mutex_init(&g->err_lock, NULL);
  g->err[0] = 0;
  atomic_store(&g->stop, false);
  atomic_store(&g->epoch, FG_WARMUP);
  for (uint32_t i = 0; i < n; i++) {
    fg_client *c = &g->clients[i];
    c->g = g;
    c->id = i;
    for (int e = 0; e < FG_EPOCHS; e++) {
      latency_hist_reset(&c->tally[e].hist);
      latency_hist_reset(&c->tally[e].service);
    }
    int rc = pthread_create(&c->tid, NULL, client_main, c);
    if (rc != 0) {
      fg_stop(g);
      fg_release(g);
      return hs_fail(HS_ERR_IO, rc, "starting foreground client %u: %s", i, strerror(rc));
    }
    hs_name_thread(c->tid, "hs-fg-client");
    c->started = true;
  }
  return HS_OK;
}

void fg_stop(fg_group *g) {
  atomic_store(&g->stop, true);
  for (uint32_t i = 0; i < g->nclients; i++)
    if (g->clients[i].started) pthread_join(g->clients[i].tid, NULL);
}

void fg_release(fg_group *g) {
  free(g->clients);
  g->clients = NULL;
  g->nclients = 0;
  pthread_mutex_destroy(&g->err_lock);
}

void fg_collect(const fg_group *g, int epoch, fg_tally *out) {
  memset(out, 0, sizeof *out);
  latency_hist_reset(&out->hist);
  latency_hist_reset(&out->service);
  for (uint32_t i = 0; i < g->nclients; i++) {
    const fg_tally *t = &g->clients[i].tally[epoch];
    out->ops += t->ops;
    out->errors += t->errors;
    out->sum_ns += t->sum_ns;
    out->runq_ns += t->runq_ns;
    latency_hist_merge(&out->hist, &t->hist);
    latency_hist_merge(&out->service, &t->service);
  }
}
