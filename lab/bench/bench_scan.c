/*
 * bench/bench_scan.c — `hotset bench scan`: the scan-resistance lab.
 *
 * The question PostgreSQL 8.3 answered with rings: when a big sequential
 * scan runs beside an OLTP workload, does it push the OLTP workload's hot
 * pages out of the buffer pool? Two relations are made, with real files, in
 * one data directory:
 *   hot  a small relation (default a quarter of the pool) that OLTP threads
 *        read at random, skewed 80/20: 80 % of the reads go to the first
 *        20 % of its blocks, the rest to the other 80 %, uniformly within
 *        each part (the demo's pattern: simple, and it leaves a warm tail
 *        of pages read only now and then, which is what a scan evicts first);
 *   big  a relation several times the pool (default 4x) that scanner
 *        threads read over and over, either sequentially ("seq": a scan
 *        starts where hs_syncscan_start says, reports each block, wraps
 *        around at the end, and with --ring on reads under a bulkread ring
 *        whenever hs_pool_scan_needs_ring says the relation is big enough)
 *        or in random block order ("index": what an index scan over a big
 *        table does, and no ring can help with it, as in PostgreSQL).
 *
 * OLTP clients are paced (--oltp-rate reads per second per thread), the
 * scanners run flat out. A server does much more per request than read one
 * page — parse, plan, execute, answer over the network — so its per-page
 * rate is far below what a tight loop over a resident set could do. And that
 * matters here: unpaced, one thread re-reads every hot page so often that
 * even plain LRU keeps them all however fast the scan goes, and no policy
 * would look polluted. Each read is timed (read, content lock, look at the
 * page, unlock, release) into a latency histogram; --update-ratio makes that
 * share of reads updates (exclusive lock, change, hs_buf_mark_dirty with an
 * LSN from a stand-in WAL: an atomic insert position, and a flush callback
 * that just records how far the log is "durable").
 *
 * The matrix: for each policy, a baseline with no scanner, then each scan
 * kind with each ring setting — except that an index scan never uses a ring,
 * so it runs once, labelled ring "off". Every cell opens a fresh pool with
 * its policy on the same data directory, fills it (a pool-full of the big
 * relation, then the hot relation), lets the OLTP clients run alone and
 * unpaced for --settle seconds (cells with a scan), starts the scanners,
 * waits --warmup seconds and until they have read --warmup-turns pools'
 * worth, resets the pool's statistics and the threads' counters, and
 * measures for --seconds. docs/strategies.md says why each step is there.
 *
 * Per cell: OLTP reads/s; the OLTP hit ratio (counted from hs_pool_read's
 * `hit`, hot-relation reads only); p50/p99 OLTP latency; hot_share, the
 * share of all buffers holding a hot page when the cell ends (from
 * hs_pool_dump); the scanners' MB/s (10^6 bytes of big-relation pages per
 * second) and its ratio to a raw pread rate, measured in the same run by
 * reading the big relation's file (then in the page cache) 256 KiB at a
 * time — the best one thread's reads could hope for — once at the start and
 * again around each sequential-scan cell. Sequential scans go through a read
 * stream (hotset/stream.h) on a pool with --io-workers I/O threads, so with
 * a worker the scan keeps two threads busy against the raw reads' one: each
 * cell also gives the scan's MB per CPU-second (the CPU time of the
 * scanners and the I/O workers over the measured interval: the process's
 * CPU time less the OLTP threads' and the main thread's) and its ratio to
 * the raw reads' MB per CPU-second ("per CPU"), which compares the work each
 * spends per byte whatever the number of threads.
 *
 * Every page read, by either kind of thread, is checked against its stamp
 * (common/stamped.h): a ring that handed back the wrong buffer would be caught.
 *
 * This file holds the flags, the matrix and the run; bench_scan_internal.h
 * says where the rest is.
 */
#include "bench/bench_scan.h"

#include "bench/bench_scan_internal.h"
#include "common/gnuplot.h"
#include "core/error.h"
#include "core/mkdirs.h"
#include "hotset/stream.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RAW_SECONDS      0.5  /* timed raw passes go on at least this long */
#define RAW_CELL_SECONDS 0.25 /* the same, just before and after each sequential-scan cell */
#define MAX_THREADS      64
#define SWEEP_FIRST      (64ull << 10) /* --ring-size sweep: 64 KiB, 128 KiB, ... 64 MiB */
#define SWEEP_LAST       (64ull << 20)

static const args_command command = {
    .cmd = {.prog = PROG},
    .about = "The scan-resistance lab: OLTP threads read a hot relation that fits in the pool\n"
             "while scanner threads read a relation several times the pool, for each policy,\n"
             "with and without a ring. Per cell: OLTP reads/s, hit ratio, p50/p99 latency, the\n"
             "share of the pool holding hot pages, and the scan's MB/s and MB per CPU-second\n"
             "against one thread's raw preads. The table ends with what the run showed.\n",
    .notes = ARGS_SIZE_NOTE
    "MB/s are 10^6 bytes per second. OLTP reads go 80% to the first 20% of the hot\n"
    "relation's blocks, 20% to the rest. A scan's CPU time is that of its scanner\n"
    "threads and of the pool's I/O workers (--io-workers): scan/raw holds them,\n"
    "together, against one thread's preads; \"per CPU\" compares MB per CPU-second.\n"
    "It refuses to start (exit 1) when the relations would not fit in the free space\n"
    "or the pool is over half the physical memory; on SIGINT or SIGTERM it stops and\n"
    "removes its temporary directory.\n",
};
static const args_cmd *const cmd = &command.cmd;

/* ---- flags ---------------------------------------------------------------- */

/* Calls take(b, item) for each comma-separated item of a list flag's
 * value (args_split_list: an empty item is refused, never skipped). */
static void parse_list(scan_bench *b, const char *flag, const char *value,
                       void (*take)(scan_bench *, const char *)) {
  char items[8][ARGS_ITEM_LEN];
  size_t n = args_split_list(cmd, flag, value, items, 8);
  for (size_t i = 0; i < n; i++) take(b, items[i]);
}

/* --ring: "on", "off" or both. */
static void take_ring(scan_bench *b, const char *t) {
  bool on;
  if (!args_parse_bool(t, &on)) args_usage_error(cmd, "--ring: \"%s\" is not on or off", t);
  if (on)
    b->ring_on = true;
  else
    b->ring_off = true;
}

/* --scan: "seq", "index", "vacuum", in the order given, once each. */
static void take_scan(scan_bench *b, const char *t) {
  scan_kind k;
  if (strcmp(t, "seq") == 0)
    k = SCAN_SEQ;
  else if (strcmp(t, "index") == 0)
    k = SCAN_INDEX;
  else if (strcmp(t, "vacuum") == 0)
    k = SCAN_VACUUM;
  else
    args_usage_error(cmd, "--scan: \"%s\" is not seq, index or vacuum", t);
  bool dup = false;
  for (int i = 0; i < b->nscans; i++) dup |= b->scans[i] == k;
  if (!dup) b->scans[b->nscans++] = k;
}

/* ---- --ring-size ---- */

static bool is_ring_option(const char *word) {
  return strcmp(word, "recycle-first") == 0 || strcmp(word, "own-writes") == 0;
}

static bool same_ring(const hs_strategy_options *x, const hs_strategy_options *y) {
  return x->rule == y->rule && x->bytes == y->bytes && x->workers == y->workers &&
         x->fraction == y->fraction && x->recycle_first == y->recycle_first &&
         x->own_writes == y->own_writes;
}

/* One ring of --ring-size: `spec` (hs_strategy_options_parse's form) followed by
 * its options (",own-writes" ...). */
static void add_ring(scan_bench *b, const char *spec, const char *opts) {
  if (b->nrings == MAX_RING_SPECS)
    args_usage_error(cmd, "--ring-size: more than %d rings", MAX_RING_SPECS);
  char *name = b->ring_names[b->nrings];
  if ((size_t)snprintf(name, RING_NAME_LEN, "%s%s", spec, opts) >= RING_NAME_LEN)
    args_usage_error(cmd, "--ring-size: \"%s%s\" is too long", spec, opts);
  hs_strategy_options *cfg = &b->ring_cfgs[b->nrings];
  if (hs_strategy_options_parse(name, cfg) != HS_OK)
    args_usage_error(cmd, "--ring-size: %s", hs_last_error());
  for (int i = 0; i < b->nrings; i++)
    if (same_ring(&b->ring_cfgs[i], cfg)) {
      if (strcmp(name, b->ring_names[i]) == 0)
        args_usage_error(cmd, "--ring-size: %s is in the list twice", name);
      args_usage_error(cmd, "--ring-size: \"%s\" is the same ring as \"%s\"", name,
                       b->ring_names[i]);
    }
  b->nrings++;
}

/* --ring-size: a list of ring specs. A spec's own options contain commas
 * ("fixed:1MiB,own-writes"), so an item is a spec and the option words
 * after it; any other word starts the next item. A bare size is a fixed
 * ring of that size; "sweep" is one of each size from SWEEP_FIRST to
 * SWEEP_LAST, doubling (its options apply to them all). */
static void parse_ring_sizes(scan_bench *b) {
  if (!b->ring_size_flag) {
    add_ring(b, "fixed", ""); /* the kind's default: what a NULL config gives */
    return;
  }
  char buf[1024];
  if (strlen(b->ring_size_flag) >= sizeof buf)
    args_usage_error(cmd, "--ring-size: the list is longer than %zu characters", sizeof buf - 1);
  strcpy(buf, b->ring_size_flag);
  bool sweep = false;
  for (char *p = buf; p;) {
    char *head = p;
    p = strchr(p, ',');
    if (p) *p++ = '\0';
    if (!*head) args_usage_error(cmd, "--ring-size: \"%s\" has an empty item", b->ring_size_flag);
    if (is_ring_option(head)) args_usage_error(cmd, "--ring-size: \"%s\" follows no ring", head);
    /* The option words that follow, kept with their commas. */
    char opts[128] = "";
    while (p) {
      char *next = strchr(p, ',');
      if (next) *next = '\0';
      if (!is_ring_option(p)) {
        if (next) *next = ',';
        break;
      }
      if (strlen(opts) + strlen(p) + 2 > sizeof opts)
        args_usage_error(cmd, "--ring-size: too many options after \"%s\"", head);
      strcat(opts, ",");
      strcat(opts, p);
      p = next ? next + 1 : NULL;
    }
    if (strcmp(head, "sweep") == 0) {
      sweep = true;
      for (uint64_t bytes = SWEEP_FIRST; bytes <= SWEEP_LAST; bytes *= 2) {
        char spec[32];
        snprintf(spec, sizeof spec, "fixed:%" PRIu64 "%s",
                 bytes >= (1u << 20) ? bytes >> 20 : bytes >> 10,
                 bytes >= (1u << 20) ? "MiB" : "KiB");
        add_ring(b, spec, opts);
      }
    } else if (*head >= '0' && *head <= '9') {
      char spec[RING_NAME_LEN];
      if ((size_t)snprintf(spec, sizeof spec, "fixed:%s", head) >= sizeof spec)
        args_usage_error(cmd, "--ring-size: \"%s\" is too long", head);
      add_ring(b, spec, opts);
    } else {
      add_ring(b, head, opts);
    }
  }
  b->ring_list = sweep || b->nrings > 1;
}

/* A list's fixed rings that the pool's cap (1/8 of its buffers) would cut
 * down: each would run as a copy of the largest ring that fits, so its
 * cells are skipped, with a note saying what --pool runs them. Refused when
 * no ring of the list fits. */
static void check_ring_caps(scan_bench *b) {
  bool ring_scans = false; /* index scans never use a ring */
  for (int s = 0; s < b->nscans; s++) ring_scans |= b->scans[s] != SCAN_INDEX;
  if (!b->ring_list || !b->ring_on || !ring_scans) return;
  uint64_t cap = b->nbuffers / 8 ? b->nbuffers / 8 : 1;
  uint64_t need[MAX_RING_SPECS][SCAN_VACUUM + 1] = {{0}}, least = 0;
  bool any_fits = false;
  for (int k = 0; k < b->nrings; k++)
    for (int s = 0; s < b->nscans; s++) {
      scan_kind kind = b->scans[s];
      if (kind == SCAN_INDEX || b->ring_cfgs[k].rule != HS_RING_FIXED) {
        any_fits |= kind != SCAN_INDEX;
        continue;
      }
      uint64_t bytes = b->ring_cfgs[k].bytes;
      if (!bytes)
        bytes = hs_strategy_default_bytes(kind == SCAN_VACUUM ? HS_STRATEGY_VACUUM
                                                              : HS_STRATEGY_BULKREAD);
      uint64_t n = bytes / b->page_size ? bytes / b->page_size : 1;
      if (n <= cap) {
        any_fits = true;
        continue;
      }
      need[k][kind] = n * 8 * b->page_size;
      if (!least || need[k][kind] < least) least = need[k][kind];
    }
  char pool[32], cap_s[32], want[32];
  args_format_size(b->pool_bytes, pool, sizeof pool);
  args_format_size(cap * b->page_size, cap_s, sizeof cap_s);
  if (!any_fits)
    args_usage_error(cmd,
                     "--ring-size: every ring is over the cap of %s (1/8 of --pool %s); "
                     "--pool %s or more runs the smallest",
                     cap_s, pool, args_format_size(least, want, sizeof want));
  for (int k = 0; k < b->nrings; k++)
    for (int kind = SCAN_SEQ; kind <= SCAN_VACUUM; kind++) {
      if (!need[k][kind]) continue;
      b->ring_over[k][kind] = true;
      fprintf(stderr,
              PROG ": --ring-size %s: over the ring cap of %s (1/8 of --pool %s); its %s cells "
                   "are skipped (--pool %s or more runs them)\n",
              b->ring_names[k], cap_s, pool, scan_kind_names[kind],
              args_format_size(need[k][kind], want, sizeof want));
    }
}

/* Bytes to pages for --hot and --big: at least one page, at most what a
 * block number can count. */
static hs_blockno size_to_pages(const scan_bench *b, const char *flag, uint64_t bytes) {
  uint64_t pages = bytes / b->page_size;
  char sz[32], page[32];
  if (pages < 1)
    args_usage_error(cmd, "--%s: %s is less than one page of %s", flag,
                     args_format_size(bytes, sz, sizeof sz),
                     args_format_size(b->page_size, page, sizeof page));
  if (pages >= HS_INVALID_BLOCK)
    args_usage_error(cmd, "--%s: %s is more than %u pages", flag,
                     args_format_size(bytes, sz, sizeof sz), HS_INVALID_BLOCK - 1);
  return (hs_blockno)pages;
}

/* The flag table: where each flag goes, its range, its default (written
 * once, here: args_parse stores it and the usage shows it) and its help. */
static void parse_flags(scan_bench *b, int argc, char **argv) {
  const args_opt opts[] = {
      {.name = "policy",
       .kind = ARGS_STRING,
       .dest = &b->policy_flag,
       .arg = "LIST",
       .def = "clock-sweep,lru,2q,arc,lirs,s3fifo,twolist,midpoint",
       .help = "replacement policies, comma-separated specs, or \"all\""},
      {.name = "ring",
       .kind = ARGS_STRING,
       .dest = &b->ring_flag,
       .arg = "LIST",
       .def = "on,off",
       .help = "on, off or on,off: seq scans with a bulkread ring or through the normal policy "
               "(a ring only when --big is over a quarter of the pool, PostgreSQL's rule)"},
      {.name = "scan",
       .kind = ARGS_STRING,
       .dest = &b->scan_flag,
       .arg = "LIST",
       .def = "seq,index",
       .help = "seq, index, vacuum, or a list; every policy also gets a baseline cell with no "
               "scan. index (random blocks) never uses a ring: it runs once, as ring off. vacuum: "
               "a sequential pass with the vacuum strategy that dirties every page (a WAL record "
               "each); its cells get a second table of WAL flushes per recycled buffer"},
      {.name = "wal",
       .kind = ARGS_STRING,
       .dest = &b->wal_flag,
       .arg = "MODE",
       .def = "log",
       .help = "log: pages are changed under records of hotset's write-ahead log, a fresh log "
               "per cell (its fdatasyncs are real); counter: a counter stands in for the log, "
               "so flushes are counted but cost nothing"},
      {.name = "ring-size",
       .kind = ARGS_STRING,
       .dest = &b->ring_size_flag,
       .arg = "LIST",
       .help = "the ring's sizing rule: fixed[:SIZE], workers:N, fraction:X, adaptive, each "
               "optionally followed by ,recycle-first and ,own-writes (default fixed:256KiB); "
               "or a comma-separated list of them, where a bare SIZE means fixed:SIZE and "
               "\"sweep\" 64KiB, 128KiB, ... 64MiB, and each ring cell runs once per ring "
               "(a list's fixed ring over 1/8 of the pool is skipped with a note)"},
      {.name = "pool",
       .kind = ARGS_SIZE,
       .dest = &b->pool_bytes,
       .min = 1,
       .def = "64MiB",
       .help = "pool size"},
      {.name = "hot",
       .kind = ARGS_SIZE,
       .dest = &b->hot_bytes,
       .min = 1,
       .help = "hot relation (default a quarter of the pool)"},
      {.name = "big",
       .kind = ARGS_SIZE,
       .dest = &b->big_bytes,
       .min = 1,
       .help = "scanned relation (default four times the pool)"},
      BENCH_OPT_PAGE_SIZE(&b->page_size),
      {.name = "oltp-threads",
       .kind = ARGS_UINT,
       .dest = &b->oltp_threads,
       .max = MAX_THREADS,
       .def = "1",
       .help = "OLTP threads (0: the scans alone, no baseline cells)"},
      {.name = "scan-threads",
       .kind = ARGS_UINT,
       .dest = &b->scan_threads,
       .min = 1,
       .max = MAX_THREADS,
       .def = "1",
       .help = "scanner threads in the cells with a scan"},
      {.name = "oltp-rate",
       .kind = ARGS_UINT,
       .dest = &b->oltp_rate,
       .max = 1000000000,
       .def = "80000",
       .help = "reads per second per OLTP thread, 0 = as fast as possible"},
      {.name = "scan-rate",
       .kind = ARGS_UINT,
       .dest = &b->scan_rate,
       .max = 1000000000,
       .def = "0",
       .help = "pages per second per sequential scanner, 0 = as fast as possible"},
      /* Index scans read a heap page per index entry, each after an index
       * descent: far below sequential speed. Flat out in this lab they would
       * re-read the big relation's pages more often than the OLTP clients
       * read the hot relation's tail, and no policy could keep the two
       * apart. */
      {.name = "index-rate",
       .kind = ARGS_UINT,
       .dest = &b->index_rate,
       .max = 1000000000,
       .def = "40000",
       .help = "pages per second per index scanner, 0 = as fast as possible (half the OLTP "
               "clients' rate by default; see docs/strategies.md)"},
      {.name = "io-combine",
       .kind = ARGS_SIZE,
       .dest = &b->io_combine,
       .min = HS_PAGE_SIZE_MIN,
       .max = 16u << 20,
       .def = "128KiB",
       .help = "sequential scans read through a read stream that combines up to SIZE of "
               "consecutive missing pages into one preadv (PostgreSQL's io_combine_limit; one "
               "page = a read per page)"},
      {.name = "io-workers",
       .kind = ARGS_UINT,
       .dest = &b->io_workers,
       .max = 64,
       .def = "1",
       .help = "the pool's I/O worker threads: a read stream's next batch is read on one while "
               "the scanner uses the one before (0 = the scanner reads itself)"},
      {.name = "update-ratio",
       .kind = ARGS_DOUBLE,
       .dest = &b->update_ratio,
       .dmax = 1,
       .def = "0",
       .arg = "X",
       .help = "share of OLTP operations that update the page"},
      {.name = "seconds",
       .kind = ARGS_DOUBLE,
       .dest = &b->seconds,
       .dmin = 0.01,
       .dmax = 86400,
       .def = "1",
       .arg = "S",
       .help = "measured time per cell"},
      {.name = "settle",
       .kind = ARGS_DOUBLE,
       .dest = &b->settle,
       .dmax = 86400,
       .def = "1.1",
       .arg = "S",
       .help = "in cells with a scan, the OLTP clients run alone, unpaced, this long before the "
               "scanners start (longer than InnoDB's old_blocks_time)"},
      {.name = "warmup",
       .kind = ARGS_DOUBLE,
       .dest = &b->warmup,
       .dmax = 86400,
       .def = "0.3",
       .arg = "S",
       .help = "time per cell before measuring, scanners running ..."},
      {.name = "warmup-turns",
       .kind = ARGS_DOUBLE,
       .dest = &b->warmup_turns,
       .dmax = 1000,
       .def = "3",
       .arg = "N",
       .help = "... and until the scanners have read N times the pool's pages (at most 10 s "
               "more)"},
      BENCH_OPT_DIR(&b->dir_flag),
      {.name = "seed",
       .kind = ARGS_UINT,
       .dest = &b->seed,
       .def = "1",
       .help = "seed of the random choices"},
      {.name = "io",
       .kind = ARGS_STRING,
       .dest = &b->io_flag,
       .arg = "MODE",
       .help = "buffered (the default), direct or auto. direct: the pool reads and writes its "
               "relations with "
               "O_DIRECT, so a miss costs a device read, not a copy from the kernel's page "
               "cache, and the raw rates are the device's O_DIRECT rates (fails where the data "
               "directory's file system refuses it); auto: direct where possible, else buffered, "
               "saying why"},
      {.name = "direct",
       .kind = ARGS_FLAG,
       .dest = &b->direct_flag,
       .help = "the same as --io direct"},
      {.name = "json",
       .kind = ARGS_FLAG,
       .dest = &b->json,
       .help = "one JSON object per line per cell"},
      {.name = "plot",
       .kind = ARGS_STRING,
       .dest = &b->plot_file,
       .arg = "FILE",
       .help = "bar charts of the cells (.png or .svg; needs gnuplot)"},
  };
  args_parse(cmd, opts, sizeof opts / sizeof opts[0], argc, argv, 0);
}

static void check_flags(scan_bench *b) {
  const char *why = NULL;
  b->npolicies = args_split_policies(b->policy_flag, true, b->specs, ARGS_LIST_MAX, &why);
  if (b->npolicies < 0) args_usage_error(cmd, "--policy: \"%s\": %s", b->policy_flag, why);
  if (b->plot_file) {
    const char *dot = strrchr(b->plot_file, '.');
    if (!dot || (strcmp(dot, ".png") != 0 && strcmp(dot, ".svg") != 0))
      args_usage_error(cmd, "--plot: \"%s\" must end in .png or .svg", b->plot_file);
  }
  parse_list(b, "ring", b->ring_flag, take_ring);
  parse_list(b, "scan", b->scan_flag, take_scan);
  if (strcmp(b->wal_flag, "log") != 0 && strcmp(b->wal_flag, "counter") != 0)
    args_usage_error(cmd, "--wal: \"%s\" is not log or counter", b->wal_flag);
  b->real_wal = strcmp(b->wal_flag, "log") == 0;
  /* --io has no default in the flag table, so that --direct beside an
   * explicit --io buffered (or auto) is seen as the contradiction it is. */
  if (b->io_flag && strcmp(b->io_flag, "buffered") != 0 && strcmp(b->io_flag, "direct") != 0 &&
      strcmp(b->io_flag, "auto") != 0)
    args_usage_error(cmd, "--io: \"%s\" is not buffered, direct or auto", b->io_flag);
  if (b->direct_flag && b->io_flag && strcmp(b->io_flag, "direct") != 0)
    args_usage_error(cmd, "--direct and --io %s contradict each other", b->io_flag);
  if (b->direct_flag) b->io_flag = "direct";
  if (!b->io_flag) b->io_flag = "buffered";
  b->direct = strcmp(b->io_flag, "buffered") != 0; /* auto: until the file system says no */
  parse_ring_sizes(b);
  uint64_t npages = b->pool_bytes / b->page_size;
  uint64_t threads = b->oltp_threads + b->scan_threads;
  /* Each thread pins one buffer at a time; leave the policies room to work. */
  if (npages < 16 || npages < 2 * threads + 16) {
    char pool[32], page[32];
    args_usage_error(
        cmd, "--pool: %s holds %" PRIu64 " pages of %s; %" PRIu64 " threads need at least %" PRIu64,
        args_format_size(b->pool_bytes, pool, sizeof pool), npages,
        args_format_size(b->page_size, page, sizeof page), threads, 2 * threads + 16);
  }
  if (npages > (1u << 30)) args_usage_error(cmd, "--pool: more than 2^30 pages");
  b->nbuffers = (uint32_t)npages;
  if (!b->hot_bytes) b->hot_bytes = b->pool_bytes / 4;
  if (!b->big_bytes) b->big_bytes = b->pool_bytes * 4;
  b->hot_pages = size_to_pages(b, "hot", b->hot_bytes);
  b->big_pages = size_to_pages(b, "big", b->big_bytes);
  b->hot_head = (hs_blockno)((double)b->hot_pages * HOT_PART);
  if (b->hot_head < 1) b->hot_head = 1;
  check_ring_caps(b);
}

static void put_cell(cell *cells, int *n, cell c) {
  if (cells) cells[*n] = c;
  (*n)++;
}

/* The matrix, in run order: per policy the baseline (none without OLTP
 * clients: nothing to measure), then each scan kind with each ring (index:
 * once, ring off) and without. Returns the number of cells; cells may be
 * NULL, to count them. */
static int build_cells(const scan_bench *b, cell *cells) {
  int n = 0;
  for (int p = 0; p < b->npolicies; p++) {
    if (b->oltp_threads) put_cell(cells, &n, (cell){.policy = p, .scan = SCAN_NONE});
    for (int s = 0; s < b->nscans; s++) {
      scan_kind kind = b->scans[s];
      if (kind == SCAN_INDEX) {
        put_cell(cells, &n, (cell){.policy = p, .scan = SCAN_INDEX});
        continue;
      }
      for (int k = 0; b->ring_on && k < b->nrings; k++)
        if (!b->ring_over[k][kind])
          put_cell(cells, &n, (cell){.policy = p, .scan = kind, .ring = true, .ring_spec = k});
      if (b->ring_off) put_cell(cells, &n, (cell){.policy = p, .scan = kind});
    }
  }
  return n;
}

/* ---- the run ---------------------------------------------------------------- */

static void remove_tmpdir(scan_bench *b) {
  if (b->tmpdir[0]) bench_tempdir_remove(b->tmpdir);
  b->tmpdir[0] = '\0';
}

/* After a SIGINT or SIGTERM (every wait and loop returns early then): the
 * temporary directory removed, the process ended by the signal. */
static void stop_if_interrupted(scan_bench *b) {
  if (!bench_interrupted()) return;
  progress_clear(&b->prog);
  remove_tmpdir(b);
  bench_exit_interrupted(PROG);
}

static int fail(scan_bench *b, const char *what) {
  stop_if_interrupted(b); /* a failure that is the signal's doing */
  progress_clear(&b->prog);
  fprintf(stderr, PROG ": %s: %s\n", what, hs_last_error());
  return 1;
}

/* Makes both relations with stamped pages through a storage manager of
 * their own (closed before any pool opens the directory). */
static int make_relations(scan_bench *b) {
  hs_smgr *smgr;
  /* --direct: the file system is tried first, so a refusal is said before
   * minutes of preparation; the relations are still written buffered
   * (quicker) and synced, and every read after that is direct. */
  hs_smgr_options probe = {.page_size = (uint32_t)b->page_size, .direct_io = true};
  hs_status probed = b->direct ? hs_smgr_open(b->dir, &probe, &smgr) : HS_OK;
  if (probed != HS_OK) {
    /* auto falls back only where direct I/O is refused (HS_ERR_INVALID:
     * the file system says no, or wants bigger pages); a full disk or a
     * permission problem fails as it would buffered. */
    if (strcmp(b->io_flag, "auto") != 0 || probed != HS_ERR_INVALID) return fail(b, "--io direct");
    snprintf(b->io_note, sizeof b->io_note, "%s", hs_last_error());
    b->direct = false;
  } else if (b->direct) {
    hs_smgr_close(smgr);
  }
  if (hs_smgr_open(b->dir, &(hs_smgr_options){.page_size = (uint32_t)b->page_size}, &smgr) != HS_OK)
    return fail(b, "opening the data directory");
  int rc = 0;
  if (bench_make_relation(smgr, HOT_REL, b->hot_pages) != HS_OK)
    rc = fail(b, "creating the hot relation");
  else if (bench_make_relation(smgr, BIG_REL, b->big_pages) != HS_OK)
    rc = fail(b, "creating the big relation");
  /* Written back now, so that the kernel's writeback of a few hundred MiB
   * does not run during the raw measurement or the first cells. */
  else if (hs_smgr_sync_all(smgr) != HS_OK)
    rc = fail(b, "syncing the relations");
  hs_smgr_close(smgr);
  return rc;
}

/* The raw pread rate of the big relation's file: `io` bytes per read into a
 * 256 KiB buffer (common/stamped.h). */
static hs_status measure_raw_io(const scan_bench *b, uint32_t io, double seconds,
                                bench_raw_rate *rate) {
  char name[64], path[4200];
  hs_smgr_fork_filename(BIG_REL, HS_FORK_MAIN, name, sizeof name);
  if ((size_t)snprintf(path, sizeof path, "%s/%s", b->dir, name) >= sizeof path)
    return hs_fail(HS_ERR_INVALID, 0, "the relation's path under %s is too long", b->dir);
  return bench_raw_read_rate(path, io, RAW_CHUNK, seconds, b->direct, rate);
}

/* Both limits: 256 KiB reads (the file system's best) and page-sized reads
 * (the same system calls a page-at-a-time buffer manager makes). */
static hs_status measure_raw(scan_bench *b) {
  hs_status st = measure_raw_io(b, RAW_CHUNK, RAW_SECONDS, &b->raw);
  if (st == HS_OK) st = measure_raw_io(b, (uint32_t)b->page_size, RAW_SECONDS, &b->raw_page);
  return st;
}

/* The raw rate next to a cell; on failure says why and cleans up. */
static int measure_cell_raw(scan_bench *b, bench_raw_rate *rate) {
  if (measure_raw_io(b, RAW_CHUNK, RAW_CELL_SECONDS, rate) == HS_OK) return 0;
  stop_if_interrupted(b);
  progress_clear(&b->prog);
  fprintf(stderr, PROG ": measuring raw pread throughput: %s\n", hs_last_error());
  remove_tmpdir(b);
  return 1;
}

/* Every cell in turn, each printed as it ends. Returns 0, or 1 after
 * saying why (the temporary directory removed). */
static int run_cells(scan_bench *b) {
  for (int i = 0; i < b->ncells; i++) {
    const cell *c = &b->cells[i];
    cell_result *r = &b->res[i];
    char name[96];
    scan_cell_name(b, c, name, sizeof name);
    snprintf(b->prog.what, sizeof b->prog.what, "%s, %s", b->specs[c->policy], name);
    b->prog.cell_t0 = bench_now_ns();
    progress_show(&b->prog);
    /* A sequential scan is held against the raw rate of the same moment,
     * measured just before and just after it: from run to run (and minute
     * to minute) this machine's copy rate from the page cache moves by a
     * fifth. */
    bool seq = c->scan == SCAN_SEQ;
    bench_raw_rate before = b->raw, after = b->raw;
    if (seq && measure_cell_raw(b, &before) != 0) return 1;
    int cell_rc = scan_run_cell(b, c, r);
    stop_if_interrupted(b); /* before printing a cell cut short */
    if (cell_rc != 0) {
      /* scan_run_cell cleared the progress line and printed the error. */
      remove_tmpdir(b);
      return 1;
    }
    if (seq && measure_cell_raw(b, &after) != 0) return 1;
    r->raw_mb_per_sec = (before.mb_per_sec + after.mb_per_sec) / 2;
    r->raw_mb_per_cpu_sec = (before.mb_per_cpu_sec + after.mb_per_cpu_sec) / 2;
    b->prog.cells_ns += bench_now_ns() - b->prog.cell_t0;
    b->prog.done++;
    progress_clear(&b->prog);
    if (b->json)
      scan_print_json(b, c, r);
    else
      scan_print_row(b, c, r);
  }
  return 0;
}

static int bench_scan_run(scan_bench *b) {
  /* Find out now, not after a minute of measuring, that no chart can be
   * drawn. */
  if (b->plot_file && gnuplot_check_output(PROG, b->plot_file) != 0) return 1;

  /* Refuse now what could only end in ENOSPC or an out-of-memory kill
   * after minutes of writing. */
  uint64_t rel_bytes = ((uint64_t)b->hot_pages + b->big_pages) * b->page_size;
  if (bench_check_memory(b->pool_bytes, "its pool") != HS_OK ||
      bench_check_space(b->dir_flag ? b->dir_flag : bench_tempdir_parent(), rel_bytes,
                        "its relations") != HS_OK) {
    fprintf(stderr, PROG ": %s\n", hs_last_error());
    return 1;
  }
  bench_signals_install();

  b->prog = (progress){.on = isatty(2),
                       .t0 = bench_now_ns(),
                       .total = b->ncells,
                       .cell_budget = b->warmup + b->seconds};
  snprintf(b->prog.what, sizeof b->prog.what, "creating the relations");
  progress_show(&b->prog);

  if (b->dir_flag) {
    /* --dir is created with its missing parents (mkdir -p), as by every
     * command that makes a directory. */
    if (make_dirs(b->dir_flag, 0700, "the directory") != HS_OK) return fail(b, "--dir");
    b->dir = b->dir_flag;
  } else {
    if (bench_tempdir_make("bench-scan", b->tmpdir, sizeof b->tmpdir) != HS_OK)
      return fail(b, "creating a temporary directory");
    b->dir = b->tmpdir;
  }
  int rc = make_relations(b);
  if (rc == 0 && measure_raw(b) != HS_OK) rc = fail(b, "measuring raw pread throughput");
  if (rc != 0) {
    remove_tmpdir(b);
    return rc;
  }

  if (!b->json) {
    progress_clear(&b->prog);
    scan_print_header(b);
  }
  if (run_cells(b) != 0) return 1;
  progress_clear(&b->prog);
  if (!b->json) scan_print_footer(b);
  remove_tmpdir(b);
  return b->plot_file ? scan_plot(b) : 0;
}

int bench_scan_main(int argc, char **argv) {
  scan_bench *b = calloc(1, sizeof *b);
  if (!b) {
    fprintf(stderr, PROG ": out of memory\n");
    return 1;
  }
  parse_flags(b, argc, argv);
  check_flags(b);
  int ncells = build_cells(b, NULL);
  cell *cells = calloc((size_t)ncells, sizeof *cells);
  cell_result *res = calloc((size_t)ncells, sizeof *res);
  if (!cells || !res) {
    fprintf(stderr, PROG ": out of memory\n");
    free(b);
    free(cells);
    free(res);
    return 1;
  }
  b->cells = cells;
  b->res = res;
  b->ncells = build_cells(b, cells);
  int rc = bench_scan_run(b);
  free(b);
  free(cells);
  free(res);
  return rc;
}
