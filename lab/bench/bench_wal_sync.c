/*
 * bench/bench_wal_sync.c — `hotset bench wal-sync`: which way of making a
 * log write durable is fastest on this machine, hotset's pg_test_fsync.
 *
 * hotset's log pwrite()s into segment files written whole with zeros when
 * they were created, then fdatasyncs (src/wal/wal.c). PostgreSQL lets the
 * administrator choose (wal_sync_method): fsync instead of fdatasync, or
 * opening the segments with O_DSYNC (open_datasync) or O_SYNC (open_sync)
 * so that each write itself waits for the device; with O_DIRECT too
 * (debug_io_direct=wal) those writes skip the page cache, which spares a
 * copy and the kernel's writeback bookkeeping but needs aligned buffers,
 * offsets and lengths. Which wins depends on the file system and the
 * device, so it is measured, not assumed.
 *
 * One file of --file-size bytes of zeros, written and synced up front as
 * the log makes a segment. For each --sizes entry and each method, one
 * thread writes that many bytes at a time sequentially through the file,
 * wrapping around at its end, each write made durable the method's way:
 * a tenth of --seconds untimed, then --seconds with each operation (write
 * + its sync) timed. After each
 * cell the file is fdatasynced untimed, so a cell never pays for the dirty
 * pages of the one before it (write-only leaves many).
 *
 * A method the file system refuses (O_DIRECT: EINVAL from open or from the
 * first write, or a size that is no multiple of the alignment statx
 * reports) is reported as refused, with the reason, and the run goes on.
 */
#include "bench/bench_wal_sync.h"

#include "bench/latency_hist.h"
#include "bench/raw_read.h"
#include "common/args.h"
#include "common/clock.h"
#include "common/human_size.h"
#include "common/interrupt.h"
#include "common/json.h"
#include "common/resources.h"
#include "common/scratch.h"
#include "core/error.h"
#include "hotset/wal.h"
#include "storage/direct_io.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PROG      "hotset bench wal-sync"
#define SIZE_UNIT 4096u /* every size a whole number of pages, so O_DIRECT can run it */
#define MAX_IO    (64u << 20)
#define PATH_LEN  (BENCH_DIR_MAX + 64)

typedef enum sync_call { SYNC_NONE, SYNC_FDATASYNC, SYNC_FSYNC } sync_call;

/* A way of making a write durable: flags the file is opened with (besides
 * O_WRONLY), and the call after each write. */
typedef struct sync_method {
  const char *name;
  int flags;
  sync_call sync;
} sync_method;

/* write+fdatasync first: the other rows are compared with it. */
static const sync_method methods[] = {
    {"write+fdatasync", 0, SYNC_FDATASYNC},
    {"write+fsync", 0, SYNC_FSYNC},
    {"open_datasync", O_DSYNC, SYNC_NONE},
    {"open_sync", O_SYNC, SYNC_NONE},
    {"open_datasync+direct", O_DSYNC | O_DIRECT, SYNC_NONE},
    {"open_sync+direct", O_SYNC | O_DIRECT, SYNC_NONE},
    {"write-only", 0, SYNC_NONE},
};
#define NMETHODS (sizeof methods / sizeof methods[0])

static const args_command command = {
    .cmd = {.prog = PROG},
    .about = "How fast each way of making a log write durable is on this machine, as\n"
             "PostgreSQL's pg_test_fsync measures wal_sync_method: in a file of zeros written\n"
             "up front (as the log's segments are), one thread writes --sizes bytes at a time\n"
             "sequentially, wrapping around, each write made durable by the method, for\n"
             "--seconds per size and method. hotset's log does write+fdatasync.\n",
    .notes = ARGS_SIZE_NOTE
    "Methods: write+fdatasync and write+fsync (pwrite, then the call);\n"
    "open_datasync and open_sync (the file opened O_DSYNC or O_SYNC: the write\n"
    "returns once durable); open_datasync+direct and open_sync+direct (the same with\n"
    "O_DIRECT: no page cache, an aligned buffer); write-only (no sync: the floor).\n"
    "A method the file system refuses (O_DIRECT) is reported as refused; the others\n"
    "still run. Sizes are multiples of 4KiB. The file (and the temporary directory)\n"
    "is removed at the end, also on SIGINT or SIGTERM.\n",
};
static const args_cmd *const cmd = &command.cmd;

typedef struct wal_sync {
  double seconds;
  args_uint_list sizes;
  uint64_t file_bytes;
  const char *dir_flag;
  bool json;

  char tmpdir[PATH_LEN]; /* ours to remove, or empty */
  const char *base;
  char path[PATH_LEN + 32]; /* the file, once made; else empty */
  char fs[48];              /* its file system's name */
  uint32_t align;           /* what O_DIRECT needs on it */
  void *buf;                /* the bytes written, aligned for O_DIRECT */
} wal_sync;

/* One size and method. */
typedef struct cell {
  bool refused;
  char why[200];
  uint64_t ops, ns;
  latency_hist hist;
} cell;

/* ---- flags ---------------------------------------------------------------- */

static void parse_flags(wal_sync *b, int argc, char **argv) {
  const args_opt opts[] = {
      {.name = "dir",
       .kind = ARGS_PATH,
       .dest = &b->dir_flag,
       .max = BENCH_DIR_MAX,
       .arg = "DIR",
       .help = "directory for the file (created if missing, never removed; the file is) "
               "instead of a temporary one"},
      {.name = "seconds",
       .kind = ARGS_DOUBLE,
       .dest = &b->seconds,
       .dmin = 0.05,
       .dmax = 86400,
       .def = "2",
       .arg = "S",
       .help = "measured time per size and method (fractions allowed)"},
      {.name = "sizes",
       .kind = ARGS_SIZE_LIST,
       .dest = &b->sizes,
       .min = SIZE_UNIT,
       .max = MAX_IO,
       .def = "8KiB,16KiB,64KiB,256KiB",
       .help = "bytes per write, comma-separated, each a multiple of 4KiB up to 64MiB"},
      {.name = "file-size",
       .kind = ARGS_SIZE,
       .dest = &b->file_bytes,
       .min = HS_WAL_MIN_SEGMENT,
       .max = HS_WAL_MAX_SEGMENT,
       .def = "16MiB",
       .help = "the file written through, a multiple of 4KiB from 64KiB to 1GiB (16MiB: "
               "one log segment)"},
      {.name = "json", .kind = ARGS_FLAG, .dest = &b->json, .help = "one JSON object per cell"},
  };
  args_parse(cmd, opts, sizeof opts / sizeof opts[0], argc, argv, 0);
  char a[32], c[32];
  for (uint32_t i = 0; i < b->sizes.n; i++) {
    uint64_t s = b->sizes.v[i];
    if (s % SIZE_UNIT != 0)
      args_usage_error(cmd, "--sizes: %s is not a multiple of 4 KiB (O_DIRECT writes whole pages)",
                       human_size(s, a, sizeof a));
    if (s > b->file_bytes)
      args_usage_error(cmd, "--sizes: %s is larger than --file-size %s", human_size(s, a, sizeof a),
                       human_size(b->file_bytes, c, sizeof c));
  }
  if (b->file_bytes % SIZE_UNIT != 0)
    args_usage_error(cmd, "--file-size: %s is not a multiple of 4 KiB",
                     human_size(b->file_bytes, a, sizeof a));
}

/* ---- the file ------------------------------------------------------------- */

/* What the run made: the file, our temporary directory. Safe to call more
 * than once. */
static void remove_made(wal_sync *b) {
  if (b->path[0]) unlink(b->path);
  b->path[0] = '\0';
  if (b->tmpdir[0]) bench_tempdir_remove(b->tmpdir);
  b->tmpdir[0] = '\0';
}

/* Zeros over the whole file, then fdatasync: what the log does to a new
 * segment, so later writes change no size and allocate no blocks. */
static hs_status make_file(wal_sync *b) {
  snprintf(b->path, sizeof b->path, "%s/wal-sync.dat", b->base);
  int fd = open(b->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    int err = errno;
    hs_status st =
        hs_fail(hs_status_from_errno(err), err, "creating %s: %s", b->path, strerror(err));
    b->path[0] = '\0';
    return st;
  }
  size_t chunk = 1u << 20;
  void *zeros = calloc(1, chunk);
  hs_status st = zeros ? HS_OK : hs_fail(HS_ERR_NOMEM, ENOMEM, "allocating 1 MiB of zeros");
  for (uint64_t off = 0; st == HS_OK && off < b->file_bytes; off += chunk) {
    size_t n = b->file_bytes - off < chunk ? (size_t)(b->file_bytes - off) : chunk;
    if (bench_interrupted())
      st = hs_fail(HS_ERR_IO, EINTR, "writing %s: interrupted", b->path);
    else if (pwrite(fd, zeros, n, (off_t)off) != (ssize_t)n) {
      int err = errno ? errno : EIO;
      st = hs_fail(hs_status_from_errno(err), err, "writing zeros to %s: %s", b->path,
                   strerror(err));
    }
  }
  if (st == HS_OK && fdatasync(fd) != 0) {
    int err = errno;
    st = hs_fail(hs_status_from_errno(err), err, "fdatasync of %s: %s", b->path, strerror(err));
  }
  if (st == HS_OK) b->align = bench_dio_align(fd);
  free(zeros);
  close(fd);
  return st;
}

/* ---- one cell ------------------------------------------------------------- */

static int sync_after(sync_call s, int fd) {
  switch (s) {
  case SYNC_FDATASYNC:
    return fdatasync(fd);
  case SYNC_FSYNC:
    return fsync(fd);
  case SYNC_NONE:
    break;
  }
  return 0;
}

static int refuse(cell *c, int fd, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Marks the cell refused, saying why; closes fd if open. Returns 0. */
static int refuse(cell *c, int fd, const char *fmt, ...) {
  if (fd >= 0) close(fd);
  c->refused = true;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->why, sizeof c->why, fmt, ap);
  va_end(ap);
  return 0;
}

/* Writes `size` bytes at a time from *off on, wrapping around at the file's
 * end, each made durable the method's way, for `ns` nanoseconds (less if
 * interrupted), counting and timing each in c. NULL, or the call that
 * failed (errno says why). */
static const char *write_for(const wal_sync *b, int fd, const sync_method *m, uint64_t size,
                             uint64_t ns, uint64_t *off, cell *c) {
  uint64_t t0 = bench_now_ns(), now = t0;
  const char *failed = NULL;
  while (now - t0 < ns && !bench_interrupted()) {
    if (*off + size > b->file_bytes) *off = 0;
    uint64_t start = now;
    ssize_t got = pwrite(fd, b->buf, (size_t)size, (off_t)*off);
    if (got != (ssize_t)size) {
      if (got >= 0) errno = EIO; /* a short write to a file of fixed size */
      failed = "writing";
      break;
    }
    if (sync_after(m->sync, fd) != 0) {
      failed = m->sync == SYNC_FSYNC ? "fsync" : "fdatasync";
      break;
    }
    now = bench_now_ns();
    latency_hist_add(&c->hist, now - start);
    c->ops++;
    *off += size;
  }
  c->ns = now - t0;
  return failed;
}

/* One cell: the file opened the method's way, a tenth of --seconds of
 * untimed writes (the first after another method meet pages in another
 * state: cached or not, and the journal may still be committing the last
 * cell's work), then --seconds measured. 0 measured or refused (c says
 * which), -1 failed (hs_fail set; also when interrupted). */
static int run_cell(wal_sync *b, const sync_method *m, uint64_t size, cell *c) {
  bool direct = (m->flags & O_DIRECT) != 0;
  memset(c, 0, sizeof *c);
  latency_hist_reset(&c->hist);
  int fd = open(b->path, O_WRONLY | O_CLOEXEC | m->flags);
  if (fd < 0) {
    int err = errno;
    if (direct && err == EINVAL)
      return refuse(c, -1, "%s refuses O_DIRECT (open: %s)", b->fs, strerror(err));
    hs_fail(hs_status_from_errno(err), err, "%s: opening %s: %s", m->name, b->path, strerror(err));
    return -1;
  }
  if (direct && size % b->align != 0) {
    char a[32];
    return refuse(c, fd, "O_DIRECT on %s needs writes of a multiple of %s", b->fs,
                  human_size(b->align, a, sizeof a));
  }
  uint64_t off = 0, ns = (uint64_t)(b->seconds * 1e9);
  const char *failed = write_for(b, fd, m, size, ns / 10, &off, c);
  int err = errno;
  /* Some file systems take O_DIRECT at open and refuse it at the first
   * write. */
  if (failed && direct && err == EINVAL && c->ops == 0)
    return refuse(c, fd, "%s refuses O_DIRECT (write: %s)", b->fs, strerror(err));
  if (!failed) {
    c->ops = 0;
    latency_hist_reset(&c->hist);
    failed = write_for(b, fd, m, size, ns, &off, c);
    err = errno;
  }
  /* Clean for the next cell, untimed. */
  if (!failed && fdatasync(fd) != 0) {
    err = errno;
    failed = "fdatasync after the cell";
  }
  close(fd);
  if (failed) {
    hs_fail(hs_status_from_errno(err), err, "%s: %s %s: %s", m->name, failed, b->path,
            strerror(err));
    return -1;
  }
  if (bench_interrupted()) {
    hs_fail(HS_ERR_IO, EINTR, "%s: interrupted", m->name);
    return -1;
  }
  return 0;
}

/* ---- output --------------------------------------------------------------- */

typedef struct figures {
  double seconds, ops_per_sec, us_per_op, p99_us, mb_per_sec;
} figures;

static figures figures_of(const cell *c, uint64_t size) {
  figures f = {.seconds = (double)c->ns / 1e9};
  if (c->ns > 0) {
    f.ops_per_sec = (double)c->ops / f.seconds;
    f.mb_per_sec = (double)c->ops * (double)size / 1e6 / f.seconds;
  }
  if (c->ops > 0) f.us_per_op = (double)c->ns / (double)c->ops / 1e3;
  f.p99_us = latency_hist_quantile_us(&c->hist, 0.99);
  return f;
}

static void print_json(const wal_sync *b, const sync_method *m, uint64_t size, const cell *c,
                       double base_ops) {
  json_out j;
  json_begin(&j, stdout);
  json_str(&j, "method", m->name);
  json_u64(&j, "io_bytes", size);
  json_u64(&j, "file_bytes", b->file_bytes);
  json_str(&j, "file_system", b->fs);
  json_bool(&j, "refused", c->refused);
  if (c->refused) {
    json_str(&j, "reason", c->why);
  } else {
    figures f = figures_of(c, size);
    json_u64(&j, "ops", c->ops);
    json_double(&j, "seconds", "%.4f", f.seconds);
    json_double(&j, "ops_per_sec", "%.1f", f.ops_per_sec);
    json_double(&j, "us_per_op", "%.3f", f.us_per_op);
    json_double(&j, "p99_us", "%.3f", f.p99_us);
    json_double(&j, "mb_per_sec", "%.2f", f.mb_per_sec);
    json_double(&j, "vs_fdatasync", "%.3f", base_ops > 0 ? f.ops_per_sec / base_ops : 0);
  }
  json_end_line(&j);
}

static void print_header(const wal_sync *b) {
  char a[32], c[32];
  printf("%s: %s of zeros on %s, O_DIRECT alignment %s, %g s per size and method\n", b->path,
         human_size(b->file_bytes, a, sizeof a), b->fs, human_size(b->align, c, sizeof c),
         b->seconds);
  printf("%-9s %-21s %9s %9s %9s %9s %7s\n", "size", "method", "ops/s", "us/op", "p99_us", "MB/s",
         "vs_fds");
}

static void print_row(const sync_method *m, uint64_t size, const cell *c, double base_ops) {
  char a[32];
  printf("%-9s %-21s", human_size(size, a, sizeof a), m->name);
  if (c->refused) {
    printf(" refused: %s\n", c->why);
  } else {
    figures f = figures_of(c, size);
    printf(" %9.0f %9.1f %9.1f %9.1f %7.2f\n", f.ops_per_sec, f.us_per_op, f.p99_us, f.mb_per_sec,
           base_ops > 0 ? f.ops_per_sec / base_ops : 0);
  }
  fflush(stdout);
}

static void print_footer(void) {
  puts("\nops/s: writes made durable per second (write-only: not made durable); us/op: the\n"
       "mean time of one (write + sync), p99_us its 99th percentile; MB/s: bytes written\n"
       "per second (10^6); vs_fds: ops/s over write+fdatasync's at the same size, what\n"
       "hotset's log does.");
}

/* ---- the run -------------------------------------------------------------- */

static int fail(wal_sync *b, const char *what) {
  if (bench_interrupted()) {
    remove_made(b);
    bench_exit_interrupted(PROG);
  }
  fprintf(stderr, PROG ": %s%s%s\n", what ? what : "", what ? ": " : "", hs_last_error());
  remove_made(b);
  return 1;
}

static int bench_wal_sync_run(wal_sync *b) {
  struct stat sb;
  if (b->dir_flag && stat(b->dir_flag, &sb) == 0 && !S_ISDIR(sb.st_mode)) {
    fprintf(stderr, PROG ": --dir %s is not a directory\n", b->dir_flag);
    return 1;
  }
  const char *parent = b->dir_flag ? b->dir_flag : bench_tempdir_parent();
  if (bench_check_space(parent, b->file_bytes, "the file") != HS_OK) return fail(b, NULL);
  uint64_t max_io = 0;
  for (uint32_t i = 0; i < b->sizes.n; i++)
    if (b->sizes.v[i] > max_io) max_io = b->sizes.v[i];
  bench_signals_install();
  if (bench_base_dir(b->dir_flag, "wal-sync", b->tmpdir, sizeof b->tmpdir, &b->base) != HS_OK)
    return fail(b, "making its directory");
  if (make_file(b) != HS_OK) return fail(b, NULL);
  dio_fs_name(b->path, b->fs, sizeof b->fs);
  size_t buf_align = b->align > SIZE_UNIT ? b->align : SIZE_UNIT;
  if (posix_memalign(&b->buf, buf_align, (size_t)max_io) != 0) {
    b->buf = NULL;
    hs_fail(HS_ERR_NOMEM, ENOMEM, "allocating a %" PRIu64 "-byte buffer: out of memory", max_io);
    return fail(b, NULL);
  }
  /* Not zeros: a write that changes nothing could be cheaper somewhere. */
  memset(b->buf, 0xC0, (size_t)max_io);
  if (!b->json) print_header(b);
  static cell c;
  for (uint32_t i = 0; i < b->sizes.n; i++) {
    uint64_t size = b->sizes.v[i];
    double base_ops = 0;
    for (size_t k = 0; k < NMETHODS; k++) {
      if (run_cell(b, &methods[k], size, &c) != 0) return fail(b, NULL);
      if (k == 0 && !c.refused) base_ops = figures_of(&c, size).ops_per_sec;
      if (b->json)
        print_json(b, &methods[k], size, &c, base_ops);
      else
        print_row(&methods[k], size, &c, base_ops);
    }
  }
  if (!b->json) print_footer();
  remove_made(b);
  return 0;
}

int bench_wal_sync_main(int argc, char **argv) {
  static wal_sync b;
  memset(&b, 0, sizeof b);
  parse_flags(&b, argc, argv);
  int rc = bench_wal_sync_run(&b);
  free(b.buf);
  return rc;
}
