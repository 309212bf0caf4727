/*
 * pool/flush_drop.c — writing everything back, and forgetting a relation.
 *
 * Flushing. hs_pool_flush_all and hs_pool_flush_relation write every dirty
 * page, carry on past a failure so that as much as possible reaches the
 * files, then fsync every file written since its last fsync (the storage
 * manager tracks that, and the data directory if files came or went). The
 * first failure is the one reported. Each page is written under a pin and a
 * content lock: the caller's own if this thread holds the buffer's lock (in
 * either mode — taking another would wait for itself; PostgreSQL's
 * FlushOneBuffer expects the caller to hold it), else a share lock taken
 * here, waited for: a flush holds no other content lock while it waits.
 *
 * Dropping. hs_pool_drop_relation forgets every buffer of a relation without
 * writing it, before the relation is truncated or unlinked. It looks at each
 * buffer's relation without a lock first, to skip the other relations'
 * buffers quickly. The buffer may be given to another page — of another
 * relation, and dirtied — between that look and the drop's locks, so the
 * decision is taken only under the header lock: the tag is read again, must
 * still name the relation being dropped, and the partition lock of that tag
 * is held. (An earlier version re-checked only that the tag had not changed
 * since a second unlocked read, which could already be the other relation's
 * tag: a drop of B then threw away a dirty page of A.) A pinned buffer is
 * left alone and the drop answers HS_ERR_BUSY. Between taking a page away and
 * putting its buffer on the free list the drop counts itself in
 * drops_in_progress, so that a victim search finding nothing then waits
 * rather than call every buffer pinned (freelist.c).
 *
 * Lock order here as everywhere: the partition lock, then the header lock;
 * the policy lock only after both are released.
 */
#include "core/error.h"
#include "core/seams.h"
#include "pool/pins.h"

#include <stdio.h>

/* Writes pinned buffer b under a content lock: the caller's own if this
 * thread holds one on it (taking another would wait for itself), else a
 * share lock taken here. */
hs_status pool_flush_pinned(hs_pool *pool, hs_buf b, bool *wrote) {
  if (held_find(pool, b) >= 0) return pool_write_buffer(pool, b, HS_IOCTX_NORMAL, wrote, NULL);
  hs_bufdesc *d = pool_desc(pool, b);
  content_lock_acquire(&d->content_lock, lock_stripe(pool, b), HS_LOCK_SHARE);
  hs_status st = pool_write_buffer(pool, b, HS_IOCTX_NORMAL, wrote, NULL);
  content_lock_release(&d->content_lock, lock_stripe(pool, b));
  return st;
}

hs_status hs_pool_flush_buffer(hs_pool *pool, hs_buf buf) {
  if (!buf_ok(pool, buf))
    return hs_fail(HS_ERR_MISUSE, 0, "hs_pool_flush_buffer: bad buffer %d", buf);
  if (my_pin_count(pool, buf) == 0)
    return pool_misuse(pool, "hs_pool_flush_buffer", buf,
                       "the buffer is not pinned by this thread");
  bool wrote;
  return pool_flush_pinned(pool, buf, &wrote);
}

/* Writes every dirty buffer (of one relation, or all), going on past a
 * failure so that as much as possible reaches the files; then fsyncs. The
 * first failure is the one reported. */
static hs_status flush_buffers(hs_pool *pool, bool one_rel, hs_relid rel) {
  hs_status first = HS_OK;
  int first_errno = 0;
  char first_msg[512] = "";
  for (uint32_t i = 0; i < pool->nbuffers; i++) {
    hs_buf b = (hs_buf)i;
    hs_bufdesc *d = pool_desc(pool, b);
    hs_bufstate *ds = pool_bstate(pool, b);
    uint32_t s = atomic_load_explicit(&ds->state, memory_order_relaxed);
    if ((s & (BM_VALID | BM_DIRTY)) != (BM_VALID | BM_DIRTY)) continue;
    if (one_rel && atomic_load_explicit(&d->rel, memory_order_relaxed) != rel) continue;
    s = pool_pin(pool, b);
    if (!(s & BM_TAG_VALID) || (one_rel && buf_tag_get(d).rel != rel)) {
      pool_unpin(pool, b);
      continue;
    }
    bool wrote;
    hs_status st = pool_flush_pinned(pool, b, &wrote);
    pool_unpin(pool, b);
    if (st != HS_OK && first == HS_OK) {
      first = st;
      first_errno = hs_last_errno();
      snprintf(first_msg, sizeof first_msg, "%s", hs_last_error());
    }
  }
  hs_status st = one_rel ? hs_smgr_sync_relation(pool->smgr, rel) : hs_smgr_sync_all(pool->smgr);
  if (st != HS_OK && first == HS_OK) return st;
  if (first != HS_OK) return hs_fail(first, first_errno, "%s", first_msg);
  return HS_OK;
}

hs_status hs_pool_flush_relation(hs_pool *pool, hs_relid rel) {
  if (!pool) return hs_fail(HS_ERR_MISUSE, 0, "hs_pool_flush_relation: no pool");
  return flush_buffers(pool, true, rel);
}

hs_status hs_pool_flush_all(hs_pool *pool) {
  if (!pool) return hs_fail(HS_ERR_MISUSE, 0, "hs_pool_flush_all: no pool");
  return flush_buffers(pool, false, 0);
}

void pool_untag_locked(hs_pool *pool, hs_buf b, uint64_t hash, uint32_t locked_state) {
  hs_bufdesc *d = pool_desc(pool, b);
  hs_bufstate *ds = pool_bstate(pool, b);
  page_table_delete(&pool->table, b, hash);
  atomic_store_explicit(&d->block, HS_INVALID_BLOCK, memory_order_relaxed);
  atomic_store_explicit(&d->lsn, 0, memory_order_relaxed);
  buf_hdr_unlock(ds, locked_state & ~(BM_TAG_VALID | BM_VALID | BM_DIRTY | BM_JUST_DIRTIED |
                                      BM_IO_ERROR | BM_RING_BITS));
}

hs_status hs_pool_drop_relation(hs_pool *pool, hs_relid rel) {
  if (!pool) return hs_fail(HS_ERR_MISUSE, 0, "hs_pool_drop_relation: no pool");
  hs_page_table *pt = &pool->table;
  bool busy = false;
  hs_buftag busy_tag = {0};
  /* While set, a victim search that finds nothing waits rather than call
   * every buffer pinned: a buffer this drop took a page from is on its way
   * to the free list. */
  atomic_fetch_add(&pool->drops_in_progress, 1);
  for (uint32_t i = 0; i < pool->nbuffers; i++) {
    hs_buf b = (hs_buf)i;
    hs_bufdesc *d = pool_desc(pool, b);
    hs_bufstate *ds = pool_bstate(pool, b);
    /* A first look without locks, to skip the other relations' buffers. */
    if (!(atomic_load_explicit(&ds->state, memory_order_relaxed) & BM_TAG_VALID) ||
        atomic_load_explicit(&d->rel, memory_order_relaxed) != rel)
      continue;
    if (seams.pool_drop) seams.pool_drop(pool, b, SEAM_DROP_LOOKED, seams.pool_drop_ctx);
    /* The buffer may have been given to another page since that look, even
     * of another relation: the tag is read again, and then decided on only
     * under the header lock, with the partition lock of that tag held. */
    hs_buftag tag = buf_tag_get(d);
    if (tag.rel != rel) continue;
    uint64_t hash = buf_tag_hash(&tag);
    uint32_t part = page_table_partition(pt, hash);
    page_table_lock(pt, part);
    uint32_t s = buf_hdr_lock(ds);
    if (!(s & BM_TAG_VALID) || !buf_tag_is(d, &tag) || tag.rel != rel) { /* changed meanwhile */
      buf_hdr_unlock(ds, s);
      page_table_unlock(pt, part);
      continue;
    }
    if (pool_pinned(pool, b, s)) {
      buf_hdr_unlock(ds, s);
      page_table_unlock(pt, part);
      busy = true;
      busy_tag = tag;
      continue;
    }
    pool_untag_locked(pool, b, hash, s);
    page_table_unlock(pt, part);
    if (seams.pool_drop) seams.pool_drop(pool, b, SEAM_DROP_TAKEN, seams.pool_drop_ctx);
    policy_lock(pool, pool->lock_others);
    hs_policy_remove(pool->policy, (uint32_t)b);
    policy_unlock(pool, pool->lock_others);
    pool_push_free(pool, b);
  }
  atomic_fetch_sub(&pool->drops_in_progress, 1);
  if (busy)
    return hs_fail(HS_ERR_BUSY, 0,
                   "could not drop every buffer of relation %u: block %u of fork %d is pinned", rel,
                   busy_tag.block, (int)busy_tag.fork);
  return HS_OK;
}
