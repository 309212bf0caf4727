/*
 * storage/smgr_catalog.h — the storage manager keeping its directory's list
 * of the relation files that must exist (storage/catalog.h) up to date
 * (internal).
 *
 * A handle keeps the list once the buffer pool that owns it (and holds the
 * directory's lock) has loaded it (smgr_catalog_load) or started it
 * (smgr_catalog_adopt). From then on, under one mutex:
 *
 *  - creating a listed fork fsyncs the new file and the directory, then
 *    lists it with 0 blocks (the entry is never ahead of a durable file);
 *  - truncating one lowers its entry, and unlinking one removes it,
 *    durably, before the file is cut or removed, and the mutex is held
 *    until then, so a checkpoint cannot record the old size in between;
 *  - a checkpoint records each listed file's block count, fsyncing any that
 *    grew, so a recorded size is always one already on disk.
 *
 * A handle that does not keep the list (a tool's second handle, or the
 * pool's before its open is done) still lowers or removes a listed fork's
 * entry in the file when it truncates or unlinks that fork, so a tool that
 * rebuilds a relation smaller does not make the next open refuse it.
 */
#ifndef HOTSET_STORAGE_SMGR_CATALOG_H
#define HOTSET_STORAGE_SMGR_CATALOG_H

#include "hotset/storage.h"

#include <stdbool.h>

typedef struct smgr_catalog smgr_catalog;

/* ---- for the buffer pool ---- */

/* Reads the list of `smgr`'s directory and checks every listed file: it
 * must exist with at least the blocks its entry names. A file that does
 * not, or a list that is damaged, or missing while `required` (the control
 * file says the directory keeps one), is HS_ERR_CORRUPT naming the file,
 * what was expected and found, and a command that is the way out; nothing
 * is written. With no list and not `required` (a new directory, or one from
 * before lists), nothing is kept until smgr_catalog_adopt. `who` starts
 * the message ("hs_pool_open"). */
hs_status smgr_catalog_load(hs_smgr *smgr, bool required, const char *who);
/* Lists every main and init fork in the directory that the list lacks
 * (files made by recovery before the list was kept, by a tool's handle, or
 * by a hotset from before lists), with 0 blocks, after fsyncing them and
 * the directory; writes the list if it changed or did not exist. From now
 * on the handle keeps it. */
hs_status smgr_catalog_adopt(hs_smgr *smgr);
/* A checkpoint's step, after every written file was fsynced: records each
 * listed file's block count, fsyncing those that grew since their entry
 * was written. A listed file found shorter than its entry fails with
 * HS_ERR_CORRUPT (it was cut behind the storage manager's back). Does
 * nothing while the handle keeps no list. */
hs_status smgr_catalog_record_sizes(hs_smgr *smgr);

/* A checkpoint wrote block `block` of (rel, fork) carrying `lsn`: the
 * newest such page becomes the fork's mark (storage/catalog.h), recorded
 * by the next smgr_catalog_record_sizes, once durable. Pages without an
 * LSN (no checksums) are not marks. */
void smgr_catalog_note_write(hs_smgr *smgr, hs_relid rel, hs_fork fork, hs_blockno block,
                             uint64_t lsn);
/* At an open: if the directory was shut down `clean` (nothing to replay,
 * so every page is on disk as the last checkpoint left it or newer), reads
 * each listed fork's mark block and takes the fork for stale if that page
 * is zeros or carries an older LSN — an older or zeroed copy of the file;
 * a page of another directory (its system mark not `own_mark`) is left to
 * the read that meets it —
 * writing that into the list (so a crash does not forget it: an open that
 * replays cannot check). *stale counts the stale forks, those found before
 * included; smgr_catalog_stale says which. */
hs_status smgr_catalog_check_marks(hs_smgr *smgr, bool clean, uint16_t own_mark, uint32_t *stale);
/* The fork's contents are proven again (an index rebuilt from its heap):
 * no longer stale, in the list too. */
hs_status smgr_catalog_clear_stale(hs_smgr *smgr, hs_relid rel, hs_fork fork);
/* Whether the open found (rel, fork) stale, and its mark. */
bool smgr_catalog_stale(hs_smgr *smgr, hs_relid rel, hs_fork fork, hs_blockno *block,
                        uint64_t *lsn);

/* ---- for smgr.c ---- */

smgr_catalog *smgr_catalog_new(void);
void smgr_catalog_free(smgr_catalog *c);
/* After (rel, fork)'s file was created, or found there by
 * hs_smgr_create_if_missing: lists it if it is a listed fork not yet on a
 * kept list (its file and the directory fsynced first). */
hs_status smgr_catalog_note_created(hs_smgr *smgr, hs_relid rel, hs_fork fork);
/* Before (rel, fork) is cut to `nblocks` blocks (or removed, `remove`):
 * lowers (removes) its entry durably. The list stays locked until
 * smgr_catalog_end_shrink, which must follow whatever this returns. */
hs_status smgr_catalog_begin_shrink(hs_smgr *smgr, hs_relid rel, hs_fork fork, bool remove,
                                    hs_blockno nblocks);
void smgr_catalog_end_shrink(hs_smgr *smgr);

/* ---- what smgr.c provides ---- */

smgr_catalog *smgr_catalog_of(hs_smgr *smgr);
/* fsync of the data directory now, whatever this handle created (another
 * handle may have made the files); a failure is sticky as sync_all's. */
hs_status smgr_sync_dir_now(hs_smgr *smgr);

#endif
