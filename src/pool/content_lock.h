/*
 * pool/content_lock.h — a readers-writer lock in one 32-bit word.
 *
 * pthread_rwlock_t is 56 bytes; a buffer descriptor has 64 in all. So the
 * content lock is a word — bit 31 exclusive, bit 30 "someone sleeps", bits
 * 0..29 the count of shared holders — and sleepers park on one of a few
 * hundred striped mutex/condvar pairs shared by all buffers (PostgreSQL's
 * LWLocks also keep their state in a word and queue waiters elsewhere).
 *
 * No lost wake-up: a sleeper sets the WAITERS bit with a CAS while holding its
 * stripe's mutex and while the lock is still held against it; the releaser's
 * read-modify-write therefore sees the bit, and must take the same mutex to
 * broadcast, which it can only get once the sleeper is inside cond_wait.
 * The same stripes serve threads waiting for a buffer's I/O to finish.
 */
#ifndef HOTSET_POOL_CONTENT_LOCK_H
#define HOTSET_POOL_CONTENT_LOCK_H

#include "hotset/pool.h"

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define CL_EXCLUSIVE   (1u << 31)
#define CL_WAITERS     (1u << 30)
#define CL_SHARED_MASK (CL_WAITERS - 1)

#define HS_WAIT_STRIPES 256u

typedef struct hs_wait_stripe {
  alignas(64) pthread_mutex_t mu;
  pthread_cond_t cv;
} hs_wait_stripe;

void wait_stripes_init(hs_wait_stripe *stripes, unsigned n);
void wait_stripes_destroy(hs_wait_stripe *stripes, unsigned n);

bool content_lock_try(_Atomic uint32_t *word, hs_lock_mode mode);
void content_lock_acquire(_Atomic uint32_t *word, hs_wait_stripe *stripe, hs_lock_mode mode);
void content_lock_release(_Atomic uint32_t *word, hs_wait_stripe *stripe);

static inline bool content_lock_held_exclusive(_Atomic uint32_t *word) {
  return atomic_load_explicit(word, memory_order_relaxed) & CL_EXCLUSIVE;
}

#endif
