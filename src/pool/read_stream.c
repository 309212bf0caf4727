/*
 * pool/read_stream.c — read streams (hotset/stream.h).
 *
 * Each fill is one batch: up to `combine` blocks, all taken from the source
 * first, each then either found in the pool (pinned at once) or claimed —
 * given a buffer that carries its tag with I/O in progress (pool_claim) —
 * and runs of consecutive claimed blocks read with one hs_smgr_readv, here
 * or on an I/O worker. Without workers a fill comes when the caller has
 * taken everything queued; with them, whenever fewer than ASYNC_BATCHES
 * batches are held.
 *
 * Why it cannot deadlock: while the stream holds claims whose read it has
 * not issued yet, other threads that want those blocks wait for it. So the
 * stream never waits for anything itself while it holds such claims: a
 * block found with someone else's read in progress first makes the stream
 * issue its own pending run, then wait. Taking a victim never waits for a
 * read (only, rarely, for another thread's write, which waits for nobody).
 */
#include "core/error.h"
#include "hotset/storage.h"
#include "hotset/stream.h"
#include "pool/pool_internal.h"
#include "pool/strategy_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WORKER_ERRORS 4

typedef struct worker_error {
  hs_blockno first;
  uint32_t n; /* 0: unused */
  hs_status status;
  int err;
  char message[400];
} worker_error;

typedef struct queued {
  hs_buf buf;
  hs_blockno block;
  bool in_flight; /* an I/O worker may still be reading it */
} queued;

/* With I/O workers the stream holds two batches: the one being handed out
 * and the one being read. The scan claims the batch after next as soon as
 * it has handed out the last page of a batch (the ring's buffers of that
 * batch are then free again), while the worker is still reading the next
 * one: claiming is several times quicker than reading (copying 8 KiB from
 * the page cache takes about 350 ns here), so the worker never waits. */
#define ASYNC_BATCHES 2
#define QUEUE_CAP     (2 * HS_SMGR_READV_MAX) /* the most a stream holds pinned */
_Static_assert((QUEUE_CAP & (QUEUE_CAP - 1)) == 0, "queue indexes wrap around at 2^32");

struct hs_read_stream {
  hs_pool *pool;
  hs_relid rel;
  hs_fork fork;
  hs_strategy *ring; /* the strategy if it has a ring, else NULL */
  hs_io_context ctx;
  hs_block_source_fn next_block;
  void *ctx_arg;
  uint32_t combine_max; /* pages, from combine_bytes */
  bool async;           /* the pool has I/O workers: one batch read ahead */
  bool ended;           /* the source said it is done */
  bool failed;          /* an error was returned; only close is left */
  /* Read ahead, handed out in order: queue[head % QUEUE_CAP .. tail). */
  uint32_t head, tail;
  queued queue[QUEUE_CAP];
  /* The run of claimed consecutive blocks not issued yet. */
  uint32_t run_len;
  hs_blockno run_first;
  hs_buf run_bufs[HS_SMGR_READV_MAX];
  void *run_pages[HS_SMGR_READV_MAX];
  /* Blocks taken from the source and not claimed yet: a fill asks the
   * source for its whole batch before it claims anything, because other
   * readers of a claimed block wait until its read is issued, and the
   * source may take its time (a paced scan naps in it) or read through the
   * pool itself. */
  uint32_t pending_at, pending_len;
  hs_blockno pending[HS_SMGR_READV_MAX];
  /* The last errors I/O workers met on our requests, by block range. */
  pthread_mutex_t err_lock;
  worker_error errors[WORKER_ERRORS];
  uint32_t next_error;
};

static queued *at(hs_read_stream *s, uint32_t i) {
  return &s->queue[i % QUEUE_CAP];
}

hs_status hs_read_stream_open(hs_pool *pool, hs_relid rel, hs_fork fork, hs_strategy *strategy,
                              hs_block_source_fn next_block, void *ctx, uint32_t combine_bytes,
                              hs_read_stream **out) {
  if (!out) return hs_fail(HS_ERR_MISUSE, 0, "hs_read_stream_open: out is NULL");
  *out = NULL;
  if (!pool) return hs_fail(HS_ERR_MISUSE, 0, "hs_read_stream_open: the pool is NULL");
  if (!next_block) return hs_fail(HS_ERR_MISUSE, 0, "hs_read_stream_open: next_block is NULL");
  if ((unsigned)fork >= HS_FORK_COUNT)
    return hs_fail(HS_ERR_MISUSE, 0, "hs_read_stream_open: fork %u is not a fork (0 to %u)",
                   (unsigned)fork, HS_FORK_COUNT - 1);
  if (strategy && strategy->pool != pool)
    return hs_fail(HS_ERR_INVALID, 0, "hs_read_stream_open: the strategy belongs to another pool");
  if (combine_bytes == 0) combine_bytes = HS_STREAM_COMBINE_DEFAULT;
  uint32_t pages = combine_bytes / hs_pool_page_size(pool);
  if (pages < 1) pages = 1;
  if (pages > HS_SMGR_READV_MAX) pages = HS_SMGR_READV_MAX;
  hs_read_stream *s = calloc(1, sizeof *s);
  if (!s) return hs_fail(HS_ERR_NOMEM, ENOMEM, "allocating a read stream");
  s->pool = pool;
  s->rel = rel;
  s->fork = fork;
  s->ring = strategy && strategy->size ? strategy : NULL;
  s->ctx = strategy ? strategy->ctx : HS_IOCTX_NORMAL;
  s->next_block = next_block;
  s->ctx_arg = ctx;
  s->combine_max = pages;
  s->async = pool->io.n > 0;
  pthread_mutex_init(&s->err_lock, NULL);
  *out = s;
  return HS_OK;
}

/* How many buffers the stream may hold pinned: a ring lends it at most its
 * own size, so that the look-ahead never pushes the ring into taking
 * buffers from the pool; without a ring, at most 1/8 of the pool. */
static uint32_t lendable(const hs_read_stream *s) {
  uint32_t n = s->ring ? s->ring->size : s->pool->nbuffers / 8;
  if (n > QUEUE_CAP) n = QUEUE_CAP;
  return n ? n : 1;
}

uint32_t hs_read_stream_combine(const hs_read_stream *s) {
  /* Synchronous: one batch at a time. With I/O workers: half of what may
   * be pinned (see ASYNC_BATCHES). */
  uint32_t n = s->combine_max, most = s->async ? lendable(s) / ASYNC_BATCHES : lendable(s);
  if (n > most) n = most;
  return n ? n : 1;
}

static void note_worker_error(void *ctx, const io_request *r, hs_status status,
                              const char *message) {
  hs_read_stream *s = ctx;
  pthread_mutex_lock(&s->err_lock);
  worker_error *e = &s->errors[s->next_error++ % WORKER_ERRORS];
  e->first = r->first;
  e->n = r->n;
  e->status = status;
  e->err = hs_last_errno();
  snprintf(e->message, sizeof e->message, "%s", message);
  pthread_mutex_unlock(&s->err_lock);
}

/* The error a worker met reading `block`, if it is still on record. */
static bool worker_error_for(hs_read_stream *s, hs_blockno block, worker_error *out) {
  bool found = false;
  pthread_mutex_lock(&s->err_lock);
  for (uint32_t i = 1; i <= WORKER_ERRORS && !found; i++) { /* the newest first */
    worker_error *e = &s->errors[(s->next_error - i) % WORKER_ERRORS];
    if (e->n && block >= e->first && block - e->first < e->n) {
      *out = *e;
      found = true;
    }
  }
  pthread_mutex_unlock(&s->err_lock);
  return found;
}

/* Reads the pending run into its buffers, here or on an I/O worker. On a
 * failure here those buffers are unpinned (their pages stay unread, for a
 * later read to retry). */
static hs_status issue_run(hs_read_stream *s) {
  if (s->run_len == 0) return HS_OK;
  uint32_t n = s->run_len;
  s->run_len = 0;
  if (s->async) {
    io_request *r = io_request_alloc(n);
    if (r) {
      r->rel = s->rel;
      r->fork = s->fork;
      r->first = s->run_first;
      r->ctx = s->ctx;
      r->on_error = note_worker_error;
      r->error_ctx = s;
      memcpy(r->bufs, s->run_bufs, n * sizeof *r->bufs);
      memcpy(r->pages, s->run_pages, n * sizeof *r->pages);
      for (uint32_t i = s->tail - n; i != s->tail; i++) at(s, i)->in_flight = true;
      io_workers_submit(&s->pool->io, r);
      return HS_OK;
    } /* no memory for a request: read it here */
  }
  hs_status st =
      hs_smgr_readv(hs_pool_smgr(s->pool), s->rel, s->fork, s->run_first, n, s->run_pages);
  st = pool_check_read(s->pool, s->rel, s->fork, s->run_first, s->run_bufs, n, st);
  pool_end_reads(s->pool, s->run_bufs, n, st == HS_OK, s->ctx, true);
  if (st != HS_OK)
    for (uint32_t i = s->tail - n; i != s->tail; i++) at(s, i)->buf = HS_INVALID_BUF;
  return st;
}

static void push(hs_read_stream *s, hs_buf b, hs_blockno block) {
  queued *q = at(s, s->tail++);
  q->buf = b;
  q->block = block;
  q->in_flight = false;
}

/* Lets go of everything read ahead: waits for the workers' reads first (a
 * buffer must stay pinned while its I/O is in progress). Entries whose pin
 * already went hold HS_INVALID_BUF. */
static void release_queue(hs_read_stream *s) {
  for (uint32_t i = s->head; i != s->tail; i++) {
    queued *q = at(s, i);
    if (q->buf == HS_INVALID_BUF) continue;
    if (q->in_flight) pool_wait_read(s->pool, q->buf);
    hs_buf_release(s->pool, q->buf);
  }
  s->head = s->tail = 0;
}

static hs_status fail_stream(hs_read_stream *s, hs_status st) {
  release_queue(s);
  s->failed = true;
  return st;
}

/* Tops the pending blocks up to `want` from the source. */
static void take_from_source(hs_read_stream *s, uint32_t want) {
  if (s->pending_at == s->pending_len) s->pending_at = s->pending_len = 0;
  while (!s->ended && s->pending_len - s->pending_at < want && s->pending_len < HS_SMGR_READV_MAX) {
    hs_blockno block = s->next_block(s->ctx_arg);
    if (block == HS_INVALID_BLOCK)
      s->ended = true;
    else
      s->pending[s->pending_len++] = block;
  }
}

/* One batch: up to `combine` blocks (fewer if the ring shrank meanwhile),
 * each found (pinned) or claimed, runs of claimed consecutive blocks issued
 * as they end. */
static hs_status fill(hs_read_stream *s) {
  hs_pool *pool = s->pool;
  take_from_source(s, hs_read_stream_combine(s));
  for (uint32_t added = 0; s->pending_at < s->pending_len; added++) {
    /* An adaptive ring may shrink while we claim: stop where it ends. */
    if (added >= hs_read_stream_combine(s) || s->tail - s->head >= lendable(s)) break;
    hs_blockno block = s->pending[s->pending_at++];
    hs_buftag tag = {.rel = s->rel, .fork = s->fork, .block = block};
    uint64_t hash = buf_tag_hash(&tag);
    hs_buf b;
    pool_lookup found = pool_lookup_and_pin(pool, &tag, hash, s->ctx, s->ring, &b);
    bool claimed = false;
    hs_status st = HS_OK;
    if (found == NOT_FOUND) {
      st = pool_claim(pool, &tag, hash, HS_READ_NORMAL, s->ctx, s->ring, &b, &claimed);
      if (st == HS_OK && !claimed) found = FOUND_NOT_VALID;
    }
    /* Anything but the next block of the run ends the run first: never wait
     * for anything while holding claims nobody is reading yet. */
    bool extends_run = claimed && s->run_len > 0 && block == s->run_first + s->run_len;
    if (st != HS_OK || !extends_run) {
      hs_status rst = issue_run(s);
      if (rst != HS_OK) {
        if (st == HS_OK) {
          push(s, b, block); /* ours too: let go of it with the rest */
          if (claimed) {     /* never read: give the claim up, unread */
            pool_abandon_claim(pool, b);
            at(s, s->tail - 1)->buf = HS_INVALID_BUF;
          }
        }
        return fail_stream(s, rst);
      }
    }
    if (st != HS_OK) return fail_stream(s, st);
    if (found == FOUND_NOT_VALID) {
      st = pool_read_found(pool, b, &tag, hash, s->ctx, s->ring);
      if (st != HS_OK) return fail_stream(s, st); /* its pin went */
    }
    push(s, b, block);
    if (claimed) {
      if (s->run_len == 0) s->run_first = block;
      s->run_bufs[s->run_len] = b;
      s->run_pages[s->run_len] = pool_page(pool, b);
      s->run_len++;
    }
  }
  hs_status st = issue_run(s);
  return st == HS_OK ? HS_OK : fail_stream(s, st);
}

hs_status hs_read_stream_next(hs_read_stream *s, hs_buf *out, hs_blockno *block) {
  if (!s) return hs_fail(HS_ERR_MISUSE, 0, "hs_read_stream_next: the stream is NULL");
  if (!out) return hs_fail(HS_ERR_MISUSE, 0, "hs_read_stream_next: out is NULL");
  *out = HS_INVALID_BUF;
  if (s->failed)
    return hs_fail(HS_ERR_INVALID, 0, "hs_read_stream_next: the stream failed earlier");
  /* Synchronous: a new batch when the last one is all handed out. With I/O
   * workers: a new batch as soon as fewer than two are held, so that the
   * worker always has the next one to read — but never more than two: a
   * deeper look-ahead would claim the ring's buffers while the pages in them
   * were handed out only moments ago, and a vacuum would have to flush the
   * WAL for nearly every batch (measured: with a 2 MiB ring, once per 16
   * recycles instead of once per 256). */
  uint32_t combine = hs_read_stream_combine(s);
  uint32_t ahead = s->async ? ASYNC_BATCHES * combine : combine;
  if (ahead > lendable(s)) ahead = lendable(s);
  uint32_t low = s->async ? ahead - combine : 0;
  while ((!s->ended || s->pending_at < s->pending_len) && s->tail - s->head <= low) {
    uint32_t before = s->tail;
    hs_status st = fill(s);
    if (st != HS_OK) return st;
    if (s->tail == before) break;
  }
  if (s->head == s->tail) return HS_OK;
  queued *q = at(s, s->head);
  if (q->in_flight && !pool_wait_read(s->pool, q->buf)) {
    /* The worker's read failed: its message, if still on record, else the
     * reason a read here gives (which may also succeed: the error was
     * transient, and any reader would have retried). */
    worker_error e;
    if (worker_error_for(s, q->block, &e)) {
      hs_status st = fail_stream(s, e.status);
      return hs_fail(st, e.err, "%s", e.message);
    }
    hs_buftag tag = {.rel = s->rel, .fork = s->fork, .block = q->block};
    hs_status st = pool_read_found(s->pool, q->buf, &tag, buf_tag_hash(&tag), s->ctx, s->ring);
    if (st != HS_OK) {
      q->buf = HS_INVALID_BUF; /* its pin went */
      char msg[512];
      snprintf(msg, sizeof msg, "%s", hs_last_error());
      int err = hs_last_errno();
      fail_stream(s, st);
      return hs_fail(st, err, "%s", msg);
    }
  }
  s->head++;
  *out = q->buf;
  if (block) *block = q->block;
  return HS_OK;
}

void hs_read_stream_close(hs_read_stream *s) {
  if (!s) return;
  release_queue(s);
  pthread_mutex_destroy(&s->err_lock);
  free(s);
}

void hs_block_range_init(hs_block_range *r, hs_blockno start, hs_blockno nblocks) {
  r->start = nblocks ? start % nblocks : 0;
  r->nblocks = nblocks;
  r->done = 0;
}

hs_blockno hs_block_range_next(void *range) {
  hs_block_range *r = range;
  if (r->done >= r->nblocks) return HS_INVALID_BLOCK;
  uint64_t pos = (uint64_t)r->start + r->done++;
  return (hs_blockno)(pos < r->nblocks ? pos : pos - r->nblocks);
}
