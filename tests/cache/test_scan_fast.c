/*
 * test_scan_fast — the scan detector's inline fast path (fc_scan_fast,
 * cache/frame_cache_internal.h) against the whole rule (fc_scan_note,
 * cache/scan_detect.c). Two detectors see the same accesses: one through
 * the fast path, falling back on fc_scan_note when it bails out, as the
 * fetch calls it; the other through fc_scan_note alone. After every access
 * both must have answered the same and hold the same state, field by field
 * (fc_scan_same), and a bail-out must have changed nothing. The accesses:
 * random lookups, scans forwards and backwards with gaps, steps back,
 * outliers and a row's overflow pages read twice, lookups and scans
 * interleaved, a scan read again until it fits (the ghosts), the boundary
 * key, keys at the top of the range, and scan_run from 0 to 64. The fast
 * path must also take most of them, or this tests nothing. The history's
 * index (hist_bits, hist_shared, hist_where: what lets a question skip the
 * search) must say what the history holds after every access.
 */
#include "cache/frame_cache_internal.h"
#include "check.h"

#include <stdlib.h>
#include <string.h>

#define KEYS     4096u /* distinct pages (a key's index: key % KEYS) */
#define CACHED   400u  /* frames the simulated cache holds */
#define GHOSTS   1024u
#define ACCESSES 200000u

typedef struct side {
  hs_frame_cache *c;
  fc_frame frames[KEYS];
} side;

typedef struct sim {
  side fast, ref;
  uint64_t keys[KEYS]; /* the key cached at each index, if any */
  bool cached[KEYS];
  uint32_t ncached;
  uint64_t rng;
  uint64_t fast_taken, slow_taken, steps, scans;
  bool failed;
} sim;

static uint64_t next(sim *m) {
  m->rng ^= m->rng << 13;
  m->rng ^= m->rng >> 7;
  m->rng ^= m->rng << 17;
  return m->rng;
}

static hs_frame_cache *fake_cache(uint32_t scan_run, bool boundary) {
  hs_frame_cache *c = aligned_alloc(_Alignof(hs_frame_cache),
                                    (sizeof *c + _Alignof(hs_frame_cache) - 1) /
                                        _Alignof(hs_frame_cache) * _Alignof(hs_frame_cache));
  REQUIRE(c != NULL);
  memset(c, 0, sizeof *c);
  c->capacity = CACHED;
  c->scan_run = scan_run;
  c->scan_fast_after = fc_scan_fast_after(scan_run);
  c->has_boundary_key = boundary;
  c->boundary_key = boundary ? 1 : 0;
  c->ghost = calloc(GHOSTS, sizeof *c->ghost);
  REQUIRE(c->ghost != NULL);
  c->ghost_mask = GHOSTS - 1;
  return c;
}

static void side_free(side *s) {
  free(s->c->ghost);
  free(s->c);
}

/* One access to `key`, to both detectors; the simulated cache then holds
 * it (evicting a random page, which becomes a ghost). */
static void access_key(sim *m, uint64_t key) {
  if (m->failed) return;
  uint32_t i = (uint32_t)(key % KEYS);
  bool hit = m->cached[i] && m->keys[i] == key;
  fc_frame *ff = hit ? &m->fast.frames[i] : NULL, *fr = hit ? &m->ref.frames[i] : NULL;

  fc_scan before = m->fast.c->scan;
  int r = fc_scan_fast(m->fast.c, key, ff);
  bool fast_answer;
  if (r == FC_SCAN_SLOW) {
    m->slow_taken++;
    if (!fc_scan_same(&before, &m->fast.c->scan)) {
      fprintf(stderr, "access %llu (key %llu): the fast path bailed out having changed the state\n",
              (unsigned long long)m->steps, (unsigned long long)key);
      m->failed = true;
    }
    fast_answer = fc_scan_note(m->fast.c, key, ff);
  } else {
    m->fast_taken++;
    fast_answer = r == 1;
  }
  bool ref_answer = fc_scan_note(m->ref.c, key, fr);
  if (fast_answer != ref_answer || !fc_scan_same(&m->fast.c->scan, &m->ref.c->scan)) {
    fprintf(stderr, "access %llu (key %llu, %s): fast path %d, fc_scan_note %d%s\n",
            (unsigned long long)m->steps, (unsigned long long)key, hit ? "hit" : "miss",
            (int)fast_answer, (int)ref_answer, fast_answer == ref_answer ? ", states differ" : "");
    m->failed = true;
  }
  if (!fc_scan_index_ok(&m->ref.c->scan)) {
    fprintf(stderr, "access %llu (key %llu): the history's index is stale\n",
            (unsigned long long)m->steps, (unsigned long long)key);
    m->failed = true;
  }
  m->steps++;
  m->scans += ref_answer;

  /* What the fetch does after the detector: the frame's tick, a miss
   * counted and the page cached. */
  side *sides[2] = {&m->fast, &m->ref};
  for (int s = 0; s < 2; s++) {
    hs_frame_cache *c = sides[s]->c;
    if (!hit) c->stats.misses++;
    sides[s]->frames[i].seen = c->scan.tick;
  }
  if (hit) return;
  if (!m->cached[i] && m->ncached == CACHED) {
    /* Evict one: a random cached page; the ring's ghosts are a scan's
     * recycled pages, here any page evicted. */
    uint32_t v = (uint32_t)(next(m) % KEYS);
    while (!m->cached[v]) v = (v + 1) % KEYS;
    m->cached[v] = false;
    m->ncached--;
    for (int s = 0; s < 2; s++) {
      hs_frame_cache *c = sides[s]->c;
      c->ghost[ghost_home(c, m->keys[v])] =
          (struct fc_ghost){.key = m->keys[v], .at = c->stats.misses + 1};
    }
  }
  if (!m->cached[i]) m->ncached++;
  m->cached[i] = true;
  m->keys[i] = key;
}

static uint64_t base_key(sim *m, uint64_t top) {
  return top ? UINT64_MAX - (next(m) % 3000) : next(m) % 3000 + 2;
}

/* A scan from `start`, `len` pages one way, with what SQLite's B-trees put
 * in a scan: gaps, a step back, an interior page elsewhere, a row's
 * overflow page read twice. */
static void scan(sim *m, uint64_t start, uint32_t len, int dir, uint32_t noise) {
  uint64_t k = start;
  for (uint32_t n = 0; n < len && !m->failed; n++) {
    access_key(m, k);
    uint32_t r = (uint32_t)(next(m) % 100);
    if (r < noise) access_key(m, k - (uint64_t)dir * (next(m) % 20)); /* a step back */
    if (r < noise / 2) access_key(m, base_key(m, false));             /* elsewhere */
    if (r >= 98) {
      access_key(m, k + 1000);
      access_key(m, k); /* the page before again */
    }
    uint64_t step = 1 + (r < 10 ? next(m) % 70 : 0); /* sometimes a gap, past SCAN_FWD too */
    k = dir > 0 ? k + step : k - step;
  }
}

static void lookups(sim *m, uint32_t n, uint64_t top) {
  for (uint32_t i = 0; i < n && !m->failed; i++) {
    uint32_t r = (uint32_t)(next(m) % 100);
    if (r < 5) access_key(m, 1);             /* page 1, the boundary key in half the runs */
    access_key(m, top ? UINT64_MAX - 3 : 3); /* a root */
    uint64_t k = base_key(m, top);
    access_key(m, k);
    if (r < 30) access_key(m, k + 1); /* a leaf beside */
    if (r < 10) access_key(m, k);     /* the page just fetched */
  }
}

static void run_one(uint32_t scan_run, bool boundary, uint64_t seed, bool top) {
  sim *m = calloc(1, sizeof *m);
  REQUIRE(m != NULL);
  m->fast.c = fake_cache(scan_run, boundary);
  m->ref.c = fake_cache(scan_run, boundary);
  m->rng = seed * 0x9e3779b97f4a7c15ull + 1;
  while (m->steps < ACCESSES && !m->failed) {
    uint32_t r = (uint32_t)(next(m) % 100);
    uint64_t start = base_key(m, top);
    if (r < 40) {
      lookups(m, 1 + (uint32_t)(next(m) % 200), top);
    } else if (r < 60) {
      scan(m, start, 10 + (uint32_t)(next(m) % 1500), next(m) % 4 ? 1 : -1,
           (uint32_t)(next(m) % 12));
    } else if (r < 75) {
      /* A scan that fits, read again and again (its ghosts come back). */
      uint32_t len = 40 + (uint32_t)(next(m) % 200);
      for (int round = 0; round < 6; round++) scan(m, 5000, len, 1, 0);
    } else if (r < 85) {
      /* Random pages: runs of new pages, hits and misses. */
      for (uint32_t i = 0; i < 300; i++) access_key(m, base_key(m, top));
    } else {
      /* Lookups and a scan in turn, the boundary key between. */
      for (int round = 0; round < 4; round++) {
        access_key(m, 1);
        lookups(m, 30, top);
        access_key(m, 1);
        scan(m, 9000, 300 + (uint32_t)(next(m) % 600), 1, 2);
      }
    }
  }
  printf("scan_run %u, boundary key %s, seed %llu%s: %llu accesses (%llu in a scan), fast path "
         "%llu, whole rule %llu\n",
         scan_run, boundary ? "on" : "off", (unsigned long long)seed,
         top ? ", keys at the top" : "", (unsigned long long)m->steps, (unsigned long long)m->scans,
         (unsigned long long)m->fast_taken, (unsigned long long)m->slow_taken);
  CHECK(!m->failed);
  /* The fast path must carry the common case (detection on and a
   * scan_run it takes). */
  if (scan_run >= SCAN_CONFIRM_NEW) CHECK(m->fast_taken > 3 * m->slow_taken);
  if (scan_run > 0) CHECK(m->scans > m->steps / 20 && m->scans < m->steps - m->steps / 20);
  side_free(&m->fast);
  side_free(&m->ref);
  free(m);
}

/* A sim whose two detectors start afresh, scan_run 32, page 1 the
 * boundary key. */
static sim *rule_sim(void) {
  sim *m = calloc(1, sizeof *m);
  REQUIRE(m != NULL);
  m->fast.c = fake_cache(32, true);
  m->ref.c = fake_cache(32, true);
  m->rng = 42;
  return m;
}

static void rule_sim_free(sim *m) {
  side_free(&m->fast);
  side_free(&m->ref);
  free(m);
}

/* fc_scan_note's rule 1: once two reuses have ended the run of new pages,
 * the detector is idle. A hit on a page fetched lately is then nothing at
 * all — no state changes (not even the tick), no scan — whichever page it
 * is (the last, the one before, another) and however many come; a hit on
 * a page not fetched lately is the first page of a new run of new pages
 * and nothing else (the run of keys does not see it). The fast path takes
 * both. */
static void test_rule_idle(void) {
  sim *m = rule_sim();
  access_key(m, 1);
  access_key(m, 9000); /* a page that will not have been fetched lately */
  for (uint64_t k = 100; k <= 1400; k += 100) access_key(m, k); /* new pages, misses */
  access_key(m, 1200);                                          /* a reuse */
  access_key(m, 1300);                                          /* the second: idle */
  CHECK_EQ(m->ref.c->scan.hits, SCAN_IDLE);
  CHECK_EQ(m->ref.c->scan.novel, 0);
  fc_scan idle = m->ref.c->scan;
  uint64_t scans = m->scans, fast = m->fast_taken;
  const uint64_t again[] = {1400, 1300, 1200, 1100, 1200, 1400, 1400, 1000};
  for (int round = 0; round < 50; round++)
    for (size_t i = 0; i < sizeof again / sizeof *again; i++) access_key(m, again[i]);
  CHECK(!m->failed);
  CHECK(fc_scan_same(&idle, &m->ref.c->scan));
  CHECK(fc_scan_same(&idle, &m->fast.c->scan));
  CHECK_EQ(m->scans, scans);
  CHECK_EQ(m->fast_taken - fast, 50 * sizeof again / sizeof *again);
  access_key(m, 9000); /* a hit, not fetched lately: a run of new pages begins */
  const fc_scan *s = &m->ref.c->scan;
  CHECK_EQ(m->fast_taken - fast, 50 * sizeof again / sizeof *again + 1);
  CHECK(s->hits == 1 && s->novel == 1 && s->heads[0] == 9000 && s->misses == 0);
  CHECK_EQ(s->tick, idle.tick + 1);
  CHECK(s->run == idle.run && s->pos == idle.pos && s->run_start == idle.run_start &&
        s->outl == idle.outl && s->outl_total == idle.outl_total && s->alt == idle.alt &&
        s->dir == idle.dir);
  CHECK_EQ(m->scans, scans);
  access_key(m, 7000); /* a miss: taken as any */
  CHECK(s->hits == 0 && s->novel == 2 && s->misses == 1);
  CHECK(!m->failed);
  rule_sim_free(m);
}

/* fc_scan_note's rule 3: a reuse counts towards the end of the run of new
 * pages and nothing else. A scan's run of keys goes across two pages
 * fetched lately, near each other and far from it (interior pages a
 * descent comes back to), as if they were not there: as outliers, the
 * second would restart the run at the first. */
static void test_rule_reuse(void) {
  sim *m = rule_sim();
  access_key(m, 1);
  access_key(m, 50000); /* the interior pages, fetched once */
  access_key(m, 50003);
  for (uint64_t k = 1000; k < 1010; k++) access_key(m, k); /* the leaves, a run */
  fc_scan before = m->ref.c->scan;
  CHECK_EQ(before.run, 10);
  CHECK_EQ(before.run_start, 1000);
  access_key(m, 50000); /* fetched 12 pages ago: a reuse */
  const fc_scan *s = &m->ref.c->scan;
  CHECK_EQ(s->hits, 1);
  CHECK_EQ(s->novel, before.novel);
  access_key(m, 50003); /* the second: the run of new pages ends */
  CHECK_EQ(s->hits, SCAN_IDLE);
  CHECK_EQ(s->novel, 0);
  CHECK_EQ(s->tick, before.tick + 2);
  CHECK(s->run == before.run && s->pos == before.pos && s->run_start == before.run_start &&
        s->outl == before.outl && s->outl_total == before.outl_total && s->alt == before.alt &&
        s->dir == before.dir);
  CHECK(!s->last_scan);
  for (uint64_t k = 1010; k < 1040; k++) access_key(m, k);
  CHECK_EQ(s->run, 40);
  CHECK_EQ(s->run_start, 1000);
  CHECK(s->last_scan); /* past scan_run: a scan */
  CHECK(!m->failed);
  rule_sim_free(m);
}

int main(void) {
  test_rule_idle();
  test_rule_reuse();
  const uint32_t runs[] = {0, 1, 4, 8, 16, 32, 64};
  for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++)
    for (uint64_t seed = 1; seed <= 3; seed++) run_one(runs[i], seed % 2, seed, false);
  run_one(32, true, 7, true);
  run_one(32, false, 8, true);
  return check_finish();
}
