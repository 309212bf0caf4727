/*
 * tests/support/check.h — the test suite's assertions.
 *
 * CHECK(cond) and friends report file:line and the values on failure, count
 * it, and let the test go on; a test's main returns check_finish(), which
 * prints "N passed, N failed" and exits non-zero on any failure. REQUIRE
 * stops the test at once (for preconditions later checks depend on).
 *
 * Skips are said aloud, always as one line "SKIPPED: <test>: <why>" on
 * stdout: check_skip for a case that cannot run here (as root, without a
 * tool or a file) while the rest of the test goes on; a test that cannot
 * run at all prints the line and returns CHECK_SKIP_STATUS, which CTest is
 * told (SKIP_RETURN_CODE) to show as skipped rather than passed.
 */
#ifndef HOTSET_TESTS_CHECK_H
#define HOTSET_TESTS_CHECK_H

#include "hotset/status.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Atomic: a test's threads may check too. A program built from several
 * files counts in one place: it defines CHECK_COUNTERS_EXTERN and one of its
 * files defines the counters (tests/policy/test_policy.c). */
#ifdef CHECK_COUNTERS_EXTERN
extern atomic_uint check_passed, check_failed, check_skipped;
#else
static atomic_uint check_passed, check_failed, check_skipped;
#endif

/* The exit status of a test that skipped itself entirely (automake's). */
#define CHECK_SKIP_STATUS 77

#define CHECK(cond)                                                                                \
  do {                                                                                             \
    if (cond) {                                                                                    \
      check_passed++;                                                                              \
    } else {                                                                                       \
      check_failed++;                                                                              \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);                     \
    }                                                                                              \
  } while (0)

#define CHECK_EQ(a, b)                                                                             \
  do {                                                                                             \
    long long check_a_ = (long long)(a), check_b_ = (long long)(b);                                \
    if (check_a_ == check_b_) {                                                                    \
      check_passed++;                                                                              \
    } else {                                                                                       \
      check_failed++;                                                                              \
      fprintf(stderr, "%s:%d: CHECK_EQ failed: %s == %s (%lld != %lld)\n", __FILE__, __LINE__, #a, \
              #b, check_a_, check_b_);                                                             \
    }                                                                                              \
  } while (0)

/* A call that must return `want`; on mismatch also prints hs_last_error(). */
#define CHECK_ST(call, want)                                                                       \
  do {                                                                                             \
    hs_status check_st_ = (call);                                                                  \
    if (check_st_ == (want)) {                                                                     \
      check_passed++;                                                                              \
    } else {                                                                                       \
      check_failed++;                                                                              \
      fprintf(stderr, "%s:%d: %s returned %s, want %s (%s)\n", __FILE__, __LINE__, #call,          \
              hs_status_name(check_st_), hs_status_name(want), hs_last_error());                   \
    }                                                                                              \
  } while (0)

#define CHECK_OK(call) CHECK_ST(call, HS_OK)

#define CHECK_CONTAINS(haystack, needle)                                                           \
  do {                                                                                             \
    const char *check_h_ = (haystack);                                                             \
    if (check_h_ && strstr(check_h_, (needle))) {                                                  \
      check_passed++;                                                                              \
    } else {                                                                                       \
      check_failed++;                                                                              \
      fprintf(stderr, "%s:%d: \"%s\" does not contain \"%s\"\n", __FILE__, __LINE__,               \
              check_h_ ? check_h_ : "(null)", (needle));                                           \
    }                                                                                              \
  } while (0)

#define REQUIRE(cond)                                                                              \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      fprintf(stderr, "%s:%d: REQUIRE failed: %s (%s)\n", __FILE__, __LINE__, #cond,               \
              hs_last_error());                                                                    \
      exit(1);                                                                                     \
    }                                                                                              \
    check_passed++;                                                                                \
  } while (0)

/* One case skipped: `test` is the program's name, `why` says what is
 * missing (e.g. "real_permission: running as root, which ignores file
 * modes"). */
static inline void check_skip(const char *test, const char *why) {
  check_skipped++;
  printf("SKIPPED: %s: %s\n", test, why);
  fflush(stdout);
}

/* The largest log segment a test that runs every allowed size goes up to:
 * all of them (1 GiB), unless HOTSET_TEST_MAX_SEGMENT (bytes) caps it — the
 * sanitizer runs in .ci/run do, since a 1 GiB segment is written whole and
 * the sizes above the cap were run by the plain build. A capped run says so
 * in one SKIPPED line. */
static inline uint64_t check_max_segment(const char *test, uint64_t all) {
  const char *cap = getenv("HOTSET_TEST_MAX_SEGMENT");
  uint64_t v = cap && *cap ? strtoull(cap, NULL, 10) : 0;
  if (!v || v >= all) return all;
  char why[160];
  snprintf(why, sizeof why, "log segments above %llu bytes (HOTSET_TEST_MAX_SEGMENT)",
           (unsigned long long)v);
  check_skip(test, why);
  return v;
}

static inline int check_finish(void) {
  unsigned passed = atomic_load(&check_passed), failed = atomic_load(&check_failed),
           skipped = atomic_load(&check_skipped);
  if (skipped)
    printf("%u passed, %u failed, %u skipped\n", passed, failed, skipped);
  else
    printf("%u passed, %u failed\n", passed, failed);
  return failed ? 1 : 0;
}

#endif
