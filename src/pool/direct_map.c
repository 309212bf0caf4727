/*
 * pool/direct_map.c — making a fork's reservation, and writing its entries
 * (the design, and the rule that makes reading them lock free, are in
 * direct_map.h).
 */
#include "pool/direct_map.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define RESERVATION_BYTES ((size_t)DIRECT_MAX_BLOCKS * sizeof(uint32_t))
/* Entries a huge page holds: a fork with fewer stays on small pages. */
#define HUGE_PAGE_ENTRIES ((2u << 20) / (uint32_t)sizeof(uint32_t))

bool direct_map_never_overcommits(void) {
  /* A read(2), not stdio: the library keeps no streams (docs/api.md). */
  int fd = open("/proc/sys/vm/overcommit_memory", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char text[8] = "";
  ssize_t n = read(fd, text, sizeof text - 1);
  close(fd);
  return n > 0 && text[0] == '2';
}

hs_status direct_map_init(direct_map *m, hs_huge_pages huge) {
  memset(m, 0, sizeof *m);
  for (uint32_t i = 0; i < DIRECT_SLOTS; i++) {
    atomic_init(&m->slots[i].key, 0);
    atomic_init(&m->slots[i].entries, NULL);
    atomic_init(&m->high[i], 0);
    atomic_init(&m->huge_advised[i], false);
  }
  atomic_init(&m->full, false);
  atomic_init(&m->reserved_bytes, 0);
  atomic_init(&m->reserved_forks, 0);
  atomic_init(&m->refused_forks, 0);
  m->huge = huge;
  m->never = direct_map_never_overcommits();
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

/* A reservation of address space that takes memory only where written
 * (MAP_NORESERVE); on small pages until its fork grows (see prepare). */
static _Atomic uint32_t *reserve(void) {
  void *p = mmap(NULL, RESERVATION_BYTES, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return NULL;
#ifdef MADV_NOHUGEPAGE
  /* A system set to give huge pages to everything would spend 2 MiB on a
   * fork's first entry. */
  madvise(p, RESERVATION_BYTES, MADV_NOHUGEPAGE);
#endif
  return p;
}

/* Slot of key, or of the free slot where it would go (-1: neither); under
 * the lock, which every slot's writer holds. */
static int32_t slot_for(const direct_map *m, uint64_t key) {
  uint32_t i = direct_slot(key);
  for (uint32_t probe = 0; probe < DIRECT_SLOTS; probe++) {
    uint64_t k = atomic_load_explicit(&m->slots[i].key, memory_order_relaxed);
    if (k == key || k == 0) return (int32_t)i;
    i = (i + 1) & (DIRECT_SLOTS - 1);
  }
  return -1;
}

void direct_map_prepare(direct_map *m, hs_relid rel, hs_fork fork, hs_blockno block) {
  if (m->never) return;
  uint64_t key = direct_key(rel, fork);
  int32_t i = direct_find(m, key);
  if (i < 0) {
    /* A new fork. Once the directory is full, nothing more to do: the
     * flag spares every later miss of such forks the lock. */
    if (atomic_load_explicit(&m->full, memory_order_relaxed)) return;
    pthread_mutex_lock(&m->lock);
    i = slot_for(m, key);
    if (i >= 0 && atomic_load_explicit(&m->slots[i].key, memory_order_relaxed) != key) {
      if (m->forks >= DIRECT_MAX_FORKS) {
        atomic_store_explicit(&m->full, true, memory_order_relaxed);
        i = -1;
      } else {
        _Atomic uint32_t *e = reserve();
        if (e) {
          atomic_fetch_add_explicit(&m->reserved_bytes, RESERVATION_BYTES, memory_order_relaxed);
          atomic_fetch_add_explicit(&m->reserved_forks, 1, memory_order_relaxed);
        } else {
          atomic_fetch_add_explicit(&m->refused_forks, 1, memory_order_relaxed);
        }
        /* The slot is taken even when the reservation failed, so that the
         * system is not asked again on every miss of this fork. */
        atomic_store_explicit(&m->slots[i].entries, e, memory_order_relaxed);
        atomic_store_explicit(&m->slots[i].key, key, memory_order_release);
        m->forks++;
      }
    }
    pthread_mutex_unlock(&m->lock);
    if (i < 0) return;
  }
  _Atomic uint32_t *e = atomic_load_explicit(&m->slots[i].entries, memory_order_relaxed);
  if (!e || block >= DIRECT_MAX_BLOCKS) return;
  if (m->huge != HS_HUGE_PAGES_OFF && block >= HUGE_PAGE_ENTRIES &&
      !atomic_load_explicit(&m->huge_advised[i], memory_order_relaxed)) {
    /* A huge page's worth of entries: from now on the fork's entries are
     * read like the pool's big arrays, and get huge pages as they do. */
    pthread_mutex_lock(&m->lock);
#ifdef MADV_HUGEPAGE
    if (!atomic_load_explicit(&m->huge_advised[i], memory_order_relaxed))
      madvise((void *)e, RESERVATION_BYTES, MADV_HUGEPAGE);
#endif
    atomic_store_explicit(&m->huge_advised[i], true, memory_order_relaxed);
    pthread_mutex_unlock(&m->lock);
  }
  /* Fault the entry's page in now, with no lock held: an atomic add of
   * zero writes the page without changing what a concurrent set wrote. */
  atomic_fetch_add_explicit(&e[block], 0, memory_order_relaxed);
}

void direct_map_set(direct_map *m, hs_relid rel, hs_fork fork, hs_blockno block, int32_t b) {
  if (block >= DIRECT_MAX_BLOCKS) return;
  int32_t i = direct_find(m, direct_key(rel, fork));
  if (i < 0) return;
  _Atomic uint32_t *e = atomic_load_explicit(&m->slots[i].entries, memory_order_relaxed);
  if (!e) return;
  /* Release: a reader that sees b here also sees b's tag (the header
   * unlock publishes it again, but the reader may look before that). */
  atomic_store_explicit(&e[block], (uint32_t)b + 1, memory_order_release);
  uint32_t high = atomic_load_explicit(&m->high[i], memory_order_relaxed);
  while (block + 1 > high &&
         !atomic_compare_exchange_weak_explicit(&m->high[i], &high, block + 1, memory_order_relaxed,
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
    bytes += (uint64_t)atomic_load_explicit(&m->high[i], memory_order_relaxed) * sizeof(uint32_t);
  return bytes;
}
