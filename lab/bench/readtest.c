/*
 * bench/readtest.c — `hotset bench readtest`: --io-sized reads of a file cycling
 * through a working-set buffer of --size bytes (piece i lands at offset
 * (i * io) % size), for each size and each way of reading.
 *
 * The 2007 experiment behind PostgreSQL's ring buffers: a scan whose buffers
 * fit in the CPU's L2 cache ran at about twice the bandwidth of one spread
 * over the whole pool, because copying a page into a buffer that is already
 * in cache costs no memory traffic for the destination. Sherry's Solaris
 * `readtest` measured it (16 KB: 46 ms a pass, 128 MB: 118 ms) and showed
 * that non-temporal copies made the big working set as fast as the small
 * one. This rebuilds that test for the machine it runs on: the cache sizes
 * from sysfs are printed above the table, so the knees can be read off.
 *
 * Modes: `read` (buffered pread: the kernel's copy from the page cache),
 * `direct` (O_DIRECT pread: the device's DMA into the working set), `mmap`
 * (memcpy from a mapping of the file), `nt` (pread into a small bounce
 * buffer, then SSE2 non-temporal stores into the working set). A mode the
 * file system or the CPU cannot do says so in one line and is skipped; the
 * others still run.
 *
 * --huge-pages on puts the working set on 2 MiB pages (core/big_alloc.c:
 * madvise(MADV_HUGEPAGE) on an aligned region, or reserved huge pages), off
 * keeps it on 4 KiB ones (MADV_NOHUGEPAGE). Sherry put most of the 2007 gap
 * down to TLB misses; with 2 MiB pages a 256 MiB working set needs 128
 * translations instead of 65,536, so what is left of the gap is the data
 * caches' share. Each cell says how much of its working set the kernel
 * really put on huge pages (/proc/self/smaps), since asking is not getting.
 */
#include "bench/readtest.h"

#include "bench/raw_read.h"
#include "common/args.h"
#include "common/clock.h"
#include "common/flags.h"
#include "common/gnuplot.h"
#include "common/human_size.h"
#include "common/interrupt.h"
#include "common/json.h"
#include "common/resources.h"
#include "common/scratch.h"
#include "core/big_alloc.h"
#include "core/error.h"
#include "storage/direct_io.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <emmintrin.h>
#define READTEST_HAVE_SSE2 1
#endif

#define PROG      "hotset bench readtest"
#define MAX_SIZES ARGS_LIST_MAX
#define NMODES    4
#define MAX_CACHE 8
/* In the automatic mode each cell runs whole passes over the file until
 * this much time has gone: long enough that a rate moves by a few percent
 * from run to run, short enough for 15 sizes × 4 modes in a minute. */
#define TARGET_NS 300000000ull
#define HUGE_PAGE (2ull << 20) /* big_alloc's unit: a region of one or more gets huge pages */

enum { MODE_READ, MODE_DIRECT, MODE_MMAP, MODE_NT };
static const char *const mode_names[NMODES] = {"read", "direct", "mmap", "nt"};
enum { HUGE_OFF, HUGE_ON, NHUGE };
static const char *const huge_names[NHUGE] = {"off", "on"};

static const args_command command = {
    .cmd = {.prog = PROG},
    .synopsis = "[--size LIST] [--io SIZE] [--iterations N] [--mode LIST] [--huge-pages LIST] "
                "[--file PATH | --dir DIR] [--json] [--plot FILE]",
    .about = "Reads a file in --io pieces into a working set of --size bytes, cycling through\n"
             "it (piece i lands at offset (i * io) % size), and reports ns per read and MB/s\n"
             "per size and mode: a working set that fits a CPU cache is cheaper to copy into.\n"
             "The file is max(--size) bytes, made in a temporary directory (or --dir) and\n"
             "removed after, unless --file names one.\n",
    .notes = ARGS_SIZE_NOTE
    "Modes: read (buffered pread, the file in the page cache), direct (O_DIRECT pread\n"
    "into the working set), mmap (memcpy from a mapping), nt (pread into a bounce\n"
    "buffer, then SSE2 non-temporal stores into the working set). Every cell first\n"
    "makes one untimed pass (it brings the file into the page cache for read, mmap\n"
    "and nt; direct reads only the working set's worth). Without --iterations each\n"
    "cell runs whole passes over the file for at least 0.3 s.\n"
    "Each cell's working set is the start of a fresh mapping of whole 2 MiB units:\n"
    "--huge-pages on asks for huge pages (madvise(MADV_HUGEPAGE), or reserved ones),\n"
    "off for small pages (MADV_NOHUGEPAGE); how much of the working set the kernel\n"
    "put on huge pages is read from /proc/self/smaps and shown per cell.\n",
};
static const args_cmd *const cmd = &command.cmd;

typedef struct readtest {
  uint64_t sizes[MAX_SIZES];
  int nsizes;
  bool mode_on[NMODES];
  bool huge_on[NHUGE];
  uint64_t io, iterations;
  args_uint_list size_list;
  const char *mode_flag, *huge_flag, *file_flag, *dir_flag, *plot_file;
  bool json;
  /* The CPU's data and unified caches, from sysfs. */
  int ncaches;
  char cache_name[MAX_CACHE][8];
  uint64_t cache_bytes[MAX_CACHE];
} readtest;

static void parse_sizes(readtest *t) {
  if (t->size_list.n == 0) {
    for (uint64_t s = 16u << 10; s <= 256u << 20; s *= 2) t->sizes[t->nsizes++] = s;
    return;
  }
  for (uint32_t i = 0; i < t->size_list.n; i++) t->sizes[t->nsizes++] = t->size_list.v[i];
}

/* A comma-separated list of names from `names` (n of them) into on[];
 * `want` lists them for the message. */
static void parse_names(const char *flag, const char *value, const char *const *names, int n,
                        bool *on, const char *want) {
  for (const char *p = value;;) {
    size_t len = strcspn(p, ",");
    int k = 0;
    while (k < n && !(strlen(names[k]) == len && strncmp(p, names[k], len) == 0)) k++;
    if (k == n) args_usage_error(cmd, "--%s: unknown value \"%.*s\" (%s)", flag, (int)len, p, want);
    on[k] = true;
    if (p[len] == '\0') break;
    p += len + 1;
  }
}

static void parse_flags(readtest *t, int argc, char **argv) {
  const args_opt opts[] = {
      {.name = "size",
       .kind = ARGS_SIZE_LIST,
       .dest = &t->size_list,
       .arg = "LIST",
       .help = "working-set sizes, comma-separated, each a multiple of --io (default 16KiB, "
               "32KiB, ... 256MiB)"},
      {.name = "io",
       .kind = ARGS_SIZE,
       .dest = &t->io,
       .min = 512,
       .max = 1 << 20,
       .def = "8KiB",
       .help = "bytes per read, from 512B to 1MiB"},
      {.name = "iterations",
       .kind = ARGS_UINT,
       .dest = &t->iterations,
       .min = 1,
       .max = 1000000,
       .help = "timed passes over the file per cell (default: as many as fill 0.3 s)"},
      {.name = "mode",
       .kind = ARGS_STRING,
       .dest = &t->mode_flag,
       .arg = "LIST",
       .def = "read,direct,mmap,nt",
       .help = "ways of reading, comma-separated"},
      {.name = "huge-pages",
       .kind = ARGS_STRING,
       .dest = &t->huge_flag,
       .arg = "LIST",
       .def = "off",
       .help = "the working set on small pages (off), huge pages (on), or both (off,on)"},
      {.name = "file",
       .kind = ARGS_PATH,
       .dest = &t->file_flag,
       .arg = "FILE",
       .help = "read this file (at least max(--size) bytes, kept) instead of making one"},
      BENCH_OPT_DIR(&t->dir_flag),
      {.name = "json", .kind = ARGS_FLAG, .dest = &t->json, .help = "one JSON object per cell"},
      {.name = "plot",
       .kind = ARGS_PATH,
       .dest = &t->plot_file,
       .arg = "FILE",
       .help = "draw MB/s against the size with gnuplot (.png or .svg)"},
  };
  args_parse(cmd, opts, sizeof opts / sizeof opts[0], argc, argv, 0);
  parse_sizes(t);
  parse_names("mode", t->mode_flag, mode_names, NMODES, t->mode_on, "read, direct, mmap or nt");
  parse_names("huge-pages", t->huge_flag, huge_names, NHUGE, t->huge_on, "off or on");
  for (int i = 0; i < t->nsizes; i++)
    if (t->sizes[i] < t->io || t->sizes[i] % t->io != 0) {
      char a[32], b[32];
      args_usage_error(cmd, "--size %s is not a whole multiple of --io %s",
                       human_size(t->sizes[i], a, sizeof a), human_size(t->io, b, sizeof b));
    }
  if (t->file_flag && t->dir_flag) args_usage_error(cmd, "--file and --dir exclude each other");
  if (t->plot_file) {
    const char *dot = strrchr(t->plot_file, '.');
    if (!dot || (strcmp(dot, ".png") != 0 && strcmp(dot, ".svg") != 0))
      args_usage_error(cmd, "--plot: \"%s\" must end in .png or .svg", t->plot_file);
  }
}

/* ---- the machine ---- */

/* Reads one short line of a sysfs file, newline removed. */
static bool read_line(const char *path, char *buf, size_t len) {
  FILE *f = fopen(path, "r");
  if (!f) return false;
  bool ok = fgets(buf, (int)len, f) != NULL;
  fclose(f);
  if (ok) buf[strcspn(buf, "\n")] = '\0';
  return ok;
}

/* cpu0's data and unified caches (instruction caches hold no pages). */
static void read_caches(readtest *t) {
  for (int i = 0; i < 16 && t->ncaches < MAX_CACHE; i++) {
    char path[96], level[16], type[32], size[32];
    const char *dir = "/sys/devices/system/cpu/cpu0/cache";
    snprintf(path, sizeof path, "%s/index%d/level", dir, i);
    if (!read_line(path, level, sizeof level)) break;
    snprintf(path, sizeof path, "%s/index%d/type", dir, i);
    if (!read_line(path, type, sizeof type) || strcmp(type, "Instruction") == 0) continue;
    snprintf(path, sizeof path, "%s/index%d/size", dir, i);
    if (!read_line(path, size, sizeof size)) continue;
    char *end;
    uint64_t v = strtoull(size, &end, 10);
    if (*end == 'K')
      v <<= 10;
    else if (*end == 'M')
      v <<= 20;
    if (v == 0) continue;
    snprintf(t->cache_name[t->ncaches], sizeof t->cache_name[0], "L%.2s%s", level,
             strcmp(type, "Data") == 0 ? "d" : "");
    t->cache_bytes[t->ncaches++] = v;
  }
}

/* ---- the data file ---- */

/* Piece p of a file we make starts with p, so the check after each cell
 * can tell that every read landed where it should. */
static hs_status make_file(const char *path, uint64_t bytes, uint64_t io) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    int err = errno;
    return hs_fail(hs_status_from_errno(err), err, "creating %s: %s", path, strerror(err));
  }
  size_t chunk = 1u << 20;
  unsigned char *buf = malloc(chunk);
  hs_status st = buf ? HS_OK : hs_fail(HS_ERR_NOMEM, ENOMEM, "allocating a write buffer");
  for (uint64_t off = 0; st == HS_OK && off < bytes; off += chunk) {
    size_t n = bytes - off < chunk ? (size_t)(bytes - off) : chunk;
    for (size_t i = 0; i < n; i++) buf[i] = (unsigned char)((off + i) * 131 + 7);
    for (size_t i = 0; i < n; i += io) {
      uint64_t piece = (off + i) / io;
      memcpy(buf + i, &piece, sizeof piece);
    }
    if (bench_interrupted())
      st = hs_fail(HS_ERR_IO, EINTR, "writing %s: interrupted", path);
    else if (pwrite(fd, buf, n, (off_t)off) != (ssize_t)n) {
      int err = errno ? errno : EIO;
      st = hs_fail(hs_status_from_errno(err), err, "writing %s: %s", path, strerror(err));
    }
  }
  /* On disk, so O_DIRECT reads the device rather than waiting for writeback. */
  if (st == HS_OK && fsync(fd) != 0) {
    int err = errno;
    st = hs_fail(hs_status_from_errno(err), err, "syncing %s: %s", path, strerror(err));
  }
  free(buf);
  close(fd);
  return st;
}

/* ---- one cell ---- */

typedef struct cell_io {
  int fd;                   /* buffered, or O_DIRECT in direct mode */
  const unsigned char *map; /* mmap mode */
  unsigned char *bounce;    /* nt mode */
  uint64_t file_bytes, io;
} cell_io;

#ifdef READTEST_HAVE_SSE2
/* Copies n bytes (a multiple of 64, both 16-byte aligned) with stores that
 * bypass the cache: the working set is written without being read in. */
__attribute__((target("sse2"))) static void copy_nt(void *dst, const void *src, size_t n) {
  __m128i *d = dst;
  const __m128i *s = src;
  for (size_t i = 0; i < n / 16; i += 4) {
    __m128i a = _mm_load_si128(s + i), b = _mm_load_si128(s + i + 1);
    __m128i c = _mm_load_si128(s + i + 2), e = _mm_load_si128(s + i + 3);
    _mm_stream_si128(d + i, a);
    _mm_stream_si128(d + i + 1, b);
    _mm_stream_si128(d + i + 2, c);
    _mm_stream_si128(d + i + 3, e);
  }
  _mm_sfence();
}
#endif

/* pread of all n bytes; -1 with errno on an error or a short file. */
static int pread_full(int fd, void *buf, size_t n, off_t off) {
  for (;;) {
    ssize_t got = pread(fd, buf, n, off);
    if (got < 0 && errno == EINTR) continue;
    if (got == (ssize_t)n) return 0;
    if (got >= 0) errno = EIO; /* the file shrank under us */
    return -1;
  }
}

/* One pass over the first `bytes` of the file into `ws` (size bytes). */
static int one_pass(int mode, const cell_io *c, unsigned char *ws, uint64_t size, uint64_t bytes) {
  uint64_t slot = 0;
  for (uint64_t off = 0; off + c->io <= bytes; off += c->io) {
    unsigned char *dst = ws + slot;
    switch (mode) {
    case MODE_READ:
    case MODE_DIRECT:
      if (pread_full(c->fd, dst, c->io, (off_t)off) != 0) return -1;
      break;
    case MODE_MMAP:
      memcpy(dst, c->map + off, c->io);
      break;
    default:
      if (pread_full(c->fd, c->bounce, c->io, (off_t)off) != 0) return -1;
#ifdef READTEST_HAVE_SSE2
      copy_nt(dst, c->bounce, c->io);
#endif
      break;
    }
    slot += c->io;
    if (slot == size) slot = 0;
  }
  return 0;
}

/* Whether slot k of the working set holds the last piece that was read into
 * it (pieces start with their number: see make_file). */
static bool ws_check(const unsigned char *ws, uint64_t size, uint64_t io, uint64_t npieces) {
  uint64_t slots = size / io;
  for (uint64_t k = 0; k < slots && k < npieces; k++) {
    uint64_t want = k + (npieces - 1 - k) / slots * slots, got;
    memcpy(&got, ws + k * io, sizeof got);
    if (got != want) return false;
  }
  return true;
}

typedef struct cell_result {
  uint64_t passes, reads, ns;
} cell_result;

/* 0 measured, -1 failed (hs_fail set). */
static int run_cell(const readtest *t, int mode, const cell_io *c, unsigned char *ws, uint64_t size,
                    const char *path, cell_result *r) {
  /* Untimed: the file into the page cache and page tables, the working set
   * into the CPU's caches. O_DIRECT reads the device every time, so direct
   * mode only needs the working set touched. */
  uint64_t warm = mode == MODE_DIRECT ? size : c->file_bytes;
  if (one_pass(mode, c, ws, size, warm) != 0) goto io_error;
  uint64_t t0 = bench_now_ns(), passes = 0, now = t0;
  do {
    if (bench_interrupted()) {
      hs_fail(HS_ERR_IO, EINTR, "reading %s: interrupted", path);
      return -1;
    }
    if (one_pass(mode, c, ws, size, c->file_bytes) != 0) goto io_error;
    passes++;
    now = bench_now_ns();
  } while (t->iterations ? passes < t->iterations : now - t0 < TARGET_NS);
  r->passes = passes;
  r->reads = passes * (c->file_bytes / c->io);
  r->ns = now - t0;
  if (!t->file_flag && !ws_check(ws, size, c->io, c->file_bytes / c->io)) {
    hs_fail(HS_ERR_CORRUPT, 0, "%s: a read did not land in its slot of the working set",
            mode_names[mode]);
    return -1;
  }
  return 0;
io_error:;
  int err = errno;
  hs_fail(hs_status_from_errno(err), err, "%s: reading %s: %s", mode_names[mode], path,
          strerror(err));
  return -1;
}

/* ---- the run ---- */

/* Per size, huge-pages setting and mode. huge_bytes: of the working set on
 * huge pages, UINT64_MAX when smaps could not say. */
typedef struct results {
  bool measured[MAX_SIZES][NHUGE][NMODES];
  double mbps[MAX_SIZES][NHUGE][NMODES], ns_per_read[MAX_SIZES][NHUGE][NMODES];
  uint64_t huge_bytes[MAX_SIZES][NHUGE][NMODES];
  hs_huge_pages_used got[NHUGE]; /* what big_alloc said, for the table's titles */
} results;

/* Bytes of [p, p + len) the kernel holds on huge pages: AnonHugePages
 * (transparent) and the Hugetlb lines (reserved) of the mappings in
 * /proc/self/smaps that overlap it. A mapping the kernel merged with a
 * neighbour counts whole, hence the cap at len. UINT64_MAX when smaps
 * cannot be read. */
static uint64_t huge_bytes_of(const void *p, size_t len) {
  FILE *f = fopen("/proc/self/smaps", "r");
  if (!f) return UINT64_MAX;
  uintptr_t lo = (uintptr_t)p, hi = lo + len;
  uint64_t kib = 0;
  bool in = false;
  char line[512];
  while (fgets(line, sizeof line, f)) {
    uintptr_t start, end;
    unsigned long long v;
    /* A mapping's first line is "start-end perms ..." in hex; its fields
     * follow, one "Name:   N kB" a line. */
    if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " ", &start, &end) == 2)
      in = start < hi && end > lo;
    else if (in && (sscanf(line, "AnonHugePages: %llu kB", &v) == 1 ||
                    sscanf(line, "Private_Hugetlb: %llu kB", &v) == 1 ||
                    sscanf(line, "Shared_Hugetlb: %llu kB", &v) == 1))
      kib += v;
  }
  fclose(f);
  return kib * 1024 < len ? kib * 1024 : len;
}

/* Opens what `mode` reads through. 0 ready, 1 skipped (one line printed),
 * -1 failed (hs_fail set). */
static int open_mode(const readtest *t, int mode, const char *path, cell_io *c) {
  c->fd = -1;
  c->map = NULL;
  c->bounce = NULL;
  if (mode == MODE_NT) {
#ifdef READTEST_HAVE_SSE2
    __builtin_cpu_init();
    bool sse2 = __builtin_cpu_supports("sse2");
#else
    bool sse2 = false;
#endif
    if (!sse2) {
      fprintf(stderr, PROG ": nt: this CPU has no SSE2 non-temporal stores; mode skipped\n");
      return 1;
    }
    if (posix_memalign((void **)&c->bounce, 64, t->io) != 0)
      return hs_fail(HS_ERR_NOMEM, ENOMEM, "allocating a bounce buffer"), -1;
  }
  c->fd = open(path, O_RDONLY | O_CLOEXEC | (mode == MODE_DIRECT ? O_DIRECT : 0));
  if (c->fd < 0) {
    int err = errno;
    char fsbuf[48];
    if (mode == MODE_DIRECT && err == EINVAL) {
      dio_fs_name(path, fsbuf, sizeof fsbuf);
      fprintf(stderr, PROG ": direct: %s refuses O_DIRECT on %s (%s); mode skipped\n", fsbuf, path,
              strerror(err));
      return 1;
    }
    free(c->bounce);
    return hs_fail(hs_status_from_errno(err), err, "opening %s: %s", path, strerror(err)), -1;
  }
  if (mode == MODE_DIRECT) {
    uint32_t align = bench_dio_align(c->fd);
    if (t->io % align != 0) {
      fprintf(stderr,
              PROG ": direct: O_DIRECT on %s needs reads of a multiple of %u bytes; "
                   "mode skipped\n",
              path, align);
      close(c->fd);
      return 1;
    }
  }
  if (mode == MODE_MMAP) {
    void *m = mmap(NULL, c->file_bytes, PROT_READ, MAP_PRIVATE, c->fd, 0);
    if (m == MAP_FAILED) {
      int err = errno;
      close(c->fd);
      return hs_fail(hs_status_from_errno(err), err, "mapping %s: %s", path, strerror(err)), -1;
    }
    c->map = m;
  }
  return 0;
}

static void close_mode(cell_io *c) {
  if (c->map) munmap((void *)c->map, c->file_bytes);
  if (c->fd >= 0) close(c->fd);
  free(c->bounce);
}

static void print_caches(const readtest *t) {
  printf("CPU caches (cpu0):");
  for (int i = 0; i < t->ncaches; i++) {
    char b[32];
    printf("%s %s %s", i ? "," : "", t->cache_name[i], human_size(t->cache_bytes[i], b, sizeof b));
  }
  printf(t->ncaches ? "\n" : " not listed in sysfs\n");
}

/* One table row's cells of one measure (MB/s or ns per read), a column per
 * mode in use. */
static void print_cells(const readtest *t, const results *res, int s, int h,
                        const double (*v)[NHUGE][NMODES], int width) {
  for (int m = 0; m < NMODES; m++) {
    if (!t->mode_on[m]) continue;
    if (res->measured[s][h][m])
      printf(" %*.0f", width, v[s][h][m]);
    else
      printf(" %*s", width, "-");
  }
}

/* The share of size s's working set on huge pages: the least any mode's
 * cell got ("?" when smaps could not say, "-" when nothing ran). */
static void print_huge_share(const readtest *t, const results *res, int s, int h) {
  double least = 2;
  bool unknown = false;
  for (int m = 0; m < NMODES; m++) {
    if (!res->measured[s][h][m]) continue;
    if (res->huge_bytes[s][h][m] == UINT64_MAX) {
      unknown = true;
      continue;
    }
    double share = (double)res->huge_bytes[s][h][m] / (double)t->sizes[s];
    if (share < least) least = share;
  }
  if (least <= 1)
    printf(" %6.0f%%", 100 * least);
  else
    printf(" %7s", unknown ? "?" : "-");
}

/* The table of one huge-pages setting; with show_huge (--huge-pages names
 * on) a title line above it and a column of the working set's share on huge
 * pages. */
static void print_table(const readtest *t, const results *res, int h, bool show_huge) {
  char b[32];
  if (show_huge)
    printf("huge pages %s (%s):\n", huge_names[h],
           h == HUGE_OFF ? "MADV_NOHUGEPAGE" : bench_huge_used_name(res->got[h]));
  printf("%-10s", "size");
  for (int m = 0; m < NMODES; m++)
    if (t->mode_on[m]) printf(" %7s MB/s", mode_names[m]);
  for (int m = 0; m < NMODES; m++)
    if (t->mode_on[m]) printf(" %7s ns/read", mode_names[m]);
  if (show_huge) printf(" %7s", "on huge");
  putchar('\n');
  for (int s = 0; s < t->nsizes; s++) {
    printf("%-10s", human_size(t->sizes[s], b, sizeof b));
    print_cells(t, res, s, h, res->mbps, 12);
    print_cells(t, res, s, h, res->ns_per_read, 15);
    if (show_huge) print_huge_share(t, res, s, h);
    putchar('\n');
  }
}

static void print_json(const readtest *t, const results *res, int s, int h, int m,
                       const cell_result *r) {
  json_out j;
  json_begin(&j, stdout);
  json_u64(&j, "size", t->sizes[s]);
  json_str(&j, "mode", mode_names[m]);
  json_u64(&j, "io", t->io);
  json_u64(&j, "iterations", r->passes);
  json_u64(&j, "reads", r->reads);
  json_double(&j, "ns_per_read", "%.1f", res->ns_per_read[s][h][m]);
  json_double(&j, "mb_per_sec", "%.1f", res->mbps[s][h][m]);
  json_str(&j, "huge_pages", huge_names[h]);
  json_str(&j, "huge_pages_used", bench_huge_used_name(res->got[h]));
  if (res->huge_bytes[s][h][m] != UINT64_MAX)
    json_u64(&j, "huge_page_bytes", res->huge_bytes[s][h][m]);
  json_end_line(&j);
}

/* One cell: mode m, size s, huge-pages setting h. 0 (measured, or huge
 * pages skipped for good after one line), 1 after an error line, -1
 * interrupted. */
static int run_one(readtest *t, int m, int s, int h, const cell_io *c, const char *path,
                   results *res) {
  /* Whole huge-page units, so that even a 16 KiB working set can sit on a
   * huge page; a fresh region per cell, so no cell inherits another's
   * pages. */
  size_t region = (size_t)((t->sizes[s] + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE);
  hs_huge_pages_used got;
  unsigned char *ws = big_alloc(region, h == HUGE_ON ? HS_HUGE_PAGES_ON : HS_HUGE_PAGES_OFF, &got);
  if (!ws && h == HUGE_ON && errno == EOPNOTSUPP) {
    fprintf(stderr, PROG ": huge pages on: this system has neither reserved nor transparent "
                         "huge pages; skipped\n");
    t->huge_on[HUGE_ON] = false; /* for every later cell */
    return 0;
  }
  if (!ws) {
    char b[32];
    fprintf(stderr, PROG ": allocating a %s working set: %s\n", human_size(region, b, sizeof b),
            strerror(errno));
    return 1;
  }
  cell_result r;
  int cell_rc = run_cell(t, m, c, ws, t->sizes[s], path, &r);
  uint64_t huge = cell_rc == 0 ? huge_bytes_of(ws, region) : 0;
  big_free(ws, region);
  if (cell_rc != 0) {
    if (bench_interrupted()) return -1;
    fprintf(stderr, PROG ": %s\n", hs_last_error());
    return 1;
  }
  res->got[h] = got;
  res->measured[s][h][m] = true;
  res->ns_per_read[s][h][m] = (double)r.ns / (double)r.reads;
  res->mbps[s][h][m] = (double)r.reads * (double)t->io / 1e6 / ((double)r.ns / 1e9);
  res->huge_bytes[s][h][m] = huge == UINT64_MAX || huge < t->sizes[s] ? huge : t->sizes[s];
  if (t->json) print_json(t, res, s, h, m, &r);
  return 0;
}

static int run(readtest *t, const char *path, uint64_t file_bytes, results *res) {
  bool show_huge = t->huge_on[HUGE_ON];
  if (!t->json) {
    char a[32], b[32];
    print_caches(t);
    printf("file %s (%s), reads of %s\n", path, human_size(file_bytes, a, sizeof a),
           human_size(t->io, b, sizeof b));
  }
  int rc = 0;
  for (int m = 0; m < NMODES && rc == 0; m++) {
    if (!t->mode_on[m]) continue;
    cell_io c = {.file_bytes = file_bytes, .io = t->io};
    int o = open_mode(t, m, path, &c);
    if (o > 0) continue;
    if (o < 0) {
      fprintf(stderr, PROG ": %s: %s\n", mode_names[m], hs_last_error());
      rc = 1;
      break;
    }
    /* A size's cells with and without huge pages back to back: this
     * machine's copy rate drifts by a fifth from one minute to the next,
     * and the pair must see the same machine. */
    for (int s = 0; s < t->nsizes && rc == 0; s++)
      for (int h = 0; h < NHUGE && rc == 0; h++)
        if (t->huge_on[h]) rc = run_one(t, m, s, h, &c, path, res);
    close_mode(&c);
  }
  if (rc == 0 && !t->json)
    for (int h = 0; h < NHUGE; h++)
      if (t->huge_on[h]) print_table(t, res, h, show_huge);
  return rc;
}

/* One curve per (mode, huge-pages setting): series h * NMODES + m. */
static void plot(const readtest *t, const results *res, int *rc) {
  static readtest_cell cells[MAX_SIZES * NHUGE * NMODES];
  static char names[NHUGE * NMODES][32];
  const char *series[NHUGE * NMODES];
  bool both = t->huge_on[HUGE_OFF] && t->huge_on[HUGE_ON];
  for (int h = 0; h < NHUGE; h++)
    for (int m = 0; m < NMODES; m++) {
      int k = h * NMODES + m;
      if (h == HUGE_ON)
        snprintf(names[k], sizeof names[k], "%s, huge pages", mode_names[m]);
      else
        snprintf(names[k], sizeof names[k], "%s%s", mode_names[m], both ? ", small pages" : "");
      series[k] = names[k];
    }
  size_t n = 0;
  for (int s = 0; s < t->nsizes; s++)
    for (int h = 0; h < NHUGE; h++)
      for (int m = 0; m < NMODES; m++)
        if (res->measured[s][h][m])
          cells[n++] = (readtest_cell){
              .size = t->sizes[s], .series = h * NMODES + m, .mb_per_sec = res->mbps[s][h][m]};
  const char *levels[MAX_CACHE];
  for (int i = 0; i < t->ncaches; i++) levels[i] = t->cache_name[i];
  if (readtest_plot(t->plot_file, cells, n, series, NHUGE * NMODES, levels, t->cache_bytes,
                    t->ncaches) != 0)
    *rc = 1;
}

int readtest_main(int argc, char **argv) {
  static readtest t;
  static results res;
  memset(&t, 0, sizeof t);
  parse_flags(&t, argc, argv);
  /* The plot is drawn after every cell has run: what would stop it (no
   * gnuplot, a directory that is not there) must show before. */
  if (t.plot_file && gnuplot_check_output(PROG, t.plot_file) != 0) return 1;
  read_caches(&t);
  uint64_t file_bytes = 0;
  for (int s = 0; s < t.nsizes; s++)
    if (t.sizes[s] > file_bytes) file_bytes = t.sizes[s];
  if (t.file_flag) {
    struct stat st;
    if (stat(t.file_flag, &st) != 0) {
      fprintf(stderr, PROG ": --file %s: %s\n", t.file_flag, strerror(errno));
      return 1;
    }
    if ((uint64_t)st.st_size < file_bytes) {
      char a[32], b[32];
      fprintf(stderr, PROG ": --file %s is %s, smaller than the largest --size %s\n", t.file_flag,
              human_size((uint64_t)st.st_size, a, sizeof a), human_size(file_bytes, b, sizeof b));
      return 1;
    }
    /* Whole pieces only: O_DIRECT reads must not run past the end. */
    file_bytes = (uint64_t)st.st_size / t.io * t.io;
    bench_signals_install();
    int rc = run(&t, t.file_flag, file_bytes, &res);
    if (rc < 0) bench_exit_interrupted(PROG);
    if (rc == 0 && t.plot_file) plot(&t, &res, &rc);
    return rc;
  }
  const char *parent = t.dir_flag ? t.dir_flag : bench_tempdir_parent();
  if (bench_check_space(parent, file_bytes, "the data file") != HS_OK) {
    fprintf(stderr, PROG ": %s\n", hs_last_error());
    return 1;
  }
  bench_signals_install();
  char tmpdir[BENCH_DIR_MAX], path[BENCH_DIR_MAX + 32];
  const char *base;
  if (bench_base_dir(t.dir_flag, "readtest", tmpdir, sizeof tmpdir, &base) != HS_OK) {
    fprintf(stderr, PROG ": making its directory: %s\n", hs_last_error());
    return 1;
  }
  snprintf(path, sizeof path, "%s/readtest.dat", base);
  int rc;
  if (make_file(path, file_bytes, t.io) != HS_OK) {
    rc = bench_interrupted() ? -1 : 1;
    if (rc > 0) fprintf(stderr, PROG ": %s\n", hs_last_error());
  } else {
    rc = run(&t, path, file_bytes, &res);
  }
  unlink(path);
  if (!t.dir_flag) bench_tempdir_remove(tmpdir);
  if (rc < 0) bench_exit_interrupted(PROG);
  if (rc == 0 && t.plot_file) plot(&t, &res, &rc);
  return rc;
}
