/*
 * bench/bench_util.c — clock, PRNG, scratch directories and stamped
 * relations, raw read rates and O_DIRECT's alignment for the benchmarks
 * and the workload command (see bench_util.h).
 */
#include "bench/bench_util.h"

#include "core/error.h"
#include "core/mkdirs.h"
#include "hotset/control.h"
#include "storage/direct_io.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

uint64_t bench_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void bench_sleep(double seconds) {
  if (seconds <= 0) return;
  /* An absolute deadline, so a signal that interrupts the sleep does not
   * stretch it when we go back to sleep. */
  uint64_t until = bench_now_ns() + (uint64_t)(seconds * 1e9);
  const uint64_t slice = (uint64_t)(BENCH_SLEEP_SLICE * 1e9);
  while (!bench_interrupted()) {
    uint64_t now = bench_now_ns();
    if (now >= until) return;
    uint64_t wake = until - now > slice ? now + slice : until;
    struct timespec ts = {.tv_sec = (time_t)(wake / 1000000000u),
                          .tv_nsec = (long)(wake % 1000000000u)};
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
  }
}

static uint64_t clock_ns(clockid_t clock) {
  struct timespec ts;
  if (clock_gettime(clock, &ts) != 0) return 0;
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t bench_process_cpu_ns(void) {
  return clock_ns(CLOCK_PROCESS_CPUTIME_ID);
}

uint64_t bench_thread_cpu_ns(void) {
  return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

uint64_t bench_other_thread_cpu_ns(pthread_t thread) {
  clockid_t clock;
  if (pthread_getcpuclockid(thread, &clock) != 0) return 0;
  return clock_ns(clock);
}

/* ---- interruption ---- */

/* Written only by the handler (and read everywhere): a signal number. */
static volatile sig_atomic_t interrupted_by;

static void on_signal(int sig) {
  interrupted_by = sig;
}

static const int cleanup_signals[] = {SIGINT, SIGTERM, SIGHUP};

void bench_signals_install(void) {
  for (size_t i = 0; i < sizeof cleanup_signals / sizeof cleanup_signals[0]; i++) {
    int sig = cleanup_signals[i];
    struct sigaction old;
    if (sigaction(sig, NULL, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    /* SA_RESTART: the library's system calls go on rather than fail with
     * EINTR (sleeps still wake); SA_RESETHAND: a second signal kills. */
    sa.sa_flags = SA_RESTART | SA_RESETHAND;
    sigaction(sig, &sa, NULL);
  }
}

int bench_interrupted(void) {
  return interrupted_by;
}

_Noreturn void bench_exit_interrupted(const char *prog) {
  int sig = interrupted_by ? interrupted_by : SIGTERM;
  const char *name = sig == SIGINT ? "SIGINT" : sig == SIGHUP ? "SIGHUP" : "SIGTERM";
  fflush(stdout);
  fprintf(stderr, "%s: interrupted by %s\n", prog, name);
  signal(sig, SIG_DFL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  pthread_sigmask(SIG_UNBLOCK, &set, NULL);
  raise(sig);
  _exit(128 + sig); /* not reached: the default action ends the process */
}

/* ---- resource checks ---- */

char *bench_format_bytes(uint64_t bytes, char *buf, size_t len) {
  static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) {
    snprintf(buf, len, "%llu B", (unsigned long long)bytes);
    return buf;
  }
  double v = (double)bytes / 1024;
  int u = 0;
  while (v >= 1024 && u < 5) {
    v /= 1024;
    u++;
  }
  snprintf(buf, len, "%.1f %s", v, units[u]);
  return buf;
}

const char *bench_huge_used_name(hs_huge_pages_used used) {
  return used == HS_HUGE_PAGES_EXPLICIT      ? "explicit"
         : used == HS_HUGE_PAGES_TRANSPARENT ? "transparent"
                                             : "none";
}

const char *bench_tempdir_parent(void) {
  const char *tmp = getenv("TMPDIR");
  return tmp && *tmp ? tmp : "/tmp";
}

hs_status bench_check_space(const char *dir, uint64_t need, const char *what) {
  /* A --dir that does not exist yet will be made in its nearest existing
   * parent: that file system is the one to ask. */
  char path[4096];
  if ((size_t)snprintf(path, sizeof path, "%s", dir) >= sizeof path)
    return hs_fail(HS_ERR_INVALID, 0, "the directory path %.64s... is longer than %zu characters",
                   dir, sizeof path - 1);
  struct stat sb;
  while (stat(path, &sb) != 0) {
    char *slash = strrchr(path, '/');
    while (slash && slash > path && slash[1] == '\0') { /* trailing slashes */
      *slash = '\0';
      slash = strrchr(path, '/');
    }
    if (!slash) {
      snprintf(path, sizeof path, ".");
      break;
    }
    if (slash == path) {
      path[1] = '\0'; /* the root */
      break;
    }
    *slash = '\0';
  }
  struct statvfs vfs;
  if (statvfs(path, &vfs) != 0) {
    int err = errno;
    return hs_fail(hs_status_from_errno(err), err, "asking how much space %s has: %s", path,
                   strerror(err));
  }
  uint64_t avail = (uint64_t)vfs.f_bavail * (uint64_t)vfs.f_frsize;
  if (need <= avail && avail - need >= BENCH_SPACE_SPARE) return HS_OK;
  char n[32], f[32];
  return hs_fail(HS_ERR_NOSPACE, ENOSPC, "needs %s in %s for %s, %s free",
                 bench_format_bytes(need, n, sizeof n), dir, what,
                 bench_format_bytes(avail, f, sizeof f));
}

hs_status bench_check_memory(uint64_t need, const char *what) {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return HS_OK; /* cannot tell: let the allocation decide */
  uint64_t phys = (uint64_t)pages * (uint64_t)page;
  if (need <= phys / 2) return HS_OK;
  char n[32], p[32];
  return hs_fail(HS_ERR_NOMEM, ENOMEM,
                 "needs %s of memory for %s, more than half of the %s of physical memory",
                 bench_format_bytes(need, n, sizeof n), what,
                 bench_format_bytes(phys, p, sizeof p));
}

static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9E3779B97F4A7C15u);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
  return z ^ (z >> 31);
}

void bench_rng_seed(bench_rng *r, uint64_t seed, uint64_t stream) {
  /* Mix the stream in through its own splitmix step so that (seed, 1) and
   * (seed + 1, 0) do not start from the same state. */
  uint64_t x = seed;
  uint64_t y = stream;
  x ^= splitmix64(&y);
  for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&x);
  /* xoshiro's only bad state is all zeros; splitmix64 cannot produce four
   * zeros in a row, but say so rather than rely on it silently. */
  if (!(r->s[0] | r->s[1] | r->s[2] | r->s[3])) r->s[0] = 1;
}

static inline uint64_t rotl(uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}

uint64_t bench_rng_next(bench_rng *r) {
  uint64_t *s = r->s;
  uint64_t result = rotl(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

uint32_t bench_rng_below(bench_rng *r, uint32_t n) {
  return (uint32_t)(((bench_rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

double bench_rng_double(bench_rng *r) {
  return (double)(bench_rng_next(r) >> 11) * 0x1.0p-53;
}

hs_status bench_base_dir(const char *dir_flag, const char *tag, char *tmp, size_t len,
                         const char **base) {
  if (dir_flag) {
    hs_status st = make_dirs(dir_flag, 0700, "the directory");
    if (st != HS_OK) return st;
    *base = dir_flag;
    return HS_OK;
  }
  hs_status st = bench_tempdir_make(tag, tmp, len);
  if (st == HS_OK) *base = tmp;
  return st;
}

hs_status bench_tempdir_make(const char *tag, char *buf, size_t len) {
  const char *tmp = bench_tempdir_parent();
  int n = snprintf(buf, len, "%s/hotset-%s-XXXXXX", tmp, tag);
  if (n < 0 || (size_t)n >= len)
    return hs_fail(HS_ERR_INVALID, 0, "temporary directory name under %s is too long", tmp);
  if (!mkdtemp(buf)) {
    int err = errno;
    return hs_fail(hs_status_from_errno(err), err, "creating a directory %s: %s", buf,
                   strerror(err));
  }
  return HS_OK;
}

/* nftw offers no context pointer; the first failure is kept here. The
 * removal runs on one thread at the end of a command, so a static is fine. */
static int remove_errno;
static char remove_failed_path[512];

static int remove_cb(const char *path, const struct stat *sb, int type, struct FTW *ftw) {
  (void)sb;
  (void)type;
  (void)ftw;
  if (remove(path) != 0 && remove_errno == 0) {
    remove_errno = errno;
    snprintf(remove_failed_path, sizeof remove_failed_path, "%s", path);
  }
  return 0; /* go on: remove as much as we can */
}

hs_status bench_tempdir_remove(const char *dir) {
  remove_errno = 0;
  if (nftw(dir, remove_cb, 16, FTW_DEPTH | FTW_PHYS) != 0) {
    int err = errno;
    return hs_fail(hs_status_from_errno(err), err, "removing %s: %s", dir, strerror(err));
  }
  if (remove_errno)
    return hs_fail(hs_status_from_errno(remove_errno), remove_errno, "removing %s: %s",
                   remove_failed_path, strerror(remove_errno));
  return HS_OK;
}

/* Little-endian on disk regardless of the host, so a data directory
 * means the same thing everywhere. */
static uint32_t get_u32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void set_u32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}

uint64_t bench_page_get_u64(const void *page, size_t off) {
  const unsigned char *p = (const unsigned char *)page + off;
  return (uint64_t)get_u32(p) | (uint64_t)get_u32(p + 4) << 32;
}

void bench_page_set_u64(void *page, size_t off, uint64_t v) {
  unsigned char *p = (unsigned char *)page + off;
  set_u32(p, (uint32_t)v);
  set_u32(p + 4, (uint32_t)(v >> 32));
}

void bench_page_stamp(void *page, hs_relid rel, hs_blockno block) {
  set_u32((unsigned char *)page + BENCH_PAGE_OFF_BLOCK, block);
  set_u32((unsigned char *)page + BENCH_PAGE_OFF_REL, rel);
}

bool bench_page_check(const void *page, hs_relid rel, hs_blockno block) {
  const unsigned char *p = page;
  return get_u32(p + BENCH_PAGE_OFF_BLOCK) == block && get_u32(p + BENCH_PAGE_OFF_REL) == rel;
}

hs_blockno bench_page_block(const void *page) {
  return get_u32((const unsigned char *)page + BENCH_PAGE_OFF_BLOCK);
}

hs_status bench_dir_page_size(const char *dir, uint64_t *page_size) {
  hs_control c;
  hs_status st = dir ? hs_control_read(dir, &c) : HS_ERR_NOENT;
  if (st == HS_ERR_NOENT) {
    if (!*page_size) *page_size = HS_PAGE_SIZE_DEFAULT;
    return HS_OK;
  }
  if (st != HS_OK) return st;
  if (*page_size && *page_size != c.page_size)
    return hs_fail(HS_ERR_INVALID, 0,
                   "%s holds %u-byte pages (its control file), not %" PRIu64
                   ": leave --page-size out, or give another --dir",
                   dir, c.page_size, *page_size);
  *page_size = c.page_size;
  return HS_OK;
}

hs_status bench_log_open_fresh(const char *dir, char *logdir, size_t len, hs_wal **out) {
  snprintf(logdir, len, "%s/wal", dir);
  bench_tempdir_remove(logdir);
  /* A new log starts a new history: the data directory's control file,
   * which names the old log's checkpoint, goes with it (the relation files
   * stay, and the pool writes a new control file for them). */
  char control[4200];
  snprintf(control, sizeof control, "%s/" HS_CONTROL_FILE, dir);
  if (unlink(control) != 0 && errno != ENOENT)
    return hs_fail(HS_ERR_IO, errno, "%s: cannot remove the old control file: %s", control,
                   strerror(errno));
  hs_wal_options wo;
  hs_wal_options_init(&wo);
  wo.dir = logdir;
  return hs_wal_open(&wo, out);
}

hs_status bench_log_change(hs_wal *log, hs_relid rel, hs_blockno blk, hs_lsn *lsn) {
  /* 32-byte header + one 12-byte page reference + the payload. */
  unsigned char payload[BENCH_LOG_RECORD - 44] = {0};
  memcpy(payload, &blk, sizeof blk);
  hs_wal_page ref = {rel, HS_FORK_MAIN, blk};
  hs_wal_record rec = {.rmgr = HS_WAL_RMGR_FIRST_USER,
                       .npages = 1,
                       .pages = &ref,
                       .data = payload,
                       .len = sizeof payload};
  return hs_wal_insert(log, &rec, lsn);
}

hs_status bench_make_relation(hs_smgr *smgr, hs_relid rel, hs_blockno npages) {
  return bench_make_relation_fork(smgr, rel, HS_FORK_MAIN, npages);
}

hs_status bench_make_relation_fork(hs_smgr *smgr, hs_relid rel, hs_fork fork, hs_blockno npages) {
  bool exists = false;
  hs_status st = hs_smgr_exists(smgr, rel, fork, &exists);
  if (st != HS_OK) return st;
  if (exists) {
    st = hs_smgr_truncate(smgr, rel, fork, 0);
  } else {
    st = hs_smgr_create(smgr, rel, fork);
  }
  if (st != HS_OK) return st;

  uint32_t page_size = hs_smgr_page_size(smgr);
  /* Aligned, so that a direct storage manager can write it too. */
  void *page = NULL;
  if (posix_memalign(&page, 4096, page_size) != 0)
    return hs_fail(HS_ERR_NOMEM, ENOMEM, "allocating a %u-byte page", page_size);
  memset(page, 0, page_size);
  for (hs_blockno b = 0; b < npages; b++) {
    if (b % 256 == 0 && bench_interrupted()) {
      st = hs_fail(HS_ERR_IO, EINTR, "relation %u: interrupted at block %u of %u", rel, b, npages);
      break;
    }
    hs_blockno got;
    bench_page_stamp(page, rel, b);
    st = hs_smgr_extend(smgr, rel, fork, page, &got);
    if (st != HS_OK) break;
    if (got != b) {
      /* Someone else is extending the same relation: the stamps would lie. */
      st = hs_fail(HS_ERR_CORRUPT, 0, "relation %u: extending to block %u returned block %u", rel,
                   b, got);
      break;
    }
  }
  free(page);
  return st;
}

/* ---- raw read rate ---- */

hs_status bench_raw_read_rate(const char *path, uint32_t io, uint32_t buf_bytes, double seconds,
                              bool direct, bench_raw_rate *rate) {
  if (io == 0 || io > buf_bytes)
    return hs_fail(HS_ERR_INVALID, 0, "reads of %u bytes into a %u-byte buffer", io, buf_bytes);
  int fd = open(path, O_RDONLY | O_CLOEXEC | (direct ? O_DIRECT : 0));
  if (fd < 0) {
    int err = errno;
    return hs_fail(hs_status_from_errno(err), err, "opening %s: %s", path, strerror(err));
  }
  void *buf = NULL;
  if (posix_memalign(&buf, 4096, buf_bytes) != 0) {
    close(fd);
    return hs_fail(HS_ERR_NOMEM, ENOMEM, "allocating a %u-byte read buffer", buf_bytes);
  }
  hs_status st = HS_OK;
  uint64_t bytes = 0, t0 = 0, cpu0 = 0, limit_ns = (uint64_t)(seconds * 1e9);
  bool timed_out = false;
  for (int pass = direct ? 1 : 0; st == HS_OK && !timed_out; pass++) {
    if (pass == 1) {
      t0 = bench_now_ns();
      cpu0 = bench_thread_cpu_ns();
    }
    if (pass > 1 && bench_now_ns() - t0 >= limit_ns) break;
    if (bench_interrupted()) {
      st = hs_fail(HS_ERR_IO, EINTR, "reading %s: interrupted", path);
      break;
    }
    off_t off = 0;
    for (;;) {
      size_t at = (size_t)(off % buf_bytes) / io * io;
      ssize_t got = pread(fd, (char *)buf + at, io, off);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) {
        int err = errno;
        st = hs_fail(hs_status_from_errno(err), err, "reading %s: %s", path, strerror(err));
        break;
      }
      if (got == 0) break;
      off += got;
      if (pass > 0) bytes += (uint64_t)got;
      /* Direct passes are slow: stop inside one (every 64 reads). */
      if (direct && (off / io) % 64 == 0 && bench_now_ns() - t0 >= limit_ns) {
        timed_out = true;
        break;
      }
    }
  }
  uint64_t ns = bench_now_ns() - t0;
  uint64_t cpu = bench_thread_cpu_ns() - cpu0;
  free(buf);
  close(fd);
  if (st == HS_OK) {
    rate->mb_per_sec = ns ? (double)bytes / 1e6 / ((double)ns / 1e9) : 0;
    rate->mb_per_cpu_sec = cpu ? (double)bytes / 1e6 / ((double)cpu / 1e9) : 0;
  }
  return st;
}

/* ---- direct I/O ---- */

uint32_t bench_dio_align(int fd) {
  dio_info dio;
  if (!dio_alignment(fd, &dio)) return 4096;
  return dio.offset_align > dio.mem_align ? dio.offset_align : dio.mem_align;
}
