/*
 * policy/fixedset.c — the best fixed set, chosen with hindsight: an
 * offline bound beside belady.
 *
 * The bound. Keep, for the whole trace, the `capacity` units of objects
 * read most often (ties: the one first read earlier goes first), and
 * nothing else: each of them misses once, at its first read, and hits
 * ever after; every read of any other object misses and is not cached.
 * Its misses are the requests less the sum, over the set, of each
 * member's reads but one. No cache that keeps a set fixed does better
 * (for equal sizes: swapping a member for an object read less often
 * cannot save misses), and no online policy can know the set in advance.
 * It answers the question belady does not: how much of what is left is
 * frequency — pages read slightly more often over the whole trace, which a
 * recency-based policy forgets as soon as it evicts them — rather than the
 * order of the reads, which only the future can tell (belady). On
 * database traces whose OLTP part is uniform over more pages than the
 * cache, belady is out of reach and the fixed set is the mark a policy
 * that learns frequency aims at.
 *
 * How it runs. The simulator ranks the trace's objects once (by reads,
 * then by first read) and hands each access the units its rank takes up
 * to and including the object (hs_access.hindsight_units): the object is a
 * member exactly when that fits in the capacity. A member is admitted at
 * its first miss and never chosen as a victim; any other object is not
 * admitted at all (hs_policy_admits), so the simulator counts its miss and
 * caches nothing. With sizes (byte mode) the set is the most-read objects
 * that fit by their first sizes, greedily: not the optimum a knapsack
 * would find, as byte-mode belady is not the optimum either.
 *
 * Without hindsight (hindsight_units 0: a caller that does not rank, such
 * as a test driving the interface by hand) every object is admitted and
 * the victim is the resident slot with the lowest number, so the
 * interface's promises hold for any caller. The pool and the frame cache
 * refuse it (HS_POLICY_SIM_ONLY): a running cache cannot know the trace's
 * counts.
 *
 * Invariants. It keeps no state of its own: which slots are resident is
 * the generic layer's record. With hindsight only members are resident,
 * and they fit, so the simulator never asks for a victim.
 *
 * Cost. O(1) per access and no memory; a victim (asked only without
 * hindsight) is a scan of the slots. The ranking is the simulator's: a
 * sort of the objects, once per loaded trace.
 *
 * Upcoming victims: the resident slots in order of their numbers.
 */
#include "policy/policy_impl.h"

static hs_status fixedset_create(hs_policy *p) {
  p->impl = NULL;
  return HS_OK;
}

static void fixedset_destroy(hs_policy *p) {
  (void)p;
}

static bool fixedset_admit(const hs_policy *p, const hs_access *a) {
  return a->hindsight_units == 0 || a->hindsight_units <= p->capacity;
}

static void fixedset_hit(hs_policy *p, uint32_t slot, const hs_access *a) {
  (void)p;
  (void)slot;
  (void)a;
}

static int64_t fixedset_victim(hs_policy *p, const hs_access *incoming, hs_pinned_fn pinned,
                               void *ctx) {
  (void)incoming;
  for (uint32_t i = 0; i < p->max_slots; i++)
    if (hs_policy_slot_size(p, i) && (!pinned || !pinned(ctx, i))) return i;
  return -1;
}

static uint32_t fixedset_upcoming(const hs_policy *p, uint32_t *slots, uint32_t max) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < p->max_slots && n < max; i++)
    if (hs_policy_slot_size(p, i)) slots[n++] = i;
  return n;
}

static void fixedset_leave(hs_policy *p, uint32_t slot) {
  (void)p;
  (void)slot;
}

static void fixedset_insert(hs_policy *p, uint32_t slot, const hs_access *a) {
  (void)p;
  (void)slot;
  (void)a;
}

static size_t fixedset_memory(const hs_policy *p) {
  (void)p;
  return 0;
}

const hs_policy_ops hs_policy_fixedset = {
    .name = "fixedset",
    .flags = HS_POLICY_NEEDS_HINDSIGHT | HS_POLICY_SIM_ONLY,
    .summary = "the most-read objects of the whole trace, fixed (offline bound)",
    .create = fixedset_create,
    .destroy = fixedset_destroy,
    .admit = fixedset_admit,
    .hit = fixedset_hit,
    .victim = fixedset_victim,
    .evict = fixedset_leave,
    .insert = fixedset_insert,
    .remove = fixedset_leave,
    .upcoming = fixedset_upcoming,
    .memory = fixedset_memory,
};
