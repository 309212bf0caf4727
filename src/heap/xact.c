/*
 * heap/xact.c — transaction ids, the commit log in pool pages, snapshots
 * and the horizon (hotset/heap.h).
 *
 * Transaction ids are 64-bit and never wrap (PostgreSQL's 32-bit ids wrap,
 * which is what its freezing exists for; here freezing only spares the
 * commit-log lookups). 0 is "none", 1 is "frozen": committed before every
 * snapshot. Ids are given from 2 up.
 *
 * The commit log is two bits per id — in progress, committed, aborted — in
 * pages of a relation of its own (HS_XACT_CLOG_REL) read through the buffer
 * pool, so it is cached, written and checkpointed like any page, and a
 * commit is a one-byte change to a commit-log page logged with
 * hs_buf_log_change, then a flush of the log to that record: the commit
 * record and the commit-log update are the same record, and recovery
 * replays it with everything else. A transaction that was running when the
 * process died is left "in progress" in the log; the next start treats
 * every id below its first new one as finished, so such an id reads as
 * aborted (PostgreSQL's rule after a crash).
 *
 * Ids survive a crash by reservation: page 0 of the commit log keeps "ids
 * are given below R"; when the next id reaches R, R moves up by
 * ID_BATCH (a logged change, flushed) before the id is given. A restart
 * starts at R, skipping at most a batch of ids nobody used. Each R is also
 * raised into the pool's id floor (hs_pool_raise_id_floor), which every
 * checkpoint's control file carries: a commit log whose page 0 is lost or
 * that was given up still starts above every id given before.
 *
 * A snapshot is PostgreSQL's: the next id when it was taken (xmax), and the
 * ids running then; an id is "visible as committed" to it when it committed,
 * is below xmax, and was not running.
 *
 * Locking: `mu` guards the running set, the held snapshots' xmins, the next
 * id and its reservation; it is held only for those few words, never
 * across a page read or a log flush — except when a reservation moves,
 * once per ID_BATCH ids. Commit-log pages are changed under their
 * buffer's exclusive content lock, so two transactions whose bits share a
 * byte do not lose each other's update.
 */
#include "core/error.h"
#include "heap/fork_extend.h"
#include "hotset/durability.h"
#include "hotset/heap.h"
#include "hotset/page.h"
#include "hotset/wal.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define DATA_AT       HS_PAGE_HEADER_SIZE /* the first byte past the page header */
#define MAX_SNAPSHOTS 4096u               /* held at once (hotset/heap.h names the number) */
#define ID_BATCH      4096u               /* ids reserved at a time */

struct hs_xact_mgr {
  hs_pool *pool;
  uint32_t xids_per_page;
  pthread_mutex_t mu;
  fork_pages clog; /* the commit log's pages, added as ids reach them */
  hs_xid next, reserved, first_of_start;
  uint32_t nrunning;
  hs_xid running[HS_XACT_MAX_RUNNING];
  uint32_t nheld;
  hs_xid held[MAX_SNAPSHOTS]; /* xmins of snapshots not released */
};

/* Where xid's two bits are: block, byte, shift. */
static void clog_place(const hs_xact_mgr *m, hs_xid xid, hs_blockno *block, uint32_t *byte,
                       unsigned *shift) {
  *block = (hs_blockno)(1 + xid / m->xids_per_page);
  uint64_t in_page = xid % m->xids_per_page;
  *byte = DATA_AT + (uint32_t)(in_page / 4);
  *shift = (unsigned)(in_page % 4) * 2;
}

/* Pins and locks (in `mode`) the commit-log page holding xid's bits; says
 * which byte (an offset in the page) and shift. */
static hs_status clog_pin(hs_xact_mgr *m, hs_xid xid, hs_lock_mode mode, hs_buf *b, uint32_t *byte,
                          unsigned *shift) {
  hs_blockno block;
  clog_place(m, xid, &block, byte, shift);
  /* Pages are added as ids reach them: their zeros say "in progress",
   * which is right for ids not given yet. */
  hs_status st = fork_pages_pin(&m->clog, block, true, mode, b);
  return st;
}

static void clog_unpin(hs_xact_mgr *m, hs_buf b) {
  fork_pages_unpin(&m->clog, b);
}

static hs_status clog_set(hs_xact_mgr *m, hs_xid xid, hs_xact_status status, hs_lsn *lsn) {
  hs_buf b;
  uint32_t byte;
  unsigned shift;
  hs_status st = clog_pin(m, xid, HS_LOCK_EXCLUSIVE, &b, &byte, &shift);
  if (st != HS_OK) return st;
  unsigned char *p = (unsigned char *)hs_buf_page(m->pool, b) + byte, before = *p;
  *p = (unsigned char)((*p & ~(3u << shift)) | ((unsigned)status << shift));
  hs_wal_range r = {byte, 1};
  st = hs_buf_log_change(m->pool, b, &r, 1, lsn);
  /* Not logged: the status goes back, or readers would take a transaction
   * the caller is told still runs for committed (or aborted). */
  if (st != HS_OK) *p = before;
  clog_unpin(m, b);
  return st;
}

/* Page 0 of the commit log: "ids are given below R". */
static hs_status reservation_get(hs_xact_mgr *m, hs_xid *r) {
  hs_buf b;
  hs_status st = fork_pages_pin(&m->clog, 0, true, HS_LOCK_SHARE, &b);
  if (st != HS_OK) return st;
  memcpy(r, (unsigned char *)hs_buf_page(m->pool, b) + DATA_AT, sizeof *r);
  clog_unpin(m, b);
  return HS_OK;
}

static hs_status reservation_set(hs_xact_mgr *m, hs_xid r) {
  hs_buf b;
  hs_status st = fork_pages_pin(&m->clog, 0, true, HS_LOCK_EXCLUSIVE, &b);
  if (st != HS_OK) return st;
  unsigned char *at = (unsigned char *)hs_buf_page(m->pool, b) + DATA_AT, before[sizeof r];
  memcpy(before, at, sizeof r);
  memcpy(at, &r, sizeof r);
  hs_wal_range range = {DATA_AT, sizeof r};
  hs_lsn end = 0;
  st = hs_buf_log_change(m->pool, b, &range, 1, &end);
  if (st != HS_OK) memcpy(at, before, sizeof r); /* not logged: put back */
  clog_unpin(m, b);
  /* Durable, then the pool's floor: every control file from now on says
   * ids below r may have been given, so losing this page (or the whole
   * commit log) can never make an id be given twice. Once per batch. */
  if (st == HS_OK) st = hs_wal_flush(hs_pool_wal(m->pool), end, HS_WAL_CAUSE_COMMIT, NULL);
  if (st == HS_OK) hs_pool_raise_id_floor(m->pool, r);
  return st;
}

/* Page 0 lost (zeros where every start writes its reservation, beside
 * pages of ids): the ids given before cannot be read from it, and starting
 * below them would hand an id out twice — a new transaction's commit would
 * then make an old, never committed row visible, and every snapshot would
 * take the committed ones for the future. The floor is taken from what the
 * commit log still shows: past the highest id with a status, by two
 * batches (ids are given below the reservation, which runs at most a batch
 * ahead of the last id that moved it). */
static hs_status reservation_floor(hs_xact_mgr *m, hs_xid *floor) {
  *floor = 0;
  hs_blockno n;
  hs_status st = fork_pages_count(&m->clog, &n);
  for (hs_blockno block = n; st == HS_OK && block-- > 1 && !*floor;) {
    hs_buf b;
    st = fork_pages_pin(&m->clog, block, false, HS_LOCK_SHARE, &b);
    if (st != HS_OK) break;
    const unsigned char *p = (const unsigned char *)hs_buf_page(m->pool, b) + DATA_AT;
    for (uint32_t byte = m->xids_per_page / 4; byte-- > 0 && !*floor;)
      for (int slot = 3; slot >= 0 && !*floor; slot--)
        if ((p[byte] >> (slot * 2)) & 3u)
          *floor = (hs_xid)(block - 1) * m->xids_per_page + byte * 4u + (unsigned)slot;
    clog_unpin(m, b);
  }
  if (*floor) *floor += 2 * ID_BATCH;
  return st;
}

hs_status hs_xact_open(hs_pool *pool, hs_xact_mgr **out) {
  if (!out) return hs_fail(HS_ERR_MISUSE, 0, "hs_xact_open: out is NULL");
  *out = NULL;
  if (!pool) return hs_fail(HS_ERR_MISUSE, 0, "hs_xact_open: the pool is NULL");
  if (!hs_pool_wal(pool))
    return hs_fail(HS_ERR_INVALID, 0, "hs_xact_open: the pool needs a log (hs_pool_options.wal)");
  hs_xact_mgr *m = calloc(1, sizeof *m);
  if (!m) return hs_fail(HS_ERR_NOMEM, 0, "no memory for the transaction manager");
  m->pool = pool;
  m->xids_per_page = (hs_pool_page_size(pool) - DATA_AT) * 4;
  pthread_mutex_init(&m->mu, NULL);
  fork_pages_init(&m->clog, pool, HS_XACT_CLOG_REL, HS_FORK_MAIN);
  hs_status st =
      hs_smgr_create_if_missing(hs_pool_smgr(pool), HS_XACT_CLOG_REL, HS_FORK_MAIN, NULL);
  hs_xid r = 0;
  if (st == HS_OK) st = reservation_get(m, &r);
  if (st == HS_OK && r == 0) st = reservation_floor(m, &r);
  /* The control file's floor: above every id any earlier start could have
   * given, whatever the commit log's pages still say (a page lost, the file
   * given up with `hotset relations --forget`). */
  if (st == HS_OK && hs_pool_id_floor(pool) > r) r = hs_pool_id_floor(pool);
  if (st == HS_OK) {
    /* Everything below R may have been given before: start there. */
    m->next = m->first_of_start = r > HS_XACT_FIRST ? r : HS_XACT_FIRST;
    m->reserved = m->next + ID_BATCH;
    st = reservation_set(m, m->reserved);
  }
  if (st != HS_OK) {
    hs_xact_close(m);
    return st;
  }
  *out = m;
  return HS_OK;
}

void hs_xact_close(hs_xact_mgr *m) {
  if (!m) return;
  pthread_mutex_destroy(&m->mu);
  fork_pages_destroy(&m->clog);
  free(m);
}

hs_status hs_xact_begin(hs_xact_mgr *m, hs_xid *xid) {
  if (!m) return hs_fail(HS_ERR_MISUSE, 0, "hs_xact_begin: the manager is NULL");
  if (!xid) return hs_fail(HS_ERR_MISUSE, 0, "hs_xact_begin: xid is NULL");
  pthread_mutex_lock(&m->mu);
  hs_status st = HS_OK;
  if (m->nrunning == HS_XACT_MAX_RUNNING)
    st = hs_fail(HS_ERR_BUSY, 0, "hs_xact_begin: %u transactions are running (the most)",
                 HS_XACT_MAX_RUNNING);
  if (st == HS_OK && m->next == m->reserved) {
    /* Under mu: no id is given past the reservation before it moved. The
     * move is flushed (reservation_set: the pool's id floor may only carry
     * what the log holds), so once every ID_BATCH ids a begin waits for one
     * log sync, with mu held. */
    st = reservation_set(m, m->reserved + ID_BATCH);
    if (st == HS_OK) m->reserved += ID_BATCH;
  }
  if (st == HS_OK) {
    *xid = m->next++;
    m->running[m->nrunning++] = *xid;
  }
  pthread_mutex_unlock(&m->mu);
  return st;
}

/* Takes xid out of the running set; false if it was not there. */
static bool stop_running(hs_xact_mgr *m, hs_xid xid) {
  pthread_mutex_lock(&m->mu);
  bool found = false;
  for (uint32_t i = 0; i < m->nrunning && !found; i++)
    if (m->running[i] == xid) {
      m->running[i] = m->running[--m->nrunning];
      found = true;
    }
  pthread_mutex_unlock(&m->mu);
  return found;
}

static bool is_running(hs_xact_mgr *m, hs_xid xid) {
  pthread_mutex_lock(&m->mu);
  bool found = false;
  for (uint32_t i = 0; i < m->nrunning && !found; i++) found = m->running[i] == xid;
  pthread_mutex_unlock(&m->mu);
  return found;
}

static hs_status finish(hs_xact_mgr *m, hs_xid xid, hs_xact_status status, const char *call) {
  if (!m) return hs_fail(HS_ERR_MISUSE, 0, "%s: the manager is NULL", call);
  if (!is_running(m, xid))
    return hs_fail(HS_ERR_INVALID, 0, "%s: transaction %" PRIu64 " is not running", call, xid);
  hs_lsn lsn = 0;
  hs_status st = clog_set(m, xid, status, &lsn);
  /* A commit is durable once the log is flushed to its commit-log change:
   * only then may the caller be told it committed. */
  if (st == HS_OK && status == HS_XACT_COMMITTED)
    st = hs_wal_flush(hs_pool_wal(m->pool), lsn, HS_WAL_CAUSE_COMMIT, NULL);
  if (st == HS_OK) stop_running(m, xid);
  return st;
}

hs_status hs_xact_commit(hs_xact_mgr *m, hs_xid xid) {
  return finish(m, xid, HS_XACT_COMMITTED, "hs_xact_commit");
}

hs_status hs_xact_abort(hs_xact_mgr *m, hs_xid xid) {
  return finish(m, xid, HS_XACT_ABORTED, "hs_xact_abort");
}

hs_status hs_xact_status_of(hs_xact_mgr *m, hs_xid xid, hs_xact_status *out) {
  if (!m) return hs_fail(HS_ERR_MISUSE, 0, "hs_xact_status_of: the manager is NULL");
  if (!out) return hs_fail(HS_ERR_MISUSE, 0, "hs_xact_status_of: out is NULL");
  if (xid == HS_XACT_FROZEN) {
    *out = HS_XACT_COMMITTED;
    return HS_OK;
  }
  if (xid < HS_XACT_FIRST || xid >= hs_xact_next(m))
    return hs_fail(HS_ERR_INVALID, 0, "hs_xact_status_of: %" PRIu64 " was never given", xid);
  hs_buf b;
  uint32_t byte;
  unsigned shift;
  hs_status st = clog_pin(m, xid, HS_LOCK_SHARE, &b, &byte, &shift);
  if (st != HS_OK) return st;
  unsigned bits = (*((unsigned char *)hs_buf_page(m->pool, b) + byte) >> shift) & 3u;
  clog_unpin(m, b);
  if (bits > HS_XACT_ABORTED)
    return hs_fail(HS_ERR_CORRUPT, 0, "commit log: transaction %" PRIu64 " has status %u", xid,
                   bits);
  *out = (hs_xact_status)bits;
  /* Still "in progress" from before this start: it died with the process. */
  if (*out == HS_XACT_IN_PROGRESS && xid < m->first_of_start) *out = HS_XACT_ABORTED;
  return HS_OK;
}

hs_status hs_xact_take_snapshot(hs_xact_mgr *m, hs_snapshot *s) {
  if (!m) return hs_fail(HS_ERR_MISUSE, 0, "hs_xact_take_snapshot: the manager is NULL");
  if (!s) return hs_fail(HS_ERR_MISUSE, 0, "hs_xact_take_snapshot: the snapshot is NULL");
  pthread_mutex_lock(&m->mu);
  if (m->nheld == MAX_SNAPSHOTS) {
    pthread_mutex_unlock(&m->mu);
    return hs_fail(HS_ERR_BUSY, 0, "hs_xact_take_snapshot: %u snapshots are held (the most)",
                   MAX_SNAPSHOTS);
  }
  s->xmax = m->next;
  s->xmin = m->next;
  s->nrunning = m->nrunning;
  for (uint32_t i = 0; i < m->nrunning; i++) {
    s->running[i] = m->running[i];
    if (m->running[i] < s->xmin) s->xmin = m->running[i];
  }
  m->held[m->nheld++] = s->xmin;
  pthread_mutex_unlock(&m->mu);
  return HS_OK;
}

hs_status hs_xact_release_snapshot(hs_xact_mgr *m, const hs_snapshot *s) {
  if (!m) return hs_fail(HS_ERR_MISUSE, 0, "hs_xact_release_snapshot: the manager is NULL");
  if (!s) return hs_fail(HS_ERR_MISUSE, 0, "hs_xact_release_snapshot: the snapshot is NULL");
  bool found = false;
  pthread_mutex_lock(&m->mu);
  for (uint32_t i = 0; i < m->nheld; i++)
    if (m->held[i] == s->xmin) {
      m->held[i] = m->held[--m->nheld];
      found = true;
      break;
    }
  pthread_mutex_unlock(&m->mu);
  if (!found)
    return hs_fail(HS_ERR_MISUSE, 0,
                   "hs_xact_release_snapshot: no snapshot with xmin %llu is held (released "
                   "twice, or never taken)",
                   (unsigned long long)s->xmin);
  return HS_OK;
}

hs_status hs_xact_visible(hs_xact_mgr *m, const hs_snapshot *s, hs_xid xid, bool *visible) {
  if (!visible) return hs_fail(HS_ERR_MISUSE, 0, "hs_xact_visible: visible is NULL");
  *visible = false;
  if (!m) return hs_fail(HS_ERR_MISUSE, 0, "hs_xact_visible: the manager is NULL");
  if (!s) return hs_fail(HS_ERR_MISUSE, 0, "hs_xact_visible: the snapshot is NULL");
  if (xid == HS_XACT_FROZEN) {
    *visible = true;
    return HS_OK;
  }
  if (xid >= s->xmax) return HS_OK; /* began after the snapshot */
  for (uint32_t i = 0; i < s->nrunning; i++)
    if (s->running[i] == xid) return HS_OK; /* running when it was taken */
  hs_xact_status st;
  hs_status rc = hs_xact_status_of(m, xid, &st);
  if (rc == HS_OK) *visible = st == HS_XACT_COMMITTED;
  return rc;
}

hs_xid hs_xact_horizon(hs_xact_mgr *m) {
  if (!m) return HS_XACT_INVALID;
  pthread_mutex_lock(&m->mu);
  hs_xid h = m->next;
  for (uint32_t i = 0; i < m->nrunning; i++)
    if (m->running[i] < h) h = m->running[i];
  for (uint32_t i = 0; i < m->nheld; i++)
    if (m->held[i] < h) h = m->held[i];
  pthread_mutex_unlock(&m->mu);
  return h;
}

hs_xid hs_xact_next(hs_xact_mgr *m) {
  if (!m) return HS_XACT_INVALID;
  pthread_mutex_lock(&m->mu);
  hs_xid n = m->next;
  pthread_mutex_unlock(&m->mu);
  return n;
}
