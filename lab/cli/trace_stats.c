/*
 * cli/trace_stats.c — `hotset trace-stats FILE`: what a trace holds.
 *
 * Requests, distinct objects, one-hit wonders (objects requested once — the
 * share S3-FIFO's small queue is built to filter), working-set bytes (the
 * sum of each object's first size), and a histogram of object sizes in
 * power-of-two buckets.
 *
 * The text report gives byte counts in human units (1.89 GiB) with the
 * exact figure beside them, and a trace without sizes (txt, csv without a
 * size column) in objects, since its "bytes" are objects counted once
 * each. The JSON keeps every figure a raw number.
 *
 * A trace with a found column (hotset's PostgreSQL trace csv) also shows
 * how many requests the traced server found in its cache and missed, and
 * one with a pid column how many processes made the requests.
 */
#include "cli/sim_cmd.h"
#include "common/args.h"
#include "common/human_size.h"
#include "common/json.h"
#include "sim/sim.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG "hotset trace-stats"

static const args_command command = {
    .cmd = {.prog = PROG},
    .synopsis = "--trace FILE [flags]\n       hotset trace-stats FILE [flags]",
    .about = "Prints requests, distinct objects, one-hit wonders, working-set bytes and a\n"
             "histogram of object sizes; for a trace with a found column (tools/pg-trace's\n"
             "PostgreSQL csv) the requests the server found and missed, and with a pid\n"
             "column the number of processes. It reads a trace as `hotset sim` does.\n"};

static const args_cmd *const cmdp = &command.cmd;

/* Over the requests whose found is known. */
static double server_miss_ratio(const hs_sim_trace *t) {
  uint64_t known = t->found_hits + t->found_misses;
  return known ? (double)t->found_misses / (double)known : 0.0;
}

int trace_stats_main(int argc, char **argv) {
  const char *format_name = "auto", *csv_spec = NULL;
  bool skip_bad = false, json = false;
  uint64_t max_requests = 0;
  const char *trace_flag = NULL;
  const args_opt opts[] = {
      TRACE_OPT_FILE(&trace_flag, "the trace (or give it as the one argument); a .zst suffix "
                                  "or zstd content is decompressed"),
      TRACE_OPT_FORMAT(&format_name),
      {.name = "csv",
       .kind = ARGS_STRING,
       .dest = &csv_spec,
       .arg = "SPEC",
       .help = "csv columns: id=COL,size=COL,time=COL[,header][,delimiter=X] (1-based)"},
      {.name = "skip-bad",
       .kind = ARGS_FLAG,
       .dest = &skip_bad,
       .help = "skip bad records (counted and reported) instead of stopping at the first"},
      {.name = "max-requests",
       .kind = ARGS_UINT,
       .dest = &max_requests,
       .min = 1,
       .help = "load at most N requests, else stop with an error (default: what fits in "
               "half of the memory this process may use, at 64 bytes a request)"},
      {.name = "json", .kind = ARGS_FLAG, .dest = &json, .help = "print one JSON object"},
  };
  int npos = args_parse(cmdp, opts, sizeof opts / sizeof opts[0], argc, argv, 1);
  const char *trace_path = trace_path_from_args(cmdp, trace_flag, npos, argv);
  hs_trace_options topts = trace_options_from_flags(cmdp, format_name, csv_spec, skip_bad, NULL);
  hs_sim_trace *t;
  const hs_sim_load_options limits = {.max_requests = max_requests, .flag = "--max-requests"};
  if (hs_sim_load(trace_path, &topts, &limits, NULL, NULL, &t) != HS_OK) {
    fprintf(stderr, PROG ": %s\n", hs_last_error());
    return 1;
  }
  /* Sizes per object: the first request's. */
  uint64_t hist[33] = {0};
  uint8_t *seen = calloc(t->objects ? t->objects : 1, 1);
  if (!seen) {
    fprintf(stderr, PROG ": out of memory\n");
    hs_sim_trace_free(t);
    return 1;
  }
  for (uint64_t r = 0; r < t->requests; r++) {
    uint32_t o = t->obj[r];
    if (seen[o]) continue;
    seen[o] = 1;
    int b = 0;
    while (b < 32 && (1ull << (b + 1)) <= hs_sim_size(t, r)) b++;
    hist[b]++;
  }
  free(seen);
  if (json) {
    json_out jo;
    json_begin(&jo, stdout);
    json_str(&jo, "trace", trace_path);
    json_str(&jo, "format", hs_trace_format_name(t->format));
    json_bool(&jo, "compressed", t->compressed);
    json_u64(&jo, "requests", t->requests);
    json_u64(&jo, "objects", t->objects);
    json_u64(&jo, "one_hit_wonders", t->one_hit);
    json_u64(&jo, "working_set_bytes", t->ws_bytes);
    json_u64(&jo, "bytes_requested", t->bytes_requested);
    json_u64(&jo, "bad_records", t->bad_records);
    if (t->found) {
      json_u64(&jo, "server_hits", t->found_hits);
      json_u64(&jo, "server_misses", t->found_misses);
      json_double(&jo, "server_miss_ratio", "%.6f", server_miss_ratio(t));
    }
    if (t->pids) json_u64(&jo, "pids", t->pids);
    json_object_begin(&jo, "size_histogram");
    for (int b = 0; b < 33; b++) {
      if (!hist[b]) continue;
      char key[24];
      snprintf(key, sizeof key, "%" PRIu64, (uint64_t)1 << b);
      json_u64(&jo, key, hist[b]);
    }
    json_object_end(&jo);
    json_end_line(&jo);
  } else {
    char a[32], b2[32];
    printf("trace              %s (%s%s)\n", trace_path, hs_trace_format_name(t->format),
           t->compressed ? ", zstd" : "");
    printf("requests           %" PRIu64 "\n", t->requests);
    printf("distinct objects   %" PRIu64 "\n", t->objects);
    printf("one-hit wonders    %" PRIu64 " (%.1f%% of objects)\n", t->one_hit,
           t->objects ? 100.0 * (double)t->one_hit / (double)t->objects : 0.0);
    if (t->sized) {
      printf("working set        %s (%" PRIu64 " bytes)\n", human_size(t->ws_bytes, a, sizeof a),
             t->ws_bytes);
      printf("bytes requested    %s (%" PRIu64 " bytes)\n",
             human_size(t->bytes_requested, a, sizeof a), t->bytes_requested);
    } else {
      printf("working set        %" PRIu64 " objects (the trace has no sizes: each counts 1)\n",
             t->objects);
    }
    if (t->bad_records) printf("bad records        %" PRIu64 " (skipped)\n", t->bad_records);
    if (t->found) {
      printf("server found       %" PRIu64 " (hits)\n", t->found_hits);
      printf("server missed      %" PRIu64 " (miss ratio %.4f%%)\n", t->found_misses,
             100 * server_miss_ratio(t));
    }
    if (t->pids) printf("processes (pids)   %" PRIu64 "\n", t->pids);
    if (t->sized) {
      printf("object sizes (first request of each object; from .. below):\n");
      for (int b = 0; b < 33; b++)
        if (hist[b])
          printf("  %10s .. %-10s %10" PRIu64 " objects\n",
                 human_size((uint64_t)1 << b, a, sizeof a),
                 human_size((uint64_t)2 << b, b2, sizeof b2), hist[b]);
    }
  }
  hs_sim_trace_free(t);
  return 0;
}
