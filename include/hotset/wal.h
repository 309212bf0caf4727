/*
 * hotset/wal.h — a write-ahead log: records appended by many threads,
 * made durable by group commit, read back for recovery.
 *
 * The log is one stream of bytes cut into segment files of a fixed size
 * (16 MiB by default), each preallocated with zeros, named by the position
 * of its first byte, and beginning with a header carrying the log's system
 * identifier; records never cross from one segment into the next. An LSN
 * is a byte position in that stream. A record carries a resource-manager
 * id (whose redo applies it: the engine registers its own, as PostgreSQL's
 * rmgrs), a type within it, the pages it touches, a payload, the LSN it
 * starts at and the one of the record before it, and a CRC-32C over all of
 * it. Reading stops at the first record that is incomplete, out of place or
 * fails its CRC: that is the end of the log.
 *
 * Inserting is two steps, as PostgreSQL's WAL insertion locks allow: space
 * is reserved under a small lock (a few instructions), then the record is
 * copied into the in-memory log buffer outside any global lock, so threads
 * copy in parallel. A flush waits until every record before its target has
 * been copied, then one thread at a time writes and fdatasyncs: a flusher
 * that finds its target already durable returns at once, and the one that
 * syncs covers everything copied so far — every commit that arrived while
 * the previous sync ran shares the next one (group commit). A WAL writer
 * thread flushes in the background every writer_delay_ms, or sooner when
 * writer_flush_after bytes are waiting, so most flushes find their work done.
 *
 * Errors: a failed write or fdatasync makes the log refuse every later
 * insert and flush (HS_ERR_IO naming the first failure): after a failed
 * fsync the kernel may have dropped the data, so nothing written since can
 * be called durable (PostgreSQL PANICs and recovers; an engine closes and
 * reopens, which recovers from what is on disk).
 *
 * Names, errors, ownership and threads follow docs/api.md; a call says
 * only where it differs.
 */
#ifndef HOTSET_WAL_H
#define HOTSET_WAL_H

#include "hotset/pool.h"
#include "hotset/status.h"
#include "hotset/storage.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The public API: exported from libhotset.so, which is otherwise built with
 * -fvisibility=hidden so its internals stay private. */
#pragma GCC visibility push(default)

typedef struct hs_wal hs_wal;
typedef struct hs_wal_read_record hs_wal_read_record; /* a record read back (below) */

/* Limits of the options (hs_wal_open refuses anything outside them). */
#define HS_WAL_MIN_SEGMENT          (1u << 16)   /* 64 KiB */
#define HS_WAL_MAX_SEGMENT          (1ull << 30) /* 1 GiB */
#define HS_WAL_MAX_PAGES_PER_RECORD 32u

typedef struct hs_wal_options {
  const char *dir;             /* the log's directory, created if missing (required) */
  uint64_t segment_bytes;      /* a power of two, 64 KiB .. 1 GiB; default 16 MiB */
  uint64_t buffer_bytes;       /* the in-memory log buffer: a power of two, at least
                                  32 KiB and at most a segment; the largest
                                  record is about half of it; default 4 MiB (or
                                  the segment) */
  uint32_t writer_delay_ms;    /* the WAL writer's period; default 200; 0 = no
                                  writer thread (flushes only when asked) */
  uint64_t writer_flush_after; /* bytes waiting that wake the writer early;
                                  default 1 MiB; 0 = only by the period */
} hs_wal_options;

/* Fills in the defaults (dir stays NULL). */
void hs_wal_options_init(hs_wal_options *opts);

/* Opens the log in opts->dir, creating it (and missing parents) if
 * missing. An existing log is read from its oldest segment to its end (the
 * first record that is incomplete, out of place or fails its CRC), and new
 * records follow it; a pool opened over it reads it again from its last
 * checkpoint's redo point. Opening changes nothing on disk: what lies past
 * the end is dealt with just before the log's first write — a second name
 * of a segment file removed, a torn last record's remains zeroed (valid
 * records after it in its segment first copied to <dir>/kept-<LSN hex>/).
 * Proven damage (HS_WAL_END_CORRUPT) makes that first write fail with
 * HS_ERR_CORRUPT naming the segment: writing there would give up every
 * record after the damage (`hotset reset-log` is the way to accept that;
 * the records are then kept in kept-<LSN>/, never deleted). A segment of
 * another log (another system identifier) is HS_ERR_CORRUPT naming it. One
 * opener at a time: a log open elsewhere (another process, or another
 * handle in this one) is HS_ERR_BUSY naming the holder's pid
 * (<dir>/wal.lock). */
hs_status hs_wal_open(const hs_wal_options *opts, hs_wal **out);
/* Flushes everything inserted, stops the writer and frees the log. On a
 * failed flush the log is freed all the same and the error returned. */
hs_status hs_wal_close(hs_wal *wal);

/* A page a record touches. */
typedef struct hs_wal_page {
  hs_relid rel;
  hs_fork fork;
  hs_blockno block;
} hs_wal_page;

/* Resource managers: who redoes a record. 0 .. 15 are hotset's own (the
 * log's, generic page changes); engines register from HS_WAL_RMGR_FIRST_USER. */
enum {
  HS_WAL_RMGR_LOG = 0,     /* the log's own records (hs_wal_insert of a commit marker) */
  HS_WAL_RMGR_GENERIC = 1, /* full page images and byte-range page changes */
  HS_WAL_RMGR_HEAP = 2,    /* the heap's tuples (registered by the heap) */
  HS_WAL_RMGR_FIRST_USER = 16,
  HS_WAL_RMGR_COUNT = 256
};

/* A record to insert: `npages` pages (at most HS_WAL_MAX_PAGES_PER_RECORD)
 * and `len` bytes of payload (at most hs_wal_max_record(wal)). */
typedef struct hs_wal_record {
  uint8_t rmgr;
  uint8_t type;
  uint16_t npages;
  const hs_wal_page *pages;
  const void *data;
  uint32_t len;
} hs_wal_record;

/* Appends a record. *end is the LSN just past it: what a page it changed is
 * stamped with (hs_buf_mark_dirty), and what to flush to (hs_wal_flush)
 * before the change may be called durable. Thread-safe; copies in parallel
 * with other inserts. */
hs_status hs_wal_insert(hs_wal *wal, const hs_wal_record *rec, hs_lsn *end);
/* The largest payload one record may carry. */
uint32_t hs_wal_max_record(const hs_wal *wal);

/* Why a flush was asked for: counted in the statistics, like pg_stat_wal's
 * and pg_stat_io's split of who paid for the syncs. */
typedef enum hs_wal_cause {
  HS_WAL_CAUSE_COMMIT = 0,      /* a transaction's commit */
  HS_WAL_CAUSE_EVICT_NORMAL,    /* writing a dirty page to reuse its buffer */
  HS_WAL_CAUSE_EVICT_BULKREAD,  /* ... under a bulkread ring */
  HS_WAL_CAUSE_EVICT_BULKWRITE, /* ... under a bulkwrite ring */
  HS_WAL_CAUSE_EVICT_VACUUM,    /* ... under a vacuum ring */
  HS_WAL_CAUSE_WRITER,          /* the WAL writer's background flush */
  HS_WAL_CAUSE_CHECKPOINT,      /* a checkpoint */
  HS_WAL_CAUSE_CLOSE,           /* closing the log */
  HS_WAL_CAUSE_COUNT
} hs_wal_cause;
const char *hs_wal_cause_name(hs_wal_cause cause);

/* Makes the log durable up to `upto` (clamped to what was inserted). Waits
 * for inserts before `upto` to finish copying, then for one fdatasync that
 * covers it — its own, or one already under way or just done. *synced (may
 * be NULL) says whether this call's own fdatasync made it durable (false:
 * it already was, or another thread's sync covered it). */
hs_status hs_wal_flush(hs_wal *wal, hs_lsn upto, hs_wal_cause cause, bool *synced);

/* The end of what was inserted (reserved), and of what is durable. */
hs_lsn hs_wal_insert_lsn(hs_wal *wal);
hs_lsn hs_wal_flushed_lsn(const hs_wal *wal);
/* The directory the log's segments are in (as given to hs_wal_open). */
const char *hs_wal_dir(const hs_wal *wal);

typedef struct hs_wal_stats {
  uint64_t records, bytes;   /* inserted by callers (bytes with headers and padding); not
                                the sync points the log adds after its syncs */
  uint64_t full_page_images; /* records carrying a whole page */
  uint64_t writes;           /* write calls to segment files */
  uint64_t syncs;            /* fdatasync calls */
  uint64_t sync_ns;          /* time spent in them */
  uint64_t segments_created;
  uint64_t segments_recycled;               /* renamed for reuse by checkpoints */
  uint64_t segments_removed;                /* ... and removed */
  uint64_t flush_calls[HS_WAL_CAUSE_COUNT]; /* hs_wal_flush calls by cause */
  uint64_t flush_syncs[HS_WAL_CAUSE_COUNT]; /* ... that ran the fdatasync */
  uint64_t flush_waits;                     /* calls that waited for another thread's sync */
} hs_wal_stats;
hs_status hs_wal_stats_get(const hs_wal *wal, hs_wal_stats *out);

/* ---- engine-neutral records (PostgreSQL's generic WAL) ----
 *
 * Two record types any engine (and any test) can log before it has a
 * resource manager of its own, both of HS_WAL_RMGR_GENERIC and one page:
 *   HS_WAL_GENERIC_IMAGE   the whole page as it is now (a full page image)
 *   HS_WAL_GENERIC_CHANGE  byte ranges of the page, each as
 *                          u16 offset, u16 length, then the new bytes
 * hs_wal_generic_redo applies either to a page. */
enum { HS_WAL_GENERIC_IMAGE = 0, HS_WAL_GENERIC_CHANGE = 1 };

/* A byte range of a page that changed. */
typedef struct hs_wal_range {
  uint32_t offset, len;
} hs_wal_range;

/* Logs the whole page (`page_size` bytes). */
hs_status hs_wal_log_image(hs_wal *wal, const hs_wal_page *page_ref, const void *page,
                           uint32_t page_size, hs_lsn *end);
/* Logs `n` ranges of `page` (their current bytes): what changed since the
 * page was last logged. Ranges must lie inside the page and not be empty. */
hs_status hs_wal_log_change(hs_wal *wal, const hs_wal_page *page_ref, const void *page,
                            uint32_t page_size, const hs_wal_range *ranges, uint32_t n,
                            hs_lsn *end);

/* ---- resource managers ----
 *
 * Recovery hands each record to the redo function of its resource manager
 * with the pages it names, read and locked: the function changes them as
 * the record says; recovery stamps their LSN. An engine registers its own
 * (ids from HS_WAL_RMGR_FIRST_USER) on the log before recovery runs;
 * HS_WAL_RMGR_GENERIC is registered from the start. */
typedef hs_status (*hs_wal_redo_fn)(void *ctx, const hs_wal_read_record *rec, void *const *pages,
                                    uint32_t page_size);
hs_status hs_wal_register_rmgr(hs_wal *wal, uint8_t id, const char *name, hs_wal_redo_fn redo,
                               void *ctx);
/* The name a resource manager was registered under, or NULL. */
const char *hs_wal_rmgr_name(const hs_wal *wal, uint8_t id);

/* ---- reading the log back (recovery, tools, tests) ---- */

typedef struct hs_wal_reader hs_wal_reader;

/* A reader of the log in `dir` (segments of `segment_bytes`) from `start`,
 * which must be a record's or a segment's start; 0 reads from the oldest
 * segment present (whatever its start). */
hs_status hs_wal_reader_open(const char *dir, uint64_t segment_bytes, hs_lsn start,
                             hs_wal_reader **out);
/* A record as read: pointers into the reader's buffer, valid until the
 * next call. */
typedef struct hs_wal_read_record {
  hs_lsn lsn, end, prev;
  uint8_t rmgr, type;
  uint16_t npages;
  hs_wal_page pages[HS_WAL_MAX_PAGES_PER_RECORD];
  /* A full image of the page the record carries (full-page writes,
   * hotset/durability.h), or NULL; its length (the page size). */
  const void *images[HS_WAL_MAX_PAGES_PER_RECORD];
  uint32_t image_len[HS_WAL_MAX_PAGES_PER_RECORD];
  const void *data;
  uint32_t len;
} hs_wal_read_record;
/* The next record: HS_OK with *got = true, or HS_OK with *got = false at the
 * end of the log (a record incomplete, out of place, or failing its CRC —
 * hs_wal_reader_why_end says which), or an I/O error. */
hs_status hs_wal_reader_next(hs_wal_reader *r, hs_wal_read_record *rec, bool *got);
/* The generic resource manager's redo: applies an IMAGE or CHANGE record
 * to its one page (pages[0]). A record that does not fit the page is
 * HS_ERR_CORRUPT naming the record. */
hs_status hs_wal_generic_redo(void *ctx, const hs_wal_read_record *rec, void *const *pages,
                              uint32_t page_size);
/* Where the log in `dir` ends, found without changing anything (hs_wal_open
 * finds it the same way before it continues there): read from the oldest
 * segment. 0 for a directory without segments; HS_ERR_CORRUPT for a
 * segment of another log. */
hs_status hs_wal_find_end(const char *dir, uint64_t segment_bytes, hs_lsn *end);

/* Why the log ended. */
typedef enum hs_wal_end_kind {
  HS_WAL_END_CLEAN = 0, /* zeros, a recycled segment or stale record, no next segment */
  HS_WAL_END_TORN,      /* an invalid last record with nothing proving the log went on
                           (valid records may follow in its own segment: an unsynced
                           write a power cut tore sector by sector): a crash mid-write,
                           the normal way a log ends after one */
  HS_WAL_END_CORRUPT    /* damage, proven: an invalid record (bad CRC, length or chain)
                           or segment header with records of this log after it in a
                           later segment (a segment is synced whole before the next is
                           written), or in its own segment after something no torn write
                           leaves (a damaged header; a record naming its own place that
                           fails within one 512-byte sector) or with a sync point (the
                           log's own record after each sync) saying the log was synced
                           past it; or a segment of another log */
} hs_wal_end_kind;
/* Where the log ends (after *got = false: the end of the last record read)
 * and why, e.g. "clean end at 1F40: zeros", "torn last record at 1F40: ...",
 * "the record at 1F40 fails its CRC ...; valid records follow at 2000". */
hs_lsn hs_wal_reader_end(const hs_wal_reader *r);
const char *hs_wal_reader_why_end(const hs_wal_reader *r);
hs_wal_end_kind hs_wal_reader_end_kind(const hs_wal_reader *r);
const char *hs_wal_end_kind_name(hs_wal_end_kind kind);
void hs_wal_reader_close(hs_wal_reader *r);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
