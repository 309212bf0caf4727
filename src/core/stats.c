/*
 * core/stats.c — naming, summing and formatting I/O statistics (into a
 * caller's buffer: the library writes to no stream).
 */
#include "hotset/stats.h"

#include "core/error.h"

#include <inttypes.h>
#include <stdarg.h>
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

uint64_t hs_pool_stats_total(const hs_pool_stats *s, hs_io_counter c) {
  uint64_t t = 0;
  for (int x = 0; x < HS_IOCTX_COUNT; x++) t += s->count[x][c];
  return t;
}

double hs_pool_stats_hit_ratio(const hs_pool_stats *s) {
  uint64_t hits = hs_pool_stats_total(s, HS_STAT_HITS),
           reads = hs_pool_stats_total(s, HS_STAT_READS);
  return hits + reads ? (double)hits / (double)(hits + reads) : 0.0;
}

/* Appends to a caller's buffer, snprintf-style: `used` counts every byte
 * the text needs, written or not, so a short buffer is found at the end. */
typedef struct text {
  char *buf;
  size_t len, used;
} text;

__attribute__((format(printf, 2, 3))) static void add(text *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  size_t room = t->used < t->len ? t->len - t->used : 0;
  int n = vsnprintf(room ? t->buf + t->used : NULL, room, fmt, ap);
  va_end(ap);
  if (n > 0) t->used += (size_t)n;
}

static void table_row(text *t, const char *name, const uint64_t *row) {
  add(t, "%-10s", name);
  for (int c = 0; c < HS_STAT_COUNT; c++) add(t, " %12" PRIu64, row[c]);
  add(t, "\n");
}

static void format_table(text *t, const hs_pool_stats *s) {
  add(t,
      "pool: %u buffers of %u bytes; %u valid, %u dirty, %u pinned; hit%% %.2f; "
      "misuse %" PRIu64 "\n",
      s->nbuffers, s->page_size, s->valid, s->dirty, s->pinned, 100.0 * hs_pool_stats_hit_ratio(s),
      s->misuse);
  add(t, "%-10s", "context");
  for (int c = 0; c < HS_STAT_COUNT; c++) add(t, " %12s", counter_names[c]);
  add(t, "\n");
  uint64_t total[HS_STAT_COUNT] = {0};
  for (int x = 0; x < HS_IOCTX_COUNT; x++) {
    uint64_t any = 0;
    for (int c = 0; c < HS_STAT_COUNT; c++) {
      any |= s->count[x][c];
      total[c] += s->count[x][c];
    }
    if (any || x == HS_IOCTX_NORMAL) table_row(t, context_names[x], s->count[x]);
  }
  table_row(t, "total", total);
}

static void json_counters(text *t, const uint64_t *row) {
  add(t, "{");
  for (int c = 0; c < HS_STAT_COUNT; c++)
    add(t, "%s\"%s\":%" PRIu64, c ? "," : "", counter_names[c], row[c]);
  add(t, "}");
}

static void format_json(text *t, const hs_pool_stats *s) {
  add(t,
      "{\"nbuffers\":%u,\"page_size\":%u,\"valid\":%u,\"dirty\":%u,\"pinned\":%u,"
      "\"hit_ratio\":%.6f,\"misuse\":%" PRIu64 ",\"contexts\":{",
      s->nbuffers, s->page_size, s->valid, s->dirty, s->pinned, hs_pool_stats_hit_ratio(s),
      s->misuse);
  uint64_t total[HS_STAT_COUNT] = {0};
  for (int x = 0; x < HS_IOCTX_COUNT; x++) {
    add(t, "%s\"%s\":", x ? "," : "", context_names[x]);
    json_counters(t, s->count[x]);
    for (int c = 0; c < HS_STAT_COUNT; c++) total[c] += s->count[x][c];
  }
  add(t, "},\"total\":");
  json_counters(t, total);
  add(t, "}\n");
}

hs_status hs_pool_stats_format(const hs_pool_stats *s, bool json, char *buf, size_t len) {
  if (!s || !buf || len == 0)
    return hs_fail(HS_ERR_MISUSE, 0, "hs_pool_stats_format: statistics and a buffer are required");
  text t = {.buf = buf, .len = len, .used = 0};
  if (json)
    format_json(&t, s);
  else
    format_table(&t, s);
  if (t.used >= len)
    return hs_fail(HS_ERR_INVALID, 0,
                   "hs_pool_stats_format: the text needs %zu bytes, the buffer has %zu "
                   "(HS_POOL_STATS_FORMAT_BYTES is always enough)",
                   t.used + 1, len);
  return HS_OK;
}
