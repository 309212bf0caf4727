/*
 * cli/gen_trace.c — `hotset gen-trace`: synthetic traces, so every
 * experiment here can be reproduced from a seed. The file is written in the
 * format its name says (oracleGeneral unless it ends in .csv or .txt; see
 * hs_trace_writer_open), so that `hotset sim` reads back what it is told
 * the file is.
 *
 * Workloads: Zipf(alpha) over N objects (the skewed OLTP access everyone
 * models), uniform, a loop (objects 0..N-1 over and over — LRU's worst case
 * when N exceeds the cache), and, with --scan, the scan-pollution mix: the
 * chosen workload interrupted every --scan-period requests by a sequential
 * scan over --scan objects that the hot set never touches, larger than any
 * sensible cache. Object ids are the popularity ranks scrambled by an
 * invertible multiplication, so popular objects are not numbered 0, 1, 2.
 * Every record carries its next-access time (computed in a backward pass),
 * so belady can run on the file directly.
 */
#include "cli/sim_cmd.h"
#include "common/args.h"
#include "sim/trace.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG "hotset gen-trace"

static const char usage[] =
    "usage: hotset gen-trace -o FILE [--zipf ALPHA | --uniform | --loop] [flags]\n"
    "\n"
    "Writes a synthetic trace in the format FILE's name says: libCacheSim's\n"
    "oracleGeneral (.oracleGeneral, .bin or any other name), with next-access\n"
    "times; csv (.csv: time,obj_id,obj_size,next_access_vtime with a header); or\n"
    "txt (.txt: one id a line). zstd-compressed if FILE then ends in .zst. There is\n"
    "no vscsi writer: a .vscsi name is refused.\n"
    "\n"
    "flags:\n"
    "  -o, --output FILE   where to write (required)\n"
    "  --zipf ALPHA        Zipf popularity with exponent ALPHA (default 0.9)\n"
    "  --uniform           every object equally likely\n"
    "  --loop              objects 0..N-1 in order, over and over\n"
    "  --objects N         distinct objects of the workload (default 1000000)\n"
    "  --requests N        workload requests (default 10000000); --scan adds its\n"
    "                     scans' requests to them\n"
    "  --obj-size BYTES    every object's size (default 4096)\n"
    "  --scan N            scan pollution: sequential scans over N other objects\n"
    "  --scan-period N     one scan every N workload requests (default requests/10)\n"
    "  --seed N            random seed (default 1)\n"
    "  --help              show this help\n";

static const args_cmd cmd = {PROG, usage};

static uint64_t next_rand(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

/* A uniform double in [0, 1). */
static double unit_rand(uint64_t *s) {
  return (double)(next_rand(s) >> 11) * 0x1.0p-53;
}

/* Ranks are scrambled into ids; the multiplier is odd, so this is a
 * bijection on 64-bit integers. */
static uint64_t rank_to_id(uint64_t rank) {
  return (rank + 1) * 0x9E3779B97F4A7C15ULL;
}

int gen_trace_main(int argc, char **argv) {
  const char *out = NULL;
  double alpha = 0.9;
  bool uniform = false, loop = false;
  uint64_t objects = 1000000, requests = 10000000, obj_size = 4096, scan = 0, scan_period = 0,
           seed = 1;
  bool zipf_given = false;
  double zipf_arg = -1;
  /* "-o FILE" is the one short flag: rewrite it to --output. */
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "-o") == 0) argv[i] = "--output";
  const args_opt opts[] = {
      {.name = "output", .kind = ARGS_STRING, .dest = &out},
      {.name = "zipf", .kind = ARGS_DOUBLE, .dest = &zipf_arg, .dmin = 0.0, .dmax = 10.0},
      {.name = "uniform", .kind = ARGS_FLAG, .dest = &uniform},
      {.name = "loop", .kind = ARGS_FLAG, .dest = &loop},
      {.name = "objects", .kind = ARGS_UINT, .dest = &objects, .min = 1, .max = 1u << 30},
      {.name = "requests", .kind = ARGS_UINT, .dest = &requests, .min = 1, .max = 1ull << 34},
      {.name = "obj-size", .kind = ARGS_SIZE, .dest = &obj_size, .min = 1, .max = UINT32_MAX},
      {.name = "scan", .kind = ARGS_UINT, .dest = &scan, .min = 1, .max = 1u << 30},
      {.name = "scan-period", .kind = ARGS_UINT, .dest = &scan_period, .min = 1},
      {.name = "seed", .kind = ARGS_UINT, .dest = &seed},
  };
  args_parse(&cmd, opts, sizeof opts / sizeof opts[0], argc, argv, 0);
  if (!out) args_usage_error(&cmd, "-o: an output file is required");
  zipf_given = zipf_arg >= 0;
  if (zipf_given) alpha = zipf_arg;
  if (zipf_given + uniform + loop > 1)
    args_usage_error(&cmd, "--zipf, --uniform and --loop exclude each other");
  if (scan_period && !scan) args_usage_error(&cmd, "--scan-period needs --scan");
  if (scan && !scan_period) scan_period = requests / 10 ? requests / 10 : 1;
  /* Scans add requests: the total is held to --requests' own limit, which
   * also keeps the arithmetic below from overflowing. */
  const uint64_t max_total = 1ull << 34;
  uint64_t scans = scan ? requests / scan_period : 0;
  if (scans && scan > (max_total - requests) / scans)
    args_usage_error(&cmd,
                     "--scan %" PRIu64 " every %" PRIu64 " of %" PRIu64
                     " requests makes more than %" PRIu64 " requests in all",
                     scan, scan_period, requests, max_total);

  /* Opened first, so that a name it cannot write (.vscsi) or a directory
   * that is not there is reported before minutes of generating. */
  hs_trace_writer *w;
  hs_status st = hs_trace_writer_open(out, &w);
  if (st == HS_ERR_INVALID) args_usage_error(&cmd, "-o: %s", hs_last_error());
  if (st != HS_OK) {
    fprintf(stderr, PROG ": %s\n", hs_last_error());
    return 1;
  }
  hs_trace_format format = hs_trace_writer_format(w);

  /* The Zipf CDF over ranks, searched by bisection. */
  double *cdf = NULL;
  if (!uniform && !loop) {
    cdf = malloc(sizeof *cdf * objects);
    if (!cdf) {
      fprintf(stderr, PROG ": out of memory for %" PRIu64 " objects\n", objects);
      hs_trace_writer_close(w);
      return 1;
    }
    double sum = 0;
    for (uint64_t k = 0; k < objects; k++) sum += 1.0 / pow((double)(k + 1), alpha);
    double acc = 0;
    for (uint64_t k = 0; k < objects; k++) {
      acc += 1.0 / pow((double)(k + 1), alpha) / sum;
      cdf[k] = acc;
    }
    cdf[objects - 1] = 1.0;
  }

  /* Pass 1: the dense object (rank, or objects + scan position) of every
   * request; pass 2, backwards: next-access times; then write. */
  uint64_t total = requests + scans * scan;
  uint32_t *dense = malloc(sizeof *dense * total);
  int64_t *next = malloc(sizeof *next * total);
  int64_t *last = malloc(sizeof *last * (objects + scan));
  if (!dense || !next || !last) {
    fprintf(stderr, PROG ": out of memory for %" PRIu64 " requests\n", total);
    free(cdf);
    free(dense);
    free(next);
    free(last);
    hs_trace_writer_close(w);
    return 1;
  }
  uint64_t rng = seed, n = 0;
  for (uint64_t r = 0; r < requests; r++) {
    uint64_t rank;
    if (loop)
      rank = r % objects;
    else if (uniform)
      rank = next_rand(&rng) % objects;
    else {
      double u = unit_rand(&rng);
      uint64_t lo = 0, hi = objects - 1;
      while (lo < hi) {
        uint64_t mid = (lo + hi) / 2;
        if (cdf[mid] < u)
          lo = mid + 1;
        else
          hi = mid;
      }
      rank = lo;
    }
    dense[n++] = (uint32_t)rank;
    if (scan && (r + 1) % scan_period == 0)
      for (uint64_t k = 0; k < scan; k++) dense[n++] = (uint32_t)(objects + k);
  }
  for (uint64_t o = 0; o < objects + scan; o++) last[o] = -1;
  for (uint64_t i = n; i-- > 0;) {
    next[i] = last[dense[i]];
    last[dense[i]] = (int64_t)i;
  }
  free(last);
  free(cdf);

  for (uint64_t i = 0; st == HS_OK && i < n; i++)
    /* next_access_vtime counts requests from 1, as libCacheSim does. */
    st = hs_trace_write(w, (uint32_t)i, rank_to_id(dense[i]), (uint32_t)obj_size,
                        next[i] < 0 ? -1 : next[i] + 1);
  if (st == HS_OK)
    st = hs_trace_writer_close(w);
  else
    hs_trace_writer_close(w);
  free(dense);
  free(next);
  if (st != HS_OK) {
    fprintf(stderr, PROG ": %s\n", hs_last_error());
    return 1;
  }
  /* What was written is the command's result: stdout, so that stderr
   * stays empty when nothing went wrong. */
  printf("wrote %" PRIu64 " requests to %s (%s)\n", n, out, hs_trace_format_name(format));
  return 0;
}
