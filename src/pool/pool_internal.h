/*
 * pool/pool_internal.h — the pool's structure and the calls its files make
 * to each other (and white-box tests). Which file does what is in
 * docs/buffer-pool.md ("Files"); each file's opening comment says why.
 */
#ifndef HOTSET_POOL_POOL_INTERNAL_H
#define HOTSET_POOL_POOL_INTERNAL_H

#include "hotset/control.h"
#include "hotset/durability.h"
#include "hotset/policy.h"
#include "hotset/pool.h"
#include "pool/bgwriter.h"
#include "pool/buf_internal.h"
#include "pool/content_lock.h"
#include "pool/io_workers.h"
#include "pool/page_table.h"
#include "pool/stat_shards.h"
#include "pool/syncscan.h"

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#define FREE_NOT_IN_LIST (-2)
#define FREE_END         (-1)

struct hs_pool {
  hs_bufdesc_padded *descs;
  hs_bufstate *states;  /* one state word per buffer (buf_internal.h) */
  unsigned char *pages; /* nbuffers * page_size, 4 KiB aligned */
  /* Where the big arrays live (core/big_alloc.h): what was asked, and the
   * least any of them got. */
  hs_huge_pages huge_mode;
  hs_huge_pages_used huge_used;
  uint32_t nbuffers;
  uint32_t page_size;
  hs_smgr *smgr;
  hs_page_table table;

  /* The replacement policy (hotset/policy.h). policy_lock serializes the
   * calls the policy's flags say are not thread-safe. */
  hs_policy *policy;
  bool lock_hits;             /* hit needs policy_lock */
  bool lock_others;           /* victim/evict/insert/remove need policy_lock */
  bool needs_time;            /* the policy reads hs_access.now (milliseconds) */
  hs_wal *wal;                /* hotset's own log, or NULL */
  bool checksums;             /* pages carry hotset/page.h's header */
  bool accept_pages_past_log; /* hs_pool_options: a recovery tool's */
  hs_clock_ms_fn clock_ms;    /* NULL: the monotonic clock */
  void *clock_ctx;
  pthread_mutex_t policy_lock;

  /* Buffers that hold no page, taken before asking the policy. */
  pthread_mutex_t free_lock;
  int32_t free_head;
  _Atomic uint32_t free_count;

  hs_wal_flush_fn flush_wal_up_to;
  hs_wal_needs_flush_fn wal_needs_flush;
  void *wal_ctx;

  hs_wait_stripe lock_waits[HS_WAIT_STRIPES]; /* content-lock sleepers */
  hs_wait_stripe io_waits[HS_WAIT_STRIPES];   /* sleepers until an I/O ends */
  _Atomic uint32_t io_waiters;                /* threads asleep on an I/O now */

  hs_syncscan_table *syncscan; /* recent scan positions (syncscan.c) */
  io_workers io;               /* read streams' readers; io.n == 0: none */

  pthread_mutex_t stats_lock; /* serializes snapshot against reset */
  hs_stat_shards stats;

  /* Calls refused for breaking a rule of the API (hs_pool_stats.misuse). */
  _Atomic uint64_t misuse;
  /* Relation drops between taking a buffer's page away and giving the
   * buffer back to the free list: while one runs, "every buffer is pinned"
   * may not be concluded (victim selection waits instead). */
  _Atomic uint32_t drops_in_progress;
  /* Victim searches that found nothing and waited for a drop (or for the
   * free list) instead of answering HS_ERR_NO_BUFFERS. */
  _Atomic uint64_t victim_waits;
  /* Checkpoints (checkpoint.c). ckpt_run_lock: one checkpoint at a time.
   * ckpt_mu/ckpt_cv: the checkpointer's sleep, a spread checkpoint's
   * pacing, and the requests that cut them short (ckpt_hurry > 0: an
   * immediate checkpoint or close is waiting; ckpt_stop: close). */
  uint32_t ckpt_timeout_ms;
  uint64_t max_wal_size, keep_wal_bytes;
  double ckpt_target;
  pthread_mutex_t ckpt_run_lock, ckpt_mu, ckpt_stats_lock;
  pthread_cond_t ckpt_cv; /* on CLOCK_MONOTONIC */
  int ckpt_hurry;
  bool ckpt_stop, ckpt_running;
  pthread_t ckpt_thread;
  hs_pool_checkpoint_stats ckpt_stats; /* in_progress, progress, due: the running one's */
  uint64_t ckpt_failures;              /* the thread's checkpoints that failed */
  char ckpt_last_error[256];           /* ... and the last one's message */
  hs_pool_recovery_stats recovery;
  /* The data directory's control file as last written (pool_control.c),
   * under ckpt_run_lock once the pool is open; where recovery starts; and
   * whether the next checkpoint is the shutdown one (its control file
   * says "shut down"). */
  hs_control control;
  /* hs_page_system_tag of control.system_id, set once the control file is
   * settled at open (pool_control_start): stamped on every page written,
   * checked on every page read. */
  uint16_t system_tag;
  /* hs_pool_raise_id_floor's highest value (from the control file at
   * open): each control file written carries it. */
  _Atomic uint64_t id_floor;
  /* The open found a listed file older than its mark (smgr_catalog_stale):
   * every read of it is refused. */
  atomic_bool any_stale;
  hs_lsn recovery_start;
  bool shutting_down;

  /* Private pins: per thread shard, one counter per buffer (pins.c). */
  pthread_mutex_t pins_lock;
  _Atomic(_Atomic uint32_t *) pins[HS_STAT_SHARDS];
  _Atomic uint32_t pins_max; /* shards below this may have an array */

  bgwriter bgw; /* the background writer (bgwriter.c) */
};

/* The monotonic clock in nanoseconds (policies' time, workers' idle spin). */
static inline uint64_t pool_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline hs_bufdesc *pool_desc(hs_pool *pool, hs_buf b) {
  return &pool->descs[b].d;
}

static inline hs_bufstate *pool_bstate(hs_pool *pool, hs_buf b) {
  return &pool->states[b];
}

/* A buffer number the pool has (calls taking an hs_buf check it first). */
static inline bool buf_ok(const hs_pool *pool, hs_buf b) {
  return pool && b >= 0 && (uint32_t)b < pool->nbuffers;
}

/* The sleep queue of buffer b's content lock. */
static inline hs_wait_stripe *lock_stripe(hs_pool *pool, hs_buf b) {
  return &pool->lock_waits[(uint32_t)b % HS_WAIT_STRIPES];
}

/* policy_lock, when the policy's flags say the call needs it. */
static inline void policy_lock(hs_pool *pool, bool needed) {
  if (needed) pthread_mutex_lock(&pool->policy_lock);
}
static inline void policy_unlock(hs_pool *pool, bool needed) {
  if (needed) pthread_mutex_unlock(&pool->policy_lock);
}

/* ---- pins (pins.c; the inline half in pins.h) ------------------------------ */

/* All pins on a buffer: the state word's count plus every private one. */
uint32_t pool_pin_count(hs_pool *pool, hs_buf b, uint32_t state);

/* ---- I/O in progress (buf_io.c) -------------------------------------------- */

/* Sleeps until buffer b has no I/O in progress. */
void pool_wait_io(hs_pool *pool, hs_buf b);
/* Claims the right to read pinned buffer b in. False if it became valid or
 * someone else is reading it. */
bool pool_start_input_io(hs_pool *pool, hs_buf b);
/* Ends our I/O on b: sets and clears flags, then wakes whoever waits for it.
 * `written`: a write succeeded, so the page is clean unless re-dirtied. */
void pool_end_io(hs_pool *pool, hs_buf b, uint32_t set, uint32_t clear, bool written);

/* ---- write-back (writeback.c) ---------------------------------------------- */

/* Writes buffer b if it is valid and dirty: the WAL first, then the page.
 * The caller holds a pin and a content lock. *wrote says if it wrote;
 * *wal_flushed (may be NULL) if the WAL callback had to flush. */
hs_status pool_write_buffer(hs_pool *pool, hs_buf b, hs_io_context ctx, bool *wrote,
                            bool *wal_flushed);
/* Would writing the page of descriptor d (its LSN) need a WAL flush first? */
bool pool_needs_wal_flush(hs_pool *pool, hs_bufdesc *d);

/* ---- victims (freelist.c; rings in strategy.c) ----------------------------- */

/* Victims found dirty and unwritable that one search skips before it gives
 * up with the write error. */
#define MAX_VICTIM_WRITE_FAILURES 4

/* One search for a victim: what the policy is told to skip besides pinned
 * buffers — the ones this search could not write back. */
/* A victim search passes over up to this many dirty buffers whose write
 * would force a WAL flush, looking for one it can take without: see
 * policy_must_skip. */
#define VICTIM_FLUSH_AVOID 64u

typedef struct victim_search {
  hs_pool *pool;
  /* Dirty buffers whose write would first force a WAL flush passed over so
   * far (at most VICTIM_FLUSH_AVOID per search: after that, one is taken). */
  unsigned flush_avoided;
  /* Dirty pages of rings that write their own (hs_strategy_options.own_writes)
   * were passed over; after a search that found nothing else, one is
   * taken. */
  bool ring_dirty_passed, take_ring_dirty;
  hs_buf unwritable[MAX_VICTIM_WRITE_FAILURES];
  unsigned nunwritable;
  hs_status write_status; /* the last victim write's failure */
  int write_errno;
  char write_error[256];
} victim_search;

/* A victim made clean: pinned by us in its state word (*state: its state as
 * pinned), its page written back first if it was dirty (WAL first); *reused
 * if it is the ring's own slot. A victim whose write fails stays dirty and is
 * skipped for the rest of this search; after MAX_VICTIM_WRITE_FAILURES such
 * victims the write error is returned. */
hs_status pool_take_clean_victim(hs_pool *pool, const hs_access *incoming, hs_io_context ctx,
                                 hs_strategy *ring, victim_search *vs, hs_buf *out, uint32_t *state,
                                 bool *reused);
/* Counts a victim's taking and makes it a ring member if a ring took it. */
void pool_note_victim(hs_pool *pool, hs_io_context ctx, hs_strategy *ring, hs_buf v, bool reused,
                      bool evicted);
/* Extending a relation by one block (hs_pool_extend): an internal read
 * mode, the value 0.1's public HS_READ_NEW had, which hs_pool_read now
 * refuses as misuse. */
#define POOL_READ_NEW ((hs_read_mode)1)
/* Takes buffer b's page away: out of the page table (hash is its tag's),
 * tag and LSN cleared, every page flag cleared, and the header unlocked. The
 * caller holds the tag's partition lock and b's header lock (`locked_state`)
 * and tells the policy afterwards. Shared by a relation drop and by
 * POOL_READ_NEW, which empties its victim before it extends the file. */
void pool_untag_locked(hs_pool *pool, hs_buf b, uint64_t hash, uint32_t locked_state);
/* Puts b, holding no page, on the free list (if it is not there already). */
void pool_push_free(hs_pool *pool, hs_buf b);

/* The statistics counters alone (cheaper than hs_pool_stats_get). */
void pool_counters(hs_pool *pool, uint64_t out[HS_IOCTX_COUNT][HS_STAT_COUNT]);

/* ---- for read streams (read_stream.c) ----------------------------------- */

typedef enum pool_lookup {
  NOT_FOUND = 0,   /* not in the pool: nothing pinned */
  FOUND_VALID,     /* pinned, its page there; the policy and stats told */
  FOUND_NOT_VALID, /* pinned, its read not done (pool_read_found) */
} pool_lookup;

/* The hit path of hs_pool_read for a normal read. */
pool_lookup pool_lookup_and_pin(hs_pool *pool, const hs_buftag *tag, uint64_t hash,
                                hs_io_context ctx, hs_strategy *ring, hs_buf *out);
/* Waits for or does the read of a pinned buffer found not valid; on
 * failure the pin is dropped. */
hs_status pool_read_found(hs_pool *pool, hs_buf b, const hs_buftag *tag, uint64_t hash,
                          hs_io_context ctx, hs_strategy *ring);
/* Finds or gives the page a buffer, pinned (pool.c). */
hs_status pool_claim(hs_pool *pool, const hs_buftag *tag, uint64_t hash, hs_read_mode mode,
                     hs_io_context ctx, hs_strategy *ring, hs_buf *out, bool *claimed);
/* Ends the reads of claimed buffers after their pages were filled (ok:
 * VALID) or could not be (IO_ERROR, and with `unpin` their pins dropped:
 * the synchronous reader's way; a later read tries again). buf_io.c. */
/* Writes pinned buffer b if dirty, under the caller's content lock if this
 * thread holds one, else a share lock taken here (flush_drop.c). */
hs_status pool_flush_pinned(hs_pool *pool, hs_buf b, bool *wrote);
/* The checkpointer thread (checkpoint.c): started by hs_pool_open when the
 * pool has a log and checkpoint_timeout_ms, stopped first thing by close. */
hs_status pool_checkpointer_start(hs_pool *pool);
void pool_checkpointer_stop(hs_pool *pool);
/* The data directory's control file (pool_control.c). check reads it
 * before anything is opened and settles the page size (*page_size: the
 * option, or the directory's when the option is 0); start, with the
 * directory locked, validates the log against it (its system, its segment
 * size, the checkpoint record it names) and writes it (a new directory's
 * first one; "in recovery" or "in production"), setting
 * pool->recovery_start. note_checkpoint records a checkpoint that just
 * ended, before its log segments are recycled. */
hs_status pool_control_check(hs_pool *pool, const hs_pool_options *opts, uint32_t *page_size);
hs_status pool_control_start(hs_pool *pool);
/* The command that accepts losing what the log cannot prove, ready to
 * paste: `hotset reset-log --dir D --force`, with --wal W when the log is
 * not D/wal. Every refusal that offers it prints this one. */
void reset_log_hint(const char *dir, const char *waldir, char *out, size_t len);
hs_status pool_control_note_checkpoint(hs_pool *pool, hs_lsn checkpoint, hs_lsn redo);
/* Crash recovery (recovery.c), run by hs_pool_open when the pool has a log. */
hs_status pool_recover(hs_pool *pool);

/* After `n` pages of consecutive blocks from `first` were read into bufs
 * (status st of the read): with checksums on, verifies each page and takes
 * its LSN from its header. Returns st, or HS_ERR_CORRUPT naming the first
 * page that failed (the whole read then fails; each page is read again
 * alone by whoever wants it next, so the good ones still come through). */
hs_status pool_check_read(hs_pool *pool, hs_relid rel, hs_fork fork, hs_blockno first,
                          const hs_buf *bufs, uint32_t n, hs_status st);
void pool_end_reads(hs_pool *pool, const hs_buf *bufs, uint32_t n, bool ok, hs_io_context ctx,
                    bool unpin);
/* Gives up a claim whose read was never issued: IO_ERROR (a later reader
 * reads the page), unpinned, not counted as a read error. */
void pool_abandon_claim(hs_pool *pool, hs_buf b);
/* Waits (spinning a little first) until pinned buffer b's I/O is over; true
 * if its page is there. */
bool pool_wait_read(hs_pool *pool, hs_buf b);
void *pool_page(hs_pool *pool, hs_buf b);

/* For tests: how many threads are asleep waiting for some buffer's I/O. */
uint32_t hs_pool_debug_io_waiters(hs_pool *pool);

#endif
