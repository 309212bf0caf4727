/*
 * test_content_lock — the buffer content lock lets a writer in, keeps
 * holders apart, and survives an unlock without a lock.
 *
 * A writer's wait is bounded by counting, not by the clock: once a reader
 * has seen the writer's WRITER_WAITING bit in the lock word, no share
 * request it starts may be granted before that writer has had the lock. The
 * lock word is only read by the test, never written, except where the
 * stray-release case sets it by hand.
 */
#include "pool/content_lock.h"
#include "pool/pool_internal.h"
#include "pool_util.h"

#include <pthread.h>
#include <sched.h>
#include <time.h>

/* Share grants a writer may wait through (counted from its request, so
 * including requests already under way and any that get in while the
 * writer is preempted before announcing itself) before the test calls it
 * starved. Far more than those, far fewer than a starved writer sees. */
#define STARVE_LIMIT   1000000u
#define STARVE_ROUNDS  300
#define POOL_ROUNDS    200
#define READER_HOLD_NS 3000

#define HAMMER_WRITERS 2
#define HAMMER_READERS 3
#define HAMMER_OPS     20000

static const hs_relid REL = 7;

/* ---- what a test locks: a bare word, or a pool buffer -------------------- */

typedef struct lock_target {
  _Atomic uint32_t *word; /* observed only, for the WRITER_WAITING bit */
  hs_wait_stripe *stripe; /* bare word */
  hs_pool *pool;          /* or a buffer of this pool */
  hs_buf buf;
} lock_target;

static _Atomic uint64_t api_failures; /* pool calls that did not return HS_OK */

/* A thread locks a pool buffer only while it pins it itself. */
static void target_enter(lock_target *t) {
  hs_buf b = HS_INVALID_BUF;
  if (t->pool &&
      (hs_pool_read(t->pool, REL, HS_FORK_MAIN, 0, HS_READ_NORMAL, NULL, &b, NULL) != HS_OK ||
       b != t->buf))
    atomic_fetch_add(&api_failures, 1);
}

static void target_leave(lock_target *t) {
  if (t->pool && hs_buf_release(t->pool, t->buf) != HS_OK) atomic_fetch_add(&api_failures, 1);
}

static void target_lock(lock_target *t, hs_lock_mode mode) {
  if (!t->pool)
    content_lock_acquire(t->word, t->stripe, mode);
  else if (hs_buf_lock(t->pool, t->buf, mode) != HS_OK)
    atomic_fetch_add(&api_failures, 1);
}

static void target_unlock(lock_target *t) {
  if (!t->pool)
    content_lock_release(t->word, t->stripe);
  else if (hs_buf_unlock(t->pool, t->buf) != HS_OK)
    atomic_fetch_add(&api_failures, 1);
}

static uint32_t word_now(_Atomic uint32_t *word) {
  return atomic_load(word);
}

/* Waits until the word shows any of `bits`, yielding the CPU meanwhile. */
static void await_any(_Atomic uint32_t *word, uint32_t bits) {
  while (!(word_now(word) & bits)) sched_yield();
}

/* Keeps the CPU busy for about `ns` (a reader "reading its page"). */
static void busy_hold(long ns) {
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  do clock_gettime(CLOCK_MONOTONIC, &b);
  while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < ns);
}

/* ---- (a) a writer among readers that never stop -------------------------- */

typedef struct starve {
  lock_target *t;
  int rounds;
  _Atomic bool stop;
  _Atomic bool starved;          /* a writer waited through STARVE_LIMIT grants */
  _Atomic uint64_t grants;       /* share grants so far */
  _Atomic int64_t writer_asked;  /* `grants` when the writer asked, or -1 */
  _Atomic unsigned rounds_done;  /* the writer's holds, counted while holding */
  _Atomic uint64_t saw_writer;   /* share requests begun with the bit set */
  _Atomic uint64_t late_grants;  /* ... and granted before that writer's turn */
  _Atomic uint64_t writer_fails; /* the writer did not hold the lock exclusively */
} starve;

static void *starve_reader(void *arg) {
  starve *s = arg;
  _Atomic uint32_t *word = s->t->word;
  target_enter(s->t);
  while (!atomic_load(&s->stop) && !atomic_load(&s->starved)) {
    unsigned round = atomic_load(&s->rounds_done);
    uint32_t before = word_now(word);
    target_lock(s->t, HS_LOCK_SHARE);
    uint64_t g = atomic_fetch_add(&s->grants, 1) + 1;
    /* Only one writer: if its bit was set before we asked, it has not had
     * the lock yet then; if rounds_done is unchanged now, while we hold the
     * lock, it still has not — we got in ahead of a waiting writer. */
    if (before & CL_WRITER_WAITING) {
      atomic_fetch_add(&s->saw_writer, 1);
      if (atomic_load(&s->rounds_done) == round) atomic_fetch_add(&s->late_grants, 1);
    }
    int64_t asked = atomic_load(&s->writer_asked);
    /* (asked may be later than g: the writer read `grants` after our add) */
    if (asked >= 0 && (int64_t)g - asked > (int64_t)STARVE_LIMIT) atomic_store(&s->starved, true);
    busy_hold(READER_HOLD_NS);
    target_unlock(s->t);
  }
  target_leave(s->t);
  return NULL;
}

static void *starve_writer(void *arg) {
  starve *s = arg;
  target_enter(s->t);
  for (int r = 0; r < s->rounds && !atomic_load(&s->starved); r++) {
    /* Ask only while the readers are busy taking the lock. */
    uint64_t g0 = atomic_load(&s->grants);
    while (atomic_load(&s->grants) < g0 + 4) sched_yield();
    atomic_store(&s->writer_asked, (int64_t)atomic_load(&s->grants));
    target_lock(s->t, HS_LOCK_EXCLUSIVE);
    atomic_store(&s->writer_asked, -1);
    if (!(word_now(s->t->word) & CL_EXCLUSIVE)) atomic_fetch_add(&s->writer_fails, 1);
    atomic_fetch_add(&s->rounds_done, 1);
    target_unlock(s->t);
  }
  target_leave(s->t);
  atomic_store(&s->stop, true);
  return NULL;
}

static void run_starvation(lock_target *t, int rounds, const char *what) {
  starve s = {.t = t, .rounds = rounds};
  atomic_init(&s.writer_asked, -1);
  pthread_t readers[2], writer;
  for (int i = 0; i < 2; i++) REQUIRE(pthread_create(&readers[i], NULL, starve_reader, &s) == 0);
  REQUIRE(pthread_create(&writer, NULL, starve_writer, &s) == 0);
  pthread_join(writer, NULL);
  for (int i = 0; i < 2; i++) pthread_join(readers[i], NULL);
  printf("%s: %u writer rounds, %" PRIu64 " share grants, %" PRIu64
         " requests saw a writer waiting, %" PRIu64 " of them got in ahead of it%s\n",
         what, atomic_load(&s.rounds_done), atomic_load(&s.grants), atomic_load(&s.saw_writer),
         atomic_load(&s.late_grants), atomic_load(&s.starved) ? " — the writer starved" : "");
  CHECK(!atomic_load(&s.starved));
  CHECK_EQ(atomic_load(&s.rounds_done), rounds);
  CHECK_EQ(atomic_load(&s.late_grants), 0);
  CHECK_EQ(atomic_load(&s.writer_fails), 0);
  /* Else the rounds never had readers queue behind a writer, and the
   * checks above proved nothing. */
  CHECK(atomic_load(&s.saw_writer) > 0);
  CHECK_EQ(word_now(t->word), 0);
  CHECK_EQ(atomic_load(&api_failures), 0);
}

static void test_writer_not_starved(void) {
  _Atomic uint32_t word = 0;
  hs_wait_stripe stripe;
  wait_stripes_init(&stripe, 1);
  lock_target t = {.word = &word, .stripe = &stripe};
  run_starvation(&t, STARVE_ROUNDS, "bare lock");
  wait_stripes_destroy(&stripe, 1);
}

static void test_writer_not_starved_in_pool(void) {
  char dir[256];
  testdir_make(dir, sizeof dir, "content-lock");
  hs_pool *pool = open_pool(dir, 16, 1024, NULL, NULL);
  make_relation(pool, REL, 1);
  hs_buf b = must_read(pool, REL, 0, NULL);
  lock_target t = {.word = &pool_desc(pool, b)->content_lock, .pool = pool, .buf = b};
  run_starvation(&t, POOL_ROUNDS, "pool buffer");
  hs_buf_release(pool, b);
  CHECK_ST(hs_pool_close(pool), HS_OK);
  testdir_remove(dir);
}

/* ---- (b) writers and readers hammering two locks on one stripe ---------- */

typedef struct guarded {
  _Atomic uint32_t word;
  uint64_t a, b; /* changed together, only under the exclusive lock */
  _Atomic int readers_in, writers_in;
} guarded;

typedef struct hammer {
  guarded g[2];
  hs_wait_stripe stripe; /* shared, as buffers share the pool's stripes */
  _Atomic uint64_t writes[2];
  _Atomic uint64_t broken; /* exclusion or consistency violations */
} hammer;

typedef struct hammer_thread {
  hammer *h;
  bool writer;
  uint64_t seed;
} hammer_thread;

static uint64_t next_rand(uint64_t *x) {
  *x ^= *x << 13;
  *x ^= *x >> 7;
  *x ^= *x << 17;
  return *x;
}

static void *hammer_run(void *arg) {
  hammer_thread *ht = arg;
  hammer *h = ht->h;
  hs_lock_mode mode = ht->writer ? HS_LOCK_EXCLUSIVE : HS_LOCK_SHARE;
  for (int op = 0; op < HAMMER_OPS; op++) {
    uint64_t r = next_rand(&ht->seed);
    int k = (int)(r & 1);
    guarded *g = &h->g[k];
    if ((r >> 1) % 8 == 0) {
      if (!content_lock_try(&g->word, mode)) continue;
    } else {
      content_lock_acquire(&g->word, &h->stripe, mode);
    }
    if (ht->writer) {
      if (atomic_fetch_add(&g->writers_in, 1) != 0 || atomic_load(&g->readers_in) != 0 ||
          !content_lock_held_exclusive(&g->word))
        atomic_fetch_add(&h->broken, 1);
      g->a++;
      if ((r >> 8) % 4 == 0) sched_yield(); /* let others pile up behind us */
      g->b++;
      atomic_fetch_add(&h->writes[k], 1);
      atomic_fetch_sub(&g->writers_in, 1);
    } else {
      atomic_fetch_add(&g->readers_in, 1);
      if (atomic_load(&g->writers_in) != 0 || content_lock_held_exclusive(&g->word) || g->a != g->b)
        atomic_fetch_add(&h->broken, 1);
      if ((r >> 8) % 4 == 0) sched_yield();
      atomic_fetch_sub(&g->readers_in, 1);
    }
    if (!content_lock_release(&g->word, &h->stripe)) atomic_fetch_add(&h->broken, 1);
  }
  return NULL;
}

static void test_hammer(void) {
  hammer *h = calloc(1, sizeof *h);
  REQUIRE(h);
  wait_stripes_init(&h->stripe, 1);
  enum { N = HAMMER_WRITERS + HAMMER_READERS };
  pthread_t t[N];
  hammer_thread ht[N];
  for (int i = 0; i < N; i++) {
    ht[i] = (hammer_thread){.h = h, .writer = i < HAMMER_WRITERS, .seed = 0x9e3779b97f4a7c15u + i};
    REQUIRE(pthread_create(&t[i], NULL, hammer_run, &ht[i]) == 0);
  }
  for (int i = 0; i < N; i++) pthread_join(t[i], NULL);
  CHECK_EQ(atomic_load(&h->broken), 0);
  for (int k = 0; k < 2; k++) {
    CHECK_EQ(h->g[k].a, atomic_load(&h->writes[k]));
    CHECK_EQ(h->g[k].b, atomic_load(&h->writes[k]));
    CHECK_EQ(word_now(&h->g[k].word), 0);
  }
  CHECK(atomic_load(&h->writes[0]) > 0 && atomic_load(&h->writes[1]) > 0);
  wait_stripes_destroy(&h->stripe, 1);
  free(h);
}

/* ---- (c) an unlock without a lock ---------------------------------------- */

/* A release of `word`, which shows no holder, must be refused and leave the
 * word as it was. (The word is put back regardless, so that a lock that
 * wrapped it fails this check rather than hanging the next one.) */
static void check_refused(_Atomic uint32_t *word, hs_wait_stripe *stripe) {
  uint32_t before = word_now(word);
  CHECK(!content_lock_release(word, stripe));
  CHECK_EQ(word_now(word), before);
  atomic_store(word, before);
}

static void test_stray_release(void) {
  _Atomic uint32_t word = 0;
  hs_wait_stripe stripe;
  wait_stripes_init(&stripe, 1);

  check_refused(&word, &stripe);

  /* Flag bits alone are no holder either (a waiting writer's, a sleeper's). */
  uint32_t flags_only[] = {CL_WRITER_WAITING, CL_WAITERS, CL_WAITERS | CL_WRITER_WAITING};
  for (size_t i = 0; i < sizeof flags_only / sizeof flags_only[0]; i++) {
    atomic_store(&word, flags_only[i]);
    check_refused(&word, &stripe);
  }
  atomic_store(&word, 0);

  /* One lock, two unlocks: the second is refused and the lock still works. */
  content_lock_acquire(&word, &stripe, HS_LOCK_SHARE);
  CHECK(content_lock_release(&word, &stripe));
  check_refused(&word, &stripe);

  content_lock_acquire(&word, &stripe, HS_LOCK_EXCLUSIVE);
  CHECK(content_lock_held_exclusive(&word));
  CHECK(!content_lock_try(&word, HS_LOCK_SHARE));
  CHECK(content_lock_release(&word, &stripe));
  CHECK(!content_lock_held_exclusive(&word));
  check_refused(&word, &stripe);

  content_lock_acquire(&word, &stripe, HS_LOCK_SHARE);
  CHECK(content_lock_try(&word, HS_LOCK_SHARE));
  CHECK(!content_lock_try(&word, HS_LOCK_EXCLUSIVE));
  CHECK(content_lock_release(&word, &stripe));
  CHECK(content_lock_release(&word, &stripe));
  check_refused(&word, &stripe);
  CHECK(content_lock_try(&word, HS_LOCK_EXCLUSIVE));
  CHECK(content_lock_release(&word, &stripe));
  CHECK_EQ(word_now(&word), 0);

  wait_stripes_destroy(&stripe, 1);
}

/* ---- (d) share requests queue behind a waiting writer -------------------- */

typedef struct queue_case {
  _Atomic uint32_t word;
  hs_wait_stripe stripe;
  _Atomic int writers_in;   /* writers holding the lock now */
  _Atomic int writers_done; /* writers that have had it */
  _Atomic bool let_go;      /* writers may release */
  _Atomic int reader_saw;   /* writers_done when the late reader got in, or -1 */
} queue_case;

static void *queue_writer(void *arg) {
  queue_case *q = arg;
  content_lock_acquire(&q->word, &q->stripe, HS_LOCK_EXCLUSIVE);
  atomic_fetch_add(&q->writers_in, 1);
  while (!atomic_load(&q->let_go)) sched_yield();
  atomic_fetch_sub(&q->writers_in, 1);
  atomic_fetch_add(&q->writers_done, 1);
  content_lock_release(&q->word, &q->stripe);
  return NULL;
}

static void *queue_reader(void *arg) {
  queue_case *q = arg;
  content_lock_acquire(&q->word, &q->stripe, HS_LOCK_SHARE);
  atomic_store(&q->reader_saw, atomic_load(&q->writers_done));
  content_lock_release(&q->word, &q->stripe);
  return NULL;
}

static void test_share_queues_behind_writer(void) {
  queue_case *q = calloc(1, sizeof *q);
  REQUIRE(q);
  wait_stripes_init(&q->stripe, 1);
  atomic_init(&q->reader_saw, -1);

  /* We read; one writer asks; new share requests are refused. */
  content_lock_acquire(&q->word, &q->stripe, HS_LOCK_SHARE);
  pthread_t w1, w2, r;
  REQUIRE(pthread_create(&w1, NULL, queue_writer, q) == 0);
  /* The writer announces itself before it sleeps: wait for either sign (a
   * lock without writer preference shows only the second). */
  await_any(&q->word, CL_WRITER_WAITING | CL_WAITERS);
  CHECK(word_now(&q->word) & CL_WRITER_WAITING);
  bool got_in = content_lock_try(&q->word, HS_LOCK_SHARE);
  CHECK(!got_in);
  if (got_in) content_lock_release(&q->word, &q->stripe); /* else the writer waits forever */
  CHECK(!content_lock_try(&q->word, HS_LOCK_EXCLUSIVE));
  CHECK_EQ(word_now(&q->word) & CL_SHARED_MASK, 1);

  /* A reader asking from now on must wait for a writer's turn; a second
   * writer asks too. Once somebody sleeps (the first writer at least, after
   * its spins), drop our share: the release must wake the sleepers. */
  REQUIRE(pthread_create(&r, NULL, queue_reader, q) == 0);
  REQUIRE(pthread_create(&w2, NULL, queue_writer, q) == 0);
  await_any(&q->word, CL_WAITERS);
  CHECK(content_lock_release(&q->word, &q->stripe));

  /* A writer gets in; the reader, asleep or not, does not. */
  while (atomic_load(&q->writers_in) == 0) sched_yield();
  CHECK(content_lock_held_exclusive(&q->word));
  CHECK_EQ(atomic_load(&q->reader_saw), -1);
  CHECK(!content_lock_try(&q->word, HS_LOCK_SHARE));

  atomic_store(&q->let_go, true);
  pthread_join(w1, NULL);
  pthread_join(w2, NULL);
  pthread_join(r, NULL);
  /* The reader got in after the first writer at least (whether the second
   * writer, asleep when the first took the lock, went before it too is not
   * promised: see the header). */
  CHECK(atomic_load(&q->reader_saw) >= 1);
  CHECK_EQ(atomic_load(&q->writers_done), 2);
  CHECK_EQ(word_now(&q->word), 0);
  CHECK(content_lock_try(&q->word, HS_LOCK_SHARE));
  CHECK(content_lock_release(&q->word, &q->stripe));

  wait_stripes_destroy(&q->stripe, 1);
  free(q);
}

int main(void) {
  test_stray_release();
  test_share_queues_behind_writer();
  test_writer_not_starved();
  test_writer_not_starved_in_pool();
  test_hammer();
  return check_finish();
}
