/*
 * policy/registry.c — every replacement policy hotset knows, by name.
 * One line per policy; the order is the order `hs_policy_names` lists them.
 */
#include "policy/policy_impl.h"

extern const hs_policy_ops hs_policy_lru, hs_policy_fifo, hs_policy_clock, hs_policy_clock_sweep,
    hs_policy_s3fifo, hs_policy_sieve, hs_policy_slru, hs_policy_lru_k, hs_policy_twolist,
    hs_policy_midpoint, hs_policy_belady, hs_policy_2q, hs_policy_arc, hs_policy_car,
    hs_policy_lirs, hs_policy_clockpro, hs_policy_fixedset, hs_policy_clock_admit;

// clang-format off
const hs_policy_ops *const hs_all_policies[] = {
    &hs_policy_lru,
    &hs_policy_fifo,
    &hs_policy_clock,
    &hs_policy_clock_sweep,
    &hs_policy_2q,
    &hs_policy_arc,
    &hs_policy_car,
    &hs_policy_lirs,
    &hs_policy_clockpro,
    &hs_policy_slru,
    &hs_policy_lru_k,
    &hs_policy_s3fifo,
    &hs_policy_sieve,
    &hs_policy_clock_admit,
    &hs_policy_twolist,
    &hs_policy_midpoint,
    &hs_policy_belady,
    &hs_policy_fixedset,
    NULL,
};
// clang-format on
