/*
 * policy/lru.c — least recently used.
 *
 * The algorithm. Resident entries form one list ordered by their last
 * access; a hit moves the entry to the head, an insertion puts it there, and
 * the victim is the entry at the tail — the one unused for longest. It is
 * the textbook policy (Mattson et al. 1970 showed it is a stack algorithm:
 * a bigger LRU cache always holds a superset of a smaller one, which is what
 * makes one-pass miss-ratio curves possible) and what PostgreSQL used until
 * 7.4. Its known weakness is the reason this project exists: one sequential
 * scan larger than the cache walks every hot entry to the tail and out.
 *
 * Invariants. Every resident slot is on the list exactly once; list order is
 * recency order; the victim is the least recent slot the caller does not
 * report pinned.
 *
 * Cost. O(1) per hit and insertion (two link updates); the victim is O(1)
 * unless pinned entries sit at the tail, which are stepped over. 8 bytes of
 * links per slot. In the pool every hit takes the policy lock to move the
 * entry — the contention that made PostgreSQL 8.1 give LRU up.
 *
 * Hints. An access under a ring (HS_HINT_RING) does not move a resident
 * entry: a page a scan touches again keeps its old recency. With
 * recycle_first a page read in by a ring enters at the tail, the first to
 * go (the 2003 proposal on pgsql-hackers).
 *
 * Upcoming victims (the background writer's look-ahead): the list from its
 * tail, exact until the next access.
 */
#include "core/error.h"
#include "policy/dlist.h"
#include "policy/policy_impl.h"

#include <stdlib.h>

typedef struct lru {
  dl_node *links;
  dl_list list;
} lru;

static hs_status lru_create(hs_policy *p) {
  lru *s = calloc(1, sizeof *s);
  if (s) s->links = malloc(sizeof *s->links * p->max_slots);
  if (!s || !s->links) {
    free(s);
    return hs_fail(HS_ERR_NOMEM, 0, "lru: no memory for %u slots", p->max_slots);
  }
  dl_init(&s->list);
  p->impl = s;
  return HS_OK;
}

static void lru_destroy(hs_policy *p) {
  lru *s = p->impl;
  free(s->links);
  free(s);
}

static void lru_hit(hs_policy *p, uint32_t slot, const hs_access *a) {
  lru *s = p->impl;
  if (a->hint == HS_HINT_RING) return;
  dl_move_to_head(&s->list, s->links, slot);
}

static int64_t lru_victim(hs_policy *p, const hs_access *incoming, hs_pinned_fn pinned, void *ctx) {
  lru *s = p->impl;
  (void)incoming;
  for (uint32_t i = s->list.tail; i != DL_NIL; i = s->links[i].prev)
    if (!pinned || !pinned(ctx, i)) return i;
  return -1;
}

/* The tail onwards: exact until the next access. */
static uint32_t lru_upcoming(const hs_policy *p, uint32_t *slots, uint32_t max) {
  const lru *s = p->impl;
  uint32_t n = 0;
  dl_upcoming(&s->list, s->links, slots, &n, max);
  return n;
}

static void lru_leave(hs_policy *p, uint32_t slot) {
  lru *s = p->impl;
  dl_remove(&s->list, s->links, slot, hs_policy_slot_size(p, slot));
}

static void lru_insert(hs_policy *p, uint32_t slot, const hs_access *a) {
  lru *s = p->impl;
  /* Recycle first: a page a ring read goes straight to the victim end. */
  if (a->hint == HS_HINT_RING && a->recycle_first)
    dl_push_tail(&s->list, s->links, slot, a->size);
  else
    dl_push_head(&s->list, s->links, slot, a->size);
}

/* A victim's slot refilled at once (hs_policy_replace): the new entry
 * goes where lru_insert puts it — the head, or the tail for a ring's page
 * with recycle_first — and the slot, already on the list, just moves
 * there. lru keeps no ghosts, so `forget` changes nothing; the size is the
 * victim's (the caller's promise), so the list's units stay. */
static void lru_replace(hs_policy *p, uint32_t slot, bool forget, const hs_access *a) {
  lru *s = p->impl;
  (void)forget;
  if (a->hint == HS_HINT_RING && a->recycle_first) {
    dl_remove(&s->list, s->links, slot, a->size);
    dl_push_tail(&s->list, s->links, slot, a->size);
  } else {
    dl_move_to_head(&s->list, s->links, slot);
  }
}

static size_t lru_memory(const hs_policy *p) {
  return sizeof(lru) + (size_t)p->max_slots * sizeof(dl_node);
}

const hs_policy_ops hs_policy_lru = {
    .name = "lru",
    .summary = "least recently used",
    .create = lru_create,
    .destroy = lru_destroy,
    .hit = lru_hit,
    .victim = lru_victim,
    .evict = lru_leave,
    .insert = lru_insert,
    .remove = lru_leave,
    .replace = lru_replace,
    .upcoming = lru_upcoming,
    .memory = lru_memory,
};
