/*
 * bench/global_lru_pool.c — the baseline bench pool compares hotset against.
 *
 * What it models. Until 8.1, PostgreSQL's buffer manager kept everything
 * shared behind one lock, BufMgrLock: the buffer lookup table (tag ->
 * buffer), every buffer's reference count and flags, and the free list — a
 * doubly linked list of unpinned buffers in least-recently-used order (7.x;
 * 8.0 briefly ran ARC, then 2Q, under the same lock). ReadBuffer took the
 * lock, looked the tag up, and on a hit pinned the buffer, which meant
 * unlinking it from the free list; ReleaseBuffer took the lock again, dropped
 * the pin, and at zero put the buffer at the most-recently-used end. On a
 * miss the head of the list, the least recently used unpinned buffer, was the
 * victim: written out if dirty, re-tagged, read in. So every buffer access,
 * even a hit of a page that stays in memory for hours, took one global lock
 * twice, and on a many-core machine that lock's cache line bounced between
 * every CPU: the "BufMgrLock contention" that made 8.1 replace it with
 * per-buffer spinlocks, a clock sweep and a separate mapping lock, and 8.2
 * partition the mapping lock. hotset follows that later design (one CAS per
 * pin, partitioned page table); this file is the design it replaced.
 *
 * Why it is here. A benchmark number means little alone: bench pool runs the
 * same workloads against this pool in the same process, on the same relation
 * and with the same number of frames, so "hotset vs global-mutex-lru at 8
 * threads" shows what the lock-free hit path buys, and the 1-thread rows show
 * what it costs when there is no contention to avoid.
 *
 * One deliberate simplification: the I/O of a miss (the victim's write and
 * the new block's read) is done while holding the global mutex. PostgreSQL
 * released BufMgrLock around the read itself, guarding the buffer with a
 * per-buffer io_in_progress lock instead; keeping the mutex makes misses here
 * more serialized than they were, which matters for the `mixed` workload but
 * not for `hit`, where the model is faithful. The page cache usually serves
 * those reads anyway, so the difference is a syscall, not a disk seek. There
 * are no content locks either: bench pool's baseline workloads only read.
 */
#include "bench/global_lru_pool.h"

#include "core/error.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define NIL (-1)

typedef struct glru_desc {
  hs_relid rel;
  hs_blockno block;
  hs_fork fork;
  bool valid; /* holds the page of (rel, fork, block) and is in the hash */
  bool dirty;
  bool in_lru; /* on the LRU list, i.e. unpinned */
  uint32_t pins;
  int32_t hash_next;
  int32_t lru_prev, lru_next; /* towards the LRU head / the MRU tail */
} glru_desc;

struct glru_pool {
  pthread_mutex_t lock; /* the BufMgrLock: guards everything below but pages */
  hs_smgr *smgr;
  uint32_t nframes;
  uint32_t page_size;
  glru_desc *desc;
  unsigned char *pages;
  int32_t *buckets; /* hash chains of frames, by tag */
  uint32_t bucket_mask;
  int32_t lru_head; /* least recently used unpinned frame: the next victim */
  int32_t lru_tail; /* most recently used */
  glru_stats stats;
};

static uint32_t tag_hash(const glru_pool *p, hs_relid rel, hs_fork fork, hs_blockno block) {
  uint64_t k = ((uint64_t)rel << 34) ^ ((uint64_t)fork << 32) ^ block;
  k *= 0x9E3779B97F4A7C15u; /* Fibonacci hashing: the high bits are well mixed */
  return (uint32_t)(k >> 32) & p->bucket_mask;
}

static int32_t hash_lookup(const glru_pool *p, hs_relid rel, hs_fork fork, hs_blockno block) {
  for (int32_t f = p->buckets[tag_hash(p, rel, fork, block)]; f != NIL; f = p->desc[f].hash_next) {
    const glru_desc *d = &p->desc[f];
    if (d->block == block && d->rel == rel && d->fork == fork) return f;
  }
  return NIL;
}

static void hash_insert(glru_pool *p, int32_t f) {
  glru_desc *d = &p->desc[f];
  uint32_t h = tag_hash(p, d->rel, d->fork, d->block);
  d->hash_next = p->buckets[h];
  p->buckets[h] = f;
}

static void hash_remove(glru_pool *p, int32_t f) {
  glru_desc *d = &p->desc[f];
  int32_t *link = &p->buckets[tag_hash(p, d->rel, d->fork, d->block)];
  while (*link != f) link = &p->desc[*link].hash_next;
  *link = d->hash_next;
  d->hash_next = NIL;
}

static void lru_remove(glru_pool *p, int32_t f) {
  glru_desc *d = &p->desc[f];
  if (d->lru_prev != NIL)
    p->desc[d->lru_prev].lru_next = d->lru_next;
  else
    p->lru_head = d->lru_next;
  if (d->lru_next != NIL)
    p->desc[d->lru_next].lru_prev = d->lru_prev;
  else
    p->lru_tail = d->lru_prev;
  d->lru_prev = d->lru_next = NIL;
  d->in_lru = false;
}

static void lru_push_tail(glru_pool *p, int32_t f) {
  glru_desc *d = &p->desc[f];
  d->lru_prev = p->lru_tail;
  d->lru_next = NIL;
  if (p->lru_tail != NIL)
    p->desc[p->lru_tail].lru_next = f;
  else
    p->lru_head = f;
  p->lru_tail = f;
  d->in_lru = true;
}

/* For frames holding nothing worth keeping: they are the next victims. */
static void lru_push_head(glru_pool *p, int32_t f) {
  glru_desc *d = &p->desc[f];
  d->lru_prev = NIL;
  d->lru_next = p->lru_head;
  if (p->lru_head != NIL)
    p->desc[p->lru_head].lru_prev = f;
  else
    p->lru_tail = f;
  p->lru_head = f;
  d->in_lru = true;
}

static void free_pool(glru_pool *p) {
  free(p->desc);
  free(p->pages);
  free(p->buckets);
  free(p);
}

hs_status glru_open(hs_smgr *smgr, uint32_t nframes, glru_pool **out) {
  *out = NULL;
  if (!smgr || nframes == 0 || nframes > (1u << 30))
    return hs_fail(HS_ERR_INVALID, 0, "global-mutex-lru: %u frames (want 1 .. 2^30)", nframes);
  uint32_t page_size = hs_smgr_page_size(smgr);
  size_t bytes = (size_t)nframes * page_size;
  if (bytes / page_size != nframes)
    return hs_fail(HS_ERR_NOMEM, 0, "global-mutex-lru: %u frames of %u bytes", nframes, page_size);
  bytes = (bytes + 4095) & ~(size_t)4095; /* aligned_alloc wants a multiple */

  uint32_t nbuckets = 1;
  while (nbuckets < 2 * nframes) nbuckets <<= 1; /* load factor <= 1/2 */

  glru_pool *p = calloc(1, sizeof *p);
  if (!p) return hs_fail(HS_ERR_NOMEM, ENOMEM, "global-mutex-lru: allocating the pool");
  p->desc = calloc(nframes, sizeof *p->desc);
  p->pages = aligned_alloc(4096, bytes);
  p->buckets = malloc((size_t)nbuckets * sizeof *p->buckets);
  if (!p->desc || !p->pages || !p->buckets) {
    free_pool(p);
    return hs_fail(HS_ERR_NOMEM, ENOMEM, "global-mutex-lru: allocating %u frames of %u bytes",
                   nframes, page_size);
  }
  int err = pthread_mutex_init(&p->lock, NULL);
  if (err) {
    free_pool(p);
    return hs_fail(hs_status_from_errno(err), err, "global-mutex-lru: pthread_mutex_init: %s",
                   strerror(err));
  }
  memset(p->pages, 0, bytes);
  p->smgr = smgr;
  p->nframes = nframes;
  p->page_size = page_size;
  p->bucket_mask = nbuckets - 1;
  for (uint32_t i = 0; i < nbuckets; i++) p->buckets[i] = NIL;
  p->lru_head = p->lru_tail = NIL;
  for (uint32_t f = 0; f < nframes; f++) {
    p->desc[f].hash_next = NIL;
    lru_push_tail(p, (int32_t)f); /* every frame starts empty and unpinned */
  }
  *out = p;
  return HS_OK;
}

static void *frame_page(glru_pool *p, int32_t f) {
  return p->pages + (size_t)f * p->page_size;
}

hs_status glru_close(glru_pool *p) {
  pthread_mutex_lock(&p->lock);
  for (uint32_t f = 0; f < p->nframes; f++) {
    if (p->desc[f].pins) {
      pthread_mutex_unlock(&p->lock);
      return hs_fail(HS_ERR_BUSY, 0, "global-mutex-lru: frame %u is still pinned", f);
    }
  }
  for (uint32_t f = 0; f < p->nframes; f++) {
    glru_desc *d = &p->desc[f];
    if (!d->valid || !d->dirty) continue;
    hs_status st = hs_smgr_write(p->smgr, d->rel, d->fork, d->block, frame_page(p, (int32_t)f));
    if (st != HS_OK) {
      pthread_mutex_unlock(&p->lock); /* the page stays dirty: nothing lost */
      return st;
    }
    d->dirty = false;
    p->stats.writes++;
  }
  pthread_mutex_unlock(&p->lock);
  pthread_mutex_destroy(&p->lock);
  free_pool(p);
  return HS_OK;
}

void glru_abandon(glru_pool *p) {
  if (!p) return;
  pthread_mutex_destroy(&p->lock);
  free_pool(p);
}

uint32_t glru_nframes(const glru_pool *p) {
  return p->nframes;
}

hs_status glru_read(glru_pool *p, hs_relid rel, hs_fork fork, hs_blockno block, glru_frame *out,
                    bool *hit) {
  *out = NIL;
  pthread_mutex_lock(&p->lock);

  int32_t f = hash_lookup(p, rel, fork, block);
  if (f != NIL) {
    glru_desc *d = &p->desc[f];
    if (d->pins++ == 0) lru_remove(p, f); /* pinned frames are never victims */
    p->stats.hits++;
    pthread_mutex_unlock(&p->lock);
    if (hit) *hit = true;
    *out = f;
    return HS_OK;
  }

  f = p->lru_head;
  if (f == NIL) {
    pthread_mutex_unlock(&p->lock);
    return hs_fail(HS_ERR_NO_BUFFERS, 0,
                   "global-mutex-lru: all %u frames are pinned (reading block %u of relation %u)",
                   p->nframes, block, rel);
  }
  glru_desc *d = &p->desc[f];
  if (d->valid && d->dirty) {
    hs_status st = hs_smgr_write(p->smgr, d->rel, d->fork, d->block, frame_page(p, f));
    if (st != HS_OK) {
      /* Keep the page dirty in its frame (losing it would lose the change),
       * and move the frame to the MRU end so the next miss tries another
       * victim instead of failing on this one forever. */
      lru_remove(p, f);
      lru_push_tail(p, f);
      pthread_mutex_unlock(&p->lock);
      return st;
    }
    d->dirty = false;
    p->stats.writes++;
  }
  if (d->valid) {
    hash_remove(p, f);
    d->valid = false;
  }
  lru_remove(p, f);

  hs_status st = hs_smgr_read(p->smgr, rel, fork, block, frame_page(p, f));
  if (st != HS_OK) {
    lru_push_head(p, f); /* empty again: the first victim next time */
    pthread_mutex_unlock(&p->lock);
    return st;
  }
  d->rel = rel;
  d->fork = fork;
  d->block = block;
  d->valid = true;
  d->pins = 1;
  hash_insert(p, f);
  p->stats.reads++;
  pthread_mutex_unlock(&p->lock);
  if (hit) *hit = false;
  *out = f;
  return HS_OK;
}

void glru_release(glru_pool *p, glru_frame f) {
  pthread_mutex_lock(&p->lock);
  glru_desc *d = &p->desc[f];
  /* Releasing an unpinned frame is a caller bug; ignoring it keeps the list
   * consistent rather than corrupting it. */
  if (d->pins > 0 && --d->pins == 0) lru_push_tail(p, f);
  pthread_mutex_unlock(&p->lock);
}

void *glru_page(glru_pool *p, glru_frame f) {
  /* No lock: a pinned frame's page and tag do not move. */
  return frame_page(p, f);
}

hs_blockno glru_frame_block(glru_pool *p, glru_frame f) {
  return p->desc[f].block;
}

void glru_mark_dirty(glru_pool *p, glru_frame f) {
  pthread_mutex_lock(&p->lock);
  p->desc[f].dirty = true;
  pthread_mutex_unlock(&p->lock);
}

void glru_get_stats(glru_pool *p, glru_stats *out) {
  pthread_mutex_lock(&p->lock);
  *out = p->stats;
  pthread_mutex_unlock(&p->lock);
}

void glru_reset_stats(glru_pool *p) {
  pthread_mutex_lock(&p->lock);
  memset(&p->stats, 0, sizeof p->stats);
  pthread_mutex_unlock(&p->lock);
}
