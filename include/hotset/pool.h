/*
 * hotset/pool.h — the buffer pool.
 *
 * A fixed set of page frames caching blocks of relations (hotset/storage.h).
 * Callers read a block into a *pinned* buffer, take its content lock to look
 * at or change the page, mark it dirty with the LSN of the log record that
 * describes the change, and release the pin. While a buffer is pinned its
 * frame is never given to another block.
 *
 *   hs_buf b;
 *   if (hs_pool_read(pool, rel, HS_FORK_MAIN, blk, HS_READ_NORMAL, NULL, &b, NULL))
 *     fail(hs_last_error());
 *   hs_buf_lock(pool, b, HS_LOCK_EXCLUSIVE);
 *   change(hs_buf_page(pool, b));
 *   hs_buf_mark_dirty(pool, b, lsn, NULL);
 *   hs_buf_unlock(pool, b);
 *   hs_buf_release(pool, b);
 *
 * Concurrency: every function may be called from any number of threads.
 * Reading a resident page writes nothing other threads share: the page table
 * is read without locks (writers take a per-partition lock), and the pin is
 * an increment of the calling thread's own counter for that buffer plus a
 * load of the buffer's state word. Only threads beyond the first 64 at a
 * time, which get no private counters, pin with a compare-and-swap on the
 * state word. Pins and content locks belong to the thread that took them.
 *
 * WAL before data: a dirty page whose LSN is L is never written before the
 * owner's flush_wal_up_to(L) callback has returned HS_OK.
 *
 * Faults: a failed read leaves the buffer invalid (the next read retries); a
 * failed write leaves the page dirty in its buffer and that frame is not
 * reused. hs_pool_close reports a failed write and keeps the pool open.
 *
 * Names, errors, ownership and threads follow docs/api.md; a call says
 * only where it differs.
 */
#ifndef HOTSET_POOL_H
#define HOTSET_POOL_H

#include "hotset/huge_pages.h"
#include "hotset/stats.h"
#include "hotset/status.h"
#include "hotset/storage.h"

#include <stdbool.h>
#include <stdint.h>
/* No call here takes a stdio stream any more (the library writes to none);
 * kept for 0.1 programs that got stdio through this header. */
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The public API: exported from libhotset.so, which is otherwise built with
 * -fvisibility=hidden so its internals stay private. */
#pragma GCC visibility push(default)

typedef struct hs_pool hs_pool;
/* A buffer: an index into the pool's frames, 0 .. nbuffers-1. */
typedef int32_t hs_buf;
#define HS_INVALID_BUF ((hs_buf)-1)
/* A log sequence number: a byte position in the write-ahead log. */
typedef uint64_t hs_lsn;

/* The owner's WAL-before-data hook: make the log durable up to `upto`.
 * Set *flushed to true if a flush was actually needed (the count of those is
 * the wal_flushes statistic), false if the log was already durable there.
 * Returning anything but HS_OK stops the write; the page stays dirty. */
typedef hs_status (*hs_wal_flush_fn)(void *ctx, hs_lsn upto, bool *flushed);

/* Would writing a page with this LSN need a WAL flush first? (PostgreSQL's
 * XLogNeedsFlush.) A bulkread ring asks before reusing a dirty buffer. */
typedef bool (*hs_wal_needs_flush_fn)(void *ctx, hs_lsn lsn);

/* The clock a time-reading policy (midpoint, lru-k) sees, in milliseconds;
 * it must never go backwards. The pool's own is CLOCK_MONOTONIC; a replay of
 * a trace passes the trace's time stamps, so that a page's age is what it
 * was when the trace was recorded. Called on every read when the policy
 * reads time, from any thread: keep it cheap and thread-safe. */
typedef uint64_t (*hs_clock_ms_fn)(void *ctx);

/* A buffer access strategy (a ring for a big scan): hotset/strategy.h. NULL
 * means the normal policy. */
typedef struct hs_strategy hs_strategy;
/* hotset's write-ahead log: hotset/wal.h. */
typedef struct hs_wal hs_wal;

/* Limits of the options (hs_pool_open refuses anything outside them with
 * HS_ERR_INVALID naming the option). */
#define HS_POOL_MAX_PAGES      (1u << 30)
#define HS_POOL_MAX_PARTITIONS 65536u
#define HS_POOL_MAX_IO_WORKERS 64u
/* The background writer's (PostgreSQL's bounds): a delay of 0 (no writer
 * thread) or 10 ms .. 10 s, a multiplier from 0 to 10. */
#define HS_POOL_BGWRITER_MIN_DELAY_MS   10u
#define HS_POOL_BGWRITER_MAX_DELAY_MS   10000u
#define HS_POOL_BGWRITER_MAX_MULTIPLIER 10.0

/* Page checksums (hs_pool_options.checksums). OFF and ON are false and
 * true, so a 0.1 program's `checksums = true` still means on. */
typedef enum hs_checksums {
  HS_CHECKSUMS_OFF = 0,
  HS_CHECKSUMS_ON = 1,
  /* hs_pool_options_init's: the data directory's setting when it has one
   * (its control file, with pages or a log stored); for a new directory,
   * on when the pool has a log (option wal), off without one */
  HS_CHECKSUMS_DEFAULT = 2
} hs_checksums;

/* How a hit finds a page's buffer (docs/buffer-pool.md, "Translation"):
 * HASH, a chained hash table of tags, as PostgreSQL's buffer mapping
 * table; DIRECT, vmcache-style arithmetic as well — each relation fork
 * gets an address-space reservation of 4 bytes per block, indexed by block
 * number, so a hit reads one word there and no hash table. The hash table
 * is kept under DIRECT too, and answers for what the direct index leaves
 * out (forks beyond the 512th, blocks beyond 2^28, a refused reservation;
 * all of them where vm.overcommit_memory is 2, which charges reservations
 * in full). */
typedef enum hs_translation { HS_TRANSLATION_HASH = 0, HS_TRANSLATION_DIRECT = 1 } hs_translation;

typedef struct hs_pool_options {
  const char *dir;     /* data directory, created if missing (required) */
  uint32_t page_size;  /* bytes per page: 1 KiB .. 64 KiB, power of two; 0 = the data
                          directory's (its control file, hotset/control.h), 8 KiB for a
                          new directory. Another value than the directory's is refused. */
  uint64_t pool_bytes; /* pool size in bytes (rounded down to pages) */
  uint32_t pool_pages; /* or in pages; wins over pool_bytes when set */
  const char *policy;  /* replacement policy; NULL = "clock-sweep" */
  uint32_t partitions; /* page-table lock partitions (0 = 128; rounded up to a power of two,
                          at most HS_POOL_MAX_PARTITIONS) */
  hs_wal_flush_fn flush_wal_up_to;       /* NULL: pages carry no WAL dependency */
  hs_wal_needs_flush_fn wal_needs_flush; /* NULL: any LSN > 0 may need one */
  void *wal_ctx;
  /* Frames, descriptors, the page table and pin counters on huge pages
   * (PostgreSQL's huge_pages): TRY (the default) uses them where the
   * system allows and says which it got (hs_pool_huge_pages); ON fails
   * the open without them; OFF never uses them. */
  hs_huge_pages huge_pages;
  hs_translation translation; /* HS_TRANSLATION_HASH by default */
  /* Relation files opened with O_DIRECT (hs_smgr_options.direct_io): a
   * miss is a device read into the frame, and a write goes from the frame
   * (or its checksum copy) to the device, with nothing kept in the
   * kernel's page cache, as with PostgreSQL's debug_io_direct=data or
   * InnoDB's O_DIRECT. The open fails, naming the file system, where it
   * refuses direct I/O or needs more alignment than page_size. Off by
   * default. Page-sized buffers an engine hands to hs_smgr calls itself
   * must then be aligned to hs_smgr_io_alignment(hs_pool_smgr(pool)). */
  bool direct_io;
  uint32_t io_workers;     /* threads doing read streams' combined reads (hotset/stream.h);
                              0 = streams read on the caller's thread; at most 64 */
  hs_clock_ms_fn clock_ms; /* NULL: the monotonic clock */
  void *clock_ctx;
  /* hotset's own log (hotset/wal.h): before writing a dirty page the pool
   * flushes it up to the page's LSN, counted by why (an eviction in the
   * normal, bulkread, bulkwrite or vacuum context); a bulkread ring asks it
   * whether a flush would be needed. Excludes flush_wal_up_to, which stays
   * for engines with a log of their own. The pool does not own it: close
   * the pool first, then the log. */
  hs_wal *wal;
  /* Page checksums (hotset/page.h): every page carries a 16-byte header
   * owned by hotset — its LSN and a CRC-32C — filled in on a copy as it is
   * written and verified on every read; a page that fails is HS_ERR_CORRUPT
   * naming it. The engine's part of a page starts at HS_PAGE_HEADER_SIZE.
   * HS_CHECKSUMS_DEFAULT (hs_pool_options_init's) turns them on for a new
   * directory opened with a log: recovery then knows each page's LSN, torn
   * and misplaced writes are caught, and a file of another directory is
   * refused. They cost one CRC-32C pass per page read from the file and
   * per page written (about 1.2 us per 8 KiB page on the machine
   * CHANGELOG.md's 0.2.0 entry names); hits cost nothing. */
  hs_checksums checksums;
  /* For recovery tools only (`hotset reset-log`), never for an engine: a
   * page whose LSN is past the end of the log is read as it is instead of
   * refused. Such a page proves the log lost records it had; a tool that
   * has accepted that loss replays what the log still proves over the
   * pages as they are, before it starts a new log past them. */
  bool accept_pages_past_log;
  /* Checkpoints (hotset/durability.h; need `wal`): the checkpointer thread
   * starts one every checkpoint_timeout_ms (0 = no thread: hs_pool_checkpoint
   * only), or when max_wal_size bytes of log were written since the last
   * (0 = by time only), and spreads its writes over
   * checkpoint_completion_target of that interval (0 < t <= 1; default 0.9). */
  uint32_t checkpoint_timeout_ms;
  uint64_t max_wal_size;
  double checkpoint_completion_target;
  /* The background writer (docs/buffer-pool.md, "Background writer"):
   * every bgwriter_delay_ms it writes dirty, unpinned buffers the policy
   * will evict next, so that misses find clean victims — at most
   * bgwriter_lru_maxpages a round (0: none), aiming at the recent
   * allocations (smoothed) times bgwriter_lru_multiplier. The delay is 0
   * (no writer thread) by default, unlike PostgreSQL's 200 ms: a thread
   * writing pages on its own clock would make every existing test's write
   * counts and victim choices depend on timing; benchmarks and the CLI turn
   * it on, tests call hs_pool_bgwriter_round. */
  uint32_t bgwriter_delay_ms;     /* 0, or 10 .. 10000 */
  uint32_t bgwriter_lru_maxpages; /* 100 by hs_pool_options_init; at most HS_POOL_MAX_PAGES */
  double bgwriter_lru_multiplier; /* 2.0 by hs_pool_options_init; 0 .. 10 */
} hs_pool_options;

/* Fills in the defaults: the directory's page size (8 KiB for a new one), 128 MiB, clock-sweep, 128
 * partitions, no background writer thread (its rounds: 100 pages at most, multiplier 2). */
void hs_pool_options_init(hs_pool_options *opts);

/* With a log (option wal), replays it first (crash recovery, see
 * hotset/durability.h): register the engine's resource managers on the log
 * before. */
hs_status hs_pool_open(const hs_pool_options *opts, hs_pool **out);
/* Writes every dirty page, then frees the pool; with a log (option wal) by a
 * checkpoint (hotset/durability.h), so the next open has nothing to replay.
 * If a write fails the error is returned and the pool stays open and usable:
 * nothing is lost. Fails with HS_ERR_BUSY if a buffer is still pinned. */
hs_status hs_pool_close(hs_pool *pool);
/* Frees the pool without writing anything (dirty pages are lost, as in a
 * crash; with a log, the next open recovers them from it): for crash tests
 * and for giving up after hs_pool_close failed. */
void hs_pool_abandon(hs_pool *pool);

hs_smgr *hs_pool_smgr(hs_pool *pool);
uint32_t hs_pool_nbuffers(const hs_pool *pool);
/* What the pool's frames got (hs_pool_options.huge_pages). */
hs_huge_pages_used hs_pool_huge_pages(const hs_pool *pool);
uint32_t hs_pool_page_size(const hs_pool *pool);
/* HS_TRANSLATION_HASH for a NULL pool. */
hs_translation hs_pool_translation(const hs_pool *pool);

/* Where a pool's memory is, in bytes. `hit_bytes` is what a hit may touch
 * at random: the translation (the hash table's buckets and the
 * descriptors its chains run through, or the direct index's entries up to
 * each fork's highest block), the state words, one thread's pin counters
 * and the policy's state; pool-bench sets a hit's cost beside a chain of
 * dependent loads over a region of that size. */
typedef struct hs_pool_memory {
  uint64_t frames;          /* the pages themselves */
  uint64_t descriptors;     /* tags, content locks, LSNs: 64 bytes a buffer */
  uint64_t states;          /* the state words: 4 bytes a buffer */
  uint64_t page_table;      /* the hash table's buckets */
  uint64_t direct_span;     /* direct entries up to each fork's highest block */
  uint64_t direct_reserved; /* address space reserved for them (not memory) */
  uint32_t direct_forks;    /* relation forks with a reservation */
  uint32_t direct_refused;  /* ... given a slot, but the system refused the reservation */
  uint64_t pins_per_thread; /* private pin counters of one thread: 4 bytes a buffer */
  uint32_t pin_threads;     /* threads that have such counters */
  uint64_t policy;          /* hs_policy_memory */
  uint64_t hit_bytes;
} hs_pool_memory;
/* Any thread, at any time (the figures are each read once, not as one
 * snapshot); all zeros for a NULL pool. */
void hs_pool_memory_usage(hs_pool *pool, hs_pool_memory *out);
/* The name of the replacement policy in use, e.g. "clock-sweep". */
const char *hs_pool_policy_name(const hs_pool *pool);

typedef enum hs_read_mode {
  HS_READ_NORMAL = 0, /* read the block (it must exist); hs_pool_extend adds one */
  /* 1 was 0.1's HS_READ_NEW (removed: hs_pool_extend does it) */
  HS_READ_ZERO = 2,       /* an existing block whose old contents don't matter:
                             the buffer is zero-filled without reading; a block
                             past the end is refused with HS_ERR_EOF. Another
                             thread may lock and see the zeroed page before the
                             caller does: use HS_READ_ZERO_LOCKED to fill it */
  HS_READ_ZERO_LOCKED = 3 /* HS_READ_ZERO, returned with the content lock held
                         exclusively by the caller (PostgreSQL's
                         RBM_ZERO_AND_LOCK): the lock is taken before the
                         zeroed page becomes valid, so any other reader of
                         the block waits until the caller unlocks. If the
                         block was already in the pool its page is not
                         zeroed (as for HS_READ_ZERO): the caller, who is
                         about to overwrite it, gets the lock once the
                         threads using it are done */
} hs_read_mode;

/* Returns in *out a pinned buffer holding the block. `hit`, if not NULL, says
 * whether the block was already in the pool (no read was needed). Errors:
 * HS_ERR_EOF and other storage errors of the read; HS_ERR_NO_BUFFERS when
 * every buffer is pinned (it is not returned while a relation drop is
 * freeing buffers: the read waits for them); a dirty victim's write error
 * when four victims in a row could not be written (each stays dirty).
 * HS_READ_ZERO_LOCKED is refused (HS_ERR_MISUSE) if this thread holds the
 * buffer's content lock already, or 64 locks. */
hs_status hs_pool_read(hs_pool *pool, hs_relid rel, hs_fork fork, hs_blockno block,
                       hs_read_mode mode, hs_strategy *strategy, hs_buf *out, bool *hit);

/* Adds one zeroed block to the end of the relation's fork and returns it
 * pinned in *out, its number in *block (may be NULL). With `lock`, the
 * buffer comes with its content lock held exclusively by the caller, taken
 * before the page became valid: a thread told the block number by the
 * caller, or finding the buffer any other way, waits for the caller's unlock
 * before it can look at the page. The buffer is found before the file
 * grows: an extension that fails for want of a buffer leaves the relation
 * as it was. Concurrent extenders each get their own block. One window
 * stays, as without the lock: a thread that reads a block number it guessed
 * from the file's size (hs_smgr_nblocks) may read the new block from the
 * file before the extender's buffer holds it; the extender then gets that
 * buffer once that thread lets go of it — its page zeros, as the file has
 * it, unless threads changed it meanwhile (a vacuum that offered the new
 * page as free space, inserters that filled it). Engines that read blocks
 * they were not told about either serialize extension themselves
 * (PostgreSQL's relation extension lock) or check the page they got, as
 * hs_heap does. Errors as for
 * hs_pool_read, and the storage manager's errors of the extension. */
hs_status hs_pool_extend(hs_pool *pool, hs_relid rel, hs_fork fork, hs_strategy *strategy,
                         bool lock, hs_buf *out, hs_blockno *block);

/* The page of a pinned buffer (page_size bytes, aligned to 4 KiB and to
 * what direct I/O needs). A buffer this thread has not pinned stops a
 * debug build (-DHOTSET_DEBUG=ON); a release build does not check, since
 * the call is on every page access. */
void *hs_buf_page(hs_pool *pool, hs_buf buf);
hs_relid hs_buf_rel(hs_pool *pool, hs_buf buf);
hs_fork hs_buf_fork(hs_pool *pool, hs_buf buf);
hs_blockno hs_buf_block(hs_pool *pool, hs_buf buf);
/* The LSN last given to hs_buf_mark_dirty for this page. */
hs_lsn hs_buf_lsn(hs_pool *pool, hs_buf buf);
/* Whether the page is dirty now (not yet written since its last change):
 * what a vacuum's cost accounting charges as "dirtied" when it changes a
 * page that was clean. */
bool hs_buf_is_dirty(hs_pool *pool, hs_buf buf);

typedef enum hs_lock_mode { HS_LOCK_SHARE = 0, HS_LOCK_EXCLUSIVE = 1 } hs_lock_mode;
/* Content locks (readers-writer) of a buffer this thread has pinned. A lock
 * belongs to the thread that took it and is not recursive. Once a thread
 * waits for the exclusive lock, new share requests queue behind it (a
 * stream of readers cannot starve a writer). Refused (HS_ERR_MISUSE —
 * see "Rules and misuse" below): locking a buffer this
 * thread has not pinned, or whose lock it holds already (it would wait for
 * itself), unlocking one it does not hold. A thread holds at most 64. */
hs_status hs_buf_lock(hs_pool *pool, hs_buf buf, hs_lock_mode mode);
/* The lock without waiting: HS_OK if taken, HS_ERR_BUSY if another thread
 * holds it (or, for a share lock, waits for it exclusively), HS_ERR_MISUSE
 * when refused as hs_buf_lock refuses. */
hs_status hs_buf_trylock(hs_pool *pool, hs_buf buf, hs_lock_mode mode);
hs_status hs_buf_unlock(hs_pool *pool, hs_buf buf);

/* Marks a pinned buffer, exclusively locked by this thread, dirty and raises
 * its page LSN to `lsn` (an LSN never goes backwards). *was_clean, if not
 * NULL, tells whether this call changed the page from clean to dirty.
 * HS_ERR_MISUSE if this thread does not hold the exclusive lock. */
hs_status hs_buf_mark_dirty(hs_pool *pool, hs_buf buf, hs_lsn lsn, bool *was_clean);

/* Adds a pin for the calling thread to a buffer that is pinned. A pin
 * belongs to the thread that took it; to hand a buffer to another thread,
 * that thread pins it again while the giver still holds its pin, then the
 * giver releases its own. */
hs_status hs_buf_pin_again(hs_pool *pool, hs_buf buf);
/* Drops one of this thread's pins. Refused (misuse) if this thread holds no
 * pin on it — a double release — or if it would drop this thread's last pin
 * while it holds the buffer's content lock. */
hs_status hs_buf_release(hs_pool *pool, hs_buf buf);

/* Rules and misuse. A call that breaks one of the rules above is refused
 * without changing anything: it returns HS_ERR_MISUSE, hs_last_error() names
 * the call, the buffer, its page and the rule, and the pool counts it
 * (hs_pool_stats.misuse). A library built with -DHOTSET_DEBUG=ON stops the
 * program there instead (abort, after one line on descriptor 2), so the first
 * broken rule is found where it happens. Threads beyond the 64 that get
 * private pin counters share their pins through the buffer's state word: a
 * double release among those threads can go unnoticed. */

/* Writes a buffer this thread has pinned if it is dirty (WAL first). It
 * takes the share content lock for the write, unless this thread holds the
 * buffer's content lock already (in either mode): then it writes under that
 * one (PostgreSQL's FlushOneBuffer expects the caller to hold it). */
hs_status hs_pool_flush_buffer(hs_pool *pool, hs_buf buf);
/* Writes every dirty page of one relation (all forks), then fsyncs its files. */
hs_status hs_pool_flush_relation(hs_pool *pool, hs_relid rel);
/* Writes every dirty page, then fsyncs every file written. The flushes take
 * each buffer's share lock, except for buffers whose lock the calling thread
 * holds (written under the caller's lock, as hs_pool_flush_buffer does). */
hs_status hs_pool_flush_all(hs_pool *pool);
/* Forgets every buffer of a relation (all forks) without writing it, before
 * the relation is truncated or unlinked. HS_ERR_BUSY if one is pinned. */
hs_status hs_pool_drop_relation(hs_pool *pool, hs_relid rel);

/* A snapshot of the I/O statistics (hotset/stats.h). */
hs_status hs_pool_stats_get(const hs_pool *pool, hs_pool_stats *out);
/* Zeroes the statistics (e.g. after a warm-up). */
void hs_pool_stats_reset(hs_pool *pool);

/* One background writer round now, on the calling thread, whether or not
 * the writer thread runs (rounds never overlap): the same rule as the
 * thread's rounds, with the pool's bgwriter_lru_maxpages and multiplier.
 * *written (may be NULL) gets the buffers it wrote. A write that fails
 * leaves its page dirty and is not an error of the round (a miss or a
 * flush will report it); HS_ERR_NOMEM if the round could not allocate. */
hs_status hs_pool_bgwriter_round(hs_pool *pool, uint32_t *written);
/* The background writer's statistics (hotset/stats.h); zeroed by
 * hs_pool_stats_reset. */
hs_status hs_pool_bgwriter_stats_get(const hs_pool *pool, hs_pool_bgwriter_stats *out);

/* PostgreSQL's rule for when a scan uses a ring (hotset/strategy.h): the
 * relation is larger than `threshold_pages` (0: a quarter of the pool). */
bool hs_pool_scan_needs_ring(const hs_pool *pool, hs_blockno rel_blocks, uint32_t threshold_pages);

/* One buffer as pg_buffercache shows it. */
typedef struct hs_buffer_info {
  hs_buf buf;
  bool valid;   /* holds a readable page */
  hs_relid rel; /* tag: meaningful when valid or io_in_progress */
  hs_fork fork;
  hs_blockno block;
  uint32_t usage; /* the policy's standing (clock-sweep: usage count) */
  uint32_t pins;  /* reference count */
  bool dirty;
  bool io_in_progress;
  bool io_error; /* the last I/O on this buffer failed */
  hs_lsn lsn;
} hs_buffer_info;

/* Fills out[0 .. nbuffers-1]; `cap` must be at least hs_pool_nbuffers. */
hs_status hs_pool_dump(hs_pool *pool, hs_buffer_info *out, uint32_t cap);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
