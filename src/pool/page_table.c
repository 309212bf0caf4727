/*
 * pool/page_table.c — the tag -> buffer map (design in page_table.h).
 *
 * Buckets: the next power of two at or above the number of buffers, so
 * chains average at most one entry. Partitions: a power of two, at most the
 * number of buckets; PostgreSQL settled on 128 partitions for its mapping
 * locks, and so do we by default.
 */
#include "pool/page_table.h"

#include "core/big_alloc.h"
#include "core/error.h"

#include <stdlib.h>

/* The least power of two >= x, for x <= 2^31 (the pool checks its options;
 * beyond that the doubling would overflow to 0 and never end). */
static uint32_t next_pow2(uint32_t x) {
  uint32_t p = 1;
  while (p < x && p < (1u << 31)) p <<= 1;
  return p;
}

hs_status page_table_init(hs_page_table *pt, hs_bufdesc_padded *descs, uint32_t nbuffers,
                          uint32_t partitions, hs_huge_pages huge, hs_huge_pages_used *used,
                          bool direct) {
  uint32_t nbuckets = next_pow2(nbuffers < 16 ? 16 : nbuffers);
  uint32_t nparts = next_pow2(partitions ? partitions : 128);
  if (nparts > nbuckets) nparts = nbuckets;
  pt->descs = descs;
  pt->bucket_mask = nbuckets - 1;
  pt->part_mask = nparts - 1;
  pt->heads = big_alloc(sizeof *pt->heads * nbuckets, huge, used);
  pt->parts = aligned_alloc(64, sizeof *pt->parts * nparts);
  pt->direct = direct ? malloc(sizeof *pt->direct) : NULL;
  if (!pt->heads || !pt->parts || (direct && !pt->direct)) {
    big_free(pt->heads, sizeof *pt->heads * nbuckets);
    free(pt->parts);
    free(pt->direct);
    pt->heads = NULL;
    pt->parts = NULL;
    pt->direct = NULL;
    return hs_fail(HS_ERR_NOMEM, 0, "could not allocate a page table of %u buckets", nbuckets);
  }
  if (pt->direct) direct_map_init(pt->direct, huge);
  for (uint32_t i = 0; i < nbuckets; i++) atomic_init(&pt->heads[i], -1);
  for (uint32_t i = 0; i < nparts; i++) pthread_mutex_init(&pt->parts[i].lock, NULL);
  return HS_OK;
}

void page_table_destroy(hs_page_table *pt) {
  for (uint32_t i = 0; i <= pt->part_mask; i++) pthread_mutex_destroy(&pt->parts[i].lock);
  big_free(pt->heads, sizeof *pt->heads * ((size_t)pt->bucket_mask + 1));
  free(pt->parts);
  if (pt->direct) {
    direct_map_destroy(pt->direct);
    free(pt->direct);
  }
  pt->heads = NULL;
  pt->parts = NULL;
  pt->direct = NULL;
}

void page_table_lock(hs_page_table *pt, uint32_t part) {
  pthread_mutex_lock(&pt->parts[part].lock);
}

void page_table_unlock(hs_page_table *pt, uint32_t part) {
  pthread_mutex_unlock(&pt->parts[part].lock);
}

void page_table_lock2(hs_page_table *pt, uint32_t a, uint32_t b) {
  if (a == b) {
    page_table_lock(pt, a);
  } else if (a < b) {
    page_table_lock(pt, a);
    page_table_lock(pt, b);
  } else {
    page_table_lock(pt, b);
    page_table_lock(pt, a);
  }
}

void page_table_unlock2(hs_page_table *pt, uint32_t a, uint32_t b) {
  page_table_unlock(pt, a);
  if (a != b) page_table_unlock(pt, b);
}

int32_t page_table_lookup(const hs_page_table *pt, const hs_buftag *tag, uint64_t hash) {
  int32_t b = atomic_load_explicit(&pt->heads[hash & pt->bucket_mask], memory_order_relaxed);
  while (b >= 0) {
    const hs_bufdesc *d = &pt->descs[b].d;
    if (buf_tag_is(d, tag)) return b;
    b = atomic_load_explicit(&d->hash_next, memory_order_relaxed);
  }
  return -1;
}

void page_table_insert(hs_page_table *pt, int32_t buf, uint64_t hash) {
  _Atomic int32_t *head = &pt->heads[hash & pt->bucket_mask];
  hs_bufdesc *d = &pt->descs[buf].d;
  atomic_store_explicit(&d->hash_next, atomic_load_explicit(head, memory_order_relaxed),
                        memory_order_relaxed);
  /* Release: a lock-free reader that sees the new head sees the tag too. */
  atomic_store_explicit(head, buf, memory_order_release);
  if (pt->direct) {
    hs_buftag t = buf_tag_get(d);
    direct_map_set(pt->direct, t.rel, t.fork, t.block, buf);
  }
}

bool page_table_delete(hs_page_table *pt, int32_t buf, uint64_t hash) {
  if (pt->direct) {
    hs_buftag t = buf_tag_get(&pt->descs[buf].d);
    direct_map_clear(pt->direct, t.rel, t.fork, t.block, buf);
  }
  _Atomic int32_t *link = &pt->heads[hash & pt->bucket_mask];
  for (;;) {
    int32_t b = atomic_load_explicit(link, memory_order_relaxed);
    if (b < 0) return false;
    if (b == buf) {
      /* The removed buffer keeps its own link, so a reader standing on it
       * still reaches the rest of the chain. */
      int32_t next = atomic_load_explicit(&pt->descs[b].d.hash_next, memory_order_relaxed);
      atomic_store_explicit(link, next, memory_order_release);
      return true;
    }
    link = &pt->descs[b].d.hash_next;
  }
}
