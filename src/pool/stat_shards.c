/*
 * pool/stat_shards.c — per-thread shard ids and snapshots (see the header).
 */
#include "pool/stat_shards.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

_Thread_local hs_thread_shard hs_my_shard
    __attribute__((tls_model("initial-exec"))) = {.id = -1, .exclusive = false};

static pthread_mutex_t shard_ids_lock = PTHREAD_MUTEX_INITIALIZER;
static bool shard_taken[HS_STAT_SHARDS];
/* The kernel's id of each shard's owner, for messages ("pinned by thread"). */
static _Atomic int shard_tid[HS_STAT_SHARDS];
static pthread_key_t shard_key;
static pthread_once_t shard_key_once = PTHREAD_ONCE_INIT;

_Thread_local uint64_t hs_my_private_pins;

/* Runs at thread exit: gives an exclusive shard id back, unless the thread
 * still holds pins in its private counters (it exits holding them, or a
 * destructor that runs after this one has yet to release them). The id
 * then stays the thread's for good — one of HS_STAT_SHARDS lost, the
 * price of never letting a new owner share counters whose owner writes
 * them with plain stores (pins.h, take_pin). A thread that gives its id
 * back pins through the shared state word from here on. */
static void shard_release(void *value) {
  int id = (int)(intptr_t)value - 1;
  if (hs_my_private_pins > 0) return;
  hs_my_shard.id = HS_STAT_SHARDS;
  hs_my_shard.exclusive = false;
  pthread_mutex_lock(&shard_ids_lock);
  shard_taken[id] = false;
  pthread_mutex_unlock(&shard_ids_lock);
}

static void shard_key_create(void) {
  pthread_key_create(&shard_key, shard_release);
}

void stat_shard_claim(void) {
  pthread_once(&shard_key_once, shard_key_create);
  pthread_mutex_lock(&shard_ids_lock);
  int id = -1;
  for (int i = 0; i < HS_STAT_SHARDS; i++) {
    if (!shard_taken[i]) {
      id = i;
      break;
    }
  }
  if (id >= 0) {
    shard_taken[id] = true;
    atomic_store_explicit(&shard_tid[id], (int)syscall(SYS_gettid), memory_order_relaxed);
    hs_my_shard.exclusive = true;
    pthread_setspecific(shard_key, (void *)(intptr_t)(id + 1));
  } else {
    id = HS_STAT_SHARDS; /* the shared shard */
    hs_my_shard.exclusive = false;
  }
  pthread_mutex_unlock(&shard_ids_lock);
  hs_my_shard.id = id;
}

void stat_shard_use_shared(void) {
  if (hs_my_shard.id >= 0) return; /* claimed already: keep it */
  hs_my_shard.id = HS_STAT_SHARDS;
  hs_my_shard.exclusive = false;
}

void stat_shards_init(hs_stat_shards *s) {
  for (int i = 0; i <= HS_STAT_SHARDS; i++)
    for (int x = 0; x < HS_IOCTX_COUNT; x++)
      for (int c = 0; c < HS_STAT_COUNT; c++) atomic_init(&s->shard[i].c[x][c], 0);
  memset(s->base, 0, sizeof s->base);
}

static void sum_raw(const hs_stat_shards *s, uint64_t out[HS_IOCTX_COUNT][HS_STAT_COUNT]) {
  memset(out, 0, sizeof(uint64_t) * HS_IOCTX_COUNT * HS_STAT_COUNT);
  for (int i = 0; i <= HS_STAT_SHARDS; i++)
    for (int x = 0; x < HS_IOCTX_COUNT; x++)
      for (int c = 0; c < HS_STAT_COUNT; c++)
        out[x][c] += atomic_load_explicit(&s->shard[i].c[x][c], memory_order_relaxed);
}

void stat_shards_sum(const hs_stat_shards *s, uint64_t out[HS_IOCTX_COUNT][HS_STAT_COUNT]) {
  sum_raw(s, out);
  for (int x = 0; x < HS_IOCTX_COUNT; x++)
    for (int c = 0; c < HS_STAT_COUNT; c++) out[x][c] -= s->base[x][c];
}

void stat_shards_reset(hs_stat_shards *s) {
  sum_raw(s, s->base);
}

int stat_shard_owner_tid(int id) {
  if (id < 0 || id >= HS_STAT_SHARDS) return 0;
  return atomic_load_explicit(&shard_tid[id], memory_order_relaxed);
}
