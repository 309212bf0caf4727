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
 * Scans. The detector (scan_detect.c, fc_scan_note) takes for a scan a run of keys moving
 * one way a few at a time — gaps, a step or two back and a key elsewhere
 * now and then allowed, as SQLite's B-trees give them — or a run of new
 * pages (hits or misses) that never comes back to a page it fetched lately
 * (a table whose pages are in no order), past scan_run of either (misses,
 * for the second). A hit on a page fetched lately only counts towards
 * the end of a run of new pages, and once two have ended one (the
 * detector idle) such hits are nothing and another hit only begins the
 * next: lookups' hits, most accesses, cost a test or two. It remembers
 * where recent scans began and how long they were, and the keys its ring
 * recycled: a
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
#include "policy/policy_impl.h"

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

void fc_frame_free(hs_frame_cache *c, fc_frame *f) {
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

/* Inline: the miss puts one key in and takes one out (its victim's), and
 * a call each cost as much as the probe. */
static inline void table_put(hs_frame_cache *c, fc_frame *f) {
  uint32_t i = table_home(c, f->key);
  while (c->table[i].f) i = (i + 1) & c->table_mask;
  c->table[i] = (fc_entry){.key = f->key, .f = f};
  c->table_used++;
  f->flags |= F_HASHED;
}

/* Backward-shift deletion: the entries after the hole that would not be
 * found past it move up, so no tombstones build up. */
static inline void table_remove(hs_frame_cache *c, fc_frame *f) {
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

void fc_table_remove(hs_frame_cache *c, fc_frame *f) {
  table_remove(c, f);
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

hs_access fc_make_access(const hs_frame_cache *c, uint64_t key, bool scan) {
  return (hs_access){.key = key,
                     .size = 1,
                     .now = c->needs_time ? now_ms() : 0,
                     .next = HS_NEXT_UNKNOWN,
                     .kind = HS_ACCESS_READ,
                     .hint = scan ? HS_HINT_RING : HS_HINT_NORMAL,
                     .recycle_first = scan};
}

hs_status fc_policy_make(const hs_frame_cache *c, uint32_t capacity, hs_policy **out) {
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
bool fc_overflow_reserve(hs_frame_cache *c, uint32_t n) {
  if (c->overflow_cap - c->noverflow >= n) return true;
  uint32_t cap = c->overflow_cap ? c->overflow_cap : 8;
  while (cap - c->noverflow < n) cap *= 2;
  fc_frame **o = realloc(c->overflow, sizeof *o * cap);
  if (!o) return false;
  c->overflow = o;
  c->overflow_cap = cap;
  return true;
}

void fc_overflow_add(hs_frame_cache *c, fc_frame *f) {
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
void fc_frame_drop(hs_frame_cache *c, fc_frame *f) {
  if (f->flags & F_HASHED) fc_table_remove(c, f);
  if (f->flags & F_PINNED) DEC(c->pinned);
  DEC(c->count);
  if (f->flags & F_OVERFLOW) {
    overflow_remove(c, f);
    fc_frame_free(c, f);
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
  if (f->flags & F_HASHED) fc_table_remove(c, f);
  if ((f->flags & F_OVERFLOW) || !fc_overflow_reserve(c, 1)) return;
  slot_release(c, f, false);
  f->flags &= ~F_PARKED; /* an overflow frame is never in a policy */
  fc_overflow_add(c, f);
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

/* The victim's key goes; its memory stays in the slot, and its place in
 * the policy too, for the new frame the caller puts there at once: the
 * policy hears of both in one call (hs_policy_replace, in frame_create;
 * nothing asks the policy between), and the slot stays resident in its
 * accounting throughout (policy_impl.h). Always inline: on the miss path,
 * where a call's saves and restores cost as much as its work. */
__attribute__((always_inline)) static inline void evict_slot(hs_frame_cache *c, uint32_t slot) {
  fc_frame *v = c->slots[slot];
  table_remove(c, v);
  v->flags = 0;
  DEC(c->count);
  INC(c->stats.evictions);
}

static uint32_t ring_size_for(uint32_t capacity) {
  uint32_t n = capacity / 8;
  return n < 1 ? 1 : n > RING_MAX ? RING_MAX : n;
}

#define GHOST_MAX (1u << 20)

void fc_ring_reset(hs_frame_cache *c) {
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

/* The scan's oldest remembered frame, if the scan may take it back. */
static int64_t ring_take(hs_frame_cache *c) {
  if (c->ring_len < c->ring_size) return -1;
  uint32_t s = c->ring[c->ring_pos];
  fc_frame *f = s < c->nslots ? c->slots[s] : NULL;
  if (!f || (f->flags & (F_INUSE | F_SCAN | F_PINNED)) != (F_INUSE | F_SCAN)) return -1;
  if (!hs_policy_slot_size(c->policy, s)) return -1; /* a rekey left it out of the policy */
  if (c->ghost)
    c->ghost[ghost_home(c, f->key)] = (struct fc_ghost){.key = f->key, .at = c->stats.misses + 1};
  evict_slot(c, s);
  return s;
}

static void ring_note(hs_frame_cache *c, uint32_t slot) {
  if (c->ring_len < c->ring_size) {
    c->ring[c->ring_len++] = slot;
    return;
  }
  c->ring[c->ring_pos] = slot;
  /* A compare, not a division: a scan's every miss comes here. */
  if (++c->ring_pos == c->ring_size) c->ring_pos = 0;
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

/* A victim's slot (its frame evicted, its memory kept for the new one,
 * its place in the policy's accounting kept for the new one's insert), or
 * TAKE_FULL when every frame in the policy is pinned. */
/* *forget: the policy keeps no ghost of the victim (a scan's own page,
 * taken back by its ring: remembering it would only push out the ghosts
 * of pages that matter — s3fifo's ghost FIFO is 0.9 of the cache, and a
 * scan twice the cache would fill it with its own keys every time). */
static int64_t slot_recycle(hs_frame_cache *c, const hs_access *a, bool scan, bool *forget) {
  int64_t slot;
  *forget = scan && (slot = ring_take(c)) >= 0;
  if (*forget) return slot;
  c->npassed = 0;
  /* hs_policy_victim's work: the policy holds a frame (one is unpinned:
   * slot_take said so, and unpinned frames are in the policy). */
  slot = c->policy->ops->victim(c->policy, a, skip_pinned, c);
  park_passed(c);
  if (slot < 0) return TAKE_FULL;
  evict_slot(c, (uint32_t)slot);
  return slot;
}

/* A slot for a new frame, its memory allocated and its old frame gone, or
 * TAKE_FULL (nothing may be recycled) or TAKE_NOMEM. An unpinned frame is
 * recycled when no slot is free, when recycle_early says the cache is full
 * one frame early, or when the free slot would need new memory while the
 * engine is short of it (SQLite's own cache recycles then); otherwise a
 * free slot is used. *refill: the slot is a victim's, still in the policy
 * (evict_slot), and takes the new frame with hs_policy_replace (*forget:
 * the victim leaves no ghost). */
static int64_t slot_take(hs_frame_cache *c, const hs_access *a, bool scan, bool *refill,
                         bool *forget) {
  if (c->purgeable && c->capacity == 0) return TAKE_FULL; /* keeps nothing */
  if (c->nfree == 0 && !c->policy && !slots_grow(c)) return TAKE_NOMEM;
  bool recycle = c->policy && c->count > c->pinned &&
                 (c->nfree == 0 || (c->recycle_early && c->count + 1 >= c->capacity) ||
                  (!c->slots[c->free_list[c->nfree - 1]] && memory_short(c)));
  if (recycle) {
    int64_t victim = slot_recycle(c, a, scan, forget);
    if (victim >= 0) {
      *refill = true;
      return victim;
    }
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

/* Inline in the miss (its one caller), as the miss is in fetch_access_miss:
 * one call's saves and restores for the whole miss, not one per layer. */
__attribute__((always_inline)) static inline fc_frame *frame_create(hs_frame_cache *c, uint64_t key,
                                                                    hs_fetch_mode mode, bool scan) {
  if (mode == HS_FETCH_CREATE && create_refused(c)) {
    INC(c->stats.refusals);
    return NULL;
  }
  if (!table_reserve(c)) {
    fc_nomem = true;
    return NULL;
  }
  /* Without a clock to read, the cache's own access (hit_access: only the
   * key changes, as for a hit) instead of one built on the stack. */
  hs_access timed;
  hs_access *a = scan ? &c->hit_access[1] : &c->hit_access[0];
  if (__builtin_expect(c->needs_time, 0)) {
    timed = fc_make_access(c, key, scan);
    a = &timed;
  } else {
    a->key = key;
  }
  bool refill = false, forget = false;
  int64_t slot = slot_take(c, a, scan, &refill, &forget);
  fc_frame *f;
  if (slot >= 0) {
    f = c->slots[slot];
    f->index = (uint32_t)slot;
    if (refill)
      hs_policy_replace(c->policy, (uint32_t)slot, forget, a);
    else if (c->policy && hs_policy_insert(c->policy, (uint32_t)slot, a) != HS_OK) {
      c->free_list[c->nfree++] = (uint32_t)slot;
      fc_nomem = true;
      return NULL;
    }
    if (scan) ring_note(c, (uint32_t)slot);
  } else if (slot == TAKE_FULL && mode == HS_FETCH_CREATE_HARD) {
    if (!fc_overflow_reserve(c, 1) || !(f = frame_alloc(c))) {
      fc_nomem = true;
      return NULL;
    }
    fc_overflow_add(c, f);
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
  /* A pointer's worth (SQLite's) is one store, not a call. */
  if (c->extra_zeroed == sizeof(void *))
    memset(f->pub.extra, 0, sizeof(void *));
  else if (c->extra_zeroed)
    memset(f->pub.extra, 0, c->extra_zeroed);
  table_put(c, f);
  INC(c->count);
  INC(c->pinned);
  INC(c->stats.creates);
  return f;
}

/* ---- the API -------------------------------------------------------------- */

void hs_frame_cache_options_init(hs_frame_cache_options *o) {
  *o = (hs_frame_cache_options){.frame_bytes = 4096,
                                .extra_bytes = 0,
                                .extra_zeroed = UINT32_MAX,
                                .capacity = 100,
                                .policy = NULL,
                                .purgeable = true,
                                .scan_run = 32};
}

static void cache_free(hs_frame_cache *c) {
  for (uint32_t i = 0; c->slots && i < c->nslots; i++) fc_frame_free(c, c->slots[i]);
  for (uint32_t i = 0; i < c->noverflow; i++) fc_frame_free(c, c->overflow[i]);
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
  /* Aligned, so the scan detector's common state is one cache line. */
  hs_frame_cache *c =
      aligned_alloc(_Alignof(hs_frame_cache), round_up(sizeof *c, _Alignof(hs_frame_cache)));
  if (c) memset(c, 0, sizeof *c);
  if (!c) return hs_fail(HS_ERR_NOMEM, 0, "frame cache: no memory");
  pthread_mutex_init(&c->mu, NULL);
  c->frame_bytes = o->frame_bytes;
  c->extra_bytes = o->extra_bytes;
  c->extra_zeroed = o->extra_zeroed < o->extra_bytes ? o->extra_zeroed : o->extra_bytes;
  STORE(c->capacity, o->capacity);
  c->caller_serializes = o->caller_serializes;
  c->recycle_early = o->recycle_early;
  c->scan_run = o->scan_run;
  c->scan_fast_after = fc_scan_fast_after(o->scan_run);
  c->hit_access[0] = fc_make_access(c, 0, false);
  c->hit_access[1] = fc_make_access(c, 0, true);
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
  fc_ring_reset(c);
  hs_status st = HS_OK;
  c->spec = strdup(o->policy ? o->policy : DEFAULT_POLICY);
  c->slots = calloc(c->nslots, sizeof *c->slots);
  c->free_list = malloc(sizeof *c->free_list * c->nslots);
  /* Four entries a frame or more (a load of at most a quarter once the
   * slots are full): each miss puts a key and removes its victim's, and at
   * half that size (a load near a half) the put's probe and the removal's
   * backward shift walked two or three entries each. The price: 16 bytes
   * an entry, 64 to 128 a frame, beside a page of 512 bytes or more. */
  uint32_t table_size = 16;
  while (table_size < (1u << 31) && table_size < (uint64_t)c->nslots * 4) table_size *= 2;
  if (!c->spec || !c->slots || !c->free_list || !table_resize(c, table_size))
    st = hs_fail(HS_ERR_NOMEM, 0, "frame cache: no memory for %u frames", o->capacity);
  if (st == HS_OK) st = fc_policy_make(c, c->nslots, &c->policy);
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

/* A miss: the frame is created if the mode asks. Inline in
 * fetch_access_miss, its one caller. */
__attribute__((always_inline)) static inline fc_frame *
fetch_miss(hs_frame_cache *c, uint64_t key, hs_fetch_mode mode, bool *created, bool scan) {
  INC(c->stats.misses);
  fc_nomem = false;
  if (mode != HS_FETCH_CREATE && mode != HS_FETCH_CREATE_HARD) return NULL;
  fc_frame *f = frame_create(c, key, mode, scan);
  if (!f) return NULL;
  if (created) *created = true;
  f->seen = c->scan.tick;
  return f;
}

/* A fetch that is an access: a hit on a frame not pinned, or a miss. Out
 * of line, so the re-fetch of a pinned frame (half of SQLite's fetches) is
 * a table probe and a flag test with nothing to save or restore; and in
 * two, one per kind, so that each has the scan detector's fast path inline
 * with the frame known (none on a miss: no reuse to work out) and little
 * else to keep across it. */
/* (f is never NULL: nonnull lets the detector's inline path drop its
 * tests of it.) */
/* The hit's own work, the detector's answer known. */
static inline fc_frame *hit_pin(hs_frame_cache *c, fc_frame *f, bool scan) {
  if (scan) INC(c->stats.scan_fetches);
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

/* A hit on a page not fetched lately (fc_scan_front said FC_SCAN_FOLLOW):
 * the rest of the fast path, with the registers it needs. */
__attribute__((noinline, nonnull(3))) static fc_frame *fetch_hit_follow(hs_frame_cache *c,
                                                                        uint64_t key, fc_frame *f) {
  int r = fc_scan_follow(c, key, f);
  return hit_pin(c, f, r == FC_SCAN_SLOW ? fc_scan_note(c, key, f) : r);
}

/* A hit the fast path leaves to the whole rule (or, in a debug build,
 * every hit: each checked against fc_scan_note). */
__attribute__((noinline, nonnull(3))) static fc_frame *fetch_hit_whole(hs_frame_cache *c,
                                                                       uint64_t key, fc_frame *f) {
  return hit_pin(c, f, HS_DEBUG_CHECKS ? fc_scan_checked(c, key, f) : fc_scan_note(c, key, f));
}

/* The fast path's first part inline: most hits (idle, the page before, a
 * reuse) end there, and this function saves no register for them; the
 * rest go on in a function of their own, a tail call. */
__attribute__((noinline, nonnull(3))) static fc_frame *fetch_access_hit(hs_frame_cache *c,
                                                                        uint64_t key, fc_frame *f) {
  int r = HS_DEBUG_CHECKS ? FC_SCAN_SLOW : fc_scan_front(c, key, f);
  if (r == FC_SCAN_FOLLOW) return fetch_hit_follow(c, key, f);
  if (r == FC_SCAN_SLOW) return fetch_hit_whole(c, key, f);
  return hit_pin(c, f, r);
}

/* The frame, or NULL: no frame was asked for, the create was refused, or
 * memory was short (fc_nomem, and the error recorded here). */
__attribute__((noinline)) static fc_frame *fetch_access_miss(hs_frame_cache *c, uint64_t key,
                                                             hs_fetch_mode mode, bool *created) {
  bool scan = fc_scan_access(c, key, NULL);
  if (scan) INC(c->stats.scan_fetches);
  fc_frame *f = fetch_miss(c, key, mode, created, scan);
  if (__builtin_expect(!f && fc_nomem, 0))
    (void)hs_fail(HS_ERR_NOMEM, ENOMEM, "hs_frame_cache_fetch: no memory for the frame of key %llu",
                  (unsigned long long)key);
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
/* Each path ends in the call that finishes it (a tail call): the fetch
 * saves no register of its own. */
static inline fc_frame *fetch(hs_frame_cache *c, uint64_t key, hs_fetch_mode mode, bool *created) {
  fc_frame *f = table_find(c, key);
  if (!f) return fetch_access_miss(c, key, mode, created);
  if (!(f->flags & F_PINNED)) return fetch_access_hit(c, key, f);
  INC(c->stats.hits);
  return f;
}

__attribute__((noinline)) static fc_frame *fetch_locked(hs_frame_cache *c, uint64_t key,
                                                        hs_fetch_mode mode, bool *created) {
  cache_lock(c);
  fc_frame *f = fetch(c, key, mode, created);
  cache_unlock(c);
  return f;
}

__attribute__((noinline, cold)) static hs_frame *get_misuse(const hs_frame_cache *c,
                                                            hs_fetch_mode mode) {
  if (!c)
    (void)hs_fail(HS_ERR_MISUSE, 0, "hs_frame_cache_fetch: the cache is NULL");
  else
    (void)hs_fail(HS_ERR_MISUSE, 0, "hs_frame_cache_fetch: mode %u is not a fetch mode",
                  (unsigned)mode);
  return NULL;
}

/* The frame is the handle (its first member): the cast is the address. */
hs_frame *hs_frame_cache_get(hs_frame_cache *c, uint64_t key, hs_fetch_mode mode, bool *created) {
  if (__builtin_expect(!c || (unsigned)mode > HS_FETCH_CREATE_HARD, 0)) return get_misuse(c, mode);
  /* No mutex: the path has no call before its last, and nothing to save. */
  if (c->caller_serializes) return (hs_frame *)fetch(c, key, mode, created);
  return (hs_frame *)fetch_locked(c, key, mode, created);
}

hs_status hs_frame_cache_fetch(hs_frame_cache *c, uint64_t key, hs_fetch_mode mode, hs_frame **out,
                               bool *created) {
  if (created) *created = false;
  if (!out) return hs_fail(HS_ERR_MISUSE, 0, "hs_frame_cache_fetch: out is NULL");
  *out = NULL;
  if (!c || (unsigned)mode > HS_FETCH_CREATE_HARD) {
    (void)get_misuse(c, mode);
    return HS_ERR_MISUSE;
  }
  *out = hs_frame_cache_get(c, key, mode, created);
  /* A miss that found memory short said so (fetch_access_miss). */
  return !*out && fc_nomem ? HS_ERR_NOMEM : HS_OK;
}

/* An overflow frame unpinned while the cache is within its capacity takes
 * a free slot (there is one: the slots hold fewer than count frames) and
 * enters the policy as a page just used; a spare block in that slot goes. */
static bool overflow_adopt(hs_frame_cache *c, fc_frame *f) {
  if (!c->policy || c->nfree == 0) return false;
  uint32_t slot = c->free_list[c->nfree - 1];
  hs_access a = fc_make_access(c, f->key, false);
  if (hs_policy_insert(c->policy, slot, &a) != HS_OK) return false;
  c->nfree--;
  fc_frame_free(c, c->slots[slot]);
  overflow_remove(c, f);
  f->flags &= ~(F_OVERFLOW | F_PARKED); /* in the policy now */
  f->index = slot;
  c->slots[slot] = f;
  return true;
}

/* Every unpin but the common one: a misuse (HS_ERR_MISUSE: the frame was
 * not pinned), a discard, a frame over the capacity, an overflow or
 * parked frame. Out of line, as an access's fetch. */
__attribute__((noinline)) static hs_status unpin_other(hs_frame_cache *c, fc_frame *f,
                                                       bool discard) {
  if (!(f->flags & F_PINNED)) {
    cache_unlock(c);
    if (HS_DEBUG_CHECKS)
      hs_debug_stop(__FILE__, __LINE__, "frame cache: unpin of frame %llu, which is not pinned",
                    (unsigned long long)f->key);
    (void)hs_fail(HS_ERR_MISUSE, 0, "frame cache: unpin of frame %llu, which is not pinned",
                  (unsigned long long)f->key);
    cache_lock(c); /* the caller unlocks */
    return HS_ERR_MISUSE;
  }
  /* One of the three cases below holds (unpin_common said so): a hit
   * still due goes with the frame, or is the parked frame's insert. */
  f->flags &= ~(F_PINNED | F_HIT_DUE | F_HIT_SCAN);
  DEC(c->pinned);
  if (discard) INC(c->stats.discards);
  if (discard || !(f->flags & F_HASHED) || (c->purgeable && c->count > c->capacity)) {
    fc_frame_drop(c, f); /* over capacity: the frame let go of is the one that goes */
  } else if (f->flags & F_OVERFLOW) {
    if (!overflow_adopt(c, f)) fc_frame_drop(c, f);
  } else {
    f->flags &= ~F_PARKED;
    hs_access a = fc_make_access(c, f->key, false);
    if (hs_policy_insert(c->policy, f->index, &a) != HS_OK) {
      f->flags |= F_PARKED; /* not in the policy after all */
      fc_frame_drop(c, f);
    }
  }
  return HS_OK;
}

/* The policy hears of a hit: hs_policy_hit's work, inline (the policy's
 * own hit, called directly, as src/policy/policy_impl.h lets the pool).
 * A frame unpin_common keeps sits in a slot below max_slots; the one test
 * kept is hs_policy_hit's other, that the slot is resident (a rekey whose
 * insert failed leaves it out). Without a clock to read, the access is
 * the cache's own (hit_access: only the key changes), so nothing is built
 * on the stack. */
__attribute__((noinline, cold)) static void policy_hit_timed(hs_frame_cache *c, fc_frame *f,
                                                             bool scan) {
  hs_access a = fc_make_access(c, f->key, scan);
  c->policy->ops->hit(c->policy, f->index, &a);
}

static inline void policy_hit(hs_frame_cache *c, fc_frame *f, bool scan) {
  hs_policy *p = c->policy;
  if (__builtin_expect(!hs_policy_slot_size(p, f->index), 0)) return;
  if (__builtin_expect(c->needs_time, 0)) {
    policy_hit_timed(c, f, scan);
    return;
  }
  /* Two addresses and a select, not an index scaled by the access's size. */
  hs_access *a = scan ? &c->hit_access[1] : &c->hit_access[0];
  a->key = f->key;
  p->ops->hit(p, f->index, a);
}

/* The common unpin: a frame in the policy, kept. */
static inline bool unpin_common(const hs_frame_cache *c, const fc_frame *f, bool discard) {
  return (f->flags & (F_PINNED | F_HASHED | F_OVERFLOW | F_PARKED)) == (F_PINNED | F_HASHED) &&
         !discard && !(c->purgeable && c->count > c->capacity);
}

static inline hs_status unpin_kept(hs_frame_cache *c, fc_frame *f) {
  unsigned flags = f->flags;
  f->flags = (uint8_t)(flags & ~(F_PINNED | F_HIT_DUE | F_HIT_SCAN));
  DEC(c->pinned);
  if (flags & F_HIT_DUE) policy_hit(c, f, flags & F_HIT_SCAN);
  return HS_OK;
}

static inline hs_status unpin(hs_frame_cache *c, fc_frame *f, bool discard) {
  if (unpin_common(c, f, discard)) return unpin_kept(c, f);
  return unpin_other(c, f, discard);
}

__attribute__((noinline)) static hs_status unpin_locked(hs_frame_cache *c, fc_frame *f,
                                                        bool discard) {
  cache_lock(c);
  hs_status st = unpin(c, f, discard);
  cache_unlock(c);
  return st;
}

/* As hs_frame_cache_fetch: the serialized path without the lock's call. */
hs_status hs_frame_cache_unpin(hs_frame_cache *c, hs_frame *frame, bool discard) {
  if (!c || !frame)
    return hs_fail(HS_ERR_MISUSE, 0, "hs_frame_cache_unpin: a cache and a frame are required");
  fc_frame *f = (fc_frame *)frame;
  if (c->caller_serializes) return unpin(c, f, discard);
  return unpin_locked(c, f, discard);
}

/* A frame given up for its key: dropped, or detached while still pinned. */
static void frame_give_up(hs_frame_cache *c, fc_frame *f) {
  INC(c->stats.discards);
  if (f->flags & F_PINNED)
    frame_detach(c, f);
  else
    fc_frame_drop(c, f);
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
  if (f->flags & F_HASHED) fc_table_remove(c, f);
  f->key = new_key;
  /* The policy knew the slot by its old key (its ghosts, some keymaps): it
   * learns the new one as a fresh entry (a parked frame at its unpin). */
  if (c->policy && !(f->flags & (F_OVERFLOW | F_PARKED))) {
    hs_access a = fc_make_access(c, new_key, false);
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
