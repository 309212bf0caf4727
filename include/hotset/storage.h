/*
 * hotset/storage.h — the storage manager: relations as files of fixed-size
 * blocks in one data directory.
 *
 * A relation is named by a number (hs_relid) and has up to HS_FORK_COUNT
 * forks, each its own file: "<dir>/<rel>" for the main fork, "<rel>_fsm",
 * "<rel>_vm" and "<rel>_init" for the others (PostgreSQL's layout). Blocks are
 * read and written whole with pread/pwrite; a relation grows one block at a
 * time through hs_smgr_extend, which is atomic against concurrent extenders.
 *
 * Every function is thread-safe. Every failure is a status code plus a
 * message naming the relation, block and cause (hs_last_error): a short read,
 * a read past the end, EIO, ENOSPC, a missing file or a permission problem is
 * never turned into zeros.
 *
 * A failed fsync is never forgotten. After fsync fails the kernel may have
 * dropped the file's dirty pages and cleared the error, so a retry could
 * succeed with the data gone (PostgreSQL's 2018 "fsyncgate"). So once an
 * fsync of a fork's file fails, that file is marked failed in this handle:
 * every later hs_smgr_sync of it, and every hs_smgr_sync_relation and
 * hs_smgr_sync_all that covers it, fails with HS_ERR_IO ("an earlier fsync of
 * <file> failed (<why>) ...", hs_last_errno() the first failure's errno)
 * without calling fsync again. The same holds for the data directory's fsync
 * in hs_smgr_sync_all. Reads and writes go on (they cannot make it worse),
 * but nothing written to that file since its last good sync can ever be
 * reported durable: the handle must be closed and the data recovered
 * elsewhere (a buffer pool that cannot flush is abandoned, and the WAL is
 * replayed). Removing the file (hs_smgr_unlink) forgets its failure, since
 * lost data of a file that no longer exists cannot be missed; truncating does
 * not, since the blocks it keeps may be the lost ones. A new handle
 * (hs_smgr_open) starts with no failure on record.
 *
 * One process at a time should write a data directory: hs_smgr_lock_dir takes
 * an exclusive lock on it that a buffer pool holds while open. The storage
 * manager itself does not take it, so tools may open a second handle to look
 * at or prepare relations.
 *
 * The files a directory must hold. A buffer pool's handle keeps a list of
 * the relation files that must exist, HS_SMGR_RELATIONS_FILE, with the
 * size each had at the last checkpoint (docs/buffer-pool.md, "The files a
 * directory must hold"): opening the pool refuses a listed file that is
 * missing or shorter than that, naming it, rather than let an empty file
 * stand in for a lost commit log or index. Only main and init forks are
 * listed; the free-space and visibility map forks hold hints whose loss
 * reads as "nothing known" and may be absent. On that handle, creating a
 * listed fork makes the file and its directory entry durable and then
 * lists it (so hs_smgr_create and hs_smgr_create_if_missing cost a few
 * fsyncs there), hs_smgr_unlink takes it off the list first, and
 * hs_smgr_truncate lowers its recorded size first. On any other handle,
 * truncating or removing a listed fork lowers or removes its entry in the
 * file; creating one lists nothing (the pool lists what it finds when it
 * opens).
 *
 * Names, errors, ownership and threads follow docs/api.md; a call says
 * only where it differs.
 */
#ifndef HOTSET_STORAGE_H
#define HOTSET_STORAGE_H

#include "hotset/status.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The public API: exported from libhotset.so, which is otherwise built with
 * -fvisibility=hidden so its internals stay private. */
#pragma GCC visibility push(default)

typedef uint32_t hs_relid;
typedef uint32_t hs_blockno;
#define HS_INVALID_BLOCK ((hs_blockno)0xFFFFFFFFu)

typedef enum hs_fork {
  HS_FORK_MAIN = 0,
  HS_FORK_FSM = 1,
  HS_FORK_VM = 2,
  HS_FORK_INIT = 3,
  HS_FORK_COUNT
} hs_fork;

#define HS_PAGE_SIZE_MIN     1024u
#define HS_PAGE_SIZE_MAX     65536u
#define HS_PAGE_SIZE_DEFAULT 8192u

typedef struct hs_smgr hs_smgr;

/* How a storage manager is opened (hs_smgr_open). */
typedef struct hs_smgr_options {
  uint32_t page_size; /* bytes per block: a power of two from 1 KiB to 64 KiB;
                         0 = HS_PAGE_SIZE_DEFAULT */
  /* Direct I/O: every relation file is opened with O_DIRECT, so reads and
   * writes go between the caller's memory and the device, past the
   * kernel's page cache (a miss costs a device read, and the data is not
   * cached twice). At open the file system under `dir` is tried with one
   * direct write and read of a page on an unnamed file, and the alignment
   * it needs is found out (statx STATX_DIOALIGN, else 4096 bytes). A file
   * system that refuses (ramfs does; tmpfs did before Linux 6.6), or a
   * page size below its alignment, fails the open with HS_ERR_INVALID and
   * a message naming the file system: there is no silent fallback to
   * buffered I/O. Every page handed to read, readv, write and extend must
   * then be aligned to hs_smgr_io_alignment(); one that is not is refused
   * with HS_ERR_INVALID. hs_smgr_sync still fsyncs (O_DIRECT does not make
   * the device's cache or the file's metadata durable). */
  bool direct_io;
} hs_smgr_options;

/* Fills in the defaults: HS_PAGE_SIZE_DEFAULT, buffered I/O. */
void hs_smgr_options_init(hs_smgr_options *opts);

/* Opens (creating it if missing) the data directory `dir`; opts NULL means
 * the defaults (hs_smgr_options_init). */
hs_status hs_smgr_open(const char *dir, const hs_smgr_options *opts, hs_smgr **out);

/* Whether this handle does direct I/O (hs_smgr_options.direct_io). */
bool hs_smgr_direct_io(const hs_smgr *smgr);
/* The alignment, in bytes, a page's memory must have for this handle's
 * transfers: what the file system asked for with direct I/O, 1 without. */
uint32_t hs_smgr_io_alignment(const hs_smgr *smgr);

/* Closes every file, and releases the directory's lock if this handle holds
 * it; no other call may be running on this smgr. */
void hs_smgr_close(hs_smgr *smgr);

/* The lock file in every locked data directory (never a relation's name:
 * those start with a digit). */
#define HS_SMGR_LOCK_FILE "hotset.lock"
/* The list of the relation files a pool's data directory must hold (see
 * the top of this file). */
#define HS_SMGR_RELATIONS_FILE "hotset.relations"

/* Takes an exclusive lock on the data directory, held until hs_smgr_close:
 * a non-blocking flock(2) of "<dir>/hotset.lock" (created 0600 if missing),
 * into which the holder's pid is then written. If another handle holds it,
 * in this process or another: HS_ERR_BUSY, "data directory <dir> is in use by
 * process <pid> (lock file <dir>/hotset.lock)" ("another process" when the
 * file holds no pid). Calling it again on a handle that holds the lock does
 * nothing. The file is left in place at close (removing it would race with
 * the next locker); a file nobody holds a lock on is simply locked again.
 * flock locks are advisory and may not work across NFS. */
hs_status hs_smgr_lock_dir(hs_smgr *smgr);

uint32_t hs_smgr_page_size(const hs_smgr *smgr);
const char *hs_smgr_dir(const hs_smgr *smgr);

/* Creates an empty fork; HS_ERR_EXISTS if it is already there. */
hs_status hs_smgr_create(hs_smgr *smgr, hs_relid rel, hs_fork fork);
/* Creates an empty fork unless its file is there already (then it is left as
 * it is): a program opening its relations needs no hs_smgr_exists check, and
 * two creators cannot race. *created (may be NULL) says which happened.
 * HS_ERR_EXISTS only if the fork's name is taken by something that is not a
 * regular file. */
hs_status hs_smgr_create_if_missing(hs_smgr *smgr, hs_relid rel, hs_fork fork, bool *created);
/* *exists: whether the fork's file is there. An error other than "no such
 * file" (a permission problem, EIO) is returned, never taken for absence. */
hs_status hs_smgr_exists(hs_smgr *smgr, hs_relid rel, hs_fork fork, bool *exists);
/* Removes the fork's file. */
hs_status hs_smgr_unlink(hs_smgr *smgr, hs_relid rel, hs_fork fork);

/* Reads block `block` into `page` (page_size bytes). HS_ERR_EOF if the block
 * lies past the end, HS_ERR_SHORT_IO if only part of it is in the file. */
hs_status hs_smgr_read(hs_smgr *smgr, hs_relid rel, hs_fork fork, hs_blockno block, void *page);
/* Reads the `n` consecutive blocks from `block` on into pages[0..n-1], in
 * one preadv: a buffer manager combining a scan's reads into one system call
 * (at most HS_SMGR_READV_MAX blocks). The observer hears of every block; an
 * injected read fault applies to the whole call. On failure nothing is said
 * of which pages were filled: the message names the first block not read. */
#define HS_SMGR_READV_MAX 128u
hs_status hs_smgr_readv(hs_smgr *smgr, hs_relid rel, hs_fork fork, hs_blockno block, uint32_t n,
                        void *const *pages);
/* Overwrites an existing block; HS_ERR_EOF if the block is past the end
 * (relations grow only through hs_smgr_extend). */
hs_status hs_smgr_write(hs_smgr *smgr, hs_relid rel, hs_fork fork, hs_blockno block,
                        const void *page);
/* Appends one block holding `page` (zeros if NULL) and returns its number. */
hs_status hs_smgr_extend(hs_smgr *smgr, hs_relid rel, hs_fork fork, const void *page,
                         hs_blockno *new_block);
/* The number of whole blocks in the fork. */
hs_status hs_smgr_nblocks(hs_smgr *smgr, hs_relid rel, hs_fork fork, hs_blockno *nblocks);
/* Cuts the fork to `nblocks` blocks (it must not be longer than now). */
hs_status hs_smgr_truncate(hs_smgr *smgr, hs_relid rel, hs_fork fork, hs_blockno nblocks);
/* fsync of the fork's file; once one has failed, every later one fails
 * (see the top of this file). */
hs_status hs_smgr_sync(hs_smgr *smgr, hs_relid rel, hs_fork fork);
/* fsync of every fork of the relation written or extended since its last
 * sync (forks that were not are skipped); fails if a fork's fsync ever
 * failed. */
hs_status hs_smgr_sync_relation(hs_smgr *smgr, hs_relid rel);
/* fsync of every file written or extended since its last sync, and of the
 * data directory if a file was created or removed; fails if any open file's
 * fsync, or the directory's, ever failed. */
hs_status hs_smgr_sync_all(hs_smgr *smgr);

/* The file name of a fork, e.g. "16384_fsm" (for messages and tools). */
void hs_smgr_fork_filename(hs_relid rel, hs_fork fork, char *buf, size_t len);
/* The inverse: whether `name` is the file name of a relation's fork, which
 * relation and fork (either out may be NULL). "16384_vm" is; "16384_tmp",
 * "016384" (not as hs_smgr_fork_filename writes it) and "hotset.control"
 * are not. Tools that walk a data directory use it to tell its relation
 * files from everything else. */
bool hs_smgr_parse_fork_filename(const char *name, hs_relid *rel, hs_fork *fork);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
