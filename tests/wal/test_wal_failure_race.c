/*
 * tests/test_wal_failure_race.c — a flush must not write what a failed
 * insert never copied (white-box, deterministic).
 *
 * The race: a flush's leader checks that the log is healthy, then takes the
 * write lock. In between, another thread's insert can need room in the log
 * buffer, try to write older bytes out, fail, and stop the log — giving up
 * its insertion slot without copying its record, so "everything copied" now
 * runs past bytes that were never put in the buffer. A leader that went on
 * to write up to there would make stale buffer bytes durable and report the
 * flush done. The leader must look again under the write lock (wal_write_out
 * does). A hook in that window (before_write_lock) holds the leader there
 * while the main thread makes the insert fail with the fault layer.
 */
#include "check.h"
#include "core/seams.h"
#include "hotset/fault.h"
#include "hotset/wal.h"
#include "testdir.h"
#include "wal/wal_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static char dir[4096];

/* The leader's window: it says it is there, then waits for the go. */
typedef struct window {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool leader_in, go;
} window;

static void hold_leader(void *ctx) {
  window *win = ctx;
  pthread_mutex_lock(&win->mu);
  win->leader_in = true;
  pthread_cond_broadcast(&win->cv);
  while (!win->go) pthread_cond_wait(&win->cv, &win->mu);
  pthread_mutex_unlock(&win->mu);
}

typedef struct flusher {
  hs_wal *wal;
  hs_lsn upto;
  hs_status st;
} flusher;

static void *flush_main(void *arg) {
  flusher *f = arg;
  f->st = hs_wal_flush(f->wal, f->upto, HS_WAL_CAUSE_COMMIT, NULL);
  return NULL;
}

int main(void) {
  testdir_make(dir, sizeof dir, "wal-race");
  hs_wal_options o;
  hs_wal_options_init(&o);
  o.dir = dir;
  o.segment_bytes = 1 << 16;
  o.buffer_bytes = 1 << 15; /* 32 KiB: a few records fill it */
  o.writer_delay_ms = 0;
  hs_wal *w;
  REQUIRE(hs_wal_open(&o, &w) == HS_OK);
  window win = {.leader_in = false, .go = false};
  pthread_mutex_init(&win.mu, NULL);
  pthread_cond_init(&win.cv, NULL);

  /* Records that fill most of the buffer, nothing written out yet. */
  static unsigned char payload[7000];
  memset(payload, 0xAB, sizeof payload);
  hs_wal_record rec = {.rmgr = HS_WAL_RMGR_LOG, .data = payload, .len = sizeof payload};
  hs_lsn first_end = 0, end;
  while (hs_wal_insert_lsn(w) + 2 * 7100 < o.buffer_bytes) {
    REQUIRE(hs_wal_insert(w, &rec, &end) == HS_OK);
    if (!first_end) first_end = end;
  }

  /* The leader of a flush, held between its health check and the lock. */
  seams.wal_before_write_lock = hold_leader;
  seams.wal_before_write_lock_ctx = &win;
  flusher f = {w, first_end, HS_OK};
  pthread_t t;
  pthread_create(&t, NULL, flush_main, &f);
  pthread_mutex_lock(&win.mu);
  while (!win.leader_in) pthread_cond_wait(&win.cv, &win.mu);
  pthread_mutex_unlock(&win.mu);

  /* An insert that needs room: it writes older bytes out, and that write
   * fails — the log stops, this record is never copied. */
  REQUIRE(hs_wal_inject_fault(w, HS_WAL_FAULT_WRITE, 1, EIO, 1) == HS_OK);
  hs_status st = hs_wal_insert(w, &rec, &end);
  while (st == HS_OK) st = hs_wal_insert(w, &rec, &end); /* until one needs room */
  CHECK_EQ(st, HS_ERR_IO);

  pthread_mutex_lock(&win.mu);
  win.go = true;
  pthread_cond_broadcast(&win.cv);
  pthread_mutex_unlock(&win.mu);
  pthread_join(t, NULL);

  /* The leader saw the failure: nothing written, nothing called durable. */
  CHECK_EQ(f.st, HS_ERR_IO);
  CHECK_EQ(hs_wal_flushed_lsn(w), 0);
  hs_wal_stats s;
  hs_wal_stats_get(w, &s);
  CHECK_EQ(s.syncs, 0);
  seams.wal_before_write_lock = NULL;
  CHECK_ST(hs_wal_close(w), HS_ERR_IO);

  /* On disk: the log is empty (the failed write put nothing there). */
  hs_wal_reader *r;
  REQUIRE(hs_wal_reader_open(dir, o.segment_bytes, 0, &r) == HS_OK);
  hs_wal_read_record rr;
  bool got = true;
  CHECK_OK(hs_wal_reader_next(r, &rr, &got));
  CHECK(!got);
  hs_wal_reader_close(r);
  pthread_mutex_destroy(&win.mu);
  pthread_cond_destroy(&win.cv);
  testdir_remove(dir);
  return check_finish();
}
