/*
 * tests/policy/lirs_clockpro.c — hand-worked examples for lirs (Jiang & Zhang,
 * SIGMETRICS 2002) and clockpro (Jiang, Chen & Zhang, USENIX ATC 2005),
 * traced step by step from the papers' rules, comparing after every access
 * the whole state (policy/irr.h's dumps: LIRS's stack S and list Q,
 * CLOCK-Pro's clock, hands and cold target), the resident set, the
 * standings and the history count; then bounded history under scans, pins,
 * ring hints, specs, and CLOCK-Pro's lock-free hits racing its misses.
 *
 * Keys 0..25 are written as the letters A..Z, in the dumps too.
 * Standing: lirs 3 = LIR, 2 = resident HIR in S, 1 = resident HIR not in S;
 * clockpro 3 = hot, 2 = cold in its test period, 1 = cold.
 */
#include "policy/irr.h"
#include "policy_driver.h"
#include "policy_sections.h"

#include <ctype.h>
#include <pthread.h>

static bool acc(driver *d, char key) {
  return driver_access(d, (uint32_t)(key - 'A'), 1, HS_NEXT_UNKNOWN, HS_ACCESS_READ);
}

/* An access with the ring hint. */
static bool acc_ring(driver *d, char c) {
  return driver_access_ring(d, (uint32_t)(c - 'A'));
}

/* The policy's dump with keys below 26 written as letters (m_c stays a
 * number). */
static const char *dump(const driver *d) {
  static char raw[1024], out[1024];
  int n = hs_policy_lirs_dump(d->p, raw, sizeof raw);
  if (n < 0) n = hs_policy_clockpro_dump(d->p, raw, sizeof raw);
  REQUIRE(n >= 0 && (size_t)n < sizeof raw);
  size_t o = 0;
  for (const char *s = raw; *s;) {
    if (s - raw >= 3 && strncmp(s - 3, "mc=", 3) == 0) {
      do out[o++] = *s++;
      while (isdigit((unsigned char)*s));
    } else if (isdigit((unsigned char)*s)) {
      unsigned long k = strtoul(s, (char **)&s, 10);
      if (k < 26)
        out[o++] = (char)('A' + k);
      else
        o += (size_t)snprintf(out + o, sizeof out - o, "%lu", k);
    } else {
      out[o++] = *s++;
    }
  }
  out[o] = '\0';
  return out;
}

/* The resident keys, as letters in alphabetical order. */
static const char *resident(const driver *d) {
  static char out[32];
  size_t o = 0;
  for (uint32_t k = 0; k < 26 && k < d->nkeys; k++)
    if (d->slot_of[k] >= 0) out[o++] = (char)('A' + k);
  out[o] = '\0';
  return out;
}

static uint32_t standing(const driver *d, char key) {
  int64_t s = d->slot_of[key - 'A'];
  return s < 0 ? 0 : hs_policy_standing(d->p, (uint32_t)s);
}

#define CHECK_STR(got, want)                                                                       \
  do {                                                                                             \
    const char *got_ = (got), *want_ = (want);                                                     \
    if (strcmp(got_, want_) == 0) {                                                                \
      check_passed++;                                                                              \
    } else {                                                                                       \
      check_failed++;                                                                              \
      fprintf(stderr, "%s:%d: got  \"%s\"\n%*s  want \"%s\"\n", __FILE__, __LINE__, got_,          \
              (int)strlen(__FILE__) + 6, "", want_);                                               \
    }                                                                                              \
  } while (0)

/* One access and the state it must leave. */
#define STEP(d, key, hit, state, res, ghosts)                                                      \
  do {                                                                                             \
    CHECK_EQ(acc(d, key), hit);                                                                    \
    CHECK_STR(dump(d), state);                                                                     \
    CHECK_STR(resident(d), res);                                                                   \
    CHECK_EQ(hs_policy_ghosts((d)->p), ghosts);                                                    \
    CHECK_EQ((d)->violations, 0);                                                                  \
  } while (0)

/* ------------------------------------------------------------------ LIRS */

/*
 * The paper's example (Table 1, blocks A..E over virtual times 1..9, and
 * the figure of S and Q after each kind of access): a cache
 * of L = 3 blocks, L_lirs = 2, L_hirs = 1 (hir's 1% rounds up to one
 * block). At time 10 the paper has LIR = {A, B} and the one resident HIR
 * block E; in recency order E(0) A(1) D(2) B(3) C(4), so S = E A D B (C,
 * older than the bottom LIR block B, is not in S) and Q = E. The paper
 * derives that state from the blocks' IRRs; the five accesses B A D A E
 * reach the same S and Q from an empty cache, which the first steps check.
 * Then the paper's accesses, one of each kind: (b) LIR block B, (c)
 * resident HIR block E in S, (d) non-resident block D, no longer in S, (e)
 * non-resident block C, not in S; and one more of ours, (f) non-resident
 * HIR block D found in S.
 */
static void test_lirs_paper_example(void) {
  driver d;
  driver_init(&d, "lirs", 3, 3, 26);
  /* The LIR set fills first (L_lirs = 2), then D is a resident HIR block. */
  STEP(&d, 'B', false, "S: B:L | Q:", "B", 0);
  STEP(&d, 'A', false, "S: A:L B:L | Q:", "AB", 0);
  STEP(&d, 'D', false, "S: D:H A:L B:L | Q: D", "ABD", 0);
  /* An LIR hit not at the bottom: A to the top, nothing pruned. */
  STEP(&d, 'A', true, "S: A:L D:H B:L | Q: D", "ABD", 0);
  /* A miss: D, Q's front, is replaced but stays in S, non-resident; E comes
   * in as a resident HIR block. This is the paper's state at time 10. */
  STEP(&d, 'E', false, "S: E:H A:L D:n B:L | Q: E", "ABE", 1);
  CHECK_EQ(standing(&d, 'A'), 3);
  CHECK_EQ(standing(&d, 'B'), 3);
  CHECK_EQ(standing(&d, 'E'), 2);

  /* (b) LIR block B, at the bottom: to the top; pruning removes D (HIR, now
   * at the bottom, its history forgotten) and stops at LIR block A. */
  STEP(&d, 'B', true, "S: B:L E:H A:L | Q: E", "ABE", 0);
  /* (c) resident HIR block E, in S: its IRR (1) beats the bottom LIR
   * block's recency (2), so E turns LIR and leaves Q; A, the bottom LIR
   * block, turns HIR, goes to the end of Q, and is pruned from S. */
  STEP(&d, 'E', true, "S: E:L B:L | Q: A", "ABE", 0);
  CHECK_EQ(standing(&d, 'E'), 3);
  CHECK_EQ(standing(&d, 'A'), 1);
  /* (d) D misses, not in S: Q's front A leaves (not in S: no history); D
   * is a resident HIR block on top of S and at the end of Q. */
  STEP(&d, 'D', false, "S: D:H E:L B:L | Q: D", "BDE", 0);
  CHECK_EQ(standing(&d, 'D'), 2);
  /* (e) C misses, not in S: D leaves Q and the cache but stays in S as a
   * non-resident HIR block; C is a resident HIR block. */
  STEP(&d, 'C', false, "S: C:H D:n E:L B:L | Q: C", "BCE", 1);
  /* (f) D misses but is in S: C leaves (non-resident, in S), D comes back
   * as LIR; B, the bottom LIR block, turns HIR, goes to Q, and is pruned. */
  STEP(&d, 'D', false, "S: D:L C:n E:L | Q: B", "BDE", 1);
  CHECK_EQ(standing(&d, 'D'), 3);
  CHECK_EQ(standing(&d, 'B'), 1);
  /* A resident HIR block not in S that is hit stays HIR (its IRR is
   * unknown) but goes on top of S and to the end of Q. */
  STEP(&d, 'B', true, "S: B:H D:L C:n E:L | Q: B", "BDE", 1);
  CHECK_EQ(standing(&d, 'B'), 2);
  driver_free(&d);
}

/* A scan never touches the LIR set, and the history it leaves in S stays
 * within one cache's worth, the lowest (oldest) entries forgotten first. */
static void test_lirs_scan(void) {
  driver d;
  driver_init(&d, "lirs", 10, 10, 200);
  /* Nine LIR blocks (L_hirs = 1), A..I, each used twice. */
  for (int round = 0; round < 2; round++)
    for (char k = 'A'; k <= 'I'; k++) acc(&d, k);
  for (char k = 'A'; k <= 'I'; k++) CHECK_EQ(standing(&d, k), 3);
  uint64_t most = 0;
  for (uint32_t k = 100; k < 150; k++) {
    driver_access(&d, k, 1, HS_NEXT_UNKNOWN, HS_ACCESS_READ);
    if (hs_policy_ghosts(d.p) > most) most = hs_policy_ghosts(d.p);
  }
  CHECK_EQ(most, 10);
  for (char k = 'A'; k <= 'I'; k++) CHECK_EQ(standing(&d, k), 3);
  /* Resident: the LIR set and the last block scanned; remembered: the ten
   * before it, newest first, above the LIR set's bottom. */
  CHECK_STR(dump(&d), "S: 149:H 148:n 147:n 146:n 145:n 144:n 143:n 142:n 141:n 140:n 139:n "
                      "I:L H:L G:L F:L E:L D:L C:L B:L A:L | Q: 149");
  /* A block scanned 11 accesses ago was forgotten: it comes back HIR. */
  driver_access(&d, 138, 1, HS_NEXT_UNKNOWN, HS_ACCESS_READ);
  CHECK_EQ(hs_policy_standing(d.p, (uint32_t)d.slot_of[138]), 2);
  /* One still remembered comes back LIR; A, the bottom LIR block, turns HIR. */
  driver_access(&d, 141, 1, HS_NEXT_UNKNOWN, HS_ACCESS_READ);
  CHECK_EQ(hs_policy_standing(d.p, (uint32_t)d.slot_of[141]), 3);
  CHECK_EQ(standing(&d, 'A'), 1);
  CHECK_EQ(d.violations, 0);
  driver_free(&d);
}

/* Byte mode: L_lirs and L_hirs in units; a block that turns LIR demotes
 * bottom LIR blocks until the LIR units fit. */
static void test_lirs_bytes(void) {
  driver d;
  driver_init(&d, "lirs:hir=0.2", 10, 10, 26);              /* L_hirs = 2, L_lirs = 8 units */
  driver_access(&d, 0, 4, HS_NEXT_UNKNOWN, HS_ACCESS_READ); /* A: LIR, 4 */
  driver_access(&d, 1, 4, HS_NEXT_UNKNOWN, HS_ACCESS_READ); /* B: LIR, 8 */
  driver_access(&d, 2, 2, HS_NEXT_UNKNOWN, HS_ACCESS_READ); /* C: HIR */
  CHECK_STR(dump(&d), "S: C:H B:L A:L | Q: C");
  /* C again: in S, so LIR; LIR units would be 10 > 8: A (bottom) turns HIR
   * and is pruned; 6 units of LIR. */
  driver_access(&d, 2, 2, HS_NEXT_UNKNOWN, HS_ACCESS_READ);
  CHECK_STR(dump(&d), "S: C:L B:L | Q: A");
  /* D, 3 units: the cache (10) is full; A (4) leaves; D is HIR. */
  driver_access(&d, 3, 3, HS_NEXT_UNKNOWN, HS_ACCESS_READ);
  CHECK_STR(dump(&d), "S: D:H C:L B:L | Q: D");
  CHECK_STR(resident(&d), "BCD");
  CHECK_EQ(hs_policy_used(d.p), 9);
  CHECK_EQ(d.violations, 0);
  driver_free(&d);
}

/* Removed blocks leave without history. Once no LIR block is left, S is
 * empty and no IRR can be seen, so new blocks fill the LIR set again, as at
 * the start. */
static void test_lirs_removals(void) {
  driver d;
  driver_init(&d, "lirs", 3, 3, 26);
  for (const char *k = "BADAE"; *k; k++) acc(&d, *k);
  CHECK_STR(dump(&d), "S: E:H A:L D:n B:L | Q: E");
  for (const char *k = "AB"; *k; k++) {
    uint32_t slot = (uint32_t)d.slot_of[*k - 'A'];
    hs_policy_remove(d.p, slot);
    d.slot_of[*k - 'A'] = -1;
    d.key_of[slot] = -1;
    d.free_stack[d.nfree++] = slot;
  }
  /* B's removal left D, then E, at S's bottom: both pruned. */
  CHECK_STR(dump(&d), "S: | Q: E");
  CHECK_EQ(hs_policy_ghosts(d.p), 0);
  STEP(&d, 'C', false, "S: C:L | Q: E", "CE", 0);
  STEP(&d, 'F', false, "S: F:L C:L | Q: E", "CEF", 0);
  /* Full again: G is HIR, and E leaves. */
  STEP(&d, 'G', false, "S: G:H F:L C:L | Q: G", "CFG", 0);
  driver_free(&d);
}

/* ------------------------------------------------------------- CLOCK-Pro */

/*
 * A memory of m = 4 pages, the cold target m_c starting at its least value,
 * 1 (cold=0.01 of 4, at least one page), and kept within [1, 3]. Each state
 * is worked out from the paper's rules (section 4: "Operations on searching
 * victim pages" and "Making CLOCK-Pro adaptive"):
 *   - on a fault, HAND_cold runs first for a free page;
 *   - HAND_cold: a resident cold page with a clear bit is replaced — kept as
 *     a non-resident cold page if in its test, removed if not; one with its
 *     bit set has it cleared and goes to the list head, hot if it was in its
 *     test (HAND_hot then makes room), else with a new test period;
 *   - HAND_hot (while hot pages exceed m - m_c): spares hot pages with the
 *     bit set (to the head, bit cleared), turns the first with a clear bit
 *     cold (to the head), ends the test of every cold page it passes
 *     (removing non-resident ones), and stops at a hot page;
 *   - a faulted page not on the clock comes in cold, in its test, at the
 *     head; a faulted non-resident page in its test comes in hot;
 *   - m_c +1 when a cold page is used during its test, -1 when a test ends
 *     without that.
 * The clock is written from its oldest page (the list tail) to the head;
 * hands start at the tail when first used ("-" until then).
 */
static void test_clockpro_example(void) {
  driver d;
  driver_init(&d, "clockpro", 4, 4, 26);
  /* The memory fills: hot pages until they hold m - m_c = 3, then cold. */
  STEP(&d, 'A', false, "A:H | hot=- cold=- test=- mc=1", "A", 0);
  STEP(&d, 'B', false, "A:H B:H | hot=- cold=- test=- mc=1", "AB", 0);
  STEP(&d, 'C', false, "A:H B:H C:H | hot=- cold=- test=- mc=1", "ABC", 0);
  STEP(&d, 'D', false, "A:H B:H C:H D:t | hot=- cold=D test=- mc=1", "ABCD", 0);
  /* E faults: HAND_cold finds D with a clear bit, in its test: D is
   * replaced and stays as a non-resident cold page; E is cold, in test. */
  STEP(&d, 'E', false, "A:H B:H C:H D:n E:t | hot=- cold=E test=- mc=1", "ABCE", 1);
  /* D faults while in its test. HAND_cold replaces E (kept non-resident).
   * D was used during its test: m_c = 2, so hot pages may hold only 2 and
   * HAND_hot, from the tail, turns A, then B, cold (to the head, not in
   * test) and stops at C. D comes in hot at the head. */
  STEP(&d, 'D', false, "C:H E:n A:c B:c D:H | hot=C cold=A test=- mc=2", "ABCD", 1);
  CHECK_EQ(standing(&d, 'A'), 1);
  CHECK_EQ(standing(&d, 'C'), 3);
  CHECK_EQ(standing(&d, 'D'), 3);
  /* A hit only sets A's bit. */
  STEP(&d, 'A', true, "C:H E:n A:c* B:c D:H | hot=C cold=A test=- mc=2", "ABCD", 1);
  /* F faults. HAND_cold finds A's bit set but A not in its test: the bit
   * is cleared, A goes to the head with a new test period, no status
   * change. Then B, clear bit, not in test: replaced and forgotten. */
  STEP(&d, 'F', false, "C:H E:n D:H A:t F:t | hot=C cold=A test=- mc=2", "ACDF", 1);
  CHECK_EQ(standing(&d, 'A'), 2);
  STEP(&d, 'F', true, "C:H E:n D:H A:t F:t* | hot=C cold=A test=- mc=2", "ACDF", 1);
  /* G faults: A (clear bit, in test) is replaced and kept non-resident. */
  STEP(&d, 'G', false, "C:H E:n D:H A:n F:t* G:t | hot=C cold=F test=- mc=2", "CDFG", 2);
  /* H faults. HAND_cold finds F used during its test: m_c = 3, hot pages
   * may hold 1, so HAND_hot turns C cold, then passes E, ending its test
   * unused (m_c = 2, E leaves the clock), and stops at D. F turns hot, to
   * the head. HAND_cold goes on: G, clear bit, in test, is replaced. */
  STEP(&d, 'H', false, "D:H A:n G:n C:c F:H H:t | hot=D cold=C test=- mc=2", "CDFH", 2);
  CHECK_EQ(standing(&d, 'F'), 3);
  CHECK_EQ(standing(&d, 'C'), 1);
  CHECK_EQ(standing(&d, 'H'), 2);
  /* A faults while in its test, but comes in cold: C is replaced (not in
   * test); A's use makes m_c 3, so HAND_hot must turn D cold — and on its
   * way to the next hot page, F, it passes A and G, ending their tests (G
   * unused: m_c = 2). A's test is over before it could be promoted. */
  STEP(&d, 'A', false, "F:H H:t D:c A:t | hot=F cold=H test=- mc=2", "ADFH", 0);
  CHECK_EQ(standing(&d, 'A'), 2);
  CHECK_EQ(standing(&d, 'D'), 1);
  /* I faults: H is replaced, non-resident in its test. */
  STEP(&d, 'I', false, "F:H H:n D:c A:t I:t | hot=F cold=D test=- mc=2", "ADFI", 1);
  /* H faults in its test: D is replaced (not in test); m_c = 3, HAND_hot
   * turns F, the only hot page, cold, and has no hot page left to stop at.
   * H, still in its test, is promoted: hot, at the head. */
  STEP(&d, 'H', false, "A:t I:t F:c H:H | hot=- cold=A test=- mc=3", "AFHI", 0);
  CHECK_EQ(standing(&d, 'H'), 3);
  CHECK_EQ(standing(&d, 'F'), 1);
  driver_free(&d);
}

/* A scan: each new page replaces the previous one, which stays as a
 * non-resident page in its test; past m of them (and the one-per-slot
 * bound) HAND_test ends the oldest test first. The hot pages never move. */
static void test_clockpro_scan(void) {
  driver d;
  driver_init(&d, "clockpro", 4, 4, 26);
  for (char k = 'A'; k <= 'H'; k++) acc(&d, k);
  CHECK_STR(dump(&d), "A:H B:H C:H D:n E:n F:n G:n H:t | hot=- cold=H test=- mc=1");
  /* I: H becomes the fifth non-resident page; HAND_test, from the tail,
   * passes A, B, C and ends D's test (D leaves), stopping at E. */
  STEP(&d, 'I', false, "A:H B:H C:H E:n F:n G:n H:n I:t | hot=- cold=I test=E mc=1", "ABCI", 4);
  STEP(&d, 'J', false, "A:H B:H C:H F:n G:n H:n I:n J:t | hot=- cold=J test=F mc=1", "ABCJ", 4);
  /* D was forgotten: it comes back as a new cold page. */
  STEP(&d, 'D', false, "A:H B:H C:H G:n H:n I:n J:n D:t | hot=- cold=D test=G mc=1", "ABCD", 4);
  CHECK_EQ(standing(&d, 'D'), 2);
  CHECK_EQ(d.violations, 0);
  driver_free(&d);
}

/* The fault rule's bound: after a fault, cold pages of both kinds may hold
 * at most m_c + m units; with more resident cold pages than m_c that is
 * tighter than the m non-resident units. 8 slots, so the one-per-slot bound
 * stays out of the way. */
static void test_clockpro_cold_bound(void) {
  driver d;
  driver_init(&d, "clockpro", 4, 8, 26);
  for (const char *k = "ABCDD"; *k; k++) acc(&d, *k);
  CHECK_STR(dump(&d), "A:H B:H C:H D:t* | hot=- cold=D test=- mc=1");
  /* E faults. HAND_cold finds D used in its test: m_c = 2, HAND_hot turns
   * A and B cold (to the head) and stops at C; D turns hot, to the head.
   * HAND_cold goes on to A (clear bit, not in test), which is replaced. */
  STEP(&d, 'E', false, "C:H B:c D:H E:t | hot=C cold=B test=- mc=2", "BCDE", 0);
  STEP(&d, 'F', false, "C:H D:H E:t F:t | hot=C cold=E test=- mc=2", "CDEF", 0);
  STEP(&d, 'G', false, "C:H D:H E:n F:t G:t | hot=C cold=F test=- mc=2", "CDFG", 1);
  STEP(&d, 'H', false, "C:H D:H E:n F:n G:t H:t | hot=C cold=G test=- mc=2", "CDGH", 2);
  STEP(&d, 'I', false, "C:H D:H E:n F:n G:n H:t I:t | hot=C cold=H test=- mc=2", "CDHI", 3);
  STEP(&d, 'J', false, "C:H D:H E:n F:n G:n H:n I:t J:t | hot=C cold=I test=- mc=2", "CDIJ", 4);
  /* K faults: I becomes the fifth non-resident page, one over m: HAND_test
   * ends E's test (unused: m_c = 1). Then K comes in: cold units 2 +
   * non-resident 4 > m_c + m = 5, so HAND_test also ends F's test. */
  STEP(&d, 'K', false, "C:H D:H G:n H:n I:n J:t K:t | hot=C cold=J test=G mc=1", "CDJK", 3);
  driver_free(&d);
}

/* ------------------------------------------------------- pins, rings, specs */

static void test_lirs_pins(void) {
  /* LIRS: the paper's state at time 10 with E, Q's only block, pinned: the
   * victim is the LIR block of largest recency, B, which leaves (S's
   * bottom, pruned with D below A); C comes in HIR. */
  driver d;
  driver_init(&d, "lirs", 3, 3, 26);
  const char *pre = "BADAE";
  for (const char *k = pre; *k; k++) acc(&d, *k);
  CHECK_STR(dump(&d), "S: E:H A:L D:n B:L | Q: E");
  d.pinned[d.slot_of['E' - 'A']] = true;
  STEP(&d, 'C', false, "S: C:H E:H A:L | Q: E C", "ACE", 0);
  driver_free(&d);
}

static void test_clockpro_pins(void) {
  /* CLOCK-Pro: HAND_cold steps over pinned cold pages. */
  driver d;
  driver_init(&d, "clockpro", 5, 5, 26);
  for (const char *k = "ABCDE"; *k; k++) acc(&d, *k); /* A..D hot, E cold */
  acc(&d, 'F');                                       /* E replaced */
  acc(&d, 'G');                                       /* F replaced */
  CHECK_STR(dump(&d), "A:H B:H C:H D:H E:n F:n G:t | hot=- cold=G test=- mc=1");
  d.pinned[d.slot_of['G' - 'A']] = true;
  /* The only resident cold page is pinned: the victim is a hot page, the
   * first unpinned from the tail, and it leaves no history. */
  STEP(&d, 'H', false, "B:H C:H D:H E:n F:n G:t H:t | hot=- cold=G test=- mc=1", "BCDGH", 2);
  driver_free(&d);
}

static void test_lirs_rings(void) {
  /* LIRS: a ring hit changes nothing; a ring miss on a block remembered in
   * S brings it in HIR, not LIR. */
  driver d;
  driver_init(&d, "lirs", 3, 3, 26);
  for (const char *k = "BADAE"; *k; k++) acc(&d, *k);
  CHECK(acc_ring(&d, 'B'));
  CHECK_STR(dump(&d), "S: E:H A:L D:n B:L | Q: E");
  CHECK(!acc_ring(&d, 'D'));
  CHECK_STR(dump(&d), "S: D:H E:n A:L B:L | Q: D");
  CHECK_EQ(standing(&d, 'D'), 2);
  driver_free(&d);
}

static void test_clockpro_rings(void) {
  /* CLOCK-Pro: a ring hit sets no bit; a ring fault on a non-resident page
   * in its test brings it in cold, in a new test, not hot. */
  driver d;
  driver_init(&d, "clockpro", 4, 4, 26);
  for (const char *k = "ABCDE"; *k; k++) acc(&d, *k);
  CHECK(acc_ring(&d, 'E'));
  CHECK_STR(dump(&d), "A:H B:H C:H D:n E:t | hot=- cold=E test=- mc=1");
  CHECK(!acc_ring(&d, 'D'));
  CHECK_STR(dump(&d), "A:H B:H C:H E:n D:t | hot=- cold=D test=- mc=1");
  CHECK_EQ(standing(&d, 'D'), 2);
  driver_free(&d);
}

static void test_lirs_specs(void) {
  hs_policy *p = NULL;
  CHECK_OK(hs_policy_create("lirs", 100, 100, NULL, &p));
  CHECK_STR(hs_policy_spec(p), "lirs:hir=0.01");
  CHECK_EQ(hs_policy_flags(p), 0);
  CHECK_EQ(hs_policy_clockpro_dump(p, NULL, 0), -1);
  hs_policy_destroy(p);
  CHECK_ST(hs_policy_create("lirs:hir=2", 10, 10, NULL, &p), HS_ERR_INVALID);
}

static void test_clockpro_specs(void) {
  hs_policy *p = NULL;
  CHECK_OK(hs_policy_create("clockpro:cold=0.1", 100, 100, NULL, &p));
  CHECK_STR(hs_policy_spec(p), "clockpro:cold=0.1");
  CHECK_EQ(hs_policy_flags(p), HS_POLICY_CONCURRENT_HIT);
  CHECK_EQ(hs_policy_lirs_dump(p, NULL, 0), -1);
  char small[8];
  CHECK_EQ(hs_policy_clockpro_dump(p, small, sizeof small),
           28); /* " | hot=- cold=- test=- mc=10" */
  CHECK_STR(small, " | hot=");
  hs_policy_destroy(p);
  CHECK_ST(hs_policy_create("clockpro:hir=0.1", 10, 10, NULL, &p), HS_ERR_INVALID);
  CHECK_CONTAINS(hs_last_error(), "unknown parameter");
}

/* ------------------------------------------- CLOCK-Pro's lock-free hits */

/* Hits from other threads, without a lock, while this thread misses
 * (victim/evict/insert): run under ThreadSanitizer in CI. */
static void test_clockpro_concurrent_hits(void) {
  enum { NSLOTS = 64, NKEYS = 1000, NREQS = 50000, NTHREADS = 3 };
  driver d;
  driver_init(&d, "clockpro", NSLOTS, NSLOTS, NKEYS);
  driver_race_hits(&d, NTHREADS, NREQS);
  CHECK_EQ(d.violations, 0);
  CHECK_EQ(hs_policy_resident(d.p), NSLOTS);
  CHECK(hs_policy_ghosts(d.p) <= NSLOTS);
  driver_free(&d);
}

const policy_section lirs_clockpro_sections[] = {
    SECTION_ONE("lirs", test_lirs_paper_example),
    SECTION_ONE("lirs", test_lirs_scan),
    SECTION_ONE("lirs", test_lirs_bytes),
    SECTION_ONE("lirs", test_lirs_removals),
    SECTION_ONE("clockpro", test_clockpro_example),
    SECTION_ONE("clockpro", test_clockpro_scan),
    SECTION_ONE("clockpro", test_clockpro_cold_bound),
    SECTION_ONE("lirs", test_lirs_pins),
    SECTION_ONE("clockpro", test_clockpro_pins),
    SECTION_ONE("lirs", test_lirs_rings),
    SECTION_ONE("clockpro", test_clockpro_rings),
    SECTION_ONE("lirs", test_lirs_specs),
    SECTION_ONE("clockpro", test_clockpro_specs),
    SECTION_ONE_THREADS("clockpro", test_clockpro_concurrent_hits),
    SECTIONS_END,
};
