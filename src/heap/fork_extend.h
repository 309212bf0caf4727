/*
 * heap/fork_extend.h — growing a fork to hold a block, through the pool.
 *
 * The commit log, the index and the free-space map address their pages by
 * computation (block = id / entries per page), so a block past the end
 * must be added — with zeros, which mean "nothing here" in all three —
 * before it is read. The caller serializes calls for one fork (its own
 * mutex): two at once would each add blocks for the same need.
 */
#ifndef HOTSET_HEAP_FORK_EXTEND_H
#define HOTSET_HEAP_FORK_EXTEND_H

#include "hotset/pool.h"

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

#endif
