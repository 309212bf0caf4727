/*
 * tests/policy/reference_lirs_clockpro.c — lirs and clockpro against slow
 * reference models written here from the papers (LIRS: Jiang & Zhang,
 * SIGMETRICS 2002; CLOCK-Pro: Jiang, Chen & Zhang, USENIX ATC 2005) and from
 * the choices the top comments of src/policy/lirs.c and clockpro.c document
 * where the papers leave room (the start, byte sizes, the bounds on history,
 * pinned victims, ring hints, removals). The models keep every list as an
 * array of keys and recount every total by a scan, so each rule reads as
 * the essay states it.
 *
 * Random traces (policy_driver.h's mix of a hot set, noise and scans) with
 * several seeds, cache sizes from one unit up, unit and mixed sizes, a
 * parameter per seed, and in some runs pinned keys, ring hints, removals
 * and fewer slots than the units would hold. After every request the policy
 * and its model must agree on the hit, on every victim named, on the
 * resident set with each entry's standing and on the number of remembered
 * entries; and on the whole state (policy/irr.h's dump: LIRS's S and Q,
 * CLOCK-Pro's clock, hands and cold target) after every request in small
 * caches, every eighth in larger ones. Each rare rule (several LIR blocks
 * demoted at once, pinned victims, the bounds on history, promotions
 * called off, ...) must act in some run, or the test fails.
 *
 * Where neither the paper nor the essay says, the model does what the
 * simplest reading does and the source agrees: a hand on a page that leaves
 * the clock moves on to the next page; HAND_hot carries HAND_test along
 * when it passes it.
 */
#include "policy/irr.h"
#include "policy_driver.h"
#include "policy_sections.h"

#include <stdarg.h>

#define MAXK     1024 /* keys per run */
#define NREQ     4000 /* requests per run */
#define DUMP_LEN 65536

/* ----------------------------------------------------- what both share */

/* A precondition of the test itself, not a comparison: stops the test
 * (without counting a pass each time, as REQUIRE would). */
#define MUST(cond)                                                                                 \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      fprintf(stderr, "%s:%d: precondition failed: %s\n", __FILE__, __LINE__, #cond);              \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

/* How often each rare rule acted, over all runs: each must have, or the
 * traces no longer reach it and agreement there proves nothing. */
enum {
  EV_LIRS_MULTI_DEMOTE, /* a block turning LIR demoted two or more */
  EV_LIRS_LIR_VICTIM,   /* every resident HIR block pinned */
  EV_LIRS_NO_VICTIM,
  EV_LIRS_FORGET_SLOTS, /* history over one entry per slot */
  EV_LIRS_FORGET_UNITS, /* history over `cap` units */
  EV_LIRS_RESTART,      /* S empty after the start: new blocks LIR again */
  EV_LIRS_TOO_BIG,      /* a block in S too big to turn LIR */
  EV_LIRS_RING_MISS,    /* a remembered block brought in under a ring */
  EV_CP_PROMOTE_COLD,   /* HAND_cold turns a page hot */
  EV_CP_PROMOTE_FAULT,  /* a fault on a non-resident page in its test */
  EV_CP_PROMOTE_OFF,    /* HAND_hot ended the candidate's test */
  EV_CP_TEST_SLOTS,     /* HAND_test for the one-per-slot bound */
  EV_CP_TEST_UNITS,     /* HAND_test for the m units bound */
  EV_CP_TEST_FAULT,     /* HAND_test for the m_c + m bound */
  EV_CP_MC_MAX,         /* m_c held at its largest */
  EV_CP_HOT_VICTIM,     /* every resident cold page pinned */
  EV_CP_NO_VICTIM,
  EV_CP_NO_COLD, /* no resident cold page: HAND_hot first */
  EV_COUNT
};
static const char *const event_name[EV_COUNT] = {"lirs multi-demote",
                                                 "lirs LIR victim",
                                                 "lirs no victim",
                                                 "lirs forget (slots)",
                                                 "lirs forget (units)",
                                                 "lirs restart",
                                                 "lirs too big",
                                                 "lirs ring miss",
                                                 "clockpro promote (cold hand)",
                                                 "clockpro promote (fault)",
                                                 "clockpro promotion off",
                                                 "clockpro test hand (slots)",
                                                 "clockpro test hand (units)",
                                                 "clockpro test hand (fault)",
                                                 "clockpro m_c at max",
                                                 "clockpro hot victim",
                                                 "clockpro no victim",
                                                 "clockpro no cold page"};
static uint64_t events[EV_COUNT];

/* The caller's side of a model: sizes, residency, pins, the victims named. */
typedef struct base {
  uint64_t cap;
  uint32_t nslots, nres;
  uint64_t used;
  uint32_t size[MAXK]; /* as last brought in */
  bool pinned[MAXK];
  int64_t victims[MAXK];
  uint32_t nvictims;
} base;

static int find(const uint32_t *list, uint32_t n, uint32_t key) {
  for (uint32_t i = 0; i < n; i++)
    if (list[i] == key) return (int)i;
  return -1;
}

static void list_delete(uint32_t *list, uint32_t *n, uint32_t i) {
  memmove(&list[i], &list[i + 1], (*n - i - 1) * sizeof *list);
  (*n)--;
}

static void list_append(uint32_t *list, uint32_t *n, uint32_t key) {
  MUST(*n < 2 * MAXK);
  list[(*n)++] = key;
}

static void out(char *buf, size_t *off, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(*off < DUMP_LEN ? buf + *off : NULL, *off < DUMP_LEN ? DUMP_LEN - *off : 0, fmt,
                    ap);
  va_end(ap);
  if (k > 0) *off += (size_t)k;
}

/* ------------------------------------------------------------ LIRS model */

typedef enum lstate { L_ABSENT, L_LIR, L_HIR, L_NONRES } lstate;

typedef struct lirs_model {
  base b;
  uint64_t lir_limit;
  lstate st[MAXK];
  uint32_t s[2 * MAXK], ns; /* stack S, s[0] = bottom, s[ns - 1] = top */
  uint32_t q[MAXK], nq;     /* list Q, q[0] = front (next victim) */
  bool filled;
} lirs_model;

static bool lm_in_s(const lirs_model *m, uint32_t k) {
  return find(m->s, m->ns, k) >= 0;
}

/* LIR and non-resident blocks are all in S. */
static uint64_t lm_units(const lirs_model *m, lstate which) {
  uint64_t u = 0;
  for (uint32_t i = 0; i < m->ns; i++)
    if (m->st[m->s[i]] == which) u += m->b.size[m->s[i]];
  return u;
}

static uint32_t lm_count(const lirs_model *m, lstate which) {
  uint32_t c = 0;
  for (uint32_t i = 0; i < m->ns; i++) c += m->st[m->s[i]] == which;
  return c;
}

static void lm_to_top(lirs_model *m, uint32_t k) {
  int i = find(m->s, m->ns, k);
  if (i >= 0) list_delete(m->s, &m->ns, (uint32_t)i);
  list_append(m->s, &m->ns, k);
}

static void lm_q_delete(lirs_model *m, uint32_t k) {
  int i = find(m->q, m->nq, k);
  MUST(i >= 0);
  list_delete(m->q, &m->nq, (uint32_t)i);
}

/* Stack pruning: HIR blocks leave S's bottom until an LIR block is there;
 * a non-resident one is forgotten. */
static void lm_prune(lirs_model *m) {
  while (m->ns > 0 && m->st[m->s[0]] != L_LIR) {
    if (m->st[m->s[0]] == L_NONRES) m->st[m->s[0]] = L_ABSENT;
    list_delete(m->s, &m->ns, 0);
  }
}

/* Over the bound on history: the non-resident block lowest in S goes. */
static void lm_forget_lowest(lirs_model *m) {
  for (uint32_t i = 0; i < m->ns; i++)
    if (m->st[m->s[i]] == L_NONRES) {
      m->st[m->s[i]] = L_ABSENT;
      list_delete(m->s, &m->ns, i);
      return;
    }
}

/* k, on top of S, turns LIR; while the LIR units are over L_lirs, the LIR
 * block at S's bottom turns HIR, goes to the end of Q and is pruned. */
static void lm_make_lir(lirs_model *m, uint32_t k) {
  m->st[k] = L_LIR;
  int demoted = 0;
  while (lm_units(m, L_LIR) > m->lir_limit && m->ns > 0 && m->s[0] != k) {
    if (++demoted == 2) events[EV_LIRS_MULTI_DEMOTE]++;
    uint32_t bottom = m->s[0];
    MUST(m->st[bottom] == L_LIR);
    m->st[bottom] = L_HIR;
    list_append(m->q, &m->nq, bottom);
    lm_prune(m);
  }
}

static bool lm_resident(void *mv, uint32_t k) {
  lirs_model *m = mv;
  return m->st[k] == L_LIR || m->st[k] == L_HIR;
}

static void lm_hit(void *mv, uint32_t k, bool ring) {
  lirs_model *m = mv;
  if (ring) return; /* "used once": nothing changes */
  if (m->st[k] == L_LIR) {
    lm_to_top(m, k);
    lm_prune(m);
  } else if (lm_in_s(m, k) && m->b.size[k] <= m->lir_limit) {
    /* Its IRR is below the bottom LIR block's recency. */
    lm_to_top(m, k);
    lm_q_delete(m, k);
    lm_make_lir(m, k);
  } else {
    if (lm_in_s(m, k)) events[EV_LIRS_TOO_BIG]++;
    lm_to_top(m, k);
    lm_q_delete(m, k);
    list_append(m->q, &m->nq, k);
    lm_prune(m);
  }
}

static int64_t lm_victim(void *mv) {
  lirs_model *m = mv;
  m->filled = true;
  for (uint32_t i = 0; i < m->nq; i++)
    if (!m->b.pinned[m->q[i]]) return m->q[i];
  for (uint32_t i = 0; i < m->ns; i++) /* the LIR block of largest recency */
    if (m->st[m->s[i]] == L_LIR && !m->b.pinned[m->s[i]]) {
      events[EV_LIRS_LIR_VICTIM]++;
      return m->s[i];
    }
  events[EV_LIRS_NO_VICTIM]++;
  return -1;
}

static void lm_evict(void *mv, uint32_t k) {
  lirs_model *m = mv;
  if (m->st[k] == L_LIR) { /* every resident HIR block was pinned: no history */
    m->st[k] = L_ABSENT;
    list_delete(m->s, &m->ns, (uint32_t)find(m->s, m->ns, k));
    lm_prune(m);
    return;
  }
  lm_q_delete(m, k);
  if (!lm_in_s(m, k)) {
    m->st[k] = L_ABSENT;
    return;
  }
  /* Stays in S as history, at most one entry per slot and `cap` units. */
  if (lm_count(m, L_NONRES) == m->b.nslots) {
    events[EV_LIRS_FORGET_SLOTS]++;
    lm_forget_lowest(m);
  }
  m->st[k] = L_NONRES;
  while (lm_units(m, L_NONRES) > m->b.cap) {
    events[EV_LIRS_FORGET_UNITS]++;
    lm_forget_lowest(m);
  }
}

static void lm_insert(void *mv, uint32_t k, bool ring) {
  lirs_model *m = mv;
  bool remembered = m->st[k] == L_NONRES;
  if (remembered) list_delete(m->s, &m->ns, (uint32_t)find(m->s, m->ns, k));
  if (m->ns == 0 && m->filled) { /* no LIR block left: the start again */
    events[EV_LIRS_RESTART]++;
    m->filled = false;
  }
  if (remembered && ring) events[EV_LIRS_RING_MISS]++;
  list_append(m->s, &m->ns, k);
  uint64_t sz = m->b.size[k];
  if (!ring && remembered && sz <= m->lir_limit) {
    lm_make_lir(m, k);
  } else if (!ring && !m->filled && lm_units(m, L_LIR) + sz <= m->lir_limit) {
    m->st[k] = L_LIR; /* the LIR set is filling */
  } else {
    m->st[k] = L_HIR;
    list_append(m->q, &m->nq, k);
    lm_prune(m);
  }
}

static void lm_remove(void *mv, uint32_t k) {
  lirs_model *m = mv;
  int i = find(m->q, m->nq, k);
  if (i >= 0) list_delete(m->q, &m->nq, (uint32_t)i);
  i = find(m->s, m->ns, k);
  if (i >= 0) list_delete(m->s, &m->ns, (uint32_t)i);
  m->st[k] = L_ABSENT;
  lm_prune(m);
}

static uint32_t lm_standing(void *mv, uint32_t k) {
  lirs_model *m = mv;
  return m->st[k] == L_LIR ? 3 : lm_in_s(m, k) ? 2 : 1;
}

static uint64_t lm_ghosts(void *mv) {
  return lm_count(mv, L_NONRES);
}

static void lm_dump(void *mv, char *buf) {
  lirs_model *m = mv;
  size_t off = 0;
  out(buf, &off, "S:");
  for (uint32_t i = m->ns; i-- > 0;) out(buf, &off, " %u:%c", m->s[i], "?LHn"[m->st[m->s[i]]]);
  out(buf, &off, " | Q:");
  for (uint32_t i = 0; i < m->nq; i++) out(buf, &off, " %u", m->q[i]);
}

static void lm_init(lirs_model *m, uint64_t cap, double hir) {
  uint64_t h = (uint64_t)(hir * (double)cap);
  if (h < 1) h = 1;
  if (h > cap) h = cap;
  m->lir_limit = cap - h;
}

/* ------------------------------------------------------- CLOCK-Pro model */

typedef enum cstate { C_ABSENT, C_HOT, C_COLD, C_NONRES } cstate;

typedef struct clockpro_model {
  base b;
  cstate st[MAXK];
  bool test[MAXK], ref[MAXK];
  uint32_t clock[2 * MAXK], n; /* clock[0] = oldest, clock[n - 1] = list head */
  int64_t hand_hot, hand_cold, hand_test, candidate; /* keys, -1 = none */
  uint64_t mc, mc_min, mc_max;
  bool filled;
} clockpro_model;

static uint64_t cm_units(const clockpro_model *m, cstate which) {
  uint64_t u = 0;
  for (uint32_t i = 0; i < m->n; i++)
    if (m->st[m->clock[i]] == which) u += m->b.size[m->clock[i]];
  return u;
}

static uint32_t cm_count(const clockpro_model *m, cstate which) {
  uint32_t c = 0;
  for (uint32_t i = 0; i < m->n; i++) c += m->st[m->clock[i]] == which;
  return c;
}

static int64_t cm_oldest(const clockpro_model *m) {
  return m->n ? (int64_t)m->clock[0] : -1;
}

static uint32_t cm_next(const clockpro_model *m, uint32_t k) {
  int i = find(m->clock, m->n, k);
  MUST(i >= 0);
  return m->clock[((uint32_t)i + 1) % m->n];
}

/* k leaves the clock; a hand resting on it moves on to the next page. */
static void cm_unlink(clockpro_model *m, uint32_t k) {
  int i = find(m->clock, m->n, k);
  MUST(i >= 0);
  list_delete(m->clock, &m->n, (uint32_t)i);
  int64_t after = m->n ? (int64_t)m->clock[(uint32_t)i % m->n] : -1;
  int64_t *hands[3] = {&m->hand_hot, &m->hand_cold, &m->hand_test};
  for (int h = 0; h < 3; h++)
    if (*hands[h] == (int64_t)k) *hands[h] = after;
}

static void cm_to_head(clockpro_model *m, uint32_t k) {
  cm_unlink(m, k);
  list_append(m->clock, &m->n, k);
}

static void cm_mc_up(clockpro_model *m, uint64_t sz) {
  if (m->mc + sz > m->mc_max) events[EV_CP_MC_MAX]++;
  m->mc = m->mc + sz < m->mc_max ? m->mc + sz : m->mc_max;
}

static void cm_mc_down(clockpro_model *m, uint64_t sz) {
  m->mc = m->mc >= m->mc_min + sz ? m->mc - sz : m->mc_min;
}

/* k's test period ends: m_c grows if k was used during it (its bit is
 * set), shrinks if not; the page being promoted was counted already. A
 * non-resident page leaves the clock. */
static void cm_end_test(clockpro_model *m, uint32_t k) {
  m->test[k] = false;
  if ((int64_t)k != m->candidate) {
    if (m->st[k] == C_COLD && m->ref[k])
      cm_mc_up(m, m->b.size[k]);
    else
      cm_mc_down(m, m->b.size[k]);
  }
  if (m->st[k] == C_NONRES) {
    cm_unlink(m, k);
    m->st[k] = C_ABSENT;
  }
}

/* HAND_hot: spares hot pages with their bit set (cleared, to the head),
 * turns the first with a clear bit cold (to the head), ends the test of
 * every cold page it passes, and stops at the next hot page. */
static bool cm_hand_hot(clockpro_model *m) {
  if (cm_count(m, C_HOT) == 0) {
    m->hand_hot = -1;
    return false;
  }
  if (m->hand_hot < 0) m->hand_hot = cm_oldest(m);
  bool demoted = false;
  for (;;) {
    uint32_t k = (uint32_t)m->hand_hot;
    if (m->st[k] == C_HOT) {
      if (demoted) break;
      if (!m->ref[k]) {
        m->st[k] = C_COLD;
        demoted = true;
      }
      m->ref[k] = false;
      cm_to_head(m, k);
      if (demoted && cm_count(m, C_HOT) == 0) {
        m->hand_hot = -1;
        break;
      }
      if (m->hand_hot < 0) m->hand_hot = cm_oldest(m);
      continue;
    }
    uint32_t next = cm_next(m, k);
    if (m->hand_test == (int64_t)k) m->hand_test = next; /* never behind HAND_hot */
    if (m->test[k]) cm_end_test(m, k);
    m->hand_hot = next;
  }
  return demoted;
}

/* HAND_test rests on a cold page: it passes hot ones. */
static void cm_settle_test(clockpro_model *m) {
  if (m->hand_test < 0) return;
  for (uint32_t i = 0; i < m->n && m->st[m->hand_test] == C_HOT; i++)
    m->hand_test = cm_next(m, (uint32_t)m->hand_test);
}

/* HAND_test ends test periods until it has removed a non-resident page. */
static void cm_hand_test(clockpro_model *m) {
  if (cm_count(m, C_NONRES) == 0) return;
  if (m->hand_test < 0) m->hand_test = cm_oldest(m);
  for (uint32_t i = 0, laps = m->n + 1; i < laps && m->hand_test >= 0; i++) {
    uint32_t k = (uint32_t)m->hand_test;
    bool nonres = m->st[k] == C_NONRES;
    m->hand_test = cm_next(m, k);
    if (m->test[k]) {
      cm_end_test(m, k);
      if (nonres) break;
    }
  }
  cm_settle_test(m);
}

/* HAND_cold rests on a resident cold page. */
static void cm_settle_cold(clockpro_model *m) {
  if (cm_count(m, C_COLD) == 0) {
    m->hand_cold = -1;
    return;
  }
  if (m->hand_cold < 0) m->hand_cold = cm_oldest(m);
  while (m->st[m->hand_cold] != C_COLD) m->hand_cold = cm_next(m, (uint32_t)m->hand_cold);
}

/* Cold page k, used again in its test, is to turn hot: m_c grows, and
 * HAND_hot runs while the hot pages and k would exceed m - m_c. False if
 * HAND_hot ended k's test meanwhile. */
static bool cm_make_room(clockpro_model *m, uint32_t k, uint64_t sz) {
  m->candidate = k;
  cm_mc_up(m, sz);
  while (cm_units(m, C_HOT) + sz > m->b.cap - m->mc && m->test[k])
    if (!cm_hand_hot(m)) break;
  m->candidate = -1;
  if (!m->test[k]) events[EV_CP_PROMOTE_OFF]++;
  return m->test[k];
}

static bool cm_resident(void *mv, uint32_t k) {
  clockpro_model *m = mv;
  return m->st[k] == C_HOT || m->st[k] == C_COLD;
}

static void cm_hit(void *mv, uint32_t k, bool ring) {
  clockpro_model *m = mv;
  if (!ring) m->ref[k] = true;
}

static int64_t cm_victim(void *mv) {
  clockpro_model *m = mv;
  m->filled = true;
  uint32_t skipped = 0;
  for (uint64_t steps = 0;; steps++) {
    MUST(steps < 100ull * (m->n + 10)); /* the model itself must end */
    if (cm_count(m, C_COLD) == 0) {
      events[EV_CP_NO_COLD]++;
      if (!cm_hand_hot(m)) break;
      continue;
    }
    cm_settle_cold(m);
    uint32_t k = (uint32_t)m->hand_cold;
    if (m->b.pinned[k]) { /* stepped over, unchanged */
      if (++skipped >= cm_count(m, C_COLD)) break;
      m->hand_cold = cm_next(m, k);
      continue;
    }
    if (!m->ref[k]) return k;
    skipped = 0;
    m->ref[k] = false;
    m->hand_cold = cm_next(m, k);
    if (m->test[k] && cm_make_room(m, k, m->b.size[k])) {
      events[EV_CP_PROMOTE_COLD]++;
      m->st[k] = C_HOT;
      m->test[k] = false;
    } else {
      m->test[k] = true; /* a new test period */
    }
    cm_to_head(m, k);
  }
  /* Every resident cold page is pinned: the first unpinned page from
   * HAND_hot on, a cold one before any hot one. */
  int64_t hot = -1;
  int64_t start = m->hand_hot >= 0 ? m->hand_hot : cm_oldest(m);
  if (start < 0) return -1;
  uint32_t first = (uint32_t)find(m->clock, m->n, (uint32_t)start);
  for (uint32_t i = 0; i < m->n; i++) {
    uint32_t k = m->clock[(first + i) % m->n];
    if (m->st[k] == C_NONRES || m->b.pinned[k]) continue;
    if (m->st[k] == C_COLD) return k;
    if (hot < 0) hot = k;
  }
  events[hot < 0 ? EV_CP_NO_VICTIM : EV_CP_HOT_VICTIM]++;
  return hot;
}

static void cm_evict(void *mv, uint32_t k) {
  clockpro_model *m = mv;
  if (m->st[k] == C_HOT) { /* only when every cold page is pinned: no history */
    cm_unlink(m, k);
    m->st[k] = C_ABSENT;
    cm_settle_cold(m);
    return;
  }
  /* History is bounded to one non-resident page per slot and m units. */
  if (m->test[k] && cm_count(m, C_NONRES) == m->b.nslots) {
    events[EV_CP_TEST_SLOTS]++;
    cm_hand_test(m);
  }
  if (m->test[k]) {
    m->st[k] = C_NONRES; /* stays in its place on the clock */
  } else {
    cm_unlink(m, k);
    m->st[k] = C_ABSENT;
  }
  m->ref[k] = false;
  while (cm_units(m, C_NONRES) > m->b.cap && cm_count(m, C_NONRES) > 0) {
    events[EV_CP_TEST_UNITS]++;
    cm_hand_test(m);
  }
  cm_settle_cold(m);
}

static void cm_insert(void *mv, uint32_t k, bool ring) {
  clockpro_model *m = mv;
  uint64_t sz = m->b.size[k];
  m->ref[k] = false;
  if (m->st[k] == C_NONRES) {
    if (!ring && cm_make_room(m, k, sz)) { /* its test ends in promotion */
      events[EV_CP_PROMOTE_FAULT]++;
      cm_unlink(m, k);
      m->test[k] = false;
      m->st[k] = C_HOT;
      list_append(m->clock, &m->n, k);
      cm_settle_cold(m);
      return;
    }
    if (m->st[k] == C_NONRES) cm_unlink(m, k); /* a ring forgets the test */
    m->st[k] = C_ABSENT;
    m->test[k] = false;
  }
  if (!m->filled && !ring && cm_units(m, C_HOT) + sz <= m->b.cap - m->mc) {
    m->st[k] = C_HOT; /* the memory is filling for the first time */
    list_append(m->clock, &m->n, k);
    cm_settle_cold(m);
    return;
  }
  m->st[k] = C_COLD;
  m->test[k] = true;
  list_append(m->clock, &m->n, k);
  while (cm_units(m, C_COLD) + cm_units(m, C_NONRES) > m->mc + m->b.cap &&
         cm_count(m, C_NONRES) > 0) {
    events[EV_CP_TEST_FAULT]++;
    cm_hand_test(m);
  }
  cm_settle_cold(m);
}

static void cm_remove(void *mv, uint32_t k) {
  clockpro_model *m = mv;
  cm_unlink(m, k);
  m->st[k] = C_ABSENT;
  m->test[k] = m->ref[k] = false;
  cm_settle_cold(m);
}

static uint32_t cm_standing(void *mv, uint32_t k) {
  clockpro_model *m = mv;
  return m->st[k] == C_HOT ? 3 : m->test[k] ? 2 : 1;
}

static uint64_t cm_ghosts(void *mv) {
  return cm_count(mv, C_NONRES);
}

static void cm_dump(void *mv, char *buf) {
  clockpro_model *m = mv;
  size_t off = 0;
  for (uint32_t i = 0; i < m->n; i++) {
    uint32_t k = m->clock[i];
    char c = m->st[k] == C_HOT ? 'H' : m->st[k] == C_NONRES ? 'n' : m->test[k] ? 't' : 'c';
    out(buf, &off, "%s%u:%c%s", i ? " " : "", k, c, m->st[k] != C_NONRES && m->ref[k] ? "*" : "");
  }
  const int64_t hands[3] = {m->hand_hot, m->hand_cold, m->hand_test};
  const char *names[3] = {"hot", "cold", "test"};
  out(buf, &off, " |");
  for (int h = 0; h < 3; h++) {
    if (hands[h] < 0)
      out(buf, &off, " %s=-", names[h]);
    else
      out(buf, &off, " %s=%lld", names[h], (long long)hands[h]);
  }
  out(buf, &off, " mc=%llu", (unsigned long long)m->mc);
}

static void cm_init(clockpro_model *m, uint64_t cap, double cold) {
  uint64_t lo = (uint64_t)(cold * (double)cap);
  if (lo < 1) lo = 1;
  if (lo > cap) lo = cap;
  m->mc_min = m->mc = lo;
  m->mc_max = cap - lo > lo ? cap - lo : lo;
  m->hand_hot = m->hand_cold = m->hand_test = m->candidate = -1;
}

/* ------------------------------------------------------------ the runs */

typedef struct model_ops {
  bool (*resident)(void *m, uint32_t k);
  void (*hit)(void *m, uint32_t k, bool ring);
  int64_t (*victim)(void *m);
  void (*evict)(void *m, uint32_t k);
  void (*insert)(void *m, uint32_t k, bool ring);
  void (*remove)(void *m, uint32_t k);
  uint32_t (*standing)(void *m, uint32_t k);
  uint64_t (*ghosts)(void *m);
  void (*dump)(void *m, char *buf);
  int (*real_dump)(const hs_policy *p, char *buf, size_t len);
} model_ops;

static const model_ops lirs_ops = {
    lm_resident, lm_hit,      lm_victim, lm_evict, lm_insert,
    lm_remove,   lm_standing, lm_ghosts, lm_dump,  hs_policy_lirs_dump};
static const model_ops clockpro_ops = {
    cm_resident, cm_hit,      cm_victim, cm_evict, cm_insert,
    cm_remove,   cm_standing, cm_ghosts, cm_dump,  hs_policy_clockpro_dump};

/* The caller's loop (policy.h) around a model: victims until the entry
 * fits and a slot is free, then insert. True on a hit. */
static bool model_access(const model_ops *ops, base *b, uint32_t k, uint32_t size, bool ring) {
  b->nvictims = 0;
  if (ops->resident(b, k)) {
    ops->hit(b, k, ring);
    return true;
  }
  if (size > b->cap) return false;
  b->size[k] = size;
  while (b->used + size > b->cap || b->nres == b->nslots) {
    int64_t v = ops->victim(b);
    MUST(b->nvictims < MAXK);
    b->victims[b->nvictims++] = v;
    if (v < 0) return false;
    ops->evict(b, (uint32_t)v);
    b->used -= b->size[v];
    b->nres--;
  }
  ops->insert(b, k, ring);
  b->used += size;
  b->nres++;
  return false;
}

typedef struct victim_log {
  int64_t key[MAXK];
  uint32_t n;
} victim_log;

static void log_victim(void *ctx, int64_t key) {
  victim_log *l = ctx;
  MUST(l->n < MAXK);
  l->key[l->n++] = key;
}

typedef struct run {
  const char *policy; /* "lirs" or "clockpro" */
  const char *param;  /* hir or cold, as written in the spec */
  uint64_t cap;
  uint32_t nslots, nkeys;
  uint32_t max_size; /* 1: unit sizes */
  bool extras;       /* pins, ring hints and removals */
  uint64_t seed;
} run;

static const char *describe(const run *r) {
  static char text[160];
  snprintf(text, sizeof text, "%s:%s=%s capacity %llu, %u slots, %u keys, sizes 1..%u%s, seed %llu",
           r->policy, strcmp(r->policy, "lirs") == 0 ? "hir" : "cold", r->param,
           (unsigned long long)r->cap, r->nslots, r->nkeys, r->max_size,
           r->extras ? ", pins/rings/removals" : "", (unsigned long long)r->seed);
  return text;
}

/* Where the policy and its model first part: the request and both states. */
static void report(const run *r, uint32_t step, const char *what, const uint32_t *keys,
                   const char *real, const char *model) {
  fprintf(stderr, "%s: request %u: %s\n  last keys:", describe(r), step, what);
  for (uint32_t j = step > 12 ? step - 12 : 0; j <= step; j++) fprintf(stderr, " %u", keys[j]);
  fprintf(stderr, "\n  policy: %.600s\n  model:  %.600s\n", real, model);
}

/* Returns the number of requests on which the two disagreed (0 or 1: a run
 * stops at its first disagreement, the rest would only echo it). */
static uint32_t compare(const run *r) {
  static uint32_t keys[NREQ];
  static uint32_t size_of[MAXK];
  static union {
    lirs_model l;
    clockpro_model c;
  } model;
  static victim_log vlog;
  static char real_dump[DUMP_LEN], model_dump[DUMP_LEN];
  MUST(r->nkeys <= MAXK && r->nslots <= MAXK);

  bool is_lirs = strcmp(r->policy, "lirs") == 0;
  const model_ops *ops = is_lirs ? &lirs_ops : &clockpro_ops;
  memset(&model, 0, sizeof model);
  base *b = &model.l.b;
  b->cap = r->cap;
  b->nslots = r->nslots;
  double param = strtod(r->param, NULL);
  if (is_lirs)
    lm_init(&model.l, r->cap, param);
  else
    cm_init(&model.c, r->cap, param);
  char spec[64];
  snprintf(spec, sizeof spec, "%s:%s=%s", r->policy, is_lirs ? "hir" : "cold", r->param);

  make_trace(keys, NREQ, r->nkeys, r->seed);
  uint64_t rnd = r->seed * 0x51ED + r->cap;
  for (uint32_t k = 0; k < r->nkeys; k++) {
    /* Mostly small, some up to max_size: a big block must push several
     * LIR blocks (hot pages) out. */
    uint64_t x = test_rand(&rnd);
    uint32_t small = r->max_size / 8 + 1;
    size_of[k] = 1 + (uint32_t)((x >> 8) % (x % 4 ? small : r->max_size));
  }

  driver d;
  driver_init(&d, spec, r->cap, r->nslots, r->nkeys);
  memset(&vlog, 0, sizeof vlog);
  d.on_victim = log_victim;
  d.on_victim_ctx = &vlog;
  uint32_t pin_share = 0; /* one key in pin_share is pinned; 0: none */
  for (uint32_t i = 0; i < NREQ; i++) {
    uint32_t k = keys[i];
    bool ring = false;
    if (r->extras) {
      if (i % 64 == 0) {
        uint64_t x = test_rand(&rnd);
        pin_share = x % 4 == 0 ? 2 : x % 4 == 1 ? 0 : 6;
        for (uint32_t j = 0; j < r->nkeys; j++)
          b->pinned[j] = pin_share && test_rand(&rnd) % pin_share == 0;
      }
      for (uint32_t s = 0; s < r->nslots; s++)
        d.pinned[s] = d.key_of[s] >= 0 && b->pinned[d.key_of[s]];
      uint64_t x = test_rand(&rnd);
      ring = x % 16 == 0;
      if (x % 97 == 1 && driver_resident(&d, k)) { /* a dropped relation */
        driver_remove(&d, k);
        ops->remove(b, k);
        b->used -= b->size[k];
        b->nres--;
        continue;
      }
    }
    d.hint = ring ? HS_HINT_RING : HS_HINT_NORMAL;
    vlog.n = 0;
    bool hit = driver_access(&d, k, size_of[k], HS_NEXT_UNKNOWN, HS_ACCESS_READ);
    bool model_hit = model_access(ops, b, k, size_of[k], ring);

    /* Writing both states costs most of the test's time: every request
     * for small caches, every eighth (and on any other difference, for
     * the report) for larger ones, where a wrong state soon shows in a
     * hit, a victim or a standing anyway. */
    bool dumps = r->cap <= 16 || i % 8 == 0 || i == NREQ - 1;
    if (dumps) {
      MUST(ops->real_dump(d.p, real_dump, sizeof real_dump) < DUMP_LEN);
      ops->dump(b, model_dump);
    }
    const char *what = NULL;
    if (hit != model_hit) what = hit ? "the policy hits, the model misses" : "the model hits";
    bool same_victims = vlog.n == b->nvictims;
    for (uint32_t j = 0; same_victims && j < vlog.n; j++)
      same_victims = vlog.key[j] == b->victims[j];
    if (!what && !same_victims) {
      static char text[256];
      snprintf(text, sizeof text, "victims differ: policy %lld (of %u), model %lld (of %u)",
               vlog.n ? (long long)vlog.key[vlog.n - 1] : -2LL, vlog.n,
               b->nvictims ? (long long)b->victims[b->nvictims - 1] : -2LL, b->nvictims);
      what = text;
    }
    if (!what && dumps && strcmp(real_dump, model_dump) != 0) what = "states differ";
    if (!what && (hs_policy_resident(d.p) != b->nres || hs_policy_used(d.p) != b->used))
      what = "resident counts differ";
    for (uint32_t j = 0; !what && j < r->nkeys; j++) {
      if (driver_resident(&d, j) != ops->resident(b, j))
        what = "resident sets differ";
      else if (driver_resident(&d, j) &&
               hs_policy_standing(d.p, (uint32_t)d.slot_of[j]) != ops->standing(b, j))
        what = "standings differ";
    }
    if (!what && hs_policy_ghosts(d.p) != ops->ghosts(b)) what = "history counts differ";
    if (what) {
      MUST(ops->real_dump(d.p, real_dump, sizeof real_dump) < DUMP_LEN);
      ops->dump(b, model_dump);
      report(r, i, what, keys, real_dump, model_dump);
      driver_free(&d);
      return 1;
    }
  }
  CHECK_EQ(d.violations, 0);
  driver_free(&d);
  return 0;
}

/* Every policy x seed x cache shape; the parameter goes with the seed. */
static void compare_all(const char *policy, const char *const params[3]) {
  static const uint64_t unit_caps[] = {1, 2, 3, 5, 8, 13, 40, 120};
  static const uint64_t byte_caps[] = {10, 60, 300, 1000};
  for (uint64_t seed = 1; seed <= 3; seed++) {
    const char *param = params[seed - 1];
    for (int extras = 0; extras <= 1; extras++) {
      for (size_t c = 0; c < sizeof unit_caps / sizeof unit_caps[0]; c++) {
        uint64_t cap = unit_caps[c];
        uint32_t nkeys = (uint32_t)(4 * cap + 8);
        run r = {policy, param, cap, (uint32_t)cap, nkeys, 1, extras, seed};
        CHECK_EQ(compare(&r), 0);
      }
      for (size_t c = 0; c < sizeof byte_caps / sizeof byte_caps[0]; c++) {
        uint64_t cap = byte_caps[c];
        /* Blocks up to a third of the cache, or in the runs with extras
         * up to three quarters, past L_lirs when hir is large. Enough keys
         * for a few caches, and in the runs with extras fewer slots than
         * the blocks that would fit, so the one-entry-per-slot bounds act
         * too. */
        uint32_t max_size = (uint32_t)(extras ? cap * 3 / 4 : cap / 3);
        uint32_t nkeys = (uint32_t)(cap / (max_size / 8 + 2) * 4 + 16);
        if (nkeys > MAXK) nkeys = MAXK;
        uint32_t nslots = extras ? nkeys / 8 + 1 : nkeys;
        run r = {policy, param, cap, nslots, nkeys, max_size, extras, seed};
        CHECK_EQ(compare(&r), 0);
      }
    }
  }
}

/* Every rare rule of `policy` acted in some run. */
static void check_events(const char *policy) {
  size_t n = strlen(policy);
  bool first = true;
  for (int e = 0; e < EV_COUNT; e++) {
    if (strncmp(event_name[e], policy, n) != 0 || event_name[e][n] != ' ') continue;
    printf("%s%s %llu", first ? "rules exercised: " : ", ", event_name[e],
           (unsigned long long)events[e]);
    first = false;
    if (events[e] == 0) fprintf(stderr, "\nno run reached the rule \"%s\"\n", event_name[e]);
    CHECK(events[e] > 0);
  }
  printf("\n");
}

static void test_lirs_model(void) {
  static const char *const hir[3] = {"0.01", "0.1", "0.3"};
  compare_all("lirs", hir);
  check_events("lirs");
}

static void test_clockpro_model(void) {
  static const char *const cold[3] = {"0.01", "0.1", "0.3"};
  compare_all("clockpro", cold);
  check_events("clockpro");
}

const policy_section reference_lirs_clockpro_sections[] = {
    SECTION_ONE("lirs", test_lirs_model),
    SECTION_ONE("clockpro", test_clockpro_model),
    SECTIONS_END,
};
