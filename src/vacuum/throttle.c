/*
 * vacuum/throttle.c — the foreground-watching throttle (vacuum/throttle.h):
 * the controller, the foreground's reports, and vacuum's pauses.
 */

#include "vacuum/throttle.h"

#include "core/error.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void hs_throttle_options_init(hs_throttle_options *o) {
  if (!o) return;
  memset(o, 0, sizeof *o);
  o->budget = 0.05;
  o->window_ms = 25;
  o->min_samples = 64;
  o->gain = 0.1;
  o->min_duty = 0.1;
  o->start_duty = 0.25;
  o->slice_ms = 2;
  o->checkpoint_aware = true;
  o->idle_priority = true;
  o->yield_each_page = true;
}

hs_status throttle_options_check(const hs_throttle_options *o) {
  if (!(o->budget > 0 && o->budget <= 10))
    return hs_fail(HS_ERR_INVALID, 0, "throttle: budget %g is not in (0, 10]", o->budget);
  if (!(o->window_ms >= 1 && o->window_ms <= 60000))
    return hs_fail(HS_ERR_INVALID, 0, "throttle: window %g ms is not in [1, 60000]", o->window_ms);
  if (!(o->gain > 0 && o->gain <= 2))
    return hs_fail(HS_ERR_INVALID, 0, "throttle: gain %g is not in (0, 2]", o->gain);
  if (!(o->min_duty > 0 && o->min_duty <= 1))
    return hs_fail(HS_ERR_INVALID, 0, "throttle: min_duty %g is not in (0, 1]", o->min_duty);
  if (!(o->start_duty >= o->min_duty && o->start_duty <= 1))
    return hs_fail(HS_ERR_INVALID, 0, "throttle: start_duty %g is not in [min_duty %g, 1]",
                   o->start_duty, o->min_duty);
  if (!(o->slice_ms > 0 && o->slice_ms <= o->window_ms))
    return hs_fail(HS_ERR_INVALID, 0, "throttle: slice %g ms is not in (0, window %g ms]",
                   o->slice_ms, o->window_ms);
  return HS_OK;
}

void throttle_state_init(throttle_state *s, const hs_throttle_options *o) {
  memset(s, 0, sizeof *s);
  s->duty = o->start_duty;
  s->applied = o->start_duty;
  s->ceiling = 1;
}

static bool priority_lower(struct throttle_priority *saved);
static void priority_restore(struct throttle_priority *saved);

#define DITHER    0.5
#define PROBE_GAP 0.12

static double clamp(double v, double lo, double hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

/* A factor that is to exp(x) what 1 + x is near 0, and that makes a step
 * down undo a step up of the same size (1 + x, or 1 / (1 − x)): the
 * library stays on libc alone, without libm. */
static double growth(double x) {
  return x >= 0 ? 1 + x : 1 / (1 - x);
}

/* √v for v > 0 by Newton's method (libc alone, no libm): reported, never
 * compared (the test of a slope compares squares). */
static double sqrt_newton(double v) {
  double r = v > 1 ? v : 1;
  for (int i = 0; i < 60; i++) r = 0.5 * (r + v / r);
  return r;
}

/* The duty the next window runs at. Until a slope is known, the
 * controller's duty moved by DITHER down and up in turn: a duty that holds
 * still measures no slope, and judging the whole excess over the budget
 * meanwhile can hold it still at the floor for good (late timer ticks
 * alone did, in one run of six: mean duty 0.28). The two steps are at
 * least PROBE_GAP apart — at the floor, ×0.5 is clamped back up, and
 * 0.10 against 0.15 would never vary enough to measure (a standard
 * deviation of 0.05 needs a gap of 0.1) — unless the ceiling leaves no
 * room. With the alternation duty varies from the first windows, so the
 * slope is measured within a few of them; then the controller's own moves
 * keep it measured. */
static double dither(throttle_state *s, const hs_throttle_options *o) {
  bool probe = !s->slope_known && s->have_excess && s->excess > o->budget;
  if (!probe) {
    s->applied = clamp(s->duty, o->min_duty, s->ceiling);
    return s->applied;
  }
  double low = clamp(s->duty * (1 - DITHER), o->min_duty, s->ceiling);
  double high = s->duty * (1 + DITHER);
  if (high < low + PROBE_GAP) high = low + PROBE_GAP;
  s->applied = s->windows % 2 ? clamp(high, o->min_duty, s->ceiling) : low;
  return s->applied;
}

double throttle_step(throttle_state *s, const hs_throttle_options *o, double baseline_ns,
                     const throttle_window *w) {
  s->windows++;
  if (o->checkpoint_aware && w->vacuum_dirtied) {
    if (w->checkpoint_behind) {
      s->ceiling = clamp(s->ceiling / 2, o->min_duty, 1);
      s->ckpt_slowdowns++;
    } else {
      s->ceiling = clamp(s->ceiling * 1.25, o->min_duty, 1);
    }
  } else if (o->checkpoint_aware && !w->checkpoint_behind) {
    s->ceiling = clamp(s->ceiling * 1.25, o->min_duty, 1);
  }
  if (w->fg_samples < o->min_samples || baseline_ns <= 0) {
    /* Nothing to protect in this window: use the idle capacity, slowly. */
    s->quiet_windows++;
    s->duty = clamp(s->duty * growth(o->gain / 4), o->min_duty, s->ceiling);
    s->applied = s->duty; /* nothing to measure: no dither */
    return s->applied;
  }
  double excess = w->fg_mean_ns / baseline_ns - 1;
  s->excess = s->have_excess ? 0.75 * s->excess + 0.25 * excess : excess;
  s->have_excess = true;
  /* The window ran at s->applied: fold (duty, excess) into the decaying sums
   * and fit excess = a + slope × duty. One terrible window is clamped
   * first, so a stall that was not vacuum's doing cannot set the slope. */
  double x = s->applied, y = clamp(excess, -1, 4);
  const double keep = 0.97;
  s->sw = keep * s->sw + 1;
  s->sx = keep * s->sx + x;
  s->sy = keep * s->sy + y;
  s->sxx = keep * s->sxx + x * x;
  s->sxy = keep * s->sxy + x * y;
  s->syy = keep * s->syy + y * y;
  double mx = s->sx / s->sw, my = s->sy / s->sw;
  double var = s->sxx / s->sw - mx * mx, cov = s->sxy / s->sw - mx * my;
  double vary = s->syy / s->sw - my * my;
  /* Measured only while duty varies; kept while it does not (a duty held
   * at one value says nothing new about the slope, and forgetting it
   * would send the controller back to judging the whole excess). */
  if (s->sw >= 8 && var >= 0.05 * 0.05) {
    s->slope = cov / var;
    /* The residuals' variance about the fitted line, over the windows
     * (weighted count sw; two parameters fitted), gives the slope's
     * standard error. The decaying sums count each window once although
     * neighbouring windows are alike, so this errs towards doubt. */
    double resid = vary - s->slope * cov;
    if (resid < 0) resid = 0;
    double se2 = resid * s->sw / (s->sw - 2) / (s->sw * var);
    s->slope_se = se2 > 0 ? sqrt_newton(se2) : 0;
    /* Believed once it is twice its standard error; doubted again only
     * when it falls under one. The band keeps a real slope believed while
     * duty, held low for it, makes the fit less sure. */
    double sq = s->slope * s->slope;
    if (!s->slope_trusted && s->slope > 0 && sq >= 4 * se2)
      s->slope_trusted = true;
    else if (s->slope_trusted && (s->slope <= 0 || sq < se2))
      s->slope_trusted = false;
    s->slope_known = true;
    s->intercept = my - s->slope * mx;
    s->resid = resid;
  } else if (s->slope_known) {
    /* Duty holds still, so the fit learns nothing new; but if the excess
     * now stands above what the line predicts at this duty, by more than
     * the budget and twice the residuals' deviation, the foreground has
     * changed under it (a busier hour): the line is forgotten and measured
     * again, the dither and the whole excess moving duty meanwhile. */
    double above = s->excess - (s->intercept + s->slope * x);
    if (above > o->budget && above * above > 4 * s->resid) {
      s->sw = s->sx = s->sy = s->sxx = s->sxy = s->syy = 0;
      s->slope_known = s->slope_trusted = false;
      s->relearned++;
    }
  }
  /* Once a slope is known: what working at the current duty adds, if the
   * slope stands out of its noise; never more than is seen. Until then,
   * the whole excess (the dither measures the slope meanwhile). */
  double judged = s->excess;
  if (s->slope_known) {
    double caused = s->slope_trusted ? s->slope * s->duty : 0;
    judged = caused < s->excess ? caused : s->excess;
  }
  /* Clamped so one terrible window cannot take vacuum to the floor at once,
   * nor one lucky window double it. */
  double error = clamp((o->budget - judged) / o->budget, -4, 2);
  s->duty = clamp(s->duty * growth(o->gain * error), o->min_duty, s->ceiling);
  return dither(s, o);
}

hs_status throttle_init(hs_throttle *t, const hs_throttle_options *o) {
  memset(t, 0, sizeof *t);
  if (o)
    t->opt = *o;
  else
    hs_throttle_options_init(&t->opt);
  hs_status st = throttle_options_check(&t->opt);
  if (st != HS_OK) return st;
  atomic_init(&t->fg_ops, 0);
  atomic_init(&t->fg_ns, 0);
  throttle_state_init(&t->state, &t->opt);
  return HS_OK;
}

hs_status hs_throttle_create(const hs_throttle_options *o, hs_throttle **out) {
  if (!out) return hs_fail(HS_ERR_MISUSE, 0, "hs_throttle_create: out is NULL");
  *out = NULL;
  hs_throttle *t = malloc(sizeof *t);
  if (!t) return hs_fail(HS_ERR_NOMEM, 0, "no memory for a throttle");
  hs_status st = throttle_init(t, o);
  if (st != HS_OK) {
    free(t);
    return st;
  }
  *out = t;
  return HS_OK;
}

void hs_throttle_destroy(hs_throttle *t) {
  free(t);
}

void hs_throttle_observe(hs_throttle *t, uint64_t ns) {
  if (!t) return;
  atomic_fetch_add_explicit(&t->fg_ns, ns, memory_order_relaxed);
  atomic_fetch_add_explicit(&t->fg_ops, 1, memory_order_relaxed);
}

static uint64_t thread_cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

hs_status throttle_start(hs_throttle *t) {
  uint64_t ops = atomic_load_explicit(&t->fg_ops, memory_order_relaxed);
  uint64_t ns = atomic_load_explicit(&t->fg_ns, memory_order_relaxed);
  if (!ops)
    return hs_fail(HS_ERR_INVALID, 0,
                   "throttle: the foreground reported no operations before vacuum started, "
                   "so there is no baseline to hold it to");
  t->baseline_ns = (double)ns / (double)ops;
  t->base_ops = ops;
  t->base_ns = ns;
  t->window_start_ns = now_ns();
  t->slice_start_ns = t->window_cpu_ns = thread_cpu_ns();
  t->started = true;
  if (t->opt.idle_priority) t->idle_priority = priority_lower(&t->priority);
  return HS_OK;
}

static void sleep_ns(uint64_t ns) {
  struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

void throttle_point(hs_throttle *t, bool dirtied) {
  if (!t->started) return;
  if (t->opt.yield_each_page) sched_yield();
  t->dirtied_in_window |= dirtied;
  uint64_t now = now_ns();
  if ((double)(now - t->window_start_ns) >= t->opt.window_ms * 1e6) {
    uint64_t ops = atomic_load_explicit(&t->fg_ops, memory_order_relaxed);
    uint64_t ns = atomic_load_explicit(&t->fg_ns, memory_order_relaxed);
    throttle_window w = {
        .fg_samples = ops - t->base_ops,
        .fg_mean_ns =
            ops > t->base_ops ? (double)(ns - t->base_ns) / (double)(ops - t->base_ops) : 0,
        .checkpoint_behind = t->checkpoint_behind && t->checkpoint_behind(t->checkpoint_ctx),
        .vacuum_dirtied = t->dirtied_in_window,
    };
    /* Starved at idle priority: of the window less its pauses, the CPU it
     * got was under 5 % (an idle-priority thread under a foreground that
     * fills every CPU gets a few tenths of a percent; one that only waits
     * for a foreground's short bursts gets most of its time). */
    uint64_t cpu = thread_cpu_ns();
    uint64_t wall = now - t->window_start_ns;
    uint64_t wanted = wall > t->window_pause_ns ? wall - t->window_pause_ns : 0;
    bool starved = wanted > 0 && (double)(cpu - t->window_cpu_ns) < 0.05 * (double)wanted;
    t->window_pause_ns = 0;
    t->window_cpu_ns = cpu;
    if (t->priority.lowered) {
      t->starved_windows = starved ? t->starved_windows + 1 : 0;
      if (t->starved_windows >= 4) {
        priority_restore(&t->priority);
        t->idle_priority_dropped = true;
      }
    }
    t->base_ops = ops;
    t->base_ns = ns;
    t->dirtied_in_window = false;
    t->window_start_ns = now;
    t->duty_sum += throttle_step(&t->state, &t->opt, t->baseline_ns, &w);
  }
  /* Work a slice, then sleep so that work / (work + sleep) = duty. Work is
   * the thread's CPU time, not the wall time since the last pause: a vacuum
   * the scheduler held off (SCHED_IDLE under a busy foreground) took
   * nothing in the meantime and owes no sleep for it. A pause never runs
   * past a few windows, so the controller's next word is not long in
   * coming. */
  uint64_t worked = thread_cpu_ns() - t->slice_start_ns;
  if ((double)worked < t->opt.slice_ms * 1e6) return;
  double duty = t->state.applied;
  if (duty < 1) {
    double pause = (double)worked * (1 - duty) / duty;
    if (pause > 4 * t->opt.window_ms * 1e6) pause = 4 * t->opt.window_ms * 1e6;
    uint64_t before = now_ns();
    sleep_ns((uint64_t)pause);
    t->window_pause_ns += now_ns() - before;
    t->sleeps++;
    t->sleep_ms += pause / 1e6;
  }
  t->slice_start_ns = thread_cpu_ns();
}

double throttle_mean_duty(const hs_throttle *t) {
  return t->state.windows ? t->duty_sum / (double)t->state.windows : t->state.applied;
}

/* Lowers the calling thread's priority; false (nothing changed) where the
 * system refuses or has no SCHED_IDLE. */
static bool priority_lower(struct throttle_priority *saved) {
  memset(saved, 0, sizeof *saved);
#ifdef SCHED_IDLE
  struct sched_param p;
  if (pthread_getschedparam(pthread_self(), &saved->policy, &p) != 0) return false;
  saved->priority = p.sched_priority;
  struct sched_param idle = {.sched_priority = 0};
  saved->lowered = pthread_setschedparam(pthread_self(), SCHED_IDLE, &idle) == 0;
#endif
  return saved->lowered;
}

static void priority_restore(struct throttle_priority *saved) {
  if (!saved->lowered) return;
  struct sched_param p = {.sched_priority = saved->priority};
  pthread_setschedparam(pthread_self(), saved->policy, &p);
  saved->lowered = false;
}

void throttle_finish(hs_throttle *t) {
  priority_restore(&t->priority);
}
