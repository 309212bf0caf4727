/*
 * pool/pool.c — the buffer pool: open and close, read a block into a pinned
 * buffer, and the calls on a pinned buffer (hs_buf_*).
 *
 * The shape follows PostgreSQL's bufmgr.c as it stands since 9.6:
 *
 *  - hs_pool_read is the hit path, top to bottom in this file: hash the tag,
 *    walk the page table without locks, pin (a private counter and a load of
 *    the state word, pins.h), check the pin caught the page asked for, tell
 *    the policy. Only a miss (or a race) goes on to read_slow.
 *  - read_slow (pool_claim, then the read) takes a clean victim (freelist.c:
 *    a ring's slot, the free list, then the replacement policy; a dirty one
 *    written back first, writeback.c), and retags it under the old and new
 *    partition locks, looking the page up again there. The read itself
 *    happens with no lock held but IO_IN_PROGRESS set (buf_io.c): other
 *    threads wanting the same block find the buffer, pin it and sleep until
 *    the read ends — one read, however many ask.
 *  - A failed read clears IO_IN_PROGRESS, sets IO_ERROR and leaves the
 *    buffer invalid but mapped; the next reader starts the read again.
 *  - A failed write leaves DIRTY set: the page is still only here, so the
 *    frame is not reused and the next flush tries again.
 *
 * The rest of the pool: pins and held content locks (pins.c), flush and
 * drop (flush_drop.c), rings (strategy.c), read streams (read_stream.c).
 * The rules every file keeps are the numbered rules at the top of
 * docs/buffer-pool.md. Lock order: page-table partition locks (lower index
 * first), then buffer header spinlocks. Content locks are never waited for
 * while holding either; a victim's content lock is only tried, never waited
 * for, because the caller may hold other content locks.
 */
#include "core/big_alloc.h"
#include "core/debug.h"
#include "core/error.h"
#include "core/seams.h"
#include "hotset/fault.h"
#include "hotset/page.h"
#include "policy/policy_impl.h"
#include "pool/pins.h"
#include "pool/strategy_internal.h"
#include "storage/control_file.h"
#include "storage/smgr_catalog.h"

#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void hs_pool_options_init(hs_pool_options *opts) {
  memset(opts, 0, sizeof *opts);
  opts->page_size = 0; /* the data directory's; HS_PAGE_SIZE_DEFAULT for a new one */
  opts->pool_bytes = 128ull << 20;
  opts->partitions = 128;
  opts->checkpoint_completion_target = 0.9;
  opts->bgwriter_lru_maxpages = 100; /* PostgreSQL's defaults; the delay stays 0 (pool.h) */
  opts->bgwriter_lru_multiplier = 2.0;
  opts->checksums = HS_CHECKSUMS_DEFAULT; /* on for a new directory with a log */
}

/* ---- opening and closing ---------------------------------------------- */

static void pool_free(hs_pool *pool) {
  bgwriter_stop(pool); /* first: its rounds use everything below */
  pool_checkpointer_stop(pool);
  io_workers_stop(&pool->io);
  hs_policy_destroy(pool->policy);
  syncscan_table_free(pool->syncscan);
  pthread_mutex_destroy(&pool->policy_lock);
  pthread_mutex_destroy(&pool->ckpt_run_lock);
  pthread_mutex_destroy(&pool->ckpt_mu);
  pthread_mutex_destroy(&pool->ckpt_stats_lock);
  pthread_cond_destroy(&pool->ckpt_cv);
  if (pool->table.heads) page_table_destroy(&pool->table);
  if (pool->smgr) hs_smgr_close(pool->smgr);
  wait_stripes_destroy(pool->lock_waits, HS_WAIT_STRIPES);
  wait_stripes_destroy(pool->io_waits, HS_WAIT_STRIPES);
  pthread_mutex_destroy(&pool->free_lock);
  pthread_mutex_destroy(&pool->stats_lock);
  pthread_mutex_destroy(&pool->pins_lock);
  for (int i = 0; i < HS_STAT_SHARDS; i++)
    big_free(atomic_load(&pool->pins[i]), sizeof(_Atomic uint32_t) * pool->nbuffers);
  big_free(pool->pages, (size_t)pool->nbuffers * pool->page_size);
  big_free(pool->descs, sizeof *pool->descs * pool->nbuffers);
  big_free(pool->states, sizeof *pool->states * pool->nbuffers);
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
  if ((unsigned)opts->huge_pages > HS_HUGE_PAGES_ON)
    return hs_fail(HS_ERR_INVALID, 0,
                   "hs_pool_open: option huge_pages: %d is not HS_HUGE_PAGES_TRY, _OFF or _ON",
                   (int)opts->huge_pages);
  if ((unsigned)opts->translation > HS_TRANSLATION_DIRECT)
    return hs_fail(HS_ERR_INVALID, 0,
                   "hs_pool_open: option translation: %d is not HS_TRANSLATION_HASH or _DIRECT",
                   (int)opts->translation);
  if (opts->io_workers > HS_POOL_MAX_IO_WORKERS)
    return hs_fail(HS_ERR_INVALID, 0, "hs_pool_open: option io_workers: %u asked for (at most %u)",
                   opts->io_workers, HS_POOL_MAX_IO_WORKERS);
  if (opts->wal && (opts->flush_wal_up_to || opts->wal_needs_flush))
    return hs_fail(HS_ERR_INVALID, 0,
                   "hs_pool_open: options wal and flush_wal_up_to/wal_needs_flush exclude each "
                   "other (the log is hotset's own, the callbacks are for a log of the engine's)");
  if (opts->wal && hs_wal_max_record(opts->wal) < page_size)
    return hs_fail(HS_ERR_INVALID, 0,
                   "hs_pool_open: option wal: the log's largest record (%u bytes, about half of "
                   "its buffer) cannot carry a full image of a %u-byte page; give the log a "
                   "buffer_bytes of at least %u",
                   hs_wal_max_record(opts->wal), page_size, page_size * 4);
  if (!opts->wal && (opts->checkpoint_timeout_ms || opts->max_wal_size))
    return hs_fail(HS_ERR_INVALID, 0,
                   "hs_pool_open: options checkpoint_timeout_ms and max_wal_size need the pool's "
                   "own log (option wal)");
  if (!(opts->checkpoint_completion_target > 0 && opts->checkpoint_completion_target <= 1))
    return hs_fail(HS_ERR_INVALID, 0,
                   "hs_pool_open: option checkpoint_completion_target %g must be above 0 and at "
                   "most 1",
                   opts->checkpoint_completion_target);
  if (opts->wal_needs_flush && !opts->flush_wal_up_to)
    return hs_fail(HS_ERR_INVALID, 0,
                   "hs_pool_open: option wal_needs_flush is set but flush_wal_up_to is not "
                   "(there would be no WAL to flush)");
  return HS_OK;
}

/* The list of the files the directory must hold, once the open has
 * succeeded (so a refusal writes no list): what is there but not listed is
 * listed, and the control file says from then on that a list is kept, so
 * losing it is refused rather than taken for a directory from before
 * lists. */
static hs_status catalog_start(hs_pool *pool) {
  hs_status st = smgr_catalog_adopt(pool->smgr);
  if (st != HS_OK || pool->control.has_catalog) return st;
  hs_control c = pool->control;
  c.has_catalog = true;
  st = control_write(hs_smgr_dir(pool->smgr), &c);
  if (st == HS_OK) pool->control = c;
  return st;
}

/* The policy's name (a spec's part before ':') is one the pool runs: an
 * unknown one is answered with those, from the registry, leaving out the
 * simulator's own (HS_POLICY_SIM_ONLY). */
static hs_status check_policy(const char *spec) {
  size_t len = strcspn(spec, ":");
  char name[64];
  if (len >= sizeof name) len = sizeof name - 1;
  memcpy(name, spec, len);
  name[len] = '\0';
  const hs_policy_ops *ops = hs_policy_find(name);
  if (!ops)
    return hs_fail(HS_ERR_INVALID, 0,
                   "hs_pool_open: option policy: unknown replacement policy \"%s\" (the pool "
                   "runs %s)",
                   name, policy_pool_names());
  if (ops->flags & HS_POLICY_SIM_ONLY)
    return hs_fail(HS_ERR_INVALID, 0,
                   "hs_pool_open: option policy: replacement policy \"%s\" runs only in the "
                   "simulator (the pool runs %s)",
                   ops->name, policy_pool_names());
  return HS_OK;
}

hs_status hs_pool_open(const hs_pool_options *opts, hs_pool **out) {
  if (!out) return hs_fail(HS_ERR_MISUSE, 0, "hs_pool_open: out is NULL");
  *out = NULL;
  if (!opts) return hs_fail(HS_ERR_MISUSE, 0, "hs_pool_open: the options are NULL");
  const char *policy = opts->policy ? opts->policy : "clock-sweep";
  if (!opts->dir || !*opts->dir)
    return hs_fail(HS_ERR_INVALID, 0, "hs_pool_open: option dir: a data directory is required");
  hs_status valid = check_policy(policy);
  if (valid != HS_OK) return valid;
  hs_pool *pool = aligned_alloc(64, sizeof *pool);
  if (!pool) return hs_fail(HS_ERR_NOMEM, 0, "could not allocate the pool");
  memset(pool, 0, sizeof *pool);
  /* The options first, on their own; then the directory says what its
   * pages are (a page_size of 0 takes its), before anything is sized. */
  uint32_t page_size = opts->page_size ? opts->page_size : HS_PAGE_SIZE_DEFAULT;
  uint64_t npages = opts->pool_pages ? opts->pool_pages : opts->pool_bytes / page_size;
  valid = check_options(opts, page_size, npages);
  if (valid == HS_OK) valid = bgwriter_check_options(opts);
  if (valid == HS_OK) valid = pool_control_check(pool, opts, &page_size);
  if (valid == HS_OK && !opts->page_size) {
    npages = opts->pool_pages ? opts->pool_pages : opts->pool_bytes / page_size;
    valid = check_options(opts, page_size, npages);
  }
  if (valid != HS_OK) {
    free(pool);
    return valid;
  }
  pool->nbuffers = (uint32_t)npages;
  pool->page_size = page_size;
  pool->flush_wal_up_to = opts->flush_wal_up_to;
  pool->wal_needs_flush = opts->wal_needs_flush;
  pool->wal = opts->wal;
  pool->wal_ctx = opts->wal_ctx;
  /* pool->checksums: set by pool_control_check (the option, or the directory's) */
  pool->accept_pages_past_log = opts->accept_pages_past_log;
  pool->ckpt_timeout_ms = opts->checkpoint_timeout_ms;
  pool->max_wal_size = opts->max_wal_size;
  pool->keep_wal_bytes = opts->max_wal_size;
  pool->ckpt_target = opts->checkpoint_completion_target;
  pthread_mutex_init(&pool->ckpt_run_lock, NULL);
  pthread_mutex_init(&pool->ckpt_mu, NULL);
  pthread_mutex_init(&pool->ckpt_stats_lock, NULL);
  pthread_condattr_t monotonic;
  pthread_condattr_init(&monotonic);
  pthread_condattr_setclock(&monotonic, CLOCK_MONOTONIC);
  pthread_cond_init(&pool->ckpt_cv, &monotonic);
  pthread_condattr_destroy(&monotonic);
  pthread_mutex_init(&pool->free_lock, NULL);
  pthread_mutex_init(&pool->stats_lock, NULL);
  pthread_mutex_init(&pool->pins_lock, NULL);
  pthread_mutex_init(&pool->policy_lock, NULL);
  for (int i = 0; i < HS_STAT_SHARDS; i++) atomic_init(&pool->pins[i], NULL);
  atomic_init(&pool->pins_max, 0);
  wait_stripes_init(pool->lock_waits, HS_WAIT_STRIPES);
  wait_stripes_init(pool->io_waits, HS_WAIT_STRIPES);
  stat_shards_init(&pool->stats);

  hs_smgr_options smgr_opts = {.page_size = page_size, .direct_io = opts->direct_io};
  hs_status st = hs_smgr_open(opts->dir, &smgr_opts, &pool->smgr);
  /* One pool per data directory: two would overwrite each other's pages. */
  if (st == HS_OK) st = hs_smgr_lock_dir(pool->smgr);
  /* Every file the directory must hold is there, as long as it was at the
   * last checkpoint: else nothing below may read or create it. */
  if (st == HS_OK) st = smgr_catalog_load(pool->smgr, pool->control.has_catalog, "hs_pool_open");
  /* Shut down cleanly, nothing to replay: every listed file must hold its
   * mark page at least as new as the last checkpoint wrote it, or it is an
   * older or zeroed copy of itself (refused when read, pool_check_read). */
  if (st == HS_OK && pool->checksums) {
    uint32_t stale = 0;
    st = smgr_catalog_check_marks(
        pool->smgr, pool->control.format != 0 && pool->control.state == HS_DB_SHUT_DOWN,
        hs_page_system_tag(pool->control.system_id), &stale);
    atomic_store(&pool->any_stale, stale > 0);
  }
  /* With the directory locked: its control file against the log, and
   * where recovery starts. */
  if (st == HS_OK) st = pool_control_start(pool);
  if (st != HS_OK) {
    pool_free(pool);
    return st;
  }
  /* Page-aligned (mmap), on huge pages as opts->huge_pages says; the frames
   * also as direct I/O asks (the probe made sure that divides page_size,
   * so every frame is aligned when the first is). */
  hs_huge_pages_used frames_got;
  pool->huge_mode = opts->huge_pages;
  uint32_t io_align = hs_smgr_io_alignment(pool->smgr);
  pool->descs = big_alloc(sizeof *pool->descs * npages, opts->huge_pages, NULL);
  pool->states = big_alloc(sizeof *pool->states * npages, opts->huge_pages, NULL);
  pool->pages =
      big_alloc_aligned((size_t)npages * page_size, io_align, opts->huge_pages, &frames_got);
  if (!pool->descs || !pool->states || !pool->pages) {
    bool refused = opts->huge_pages == HS_HUGE_PAGES_ON && errno == EOPNOTSUPP;
    pool_free(pool);
    if (refused)
      return hs_fail(HS_ERR_INVALID, 0,
                     "huge_pages is on, but this system gives neither explicit huge pages "
                     "(vm.nr_hugepages) nor transparent ones (/sys/kernel/mm/"
                     "transparent_hugepage/enabled) for %" PRIu64 " buffers",
                     npages);
    return hs_fail(HS_ERR_NOMEM, errno, "could not allocate %" PRIu64 " buffers of %u bytes",
                   npages, page_size);
  }
  /* What the frames got is what a user asks about; descriptors too small
   * for a huge page (a small pool) do not make it "none". */
  pool->huge_used = frames_got;
  for (uint32_t b = 0; b < pool->nbuffers; b++) {
    hs_bufdesc *d = &pool->descs[b].d;
    atomic_init(&pool->states[b].state, 0);
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

  st = page_table_init(&pool->table, pool->descs, pool->nbuffers, opts->partitions,
                       opts->huge_pages, NULL, opts->translation == HS_TRANSLATION_DIRECT);
  if (st == HS_OK && !(pool->syncscan = syncscan_table_create())) st = HS_ERR_NOMEM;
  /* The policy is told what a unit is (one page of page_size bytes) and
   * what its clock counts (milliseconds), rather than guess them. */
  hs_policy_env env = {.unit_bytes = pool->page_size, .clock = HS_CLOCK_MILLISECONDS};
  if (st == HS_OK)
    st = hs_policy_create(policy, pool->nbuffers, pool->nbuffers, &env, &pool->policy);
  if (st == HS_OK) {
    unsigned flags = hs_policy_flags(pool->policy);
    pool->lock_others = !(flags & HS_POLICY_CONCURRENT);
    pool->lock_hits = !(flags & (HS_POLICY_CONCURRENT | HS_POLICY_CONCURRENT_HIT));
    pool->needs_time = flags & HS_POLICY_NEEDS_TIME;
    pool->clock_ms = opts->clock_ms;
    pool->clock_ctx = opts->clock_ctx;
  }
  if (st == HS_OK && opts->io_workers) st = io_workers_start(&pool->io, pool, opts->io_workers);
  /* Recovery before anyone can use the pool; the checkpointer after it. */
  if (st == HS_OK && pool->wal) st = pool_recover(pool);
  if (st == HS_OK) st = catalog_start(pool);
  if (st == HS_OK) st = pool_checkpointer_start(pool);
  if (st == HS_OK) st = bgwriter_start(pool, opts);
  if (st != HS_OK) {
    pool_free(pool);
    return st;
  }
  *out = pool;
  return HS_OK;
}

hs_status hs_pool_close(hs_pool *pool) {
  if (!pool) return HS_OK;
  /* The pool's own threads first: a checkpoint under way pins the buffers
   * it writes, and would otherwise pass for a caller's pin below. If the
   * close fails they start again, since the pool stays open. */
  pool_checkpointer_stop(pool);
  bgwriter_thread_stop(pool);
  hs_status st = HS_OK;
  for (uint32_t b = 0; b < pool->nbuffers && st == HS_OK; b++) {
    hs_bufdesc *d = pool_desc(pool, (hs_buf)b);
    uint32_t state = atomic_load(&pool_bstate(pool, (hs_buf)b)->state);
    if (pool_pin_count(pool, (hs_buf)b, state) > 0) {
      hs_buftag t = buf_tag_get(d);
      char who[96];
      pool_pinned_by(pool, (hs_buf)b, state, who, sizeof who);
      st = hs_fail(HS_ERR_BUSY, 0,
                   "cannot close the pool: buffer %u (block %u of relation %u) is still pinned %s",
                   b, t.block, t.rel, who);
    }
  }
  /* With a log, a last checkpoint (PostgreSQL's shutdown checkpoint):
   * every page on disk and the redo point at the end, so the next open
   * has nothing to replay. */
  if (st == HS_OK) {
    pool->shutting_down = true; /* the checkpoint's control file says "shut down" */
    st = pool->wal ? hs_pool_checkpoint(pool) : hs_pool_flush_all(pool);
    /* Without a log no checkpoint records the files' sizes: the close does. */
    if (st == HS_OK && !pool->wal) st = smgr_catalog_record_sizes(pool->smgr);
    if (st == HS_OK && !pool->wal) {
      hs_control c = pool->control;
      c.state = HS_DB_SHUT_DOWN;
      c.id_floor = atomic_load(&pool->id_floor);
      st = control_write(hs_smgr_dir(pool->smgr), &c);
    }
    if (st != HS_OK) pool->shutting_down = false;
  }
  if (st != HS_OK) {
    /* The pool stays open (its dirty pages are not lost), threads and all. */
    char why[512];
    snprintf(why, sizeof why, "%s", hs_last_error());
    int err = hs_last_errno();
    (void)pool_checkpointer_start(pool);
    (void)bgwriter_thread_start(pool);
    return hs_fail(st, err, "%s", why);
  }
  pool_free(pool);
  return HS_OK;
}

void hs_pool_abandon(hs_pool *pool) {
  if (pool) pool_free(pool);
}

hs_smgr *hs_pool_smgr(hs_pool *pool) {
  return pool->smgr;
}
hs_translation hs_pool_translation(const hs_pool *pool) {
  return pool && pool->table.direct ? HS_TRANSLATION_DIRECT : HS_TRANSLATION_HASH;
}

void hs_pool_memory_usage(hs_pool *pool, hs_pool_memory *out) {
  if (!out) return;
  memset(out, 0, sizeof *out);
  if (!pool) return;
  uint64_t n = pool->nbuffers;
  out->frames = n * pool->page_size;
  out->descriptors = n * sizeof *pool->descs;
  out->states = n * sizeof *pool->states;
  out->page_table = ((uint64_t)pool->table.bucket_mask + 1) * sizeof *pool->table.heads;
  if (pool->table.direct) {
    out->direct_span = direct_map_span_bytes(pool->table.direct);
    out->direct_reserved = atomic_load(&pool->table.direct->reserved_bytes);
    out->direct_forks = atomic_load(&pool->table.direct->reserved_forks);
    out->direct_refused = atomic_load(&pool->table.direct->refused_forks);
  }
  out->pins_per_thread = n * sizeof(uint32_t);
  uint32_t max = atomic_load(&pool->pins_max);
  for (uint32_t i = 0; i < max; i++)
    if (atomic_load(&pool->pins[i])) out->pin_threads++;
  /* Under the policy's lock where its calls need one: a growing ghost
   * index rewrites what hs_policy_memory reads. */
  policy_lock(pool, pool->lock_others);
  out->policy = hs_policy_memory(pool->policy);
  policy_unlock(pool, pool->lock_others);
  uint64_t translation = pool->table.direct ? out->direct_span : out->page_table + out->descriptors;
  out->hit_bytes = translation + out->states + out->pins_per_thread + out->policy;
}

hs_huge_pages_used hs_pool_huge_pages(const hs_pool *pool) {
  return pool ? pool->huge_used : HS_HUGE_PAGES_NONE;
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

/* ---- the policy ----------------------------------------------------------
 *
 * The pool's buffers are the policy's slots; a buffer is resident for the
 * policy exactly while its tag is valid. Keys are the tags' hashes.
 */

static uint64_t now_ms(const hs_pool *pool) {
  return pool->clock_ms ? pool->clock_ms(pool->clock_ctx) : pool_now_ns() / 1000000;
}

/* `ring`: the read's strategy when it has a ring (NULL otherwise). */
static inline hs_access make_access(hs_pool *pool, uint64_t key, hs_read_mode mode,
                                    const hs_strategy *ring) {
  hs_access a = {.key = key,
                 .size = 1,
                 .now = pool->needs_time ? now_ms(pool) : 0,
                 .next = HS_NEXT_UNKNOWN,
                 .kind = mode == HS_READ_NORMAL ? HS_ACCESS_READ : HS_ACCESS_WRITE,
                 .hint = ring ? HS_HINT_RING : HS_HINT_NORMAL,
                 .recycle_first = ring && ring->config.recycle_first};
  return a;
}

/* The state bits a page read through `ring` starts with. */
static inline uint32_t ring_bits(const hs_strategy *ring) {
  if (!ring) return 0;
  return ring->config.own_writes ? BM_RING_BITS : BM_RING;
}

/* A hit for the policy. A normal access also takes the buffer away from any
 * ring: it has now been used by someone else (PostgreSQL's usage count > 1),
 * so a ring must not recycle it. */
static inline void policy_hit(hs_pool *pool, hs_buf b, uint64_t key, hs_read_mode mode,
                              const hs_strategy *ring) {
  if (!ring) {
    hs_bufstate *d = pool_bstate(pool, b);
    uint32_t s = atomic_load_explicit(&d->state, memory_order_relaxed);
    while (s & BM_RING_BITS) {
      if (s & BM_LOCKED) {
        s = buf_wait_unlocked(d);
        continue;
      }
      if (atomic_compare_exchange_weak_explicit(&d->state, &s, s & ~BM_RING_BITS,
                                                memory_order_relaxed, memory_order_relaxed))
        break;
    }
  }
  hs_access a = make_access(pool, key, mode, ring);
  policy_lock(pool, pool->lock_hits);
  hs_policy_hit(pool->policy, (uint32_t)b, &a);
  policy_unlock(pool, pool->lock_hits);
}

/* ---- the read path ------------------------------------------------------ */

/* Takes pinned buffer b's content lock exclusively for a _LOCKED read or
 * extension, as this thread's own (the caller checked there is room in its
 * list of held locks). */
static void lock_for_caller(hs_pool *pool, hs_buf b) {
  content_lock_acquire(&pool_desc(pool, b)->content_lock, lock_stripe(pool, b), HS_LOCK_EXCLUSIVE);
  held_note(pool, b, HS_LOCK_EXCLUSIVE);
}

/* A _LOCKED read or extension that found its page valid already: the lock
 * is taken now, once the threads using the page let go of it. Refused if
 * this thread holds it already (it would wait for itself); the pin goes. */
static hs_status lock_found(hs_pool *pool, hs_buf b, const char *call) {
  if (held_find(pool, b) >= 0) {
    hs_status st = pool_misuse(pool, call, b,
                               "this thread holds its content lock already (a locked read would "
                               "wait for itself)");
    pool_unpin(pool, b);
    return st;
  }
  lock_for_caller(pool, b);
  return HS_OK;
}

/* Fills buffer b, pinned and with IO_IN_PROGRESS claimed by us, with its
 * block: read from the file, or zeros. On failure the pin is dropped.
 * `lock` (zeroing modes only): the exclusive content lock is taken before
 * the page becomes valid, so every other thread that finds the buffer waits
 * for our I/O and then for our lock, never seeing the zeroed page before the
 * caller has filled it (PostgreSQL's RBM_ZERO_AND_LOCK). Waiting for that
 * lock here, with the I/O in progress, cannot deadlock: a thread can hold
 * the content lock of a buffer whose page is not valid only inside a flush,
 * which finds nothing to write and does not wait for the I/O. */
static hs_status fill_buffer(hs_pool *pool, hs_buf b, const hs_buftag *tag, hs_read_mode mode,
                             bool lock, hs_io_context ctx, hs_buf *out, bool *hit) {
  void *page = pool->pages + (size_t)b * pool->page_size;
  if (mode == HS_READ_NORMAL) {
    /* The same ending as a read stream's combined read (pool_end_reads). */
    hs_status st = hs_smgr_read(pool->smgr, tag->rel, tag->fork, tag->block, page);
    st = pool_check_read(pool, tag->rel, tag->fork, tag->block, &b, 1, st);
    pool_end_reads(pool, &b, 1, st == HS_OK, ctx, true);
    if (st != HS_OK) return st;
  } else {
    if (lock) lock_for_caller(pool, b);
    memset(page, 0, pool->page_size);
    pool_end_io(pool, b, BM_VALID, BM_IO_ERROR, false);
    if (seams.pool_zeroed) seams.pool_zeroed(pool, b, seams.pool_zeroed_ctx);
  }
  *out = b;
  if (hit) *hit = false;
  return HS_OK;
}

/* Buffer b is pinned and tagged with `tag` but may not be valid yet: wait
 * for another thread's read, or do the read ourselves. Either way this is
 * an access to a page the policy already holds: a hit for the policy. */
static hs_status finish_pinned(hs_pool *pool, hs_buf b, const hs_buftag *tag, uint64_t hash,
                               hs_read_mode mode, bool lock, hs_io_context ctx,
                               const hs_strategy *ring, hs_buf *out, bool *hit) {
  hs_bufstate *d = pool_bstate(pool, b);
  for (;;) {
    uint32_t s = atomic_load_explicit(&d->state, memory_order_acquire);
    /* The policy hears of the access only once the loader has told it about
     * the page (it does before its I/O ends): never while the slot may still
     * hold the evicted page's entry. */
    if (s & BM_VALID) {
      policy_hit(pool, b, hash, mode, ring);
      stat_add(&pool->stats, ctx, HS_STAT_HITS, 1);
      if (lock) {
        hs_status st = lock_found(pool, b, "hs_pool_read");
        if (st != HS_OK) return st;
      }
      *out = b;
      if (hit) *hit = true;
      return HS_OK;
    }
    if (s & BM_IO_IN_PROGRESS) {
      pool_wait_io(pool, b);
    } else if (pool_start_input_io(pool, b)) {
      policy_hit(pool, b, hash, mode, ring);
      return fill_buffer(pool, b, tag, mode, lock, ctx, out, hit);
    }
  }
}

/* The hit path: find the buffer without a lock, pin it (a private counter
 * and a read of the state word), check that the pin caught the page we asked
 * for — the buffer may have been given to another page between the lookup
 * and the pin — and, if its page is there, tell the policy. */
static inline __attribute__((always_inline)) pool_lookup
lookup_and_pin(hs_pool *pool, const hs_buftag *tag, uint64_t hash, hs_read_mode mode,
               hs_io_context ctx, const hs_strategy *ring, hs_buf *out) {
  hs_buf b = -1;
  uint32_t s = 0;
  /* The direct translation first (direct_map.h): the entry names the
   * buffer; once it is pinned, the entry still naming it and its tag valid
   * prove it holds the page — no descriptor, no hash chain. */
  _Atomic uint32_t *e =
      pool->table.direct ? direct_entry(pool->table.direct, tag->rel, tag->fork, tag->block) : NULL;
  uint32_t named = e ? atomic_load_explicit(e, memory_order_acquire) : 0;
  if (named) {
    b = (hs_buf)(named - 1);
    s = pool_pin(pool, b);
    if (!(s & BM_TAG_VALID) || atomic_load_explicit(e, memory_order_relaxed) != named) {
      pool_unpin(pool, b);
      b = -1;
    }
  }
  if (b < 0) {
    /* The page table: all of a hash pool's hits, and a direct pool's pages
     * its index leaves out. */
    b = page_table_lookup_fast(&pool->table, tag, hash);
    if (b < 0) return NOT_FOUND;
    s = pool_pin(pool, b);
    if (!(s & BM_TAG_VALID) || !buf_tag_is(pool_desc(pool, b), tag)) {
      pool_unpin(pool, b);
      return NOT_FOUND;
    }
  }
  *out = b;
  if (!(s & BM_VALID)) return FOUND_NOT_VALID;
  policy_hit(pool, b, hash, mode, ring);
  stat_add(&pool->stats, ctx, HS_STAT_HITS, 1);
  return FOUND_VALID;
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
  page_table_prepare(pt, tag);
  for (;;) {
    hs_buf v = HS_INVALID_BUF;
    uint32_t s = 0;
    bool reused = false;
    hs_status st = pool_take_clean_victim(pool, &incoming, ctx, ring, &vs, &v, &s, &reused);
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
      if (!had_tag) pool_push_free(pool, v);
      *out = b;
      return HS_OK;
    }
    hs_bufstate *v_word = pool_bstate(pool, v);
    s = buf_hdr_lock(v_word);
    if (pool_pin_count(pool, v, s) != 1 || (s & BM_DIRTY)) { /* pinned or dirtied meanwhile */
      buf_hdr_unlock(v_word, s);
      page_table_unlock2(pt, part, old_part);
      unpin_victim(pool, v);
      if (!had_tag) pool_push_free(pool, v); /* back where it came from, not lost */
      continue;
    }
    bool evicted = s & BM_VALID;
    if (had_tag) page_table_delete(pt, v, old_hash);
    buf_tag_set(vd, tag);
    atomic_store_explicit(&vd->lsn, 0, memory_order_relaxed);
    page_table_insert(pt, v, hash);
    s = own_victim_pin(mine, v, s);
    buf_hdr_unlock(v_word,
                   (s & BUF_REFCOUNT_MASK) | BM_TAG_VALID | BM_IO_IN_PROGRESS | ring_bits(ring));
    page_table_unlock2(pt, part, old_part);

    policy_lock(pool, pool->lock_others);
    if (had_tag) hs_policy_evict(pool->policy, (uint32_t)v);
    st = hs_policy_insert(pool->policy, (uint32_t)v, &incoming);
    policy_unlock(pool, pool->lock_others);
    if (st != HS_OK) { /* cannot happen: one buffer, one slot */
      pool_end_io(pool, v, BM_IO_ERROR, 0, false);
      pool_unpin(pool, v);
      return st;
    }
    pool_note_victim(pool, ctx, ring, v, reused, evicted);
    *out = v;
    *claimed = true;
    return HS_OK;
  }
}

/* hs_pool_extend: a buffer first, then the block. The
 * relation is extended only once a clean buffer is held for the new page,
 * taken out of the page table and the policy, so a read that could get no
 * buffer (HS_ERR_NO_BUFFERS, a victim's write error) leaves the file as it
 * was; and a failed extension gives the buffer back to the free list. The
 * new block's number goes to *block_out. */
static hs_status read_new(hs_pool *pool, hs_relid rel, hs_fork fork, hs_io_context ctx,
                          hs_strategy *ring, bool lock, hs_buf *out, bool *hit,
                          hs_blockno *block_out) {
  hs_page_table *pt = &pool->table;
  _Atomic uint32_t *mine = my_pins(pool);
  /* The key the new block will most likely have (a concurrent extender may
   * take it first): some policies look at the incoming key when choosing. */
  hs_blockno guess = 0;
  if (hs_smgr_nblocks(pool->smgr, rel, fork, &guess) != HS_OK) guess = 0;
  hs_buftag guess_tag = {.rel = rel, .fork = fork, .block = guess};
  hs_access incoming = make_access(pool, buf_tag_hash(&guess_tag), POOL_READ_NEW, ring);
  victim_search vs = {.pool = pool};
  hs_buf v;
  for (;;) {
    uint32_t s = 0;
    bool reused = false;
    hs_status st = pool_take_clean_victim(pool, &incoming, ctx, ring, &vs, &v, &s, &reused);
    if (st != HS_OK) return st;
    hs_bufdesc *vd = pool_desc(pool, v);
    /* Take the victim's page away (as a drop would), keeping our pin. */
    bool had_tag = s & BM_TAG_VALID;
    hs_buftag old_tag = buf_tag_get(vd);
    uint64_t old_hash = buf_tag_hash(&old_tag);
    uint32_t old_part = page_table_partition(pt, old_hash);
    if (had_tag) page_table_lock(pt, old_part);
    hs_bufstate *v_word = pool_bstate(pool, v);
    s = buf_hdr_lock(v_word);
    if (pool_pin_count(pool, v, s) != 1 || (s & BM_DIRTY) || (had_tag != !!(s & BM_TAG_VALID))) {
      buf_hdr_unlock(v_word, s);
      if (had_tag) page_table_unlock(pt, old_part);
      unpin_victim(pool, v);
      if (!had_tag) pool_push_free(pool, v);
      continue;
    }
    bool evicted = s & BM_VALID;
    if (had_tag) {
      pool_untag_locked(pool, v, old_hash, s); /* not dirty: checked above */
      page_table_unlock(pt, old_part);
      policy_lock(pool, pool->lock_others);
      hs_policy_evict(pool->policy, (uint32_t)v);
      policy_unlock(pool, pool->lock_others);
    } else { /* from the free list: it holds no page already */
      buf_hdr_unlock(v_word, s & ~(BM_VALID | BM_JUST_DIRTIED | BM_IO_ERROR | BM_RING_BITS));
    }
    pool_note_victim(pool, ctx, ring, v, reused, evicted);
    break;
  }

  hs_blockno block;
  hs_status st = hs_smgr_extend(pool->smgr, rel, fork, NULL, &block);
  if (st != HS_OK) {
    unpin_victim(pool, v);
    pool_push_free(pool, v);
    return st;
  }
  stat_add(&pool->stats, ctx, HS_STAT_EXTENDS, 1);
  if (seams.pool_extended)
    seams.pool_extended(pool, rel, (int)fork, block, seams.pool_extended_ctx);

  hs_buftag tag = {.rel = rel, .fork = fork, .block = block};
  uint64_t hash = buf_tag_hash(&tag);
  uint32_t part = page_table_partition(pt, hash);
  page_table_prepare(pt, &tag);
  page_table_lock(pt, part);
  hs_buf b = page_table_lookup(pt, &tag, hash);
  if (b >= 0) {
    /* Another thread read the brand-new block (all zeros in the file)
     * already: use its buffer, give ours back. Its page may have changed
     * since (a vacuum may have offered it as free space, and others filled
     * it): the caller checks what it got. */
    pool_pin(pool, b);
    page_table_unlock(pt, part);
    unpin_victim(pool, v);
    pool_push_free(pool, v);
    st = finish_pinned(pool, b, &tag, hash, POOL_READ_NEW, lock, ctx, ring, out, hit);
    if (st == HS_OK && block_out) *block_out = block;
    return st;
  }
  hs_bufdesc *vd = pool_desc(pool, v);
  uint32_t s = buf_hdr_lock(pool_bstate(pool, v));
  buf_tag_set(vd, &tag);
  page_table_insert(pt, v, hash);
  s = own_victim_pin(mine, v, s);
  buf_hdr_unlock(pool_bstate(pool, v),
                 (s & BUF_REFCOUNT_MASK) | BM_TAG_VALID | BM_IO_IN_PROGRESS | ring_bits(ring));
  page_table_unlock(pt, part);
  incoming.key = hash;
  policy_lock(pool, pool->lock_others);
  st = hs_policy_insert(pool->policy, (uint32_t)v, &incoming);
  policy_unlock(pool, pool->lock_others);
  if (st != HS_OK) { /* cannot happen: one buffer, one slot */
    pool_end_io(pool, v, BM_IO_ERROR, 0, false);
    pool_unpin(pool, v);
    return st;
  }
  st = fill_buffer(pool, v, &tag, POOL_READ_NEW, lock, ctx, out, hit);
  if (st == HS_OK && block_out) *block_out = block;
  return st;
}

static hs_status read_slow(hs_pool *pool, const hs_buftag *tag, uint64_t hash, hs_read_mode mode,
                           bool lock, hs_io_context ctx, hs_strategy *ring, hs_buf *out,
                           bool *hit) {
  hs_buf b;
  bool claimed;
  hs_status st = pool_claim(pool, tag, hash, mode, ctx, ring, &b, &claimed);
  if (st != HS_OK) return st;
  if (claimed) return fill_buffer(pool, b, tag, mode, lock, ctx, out, hit);
  return finish_pinned(pool, b, tag, hash, mode, lock, ctx, ring, out, hit);
}

/* The checks a call that may hand back a locked buffer makes first: a real
 * strategy of this pool, and room for one more held lock. The context the
 * I/O is counted in, and the ring (NULL unless the strategy has one: "off"
 * does not change how buffers are chosen) go to *ctx and *ring. */
static hs_status strategy_checks(hs_pool *pool, hs_strategy *strategy, bool lock, const char *call,
                                 hs_io_context *ctx, hs_strategy **ring) {
  /* Set before the checks, so no caller's path leaves them unset (gcc -O3
   * cannot see that the callers return on failure). */
  *ctx = strategy ? strategy->ctx : HS_IOCTX_NORMAL;
  *ring = strategy && strategy->size ? strategy : NULL;
  if (strategy && strategy->pool != pool)
    return hs_fail(HS_ERR_INVALID, 0, "%s: the strategy belongs to another pool", call);
  if (lock && held_count == MAX_HELD_LOCKS)
    return hs_fail(HS_ERR_MISUSE, 0, "%s: this thread holds %d content locks already (the most)",
                   call, MAX_HELD_LOCKS);
  return HS_OK;
}

hs_status hs_pool_extend(hs_pool *pool, hs_relid rel, hs_fork fork, hs_strategy *strategy,
                         bool lock, hs_buf *out, hs_blockno *block) {
  if (!pool) return hs_fail(HS_ERR_MISUSE, 0, "hs_pool_extend: the pool is NULL");
  if (!out) return hs_fail(HS_ERR_MISUSE, 0, "hs_pool_extend: out is NULL");
  if ((unsigned)fork >= HS_FORK_COUNT)
    return hs_fail(HS_ERR_MISUSE, 0, "hs_pool_extend: fork %u is not a fork (0 to %u)",
                   (unsigned)fork, HS_FORK_COUNT - 1);
  hs_io_context ctx;
  hs_strategy *ring;
  hs_status st = strategy_checks(pool, strategy, lock, "hs_pool_extend", &ctx, &ring);
  if (st != HS_OK) return st;
  return read_new(pool, rel, fork, ctx, ring, lock, out, NULL, block);
}

hs_status hs_pool_read(hs_pool *pool, hs_relid rel, hs_fork fork, hs_blockno block,
                       hs_read_mode mode, hs_strategy *strategy, hs_buf *out, bool *hit) {
  if (!pool) return hs_fail(HS_ERR_MISUSE, 0, "hs_pool_read: the pool is NULL");
  if (!out) return hs_fail(HS_ERR_MISUSE, 0, "hs_pool_read: out is NULL");
  if ((unsigned)fork >= HS_FORK_COUNT)
    return hs_fail(HS_ERR_MISUSE, 0, "hs_pool_read: fork %u is not a fork (0 to %u)",
                   (unsigned)fork, HS_FORK_COUNT - 1);
  if (mode == POOL_READ_NEW || (unsigned)mode > HS_READ_ZERO_LOCKED)
    return hs_fail(HS_ERR_MISUSE, 0, "hs_pool_read: mode %u is not a read mode", (unsigned)mode);
  bool lock = mode == HS_READ_ZERO_LOCKED;
  hs_io_context ctx;
  hs_strategy *ring;
  hs_status checked = strategy_checks(pool, strategy, lock, "hs_pool_read", &ctx, &ring);
  if (checked != HS_OK) return checked;
  if (block == HS_INVALID_BLOCK)
    return hs_fail(HS_ERR_INVALID, 0, "hs_pool_read: invalid block number");
  if (mode != HS_READ_NORMAL) {
    /* A zeroed page past the end could never be written back (the file has
     * no such block): every later flush and close would fail with it. */
    hs_blockno nblocks;
    hs_status st = hs_smgr_nblocks(pool->smgr, rel, fork, &nblocks);
    if (st != HS_OK) return st;
    if (block >= nblocks)
      return hs_fail(HS_ERR_EOF, 0,
                     "hs_pool_read: %s of block %u of relation %u (fork %d): the relation has "
                     "%u blocks; use hs_pool_extend to add one",
                     lock ? "HS_READ_ZERO_LOCKED" : "HS_READ_ZERO", block, rel, (int)fork, nblocks);
  }
  hs_buftag tag = {.rel = rel, .fork = fork, .block = block};
  uint64_t hash = buf_tag_hash(&tag);

  hs_buf b;
  switch (lookup_and_pin(pool, &tag, hash, mode, ctx, ring, &b)) {
  case FOUND_VALID:
    if (__builtin_expect(lock, 0)) {
      hs_status st = lock_found(pool, b, "hs_pool_read");
      if (st != HS_OK) return st;
    }
    *out = b;
    if (hit) *hit = true;
    return HS_OK;
  case FOUND_NOT_VALID:
    return finish_pinned(pool, b, &tag, hash, mode, lock, ctx, ring, out, hit);
  case NOT_FOUND:
    break;
  }
  return read_slow(pool, &tag, hash, mode, lock, ctx, ring, out, hit);
}

hs_status pool_read_found(hs_pool *pool, hs_buf b, const hs_buftag *tag, uint64_t hash,
                          hs_io_context ctx, hs_strategy *ring) {
  hs_buf out;
  return finish_pinned(pool, b, tag, hash, HS_READ_NORMAL, false, ctx, ring, &out, NULL);
}

pool_lookup pool_lookup_and_pin(hs_pool *pool, const hs_buftag *tag, uint64_t hash,
                                hs_io_context ctx, hs_strategy *ring, hs_buf *out) {
  return lookup_and_pin(pool, tag, hash, HS_READ_NORMAL, ctx, ring, out);
}

void *pool_page(hs_pool *pool, hs_buf b) {
  return pool->pages + (size_t)b * pool->page_size;
}

/* ---- pinned-buffer calls ------------------------------------------------ */

void *hs_buf_page(hs_pool *pool, hs_buf buf) {
  if (!buf_ok(pool, buf)) return NULL;
  /* A page reached through an unpinned buffer may be another page by the
   * time it is read: debug builds stop there. Release builds do not look
   * (the call is on every page access), as hotset/pool.h says. */
  if (HS_DEBUG_CHECKS && my_pin_count(pool, buf) == 0)
    pool_misuse(pool, "hs_buf_page", buf, "the buffer is not pinned by this thread");
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
bool hs_buf_is_dirty(hs_pool *pool, hs_buf buf) {
  return buf_ok(pool, buf) && (atomic_load(&pool_bstate(pool, buf)->state) & BM_DIRTY);
}

hs_lsn hs_buf_lsn(hs_pool *pool, hs_buf buf) {
  return buf_ok(pool, buf) ? atomic_load(&pool_desc(pool, buf)->lsn) : 0;
}

/* The checks every content-lock call makes: a real buffer, pinned by this
 * thread (a lock on an unpinned buffer guards a frame that may be given to
 * another page under it), a real mode, not held already. */
static hs_status lock_checks(hs_pool *pool, hs_buf buf, hs_lock_mode mode, const char *call) {
  if (!buf_ok(pool, buf)) return hs_fail(HS_ERR_MISUSE, 0, "%s: bad buffer %d", call, buf);
  if ((unsigned)mode > HS_LOCK_EXCLUSIVE)
    return pool_misuse(pool, call, buf, "unknown lock mode %d", (int)mode);
  if (my_pin_count(pool, buf) == 0)
    return pool_misuse(pool, call, buf, "the buffer is not pinned by this thread");
  if (held_find(pool, buf) >= 0)
    return pool_misuse(pool, call, buf,
                       "this thread holds its content lock already (locks are not recursive: "
                       "it would wait for itself)");
  if (held_count == MAX_HELD_LOCKS)
    return hs_fail(HS_ERR_MISUSE, 0, "%s: this thread holds %d content locks already (the most)",
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

hs_status hs_buf_trylock(hs_pool *pool, hs_buf buf, hs_lock_mode mode) {
  hs_status st = lock_checks(pool, buf, mode, "hs_buf_trylock");
  if (st != HS_OK) return st;
  if (!content_lock_try(&pool_desc(pool, buf)->content_lock, mode))
    return hs_fail(HS_ERR_BUSY, 0,
                   "hs_buf_trylock: buffer %d: another thread holds its content lock%s", buf,
                   mode == HS_LOCK_SHARE ? " exclusively (or waits for it)" : "");
  held_locks[held_count++] = (held_lock){.pool = pool, .buf = buf, .mode = mode};
  return HS_OK;
}

hs_status hs_buf_unlock(hs_pool *pool, hs_buf buf) {
  if (!buf_ok(pool, buf)) return hs_fail(HS_ERR_MISUSE, 0, "hs_buf_unlock: bad buffer %d", buf);
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
  if (!buf_ok(pool, buf)) return hs_fail(HS_ERR_MISUSE, 0, "hs_buf_mark_dirty: bad buffer %d", buf);
  hs_bufdesc *d = pool_desc(pool, buf);
  int i = held_find(pool, buf);
  if (i < 0 || held_locks[i].mode != HS_LOCK_EXCLUSIVE)
    return pool_misuse(pool, "hs_buf_mark_dirty", buf,
                       "this thread does not hold its content lock in exclusive mode");
  hs_bufstate *ds = pool_bstate(pool, buf);
  uint32_t old = atomic_load_explicit(&ds->state, memory_order_relaxed);
  for (;;) {
    if (old & BM_LOCKED) old = buf_wait_unlocked(ds);
    if (atomic_compare_exchange_weak_explicit(&ds->state, &old, old | BM_DIRTY | BM_JUST_DIRTIED,
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
  if (!buf_ok(pool, buf)) return hs_fail(HS_ERR_MISUSE, 0, "hs_buf_pin_again: bad buffer %d", buf);
  hs_bufstate *d = pool_bstate(pool, buf);
  if (pool_pin_count(pool, buf, atomic_load_explicit(&d->state, memory_order_acquire)) == 0)
    return pool_misuse(pool, "hs_buf_pin_again", buf,
                       "the buffer is not pinned (only a pinned buffer can be pinned again: its "
                       "frame may hold another page by now)");
  pool_pin(pool, buf);
  return HS_OK;
}

hs_status hs_buf_release(hs_pool *pool, hs_buf buf) {
  if (!buf_ok(pool, buf)) return hs_fail(HS_ERR_MISUSE, 0, "hs_buf_release: bad buffer %d", buf);
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

/* ---- statistics ----------------------------------------------------------- */

void pool_counters(hs_pool *pool, uint64_t out[HS_IOCTX_COUNT][HS_STAT_COUNT]) {
  pthread_mutex_lock(&pool->stats_lock);
  stat_shards_sum(&pool->stats, out);
  pthread_mutex_unlock(&pool->stats_lock);
}

hs_status hs_pool_stats_get(const hs_pool *cpool, hs_pool_stats *out) {
  if (!cpool || !out)
    return hs_fail(HS_ERR_MISUSE, 0, "hs_pool_stats_get: pool and out are required");
  hs_pool *pool = (hs_pool *)cpool; /* takes the statistics' mutex; changes nothing */
  memset(out, 0, sizeof *out);
  pool_counters(pool, out->count);
  out->nbuffers = pool->nbuffers;
  out->page_size = pool->page_size;
  out->misuse = atomic_load_explicit(&pool->misuse, memory_order_relaxed);
  for (uint32_t b = 0; b < pool->nbuffers; b++) {
    uint32_t s = atomic_load_explicit(&pool->states[b].state, memory_order_relaxed);
    if (s & BM_VALID) out->valid++;
    if (s & BM_DIRTY) out->dirty++;
    if (pool_pin_count(pool, (hs_buf)b, s)) out->pinned++;
  }
  return HS_OK;
}

void hs_pool_stats_reset(hs_pool *pool) {
  pthread_mutex_lock(&pool->stats_lock);
  stat_shards_reset(&pool->stats);
  bgwriter_stats_reset(&pool->bgw);
  pthread_mutex_unlock(&pool->stats_lock);
}
