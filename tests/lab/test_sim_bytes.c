/*
 * tests/test_sim_bytes.c — the simulator's byte mode (sim/sim.h) on a
 * trace small enough to follow by hand: objects of different sizes, one
 * exactly the cache's size (admitted: it evicts everything else) and one a
 * byte larger (a miss that is not admitted, leaving the cache as it was).
 * The trace is built in memory the way hs_sim_load leaves one (dense object
 * numbers, a size per request), so this checks the replay alone; every
 * policy's requests, misses, bytes, byte misses and refusals are checked
 * against the counts worked out below, then the same trace in object mode.
 */
#include "check.h"
#include "sim/sim.h"

#include <stdlib.h>
#include <string.h>

/* The trace: (object, size in bytes). Capacity 10 bytes. */
static const struct {
  char id;
  uint32_t size;
} trace[] = {
    {'A', 4}, {'B', 3},  {'A', 4},  {'C', 3},  {'D', 2},
    {'B', 3}, {'E', 10}, {'F', 11}, {'E', 10}, {'A', 4},
};
#define NREQ     (sizeof trace / sizeof trace[0])
#define CAPACITY 10

/*
 * Worked by hand, byte mode, capacity 10. Each step: hit or miss, what
 * goes out, the cache after it (most recent / newest first) and its bytes.
 *
 *  #  req    lru                          fifo
 *  1  A:4    miss  [A] 4                  miss  [A] 4
 *  2  B:3    miss  [B A] 7                miss  [B A] 7
 *  3  A:4    hit   [A B] 7                hit   [B A] 7
 *  4  C:3    miss  [C A B] 10 (full)      miss  [C B A] 10
 *  5  D:2    miss  B out: [D C A] 9       miss  A out: [D C B] 9
 *  6  B:3    miss  A out: [B D C] 8       hit
 *  7  E:10   miss  C D B out: [E] 10      miss  B C D out: [E] 10
 *  8  F:11   miss, not admitted: [E]      the same
 *  9  E:10   hit                          hit
 * 10  A:4    miss  E out: [A] 4           miss  E out: [A] 4
 *
 * clock (a hit sets the bit; the hand is the oldest): 3 sets A's bit; 5
 * clears it, requeues A and takes B; 6 takes C; 7 takes A, D, B; 9 sets E's
 * bit; 10 clears it, goes round and takes E: lru's misses. belady takes the
 * entry needed furthest ahead: at 5 C (never again), at 7 all three, at 10
 * E: fifo's misses.
 *
 *  lru, clock:   8 misses (1 2 4 5 6 7 8 10), byte misses
 *                4+3+3+2+3+10+11+4 = 40
 *  fifo, belady: 7 misses (1 2 4 5 7 8 10), byte misses 4+3+3+2+10+11+4 = 37
 *  All: 10 requests, 54 bytes requested, 1 not admitted (F).
 *
 * The two bounds in one trace: E (exactly the capacity) must be admitted —
 * were it refused, request 9 would miss too (one more miss, 10 more bytes,
 * 3 refusals); F (one byte over) must be refused without evicting E —
 * otherwise request 9 misses.
 */

typedef struct expect {
  const char *spec;
  uint64_t misses, byte_misses;
} expect;

static void check_run(const hs_sim_trace *t, const char *spec, uint64_t capacity, bool ignore_size,
                      uint64_t want_bytes, uint64_t want_misses, uint64_t want_byte_misses,
                      uint64_t want_not_admitted) {
  hs_sim_result r;
  hs_status st = hs_sim_run(t, spec, capacity, ignore_size, NULL, &r);
  CHECK_OK(st);
  if (st != HS_OK) return;
  if (r.misses != want_misses || r.byte_misses != want_byte_misses ||
      r.not_admitted != want_not_admitted || r.bytes != want_bytes)
    fprintf(stderr,
            "%s, capacity %llu%s: %llu misses, %llu byte misses, %llu not admitted, %llu bytes; "
            "want %llu, %llu, %llu, %llu\n",
            spec, (unsigned long long)capacity, ignore_size ? " objects" : " bytes",
            (unsigned long long)r.misses, (unsigned long long)r.byte_misses,
            (unsigned long long)r.not_admitted, (unsigned long long)r.bytes,
            (unsigned long long)want_misses, (unsigned long long)want_byte_misses,
            (unsigned long long)want_not_admitted, (unsigned long long)want_bytes);
  CHECK_EQ(r.requests, NREQ);
  CHECK_EQ(r.bytes, want_bytes);
  CHECK_EQ(r.misses, want_misses);
  CHECK_EQ(r.byte_misses, want_byte_misses);
  CHECK_EQ(r.not_admitted, want_not_admitted);
}

static void test_byte_mode(const hs_sim_trace *t) {
  const expect want[] = {
      {"lru", 8, 40},
      {"fifo", 7, 37},
      {"clock", 8, 40},
      {"belady", 7, 37},
      /* Ranked by reads, then first read: A 3 (4 bytes, 4 in all), B 2 (3,
       * 7), E 2 (10, 17), C, D, F. A and B fit in 10; E ends the set. Misses
       * 1 2 4 5 7 8 9: 4+3+3+2+10+11+10 = 43 (E is never cached). */
      {"fixedset", 7, 43},
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
    check_run(t, want[i].spec, CAPACITY, false, 54, want[i].misses, want[i].byte_misses, 1);

  /* One byte less: E no longer fits either, so both its requests miss and
   * are refused, and nothing is evicted for them. lru: 1 A, 2 B, (3 A hit),
   * 4 C (B out: [C A] 7), 5 D ([D C A] 9), 6 B (A out: [B D C] 8), 7 E,
   * 8 F and 9 E refused, 10 A (C out: [A B D] 9): 9 misses,
   * 4+3+3+2+3+10+11+10+4 = 50 bytes, 3 refusals. */
  check_run(t, "lru", CAPACITY - 1, false, 54, 9, 50, 3);
}

/* Object mode: every request counts 1 and byte misses are misses.
 * Capacity 3, lru: A B (A hit) C [C A B], D: B out, B: A out, E: C out,
 * F: D out, (E hit), A: B out — 8 misses. fifo: A B (A hit) C, D: A out,
 * (B hit), E: B out, F: C out, (E hit), A: D out — 7 misses. */
static void test_object_mode(const hs_sim_trace *t) {
  check_run(t, "lru", 3, true, NREQ, 8, 8, 0);
  check_run(t, "fifo", 3, true, NREQ, 7, 7, 0);
  /* fixedset keeps A, B and E (the three read most): their first reads and
   * C, D, F miss — 6. */
  check_run(t, "fixedset", 3, true, NREQ, 6, 6, 0);
}

/* The trace as hs_sim_load would leave it: objects numbered A = 0 on. */
static hs_sim_trace *build_trace(void) {
  hs_sim_trace *t = calloc(1, sizeof *t);
  REQUIRE(t != NULL);
  t->path = strdup("hand-computed");
  t->requests = NREQ;
  t->objects = 6; /* A .. F */
  t->obj = malloc(sizeof *t->obj * NREQ);
  t->size = malloc(sizeof *t->size * NREQ);
  REQUIRE(t->path && t->obj && t->size);
  for (size_t i = 0; i < NREQ; i++) {
    t->obj[i] = (uint32_t)(trace[i].id - 'A');
    t->size[i] = trace[i].size;
    t->bytes_requested += trace[i].size;
  }
  return t;
}

int main(void) {
  hs_sim_trace *t = build_trace();
  REQUIRE(hs_sim_need_future(t) == HS_OK);    /* for belady */
  REQUIRE(hs_sim_need_hindsight(t) == HS_OK); /* for fixedset */
  test_byte_mode(t);
  test_object_mode(t);
  hs_sim_trace_free(t);
  return check_finish();
}
