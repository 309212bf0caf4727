/*
 * policy/lirs.c — LIRS, the Low Inter-reference Recency Set.
 *
 * The algorithm (Jiang & Zhang, "LIRS: an efficient low inter-reference
 * recency set replacement policy to improve buffer cache performance",
 * SIGMETRICS 2002). A block's recency is the number of other blocks used
 * since its last access; its IRR (inter-reference recency) is the number of
 * other blocks used between its last two accesses. LIRS keeps the blocks
 * whose IRR is low — the LIR set, always resident, L_lirs units — and gives
 * the rest of the cache, L_hirs units (parameter hir, 1% by default, at
 * least one unit), to HIR blocks, which are resident only briefly. Two
 * structures hold it:
 *
 *   stack S  blocks in recency order (top = just used), LIR blocks and HIR
 *            blocks — resident or not — that are more recent than the least
 *            recent LIR block; "stack pruning" removes HIR blocks from the
 *            bottom until an LIR block is there, so the bottom is always the
 *            LIR block of largest recency;
 *   list Q   the resident HIR blocks, in the order they are to leave (front)
 *            or came (end).
 *
 * An access to block X:
 *   X is LIR: move X to the top of S; prune if X was at the bottom.
 *   X is a resident HIR block: move X to the top of S. If X was in S, its
 *     new IRR is smaller than the bottom LIR block's recency: X becomes LIR
 *     and leaves Q, the bottom LIR block becomes HIR and goes to the end of
 *     Q, and S is pruned. If X was not in S it stays HIR and goes to the end
 *     of Q.
 *   X misses: the resident HIR block at the front of Q is replaced; if it is
 *     in S it stays there as a non-resident HIR block (history). X goes on
 *     top of S. If X was in S (non-resident), it becomes LIR as above (the
 *     bottom LIR block turns HIR and goes to Q). Otherwise it is a resident
 *     HIR block at the end of Q.
 * While the cache fills for the first time, every new block is LIR until
 * the LIR set is full (the paper's start). After that the LIR set grows only
 * by IRR, through blocks found in S: libCacheSim lets any new block in as
 * LIR whenever the LIR units leave room, but here room appears when a
 * pinned HIR block forces an LIR victim or a block is removed, and filling
 * it with unproven blocks cost 10% more misses with pins in our tests. Only
 * if no LIR block is left at all (S is empty, so no IRR can be seen) does
 * the start begin again: new blocks are LIR until the next victim.
 * In byte mode the LIR set is full when its units reach L_lirs: a block
 * that becomes LIR demotes bottom LIR blocks until the units fit. The
 * policy never evicts on its own, so Q may hold more than L_hirs units for
 * a while; victims always come from its front. A block larger than L_lirs
 * never becomes LIR.
 *
 * The bound on history. Left alone, S grows without limit under a scan:
 * every new block is left in S as a non-resident HIR block until the bottom
 * LIR block is used again. Implementations bound it: libCacheSim keeps S
 * within twice the cache's units, about one cache's worth of non-resident
 * blocks. We bound the non-resident HIR blocks themselves to one cache's
 * worth — at most `capacity` units and at most one entry per slot — and,
 * over the bound, forget the lowest one in S (the one of largest recency,
 * the first that pruning would remove anyway). One cache of history is what
 * the memory target allows: a resident block costs 25 bytes (key, S and Q
 * links, flags), a remembered one 20 (key, S links, size) plus the key
 * index, about 60 bytes per slot in all with the generic layer's 4.
 *
 * Finding the lowest non-resident block without walking S from its bottom
 * (which sits below the whole LIR set) uses `floor`: no non-resident block,
 * and no resident HIR block, lies below it in S. Only a resident HIR block
 * in S becomes non-resident, so the floor stays right, and the search moves
 * up from it. Blocks become non-resident in about the order they were last
 * used (Q's order), so it passes LIR blocks, which stay passed until an
 * access puts them on top of S again: that access pays for the walk.
 *
 * Invariants, after every call: S's bottom is an LIR block (or S is empty);
 * every resident block is LIR (in S, not in Q) or HIR (in Q, in S or not);
 * LIR units <= L_lirs; non-resident blocks are only in S, at most one per
 * slot and `capacity` units.
 *
 * Victims. The front of Q, stepping over pinned entries; if every resident
 * HIR block is pinned (or Q is empty, which byte mode allows), the unpinned
 * LIR block of largest recency, which leaves S without history. victim
 * changes nothing but the note that the cache has filled.
 *
 * Standing: 3 = LIR, 2 = resident HIR in S, 1 = resident HIR not in S.
 *
 * Hints. An access under a ring (HS_HINT_RING) never raises a block above a
 * resident HIR block just brought in ("used once"): a hit changes nothing,
 * and a miss brings the block in as a resident HIR block, forgetting its
 * history rather than making it LIR.
 *
 * Cost. O(1) amortized per access: pruning removes each entry once, and
 * the floor walk is paid as above. Every hit reorders S, so in the pool
 * every call takes the policy lock (no concurrent flags).
 *
 * Upcoming victims (the background writer's look-ahead): Q's front, then
 * S's LIR blocks from its bottom. Exact for the first; evictions prune S
 * and insertions may turn HIR blocks into LIR ones.
 */
#include "core/error.h"
#include "policy/dlist.h"
#include "policy/irr.h"
#include "policy/keymap.h"
#include "policy/policy_impl.h"

#include <stdio.h>
#include <stdlib.h>

enum { F_LIR = 1, F_IN_S = 2, F_IN_Q = 4 };

/* Node i < n is slot i; node n + g is remembered (non-resident) block g. */
typedef struct lirs {
  uint32_t n, gmax;
  uint64_t *keys;   /* n + gmax */
  dl_node *s_links; /* n + gmax; stack S, head = top, tail = bottom */
  dl_node *q_links; /* n; list Q, head = end, tail = front */
  uint32_t *gsize;  /* gmax: a non-resident block's size */
  uint8_t *flags;   /* n: F_* */
  keymap map;       /* non-resident blocks by key */
  dl_list s, q;
  uint32_t free_ghost; /* free non-resident nodes, chained through s_links[].next */
  uint32_t ghosts;
  uint64_t ghost_units;
  uint32_t floor; /* DL_NIL: S's bottom */
  uint64_t lir_units, lir_limit, hir_limit;
  bool filled; /* a victim has been asked for */
} lirs;

static inline bool is_ghost(const lirs *s, uint32_t i) {
  return i >= s->n;
}

static inline uint64_t node_size(const hs_policy *p, const lirs *s, uint32_t i) {
  return is_ghost(s, i) ? s->gsize[i - s->n] : hs_policy_slot_size(p, i);
}

static hs_status lirs_create(hs_policy *p) {
  uint32_t n = p->max_slots;
  lirs *s = calloc(1, sizeof *s);
  if (!s) return hs_fail(HS_ERR_NOMEM, 0, "lirs: no memory for %u slots", n);
  s->n = n;
  s->gmax = n;
  size_t total = (size_t)n + s->gmax;
  s->keys = malloc(sizeof *s->keys * total);
  s->s_links = malloc(sizeof *s->s_links * total);
  s->q_links = malloc(sizeof *s->q_links * n);
  s->gsize = malloc(sizeof *s->gsize * s->gmax);
  s->flags = calloc(n, sizeof *s->flags);
  if (!s->keys || !s->s_links || !s->q_links || !s->gsize || !s->flags ||
      !keymap_init(&s->map, s->gmax, keymap_dense_space(p->env.key_space, s->gmax))) {
    free(s->keys);
    free(s->s_links);
    free(s->q_links);
    free(s->gsize);
    free(s->flags);
    free(s);
    return hs_fail(HS_ERR_NOMEM, 0, "lirs: no memory for %u slots", n);
  }
  for (uint32_t g = 0; g < s->gmax; g++)
    s->s_links[n + g].next = g + 1 < s->gmax ? n + g + 1 : DL_NIL;
  s->free_ghost = n;
  dl_init(&s->s);
  dl_init(&s->q);
  s->floor = DL_NIL;
  uint64_t hir = (uint64_t)(p->param[0] * (double)p->capacity);
  s->hir_limit = hir < 1 ? 1 : hir > p->capacity ? p->capacity : hir;
  s->lir_limit = p->capacity - s->hir_limit;
  s->map.keys = s->keys;
  p->impl = s;
  return HS_OK;
}

static void lirs_destroy(hs_policy *p) {
  lirs *s = p->impl;
  keymap_free(&s->map);
  free(s->keys);
  free(s->s_links);
  free(s->q_links);
  free(s->gsize);
  free(s->flags);
  free(s);
}

/* Takes node i out of S, keeping the floor valid: nothing below the floor
 * may be non-resident or resident HIR, and every node below i already
 * passes, so the floor may move to i's upper (else lower) neighbour. */
static void s_unlink(lirs *s, uint32_t i) {
  if (s->floor == i)
    s->floor = s->s_links[i].prev != DL_NIL ? s->s_links[i].prev : s->s_links[i].next;
  dl_remove(&s->s, s->s_links, i, 0);
}

static void s_to_top(lirs *s, uint32_t i) {
  if (s->s.head == i) return;
  s_unlink(s, i);
  dl_push_head(&s->s, s->s_links, i, 0);
}

static void ghost_free(lirs *s, uint32_t g) {
  s_unlink(s, g);
  keymap_del(&s->map, g);
  s->ghosts--;
  s->ghost_units -= s->gsize[g - s->n];
  s->s_links[g].next = s->free_ghost;
  s->free_ghost = g;
}

/* Forgets the non-resident block lowest in S. */
static void drop_lowest_ghost(lirs *s) {
  if (s->ghosts == 0) return;
  uint32_t i = s->floor != DL_NIL ? s->floor : s->s.tail;
  uint32_t hir = DL_NIL; /* the lowest resident HIR block passed */
  for (int pass = 0; pass < 2; pass++) {
    for (; i != DL_NIL && !is_ghost(s, i); i = s->s_links[i].prev)
      if (hir == DL_NIL && !(s->flags[i] & F_LIR)) hir = i;
    if (i != DL_NIL) break;
    /* Not reached while the floor is kept right; start again from the
     * bottom rather than fail. */
    i = s->s.tail;
    hir = DL_NIL;
  }
  if (i == DL_NIL) return;
  s->floor = hir != DL_NIL ? hir : i;
  ghost_free(s, i);
}

/* Removes HIR blocks from S's bottom until an LIR block is there. */
static void prune(lirs *s) {
  while (s->s.tail != DL_NIL) {
    uint32_t b = s->s.tail;
    if (is_ghost(s, b)) {
      ghost_free(s, b);
    } else if (s->flags[b] & F_LIR) {
      break;
    } else {
      s_unlink(s, b);
      s->flags[b] &= (uint8_t)~F_IN_S;
    }
  }
}

/* The LIR block at S's bottom becomes HIR, goes to the end of Q, and
 * leaves S by pruning. */
static void demote_bottom(hs_policy *p, lirs *s) {
  uint32_t b = s->s.tail;
  uint64_t sz = node_size(p, s, b);
  s->flags[b] = (uint8_t)((s->flags[b] & ~F_LIR) | F_IN_Q);
  s->lir_units -= sz;
  dl_push_head(&s->q, s->q_links, b, sz);
  prune(s);
}

/* Slot x, on top of S, becomes LIR; bottom LIR blocks turn HIR until the
 * LIR set fits in its units again. */
static void make_lir(hs_policy *p, lirs *s, uint32_t x, uint64_t sz) {
  s->flags[x] |= F_LIR;
  s->lir_units += sz;
  while (s->lir_units > s->lir_limit && s->s.tail != DL_NIL && s->s.tail != x) demote_bottom(p, s);
}

static void lirs_hit(hs_policy *p, uint32_t x, const hs_access *a) {
  lirs *s = p->impl;
  if (a->hint == HS_HINT_RING) return;
  uint64_t sz = hs_policy_slot_size(p, x);
  uint8_t f = s->flags[x];
  if (f & F_LIR) {
    bool bottom = s->s.tail == x;
    s_to_top(s, x);
    if (bottom) prune(s);
    return;
  }
  if ((f & F_IN_S) && sz <= s->lir_limit) {
    s_to_top(s, x);
    dl_remove(&s->q, s->q_links, x, sz);
    s->flags[x] = F_IN_S;
    make_lir(p, s, x, sz);
    return;
  }
  if (f & F_IN_S) {
    s_to_top(s, x);
  } else {
    dl_push_head(&s->s, s->s_links, x, 0);
    s->flags[x] |= F_IN_S;
  }
  dl_move_to_head(&s->q, s->q_links, x);
  prune(s); /* x leaves S again if no LIR block is there */
}

static int64_t lirs_victim(hs_policy *p, const hs_access *incoming, hs_pinned_fn pinned,
                           void *ctx) {
  lirs *s = p->impl;
  (void)incoming;
  s->filled = true;
  for (uint32_t i = s->q.tail; i != DL_NIL; i = s->q_links[i].prev)
    if (!pinned || !pinned(ctx, i)) return i;
  for (uint32_t i = s->s.tail; i != DL_NIL; i = s->s_links[i].prev)
    if (!is_ghost(s, i) && (s->flags[i] & F_LIR) && (!pinned || !pinned(ctx, i))) return i;
  return -1;
}

/* Q's front onwards (the resident HIR blocks), then S's LIR blocks from
 * its bottom: victim's order. Exact for the first; the rest is a
 * prediction, since each eviction may prune S and each insertion may turn
 * a HIR block into a LIR one. */
static uint32_t lirs_upcoming(const hs_policy *p, uint32_t *slots, uint32_t max) {
  const lirs *s = p->impl;
  uint32_t n = 0;
  dl_upcoming(&s->q, s->q_links, slots, &n, max);
  for (uint32_t i = s->s.tail; i != DL_NIL && n < max; i = s->s_links[i].prev)
    if (!is_ghost(s, i) && (s->flags[i] & F_LIR)) slots[n++] = i;
  return n;
}

/* Slot x, in S, leaves the cache but stays in S as a non-resident HIR
 * block, taking x's place. */
static void to_ghost(hs_policy *p, lirs *s, uint32_t x, uint64_t sz) {
  if (s->free_ghost == DL_NIL) drop_lowest_ghost(s);
  uint32_t g = s->free_ghost;
  s->free_ghost = s->s_links[g].next;
  s->keys[g] = s->keys[x];
  s->gsize[g - s->n] = (uint32_t)sz;
  dl_node *l = s->s_links;
  l[g] = l[x];
  if (l[x].prev != DL_NIL)
    l[l[x].prev].next = g;
  else
    s->s.head = g;
  if (l[x].next != DL_NIL)
    l[l[x].next].prev = g;
  else
    s->s.tail = g;
  if (s->floor == x) s->floor = g;
  keymap_put(&s->map, g);
  s->ghosts++;
  s->ghost_units += sz;
  while (s->ghost_units > p->capacity) drop_lowest_ghost(s);
}

static void lirs_evict(hs_policy *p, uint32_t x) {
  lirs *s = p->impl;
  uint64_t sz = hs_policy_slot_size(p, x);
  uint8_t f = s->flags[x];
  s->flags[x] = 0;
  if (f & F_IN_Q) {
    dl_remove(&s->q, s->q_links, x, sz);
    if (f & F_IN_S) to_ghost(p, s, x, sz);
    return;
  }
  /* An LIR block, because every resident HIR block is pinned: it leaves
   * without history (a non-resident block there could lie below the floor). */
  s->lir_units -= sz;
  s_unlink(s, x);
  prune(s);
}

static void lirs_remove(hs_policy *p, uint32_t x) {
  lirs *s = p->impl;
  uint64_t sz = hs_policy_slot_size(p, x);
  uint8_t f = s->flags[x];
  s->flags[x] = 0;
  if (f & F_IN_Q) dl_remove(&s->q, s->q_links, x, sz);
  if (f & F_IN_S) s_unlink(s, x);
  if (f & F_LIR) s->lir_units -= sz;
  prune(s);
}

static void lirs_insert(hs_policy *p, uint32_t x, const hs_access *a) {
  lirs *s = p->impl;
  uint64_t sz = a->size;
  bool ring = a->hint == HS_HINT_RING;
  s->keys[x] = a->key;
  s->flags[x] = F_IN_S;
  uint32_t g = s->ghosts ? keymap_get(&s->map, a->key) : KM_ABSENT;
  if (g != KM_ABSENT) ghost_free(s, g);
  if (s->s.tail == DL_NIL) s->filled = false; /* no LIR block left: start again */
  dl_push_head(&s->s, s->s_links, x, 0);
  if (!ring && g != KM_ABSENT && sz <= s->lir_limit) {
    make_lir(p, s, x, sz); /* its IRR is below the bottom LIR block's recency */
    return;
  }
  if (!ring && !s->filled && s->lir_units + sz <= s->lir_limit) {
    s->flags[x] |= F_LIR; /* the LIR set is filling */
    s->lir_units += sz;
    return;
  }
  s->flags[x] |= F_IN_Q;
  dl_push_head(&s->q, s->q_links, x, sz);
  prune(s); /* x leaves S again if no LIR block is there */
}

static uint32_t lirs_standing(const hs_policy *p, uint32_t x) {
  const lirs *s = p->impl;
  return s->flags[x] & F_LIR ? 3 : s->flags[x] & F_IN_S ? 2 : 1;
}

static uint64_t lirs_ghosts(const hs_policy *p) {
  const lirs *s = p->impl;
  return s->ghosts;
}

static void lirs_prefetch(const hs_policy *p, uint64_t key) {
  const lirs *s = p->impl;
  keymap_prefetch(&s->map, key);
}

static size_t lirs_memory(const hs_policy *p) {
  const lirs *s = p->impl;
  size_t total = (size_t)s->n + s->gmax;
  return sizeof *s + total * (sizeof *s->keys + sizeof *s->s_links) +
         (size_t)s->n * (sizeof *s->q_links + sizeof *s->flags) +
         (size_t)s->gmax * sizeof *s->gsize + keymap_memory(&s->map);
}

const hs_policy_ops hs_policy_lirs = {
    .name = "lirs",
    .summary = "LIRS: low inter-reference recency set, stack S and list Q with history",
    .params = {{"hir", 0.01, 0.0, 1.0, false, "share of the cache for resident HIR blocks", false}},
    .create = lirs_create,
    .destroy = lirs_destroy,
    .hit = lirs_hit,
    .victim = lirs_victim,
    .upcoming = lirs_upcoming,
    .evict = lirs_evict,
    .insert = lirs_insert,
    .remove = lirs_remove,
    .standing = lirs_standing,
    .ghosts = lirs_ghosts,
    .memory = lirs_memory,
    .prefetch = lirs_prefetch,
};

int hs_policy_lirs_dump(const hs_policy *p, char *buf, size_t len) {
  if (!p || p->ops != &hs_policy_lirs) return -1;
  const lirs *s = p->impl;
  size_t off = 0;
#define OUT(...)                                                                                   \
  do {                                                                                             \
    int k_ = snprintf(off < len ? buf + off : NULL, off < len ? len - off : 0, __VA_ARGS__);       \
    if (k_ > 0) off += (size_t)k_;                                                                 \
  } while (0)
  OUT("S:");
  for (uint32_t i = s->s.head; i != DL_NIL; i = s->s_links[i].next)
    OUT(" %llu:%c", (unsigned long long)s->keys[i],
        is_ghost(s, i)        ? 'n'
        : s->flags[i] & F_LIR ? 'L'
                              : 'H');
  OUT(" | Q:");
  for (uint32_t i = s->q.tail; i != DL_NIL; i = s->q_links[i].prev)
    OUT(" %llu", (unsigned long long)s->keys[i]);
#undef OUT
  return (int)off;
}
