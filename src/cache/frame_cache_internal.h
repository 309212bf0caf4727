/*
 * cache/frame_cache_internal.h — the frame cache's insides, shared by its
 * three files: frame_cache.c (frames, the key table, slots, fetch and
 * unpin), scan_detect.c (the scan detector) and frame_cache_resize.c
 * (capacity changes). Private to src/cache/; a test may call
 * frame_cache_check.
 */
#ifndef HOTSET_CACHE_FRAME_CACHE_INTERNAL_H
#define HOTSET_CACHE_FRAME_CACHE_INTERNAL_H

#include "core/debug.h"
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

/* The scan detector's rules' numbers (scan_detect.c; docs/frame-cache.md,
 * "Scans"). */
#define SCAN_HIST        16u
#define SCAN_HEADS       3u  /* a run of new pages is known by its first three */
#define SCAN_RECENT      12u /* a hit on a page fetched this lately is a reuse */
#define SCAN_FWD         64u /* a scan's next page is at most this far ahead */
#define SCAN_BACK        16u /* pages this far behind the furthest neither extend nor break it */
#define SCAN_OUTLIERS    4u  /* pages elsewhere in a row that do not end a run */
#define SCAN_CONFIRM     4u  /* pages into a run that began where a long scan did */
#define SCAN_CONFIRM_NEW 8u  /* new pages into a run begun where a long scan did */
#define SCAN_AGAIN       16u /* misses in a row on keys the ring let go: the scan fits */
#define SCAN_IDLE        2u  /* fc_scan.hits: a run of new pages ended by reuses, none begun */

/* The scan detector's state. Its first 64 bytes are all that the common
 * access reads and writes (fc_scan_fast), so they are one cache line. */
typedef struct fc_scan {
  _Alignas(64) uint64_t last; /* (_Alignas names one member: it would align each) */
  uint64_t prev, pos, alt;
  uint32_t tick; /* distinct fetches so far (a frame's `seen` is one) */
  uint32_t run, outl_total, novel, misses;
  /* A reuse since the last miss (1), or SCAN_IDLE: two of them ended the
   * run of new pages and no new page has come since. */
  uint8_t hits;
  uint8_t outl;       /* outliers in a row (a run restarts past SCAN_OUTLIERS) */
  uint8_t ghost_hits; /* misses in a row on keys the ring recycled a while ago */
  int8_t dir;         /* the run's direction: 1 up, -1 down, 0 not yet */
  /* What the history says of the current run and run of misses: a scan
   * known to be longer than the cache can hold (a scan from its first
   * page), or one known to fit (never a scan). */
  bool run_long, run_small, miss_long, miss_small;
  /* Whether the history has been asked yet (only runs that get that far
   * ask: most runs are a lookup's few pages). */
  bool run_known, heads_known;
  bool last_scan, any;
  /* The rest: read and written only as runs begin and end. */
  uint64_t run_start;
  uint64_t heads[SCAN_HEADS]; /* the first pages of the run of new pages */
  struct {
    uint64_t start;
    uint32_t len;
  } hist[SCAN_HIST];
  uint32_t hist_next;
  /* Bit hist_bit(start) is set for the start of every entry in hist: a
   * start whose bit is clear is not there, so most questions to the
   * history (lookups' runs, which never began a scan) are one bit test
   * instead of a search of SCAN_HIST entries. */
  uint64_t hist_bits;
  /* For each bit of hist_bits, an entry whose start has it: the only one
   * unless the bit is also in hist_shared (two starts or more have it). */
  uint64_t hist_shared;
  uint8_t hist_where[64];
} fc_scan;
_Static_assert(offsetof(fc_scan, run_start) == 64, "the detector's common state is one line");

typedef struct fc_entry {
  uint64_t key;
  fc_frame *f; /* NULL: empty */
} fc_entry;

struct hs_frame_cache {
  pthread_mutex_t mu;
  uint32_t frame_bytes, extra_bytes, capacity, scan_run;
  uint32_t extra_zeroed; /* the options' extra_zeroed, at most extra_bytes */
  /* fc_scan_fast takes accesses whose tick is past this: SCAN_RECENT + 1
   * (a frame's `seen` of 0 is no reuse then), or never when scan_run is
   * below SCAN_CONFIRM_NEW (UINT32_MAX; see fc_scan_fast_after). */
  uint32_t scan_fast_after;
  uint64_t boundary_key;
  bool has_boundary_key;
  size_t header_off, extra_off, block_bytes; /* the page is at 0 */
  bool purgeable, needs_time;
  char *spec;
  hs_policy *policy; /* NULL when not purgeable */
  /* The access a hit reports when the policy needs no time (needs_time
   * false: .now is 0): [0] outside a scan, [1] inside one; each hit sets
   * the key. */
  hs_access hit_access[2];

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

/* The tick after which fc_scan_fast takes a cache's accesses. */
static inline uint32_t fc_scan_fast_after(uint32_t scan_run) {
  return scan_run >= SCAN_CONFIRM_NEW ? SCAN_RECENT + 1 : UINT32_MAX;
}

/* The bit of hist_bits that stands for a scan's start, and its mask. */
static inline unsigned hist_slot(uint64_t start) {
  return (unsigned)((start * 0x9e3779b97f4a7c15ull) >> 58);
}

static inline uint64_t hist_bit(uint64_t start) {
  return 1ull << hist_slot(start);
}

/* scan_detect.c: true when this fetch of `key` (f: its frame on a hit,
 * NULL on a miss) is inside a scan. Called with the cache's mutex held.
 * The whole rule, every case: the reference that fc_scan_fast must equal. */
bool fc_scan_note(hs_frame_cache *c, uint64_t key, fc_frame *f);
/* Its rare parts, out of line, which fc_scan_fast calls too: the run ends
 * (remembered if it was a scan), the run of new pages ends (the same), the
 * history is asked about the run's start, and about the run of new
 * pages' first pages. */
void fc_scan_run_ended(hs_frame_cache *c);
void fc_scan_novel_end(hs_frame_cache *c);

/* A fetch of a page not fetched lately: one more page in the run of new
 * pages (its first few remembered as its heads), and, on a miss, one more
 * in the run of misses. The whole rule (scan_detect.c) and the fast path
 * below count it the same way, through this. */
static inline void fc_scan_count_new(fc_scan *s, uint64_t key, bool hit) {
  if (s->novel == 0) s->miss_long = s->miss_small = s->heads_known = false;
  if (s->novel < SCAN_HEADS) s->heads[s->novel] = key;
  s->novel++;
  if (!hit) {
    s->hits = 0;
    s->misses++;
  } else if (s->hits == SCAN_IDLE) {
    s->hits = 1; /* no miss since the two reuses: the next reuse ends this run too */
  }
}

/* Whether a hit on frame f finds the detector idle and the page fetched
 * lately (within the last SCAN_RECENT + 1 ticks): then it is nothing to
 * the detector (scan_detect.c, fc_scan_note's rule 1). The tick does not
 * move while idle, so a page hit then stays fetched lately until
 * something wakes the detector. One test for the whole rule and the fast
 * path alike. */
static inline bool fc_scan_idle_hit(const fc_scan *s, const fc_frame *f) {
  return s->hits == SCAN_IDLE && s->tick + 1 - f->seen <= SCAN_RECENT + 1;
}

/* Idle, a hit on a page not fetched lately (fc_scan_note's rule 1): the
 * first page of a new run of new pages, and nothing else (the run of keys
 * does not see it; it is no scan's page). The detector is awake again. */
static inline void fc_scan_wake(fc_scan *s, uint64_t key) {
  s->tick++;
  s->any = true;
  s->prev = s->last;
  s->last = key;
  fc_scan_count_new(s, key, true);
  s->last_scan = false;
}

/* A reuse: a hit on a page fetched lately while a run of new pages is open
 * (fc_scan_note's rule 3). The first since the last miss is noted, the
 * second ends the run of new pages (remembered if it was long) and the
 * detector goes idle. Nothing else: the run of keys does not see it, and
 * it is no scan's page. */
static inline void fc_scan_reuse(hs_frame_cache *c, uint64_t key) {
  fc_scan *s = &c->scan;
  s->tick++;
  s->any = true;
  s->prev = s->last;
  s->last = key;
  if (s->hits) {
    if (s->novel > c->scan_run)
      fc_scan_novel_end(c); /* remembered */
    else
      s->novel = s->misses = 0;
    s->hits = SCAN_IDLE;
  } else {
    s->hits = 1;
  }
  s->last_scan = false;
}

void fc_scan_ask_run(hs_frame_cache *c);
void fc_scan_ask_heads(hs_frame_cache *c);

/* ---- the scan detector's fast path ---------------------------------------
 *
 * fc_scan_note runs on every access: a step along the run being followed
 * (a scan's next page), a page near it, or a page away from it (a lookup's
 * root, inner page and leaf), each moving a few counters by one and
 * remembering a key or two, the answer following from them and from flags
 * the history set once per run. fc_scan_fast is the same rule, inline in
 * the fetch, laid out for that. Two kinds of hit end it at once, as they
 * end the rule: a hit on a page fetched lately while the detector is idle
 * (rule 1: nothing, one test of the frame's tick), and a reuse (rule 3:
 * fc_scan_reuse, a counter). For the rest (pages not fetched lately, hits
 * or misses) it first works out what the access is (where the key is from
 * the run and the last outlier, whether the run of new pages goes on)
 * without changing anything, returning FC_SCAN_SLOW for the kinds it
 * leaves to fc_scan_note whole:
 *
 *  - the first SCAN_RECENT + 1 accesses (the tick still that low, or
 *    wrapped: a frame's `seen` of 0 then needs a test of its own), a cache
 *    whose scan_run is below SCAN_CONFIRM_NEW (0: no detection), the
 *    boundary key (or, without one, the unused boundary_key value);
 *  - a miss that may be the SCAN_AGAIN'th in a row on a key the ring
 *    recycled (the scan fits: its start is marked in the history).
 *
 * Then it makes fc_scan_note's changes in place, in the same order, with
 * the rare parts out of line: a run or run of new pages longer than
 * scan_run ending (remembered in the history), the history asked once per
 * run (fc_scan_ask_run, fc_scan_ask_heads). With scan_run at least
 * SCAN_CONFIRM_NEW and misses never more than new pages, "too short to be
 * anything" is two comparisons.
 *
 * fc_scan_note stays the rule; this is a copy of most of it:
 * tests/cache/test_scan_fast.c drives random and structured key sequences
 * through both and asserts the same answers and the same state after every
 * access (and no change on a bail-out), and a debug build (HOTSET_DEBUG)
 * checks every access the fast path takes against fc_scan_note. A change
 * to a rule changes both, or makes the fast path bail on what it changes. */
#define FC_SCAN_SLOW   2
#define FC_SCAN_FOLLOW 3

/* The fast path's first part: the accesses that end it at once (idle,
 * the page before, a reuse), with their changes made, or FC_SCAN_SLOW or
 * FC_SCAN_FOLLOW having changed nothing: fc_scan_note's access, or
 * fc_scan_follow's (a page not fetched lately). Split so that the hit
 * path takes the first kind in a function that saves no register, and
 * goes out of line for the rest (frame_cache.c, fetch_access_hit);
 * fc_scan_fast is the two in turn. */
__attribute__((always_inline)) static inline int fc_scan_front(hs_frame_cache *c, uint64_t key,
                                                               const fc_frame *f) {
  fc_scan *s = &c->scan;
  /* Idle, a hit is nothing (a page fetched lately) or the first page of a
   * run of new pages. */
  if (f && s->hits == SCAN_IDLE && key != c->boundary_key) {
    if (!fc_scan_idle_hit(s, f)) fc_scan_wake(s, key);
    return 0;
  }
  uint32_t tick = s->tick + 1;
  if (__builtin_expect(tick <= c->scan_fast_after || key == c->boundary_key, 0))
    return FC_SCAN_SLOW;
  if (__builtin_expect(key == s->last, 0)) return s->last_scan;
  if (__builtin_expect(key == s->prev, 0)) {
    /* Back to the page before: neither extends nor breaks anything. */
    s->prev = s->last;
    s->last = key;
    return s->last_scan;
  }
  /* A reuse counts towards the end of the run of new pages, nothing
   * more. (A frame's seen of 0 is never within SCAN_RECENT + 1 of a tick
   * past it.) */
  if (f && s->novel && tick - f->seen <= SCAN_RECENT + 1) {
    fc_scan_reuse(c, key);
    return 0;
  }
  return FC_SCAN_FOLLOW;
}

/* The fast path's second part: a page not fetched lately, hit or miss,
 * once fc_scan_front has said so (FC_SCAN_FOLLOW). */
__attribute__((always_inline)) static inline int fc_scan_follow(hs_frame_cache *c, uint64_t key,
                                                                const fc_frame *f) {
  fc_scan *s = &c->scan;
  uint32_t scan_run = c->scan_run, tick = s->tick + 1;
  /* What the access is: a page not fetched lately, hit or miss. */
  bool hit = f != NULL;
  uint64_t pos = s->pos;
  uint64_t up = key > pos ? key - pos : 0, down = key < pos ? pos - key : 0;
  uint32_t run = s->run;
  enum { STEP, NEAR, OUTLIER, RESTART_AT_ALT, RESTART } kind = NEAR;
  if ((up && up <= SCAN_FWD && s->dir >= 0) || (down && down <= SCAN_FWD && s->dir <= 0)) {
    kind = STEP;
    run++;
  } else if (!(up && up <= SCAN_BACK) && !(down && down <= SCAN_BACK)) {
    /* Near the last outlier (1 to SCAN_FWD away): a new run began there. */
    uint64_t alt = s->alt;
    kind = OUTLIER;
    if (s->outl && (key > alt ? key - alt : alt - key) - 1 < SCAN_FWD)
      kind = RESTART_AT_ALT, run = 2;
    else if (s->outl >= SCAN_OUTLIERS || 2 * (s->outl_total + 1) > run + 8)
      kind = RESTART, run = 1;
  }
  uint32_t novel = s->novel + 1;
  bool too_short = run < SCAN_CONFIRM && novel < SCAN_CONFIRM_NEW;
  if (__builtin_expect(s->ghost_hits == SCAN_AGAIN - 1 && !hit && !too_short, 0))
    return FC_SCAN_SLOW;

  /* What it changes, in fc_scan_note's order. */
  s->tick = tick;
  s->prev = s->last;
  s->last = key;
  if (kind == OUTLIER) {
    s->outl++;
    s->outl_total++;
    s->alt = key;
  } else if (kind == STEP) {
    s->run = run;
    s->pos = key;
    s->outl = 0;
    s->dir = up ? 1 : -1;
  } else if (kind != NEAR) {
    /* The run restarts, at the last outlier (two outliers near each
     * other) or here. */
    if (s->run > scan_run) fc_scan_run_ended(c); /* remembered */
    s->run = run;
    s->run_start = kind == RESTART ? key : s->alt;
    s->pos = key;
    s->outl = 0;
    s->outl_total = 0;
    s->dir = kind == RESTART ? 0 : key > s->alt ? 1 : -1;
    s->run_long = s->run_small = s->run_known = false;
    s->alt = key;
  }
  fc_scan_count_new(s, key, hit);
  if (too_short) {
    s->last_scan = false;
    return 0;
  }
  /* Past too_short, the history is asked (fc_scan_ask_run says when);
   * a start it cannot hold is answered here: not known (the run's flags
   * are already clear, since the run began or the run of new pages did). */
  if (__builtin_expect(!s->run_known, 0)) {
    if (s->hist_bits & hist_bit(s->run_start))
      fc_scan_ask_run(c);
    else
      s->run_known = true;
  }
  if (__builtin_expect(!s->heads_known && novel >= SCAN_CONFIRM_NEW, 0)) {
    if (s->hist_bits & (hist_bit(s->heads[0]) | hist_bit(s->heads[1]) | hist_bit(s->heads[2])))
      fc_scan_ask_heads(c);
    else
      s->heads_known = true;
  }
  /* fc_scan_note's seq and miss, shorter for scan_run >= SCAN_CONFIRM_NEW
   * and misses <= novel: a run known to be long is a scan from
   * SCAN_CONFIRM pages (before it is past scan_run); a run of new pages
   * known to be long one from SCAN_CONFIRM_NEW (before its misses are
   * past scan_run), and then, as past scan_run misses, it has two. */
  bool seq = s->run_long ? run >= SCAN_CONFIRM : run > scan_run && !s->run_small;
  bool miss = s->miss_long ? !s->miss_small && novel >= SCAN_CONFIRM_NEW
                           : !s->run_small && !s->miss_small && s->misses > scan_run;
  if ((seq || miss) && !hit) s->ghost_hits = ghost_recent(c, key) ? s->ghost_hits + 1 : 0;
  s->last_scan = (seq && kind != OUTLIER && kind != RESTART) || miss;
  return s->last_scan;
}

/* Always inline: the fetch's two callers each want it with their frame
 * known. */
__attribute__((always_inline)) static inline int fc_scan_fast(hs_frame_cache *c, uint64_t key,
                                                              const fc_frame *f) {
  int r = fc_scan_front(c, key, f);
  return r == FC_SCAN_FOLLOW ? fc_scan_follow(c, key, f) : r;
}

/* scan_detect.c: the fast path and then fc_scan_note on a copy of the
 * state before it, stopping a debug build where the two differ. */
bool fc_scan_checked(hs_frame_cache *c, uint64_t key, fc_frame *f);
/* Whether two detector states are the same, field by field. */
bool fc_scan_same(const fc_scan *a, const fc_scan *b);
/* Whether hist_bits, hist_shared and hist_where say what the history
 * holds (each bit set by a start in it, shared by two or more, and
 * hist_where naming an entry with the bit). */
bool fc_scan_index_ok(const fc_scan *s);

/* The detector, as the fetch calls it: the fast path, or the whole rule. */
__attribute__((always_inline)) static inline bool fc_scan_access(hs_frame_cache *c, uint64_t key,
                                                                 fc_frame *f) {
  if (HS_DEBUG_CHECKS) return fc_scan_checked(c, key, f);
  int r = fc_scan_fast(c, key, f);
  if (__builtin_expect(r != FC_SCAN_SLOW, 1)) return r;
  return fc_scan_note(c, key, f);
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

/* HS_OK when the slots, the key table, the overflow list, the pin and frame
 * counts and the policy agree; HS_ERR_CORRUPT with the first disagreement
 * in hs_last_error() otherwise. Takes the cache's mutex. */
hs_status frame_cache_check(hs_frame_cache *c);

#endif
