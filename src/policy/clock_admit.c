/*
 * policy/clock_admit.c — clock-sweep that remembers how often pages were
 * read, admits a page only if it has been read more often than the page it
 * would push out, and sends the rest through a ring whose size adapts as
 * ARC's recency list does.
 *
 * What it learns. On a database's buffer traces the pages that matter are
 * read a little more often than the rest over minutes — an index's inner
 * pages and leaves more often than the heap pages they point to — while
 * most misses are pages read once in a long while (a uniform OLTP lookup's
 * heap page, a scan's page). A recency policy forgets a page's frequency
 * when it evicts it; clock-sweep's usage counts even drain the frequent
 * pages whenever the hand goes round faster than they are read. This policy
 * keeps each page's count of reads: a resident page in its slot (the count
 * it came in with, plus its hits), an evicted one in a history of the last
 * `history` x entries pages evicted (a ghost list with a count per key,
 * oldest forgotten first). A miss adds one, and so does a hit, up to 31
 * hits a residency. (Counting a hit only when the hand had come round since
 * the last, so that a burst is one read, was tried: a page read every few
 * hundred requests then kept a count near 1, and a hot set fell to a scan
 * of a few thousand pages.) Every `window` x entries misses all counts are halved, so a count is a
 * decaying average over the last few windows: TinyLFU's aging (Einziger,
 * Friedman & Manes, "TinyLFU: A Highly Efficient Cache Admission Policy",
 * ACM ToS 2017), with exact keys instead of its sketch. Decisions depend
 * only on which keys are equal, so the pool and the simulator, whose keys
 * differ, decide alike.
 *
 * How it decides. Residents live in a clock (PostgreSQL's clock-sweep:
 * usage 0..5, a hit +1, the hand lowers counts and names the first at 0)
 * or on the ring (a FIFO). On a miss the hand names a candidate; the
 * incoming page is admitted in its place only when its remembered count is
 * above the candidate's count (a page back within half a cache's worth of
 * misses of leaving counts one more, as 2Q admits a page whose key is in
 * A1out). On a tie the resident stays: a loop over more pages than the
 * cache then keeps the same part cached every time round, as LIRS does,
 * instead of none. A page not admitted still needs a frame — a buffer pool reads
 * every page into one — so it joins the ring, taking the ring's oldest
 * frame once the ring is full: PostgreSQL's buffer ring, chosen by
 * frequency instead of by the kind of scan. A ring page hit while on the
 * ring joins the clock when the ring comes round to it (lazy promotion, as
 * S3-FIFO's small queue).
 *
 * The ring's size. A fixed small ring suits frequency (uniform lookups,
 * loops, zipfian reads: the clock keeps the most-read pages) and fails
 * recency: index range scans that overlap the last few re-read pages read
 * once a moment ago, which a small ring has already dropped. So the ring's
 * size adapts as ARC's target for its recency list T1 does (Megiddo &
 * Modha, "ARC: A Self-Tuning, Low Overhead Replacement Cache", FAST 2003):
 * two lists of keys, the last `adapt` x entries that left the ring and the
 * last that left the clock. A miss on a key that left the ring means a
 * larger ring would have hit: the ring grows by one frame. A miss on a key
 * that left the clock means a larger clock would have: it shrinks by one.
 * Both lists count evictions, not time, so each compares what one more
 * frame would win on its side, although the ring evicts far more often.
 * The ring's size (a target: pinned ring frames can keep the ring above it
 * for a while) stays within 1 and entries less an eighth (at least one);
 * it starts at `ring` x entries.
 * A larger ring takes the clock's candidate on a refused miss; a smaller
 * one gives its oldest frame to an admitted page.
 *
 * Hill climbing on the measured hit ratio (as Caffeine sizes W-TinyLFU's
 * window) was tried first and dropped: on a real trace the hit ratio of
 * successive samples of 8,000 misses swung by 0.2 with the workload's
 * phases, far more than any ring size changes it.
 *
 * Why it converges. A page read f times per window carries a count near f
 * for as long as it is resident or remembered. A resident page is displaced
 * only by a page whose count is at least its own, so the clock's set moves
 * towards the most-read pages and stays there while the counts do — the
 * set the offline bound fixedset keeps with hindsight. What it cannot
 * learn: pages whose counts differ only by chance (a uniform lookup's heap
 * pages), which fixedset picks with hindsight and no online policy can;
 * and pages read too rarely to be remembered between reads (a history of
 * 4 x entries forgets a page once a cache has missed 4 entries' worth of
 * other pages), so on caches far smaller than what is read it learns less
 * than a sketch would. The ring's adaptation sees one more frame's worth
 * at a time (`adapt` x entries): where a larger ring pays only once it
 * holds a whole range scan (overlapping index scans), it can settle either
 * small or large — on one recorded trace which one depends on the cache's
 * size.
 *
 * Invariants. Each resident slot is in the clock or on the ring, not both;
 * a key is resident or in the history, not both; usage 0..5 and residency
 * hits 0..31 share one byte per slot (255: not resident); the ring's size
 * stays within [1, entries - max(1, entries/8)] (a cache of one entry: 1).
 *
 * Cost. A hit is clock-sweep's or less: one load and, only while the usage
 * can rise or the hit counts, one compare-and-swap on the slot's byte —
 * lock-free (HS_POLICY_CONCURRENT_HIT); once its hits are counted to 31 a
 * hot page's hit writes nothing. A miss looks its key up in three key
 * tables and moves the hand; every `window` x entries misses all counts
 * are halved (amortized O(1)). Memory: 28 bytes per slot, about 34 per
 * history entry and 25 per adaptation key (reported by hs_policy_memory):
 * with the defaults about 160 bytes per entry of the cache, 2 % of an
 * 8 KiB page — the history is most of it, and the price of remembering.
 *
 * Upcoming victims: the ring's oldest frames, then the clock's order as
 * clock-sweep lists it. A prediction: which of the two a miss takes depends
 * on the incoming page.
 */
#include "core/error.h"
#include "policy/dlist.h"
#include "policy/ghost.h"
#include "policy/policy_impl.h"

#include <stdlib.h>
#include <string.h>

#define MAX_USAGE    5u
#define MAX_HITS     31u
#define MAX_COUNT    255u
#define NOT_RESIDENT 255u

enum { P_RING, P_HISTORY, P_WINDOW, P_ADAPT };
enum { ADMITTED = 1, REFUSED = 2 }; /* clock_admit.decided */

static inline uint8_t usage_of(uint8_t b) {
  return b & 7u;
}
static inline uint8_t hits_of(uint8_t b) {
  return b >> 3;
}
static inline uint8_t pack(uint8_t usage, uint8_t hits) {
  return (uint8_t)(usage | hits << 3);
}

typedef struct clock_admit {
  _Atomic uint8_t *state; /* per slot: usage and residency hits, or NOT_RESIDENT */
  uint64_t *key;          /* per slot */
  uint8_t *count;         /* per slot: the count it came in with, this miss included */
  uint8_t *on_ring;       /* per slot */
  dl_node *links;         /* the ring's */
  dl_list ring;           /* head: newest */
  uint32_t ring_size;
  uint64_t hand;
  ghost_list history; /* evicted keys, newest first */
  uint8_t *history_count;
  /* per history entry: the misses so far when it was evicted, modulo 2^32
   * (an entry is forgotten within `history` x entries evictions; only misses
   * that fill a free slot could make that more than 2^32 misses) */
  uint32_t *history_at;
  uint32_t all_misses, soon;
  /* The ring's size adapts, as ARC's target for its recency list: keys
   * that left the ring, keys that left the clock (each the last
   * `adapt` x entries of them). */
  ghost_list ring_ghosts, clock_ghosts;
  uint32_t ring_max; /* the least is one frame */
  bool adapting;
  uint64_t misses, window;
  /* Per slot: the decision victim() took for the page that will come
   * into it (REFUSED: to the ring), and that page's key. Kept by slot, not
   * once, because the pool calls victim() and insert() under separate
   * locks: other threads' victim() calls may come in between. */
  uint8_t *decided;
  uint64_t *decided_key;
} clock_admit;

static void clock_admit_destroy(hs_policy *p) {
  clock_admit *s = p->impl;
  free((void *)s->state);
  free(s->key);
  free(s->count);
  free(s->on_ring);
  free(s->links);
  free(s->decided);
  free(s->decided_key);
  ghost_free(&s->history);
  free(s->history_count);
  free(s->history_at);
  ghost_free(&s->ring_ghosts);
  ghost_free(&s->clock_ghosts);
  free(s);
}

static hs_status clock_admit_create(hs_policy *p) {
  uint32_t n = p->max_slots;
  double h = (double)n * p->param[P_HISTORY];
  uint32_t history = h < 1 ? 1 : h > 1e9 ? 1000000000u : (uint32_t)h;
  clock_admit *s = calloc(1, sizeof *s);
  if (!s) return hs_fail(HS_ERR_NOMEM, 0, "clock-admit: no memory for %u slots", n);
  p->impl = s;
  s->state = malloc(sizeof *s->state * n);
  s->key = calloc(n, sizeof *s->key);
  s->count = calloc(n, 1);
  s->on_ring = calloc(n, 1);
  s->links = malloc(sizeof *s->links * n);
  s->decided = calloc(n, 1);
  s->decided_key = calloc(n, sizeof *s->decided_key);
  s->history_count = calloc(history, 1);
  s->history_at = calloc(history, sizeof *s->history_at);
  double g = (double)n * p->param[P_ADAPT];
  uint32_t adapt = g < 1 ? 1 : g > 1e9 ? 1000000000u : (uint32_t)g;
  uint64_t ks = p->env.key_space;
  /* ghost_init frees what it allocated when it fails: destroy frees the rest */
  bool ghosts_ok = ghost_init(&s->history, history, 0, ks) &&
                   ghost_init(&s->ring_ghosts, adapt, 0, ks) &&
                   ghost_init(&s->clock_ghosts, adapt, 0, ks);
  if (!s->state || !s->key || !s->count || !s->on_ring || !s->links || !s->decided ||
      !s->decided_key || !s->history_count || !s->history_at || !ghosts_ok) {
    clock_admit_destroy(p);
    return hs_fail(HS_ERR_NOMEM, 0, "clock-admit: no memory for %u slots and %u remembered", n,
                   history + 2 * adapt);
  }
  for (uint32_t i = 0; i < n; i++) atomic_init(&s->state[i], NOT_RESIDENT);
  dl_init(&s->ring);
  double ring = (double)n * p->param[P_RING];
  s->ring_size = ring < 1 ? 1 : (uint32_t)ring;
  s->ring_max = n > 1 ? n - (n / 8 ? n / 8 : 1) : 1;
  if (s->ring_size > s->ring_max) s->ring_size = s->ring_max;
  s->adapting = p->param[P_ADAPT] > 0;
  double w = (double)n * p->param[P_WINDOW];
  s->window = w < 16 ? 16 : (uint64_t)w;
  s->soon = n / 2 ? n / 2 : 1;
  return HS_OK;
}

/* ---- counts --------------------------------------------------------------- */

/* Every window's worth of misses, every count halves. */
static void age(hs_policy *p) {
  clock_admit *s = p->impl;
  if (++s->misses < s->window) return;
  s->misses = 0;
  for (uint32_t i = 0; i < p->max_slots; i++) {
    s->count[i] >>= 1;
    uint8_t b = atomic_load_explicit(&s->state[i], memory_order_relaxed);
    /* A residency's hits halve too (a lost race with a hit costs a hit). */
    while (b != NOT_RESIDENT && hits_of(b) > 0 &&
           !atomic_compare_exchange_weak_explicit(&s->state[i], &b,
                                                  pack(usage_of(b), (uint8_t)(hits_of(b) >> 1)),
                                                  memory_order_relaxed, memory_order_relaxed)) {
    }
  }
  for (uint32_t e = 0; e < s->history.max_entries; e++) s->history_count[e] >>= 1;
}

/* What an incoming page has been read: its history's count, 0 if none. */
static uint32_t remembered(const clock_admit *s, uint64_t key) {
  uint32_t e = ghost_find(&s->history, key);
  if (e == KM_ABSENT) return 0;
  /* Back soon after it left: one more, as 2Q admits a page seen twice
   * while its key is in A1out. */
  return s->history_count[e] + ((uint32_t)(s->all_misses - s->history_at[e]) <= s->soon);
}

/* What a resident slot has been read: what it came in with and its hits. */
static uint32_t resident_count(const clock_admit *s, uint32_t slot) {
  uint8_t b = atomic_load_explicit(&s->state[slot], memory_order_relaxed);
  uint32_t c = (uint32_t)s->count[slot] + hits_of(b);
  return c > MAX_COUNT ? MAX_COUNT : c;
}

/* ---- the calls ------------------------------------------------------------ */

static void clock_admit_hit(hs_policy *p, uint32_t slot, const hs_access *a) {
  clock_admit *s = p->impl;
  uint8_t b = atomic_load_explicit(&s->state[slot], memory_order_relaxed);
  if (b == NOT_RESIDENT) return;
  uint8_t cap = a->hint == HS_HINT_RING ? 1 : MAX_USAGE;
  uint8_t u = usage_of(b), h = hits_of(b);
  /* Every hit counts, up to MAX_HITS a residency (halved with the counts):
   * once saturated a hot page's hit writes nothing. */
  bool counts = h < MAX_HITS && a->hint != HS_HINT_RING; /* a scan's read is not a vote */
  if (u >= cap && !counts) return;                       /* nothing to raise: no shared write */
  uint8_t nb = pack(u < cap ? (uint8_t)(u + 1) : u, counts ? (uint8_t)(h + 1) : h);
  atomic_compare_exchange_strong_explicit(&s->state[slot], &b, nb, memory_order_relaxed,
                                          memory_order_relaxed);
}

/* The clock's candidate: clock-sweep's hand over the slots not on the
 * ring; -1 if every one is pinned or on the ring. */
static int64_t clock_candidate(hs_policy *p, hs_pinned_fn pinned, void *ctx) {
  clock_admit *s = p->impl;
  uint32_t tries = p->max_slots;
  for (;;) {
    uint32_t i = (uint32_t)(s->hand++ % p->max_slots);
    uint8_t b = atomic_load_explicit(&s->state[i], memory_order_relaxed);
    if (b != NOT_RESIDENT && !s->on_ring[i] && !(pinned && pinned(ctx, i))) {
      if (usage_of(b) == 0) return i;
      while (!atomic_compare_exchange_strong_explicit(&s->state[i], &b,
                                                      pack((uint8_t)(usage_of(b) - 1), hits_of(b)),
                                                      memory_order_relaxed, memory_order_relaxed))
        if (usage_of(b) == 0) break;
      tries = p->max_slots;
      continue;
    }
    if (--tries == 0) return -1;
  }
}

/* The ring's oldest frame that can go: a frame hit while on the ring
 * joins the clock instead (it keeps its usage and hits). */
static int64_t ring_candidate(hs_policy *p, hs_pinned_fn pinned, void *ctx) {
  clock_admit *s = p->impl;
  uint32_t i = s->ring.tail;
  while (i != DL_NIL) {
    uint32_t older = s->links[i].prev;
    uint8_t b = atomic_load_explicit(&s->state[i], memory_order_relaxed);
    if (hits_of(b) > 0) {
      dl_remove(&s->ring, s->links, i, 0);
      s->on_ring[i] = 0;
    } else if (!(pinned && pinned(ctx, i))) {
      return i;
    }
    i = older;
  }
  return -1;
}

static int64_t clock_admit_victim(hs_policy *p, const hs_access *incoming, hs_pinned_fn pinned,
                                  void *ctx) {
  clock_admit *s = p->impl;
  int64_t clock = clock_candidate(p, pinned, ctx);
  /* Admitted only if read more often than the page it would push out: on
   * a tie the resident stays (a loop over more pages than the cache then
   * keeps the same part cached every time round, instead of none). */
  bool admit = clock >= 0 &&
               (!incoming || remembered(s, incoming->key) > resident_count(s, (uint32_t)clock));
  int64_t chosen = -1;
  if (admit) {
    /* The ring is over its size (it has just been made smaller): the
     * admitted page takes a ring frame, and the clock grows by one. */
    if (s->ring.count > s->ring_size) chosen = ring_candidate(p, pinned, ctx);
    if (chosen < 0) chosen = clock;
  } else {
    /* Refused: through the ring, its oldest frame once it is full; until
     * then the refused page takes the clock's candidate and joins it. */
    if (s->ring.count >= s->ring_size) chosen = ring_candidate(p, pinned, ctx);
    if (chosen < 0) chosen = clock;
    /* Nothing in the clock can go: the ring's oldest, or, if the ring's
     * frames were all hit (and have just joined the clock), the clock's. */
    if (chosen < 0) chosen = ring_candidate(p, pinned, ctx);
    if (chosen < 0) chosen = clock_candidate(p, pinned, ctx);
  }
  if (chosen >= 0 && incoming) {
    s->decided[chosen] = admit ? ADMITTED : REFUSED;
    s->decided_key[chosen] = incoming->key;
  }
  return chosen;
}

static void clock_admit_leave(hs_policy *p, uint32_t slot, bool remember) {
  clock_admit *s = p->impl;
  if (remember && s->adapting)
    ghost_add(s->on_ring[slot] ? &s->ring_ghosts : &s->clock_ghosts, s->key[slot], 1);
  if (remember) {
    uint32_t c = resident_count(s, slot);
    uint32_t e = ghost_add(&s->history, s->key[slot], 1);
    if (e != KM_ABSENT) {
      s->history_count[e] = (uint8_t)c;
      s->history_at[e] = s->all_misses;
    }
  }
  if (s->on_ring[slot]) {
    dl_remove(&s->ring, s->links, slot, 0);
    s->on_ring[slot] = 0;
  }
  atomic_store_explicit(&s->state[slot], NOT_RESIDENT, memory_order_relaxed);
}

static void clock_admit_evict(hs_policy *p, uint32_t slot) {
  clock_admit_leave(p, slot, true);
}

static void clock_admit_remove(hs_policy *p, uint32_t slot) {
  clock_admit_leave(p, slot, false);
}

static void clock_admit_insert(hs_policy *p, uint32_t slot, const hs_access *a) {
  clock_admit *s = p->impl;
  uint32_t c = 1;
  uint32_t e = ghost_find(&s->history, a->key);
  if (e != KM_ABSENT) {
    c += s->history_count[e];
    ghost_remove(&s->history, e);
  }
  if (s->adapting) {
    uint32_t g = ghost_find(&s->ring_ghosts, a->key);
    if (g != KM_ABSENT) {
      ghost_remove(&s->ring_ghosts, g);
      if (s->ring_size < s->ring_max) s->ring_size++;
    }
    g = ghost_find(&s->clock_ghosts, a->key);
    if (g != KM_ABSENT) {
      ghost_remove(&s->clock_ghosts, g);
      if (s->ring_size > 1) s->ring_size--;
    }
  }
  s->key[slot] = a->key;
  s->count[slot] = (uint8_t)(c > MAX_COUNT ? MAX_COUNT : c);
  bool to_ring = s->decided[slot] == REFUSED && s->decided_key[slot] == a->key;
  s->decided[slot] = 0;
  if (to_ring) {
    dl_push_head(&s->ring, s->links, slot, 0);
    s->on_ring[slot] = 1;
  }
  atomic_store_explicit(&s->state[slot], pack(to_ring ? 0 : 1, 0), memory_order_relaxed);
  s->all_misses++;
  age(p);
}

static uint32_t clock_admit_upcoming(const hs_policy *p, uint32_t *slots, uint32_t max) {
  const clock_admit *s = p->impl;
  uint32_t n = 0;
  /* A refused miss takes a ring frame only once the ring is full. */
  if (s->ring.count >= s->ring_size)
    for (uint32_t i = s->ring.tail; i != DL_NIL && n < max; i = s->links[i].prev)
      if (hits_of(atomic_load_explicit(&s->state[i], memory_order_relaxed)) == 0) slots[n++] = i;
  uint32_t hand = (uint32_t)(s->hand % p->max_slots);
  for (uint8_t u = 0; u <= MAX_USAGE && n < max; u++)
    for (uint32_t d = 0, i = hand; d < p->max_slots && n < max; d++) {
      uint8_t b = atomic_load_explicit(&s->state[i], memory_order_relaxed);
      if (b != NOT_RESIDENT && !s->on_ring[i] && usage_of(b) == u) slots[n++] = i;
      if (++i == p->max_slots) i = 0;
    }
  return n;
}

static uint32_t clock_admit_standing(const hs_policy *p, uint32_t slot) {
  const clock_admit *s = p->impl;
  uint8_t b = atomic_load_explicit(&s->state[slot], memory_order_relaxed);
  if (b == NOT_RESIDENT || s->on_ring[slot]) return 0;
  return 1u + usage_of(b);
}

static uint64_t clock_admit_ghosts(const hs_policy *p) {
  const clock_admit *s = p->impl;
  return ghost_count(&s->history) + ghost_count(&s->ring_ghosts) + ghost_count(&s->clock_ghosts);
}

static void clock_admit_prefetch(const hs_policy *p, uint64_t key) {
  const clock_admit *s = p->impl;
  keymap_prefetch(&s->history.map, key);
}

static size_t clock_admit_memory(const hs_policy *p) {
  const clock_admit *s = p->impl;
  return sizeof *s +
         (size_t)p->max_slots *
             (1 + sizeof *s->key + 1 + 1 + sizeof *s->links + 1 + sizeof *s->decided_key) +
         ghost_memory(&s->history) + s->history.max_entries * (1 + sizeof *s->history_at) +
         ghost_memory(&s->ring_ghosts) + ghost_memory(&s->clock_ghosts);
}

const hs_policy_ops hs_policy_clock_admit = {
    .name = "clock-admit",
    .flags = HS_POLICY_CONCURRENT_HIT,
    .summary = "clock-sweep that admits a page only if read more often than the one it displaces",
    .params =
        {
            {"ring", 1.0 / 64, 0.0, 1.0, false,
             "share of the cache for the probation ring of pages not admitted", false},
            {"history", 4, 0.0, 16.0, false,
             "evicted pages whose counts are remembered, in multiples of the cache's entries",
             false},
            {"window", 20, 1, 1000, false,
             "misses between halvings of every count, in multiples of the cache's entries", false},
            {"adapt", 0.125, 0.0, 4.0, false,
             "keys remembered per side to adapt the ring's size, in multiples of the cache's "
             "entries (0: the ring keeps its first size)",
             false},
        },
    .create = clock_admit_create,
    .destroy = clock_admit_destroy,
    .hit = clock_admit_hit,
    .victim = clock_admit_victim,
    .evict = clock_admit_evict,
    .insert = clock_admit_insert,
    .remove = clock_admit_remove,
    .upcoming = clock_admit_upcoming,
    .standing = clock_admit_standing,
    .ghosts = clock_admit_ghosts,
    .memory = clock_admit_memory,
    .prefetch = clock_admit_prefetch,
};
