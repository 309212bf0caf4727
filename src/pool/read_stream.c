/*
 * pool/read_stream.c — read streams (hotset/stream.h).
 *
 * The stream fills its queue only when the caller has taken everything in
 * it, so each fill is one batch: up to `combine` blocks from the source,
 * each either found in the pool (pinned at once) or claimed — given a buffer
 * that carries its tag with I/O in progress (pool_claim) — and runs of
 * consecutive claimed blocks read with one hs_smgr_readv.
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
#include <stdlib.h>

typedef struct queued {
  hs_buf buf;
  hs_blockno block;
} queued;

struct hs_read_stream {
  hs_pool *pool;
  hs_relid rel;
  hs_fork fork;
  hs_strategy *strategy;
  hs_strategy *ring; /* strategy if it has a ring, else NULL */
  hs_io_context ctx;
  hs_block_source_fn next_block;
  void *ctx_arg;
  uint32_t combine_max; /* pages, from combine_bytes */
  bool ended;           /* the source said it is done */
  bool failed;          /* an error was returned; only close is left */
  /* Handed out in order: queue[head..count-1]. */
  uint32_t head, count;
  queued queue[HS_SMGR_READV_MAX];
  /* The run of claimed consecutive blocks not read yet. */
  uint32_t run_len;
  hs_blockno run_first;
  hs_buf run_bufs[HS_SMGR_READV_MAX];
  void *run_pages[HS_SMGR_READV_MAX];
};

hs_status hs_read_stream_open(hs_pool *pool, hs_relid rel, hs_fork fork, hs_strategy *strategy,
                              hs_block_source_fn next_block, void *ctx, uint32_t combine_bytes,
                              hs_read_stream **out) {
  if (!pool || !next_block || !out || (unsigned)fork >= HS_FORK_COUNT)
    return hs_fail(HS_ERR_INVALID, 0,
                   "hs_read_stream_open: bad argument (pool, next_block, out or fork)");
  if (strategy && strategy->pool != pool)
    return hs_fail(HS_ERR_INVALID, 0, "hs_read_stream_open: the strategy belongs to another pool");
  if (combine_bytes == 0) combine_bytes = HS_STREAM_COMBINE_DEFAULT;
  uint32_t pages = combine_bytes / hs_pool_page_size(pool);
  if (pages < 1) pages = 1;
  if (pages > HS_SMGR_READV_MAX) pages = HS_SMGR_READV_MAX;
  /* Without a ring the look-ahead pins come from the whole pool: leave most
   * of it to everybody else. */
  uint32_t pool_share = hs_pool_nbuffers(pool) / 8;
  if (!(strategy && strategy->size) && pages > pool_share) pages = pool_share ? pool_share : 1;
  hs_read_stream *s = calloc(1, sizeof *s);
  if (!s) return hs_fail(HS_ERR_NOMEM, ENOMEM, "allocating a read stream");
  s->pool = pool;
  s->rel = rel;
  s->fork = fork;
  s->strategy = strategy;
  s->ring = strategy && strategy->size ? strategy : NULL;
  s->ctx = strategy ? strategy->ctx : HS_IOCTX_NORMAL;
  s->next_block = next_block;
  s->ctx_arg = ctx;
  s->combine_max = pages;
  *out = s;
  return HS_OK;
}

uint32_t hs_read_stream_combine(const hs_read_stream *s) {
  uint32_t n = s->combine_max;
  /* A ring lends the stream at most its own size: the look-ahead must not
   * push the ring into taking buffers from the pool. */
  if (s->ring && s->ring->size < n) n = s->ring->size;
  return n ? n : 1;
}

/* Reads the pending run into its buffers. On failure those buffers are
 * unpinned (their pages stay unread, for a later read to retry). */
static hs_status issue_run(hs_read_stream *s) {
  if (s->run_len == 0) return HS_OK;
  uint32_t n = s->run_len;
  s->run_len = 0;
  hs_status st =
      hs_smgr_readv(hs_pool_smgr(s->pool), s->rel, s->fork, s->run_first, n, s->run_pages);
  pool_end_reads(s->pool, s->run_bufs, n, st == HS_OK, s->ctx);
  return st;
}

static void push(hs_read_stream *s, hs_buf b, hs_blockno block) {
  s->queue[s->count].buf = b;
  s->queue[s->count].block = block;
  s->count++;
}

/* Gives up after an error: the queue's pins go, except the failed run's
 * buffers (issue_run already unpinned them; `run_bufs` tells which). */
static hs_status fail_stream(hs_read_stream *s, hs_status st, uint32_t failed_from,
                             uint32_t failed_n) {
  for (uint32_t i = s->head; i < s->count; i++)
    if (i < failed_from || i >= failed_from + failed_n) hs_buf_release(s->pool, s->queue[i].buf);
  s->head = s->count = 0;
  s->failed = true;
  return st;
}

/* One batch: see the top of the file. */
static hs_status fill(hs_read_stream *s) {
  hs_pool *pool = s->pool;
  uint32_t want = hs_read_stream_combine(s);
  uint32_t run_at = 0; /* queue index of the run's first entry */
  s->head = s->count = 0;
  while (s->count < want) {
    hs_blockno block = s->next_block(s->ctx_arg);
    if (block == HS_INVALID_BLOCK) {
      s->ended = true;
      break;
    }
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
    /* Anything but another block for the run ends the run first. */
    bool extends_run = claimed && s->run_len > 0 && block == s->run_first + s->run_len;
    if (st != HS_OK || !extends_run) {
      uint32_t from = run_at, n = s->run_len;
      hs_status rst = issue_run(s);
      if (rst != HS_OK) {
        if (st == HS_OK) { /* b is ours too: drop it with the rest */
          push(s, b, block);
          if (claimed) { /* never read: end its claim the way a failed read does */
            pool_end_reads(pool, &b, 1, false, s->ctx);
            n++;
          }
        }
        return fail_stream(s, rst, from, n);
      }
    }
    if (st != HS_OK) return fail_stream(s, st, 0, 0);
    if (found == FOUND_NOT_VALID) {
      st = pool_read_found(pool, b, &tag, hash, s->ctx, s->ring);
      if (st != HS_OK) return fail_stream(s, st, 0, 0); /* its pin went */
    }
    if (claimed) {
      if (s->run_len == 0) {
        s->run_first = block;
        run_at = s->count;
      }
      s->run_bufs[s->run_len] = b;
      s->run_pages[s->run_len] = pool_page(pool, b);
      s->run_len++;
    }
    push(s, b, block);
  }
  uint32_t n = s->run_len;
  hs_status st = issue_run(s);
  if (st != HS_OK) return fail_stream(s, st, run_at, n);
  return HS_OK;
}

hs_status hs_read_stream_next(hs_read_stream *s, hs_buf *out, hs_blockno *block) {
  if (!s || !out) return hs_fail(HS_ERR_INVALID, 0, "hs_read_stream_next: bad argument");
  *out = HS_INVALID_BUF;
  if (s->failed)
    return hs_fail(HS_ERR_INVALID, 0, "hs_read_stream_next: the stream failed earlier");
  if (s->head == s->count) {
    if (s->ended) return HS_OK;
    hs_status st = fill(s);
    if (st != HS_OK) return st;
    if (s->count == 0) return HS_OK;
  }
  queued q = s->queue[s->head++];
  *out = q.buf;
  if (block) *block = q.block;
  return HS_OK;
}

void hs_read_stream_close(hs_read_stream *s) {
  if (!s) return;
  for (uint32_t i = s->head; i < s->count; i++) hs_buf_release(s->pool, s->queue[i].buf);
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
