/*
 * policy/adaptive.h — a look inside the adaptive policies, for tests and
 * dumps: the target size p that ARC and CAR tune as they run.
 *
 * Both keep p, the units they aim to give to their recency list T1 (the
 * rest of the cache going to the frequency list T2), and move it on every
 * ghost hit: up after a hit in B1 (T1 was too small), down after a hit in B2.
 */
#ifndef HOTSET_POLICY_ADAPTIVE_H
#define HOTSET_POLICY_ADAPTIVE_H

#include "hotset/policy.h"

/* ARC's target for T1 in capacity units (0 .. capacity), or -1 if `p` is
 * not an "arc" policy. */
double hs_policy_arc_target(const hs_policy *p);
/* CAR's target for T1 in capacity units (0 .. capacity), or -1 if `p` is
 * not a "car" policy. */
double hs_policy_car_target(const hs_policy *p);

#endif
