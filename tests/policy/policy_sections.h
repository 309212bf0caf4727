/*
 * tests/policy/policy_sections.h — the policy tests as sections of one
 * program, tests/policy/test_policy.c, which CTest runs once per policy of
 * the registry (src/policy/registry.c) as `policy_<name>`.
 *
 * A section is one of:
 *   - SECTION_EVERY: a check every policy must pass, called with each
 *     registered policy's name in turn (invariants, concurrency flags, key
 *     space): a policy added to the registry gets them without a test list
 *     being edited;
 *   - SECTION_POLICY: a check about one policy (its hand-worked examples,
 *     its reference model), run by that policy's `policy_<name>`;
 *   - SECTION_COMMON: a check about the registry as a whole (names, bad
 *     specs), run by `policy_common`.
 * A section marked `threads` starts threads (lock-free hits racing
 * misses); `policy_threads`, the run ThreadSanitizer makes, runs those
 * alone, for every policy.
 *
 * Each file of sections keeps its helpers static and exports one table,
 * ended by an entry whose kind is SECTION_END; test_policy.c lists the
 * tables. The checks of every file count toward one total (check.h's
 * counters are shared: CHECK_COUNTERS_EXTERN).
 */
#ifndef HOTSET_TESTS_POLICY_SECTIONS_H
#define HOTSET_TESTS_POLICY_SECTIONS_H

#include "policy/policy_impl.h"

#include <stdbool.h>
#include <string.h>

typedef enum section_kind {
  SECTION_END = 0,
  SECTION_EVERY,
  SECTION_POLICY,
  SECTION_COMMON
} section_kind;

typedef struct policy_section {
  section_kind kind;
  const char *policy; /* SECTION_POLICY: the policy it is about */
  const char *name;
  bool threads;
  void (*run)(void);                   /* SECTION_POLICY, SECTION_COMMON */
  void (*run_for)(const char *policy); /* SECTION_EVERY, or a SECTION_POLICY shared by several */
} policy_section;

#define SECTION_ONE(pol, fn)                                                                       \
  { SECTION_POLICY, pol, #fn, false, fn, NULL }
#define SECTION_ONE_FOR(pol, fn)                                                                   \
  { SECTION_POLICY, pol, #fn, false, NULL, fn }
#define SECTION_ONE_THREADS(pol, fn)                                                               \
  { SECTION_POLICY, pol, #fn, true, fn, NULL }
#define SECTION_FOR_EVERY(fn)                                                                      \
  { SECTION_EVERY, NULL, #fn, false, NULL, fn }
#define SECTION_FOR_EVERY_THREADS(fn)                                                              \
  { SECTION_EVERY, NULL, #fn, true, NULL, fn }
#define SECTION_COMMON_CHECK(fn)                                                                   \
  { SECTION_COMMON, NULL, #fn, false, fn, NULL }
#define SECTIONS_END                                                                               \
  { SECTION_END, NULL, NULL, false, NULL, NULL }

/* The registered policy of that name, or NULL. */
static inline const hs_policy_ops *registered_policy(const char *name) {
  for (int i = 0; hs_all_policies[i]; i++)
    if (strcmp(hs_all_policies[i]->name, name) == 0) return hs_all_policies[i];
  return NULL;
}

/* Every policy: invariants.c, concurrency_flags.c, key_space.c. */
extern const policy_section invariants_sections[], concurrency_flags_sections[],
    key_space_sections[];
/* One policy, or a few written together. */
extern const policy_section reference_sections[], lru_recycle_first_sections[],
    twoq_arc_car_sections[], reference_twoq_arc_car_sections[], lirs_clockpro_sections[],
    reference_lirs_clockpro_sections[], sieve_s3fifo_sections[], slru_lru_k_sections[],
    twolist_midpoint_belady_sections[], clock_admit_sections[];

#endif
