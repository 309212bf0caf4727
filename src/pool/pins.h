/*
 * pool/pins.h — what a thread holds: its pins and its content locks.
 *
 * The inline half of pins.c (read the essay there): the hit path pins and
 * the release path unpins through these, so they must be inlined wherever
 * they are called, whichever file that is.
 */
#ifndef HOTSET_POOL_PINS_H
#define HOTSET_POOL_PINS_H

#include "core/debug.h"
#include "pool/pool_internal.h"

/* ---- private pins --------------------------------------------------------- */

/* Allocates thread shard `id`'s pin counters (NULL if out of memory). */
_Atomic uint32_t *pins_alloc(hs_pool *pool, int id);

/* This thread's private pin counters, or NULL (no exclusive shard, or no
 * memory): then it pins through the state word. */
static inline _Atomic uint32_t *my_pins(hs_pool *pool) {
  if (__builtin_expect(hs_my_shard.id < 0, 0)) stat_shard_claim();
  if (!hs_my_shard.exclusive) return NULL;
  _Atomic uint32_t *a = atomic_load_explicit(&pool->pins[hs_my_shard.id], memory_order_acquire);
  return a ? a : pins_alloc(pool, hs_my_shard.id);
}

/* This thread's private counters if it has them already (never allocates). */
static inline _Atomic uint32_t *my_pins_if_any(hs_pool *pool) {
  if (!hs_my_shard.exclusive) return NULL;
  return atomic_load_explicit(&pool->pins[hs_my_shard.id], memory_order_acquire);
}

/* Pins b; returns its state as seen after the pin, never with LOCKED set
 * (read with acquire ordering: the caller trusts VALID in it, and must then
 * see the page that the thread which set VALID filled in). The increment and
 * the load are this side of the Dekker handshake (pins.c). Always inlined:
 * it is most of the hit path. */
static inline __attribute__((always_inline)) uint32_t pool_pin(hs_pool *pool, hs_buf b) {
  hs_bufstate *d = pool_bstate(pool, b);
  _Atomic uint32_t *mine = my_pins(pool);
  if (!mine) return buf_pin(d);
  /* The state word's line is on its way while the locked increment waits
   * for its own: on a big pool both are cache misses, and the increment
   * lets no later load start before it completes. */
  __builtin_prefetch(d);
  hs_my_private_pins++;
  atomic_fetch_add_explicit(&mine[b], 1, memory_order_seq_cst);
  uint32_t s = atomic_load_explicit(&d->state, memory_order_seq_cst);
  if (s & BM_LOCKED) s = buf_wait_unlocked(d);
  return s;
}

/* Is b pinned by anyone? The caller holds b's header lock (`locked_state`). */
static inline bool pool_pinned(hs_pool *pool, hs_buf b, uint32_t locked_state) {
  return pool_pin_count(pool, b, locked_state) > 0;
}

/* Takes one pin off this thread's own counter *c if it has any: a load and
 * a release store, no locked instruction (on the direct translation's hit,
 * 15–16 ns a read and release against 21–22 with a compare-and-swap). Only
 * the counter's owner ever writes it: a thread's shard id, and with it its
 * counters, goes to another thread only once it holds no private pin
 * (stat_shards.c). A pin-count reader that sees the old value leaves the
 * buffer alone a little longer; one that sees the new one (a seq_cst
 * load) also sees every access this thread made to the page. */
static inline bool take_pin(_Atomic uint32_t *c) {
  uint32_t v = atomic_load_explicit(c, memory_order_relaxed);
  if (v == 0) return false;
  atomic_store_explicit(c, v - 1, memory_order_release);
  hs_my_private_pins--;
  return true;
}

/* Pins this thread holds on b (its private count; for a thread without
 * private counters, the state word's count, which it shares). */
static inline uint32_t my_pin_count(hs_pool *pool, hs_buf b) {
  _Atomic uint32_t *mine = my_pins_if_any(pool);
  if (mine) return atomic_load_explicit(&mine[b], memory_order_relaxed);
  return buf_refcount(atomic_load_explicit(&pool_bstate(pool, b)->state, memory_order_relaxed));
}

/* Drops one of this thread's pins on b; false if it holds none. A pin
 * belongs to the thread that took it: a thread with private counters never
 * takes a pin from the state word or from another thread's counters (that is
 * how a double release used to steal another thread's pin). Pins the pool
 * takes the shared way for a miss are moved into the claimer's counters
 * before they are handed out (own_victim_pin). */
static inline bool unpin_own(hs_pool *pool, hs_buf b) {
  _Atomic uint32_t *mine = my_pins_if_any(pool);
  if (mine) return take_pin(&mine[b]);
  return buf_unpin_shared(pool_bstate(pool, b));
}

/* Drops a pin the pool itself took on this thread's behalf. */
static inline void pool_unpin(hs_pool *pool, hs_buf b) {
  bool had = unpin_own(pool, b);
  HS_INVARIANT(had, "the pool dropped a pin it did not hold on buffer %d", b);
  (void)had;
}

/* Drops a victim's pin, which victim selection takes in the state word. */
static inline void unpin_victim(hs_pool *pool, hs_buf v) {
  bool had = buf_unpin_shared(pool_bstate(pool, v));
  HS_INVARIANT(had, "a victim's pin on buffer %d was not in its state word", v);
  (void)had;
}

/* Moves our pin on v (taken in its state word by victim selection) into
 * this thread's private counters, so that the pin is the claimer's own: see
 * unpin_own. The header lock is held; returns the state word to publish. */
static inline uint32_t own_victim_pin(_Atomic uint32_t *mine, hs_buf v, uint32_t s) {
  if (!mine) return s;
  hs_my_private_pins++;
  atomic_fetch_add_explicit(&mine[v], 1, memory_order_seq_cst);
  return s - BUF_REFCOUNT_ONE;
}

/* "by thread 1234 (2 pins)" — whose pins keep buffer b: the owner of the
 * first private counter holding one, or the state word's sharers. */
void pool_pinned_by(hs_pool *pool, hs_buf b, uint32_t state, char *out, size_t n);

/* ---- content locks held by this thread ------------------------------------ */

#define MAX_HELD_LOCKS 64

typedef struct held_lock {
  const hs_pool *pool;
  hs_buf buf;
  hs_lock_mode mode;
} held_lock;

extern _Thread_local held_lock held_locks[MAX_HELD_LOCKS]
    __attribute__((tls_model("initial-exec")));
extern _Thread_local int held_count __attribute__((tls_model("initial-exec")));

/* Index of this thread's hold on (pool, b) in held_locks, or -1. */
static inline int held_find(const hs_pool *pool, hs_buf b) {
  for (int i = held_count - 1; i >= 0; i--)
    if (held_locks[i].buf == b && held_locks[i].pool == pool) return i;
  return -1;
}

/* Notes a content lock this thread has just taken (there is room: the
 * caller checked held_count against MAX_HELD_LOCKS before taking it). */
static inline void held_note(const hs_pool *pool, hs_buf b, hs_lock_mode mode) {
  held_locks[held_count++] = (held_lock){.pool = pool, .buf = b, .mode = mode};
}

static inline void held_forget(int i) {
  held_locks[i] = held_locks[--held_count];
}

/* ---- rules ------------------------------------------------------------------ */

/* A call that broke a rule of the API: counted, refused with HS_ERR_INVALID
 * and a message naming the call, the buffer and the rule; a debug build
 * stops here (core/debug.h). */
__attribute__((format(printf, 4, 5))) hs_status pool_misuse(hs_pool *pool, const char *call,
                                                            hs_buf b, const char *rule_fmt, ...);

#endif
