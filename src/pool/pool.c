/*
 * pool/pool.c — the buffer pool: lookup, pin, read, evict, write back.
 *
 * The shape follows PostgreSQL's bufmgr.c as it stands since 9.6:
 *
 *  - hs_pool_read is the hit path, top to bottom: hash the tag, walk the
 *    page table without locks, pin with one CAS, check the pin caught the
 *    page asked for. Only a miss (or a race) goes on to read_slow.
 *  - read_slow (pool_claim, then the read) takes a victim (a ring's slot,
 *    the free list, then the replacement policy), pins it, writes it back if
 *    dirty (WAL first), and retags it under the old and new partition locks,
 *    looking the page up again there. The read itself happens with no lock held but
 *    IO_IN_PROGRESS set: other threads wanting the same block find the buffer,
 *    pin it and sleep until the read ends — one read, however many ask.
 *  - A failed read clears IO_IN_PROGRESS, sets IO_ERROR and leaves the
 *    buffer invalid but mapped; the next reader starts the read again.
 *  - A failed write leaves DIRTY set: the page is still only here, so the
 *    frame is not reused and the next flush tries again.
 *
 * Lock order: page-table partition locks (lower index first), then buffer
 * header spinlocks. Content locks are never taken while holding either; a
 * victim's content lock is only tried, never waited for, because the caller
 * may hold other content locks.
 */
#include "core/debug.h"
#include "core/error.h"
#include "hotset/fault.h"
#include "pool/pool_internal.h"
#include "pool/strategy_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Victims a miss may find pinned before it was pinned by us, before the
 * read gives up with HS_ERR_NO_BUFFERS. */
#define MAX_VICTIM_RACES 1000

void hs_pool_options_init(hs_pool_options *opts) {
  memset(opts, 0, sizeof *opts);
  opts->page_size = HS_PAGE_SIZE_DEFAULT;
  opts->pool_bytes = 128ull << 20;
  opts->partitions = 128;
}

/* ---- opening and closing ---------------------------------------------- */

static void pool_free(hs_pool *pool) {
  io_workers_stop(&pool->io);
  hs_policy_destroy(pool->policy);
  syncscan_table_free(pool->syncscan);
  pthread_mutex_destroy(&pool->policy_lock);
  if (pool->table.heads) page_table_destroy(&pool->table);
  if (pool->smgr) hs_smgr_close(pool->smgr);
  wait_stripes_destroy(pool->lock_waits, HS_WAIT_STRIPES);
  wait_stripes_destroy(pool->io_waits, HS_WAIT_STRIPES);
  pthread_mutex_destroy(&pool->free_lock);
  pthread_mutex_destroy(&pool->stats_lock);
  pthread_mutex_destroy(&pool->pins_lock);
  for (int i = 0; i < HS_STAT_SHARDS; i++) free(atomic_load(&pool->pins[i]));
  free(pool->pages);
  free(pool->descs);
  free(pool);
}

/* Every option's range, each refusal naming the option (a value out of range
 * must never be guessed at or loop: a partitions count above 2^31 once made
 * the power-of-two rounding spin forever). */
static hs_status check_options(const hs_pool_options *opts, uint32_t page_size, uint64_t npages) {
  if (!opts->dir || !*opts->dir)
    return hs_fail(HS_ERR_INVALID, 0, "hs_pool_open: option dir: a data directory is required");
  if (page_size < HS_PAGE_SIZE_MIN || page_size > HS_PAGE_SIZE_MAX ||
      (page_size & (page_size - 1)) != 0)
    return hs_fail(HS_ERR_INVALID, 0,
                   "hs_pool_open: option page_size: %u is not a power of two from %u to %u",
                   page_size, HS_PAGE_SIZE_MIN, HS_PAGE_SIZE_MAX);
  if (npages < 1)
    return hs_fail(HS_ERR_INVALID, 0,
                   "hs_pool_open: option pool_bytes: a pool of %" PRIu64
                   " bytes holds no page of %u bytes",
                   opts->pool_bytes, page_size);
  if (npages > HS_POOL_MAX_PAGES)
    return hs_fail(HS_ERR_INVALID, 0,
                   "hs_pool_open: option %s: a pool of %" PRIu64 " pages is more than 2^30 pages",
                   opts->pool_pages ? "pool_pages" : "pool_bytes", npages);
  if (opts->partitions > HS_POOL_MAX_PARTITIONS)
    return hs_fail(HS_ERR_INVALID, 0,
                   "hs_pool_open: option partitions: %u is more than %u page-table partitions",
                   opts->partitions, HS_POOL_MAX_PARTITIONS);
  if (opts->io_workers > HS_POOL_MAX_IO_WORKERS)
    return hs_fail(HS_ERR_INVALID, 0, "hs_pool_open: option io_workers: %u asked for (at most %u)",
                   opts->io_workers, HS_POOL_MAX_IO_WORKERS);
  if (opts->wal_needs_flush && !opts->flush_wal_up_to)
    return hs_fail(HS_ERR_INVALID, 0,
                   "hs_pool_open: option wal_needs_flush is set but flush_wal_up_to is not "
                   "(there would be no WAL to flush)");
  return HS_OK;
}

hs_status hs_pool_open(const hs_pool_options *opts, hs_pool **out) {
  if (!opts || !out)
    return hs_fail(HS_ERR_INVALID, 0, "hs_pool_open: options and out are required");
  *out = NULL;
  const char *policy = opts->policy ? opts->policy : "clock-sweep";
  uint32_t page_size = opts->page_size ? opts->page_size : HS_PAGE_SIZE_DEFAULT;
  uint64_t npages = opts->pool_pages ? opts->pool_pages : opts->pool_bytes / page_size;
  hs_status valid = check_options(opts, page_size, npages);
  if (valid != HS_OK) return valid;

  hs_pool *pool = aligned_alloc(64, sizeof *pool);
  if (!pool) return hs_fail(HS_ERR_NOMEM, 0, "could not allocate the pool");
  memset(pool, 0, sizeof *pool);
  pool->nbuffers = (uint32_t)npages;
  pool->page_size = page_size;
  pool->flush_wal_up_to = opts->flush_wal_up_to;
  pool->wal_needs_flush = opts->wal_needs_flush;
  pool->wal_ctx = opts->wal_ctx;
  pthread_mutex_init(&pool->free_lock, NULL);
  pthread_mutex_init(&pool->stats_lock, NULL);
  pthread_mutex_init(&pool->pins_lock, NULL);
  pthread_mutex_init(&pool->policy_lock, NULL);
  for (int i = 0; i < HS_STAT_SHARDS; i++) atomic_init(&pool->pins[i], NULL);
  atomic_init(&pool->pins_max, 0);
  wait_stripes_init(pool->lock_waits, HS_WAIT_STRIPES);
  wait_stripes_init(pool->io_waits, HS_WAIT_STRIPES);
  stat_shards_init(&pool->stats);

  hs_status st = hs_smgr_open(opts->dir, page_size, &pool->smgr);
  /* One pool per data directory: two would overwrite each other's pages. */
  if (st == HS_OK) st = hs_smgr_lock_dir(pool->smgr);
  if (st != HS_OK) {
    pool_free(pool);
    return st;
  }
  /* posix_memalign: aligned_alloc wants the size a multiple of the alignment. */
  void *descs = NULL, *pages = NULL;
  if (posix_memalign(&descs, 64, sizeof *pool->descs * npages) != 0) descs = NULL;
  if (posix_memalign(&pages, 4096, (size_t)npages * page_size) != 0) pages = NULL;
  pool->descs = descs;
  pool->pages = pages;
  if (!pool->descs || !pool->pages) {
    pool_free(pool);
    return hs_fail(HS_ERR_NOMEM, 0, "could not allocate %" PRIu64 " buffers of %u bytes", npages,
                   page_size);
  }
  for (uint32_t b = 0; b < pool->nbuffers; b++) {
    hs_bufdesc *d = &pool->descs[b].d;
    atomic_init(&d->state, 0);
    atomic_init(&d->content_lock, 0);
    atomic_init(&d->rel, 0);
    atomic_init(&d->fork, 0);
    atomic_init(&d->block, HS_INVALID_BLOCK);
    atomic_init(&d->hash_next, -1);
    atomic_init(&d->lsn, 0);
    d->free_next = b + 1 < pool->nbuffers ? (int32_t)b + 1 : FREE_END;
  }
  pool->free_head = 0;
  atomic_init(&pool->free_count, pool->nbuffers);
  atomic_init(&pool->io_waiters, 0);

  st = page_table_init(&pool->table, pool->descs, pool->nbuffers, opts->partitions);
  if (st == HS_OK && !(pool->syncscan = syncscan_table_create())) st = HS_ERR_NOMEM;
  if (st == HS_OK) st = hs_policy_create(policy, pool->nbuffers, pool->nbuffers, &pool->policy);
  if (st == HS_OK && (hs_policy_flags(pool->policy) & HS_POLICY_SIM_ONLY))
    st = hs_fail(HS_ERR_INVALID, 0,
                 "replacement policy \"%s\" needs to know the future: it runs only in the "
                 "simulator",
                 policy);
  if (st == HS_OK) {
    unsigned flags = hs_policy_flags(pool->policy);
    pool->lock_others = !(flags & HS_POLICY_CONCURRENT);
    pool->lock_hits = !(flags & (HS_POLICY_CONCURRENT | HS_POLICY_CONCURRENT_HIT));
    pool->needs_time = flags & HS_POLICY_NEEDS_TIME;
  }
  if (st == HS_OK && opts->io_workers) st = io_workers_start(&pool->io, pool, opts->io_workers);
  if (st != HS_OK) {
    pool_free(pool);
    return st;
  }
  *out = pool;
  return HS_OK;
}

/* "by thread 1234 (2 pins)" — whose pins keep buffer b: the owner of the
 * first private counter holding one, or the state word's sharers. */
static void pinned_by(hs_pool *pool, hs_buf b, uint32_t state, char *out, size_t n) {
  uint32_t max = atomic_load(&pool->pins_max);
  for (uint32_t i = 0; i < max; i++) {
    _Atomic uint32_t *a = atomic_load(&pool->pins[i]);
    uint32_t c = a ? atomic_load(&a[b]) : 0;
    if (c > 0) {
      snprintf(out, n, "by thread %d (%u pin%s)", stat_shard_owner_tid((int)i), c,
               c == 1 ? "" : "s");
      return;
    }
  }
  snprintf(out, n, "by %u pin%s of threads without private pin counters", buf_refcount(state),
           buf_refcount(state) == 1 ? "" : "s");
}

hs_status hs_pool_close(hs_pool *pool) {
  if (!pool) return HS_OK;
  for (uint32_t b = 0; b < pool->nbuffers; b++) {
    hs_bufdesc *d = pool_desc(pool, (hs_buf)b);
    uint32_t state = atomic_load(&d->state);
    if (pool_pin_count(pool, (hs_buf)b, state) > 0) {
      hs_buftag t = buf_tag_get(d);
      char who[96];
      pinned_by(pool, (hs_buf)b, state, who, sizeof who);
      return hs_fail(HS_ERR_BUSY, 0,
                     "cannot close the pool: buffer %u (block %u of relation %u) is still pinned "
                     "%s",
                     b, t.block, t.rel, who);
    }
  }
  hs_status st = hs_pool_flush_all(pool);
  if (st != HS_OK) return st; /* the pool stays open: its dirty pages are not lost */
  pool_free(pool);
  return HS_OK;
}

void hs_pool_abandon(hs_pool *pool) {
  if (pool) pool_free(pool);
}

hs_smgr *hs_pool_smgr(hs_pool *pool) {
  return pool->smgr;
}
uint32_t hs_pool_nbuffers(const hs_pool *pool) {
  return pool->nbuffers;
}
uint32_t hs_pool_page_size(const hs_pool *pool) {
  return pool->page_size;
}
const char *hs_pool_policy_name(const hs_pool *pool) {
  return hs_policy_name(pool->policy);
}
hs_syncscan_table *pool_syncscan_table(hs_pool *pool) {
  return pool->syncscan;
}

uint32_t hs_pool_debug_io_waiters(hs_pool *pool) {
  return atomic_load(&pool->io_waiters);
}

/* ---- pins ----------------------------------------------------------------
 *
 * A pin counted in the state word is a write to a cache line every thread
 * touching that page shares; two threads pinning random resident pages then
 * pay a cache-line transfer on most hits, and the hit path stops scaling. So
 * a thread that owns a statistics shard (stat_shards.h) pins privately: it
 * bumps its own counter for the buffer, in an array only it normally writes,
 * and only *reads* the state word. Whoever needs to know that a buffer is
 * unpinned (victim selection, retagging, drop) holds the header lock and sums
 * the state word's count and every thread's private counter.
 *
 * Why that is safe — a Dekker handshake, all sequentially consistent: the
 * pinner increments its counter, then loads the state; the header-lock taker
 * sets LOCKED (an RMW), then loads the counters. Either the pinner sees
 * LOCKED — it then waits for the unlock and re-reads the state, tag and all,
 * so it sees any retag and backs off — or the lock taker sees the pin and
 * leaves the buffer alone.
 *
 * Pins are counts, not owned tokens: a release first takes one from the
 * releasing thread's own counter, else from the state word, else from any
 * other thread's counter — so a buffer pinned on one thread may be released
 * on another. Threads beyond HS_STAT_SHARDS pin through the state word.
 */

static _Atomic uint32_t *pins_alloc(hs_pool *pool, int id) {
  pthread_mutex_lock(&pool->pins_lock);
  _Atomic uint32_t *a = atomic_load(&pool->pins[id]);
  if (!a) {
    a = malloc(sizeof *a * pool->nbuffers);
    if (a) {
      for (uint32_t i = 0; i < pool->nbuffers; i++) atomic_init(&a[i], 0);
      atomic_store(&pool->pins[id], a);
      if ((uint32_t)id + 1 > atomic_load(&pool->pins_max))
        atomic_store(&pool->pins_max, (uint32_t)id + 1);
    }
  }
  pthread_mutex_unlock(&pool->pins_lock);
  return a;
}

/* This thread's private pin counters, or NULL (no exclusive shard, or no
 * memory): then it pins through the state word. */
static inline _Atomic uint32_t *my_pins(hs_pool *pool) {
  if (__builtin_expect(hs_my_shard.id < 0, 0)) stat_shard_claim();
  if (!hs_my_shard.exclusive) return NULL;
  _Atomic uint32_t *a = atomic_load_explicit(&pool->pins[hs_my_shard.id], memory_order_acquire);
  return a ? a : pins_alloc(pool, hs_my_shard.id);
}

uint32_t pool_pin_count(hs_pool *pool, hs_buf b, uint32_t state) {
  uint32_t n = buf_refcount(state);
  uint32_t max = atomic_load(&pool->pins_max);
  for (uint32_t i = 0; i < max; i++) {
    _Atomic uint32_t *a = atomic_load(&pool->pins[i]);
    if (a) n += atomic_load(&a[b]);
  }
  return n;
}

static bool pool_pinned(hs_pool *pool, hs_buf b, uint32_t locked_state) {
  return pool_pin_count(pool, b, locked_state) > 0;
}

/* What the policy is told while it looks for a victim: which slots to skip.
 * Pinned buffers (a quick look without the header lock: the pool checks
 * again under the lock before it takes the victim, so a pin that arrives in
 * between is still respected), and the buffers this one claim already found
 * it could not write back — so a policy that would name the same unwritable
 * dirty page again and again (fifo, 2q, midpoint do not move a page on a
 * hit) moves on to the next candidate instead. */
#define MAX_VICTIM_WRITE_FAILURES 4

typedef struct victim_search {
  hs_pool *pool;
  hs_buf unwritable[MAX_VICTIM_WRITE_FAILURES];
  unsigned nunwritable;
  hs_status write_status; /* the last victim write's failure */
  int write_errno;
  char write_error[256];
} victim_search;

static bool policy_must_skip(void *ctx, uint32_t slot) {
  victim_search *vs = ctx;
  for (unsigned i = 0; i < vs->nunwritable; i++)
    if (vs->unwritable[i] == (hs_buf)slot) return true;
  uint32_t s =
      atomic_load_explicit(&pool_desc(vs->pool, (hs_buf)slot)->state, memory_order_relaxed);
  return pool_pin_count(vs->pool, (hs_buf)slot, s) > 0;
}

/* Pins b; returns its state as seen after the pin, never with LOCKED set
 * (read with acquire ordering: the caller trusts VALID in it, and must then
 * see the page that the thread which set VALID filled in). */
static inline uint32_t pool_pin(hs_pool *pool, hs_buf b) {
  hs_bufdesc *d = pool_desc(pool, b);
  _Atomic uint32_t *mine = my_pins(pool);
  if (!mine) return buf_pin(d);
  atomic_fetch_add_explicit(&mine[b], 1, memory_order_seq_cst);
  uint32_t s = atomic_load_explicit(&d->state, memory_order_seq_cst);
  if (s & BM_LOCKED) s = buf_wait_unlocked(d);
  return s;
}

/* ---- the policy ----------------------------------------------------------
 *
 * The pool's buffers are the policy's slots; a buffer is resident for the
 * policy exactly while its tag is valid. Keys are the tags' hashes.
 */

static uint64_t now_ms(void) {
  return pool_now_ns() / 1000000;
}

/* `ring`: the read's strategy when it has a ring (NULL otherwise). */
static inline hs_access make_access(hs_pool *pool, uint64_t key, hs_read_mode mode,
                                    const hs_strategy *ring) {
  hs_access a = {.key = key,
                 .size = 1,
                 .now = pool->needs_time ? now_ms() : 0,
                 .next = HS_NEXT_UNKNOWN,
                 .kind = mode == HS_READ_NORMAL ? HS_ACCESS_READ : HS_ACCESS_WRITE,
                 .hint = ring ? HS_HINT_RING : HS_HINT_NORMAL,
                 .recycle_first = ring && ring->config.recycle_first};
  return a;
}

static inline void policy_lock(hs_pool *pool, bool needed) {
  if (needed) pthread_mutex_lock(&pool->policy_lock);
}
static inline void policy_unlock(hs_pool *pool, bool needed) {
  if (needed) pthread_mutex_unlock(&pool->policy_lock);
}

/* A hit for the policy. A normal access also takes the buffer away from any
 * ring: it has now been used by someone else (PostgreSQL's usage count > 1),
 * so a ring must not recycle it. */
static inline void policy_hit(hs_pool *pool, hs_buf b, uint64_t key, hs_read_mode mode,
                              const hs_strategy *ring) {
  if (!ring) {
    hs_bufdesc *d = pool_desc(pool, b);
    uint32_t s = atomic_load_explicit(&d->state, memory_order_relaxed);
    while (s & BM_RING) {
      if (s & BM_LOCKED) {
        s = buf_wait_unlocked(d);
        continue;
      }
      if (atomic_compare_exchange_weak_explicit(&d->state, &s, s & ~BM_RING, memory_order_relaxed,
                                                memory_order_relaxed))
        break;
    }
  }
  hs_access a = make_access(pool, key, mode, ring);
  policy_lock(pool, pool->lock_hits);
  hs_policy_hit(pool->policy, (uint32_t)b, &a);
  policy_unlock(pool, pool->lock_hits);
}

/* Takes one pin off counter *c if it has any. */
static inline bool take_pin(_Atomic uint32_t *c) {
  uint32_t v = atomic_load_explicit(c, memory_order_relaxed);
  while (v > 0)
    if (atomic_compare_exchange_weak_explicit(c, &v, v - 1, memory_order_release,
                                              memory_order_relaxed))
      return true;
  return false;
}

/* This thread's private counters if it has them already (never allocates). */
static inline _Atomic uint32_t *my_pins_if_any(hs_pool *pool) {
  if (!hs_my_shard.exclusive) return NULL;
  return atomic_load_explicit(&pool->pins[hs_my_shard.id], memory_order_acquire);
}

/* Pins this thread holds on b (its private count; for a thread without
 * private counters, the state word's count, which it shares). */
static uint32_t my_pin_count(hs_pool *pool, hs_buf b) {
  _Atomic uint32_t *mine = my_pins_if_any(pool);
  if (mine) return atomic_load_explicit(&mine[b], memory_order_relaxed);
  return buf_refcount(atomic_load_explicit(&pool_desc(pool, b)->state, memory_order_relaxed));
}

/* Drops one of this thread's pins on b; false if it holds none. A pin
 * belongs to the thread that took it: a thread with private counters never
 * takes a pin from the state word or from another thread's counters (that is
 * how a double release used to steal another thread's pin). Pins the pool
 * takes the shared way for a miss are moved into the claimer's counters
 * before they are handed out (pool_claim). */
static bool unpin_own(hs_pool *pool, hs_buf b) {
  _Atomic uint32_t *mine = my_pins_if_any(pool);
  if (mine) return take_pin(&mine[b]);
  return buf_unpin_shared(pool_desc(pool, b));
}

/* Drops a pin the pool itself took on this thread's behalf. */
static void pool_unpin(hs_pool *pool, hs_buf b) {
  bool had = unpin_own(pool, b);
  HS_INVARIANT(had, "the pool dropped a pin it did not hold on buffer %d", b);
  (void)had;
}

/* Drops a victim's pin, which take_victim takes in the state word. */
static void unpin_victim(hs_pool *pool, hs_buf v) {
  bool had = buf_unpin_shared(pool_desc(pool, v));
  HS_INVARIANT(had, "a victim's pin on buffer %d was not in its state word", v);
  (void)had;
}

/* "buffer 3 (block 7 of relation 1, fork 0)" */
static void describe_buf(hs_pool *pool, hs_buf b, char *out, size_t n) {
  hs_bufdesc *d = pool_desc(pool, b);
  uint32_t s = atomic_load_explicit(&d->state, memory_order_relaxed);
  hs_buftag t = buf_tag_get(d);
  if (s & BM_TAG_VALID)
    snprintf(out, n, "buffer %d (block %u of relation %u, fork %d)", b, t.block, t.rel,
             (int)t.fork);
  else
    snprintf(out, n, "buffer %d (holding no page)", b);
}

/* A call that broke a rule of the API: counted, refused with HS_ERR_INVALID
 * and a message naming the call, the buffer and the rule; a debug build
 * stops here (core/debug.h). */
__attribute__((format(printf, 4, 5))) static hs_status
pool_misuse(hs_pool *pool, const char *call, hs_buf b, const char *rule_fmt, ...) {
  char rule[256], what[128];
  va_list ap;
  va_start(ap, rule_fmt);
  vsnprintf(rule, sizeof rule, rule_fmt, ap);
  va_end(ap);
  describe_buf(pool, b, what, sizeof what);
  atomic_fetch_add_explicit(&pool->misuse, 1, memory_order_relaxed);
  if (HS_DEBUG_CHECKS) hs_debug_stop(__FILE__, __LINE__, "%s: %s: %s", call, what, rule);
  return hs_fail(HS_ERR_INVALID, 0, "%s: %s: %s (refused)", call, what, rule);
}

/* ---- content locks held by this thread -----------------------------------
 *
 * A content lock belongs to the thread that took it, as PostgreSQL's LWLocks
 * belong to a backend, and each thread keeps a short list of the ones it
 * holds (PostgreSQL's held_lwlocks). The list turns silent hazards into
 * clear answers: locking a buffer twice would wait for itself forever; an
 * unlock of a lock not held would release somebody else's; a flush of a
 * buffer the caller holds locked takes no lock of its own (it would wait for
 * itself) but writes under the caller's.
 */
#define MAX_HELD_LOCKS 64

typedef struct held_lock {
  const hs_pool *pool;
  hs_buf buf;
  hs_lock_mode mode;
} held_lock;

static _Thread_local held_lock held_locks[MAX_HELD_LOCKS];
static _Thread_local int held_count;

/* Index of this thread's hold on (pool, b) in held_locks, or -1. */
static inline int held_find(const hs_pool *pool, hs_buf b) {
  for (int i = held_count - 1; i >= 0; i--)
    if (held_locks[i].buf == b && held_locks[i].pool == pool) return i;
  return -1;
}

static void held_forget(int i) {
  held_locks[i] = held_locks[--held_count];
}

static inline hs_wait_stripe *lock_stripe(hs_pool *pool, hs_buf b) {
  return &pool->lock_waits[(uint32_t)b % HS_WAIT_STRIPES];
}

/* ---- I/O in progress ----------------------------------------------------- */

/* Sleeps until buffer b has no I/O in progress. */
static void wait_io(hs_pool *pool, hs_buf b) {
  hs_bufdesc *d = pool_desc(pool, b);
  hs_wait_stripe *w = &pool->io_waits[(uint32_t)b % HS_WAIT_STRIPES];
  pthread_mutex_lock(&w->mu);
  for (;;) {
    uint32_t s = atomic_load_explicit(&d->state, memory_order_acquire);
    if (!(s & BM_IO_IN_PROGRESS)) break;
    if (s & BM_LOCKED) {
      cpu_relax();
      continue;
    }
    /* Announce ourselves; the CAS fails if the word moved (e.g. the header
     * got locked), and then we look again. */
    if (!(s & BM_IO_WAITERS) &&
        !atomic_compare_exchange_weak_explicit(&d->state, &s, s | BM_IO_WAITERS,
                                               memory_order_acq_rel, memory_order_relaxed))
      continue;
    atomic_fetch_add(&pool->io_waiters, 1);
    pthread_cond_wait(&w->cv, &w->mu);
    atomic_fetch_sub(&pool->io_waiters, 1);
  }
  pthread_mutex_unlock(&w->mu);
}

/* Claims the right to read buffer b in. False if it became valid or someone
 * else is reading it. */
static bool start_input_io(hs_pool *pool, hs_buf b) {
  hs_bufdesc *d = pool_desc(pool, b);
  uint32_t s = buf_hdr_lock(d);
  if (s & (BM_VALID | BM_IO_IN_PROGRESS)) {
    buf_hdr_unlock(d, s);
    return false;
  }
  buf_hdr_unlock(d, (s | BM_IO_IN_PROGRESS) & ~BM_IO_ERROR);
  return true;
}

/* Ends an I/O: sets and clears flags, then wakes whoever waits for it.
 * `written`: a write succeeded, so the page is clean unless re-dirtied. */
static void end_io(hs_pool *pool, hs_buf b, uint32_t set, uint32_t clear, bool written) {
  hs_bufdesc *d = pool_desc(pool, b);
  uint32_t s = buf_hdr_lock(d);
  HS_INVARIANT(s & BM_IO_IN_PROGRESS, "buffer %d: an I/O ended that was not in progress", b);
  HS_INVARIANT(pool_pin_count(pool, b, s) > 0, "buffer %d: I/O in progress on an unpinned buffer",
               b);
  bool waiters = s & BM_IO_WAITERS;
  if (written && !(s & BM_JUST_DIRTIED)) s &= ~BM_DIRTY;
  s = (s & ~(clear | BM_IO_IN_PROGRESS | BM_IO_WAITERS)) | set;
  buf_hdr_unlock(d, s);
  if (waiters) {
    hs_wait_stripe *w = &pool->io_waits[(uint32_t)b % HS_WAIT_STRIPES];
    pthread_mutex_lock(&w->mu);
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
  }
}

/* Fills buffer b, pinned and with IO_IN_PROGRESS claimed by us, with its
 * block: read from the file, or zeros. On failure the pin is dropped. */
static hs_status fill_buffer(hs_pool *pool, hs_buf b, const hs_buftag *tag, hs_read_mode mode,
                             hs_io_context ctx, hs_buf *out, bool *hit) {
  void *page = pool->pages + (size_t)b * pool->page_size;
  if (mode == HS_READ_NORMAL) {
    /* The same ending as a read stream's combined read (pool_end_reads). */
    hs_status st = hs_smgr_read(pool->smgr, tag->rel, tag->fork, tag->block, page);
    pool_end_reads(pool, &b, 1, st == HS_OK, ctx, true);
    if (st != HS_OK) return st;
  } else {
    memset(page, 0, pool->page_size);
    end_io(pool, b, BM_VALID, BM_IO_ERROR, false);
  }
  *out = b;
  if (hit) *hit = false;
  return HS_OK;
}

/* Buffer b is pinned and tagged with `tag` but may not be valid yet: wait
 * for another thread's read, or do the read ourselves. Either way this is
 * an access to a page the policy already holds: a hit for the policy. */
static hs_status finish_pinned(hs_pool *pool, hs_buf b, const hs_buftag *tag, uint64_t hash,
                               hs_read_mode mode, hs_io_context ctx, const hs_strategy *ring,
                               hs_buf *out, bool *hit) {
  hs_bufdesc *d = pool_desc(pool, b);
  for (;;) {
    uint32_t s = atomic_load_explicit(&d->state, memory_order_acquire);
    /* The policy hears of the access only once the loader has told it about
     * the page (it does before its I/O ends): never while the slot may still
     * hold the evicted page's entry. */
    if (s & BM_VALID) {
      policy_hit(pool, b, hash, mode, ring);
      stat_add(&pool->stats, ctx, HS_STAT_HITS, 1);
      *out = b;
      if (hit) *hit = true;
      return HS_OK;
    }
    if (s & BM_IO_IN_PROGRESS) {
      wait_io(pool, b);
    } else if (start_input_io(pool, b)) {
      policy_hit(pool, b, hash, mode, ring);
      return fill_buffer(pool, b, tag, mode, ctx, out, hit);
    }
  }
}

/* ---- writing a page back ---------------------------------------------- */

/* Writes buffer b if it is valid and dirty: the WAL first, then the page.
 * The caller holds a pin and a content lock. *wrote says if it wrote. */
static hs_status write_buffer(hs_pool *pool, hs_buf b, hs_io_context ctx, bool *wrote,
                              bool *wal_flushed) {
  hs_bufdesc *d = pool_desc(pool, b);
  *wrote = false;
  if (wal_flushed) *wal_flushed = false;
  for (;;) {
    uint32_t s = buf_hdr_lock(d);
    if ((s & (BM_VALID | BM_DIRTY)) != (BM_VALID | BM_DIRTY)) {
      buf_hdr_unlock(d, s);
      return HS_OK;
    }
    if (s & BM_IO_IN_PROGRESS) { /* another thread is writing it */
      buf_hdr_unlock(d, s);
      wait_io(pool, b);
      continue;
    }
    buf_hdr_unlock(d, (s | BM_IO_IN_PROGRESS) & ~BM_JUST_DIRTIED);
    break;
  }
  hs_buftag tag = buf_tag_get(d);
  hs_lsn lsn = atomic_load_explicit(&d->lsn, memory_order_relaxed);
  if (pool->flush_wal_up_to && lsn != 0) {
    bool flushed = false;
    /* Whatever message the thread had is not the callback's: clear it, so
     * that only what the callback itself left (a failed hotset call inside
     * it) is quoted, and a retry never nests the previous failure. */
    hs_clear_error();
    hs_status st = pool->flush_wal_up_to(pool->wal_ctx, lsn, &flushed);
    if (st != HS_OK) {
      char why[256];
      snprintf(why, sizeof why, "%s", hs_last_error());
      int why_errno = hs_last_errno();
      end_io(pool, b, BM_IO_ERROR, 0, false);
      stat_add(&pool->stats, ctx, HS_STAT_WRITE_ERRORS, 1);
      return hs_fail(HS_ERR_WAL, why_errno,
                     "the WAL flush callback (flush_wal_up_to) failed with %s for block %u of "
                     "relation %u (fork %d), page LSN %" PRIu64 "%s%s; the page stays dirty",
                     hs_status_name(st), tag.block, tag.rel, (int)tag.fork, lsn, why[0] ? ": " : "",
                     why);
    }
    if (flushed) stat_add(&pool->stats, ctx, HS_STAT_WAL_FLUSHES, 1);
    if (wal_flushed) *wal_flushed = flushed;
  }
  const void *page = pool->pages + (size_t)b * pool->page_size;
  hs_status st = hs_smgr_write(pool->smgr, tag.rel, tag.fork, tag.block, page);
  if (st != HS_OK) {
    end_io(pool, b, BM_IO_ERROR, 0, false); /* DIRTY stays: nothing is lost */
    stat_add(&pool->stats, ctx, HS_STAT_WRITE_ERRORS, 1);
    return st;
  }
  end_io(pool, b, 0, BM_IO_ERROR, true);
  stat_add(&pool->stats, ctx, HS_STAT_WRITES, 1);
  *wrote = true;
  return HS_OK;
}

/* ---- victims ------------------------------------------------------------ */

static void push_free(hs_pool *pool, hs_buf b) {
  hs_bufdesc *d = pool_desc(pool, b);
  pthread_mutex_lock(&pool->free_lock);
  if (d->free_next == FREE_NOT_IN_LIST) {
    d->free_next = pool->free_head;
    pool->free_head = b;
    atomic_fetch_add_explicit(&pool->free_count, 1, memory_order_relaxed);
  }
  pthread_mutex_unlock(&pool->free_lock);
}

/* A buffer from the free list, header locked; false if the list is empty.
 * The policy's hand may have taken a listed buffer meanwhile: skip those. */
static bool pop_free(hs_pool *pool, hs_buf *out, uint32_t *locked_state) {
  while (atomic_load_explicit(&pool->free_count, memory_order_relaxed) > 0) {
    pthread_mutex_lock(&pool->free_lock);
    hs_buf b = pool->free_head;
    if (b < 0) {
      pthread_mutex_unlock(&pool->free_lock);
      return false;
    }
    hs_bufdesc *d = pool_desc(pool, b);
    pool->free_head = d->free_next;
    d->free_next = FREE_NOT_IN_LIST;
    atomic_fetch_sub_explicit(&pool->free_count, 1, memory_order_relaxed);
    pthread_mutex_unlock(&pool->free_lock);
    uint32_t s = buf_hdr_lock(d);
    if (s & BM_TAG_VALID) { /* the policy's hand took it meanwhile: it is in use */
      buf_hdr_unlock(d, s);
      continue;
    }
    if (pool_pinned(pool, b, s)) {
      /* Pinned for a moment by a reader that found it before its page was
       * dropped: put it back rather than lose it, and let the caller ask the
       * policy this time. */
      buf_hdr_unlock(d, s);
      push_free(pool, b);
      return false;
    }
    *out = b;
    *locked_state = s;
    return true;
  }
  return false;
}

/* ---- the read path ------------------------------------------------------ */

/* Would writing buffer b (its LSN) need a WAL flush first? */
static bool needs_wal_flush(hs_pool *pool, hs_bufdesc *d) {
  hs_lsn lsn = atomic_load_explicit(&d->lsn, memory_order_relaxed);
  if (lsn == 0 || !pool->flush_wal_up_to) return false;
  return pool->wal_needs_flush ? pool->wal_needs_flush(pool->wal_ctx, lsn) : true;
}

/* The ring's next slot, if its buffer may be recycled: unpinned and used by
 * nobody but a ring since (BM_RING still set). A bulkread ring rejects a
 * dirty one whose WAL is not durable yet (PostgreSQL's StrategyRejectBuffer)
 * and the slot is emptied. Returns the buffer pinned, or HS_INVALID_BUF. */
static hs_buf ring_reuse(hs_pool *pool, hs_strategy *ring, uint32_t *state) {
  ring->current = ring->current + 1 < ring->size ? ring->current + 1 : 0;
  hs_buf b = ring->bufs[ring->current];
  if (b == HS_INVALID_BUF) return HS_INVALID_BUF;
  hs_bufdesc *d = pool_desc(pool, b);
  uint32_t s = buf_hdr_lock(d);
  if ((s & (BM_RING | BM_TAG_VALID)) != (BM_RING | BM_TAG_VALID) || pool_pinned(pool, b, s)) {
    buf_hdr_unlock(d, s);
    return HS_INVALID_BUF;
  }
  if ((s & BM_DIRTY) && ring->kind == HS_STRATEGY_BULKREAD && needs_wal_flush(pool, d)) {
    buf_hdr_unlock(d, s);
    ring->bufs[ring->current] = HS_INVALID_BUF;
    stat_add(&pool->stats, ring->ctx, HS_STAT_REJECTS, 1);
    return HS_INVALID_BUF;
  }
  s += BUF_REFCOUNT_ONE;
  buf_hdr_unlock(d, s);
  *state = s;
  return b;
}

/* A buffer to put a new page in, pinned by us (the shared way), with its
 * state as pinned: the ring's next slot if it may be recycled (*reused),
 * else from the free list, else the policy's victim.
 *
 * HS_ERR_NO_BUFFERS means what it says: every buffer was seen pinned. Before
 * concluding that, a search that found nothing looks again while a relation
 * drop is between taking pages away and handing their buffers to the free
 * list, or while the free list is not empty, or while some buffer it could
 * not take turned out unpinned a moment later (a pin released in between). */
static hs_status take_victim(hs_pool *pool, const hs_access *incoming, hs_strategy *ring,
                             victim_search *vs, hs_buf *out, uint32_t *state, bool *reused) {
  hs_buf v;
  uint32_t s;
  *reused = false;
  if (ring && (v = ring_reuse(pool, ring, &s)) != HS_INVALID_BUF) {
    *out = v;
    *state = s;
    *reused = true;
    return HS_OK;
  }
  unsigned unpinned_retries = 0;
  for (;;) {
    if (pop_free(pool, &v, &s)) {
      s += BUF_REFCOUNT_ONE;
      buf_hdr_unlock(pool_desc(pool, v), s);
      *out = v;
      *state = s;
      return HS_OK;
    }
    for (int race = 0; race < MAX_VICTIM_RACES; race++) {
      policy_lock(pool, pool->lock_others);
      int64_t cand = hs_policy_victim(pool->policy, incoming, policy_must_skip, vs);
      policy_unlock(pool, pool->lock_others);
      if (cand < 0) break;
      v = (hs_buf)cand;
      for (unsigned i = 0; i < vs->nunwritable; i++)
        HS_INVARIANT(vs->unwritable[i] != v, "policy %s named buffer %d, which it was told to skip",
                     hs_policy_name(pool->policy), v);
      hs_bufdesc *vd = pool_desc(pool, v);
      /* The policy looked without the header lock: check again with it, and
       * pin before anyone else can. */
      s = buf_hdr_lock(vd);
      if (!(s & BM_TAG_VALID) || pool_pinned(pool, v, s)) {
        buf_hdr_unlock(vd, s);
        /* A page being dropped stays in the policy until the dropper can
         * take the policy lock: give it the chance. */
        if (!(s & BM_TAG_VALID)) sched_yield();
        continue;
      }
      s += BUF_REFCOUNT_ONE;
      buf_hdr_unlock(vd, s);
      *out = v;
      *state = s;
      return HS_OK;
    }
    /* Nothing found. A drop in progress, or buffers back on the free list,
     * mean there is (or soon will be) a buffer: wait for it. */
    if (atomic_load(&pool->drops_in_progress) > 0 ||
        atomic_load_explicit(&pool->free_count, memory_order_relaxed) > 0) {
      atomic_fetch_add_explicit(&pool->victim_waits, 1, memory_order_relaxed);
      sched_yield();
      continue;
    }
    uint32_t pinned = 0;
    for (uint32_t b = 0; b < pool->nbuffers; b++)
      if (policy_must_skip(vs, b)) pinned++;
    if (pinned < pool->nbuffers && ++unpinned_retries < 1000) {
      sched_yield(); /* a pin went away after the policy looked */
      continue;
    }
    if (vs->nunwritable > 0 && pinned == pool->nbuffers)
      /* The write error is the reason this read found no buffer. */
      return hs_fail(vs->write_status, vs->write_errno,
                     "%s (no other buffer was free: %u of %u pinned, %u dirty and unwritable)",
                     vs->write_error, pinned - vs->nunwritable, pool->nbuffers, vs->nunwritable);
    if (pinned == pool->nbuffers)
      return hs_fail(HS_ERR_NO_BUFFERS, 0, "no unpinned buffers available (all %u are pinned)",
                     pool->nbuffers);
    return hs_fail(HS_ERR_NO_BUFFERS, 0,
                   "no buffer could be taken: %u of %u are pinned and the others were pinned "
                   "each time they were tried",
                   pinned, pool->nbuffers);
  }
}

/* The hit path: find the buffer without a lock, pin it (a private counter
 * and a read of the state word), check that the pin caught the page we asked
 * for — the buffer may have been given to another page between the lookup
 * and the pin — and, if its page is there, tell the policy. */
static inline pool_lookup lookup_and_pin(hs_pool *pool, const hs_buftag *tag, uint64_t hash,
                                         hs_read_mode mode, hs_io_context ctx,
                                         const hs_strategy *ring, hs_buf *out) {
  hs_buf b = page_table_lookup_fast(&pool->table, tag, hash);
  if (b < 0) return NOT_FOUND;
  hs_bufdesc *d = pool_desc(pool, b);
  uint32_t s = pool_pin(pool, b);
  if (!(s & BM_TAG_VALID) || !buf_tag_is(d, tag)) {
    pool_unpin(pool, b);
    return NOT_FOUND;
  }
  *out = b;
  if (!(s & BM_VALID)) return FOUND_NOT_VALID;
  policy_hit(pool, b, hash, mode, ring);
  stat_add(&pool->stats, ctx, HS_STAT_HITS, 1);
  return FOUND_VALID;
}

/* A victim made clean: pinned by us in its state word, its page written
 * back first if it was dirty (WAL first). A victim whose write fails stays
 * dirty and is skipped for the rest of this search (victim_search); after
 * MAX_VICTIM_WRITE_FAILURES such victims the write error is returned. */
static hs_status take_clean_victim(hs_pool *pool, const hs_access *incoming, hs_io_context ctx,
                                   hs_strategy *ring, victim_search *vs, hs_buf *out,
                                   uint32_t *state, bool *reused) {
  for (;;) {
    hs_buf v = HS_INVALID_BUF;
    uint32_t s = 0;
    hs_status st = take_victim(pool, incoming, ring, vs, &v, &s, reused);
    if (st != HS_OK) return st;
    if (s & BM_DIRTY) {
      hs_bufdesc *vd = pool_desc(pool, v);
      /* Only try the content lock: we may hold other content locks, and the
       * holder of this one may be waiting for a buffer too. */
      if (!content_lock_try(&vd->content_lock, HS_LOCK_SHARE)) {
        unpin_victim(pool, v);
        continue;
      }
      bool wrote, wal_flushed;
      st = write_buffer(pool, v, ctx, &wrote, &wal_flushed);
      content_lock_release(&vd->content_lock, lock_stripe(pool, v));
      if (wal_flushed && *reused) strategy_note_wal_flush(ring);
      if (st != HS_OK) {
        /* Still dirty: this frame is not reused, and the policy is asked
         * for another victim with this one skipped. */
        unpin_victim(pool, v);
        vs->unwritable[vs->nunwritable++] = v;
        vs->write_status = st;
        vs->write_errno = hs_last_errno();
        snprintf(vs->write_error, sizeof vs->write_error, "%s", hs_last_error());
        if (vs->nunwritable >= MAX_VICTIM_WRITE_FAILURES) return st;
        continue;
      }
    }
    *out = v;
    *state = s;
    return HS_OK;
  }
}

/* Moves our pin on v (taken in its state word by take_victim) into this
 * thread's private counters, so that the pin is the claimer's own: see
 * unpin_own. The header lock is held; returns the state word to publish. */
static uint32_t own_victim_pin(_Atomic uint32_t *mine, hs_buf v, uint32_t s) {
  if (!mine) return s;
  atomic_fetch_add_explicit(&mine[v], 1, memory_order_seq_cst);
  return s - BUF_REFCOUNT_ONE;
}

/* Counts a victim's taking and makes it a ring member if a ring took it. */
static void note_victim(hs_pool *pool, hs_io_context ctx, hs_strategy *ring, hs_buf v, bool reused,
                        bool evicted) {
  if (reused) {
    stat_add(&pool->stats, ctx, HS_STAT_REUSES, 1);
  } else {
    if (evicted) stat_add(&pool->stats, ctx, HS_STAT_EVICTIONS, 1);
    if (ring) ring->bufs[ring->current] = v; /* the buffer joins the ring */
  }
  if (ring) strategy_note_allocation(ring);
}

/* Finds the page's buffer or gives it one, pinned by us: either the page is
 * in the pool already (*claimed false: the buffer may still be being read,
 * see finish_pinned), or a buffer now carries its tag with I/O in progress
 * claimed by us and the policy told (*claimed true: fill it, or end the I/O
 * with an error). Never waits for another thread's read. */
hs_status pool_claim(hs_pool *pool, const hs_buftag *tag, uint64_t hash, hs_read_mode mode,
                     hs_io_context ctx, hs_strategy *ring, hs_buf *out, bool *claimed) {
  hs_page_table *pt = &pool->table;
  uint32_t part = page_table_partition(pt, hash);
  hs_buf b;
  *claimed = false;
  /* Before any lock: may allocate. */
  _Atomic uint32_t *mine = my_pins(pool);
  /* No locked look-up first: every caller has just missed in the lock-free
   * one, and the page is looked for again under the partition lock before
   * the victim is retagged — should it have arrived meanwhile, the victim
   * is let go unchanged. */
  hs_access incoming = make_access(pool, hash, mode, ring);
  victim_search vs = {.pool = pool};
  for (;;) {
    hs_buf v = HS_INVALID_BUF;
    uint32_t s = 0;
    bool reused = false;
    hs_status st = take_clean_victim(pool, &incoming, ctx, ring, &vs, &v, &s, &reused);
    if (st != HS_OK) return st;
    hs_bufdesc *vd = pool_desc(pool, v);

    /* Retag under the partition locks of the old and the new tag. */
    bool had_tag = s & BM_TAG_VALID;
    hs_buftag old_tag = buf_tag_get(vd);
    uint64_t old_hash = had_tag ? buf_tag_hash(&old_tag) : 0;
    uint32_t old_part = had_tag ? page_table_partition(pt, old_hash) : part;
    page_table_lock2(pt, part, old_part);
    b = page_table_lookup(pt, tag, hash);
    if (b >= 0) { /* someone read our block in while we were evicting */
      pool_pin(pool, b);
      page_table_unlock2(pt, part, old_part);
      unpin_victim(pool, v);
      if (!had_tag) push_free(pool, v);
      *out = b;
      return HS_OK;
    }
    s = buf_hdr_lock(vd);
    if (pool_pin_count(pool, v, s) != 1 || (s & BM_DIRTY)) { /* pinned or dirtied meanwhile */
      buf_hdr_unlock(vd, s);
      page_table_unlock2(pt, part, old_part);
      unpin_victim(pool, v);
      if (!had_tag) push_free(pool, v); /* back where it came from, not lost */
      continue;
    }
    bool evicted = s & BM_VALID;
    if (had_tag) page_table_delete(pt, v, old_hash);
    buf_tag_set(vd, tag);
    atomic_store_explicit(&vd->lsn, 0, memory_order_relaxed);
    page_table_insert(pt, v, hash);
    s = own_victim_pin(mine, v, s);
    buf_hdr_unlock(vd, (s & BUF_REFCOUNT_MASK) | BM_TAG_VALID | BM_IO_IN_PROGRESS |
                           (ring ? BM_RING : 0));
    page_table_unlock2(pt, part, old_part);

    policy_lock(pool, pool->lock_others);
    if (had_tag) hs_policy_evict(pool->policy, (uint32_t)v);
    st = hs_policy_insert(pool->policy, (uint32_t)v, &incoming);
    policy_unlock(pool, pool->lock_others);
    if (st != HS_OK) { /* cannot happen: one buffer, one slot */
      end_io(pool, v, BM_IO_ERROR, 0, false);
      pool_unpin(pool, v);
      return st;
    }
    note_victim(pool, ctx, ring, v, reused, evicted);
    *out = v;
    *claimed = true;
    return HS_OK;
  }
}

/* HS_READ_NEW: a buffer first, then the block. The relation is extended only
 * once a clean buffer is held for the new page, taken out of the page table
 * and the policy, so a read that could get no buffer (HS_ERR_NO_BUFFERS, a
 * victim's write error) leaves the file as it was; and a failed extension
 * gives the buffer back to the free list. */
static hs_status read_new(hs_pool *pool, hs_relid rel, hs_fork fork, hs_io_context ctx,
                          hs_strategy *ring, hs_buf *out, bool *hit) {
  hs_page_table *pt = &pool->table;
  _Atomic uint32_t *mine = my_pins(pool);
  /* The key the new block will most likely have (a concurrent extender may
   * take it first): some policies look at the incoming key when choosing. */
  hs_blockno guess = 0;
  if (hs_smgr_nblocks(pool->smgr, rel, fork, &guess) != HS_OK) guess = 0;
  hs_buftag guess_tag = {.rel = rel, .fork = fork, .block = guess};
  hs_access incoming = make_access(pool, buf_tag_hash(&guess_tag), HS_READ_NEW, ring);
  victim_search vs = {.pool = pool};
  hs_buf v;
  for (;;) {
    uint32_t s = 0;
    bool reused = false;
    hs_status st = take_clean_victim(pool, &incoming, ctx, ring, &vs, &v, &s, &reused);
    if (st != HS_OK) return st;
    hs_bufdesc *vd = pool_desc(pool, v);
    /* Take the victim's page away (as a drop would), keeping our pin. */
    bool had_tag = s & BM_TAG_VALID;
    hs_buftag old_tag = buf_tag_get(vd);
    uint64_t old_hash = buf_tag_hash(&old_tag);
    uint32_t old_part = page_table_partition(pt, old_hash);
    if (had_tag) page_table_lock(pt, old_part);
    s = buf_hdr_lock(vd);
    if (pool_pin_count(pool, v, s) != 1 || (s & BM_DIRTY) || (had_tag != !!(s & BM_TAG_VALID))) {
      buf_hdr_unlock(vd, s);
      if (had_tag) page_table_unlock(pt, old_part);
      unpin_victim(pool, v);
      if (!had_tag) push_free(pool, v);
      continue;
    }
    bool evicted = s & BM_VALID;
    if (had_tag) page_table_delete(pt, v, old_hash);
    atomic_store_explicit(&vd->block, HS_INVALID_BLOCK, memory_order_relaxed);
    atomic_store_explicit(&vd->lsn, 0, memory_order_relaxed);
    buf_hdr_unlock(vd, s & ~(BM_TAG_VALID | BM_VALID | BM_JUST_DIRTIED | BM_IO_ERROR | BM_RING));
    if (had_tag) page_table_unlock(pt, old_part);
    if (had_tag) {
      policy_lock(pool, pool->lock_others);
      hs_policy_evict(pool->policy, (uint32_t)v);
      policy_unlock(pool, pool->lock_others);
    }
    note_victim(pool, ctx, ring, v, reused, evicted);
    break;
  }

  hs_blockno block;
  hs_status st = hs_smgr_extend(pool->smgr, rel, fork, NULL, &block);
  if (st != HS_OK) {
    unpin_victim(pool, v);
    push_free(pool, v);
    return st;
  }
  stat_add(&pool->stats, ctx, HS_STAT_EXTENDS, 1);

  hs_buftag tag = {.rel = rel, .fork = fork, .block = block};
  uint64_t hash = buf_tag_hash(&tag);
  uint32_t part = page_table_partition(pt, hash);
  page_table_lock(pt, part);
  hs_buf b = page_table_lookup(pt, &tag, hash);
  if (b >= 0) {
    /* Another thread read the brand-new block (all zeros) already: use its
     * buffer, give ours back. */
    pool_pin(pool, b);
    page_table_unlock(pt, part);
    unpin_victim(pool, v);
    push_free(pool, v);
    return finish_pinned(pool, b, &tag, hash, HS_READ_NEW, ctx, ring, out, hit);
  }
  hs_bufdesc *vd = pool_desc(pool, v);
  uint32_t s = buf_hdr_lock(vd);
  buf_tag_set(vd, &tag);
  page_table_insert(pt, v, hash);
  s = own_victim_pin(mine, v, s);
  buf_hdr_unlock(vd,
                 (s & BUF_REFCOUNT_MASK) | BM_TAG_VALID | BM_IO_IN_PROGRESS | (ring ? BM_RING : 0));
  page_table_unlock(pt, part);
  incoming.key = hash;
  policy_lock(pool, pool->lock_others);
  st = hs_policy_insert(pool->policy, (uint32_t)v, &incoming);
  policy_unlock(pool, pool->lock_others);
  if (st != HS_OK) { /* cannot happen: one buffer, one slot */
    end_io(pool, v, BM_IO_ERROR, 0, false);
    pool_unpin(pool, v);
    return st;
  }
  return fill_buffer(pool, v, &tag, HS_READ_NEW, ctx, out, hit);
}

static hs_status read_slow(hs_pool *pool, const hs_buftag *tag, uint64_t hash, hs_read_mode mode,
                           hs_io_context ctx, hs_strategy *ring, hs_buf *out, bool *hit) {
  hs_buf b;
  bool claimed;
  hs_status st = pool_claim(pool, tag, hash, mode, ctx, ring, &b, &claimed);
  if (st != HS_OK) return st;
  if (claimed) return fill_buffer(pool, b, tag, mode, ctx, out, hit);
  return finish_pinned(pool, b, tag, hash, mode, ctx, ring, out, hit);
}

hs_status hs_pool_read(hs_pool *pool, hs_relid rel, hs_fork fork, hs_blockno block,
                       hs_read_mode mode, hs_strategy *strategy, hs_buf *out, bool *hit) {
  if (!pool || !out || (unsigned)fork >= HS_FORK_COUNT || (unsigned)mode > HS_READ_ZERO)
    return hs_fail(HS_ERR_INVALID, 0, "hs_pool_read: bad argument (pool, out, fork or mode)");
  if (strategy && strategy->pool != pool)
    return hs_fail(HS_ERR_INVALID, 0, "hs_pool_read: the strategy belongs to another pool");
  /* A strategy's I/O is counted in its context; only a ring (not "off")
   * changes how buffers are chosen. */
  hs_io_context ctx = strategy ? strategy->ctx : HS_IOCTX_NORMAL;
  hs_strategy *ring = strategy && strategy->size ? strategy : NULL;
  if (mode == HS_READ_NEW) return read_new(pool, rel, fork, ctx, ring, out, hit);
  if (block == HS_INVALID_BLOCK)
    return hs_fail(HS_ERR_INVALID, 0, "hs_pool_read: invalid block number");
  if (mode == HS_READ_ZERO) {
    /* A zeroed page past the end could never be written back (the file has
     * no such block): every later flush and close would fail with it. */
    hs_blockno nblocks;
    hs_status st = hs_smgr_nblocks(pool->smgr, rel, fork, &nblocks);
    if (st != HS_OK) return st;
    if (block >= nblocks)
      return hs_fail(HS_ERR_EOF, 0,
                     "hs_pool_read: HS_READ_ZERO of block %u of relation %u (fork %d): the "
                     "relation has %u blocks; use HS_READ_NEW to add one",
                     block, rel, (int)fork, nblocks);
  }
  hs_buftag tag = {.rel = rel, .fork = fork, .block = block};
  uint64_t hash = buf_tag_hash(&tag);

  hs_buf b;
  switch (lookup_and_pin(pool, &tag, hash, mode, ctx, ring, &b)) {
  case FOUND_VALID:
    *out = b;
    if (hit) *hit = true;
    return HS_OK;
  case FOUND_NOT_VALID:
    return finish_pinned(pool, b, &tag, hash, mode, ctx, ring, out, hit);
  case NOT_FOUND:
    break;
  }
  return read_slow(pool, &tag, hash, mode, ctx, ring, out, hit);
}

hs_status pool_read_found(hs_pool *pool, hs_buf b, const hs_buftag *tag, uint64_t hash,
                          hs_io_context ctx, hs_strategy *ring) {
  hs_buf out;
  return finish_pinned(pool, b, tag, hash, HS_READ_NORMAL, ctx, ring, &out, NULL);
}

pool_lookup pool_lookup_and_pin(hs_pool *pool, const hs_buftag *tag, uint64_t hash,
                                hs_io_context ctx, hs_strategy *ring, hs_buf *out) {
  return lookup_and_pin(pool, tag, hash, HS_READ_NORMAL, ctx, ring, out);
}

/* Ends the reads of claimed buffers bufs[0..n-1] (pool_claim) after their
 * pages were filled (ok) or could not be (then they are unpinned, and a
 * later read tries again). */
void pool_end_reads(hs_pool *pool, const hs_buf *bufs, uint32_t n, bool ok, hs_io_context ctx,
                    bool unpin) {
  /* Counted first: whoever sees a page's read end (an I/O worker ends the
   * reads of another thread's stream) must find it in the statistics. */
  stat_add(&pool->stats, ctx, ok ? HS_STAT_READS : HS_STAT_READ_ERRORS, ok ? n : 1);
  for (uint32_t i = 0; i < n; i++) {
    if (ok) {
      end_io(pool, bufs[i], BM_VALID, BM_IO_ERROR, false);
    } else {
      end_io(pool, bufs[i], BM_IO_ERROR, 0, false);
      if (unpin) pool_unpin(pool, bufs[i]);
    }
  }
}

void pool_abandon_claim(hs_pool *pool, hs_buf b) {
  end_io(pool, b, BM_IO_ERROR, 0, false);
  pool_unpin(pool, b);
}

bool pool_wait_read(hs_pool *pool, hs_buf b) {
  hs_bufdesc *d = pool_desc(pool, b);
  uint32_t s;
  /* A combined read of a batch takes microseconds: worth a short spin
   * before a sleep on the wait stripe. */
  for (int i = 1; i <= 1024; i++) {
    s = atomic_load_explicit(&d->state, memory_order_acquire);
    if (!(s & BM_IO_IN_PROGRESS)) return s & BM_VALID;
    /* Now and then let another thread of this core run: it may be the I/O
     * worker we are waiting for. */
    if (i % 64 == 0)
      sched_yield();
    else
      cpu_relax();
  }
  wait_io(pool, b);
  s = atomic_load_explicit(&d->state, memory_order_acquire);
  return s & BM_VALID;
}

void *pool_page(hs_pool *pool, hs_buf b) {
  return pool->pages + (size_t)b * pool->page_size;
}

/* ---- pinned-buffer calls ------------------------------------------------ */

static inline bool buf_ok(const hs_pool *pool, hs_buf b) {
  return pool && b >= 0 && (uint32_t)b < pool->nbuffers;
}

void *hs_buf_page(hs_pool *pool, hs_buf buf) {
  if (!buf_ok(pool, buf)) return NULL;
  return pool->pages + (size_t)buf * pool->page_size;
}

hs_relid hs_buf_rel(hs_pool *pool, hs_buf buf) {
  return buf_ok(pool, buf) ? buf_tag_get(pool_desc(pool, buf)).rel : 0;
}
hs_fork hs_buf_fork(hs_pool *pool, hs_buf buf) {
  return buf_ok(pool, buf) ? buf_tag_get(pool_desc(pool, buf)).fork : HS_FORK_MAIN;
}
hs_blockno hs_buf_block(hs_pool *pool, hs_buf buf) {
  return buf_ok(pool, buf) ? buf_tag_get(pool_desc(pool, buf)).block : HS_INVALID_BLOCK;
}
hs_lsn hs_buf_lsn(hs_pool *pool, hs_buf buf) {
  return buf_ok(pool, buf) ? atomic_load(&pool_desc(pool, buf)->lsn) : 0;
}

/* The checks every content-lock call makes: a real buffer, pinned by this
 * thread (a lock on an unpinned buffer guards a frame that may be given to
 * another page under it), a real mode, not held already. */
static hs_status lock_checks(hs_pool *pool, hs_buf buf, hs_lock_mode mode, const char *call) {
  if (!buf_ok(pool, buf)) return hs_fail(HS_ERR_INVALID, 0, "%s: bad buffer %d", call, buf);
  if ((unsigned)mode > HS_LOCK_EXCLUSIVE)
    return pool_misuse(pool, call, buf, "unknown lock mode %d", (int)mode);
  if (my_pin_count(pool, buf) == 0)
    return pool_misuse(pool, call, buf, "the buffer is not pinned by this thread");
  if (held_find(pool, buf) >= 0)
    return pool_misuse(pool, call, buf,
                       "this thread holds its content lock already (locks are not recursive: "
                       "it would wait for itself)");
  if (held_count == MAX_HELD_LOCKS)
    return hs_fail(HS_ERR_INVALID, 0, "%s: this thread holds %d content locks already (the most)",
                   call, MAX_HELD_LOCKS);
  return HS_OK;
}

hs_status hs_buf_lock(hs_pool *pool, hs_buf buf, hs_lock_mode mode) {
  hs_status st = lock_checks(pool, buf, mode, "hs_buf_lock");
  if (st != HS_OK) return st;
  content_lock_acquire(&pool_desc(pool, buf)->content_lock, lock_stripe(pool, buf), mode);
  held_locks[held_count++] = (held_lock){.pool = pool, .buf = buf, .mode = mode};
  return HS_OK;
}

bool hs_buf_trylock(hs_pool *pool, hs_buf buf, hs_lock_mode mode) {
  if (lock_checks(pool, buf, mode, "hs_buf_trylock") != HS_OK) return false;
  if (!content_lock_try(&pool_desc(pool, buf)->content_lock, mode)) return false;
  held_locks[held_count++] = (held_lock){.pool = pool, .buf = buf, .mode = mode};
  return true;
}

hs_status hs_buf_unlock(hs_pool *pool, hs_buf buf) {
  if (!buf_ok(pool, buf)) return hs_fail(HS_ERR_INVALID, 0, "hs_buf_unlock: bad buffer %d", buf);
  int i = held_find(pool, buf);
  if (i < 0)
    return pool_misuse(pool, "hs_buf_unlock", buf,
                       "this thread does not hold its content lock (an unlock without a lock, "
                       "or of a lock another thread holds)");
  bool released = content_lock_release(&pool_desc(pool, buf)->content_lock, lock_stripe(pool, buf));
  HS_INVARIANT(released, "buffer %d: content lock held by this thread was free in its word", buf);
  (void)released;
  held_forget(i);
  return HS_OK;
}

hs_status hs_buf_mark_dirty(hs_pool *pool, hs_buf buf, hs_lsn lsn, bool *was_clean) {
  if (!buf_ok(pool, buf))
    return hs_fail(HS_ERR_INVALID, 0, "hs_buf_mark_dirty: bad buffer %d", buf);
  hs_bufdesc *d = pool_desc(pool, buf);
  int i = held_find(pool, buf);
  if (i < 0 || held_locks[i].mode != HS_LOCK_EXCLUSIVE)
    return pool_misuse(pool, "hs_buf_mark_dirty", buf,
                       "this thread does not hold its content lock in exclusive mode");
  uint32_t old = atomic_load_explicit(&d->state, memory_order_relaxed);
  for (;;) {
    if (old & BM_LOCKED) old = buf_wait_unlocked(d);
    if (atomic_compare_exchange_weak_explicit(&d->state, &old, old | BM_DIRTY | BM_JUST_DIRTIED,
                                              memory_order_acq_rel, memory_order_relaxed))
      break;
  }
  HS_INVARIANT(old & BM_VALID, "buffer %d: marked dirty while it holds no valid page", buf);
  if (lsn > atomic_load_explicit(&d->lsn, memory_order_relaxed))
    atomic_store_explicit(&d->lsn, lsn, memory_order_relaxed);
  if (was_clean) *was_clean = !(old & BM_DIRTY);
  return HS_OK;
}

hs_status hs_buf_pin_again(hs_pool *pool, hs_buf buf) {
  if (!buf_ok(pool, buf)) return hs_fail(HS_ERR_INVALID, 0, "hs_buf_pin_again: bad buffer %d", buf);
  hs_bufdesc *d = pool_desc(pool, buf);
  if (pool_pin_count(pool, buf, atomic_load_explicit(&d->state, memory_order_acquire)) == 0)
    return pool_misuse(pool, "hs_buf_pin_again", buf,
                       "the buffer is not pinned (only a pinned buffer can be pinned again: its "
                       "frame may hold another page by now)");
  pool_pin(pool, buf);
  return HS_OK;
}

hs_status hs_buf_release(hs_pool *pool, hs_buf buf) {
  if (!buf_ok(pool, buf)) return hs_fail(HS_ERR_INVALID, 0, "hs_buf_release: bad buffer %d", buf);
  if (__builtin_expect(held_count > 0, 0) && held_find(pool, buf) >= 0 &&
      my_pin_count(pool, buf) == 1)
    return pool_misuse(pool, "hs_buf_release", buf,
                       "this thread still holds its content lock: unlock before the last pin "
                       "goes");
  if (!unpin_own(pool, buf))
    return pool_misuse(pool, "hs_buf_release", buf,
                       "the buffer is not pinned by this thread (a double release, or a pin "
                       "taken by another thread: see hs_buf_pin_again for handing one over)");
  return HS_OK;
}

/* ---- flushing and dropping ---------------------------------------------- */

/* Writes pinned buffer b under a content lock: the caller's own if this
 * thread holds one on it (taking another would wait for itself), else a
 * share lock taken here. */
static hs_status flush_pinned(hs_pool *pool, hs_buf b) {
  bool wrote;
  if (held_find(pool, b) >= 0) return write_buffer(pool, b, HS_IOCTX_NORMAL, &wrote, NULL);
  hs_bufdesc *d = pool_desc(pool, b);
  content_lock_acquire(&d->content_lock, lock_stripe(pool, b), HS_LOCK_SHARE);
  hs_status st = write_buffer(pool, b, HS_IOCTX_NORMAL, &wrote, NULL);
  content_lock_release(&d->content_lock, lock_stripe(pool, b));
  return st;
}

hs_status hs_pool_flush_buffer(hs_pool *pool, hs_buf buf) {
  if (!buf_ok(pool, buf))
    return hs_fail(HS_ERR_INVALID, 0, "hs_pool_flush_buffer: bad buffer %d", buf);
  if (my_pin_count(pool, buf) == 0)
    return pool_misuse(pool, "hs_pool_flush_buffer", buf,
                       "the buffer is not pinned by this thread");
  return flush_pinned(pool, buf);
}

/* Writes every dirty buffer (of one relation, or all), going on past a
 * failure so that as much as possible reaches the files; then fsyncs. The
 * first failure is the one reported. */
static hs_status flush_buffers(hs_pool *pool, bool one_rel, hs_relid rel) {
  hs_status first = HS_OK;
  int first_errno = 0;
  char first_msg[512] = "";
  for (uint32_t i = 0; i < pool->nbuffers; i++) {
    hs_buf b = (hs_buf)i;
    hs_bufdesc *d = pool_desc(pool, b);
    uint32_t s = atomic_load_explicit(&d->state, memory_order_relaxed);
    if ((s & (BM_VALID | BM_DIRTY)) != (BM_VALID | BM_DIRTY)) continue;
    if (one_rel && atomic_load_explicit(&d->rel, memory_order_relaxed) != rel) continue;
    s = pool_pin(pool, b);
    if (!(s & BM_TAG_VALID) || (one_rel && buf_tag_get(d).rel != rel)) {
      pool_unpin(pool, b);
      continue;
    }
    hs_status st = flush_pinned(pool, b);
    pool_unpin(pool, b);
    if (st != HS_OK && first == HS_OK) {
      first = st;
      first_errno = hs_last_errno();
      snprintf(first_msg, sizeof first_msg, "%s", hs_last_error());
    }
  }
  hs_status st = one_rel ? hs_smgr_sync_relation(pool->smgr, rel) : hs_smgr_sync_all(pool->smgr);
  if (st != HS_OK && first == HS_OK) return st;
  if (first != HS_OK) return hs_fail(first, first_errno, "%s", first_msg);
  return HS_OK;
}

hs_status hs_pool_flush_relation(hs_pool *pool, hs_relid rel) {
  if (!pool) return hs_fail(HS_ERR_INVALID, 0, "hs_pool_flush_relation: no pool");
  return flush_buffers(pool, true, rel);
}

hs_status hs_pool_flush_all(hs_pool *pool) {
  if (!pool) return hs_fail(HS_ERR_INVALID, 0, "hs_pool_flush_all: no pool");
  return flush_buffers(pool, false, 0);
}

hs_status hs_pool_drop_relation(hs_pool *pool, hs_relid rel) {
  if (!pool) return hs_fail(HS_ERR_INVALID, 0, "hs_pool_drop_relation: no pool");
  hs_page_table *pt = &pool->table;
  bool busy = false;
  hs_buftag busy_tag = {0};
  /* While set, a victim search that finds nothing waits rather than call
   * every buffer pinned: a buffer this drop took a page from is on its way
   * to the free list. */
  atomic_fetch_add(&pool->drops_in_progress, 1);
  for (uint32_t i = 0; i < pool->nbuffers; i++) {
    hs_buf b = (hs_buf)i;
    hs_bufdesc *d = pool_desc(pool, b);
    /* A first look without locks, to skip the other relations' buffers. */
    if (!(atomic_load_explicit(&d->state, memory_order_relaxed) & BM_TAG_VALID) ||
        atomic_load_explicit(&d->rel, memory_order_relaxed) != rel)
      continue;
    if (pool->drop_hook) pool->drop_hook(pool, b, DROP_HOOK_LOOKED, pool->drop_hook_ctx);
    /* The buffer may have been given to another page since that look, even
     * of another relation: the tag is read again, and then decided on only
     * under the header lock, with the partition lock of that tag held. */
    hs_buftag tag = buf_tag_get(d);
    if (tag.rel != rel) continue;
    uint64_t hash = buf_tag_hash(&tag);
    uint32_t part = page_table_partition(pt, hash);
    page_table_lock(pt, part);
    uint32_t s = buf_hdr_lock(d);
    if (!(s & BM_TAG_VALID) || !buf_tag_is(d, &tag) || tag.rel != rel) { /* changed meanwhile */
      buf_hdr_unlock(d, s);
      page_table_unlock(pt, part);
      continue;
    }
    HS_INVARIANT(buf_tag_get(d).rel == rel,
                 "drop of relation %u about to forget buffer %d of "
                 "relation %u",
                 rel, b, buf_tag_get(d).rel);
    if (pool_pinned(pool, b, s)) {
      buf_hdr_unlock(d, s);
      page_table_unlock(pt, part);
      busy = true;
      busy_tag = tag;
      continue;
    }
    page_table_delete(pt, b, hash);
    atomic_store_explicit(&d->block, HS_INVALID_BLOCK, memory_order_relaxed);
    atomic_store_explicit(&d->lsn, 0, memory_order_relaxed);
    buf_hdr_unlock(
        d, s & ~(BM_TAG_VALID | BM_VALID | BM_DIRTY | BM_JUST_DIRTIED | BM_IO_ERROR | BM_RING));
    page_table_unlock(pt, part);
    if (pool->drop_hook) pool->drop_hook(pool, b, DROP_HOOK_TAKEN, pool->drop_hook_ctx);
    policy_lock(pool, pool->lock_others);
    hs_policy_remove(pool->policy, (uint32_t)b);
    policy_unlock(pool, pool->lock_others);
    push_free(pool, b);
  }
  atomic_fetch_sub(&pool->drops_in_progress, 1);
  if (busy)
    return hs_fail(HS_ERR_BUSY, 0,
                   "could not drop every buffer of relation %u: block %u of fork %d is pinned", rel,
                   busy_tag.block, (int)busy_tag.fork);
  return HS_OK;
}

/* ---- statistics ----------------------------------------------------------- */

void pool_counters(hs_pool *pool, uint64_t out[HS_IOCTX_COUNT][HS_STAT_COUNT]) {
  pthread_mutex_lock(&pool->stats_lock);
  stat_shards_sum(&pool->stats, out);
  pthread_mutex_unlock(&pool->stats_lock);
}

void hs_pool_stats(hs_pool *pool, hs_io_stats *out) {
  memset(out, 0, sizeof *out);
  pool_counters(pool, out->count);
  out->nbuffers = pool->nbuffers;
  out->page_size = pool->page_size;
  out->misuse = atomic_load_explicit(&pool->misuse, memory_order_relaxed);
  for (uint32_t b = 0; b < pool->nbuffers; b++) {
    uint32_t s = atomic_load_explicit(&pool->descs[b].d.state, memory_order_relaxed);
    if (s & BM_VALID) out->valid++;
    if (s & BM_DIRTY) out->dirty++;
    if (pool_pin_count(pool, (hs_buf)b, s)) out->pinned++;
  }
}

void hs_pool_stats_reset(hs_pool *pool) {
  pthread_mutex_lock(&pool->stats_lock);
  stat_shards_reset(&pool->stats);
  pthread_mutex_unlock(&pool->stats_lock);
}
