/*
 * wal/wal_durable.h — what the pool's durability code (full-page writes,
 * checkpoints, recovery; hotset/durability.h) asks of the log beyond its
 * public API.
 */
#ifndef HOTSET_WAL_DURABLE_H
#define HOTSET_WAL_DURABLE_H

#include "hotset/wal.h"

#include <stdbool.h>
#include <stddef.h>
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
/* Sets the redo point at open: the pool passes its control file's redo
 * point (hotset/control.h) before recovery, so full-page decisions and
 * max_wal_size pacing start from the last checkpoint. */
void wal_set_redo_point(hs_wal *w, hs_lsn redo);

/* ---- the log's identity (the data directory's control file holds it too) ----
 *
 * Every segment's header carries the log's system identifier: a random
 * non-zero 64-bit number chosen when a log's first segment is created. */
/* The log's system identifier (read from its segments at open; for a log
 * with no segment yet, the one its first segment will get). */
uint64_t wal_system_id(const hs_wal *w);
/* True if the directory held no segment when the log was opened and none
 * has been written since: a log with no history. */
bool wal_is_empty(const hs_wal *w);
/* For an empty log only (else HS_ERR_INVALID): its segments will carry `id`
 * (the data directory's), and its first record will start at `start` (a
 * multiple of the segment size; 0 keeps the start at 0) — what
 * `hotset reset-log` needs to begin a new log past everything the data
 * files have seen. */
hs_status wal_adopt_identity(hs_wal *w, uint64_t id, hs_lsn start);

/* Finds the log's end again, read from `start` — the redo point of the
 * data directory's last checkpoint — instead of its oldest segment: what
 * lies before the redo point (a damaged byte, an old segment of the same
 * log left behind) is never replayed and must not decide where the log
 * ends. Only before anything was written since hs_wal_open (*settled
 * says it was: the end is left as it is); changes nothing on disk. */
hs_status wal_set_end_from(hs_wal *w, hs_lsn start, bool *settled);
/* Whether the end found is proven damage (valid records of this log
 * after an invalid one, in a later segment), and the refusal's message. */
bool wal_end_damaged(const hs_wal *w, const char **msg);
/* Lets the first write go past proven damage, keeping the records after
 * it as evidence: `hotset reset-log --force`, an operator's decision. */
void wal_accept_damage(hs_wal *w);

/* Why the log ended where hs_wal_open found its end (the reader's
 * classification: a clean end, a torn last record, or corruption followed
 * by more records, with where those bytes were kept), and whether it was
 * corruption. The text is fit for hs_pool_recovery_stats.why_end. */
const char *wal_open_why_end(const hs_wal *w);
bool wal_open_end_corrupt(const hs_wal *w);

/* A checkpoint's three steps. begin moves the redo point to the end of
 * what is reserved now (so later changes log full images) and returns it.
 * log, once the pages changed before it are on disk, logs the checkpoint
 * record (payload: the redo point, the wall time) and flushes it,
 * returning where the record starts. The pool then writes its control
 * file, and only then recycle renames for reuse (keeping spares for
 * keep_bytes of log, at least two) or removes the segments wholly before
 * the redo point: a crash between the two leaves a control file whose redo
 * segment still exists. */
hs_lsn wal_checkpoint_begin(hs_wal *w);
hs_status wal_checkpoint_log(hs_wal *w, hs_lsn redo, hs_lsn *checkpoint);
hs_status wal_recycle(hs_wal *w, hs_lsn redo, uint64_t keep_bytes, uint64_t *recycled,
                      uint64_t *removed);

/* A checkpoint record read back: true if `rec` is one, with its redo point. */
bool wal_record_is_checkpoint(const hs_wal_read_record *rec, hs_lsn *redo);

/* The path of the segment that starts at LSN `segment_start` in `dir`. */
void wal_segment_path(const char *dir, uint64_t segment_start, char *out, size_t len);

/* The segment size the log was opened with. */
uint64_t wal_segment_bytes(const hs_wal *w);
/* Room for the text wal_open_why_end returns: hs_pool_recovery_stats.why_end
 * holds it whole. */
#define WAL_WHY_END_MAX 5200

#endif
