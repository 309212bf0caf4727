/*
 * policy/clock_sweep.c — PostgreSQL's clock-sweep, the pool's default.
 *
 * The algorithm. Every entry has a small usage count (0..5). An access
 * raises it by one, up to 5; a new entry starts at 1. To find a victim a
 * single clock hand walks the slots in a circle: an unpinned entry with a
 * non-zero count has it lowered by one and is passed over; the first
 * unpinned entry whose count is 0 is the victim. A page touched k times
 * survives about k sweeps of the hand.
 *
 * Where it comes from. It is the GCLOCK family (generalized CLOCK, Smith
 * 1978; Nicola, Dan & Dias 1992), which PostgreSQL 8.1 (2005) adopted in place
 * of its ARC/2Q list, because every hit on a list policy must take the list's
 * lock, and that lock had become the bottleneck on multi-core machines. With
 * a clock the hit path touches only the entry itself.
 *
 * Invariants. 0 <= usage <= 5 for every resident slot (255 marks a slot that
 * holds nothing); the hand visits slots in index order; a pinned entry is
 * never the victim and its count is not lowered (as in PostgreSQL). An
 * access under a ring raises a count of 0 to 1 and no further.
 *
 * Cost. A hit: one load, and a CAS only while the count is below 5 — a hot
 * page at 5 costs no shared write. A victim: amortized O(1) ticks when
 * counts are low, at worst 5 full sweeps; each tick is one fetch-and-add on
 * the shared hand plus a look at one slot. If a whole sweep finds only
 * pinned or empty slots, with no count lowered on the way, the answer is
 * "none" — never a hang. Every call is thread-safe without a lock
 * (HS_POLICY_CONCURRENT, and so HS_POLICY_CONCURRENT_HIT too): two threads
 * may be handed the same victim, and the
 * pool's pin check under the buffer header lock lets only one take it.
 * 1 byte per slot.
 *
 * Upcoming victims (the background writer's look-ahead, as PostgreSQL's
 * BgBufferSync looks ahead of the hand): a slot at distance d from the hand
 * with count u comes at tick u * slots + d; usage-0 slots in hand order
 * first. Exact for the entries there now, with nothing accessed meanwhile.
 */
#include "core/error.h"
#include "policy/policy_impl.h"

#include <stdalign.h>
#include <stdlib.h>

#define MAX_USAGE    5u
#define NOT_RESIDENT 255u

typedef struct clock_sweep {
  alignas(64) _Atomic uint64_t hand; /* ticks so far; the slot is hand % max_slots */
  _Atomic uint8_t *usage;
} clock_sweep;

static hs_status clock_sweep_create(hs_policy *p) {
  clock_sweep *s = aligned_alloc(64, sizeof *s);
  if (s) s->usage = malloc(sizeof *s->usage * p->max_slots);
  if (!s || !s->usage) {
    free(s);
    return hs_fail(HS_ERR_NOMEM, 0, "clock-sweep: no memory for %u slots", p->max_slots);
  }
  atomic_init(&s->hand, 0);
  for (uint32_t i = 0; i < p->max_slots; i++) atomic_init(&s->usage[i], NOT_RESIDENT);
  p->impl = s;
  return HS_OK;
}

static void clock_sweep_destroy(hs_policy *p) {
  clock_sweep *s = p->impl;
  free((void *)s->usage);
  free(s);
}

static void clock_sweep_hit(hs_policy *p, uint32_t slot, const hs_access *a) {
  clock_sweep *s = p->impl;
  uint8_t u = atomic_load_explicit(&s->usage[slot], memory_order_relaxed);
  uint8_t cap = a->hint == HS_HINT_RING ? 1 : MAX_USAGE;
  if (u < cap)
    atomic_compare_exchange_strong_explicit(&s->usage[slot], &u, (uint8_t)(u + 1),
                                            memory_order_relaxed, memory_order_relaxed);
}

static int64_t clock_sweep_victim(hs_policy *p, const hs_access *incoming, hs_pinned_fn pinned,
                                  void *ctx) {
  clock_sweep *s = p->impl;
  (void)incoming;
  /* Ticks left before giving up; reset whenever a count is lowered, since
   * that is progress towards a victim. */
  uint32_t tries = p->max_slots;
  for (;;) {
    uint64_t tick = atomic_fetch_add_explicit(&s->hand, 1, memory_order_relaxed);
    uint32_t i = (uint32_t)(tick % p->max_slots);
    uint8_t u = atomic_load_explicit(&s->usage[i], memory_order_relaxed);
    if (u != NOT_RESIDENT && !(pinned && pinned(ctx, i))) {
      if (u == 0) return i;
      atomic_compare_exchange_strong_explicit(&s->usage[i], &u, (uint8_t)(u - 1),
                                              memory_order_relaxed, memory_order_relaxed);
      tries = p->max_slots;
      continue;
    }
    if (--tries == 0) return -1;
  }
}

/* Ahead of the hand, as PostgreSQL's background writer looks: a slot at
 * distance d from the hand with usage count u is reached with its count at
 * 0 after u full sweeps, at tick u * slots + d, so that is the order, the
 * usage-0 slots first (the ones PostgreSQL's BgBufferSync calls reusable).
 * Exact with nothing accessed meanwhile, for the entries already there;
 * pages brought in meanwhile (count 1) fall in between. Reads only the
 * atomics victim reads, so it runs beside hits and victims. */
static uint32_t clock_sweep_upcoming(const hs_policy *p, uint32_t *slots, uint32_t max) {
  const clock_sweep *s = p->impl;
  uint32_t hand = (uint32_t)(atomic_load_explicit(&s->hand, memory_order_relaxed) % p->max_slots);
  uint32_t n = 0;
  for (uint8_t u = 0; u <= MAX_USAGE && n < max; u++)
    for (uint32_t d = 0, i = hand; d < p->max_slots && n < max; d++) {
      if (atomic_load_explicit(&s->usage[i], memory_order_relaxed) == u) slots[n++] = i;
      if (++i == p->max_slots) i = 0;
    }
  return n;
}

static void clock_sweep_leave(hs_policy *p, uint32_t slot) {
  clock_sweep *s = p->impl;
  atomic_store_explicit(&s->usage[slot], NOT_RESIDENT, memory_order_relaxed);
}

static void clock_sweep_insert(hs_policy *p, uint32_t slot, const hs_access *a) {
  clock_sweep *s = p->impl;
  (void)a;
  atomic_store_explicit(&s->usage[slot], 1, memory_order_relaxed);
}

static uint32_t clock_sweep_standing(const hs_policy *p, uint32_t slot) {
  const clock_sweep *s = p->impl;
  uint8_t u = atomic_load_explicit(&s->usage[slot], memory_order_relaxed);
  return u == NOT_RESIDENT ? 0 : u;
}

static size_t clock_sweep_memory(const hs_policy *p) {
  return sizeof(clock_sweep) + p->max_slots;
}

const hs_policy_ops hs_policy_clock_sweep = {
    .name = "clock-sweep",
    .flags = HS_POLICY_CONCURRENT | HS_POLICY_CONCURRENT_HIT,
    .summary = "PostgreSQL's clock-sweep: usage counts 0..5",
    .create = clock_sweep_create,
    .destroy = clock_sweep_destroy,
    .hit = clock_sweep_hit,
    .victim = clock_sweep_victim,
    .evict = clock_sweep_leave,
    .insert = clock_sweep_insert,
    .remove = clock_sweep_leave,
    .upcoming = clock_sweep_upcoming,
    .standing = clock_sweep_standing,
    .memory = clock_sweep_memory,
};
