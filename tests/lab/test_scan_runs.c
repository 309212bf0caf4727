/*
 * tests/test_scan_runs.c — finding the sequential scans of a trace
 * (sim/scan_runs.h) and PostgreSQL's ring rule.
 *
 * Hand-written request sequences with the marks each must get: a run starts
 * at its first block and continues block after block (re-reads and the wrap
 * from the last block to block 0 included); streams are per pid and per
 * relation fork, so interleaved processes and relations do not break each
 * other's runs, and without pids every process is one; runs shorter than
 * HS_MIN_SCAN_RUN blocks are not scans; a new run on the same stream starts
 * a new scan, and so does the next block after a run that has covered its
 * whole relation (one scan after another, each from block 0). The rule's thresholds are
 * PostgreSQL's: more than a quarter of the pool, a ring of 32 buffers capped at an eighth of it.
 */
#include "check.h"
#include "hotset/status.h"
#include "sim/scan_runs.h"
#include "sim/trace.h"

#include <stdlib.h>

#define P(rel, fork, block) hs_pg_page_id(rel, fork, block)
#define START(s)            ((uint32_t)(s) | HS_RUN_START)

static void expect_marks(const char *what, const uint64_t *ids, const uint32_t *pids, uint64_t n,
                         const uint32_t *want) {
  hs_scan_runs runs;
  CHECK_OK(hs_scan_runs_find(ids, pids, n, &runs));
  for (uint64_t r = 0; r < n; r++) {
    if (runs.stream[r] != want[r]) {
      fprintf(stderr, "%s: request %llu marked %#x, want %#x\n", what, (unsigned long long)r,
              runs.stream[r], want[r]);
      CHECK(runs.stream[r] == want[r]);
      break;
    }
  }
  hs_scan_runs_free(&runs);
}

static void test_one_scan(void) {
  /* Relation 5 (10 blocks): 0..5 in order, then a jump. */
  uint64_t ids[] = {P(5, 0, 0), P(5, 0, 1), P(5, 0, 2), P(5, 0, 2),
                    P(5, 0, 3), P(5, 0, 4), P(5, 0, 9), P(5, 0, 5)};
  uint32_t want[] = {START(1), 1, 1, 1, 1, 1, 0, 0};
  expect_marks("one scan", ids, NULL, 8, want);
  hs_scan_runs runs;
  CHECK_OK(hs_scan_runs_find(ids, NULL, 8, &runs));
  CHECK_EQ(runs.nstreams, 1u);
  CHECK_EQ(runs.rel_blocks[0], 10u); /* the highest block read, plus one */
  hs_scan_runs_free(&runs);
}

static void test_short_runs_are_no_scans(void) {
  /* 3 blocks in order (fewer than HS_MIN_SCAN_RUN), re-reads not counted. */
  uint64_t ids[] = {P(5, 0, 7), P(5, 0, 8), P(5, 0, 8), P(5, 0, 8), P(5, 0, 9), P(5, 0, 1)};
  uint32_t want[] = {0, 0, 0, 0, 0, 0};
  expect_marks("short run", ids, NULL, 6, want);
}

static void test_wrap_and_restart(void) {
  /* A synchronized scan starting at block 6 of 8 wraps to 0; then the
   * stream starts again at block 2: a new scan. */
  uint64_t ids[] = {P(5, 0, 6), P(5, 0, 7), P(5, 0, 0), P(5, 0, 1), P(5, 0, 2),
                    P(5, 0, 2), P(5, 0, 3), P(5, 0, 4), P(5, 0, 5)};
  uint32_t want[] = {START(1), 1, 1, 1, 1, 1, 1, 1, 1};
  expect_marks("wrap", ids, NULL, 9, want);
  uint64_t again[] = {P(5, 0, 0), P(5, 0, 1), P(5, 0, 2), P(5, 0, 3), P(5, 0, 7),
                      P(5, 0, 2), P(5, 0, 3), P(5, 0, 4), P(5, 0, 5)};
  uint32_t want_again[] = {START(1), 1, 1, 1, 0, START(1), 1, 1, 1};
  expect_marks("restart", again, NULL, 9, want_again);
}

static void test_scan_after_scan(void) {
  /* Relation 5 has 4 blocks (fewer than the shortest run would need, so
   * HS_MIN_SCAN_RUN is 4 exactly): two whole scans from block 0, back to
   * back, are two scans with a ring each, not one run wrapping around. A
   * scan that starts at block 2 wraps, and its end (block 1) is followed by
   * a new scan at block 2. */
  uint64_t ids[] = {P(5, 0, 0), P(5, 0, 1), P(5, 0, 2), P(5, 0, 3), P(5, 0, 0), P(5, 0, 1),
                    P(5, 0, 2), P(5, 0, 3), P(5, 0, 2), P(5, 0, 3), P(5, 0, 0), P(5, 0, 1),
                    P(5, 0, 2), P(5, 0, 3), P(5, 0, 0), P(5, 0, 1)};
  uint32_t want[] = {START(1), 1, 1, 1, START(1), 1, 1, 1, START(1), 1, 1, 1, START(1), 1, 1, 1};
  expect_marks("scan after scan", ids, NULL, 16, want);
}

static void test_streams(void) {
  /* pid 1 scans relation 5 while pid 2 scans relation 6 and reads
   * relation 5 out of order; relation 5's fork 1 is a stream of its own. */
  uint64_t ids[] = {P(5, 0, 0), P(6, 0, 0), P(5, 0, 1), P(5, 0, 9), P(6, 0, 1), P(5, 0, 2),
                    P(5, 1, 3), P(6, 0, 2), P(5, 0, 3), P(6, 0, 3), P(5, 1, 4)};
  uint32_t pids[] = {1, 2, 1, 2, 2, 1, 1, 2, 1, 2, 1};
  /* Streams are numbered in order of first access: (1,5)=1, (2,6)=2,
   * (2,5)=3, (1,5 fork 1)=4. */
  uint32_t want[] = {START(1), START(2), 1, 0, 2, 1, 0, 2, 1, 2, 0};
  expect_marks("pids", ids, pids, 11, want);
  /* Without pids pid 2's read of block 9 breaks relation 5's run. */
  uint32_t want_one[] = {0, START(2), 0, 0, 2, 0, 0, 2, 0, 2, 0};
  expect_marks("no pids", ids, NULL, 11, want_one);
}

static void test_rule(void) {
  CHECK(!hs_pg_scan_uses_ring(512, 2048)); /* a quarter is not more */
  CHECK(hs_pg_scan_uses_ring(513, 2048));
  CHECK_EQ(hs_pg_bulkread_ring_size(2048), 32u);
  CHECK_EQ(hs_pg_bulkread_ring_size(128), 16u); /* an eighth of the pool */
  CHECK_EQ(hs_pg_bulkread_ring_size(7), 0u);
}

int main(void) {
  test_one_scan();
  test_short_runs_are_no_scans();
  test_wrap_and_restart();
  test_scan_after_scan();
  test_streams();
  test_rule();
  return check_finish();
}
