/*
 * cli/trace_stats.c — `hotset trace-stats FILE`: what a trace holds.
 *
 * Requests, distinct objects, one-hit wonders (objects requested once — the
 * share S3-FIFO's small queue is built to filter), working-set bytes (the
 * sum of each object's first size), and a histogram of object sizes in
 * power-of-two buckets.
 */
#include "cli/args.h"
#include "cli/sim_cmd.h"
#include "sim/sim.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG "hotset trace-stats"

static const char usage[] =
    "usage: hotset trace-stats FILE [--format F] [--csv SPEC] [--skip-bad]\n"
    "                          [--max-requests N] [--json]\n"
    "\n"
    "Prints requests, distinct objects, one-hit wonders, working-set bytes and a\n"
    "histogram of object sizes. The flags are those of hotset sim; --max-requests\n"
    "caps the requests loaded (default: what fits in half of the memory this\n"
    "process may use, at 64 bytes a request).\n";

static const args_cmd cmd = {PROG, usage};

int trace_stats_main(int argc, char **argv) {
  const char *format_name = "auto", *csv_spec = NULL;
  bool skip_bad = false, json = false;
  uint64_t max_requests = 0;
  const args_opt opts[] = {
      {.name = "format", .kind = ARGS_STRING, .dest = &format_name},
      {.name = "csv", .kind = ARGS_STRING, .dest = &csv_spec},
      {.name = "skip-bad", .kind = ARGS_FLAG, .dest = &skip_bad},
      {.name = "json", .kind = ARGS_FLAG, .dest = &json},
      {.name = "max-requests", .kind = ARGS_UINT, .dest = &max_requests, .min = 1},
  };
  int npos = args_parse(&cmd, opts, sizeof opts / sizeof opts[0], argc, argv, 1);
  if (npos != 1) args_usage_error(&cmd, "a trace file is required");
  hs_trace_options topts = trace_options_from_flags(&cmd, format_name, csv_spec, skip_bad);
  hs_sim_trace *t;
  const hs_sim_limits limits = {.max_requests = max_requests, .flag = "--max-requests"};
  if (hs_sim_load(argv[1], &topts, &limits, NULL, NULL, &t) != HS_OK) {
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
    while (b < 32 && (1ull << (b + 1)) <= t->size[r]) b++;
    hist[b]++;
  }
  free(seen);
  if (json) {
    printf("{\"trace\":\"%s\",\"format\":\"%s\",\"compressed\":%s,\"requests\":%" PRIu64
           ",\"objects\":%" PRIu64 ",\"one_hit_wonders\":%" PRIu64 ",\"working_set_bytes\":%" PRIu64
           ",\"bytes_requested\":%" PRIu64 ",\"bad_records\":%" PRIu64 ",\"size_histogram\":{",
           argv[1], hs_trace_format_name(t->format), t->compressed ? "true" : "false", t->requests,
           t->objects, t->one_hit, t->ws_bytes, t->bytes_requested, t->bad_records);
    bool first = true;
    for (int b = 0; b < 33; b++) {
      if (!hist[b]) continue;
      printf("%s\"%" PRIu64 "\":%" PRIu64, first ? "" : ",", (uint64_t)1 << b, hist[b]);
      first = false;
    }
    printf("}}\n");
  } else {
    char ws[32];
    printf("trace              %s (%s%s)\n", argv[1], hs_trace_format_name(t->format),
           t->compressed ? ", zstd" : "");
    printf("requests           %" PRIu64 "\n", t->requests);
    printf("distinct objects   %" PRIu64 "\n", t->objects);
    printf("one-hit wonders    %" PRIu64 " (%.1f%% of objects)\n", t->one_hit,
           t->objects ? 100.0 * (double)t->one_hit / (double)t->objects : 0.0);
    printf("working set        %" PRIu64 " bytes (%s)\n", t->ws_bytes,
           args_format_size(t->ws_bytes, ws, sizeof ws));
    printf("bytes requested    %" PRIu64 "\n", t->bytes_requested);
    if (t->bad_records) printf("bad records        %" PRIu64 " (skipped)\n", t->bad_records);
    printf("object sizes (first request of each object):\n");
    for (int b = 0; b < 33; b++)
      if (hist[b])
        printf("  %12" PRIu64 " .. %-12" PRIu64 " %10" PRIu64 "\n", (uint64_t)1 << b,
               ((uint64_t)2 << b) - 1, hist[b]);
  }
  hs_sim_trace_free(t);
  return 0;
}
