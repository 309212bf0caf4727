/*
 * policy/irr.h — a look inside the inter-reference-recency policies, LIRS
 * and CLOCK-Pro, for tests and dumps.
 *
 * Each dump writes the policy's whole state as one line of text, keys in
 * decimal, so that a test can compare it with a state worked out by hand
 * from the paper:
 *
 *   lirs:     "S: 4:H 0:L 3:n 1:L | Q: 4"
 *             stack S from top to bottom (L = LIR, H = resident HIR,
 *             n = non-resident HIR), then list Q from its front (the next
 *             victim) to its end;
 *   clockpro: "0:H 1:H* 3:n 4:t | hot=0 cold=4 test=- mc=1"
 *             the clock from its oldest page to its newest (the list head),
 *             the order the hands sweep in (H = hot, t = resident cold in
 *             its test period, c = resident cold not in test, n =
 *             non-resident cold, * = reference bit set), then the key each
 *             hand rests on ("-": none yet) and the cold target m_c.
 *
 * They return the length the full text needs (like snprintf), or -1 if `p`
 * is not that policy.
 */
#ifndef HOTSET_POLICY_IRR_H
#define HOTSET_POLICY_IRR_H

#include "hotset/policy.h"

#include <stddef.h>

int hs_policy_lirs_dump(const hs_policy *p, char *buf, size_t len);
int hs_policy_clockpro_dump(const hs_policy *p, char *buf, size_t len);

#endif
