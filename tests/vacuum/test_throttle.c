/*
 * tests/test_throttle.c — `--throttle auto`'s controller (vacuum/throttle.h)
 * against a simulated foreground, deterministically: each window the
 * foreground's mean latency is its baseline × (1 + sensitivity × duty),
 * times seeded noise — a foreground that slows in proportion to the share
 * of time vacuum works. The controller must find the duty that costs the
 * foreground its budget, hold it without hunting, follow a change in the
 * foreground, use an idle foreground's capacity, and back off while a
 * checkpoint runs behind. Then the running throttle: the baseline, the
 * foreground's reports from racing threads, a vacuum run under it.
 */
#include "check.h"
#include "heap_env.h"
#include "hotset/vacuum.h"
#include "testdir.h"
#include "vacuum/throttle.h"

#include <pthread.h>

#define BASELINE_NS 10000.0

static uint64_t rng_state = 42;
/* Uniform in [-1, 1), xorshift64: the same sequence every run. */
static double noise(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (double)(rng_state >> 11) / (double)(1ull << 52) - 1;
}

typedef struct sim {
  double sensitivity; /* the foreground's excess at duty 1 */
  double offset;      /* excess whatever vacuum does (not vacuum's doing) */
  double noise;       /* relative noise of one window's mean */
  double late_p;      /* chance that a window's ticks came late ... */
  double late;        /* ... adding this excess, whatever vacuum does */
  uint64_t samples;   /* foreground operations per window */
  bool behind, dirtied;
} sim;

/* The defaults, with a floor low enough for the duties these tests reach. */
static void controller_options(hs_throttle_options *o) {
  hs_throttle_options_init(o);
  o->min_duty = 0.01;
}

static double run_windows(throttle_state *s, const hs_throttle_options *o, const sim *fg, int n,
                          double *lo, double *hi) {
  double sum = 0;
  *lo = 2;
  *hi = 0;
  for (int i = 0; i < n; i++) {
    double late = fg->late_p > 0 && (noise() + 1) / 2 < fg->late_p ? fg->late : 0;
    double mean = BASELINE_NS * (1 + fg->offset + late + fg->sensitivity * s->applied) *
                  (1 + fg->noise * noise());
    throttle_window w = {.fg_mean_ns = mean,
                         .fg_samples = fg->samples,
                         .checkpoint_behind = fg->behind,
                         .vacuum_dirtied = fg->dirtied};
    double applied = throttle_step(s, o, BASELINE_NS, &w);
    CHECK(applied >= o->min_duty && applied <= s->ceiling);
    /* The controller's duty, without the dither around it. */
    double d = s->duty;
    sum += d;
    if (d < *lo) *lo = d;
    if (d > *hi) *hi = d;
  }
  return sum / n;
}

/* Sensitivity 0.5, budget 5 %: the duty that costs the budget is 0.1. The
 * controller gets there from its start and holds it: over the last quarter
 * of the run it moves by at most 15 % with 2 % window noise. */
static void test_converges_and_settles(void) {
  hs_throttle_options o;
  controller_options(&o);
  throttle_state s;
  throttle_state_init(&s, &o);
  sim fg = {.sensitivity = 0.5, .noise = 0.02, .samples = 1000};
  double lo, hi;
  run_windows(&s, &o, &fg, 300, &lo, &hi);
  double mean = run_windows(&s, &o, &fg, 100, &lo, &hi);
  CHECK(mean > 0.085 && mean < 0.115);
  CHECK(hi / lo <= 1.15);
  CHECK(s.excess > 0.03 && s.excess < 0.07);
  /* Without noise it lands on the budget itself. */
  throttle_state_init(&s, &o);
  fg.noise = 0;
  run_windows(&s, &o, &fg, 400, &lo, &hi);
  CHECK(s.duty > 0.099 && s.duty < 0.101);
}

/* The foreground becomes four times as sensitive (a busier hour): vacuum
 * backs off to a quarter within 60 windows; then insensitive again (the
 * foreground went quiet but still runs): it climbs back. */
static void test_follows_the_foreground(void) {
  hs_throttle_options o;
  controller_options(&o);
  throttle_state s;
  throttle_state_init(&s, &o);
  sim fg = {.sensitivity = 0.5, .noise = 0.01, .samples = 1000};
  double lo, hi;
  run_windows(&s, &o, &fg, 300, &lo, &hi);
  fg.sensitivity = 2;
  run_windows(&s, &o, &fg, 60, &lo, &hi);
  CHECK(s.duty > 0.02 && s.duty < 0.03);
  fg.sensitivity = 0.05; /* vacuum at full speed costs it 5 %: no limit */
  run_windows(&s, &o, &fg, 200, &lo, &hi);
  CHECK(s.duty > 0.9);
  CHECK(s.duty <= 1);
}

/* Windows with too few foreground operations say nothing: vacuum takes the
 * idle capacity, up to all of it, never more. */
static void test_idle_foreground(void) {
  hs_throttle_options o;
  controller_options(&o);
  throttle_state s;
  throttle_state_init(&s, &o);
  sim fg = {.sensitivity = 10, .samples = o.min_samples - 1};
  double lo, hi;
  run_windows(&s, &o, &fg, 200, &lo, &hi);
  CHECK(s.duty == 1);
  CHECK_EQ(s.quiet_windows, 200);
  CHECK(!s.have_excess);
}

/* A foreground 30 % slower whether vacuum works or not (the cause is
 * elsewhere: pausing cannot remove it) keeps vacuum near full duty once
 * the controller has seen that; the same 30 % on top of a foreground that
 * vacuum does slow (sensitivity 0.5) still settles where vacuum's own part
 * spends the budget, duty about 0.1. */
static void test_harm_vacuum_does_not_cause(void) {
  hs_throttle_options o;
  controller_options(&o);
  throttle_state s;
  throttle_state_init(&s, &o);
  sim elsewhere = {.offset = 0.3, .noise = 0.02, .samples = 1000};
  double lo, hi;
  run_windows(&s, &o, &elsewhere, 200, &lo, &hi);
  double mean = run_windows(&s, &o, &elsewhere, 200, &lo, &hi);
  CHECK(mean > 0.9);
  CHECK(s.slope_known);
  CHECK(s.slope > -0.2 && s.slope < 0.2);
  throttle_state_init(&s, &o);
  sim both = {.offset = 0.3, .sensitivity = 0.5, .noise = 0.02, .samples = 1000};
  run_windows(&s, &o, &both, 400, &lo, &hi);
  mean = run_windows(&s, &o, &both, 200, &lo, &hi);
  CHECK(mean > 0.07 && mean < 0.14);
  CHECK(s.slope > 0.4 && s.slope < 0.6);
}

/* The mean duty over windows 300..599 of a fresh controller against `fg`,
 * the noise seeded by `seed`. */
static double settled_duty(const hs_throttle_options *o, const sim *fg, uint64_t seed) {
  rng_state = 0x9e3779b97f4a7c15ull * seed;
  throttle_state s;
  throttle_state_init(&s, o);
  double lo, hi;
  run_windows(&s, o, fg, 300, &lo, &hi);
  return run_windows(&s, o, fg, 300, &lo, &hi);
}

/* A paced foreground's windows as measured here: in one window of ten the
 * timer ticks came late, adding 150 % to that window's mean whatever
 * vacuum did. Noise alone fits a slope, and by chance a positive one; a
 * slope not at least twice its standard error is not held against vacuum,
 * so over 12 seeds the worst mean duty stays near full (with any positive
 * slope believed, as before, some seeds took vacuum down to the floor for
 * nothing). The same late windows on top of a foreground that vacuum does
 * slow still find that slope, and keep believing it while duty, held low
 * for it, makes the fit less sure (doubted again only under one standard
 * error: dropped at two, three of the 12 seeds lose it and the duty). */
static void test_noise_is_not_a_slope(void) {
  hs_throttle_options o;
  controller_options(&o);
  sim late = {.late_p = 0.1, .late = 1.5, .noise = 0.05, .samples = 1000};
  sim harmed = late;
  harmed.sensitivity = 2;
  double worst = 1, best = 0;
  for (uint64_t seed = 1; seed <= 12; seed++) {
    double mean = settled_duty(&o, &late, seed);
    if (mean < worst) worst = mean;
    mean = settled_duty(&o, &harmed, seed);
    if (mean > best) best = mean;
  }
  CHECK(worst > 0.8);
  CHECK(best < 0.1);
}

/* With the default floor (min_duty 0.1), a foreground 30 % slower whatever
 * vacuum does: judged whole before any slope is known, the excess takes
 * duty from its start (0.25) to the floor, and a duty held at the floor
 * measures no slope — it would stay there for good. The dither moves duty
 * until the slope is measured, and vacuum gets back to nearly full duty;
 * from a start at the floor too. */
static void test_floor_is_no_trap(void) {
  hs_throttle_options o;
  hs_throttle_options_init(&o);
  sim elsewhere = {.offset = 0.3, .noise = 0.02, .samples = 1000};
  /* The default start, then the floor itself, where ×0.5 is clamped back
   * up: the probe's two steps are still far enough apart to measure. */
  const double starts[] = {o.start_duty, o.min_duty};
  for (int i = 0; i < 2; i++) {
    o.start_duty = starts[i];
    throttle_state s;
    throttle_state_init(&s, &o);
    double lo, hi;
    run_windows(&s, &o, &elsewhere, 200, &lo, &hi);
    double mean = run_windows(&s, &o, &elsewhere, 200, &lo, &hi);
    CHECK(s.slope_known);
    CHECK(mean > 0.9);
  }
}

/* One window 100× slower (a stall that was not vacuum's doing) costs at most
 * half the duty, not all of it. */
static void test_one_bad_window(void) {
  hs_throttle_options o;
  controller_options(&o);
  throttle_state s;
  throttle_state_init(&s, &o);
  sim fg = {.sensitivity = 0.5, .samples = 1000};
  double lo, hi;
  run_windows(&s, &o, &fg, 300, &lo, &hi);
  double before = s.duty;
  throttle_window w = {.fg_mean_ns = 100 * BASELINE_NS, .fg_samples = 1000};
  throttle_step(&s, &o, BASELINE_NS, &w);
  CHECK(s.duty >= before / 2 * 0.999);
  CHECK(s.duty < before);
}

/* A checkpoint running behind while vacuum dirties pages: the ceiling
 * halves each window, whatever the foreground says; once the checkpoint is
 * on schedule it recovers by a quarter a window. Behind without vacuum
 * dirtying anything (a plain prune that found nothing): no slowdown. */
static void test_checkpoint_behind(void) {
  hs_throttle_options o;
  controller_options(&o);
  throttle_state s;
  throttle_state_init(&s, &o);
  sim fg = {.sensitivity = 0.01, .samples = 1000}; /* lets vacuum run flat out */
  double lo, hi;
  run_windows(&s, &o, &fg, 100, &lo, &hi);
  CHECK(s.duty == 1);
  fg.behind = true;
  run_windows(&s, &o, &fg, 10, &lo, &hi);
  CHECK(s.duty == 1); /* nothing dirtied */
  CHECK_EQ(s.ckpt_slowdowns, 0);
  fg.dirtied = true;
  run_windows(&s, &o, &fg, 4, &lo, &hi);
  CHECK(s.ceiling > 0.0624 && s.ceiling < 0.0626);
  CHECK(s.duty <= s.ceiling);
  CHECK_EQ(s.ckpt_slowdowns, 4);
  run_windows(&s, &o, &fg, 20, &lo, &hi);
  CHECK(s.duty == o.min_duty); /* the floor, not zero */
  fg.behind = false;
  run_windows(&s, &o, &fg, 60, &lo, &hi);
  CHECK(s.ceiling == 1);
  CHECK(s.duty > 0.9);
  /* Not checkpoint-aware: the same pressure changes nothing. */
  o.checkpoint_aware = false;
  throttle_state_init(&s, &o);
  fg.behind = true;
  run_windows(&s, &o, &fg, 100, &lo, &hi);
  CHECK(s.duty == 1);
}

static void test_options(void) {
  hs_throttle_options o;
  hs_throttle_options_init(&o);
  CHECK_OK(throttle_options_check(&o));
  struct {
    double *field, value;
  } bad[] = {{&o.budget, 0},        {&o.budget, -1},  {&o.window_ms, 0.5}, {&o.gain, 0},
             {&o.gain, 3},          {&o.min_duty, 0}, {&o.min_duty, 1.5},  {&o.start_duty, 0},
             {&o.start_duty, 1.01}, {&o.slice_ms, 0}, {&o.slice_ms, 26},   {&o.budget, 0.0 / 0.0}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    double keep = *bad[i].field;
    *bad[i].field = bad[i].value;
    CHECK_ST(throttle_options_check(&o), HS_ERR_INVALID);
    hs_throttle t;
    CHECK_ST(throttle_init(&t, &o), HS_ERR_INVALID);
    hs_throttle *made = &t;
    CHECK_ST(hs_throttle_create(&o, &made), HS_ERR_INVALID);
    CHECK(made == NULL);
    *bad[i].field = keep;
  }
}

/* The baseline is what the foreground reported before vacuum started;
 * nothing reported: no baseline, a clear error. Through the engine's
 * calls: a throttle created with the defaults. */
static void test_baseline(void) {
  hs_throttle *t;
  REQUIRE(hs_throttle_create(NULL, &t) == HS_OK);
  CHECK(t->opt.budget == 0.05);
  CHECK_ST(throttle_start(t), HS_ERR_INVALID);
  CHECK(strstr(hs_last_error(), "no operations") != NULL);
  hs_throttle_observe(t, 1000);
  hs_throttle_observe(t, 3000);
  CHECK_OK(throttle_start(t));
  CHECK(t->baseline_ns == 2000);
  throttle_finish(t);
  hs_throttle_destroy(t);
}

typedef struct racer {
  hs_throttle *t;
  uint64_t n;
} racer;

static void *observe_many(void *arg) {
  racer *r = arg;
  for (uint64_t i = 0; i < r->n; i++) hs_throttle_observe(r->t, 100);
  return NULL;
}

/* Two foreground threads report while vacuum's thread runs windows: no
 * report is lost (TSan checks the sharing). Window 1 ms, duty 1 so vacuum's
 * side never sleeps. */
static void test_racing_reports(void) {
  hs_throttle_options o;
  hs_throttle_options_init(&o);
  o.window_ms = 1;
  o.slice_ms = 1;
  o.start_duty = 1;
  o.budget = 10; /* any slowdown is within budget: duty stays 1 */
  hs_throttle t;
  CHECK_OK(throttle_init(&t, &o));
  hs_throttle_observe(&t, 100);
  CHECK_OK(throttle_start(&t));
  racer r = {&t, 200000};
  pthread_t th[2];
  for (int i = 0; i < 2; i++) REQUIRE(pthread_create(&th[i], NULL, observe_many, &r) == 0);
  for (int i = 0; i < 20000; i++) throttle_point(&t, false);
  for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
  CHECK_EQ(atomic_load(&t.fg_ops), 1 + 2 * r.n);
  CHECK_EQ(atomic_load(&t.fg_ns), 100 * (1 + 2 * r.n));
  CHECK_EQ(t.sleeps, 0);
}

/* A vacuum run under the throttle: it starts it (baseline from what was
 * reported), runs at idle priority where the system allows, and removes
 * what an unthrottled vacuum removes. */
static void test_vacuum_under_throttle(void) {
  char dir[256];
  testdir_make(dir, sizeof dir, "throttle");
  heap_env e;
  REQUIRE(heap_env_open(&e, dir, 256, 10, 11) == HS_OK);
  hs_xid x;
  REQUIRE(hs_xact_begin(e.x, &x) == HS_OK);
  char row[100] = {0};
  hs_tid tids[400];
  for (uint64_t k = 0; k < 400; k++) {
    memcpy(row, &k, 8);
    REQUIRE(hs_heap_insert(e.h, x, row, sizeof row, &tids[k]) == HS_OK);
  }
  REQUIRE(hs_xact_commit(e.x, x) == HS_OK);
  REQUIRE(hs_xact_begin(e.x, &x) == HS_OK);
  for (int k = 0; k < 400; k += 2) CHECK_OK(hs_heap_delete(e.h, x, tids[k]));
  REQUIRE(hs_xact_commit(e.x, x) == HS_OK);

  hs_vacuum_options vo;
  hs_vacuum_options_init(&vo);
  hs_throttle t;
  CHECK_OK(throttle_init(&t, NULL));
  vo.throttle = &t;
  hs_vacuum_stats vs;
  CHECK_ST(hs_vacuum(e.h, NULL, &vo, &vs), HS_ERR_INVALID); /* no baseline */
  hs_throttle_observe(&t, 5000);
  CHECK_OK(hs_vacuum(e.h, NULL, &vo, &vs));
  CHECK_EQ(vs.removed, 200);
  CHECK(vs.throttle_mean_duty > 0 && vs.throttle_mean_duty <= 1);
  CHECK(t.checkpoint_behind != NULL); /* the pool has a log: it asks */
  heap_env_close(&e);
  testdir_remove(dir);
}

int main(void) {
  test_converges_and_settles();
  test_follows_the_foreground();
  test_idle_foreground();
  test_one_bad_window();
  test_harm_vacuum_does_not_cause();
  test_noise_is_not_a_slope();
  test_floor_is_no_trap();
  test_checkpoint_behind();
  test_options();
  test_baseline();
  test_racing_reports();
  test_vacuum_under_throttle();
  return check_finish();
}
