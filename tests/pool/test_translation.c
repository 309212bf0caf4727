/*
 * test_translation — the direct translation (hs_pool_options.translation,
 * pool/direct_map.h) against the hash table it stands in front of.
 *
 *  1. Same answers: one seeded stream of reads, updates, extensions and
 *     relation drops over several relations and forks, run on a hash pool
 *     and a direct pool side by side: every read's hit flag and page, and
 *     the final statistics, must be the same (the translation may change
 *     how a buffer is found, never which).
 *  2. What the index leaves out is still found: relation forks beyond the
 *     directory's room, and blocks at and past DIRECT_MAX_BLOCKS (a sparse
 *     file of 2^28 + 8 blocks).
 *  3. Races: threads reading random blocks through a pool far smaller than
 *     the data, so entries are rewritten under the readers all the time;
 *     every page read must be the one asked for (run under TSan and ASan).
 *  4. Misuse: an unknown translation is refused by name.
 */
#include "pool/direct_map.h"
#include "pool_util.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#define PAGE_SIZE 1024

static uint64_t rnd(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

static hs_pool *open_translated(const char *dir, uint32_t pages, hs_translation t) {
  hs_pool_options o;
  hs_pool_options_init(&o);
  o.dir = dir;
  o.pool_pages = pages;
  o.page_size = PAGE_SIZE;
  o.translation = t;
  return open_pool_from(&o);
}

/* Creates (rel, fork) with n stamped blocks through the storage manager. */
static void make_fork(hs_pool *pool, hs_relid rel, hs_fork fork, hs_blockno n) {
  hs_smgr *smgr = hs_pool_smgr(pool);
  unsigned char *page = test_page_alloc(PAGE_SIZE);
  REQUIRE(page && hs_smgr_create(smgr, rel, fork) == HS_OK);
  for (hs_blockno b = 0; b < n; b++) {
    hs_blockno got;
    stamp_page(page, rel * 16 + (hs_relid)fork, b, 0);
    REQUIRE(hs_smgr_extend(smgr, rel, fork, page, &got) == HS_OK);
  }
  free(page);
}

/* Reads (rel, fork, block) and returns its stamp value (UINT64_MAX if the
 * page is not that block's); *hit says how it was found. */
static uint64_t read_value(hs_pool *pool, hs_relid rel, hs_fork fork, hs_blockno block, bool *hit) {
  hs_buf b;
  hs_status st = hs_pool_read(pool, rel, fork, block, HS_READ_NORMAL, NULL, &b, hit);
  if (st != HS_OK) {
    fprintf(stderr, "read of block %u of %u/%d: %s\n", block, rel, (int)fork, hs_last_error());
    exit(1);
  }
  hs_buf_lock(pool, b, HS_LOCK_SHARE);
  uint64_t v = stamp_value(hs_buf_page(pool, b), rel * 16 + (hs_relid)fork, block);
  hs_buf_unlock(pool, b);
  hs_buf_release(pool, b);
  return v;
}

/* ---- 1. same answers ------------------------------------------------------ */

#define RELS       5
#define START_BLKS 40
#define OPS        40000

typedef struct side {
  char dir[256];
  hs_pool *pool;
  hs_blockno nblocks[RELS][2];
  uint64_t value[RELS][2][START_BLKS + 2000];
} side;

static void side_open(side *s, const char *name, hs_translation t) {
  testdir_make(s->dir, sizeof s->dir, name);
  s->pool = open_translated(s->dir, 32, t);
  for (hs_relid r = 0; r < RELS; r++)
    for (int f = 0; f < 2; f++) {
      make_fork(s->pool, 1000 + r, (hs_fork)f, START_BLKS);
      s->nblocks[r][f] = START_BLKS;
    }
}

static void test_same_answers(void) {
  static side h, d;
  side_open(&h, "translation-hash", HS_TRANSLATION_HASH);
  side_open(&d, "translation-direct", HS_TRANSLATION_DIRECT);
  CHECK(hs_pool_translation(h.pool) == HS_TRANSLATION_HASH);
  CHECK(hs_pool_translation(d.pool) == HS_TRANSLATION_DIRECT);
  uint64_t seed = 42, mismatched = 0, wrong = 0, drops = 0;
  for (int op = 0; op < OPS; op++) {
    uint64_t x = rnd(&seed);
    hs_relid r = (hs_relid)(x % RELS);
    int f = (int)((x >> 8) % 2);
    hs_relid rel = 1000 + r;
    unsigned kind = (unsigned)(x >> 16) % 1000;
    if (kind < 2) {
      /* Drop the relation's pages (both forks), as a TRUNCATE would, and
       * write its files again with new stamps: the index must forget
       * every entry of the relation. */
      drops++;
      side *sides[2] = {&h, &d};
      for (int k = 0; k < 2; k++) {
        side *s = sides[k];
        REQUIRE(hs_pool_drop_relation(s->pool, rel) == HS_OK);
        for (int ff = 0; ff < 2; ff++) {
          REQUIRE(hs_smgr_unlink(hs_pool_smgr(s->pool), rel, (hs_fork)ff) == HS_OK);
          make_fork(s->pool, rel, (hs_fork)ff, START_BLKS);
          s->nblocks[r][ff] = START_BLKS;
          memset(s->value[r][ff], 0, sizeof s->value[r][ff]);
        }
      }
      continue;
    }
    if (kind < 30 && h.nblocks[r][f] < START_BLKS + 2000) {
      side *sides[2] = {&h, &d};
      for (int k = 0; k < 2; k++) {
        side *s = sides[k];
        hs_buf b;
        hs_blockno blk;
        REQUIRE(hs_pool_extend(s->pool, rel, (hs_fork)f, NULL, true, &b, &blk) == HS_OK);
        CHECK_EQ(blk, s->nblocks[r][f]);
        stamp_page(hs_buf_page(s->pool, b), rel * 16 + (hs_relid)f, blk, 7);
        REQUIRE(hs_buf_mark_dirty(s->pool, b, 0, NULL) == HS_OK);
        hs_buf_unlock(s->pool, b);
        hs_buf_release(s->pool, b);
        s->value[r][f][blk] = 7;
        s->nblocks[r][f]++;
      }
      continue;
    }
    /* Skewed: most reads on a few blocks, so there are hits to compare. */
    hs_blockno n = h.nblocks[r][f];
    hs_blockno blk = (hs_blockno)((x >> 24) % (kind < 700 ? 4 : n));
    bool hit_h, hit_d;
    uint64_t vh = read_value(h.pool, rel, (hs_fork)f, blk, &hit_h);
    uint64_t vd = read_value(d.pool, rel, (hs_fork)f, blk, &hit_d);
    if (hit_h != hit_d) mismatched++;
    if (vh != h.value[r][f][blk] || vd != d.value[r][f][blk]) wrong++;
  }
  CHECK_EQ(mismatched, 0);
  CHECK_EQ(wrong, 0);
  CHECK(drops > 20);
  hs_pool_stats sh, sd;
  hs_pool_stats_get(h.pool, &sh);
  hs_pool_stats_get(d.pool, &sd);
  CHECK_EQ(hs_pool_stats_total(&sh, HS_STAT_HITS), hs_pool_stats_total(&sd, HS_STAT_HITS));
  CHECK_EQ(hs_pool_stats_total(&sh, HS_STAT_READS), hs_pool_stats_total(&sd, HS_STAT_READS));
  CHECK_EQ(hs_pool_stats_total(&sh, HS_STAT_EVICTIONS),
           hs_pool_stats_total(&sd, HS_STAT_EVICTIONS));
  printf("same answers: %llu hits, %llu evictions, %llu drops\n",
         (unsigned long long)hs_pool_stats_total(&sd, HS_STAT_HITS),
         (unsigned long long)hs_pool_stats_total(&sd, HS_STAT_EVICTIONS),
         (unsigned long long)drops);
  CHECK(hs_pool_stats_total(&sd, HS_STAT_HITS) > OPS / 4);
  CHECK(hs_pool_stats_total(&sd, HS_STAT_EVICTIONS) > OPS / 10);
  /* What a hit touches: the direct pool's translation is its entries, not
   * the buckets and descriptors. */
  hs_pool_memory mh, md;
  hs_pool_memory_usage(h.pool, &mh);
  hs_pool_memory_usage(d.pool, &md);
  CHECK_EQ(mh.direct_span, 0);
  CHECK(md.direct_span >= START_BLKS * sizeof(uint32_t));
  CHECK_EQ(mh.hit_bytes,
           mh.page_table + mh.descriptors + mh.states + mh.pins_per_thread + mh.policy);
  CHECK_EQ(md.hit_bytes, md.direct_span + md.states + md.pins_per_thread + md.policy);
  CHECK_OK(hs_pool_close(h.pool));
  CHECK_OK(hs_pool_close(d.pool));
  testdir_remove(h.dir);
  testdir_remove(d.dir);
}

/* ---- 2. what the index leaves out ------------------------------------------ */

static void test_many_forks(void) {
  char dir[256];
  testdir_make(dir, sizeof dir, "translation-forks");
  hs_pool *pool = open_translated(dir, 64, HS_TRANSLATION_DIRECT);
  enum { FORKS = DIRECT_MAX_FORKS + 40 };
  for (hs_relid r = 0; r < FORKS; r++) make_fork(pool, 5000 + r, HS_FORK_MAIN, 2);
  /* Twice round: the second round's reads of the forks still cached hit,
   * whether the index keeps them or the hash table does. */
  uint64_t wrong = 0;
  for (int round = 0; round < 2; round++)
    for (hs_relid r = 0; r < FORKS; r++)
      for (hs_blockno b = 0; b < 2; b++)
        if (read_value(pool, 5000 + r, HS_FORK_MAIN, b, NULL) != 0) wrong++;
  CHECK_EQ(wrong, 0);
  /* The last forks read are in the pool: hits, the last 40 through the
   * hash table (the directory is full). */
  bool hit = false;
  CHECK_EQ(read_value(pool, 5000 + FORKS - 1, HS_FORK_MAIN, 1, &hit), 0);
  CHECK(hit);
  CHECK_EQ(read_value(pool, 5000 + FORKS - 2, HS_FORK_MAIN, 0, &hit), 0);
  CHECK(hit);
  /* Every slot of the directory used, each fork with a reservation or
   * refused one (an address-space limit: ulimit -v, a sanitizer's); none
   * at all where the system never overcommits. */
  hs_pool_memory m;
  hs_pool_memory_usage(pool, &m);
  if (direct_map_never_overcommits()) {
    printf("vm.overcommit_memory is 2: no reservations, every fork in the hash table\n");
    CHECK_EQ(m.direct_forks + m.direct_refused, 0);
  } else {
    CHECK_EQ(m.direct_forks + m.direct_refused, DIRECT_MAX_FORKS);
    CHECK_EQ(m.direct_reserved, (uint64_t)m.direct_forks * DIRECT_MAX_BLOCKS * 4);
    if (m.direct_refused)
      printf("%u of %u reservations refused by the system\n", m.direct_refused, DIRECT_MAX_FORKS);
  }
  /* Neither call minds a NULL pool. */
  hs_pool_memory_usage(NULL, &m);
  CHECK_EQ(m.hit_bytes, 0);
  CHECK(hs_pool_translation(NULL) == HS_TRANSLATION_HASH);
  CHECK_OK(hs_pool_close(pool));
  testdir_remove(dir);
}

static void test_blocks_beyond(void) {
  char dir[256];
  testdir_make(dir, sizeof dir, "translation-far");
  hs_pool *pool = open_translated(dir, 16, HS_TRANSLATION_DIRECT);
  const hs_relid rel = 77;
  make_fork(pool, rel, HS_FORK_MAIN, 1);
  CHECK_OK(hs_pool_close(pool));
  /* A sparse file of 2^28 + 8 blocks: the last ones are past the index. */
  char name[64], path[512];
  hs_smgr_fork_filename(rel, HS_FORK_MAIN, name, sizeof name);
  snprintf(path, sizeof path, "%s/%s", dir, name);
  const hs_blockno far = DIRECT_MAX_BLOCKS + 8;
  int fd = open(path, O_RDWR);
  REQUIRE(fd >= 0);
  if (ftruncate(fd, (off_t)far * PAGE_SIZE) != 0) {
    printf("skipped: blocks past 2^28: this file system refuses a sparse file of %llu bytes "
           "(%s)\n",
           (unsigned long long)far * PAGE_SIZE, strerror(errno));
    close(fd);
    testdir_remove(dir);
    return;
  }
  close(fd);
  pool = open_translated(dir, 16, HS_TRANSLATION_DIRECT);
  hs_smgr *smgr = hs_pool_smgr(pool);
  unsigned char *page = test_page_alloc(PAGE_SIZE);
  const hs_blockno blocks[] = {DIRECT_MAX_BLOCKS - 1, DIRECT_MAX_BLOCKS, DIRECT_MAX_BLOCKS + 5};
  for (int i = 0; i < 3; i++) {
    stamp_page(page, rel * 16, blocks[i], 100 + (uint64_t)i);
    REQUIRE(hs_smgr_write(smgr, rel, HS_FORK_MAIN, blocks[i], page) == HS_OK);
  }
  for (int round = 0; round < 3; round++)
    for (int i = 0; i < 3; i++) {
      bool hit;
      CHECK_EQ(read_value(pool, rel, HS_FORK_MAIN, blocks[i], &hit), 100 + (uint64_t)i);
      CHECK(hit == (round > 0));
    }
  /* Evict them all through other pages (holes: zeros, no stamp), then read
   * again: still right. */
  for (hs_blockno b = 1; b < 40; b++)
    CHECK_EQ(read_value(pool, rel, HS_FORK_MAIN, b, NULL), UINT64_MAX);
  for (int i = 0; i < 3; i++)
    CHECK_EQ(read_value(pool, rel, HS_FORK_MAIN, blocks[i], NULL), 100 + (uint64_t)i);
  free(page);
  CHECK_OK(hs_pool_close(pool));
  testdir_remove(dir);
}

/* ---- 3. races ---------------------------------------------------------------- */

#define RACE_THREADS 4
#define RACE_OPS     40000
#define RACE_BLOCKS  48

typedef struct racer {
  hs_pool *pool;
  uint64_t seed;
  uint64_t wrong, hits;
} racer;

static void *race(void *arg) {
  racer *r = arg;
  for (int i = 0; i < RACE_OPS; i++) {
    uint64_t x = rnd(&r->seed);
    hs_relid rel = 300 + (hs_relid)(x % 2);
    hs_blockno blk = (hs_blockno)((x >> 8) % RACE_BLOCKS);
    bool hit;
    if (read_value(r->pool, rel, HS_FORK_MAIN, blk, &hit) != 0) r->wrong++;
    if (hit) r->hits++;
  }
  return NULL;
}

static void test_races(void) {
  char dir[256];
  testdir_make(dir, sizeof dir, "translation-race");
  hs_pool *pool = open_translated(dir, 12, HS_TRANSLATION_DIRECT);
  make_fork(pool, 300, HS_FORK_MAIN, RACE_BLOCKS);
  make_fork(pool, 301, HS_FORK_MAIN, RACE_BLOCKS);
  pthread_t t[RACE_THREADS];
  racer r[RACE_THREADS];
  for (int i = 0; i < RACE_THREADS; i++) {
    r[i] = (racer){.pool = pool, .seed = 900 + (uint64_t)i};
    pthread_create(&t[i], NULL, race, &r[i]);
  }
  uint64_t wrong = 0, hits = 0;
  for (int i = 0; i < RACE_THREADS; i++) {
    pthread_join(t[i], NULL);
    wrong += r[i].wrong;
    hits += r[i].hits;
  }
  CHECK_EQ(wrong, 0);
  CHECK(hits > 0);
  hs_pool_stats s;
  hs_pool_stats_get(pool, &s);
  CHECK(hs_pool_stats_total(&s, HS_STAT_EVICTIONS) > RACE_OPS);
  CHECK_EQ(s.pinned, 0);
  CHECK_OK(hs_pool_close(pool));
  testdir_remove(dir);
}

/* ---- 4. misuse ----------------------------------------------------------------- */

static void test_bad_option(void) {
  char dir[256];
  testdir_make(dir, sizeof dir, "translation-bad");
  hs_pool_options o;
  hs_pool_options_init(&o);
  o.dir = dir;
  o.pool_pages = 16;
  o.translation = (hs_translation)7;
  hs_pool *pool = NULL;
  CHECK(hs_pool_open(&o, &pool) == HS_ERR_INVALID);
  CHECK(pool == NULL);
  CHECK(strstr(hs_last_error(), "translation") != NULL);
  testdir_remove(dir);
}

int main(void) {
  test_bad_option();
  test_same_answers();
  test_many_forks();
  test_blocks_beyond();
  test_races();
  return check_finish();
}
