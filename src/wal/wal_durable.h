/*
 * wal/wal_durable.h — what the pool's durability code (full-page writes,
 * checkpoints, recovery; hotset/durability.h) asks of the log beyond its
 * public API.
 */
#ifndef HOTSET_WAL_DURABLE_H
#define HOTSET_WAL_DURABLE_H

#include "hotset/wal.h"

#include <stdbool.h>
#include <stdint.h>

/* The log's own record types (HS_WAL_RMGR_LOG). */
enum { WAL_LOG_CHECKPOINT = 200 };

/* Inserts `rec` carrying full images (image_len bytes each) of the pages
 * whose images[i] is not NULL (images may be NULL: none). With `stale`
 * given, the record is inserted only if the redo point is still
 * `redo_seen` when its space is reserved; otherwise nothing is inserted and
 * *stale = true: the caller chose the pages to image against an older redo
 * point and must choose again. */
hs_status wal_insert_images(hs_wal *w, const hs_wal_record *rec, const void *const *images,
                            uint32_t image_len, hs_lsn redo_seen, bool *stale, hs_lsn *end);

/* hs_wal_log_image and hs_wal_log_change with the redo check above. */
hs_status wal_log_image_checked(hs_wal *w, const hs_wal_page *ref, const void *page,
                                uint32_t page_size, hs_lsn redo_seen, bool *stale, hs_lsn *end);
hs_status wal_log_change_checked(hs_wal *w, const hs_wal_page *ref, const void *page,
                                 uint32_t page_size, const hs_wal_range *ranges, uint32_t n,
                                 hs_lsn redo_seen, bool *stale, hs_lsn *end);
/* Registers one of hotset's own resource managers above the log (ids
 * 2 .. 15: the heap's), replacing an earlier registration. */
hs_status wal_register_builtin_rmgr(hs_wal *w, uint8_t id, const char *name, hs_wal_redo_fn redo,
                                    void *ctx);
/* The redo function of a resource manager (false: none registered). */
bool wal_rmgr_get(hs_wal *w, uint8_t id, hs_wal_redo_fn *redo, void **ctx);

/* The current redo point: a page whose LSN is at or below it has not been
 * changed since the checkpoint that set it began. */
hs_lsn wal_redo_point(hs_wal *w);
/* Where recovery starts: the control file's redo point at open (0 for a
 * log that never had a checkpoint). */
hs_lsn wal_recovery_start(hs_wal *w);

/* A checkpoint's two ends. begin moves the redo point to the end of what
 * is reserved now (so later changes log full images) and returns it. end,
 * once the pages changed before it are on disk, logs the checkpoint record,
 * flushes it, replaces the control file, and recycles (renames for reuse,
 * keeping spares for keep_bytes of log, at least two) or removes the
 * segments wholly before the redo point. */
hs_lsn wal_checkpoint_begin(hs_wal *w);
hs_status wal_checkpoint_end(hs_wal *w, hs_lsn redo, uint64_t keep_bytes, hs_lsn *checkpoint,
                             uint64_t *recycled, uint64_t *removed);

#endif
