/*
 * pool/io_workers.c — a pool's I/O worker threads (io_workers.h).
 *
 * PostgreSQL 18 hands a read stream's reads to I/O workers (io_method =
 * worker) so that a backend keeps working while its next blocks arrive.
 * Here a read stream with look-ahead claims a batch of buffers, queues one
 * request per run of consecutive blocks and goes on handing out the batch
 * before it; a worker does the preadv and ends each buffer's I/O, which
 * wakes whoever waits for the page — the stream itself, or any other reader.
 *
 * A request's buffers stay pinned by the stream while the worker reads them:
 * a buffer with I/O in progress must never be unpinned (it could be taken as
 * a victim), so the stream waits for a request's end before it lets go.
 *
 * The hand-off costs. A batch of 16 pages is a few microseconds of copying
 * from the page cache; a worker that went to sleep on a condition variable
 * after each one would take longer than that to wake up. So an idle worker
 * first watches the queue for IDLE_SPIN_NS before it sleeps, and a submitter
 * signals only when some worker is asleep.
 */
#include "pool/io_workers.h"

#include "core/error.h"
#include "core/thread_name.h"
#include "hotset/storage.h"
#include "pool/buf_internal.h"
#include "pool/pool_internal.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

#define IDLE_SPIN_NS 50000u

io_request *io_request_alloc(uint32_t n) {
  size_t size = sizeof(io_request) + (size_t)n * (sizeof(void *) + sizeof(hs_buf));
  io_request *r = malloc(size);
  if (!r) return NULL;
  memset(r, 0, sizeof *r);
  r->n = n;
  r->pages = (void **)(r + 1);
  r->bufs = (hs_buf *)(r->pages + n);
  return r;
}

static void do_request(io_workers *w, io_request *r) {
  hs_pool *pool = w->pool;
  hs_status st = hs_smgr_readv(hs_pool_smgr(pool), r->rel, r->fork, r->first, r->n, r->pages);
  st = pool_check_read(pool, r->rel, r->fork, r->first, r->bufs, r->n, st);
  if (st != HS_OK && r->on_error) r->on_error(r->error_ctx, r, st, hs_last_error());
  pool_end_reads(pool, r->bufs, r->n, st == HS_OK, r->ctx, false);
  free(r);
}

/* Waits until the queue has something or the workers must stop; returns the
 * request (NULL: stop). Looks without the lock for a while first. */
static io_request *take(io_workers *w) {
  uint64_t until = 0;
  for (unsigned i = 0; atomic_load_explicit(&w->queued, memory_order_acquire) == 0; i++) {
    if ((i & 63) == 0) {
      uint64_t now = pool_now_ns();
      if (!until) until = now + IDLE_SPIN_NS;
      if (now >= until) break;
      sched_yield(); /* a thread of this core may have work to do */
    }
    cpu_relax();
  }
  pthread_mutex_lock(&w->mu);
  while (!w->head && !w->stop) {
    w->sleeping++;
    pthread_cond_wait(&w->cv, &w->mu);
    w->sleeping--;
  }
  io_request *r = w->head;
  if (r) {
    w->head = r->next;
    if (!w->head) w->tail = NULL;
    atomic_fetch_sub_explicit(&w->queued, 1, memory_order_relaxed);
  }
  pthread_mutex_unlock(&w->mu);
  return r;
}

static void *worker_main(void *arg) {
  io_workers *w = arg;
  /* Counts go to the shared statistics shard: the exclusive ones (64 in the
   * process) are for the application's threads, whose pins they also make
   * private. A worker counts once per request, not per page. */
  stat_shard_use_shared();
  io_request *r;
  while ((r = take(w)) != NULL) do_request(w, r);
  return NULL;
}

hs_status io_workers_start(io_workers *w, hs_pool *pool, uint32_t n) {
  memset(w, 0, sizeof *w);
  w->pool = pool;
  atomic_init(&w->queued, 0);
  pthread_mutex_init(&w->mu, NULL);
  pthread_cond_init(&w->cv, NULL);
  w->threads = calloc(n, sizeof *w->threads);
  if (!w->threads) {
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
    return hs_fail(HS_ERR_NOMEM, 0, "allocating %u I/O workers", n);
  }
  for (; w->n < n; w->n++) {
    int err = pthread_create(&w->threads[w->n], NULL, worker_main, w);
    if (err) {
      io_workers_stop(w);
      return hs_fail(HS_ERR_NOMEM, err, "starting I/O worker %u of %u: %s", w->n + 1, n,
                     strerror(err));
    }
    hs_name_thread(w->threads[w->n], "hs-io-worker");
  }
  return HS_OK;
}

void io_workers_submit(io_workers *w, io_request *r) {
  r->next = NULL;
  pthread_mutex_lock(&w->mu);
  if (w->tail)
    w->tail->next = r;
  else
    w->head = r;
  w->tail = r;
  atomic_fetch_add_explicit(&w->queued, 1, memory_order_release);
  if (w->sleeping) pthread_cond_signal(&w->cv);
  pthread_mutex_unlock(&w->mu);
}

void io_workers_stop(io_workers *w) {
  if (!w->threads) return;
  pthread_mutex_lock(&w->mu);
  w->stop = true;
  pthread_cond_broadcast(&w->cv);
  pthread_mutex_unlock(&w->mu);
  for (uint32_t i = 0; i < w->n; i++) pthread_join(w->threads[i], NULL);
  free(w->threads);
  w->threads = NULL;
  pthread_mutex_destroy(&w->mu);
  pthread_cond_destroy(&w->cv);
}
