/*
 * policy/clock.c — CLOCK, second chance with one reference bit.
 *
 * The algorithm (Corbató 1968, "A paging experiment with the Multics
 * system"). Slots sit on a circle with a hand. An inserted entry gets its
 * reference bit clear; a hit sets it. To find a victim the hand moves
 * round: a set bit is cleared and the hand moves on (a second chance); the
 * first entry with a clear bit is the victim. It approximates LRU — an entry
 * referenced since the hand last passed survives one more round — without
 * moving anything on a hit.
 *
 * Conventions that make it exact against other implementations (libCacheSim's
 * "Clock" with one bit): a new entry starts with its bit clear; the hand
 * starts at the first slot inserted, visits entries in insertion order, and
 * an entry inserted into the victim's place takes that place in the circle,
 * so the hand next looks at the entry after it. Here the circle is a FIFO
 * queue: the hand is its tail, "moving on" re-queues the entry at the head.
 *
 * Invariants. Every resident slot is on the circle once; the victim has a
 * clear bit, or is the first unpinned slot after a full round cleared every
 * bit. In byte mode each victim frees its own size; the caller asks again
 * until the incoming entry fits.
 *
 * Threads (HS_POLICY_CONCURRENT_HIT). A hit is one load and at most one
 * store to the slot's bit, an atomic byte, so the pool calls it without a
 * lock; the victim search re-queues entries on the circle, so it, insert,
 * evict and remove run under the pool's policy lock (not
 * HS_POLICY_CONCURRENT, which clock-sweep alone has: its hand is an atomic
 * counter over a fixed array, with no list to move).
 *
 * Cost. A victim costs O(1) amortized: each bit cleared was set by one hit.
 * 8 bytes of links + 1 byte per slot.
 *
 * Upcoming victims (the background writer's look-ahead): the hand's next
 * two rounds without moving it — clear bits first, then the set ones it
 * would clear. Exact for the first; later hits set bits again.
 */
#include "core/error.h"
#include "policy/dlist.h"
#include "policy/policy_impl.h"

#include <stdlib.h>

typedef struct clock_policy {
  dl_node *links;
  _Atomic uint8_t *referenced;
  dl_list circle; /* tail: the hand; head: just behind it */
} clock_policy;

static hs_status clock_create(hs_policy *p) {
  clock_policy *s = calloc(1, sizeof *s);
  if (s) {
    s->links = malloc(sizeof *s->links * p->max_slots);
    s->referenced = malloc(sizeof *s->referenced * p->max_slots);
  }
  if (!s || !s->links || !s->referenced) {
    if (s) {
      free(s->links);
      free((void *)s->referenced);
    }
    free(s);
    return hs_fail(HS_ERR_NOMEM, 0, "clock: no memory for %u slots", p->max_slots);
  }
  for (uint32_t i = 0; i < p->max_slots; i++) atomic_init(&s->referenced[i], 0);
  dl_init(&s->circle);
  p->impl = s;
  return HS_OK;
}

static void clock_destroy(hs_policy *p) {
  clock_policy *s = p->impl;
  free(s->links);
  free((void *)s->referenced);
  free(s);
}

static void clock_hit(hs_policy *p, uint32_t slot, const hs_access *a) {
  clock_policy *s = p->impl;
  (void)a; /* a ring access sets the bit too: one bit is "used once" */
  if (!atomic_load_explicit(&s->referenced[slot], memory_order_relaxed))
    atomic_store_explicit(&s->referenced[slot], 1, memory_order_relaxed);
}

static int64_t clock_victim(hs_policy *p, const hs_access *incoming, hs_pinned_fn pinned,
                            void *ctx) {
  clock_policy *s = p->impl;
  (void)incoming;
  /* Two rounds clear every bit; a third finds a clear one unless all are
   * pinned or hits keep setting them. */
  uint64_t steps = 3ull * s->circle.count;
  for (uint64_t k = 0; k < steps && s->circle.tail != DL_NIL; k++) {
    uint32_t i = s->circle.tail;
    bool is_pinned = pinned && pinned(ctx, i);
    if (!is_pinned && !atomic_load_explicit(&s->referenced[i], memory_order_relaxed)) return i;
    if (!is_pinned) atomic_store_explicit(&s->referenced[i], 0, memory_order_relaxed);
    dl_remove(&s->circle, s->links, i, 0);
    dl_push_head(&s->circle, s->links, i, 0);
  }
  /* Every entry pinned, or hits from other threads setting bits as fast as
   * the hand clears them (CONCURRENT_HIT): take the first unpinned one, as
   * sieve and s3fifo do, rather than answer "no victim" with pages free. */
  for (uint32_t i = s->circle.tail; i != DL_NIL; i = s->links[i].prev)
    if (!pinned || !pinned(ctx, i)) return i;
  return -1;
}

/* The hand's next two rounds: clear bits first, then the set ones it
 * would clear on the way. A prediction past the first: hits meanwhile set
 * bits again. */
static uint32_t clock_upcoming(const hs_policy *p, uint32_t *slots, uint32_t max) {
  const clock_policy *s = p->impl;
  uint32_t n = 0;
  dl_upcoming_clock(&s->circle, s->links, s->referenced, DL_NIL, slots, &n, max);
  return n;
}

static void clock_leave(hs_policy *p, uint32_t slot) {
  clock_policy *s = p->impl;
  dl_remove(&s->circle, s->links, slot, hs_policy_slot_size(p, slot));
}

static void clock_insert(hs_policy *p, uint32_t slot, const hs_access *a) {
  clock_policy *s = p->impl;
  atomic_store_explicit(&s->referenced[slot], 0, memory_order_relaxed);
  dl_push_head(&s->circle, s->links, slot, a->size);
}

static uint32_t clock_standing(const hs_policy *p, uint32_t slot) {
  const clock_policy *s = p->impl;
  return atomic_load_explicit(&s->referenced[slot], memory_order_relaxed);
}

static size_t clock_memory(const hs_policy *p) {
  return sizeof(clock_policy) + (size_t)p->max_slots * (sizeof(dl_node) + 1);
}

const hs_policy_ops hs_policy_clock = {
    .name = "clock",
    .flags = HS_POLICY_CONCURRENT_HIT,
    .summary = "CLOCK: second chance with one reference bit",
    .create = clock_create,
    .destroy = clock_destroy,
    .hit = clock_hit,
    .victim = clock_victim,
    .evict = clock_leave,
    .insert = clock_insert,
    .remove = clock_leave,
    .upcoming = clock_upcoming,
    .standing = clock_standing,
    .memory = clock_memory,
};
