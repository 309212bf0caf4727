/*
 * tests/policy/sieve_s3fifo.c — sieve and s3fifo on hand-worked examples (the
 * resident set, and the standing where it says something, after every
 * step), then both against slow reference implementations written here
 * from their definitions, compared after every request on random traces in
 * object and byte mode.
 *
 * Keys are letters: 'A' is key 0. The driver's clock (`now`) is the request
 * number, starting at 0.
 */
#include "policy_letters.h"
#include "policy_sections.h"

/* ---------------------------------------------------------------- sieve */

/*
 * SIEVE, in the manner of the paper's illustration of the hand (NSDI'24): a
 * cache of 5, queue written tail (oldest) to head (newest), * = visited.
 *   A B C D E        five misses fill it; the hand is at "start at tail"
 *   A* B* C D* E     hits on A, B, D
 *   F: the hand clears A, clears B, evicts C; rests on D
 *   A B D* E F       (the retained A and B stay where they were)
 *   A B D* E* F*     hits on E, F
 *   G: the hand clears D, E, F, runs off the head, wraps to the tail:
 *      A is not visited -> evicted; the hand rests on B
 *   B D E F G
 *   H: B is not visited -> evicted; the hand rests on D
 *   D E F G* H       hit on G
 *   I: D -> evicted; the hand rests on E
 *   E F G* H I
 *   J: E -> evicted, hand on F;  K: F -> evicted, hand on G;
 *   L: G is visited: cleared; H -> evicted, hand on I.
 */
static void test_sieve_example(void) {
  driver d;
  driver_init(&d, "sieve", 5, 5, 26);
  for (const char *c = "ABCDE"; *c; c++) CHECK(!acc(&d, *c));
  EXPECT(&d, "ABCDE");
  CHECK(acc(&d, 'A'));
  CHECK(acc(&d, 'B'));
  CHECK(acc(&d, 'D'));
  CHECK_EQ(standing(&d, 'A'), 1);
  CHECK_EQ(standing(&d, 'C'), 0);
  check_victim_repeatable(&d, 'F');
  CHECK(!acc(&d, 'F'));
  EXPECT(&d, "ABDEF");
  CHECK_EQ(standing(&d, 'A'), 0);
  CHECK_EQ(standing(&d, 'B'), 0);
  CHECK_EQ(standing(&d, 'D'), 1); /* the hand stopped before reaching it */
  CHECK(acc(&d, 'E'));
  CHECK(acc(&d, 'F'));
  CHECK(!acc(&d, 'G'));
  EXPECT(&d, "BDEFG");
  for (const char *c = "BDEFG"; *c; c++) CHECK_EQ(standing(&d, *c), 0);
  CHECK(!acc(&d, 'H'));
  EXPECT(&d, "DEFGH");
  CHECK(acc(&d, 'G'));
  CHECK(!acc(&d, 'I'));
  EXPECT(&d, "EFGHI");
  CHECK(!acc(&d, 'J'));
  EXPECT(&d, "FGHIJ");
  CHECK(!acc(&d, 'K'));
  EXPECT(&d, "GHIJK");
  CHECK(!acc(&d, 'L'));
  EXPECT(&d, "GIJKL");
  CHECK_EQ(standing(&d, 'G'), 0);
  CHECK_EQ(d.violations, 0);
  driver_free(&d);
}

/*
 * Pins: the hand steps over a pinned entry without clearing its bit.
 *   A B* C D         B visited, then A and B pinned
 *   E: A pinned (skipped), B pinned (skipped, stays visited), C evicted
 *   unpin; F: the hand is on D: evicted; it rests on E.
 *   A B* E* F*       hits on E, F
 *   G: the hand clears E and F, wraps to the tail: A evicted; B keeps its
 *      bit (the hand has not come back to it).
 */
static void test_sieve_pins(void) {
  driver d;
  driver_init(&d, "sieve", 4, 4, 26);
  for (const char *c = "ABCD"; *c; c++) acc(&d, *c);
  CHECK(acc(&d, 'B'));
  d.pinned[d.slot_of[KEY('A')]] = true;
  d.pinned[d.slot_of[KEY('B')]] = true;
  CHECK(!acc(&d, 'E'));
  EXPECT(&d, "ABDE");
  CHECK_EQ(standing(&d, 'B'), 1);
  memset(d.pinned, 0, sizeof *d.pinned * d.nslots);
  CHECK(!acc(&d, 'F'));
  EXPECT(&d, "ABEF");
  CHECK(acc(&d, 'E'));
  CHECK(acc(&d, 'F'));
  CHECK(!acc(&d, 'G'));
  EXPECT(&d, "BEFG");
  CHECK_EQ(standing(&d, 'B'), 1);
  CHECK_EQ(standing(&d, 'E'), 0);
  /* Everything pinned: no victim, and nothing evicted. */
  for (uint32_t s = 0; s < d.nslots; s++) d.pinned[s] = true;
  hs_access a = {.key = KEY('H'), .size = 1};
  CHECK_EQ(hs_policy_victim(d.p, &a, driver_is_pinned, &d), -1);
  EXPECT(&d, "BEFG");
  CHECK_EQ(d.violations, 0);
  driver_free(&d);
}

/* --------------------------------------------------------------- s3fifo */

/*
 * S3-FIFO (SOSP'23, Algorithm 1, as in the artifact: move = 2), with a cache
 * of 5 and "small=0.4": S's share is 2, M's 3, G holds floor(0.9 * 5) = 4.
 * Queues written tail (oldest) to head; f = freq.
 *  1. A B C D E miss: all go to S (the cache is not full yet).
 *     S = A B C D E, M = -, G = -
 *  2. hits A, A (f 2), B (f 1).
 *  3. F: M (0) is within its share and S is not empty: evict from S.
 *     A has f 2 >= 2: moves to M's head with f 0. B has f 1: evicted, to G.
 *     S = C D E F, M = A, G = B
 *  4. H: S's tail C (f 0) -> G.             S = D E F H, G = B C
 *  5. B: a ghost hit. S's tail D -> G (B leaves G first); B goes to M.
 *     S = E F H, M = A B, G = C D
 *  6. hits A (f 1), E, E (f 2).
 *  7. I: from S: E moves to M; F -> G.      S = H I, M = A B E, G = C D F
 *  8. J: M holds 3, not over: from S: H -> G.  S = I J, G = C D F H (full)
 *  9. C: a ghost hit: I -> G (C leaves G first); C goes to M.
 *     S = J, M = A B E C (4 > 3), G = D F H I
 * 10. K: M is over its share: from M. A has f 1: back to the head with f 0;
 *     B has f 0: evicted (no ghost).  S = J K, M = E C A
 * 11. L: from S: J -> G, which drops its oldest, D.  S = K L, G = F H I J
 * 12. D: no longer a ghost: S's tail K -> G (F dropped); D goes to S.
 *     S = L D, M = E C A, G = H I J K
 */
static void test_s3fifo_example(void) {
  driver d;
  driver_init(&d, "s3fifo:small=0.4", 5, 5, 26);
  CHECK(strcmp(hs_policy_spec(d.p), "s3fifo:small=0.4,ghost=0.9,move=2") == 0);
  for (const char *c = "ABCDE"; *c; c++) CHECK(!acc(&d, *c));
  CHECK(acc(&d, 'A'));
  CHECK(acc(&d, 'A'));
  CHECK(acc(&d, 'B'));
  CHECK_EQ(standing(&d, 'A'), 2); /* in S, f 2 */
  CHECK_EQ(standing(&d, 'B'), 1);
  CHECK(!acc(&d, 'F')); /* step 3 */
  EXPECT(&d, "ACDEF");
  CHECK_EQ(standing(&d, 'A'), 4); /* in M, f 0 */
  CHECK_EQ(standing(&d, 'F'), 0);
  CHECK_EQ(hs_policy_ghosts(d.p), 1);
  CHECK(!acc(&d, 'H')); /* step 4 */
  EXPECT(&d, "ADEFH");
  CHECK_EQ(hs_policy_ghosts(d.p), 2);
  check_victim_repeatable(&d, 'B');
  CHECK(!acc(&d, 'B')); /* step 5: a ghost hit */
  EXPECT(&d, "ABEFH");
  CHECK_EQ(standing(&d, 'B'), 4);
  CHECK_EQ(hs_policy_ghosts(d.p), 2);
  CHECK(acc(&d, 'A')); /* step 6 */
  CHECK(acc(&d, 'E'));
  CHECK(acc(&d, 'E'));
  CHECK_EQ(standing(&d, 'A'), 5);
  CHECK(!acc(&d, 'I')); /* step 7 */
  EXPECT(&d, "ABEHI");
  CHECK_EQ(standing(&d, 'E'), 4);
  CHECK(!acc(&d, 'J')); /* step 8 */
  EXPECT(&d, "ABEIJ");
  CHECK_EQ(hs_policy_ghosts(d.p), 4);
  CHECK(!acc(&d, 'C')); /* step 9: a ghost hit */
  EXPECT(&d, "ABCEJ");
  CHECK_EQ(standing(&d, 'C'), 4);
  CHECK(!acc(&d, 'K')); /* step 10: from M */
  EXPECT(&d, "ACEJK");
  CHECK_EQ(standing(&d, 'A'), 4); /* re-queued, f 1 -> 0 */
  CHECK_EQ(hs_policy_ghosts(d.p), 4);
  CHECK(!acc(&d, 'L')); /* step 11 */
  EXPECT(&d, "ACEKL");
  CHECK(!acc(&d, 'D')); /* step 12: D's ghost was dropped */
  EXPECT(&d, "ACDEL");
  CHECK_EQ(standing(&d, 'D'), 0);
  CHECK(!acc(&d, 'H')); /* H is still a ghost: to M; L (S's tail) -> G */
  EXPECT(&d, "ACDEH");
  CHECK_EQ(standing(&d, 'H'), 4);
  CHECK_EQ(d.violations, 0);
  driver_free(&d);

  /* The same start with move=1 ("accessed at least once"): at step 3 both
   * A (f 2) and B (f 1) move to M, and C is the one evicted. */
  driver_init(&d, "s3fifo:small=0.4,move=1", 5, 5, 26);
  for (const char *c = "ABCDE"; *c; c++) acc(&d, *c);
  acc(&d, 'A');
  acc(&d, 'A');
  acc(&d, 'B');
  CHECK(!acc(&d, 'F'));
  EXPECT(&d, "ABDEF");
  CHECK_EQ(standing(&d, 'B'), 4);
  driver_free(&d);

  /* Under a ring, a hit raises f to 1 at most: never enough to move. */
  driver_init(&d, "s3fifo:small=0.4", 5, 5, 26);
  for (const char *c = "ABCDE"; *c; c++) acc(&d, *c);
  hs_access ring = {.key = KEY('A'), .size = 1, .hint = HS_HINT_RING};
  for (int i = 0; i < 3; i++) hs_policy_hit(d.p, (uint32_t)d.slot_of[KEY('A')], &ring);
  CHECK_EQ(standing(&d, 'A'), 1);
  CHECK(!acc(&d, 'F'));
  EXPECT(&d, "BCDEF");
  driver_free(&d);
}

/* ----------------------------------------------------- reference: SIEVE */

#define NKEYS 500
#define NREQ  20000

/* SIEVE from its definition: an array ordered oldest first, a visited bit
 * per entry, and the hand as an index (-1: start at the oldest). */
typedef struct sieve_ref {
  uint64_t capacity, used;
  uint32_t n;
  int hand;
  uint32_t key[NKEYS], size[NKEYS];
  bool visited[NKEYS];
} sieve_ref;

static void sref_delete(sieve_ref *c, uint32_t i) {
  c->used -= c->size[i];
  memmove(&c->key[i], &c->key[i + 1], (c->n - i - 1) * sizeof c->key[0]);
  memmove(&c->size[i], &c->size[i + 1], (c->n - i - 1) * sizeof c->size[0]);
  memmove(&c->visited[i], &c->visited[i + 1], (c->n - i - 1) * sizeof c->visited[0]);
  c->n--;
}

static bool sref_access(sieve_ref *c, uint32_t key, uint32_t size) {
  for (uint32_t i = 0; i < c->n; i++)
    if (c->key[i] == key) {
      c->visited[i] = true;
      return true;
    }
  if (size > c->capacity) return false;
  while (c->used + size > c->capacity) {
    uint32_t i = c->hand >= 0 ? (uint32_t)c->hand : 0;
    while (c->visited[i]) {
      c->visited[i] = false;
      i = i + 1 == c->n ? 0 : i + 1; /* towards the newest, then wrap */
    }
    sref_delete(c, i);
    c->hand = i < c->n ? (int)i : -1; /* the entry newer than the victim */
  }
  c->key[c->n] = key;
  c->size[c->n] = size;
  c->visited[c->n] = false;
  c->n++;
  c->used += size;
  return false;
}

/* -------------------------------------------------- reference: S3-FIFO */

/* S3-FIFO from its definition (libCacheSim's S3FIFOv0, the paper's
 * artifact): arrays ordered oldest first for S, M and G. */
typedef struct fifo_arr {
  uint32_t n;
  uint64_t units;
  uint32_t key[NKEYS], size[NKEYS];
  uint8_t freq[NKEYS];
} fifo_arr;

typedef struct s3_ref {
  uint64_t capacity, small_share, main_share, ghost_units;
  uint8_t move;
  fifo_arr s, m, g;
} s3_ref;

static int fa_find(const fifo_arr *q, uint32_t key) {
  for (uint32_t i = 0; i < q->n; i++)
    if (q->key[i] == key) return (int)i;
  return -1;
}

static void fa_delete(fifo_arr *q, uint32_t i) {
  q->units -= q->size[i];
  memmove(&q->key[i], &q->key[i + 1], (q->n - i - 1) * sizeof q->key[0]);
  memmove(&q->size[i], &q->size[i + 1], (q->n - i - 1) * sizeof q->size[0]);
  memmove(&q->freq[i], &q->freq[i + 1], (q->n - i - 1) * sizeof q->freq[0]);
  q->n--;
}

static void fa_append(fifo_arr *q, uint32_t key, uint32_t size, uint8_t freq) {
  q->key[q->n] = key;
  q->size[q->n] = size;
  q->freq[q->n] = freq;
  q->n++;
  q->units += size;
}

static bool s3ref_access(s3_ref *c, uint32_t key, uint32_t size) {
  int i;
  if ((i = fa_find(&c->s, key)) >= 0 || (i = fa_find(&c->m, key)) >= 0) {
    fifo_arr *q = fa_find(&c->s, key) >= 0 ? &c->s : &c->m;
    if (q->freq[i] < 3) q->freq[i]++;
    return true;
  }
  if (size > c->capacity) return false;
  bool ghost_hit = false;
  if ((i = fa_find(&c->g, key)) >= 0) {
    fa_delete(&c->g, (uint32_t)i);
    ghost_hit = true;
  }
  while (c->s.units + c->m.units + size > c->capacity) {
    if (c->m.units > c->main_share || c->s.n == 0) {
      for (;;) { /* evict from M */
        uint32_t k = c->m.key[0], sz = c->m.size[0];
        uint8_t f = c->m.freq[0];
        fa_delete(&c->m, 0);
        if (f == 0) break;
        fa_append(&c->m, k, sz, (uint8_t)(f - 1));
      }
    } else {
      while (c->s.n) { /* evict from S */
        uint32_t k = c->s.key[0], sz = c->s.size[0];
        uint8_t f = c->s.freq[0];
        fa_delete(&c->s, 0);
        if (f >= c->move) {
          fa_append(&c->m, k, sz, 0);
          continue;
        }
        if (c->ghost_units && sz <= c->ghost_units) {
          while (c->g.units + sz > c->ghost_units) fa_delete(&c->g, 0);
          fa_append(&c->g, k, sz, 0);
        }
        break;
      }
    }
  }
  fa_append(ghost_hit ? &c->m : &c->s, key, size, 0);
  return false;
}

typedef enum ref_kind { REF_SIEVE, REF_S3FIFO } ref_kind;

static void compare(ref_kind kind, const char *spec, uint64_t capacity, bool bytes, uint64_t seed) {
  static uint32_t keys[NREQ];
  static uint32_t size_of[NKEYS];
  static sieve_ref sr;
  static s3_ref s3;
  make_trace(keys, NREQ, NKEYS, seed);
  uint64_t r = seed * 7 + 1;
  for (uint32_t k = 0; k < NKEYS; k++) size_of[k] = bytes ? 1 + (uint32_t)(test_rand(&r) % 60) : 1;
  memset(&sr, 0, sizeof sr);
  sr.capacity = capacity;
  sr.hand = -1;
  memset(&s3, 0, sizeof s3);
  s3.capacity = capacity;
  s3.small_share = (uint64_t)((double)capacity * 0.1);
  s3.main_share = capacity - s3.small_share;
  s3.ghost_units = (uint64_t)((double)capacity * 0.9);
  s3.move = 2;
  driver d;
  driver_init(&d, spec, capacity, NKEYS, NKEYS);
  uint64_t ref_misses = 0, mismatched_steps = 0;
  for (uint32_t i = 0; i < NREQ; i++) {
    uint32_t key = keys[i], size = size_of[key];
    bool hit_ref = kind == REF_SIEVE ? sref_access(&sr, key, size) : s3ref_access(&s3, key, size);
    bool hit = driver_access(&d, key, size, HS_NEXT_UNKNOWN, HS_ACCESS_READ);
    ref_misses += !hit_ref;
    uint32_t n = kind == REF_SIEVE ? sr.n : s3.s.n + s3.m.n;
    bool same = hit == hit_ref && n == hs_policy_resident(d.p);
    if (kind == REF_SIEVE) {
      for (uint32_t j = 0; same && j < sr.n; j++) same = driver_resident(&d, sr.key[j]);
    } else {
      for (uint32_t j = 0; same && j < s3.s.n; j++) same = driver_resident(&d, s3.s.key[j]);
      for (uint32_t j = 0; same && j < s3.m.n; j++) same = driver_resident(&d, s3.m.key[j]);
      same = same && s3.g.n == hs_policy_ghosts(d.p);
    }
    if (!same && mismatched_steps++ == 0)
      fprintf(stderr, "%s (capacity %llu%s, seed %llu): differs from the reference at request %u\n",
              spec, (unsigned long long)capacity, bytes ? ", bytes" : "", (unsigned long long)seed,
              i);
  }
  CHECK_EQ(mismatched_steps, 0);
  CHECK_EQ(d.misses, ref_misses);
  CHECK_EQ(d.violations, 0);
  driver_free(&d);
}

static void test_sieve_reference(void) {
  for (uint64_t seed = 1; seed <= 3; seed++) {
    for (uint64_t cap = 1; cap <= 250; cap *= 3) {
      compare(REF_SIEVE, "sieve", cap, false, seed);
      compare(REF_SIEVE, "sieve", cap * 30, true, seed);
    }
  }
}

static void test_s3fifo_reference(void) {
  for (uint64_t seed = 1; seed <= 3; seed++) {
    for (uint64_t cap = 1; cap <= 250; cap *= 3) {
      compare(REF_S3FIFO, "s3fifo", cap, false, seed);
      compare(REF_S3FIFO, "s3fifo", cap * 30, true, seed);
    }
  }
}

const policy_section sieve_s3fifo_sections[] = {
    SECTION_ONE("sieve", test_sieve_example),     SECTION_ONE("sieve", test_sieve_pins),
    SECTION_ONE("s3fifo", test_s3fifo_example),   SECTION_ONE("sieve", test_sieve_reference),
    SECTION_ONE("s3fifo", test_s3fifo_reference), SECTIONS_END,
};
