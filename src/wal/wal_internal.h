/*
 * wal/wal_internal.h — what the log's files share (see hotset/wal.h).
 *
 * Positions, from low to high: flushed <= written <= copied <= reserved.
 * `reserved` is the next free LSN (under reserve_lock). A record between
 * `copied` and `reserved` may still be being copied by its inserter: each
 * inserter publishes its start in an insertion slot while it copies, and
 * what is copied is everything below the lowest published start (or all that
 * was reserved, if none is). `written` has gone to the segment files,
 * `flushed` is durable. Only the holder of write_lock writes or syncs. The
 * log buffer is a ring of buffer_bytes indexed by LSN: an inserter may copy
 * into [start, end) once written >= end - buffer_bytes, and writes out older
 * bytes itself when it is not (wal_make_room), never waiting for a later
 * insert, so no insert waits for another that waits for it.
 *
 * An insert's reservation may hold more than its record: when the record
 * does not fit in the rest of its segment, the inserter also owns that rest
 * (a switch record or the gap, then zeros) and the next segment's header
 * (wal_format.h), and copies all of it into the ring, so the ring stays
 * byte-positional and wal_write_out needs to know nothing of records. A
 * reservation is thus at most rest + segment header + record < 2 * record
 * + WAL_SEG_HEADER; max_record keeps a record at most (buffer_bytes -
 * WAL_SEG_HEADER) / 2 with its header and page refs, so every reservation
 * fits in the ring, and wal_make_room only ever needs bytes below its own
 * start: it always makes progress.
 */
#ifndef HOTSET_WAL_INTERNAL_H
#define HOTSET_WAL_INTERNAL_H

#include "hotset/wal.h"
#include "wal/wal_durable.h"
#include "wal/wal_format.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* Insertion slots: an inserter claims one, publishes its start in it while
 * it copies. More than the cores that insert at once; a thread finding
 * every slot taken yields and tries again. */
#define WAL_SLOTS     16u
#define WAL_SLOT_IDLE UINT64_MAX
#define WAL_SLOT_HELD (UINT64_MAX - 1) /* claimed, nothing reserved yet */

/* A registered resource manager. */
typedef struct wal_rmgr {
  hs_wal_redo_fn redo; /* NULL: not registered */
  void *ctx;
  char name[32];
} wal_rmgr;

struct hs_wal {
  char *dir;
  int lock_fd; /* the flocked <dir>/wal.lock: one opener at a time */
  uint64_t segment_bytes;
  uint64_t buffer_bytes;
  unsigned char *buffer;
  uint32_t max_record;

  pthread_mutex_t reserve_lock;
  uint64_t reserved, last_start; /* under reserve_lock */
  /* The last sync point (WAL_LOG_SYNCED) inserted: the durable position it
   * claims, and where it lies, [sync_point, sync_point_end); all 0 before
   * the first. Under reserve_lock. A sync point lies at or past its claim:
   * when it lies right at it, a later sync that made nothing more durable
   * than the point itself adds none (wal_note_synced). */
  uint64_t sync_claim, sync_point, sync_point_end;
  /* The redo point: the start of the checkpoint under way or last done.
   * Changed under reserve_lock, so a record reserved after a checkpoint
   * began is one whose full-page decision saw the new redo point (an
   * insert that decided against an older one is refused and decides again,
   * as PostgreSQL's XLogInsertRecord does). */
  _Atomic uint64_t redo;
  pthread_mutex_t checkpoint_lock; /* one checkpoint's end at a time */
  _Atomic uint64_t st_recycled, st_removed;
  _Atomic uint64_t reserved_pub; /* reserved, for lock-free reads */
  _Atomic uint64_t slots[WAL_SLOTS];

  /* Who syncs: at most one leader at a time (sync_running); the others
   * wait on sync_done for its end, then either find their LSN durable or
   * lead the next sync — never queueing behind it on write_lock. */
  pthread_mutex_t sync_lock;
  pthread_cond_t sync_done;
  bool sync_running;           /* under sync_lock */
  uint32_t sync_waiters;       /* followers waiting on sync_done now (under sync_lock) */
  uint32_t woken_by_last_sync; /* ... when the last sync ended (under sync_lock) */

  pthread_mutex_t write_lock;
  int fd;              /* the segment being written, -1 if none */
  uint64_t fd_segment; /* its first LSN */
  bool fd_unsynced;    /* written since its last fdatasync */
  _Atomic uint64_t written, flushed;

  /* Sticky failure: set once, every later insert and flush returns it. */
  _Atomic int failed; /* an hs_status, HS_OK while healthy */
  pthread_mutex_t fail_lock;
  char fail_msg[7000];
  int fail_errno;

  /* The WAL writer. */
  pthread_t writer;
  bool writer_running;
  pthread_mutex_t writer_lock;
  pthread_cond_t writer_wake;
  bool writer_stop;           /* under writer_lock */
  _Atomic bool writer_kicked; /* a wake-up is pending */
  uint32_t writer_delay_ms;
  uint64_t writer_flush_after;

  /* Armed faults (hotset/fault.h): per op, the operation count at which to
   * fail, the errno, and how many times; the count of operations so far. */
  pthread_mutex_t fault_lock;
  uint64_t fault_at[2], fault_count[2];
  uint32_t fault_times[2];
  int fault_err[2];
  _Atomic bool faults_armed;

  /* The log's identity and its end as found at open (wal_durable.h). */
  uint64_t system_id;
  uint64_t log_start;            /* where the first record goes in an empty log */
  bool empty_at_open;            /* no segment with a valid header at open */
  int end_kind;                  /* hs_wal_end_kind */
  char why_end[WAL_WHY_END_MAX]; /* fits hs_pool_recovery_stats.why_end (HS_RECOVERY_WHY_MAX) whole
                                  */
  /* What must be cleared past the end before the first write (under
   * write_lock): hs_wal_open itself changes nothing on disk. */
  bool clear_pending;
  bool end_settled;    /* the clearing has run: the end can no longer move */
  bool older_synced;   /* the segments before the first write's are durable */
  uint64_t clear_at;   /* zero [clear_at, its segment's end), if the segment exists */
  bool keep_evidence;  /* first copy clear_at's rest of its segment ... */
  bool keep_later;     /* ... and move the later segments that are this log's ... */
  char kept_dir[4200]; /* ... into this directory */
  /* Damage proven (HS_WAL_END_CORRUPT): writing past it would give up the
   * records after it, so the first write refuses (HS_ERR_CORRUPT) unless
   * the damage was accepted (wal_accept_damage: `hotset reset-log`). */
  bool damage_refused;
  char damage_msg[14000];
  /* Second names of segment files (a crash while an older hotset recycled
   * by link and unlink): removed before the first write (wal_names.c). */
  uint64_t *extra_names;
  size_t n_extra_names;

  pthread_mutex_t rmgr_lock;
  wal_rmgr rmgrs[HS_WAL_RMGR_COUNT];

  /* Statistics (relaxed atomics). */
  _Atomic uint64_t st_records, st_bytes, st_fpi, st_writes, st_syncs, st_sync_ns, st_segments,
      st_waits;
  _Atomic uint64_t st_calls[HS_WAL_CAUSE_COUNT], st_own_syncs[HS_WAL_CAUSE_COUNT];
};

/* Opens the segment starting at `start` for writing, creating and
 * preallocating it (zeros, fsynced, renamed into place) if missing. */
hs_status wal_segment_open_write(hs_wal *w, uint64_t start, int *fd);
/* Writes zeros into [from, to) of fd, then fdatasyncs it; `what` names the
 * file in messages. */
hs_status wal_write_zeros(hs_wal *w, int fd, uint64_t from, uint64_t to, const char *what);
/* The segments in `dir` (their first LSNs, sorted); *n of them, malloc'ed. */
hs_status wal_segment_list(const char *dir, uint64_t segment_bytes, uint64_t **starts, size_t *n);
/* The header of the segment at `start` in `dir` (*kind WAL_SEG_ZEROS for a
 * file too short to hold one); HS_ERR_IO if it cannot be opened or read. */
hs_status wal_segment_header(const char *dir, uint64_t start, wal_seg_header_kind *kind,
                             wal_seg_header *h);
/* Before the log's first write: fsyncs every segment before the one at
 * `pos`, and the directory. A process that wrote them may have died before
 * syncing them; until they are durable, nothing after them may be — else a
 * power cut could keep this process's synced records while losing the
 * earlier ones beneath them, a hole no crash of one process makes (and the
 * reader would take it for damage). PostgreSQL syncs its data directory at
 * the start of crash recovery for the same reason. */
hs_status wal_sync_older_segments(hs_wal *w, uint64_t pos);
/* Makes a durable note of a directory entry change (fsync the directory). */
hs_status wal_sync_dir(const char *dir);

/* The status and message for a failed system call: HS_ERR_NOSPACE saying
 * the disk is full for ENOSPC and EDQUOT, else `st`; the message is the
 * formatted text, then ": " and strerror(err). */
hs_status wal_sys_fail(hs_status st, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* wal_names.c: which segment names the log may write through.
 * The names, among the segments of `dir`, that are second names of one
 * file (hard links: what a crash left while an older hotset recycled a
 * segment by link then unlink): of each such file, the name its header
 * gives (else its lowest name, the one it had before it was recycled) is
 * its own, and the others are extra (*extra, malloc'ed, *n of them). */
hs_status wal_find_extra_names(const char *dir, uint64_t segment_bytes, uint64_t **extra,
                               size_t *n);
/* Removes w's extra names (each still sharing its file with another name)
 * and fsyncs the directory. Under write_lock, before the first write. */
hs_status wal_remove_extra_names(hs_wal *w);
/* The segments after the one at `seg` that are this log's or damaged: a
 * header valid and naming its own start, or a damaged one (not spares, not
 * segments never written). */
hs_status wal_own_segments_after(const char *dir, uint64_t segment_bytes, uint64_t seg,
                                 uint64_t **starts, size_t *n);

/* wal_reader.c: what the reader found at the end (after *got = false).
 * prev: the last record's start, switch records included (what the next
 * record names as its prev; 0 if none was read). fail_at: where reading
 * stopped (the invalid record or header, or the place of the missing
 * one). */
hs_lsn wal_reader_prev(const hs_wal_reader *r);
hs_lsn wal_reader_fail_at(const hs_wal_reader *r);
/* A valid record found past fail_at in the same segment (0: none): not
 * proof of damage (a torn unsynced write), but evidence to keep. */
hs_lsn wal_reader_valid_after(const hs_wal_reader *r);
/* The system id of the segments read (0 if no header was read). */
uint64_t wal_reader_system_id(const hs_wal_reader *r);

/* wal.c: wal_insert_images that also says where the record starts
 * (*start, may be NULL) — not *end minus its size when a switch record or
 * a segment header came before it. */
hs_status wal_insert_at(hs_wal *w, const hs_wal_record *rec, const void *const *images,
                        uint32_t image_len, hs_lsn redo_seen, bool *stale, hs_lsn *start,
                        hs_lsn *end);

/* wal.c: the deferred clearing past the end (under write_lock): second
 * names removed, a proven damage refused, the evidence kept, the tail
 * zeroed. */
hs_status wal_clear_after_end(hs_wal *w);

/* wal_fault.c: pwrite and fdatasync through the fault layer (the real
 * calls when nothing is armed: one relaxed load). */
ssize_t wal_pwrite(hs_wal *w, int fd, const void *buf, size_t n, off_t off);
int wal_fdatasync(hs_wal *w, int fd);
/* fsync through the same fault (HS_WAL_FAULT_SYNC): for a file whose size
 * changed, where fdatasync is not promised to make the growth durable. */
int wal_fsync(hs_wal *w, int fd);

/* wal.c: the failure that stops the log (first one kept). */
hs_status wal_fail(hs_wal *w, hs_status st, int err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
