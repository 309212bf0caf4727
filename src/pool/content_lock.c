/*
 * pool/content_lock.c — the one-word readers-writer lock (see the header).
 *
 * Acquire spins briefly first: content locks are held for the time it takes
 * to read or change one page, so a short spin usually beats a sleep.
 */
#include "pool/content_lock.h"

#include "pool/buf_internal.h"

#include <sched.h>

void wait_stripes_init(hs_wait_stripe *stripes, unsigned n) {
  for (unsigned i = 0; i < n; i++) {
    pthread_mutex_init(&stripes[i].mu, NULL);
    pthread_cond_init(&stripes[i].cv, NULL);
  }
}

void wait_stripes_destroy(hs_wait_stripe *stripes, unsigned n) {
  for (unsigned i = 0; i < n; i++) {
    pthread_mutex_destroy(&stripes[i].mu);
    pthread_cond_destroy(&stripes[i].cv);
  }
}

static bool conflicts(uint32_t word, hs_lock_mode mode) {
  if (mode == HS_LOCK_EXCLUSIVE) return word & (CL_EXCLUSIVE | CL_SHARED_MASK);
  return word & CL_EXCLUSIVE;
}

bool content_lock_try(_Atomic uint32_t *word, hs_lock_mode mode) {
  uint32_t old = atomic_load_explicit(word, memory_order_relaxed);
  for (;;) {
    if (conflicts(old, mode)) return false;
    uint32_t next = mode == HS_LOCK_EXCLUSIVE ? old | CL_EXCLUSIVE : old + 1;
    if (atomic_compare_exchange_weak_explicit(word, &old, next, memory_order_acquire,
                                              memory_order_relaxed))
      return true;
  }
}

void content_lock_acquire(_Atomic uint32_t *word, hs_wait_stripe *stripe, hs_lock_mode mode) {
  for (unsigned spin = 0; spin < 64; spin++) {
    if (content_lock_try(word, mode)) return;
    cpu_relax();
  }
  pthread_mutex_lock(&stripe->mu);
  for (;;) {
    if (content_lock_try(word, mode)) break;
    uint32_t old = atomic_load_explicit(word, memory_order_relaxed);
    if (!conflicts(old, mode)) continue;
    if (!(old & CL_WAITERS) &&
        !atomic_compare_exchange_strong_explicit(word, &old, old | CL_WAITERS, memory_order_relaxed,
                                                 memory_order_relaxed))
      continue;
    pthread_cond_wait(&stripe->cv, &stripe->mu);
  }
  pthread_mutex_unlock(&stripe->mu);
}

void content_lock_release(_Atomic uint32_t *word, hs_wait_stripe *stripe) {
  uint32_t old = atomic_load_explicit(word, memory_order_relaxed), next;
  for (;;) {
    if (old & CL_EXCLUSIVE)
      next = old & ~(CL_EXCLUSIVE | CL_WAITERS);
    else if ((old & CL_SHARED_MASK) == 1)
      next = 0; /* the last reader leaves: wake any writer */
    else
      next = old - 1;
    if (atomic_compare_exchange_weak_explicit(word, &old, next, memory_order_release,
                                              memory_order_relaxed))
      break;
  }
  if ((old & CL_WAITERS) && !(next & CL_WAITERS)) {
    pthread_mutex_lock(&stripe->mu);
    pthread_cond_broadcast(&stripe->cv);
    pthread_mutex_unlock(&stripe->mu);
  }
}
