/*
 * policy/twoq.c — 2Q, the full version.
 *
 * The algorithm (Johnson & Shasha, "2Q: A Low Overhead High Performance
 * Buffer Management Replacement Algorithm", VLDB 1994, the "full version"
 * of section 2). Three queues: A1in, a FIFO of resident entries seen once;
 * Am, an LRU list of resident entries seen again; A1out, a FIFO of keys
 * (no data) of entries evicted from A1in. On a request for x:
 *   x in Am:     move x to the head of Am;
 *   x in A1in:   nothing — a burst of correlated references right after the
 *                first one does not prove the entry is hot;
 *   x in A1out:  reclaim a slot, put x at the head of Am (its first
 *                reference has aged out of A1in and it came back: hot);
 *   otherwise:   reclaim a slot, put x at the head of A1in.
 * Reclaiming, when the cache is full: if |A1in| > Kin, evict A1in's tail
 * and put its key at the head of A1out, dropping A1out's tail key while
 * |A1out| > Kout; otherwise evict Am's tail and remember nothing (it has
 * not been used for a while). The paper recommends Kin = 25% and Kout = 50%
 * of the cache; they are the parameters `in` and `out`.
 *
 * Byte mode: Kin = floor(in * capacity) and Kout = floor(out * capacity)
 * are units, |A1in| and |A1out| count units (as libCacheSim's TwoQ sizes its
 * queues); a key larger than Kout is not remembered. If Am is empty when
 * A1in is within Kin (possible only with large entries), A1in's tail goes.
 * A returning key is forgotten from A1out when the first eviction for it
 * happens, so it does not count against Kout while room is made (victim()
 * notes the incoming key; evict() looks it up). If the pool interleaves
 * misses (victim A, victim B, evict + insert A, evict + insert B), the
 * lookup done for B is kept for B's insert, and A's insert looks its own
 * key up; only with a third miss in between can a returning key be taken
 * for a new one.
 *
 * Standing: 1 = in A1in, 2 = in Am. Ghosts: the keys in A1out.
 *
 * Hints. Under a ring (HS_HINT_RING) a hit on Am does not move the entry,
 * and a key found in A1out comes back into A1in, not Am ("used once"); its
 * A1out key is forgotten.
 *
 * Invariants. Every resident slot is on A1in or Am once; A1out holds at
 * most Kout units and min(Kout, 3 * slots) keys, none of them resident. The
 * victim is A1in's oldest unpinned entry when A1in exceeds Kin, else Am's
 * least recent unpinned entry, and the other queue's when one has none.
 *
 * Memory and cost. 17 bytes per slot (key, links, queue), 20 per A1out key
 * plus its index: about 40 bytes a page with the default Kout. O(1) per
 * request, one key lookup per miss; the victim may step over pinned
 * entries. A hit on Am moves list links, so the pool takes the policy lock
 * for every hit (a hit on A1in would need none, but which queue a slot is on
 * can change under a concurrent eviction, so hits are not flagged
 * concurrent). PostgreSQL 8.0.2 shipped 2Q briefly, between ARC and the
 * clock-sweep.
 *
 * Upcoming victims (the background writer's look-ahead): A1in's and Am's
 * victim ends, choosing as victim would for a run of misses on new keys
 * (each newcomer grows A1in). A key found in A1out, or a hit on Am, changes
 * the rest of the list: a prediction past the first.
 */
#include "core/error.h"
#include "policy/dlist.h"
#include "policy/ghost.h"
#include "policy/policy_impl.h"

#include <stdlib.h>

enum { Q_NONE = 0, Q_A1IN = 1, Q_AM = 2 };

/* The request victim() was last asked about. */
typedef struct twoq_plan {
  bool valid;
  bool resolved;  /* its A1out key has been looked up (and forgotten) */
  bool ghost_hit; /* it was in A1out (and not under a ring) */
  bool ring;
  uint64_t key, now;
} twoq_plan;

typedef struct twoq {
  uint64_t *keys;
  dl_node *links;
  uint8_t *queue;
  dl_list a1in, am; /* head: newest / most recent */
  ghost_list a1out;
  bool has_a1out;
  uint64_t kin, kout;
  twoq_plan pend;
} twoq;

static void twoq_free(twoq *s) {
  if (!s) return;
  if (s->has_a1out) ghost_free(&s->a1out);
  free(s->keys);
  free(s->links);
  free(s->queue);
  free(s);
}

static hs_status twoq_create(hs_policy *p) {
  twoq *s = calloc(1, sizeof *s);
  if (!s) return hs_fail(HS_ERR_NOMEM, 0, "2q: no memory");
  s->kin = (uint64_t)(p->param[0] * (double)p->capacity);
  s->kout = (uint64_t)(p->param[1] * (double)p->capacity);
  s->keys = malloc(sizeof *s->keys * p->max_slots);
  s->links = malloc(sizeof *s->links * p->max_slots);
  s->queue = calloc(p->max_slots, sizeof *s->queue);
  bool ok = s->keys && s->links && s->queue;
  if (ok && s->kout > 0) {
    uint64_t entries = s->kout < 3ull * p->max_slots ? s->kout : 3ull * p->max_slots;
    if (entries > UINT32_MAX - 1) entries = UINT32_MAX - 1;
    ok = ghost_init(&s->a1out, (uint32_t)entries, s->kout, p->env.key_space);
    s->has_a1out = ok;
  }
  if (!ok) {
    twoq_free(s);
    return hs_fail(HS_ERR_NOMEM, 0, "2q: no memory for %u slots", p->max_slots);
  }
  dl_init(&s->a1in);
  dl_init(&s->am);
  p->impl = s;
  return HS_OK;
}

static void twoq_destroy(hs_policy *p) {
  twoq_free(p->impl);
}

static void twoq_hit(hs_policy *p, uint32_t slot, const hs_access *a) {
  twoq *s = p->impl;
  if (s->queue[slot] == Q_AM && a->hint != HS_HINT_RING) dl_move_to_head(&s->am, s->links, slot);
}

static int64_t twoq_walk(const twoq *s, const dl_list *l, hs_pinned_fn pinned, void *ctx) {
  for (uint32_t i = l->tail; i != DL_NIL; i = s->links[i].prev)
    if (!pinned || !pinned(ctx, i)) return i;
  return -1;
}

static int64_t twoq_victim(hs_policy *p, const hs_access *incoming, hs_pinned_fn pinned,
                           void *ctx) {
  twoq *s = p->impl;
  twoq_plan *q = &s->pend;
  if (!(q->valid && q->key == incoming->key && q->now == incoming->now)) {
    q->valid = true;
    q->resolved = false;
    q->ghost_hit = false;
    q->key = incoming->key;
    q->now = incoming->now;
    q->ring = incoming->hint == HS_HINT_RING;
  }
  bool from_a1in = s->a1in.units > s->kin || s->am.count == 0;
  int64_t v = twoq_walk(s, from_a1in ? &s->a1in : &s->am, pinned, ctx);
  return v >= 0 ? v : twoq_walk(s, from_a1in ? &s->am : &s->a1in, pinned, ctx);
}

/* Looks the key up in A1out and forgets it there; true if it was there. */
static bool twoq_take_ghost(twoq *s, uint64_t key) {
  if (!s->has_a1out) return false;
  uint32_t e = ghost_find(&s->a1out, key);
  if (e == KM_ABSENT) return false;
  ghost_remove(&s->a1out, e);
  return true;
}

/* victim's order for a run of misses on new keys: A1in's oldest while A1in
 * is over Kin (each newcomer takes its victim's place there), else Am's
 * least recent (the newcomer grows A1in). A prediction: a key found in
 * A1out goes to Am instead, and hits move Am's entries. */
static uint32_t twoq_upcoming(const hs_policy *p, uint32_t *slots, uint32_t max) {
  const twoq *s = p->impl;
  uint64_t a1in_units = s->a1in.units;
  uint32_t in = s->a1in.tail, am = s->am.tail, n = 0;
  while (n < max && (in != DL_NIL || am != DL_NIL)) {
    bool from_a1in = (a1in_units > s->kin || s->am.count == 0 || am == DL_NIL) && in != DL_NIL;
    uint32_t v = from_a1in ? in : am;
    if (from_a1in)
      in = s->links[v].prev;
    else {
      am = s->links[v].prev;
      a1in_units += hs_policy_slot_size(p, v);
    }
    slots[n++] = v;
  }
  return n;
}

static void twoq_evict(hs_policy *p, uint32_t slot) {
  twoq *s = p->impl;
  twoq_plan *q = &s->pend;
  if (q->valid && !q->resolved) {
    q->ghost_hit = twoq_take_ghost(s, q->key) && !q->ring;
    q->resolved = true;
  }
  uint32_t size = hs_policy_slot_size(p, slot);
  if (s->queue[slot] == Q_A1IN) {
    dl_remove(&s->a1in, s->links, slot, size);
    if (s->has_a1out) ghost_add(&s->a1out, s->keys[slot], size);
  } else {
    dl_remove(&s->am, s->links, slot, size);
  }
  s->queue[slot] = Q_NONE;
}

static void twoq_insert(hs_policy *p, uint32_t slot, const hs_access *a) {
  twoq *s = p->impl;
  twoq_plan *q = &s->pend;
  bool ghost_hit;
  if (q->valid && q->resolved && q->key == a->key && q->now == a->now) {
    ghost_hit = q->ghost_hit;
    q->valid = false;
  } else { /* no eviction was needed, or another miss's is pending */
    ghost_hit = twoq_take_ghost(s, a->key) && a->hint != HS_HINT_RING;
  }
  s->keys[slot] = a->key;
  s->queue[slot] = ghost_hit ? Q_AM : Q_A1IN;
  dl_push_head(ghost_hit ? &s->am : &s->a1in, s->links, slot, a->size);
}

static void twoq_remove(hs_policy *p, uint32_t slot) {
  twoq *s = p->impl;
  dl_remove(s->queue[slot] == Q_A1IN ? &s->a1in : &s->am, s->links, slot,
            hs_policy_slot_size(p, slot));
  s->queue[slot] = Q_NONE;
}

static uint32_t twoq_standing(const hs_policy *p, uint32_t slot) {
  const twoq *s = p->impl;
  return s->queue[slot];
}

static uint64_t twoq_ghosts(const hs_policy *p) {
  const twoq *s = p->impl;
  return s->has_a1out ? ghost_count(&s->a1out) : 0;
}

static void twoq_prefetch(const hs_policy *p, uint64_t key) {
  const twoq *s = p->impl;
  keymap_prefetch(&s->a1out.map, key);
}

static size_t twoq_memory(const hs_policy *p) {
  const twoq *s = p->impl;
  return sizeof *s +
         (size_t)p->max_slots * (sizeof *s->keys + sizeof *s->links + sizeof *s->queue) +
         (s->has_a1out ? ghost_memory(&s->a1out) : 0);
}

const hs_policy_ops hs_policy_2q = {
    .name = "2q",
    .summary = "2Q (full version): FIFO A1in for first references, LRU Am, ghost FIFO A1out",
    .params =
        {
            {"in", 0.25, 0.0, 1.0, false, "A1in's share of the cache (Kin)", false},
            {"out", 0.5, 0.0, 3.0, false, "A1out's size as a share of the cache (Kout)", false},
        },
    .create = twoq_create,
    .destroy = twoq_destroy,
    .hit = twoq_hit,
    .victim = twoq_victim,
    .upcoming = twoq_upcoming,
    .evict = twoq_evict,
    .insert = twoq_insert,
    .remove = twoq_remove,
    .standing = twoq_standing,
    .ghosts = twoq_ghosts,
    .memory = twoq_memory,
    .prefetch = twoq_prefetch,
};
