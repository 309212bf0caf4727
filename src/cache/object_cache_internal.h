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

/* An entry's state word: its references, the hits lock-free lookups
 * owe the policy, and four bits. Lock-free lookups and releases change
 * it without the shard's lock (rules 5 and 11 of object_cache.c's essay). */
#define OS_REFS     0x00ffffffu
#define OS_HIT1     (1u << 24)  /* one hit owed to the policy */
#define OS_HITS     (15u << 24) /* hits owed, saturating at 15 */
#define OS_LIVE     (1u << 28)  /* an entry not yet freed: not a free block (rule 12) */
#define OS_SCAN     (1u << 29)  /* mirrors OE_SCAN: lookups take the lock */
#define OS_SLOW     (1u << 30)  /* lookups and the last release take the lock */
#define OS_IN_TABLE (1u << 31)  /* in the key table (not erased, evicted, replaced) */

/* An entry's flags, read and changed under its shard's lock only. */
enum {
  OE_POLICY = 1u << 0, /* resident in the shard's policy */
  OE_OUT = 1u << 1,    /* in the table but outside the policy (no room) */
  OE_LOOSE = 1u << 2,  /* outside the policy and unreferenced: first to go */
  OE_SCAN = 1u << 3    /* brought in by a scan, touched since only by scans */
};

/* Keys up to this long live in the entry's first line (RocksDB's block
 * cache keys are 16 bytes). */
#define OC_INLINE_KEY 24u

/* A key's home window: this many consecutive blocks of its shard's home
 * array, from the one its hash names (rule 12 of object_cache.c). */
#define OC_WINDOW 4u

/* The entry: a block of two cache lines, either in its shard's home array
 * (rule 12: found with one cache miss) or from the cache's store of
 * chunks; neither is given back to malloc before the cache is destroyed
 * (rule 11: a lock-free lookup may touch a block's state word after the
 * entry left). The handle is its address. What a lookup, a victim search
 * and an eviction read — the state word, the key, the value, the charge,
 * the slot and the flags — is in the first line. */
struct hs_object {
  _Atomic uint32_t state; /* references | hits owed | OS_LIVE | OS_SCAN | OS_SLOW | OS_IN_TABLE */
  uint32_t key_len;
  /* Of the key, computed once at insert. A home block's is read by
   * lock-free probes before they hold a reference: written and read there
   * with __atomic builtins (rule 12). */
  uint64_t hash;
  void *value;
  size_t charge;
  uint32_t slot; /* its place in the shard's slot array while in the table */
  uint8_t flags;
  union {
    unsigned char in[OC_INLINE_KEY]; /* key_len <= OC_INLINE_KEY */
    unsigned char *out;              /* longer keys: malloc'd, freed with the entry */
  } key;
  /* the second line */
  void *tag;
  struct hs_object *next; /* in a list of entries to free, or of free blocks */
} __attribute__((aligned(64)));

_Static_assert(__builtin_offsetof(struct hs_object, tag) == 64,
               "an entry's first line holds what lookups and evictions read");

static inline const unsigned char *oc_key(const hs_object *e) {
  return e->key_len <= OC_INLINE_KEY ? e->key.in : e->key.out;
}

/* A home window's count of its entries in the overflow, in an array beside
 * the home arrays (one per home block, counted at the window that starts
 * there). Written under the shard's lock, read by lock-free probes, both
 * with __atomic builtins (rule 12). The blocks' tags are an array of their
 * own (oc_shard.tags), one byte a block: every hit reads a window's four,
 * and an array a quarter the size of the 4-byte tag-and-count pairs they
 * once were stays in the CPU's nearer caches. */
typedef struct oc_meta {
  /* How many entries of the window starting at this block are in the
   * overflow, saturating (then never lowered) at UINT16_MAX: 0 and the
   * window's probe is the whole lookup. */
  uint16_t spill;
} oc_meta;

/* A home block's tag byte: its low 7 bits are the tag of its entry's hash
 * (oc_tag; 0: no entry), and its high bit, OC_SPILLS, says the window that
 * starts at this block has keys in the overflow (its oc_meta's spill is
 * not 0). A probe reads the window's tags anyway: one line tells it both
 * which blocks to read and whether the overflow may hold the key. */
#define OC_TAG_BITS 0x7fu
#define OC_SPILLS   0x80u

/* A hash's tag: bits neither the shard nor the window use; never 0. */
static inline uint8_t oc_tag(uint64_t hash) {
  uint8_t t = (uint8_t)(hash >> 57);
  return (uint8_t)(t + (t == 0));
}

/* Blocks come in chunks, freed at destroy. */
typedef struct oc_chunk {
  struct oc_chunk *next;
  hs_object blocks[];
} oc_chunk;

/* A bucket: written under the shard's lock, read by lock-free lookups
 * too (both words atomic; a torn pair is caught by the lookup's check of
 * the entry's own hash and key). */
typedef struct oc_bucket {
  _Atomic uint64_t hash;
  _Atomic(hs_object *) e; /* NULL: empty */
} oc_bucket;

/* A key table: its mask travels with it, so a lock-free lookup reads one
 * pointer. A table replaced by a bigger one is kept (`retired`) until the
 * cache is destroyed: a lookup may still be probing it. */
typedef struct oc_table {
  uint32_t mask;
  struct oc_table *retired;
  oc_bucket b[];
} oc_table;

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
  const struct hs_object_cache *cache;
  /* The home array (rule 12): nhome + OC_WINDOW - 1 blocks, fixed at
   * creation, mapped at home_map (home_bytes) until destroy. */
  hs_object *home;
  oc_meta *meta; /* the home blocks' overflow counts, meta[i] for home[i] */
  /* tags[i]: oc_tag() of the hash of home[i]'s entry while it is in the
   * table, 0 otherwise, and OC_SPILLS while meta[i].spill is not 0; a
   * hint: a probe reads only blocks whose tag matches, and the overflow
   * only when the window spills (rule 12). Written under the lock, read
   * anywhere, with __atomic builtins. */
  uint8_t *tags;
  uint32_t nhome;
  void *home_map;
  size_t home_bytes;
  /* The overflow: entries outside their home window, by hash (open
   * addressing, linear probing, load <= 1/2); `ocount` of them, read by
   * lock-free lookups (LOAD) to skip it when empty. */
  _Atomic(oc_table *) table;
  uint32_t ocount;
  uint32_t count;    /* entries in the table: home and overflow */
  hs_object **slots; /* nslots; NULL where free */
  uint32_t *free_slots, nslots, nfree;
  uint32_t nloose;               /* entries with OE_LOOSE */
  uint32_t told;                 /* entries a victim search stepped over to tell their hits */
  uint32_t nout;                 /* left the table, still referenced, not freed */
  bool over;                     /* usage > capacity, as counted in *shards_over */
  _Atomic uint32_t *shards_over; /* the cache's count (rule 8) */
  _Atomic bool *ghosts_written;  /* the cache's flag (rule 11) */
  hs_policy *policy;
  uint64_t capacity, usage; /* written under mu; read anywhere (LOAD) */
  oc_ghost *ghost;
  uint32_t ghost_mask;
  /* Written under mu, read anywhere (LOAD): a lock-free miss needs no
   * ghost when the newest one's `at` is already too old (rule 11). */
  uint64_t scan_bytes;      /* charges of the scan inserts so far */
  uint64_t ghost_newest_at; /* `at` of the last ghost written; 0: none yet */
  oc_ring_item ring[OC_RING_MAX];
  uint32_t ring_size, ring_head, ring_len;
  uint64_t lookups, hits, misses, inserts, refusals, evictions, erasures, kept;
} __attribute__((aligned(64))) oc_shard;

/* The scan detector's per-thread state for one cache (object_scan.c). */
struct oc_thread;

/* Counters bumped without a lock, one line per stripe; a thread keeps to
 * its stripe (object_cache.c, thread_stripe), so two threads rarely
 * share a line. Sums over the stripes are the totals (the pinned sum
 * wraps: one thread's stripe may add what another's subtracts). */
#define OC_STRIPES 16u
typedef struct oc_stripe {
  _Atomic uint64_t hits;   /* lock-free hits (each a lookup too) */
  _Atomic uint64_t misses; /* lock-free misses (each a lookup too) */
  _Atomic uint64_t pinned; /* charges taken from 0 references to 1, minus back (wrapping) */
} __attribute__((aligned(64))) oc_stripe;

struct hs_object_cache {
  /* What every lookup reads, written only at creation: one line that no
   * write to a shard or a counter shares. */
  oc_shard *shards;
  hs_object *home;          /* shard i's home array is home + i * home_per (rule 12) */
  oc_meta *meta;            /* meta[k] describes home[k] */
  uint8_t *tags;            /* tags[k]: home[k]'s tag */
  uint32_t home_per, nhome; /* blocks per shard; windows per shard */
  uint32_t nshards, shard_mask;
  uint64_t id;      /* never reused: the scan detector's thread state is keyed by it */
  bool lockfree;    /* lookups may hit without the lock (rule 11) */
  bool detect;      /* locate and scan_run given */
  bool keep_cached; /* an insert of a cached key keeps the cached entry */
  /* Some shard has written a ghost (rule 10): until then a lock-free miss
   * reads no shard's line to learn that none may be recent (rule 11).
   * Written once. */
  _Atomic bool ghosts_written;
  /* Shards whose usage is over their capacity: a release's last reference
   * reads a shard's usage only while some is (rule 8); written only when a
   * shard crosses its capacity, which an evicting cache rarely does. */
  _Atomic uint32_t shards_over;
  oc_stripe stripes[OC_STRIPES];
  bool needs_time;
  _Atomic(oc_chunk *) chunks;    /* every entry block's, freed at destroy */
  _Atomic uint64_t block_bytes;  /* their size */
  _Atomic(hs_object *) returned; /* free blocks beyond the threads' own lists */
  void *home_map;                /* every shard's home array, one mapping (rule 12) */
  size_t home_bytes;
  char *spec;
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

_Static_assert(__builtin_offsetof(struct hs_object_cache, stripes) == 64,
               "what a lookup reads of the cache is one line");

/* Where the home window of a key of hash `hash` starts in a shard's array
 * of `nhome` windows: the low 32 bits scaled to nhome (the high half picks
 * the shard). */
static inline uint32_t oc_window_index(uint64_t hash, uint32_t nhome) {
  return (uint32_t)(((uint64_t)(uint32_t)hash * nhome) >> 32);
}
static inline uint32_t oc_window_at(const oc_shard *s, uint64_t hash) {
  return oc_window_index(hash, s->nhome);
}
static inline hs_object *oc_window(const oc_shard *s, uint64_t hash) {
  return s->home + oc_window_at(s, hash);
}
static inline oc_meta *oc_window_meta(const oc_shard *s, uint64_t hash) {
  return s->meta + oc_window_at(s, hash);
}

/* The same index into c->home, c->meta and c->tags from the cache's first line
 * alone: a lock-free hit touches no shard. */
static inline size_t oc_cache_window(const struct hs_object_cache *c, uint64_t hash) {
  uint32_t shard = (uint32_t)(hash >> 32) & c->shard_mask;
  return (size_t)shard * c->home_per + oc_window_index(hash, c->nhome);
}

/* Whether `e` is a block of the shard's home array (rule 12). */
static inline bool oc_is_home(const oc_shard *s, const hs_object *e) {
  uintptr_t p = (uintptr_t)e, lo = (uintptr_t)s->home;
  return p >= lo && p < lo + sizeof(hs_object) * (s->nhome + OC_WINDOW - 1);
}

/* The key's hash, as the cache computes it (for the tests). */
uint64_t oc_hash(const void *key, size_t len);

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
/* Whether the thread's next hit would be inside a scan (oc_scan_hit
 * without counting it). */
bool oc_scan_hitting(const struct oc_thread *t);
/* A lookup missed `key` (ghost: the shard remembers a scan entry of this
 * key evicted lately): true when the miss is inside a scan. */
bool oc_scan_miss(hs_object_cache *c, struct oc_thread *t, const void *key, size_t key_len,
                  uint64_t hash, bool ghost);
/* An insert of `key`: the miss it follows, if the thread's last miss was
 * this key, or a miss of its own. True when inside a scan. */
bool oc_scan_insert(hs_object_cache *c, struct oc_thread *t, const void *key, size_t key_len,
                    uint64_t hash);

#endif
