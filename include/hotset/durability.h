/*
 * hotset/durability.h — the pool on its own log: changes logged with
 * full-page writes, checkpoints, and crash recovery.
 *
 * A pool opened with hs_pool_options.wal is durable the way PostgreSQL is:
 *
 *  - a change to a page is made under the buffer's exclusive content lock,
 *    then logged with hs_buf_log_change (byte ranges, the generic record)
 *    or hs_buf_log_record (a record of the engine's own resource manager),
 *    which also marks the buffer dirty with the record's end LSN. The first
 *    change to a page after a checkpoint's redo point logs the whole page
 *    instead (PostgreSQL's full_page_writes): a write torn half way by a
 *    crash is then repaired by recovery, which restores the image before
 *    applying anything after it;
 *  - a checkpoint (hs_pool_checkpoint, or the checkpointer thread every
 *    checkpoint_timeout_ms or max_wal_size bytes of log) notes the redo
 *    point, writes every dirty page (sorted by relation, fork, block),
 *    fsyncs every file written, logs a checkpoint record, and replaces the
 *    control file (write, fsync, rename). Log segments wholly before the
 *    redo point are then renamed for reuse or removed;
 *  - hs_pool_open replays the log from the last checkpoint's redo point
 *    before it returns: page images are restored, other records applied to
 *    pages whose LSN is older than the record (the LSN is in the page
 *    header when checksums are on; without it every record is applied, so
 *    redo functions must then be idempotent, as the generic ones are).
 *    Replay stops at the end of the log (the first incomplete record or
 *    failed CRC), the pages are written and a checkpoint taken. Register
 *    the engine's resource managers on the log before opening the pool.
 *
 * Rules: on a pool with a log, change pages only through the two logging
 * calls (a page only marked dirty has no full-page image to repair a torn
 * write). Dropping or truncating a relation is not logged yet: take a
 * checkpoint right after, before the relation's id is used again, or
 * recovery from an older redo point re-creates it.
 *
 * Names, errors, ownership and threads follow docs/api.md; a call says
 * only where it differs.
 */
#ifndef HOTSET_DURABILITY_H
#define HOTSET_DURABILITY_H

#include "hotset/pool.h"
#include "hotset/wal.h"

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* ---- logging changes to buffers ---- */

/* Logs that `n` byte ranges of the page in `buf` changed (their current
 * bytes), or the whole page if this is its first change since the redo
 * point, and marks the buffer dirty with the record's end LSN (*end, may
 * be NULL). The calling thread must hold the buffer's exclusive content
 * lock; the pool must have a log. With checksums on, ranges may not touch
 * the page header (HS_PAGE_HEADER_SIZE bytes). */
hs_status hs_buf_log_change(hs_pool *pool, hs_buf buf, const hs_wal_range *ranges, uint32_t n,
                            hs_lsn *end);

/* Logs a record of the engine's own resource manager that changes the
 * pages of `bufs` (rec->npages of them, in the order of rec->pages, which
 * may be NULL: the buffers' tags are used). Each buffer whose page was not
 * changed since the redo point gets its whole image carried in the record;
 * recovery restores that image and does not call the redo function for
 * that page (it passes NULL in its place). Marks every buffer dirty with
 * the end LSN. Exclusive content locks as above. */
hs_status hs_buf_log_record(hs_pool *pool, const hs_wal_record *rec, const hs_buf *bufs,
                            hs_lsn *end);

/* The pool's log (hs_pool_options.wal), or NULL. */
hs_wal *hs_pool_wal(hs_pool *pool);

/* An engine's counter that must never go back, whatever is lost — the
 * transaction manager's id reservation: ids below it may have been given,
 * so none may be given again even if the pages that recorded them are
 * damaged or given up. The pool keeps the highest value raised; every
 * control file it writes from then on (each checkpoint's) carries it, and
 * an open starts from the control file's. Raise it only to a value the log
 * already holds durably (flushed), so the control file is never ahead of
 * what recovery restores. Any thread. */
void hs_pool_raise_id_floor(hs_pool *pool, uint64_t floor);
/* The highest value raised, or the control file's since the open. */
uint64_t hs_pool_id_floor(hs_pool *pool);

/* ---- checkpoints ---- */

/* Runs a checkpoint now, at full speed (waits for a spread one under way
 * to end first). */
hs_status hs_pool_checkpoint(hs_pool *pool);

typedef struct hs_pool_checkpoint_stats {
  uint64_t timed;             /* started by checkpoint_timeout_ms */
  uint64_t requested;         /* by hs_pool_checkpoint, max_wal_size, or recovery's end */
  uint64_t buffers_written;   /* pages written by checkpoints */
  uint64_t write_ms, sync_ms; /* time writing (spread) and syncing */
  uint64_t segments_recycled; /* log segments renamed for reuse */
  uint64_t segments_removed;  /* ... and removed */
  hs_lsn last_redo;           /* the last checkpoint's redo point */
  hs_lsn last_checkpoint;     /* where its record starts */
  uint64_t failed;            /* the checkpointer thread's checkpoints that failed */
  char last_error[256];       /* ... the last failure's message ("" if none) */
  /* The checkpoint writing now, if any: the share of its pages written, and
   * the share its schedule says should be written by now (1 for an
   * immediate one). progress < due: it runs behind. */
  bool in_progress;
  double progress, due;
} hs_pool_checkpoint_stats;
hs_status hs_pool_checkpoint_stats_get(const hs_pool *pool, hs_pool_checkpoint_stats *out);

/* ---- recovery ---- */

/* Room for hs_pool_recovery_stats.why_end: a reason and two paths of up to
 * PATH_MAX each. */
#define HS_RECOVERY_WHY_MAX 9000

typedef struct hs_pool_recovery_stats {
  bool ran;                  /* the pool had a log with records past the redo point
                                (the checkpoint record a clean close leaves at the
                                redo point is not one: after it, ran is false) */
  hs_lsn start, end;         /* replayed [start, end) */
  uint64_t records, bytes;   /* records replayed and their bytes */
  uint64_t images;           /* pages restored from full-page images */
  uint64_t applied;          /* page changes applied by redo functions */
  uint64_t skipped;          /* page changes skipped: the page was newer */
  double seconds;            /* reading and applying the log */
  double checkpoint_seconds; /* the end-of-recovery checkpoint after it */
  /* Why replay stopped, e.g. "clean end at 1F40: zeros", with whatever
   * paths it names (a kept-* directory) whole: never cut short. */
  char why_end[HS_RECOVERY_WHY_MAX];
} hs_pool_recovery_stats;
/* What hs_pool_open's recovery did (ran = false if there was nothing). */
hs_status hs_pool_recovery_stats_get(const hs_pool *pool, hs_pool_recovery_stats *out);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
