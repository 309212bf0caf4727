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

#include "core/error.h"
#include "core/hash.h"
#include "hotset/policy.h"
#include "sim/trace_clock.h"

#include <inttypes.h>
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

/* Open-addressing map from trace ids to dense numbers, grown as needed. */
typedef struct id_map {
  uint64_t *ids;
  uint32_t *dense; /* UINT32_MAX = empty */
  uint64_t mask, count;
} id_map;

static bool id_map_init(id_map *m, uint64_t cap) {
  m->ids = malloc(sizeof *m->ids * cap);
  m->dense = malloc(sizeof *m->dense * cap);
  if (!m->ids || !m->dense) {
    free(m->ids);
    free(m->dense);
    return false;
  }
  memset(m->dense, 0xff, sizeof *m->dense * cap);
  m->mask = cap - 1;
  m->count = 0;
  return true;
}

static bool id_map_grow(id_map *m) {
  id_map bigger;
  if (!id_map_init(&bigger, (m->mask + 1) * 2)) return false;
  for (uint64_t i = 0; i <= m->mask; i++) {
    if (m->dense[i] == UINT32_MAX) continue;
    uint64_t j = hs_mix64(m->ids[i]) & bigger.mask;
    while (bigger.dense[j] != UINT32_MAX) j = (j + 1) & bigger.mask;
    bigger.ids[j] = m->ids[i];
    bigger.dense[j] = m->dense[i];
  }
  bigger.count = m->count;
  free(m->ids);
  free(m->dense);
  *m = bigger;
  return true;
}

/* The dense number of `id`, assigning the next one if it is new; UINT32_MAX
 * if out of memory. *fresh says whether it was new. */
static uint32_t id_map_get(id_map *m, uint64_t id, bool *fresh) {
  uint64_t j = hs_mix64(id) & m->mask;
  while (m->dense[j] != UINT32_MAX) {
    if (m->ids[j] == id) {
      *fresh = false;
      return m->dense[j];
    }
    j = (j + 1) & m->mask;
  }
  if ((m->count + 1) * 4 > (m->mask + 1) * 3) {
    if (!id_map_grow(m)) return UINT32_MAX;
    return id_map_get(m, id, fresh);
  }
  m->ids[j] = id;
  m->dense[j] = (uint32_t)m->count++;
  *fresh = true;
  return m->dense[j];
}

/* Grows the request arrays (time_ms too when `with_time`, found when
 * `want_found`), doubling, but never past `max` entries. */
static bool grow_arrays(hs_sim_trace *t, uint64_t *cap, uint64_t max, bool with_time,
                        bool want_found) {
  uint64_t n = *cap ? *cap * 2 : 1u << 20;
  if (n > max) n = max;
  uint32_t *obj = realloc(t->obj, sizeof *obj * n);
  if (obj) t->obj = obj;
  uint32_t *size = realloc(t->size, sizeof *size * n);
  if (size) t->size = size;
  if (!obj || !size) return false;
  if (with_time) {
    uint64_t *time_ms = realloc(t->time_ms, sizeof *time_ms * n);
    if (!time_ms) return false;
    t->time_ms = time_ms;
  }
  if (want_found) {
    int8_t *found = realloc(t->found, sizeof *found * n);
    if (!found) return false;
    t->found = found;
  }
  *cap = n;
  return true;
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
  id_map ids = {0}, pid_set = {0};
  const bool want_found = hs_trace_has_found(tr), want_pids = hs_trace_has_pids(tr);
  uint64_t *first_size = NULL, *count = NULL, objcap = 1u << 16;
  uint64_t *page_ids = NULL, scan_cap = 0; /* for find_scans */
  uint32_t *pids = NULL;
  if (!t || !id_map_init(&ids, 1u << 16) || !(first_size = malloc(sizeof *first_size * objcap)) ||
      !(count = malloc(sizeof *count * objcap)) || !(t->path = strdup(path)) ||
      (want_pids && !id_map_init(&pid_set, 1u << 10))) {
    st = hs_fail(HS_ERR_NOMEM, 0, "%s: out of memory", path);
    goto fail;
  }
  t->format = hs_trace_format_of(tr);
  t->compressed = hs_trace_compressed(tr);
  snprintf(t->format_reason, sizeof t->format_reason, "%s", hs_trace_format_reason(tr));
  /* The clock: time stamps in milliseconds since the first request, or a
   * fixed time per request for a trace without them (see sim.h). */
  trace_clock clock = trace_clock_make(hs_trace_time_unit_ns(tr), load ? load->ms_per_request : 0);
  t->timed = clock.unit_ns != 0;
  bool with_time = load && load->keep_time && trace_clock_tells_time(&clock);
  t->has_pids = hs_trace_has_pids(tr);
  /* The scans are found from the page ids and pids, which loading does not
   * keep otherwise: held until the end of loading. */
  bool find_scans = load && load->find_scans;
  /* Next-access times are always computed (hs_sim_need_future) rather than
   * taken from an oracleGeneral file: every encoding of a trace then gives
   * the same answers, and a file's own numbering (its vtimes count from 1)
   * cannot mislead belady. */

  enum { BATCH = 4096 };
  hs_request batch[BATCH];
  uint64_t cap = 0;
  for (;;) {
    size_t n;
    st = hs_trace_read(tr, batch, BATCH, &n);
    if (st != HS_OK) goto fail;
    for (size_t i = 0; i < n; i++) {
      if (t->requests == max_requests) {
        st = over_limit(path, load, max_requests, default_max, ids.count, hs_trace_bytes_read(tr));
        goto fail;
      }
      if (t->requests == cap && !grow_arrays(t, &cap, max_requests, with_time, want_found)) {
        st = hs_fail(HS_ERR_NOMEM, 0, "%s: out of memory after %llu requests", path,
                     (unsigned long long)t->requests);
        goto fail;
      }
      if (find_scans && t->requests == scan_cap) {
        uint64_t *more_ids = realloc(page_ids, sizeof *more_ids * cap);
        if (more_ids) page_ids = more_ids;
        uint32_t *more_pids = t->has_pids ? realloc(pids, sizeof *more_pids * cap) : NULL;
        if (more_pids) pids = more_pids;
        if (!more_ids || (t->has_pids && !more_pids)) {
          st = hs_fail(HS_ERR_NOMEM, 0, "%s: out of memory after %llu requests", path,
                       (unsigned long long)t->requests);
          goto fail;
        }
        scan_cap = cap;
      }
      if (find_scans) {
        page_ids[t->requests] = batch[i].id;
        if (pids) pids[t->requests] = batch[i].pid;
      }
      bool fresh;
      uint32_t o = id_map_get(&ids, batch[i].id, &fresh);
      if (o == UINT32_MAX || (uint64_t)o >= UINT32_MAX - 1) {
        st = hs_fail(HS_ERR_NOMEM, 0, "%s: too many distinct objects", path);
        goto fail;
      }
      uint64_t size = batch[i].size ? batch[i].size : 1;
      if (size > UINT32_MAX) size = UINT32_MAX;
      if (fresh) {
        if (o == objcap) {
          objcap *= 2;
          uint64_t *fs = realloc(first_size, sizeof *fs * objcap);
          if (fs) first_size = fs;
          uint64_t *c = realloc(count, sizeof *c * objcap);
          if (c) count = c;
          if (!fs || !c) {
            st = hs_fail(HS_ERR_NOMEM, 0, "%s: out of memory", path);
            goto fail;
          }
        }
        first_size[o] = size;
        count[o] = 0;
      }
      count[o]++;
      uint64_t r = t->requests++;
      if (with_time) t->time_ms[r] = trace_clock_next(&clock, batch[i].time);
      t->obj[r] = o;
      t->size[r] = (uint32_t)size;
      t->bytes_requested += size;
      if (want_found) {
        t->found[r] = batch[i].found;
        t->found_hits += batch[i].found == 1;
        t->found_misses += batch[i].found == 0;
      }
      if (want_pids && id_map_get(&pid_set, batch[i].pid, &fresh) == UINT32_MAX) {
        st = hs_fail(HS_ERR_NOMEM, 0, "%s: out of memory", path);
        goto fail;
      }
      if (r == 0 || size < t->min_size) t->min_size = (uint32_t)size;
      if (size > t->max_size) t->max_size = (uint32_t)size;
    }
    if (progress) progress(ctx, hs_trace_bytes_read(tr), hs_trace_file_size(tr));
    if (n < BATCH) break;
  }
  t->objects = ids.count;
  t->pids = pid_set.count;
  for (uint64_t o = 0; o < t->objects; o++) {
    t->ws_bytes += first_size[o];
    t->one_hit += count[o] == 1;
  }
  t->bad_records = hs_trace_bad_records(tr);
  t->sized = hs_trace_has_sizes(tr);
  if (find_scans) {
    st = hs_scan_runs_find(page_ids, pids, t->requests, &t->runs);
    if (st != HS_OK) goto fail;
  }
  free(page_ids);
  free(pids);
  free(first_size);
  free(count);
  free(ids.ids);
  free(ids.dense);
  free(pid_set.ids);
  free(pid_set.dense);
  hs_trace_close(tr);
  *out = t;
  return HS_OK;
fail:
  free(page_ids);
  free(pids);
  free(first_size);
  free(count);
  free(ids.ids);
  free(ids.dense);
  free(pid_set.ids);
  free(pid_set.dense);
  hs_trace_close(tr);
  hs_sim_trace_free(t);
  return st;
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
  for (uint64_t o = 0; o < t->objects; o++) last[o] = HS_NEXT_NEVER;
  for (uint64_t r = t->requests; r-- > 0;) {
    next[r] = last[t->obj[r]];
    last[t->obj[r]] = (int64_t)r;
  }
  free(last);
  t->next = next;
  return HS_OK;
}

void hs_sim_trace_free(hs_sim_trace *t) {
  if (!t) return;
  free(t->path);
  free(t->obj);
  free(t->size);
  free(t->next);
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

/* What one replay counts. */
typedef struct replay_counts {
  uint64_t misses, byte_misses, bytes, not_admitted, peak_ghosts, ring_requests;
  uint64_t *miss_bits; /* hs_sim_run_marking's, or NULL */
} replay_counts;

/* A miss of request r: counted, and marked when the caller asked. The mark
 * is on the miss path only, so a plain run pays one predicted branch per
 * miss. */
static inline void replay_miss(replay_counts *c, uint64_t r, uint64_t size) {
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
                               _Atomic uint64_t *done, replay_counts *c) {
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
    c->bytes += size;
    a.key = o;
    a.now = t->time_ms ? t->time_ms[r] : r;
    if (future) a.next = t->next[r];
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
        c->not_admitted++;
      } else {
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
                                uint64_t capacity, bool future, _Atomic uint64_t *done,
                                replay_counts *c) {
  uint8_t *resident = calloc(t->objects, 1);
  if (!resident)
    return hs_fail(HS_ERR_NOMEM, 0, "no memory for %llu objects", (unsigned long long)t->objects);
  hs_status st = HS_OK;
  hs_access a = {.kind = HS_ACCESS_READ, .hint = HS_HINT_NORMAL, .next = HS_NEXT_UNKNOWN};
  for (uint64_t r = 0; r < t->requests; r++) {
    uint32_t o = t->obj[r];
    uint64_t size = t->size[r];
    c->bytes += size;
    a.key = o;
    a.size = size;
    a.now = t->time_ms ? t->time_ms[r] : r;
    if (future) a.next = t->next[r];
    if (resident[o]) {
      hs_policy_hit(p, o, &a);
    } else {
      replay_miss(c, r, size);
      if (size > capacity) {
        c->not_admitted++;
      } else {
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
   * was kept, else the request count. */
  hs_policy_env env = {.unit_bytes = ignore_size ? 0 : 1,
                       .clock = t->time_ms ? HS_CLOCK_MILLISECONDS : HS_CLOCK_REQUESTS};
  hs_status st = hs_policy_create_ex(spec, capacity, max_slots, &env, &p);
  if (st != HS_OK) return st;
  bool future = hs_policy_flags(p) & HS_POLICY_NEEDS_FUTURE;
  if (future && !t->next) {
    hs_policy_destroy(p);
    return hs_fail(HS_ERR_INVALID, 0, "%s needs next-access times: call hs_sim_need_future", spec);
  }
  if (t->runs.stream && !frames) {
    hs_policy_destroy(p);
    return hs_fail(HS_ERR_INVALID, 0,
                   "%s: the ring rule needs entries of one size (--ignore-size, or a trace "
                   "whose requests all have one size)",
                   t->path);
  }
  double t0 = now_seconds();
  replay_counts c = {.miss_bits = miss_bits};
  st = frames ? replay_frames(t, p, spec, capacity, size, nslots, future, done, &c)
              : replay_objects(t, p, spec, capacity, future, done, &c);
  out->seconds = now_seconds() - t0;
  out->requests = t->requests;
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
