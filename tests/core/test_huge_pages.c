/*
 * test_huge_pages — hs_pool_options.huge_pages: OFF gives small pages; TRY
 * opens whatever the system allows and says what it got (a pool too small
 * for one huge page gets small ones); ON opens with huge pages or refuses
 * with a message naming them; a value out of range is refused. Every pool
 * reads and writes its pages the same, whatever memory it got. And
 * big_alloc_aligned, which direct I/O uses for a small pool's frames when
 * the file system asks for more than a page's alignment: every size and
 * alignment gives an aligned region, and a bad alignment is refused.
 */
#include "check.h"
#include "core/big_alloc.h"
#include "hotset/pool.h"
#include "pool_util.h"
#include "testdir.h"

#include <string.h>

/* hs_smgr_exists, which must not fail here. */
static bool fork_exists(hs_smgr *smgr, hs_relid rel, hs_fork fork) {
  bool exists = false;
  REQUIRE(hs_smgr_exists(smgr, rel, fork, &exists) == HS_OK);
  return exists;
}

static const hs_relid REL = 1;

/* Opens a pool of `pages` 8 KiB pages with `mode`; *st is hs_pool_open's. */
static hs_pool *open_mode(const char *dir, uint32_t pages, hs_huge_pages mode, hs_status *st) {
  hs_pool_options o;
  hs_pool_options_init(&o);
  o.dir = dir;
  o.pool_pages = pages;
  o.huge_pages = mode;
  hs_pool *pool = NULL;
  *st = hs_pool_open(&o, &pool);
  return pool;
}

/* Every frame written, evicted and read back: a relation twice the pool,
 * each block stamped through the pool, then checked. */
static void exercise(hs_pool *pool, uint32_t pages) {
  hs_smgr *smgr = hs_pool_smgr(pool);
  if (fork_exists(smgr, REL, HS_FORK_MAIN))
    REQUIRE(hs_smgr_unlink(smgr, REL, HS_FORK_MAIN) == HS_OK);
  make_relation(pool, REL, 2 * pages);
  for (hs_blockno b = 0; b < 2 * pages; b++) must_update(pool, REL, b, b + 1, 0);
  for (hs_blockno b = 0; b < 2 * pages; b++) {
    hs_buf buf = must_read(pool, REL, b, NULL);
    CHECK_EQ(stamp_value(hs_buf_page(pool, buf), REL, b), b + 1);
    hs_buf_release(pool, buf);
  }
}

static void test_aligned_alloc(void) {
  const size_t sizes[] = {1, 4096, 8192 * 16, 1u << 20, 3u << 20};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    for (size_t align = 4096; align <= 65536; align *= 2) {
      /* A small mapping first, so the next one is not aligned by luck. */
      void *pad = big_alloc(4096, HS_HUGE_PAGES_OFF, NULL);
      void *p = big_alloc_aligned(sizes[i], align, HS_HUGE_PAGES_OFF, NULL);
      CHECK(p != NULL && (uintptr_t)p % align == 0);
      if (p) memset(p, 1, sizes[i]);
      big_free(p, sizes[i]);
      big_free(pad, 4096);
    }
  }
  CHECK(big_alloc_aligned(4096, 3 * 4096, HS_HUGE_PAGES_OFF, NULL) == NULL);
}

int main(void) {
  test_aligned_alloc();
  char dir[256];
  testdir_make(dir, sizeof dir, "huge");
  hs_status st;

  /* 512 pages of 8 KiB: 4 MiB of frames, two huge pages' worth. */
  hs_pool *pool = open_mode(dir, 512, HS_HUGE_PAGES_OFF, &st);
  REQUIRE(st == HS_OK);
  CHECK_EQ(hs_pool_huge_pages(pool), HS_HUGE_PAGES_NONE);
  exercise(pool, 512);
  CHECK_OK(hs_pool_close(pool));

  pool = open_mode(dir, 512, HS_HUGE_PAGES_TRY, &st);
  REQUIRE(st == HS_OK);
  hs_huge_pages_used got = hs_pool_huge_pages(pool);
  CHECK(got == HS_HUGE_PAGES_NONE || got == HS_HUGE_PAGES_TRANSPARENT ||
        got == HS_HUGE_PAGES_EXPLICIT);
  printf("huge_pages try: %s\n", got == HS_HUGE_PAGES_EXPLICIT      ? "explicit"
                                 : got == HS_HUGE_PAGES_TRANSPARENT ? "transparent"
                                                                    : "none");
  exercise(pool, 512);
  CHECK_OK(hs_pool_close(pool));

  /* Too small for one huge page (16 pages: 128 KiB): small pages. */
  pool = open_mode(dir, 16, HS_HUGE_PAGES_TRY, &st);
  REQUIRE(st == HS_OK);
  CHECK_EQ(hs_pool_huge_pages(pool), HS_HUGE_PAGES_NONE);
  CHECK_OK(hs_pool_close(pool));

  /* ON: huge pages, or a refusal that names them. */
  pool = open_mode(dir, 512, HS_HUGE_PAGES_ON, &st);
  if (st == HS_OK) {
    CHECK(hs_pool_huge_pages(pool) != HS_HUGE_PAGES_NONE);
    CHECK_OK(hs_pool_close(pool));
  } else {
    CHECK_EQ(st, HS_ERR_INVALID);
    CHECK(strstr(hs_last_error(), "huge") != NULL);
  }

  pool = open_mode(dir, 512, (hs_huge_pages)7, &st);
  CHECK_EQ(st, HS_ERR_INVALID);
  CHECK(pool == NULL);
  CHECK(strstr(hs_last_error(), "huge_pages") != NULL);

  testdir_remove(dir);
  return check_finish();
}
