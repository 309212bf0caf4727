/*
 * storage/catalog.h — the list of the relation files a data directory must
 * hold, HS_SMGR_RELATIONS_FILE (internal): its format, reading, writing,
 * and checking it against the files on disk.
 *
 * Why a list: a relation file that is missing or cut short looks exactly
 * like one not yet created or not yet grown, and the heap's commit log and
 * index are created on first use — so without a record of what must exist,
 * a deleted commit log is silently recreated empty and every row becomes
 * invisible. Each entry names a relation fork and the number of blocks it
 * had, durably, at the last checkpoint (0 for one created since): the file
 * must exist with at least that many. Blocks a fork gained after the
 * checkpoint need not be there: every change since the redo point is in the
 * log, and replay adds them back.
 *
 * Only main and init forks are listed (catalog_fork_listed). The free-space
 * map and the visibility map are hints — a missing map page reads as "no
 * free space known" and "not all visible", both safe — so they may be
 * absent, and the heap recreates them.
 *
 * The file, little-endian:
 *
 *    0  "HSRELCAT"       magic
 *    8  u32 format       CATALOG_FORMAT
 *   12  u32 page_size    the unit of min_blocks
 *   16  u32 count
 *   20  count entries of 24 bytes: u32 rel, u16 fork, u16 flags (bit 0:
 *       stale), u32 min_blocks, u32 mark_block, u64 mark_lsn, sorted by
 *       (rel, fork), no two alike (format 1, still read: 12-byte entries of
 *       u32 rel, u32 fork, u32 min_blocks)
 *   20 + 24 count: u32 CRC-32C of every byte before it
 *
 * The mark is the newest page a checkpoint wrote to the file: its block and
 * the LSN it carried then (0: none yet). Pages only move forward — each
 * write carries an LSN at least its last one's, and recovery brings every
 * page back to at least what it had on disk — so once a directory is shut
 * down cleanly, a mark block with an older LSN (or zeros) proves the file
 * was replaced by an older or zeroed copy of itself, which its checksums
 * and its size cannot tell. Such a file is marked stale in the list, so the
 * refusal outlives a crash, until the file is given up (`hotset relations
 * --forget`) or rebuilt (an index, hs_pk_index_rebuild).
 *
 * Replaced, never changed in place, as the control file is: written under
 * a temporary name, fsynced, renamed over the old one, the directory
 * fsynced. A crash leaves the old list or the new one, and every change is
 * ordered so that either is safe: an entry is added only once its file is
 * durable, and lowered or removed before its file is cut or unlinked.
 */
#ifndef HOTSET_STORAGE_CATALOG_H
#define HOTSET_STORAGE_CATALOG_H

#include "hotset/status.h"
#include "hotset/storage.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CATALOG_FORMAT 2u

typedef struct catalog_entry {
  hs_relid rel;
  hs_fork fork;
  hs_blockno min_blocks; /* blocks the file had, durably, at the last checkpoint */
  hs_blockno mark_block; /* the newest page a checkpoint wrote ... */
  uint64_t mark_lsn;     /* ... and its LSN then; 0: none */
  bool stale;            /* found older than its mark: every read is refused */
} catalog_entry;

typedef struct catalog {
  uint32_t page_size;
  uint32_t n, cap;
  catalog_entry *entries; /* sorted by (rel, fork) */
} catalog;

/* Whether forks of this kind are listed: main and init, not the maps. */
bool catalog_fork_listed(hs_fork fork);

/* An empty list for pages of `page_size` bytes. */
void catalog_init(catalog *c, uint32_t page_size);
void catalog_free(catalog *c);
/* The entry of (rel, fork), or NULL. */
catalog_entry *catalog_find(const catalog *c, hs_relid rel, hs_fork fork);
/* Adds (rel, fork) with `min_blocks`, or sets an existing entry's. */
hs_status catalog_put(catalog *c, hs_relid rel, hs_fork fork, hs_blockno min_blocks);
/* Takes (rel, fork) off the list (nothing if it is not on it). */
void catalog_remove(catalog *c, hs_relid rel, hs_fork fork);
/* A copy of `from` into `to` (initialized here). */
hs_status catalog_copy(catalog *to, const catalog *from);

/* "<dir>/hotset.relations". */
void catalog_path(const char *dir, char *buf, size_t len);
/* Reads DIR's list into `out` (initialized here; free it either way).
 * HS_ERR_NOENT if there is none; HS_ERR_CORRUPT naming the file if it is
 * damaged (size, magic, format, CRC, an entry out of order or of a fork
 * that is not listed). */
hs_status catalog_read(const char *dir, catalog *out);
/* Replaces DIR's list with `c`, durably (temporary file, fsync, rename,
 * directory fsync). A full disk is HS_ERR_NOSPACE. */
hs_status catalog_write(const char *dir, const catalog *c);

/* A listed file that is not as its entry requires. */
typedef struct catalog_problem {
  catalog_entry want;
  bool missing;    /* no regular file by that name (or it cannot be looked at) */
  int err;         /* why, when missing: stat's errno (0: not a regular file) */
  uint64_t blocks; /* whole blocks in the file, when it is there */
  uint64_t bytes;  /* its size */
} catalog_problem;

/* Looks at every listed file of `dir`, calling `each` (may be NULL) for
 * each one missing or shorter than its entry says; returns how many. */
size_t catalog_check(const char *dir, const catalog *c,
                     void (*each)(void *ctx, const catalog_problem *p), void *ctx);
/* What is wrong with the file, in words: `"<path>" is missing (No such
 * file or directory)`, or `"<path>" has 2 blocks of 8192 bytes`, then
 * `, but <list> requires it with at least 5 (its size at the last
 * checkpoint)`. */
void catalog_describe(const char *dir, const catalog *c, const catalog_problem *p, char *buf,
                      size_t len);

/* `s` as one word of a shell command: as it is when it holds nothing a
 * shell would read specially, else single-quoted. So a hint's command runs
 * as printed whatever the directory is called. */
void catalog_shell_word(const char *s, char *buf, size_t len);

#endif
