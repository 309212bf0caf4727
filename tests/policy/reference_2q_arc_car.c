/*
 * tests/policy/reference_2q_arc_car.c — 2q, arc and car against slow
 * reference implementations written here from the papers' pseudo-code
 * (2Q's full version, ARC's Figure 4, CAR's Figure 2; arc's byte mode as
 * libCacheSim's ARC does it) on random traces, in object and byte mode,
 * comparing the resident set, the ghost count and the target p after every
 * request. The hand-worked examples are in 2q_arc_car.c.
 */
#include "policy/adaptive.h"
#include "policy_driver.h"
#include "policy_sections.h"

static bool acc_size(driver *d, uint32_t key, uint32_t size) {
  return driver_access(d, key, size, HS_NEXT_UNKNOWN, HS_ACCESS_READ);
}

/* ------------------------------------------------------------- references */

#define RKEYS 300
#define RREQ  20000

/* A list as an array, index 0 the LRU / oldest end (CAR: the hand). */
typedef struct rlist {
  uint32_t n;
  uint64_t units;
  uint32_t key[RKEYS], size[RKEYS];
  bool bit[RKEYS];
} rlist;

static int rl_find(const rlist *l, uint32_t key) {
  for (uint32_t i = 0; i < l->n; i++)
    if (l->key[i] == key) return (int)i;
  return -1;
}

static void rl_del(rlist *l, uint32_t i) {
  l->units -= l->size[i];
  memmove(&l->key[i], &l->key[i + 1], (l->n - i - 1) * sizeof l->key[0]);
  memmove(&l->size[i], &l->size[i + 1], (l->n - i - 1) * sizeof l->size[0]);
  memmove(&l->bit[i], &l->bit[i + 1], (l->n - i - 1) * sizeof l->bit[0]);
  l->n--;
}

static void rl_push(rlist *l, uint32_t key, uint32_t size, bool bit) {
  l->key[l->n] = key;
  l->size[l->n] = size;
  l->bit[l->n] = bit;
  l->n++;
  l->units += size;
}

/* Moves entry i of `from` to the newest end of `to`. */
static void rl_move(rlist *from, uint32_t i, rlist *to, bool bit) {
  uint32_t k = from->key[i], s = from->size[i];
  rl_del(from, i);
  rl_push(to, k, s, bit);
}

typedef enum ref_kind { REF_2Q, REF_ARC, REF_CAR } ref_kind;

typedef struct ref {
  ref_kind kind;
  uint64_t c, kin, kout;
  double p;
  rlist l[4]; /* 2q: A1in, Am, A1out; arc/car: T1, T2, B1, B2 */
} ref;

static uint64_t ref_used(const ref *r) {
  return r->l[0].units + r->l[1].units;
}

static uint64_t ref_ghosts(const ref *r) {
  return r->kind == REF_2Q ? r->l[2].n : r->l[2].n + r->l[3].n;
}

/* 2Q, the paper's full version (a returning key leaves A1out first). */
static bool ref_2q(ref *r, uint32_t key, uint32_t size) {
  rlist *in = &r->l[0], *am = &r->l[1], *out = &r->l[2];
  int i;
  if ((i = rl_find(am, key)) >= 0) {
    rl_move(am, (uint32_t)i, am, false);
    return true;
  }
  if (rl_find(in, key) >= 0) return true;
  if (size > r->c) return false;
  bool ghost = (i = rl_find(out, key)) >= 0;
  if (ghost) rl_del(out, (uint32_t)i);
  while (ref_used(r) + size > r->c) {
    if (in->units > r->kin || am->n == 0) {
      uint32_t k = in->key[0], s = in->size[0];
      rl_del(in, 0);
      if (s <= r->kout) {
        while (out->n && out->units + s > r->kout) rl_del(out, 0);
        rl_push(out, k, s, false);
      }
    } else {
      rl_del(am, 0);
    }
  }
  rl_push(ghost ? am : in, key, size, false);
  return false;
}

/* ARC as in the paper's Figure 4, sized as libCacheSim does it. */
static void ref_arc_replace(ref *r, bool in_b2) {
  rlist *t1 = &r->l[0], *t2 = &r->l[1];
  double u1 = (double)t1->units;
  bool from_t1 = (t1->n && (u1 > r->p || (u1 == r->p && in_b2))) || t2->n == 0;
  if (from_t1)
    rl_move(t1, 0, &r->l[2], false);
  else
    rl_move(t2, 0, &r->l[3], false);
}

static bool ref_arc(ref *r, uint32_t key, uint32_t size) {
  rlist *t1 = &r->l[0], *t2 = &r->l[1], *b1 = &r->l[2], *b2 = &r->l[3];
  int i;
  if ((i = rl_find(t1, key)) >= 0) {
    rl_move(t1, (uint32_t)i, t2, false);
    return true;
  }
  if ((i = rl_find(t2, key)) >= 0) {
    rl_move(t2, (uint32_t)i, t2, false);
    return true;
  }
  if (size > r->c) return false;
  int ghost = 0;
  if ((i = rl_find(b1, key)) >= 0) {
    double delta = (double)b2->units / (double)b1->units;
    r->p += delta > 1 ? delta : 1;
    if (r->p > (double)r->c) r->p = (double)r->c;
    rl_del(b1, (uint32_t)i);
    ghost = 1;
  } else if ((i = rl_find(b2, key)) >= 0) {
    double delta = (double)b1->units / (double)b2->units;
    r->p -= delta > 1 ? delta : 1;
    if (r->p < 0) r->p = 0;
    rl_del(b2, (uint32_t)i);
    ghost = 2;
  }
  while (ref_used(r) + size > r->c) {
    if (ghost) {
      ref_arc_replace(r, ghost == 2);
    } else if (t1->units + b1->units + size > r->c) {
      if (b1->n) {
        rl_del(b1, 0);
        ref_arc_replace(r, false);
      } else {
        rl_del(t1, 0);
      }
    } else {
      if (t1->units + t2->units + b1->units + b2->units >= 2 * r->c && b2->n) rl_del(b2, 0);
      ref_arc_replace(r, false);
    }
  }
  rl_push(ghost ? t2 : t1, key, size, false);
  return false;
}

/* CAR as in the paper's Figure 2 (the directory step with units). */
static bool ref_car(ref *r, uint32_t key, uint32_t size) {
  rlist *t1 = &r->l[0], *t2 = &r->l[1], *b1 = &r->l[2], *b2 = &r->l[3];
  int i;
  if ((i = rl_find(t1, key)) >= 0) {
    t1->bit[i] = true;
    return true;
  }
  if ((i = rl_find(t2, key)) >= 0) {
    t2->bit[i] = true;
    return true;
  }
  if (size > r->c) return false;
  bool replaced = false;
  while (ref_used(r) + size > r->c) {
    replaced = true;
    for (;;) { /* replace() */
      bool use_t1 = (double)t1->units >= (r->p > 1 ? r->p : 1);
      if (use_t1 && !t1->n) use_t1 = false;
      if (!use_t1 && !t2->n) use_t1 = true;
      rlist *t = use_t1 ? t1 : t2;
      if (!t->bit[0]) {
        rl_move(t, 0, use_t1 ? b1 : b2, false);
        break;
      }
      rl_move(t, 0, t2, false);
    }
  }
  int in1 = rl_find(b1, key), in2 = rl_find(b2, key);
  if (in1 < 0 && in2 < 0) {
    if (replaced) {
      if (t1->units + b1->units + size > r->c) {
        while (b1->n && t1->units + b1->units + size > r->c) rl_del(b1, 0);
      } else {
        while (b2->n && t1->units + t2->units + b1->units + b2->units + size > 2 * r->c)
          rl_del(b2, 0);
      }
    }
    rl_push(t1, key, size, false);
  } else if (in1 >= 0) {
    double delta = (double)b2->units / (double)b1->units;
    r->p += delta > 1 ? delta : 1;
    if (r->p > (double)r->c) r->p = (double)r->c;
    rl_del(b1, (uint32_t)in1);
    rl_push(t2, key, size, false);
  } else {
    double delta = (double)b1->units / (double)b2->units;
    r->p -= delta > 1 ? delta : 1;
    if (r->p < 0) r->p = 0;
    rl_del(b2, (uint32_t)in2);
    rl_push(t2, key, size, false);
  }
  return false;
}

static void compare(const char *spec, ref_kind kind, uint64_t capacity, bool bytes, uint64_t seed) {
  static uint32_t keys[RREQ];
  static uint32_t size_of[RKEYS];
  static ref r;
  make_trace(keys, RREQ, RKEYS, seed);
  uint64_t rs = seed * 7 + 3;
  for (uint32_t k = 0; k < RKEYS; k++) size_of[k] = bytes ? 1 + (uint32_t)(test_rand(&rs) % 60) : 1;
  memset(&r, 0, sizeof r);
  r.kind = kind;
  r.c = capacity;
  r.kin = (uint64_t)(0.25 * (double)capacity);
  r.kout = (uint64_t)(0.5 * (double)capacity);
  driver d;
  driver_init(&d, spec, capacity, RKEYS, RKEYS);
  uint64_t mismatched = 0;
  for (uint32_t i = 0; i < RREQ; i++) {
    uint32_t k = keys[i], s = size_of[k];
    bool hit_ref = kind == REF_2Q    ? ref_2q(&r, k, s)
                   : kind == REF_ARC ? ref_arc(&r, k, s)
                                     : ref_car(&r, k, s);
    bool hit = acc_size(&d, k, s);
    uint32_t n = r.l[0].n + r.l[1].n;
    bool same =
        hit == hit_ref && n == hs_policy_resident(d.p) && ref_ghosts(&r) == hs_policy_ghosts(d.p);
    for (int li = 0; li < 2; li++)
      for (uint32_t j = 0; same && j < r.l[li].n; j++) same = driver_resident(&d, r.l[li].key[j]);
    if (kind == REF_ARC) same = same && hs_policy_arc_target(d.p) == r.p;
    if (kind == REF_CAR) same = same && hs_policy_car_target(d.p) == r.p;
    if (!same && mismatched++ == 0)
      fprintf(stderr, "%s (capacity %llu%s, seed %llu): differs from the reference at request %u\n",
              spec, (unsigned long long)capacity, bytes ? ", bytes" : "", (unsigned long long)seed,
              i);
  }
  CHECK_EQ(mismatched, 0);
  CHECK_EQ(d.violations, 0);
  driver_free(&d);
}

static void references(const char *spec, ref_kind kind) {
  for (uint64_t seed = 1; seed <= 3; seed++)
    for (uint64_t cap = 1; cap <= 250; cap = cap * 3 + 1) {
      compare(spec, kind, cap, false, seed);
      compare(spec, kind, cap * 30, true, seed);
    }
}

static void test_2q_reference(void) {
  references("2q", REF_2Q);
}

static void test_arc_reference(void) {
  references("arc", REF_ARC);
}

static void test_car_reference(void) {
  references("car", REF_CAR);
}

const policy_section reference_twoq_arc_car_sections[] = {
    SECTION_ONE("2q", test_2q_reference),
    SECTION_ONE("arc", test_arc_reference),
    SECTION_ONE("car", test_car_reference),
    SECTIONS_END,
};
