/*
 * cli/replay.c — `hotset replay`: a trace driven through the real pool.
 *
 * `hotset sim` models a policy over object ids; this runs the same trace
 * through hs_pool_read over real relation files, so what it reports is what
 * the buffer pool itself does: its misses (the `hit` out-parameter), its
 * reads from the files and its speed, frames, pins and locks included.
 *
 * Each request names a block. With the split layout a 64-bit id is a
 * (relation, block) pair: the relation is id >> 32 and the block
 * id & 0xffffffff, the way an oracleGeneral trace written from PostgreSQL
 * numbers its pages, and each relation is made as long as the highest block
 * the trace reads in it. Ids that are not such pairs (hashed or scrambled
 * keys) would ask for relations of billions of blocks; the dense layout then
 * numbers the distinct ids 0, 1, 2... in order of first request, as the
 * blocks of one relation. Which block an id becomes does not change which
 * requests miss: the pool's policies see frames, never block numbers.
 *
 * The replay keeps the trace's order on one thread (--ordered), which is
 * what makes its misses comparable one for one with `hotset sim
 * --ignore-size` at the same number of pages.
 */
#include "cli/replay.h"

#include "bench/bench_util.h"
#include "cli/args.h"
#include "cli/json.h"
#include "cli/sim_cmd.h"
#include "core/error.h"
#include "hotset/policy.h"
#include "hotset/pool.h"
#include "hotset/stats.h"
#include "sim/trace.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG "hotset replay"
/* The relation of the dense layout (PostgreSQL's first user relfilenode). */
#define DENSE_REL 16384u
/* Requests between two looks at bench_interrupted(). */
#define CHECK_INTERVAL 65536u
/* --layout auto: blocks the split layout may add beyond twice the distinct ids. */
#define AUTO_SPLIT_SLACK 65536u
#define READ_CHUNK       4096u

static const args_command command = {
    .cmd = {.prog = PROG},
    .synopsis = "--trace PATH --pool SIZE [flags]",
    .about = "Creates real relation files sized from the trace and drives the trace through\n"
             "the real buffer pool (hs_pool_read, then release), in the trace's order on one\n"
             "thread, once per policy. Misses are reads the pool had to make; with --ordered\n"
             "they equal `hotset sim --ignore-size` at the same number of pages.\n",
    .notes = ARGS_SIZE_NOTE
    "Layouts: split reads a 64-bit id as relation id >> 32, block id & 0xffffffff\n"
    "(an oracleGeneral trace of PostgreSQL pages), each relation as long as the\n"
    "highest block read in it; dense numbers the distinct ids 0, 1, 2... in order\n"
    "of first request, as blocks of one relation; auto takes split unless its\n"
    "relations would hold more than twice the trace's distinct ids plus 65536\n"
    "blocks. Which block an id becomes does not change which requests miss.\n"
    "It refuses to start (exit 1) when the relations would not fit in the free\n"
    "space. On SIGINT or SIGTERM it stops, removes its temporary directory and dies\n"
    "by that signal.\n",
};
static const args_cmd *const cmd = &command.cmd;

/* ---- a map from 64-bit keys to 32-bit values (open addressing) ---- */

#define MAP_EMPTY UINT32_MAX

typedef struct id_map {
  uint64_t *keys;
  uint32_t *vals; /* MAP_EMPTY: the slot is free */
  size_t cap;     /* a power of two */
  size_t n;
} id_map;

static uint64_t mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

static bool map_init(id_map *m, size_t cap) {
  m->cap = cap;
  m->n = 0;
  m->keys = malloc(cap * sizeof *m->keys);
  m->vals = malloc(cap * sizeof *m->vals);
  if (!m->keys || !m->vals) return false;
  memset(m->vals, 0xff, cap * sizeof *m->vals);
  return true;
}

static void map_free(id_map *m) {
  free(m->keys);
  free(m->vals);
  m->keys = NULL;
  m->vals = NULL;
}

static uint32_t *map_find(const id_map *m, uint64_t key) {
  size_t mask = m->cap - 1;
  for (size_t i = mix64(key) & mask;; i = (i + 1) & mask) {
    if (m->vals[i] == MAP_EMPTY) return NULL;
    if (m->keys[i] == key) return &m->vals[i];
  }
}

/* The value slot of `key`, inserted (holding MAP_EMPTY, which the caller
 * overwrites) if missing; NULL when out of memory. */
static uint32_t *map_slot(id_map *m, uint64_t key) {
  if ((m->n + 1) * 2 > m->cap) {
    id_map bigger;
    if (!map_init(&bigger, m->cap * 2)) {
      map_free(&bigger);
      return NULL;
    }
    for (size_t i = 0; i < m->cap; i++)
      if (m->vals[i] != MAP_EMPTY) *map_slot(&bigger, m->keys[i]) = m->vals[i];
    map_free(m);
    *m = bigger;
  }
  size_t mask = m->cap - 1;
  size_t i = mix64(key) & mask;
  for (; m->vals[i] != MAP_EMPTY; i = (i + 1) & mask)
    if (m->keys[i] == key) return &m->vals[i];
  m->keys[i] = key;
  m->n++;
  return &m->vals[i];
}

/* ---- the trace, read into memory as (relation << 32 | block) ---- */

typedef struct replay_rel {
  hs_relid rel;
  hs_blockno nblocks;
} replay_rel;

typedef struct replay_trace {
  uint64_t *req; /* per request: the trace's id, then (rel << 32 | block) */
  uint64_t n, cap;
  uint64_t distinct;  /* distinct ids */
  const char *layout; /* "split" or "dense" */
  replay_rel *rels;   /* the relations to make, by relation number */
  size_t nrels;
  uint64_t blocks;     /* their blocks, together */
  double load_seconds; /* reading the trace and laying it out */
} replay_trace;

static void replay_trace_free(replay_trace *t) {
  free(t->req);
  free(t->rels);
}

static hs_status read_ids(const char *path, const hs_trace_options *topts, replay_trace *t) {
  hs_trace *tr;
  hs_status st = hs_trace_open(path, topts, &tr);
  if (st != HS_OK) return st;
  hs_request *chunk = malloc(READ_CHUNK * sizeof *chunk);
  if (!chunk) {
    hs_trace_close(tr);
    return hs_fail(HS_ERR_NOMEM, 0, "out of memory reading %s", path);
  }
  for (;;) {
    size_t got = 0;
    st = hs_trace_read(tr, chunk, READ_CHUNK, &got);
    if (st != HS_OK) break;
    if (t->n + got > t->cap) {
      uint64_t cap = t->cap ? t->cap * 2 : 1u << 16;
      uint64_t *bigger = realloc(t->req, cap * sizeof *bigger);
      if (!bigger) {
        st = hs_fail(HS_ERR_NOMEM, 0, "out of memory holding %" PRIu64 " requests of %s", t->n,
                     path);
        break;
      }
      t->req = bigger;
      t->cap = cap;
    }
    for (size_t i = 0; i < got; i++) t->req[t->n++] = chunk[i].id;
    if (got < READ_CHUNK) break;
    if (bench_interrupted()) {
      st = hs_fail(HS_ERR_INVALID, 0, "interrupted");
      break;
    }
  }
  free(chunk);
  hs_trace_close(tr);
  return st;
}

static int rel_order(const void *a, const void *b) {
  const replay_rel *x = a, *y = b;
  return x->rel < y->rel ? -1 : x->rel > y->rel;
}

/* Chooses the layout and rewrites every request as (rel << 32 | block). */
static hs_status lay_out(const char *layout_flag, replay_trace *t) {
  id_map ids = {0}, rels = {0};
  hs_status st = HS_OK;
  if (!map_init(&ids, 1024) || !map_init(&rels, 64)) {
    st = hs_fail(HS_ERR_NOMEM, 0, "out of memory mapping the trace's ids");
    goto out;
  }
  /* One pass finds the distinct ids (numbered in order of first request)
   * and, per relation of the split layout, the highest block read. */
  bool split_ok = true;
  for (uint64_t i = 0; i < t->n; i++) {
    uint64_t id = t->req[i];
    uint32_t *v = map_slot(&ids, id);
    uint32_t *r = v ? map_slot(&rels, id >> 32) : NULL;
    if (!v || !r) {
      st = hs_fail(HS_ERR_NOMEM, 0, "out of memory mapping the trace's ids");
      goto out;
    }
    if (*v == MAP_EMPTY) {
      if (ids.n >= HS_INVALID_BLOCK) {
        st = hs_fail(HS_ERR_INVALID, 0, "more than %u distinct ids", HS_INVALID_BLOCK - 1);
        goto out;
      }
      *v = (uint32_t)(ids.n - 1);
    }
    uint32_t block = (uint32_t)id;
    if (block == HS_INVALID_BLOCK) split_ok = false; /* no relation can hold it */
    /* The map's values are block counts: the highest block read, plus one. */
    else if (*r == MAP_EMPTY || *r < block + 1)
      *r = block + 1;
  }
  t->distinct = ids.n;
  uint64_t split_blocks = 0;
  for (size_t i = 0; i < rels.cap; i++)
    if (rels.vals[i] != MAP_EMPTY) split_blocks += rels.vals[i];

  bool split;
  if (strcmp(layout_flag, "split") == 0) {
    if (!split_ok) {
      st = hs_fail(HS_ERR_INVALID, 0,
                   "an id's block (id & 0xffffffff) is 0xffffffff, which no relation holds: "
                   "try --layout dense");
      goto out;
    }
    split = true;
  } else if (strcmp(layout_flag, "dense") == 0) {
    split = false;
  } else {
    /* Holes are cheap in a few relations (PostgreSQL's traces read most of a
     * table's blocks), absurd for hashed ids. */
    split = split_ok && split_blocks <= 2 * t->distinct + AUTO_SPLIT_SLACK;
  }

  if (split) {
    t->layout = "split";
    t->rels = malloc(rels.n * sizeof *t->rels);
    if (!t->rels) {
      st = hs_fail(HS_ERR_NOMEM, 0, "out of memory for %zu relations", rels.n);
      goto out;
    }
    for (size_t i = 0; i < rels.cap; i++)
      if (rels.vals[i] != MAP_EMPTY)
        t->rels[t->nrels++] = (replay_rel){(hs_relid)rels.keys[i], rels.vals[i]};
    qsort(t->rels, t->nrels, sizeof *t->rels, rel_order);
    t->blocks = split_blocks; /* the ids are (rel << 32 | block) already */
  } else {
    t->layout = "dense";
    t->rels = malloc(sizeof *t->rels);
    if (!t->rels) {
      st = hs_fail(HS_ERR_NOMEM, 0, "out of memory");
      goto out;
    }
    t->rels[0] = (replay_rel){DENSE_REL, (hs_blockno)t->distinct};
    t->nrels = 1;
    t->blocks = t->distinct;
    for (uint64_t i = 0; i < t->n; i++)
      t->req[i] = (uint64_t)DENSE_REL << 32 | *map_find(&ids, t->req[i]);
  }
out:
  map_free(&ids);
  map_free(&rels);
  return st;
}

/* ---- running ---- */

/* Everything main cleans up after a failure or a signal. */
typedef struct replay_run {
  char tmpdir[4096];
  char datadir[4200];
  hs_pool *pool;
  replay_trace trace;
} replay_run;

static void replay_cleanup(replay_run *d) {
  if (d->pool) hs_pool_abandon(d->pool);
  d->pool = NULL;
  if (d->tmpdir[0]) bench_tempdir_remove(d->tmpdir);
  d->tmpdir[0] = '\0';
  replay_trace_free(&d->trace);
  memset(&d->trace, 0, sizeof d->trace);
}

static int replay_fail(replay_run *d, const char *what, const char *msg) {
  /* msg is often hs_last_error(), which the cleanup may overwrite. */
  char why[1024];
  snprintf(why, sizeof why, "%s", msg);
  replay_cleanup(d);
  if (bench_interrupted()) bench_exit_interrupted(PROG); /* the failure is the signal's doing */
  if (what)
    fprintf(stderr, PROG ": %s: %s\n", what, why);
  else
    fprintf(stderr, PROG ": %s\n", why);
  return 1;
}

static void replay_stop_if_interrupted(replay_run *d) {
  if (!bench_interrupted()) return;
  replay_cleanup(d);
  bench_exit_interrupted(PROG);
}

typedef struct replay_result {
  char spec[ARGS_SPEC_LEN * 2];
  uint32_t pool_pages;
  uint64_t misses, reads;
  double seconds;
} replay_result;

/* One policy: a fresh pool over the relations, the whole trace through it. */
static hs_status replay_one(replay_run *d, const char *spec, uint32_t page_size,
                            uint64_t pool_bytes, replay_result *res) {
  hs_pool_options po;
  hs_pool_options_init(&po);
  po.dir = d->datadir;
  po.page_size = page_size;
  po.pool_bytes = pool_bytes;
  po.policy = spec;
  hs_status st = hs_pool_open(&po, &d->pool);
  if (st != HS_OK) return st;
  res->pool_pages = hs_pool_nbuffers(d->pool);

  const uint64_t *req = d->trace.req;
  uint64_t n = d->trace.n, misses = 0;
  uint64_t t0 = bench_now_ns();
  for (uint64_t i = 0; i < n; i++) {
    hs_relid rel = (hs_relid)(req[i] >> 32);
    hs_blockno block = (hs_blockno)req[i];
    hs_buf b;
    bool hit = false;
    st = hs_pool_read(d->pool, rel, HS_FORK_MAIN, block, HS_READ_NORMAL, NULL, &b, &hit);
    if (st != HS_OK) {
      char why[512];
      snprintf(why, sizeof why, "%s", hs_last_error());
      return hs_fail(st, 0, "request %" PRIu64 " (relation %u, block %u): %s", i + 1, rel, block,
                     why);
    }
    if (!hit) {
      misses++;
      /* A page read from its file must be the block asked for. */
      const void *page = hs_buf_page(d->pool, b);
      if (!bench_page_check(page, rel, block)) {
        hs_blockno found = bench_page_block(page);
        hs_buf_release(d->pool, b);
        return hs_fail(HS_ERR_CORRUPT, 0, "request %" PRIu64 ": block %u holds block %u's stamp",
                       i + 1, block, found);
      }
    }
    hs_buf_release(d->pool, b);
    if ((i + 1) % CHECK_INTERVAL == 0 && bench_interrupted())
      return hs_fail(HS_ERR_INVALID, 0, "interrupted");
  }
  res->seconds = (double)(bench_now_ns() - t0) / 1e9;
  res->misses = misses;
  hs_io_stats stats;
  hs_pool_stats(d->pool, &stats);
  res->reads = hs_io_stats_total(&stats, HS_STAT_READS);

  /* The spec with every parameter spelled out, as `hotset sim` prints it. */
  hs_policy *p;
  if (hs_policy_create(spec, 1, 1, &p) == HS_OK) {
    snprintf(res->spec, sizeof res->spec, "%s", hs_policy_spec(p));
    hs_policy_destroy(p);
  } else {
    snprintf(res->spec, sizeof res->spec, "%.*s", ARGS_SPEC_LEN - 1, spec);
  }
  st = hs_pool_close(d->pool);
  if (st != HS_OK) return st;
  d->pool = NULL;
  return HS_OK;
}

int replay_main(int argc, char **argv) {
  const char *trace_path = NULL, *format_name = "auto", *csv_spec = NULL, *policy = NULL,
             *layout = NULL, *dir_flag = NULL;
  uint64_t pool_bytes = 0, page_size = 0;
  bool ordered = true, json = false;
  const args_opt opts[] = {
      {.name = "trace",
       .kind = ARGS_STRING,
       .dest = &trace_path,
       .arg = "PATH",
       .help = "the trace (any format `hotset sim` reads)"},
      {.name = "format",
       .kind = ARGS_STRING,
       .dest = &format_name,
       .arg = "F",
       .def = "auto",
       .help = "auto, oraclegeneral, vscsi, csv or txt"},
      {.name = "csv",
       .kind = ARGS_STRING,
       .dest = &csv_spec,
       .arg = "SPEC",
       .help = "csv columns: id=COL[,header][,delimiter=X] (1-based)"},
      {.name = "pool",
       .kind = ARGS_SIZE,
       .dest = &pool_bytes,
       .min = 1,
       .help = "pool size (required); its pages are SIZE / --page-size"},
      BENCH_OPT_PAGE_SIZE(&page_size),
      {.name = "policy",
       .kind = ARGS_STRING,
       .dest = &policy,
       .arg = "LIST",
       .def = "clock-sweep",
       .help = "pool policies, comma-separated, each name[:key=value,...]; \"all\": every "
               "policy the pool takes"},
      {.name = "layout",
       .kind = ARGS_STRING,
       .dest = &layout,
       .arg = "L",
       .def = "auto",
       .help = "how ids become blocks: auto, split or dense (below)"},
      {.name = "ordered",
       .kind = ARGS_FLAG,
       .dest = &ordered,
       .def = "true",
       .help = "one thread in the trace's order (the only mode so far)"},
      BENCH_OPT_DIR(&dir_flag),
      {.name = "json",
       .kind = ARGS_FLAG,
       .dest = &json,
       .help = "one JSON object per policy per line"},
  };
  args_parse(cmd, opts, sizeof opts / sizeof opts[0], argc, argv, 0);
  if (!trace_path) args_usage_error(cmd, "--trace: a trace file is required");
  if (!pool_bytes) args_usage_error(cmd, "--pool: the pool's size is required (e.g. 16MiB)");
  if (!ordered)
    args_usage_error(cmd, "--ordered=false: replay on several threads is not implemented yet");
  if (pool_bytes / page_size == 0) {
    char pool[32], page[32];
    args_usage_error(cmd, "--pool: %s holds no page of %s",
                     args_format_size(pool_bytes, pool, sizeof pool),
                     args_format_size(page_size, page, sizeof page));
  }
  if (strcmp(layout, "auto") != 0 && strcmp(layout, "split") != 0 && strcmp(layout, "dense") != 0)
    args_usage_error(cmd, "--layout: \"%s\" is not auto, split or dense", layout);
  hs_trace_options topts = trace_options_from_flags(cmd, format_name, csv_spec, false, NULL);
  static char specs[ARGS_LIST_MAX][ARGS_SPEC_LEN];
  const char *why = NULL;
  int nspecs = args_split_policies(policy, true, specs, ARGS_LIST_MAX, &why);
  if (nspecs < 0) args_usage_error(cmd, "--policy: \"%s\": %s", policy, why);
  for (int i = 0; i < nspecs; i++) {
    hs_policy *p;
    if (hs_policy_create(specs[i], 1, 1, &p) != HS_OK)
      args_usage_error(cmd, "--policy: %s", hs_last_error());
    hs_policy_destroy(p);
  }
  if (bench_check_memory(pool_bytes, "its pool") != HS_OK) {
    fprintf(stderr, PROG ": %s\n", hs_last_error());
    return 1;
  }
  bench_signals_install();

  replay_run d = {0};
  uint64_t t0 = bench_now_ns();
  if (read_ids(trace_path, &topts, &d.trace) != HS_OK)
    return replay_fail(&d, NULL, hs_last_error());
  if (d.trace.n == 0) return replay_fail(&d, trace_path, "the trace holds no request");
  if (lay_out(layout, &d.trace) != HS_OK) return replay_fail(&d, trace_path, hs_last_error());
  d.trace.load_seconds = (double)(bench_now_ns() - t0) / 1e9;
  replay_stop_if_interrupted(&d);

  /* Refuse now what could only end in ENOSPC after minutes of writing:
   * ids read as (relation, block) pairs may ask for absurd relations. */
  char need_what[160];
  snprintf(need_what, sizeof need_what, "its %zu relation%s of %" PRIu64 " blocks (%s layout)",
           d.trace.nrels, d.trace.nrels == 1 ? "" : "s", d.trace.blocks, d.trace.layout);
  uint64_t need = d.trace.blocks > UINT64_MAX / page_size ? UINT64_MAX : d.trace.blocks * page_size;
  if (bench_check_space(dir_flag ? dir_flag : bench_tempdir_parent(), need, need_what) != HS_OK)
    return replay_fail(&d, NULL, hs_last_error());

  if (dir_flag) {
    snprintf(d.datadir, sizeof d.datadir, "%s", dir_flag);
  } else {
    if (bench_tempdir_make("replay", d.tmpdir, sizeof d.tmpdir) != HS_OK)
      return replay_fail(&d, "creating a temporary directory", hs_last_error());
    snprintf(d.datadir, sizeof d.datadir, "%s/data", d.tmpdir);
  }
  hs_smgr *smgr;
  if (hs_smgr_open(d.datadir, (uint32_t)page_size, &smgr) != HS_OK)
    return replay_fail(&d, "opening the data directory", hs_last_error());
  for (size_t i = 0; i < d.trace.nrels; i++) {
    if (bench_make_relation(smgr, d.trace.rels[i].rel, d.trace.rels[i].nblocks) != HS_OK) {
      char what[64];
      snprintf(what, sizeof what, "creating relation %u", d.trace.rels[i].rel);
      hs_smgr_close(smgr);
      return replay_fail(&d, what, hs_last_error());
    }
  }
  hs_smgr_close(smgr);
  replay_stop_if_interrupted(&d);

  if (!json)
    printf("%-40s %10s %12s %12s %10s %12s %8s %12s\n", "policy", "pool_pages", "requests",
           "misses", "miss%", "reads", "seconds", "ops/s");
  for (int i = 0; i < nspecs; i++) {
    replay_result r = {0};
    if (replay_one(&d, specs[i], (uint32_t)page_size, pool_bytes, &r) != HS_OK) {
      return replay_fail(&d, specs[i], hs_last_error());
    }
    double mr = (double)r.misses / (double)d.trace.n;
    double ops = r.seconds > 0 ? (double)d.trace.n / r.seconds : 0;
    if (json) {
      json_out j;
      json_begin(&j, stdout);
      json_str(&j, "trace", trace_path);
      json_str(&j, "policy", r.spec);
      json_u64(&j, "pool_pages", r.pool_pages);
      json_u64(&j, "page_size", page_size);
      json_u64(&j, "requests", d.trace.n);
      json_u64(&j, "misses", r.misses);
      json_double(&j, "miss_ratio", "%.6f", mr);
      json_u64(&j, "reads", r.reads);
      json_double(&j, "seconds", "%.3f", r.seconds);
      json_double(&j, "load_seconds", "%.3f", d.trace.load_seconds);
      json_double(&j, "ops_per_sec", "%.1f", ops);
      json_u64(&j, "threads", 1);
      json_bool(&j, "ordered", true);
      json_str(&j, "layout", d.trace.layout);
      json_u64(&j, "relations", d.trace.nrels);
      json_u64(&j, "blocks", d.trace.blocks);
      json_end_line(&j);
    } else {
      printf("%-40s %10u %12" PRIu64 " %12" PRIu64 " %9.4f%% %12" PRIu64 " %8.3f %12.0f\n", r.spec,
             r.pool_pages, d.trace.n, r.misses, 100 * mr, r.reads, r.seconds, ops);
      fflush(stdout);
    }
  }
  if (!json)
    printf("%s: %" PRIu64 " requests over %" PRIu64 " blocks in %zu relation%s (%s layout), "
           "one thread in trace order\n",
           trace_path, d.trace.n, d.trace.blocks, d.trace.nrels, d.trace.nrels == 1 ? "" : "s",
           d.trace.layout);
  replay_cleanup(&d);
  return 0;
}
