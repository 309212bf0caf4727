/*
 * crash/crash_heap.c — the crash test's heap workload (`crash-test --workload
 * --heap`) and its check of a recovered directory.
 *
 * One heap table (CRASH_HEAP_REL) with its primary-key index
 * (CRASH_INDEX_REL). Client c owns CRASH_HEAP_ROWS rows, keys
 * c*CRASH_HEAP_ROWS+1 .., and a history: key H(c, V) = R + (V-1)*N + c + 1
 * (N the clients the directory has room for, R = N*CRASH_HEAP_ROWS) for
 * its transaction V. Transaction V
 * of client c, one hs_xact transaction:
 *   V = 1   inserts its rows at version 1;
 *   V > 1   updates each of its rows from version V-1 to V (hs_heap_update:
 *           mostly small tuples, one in eight a large one that moves to
 *           another page, and back to small the time after);
 *   always  inserts H(c, V), and deletes H(c, V-2);
 * then commits (hs_xact_commit flushes the log to the commit record) and
 * only then prints "client c value V". Meanwhile a thread vacuums the table
 * and its index over and over, checkpoints come every 40 ms and the
 * background writer runs (crash_db_open's power-loss settings).
 *
 * Every tuple is (key u64, client u32, kind u32, version u64) and a filler
 * derived from those, so a tuple scribbled on or misplaced does not parse.
 *
 * The check, in a fresh snapshot: a client's rows all carry one version V
 * (whole or not at all; none found: V = 0) — its recovered value; H(c, V)
 * and H(c, V-1) are there with their versions, H(c, V-2) and H(c, V+1) are
 * not. Then vacuum runs over the recovered table to its end (an error
 * counts: vacuum found the table corrupt), and the rows are looked up again.
 */
#include "common/rng.h"
#include "core/error.h"
#include "crash/crash_test.h"
#include "hotset/vacuum.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { KIND_ROW = 1, KIND_HISTORY = 2 };
#define TUPLE_HEAD 24u

static void put_u32(unsigned char *p, uint32_t v) {
  memcpy(p, &v, sizeof v);
}
static void put_u64(unsigned char *p, uint64_t v) {
  memcpy(p, &v, sizeof v);
}
static uint32_t get_u32(const unsigned char *p) {
  uint32_t v;
  memcpy(&v, p, sizeof v);
  return v;
}
static uint64_t get_u64(const unsigned char *p) {
  uint64_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

static unsigned char filler_byte(uint64_t key, uint64_t version, uint32_t i) {
  uint64_t x = (key * 0x9E3779B97F4A7C15ull) ^ (version * 0xC2B2AE3D27D4EB4Full) ^ i;
  x ^= x >> 29;
  return (unsigned char)(x * 0xBF58476D1CE4E5B9ull >> 56);
}

static uint32_t tuple_fill(unsigned char *t, uint64_t key, uint32_t client, uint32_t kind,
                           uint64_t version, uint32_t len) {
  put_u64(t, key);
  put_u32(t + 8, client);
  put_u32(t + 12, kind);
  put_u64(t + 16, version);
  for (uint32_t i = TUPLE_HEAD; i < len; i++) t[i] = filler_byte(key, version, i);
  return len;
}

/* Whether the tuple is a whole one of (key, client, kind); *version. */
static bool tuple_parse(const unsigned char *t, uint32_t len, uint64_t key, uint32_t client,
                        uint32_t kind, uint64_t *version) {
  if (len < TUPLE_HEAD || get_u64(t) != key || get_u32(t + 8) != client || get_u32(t + 12) != kind)
    return false;
  *version = get_u64(t + 16);
  for (uint32_t i = TUPLE_HEAD; i < len; i++)
    if (t[i] != filler_byte(key, *version, i)) return false;
  return true;
}

static uint64_t row_key(uint32_t c, uint32_t r) {
  return (uint64_t)c * CRASH_HEAP_ROWS + r + 1;
}
static uint64_t history_key(uint32_t clients, uint32_t c, uint64_t v) {
  return (uint64_t)clients * CRASH_HEAP_ROWS + (v - 1) * clients + c + 1;
}

/* Looks `key` up in a snapshot; *version 0 if not found, *bad if the
 * version found does not parse. */
static hs_status lookup(crash_db *db, const hs_snapshot *s, hs_xid self, uint64_t key,
                        uint32_t client, uint32_t kind, unsigned char *buf, hs_tid *tid,
                        uint64_t *version, bool *bad) {
  uint32_t len = 0;
  bool found = false;
  *version = 0;
  *bad = false;
  hs_status st =
      hs_pk_index_lookup(db->ix, db->heap, key, s, self, tid, buf, HS_HEAP_MAX_DATA, &len, &found);
  if (st != HS_OK || !found) return st;
  if (!tuple_parse(buf, len, key, client, kind, version)) *bad = true;
  return HS_OK;
}

/* Records `key`'s first version at `tid`: an entry left by an aborted
 * insert (a crash before its commit) is moved to it. */
static hs_status index_add(crash_db *db, uint64_t key, hs_tid tid) {
  hs_status st = HS_ERR_BUSY;
  for (int attempt = 0; attempt < 64; attempt++) {
    st = hs_pk_index_insert(db->ix, key, tid);
    if (st != HS_ERR_EXISTS) return st;
    hs_tid old;
    bool found;
    st = hs_pk_index_get(db->ix, key, &old, &found);
    if (st != HS_OK) return st;
    if (!found) continue;
    st = hs_pk_index_move(db->ix, key, old, tid);
    if (st != HS_ERR_BUSY) return st; /* else vacuum moved it meanwhile */
  }
  return st;
}

/* ---- the workload ---- */

typedef struct heap_workload {
  crash_db db;
  uint32_t clients;
  uint64_t seed;
  bool power;
  uint64_t start[CRASH_MAX_CLIENTS];
  pthread_mutex_t out_lock;
} heap_workload;

typedef struct heap_client {
  heap_workload *w;
  uint32_t id;
  pthread_t tid;
  hs_snapshot snap;
  unsigned char buf[HS_HEAP_MAX_DATA + 64];
  unsigned char tup[HS_HEAP_MAX_DATA + 64];
} heap_client;

static _Noreturn void heap_failed(const char *who, uint32_t c, const char *why) {
  fprintf(stderr, CRASH_PROG ": %s %u: %s\n", who, c, why);
  fflush(stderr);
  _exit(1);
}

/* Transaction `v` of client cl; on error, hs_last_error() says why. */
static hs_status heap_txn(heap_client *cl, bench_rng *rng, uint64_t v) {
  crash_db *db = &cl->w->db;
  uint32_t c = cl->id;
  uint32_t max = hs_heap_max_data(db->heap);
  hs_xid xid;
  hs_status st = hs_xact_begin(db->xact, &xid);
  if (st != HS_OK) return st;
  st = hs_xact_take_snapshot(db->xact, &cl->snap);
  if (st != HS_OK) {
    hs_xact_abort(db->xact, xid);
    return st;
  }
  for (uint32_t r = 0; st == HS_OK && r < CRASH_HEAP_ROWS; r++) {
    uint64_t key = row_key(c, r);
    /* Mostly small; one in eight large enough to move off its page. */
    uint32_t len = TUPLE_HEAD + bench_rng_below(rng, 40);
    if (bench_rng_below(rng, 8) == 0) len = max / 3 + bench_rng_below(rng, max / 6);
    tuple_fill(cl->tup, key, c, KIND_ROW, v, len);
    hs_tid tid, new_tid;
    if (v == 1) {
      st = hs_heap_insert(db->heap, xid, cl->tup, len, &tid);
      if (st == HS_OK) st = index_add(db, key, tid);
      continue;
    }
    uint64_t have;
    bool bad;
    st = lookup(db, &cl->snap, xid, key, c, KIND_ROW, cl->buf, &tid, &have, &bad);
    if (st == HS_OK && (bad || have != v - 1))
      st = hs_fail(HS_ERR_CORRUPT, 0, "row %" PRIu64 " holds version %" PRIu64 "%s, not %" PRIu64,
                   key, have, bad ? " (garbled)" : "", v - 1);
    if (st == HS_OK) st = hs_heap_update(db->heap, xid, tid, cl->tup, len, &new_tid);
  }
  if (st == HS_OK) {
    uint64_t key = history_key(db->clients, c, v);
    uint32_t len = tuple_fill(cl->tup, key, c, KIND_HISTORY, v, TUPLE_HEAD + 8);
    hs_tid tid;
    st = hs_heap_insert(db->heap, xid, cl->tup, len, &tid);
    if (st == HS_OK) st = index_add(db, key, tid);
  }
  if (st == HS_OK && v > 2) {
    uint64_t key = history_key(db->clients, c, v - 2), have;
    hs_tid tid;
    bool bad;
    st = lookup(db, &cl->snap, xid, key, c, KIND_HISTORY, cl->buf, &tid, &have, &bad);
    if (st == HS_OK && (bad || have != v - 2))
      st = hs_fail(HS_ERR_CORRUPT, 0, "history %" PRIu64 " holds version %" PRIu64 ", not %" PRIu64,
                   key, have, v - 2);
    if (st == HS_OK) st = hs_heap_delete(db->heap, xid, tid);
  }
  hs_xact_release_snapshot(db->xact, &cl->snap);
  if (st != HS_OK) {
    char why[512];
    snprintf(why, sizeof why, "%s", hs_last_error());
    hs_xact_abort(db->xact, xid);
    return hs_fail(st, 0, "%s", why);
  }
  return hs_xact_commit(db->xact, xid); /* durable once it returns */
}

static void *heap_client_main(void *arg) {
  heap_client *cl = arg;
  heap_workload *w = cl->w;
  bench_rng rng;
  bench_rng_seed(&rng, w->seed, cl->id);
  /* As the page workload: under the power-cut recorder, odd clients stop
   * after a few dozen transactions, so some rows' last change sits behind
   * a checkpoint's redo point. */
  uint64_t stop_after = w->power && cl->id % 2 ? 1 + bench_rng_below(&rng, 60) : UINT64_MAX;
  for (uint64_t v = w->start[cl->id] + 1;; v++) {
    if (v - w->start[cl->id] > stop_after)
      for (;;) pause();
    if (heap_txn(cl, &rng, v) != HS_OK) heap_failed("client", cl->id, hs_last_error());
    pthread_mutex_lock(&w->out_lock);
    printf("client %u value %" PRIu64 "\n", cl->id, v);
    fflush(stdout);
    pthread_mutex_unlock(&w->out_lock);
  }
  return NULL;
}

static void *vacuum_main(void *arg) {
  heap_workload *w = arg;
  hs_vacuum_options o;
  hs_vacuum_options_init(&o);
  o.cost_delay_ms = 0;
  for (;;) {
    hs_vacuum_stats s;
    if (hs_vacuum(w->db.heap, w->db.ix, &o, &s) != HS_OK) heap_failed("vacuum", 0, hs_last_error());
    usleep(2000); /* pacing only: the clients need the CPU too */
  }
  return NULL;
}

/* Each client's committed value, from what recovery left. */
static hs_status heap_start_values(heap_workload *w) {
  crash_check c;
  memset(&c, 0, sizeof c);
  char *errs_buf = NULL;
  size_t errs_len = 0;
  FILE *errs = open_memstream(&errs_buf, &errs_len);
  if (!errs) return hs_fail(HS_ERR_NOMEM, 0, "no memory");
  c.clients = w->clients;
  hs_status st = crash_heap_check(&w->db, errs, &c);
  fclose(errs);
  if (st == HS_OK && (c.heap_bad || c.vacuum_failed || c.partial_clients))
    st = hs_fail(HS_ERR_CORRUPT, 0, "the recovered table is wrong: %s", errs_buf);
  free(errs_buf);
  for (uint32_t i = 0; i < w->clients; i++) w->start[i] = c.value[i];
  return st;
}

int crash_heap_workload_run(const char *dir, uint32_t clients, uint64_t seed, const pc_arm *power) {
  static heap_workload w; /* lives until the kill */
  memset(&w, 0, sizeof w);
  w.seed = seed;
  w.power = power != NULL;
  pthread_mutex_init(&w.out_lock, NULL);
  crash_heap = true;
  hs_status st = power ? pc_arm_recorder(power) : HS_OK;
  if (st == HS_OK) st = crash_db_open(dir, clients, true, &w.db);
  w.clients = w.db.clients < clients ? w.db.clients : clients;
  if (st == HS_OK) st = heap_start_values(&w);
  if (st != HS_OK) {
    fprintf(stderr, CRASH_PROG ": opening %s: %s\n", dir, hs_last_error());
    return 1;
  }
  static heap_client cl[CRASH_MAX_CLIENTS];
  for (uint32_t c = 0; c < w.clients; c++) {
    cl[c].w = &w;
    cl[c].id = c;
    int err = pthread_create(&cl[c].tid, NULL, heap_client_main, &cl[c]);
    if (err) heap_failed("starting client", c, strerror(err));
  }
  pthread_t vt;
  int err = pthread_create(&vt, NULL, vacuum_main, &w);
  if (err) heap_failed("starting vacuum", 0, strerror(err));
  for (uint32_t c = 0; c < w.clients; c++) pthread_join(cl[c].tid, NULL);
  return 1; /* clients never return */
}

/* ---- the check ---- */

/* One look at every client's rows and history; value[] set when `first`,
 * else held to it. */
static hs_status check_rows(crash_db *db, hs_snapshot *s, unsigned char *buf, FILE *errs,
                            crash_check *out, bool first, const char *when) {
  uint32_t n = out->clients;
  for (uint32_t c = 0; c < n; c++) {
    uint64_t lo = UINT64_MAX, hi = 0;
    for (uint32_t r = 0; r < CRASH_HEAP_ROWS; r++) {
      uint64_t key = row_key(c, r), v;
      hs_tid tid;
      bool bad;
      hs_status st = lookup(db, s, 0, key, c, KIND_ROW, buf, &tid, &v, &bad);
      if (st != HS_OK) return st;
      if (bad) {
        out->heap_bad++;
        fprintf(errs, CRASH_PROG ": %s: client %u, row %" PRIu64 " holds what nothing wrote\n",
                when, c, key);
      }
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
    if (lo != hi) {
      out->partial_clients++;
      fprintf(errs,
              CRASH_PROG ": %s: client %u: its rows disagree (versions %" PRIu64 " to %" PRIu64
                         "): a transaction there in part\n",
              when, c, lo, hi);
    }
    if (first) {
      out->value[c] = lo;
    } else if (lo != out->value[c]) {
      out->heap_bad++;
      fprintf(errs, CRASH_PROG ": %s: client %u: rows at version %" PRIu64 ", before %" PRIu64 "\n",
              when, c, lo, out->value[c]);
    }
    /* The history: H(V), H(V-1) there, H(V-2) deleted, H(V+1) never. */
    uint64_t v0 = lo;
    for (uint64_t h = v0 > 2 ? v0 - 2 : 1; h <= v0 + 1; h++) {
      uint64_t key = history_key(db->clients, c, h), v;
      hs_tid tid;
      bool bad;
      hs_status st = lookup(db, s, 0, key, c, KIND_HISTORY, buf, &tid, &v, &bad);
      if (st != HS_OK) return st;
      bool want = h + 2 > v0 && h <= v0;
      if (bad || (want && v != h) || (!want && v != 0)) {
        out->heap_bad++;
        fprintf(errs,
                CRASH_PROG ": %s: client %u at version %" PRIu64 ": history row %" PRIu64
                           " (version %" PRIu64 ") %s\n",
                when, c, v0, h, v,
                bad    ? "holds what nothing wrote"
                : want ? "is missing"
                       : "should not be visible");
      }
    }
  }
  return HS_OK;
}

hs_status crash_heap_check(crash_db *db, FILE *errs, crash_check *out) {
  if (!out->clients || out->clients > db->clients) out->clients = db->clients;
  hs_snapshot *s = malloc(sizeof *s);
  unsigned char *buf = malloc(HS_HEAP_MAX_DATA + 64);
  if (!s || !buf) {
    free(s);
    free(buf);
    return hs_fail(HS_ERR_NOMEM, 0, "crash-test: no memory for the heap check");
  }
  hs_status st = hs_xact_take_snapshot(db->xact, s);
  if (st == HS_OK) {
    st = check_rows(db, s, buf, errs, out, true, "after recovery");
    hs_xact_release_snapshot(db->xact, s);
  }
  if (st == HS_OK) {
    /* Vacuum must get through the recovered table. */
    hs_vacuum_stats vs;
    if (hs_vacuum(db->heap, db->ix, NULL, &vs) != HS_OK) {
      out->vacuum_failed++;
      fprintf(errs, CRASH_PROG ": vacuum of the recovered table failed: %s\n", hs_last_error());
    } else {
      st = hs_xact_take_snapshot(db->xact, s);
      if (st == HS_OK) {
        st = check_rows(db, s, buf, errs, out, false, "after vacuum");
        hs_xact_release_snapshot(db->xact, s);
      }
    }
  }
  free(s);
  free(buf);
  return st;
}
