/*
 * policy/arc.c — ARC, the Adaptive Replacement Cache.
 *
 * The algorithm (Megiddo & Modha, "ARC: A Self-Tuning, Low Overhead
 * Replacement Cache", FAST 2003, Figure 4). Four LRU lists: T1 holds
 * resident entries seen once lately, T2 resident entries seen at least
 * twice; B1 and B2 are ghosts — keys of entries evicted from T1 and T2. A
 * target p (0 <= p <= c) says how much of the cache T1 should get. On a
 * request for x:
 *   I    x in T1 or T2 (a hit): move x to the MRU end of T2.
 *   II   x in B1: T1 was too small. p = min(p + max(|B2|/|B1|, 1), c);
 *        REPLACE; x comes back at the MRU end of T2.
 *   III  x in B2: T2 was too small. p = max(p - max(|B1|/|B2|, 1), 0);
 *        REPLACE; x comes back at the MRU end of T2.
 *   IV   x nowhere (a complete miss); when the cache is full:
 *        A  |T1| + |B1| = c: if B1 is not empty, drop B1's LRU key and
 *           REPLACE, else evict T1's LRU entry and remember nothing;
 *        B  otherwise: if |T1| + |T2| + |B1| + |B2| = 2c drop B2's LRU key;
 *           REPLACE.
 *        x comes in at the MRU end of T1.
 *   REPLACE evicts T1's LRU entry into B1 if T1 is not empty and |T1| > p
 *        (or |T1| = p and x was in B2), otherwise T2's LRU entry into B2.
 * So recency and frequency share the cache and every ghost hit moves the
 * border towards the list that would have kept the entry.
 *
 * Byte mode, as libCacheSim's ARC does it (our misses are checked against
 * it): every |.| counts units, p is a real number and the ratios are real
 * divisions; each eviction the caller asks for re-evaluates case IV, with
 * "T1 + B1 + size(x) > c" for A and "B1 not empty" in place of |T1| < c,
 * "total >= 2c and B2 not empty" for B; REPLACE takes T1's entry also when
 * T2 is empty. In object mode this is the paper's algorithm exactly.
 *
 * Splitting a miss into victim/evict/insert. The first victim() call of a
 * request classifies the incoming key (II, III or IV) and computes p's step
 * from the ghost sizes *before* any eviction, as the paper does, without
 * changing anything (a plan kept in `pend`, safe to redo). Each evict()
 * performs one round of the case (dropping a B1/B2 key, keeping a ghost or
 * not); insert() moves p, forgets the returning key's ghost and places the
 * entry. A request is known by (key, now); insert() without a matching plan
 * (there was room) classifies the key itself. In the pool two misses can
 * interleave (victim A, victim B, evict + insert A, evict + insert B), so an
 * eviction may run under the other miss's plan; insert() then restores
 * |T1| + |B1| <= c and the total <= 2c by dropping LRU ghosts, which keeps
 * the directory at its object-mode size. The simulator never interleaves.
 *
 * Standing: 1 = in T1, 2 = in T2. Ghosts: |B1| + |B2| entries.
 *
 * Hints. A hit under a ring (HS_HINT_RING) changes nothing: an entry in T1
 * stays there ("used once"). A miss under a ring is treated as a complete
 * miss even when the key is in B1 or B2: the entry comes back in T1, p does
 * not move and its ghost is forgotten.
 *
 * Invariants (object mode, without remove()): |T1| + |B1| <= c and
 * |T1| + |T2| + |B1| + |B2| <= 2c, so at most c ghosts (c + 1 while a ghost
 * hit is being served: its key is forgotten at insert). Every resident slot
 * is on T1 or T2 once; a victim is never pinned: REPLACE's list is walked
 * from its LRU end past pinned entries, then the other list.
 *
 * Memory and cost. The ghosts live in one directory for B1 and B2
 * (ghost_dir.h): room for min(c, slots) + 1 keys, enough in object mode,
 * doubling on demand up to 4 per slot in byte mode (at that bound the LRU
 * key case IV would drop next goes early — the one place byte mode can part
 * from libCacheSim). Per slot 17 bytes (key, links, list), per ghost 21
 * plus its key index: about 53 bytes a page in all. Everything is O(1) (one
 * key lookup per miss); the victim may step over pinned entries. A hit
 * moves list links, so the pool takes the policy lock for every hit — the
 * contention that made PostgreSQL drop ARC after 8.0 for 2Q, then for the
 * clock-sweep.
 *
 * Upcoming victims (the background writer's look-ahead): T1's and T2's LRU
 * ends, choosing as REPLACE would for a run of misses in case IV (keys in
 * no ghost list: p does not move, newcomers enter T1). A prediction past
 * the first: a ghost hit moves p.
 */
#include "core/error.h"
#include "policy/adaptive.h"
#include "policy/dlist.h"
#include "policy/ghost_dir.h"
#include "policy/policy_impl.h"

#include <stdlib.h>

enum { ARC_NONE = 0, ARC_T1 = 1, ARC_T2 = 2, ARC_B1 = GD_B1, ARC_B2 = GD_B2 };

/* What victim() decided for the incoming request. */
typedef struct arc_plan {
  bool valid;
  bool evicted; /* at least one evict() was done under this plan */
  uint8_t kind; /* ARC_B1 (case II), ARC_B2 (case III), ARC_NONE (case IV) */
  uint64_t key, now, size;
  double delta; /* case II/III's step for p (0 for case IV) */
} arc_plan;

typedef struct arc {
  /* Per slot: its key (for its ghost), list links, list (T1, T2 or none). */
  uint64_t *keys;
  dl_node *links;
  uint8_t *list;
  ghost_dir dir;          /* B1 and B2: entries on list ARC_B1 or ARC_B2 */
  dl_list t1, t2, b1, b2; /* head: MRU, tail: LRU; b1, b2 link through dir */
  double p;
  arc_plan pend;
  /* The evictions since the last insert, and the plan they were made under
   * (evict_unplanned: none, or more than one). */
  uint32_t evictions;
  bool evict_unplanned;
  uint64_t evict_key, evict_now;
} arc;

extern const hs_policy_ops hs_policy_arc;

static dl_list *arc_list(arc *s, uint8_t which) {
  return which == ARC_T1 ? &s->t1 : &s->t2;
}

static void arc_free(arc *s) {
  if (!s) return;
  gd_free(&s->dir);
  free(s->keys);
  free(s->links);
  free(s->list);
  free(s);
}

static hs_status arc_create(hs_policy *p) {
  arc *s = calloc(1, sizeof *s);
  if (!s) return hs_fail(HS_ERR_NOMEM, 0, "arc: no memory");
  /* Room for c + 1 ghosts in object mode (capacity == slots), growing up
   * to 4 per slot in byte mode. */
  uint64_t max = 4ull * p->max_slots,
           initial = (p->capacity < p->max_slots ? p->capacity : p->max_slots) + 1;
  if (max > UINT32_MAX - 1) max = UINT32_MAX - 1;
  if (initial > max) initial = max;
  s->keys = malloc(sizeof *s->keys * p->max_slots);
  s->links = malloc(sizeof *s->links * p->max_slots);
  s->list = calloc(p->max_slots, sizeof *s->list);
  if (!s->keys || !s->links || !s->list ||
      !gd_init(&s->dir, (uint32_t)initial, (uint32_t)max, p->env.key_space)) {
    arc_free(s);
    return hs_fail(HS_ERR_NOMEM, 0, "arc: no memory for %u slots", p->max_slots);
  }
  dl_init(&s->t1);
  dl_init(&s->t2);
  dl_init(&s->b1);
  dl_init(&s->b2);
  s->p = 0;
  p->impl = s;
  return HS_OK;
}

static void arc_destroy(hs_policy *p) {
  arc_free(p->impl);
}

/* --- the ghost directory ------------------------------------------------ */

static uint32_t arc_ghost_find(const arc *s, uint64_t key) {
  return gd_find(&s->dir, key);
}

static void arc_ghost_forget(arc *s, uint32_t e) {
  gd_forget_b(&s->dir, &s->b1, &s->b2, e);
}

static void arc_ghost_drop_lru(arc *s, dl_list *l) {
  gd_drop_lru_b(&s->dir, &s->b1, &s->b2, l);
}

static void arc_ghost_add(arc *s, uint64_t capacity, uint64_t key, uint32_t size, uint8_t which) {
  gd_add_b(&s->dir, &s->b1, &s->b2, s->t1.units, capacity, key, size, which);
}

/* --- the algorithm ------------------------------------------------------ */

/* Case II/III's step for p, for a key found in `which` (B1 or B2):
 * +max(|B2|/|B1|, 1) or -max(|B1|/|B2|, 1), with the ghost sizes as they are
 * now (the paper adapts before REPLACE). */
static double arc_delta(const arc *s, uint8_t which) {
  if (which == ARC_NONE) return 0;
  double d = which == ARC_B1 ? (double)s->b2.units / (double)s->b1.units
                             : (double)s->b1.units / (double)s->b2.units;
  if (d < 1) d = 1;
  return which == ARC_B1 ? d : -d;
}

/* p moved by `delta`, within [0, c]. */
static double arc_moved(const arc *s, uint64_t capacity, double delta) {
  double np = s->p + delta;
  return np > (double)capacity ? (double)capacity : np < 0 ? 0 : np;
}

/* Where a key is remembered: ARC_B1, ARC_B2 or ARC_NONE. */
static uint8_t arc_classify(const arc *s, uint64_t key) {
  uint32_t e = arc_ghost_find(s, key);
  return e == KM_ABSENT ? ARC_NONE : s->dir.list[e];
}

/* Makes `pend` describe the request `a`. Recomputed unless evictions have
 * already been done for this very request (then the ghost sizes it was
 * computed from have changed, and the paper adapts p before evicting). */
static void arc_make_plan(arc *s, const hs_access *a) {
  arc_plan *q = &s->pend;
  if (q->valid && q->evicted && q->key == a->key && q->now == a->now) return;
  q->valid = true;
  q->evicted = false;
  q->key = a->key;
  q->now = a->now;
  q->size = a->size;
  q->kind = a->hint == HS_HINT_RING ? ARC_NONE : arc_classify(s, a->key);
  q->delta = arc_delta(s, q->kind);
}

/* REPLACE's choice: true for T1's LRU entry, false for T2's. */
static bool arc_replace_from_t1(const arc *s, double p, bool in_b2) {
  double t1 = (double)s->t1.units;
  return (s->t1.count && (t1 > p || (t1 == p && in_b2))) || s->t2.count == 0;
}

static int64_t arc_walk(const arc *s, const dl_list *l, hs_pinned_fn pinned, void *ctx) {
  for (uint32_t i = l->tail; i != DL_NIL; i = s->links[i].prev)
    if (!pinned || !pinned(ctx, i)) return i;
  return -1;
}

static int64_t arc_victim(hs_policy *p, const hs_access *incoming, hs_pinned_fn pinned, void *ctx) {
  arc *s = p->impl;
  arc_make_plan(s, incoming);
  const arc_plan *q = &s->pend;
  bool from_t1;
  if (q->kind == ARC_NONE && s->t1.units + s->b1.units + q->size > p->capacity && !s->b1.count)
    from_t1 = true; /* case IV-A with B1 empty: T1's LRU, no ghost */
  else
    from_t1 = arc_replace_from_t1(s, arc_moved(s, p->capacity, q->delta), q->kind == ARC_B2);
  int64_t v = arc_walk(s, from_t1 ? &s->t1 : &s->t2, pinned, ctx);
  return v >= 0 ? v : arc_walk(s, from_t1 ? &s->t2 : &s->t1, pinned, ctx);
}

/* REPLACE's choices for a run of misses on keys in neither ghost list
 * (case IV: p does not move, each newcomer enters T1), walking T1's and
 * T2's LRU ends with |T1| and |B1| as those misses would leave them. The
 * first is victim's answer for such a miss; a key found in B1 or B2 moves
 * p first, and hits move entries to T2's MRU end, so the rest is a
 * prediction. */
static uint32_t arc_upcoming(const hs_policy *p, uint32_t *slots, uint32_t max) {
  const arc *s = p->impl;
  uint64_t t1_units = s->t1.units, b1_units = s->b1.units, b1_count = s->b1.count;
  uint32_t in_t1 = s->t1.tail, in_t2 = s->t2.tail, n = 0;
  while (n < max && (in_t1 != DL_NIL || in_t2 != DL_NIL)) {
    uint32_t next = in_t1 != DL_NIL ? in_t1 : in_t2;
    uint64_t size = hs_policy_slot_size(p, next);
    bool from_t1;
    if (t1_units + b1_units + size > p->capacity && b1_count == 0)
      from_t1 = true; /* case IV-A with B1 empty */
    else
      from_t1 = (in_t1 != DL_NIL && (double)t1_units > s->p) || in_t2 == DL_NIL;
    if (from_t1 && in_t1 == DL_NIL) from_t1 = false;
    uint32_t v = from_t1 ? in_t1 : in_t2;
    size = hs_policy_slot_size(p, v);
    if (from_t1) {
      in_t1 = s->links[v].prev;
      b1_units += size; /* its ghost; the newcomer takes its place in T1 */
      b1_count++;
    } else {
      in_t2 = s->links[v].prev;
      t1_units += size; /* the newcomer */
    }
    slots[n++] = v;
  }
  return n;
}

/* Restores |T1| + |B1| <= c and |T1| + |T2| + |B1| + |B2| <= 2c by
 * dropping LRU ghosts, after evictions made without the plan of the entry
 * being inserted (no victim() was asked, or — in the pool — another miss's
 * victim() came in between). Never needed in the simulator. */
static void arc_restore_bounds(arc *s, uint64_t c) {
  while (s->b1.count && s->t1.units + s->b1.units > c) arc_ghost_drop_lru(s, &s->b1);
  while (s->b2.count && s->t1.units + s->t2.units + s->b1.units + s->b2.units > 2 * c)
    arc_ghost_drop_lru(s, &s->b2);
}

static void arc_evict(hs_policy *p, uint32_t slot) {
  arc *s = p->impl;
  uint64_t c = p->capacity;
  arc_plan *q = &s->pend;
  bool keep = true;
  if (q->valid) {
    if (q->kind == ARC_NONE) { /* one round of case IV */
      if (s->t1.units + s->b1.units + q->size > c) {
        if (s->b1.count)
          arc_ghost_drop_lru(s, &s->b1);
        else
          keep = false;
      } else if (s->t1.units + s->t2.units + s->b1.units + s->b2.units >= 2 * c && s->b2.count) {
        arc_ghost_drop_lru(s, &s->b2);
      }
    }
    q->evicted = true;
    if (s->evictions++ == 0) {
      s->evict_key = q->key;
      s->evict_now = q->now;
    } else if (s->evict_key != q->key || s->evict_now != q->now) {
      s->evict_unplanned = true;
    }
  } else {
    s->evictions++;
    s->evict_unplanned = true;
  }
  uint8_t from = s->list[slot];
  uint32_t size = hs_policy_slot_size(p, slot);
  dl_remove(arc_list(s, from), s->links, slot, size);
  s->list[slot] = ARC_NONE;
  if (keep) arc_ghost_add(s, c, s->keys[slot], size, from == ARC_T1 ? ARC_B1 : ARC_B2);
}

static void arc_insert(hs_policy *p, uint32_t slot, const hs_access *a) {
  arc *s = p->impl;
  arc_plan *q = &s->pend;
  uint8_t kind;
  double delta;
  bool planned = q->valid && q->key == a->key && q->now == a->now;
  if (planned) {
    kind = q->kind;
    delta = q->delta;
    q->valid = false;
  } else { /* no eviction was needed (or another miss's plan is pending) */
    kind = a->hint == HS_HINT_RING ? ARC_NONE : arc_classify(s, a->key);
    delta = arc_delta(s, kind);
  }
  bool restore =
      s->evictions && (s->evict_unplanned || s->evict_key != a->key || s->evict_now != a->now);
  s->evictions = 0;
  s->evict_unplanned = false;
  uint32_t e = arc_ghost_find(s, a->key);
  if (e != KM_ABSENT)
    arc_ghost_forget(s, e);
  else if (kind != ARC_NONE) /* its ghost went meanwhile: one too many */
    restore = true;
  s->keys[slot] = a->key;
  s->p = arc_moved(s, p->capacity, delta);
  s->list[slot] = kind == ARC_NONE ? ARC_T1 : ARC_T2;
  dl_push_head(arc_list(s, s->list[slot]), s->links, slot, a->size);
  if (restore) arc_restore_bounds(s, p->capacity);
}

static void arc_hit(hs_policy *p, uint32_t slot, const hs_access *a) {
  arc *s = p->impl;
  if (a->hint == HS_HINT_RING) return;
  if (s->list[slot] == ARC_T1) {
    uint32_t size = hs_policy_slot_size(p, slot);
    dl_remove(&s->t1, s->links, slot, size);
    dl_push_head(&s->t2, s->links, slot, size);
    s->list[slot] = ARC_T2;
  } else {
    dl_move_to_head(&s->t2, s->links, slot);
  }
}

static void arc_remove(hs_policy *p, uint32_t slot) {
  arc *s = p->impl;
  dl_remove(arc_list(s, s->list[slot]), s->links, slot, hs_policy_slot_size(p, slot));
  s->list[slot] = ARC_NONE;
}

static uint32_t arc_standing(const hs_policy *p, uint32_t slot) {
  const arc *s = p->impl;
  return s->list[slot];
}

static uint64_t arc_ghosts(const hs_policy *p) {
  const arc *s = p->impl;
  return (uint64_t)s->b1.count + s->b2.count;
}

static void arc_prefetch(const hs_policy *p, uint64_t key) {
  const arc *s = p->impl;
  keymap_prefetch(&s->dir.map, key);
}

static size_t arc_memory(const hs_policy *p) {
  const arc *s = p->impl;
  return sizeof *s + (size_t)p->max_slots * (sizeof *s->keys + sizeof *s->links + sizeof *s->list) +
         gd_memory(&s->dir);
}

double hs_policy_arc_target(const hs_policy *p) {
  if (!p || p->ops != &hs_policy_arc) return -1;
  const arc *s = p->impl;
  return s->p;
}

const hs_policy_ops hs_policy_arc = {
    .name = "arc",
    .summary = "ARC: adaptive split between recency (T1) and frequency (T2), with ghosts",
    .create = arc_create,
    .destroy = arc_destroy,
    .hit = arc_hit,
    .victim = arc_victim,
    .upcoming = arc_upcoming,
    .evict = arc_evict,
    .insert = arc_insert,
    .remove = arc_remove,
    .standing = arc_standing,
    .ghosts = arc_ghosts,
    .memory = arc_memory,
    .prefetch = arc_prefetch,
};
