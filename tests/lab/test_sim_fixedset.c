/*
 * tests/test_sim_fixedset.c — the offline bound fixedset (the most-read
 * objects of the whole trace, kept fixed) against its definition, worked
 * out here independently of the simulator: on seeded skewed traces, in
 * object mode, in frames of one size and in byte mode with objects of
 * different sizes, at capacities from one entry to more than the trace
 * holds, its misses and byte misses are the requests less each member's
 * reads but one. (Belady is not compared: it may not leave a missed object
 * uncached, so neither bound need be below the other.) Then the
 * interface's promises: a frame cache refuses it; without hindsight it
 * admits everything and names victims in slot order.
 */
#include "check.h"
#include "hotset/frame_cache.h"
#include "hotset/policy.h"
#include "sim/sim.h"

#include <stdlib.h>
#include <string.h>

static uint64_t rng(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

/* A trace of n requests over k objects, skewed (the square of a uniform
 * draw), each object with one size: 1 when `sizes` is 0, else 1 .. sizes. */
static hs_sim_trace *skewed_trace(uint64_t seed, uint32_t n, uint32_t k, uint32_t sizes) {
  hs_sim_trace *t = calloc(1, sizeof *t);
  uint32_t *size_of = malloc(sizeof *size_of * k);
  uint32_t *dense = malloc(sizeof *dense * k);
  REQUIRE(t && size_of && dense);
  t->path = strdup("skewed");
  t->obj = malloc(sizeof *t->obj * n);
  t->size = malloc(sizeof *t->size * n);
  REQUIRE(t->path && t->obj && t->size);
  uint64_t s = seed * 2654435761u + 1;
  for (uint32_t i = 0; i < k; i++) {
    size_of[i] = sizes ? 1 + (uint32_t)(rng(&s) % sizes) : 1;
    dense[i] = UINT32_MAX;
  }
  for (uint32_t r = 0; r < n; r++) {
    double u = (double)(rng(&s) % 1000000) / 1000000.0;
    uint32_t id = (uint32_t)(u * u * k);
    if (dense[id] == UINT32_MAX) dense[id] = (uint32_t)t->objects++;
    t->obj[r] = dense[id];
    t->size[r] = size_of[id];
    t->bytes_requested += size_of[id];
  }
  t->requests = n;
  free(size_of);
  free(dense);
  return t;
}

/* The definition, by brute force: rank the objects by reads (then by
 * first read: dense numbers are in first-read order), take them in rank
 * order while their units fit (`unit` per object, or its size when unit
 * is 0), and count what is left. */
static void reference(const hs_sim_trace *t, uint64_t capacity, uint64_t unit, uint64_t *misses,
                      uint64_t *byte_misses) {
  uint64_t k = t->objects;
  uint64_t *reads = calloc(k, sizeof *reads);
  uint32_t *size = calloc(k, sizeof *size);
  bool *member = calloc(k, sizeof *member);
  REQUIRE(reads && size && member);
  for (uint64_t r = 0; r < t->requests; r++) {
    if (reads[t->obj[r]]++ == 0) size[t->obj[r]] = t->size[r];
  }
  uint64_t used = 0;
  for (;;) {
    /* The best object not yet taken (quadratic: the traces are small). */
    uint64_t best = k;
    for (uint64_t o = 0; o < k; o++)
      if (!member[o] && (best == k || reads[o] > reads[best])) best = o;
    if (best == k) break;
    uint64_t units = unit ? unit : size[best];
    if (used + units > capacity) break;
    used += units;
    member[best] = true;
  }
  *misses = 0;
  *byte_misses = 0;
  bool *seen = calloc(k, sizeof *seen);
  REQUIRE(seen);
  for (uint64_t r = 0; r < t->requests; r++) {
    uint32_t o = t->obj[r];
    if (!(member[o] && seen[o])) {
      ++*misses;
      *byte_misses += t->size[r];
    }
    seen[o] = true;
  }
  free(seen);
  free(reads);
  free(size);
  free(member);
}

static void compare(const hs_sim_trace *t, uint64_t capacity, bool ignore_size, uint64_t unit,
                    const char *what) {
  uint64_t want, want_bytes;
  reference(t, capacity, unit, &want, &want_bytes);
  hs_sim_result r;
  CHECK_OK(hs_sim_run(t, "fixedset", capacity, ignore_size, NULL, &r));
  if (r.misses != want || (!ignore_size && r.byte_misses != want_bytes))
    fprintf(stderr, "%s, capacity %llu: %llu misses, %llu byte misses; want %llu, %llu\n", what,
            (unsigned long long)capacity, (unsigned long long)r.misses,
            (unsigned long long)r.byte_misses, (unsigned long long)want,
            (unsigned long long)want_bytes);
  CHECK_EQ(r.misses, want);
  if (!ignore_size) CHECK_EQ(r.byte_misses, want_bytes);
}

static void test_against_definition(void) {
  for (uint64_t seed = 1; seed <= 6; seed++) {
    /* Object mode: every object counts one. */
    hs_sim_trace *t = skewed_trace(seed, 3000, 400, 0);
    REQUIRE(hs_sim_need_hindsight(t) == HS_OK);
    const uint64_t entries[] = {1, 2, 7, 50, 150, 399, 400, 1000};
    for (size_t i = 0; i < sizeof entries / sizeof *entries; i++)
      compare(t, entries[i], true, 1, "objects");
    hs_sim_trace_free(t);

    /* Frames: every request 8 bytes, the capacity in bytes (not always a
     * multiple of 8). */
    t = skewed_trace(seed, 3000, 400, 0);
    for (uint32_t r = 0; r < t->requests; r++) t->size[r] = 8;
    t->bytes_requested = 8 * (uint64_t)t->requests;
    REQUIRE(hs_sim_need_hindsight(t) == HS_OK);
    const uint64_t bytes[] = {8, 15, 400, 1204, 3200, 5000};
    for (size_t i = 0; i < sizeof bytes / sizeof *bytes; i++)
      compare(t, bytes[i], false, 8, "frames of 8 bytes");
    hs_sim_trace_free(t);

    /* Byte mode: objects of 1 .. 20 bytes; the set is the ranking's prefix
     * that fits. Also in object mode, where sizes do not count. */
    t = skewed_trace(seed, 3000, 400, 20);
    REQUIRE(hs_sim_need_hindsight(t) == HS_OK);
    const uint64_t caps[] = {1, 19, 20, 100, 777, 3000, 100000};
    for (size_t i = 0; i < sizeof caps / sizeof *caps; i++) {
      compare(t, caps[i], false, 0, "bytes");
      compare(t, caps[i] / 10 + 1, true, 1, "sized objects counted as one");
    }
    hs_sim_trace_free(t);
  }
}

/* A cache cannot know the trace's counts: the pool's rule (sim only) and
 * the frame cache's refusal. Without hindsight the policy admits all and
 * names the lowest resident slot not pinned, as its upcoming list says. */
static bool pin_zero(void *ctx, uint32_t slot) {
  (void)ctx;
  return slot == 0;
}

static void test_interface(void) {
  hs_policy *p = NULL;
  REQUIRE(hs_policy_create("fixedset", 4, 8, NULL, &p) == HS_OK);
  CHECK_EQ(hs_policy_flags(p), HS_POLICY_NEEDS_HINDSIGHT | HS_POLICY_SIM_ONLY);
  hs_access a = {.size = 1, .next = HS_NEXT_UNKNOWN};
  CHECK(hs_policy_admits(p, &a)); /* no hindsight: everything */
  a.hindsight_units = 4;
  CHECK(hs_policy_admits(p, &a));
  a.hindsight_units = 5;
  CHECK(!hs_policy_admits(p, &a));
  a.hindsight_units = 0;
  const uint32_t slots[] = {5, 2, 7};
  for (size_t i = 0; i < 3; i++) {
    a.key = 100 + i;
    CHECK_OK(hs_policy_insert(p, slots[i], &a));
  }
  uint32_t up[8];
  CHECK_EQ(hs_policy_upcoming_victims(p, up, 8), 3);
  CHECK(up[0] == 2 && up[1] == 5 && up[2] == 7);
  CHECK_EQ(hs_policy_victim(p, &a, NULL, NULL), 2);
  CHECK_OK(hs_policy_evict(p, 2));
  CHECK_EQ(hs_policy_victim(p, &a, NULL, NULL), 5);
  hs_policy *lru = NULL;
  REQUIRE(hs_policy_create("lru", 4, 8, NULL, &lru) == HS_OK);
  CHECK(hs_policy_memory(p) < hs_policy_memory(lru)); /* nothing of its own */
  hs_policy_destroy(lru);
  hs_policy_destroy(p);

  REQUIRE(hs_policy_create("fixedset", 2, 2, NULL, &p) == HS_OK);
  a.key = 1;
  CHECK_OK(hs_policy_insert(p, 0, &a));
  a.key = 2;
  CHECK_OK(hs_policy_insert(p, 1, &a));
  CHECK_EQ(hs_policy_victim(p, &a, pin_zero, NULL), 1);
  hs_policy_destroy(p);

  hs_frame_cache_options o;
  hs_frame_cache_options_init(&o);
  o.capacity = 8;
  o.policy = "fixedset";
  hs_frame_cache *c = NULL;
  CHECK_ST(hs_frame_cache_create(&o, &c), HS_ERR_INVALID);
  CHECK_CONTAINS(hs_last_error(), "runs only in the simulator");
  CHECK(c == NULL);
}

int main(void) {
  test_against_definition();
  test_interface();
  return check_finish();
}
