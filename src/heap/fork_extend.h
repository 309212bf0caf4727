/*
 * heap/fork_extend.h — a fork whose pages are addressed by computation,
 * grown on demand through the pool, and the one-byte reads and logged
 * writes the maps (free space, visibility) make in such forks.
 *
 * The commit log, the index and the two maps find a page by arithmetic
 * (block = id / entries per page), so a block past the end must be added —
 * with zeros, which mean "nothing here" in all of them — before it is read,
 * and a read must first know whether the block exists. Asking the storage
 * manager costs an fstat, and these lookups sit on hot paths (every
 * visibility check reads the commit log, every lookup the index), so the
 * handle remembers how many blocks it has seen: these forks only grow
 * while their owner has them open, and the file system is asked again only
 * for a block past what is known. One extension runs at a time.
 *
 * A fork that is only a hint (the free-space map, and nothing else) sets
 * zero_on_error: a page the pool refuses as damaged is then read as zeros
 * instead (PostgreSQL's RBM_ZERO_ON_ERROR), see fork_pages_pin.
 */
#ifndef HOTSET_HEAP_FORK_EXTEND_H
#define HOTSET_HEAP_FORK_EXTEND_H

#include "hotset/durability.h"
#include "hotset/pool.h"

#include <pthread.h>
#include <stdatomic.h>

typedef struct fork_pages {
  hs_pool *pool;
  hs_relid rel;
  hs_fork fork;
  pthread_mutex_t extend_mu;
  _Atomic hs_blockno known; /* blocks known to exist */
  bool zero_on_error;       /* a damaged page reads as zeros (fork_pages_pin) */
} fork_pages;

static inline void fork_pages_init(fork_pages *fp, hs_pool *pool, hs_relid rel, hs_fork fork) {
  fp->pool = pool;
  fp->rel = rel;
  fp->fork = fork;
  pthread_mutex_init(&fp->extend_mu, NULL);
  atomic_init(&fp->known, 0);
  fp->zero_on_error = false;
}

static inline void fork_pages_destroy(fork_pages *fp) {
  pthread_mutex_destroy(&fp->extend_mu);
}

/* The fork's block count, from the storage manager (and remembered). */
static inline hs_status fork_pages_count(fork_pages *fp, hs_blockno *n) {
  hs_status st = hs_smgr_nblocks(hs_pool_smgr(fp->pool), fp->rel, fp->fork, n);
  if (st == HS_OK) atomic_store(&fp->known, *n);
  return st;
}

/* Whether block `block` exists; with `create`, zeroed blocks are added up
 * to it first (*have is then true). */
static inline hs_status fork_pages_have(fork_pages *fp, hs_blockno block, bool create, bool *have) {
  *have = block < atomic_load(&fp->known);
  if (*have) return HS_OK;
  hs_blockno n;
  hs_status st = fork_pages_count(fp, &n);
  *have = st == HS_OK && block < n;
  if (st != HS_OK || *have || !create) return st;
  pthread_mutex_lock(&fp->extend_mu);
  st = fork_pages_count(fp, &n);
  while (st == HS_OK && n <= block) {
    hs_buf b;
    hs_blockno got;
    st = hs_pool_extend(fp->pool, fp->rel, fp->fork, NULL, false, &b, &got);
    if (st == HS_OK) {
      hs_buf_release(fp->pool, b);
      n = got + 1;
      atomic_store(&fp->known, n);
    }
  }
  pthread_mutex_unlock(&fp->extend_mu);
  *have = st == HS_OK;
  return st;
}

/* Pins block `block` (added first if `create`) and locks it in `mode`;
 * *b = HS_INVALID_BUF if it does not exist and was not to be created.
 *
 * With zero_on_error, a page the pool refuses as damaged (HS_ERR_CORRUPT:
 * it fails its checksum, or carries an LSN past the end of the log) is
 * taken again without reading it (HS_READ_ZERO_LOCKED): all zeros,
 * "nothing known", as PostgreSQL reads its free-space map
 * (RBM_ZERO_ON_ERROR) — a hint can be wrong, and a damaged one must not
 * stop every insert for good. The zeroed page is not
 * marked dirty: the damaged one stays on disk until the first change to
 * the page, which is logged with the page's full image (its buffer LSN is
 * 0, below any redo point) and so rewrites it with a valid checksum, and
 * recovery restores that image without reading what is on disk before it
 * replays any later change. If another thread zeroed (and perhaps changed)
 * the page first, the pool hands over its page as it is. The lock is then
 * exclusive whatever `mode` asked for: stronger, and callers only unlock. */
static inline hs_status fork_pages_pin(fork_pages *fp, hs_blockno block, bool create,
                                       hs_lock_mode mode, hs_buf *b) {
  *b = HS_INVALID_BUF;
  bool have;
  hs_status st = fork_pages_have(fp, block, create, &have);
  if (st != HS_OK || !have) return st;
  st = hs_pool_read(fp->pool, fp->rel, fp->fork, block, HS_READ_NORMAL, NULL, b, NULL);
  if (st == HS_OK) {
    hs_buf_lock(fp->pool, *b, mode);
  } else if (st == HS_ERR_CORRUPT && fp->zero_on_error) {
    st = hs_pool_read(fp->pool, fp->rel, fp->fork, block, HS_READ_ZERO_LOCKED, NULL, b, NULL);
  }
  if (st != HS_OK) *b = HS_INVALID_BUF;
  return st;
}

static inline void fork_pages_unpin(fork_pages *fp, hs_buf b) {
  if (b == HS_INVALID_BUF) return;
  hs_buf_unlock(fp->pool, b);
  hs_buf_release(fp->pool, b);
}

/* Byte `at` of block `block` becomes (old & and_mask) | or_mask, logged if
 * it changes. A missing block is added (zeros) only if the byte would not
 * stay zero. */
static inline hs_status fork_byte_update(fork_pages *fp, hs_blockno block, uint32_t at,
                                         unsigned char and_mask, unsigned char or_mask) {
  hs_buf b;
  hs_status st = fork_pages_pin(fp, block, or_mask != 0, HS_LOCK_EXCLUSIVE, &b);
  if (st != HS_OK || b == HS_INVALID_BUF) return st;
  unsigned char *p = (unsigned char *)hs_buf_page(fp->pool, b) + at;
  unsigned char want = (unsigned char)((*p & and_mask) | or_mask);
  if (want != *p) {
    unsigned char before = *p;
    *p = want;
    hs_wal_range r = {at, 1};
    st = hs_buf_log_change(fp->pool, b, &r, 1, NULL);
    if (st != HS_OK) *p = before; /* not logged: the page stays as it was */
  }
  fork_pages_unpin(fp, b);
  return st;
}

/* Byte `at` of block `block` (0 if the block does not exist). */
static inline hs_status fork_byte_get(fork_pages *fp, hs_blockno block, uint32_t at,
                                      unsigned char *out) {
  *out = 0;
  hs_buf b;
  hs_status st = fork_pages_pin(fp, block, false, HS_LOCK_SHARE, &b);
  if (st != HS_OK || b == HS_INVALID_BUF) return st;
  *out = ((const unsigned char *)hs_buf_page(fp->pool, b))[at];
  fork_pages_unpin(fp, b);
  return HS_OK;
}

#endif
