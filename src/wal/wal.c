/*
 * wal/wal.c — inserting, writing, flushing (group commit) and the WAL
 * writer (see hotset/wal.h for the design, wal_internal.h for the
 * positions and who may move them).
 *
 * Insert. Claim an insertion slot; under reserve_lock take [start, end)
 * and publish `start` in the slot (both under the lock, so a flusher that
 * reads `reserved` after it also sees the slot); then, outside any lock,
 * make room in the ring if the writes lag (wal_make_room), compute the CRC
 * and copy. Releasing the slot says the bytes are there.
 *
 * Flush(upto). If `flushed` is past upto, done. Else wait until everything
 * below upto is copied (the slots). If a sync is under way, wait for its end
 * (sync_done) — not for write_lock, which the next leader will hold through
 * its own sync: a follower that queued there would wait out a sync it does
 * not need (PostgreSQL's LWLockAcquireOrWait on WALWriteLock exists for
 * this). At its end we are covered, or one of the uncovered leads the next
 * sync: writes out everything copied by now — not only its own, so the
 * inserts that came while the last sync ran share this one — fdatasyncs,
 * publishes `flushed`, and wakes the waiters.
 *
 * Segments switch inside a write: the finished segment is fdatasynced before
 * it is closed, so a flush only ever syncs the segment it is writing.
 */
#include "core/crc32c.h"
#include "core/dir_lock.h"
#include "core/error.h"
#include "core/mkdirs.h"
#include "core/seams.h"
#include "core/sysio.h"
#include "core/thread_name.h"
#include "wal/wal_durable.h"
#include "wal/wal_format.h"
#include "wal/wal_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MIB (1024ull * 1024ull)

static const char *const cause_names[HS_WAL_CAUSE_COUNT] = {
    "commit",       "evict_normal", "evict_bulkread", "evict_bulkwrite",
    "evict_vacuum", "writer",       "checkpoint",     "close"};

const char *hs_wal_cause_name(hs_wal_cause cause) {
  return (unsigned)cause < HS_WAL_CAUSE_COUNT ? cause_names[cause] : "unknown";
}

void hs_wal_options_init(hs_wal_options *o) {
  memset(o, 0, sizeof *o);
  o->segment_bytes = 16 * MIB;
  o->buffer_bytes = 4 * MIB;
  o->writer_delay_ms = 200;
  o->writer_flush_after = 1 * MIB;
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

hs_status wal_fail(hs_wal *w, hs_status st, int err, const char *fmt, ...) {
  char msg[sizeof w->fail_msg];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  pthread_mutex_lock(&w->fail_lock);
  if (atomic_load(&w->failed) == HS_OK) {
    snprintf(w->fail_msg, sizeof w->fail_msg, "%s", msg);
    w->fail_errno = err;
    atomic_store(&w->failed, (int)st);
  }
  pthread_mutex_unlock(&w->fail_lock);
  return hs_fail(st, err, "%s", msg);
}

/* The sticky failure, as this thread's error. */
static hs_status wal_failed(hs_wal *w) {
  hs_status st = (hs_status)atomic_load(&w->failed);
  if (st == HS_OK) return HS_OK;
  pthread_mutex_lock(&w->fail_lock);
  char msg[sizeof w->fail_msg];
  snprintf(msg, sizeof msg, "%s", w->fail_msg);
  int err = w->fail_errno;
  pthread_mutex_unlock(&w->fail_lock);
  return hs_fail(st, err, "the log is stopped by an earlier failure: %s", msg);
}

/* ---- positions ----------------------------------------------------------- */

/* Everything below the returned LSN has been copied into the buffer. */
static uint64_t wal_copied(hs_wal *w) {
  /* `reserved` first: a slot published before it moved is visible below. */
  uint64_t done = atomic_load(&w->reserved_pub);
  for (unsigned i = 0; i < WAL_SLOTS; i++) {
    uint64_t at = atomic_load(&w->slots[i]);
    if (at < WAL_SLOT_HELD && at < done) done = at;
  }
  return done;
}

/* ---- writing --------------------------------------------------------------- */

/* The status of a failed write or sync: a full disk (or quota) is
 * HS_ERR_NOSPACE, anything else HS_ERR_IO; and its reason for a message. */
static hs_status io_status(int err) {
  return err == ENOSPC || err == EDQUOT ? HS_ERR_NOSPACE : HS_ERR_IO;
}
static const char *io_reason(int err) {
  if (err == ENOSPC) return "the disk is full (No space left on device)";
  if (err == EDQUOT) return "the disk is full for this user (Disk quota exceeded)";
  return strerror(err);
}

/* fdatasyncs the segment being written if anything went into it since its
 * last sync, timing it; a failure stops the log. Under write_lock. */
static hs_status wal_sync_segment(hs_wal *w) {
  if (w->fd < 0 || !w->fd_unsynced) return HS_OK;
  uint64_t t0 = now_ns();
  int rc = wal_fdatasync(w, w->fd);
  atomic_fetch_add_explicit(&w->st_sync_ns, now_ns() - t0, memory_order_relaxed);
  atomic_fetch_add_explicit(&w->st_syncs, 1, memory_order_relaxed);
  if (rc != 0) {
    int err = errno;
    return wal_fail(w, io_status(err), err,
                    "fdatasync of log segment %016" PRIX64 " in %s failed: %s", w->fd_segment,
                    w->dir, io_reason(err));
  }
  w->fd_unsynced = false;
  return HS_OK;
}

/* Writes [written, target) from the ring to the segment files. Under
 * write_lock; target <= wal_copied(). */
static hs_status wal_write_out(hs_wal *w, uint64_t target) {
  /* Only holders of write_lock stop the log, so this check under the lock
   * is final: once stopped, nothing more is written or synced. It matters —
   * an insert whose write-out failed gave up its slot without copying, so
   * wal_copied() now runs past bytes that were never put in the ring. */
  hs_status failed = wal_failed(w);
  if (failed != HS_OK) return failed;
  uint64_t pos = atomic_load_explicit(&w->written, memory_order_relaxed);
  if (pos >= target) return HS_OK; /* nothing to write: nothing is cleared either */
  if (w->clear_pending) {
    hs_status st = wal_clear_after_end(w);
    if (st != HS_OK) return wal_fail(w, st, hs_last_errno(), "%s", hs_last_error());
  }
  if (!w->older_synced) {
    hs_status st = wal_sync_older_segments(w, pos);
    if (st != HS_OK) return wal_fail(w, st, hs_last_errno(), "%s", hs_last_error());
  }
  while (pos < target) {
    uint64_t seg = pos - pos % w->segment_bytes;
    if (w->fd >= 0 && w->fd_segment != seg) {
      /* Finishing a segment: make it durable before leaving it, so a flush
       * only ever has the current one to sync. */
      hs_status st = wal_sync_segment(w);
      if (st != HS_OK) return st;
      /* Written and durable: nobody reads it again but recovery, so its
       * pages need not crowd the page cache's active list (the 2016 LKML
       * thread on streaming log writes). Advice only: a failure is no
       * error. */
      (void)posix_fadvise(w->fd, 0, 0, POSIX_FADV_DONTNEED);
      close(w->fd);
      w->fd = -1;
    }
    if (w->fd < 0) {
      hs_status st = wal_segment_open_write(w, seg, &w->fd);
      if (st != HS_OK) return wal_fail(w, st, hs_last_errno(), "%s", hs_last_error());
      w->fd_segment = seg;
      w->fd_unsynced = false;
    }
    /* One contiguous piece: within the segment and within the ring. */
    uint64_t n = target - pos;
    uint64_t seg_left = seg + w->segment_bytes - pos;
    uint64_t off = pos & (w->buffer_bytes - 1);
    uint64_t ring_left = w->buffer_bytes - off;
    if (n > seg_left) n = seg_left;
    if (n > ring_left) n = ring_left;
    ssize_t got = wal_pwrite(w, w->fd, w->buffer + off, (size_t)n, (off_t)(pos - seg));
    atomic_fetch_add_explicit(&w->st_writes, 1, memory_order_relaxed);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      int err = got < 0 ? errno : ENOSPC; /* no progress at all: no room */
      return wal_fail(w, io_status(err), err,
                      "writing %" PRIu64 " bytes of the log at %" PRIX64
                      " to segment %s/%016" PRIX64 " failed: %s",
                      n, pos, w->dir, seg, io_reason(err));
    }
    /* A short write (the disk filling up, a signal) is taken as far as it
     * went; the rest is written again, and a full disk then says so. */
    n = (uint64_t)got;
    w->fd_unsynced = true;
    pos += n;
    atomic_store_explicit(&w->written, pos, memory_order_release);
  }
  return HS_OK;
}

/* Room in the ring for an insert ending at `end`: the bytes below
 * end - buffer_bytes must be written out. They belong to earlier inserts
 * only, which never wait for this one. */
static hs_status wal_make_room(hs_wal *w, uint64_t end) {
  if (end <= w->buffer_bytes) return HS_OK;
  uint64_t need = end - w->buffer_bytes;
  while (atomic_load_explicit(&w->written, memory_order_acquire) < need) {
    hs_status st = wal_failed(w);
    if (st != HS_OK) return st;
    pthread_mutex_lock(&w->write_lock);
    uint64_t copied = wal_copied(w);
    st = copied > atomic_load_explicit(&w->written, memory_order_relaxed) ? wal_write_out(w, copied)
                                                                          : HS_OK;
    pthread_mutex_unlock(&w->write_lock);
    if (st != HS_OK) return st;
    if (atomic_load_explicit(&w->written, memory_order_acquire) < need)
      sched_yield(); /* an earlier insert is still copying */
  }
  return HS_OK;
}

/* ---- inserting ------------------------------------------------------------- */

uint32_t hs_wal_max_record(const hs_wal *w) {
  return w->max_record;
}

/* Sets n bytes of the ring at LSN pos to `byte` (wrapping at its end). */
static void ring_fill(hs_wal *w, uint64_t pos, int byte, uint64_t n) {
  uint64_t off = pos & (w->buffer_bytes - 1);
  uint64_t first = w->buffer_bytes - off < n ? w->buffer_bytes - off : n;
  memset(w->buffer + off, byte, (size_t)first);
  if (n > first) memset(w->buffer, byte, (size_t)(n - first));
}

/* Copies `n` bytes to the ring at LSN `pos` (wrapping at its end). */
static void ring_copy(hs_wal *w, uint64_t pos, const void *src, uint64_t n) {
  uint64_t off = pos & (w->buffer_bytes - 1);
  uint64_t first = w->buffer_bytes - off < n ? w->buffer_bytes - off : n;
  memcpy(w->buffer + off, src, (size_t)first);
  if (n > first) memcpy(w->buffer, (const unsigned char *)src + first, (size_t)(n - first));
}

static _Atomic unsigned slot_hint;
static _Thread_local unsigned my_slot = UINT32_MAX;

/* Claims an insertion slot (marks it held) and returns its index. */
static unsigned claim_slot(hs_wal *w) {
  if (my_slot == UINT32_MAX) my_slot = atomic_fetch_add(&slot_hint, 1) % WAL_SLOTS;
  for (unsigned tries = 0;; tries++) {
    unsigned i = (my_slot + tries) % WAL_SLOTS;
    uint64_t idle = WAL_SLOT_IDLE;
    if (atomic_compare_exchange_strong(&w->slots[i], &idle, WAL_SLOT_HELD)) return i;
    if (tries % WAL_SLOTS == WAL_SLOTS - 1) sched_yield();
  }
}

static void kick_writer(hs_wal *w, uint64_t end) {
  if (!w->writer_running || w->writer_flush_after == 0) return;
  if (end - atomic_load_explicit(&w->flushed, memory_order_relaxed) < w->writer_flush_after) return;
  if (atomic_exchange(&w->writer_kicked, true)) return; /* already on its way */
  pthread_mutex_lock(&w->writer_lock);
  pthread_cond_signal(&w->writer_wake);
  pthread_mutex_unlock(&w->writer_lock);
}

/* The bytes an insert owns before its record (wal_format.h): zeros from
 * `start`, a switch record at `switch_at` (naming `prev`) if one is due,
 * and the header of the segment at `seg_head` if the record opens one
 * (UINT64_MAX: none of either). */
static void put_boundary(hs_wal *w, uint64_t start, uint64_t switch_at, uint64_t prev,
                         uint64_t seg_head, uint64_t rec_start) {
  if (start < rec_start) ring_fill(w, start, 0, rec_start - start);
  if (switch_at != UINT64_MAX) {
    unsigned char h[WAL_HEADER];
    hs_wal_record sw = {.rmgr = HS_WAL_RMGR_LOG, .type = WAL_LOG_SWITCH};
    wal_encode_head(h, WAL_HEADER, switch_at, prev, &sw, NULL, 0);
    uint32_t crc = hs_crc32c(0, h + 8, WAL_HEADER - 8);
    wal_put32(h + 4, hs_crc32c(crc, h, 4));
    ring_copy(w, switch_at, h, WAL_HEADER);
  }
  if (seg_head != UINT64_MAX) {
    unsigned char h[WAL_SEG_HEADER];
    wal_seg_header_encode(h, w->system_id, seg_head, w->segment_bytes);
    ring_copy(w, seg_head, h, WAL_SEG_HEADER);
  }
}

hs_status wal_insert_images(hs_wal *w, const hs_wal_record *rec, const void *const *images,
                            uint32_t image_len, hs_lsn redo_seen, bool *stale, hs_lsn *end) {
  return wal_insert_at(w, rec, images, image_len, redo_seen, stale, NULL, end);
}

hs_status wal_insert_at(hs_wal *w, const hs_wal_record *rec, const void *const *images,
                        uint32_t image_len, hs_lsn redo_seen, bool *stale, hs_lsn *start_out,
                        hs_lsn *end) {
  if (stale) *stale = false;
  if (!w || !rec || !end)
    return hs_fail(HS_ERR_MISUSE, 0, "hs_wal_insert: wal, rec and end needed");
  if (rec->npages > HS_WAL_MAX_PAGES_PER_RECORD || (rec->npages && !rec->pages))
    return hs_fail(HS_ERR_INVALID, 0, "hs_wal_insert: %u pages (at most %u, with a page array)",
                   rec->npages, HS_WAL_MAX_PAGES_PER_RECORD);
  uint64_t image_bytes = 0;
  for (uint16_t i = 0; images && i < rec->npages; i++)
    if (images[i]) image_bytes += image_len;
  if (rec->len + image_bytes > w->max_record || (rec->len && !rec->data))
    return hs_fail(HS_ERR_INVALID, 0,
                   "hs_wal_insert: a payload of %u bytes%s (at most %u with the page images, "
                   "with a data pointer)",
                   rec->len, image_bytes ? " and page images" : "", w->max_record);
  hs_status st = wal_failed(w);
  if (st != HS_OK) return st;

  uint32_t total = (uint32_t)(wal_record_total(rec->npages, rec->len) + image_bytes);
  uint64_t size = wal_align(total);
  unsigned slot = claim_slot(w);
  pthread_mutex_lock(&w->reserve_lock);
  if (stale && atomic_load_explicit(&w->redo, memory_order_relaxed) != redo_seen) {
    pthread_mutex_unlock(&w->reserve_lock);
    atomic_store(&w->slots[slot], WAL_SLOT_IDLE);
    *stale = true;
    return HS_OK;
  }
  /* Where the record goes: records never cross a segment boundary. One
   * that does not fit in the rest of this segment leaves it to a switch
   * record (or, if not even a record header fits, to zeros: the gap rule)
   * and goes after the next segment's header, which this insert writes
   * too, as it does when the log is exactly at a segment's start. */
  const uint64_t S = w->segment_bytes;
  uint64_t start = w->reserved, prev = w->last_start;
  uint64_t pos = start, switch_at = UINT64_MAX, seg_head = UINT64_MAX;
  uint64_t left = S - pos % S;
  if (left != S && left < size) {
    if (left >= WAL_HEADER) switch_at = pos;
    pos += left;
  }
  if (pos % S == 0) {
    seg_head = pos;
    pos += WAL_SEG_HEADER;
  }
  uint64_t rec_start = pos, rec_prev = switch_at != UINT64_MAX ? switch_at : prev;
  w->reserved = rec_start + size;
  w->last_start = rec_start;
  atomic_store(&w->slots[slot], start);
  atomic_store(&w->reserved_pub, rec_start + size);
  pthread_mutex_unlock(&w->reserve_lock);

  st = wal_make_room(w, rec_start + size);
  if (st == HS_OK) {
    put_boundary(w, start, switch_at, prev, seg_head, rec_start);
    prev = rec_prev;
    uint64_t rec_lsn = rec_start;
    unsigned char head[WAL_HEADER + WAL_PAGE_REF * HS_WAL_MAX_PAGES_PER_RECORD];
    size_t head_len = WAL_HEADER + (size_t)WAL_PAGE_REF * rec->npages;
    wal_encode_head(head, total, rec_lsn, prev, rec, images, image_len);
    uint32_t crc = hs_crc32c(0, head + 8, head_len - 8);
    if (rec->len) crc = hs_crc32c(crc, rec->data, rec->len);
    for (uint16_t i = 0; image_bytes && i < rec->npages; i++)
      if (images[i]) crc = hs_crc32c(crc, images[i], image_len);
    crc = hs_crc32c(crc, head, 4);
    wal_put32(head + 4, crc);
    ring_copy(w, rec_lsn, head, head_len);
    uint64_t at = rec_lsn + head_len;
    if (rec->len) ring_copy(w, at, rec->data, rec->len);
    at += rec->len;
    for (uint16_t i = 0; image_bytes && i < rec->npages; i++)
      if (images[i]) {
        ring_copy(w, at, images[i], image_len);
        at += image_len;
      }
    static const unsigned char pad[WAL_ALIGN];
    if (size > total) ring_copy(w, rec_lsn + total, pad, size - total);
  }
  /* Released even after a failure: the log is stopped then, and a flusher
   * must not wait for these bytes forever. */
  atomic_store(&w->slots[slot], WAL_SLOT_IDLE);
  if (st != HS_OK) return st;
  atomic_fetch_add_explicit(&w->st_records, 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&w->st_bytes, rec_start + size - start, memory_order_relaxed);
  uint64_t fpi = image_len ? image_bytes / image_len : 0;
  if (rec->rmgr == HS_WAL_RMGR_GENERIC && rec->type == HS_WAL_GENERIC_IMAGE) fpi++;
  if (fpi) atomic_fetch_add_explicit(&w->st_fpi, fpi, memory_order_relaxed);
  *end = rec_start + size;
  if (start_out) *start_out = rec_start;
  kick_writer(w, rec_start + size);
  return HS_OK;
}

hs_status hs_wal_insert(hs_wal *w, const hs_wal_record *rec, hs_lsn *end) {
  if (rec && rec->rmgr == HS_WAL_RMGR_LOG &&
      (rec->type == WAL_LOG_SWITCH || rec->type == WAL_LOG_SYNCED))
    return hs_fail(HS_ERR_INVALID, 0,
                   "hs_wal_insert: type %u of resource manager %u (the log's own) is the log's "
                   "to write: the reader never hands such a record out",
                   rec->type, rec->rmgr);
  return wal_insert_images(w, rec, NULL, 0, 0, NULL, end);
}

/* ---- sync points ------------------------------------------------------------ */

/* After an fdatasync made the log durable below `synced`: a sync point
 * (WAL_LOG_SYNCED, wal_format.h) saying so, inserted at the insert
 * position, so that the reader can tell a record that fails its checks
 * below `synced` from a torn unsynced write (wal_reader.c). Never more than
 * is durable: called only once the sync returned, with what it covered (a
 * flush target: a reservation's boundary, so no record straddles it).
 *
 * Evidence, best-effort, and never a wait. Under reserve_lock only, held by
 * nobody who waits (no insert waits holding it), and taken with no other
 * lock held: the caller (hs_wal_flush) has given up write_lock and
 * sync_lock. The record is copied into the ring under reserve_lock, before
 * `reserved_pub` moves past it, so it needs no insertion slot: a flusher
 * that sees the new insert position sees its bytes copied. None is
 * inserted when
 *  - the log is stopped;
 *  - nothing past the last claim is durable (a sync that a later one
 *    already outran, or one that made only that sync point durable: with
 *    it lying right at its claim, a sync point per sync of the last one
 *    would make the WAL writer sync forever);
 *  - it would not fit in the rest of the segment being filled, or would
 *    open one (a switch record and a segment header would be needed; a
 *    sync point proves something only in its own segment, and records of
 *    a later segment prove more);
 *  - the ring has no room for it without writing out (an insert would wait
 *    in wal_make_room): a later sync inserts the next. */
static void note_synced(hs_wal *w, uint64_t synced) {
  if (atomic_load(&w->failed) != HS_OK) return;
  const uint64_t S = w->segment_bytes;
  pthread_mutex_lock(&w->reserve_lock);
  uint64_t at = w->reserved, end = at + WAL_SYNC_POINT_BYTES;
  bool news = synced > w->sync_claim && !(w->sync_point == w->sync_claim &&
                                          w->sync_point_end != 0 && synced <= w->sync_point_end);
  bool fits = at % S != 0 && S - at % S >= WAL_SYNC_POINT_BYTES;
  bool room = end <= w->buffer_bytes ||
              atomic_load_explicit(&w->written, memory_order_acquire) >= end - w->buffer_bytes;
  if (news && fits && room) {
    unsigned char b[WAL_SYNC_POINT_BYTES];
    unsigned char x[WAL_SYNC_POINT_LEN];
    wal_put64(x, synced);
    hs_wal_record rec = {
        .rmgr = HS_WAL_RMGR_LOG, .type = WAL_LOG_SYNCED, .data = x, .len = WAL_SYNC_POINT_LEN};
    wal_encode_head(b, WAL_SYNC_POINT_BYTES, at, w->last_start, &rec, NULL, 0);
    memcpy(b + WAL_HEADER, x, WAL_SYNC_POINT_LEN);
    uint32_t crc = hs_crc32c(0, b + 8, WAL_SYNC_POINT_BYTES - 8);
    wal_put32(b + 4, hs_crc32c(crc, b, 4));
    ring_copy(w, at, b, WAL_SYNC_POINT_BYTES);
    w->reserved = end;
    w->last_start = at;
    w->sync_claim = synced;
    w->sync_point = at;
    w->sync_point_end = end;
    atomic_store(&w->reserved_pub, end);
  }
  pthread_mutex_unlock(&w->reserve_lock);
}

/* Whether [from, to) of the log is the last sync point and nothing else:
 * what the WAL writer leaves for the next flush to carry. */
static bool only_sync_point(hs_wal *w, uint64_t from, uint64_t to) {
  pthread_mutex_lock(&w->reserve_lock);
  bool only = w->sync_point_end != 0 && from == w->sync_point && to == w->sync_point_end;
  pthread_mutex_unlock(&w->reserve_lock);
  return only;
}

/* ---- flushing ------------------------------------------------------------- */

hs_lsn hs_wal_insert_lsn(hs_wal *w) {
  return atomic_load(&w->reserved_pub);
}

const char *hs_wal_dir(const hs_wal *w) {
  return w->dir;
}

uint64_t wal_segment_bytes(const hs_wal *w) {
  return w->segment_bytes;
}

hs_lsn hs_wal_flushed_lsn(const hs_wal *w) {
  return atomic_load(&((hs_wal *)w)->flushed);
}

hs_status hs_wal_flush(hs_wal *w, hs_lsn upto, hs_wal_cause cause, bool *synced) {
  if (synced) *synced = false;
  if (!w || (unsigned)cause >= HS_WAL_CAUSE_COUNT)
    return hs_fail(HS_ERR_MISUSE, 0, "hs_wal_flush: no log, or an unknown cause %d", (int)cause);
  atomic_fetch_add_explicit(&w->st_calls[cause], 1, memory_order_relaxed);
  uint64_t reserved = atomic_load(&w->reserved_pub);
  if (upto > reserved) upto = reserved;
  if (atomic_load_explicit(&w->flushed, memory_order_acquire) >= upto) return wal_failed(w);
  hs_status st = wal_failed(w);
  if (st != HS_OK) return st;
  /* Every record below upto must be in the buffer before it can be
   * written: wait for the inserts copying them. */
  while (wal_copied(w) < upto) {
    if ((st = wal_failed(w)) != HS_OK) return st;
    sched_yield();
  }
  /* Lead a sync, or wait for the one under way: when it ends it may have
   * covered us (a follower of that group); if not, one of those it did
   * not cover leads the next, taking everything copied by then. */
  pthread_mutex_lock(&w->sync_lock);
  bool waited = false;
  while (w->sync_running && atomic_load(&w->flushed) < upto && atomic_load(&w->failed) == HS_OK) {
    w->sync_waiters++;
    pthread_cond_wait(&w->sync_done, &w->sync_lock);
    w->sync_waiters--;
    waited = true;
  }
  if (atomic_load(&w->flushed) >= upto || atomic_load(&w->failed) != HS_OK) {
    pthread_mutex_unlock(&w->sync_lock);
    if (waited) atomic_fetch_add_explicit(&w->st_waits, 1, memory_order_relaxed);
    return wal_failed(w);
  }
  w->sync_running = true;
  bool group_forming = w->woken_by_last_sync > 0;
  pthread_mutex_unlock(&w->sync_lock);

  /* The last sync woke followers: those it covered are about to commit
   * again. Leading at once would sync for this thread alone and make them
   * all wait for the next one; let them insert first, as long as records
   * keep arriving (a few scheduler turns at most — PostgreSQL's
   * commit_delay, but only when there is a group to wait for). */
  if (group_forming) {
    uint64_t seen = atomic_load(&w->reserved_pub);
    for (int turn = 0; turn < 8; turn++) {
      sched_yield();
      uint64_t now = atomic_load(&w->reserved_pub);
      if (now == seen) break;
      seen = now;
    }
  }
  if (seams.wal_before_write_lock) seams.wal_before_write_lock(seams.wal_before_write_lock_ctx);
  pthread_mutex_lock(&w->write_lock);
  /* Lead: everything copied by now, not only ours. */
  uint64_t target = wal_copied(w);
  st = wal_write_out(w, target);
  if (st == HS_OK) st = wal_sync_segment(w);
  if (st == HS_OK) {
    atomic_store_explicit(&w->flushed, target, memory_order_release);
    atomic_fetch_add_explicit(&w->st_own_syncs[cause], 1, memory_order_relaxed);
    if (synced) *synced = true;
  }
  pthread_mutex_unlock(&w->write_lock);
  pthread_mutex_lock(&w->sync_lock);
  w->sync_running = false;
  w->woken_by_last_sync = w->sync_waiters;
  pthread_cond_broadcast(&w->sync_done);
  pthread_mutex_unlock(&w->sync_lock);
  /* Durable below target: say so in the log, with no lock held (a close
   * writes nothing after its flush, so it would only be dropped). */
  if (st == HS_OK && cause != HS_WAL_CAUSE_CLOSE) note_synced(w, target);
  return st;
}

/* ---- the WAL writer --------------------------------------------------------- */

static void *writer_main(void *arg) {
  hs_wal *w = arg;
  pthread_mutex_lock(&w->writer_lock);
  while (!w->writer_stop) {
    if (!atomic_load(&w->writer_kicked)) {
      struct timespec until;
      clock_gettime(CLOCK_REALTIME, &until);
      uint64_t ns = (uint64_t)until.tv_nsec + (uint64_t)w->writer_delay_ms * 1000000u;
      until.tv_sec += (time_t)(ns / 1000000000u);
      until.tv_nsec = (long)(ns % 1000000000u);
      pthread_cond_timedwait(&w->writer_wake, &w->writer_lock, &until);
    }
    if (w->writer_stop) break;
    atomic_store(&w->writer_kicked, false);
    pthread_mutex_unlock(&w->writer_lock);
    /* What is copied now: the writer never waits for an insert. */
    /* A sync point alone is left for the next flush: syncing it would
     * make nothing else durable. */
    uint64_t copied = wal_copied(w), flushed = atomic_load(&w->flushed);
    if (copied > flushed && atomic_load(&w->failed) == HS_OK &&
        !only_sync_point(w, flushed, copied))
      (void)hs_wal_flush(w, copied, HS_WAL_CAUSE_WRITER, NULL); /* a failure stops the log */
    pthread_mutex_lock(&w->writer_lock);
  }
  pthread_mutex_unlock(&w->writer_lock);
  return NULL;
}

/* ---- opening and closing ------------------------------------------------- */

static bool power_of_two(uint64_t v) {
  return v && !(v & (v - 1));
}

/* Creates the log's directory and any missing parent (mkdir -p), naming the
 * component that could not be made and why. */
static hs_status make_dir(const char *dir) {
  return make_dirs(dir, 0700, "the log's directory");
}

static void wal_free(hs_wal *w) {
  if (!w) return;
  if (w->fd >= 0) close(w->fd);
  dir_lock_release(w->lock_fd); /* releases the directory, its pid cleared */
  free(w->buffer);
  free(w->dir);
  free(w->extra_names);
  pthread_mutex_destroy(&w->reserve_lock);
  pthread_mutex_destroy(&w->write_lock);
  pthread_mutex_destroy(&w->fail_lock);
  pthread_mutex_destroy(&w->writer_lock);
  pthread_cond_destroy(&w->writer_wake);
  pthread_mutex_destroy(&w->rmgr_lock);
  pthread_mutex_destroy(&w->fault_lock);
  pthread_mutex_destroy(&w->sync_lock);
  pthread_cond_destroy(&w->sync_done);
  pthread_mutex_destroy(&w->checkpoint_lock);
  free(w);
}

/* Reads every segment's header: all that are valid must carry one system
 * id (a segment of another log, copied or restored into this directory,
 * is refused: reading it as this log's would replay another database's
 * changes). *id is that id (0 if no segment has a valid header). Which id
 * is this log's is the one most segments carry — never simply the first
 * name's: a stray segment sorting below the log's own would otherwise get
 * a genuine segment blamed. With as many of each, the refusal names both
 * and blames neither. */
static hs_status check_identity(const char *dir, uint64_t segment_bytes, uint64_t *id) {
  *id = 0;
  uint64_t *starts;
  size_t n;
  hs_status st = wal_segment_list(dir, segment_bytes, &starts, &n);
  if (st != HS_OK) return st;
  uint64_t *ids = calloc(n ? n : 1, sizeof *ids);
  if (!ids) {
    free(starts);
    return hs_fail(HS_ERR_NOMEM, ENOMEM, "no memory reading the headers of %s", dir);
  }
  for (size_t i = 0; i < n && st == HS_OK; i++) {
    wal_seg_header_kind kind;
    wal_seg_header h;
    st = wal_segment_header(dir, starts[i], &kind, &h);
    if (st == HS_OK && kind == WAL_SEG_VALID) ids[i] = h.system_id;
  }
  /* The id most segments carry, and the runner-up's count. */
  size_t best = 0, best_count = 0, second_count = 0;
  for (size_t i = 0; st == HS_OK && i < n; i++) {
    bool seen = ids[i] == 0;
    for (size_t j = 0; j < i && !seen; j++) seen = ids[j] == ids[i];
    if (seen) continue; /* no id, or counted at its first segment */
    size_t count = 0;
    for (size_t j = i; j < n; j++) count += ids[j] == ids[i];
    if (count > best_count) {
      second_count = best_count;
      best = i;
      best_count = count;
    } else if (count > second_count) {
      second_count = count;
    }
  }
  if (st == HS_OK && best_count) *id = ids[best];
  for (size_t i = 0; st == HS_OK && i < n; i++) {
    if (!ids[i] || ids[i] == *id) continue;
    char path[4200], own[4200];
    wal_segment_path(dir, starts[i], path, sizeof path);
    wal_segment_path(dir, starts[best], own, sizeof own);
    if (second_count == best_count)
      st = hs_fail(HS_ERR_CORRUPT, 0,
                   "%s holds the segments of two logs, as many of each: %s of system %016" PRIX64
                   " and %s of system %016" PRIX64
                   "; the data directory's control file names its own (`hotset reset-log` prints "
                   "it for the directory): move the other log's segments out of %s",
                   dir, own, *id, path, ids[i], dir);
    else
      st = hs_fail(HS_ERR_CORRUPT, 0,
                   "%s: this log segment belongs to another log (system id %016" PRIX64
                   "; this log's, which %zu of its segments carry, is %016" PRIX64
                   "): move it out with `mv %s %s/foreign-%016" PRIX64
                   "` (kept, and never read as this log's), or put back the log it belongs to, "
                   "and open again",
                   path, ids[i], best_count, *id, path, dir, starts[i]);
  }
  free(ids);
  free(starts);
  return st;
}

/* Finds where the existing log ends, read from its oldest segment (every
 * segment's first record starts right after its header), and why. */
static hs_status find_end(const char *dir, uint64_t segment_bytes, uint64_t *end,
                          uint64_t *last_start, uint64_t *fail_at, hs_wal_end_kind *kind, char *why,
                          size_t why_len) {
  *end = *last_start = *fail_at = 0;
  hs_wal_reader *r;
  hs_status st = hs_wal_reader_open(dir, segment_bytes, 0, &r);
  if (st != HS_OK) return st;
  hs_wal_read_record rec;
  bool got;
  while ((st = hs_wal_reader_next(r, &rec, &got)) == HS_OK && got) {
  }
  if (st == HS_OK) {
    *end = hs_wal_reader_end(r);
    *last_start = wal_reader_prev(r);
    *fail_at = wal_reader_fail_at(r);
    *kind = hs_wal_reader_end_kind(r);
    snprintf(why, why_len, "%s", hs_wal_reader_why_end(r));
  }
  hs_wal_reader_close(r);
  return st;
}

hs_status hs_wal_find_end(const char *dir, uint64_t segment_bytes, hs_lsn *end) {
  if (!dir || !end) return hs_fail(HS_ERR_MISUSE, 0, "hs_wal_find_end: dir and end needed");
  *end = 0;
  uint64_t id, last, fail_at;
  hs_wal_end_kind kind;
  char why[400];
  hs_status st = check_identity(dir, segment_bytes, &id);
  if (st == HS_OK) st = find_end(dir, segment_bytes, end, &last, &fail_at, &kind, why, sizeof why);
  return st;
}

/* Copies [from, segment end) of the segment at `seg` to `to`, fsynced. */
static hs_status copy_tail(hs_wal *w, uint64_t seg, uint64_t from, const char *to) {
  char path[4200];
  wal_segment_path(w->dir, seg, path, sizeof path);
  int in = open(path, O_RDONLY | O_CLOEXEC);
  if (in < 0) return wal_sys_fail(HS_ERR_IO, errno, "%s: cannot open the log segment", path);
  int out = sys_open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (out < 0) {
    int err = errno;
    close(in);
    return wal_sys_fail(HS_ERR_IO, err, "%s: cannot create the copy of the log past its end", to);
  }
  hs_status st = HS_OK;
  size_t cap = 1u << 20;
  unsigned char *b = malloc(cap);
  if (!b) st = hs_fail(HS_ERR_NOMEM, ENOMEM, "no memory to copy the log past its end");
  for (uint64_t off = from - seg; st == HS_OK && off < w->segment_bytes;) {
    size_t want = w->segment_bytes - off < cap ? (size_t)(w->segment_bytes - off) : cap;
    ssize_t got = pread(in, b, want, (off_t)off);
    if (got <= 0) {
      st = got < 0 ? wal_sys_fail(HS_ERR_IO, errno, "%s: reading at %" PRIu64 " failed", path, off)
                   : HS_OK;
      break; /* a short segment: all of it is copied */
    }
    ssize_t put = sys_pwrite(out, b, (size_t)got, (off_t)(off - (from - seg)));
    if (put != got)
      st = wal_sys_fail(HS_ERR_IO, put < 0 ? errno : ENOSPC, "%s: writing the copy failed", to);
    off += (uint64_t)got;
  }
  free(b);
  if (st == HS_OK && sys_fsync(out) != 0)
    st = wal_sys_fail(HS_ERR_IO, errno, "%s: fsync of the copy failed", to);
  close(out);
  close(in);
  return st;
}

/* Nothing may follow the end of the log: a torn record's remains, or
 * records past a damaged one, could pass for a continuation once new
 * records of the same lengths fill the space before them (same places,
 * same chain). hs_wal_open notes what lies there; this clears it, just
 * before the log's first write (under write_lock), so opening a log — to
 * read it, or to look at why it ended — changes nothing. In order:
 *
 *  1. proven damage (HS_WAL_END_CORRUPT) stops here, unless accepted:
 *     writing on would give up every record after it — before anything
 *     changes, so the refusal changes nothing;
 *  2. second names of segment files are removed (wal_names.c), so nothing
 *     is ever written through a name that another segment's data hides
 *     behind;
 *  3. evidence is kept, never deleted: the rest of the end's segment is
 *     copied (and fsynced) into kept_dir when valid records follow in it,
 *     and the later segments that are this log's (or whose header is
 *     damaged) are moved there. Spares — recycled segments, segments made
 *     ahead — hold none of this log's records and stay where they are;
 *  4. the end's segment is zeroed from the end on. */
hs_status wal_clear_after_end(hs_wal *w) {
  if (!w->clear_pending) return HS_OK;
  if (w->damage_refused) return hs_fail(HS_ERR_CORRUPT, 0, "%s", w->damage_msg);
  hs_status st = wal_remove_extra_names(w);
  if (st != HS_OK) return st;
  const uint64_t S = w->segment_bytes;
  uint64_t seg = w->clear_at - w->clear_at % S;
  char path[4200];
  wal_segment_path(w->dir, seg, path, sizeof path);
  if (w->keep_evidence || w->keep_later) {
    if (sys_mkdir(w->kept_dir, 0700) != 0 && errno != EEXIST)
      return wal_sys_fail(HS_ERR_IO, errno,
                          "%s: cannot create the directory for the log past its end", w->kept_dir);
    char copy[4400];
    snprintf(copy, sizeof copy, "%s/%016" PRIX64 ".from-%016" PRIX64, w->kept_dir, seg,
             w->clear_at);
    if (w->keep_evidence && access(path, F_OK) == 0) st = copy_tail(w, seg, w->clear_at, copy);
    uint64_t *later = NULL;
    size_t n = 0;
    if (st == HS_OK && w->keep_later) st = wal_own_segments_after(w->dir, S, seg, &later, &n);
    for (size_t i = 0; i < n && st == HS_OK; i++) {
      char from[4200], to[4400];
      wal_segment_path(w->dir, later[i], from, sizeof from);
      snprintf(to, sizeof to, "%s/%016" PRIX64, w->kept_dir, later[i]);
      if (sys_rename_noreplace(from, to) != 0)
        st = wal_sys_fail(HS_ERR_IO, errno, "%s: cannot move the log segment to %s", from, to);
    }
    free(later);
    if (st == HS_OK) st = wal_sync_dir(w->kept_dir);
    if (st == HS_OK) st = wal_sync_dir(w->dir);
    if (st != HS_OK) return st;
  }
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0 && errno != ENOENT)
    return wal_sys_fail(HS_ERR_IO, errno, "%s: cannot open the log segment", path);
  if (fd >= 0) {
    char what[4400];
    snprintf(what, sizeof what, "the log's tail past its end %" PRIX64 " in %s", w->clear_at, path);
    st = wal_write_zeros(w, fd, w->clear_at - seg, S, what);
    close(fd);
  }
  if (st == HS_OK) {
    w->clear_pending = false;
    w->end_settled = true;
  }
  return st;
}

void wal_accept_damage(hs_wal *w) {
  w->damage_refused = false;
}

/* Where the log ends when read from `start` (0: its oldest segment), and
 * what must be done past that end before the first write: w's end,
 * positions and clearing plan, replaced. Nothing on disk changes. */
static hs_status set_end_from(hs_wal *w, hs_lsn start) {
  const uint64_t S = w->segment_bytes;
  hs_wal_reader *r;
  hs_status st = hs_wal_reader_open(w->dir, S, start, &r);
  if (st != HS_OK) return st;
  hs_wal_read_record rec;
  bool got;
  while ((st = hs_wal_reader_next(r, &rec, &got)) == HS_OK && got) {
  }
  if (st != HS_OK) {
    hs_wal_reader_close(r);
    return st;
  }
  uint64_t end = hs_wal_reader_end(r), last = wal_reader_prev(r);
  uint64_t fail_at = wal_reader_fail_at(r), valid_after = wal_reader_valid_after(r);
  hs_wal_end_kind kind = hs_wal_reader_end_kind(r);
  char why[640];
  snprintf(why, sizeof why, "%s", hs_wal_reader_why_end(r));
  hs_wal_reader_close(r);
  /* No record read from a later start (its segment missing): the chain's
   * last record is the one found from the oldest segment, if that ended at
   * the same place. */
  if (last == 0 && start != 0 && end == w->log_start) last = w->last_start;
  uint64_t *later = NULL;
  size_t n_later = 0;
  uint64_t seg = fail_at - fail_at % S;
  st = wal_own_segments_after(w->dir, S, seg, &later, &n_later);
  free(later);
  if (st != HS_OK) return st;
  w->log_start = end;
  w->end_kind = (int)kind;
  w->clear_pending = kind != HS_WAL_END_CLEAN || n_later > 0 || w->n_extra_names > 0;
  w->clear_at = fail_at;
  w->keep_evidence = valid_after != 0 || kind == HS_WAL_END_CORRUPT;
  w->keep_later = n_later > 0;
  w->damage_refused = kind == HS_WAL_END_CORRUPT;
  w->kept_dir[0] = 0;
  if (w->keep_evidence || w->keep_later) {
    /* A directory of its own: evidence kept by an earlier open (the same
     * damage met again, a move a crash interrupted) is never replaced. */
    snprintf(w->kept_dir, sizeof w->kept_dir, "%s/kept-%016" PRIX64, w->dir, fail_at);
    struct stat sb;
    for (unsigned k = 2; stat(w->kept_dir, &sb) == 0; k++)
      snprintf(w->kept_dir, sizeof w->kept_dir, "%s/kept-%016" PRIX64 ".%u", w->dir, fail_at, k);
    uint64_t kept = (w->keep_evidence ? seg + S - fail_at : 0) + (uint64_t)n_later * S;
    snprintf(w->why_end, sizeof w->why_end,
             "%s; %" PRIu64 " bytes from %" PRIX64 " on (%zu later segments of this log) to be "
             "kept in %s before the log is written again",
             why, kept, fail_at, n_later, w->kept_dir);
  } else {
    snprintf(w->why_end, sizeof w->why_end, "%s", why);
  }
  if (w->damage_refused) {
    char seg_path[4200];
    wal_segment_path(w->dir, seg, seg_path, sizeof seg_path);
    bool missing = access(seg_path, F_OK) != 0;
    snprintf(w->damage_msg, sizeof w->damage_msg,
             "the log in %s is damaged at %" PRIX64 " (%s%s): %s. Writing at %" PRIX64
             " would give up every record after it: restore %s from a backup and open again; or "
             "accept losing those records with hotset reset-log on the data directory the log "
             "belongs to (the bytes from %" PRIX64 " on then go to %s)",
             w->dir, fail_at, seg_path, missing ? " is missing" : "", why, fail_at, seg_path,
             fail_at, w->kept_dir);
  }
  w->reserved = end;
  w->last_start = last;
  /* The durable positions first: a flusher that sees the new insert
   * position then finds nothing below it to write. */
  atomic_store(&w->flushed, end);
  atomic_store(&w->written, end);
  atomic_store(&w->reserved_pub, end);
  return HS_OK;
}

hs_status wal_set_end_from(hs_wal *w, hs_lsn start, bool *settled) {
  pthread_mutex_lock(&w->write_lock);
  pthread_mutex_lock(&w->reserve_lock);
  hs_status st = HS_OK;
  *settled = atomic_load(&w->reserved_pub) != w->log_start || w->end_settled;
  if (!*settled) st = set_end_from(w, start);
  pthread_mutex_unlock(&w->reserve_lock);
  pthread_mutex_unlock(&w->write_lock);
  return st;
}

hs_status hs_wal_open(const hs_wal_options *opts, hs_wal **out) {
  if (!out) return hs_fail(HS_ERR_MISUSE, 0, "hs_wal_open: out is NULL");
  *out = NULL;
  if (!opts) return hs_fail(HS_ERR_MISUSE, 0, "hs_wal_open: the options are NULL");
  if (!opts->dir || !opts->dir[0])
    return hs_fail(HS_ERR_INVALID, 0, "hs_wal_open: option dir (the log's directory) is required");
  if (!power_of_two(opts->segment_bytes) || opts->segment_bytes < HS_WAL_MIN_SEGMENT ||
      opts->segment_bytes > HS_WAL_MAX_SEGMENT)
    return hs_fail(HS_ERR_INVALID, 0,
                   "hs_wal_open: option segment_bytes %" PRIu64
                   " must be a power of two from 64 KiB to 1 GiB",
                   opts->segment_bytes);
  uint64_t buffer = opts->buffer_bytes ? opts->buffer_bytes : 4 * MIB;
  if (buffer > opts->segment_bytes) buffer = opts->segment_bytes;
  if (!power_of_two(buffer) || buffer < HS_WAL_MIN_SEGMENT / 2)
    return hs_fail(HS_ERR_INVALID, 0,
                   "hs_wal_open: option buffer_bytes %" PRIu64
                   " must be a power of two of at least 32 KiB",
                   buffer);
  hs_status st = make_dir(opts->dir);
  if (st != HS_OK) return st;
  hs_wal *w = calloc(1, sizeof *w);
  if (!w) return hs_fail(HS_ERR_NOMEM, ENOMEM, "no memory for the log");
  pthread_mutex_init(&w->reserve_lock, NULL);
  pthread_mutex_init(&w->write_lock, NULL);
  pthread_mutex_init(&w->fail_lock, NULL);
  pthread_mutex_init(&w->writer_lock, NULL);
  pthread_cond_init(&w->writer_wake, NULL);
  pthread_mutex_init(&w->rmgr_lock, NULL);
  pthread_mutex_init(&w->fault_lock, NULL);
  pthread_mutex_init(&w->sync_lock, NULL);
  pthread_cond_init(&w->sync_done, NULL);
  pthread_mutex_init(&w->checkpoint_lock, NULL);
  w->rmgrs[HS_WAL_RMGR_GENERIC] = (wal_rmgr){.redo = hs_wal_generic_redo, .name = "generic"};
  w->rmgrs[HS_WAL_RMGR_LOG] = (wal_rmgr){.redo = NULL, .name = "log"};
  w->fd = -1;
  w->lock_fd = -1;
  w->segment_bytes = opts->segment_bytes;
  w->buffer_bytes = buffer;
  /* Half the ring, less a segment header: a reservation (the rest of a
   * segment, the next one's header, the record) then always fits in the
   * ring (wal_internal.h), and a record fits in a segment after its
   * header. At 64 KiB that is two 8 KiB page images and 8 KiB more. */
  uint64_t largest = ((buffer - WAL_SEG_HEADER) / 2) & ~(uint64_t)(WAL_ALIGN - 1);
  w->max_record = (uint32_t)(largest - WAL_HEADER - WAL_PAGE_REF * HS_WAL_MAX_PAGES_PER_RECORD);
  w->writer_delay_ms = opts->writer_delay_ms;
  w->writer_flush_after = opts->writer_flush_after;
  for (unsigned i = 0; i < WAL_SLOTS; i++) atomic_init(&w->slots[i], WAL_SLOT_IDLE);
  w->dir = strdup(opts->dir);
  w->buffer = malloc((size_t)buffer);
  if (!w->dir || !w->buffer) {
    wal_free(w);
    return hs_fail(HS_ERR_NOMEM, ENOMEM, "no memory for a log buffer of %" PRIu64 " bytes", buffer);
  }
  /* One log per directory at a time: opening changes the log (its tail is
   * cleared), so a second opener must not touch a log in use. */
  char lock_path[4200];
  snprintf(lock_path, sizeof lock_path, "%s/wal.lock", w->dir);
  st = dir_lock_take("log directory", w->dir, lock_path, &w->lock_fd);
  if (st == HS_ERR_IO) {
    /* dir_lock's message says what failed; the log's say why too. */
    char what[600];
    snprintf(what, sizeof what, "%s", hs_last_error());
    st = wal_sys_fail(HS_ERR_IO, hs_last_errno(), "%s", what);
  }
  if (st != HS_OK) {
    wal_free(w);
    return st;
  }
  st = check_identity(w->dir, w->segment_bytes, &w->system_id);
  if (st == HS_OK)
    st = wal_find_extra_names(w->dir, w->segment_bytes, &w->extra_names, &w->n_extra_names);
  atomic_init(&w->redo, 0); /* the pool sets it from its control file (wal_set_redo_point) */
  atomic_init(&w->reserved_pub, 0);
  atomic_init(&w->written, 0);
  atomic_init(&w->flushed, 0);
  /* From the oldest segment: a pool then reads it again from its last
   * checkpoint's redo point (wal_set_end_from), so damage before that
   * point, which replay never needs, blocks nothing. */
  if (st == HS_OK) st = set_end_from(w, 0);
  if (st == HS_OK && w->system_id == 0) {
    /* A log with no history: its first segment will carry a new id. */
    w->empty_at_open = true;
    while (w->system_id == 0)
      if (getrandom(&w->system_id, sizeof w->system_id, 0) != (ssize_t)sizeof w->system_id) {
        st = wal_sys_fail(HS_ERR_IO, errno, "%s: cannot choose the log's system id (getrandom)",
                          w->dir);
        break;
      }
  }
  if (st != HS_OK) {
    wal_free(w);
    return st;
  }
  if (w->writer_delay_ms > 0) {
    if (pthread_create(&w->writer, NULL, writer_main, w) != 0) {
      wal_free(w);
      return hs_fail(HS_ERR_NOMEM, EAGAIN, "could not start the WAL writer thread");
    }
    hs_name_thread(w->writer, "hs-walwriter");
    w->writer_running = true;
  }
  *out = w;
  return HS_OK;
}

hs_status hs_wal_close(hs_wal *w) {
  if (!w) return HS_OK;
  if (w->writer_running) {
    pthread_mutex_lock(&w->writer_lock);
    w->writer_stop = true;
    pthread_cond_signal(&w->writer_wake);
    pthread_mutex_unlock(&w->writer_lock);
    pthread_join(w->writer, NULL);
  }
  hs_status st = hs_wal_flush(w, hs_wal_insert_lsn(w), HS_WAL_CAUSE_CLOSE, NULL);
  char why[400] = "";
  if (st != HS_OK) snprintf(why, sizeof why, "%s", hs_last_error());
  int err = st != HS_OK ? hs_last_errno() : 0;
  wal_free(w);
  return st == HS_OK ? HS_OK : hs_fail(st, err, "%s", why);
}

hs_status hs_wal_stats_get(const hs_wal *wal, hs_wal_stats *out) {
  if (!wal || !out) return hs_fail(HS_ERR_MISUSE, 0, "hs_wal_stats_get: log and out are required");
  /* The counters are atomics the log's threads add to: read, not changed. */
  hs_wal *w = (hs_wal *)wal;
  memset(out, 0, sizeof *out);
  out->records = atomic_load(&w->st_records);
  out->bytes = atomic_load(&w->st_bytes);
  out->full_page_images = atomic_load(&w->st_fpi);
  out->writes = atomic_load(&w->st_writes);
  out->syncs = atomic_load(&w->st_syncs);
  out->sync_ns = atomic_load(&w->st_sync_ns);
  out->segments_created = atomic_load(&w->st_segments);
  out->segments_recycled = atomic_load(&w->st_recycled);
  out->segments_removed = atomic_load(&w->st_removed);
  out->flush_waits = atomic_load(&w->st_waits);
  for (unsigned c = 0; c < HS_WAL_CAUSE_COUNT; c++) {
    out->flush_calls[c] = atomic_load(&w->st_calls[c]);
    out->flush_syncs[c] = atomic_load(&w->st_own_syncs[c]);
  }
  return HS_OK;
}

bool wal_end_damaged(const hs_wal *w, const char **msg) {
  if (msg) *msg = w->damage_msg;
  return w->damage_refused;
}
