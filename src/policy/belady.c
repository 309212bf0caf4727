/*
 * policy/belady.c — Belady's MIN (OPT), the offline optimum.
 *
 * The algorithm (L. A. Belady, "A study of replacement algorithms for a
 * virtual-storage computer", IBM Systems Journal 5(2), 1966; proved optimal
 * for demand paging by Mattson et al. 1970). When room is needed, evict the
 * resident entry whose next access lies furthest in the future; an entry
 * never accessed again (HS_NEXT_NEVER) goes first. It needs the future, so it
 * only runs in the simulator (HS_POLICY_NEEDS_FUTURE | HS_POLICY_SIM_ONLY),
 * which hands every access the request number of the same key's next access
 * (hs_access.next). It is the yardstick: no policy misses less in object
 * mode, so "how far from Belady" measures what a real policy leaves behind.
 *
 * How it is kept. A 4-ary max-heap of resident slots ordered by their next
 * access (each entry holding its key), plus each slot's position in the heap, so a hit (which moves
 * the entry's next access later) is one sift in O(log n), as are an insertion and an eviction. The
 * victim is the heap's top. A pinned top is popped and set aside until an unpinned entry surfaces,
 * then the popped entries are pushed back: the victim changes nothing the caller could observe (the
 * set and the order stay the same), so it may be asked again.
 *
 * Ties. Next-access times of different keys are different request numbers,
 * so the only ties are between entries never accessed again; which of them
 * goes first changes no hit or miss (none of them is ever asked for again,
 * and while any of them is resident none of the others is evicted), so the
 * miss counts match any other correct implementation (libCacheSim's
 * "Belady", whose priority queue breaks those ties its own way). An access
 * whose future is unknown (HS_NEXT_UNKNOWN) sorts as the nearest: the entry
 * is kept as long as possible.
 *
 * Byte mode. Like libCacheSim's "Belady", the caller evicts the furthest-next
 * entry, then the next furthest, until the incoming entry fits. With sizes
 * that vary this is NOT optimal any more — the true optimum for variable
 * sizes is NP-hard (it would sometimes evict two small entries instead of
 * one large one, or bypass a large incoming entry); this is the standard
 * "byte-mode Belady" every simulator reports, an upper bound on what the
 * optimum misses, not the optimum itself. Entries are always admitted (no
 * bypass), also like libCacheSim.
 *
 * Invariants. Every resident slot is in the heap exactly once, at pos[slot];
 * every parent's next access is >= its children's; the victim is the
 * unpinned resident entry with the furthest next access.
 *
 * Standing: 0 = never accessed again (the next victims), 1 = accessed again.
 *
 * Cost. O(log n) per hit, insertion and eviction; a victim is O(1) plus
 * O(log n) per pinned entry stepped over. 36 bytes per slot. Not for the
 * pool (it cannot know the future), so it takes no care about threads.
 *
 * Upcoming victims: none are listed — the choice needs the incoming
 * access's future, which only a miss brings.
 */
#include "core/error.h"
#include "policy/policy_impl.h"

#include <stdlib.h>

/* A heap entry carries its key beside its slot, so a sift compares keys
 * in the heap's own cache lines instead of looking each one up by slot. */
typedef struct heap_entry {
  int64_t next; /* request number of the slot's next access */
  uint32_t slot;
} heap_entry;

typedef struct belady {
  heap_entry *heap;   /* resident slots; heap[0] has the furthest next access */
  uint32_t *pos;      /* slot -> its index in heap */
  heap_entry *popped; /* the victim's scratch: pinned entries set aside */
  uint32_t n;         /* entries in the heap */
} belady;

/* Children per heap node: a 4-ary heap is half as deep as a binary one,
 * and a hit (whose next access only ever moves later) sifts up, one
 * comparison a level. */
#define ARITY 4

static hs_status belady_create(hs_policy *p) {
  belady *s = calloc(1, sizeof *s);
  if (s) {
    s->heap = malloc(sizeof *s->heap * p->max_slots);
    s->pos = malloc(sizeof *s->pos * p->max_slots);
    s->popped = malloc(sizeof *s->popped * p->max_slots);
  }
  if (!s || !s->heap || !s->pos || !s->popped) {
    if (s) {
      free(s->heap);
      free(s->pos);
      free(s->popped);
    }
    free(s);
    return hs_fail(HS_ERR_NOMEM, 0, "belady: no memory for %u slots", p->max_slots);
  }
  p->impl = s;
  return HS_OK;
}

static void belady_destroy(hs_policy *p) {
  belady *s = p->impl;
  free(s->heap);
  free(s->pos);
  free(s->popped);
  free(s);
}

static inline void heap_place(belady *s, uint32_t i, heap_entry e) {
  s->heap[i] = e;
  s->pos[e.slot] = i;
}

/* Moves the entry at index i up while it is further than its parent. */
static void sift_up(belady *s, uint32_t i) {
  heap_entry e = s->heap[i];
  while (i > 0) {
    uint32_t parent = (i - 1) / ARITY;
    if (s->heap[parent].next >= e.next) break;
    heap_place(s, i, s->heap[parent]);
    i = parent;
  }
  heap_place(s, i, e);
}

/* Moves the entry at index i down while a child is further. */
static void sift_down(belady *s, uint32_t i) {
  heap_entry e = s->heap[i];
  for (;;) {
    uint32_t first = ARITY * i + 1;
    if (first >= s->n) break;
    uint32_t end = first + ARITY < s->n ? first + ARITY : s->n, best = first;
    for (uint32_t c = first + 1; c < end; c++)
      if (s->heap[c].next > s->heap[best].next) best = c;
    if (s->heap[best].next <= e.next) break;
    heap_place(s, i, s->heap[best]);
    i = best;
  }
  heap_place(s, i, e);
}

static void heap_push(belady *s, uint32_t slot, int64_t next) {
  heap_place(s, s->n++, (heap_entry){.next = next, .slot = slot});
  sift_up(s, s->n - 1);
}

static void heap_delete(belady *s, uint32_t slot) {
  uint32_t i = s->pos[slot];
  heap_entry last = s->heap[--s->n];
  if (i == s->n) return; /* it was the last element */
  heap_place(s, i, last);
  sift_up(s, i);
  sift_down(s, s->pos[last.slot]);
}

static void belady_hit(hs_policy *p, uint32_t slot, const hs_access *a) {
  belady *s = p->impl;
  uint32_t i = s->pos[slot];
  int64_t old = s->heap[i].next;
  s->heap[i].next = a->next;
  if (a->next > old)
    sift_up(s, i);
  else if (a->next < old)
    sift_down(s, i);
}

static int64_t belady_victim(hs_policy *p, const hs_access *incoming, hs_pinned_fn pinned,
                             void *ctx) {
  belady *s = p->impl;
  (void)incoming;
  int64_t found = -1;
  uint32_t set_aside = 0;
  while (s->n > 0) {
    uint32_t top = s->heap[0].slot;
    if (!pinned || !pinned(ctx, top)) {
      found = top;
      break;
    }
    s->popped[set_aside++] = s->heap[0];
    heap_delete(s, top);
  }
  for (uint32_t i = 0; i < set_aside; i++) heap_push(s, s->popped[i].slot, s->popped[i].next);
  return found;
}

static void belady_leave(hs_policy *p, uint32_t slot) {
  heap_delete(p->impl, slot);
}

static void belady_insert(hs_policy *p, uint32_t slot, const hs_access *a) {
  belady *s = p->impl;
  heap_push(s, slot, a->next);
}

static uint32_t belady_standing(const hs_policy *p, uint32_t slot) {
  const belady *s = p->impl;
  return s->heap[s->pos[slot]].next != HS_NEXT_NEVER;
}

static size_t belady_memory(const hs_policy *p) {
  return sizeof(belady) + (size_t)p->max_slots * (2 * sizeof(heap_entry) + sizeof(uint32_t));
}

const hs_policy_ops hs_policy_belady = {
    .name = "belady",
    .flags = HS_POLICY_NEEDS_FUTURE | HS_POLICY_SIM_ONLY,
    .summary = "Belady's MIN: evict the entry needed furthest in the future (offline)",
    .create = belady_create,
    .destroy = belady_destroy,
    .hit = belady_hit,
    .victim = belady_victim,
    .evict = belady_leave,
    .insert = belady_insert,
    .remove = belady_leave,
    .standing = belady_standing,
    .memory = belady_memory,
};
