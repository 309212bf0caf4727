/*
 * pool/buf_io.c — I/O in progress: who reads or writes a buffer, and how the
 * others wait for it.
 *
 * A read or write of a page happens with no lock held, so something must
 * stop a second thread from starting the same I/O, or from trusting the page
 * while it is half read: the IO_IN_PROGRESS bit of the state word, as in
 * PostgreSQL's StartBufferIO / TerminateBufferIO / WaitIO. The rules:
 *
 *  - the bit is set under the header lock by the one thread that will do the
 *    I/O (pool_start_input_io for a read, pool_claim when it retags a victim,
 *    pool_write_buffer for a write), and cleared by that thread's
 *    pool_end_io, which sets VALID or IO_ERROR in the same store;
 *  - the buffer stays pinned while the bit is set (a debug build checks it
 *    in pool_end_io): an unpinned buffer with I/O in progress could be taken
 *    as a victim under the reader;
 *  - everyone else who wants the page pins the buffer, sees the bit, and
 *    sleeps until it clears — one read however many ask. A failed read
 *    leaves the buffer mapped but not VALID, with IO_ERROR set, and the next
 *    thread that wants it starts the read again; a failed write leaves the
 *    page DIRTY.
 *
 * Sleeping. Sleepers park on one of HS_WAIT_STRIPES mutex/condvar pairs
 * shared by all buffers (the content lock's scheme, content_lock.h). A
 * sleeper sets IO_WAITERS with a CAS while holding its stripe's mutex, and
 * only while IO_IN_PROGRESS is still set; pool_end_io clears both bits in one
 * store under the header lock and, if IO_WAITERS was set, takes the same
 * mutex to broadcast — which it can only get once the sleeper is inside
 * pthread_cond_wait. So no wake-up is lost. A read stream's combined read
 * takes microseconds, so pool_wait_read spins a little before it sleeps.
 */
#include "core/debug.h"
#include "core/error.h"
#include "hotset/page.h"
#include "pool/pins.h"
#include "storage/smgr_catalog.h"

#include <inttypes.h>

static inline hs_wait_stripe *io_stripe(hs_pool *pool, hs_buf b) {
  return &pool->io_waits[(uint32_t)b % HS_WAIT_STRIPES];
}

void pool_wait_io(hs_pool *pool, hs_buf b) {
  hs_bufstate *ds = pool_bstate(pool, b);
  hs_wait_stripe *w = io_stripe(pool, b);
  pthread_mutex_lock(&w->mu);
  for (;;) {
    uint32_t s = atomic_load_explicit(&ds->state, memory_order_acquire);
    if (!(s & BM_IO_IN_PROGRESS)) break;
    if (s & BM_LOCKED) {
      cpu_relax();
      continue;
    }
    /* Announce ourselves; the CAS fails if the word moved (e.g. the header
     * got locked), and then we look again. */
    if (!(s & BM_IO_WAITERS) &&
        !atomic_compare_exchange_weak_explicit(&ds->state, &s, s | BM_IO_WAITERS,
                                               memory_order_acq_rel, memory_order_relaxed))
      continue;
    atomic_fetch_add(&pool->io_waiters, 1);
    pthread_cond_wait(&w->cv, &w->mu);
    atomic_fetch_sub(&pool->io_waiters, 1);
  }
  pthread_mutex_unlock(&w->mu);
}

bool pool_start_input_io(hs_pool *pool, hs_buf b) {
  hs_bufstate *ds = pool_bstate(pool, b);
  uint32_t s = buf_hdr_lock(ds);
  if (s & (BM_VALID | BM_IO_IN_PROGRESS)) {
    buf_hdr_unlock(ds, s);
    return false;
  }
  buf_hdr_unlock(ds, (s | BM_IO_IN_PROGRESS) & ~BM_IO_ERROR);
  return true;
}

void pool_end_io(hs_pool *pool, hs_buf b, uint32_t set, uint32_t clear, bool written) {
  hs_bufstate *ds = pool_bstate(pool, b);
  uint32_t s = buf_hdr_lock(ds);
  HS_INVARIANT(s & BM_IO_IN_PROGRESS, "buffer %d: an I/O ended that was not in progress", b);
  HS_INVARIANT(pool_pin_count(pool, b, s) > 0, "buffer %d: I/O in progress on an unpinned buffer",
               b);
  bool waiters = s & BM_IO_WAITERS;
  if (written && !(s & BM_JUST_DIRTIED)) s &= ~BM_DIRTY;
  s = (s & ~(clear | BM_IO_IN_PROGRESS | BM_IO_WAITERS)) | set;
  buf_hdr_unlock(ds, s);
  if (waiters) {
    hs_wait_stripe *w = io_stripe(pool, b);
    pthread_mutex_lock(&w->mu);
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
  }
}

hs_status pool_check_read(hs_pool *pool, hs_relid rel, hs_fork fork, hs_blockno first,
                          const hs_buf *bufs, uint32_t n, hs_status st) {
  if (st != HS_OK || !pool->checksums) return st;
  hs_blockno mark_block;
  uint64_t mark_lsn;
  if (atomic_load_explicit(&pool->any_stale, memory_order_relaxed) &&
      smgr_catalog_stale(pool->smgr, rel, fork, &mark_block, &mark_lsn)) {
    char name[32];
    hs_smgr_fork_filename(rel, fork, name, sizeof name);
    const char *dir = hs_smgr_dir(pool->smgr);
    return hs_fail(HS_ERR_CORRUPT, 0,
                   "relation %u fork %d (%s/%s) is an older or zeroed copy of itself: its block "
                   "%u is older than the LSN %" PRIX64
                   " the last checkpoint wrote there, though the directory was shut down "
                   "cleanly; restore the file, or give up what it held since with `hotset "
                   "relations --dir %s --forget %s --force`",
                   rel, (int)fork, dir, name, mark_block, mark_lsn, dir, name);
  }
  for (uint32_t i = 0; i < n; i++) {
    const void *page = pool->pages + (size_t)bufs[i] * pool->page_size;
    uint32_t expected, found;
    if (!hs_page_verify(page, pool->page_size, first + i, &expected, &found)) {
      if (st == HS_OK) {
        char name[32];
        hs_smgr_fork_filename(rel, fork, name, sizeof name);
        const char *dir = hs_smgr_dir(pool->smgr);
        st = hs_fail(HS_ERR_CORRUPT, 0,
                     "page checksum failed: relation %u fork %d block %u (%s/%s): expected "
                     "%08X, found %08X; the log holds no image of it since the last checkpoint "
                     "(recovery would have restored it): restore the file from a backup, or "
                     "give up what its damaged pages held with `hotset relations --dir %s "
                     "--replace-damaged %s --force`",
                     rel, (int)fork, first + i, dir, name, expected, found, dir, name);
      }
      continue;
    }
    /* A page another directory wrote: its checksum holds, but it is not
     * this directory's (a file copied in from elsewhere). */
    uint16_t mark = hs_page_system(page);
    if (mark && mark != pool->system_tag) {
      if (st == HS_OK) {
        char name[32];
        hs_smgr_fork_filename(rel, fork, name, sizeof name);
        const char *dir = hs_smgr_dir(pool->smgr);
        st = hs_fail(HS_ERR_CORRUPT, 0,
                     "relation %u fork %d block %u (%s/%s) was written by another data directory "
                     "(its pages' mark is %04X, this directory's %04X): the file was copied in "
                     "from elsewhere; restore this directory's copy, or give up what its pages "
                     "held with `hotset relations --dir %s --replace-damaged %s --force`",
                     rel, (int)fork, first + i, dir, name, mark, pool->system_tag, dir, name);
      }
      continue;
    }
    /* A page is written only after the log is durable up to its LSN, so
     * a page past the end of the log proves the log lost records it had
     * (a stale control file, a log cut short or reset): refused, as
     * PostgreSQL's "xlog flush request is not satisfied". */
    hs_lsn lsn = hs_page_lsn(page);
    if (pool->wal && lsn > hs_wal_insert_lsn(pool->wal) && !pool->accept_pages_past_log) {
      char hint[8600];
      reset_log_hint(hs_smgr_dir(pool->smgr), hs_wal_dir(pool->wal), hint, sizeof hint);
      if (st == HS_OK)
        st = hs_fail(HS_ERR_CORRUPT, 0,
                     "relation %u fork %d block %u carries LSN %" PRIX64
                     ", past the end of the log in %s (%" PRIX64
                     "): the log has lost records this page has; restore the log that goes with "
                     "the data directory, or accept the loss with %s",
                     rel, (int)fork, first + i, lsn, hs_wal_dir(pool->wal),
                     hs_wal_insert_lsn(pool->wal), hint);
      continue;
    }
    atomic_store_explicit(&pool_desc(pool, bufs[i])->lsn, lsn, memory_order_relaxed);
  }
  return st;
}

void pool_end_reads(hs_pool *pool, const hs_buf *bufs, uint32_t n, bool ok, hs_io_context ctx,
                    bool unpin) {
  /* Counted first: whoever sees a page's read end (an I/O worker ends the
   * reads of another thread's stream) must find it in the statistics. */
  stat_add(&pool->stats, ctx, ok ? HS_STAT_READS : HS_STAT_READ_ERRORS, ok ? n : 1);
  for (uint32_t i = 0; i < n; i++) {
    if (ok) {
      pool_end_io(pool, bufs[i], BM_VALID, BM_IO_ERROR, false);
    } else {
      pool_end_io(pool, bufs[i], BM_IO_ERROR, 0, false);
      if (unpin) pool_unpin(pool, bufs[i]);
    }
  }
}

void pool_abandon_claim(hs_pool *pool, hs_buf b) {
  pool_end_io(pool, b, BM_IO_ERROR, 0, false);
  pool_unpin(pool, b);
}

bool pool_wait_read(hs_pool *pool, hs_buf b) {
  hs_bufstate *ds = pool_bstate(pool, b);
  uint32_t s;
  /* A combined read of a batch takes microseconds: worth a short spin
   * before a sleep on the wait stripe. */
  for (int i = 1; i <= 1024; i++) {
    s = atomic_load_explicit(&ds->state, memory_order_acquire);
    if (!(s & BM_IO_IN_PROGRESS)) return s & BM_VALID;
    /* Now and then let another thread of this core run: it may be the I/O
     * worker we are waiting for. */
    if (i % 64 == 0)
      sched_yield();
    else
      cpu_relax();
  }
  pool_wait_io(pool, b);
  s = atomic_load_explicit(&ds->state, memory_order_acquire);
  return s & BM_VALID;
}

uint32_t hs_pool_debug_io_waiters(hs_pool *pool) {
  return atomic_load(&pool->io_waiters);
}
