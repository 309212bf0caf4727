/*
 * pool/stat_shards.h — statistics counters that cost the hit path no shared
 * write.
 *
 * A single atomic counter bumped by every thread on every hit would bounce
 * its cache line between cores and undo the lock-free hit path. So counters
 * are sharded: each thread claims a shard id (process-wide, returned when the
 * thread exits) and bumps its own shard with a relaxed load and store — no
 * locked instruction. Threads beyond HS_STAT_SHARDS share shards and use
 * atomic adds. A snapshot sums the shards; a reset records a baseline to
 * subtract, so it never races with the owners' stores.
 */
#ifndef HOTSET_POOL_STAT_SHARDS_H
#define HOTSET_POOL_STAT_SHARDS_H

#include "hotset/stats.h"

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define HS_STAT_SHARDS 64

typedef struct hs_stat_shard {
  alignas(64) _Atomic uint64_t c[HS_IOCTX_COUNT][HS_STAT_COUNT];
} hs_stat_shard;

typedef struct hs_stat_shards {
  /* One per exclusive owner, plus one more (the last) that the threads
   * beyond HS_STAT_SHARDS share, updated only with atomic adds: a shared
   * thread must never add into an owner's shard, whose owner updates it
   * with a plain load and store. */
  hs_stat_shard shard[HS_STAT_SHARDS + 1];
  uint64_t base[HS_IOCTX_COUNT][HS_STAT_COUNT]; /* subtracted: set by reset */
} hs_stat_shards;

typedef struct hs_thread_shard {
  int id;         /* -1: not claimed yet */
  bool exclusive; /* this thread alone writes the shard */
} hs_thread_shard;

extern _Thread_local hs_thread_shard hs_my_shard __attribute__((tls_model("initial-exec")));
/* Pins this thread holds in its shard's private counters, in every pool
 * (pins.h keeps it). While it is not 0 the thread's shard id is not given
 * back at its exit: the counters are written by their owner alone with
 * plain stores, so they must never have two owners. */
extern _Thread_local uint64_t hs_my_private_pins __attribute__((tls_model("initial-exec")));
void stat_shard_claim(void);
/* The kernel thread id (gettid) of the thread that last claimed shard `id`. */
int stat_shard_owner_tid(int id);
/* Makes this thread add into the shared shard, never claiming its own. */
void stat_shard_use_shared(void);

static inline void stat_add(hs_stat_shards *s, hs_io_context ctx, hs_io_counter c, uint64_t n) {
  if (__builtin_expect(hs_my_shard.id < 0, 0)) stat_shard_claim();
  _Atomic uint64_t *p = &s->shard[hs_my_shard.id].c[ctx][c];
  if (hs_my_shard.exclusive)
    atomic_store_explicit(p, atomic_load_explicit(p, memory_order_relaxed) + n,
                          memory_order_relaxed);
  else
    atomic_fetch_add_explicit(p, n, memory_order_relaxed);
}

void stat_shards_init(hs_stat_shards *s);
void stat_shards_sum(const hs_stat_shards *s, uint64_t out[HS_IOCTX_COUNT][HS_STAT_COUNT]);
void stat_shards_reset(hs_stat_shards *s);

#endif
