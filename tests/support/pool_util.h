/*
 * tests/pool_util.h — helpers shared by the pool tests: open a pool on a
 * fresh directory, fill a relation with stamped pages, check stamps.
 */
#ifndef HOTSET_TESTS_POOL_UTIL_H
#define HOTSET_TESTS_POOL_UTIL_H

#include "check.h"
#include "direct_mode.h"
#include "hotset/fault.h"
#include "hotset/pool.h"
#include "testdir.h"

#include <string.h>

/* Opens a pool; fails the test if it cannot. */
static inline hs_pool *open_pool_from(const hs_pool_options *o) {
  hs_pool *pool = NULL;
  if (hs_pool_open(o, &pool) != HS_OK) {
    fprintf(stderr, "hs_pool_open: %s\n", hs_last_error());
    exit(1);
  }
  return pool;
}

static inline hs_pool *open_pool_with(const char *dir, uint32_t pages, uint32_t page_size,
                                      const char *policy, hs_wal_flush_fn wal, void *wal_ctx) {
  hs_pool_options o;
  hs_pool_options_init(&o);
  o.dir = dir;
  o.policy = policy;
  o.pool_pages = pages;
  o.page_size = page_size;
  o.flush_wal_up_to = wal;
  o.wal_ctx = wal_ctx;
  return open_pool_from(&o);
}

static inline hs_pool *open_pool(const char *dir, uint32_t pages, uint32_t page_size,
                                 hs_wal_flush_fn wal, void *wal_ctx) {
  return open_pool_with(dir, pages, page_size, NULL, wal, wal_ctx);
}

/* A page stamped with (rel, block, value) in its first 24 bytes. */
static inline void stamp_page(void *page, hs_relid rel, hs_blockno block, uint64_t value) {
  uint64_t w[3] = {rel, block, value};
  memcpy(page, w, sizeof w);
}

static inline uint64_t stamp_value(const void *page, hs_relid rel, hs_blockno block) {
  uint64_t w[3];
  memcpy(w, page, sizeof w);
  if (w[0] != rel || w[1] != block) return UINT64_MAX;
  return w[2];
}

/* Creates relation `rel` with `nblocks` blocks stamped (rel, block, 0),
 * written straight through the storage manager (not the pool). */
static inline void make_relation(hs_pool *pool, hs_relid rel, hs_blockno nblocks) {
  hs_smgr *smgr = hs_pool_smgr(pool);
  uint32_t ps = hs_pool_page_size(pool);
  unsigned char *page = test_page_alloc(ps);
  REQUIRE(page && hs_smgr_create(smgr, rel, HS_FORK_MAIN) == HS_OK);
  for (hs_blockno b = 0; b < nblocks; b++) {
    hs_blockno got;
    stamp_page(page, rel, b, 0);
    REQUIRE(hs_smgr_extend(smgr, rel, HS_FORK_MAIN, page, &got) == HS_OK);
    REQUIRE(got == b);
  }
  free(page);
}

/* Reads a block, returning the pinned buffer; fails the test on error. */
static inline hs_buf must_read(hs_pool *pool, hs_relid rel, hs_blockno block, bool *hit) {
  hs_buf b = HS_INVALID_BUF;
  hs_status st = hs_pool_read(pool, rel, HS_FORK_MAIN, block, HS_READ_NORMAL, NULL, &b, hit);
  if (st != HS_OK) {
    fprintf(stderr, "read of block %u of %u failed: %s\n", block, rel, hs_last_error());
    exit(1);
  }
  return b;
}

/* Updates a block through the pool: stamp value, mark dirty at lsn. */
static inline void must_update(hs_pool *pool, hs_relid rel, hs_blockno block, uint64_t value,
                               hs_lsn lsn) {
  hs_buf b = must_read(pool, rel, block, NULL);
  hs_buf_lock(pool, b, HS_LOCK_EXCLUSIVE);
  stamp_page(hs_buf_page(pool, b), rel, block, value);
  REQUIRE(hs_buf_mark_dirty(pool, b, lsn, NULL) == HS_OK);
  hs_buf_unlock(pool, b);
  hs_buf_release(pool, b);
}

/* The buffer currently holding (rel, block), or -1, from a dump. */
static inline hs_buf find_buffer(hs_pool *pool, hs_relid rel, hs_blockno block,
                                 hs_buffer_info *info) {
  uint32_t n = hs_pool_nbuffers(pool);
  hs_buffer_info *all = calloc(n, sizeof *all);
  hs_buf found = HS_INVALID_BUF;
  if (hs_pool_dump(pool, all, n) == HS_OK) {
    for (uint32_t i = 0; i < n; i++) {
      if (all[i].block == block && all[i].rel == rel && all[i].fork == HS_FORK_MAIN) {
        found = (hs_buf)i;
        if (info) *info = all[i];
        break;
      }
    }
  }
  free(all);
  return found;
}

#endif
