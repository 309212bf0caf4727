/*
 * core/stats.c — naming, summing and printing I/O statistics.
 */
#include "hotset/stats.h"

#include <inttypes.h>
#include <stdio.h>

static const char *const context_names[HS_IOCTX_COUNT] = {"normal", "bulkread", "bulkwrite",
                                                          "vacuum"};
static const char *const counter_names[HS_STAT_COUNT] = {
    "hits",   "reads",   "writes",      "extends",     "evictions",
    "reuses", "rejects", "wal_flushes", "read_errors", "write_errors"};

const char *hs_io_context_name(hs_io_context ctx) {
  return (unsigned)ctx < HS_IOCTX_COUNT ? context_names[ctx] : "unknown";
}

const char *hs_io_counter_name(hs_io_counter c) {
  return (unsigned)c < HS_STAT_COUNT ? counter_names[c] : "unknown";
}

uint64_t hs_io_stats_total(const hs_io_stats *s, hs_io_counter c) {
  uint64_t t = 0;
  for (int x = 0; x < HS_IOCTX_COUNT; x++) t += s->count[x][c];
  return t;
}

double hs_io_stats_hit_ratio(const hs_io_stats *s) {
  uint64_t hits = hs_io_stats_total(s, HS_STAT_HITS), reads = hs_io_stats_total(s, HS_STAT_READS);
  return hits + reads ? (double)hits / (double)(hits + reads) : 0.0;
}

static void print_row(FILE *out, const char *name, const uint64_t *row) {
  fprintf(out, "%-10s", name);
  for (int c = 0; c < HS_STAT_COUNT; c++) fprintf(out, " %12" PRIu64, row[c]);
  fputc('\n', out);
}

void hs_io_stats_print_table(const hs_io_stats *s, FILE *out) {
  fprintf(out,
          "pool: %u buffers of %u bytes; %u valid, %u dirty, %u pinned; hit%% %.2f; "
          "misuse %" PRIu64 "\n",
          s->nbuffers, s->page_size, s->valid, s->dirty, s->pinned,
          100.0 * hs_io_stats_hit_ratio(s), s->misuse);
  fprintf(out, "%-10s", "context");
  for (int c = 0; c < HS_STAT_COUNT; c++) fprintf(out, " %12s", counter_names[c]);
  fputc('\n', out);
  uint64_t total[HS_STAT_COUNT] = {0};
  for (int x = 0; x < HS_IOCTX_COUNT; x++) {
    uint64_t any = 0;
    for (int c = 0; c < HS_STAT_COUNT; c++) {
      any |= s->count[x][c];
      total[c] += s->count[x][c];
    }
    if (any || x == HS_IOCTX_NORMAL) print_row(out, context_names[x], s->count[x]);
  }
  print_row(out, "total", total);
}

static void print_json_counters(FILE *out, const uint64_t *row) {
  fputc('{', out);
  for (int c = 0; c < HS_STAT_COUNT; c++)
    fprintf(out, "%s\"%s\":%" PRIu64, c ? "," : "", counter_names[c], row[c]);
  fputc('}', out);
}

void hs_io_stats_print_json(const hs_io_stats *s, FILE *out) {
  fprintf(out,
          "{\"nbuffers\":%u,\"page_size\":%u,\"valid\":%u,\"dirty\":%u,\"pinned\":%u,"
          "\"hit_ratio\":%.6f,\"misuse\":%" PRIu64 ",\"contexts\":{",
          s->nbuffers, s->page_size, s->valid, s->dirty, s->pinned, hs_io_stats_hit_ratio(s),
          s->misuse);
  uint64_t total[HS_STAT_COUNT] = {0};
  for (int x = 0; x < HS_IOCTX_COUNT; x++) {
    fprintf(out, "%s\"%s\":", x ? "," : "", context_names[x]);
    print_json_counters(out, s->count[x]);
    for (int c = 0; c < HS_STAT_COUNT; c++) total[c] += s->count[x][c];
  }
  fputs("},\"total\":", out);
  print_json_counters(out, total);
  fputs("}\n", out);
}
