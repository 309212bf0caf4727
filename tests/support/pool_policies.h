/*
 * tests/support/pool_policies.h — every replacement policy the pool runs,
 * by name, for the tests that run one case per policy.
 */
#ifndef HOTSET_TESTS_POOL_POLICIES_H
#define HOTSET_TESTS_POOL_POLICIES_H

#include "policy/policy_impl.h"

#include <stdio.h>
#include <string.h>

/* Calls fn(name, arg) for each name policy_pool_names() lists; returns how
 * many there were. */
static inline int each_pool_policy(void (*fn)(const char *name, void *arg), void *arg) {
  char names[512];
  snprintf(names, sizeof names, "%s", policy_pool_names());
  int n = 0;
  for (char *save = NULL, *name = strtok_r(names, ", ", &save); name;
       name = strtok_r(NULL, ", ", &save), n++)
    fn(name, arg);
  return n;
}

#endif
