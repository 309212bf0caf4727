/*
 * vacuum/throttle.h — `--throttle auto`: a vacuum that watches the
 * foreground instead of sleeping blindly. The engine's side (options,
 * create, destroy, hs_throttle_observe) is public, in hotset/vacuum.h; this
 * is the controller and vacuum's side of it.
 *
 * PostgreSQL's cost-based delay sleeps the same whether the foreground is
 * busy or idle: set it low and vacuum halves a saturated foreground's
 * throughput, set it high and vacuum is 12–49× slower even when nobody is
 * waiting. This throttle closes the loop instead. The foreground reports
 * the latency of each of its operations (hs_throttle_observe, any thread, a
 * few atomic adds); what it reported before vacuum started is the baseline.
 * Every window vacuum asks the controller (throttle_step, a pure function
 * of its state and the window's measurements) for its duty cycle: the share
 * of wall time it may work (CPU time it takes), the rest spent sleeping in
 * short slices. The
 * controller holds the foreground's mean latency within `budget` (5 %) of
 * its baseline:
 *
 *   excess = window mean / baseline − 1, smoothed (an exponential average
 *            over ~4 windows: one window's mean of a heavy-tailed latency
 *            is noisy, and a controller chasing noise oscillates);
 *   duty  ← duty × e^(gain × (budget − excess) / budget), clamped to
 *           [min_duty, ceiling]: multiplicative, so it moves as fast from
 *           1 % to 2 % as from 50 % to 100 %, and proportional to the
 *           error, so near the budget it barely moves (it settles instead
 *           of hunting);
 *   what vacuum causes: excess the foreground shows whether vacuum works
 *            or pauses is not vacuum's to remove, and pausing for it only
 *            makes vacuum slower (measured: a paced foreground's mean rose
 *            with vacuum running, and duty taken to the floor for it made
 *            that foreground's p99 worse, not better; docs/results.md,
 *            2026-12-05). So the controller also fits the excess against
 *            the duty it ran each window at (least squares over decaying
 *            sums, ~30 windows), and once duty has varied enough for a
 *            slope (a standard deviation of 0.05; the last one measured is
 *            kept while duty holds still), it holds the budget
 *            against slope × duty — the excess working adds — instead of
 *            the whole excess. A slope is believed only when it stands out
 *            of its noise (positive and at least twice its standard error):
 *            late timer ticks make a paced foreground's windows noisy, and
 *            a slope fitted on noise alone once took duty to 0.13 for
 *            nothing. A slope that does not stand out means vacuum's part
 *            is too small to see, so nothing is held against it. Until a
 *            slope is known, duty alternates ×0.5 / ×1.5 (at least 0.12
 *            apart) while the excess is over budget (a duty held at the
 *            floor measures nothing);
 *            a known line the excess leaves, by more than the budget and
 *            twice its residuals, is forgotten and measured again. A
 *            foreground slowed in proportion to vacuum's work gives the
 *            same answer either way;
 *   a window with too few foreground operations says nothing about the
 *   foreground (idle, or not started): duty creeps up by `gain` / 4 — idle
 *   capacity is vacuum's to use.
 *
 * Checkpoints. A vacuum that dirties pages while a spread checkpoint is
 * writing makes the checkpoint chase a moving target and finish late (the
 * 2017 thread asked for a throttle that knows about them). While a
 * checkpoint runs behind its schedule, the ceiling on vacuum's duty halves
 * each window (down to min_duty); while it runs on schedule or none runs,
 * the ceiling recovers by a quarter per window. Only vacuum's dirtying
 * matters to the checkpoint, so a window in which vacuum dirtied nothing
 * leaves the ceiling where it is.
 *
 * CPU priority. On a machine whose CPUs the foreground does not fill, the
 * cheapest way to take only the capacity it leaves idle is to tell the
 * scheduler: with `idle_priority` the vacuuming thread runs under Linux's
 * SCHED_IDLE (restored at the end), so a foreground thread waking up
 * preempts it at once rather than waiting out a time slice — the
 * difference between a p99 that stays put and one that grows by a
 * scheduler tick. The duty cycle still bounds what vacuum takes of what
 * the scheduler cannot see (memory bandwidth, the log, the pool's locks).
 * Priority decides who runs when a thread wakes, not how long a thread
 * that is already running keeps the CPU: once the scheduler picks vacuum
 * (its fair share, however small, or a CPU that fell idle), it runs its
 * time slice — milliseconds — while a foreground thread that became
 * runnable meanwhile waits, unless it woke up. So vacuum gives the CPU up
 * after every page (`yield_each_page`, one sched_yield, about a
 * microsecond): a foreground thread waits behind it for one page's work at
 * most, tens of microseconds.
 * But a foreground that fills every CPU leaves an idle-priority vacuum
 * nothing at all: it would never finish. So when vacuum gets under 5 % of
 * its working time (the window less its pauses) on a CPU, four windows
 * running, the scheduler is starving it, and it returns to normal priority
 * for the rest of the run, where the duty cycle alone rations what it
 * takes. (Idle priority under a foreground that fills every CPU gets a few
 * tenths of a percent; under one that leaves CPU idle, most of it.)
 */
#ifndef HOTSET_VACUUM_THROTTLE_H
#define HOTSET_VACUUM_THROTTLE_H

#include "hotset/status.h"
#include "hotset/vacuum.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* Checks the options' ranges; fails (hs_fail) naming the bad one. */
hs_status throttle_options_check(const hs_throttle_options *o);

/* ---- the controller: pure, deterministic ---- */

typedef struct throttle_state {
  double duty;      /* the share of wall time vacuum may work now */
  double applied;   /* ... moved up or down by the dither: what the next
                       window runs at */
  double ceiling;   /* the checkpoint's cap on duty */
  double excess;    /* smoothed foreground excess over its baseline */
  bool have_excess; /* excess has seen a window */
  /* Decaying sums over windows of (duty worked, excess seen), for the
   * excess's slope in duty: the part of it vacuum's working causes. */
  double sw, sx, sy, sxx, sxy, syy;
  double slope;       /* the last slope measured while duty varied */
  double slope_se;    /* ... and its standard error */
  double intercept;   /* the fitted line's excess at duty 0 */
  double resid;       /* the residuals' variance about it */
  uint64_t relearned; /* lines forgotten because the excess left them */
  bool slope_known;   /* duty has varied enough, once, to measure one */
  bool slope_trusted; /* the last one measured was positive and at least
                         twice its standard error */
  uint64_t windows, quiet_windows, ckpt_slowdowns;
} throttle_state;

/* One window's measurements. */
typedef struct throttle_window {
  double fg_mean_ns;      /* the foreground's mean latency in the window */
  uint64_t fg_samples;    /* ... over this many operations */
  bool checkpoint_behind; /* a checkpoint runs behind its schedule */
  bool vacuum_dirtied;    /* vacuum dirtied pages in the window */
} throttle_window;

void throttle_state_init(throttle_state *s, const hs_throttle_options *o);
/* The duty cycle for the next window, given the baseline mean latency (ns,
 * > 0) and the last window. */
double throttle_step(throttle_state *s, const hs_throttle_options *o, double baseline_ns,
                     const throttle_window *w);

/* ---- the running throttle: the foreground's reports, vacuum's pauses ---- */

struct hs_throttle {
  hs_throttle_options opt;
  /* The foreground's reports, from any thread. */
  _Atomic uint64_t fg_ops, fg_ns;
  /* Vacuum's side (one thread). */
  bool started;
  double baseline_ns;
  uint64_t base_ops;        /* fg_ops at the last window's end */
  uint64_t base_ns;         /* fg_ns at the last window's end */
  uint64_t window_start_ns; /* wall clock */
  uint64_t slice_start_ns;  /* the vacuuming thread's CPU clock */
  bool dirtied_in_window;
  /* Asked at each window's end whether a checkpoint runs behind its
   * schedule (NULL: never). */
  bool (*checkpoint_behind)(void *ctx);
  void *checkpoint_ctx;
  throttle_state state;
  uint64_t window_cpu_ns;   /* its CPU clock at the window's start */
  uint64_t window_pause_ns; /* time paused in the window */
  uint32_t starved_windows;
  struct throttle_priority {
    bool lowered;
    int policy, priority;
  } priority;
  bool idle_priority, idle_priority_dropped; /* began at SCHED_IDLE; left it, starved */
  uint64_t sleeps;
  double sleep_ms;
  double duty_sum; /* for the mean duty over the run */
};

/* Initializes a throttle in the caller's memory (hs_throttle_create does it
 * in memory of its own): options `o` (NULL: the defaults) checked. */
hs_status throttle_init(hs_throttle *t, const hs_throttle_options *o);
/* Vacuum begins: what the foreground reported so far is its baseline.
 * Fails when it reported nothing (there is nothing to hold it to). With
 * idle_priority, the calling thread (the vacuuming one) goes to SCHED_IDLE
 * where the system allows. */
hs_status throttle_start(hs_throttle *t);
/* Vacuum ends: the calling thread's priority is put back. */
void throttle_finish(hs_throttle *t);
/* Vacuum's pause point, after each page: `dirtied` says whether the page
 * went clean → dirty. Runs the controller at window ends, and sleeps when
 * the slice's work is done. */
void throttle_point(hs_throttle *t, bool dirtied);

/* The mean duty cycle over the windows so far. */
double throttle_mean_duty(const hs_throttle *t);

#endif
