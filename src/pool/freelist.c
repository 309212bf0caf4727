/*
 * pool/freelist.c — choosing a victim: the buffer a miss puts its page in.
 *
 * A miss asks, in this order (PostgreSQL's StrategyGetBuffer):
 *
 *  1. the read's ring, if it has one: the ring's next slot, if that buffer
 *     may be recycled (strategy_get_buffer, beside the ring's sizing in
 *     strategy.c);
 *  2. the free list: buffers that never held a page, or whose relation was
 *     dropped, or that a miss took and gave back unused;
 *  3. the replacement policy (hotset/policy.h). The pool's buffers are the
 *     policy's slots, tag hashes its keys, and a buffer is resident for the
 *     policy exactly while its tag is valid.
 *
 * Each returns the buffer with our pin in its state word (any thread may
 * look at a victim's pins while we evict it; the pin moves into our private
 * counter at the retag, pins.h). What the policy may assume: it is asked
 * under policy_lock unless its flags say it is concurrent; it looks at pins
 * only through the skip callback, without the header lock, so a pin that
 * arrives after it looked is still respected — the pool locks the header
 * and checks again before it pins, and asks again if it lost (at most
 * MAX_VICTIM_RACES times). The skip callback also names the victims this
 * search already found dirty and could not write, so a policy that would
 * name the same unwritable page again and again (fifo, 2q, midpoint do not
 * move a page on a hit) moves on to the next candidate.
 *
 * A dirty victim is written back before it is used (pool_take_clean_victim),
 * its content lock only *tried*, never waited for: the caller may hold other
 * content locks, and the holder of this one may be waiting for a buffer too.
 *
 * HS_ERR_NO_BUFFERS means what it says: every buffer was seen pinned. Before
 * concluding that, a search that found nothing looks again while a relation
 * drop is between taking pages away and handing their buffers to the free
 * list (drops_in_progress), while the free list is not empty, or while some
 * buffer it could not take turned out unpinned a moment later. It never
 * waits for a pin to go away.
 */
#include "core/error.h"
#include "pool/pins.h"
#include "pool/strategy_internal.h"

#include <sched.h>
#include <stdio.h>

/* Victims a miss may find pinned before it was pinned by us, before the
 * read gives up with HS_ERR_NO_BUFFERS. */
#define MAX_VICTIM_RACES 1000

void pool_push_free(hs_pool *pool, hs_buf b) {
  hs_bufdesc *d = pool_desc(pool, b);
  pthread_mutex_lock(&pool->free_lock);
  if (d->free_next == FREE_NOT_IN_LIST) {
    d->free_next = pool->free_head;
    pool->free_head = b;
    atomic_fetch_add_explicit(&pool->free_count, 1, memory_order_relaxed);
  }
  pthread_mutex_unlock(&pool->free_lock);
}

/* A buffer from the free list, header locked; false if the list is empty.
 * The policy's hand may have taken a listed buffer meanwhile: skip those. */
static bool pop_free(hs_pool *pool, hs_buf *out, uint32_t *locked_state) {
  while (atomic_load_explicit(&pool->free_count, memory_order_relaxed) > 0) {
    pthread_mutex_lock(&pool->free_lock);
    hs_buf b = pool->free_head;
    if (b < 0) {
      pthread_mutex_unlock(&pool->free_lock);
      return false;
    }
    hs_bufdesc *d = pool_desc(pool, b);
    hs_bufstate *ds = pool_bstate(pool, b);
    pool->free_head = d->free_next;
    d->free_next = FREE_NOT_IN_LIST;
    atomic_fetch_sub_explicit(&pool->free_count, 1, memory_order_relaxed);
    pthread_mutex_unlock(&pool->free_lock);
    uint32_t s = buf_hdr_lock(ds);
    if (s & BM_TAG_VALID) { /* the policy's hand took it meanwhile: it is in use */
      buf_hdr_unlock(ds, s);
      continue;
    }
    if (pool_pinned(pool, b, s)) {
      /* Pinned for a moment by a reader that found it before its page was
       * dropped: put it back rather than lose it, and let the caller ask the
       * policy this time. */
      buf_hdr_unlock(ds, s);
      pool_push_free(pool, b);
      return false;
    }
    *out = b;
    *locked_state = s;
    return true;
  }
  return false;
}

/* Pinned (by the state word `s` read without the header lock), or found
 * unwritable by this search: never a victim. */
static bool must_skip_hard(const victim_search *vs, uint32_t slot, uint32_t s) {
  for (unsigned i = 0; i < vs->nunwritable; i++)
    if (vs->unwritable[i] == (hs_buf)slot) return true;
  return pool_pin_count(vs->pool, (hs_buf)slot, s) > 0;
}

/* The policy's skip callback: pinned buffers (a quick look without the
 * header lock), the buffers this search found it could not write, the
 * dirty pages of rings that write their own (until nothing else is left),
 * and —
 * up to VICTIM_FLUSH_AVOID of them per search — dirty buffers whose write
 * would first force a WAL flush. The last is not PostgreSQL's rule, whose
 * backends write whatever the clock hand finds: a vacuum or bulk load
 * dirties pages faster than the log is synced, and a lookup that lands on
 * one as its victim waits for an fdatasync — milliseconds, when the device
 * is busy with the writer's own pages — where a clean buffer a few places
 * further on costs nothing. The budget keeps a pool that is all dirty (a
 * bulk load) from searching forever: then the flush is paid. */
static bool policy_must_skip(void *ctx, uint32_t slot) {
  victim_search *vs = ctx;
  hs_bufdesc *d = pool_desc(vs->pool, (hs_buf)slot);
  hs_bufstate *ds = pool_bstate(vs->pool, (hs_buf)slot);
  uint32_t s = atomic_load_explicit(&ds->state, memory_order_relaxed);
  if (must_skip_hard(vs, slot, s)) return true;
  if ((s & (BM_DIRTY | BM_RING_WRITES)) == (BM_DIRTY | BM_RING_WRITES) && !vs->take_ring_dirty) {
    vs->ring_dirty_passed = true;
    return true;
  }
  if ((s & BM_DIRTY) && vs->flush_avoided < VICTIM_FLUSH_AVOID &&
      pool_needs_wal_flush(vs->pool, d)) {
    vs->flush_avoided++;
    return true;
  }
  return false;
}

/* A buffer to put a new page in, pinned by us (the shared way), with its
 * state as pinned: the ring's next slot if it may be recycled (*reused),
 * else from the free list, else the policy's victim. */
static hs_status take_victim(hs_pool *pool, const hs_access *incoming, hs_strategy *ring,
                             victim_search *vs, hs_buf *out, uint32_t *state, bool *reused) {
  hs_buf v;
  uint32_t s;
  *reused = false;
  if (ring && (v = strategy_get_buffer(ring, &s)) != HS_INVALID_BUF) {
    *out = v;
    *state = s;
    *reused = true;
    return HS_OK;
  }
  unsigned unpinned_retries = 0;
  for (;;) {
    if (pop_free(pool, &v, &s)) {
      s += BUF_REFCOUNT_ONE;
      buf_hdr_unlock(pool_bstate(pool, v), s);
      *out = v;
      *state = s;
      return HS_OK;
    }
    for (int race = 0; race < MAX_VICTIM_RACES; race++) {
      policy_lock(pool, pool->lock_others);
      int64_t cand = hs_policy_victim(pool->policy, incoming, policy_must_skip, vs);
      policy_unlock(pool, pool->lock_others);
      if (cand < 0) break;
      v = (hs_buf)cand;
      for (unsigned i = 0; i < vs->nunwritable; i++)
        HS_INVARIANT(vs->unwritable[i] != v, "policy %s named buffer %d, which it was told to skip",
                     hs_policy_name(pool->policy), v);
      hs_bufstate *vds = pool_bstate(pool, v);
      /* The policy looked without the header lock: check again with it, and
       * pin before anyone else can. */
      s = buf_hdr_lock(vds);
      if (!(s & BM_TAG_VALID) || pool_pinned(pool, v, s)) {
        buf_hdr_unlock(vds, s);
        /* A page being dropped stays in the policy until the dropper can
         * take the policy lock: give it the chance. */
        if (!(s & BM_TAG_VALID)) sched_yield();
        continue;
      }
      s += BUF_REFCOUNT_ONE;
      buf_hdr_unlock(vds, s);
      *out = v;
      *state = s;
      return HS_OK;
    }
    /* Nothing found but the dirty pages of rings that write their own:
     * take one of those after all. */
    if (vs->ring_dirty_passed && !vs->take_ring_dirty) {
      vs->take_ring_dirty = true;
      continue;
    }
    /* Nothing found but buffers passed over for their WAL flush: take one
     * of those after all. */
    if (vs->flush_avoided > 0 && vs->flush_avoided < VICTIM_FLUSH_AVOID) {
      vs->flush_avoided = VICTIM_FLUSH_AVOID;
      continue;
    }
    /* Nothing found. A drop in progress, or buffers back on the free list,
     * mean there is (or soon will be) a buffer: wait for it. */
    if (atomic_load(&pool->drops_in_progress) > 0 ||
        atomic_load_explicit(&pool->free_count, memory_order_relaxed) > 0) {
      atomic_fetch_add_explicit(&pool->victim_waits, 1, memory_order_relaxed);
      sched_yield();
      continue;
    }
    uint32_t pinned = 0;
    for (uint32_t b = 0; b < pool->nbuffers; b++)
      if (must_skip_hard(vs, b,
                         atomic_load_explicit(&pool_bstate(pool, b)->state, memory_order_relaxed)))
        pinned++;
    if (pinned < pool->nbuffers && ++unpinned_retries < 1000) {
      sched_yield(); /* a pin went away after the policy looked */
      continue;
    }
    if (vs->nunwritable > 0 && pinned == pool->nbuffers)
      /* The write error is the reason this read found no buffer. */
      return hs_fail(vs->write_status, vs->write_errno,
                     "%s (no other buffer was free: %u of %u pinned, %u dirty and unwritable)",
                     vs->write_error, pinned - vs->nunwritable, pool->nbuffers, vs->nunwritable);
    if (pinned == pool->nbuffers)
      return hs_fail(HS_ERR_NO_BUFFERS, 0, "no unpinned buffers available (all %u are pinned)",
                     pool->nbuffers);
    return hs_fail(HS_ERR_NO_BUFFERS, 0,
                   "no buffer could be taken: %u of %u are pinned and the others were pinned "
                   "each time they were tried",
                   pinned, pool->nbuffers);
  }
}

hs_status pool_take_clean_victim(hs_pool *pool, const hs_access *incoming, hs_io_context ctx,
                                 hs_strategy *ring, victim_search *vs, hs_buf *out, uint32_t *state,
                                 bool *reused) {
  for (;;) {
    hs_buf v = HS_INVALID_BUF;
    uint32_t s = 0;
    hs_status st = take_victim(pool, incoming, ring, vs, &v, &s, reused);
    if (st != HS_OK) return st;
    if (s & BM_DIRTY) {
      hs_bufdesc *vd = pool_desc(pool, v);
      /* Only try the content lock: we may hold other content locks, and the
       * holder of this one may be waiting for a buffer too. */
      if (!content_lock_try(&vd->content_lock, HS_LOCK_SHARE)) {
        unpin_victim(pool, v);
        continue;
      }
      bool wrote, wal_flushed;
      st = pool_write_buffer(pool, v, ctx, &wrote, &wal_flushed);
      content_lock_release(&vd->content_lock, lock_stripe(pool, v));
      if (wrote) bgwriter_note_backend_write(&pool->bgw);
      if (wal_flushed && *reused) strategy_note_wal_flush(ring);
      if (st != HS_OK) {
        /* Still dirty: this frame is not reused, and the policy is asked
         * for another victim with this one skipped. */
        unpin_victim(pool, v);
        vs->unwritable[vs->nunwritable++] = v;
        vs->write_status = st;
        vs->write_errno = hs_last_errno();
        snprintf(vs->write_error, sizeof vs->write_error, "%s", hs_last_error());
        if (vs->nunwritable >= MAX_VICTIM_WRITE_FAILURES) return st;
        continue;
      }
    }
    if (!*reused) bgwriter_note_alloc(&pool->bgw);
    *out = v;
    *state = s;
    return HS_OK;
  }
}

void pool_note_victim(hs_pool *pool, hs_io_context ctx, hs_strategy *ring, hs_buf v, bool reused,
                      bool evicted) {
  if (reused) {
    stat_add(&pool->stats, ctx, HS_STAT_REUSES, 1);
  } else {
    if (evicted) stat_add(&pool->stats, ctx, HS_STAT_EVICTIONS, 1);
    if (ring) strategy_add_buffer(ring, v); /* the buffer joins the ring */
  }
  if (ring) strategy_note_allocation(ring, reused);
}
