/*
 * pool/direct_map.h — page id to buffer by arithmetic: the pool's "direct"
 * translation (hs_pool_options.translation, docs/buffer-pool.md).
 *
 * vmcache (Leis, Alhomssi, Ziegler, Loeck and Dietrich, "Virtual-Memory
 * Assisted Buffer Management", SIGMOD 2023) finds a page's frame with no
 * hash table at all: a virtual-memory reservation as large as the data,
 * indexed by page id, that the operating system fills with memory only
 * where it is written. Here each relation fork gets such a reservation of
 * four bytes per block (MAP_NORESERVE: untouched parts cost nothing, and
 * read as zero), holding its cached blocks' buffer numbers plus one — zero
 * means "not here". A hit is then a directory probe (a few relation forks,
 * always in cache), one load at entries + block, and the pin.
 *
 * It is an index beside the page table, never instead of it: every page is
 * still in the hash table, which stays the exact answer under its partition
 * locks, and the miss, retag and drop paths are unchanged. So the direct
 * map may leave a page out — a fork beyond the directory's room, a block
 * beyond DIRECT_MAX_BLOCKS, a reservation the system refused (strict
 * overcommit), a page cached before its fork's reservation was made — and
 * the hit path then looks in the page table as before.
 *
 * The one rule that makes a lock-free hit safe: the entry of tag T says
 * buffer b only while b carries T, and it is written only while b's header
 * lock is held (page_table_insert and page_table_delete, which every retag
 * and drop calls with it held). A reader pins b, reads b's state (waiting
 * out LOCKED, so every change made to b before the pin is visible to it)
 * and reads the entry again: if it still says b and b's tag is valid, b
 * holds T until the reader unpins — nobody retags a pinned buffer. The
 * same handshake (pins.c) the hash path's tag check relies on.
 *
 * Limits: DIRECT_MAX_FORKS relation forks get a reservation (the rest use
 * the page table only); a fork's reservation is DIRECT_MAX_BLOCKS × 4
 * bytes of address space (1 GiB), so the directory reserves at most
 * 512 GiB of address space and uses memory only for the entries written,
 * 4 KiB per 1,024 blocks of a fork ever cached (huge pages only once a
 * fork has entries for 524,288 blocks, a huge page's worth, and the pool
 * asks for them). A dropped relation's entries are zero again but their
 * memory stays until the pool closes. A system that never overcommits
 * (vm.overcommit_memory 2) charges MAP_NORESERVE mappings in full, so
 * there the map makes no reservations at all and every hit uses the page
 * table: 512 GiB of commitments would starve every other allocation.
 */
#ifndef HOTSET_POOL_DIRECT_MAP_H
#define HOTSET_POOL_DIRECT_MAP_H

#include "hotset/pool.h"
#include "hotset/status.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define DIRECT_MAX_BLOCKS (1u << 28) /* blocks of a fork with an entry: 2 TiB of 8 KiB pages */
#define DIRECT_SLOTS      1024u      /* directory slots; at most half are used */
#define DIRECT_MAX_FORKS  (DIRECT_SLOTS / 2)

typedef struct direct_fork {
  _Atomic uint64_t key;                /* direct_key(rel, fork); 0: a free slot */
  _Atomic(_Atomic uint32_t *) entries; /* NULL: the system refused the reservation */
} direct_fork;

typedef struct direct_map {
  direct_fork slots[DIRECT_SLOTS]; /* open addressing, never deleted; read by every hit */
  /* Per slot, 1 + the highest block ever entered, apart from the slots: it
   * is written as a relation grows, and a hit must not lose its line. */
  _Atomic uint32_t high[DIRECT_SLOTS];
  /* Per slot: the reservation was advised onto huge pages (once its fork
   * reached a huge page's worth of entries). Set under lock. */
  _Atomic bool huge_advised[DIRECT_SLOTS];
  pthread_mutex_t lock; /* serializes making a fork's reservation */
  uint32_t forks;       /* slots used (under lock) */
  _Atomic bool full;    /* no slot left: misses of new forks skip the lock */
  bool never;           /* the system never overcommits: no reservations at all */
  hs_huge_pages huge;
  _Atomic uint64_t reserved_bytes; /* address space reserved */
  _Atomic uint32_t reserved_forks; /* forks with a reservation */
  _Atomic uint32_t refused_forks;  /* forks given a slot the system refused a reservation */
} direct_map;

static inline uint64_t direct_key(hs_relid rel, hs_fork fork) {
  return (((uint64_t)rel << 8) | (uint32_t)fork) + 1;
}

static inline uint32_t direct_slot(uint64_t key) {
  return (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 54) & (DIRECT_SLOTS - 1);
}

/* The slot holding key, or -1. Lock free: a fork's slot and reservation,
 * once published, never change while the map lives. */
static inline int32_t direct_find(const direct_map *m, uint64_t key) {
  uint32_t i = direct_slot(key);
  for (uint32_t probe = 0; probe < DIRECT_SLOTS; probe++) {
    uint64_t k = atomic_load_explicit(&m->slots[i].key, memory_order_acquire);
    if (k == key) return (int32_t)i;
    if (k == 0) return -1;
    i = (i + 1) & (DIRECT_SLOTS - 1);
  }
  return -1;
}

/* The entry of (rel, fork, block), or NULL where the map keeps none. */
static inline _Atomic uint32_t *direct_entry(const direct_map *m, hs_relid rel, hs_fork fork,
                                             hs_blockno block) {
  if (block >= DIRECT_MAX_BLOCKS) return NULL;
  int32_t i = direct_find(m, direct_key(rel, fork));
  _Atomic uint32_t *e =
      i < 0 ? NULL : atomic_load_explicit(&m->slots[i].entries, memory_order_relaxed);
  return e ? e + block : NULL;
}

/* Linux's vm.overcommit_memory is 2: MAP_NORESERVE is not honoured there
 * and every reservation is charged in full (anything unreadable counts as
 * not). */
bool direct_map_never_overcommits(void);
hs_status direct_map_init(direct_map *m, hs_huge_pages huge);
void direct_map_destroy(direct_map *m);
/* Makes (rel, fork)'s reservation if it has none and there is room, and
 * faults in the page holding `block`'s entry; never fails (a fork the map
 * cannot keep stays with the page table). Called before the page-table and
 * header locks: it may take a system call, and a page fault (a huge page's
 * allocation, milliseconds) must not happen under a spinlock. */
void direct_map_prepare(direct_map *m, hs_relid rel, hs_fork fork, hs_blockno block);
/* Sets the entry of buffer b's tag to b (the caller holds b's header lock
 * and has set the tag), where the map keeps one. */
void direct_map_set(direct_map *m, hs_relid rel, hs_fork fork, hs_blockno block, int32_t b);
/* Clears it, if it says b (the caller holds b's header lock; b still
 * carries the tag). */
void direct_map_clear(direct_map *m, hs_relid rel, hs_fork fork, hs_blockno block, int32_t b);
/* Bytes of entries a hit may read: four per block up to each fork's highest
 * block ever entered (what pool-bench reports as the hit's metadata). */
uint64_t direct_map_span_bytes(const direct_map *m);

#endif
