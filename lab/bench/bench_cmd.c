/*
 * bench/bench_cmd.c — `hotset bench <experiment> [flags]`: picks the
 * experiment and hands it the rest of the command line.
 *
 * Each experiment is a table entry (name, one-line summary, entry point
 * taking its own argc/argv with argv[0] = its name), so a new lab — vacuum
 * next — is one line here plus its own file, as subcommands are in
 * cli/main.c. Errors follow the tool's convention: one line naming the
 * problem, then where the experiments are listed, exit status 2.
 */
#include "bench/bench_cmd.h"

#include "bench/bench_recovery.h"
#include "bench/bench_scan.h"
#include "bench/bench_sqlite.h"
#include "bench/bench_vacuum.h"
#include "bench/bench_wal.h"
#include "bench/bench_wal_sync.h"
#include "bench/pool_bench.h"
#include "bench/readtest.h"

#include <stdio.h>
#include <string.h>

typedef struct experiment {
  const char *name;
  const char *summary;
  int (*main)(int argc, char **argv);
} experiment;

static const experiment experiments[] = {
    {"pool", "buffer reads per second: hotset against a global-mutex LRU pool", pool_bench_main},
    {"readtest", "reads cycling through a working set of each size: the 2007 L2 experiment",
     readtest_main},
    {"scan", "OLTP hit ratio and latency beside big scans, per policy, with and without rings",
     bench_scan_main},
    {"wal", "commit throughput of the write-ahead log, with and without group commit",
     bench_wal_main},
    {"wal-sync", "the ways of making a log write durable (fdatasync, O_DSYNC, O_DIRECT, ...)",
     bench_wal_sync_main},
    {"recovery", "crash recovery's replay speed (MB of log per second)", bench_recovery_main},
    {"vacuum", "vacuum beside a foreground: ring size, cost delay, and the auto throttle",
     bench_vacuum_main},
    {"sqlite", "SQLite's own page cache against hotset's: lookups beside scans, and a mix",
     bench_sqlite_main},
};

#define NEXPERIMENTS (sizeof experiments / sizeof experiments[0])

static void print_usage(FILE *out) {
  fputs("usage: hotset bench <experiment> [flags]\n"
        "\n"
        "experiments:\n",
        out);
  for (size_t i = 0; i < NEXPERIMENTS; i++)
    fprintf(out, "  %-9s %s\n", experiments[i].name, experiments[i].summary);
  fputs("\n`hotset bench <experiment> --help` describes an experiment's flags.\n", out);
}

static int usage_error(const char *fmt, const char *arg) {
  fputs("hotset bench: ", stderr);
  fprintf(stderr, fmt, arg);
  fputc('\n', stderr);
  fputs("run 'hotset bench --help' for the experiments\n", stderr);
  return 2;
}

int bench_main(int argc, char **argv) {
  if (argc < 2) return usage_error("%s", "missing experiment");
  const char *name = argv[1];
  if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
    print_usage(stdout);
    return 0;
  }
  for (size_t i = 0; i < NEXPERIMENTS; i++)
    if (strcmp(experiments[i].name, name) == 0) return experiments[i].main(argc - 1, argv + 1);
  if (name[0] == '-') return usage_error("unknown flag %s (flags go after the experiment)", name);
  return usage_error("unknown experiment \"%s\"", name);
}
