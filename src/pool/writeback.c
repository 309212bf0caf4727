/*
 * pool/writeback.c — writing a dirty page back to its file, WAL first.
 *
 * pool_write_buffer is the only place that writes a page. Its rules:
 *
 *  - the caller holds a pin and the buffer's content lock (share is enough:
 *    nobody may change the page under a share lock, so the bytes written are
 *    the bytes the LSN describes). A victim's lock is only tried
 *    (freelist.c); a flush takes it or uses the caller's (flush_drop.c);
 *  - the write claims IO_IN_PROGRESS under the header lock and clears
 *    JUST_DIRTIED in the same store; a second writer of the same buffer
 *    waits for the first and then finds the page clean. The page is clean
 *    afterwards only if nobody dirtied it again while it was being written
 *    (JUST_DIRTIED still clear when the write ends, buf_io.c);
 *  - WAL before data: a page whose LSN is L > 0 is written only after the
 *    owner's flush_wal_up_to(L) returned HS_OK. The callback says whether it
 *    really had to flush; those calls are the wal_flushes statistic, the
 *    figure the vacuum ring-size debate turned on;
 *  - a failure — the callback's or the write's — ends the I/O with IO_ERROR
 *    and leaves DIRTY set: the page exists only here, so its frame is not
 *    reused and the next flush tries again. The error names the callback,
 *    its status, the page and its LSN, and quotes only what the callback
 *    itself left in hs_last_error (the thread's earlier message is cleared
 *    before the call, so an unrelated older failure is never quoted and a
 *    retry never nests the previous message).
 *
 * pool_needs_wal_flush asks the owner's wal_needs_flush (PostgreSQL's
 * XLogNeedsFlush) so that a bulkread ring can refuse to recycle a dirty page
 * whose write would force a WAL flush (strategy.c).
 */
#include "core/error.h"
#include "hotset/page.h"
#include "hotset/wal.h"
#include "pool/pins.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The copy a page is stamped on before it is written (checksums on): one
 * per thread, the largest page size, freed when the thread exits. Aligned
 * to the largest page size too: direct I/O may ask for up to a page's
 * alignment (the storage manager's probe refuses more), and the copy serves
 * every pool this thread writes for. */
static pthread_key_t copy_key;
static pthread_once_t copy_key_once = PTHREAD_ONCE_INIT;
static void make_copy_key(void) {
  (void)pthread_key_create(&copy_key, free);
}
static unsigned char *write_copy_buffer(void) {
  pthread_once(&copy_key_once, make_copy_key);
  unsigned char *copy = pthread_getspecific(copy_key);
  if (copy) return copy;
  void *mem;
  if (posix_memalign(&mem, HS_PAGE_SIZE_MAX, HS_PAGE_SIZE_MAX) != 0) return NULL;
  if (pthread_setspecific(copy_key, mem) != 0) {
    free(mem);
    return NULL;
  }
  return mem;
}

/* Why a write-back flushes the log: an eviction in its context. */
static hs_wal_cause wal_cause_of(hs_io_context ctx) {
  switch (ctx) {
  case HS_IOCTX_BULKREAD:
    return HS_WAL_CAUSE_EVICT_BULKREAD;
  case HS_IOCTX_BULKWRITE:
    return HS_WAL_CAUSE_EVICT_BULKWRITE;
  case HS_IOCTX_VACUUM:
    return HS_WAL_CAUSE_EVICT_VACUUM;
  default:
    return HS_WAL_CAUSE_EVICT_NORMAL;
  }
}

hs_status pool_write_buffer(hs_pool *pool, hs_buf b, hs_io_context ctx, bool *wrote,
                            bool *wal_flushed) {
  hs_bufdesc *d = pool_desc(pool, b);
  hs_bufstate *ds = pool_bstate(pool, b);
  *wrote = false;
  if (wal_flushed) *wal_flushed = false;
  for (;;) {
    uint32_t s = buf_hdr_lock(ds);
    if ((s & (BM_VALID | BM_DIRTY)) != (BM_VALID | BM_DIRTY)) {
      buf_hdr_unlock(ds, s);
      return HS_OK;
    }
    if (s & BM_IO_IN_PROGRESS) { /* another thread is writing it */
      buf_hdr_unlock(ds, s);
      pool_wait_io(pool, b);
      continue;
    }
    buf_hdr_unlock(ds, (s | BM_IO_IN_PROGRESS) & ~BM_JUST_DIRTIED);
    break;
  }
  hs_buftag tag = buf_tag_get(d);
  hs_lsn lsn = atomic_load_explicit(&d->lsn, memory_order_relaxed);
  if ((pool->flush_wal_up_to || pool->wal) && lsn != 0) {
    bool flushed = false;
    /* Whatever message the thread had is not the callback's: clear it, so
     * that only what the callback itself left (a failed hotset call inside
     * it) is quoted, and a retry never nests the previous failure. */
    hs_clear_error();
    hs_status st = pool->wal ? hs_wal_flush(pool->wal, lsn, wal_cause_of(ctx), &flushed)
                             : pool->flush_wal_up_to(pool->wal_ctx, lsn, &flushed);
    if (st != HS_OK) {
      char why[256];
      snprintf(why, sizeof why, "%s", hs_last_error());
      int why_errno = hs_last_errno();
      pool_end_io(pool, b, BM_IO_ERROR, 0, false);
      stat_add(&pool->stats, ctx, HS_STAT_WRITE_ERRORS, 1);
      return hs_fail(HS_ERR_WAL, why_errno,
                     "%s failed with %s for block %u of "
                     "relation %u (fork %d), page LSN %" PRIu64 "%s%s; the page stays dirty",
                     pool->wal ? "the WAL flush" : "the WAL flush callback (flush_wal_up_to)",
                     hs_status_name(st), tag.block, tag.rel, (int)tag.fork, lsn, why[0] ? ": " : "",
                     why);
    }
    if (flushed) stat_add(&pool->stats, ctx, HS_STAT_WAL_FLUSHES, 1);
    if (wal_flushed) *wal_flushed = flushed;
  }
  const void *page = pool->pages + (size_t)b * pool->page_size;
  if (pool->checksums) {
    /* Stamped on a copy, as PostgreSQL does: other threads read the page
     * under their share locks while it is written and must not see its
     * header change, and the checksum covers exactly the bytes written. */
    unsigned char *copy = write_copy_buffer();
    if (!copy) {
      pool_end_io(pool, b, BM_IO_ERROR, 0, false);
      stat_add(&pool->stats, ctx, HS_STAT_WRITE_ERRORS, 1);
      return hs_fail(HS_ERR_NOMEM, ENOMEM,
                     "no memory for the checksum copy of block %u of relation %u; the page "
                     "stays dirty",
                     tag.block, tag.rel);
    }
    memcpy(copy, page, pool->page_size);
    hs_page_stamp_system(copy, pool->page_size, tag.block, lsn, pool->system_tag);
    page = copy;
  }
  hs_status st = hs_smgr_write(pool->smgr, tag.rel, tag.fork, tag.block, page);
  if (st != HS_OK) {
    pool_end_io(pool, b, BM_IO_ERROR, 0, false); /* DIRTY stays: nothing is lost */
    stat_add(&pool->stats, ctx, HS_STAT_WRITE_ERRORS, 1);
    return st;
  }
  pool_end_io(pool, b, 0, BM_IO_ERROR, true);
  stat_add(&pool->stats, ctx, HS_STAT_WRITES, 1);
  *wrote = true;
  return HS_OK;
}

bool pool_needs_wal_flush(hs_pool *pool, hs_bufdesc *d) {
  hs_lsn lsn = atomic_load_explicit(&d->lsn, memory_order_relaxed);
  if (pool->wal) return lsn > hs_wal_flushed_lsn(pool->wal);
  if (lsn == 0 || !pool->flush_wal_up_to) return false;
  return pool->wal_needs_flush ? pool->wal_needs_flush(pool->wal_ctx, lsn) : true;
}
