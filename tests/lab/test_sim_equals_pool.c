/*
 * tests/test_sim_equals_pool.c — the simulator predicts the pool's misses.
 *
 * 1. One deterministic trace of block numbers (a skewed popularity with
 *    short sequential runs) is read through a real pool (hs_pool_read, one
 *    thread, a real relation file, each page released after its read) and
 *    replayed by the simulator (sim/sim.h) from the same list, for every
 *    policy the pool accepts, in object mode and in byte mode with every
 *    object one byte (one size for all: slots are frames there too). The
 *    misses must be identical: the simulator hands out slots as the pool
 *    hands out buffers (free ones in order, then the victim's), and the
 *    pool's keys (tag hashes) and the simulator's (object numbers) are
 *    distinct per block in both. Byte mode uses one-byte objects because
 *    policies that size their parts as a fraction of the capacity (arc's
 *    target, car, clockpro, s3fifo's small queue) round that fraction in
 *    the capacity's units: with 8 KiB objects and a capacity in bytes they
 *    round differently from the pool's pages and miss a few times more or
 *    less — the same slots, a different cache size.
 *
 *    The pool's policy clock counts milliseconds, the simulator's requests.
 *    Two policies read it: midpoint runs with time=0 (every re-reference
 *    promotes, whatever the clock), and lru-k's reads are spaced so that
 *    each falls in a later millisecond than the one before — with crp=0
 *    lru-k then only compares times, and both clocks order the requests
 *    alike.
 *
 * 2. clock-sweep against a small model of PostgreSQL's StrategyGetBuffer
 *    written here: the free list first (buffers 0..n-1), then a hand from
 *    buffer 0; a loaded page has usage 1, each hit adds 1 up to 5; the hand
 *    passes a pinned buffer without lowering its count, and takes the
 *    first unpinned buffer with usage 0, lowering every other unpinned one
 *    it passes. The pool runs with some pages held pinned for a while; the
 *    model pins the same ones. The simulator (which has no pins) is checked
 *    against the model without them.
 */
#include "hotset/policy.h"
#include "pool_util.h"
#include "sim/sim.h"

#include <time.h>

enum { POOL_PAGES = 64, PAGE_SIZE = 8192, NBLOCKS = 300, NREQ = 4000, LRUK_NREQ = 1200 };
static const hs_relid REL = 7;

/* splitmix64: a fixed seed, the same trace on every run. */
static uint64_t next_random(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

typedef enum trace_kind { TRACE_SKEWED, TRACE_LOOP_AND_HOT, TRACE_UNIFORM } trace_kind;

/* `n` block numbers below NBLOCKS. Skewed: the product of two uniform
 * numbers favours small blocks (Zipf-like), with a sequential run of 8 to
 * 40 blocks now and then; loop-and-hot: a loop over 80 blocks (more than
 * the pool) interleaved with a hot set of 20; uniform: every block alike. */
static void make_trace(trace_kind kind, uint64_t seed, uint32_t *blocks, uint32_t n) {
  uint64_t rs = seed;
  uint32_t run = 0, at = 0, loop = 0;
  for (uint32_t i = 0; i < n; i++) {
    uint64_t r = next_random(&rs);
    switch (kind) {
    case TRACE_SKEWED:
      if (run == 0 && r % 100 == 0) {
        run = 8 + (uint32_t)(r >> 32) % 33;
        at = (uint32_t)(r >> 16) % NBLOCKS;
      }
      if (run) {
        run--;
        blocks[i] = at++ % NBLOCKS;
      } else {
        uint64_t x = (r >> 8) % NBLOCKS, y = (r >> 32) % NBLOCKS;
        blocks[i] = (uint32_t)(x * y / NBLOCKS);
      }
      break;
    case TRACE_LOOP_AND_HOT:
      blocks[i] = r % 3 ? 100 + loop++ % 80 : (uint32_t)(r >> 32) % 20;
      break;
    case TRACE_UNIFORM:
      blocks[i] = (uint32_t)(r >> 16) % NBLOCKS;
      break;
    }
  }
}

/* The list as a loaded trace, the way hs_sim_load leaves one: dense object
 * numbers in order of first request, one size for every request. */
static hs_sim_trace *sim_trace(const uint32_t *blocks, uint32_t n, uint32_t size) {
  hs_sim_trace *t = calloc(1, sizeof *t);
  REQUIRE(t);
  t->path = strdup("generated");
  t->obj = malloc(sizeof *t->obj * n);
  t->size = malloc(sizeof *t->size * n);
  REQUIRE(t->path && t->obj && t->size);
  uint32_t dense[NBLOCKS];
  for (uint32_t b = 0; b < NBLOCKS; b++) dense[b] = UINT32_MAX;
  for (uint32_t i = 0; i < n; i++) {
    if (dense[blocks[i]] == UINT32_MAX) {
      dense[blocks[i]] = (uint32_t)t->objects++;
      t->ws_bytes += size;
    }
    t->obj[i] = dense[blocks[i]];
    t->size[i] = size;
    t->bytes_requested += size;
  }
  t->requests = n;
  t->min_size = t->max_size = size;
  t->sized = size != 1;
  return t;
}

static uint64_t sim_misses(const hs_sim_trace *t, const char *spec, uint64_t capacity,
                           bool ignore_size) {
  hs_sim_result r;
  hs_status st = hs_sim_run(t, spec, capacity, ignore_size, NULL, &r);
  if (st != HS_OK) {
    fprintf(stderr, "hs_sim_run %s: %s\n", spec, hs_last_error());
    check_failed++;
    return UINT64_MAX;
  }
  return r.misses;
}

static uint64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Pages held pinned across later reads: (request that pinned it, buffer). */
typedef struct held_pin {
  uint32_t until;
  hs_buf buf;
  uint32_t block;
} held_pin;

/* Every PIN_EVERY-th read keeps its page pinned for PIN_FOR more reads. */
enum { PIN_EVERY = 23, PIN_FOR = 70, MAX_HELD = PIN_FOR / PIN_EVERY + 2 };

/* The pool's misses on `blocks` with `spec`, in a fresh pool on `dir`
 * (whose relation REL exists). `spaced`: each read starts in a later
 * millisecond than the previous one ended in. `pins`: hold pages pinned as
 * PIN_EVERY and PIN_FOR say. */
static uint64_t pool_misses(const char *dir, const char *spec, const uint32_t *blocks, uint32_t n,
                            bool spaced, bool pins) {
  hs_pool *pool = open_pool_with(dir, POOL_PAGES, PAGE_SIZE, spec, NULL, NULL);
  uint64_t misses = 0, last_ms = now_ms();
  held_pin held[MAX_HELD];
  unsigned nheld = 0;
  for (uint32_t i = 0; i < n; i++) {
    for (unsigned h = 0; h < nheld;)
      if (held[h].until == i) {
        CHECK_OK(hs_buf_release(pool, held[h].buf));
        held[h] = held[--nheld];
      } else {
        h++;
      }
    if (spaced)
      while (now_ms() <= last_ms) {
      }
    bool hit = false;
    hs_buf b = must_read(pool, REL, blocks[i], &hit);
    if (spaced) last_ms = now_ms();
    misses += !hit;
    if (pins && i % PIN_EVERY == 0) {
      REQUIRE(nheld < MAX_HELD);
      held[nheld++] = (held_pin){.until = i + PIN_FOR, .buf = b, .block = blocks[i]};
    } else {
      CHECK_OK(hs_buf_release(pool, b));
    }
  }
  while (nheld) CHECK_OK(hs_buf_release(pool, held[--nheld].buf));
  CHECK_OK(hs_pool_close(pool));
  return misses;
}

static void test_every_policy(const char *dir) {
  uint32_t *blocks = malloc(sizeof *blocks * NREQ);
  REQUIRE(blocks);
  make_trace(TRACE_SKEWED, 11, blocks, NREQ);
  hs_sim_trace *whole = sim_trace(blocks, NREQ, 1);
  hs_sim_trace *start = sim_trace(blocks, LRUK_NREQ, 1);
  char *names = strdup(hs_policy_names());
  REQUIRE(names);
  unsigned tried = 0;
  for (char *save = NULL, *name = strtok_r(names, ",", &save); name;
       name = strtok_r(NULL, ",", &save)) {
    hs_policy *probe;
    REQUIRE(hs_policy_create(name, POOL_PAGES, POOL_PAGES, NULL, &probe) == HS_OK);
    unsigned flags = hs_policy_flags(probe);
    hs_policy_destroy(probe);
    if (flags & HS_POLICY_SIM_ONLY) continue; /* belady: the pool refuses it */
    bool lru_k = strcmp(name, "lru-k") == 0;
    char spec[64];
    snprintf(spec, sizeof spec, "%s%s", name,
             strcmp(name, "midpoint") == 0 ? ":time=0"
             : lru_k                       ? ":crp=0"
                                           : "");
    uint32_t n = lru_k ? LRUK_NREQ : NREQ;
    uint64_t pool = pool_misses(dir, spec, blocks, n, lru_k, false);
    const hs_sim_trace *t = lru_k ? start : whole;
    uint64_t in_objects = sim_misses(t, spec, POOL_PAGES, true);
    uint64_t in_bytes = sim_misses(t, spec, POOL_PAGES, false);
    if (pool != in_objects || pool != in_bytes)
      fprintf(stderr, "%s: pool %llu misses, simulator %llu (objects), %llu (bytes)\n", spec,
              (unsigned long long)pool, (unsigned long long)in_objects,
              (unsigned long long)in_bytes);
    CHECK_EQ(in_objects, pool);
    CHECK_EQ(in_bytes, pool);
    /* A trace that never fills the pool would prove nothing. */
    CHECK(pool > (uint64_t)POOL_PAGES * 2);
    tried++;
  }
  CHECK(tried >= 15);
  free(names);
  hs_sim_trace_free(whole);
  hs_sim_trace_free(start);
  free(blocks);
}

/* ---- PostgreSQL's StrategyGetBuffer, modelled ---------------------------- */

typedef struct pg_model {
  int32_t page_of[POOL_PAGES]; /* block in each buffer, -1: none */
  int32_t buf_of[NBLOCKS];     /* buffer of each block, -1: none */
  uint8_t usage[POOL_PAGES];
  uint8_t pins[POOL_PAGES];
  uint32_t next_free, hand;
} pg_model;

static void pg_init(pg_model *m) {
  for (int b = 0; b < POOL_PAGES; b++) m->page_of[b] = -1, m->usage[b] = 0, m->pins[b] = 0;
  for (int k = 0; k < NBLOCKS; k++) m->buf_of[k] = -1;
  m->next_free = m->hand = 0;
}

/* One read; returns its buffer and says whether it was a miss. */
static uint32_t pg_read(pg_model *m, uint32_t block, bool *miss) {
  int32_t b = m->buf_of[block];
  if (b >= 0) {
    if (m->usage[b] < 5) m->usage[b]++;
    *miss = false;
    return (uint32_t)b;
  }
  *miss = true;
  uint32_t v;
  if (m->next_free < POOL_PAGES) {
    v = m->next_free++;
  } else {
    for (;;) {
      v = m->hand;
      m->hand = (m->hand + 1) % POOL_PAGES;
      if (m->pins[v]) continue;
      if (m->usage[v] == 0) break;
      m->usage[v]--;
    }
    m->buf_of[m->page_of[v]] = -1;
  }
  m->page_of[v] = (int32_t)block;
  m->buf_of[block] = (int32_t)v;
  m->usage[v] = 1;
  return v;
}

static uint64_t pg_misses(const uint32_t *blocks, uint32_t n, bool pins) {
  pg_model m;
  pg_init(&m);
  uint64_t misses = 0;
  uint32_t until[MAX_HELD], buf[MAX_HELD];
  unsigned nheld = 0;
  for (uint32_t i = 0; i < n; i++) {
    for (unsigned h = 0; h < nheld;)
      if (until[h] == i) {
        m.pins[buf[h]]--;
        nheld--;
        until[h] = until[nheld];
        buf[h] = buf[nheld];
      } else {
        h++;
      }
    bool miss;
    uint32_t b = pg_read(&m, blocks[i], &miss);
    misses += miss;
    if (pins && i % PIN_EVERY == 0) {
      m.pins[b]++;
      until[nheld] = i + PIN_FOR;
      buf[nheld++] = b;
    }
  }
  return misses;
}

static void test_clock_sweep_is_postgres(const char *dir) {
  uint32_t *blocks = malloc(sizeof *blocks * NREQ);
  REQUIRE(blocks);
  static const trace_kind kinds[] = {TRACE_SKEWED, TRACE_LOOP_AND_HOT, TRACE_UNIFORM};
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
    make_trace(kinds[k], 100 + k, blocks, NREQ);
    uint64_t model_pinned = pg_misses(blocks, NREQ, true);
    uint64_t model = pg_misses(blocks, NREQ, false);
    /* The pins must matter, or the pinned run would prove nothing new. */
    CHECK(model_pinned != model);
    CHECK_EQ(pool_misses(dir, "clock-sweep", blocks, NREQ, false, true), model_pinned);
    CHECK_EQ(pool_misses(dir, "clock-sweep", blocks, NREQ, false, false), model);
    hs_sim_trace *t = sim_trace(blocks, NREQ, 1);
    CHECK_EQ(sim_misses(t, "clock-sweep", POOL_PAGES, true), model);
    hs_sim_trace_free(t);
  }
  free(blocks);
}

int main(void) {
  char dir[256];
  testdir_make(dir, sizeof dir, "sim-equals-pool");
  hs_pool *pool = open_pool_with(dir, POOL_PAGES, PAGE_SIZE, NULL, NULL, NULL);
  make_relation(pool, REL, NBLOCKS);
  CHECK_OK(hs_pool_close(pool));

  test_every_policy(dir);
  test_clock_sweep_is_postgres(dir);

  testdir_remove(dir);
  return check_finish();
}
