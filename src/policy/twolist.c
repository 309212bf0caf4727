/*
 * policy/twolist.c — the Linux page cache's active/inactive lists with
 * refault-distance activation (mm/swap.c, mm/vmscan.c, mm/workingset.c as of
 * Linux 4.7–4.x, 2016 onwards).
 *
 * The algorithm. Two lists. A page read into the cache goes to the head of
 * the inactive list; reclaim takes pages from the inactive tail. Each page
 * has a referenced bit, and an access runs mark_page_accessed's state
 * machine:
 *
 *   inactive, unreferenced -> inactive, referenced
 *   inactive, referenced   -> active (head of the active list), unreferenced
 *   active, unreferenced   -> active, referenced
 *
 * so a page must be used twice while on the inactive list to be promoted
 * ("use-twice"): a scan, which touches each page once, flows through the
 * inactive list without disturbing the active one. Hits do not reorder
 * either list (the kernel moves nothing on a hit to an active page).
 *
 * Balance (the 2016 rule, inactive_list_is_low): the active list may hold at
 * most inactive_ratio times the inactive list, inactive_ratio =
 * int_sqrt(10 * GiB of cache), 1 below 1 GiB (1 GiB: 3, 10 GiB: 10, 100 GiB:
 * 31). Before each eviction, while inactive * ratio < active, the active
 * tail is demoted to the inactive head, as shrink_active_list does. Its
 * referenced bit is NOT cleared: shrink_active_list only clears PG_active
 * (page_referenced() test-and-clears page-table young bits, which page-cache
 * pages read with read() do not have), and page_check_references() says so
 * on purpose — "the mark is set for activated pages as well so that recently
 * deactivated but used pages are quickly recovered": a page referenced while
 * active is re-activated by its first access on the inactive list.
 *
 * Eviction takes the inactive tail whether or not its referenced bit is
 * set: for an unmapped, clean page-cache page page_check_references()
 * returns PAGEREF_RECLAIM_CLEAN when only PG_referenced is set, and the page
 * is reclaimed. (The second chances of the inactive list — PAGEREF_KEEP and
 * PAGEREF_ACTIVATE — come from page-table references of mmap()ed pages,
 * which a buffer pool does not have; dirty pages kept for writeback are the
 * pool's business, not the policy's.)
 *
 * Refaults (Johannes Weiner, "mm: thrash detection-based file cache sizing",
 * Linux 3.15, 2014). A counter, the nonresident age, advances on every
 * eviction and every activation. An evicted page leaves a shadow entry
 * holding the counter's value just after its eviction. When the page comes
 * back, refault distance = counter - shadow: how many more pages the
 * inactive list would have needed to keep it. If that is <= the size of the
 * active list, the page would have survived had the active pages been
 * demoted, so it is activated at once (workingset_refault), which counts as
 * an activation; otherwise it starts on the inactive list like a new page.
 * Either way the shadow is consumed.
 *
 * Writes (Johannes Weiner, "mm: filemap: only do access activations on
 * reads", bbddabe2e436, Linux 4.7, 2016, undoing the activation of written
 * pages that came with 3.16 in 2014; Rik van Riel, "mm: workingset: only
 * do workingset activations on reads", 2016). An access of kind
 * HS_ACCESS_WRITE does not mark the page accessed: it neither sets the
 * referenced bit nor promotes. A refault that is a write is never
 * activated: a page being overwritten is not a working-set page.
 *
 * Shadows are bounded. The kernel shrinks its shadow nodes so that the
 * shadow entries number about as many as the cache's pages (count_shadow_
 * nodes; "mm: workingset: update shadow limit to reflect bigger active
 * list", 2016, since the active list may now fill most of the cache): a
 * refault distance larger than the cache can never be <= the active list.
 * Here the shadows are a ghost list holding at most shadows * capacity
 * units of evicted entries, and shadows * min(capacity, slots) entries (as
 * many as the cache can hold), oldest dropped first. With shadows=1, in
 * object mode (in byte mode: unless the entry bound binds first, with
 * entries averaging under capacity / slots units) nothing that could still
 * activate is dropped: a shadow goes only once the units evicted after
 * it, plus its own size, exceed the capacity, and then its distance
 * exceeds capacity - its size, which bounds any active list coexisting
 * with it when it refaults.
 *
 * Units. Sizes count in capacity units: the counter advances by the size of
 * the entry evicted or activated (the kernel advances it by the number of
 * pages of a huge page), and distances are compared with the active list's
 * units. The ratio is computed once from the cache's size in bytes,
 * capacity * bytes per unit, which the caller says (hs_policy_env.
 * unit_bytes: the page size in the pool, 1 in the simulator's byte mode).
 * Only a caller that cannot say (units of no fixed size in bytes, like the
 * simulator counting objects) leaves it to the `page` parameter. Nothing is
 * inferred from how capacity compares with the slots: a byte cache smaller
 * than its number of objects is still a byte cache.
 *
 * Simplifications. The kernel reclaims in batches of 32 (SWAP_CLUSTER_MAX)
 * and rebalances the lists per batch, interleaved with the anon lists and
 * scan priorities; here the lists are balanced exactly before every single
 * eviction. Per-CPU pagevecs (which delay list moves), mmap()ed pages and
 * the 2017 change that lets the active list shrink while refaults are
 * being observed ("mm: vmscan: fix IO/refault regression in cache
 * workingset transition": inactive_ratio 0) are not modelled. A pinned
 * page is stepped over, not rotated; if every inactive page is pinned, the
 * active tail is taken.
 *
 * Hints. An access under a ring (HS_HINT_RING) raises a page at most to
 * "inactive, referenced" (used once): it never activates a page, also not by
 * refault, and does not touch an active page's bit.
 *
 * Standing: 0 = inactive, 1 = inactive + referenced, 2 = active,
 * 3 = active + referenced.
 *
 * Invariants. Every resident slot is on exactly one list, agreeing with its
 * ACTIVE flag; after a victim call inactive * ratio >= active (or nothing is
 * left to demote); the counter never goes backwards; every shadow's key is
 * not resident.
 *
 * Cost. O(1) per hit and insertion (one keymap lookup for the shadow), O(1)
 * amortized per eviction (each demotion follows an activation). A hit may
 * move the page between lists, so the pool takes the policy lock for it
 * (the kernel hides that lock behind per-CPU batches). 17 bytes per slot
 * plus about 40 per shadow.
 *
 * Upcoming victims (the background writer's look-ahead): the inactive
 * list's tail onwards, then the active list's — victim's order including the
 * rebalancing it does first; exact until the next access.
 */
#include "core/error.h"
#include "policy/dlist.h"
#include "policy/ghost.h"
#include "policy/policy_impl.h"

#include <stdlib.h>

enum { P_PAGE, P_SHADOWS };

#define F_REFERENCED 1u
#define F_ACTIVE     2u

typedef struct twolist {
  dl_node *links;
  uint64_t *keys;           /* slot -> key, for the shadow */
  uint8_t *flags;           /* F_REFERENCED | F_ACTIVE */
  dl_list inactive, active; /* head: newest */
  uint64_t ratio;           /* inactive_ratio */
  uint64_t age;             /* nonresident age: units evicted + activated */
  bool keep_shadows;
  ghost_list shadows;
  uint64_t *stamp; /* shadow entry -> age just after its eviction */
} twolist;

/* ceil of a non-negative double, without libm. */
static uint64_t ceil_u64(double d) {
  if (d >= 1.8e19) return UINT64_MAX;
  uint64_t v = (uint64_t)d;
  return (double)v < d ? v + 1 : v;
}

/* The integer square root, by bisection (the library needs no libm). */
static uint64_t int_sqrt(uint64_t x) {
  uint64_t lo = 0, hi = x < (1ull << 32) ? x : (1ull << 32) - 1;
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo + 1) / 2;
    if (mid * mid <= x)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

static hs_status twolist_create(hs_policy *p) {
  twolist *s = calloc(1, sizeof *s);
  if (!s) return hs_fail(HS_ERR_NOMEM, 0, "twolist: no memory");
  double share = p->param[P_SHADOWS];
  s->keep_shadows = share > 0;
  /* As many shadows as the cache can hold entries: each holds >= 1 unit. */
  uint64_t holds = p->capacity < p->max_slots ? p->capacity : p->max_slots;
  uint64_t max_entries = s->keep_shadows ? ceil_u64(share * (double)holds) : 1;
  uint64_t max_units = s->keep_shadows ? ceil_u64(share * (double)p->capacity) : 1;
  if (max_entries > UINT32_MAX) max_entries = UINT32_MAX;
  if (max_entries == 0) max_entries = 1;
  if (max_units == 0) max_units = 1;
  s->links = malloc(sizeof *s->links * p->max_slots);
  s->keys = malloc(sizeof *s->keys * p->max_slots);
  s->flags = calloc(p->max_slots, sizeof *s->flags);
  s->stamp = malloc(sizeof *s->stamp * max_entries);
  bool ghost_ok = s->links && s->keys && s->flags && s->stamp &&
                  ghost_init(&s->shadows, (uint32_t)max_entries, max_units, p->env.key_space);
  if (!ghost_ok) {
    free(s->links);
    free(s->keys);
    free(s->flags);
    free(s->stamp);
    free(s);
    return hs_fail(HS_ERR_NOMEM, 0, "twolist: no memory for %u slots", p->max_slots);
  }
  dl_init(&s->inactive);
  dl_init(&s->active);
  /* The cache's size in bytes, in the caller's units. */
  uint64_t unit_bytes = p->env.unit_bytes ? p->env.unit_bytes : (uint64_t)p->param[P_PAGE];
  long double bytes = (long double)p->capacity * unit_bytes;
  long double gb = bytes / (1024.0L * 1024.0L * 1024.0L); /* >= 0: truncation = floor */
  uint64_t gib = gb > 1e17L ? (uint64_t)1e17 : (uint64_t)gb;
  s->ratio = gib ? int_sqrt(10 * gib) : 1;
  p->impl = s;
  return HS_OK;
}

static void twolist_destroy(hs_policy *p) {
  twolist *s = p->impl;
  ghost_free(&s->shadows);
  free(s->links);
  free(s->keys);
  free(s->flags);
  free(s->stamp);
  free(s);
}

static inline dl_list *list_of(twolist *s, uint32_t slot) {
  return (s->flags[slot] & F_ACTIVE) ? &s->active : &s->inactive;
}

/* Inactive, referenced -> head of the active list, unreferenced: an
 * activation (workingset_activation advances the age). */
static void activate(twolist *s, uint32_t slot, uint32_t size) {
  dl_remove(&s->inactive, s->links, slot, size);
  dl_push_head(&s->active, s->links, slot, size);
  s->flags[slot] = F_ACTIVE;
  s->age += size;
}

/* mark_page_accessed, for a read. */
static void mark_accessed(twolist *s, uint32_t slot, uint32_t size, hs_access_hint hint) {
  uint8_t f = s->flags[slot];
  if (!(f & F_ACTIVE)) {
    if (!(f & F_REFERENCED))
      s->flags[slot] = F_REFERENCED;
    else if (hint != HS_HINT_RING)
      activate(s, slot, size);
  } else if (!(f & F_REFERENCED) && hint != HS_HINT_RING) {
    s->flags[slot] = F_ACTIVE | F_REFERENCED;
  }
}

static void twolist_hit(hs_policy *p, uint32_t slot, const hs_access *a) {
  twolist *s = p->impl;
  if (a->kind == HS_ACCESS_WRITE) return;
  mark_accessed(s, slot, hs_policy_slot_size(p, slot), a->hint);
}

/* inactive_list_is_low: demote the active tail until the ratio holds. */
static void balance(hs_policy *p, twolist *s) {
  while (s->active.count && s->inactive.units * s->ratio < s->active.units) {
    uint32_t slot = s->active.tail;
    uint32_t size = hs_policy_slot_size(p, slot);
    dl_remove(&s->active, s->links, slot, size);
    s->flags[slot] &= (uint8_t)~F_ACTIVE; /* the referenced bit stays */
    dl_push_head(&s->inactive, s->links, slot, size);
  }
}

static int64_t twolist_victim(hs_policy *p, const hs_access *incoming, hs_pinned_fn pinned,
                              void *ctx) {
  twolist *s = p->impl;
  (void)incoming;
  balance(p, s);
  for (uint32_t i = s->inactive.tail; i != DL_NIL; i = s->links[i].prev)
    if (!pinned || !pinned(ctx, i)) return i;
  for (uint32_t i = s->active.tail; i != DL_NIL; i = s->links[i].prev)
    if (!pinned || !pinned(ctx, i)) return i;
  return -1;
}

/* The inactive list's tail onwards, then the active list's. victim first
 * rebalances, moving the active tail to the inactive head: the same order,
 * so this list is victim's without the move. */
static uint32_t twolist_upcoming(const hs_policy *p, uint32_t *slots, uint32_t max) {
  const twolist *s = p->impl;
  uint32_t n = 0;
  dl_upcoming(&s->inactive, s->links, slots, &n, max);
  dl_upcoming(&s->active, s->links, slots, &n, max);
  return n;
}

static void twolist_evict(hs_policy *p, uint32_t slot) {
  twolist *s = p->impl;
  uint32_t size = hs_policy_slot_size(p, slot);
  dl_remove(list_of(s, slot), s->links, slot, size);
  s->age += size; /* workingset_eviction: the shadow holds the age after it */
  if (!s->keep_shadows) return;
  ghost_add(&s->shadows, s->keys[slot], size);
  uint32_t e = s->shadows.list.head;
  if (e != DL_NIL && s->shadows.keys[e] == s->keys[slot]) s->stamp[e] = s->age;
}

static void twolist_remove(hs_policy *p, uint32_t slot) {
  twolist *s = p->impl;
  dl_remove(list_of(s, slot), s->links, slot, hs_policy_slot_size(p, slot));
}

static void twolist_insert(hs_policy *p, uint32_t slot, const hs_access *a) {
  twolist *s = p->impl;
  uint32_t size = (uint32_t)a->size;
  s->keys[slot] = a->key;
  bool refault_active = false;
  uint32_t e = ghost_find(&s->shadows, a->key);
  if (e != KM_ABSENT) {
    uint64_t distance = s->age - s->stamp[e];
    ghost_remove(&s->shadows, e);
    refault_active =
        a->kind == HS_ACCESS_READ && a->hint != HS_HINT_RING && distance <= s->active.units;
  }
  if (refault_active) {
    dl_push_head(&s->active, s->links, slot, size);
    s->flags[slot] = F_ACTIVE;
    s->age += size; /* workingset_activation */
  } else {
    dl_push_head(&s->inactive, s->links, slot, size);
    s->flags[slot] = 0;
  }
  /* The read that brought the page in marks it accessed (inactive ->
   * inactive, referenced; activated by refault -> active, referenced); a
   * write does not. */
  if (a->kind == HS_ACCESS_READ) s->flags[slot] |= F_REFERENCED;
}

static uint32_t twolist_standing(const hs_policy *p, uint32_t slot) {
  const twolist *s = p->impl;
  return s->flags[slot];
}

static uint64_t twolist_ghosts(const hs_policy *p) {
  const twolist *s = p->impl;
  return ghost_count(&s->shadows);
}

static void twolist_prefetch(const hs_policy *p, uint64_t key) {
  const twolist *s = p->impl;
  keymap_prefetch(&s->shadows.map, key);
}

static size_t twolist_memory(const hs_policy *p) {
  const twolist *s = p->impl;
  return sizeof(twolist) +
         (size_t)p->max_slots * (sizeof(dl_node) + sizeof(uint64_t) + sizeof(uint8_t)) +
         (size_t)s->shadows.max_entries * sizeof(uint64_t) + ghost_memory(&s->shadows);
}

const hs_policy_ops hs_policy_twolist = {
    .name = "twolist",
    .summary = "Linux active/inactive lists with refault-distance activation",
    .params =
        {
            {"page", 8192, 1, 1099511627776.0, true,
             "bytes per capacity unit, for the active/inactive ratio, when the caller "
             "does not give them (hs_policy_env.unit_bytes)",
             false},
            {"shadows", 1.0, 0.0, 4.0, false,
             "shadow entries kept, as a share of the capacity (0: none)", false},
        },
    .create = twolist_create,
    .destroy = twolist_destroy,
    .hit = twolist_hit,
    .victim = twolist_victim,
    .upcoming = twolist_upcoming,
    .evict = twolist_evict,
    .insert = twolist_insert,
    .remove = twolist_remove,
    .standing = twolist_standing,
    .ghosts = twolist_ghosts,
    .memory = twolist_memory,
    .prefetch = twolist_prefetch,
};
