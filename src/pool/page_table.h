/*
 * pool/page_table.h — the map from buffer tag to buffer.
 *
 * A chained hash table whose chain links live in the buffer descriptors
 * (each buffer is in at most one chain), so it allocates nothing after
 * creation: 4 bytes per bucket plus the partition locks.
 *
 * Writers (insert, delete) hold the partition lock of the bucket; buckets are
 * spread over partitions by their low bits. Readers may walk a chain with no
 * lock at all (page_table_lookup_fast): they can miss an entry that is being
 * moved, never return a wrong one that the caller trusts, because the caller
 * pins the buffer and re-checks its tag. A miss just sends the caller to the
 * locked lookup (page_table_lookup), which is exact.
 */
#ifndef HOTSET_POOL_PAGE_TABLE_H
#define HOTSET_POOL_PAGE_TABLE_H

#include "hotset/status.h"
#include "pool/buf_internal.h"
#include "pool/direct_map.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

typedef struct hs_pt_partition {
  alignas(64) pthread_mutex_t lock;
} hs_pt_partition;

typedef struct hs_page_table {
  _Atomic int32_t *heads; /* bucket -> first buffer, -1 empty */
  uint32_t bucket_mask;
  hs_pt_partition *parts;
  uint32_t part_mask;
  hs_bufdesc_padded *descs;
  /* The direct translation's index beside the table (direct_map.h), or
   * NULL: insert and delete keep it; the hit path reads it first. */
  direct_map *direct;
} hs_page_table;

/* The buckets go on huge pages as `huge` says (core/big_alloc.h); *used
 * (if given) says what they got. `direct`: keep a direct map beside the
 * table (hs_pool_options.translation). */
hs_status page_table_init(hs_page_table *pt, hs_bufdesc_padded *descs, uint32_t nbuffers,
                          uint32_t partitions, hs_huge_pages huge, hs_huge_pages_used *used,
                          bool direct);
void page_table_destroy(hs_page_table *pt);

static inline uint32_t page_table_partition(const hs_page_table *pt, uint64_t hash) {
  return (uint32_t)hash & pt->bucket_mask & pt->part_mask;
}

void page_table_lock(hs_page_table *pt, uint32_t part);
void page_table_unlock(hs_page_table *pt, uint32_t part);
/* Locks two partitions in a fixed order (once if they are the same). */
void page_table_lock2(hs_page_table *pt, uint32_t a, uint32_t b);
void page_table_unlock2(hs_page_table *pt, uint32_t a, uint32_t b);

/* Lock-free, may miss (see above). Returns the buffer or -1. */
static inline int32_t page_table_lookup_fast(const hs_page_table *pt, const hs_buftag *tag,
                                             uint64_t hash) {
  int32_t b = atomic_load_explicit(&pt->heads[hash & pt->bucket_mask], memory_order_acquire);
  for (unsigned hops = 0; b >= 0 && hops < 32; hops++) {
    const hs_bufdesc *d = &pt->descs[b].d;
    if (buf_tag_is(d, tag)) return b;
    b = atomic_load_explicit(&d->hash_next, memory_order_acquire);
  }
  return -1;
}

/* Before a tag is inserted, with no lock held: gives its fork a direct
 * reservation and faults its entry in, if the table keeps a direct map
 * (may take a system call). */
static inline void page_table_prepare(hs_page_table *pt, const hs_buftag *tag) {
  if (pt->direct) direct_map_prepare(pt->direct, tag->rel, tag->fork, tag->block);
}

/* Exact; the caller holds the tag's partition lock. */
int32_t page_table_lookup(const hs_page_table *pt, const hs_buftag *tag, uint64_t hash);
/* The caller holds the partition lock and buf's header lock, and has set
 * its tag. */
void page_table_insert(hs_page_table *pt, int32_t buf, uint64_t hash);
/* The caller holds the partition lock and buf's header lock (buf still
 * carries the tag); returns false if buf was not there. */
bool page_table_delete(hs_page_table *pt, int32_t buf, uint64_t hash);

#endif
