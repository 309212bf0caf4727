/*
 * sim/sim.c — loading a trace and replaying it through a policy.
 *
 * The replay loop is the whole simulator: for each request, a hit if the
 * object is resident, else a miss that asks the policy for victims until the
 * object fits, then inserts it. The policy's keys are the dense object
 * numbers, so no hash table is touched per request.
 *
 * Slots. When every entry has one size (object mode, or a trace whose
 * requests all have one size) slots are frames, handed out exactly as the
 * pool hands out buffers: the free slots in order 0 .. n-1 while the cache
 * fills, then the victim's slot to the object that evicted it; an array
 * indexed by object keeps each object's slot. The policy then sees the same
 * slots as in the pool — which matters to a clock hand (clock-sweep's
 * circles slots: were an object's slot its number, a returning object would
 * land wherever its number is, not in the frame the hand just left) — and
 * its per-slot arrays are the cache's size, not the trace's. With mixed
 * sizes one miss may evict several entries, or none, so there is no frame
 * to hand on: an object's slot is its dense number.
 *
 * Sizes: in byte mode an object's size is that of its current request (the
 * vscsi and csv encodings of a trace let it change); a hit does not resize a
 * resident object, as in libCacheSim. An object larger than the cache is a
 * miss and is not admitted. With ignore_size every object counts 1.
 *
 * Loading keeps every request in memory, so a trace that does not end
 * (/dev/zero read as oraclegeneral, a pipe, a zstd bomb) or one far bigger
 * than memory would take the machine down with it. The loader therefore
 * stops at a cap on requests, by default derived from the memory the
 * process may use, and says how far it got; the arrays never grow past it.
 */
#include "sim/sim.h"

#include "core/big_alloc.h"
#include "core/error.h"
#include "hotset/policy.h"
#include "sim/idmap.h"
#include "sim/trace_clock.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* ---- the memory cap -------------------------------------------------- */

/* A cgroup's memory limit from `path` ("max" or a missing file: none). */
static uint64_t cgroup_limit(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return UINT64_MAX;
  unsigned long long v;
  bool got = fscanf(f, "%llu", &v) == 1;
  fclose(f);
  return got && v > 0 ? (uint64_t)v : UINT64_MAX;
}

uint64_t hs_sim_usable_memory(void) {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  uint64_t m = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : UINT64_MAX;
  static const int limits[] = {RLIMIT_AS, RLIMIT_DATA};
  for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++) {
    struct rlimit rl;
    if (getrlimit(limits[i], &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && (uint64_t)rl.rlim_cur < m)
      m = (uint64_t)rl.rlim_cur;
  }
  uint64_t cg = cgroup_limit("/sys/fs/cgroup/memory.max"); /* cgroup v2 */
  if (cg < m) m = cg;
  cg = cgroup_limit("/sys/fs/cgroup/memory/memory.limit_in_bytes"); /* v1 */
  if (cg < m) m = cg;
  /* No figure at all: assume a small machine rather than none. */
  return m == UINT64_MAX ? (uint64_t)1 << 32 : m;
}

uint64_t hs_sim_default_max_requests(void) {
  uint64_t n = hs_sim_usable_memory() / 2 / HS_SIM_BYTES_PER_REQUEST;
  return n > 0 ? n : 1;
}

/* The over-the-limit message: how far loading got, and what to do. */
static hs_status over_limit(const char *path, const hs_sim_load_options *lim, uint64_t max,
                            bool is_default, uint64_t objects, uint64_t file_bytes) {
  char which[160] = "the limit";
  if (is_default)
    snprintf(which, sizeof which,
             "the default limit: what fits in half of the %" PRIu64
             " MiB this process may use at %u bytes a request",
             hs_sim_usable_memory() >> 20, HS_SIM_BYTES_PER_REQUEST);
  char raise[96] = "";
  if (lim && lim->flag) snprintf(raise, sizeof raise, "; %s raises it", lim->flag);
  return hs_fail(HS_ERR_NOMEM, 0,
                 "%s: stopped loading after %" PRIu64 " requests, %s (%" PRIu64
                 " distinct objects so far, %" PRIu64 " bytes of the file read)%s",
                 path, max, which, objects, file_bytes, raise);
}

/* ---- loading ------------------------------------------------------------ */

/* Grows the request arrays (time_ms too when `with_time`, found when
 * `want_found`) to hold at least `need` entries, doubling, but never past
 * `max` entries. */
static bool grow_arrays(hs_sim_trace *t, uint64_t *cap, uint64_t need, uint64_t max, bool with_time,
                        bool want_found) {
  uint64_t n = *cap ? *cap : 1u << 20;
  while (n < need) n *= 2;
  if (n > max) n = max;
  uint32_t *obj = realloc(t->obj, sizeof *obj * n);
  if (!obj) return false;
  t->obj = obj;
  big_advise_huge(obj, sizeof *obj * n);
  if (t->size) { /* NULL while every size is the first one (record_sizes) */
    uint32_t *size = realloc(t->size, sizeof *size * n);
    if (!size) return false;
    t->size = size;
    big_advise_huge(size, sizeof *size * n);
  }
  if (with_time) {
    uint64_t *time_ms = realloc(t->time_ms, sizeof *time_ms * n);
    if (!time_ms) return false;
    t->time_ms = time_ms;
    big_advise_huge(time_ms, sizeof *time_ms * n);
  }
  if (want_found) {
    int8_t *found = realloc(t->found, sizeof *found * n);
    if (!found) return false;
    t->found = found;
  }
  *cap = n;
  return true;
}

/* The requests an uncompressed oracleGeneral file holds, from its size (0:
 * unknown), so that the arrays are allocated once at their final size
 * instead of doubled and copied. Only a first guess: a shorter or longer
 * file still loads. */
static uint64_t expected_requests(hs_trace *tr) {
  if (hs_trace_format_of(tr) != HS_TRACE_ORACLEGENERAL || hs_trace_compressed(tr)) return 0;
  return hs_trace_file_size(tr) / 24;
}

/* Requests read per batch: big enough that handing a batch to the mapper
 * costs nothing next to mapping it, small enough to stay in the caches. */
#define LOAD_BATCH 16384

/* What the reading thread keeps of each request besides its size: its
 * time (when the clock is kept), the server's own hit or miss (when the
 * trace has it), its pid among the distinct ones (when it has pids), and
 * for finding scans its page id and pid (held until the end of loading). */
typedef struct reader_side {
  trace_clock clock;
  bool with_time, find_scans, want_found, want_pids;
  hs_idmap pid_set;             /* want_pids: the distinct pids */
  bool no_memory;               /* pid_set could not grow */
  uint64_t *page_ids, scan_cap; /* find_scans: page_ids and pids have scan_cap */
  uint32_t *pids;               /* entries; pids only when the trace has pids */
} reader_side;

/* The arrays of find_scans, grown to `cap` entries. False if out of memory. */
static bool grow_scan_arrays(reader_side *rs, bool has_pids, uint64_t cap) {
  if (!rs->find_scans || rs->scan_cap >= cap) return true;
  uint64_t *ids = realloc(rs->page_ids, sizeof *ids * cap);
  if (ids) rs->page_ids = ids;
  uint32_t *pids = has_pids ? realloc(rs->pids, sizeof *pids * cap) : NULL;
  if (pids) rs->pids = pids;
  if (!ids || (has_pids && !pids)) return false;
  rs->scan_cap = cap;
  return true;
}

/* The size array, made when request r's size is the first to differ from
 * the first request's: every earlier request had that one. Until then a
 * trace of one size (most block traces) has none, which saves loading
 * 4 bytes a request of memory to fault in and fill. */
static bool make_size_array(hs_sim_trace *t, uint64_t r, uint64_t cap) {
  uint32_t *size = malloc(sizeof *size * cap);
  if (!size) return false;
  big_advise_huge(size, sizeof *size * cap);
  for (uint64_t i = 0; i < r; i++) size[i] = t->uniform_size;
  t->size = size;
  return true;
}

/* The sizes of batch[0 .. n-1], requests from .. from+n-1 of the trace
 * (whose arrays have `cap` entries), into its size array and its totals,
 * and what `rs` keeps (the half of loading that needs no id map, done by
 * the reading thread). */
static void record_sizes(hs_sim_trace *t, reader_side *rs, const hs_request *batch, uint64_t from,
                         size_t n, uint64_t cap) {
  for (size_t i = 0; i < n; i++) {
    if (rs->with_time) t->time_ms[from + i] = trace_clock_next(&rs->clock, batch[i].time);
    if (rs->want_found) {
      t->found[from + i] = batch[i].found;
      t->found_hits += batch[i].found == 1;
      t->found_misses += batch[i].found == 0;
    }
    if (rs->want_pids && !hs_idmap_add(&rs->pid_set, batch[i].pid)) rs->no_memory = true;
    if (rs->find_scans) {
      rs->page_ids[from + i] = batch[i].id;
      if (rs->pids) rs->pids[from + i] = batch[i].pid;
    }
    uint64_t size = batch[i].size ? batch[i].size : 1;
    if (size > UINT32_MAX) size = UINT32_MAX;
    if (from + i == 0) t->uniform_size = (uint32_t)size;
    if (!t->size && size != t->uniform_size && !make_size_array(t, from + i, cap)) {
      rs->no_memory = true;
      return;
    }
    if (t->size) t->size[from + i] = (uint32_t)size;
    t->bytes_requested += size;
    if (from + i == 0 || size < t->min_size) t->min_size = (uint32_t)size;
    if (size > t->max_size) t->max_size = (uint32_t)size;
  }
}

/* What can go wrong while mapping a batch (out of memory, or more objects
 * than dense numbers); the loading thread words the message. */
typedef enum map_failure { MAP_OK, MAP_NO_MEMORY, MAP_TOO_MANY_OBJECTS } map_failure;

/* The mapping half of loading: ids to dense numbers appended to the
 * trace's obj array (which the reading thread has made big enough and
 * whose sizes it has filled in), and each new object's first size. */
typedef struct mapper {
  hs_sim_trace *t;
  hs_idmap ids;
  uint32_t *first_size; /* per object: its first request's size */
  uint64_t objcap;      /* first_size's entries */
  map_failure failure;
} mapper;

static void map_batch(mapper *m, const hs_request *batch, const uint64_t *hash, size_t n) {
  hs_sim_trace *t = m->t;
  if (!hs_idmap_reserve(&m->ids, n)) {
    m->failure = MAP_NO_MEMORY;
    return;
  }
  uint64_t numbered = m->ids.count; /* objects whose first size is recorded */
  size_t mapped = hs_idmap_map_hashed(&m->ids, batch, hash, n, t->obj + t->requests);
  if (m->ids.count > m->objcap) {
    uint64_t cap = m->objcap;
    while (cap < m->ids.count) cap *= 2;
    uint32_t *fs = realloc(m->first_size, sizeof *fs * cap);
    if (!fs) {
      m->failure = MAP_NO_MEMORY;
      return;
    }
    m->first_size = fs;
    m->objcap = cap;
  }
  /* A new object's number is the count before it: its first request is
   * the first to carry it. The sizes are in (record_sizes). */
  for (size_t i = 0; i < mapped; i++) {
    uint64_t r = t->requests + i;
    if (t->obj[r] == numbered) m->first_size[numbered++] = hs_sim_size(t, r);
  }
  t->requests += mapped;
  if (mapped < n) m->failure = MAP_TOO_MANY_OBJECTS;
}

/* Loading runs on two threads once a trace is longer than one batch: this
 * one reads and decodes the next batch while a helper maps the last one
 * (mapping is most of loading's work: a random memory access a request).
 * The helper touches the trace's arrays only between pipeline_start and
 * the pipeline_wait that follows, so the reading thread grows them in
 * between (and writes only entries the helper does not touch meanwhile);
 * the mutex orders every hand-over. Without the helper (a short trace, or
 * no thread to be had) the reading thread maps each batch itself: the
 * result is the same either way. */
typedef struct pipeline {
  mapper *m;
  pthread_t thread;
  bool running;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  const hs_request *batch; /* handed over, not yet mapped; NULL: idle */
  const uint64_t *hash;
  size_t n;
  bool quit;
} pipeline;

/* Touches the pages of the arrays' entries the next batch will fill, so
 * that the kernel maps them on the reading thread, which has time to
 * spare, rather than on the mapping one. Only entries below `cap`: the
 * arrays are not grown while the mapper runs. The mapper writes other
 * entries meanwhile, never these. */
static void prefault(hs_sim_trace *t, uint64_t from, uint64_t cap) {
  uint64_t to = from + LOAD_BATCH < cap ? from + LOAD_BATCH : cap;
  const uint64_t step = 4096 / sizeof *t->obj;
  for (uint64_t r = from; r < to; r += step) {
    t->obj[r] = 0;
    if (t->size) t->size[r] = 0;
  }
}

static void *pipeline_main(void *arg) {
  pipeline *p = arg;
  pthread_mutex_lock(&p->lock);
  for (;;) {
    while (!p->batch && !p->quit) pthread_cond_wait(&p->cond, &p->lock);
    if (!p->batch) break;
    pthread_mutex_unlock(&p->lock);
    map_batch(p->m, p->batch, p->hash, p->n);
    pthread_mutex_lock(&p->lock);
    p->batch = NULL;
    pthread_cond_broadcast(&p->cond);
  }
  pthread_mutex_unlock(&p->lock);
  return NULL;
}

/* Waits until the batch handed over last is mapped. */
static void pipeline_wait(pipeline *p) {
  if (!p->running) return;
  pthread_mutex_lock(&p->lock);
  while (p->batch) pthread_cond_wait(&p->cond, &p->lock);
  pthread_mutex_unlock(&p->lock);
}

/* Maps `batch` on the helper (started on first use), or here if there is
 * none. The caller waits (pipeline_wait) before touching the arrays or the
 * batch again. */
static void pipeline_start(pipeline *p, const hs_request *batch, const uint64_t *hash, size_t n) {
  if (!p->running && pthread_create(&p->thread, NULL, pipeline_main, p) == 0) p->running = true;
  if (!p->running) {
    map_batch(p->m, batch, hash, n);
    return;
  }
  pthread_mutex_lock(&p->lock);
  p->batch = batch;
  p->hash = hash;
  p->n = n;
  pthread_cond_broadcast(&p->cond);
  pthread_mutex_unlock(&p->lock);
}

static void pipeline_stop(pipeline *p) {
  if (!p->running) return;
  pthread_mutex_lock(&p->lock);
  p->quit = true;
  pthread_cond_broadcast(&p->cond);
  pthread_mutex_unlock(&p->lock);
  pthread_join(p->thread, NULL);
  p->running = false;
}

hs_status hs_sim_load(const char *path, const hs_trace_options *opts,
                      const hs_sim_load_options *load, hs_sim_progress_fn progress, void *ctx,
                      hs_sim_trace **out) {
  *out = NULL;
  bool default_max = !load || load->max_requests == 0;
  uint64_t max_requests = default_max ? hs_sim_default_max_requests() : load->max_requests;
  hs_trace *tr;
  hs_status st = hs_trace_open(path, opts, &tr);
  if (st != HS_OK) return st;
  hs_sim_trace *t = calloc(1, sizeof *t);
  mapper m = {.t = t, .objcap = 1u << 16};
  pipeline pipe = {.m = &m, .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};
  reader_side rs = {0};
  hs_request *bufs = malloc(sizeof *bufs * LOAD_BATCH * 2);
  uint64_t *hashes = malloc(sizeof *hashes * LOAD_BATCH * 2);
  if (!t || !bufs || !hashes || !hs_idmap_init(&m.ids, m.objcap) ||
      !(m.first_size = malloc(sizeof *m.first_size * m.objcap)) || !(t->path = strdup(path))) {
    st = hs_fail(HS_ERR_NOMEM, 0, "%s: out of memory", path);
    goto done;
  }
  t->format = hs_trace_format_of(tr);
  t->compressed = hs_trace_compressed(tr);
  snprintf(t->format_reason, sizeof t->format_reason, "%s", hs_trace_format_reason(tr));
  /* The clock: time stamps in milliseconds since the first request, or a
   * fixed time per request for a trace without them (see sim.h). */
  rs.clock = trace_clock_make(hs_trace_time_unit_ns(tr), load ? load->ms_per_request : 0);
  t->timed = rs.clock.unit_ns != 0;
  rs.with_time = load && load->keep_time && trace_clock_tells_time(&rs.clock);
  t->has_pids = hs_trace_has_pids(tr);
  /* The scans are found from the page ids and pids, which loading does not
   * keep otherwise: held until the end of loading. */
  rs.find_scans = load && load->find_scans;
  rs.want_found = hs_trace_has_found(tr);
  rs.want_pids = t->has_pids;
  if (rs.want_pids && !hs_idmap_init(&rs.pid_set, 1u << 10)) {
    st = hs_fail(HS_ERR_NOMEM, 0, "%s: out of memory", path);
    goto done;
  }
  /* Next-access times are always computed (hs_sim_need_future) rather than
   * taken from an oracleGeneral file: every encoding of a trace then gives
   * the same answers, and a file's own numbering (its vtimes count from 1)
   * cannot mislead belady. */

  uint64_t cap = 0, expected = expected_requests(tr);
  if (expected > 0 && !grow_arrays(t, &cap, expected < max_requests ? expected : max_requests,
                                   max_requests, rs.with_time, rs.want_found)) {
    st = hs_fail(HS_ERR_NOMEM, 0, "%s: out of memory for %llu requests", path,
                 (unsigned long long)expected);
    goto done;
  }
  /* Requests loaded once the batch being mapped is: t->requests is the
   * mapper's while it runs. */
  uint64_t loaded = 0;
  for (int k = 0;; k ^= 1) {
    hs_request *batch = bufs + (size_t)k * LOAD_BATCH;
    uint64_t *hash = hashes + (size_t)k * LOAD_BATCH;
    size_t n;
    st = hs_trace_read(tr, batch, LOAD_BATCH, &n);
    if (st == HS_OK)
      for (size_t i = 0; i < n; i++) hash[i] = hs_idmap_hash(batch[i].id);
    pipeline_wait(&pipe);
    if (st != HS_OK) goto done;
    if (m.failure != MAP_OK) break;
    /* Up to the cap; a request beyond it stops loading (below). */
    size_t take = loaded + n > max_requests ? (size_t)(max_requests - loaded) : n;
    if ((loaded + take > cap &&
         !grow_arrays(t, &cap, loaded + take, max_requests, rs.with_time, rs.want_found)) ||
        !grow_scan_arrays(&rs, t->has_pids, cap)) {
      st = hs_fail(HS_ERR_NOMEM, 0, "%s: out of memory after %llu requests", path,
                   (unsigned long long)loaded);
      goto done;
    }
    /* The first batch and the last are mapped here: a short trace starts
     * no thread, and after the last batch there is nothing to overlap. */
    bool first = loaded == 0, last = take < n || n < LOAD_BATCH;
    record_sizes(t, &rs, batch, loaded, take, cap);
    if (rs.no_memory) {
      st = hs_fail(HS_ERR_NOMEM, 0, "%s: out of memory", path);
      goto done;
    }
    loaded += take;
    if (first || last) {
      map_batch(&m, batch, hash, take);
    } else {
      pipeline_start(&pipe, batch, hash, take);
      prefault(t, loaded, cap);
    }
    if (take < n) {
      if (m.failure != MAP_OK) break;
      st = over_limit(path, load, max_requests, default_max, m.ids.count, hs_trace_bytes_read(tr));
      goto done;
    }
    if (progress) progress(ctx, hs_trace_bytes_read(tr), hs_trace_file_size(tr));
    if (last) break;
  }
  pipeline_wait(&pipe);
  if (m.failure != MAP_OK) {
    st = m.failure == MAP_TOO_MANY_OBJECTS
             ? hs_fail(HS_ERR_NOMEM, 0, "%s: too many distinct objects", path)
             : hs_fail(HS_ERR_NOMEM, 0,
                       "%s: out of memory after %llu requests (%llu distinct objects)", path,
                       (unsigned long long)t->requests, (unsigned long long)m.ids.count);
    goto done;
  }
  t->objects = m.ids.count;
  t->pids = rs.pid_set.count;
  for (uint64_t o = 0; o < t->objects; o++) t->ws_bytes += m.first_size[o];
  t->one_hit = hs_idmap_seen_once(&m.ids);
  t->bad_records = hs_trace_bad_records(tr);
  t->sized = hs_trace_has_sizes(tr);
  if (rs.find_scans) {
    st = hs_scan_runs_find(rs.page_ids, rs.pids, t->requests, &t->runs);
    if (st != HS_OK) goto done;
  }
  *out = t;
  t = NULL; /* kept: not freed below */
done:       /* success (t is NULL) or failure alike */
  pipeline_stop(&pipe);
  free(rs.page_ids);
  free(rs.pids);
  hs_idmap_free(&rs.pid_set);
  free(bufs);
  free(hashes);
  free(m.first_size);
  hs_idmap_free(&m.ids);
  hs_trace_close(tr);
  hs_sim_trace_free(t);
  return st;
}

/* The hindsight ranking fixedset reads: objects by reads, most first, the
 * one read first first among equals. */
typedef struct rank_item {
  uint64_t reads;
  uint32_t obj;
} rank_item;

static int by_reads(const void *a, const void *b) {
  const rank_item *x = a, *y = b;
  if (x->reads != y->reads) return x->reads > y->reads ? -1 : 1;
  return x->obj < y->obj ? -1 : x->obj > y->obj; /* dense numbers: first read order */
}

/* t->rank[o]: o's place in the ranking (0: read most); t->hindsight[o]:
 * the units the ranking takes up to and including o, each object counted
 * at its first request's size. With t->judge_from, only the reads before
 * it count, and an object not read before it is never in the set. */
static hs_status rank_objects(hs_sim_trace *t) {
  uint64_t n = t->objects;
  rank_item *items = calloc(n ? n : 1, sizeof *items);
  uint32_t *first_size = calloc(n ? n : 1, sizeof *first_size);
  uint64_t *units = malloc(sizeof *units * (n ? n : 1));
  uint32_t *rank = malloc(sizeof *rank * (n ? n : 1));
  if (!items || !first_size || !units || !rank) {
    free(items);
    free(first_size);
    free(units);
    free(rank);
    return hs_fail(HS_ERR_NOMEM, 0, "%s: no memory to rank %llu objects", t->path,
                   (unsigned long long)n);
  }
  uint64_t learn = t->judge_from ? t->judge_from : t->requests;
  for (uint64_t r = 0; r < learn; r++) {
    uint32_t o = t->obj[r];
    if (items[o].reads++ == 0) first_size[o] = hs_sim_size(t, r);
  }
  for (uint64_t o = 0; o < n; o++) items[o].obj = (uint32_t)o;
  qsort(items, n, sizeof *items, by_reads);
  uint64_t sum = 0;
  for (uint64_t i = 0; i < n; i++) {
    uint32_t o = items[i].obj;
    if (items[i].reads == 0) { /* not read before judge_from: never fits */
      units[o] = UINT64_MAX;
      rank[o] = UINT32_MAX - 1;
      continue;
    }
    sum += first_size[o];
    units[o] = sum;
    rank[o] = (uint32_t)i;
  }
  free(items);
  free(first_size);
  t->hindsight = units;
  t->rank = rank;
  return HS_OK;
}

hs_status hs_sim_need_future(hs_sim_trace *t) {
  if (t->next) return HS_OK;
  int64_t *next = malloc(sizeof *next * (t->requests ? t->requests : 1));
  int64_t *last = malloc(sizeof *last * (t->objects ? t->objects : 1));
  if (!next || !last) {
    free(next);
    free(last);
    return hs_fail(HS_ERR_NOMEM, 0, "%s: no memory for next-access times", t->path);
  }
  big_advise_huge(next, sizeof *next * t->requests);
  big_advise_huge(last, sizeof *last * t->objects);
  for (uint64_t o = 0; o < t->objects; o++) last[o] = HS_NEXT_NEVER;
  for (uint64_t r = t->requests; r-- > 0;) {
    next[r] = last[t->obj[r]];
    last[t->obj[r]] = (int64_t)r;
  }
  free(last);
  t->next = next;
  return HS_OK;
}

hs_status hs_sim_need_hindsight(hs_sim_trace *t) {
  return t->hindsight ? HS_OK : rank_objects(t);
}

void hs_sim_trace_free(hs_sim_trace *t) {
  if (!t) return;
  free(t->path);
  free(t->obj);
  free(t->size);
  free(t->next);
  free(t->hindsight);
  free(t->rank);
  free(t->time_ms);
  free(t->found);
  hs_scan_runs_free(&t->runs);
  free(t);
}

/* ---- replay -------------------------------------------------------------- */

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* How many requests ahead the replay loops prefetch their per-object
 * entry: enough to hide a memory access behind the requests in between. */
#define LOOKAHEAD 16

/* What one replay counts. */
typedef struct replay_counts {
  uint64_t misses, byte_misses, bytes, not_admitted, peak_ghosts, ring_requests;
  uint64_t *miss_bits; /* hs_sim_run_marking's, or NULL */
  uint64_t from;       /* the trace's judge_from: earlier requests are not counted */
} replay_counts;

/* A miss of request r: counted (from judge_from on), and marked when the
 * caller asked. The mark is on the miss path only, so a plain run pays one
 * predicted branch per miss. */
static inline void replay_miss(replay_counts *c, uint64_t r, uint64_t size) {
  if (r < c->from) return;
  c->misses++;
  c->byte_misses += size;
  if (c->miss_bits) c->miss_bits[r >> 6] |= (uint64_t)1 << (r & 63);
}

/* PostgreSQL's bulkread rings, one per access stream of the trace's scans
 * (sim/scan_runs.h), used as the pool uses a strategy (pool/strategy.c):
 * a miss under a ring advances to the ring's next slot and reuses its
 * frame if the frame still holds a page read under a ring and used by
 * nobody else since (the pool's BM_RING: a normal hit clears it); otherwise
 * the frame comes from the free list or the policy and joins the ring. */
typedef struct sim_rings {
  const hs_scan_runs *runs;
  uint64_t pool_pages; /* the cache's entries: what the rule compares with */
  uint32_t size;       /* buffers per ring */
  uint32_t *slots;     /* per stream: `size` frames, UINT32_MAX = none */
  uint32_t *current;   /* per stream: the slot last used */
  uint8_t *ring_read;  /* per frame: read under a ring, unused since */
} sim_rings;

static bool sim_rings_init(sim_rings *g, const hs_scan_runs *runs, uint64_t pool_pages,
                           uint32_t nslots) {
  memset(g, 0, sizeof *g);
  g->runs = runs;
  g->pool_pages = pool_pages;
  g->size = hs_pg_bulkread_ring_size(pool_pages);
  uint64_t n = (uint64_t)runs->nstreams * (g->size ? g->size : 1);
  g->slots = malloc(sizeof *g->slots * (n ? n : 1));
  g->current = calloc(runs->nstreams ? runs->nstreams : 1, sizeof *g->current);
  g->ring_read = calloc(nslots ? nslots : 1, 1);
  if (!g->slots || !g->current || !g->ring_read) return false;
  memset(g->slots, 0xff, sizeof *g->slots * (n ? n : 1));
  return true;
}

static void sim_rings_free(sim_rings *g) {
  free(g->slots);
  free(g->current);
  free(g->ring_read);
}

/* The ring request r reads through, or NULL: a run of a relation larger
 * than a quarter of the cache. A run's first request starts an empty ring. */
static inline uint32_t *ring_of(sim_rings *g, uint64_t r, uint32_t *stream) {
  uint32_t v = g->runs->stream[r];
  if (v == 0 || g->size == 0) return NULL;
  uint32_t s = (v & ~HS_RUN_START) - 1;
  if (!hs_pg_scan_uses_ring(g->runs->rel_blocks[s], g->pool_pages)) return NULL;
  uint32_t *ring = &g->slots[(uint64_t)s * g->size];
  if (v & HS_RUN_START) {
    memset(ring, 0xff, sizeof *ring * g->size);
    g->current[s] = 0;
  }
  *stream = s;
  return ring;
}

/* Every 64 Ki requests: the ghost peak, and the shared progress count. */
static inline void replay_tick(hs_policy *p, uint64_t r, replay_counts *c, _Atomic uint64_t *done) {
  if ((r & 0xFFFF) != 0xFFFF) return;
  uint64_t g = hs_policy_ghosts(p);
  if (g > c->peak_ghosts) c->peak_ghosts = g;
  if (done) atomic_fetch_add_explicit(done, 0x10000, memory_order_relaxed);
}

/* Slots are frames, as in the pool: `nslots` of them (the cache's capacity
 * in entries), handed out from a free list in order 0 .. nslots-1 while the
 * cache fills, then each miss takes the slot of the victim it evicted
 * (pool/freelist.c: the free list, then the policy's victim). Every entry
 * has one size (`size`), so the cache is full exactly when every slot is
 * taken. slot_of[o] is object o's slot + 1, or 0 when it is not resident;
 * obj_of[slot] the object in a taken slot. */
static hs_status replay_frames(const hs_sim_trace *t, hs_policy *p, const char *spec,
                               uint64_t capacity, uint64_t size, uint32_t nslots, bool future,
                               bool hindsight, _Atomic uint64_t *done, replay_counts *c) {
  uint32_t *slot_of = calloc(t->objects, sizeof *slot_of);
  uint32_t *obj_of = malloc(sizeof *obj_of * (nslots ? nslots : 1));
  sim_rings rings = {0};
  bool with_rings = t->runs.stream != NULL;
  if (!slot_of || !obj_of ||
      (with_rings && !sim_rings_init(&rings, &t->runs, capacity / size, nslots))) {
    free(slot_of);
    free(obj_of);
    sim_rings_free(&rings);
    return hs_fail(HS_ERR_NOMEM, 0, "no memory for %llu objects", (unsigned long long)t->objects);
  }
  hs_status st = HS_OK;
  hs_access a = {.kind = HS_ACCESS_READ, .hint = HS_HINT_NORMAL, .next = HS_NEXT_UNKNOWN};
  a.size = size;
  uint32_t next_free = 0;
  for (uint64_t r = 0; r < t->requests; r++) {
    uint32_t o = t->obj[r];
    /* slot_of has an entry per object of the trace, far more than the CPU
     * caches hold: fetch the entry a later request needs ahead of it. */
    if (r + LOOKAHEAD < t->requests) {
      __builtin_prefetch(&slot_of[t->obj[r + LOOKAHEAD]]);
      hs_policy_prefetch(p, t->obj[r + LOOKAHEAD]); /* its ghost, should it miss */
    }
    if (r >= c->from) c->bytes += size;
    a.key = o;
    a.now = t->time_ms ? t->time_ms[r] : r;
    /* Frames: every entry counts `size`, whatever the trace's sizes. */
    if (future) a.next = t->next[r];
    if (hindsight) a.hindsight_units = ((uint64_t)t->rank[o] + 1) * size;
    uint32_t stream = 0, *ring = with_rings ? ring_of(&rings, r, &stream) : NULL;
    a.hint = ring ? HS_HINT_RING : HS_HINT_NORMAL;
    c->ring_requests += ring != NULL;
    uint32_t held = slot_of[o];
    if (held) {
      if (with_rings && !ring) rings.ring_read[held - 1] = 0; /* someone else's now */
      hs_policy_hit(p, held - 1, &a);
    } else {
      replay_miss(c, r, size);
      if (size > capacity) {
        c->not_admitted += r >= c->from;
      } else if (hs_policy_admits(p, &a)) {
        uint32_t slot = UINT32_MAX;
        bool reused = false;
        if (ring) {
          uint32_t cur = rings.current[stream] + 1 < rings.size ? rings.current[stream] + 1 : 0;
          rings.current[stream] = cur;
          uint32_t b = ring[cur];
          if (b != UINT32_MAX && rings.ring_read[b] && slot_of[obj_of[b]] == b + 1) {
            /* Reuse: the frame's page leaves; the policy is told as the
             * pool tells it (evict, then insert into the same slot). */
            if (hs_policy_evict(p, b) != HS_OK) {
              st = hs_fail(HS_ERR_CORRUPT, 0, "%s: request %llu: %s", spec, (unsigned long long)r,
                           hs_last_error());
              break;
            }
            slot_of[obj_of[b]] = 0;
            slot = b;
            reused = true;
          }
        }
        if (!reused) {
          if (next_free < nslots) {
            slot = next_free++;
          } else {
            int64_t v = hs_policy_victim(p, &a, NULL, NULL);
            if (v < 0 || (uint64_t)v >= nslots || hs_policy_evict(p, (uint32_t)v) != HS_OK) {
              st = hs_fail(HS_ERR_CORRUPT, 0, "%s: request %llu: no victim in a full cache", spec,
                           (unsigned long long)r);
              break;
            }
            slot = (uint32_t)v;
            slot_of[obj_of[slot]] = 0;
          }
          if (ring) ring[rings.current[stream]] = slot; /* the frame joins the ring */
        }
        if (hs_policy_insert(p, slot, &a) != HS_OK) {
          st = hs_fail(HS_ERR_CORRUPT, 0, "%s: request %llu: %s", spec, (unsigned long long)r,
                       hs_last_error());
          break;
        }
        if (with_rings) rings.ring_read[slot] = ring != NULL;
        obj_of[slot] = o;
        slot_of[o] = slot + 1;
      }
    }
    replay_tick(p, r, c, done);
  }
  free(slot_of);
  free(obj_of);
  sim_rings_free(&rings);
  return st;
}

/* Objects of different sizes: an object's slot is its dense number, so the
 * policy's slots are the trace's objects. A miss evicts victims until the
 * object fits, however many that takes, and leaves their slots empty. */
static hs_status replay_objects(const hs_sim_trace *t, hs_policy *p, const char *spec,
                                uint64_t capacity, bool future, bool hindsight,
                                _Atomic uint64_t *done, replay_counts *c) {
  uint8_t *resident = calloc(t->objects, 1);
  if (!resident)
    return hs_fail(HS_ERR_NOMEM, 0, "no memory for %llu objects", (unsigned long long)t->objects);
  hs_status st = HS_OK;
  hs_access a = {.kind = HS_ACCESS_READ, .hint = HS_HINT_NORMAL, .next = HS_NEXT_UNKNOWN};
  for (uint64_t r = 0; r < t->requests; r++) {
    uint32_t o = t->obj[r];
    if (r + LOOKAHEAD < t->requests) {
      __builtin_prefetch(&resident[t->obj[r + LOOKAHEAD]]);
      hs_policy_prefetch(p, t->obj[r + LOOKAHEAD]);
    }
    uint64_t size = hs_sim_size(t, r);
    if (r >= c->from) c->bytes += size;
    a.key = o;
    a.size = size;
    a.now = t->time_ms ? t->time_ms[r] : r;
    if (future) a.next = t->next[r];
    if (hindsight) a.hindsight_units = t->hindsight[o];
    if (resident[o]) {
      hs_policy_hit(p, o, &a);
    } else {
      replay_miss(c, r, size);
      if (size > capacity) {
        c->not_admitted += r >= c->from;
      } else if (hs_policy_admits(p, &a)) {
        while (hs_policy_used(p) + size > capacity) {
          int64_t v = hs_policy_victim(p, &a, NULL, NULL);
          if (v < 0) break; /* cannot happen without pins; insert refuses below */
          hs_policy_evict(p, (uint32_t)v);
          resident[v] = 0;
        }
        if (hs_policy_insert(p, o, &a) != HS_OK) {
          st = hs_fail(HS_ERR_CORRUPT, 0, "%s: request %llu: %s", spec, (unsigned long long)r,
                       hs_last_error());
          break;
        }
        resident[o] = 1;
      }
    }
    replay_tick(p, r, c, done);
  }
  free(resident);
  return st;
}

/* The size every request has, or 0 if they differ. Looked for here rather
 * than taken from min_size and max_size, which a trace built by hand (a
 * test's) may leave unset: one pass, far cheaper than a simulation. */
static uint64_t one_size(const hs_sim_trace *t) {
  if (!t->size) return t->uniform_size;
  uint32_t first = t->size[0];
  for (uint64_t r = 1; r < t->requests; r++)
    if (t->size[r] != first) return 0;
  return first; /* 0 (never loaded so) also takes the general path */
}

hs_status hs_sim_run(const hs_sim_trace *t, const char *spec, uint64_t capacity, bool ignore_size,
                     _Atomic uint64_t *done, hs_sim_result *out) {
  return hs_sim_run_marking(t, spec, capacity, ignore_size, done, NULL, out);
}

hs_status hs_sim_run_marking(const hs_sim_trace *t, const char *spec, uint64_t capacity,
                             bool ignore_size, _Atomic uint64_t *done, uint64_t *miss_bits,
                             hs_sim_result *out) {
  memset(out, 0, sizeof *out);
  if (t->objects == 0 || capacity == 0)
    return hs_fail(HS_ERR_INVALID, 0, "%s: nothing to simulate (%llu objects, capacity %llu)",
                   t->path, (unsigned long long)t->objects, (unsigned long long)capacity);
  /* One size for every entry (object mode, or a trace whose requests all
   * have one size): slots are frames, as many as the cache holds entries —
   * never more than the trace has objects, since a cache that never fills
   * never evicts. */
  uint64_t size = ignore_size ? 1 : one_size(t);
  bool frames = size != 0;
  uint64_t entries = frames ? capacity / size : 0;
  uint32_t nslots = (uint32_t)(entries < t->objects ? entries : t->objects);
  uint32_t max_slots = frames ? (nslots ? nslots : 1) : (uint32_t)t->objects;
  hs_policy *p;
  /* Byte mode: a capacity unit is a byte; object mode: a unit is one object
   * of no known size. The clock is the trace's time in milliseconds when it
   * was kept, else the request count. Keys are object numbers, all below
   * the trace's object count: the policies' ghost indexes go direct. */
  hs_policy_env env = {.unit_bytes = ignore_size ? 0 : 1,
                       .clock = t->time_ms ? HS_CLOCK_MILLISECONDS : HS_CLOCK_REQUESTS,
                       .key_space = t->objects};
  hs_status st = hs_policy_create(spec, capacity, max_slots, &env, &p);
  if (st != HS_OK) return st;
  bool future = hs_policy_flags(p) & HS_POLICY_NEEDS_FUTURE;
  if (future && !t->next) {
    hs_policy_destroy(p);
    return hs_fail(HS_ERR_INVALID, 0, "%s needs next-access times: call hs_sim_need_future", spec);
  }
  bool hindsight = hs_policy_flags(p) & HS_POLICY_NEEDS_HINDSIGHT;
  if (hindsight && !t->rank) {
    hs_policy_destroy(p);
    return hs_fail(HS_ERR_INVALID, 0, "%s needs the trace's ranking: call hs_sim_need_hindsight",
                   spec);
  }
  if (t->runs.stream && !frames) {
    hs_policy_destroy(p);
    return hs_fail(HS_ERR_INVALID, 0,
                   "%s: the ring rule needs entries of one size (--ignore-size, or a trace "
                   "whose requests all have one size)",
                   t->path);
  }
  double t0 = now_seconds();
  if (t->judge_from >= t->requests) {
    hs_policy_destroy(p);
    return hs_fail(HS_ERR_INVALID, 0, "%s: judged from request %llu, but it has %llu requests",
                   t->path, (unsigned long long)t->judge_from, (unsigned long long)t->requests);
  }
  replay_counts c = {.miss_bits = miss_bits, .from = t->judge_from};
  st = frames ? replay_frames(t, p, spec, capacity, size, nslots, future, hindsight, done, &c)
              : replay_objects(t, p, spec, capacity, future, hindsight, done, &c);
  out->seconds = now_seconds() - t0;
  out->requests = t->requests - t->judge_from;
  out->misses = c.misses;
  out->bytes = c.bytes;
  out->byte_misses = c.byte_misses;
  out->not_admitted = c.not_admitted;
  out->ring_requests = c.ring_requests;
  uint64_t g = hs_policy_ghosts(p);
  out->peak_ghosts = g > c.peak_ghosts ? g : c.peak_ghosts;
  out->policy_bytes = hs_policy_memory(p);
  if (done) atomic_fetch_add_explicit(done, t->requests & 0xFFFF, memory_order_relaxed);
  hs_policy_destroy(p);
  return st;
}
