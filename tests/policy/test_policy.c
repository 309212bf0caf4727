/*
 * test_policy — the policy tests, one policy at a time (policy_sections.h):
 *
 *   test_policy NAME       every check for the registered policy NAME: the
 *                          checks every policy must pass, then its own
 *                          sections (CTest: policy_NAME);
 *   test_policy --common [NAME...]
 *                          the checks about the registry as a whole; with
 *                          names, also that they are exactly the registry's
 *                          policies in its order (CTest passes the list it
 *                          read from src/policy/registry.c: policy_common);
 *   test_policy --threads  the sections that start threads, for every
 *                          policy (CTest: policy_threads, which the TSan
 *                          run of CI runs);
 *   test_policy --all      everything above, every policy.
 *
 * A section about a policy the registry does not hold fails --common (a
 * misspelt name would otherwise never run).
 */
#include "check.h"
#include "policy_sections.h"

#include <stdio.h>
#include <string.h>

atomic_uint check_passed, check_failed, check_skipped;

static const policy_section *const tables[] = {
    invariants_sections,
    concurrency_flags_sections,
    key_space_sections,
    reference_sections,
    lru_recycle_first_sections,
    twoq_arc_car_sections,
    reference_twoq_arc_car_sections,
    lirs_clockpro_sections,
    reference_lirs_clockpro_sections,
    sieve_s3fifo_sections,
    slru_lru_k_sections,
    twolist_midpoint_belady_sections,
    clock_admit_sections,
    NULL,
};

static void run_section(const policy_section *s, const char *policy) {
  unsigned failed_before = check_failed;
  if (s->run)
    s->run();
  else
    s->run_for(policy);
  if (check_failed != failed_before)
    fprintf(stderr, "section %s (%s) failed\n", s->name, policy ? policy : "registry");
}

/* Every section of `kind` (for `policy` where that matters) whose threads
 * flag matches, or either when `threads` is -1. */
static int run_sections(section_kind kind, const char *policy, int threads) {
  int n = 0;
  for (int t = 0; tables[t]; t++)
    for (const policy_section *s = tables[t]; s->kind != SECTION_END; s++) {
      if (s->kind != kind || (threads >= 0 && s->threads != (threads != 0))) continue;
      if (kind == SECTION_POLICY && strcmp(s->policy, policy) != 0) continue;
      run_section(s, kind == SECTION_COMMON ? NULL : policy);
      n++;
    }
  return n;
}

static void run_policy(const char *policy, int threads) {
  int every = run_sections(SECTION_EVERY, policy, threads);
  int own = run_sections(SECTION_POLICY, policy, threads);
  printf("%s: %d checks for every policy, %d of its own\n", policy, every, own);
}

/* The names CTest registered tests for are the registry's, in order; and
 * every section about one policy names a registered one. */
static void check_registry(int argc, char **argv) {
  int n = 0;
  while (hs_all_policies[n]) n++;
  if (argc > 0) {
    if (argc != n) fprintf(stderr, "CTest lists %d policies, the registry %d\n", argc, n);
    CHECK_EQ(argc, n);
    for (int i = 0; i < argc && i < n; i++) {
      if (strcmp(argv[i], hs_all_policies[i]->name) != 0)
        fprintf(stderr, "CTest's policy %d is %s, the registry's %s\n", i, argv[i],
                hs_all_policies[i]->name);
      CHECK(strcmp(argv[i], hs_all_policies[i]->name) == 0);
    }
  }
  for (int t = 0; tables[t]; t++)
    for (const policy_section *s = tables[t]; s->kind != SECTION_END; s++) {
      if (s->kind != SECTION_POLICY) continue;
      if (!registered_policy(s->policy))
        fprintf(stderr, "section %s is about %s, which is not registered\n", s->name, s->policy);
      CHECK(registered_policy(s->policy) != NULL);
    }
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: test_policy NAME | --common [NAME...] | --threads | --all\n");
    return 2;
  }
  if (strcmp(argv[1], "--common") == 0) {
    check_registry(argc - 2, argv + 2);
    run_sections(SECTION_COMMON, NULL, -1);
  } else if (strcmp(argv[1], "--threads") == 0) {
    for (int i = 0; hs_all_policies[i]; i++) run_policy(hs_all_policies[i]->name, 1);
  } else if (strcmp(argv[1], "--all") == 0) {
    check_registry(0, NULL);
    run_sections(SECTION_COMMON, NULL, -1);
    for (int i = 0; hs_all_policies[i]; i++) run_policy(hs_all_policies[i]->name, -1);
  } else if (argc == 2 && registered_policy(argv[1])) {
    run_policy(argv[1], -1);
  } else {
    fprintf(stderr, "test_policy: %s is not a registered policy\n", argv[1]);
    return 2;
  }
  return check_finish();
}
