/*
 * tests/policy/slru_lru_k.c — slru and lru-k on hand-worked examples (the
 * resident set, and the standing where it says something, after every
 * step): slru's segments and its cascade of demotions, lru-k's backward
 * K-distance, correlated reference period, history ring and long clocks.
 *
 * Keys are letters: 'A' is key 0. The driver's clock (`now`) is the request
 * number, starting at 0; the lru-k tests set it directly to let time pass.
 */
#include "policy_letters.h"
#include "policy_sections.h"

/* ----------------------------------------------------------------- slru */

/*
 * SLRU (Karedla, Love & Wherry 1994), 2 segments, a cache of 4: the
 * protected segment 1 holds at most 2. Segments written LRU to MRU.
 *   A B C D miss:        seg0 = A B C D
 *   hits A, B:           seg0 = C D,   seg1 = A B
 *   hit C: seg1 = A B C overflows: its LRU A goes to seg0's MRU end.
 *                        seg0 = D A,   seg1 = B C
 *   E: victim D (seg0's LRU).  seg0 = A E
 *   F: victim A.               seg0 = E F
 *   hit B (top segment: to its MRU end): seg1 = C B
 *   hit E: seg1 = C B E overflows: C down.  seg0 = F C, seg1 = B E
 *   H: victim F.  seg0 = C H
 */
static void test_slru_example(void) {
  driver d;
  driver_init(&d, "slru", 4, 4, 26);
  CHECK(strcmp(hs_policy_spec(d.p), "slru:segments=2") == 0);
  for (const char *c = "ABCD"; *c; c++) CHECK(!acc(&d, *c));
  CHECK(acc(&d, 'A'));
  CHECK(acc(&d, 'B'));
  CHECK_EQ(standing(&d, 'A'), 1);
  CHECK_EQ(standing(&d, 'C'), 0);
  CHECK(acc(&d, 'C'));
  CHECK_EQ(standing(&d, 'A'), 0);
  CHECK_EQ(standing(&d, 'B'), 1);
  CHECK_EQ(standing(&d, 'C'), 1);
  check_victim_repeatable(&d, 'E');
  CHECK(!acc(&d, 'E'));
  EXPECT(&d, "ABCE");
  CHECK(!acc(&d, 'F'));
  EXPECT(&d, "BCEF");
  CHECK(acc(&d, 'B'));
  CHECK(acc(&d, 'E'));
  CHECK_EQ(standing(&d, 'C'), 0);
  CHECK_EQ(standing(&d, 'E'), 1);
  CHECK(!acc(&d, 'H'));
  EXPECT(&d, "BCEH");
  CHECK(!acc(&d, 'I')); /* C, now seg0's LRU */
  EXPECT(&d, "BEHI");
  /* A hit under a ring promotes nothing. */
  hs_access ring = {.key = KEY('H'), .size = 1, .hint = HS_HINT_RING};
  hs_policy_hit(d.p, (uint32_t)d.slot_of[KEY('H')], &ring);
  CHECK_EQ(standing(&d, 'H'), 0);
  CHECK(!acc(&d, 'J')); /* H is still seg0's LRU */
  EXPECT(&d, "BEIJ");
  CHECK_EQ(d.violations, 0);
  driver_free(&d);
}

/*
 * 3 segments in byte mode, a cache of 12: segments 1 and 2 hold 4 units
 * each. Sizes: A 3, B 1, E 3, F 1. A demotion that overflows the segment
 * below cascades:
 *   A B E F miss:        seg0 = A B E F
 *   hits A, A:           seg2 = A (3)
 *   hits B, B:           seg2 = A B (4)
 *   hits E, F:           seg1 = E F (4)
 *   hit F: seg2 = A B F (5 > 4): A down to seg1 = E F... = E A (6 > 4):
 *          E down to seg0.   seg0 = E, seg1 = A, seg2 = B F
 */
static void test_slru_cascade(void) {
  driver d;
  driver_init(&d, "slru:segments=3", 12, 8, 26);
  const uint32_t size[] = {['A' - 'A'] = 3, ['B' - 'A'] = 1, ['E' - 'A'] = 3, ['F' - 'A'] = 1};
  for (const char *c = "ABEF"; *c; c++) CHECK(!acc_size(&d, *c, size[KEY(*c)]));
  for (const char *c = "AABBEF"; *c; c++) CHECK(acc_size(&d, *c, size[KEY(*c)]));
  CHECK_EQ(standing(&d, 'A'), 2);
  CHECK_EQ(standing(&d, 'B'), 2);
  CHECK_EQ(standing(&d, 'E'), 1);
  CHECK_EQ(standing(&d, 'F'), 1);
  CHECK(acc_size(&d, 'F', 1));
  CHECK_EQ(standing(&d, 'A'), 1);
  CHECK_EQ(standing(&d, 'B'), 2);
  CHECK_EQ(standing(&d, 'E'), 0);
  CHECK_EQ(standing(&d, 'F'), 2);
  /* A 5-unit miss (8 used): E (seg0's only entry) goes, then 3 units fit. */
  CHECK(!acc_size(&d, 'H', 5));
  EXPECT(&d, "ABFH");
  CHECK_EQ(d.violations, 0);
  driver_free(&d);
}

/* ---------------------------------------------------------------- lru-k */

/*
 * LRU-2 (O'Neil, O'Neil & Weikum 1993), a cache of 3, crp 0, history of 3
 * records. tN is the request at time N. HIST(p) = (HIST(p,1), HIST(p,2)).
 *   t0 A  t1 A (A: (1, 0))  t2 B  t3 C
 *   t4 D: B and C have infinite backward 2-distance; the subsidiary LRU
 *         picks B (last used at 2). (LRU would evict A, last used at 1.)
 *         History: B (2).
 *   t5 B: comes back: its history gives (5, 2). Victim: C (infinite, the
 *         older of C and D).  History: C.
 *   t6 E: victim D.           History: C D
 *   t7 A (hit: A = (7, 1))
 *   t8 F: victim E.           History: C D E
 *   t9 G: victim F; the ring of 3 forgets C.   History: D E F
 *   t10 H: victim G.          History: E F G
 *   t11 C: its history is gone: C starts afresh with one reference.
 *          Victim: H.
 *   t12 I: victim C (infinite distance, older than I).
 *   t13 I (hit: I = (13, 12))
 *   t14 J: A = (7, 1), B = (5, 2), I = (13, 12): A has the oldest second
 *          reference — evicted, though LRU would take B (last used at 5).
 */
static void test_lru_k_example(void) {
  driver d;
  driver_init(&d, "lru-k", 3, 3, 26);
  CHECK(strcmp(hs_policy_spec(d.p), "lru-k:k=2,crp=0,history=1") == 0);
  CHECK(hs_policy_flags(d.p) & HS_POLICY_NEEDS_TIME);
  CHECK(!acc(&d, 'A'));
  CHECK_EQ(standing(&d, 'A'), 1);
  CHECK(acc(&d, 'A'));
  CHECK_EQ(standing(&d, 'A'), 2);
  CHECK(!acc(&d, 'B'));
  CHECK(!acc(&d, 'C'));
  check_victim_repeatable(&d, 'D');
  CHECK(!acc(&d, 'D')); /* t4 */
  EXPECT(&d, "ACD");
  CHECK_EQ(hs_policy_ghosts(d.p), 1);
  CHECK(!acc(&d, 'B')); /* t5 */
  EXPECT(&d, "ABD");
  CHECK_EQ(standing(&d, 'B'), 2);
  CHECK_EQ(hs_policy_ghosts(d.p), 1);
  CHECK(!acc(&d, 'E')); /* t6 */
  EXPECT(&d, "ABE");
  CHECK(acc(&d, 'A'));  /* t7 */
  CHECK(!acc(&d, 'F')); /* t8 */
  EXPECT(&d, "ABF");
  CHECK_EQ(hs_policy_ghosts(d.p), 3);
  CHECK(!acc(&d, 'G')); /* t9 */
  EXPECT(&d, "ABG");
  CHECK_EQ(hs_policy_ghosts(d.p), 3);
  CHECK(!acc(&d, 'H')); /* t10 */
  EXPECT(&d, "ABH");
  CHECK(!acc(&d, 'C')); /* t11 */
  EXPECT(&d, "ABC");
  CHECK_EQ(standing(&d, 'C'), 1);
  CHECK(!acc(&d, 'I')); /* t12 */
  EXPECT(&d, "ABI");
  CHECK(acc(&d, 'I'));  /* t13 */
  CHECK(!acc(&d, 'J')); /* t14 */
  EXPECT(&d, "BIJ");
  CHECK_EQ(d.violations, 0);
  driver_free(&d);

  /* The same trace with the history switched off: B comes back at t5
   * with one reference, so at t6 the infinite-distance pages are D (last
   * used 4) and B (5): D goes as before, but at t8 E and B are both
   * infinite and B (5) is older than E (6): B goes. */
  driver_init(&d, "lru-k:history=0", 3, 3, 26);
  for (const char *c = "AABCDBE"; *c; c++) acc(&d, *c);
  EXPECT(&d, "ABE");
  CHECK_EQ(standing(&d, 'B'), 1);
  CHECK_EQ(hs_policy_ghosts(d.p), 0);
  acc(&d, 'A');
  CHECK(!acc(&d, 'F'));
  EXPECT(&d, "AEF");
  driver_free(&d);

  /* k=1 is LRU: at t4 A (last used 1) goes. */
  driver_init(&d, "lru-k:k=1", 3, 3, 26);
  for (const char *c = "AABCD"; *c; c++) acc(&d, *c);
  EXPECT(&d, "BCD");
  driver_free(&d);

  /* Pins: at t4 B is pinned, so C (the next infinite one) goes. */
  driver_init(&d, "lru-k", 3, 3, 26);
  for (const char *c = "AABC"; *c; c++) acc(&d, *c);
  d.pinned[d.slot_of[KEY('B')]] = true;
  CHECK(!acc(&d, 'D'));
  EXPECT(&d, "ABD");
  CHECK_EQ(d.violations, 0);
  driver_free(&d);
}

/*
 * The Correlated Reference Period, crp = 2 (a reference within 2 ticks of
 * the page's previous one is correlated).
 *
 * 1. It does not count: t0 A, t1 A, t2 B, t3 C, t4 D. With crp 0, A has
 *    two references and B (infinite distance, oldest) goes. With crp 2,
 *    A's second reference is correlated: A has one, and being the oldest
 *    of the infinite ones (last used 1; 4 - 1 > 2, so eligible) it goes.
 *
 * 2. A page in its correlated period is not eligible: t0 A, t1 B, t2 C,
 *    t3 A (uncorrelated: A = (3, 0)), t4 B (B = (4, 1)), t5 A, t6 C
 *    (C = (6, 2)), t7 A (t5 and t7 are correlated: A keeps (3, 0), last
 *    used 7). t8 D: A has the oldest second reference but 8 - 7 <= 2: not
 *    eligible. C: 8 - 6 <= 2, not eligible either. B goes.
 *
 * 3. The burst collapses: t0 X, t1 Y, t2 X (correlated, LAST(X) = 2),
 *    t5 X: uncorrelated; the burst's length LAST - HIST(X,1) = 2 shifts the
 *    older reference: X = (5, 0 + 2) = (5, 2). t6 Y: Y = (6, 1). t20 Z: Y
 *    has the older second reference (1 < 2) and goes. Without the shift X
 *    (second reference 0) would.
 */
static void test_lru_k_crp(void) {
  driver d;
  driver_init(&d, "lru-k", 3, 3, 26);
  for (const char *c = "AABCD"; *c; c++) acc(&d, *c);
  EXPECT(&d, "ACD");
  driver_free(&d);
  driver_init(&d, "lru-k:crp=2", 3, 3, 26);
  for (const char *c = "AABC"; *c; c++) acc(&d, *c);
  CHECK_EQ(standing(&d, 'A'), 1);
  CHECK(!acc(&d, 'D'));
  EXPECT(&d, "BCD");
  driver_free(&d);

  driver_init(&d, "lru-k:crp=2", 3, 3, 26);
  for (const char *c = "ABCABACA"; *c; c++) acc(&d, *c);
  CHECK_EQ(standing(&d, 'A'), 2);
  CHECK_EQ(standing(&d, 'B'), 2);
  CHECK_EQ(standing(&d, 'C'), 2);
  CHECK(!acc(&d, 'D'));
  EXPECT(&d, "ACD");
  driver_free(&d);

  driver_init(&d, "lru-k:crp=2", 2, 2, 26);
  acc(&d, 'X');
  acc(&d, 'Y');
  acc(&d, 'X');
  CHECK_EQ(standing(&d, 'X'), 1);
  d.now = 5;
  acc(&d, 'X');
  acc(&d, 'Y');
  CHECK_EQ(standing(&d, 'X'), 2);
  CHECK_EQ(standing(&d, 'Y'), 2);
  d.now = 20;
  CHECK(!acc(&d, 'Z'));
  EXPECT(&d, "XZ");
  driver_free(&d);
}

/*
 * Clock values far apart: stored times are 32-bit offsets, rebased when the
 * clock runs 2^31 past the base; times more than 2^30 ticks old become
 * equal, and the order among recent ones stays exact.
 *   t1000 A, t1001 A, t1002 B, t1003 C;  t5e9 B (B = (5e9, 1002)): rebase,
 *   1000..1003 all become the same old time.
 *   D: C (infinite) goes.  E: D (infinite) goes.  E again: E = (.., ..).
 *   F: A = (1001, 1000) and B = (5e9, 1002): the second references are
 *   tied now (both old), and the tie goes to the older LAST: A (1001, also
 *   old) before B (5e9) — the same answer exact times give.
 */
static void test_lru_k_long_clock(void) {
  driver d;
  driver_init(&d, "lru-k", 3, 3, 26);
  d.now = 1000;
  for (const char *c = "AABC"; *c; c++) acc(&d, *c);
  d.now = 5000000000ull; /* past 2^32 */
  CHECK(acc(&d, 'B'));
  CHECK(!acc(&d, 'D'));
  EXPECT(&d, "ABD");
  CHECK(!acc(&d, 'E'));
  EXPECT(&d, "ABE");
  CHECK(acc(&d, 'E'));
  CHECK(!acc(&d, 'F'));
  EXPECT(&d, "BEF");
  d.now = 1ull << 42;   /* another rebase, with everything old */
  CHECK(!acc(&d, 'H')); /* F, infinite */
  EXPECT(&d, "BEH");
  CHECK_EQ(d.violations, 0);
  driver_free(&d);
}

const policy_section slru_lru_k_sections[] = {
    SECTION_ONE("slru", test_slru_example),      SECTION_ONE("slru", test_slru_cascade),
    SECTION_ONE("lru-k", test_lru_k_example),    SECTION_ONE("lru-k", test_lru_k_crp),
    SECTION_ONE("lru-k", test_lru_k_long_clock), SECTIONS_END,
};
