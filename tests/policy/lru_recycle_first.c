/*
 * tests/policy/lru_recycle_first.c — lru under a ring strategy: where a page a
 * ring reads in enters the list with and without hs_access.recycle_first,
 * and what ring and normal hits do to it; and its replace (the frame
 * cache's victim refilled at once) against evict, or remove, and insert.
 */
#include "policy/policy_impl.h"
#include "policy_driver.h"
#include "policy_sections.h"

/* lru's recycle_first (the 2003 proposal; lru is the one policy with a
 * victim end to put a ring's page at — include/hotset/policy.h): a page a
 * ring reads in with recycle_first enters at the tail and is the next
 * victim; a ring read without it enters at the head like any other; a ring
 * hit leaves the page where it is, a normal hit takes it to the head. Keys
 * are the slots. */
static bool pinned_in(void *ctx, uint32_t slot) {
  return ((const bool *)ctx)[slot];
}

static void test_lru_recycle_first(void) {
  hs_policy *p;
  REQUIRE(hs_policy_create("lru", 4, 4, NULL, &p) == HS_OK);
  hs_access normal = {.size = 1, .next = HS_NEXT_UNKNOWN, .kind = HS_ACCESS_READ};
  hs_access ring = normal, recycle = normal;
  ring.hint = recycle.hint = HS_HINT_RING;
  recycle.recycle_first = true;
  for (uint32_t s = 0; s < 3; s++) {
    normal.key = s;
    REQUIRE(hs_policy_insert(p, s, &normal) == HS_OK); /* [2 1 0], MRU first */
  }
  recycle.key = 3;
  REQUIRE(hs_policy_insert(p, 3, &recycle) == HS_OK); /* [2 1 0 3] */
  CHECK_EQ(hs_policy_victim(p, &normal, NULL, NULL), 3);
  hs_policy_hit(p, 3, &recycle); /* a ring hit: still the tail */
  CHECK_EQ(hs_policy_victim(p, &normal, NULL, NULL), 3);
  hs_policy_hit(p, 3, &normal); /* someone else used it: [3 2 1 0] */
  CHECK_EQ(hs_policy_victim(p, &normal, NULL, NULL), 0);

  /* Without recycle_first a ring's page enters at the head. */
  hs_policy_evict(p, 0);
  ring.key = 0;
  REQUIRE(hs_policy_insert(p, 0, &ring) == HS_OK); /* [0 3 2 1] */
  CHECK_EQ(hs_policy_victim(p, &normal, NULL, NULL), 1);

  /* The newest recycled page goes first; pinned, the one before it (the
   * old tail) is next. */
  hs_policy_evict(p, 1);
  recycle.key = 1;
  REQUIRE(hs_policy_insert(p, 1, &recycle) == HS_OK); /* [0 3 2 1] */
  CHECK_EQ(hs_policy_victim(p, &normal, NULL, NULL), 1);
  hs_policy_evict(p, 2);
  recycle.key = 2;
  REQUIRE(hs_policy_insert(p, 2, &recycle) == HS_OK); /* [0 3 1 2] */
  CHECK_EQ(hs_policy_victim(p, &normal, NULL, NULL), 2);
  bool pinned[4] = {false, false, true, false};
  CHECK_EQ(hs_policy_victim(p, &normal, pinned_in, pinned), 1);
  CHECK_EQ(hs_policy_resident(p), 4);
  hs_policy_destroy(p);
}

/* hs_policy_replace with lru's own replace does what hs_policy_vacate and
 * hs_policy_refill do: two lrus take the same hits (normal and ring) and
 * misses, whose victims one refills in two calls and the other in one,
 * with ring pages recycled first or not and ghosts forgotten or not; the
 * victims and the whole order from the tail stay the same throughout. */
static void test_lru_replace(void) {
  enum { SLOTS = 16 };
  hs_policy *two, *one;
  REQUIRE(hs_policy_create("lru", SLOTS, SLOTS, NULL, &two) == HS_OK);
  REQUIRE(hs_policy_create("lru", SLOTS, SLOTS, NULL, &one) == HS_OK);
  REQUIRE(one->ops->replace != NULL);
  hs_access a = {.size = 1, .next = HS_NEXT_UNKNOWN, .kind = HS_ACCESS_READ};
  for (uint32_t s = 0; s < SLOTS; s++) {
    a.key = s;
    REQUIRE(hs_policy_insert(two, s, &a) == HS_OK);
    REQUIRE(hs_policy_insert(one, s, &a) == HS_OK);
  }
  uint64_t rng = 7, key = SLOTS;
  for (int step = 0; step < 4000; step++) {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    unsigned r = (unsigned)(rng >> 33);
    a.hint = r & 1 ? HS_HINT_RING : HS_HINT_NORMAL;
    a.recycle_first = (r >> 1) & 1;
    if ((r >> 2) % 3) {
      uint32_t s = (r >> 4) % SLOTS;
      a.key = s;
      hs_policy_hit(two, s, &a);
      hs_policy_hit(one, s, &a);
    } else {
      int64_t v = hs_policy_victim(two, &a, NULL, NULL);
      CHECK_EQ(hs_policy_victim(one, &a, NULL, NULL), v);
      REQUIRE(v >= 0);
      bool forget = (r >> 3) & 1;
      a.key = key++;
      hs_policy_vacate(two, (uint32_t)v, forget);
      hs_policy_refill(two, (uint32_t)v, &a);
      hs_policy_replace(one, (uint32_t)v, forget, &a);
    }
    uint32_t o2[SLOTS], o1[SLOTS];
    uint32_t n2 = hs_policy_upcoming_victims(two, o2, SLOTS);
    CHECK_EQ(hs_policy_upcoming_victims(one, o1, SLOTS), n2);
    CHECK(memcmp(o1, o2, n2 * sizeof *o1) == 0);
  }
  CHECK_EQ(hs_policy_resident(one), SLOTS);
  hs_policy_destroy(two);
  hs_policy_destroy(one);
}

const policy_section lru_recycle_first_sections[] = {
    SECTION_ONE("lru", test_lru_recycle_first),
    SECTION_ONE("lru", test_lru_replace),
    SECTIONS_END,
};
