/*
 * pool/recovery.c — crash recovery: replaying the log into the pool when it
 * opens (hotset/durability.h).
 *
 * Replay starts at the redo point the control file names (the last
 * completed checkpoint's) and reads records until the end of the log — the
 * first one incomplete, out of place or failing its CRC, which is where a
 * crash stopped the writer. For each page a record names:
 *
 *  - with a full image in the record (or a generic IMAGE record), the block
 *    is taken without reading it (HS_READ_ZERO_LOCKED): what is on disk may
 *    be torn and fail its checksum, and the image replaces it whole — its
 *    LSN too, which becomes the record's end even if the buffer had a
 *    newer one (see replay_one);
 *  - otherwise the page is read (it must pass its checksum: every page
 *    changed since the redo point had its image logged first, so a torn one
 *    was restored before any record that needs its old bytes), and the
 *    record is applied only if the page's LSN is older than the record's
 *    end — a page written after the record was logged has it already. With
 *    checksums off a page read from disk has no LSN: every record is
 *    applied;
 *  - a block past the end of its file is added first (zeros, then the
 *    record fills it): an operating-system crash can lose a file's growth
 *    that the log, fsynced, still describes.
 *
 * Each page changed is marked dirty with the record's end LSN, so the
 * pool writes it like any other, and the end-of-recovery checkpoint puts
 * everything on disk before the pool is handed to the engine. The log's
 * own records (checkpoints, commit markers) change no page.
 */
#include "core/error.h"
#include "hotset/durability.h"
#include "pool/pins.h"
#include "storage/control_file.h"
#include "wal/wal_durable.h"
#include "wal/wal_format.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The sizes of the files recovery has touched, so that a record costs no
 * system call to learn its block exists (the storage manager asks the file
 * system each time). A small table searched in order: replay touches a
 * handful of relations at a time; the oldest entry makes room. */
#define KNOWN_FILES 32
typedef struct known_file {
  hs_relid rel;
  hs_fork fork;
  hs_blockno nblocks;
  bool used;
} known_file;
typedef struct replay_state {
  known_file files[KNOWN_FILES];
  uint32_t next_slot;
  hs_wal_redo_fn redo[HS_WAL_RMGR_COUNT];
  void *redo_ctx[HS_WAL_RMGR_COUNT];
} replay_state;

/* Makes sure block `block` exists in its file: zeros added up to it. */
static hs_status ensure_block(hs_pool *pool, replay_state *rs, const hs_wal_page *p) {
  known_file *f = NULL;
  for (uint32_t i = 0; i < KNOWN_FILES && !f; i++)
    if (rs->files[i].used && rs->files[i].rel == p->rel && rs->files[i].fork == p->fork)
      f = &rs->files[i];
  if (f && p->block < f->nblocks) return HS_OK;
  if (!f) {
    f = &rs->files[rs->next_slot++ % KNOWN_FILES];
    *f = (known_file){.rel = p->rel, .fork = p->fork, .used = true};
    hs_status st = hs_smgr_create_if_missing(pool->smgr, p->rel, p->fork, NULL);
    if (st == HS_OK) st = hs_smgr_nblocks(pool->smgr, p->rel, p->fork, &f->nblocks);
    if (st != HS_OK) {
      f->used = false;
      return st;
    }
  }
  while (f->nblocks <= p->block) {
    hs_blockno got;
    hs_status st = hs_smgr_extend(pool->smgr, p->rel, p->fork, NULL, &got);
    if (st != HS_OK) return st;
    f->nblocks = got + 1;
  }
  return HS_OK;
}

static hs_status replay_one(hs_pool *pool, replay_state *rs, const hs_wal_read_record *rec,
                            hs_pool_recovery_stats *rep) {
  hs_wal_redo_fn redo = rs->redo[rec->rmgr];
  void *redo_ctx = rs->redo_ctx[rec->rmgr];
  hs_buf bufs[HS_WAL_MAX_PAGES_PER_RECORD];
  void *pages[HS_WAL_MAX_PAGES_PER_RECORD];
  bool changed[HS_WAL_MAX_PAGES_PER_RECORD];
  bool replaced[HS_WAL_MAX_PAGES_PER_RECORD]; /* the page is the record's image */
  bool generic_image = rec->rmgr == HS_WAL_RMGR_GENERIC && rec->type == HS_WAL_GENERIC_IMAGE;
  uint16_t got = 0;
  bool any_redo = false;
  hs_status st = HS_OK;
  for (; got < rec->npages && st == HS_OK; got++) {
    const hs_wal_page *p = &rec->pages[got];
    const void *image = rec->images[got];
    if (image && rec->image_len[got] != pool->page_size)
      return hs_fail(HS_ERR_CORRUPT, 0,
                     "recovery: the record at %" PRIX64 " carries a %u-byte image of relation %u "
                     "block %u; the pool's pages are %u bytes",
                     rec->lsn, rec->image_len[got], p->rel, p->block, pool->page_size);
    bool whole = image || generic_image;
    st = ensure_block(pool, rs, p);
    if (st == HS_OK)
      st = hs_pool_read(pool, p->rel, p->fork, p->block,
                        whole ? HS_READ_ZERO_LOCKED : HS_READ_NORMAL, NULL, &bufs[got], NULL);
    if (st != HS_OK) break;
    if (!whole) st = hs_buf_lock(pool, bufs[got], HS_LOCK_EXCLUSIVE);
    if (st != HS_OK) {
      hs_buf_release(pool, bufs[got]);
      break;
    }
    pages[got] = NULL;
    changed[got] = false;
    replaced[got] = whole;
    if (pool->checksums && hs_buf_lsn(pool, bufs[got]) >= rec->end && !generic_image && !image) {
      rep->skipped++;
      continue; /* the page has this change already */
    }
    if (image) {
      memcpy(hs_buf_page(pool, bufs[got]), image, pool->page_size);
      rep->images++;
      changed[got] = true;
    } else {
      pages[got] = hs_buf_page(pool, bufs[got]);
      any_redo = true;
    }
  }
  if (st == HS_OK && any_redo) {
    if (!redo)
      st = hs_fail(HS_ERR_INVALID, 0,
                   "recovery: the record at %" PRIX64
                   " belongs to resource manager %u, which is not registered on the log",
                   rec->lsn, rec->rmgr);
    else
      st = redo(redo_ctx, rec, pages, pool->page_size);
    if (st == HS_OK)
      for (uint16_t i = 0; i < got; i++)
        if (pages[i]) {
          changed[i] = true;
          if (generic_image)
            rep->images++;
          else
            rep->applied++;
        }
  }
  for (uint16_t i = 0; i < got; i++) {
    /* A page replaced by an image is as of this record: its LSN is set to
     * the record's end, lowered if need be (hs_buf_mark_dirty only raises
     * it; PostgreSQL likewise sets a restored image's LSN). The buffer can
     * hold a newer LSN when replay started before the last checkpoint at a
     * point that is not this page's redo point — a control file naming no
     * checkpoint, or none, replays from the oldest segment left — so that
     * an earlier record read the page from disk, as last written, past this
     * image. Kept, that LSN would make every record between the image and
     * it look applied to a page that lacks them: acknowledged changes lost
     * with the open returning HS_OK. */
    if (st == HS_OK && changed[i] && replaced[i])
      atomic_store_explicit(&pool_desc(pool, bufs[i])->lsn, rec->end, memory_order_relaxed);
    if (st == HS_OK && changed[i]) st = hs_buf_mark_dirty(pool, bufs[i], rec->end, NULL);
    hs_buf_unlock(pool, bufs[i]);
    hs_buf_release(pool, bufs[i]);
  }
  return st;
}

hs_status pool_recover(hs_pool *pool) {
  hs_pool_recovery_stats *rep = &pool->recovery;
  memset(rep, 0, sizeof *rep);
  uint64_t t0 = pool_now_ns();
  hs_wal *wal = pool->wal;
  rep->start = pool->recovery_start;
  hs_wal_reader *r;
  hs_status st = hs_wal_reader_open(hs_wal_dir(wal), wal_segment_bytes(wal), rep->start, &r);
  if (st != HS_OK) return st;
  replay_state *rs = calloc(1, sizeof *rs);
  if (!rs) {
    hs_wal_reader_close(r);
    return hs_fail(HS_ERR_NOMEM, ENOMEM, "no memory for recovery");
  }
  for (unsigned id = 0; id < HS_WAL_RMGR_COUNT; id++)
    (void)wal_rmgr_get(wal, (uint8_t)id, &rs->redo[id], &rs->redo_ctx[id]);
  hs_wal_read_record rec;
  bool got, first = true;
  while ((st = hs_wal_reader_next(r, &rec, &got)) == HS_OK && got) {
    /* The checkpoint record a clean close leaves at the redo point (the
     * control file's checkpoint, there and nowhere else) is where replay
     * starts, not something to replay: a clean close followed by an open
     * reports nothing ran. Any other record there, an engine's own log
     * record included, counts. There, or right behind the sync point that
     * the checkpoint's flush to its redo point left there (the log's own
     * record, which the reader follows and never hands out: the first
     * record read names it as its prev). */
    bool at_redo = rec.lsn == rep->start || (first && rec.prev == rep->start &&
                                             rec.lsn == rep->start + WAL_SYNC_POINT_BYTES);
    first = false;
    if (rec.rmgr == HS_WAL_RMGR_LOG && pool->control.has_checkpoint &&
        rec.lsn == pool->control.checkpoint && at_redo)
      continue;
    rep->records++;
    rep->bytes += rec.end - rec.lsn;
    if (rec.rmgr == HS_WAL_RMGR_LOG || rec.npages == 0) continue;
    st = replay_one(pool, rs, &rec, rep);
    if (st != HS_OK) {
      char why[400];
      snprintf(why, sizeof why, "%s", hs_last_error());
      hs_wal_reader_close(r);
      free(rs);
      return hs_fail(st, 0, "recovery stopped at the record at %" PRIX64 ": %s", rec.lsn, why);
    }
  }
  free(rs);
  rep->end = hs_wal_reader_end(r);
  /* Why the log ends is what opening the log found (a clean end, a torn
   * last record, or corruption with the bytes after it kept aside). */
  const char *why = wal_open_why_end(wal);
  _Static_assert(sizeof rep->why_end >= WAL_WHY_END_MAX, "why_end must never be cut short");
  snprintf(rep->why_end, sizeof rep->why_end, "%s", *why ? why : hs_wal_reader_why_end(r));
  char reader_why[256];
  snprintf(reader_why, sizeof reader_why, "%s", hs_wal_reader_why_end(r));
  hs_wal_reader_close(r);
  if (st != HS_OK) return st;
  /* Replay must reach the end the log was opened at, and get past the
   * checkpoint the control file names: stopping earlier (a segment missing
   * between the redo point and the end) would drop what follows. */
  hs_lsn log_end = hs_wal_insert_lsn(wal);
  char hint[8600];
  reset_log_hint(hs_smgr_dir(pool->smgr), hs_wal_dir(wal), hint, sizeof hint);
  if (rep->end != log_end || (pool->control.has_checkpoint && rep->end <= pool->control.checkpoint))
    return hs_fail(HS_ERR_CORRUPT, 0,
                   "recovery: replay from %" PRIX64 " stopped at %" PRIX64 " (%s), but the log in "
                   "%s ends at %" PRIX64 " and the last checkpoint is at %" PRIX64
                   ": records in between cannot be read; restore the missing log, or accept the "
                   "loss with %s",
                   rep->start, rep->end, reader_why, hs_wal_dir(wal), log_end,
                   pool->control.checkpoint, hint);
  rep->ran = rep->records > 0;
  uint64_t t1 = pool_now_ns();
  rep->seconds = (double)(t1 - t0) / 1e9;
  /* The end-of-recovery checkpoint: the replayed pages on disk, and a
   * redo point at the end, so the next crash does not replay this again.
   * Not after a clean shutdown, whose checkpoint record is all there is
   * past the redo point: nothing changed. */
  if (rep->images + rep->applied > 0) st = hs_pool_checkpoint(pool);
  rep->checkpoint_seconds = (double)(pool_now_ns() - t1) / 1e9;
  /* Out of recovery: the control file says so (the checkpoint above, if
   * one ran, already did). */
  if (st == HS_OK && pool->control.state != HS_DB_IN_PRODUCTION) {
    hs_control c = pool->control;
    c.state = HS_DB_IN_PRODUCTION;
    st = control_write(hs_smgr_dir(pool->smgr), &c);
    if (st == HS_OK) pool->control = c;
  }
  return st;
}

hs_status hs_pool_recovery_stats_get(const hs_pool *pool, hs_pool_recovery_stats *out) {
  if (!pool || !out)
    return hs_fail(HS_ERR_MISUSE, 0, "hs_pool_recovery_stats_get: pool and out are required");
  *out = pool->recovery;
  return HS_OK;
}
