/*
 * bench/bench_scan_report.c — what the scan lab prints: the progress line
 * while it runs, the table (a header, a row per cell, a footer saying what
 * the columns mean and what the run showed), the vacuum cells' WAL table,
 * one JSON object per cell, and the bar charts.
 *
 * The conclusion under the table is computed from the cells, not written in
 * advance: which policies kept the hot set under a sequential scan with a
 * ring and without one (and under index scans), how far the others fell, and
 * how fast the ring's scan read against raw preads. "Kept" means a hot share
 * of at least 90 % of the policy's own baseline (no scan) with a hit ratio
 * within a point of it; "collapsed" means less than half the baseline's hot
 * share; in between, part of the hot set was lost.
 */
#include "bench/bench_scan_internal.h"
#include "bench/bench_scan_plot.h"
#include "common/json.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REPORT_WIDTH 80 /* the conclusion wraps to the footer's width */

/* ---- progress ---- */

void progress_show(progress *p) {
  if (!p->on) return;
  uint64_t now = bench_now_ns();
  double elapsed = (double)(now - p->t0) / 1e9;
  /* A finished cell took what cells have taken so far on average (pool
   * open, warming the hot set and closing included); before the first one
   * ends, its budget. */
  double per_cell = p->done ? (double)p->cells_ns / 1e9 / p->done : p->cell_budget + 0.5;
  double in_cell = p->cell_t0 ? (double)(now - p->cell_t0) / 1e9 : 0;
  double eta = per_cell * (p->total - p->done) - in_cell;
  if (eta < 0) eta = 0;
  if (!p->cell_t0) /* still preparing */
    fprintf(stderr, "\r\033[K" PROG ": %s, %.0f s elapsed, ETA %.0f s", p->what, elapsed, eta);
  else
    fprintf(stderr, "\r\033[K" PROG ": cell %d of %d (%s), %.0f s elapsed, ETA %.0f s",
            p->done + 1 <= p->total ? p->done + 1 : p->total, p->total, p->what, elapsed, eta);
  p->printed = true;
}

void progress_clear(progress *p) {
  if (p->printed) fputs("\r\033[K", stderr);
  p->printed = false;
}

/* ---- names ---- */

const char *scan_ring_label(const cell *c) {
  return c->ring ? "on" : "off";
}

void scan_cell_name(const scan_bench *b, const cell *c, char *buf, size_t len) {
  if (c->scan == SCAN_NONE)
    snprintf(buf, len, "no scan");
  else if (c->scan == SCAN_INDEX)
    snprintf(buf, len, "index scan");
  else if (c->ring && b->ring_list)
    snprintf(buf, len, "%s, ring %s", scan_kind_names[c->scan], b->ring_names[c->ring_spec]);
  else
    snprintf(buf, len, "%s, ring %s", scan_kind_names[c->scan], scan_ring_label(c));
}

/* The cell's ring spec for the JSON: with a list, a ring cell's own; else
 * (and for cells without a ring) the flag as given. */
static const char *ring_spec_name(const scan_bench *b, const cell *c) {
  if (c->ring && b->ring_list) return b->ring_names[c->ring_spec];
  return b->ring_size_flag ? b->ring_size_flag : "fixed";
}

/* The ring the cell's scanners used, in bytes (0: none, the scan read
 * through the policy). */
static uint64_t ring_bytes(const scan_bench *b, const cell_result *r) {
  return (uint64_t)r->ring_buffers * b->page_size;
}

/* ---- the ratios ---- */

static double scan_ratio(const cell_result *r) {
  return r->raw_mb_per_sec > 0 ? r->scan_mb_per_sec / r->raw_mb_per_sec : 0;
}

/* Scan MB per CPU-second of the scanners and the I/O workers. */
static double scan_mb_per_cpu_sec(const cell_result *r) {
  return r->scan_cpu_seconds > 0 ? (double)r->scan_bytes / 1e6 / r->scan_cpu_seconds : 0;
}

/* That over the raw preads' MB per CPU-second. */
static double scan_cpu_ratio(const cell_result *r) {
  return r->raw_mb_per_cpu_sec > 0 ? scan_mb_per_cpu_sec(r) / r->raw_mb_per_cpu_sec : 0;
}

/* The share of the pool's buffers the hot relation can fill at most. */
static double best_hot_share(const scan_bench *b) {
  double s = (double)b->hot_pages / b->nbuffers;
  return s < 1 ? s : 1;
}

/* ---- JSON ---- */

void scan_print_json(const scan_bench *b, const cell *c, const cell_result *r) {
  json_out j;
  json_begin(&j, stdout);
  json_str(&j, "policy", b->specs[c->policy]);
  json_str(&j, "ring", scan_ring_label(c));
  json_str(&j, "scan", scan_kind_names[c->scan]);
  json_double(&j, "oltp_ops_per_sec", "%.1f", r->oltp_ops_per_sec);
  json_double(&j, "oltp_hit_ratio", "%.6f", r->hit_ratio);
  json_double(&j, "oltp_p50_us", "%.3f", r->p50_us);
  json_double(&j, "oltp_p99_us", "%.3f", r->p99_us);
  json_double(&j, "oltp_miss_us", "%.3f", r->miss_us);
  json_u64(&j, "oltp_misses", r->oltp_misses);
  json_bool(&j, "direct", b->direct);
  json_double(&j, "hot_share", "%.6f", r->hot_share);
  json_double(&j, "scan_mb_per_sec", "%.1f", r->scan_mb_per_sec);
  json_double(&j, "raw_mb_per_sec", "%.1f", r->raw_mb_per_sec);
  json_double(&j, "scan_raw_ratio", "%.4f", scan_ratio(r));
  json_double(&j, "raw_page_mb_per_sec", "%.1f", b->raw_page.mb_per_sec);
  json_double(&j, "scan_page_raw_ratio", "%.4f",
              b->raw_page.mb_per_sec > 0 ? r->scan_mb_per_sec / b->raw_page.mb_per_sec : 0);
  /* CPU: scan_cpu_seconds is the scanners' and the I/O workers' CPU time
   * over measured_seconds of wall time; scan_cpus their quotient (cores
   * kept busy); scan_raw_cpu_ratio the scan's MB per CPU-second over the
   * raw preads' (one thread). */
  json_double(&j, "scan_cpu_seconds", "%.4f", r->scan_cpu_seconds);
  json_double(&j, "scanner_cpu_seconds", "%.4f", r->scanner_cpu_seconds);
  json_double(&j, "measured_seconds", "%.4f", r->measured_seconds);
  json_double(&j, "scan_cpus", "%.3f",
              r->measured_seconds > 0 ? r->scan_cpu_seconds / r->measured_seconds : 0);
  json_double(&j, "scan_mb_per_cpu_sec", "%.1f", scan_mb_per_cpu_sec(r));
  json_double(&j, "raw_mb_per_cpu_sec", "%.1f", r->raw_mb_per_cpu_sec);
  json_double(&j, "scan_raw_cpu_ratio", "%.4f", scan_cpu_ratio(r));
  json_u64(&j, "ring_buffers", r->ring_buffers);
  json_str(&j, "ring_size", ring_spec_name(b, c));
  json_u64(&j, "ring_bytes", ring_bytes(b, r));
  json_u64(&j, "oltp_ops", r->oltp_ops);
  json_u64(&j, "oltp_updates", r->oltp_updates);
  json_u64(&j, "scan_bytes", r->scan_bytes);
  json_u64(&j, "evictions", r->evictions);
  json_u64(&j, "reuses", r->reuses);
  json_u64(&j, "writes", r->writes);
  json_u64(&j, "wal_flushes", r->wal_flushes);
  json_str(&j, "wal", b->real_wal ? "log" : "counter");
  json_u64(&j, "wal_syncs", r->wal_syncs);
  json_double(&j, "wal_sync_seconds", "%.4f", r->wal_sync_seconds);
  json_double(&j, "seconds", "%.3f", r->seconds);
  json_u64(&j, "oltp_threads", b->oltp_threads);
  json_u64(&j, "scan_threads", c->scan == SCAN_NONE ? 0 : b->scan_threads);
  json_u64(&j, "oltp_rate", b->oltp_rate);
  json_u64(&j, "scan_rate", b->scan_rate);
  json_u64(&j, "index_rate", b->index_rate);
  json_double(&j, "update_ratio", "%g", b->update_ratio);
  json_u64(&j, "pool_pages", b->nbuffers);
  json_u64(&j, "hot_pages", b->hot_pages);
  json_u64(&j, "big_pages", b->big_pages);
  json_u64(&j, "page_size", b->page_size);
  json_bool(&j, "direct", b->direct);
  json_end_line(&j);
}

/* ---- the table ---- */

void scan_print_header(const scan_bench *b) {
  char pool[32], page[32], hot[32], big[32], raw[64], raw_page[48];
  args_format_size((uint64_t)b->nbuffers * b->page_size, pool, sizeof pool);
  args_format_size(b->page_size, page, sizeof page);
  args_format_size((uint64_t)b->hot_pages * b->page_size, hot, sizeof hot);
  args_format_size((uint64_t)b->big_pages * b->page_size, big, sizeof big);
  snprintf(raw, sizeof raw, "%.0f MB/s (%.0f per CPU-s)", b->raw.mb_per_sec, b->raw.mb_per_cpu_sec);
  snprintf(raw_page, sizeof raw_page, "%.0f MB/s", b->raw_page.mb_per_sec);
  printf("pool %s (%u buffers of %s); hot relation %s (%u pages, %.0f%% of reads to the first "
         "%.0f%%)\n",
         pool, b->nbuffers, page, hot, b->hot_pages, 100 * HOT_PART_READS, 100 * HOT_PART);
  printf("big relation %s (%u pages, %.1fx the pool); raw %spread of it, 256 KiB at a time: %s,\n"
         "one %s page at a time into a 256 KiB buffer: %s\n",
         big, b->big_pages, (double)b->big_pages / b->nbuffers, b->direct ? "O_DIRECT " : "", raw,
         page, raw_page);
  if (b->direct)
    printf("I/O: direct (O_DIRECT): a miss is a device read\n");
  else if (b->io_note[0])
    printf("I/O: buffered, as direct I/O is not possible here (--io auto): %s\n", b->io_note);
  else
    printf("I/O: buffered: a miss is a copy from the kernel's page cache when it holds the "
           "page\n");
  char rate[96];
  /* The table's OLTP column is all the clients together: say both. */
  if (b->oltp_rate)
    snprintf(rate, sizeof rate, "paced at %" PRIu64 " ops/s each, %" PRIu64 " in all", b->oltp_rate,
             b->oltp_rate * b->oltp_threads);
  else
    snprintf(rate, sizeof rate, "unpaced");
  char seq_rate[48], index_rate[48];
  if (b->scan_rate)
    snprintf(seq_rate, sizeof seq_rate, "%" PRIu64 " pages/s", b->scan_rate);
  else
    snprintf(seq_rate, sizeof seq_rate, "flat out");
  if (b->index_rate)
    snprintf(index_rate, sizeof index_rate, "%" PRIu64 " pages/s", b->index_rate);
  else
    snprintf(index_rate, sizeof index_rate, "flat out");
  printf("%" PRIu64 " OLTP thread%s (%s, %.0f%% updates), %" PRIu64
         " scanner%s (seq %s, index %s); ring %s; %g s warm-up + %g s per cell\n",
         b->oltp_threads, b->oltp_threads == 1 ? "" : "s", rate, 100 * b->update_ratio,
         b->scan_threads, b->scan_threads == 1 ? "" : "s", seq_rate, index_rate,
         b->ring_size_flag ? b->ring_size_flag : "fixed:256KiB (the default)", b->warmup,
         b->seconds);
  printf("The hot relation fills at most %.1f%% of the pool: the best possible hot share.\n\n",
         100 * best_hot_share(b));
  /* With a list of rings, a column of the size each cell's ring had. */
  printf("%-22s %-4s ", "policy", "ring");
  if (b->ring_list) printf("%9s ", "ring size");
  printf("%-5s %12s %8s %9s %9s %9s %9s %10s %9s %8s %8s %7s\n", "scan", "oltp ops/s", "hit%",
         "p50 us", "p99 us", "miss us", "hot share", "scan MB/s", "MB/CPU-s", "raw MB/s",
         "scan/raw", "per CPU");
  fflush(stdout);
}

void scan_print_row(const scan_bench *b, const cell *c, const cell_result *r) {
  char mb[16] = "-", per_cpu[16] = "-", raw[16] = "-", ratio[16] = "-", cpu_ratio[16] = "-";
  if (c->scan != SCAN_NONE) {
    snprintf(mb, sizeof mb, "%.0f", r->scan_mb_per_sec);
    snprintf(per_cpu, sizeof per_cpu, "%.0f", scan_mb_per_cpu_sec(r));
    snprintf(cpu_ratio, sizeof cpu_ratio, "%.2f", scan_cpu_ratio(r));
  }
  /* An index scan is paced (--index-rate): its MB/s over the raw rate says
   * nothing about the pool, so that cell stays empty. */
  if (c->scan != SCAN_NONE && c->scan != SCAN_INDEX)
    snprintf(ratio, sizeof ratio, "%.2f", scan_ratio(r));
  if (c->scan == SCAN_SEQ) snprintf(raw, sizeof raw, "%.0f", r->raw_mb_per_sec);
  /* Without OLTP clients (--oltp-threads 0) their columns stay empty. */
  char ops[24] = "-", hit[16] = "-", p50[24] = "-", p99[24] = "-", miss[16] = "-";
  if (b->oltp_threads) {
    snprintf(ops, sizeof ops, "%.0f", r->oltp_ops_per_sec);
    snprintf(hit, sizeof hit, "%.2f%%", 100 * r->hit_ratio);
    snprintf(p50, sizeof p50, "%.2f", r->p50_us);
    snprintf(p99, sizeof p99, "%.2f", r->p99_us);
    if (r->hit_ratio < 1) snprintf(miss, sizeof miss, "%.2f", r->miss_us);
  }
  printf("%-22s %-4s ", b->specs[c->policy], scan_ring_label(c));
  if (b->ring_list) {
    char size[32] = "-";
    if (ring_bytes(b, r)) args_format_size(ring_bytes(b, r), size, sizeof size);
    printf("%9s ", size);
  }
  printf("%-5s %12s %8s %9s %9s %9s %8.1f%% %10s %9s %8s %8s %7s\n", scan_kind_names[c->scan], ops,
         hit, p50, p99, miss, 100 * r->hot_share, mb, per_cpu, raw, ratio, cpu_ratio);
  fflush(stdout);
}

/* ---- the conclusion ---- */

/* A line of the conclusion, wrapped at REPORT_WIDTH with a hanging indent. */
static void put_wrapped(const char *text) {
  int col = 0;
  bool line_start = true;
  for (const char *p = text; *p;) {
    while (*p == ' ') p++;
    if (!*p) break;
    size_t word = strcspn(p, " ");
    if (!line_start && col + 1 + (int)word > REPORT_WIDTH) {
      fputs("\n  ", stdout);
      col = 2;
      line_start = true;
    }
    if (!line_start) {
      fputc(' ', stdout);
      col++;
    }
    fwrite(p, 1, word, stdout);
    col += (int)word;
    line_start = false;
    p += word;
  }
  fputc('\n', stdout);
}

/* The index of policy p's cell with this scan and ring (spec: which ring
 * of the list), or -1. */
static int find_cell(const scan_bench *b, int p, scan_kind scan, bool ring, int spec) {
  for (int i = 0; i < b->ncells; i++) {
    const cell *c = &b->cells[i];
    if (c->policy == p && c->scan == scan && c->ring == ring && (!ring || c->ring_spec == spec))
      return i;
  }
  return -1;
}

typedef enum verdict { KEPT = 0, PARTLY, COLLAPSED, NVERDICTS } verdict;

static verdict judge(const cell_result *base, const cell_result *r) {
  if (r->hot_share >= 0.9 * base->hot_share && r->hit_ratio >= base->hit_ratio - 0.01) return KEPT;
  if (r->hot_share < 0.5 * base->hot_share) return COLLAPSED;
  return PARTLY;
}

/* The policies of one verdict and the range of their figures. */
/* The range of the values seen so far (n: how many). */
typedef struct span {
  double lo, hi;
  int n;
} span;

static void span_add(span *s, double x) {
  if (!s->n || x < s->lo) s->lo = x;
  if (!s->n || x > s->hi) s->hi = x;
  s->n++;
}

typedef struct group {
  char names[ARGS_LIST_MAX * 24];
  int n;
  span share, hit, base_hit;
} group;

static void group_add(group *g, const char *name, const cell_result *base, const cell_result *r) {
  size_t len = strlen(g->names);
  snprintf(g->names + len, sizeof g->names - len, "%s%s", g->n ? ", " : "", name);
  span_add(&g->share, r->hot_share);
  span_add(&g->hit, r->hit_ratio);
  span_add(&g->base_hit, base->hit_ratio);
  g->n++;
}

/* "x" or "x-y": the span's ends with `digits` decimals, once when they
 * print the same; as percentages (times 100, then "%") with `percent`. */
static void fmt_span(char *buf, size_t len, const span *s, int digits, bool percent) {
  char a[16], b[16];
  double scale = percent ? 100 : 1;
  snprintf(a, sizeof a, "%.*f", digits, scale * s->lo);
  snprintf(b, sizeof b, "%.*f", digits, scale * s->hi);
  const char *unit = percent ? "%" : "";
  if (strcmp(a, b) == 0)
    snprintf(buf, len, "%s%s", a, unit);
  else
    snprintf(buf, len, "%s-%s%s", a, b, unit);
}

/* "x%" or "x-y%" (percent of a share or ratio), with `digits` decimals. */
static void fmt_range(char *buf, size_t len, const span *s, int digits) {
  fmt_span(buf, len, s, digits, true);
}

/* "x.xx" or "x.xx-y.yy". */
static void fmt_ratio(char *buf, size_t len, const span *s) {
  fmt_span(buf, len, s, 2, false);
}

/* One line: how the policies fared under `scan` with `ring` (spec: which
 * ring of the list), against their baselines. Nothing when the matrix has
 * no such cells. */
static void conclude_scan(const scan_bench *b, const char *label, scan_kind scan, bool ring,
                          int spec) {
  group g[NVERDICTS];
  memset(g, 0, sizeof g);
  int total = 0;
  for (int p = 0; p < b->npolicies; p++) {
    int base = find_cell(b, p, SCAN_NONE, false, 0), i = find_cell(b, p, scan, ring, spec);
    if (base < 0 || i < 0) continue;
    verdict v = judge(&b->res[base], &b->res[i]);
    group_add(&g[v], b->specs[p], &b->res[base], &b->res[i]);
    total++;
  }
  if (!total) return;
  char line[4096], share[40], hit[40], base_hit[40];
  size_t off = (size_t)snprintf(line, sizeof line, "- %s:", label);
  static const char *const what[NVERDICTS] = {"kept the hot set", "lost part of the hot set",
                                              "collapsed"};
  for (int v = 0; v < NVERDICTS; v++) {
    if (!g[v].n) continue;
    fmt_range(share, sizeof share, &g[v].share, 1);
    fmt_range(hit, sizeof hit, &g[v].hit, 2);
    fmt_range(base_hit, sizeof base_hit, &g[v].base_hit, 2);
    const char *who = g[v].n == total ? (total == 1 ? g[v].names : "every policy") : g[v].names;
    off += (size_t)snprintf(line + off, sizeof line - off,
                            "%s %s %s (hot share %s, hit ratio %s against %s without a scan)",
                            off > strlen(label) + 3 ? ";" : "", who, what[v], share, hit, base_hit);
    if (off >= sizeof line) break;
  }
  put_wrapped(line);
}

/* What the hot set's loss costs in latency: the OLTP p99 beside a seq scan
 * over the policy's own baseline, with and without a ring, and what a
 * miss cost (the mean of the reads that missed, over the cells without a
 * ring). With direct I/O a miss is a device read, and this is the line
 * that shows why rings exist; buffered, it is a copy from the page cache. */
static void conclude_latency(const scan_bench *b) {
  span ratio[2] = {{0, 0, 0}, {0, 0, 0}}, miss = {0, 0, 0}; /* [ring]: without, with */
  for (int i = 0; i < b->ncells; i++) {
    const cell *c = &b->cells[i];
    if (c->scan != SCAN_SEQ) continue;
    int base = find_cell(b, c->policy, SCAN_NONE, false, 0);
    if (base < 0 || b->res[base].p99_us <= 0) continue;
    const cell_result *r = &b->res[i];
    span_add(&ratio[c->ring], r->p99_us / b->res[base].p99_us);
    /* A handful of misses says little about what one costs. */
    if (!c->ring && r->oltp_misses >= 100) span_add(&miss, r->miss_us);
  }
  if (!ratio[0].n && !ratio[1].n) return;
  char line[512], x[40];
  size_t off = (size_t)snprintf(
      line, sizeof line, "- OLTP p99 beside a seq scan, against the same policy without one:");
  if (ratio[1].n) {
    fmt_ratio(x, sizeof x, &ratio[1]);
    off += (size_t)snprintf(line + off, sizeof line - off, " %sx with a ring", x);
  }
  if (ratio[0].n) {
    fmt_ratio(x, sizeof x, &ratio[0]);
    off += (size_t)snprintf(line + off, sizeof line - off, "%s %sx without one",
                            ratio[1].n ? ";" : "", x);
  }
  if (miss.n) {
    char m[40];
    fmt_span(m, sizeof m, &miss, 0, false);
    snprintf(line + off, sizeof line - off, " (a miss cost %s us: %s)", m,
             b->direct ? "a device read" : "a copy from the page cache, or a device read");
  }
  put_wrapped(line);
}

/* The ring's scan speed against the raw preads, and the scan's without a
 * ring. */
static void conclude_speed(const scan_bench *b) {
  span speed[2] = {{0, 0, 0}, {0, 0, 0}}, ring_cpu = {0, 0, 0}; /* [ring]: without, with */
  for (int i = 0; i < b->ncells; i++) {
    const cell *c = &b->cells[i];
    if (c->scan != SCAN_SEQ) continue;
    span_add(&speed[c->ring], scan_ratio(&b->res[i]));
    if (c->ring) span_add(&ring_cpu, scan_cpu_ratio(&b->res[i]));
  }
  if (!speed[0].n && !speed[1].n) return;
  char line[512];
  size_t off =
      (size_t)snprintf(line, sizeof line, "- seq scan speed against one thread's 256 KiB preads:");
  char x[40], cpu[40];
  if (speed[1].n) {
    fmt_ratio(x, sizeof x, &speed[1]);
    fmt_ratio(cpu, sizeof cpu, &ring_cpu);
    off += (size_t)snprintf(line + off, sizeof line - off,
                            " %sx through the ring (%s per CPU-second)", x, cpu);
  }
  if (speed[0].n) {
    fmt_ratio(x, sizeof x, &speed[0]);
    snprintf(line + off, sizeof line - off, "%s %sx without a ring", speed[1].n ? ";" : "", x);
  }
  put_wrapped(line);
}

/* conclude_scan for each ring of the list (`label`: the one ring when
 * --ring-size named one; `each`: followed by the ring's spec, for a list). */
static void conclude_rings(const scan_bench *b, const char *label, const char *each,
                           scan_kind scan) {
  for (int k = 0; k < b->nrings; k++) {
    char line[RING_NAME_LEN + 48];
    snprintf(line, sizeof line, "%s %s", each, b->ring_names[k]);
    conclude_scan(b, b->ring_list ? line : label, scan, true, k);
  }
}

/* With a list of rings: the seq scan's MB/s through each (the mean over the
 * policies), and the fastest. */
static void conclude_ring_speed(const scan_bench *b) {
  if (!b->ring_list) return;
  char line[4096];
  size_t off = (size_t)snprintf(line, sizeof line, "- seq scan MB/s by ring (mean over policies):");
  int best = -1, nlisted = 0;
  double best_mb = 0;
  for (int k = 0; k < b->nrings && off < sizeof line; k++) {
    double sum = 0;
    int n = 0;
    for (int i = 0; i < b->ncells; i++) {
      const cell *c = &b->cells[i];
      if (c->scan == SCAN_SEQ && c->ring && c->ring_spec == k) {
        sum += b->res[i].scan_mb_per_sec;
        n++;
      }
    }
    if (!n) continue;
    double mb = sum / n;
    off += (size_t)snprintf(line + off, sizeof line - off, "%s %s %.0f", nlisted++ ? "," : "",
                            b->ring_names[k], mb);
    if (best < 0 || mb > best_mb) {
      best = k;
      best_mb = mb;
    }
  }
  if (best < 0 || off >= sizeof line) return;
  snprintf(line + off, sizeof line - off, "; fastest: %s", b->ring_names[best]);
  put_wrapped(line);
}

static void print_vacuum_table(const scan_bench *b) {
  bool any = false;
  for (int i = 0; i < b->ncells; i++) any |= b->cells[i].scan == SCAN_VACUUM;
  if (!any) return;
  printf("\nvacuum scans: buffers the ring held at the end, buffers recycled, WAL flushes\n"
         "the recycling forced, flushes per recycle, and (with --wal log) the log's\n"
         "fdatasyncs in the cell and their time\n\n");
  printf("%-22s %-4s %12s %12s %12s %10s %10s %8s\n", "policy", "ring", "ring bufs", "recycles",
         "WAL flushes", "per recycle", "syncs", "sync s");
  for (int i = 0; i < b->ncells; i++) {
    const cell_result *r = &b->res[i];
    const cell *c = &b->cells[i];
    if (c->scan != SCAN_VACUUM) continue;
    printf("%-22s %-4s %12u %12" PRIu64 " %12" PRIu64 " %10.4f %10" PRIu64 " %8.3f\n",
           b->specs[c->policy], scan_ring_label(c), r->ring_buffers, r->reuses, r->wal_flushes,
           r->reuses ? (double)r->wal_flushes / (double)r->reuses : 0.0, r->wal_syncs,
           r->wal_sync_seconds);
  }
}

void scan_print_footer(const scan_bench *b) {
  bool vacuum = false, index = false;
  for (int i = 0; i < b->ncells; i++) {
    vacuum |= b->cells[i].scan == SCAN_VACUUM;
    index |= b->cells[i].scan == SCAN_INDEX;
  }
  /* Only the kinds of scan this run had get their words. */
  const char *aside = vacuum && index ? " (vacuum: over the first measurement; index scans are "
                                        "paced, so none)"
                      : vacuum        ? " (vacuum: over the first measurement)"
                      : index         ? " (index scans are paced, so none)"
                                      : "";
  printf("\noltp ops/s: all the OLTP clients together; hit%%: OLTP reads found in the pool;\n"
         "p50/p99: OLTP operation latency; hot share: buffers holding hot-relation pages at\n"
         "the end of the cell (at most %.1f%% here); MB/CPU-s: scan MB per CPU-second of the\n"
         "scanners and the pool's I/O workers together; raw MB/s: 256 KiB preads of the big\n"
         "relation by one thread, just before and after each sequential-scan cell (the\n"
         "mean); scan/raw: scan MB/s over that%s -- with an I/O worker, two threads' work\n"
         "against one; per CPU: MB/CPU-s over the raw preads' MB per CPU-second, the same\n"
         "comparison per unit of CPU. %s never use a ring.\n",
         100 * best_hot_share(b), aside,
         index ? "Index scans and the baselines (scan none)" : "The baselines (scan none)");
  if (b->ring_list)
    printf("ring size: the ring each cell's scanners used (--ring-size's list; \"-\": none).\n");
  printf("\nWhat this run shows (hot share at best %.1f%%; \"kept\": at least 90%% of the\n"
         "policy's own share without a scan and its hit ratio within a point; \"collapsed\":\n"
         "under half that share):\n",
         100 * best_hot_share(b));
  conclude_rings(b, "seq scan with a ring", "seq scan with ring", SCAN_SEQ);
  conclude_scan(b, "seq scan without a ring", SCAN_SEQ, false, 0);
  conclude_scan(b, "index scan (no ring can help)", SCAN_INDEX, false, 0);
  conclude_rings(b, "vacuum with its ring", "vacuum with ring", SCAN_VACUUM);
  conclude_scan(b, "vacuum without a ring", SCAN_VACUUM, false, 0);
  conclude_latency(b);
  conclude_speed(b);
  conclude_ring_speed(b);
  print_vacuum_table(b);
}

/* ---- the plot ---- */

int scan_plot(const scan_bench *b) {
  int n = b->ncells;
  scan_plot_cell *pc = calloc((size_t)n, sizeof *pc);
  char(*names)[96] = calloc((size_t)n, sizeof *names);
  if (!pc || !names) {
    free(pc);
    free(names);
    fprintf(stderr, PROG ": --plot: out of memory\n");
    return 1;
  }
  for (int i = 0; i < n; i++) {
    const cell *c = &b->cells[i];
    const cell_result *r = &b->res[i];
    scan_cell_name(b, c, names[i], sizeof names[i]);
    pc[i] = (scan_plot_cell){.policy = b->specs[c->policy],
                             .variant = names[i],
                             .hit_ratio = r->hit_ratio,
                             .oltp_ops = r->oltp_ops_per_sec,
                             .scan_mb = r->scan_mb_per_sec,
                             .p99_us = r->p99_us};
  }
  char title[256], pool[32], big[32];
  args_format_size((uint64_t)b->nbuffers * b->page_size, pool, sizeof pool);
  args_format_size((uint64_t)b->big_pages * b->page_size, big, sizeof big);
  snprintf(title, sizeof title, "hotset bench scan: pool %s, scanned relation %s", pool, big);
  int rc = bench_scan_plot(b->plot_file, title, pc, (size_t)n) == 0 ? 0 : 1;
  free(pc);
  free(names);
  if (rc == 0 && !b->json) printf("\nplot: %s\n", b->plot_file);
  return rc;
}
