/*
 * pool/page_log.c — logging changes to buffers, with full-page writes
 * (hotset/durability.h).
 *
 * Why full pages. A page write is not atomic: a crash in the middle of one
 * can leave a page half old, half new on disk (a torn page). Records that
 * describe a change relative to the page cannot be applied to such a page.
 * So the first change to a page after a checkpoint's redo point logs the
 * whole page; recovery, which starts at that redo point, restores the image
 * before applying anything later, and whatever the torn write left is
 * overwritten. A page already changed since the redo point had its image
 * logged then, so its later changes are logged as they are.
 *
 * "Changed since the redo point" is read from the buffer's LSN: at or below
 * the redo point means no record since. The decision races with a
 * checkpoint that moves the redo point between the look and the insert; the
 * insert is therefore refused if the redo point moved before its space was
 * reserved (wal_insert_images), and the decision is made again — PostgreSQL's
 * XLogInsert loop over RedoRecPtr.
 *
 * The buffer is marked dirty before the record is inserted, its LSN raised
 * after (PostgreSQL's MarkBufferDirty, then XLogInsert, then PageSetLSN, in
 * one critical section). The other order loses a change: a checkpoint that
 * sets its redo point after the insert and collects dirty buffers before the
 * mark would skip the page, and replay, starting past the record, would
 * never see it. Marked first, the page is collected, and the checkpoint's
 * write waits for this thread's exclusive lock, so it writes the page with
 * the change and its LSN. Nothing writes the page between the mark and the
 * LSN: every writer needs at least a share lock on it.
 *
 * Whether the record fits the log is checked before anything is marked,
 * against the worst case (every page's image): whether images are needed
 * depends on when checkpoints run, and a record must not be refused
 * because one just did.
 */
#include "core/error.h"
#include "core/seams.h"
#include "hotset/durability.h"
#include "hotset/page.h"
#include "pool/pins.h"
#include "wal/wal_durable.h"

#include <inttypes.h>

/* The buffer is pinned and exclusively locked by this thread? */
static hs_status check_locked(hs_pool *pool, hs_buf buf, const char *call) {
  if (!buf_ok(pool, buf)) return hs_fail(HS_ERR_MISUSE, 0, "%s: bad buffer %d", call, buf);
  int i = held_find(pool, buf);
  if (i < 0 || held_locks[i].mode != HS_LOCK_EXCLUSIVE)
    return pool_misuse(pool, call, buf,
                       "this thread does not hold its content lock in exclusive mode");
  return HS_OK;
}

static hs_status need_log(hs_pool *pool, const char *call) {
  if (pool->wal) return HS_OK;
  return hs_fail(HS_ERR_INVALID, 0, "%s: the pool has no log (hs_pool_options.wal)", call);
}

hs_wal *hs_pool_wal(hs_pool *pool) {
  return pool ? pool->wal : NULL;
}

void hs_pool_raise_id_floor(hs_pool *pool, uint64_t floor) {
  uint64_t now = atomic_load(&pool->id_floor);
  while (now < floor && !atomic_compare_exchange_weak(&pool->id_floor, &now, floor)) {
  }
}

uint64_t hs_pool_id_floor(hs_pool *pool) {
  return atomic_load(&pool->id_floor);
}

static bool needs_image(hs_pool *pool, hs_buf buf, hs_lsn redo) {
  return atomic_load_explicit(&pool_desc(pool, buf)->lsn, memory_order_relaxed) <= redo;
}

/* Would a record of `bytes` (payload and images) fit the log? */
static hs_status fits_log(hs_pool *pool, const char *call, uint64_t bytes, uint32_t npages) {
  uint32_t max = hs_wal_max_record(pool->wal);
  if (bytes <= max) return HS_OK;
  return hs_fail(HS_ERR_INVALID, 0,
                 "%s: %" PRIu64 " bytes with the full images of its %u page(s) of %u bytes, more "
                 "than the log's largest record (%u bytes: about half of its buffer_bytes); "
                 "nothing was logged or marked",
                 call, bytes, npages, pool->page_size, max);
}

hs_status hs_buf_log_change(hs_pool *pool, hs_buf buf, const hs_wal_range *ranges, uint32_t n,
                            hs_lsn *end) {
  static const char call[] = "hs_buf_log_change";
  hs_status st = need_log(pool, call);
  if (st == HS_OK) st = check_locked(pool, buf, call);
  if (st != HS_OK) return st;
  if (n == 0 || !ranges) return hs_fail(HS_ERR_INVALID, 0, "%s: no ranges", call);
  if (pool->checksums)
    for (uint32_t i = 0; i < n; i++)
      if (ranges[i].offset < HS_PAGE_HEADER_SIZE)
        return hs_fail(HS_ERR_INVALID, 0,
                       "%s: range %u starts at %u, inside the page header (the first %u bytes "
                       "belong to hotset when checksums are on)",
                       call, i, ranges[i].offset, HS_PAGE_HEADER_SIZE);
  uint64_t change_bytes = 0;
  for (uint32_t i = 0; i < n; i++) change_bytes += 4u + ranges[i].len;
  if ((st = fits_log(pool, call, change_bytes > pool->page_size ? change_bytes : pool->page_size,
                     1)) != HS_OK)
    return st;
  hs_bufdesc *d = pool_desc(pool, buf);
  hs_buftag tag = buf_tag_get(d);
  hs_wal_page ref = {.rel = tag.rel, .fork = tag.fork, .block = tag.block};
  const void *page = hs_buf_page(pool, buf);
  hs_lsn lsn;
  if ((st = hs_buf_mark_dirty(pool, buf, 0, NULL)) != HS_OK) return st; /* before the insert */
  for (bool stale = true; stale;) {
    hs_lsn redo = wal_redo_point(pool->wal);
    if (needs_image(pool, buf, redo))
      st = wal_log_image_checked(pool->wal, &ref, page, pool->page_size, redo, &stale, &lsn);
    else
      st = wal_log_change_checked(pool->wal, &ref, page, pool->page_size, ranges, n, redo, &stale,
                                  &lsn);
    if (st != HS_OK) return st;
  }
  if (seams.pool_logged) seams.pool_logged(pool, seams.pool_durability_ctx);
  st = hs_buf_mark_dirty(pool, buf, lsn, NULL);
  if (st == HS_OK && end) *end = lsn;
  return st;
}

hs_status hs_buf_log_record(hs_pool *pool, const hs_wal_record *rec, const hs_buf *bufs,
                            hs_lsn *end) {
  static const char call[] = "hs_buf_log_record";
  hs_status st = need_log(pool, call);
  if (st != HS_OK) return st;
  if (!rec || (rec->npages && !bufs) || rec->npages > HS_WAL_MAX_PAGES_PER_RECORD)
    return hs_fail(HS_ERR_INVALID, 0, "%s: a record and one buffer per page (at most %u) needed",
                   call, HS_WAL_MAX_PAGES_PER_RECORD);
  if (rec->rmgr <= HS_WAL_RMGR_GENERIC)
    return hs_fail(HS_ERR_INVALID, 0,
                   "%s: resource manager %u is the log's or the generic one (use "
                   "hs_buf_log_change)",
                   call, rec->rmgr);
  hs_wal_page refs[HS_WAL_MAX_PAGES_PER_RECORD];
  const void *images[HS_WAL_MAX_PAGES_PER_RECORD];
  for (uint16_t i = 0; i < rec->npages; i++) {
    if ((st = check_locked(pool, bufs[i], call)) != HS_OK) return st;
    hs_buftag tag = buf_tag_get(pool_desc(pool, bufs[i]));
    refs[i] = (hs_wal_page){.rel = tag.rel, .fork = tag.fork, .block = tag.block};
    if (rec->pages && (rec->pages[i].rel != tag.rel || rec->pages[i].fork != tag.fork ||
                       rec->pages[i].block != tag.block))
      return hs_fail(HS_ERR_INVALID, 0,
                     "%s: page %u of the record names relation %u fork %d block %u, its buffer "
                     "holds relation %u fork %d block %u",
                     call, i, rec->pages[i].rel, (int)rec->pages[i].fork, rec->pages[i].block,
                     tag.rel, (int)tag.fork, tag.block);
  }
  if ((st = fits_log(pool, call, rec->len + (uint64_t)rec->npages * pool->page_size,
                     rec->npages)) != HS_OK)
    return st;
  hs_wal_record with_refs = *rec;
  with_refs.pages = refs;
  hs_lsn lsn;
  for (uint16_t i = 0; i < rec->npages; i++) /* before the insert */
    if ((st = hs_buf_mark_dirty(pool, bufs[i], 0, NULL)) != HS_OK) return st;
  for (bool stale = true; stale;) {
    hs_lsn redo = wal_redo_point(pool->wal);
    for (uint16_t i = 0; i < rec->npages; i++)
      images[i] = needs_image(pool, bufs[i], redo) ? hs_buf_page(pool, bufs[i]) : NULL;
    if (seams.pool_decided) seams.pool_decided(pool, seams.pool_durability_ctx);
    st = wal_insert_images(pool->wal, &with_refs, images, pool->page_size, redo, &stale, &lsn);
    if (st != HS_OK) return st;
  }
  if (seams.pool_logged) seams.pool_logged(pool, seams.pool_durability_ctx);
  for (uint16_t i = 0; i < rec->npages; i++)
    if ((st = hs_buf_mark_dirty(pool, bufs[i], lsn, NULL)) != HS_OK) return st;
  if (end) *end = lsn;
  return HS_OK;
}
