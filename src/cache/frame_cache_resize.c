/*
 * cache/frame_cache_resize.c — changing a frame cache's capacity
 * (hs_frame_cache_set_capacity) and giving memory back
 * (hs_frame_cache_shrink): which frames go, in the policy's victim order,
 * and which pinned ones leave the policy for the overflow list until they
 * are unpinned.
 */
#include "cache/frame_cache_internal.h"
#include "core/error.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint32_t victim_order(hs_frame_cache *c, uint32_t *order, uint8_t *seen) {
  uint32_t in_use = c->nslots - c->nfree;
  uint32_t n = hs_policy_upcoming_victims(c->policy, order, in_use), k = 0;
  memset(seen, 0, c->nslots);
  for (uint32_t i = 0; i < n; i++)
    if (order[i] < c->nslots && c->slots[order[i]] && (c->slots[order[i]]->flags & F_INUSE) &&
        !seen[order[i]]) {
      seen[order[i]] = 1;
      order[k++] = order[i];
    }
  for (uint32_t s = 0; s < c->nslots; s++)
    if (!seen[s] && c->slots[s] && (c->slots[s]->flags & F_INUSE)) order[k++] = s;
  return k;
}

/* hs_policy cannot resize: a new policy takes the frames in the old one's
 * victim order, so the next victims stay the next victims, and each is hit
 * right after its insert until it stands where it stood in the old policy
 * (while hits raise it, at most MAX_RESTORE_HITS): clock-sweep's usage
 * counts come back exactly, ARC's T2 entries return to T2 in their order,
 * lru (no standing) is order alone. */
static hs_status resize(hs_frame_cache *c, uint32_t capacity) {
  uint32_t n = c->nslots, nslots = capacity ? capacity : 1;
  uint32_t *order = malloc(sizeof *order * n);
  uint32_t *standing = malloc(sizeof *standing * n);
  uint8_t *seen = malloc(n);
  fc_frame **slots = calloc(nslots, sizeof *slots);
  uint32_t *free_list = malloc(sizeof *free_list * nslots);
  hs_policy *p = NULL;
  hs_status st = HS_OK;
  /* Room in the overflow list for every pinned frame that may be demoted. */
  if (!order || !standing || !seen || !slots || !free_list ||
      !fc_overflow_reserve(c, n > capacity ? n - capacity : 0))
    st = hs_fail(HS_ERR_NOMEM, 0, "frame cache: no memory to resize to %u frames", capacity);
  if (st == HS_OK) st = fc_policy_make(c, nslots, &p);
  if (st != HS_OK) {
    free(order), free(standing), free(seen), free(slots), free(free_list);
    return st;
  }
  uint32_t k = victim_order(c, order, seen);
  for (uint32_t i = 0; i < k; i++) standing[i] = hs_policy_standing(c->policy, order[i]);
  /* Over the new capacity, counting the overflow frames too (as SQLite's
   * own cache counts every page it holds): unpinned frames leave, victims
   * first; then, while the slots hold more than the capacity, the first
   * pinned ones become overflow frames. */
  uint32_t total = k + c->noverflow, in_slots = k;
  for (uint32_t pass = 0; pass < 2; pass++) {
    uint32_t excess = pass == 0 ? (total > capacity ? total - capacity : 0)
                                : (in_slots > capacity ? in_slots - capacity : 0);
    for (uint32_t i = 0; i < k && excess > 0; i++) {
      fc_frame *f = c->slots[order[i]];
      if (!f || !(f->flags & F_INUSE) || (pass == 0 && (f->flags & F_PINNED))) continue;
      c->slots[order[i]] = NULL;
      if (pass == 0) {
        fc_table_remove(c, f);
        fc_frame_free(c, f);
        DEC(c->count);
        INC(c->stats.evictions);
      } else {
        f->flags &= ~F_PARKED; /* an overflow frame is never in a policy */
        fc_overflow_add(c, f);
      }
      excess--;
      if (pass == 0) in_slots--;
    }
  }
  uint32_t used = 0, nfree = 0;
  for (uint32_t i = 0; i < k; i++) {
    fc_frame *f = c->slots[order[i]];
    if (!f) continue;
    c->slots[order[i]] = NULL;
    f->index = used;
    f->flags &= ~F_PARKED; /* every frame is in the new policy */
    slots[used] = f;
    hs_access a = fc_make_access(c, f->key, false);
    (void)hs_policy_insert(p, used, &a);
    for (unsigned h = 0; h < MAX_RESTORE_HITS; h++) {
      uint32_t now = hs_policy_standing(p, used);
      if (now >= standing[i]) break;
      hs_policy_hit(p, used, &a);
      if (hs_policy_standing(p, used) <= now) break; /* hits do not raise it */
    }
    used++;
  }
  /* Free frames' memory: kept while there are slots for it. */
  uint32_t spare = used;
  for (uint32_t s = 0; s < n; s++)
    if (c->slots[s]) {
      if (spare < capacity)
        slots[spare++] = c->slots[s];
      else
        fc_frame_free(c, c->slots[s]);
    }
  for (uint32_t s = nslots; s-- > used;) free_list[nfree++] = s;
  hs_policy_destroy(c->policy);
  free(c->slots);
  free(c->free_list);
  c->policy = p;
  c->slots = slots;
  c->free_list = free_list;
  c->nslots = nslots;
  c->nfree = nfree;
  free(order), free(standing), free(seen);
  return HS_OK;
}

hs_status hs_frame_cache_set_capacity(hs_frame_cache *c, uint32_t capacity) {
  cache_lock(c);
  hs_status st = HS_OK;
  if (c->policy && capacity != c->capacity) st = resize(c, capacity);
  if (st == HS_OK) {
    STORE(c->capacity, capacity);
    fc_ring_reset(c);
  }
  cache_unlock(c);
  return st;
}

/* A non-purgeable cache's frames are the engine's only copy: it gives back
 * only the memory of its free slots. */
void hs_frame_cache_shrink(hs_frame_cache *c) {
  cache_lock(c);
  for (uint32_t s = 0; s < c->nslots; s++) {
    fc_frame *f = c->slots[s];
    if (!f || (f->flags & F_PINNED) || ((f->flags & F_INUSE) && !c->purgeable)) continue;
    if (f->flags & F_INUSE) fc_frame_drop(c, f);
    fc_frame_free(c, f);
    c->slots[s] = NULL;
  }
  fc_ring_reset(c);
  cache_unlock(c);
}
