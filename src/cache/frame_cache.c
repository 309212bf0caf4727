/*
 * cache/frame_cache.c — a cache of page frames for an engine that does its
 * own I/O (hotset/frame_cache.h): page memory, a key → frame table, pins,
 * replacement by a hotset policy, and a scan detector.
 *
 * Layout. The policy's slots are an array of frame pointers; a slot holds
 * a frame in use (a key, in the policy), a frame whose memory waits for
 * reuse (free, no key), or nothing yet (memory is allocated on first use).
 * A frame is one 64-byte aligned block: the page first (so it is aligned),
 * then this header (the public hs_frame first, so an adapter can hand out
 * &frame->pub as its own page handle), then the engine's extra bytes. The
 * header and the extra bytes sit side by side because a hit touches both
 * (the cache reads the header, the engine its extra bytes straight after):
 * one cache line, or two adjacent ones, instead of two a page apart. A
 * recycled slot keeps its block, so a full cache allocates nothing per
 * miss.
 *
 * Overflow frames live outside the policy, in a list of their own, and
 * are always pinned: created by HS_FETCH_CREATE_HARD when no unpinned frame
 * can be recycled, demoted from the policy by set_capacity when pinned
 * frames exceed the new capacity, or detached from their key while pinned
 * (truncate, or rekey onto a key whose frame is pinned). Each is freed when
 * it is unpinned, so the engine's pointer stays valid until then.
 *
 * Non-purgeable caches have no policy at all: nothing is ever a victim, so
 * there is nothing to decide. Their slot array grows by doubling whenever
 * every slot is in use, and capacity only records the engine's wish. (The
 * spec is still checked at create, so a bad one fails the same way.)
 *
 * Scans. The detector (scan_note) takes for a scan a run of keys moving
 * one way a few at a time — gaps, a step or two back and a key elsewhere
 * now and then allowed, as SQLite's B-trees give them — or a run of new
 * pages (hits or misses) that never comes back to a page it fetched lately
 * (a table whose pages are in no order), past scan_run of either (misses,
 * for the second). It remembers where recent
 * scans began and how long they were, and the keys its ring recycled: a
 * scan that fits in the cache and comes round again is cached as any
 * pages, one known to be long is a scan from its first pages.
 * docs/frame-cache.md, "Scans", has the rules and why each is there.
 * Inside a scan, hits and inserts reach the policy with
 * HS_HINT_RING and recycle_first: lru puts the scan's pages at its victim
 * end, arc/2q/lirs keep them at "used once". That alone does not protect a
 * clock: clock-sweep's hand lowers every count it passes, and a scan that
 * takes the victim search around the clock many times drains the hot
 * pages' counts however low the scan's own stand. So a scan also recycles
 * its own frames, as PostgreSQL's ring strategies do: the cache remembers
 * the last ring_size slots the scan created (an eighth of the capacity, at
 * most 32) and, once the cache is full, a scan's miss takes the oldest of
 * them back if it is unpinned and no access outside a scan has touched it
 * since (F_SCAN), before asking the policy for a victim.
 *
 * Hits. A fetch that pins a cached frame is an access; the policy hears of
 * it at the unpin (F_HIT_DUE), when the engine is done with the page, as
 * SQLite's own cache orders its LRU list. A fetch of a frame already pinned
 * is one more reference to a page in use and reaches neither the policy
 * nor the scan detector.
 *
 * Locking: one mutex per cache around every call. hs_frame_key reads the
 * key without it: only the frame's pinner asks, and only rekey (called by
 * that same pinner) changes it.
 */
#include "hotset/frame_cache.h"

#include "cache/frame_cache_internal.h"
#include "core/debug.h"
#include "core/error.h"
#include "core/hash.h"
#include "hotset/policy.h"

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

/* ---- frames -------------------------------------------------------------- */

static size_t round_up(size_t n, size_t align) {
  return (n + align - 1) / align * align;
}

static fc_frame *frame_alloc(hs_frame_cache *c) {
  char *block = c->alloc_block ? c->alloc_block(c->block_bytes, c->memory_ctx)
                               : aligned_alloc(ALIGN, c->block_bytes);
  if (!block) return NULL;
  fc_frame *f = (fc_frame *)(block + c->header_off);
  memset(f, 0, sizeof *f);
  f->pub.data = block;
  f->pub.extra = c->extra_bytes ? block + c->extra_off : NULL;
  return f;
}

static void frame_free(hs_frame_cache *c, fc_frame *f) {
  if (!f) return;
  void *block = f->pub.data;
  if (c->free_block)
    c->free_block(block, c->memory_ctx);
  else
    free(block);
}

/* Whether the engine says its memory is short now. */
static bool memory_short(hs_frame_cache *c) {
  return c->under_pressure && c->under_pressure(c->memory_ctx);
}

/* ---- the key table ------------------------------------------------------- */

/* Multiplicative (Fibonacci) hashing: one multiply, the top bits. It
 * spreads consecutive keys (page numbers) evenly over the table, and the
 * high half folded in first keeps keys that differ only in their high
 * bits (a file number above a page number) apart too. */
static inline uint32_t table_home(const hs_frame_cache *c, uint64_t key) {
  return (uint32_t)(((key ^ (key >> 32)) * 0x9e3779b97f4a7c15ull) >> c->table_shift);
}

static inline fc_frame *table_find(const hs_frame_cache *c, uint64_t key) {
  for (uint32_t i = table_home(c, key);; i = (i + 1) & c->table_mask) {
    const fc_entry *e = &c->table[i];
    if (!e->f) return NULL;
    if (e->key == key) return e->f;
  }
}

static void table_put(hs_frame_cache *c, fc_frame *f) {
  uint32_t i = table_home(c, f->key);
  while (c->table[i].f) i = (i + 1) & c->table_mask;
  c->table[i] = (fc_entry){.key = f->key, .f = f};
  c->table_used++;
  f->flags |= F_HASHED;
}

/* Backward-shift deletion: the entries after the hole that would not be
 * found past it move up, so no tombstones build up. */
static void table_remove(hs_frame_cache *c, fc_frame *f) {
  uint32_t i = table_home(c, f->key);
  while (c->table[i].f != f) i = (i + 1) & c->table_mask;
  for (uint32_t j = (i + 1) & c->table_mask;; j = (j + 1) & c->table_mask) {
    if (!c->table[j].f) break;
    uint32_t home = table_home(c, c->table[j].key);
    /* Entry j may fill hole i unless its home lies cyclically in (i, j]. */
    if (((j - home) & c->table_mask) >= ((j - i) & c->table_mask)) {
      c->table[i] = c->table[j];
      i = j;
    }
  }
  c->table[i] = (fc_entry){0};
  c->table_used--;
  f->flags &= ~F_HASHED;
}

static bool table_resize(hs_frame_cache *c, uint32_t size) {
  fc_entry *old = c->table;
  uint32_t old_size = c->table ? c->table_mask + 1 : 0;
  fc_entry *t = calloc(size, sizeof *t);
  if (!t) return false;
  c->table = t;
  c->table_mask = size - 1;
  c->table_shift = 64 - (unsigned)__builtin_ctz(size);
  c->table_used = 0;
  for (uint32_t i = 0; i < old_size; i++)
    if (old[i].f) table_put(c, old[i].f);
  free(old);
  return true;
}

/* Room for one more key at a load of at most 3/4. */
static bool table_reserve(hs_frame_cache *c) {
  uint64_t size = (uint64_t)c->table_mask + 1;
  if ((uint64_t)(c->table_used + 1) * 4 <= size * 3) return true;
  return size < (1ull << 31) && table_resize(c, (uint32_t)size * 2);
}

/* ---- slots, the overflow list, the policy --------------------------------- */

static uint64_t now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

static hs_access make_access(const hs_frame_cache *c, uint64_t key, bool scan) {
  return (hs_access){.key = key,
                     .size = 1,
                     .now = c->needs_time ? now_ms() : 0,
                     .next = HS_NEXT_UNKNOWN,
                     .kind = HS_ACCESS_READ,
                     .hint = scan ? HS_HINT_RING : HS_HINT_NORMAL,
                     .recycle_first = scan};
}

static hs_status policy_make(const hs_frame_cache *c, uint32_t capacity, hs_policy **out) {
  hs_policy_env env = {.unit_bytes = c->frame_bytes, .clock = HS_CLOCK_MILLISECONDS};
  hs_status st = hs_policy_create(c->spec, capacity, capacity, &env, out);
  if (st != HS_OK) return st;
  if (hs_policy_flags(*out) &
      (HS_POLICY_SIM_ONLY | HS_POLICY_NEEDS_FUTURE | HS_POLICY_NEEDS_HINDSIGHT)) {
    hs_policy_destroy(*out);
    *out = NULL;
    return hs_fail(HS_ERR_INVALID, 0,
                   "frame cache: replacement policy \"%s\" needs to know the future: it runs only "
                   "in the simulator",
                   c->spec);
  }
  return HS_OK;
}

/* Room for n more overflow frames, so adding them cannot fail. */
static bool overflow_reserve(hs_frame_cache *c, uint32_t n) {
  if (c->overflow_cap - c->noverflow >= n) return true;
  uint32_t cap = c->overflow_cap ? c->overflow_cap : 8;
  while (cap - c->noverflow < n) cap *= 2;
  fc_frame **o = realloc(c->overflow, sizeof *o * cap);
  if (!o) return false;
  c->overflow = o;
  c->overflow_cap = cap;
  return true;
}

static void overflow_add(hs_frame_cache *c, fc_frame *f) {
  f->index = c->noverflow;
  c->overflow[c->noverflow++] = f;
  f->flags |= F_OVERFLOW;
}

static void overflow_remove(hs_frame_cache *c, fc_frame *f) {
  fc_frame *last = c->overflow[--c->noverflow];
  c->overflow[f->index] = last;
  last->index = f->index;
}

/* Takes a frame out of its slot: the slot becomes free, its memory leaves
 * with the frame. */
static void slot_release(hs_frame_cache *c, fc_frame *f, bool keep_memory) {
  if (c->policy && !(f->flags & F_PARKED)) (void)hs_policy_remove(c->policy, f->index);
  if (!keep_memory) c->slots[f->index] = NULL;
  c->free_list[c->nfree++] = f->index;
}

/* The frame leaves the cache: its key, its slot or overflow place, its pin.
 * A slot's frame keeps its memory for the next frame there. */
static void frame_drop(hs_frame_cache *c, fc_frame *f) {
  if (f->flags & F_HASHED) table_remove(c, f);
  if (f->flags & F_PINNED) DEC(c->pinned);
  DEC(c->count);
  if (f->flags & F_OVERFLOW) {
    overflow_remove(c, f);
    frame_free(c, f);
    return;
  }
  slot_release(c, f, true);
  f->flags = 0;
}

/* A pinned frame that must leave its key (truncate, a rekey onto it): the
 * engine still holds it, so its memory stays until it is unpinned. Without
 * memory for the overflow list it stays in its slot, keyless, and goes at
 * unpin all the same. */
static void frame_detach(hs_frame_cache *c, fc_frame *f) {
  if (f->flags & F_HASHED) table_remove(c, f);
  if ((f->flags & F_OVERFLOW) || !overflow_reserve(c, 1)) return;
  slot_release(c, f, false);
  f->flags &= ~F_PARKED; /* an overflow frame is never in a policy */
  overflow_add(c, f);
}

/* The policy's skip callback: pinned frames, each remembered to be parked
 * once the search is over. */
static bool skip_pinned(void *ctx, uint32_t slot) {
  hs_frame_cache *c = ctx;
  if (!(c->slots[slot]->flags & F_PINNED)) return false;
  if (c->npassed < PASSED_MAX) c->passed[c->npassed++] = slot;
  return true;
}

/* An engine may keep frames pinned for long — SQLite keeps every page a
 * transaction dirtied pinned until it commits — and a policy keeps them in
 * its order, so every victim search would step over all of them again
 * (SQLite's updates ran 30 % slower so). A pinned frame a search passed
 * over leaves the policy until it is unpinned, when it comes back as a page
 * just used: where SQLite's own cache keeps pinned pages off its LRU list
 * for the same reason. Its history in the policy is lost; a frame pinned
 * that long has been used just now anyway. */
static void park_passed(hs_frame_cache *c) {
  for (uint32_t i = 0; i < c->npassed; i++) {
    fc_frame *f = c->slots[c->passed[i]];
    if (!f || (f->flags & (F_INUSE | F_PINNED | F_PARKED)) != (F_INUSE | F_PINNED)) continue;
    (void)hs_policy_remove(c->policy, f->index);
    f->flags |= F_PARKED;
  }
  c->npassed = 0;
}

/* The victim's key and place in the policy go; its memory stays in the
 * slot, which the caller reuses at once. */
/* `forget`: the policy keeps no ghost of it (a scan's own page, taken back
 * by its ring: remembering it would only push out the ghosts of pages
 * that matter — s3fifo's ghost FIFO is 0.9 of the cache, and a scan
 * twice the cache would fill it with its own keys every time). */
static void evict_slot(hs_frame_cache *c, uint32_t slot, bool forget) {
  fc_frame *v = c->slots[slot];
  table_remove(c, v);
  if (forget)
    (void)hs_policy_remove(c->policy, slot);
  else
    (void)hs_policy_evict(c->policy, slot);
  v->flags = 0;
  DEC(c->count);
  INC(c->stats.evictions);
}

static uint32_t ring_size_for(uint32_t capacity) {
  uint32_t n = capacity / 8;
  return n < 1 ? 1 : n > RING_MAX ? RING_MAX : n;
}

#define GHOST_MAX (1u << 20)

static void ring_reset(hs_frame_cache *c) {
  c->ring_size = ring_size_for(c->capacity);
  c->ring_len = c->ring_pos = 0;
  /* Twice as many ghost entries as frames (a power of two, 64 .. 2^20),
   * so that few keys overwrite one another; none if there is no memory
   * for them (then no scan is found coming round). */
  uint32_t n = 64;
  while (n < 2 * (uint64_t)c->capacity && n < GHOST_MAX) n *= 2;
  if (c->ghost && c->ghost_mask + 1 == n) return;
  free(c->ghost);
  c->ghost = calloc(n, sizeof *c->ghost);
  c->ghost_mask = c->ghost ? n - 1 : 0;
}

static uint32_t ghost_home(const hs_frame_cache *c, uint64_t key) {
  return (uint32_t)hs_mix64(key ^ 0x5ca9u) & c->ghost_mask;
}

/* Whether the ring recycled `key` within the last three quarters of the
 * cache's worth of misses: a scan that comes back to it that soon would
 * have found it cached had it been kept. */
static bool ghost_recent(const hs_frame_cache *c, uint64_t key) {
  if (!c->ghost) return false;
  const struct fc_ghost *g = &c->ghost[ghost_home(c, key)];
  return g->at && g->key == key && (c->stats.misses + 1 - g->at) * 4 <= (uint64_t)c->capacity * 3;
}

/* The scan's oldest remembered frame, if the scan may take it back. */
static int64_t ring_take(hs_frame_cache *c) {
  if (c->ring_len < c->ring_size) return -1;
  uint32_t s = c->ring[c->ring_pos];
  fc_frame *f = s < c->nslots ? c->slots[s] : NULL;
  if (!f || (f->flags & (F_INUSE | F_SCAN | F_PINNED)) != (F_INUSE | F_SCAN)) return -1;
  if (c->ghost)
    c->ghost[ghost_home(c, f->key)] = (struct fc_ghost){.key = f->key, .at = c->stats.misses + 1};
  evict_slot(c, s, true);
  return s;
}

static void ring_note(hs_frame_cache *c, uint32_t slot) {
  if (c->ring_len < c->ring_size) {
    c->ring[c->ring_len++] = slot;
    return;
  }
  c->ring[c->ring_pos] = slot;
  c->ring_pos = (c->ring_pos + 1) % c->ring_size;
}

/* A non-purgeable cache with every slot in use doubles its slot array. */
static bool slots_grow(hs_frame_cache *c) {
  uint32_t n = c->nslots, m = n * 2;
  if (m <= n) return false;
  fc_frame **s = realloc(c->slots, sizeof *s * m);
  if (!s) return false;
  c->slots = s;
  uint32_t *fl = realloc(c->free_list, sizeof *fl * m);
  if (!fl) return false; /* the larger slot array is kept, unused */
  c->free_list = fl;
  for (uint32_t i = m; i-- > n;) {
    c->slots[i] = NULL;
    c->free_list[c->nfree++] = i;
  }
  c->nslots = m;
  return true;
}

enum { TAKE_NOMEM = -1, TAKE_FULL = -2 };

/* A victim's slot (its frame evicted, its memory kept for the new one), or
 * TAKE_FULL when every frame in the policy is pinned. */
static int64_t slot_recycle(hs_frame_cache *c, const hs_access *a, bool scan) {
  int64_t slot;
  if (scan && (slot = ring_take(c)) >= 0) return slot;
  c->npassed = 0;
  slot = hs_policy_victim(c->policy, a, skip_pinned, c);
  park_passed(c);
  if (slot < 0) return TAKE_FULL;
  evict_slot(c, (uint32_t)slot, false);
  return slot;
}

/* A slot for a new frame, its memory allocated and its old frame gone, or
 * TAKE_FULL (nothing may be recycled) or TAKE_NOMEM. An unpinned frame is
 * recycled when no slot is free, when recycle_early says the cache is full
 * one frame early, or when the free slot would need new memory while the
 * engine is short of it (SQLite's own cache recycles then); otherwise a
 * free slot is used. */
static int64_t slot_take(hs_frame_cache *c, const hs_access *a, bool scan) {
  if (c->purgeable && c->capacity == 0) return TAKE_FULL; /* keeps nothing */
  if (c->nfree == 0 && !c->policy && !slots_grow(c)) return TAKE_NOMEM;
  bool recycle = c->policy && c->count > c->pinned &&
                 (c->nfree == 0 || (c->recycle_early && c->count + 1 >= c->capacity) ||
                  (!c->slots[c->free_list[c->nfree - 1]] && memory_short(c)));
  if (recycle) {
    int64_t victim = slot_recycle(c, a, scan);
    if (victim >= 0) return victim;
  }
  if (c->nfree == 0) return TAKE_FULL;
  uint32_t slot = c->free_list[c->nfree - 1];
  if (!c->slots[slot] && !(c->slots[slot] = frame_alloc(c))) return TAKE_NOMEM;
  c->nfree--;
  return slot;
}

/* SQLite's rule for a create that may fail (pcache1's createFlag 1): not
 * when 90 % of the capacity or more is pinned (a victim search would step
 * over nearly all of them, and the engine had better spill some), nor
 * under memory pressure when fewer frames are unpinned than pinned. */
static bool create_refused(hs_frame_cache *c) {
  if (!c->purgeable) return false;
  uint32_t pinned = c->pinned, unpinned = c->count - c->pinned;
  if ((uint64_t)pinned >= (uint64_t)c->capacity * 9 / 10) return true;
  return unpinned < pinned && memory_short(c);
}

/* Set when a fetch's frame could not be made for want of memory (not a
 * refusal): hs_frame_cache_fetch then returns HS_ERR_NOMEM. */
static _Thread_local bool fc_nomem;

/* Out of line: the hit path that calls it stays short. */
__attribute__((noinline)) static fc_frame *frame_create(hs_frame_cache *c, uint64_t key,
                                                        hs_fetch_mode mode, bool scan) {
  if (mode == HS_FETCH_CREATE && create_refused(c)) {
    INC(c->stats.refusals);
    return NULL;
  }
  if (!table_reserve(c)) {
    fc_nomem = true;
    return NULL;
  }
  hs_access a = make_access(c, key, scan);
  int64_t slot = slot_take(c, &a, scan);
  fc_frame *f;
  if (slot >= 0) {
    f = c->slots[slot];
    f->index = (uint32_t)slot;
    if (c->policy && hs_policy_insert(c->policy, (uint32_t)slot, &a) != HS_OK) {
      c->free_list[c->nfree++] = (uint32_t)slot;
      fc_nomem = true;
      return NULL;
    }
    if (scan) ring_note(c, (uint32_t)slot);
  } else if (slot == TAKE_FULL && mode == HS_FETCH_CREATE_HARD) {
    if (!overflow_reserve(c, 1) || !(f = frame_alloc(c))) {
      fc_nomem = true;
      return NULL;
    }
    overflow_add(c, f);
    INC(c->stats.overflows);
  } else {
    if (slot == TAKE_FULL)
      INC(c->stats.refusals);
    else
      fc_nomem = true;
    return NULL;
  }
  f->key = key;
  f->flags = (uint8_t)((f->flags & F_OVERFLOW) | F_INUSE | F_PINNED | (scan ? F_SCAN : 0));
  if (c->extra_bytes) memset(f->pub.extra, 0, c->extra_bytes);
  table_put(c, f);
  INC(c->count);
  INC(c->pinned);
  INC(c->stats.creates);
  return f;
}

/* ---- the scan detector --------------------------------------------------- */

#define SCAN_FWD         64u /* a scan's next page is at most this far ahead */
#define SCAN_BACK        16u /* pages this far behind the furthest neither extend nor break it */
#define SCAN_OUTLIERS    4u  /* pages elsewhere in a row that do not end a run */
#define SCAN_CONFIRM     4u  /* pages into a run that began where a long scan did */
#define SCAN_CONFIRM_NEW 8u  /* new pages into a run begun where a long scan did */
#define SCAN_AGAIN       16u /* misses in a row on keys the ring let go: the scan fits */

/* What the history says of a scan beginning at `start`: 1 it was longer
 * than three quarters of the cache, 0 shorter (it fits), -1 not known. */
static int hist_long(const hs_frame_cache *c, uint64_t start) {
  const fc_scan *s = &c->scan;
  for (uint32_t i = 0; i < SCAN_HIST; i++)
    if (s->hist[i].len && s->hist[i].start == start)
      return (uint64_t)s->hist[i].len * 4 > (uint64_t)c->capacity * 3;
  return -1;
}

/* A scan (a run, or a run of new pages, longer than scan_run) has ended.
 * Only runs longer than scan_run are remembered, or a start marked as one
 * whose scan fits (a length of 1, which no remembered run has): a run of
 * one new page that ends is no news, and recording it as "fits" would
 * push real scans out of the eight places. */
static void hist_put(hs_frame_cache *c, uint64_t start, uint32_t len, bool fits) {
  fc_scan *s = &c->scan;
  if (fits)
    len = 1; /* the mark hist_long reads as "fits" */
  else if (len <= c->scan_run)
    return;
  uint32_t at = s->hist_next;
  bool known = false;
  for (uint32_t i = 0; i < SCAN_HIST; i++)
    if (s->hist[i].len && s->hist[i].start == start) at = i, known = true;
  /* A scan marked as fitting stays so when it ends short again (its run
   * is remembered when it ends, after the mark); only one too long for
   * the cache unmarks it. */
  if (known && s->hist[at].len == 1 && !fits && (uint64_t)len * 4 <= (uint64_t)c->capacity * 3)
    return;
  if (!known) s->hist_next = (s->hist_next + 1) % SCAN_HIST;
  s->hist[at].start = start;
  s->hist[at].len = len;
}

__attribute__((noinline)) static void run_restart(hs_frame_cache *c, uint64_t start, uint32_t run,
                                                  uint64_t pos) {
  fc_scan *s = &c->scan;
  hist_put(c, s->run_start, s->run, false);
  s->run = run;
  s->run_start = start;
  s->pos = pos;
  s->outl = s->outl_total = 0;
  s->dir = run > 1 ? (pos > start ? 1 : -1) : 0;
  s->run_long = s->run_small = s->run_known = false;
}

/* The run of new pages has ended: remembered by its first pages, if it
 * was long enough to be remembered at all. */
__attribute__((noinline)) static void novel_end(hs_frame_cache *c) {
  fc_scan *s = &c->scan;
  if (s->novel > c->scan_run) /* hist_put keeps only runs longer */
    for (uint32_t i = 0; i < SCAN_HEADS && i < s->novel; i++)
      hist_put(c, s->heads[i], s->novel, false);
  s->novel = s->misses = 0;
}

/* The engine's boundary key: a statement begins. Whatever run the
 * detector was following ends here (remembered if it was long), and the
 * next page begins the next. */
__attribute__((noinline)) static void scan_boundary(hs_frame_cache *c, uint64_t key) {
  fc_scan *s = &c->scan;
  hist_put(c, s->run_start, s->run, false);
  s->run = s->outl = s->outl_total = 0;
  s->dir = 0;
  s->pos = s->alt = key;
  s->run_long = s->run_small = s->run_known = false;
  novel_end(c);
  s->hits = s->ghost_hits = 0;
  s->miss_long = s->miss_small = s->heads_known = false;
  s->tick++;
  s->any = true;
  s->prev = s->last;
  s->last = key;
  s->last_scan = false;
}

/* True when this fetch is inside a scan. */
static bool scan_note(hs_frame_cache *c, uint64_t key, fc_frame *f) {
  fc_scan *s = &c->scan;
  bool hit = f != NULL;
  if (c->scan_run == 0) return false;
  if (c->has_boundary_key && key == c->boundary_key) {
    if (!(s->any && key == s->last)) scan_boundary(c, key);
    return false;
  }
  if (s->any && key == s->last) return s->last_scan;
  if (s->any && key == s->prev) {
    /* Back to the page before: a scan reading a row's overflow pages
     * twice, a page and its overflow page in turn. Neither extends nor
     * breaks anything. */
    s->prev = s->last;
    s->last = key;
    return s->last_scan;
  }
  /* A hit on a page fetched a few pages ago: something is coming back to
   * pages it uses (a lookup to page 1 and the root), which a scan does not
   * do. A hit on another page (one still cached from before) tells
   * nothing. */
  /* Fetched within the last SCAN_RECENT distinct fetches: the frame
   * remembers its tick, so this is one subtraction, not a search. */
  s->tick++;
  bool reuse = hit && s->novel && f->seen && s->tick - f->seen <= SCAN_RECENT + 1;
  s->any = true;
  s->prev = s->last;
  s->last = key;
  bool along = true;
  uint64_t up = key > s->pos ? key - s->pos : 0, down = key < s->pos ? s->pos - key : 0;
  if ((up && up <= SCAN_FWD && s->dir >= 0) || (down && down <= SCAN_FWD && s->dir <= 0)) {
    /* SQLite scans a table forwards, or backwards (ORDER BY ... DESC, a
     * table whose pages went out in reverse order). */
    s->run++;
    s->pos = key;
    s->outl = 0;
    s->dir = up ? 1 : -1;
  } else if (!(up && up <= SCAN_BACK) && !(down && down <= SCAN_BACK)) {
    along = false;
    s->outl++;
    s->outl_total++;
    uint64_t from_alt = key > s->alt ? key - s->alt : s->alt - key;
    if (s->outl > 1 && from_alt && from_alt <= SCAN_FWD) {
      run_restart(c, s->alt, 2, key); /* a new run began at the last outlier */
      along = true;
    } else if (s->outl > SCAN_OUTLIERS || 2 * s->outl_total > s->run + 8) {
      run_restart(c, key, 1, key);
    }
    s->alt = key;
  }
  /* A run of new pages: fetches of pages not fetched lately, hits or
   * misses, until something comes back to the pages it uses. It begins at
   * the first new page, so a scan that starts with pages still cached from
   * its last time (the head of a table read again and again, which such
   * hits would otherwise keep and lengthen round after round) begins its
   * run where it began before, and the history knows it from its first
   * page. */
  if (reuse) {
    if (++s->hits >= 2 && s->novel) {
      novel_end(c);
    }
  } else {
    if (s->novel == 0) s->miss_long = s->miss_small = s->heads_known = false;
    if (s->novel < SCAN_HEADS) s->heads[s->novel] = key;
    s->novel++;
    if (!hit) {
      s->hits = 0;
      s->misses++;
    }
  }
  /* Too short yet to be anything (most runs: a lookup's few pages). */
  if (s->run < SCAN_CONFIRM && s->novel < SCAN_CONFIRM_NEW && s->run <= c->scan_run &&
      s->misses <= c->scan_run) {
    s->last_scan = false;
    return false;
  }
  /* A start known from a long scan needs a few pages of progress too:
   * lookups restart runs and runs of misses all the time, some of them at
   * a page where a scan once began (page 1, a root). */
  if (!s->run_known && (s->run >= SCAN_CONFIRM || s->novel >= SCAN_CONFIRM_NEW)) {
    int h = hist_long(c, s->run_start);
    s->run_long = h == 1;
    s->run_small = h == 0;
    s->run_known = true;
  }
  if (!s->heads_known && s->novel >= SCAN_CONFIRM_NEW) {
    /* Any of the first three may be where a known scan began: without a
     * boundary key the run may begin at the last lookup's leaf, before
     * the scan's root. */
    for (uint32_t i = 0; i < SCAN_HEADS; i++) {
      int h = hist_long(c, s->heads[i]);
      s->miss_long |= h == 1;
      s->miss_small |= h == 0;
    }
    s->heads_known = true;
  }
  bool seq = (s->run_long && s->run >= SCAN_CONFIRM) || (s->run > c->scan_run && !s->run_small);
  /* A run of new pages is a scan past scan_run misses, or, begun where a
   * long scan began, past SCAN_CONFIRM_NEW pages, hits or not (more than a
   * point lookup starting at that root fetches). A run of keys known to
   * fit vetoes it — a small table read again and again is all new pages
   * too — unless the run of new pages is itself known to be long: then the
   * run of keys is only a piece of it (an ordered table's scan breaks into
   * runs where pages went out of order, the same pieces every time). */
  bool miss = (!s->run_small || s->miss_long) && !s->miss_small &&
              ((s->miss_long && s->novel >= SCAN_CONFIRM_NEW) || s->misses > c->scan_run);
  /* Misses in a row on pages the ring recycled not long ago (a scan
   * reading a page again now and then, an interior page's overflow, does
   * not make a row of them). */
  if ((seq || miss) && !hit) s->ghost_hits = ghost_recent(c, key) ? s->ghost_hits + 1 : 0;
  if (s->ghost_hits >= SCAN_AGAIN) {
    /* The scan came back to pages its ring recycled not long ago: it
     * fits in the cache, and is read again. Not a scan: from now on (and
     * the next time it starts here) its pages are cached as any. */
    hist_put(c, s->run_start, 0, true);
    for (uint32_t i = 0; i < SCAN_HEADS && i < s->novel; i++) hist_put(c, s->heads[i], 0, true);
    s->run_small = s->miss_small = true;
    s->run_long = s->miss_long = false;
    s->run_known = s->heads_known = true;
    s->ghost_hits = 0;
    seq = miss = false;
  }
  /* In a run of new pages taken for a scan, a miss is the scan's, and so
   * is a hit on a page not fetched lately (a page of the table still
   * cached: it must not climb the policy for being read by the scan). */
  s->last_scan = (seq && along) || (miss && !reuse && (s->misses >= 2 || s->miss_long));
  return s->last_scan;
}

/* ---- the API -------------------------------------------------------------- */

void hs_frame_cache_options_init(hs_frame_cache_options *o) {
  *o = (hs_frame_cache_options){.frame_bytes = 4096,
                                .extra_bytes = 0,
                                .capacity = 100,
                                .policy = NULL,
                                .purgeable = true,
                                .scan_run = 32};
}

static void cache_free(hs_frame_cache *c) {
  for (uint32_t i = 0; c->slots && i < c->nslots; i++) frame_free(c, c->slots[i]);
  for (uint32_t i = 0; i < c->noverflow; i++) frame_free(c, c->overflow[i]);
  free(c->slots);
  free(c->free_list);
  free(c->overflow);
  free(c->table);
  free(c->ghost);
  free(c->spec);
  if (c->policy) hs_policy_destroy(c->policy);
  pthread_mutex_destroy(&c->mu);
  free(c);
}

hs_status hs_frame_cache_create(const hs_frame_cache_options *o, hs_frame_cache **out) {
  if (!out) return hs_fail(HS_ERR_MISUSE, 0, "hs_frame_cache_create: no result pointer");
  *out = NULL;
  hs_frame_cache_options defaults;
  if (!o) {
    hs_frame_cache_options_init(&defaults);
    o = &defaults;
  }
  if (o->frame_bytes < 512 || o->frame_bytes > 65536)
    return hs_fail(HS_ERR_INVALID, 0, "frame cache: frame_bytes %u is outside 512 .. 65536",
                   o->frame_bytes);
  if (o->extra_bytes > 65536)
    return hs_fail(HS_ERR_INVALID, 0, "frame cache: extra_bytes %u is over 65536", o->extra_bytes);
  if (!o->alloc_block != !o->free_block)
    return hs_fail(HS_ERR_INVALID, 0,
                   "frame cache: alloc_block and free_block come together (one is NULL)");
  hs_frame_cache *c = calloc(1, sizeof *c);
  if (!c) return hs_fail(HS_ERR_NOMEM, 0, "frame cache: no memory");
  pthread_mutex_init(&c->mu, NULL);
  c->frame_bytes = o->frame_bytes;
  c->extra_bytes = o->extra_bytes;
  STORE(c->capacity, o->capacity);
  c->caller_serializes = o->caller_serializes;
  c->recycle_early = o->recycle_early;
  c->scan_run = o->scan_run;
  c->boundary_key = o->boundary_key;
  c->has_boundary_key = o->has_boundary_key;
  c->purgeable = o->purgeable;
  c->alloc_block = o->alloc_block;
  c->free_block = o->free_block;
  c->under_pressure = o->under_pressure;
  c->memory_ctx = o->memory_ctx;
  /* The engine's allocator promises 8 bytes (sqlite3_malloc does): the
   * parts are packed to that, as SQLite's own cache packs them. */
  c->align = c->alloc_block ? 8 : ALIGN;
  c->header_off = round_up(o->frame_bytes, c->align);
  c->extra_off = c->header_off + round_up(sizeof(fc_frame), c->align);
  c->block_bytes = round_up(c->extra_off + o->extra_bytes, c->align);
  /* A capacity of 0 keeps one slot that is never used (the policy needs
   * one): every frame is then an overflow frame, gone at its unpin. */
  c->nslots = o->capacity ? o->capacity : 1;
  ring_reset(c);
  hs_status st = HS_OK;
  c->spec = strdup(o->policy ? o->policy : DEFAULT_POLICY);
  c->slots = calloc(c->nslots, sizeof *c->slots);
  c->free_list = malloc(sizeof *c->free_list * c->nslots);
  uint32_t table_size = 16;
  while (table_size < (1u << 31) && table_size < (uint64_t)c->nslots * 2) table_size *= 2;
  if (!c->spec || !c->slots || !c->free_list || !table_resize(c, table_size))
    st = hs_fail(HS_ERR_NOMEM, 0, "frame cache: no memory for %u frames", o->capacity);
  if (st == HS_OK) st = policy_make(c, c->nslots, &c->policy);
  if (st == HS_OK) {
    c->needs_time = hs_policy_flags(c->policy) & HS_POLICY_NEEDS_TIME;
    if (!c->purgeable) {
      /* Nothing is ever evicted, so no policy: the spec was only checked. */
      hs_policy_destroy(c->policy);
      c->policy = NULL;
    }
  }
  if (st != HS_OK) {
    cache_free(c);
    return st;
  }
  /* Lowest slots first: a small working set stays in a few blocks. */
  for (uint32_t i = c->nslots; i-- > 0;) c->free_list[c->nfree++] = i;
  c->stats.capacity = c->capacity;
  *out = c;
  return HS_OK;
}

void hs_frame_cache_destroy(hs_frame_cache *c) {
  if (c) cache_free(c);
}

/* A miss: the frame is created if the mode asks. */
__attribute__((noinline)) static fc_frame *
fetch_miss(hs_frame_cache *c, uint64_t key, hs_fetch_mode mode, bool *created, bool scan) {
  INC(c->stats.misses);
  if (mode != HS_FETCH_CREATE && mode != HS_FETCH_CREATE_HARD) return NULL;
  fc_frame *f = frame_create(c, key, mode, scan);
  if (!f) return NULL;
  if (created) *created = true;
  f->seen = c->scan.tick;
  return f;
}

/* A fetch that is an access: a frame not pinned, or no frame. Out of
 * line, so the re-fetch of a pinned frame (half of SQLite's fetches) is a
 * table probe and a flag test with nothing to save or restore. */
__attribute__((noinline)) static fc_frame *
fetch_access(hs_frame_cache *c, uint64_t key, fc_frame *f, hs_fetch_mode mode, bool *created) {
  bool scan = scan_note(c, key, f);
  if (scan) INC(c->stats.scan_fetches);
  if (!f) return fetch_miss(c, key, mode, created, scan);
  INC(c->stats.hits);
  if (c->policy && !(f->flags & (F_OVERFLOW | F_PARKED)))
    f->flags |= F_HIT_DUE | (scan ? F_HIT_SCAN : 0);
  /* Someone other than a scan wants it: the scan may not take it back. */
  if (!scan) f->flags &= ~F_SCAN;
  f->flags |= F_PINNED;
  INC(c->pinned);
  f->seen = c->scan.tick;
  return f;
}

/* A fetch of a frame the engine already holds: it is taking one more
 * reference to a page it is using (SQLite fetches a page again for every
 * reference it takes while it holds one: half its fetches), not reading
 * the page again. Neither the policy nor the scan detector hears of it;
 * the page was an access when it was pinned. This is also what SQLite's
 * own cache does: a pinned page is out of its LRU list, and its place
 * there is set when it is unpinned. (Every fetch is a hit or a miss: the
 * count of fetches is their sum, one store fewer here.) */
static inline fc_frame *fetch(hs_frame_cache *c, uint64_t key, hs_fetch_mode mode, bool *created) {
  fc_frame *f = table_find(c, key);
  if (f && (f->flags & F_PINNED)) {
    INC(c->stats.hits);
    return f;
  }
  return fetch_access(c, key, f, mode, created);
}

__attribute__((noinline)) static hs_frame *fetch_locked(hs_frame_cache *c, uint64_t key,
                                                        hs_fetch_mode mode, bool *created) {
  cache_lock(c);
  fc_frame *f = fetch(c, key, mode, created);
  cache_unlock(c);
  return f ? &f->pub : NULL;
}

hs_status hs_frame_cache_fetch(hs_frame_cache *c, uint64_t key, hs_fetch_mode mode, hs_frame **out,
                               bool *created) {
  if (created) *created = false;
  if (!c || !out || (unsigned)mode > HS_FETCH_CREATE_HARD)
    return hs_fail(HS_ERR_MISUSE, 0, "hs_frame_cache_fetch: bad argument (cache, out or mode)");
  fc_nomem = false;
  /* No mutex: the path has no call before its last, and nothing to save. */
  *out = c->caller_serializes ? (hs_frame *)fetch(c, key, mode, created)
                              : fetch_locked(c, key, mode, created);
  if (!*out && fc_nomem)
    return hs_fail(HS_ERR_NOMEM, ENOMEM,
                   "hs_frame_cache_fetch: no memory for the frame of key %llu",
                   (unsigned long long)key);
  return HS_OK;
}

/* An overflow frame unpinned while the cache is within its capacity takes
 * a free slot (there is one: the slots hold fewer than count frames) and
 * enters the policy as a page just used; a spare block in that slot goes. */
static bool overflow_adopt(hs_frame_cache *c, fc_frame *f) {
  if (!c->policy || c->nfree == 0) return false;
  uint32_t slot = c->free_list[c->nfree - 1];
  hs_access a = make_access(c, f->key, false);
  if (hs_policy_insert(c->policy, slot, &a) != HS_OK) return false;
  c->nfree--;
  frame_free(c, c->slots[slot]);
  overflow_remove(c, f);
  f->flags &= ~(F_OVERFLOW | F_PARKED); /* in the policy now */
  f->index = slot;
  c->slots[slot] = f;
  return true;
}

/* Set when an unpin was refused (the frame was not pinned):
 * hs_frame_cache_unpin then returns HS_ERR_MISUSE. */
static _Thread_local bool fc_misuse;

/* Every unpin but the common one: a misuse, a discard, a frame over the
 * capacity, an overflow or parked frame. Out of line, as fetch_access. */
__attribute__((noinline)) static void unpin_other(hs_frame_cache *c, fc_frame *f, bool discard) {
  if (!(f->flags & F_PINNED)) {
    fc_misuse = true;
    cache_unlock(c);
    if (HS_DEBUG_CHECKS)
      hs_debug_stop(__FILE__, __LINE__, "frame cache: unpin of frame %llu, which is not pinned",
                    (unsigned long long)f->key);
    (void)hs_fail(HS_ERR_MISUSE, 0, "frame cache: unpin of frame %llu, which is not pinned",
                  (unsigned long long)f->key);
    cache_lock(c); /* the caller unlocks */
    return;
  }
  /* One of the three cases below holds (unpin_common said so): a hit
   * still due goes with the frame, or is the parked frame's insert. */
  f->flags &= ~(F_PINNED | F_HIT_DUE | F_HIT_SCAN);
  DEC(c->pinned);
  if (discard) INC(c->stats.discards);
  if (discard || !(f->flags & F_HASHED) || (c->purgeable && c->count > c->capacity)) {
    frame_drop(c, f); /* over capacity: the frame let go of is the one that goes */
  } else if (f->flags & F_OVERFLOW) {
    if (!overflow_adopt(c, f)) frame_drop(c, f);
  } else {
    f->flags &= ~F_PARKED;
    hs_access a = make_access(c, f->key, false);
    if (hs_policy_insert(c->policy, f->index, &a) != HS_OK) {
      f->flags |= F_PARKED; /* not in the policy after all */
      frame_drop(c, f);
    }
  }
}

/* The policy hears of a hit (out of line: building the access needs room
 * the rest of the unpin does not). */
__attribute__((noinline)) static void policy_hit(hs_frame_cache *c, fc_frame *f, bool scan) {
  hs_access a = make_access(c, f->key, scan);
  hs_policy_hit(c->policy, f->index, &a);
}

/* The common unpin: a frame in the policy, kept. */
static inline bool unpin_common(const hs_frame_cache *c, const fc_frame *f, bool discard) {
  return (f->flags & (F_PINNED | F_HASHED | F_OVERFLOW | F_PARKED)) == (F_PINNED | F_HASHED) &&
         !discard && !(c->purgeable && c->count > c->capacity);
}

static inline void unpin_kept(hs_frame_cache *c, fc_frame *f) {
  unsigned flags = f->flags;
  f->flags = (uint8_t)(flags & ~(F_PINNED | F_HIT_DUE | F_HIT_SCAN));
  DEC(c->pinned);
  if (flags & F_HIT_DUE) policy_hit(c, f, flags & F_HIT_SCAN);
}

static inline void unpin(hs_frame_cache *c, fc_frame *f, bool discard) {
  if (unpin_common(c, f, discard))
    unpin_kept(c, f);
  else
    unpin_other(c, f, discard);
}

__attribute__((noinline)) static void unpin_locked(hs_frame_cache *c, fc_frame *f, bool discard) {
  cache_lock(c);
  unpin(c, f, discard);
  cache_unlock(c);
}

/* As hs_frame_cache_fetch: the serialized path without the lock's call. */
hs_status hs_frame_cache_unpin(hs_frame_cache *c, hs_frame *frame, bool discard) {
  if (!c || !frame)
    return hs_fail(HS_ERR_MISUSE, 0, "hs_frame_cache_unpin: a cache and a frame are required");
  fc_frame *f = (fc_frame *)frame;
  fc_misuse = false;
  if (c->caller_serializes)
    unpin(c, f, discard);
  else
    unpin_locked(c, f, discard);
  return fc_misuse ? HS_ERR_MISUSE : HS_OK;
}

/* A frame given up for its key: dropped, or detached while still pinned. */
static void frame_give_up(hs_frame_cache *c, fc_frame *f) {
  INC(c->stats.discards);
  if (f->flags & F_PINNED)
    frame_detach(c, f);
  else
    frame_drop(c, f);
}

hs_status hs_frame_cache_rekey(hs_frame_cache *c, hs_frame *frame, uint64_t new_key) {
  if (!c || !frame)
    return hs_fail(HS_ERR_MISUSE, 0, "hs_frame_cache_rekey: a cache and a frame are required");
  fc_frame *f = (fc_frame *)frame;
  cache_lock(c);
  if (f->key == new_key && (f->flags & F_HASHED)) {
    cache_unlock(c);
    return HS_OK;
  }
  bool placed = true;
  fc_frame *g = table_find(c, new_key);
  if (g) frame_give_up(c, g);
  if (f->flags & F_HASHED) table_remove(c, f);
  f->key = new_key;
  /* The policy knew the slot by its old key (its ghosts, some keymaps): it
   * learns the new one as a fresh entry (a parked frame at its unpin). */
  if (c->policy && !(f->flags & (F_OVERFLOW | F_PARKED))) {
    hs_access a = make_access(c, new_key, false);
    (void)hs_policy_remove(c->policy, f->index);
    placed = hs_policy_insert(c->policy, f->index, &a) == HS_OK;
  }
  if (table_reserve(c))
    table_put(c, f);
  else
    placed = false;
  cache_unlock(c);
  /* The frame keeps its memory, its content and its pin either way; the
   * caller learns that a fetch of the new key may not find it. */
  if (!placed)
    return hs_fail(HS_ERR_NOMEM, ENOMEM,
                   "hs_frame_cache_rekey: no memory to file the frame under key %llu",
                   (unsigned long long)new_key);
  return HS_OK;
}

void hs_frame_cache_truncate(hs_frame_cache *c, uint64_t limit) {
  cache_lock(c);
  for (uint32_t i = 0; i < c->nslots; i++) {
    fc_frame *f = c->slots[i];
    if (f && (f->flags & F_HASHED) && f->key >= limit) frame_give_up(c, f);
  }
  for (uint32_t i = c->noverflow; i-- > 0;) {
    fc_frame *f = c->overflow[i];
    if ((f->flags & F_HASHED) && f->key >= limit) frame_give_up(c, f);
  }
  cache_unlock(c);
}

/* The resident slots in the old policy's victim order (next victim first),
 * into order[0 .. returned-1]; slots it does not list go last. */
static uint32_t victim_order(hs_frame_cache *c, uint32_t *order, uint8_t *seen) {
  uint32_t in_use = c->nslots - c->nfree;
  uint32_t n = hs_policy_upcoming_victims(c->policy, order, in_use), k = 0;
  memset(seen, 0, c->nslots);
  for (uint32_t i = 0; i < n; i++)
    if (order[i] < c->nslots && c->slots[order[i]] && (c->slots[order[i]]->flags & F_INUSE) &&
        !seen[order[i]]) {
      seen[order[i]] = 1;
      order[k++] = order[i];
    }
  for (uint32_t s = 0; s < c->nslots; s++)
    if (!seen[s] && c->slots[s] && (c->slots[s]->flags & F_INUSE)) order[k++] = s;
  return k;
}

/* hs_policy cannot resize: a new policy takes the frames in the old one's
 * victim order, so the next victims stay the next victims, and each is hit
 * right after its insert until it stands where it stood in the old policy
 * (while hits raise it, at most MAX_RESTORE_HITS): clock-sweep's usage
 * counts come back exactly, ARC's T2 entries return to T2 in their order,
 * lru (no standing) is order alone. */
static hs_status resize(hs_frame_cache *c, uint32_t capacity) {
  uint32_t n = c->nslots, nslots = capacity ? capacity : 1;
  uint32_t *order = malloc(sizeof *order * n);
  uint32_t *standing = malloc(sizeof *standing * n);
  uint8_t *seen = malloc(n);
  fc_frame **slots = calloc(nslots, sizeof *slots);
  uint32_t *free_list = malloc(sizeof *free_list * nslots);
  hs_policy *p = NULL;
  hs_status st = HS_OK;
  /* Room in the overflow list for every pinned frame that may be demoted. */
  if (!order || !standing || !seen || !slots || !free_list ||
      !overflow_reserve(c, n > capacity ? n - capacity : 0))
    st = hs_fail(HS_ERR_NOMEM, 0, "frame cache: no memory to resize to %u frames", capacity);
  if (st == HS_OK) st = policy_make(c, nslots, &p);
  if (st != HS_OK) {
    free(order), free(standing), free(seen), free(slots), free(free_list);
    return st;
  }
  uint32_t k = victim_order(c, order, seen);
  for (uint32_t i = 0; i < k; i++) standing[i] = hs_policy_standing(c->policy, order[i]);
  /* Over the new capacity, counting the overflow frames too (as SQLite's
   * own cache counts every page it holds): unpinned frames leave, victims
   * first; then, while the slots hold more than the capacity, the first
   * pinned ones become overflow frames. */
  uint32_t total = k + c->noverflow, in_slots = k;
  for (uint32_t pass = 0; pass < 2; pass++) {
    uint32_t excess = pass == 0 ? (total > capacity ? total - capacity : 0)
                                : (in_slots > capacity ? in_slots - capacity : 0);
    for (uint32_t i = 0; i < k && excess > 0; i++) {
      fc_frame *f = c->slots[order[i]];
      if (!f || !(f->flags & F_INUSE) || (pass == 0 && (f->flags & F_PINNED))) continue;
      c->slots[order[i]] = NULL;
      if (pass == 0) {
        table_remove(c, f);
        frame_free(c, f);
        DEC(c->count);
        INC(c->stats.evictions);
      } else {
        f->flags &= ~F_PARKED; /* an overflow frame is never in a policy */
        overflow_add(c, f);
      }
      excess--;
      if (pass == 0) in_slots--;
    }
  }
  uint32_t used = 0, nfree = 0;
  for (uint32_t i = 0; i < k; i++) {
    fc_frame *f = c->slots[order[i]];
    if (!f) continue;
    c->slots[order[i]] = NULL;
    f->index = used;
    f->flags &= ~F_PARKED; /* every frame is in the new policy */
    slots[used] = f;
    hs_access a = make_access(c, f->key, false);
    (void)hs_policy_insert(p, used, &a);
    for (unsigned h = 0; h < MAX_RESTORE_HITS; h++) {
      uint32_t now = hs_policy_standing(p, used);
      if (now >= standing[i]) break;
      hs_policy_hit(p, used, &a);
      if (hs_policy_standing(p, used) <= now) break; /* hits do not raise it */
    }
    used++;
  }
  /* Free frames' memory: kept while there are slots for it. */
  uint32_t spare = used;
  for (uint32_t s = 0; s < n; s++)
    if (c->slots[s]) {
      if (spare < capacity)
        slots[spare++] = c->slots[s];
      else
        frame_free(c, c->slots[s]);
    }
  for (uint32_t s = nslots; s-- > used;) free_list[nfree++] = s;
  hs_policy_destroy(c->policy);
  free(c->slots);
  free(c->free_list);
  c->policy = p;
  c->slots = slots;
  c->free_list = free_list;
  c->nslots = nslots;
  c->nfree = nfree;
  free(order), free(standing), free(seen);
  return HS_OK;
}

hs_status hs_frame_cache_set_capacity(hs_frame_cache *c, uint32_t capacity) {
  cache_lock(c);
  hs_status st = HS_OK;
  if (c->policy && capacity != c->capacity) st = resize(c, capacity);
  if (st == HS_OK) {
    STORE(c->capacity, capacity);
    ring_reset(c);
  }
  cache_unlock(c);
  return st;
}

/* A non-purgeable cache's frames are the engine's only copy: it gives back
 * only the memory of its free slots. */
void hs_frame_cache_shrink(hs_frame_cache *c) {
  cache_lock(c);
  for (uint32_t s = 0; s < c->nslots; s++) {
    fc_frame *f = c->slots[s];
    if (!f || (f->flags & F_PINNED) || ((f->flags & F_INUSE) && !c->purgeable)) continue;
    if (f->flags & F_INUSE) frame_drop(c, f);
    frame_free(c, f);
    c->slots[s] = NULL;
  }
  ring_reset(c);
  cache_unlock(c);
}

uint32_t hs_frame_cache_count(hs_frame_cache *c) {
  cache_lock(c);
  uint32_t n = LOAD(c->count);
  cache_unlock(c);
  return n;
}

uint64_t hs_frame_key(const hs_frame *f) {
  return ((const fc_frame *)f)->key;
}

hs_status hs_frame_cache_stats_get(const hs_frame_cache *cache, hs_frame_cache_stats *out) {
  if (!cache || !out)
    return hs_fail(HS_ERR_MISUSE, 0, "hs_frame_cache_stats_get: cache and out are required");
  /* Read field by field: with caller_serializes another thread may be
   * counting meanwhile (each count is a relaxed store, see INC). The mutex
   * is taken, nothing is changed. */
  hs_frame_cache *c = (hs_frame_cache *)cache;
  cache_lock(c);
  uint64_t hits = LOAD(c->stats.hits), misses = LOAD(c->stats.misses);
  *out = (hs_frame_cache_stats){.fetches = hits + misses,
                                .hits = hits,
                                .misses = misses,
                                .creates = LOAD(c->stats.creates),
                                .refusals = LOAD(c->stats.refusals),
                                .evictions = LOAD(c->stats.evictions),
                                .overflows = LOAD(c->stats.overflows),
                                .discards = LOAD(c->stats.discards),
                                .scan_fetches = LOAD(c->stats.scan_fetches),
                                .pinned = LOAD(c->pinned),
                                .count = LOAD(c->count),
                                .capacity = LOAD(c->capacity)};
  cache_unlock(c);
  return HS_OK;
}

hs_status frame_cache_check(hs_frame_cache *c) {
  cache_lock(c);
  hs_status st = HS_OK;
#define FC_FAIL(...)                                                                               \
  do {                                                                                             \
    if (st == HS_OK) st = hs_fail(HS_ERR_CORRUPT, 0, __VA_ARGS__);                                 \
  } while (0)
  uint32_t in_use = 0, pinned = 0, hashed = 0, parked = 0;
  for (uint32_t s = 0; s < c->nslots; s++) {
    const fc_frame *f = c->slots[s];
    if (!f || !(f->flags & F_INUSE)) continue;
    in_use++;
    if (f->index != s) FC_FAIL("slot %u holds a frame that says it is in slot %u", s, f->index);
    if (f->flags & F_OVERFLOW) FC_FAIL("slot %u holds an overflow frame", s);
    if (f->flags & F_PINNED) pinned++;
    if (f->flags & F_HASHED) hashed++;
    if (f->flags & F_PARKED) {
      parked++;
      if (!(f->flags & F_PINNED)) FC_FAIL("slot %u's frame is parked but not pinned", s);
    }
    if (!(f->flags & F_HASHED))
      FC_FAIL("slot %u's frame has no key", s);
    else if (table_find(c, f->key) != f)
      FC_FAIL("slot %u's key %llu finds another frame", s, (unsigned long long)f->key);
  }
  if (in_use + c->nfree != c->nslots)
    FC_FAIL("%u slots in use and %u free of %u", in_use, c->nfree, c->nslots);
  for (uint32_t i = 0; i < c->nfree; i++) {
    const fc_frame *f = c->slots[c->free_list[i]];
    if (f && (f->flags & F_INUSE)) FC_FAIL("free slot %u is in use", c->free_list[i]);
  }
  if (c->policy && hs_policy_resident(c->policy) != in_use - parked)
    FC_FAIL("the policy holds %u frames, the slots %u (%u parked)", hs_policy_resident(c->policy),
            in_use, parked);
  for (uint32_t i = 0; i < c->noverflow; i++) {
    const fc_frame *f = c->overflow[i];
    if (f->index != i || !(f->flags & F_OVERFLOW)) FC_FAIL("overflow frame %u misplaced", i);
    if (!(f->flags & F_PINNED)) FC_FAIL("overflow frame %u is not pinned", i);
    if (f->flags & F_PARKED) FC_FAIL("overflow frame %u is marked parked", i);
    pinned += (f->flags & F_PINNED) != 0;
    if (f->flags & F_HASHED) {
      hashed++;
      if (table_find(c, f->key) != f)
        FC_FAIL("overflow key %llu finds another frame", (unsigned long long)f->key);
    }
  }
  if (hashed != c->table_used) FC_FAIL("%u keyed frames, %u keys", hashed, c->table_used);
  if (pinned != c->pinned) FC_FAIL("%u frames pinned, counted %u", pinned, c->pinned);
  if (in_use + c->noverflow != c->count)
    FC_FAIL("%u + %u frames, counted %u", in_use, c->noverflow, c->count);
#undef FC_FAIL
  cache_unlock(c);
  return st;
}
