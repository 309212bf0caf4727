/*
 * tests/policy/2q_arc_car.c — hand-worked examples for 2q (Johnson & Shasha,
 * VLDB 1994, the full version), arc (Megiddo & Modha, FAST 2003, Figure 4)
 * and car (Bansal & Modha, FAST 2004, Figure 2), traced step by step from
 * the papers' pseudo-code; then pins, ring hints and specs; two misses
 * interleaved the way the pool can interleave them (bounds kept, a
 * returning key still recognised); and CAR's lock-free hits racing its
 * misses (for ThreadSanitizer). reference_2q_arc_car.c compares
 * the three with reference implementations on random traces.
 *
 * Lists are written MRU (or newest) first; CAR's clocks hand first.
 * Standing: 2q 1 = A1in, 2 = Am; arc 1 = T1, 2 = T2; car 1/2 = T1 with its
 * bit clear/set, 3/4 = T2 with its bit clear/set. A key that comes back
 * while remembered as a ghost lands in Am / T2 (standing 2, or 3 for car);
 * one that was forgotten lands in A1in / T1 (standing 1): that is how the
 * examples see ghost membership, besides hs_policy_ghosts.
 */
#include "policy/adaptive.h"
#include "policy_driver.h"
#include "policy_sections.h"

static bool acc(driver *d, uint32_t key) {
  return driver_access(d, key, 1, HS_NEXT_UNKNOWN, HS_ACCESS_READ);
}

static bool acc_size(driver *d, uint32_t key, uint32_t size) {
  return driver_access(d, key, size, HS_NEXT_UNKNOWN, HS_ACCESS_READ);
}

/* An access with the ring hint. */
static bool acc_ring(driver *d, uint32_t key) {
  return driver_access_ring(d, key);
}

#define GHOSTS(d, n) CHECK_EQ(hs_policy_ghosts((d)->p), n)
#define ARC_P(d, v)  CHECK(hs_policy_arc_target((d)->p) == (v))
#define CAR_P(d, v)  CHECK(hs_policy_car_target((d)->p) == (v))

/* --------------------------------------------------------------------- 2q */

/* The full 2Q on 4 pages: Kin = 1, Kout = 2. A1in and A1out newest first,
 * Am most recent first. */
static void test_2q_example(void) {
  driver d;
  driver_init(&d, "2q", 4, 4, 32);
  CHECK(strcmp(hs_policy_spec(d.p), "2q:in=0.25,out=0.5") == 0);
  CHECK_EQ(hs_policy_flags(d.p), 0);

  /* 1-4: free slots: A1in [4 3 2 1]. */
  for (uint32_t k = 1; k <= 4; k++) CHECK(!acc(&d, k));
  RESIDENT(&d, 1, 2, 3, 4);
  for (uint32_t k = 1; k <= 4; k++) CHECK_EQ(driver_standing(&d, k), 1);
  GHOSTS(&d, 0);
  /* 5: |A1in| = 4 > Kin: page out A1in's tail 1, A1out [1]. */
  CHECK(!acc(&d, 5));
  RESIDENT(&d, 2, 3, 4, 5);
  GHOSTS(&d, 1);
  /* 6: 2 out, A1out [2 1]. */
  CHECK(!acc(&d, 6));
  RESIDENT(&d, 3, 4, 5, 6);
  GHOSTS(&d, 2);
  /* 7: 3 out, A1out [3 2 1] > Kout: 1 forgotten, A1out [3 2]. */
  CHECK(!acc(&d, 7));
  RESIDENT(&d, 4, 5, 6, 7);
  GHOSTS(&d, 2);
  /* 3: in A1out: reclaim (4 out of A1in; 3 no longer counted in A1out, so
   * A1out [4 2]); 3 to the head of Am. */
  CHECK(!acc(&d, 3));
  RESIDENT(&d, 3, 5, 6, 7);
  CHECK_EQ(driver_standing(&d, 3), 2);
  GHOSTS(&d, 2);
  /* 2: in A1out: 5 out (A1out [5 4]); Am [2 3]. */
  CHECK(!acc(&d, 2));
  RESIDENT(&d, 2, 3, 6, 7);
  CHECK_EQ(driver_standing(&d, 2), 2);
  GHOSTS(&d, 2);
  /* 8: A1in [7 6] > Kin: 6 out, A1out [6 5] (4 forgotten). A1in [8 7]. */
  CHECK(!acc(&d, 8));
  RESIDENT(&d, 2, 3, 7, 8);
  /* 7 hit in A1in: nothing at all (a correlated reference). */
  CHECK(acc(&d, 7));
  CHECK_EQ(driver_standing(&d, 7), 1);
  /* 9: 7 is still A1in's tail: out, A1out [7 6]. A1in [9 8]. */
  CHECK(!acc(&d, 9));
  RESIDENT(&d, 2, 3, 8, 9);
  /* 3 hit in Am: Am [3 2]. */
  CHECK(acc(&d, 3));
  /* 4 was forgotten: a first reference again, into A1in; 8 out, A1out
   * [8 7]. A1in [4 9]. */
  CHECK(!acc(&d, 4));
  RESIDENT(&d, 2, 3, 4, 9);
  CHECK_EQ(driver_standing(&d, 4), 1);
  GHOSTS(&d, 2);
  /* 7: in A1out (now [8]): 9 out of A1in, A1out [9 8]; Am [7 3 2], A1in
   * [4]. */
  CHECK(!acc(&d, 7));
  RESIDENT(&d, 2, 3, 4, 7);
  CHECK_EQ(driver_standing(&d, 7), 2);
  /* 8: in A1out (now [9]); |A1in| = 1 = Kin, so Am's LRU 2 is paged out,
   * and not remembered: A1out stays [9]. Am [8 7 3]. */
  CHECK(!acc(&d, 8));
  RESIDENT(&d, 3, 4, 7, 8);
  CHECK_EQ(driver_standing(&d, 8), 2);
  GHOSTS(&d, 1);
  /* 2: not remembered: into A1in; Am's LRU 3 out (|A1in| = Kin).
   * A1in [2 4], Am [8 7]. */
  CHECK(!acc(&d, 2));
  RESIDENT(&d, 2, 4, 7, 8);
  CHECK_EQ(driver_standing(&d, 2), 1);
  GHOSTS(&d, 1);
  /* 10: |A1in| = 2 > Kin: 4 out, A1out [4 9]. */
  CHECK(!acc(&d, 10));
  RESIDENT(&d, 2, 7, 8, 10);
  GHOSTS(&d, 2);
  CHECK_EQ(d.violations, 0);
  driver_free(&d);
}

/* Kin and Kout in units: 2q on 20 units, Kin = 5, Kout = 10. */
static void test_2q_bytes(void) {
  driver d;
  driver_init(&d, "2q", 20, 8, 32);
  /* 1(6) 2(6) 3(6): A1in [3 2 1], 18 units. */
  CHECK(!acc_size(&d, 1, 6));
  CHECK(!acc_size(&d, 2, 6));
  CHECK(!acc_size(&d, 3, 6));
  /* 4(8): 26 > 20. A1in 18 > 5: 1 out (A1out [1], 6 units); 20 fits. */
  CHECK(!acc_size(&d, 4, 8));
  RESIDENT(&d, 2, 3, 4);
  /* 1(6): in A1out. 20 + 6 > 20: 2 out, A1out [2] (1 no longer there);
   * 14 + 6 fits. Am [1]; A1in [4 3]. */
  CHECK(!acc_size(&d, 1, 6));
  RESIDENT(&d, 1, 3, 4);
  CHECK_EQ(driver_standing(&d, 1), 2);
  GHOSTS(&d, 1);
  /* 5(11): 20 + 11 > 20. A1in 14 > 5: 3 out, A1out [3 2] is 12 > 10: 2
   * forgotten, [3]; 14 + 11 > 20: A1in 8 > 5: 4 out, A1out [4 3] is 14 >
   * 10: 3 forgotten, [4]. 6 + 11 fits. A1in [5], Am [1]. */
  CHECK(!acc_size(&d, 5, 11));
  RESIDENT(&d, 1, 5);
  GHOSTS(&d, 1);
  /* 3(6): forgotten: A1in. 17 + 6 > 20: A1in 11 > 5: 5 out, but 11 > Kout:
   * not remembered. A1out [4]. A1in [3], Am [1]. */
  CHECK(!acc_size(&d, 3, 6));
  RESIDENT(&d, 1, 3);
  CHECK_EQ(driver_standing(&d, 3), 1);
  GHOSTS(&d, 1);
  /* 5(11): not remembered. 12 + 11 > 20: A1in 6 > 5: 3 out, A1out [3 4]
   * (14 > 10: 4 forgotten -> [3]). 6 + 11 fits: A1in [5]. */
  CHECK(!acc_size(&d, 5, 11));
  RESIDENT(&d, 1, 5);
  CHECK_EQ(driver_standing(&d, 5), 1);
  GHOSTS(&d, 1);
  CHECK_EQ(d.violations, 0);
  driver_free(&d);
}

/* -------------------------------------------------------------------- arc */

/* ARC on 4 pages through cases I-IV and REPLACE, p tracked exactly. */
static void test_arc_example(void) {
  driver d;
  driver_init(&d, "arc", 4, 4, 32);
  CHECK(strcmp(hs_policy_spec(d.p), "arc") == 0);
  CHECK_EQ(hs_policy_flags(d.p), 0);

  /* 1-4: case IV on a cache that is not full: T1 [4 3 2 1]. */
  for (uint32_t k = 1; k <= 4; k++) CHECK(!acc(&d, k));
  RESIDENT(&d, 1, 2, 3, 4);
  for (uint32_t k = 1; k <= 4; k++) CHECK_EQ(driver_standing(&d, k), 1);
  GHOSTS(&d, 0);
  ARC_P(&d, 0);
  /* 5: IV-A (|T1| + |B1| = 4 = c) with |T1| = c: T1's LRU 1 leaves and is
   * not remembered. T1 [5 4 3 2]. */
  CHECK(!acc(&d, 5));
  RESIDENT(&d, 2, 3, 4, 5);
  GHOSTS(&d, 0);
  /* 1: a complete miss again (not in B1), into T1; 2 leaves the same way. */
  CHECK(!acc(&d, 1));
  RESIDENT(&d, 1, 3, 4, 5);
  CHECK_EQ(driver_standing(&d, 1), 1);
  GHOSTS(&d, 0);
  /* 3, 4: case I: to T2's MRU end. T1 [1 5], T2 [4 3]. */
  CHECK(acc(&d, 3));
  CHECK(acc(&d, 4));
  CHECK_EQ(driver_standing(&d, 3), 2);
  CHECK_EQ(driver_standing(&d, 4), 2);
  CHECK_EQ(driver_standing(&d, 5), 1);
  /* 6: IV-B (|L1| = 2 < c, total 4 < 2c). REPLACE, p = 0: |T1| = 2 > p, so
   * T1's LRU 5 goes to B1 [5]. T1 [6 1]. */
  CHECK(!acc(&d, 6));
  RESIDENT(&d, 1, 3, 4, 6);
  GHOSTS(&d, 1);
  /* 7: IV-B again: 1 to B1 [1 5]. T1 [7 6]. */
  CHECK(!acc(&d, 7));
  RESIDENT(&d, 3, 4, 6, 7);
  GHOSTS(&d, 2);
  /* 5: case II (in B1): p = min(0 + max(|B2|/|B1| = 0/2, 1), 4) = 1.
   * REPLACE: |T1| = 2 > 1: 6 to B1 [6 1]. 5 to T2 [5 4 3]. */
  CHECK(!acc(&d, 5));
  RESIDENT(&d, 3, 4, 5, 7);
  CHECK_EQ(driver_standing(&d, 5), 2);
  ARC_P(&d, 1);
  GHOSTS(&d, 2);
  /* 8: IV-B (|L1| = 3, total 6). REPLACE, p = 1: |T1| = 1 is not > p: T2's
   * LRU 3 to B2 [3] (with p = 0 it would have been 7). T1 [8 7]. */
  CHECK(!acc(&d, 8));
  RESIDENT(&d, 4, 5, 7, 8);
  GHOSTS(&d, 3);
  /* 3: case III (in B2): p = max(1 - max(|B1|/|B2| = 2/1, 1), 0) = 0.
   * REPLACE: |T1| = 2 > 0: 7 to B1 [7 6 1]. 3 to T2 [3 5 4]. T1 [8]. */
  CHECK(!acc(&d, 3));
  RESIDENT(&d, 3, 4, 5, 8);
  CHECK_EQ(driver_standing(&d, 3), 2);
  ARC_P(&d, 0);
  GHOSTS(&d, 3);
  /* 9: IV-A (|T1| + |B1| = 1 + 3 = c) with B1 not empty: B1's LRU 1 is
   * dropped, then REPLACE: 8 to B1 [8 7 6]. T1 [9]. */
  CHECK(!acc(&d, 9));
  RESIDENT(&d, 3, 4, 5, 9);
  GHOSTS(&d, 3);
  /* 1: forgotten, so a complete miss into T1 (not T2). IV-A again: 6
   * dropped, 9 to B1 [9 8 7]. T1 [1]. */
  CHECK(!acc(&d, 1));
  RESIDENT(&d, 1, 3, 4, 5);
  CHECK_EQ(driver_standing(&d, 1), 1);
  ARC_P(&d, 0);
  GHOSTS(&d, 3);
  /* 7: case II: p = 0 + max(0/3, 1) = 1. REPLACE: |T1| = 1 is not > 1:
   * T2's LRU 4 to B2 [4]. 7 to T2 [7 3 5]. B1 [9 8]. */
  CHECK(!acc(&d, 7));
  RESIDENT(&d, 1, 3, 5, 7);
  CHECK_EQ(driver_standing(&d, 7), 2);
  ARC_P(&d, 1);
  GHOSTS(&d, 3);
  /* 10: IV-B (|L1| = 3, total 7). REPLACE: |T1| = p, but 10 is not from
   * B2: T2's LRU 5 to B2 [5 4]. T1 [10 1]. */
  CHECK(!acc(&d, 10));
  RESIDENT(&d, 1, 3, 7, 10);
  GHOSTS(&d, 4);
  /* 10: case I: T2 [10 7 3], T1 [1]. */
  CHECK(acc(&d, 10));
  CHECK_EQ(driver_standing(&d, 10), 2);
  /* 11: IV-B with total = 1 + 3 + 2 + 2 = 2c: B2's LRU 4 is dropped;
   * REPLACE: T2's LRU 3 to B2 [3 5]. T1 [11 1]. */
  CHECK(!acc(&d, 11));
  RESIDENT(&d, 1, 7, 10, 11);
  GHOSTS(&d, 4);
  /* 8: case II: p = 1 + max(|B2|/|B1| = 2/2, 1) = 2. REPLACE: |T1| = 2 is
   * not > 2: T2's LRU 7 to B2 [7 3 5]. 8 to T2 [8 10]. B1 [9]. */
  CHECK(!acc(&d, 8));
  RESIDENT(&d, 1, 8, 10, 11);
  ARC_P(&d, 2);
  GHOSTS(&d, 4);
  /* 11: case I: T1 [1], T2 [11 8 10]. */
  CHECK(acc(&d, 11));
  /* 3: case III: p = 2 - max(|B1|/|B2| = 1/3, 1) = 1. REPLACE: |T1| = 1 = p
   * and x came from B2: T1's LRU 1 to B1 [1 9] (not T2's 10). */
  CHECK(!acc(&d, 3));
  RESIDENT(&d, 3, 8, 10, 11);
  CHECK_EQ(driver_standing(&d, 3), 2);
  ARC_P(&d, 1);
  GHOSTS(&d, 4);
  CHECK_EQ(d.violations, 0);
  driver_free(&d);
}

/* The adaptation of p on a crafted sequence, 5 pages: a B1 hit with
 * |B2|/|B1| = 3/2 raises p by 1.5; one with |B2|/|B1| = 4 stops at the
 * ceiling c; B1 hits with |B2| < |B1| raise it by 1; B2 hits with
 * |B1| < |B2| lower it by 1, with |B1|/|B2| = 3/2 by 1.5 (down to the floor
 * 0 from 1, to 0.5 from 2). */
static void test_arc_adaptation(void) {
  driver d;
  driver_init(&d, "arc", 5, 5, 32);
  /* 1-5 into T1, then hit: T2 [5 4 3 2 1]. */
  for (uint32_t k = 1; k <= 5; k++) CHECK(!acc(&d, k));
  for (uint32_t k = 1; k <= 5; k++) CHECK(acc(&d, k));
  /* 6: REPLACE with T1 empty: T2's LRU 1 to B2 [1]. T1 [6], hit: T2. */
  CHECK(!acc(&d, 6));
  CHECK(acc(&d, 6));
  /* 7, hit; 8: T2's LRU 2, then 3 to B2 [3 2 1]. T1 [8]. */
  CHECK(!acc(&d, 7));
  CHECK(acc(&d, 7));
  CHECK(!acc(&d, 8));
  RESIDENT(&d, 4, 5, 6, 7, 8);
  GHOSTS(&d, 3);
  /* 9, 10: |T1| = 1 > p = 0: 8, then 9 to B1 [9 8]. T1 [10],
   * T2 [7 6 5 4]. */
  CHECK(!acc(&d, 9));
  CHECK(!acc(&d, 10));
  RESIDENT(&d, 4, 5, 6, 7, 10);
  GHOSTS(&d, 5);
  ARC_P(&d, 0);
  /* 8 in B1: p = 0 + max(3/2, 1) = 1.5. REPLACE: |T1| = 1 < 1.5: T2's LRU
   * 4 to B2 [4 3 2 1]. T2 [8 7 6 5], B1 [9]. */
  CHECK(!acc(&d, 8));
  ARC_P(&d, 1.5);
  RESIDENT(&d, 5, 6, 7, 8, 10);
  /* 9 in B1: p = min(1.5 + max(4/1, 1), 5) = 5. REPLACE: T2's LRU 5 to B2
   * [5 4 3 2 1]. T2 [9 8 7 6], T1 [10], B1 []. */
  CHECK(!acc(&d, 9));
  ARC_P(&d, 5);
  RESIDENT(&d, 6, 7, 8, 9, 10);
  GHOSTS(&d, 5);
  /* 3 in B2: p = 5 - max(0/5, 1) = 4. REPLACE: |T1| = 1 <= 4: T2's LRU 6
   * to B2 [6 5 4 2 1]. T2 [3 9 8 7]. */
  CHECK(!acc(&d, 3));
  ARC_P(&d, 4);
  RESIDENT(&d, 3, 7, 8, 9, 10);
  /* 2 in B2: p = 4 - max(0/5, 1) = 3. REPLACE: |T1| = 1: T2's LRU 7 to B2
   * [7 6 5 4 1]. T2 [2 3 9 8]. */
  CHECK(!acc(&d, 2));
  ARC_P(&d, 3);
  RESIDENT(&d, 2, 3, 8, 9, 10);
  /* 11, 12: IV-B with total = 2c: B2's LRU (1, then 4) dropped, and
   * REPLACE takes T2's LRU while |T1| <= 3: 8, then 9 to B2 [9 8 7 6 5].
   * T1 [12 11 10], T2 [2 3]. */
  CHECK(!acc(&d, 11));
  CHECK(!acc(&d, 12));
  RESIDENT(&d, 2, 3, 10, 11, 12);
  GHOSTS(&d, 5);
  /* 13: B2's LRU 5 dropped; |T1| = 3 is not > 3: T2's LRU 3 to B2
   * [3 9 8 7 6]. T1 [13 12 11 10], T2 [2]. */
  CHECK(!acc(&d, 13));
  RESIDENT(&d, 2, 10, 11, 12, 13);
  /* 14: B2's LRU 6 dropped; |T1| = 4 > 3: T1's LRU 10 to B1 [10].
   * T1 [14 13 12 11]. */
  CHECK(!acc(&d, 14));
  RESIDENT(&d, 2, 11, 12, 13, 14);
  /* 15: IV-A (|T1| + |B1| = 4 + 1 = c): B1's LRU 10 dropped; REPLACE:
   * |T1| = 4 > 3: 11 to B1 [11]. T1 [15 14 13 12], B2 [3 9 8 7]. */
  CHECK(!acc(&d, 15));
  RESIDENT(&d, 2, 12, 13, 14, 15);
  GHOSTS(&d, 5);
  /* 9 in B2: |B1|/|B2| = 1/4: p = 3 - 1 = 2. REPLACE: |T1| = 4 > 2: 12 to
   * B1 [12 11]. T2 [9 2], B2 [3 8 7], T1 [15 14 13]. */
  CHECK(!acc(&d, 9));
  ARC_P(&d, 2);
  RESIDENT(&d, 2, 9, 13, 14, 15);
  /* 3 in B2: |B1|/|B2| = 2/3: p = 2 - 1 = 1. REPLACE: |T1| = 3 > 1: 13 to
   * B1 [13 12 11]. T2 [3 9 2], B2 [8 7], T1 [15 14]. */
  CHECK(!acc(&d, 3));
  ARC_P(&d, 1);
  RESIDENT(&d, 2, 3, 9, 14, 15);
  /* 7 in B2: |B1|/|B2| = 3/2: p = max(1 - 1.5, 0) = 0. REPLACE: 14 to B1
   * [14 13 12 11]. T2 [7 3 9 2], B2 [8], T1 [15]. */
  CHECK(!acc(&d, 7));
  ARC_P(&d, 0);
  RESIDENT(&d, 2, 3, 7, 9, 15);
  /* 8 in B2: |B1|/|B2| = 4: p stays 0. REPLACE: 15 to B1 [15 14 13 12 11].
   * T2 [8 7 3 9 2], T1 and B2 empty. */
  CHECK(!acc(&d, 8));
  ARC_P(&d, 0);
  RESIDENT(&d, 2, 3, 7, 8, 9);
  GHOSTS(&d, 5);
  /* 14 in B1: p = 0 + max(0/5, 1) = 1. REPLACE: T1 empty: T2's LRU 2 to B2
   * [2]. T2 [14 8 7 3 9], B1 [15 13 12 11]. */
  CHECK(!acc(&d, 14));
  ARC_P(&d, 1);
  RESIDENT(&d, 3, 7, 8, 9, 14);
  /* 13 in B1: p = 1 + max(1/4, 1) = 2. REPLACE: T2's LRU 9 to B2 [9 2].
   * T2 [13 14 8 7 3], B1 [15 12 11]. */
  CHECK(!acc(&d, 13));
  ARC_P(&d, 2);
  RESIDENT(&d, 3, 7, 8, 13, 14);
  /* 2 in B2: |B1|/|B2| = 3/2: p = 2 - 1.5 = 0.5. REPLACE: T1 empty: T2's
   * LRU 3 to B2 [3 9]. T2 [2 13 14 8 7]. */
  CHECK(!acc(&d, 2));
  ARC_P(&d, 0.5);
  RESIDENT(&d, 2, 7, 8, 13, 14);
  CHECK_EQ(driver_standing(&d, 2), 2);
  GHOSTS(&d, 5);
  CHECK_EQ(d.violations, 0);
  driver_free(&d);
}

/* Byte mode as libCacheSim's ARC: c = 10 units; case IV tests
 * |T1| + |B1| + size(x) > c, each eviction round re-evaluates it. */
static void test_arc_bytes(void) {
  driver d;
  driver_init(&d, "arc", 10, 8, 32);
  /* a(4) b(4): T1 [b a], 8 units. */
  CHECK(!acc_size(&d, 1, 4));
  CHECK(!acc_size(&d, 2, 4));
  /* c(4): 8 + 4 > 10. T1 + B1 + 4 = 12 > 10 and B1 empty: T1's LRU a
   * leaves unremembered; 4 + 4 fits. */
  CHECK(!acc_size(&d, 3, 4));
  RESIDENT(&d, 2, 3);
  GHOSTS(&d, 0);
  /* b: case I, T2 [b]. */
  CHECK(acc_size(&d, 2, 4));
  /* d(6): 8 + 6 > 10. T1 + B1 + 6 = 10, not > c: IV-B (total 8 < 20),
   * REPLACE: |T1| = 4 > 0: c to B1 [c]. 4 + 6 fits. T1 [d]. */
  CHECK(!acc_size(&d, 4, 6));
  RESIDENT(&d, 2, 4);
  GHOSTS(&d, 1);
  /* e(3): 10 + 3 > 10. T1 + B1 + 3 = 13 > 10, B1 not empty: c dropped,
   * REPLACE: d to B1 [d]. T1 [e]. */
  CHECK(!acc_size(&d, 5, 3));
  RESIDENT(&d, 2, 5);
  GHOSTS(&d, 1);
  /* f(5): 7 + 5 > 10. 3 + 6 + 5 > 10: d dropped, e to B1 [e]. T1 [f]. */
  CHECK(!acc_size(&d, 6, 5));
  RESIDENT(&d, 2, 6);
  GHOSTS(&d, 1);
  /* e(3) in B1: p = 0 + max(0/3, 1) = 1; 9 + 3 > 10: REPLACE: |T1| = 5 > 1:
   * f to B1 [f]. e to T2 [e b]. */
  CHECK(!acc_size(&d, 5, 3));
  RESIDENT(&d, 2, 5);
  CHECK_EQ(driver_standing(&d, 5), 2);
  ARC_P(&d, 1);
  GHOSTS(&d, 1);
  /* g(8): 7 + 8 > 10. Round 1: 0 + 5 + 8 > 10: f dropped; REPLACE: T1
   * empty: T2's LRU b to B2 [b]. 3 + 8 > 10. Round 2: 0 + 0 + 8 <= 10:
   * IV-B (total 7 < 20): REPLACE: e to B2 [e b]. T1 [g]. */
  CHECK(!acc_size(&d, 7, 8));
  RESIDENT(&d, 7);
  GHOSTS(&d, 2);
  /* b(4) in B2: p = max(1 - max(0/7, 1), 0) = 0; 8 + 4 > 10: REPLACE:
   * |T1| = 8 > 0: g to B1 [g]. b to T2. B2 [e]. */
  CHECK(!acc_size(&d, 2, 4));
  RESIDENT(&d, 2);
  CHECK_EQ(driver_standing(&d, 2), 2);
  ARC_P(&d, 0);
  GHOSTS(&d, 2);
  CHECK_EQ(d.violations, 0);
  driver_free(&d);
}

/* -------------------------------------------------------------------- car */

/* CAR on 4 pages. T1 and T2 are written hand first; a set bit is marked
 * with '. */
static void test_car_example(void) {
  driver d;
  driver_init(&d, "car", 4, 4, 32);
  CHECK(strcmp(hs_policy_spec(d.p), "car") == 0);
  CHECK_EQ(hs_policy_flags(d.p), HS_POLICY_CONCURRENT_HIT);

  /* 1-4: the cache is not full: T1 (1 2 3 4), bits clear. */
  for (uint32_t k = 1; k <= 4; k++) CHECK(!acc(&d, k));
  RESIDENT(&d, 1, 2, 3, 4);
  for (uint32_t k = 1; k <= 4; k++) CHECK_EQ(driver_standing(&d, k), 1);
  /* 1, 2: hits set the bits: T1 (1' 2' 3 4). */
  CHECK(acc(&d, 1));
  CHECK(acc(&d, 2));
  CHECK_EQ(driver_standing(&d, 1), 2);
  CHECK_EQ(driver_standing(&d, 3), 1);
  /* 5: replace(), p = 0: |T1| = 4 >= max(1, p): 1' is cleared and moved to
   * T2's tail, likewise 2'; 3 has a clear bit: demoted to B1 [3]. The
   * directory: |T1| + |B1| = 2, total 4: nothing discarded. 5 to T1's
   * tail: T1 (4 5), T2 (1 2). */
  CHECK(!acc(&d, 5));
  RESIDENT(&d, 1, 2, 4, 5);
  CHECK_EQ(driver_standing(&d, 1), 3);
  CHECK_EQ(driver_standing(&d, 2), 3);
  CHECK_EQ(driver_standing(&d, 4), 1);
  GHOSTS(&d, 1);
  CAR_P(&d, 0);
  /* 3 (in B1): replace(): T1's hand 4 is clear: demoted, B1 [4 3]. Then
   * p = min(0 + max(1, |B2|/|B1| = 0/2), 4) = 1 — adapted after replace();
   * 3 to T2's tail, bit clear: T1 (5), T2 (1 2 3), B1 [4]. */
  CHECK(!acc(&d, 3));
  RESIDENT(&d, 1, 2, 3, 5);
  CHECK_EQ(driver_standing(&d, 3), 3);
  CAR_P(&d, 1);
  GHOSTS(&d, 1);
  /* 6: |T1| = 1 >= max(1, 1): 5 demoted, B1 [5 4]. Directory: |T1| + |B1|
   * = 2, total 5: nothing. T1 (6). */
  CHECK(!acc(&d, 6));
  RESIDENT(&d, 1, 2, 3, 6);
  GHOSTS(&d, 2);
  /* 6, 1: bits set. T1 (6'), T2 (1' 2 3). */
  CHECK(acc(&d, 6));
  CHECK(acc(&d, 1));
  CHECK_EQ(driver_standing(&d, 6), 2);
  CHECK_EQ(driver_standing(&d, 1), 4);
  /* 7: |T1| = 1 >= 1: 6' cleared, to T2's tail: T2 (1' 2 3 6). |T1| = 0 <
   * 1: T2's hand 1' cleared, to the tail: (2 3 6 1); 2 clear: demoted, B2
   * [2]. Directory: |T1| + |B1| = 2, total 6: nothing. T1 (7). */
  CHECK(!acc(&d, 7));
  RESIDENT(&d, 1, 3, 6, 7);
  CHECK_EQ(driver_standing(&d, 6), 3);
  CHECK_EQ(driver_standing(&d, 1), 3);
  GHOSTS(&d, 3);
  /* 2 (in B2): replace(): |T1| = 1 >= 1: 7 demoted, B1 [7 5 4]. p = max(1 -
   * max(1, |B1|/|B2| = 3/1), 0) = 0. 2 to T2's tail: T2 (3 6 1 2), T1 (). */
  CHECK(!acc(&d, 2));
  RESIDENT(&d, 1, 2, 3, 6);
  CHECK_EQ(driver_standing(&d, 2), 3);
  CAR_P(&d, 0);
  GHOSTS(&d, 3);
  /* 8: |T1| = 0 < max(1, 0): T2's hand 3 is clear: demoted, B2 [3].
   * Directory: |T1| + |B1| = 3, total 7: nothing. T1 (8). */
  CHECK(!acc(&d, 8));
  RESIDENT(&d, 1, 2, 6, 8);
  GHOSTS(&d, 4);
  /* 9: |T1| = 1 >= 1: 8 demoted, B1 [8 7 5 4]; |T1| + |B1| = 4 = c: B1's
   * LRU 4 discarded. T1 (9). */
  CHECK(!acc(&d, 9));
  RESIDENT(&d, 1, 2, 6, 9);
  GHOSTS(&d, 4);
  /* 4: forgotten: a new page, into T1 (standing 1). 9 demoted, B1
   * [9 8 7 5] = c with |T1| = 0: 5 discarded. */
  CHECK(!acc(&d, 4));
  RESIDENT(&d, 1, 2, 4, 6);
  CHECK_EQ(driver_standing(&d, 4), 1);
  GHOSTS(&d, 4);
  /* 7 (in B1 [9 8 7]): 4 demoted, B1 [4 9 8 7]; p = min(0 + max(1, |B2|/
   * |B1| = 1/4), 4) = 1. 7 to T2 (6 1 2 7). */
  CHECK(!acc(&d, 7));
  RESIDENT(&d, 1, 2, 6, 7);
  CHECK_EQ(driver_standing(&d, 7), 3);
  CAR_P(&d, 1);
  GHOSTS(&d, 4);
  /* 10: T1 empty: T2's hand 6 demoted, B2 [6 3]. Directory: |T1| + |B1| =
   * 3, total 3 + 3 + 2 = 8 = 2c: B2's LRU 3 discarded. T1 (10). */
  CHECK(!acc(&d, 10));
  RESIDENT(&d, 1, 2, 7, 10);
  GHOSTS(&d, 4);
  /* 3: forgotten: into T1. */
  CHECK(!acc(&d, 3));
  CHECK_EQ(driver_standing(&d, 3), 1);
  CHECK_EQ(d.violations, 0);
  driver_free(&d);
}

/* ------------------------------------------------------ pins, ring, specs */

static void test_pins(const char *spec) {
  {
    driver d;
    driver_init(&d, spec, 4, 4, 32);
    for (uint32_t k = 1; k <= 4; k++) CHECK(!acc(&d, k));
    /* 1 would be the victim (A1in's tail / T1's LRU / T1's hand). */
    d.pinned[d.slot_of[1]] = true;
    CHECK(!acc(&d, 5));
    RESIDENT(&d, 1, 3, 4, 5);
    /* All pinned: no victim. */
    for (uint32_t s = 0; s < 4; s++) d.pinned[s] = true;
    hs_access a = {.key = 6, .size = 1, .now = 100};
    CHECK_EQ(hs_policy_victim(d.p, &a, driver_is_pinned, &d), -1);
    /* Only 4 unpinned: it is found whatever the lists say. */
    d.pinned[d.slot_of[4]] = false;
    CHECK_EQ(hs_policy_victim(d.p, &a, driver_is_pinned, &d), d.slot_of[4]);
    CHECK_EQ(d.violations, 0);
    driver_free(&d);
  }
}

static void test_arc_ring_hints(void) {
  /* arc: a ring hit leaves 1 in T1 (and at its LRU end); a ring miss on a
   * key in B1 is a complete miss: T1, p unchanged, its ghost forgotten. */
  driver d;
  driver_init(&d, "arc", 4, 4, 32);
  for (uint32_t k = 1; k <= 4; k++) CHECK(!acc(&d, k));
  CHECK(acc_ring(&d, 1));
  CHECK_EQ(driver_standing(&d, 1), 1);
  CHECK(acc(&d, 2));  /* T2 [2], T1 [4 3 1] */
  CHECK(!acc(&d, 5)); /* IV-B: 1 (still T1's LRU) to B1 */
  RESIDENT(&d, 2, 3, 4, 5);
  GHOSTS(&d, 1);
  /* 1 under a ring: IV-A (|T1| + |B1| = 4): B1's LRU (1 itself) dropped,
   * 3 to B1; 1 into T1. */
  CHECK(!acc_ring(&d, 1));
  RESIDENT(&d, 1, 2, 4, 5);
  CHECK_EQ(driver_standing(&d, 1), 1);
  ARC_P(&d, 0);
  GHOSTS(&d, 1);
  driver_free(&d);
}

static void test_2q_ring_hints(void) {
  /* 2q: a key in A1out under a ring comes back to A1in, forgotten. */
  driver d;
  driver_init(&d, "2q", 4, 4, 32);
  for (uint32_t k = 1; k <= 5; k++) CHECK(!acc(&d, k)); /* A1out [1] */
  CHECK(!acc_ring(&d, 1));                              /* 2 out: A1out [2] */
  CHECK_EQ(driver_standing(&d, 1), 1);
  GHOSTS(&d, 1);
  CHECK(!acc(&d, 2)); /* 3 out: A1out [3]; 2 into Am */
  CHECK_EQ(driver_standing(&d, 2), 2);
  /* A ring hit on Am does not move the entry: Am [3 2], 2 stays LRU. */
  CHECK(!acc(&d, 3)); /* 4 out: A1out [4]; Am [3 2], A1in [1 5] */
  CHECK(acc_ring(&d, 2));
  CHECK(!acc(&d, 4)); /* 5 out: A1out [5]; Am [4 3 2], A1in [1] */
  CHECK(!acc(&d, 6)); /* |A1in| = Kin: Am's LRU goes, 2 */
  RESIDENT(&d, 1, 3, 4, 6);
  driver_free(&d);
}

static void test_car_ring_hints(void) {
  /* car: a ring hit does not set the bit. */
  driver d;
  driver_init(&d, "car", 4, 4, 32);
  CHECK(!acc(&d, 1));
  CHECK(acc_ring(&d, 1));
  CHECK_EQ(driver_standing(&d, 1), 1);
  CHECK(acc(&d, 1));
  CHECK_EQ(driver_standing(&d, 1), 2);
  driver_free(&d);
}

static void test_2q_specs(void) {
  hs_policy *p = NULL;
  CHECK_OK(hs_policy_create("2q:in=0.5,out=1", 10, 10, NULL, &p));
  CHECK(strcmp(hs_policy_spec(p), "2q:in=0.5,out=1") == 0);
  CHECK(hs_policy_arc_target(p) == -1);
  hs_policy_destroy(p);
  CHECK_ST(hs_policy_create("2q:in=1.5", 10, 10, NULL, &p), HS_ERR_INVALID);
  CHECK_ST(hs_policy_create("2q:out=-1", 10, 10, NULL, &p), HS_ERR_INVALID);
  /* 2q with no A1out at all (out=0): A1in's victims are not remembered. */
  driver d;
  driver_init(&d, "2q:out=0", 4, 4, 32);
  for (uint32_t k = 1; k <= 5; k++) CHECK(!acc(&d, k));
  GHOSTS(&d, 0);
  CHECK(!acc(&d, 1));
  CHECK_EQ(driver_standing(&d, 1), 1);
  driver_free(&d);
}

static void test_arc_specs(void) {
  hs_policy *p = NULL;
  CHECK_ST(hs_policy_create("arc:p=1", 10, 10, NULL, &p), HS_ERR_INVALID);
}

static void test_car_specs(void) {
  hs_policy *p = NULL;
  CHECK_ST(hs_policy_create("car:x=1", 10, 10, NULL, &p), HS_ERR_INVALID);
}

/* ---------------------------------------------- the pool's interleaving */

/* Evicts slot v and puts the entry of `a` in it (the pool reuses the
 * victim's buffer); false if the policy misbehaves. */
static bool replace_in(driver *d, int64_t v, const hs_access *a) {
  if (v < 0 || d->key_of[v] < 0) return false;
  hs_policy_evict(d->p, (uint32_t)v);
  d->slot_of[d->key_of[v]] = -1;
  if (hs_policy_insert(d->p, (uint32_t)v, a) != HS_OK) return false;
  d->key_of[v] = (int64_t)a->key;
  d->slot_of[a->key] = v;
  return true;
}

/* Two misses served as the pool serves them when two threads interleave:
 * victim(A) (A pins it), victim(B), then evict + insert for A, then for B.
 * The policies stay within their bounds: ghosts (and so memory) do not grow
 * past what a serialized run needs. */
static void test_interleaved_misses(const char *spec) {
  {
    enum { C = 50, NKEYS = 400 };
    driver d;
    driver_init(&d, spec, C, C, NKEYS);
    for (uint32_t k = 0; k < C; k++) CHECK(!acc(&d, k));
    size_t mem = hs_policy_memory(d.p);
    uint64_t r = 99, max_ghosts = 0, failures = 0;
    for (uint64_t n = 0; n < 20000; n++) {
      uint32_t ka = (uint32_t)(test_rand(&r) % (n % 2 ? 2 * C : NKEYS));
      uint32_t kb = (uint32_t)(test_rand(&r) % (n % 3 ? 2 * C : NKEYS));
      hs_access a = {.key = ka, .size = 1, .now = 2 * n, .next = HS_NEXT_UNKNOWN};
      hs_access b = {.key = kb, .size = 1, .now = 2 * n + 1, .next = HS_NEXT_UNKNOWN};
      if (ka == kb || d.slot_of[ka] >= 0 || d.slot_of[kb] >= 0) {
        acc(&d, ka);
        acc(&d, kb);
        continue;
      }
      int64_t va = hs_policy_victim(d.p, &a, driver_is_pinned, &d);
      if (va < 0) {
        failures++;
        break;
      }
      d.pinned[va] = true;
      int64_t vb = hs_policy_victim(d.p, &b, driver_is_pinned, &d);
      d.pinned[va] = false;
      if (vb == va || !replace_in(&d, va, &a) || !replace_in(&d, vb, &b)) {
        fprintf(stderr, "%s: interleaved misses failed at %llu\n", spec, (unsigned long long)n);
        failures++;
        break;
      }
      uint64_t g = hs_policy_ghosts(d.p);
      if (g > max_ghosts) max_ghosts = g;
    }
    CHECK_EQ(failures, 0);
    CHECK(max_ghosts <= C);
    CHECK_EQ(hs_policy_memory(d.p), mem);
    CHECK_EQ(hs_policy_resident(d.p), C);
    CHECK_EQ(d.violations, 0);
    driver_free(&d);
  }
}

/* A returning key keeps what victim() found out about it when another
 * miss's evict + insert comes between its victim() and its own. */
static void test_2q_interleaved_example(void) {
  /* 2q on 4 pages: 1-5 leave A1out [1], A1in [5 4 3 2]. */
  driver d;
  driver_init(&d, "2q", 4, 4, 32);
  for (uint32_t k = 1; k <= 5; k++) CHECK(!acc(&d, k));
  hs_access a = {.key = 6, .size = 1, .now = 100}, b = {.key = 1, .size = 1, .now = 101};
  int64_t va = hs_policy_victim(d.p, &a, driver_is_pinned, &d);
  CHECK_EQ(va, d.slot_of[2]);
  d.pinned[va] = true;
  int64_t vb = hs_policy_victim(d.p, &b, driver_is_pinned, &d);
  CHECK_EQ(vb, d.slot_of[3]);
  d.pinned[va] = false;
  /* A's eviction finds 1 in A1out (B's lookup) and A1out becomes [2]. */
  CHECK(replace_in(&d, va, &a));
  CHECK_EQ(driver_standing(&d, 6), 1);
  CHECK(replace_in(&d, vb, &b)); /* 3 out: A1out [3 2] */
  CHECK_EQ(driver_standing(&d, 1), 2);
  RESIDENT(&d, 1, 4, 5, 6);
  GHOSTS(&d, 2);
  driver_free(&d);
}

static void test_arc_interleaved_example(void) {
  /* arc on 4 pages: T1 [5 3 2], T2 [4], B1 [1]. */
  driver d;
  driver_init(&d, "arc", 4, 4, 32);
  for (uint32_t k = 1; k <= 4; k++) CHECK(!acc(&d, k));
  CHECK(acc(&d, 4));
  CHECK(!acc(&d, 5));
  RESIDENT(&d, 2, 3, 4, 5);
  /* A = 6 (IV-A: REPLACE takes T1's LRU 2); B = 1 (case II: p would be 1,
   * REPLACE takes T1's LRU past the pinned 2: 3). */
  hs_access a = {.key = 6, .size = 1, .now = 100}, b = {.key = 1, .size = 1, .now = 101};
  int64_t va = hs_policy_victim(d.p, &a, driver_is_pinned, &d);
  CHECK_EQ(va, d.slot_of[2]);
  d.pinned[va] = true;
  int64_t vb = hs_policy_victim(d.p, &b, driver_is_pinned, &d);
  CHECK_EQ(vb, d.slot_of[3]);
  d.pinned[va] = false;
  /* 6 goes in under B's plan, then |T1| + |B1| = 3 + 2 > c: B1's LRU (1)
   * goes to restore the bound. 1 still comes back as case II: T2, p = 1. */
  CHECK(replace_in(&d, va, &a));
  CHECK(replace_in(&d, vb, &b));
  CHECK_EQ(driver_standing(&d, 6), 1);
  CHECK_EQ(driver_standing(&d, 1), 2);
  ARC_P(&d, 1);
  RESIDENT(&d, 1, 4, 5, 6);
  GHOSTS(&d, 2); /* B1 [3 2]: |T1| + |B1| = 4 */
  driver_free(&d);
}

/* ------------------------------------------------- CAR's lock-free hits */

/* Hits on CAR from other threads, without a lock, while this thread misses
 * (victim/evict/insert): run under ThreadSanitizer in CI. */
static void test_car_concurrent_hits(void) {
  enum { NSLOTS = 64, NKEYS = 1000, NREQS = 50000, NTHREADS = 3 };
  driver d;
  driver_init(&d, "car", NSLOTS, NSLOTS, NKEYS);
  driver_race_hits(&d, NTHREADS, NREQS);
  CHECK_EQ(d.violations, 0);
  CHECK_EQ(hs_policy_resident(d.p), NSLOTS);
  CHECK(hs_policy_ghosts(d.p) <= NSLOTS + 1);
  driver_free(&d);
}

const policy_section twoq_arc_car_sections[] = {
    SECTION_ONE("2q", test_2q_example),
    SECTION_ONE("2q", test_2q_bytes),
    SECTION_ONE("arc", test_arc_example),
    SECTION_ONE("arc", test_arc_adaptation),
    SECTION_ONE("arc", test_arc_bytes),
    SECTION_ONE("car", test_car_example),
    SECTION_ONE_FOR("2q", test_pins),
    SECTION_ONE_FOR("arc", test_pins),
    SECTION_ONE_FOR("car", test_pins),
    SECTION_ONE("arc", test_arc_ring_hints),
    SECTION_ONE("2q", test_2q_ring_hints),
    SECTION_ONE("car", test_car_ring_hints),
    SECTION_ONE("2q", test_2q_specs),
    SECTION_ONE("arc", test_arc_specs),
    SECTION_ONE("car", test_car_specs),
    SECTION_ONE_FOR("2q", test_interleaved_misses),
    SECTION_ONE_FOR("arc", test_interleaved_misses),
    SECTION_ONE_FOR("car", test_interleaved_misses),
    SECTION_ONE("2q", test_2q_interleaved_example),
    SECTION_ONE("arc", test_arc_interleaved_example),
    SECTION_ONE_THREADS("car", test_car_concurrent_hits),
    SECTIONS_END,
};
