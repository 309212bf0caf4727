/*
 * policy/car.c — CAR, CLOCK with Adaptive Replacement.
 *
 * The algorithm (Bansal & Modha, "CAR: Clock with Adaptive Replacement",
 * FAST 2004, Figure 2). ARC's idea on clocks: resident entries sit on two
 * circles with a reference bit each, T1 (seen once lately) and T2 (seen at
 * least twice), and ghost LRU lists B1 and B2 remember the keys evicted from
 * each; a target p (0 <= p <= c) is T1's share. A hit only sets the entry's
 * reference bit. On a miss with the cache full, replace() turns the hands:
 *   while no victim: if |T1| >= max(1, p), look at T1's hand: bit clear ->
 *   demote it to B1's MRU end (found); bit set -> clear it and move the
 *   entry to T2's tail (it was used again: promoted); otherwise look at T2's
 *   hand: bit clear -> demote it to B2's MRU end (found); bit set -> clear
 *   it and move it to T2's tail (a second chance).
 * Then the directory: if x is in neither ghost list and |T1| + |B1| = c,
 * B1's LRU key is discarded, else if |T1| + |T2| + |B1| + |B2| = 2c, B2's.
 * Finally x comes in at T1's tail with its bit clear, or — if it was in B1
 * (p = min(p + max(1, |B2|/|B1|), c)) or in B2 (p = max(p - max(1,
 * |B1|/|B2|), 0)) — at T2's tail with its bit clear. Note the order: unlike
 * ARC, p adapts after replace(), with the ghost sizes replace() left.
 *
 * Byte mode: every |.| counts units and p is real (as for ARC). The
 * directory step runs once per miss, after all the evictions for it, and
 * discards B1's LRU keys while |T1| + |B1| + size(x) > c (or, if that does
 * not hold, B2's while the total + size(x) > 2c) — in object mode exactly
 * the paper's single discard, in byte mode the same bound on the directory.
 * replace() falls back to the other circle when the one it wants is empty
 * (possible only with sizes).
 *
 * The hands. A circle is a list whose tail is the hand (the paper's
 * "head"); the paper's "tail" — where entries come in, just behind the
 * hand — is the list head. A pinned entry under a hand is passed over
 * (moved behind the hand, bit untouched); if a whole circle is pinned the
 * other one is used; -1 only when every resident entry is pinned. victim()
 * does replace()'s walk (clearing bits, moving T1 entries to T2 — state the
 * algorithm itself would have changed, safe to redo) and returns the entry
 * found; evict() demotes it to its ghost list; insert() does the directory
 * step and the adaptation.
 *
 * Standing: 1 = T1 with its bit clear, 2 = T1 with its bit set, 3 = T2 with
 * its bit clear, 4 = T2 with its bit set. Ghosts: |B1| + |B2| keys.
 *
 * Hints. A hit under a ring (HS_HINT_RING) does not set the bit (a set bit
 * in T1 means promotion to T2: "used twice"). A miss under a ring is
 * treated as new even if its key is in B1 or B2: it comes in at T1's tail,
 * p does not move, and the ghost is forgotten.
 *
 * Invariants (object mode, without remove()): |T1| + |B1| <= c and
 * |T1| + |T2| + |B1| + |B2| <= 2c after every request (c + 1 ghosts while a
 * miss is being served). Every resident slot is on one circle once.
 *
 * Memory and cost. The ghosts live in one directory for B1 and B2
 * (ghost_dir.h): room for min(c, slots) + 1 keys, enough in object mode,
 * doubling on demand up to 4 per slot in byte mode (at that bound the LRU
 * key the directory step would discard next goes early). Per slot 18 bytes
 * (key, links, circle, bit), per ghost 21 plus its key index, about 54
 * bytes a page. A hit is one relaxed atomic store to the entry's bit, so
 * the pool calls hit() without the policy lock
 * (HS_POLICY_CONCURRENT_HIT); victim() reads and clears the bits
 * atomically. A victim is O(1) amortized: every bit it clears was set by a
 * hit; its walk is capped at 4(n + 2) steps (then it takes the first
 * unpinned entry, preferring a clear bit) so concurrent hits cannot keep it
 * turning for ever. One key lookup per miss.
 *
 * Upcoming victims (the background writer's look-ahead): the hands' first
 * round without turning them — clear bits are victims, set ones passed
 * (T1's promoted to T2) — for a run of misses on new keys. A prediction
 * past the first: hits set bits, ghost hits move p.
 */
#include "core/error.h"
#include "policy/adaptive.h"
#include "policy/dlist.h"
#include "policy/ghost_dir.h"
#include "policy/policy_impl.h"

#include <stdlib.h>

enum { CAR_NONE = 0, CAR_T1 = 1, CAR_T2 = 2, CAR_B1 = GD_B1, CAR_B2 = GD_B2 };

typedef struct car {
  /* Per slot: its key (for its ghost), list links, circle, reference bit. */
  uint64_t *keys;
  dl_node *links;
  uint8_t *list;
  _Atomic uint8_t *ref;
  ghost_dir dir;  /* B1 and B2: entries on list CAR_B1 or CAR_B2 */
  dl_list t1, t2; /* tail: the hand; head: just behind it */
  dl_list b1, b2; /* head: MRU, tail: LRU; linked through dir */
  double p;
  bool replaced; /* an eviction happened since the last insert */
} car;

extern const hs_policy_ops hs_policy_car;

static dl_list *car_list(car *s, uint8_t which) {
  return which == CAR_T1 ? &s->t1 : &s->t2;
}

static void car_free(car *s) {
  if (!s) return;
  gd_free(&s->dir);
  free(s->keys);
  free(s->links);
  free(s->list);
  free((void *)s->ref);
  free(s);
}

static hs_status car_create(hs_policy *p) {
  car *s = calloc(1, sizeof *s);
  if (!s) return hs_fail(HS_ERR_NOMEM, 0, "car: no memory");
  /* Room for c + 1 ghosts in object mode (capacity == slots), growing up
   * to 4 per slot in byte mode. */
  uint64_t max = 4ull * p->max_slots,
           initial = (p->capacity < p->max_slots ? p->capacity : p->max_slots) + 1;
  if (max > UINT32_MAX - 1) max = UINT32_MAX - 1;
  if (initial > max) initial = max;
  s->keys = malloc(sizeof *s->keys * p->max_slots);
  s->links = malloc(sizeof *s->links * p->max_slots);
  s->list = calloc(p->max_slots, sizeof *s->list);
  s->ref = malloc(sizeof *s->ref * p->max_slots);
  if (!s->keys || !s->links || !s->list || !s->ref ||
      !gd_init(&s->dir, (uint32_t)initial, (uint32_t)max, p->env.key_space)) {
    car_free(s);
    return hs_fail(HS_ERR_NOMEM, 0, "car: no memory for %u slots", p->max_slots);
  }
  for (uint32_t i = 0; i < p->max_slots; i++) atomic_init(&s->ref[i], 0);
  dl_init(&s->t1);
  dl_init(&s->t2);
  dl_init(&s->b1);
  dl_init(&s->b2);
  s->p = 0;
  p->impl = s;
  return HS_OK;
}

static void car_destroy(hs_policy *p) {
  car_free(p->impl);
}

/* --- the ghost directory ------------------------------------------------ */

static uint32_t car_ghost_find(const car *s, uint64_t key) {
  return gd_find(&s->dir, key);
}

static void car_ghost_forget(car *s, uint32_t e) {
  gd_forget_b(&s->dir, &s->b1, &s->b2, e);
}

static void car_ghost_drop_lru(car *s, dl_list *l) {
  gd_drop_lru_b(&s->dir, &s->b1, &s->b2, l);
}

static void car_ghost_add(car *s, uint64_t capacity, uint64_t key, uint32_t size, uint8_t which) {
  gd_add_b(&s->dir, &s->b1, &s->b2, s->t1.units, capacity, key, size, which);
}

/* --- the algorithm ------------------------------------------------------ */

static void car_hit(hs_policy *p, uint32_t slot, const hs_access *a) {
  car *s = p->impl;
  if (a->hint == HS_HINT_RING) return;
  if (!atomic_load_explicit(&s->ref[slot], memory_order_relaxed))
    atomic_store_explicit(&s->ref[slot], 1, memory_order_relaxed);
}

/* Moves the entry under a hand to the other side of it: the tail of `to`. */
static void car_pass(car *s, uint32_t i, dl_list *from, dl_list *to, uint8_t which, uint32_t size) {
  dl_remove(from, s->links, i, size);
  dl_push_head(to, s->links, i, size);
  s->list[i] = which;
}

/* After too many steps: the first unpinned entry, a clear bit first. */
static int64_t car_fallback(const car *s, hs_pinned_fn pinned, void *ctx) {
  int64_t any = -1;
  const dl_list *lists[2] = {&s->t1, &s->t2};
  for (int k = 0; k < 2; k++)
    for (uint32_t i = lists[k]->tail; i != DL_NIL; i = s->links[i].prev) {
      if (pinned && pinned(ctx, i)) continue;
      if (!atomic_load_explicit(&s->ref[i], memory_order_relaxed)) return i;
      if (any < 0) any = i;
    }
  return any;
}

static int64_t car_victim(hs_policy *p, const hs_access *incoming, hs_pinned_fn pinned, void *ctx) {
  car *s = p->impl;
  (void)incoming;
  double target = s->p > 1 ? s->p : 1;
  /* run1/run2: pinned entries passed in a row on each circle; a circle is
   * all pinned once its run reaches its count. */
  uint32_t run1 = 0, run2 = 0;
  uint64_t limit = 4ull * ((uint64_t)s->t1.count + s->t2.count + 2);
  for (uint64_t step = 0; step < limit; step++) {
    bool blocked1 = s->t1.count == 0 || run1 >= s->t1.count;
    bool blocked2 = s->t2.count == 0 || run2 >= s->t2.count;
    if (blocked1 && blocked2) return -1;
    bool use_t1 = (double)s->t1.units >= target;
    if (use_t1 ? blocked1 : blocked2) use_t1 = !use_t1;
    dl_list *l = use_t1 ? &s->t1 : &s->t2;
    uint32_t i = l->tail;
    uint32_t size = hs_policy_slot_size(p, i);
    if (pinned && pinned(ctx, i)) {
      car_pass(s, i, l, l, use_t1 ? CAR_T1 : CAR_T2, size);
      if (use_t1)
        run1++;
      else
        run2++;
      continue;
    }
    if (!atomic_load_explicit(&s->ref[i], memory_order_relaxed)) return i;
    atomic_store_explicit(&s->ref[i], 0, memory_order_relaxed);
    car_pass(s, i, l, &s->t2, CAR_T2, size); /* T1: promoted; T2: second chance */
    if (use_t1)
      run1 = 0;
    else
      run2 = 0;
  }
  return car_fallback(s, pinned, ctx);
}

/* replace()'s first round on each circle for a run of misses on new keys,
 * without turning the hands: an entry with its bit clear under T1's or
 * T2's hand is a victim; one with its bit set is passed (from T1 it goes
 * to T2, behind T2's hand, shrinking T1). Each newcomer enters T1. It stops
 * where a hand would come round to entries it already passed. The first is
 * victim's answer for such a miss; hits meanwhile set bits, and a key found
 * in B1 or B2 moves p, so the rest is a prediction. */
static uint32_t car_upcoming(const hs_policy *p, uint32_t *slots, uint32_t max) {
  const car *s = p->impl;
  double target = s->p > 1 ? s->p : 1;
  uint64_t t1_units = s->t1.units;
  uint32_t hand1 = s->t1.tail, hand2 = s->t2.tail, n = 0;
  while (n < max) {
    bool use_t1 = (double)t1_units >= target;
    if ((use_t1 ? hand1 : hand2) == DL_NIL) use_t1 = !use_t1;
    uint32_t i = use_t1 ? hand1 : hand2;
    if (i == DL_NIL) break;
    uint32_t size = hs_policy_slot_size(p, i);
    if (use_t1)
      hand1 = s->links[i].prev;
    else
      hand2 = s->links[i].prev;
    if (atomic_load_explicit(&s->ref[i], memory_order_relaxed)) {
      if (use_t1) t1_units -= size; /* promoted to T2 */
      continue;
    }
    slots[n++] = i;
    if (!use_t1) t1_units += size; /* the newcomer; from T1 it takes the victim's place */
  }
  return n;
}

static void car_evict(hs_policy *p, uint32_t slot) {
  car *s = p->impl;
  uint8_t from = s->list[slot];
  uint32_t size = hs_policy_slot_size(p, slot);
  dl_remove(car_list(s, from), s->links, slot, size);
  s->list[slot] = CAR_NONE;
  car_ghost_add(s, p->capacity, s->keys[slot], size, from == CAR_T1 ? CAR_B1 : CAR_B2);
  s->replaced = true;
}

static void car_insert(hs_policy *p, uint32_t slot, const hs_access *a) {
  car *s = p->impl;
  uint64_t c = p->capacity, size = a->size;
  uint32_t e = car_ghost_find(s, a->key);
  uint8_t kind = e == KM_ABSENT ? CAR_NONE : s->dir.list[e];
  if (a->hint == HS_HINT_RING && e != KM_ABSENT) {
    car_ghost_forget(s, e);
    kind = CAR_NONE;
  }
  if (kind == CAR_NONE && s->replaced) { /* the directory step */
    if (s->t1.units + s->b1.units + size > c) {
      while (s->b1.count && s->t1.units + s->b1.units + size > c) car_ghost_drop_lru(s, &s->b1);
    } else {
      while (s->b2.count && s->t1.units + s->t2.units + s->b1.units + s->b2.units + size > 2 * c)
        car_ghost_drop_lru(s, &s->b2);
    }
  }
  s->replaced = false;
  if (kind == CAR_B1) {
    double delta = (double)s->b2.units / (double)s->b1.units;
    s->p += delta > 1 ? delta : 1;
    if (s->p > (double)c) s->p = (double)c;
  } else if (kind == CAR_B2) {
    double delta = (double)s->b1.units / (double)s->b2.units;
    s->p -= delta > 1 ? delta : 1;
    if (s->p < 0) s->p = 0;
  }
  if (kind != CAR_NONE) car_ghost_forget(s, e);
  s->keys[slot] = a->key;
  atomic_store_explicit(&s->ref[slot], 0, memory_order_relaxed);
  s->list[slot] = kind == CAR_NONE ? CAR_T1 : CAR_T2;
  dl_push_head(car_list(s, s->list[slot]), s->links, slot, size);
}

static void car_remove(hs_policy *p, uint32_t slot) {
  car *s = p->impl;
  dl_remove(car_list(s, s->list[slot]), s->links, slot, hs_policy_slot_size(p, slot));
  s->list[slot] = CAR_NONE;
}

static uint32_t car_standing(const hs_policy *p, uint32_t slot) {
  const car *s = p->impl;
  uint32_t bit = atomic_load_explicit(&s->ref[slot], memory_order_relaxed) ? 1 : 0;
  return s->list[slot] == CAR_T1 ? 1 + bit : 3 + bit;
}

static uint64_t car_ghosts(const hs_policy *p) {
  const car *s = p->impl;
  return (uint64_t)s->b1.count + s->b2.count;
}

static void car_prefetch(const hs_policy *p, uint64_t key) {
  const car *s = p->impl;
  keymap_prefetch(&s->dir.map, key);
}

static size_t car_memory(const hs_policy *p) {
  const car *s = p->impl;
  return sizeof *s +
         (size_t)p->max_slots *
             (sizeof *s->keys + sizeof *s->links + sizeof *s->list + sizeof *s->ref) +
         gd_memory(&s->dir);
}

double hs_policy_car_target(const hs_policy *p) {
  if (!p || p->ops != &hs_policy_car) return -1;
  const car *s = p->impl;
  return s->p;
}

const hs_policy_ops hs_policy_car = {
    .name = "car",
    .flags = HS_POLICY_CONCURRENT_HIT,
    .summary = "CAR: ARC's adaptive split on two clocks with reference bits",
    .create = car_create,
    .destroy = car_destroy,
    .hit = car_hit,
    .victim = car_victim,
    .upcoming = car_upcoming,
    .evict = car_evict,
    .insert = car_insert,
    .remove = car_remove,
    .standing = car_standing,
    .ghosts = car_ghosts,
    .memory = car_memory,
    .prefetch = car_prefetch,
};
