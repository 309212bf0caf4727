/*
 * policy/clockpro.c — CLOCK-Pro: LIRS's reuse-distance test on a clock.
 *
 * The algorithm (Jiang, Chen & Zhang, "CLOCK-Pro: an effective improvement
 * of the CLOCK replacement", USENIX ATC 2005). Pages are hot (small reuse
 * distance, LIRS's LIR) or cold (HIR). Of the m units of memory, m_c go to
 * resident cold pages and the rest to hot pages. A cold page gets a test
 * period when it comes in (or is found used again after its test): if it is
 * accessed again during the test, its reuse distance is shorter than that
 * of the oldest hot page and it turns hot. A cold page that leaves the
 * memory while in its test stays on the clock as a non-resident cold page
 * until the test ends, so a fault on it is recognised.
 *
 * All pages — hot, resident cold, non-resident cold — sit on one clock, in
 * the order they were placed at the list head (the newest end); hits only
 * set the page's reference bit. Three hands sweep from the oldest page to
 * the newest, then round again:
 *
 *   HAND_cold  rests on a resident cold page and finds the victim: a page
 *              with its bit clear is replaced (staying as a non-resident
 *              page if in its test, leaving the clock if not); a page with
 *              its bit set has it cleared and goes to the list head — turned
 *              hot if it was in its test (which may move HAND_hot), else
 *              given a new test period;
 *   HAND_hot   rests on the hot page of largest recency; when hot pages are
 *              over their share it sweeps: a hot page with its bit set is
 *              spared (bit cleared, to the list head), the first one with a
 *              clear bit turns cold (to the list head); every cold page it
 *              passes ends its test period, and a non-resident one leaves
 *              the clock; it stops at the next hot page;
 *   HAND_test  ends test periods when non-resident cold pages are too many
 *              (more than m units, or cold pages of both kinds more than
 *              m_c + m on a fault): it ends the test of each cold page it
 *              passes until it has removed a non-resident one, and stops at
 *              the next cold page.
 *
 * A fault on a page that is not on the clock brings it in cold, in its test,
 * at the list head. A fault on a non-resident cold page (in its test, by
 * construction) brings it in hot, after HAND_hot has made room. m_c adapts:
 * +size when a cold page is accessed during its test, -size when a test
 * ends without one, kept within [cold * m, m - cold * m] (parameter cold,
 * 1% by default, at least one unit; also m_c's first value). While the
 * memory fills for the first time, pages come in hot until hot pages hold
 * m - m_c units, as in the authors' simulator.
 *
 * Choices the paper leaves open, kept minimal: hands start at the list
 * tail (the oldest page) when first used, as in the authors' simulator;
 * the paper's "adjusting the moving speeds" of the hands to m_c is HAND_hot
 * running while hot units + the promoted page's size exceed m - m_c (one
 * demotion per promotion while m_c holds still, more or fewer as it moves),
 * as libCacheSim does; if HAND_hot ends the test of the very page being
 * promoted, the promotion is off, as in the authors' simulator: the page
 * stays cold with a new test period (HAND_cold's case) or comes in as a new
 * cold page (the fault's case), its access counted once in m_c; a resident
 * cold page whose test HAND_hot ends while its bit is set was used during
 * its test, so m_c grows. Non-resident pages are bounded to one per slot as
 * well as m units.
 *
 * Byte mode: every share (hot units, m_c, the bounds) is in units; a page
 * evicted frees its own size, and the caller asks again until the incoming
 * page fits. If no cold page is resident (only byte mode allows that),
 * HAND_hot demotes one first.
 *
 * Invariants, after every call: hot pages never carry a test period; every
 * non-resident page is cold and in its test; HAND_cold rests on a resident
 * cold page (or none exists); the counters match the clock;
 * non-resident units <= m and entries <= slots.
 *
 * Victims. HAND_cold steps over pinned pages without changing them. If
 * every resident cold page is pinned, the first unpinned page from HAND_hot
 * on is returned (a hot page evicted that way leaves no history). victim may
 * move the hands, turn pages hot or cold and end test periods — all steps
 * the algorithm would take anyway, so asking again is safe — but only evict
 * makes a page leave.
 *
 * Standing: 3 = hot, 2 = cold in its test period, 1 = cold.
 *
 * Hints. An access under a ring (HS_HINT_RING) never raises a page above a
 * new cold page ("used once"): a hit does not set the bit, and a fault on a
 * non-resident page brings it in as a new cold page, forgetting its test.
 *
 * Cost. A hit is one relaxed atomic store to the page's bit, so hits need no
 * lock (HS_POLICY_CONCURRENT_HIT); the rest takes the policy lock. Hands
 * move a step or two per fault (measured on skewed traces: 1.0-1.3 steps of
 * HAND_cold, up to 0.8 of HAND_hot, 0.6-1.0 of HAND_test), at worst a few
 * laps of the clock, which the loops bound. Per slot: a resident node
 * (key, links, flags, bit: 18 bytes) and a non-resident node (key, links,
 * size, flags: 21) plus the key index (5-11), about 55 bytes with the
 * generic layer's 4.
 *
 * Upcoming victims (the background writer's look-ahead): the resident cold
 * pages with a clear bit from HAND_cold on. Exact for the first when there
 * is one; none is listed while no page is cold, since HAND_hot's demotions
 * are not foreseen.
 */
#include "core/error.h"
#include "policy/dlist.h"
#include "policy/irr.h"
#include "policy/keymap.h"
#include "policy/policy_impl.h"

#include <stdio.h>
#include <stdlib.h>

enum { C_HOT = 1, C_TEST = 2, C_LIVE = 4 };

/* Node i < n is slot i; node n + g is non-resident page g. The clock is a
 * circular list: links[].prev is the older neighbour, .next the newer; the
 * hands move to .next. */
typedef struct clockpro {
  uint32_t n, gmax;
  uint64_t *keys;       /* n + gmax */
  dl_node *links;       /* n + gmax */
  uint32_t *gsize;      /* gmax */
  uint8_t *flags;       /* n + gmax: C_* */
  _Atomic uint8_t *ref; /* n: reference bits */
  keymap map;           /* non-resident pages by key */
  uint32_t free_ghost;  /* chained through links[].next */
  uint32_t head;        /* the newest page; DL_NIL if the clock is empty */
  uint32_t nodes;
  uint32_t hand_hot, hand_cold, hand_test;
  uint32_t candidate; /* the page being promoted, or DL_NIL */
  uint32_t hot_count, cold_count, nonres_count;
  uint64_t hot_units, cold_units, nonres_units;
  uint64_t mc, mc_min, mc_max;
  bool filled; /* a victim has been asked for */
} clockpro;

static inline bool is_ghost(const clockpro *s, uint32_t i) {
  return i >= s->n;
}

static inline uint64_t node_size(const hs_policy *p, const clockpro *s, uint32_t i) {
  return is_ghost(s, i) ? s->gsize[i - s->n] : hs_policy_slot_size(p, i);
}

static inline bool resident_cold(const clockpro *s, uint32_t i) {
  return !is_ghost(s, i) && (s->flags[i] & (C_LIVE | C_HOT)) == C_LIVE;
}

static inline bool ref_get(const clockpro *s, uint32_t i) {
  return atomic_load_explicit(&s->ref[i], memory_order_relaxed) != 0;
}

static inline void ref_clear(clockpro *s, uint32_t i) {
  atomic_store_explicit(&s->ref[i], 0, memory_order_relaxed);
}

static inline uint32_t oldest(const clockpro *s) {
  return s->head == DL_NIL ? DL_NIL : s->links[s->head].next;
}

static hs_status clockpro_create(hs_policy *p) {
  uint32_t n = p->max_slots;
  clockpro *s = calloc(1, sizeof *s);
  if (!s) return hs_fail(HS_ERR_NOMEM, 0, "clockpro: no memory for %u slots", n);
  s->n = n;
  s->gmax = n;
  size_t total = (size_t)n + s->gmax;
  s->keys = malloc(sizeof *s->keys * total);
  s->links = malloc(sizeof *s->links * total);
  s->gsize = malloc(sizeof *s->gsize * s->gmax);
  s->flags = calloc(total, sizeof *s->flags);
  s->ref = malloc(sizeof *s->ref * n);
  if (!s->keys || !s->links || !s->gsize || !s->flags || !s->ref ||
      !keymap_init(&s->map, s->gmax, keymap_dense_space(p->env.key_space, s->gmax))) {
    free(s->keys);
    free(s->links);
    free(s->gsize);
    free(s->flags);
    free((void *)s->ref);
    free(s);
    return hs_fail(HS_ERR_NOMEM, 0, "clockpro: no memory for %u slots", n);
  }
  for (uint32_t i = 0; i < n; i++) atomic_init(&s->ref[i], 0);
  for (uint32_t g = 0; g < s->gmax; g++)
    s->links[n + g].next = g + 1 < s->gmax ? n + g + 1 : DL_NIL;
  s->free_ghost = n;
  s->head = s->hand_hot = s->hand_cold = s->hand_test = s->candidate = DL_NIL;
  uint64_t lo = (uint64_t)(p->param[0] * (double)p->capacity);
  s->mc_min = lo < 1 ? 1 : lo > p->capacity ? p->capacity : lo;
  s->mc_max = p->capacity - s->mc_min > s->mc_min ? p->capacity - s->mc_min : s->mc_min;
  s->mc = s->mc_min;
  s->map.keys = s->keys;
  p->impl = s;
  return HS_OK;
}

static void clockpro_destroy(hs_policy *p) {
  clockpro *s = p->impl;
  keymap_free(&s->map);
  free(s->keys);
  free(s->links);
  free(s->gsize);
  free(s->flags);
  free((void *)s->ref);
  free(s);
}

/* --- the clock ---------------------------------------------------------- */

static void link_head(clockpro *s, uint32_t x) {
  dl_node *l = s->links;
  if (s->head == DL_NIL) {
    l[x].prev = l[x].next = x;
  } else {
    uint32_t o = l[s->head].next;
    l[x].prev = s->head;
    l[x].next = o;
    l[s->head].next = x;
    l[o].prev = x;
  }
  s->head = x;
  s->nodes++;
  s->flags[x] |= C_LIVE;
}

/* Takes x off the clock; a hand on x moves on to the next page. */
static void unlink_node(clockpro *s, uint32_t x) {
  dl_node *l = s->links;
  uint32_t nx = l[x].next, pv = l[x].prev;
  bool alone = nx == x;
  uint32_t after = alone ? DL_NIL : nx;
  if (s->hand_hot == x) s->hand_hot = after;
  if (s->hand_cold == x) s->hand_cold = after;
  if (s->hand_test == x) s->hand_test = after;
  if (s->head == x) s->head = alone ? DL_NIL : pv;
  if (!alone) {
    l[pv].next = nx;
    l[nx].prev = pv;
  }
  s->nodes--;
  s->flags[x] &= (uint8_t)~C_LIVE;
}

static void move_head(clockpro *s, uint32_t x) {
  unlink_node(s, x);
  link_head(s, x);
}

static void mc_up(clockpro *s, uint64_t sz) {
  s->mc = s->mc + sz < s->mc_max ? s->mc + sz : s->mc_max;
}

static void mc_down(clockpro *s, uint64_t sz) {
  s->mc = s->mc >= s->mc_min + sz ? s->mc - sz : s->mc_min;
}

static void ghost_free(clockpro *s, uint32_t g) {
  unlink_node(s, g);
  keymap_del(&s->map, g);
  s->nonres_count--;
  s->nonres_units -= s->gsize[g - s->n];
  s->flags[g] = 0;
  s->links[g].next = s->free_ghost;
  s->free_ghost = g;
}

/* Cold page x's test period ends; a non-resident page leaves the clock. */
static void end_test(const hs_policy *p, clockpro *s, uint32_t x) {
  uint64_t sz = node_size(p, s, x);
  s->flags[x] &= (uint8_t)~C_TEST;
  if (x == s->candidate) {
    /* Being promoted: its access was counted already. */
  } else if (!is_ghost(s, x) && ref_get(s, x)) {
    mc_up(s, sz); /* used during its test, though HAND_cold has not seen it yet */
  } else {
    mc_down(s, sz);
  }
  if (is_ghost(s, x)) ghost_free(s, x);
}

/* --- the hands ---------------------------------------------------------- */

/* HAND_hot turns one hot page cold, ending the tests of the cold pages it
 * passes, and stops at the next hot page. False if there was none. */
static bool run_hand_hot(const hs_policy *p, clockpro *s) {
  if (s->hot_count == 0) {
    s->hand_hot = DL_NIL;
    return false;
  }
  if (s->hand_hot == DL_NIL) s->hand_hot = oldest(s);
  /* Bits a concurrent hit sets again could keep the hand going; past two
   * rounds a hot page is demoted whatever its bit. */
  uint64_t spare = 2ull * s->nodes + 2;
  bool demoted = false;
  for (;;) {
    uint32_t x = s->hand_hot;
    if (s->flags[x] & C_HOT) {
      if (demoted) break;
      if (ref_get(s, x) && spare > 0) {
        spare--;
        ref_clear(s, x);
        move_head(s, x);
      } else {
        uint64_t sz = node_size(p, s, x);
        ref_clear(s, x);
        s->flags[x] &= (uint8_t)~C_HOT;
        s->hot_units -= sz;
        s->hot_count--;
        s->cold_units += sz;
        s->cold_count++;
        move_head(s, x);
        demoted = true;
        if (s->hot_count == 0) {
          s->hand_hot = DL_NIL;
          break;
        }
      }
      if (s->hand_hot == DL_NIL) s->hand_hot = oldest(s);
      continue;
    }
    uint32_t nx = s->links[x].next;
    if (s->hand_test == x) s->hand_test = nx; /* HAND_test is never behind HAND_hot */
    if (s->flags[x] & C_TEST) end_test(p, s, x);
    s->hand_hot = nx;
  }
  return demoted;
}

/* HAND_test moves on to the next cold page (passing hot ones only). */
static void settle_test(clockpro *s) {
  uint32_t x = s->hand_test;
  if (x == DL_NIL) return;
  for (uint32_t k = 0; k < s->nodes && (s->flags[x] & C_HOT); k++) x = s->links[x].next;
  s->hand_test = x;
}

/* HAND_test ends test periods until it has removed one non-resident page. */
static void run_hand_test(const hs_policy *p, clockpro *s) {
  if (s->nonres_count == 0) return;
  if (s->hand_test == DL_NIL) s->hand_test = oldest(s);
  for (uint32_t k = 0, laps = s->nodes + 1; k < laps && s->hand_test != DL_NIL; k++) {
    uint32_t x = s->hand_test;
    bool ghost = is_ghost(s, x);
    s->hand_test = s->links[x].next;
    if (s->flags[x] & C_TEST) {
      end_test(p, s, x);
      if (ghost) break;
    }
  }
  settle_test(s);
}

/* HAND_cold moves on to the next resident cold page. */
static void settle_cold(clockpro *s) {
  if (s->cold_count == 0) {
    s->hand_cold = DL_NIL;
    return;
  }
  uint32_t x = s->hand_cold != DL_NIL ? s->hand_cold : oldest(s);
  while (!resident_cold(s, x)) x = s->links[x].next;
  s->hand_cold = x;
}

/* Cold page x, in its test and accessed again, is to turn hot: m_c grows
 * and HAND_hot makes room. False if HAND_hot ended x's test meanwhile. */
static bool make_room_for_hot(const hs_policy *p, clockpro *s, uint32_t x, uint64_t sz) {
  s->candidate = x;
  mc_up(s, sz);
  while (s->hot_units + sz > p->capacity - s->mc && (s->flags[x] & C_TEST))
    if (!run_hand_hot(p, s)) break;
  s->candidate = DL_NIL;
  return (s->flags[x] & C_TEST) != 0;
}

/* --- the operations ------------------------------------------------------ */

static void clockpro_hit(hs_policy *p, uint32_t x, const hs_access *a) {
  clockpro *s = p->impl;
  if (a->hint == HS_HINT_RING) return;
  if (!ref_get(s, x)) atomic_store_explicit(&s->ref[x], 1, memory_order_relaxed);
}

/* Every resident cold page is pinned: the first unpinned page from
 * HAND_hot on, cold ones first. */
static int64_t any_unpinned(const clockpro *s, hs_pinned_fn pinned, void *ctx) {
  uint32_t start = s->hand_hot != DL_NIL ? s->hand_hot : oldest(s);
  int64_t hot = -1;
  uint32_t x = start;
  for (uint32_t k = 0; k < s->nodes; k++, x = s->links[x].next) {
    if (is_ghost(s, x) || (pinned && pinned(ctx, x))) continue;
    if (!(s->flags[x] & C_HOT)) return x;
    if (hot < 0) hot = x;
  }
  return hot;
}

static int64_t clockpro_victim(hs_policy *p, const hs_access *incoming, hs_pinned_fn pinned,
                               void *ctx) {
  clockpro *s = p->impl;
  (void)incoming;
  s->filled = true;
  uint64_t budget = 4ull * s->nodes + 8;
  uint32_t skipped = 0;
  while (budget-- > 0) {
    if (s->cold_count == 0) {
      if (!run_hand_hot(p, s)) break;
      continue;
    }
    settle_cold(s);
    uint32_t x = s->hand_cold;
    if (pinned && pinned(ctx, x)) {
      if (++skipped >= s->cold_count) break;
      s->hand_cold = s->links[x].next;
      continue;
    }
    if (!ref_get(s, x)) return x;
    skipped = 0;
    ref_clear(s, x);
    s->hand_cold = s->links[x].next;
    uint64_t sz = hs_policy_slot_size(p, x);
    if ((s->flags[x] & C_TEST) && make_room_for_hot(p, s, x, sz)) {
      s->flags[x] = C_LIVE | C_HOT;
      s->cold_units -= sz;
      s->cold_count--;
      s->hot_units += sz;
      s->hot_count++;
    } else {
      s->flags[x] |= C_TEST; /* a new test period */
    }
    move_head(s, x);
  }
  return any_unpinned(s, pinned, ctx);
}

/* HAND_cold's next round without moving it: the resident cold pages from
 * the hand on whose bit is clear. The first is victim's answer when there
 * is one; a cold page with its bit set would start a test period or turn
 * hot, and HAND_hot turns hot pages cold as needed, which this does not
 * foresee: none is listed while no resident page is cold. */
static uint32_t clockpro_upcoming(const hs_policy *p, uint32_t *slots, uint32_t max) {
  const clockpro *s = p->impl;
  (void)p;
  if (s->cold_count == 0) return 0;
  uint32_t x = s->hand_cold != DL_NIL ? s->hand_cold : oldest(s), n = 0;
  for (uint32_t k = 0; k < s->nodes && n < max; k++, x = s->links[x].next)
    if (resident_cold(s, x) && !ref_get(s, x)) slots[n++] = x;
  return n;
}

static void clockpro_evict(hs_policy *p, uint32_t x) {
  clockpro *s = p->impl;
  uint64_t sz = hs_policy_slot_size(p, x);
  if (s->flags[x] & C_HOT) {
    s->hot_units -= sz;
    s->hot_count--;
    unlink_node(s, x);
    s->flags[x] = 0;
    settle_cold(s);
    return;
  }
  s->cold_units -= sz;
  s->cold_count--;
  if ((s->flags[x] & C_TEST) && s->free_ghost == DL_NIL) run_hand_test(p, s);
  if (s->flags[x] & C_TEST) {
    /* It stays on the clock, in its place, as a non-resident page. */
    uint32_t g = s->free_ghost;
    dl_node *l = s->links;
    s->free_ghost = l[g].next;
    s->keys[g] = s->keys[x];
    s->gsize[g - s->n] = (uint32_t)sz;
    if (l[x].next == x) {
      l[g].prev = l[g].next = g;
    } else {
      l[g] = l[x];
      l[l[x].prev].next = g;
      l[l[x].next].prev = g;
    }
    if (s->head == x) s->head = g;
    if (s->hand_hot == x) s->hand_hot = g;
    if (s->hand_cold == x) s->hand_cold = g;
    if (s->hand_test == x) s->hand_test = g;
    s->flags[g] = C_LIVE | C_TEST;
    keymap_put(&s->map, g);
    s->nonres_count++;
    s->nonres_units += sz;
  } else {
    unlink_node(s, x);
  }
  s->flags[x] = 0;
  while (s->nonres_units > p->capacity && s->nonres_count > 0) run_hand_test(p, s);
  settle_cold(s);
}

static void clockpro_insert(hs_policy *p, uint32_t x, const hs_access *a) {
  clockpro *s = p->impl;
  uint64_t sz = a->size;
  bool ring = a->hint == HS_HINT_RING;
  s->keys[x] = a->key;
  s->flags[x] = 0;
  ref_clear(s, x);
  uint32_t g = s->nonres_count ? keymap_get(&s->map, a->key) : KM_ABSENT;
  if (g != KM_ABSENT) {
    if (!ring && make_room_for_hot(p, s, g, sz)) {
      ghost_free(s, g); /* its test ends in promotion */
      s->flags[x] = C_HOT;
      link_head(s, x);
      s->hot_units += sz;
      s->hot_count++;
      settle_cold(s);
      return;
    }
    if (s->flags[g] & C_LIVE) ghost_free(s, g);
  }
  if (!s->filled && !ring && s->hot_units + sz <= p->capacity - s->mc) {
    s->flags[x] = C_HOT; /* the memory is filling for the first time */
    link_head(s, x);
    s->hot_units += sz;
    s->hot_count++;
    settle_cold(s);
    return;
  }
  s->flags[x] = C_TEST;
  link_head(s, x);
  s->cold_units += sz;
  s->cold_count++;
  while (s->cold_units + s->nonres_units > s->mc + p->capacity && s->nonres_count > 0)
    run_hand_test(p, s);
  settle_cold(s);
}

static void clockpro_remove(hs_policy *p, uint32_t x) {
  clockpro *s = p->impl;
  uint64_t sz = hs_policy_slot_size(p, x);
  if (s->flags[x] & C_HOT) {
    s->hot_units -= sz;
    s->hot_count--;
  } else {
    s->cold_units -= sz;
    s->cold_count--;
  }
  unlink_node(s, x);
  s->flags[x] = 0;
  settle_cold(s);
}

static uint32_t clockpro_standing(const hs_policy *p, uint32_t x) {
  const clockpro *s = p->impl;
  return s->flags[x] & C_HOT ? 3 : s->flags[x] & C_TEST ? 2 : 1;
}

static uint64_t clockpro_ghosts(const hs_policy *p) {
  const clockpro *s = p->impl;
  return s->nonres_count;
}

static void clockpro_prefetch(const hs_policy *p, uint64_t key) {
  const clockpro *s = p->impl;
  keymap_prefetch(&s->map, key);
}

static size_t clockpro_memory(const hs_policy *p) {
  const clockpro *s = p->impl;
  size_t total = (size_t)s->n + s->gmax;
  return sizeof *s + total * (sizeof *s->keys + sizeof *s->links + sizeof *s->flags) +
         (size_t)s->gmax * sizeof *s->gsize + (size_t)s->n * sizeof *s->ref +
         keymap_memory(&s->map);
}

const hs_policy_ops hs_policy_clockpro = {
    .name = "clockpro",
    .flags = HS_POLICY_CONCURRENT_HIT,
    .summary = "CLOCK-Pro: hot and cold pages, test periods, three hands, adaptive cold share",
    .params = {{"cold", 0.01, 0.0, 1.0, false,
                "least (and first) share of the cache for resident cold pages", false}},
    .create = clockpro_create,
    .destroy = clockpro_destroy,
    .hit = clockpro_hit,
    .victim = clockpro_victim,
    .upcoming = clockpro_upcoming,
    .evict = clockpro_evict,
    .insert = clockpro_insert,
    .remove = clockpro_remove,
    .standing = clockpro_standing,
    .ghosts = clockpro_ghosts,
    .memory = clockpro_memory,
    .prefetch = clockpro_prefetch,
};

int hs_policy_clockpro_dump(const hs_policy *p, char *buf, size_t len) {
  if (!p || p->ops != &hs_policy_clockpro) return -1;
  const clockpro *s = p->impl;
  size_t off = 0;
#define OUT(...)                                                                                   \
  do {                                                                                             \
    int k_ = snprintf(off < len ? buf + off : NULL, off < len ? len - off : 0, __VA_ARGS__);       \
    if (k_ > 0) off += (size_t)k_;                                                                 \
  } while (0)
  uint32_t x = oldest(s);
  for (uint32_t k = 0; k < s->nodes; k++, x = s->links[x].next) {
    char st = s->flags[x] & C_HOT ? 'H' : is_ghost(s, x) ? 'n' : s->flags[x] & C_TEST ? 't' : 'c';
    OUT("%s%llu:%c%s", k ? " " : "", (unsigned long long)s->keys[x], st,
        !is_ghost(s, x) && ref_get(s, x) ? "*" : "");
  }
  const uint32_t hands[3] = {s->hand_hot, s->hand_cold, s->hand_test};
  const char *names[3] = {"hot", "cold", "test"};
  OUT(" |");
  for (int h = 0; h < 3; h++) {
    if (hands[h] == DL_NIL)
      OUT(" %s=-", names[h]);
    else
      OUT(" %s=%llu", names[h], (unsigned long long)s->keys[hands[h]]);
  }
  OUT(" mc=%llu", (unsigned long long)s->mc);
#undef OUT
  return (int)off;
}
