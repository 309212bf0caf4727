/*
 * pool/direct_map.c — making a fork's reservation, and writing its entries
 * (the design, and the rule that makes reading them lock free, are in
 * direct_map.h).
 */
#include "pool/direct_map.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define RESERVATION_BYTES ((size_t)DIRECT_MAX_BLOCKS * sizeof(uint32_t))

hs_status direct_map_init(direct_map *m, hs_huge_pages huge) {
  memset(m, 0, sizeof *m);
  for (uint32_t i = 0; i < DIRECT_SLOTS; i++) {
    atomic_init(&m->slots[i].key, 0);
    atomic_init(&m->slots[i].entries, NULL);
    atomic_init(&m->slots[i].high, 0);
  }
  atomic_init(&m->reserved_bytes, 0);
  atomic_init(&m->refused, 0);
  m->huge = huge;
  pthread_mutex_init(&m->lock, NULL);
  return HS_OK;
}

void direct_map_destroy(direct_map *m) {
  for (uint32_t i = 0; i < DIRECT_SLOTS; i++) {
    _Atomic uint32_t *e = atomic_load(&m->slots[i].entries);
    if (e) munmap((void *)e, RESERVATION_BYTES);
  }
  pthread_mutex_destroy(&m->lock);
}

/* A reservation of address space that takes memory only where written:
 * MAP_NORESERVE, so a system that counts commitments (vm.overcommit_memory
 * 0) does not count it; one that never overcommits (2) refuses it, and the
 * fork stays with the page table. */
static _Atomic uint32_t *reserve(hs_huge_pages huge) {
  void *p = mmap(NULL, RESERVATION_BYTES, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return NULL;
#ifdef MADV_HUGEPAGE
  /* The entries are read at random like the other arrays of a hit: huge
   * pages where the pool's arrays get them (a 2 MiB page holds the entries
   * of 524,288 blocks). */
  madvise(p, RESERVATION_BYTES, huge == HS_HUGE_PAGES_OFF ? MADV_NOHUGEPAGE : MADV_HUGEPAGE);
#else
  (void)huge;
#endif
  return p;
}

void direct_map_prepare(direct_map *m, hs_relid rel, hs_fork fork) {
  uint64_t key = direct_key(rel, fork);
  uint32_t i = direct_slot(key);
  /* Already there (the common case): no lock. */
  for (uint32_t probe = 0; probe < DIRECT_SLOTS; probe++) {
    uint64_t k = atomic_load_explicit(&m->slots[i].key, memory_order_acquire);
    if (k == key) return;
    if (k == 0) break;
    i = (i + 1) & (DIRECT_SLOTS - 1);
  }
  pthread_mutex_lock(&m->lock);
  i = direct_slot(key);
  for (;;) {
    uint64_t k = atomic_load_explicit(&m->slots[i].key, memory_order_relaxed);
    if (k == key) break; /* made meanwhile */
    if (k == 0) {
      if (m->forks >= DIRECT_MAX_FORKS) {
        /* No room: this fork stays with the page table (counted once per
         * prepare, which runs on misses only). */
        atomic_fetch_add_explicit(&m->refused, 1, memory_order_relaxed);
        break;
      }
      _Atomic uint32_t *e = reserve(m->huge);
      if (e)
        atomic_fetch_add_explicit(&m->reserved_bytes, RESERVATION_BYTES, memory_order_relaxed);
      else
        atomic_fetch_add_explicit(&m->refused, 1, memory_order_relaxed);
      /* The slot is taken even when the reservation failed, so that the
       * system is not asked again on every miss of this fork. */
      atomic_store_explicit(&m->slots[i].entries, e, memory_order_relaxed);
      atomic_store_explicit(&m->slots[i].key, key, memory_order_release);
      m->forks++;
      break;
    }
    i = (i + 1) & (DIRECT_SLOTS - 1);
  }
  pthread_mutex_unlock(&m->lock);
}

static direct_fork *fork_of(direct_map *m, hs_relid rel, hs_fork fork) {
  uint64_t key = direct_key(rel, fork);
  uint32_t i = direct_slot(key);
  for (uint32_t probe = 0; probe < DIRECT_SLOTS; probe++) {
    uint64_t k = atomic_load_explicit(&m->slots[i].key, memory_order_acquire);
    if (k == key) return &m->slots[i];
    if (k == 0) return NULL;
    i = (i + 1) & (DIRECT_SLOTS - 1);
  }
  return NULL;
}

void direct_map_set(direct_map *m, hs_relid rel, hs_fork fork, hs_blockno block, int32_t b) {
  if (block >= DIRECT_MAX_BLOCKS) return;
  direct_fork *f = fork_of(m, rel, fork);
  _Atomic uint32_t *e = f ? atomic_load_explicit(&f->entries, memory_order_relaxed) : NULL;
  if (!e) return;
  /* Release: a reader that sees b here also sees b's tag (the header
   * unlock publishes it again, but the reader may look before that). */
  atomic_store_explicit(&e[block], (uint32_t)b + 1, memory_order_release);
  uint32_t high = atomic_load_explicit(&f->high, memory_order_relaxed);
  while (block + 1 > high &&
         !atomic_compare_exchange_weak_explicit(&f->high, &high, block + 1, memory_order_relaxed,
                                                memory_order_relaxed)) {
  }
}

void direct_map_clear(direct_map *m, hs_relid rel, hs_fork fork, hs_blockno block, int32_t b) {
  _Atomic uint32_t *e = direct_entry(m, rel, fork, block);
  if (e && atomic_load_explicit(e, memory_order_relaxed) == (uint32_t)b + 1)
    atomic_store_explicit(e, 0, memory_order_relaxed);
}

uint64_t direct_map_span_bytes(const direct_map *m) {
  uint64_t bytes = 0;
  for (uint32_t i = 0; i < DIRECT_SLOTS; i++)
    bytes +=
        (uint64_t)atomic_load_explicit(&m->slots[i].high, memory_order_relaxed) * sizeof(uint32_t);
  return bytes;
}
