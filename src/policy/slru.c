/*
 * policy/slru.c — segmented LRU.
 *
 * The algorithm (Karedla, Love & Wherry, "Caching strategies to improve disk
 * system performance", IEEE Computer 27(3), 1994). The cache is split into
 * LRU segments 0 .. n-1. A missed entry enters segment 0 (probationary) at
 * its MRU end. A hit moves an entry to the MRU end of the next segment up (a
 * hit in the top segment moves it to that segment's MRU end). When a
 * segment above 0 holds more than its share, its LRU entry is demoted to the
 * MRU end of the segment below, which may cascade down to segment 0. The
 * victim is the LRU entry of segment 0. With n = 2 this is the paper's
 * probationary + protected scheme: an entry must be hit once after coming in
 * to be protected, so a scan only ever churns segment 0.
 *
 * Sizes. Segments 1 .. n-1 each hold at most floor(capacity / n) units (in
 * byte mode, bytes); segment 0 holds the rest, so when the cache is full it
 * has at least its equal share. If segment 0 has nothing evictable (empty
 * in byte mode, or all pinned) the victim is the LRU unpinned entry of the
 * lowest segment that has one. An entry larger than a segment's share is
 * still admitted (it is demoted straight back when promoted).
 *
 * Invariants. Every resident slot is on exactly one segment's list, in
 * recency order within the segment; segment j >= 1 holds <= its share of
 * units after every call.
 *
 * Standing: the segment index (0 = probationary, n-1 = most protected). An
 * access under a ring changes nothing: such an entry is not promoted and
 * keeps its old recency, so it never climbs past where "used once" puts it.
 *
 * Cost. A hit is O(1) in object mode: the promoted entry left room in the
 * segment below, so at most one entry is demoted. In byte mode a demoted
 * entry can overflow the segment below in turn, so a hit may cascade down
 * all n-1 levels, each demoting until it fits (amortized O(n): every
 * demotion undoes one promotion). A victim is O(1) unless pinned entries
 * are stepped over, an insertion O(1). Every hit moves list links, so in
 * the pool all calls take the policy lock. 9 bytes per slot.
 *
 * Upcoming victims (the background writer's look-ahead): each segment's LRU
 * end in turn, segment 0 first; exact until the next access.
 */
#include "core/error.h"
#include "policy/dlist.h"
#include "policy/policy_impl.h"

#include <stdlib.h>

#define MAX_SEGMENTS 8

typedef struct slru {
  dl_node *links;
  uint8_t *seg;
  uint32_t nseg;
  uint64_t share;              /* units each segment above 0 may hold */
  dl_list lists[MAX_SEGMENTS]; /* head: MRU */
} slru;

static hs_status slru_create(hs_policy *p) {
  slru *s = calloc(1, sizeof *s);
  if (s) {
    s->links = malloc(sizeof *s->links * p->max_slots);
    s->seg = malloc(sizeof *s->seg * p->max_slots);
  }
  if (!s || !s->links || !s->seg) {
    if (s) {
      free(s->links);
      free(s->seg);
    }
    free(s);
    return hs_fail(HS_ERR_NOMEM, 0, "slru: no memory for %u slots", p->max_slots);
  }
  s->nseg = (uint32_t)p->param[0];
  s->share = p->capacity / s->nseg;
  for (uint32_t j = 0; j < MAX_SEGMENTS; j++) dl_init(&s->lists[j]);
  p->impl = s;
  return HS_OK;
}

static void slru_destroy(hs_policy *p) {
  slru *s = p->impl;
  free(s->links);
  free(s->seg);
  free(s);
}

static void slru_hit(hs_policy *p, uint32_t slot, const hs_access *a) {
  slru *s = p->impl;
  if (a->hint == HS_HINT_RING) return;
  uint32_t j = s->seg[slot];
  if (j + 1 == s->nseg) {
    dl_move_to_head(&s->lists[j], s->links, slot);
    return;
  }
  uint32_t size = hs_policy_slot_size(p, slot);
  dl_remove(&s->lists[j], s->links, slot, size);
  dl_push_head(&s->lists[j + 1], s->links, slot, size);
  s->seg[slot] = (uint8_t)(j + 1);
  /* Overflow cascades down: each segment passes its LRU entries on. */
  for (uint32_t k = j + 1; k >= 1; k--) {
    dl_list *l = &s->lists[k];
    while (l->units > s->share) {
      uint32_t t = l->tail, tsize = hs_policy_slot_size(p, t);
      dl_remove(l, s->links, t, tsize);
      dl_push_head(&s->lists[k - 1], s->links, t, tsize);
      s->seg[t] = (uint8_t)(k - 1);
    }
  }
}

static int64_t slru_victim(hs_policy *p, const hs_access *incoming, hs_pinned_fn pinned,
                           void *ctx) {
  slru *s = p->impl;
  (void)incoming;
  for (uint32_t j = 0; j < s->nseg; j++)
    for (uint32_t i = s->lists[j].tail; i != DL_NIL; i = s->links[i].prev)
      if (!pinned || !pinned(ctx, i)) return i;
  return -1;
}

/* Segment 0's LRU end onwards, then the higher segments': the order victim
 * takes them in until the next access. */
static uint32_t slru_upcoming(const hs_policy *p, uint32_t *slots, uint32_t max) {
  const slru *s = p->impl;
  uint32_t n = 0;
  for (uint32_t j = 0; j < s->nseg; j++) dl_upcoming(&s->lists[j], s->links, slots, &n, max);
  return n;
}

static void slru_leave(hs_policy *p, uint32_t slot) {
  slru *s = p->impl;
  dl_remove(&s->lists[s->seg[slot]], s->links, slot, hs_policy_slot_size(p, slot));
}

static void slru_insert(hs_policy *p, uint32_t slot, const hs_access *a) {
  slru *s = p->impl;
  s->seg[slot] = 0;
  dl_push_head(&s->lists[0], s->links, slot, a->size);
}

static uint32_t slru_standing(const hs_policy *p, uint32_t slot) {
  const slru *s = p->impl;
  return s->seg[slot];
}

static size_t slru_memory(const hs_policy *p) {
  return sizeof(slru) + (size_t)p->max_slots * (sizeof(dl_node) + 1);
}

const hs_policy_ops hs_policy_slru = {
    .name = "slru",
    .summary = "segmented LRU: a hit promotes one segment up",
    .params =
        {
            {"segments", 2, 1, MAX_SEGMENTS, true, "number of LRU segments of equal size", false},
        },
    .create = slru_create,
    .destroy = slru_destroy,
    .hit = slru_hit,
    .victim = slru_victim,
    .evict = slru_leave,
    .insert = slru_insert,
    .remove = slru_leave,
    .upcoming = slru_upcoming,
    .standing = slru_standing,
    .memory = slru_memory,
};
