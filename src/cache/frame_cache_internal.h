/*
 * cache/frame_cache_internal.h — the frame cache's insides, shared by its
 * three files: frame_cache.c (frames, the key table, slots, fetch and
 * unpin), scan_detect.c (the scan detector) and frame_cache_resize.c
 * (capacity changes). Private to src/cache/; a test may call
 * frame_cache_check.
 */
#ifndef HOTSET_CACHE_FRAME_CACHE_INTERNAL_H
#define HOTSET_CACHE_FRAME_CACHE_INTERNAL_H

#include "core/hash.h"
#include "hotset/frame_cache.h"
#include "hotset/policy.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ALIGN            64u
#define RING_MAX         32u
#define DEFAULT_POLICY   "clock-sweep"
#define MAX_RESTORE_HITS 5u

enum {
  F_INUSE = 1u << 0,    /* holds a key's page */
  F_PINNED = 1u << 1,   /* handed out, not yet unpinned */
  F_OVERFLOW = 1u << 2, /* outside the policy and the slot array */
  F_SCAN = 1u << 3,     /* created by a scan, touched since only by scans */
  F_HASHED = 1u << 4,   /* findable by its key */
  /* Pinned, and out of the policy since a victim search passed over it:
   * back in at unpin, as a page just used. */
  F_PARKED = 1u << 5,
  /* Hit while unpinned: the policy hears of it at the unpin (with the scan
   * hint when F_HIT_SCAN), when the engine is done with the page. */
  F_HIT_DUE = 1u << 6,
  F_HIT_SCAN = 1u << 7
};

/* Pinned frames a victim search passed over, parked after it (at most
 * this many per search). */
#define PASSED_MAX 64u

typedef struct fc_frame {
  hs_frame pub; /* first: the engine's handle is a pointer to this */
  uint64_t key;
  uint32_t index; /* its slot, or its place in the overflow list */
  uint32_t seen;  /* the scan detector's tick when it was last fetched */
  uint8_t flags;
} fc_frame;
_Static_assert(offsetof(fc_frame, pub) == 0, "an engine's handle is the frame's address");

/* The scan detector's state (see scan_note). */
#define SCAN_HIST   16u
#define SCAN_HEADS  3u /* a run of new pages is known by its first three */
#define SCAN_RECENT 12u
typedef struct fc_scan {
  uint64_t last, prev, pos, alt, run_start;
  uint64_t heads[SCAN_HEADS]; /* the first pages of the run of new pages */
  uint32_t run, outl, outl_total, misses, novel, hits;
  /* What the history says of the current run and run of misses: a scan
   * known to be longer than the cache can hold (a scan from its first
   * page), or one known to fit (never a scan). */
  bool run_long, run_small, miss_long, miss_small;
  /* Whether the history has been asked yet (only runs that get that far
   * ask: most runs are a lookup's few pages). */
  bool run_known, heads_known;
  bool any, last_scan;
  int dir;             /* the run's direction: 1 up, -1 down, 0 not yet */
  uint32_t ghost_hits; /* misses on keys the ring recycled a while ago */
  struct {
    uint64_t start;
    uint32_t len;
  } hist[SCAN_HIST];
  uint32_t hist_next;
  uint32_t tick; /* distinct fetches so far (a frame's `seen` is one) */
} fc_scan;

typedef struct fc_entry {
  uint64_t key;
  fc_frame *f; /* NULL: empty */
} fc_entry;

struct hs_frame_cache {
  pthread_mutex_t mu;
  uint32_t frame_bytes, extra_bytes, capacity, scan_run;
  uint64_t boundary_key;
  bool has_boundary_key;
  size_t header_off, extra_off, block_bytes; /* the page is at 0 */
  bool purgeable, needs_time;
  char *spec;
  hs_policy *policy; /* NULL when not purgeable */

  fc_frame **slots;    /* nslots */
  uint32_t *free_list; /* slots not in use, a stack */
  uint32_t nslots, nfree;

  fc_frame **overflow;
  uint32_t noverflow, overflow_cap;

  fc_entry *table; /* open addressing, linear probing */
  uint32_t table_mask, table_used;
  unsigned table_shift; /* 64 - log2 of the table's size */

  uint32_t count, pinned;

  bool caller_serializes; /* no mutex: the engine never calls concurrently */
  bool recycle_early;     /* recycle once count + 1 reaches capacity */
  uint32_t passed[PASSED_MAX], npassed;

  fc_scan scan;
  /* The keys the ring recycled, each with the cache's count of misses when
   * it went (a table indexed by the key's hash; a later key may overwrite
   * an earlier one): a scan that misses on them is coming round again. */
  struct fc_ghost {
    uint64_t key, at;
  } * ghost;
  uint32_t ghost_mask;
  uint32_t ring[RING_MAX];
  uint32_t ring_size, ring_len, ring_pos;

  /* Frame memory (the engine's allocator, or the C library's) and the
   * engine's word on memory pressure. */
  void *(*alloc_block)(size_t bytes, void *ctx);
  void (*free_block)(void *block, void *ctx);
  bool (*under_pressure)(void *ctx);
  void *memory_ctx;
  size_t align; /* of the parts of a frame's block */

  hs_frame_cache_stats stats;
};

/* Every call holds the cache's mutex, unless the engine promised never to
 * call one cache from two threads at once (caller_serializes): SQLite
 * calls a page cache only under the lock of the connection or shared cache
 * that owns it, and its own cache takes no lock of its own either. */
static inline void cache_lock(hs_frame_cache *c) {
  if (!c->caller_serializes) pthread_mutex_lock(&c->mu);
}

static inline void cache_unlock(hs_frame_cache *c) {
  if (!c->caller_serializes) pthread_mutex_unlock(&c->mu);
}

/* The counts hs_frame_cache_stats_get reports. Only the caller holding the
 * cache changes them, but with caller_serializes a statistics reader on
 * another thread holds nothing: each change is a relaxed atomic store (a
 * plain add and store, no locked instruction: there is one writer) and the
 * reader loads each atomically, so it sees every count whole, if not all
 * from the same instant. */
#define LOAD(x)     __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define STORE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
#define INC(x)      STORE(x, (x) + 1)
#define DEC(x)      STORE(x, (x)-1)

static inline uint32_t ghost_home(const hs_frame_cache *c, uint64_t key) {
  return (uint32_t)hs_mix64(key ^ 0x5ca9u) & c->ghost_mask;
}

/* Whether the ring recycled `key` within the last three quarters of the
 * cache's worth of misses: a scan that comes back to it that soon would
 * have found it cached had it been kept. */
static inline bool ghost_recent(const hs_frame_cache *c, uint64_t key) {
  if (!c->ghost) return false;
  const struct fc_ghost *g = &c->ghost[ghost_home(c, key)];
  return g->at && g->key == key && (c->stats.misses + 1 - g->at) * 4 <= (uint64_t)c->capacity * 3;
}

/* frame_cache.c, for frame_cache_resize.c. */
void fc_frame_free(hs_frame_cache *c, fc_frame *f);
void fc_ring_reset(hs_frame_cache *c);
void fc_table_remove(hs_frame_cache *c, fc_frame *f);
hs_status fc_policy_make(const hs_frame_cache *c, uint32_t capacity, hs_policy **out);
bool fc_overflow_reserve(hs_frame_cache *c, uint32_t n);
void fc_overflow_add(hs_frame_cache *c, fc_frame *f);
hs_access fc_make_access(const hs_frame_cache *c, uint64_t key, bool scan);
void fc_frame_drop(hs_frame_cache *c, fc_frame *f);

/* scan_detect.c: true when this fetch of `key` (f: its frame on a hit,
 * NULL on a miss) is inside a scan. Called with the cache's mutex held. */
bool fc_scan_note(hs_frame_cache *c, uint64_t key, fc_frame *f);

/* HS_OK when the slots, the key table, the overflow list, the pin and frame
 * counts and the policy agree; HS_ERR_CORRUPT with the first disagreement
 * in hs_last_error() otherwise. Takes the cache's mutex. */
hs_status frame_cache_check(hs_frame_cache *c);

#endif
