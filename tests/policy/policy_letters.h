/*
 * tests/policy/policy_letters.h — the hand-worked policy examples' vocabulary:
 * keys are letters ('A' is key 0), accesses are reads, and the expected
 * resident set is written as a string of letters.
 */
#ifndef HOTSET_TESTS_POLICY_LETTERS_H
#define HOTSET_TESTS_POLICY_LETTERS_H

#include "policy_driver.h"

#define KEY(c) ((uint32_t)((c) - 'A'))

static inline bool acc_size(driver *d, char c, uint32_t size) {
  return driver_access(d, KEY(c), size, HS_NEXT_UNKNOWN, HS_ACCESS_READ);
}

static inline bool acc(driver *d, char c) {
  return acc_size(d, c, 1);
}

/* Exactly the keys in `want` are resident. */
static inline void expect_set(const driver *d, const char *want, int line) {
  bool ok = true;
  for (uint32_t k = 0; k < d->nkeys; k++) {
    bool in_want = strchr(want, (int)('A' + k)) != NULL;
    if (in_want != driver_resident(d, k)) ok = false;
  }
  if (!ok) {
    fprintf(stderr, "line %d: resident set is {", line);
    for (uint32_t k = 0; k < d->nkeys; k++)
      if (driver_resident(d, k)) fprintf(stderr, "%c", (char)('A' + k));
    fprintf(stderr, "}, want {%s}\n", want);
  }
  CHECK(ok);
}
#define EXPECT(d, want) expect_set(d, want, __LINE__)

static inline uint32_t standing(const driver *d, char c) {
  int64_t slot = d->slot_of[KEY(c)];
  return slot < 0 ? 99 : hs_policy_standing(d->p, (uint32_t)slot);
}

/* Asking for a victim twice without evicting names the same entry. */
static inline void check_victim_repeatable(driver *d, char incoming) {
  hs_access a = {.key = KEY(incoming), .size = 1, .now = d->now, .next = HS_NEXT_UNKNOWN};
  int64_t v1 = hs_policy_victim(d->p, &a, driver_is_pinned, d);
  int64_t v2 = hs_policy_victim(d->p, &a, driver_is_pinned, d);
  CHECK(v1 >= 0);
  CHECK_EQ(v1, v2);
}

#endif
