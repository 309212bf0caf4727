/*
 * wal/wal_checkpoint.c — the log's side of a checkpoint: the redo point,
 * the checkpoint record (the data directory's control file names it: pool/), and recycling old
 * segments.
 *
 * Recycling. A segment wholly before the redo point is never read again.
 * Creating a segment costs writing all its bytes as zeros and two fsyncs
 * (wal_segment.c), so instead of removing an old one the checkpoint renames
 * it to the name of a future segment, as PostgreSQL's RemoveOldXlogFiles /
 * InstallXLogFileSegment do (by rename() since PostgreSQL 15): when the log
 * reaches it, it is opened and overwritten in place. Its old records cannot
 * pass for new ones — each names the LSN it starts at, and the reader stops
 * at the first that does not start where it is read. Spares beyond
 * `keep_segments` are removed.
 *
 * The rename never replaces a file (RENAME_NOREPLACE) and is atomic: the
 * file has its old name or its new one, never both. link() then unlink()
 * could leave both after a crash between them (or a power cut that kept
 * the link and lost the unlink), and a later checkpoint then gave the old
 * name a second future name: two future segments were one file, and the
 * log overwrote its own last checkpoint (wal_names.c repairs such a
 * directory). A segment still found with two names is never given a
 * future name: only the old name goes.
 */
#include "core/error.h"
#include "core/seams.h"
#include "core/sysio.h"
#include "wal/wal_durable.h"
#include "wal/wal_format.h"
#include "wal/wal_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

hs_lsn wal_redo_point(hs_wal *w) {
  return atomic_load_explicit(&w->redo, memory_order_acquire);
}

void wal_set_redo_point(hs_wal *w, hs_lsn redo) {
  pthread_mutex_lock(&w->reserve_lock);
  atomic_store_explicit(&w->redo, redo, memory_order_release);
  pthread_mutex_unlock(&w->reserve_lock);
}

uint64_t wal_system_id(const hs_wal *w) {
  return w->system_id;
}

bool wal_is_empty(const hs_wal *w) {
  return w->empty_at_open && atomic_load(&((hs_wal *)w)->reserved_pub) == w->log_start;
}

hs_status wal_adopt_identity(hs_wal *w, uint64_t id, hs_lsn start) {
  if (id == 0 || start % w->segment_bytes != 0)
    return hs_fail(HS_ERR_INVALID, 0,
                   "wal_adopt_identity: a non-zero system id and a start that is a multiple of "
                   "the segment size %" PRIu64 " are needed (start %" PRIX64 ")",
                   w->segment_bytes, start);
  pthread_mutex_lock(&w->write_lock);
  pthread_mutex_lock(&w->reserve_lock);
  hs_status st = HS_OK;
  if (!wal_is_empty(w)) {
    st = hs_fail(HS_ERR_INVALID, 0,
                 "%s: the log has history (segments, or records since it was opened): it keeps "
                 "its system id %016" PRIX64,
                 w->dir, w->system_id);
  } else {
    /* Nothing was written, so every position may move together. */
    w->system_id = id;
    w->log_start = start;
    w->reserved = start;
    w->last_start = 0;
    atomic_store(&w->reserved_pub, start);
    atomic_store(&w->written, start);
    atomic_store(&w->flushed, start);
    if (atomic_load(&w->redo) < start) atomic_store(&w->redo, start);
    /* A torn or damaged remnant noted at open that lies wholly before the
     * new start's segment will never be overwritten: nothing to clear. One
     * at or past it (a log with no valid header — say its first segment's
     * header sector lost — restarting at 0) is cleared as planned, or the
     * old records could chain on behind new ones of the same lengths. */
    uint64_t S = w->segment_bytes;
    if (w->clear_pending && w->clear_at - w->clear_at % S + S <= start) w->clear_pending = false;
  }
  pthread_mutex_unlock(&w->reserve_lock);
  pthread_mutex_unlock(&w->write_lock);
  return st;
}

const char *wal_open_why_end(const hs_wal *w) {
  return w->why_end;
}

bool wal_open_end_corrupt(const hs_wal *w) {
  return w->end_kind == HS_WAL_END_CORRUPT;
}

bool wal_record_is_checkpoint(const hs_wal_read_record *rec, hs_lsn *redo) {
  if (rec->rmgr != HS_WAL_RMGR_LOG || rec->type != WAL_LOG_CHECKPOINT || rec->len < 16 ||
      rec->npages != 0)
    return false;
  if (redo) *redo = wal_get64(rec->data);
  return true;
}

hs_lsn wal_checkpoint_begin(hs_wal *w) {
  pthread_mutex_lock(&w->reserve_lock);
  uint64_t redo = w->reserved;
  atomic_store_explicit(&w->redo, redo, memory_order_release);
  pthread_mutex_unlock(&w->reserve_lock);
  return redo;
}

static uint64_t wall_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static hs_status recycle_before(hs_wal *w, hs_lsn redo, uint64_t keep_bytes, uint64_t *recycled,
                                uint64_t *removed) {
  /* At least two spares: a checkpoint per segment or two is common with
   * small segments, and each spare saves a segment's zero-fill. */
  uint64_t keep = keep_bytes / w->segment_bytes;
  if (keep < 2) keep = 2;
  /* Under write_lock: only its holder creates or opens segments, so no
   * segment appears under a name while it is being given to a spare; and
   * the rename refuses to replace a file that exists all the same (a plain
   * rename would silently put a stale segment over one the log is
   * writing). */
  pthread_mutex_lock(&w->write_lock);
  /* Segments past a damaged end are evidence, not spares: they go aside
   * before any is counted or named. */
  hs_status st = wal_clear_after_end(w);
  if (st != HS_OK) {
    pthread_mutex_unlock(&w->write_lock);
    return st;
  }
  uint64_t *starts;
  size_t n;
  st = wal_segment_list(w->dir, w->segment_bytes, &starts, &n);
  if (st != HS_OK) {
    pthread_mutex_unlock(&w->write_lock);
    return st;
  }
  uint64_t redo_seg = redo - redo % w->segment_bytes;
  /* Spares are the segments past the one being written (the insert
   * position's); future names start past the last of them. */
  uint64_t reserved = hs_wal_insert_lsn(w);
  uint64_t current = reserved - reserved % w->segment_bytes;
  uint64_t next = current + w->segment_bytes;
  uint64_t spares = 0;
  for (size_t i = 0; i < n; i++)
    if (starts[i] > current) {
      spares++;
      if (starts[i] + w->segment_bytes > next) next = starts[i] + w->segment_bytes;
    }
  if (seams.wal_spare_name) seams.wal_spare_name(w, next, seams.wal_spare_name_ctx);
  for (size_t i = 0; i < n && st == HS_OK && starts[i] < redo_seg; i++) {
    char old_path[4200], new_path[4200];
    wal_segment_path(w->dir, starts[i], old_path, sizeof old_path);
    struct stat sb;
    if (lstat(old_path, &sb) != 0) {
      st = wal_sys_fail(HS_ERR_IO, errno, "%s: cannot look at an old log segment", old_path);
      break;
    }
    bool kept = false;
    while (sb.st_nlink == 1 && spares < keep && !kept) {
      wal_segment_path(w->dir, next, new_path, sizeof new_path);
      next += w->segment_bytes;
      if (sys_rename_noreplace(old_path, new_path) == 0) {
        kept = true;
      } else if (errno != EEXIST) {
        st = wal_sys_fail(HS_ERR_IO, errno, "%s: cannot rename the old log segment to %s for reuse",
                          old_path, new_path);
        break;
      }
    }
    if (st != HS_OK) break;
    if (!kept && sys_unlink(old_path) != 0) {
      st = wal_sys_fail(HS_ERR_IO, errno, "%s: cannot remove an old log segment", old_path);
      break;
    }
    if (kept) {
      spares++;
      (*recycled)++;
    } else {
      (*removed)++;
    }
  }
  /* The new names are made durable before write_lock is given up: once it
   * is, the log may reach a spare, write records into it and fdatasync
   * them — acknowledged commits in a file whose name a power cut could
   * still take back, leaving it under its old name with a header that
   * does not match (found by crash-test --power-loss: a directory that
   * would not open again). */
  if (*recycled || *removed) {
    hs_status synced = wal_sync_dir(w->dir);
    if (st == HS_OK) st = synced;
  }
  pthread_mutex_unlock(&w->write_lock);
  free(starts);
  return st;
}

/* The checkpoint record, flushed; *checkpoint is where it starts. Under
 * checkpoint_lock. */
static hs_status checkpoint_log(hs_wal *w, hs_lsn redo, uint64_t now, hs_lsn *checkpoint) {
  unsigned char payload[16];
  wal_put64(payload, redo);
  wal_put64(payload + 8, now);
  hs_wal_record rec = {
      .rmgr = HS_WAL_RMGR_LOG, .type = WAL_LOG_CHECKPOINT, .data = payload, .len = sizeof payload};
  hs_lsn start, end;
  /* The start as the insert reserved it: with a switch record or a segment
   * header before the record, end minus its size would point elsewhere. */
  hs_status st = wal_insert_at(w, &rec, NULL, 0, 0, NULL, &start, &end);
  if (st == HS_OK) st = hs_wal_flush(w, end, HS_WAL_CAUSE_CHECKPOINT, NULL);
  if (st == HS_OK) *checkpoint = start;
  return st;
}

hs_status wal_checkpoint_log(hs_wal *w, hs_lsn redo, hs_lsn *checkpoint) {
  pthread_mutex_lock(&w->checkpoint_lock);
  hs_status st = checkpoint_log(w, redo, wall_ms(), checkpoint);
  pthread_mutex_unlock(&w->checkpoint_lock);
  return st;
}

hs_status wal_recycle(hs_wal *w, hs_lsn redo, uint64_t keep_bytes, uint64_t *recycled,
                      uint64_t *removed) {
  *recycled = *removed = 0;
  pthread_mutex_lock(&w->checkpoint_lock);
  hs_status st = recycle_before(w, redo, keep_bytes, recycled, removed);
  pthread_mutex_unlock(&w->checkpoint_lock);
  atomic_fetch_add_explicit(&w->st_recycled, *recycled, memory_order_relaxed);
  atomic_fetch_add_explicit(&w->st_removed, *removed, memory_order_relaxed);
  return st;
}
