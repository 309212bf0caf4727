/*
 * test_clock_sweep — the victim order of PostgreSQL's clock-sweep on a
 * hand-worked example, and usage counts capped at 5.
 *
 * Four buffers hold blocks 0..3 (taken from the free list in order, usage 1
 * each). Extra pins raise block 0 to usage 3 and block 1 to 2. Reading block
 * 4 starts the hand at buffer 0:
 *   pass 1: b0 3->2, b1 2->1, b2 1->0, b3 1->0
 *   pass 2: b0 2->1, b1 1->0, b2 is 0: the victim, block 2 leaves.
 * Block 4 lands in buffer 2 with usage 1; the hand rests on buffer 3.
 * Reading block 5: b3 has usage 0 — victim at once, block 3 leaves.
 * Reading block 6: b0 1->0, b1 is 0 — victim, block 1 leaves.
 */
#include "pool_util.h"

static const hs_relid REL = 1;

static uint32_t usage_of(hs_pool *pool, hs_blockno block) {
  hs_buffer_info info;
  if (find_buffer(pool, REL, block, &info) < 0) return 99;
  return info.usage;
}

int main(void) {
  char dir[256];
  testdir_make(dir, sizeof dir, "clock-sweep");
  hs_pool *pool = open_pool(dir, 4, 1024, NULL, NULL);
  make_relation(pool, REL, 8);

  for (hs_blockno i = 0; i < 4; i++) hs_buf_release(pool, must_read(pool, REL, i, NULL));
  for (hs_blockno i = 0; i < 4; i++) CHECK_EQ(find_buffer(pool, REL, i, NULL), (hs_buf)i);
  for (int k = 0; k < 2; k++) hs_buf_release(pool, must_read(pool, REL, 0, NULL));
  hs_buf_release(pool, must_read(pool, REL, 1, NULL));
  CHECK_EQ(usage_of(pool, 0), 3);
  CHECK_EQ(usage_of(pool, 1), 2);
  CHECK_EQ(usage_of(pool, 2), 1);
  CHECK_EQ(usage_of(pool, 3), 1);

  hs_buf_release(pool, must_read(pool, REL, 4, NULL));
  CHECK_EQ(find_buffer(pool, REL, 2, NULL), HS_INVALID_BUF);
  CHECK_EQ(find_buffer(pool, REL, 4, NULL), 2);
  CHECK_EQ(usage_of(pool, 0), 1);
  CHECK_EQ(usage_of(pool, 1), 0);
  CHECK_EQ(usage_of(pool, 3), 0);
  CHECK_EQ(usage_of(pool, 4), 1);

  hs_buf_release(pool, must_read(pool, REL, 5, NULL));
  CHECK_EQ(find_buffer(pool, REL, 3, NULL), HS_INVALID_BUF);
  CHECK_EQ(find_buffer(pool, REL, 5, NULL), 3);

  hs_buf_release(pool, must_read(pool, REL, 6, NULL));
  CHECK_EQ(find_buffer(pool, REL, 1, NULL), HS_INVALID_BUF);
  CHECK_EQ(find_buffer(pool, REL, 6, NULL), 1);
  CHECK_EQ(usage_of(pool, 0), 0);
  CHECK_EQ(find_buffer(pool, REL, 0, NULL), 0);

  /* A pinned buffer is never the victim, whatever its count. */
  hs_buf pinned = must_read(pool, REL, 0, NULL); /* usage 0 -> 1, pinned */
  for (hs_blockno i = 1; i < 8; i++) hs_buf_release(pool, must_read(pool, REL, i, NULL));
  CHECK_EQ(find_buffer(pool, REL, 0, NULL), pinned);
  hs_buf_release(pool, pinned);

  /* The usage count stops at 5. */
  for (int k = 0; k < 20; k++) hs_buf_release(pool, must_read(pool, REL, 7, NULL));
  CHECK_EQ(usage_of(pool, 7), 5);

  CHECK_OK(hs_pool_close(pool));
  testdir_remove(dir);
  return check_finish();
}
