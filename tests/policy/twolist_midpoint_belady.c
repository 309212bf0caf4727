/*
 * tests/policy/twolist_midpoint_belady.c — hand-worked examples for twolist
 * (the Linux active/inactive lists, sized from the caller's bytes per
 * unit), midpoint (InnoDB's midpoint-insertion LRU) and belady (MIN), plus
 * belady against a slow reference written here from its definition on
 * random traces, in object and byte mode.
 *
 * Each example states the lists after every step, head first; the checks
 * read them back through residency and hs_policy_standing:
 *   twolist:  0 inactive, 1 inactive + referenced, 2 active, 3 active + ref.
 *   midpoint: 0 old sublist, 1 young sublist.
 *   belady:   0 never accessed again, 1 accessed again.
 */
#include "policy_driver.h"
#include "policy_sections.h"

#define R HS_ACCESS_READ
#define W HS_ACCESS_WRITE

/* ---------------------------------------------------------------- twolist */

/* mm/swap.c mark_page_accessed, mm/vmscan.c inactive_list_is_low and
 * shrink_active_list, mm/workingset.c, on a 4-page cache of 8 KiB pages
 * (32 KiB < 1 GiB: inactive_ratio 1, so active <= inactive at each
 * eviction). `age` is the nonresident age, shadows are key(age). */
static void test_twolist_example(void) {
  driver d;
  driver_init(&d, "twolist", 4, 4, 100);
  CHECK(strcmp(hs_policy_spec(d.p), "twolist:page=8192,shadows=1") == 0);
  CHECK(hs_policy_flags(d.p) == 0);

  /* 1: read 1, a miss: inactive [1R]. */
  CHECK(!driver_access(&d, 1, 1, 0, R));
  CHECK_EQ(driver_standing(&d, 1), 1);
  /* 2: read 1 again on the inactive list: promoted. active [1], age 1. */
  CHECK(driver_access(&d, 1, 1, 0, R));
  CHECK_EQ(driver_standing(&d, 1), 2);
  /* 3-5: read 2, 3, 4: inactive [4R 3R 2R]; the cache is full. */
  CHECK(!driver_access(&d, 2, 1, 0, R));
  CHECK(!driver_access(&d, 3, 1, 0, R));
  CHECK(!driver_access(&d, 4, 1, 0, R));
  CHECK_EQ(driver_standing(&d, 2), 1);
  CHECK_EQ(driver_standing(&d, 4), 1);
  /* 6-7: read 2, 3: active [3 2 1], inactive [4R], age 3. Hits never
   * rebalance: only reclaim does. */
  CHECK(driver_access(&d, 2, 1, 0, R));
  CHECK(driver_access(&d, 3, 1, 0, R));
  CHECK_EQ(driver_standing(&d, 2), 2);
  CHECK_EQ(driver_standing(&d, 3), 2);
  /* 8: read 5, a miss. Reclaim first balances: inactive 1 * 1 < active 3,
   * so the active tail 1 is demoted (active [3 2], inactive [1 4R]; 2 * 1 >=
   * 2 stops), then evicts the inactive tail 4 (age 4, shadow 4(4)). 5 comes
   * in: inactive [5R 1]. */
  CHECK(!driver_access(&d, 5, 1, 0, R));
  RESIDENT(&d, 1, 2, 3, 5);
  CHECK_EQ(driver_standing(&d, 1), 0);
  CHECK_EQ(driver_standing(&d, 2), 2);
  CHECK_EQ(driver_standing(&d, 3), 2);
  CHECK_EQ(driver_standing(&d, 5), 1);
  CHECK_EQ(hs_policy_ghosts(d.p), 1);
  /* 9: read 1: its first access since the demotion only references it. */
  CHECK(driver_access(&d, 1, 1, 0, R));
  CHECK_EQ(driver_standing(&d, 1), 1);
  /* 10: read 2 on the active list: active, referenced. */
  CHECK(driver_access(&d, 2, 1, 0, R));
  CHECK_EQ(driver_standing(&d, 2), 3);
  /* 11: write 6, a miss. Balanced (2 vs 2); the inactive tail 1 is evicted
   * although referenced (PAGEREF_RECLAIM_CLEAN): age 5, shadow 1(5). A write
   * does not mark the page accessed: inactive [6 5R]. */
  CHECK(!driver_access(&d, 6, 1, 0, W));
  RESIDENT(&d, 2, 3, 5, 6);
  CHECK_EQ(driver_standing(&d, 6), 0);
  /* 12-13: two more writes to 6: still unreferenced, never promoted. */
  CHECK(driver_access(&d, 6, 1, 0, W));
  CHECK(driver_access(&d, 6, 1, 0, W));
  CHECK_EQ(driver_standing(&d, 6), 0);
  /* 14: read 7: evicts 5 (age 6, shadow 5(6)): inactive [7R 6]. */
  CHECK(!driver_access(&d, 7, 1, 0, R));
  RESIDENT(&d, 2, 3, 6, 7);
  /* 15: read 1, a refault: 6 is evicted first (age 7, shadow 6(7)); then the
   * refault distance 7 - 5 = 2 <= the active list's 2 pages: 1 goes straight
   * to the active list, referenced by the read (age 8). active [1R 3 2R]. */
  CHECK(!driver_access(&d, 1, 1, 0, R));
  RESIDENT(&d, 1, 2, 3, 7);
  CHECK_EQ(driver_standing(&d, 1), 3);
  CHECK_EQ(hs_policy_ghosts(d.p), 3); /* 4, 5, 6 */
  /* 16: read 4, a refault from further away. Reclaim demotes 2 (inactive 1
   * < active 3), keeping its referenced bit: inactive [2R 7R], active [1R 3];
   * evicts 7 (age 9, shadow 7(9)). Distance 9 - 4 = 5 > 2 active pages: 4
   * starts on the inactive list. inactive [4R 2R]. */
  CHECK(!driver_access(&d, 4, 1, 0, R));
  RESIDENT(&d, 1, 2, 3, 4);
  CHECK_EQ(driver_standing(&d, 4), 1);
  CHECK_EQ(driver_standing(&d, 2), 1);
  CHECK_EQ(driver_standing(&d, 1), 3);
  CHECK_EQ(driver_standing(&d, 3), 2);
  /* 17: read 2: referenced while active, so its first access on the
   * inactive list re-activates it (age 10). active [2 1R 3]. */
  CHECK(driver_access(&d, 2, 1, 0, R));
  CHECK_EQ(driver_standing(&d, 2), 2);
  /* 18: write 7, a refault within reach: reclaim demotes 3 (inactive [3
   * 4R], active [2 1R]) and evicts 4 (age 11, shadow 4(11)); distance 11 - 9
   * = 2 <= 2 active, but a write is never activated: inactive [7 3]. */
  CHECK(!driver_access(&d, 7, 1, 0, W));
  RESIDENT(&d, 1, 2, 3, 7);
  CHECK_EQ(driver_standing(&d, 7), 0);
  CHECK_EQ(driver_standing(&d, 3), 0);
  CHECK_EQ(driver_standing(&d, 2), 2);
  CHECK_EQ(driver_standing(&d, 1), 3);
  CHECK_EQ(hs_policy_ghosts(d.p), 3); /* 5, 6, 4 */
  /* 19: read 5, a refault: evicts the inactive tail 3 (age 12, shadow
   * 3(12)); distance 12 - 6 = 6 > 2: inactive [5R 7]. */
  CHECK(!driver_access(&d, 5, 1, 0, R));
  RESIDENT(&d, 1, 2, 5, 7);
  CHECK_EQ(driver_standing(&d, 5), 1);
  CHECK_EQ(d.violations, 0);
  driver_free(&d);
}

/* The nonresident age counts activations as well as evictions, both the
 * ones by a second access and the ones by a refault. 3 pages, ratio 1;
 * A..D = 1..4. */
static void test_twolist_age(void) {
  driver d;
  driver_init(&d, "twolist", 3, 3, 10);
  /* Read A twice: active [A], age 1. Read B, C: inactive [CR BR]. */
  driver_access(&d, 1, 1, 0, R);
  driver_access(&d, 1, 1, 0, R);
  driver_access(&d, 2, 1, 0, R);
  driver_access(&d, 3, 1, 0, R);
  /* Read D: evicts B (age 2, shadow B(2)): inactive [DR CR]. */
  CHECK(!driver_access(&d, 4, 1, 0, R));
  RESIDENT(&d, 1, 3, 4);
  /* Read B: evicts C (age 3, shadow C(3)); distance 3 - 2 = 1 <= 1 active:
   * activated (age 4). active [BR A], inactive [DR]. */
  CHECK(!driver_access(&d, 2, 1, 0, R));
  RESIDENT(&d, 1, 2, 4);
  CHECK_EQ(driver_standing(&d, 2), 3);
  /* Read C: demotes A (inactive 1 < active 2), evicts D (age 5, shadow
   * D(5)); distance 5 - 3 = 2 > 1 active page: inactive [CR A]. (Had B's
   * refault activation not advanced the age, the distance would be 1.) */
  CHECK(!driver_access(&d, 3, 1, 0, R));
  RESIDENT(&d, 1, 2, 3);
  CHECK_EQ(driver_standing(&d, 3), 1);
  CHECK_EQ(driver_standing(&d, 1), 0);
  /* Read C again: activated (age 6). active [C BR], inactive [A]. */
  CHECK(driver_access(&d, 3, 1, 0, R));
  CHECK_EQ(driver_standing(&d, 3), 2);
  /* Read D: demotes B, evicts A (age 7); distance 7 - 5 = 2 > 1: inactive.
   * (Had C's activation not advanced the age, the distance would be 1.) */
  CHECK(!driver_access(&d, 4, 1, 0, R));
  RESIDENT(&d, 2, 3, 4);
  CHECK_EQ(driver_standing(&d, 4), 1);
  CHECK_EQ(driver_standing(&d, 2), 1);
  CHECK_EQ(d.violations, 0);
  driver_free(&d);
}

/* A ring access never raises a page beyond "inactive, referenced". */
static void test_twolist_ring(void) {
  driver d;
  driver_init(&d, "twolist", 4, 4, 10);
  CHECK(!driver_access(&d, 1, 1, 0, R));
  hs_access ring = {.key = 1, .size = 1, .kind = R, .hint = HS_HINT_RING};
  hs_policy_hit(d.p, (uint32_t)d.slot_of[1], &ring);
  CHECK_EQ(driver_standing(&d, 1), 1);
  CHECK(driver_access(&d, 1, 1, 0, R)); /* a normal read promotes */
  CHECK_EQ(driver_standing(&d, 1), 2);
  hs_policy_hit(d.p, (uint32_t)d.slot_of[1], &ring);
  CHECK_EQ(driver_standing(&d, 1), 2); /* the ring leaves the active bit alone */
  driver_free(&d);
}

/* The sqrt rule: the same accesses as steps 1-8 above, with the ratio
 * computed from the cache's size in bytes, capacity * the caller's bytes
 * per unit (env; NULL: the `page` parameter's). 4 pages of 1 GiB (object
 * mode) or a 4 GiB byte cache with 1 GiB entries: gb = 4, inactive_ratio =
 * int_sqrt(40) = 6, so one inactive page allows six active ones and step 8
 * demotes nothing: active [3 2 1] survives and 4 is evicted. With 8 KiB
 * pages (ratio 1) the same steps leave two active pages. */
static void sqrt_rule_env(const char *spec, uint64_t capacity, uint32_t slots, uint32_t size,
                          uint32_t want_active, const hs_policy_env *env) {
  driver d;
  driver_init_env(&d, spec, capacity, slots, 100, env);
  const uint32_t keys[] = {1, 1, 2, 3, 4, 2, 3, 5};
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) driver_access(&d, keys[i], size, 0, R);
  RESIDENT(&d, 1, 2, 3, 5);
  uint32_t active = 0;
  for (uint32_t k = 1; k <= 5; k++)
    if (driver_resident(&d, k) && driver_standing(&d, k) >= 2) active++;
  CHECK_EQ(active, want_active);
  CHECK_EQ(driver_standing(&d, 3), 2);
  CHECK_EQ(driver_standing(&d, 2), 2);
  CHECK_EQ(driver_standing(&d, 1), want_active == 3 ? 2 : 0);
  /* A read of 6 evicts the new inactive page 5, not an active one, as long
   * as the ratio allows: with ratio 6, inactive [5R] * 6 >= 3. */
  driver_access(&d, 6, size, 0, R);
  if (want_active == 3) RESIDENT(&d, 1, 2, 3, 6);
  CHECK_EQ(d.violations, 0);
  driver_free(&d);
}

static void sqrt_rule(const char *spec, uint64_t capacity, uint32_t slots, uint32_t size,
                      uint32_t want_active) {
  sqrt_rule_env(spec, capacity, slots, size, want_active, NULL);
}

static void test_twolist_sqrt_rule(void) {
  /* A caller that does not say how big a unit is: the `page` parameter. */
  sqrt_rule("twolist:page=1073741824", 4, 4, 1, 3);
  sqrt_rule("twolist", 4, 4, 1, 2);
  /* Exactly 1 GiB: int_sqrt(10) = 3, and 1 * 3 >= 3. Four bytes less: 0 GiB,
   * ratio 1. */
  sqrt_rule("twolist:page=268435456", 4, 4, 1, 3);
  sqrt_rule("twolist:page=268435455", 4, 4, 1, 2);
  /* Byte mode: the caller says its units are bytes. */
  const hs_policy_env bytes = {.unit_bytes = 1, .clock = HS_CLOCK_REQUESTS};
  sqrt_rule_env("twolist", 4ull << 30, 8, 1u << 30, 3, &bytes);
  sqrt_rule_env("twolist", 4ull << 20, 8, 1u << 20, 2, &bytes); /* 4 MiB: ratio 1 */
}

/* The ratio comes from the page size the caller gives, not from the
 * `page` parameter nor from how the capacity compares with the slots. */
static void test_twolist_caller_facts(void) {
  /* A pool of 4 pages of 1 GiB: ratio 6, three pages stay active; of 8 KiB:
   * ratio 1, two do. The caller's page size wins over the parameter. */
  hs_policy_env pool = {.unit_bytes = 1ull << 30, .clock = HS_CLOCK_MILLISECONDS};
  sqrt_rule_env("twolist", 4, 4, 1, 3, &pool);
  pool.unit_bytes = 8192;
  sqrt_rule_env("twolist:page=1073741824", 4, 4, 1, 2, &pool);
  /* The 1 GiB edge, from the given page size: 4 * 256 MiB is 1 GiB (ratio
   * 3), four bytes less is 0 GiB (ratio 1). */
  pool.unit_bytes = 268435456;
  sqrt_rule_env("twolist", 4, 4, 1, 3, &pool);
  pool.unit_bytes = 268435455;
  sqrt_rule_env("twolist", 4, 4, 1, 2, &pool);
  /* A byte cache of 128 KiB with room for as many objects as bytes (so
   * capacity <= slots): four 32 KiB entries fill it. Its units are bytes,
   * so the ratio is 1 and two pages stay active; taking the units for
   * 8 KiB pages would make it a 1 GiB cache (ratio 3, three active). */
  const hs_policy_env bytes = {.unit_bytes = 1, .clock = HS_CLOCK_REQUESTS};
  sqrt_rule_env("twolist", 128u << 10, 128u << 10, 32u << 10, 2, &bytes);

  /* The clock must be one hs_policy_env knows. */
  hs_policy *p = NULL;
  hs_policy_env bad = {.unit_bytes = 1, .clock = (hs_clock_unit)7};
  CHECK_ST(hs_policy_create("twolist", 4, 4, &bad, &p), HS_ERR_INVALID);
  CHECK(p == NULL);
  CHECK_OK(hs_policy_create("twolist", 4, 4, &pool, &p));
  hs_policy_destroy(p);
}

/* Without shadows nothing is activated by a refault. */
static void test_twolist_no_shadows(void) {
  driver d;
  driver_init(&d, "twolist:shadows=0", 2, 2, 10);
  /* 1 active; 2 inactive; 3 evicts 2 (after demoting nothing: 1 vs 1). */
  driver_access(&d, 1, 1, 0, R);
  driver_access(&d, 1, 1, 0, R);
  driver_access(&d, 2, 1, 0, R);
  driver_access(&d, 3, 1, 0, R);
  RESIDENT(&d, 1, 3);
  /* 2 comes back (evicting 3, age 3) at distance 3 - 2 = 1 <= 1 active
   * page, but no shadow was kept: inactive. */
  driver_access(&d, 2, 1, 0, R);
  CHECK_EQ(driver_standing(&d, 2), 1);
  CHECK_EQ(hs_policy_ghosts(d.p), 0);
  driver_free(&d);

  driver_init(&d, "twolist", 2, 2, 10);
  driver_access(&d, 1, 1, 0, R);
  driver_access(&d, 1, 1, 0, R);
  driver_access(&d, 2, 1, 0, R);
  driver_access(&d, 3, 1, 0, R);
  driver_access(&d, 2, 1, 0, R); /* the same, with shadows: activated */
  CHECK_EQ(driver_standing(&d, 2), 3);
  driver_free(&d);
}

/* --------------------------------------------------------------- midpoint */

/* buf0lru.cc / buf0buf.ic on 8 pages: old = 3/8, so the young sublist
 * holds at most 8 - 3 = 5 pages; old_blocks_time = 5 requests; the
 * young-enough window is floor(8 * 5/8 / 4) = 1 eviction. The driver's
 * clock is the request number (from 0). Lists head first. */
static void test_midpoint_example(void) {
  driver d;
  driver_init(&d, "midpoint:time=5", 8, 8, 100);
  CHECK(strcmp(hs_policy_spec(d.p), "midpoint:old=0.375,time=5") == 0);
  CHECK(hs_policy_flags(d.p) & HS_POLICY_NEEDS_TIME);

  /* Requests 0-7 insert 0..7 at the head of the old sublist:
   * old [7 6 5 4 3 2 1 0], young []. */
  for (uint32_t k = 0; k < 8; k++) {
    CHECK(!driver_access(&d, k, 1, 0, R));
    CHECK_EQ(driver_standing(&d, k), 0);
  }
  /* Request 8: 0 is hit 8 requests after its first access, but nothing has
   * been evicted yet (freed_page_clock == 0): nothing moves. */
  CHECK(driver_access(&d, 0, 1, 0, R));
  CHECK_EQ(driver_standing(&d, 0), 0);
  /* Request 9: 8 misses; the tail 0 leaves (clock 1). */
  CHECK(!driver_access(&d, 8, 1, 0, R));
  RESIDENT(&d, 1, 2, 3, 4, 5, 6, 7, 8);
  /* Requests 10-14: 1..5, first accessed >= 5 requests ago: made young one
   * by one. young [5 4 3 2 1], old [8 7 6]. */
  for (uint32_t k = 1; k <= 5; k++) {
    CHECK(driver_access(&d, k, 1, 0, R));
    CHECK_EQ(driver_standing(&d, k), 1);
  }
  /* Request 15: 6 made young; the young sublist would hold 6 > 5: its tail
   * 1 becomes old. young [6 5 4 3 2], old [1 8 7]. */
  CHECK(driver_access(&d, 6, 1, 0, R));
  CHECK_EQ(driver_standing(&d, 6), 1);
  CHECK_EQ(driver_standing(&d, 1), 0);
  /* Request 16: 9 misses, evicting 7 (clock 2): old [9 1 8]. Request 17:
   * 9 again, 1 request after its first access: stays old. */
  CHECK(!driver_access(&d, 9, 1, 0, R));
  CHECK(driver_access(&d, 9, 1, 0, R));
  CHECK_EQ(driver_standing(&d, 9), 0);
  /* Requests 18-20: 10, 11, 12 miss, evicting 8, 1 and 9 (read twice, but
   * within old_blocks_time) from the tail; clock 5. old [12 11 10]. */
  for (uint32_t k = 10; k <= 12; k++) CHECK(!driver_access(&d, k, 1, 0, R));
  RESIDENT(&d, 2, 3, 4, 5, 6, 10, 11, 12);
  /* Requests 21, 22: young 2 then 3, made young at clock 1, 5 >= 1 + 1:
   * moved to the head (clock 5). young [3 2 6 5 4]. Request 23: 2 again:
   * 5 < 5 + 1, still young enough: not moved. */
  CHECK(driver_access(&d, 2, 1, 0, R));
  CHECK(driver_access(&d, 3, 1, 0, R));
  CHECK(driver_access(&d, 2, 1, 0, R));

  /* Requests 24-39: a scan of 8 new pages, each read twice in a row: the
   * second read comes 1 request after the first (< 5): never promoted. Each
   * miss evicts the old tail; the young sublist is untouched. */
  for (uint32_t k = 20; k < 28; k++) {
    CHECK(!driver_access(&d, k, 1, 0, R));
    CHECK(driver_access(&d, k, 1, 0, R));
    CHECK_EQ(driver_standing(&d, k), 0);
  }
  RESIDENT(&d, 2, 3, 4, 5, 6, 25, 26, 27);
  for (uint32_t k = 2; k <= 6; k++) CHECK_EQ(driver_standing(&d, k), 1);

  /* Requests 40-42: 27 (first read at 38) is hit too soon: no change. */
  for (int i = 0; i < 3; i++) CHECK(driver_access(&d, 27, 1, 0, R));
  CHECK_EQ(driver_standing(&d, 27), 0);
  /* Requests 43-45: 25, 26, 27 (first read at 34, 36, 38) are promoted;
   * each pushes the young tail into the old sublist: 4, 5, 6.
   * young [27 26 25 3 2], old [6 5 4]. */
  for (uint32_t k = 25; k <= 27; k++) CHECK(driver_access(&d, k, 1, 0, R));
  for (uint32_t k = 4; k <= 6; k++) CHECK_EQ(driver_standing(&d, k), 0);
  /* Requests 46, 47: 4 and 5 come back (first accessed long ago): promoted,
   * pushing out 2 (behind 3, since request 23 did not move 2), then 3.
   * young [5 4 27 26 25], old [3 2 6]. */
  CHECK(driver_access(&d, 4, 1, 0, R));
  CHECK_EQ(driver_standing(&d, 2), 0);
  CHECK_EQ(driver_standing(&d, 3), 1);
  CHECK(driver_access(&d, 5, 1, 0, R));
  CHECK_EQ(driver_standing(&d, 3), 0);
  /* Requests 48-50: three misses evict 6, 2, 3 in that order. */
  CHECK(!driver_access(&d, 40, 1, 0, R));
  RESIDENT(&d, 2, 3, 4, 5, 25, 26, 27, 40);
  CHECK(!driver_access(&d, 41, 1, 0, R));
  RESIDENT(&d, 3, 4, 5, 25, 26, 27, 40, 41);
  CHECK(!driver_access(&d, 42, 1, 0, R));
  RESIDENT(&d, 4, 5, 25, 26, 27, 40, 41, 42);
  CHECK_EQ(d.violations, 0);
  driver_free(&d);

  /* The same scan through a plain LRU of 8 flushes the hot pages. */
  driver_init(&d, "lru", 8, 8, 100);
  for (uint32_t k = 0; k < 8; k++) driver_access(&d, k, 1, 0, R);
  for (uint32_t k = 20; k < 28; k++) driver_access(&d, k, 1, 0, R);
  CHECK(!driver_resident(&d, 0));
  driver_free(&d);
}

/* Byte mode: the young sublist holds at most units - floor(units * 3/8)
 * bytes. 100 bytes, time 5. A..H = 1..8. */
static void test_midpoint_bytes(void) {
  driver d;
  driver_init(&d, "midpoint:time=5", 100, 10, 10);
  /* 0-3: A(40) B(30) C(20) D(10): old [D C B A], 100 bytes. */
  driver_access(&d, 1, 40, 0, R);
  driver_access(&d, 2, 30, 0, R);
  driver_access(&d, 3, 20, 0, R);
  driver_access(&d, 4, 10, 0, R);
  for (uint32_t k = 1; k <= 4; k++) CHECK_EQ(driver_standing(&d, k), 0);
  /* 4: E(25) evicts A: old [E D C B], 85 bytes. */
  CHECK(!driver_access(&d, 5, 25, 0, R));
  RESIDENT(&d, 2, 3, 4, 5);
  /* 5: C, 3 requests after its first access: stays old. 6: B, 5 after:
   * young [B] = 30 <= 85 - 31. */
  CHECK(driver_access(&d, 3, 20, 0, R));
  CHECK_EQ(driver_standing(&d, 3), 0);
  CHECK(driver_access(&d, 2, 30, 0, R));
  CHECK_EQ(driver_standing(&d, 2), 1);
  /* 7: F(30) evicts the old tail C (20 bytes suffice): old [F E D], young
   * [B], 95 bytes. */
  CHECK(!driver_access(&d, 6, 30, 0, R));
  RESIDENT(&d, 2, 4, 5, 6);
  /* 8: D made young: young [D B] = 40. 9: E made young: young [E D B] = 65
   * > 95 - floor(35.6) = 60: B becomes old. young [E D], old [B F]. */
  CHECK(driver_access(&d, 4, 10, 0, R));
  CHECK(driver_access(&d, 5, 25, 0, R));
  CHECK_EQ(driver_standing(&d, 5), 1);
  CHECK_EQ(driver_standing(&d, 4), 1);
  CHECK_EQ(driver_standing(&d, 2), 0);
  /* 10: G(50) evicts F, then B: young [E D], old [G]. */
  CHECK(!driver_access(&d, 7, 50, 0, R));
  RESIDENT(&d, 4, 5, 7);
  CHECK_EQ(driver_standing(&d, 7), 0);
  /* 11: H(16) evicts G: 51 bytes, so the young sublist may hold 51 -
   * floor(19.1) = 32 < 35: its tail D becomes old. young [E], old [H D]. */
  CHECK(!driver_access(&d, 8, 16, 0, R));
  RESIDENT(&d, 4, 5, 8);
  CHECK_EQ(driver_standing(&d, 4), 0);
  CHECK_EQ(driver_standing(&d, 5), 1);
  CHECK_EQ(d.violations, 0);
  driver_free(&d);
}

/* A ring access never promotes an old page. */
static void test_midpoint_ring(void) {
  driver d;
  driver_init(&d, "midpoint:time=0", 4, 4, 10);
  for (uint32_t k = 0; k < 5; k++) driver_access(&d, k, 1, 0, R); /* evicts once */
  CHECK_EQ(driver_standing(&d, 4), 0);
  hs_access ring = {.key = 4, .size = 1, .now = 100, .kind = R, .hint = HS_HINT_RING};
  hs_policy_hit(d.p, (uint32_t)d.slot_of[4], &ring);
  CHECK_EQ(driver_standing(&d, 4), 0);
  /* time=0: an old page follows the young-enough rule: clock 1 >= 0 + 0. */
  CHECK(driver_access(&d, 4, 1, 0, R));
  CHECK_EQ(driver_standing(&d, 4), 1);
  driver_free(&d);
}

/* ----------------------------------------------------------------- belady */

/* The reference string of Silberschatz, Galvin & Gagne, "Operating System
 * Concepts", section 9.4 (optimal page replacement), with 3 frames: 9
 * faults, the victims being 7, 1, 0, 4, 3, 2. Its first 13 requests give 7
 * faults (at the fourth request 7 and 1 are both never used again within
 * the prefix: either may go). */
static void test_belady_textbook(void) {
  const uint32_t ref[] = {7, 0, 1, 2, 0, 3, 0, 4, 2, 3, 0, 3, 2, 1, 2, 0, 1, 7, 0, 1};
  const uint32_t n = sizeof ref / sizeof ref[0];
  int64_t next[20];
  make_next(ref, next, n, 8);
  driver d;
  driver_init(&d, "belady", 3, 3, 8);
  CHECK(strcmp(hs_policy_spec(d.p), "belady") == 0);
  CHECK(hs_policy_flags(d.p) == (HS_POLICY_NEEDS_FUTURE | HS_POLICY_SIM_ONLY));
  /* The resident set after each request. */
  const uint32_t after[20][3] = {
      {7, 7, 7}, {7, 0, 0}, {7, 0, 1}, {0, 1, 2}, {0, 1, 2}, {0, 2, 3}, {0, 2, 3},
      {2, 3, 4}, {2, 3, 4}, {2, 3, 4}, {2, 3, 0}, {2, 3, 0}, {2, 3, 0}, {2, 0, 1},
      {2, 0, 1}, {2, 0, 1}, {2, 0, 1}, {0, 1, 7}, {0, 1, 7}, {0, 1, 7},
  };
  const uint32_t count[20] = {1, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3};
  for (uint32_t i = 0; i < n; i++) {
    driver_access(&d, ref[i], 1, next[i], R);
    CHECK(driver_resident_exactly(&d, after[i], count[i]));
    if (i == 12) CHECK_EQ(d.misses, 7);
  }
  CHECK_EQ(d.misses, 9);
  CHECK_EQ(driver_standing(&d, 7), 0);
  driver_free(&d);

  /* The 13-request prefix on its own: 7 faults. */
  make_next(ref, next, 13, 8);
  driver_init(&d, "belady", 3, 3, 8);
  for (uint32_t i = 0; i < 13; i++) driver_access(&d, ref[i], 1, next[i], R);
  CHECK_EQ(d.misses, 7);
  driver_free(&d);
}

/* A pinned furthest entry is stepped over, and stays in the heap. */
static void test_belady_pins(void) {
  const uint32_t ref[] = {1, 2, 3, 4, 3, 4, 2, 1};
  int64_t next[8];
  make_next(ref, next, 8, 8);
  driver d;
  driver_init(&d, "belady", 3, 3, 8);
  for (uint32_t i = 0; i < 3; i++) driver_access(&d, ref[i], 1, next[i], R);
  /* Next uses: 1 at 7, 2 at 6, 3 at 4. Pin 1 and 2: 3 must go. */
  d.pinned[d.slot_of[1]] = d.pinned[d.slot_of[2]] = true;
  driver_access(&d, 4, 1, next[3], R);
  RESIDENT(&d, 1, 2, 4);
  CHECK_EQ(d.violations, 0);
  /* Unpinned again, the entries stepped over are still ranked: the next
   * miss (3) evicts 1 (next use 7), not 4 (5) or 2 (6). */
  d.pinned[d.slot_of[1]] = d.pinned[d.slot_of[2]] = false;
  driver_access(&d, 3, 1, next[4], R);
  RESIDENT(&d, 2, 3, 4);
  /* Everything pinned: no victim, and nothing forgotten. */
  for (uint32_t s = 0; s < 3; s++) d.pinned[s] = true;
  hs_access a = {.key = 5, .size = 1, .next = HS_NEXT_NEVER};
  CHECK_EQ(hs_policy_victim(d.p, &a, driver_is_pinned, &d), -1);
  for (uint32_t s = 0; s < 3; s++) d.pinned[s] = false;
  CHECK_EQ(hs_policy_victim(d.p, &a, driver_is_pinned, &d), d.slot_of[3]); /* never again */
  CHECK_EQ(d.violations, 0);
  driver_free(&d);
}

/* The heap under removals from its middle (hs_policy_remove): victims
 * come out furthest first, and removed entries never. */
static void test_belady_heap(void) {
  enum { N = 256 };
  for (uint64_t seed = 1; seed <= 20; seed++) {
    hs_policy *p;
    REQUIRE(hs_policy_create("belady", N, N, NULL, &p) == HS_OK);
    uint64_t r = seed;
    int64_t next[N];
    bool removed[N] = {false};
    for (uint32_t s = 0; s < N; s++) {
      next[s] = (int64_t)(test_rand(&r) % 1000);
      hs_access a = {.key = s, .size = 1, .next = next[s]};
      CHECK_OK(hs_policy_insert(p, s, &a));
    }
    /* Move some entries, then remove a third of them. */
    for (uint32_t s = 0; s < N; s += 5) {
      next[s] = (int64_t)(test_rand(&r) % 1000);
      hs_access a = {.key = s, .size = 1, .next = next[s]};
      hs_policy_hit(p, s, &a);
    }
    for (uint32_t k = 0; k < N / 3; k++) {
      uint32_t s = (uint32_t)(test_rand(&r) % N);
      if (removed[s]) continue;
      hs_policy_remove(p, s);
      removed[s] = true;
    }
    int64_t last = INT64_MAX;
    uint64_t out_of_order = 0;
    hs_access in = {.key = 1000, .size = 1};
    for (int64_t v; (v = hs_policy_victim(p, &in, NULL, NULL)) >= 0;) {
      CHECK(!removed[v]);
      out_of_order += next[v] > last;
      last = next[v];
      hs_policy_evict(p, (uint32_t)v);
    }
    CHECK_EQ(out_of_order, 0);
    CHECK_EQ(hs_policy_resident(p), 0);
    hs_policy_destroy(p);
  }
}

/* The reference: residents in an array; a miss evicts the entry with the
 * largest next access until the incoming one fits. Entries never accessed
 * again (HS_NEXT_NEVER) tie; which of them goes first changes no hit or
 * miss and no other eviction, so the comparison is on the hits and on the
 * set of resident entries that will be accessed again. */
#define RKEYS 300
#define RREQ  20000

typedef struct ref_cache {
  uint64_t capacity, used;
  uint32_t n;
  uint32_t key[RKEYS], size[RKEYS];
  int64_t next[RKEYS];
} ref_cache;

static bool ref_access(ref_cache *c, uint32_t key, uint32_t size, int64_t next) {
  for (uint32_t i = 0; i < c->n; i++)
    if (c->key[i] == key) {
      c->next[i] = next;
      return true;
    }
  if (size > c->capacity) return false;
  while (c->used + size > c->capacity) {
    uint32_t far = 0;
    for (uint32_t i = 1; i < c->n; i++)
      if (c->next[i] > c->next[far]) far = i;
    c->used -= c->size[far];
    c->n--;
    c->key[far] = c->key[c->n];
    c->size[far] = c->size[c->n];
    c->next[far] = c->next[c->n];
  }
  c->key[c->n] = key;
  c->size[c->n] = size;
  c->next[c->n] = next;
  c->n++;
  c->used += size;
  return false;
}

static void compare_belady(uint64_t capacity, bool bytes, uint64_t seed) {
  static uint32_t keys[RREQ];
  static int64_t next[RREQ];
  static uint32_t size_of[RKEYS];
  static ref_cache c;
  make_trace(keys, RREQ, RKEYS, seed);
  make_next(keys, next, RREQ, RKEYS);
  uint64_t r = seed * 11 + 3;
  for (uint32_t k = 0; k < RKEYS; k++) size_of[k] = bytes ? 1 + (uint32_t)(test_rand(&r) % 50) : 1;
  memset(&c, 0, sizeof c);
  c.capacity = capacity;
  driver d;
  driver_init(&d, "belady", capacity, RKEYS, RKEYS);
  uint64_t ref_misses = 0, mismatched = 0;
  for (uint32_t i = 0; i < RREQ; i++) {
    uint32_t k = keys[i];
    bool hit_ref = ref_access(&c, k, size_of[k], next[i]);
    bool hit = driver_access(&d, k, size_of[k], next[i], R);
    ref_misses += !hit_ref;
    bool same = hit == hit_ref;
    uint32_t with_future = 0;
    for (uint32_t j = 0; same && j < c.n; j++)
      if (c.next[j] != HS_NEXT_NEVER) {
        with_future++;
        same = driver_resident(&d, c.key[j]) &&
               hs_policy_standing(d.p, (uint32_t)d.slot_of[c.key[j]]) == 1;
      }
    /* ... and the policy holds no other entry with a future. */
    uint32_t policy_with_future = 0;
    for (uint32_t s = 0; same && s < d.nslots; s++)
      if (d.key_of[s] >= 0 && hs_policy_standing(d.p, s) == 1) policy_with_future++;
    if (same) same = policy_with_future == with_future;
    if (!bytes && same) same = c.n == hs_policy_resident(d.p);
    if (!same && mismatched++ == 0)
      fprintf(stderr, "belady (capacity %llu%s, seed %llu): differs at request %u\n",
              (unsigned long long)capacity, bytes ? ", bytes" : "", (unsigned long long)seed, i);
  }
  CHECK_EQ(mismatched, 0);
  CHECK_EQ(d.misses, ref_misses);
  CHECK_EQ(d.violations, 0);
  driver_free(&d);
}

static void test_belady_reference(void) {
  for (uint64_t seed = 1; seed <= 3; seed++)
    for (uint64_t cap = 1; cap <= 250; cap = cap * 3 + 1) {
      compare_belady(cap, false, seed);
      compare_belady(cap * 25, true, seed);
    }
}

/* Belady never misses more than any other policy, in object mode. */
static void test_belady_is_optimal(void) {
  static uint32_t keys[RREQ];
  static int64_t next[RREQ];
  make_trace(keys, RREQ, RKEYS, 9);
  make_next(keys, next, RREQ, RKEYS);
  const char *others[] = {"lru", "fifo", "clock", "twolist", "midpoint:time=50", "belady"};
  uint64_t misses[6];
  for (int o = 0; o < 6; o++) {
    driver d;
    driver_init(&d, others[o], 40, 40, RKEYS);
    for (uint32_t i = 0; i < RREQ; i++) driver_access(&d, keys[i], 1, next[i], R);
    misses[o] = d.misses;
    driver_free(&d);
  }
  for (int o = 0; o < 5; o++) CHECK(misses[5] < misses[o]);
}

const policy_section twolist_midpoint_belady_sections[] = {
    SECTION_ONE("twolist", test_twolist_example),
    SECTION_ONE("twolist", test_twolist_age),
    SECTION_ONE("twolist", test_twolist_ring),
    SECTION_ONE("twolist", test_twolist_sqrt_rule),
    SECTION_ONE("twolist", test_twolist_caller_facts),
    SECTION_ONE("twolist", test_twolist_no_shadows),
    SECTION_ONE("midpoint", test_midpoint_example),
    SECTION_ONE("midpoint", test_midpoint_bytes),
    SECTION_ONE("midpoint", test_midpoint_ring),
    SECTION_ONE("belady", test_belady_textbook),
    SECTION_ONE("belady", test_belady_pins),
    SECTION_ONE("belady", test_belady_heap),
    SECTION_ONE("belady", test_belady_reference),
    SECTION_ONE("belady", test_belady_is_optimal),
    SECTIONS_END,
};
