/*
 * pool/content_lock.h — a readers-writer lock in one 32-bit word.
 *
 * pthread_rwlock_t is 56 bytes; a buffer descriptor has 64 in all. So the
 * content lock is a word — bit 31 exclusive, bit 30 "someone sleeps", bit 29
 * "a writer waits", bits 0..28 the count of shared holders — and sleepers
 * park on one of a few hundred striped mutex/condvar pairs shared by all
 * buffers (PostgreSQL's LWLocks also keep their state in a word and queue
 * waiters elsewhere). Taking or dropping the lock uncontended is one CAS.
 *
 * Writers first. Readers come and go at will, so a lock that let a new
 * reader in whenever the count was non-zero would never reach zero for a
 * writer under a steady stream of overlapping readers. Hence a writer that
 * finds the lock taken sets WRITER_WAITING, and from then on shared requests
 * (try and acquire alike) treat the lock as taken: only the readers already
 * inside finish, and the writer gets the lock next. The bit is cleared by
 * whichever exclusive acquisition comes next (the announcing writer's own, or
 * another writer's: writers among themselves are unordered), so it always
 * means "a writer that has not had the lock yet is waiting". A writer still
 * waiting after someone else's acquisition sets it again when it next looks:
 * at once if it is spinning (an exclusive release leaves the bit alone, so
 * that writer follows the holder before any new reader), or when the
 * release's broadcast wakes it if it slept (readers woken with it may go
 * first, but only until it has looked). The bit cannot stay set with nobody
 * to clear it: only a writer in content_lock_acquire sets it, only while the
 * lock is held against it, and that writer does not leave until it has
 * acquired, which clears it.
 *
 * Consequence for callers: a thread must not ask for a share lock it already
 * holds, nor take two share locks in an order that a writer elsewhere takes
 * the other way round — a waiting writer between them stops the second share
 * request just as a held exclusive lock would. content_lock_try is the way
 * to take a second lock without that risk.
 *
 * No lost wake-up: a sleeper sets the WAITERS bit with a CAS while holding its
 * stripe's mutex and while the lock is still held against it; the releaser's
 * read-modify-write therefore sees the bit, and must take the same mutex to
 * broadcast, which it can only get once the sleeper is inside cond_wait. That
 * argument needs every change that can end a sleeper's conflict to be a
 * release that clears WAITERS and broadcasts if it was set. A writer
 * conflicts with an exclusive holder or any shared holder: its conflict ends
 * with an exclusive release or the last shared release, and both clear
 * WAITERS and broadcast. A reader conflicts with an exclusive holder or
 * WRITER_WAITING: WRITER_WAITING is cleared only by an exclusive acquisition,
 * which sets EXCLUSIVE in the same CAS (and keeps WAITERS), so the reader's
 * conflict still ends only with an exclusive release. A shared release that
 * is not the last keeps WAITERS and need not wake anyone: for every sleeper
 * the lock is still held against it. The wake-up is a broadcast, and those
 * it wakes whose conflict remains (readers while a writer waits; writers who
 * lost the race) set WAITERS again before sleeping.
 *
 * The pool keeps a second array of stripes for threads waiting for a
 * buffer's I/O to finish.
 */
#ifndef HOTSET_POOL_CONTENT_LOCK_H
#define HOTSET_POOL_CONTENT_LOCK_H

#include "hotset/pool.h"

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define CL_EXCLUSIVE      (1u << 31)
#define CL_WAITERS        (1u << 30)
#define CL_WRITER_WAITING (1u << 29)
#define CL_SHARED_MASK    (CL_WRITER_WAITING - 1)

#define HS_WAIT_STRIPES 256u

typedef struct hs_wait_stripe {
  alignas(64) pthread_mutex_t mu;
  pthread_cond_t cv;
} hs_wait_stripe;

void wait_stripes_init(hs_wait_stripe *stripes, unsigned n);
void wait_stripes_destroy(hs_wait_stripe *stripes, unsigned n);

/* Takes the lock if it can without waiting. A share request fails while a
 * writer waits, even though the lock is only held in share mode. */
bool content_lock_try(_Atomic uint32_t *word, hs_lock_mode mode);
void content_lock_acquire(_Atomic uint32_t *word, hs_wait_stripe *stripe, hs_lock_mode mode);
/* Drops one hold (exclusive, or one shared). False, with the word untouched,
 * if the word shows no holder at all — an unlock without a lock — rather
 * than wrapping the shared count into the flag bits. */
bool content_lock_release(_Atomic uint32_t *word, hs_wait_stripe *stripe);

static inline bool content_lock_held_exclusive(_Atomic uint32_t *word) {
  return atomic_load_explicit(word, memory_order_relaxed) & CL_EXCLUSIVE;
}

#endif
