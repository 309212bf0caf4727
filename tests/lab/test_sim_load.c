/*
 * tests/test_sim_load.c — loading a trace for the simulator (sim/sim.h,
 * sim/idmap.h) gives exactly what a plain reference loop gives.
 *
 * The loader maps ids with prefetching and, for traces longer than one
 * batch, on two threads; none of that may show in the result. Each check
 * compares against a naive reference built here: dense numbers in order of
 * first appearance, each request's size, the first size of each object,
 * the objects requested once, the time stamps in milliseconds, the scans
 * found. Traces are written as oracleGeneral files
 * of several loader batches, with sizes that vary, ids that repeat in a
 * skewed way, a length that is no multiple of a batch; the request cap is
 * hit inside a batch, and a truncated last record fails the load (or is
 * skipped with skip_bad), also while the second thread is mapping.
 */
#include "check.h"
#include "sim/idmap.h"
#include "sim/sim.h"
#include "sim/trace_clock.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rng(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

/* A skewed id: small ranks far more often, ids spread over 64 bits. */
static uint64_t skewed_id(uint64_t objects) {
  uint64_t a = rng() % objects, b = rng() % objects;
  uint64_t rank = a < b ? a : b;
  return rank * 0x9E3779B97F4A7C15ull + 7;
}

/* The reference: dense numbers by first appearance (linear scan over the
 * ids seen so far would be too slow; a sorted copy is searched instead). */
typedef struct reference {
  uint32_t *obj;
  uint64_t objects, one_hit, ws_bytes;
} reference;

typedef struct id_rank {
  uint64_t id;
  uint64_t first; /* request of first appearance */
} id_rank;

static int by_id(const void *a, const void *b) {
  const id_rank *x = a, *y = b;
  if (x->id != y->id) return x->id < y->id ? -1 : 1;
  return x->first < y->first ? -1 : x->first > y->first;
}

static int by_first(const void *a, const void *b) {
  const id_rank *x = a, *y = b;
  return x->first < y->first ? -1 : x->first > y->first;
}

static uint64_t find(const id_rank *u, uint64_t n, uint64_t id) {
  uint64_t lo = 0, hi = n;
  while (lo < hi) {
    uint64_t mid = (lo + hi) / 2;
    if (u[mid].id < id)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

static void reference_of(const uint64_t *ids, const uint32_t *sizes, uint64_t n, reference *ref) {
  id_rank *all = malloc(sizeof *all * n);
  REQUIRE(all);
  for (uint64_t r = 0; r < n; r++) all[r] = (id_rank){ids[r], r};
  qsort(all, n, sizeof *all, by_id);
  /* Keep the first of each id, with its count of requests. */
  uint64_t u = 0, *count = calloc(n, sizeof *count);
  REQUIRE(count);
  for (uint64_t r = 0; r < n; r++) {
    if (u == 0 || all[u - 1].id != all[r].id) all[u++] = all[r];
    count[u - 1]++;
  }
  id_rank *order = malloc(sizeof *order * u);
  REQUIRE(order);
  memcpy(order, all, sizeof *order * u);
  qsort(order, u, sizeof *order, by_first);
  /* dense number of the k-th id in id order: its place in `order` */
  uint64_t *dense_of = malloc(sizeof *dense_of * u);
  REQUIRE(dense_of);
  ref->one_hit = ref->ws_bytes = 0;
  for (uint64_t k = 0; k < u; k++) {
    dense_of[find(all, u, order[k].id)] = k;
    ref->ws_bytes += sizes[order[k].first];
  }
  for (uint64_t k = 0; k < u; k++) ref->one_hit += count[k] == 1;
  ref->obj = malloc(sizeof *ref->obj * n);
  REQUIRE(ref->obj);
  for (uint64_t r = 0; r < n; r++) ref->obj[r] = (uint32_t)dense_of[find(all, u, ids[r])];
  ref->objects = u;
  free(all), free(count), free(order), free(dense_of);
}

/* hs_idmap alone: batches of odd lengths, with and without given hashes,
 * through several growths of the table. */
static void test_idmap(void) {
  enum { N = 300000 };
  uint64_t *ids = malloc(sizeof *ids * N);
  uint32_t *sizes = calloc(N, sizeof *sizes), *got = malloc(sizeof *got * N);
  hs_request *reqs = calloc(N, sizeof *reqs);
  uint64_t *hash = malloc(sizeof *hash * N);
  REQUIRE(ids && sizes && got && reqs && hash);
  for (uint64_t r = 0; r < N; r++) {
    ids[r] = skewed_id(120000);
    reqs[r].id = ids[r];
    hash[r] = hs_idmap_hash(ids[r]);
  }
  reference ref;
  reference_of(ids, sizes, N, &ref);
  hs_idmap m;
  REQUIRE(hs_idmap_init(&m, 10));
  for (uint64_t r = 0, k = 0; r < N; k++) {
    uint64_t n = 1 + rng() % 5000;
    if (n > N - r) n = N - r;
    REQUIRE(hs_idmap_reserve(&m, n));
    size_t done = k % 2 ? hs_idmap_map(&m, reqs + r, n, got + r)
                        : hs_idmap_map_hashed(&m, reqs + r, hash + r, n, got + r);
    CHECK_EQ(done, n);
    r += n;
  }
  CHECK_EQ(m.count, ref.objects);
  CHECK_EQ(hs_idmap_seen_once(&m), ref.one_hit);
  CHECK(memcmp(got, ref.obj, sizeof *got * N) == 0);
  hs_idmap_free(&m);
  free(ref.obj), free(ids), free(sizes), free(got), free(reqs), free(hash);
}

static char dir[] = "/tmp/test_sim_load.XXXXXX";
static char path[256];

static void put_le(unsigned char *p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; i++) p[i] = (unsigned char)(v >> (8 * i));
}

/* Writes an oracleGeneral trace of `n` records (next-access times -1:
 * the loader computes its own), plus `extra` stray bytes at the end. */
static void write_trace(const uint64_t *ids, const uint32_t *sizes, uint64_t n, size_t extra) {
  FILE *f = fopen(path, "wb");
  REQUIRE(f);
  bool written = true;
  for (uint64_t r = 0; r < n; r++) {
    unsigned char rec[24];
    put_le(rec, r / 1000 + 1, 4); /* seconds: a thousand requests a second */
    put_le(rec + 4, ids[r], 8);
    put_le(rec + 12, sizes[r], 4);
    put_le(rec + 16, UINT64_MAX, 8);
    written &= fwrite(rec, 1, sizeof rec, f) == sizeof rec;
  }
  for (size_t i = 0; i < extra; i++) fputc(0x5a, f);
  REQUIRE(fclose(f) == 0 && written);
}

static void check_loaded(const hs_sim_trace *t, const uint64_t *ids, const uint32_t *sizes,
                         uint64_t n) {
  reference ref;
  reference_of(ids, sizes, n, &ref);
  CHECK_EQ(t->requests, n);
  CHECK_EQ(t->objects, ref.objects);
  CHECK_EQ(t->one_hit, ref.one_hit);
  CHECK_EQ(t->ws_bytes, ref.ws_bytes);
  CHECK(memcmp(t->obj, ref.obj, sizeof *t->obj * n) == 0);
  bool same_sizes = true, one_size = true;
  for (uint64_t r = 0; r < n; r++) {
    same_sizes &= hs_sim_size(t, r) == sizes[r];
    one_size &= sizes[r] == sizes[0];
  }
  CHECK(same_sizes);
  /* The size array is kept only when sizes differ. */
  CHECK_EQ(t->size == NULL, one_size);
  uint64_t bytes = 0;
  uint32_t lo = UINT32_MAX, hi = 0;
  for (uint64_t r = 0; r < n; r++) {
    bytes += sizes[r];
    lo = sizes[r] < lo ? sizes[r] : lo;
    hi = sizes[r] > hi ? sizes[r] : hi;
  }
  CHECK_EQ(t->bytes_requested, bytes);
  CHECK_EQ(t->min_size, lo);
  CHECK_EQ(t->max_size, hi);
  free(ref.obj);
}

static void test_load(void) {
  enum { N = 250007 }; /* several batches, the last one partial */
  uint64_t *ids = malloc(sizeof *ids * N);
  uint32_t *sizes = malloc(sizeof *sizes * N);
  REQUIRE(ids && sizes);
  for (uint64_t r = 0; r < N; r++) {
    /* Now and then a run of one relation's blocks in order: a scan. */
    ids[r] = r % 20000 < 3000 ? (5ull << 32 | r % 20000) : skewed_id(90000);
    sizes[r] = 1 + (uint32_t)(ids[r] % 7) * 512 + (uint32_t)(rng() % 3); /* sizes change */
  }
  write_trace(ids, sizes, N, 0);
  hs_sim_trace *t;
  CHECK_OK(hs_sim_load(path, NULL, NULL, NULL, NULL, &t));
  if (t) check_loaded(t, ids, sizes, N);
  hs_sim_trace_free(t);

  /* The time stamps and the scans, when asked for, are the trace's. */
  hs_sim_load_options keep = {.keep_time = true, .find_scans = true};
  CHECK_OK(hs_sim_load(path, NULL, &keep, NULL, NULL, &t));
  if (t) {
    hs_trace *tr;
    REQUIRE(hs_trace_open(path, NULL, &tr) == HS_OK);
    trace_clock clock = trace_clock_make(hs_trace_time_unit_ns(tr), 0);
    hs_trace_close(tr);
    bool same = t->time_ms != NULL;
    for (uint64_t r = 0; same && r < N; r++)
      same = t->time_ms[r] == trace_clock_next(&clock, r / 1000 + 1);
    CHECK(same);
    CHECK_EQ(t->time_ms[N - 1], (N - 1) / 1000 * 1000);
    hs_scan_runs want;
    REQUIRE(hs_scan_runs_find(ids, NULL, N, &want) == HS_OK);
    CHECK(want.nstreams > 0);
    CHECK_EQ(t->runs.nstreams, want.nstreams);
    CHECK(t->runs.stream && memcmp(t->runs.stream, want.stream, sizeof *want.stream * N) == 0);
    hs_scan_runs_free(&want);
  }
  hs_sim_trace_free(t);

  /* The cap: exactly the trace's length loads; one less stops, inside a
   * batch, counting the objects of the requests it took. */
  hs_sim_load_options lim = {.max_requests = N, .flag = "--max-requests"};
  CHECK_OK(hs_sim_load(path, NULL, &lim, NULL, NULL, &t));
  hs_sim_trace_free(t);
  lim.max_requests = 100003;
  CHECK_ST(hs_sim_load(path, NULL, &lim, NULL, NULL, &t), HS_ERR_NOMEM);
  reference part;
  reference_of(ids, sizes, lim.max_requests, &part);
  char want[160];
  snprintf(want, sizeof want, "stopped loading after 100003 requests, the limit (%llu distinct",
           (unsigned long long)part.objects);
  CHECK_CONTAINS(hs_last_error(), want);
  free(part.obj);

  /* A truncated last record: an error, or skipped with skip_bad. */
  write_trace(ids, sizes, N, 5);
  hs_trace_options o = {.format = HS_TRACE_AUTO};
  CHECK_ST(hs_sim_load(path, &o, NULL, NULL, NULL, &t), HS_ERR_CORRUPT);
  CHECK_CONTAINS(hs_last_error(), "record 250008: truncated (got 5 of 24 bytes)");
  o.skip_bad = true;
  CHECK_OK(hs_sim_load(path, &o, NULL, NULL, NULL, &t));
  if (t) {
    check_loaded(t, ids, sizes, N);
    CHECK_EQ(t->bad_records, 1);
  }
  hs_sim_trace_free(t);

  /* One size for the first requests, then another: where the first other
   * size comes in a later batch (mapped on the helper thread, the array
   * made then), or at the very first request after the first, or last,
   * every request still has its own size. Every size alike: no array. */
  const uint64_t change_at[] = {1, 16384, 100001, N - 1, N};
  for (size_t k = 0; k < sizeof change_at / sizeof change_at[0]; k++) {
    for (uint64_t r = 0; r < N; r++) sizes[r] = r < change_at[k] ? 8192 : 1 + (uint32_t)(r % 5);
    write_trace(ids, sizes, N, 0);
    CHECK_OK(hs_sim_load(path, NULL, NULL, NULL, NULL, &t));
    if (t) check_loaded(t, ids, sizes, N);
    hs_sim_trace_free(t);
  }
  free(ids), free(sizes);
}

/* A PostgreSQL trace csv (pid and found columns) of several batches: the
 * server's hits and misses, and the distinct pids, as written. */
static void test_pids_and_found(void) {
  enum { N = 40000, PIDS = 37 };
  char csv[256];
  snprintf(csv, sizeof csv, "%s/pg.csv", dir);
  FILE *f = fopen(csv, "w");
  REQUIRE(f);
  int8_t *found = malloc(N);
  REQUIRE(found);
  uint64_t hits = 0, misses = 0;
  fputs("seq,pid,rel,fork,block,found\n", f);
  for (unsigned r = 0; r < N; r++) {
    found[r] = (int8_t)(rng() % 2);
    hits += found[r] == 1;
    misses += found[r] == 0;
    fprintf(f, "%u,%u,16384,0,%u,%d\n", r + 1, 1000 + r * 7 % PIDS, (unsigned)(rng() % 5000),
            found[r]);
  }
  REQUIRE(fclose(f) == 0);
  hs_sim_trace *t;
  CHECK_OK(hs_sim_load(csv, NULL, NULL, NULL, NULL, &t));
  if (t) {
    CHECK_EQ(t->requests, N);
    CHECK_EQ(t->pids, PIDS);
    CHECK_EQ(t->found_hits, hits);
    CHECK_EQ(t->found_misses, misses);
    CHECK(t->found && memcmp(t->found, found, N) == 0);
  }
  hs_sim_trace_free(t);
  free(found);
  unlink(csv);
}

int main(void) {
  REQUIRE(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/t.oracleGeneral", dir);
  test_idmap();
  test_load();
  test_pids_and_found();
  unlink(path);
  rmdir(dir);
  return check_finish();
}
