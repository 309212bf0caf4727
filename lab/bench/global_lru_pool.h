/*
 * bench/global_lru_pool.h — the benchmark baseline: a buffer pool behind one
 * global mutex with LRU replacement, as PostgreSQL had before 8.1 (see the
 * comment at the top of global_lru_pool.c for what it models and why).
 *
 * Only what bench pool needs: read a block into a pinned frame, look at its
 * page, mark it dirty, release it. Every function is thread-safe; every
 * failure is an hs_status with hs_last_error() set, never an abort.
 */
#ifndef HOTSET_BENCH_GLOBAL_LRU_POOL_H
#define HOTSET_BENCH_GLOBAL_LRU_POOL_H

#include "hotset/status.h"
#include "hotset/storage.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct glru_pool glru_pool;
/* A frame: an index 0 .. nframes-1. */
typedef int32_t glru_frame;

typedef struct glru_stats {
  uint64_t hits;   /* reads that found the block resident */
  uint64_t reads;  /* blocks read from their file */
  uint64_t writes; /* dirty victims written back */
} glru_stats;

/* A pool of `nframes` frames over the files of `smgr`, which must outlive it. */
hs_status glru_open(hs_smgr *smgr, uint32_t nframes, glru_pool **out);
/* Writes every dirty frame; on a write error returns it and keeps the pool
 * (call glru_close again, or glru_abandon). HS_ERR_BUSY if a frame is pinned. */
hs_status glru_close(glru_pool *pool);
/* Frees the pool without writing anything. */
void glru_abandon(glru_pool *pool);

uint32_t glru_nframes(const glru_pool *pool);

/* Returns in *out a pinned frame holding the block; *hit (if not NULL) says
 * whether it was already resident. HS_ERR_NO_BUFFERS if every frame is
 * pinned; storage errors of the victim's write or the block's read. */
hs_status glru_read(glru_pool *pool, hs_relid rel, hs_fork fork, hs_blockno block, glru_frame *out,
                    bool *hit);
/* Drops one pin; at zero the frame becomes the most recently used. */
void glru_release(glru_pool *pool, glru_frame frame);
/* The page of a pinned frame. The baseline has no content locks: callers
 * that change a page must keep other threads off it themselves. */
void *glru_page(glru_pool *pool, glru_frame frame);
hs_blockno glru_frame_block(glru_pool *pool, glru_frame frame);
void glru_mark_dirty(glru_pool *pool, glru_frame frame);

void glru_get_stats(glru_pool *pool, glru_stats *out);
void glru_reset_stats(glru_pool *pool);

#endif
