/*
 * bench/bench_vacuum_report.c — what `hotset bench vacuum` prints: a JSON
 * line per cell, the table, the Pareto view (vacuum time against the
 * foreground's loss, the trade-off cost-based delay moves along), the
 * checks of the lab's targets, and the gnuplot scatter.
 *
 * The checks name cells by their ring as given (8KiB is the 1-buffer ring,
 * 1MiB the 128-buffer one at 8 KiB pages, 256KiB PostgreSQL's); a check
 * whose cells the run did not have says so rather than guessing.
 */
#include "bench/bench_vacuum_internal.h"
#include "common/gnuplot.h"
#include "common/json.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *vac_fg_name(vac_fg_mode m) {
  return m == VAC_FG_PACED ? "paced" : "unpaced";
}

double vac_tps_loss(const vac_cell *c) {
  return c->fg_tps_baseline > 0 ? 1 - c->fg_tps_during / c->fg_tps_baseline : 0;
}

static double ratio(double a, double b) {
  return b > 0 ? a / b : 0;
}

/* A share that may be unknown (<0): null in JSON. */
static void json_share(json_out *j, const char *key, double v) {
  if (v < 0)
    json_raw(j, key, "null");
  else
    json_double(j, key, "%.4f", v);
}

void vac_print_json(const vac_bench *b, const vac_cell *c) {
  json_out j;
  json_begin(&j, stdout);
  json_str(&j, "cell", vac_cell_kind_name(c->kind));
  json_str(&j, "fg", vac_fg_name(c->fg));
  json_bool(&j, "direct", b->direct);
  /* The sizes the cell ran at: the table is the run's one, loaded once. */
  json_bool(&j, "full", b->full);
  json_u64(&j, "pool_bytes", b->pool_bytes);
  json_str(&j, "table_spec", b->table_spec);
  json_u64(&j, "table_bytes", b->table_bytes);
  json_u64(&j, "table_pages", b->table_pages);
  json_u64(&j, "table_rows", b->table_rows);
  json_str(&j, "ring", c->ring);
  json_u64(&j, "ring_buffers_end", c->ring_buffers_end);
  json_double(&j, "cost_delay_ms", "%g", c->cost_delay_ms);
  json_str(&j, "throttle", c->throttle_auto ? "auto" : "off");
  json_bool(&j, "freeze", b->freeze);
  json_bool(&j, "own_writes", c->ring_config.own_writes);
  json_double(&j, "vacuum_seconds", "%.4f", c->vacuum_seconds);
  json_u64(&j, "pages_scanned", c->pages_scanned);
  json_u64(&j, "pages_dirtied", c->pages_dirtied);
  json_u64(&j, "pages_written", c->pages_written);
  json_u64(&j, "other_pages_written", c->other_pages_written);
  json_u64(&j, "checkpoint_pages_written", c->checkpoint_pages_written);
  json_u64(&j, "ring_recycles", c->ring_recycles);
  json_u64(&j, "wal_flushes_forced", c->wal_flushes_forced);
  json_u64(&j, "wal_syncs", c->wal_syncs);
  /* Who ran them: the vacuum ring's recycles, other evictions (the
   * foreground's, and vacuum's outside its ring), the WAL writer. */
  json_u64(&j, "wal_syncs_ring", c->wal_syncs_by_cause[HS_WAL_CAUSE_EVICT_VACUUM]);
  json_u64(&j, "wal_syncs_evict_normal", c->wal_syncs_by_cause[HS_WAL_CAUSE_EVICT_NORMAL]);
  json_u64(&j, "wal_syncs_writer", c->wal_syncs_by_cause[HS_WAL_CAUSE_WRITER]);
  json_double(&j, "flushes_per_recycle", "%.4f",
              ratio((double)c->wal_flushes_forced, (double)c->ring_recycles));
  json_double(&j, "syncs_per_page_written", "%.4f",
              ratio((double)c->wal_syncs, (double)c->pages_written));
  json_double(&j, "wal_sync_seconds", "%.4f", c->wal_sync_seconds);
  json_double(&j, "fg_tps_baseline", "%.0f", c->fg_tps_baseline);
  json_double(&j, "fg_tps_during", "%.0f", c->fg_tps_during);
  json_double(&j, "fg_tps_loss", "%.4f", vac_tps_loss(c));
  json_double(&j, "fg_tick_ms", "%g", c->fg == VAC_FG_PACED ? b->fg_tick_ms : 0);
  json_double(&j, "fg_p99_us_baseline", "%.2f", c->fg_p99_us_baseline);
  json_double(&j, "fg_p99_us_during", "%.2f", c->fg_p99_us_during);
  json_double(&j, "fg_service_p99_us_baseline", "%.2f", c->fg_service_p99_us_baseline);
  json_double(&j, "fg_service_p99_us_during", "%.2f", c->fg_service_p99_us_during);
  json_double(&j, "fg_service_p9999_us_baseline", "%.2f", c->fg_service_p9999_us_baseline);
  json_double(&j, "fg_service_p9999_us_during", "%.2f", c->fg_service_p9999_us_during);
  json_double(&j, "fg_runq_us_per_op_baseline", "%.3f", c->fg_runq_us_per_op_baseline);
  json_double(&j, "fg_runq_us_per_op_during", "%.3f", c->fg_runq_us_per_op_during);
  json_double(&j, "fg_p50_us_baseline", "%.2f", c->fg_p50_us_baseline);
  json_double(&j, "fg_p50_us_during", "%.2f", c->fg_p50_us_during);
  json_double(&j, "fg_mean_us_baseline", "%.2f", c->fg_mean_us_baseline);
  json_double(&j, "fg_mean_us_during", "%.2f", c->fg_mean_us_during);
  json_double(&j, "fg_hit_ratio_baseline", "%.4f", c->fg_hit_ratio_baseline);
  json_double(&j, "fg_hit_ratio_during", "%.4f", c->fg_hit_ratio_during);
  json_double(&j, "ring_change_last_quarter", "%.4f", c->ring_change_last_quarter);
  json_double(&j, "throttle_mean_duty", "%.4f", c->throttle_mean_duty);
  json_double(&j, "throttle_slope", "%.4f", c->throttle_slope);
  json_double(&j, "throttle_slope_se", "%.4f", c->throttle_slope_se);
  json_bool(&j, "throttle_slope_trusted", c->throttle_slope_trusted);
  json_bool(&j, "idle_priority", c->idle_priority);
  json_bool(&j, "idle_priority_dropped", c->idle_priority_dropped);
  json_u64(&j, "cost_sleeps", c->cost_sleeps);
  json_u64(&j, "removed", c->removed);
  json_share(&j, "cpu_idle_baseline", c->cpu_idle_baseline);
  json_share(&j, "cpu_idle_during", c->cpu_idle_during);
  json_double(&j, "corunner_cpu_seconds", "%.3f", c->corunner_cpu_seconds);
  json_end_line(&j);
}

/* The calibration cells (--calibrate), and how idle the CPUs were. */
static void print_calibration(const vac_cell *cells, size_t n) {
  bool any = false;
  for (size_t i = 0; i < n; i++) any |= cells[i].kind != VAC_CELL_VACUUM;
  if (!any) return;
  printf("\ncalibration: the clients without vacuum, for what a vacuum cell's ratios are worth\n");
  printf("%-7s %-9s %8s %9s %9s %8s %8s %8s %9s %9s %8s\n", "fg", "cell", "window_s", "tps_base",
         "tps_dur", "p99_base", "p99_dur", "p99_x", "idle_base", "idle_dur", "spin_cpu");
  for (size_t i = 0; i < n; i++) {
    const vac_cell *c = &cells[i];
    if (c->kind == VAC_CELL_VACUUM) continue;
    printf("%-7s %-9s %8.2f %9.0f %9.0f %8.1f %8.1f %8.2f %9.3f %9.3f %8.2f\n", vac_fg_name(c->fg),
           vac_cell_kind_name(c->kind), c->vacuum_seconds, c->fg_tps_baseline, c->fg_tps_during,
           c->fg_p99_us_baseline, c->fg_p99_us_during,
           ratio(c->fg_p99_us_during, c->fg_p99_us_baseline), c->cpu_idle_baseline,
           c->cpu_idle_during, c->corunner_cpu_seconds);
  }
  printf("(idle: the share of all CPUs idle, from /proc/stat, −1 unknown; spin_cpu: the CPU "
         "seconds the\n idle-priority spinner got — the idle capacity a background job could "
         "use)\n");
}

void vac_print_table(const vac_bench *b, const vac_cell *cells, size_t n) {
  printf("\nvacuum%s beside %s clients (%s): one row per cell\n", b->freeze ? " freeze" : "",
         b->fg_updates ? "update" : "select-only",
         b->fg_updates ? "--fg-ops update" : "pgbench -S");
  printf("%-7s %-9s %6s %5s %4s %8s %7s %7s %7s %7s %6s %6s %6s %9s %9s %6s %8s %8s %5s\n", "fg",
         "ring", "bufs", "delay", "thr", "vacuum_s", "scanned", "dirtied", "written", "recycl",
         "forced", "fl/rec", "syncs", "tps_base", "tps_dur", "loss", "p99_base", "p99_dur", "hit");
  for (size_t i = 0; i < n; i++) {
    const vac_cell *c = &cells[i];
    if (c->kind != VAC_CELL_VACUUM) continue;
    printf("%-7s %-9s %6u %5g %4s %8.2f %7" PRIu64 " %7" PRIu64 " %7" PRIu64 " %7" PRIu64
           " %6" PRIu64 " %6.3f %6" PRIu64 " %9.0f %9.0f %6.3f %8.1f %8.1f %5.3f\n",
           vac_fg_name(c->fg), c->ring, c->ring_buffers_end, c->cost_delay_ms,
           c->throttle_auto ? "auto" : "off", c->vacuum_seconds, c->pages_scanned, c->pages_dirtied,
           c->pages_written, c->ring_recycles, c->wal_flushes_forced,
           ratio((double)c->wal_flushes_forced, (double)c->ring_recycles), c->wal_syncs,
           c->fg_tps_baseline, c->fg_tps_during, vac_tps_loss(c), c->fg_p99_us_baseline,
           c->fg_p99_us_during, c->fg_hit_ratio_during);
  }
  print_calibration(cells, n);
}

const vac_cell *vac_find_cell(const vac_cell *cells, size_t n, vac_fg_mode fg, const char *ring,
                              double delay, bool autothrottle) {
  for (size_t i = 0; i < n; i++)
    if (cells[i].kind == VAC_CELL_VACUUM && cells[i].fg == fg && !strcmp(cells[i].ring, ring) &&
        cells[i].cost_delay_ms == delay && cells[i].throttle_auto == autothrottle)
      return &cells[i];
  return NULL;
}

static int by_vacuum_time(const void *a, const void *b) {
  double x = (*(const vac_cell *const *)a)->vacuum_seconds;
  double y = (*(const vac_cell *const *)b)->vacuum_seconds;
  return x < y ? -1 : x > y;
}

/* The loss the cost-delay cells' curve (PostgreSQL's 256 KiB ring, no
 * throttle) gives at vacuum time `t`: linear between the neighbouring
 * cells, the end cell's loss beyond either end. <0: fewer than two cells. */
double vac_curve_loss(const vac_cell *cells, size_t n, vac_fg_mode fg, double t) {
  const vac_cell *pts[VAC_MAX_CELLS];
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (cells[i].kind == VAC_CELL_VACUUM && cells[i].fg == fg && !cells[i].throttle_auto &&
        !strcmp(cells[i].ring, "256KiB"))
      pts[k++] = &cells[i];
  if (k < 2) return -1;
  qsort(pts, k, sizeof *pts, by_vacuum_time);
  if (t <= pts[0]->vacuum_seconds) return vac_tps_loss(pts[0]);
  for (size_t i = 1; i < k; i++) {
    if (t > pts[i]->vacuum_seconds) continue;
    double t0 = pts[i - 1]->vacuum_seconds, t1 = pts[i]->vacuum_seconds;
    double l0 = vac_tps_loss(pts[i - 1]), l1 = vac_tps_loss(pts[i]);
    return t1 > t0 ? l0 + (l1 - l0) * (t - t0) / (t1 - t0) : l1;
  }
  return vac_tps_loss(pts[k - 1]);
}

static void check_line(const char *what, double value, const char *cmp, double limit, bool ok) {
  printf("  %-62s %8.3f %s %-7.3g %s\n", what, value, cmp, limit, ok ? "met" : "NOT met");
}

static void absent(const char *what) {
  printf("  %-62s (the run has no such cells)\n", what);
}

static void print_checks(const vac_cell *cells, size_t n) {
  printf("\ntargets\n");
  vac_fg_mode fg0 = n ? cells[0].fg : VAC_FG_PACED;
  const vac_cell *one = vac_find_cell(cells, n, fg0, "8KiB", 0, false);
  const vac_cell *r128 = vac_find_cell(cells, n, fg0, "1MiB", 0, false);
  const vac_cell *r256k = vac_find_cell(cells, n, fg0, "256KiB", 0, false);
  const vac_cell *r16m = vac_find_cell(cells, n, fg0, "16MiB", 0, false);
  if (one)
    check_line("1-buffer ring: WAL flushes forced per recycle",
               ratio((double)one->wal_flushes_forced, (double)one->ring_recycles), ">=", 0.5,
               ratio((double)one->wal_flushes_forced, (double)one->ring_recycles) >= 0.5);
  else
    absent("1-buffer ring (8KiB)");
  if (r128)
    check_line("128-buffer ring: WAL flushes forced per recycle",
               ratio((double)r128->wal_flushes_forced, (double)r128->ring_recycles), "<=", 0.05,
               ratio((double)r128->wal_flushes_forced, (double)r128->ring_recycles) <= 0.05);
  else
    absent("128-buffer ring (1MiB)");
  if (r256k && r16m) {
    /* The syncs the ring forces (its recycles' WAL flushes); the log's
     * total also counts the WAL writer's, which a vacuum writing page
     * images after a checkpoint makes sync every writer_flush_after. */
    double s = ratio((double)r16m->wal_syncs_by_cause[HS_WAL_CAUSE_EVICT_VACUUM],
                     (double)r256k->wal_syncs_by_cause[HS_WAL_CAUSE_EVICT_VACUUM]);
    check_line("16MiB ring's forced WAL syncs / 256KiB ring's", s, "<=", 0.1, s <= 0.1);
    printf("  (all the log's syncs, the WAL writer's included: %" PRIu64 " / %" PRIu64 ")\n",
           r16m->wal_syncs, r256k->wal_syncs);
    double t = ratio(r16m->vacuum_seconds, r256k->vacuum_seconds);
    check_line("16MiB ring's vacuum time / 256KiB ring's", t, "<=", 0.85, t <= 0.85);
  } else {
    absent("16MiB against 256KiB ring");
  }
  const vac_cell *pa = vac_find_cell(cells, n, VAC_FG_PACED, "adaptive", 0, true);
  const vac_cell *p16 = vac_find_cell(cells, n, VAC_FG_PACED, "16MiB", 0, false);
  if (pa) {
    double p = ratio(pa->fg_p99_us_during, pa->fg_p99_us_baseline);
    check_line("paced, adaptive+auto: fg p99 during / baseline", p, "<=", 1.2, p <= 1.2);
    for (size_t i = 0; i < n; i++)
      if (cells[i].kind != VAC_CELL_VACUUM && cells[i].fg == VAC_FG_PACED)
        printf("  (the same ratio, paced clients %s: %.2f)\n",
               cells[i].kind == VAC_CELL_ALONE ? "alone in a second window"
                                               : "beside the idle-priority spinner",
               ratio(cells[i].fg_p99_us_during, cells[i].fg_p99_us_baseline));
    check_line("paced, adaptive+auto: fg tps loss", vac_tps_loss(pa), "<=", 0.02,
               vac_tps_loss(pa) <= 0.02);
    if (p16) {
      double t = ratio(pa->vacuum_seconds, p16->vacuum_seconds);
      check_line("paced, adaptive+auto: vacuum time / unthrottled 16MiB's", t, "<=", 2, t <= 2);
    } else {
      absent("paced 16MiB cell without throttle");
    }
    check_line("paced, adaptive+auto: ring size change over the last quarter",
               pa->ring_change_last_quarter, "<=", 0.1, pa->ring_change_last_quarter <= 0.1);
  } else {
    absent("paced adaptive ring under --throttle auto");
  }
  const vac_cell *ua = vac_find_cell(cells, n, VAC_FG_UNPACED, "adaptive", 0, true);
  if (ua) {
    double curve = vac_curve_loss(cells, n, VAC_FG_UNPACED, ua->vacuum_seconds);
    if (curve < 0) {
      absent("unpaced cost-delay curve (two or more 256KiB cells)");
    } else {
      printf("  unpaced, auto: vacuum %.2f s, loss %.3f; the cost-delay curve's loss there %.3f\n",
             ua->vacuum_seconds, vac_tps_loss(ua), curve);
      double r = curve > 0 ? vac_tps_loss(ua) / curve : (vac_tps_loss(ua) <= 0 ? 0 : 99);
      check_line("unpaced, auto: loss / the curve's loss at its vacuum time", r, "<=", 0.8,
                 r <= 0.8);
    }
  } else {
    absent("unpaced adaptive ring under --throttle auto");
  }
}

void vac_print_pareto(const vac_cell *cells, size_t n) {
  for (int fg = VAC_FG_PACED; fg <= VAC_FG_UNPACED; fg++) {
    const vac_cell *pts[VAC_MAX_CELLS];
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
      if (cells[i].kind == VAC_CELL_VACUUM && cells[i].fg == (vac_fg_mode)fg) pts[k++] = &cells[i];
    if (!k) continue;
    qsort(pts, k, sizeof *pts, by_vacuum_time);
    printf("\nPareto view, %s foreground: vacuum time against foreground loss "
           "(* no other cell is both faster and gentler)\n",
           vac_fg_name((vac_fg_mode)fg));
    printf("  %-9s %5s %4s %9s %7s %9s\n", "ring", "delay", "thr", "vacuum_s", "loss", "p99_ratio");
    for (size_t i = 0; i < k; i++) {
      bool dominated = false;
      for (size_t o = 0; o < k; o++)
        if (o != i && pts[o]->vacuum_seconds <= pts[i]->vacuum_seconds &&
            vac_tps_loss(pts[o]) <= vac_tps_loss(pts[i]) &&
            (pts[o]->vacuum_seconds < pts[i]->vacuum_seconds ||
             vac_tps_loss(pts[o]) < vac_tps_loss(pts[i])))
          dominated = true;
      printf("%c %-9s %5g %4s %9.2f %7.3f %9.2f\n", dominated ? ' ' : '*', pts[i]->ring,
             pts[i]->cost_delay_ms, pts[i]->throttle_auto ? "auto" : "off", pts[i]->vacuum_seconds,
             vac_tps_loss(pts[i]), ratio(pts[i]->fg_p99_us_during, pts[i]->fg_p99_us_baseline));
    }
  }
  print_checks(cells, n);
}

#define PLOT_PROG "hotset bench vacuum: --plot"

int vac_plot(const char *file, const vac_cell *cells, size_t n) {
  if (!gnuplot_installed()) {
    fprintf(stderr, PLOT_PROG ": gnuplot is not installed (apt-get install gnuplot-nox)\n");
    return -1;
  }
  char dir[4096], script[4200], data[4200];
  if (gnuplot_workdir(PLOT_PROG, dir, sizeof dir) != 0) return -1;
  snprintf(script, sizeof script, "%s/vacuum.gp", dir);
  snprintf(data, sizeof data, "%s/cells.dat", dir);
  int rc = -1;
  FILE *d = gnuplot_create(PLOT_PROG, data);
  if (!d) goto out;
  /* Two blocks (paced, unpaced), each row: time, loss, label. */
  for (int fg = VAC_FG_PACED; fg <= VAC_FG_UNPACED; fg++) {
    for (size_t i = 0; i < n; i++) {
      const vac_cell *c = &cells[i];
      if (c->kind != VAC_CELL_VACUUM || c->fg != (vac_fg_mode)fg) continue;
      char label[96];
      if (c->throttle_auto)
        snprintf(label, sizeof label, "%s auto", c->ring);
      else if (c->cost_delay_ms > 0)
        snprintf(label, sizeof label, "%s %gms", c->ring, c->cost_delay_ms);
      else
        snprintf(label, sizeof label, "%s", c->ring);
      fprintf(d, "%.4f %.4f \"%s\"\n", c->vacuum_seconds, vac_tps_loss(c), label);
    }
    fputs("\n\n", d);
  }
  if (gnuplot_close(PLOT_PROG, d, data) != 0) goto out;
  FILE *s = gnuplot_create(PLOT_PROG, script);
  if (!s) goto out;
  gnuplot_terminal(s, file, 1000, 700);
  fputs("set title 'hotset bench vacuum: vacuum time against foreground loss'\n"
        "set xlabel 'vacuum seconds'\nset ylabel 'foreground tps loss'\nset logscale x\n"
        "set grid\nset key top right\nplot ",
        s);
  gnuplot_quote(s, data);
  fputs(" index 0 using 1:2 with points pt 7 ps 1.5 title 'paced', '' index 0 using 1:2:3 with "
        "labels offset 1,0.6 left notitle, '' index 1 using 1:2 with points pt 5 ps 1.5 title "
        "'unpaced', '' index 1 using 1:2:3 with labels offset 1,-0.6 left notitle\n",
        s);
  if (gnuplot_close(PLOT_PROG, s, script) != 0) goto out;
  if (gnuplot_run(PLOT_PROG, script, dir, file) != 0) return -1;
  rc = 0;
out:
  unlink(data);
  unlink(script);
  rmdir(dir);
  return rc;
}
