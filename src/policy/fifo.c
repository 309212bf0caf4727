/*
 * policy/fifo.c — first in, first out.
 *
 * The algorithm. Entries leave in the order they came in; a hit changes
 * nothing. It is the simplest policy there is, and the baseline every clock
 * algorithm improves on (a clock is FIFO plus a second chance). It is not a
 * stack algorithm: Belady's anomaly (1969) — a bigger FIFO cache can miss
 * more — was found on it.
 *
 * Invariants. Every resident slot is on the queue exactly once, in insertion
 * order; the victim is the oldest slot the caller does not report pinned.
 *
 * Cost. O(1) per insertion and eviction, nothing at all per hit — so in the
 * pool a hit never takes the policy lock. 8 bytes of links per slot.
 *
 * Upcoming victims (the background writer's look-ahead): the queue from
 * its oldest end, exact (a hit changes nothing).
 */
#include "core/error.h"
#include "policy/dlist.h"
#include "policy/policy_impl.h"

#include <stdlib.h>

typedef struct fifo {
  dl_node *links;
  dl_list queue; /* head: newest */
} fifo;

static hs_status fifo_create(hs_policy *p) {
  fifo *s = calloc(1, sizeof *s);
  if (s) s->links = malloc(sizeof *s->links * p->max_slots);
  if (!s || !s->links) {
    free(s);
    return hs_fail(HS_ERR_NOMEM, 0, "fifo: no memory for %u slots", p->max_slots);
  }
  dl_init(&s->queue);
  p->impl = s;
  return HS_OK;
}

static void fifo_destroy(hs_policy *p) {
  fifo *s = p->impl;
  free(s->links);
  free(s);
}

static void fifo_hit(hs_policy *p, uint32_t slot, const hs_access *a) {
  (void)p;
  (void)slot;
  (void)a;
}

static int64_t fifo_victim(hs_policy *p, const hs_access *incoming, hs_pinned_fn pinned,
                           void *ctx) {
  fifo *s = p->impl;
  (void)incoming;
  for (uint32_t i = s->queue.tail; i != DL_NIL; i = s->links[i].prev)
    if (!pinned || !pinned(ctx, i)) return i;
  return -1;
}

/* The oldest onwards: exact, since a hit changes nothing. */
static uint32_t fifo_upcoming(const hs_policy *p, uint32_t *slots, uint32_t max) {
  const fifo *s = p->impl;
  uint32_t n = 0;
  dl_upcoming(&s->queue, s->links, slots, &n, max);
  return n;
}

static void fifo_leave(hs_policy *p, uint32_t slot) {
  fifo *s = p->impl;
  dl_remove(&s->queue, s->links, slot, hs_policy_slot_size(p, slot));
}

static void fifo_insert(hs_policy *p, uint32_t slot, const hs_access *a) {
  fifo *s = p->impl;
  dl_push_head(&s->queue, s->links, slot, a->size);
}

static size_t fifo_memory(const hs_policy *p) {
  return sizeof(fifo) + (size_t)p->max_slots * sizeof(dl_node);
}

const hs_policy_ops hs_policy_fifo = {
    .name = "fifo",
    .flags = HS_POLICY_CONCURRENT_HIT,
    .summary = "first in, first out",
    .create = fifo_create,
    .destroy = fifo_destroy,
    .hit = fifo_hit,
    .victim = fifo_victim,
    .evict = fifo_leave,
    .insert = fifo_insert,
    .remove = fifo_leave,
    .upcoming = fifo_upcoming,
    .memory = fifo_memory,
};
