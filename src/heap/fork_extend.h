/*
 * heap/fork_extend.h — growing a fork to hold a block, through the pool,
 * and the one-byte reads and logged writes the maps (free space,
 * visibility) make in such forks.
 *
 * The commit log, the index and the free-space map address their pages by
 * computation (block = id / entries per page), so a block past the end
 * must be added — with zeros, which mean "nothing here" in all three —
 * before it is read. The caller serializes calls for one fork (its own
 * mutex): two at once would each add blocks for the same need.
 */
#ifndef HOTSET_HEAP_FORK_EXTEND_H
#define HOTSET_HEAP_FORK_EXTEND_H

#include "hotset/durability.h"
#include "hotset/pool.h"

#include <pthread.h>

/* Adds zeroed blocks to the fork until block `block` exists. */
static inline hs_status fork_extend_to(hs_pool *pool, hs_relid rel, hs_fork fork,
                                       hs_blockno block) {
  hs_blockno n;
  hs_status st = hs_smgr_nblocks(hs_pool_smgr(pool), rel, fork, &n);
  while (st == HS_OK && n <= block) {
    hs_buf b;
    hs_blockno got;
    st = hs_pool_extend(pool, rel, fork, NULL, false, &b, &got);
    if (st == HS_OK) {
      hs_buf_release(pool, b);
      n = got + 1;
    }
  }
  return st;
}

/* Byte `at` of block `block` of the fork becomes (old & and_mask) |
 * or_mask, logged if it changes. A missing block is added (zeros, under
 * extend_mu) only if the byte would not stay zero. */
static inline hs_status fork_byte_update(hs_pool *pool, hs_relid rel, hs_fork fork,
                                         pthread_mutex_t *extend_mu, hs_blockno block, uint32_t at,
                                         unsigned char and_mask, unsigned char or_mask) {
  hs_blockno n;
  hs_status st = hs_smgr_nblocks(hs_pool_smgr(pool), rel, fork, &n);
  if (st == HS_OK && n <= block) {
    if (!or_mask) return HS_OK;
    pthread_mutex_lock(extend_mu);
    st = fork_extend_to(pool, rel, fork, block);
    pthread_mutex_unlock(extend_mu);
  }
  hs_buf b;
  if (st == HS_OK) st = hs_pool_read(pool, rel, fork, block, HS_READ_NORMAL, NULL, &b, NULL);
  if (st != HS_OK) return st;
  hs_buf_lock(pool, b, HS_LOCK_EXCLUSIVE);
  unsigned char *p = (unsigned char *)hs_buf_page(pool, b) + at;
  unsigned char want = (unsigned char)((*p & and_mask) | or_mask);
  if (want != *p) {
    *p = want;
    hs_wal_range r = {at, 1};
    st = hs_buf_log_change(pool, b, &r, 1, NULL);
  }
  hs_buf_unlock(pool, b);
  hs_buf_release(pool, b);
  return st;
}

/* Byte `at` of block `block` of the fork (0 if the block does not exist). */
static inline hs_status fork_byte_get(hs_pool *pool, hs_relid rel, hs_fork fork, hs_blockno block,
                                      uint32_t at, unsigned char *out) {
  *out = 0;
  hs_blockno n;
  hs_status st = hs_smgr_nblocks(hs_pool_smgr(pool), rel, fork, &n);
  if (st != HS_OK || n <= block) return st;
  hs_buf b;
  st = hs_pool_read(pool, rel, fork, block, HS_READ_NORMAL, NULL, &b, NULL);
  if (st != HS_OK) return st;
  hs_buf_lock(pool, b, HS_LOCK_SHARE);
  *out = ((const unsigned char *)hs_buf_page(pool, b))[at];
  hs_buf_unlock(pool, b);
  hs_buf_release(pool, b);
  return HS_OK;
}

#endif
