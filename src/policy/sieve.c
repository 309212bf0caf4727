/*
 * policy/sieve.c — SIEVE: a FIFO queue, one visited bit, and a hand that
 * keeps its place.
 *
 * The algorithm (Zhang, Yang, Yue, Vigfusson & Rashmi, "SIEVE is simpler
 * than LRU: an efficient turn-key eviction algorithm for web caches", NSDI
 * 2024). Entries sit in one queue in insertion order; a new entry goes to the
 * head with its visited bit clear, and a hit sets the bit — nothing moves. To
 * find a victim a hand walks from where it last stopped towards the head: a
 * visited entry has its bit cleared and stays where it is; the first entry
 * not visited is the victim. After the eviction the hand rests on the entry
 * just newer than the victim, and when it runs off the head it starts again
 * at the tail. Unlike CLOCK, a retained entry is not moved behind the new
 * ones, so new entries and survivors do not mix: the survivors drift to the
 * tail end and new entries that are never used again are sieved out fast.
 *
 * Conventions that make it exact against libCacheSim's SIEVE (object and
 * byte mode): the first eviction starts at the tail; the hand is kept as a
 * reference to an entry, and when that entry leaves the hand moves to the
 * next newer entry, or back to "start at the tail" if it was the head. In
 * byte mode each victim frees its own size and the caller asks again until
 * the incoming entry fits, exactly as libCacheSim's evict loop does.
 * `victim` leaves the hand on the victim itself, so asking again (a pin came
 * in between) returns the same entry unless it was hit meanwhile.
 *
 * Pins. A pinned entry is stepped over and its bit left alone (as PostgreSQL
 * does). One full round clears every unpinned bit, so 2n+1 steps find a
 * victim unless every entry is pinned; if concurrent hits keep setting bits
 * faster than the hand clears them, a last round takes the first unpinned
 * entry whatever its bit, so "no victim" means "all pinned".
 *
 * Invariants. Every resident slot is on the queue exactly once, in insertion
 * order; the hand is DL_NIL or a resident slot; the victim is unpinned.
 *
 * Standing: the visited bit (0 or 1). A hit under a ring sets the bit too:
 * one bit is "used once".
 *
 * Cost. A hit is one relaxed load and at most one store to the slot's bit,
 * no lock (HS_POLICY_CONCURRENT_HIT): a hot entry whose bit is already set
 * costs no shared write at all. A victim is O(1) amortized: every bit the
 * hand clears was set by one hit. Insert and evict are O(1) under the
 * policy lock. 9 bytes per slot (8 of links, 1 bit byte).
 *
 * Upcoming victims (the background writer's look-ahead): from the hand
 * towards the head and round, unvisited entries first, then the visited
 * ones. Exact for the first; new entries at the head come before the hand
 * wraps, so the rest is a prediction.
 */
#include "core/error.h"
#include "policy/dlist.h"
#include "policy/policy_impl.h"

#include <stdlib.h>

typedef struct sieve {
  dl_node *links; /* .prev: towards the head (newer) */
  _Atomic uint8_t *visited;
  dl_list queue; /* head: newest; tail: oldest */
  uint32_t hand; /* the next entry to look at; DL_NIL = the tail */
} sieve;

static hs_status sieve_create(hs_policy *p) {
  sieve *s = calloc(1, sizeof *s);
  if (s) {
    s->links = malloc(sizeof *s->links * p->max_slots);
    s->visited = malloc(sizeof *s->visited * p->max_slots);
  }
  if (!s || !s->links || !s->visited) {
    if (s) {
      free(s->links);
      free((void *)s->visited);
    }
    free(s);
    return hs_fail(HS_ERR_NOMEM, 0, "sieve: no memory for %u slots", p->max_slots);
  }
  for (uint32_t i = 0; i < p->max_slots; i++) atomic_init(&s->visited[i], 0);
  dl_init(&s->queue);
  s->hand = DL_NIL;
  p->impl = s;
  return HS_OK;
}

static void sieve_destroy(hs_policy *p) {
  sieve *s = p->impl;
  free(s->links);
  free((void *)s->visited);
  free(s);
}

static void sieve_hit(hs_policy *p, uint32_t slot, const hs_access *a) {
  sieve *s = p->impl;
  (void)a;
  if (!atomic_load_explicit(&s->visited[slot], memory_order_relaxed))
    atomic_store_explicit(&s->visited[slot], 1, memory_order_relaxed);
}

static int64_t sieve_victim(hs_policy *p, const hs_access *incoming, hs_pinned_fn pinned,
                            void *ctx) {
  sieve *s = p->impl;
  (void)incoming;
  uint64_t steps = 2ull * s->queue.count + 1;
  uint32_t i = s->hand;
  for (uint64_t k = 0; k < steps; k++) {
    if (i == DL_NIL) i = s->queue.tail;
    if (!pinned || !pinned(ctx, i)) {
      if (!atomic_load_explicit(&s->visited[i], memory_order_relaxed)) {
        s->hand = i;
        return i;
      }
      atomic_store_explicit(&s->visited[i], 0, memory_order_relaxed);
    }
    i = s->links[i].prev;
  }
  /* Every entry pinned, or hits racing the hand: take any unpinned one. */
  for (uint32_t k = 0; k < s->queue.count; k++) {
    if (i == DL_NIL) i = s->queue.tail;
    if (!pinned || !pinned(ctx, i)) {
      s->hand = i;
      return i;
    }
    i = s->links[i].prev;
  }
  return -1;
}

/* From the hand towards the head and round from the tail: unvisited
 * entries first, then the visited ones the hand would clear. A prediction
 * past the first: new entries come in at the head, which the hand reaches
 * before it comes round to the tail again, and hits set bits meanwhile. */
static uint32_t sieve_upcoming(const hs_policy *p, uint32_t *slots, uint32_t max) {
  const sieve *s = p->impl;
  uint32_t n = 0;
  dl_upcoming_clock(&s->queue, s->links, s->visited, s->hand, slots, &n, max);
  return n;
}

static void sieve_leave(hs_policy *p, uint32_t slot) {
  sieve *s = p->impl;
  if (s->hand == slot) s->hand = s->links[slot].prev;
  dl_remove(&s->queue, s->links, slot, hs_policy_slot_size(p, slot));
}

static void sieve_insert(hs_policy *p, uint32_t slot, const hs_access *a) {
  sieve *s = p->impl;
  atomic_store_explicit(&s->visited[slot], 0, memory_order_relaxed);
  dl_push_head(&s->queue, s->links, slot, a->size);
}

static uint32_t sieve_standing(const hs_policy *p, uint32_t slot) {
  const sieve *s = p->impl;
  return atomic_load_explicit(&s->visited[slot], memory_order_relaxed);
}

static size_t sieve_memory(const hs_policy *p) {
  return sizeof(sieve) + (size_t)p->max_slots * (sizeof(dl_node) + 1);
}

const hs_policy_ops hs_policy_sieve = {
    .name = "sieve",
    .flags = HS_POLICY_CONCURRENT_HIT,
    .summary = "SIEVE: FIFO with a visited bit and a hand that keeps its place",
    .create = sieve_create,
    .destroy = sieve_destroy,
    .hit = sieve_hit,
    .victim = sieve_victim,
    .evict = sieve_leave,
    .insert = sieve_insert,
    .remove = sieve_leave,
    .upcoming = sieve_upcoming,
    .standing = sieve_standing,
    .memory = sieve_memory,
};
