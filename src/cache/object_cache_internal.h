/*
 * cache/object_cache_internal.h — the object cache's insides, shared by its
 * two files: object_cache.c (entries, shards, the key table, references,
 * insert/lookup/release/erase, capacity) and object_scan.c (the per-thread
 * scan detector). Private to src/cache/. object_cache.c's essay states the
 * rules; docs/object-cache.md is the contract.
 */
#ifndef HOTSET_CACHE_OBJECT_CACHE_INTERNAL_H
#define HOTSET_CACHE_OBJECT_CACHE_INTERNAL_H

#include "hotset/object_cache.h"
#include "hotset/policy.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* An entry's state word, the one field a release changes without the
 * shard's lock: its references and two bits saying whether the last
 * release may be lock-free (rule 5 of object_cache.c's essay). */
#define OS_REFS     0x0fffffffu
#define OS_SLOW     (1u << 30) /* the last release must take the lock */
#define OS_IN_TABLE (1u << 31) /* in the key table (not erased, evicted, replaced) */

/* An entry's flags, read and changed under its shard's lock only. */
enum {
  OE_POLICY = 1u << 0, /* resident in the shard's policy */
  OE_OUT = 1u << 1,    /* in the table but outside the policy (no room) */
  OE_LOOSE = 1u << 2,  /* outside the policy and unreferenced: first to go */
  OE_SCAN = 1u << 3    /* brought in by a scan, touched since only by scans */
};

/* The entry: one allocation, the key inline. The handle is its address. */
struct hs_object {
  _Atomic uint32_t state; /* references | OS_SLOW | OS_IN_TABLE */
  uint32_t slot;          /* its place in the shard's slot array while in the table */
  uint64_t hash;          /* of the key, computed once at insert */
  void *value, *tag;
  size_t charge;
  struct hs_object *next; /* in a list of entries to free after the unlock */
  uint32_t key_len;
  uint8_t flags;
  unsigned char key[];
};

typedef struct oc_bucket {
  uint64_t hash;
  hs_object *e; /* NULL: empty */
} oc_bucket;

/* The scan detector's memory of keys whose scan entries were evicted, each
 * with the shard's scan_bytes when it went (object_scan.c, "fits"). */
typedef struct oc_ghost {
  uint64_t hash, at;
} oc_ghost;

/* The slots of a shard's last scan entries, oldest first, which a scan's
 * insert evicts before it asks the policy (object_cache.c, rule 10). A
 * slot counts only while it still holds the scan entry of that hash. */
#define OC_RING_MAX 32u
typedef struct oc_ring_item {
  uint64_t hash;
  uint32_t slot;
} oc_ring_item;

typedef struct oc_shard {
  pthread_mutex_t mu;
  oc_bucket *table; /* open addressing, linear probing, load <= 3/4 */
  uint32_t table_mask, count;
  hs_object **slots; /* nslots; NULL where free */
  uint32_t *free_slots, nslots, nfree;
  uint32_t nloose; /* entries with OE_LOOSE */
  uint32_t nout;   /* left the table, still referenced, not freed */
  hs_policy *policy;
  uint64_t capacity, usage; /* written under mu; read anywhere (LOAD) */
  _Atomic uint64_t pinned;  /* charges of referenced entries */
  oc_ghost *ghost;
  uint32_t ghost_mask;
  uint64_t scan_bytes; /* charges of the scan inserts so far */
  oc_ring_item ring[OC_RING_MAX];
  uint32_t ring_size, ring_head, ring_len;
  uint64_t lookups, hits, misses, inserts, refusals, evictions, erasures;
} __attribute__((aligned(64))) oc_shard;

/* The scan detector's per-thread state for one cache (object_scan.c). */
struct oc_thread;

struct hs_object_cache {
  oc_shard *shards;
  uint32_t nshards, shard_mask;
  uint64_t id; /* never reused: the scan detector's thread state is keyed by it */
  char *spec;
  bool needs_time;
  bool detect; /* locate and scan_run given */
  _Atomic bool strict;
  _Atomic uint64_t capacity;
  uint32_t expected_charge, scan_run;
  uint64_t scan_gap, scan_mask; /* near: |p1-p2| <= gap or (p1 ^ p2) <= mask */
  hs_object_locate_fn locate;
  hs_object_free_fn free_object;
  void *ctx;
  _Atomic uint64_t next_id;
  _Atomic uint64_t scans, scan_accesses;
  pthread_mutex_t resize_mu; /* one set_capacity at a time */
};

/* Counts written under a shard's lock and read by statistics without it:
 * a relaxed store (one writer at a time) and a relaxed load. */
#define LOAD(x)     __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define STORE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
#define INC(x)      STORE(x, (x) + 1)

/* object_scan.c. oc_scan_thread: the calling thread's detector state for
 * `c` (fresh if it last watched another cache), no lock taken. */
struct oc_thread *oc_scan_thread(const hs_object_cache *c);
/* A lookup hit: whether it is inside a scan (the thread's last miss was,
 * and few hits have come since). Its hit then reaches the policy with
 * HS_HINT_RING and does not make a scan's entry ordinary. */
bool oc_scan_hit(struct oc_thread *t);
/* A lookup missed `key` (ghost: the shard remembers a scan entry of this
 * key evicted lately): true when the miss is inside a scan. */
bool oc_scan_miss(hs_object_cache *c, struct oc_thread *t, const void *key, size_t key_len,
                  uint64_t hash, bool ghost);
/* An insert of `key`: the miss it follows, if the thread's last miss was
 * this key, or a miss of its own. True when inside a scan. */
bool oc_scan_insert(hs_object_cache *c, struct oc_thread *t, const void *key, size_t key_len,
                    uint64_t hash);

#endif
