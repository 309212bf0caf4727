/*
 * pool/io_workers.h — threads that do a pool's combined reads for its read
 * streams, so that a scan's reading (the copy from the page cache or the
 * wait for the device) overlaps with the scanning thread's own work.
 */
#ifndef HOTSET_POOL_IO_WORKERS_H
#define HOTSET_POOL_IO_WORKERS_H

#include "hotset/pool.h"
#include "hotset/stats.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

struct io_request;
/* Called by a worker whose read failed, before the buffers' I/O ends. */
typedef void (*io_error_fn)(void *ctx, const struct io_request *r, hs_status status,
                            const char *message);

/* One combined read: blocks first .. first+n-1 into bufs[i] (whose pages are
 * pages[i]), each claimed (I/O in progress) and pinned by the submitter.
 * The worker ends every buffer's I/O, VALID or IO_ERROR, and frees the
 * request; the pins stay with the submitter. */
typedef struct io_request {
  struct io_request *next;
  hs_relid rel;
  hs_fork fork;
  hs_blockno first;
  uint32_t n;
  hs_io_context ctx;
  io_error_fn on_error;
  void *error_ctx;
  hs_buf *bufs; /* n, in the same allocation */
  void **pages; /* n, in the same allocation */
} io_request;

typedef struct io_workers {
  hs_pool *pool;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  io_request *head, *tail;
  _Atomic uint32_t queued; /* requests in the list, for the spinning look */
  uint32_t sleeping;       /* workers waiting on cv */
  bool stop;
  uint32_t n;
  pthread_t *threads;
} io_workers;

/* An io_request for n blocks, or NULL (no memory). */
io_request *io_request_alloc(uint32_t n);
hs_status io_workers_start(io_workers *w, hs_pool *pool, uint32_t n);
void io_workers_submit(io_workers *w, io_request *r);
/* Lets the workers finish what is queued, then joins them. */
void io_workers_stop(io_workers *w);

#endif
