/*
 * tests/policy/invariants.c — every registered policy, driven through long
 * random traces (a skewed hot set, noise and scans), in object mode and in
 * byte mode with varying sizes, with a changing set of pinned slots:
 *   - capacity is never exceeded and counts agree (policy_driver.h);
 *   - a victim is always resident and never pinned, and "no victim" only
 *     when every resident slot is pinned;
 *   - no entry is lost: every key the driver thinks resident was inserted
 *     and not evicted, and the policy's resident count matches;
 *   - ghost memory stays bounded, and in object mode the metadata stays
 *     within 64 bytes per resident entry (plus a fixed overhead; clock-admit,
 *     which remembers counts for 4 x its entries, 192);
 *   - the same seed gives the same misses (determinism);
 *   - bad specs are refused with a message.
 * Run for each registered policy (every_policy), the names and bad specs
 * once (policy_common).
 */
#include "policy/policy_impl.h"
#include "policy_driver.h"
#include "policy_sections.h"

#include <ctype.h>

#define NKEYS 2000
#define NREQ  40000

static uint64_t run_trace(const char *spec, uint64_t capacity, uint32_t nslots, bool bytes,
                          uint64_t seed, bool pins, driver *out_stats) {
  static uint32_t keys[NREQ];
  static int64_t next[NREQ];
  static uint32_t size_of[NKEYS];
  make_trace(keys, NREQ, NKEYS, seed);
  make_next(keys, next, NREQ, NKEYS);
  uint64_t r = seed ^ 0xABCDEF;
  for (uint32_t k = 0; k < NKEYS; k++) size_of[k] = bytes ? 1 + (uint32_t)(test_rand(&r) % 300) : 1;
  driver d;
  driver_init(&d, spec, capacity, nslots, NKEYS);
  uint64_t max_ghosts = 0;
  for (uint32_t i = 0; i < NREQ; i++) {
    if (pins && i % 97 == 0) {
      /* Re-draw the pinned set: about one resident slot in eight. */
      for (uint32_t s = 0; s < nslots; s++)
        d.pinned[s] = d.key_of[s] >= 0 && test_rand(&r) % 8 == 0;
    }
    driver_access(&d, keys[i], size_of[keys[i]], next[i], HS_ACCESS_READ);
    uint64_t g = hs_policy_ghosts(d.p);
    if (g > max_ghosts) max_ghosts = g;
  }
  /* Every slot the driver holds is resident for the policy, and the units
   * add up. */
  uint64_t units = 0;
  uint32_t held = 0;
  for (uint32_t s = 0; s < nslots; s++)
    if (d.key_of[s] >= 0) {
      units += size_of[d.key_of[s]];
      held++;
    }
  CHECK_EQ(units, hs_policy_used(d.p));
  CHECK_EQ(held, hs_policy_resident(d.p));
  /* clock-admit: 4 x its entries in the history, and the ring's
   * adaptation remembers a quarter more */
  uint64_t ghosts_allowed =
      strncmp(spec, "clock-admit", 11) == 0 ? 17ull * nslots / 4 + 64 : 4ull * nslots + 64;
  if (max_ghosts > ghosts_allowed) {
    fprintf(stderr, "%s: %llu ghosts for %u slots\n", spec, (unsigned long long)max_ghosts, nslots);
    CHECK(false);
  }
  if (!bytes) {
    size_t mem = hs_policy_memory(d.p);
    /* clock-admit remembers the read counts of 4 x its entries evicted
     * pages (about 36 bytes each): its allowance is 192 bytes an entry. */
    uint64_t per_entry = strncmp(spec, "clock-admit", 11) == 0 ? 192 : 64;
    if (mem > per_entry * capacity + 8192) {
      fprintf(stderr, "%s: %zu bytes of metadata for %llu entries\n", spec, mem,
              (unsigned long long)capacity);
      CHECK(false);
    }
  }
  CHECK_EQ(d.violations, 0);
  if (out_stats) *out_stats = d;
  uint64_t misses = d.misses;
  driver_free(&d);
  return misses;
}

/* Names in any case, and other simulators' names, mean the same policy. */
static bool same_name(const char *got, const char *want) {
  if (got && strcmp(got, want) == 0) return true;
  fprintf(stderr, "canonical name %s, want %s\n", got ? got : "NULL", want);
  return false;
}
#define CHECK_STR(got, want) CHECK(same_name((got), (want)))

/* The name in capitals means the policy. */
static void test_name_any_case(const char *name) {
  char upper[64];
  size_t n = strlen(name);
  for (size_t k = 0; k <= n; k++) upper[k] = (char)toupper((unsigned char)name[k]);
  CHECK_STR(hs_policy_canonical(upper), name);
}

static void test_names(void) {
  const char *pairs[][2] = {{"TwoQ", "2q"},
                            {"S3FIFO", "s3fifo"},
                            {"S3-FIFO", "s3fifo"},
                            {"Sieve", "sieve"},
                            {"Clock", "clock"},
                            {"fifo-reinsertion", "clock"},
                            {"Second-Chance", "clock"},
                            {"Clock-Pro", "clockpro"},
                            {"LRUK", "lru-k"},
                            {"GClock", "clock-sweep"},
                            {"Belady", "belady"},
                            {"ARC", "arc"}};
  for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++)
    CHECK_STR(hs_policy_canonical(pairs[i][0]), pairs[i][1]);
  CHECK(hs_policy_canonical("TwoQQ") == NULL);
  CHECK(hs_policy_canonical("") == NULL);
  CHECK(hs_policy_canonical(NULL) == NULL);
  hs_policy *p;
  CHECK_OK(hs_policy_create("S3-FIFO:small=0.2", 10, 10, NULL, &p));
  if (p) {
    CHECK_STR(hs_policy_spec(p), "s3fifo:small=0.2,ghost=0.9,move=2");
    hs_policy_destroy(p);
  }
  CHECK(hs_policy_create("Twoq:In=0.2", 10, 10, NULL, &p) !=
        HS_OK); /* parameters keep their case */
}

static void test_traces(const char *name) {
  uint64_t m1 = run_trace(name, 100, 100, false, 1, false, NULL);
  uint64_t m2 = run_trace(name, 100, 100, false, 1, false, NULL);
  CHECK_EQ(m1, m2);
  uint64_t pinned_misses = run_trace(name, 100, 100, false, 2, true, NULL);
  run_trace(name, 300, 300, false, 3, true, NULL);
  run_trace(name, 7, 7, false, 4, true, NULL);
  uint64_t byte_misses = run_trace(name, 100 * 150, 400, true, 5, false, NULL);
  run_trace(name, 100 * 150, 400, true, 6, true, NULL);
  /* A cache smaller than one entry admits nothing. */
  run_trace(name, 1, 1, false, 7, false, NULL);
  printf("%-14s misses: %llu (object), %llu (object, pinned), %llu (bytes) of %d\n", name,
         (unsigned long long)m1, (unsigned long long)pinned_misses, (unsigned long long)byte_misses,
         NREQ);
  CHECK(m1 > 0 && m1 < NREQ);
}

static void test_bad_specs(void) {
  /* Bad specs. */
  hs_policy *p = NULL;
  CHECK_ST(hs_policy_create("no-such", 10, 10, NULL, &p), HS_ERR_INVALID);
  CHECK_CONTAINS(hs_last_error(), "known:");
  CHECK_ST(hs_policy_create("lru:x=1", 10, 10, NULL, &p), HS_ERR_INVALID);
  CHECK_CONTAINS(hs_last_error(), "unknown parameter");
  CHECK_ST(hs_policy_create("lru", 0, 10, NULL, &p), HS_ERR_INVALID);
  CHECK(p == NULL);
  CHECK_OK(hs_policy_create("clock-sweep", 10, 10, NULL, &p));
  CHECK(strcmp(hs_policy_spec(p), "clock-sweep") == 0);
  hs_access a = {.key = 1, .size = 11};
  CHECK_ST(hs_policy_insert(p, 0, &a), HS_ERR_INVALID); /* larger than the cache */
  a.size = 1;
  CHECK_OK(hs_policy_insert(p, 0, &a));
  CHECK_ST(hs_policy_insert(p, 0, &a), HS_ERR_MISUSE);  /* slot taken */
  CHECK_ST(hs_policy_insert(p, 10, &a), HS_ERR_MISUSE); /* no such slot */
  hs_policy_destroy(p);
}

const policy_section invariants_sections[] = {
    SECTION_FOR_EVERY(test_traces),
    SECTION_FOR_EVERY(test_name_any_case),
    SECTION_COMMON_CHECK(test_names),
    SECTION_COMMON_CHECK(test_bad_specs),
    SECTIONS_END,
};
