/*
 * policy/lru_k.c — LRU-K: evict the page whose K-th most recent reference is
 * the oldest.
 *
 * The algorithm (O'Neil, O'Neil & Weikum, "The LRU-K page replacement
 * algorithm for database disk buffering", SIGMOD 1993). For each page p the
 * policy keeps HIST(p,1..K), the times of its K most recent uncorrelated
 * references (HIST(p,1) the latest), and LAST(p), the time of its latest
 * reference of any kind. The backward K-distance of p at time t is
 * t - HIST(p,K), infinite if p has fewer than K known references. The
 * victim is the page of largest backward K-distance, i.e. smallest HIST(p,K);
 * among pages at infinite distance the paper leaves a subsidiary policy
 * open, and this one is LRU on LAST, as the paper suggests (ties among equal
 * HIST(p,K) are also broken by LAST, then by slot). K = 1 is LRU; K = 2 (the
 * default) is the paper's LRU-2, which tells a page used twice recently from
 * one a scan touched once.
 *
 * Correlated Reference Period (crp, in milliseconds, default 0; a caller
 * whose clock counts requests may only leave it 0, see hs_policy_env).
 * A reference at t with t - LAST(p) <= crp is correlated with the previous
 * one (the same transaction re-reading a page): it only sets LAST(p) = t. An
 * uncorrelated one closes the previous burst: with c = LAST(p) - HIST(p,1),
 * HIST(p,i) = HIST(p,i-1) + c for i = K..2, then HIST(p,1) = LAST(p) = t —
 * the paper's shift, which collapses a burst to one point in time. Only a
 * page with t - LAST(q) > crp may be the victim; if every unpinned page is
 * still in its correlated period the paper has no answer and the one with
 * the smallest key is taken anyway. With crp = 0 and a millisecond clock
 * (the pool's), references in the same millisecond count once, but every
 * page may be the victim (an empty period protects nothing: without this,
 * a pool serving a million reads a second would find most pages "in their
 * period" and walk the heap on every miss).
 *
 * Retained Information Period. A page's history outlives the page: when it
 * is evicted HIST(p,1..K-1) is kept, and if the page comes back its new
 * reference is added to it (the paper's shift without the correlation
 * adjustment), so a page evicted between its two references still gets a
 * finite K-distance. The paper retains history for a period of time and
 * purges it in the background; here it is bounded by count instead: a ring
 * of the last floor(history * min(capacity, slots)) evictions (history=1.0:
 * as many as the cache holds). A record whose page has come back leaves its
 * place empty until the ring comes round, so the ring holds the history of
 * the last H evicted pages that have not returned.
 *
 * Times. Clock values are stored as 32-bit offsets from a base that moves
 * forward when the clock is 2^31 past it: every stored time is shifted
 * (times older than the new base, at least 2^30 ticks ago, become equal)
 * and the heap rebuilt — O(n) once per 2^30 ticks. Within 2^30 ticks the
 * order is exact.
 *
 * Invariants. Every resident slot is in the heap exactly once, ordered by
 * (K references known?, HIST(p,K), LAST(p), slot); 1 <= count(p) <= K is how
 * many of HIST(p,1..K) are known; no key is both resident and in the
 * history ring, except after an insertion under a ring (see below) until
 * the page leaves again; the ring's live records are indexed by key.
 *
 * Standing: count(p), the number of uncorrelated references known (1..K). An
 * access under a ring (HS_HINT_RING) changes nothing for a resident page,
 * and a page brought in under a ring starts with count 1, its history
 * ignored: it stays "used once".
 *
 * Cost. The victim order is a binary min-heap, so an uncorrelated hit, an
 * insertion and an eviction cost O(log n), and a correlated hit too (it
 * moves LAST). A victim is O(1) when the heap's minimum is unpinned and out
 * of its correlated period; otherwise the heap is walked in order (a second
 * heap of candidates, grown on demand and kept), O(m log m) for m entries
 * stepped over. This is not the O(1) of the list policies: I know of no
 * O(1) structure for exact LRU-K order, since a hit can move a page
 * anywhere in it (the paper itself keeps a search tree). Every hit writes
 * the heap, so in the pool all calls take the policy lock. Memory at K=2,
 * history=1.0: 29 bytes per slot (two times, LAST, key, count, heap index
 * and position) plus 13 per history record and its key index (5-11 bytes):
 * 52-57 bytes per slot with the generic layer's 4, measured; each further K
 * adds 8, so K=3 and K=4 exceed 64 bytes per entry unless history < 1.
 *
 * Upcoming victims (the background writer's look-ahead): the heap in
 * order, by a best-first walk on a candidate heap of its own. Exact for
 * the first with crp = 0; with crp > 0 pages in their correlated period,
 * which depends on the miss's time, are listed all the same.
 */
#include "core/error.h"
#include "policy/keymap.h"
#include "policy/policy_impl.h"

#include <stdlib.h>
#include <string.h>

enum { P_K, P_CRP, P_HISTORY };
#define REBASE_AT   (1ull << 31) /* rebase once the clock is this far past base */
#define REBASE_KEEP (1ull << 30) /* ticks kept exact behind the clock */
#define NO_POS      UINT32_MAX

typedef struct lruk {
  uint32_t k;
  uint64_t crp;
  uint64_t base; /* stored times are offsets from this */
  bool based;    /* base set by the first access */
  /* Resident pages, by slot. */
  uint32_t *hist; /* hist[slot * k + i] = HIST(p, i + 1) */
  uint32_t *last;
  uint64_t *keys;
  uint8_t *count;
  uint32_t *heap; /* slots, the victim first */
  uint32_t *pos;  /* slot -> heap index */
  uint32_t nheap;
  /* Retained history: a ring of records. */
  uint32_t hcap, hhead, hlive;
  uint64_t *hkeys;
  uint32_t *htimes; /* (k - 1) per record: HIST(p, 1 .. K-1) */
  uint8_t *hcount;  /* references known; 0 = an empty place */
  keymap hmap;
  /* Candidates while walking the heap in order. */
  uint32_t *cand;
  uint32_t ncand_max;
} lruk;

/* True if slot a comes before slot b in victim order. */
static inline bool before(const lruk *s, uint32_t a, uint32_t b) {
  bool fa = s->count[a] >= s->k, fb = s->count[b] >= s->k;
  if (fa != fb) return !fa; /* infinite backward K-distance first */
  if (fa) {
    uint32_t ha = s->hist[(size_t)a * s->k + s->k - 1], hb = s->hist[(size_t)b * s->k + s->k - 1];
    if (ha != hb) return ha < hb;
  }
  if (s->last[a] != s->last[b]) return s->last[a] < s->last[b];
  return a < b;
}

static inline void heap_set(lruk *s, uint32_t i, uint32_t slot) {
  s->heap[i] = slot;
  s->pos[slot] = i;
}

static void sift_up(lruk *s, uint32_t i) {
  uint32_t slot = s->heap[i];
  while (i > 0) {
    uint32_t parent = (i - 1) / 2;
    if (!before(s, slot, s->heap[parent])) break;
    heap_set(s, i, s->heap[parent]);
    i = parent;
  }
  heap_set(s, i, slot);
}

static void sift_down(lruk *s, uint32_t i) {
  uint32_t slot = s->heap[i];
  for (;;) {
    uint32_t c = 2 * i + 1;
    if (c >= s->nheap) break;
    if (c + 1 < s->nheap && before(s, s->heap[c + 1], s->heap[c])) c++;
    if (!before(s, s->heap[c], slot)) break;
    heap_set(s, i, s->heap[c]);
    i = c;
  }
  heap_set(s, i, slot);
}

static void heap_delete(lruk *s, uint32_t slot) {
  uint32_t i = s->pos[slot];
  s->pos[slot] = NO_POS;
  uint32_t moved = s->heap[--s->nheap];
  if (i == s->nheap) return;
  heap_set(s, i, moved);
  sift_up(s, i);
  sift_down(s, s->pos[moved]);
}

/* Moves the base forward so that `now` fits, shifting every stored time. */
static void rebase(lruk *s, uint64_t now) {
  uint64_t nb = now - REBASE_KEEP, delta = nb - s->base;
  s->base = nb;
#define SHIFT(v) ((v) = (uint64_t)(v) > delta ? (uint32_t)((v)-delta) : 0)
  for (uint32_t i = 0; i < s->nheap; i++) {
    uint32_t slot = s->heap[i];
    for (uint32_t j = 0; j < s->k; j++) SHIFT(s->hist[(size_t)slot * s->k + j]);
    SHIFT(s->last[slot]);
  }
  for (uint32_t r = 0; r < s->hcap; r++)
    if (s->hcount[r])
      for (uint32_t j = 0; j + 1 < s->k; j++) SHIFT(s->htimes[(size_t)r * (s->k - 1) + j]);
#undef SHIFT
  /* Clamping can tie HIST(p,K) values the order told apart: heapify anew. */
  for (uint32_t i = s->nheap / 2; i-- > 0;) sift_down(s, i);
}

/* `now` as a stored time. */
static uint32_t tick(lruk *s, uint64_t now) {
  if (!s->based) {
    s->based = true;
    s->base = now;
  }
  if (now < s->base) return 0; /* a clock going backwards: treat as the base */
  if (now - s->base >= REBASE_AT) rebase(s, now);
  return (uint32_t)(now - s->base);
}

static void lruk_free(lruk *s) {
  if (!s) return;
  free(s->hist);
  free(s->last);
  free(s->keys);
  free(s->count);
  free(s->heap);
  free(s->pos);
  free(s->hkeys);
  free(s->htimes);
  free(s->hcount);
  keymap_free(&s->hmap);
  free(s->cand);
  free(s);
}

static hs_status lruk_create(hs_policy *p) {
  lruk *s = calloc(1, sizeof *s);
  bool ok = s != NULL;
  if (ok) {
    s->k = (uint32_t)p->param[P_K];
    s->crp = (uint64_t)p->param[P_CRP];
    size_t n = p->max_slots;
    s->hist = malloc(sizeof *s->hist * n * s->k);
    s->last = malloc(sizeof *s->last * n);
    s->keys = malloc(sizeof *s->keys * n);
    s->count = malloc(sizeof *s->count * n);
    s->heap = malloc(sizeof *s->heap * n);
    s->pos = malloc(sizeof *s->pos * n);
    ok = s->hist && s->last && s->keys && s->count && s->heap && s->pos;
    uint64_t held = p->capacity < p->max_slots ? p->capacity : p->max_slots;
    double h = (double)held * p->param[P_HISTORY];
    s->hcap = h >= (double)UINT32_MAX ? UINT32_MAX - 1 : (uint32_t)h;
    if (ok && s->hcap) {
      s->hkeys = malloc(sizeof *s->hkeys * s->hcap);
      s->htimes = s->k > 1 ? malloc(sizeof *s->htimes * s->hcap * (s->k - 1)) : NULL;
      s->hcount = calloc(s->hcap, sizeof *s->hcount);
      ok = s->hkeys && (s->k == 1 || s->htimes) && s->hcount &&
           keymap_init(&s->hmap, s->hcap, keymap_dense_space(p->env.key_space, s->hcap));
      s->hmap.keys = s->hkeys;
    }
  }
  if (!ok) {
    lruk_free(s);
    return hs_fail(HS_ERR_NOMEM, 0, "lru-k: no memory for %u slots", p->max_slots);
  }
  for (uint32_t i = 0; i < p->max_slots; i++) s->pos[i] = NO_POS;
  p->impl = s;
  return HS_OK;
}

static void lruk_destroy(hs_policy *p) {
  lruk_free(p->impl);
}

static void hist_forget(lruk *s, uint32_t r) {
  keymap_del(&s->hmap, r);
  s->hcount[r] = 0;
  s->hlive--;
}

/* Remembers an evicted page's HIST(p, 1 .. K-1) in the ring. */
static void hist_add(lruk *s, uint32_t slot) {
  if (!s->hcap) return;
  uint64_t key = s->keys[slot];
  uint32_t old = keymap_get(&s->hmap, key);
  if (old != KM_ABSENT) hist_forget(s, old);
  uint32_t r = s->hhead;
  s->hhead = s->hhead + 1 == s->hcap ? 0 : s->hhead + 1;
  if (s->hcount[r]) hist_forget(s, r);
  s->hkeys[r] = key;
  s->hcount[r] = s->count[slot];
  if (s->k > 1)
    memcpy(&s->htimes[(size_t)r * (s->k - 1)], &s->hist[(size_t)slot * s->k],
           sizeof *s->htimes * (s->k - 1));
  keymap_put(&s->hmap, r);
  s->hlive++;
}

static void lruk_hit(hs_policy *p, uint32_t slot, const hs_access *a) {
  lruk *s = p->impl;
  if (a->hint == HS_HINT_RING) return;
  uint32_t t = tick(s, a->now);
  uint32_t *h = &s->hist[(size_t)slot * s->k];
  if ((uint64_t)(t - s->last[slot]) > s->crp) {
    uint32_t correlated = s->last[slot] - h[0];
    for (uint32_t i = s->k - 1; i >= 1; i--) h[i] = h[i - 1] + correlated;
    h[0] = t;
    if (s->count[slot] < s->k) s->count[slot]++;
  }
  s->last[slot] = t;
  sift_down(s, s->pos[slot]); /* the key only grows */
}

/* The candidate heap (indices into the main heap) used by victim. */
static bool cand_before(const lruk *s, uint32_t x, uint32_t y) {
  return before(s, s->heap[x], s->heap[y]);
}

/* Puts main-heap index idx on the candidate heap cand[0 .. *n-1], which
 * has room for it. */
static void cand_sift_up(const lruk *s, uint32_t *cand, uint32_t *n, uint32_t idx) {
  uint32_t i = (*n)++;
  while (i > 0 && cand_before(s, idx, cand[(i - 1) / 2])) {
    cand[i] = cand[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  cand[i] = idx;
}

static bool cand_push(lruk *s, uint32_t *n, uint32_t idx) {
  if (*n == s->ncand_max) {
    uint32_t cap = s->ncand_max ? 2 * s->ncand_max : 64;
    uint32_t *c = realloc(s->cand, sizeof *c * cap);
    if (!c) return false;
    s->cand = c;
    s->ncand_max = cap;
  }
  cand_sift_up(s, s->cand, n, idx);
  return true;
}

static uint32_t cand_pop(const lruk *s, uint32_t *cand, uint32_t *n) {
  uint32_t top = cand[0], last = cand[--*n], i = 0;
  for (;;) {
    uint32_t c = 2 * i + 1;
    if (c >= *n) break;
    if (c + 1 < *n && cand_before(s, cand[c + 1], cand[c])) c++;
    if (!cand_before(s, cand[c], last)) break;
    cand[i] = cand[c];
    i = c;
  }
  if (*n) cand[i] = last;
  return top;
}

/* Outside its correlated reference period (a zero period holds nothing). */
static inline bool evictable(const lruk *s, uint32_t slot, uint32_t t) {
  return s->crp == 0 || (uint64_t)(t - s->last[slot]) > s->crp;
}

static int64_t lruk_victim(hs_policy *p, const hs_access *incoming, hs_pinned_fn pinned,
                           void *ctx) {
  lruk *s = p->impl;
  uint32_t t = tick(s, incoming->now);
  int64_t fallback = -1; /* the first unpinned page still in its correlated period */
  if (s->nheap == 0) return -1;
  uint32_t top = s->heap[0];
  bool top_pinned = pinned && pinned(ctx, top);
  if (!top_pinned && evictable(s, top, t)) return top;
  /* Walk the heap in order: a best-first search over heap indices. */
  uint32_t n = 0;
  bool ok = cand_push(s, &n, 0);
  while (ok && n) {
    uint32_t idx = cand_pop(s, s->cand, &n), slot = s->heap[idx];
    if (!pinned || !pinned(ctx, slot)) {
      if (evictable(s, slot, t)) return slot;
      if (fallback < 0) fallback = slot;
    }
    for (uint32_t c = 2 * idx + 1; ok && c <= 2 * idx + 2 && c < s->nheap; c++)
      ok = cand_push(s, &n, c);
  }
  if (ok) return fallback;
  /* No memory for the walk: a linear scan gives the same answer. */
  int64_t best = -1, best_any = -1;
  for (uint32_t i = 0; i < s->nheap; i++) {
    uint32_t slot = s->heap[i];
    if (pinned && pinned(ctx, slot)) continue;
    if (best_any < 0 || before(s, slot, (uint32_t)best_any)) best_any = slot;
    if (evictable(s, slot, t) && (best < 0 || before(s, slot, (uint32_t)best))) best = slot;
  }
  return best >= 0 ? best : best_any;
}

/* The heap in order (a best-first walk over a candidate heap of its own,
 * so victim's is not touched): smallest HIST(p,K) first. A prediction where
 * crp > 0: victim passes over pages still in their correlated period,
 * which depends on the time of the miss. With crp = 0 (the default) the
 * first is victim's answer. */
static uint32_t lruk_upcoming(const hs_policy *p, uint32_t *slots, uint32_t max) {
  const lruk *s = p->impl;
  if (s->nheap == 0) return 0;
  if (max > s->nheap) max = s->nheap;
  /* Each index popped pushes at most two. */
  uint32_t *cand = malloc(sizeof *cand * (2 * (size_t)max + 1));
  if (!cand) {
    slots[0] = s->heap[0];
    return 1;
  }
  uint32_t ncand = 0, n = 0;
  cand_sift_up(s, cand, &ncand, 0);
  while (ncand && n < max) {
    uint32_t idx = cand_pop(s, cand, &ncand);
    slots[n++] = s->heap[idx];
    for (uint32_t c = 2 * idx + 1; c <= 2 * idx + 2 && c < s->nheap; c++)
      cand_sift_up(s, cand, &ncand, c);
  }
  free(cand);
  return n;
}

static void lruk_evict(hs_policy *p, uint32_t slot) {
  lruk *s = p->impl;
  heap_delete(s, slot);
  hist_add(s, slot);
}

static void lruk_remove(hs_policy *p, uint32_t slot) {
  lruk *s = p->impl;
  heap_delete(s, slot);
}

static void lruk_insert(hs_policy *p, uint32_t slot, const hs_access *a) {
  lruk *s = p->impl;
  uint32_t t = tick(s, a->now);
  uint32_t *h = &s->hist[(size_t)slot * s->k];
  s->keys[slot] = a->key;
  s->count[slot] = 1;
  memset(h, 0, sizeof *h * s->k);
  uint32_t r = s->hcap && a->hint != HS_HINT_RING ? keymap_get(&s->hmap, a->key) : KM_ABSENT;
  if (r != KM_ABSENT) {
    /* Retained history: the earlier references move down one place. */
    uint32_t known = s->hcount[r];
    s->count[slot] = (uint8_t)(known < s->k ? known + 1 : s->k);
    if (s->k > 1) memcpy(&h[1], &s->htimes[(size_t)r * (s->k - 1)], sizeof *h * (s->k - 1));
    hist_forget(s, r);
  }
  h[0] = t;
  s->last[slot] = t;
  heap_set(s, s->nheap++, slot);
  sift_up(s, s->nheap - 1);
}

static uint32_t lruk_standing(const hs_policy *p, uint32_t slot) {
  const lruk *s = p->impl;
  return s->count[slot];
}

static uint64_t lruk_ghosts(const hs_policy *p) {
  const lruk *s = p->impl;
  return s->hlive;
}

static void lruk_prefetch(const hs_policy *p, uint64_t key) {
  const lruk *s = p->impl;
  keymap_prefetch(&s->hmap, key);
}

static size_t lruk_memory(const hs_policy *p) {
  const lruk *s = p->impl;
  size_t per_slot = sizeof(uint32_t) * (s->k + 1) + sizeof(uint64_t) + 1 + 2 * sizeof(uint32_t);
  size_t per_record = sizeof(uint64_t) + sizeof(uint32_t) * (s->k - 1) + 1;
  return sizeof(lruk) + (size_t)p->max_slots * per_slot + (size_t)s->hcap * per_record +
         (s->hcap ? keymap_memory(&s->hmap) : 0) + (size_t)s->ncand_max * sizeof(uint32_t);
}

const hs_policy_ops hs_policy_lru_k = {
    .name = "lru-k",
    .flags = HS_POLICY_NEEDS_TIME,
    .summary = "LRU-K: evict the oldest K-th most recent reference",
    .params =
        {
            {"k", 2, 1, 4, true, "references remembered per page (K)", false},
            {"crp", 0, 0, 1e9, true, "correlated reference period, in milliseconds", true},
            {"history", 1.0, 0.0, 4.0, false, "evicted pages remembered, per cache entry", false},
        },
    .create = lruk_create,
    .destroy = lruk_destroy,
    .hit = lruk_hit,
    .victim = lruk_victim,
    .upcoming = lruk_upcoming,
    .evict = lruk_evict,
    .insert = lruk_insert,
    .remove = lruk_remove,
    .standing = lruk_standing,
    .ghosts = lruk_ghosts,
    .memory = lruk_memory,
    .prefetch = lruk_prefetch,
};
