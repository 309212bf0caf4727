/*
 * hotset/stream.h — read streams: a scan's reads, combined.
 *
 * A scan that asks for one page at a time pays a system call, a trip
 * through the kernel's page-cache lookup and the pool's bookkeeping for
 * every page. PostgreSQL 17's read streams answer that: the scan says which
 * blocks it will want (a callback), and the stream reads ahead, combining
 * runs of consecutive blocks that are not in the pool into one vectored read
 * (io_combine_limit, 128 KiB by default) straight into the buffers they get.
 *
 * A hotset read stream reads ahead in batches: it asks the callback for a
 * batch of blocks (`combine` pages at most), then pins the ones in the pool
 * (hits) and gives the others buffers, reading each run of consecutive
 * blocks with one hs_smgr_readv, and hands the pages out in the callback's
 * order. Without I/O workers it reads one batch when the last is used up;
 * with them (hs_pool_options.io_workers) it keeps two, one being used and
 * one being read on a worker. With a strategy the buffers come from its
 * ring, and what the stream holds is capped at the ring's size, so that the
 * scan never needs more buffers pinned than its ring has (unless the caller
 * keeps the page it was given last while it asks for the next). The
 * callback is never called while the stream holds claims it has not read:
 * it may take its time, and may read through the pool itself.
 *
 * Each buffer returned by hs_read_stream_next is pinned for the caller, who
 * releases it (hs_buf_release) — before asking for the next one, if it wants
 * its ring to recycle it in the next combined read. Reads are HS_READ_NORMAL
 * and counted like hs_pool_read's (hits and reads per page, in the
 * strategy's context). A stream belongs to one thread at a time.
 *
 * Names, errors, ownership and threads follow docs/api.md; a call says
 * only where it differs.
 */
#ifndef HOTSET_STREAM_H
#define HOTSET_STREAM_H

#include "hotset/pool.h"
#include "hotset/status.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The public API: exported from libhotset.so, which is otherwise built with
 * -fvisibility=hidden so its internals stay private. */
#pragma GCC visibility push(default)

/* The next block the scan will want, or HS_INVALID_BLOCK when it is done. */
typedef hs_blockno (*hs_block_source_fn)(void *ctx);

/* PostgreSQL's io_combine_limit default. */
#define HS_STREAM_COMBINE_DEFAULT (128u * 1024u)

typedef struct hs_read_stream hs_read_stream;

/* combine_bytes: the largest combined read, 0 for the default; rounded down
 * to whole pages, at least one page and at most HS_SMGR_READV_MAX. */
hs_status hs_read_stream_open(hs_pool *pool, hs_relid rel, hs_fork fork, hs_strategy *strategy,
                              hs_block_source_fn next_block, void *ctx, uint32_t combine_bytes,
                              hs_read_stream **out);
/* The next block's buffer, pinned, in *out (and its number in *block if not
 * NULL); *out = HS_INVALID_BUF once the source is done. After an error the
 * stream has released everything it held and only hs_read_stream_close is
 * left to call. */
hs_status hs_read_stream_next(hs_read_stream *s, hs_buf *out, hs_blockno *block);
/* Pages per combined read now (the ring may have shrunk it). */
uint32_t hs_read_stream_combine(const hs_read_stream *s);
/* Releases the buffers read ahead and not handed out, and frees s. */
void hs_read_stream_close(hs_read_stream *s);

/* A ready-made source: blocks start, start+1, ... wrapping around at
 * nblocks, `nblocks` of them in all (a whole-relation scan that starts where
 * hs_syncscan_start says). */
typedef struct hs_block_range {
  hs_blockno start, nblocks, done;
} hs_block_range;
void hs_block_range_init(hs_block_range *r, hs_blockno start, hs_blockno nblocks);
hs_blockno hs_block_range_next(void *range);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
