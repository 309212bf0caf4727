/*
 * test_pins — pins are counts that every path agrees on.
 *
 * Threads pin privately (their own counter array) while they own a
 * statistics shard, and through the shared state word beyond that. A pin
 * belongs to the thread that took it; a buffer is handed to another thread
 * by that thread pinning it again before the giver releases. Checked here:
 * the dump and the statistics count every pin, whichever way it was taken;
 * a buffer pinned by any thread is never evicted or dropped; a buffer handed
 * over and released by its new holder is left unpinned.
 */
#include "pool/stat_shards.h"
#include "pool_util.h"

#include <pthread.h>

#define MANY_THREADS 80 /* more than the 64 private-pin shards */

static const hs_relid REL = 12;

typedef struct holder {
  hs_pool *pool;
  hs_blockno block;
  hs_buf buf;
  pthread_barrier_t *pinned, *release;
  bool hand_over; /* main pins it again before the holder lets go */
} holder;

static void *hold_pin(void *arg) {
  holder *h = arg;
  h->buf = must_read(h->pool, REL, h->block, NULL);
  pthread_barrier_wait(h->pinned);
  pthread_barrier_wait(h->release);
  /* Not CHECK: its counters are not for threads. */
  if (hs_buf_release(h->pool, h->buf) != HS_OK) {
    fprintf(stderr, "holder's release: %s\n", hs_last_error());
    exit(1);
  }
  return NULL;
}

static uint32_t total_pins(hs_pool *pool) {
  uint32_t n = hs_pool_nbuffers(pool), sum = 0;
  hs_buffer_info *all = calloc(n, sizeof *all);
  REQUIRE(hs_pool_dump(pool, all, n) == HS_OK);
  for (uint32_t i = 0; i < n; i++) sum += all[i].pins;
  free(all);
  return sum;
}

/* ---- a thread that exits holding a pin ---------------------------------------
 *
 * Private pin counters are released with a plain store by their owner, so a
 * shard id (and its counters) must never pass to another thread while its
 * owner may still release a pin. A thread pins a buffer and leaves its
 * release to a thread-specific destructor of its own, created after the
 * pool's (so it runs after the pool's shard destructor). Its shard id must
 * not be given to the next thread, and the late release must work. A
 * thread that exits holding nothing gives its id back as before. */

typedef struct leaver {
  hs_pool *pool;
  hs_buf buf;
  bool keep_pin;
  int shard;
} leaver;

static pthread_key_t late_key;

static void late_release(void *arg) {
  leaver *l = arg;
  CHECK_OK(hs_buf_release(l->pool, l->buf));
}

static void *leave(void *arg) {
  leaver *l = arg;
  l->buf = must_read(l->pool, REL, 0, NULL);
  l->shard = hs_my_shard.id;
  if (l->keep_pin)
    pthread_setspecific(late_key, l);
  else
    CHECK_OK(hs_buf_release(l->pool, l->buf));
  return NULL;
}

static void *note_shard(void *arg) {
  int *shard = arg;
  stat_shard_claim();
  *shard = hs_my_shard.id;
  return NULL;
}

static int shard_after(void) {
  int shard = -1;
  pthread_t t;
  pthread_create(&t, NULL, note_shard, &shard);
  pthread_join(t, NULL);
  return shard;
}

static void test_exit_holding_a_pin(hs_pool *pool) {
  pthread_key_create(&late_key, late_release);
  leaver l = {.pool = pool, .keep_pin = true};
  pthread_t t;
  pthread_create(&t, NULL, leave, &l);
  pthread_join(t, NULL);
  CHECK(l.shard >= 0 && l.shard < HS_STAT_SHARDS);
  CHECK_EQ(total_pins(pool), 0); /* the late release worked */
  CHECK(shard_after() != l.shard);
  /* Holding nothing at its exit, a thread's id is free for the next. */
  leaver clean = {.pool = pool, .keep_pin = false};
  pthread_create(&t, NULL, leave, &clean);
  pthread_join(t, NULL);
  CHECK(clean.shard != l.shard);
  CHECK_EQ(shard_after(), clean.shard);
  pthread_key_delete(late_key);
}

int main(void) {
  char dir[256];
  testdir_make(dir, sizeof dir, "pins");
  hs_pool *pool = open_pool(dir, MANY_THREADS + 8, 1024, NULL, NULL);
  make_relation(pool, REL, 2 * MANY_THREADS);
  /* Make every block resident so the threads' reads are hits (private pins
   * where a shard is free). */
  for (hs_blockno i = 0; i < MANY_THREADS; i++) hs_buf_release(pool, must_read(pool, REL, i, NULL));

  pthread_barrier_t pinned, release;
  pthread_barrier_init(&pinned, NULL, MANY_THREADS + 1);
  pthread_barrier_init(&release, NULL, MANY_THREADS + 1);
  pthread_t t[MANY_THREADS];
  holder h[MANY_THREADS];
  for (int i = 0; i < MANY_THREADS; i++) {
    h[i] = (holder){.pool = pool,
                    .block = (hs_blockno)(i % (MANY_THREADS / 2)), /* two pins per block */
                    .pinned = &pinned,
                    .release = &release,
                    .hand_over = i % 3 == 0};
    pthread_create(&t[i], NULL, hold_pin, &h[i]);
  }
  pthread_barrier_wait(&pinned);

  CHECK_EQ(total_pins(pool), MANY_THREADS);
  hs_pool_stats s;
  hs_pool_stats_get(pool, &s);
  CHECK_EQ(s.pinned, MANY_THREADS / 2);
  hs_buffer_info info;
  REQUIRE(find_buffer(pool, REL, 0, &info) >= 0);
  CHECK_EQ(info.pins, 2);
  /* Pinned blocks survive a flood of other reads through the free buffers. */
  for (hs_blockno i = MANY_THREADS; i < 2 * MANY_THREADS; i++)
    hs_buf_release(pool, must_read(pool, REL, i, NULL));
  for (hs_blockno i = 0; i < MANY_THREADS / 2; i++) CHECK(find_buffer(pool, REL, i, NULL) >= 0);
  CHECK_ST(hs_pool_drop_relation(pool, REL), HS_ERR_BUSY);

  /* A pin belongs to the thread that took it: a third of the buffers are
   * handed over to this thread, which pins them again while their holders
   * still hold theirs; the holders then release their own. */
  for (int i = 0; i < MANY_THREADS; i++)
    if (h[i].hand_over) CHECK_OK(hs_buf_pin_again(pool, h[i].buf));
  pthread_barrier_wait(&release);
  for (int i = 0; i < MANY_THREADS; i++) pthread_join(t[i], NULL);
  CHECK_EQ(total_pins(pool), MANY_THREADS / 3 + 1);
  for (int i = 0; i < MANY_THREADS; i++)
    if (h[i].hand_over) CHECK_OK(hs_buf_release(pool, h[i].buf));
  CHECK_EQ(total_pins(pool), 0);
  hs_pool_stats_get(pool, &s);
  CHECK_EQ(s.pinned, 0);
  test_exit_holding_a_pin(pool);
  CHECK_OK(hs_pool_drop_relation(pool, REL));
  CHECK_OK(hs_pool_close(pool));
  pthread_barrier_destroy(&pinned);
  pthread_barrier_destroy(&release);
  testdir_remove(dir);
  return check_finish();
}
