/*
 * pool/pins.c — pins and content locks as things a thread holds.
 *
 * A pin counted in the state word is a write to a cache line every thread
 * touching that page shares; two threads pinning random resident pages then
 * pay a cache-line transfer on most hits, and the hit path stops scaling. So
 * a thread that owns a statistics shard (stat_shards.h) pins privately: it
 * bumps its own counter for the buffer, in an array only it normally writes,
 * and only *reads* the state word (pool_pin, pins.h). Whoever needs to know
 * that a buffer is unpinned (victim selection, retagging, drop, close) holds
 * the header lock and sums the state word's count and every thread's private
 * counter (pool_pin_count).
 *
 * Why that is safe — a Dekker handshake, all sequentially consistent: the
 * pinner increments its counter, then loads the state; the header-lock taker
 * sets LOCKED (an RMW, buf_hdr_lock), then loads the counters. Either the
 * pinner sees LOCKED — it then waits for the unlock and re-reads the state,
 * tag and all, so it sees any retag and backs off — or the lock taker sees
 * the pin and leaves the buffer alone. Every counter increment and every
 * header lock must therefore stay seq_cst.
 *
 * Pins belong to the thread that took them. A release takes a pin from the
 * releasing thread's own counter and nowhere else, so a release by a thread
 * holding none (a double release) is refused rather than paid for with
 * another thread's pin. The pool pins a victim in its state word while it
 * evicts (any thread may look at it then) and moves that pin into the
 * claimer's counter when it retags the buffer, under the header lock, so no
 * pin-count reader sees it twice or not at all (own_victim_pin). A buffer is
 * handed to another thread by pinning it again there (hs_buf_pin_again)
 * before the giver releases. Threads beyond HS_STAT_SHARDS pin through the
 * state word, which does not say whose a pin is: among them a double release
 * can go unnoticed.
 *
 * A content lock belongs to the thread that took it too, as PostgreSQL's
 * LWLocks belong to a backend, and each thread keeps a short list of the ones
 * it holds (PostgreSQL's held_lwlocks). The list turns silent hazards into
 * clear answers: locking a buffer twice would wait for itself forever; an
 * unlock of a lock not held would release somebody else's; a flush of a
 * buffer the caller holds locked takes no lock of its own (it would wait for
 * itself) but writes under the caller's; the last pin may not go while the
 * lock is held. Breaking one of these rules is misuse (pool_misuse): refused
 * and counted, or a stop in a debug build.
 *
 * The cost: a pin-count reader reads one counter per thread that has pinned
 * in this pool, and each such thread costs 4 bytes per buffer.
 */
#include "pool/pins.h"

#include "core/big_alloc.h"
#include "core/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

_Thread_local held_lock held_locks[MAX_HELD_LOCKS];
_Thread_local int held_count;

_Atomic uint32_t *pins_alloc(hs_pool *pool, int id) {
  pthread_mutex_lock(&pool->pins_lock);
  _Atomic uint32_t *a = atomic_load(&pool->pins[id]);
  if (!a) {
    a = big_alloc(sizeof *a * pool->nbuffers, pool->huge_mode, NULL);
    if (a) {
      for (uint32_t i = 0; i < pool->nbuffers; i++) atomic_init(&a[i], 0);
      atomic_store(&pool->pins[id], a);
      if ((uint32_t)id + 1 > atomic_load(&pool->pins_max))
        atomic_store(&pool->pins_max, (uint32_t)id + 1);
    }
  }
  pthread_mutex_unlock(&pool->pins_lock);
  return a;
}

uint32_t pool_pin_count(hs_pool *pool, hs_buf b, uint32_t state) {
  uint32_t n = buf_refcount(state);
  uint32_t max = atomic_load(&pool->pins_max);
  for (uint32_t i = 0; i < max; i++) {
    _Atomic uint32_t *a = atomic_load(&pool->pins[i]);
    if (a) n += atomic_load(&a[b]);
  }
  return n;
}

void pool_pinned_by(hs_pool *pool, hs_buf b, uint32_t state, char *out, size_t n) {
  uint32_t max = atomic_load(&pool->pins_max);
  for (uint32_t i = 0; i < max; i++) {
    _Atomic uint32_t *a = atomic_load(&pool->pins[i]);
    uint32_t c = a ? atomic_load(&a[b]) : 0;
    if (c > 0) {
      snprintf(out, n, "by thread %d (%u pin%s)", stat_shard_owner_tid((int)i), c,
               c == 1 ? "" : "s");
      return;
    }
  }
  snprintf(out, n, "by %u pin%s of threads without private pin counters", buf_refcount(state),
           buf_refcount(state) == 1 ? "" : "s");
}

/* "buffer 3 (block 7 of relation 1, fork 0)" */
static void describe_buf(hs_pool *pool, hs_buf b, char *out, size_t n) {
  hs_bufdesc *d = pool_desc(pool, b);
  uint32_t s = atomic_load_explicit(&pool_bstate(pool, b)->state, memory_order_relaxed);
  hs_buftag t = buf_tag_get(d);
  if (s & BM_TAG_VALID)
    snprintf(out, n, "buffer %d (block %u of relation %u, fork %d)", b, t.block, t.rel,
             (int)t.fork);
  else
    snprintf(out, n, "buffer %d (holding no page)", b);
}

hs_status pool_misuse(hs_pool *pool, const char *call, hs_buf b, const char *rule_fmt, ...) {
  char rule[256], what[128];
  va_list ap;
  va_start(ap, rule_fmt);
  vsnprintf(rule, sizeof rule, rule_fmt, ap);
  va_end(ap);
  describe_buf(pool, b, what, sizeof what);
  atomic_fetch_add_explicit(&pool->misuse, 1, memory_order_relaxed);
  if (HS_DEBUG_CHECKS) hs_debug_stop(__FILE__, __LINE__, "%s: %s: %s", call, what, rule);
  return hs_fail(HS_ERR_MISUSE, 0, "%s: %s: %s (refused)", call, what, rule);
}
