/*
 * bench/bench_wal.c — `hotset bench wal`: what group commit buys.
 *
 * A commit is durable only after an fdatasync that covers its record, and an
 * fdatasync costs a device round trip (about 100 µs on this machine class),
 * whatever it carries. A log that syncs once per commit is capped at one
 * device's sync rate however many clients commit; a log with group commit
 * lets every commit that arrives while one sync runs share the next one, so
 * throughput grows with the clients while each still waits about one sync.
 *
 * For each mode and client count: a fresh log (its own directory, removed
 * after the run), N threads each looping { insert a commit record of
 * --record bytes; hs_wal_flush(end, commit) } for --seconds. Each commit is
 * timed from the insert's start to the flush's return (in `single` mode this
 * includes waiting for the mutex: the queue a log without group commit
 * makes). The log's own statistics give the syncs and the time spent in
 * them. Modes:
 *   group   the log as it is: concurrent flushers share one fdatasync.
 *   single  what a log without group commit does: one mutex around
 *           insert + flush, so each commit's flush finds its record alone
 *           and not yet durable, and runs its own fdatasync — no two
 *           commits ever share one (checked: commits == syncs).
 * The log runs without its WAL writer thread (writer_delay_ms 0), so every
 * sync counted is a commit's. One commit before the clock starts creates
 * the log's first segment (16 MiB of zeros written and synced), which is
 * set-up, not commit cost.
 *
 * The physical limit is measured in the same run, once, before the log
 * runs: one thread appending --record bytes to a file in the same
 * directory and fdatasyncing, for --seconds (raw_syncs_per_sec); and the
 * same writing in place over a file already written and synced
 * (raw_overwrite_syncs_per_sec), which spares the file system's journal
 * commit an append costs — the log's preallocated segments get that too,
 * so it is the tighter limit.
 *
 * Per-sync percentiles would need the log to time each fdatasync, and its
 * statistics keep only their count and total time: the mean sync time is
 * reported, and percentiles are given for commits (in `single` mode a
 * commit is one sync plus the wait for the mutex).
 */
#include "bench/bench_wal.h"

#include "bench/latency_hist.h"
#include "common/args.h"
#include "common/clock.h"
#include "common/flags.h"
#include "common/interrupt.h"
#include "common/json.h"
#include "common/resources.h"
#include "common/scratch.h"
#include "core/error.h"
#include "hotset/wal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PROG        "hotset bench wal"
#define MAX_CLIENTS 256
#define MAX_RECORD  (8u << 10)
#define PATH_LEN    (BENCH_DIR_MAX + 64)

static const args_command command = {
    .cmd = {.prog = PROG},
    .about = "Commit throughput of the write-ahead log: N client threads each loop { insert a\n"
             "small commit record; flush the log up to it } on a fresh log, with group commit\n"
             "(concurrent flushes share one fdatasync) and without it (single: one mutex\n"
             "around insert + flush, so every commit runs its own fdatasync, as a log without\n"
             "group commit does). Before the runs, one thread's bare fdatasync rate (append\n"
             "--record bytes, fdatasync; then the same written in place over a preallocated\n"
             "file, as the log's segments are) on the same file system: the physical limit.\n",
    .notes = ARGS_SIZE_NOTE
    "A commit's latency runs from its insert's start to its flush's return. syncs are\n"
    "the commits' own fdatasyncs (the log's statistics); a segment filling up adds one\n"
    "more (segment_syncs). The log keeps only the count and total time of its syncs,\n"
    "so sync time is a mean; percentiles are of commits. The log runs without its WAL\n"
    "writer thread. Each run's log is removed after it; on SIGINT or SIGTERM it stops\n"
    "and removes what it made.\n",
};
static const args_cmd *const cmd = &command.cmd;

typedef enum wal_mode { MODE_GROUP, MODE_SINGLE } wal_mode;
static const char *const mode_names[] = {"group", "single"};

typedef struct wal_bench {
  args_uint_list clients;
  double seconds;
  const char *mode_flag;
  bool modes[2]; /* indexed by wal_mode */
  const char *dir_flag;
  uint64_t record_bytes, segment_bytes;
  bool json;

  char tmpdir[PATH_LEN];      /* ours to remove, or empty */
  const char *base;           /* where the logs and the raw file go */
  char logdir[PATH_LEN + 64]; /* the current run's log, or empty */
  char rawpath[PATH_LEN + 64];
  double raw_syncs_per_sec;           /* appends */
  double raw_overwrite_syncs_per_sec; /* in place */
  void *payload;
} wal_bench;

/* One run's figures. */
typedef struct wal_result {
  double seconds;
  uint64_t commits, syncs, segment_syncs, sync_ns;
  double commit_p50_us, commit_p99_us;
} wal_result;

/* ---- flags ---------------------------------------------------------------- */

static void parse_flags(wal_bench *b, int argc, char **argv) {
  const args_opt opts[] = {
      {.name = "clients",
       .kind = ARGS_UINT_LIST,
       .dest = &b->clients,
       .min = 1,
       .max = MAX_CLIENTS,
       .def = "1,2,4,8",
       .help = "client threads per run, comma-separated (each 1 to 256)"},
      {.name = "seconds",
       .kind = ARGS_DOUBLE,
       .dest = &b->seconds,
       .dmin = 0.05,
       .dmax = 86400,
       .def = "3",
       .arg = "S",
       .help = "measured time per run, and of the raw fdatasync loop (fractions allowed)"},
      {.name = "mode",
       .kind = ARGS_STRING,
       .dest = &b->mode_flag,
       .arg = "MODE",
       .def = "both",
       .help = "group (concurrent flushes share one fdatasync), single (one mutex around "
               "insert + flush: every commit its own fdatasync) or both"},
      {.name = "record",
       .kind = ARGS_SIZE,
       .dest = &b->record_bytes,
       .max = MAX_RECORD,
       .def = "64B",
       .help = "payload of each commit record (and of each raw write), 0B to 8KiB"},
      BENCH_SEGMENT_FLAG(&b->segment_bytes),
      {.name = "dir",
       .kind = ARGS_PATH,
       .dest = &b->dir_flag,
       .max = BENCH_DIR_MAX,
       .arg = "DIR",
       .help = "directory for the logs (created if missing, never removed; what the runs make "
               "in it is) instead of a temporary one"},
      {.name = "json", .kind = ARGS_FLAG, .dest = &b->json, .help = "one JSON object per run"},
  };
  args_parse(cmd, opts, sizeof opts / sizeof opts[0], argc, argv, 0);
  if (strcmp(b->mode_flag, "both") == 0)
    b->modes[MODE_GROUP] = b->modes[MODE_SINGLE] = true;
  else if (strcmp(b->mode_flag, "group") == 0)
    b->modes[MODE_GROUP] = true;
  else if (strcmp(b->mode_flag, "single") == 0)
    b->modes[MODE_SINGLE] = true;
  else
    args_usage_error(cmd, "--mode: \"%s\" is not group, single or both", b->mode_flag);
}

/* ---- cleaning up ------------------------------------------------------------ */

/* What the runs made: the current log, the raw file, our temporary
 * directory. Safe to call more than once. */
static void remove_made(wal_bench *b) {
  if (b->logdir[0]) bench_tempdir_remove(b->logdir);
  b->logdir[0] = '\0';
  if (b->rawpath[0]) unlink(b->rawpath);
  b->rawpath[0] = '\0';
  if (b->tmpdir[0]) bench_tempdir_remove(b->tmpdir);
  b->tmpdir[0] = '\0';
}

/* After a SIGINT or SIGTERM (the loops and the sleep return early then):
 * everything made removed, the process ended by the signal. */
static void stop_if_interrupted(wal_bench *b) {
  if (!bench_interrupted()) return;
  remove_made(b);
  bench_exit_interrupted(PROG);
}

static int fail(wal_bench *b, const char *what, const char *why) {
  stop_if_interrupted(b); /* a failure that is the signal's doing */
  fprintf(stderr, PROG ": %s: %s\n", what, why);
  remove_made(b);
  return 1;
}

/* ---- the physical limit ------------------------------------------------------ */

/* One thread writing record_bytes and fdatasyncing, for --seconds:
 * appending to a new file (the file grows, so each sync also commits the
 * file system's journal), or, with `overwrite`, writing in place over a
 * file of zeros written and synced beforehand — what the log does to its
 * preallocated segments. */
static hs_status measure_raw_syncs(wal_bench *b, bool overwrite, double *rate) {
  snprintf(b->rawpath, sizeof b->rawpath, "%s/raw-fdatasync", b->base);
  int fd = open(b->rawpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    int err = errno;
    b->rawpath[0] = '\0';
    return hs_fail(HS_ERR_IO, err, "%s/raw-fdatasync: cannot create: %s", b->base, strerror(err));
  }
  hs_status st = HS_OK;
  /* The overwritten region wraps around at one segment's size. */
  uint64_t region = b->segment_bytes, off = 0;
  if (overwrite) {
    void *zeros = calloc(1, (size_t)region);
    if (!zeros || pwrite(fd, zeros, (size_t)region, 0) != (ssize_t)region || fdatasync(fd) != 0)
      st = hs_fail(HS_ERR_IO, errno, "%s: preallocating failed: %s", b->rawpath, strerror(errno));
    free(zeros);
  }
  uint64_t syncs = 0, t0 = bench_now_ns(), limit = (uint64_t)(b->seconds * 1e9), now = t0;
  size_t len = (size_t)b->record_bytes;
  while (st == HS_OK && now - t0 < limit && !bench_interrupted()) {
    if (off + len > region) off = 0;
    if (len && pwrite(fd, b->payload, len, (off_t)off) != (ssize_t)len)
      st = hs_fail(HS_ERR_IO, errno, "%s: writing failed: %s", b->rawpath, strerror(errno));
    else if (fdatasync(fd) != 0)
      st = hs_fail(HS_ERR_IO, errno, "%s: fdatasync failed: %s", b->rawpath, strerror(errno));
    else
      syncs++;
    off += len;
    now = bench_now_ns();
  }
  close(fd);
  unlink(b->rawpath);
  b->rawpath[0] = '\0';
  *rate = now > t0 ? (double)syncs / ((double)(now - t0) / 1e9) : 0;
  return st;
}

/* ---- one run ------------------------------------------------------------------ */

typedef struct wal_run {
  hs_wal *wal;
  wal_mode mode;
  pthread_mutex_t serial; /* single mode: one commit at a time */
  /* The clients wait at this gate until all are started and the clock runs. */
  pthread_mutex_t gate_lock;
  pthread_cond_t gate_open;
  bool go;
  atomic_bool stop;
  const void *payload;
  uint32_t len;
} wal_run;

typedef struct client {
  wal_run *run;
  pthread_t thread;
  uint64_t commits;
  latency_hist hist;
  hs_status st;
  char why[400];
} client;

static hs_status commit_one(wal_run *r) {
  hs_wal_record rec = {.rmgr = HS_WAL_RMGR_LOG, .data = r->payload, .len = r->len};
  hs_lsn end;
  hs_status st = hs_wal_insert(r->wal, &rec, &end);
  return st == HS_OK ? hs_wal_flush(r->wal, end, HS_WAL_CAUSE_COMMIT, NULL) : st;
}

static void *client_main(void *arg) {
  client *c = arg;
  wal_run *r = c->run;
  bool single = r->mode == MODE_SINGLE;
  pthread_mutex_lock(&r->gate_lock);
  while (!r->go) pthread_cond_wait(&r->gate_open, &r->gate_lock);
  pthread_mutex_unlock(&r->gate_lock);
  while (!atomic_load_explicit(&r->stop, memory_order_relaxed) && !bench_interrupted()) {
    uint64_t t0 = bench_now_ns();
    if (single) pthread_mutex_lock(&r->serial);
    hs_status st = commit_one(r);
    if (single) pthread_mutex_unlock(&r->serial);
    if (st != HS_OK) {
      c->st = st;
      snprintf(c->why, sizeof c->why, "%s", hs_last_error());
      atomic_store(&r->stop, true); /* the log is stopped after a failure anyway */
      break;
    }
    latency_hist_add(&c->hist, bench_now_ns() - t0);
    c->commits++;
  }
  return NULL;
}

/* The clients on a fresh log in b->logdir for --seconds. Returns 0, or 1
 * after saying why (everything made removed). */
static int run_clients(wal_bench *b, wal_run *r, client *cs, uint32_t n, wal_result *res) {
  uint32_t started = 0;
  int err = 0;
  for (; started < n; started++) {
    cs[started] = (client){.run = r};
    latency_hist_reset(&cs[started].hist);
    if ((err = pthread_create(&cs[started].thread, NULL, client_main, &cs[started])) != 0) break;
  }
  /* Those started leave at once if not all could be. */
  if (started < n) atomic_store(&r->stop, true);
  hs_wal_stats s0, s1;
  hs_wal_stats_get(r->wal, &s0);
  uint64_t t0 = bench_now_ns();
  pthread_mutex_lock(&r->gate_lock);
  r->go = true;
  pthread_cond_broadcast(&r->gate_open);
  pthread_mutex_unlock(&r->gate_lock);
  if (started == n) {
    bench_sleep(b->seconds);
    atomic_store(&r->stop, true);
  }
  for (uint32_t i = 0; i < started; i++) pthread_join(cs[i].thread, NULL);
  uint64_t t1 = bench_now_ns();
  hs_wal_stats_get(r->wal, &s1);
  if (started < n) {
    char why[128];
    snprintf(why, sizeof why, "pthread_create: %s", strerror(err));
    return fail(b, "starting the clients", why);
  }

  latency_hist all;
  latency_hist_reset(&all);
  *res = (wal_result){.seconds = (double)(t1 - t0) / 1e9};
  for (uint32_t i = 0; i < n; i++) {
    if (cs[i].st != HS_OK) return fail(b, "committing", cs[i].why);
    res->commits += cs[i].commits;
    latency_hist_merge(&all, &cs[i].hist);
  }
  res->syncs = s1.flush_syncs[HS_WAL_CAUSE_COMMIT] - s0.flush_syncs[HS_WAL_CAUSE_COMMIT];
  uint64_t all_syncs = s1.syncs - s0.syncs;
  res->segment_syncs = all_syncs > res->syncs ? all_syncs - res->syncs : 0;
  res->sync_ns = s1.sync_ns - s0.sync_ns;
  res->commit_p50_us = latency_hist_quantile_us(&all, 0.50);
  res->commit_p99_us = latency_hist_quantile_us(&all, 0.99);
  return 0;
}

/* One mode with n clients on a fresh log, removed afterwards. */
static int run_one(wal_bench *b, wal_mode mode, uint32_t n, client *cs, wal_result *res) {
  snprintf(b->logdir, sizeof b->logdir, "%s/wal-%s-%u", b->base, mode_names[mode], n);
  /* A log left by an interrupted run with --dir would be continued, not fresh. */
  struct stat sb;
  if (lstat(b->logdir, &sb) == 0) bench_tempdir_remove(b->logdir);
  hs_wal_options o;
  hs_wal_options_init(&o);
  o.dir = b->logdir;
  o.segment_bytes = b->segment_bytes;
  o.writer_delay_ms = 0; /* every sync counted is a commit's */
  wal_run r = {.mode = mode, .payload = b->payload, .len = (uint32_t)b->record_bytes};
  if (hs_wal_open(&o, &r.wal) != HS_OK) return fail(b, "opening the log", hs_last_error());
  pthread_mutex_init(&r.serial, NULL);
  pthread_mutex_init(&r.gate_lock, NULL);
  pthread_cond_init(&r.gate_open, NULL);
  atomic_init(&r.stop, false);
  /* The first commit creates the first segment: set-up, not measured. */
  int rc = 0;
  if (commit_one(&r) != HS_OK) {
    char why[400];
    snprintf(why, sizeof why, "%s", hs_last_error());
    hs_wal_close(r.wal);
    rc = fail(b, "the first commit", why);
  } else {
    rc = run_clients(b, &r, cs, n, res);
    hs_status st = hs_wal_close(r.wal);
    if (rc == 0 && st != HS_OK) rc = fail(b, "closing the log", hs_last_error());
  }
  pthread_mutex_destroy(&r.serial);
  pthread_mutex_destroy(&r.gate_lock);
  pthread_cond_destroy(&r.gate_open);
  stop_if_interrupted(b); /* before printing a run cut short */
  if (rc == 0) {
    bench_tempdir_remove(b->logdir);
    b->logdir[0] = '\0';
  }
  return rc;
}

/* ---- output ------------------------------------------------------------------- */

static double per_sec(uint64_t n, double seconds) {
  return seconds > 0 ? (double)n / seconds : 0;
}

static double ratio(uint64_t a, uint64_t b) {
  return b ? (double)a / (double)b : 0;
}

/* Mean over every fdatasync of the run, the segments' included. */
static double sync_us_mean(const wal_result *r) {
  uint64_t n = r->syncs + r->segment_syncs;
  return n ? (double)r->sync_ns / (double)n / 1e3 : 0;
}

static void print_json(const wal_bench *b, wal_mode mode, uint32_t n, const wal_result *r) {
  json_out j;
  json_begin(&j, stdout);
  json_str(&j, "mode", mode_names[mode]);
  json_u64(&j, "clients", n);
  json_double(&j, "seconds", "%.4f", r->seconds);
  json_u64(&j, "commits", r->commits);
  json_double(&j, "commits_per_sec", "%.1f", per_sec(r->commits, r->seconds));
  json_u64(&j, "syncs", r->syncs);
  json_u64(&j, "segment_syncs", r->segment_syncs);
  json_double(&j, "commits_per_sync", "%.4f", ratio(r->commits, r->syncs));
  json_double(&j, "sync_us_mean", "%.2f", sync_us_mean(r));
  json_double(&j, "commit_us_p50", "%.2f", r->commit_p50_us);
  json_double(&j, "commit_us_p99", "%.2f", r->commit_p99_us);
  json_double(&j, "raw_syncs_per_sec", "%.1f", b->raw_syncs_per_sec);
  json_double(&j, "raw_overwrite_syncs_per_sec", "%.1f", b->raw_overwrite_syncs_per_sec);
  json_u64(&j, "record_bytes", b->record_bytes);
  json_end_line(&j);
}

static void print_header(const wal_bench *b) {
  printf("raw fdatasync, one thread, %" PRIu64 " B each, in %s:\n", b->record_bytes, b->base);
  printf("  appending:            %8.0f syncs/s (%.1f us each)\n", b->raw_syncs_per_sec,
         b->raw_syncs_per_sec > 0 ? 1e6 / b->raw_syncs_per_sec : 0);
  printf("  overwriting in place: %8.0f syncs/s (%.1f us each)\n\n", b->raw_overwrite_syncs_per_sec,
         b->raw_overwrite_syncs_per_sec > 0 ? 1e6 / b->raw_overwrite_syncs_per_sec : 0);
  printf("%-7s %7s %11s %8s %12s %9s %10s %10s %8s\n", "mode", "clients", "commits/s", "syncs",
         "commits/sync", "sync_us", "commit_p50", "commit_p99", "vs_raw");
}

static void print_row(const wal_bench *b, wal_mode mode, uint32_t n, const wal_result *r) {
  double cps = per_sec(r->commits, r->seconds);
  printf("%-7s %7u %11.0f %8" PRIu64 " %12.2f %9.1f %10.1f %10.1f %8.2f\n", mode_names[mode], n,
         cps, r->syncs, ratio(r->commits, r->syncs), sync_us_mean(r), r->commit_p50_us,
         r->commit_p99_us, b->raw_syncs_per_sec > 0 ? cps / b->raw_syncs_per_sec : 0);
  fflush(stdout);
}

static void print_footer(void) {
  puts("\ncommits/s: commits (insert + flush) per second over all clients; syncs: the\n"
       "commits' fdatasyncs; sync_us: their mean time; commit_p50/p99: a commit's\n"
       "latency in us; vs_raw: commits/s over the raw (appending) fdatasync rate.");
}

/* ---- the run ---------------------------------------------------------------------- */

static int bench_wal_run(wal_bench *b, client *cs) {
  const char *parent = b->dir_flag ? b->dir_flag : bench_tempdir_parent();
  /* A log segment, its neighbour when one fills, and room to spare. */
  if (bench_check_space(parent, 2 * b->segment_bytes, "its logs") != HS_OK) {
    fprintf(stderr, PROG ": %s\n", hs_last_error());
    return 1;
  }
  bench_signals_install();
  if (bench_base_dir(b->dir_flag, "bench-wal", b->tmpdir, sizeof b->tmpdir, &b->base) != HS_OK)
    return fail(b, "making its directory", hs_last_error());
  if (measure_raw_syncs(b, false, &b->raw_syncs_per_sec) != HS_OK ||
      measure_raw_syncs(b, true, &b->raw_overwrite_syncs_per_sec) != HS_OK)
    return fail(b, "measuring raw fdatasync", hs_last_error());
  stop_if_interrupted(b);
  if (!b->json) print_header(b);
  for (int m = MODE_GROUP; m <= MODE_SINGLE; m++) {
    if (!b->modes[m]) continue;
    for (uint32_t i = 0; i < b->clients.n; i++) {
      uint32_t n = (uint32_t)b->clients.v[i];
      wal_result r;
      if (run_one(b, (wal_mode)m, n, cs, &r) != 0) return 1;
      if (b->json)
        print_json(b, (wal_mode)m, n, &r);
      else
        print_row(b, (wal_mode)m, n, &r);
    }
  }
  if (!b->json) print_footer();
  remove_made(b);
  return 0;
}

int bench_wal_main(int argc, char **argv) {
  wal_bench *b = calloc(1, sizeof *b);
  client *cs = calloc(MAX_CLIENTS, sizeof *cs);
  void *payload = calloc(1, MAX_RECORD);
  if (!b || !cs || !payload) {
    fprintf(stderr, PROG ": out of memory\n");
    free(b);
    free(cs);
    free(payload);
    return 1;
  }
  parse_flags(b, argc, argv);
  /* A recognisable, non-zero payload: zeros would look like the log's end. */
  memset(payload, 0xC0, MAX_RECORD);
  b->payload = payload;
  int rc = bench_wal_run(b, cs);
  free(b);
  free(cs);
  free(payload);
  return rc;
}
