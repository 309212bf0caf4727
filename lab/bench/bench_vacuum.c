/*
 * bench/bench_vacuum.c — `hotset bench vacuum`: vacuum beside a foreground,
 * on a real log, per ring size, cost delay and throttle.
 *
 * The three vacuum questions the PostgreSQL lists argued over, asked of
 * this machine: how the vacuum ring's size changes the WAL flushes its
 * recycling forces (2007) and vacuum's speed (2017); what cost-based delay
 * trades between vacuum time and the foreground (2003–2004); and whether a
 * throttle that watches the foreground (`auto`, hotset/vacuum.h) with the
 * adaptive ring can do what no cost delay does — cost a paced foreground
 * nothing and still finish.
 *
 * The run: a pgbench-like table (a u64 key and ~90 bytes per row, a
 * primary-key index) is loaded to --table bytes, vacuumed once (as pgbench
 * -i does), and checkpointed. The foreground's unpaced rate is measured
 * once; a paced foreground offers half of it. Then per cell: --dead of the
 * rows are updated at random (dead versions for vacuum), a checkpoint (so
 * vacuum's first change to each page logs its image, as on a real
 * system), the foreground alone for --baseline seconds, then vacuum beside
 * the same clients, which stop when it returns. Vacuum reads through a
 * ring of the cell's size; the log is hotset's, with fdatasync; the pool's
 * per-context counters and the log's own say what the ring cost.
 */
#include "bench/bench_vacuum.h"

#include "bench/bench_vacuum_internal.h"
#include "common/args.h"
#include "common/gnuplot.h"
#include "core/error.h"
#include "hotset/durability.h"
#include "hotset/stats.h"
#include "vacuum/throttle.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROG       "hotset bench vacuum"
#define HEAP_REL   1u
#define INDEX_REL  2u
#define PAGE_BYTES 8192u
#define WARMUP_S   0.3
#define UPDATE_TX  100u /* updates per transaction when making dead rows */

static const args_command command = {
    .cmd = {.prog = PROG},
    .about = "Vacuum beside a select-only foreground (pgbench -S), on a real log with fdatasync:\n"
             "loads a pgbench-like table (u64 key, ~100-byte rows, primary-key index; twice the\n"
             "pool by default, five times with --full), then per cell updates --dead of the\n"
             "rows, checkpoints, measures the foreground alone, and runs vacuum beside the\n"
             "same clients. Every cell uses the one table. Cells: a ring-size sweep (first\n"
             "--fg mode, no delay), PostgreSQL's 256 KiB ring at each --cost-delay (last --fg\n"
             "mode), and with --throttle auto the adaptive ring under the foreground-watching\n"
             "throttle (each --fg mode).\n",
    .notes = ARGS_SIZE_NOTE
    "Sizes: without --full the table is 2x --pool (256 MiB at the default pool), so\n"
    "the default run finishes in under 3 minutes on 2 vCPUs; --full loads 5x (641 MiB,\n"
    "about 5 minutes). --full changes only that default: every flag given is taken\n"
    "as given, with or without it. Each JSON line and the header say the table used.\n"
    "Paced clients offer a fixed rate (--fg-rate, or half the unpaced rate measured\n"
    "at the start) with pgbench -R's exponential gaps; their latency counts from when\n"
    "each lookup was due. fg_tps_loss is 1 - fg_tps_during / fg_tps_baseline;\n"
    "flushes_per_recycle is WAL flushes the vacuum ring's recycling forced per buffer\n"
    "it recycled; syncs_per_page_written is the log's fdatasyncs during vacuum per\n"
    "page vacuum wrote. The Pareto view after the table puts vacuum time against\n"
    "foreground loss, one point per cell.\n",
};
static const args_cmd *const cmd = &command.cmd;

/* --table's value in bytes: a SIZE, or a multiple of the pool ("5x",
 * "2.5x"); at least 1 MiB. */
static uint64_t table_size(const char *spec, uint64_t pool_bytes) {
  size_t len = strlen(spec);
  uint64_t bytes;
  if (len && (spec[len - 1] == 'x' || spec[len - 1] == 'X')) {
    char num[32];
    double times;
    if (len - 1 >= sizeof num)
      times = -1;
    else {
      memcpy(num, spec, len - 1);
      num[len - 1] = 0;
      if (!args_parse_double(num, &times)) times = -1;
    }
    if (!(times > 0 && times <= 1000))
      args_usage_error(cmd,
                       "--table: \"%s\": want a size (256MiB) or a multiple of --pool "
                       "above 0 and at most 1000 (5x)",
                       spec);
    double want = times * (double)pool_bytes;
    if (want >= 0x1p63)
      args_usage_error(cmd, "--table: \"%s\" of --pool is more bytes than a table can have", spec);
    bytes = (uint64_t)want;
  } else if (!args_parse_size(spec, &bytes)) {
    args_usage_error(cmd, "--table: %s", hs_last_error());
  }
  if (bytes < 1u << 20)
    args_usage_error(cmd, "--table: \"%s\" (%" PRIu64 " bytes) must be at least 1 MiB", spec,
                     bytes);
  return bytes;
}

static void parse_flags(vac_bench *b, int argc, char **argv) {
  const args_opt opts[] = {
      {.name = "pool",
       .kind = ARGS_SIZE,
       .dest = &b->pool_bytes,
       .min = 4 << 20,
       .def = "128MiB",
       .help = "the buffer pool (PostgreSQL's shared_buffers)"},
      {.name = "table",
       .kind = ARGS_STRING,
       .dest = &b->table_flag,
       .arg = "SIZE|Nx",
       .help = "the table's heap: a size, or N times --pool written Nx, e.g. 5x (default "
               "2x; 5x with --full)"},
      {.name = "full",
       .kind = ARGS_FLAG,
       .dest = &b->full,
       .help = "the full-size lab, as run until 2026-12-05: the table 5x --pool instead of 2x "
               "(about 5 minutes here instead of under 3); a --table given as well wins"},
      {.name = "dead",
       .kind = ARGS_DOUBLE,
       .dest = &b->dead,
       .dmin = 0.0001,
       .dmax = 1,
       .def = "0.02",
       .help = "fraction of rows updated before each vacuum"},
      {.name = "freeze",
       .kind = ARGS_FLAG,
       .dest = &b->freeze,
       .help = "VACUUM FREEZE: every page rewritten"},
      {.name = "clients",
       .kind = ARGS_UINT,
       .dest = &b->clients,
       .min = 1,
       .max = VAC_MAX_CLIENTS,
       .def = "2",
       .help = "foreground clients"},
      {.name = "fg",
       .kind = ARGS_STRING,
       .dest = &b->fg_flag,
       .def = "paced,unpaced",
       .help = "foreground modes: paced (a fixed rate), unpaced (saturating), or both"},
      {.name = "fg-rate",
       .kind = ARGS_DOUBLE,
       .dest = &b->fg_rate,
       .dmin = 0,
       .dmax = 1e9,
       .def = "0",
       .help = "paced clients' total rate per second (0: half the unpaced rate)"},
      {.name = "fg-tick",
       .kind = ARGS_DOUBLE,
       .dest = &b->fg_tick_ms,
       .dmin = 0,
       .dmax = 1000,
       .def = "1",
       .arg = "MS",
       .help = "paced clients wake on multiples of this many milliseconds and run every lookup "
               "due by then, each latency counted from its due time (0: a sleep until each "
               "lookup's due time, whose wake-up jitter on a virtual machine is most of a p99)"},
      {.name = "fg-ops",
       .kind = ARGS_STRING,
       .dest = &b->fg_ops_flag,
       .def = "select",
       .help = "select (lookups by key) or update (one row per transaction)"},
      {.name = "ring-size",
       .kind = ARGS_STRING,
       .dest = &b->ring_flag,
       .def = "8KiB,256KiB,1MiB,16MiB,adaptive",
       .help = "vacuum ring sizes to sweep: sizes, adaptive, workers:N, fraction:X, off"},
      {.name = "recycle-first",
       .kind = ARGS_FLAG,
       .dest = &b->recycle_first,
       .help = "vacuum's pages go to the victim end (needs --policy lru; the 2003 experiment)"},
      {.name = "own-writes",
       .kind = ARGS_STRING,
       .dest = &b->own_writes_flag,
       .def = "auto",
       .help = "vacuum writes the pages it dirtied itself, the foreground never does: auto "
               "(throttled cells), on (every cell) or off (PostgreSQL's rule)"},
      {.name = "cost-delay",
       .kind = ARGS_STRING,
       .dest = &b->cost_delay_flag,
       .def = "0,2,10",
       .help = "vacuum_cost_delay values in ms (cost limit 200, hit 1, miss 2, dirty 20)"},
      {.name = "throttle",
       .kind = ARGS_STRING,
       .dest = &b->throttle_flag,
       .def = "off,auto",
       .help = "off: the sweeps above; auto: also the adaptive ring under the throttle"},
      {.name = "budget",
       .kind = ARGS_DOUBLE,
       .dest = &b->budget,
       .dmin = 0.001,
       .dmax = 10,
       .def = "0.05",
       .help = "auto: the foreground's allowed slowdown"},
      {.name = "idle-priority",
       .kind = ARGS_FLAG,
       .dest = &b->idle_priority,
       .def = "true",
       .help = "auto: vacuum runs at SCHED_IDLE until the foreground starves it"},
      {.name = "calibrate",
       .kind = ARGS_DOUBLE,
       .dest = &b->calibrate_seconds,
       .dmin = 0,
       .dmax = 3600,
       .def = "0",
       .help = "first, per --fg mode, two cells of this many seconds without vacuum: the "
               "clients alone, and beside an idle-priority spinner (0: none)"},
      {.name = "baseline",
       .kind = ARGS_DOUBLE,
       .dest = &b->baseline_seconds,
       .dmin = 0.1,
       .dmax = 3600,
       .def = "1.5",
       .help = "seconds of foreground alone before each vacuum"},
      {.name = "policy",
       .kind = ARGS_STRING,
       .dest = &b->policy,
       .def = "clock-sweep",
       .help = "the pool's replacement policy"},
      {.name = "seed", .kind = ARGS_UINT, .dest = &b->seed, .def = "1", .help = "random seed"},
      {.name = "direct",
       .kind = ARGS_FLAG,
       .dest = &b->direct,
       .help = "the pool reads and writes the heap and index with O_DIRECT, so the foreground's "
               "and vacuum's misses are device reads (fails, naming the file system, where it "
               "refuses O_DIRECT)"},
      BENCH_OPT_DIR(&b->dir_flag),
      {.name = "json", .kind = ARGS_FLAG, .dest = &b->json, .help = "JSON lines only"},
      {.name = "plot",
       .kind = ARGS_PATH,
       .dest = &b->plot_file,
       .arg = "FILE",
       .help = "draw the Pareto view with gnuplot (.png or .svg)"},
  };
  args_parse(cmd, opts, sizeof opts / sizeof opts[0], argc, argv, 0);
  b->table_spec = b->table_flag ? b->table_flag : b->full ? VAC_TABLE_FULL : VAC_TABLE_DEFAULT;
  b->table_bytes = table_size(b->table_spec, b->pool_bytes);
  if (strcmp(b->fg_ops_flag, "select") && strcmp(b->fg_ops_flag, "update"))
    args_usage_error(cmd, "--fg-ops: \"%s\": want select or update", b->fg_ops_flag);
  b->fg_updates = !strcmp(b->fg_ops_flag, "update");
  if (strcmp(b->own_writes_flag, "auto") && strcmp(b->own_writes_flag, "on") &&
      strcmp(b->own_writes_flag, "off"))
    args_usage_error(cmd, "--own-writes: \"%s\": want auto, on or off", b->own_writes_flag);
}

/* ---- the cells ------------------------------------------------------------ */

typedef struct cell_list {
  vac_cell c[VAC_MAX_CELLS];
  size_t n;
} cell_list;

/* A ring as the flag gives it: a bare size is a fixed ring of that size. */
static void parse_ring(const vac_bench *b, const char *item, hs_strategy_options *out) {
  char spec[64];
  uint64_t bytes;
  if (args_parse_size(item, &bytes))
    snprintf(spec, sizeof spec, "fixed:%s", item);
  else
    snprintf(spec, sizeof spec, "%s", item);
  if (hs_strategy_options_parse(spec, out) != HS_OK)
    args_usage_error(cmd, "--ring-size: %s", hs_last_error());
  out->recycle_first = b->recycle_first;
}

static void add_cell(cell_list *l, const vac_bench *b, vac_fg_mode fg, const char *ring,
                     double delay, bool autothrottle) {
  if (vac_find_cell(l->c, l->n, fg, ring, delay, autothrottle)) return; /* asked twice */
  if (l->n == VAC_MAX_CELLS) args_usage_error(cmd, "more than %d cells", VAC_MAX_CELLS);
  vac_cell *c = &l->c[l->n++];
  memset(c, 0, sizeof *c);
  c->fg = fg;
  snprintf(c->ring, sizeof c->ring, "%s", ring);
  parse_ring(b, ring, &c->ring_config);
  c->cost_delay_ms = delay;
  c->throttle_auto = autothrottle;
  c->ring_config.own_writes =
      !strcmp(b->own_writes_flag, "on") || (autothrottle && !strcmp(b->own_writes_flag, "auto"));
}

static void build_cells(const vac_bench *b, cell_list *l) {
  char fg[2][ARGS_ITEM_LEN], rings[ARGS_LIST_MAX][ARGS_ITEM_LEN];
  char delays[ARGS_LIST_MAX][ARGS_ITEM_LEN], thr[2][ARGS_ITEM_LEN];
  size_t nfg = args_split_list(cmd, "fg", b->fg_flag, fg, 2);
  size_t nring = args_split_list(cmd, "ring-size", b->ring_flag, rings, ARGS_LIST_MAX);
  size_t ndelay = args_split_list(cmd, "cost-delay", b->cost_delay_flag, delays, ARGS_LIST_MAX);
  size_t nthr = args_split_list(cmd, "throttle", b->throttle_flag, thr, 2);
  vac_fg_mode modes[2];
  for (size_t i = 0; i < nfg; i++) {
    if (!strcmp(fg[i], "paced"))
      modes[i] = VAC_FG_PACED;
    else if (!strcmp(fg[i], "unpaced"))
      modes[i] = VAC_FG_UNPACED;
    else
      args_usage_error(cmd, "--fg: \"%s\": want paced, unpaced or both", fg[i]);
  }
  double delay_ms[ARGS_LIST_MAX];
  for (size_t i = 0; i < ndelay; i++)
    if (!args_parse_double(delays[i], &delay_ms[i]) || delay_ms[i] < 0 || delay_ms[i] > 1000)
      args_usage_error(cmd, "--cost-delay: \"%s\" is not a delay of 0 to 1000 ms", delays[i]);
  bool off = false, autothrottle = false;
  for (size_t i = 0; i < nthr; i++) {
    if (!strcmp(thr[i], "off"))
      off = true;
    else if (!strcmp(thr[i], "auto"))
      autothrottle = true;
    else
      args_usage_error(cmd, "--throttle: \"%s\": want off, auto or both", thr[i]);
  }
  hs_strategy_options check;
  for (size_t i = 0; i < nring; i++) parse_ring(b, rings[i], &check);
  if (b->calibrate_seconds > 0)
    for (size_t f = 0; f < nfg; f++)
      for (vac_cell_kind k = VAC_CELL_ALONE; k <= VAC_CELL_IDLE_SPIN; k++) {
        if (l->n == VAC_MAX_CELLS) args_usage_error(cmd, "more than %d cells", VAC_MAX_CELLS);
        l->c[l->n++] = (vac_cell){.kind = k, .fg = modes[f], .ring = "-"};
      }
  if (off) {
    for (size_t i = 0; i < nring; i++) add_cell(l, b, modes[0], rings[i], 0, false);
    /* The cost-delay sweep against the last --fg mode: unpaced by default,
     * as the PostgreSQL runs it is compared with. */
    for (size_t i = 0; i < ndelay; i++)
      add_cell(l, b, modes[nfg - 1], "256KiB", delay_ms[i], false);
  }
  if (autothrottle)
    for (size_t f = 0; f < nfg; f++) add_cell(l, b, modes[f], "adaptive", 0, true);
}

/* ---- the table and its rows ------------------------------------------------ */

typedef struct lab {
  hs_wal *wal;
  hs_pool *pool;
  hs_xact_mgr *x;
  hs_heap *h;
  hs_pk_index *ix;
  uint64_t rows;
  bench_rng rng;
} lab;

static hs_status lab_open(const vac_bench *b, const char *base, lab *l) {
  char waldir[BENCH_DIR_MAX + 16];
  snprintf(waldir, sizeof waldir, "%s/wal", base);
  hs_wal_options wo;
  hs_wal_options_init(&wo);
  wo.dir = waldir;
  hs_status st = hs_wal_open(&wo, &l->wal);
  if (st == HS_OK) st = hs_heap_register_redo(l->wal);
  if (st != HS_OK) return st;
  hs_pool_options po;
  hs_pool_options_init(&po);
  po.dir = base;
  po.page_size = PAGE_BYTES;
  po.pool_bytes = b->pool_bytes;
  po.policy = b->policy;
  po.wal = l->wal;
  po.checksums = true;
  po.direct_io = b->direct;
  st = hs_pool_open(&po, &l->pool);
  if (st == HS_OK) st = hs_xact_open(l->pool, &l->x);
  if (st == HS_OK) st = hs_heap_open(l->pool, l->x, HEAP_REL, &l->h);
  if (st == HS_OK) st = hs_pk_index_open(l->pool, INDEX_REL, &l->ix);
  return st;
}

static void lab_close(lab *l) {
  hs_pk_index_close(l->ix);
  hs_heap_close(l->h);
  hs_xact_close(l->x);
  if (l->pool) hs_pool_close(l->pool);
  if (l->wal) hs_wal_close(l->wal);
}

static hs_status heap_blocks(lab *l, hs_blockno *n) {
  return hs_smgr_nblocks(hs_pool_smgr(l->pool), HEAP_REL, HS_FORK_MAIN, n);
}

/* Rows until the heap holds --table bytes, keys 0, 1, 2, ... each in the
 * index; committed every 10,000 rows. */
static hs_status load(const vac_bench *b, lab *l) {
  char row[VAC_ROW_BYTES];
  memset(row, 'x', sizeof row);
  uint64_t want_blocks = b->table_bytes / PAGE_BYTES;
  hs_status st = HS_OK;
  hs_xid xid = HS_XACT_INVALID;
  for (uint64_t key = 0; st == HS_OK; key++) {
    if (key % 10000 == 0) {
      if (xid != HS_XACT_INVALID && (st = hs_xact_commit(l->x, xid)) != HS_OK) break;
      xid = HS_XACT_INVALID;
      hs_blockno n;
      if ((st = heap_blocks(l, &n)) != HS_OK) break;
      if (n >= want_blocks) break;
      if (bench_interrupted()) return hs_fail(HS_ERR_INVALID, 0, "interrupted while loading");
      if ((st = hs_xact_begin(l->x, &xid)) != HS_OK) break;
    }
    memcpy(row, &key, 8);
    memset(row + 8, 0, 8); /* the balance */
    hs_tid tid;
    st = hs_heap_insert(l->h, xid, row, sizeof row, &tid);
    if (st == HS_OK) st = hs_pk_index_insert(l->ix, key, tid);
    l->rows = key + 1;
  }
  return st;
}

/* Updates `count` random rows (their balance), UPDATE_TX per transaction:
 * each leaves a dead version behind for vacuum. */
static hs_status make_dead(lab *l, uint64_t count) {
  hs_snapshot *snap = malloc(sizeof *snap);
  if (!snap) return hs_fail(HS_ERR_NOMEM, 0, "no memory for a snapshot");
  hs_status st = HS_OK;
  for (uint64_t done = 0; st == HS_OK && done < count;) {
    hs_xid xid;
    if ((st = hs_xact_begin(l->x, &xid)) != HS_OK) break;
    for (uint32_t i = 0; st == HS_OK && i < UPDATE_TX && done < count; i++, done++) {
      uint64_t key = bench_rng_below(&l->rng, (uint32_t)l->rows);
      char row[VAC_ROW_BYTES];
      uint32_t len;
      bool found;
      hs_tid tid, new_tid;
      st = hs_xact_take_snapshot(l->x, snap);
      if (st != HS_OK) break;
      st = hs_pk_index_lookup(l->ix, l->h, key, snap, xid, &tid, row, sizeof row, &len, &found);
      hs_xact_release_snapshot(l->x, snap);
      if (st == HS_OK && !found)
        st = hs_fail(HS_ERR_CORRUPT, 0, "key %" PRIu64 " not found while updating", key);
      if (st == HS_OK) st = hs_heap_update(l->h, xid, tid, row, len, &new_tid);
      if (st == HS_ERR_INVALID) st = HS_OK; /* this transaction updated it already */
    }
    hs_status end = st == HS_OK ? hs_xact_commit(l->x, xid) : hs_xact_abort(l->x, xid);
    if (st == HS_OK) st = end;
  }
  free(snap);
  return st;
}

/* ---- one cell ------------------------------------------------------------- */

/* The ring's size after each page, to see whether the adaptive ring
 * settles. */
typedef struct ring_trace {
  hs_strategy *s;
  uint64_t *t_ns;
  uint32_t *size;
  uint32_t n, cap;
} ring_trace;

static void trace_ring(void *ctx, hs_blockno block) {
  (void)block;
  ring_trace *r = ctx;
  if (r->n == r->cap) return;
  r->t_ns[r->n] = bench_now_ns();
  r->size[r->n++] = r->s ? hs_strategy_ring_size(r->s) : 0;
}

/* (max − min) / max of the ring's size over the last quarter of the run. */
static double last_quarter_change(const ring_trace *r) {
  if (r->n < 2) return 0;
  uint64_t from = r->t_ns[0] + (r->t_ns[r->n - 1] - r->t_ns[0]) / 4 * 3;
  uint32_t lo = UINT32_MAX, hi = 0;
  for (uint32_t i = 0; i < r->n; i++) {
    if (r->t_ns[i] < from) continue;
    if (r->size[i] < lo) lo = r->size[i];
    if (r->size[i] > hi) hi = r->size[i];
  }
  return hi ? (double)(hi - lo) / hi : 0;
}

/* The clients over the lab's table: `rate_per_client` lookups a second
 * each (0: unpaced). */
static void fg_group_init(fg_group *g, const vac_bench *b, const lab *l, uint64_t seed,
                          double rate_per_client) {
  *g = (fg_group){.h = l->h,
                  .ix = l->ix,
                  .x = l->x,
                  .rows = l->rows,
                  .seed = seed,
                  .updates = b->fg_updates,
                  .rate_per_client = rate_per_client,
                  .tick_ns = (uint64_t)(b->fg_tick_ms * 1e6)};
  atomic_init(&g->throttle, NULL);
}

/* The pool's normal-context (foreground) hit ratio between two readings. */
static double normal_hit_ratio(const hs_pool_stats *from, const hs_pool_stats *to) {
  uint64_t hits =
      to->count[HS_IOCTX_NORMAL][HS_STAT_HITS] - from->count[HS_IOCTX_NORMAL][HS_STAT_HITS];
  uint64_t reads =
      to->count[HS_IOCTX_NORMAL][HS_STAT_READS] - from->count[HS_IOCTX_NORMAL][HS_STAT_READS];
  return hits + reads ? (double)hits / (double)(hits + reads) : 0;
}

/* Warms the started clients up, then measures them alone for --baseline
 * seconds (epoch FG_BASELINE). Returns the window's length in seconds;
 * *hit_ratio (if asked) is the pool's foreground hit ratio over it. With
 * `th`, the clients report to the throttle from the baseline on: what they
 * report before vacuum starts is its baseline too. */
static double measure_alone(const vac_bench *b, lab *l, fg_group *g, hs_throttle *th,
                            double *hit_ratio, double *cpu_idle) {
  bench_sleep(WARMUP_S);
  if (th) atomic_store(&g->throttle, th);
  hs_pool_stats before, after;
  hs_pool_stats_get(l->pool, &before);
  vac_cpu_mark m0 = vac_cpu_now();
  uint64_t t0 = bench_now_ns();
  atomic_store(&g->epoch, FG_BASELINE);
  bench_sleep(b->baseline_seconds);
  atomic_store(&g->epoch, FG_BETWEEN);
  uint64_t t1 = bench_now_ns();
  vac_cpu_mark m1 = vac_cpu_now();
  if (cpu_idle) *cpu_idle = vac_cpu_idle_between(&m0, &m1);
  hs_pool_stats_get(l->pool, &after);
  if (hit_ratio) *hit_ratio = normal_hit_ratio(&before, &after);
  return (double)(t1 - t0) / 1e9;
}

static hs_status run_cell(const vac_bench *b, lab *l, double paced_rate, size_t index,
                          vac_cell *c) {
  bool vacuum = c->kind == VAC_CELL_VACUUM;
  hs_status st = HS_OK;
  if (vacuum) st = make_dead(l, (uint64_t)(b->dead * (double)l->rows + 0.5));
  if (vacuum && st == HS_OK) st = hs_pool_checkpoint(l->pool);
  if (st != HS_OK) return st;
  hs_blockno nblocks;
  if ((st = heap_blocks(l, &nblocks)) != HS_OK) return st;

  fg_group g;
  fg_group_init(&g, b, l, b->seed * 1000003u + index,
                c->fg == VAC_FG_PACED ? paced_rate / (double)b->clients : 0);
  hs_throttle th;
  hs_throttle_options to;
  hs_throttle_options_init(&to);
  to.budget = b->budget;
  to.idle_priority = b->idle_priority;
  if ((st = throttle_init(&th, &to)) != HS_OK) return st;
  if ((st = fg_start(&g, (uint32_t)b->clients)) != HS_OK) return st;
  double base_s = measure_alone(b, l, &g, c->throttle_auto ? &th : NULL, &c->fg_hit_ratio_baseline,
                                &c->cpu_idle_baseline);

  hs_strategy *ring = NULL;
  ring_trace rt = {.cap = nblocks};
  rt.t_ns = malloc(sizeof *rt.t_ns * (nblocks ? nblocks : 1));
  rt.size = malloc(sizeof *rt.size * (nblocks ? nblocks : 1));
  if (!rt.t_ns || !rt.size) st = hs_fail(HS_ERR_NOMEM, 0, "no memory for the ring's trace");
  if (st == HS_OK && vacuum)
    st = hs_strategy_create(l->pool, HS_STRATEGY_VACUUM, &c->ring_config, &ring);
  rt.s = ring;
  hs_vacuum_options vo;
  hs_vacuum_options_init(&vo);
  vo.strategy = ring;
  vo.freeze = b->freeze;
  vo.cost_delay_ms = c->cost_delay_ms;
  vo.throttle = c->throttle_auto ? &th : NULL;
  vo.after_page = trace_ring;
  vo.after_page_ctx = &rt;
  hs_pool_stats io0, io1;
  hs_wal_stats w0, w1;
  hs_pool_checkpoint_stats ck0, ck1;
  hs_pool_stats_get(l->pool, &io0);
  hs_pool_checkpoint_stats_get(l->pool, &ck0);
  hs_wal_stats_get(l->wal, &w0);
  hs_vacuum_stats vs = {0};
  uint64_t t2 = bench_now_ns(), t3 = t2;
  pthread_mutex_lock(&g.err_lock);
  bool fg_failed = g.err[0] != 0;
  pthread_mutex_unlock(&g.err_lock);
  if (st == HS_OK && !fg_failed) {
    atomic_store(&g.epoch, FG_DURING);
    vac_cpu_mark m0 = vac_cpu_now();
    t2 = bench_now_ns();
    if (vacuum)
      st = hs_vacuum(l->h, l->ix, &vo, &vs);
    else
      st = vac_calibration_window(c->kind, b->calibrate_seconds, &c->corunner_cpu_seconds);
    t3 = bench_now_ns();
    vac_cpu_mark m1 = vac_cpu_now();
    atomic_store(&g.epoch, FG_BETWEEN);
    c->cpu_idle_during = vac_cpu_idle_between(&m0, &m1);
  }
  hs_pool_stats_get(l->pool, &io1);
  hs_pool_checkpoint_stats_get(l->pool, &ck1);
  hs_wal_stats_get(l->wal, &w1);
  fg_stop(&g);
  if (st == HS_OK && g.err[0]) st = hs_fail(HS_ERR_INVALID, 0, "foreground: %s", g.err);

  fg_tally base, during;
  fg_collect(&g, FG_BASELINE, &base);
  fg_collect(&g, FG_DURING, &during);
  fg_release(&g);
  c->vacuum_seconds = (double)(t3 - t2) / 1e9;
  c->pages_scanned = vs.pages_scanned;
  c->pages_dirtied = vs.pages_dirtied;
  c->removed = vs.removed;
  c->cost_sleeps = vs.cost_sleeps;
#define DELTA(ctx, stat) (io1.count[ctx][stat] - io0.count[ctx][stat])
  c->pages_written = DELTA(HS_IOCTX_VACUUM, HS_STAT_WRITES);
  c->other_pages_written = DELTA(HS_IOCTX_NORMAL, HS_STAT_WRITES);
  c->checkpoint_pages_written = ck1.buffers_written - ck0.buffers_written;
  c->ring_recycles = DELTA(HS_IOCTX_VACUUM, HS_STAT_REUSES);
  c->wal_flushes_forced = DELTA(HS_IOCTX_VACUUM, HS_STAT_WAL_FLUSHES);
#undef DELTA
  c->fg_hit_ratio_during = normal_hit_ratio(&io0, &io1);
  c->wal_syncs = w1.syncs - w0.syncs;
  for (int cause = 0; cause < HS_WAL_CAUSE_COUNT; cause++)
    c->wal_syncs_by_cause[cause] = w1.flush_syncs[cause] - w0.flush_syncs[cause];
  c->wal_sync_seconds = (double)(w1.sync_ns - w0.sync_ns) / 1e9;
  c->ring_buffers_end = ring ? hs_strategy_ring_size(ring) : 0;
  c->ring_change_last_quarter = last_quarter_change(&rt);
  c->throttle_mean_duty = vs.throttle_mean_duty;
  c->throttle_slope = vs.throttle_slope;
  c->throttle_slope_se = vs.throttle_slope_se;
  c->throttle_slope_trusted = vs.throttle_slope_trusted;
  c->idle_priority = vs.idle_priority;
  c->idle_priority_dropped = vs.idle_priority_dropped;
  double during_s = (double)(t3 - t2) / 1e9;
  c->fg_tps_baseline = base_s > 0 ? (double)base.ops / base_s : 0;
  c->fg_tps_during = during_s > 0 ? (double)during.ops / during_s : 0;
  c->fg_p99_us_baseline = latency_hist_quantile_us(&base.hist, 0.99);
  c->fg_p99_us_during = latency_hist_quantile_us(&during.hist, 0.99);
  c->fg_p50_us_baseline = latency_hist_quantile_us(&base.hist, 0.5);
  c->fg_p50_us_during = latency_hist_quantile_us(&during.hist, 0.5);
  c->fg_service_p99_us_baseline = latency_hist_quantile_us(&base.service, 0.99);
  c->fg_service_p99_us_during = latency_hist_quantile_us(&during.service, 0.99);
  c->fg_service_p9999_us_baseline = latency_hist_quantile_us(&base.service, 0.9999);
  c->fg_service_p9999_us_during = latency_hist_quantile_us(&during.service, 0.9999);
  c->fg_runq_us_per_op_baseline = base.ops ? (double)base.runq_ns / (double)base.ops / 1e3 : 0;
  c->fg_runq_us_per_op_during = during.ops ? (double)during.runq_ns / (double)during.ops / 1e3 : 0;
  c->fg_mean_us_baseline = base.ops ? (double)base.sum_ns / (double)base.ops / 1e3 : 0;
  c->fg_mean_us_during = during.ops ? (double)during.sum_ns / (double)during.ops / 1e3 : 0;
  hs_strategy_destroy(ring);
  free(rt.t_ns);
  free(rt.size);
  return st;
}

/* The unpaced foreground's rate, for the paced clients' offer. */
static hs_status measure_unpaced(const vac_bench *b, lab *l, double *rate) {
  fg_group g;
  fg_group_init(&g, b, l, b->seed, 0);
  hs_status st = fg_start(&g, (uint32_t)b->clients);
  if (st != HS_OK) return st;
  double seconds = measure_alone(b, l, &g, NULL, NULL, NULL);
  fg_stop(&g);
  fg_tally t;
  fg_collect(&g, FG_BASELINE, &t);
  if (g.err[0]) st = hs_fail(HS_ERR_INVALID, 0, "foreground: %s", g.err);
  fg_release(&g);
  *rate = (double)t.ops / seconds;
  return st;
}

/* Where the table's size came from, for the header. */
static const char *table_origin(const vac_bench *b) {
  if (b->table_flag) return b->full ? " as given; --full leaves it" : " as given";
  return b->full ? ", from --full" : ", the default; --full: " VAC_TABLE_FULL;
}

int bench_vacuum_main(int argc, char **argv) {
  vac_bench b = {0};
  parse_flags(&b, argc, argv);
  /* One policy the pool runs; an unknown one is answered with the pool's. */
  static char spec[1][ARGS_SPEC_LEN];
  const char *why = NULL;
  if (args_split_policies(b.policy, true, spec, 1, &why) < 0)
    args_usage_error(cmd, "--policy: \"%s\": %s", b.policy, why);
  b.policy = spec[0];
  static cell_list cells;
  build_cells(&b, &cells);
  if (!cells.n) args_usage_error(cmd, "no cells to run");
  /* Find out now, not after minutes of measuring, that no chart can be
   * drawn (as bench scan does). */
  if (b.plot_file) {
    const char *dot = strrchr(b.plot_file, '.');
    if (!dot || (strcmp(dot, ".png") != 0 && strcmp(dot, ".svg") != 0))
      args_usage_error(cmd, "--plot: \"%s\" must end in .png or .svg", b.plot_file);
    /* Drawn at the end of the run: what would stop it shows now. */
    if (gnuplot_check_output(PROG, b.plot_file) != 0) return 1;
  }
  bench_signals_install();

  char tmp[BENCH_DIR_MAX];
  const char *base;
  hs_status st = bench_base_dir(b.dir_flag, "vacuum", tmp, sizeof tmp, &base);
  if (st == HS_OK) st = bench_check_memory(b.pool_bytes, "the pool");
  if (st == HS_OK) st = bench_check_space(base, b.table_bytes * 3, "the table, its index and log");
  if (st != HS_OK) {
    fprintf(stderr, PROG ": %s\n", hs_last_error());
    return 1;
  }
  lab l = {0};
  bench_rng_seed(&l.rng, b.seed, 0xdead);
  double paced = b.fg_rate;
  uint64_t t_load = bench_now_ns();
  st = lab_open(&b, base, &l);
  if (st == HS_OK) st = load(&b, &l);
  hs_vacuum_stats first;
  if (st == HS_OK) st = hs_vacuum(l.h, l.ix, NULL, &first);
  if (st == HS_OK) st = hs_pool_checkpoint(l.pool);
  double load_s = (double)(bench_now_ns() - t_load) / 1e9;
  double unpaced = 0;
  if (st == HS_OK) st = measure_unpaced(&b, &l, &unpaced);
  if (st == HS_OK && paced <= 0) paced = unpaced / 2;
  hs_blockno nb = 0;
  if (st == HS_OK) st = heap_blocks(&l, &nb);
  b.table_pages = nb;
  b.table_rows = l.rows;
  if (st == HS_OK && !b.json) {
    char pool_s[32], table_s[32];
    printf("table: %" PRIu64
           " rows, %u pages (%s; --table %s%s) loaded in %.1f s; pool %s; %" PRIu64
           " clients, unpaced %.0f lookups/s, paced at %.0f/s\n",
           l.rows, nb, bench_format_bytes((uint64_t)nb * PAGE_BYTES, table_s, sizeof table_s),
           b.table_spec, table_origin(&b), load_s,
           bench_format_bytes(b.pool_bytes, pool_s, sizeof pool_s), b.clients, unpaced, paced);
    fflush(stdout);
  }
  size_t done = 0;
  for (; st == HS_OK && done < cells.n; done++) {
    if (bench_interrupted()) break;
    st = run_cell(&b, &l, paced, done, &cells.c[done]);
    if (st != HS_OK) break;
    if (b.json)
      vac_print_json(&b, &cells.c[done]);
    else if (isatty(STDERR_FILENO)) {
      /* Progress for who watches; a run that works writes nothing to a
       * stderr that is a file or a pipe (scripts read that as trouble). */
      if (cells.c[done].kind != VAC_CELL_VACUUM)
        fprintf(stderr, "  cell %zu/%zu done: %s fg, calibration: %s\n", done + 1, cells.n,
                vac_fg_name(cells.c[done].fg), vac_cell_kind_name(cells.c[done].kind));
      else
        fprintf(stderr, "  cell %zu/%zu done: %s fg, ring %s, delay %g ms, throttle %s\n", done + 1,
                cells.n, vac_fg_name(cells.c[done].fg), cells.c[done].ring,
                cells.c[done].cost_delay_ms, cells.c[done].throttle_auto ? "auto" : "off");
    }
    fflush(stdout);
  }
  if (st != HS_OK) fprintf(stderr, PROG ": %s\n", hs_last_error());
  lab_close(&l);
  if (!b.dir_flag) bench_tempdir_remove(tmp);
  if (bench_interrupted()) bench_exit_interrupted(PROG);
  if (st != HS_OK) return 1;
  if (!b.json) {
    vac_print_table(&b, cells.c, done);
    vac_print_pareto(cells.c, done);
  }
  if (b.plot_file && vac_plot(b.plot_file, cells.c, done) != 0) return 1;
  return 0;
}
