/*
 * pool/buf_internal.h — the buffer descriptor and its state word.
 *
 * One descriptor per frame, one cache line each (so two threads taking
 * content locks on neighbouring buffers never share a line): the tag, the
 * content lock, the page-table link, the page LSN. The state word is not in
 * it: everything a pin needs is one 32-bit atomic in a compact array of its
 * own (hs_bufstate below), laid out as PostgreSQL packed its state in 9.6:
 *
 *   bits  0..17  reference count (pins taken the shared way; see pins.c
 *                for the per-thread private pins that the hit path uses)
 *   bits 18..21  unused (PostgreSQL keeps its usage count here; hotset's
 *                policies keep their own, see hotset/policy.h)
 *   bits 22..31  flags
 *
 * so a shared pin is one compare-and-swap. LOCKED is a spinlock over the
 * descriptor header: while it is set the state word is frozen (every other
 * writer waits for it to clear), which lets the holder unlock with a plain
 * store. The tag changes only with LOCKED held, no pin on the buffer but the
 * changer's own (the state word's count plus every private counter: 1 for a
 * retag, 0 for a drop) and the page-table partition lock of every tag
 * involved held. So a thread that has pinned a buffer and then sees the tag
 * it wanted can trust it until it unpins.
 */
#ifndef HOTSET_POOL_BUF_INTERNAL_H
#define HOTSET_POOL_BUF_INTERNAL_H

#include "core/hash.h"
#include "hotset/pool.h"

#include <sched.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define BUF_REFCOUNT_ONE  1u
#define BUF_REFCOUNT_MASK ((1u << 18) - 1)

#define BM_LOCKED         (1u << 22) /* header spinlock */
#define BM_DIRTY          (1u << 23) /* page differs from its file */
#define BM_VALID          (1u << 24) /* page holds the block's contents */
#define BM_TAG_VALID      (1u << 25) /* tag is set and in the page table */
#define BM_IO_IN_PROGRESS (1u << 26) /* a read or write is under way */
#define BM_IO_ERROR       (1u << 27) /* the last I/O failed */
#define BM_JUST_DIRTIED   (1u << 28) /* dirtied since the write began */
#define BM_IO_WAITERS     (1u << 29) /* someone sleeps until the I/O ends */
#define BM_RING           (1u << 30) /* last used by a ring, by nobody since */
#define BM_RING_WRITES    (1u << 31) /* ... one that writes its own dirty pages */
#define BM_RING_BITS      (BM_RING | BM_RING_WRITES)

static inline uint32_t buf_refcount(uint32_t state) {
  return state & BUF_REFCOUNT_MASK;
}

typedef struct hs_bufdesc {
  _Atomic uint32_t content_lock; /* see content_lock.h */
  /* The tag. Atomic only so that the page table's lock-free readers may
   * peek at it; it is trusted only after a pin (see above). */
  _Atomic uint32_t rel;
  _Atomic uint32_t fork;
  _Atomic uint32_t block;
  _Atomic int32_t hash_next; /* page-table chain; -1 ends it */
  _Atomic uint64_t lsn;      /* the page's LSN (WAL-before-data) */
  int32_t free_next;         /* free list link, under the free-list lock */
} hs_bufdesc;

_Static_assert(sizeof(hs_bufdesc) <= 64, "a buffer descriptor must fit one cache line");

typedef struct hs_bufdesc_padded {
  alignas(64) hs_bufdesc d;
} hs_bufdesc_padded;

_Static_assert(sizeof(hs_bufdesc_padded) == 64, "descriptors are one cache line each");

/* The state word, in an array of its own (hs_pool.states): four bytes a
 * buffer, sixteen to a cache line, so that what a hit reads of a big pool
 * is a small array, not one line of a 64-byte descriptor per buffer
 * (docs/buffer-pool.md, "The state word"). A struct, not a bare atomic, so
 * that a descriptor can never be passed where a state word is meant. */
typedef struct hs_bufstate {
  _Atomic uint32_t state;
} hs_bufstate;

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

/* Waits until the header spinlock is free; returns the state then. */
static inline uint32_t buf_wait_unlocked(hs_bufstate *d) {
  uint32_t s;
  unsigned spins = 0;
  while ((s = atomic_load_explicit(&d->state, memory_order_acquire)) & BM_LOCKED) {
    if (++spins < 100)
      cpu_relax();
    else
      sched_yield();
  }
  return s;
}

/* Takes the header spinlock; returns the state with BM_LOCKED set.
 * Sequentially consistent: the pool's private pins (pins.c) rely on a
 * Dekker-style handshake between this RMW and a pinner's counter increment. */
static inline uint32_t buf_hdr_lock(hs_bufstate *d) {
  for (;;) {
    uint32_t old = atomic_fetch_or_explicit(&d->state, BM_LOCKED, memory_order_seq_cst);
    if (!(old & BM_LOCKED)) return old | BM_LOCKED;
    buf_wait_unlocked(d);
  }
}

/* Releases the header spinlock, publishing `state` (a plain store: while
 * LOCKED is set nobody else writes the word). */
static inline void buf_hdr_unlock(hs_bufstate *d, uint32_t state) {
  atomic_store_explicit(&d->state, state & ~BM_LOCKED, memory_order_release);
}

/* Adds a pin counted in the state word; returns the state after it. */
static inline uint32_t buf_pin(hs_bufstate *d) {
  uint32_t old = atomic_load_explicit(&d->state, memory_order_relaxed);
  for (;;) {
    if (old & BM_LOCKED) old = buf_wait_unlocked(d);
    if (buf_refcount(old) == BUF_REFCOUNT_MASK) {
      /* 2^18 - 1 pins through the word (only threads without a private pin
       * array use it): wait for one to go rather than wrap to "unpinned". */
      sched_yield();
      old = atomic_load_explicit(&d->state, memory_order_relaxed);
      continue;
    }
    uint32_t next = old + BUF_REFCOUNT_ONE;
    if (atomic_compare_exchange_weak_explicit(&d->state, &old, next, memory_order_acquire,
                                              memory_order_relaxed))
      return next;
  }
}

/* Drops a pin counted in the state word; false if it holds none. */
static inline bool buf_unpin_shared(hs_bufstate *d) {
  uint32_t old = atomic_load_explicit(&d->state, memory_order_relaxed);
  for (;;) {
    if (old & BM_LOCKED) old = buf_wait_unlocked(d);
    if (buf_refcount(old) == 0) return false;
    if (atomic_compare_exchange_weak_explicit(&d->state, &old, old - BUF_REFCOUNT_ONE,
                                              memory_order_release, memory_order_relaxed))
      return true;
  }
}

typedef struct hs_buftag {
  hs_relid rel;
  hs_fork fork;
  hs_blockno block;
} hs_buftag;

static inline bool buf_tag_is(const hs_bufdesc *d, const hs_buftag *t) {
  return atomic_load_explicit(&d->block, memory_order_relaxed) == t->block &&
         atomic_load_explicit(&d->rel, memory_order_relaxed) == t->rel &&
         atomic_load_explicit(&d->fork, memory_order_relaxed) == (uint32_t)t->fork;
}

static inline void buf_tag_set(hs_bufdesc *d, const hs_buftag *t) {
  atomic_store_explicit(&d->rel, t->rel, memory_order_relaxed);
  atomic_store_explicit(&d->fork, (uint32_t)t->fork, memory_order_relaxed);
  atomic_store_explicit(&d->block, t->block, memory_order_relaxed);
}

static inline hs_buftag buf_tag_get(const hs_bufdesc *d) {
  hs_buftag t;
  t.rel = atomic_load_explicit(&d->rel, memory_order_relaxed);
  t.fork = (hs_fork)atomic_load_explicit(&d->fork, memory_order_relaxed);
  t.block = atomic_load_explicit(&d->block, memory_order_relaxed);
  return t;
}

/* A 64-bit mix of the tag (murmur3's finalizer over the packed fields). */
static inline uint64_t buf_tag_hash(const hs_buftag *t) {
  return hs_mix64(((uint64_t)t->rel << 34) ^ ((uint64_t)t->fork << 32) ^ t->block);
}

#endif
