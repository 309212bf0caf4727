/*
 * pool/content_lock.c — the one-word readers-writer lock (see the header).
 *
 * Acquire spins briefly first: content locks are held for the time it takes
 * to read or change one page, so a short spin usually beats a sleep.
 */
#include "pool/content_lock.h"

#include "pool/buf_internal.h"

#include <sched.h>

#define ACQUIRE_SPINS 64

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

/* Whether the lock, as `word` shows it, is held against a `mode` request.
 * A reader also gives way to a waiting writer. */
static bool conflicts(uint32_t word, hs_lock_mode mode) {
  if (mode == HS_LOCK_EXCLUSIVE) return word & (CL_EXCLUSIVE | CL_SHARED_MASK);
  return word & (CL_EXCLUSIVE | CL_WRITER_WAITING);
}

/* The word once a `mode` request is granted. The writer's grant clears
 * WRITER_WAITING: the writer it announced has had its turn (or was overtaken
 * by this one, and will announce itself again). */
static uint32_t granted(uint32_t word, hs_lock_mode mode) {
  return mode == HS_LOCK_EXCLUSIVE ? (word | CL_EXCLUSIVE) & ~CL_WRITER_WAITING : word + 1;
}

bool content_lock_try(_Atomic uint32_t *word, hs_lock_mode mode) {
  uint32_t old = atomic_load_explicit(word, memory_order_relaxed);
  for (;;) {
    if (conflicts(old, mode)) return false;
    if (atomic_compare_exchange_weak_explicit(word, &old, granted(old, mode), memory_order_acquire,
                                              memory_order_relaxed))
      return true;
  }
}

/* One attempt of a waiting requester: takes the lock if it is free for
 * `mode`, else sets `announce` (bits telling releasers and readers about us)
 * if they are not all set. Returns true once the lock is ours; false after
 * either a conflict with all of `announce` set (then *seen is that word) or
 * a lost race (*seen is 0 then: look again before sleeping). */
static bool attempt(_Atomic uint32_t *word, hs_lock_mode mode, uint32_t announce, uint32_t *seen) {
  uint32_t old = atomic_load_explicit(word, memory_order_relaxed);
  *seen = 0;
  if (!conflicts(old, mode))
    return atomic_compare_exchange_strong_explicit(word, &old, granted(old, mode),
                                                   memory_order_acquire, memory_order_relaxed);
  /* The CAS only succeeds while the lock is still held against us: the
   * header's no-lost-wake-up argument depends on that. */
  if ((old & announce) != announce &&
      !atomic_compare_exchange_strong_explicit(word, &old, old | announce, memory_order_relaxed,
                                               memory_order_relaxed))
    return false;
  *seen = old | announce;
  return false;
}

void content_lock_acquire(_Atomic uint32_t *word, hs_wait_stripe *stripe, hs_lock_mode mode) {
  if (content_lock_try(word, mode)) return;
  /* A writer announces itself from its first failed attempt on, so that no
   * reader arriving while it spins gets in ahead of it. */
  uint32_t writer = mode == HS_LOCK_EXCLUSIVE ? CL_WRITER_WAITING : 0, seen;
  for (unsigned spin = 0; spin < ACQUIRE_SPINS; spin++) {
    if (attempt(word, mode, writer, &seen)) return;
    cpu_relax();
  }
  pthread_mutex_lock(&stripe->mu);
  for (;;) {
    if (attempt(word, mode, writer | CL_WAITERS, &seen)) break;
    if (seen) pthread_cond_wait(&stripe->cv, &stripe->mu);
  }
  pthread_mutex_unlock(&stripe->mu);
}

bool content_lock_release(_Atomic uint32_t *word, hs_wait_stripe *stripe) {
  uint32_t old = atomic_load_explicit(word, memory_order_relaxed), next;
  for (;;) {
    /* WRITER_WAITING survives every release: a writer that set it is still
     * waiting (see the header). */
    if (old & CL_EXCLUSIVE)
      next = old & ~(CL_EXCLUSIVE | CL_WAITERS);
    else if ((old & CL_SHARED_MASK) == 0)
      return false; /* no holder: an unlock without a lock */
    else if ((old & CL_SHARED_MASK) == 1)
      next = (old - 1) & ~CL_WAITERS; /* the last reader leaves: wake any writer */
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
  return true;
}
