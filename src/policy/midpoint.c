/*
 * policy/midpoint.c — InnoDB's LRU with midpoint insertion (buf0lru.cc,
 * buf0buf.ic; MySQL 5.1 plugin onwards, innodb_old_blocks_pct and
 * innodb_old_blocks_time).
 *
 * The algorithm. One LRU list, cut in two at the "midpoint": the young
 * sublist at the head (5/8 of the list by default) and the old sublist at the
 * tail (old = 3/8; innodb_old_blocks_pct = 37). A page read in is inserted
 * at the head of the old sublist, not at the head of the list, and the
 * victim is the tail of the list. A hit on an old page moves it to the head
 * of the young sublist only if its first access was at least `time` ago
 * (innodb_old_blocks_time, 1000 ms by default): the burst of accesses a
 * scan makes to each page within a moment does not promote it, so a scan
 * flows through the old sublist and the young one keeps the working set.
 * The split is kept by moving the midpoint: when the young sublist holds
 * more than its share (after a promotion), its tail becomes old. Pages
 * enter the young sublist only by being promoted. A page keeps its
 * first-access time all its life, so a young page that drifts back into
 * the old sublist is promoted again by its next access.
 *
 * Two more InnoDB rules are kept because they change which page leaves:
 *   - until the first page has been evicted or removed
 *     (buf_pool->freed_page_clock == 0: the pool is warming up, or
 *     everything fits), hits move nothing;
 *   - a hit on a young page moves it to the head only if it is no longer
 *     "young enough" (buf_page_peek_if_young): at least capacity * (1 -
 *     old) / 4 units have been evicted since it was last put at the head.
 *     A page inserted in the old sublist counts as put at the head at clock
 *     0 (buf_page_init_low), as in InnoDB. With time=0 old pages follow this
 *     rule too.
 *
 * Simplifications. InnoDB moves the midpoint both ways, keeping the old
 * sublist within BUF_LRU_OLD_TOLERANCE (20) pages of its share, and keeps
 * no midpoint at all below BUF_LRU_OLD_MIN_LEN (512) pages (new pages then
 * go to the head, plain LRU). Here the young sublist is capped at
 * units - floor(units * old) at every size and the old sublist takes the
 * rest, so small caches behave like big ones. In a full cache in object
 * mode that is InnoDB's split exactly (old = floor(n * old) pages once
 * promotions have filled the young sublist); the difference is that the
 * old head never becomes young without an access: while the cache fills
 * every page stays old (InnoDB: every page young), and when the old
 * sublist grows past its share (pages removed from the young sublist, or,
 * in byte mode, an entry that fits in free space left by a larger
 * eviction) it stays larger, instead of handing never-reused pages to the
 * young sublist. The cap is restored after insertions, promotions and
 * removals, not between the evictions that make room for an insertion. A
 * new page becomes the first old page (InnoDB puts it just after the first
 * one, UT_LIST_INSERT_AFTER LRU_old, which only matters with its
 * two-way adjustment).
 *
 * Time. `now` is the caller's clock (HS_POLICY_NEEDS_TIME) and `time` is in
 * milliseconds, InnoDB's unit: time=1000 is its default second in the pool
 * (the wall clock) and in the simulator (the trace's own time stamps). A
 * caller whose clock only counts requests may give time=0 alone (see
 * hs_policy_env): a request count is no length of time.
 *
 * Hints. Under a ring (HS_HINT_RING) an old page is "used once": it is never
 * promoted, and a young page is not moved either.
 *
 * Standing: 0 = old sublist, 1 = young sublist.
 *
 * Invariants. The list is young (head .. tail) then old (head .. tail); a
 * slot's flag says which; after insert/hit/remove the young sublist holds
 * at most units - floor(units * old); the victim is the unpinned entry
 * nearest the tail.
 *
 * Cost. O(1) per hit, insertion and eviction; moving the midpoint is O(1)
 * amortized (each step follows a promotion, an eviction or a removal).
 * Hits may move entries, so the pool serializes them with the policy lock,
 * as InnoDB takes its LRU_list_mutex for a make-young (the time and young-enough tests are
 * there precisely to take it rarely). 25 bytes per slot.
 *
 * Upcoming victims (the background writer's look-ahead): the old
 * sublist's tail onwards, then the young one's; exact until the next access.
 */
#include "core/error.h"
#include "policy/dlist.h"
#include "policy/policy_impl.h"

#include <stdlib.h>

enum { P_OLD, P_TIME };

typedef struct midpoint {
  dl_node *links;
  uint64_t *first_access; /* slot -> `now` of its first access */
  uint64_t *made_young;   /* slot -> freed clock when last put at the head */
  uint8_t *old;           /* slot -> in the old sublist */
  dl_list young, olds;    /* head: most recent; young's tail meets old's head */
  uint64_t freed_clock;   /* units evicted or removed so far */
  uint64_t young_enough;  /* capacity * (1 - old) / 4 */
  double old_share;
  uint64_t old_time;
} midpoint;

static hs_status midpoint_create(hs_policy *p) {
  midpoint *s = calloc(1, sizeof *s);
  if (s) {
    s->links = malloc(sizeof *s->links * p->max_slots);
    s->first_access = malloc(sizeof *s->first_access * p->max_slots);
    s->made_young = malloc(sizeof *s->made_young * p->max_slots);
    s->old = calloc(p->max_slots, sizeof *s->old);
  }
  if (!s || !s->links || !s->first_access || !s->made_young || !s->old) {
    if (s) {
      free(s->links);
      free(s->first_access);
      free(s->made_young);
      free(s->old);
    }
    free(s);
    return hs_fail(HS_ERR_NOMEM, 0, "midpoint: no memory for %u slots", p->max_slots);
  }
  dl_init(&s->young);
  dl_init(&s->olds);
  s->old_share = p->param[P_OLD];
  s->old_time = (uint64_t)p->param[P_TIME];
  s->young_enough = (uint64_t)((double)p->capacity * (1.0 - s->old_share) / 4.0);
  p->impl = s;
  return HS_OK;
}

static void midpoint_destroy(hs_policy *p) {
  midpoint *s = p->impl;
  free(s->links);
  free(s->first_access);
  free(s->made_young);
  free(s->old);
  free(s);
}

/* buf_LRU_old_adjust_len, in one direction: the young sublist holds at most
 * units - floor(units * old); its tail becomes old while it holds more. */
static void adjust(hs_policy *p, midpoint *s) {
  uint64_t total = s->young.units + s->olds.units;
  uint64_t young_cap = total - (uint64_t)((double)total * s->old_share);
  while (s->young.units > young_cap) {
    uint32_t i = s->young.tail;
    uint32_t size = hs_policy_slot_size(p, i);
    dl_remove(&s->young, s->links, i, size);
    dl_push_head(&s->olds, s->links, i, size);
    s->old[i] = 1;
  }
}

/* buf_LRU_make_block_young. */
static void make_young(hs_policy *p, midpoint *s, uint32_t slot) {
  uint32_t size = hs_policy_slot_size(p, slot);
  if (s->old[slot]) {
    dl_remove(&s->olds, s->links, slot, size);
    dl_push_head(&s->young, s->links, slot, size);
    s->old[slot] = 0;
  } else {
    dl_move_to_head(&s->young, s->links, slot);
  }
  s->made_young[slot] = s->freed_clock;
  adjust(p, s);
}

static void midpoint_hit(hs_policy *p, uint32_t slot, const hs_access *a) {
  midpoint *s = p->impl;
  if (a->hint == HS_HINT_RING || s->freed_clock == 0) return;
  bool promote;
  if (s->old_time && s->old[slot])
    promote = a->now >= s->first_access[slot] && a->now - s->first_access[slot] >= s->old_time;
  else
    promote = s->freed_clock >= s->made_young[slot] + s->young_enough;
  if (promote) make_young(p, s, slot);
}

static int64_t midpoint_victim(hs_policy *p, const hs_access *incoming, hs_pinned_fn pinned,
                               void *ctx) {
  midpoint *s = p->impl;
  (void)incoming;
  for (uint32_t i = s->olds.tail; i != DL_NIL; i = s->links[i].prev)
    if (!pinned || !pinned(ctx, i)) return i;
  for (uint32_t i = s->young.tail; i != DL_NIL; i = s->links[i].prev)
    if (!pinned || !pinned(ctx, i)) return i;
  return -1;
}

/* The old sublist's tail onwards, then the young one's: victim's order.
 * The sublists' boundary moves as pages come in, but a young page only
 * becomes old at the old sublist's head, behind every old page. */
static uint32_t midpoint_upcoming(const hs_policy *p, uint32_t *slots, uint32_t max) {
  const midpoint *s = p->impl;
  uint32_t n = 0;
  dl_upcoming(&s->olds, s->links, slots, &n, max);
  dl_upcoming(&s->young, s->links, slots, &n, max);
  return n;
}

static void unlink_slot(hs_policy *p, midpoint *s, uint32_t slot) {
  uint32_t size = hs_policy_slot_size(p, slot);
  dl_remove(s->old[slot] ? &s->olds : &s->young, s->links, slot, size);
  s->freed_clock += size; /* buf_LRU_block_remove_hashed */
}

static void midpoint_evict(hs_policy *p, uint32_t slot) {
  unlink_slot(p, p->impl, slot);
}

static void midpoint_remove(hs_policy *p, uint32_t slot) {
  unlink_slot(p, p->impl, slot);
  adjust(p, p->impl);
}

static void midpoint_insert(hs_policy *p, uint32_t slot, const hs_access *a) {
  midpoint *s = p->impl;
  dl_push_head(&s->olds, s->links, slot, a->size);
  s->old[slot] = 1;
  s->first_access[slot] = a->now;
  s->made_young[slot] = 0;
  adjust(p, s);
}

static uint32_t midpoint_standing(const hs_policy *p, uint32_t slot) {
  const midpoint *s = p->impl;
  return !s->old[slot];
}

static size_t midpoint_memory(const hs_policy *p) {
  return sizeof(midpoint) +
         (size_t)p->max_slots * (sizeof(dl_node) + 2 * sizeof(uint64_t) + sizeof(uint8_t));
}

const hs_policy_ops hs_policy_midpoint = {
    .name = "midpoint",
    .flags = HS_POLICY_NEEDS_TIME,
    .summary = "InnoDB's LRU with midpoint insertion and old_blocks_time",
    .params =
        {
            {"old", 0.375, 0.05, 0.95, false,
             "share of the list in the old sublist (innodb_old_blocks_pct)", false},
            {"time", 1000, 0, 1e15, true,
             "time after the first access before an old page can be made young "
             "(innodb_old_blocks_time), in milliseconds",
             true},
        },
    .create = midpoint_create,
    .destroy = midpoint_destroy,
    .hit = midpoint_hit,
    .victim = midpoint_victim,
    .upcoming = midpoint_upcoming,
    .evict = midpoint_evict,
    .insert = midpoint_insert,
    .remove = midpoint_remove,
    .standing = midpoint_standing,
    .memory = midpoint_memory,
};
