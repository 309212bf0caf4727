/*
 * cli/main.c — `hotset <subcommand> [flags]`: dispatch to the subcommands.
 *
 * Each subcommand is one entry of the table below (a name, a one-line summary
 * for `hotset help`, an entry point taking its own argc/argv with argv[0] =
 * its name), so adding `sim`, `gen-trace` or `bench` is one line here plus
 * its own file. Exit statuses follow one convention throughout: 0 success,
 * 1 a run-time failure, 2 a usage error.
 */
#include "bench/bench_cmd.h"
#include "bench/pool_bench.h"
#include "bench/readtest.h"
#include "cli/reindex.h"
#include "cli/relations.h"
#include "cli/replay.h"
#include "cli/reset_log.h"
#include "cli/sim_cmd.h"
#include "cli/verify.h"
#include "cli/workload.h"
#include "common/args.h"
#include "crash/crash_test.h"
#include "hotset/version.h"

#include <stdio.h>
#include <string.h>

typedef struct subcommand {
  const char *name;
  const char *summary;
  int (*main)(int argc, char **argv);
} subcommand;

static const subcommand subcommands[] = {
    {"bench", "the labs: pool, readtest, scan, wal, wal-sync, recovery, vacuum, sqlite",
     bench_main},
    {"workload", "a skewed read/update run; checks on disk that no update was lost", workload_main},
    {"sim", "replay a trace through replacement policies: miss ratios, MRCs", sim_main},
    {"gen-trace", "write a synthetic trace (Zipf, uniform, loop, scan pollution)", gen_trace_main},
    {"trace-stats", "requests, objects, one-hit wonders and sizes of a trace", trace_stats_main},
    {"replay", "drive a trace through the real pool: its misses, reads and speed", replay_main},
    {"crash-test", "kill a logged workload at random moments, recover, check nothing was lost",
     crash_test_main},
    {"verify", "check every page of a data directory: checksums, LSNs within the log", verify_main},
    {"reset-log", "start a new log for a directory whose log cannot prove its checkpoint",
     reset_log_main},
    {"relations", "the relation files a data directory must hold, against what is on disk",
     relations_main},
    {"reindex", "rebuild a primary-key index from its heap (a lookup's way out)", reindex_main},
};

#define NSUBCOMMANDS (sizeof subcommands / sizeof subcommands[0])

/* The labs' names before every lab moved under `hotset bench`. They ran
 * the lab for one release (0.2) and are gone since 0.3; a script that still
 * uses one is told the new name rather than "unknown subcommand". */
typedef struct renamed {
  const char *name;
  const char *lab; /* `hotset bench LAB` */
} renamed;

static const renamed renamed_labs[] = {
    {"pool-bench", "pool"},
    {"readtest", "readtest"},
};

#define NRENAMED (sizeof renamed_labs / sizeof renamed_labs[0])

static void print_usage(FILE *out) {
  fputs("usage: hotset <subcommand> [flags]\n"
        "       hotset help [subcommand]\n"
        "       hotset --version\n"
        "\n"
        "subcommands:\n",
        out);
  for (size_t i = 0; i < NSUBCOMMANDS; i++)
    fprintf(out, "  %-12s %s\n", subcommands[i].name, subcommands[i].summary);
  fputs("\n`hotset <subcommand> --help` describes a subcommand's flags.\n\n", out);
  fputs(ARGS_SIZE_GRAMMAR, out);
}

static const renamed *find_renamed(const char *name) {
  for (size_t i = 0; i < NRENAMED; i++)
    if (strcmp(renamed_labs[i].name, name) == 0) return &renamed_labs[i];
  return NULL;
}

static const subcommand *find_subcommand(const char *name) {
  for (size_t i = 0; i < NSUBCOMMANDS; i++)
    if (strcmp(subcommands[i].name, name) == 0) return &subcommands[i];
  return NULL;
}

static int usage_error(const char *fmt, const char *arg) {
  fputs("hotset: ", stderr);
  fprintf(stderr, fmt, arg);
  fputc('\n', stderr);
  fputs("run 'hotset --help' for the subcommands\n", stderr);
  return 2;
}

/* A lab's old name is refused as an unknown one is, naming the new. */
static int renamed_error(const renamed *r) {
  char what[128];
  snprintf(what, sizeof what, "\"%s\" was renamed \"hotset bench %s\" (the old name went in 0.3)",
           r->name, r->lab);
  return usage_error("%s", what);
}

int main(int argc, char **argv) {
  if (argc < 2) return usage_error("%s", "missing subcommand");
  const char *name = argv[1];
  if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
    printf("hotset %s\n", hs_version()); /* the library it is built on: one version */
    return 0;
  }
  if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
    if (strcmp(name, "help") == 0 && argc > 2) {
      /* `hotset help sim` is `hotset sim --help`. */
      const subcommand *sc = find_subcommand(argv[2]);
      const renamed *r = sc ? NULL : find_renamed(argv[2]);
      if (r) return renamed_error(r);
      if (!sc) return usage_error("unknown subcommand \"%s\"", argv[2]);
      char *help_argv[] = {argv[2], "--help", NULL};
      return sc->main(2, help_argv);
    }
    print_usage(stdout);
    return 0;
  }
  const subcommand *sc = find_subcommand(name);
  const renamed *r = sc ? NULL : find_renamed(name);
  if (r) return renamed_error(r);
  if (!sc) {
    if (name[0] == '-') return usage_error("unknown flag %s (flags go after the subcommand)", name);
    return usage_error("unknown subcommand \"%s\"", name);
  }
  return sc->main(argc - 1, argv + 1);
}
