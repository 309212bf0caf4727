/*
 * crash/crash_workload.c — `hotset crash-test --workload`: clients committing
 * transactions until the process is killed.
 *
 * Client c repeats: lock its pages exclusively (in block order; no other
 * client touches them), set each to (c, V), log the change as one record
 * (hs_buf_log_record: whole pages the first time after a checkpoint's redo
 * point), unlock, log a commit record, flush the log to its end, and only
 * then print "client c value V" — the acknowledgement the parent holds
 * recovery to. Between transactions it reads two cold blocks, so the small
 * FIFO pool keeps writing dirty pages out; the checkpointer runs every
 * 150 ms. A kill can thus land in a page write, a checkpoint, a segment
 * switch or a commit's fdatasync.
 *
 * --torn arms the storage fault layer: one page write among the next few
 * moves half a page and stops. Once it has failed (the pool counts a write
 * error), the process says which page on stderr and kills itself with
 * SIGKILL, leaving the torn page on disk for recovery to repair. Any later
 * page write waits in the I/O observer meanwhile, so nothing rewrites the
 * torn page first.
 *
 * --kill-at WHAT aims the kill instead of leaving it to the parent's clock:
 * the process kills itself at the Nth page write, during the Nth
 * checkpoint's writes or syncs, or inside the Nth commit flush that moves
 * the log into a new segment (N from the seed, 1 to 8).
 */
#include "common/rng.h"
#include "core/error.h"
#include "crash/crash_test.h"
#include "hotset/fault.h"

#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct workload {
  crash_db db;
  uint32_t clients;
  uint64_t seed;
  uint64_t start[CRASH_MAX_CLIENTS]; /* each client's recovered value */
  pthread_mutex_t out_lock;          /* one acknowledgement line at a time */
  bool torn;
  uint64_t torn_nth;       /* which page write (from arming) is torn */
  _Atomic uint64_t writes; /* page writes seen since arming */
  _Atomic uint32_t torn_rel, torn_block;
  crash_kill_at kill_at;
  uint64_t kill_nth;          /* which event of kill_at's kind kills */
  _Atomic uint64_t kill_seen; /* events of that kind so far */
  uint32_t kill_delay_us;     /* from the event to the kill */
  bool power;                 /* armed with the power-cut recorder */
} workload;

/* Set on the client threads: a page write from any other thread is the
 * checkpointer's (the pool has no I/O workers or background writer here). */
static _Thread_local bool on_client_thread;

typedef struct client {
  workload *w;
  uint32_t id;
  pthread_t tid;
} client;

/* Whether the torn write was attempted: failures after it are expected. */
static bool torn_started(workload *w) {
  return w->torn && atomic_load(&w->writes) >= w->torn_nth;
}

static _Noreturn void client_failed(workload *w, uint32_t c) {
  /* After the torn write, evictions and checkpoints may fail on its page:
   * the kill is a moment away. */
  if (torn_started(w))
    for (;;) pause();
  fprintf(stderr, CRASH_PROG ": client %u: %s\n", c, hs_last_error());
  _exit(1);
}

/* Kills the process `delay_us` from now, from a thread of its own, so the
 * thread that met the event goes on into it. */
typedef struct delayed_kill {
  uint32_t delay_us;
  crash_kill_at what;
} delayed_kill;

static void *delayed_kill_main(void *arg) {
  const delayed_kill *k = arg;
  if (k->delay_us) usleep(k->delay_us);
  fprintf(stderr, "kill at %s\n", crash_kill_at_name(k->what));
  fflush(stderr);
  raise(SIGKILL);
  return NULL;
}

static void kill_after(crash_kill_at what, uint32_t delay_us) {
  static delayed_kill k; /* one kill per process */
  k = (delayed_kill){.delay_us = delay_us, .what = what};
  pthread_t t;
  if (delay_us == 0 || pthread_create(&t, NULL, delayed_kill_main, &k) != 0) delayed_kill_main(&k);
}

/* Counts an event of `what`; the Nth of the armed kind kills. */
static void kill_point(workload *w, crash_kill_at what) {
  if (w->kill_at != what) return;
  if (atomic_fetch_add(&w->kill_seen, 1) + 1 == w->kill_nth) kill_after(what, w->kill_delay_us);
}

/* One transaction: client c's pages set to `value`, logged as one record. */
static hs_status change_pages(workload *w, uint32_t c, uint64_t value) {
  hs_pool *pool = w->db.pool;
  hs_buf bufs[CRASH_PAGES_PER_CLIENT];
  hs_wal_page refs[CRASH_PAGES_PER_CLIENT];
  uint32_t n = 0;
  hs_status st = HS_OK;
  for (; n < CRASH_PAGES_PER_CLIENT; n++) {
    hs_blockno blk = c * CRASH_PAGES_PER_CLIENT + n;
    st = hs_pool_read(pool, CRASH_REL, HS_FORK_MAIN, blk, HS_READ_NORMAL, NULL, &bufs[n], NULL);
    if (st != HS_OK) break;
    st = hs_buf_lock(pool, bufs[n], HS_LOCK_EXCLUSIVE);
    if (st != HS_OK) {
      hs_buf_release(pool, bufs[n]);
      break;
    }
    refs[n] = (hs_wal_page){.rel = CRASH_REL, .fork = HS_FORK_MAIN, .block = blk};
    crash_page_fill(hs_buf_page(pool, bufs[n]), c, blk, value);
  }
  if (st == HS_OK) {
    crash_payload pl = {.client = c, .value = value};
    hs_wal_record rec = {.rmgr = CRASH_RMGR,
                         .type = CRASH_REC_TXN,
                         .npages = CRASH_PAGES_PER_CLIENT,
                         .pages = refs,
                         .data = &pl,
                         .len = sizeof pl};
    st = hs_buf_log_record(pool, &rec, bufs, NULL);
  }
  for (uint32_t i = 0; i < n; i++) {
    hs_buf_unlock(pool, bufs[i]);
    hs_buf_release(pool, bufs[i]);
  }
  return st;
}

static hs_status commit(workload *w, uint32_t c, uint64_t value) {
  crash_payload pl = {.client = c, .value = value};
  hs_wal_record rec = {.rmgr = CRASH_RMGR, .type = CRASH_REC_COMMIT, .data = &pl, .len = sizeof pl};
  hs_lsn end;
  hs_status st = hs_wal_insert(w->db.wal, &rec, &end);
  if (st != HS_OK) return st;
  /* This flush carries the log into a new segment: the one switching. */
  if ((end - 1) / crash_segment_bytes > hs_wal_flushed_lsn(w->db.wal) / crash_segment_bytes)
    kill_point(w, CRASH_KILL_SEGMENT_SWITCH);
  st = hs_wal_flush(w->db.wal, end, HS_WAL_CAUSE_COMMIT, NULL);
  return st;
}

static hs_status read_cold(workload *w, bench_rng *rng) {
  hs_buf b;
  hs_status st =
      hs_pool_read(w->db.pool, CRASH_COLD, HS_FORK_MAIN, bench_rng_below(rng, CRASH_COLD_BLOCKS),
                   HS_READ_NORMAL, NULL, &b, NULL);
  if (st == HS_OK) hs_buf_release(w->db.pool, b);
  return st;
}

static void *client_main(void *arg) {
  client *cl = arg;
  workload *w = cl->w;
  on_client_thread = true;
  bench_rng rng;
  bench_rng_seed(&rng, w->seed, cl->id);
  /* Under the power-cut recorder, odd clients stop after a few dozen
   * transactions (and wait for the cut): pages last changed before a
   * checkpoint's redo point rely on that checkpoint's fsyncs, not on
   * the log. */
  uint64_t stop_after = w->power && cl->id % 2 ? 1 + bench_rng_below(&rng, 60) : UINT64_MAX;
  for (uint64_t value = w->start[cl->id] + 1;; value++) {
    if (value - w->start[cl->id] > stop_after)
      for (;;) pause();
    if (change_pages(w, cl->id, value) != HS_OK || commit(w, cl->id, value) != HS_OK)
      client_failed(w, cl->id);
    /* Durable: acknowledge. */
    pthread_mutex_lock(&w->out_lock);
    printf("client %u value %" PRIu64 "\n", cl->id, value);
    fflush(stdout);
    pthread_mutex_unlock(&w->out_lock);
    for (int i = 0; i < 2; i++)
      if (read_cold(w, &rng) != HS_OK) client_failed(w, cl->id);
  }
  return NULL;
}

/* The I/O observer. --torn: notes the torn write's page, and holds back
 * every page write after it until the kill. --kill-at: page writes and
 * the checkpointer's writes are kill points. */
static void observer(void *ctx, hs_io_op op, hs_relid rel, hs_fork fork, hs_blockno block,
                     const void *page) {
  workload *w = ctx;
  (void)fork;
  (void)page;
  if (op != HS_IO_WRITE) return;
  kill_point(w, on_client_thread ? CRASH_KILL_PAGE_WRITE : CRASH_KILL_CHECKPOINT);
  if (!w->torn) return;
  uint64_t n = atomic_fetch_add(&w->writes, 1) + 1;
  if (n == w->torn_nth) {
    atomic_store(&w->torn_rel, rel);
    atomic_store(&w->torn_block, block);
  } else if (n > w->torn_nth) {
    for (;;) pause();
  }
}

/* Waits for the torn write to have failed, then dies by SIGKILL. */
static _Noreturn void torn_wait_and_kill(workload *w) {
  for (;;) {
    if (torn_started(w)) {
      hs_pool_stats s;
      hs_pool_stats_get(w->db.pool, &s);
      if (hs_pool_stats_total(&s, HS_STAT_WRITE_ERRORS) > 0) {
        fprintf(stderr, "torn write rel %u block %u\n", atomic_load(&w->torn_rel),
                atomic_load(&w->torn_block));
        fflush(stderr);
        raise(SIGKILL);
      }
    }
    usleep(200);
  }
}

/* The recovered value of every client; a client whose pages disagree or
 * fail would be a bug recovery left: refuse to build on it. */
static hs_status read_start_values(workload *w) {
  for (uint32_t c = 0; c < w->clients; c++) {
    for (uint32_t i = 0; i < CRASH_PAGES_PER_CLIENT; i++) {
      hs_blockno blk = c * CRASH_PAGES_PER_CLIENT + i;
      hs_buf b;
      hs_status st =
          hs_pool_read(w->db.pool, CRASH_REL, HS_FORK_MAIN, blk, HS_READ_NORMAL, NULL, &b, NULL);
      if (st != HS_OK) return st;
      hs_buf_lock(w->db.pool, b, HS_LOCK_SHARE);
      uint64_t v = 0;
      crash_page_state s = crash_page_parse(hs_buf_page(w->db.pool, b), blk, &v);
      hs_buf_unlock(w->db.pool, b);
      hs_buf_release(w->db.pool, b);
      if (s == CRASH_PAGE_BAD)
        return hs_fail(HS_ERR_CORRUPT, 0, "block %u holds what no transaction wrote", blk);
      if (i > 0 && v != w->start[c])
        return hs_fail(HS_ERR_CORRUPT, 0, "client %u's pages disagree (%" PRIu64 ", %" PRIu64 ")",
                       c, w->start[c], v);
      w->start[c] = v;
    }
  }
  return HS_OK;
}

int crash_workload_run(const char *dir, uint32_t clients, uint64_t seed, bool torn,
                       crash_kill_at kill_at, const pc_arm *power) {
  static workload w; /* lives until the kill */
  memset(&w, 0, sizeof w);
  w.clients = clients;
  w.seed = seed;
  w.torn = torn;
  w.kill_at = kill_at;
  w.power = power != NULL;
  pthread_mutex_init(&w.out_lock, NULL);
  bench_rng rng;
  bench_rng_seed(&rng, seed, CRASH_MAX_CLIENTS);
  w.kill_nth = 1 + bench_rng_below(&rng, 8);
  w.kill_delay_us = kill_at == CRASH_KILL_CHECKPOINT       ? bench_rng_below(&rng, 80001)
                    : kill_at == CRASH_KILL_SEGMENT_SWITCH ? bench_rng_below(&rng, 501)
                                                           : 0;
  /* Armed before opening: a cut may land in the open's recovery too. */
  hs_status st = power ? pc_arm_recorder(power) : HS_OK;
  if (st == HS_OK) st = crash_db_open(dir, clients, true, &w.db);
  if (st == HS_OK) st = read_start_values(&w);
  if (st == HS_OK && (torn || kill_at != CRASH_KILL_NONE)) {
    hs_smgr *smgr = hs_pool_smgr(w.db.pool);
    hs_smgr_set_observer(smgr, observer, &w);
    if (torn) {
      w.torn_nth = 1 + bench_rng_below(&rng, 16);
      st = hs_smgr_inject_fault(smgr, HS_IO_WRITE, w.torn_nth, 0, 1);
    }
  }
  if (st != HS_OK) {
    fprintf(stderr, CRASH_PROG ": opening %s: %s\n", dir, hs_last_error());
    return 1;
  }
  static client cl[CRASH_MAX_CLIENTS];
  for (uint32_t c = 0; c < clients; c++) {
    cl[c] = (client){.w = &w, .id = c};
    int err = pthread_create(&cl[c].tid, NULL, client_main, &cl[c]);
    if (err) {
      fprintf(stderr, CRASH_PROG ": starting client %u: %s\n", c, strerror(err));
      _exit(1);
    }
  }
  if (torn) torn_wait_and_kill(&w);
  for (uint32_t c = 0; c < clients; c++) pthread_join(cl[c].tid, NULL);
  return 1; /* clients never return */
}
