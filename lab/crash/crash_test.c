/*
 * crash/crash_test.c — `hotset crash-test`: kill a workload, recover, check.
 *
 * The parent runs itself (/proc/self/exe) as `crash-test --workload` with
 * stdout on a pipe, reads the acknowledgements ("client N value V") as they
 * come, and SIGKILLs the child at a random moment drawn from the seed:
 * most runs 20 to 300 ms after the first acknowledgement, one in eight
 * within the first few milliseconds of the child's life (while it still
 * recovers the previous crash), and every fourth run is left to kill itself
 * right after a torn page write (--torn). It then recovers the same
 * directory in-process (crash_check_dir) and holds it to the rules:
 *
 *  - every acknowledged transaction is there: a client's recovered value is
 *    at least its last acknowledged one (else it counts as lost);
 *  - nothing more than the one transaction in flight: at most one more;
 *  - whole or not at all: a client's pages all hold the same value;
 *  - every page passes its checksum, and no page that passes it holds
 *    anything a transaction did not write (corrupt_undetected).
 *
 * The directory is kept across runs, so each run's child first recovers
 * the previous run's crash; the recovered values are the next run's floor.
 * The first failed run ends the test (the next child would build on what it
 * found wrong), and a temporary directory is then kept for a look.
 */
#include "crash/crash_test.h"

#include "common/args.h"
#include "common/clock.h"
#include "common/json.h"
#include "common/resources.h"
#include "common/rng.h"
#include "common/scratch.h"
#include "core/error.h"
#include "core/mkdirs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const args_command command = {
    .cmd = {.prog = CRASH_PROG},
    .synopsis = "[--runs N] [--seed N] [--json] [--dir DIR]\n"
                "       hotset crash-test --power-loss [--runs N] [--seed N] [--run N] "
                "[--generations N] [--strict-fdatasync] [--json] [--dir DIR]\n"
                "       hotset crash-test --workload --dir DIR [--clients N] [--seed N] [--torn]\n"
                "       hotset crash-test --workload --heap --dir DIR [--clients N] [--seed N]\n"
                "       hotset crash-test --verify [--heap] --dir DIR [--json]",
    .about = "Kills a workload of clients committing transactions under the write-ahead log\n"
             "with SIGKILL at random moments (every fourth run right after a torn page\n"
             "write), recovers, and checks that every acknowledged transaction is there,\n"
             "none is there in part, and every page passes its checksum.\n"
             "--power-loss cuts the power instead: the child, with a recorder journaling\n"
             "every file change, stops at a chosen operation (random, a checkpoint's step,\n"
             "a checkpoint's link, rename, unlink or directory fsync, just after a rename);\n"
             "every write, growth and directory entry not yet synced is then dropped, kept\n"
             "or torn per 512-byte sector, and recovery must keep every acknowledged commit\n"
             "(docs/wal.md, \"Power cuts in the test suite\"). --generations N cuts each\n"
             "run's directory N times, a new child recovering and working on it between\n"
             "cuts: every generation's acknowledged commits must survive the later cuts.\n"
             "Half the power-loss runs use the heap workload (--workload --heap): clients\n"
             "updating their rows of a heap table in transactions (some moving to another\n"
             "page, history rows inserted and deleted) beside a thread running vacuum; the\n"
             "check then finds every client's rows at one version through the primary-key\n"
             "index, and vacuum must run through the recovered table.\n"
             "--workload runs the child half until killed, printing \"client N value V\" per\n"
             "acknowledged transaction; --verify recovers DIR and prints every client's value.\n",
    .notes = "Exit status 1 if a transaction was lost or half there, a page failed its\n"
             "checksum, or a page passed it holding what nothing wrote; with --power-loss\n"
             "also if a directory refused to open after its cut.\n",
};
static const args_cmd *const cmd = &command.cmd;

static const char *const kill_at_names[CRASH_KILL_COUNT] = {[CRASH_KILL_NONE] = "",
                                                            [CRASH_KILL_PAGE_WRITE] = "page-write",
                                                            [CRASH_KILL_CHECKPOINT] = "checkpoint",
                                                            [CRASH_KILL_SEGMENT_SWITCH] =
                                                                "segment-switch"};

const char *crash_kill_at_name(crash_kill_at k) {
  return (unsigned)k < CRASH_KILL_COUNT ? kill_at_names[k] : "";
}

typedef struct totals {
  uint64_t runs, kills, acknowledged, lost, torn_injected, torn_repaired, corrupt_undetected;
  uint64_t failed_runs;
  uint64_t killed_at[CRASH_KILL_COUNT]; /* aimed kills that landed, by kind */
  uint64_t recovery_bytes;
  double recovery_seconds;
  double *recovery_ms; /* one per run whose recovery replayed something */
  uint64_t nrecoveries;
  /* --power-loss */
  uint64_t power_cuts, writes_dropped, writes_torn, writes_kept, dir_entries_lost, files_cut;
  uint64_t refused_to_open, corrupt_detected, partial, too_new;
  uint64_t checkpoint_cuts, rename_cuts, dir_op_cuts;
  uint64_t cut_kinds[PC_OP_KINDS]; /* cuts by the kind of operation they stopped */
  uint64_t two_name_cuts;          /* cuts that left a file under two names */
  uint64_t heap_runs, heap_bad, vacuum_failed;
  char first_refusal[600];
  char first_failure[600];
} totals;

/* A line-splitting reader of one of the child's pipes. */
typedef struct line_pipe {
  int fd;
  char buf[4096];
  size_t len;
} line_pipe;

typedef struct child_run {
  pid_t pid;
  line_pipe out, err;
  uint64_t ack[CRASH_MAX_CLIENTS]; /* last acknowledged value per client */
  uint64_t acks;
  bool first_ack;
  bool torn;
  crash_kill_at killed_at; /* where an aimed kill landed */
} child_run;

static pid_t spawn_workload(const char *dir, uint32_t clients, uint64_t seed, bool torn,
                            crash_kill_at kill_at, char *const *extra, int *out_fd, int *err_fd) {
  int out[2], err[2];
  if (pipe(out) != 0) return -1;
  if (pipe(err) != 0) {
    close(out[0]);
    close(out[1]);
    return -1;
  }
  char nclients[16], nseed[32];
  snprintf(nclients, sizeof nclients, "%u", clients);
  snprintf(nseed, sizeof nseed, "%" PRIu64, seed);
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], STDOUT_FILENO);
    dup2(err[1], STDERR_FILENO);
    close(out[0]);
    close(out[1]);
    close(err[0]);
    close(err[1]);
    char *argv[32] = {"hotset",    "crash-test", "--workload", "--dir", (char *)dir,
                      "--clients", nclients,     "--seed",     nseed};
    int argc = 9;
    if (torn) argv[argc++] = "--torn";
    if (kill_at != CRASH_KILL_NONE) {
      argv[argc++] = "--kill-at";
      argv[argc++] = (char *)crash_kill_at_name(kill_at);
    }
    for (; extra && *extra && argc < 31; extra++) argv[argc++] = *extra;
    argv[argc] = NULL;
    execv("/proc/self/exe", argv);
    fprintf(stderr, CRASH_PROG ": cannot run /proc/self/exe: %s\n", strerror(errno));
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  if (pid < 0) {
    close(out[0]);
    close(err[0]);
    return -1;
  }
  *out_fd = out[0];
  *err_fd = err[0];
  return pid;
}

static void on_out_line(child_run *r, const char *line) {
  unsigned c;
  uint64_t v;
  if (sscanf(line, "client %u value %" SCNu64, &c, &v) == 2 && c < CRASH_MAX_CLIENTS) {
    if (v > r->ack[c]) r->ack[c] = v;
    r->acks++;
    r->first_ack = true;
  }
}

static void on_err_line(child_run *r, const char *line) {
  if (strncmp(line, "torn write ", 11) == 0) {
    r->torn = true;
    return;
  }
  for (int k = CRASH_KILL_NONE + 1; k < CRASH_KILL_COUNT; k++) {
    if (strncmp(line, "kill at ", 8) == 0 && strcmp(line + 8, kill_at_names[k]) == 0) {
      r->killed_at = (crash_kill_at)k;
      return;
    }
  }
  fprintf(stderr, "  workload: %s\n", line);
}

/* Reads what is there; false at end of file. */
static bool pipe_read(child_run *r, line_pipe *p, void (*on_line)(child_run *, const char *)) {
  ssize_t n = read(p->fd, p->buf + p->len, sizeof p->buf - 1 - p->len);
  if (n < 0 && errno == EINTR) return true;
  if (n <= 0) {
    if (p->len) {
      p->buf[p->len] = 0;
      on_line(r, p->buf);
    }
    p->len = 0;
    return false;
  }
  p->len += (size_t)n;
  char *start = p->buf, *nl;
  while ((nl = memchr(start, '\n', p->len - (size_t)(start - p->buf)))) {
    *nl = 0;
    on_line(r, start);
    start = nl + 1;
  }
  p->len -= (size_t)(start - p->buf);
  memmove(p->buf, start, p->len);
  if (p->len == sizeof p->buf - 1) p->len = 0; /* a line too long to be ours */
  return true;
}

/* When the parent kills the child: a number of ms after the first
 * acknowledgement, or after the start for an early kill; never for a torn
 * run, which kills itself (unless it hangs: then after `limit_ms`). */
typedef struct kill_plan {
  bool after_ack;
  uint64_t delay_ms;
  bool torn;             /* the child tears a page write and kills itself */
  crash_kill_at kill_at; /* or kills itself there */
  char *const *power;    /* or the power-cut recorder cuts it (these flags) */
} kill_plan;

#define CHILD_LIMIT_MS 60000 /* no acknowledgement or no self-kill by then: a hang */

/* Runs one child to its death; false (with the reason on stderr) if it
 * died any other way than by SIGKILL. */
static bool run_child(const char *dir, uint32_t clients, uint64_t seed, kill_plan plan,
                      child_run *r, totals *t) {
  int ofd, efd;
  bool self_kill = plan.torn || plan.kill_at != CRASH_KILL_NONE || plan.power;
  r->pid = spawn_workload(dir, clients, seed, plan.torn, plan.kill_at, plan.power, &ofd, &efd);
  if (r->pid < 0) {
    fprintf(stderr, CRASH_PROG ": cannot start the workload: %s\n", strerror(errno));
    return false;
  }
  r->out = (line_pipe){.fd = ofd};
  r->err = (line_pipe){.fd = efd};
  uint64_t start = bench_now_ns(), ack_at = 0;
  bool out_open = true, err_open = true, killed = false;
  while (out_open || err_open) {
    uint64_t now = bench_now_ns();
    if (r->first_ack && !ack_at) ack_at = now;
    uint64_t due = UINT64_MAX;
    if (!killed) {
      if (self_kill)
        due = start + (uint64_t)CHILD_LIMIT_MS * 1000000;
      else if (!plan.after_ack)
        due = start + plan.delay_ms * 1000000;
      else
        due =
            ack_at ? ack_at + plan.delay_ms * 1000000 : start + (uint64_t)CHILD_LIMIT_MS * 1000000;
      if (now >= due) {
        if (self_kill || (plan.after_ack && !ack_at))
          fprintf(stderr, CRASH_PROG ": the workload hung; killing it\n");
        kill(r->pid, SIGKILL);
        killed = true;
        continue;
      }
    }
    struct pollfd fds[2] = {{.fd = out_open ? ofd : -1, .events = POLLIN},
                            {.fd = err_open ? efd : -1, .events = POLLIN}};
    int timeout = due == UINT64_MAX ? -1 : (int)((due - now) / 1000000 + 1);
    if (poll(fds, 2, timeout) < 0 && errno != EINTR) break;
    if (fds[0].revents) out_open = pipe_read(r, &r->out, on_out_line);
    if (fds[1].revents) err_open = pipe_read(r, &r->err, on_err_line);
  }
  close(ofd);
  close(efd);
  int status;
  while (waitpid(r->pid, &status, 0) < 0 && errno == EINTR) {
  }
  t->acknowledged += r->acks;
  if (plan.power && WIFEXITED(status) && WEXITSTATUS(status) == PC_CUT_EXIT) {
    t->power_cuts++;
    return true;
  }
  if (!plan.power && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) {
    t->kills++;
    if (r->torn) t->torn_injected++;
    t->killed_at[r->killed_at]++;
    return true;
  }
  if (WIFEXITED(status))
    fprintf(stderr, CRASH_PROG ": the workload exited with status %d\n", WEXITSTATUS(status));
  else
    fprintf(stderr, CRASH_PROG ": the workload died by signal %d\n", WTERMSIG(status));
  return false;
}

/* Holds the recovered directory to the rules; false if one is broken.
 * `floor` (the values acknowledged or recovered so far) becomes the
 * recovered values. */
static bool check_run(const char *dir, uint64_t run, const child_run *r, uint64_t *floor,
                      totals *t) {
  crash_check c;
  if (crash_check_dir(dir, 0, stderr, &c) != HS_OK) {
    fprintf(stderr, CRASH_PROG ": run %" PRIu64 ": recovering %s: %s\n", run, dir, hs_last_error());
    return false;
  }
  bool ok = !crash_check_failed(&c);
  t->corrupt_undetected += c.undetected_pages;
  for (uint32_t i = 0; i < c.clients; i++) {
    uint64_t acked = r->ack[i] > floor[i] ? r->ack[i] : floor[i];
    if (c.value[i] < acked) {
      t->lost++;
      ok = false;
      fprintf(stderr,
              CRASH_PROG ": run %" PRIu64 ": client %u lost value %" PRIu64
                         " (acknowledged); recovered %" PRIu64 "\n",
              run, i, acked, c.value[i]);
    } else if (c.value[i] > acked + 1) {
      ok = false;
      fprintf(stderr,
              CRASH_PROG ": run %" PRIu64 ": client %u recovered value %" PRIu64
                         ", more than one past its acknowledged %" PRIu64 "\n",
              run, i, c.value[i], acked);
    }
    floor[i] = c.value[i];
  }
  if (r->torn && c.corrupt_pages == 0 && c.undetected_pages == 0) t->torn_repaired++;
  if (c.report.ran) {
    t->recovery_ms[t->nrecoveries++] = c.report.seconds * 1000;
    t->recovery_bytes += c.report.bytes;
    t->recovery_seconds += c.report.seconds;
  }
  return ok;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void print_totals(totals *t, bool json) {
  double p50 = 0;
  if (t->nrecoveries) {
    qsort(t->recovery_ms, t->nrecoveries, sizeof *t->recovery_ms, cmp_double);
    p50 = t->recovery_ms[t->nrecoveries / 2];
  }
  double mbps = t->recovery_seconds > 0 ? (double)t->recovery_bytes / t->recovery_seconds / 1e6 : 0;
  if (json) {
    json_out j;
    json_begin(&j, stdout);
    json_u64(&j, "runs", t->runs);
    json_u64(&j, "kills", t->kills);
    json_u64(&j, "acknowledged", t->acknowledged);
    json_u64(&j, "lost", t->lost);
    json_u64(&j, "torn_injected", t->torn_injected);
    json_u64(&j, "torn_repaired", t->torn_repaired);
    json_u64(&j, "corrupt_undetected", t->corrupt_undetected);
    json_double(&j, "recovery_ms_p50", "%.3f", p50);
    json_double(&j, "recovery_mb_per_sec", "%.1f", mbps);
    json_end_line(&j);
    return;
  }
  printf("%-24s %" PRIu64 "\n", "runs", t->runs);
  printf("%-24s %" PRIu64 "\n", "kills", t->kills);
  printf("%-24s %" PRIu64 "\n", "acknowledged", t->acknowledged);
  printf("%-24s %" PRIu64 "\n", "lost", t->lost);
  printf("%-24s %" PRIu64 "\n", "torn_injected", t->torn_injected);
  printf("%-24s %" PRIu64 "\n", "torn_repaired", t->torn_repaired);
  printf("%-24s %" PRIu64 "\n", "corrupt_undetected", t->corrupt_undetected);
  for (int k = CRASH_KILL_NONE + 1; k < CRASH_KILL_COUNT; k++) {
    char label[32];
    snprintf(label, sizeof label, "kills at %s", kill_at_names[k]);
    printf("%-24s %" PRIu64 "\n", label, t->killed_at[k]);
  }
  printf("%-24s %.3f ms\n", "recovery_ms_p50", p50);
  printf("%-24s %.1f MB/s\n", "recovery_mb_per_sec", mbps);
  if (t->failed_runs) printf("%-24s %" PRIu64 "\n", "failed runs", t->failed_runs);
}

static int run_parent(const char *dir, uint64_t runs, uint32_t clients, uint64_t seed, bool json) {
  totals t = {0};
  t.recovery_ms = calloc(runs, sizeof *t.recovery_ms);
  if (!t.recovery_ms) {
    fprintf(stderr, CRASH_PROG ": out of memory\n");
    return 1;
  }
  /* Once before the children: the relations exist before the first kill
   * (an early one could otherwise cut their creation short), and a
   * directory that cannot be opened is one clear error, not N failed runs. */
  crash_db db;
  if (crash_db_open(dir, clients, false, &db) != HS_OK || crash_db_close(&db) != HS_OK) {
    fprintf(stderr, CRASH_PROG ": opening %s: %s\n", dir, hs_last_error());
    free(t.recovery_ms);
    return 1;
  }
  uint64_t floor[CRASH_MAX_CLIENTS] = {0};
  bool progress = isatty(STDERR_FILENO);
  bench_rng rng;
  bench_rng_seed(&rng, seed, 0);
  for (uint64_t run = 1; run <= runs; run++) {
    /* Every fourth run tears a page write; every fourth, offset by two,
     * aims at a page write, a checkpoint and a segment switch in turn; the
     * rest are killed by the clock. */
    kill_plan plan = {.after_ack = true, .delay_ms = 20 + bench_rng_below(&rng, 281)};
    if (run % 4 == 0)
      plan.torn = true;
    else if (run % 4 == 2)
      plan.kill_at = (crash_kill_at)(CRASH_KILL_NONE + 1 + run / 4 % (CRASH_KILL_COUNT - 1));
    else if (bench_rng_below(&rng, 8) == 0)
      plan = (kill_plan){.after_ack = false, .delay_ms = bench_rng_below(&rng, 8)};
    child_run r = {0};
    uint64_t child_seed = bench_rng_next(&rng);
    bool ok = run_child(dir, clients, child_seed, plan, &r, &t);
    if (ok) ok = check_run(dir, run, &r, floor, &t);
    t.runs++;
    if (progress)
      fprintf(stderr, "\r" CRASH_PROG ": run %" PRIu64 "/%" PRIu64 ", %" PRIu64 " acknowledged",
              run, runs, t.acknowledged);
    if (!ok) {
      /* The next child would start from what this run found wrong (and
       * refuse to, for a half transaction): the first failure is the one
       * to look at. */
      t.failed_runs++;
      if (progress) fputc('\n', stderr);
      fprintf(stderr, CRASH_PROG ": stopped after run %" PRIu64 " of %" PRIu64 "\n", run, runs);
      progress = false;
      break;
    }
  }
  if (progress) fputc('\n', stderr);
  print_totals(&t, json);
  free(t.recovery_ms);
  return t.failed_runs || t.lost || t.corrupt_undetected ? 1 : 0;
}

/* ---- --power-loss --------------------------------------------------- */

/* --strict-fdatasync: fdatasync does not make a file's growth durable. */
static bool power_strict;

/* One cut of a power-loss run. A run is `generations` cuts on one
 * directory; what the directory is (its segment size, its workload, who
 * created its relations) is the run's, where each cut falls is its own:
 *   cut_at              operation N of the child;
 *   checkpoint, step    the Kth operation of its Mth checkpoint;
 *   rename, rename_step the Kth operation after its Nth rename;
 *   dir_op              the Kth directory operation of the kinds in
 *                       dir_kinds (0: all: create, rename, link, unlink,
 *                       mkdir, directory fsync) inside checkpoint dir_mark,
 *                       or from the child's start (dir_mark 0). */
typedef struct power_plan {
  uint64_t segment_bytes;
  bool heap;          /* the heap workload (crash_heap.c), not the pages' */
  bool child_creates; /* the first child creates the relations: its cuts can
                         land in their creation */
  uint64_t cut_at;
  uint64_t checkpoint, step;
  uint64_t rename, rename_step;
  uint64_t dir_op, dir_mark;
  unsigned dir_kinds;
  uint64_t apply_seed;
} power_plan;

/* Operations a child makes before a random cut: up to this many (a few
 * hundred transactions, several checkpoints). */
#define POWER_MAX_OPS 6000
/* Checkpoint steps tried in turn by the runs aimed at a checkpoint. */
#define POWER_CHECKPOINT_STEPS 48
/* Directory operations of a checkpoint tried in turn (its control file's
 * new name and fsync, then each link, rename, unlink and directory fsync
 * of its segments' recycling). */
#define POWER_DIR_STEPS 16
/* Directory operations from a child's start aimed at: its open (the
 * relations' and the log's files created, by the first child of a run whose
 * parent made none) and its first checkpoints. */
#define POWER_START_DIR_OPS   24
#define POWER_MAX_GENERATIONS 100

/* Cut `generation` (1, 2, ...) of run `run` of `seed`: the same plan
 * whatever runs came before it and however many generations follow. */
static power_plan power_plan_for(uint64_t seed, uint64_t run, uint64_t generation) {
  bench_rng rng;
  bench_rng_seed(&rng, seed, run);
  power_plan p = {0};
  static const uint64_t sizes[] = {64u * 1024u,         64u * 1024u,         64u * 1024u,
                                   CRASH_SEGMENT_BYTES, CRASH_SEGMENT_BYTES, 16u << 20};
  p.segment_bytes = sizes[bench_rng_below(&rng, sizeof sizes / sizeof sizes[0])];
  /* Half the runs, whatever their cuts, run the heap workload. */
  p.heap = bench_rng_below(&rng, 2) == 1;
  if (generation > 1) bench_rng_seed(&rng, seed ^ (generation * 0x9E3779B97F4A7C15ull), run);
  /* Sixteen kinds of cut in turn, shifted by five each generation, so a
   * run's later cuts are not all of its first one's kind. */
  uint64_t slot = (run - 1 + 5 * (generation - 1)) % 16;
  uint64_t turn = (run - 1) / 16 + generation - 1;
  switch (slot) {
  case 0:
  case 8:
    /* Just after a new log segment or control file took its name: at
     * its directory's fsync or one of the next few operations. */
    p.rename = 1 + bench_rng_below(&rng, 8);
    p.rename_step = 1 + bench_rng_below(&rng, 4);
    break;
  case 2:
  case 6:
  case 10:
  case 14:
    /* At each step of a checkpoint in turn (the first, second or third
     * one the child runs). */
    p.checkpoint = 1 + bench_rng_below(&rng, 3);
    p.step = 1 + (turn * 4 + slot / 4) % POWER_CHECKPOINT_STEPS;
    break;
  case 4:
  case 12:
    /* At each directory operation of a checkpoint in turn: whatever
     * system calls its recycling makes (link and unlink, or rename), each
     * is reached, and the directory fsync after them. */
    p.dir_mark = 1 + bench_rng_below(&rng, 3);
    p.dir_op = 1 + (turn * 2 + slot / 8) % POWER_DIR_STEPS;
    break;
  case 1:
    /* At an unlink of a checkpoint: where recycling takes an old
     * segment's new name with link() and then removes the old one, the
     * state "one segment under two names" (the link kept, its unlink
     * never made) is reached on purpose. */
    p.dir_mark = 1 + bench_rng_below(&rng, 3);
    p.dir_op = 1 + bench_rng_below(&rng, 3);
    p.dir_kinds = PC_OP_UNLINK;
    break;
  case 9:
    /* At a directory operation from the child's start: in the first
     * generation, the child creates the relations itself. */
    p.dir_op = 1 + bench_rng_below(&rng, POWER_START_DIR_OPS);
    p.child_creates = generation == 1;
    break;
  default:
    p.cut_at = 1 + bench_rng_below(&rng, POWER_MAX_OPS);
  }
  p.apply_seed = bench_rng_next(&rng);
  return p;
}

static void power_plan_describe(const power_plan *p, uint64_t generation, uint64_t generations,
                                char *buf, size_t len) {
  size_t n = (size_t)snprintf(buf, len, "%s", p->heap ? "heap, " : "");
  if (generations > 1 && n < len)
    n += (size_t)snprintf(buf + n, len - n, "generation %" PRIu64 " of %" PRIu64 ", ", generation,
                          generations);
  if (n >= len) return;
  buf += n;
  len -= n;
  if (p->rename)
    snprintf(buf, len, "%" PRIu64 "-byte segments, cut at step %" PRIu64 " after rename %" PRIu64,
             p->segment_bytes, p->rename_step, p->rename);
  else if (p->checkpoint)
    snprintf(buf, len, "%" PRIu64 "-byte segments, cut at step %" PRIu64 " of checkpoint %" PRIu64,
             p->segment_bytes, p->step, p->checkpoint);
  else if (p->dir_op && p->dir_mark)
    snprintf(buf, len, "%" PRIu64 "-byte segments, cut at %s %" PRIu64 " of checkpoint %" PRIu64,
             p->segment_bytes, p->dir_kinds ? pc_op_kind_name(p->dir_kinds) : "directory operation",
             p->dir_op, p->dir_mark);
  else if (p->dir_op)
    snprintf(buf, len, "%" PRIu64 "-byte segments, cut at directory operation %" PRIu64 "%s",
             p->segment_bytes, p->dir_op,
             p->child_creates ? " (the child creating the relations)" : "");
  else
    snprintf(buf, len, "%" PRIu64 "-byte segments, cut at operation %" PRIu64, p->segment_bytes,
             p->cut_at);
}

/* What the cuts of a run so far leave each client: the highest value
 * acknowledged or recovered (a recovered value was made durable by the
 * check's clean close), and in which generation. */
typedef struct power_floor {
  uint64_t value[CRASH_MAX_CLIENTS];
  uint64_t generation[CRASH_MAX_CLIENTS];
} power_floor;

/* Holds a directory a power cut left to the rules — every value
 * acknowledged in this generation or any before it is there — and raises
 * the floor to what was recovered; false if a rule is broken. */
static bool check_power_cut(const char *dir, uint32_t clients, uint64_t seed, uint64_t run,
                            uint64_t generation, const char *what, const child_run *r,
                            power_floor *floor, totals *t) {
  crash_check c;
  if (crash_check_dir(dir, clients, stderr, &c) != HS_OK) {
    t->refused_to_open++;
    fprintf(stderr, CRASH_PROG ": seed %" PRIu64 " run %" PRIu64 " (%s): recovery refused: %s\n",
            seed, run, what, hs_last_error());
    if (!t->first_refusal[0])
      snprintf(t->first_refusal, sizeof t->first_refusal,
               "seed %" PRIu64 " run %" PRIu64 " (%s): %s", seed, run, what, hs_last_error());
    return false;
  }
  bool ok = !crash_check_failed(&c);
  t->corrupt_undetected += c.undetected_pages;
  t->corrupt_detected += c.corrupt_pages;
  t->partial += c.partial_clients;
  char why[300] = "";
  if (c.corrupt_pages) snprintf(why, sizeof why, "%u page(s) fail their checksum", c.corrupt_pages);
  if (c.undetected_pages)
    snprintf(why, sizeof why, "%u page(s) pass their checksum holding what nothing wrote",
             c.undetected_pages);
  if (c.partial_clients)
    snprintf(why, sizeof why, "%u transaction(s) there in part", c.partial_clients);
  if (c.heap_bad) snprintf(why, sizeof why, "%u heap row(s) wrong, missing or unfound", c.heap_bad);
  if (c.vacuum_failed) snprintf(why, sizeof why, "vacuum of the recovered table failed");
  t->heap_bad += c.heap_bad;
  t->vacuum_failed += c.vacuum_failed;
  for (uint32_t i = 0; i < c.clients && i < CRASH_MAX_CLIENTS; i++) {
    uint64_t acked = floor->value[i], since = floor->generation[i];
    if (r->ack[i] > acked) {
      acked = r->ack[i];
      since = generation;
    }
    if (c.value[i] < acked) {
      t->lost++;
      ok = false;
      snprintf(why, sizeof why,
               "client %u lost value %" PRIu64 " (acknowledged or recovered in generation %" PRIu64
               "); recovered %" PRIu64,
               i, acked, since, c.value[i]);
      fprintf(stderr, CRASH_PROG ": seed %" PRIu64 " run %" PRIu64 " (%s): %s\n", seed, run, what,
              why);
    } else if (c.value[i] > acked + 1) {
      t->too_new++;
      ok = false;
      snprintf(why, sizeof why,
               "client %u recovered value %" PRIu64
               ", more than one past its acknowledged %" PRIu64,
               i, c.value[i], acked);
      fprintf(stderr, CRASH_PROG ": seed %" PRIu64 " run %" PRIu64 " (%s): %s\n", seed, run, what,
              why);
    }
    if (c.value[i] > floor->value[i]) {
      floor->value[i] = c.value[i];
      floor->generation[i] = generation;
    }
  }
  if (!ok && !t->first_failure[0])
    snprintf(t->first_failure, sizeof t->first_failure, "seed %" PRIu64 " run %" PRIu64 " (%s): %s",
             seed, run, what, why);
  if (c.report.ran) {
    t->recovery_ms[t->nrecoveries++] = c.report.seconds * 1000;
    t->recovery_bytes += c.report.bytes;
    t->recovery_seconds += c.report.seconds;
  }
  return ok;
}

/* Removes a run's directory, if there. */
static void remove_tree(const char *dir) {
  if (access(dir, F_OK) == 0) bench_tempdir_remove(dir);
}

/* Whether a regular file under `dir` (and its log directory) has more
 * than one name: the state a recycling cut between its link() and its
 * unlink() leaves, counted to show the aimed cuts reach it. */
static bool has_file_under_two_names(const char *dir) {
  char sub[4300];
  const char *dirs[] = {dir, sub};
  snprintf(sub, sizeof sub, "%s/wal", dir);
  for (size_t i = 0; i < 2; i++) {
    DIR *d = opendir(dirs[i]);
    if (!d) continue;
    struct dirent *e;
    bool two = false;
    while (!two && (e = readdir(d))) {
      struct stat sb;
      if (fstatat(dirfd(d), e->d_name, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(sb.st_mode) &&
          sb.st_nlink > 1)
        two = true;
    }
    closedir(d);
    if (two) return true;
  }
  return false;
}

/* One cut of a run: a child on `dir` (which it first recovers), cut as
 * `p` says, the cut applied, the directory recovered and checked. */
static bool power_cut(const char *dir, char *journal, uint32_t clients, uint64_t seed, uint64_t run,
                      uint64_t generation, uint64_t generations, const power_plan *p,
                      power_floor *floor, totals *t) {
  char what[240];
  power_plan_describe(p, generation, generations, what, sizeof what);
  char seg[32], cut[32], ckpt[32], step[32], ren[32], rstep[32], dop[32], dmark[32], dkinds[32];
  snprintf(seg, sizeof seg, "%" PRIu64, p->segment_bytes);
  snprintf(cut, sizeof cut, "%" PRIu64, p->cut_at);
  snprintf(ckpt, sizeof ckpt, "%" PRIu64, p->checkpoint);
  snprintf(step, sizeof step, "%" PRIu64, p->step);
  snprintf(ren, sizeof ren, "%" PRIu64, p->rename);
  snprintf(rstep, sizeof rstep, "%" PRIu64, p->rename_step);
  snprintf(dop, sizeof dop, "%" PRIu64, p->dir_op);
  snprintf(dmark, sizeof dmark, "%" PRIu64, p->dir_mark);
  snprintf(dkinds, sizeof dkinds, "%u", p->dir_kinds);
  char *extra[] = {"--journal",
                   journal,
                   "--segment-bytes",
                   seg,
                   "--cut-at",
                   cut,
                   "--cut-checkpoint",
                   ckpt,
                   "--cut-step",
                   step,
                   "--cut-rename",
                   ren,
                   "--cut-rename-step",
                   rstep,
                   "--cut-dir-op",
                   dop,
                   "--cut-dir-checkpoint",
                   dmark,
                   "--cut-dir-kinds",
                   dkinds,
                   p->heap ? "--heap" : NULL,
                   NULL};
  kill_plan plan = {.power = extra};
  child_run r = {0};
  bench_rng rng;
  bench_rng_seed(&rng, seed ^ 0x5eedu ^ ((generation - 1) * 0x9E3779B97F4A7C15ull), run);
  if (!run_child(dir, clients, bench_rng_next(&rng), plan, &r, t)) {
    fprintf(stderr,
            CRASH_PROG ": seed %" PRIu64 " run %" PRIu64 " (%s): the workload was not cut\n", seed,
            run, what);
    return false;
  }
  if (p->checkpoint) t->checkpoint_cuts++;
  if (p->rename) t->rename_cuts++;
  if (p->dir_op) t->dir_op_cuts++;
  pc_result res;
  if (pc_apply(dir, journal, p->apply_seed, power_strict, &res) != HS_OK) {
    fprintf(stderr, CRASH_PROG ": applying the cut: %s\n", hs_last_error());
    return false;
  }
  for (unsigned k = 0; k < PC_OP_KINDS; k++)
    if (res.cut_kind == 1u << k) t->cut_kinds[k]++;
  if (has_file_under_two_names(dir)) t->two_name_cuts++;
  t->writes_dropped += res.writes_dropped;
  t->writes_torn += res.writes_torn;
  t->writes_kept += res.writes_kept;
  t->dir_entries_lost += res.dir_entries_lost;
  t->files_cut += res.files_cut;
  return check_power_cut(dir, clients, seed, run, generation, what, &r, floor, t);
}

/* One power-loss run in a fresh directory base/run (journal beside it):
 * `generations` cuts on it, each generation's child recovering what the
 * cut before it left (and the check recovered), every acknowledged value
 * of every generation held to the end. The first failed cut ends the run:
 * the next child would build on what it found wrong. */
static bool power_run(const char *base, uint64_t seed, uint64_t run, uint64_t generations,
                      uint32_t clients, totals *t) {
  power_plan first = power_plan_for(seed, run, 1);
  char dir[4200], journal[4200];
  snprintf(dir, sizeof dir, "%s/run", base);
  snprintf(journal, sizeof journal, "%s/journal", base);
  remove_tree(dir);
  crash_segment_bytes = first.segment_bytes;
  crash_page_size = first.segment_bytes < CRASH_SEGMENT_BYTES ? 1024u : CRASH_PAGE_SIZE;
  crash_heap = first.heap;
  if (first.heap) t->heap_runs++;
  if (first.child_creates) {
    /* The recorder's root must exist; everything in it is the child's. */
    if (mkdir(dir, 0700) != 0) {
      fprintf(stderr, CRASH_PROG ": cannot create %s: %s\n", dir, strerror(errno));
      return false;
    }
  } else {
    crash_db db;
    if (crash_db_open(dir, clients, false, &db) != HS_OK || crash_db_close(&db) != HS_OK) {
      fprintf(stderr, CRASH_PROG ": opening %s: %s\n", dir, hs_last_error());
      return false;
    }
  }
  power_floor floor = {{0}, {0}};
  bool ok = true;
  for (uint64_t g = 1; ok && g <= generations; g++) {
    power_plan p = g == 1 ? first : power_plan_for(seed, run, g);
    ok = power_cut(dir, journal, clients, seed, run, g, generations, &p, &floor, t);
  }
  if (ok) remove_tree(dir);
  unlink(journal);
  return ok;
}

static void print_power_totals(totals *t, uint64_t generations, bool json, double seconds) {
  if (json) {
    json_out j;
    json_begin(&j, stdout);
    json_u64(&j, "runs", t->runs);
    json_u64(&j, "generations", generations);
    json_u64(&j, "power_cuts", t->power_cuts);
    json_u64(&j, "checkpoint_cuts", t->checkpoint_cuts);
    json_u64(&j, "rename_cuts", t->rename_cuts);
    json_u64(&j, "dir_op_cuts", t->dir_op_cuts);
    for (unsigned k = 0; k < PC_OP_KINDS; k++) {
      /* cut_at_write, cut_at_file_sync, ..., cut_at_dir_sync */
      char key[40];
      snprintf(key, sizeof key, "cut_at_%s", pc_op_kind_name(1u << k));
      for (char *c = key; *c; c++)
        if (*c == '-') *c = '_';
      json_u64(&j, key, t->cut_kinds[k]);
    }
    json_u64(&j, "two_name_cuts", t->two_name_cuts);
    json_u64(&j, "heap_runs", t->heap_runs);
    json_u64(&j, "acknowledged", t->acknowledged);
    json_u64(&j, "lost", t->lost);
    json_u64(&j, "corrupt_undetected", t->corrupt_undetected);
    json_u64(&j, "corrupt_detected", t->corrupt_detected);
    json_u64(&j, "partial", t->partial);
    json_u64(&j, "heap_bad", t->heap_bad);
    json_u64(&j, "vacuum_failed", t->vacuum_failed);
    json_u64(&j, "refused_to_open", t->refused_to_open);
    json_u64(&j, "writes_dropped", t->writes_dropped);
    json_u64(&j, "writes_torn", t->writes_torn);
    json_u64(&j, "writes_kept", t->writes_kept);
    json_u64(&j, "dir_entries_lost", t->dir_entries_lost);
    json_u64(&j, "files_cut", t->files_cut);
    json_u64(&j, "failed_runs", t->failed_runs);
    json_double(&j, "seconds", "%.1f", seconds);
    if (t->first_refusal[0]) json_str(&j, "first_refusal", t->first_refusal);
    if (t->first_failure[0]) json_str(&j, "first_failure", t->first_failure);
    json_end_line(&j);
    return;
  }
  printf("%-24s %" PRIu64 " (%" PRIu64 " generation%s each)\n", "runs", t->runs, generations,
         generations == 1 ? "" : "s");
  printf("%-24s %" PRIu64 " (%" PRIu64 " in a checkpoint, %" PRIu64 " at a directory operation)\n",
         "power_cuts", t->power_cuts, t->checkpoint_cuts, t->dir_op_cuts);
  for (unsigned k = 0; k < PC_OP_KINDS; k++) {
    char label[40];
    snprintf(label, sizeof label, "cut at %s", pc_op_kind_name(1u << k));
    printf("%-24s %" PRIu64 "\n", label, t->cut_kinds[k]);
  }
  printf("%-24s %" PRIu64 "\n", "two_name_cuts", t->two_name_cuts);
  printf("%-24s %" PRIu64 "\n", "acknowledged", t->acknowledged);
  printf("%-24s %" PRIu64 "\n", "lost", t->lost);
  printf("%-24s %" PRIu64 "\n", "corrupt_undetected", t->corrupt_undetected);
  printf("%-24s %" PRIu64 "\n", "corrupt_detected", t->corrupt_detected);
  printf("%-24s %" PRIu64 "\n", "partial", t->partial);
  printf("%-24s %" PRIu64 "\n", "heap_runs", t->heap_runs);
  printf("%-24s %" PRIu64 "\n", "heap_bad", t->heap_bad);
  printf("%-24s %" PRIu64 "\n", "vacuum_failed", t->vacuum_failed);
  printf("%-24s %" PRIu64 "\n", "refused_to_open", t->refused_to_open);
  printf("%-24s %" PRIu64 "\n", "writes_dropped", t->writes_dropped);
  printf("%-24s %" PRIu64 "\n", "writes_torn", t->writes_torn);
  printf("%-24s %" PRIu64 "\n", "writes_kept", t->writes_kept);
  printf("%-24s %" PRIu64 "\n", "dir_entries_lost", t->dir_entries_lost);
  printf("%-24s %" PRIu64 "\n", "files_cut", t->files_cut);
  printf("%-24s %.1f s\n", "time", seconds);
  if (t->first_refusal[0]) printf("%-24s %s\n", "first refusal", t->first_refusal);
  if (t->first_failure[0]) printf("%-24s %s\n", "first failure", t->first_failure);
  if (t->failed_runs) printf("%-24s %" PRIu64 "\n", "failed runs", t->failed_runs);
}

/* Runs 1..runs (or only `only`) of `seed`, each in a fresh directory under
 * base, and goes on past failures: each run stands alone. */
static int run_power_parent(const char *base, uint64_t runs, uint64_t only, uint64_t generations,
                            uint32_t clients, uint64_t seed, bool json) {
  totals t = {0};
  t.recovery_ms = calloc(runs * generations + 1, sizeof *t.recovery_ms);
  if (!t.recovery_ms) {
    fprintf(stderr, CRASH_PROG ": out of memory\n");
    return 1;
  }
  crash_bgwriter = true;
  if (mkdir(base, 0700) != 0 && errno != EEXIST) {
    fprintf(stderr, CRASH_PROG ": cannot create %s: %s\n", base, strerror(errno));
    free(t.recovery_ms);
    return 1;
  }
  bool progress = isatty(STDERR_FILENO);
  uint64_t t0 = bench_now_ns();
  for (uint64_t run = only ? only : 1; run <= (only ? only : runs); run++) {
    if (!power_run(base, seed, run, generations, clients, &t)) t.failed_runs++;
    t.runs++;
    if (progress)
      fprintf(stderr, "\r" CRASH_PROG ": run %" PRIu64 "/%" PRIu64 ", %" PRIu64 " failed", run,
              runs, t.failed_runs);
  }
  if (progress) fputc('\n', stderr);
  print_power_totals(&t, generations, json, (double)(bench_now_ns() - t0) / 1e9);
  free(t.recovery_ms);
  return t.failed_runs || t.lost || t.corrupt_undetected || t.refused_to_open ? 1 : 0;
}

int crash_test_main(int argc, char **argv) {
  uint64_t runs, clients, seed, only_run, cut_at, cut_checkpoint, cut_step, segment_bytes;
  uint64_t cut_rename, cut_rename_step, cut_dir_op, cut_dir_checkpoint, cut_dir_kinds;
  uint64_t generations;
  bool json = false, workload = false, verify = false, torn = false, power_loss = false;
  bool strict = false, heap = false;
  const char *dir = NULL, *kill_at_flag = NULL, *journal = NULL;
  const args_opt opts[] = {
      {.name = "runs",
       .kind = ARGS_UINT,
       .dest = &runs,
       .min = 1,
       .def = "100",
       .help = "kill points: children started and killed"},
      {.name = "seed",
       .kind = ARGS_UINT,
       .dest = &seed,
       .def = "1",
       .help = "seed of the kill moments and the workload"},
      {.name = "clients",
       .kind = ARGS_UINT,
       .dest = &clients,
       .min = 1,
       .max = CRASH_MAX_CLIENTS,
       .def = "4",
       .help = "client threads of the workload"},
      {.name = "dir",
       .kind = ARGS_PATH,
       .dest = &dir,
       .max = BENCH_DIR_MAX,
       .arg = "DIR",
       .help = "data directory (kept; created with its parents if missing); the parent's default "
               "is a temporary one, removed"},
      {.name = "json", .kind = ARGS_FLAG, .dest = &json, .help = "print JSON lines"},
      {.name = "workload",
       .kind = ARGS_FLAG,
       .dest = &workload,
       .help = "run the child half until killed"},
      {.name = "verify",
       .kind = ARGS_FLAG,
       .dest = &verify,
       .help = "recover DIR and print every client's value"},
      {.name = "heap",
       .kind = ARGS_FLAG,
       .dest = &heap,
       .help = "with --workload or --verify: the heap workload (rows updated in transactions, "
               "a vacuum thread) instead of the pages'"},
      {.name = "torn",
       .kind = ARGS_FLAG,
       .dest = &torn,
       .help = "with --workload: tear a page write half way, then die by SIGKILL"},
      {.name = "kill-at",
       .kind = ARGS_STRING,
       .dest = &kill_at_flag,
       .arg = "MODE",
       .help = "with --workload: die by SIGKILL at a page write, during a checkpoint or in a "
               "segment switch (page-write, checkpoint, segment-switch)"},
      {.name = "power-loss",
       .kind = ARGS_FLAG,
       .dest = &power_loss,
       .help = "simulate power cuts instead of kills: the child is stopped at a chosen file "
               "operation, then every change not made durable is dropped, kept or torn"},
      {.name = "strict-fdatasync",
       .kind = ARGS_FLAG,
       .dest = &strict,
       .def = "true",
       .help = "with --power-loss: only fsync makes a file's growth durable, not fdatasync "
               "(POSIX's reading; =false models ext4, whose fdatasync also makes it durable)"},
      {.name = "generations",
       .kind = ARGS_UINT,
       .dest = &generations,
       .min = 1,
       .max = POWER_MAX_GENERATIONS,
       .def = "1",
       .help = "with --power-loss: power cuts per run on one directory, a new child recovering "
               "and working on it after each"},
      {.name = "run",
       .kind = ARGS_UINT,
       .dest = &only_run,
       .def = "0",
       .help = "with --power-loss: only this run of the seed (to replay a failure)"},
      {.name = "journal",
       .kind = ARGS_PATH,
       .dest = &journal,
       .max = BENCH_DIR_MAX,
       .arg = "FILE",
       .help = "with --workload: arm the power-cut recorder over DIR, journaling into FILE"},
      {.name = "cut-at",
       .kind = ARGS_UINT,
       .dest = &cut_at,
       .def = "0",
       .help = "with --journal: stop before the Nth file operation"},
      {.name = "cut-checkpoint",
       .kind = ARGS_UINT,
       .dest = &cut_checkpoint,
       .def = "0",
       .help = "with --journal and --cut-step: in the Nth checkpoint"},
      {.name = "cut-step",
       .kind = ARGS_UINT,
       .dest = &cut_step,
       .def = "0",
       .help = "with --journal: stop before that checkpoint's Kth file operation"},
      {.name = "cut-rename",
       .kind = ARGS_UINT,
       .dest = &cut_rename,
       .def = "0",
       .help = "with --journal and --cut-rename-step: after the Nth rename"},
      {.name = "cut-rename-step",
       .kind = ARGS_UINT,
       .dest = &cut_rename_step,
       .def = "0",
       .help = "with --journal: stop at the Kth file operation after that rename"},
      {.name = "cut-dir-op",
       .kind = ARGS_UINT,
       .dest = &cut_dir_op,
       .def = "0",
       .help = "with --journal: stop at the Kth directory operation (create, rename, link, "
               "unlink, mkdir, directory fsync)"},
      {.name = "cut-dir-checkpoint",
       .kind = ARGS_UINT,
       .dest = &cut_dir_checkpoint,
       .def = "0",
       .help = "with --cut-dir-op: counted inside the Nth checkpoint (0: from the start)"},
      {.name = "cut-dir-kinds",
       .kind = ARGS_UINT,
       .dest = &cut_dir_kinds,
       .def = "0",
       .max = PC_OP_DIRECTORY,
       .help = "with --cut-dir-op: only these kinds count, as bits (create 8, rename 16, link 32, "
               "unlink 64, mkdir 128, directory fsync 256; 0: all six)"},
      {.name = "segment-bytes",
       .kind = ARGS_UINT,
       .dest = &segment_bytes,
       .def = "0",
       .help = "with --workload: the log's segment size (default 262144)"},
  };
  args_parse(cmd, opts, sizeof opts / sizeof opts[0], argc, argv, 0);
  if (workload && verify) args_usage_error(cmd, "--workload and --verify exclude each other");
  if ((workload || verify) && !dir)
    args_usage_error(cmd, "--%s needs --dir", workload ? "workload" : "verify");
  if (torn && !workload) args_usage_error(cmd, "--torn goes with --workload");
  if (heap && !workload && !verify)
    args_usage_error(cmd, "--heap goes with --workload or --verify");
  if (heap && (torn || kill_at_flag))
    args_usage_error(cmd, "--heap goes with --journal, not --%s", torn ? "torn" : "kill-at");
  crash_heap = heap;
  crash_kill_at kill_at = CRASH_KILL_NONE;
  if (kill_at_flag) {
    if (!workload) args_usage_error(cmd, "--kill-at goes with --workload");
    for (int k = CRASH_KILL_NONE + 1; k < CRASH_KILL_COUNT; k++)
      if (strcmp(kill_at_flag, kill_at_names[k]) == 0) kill_at = (crash_kill_at)k;
    if (kill_at == CRASH_KILL_NONE)
      args_usage_error(cmd, "--kill-at: \"%s\" is not page-write, checkpoint or segment-switch",
                       kill_at_flag);
  }
  if (torn && kill_at != CRASH_KILL_NONE)
    args_usage_error(cmd, "--torn and --kill-at exclude each other");
  if (journal && !workload) args_usage_error(cmd, "--journal goes with --workload");
  if (power_loss && (workload || verify))
    args_usage_error(cmd, "--power-loss is the parent's: not with --%s",
                     workload ? "workload" : "verify");
  if (only_run && !power_loss) args_usage_error(cmd, "--run goes with --power-loss");
  if (generations > 1 && !power_loss) args_usage_error(cmd, "--generations goes with --power-loss");
  if (cut_dir_kinds & ~(uint64_t)PC_OP_DIRECTORY)
    args_usage_error(cmd, "--cut-dir-kinds: %" PRIu64 " names no directory operation",
                     cut_dir_kinds);
  power_strict = strict;
  if (only_run > runs) runs = only_run;
  /* A --dir to write into is created with its missing parents (mkdir -p),
   * as by every command that makes a directory; --verify reads one that
   * must exist. */
  if (dir && !verify && make_dirs(dir, 0700, "the directory") != HS_OK) {
    fprintf(stderr, CRASH_PROG ": --dir: %s\n", hs_last_error());
    return 1;
  }
  if (segment_bytes) crash_segment_bytes = segment_bytes;
  if (crash_segment_bytes < CRASH_SEGMENT_BYTES) crash_page_size = 1024u;
  if (workload) {
    pc_arm arm = {.root = dir,
                  .journal = journal,
                  .cut_at = cut_at,
                  .cut_after_mark = cut_checkpoint ? cut_step : 0,
                  .mark_nth = cut_checkpoint,
                  .cut_after_rename = cut_rename ? cut_rename_step : 0,
                  .rename_nth = cut_rename,
                  .cut_dir_op = cut_dir_op,
                  .dir_op_kinds = (unsigned)cut_dir_kinds,
                  .dir_op_mark = cut_dir_checkpoint,
                  .skip_syncs = true};
    if (journal) crash_bgwriter = true;
    if (heap) return crash_heap_workload_run(dir, (uint32_t)clients, seed, journal ? &arm : NULL);
    return crash_workload_run(dir, (uint32_t)clients, seed, torn, kill_at, journal ? &arm : NULL);
  }
  if (verify) return crash_verify_run(dir, json);

  char tmp[4096] = "";
  if (!dir) {
    if (bench_tempdir_make("crash-test", tmp, sizeof tmp) != HS_OK) {
      fprintf(stderr, CRASH_PROG ": %s\n", hs_last_error());
      return 1;
    }
    dir = tmp;
  }
  int rc = power_loss
               ? run_power_parent(dir, runs, only_run, generations, (uint32_t)clients, seed, json)
               : run_parent(dir, runs, (uint32_t)clients, seed, json);
  if (tmp[0] && rc == 0)
    bench_tempdir_remove(tmp);
  else if (tmp[0])
    fprintf(stderr, CRASH_PROG ": the data directory is kept for a look: %s\n", tmp);
  return rc;
}
