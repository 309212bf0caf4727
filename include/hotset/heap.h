/*
 * hotset/heap.h — versioned tuples for an engine built on the pool: a
 * transaction manager (ids, commit log, snapshots), a heap of tuples with
 * versions (insert, fetch under a snapshot, delete, update), and a
 * primary-key index for dense integer keys. Every change is logged through
 * the pool's log and replayed by recovery; removing dead versions is
 * hotset/vacuum.h's job.
 *
 * The call sequence: open a log (hotset/wal.h), hs_heap_register_redo on it,
 * open the pool with it (hs_pool_options.wal: recovery replays the heap's
 * records then), hs_xact_open, hs_heap_open, hs_pk_index_open; then per
 * transaction hs_xact_begin, hs_xact_take_snapshot, the heap and index
 * calls, hs_xact_release_snapshot, hs_xact_commit or hs_xact_abort. Close
 * in the other order: index, heap, transaction manager, pool, log.
 *
 * Visibility is PostgreSQL's: a version is visible to a snapshot when its
 * creator (xmin) committed before the snapshot was taken, or is the reader
 * itself, and its deleter (xmax) did not. Two writers of one tuple: the
 * second gets HS_ERR_BUSY while the first runs (nothing waits: the caller
 * aborts or retries), HS_ERR_INVALID once the first committed (the tuple is
 * deleted), and takes the tuple over if the first aborted.
 *
 * Threads: every function here may be called from any thread, concurrently
 * on the same object, except the close functions, which need every other
 * call on their object finished. The calls lock the pool pages they touch
 * (hs_buf_lock) only while they run, so a caller must not hold a content
 * lock on a heap or index page when it calls them.
 *
 * Names, errors, ownership and threads follow docs/api.md; a call says
 * only where it differs.
 */
#ifndef HOTSET_HEAP_H
#define HOTSET_HEAP_H

#include "hotset/pool.h"
#include "hotset/status.h"
#include "hotset/storage.h"
#include "hotset/wal.h"

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The public API: exported from libhotset.so, which is otherwise built with
 * -fvisibility=hidden so its internals stay private. */
#pragma GCC visibility push(default)

/* ---- transactions ---- */

/* Transaction ids are 64-bit and never wrap. */
typedef uint64_t hs_xid;

#define HS_XACT_INVALID     ((hs_xid)0) /* "none" */
#define HS_XACT_FROZEN      ((hs_xid)1) /* committed before every snapshot */
#define HS_XACT_FIRST       ((hs_xid)2) /* the first id ever given */
#define HS_XACT_CLOG_REL    0xFFFFFF00u /* the commit log's relation: not the engine's to use */
#define HS_XACT_MAX_RUNNING 1024u       /* transactions running at once, at most */

typedef enum hs_xact_status {
  HS_XACT_IN_PROGRESS = 0,
  HS_XACT_COMMITTED = 1,
  HS_XACT_ABORTED = 2,
} hs_xact_status;

typedef struct hs_xact_mgr hs_xact_mgr;

/* Opens the commit log in `pool`, creating it if missing; ids start past
 * every id given before (a restart skips at most a few thousand unused
 * ids). A transaction that was running when the process died reads as
 * aborted. HS_ERR_INVALID if the pool has no log (hs_pool_options.wal);
 * HS_ERR_MISUSE for a NULL pool or out; storage errors as the pool reports
 * them. */
hs_status hs_xact_open(hs_pool *pool, hs_xact_mgr **out);
/* Frees the manager; close the heaps that use it first. */
void hs_xact_close(hs_xact_mgr *m);

/* A new transaction: its id, running from now. HS_ERR_BUSY if
 * HS_XACT_MAX_RUNNING are running. */
hs_status hs_xact_begin(hs_xact_mgr *m, hs_xid *xid);
/* Commits: the commit log says so, durably (the log flushed up to the
 * commit's record before this returns), and the id stops running.
 * HS_ERR_INVALID if `xid` is not running; a log error leaves it running. */
hs_status hs_xact_commit(hs_xact_mgr *m, hs_xid xid);
/* Aborts: recorded but not flushed (an abort lost in a crash reads as
 * aborted anyway), and the id stops running. Errors as hs_xact_commit's. */
hs_status hs_xact_abort(hs_xact_mgr *m, hs_xid xid);
/* What the commit log says of `xid`; HS_XACT_FROZEN is committed.
 * HS_ERR_INVALID for an id never given. */
hs_status hs_xact_status_of(hs_xact_mgr *m, hs_xid xid, hs_xact_status *out);

/* A snapshot: the next id when it was taken, and the ids running then. It
 * is the caller's memory (about 8 KiB), and may be read by several threads
 * at once. */
typedef struct hs_snapshot {
  hs_xid xmin; /* the oldest id running when taken */
  hs_xid xmax; /* the next id when taken */
  uint32_t nrunning;
  hs_xid running[HS_XACT_MAX_RUNNING]; /* ids running when taken */
} hs_snapshot;

/* Takes a snapshot into *s and holds back the horizon (hs_xact_horizon)
 * until hs_xact_release_snapshot; release each snapshot taken exactly once.
 * HS_ERR_BUSY when 4096 snapshots are held. */
hs_status hs_xact_take_snapshot(hs_xact_mgr *m, hs_snapshot *s);
/* HS_ERR_MISUSE for a snapshot this manager does not hold (released
 * already, or never taken). */
hs_status hs_xact_release_snapshot(hs_xact_mgr *m, const hs_snapshot *s);
/* *visible: whether `xid`'s work is visible to the snapshot (committed,
 * and finished before it was taken). The snapshot's own transaction is the
 * caller's to handle. Errors as hs_xact_status_of's. */
hs_status hs_xact_visible(hs_xact_mgr *m, const hs_snapshot *s, hs_xid xid, bool *visible);
/* The oldest id a running transaction or held snapshot may still see as
 * running: a version deleted by an id that committed below it is dead to
 * everyone (vacuum may remove it). */
hs_xid hs_xact_horizon(hs_xact_mgr *m);
/* The next id to be given. */
hs_xid hs_xact_next(hs_xact_mgr *m);

/* ---- the heap ---- */

/* Where a tuple version is: its block and slot (slots count from 1). */
typedef struct hs_tid {
  hs_blockno block;
  uint16_t slot;
} hs_tid;

/* Sizes. The most data one tuple can carry is HS_HEAP_MAX_DATA on pages of
 * 32 KiB and more; smaller pages hold less: an empty page less its headers,
 * a line pointer and the 24-byte tuple header (page_size - 68: 8124 bytes
 * on 8 KiB pages; hs_heap_max_data says it for an open heap). It does not
 * depend on the log: instead hs_heap_open refuses a pool whose log cannot
 * carry the heap's largest record — an update that moves a tuple of that
 * size to another page, with a full image of both pages (2 * page_size +
 * 36 + max data bytes) — with HS_ERR_INVALID naming the sizes, so no call
 * can fail later because a record is too large. hs_wal_max_record grows
 * with the log's buffer_bytes (itself at most segment_bytes): a log of 64
 * KiB segments may be too small for 8 KiB pages; a larger buffer or smaller
 * pages fix it.
 *
 * Failures. A heap call that returns an error changed nothing a reader can
 * see: the size checks come before anything is read, every fallible step
 * (reading pages, extending the relation, the visibility map, memory)
 * before the first byte of a page changes, and if the log refuses the
 * record (an I/O error, a full disk) the pages are put back as they were.
 * What may remain: an empty page at the relation's end (an extension is
 * not taken back; the next insert uses it), a cleared visibility-map bit
 * (vacuum sets it again), and free-space-map hints. */
#define HS_HEAP_MAX_DATA 16359u

typedef struct hs_heap hs_heap;

/* Registers the heap's redo on the log, so recovery can replay heap
 * records: call it before opening the pool with that log (registering
 * again is harmless). HS_ERR_MISUSE for a NULL log. */
hs_status hs_heap_register_redo(hs_wal *wal);

/* The heap stored in relation `rel` of `pool` (created if missing), whose
 * versions `xact` judges. HS_ERR_MISUSE for a NULL pool, manager or out;
 * HS_ERR_INVALID when the pool has no log, or the log's records are too
 * small for the pool's pages (see "Sizes" above); HS_ERR_NOMEM; storage
 * errors. */
hs_status hs_heap_open(hs_pool *pool, hs_xact_mgr *xact, hs_relid rel, hs_heap **out);
/* Frees the heap (its pages stay in the pool). */
void hs_heap_close(hs_heap *h);
/* The most data one tuple of this heap can carry (see "Sizes" above);
 * 0 for NULL. */
uint32_t hs_heap_max_data(const hs_heap *h);

/* Adds a version created by running transaction `xid` holding `len` bytes
 * of `data`; *tid says where. HS_ERR_INVALID if len is more than
 * hs_heap_max_data (at most HS_HEAP_MAX_DATA), refused before anything
 * changes. Inserts from several threads
 * take the page lock of the page they fill in turn, and extending the
 * relation is serialized. */
hs_status hs_heap_insert(hs_heap *h, hs_xid xid, const void *data, uint32_t len, hs_tid *tid);
/* Copies the version at `tid` into out (up to cap bytes; *len its whole
 * length) if it is visible to `snap` as seen by transaction `self` (0:
 * none); *visible says whether it was. HS_ERR_NOENT for an empty slot.
 * Holds the page's share lock while it copies. */
hs_status hs_heap_fetch(hs_heap *h, hs_tid tid, const hs_snapshot *snap, hs_xid self, void *out,
                        uint32_t cap, uint32_t *len, bool *visible);
/* Marks the version at `tid` deleted by running transaction `xid`.
 * HS_ERR_BUSY if another running transaction deleted or updated it,
 * HS_ERR_INVALID if one that committed did, HS_ERR_NOENT for an empty
 * slot. Whether `xid`'s snapshot sees the version is the caller's to check
 * first. */
hs_status hs_heap_delete(hs_heap *h, hs_xid xid, hs_tid tid);
/* A new version of the tuple at `tid` holding `data`, *new_tid where it
 * went (the same page if it has room, else a later one); the old version
 * is deleted by `xid` and points to the new one. Errors as hs_heap_delete's
 * and hs_heap_insert's. When the new version goes to another page, both
 * pages are locked, the lower block first. */
hs_status hs_heap_update(hs_heap *h, hs_xid xid, hs_tid tid, const void *data, uint32_t len,
                         hs_tid *new_tid);

/* A version's header, whatever any snapshot sees. */
typedef struct hs_heap_tuple_info {
  hs_xid xmin, xmax; /* its creator; its deleter (0 while it lives) */
  hs_tid next;       /* the newer version; {0, 0} if none */
} hs_heap_tuple_info;
/* The header of the version at `tid`; HS_ERR_NOENT for an empty slot. */
hs_status hs_heap_tuple_info_get(hs_heap *h, hs_tid tid, hs_heap_tuple_info *out);

/* ---- the primary-key index ---- */

/* A direct-mapped array of tids for dense integer keys (1..N, few gaps: a
 * key's entry is at a computed page and offset, one index page read per
 * lookup). Each tuple of an indexed heap starts with its key (a u64), and
 * the entry holds the tid of the key's oldest version still on the heap —
 * an update leaves the index alone; a lookup follows the versions' chain. */
typedef struct hs_pk_index hs_pk_index;

/* The index stored in relation `rel` of `pool` (created if missing).
 * HS_ERR_MISUSE for a NULL pool or out; HS_ERR_INVALID if the pool has no
 * log; HS_ERR_NOMEM; storage errors. */
hs_status hs_pk_index_open(hs_pool *pool, hs_relid rel, hs_pk_index **out);
/* Frees the index (its pages stay in the pool). */
void hs_pk_index_close(hs_pk_index *ix);

/* Records `key`'s first version (after hs_heap_insert).
 * HS_ERR_EXISTS if the key has an entry; HS_ERR_INVALID for a key past the
 * index's reach. The entry's page is locked exclusively for the change. */
hs_status hs_pk_index_insert(hs_pk_index *ix, uint64_t key, hs_tid tid);
/* The entry of `key` (*found false if none). */
hs_status hs_pk_index_get(hs_pk_index *ix, uint64_t key, hs_tid *tid, bool *found);
/* Moves `key`'s entry from `from` to `to` ({0, 0}: removes it): what vacuum
 * does when it removes a chain's oldest version. HS_ERR_BUSY if the entry
 * no longer says `from` (checked and changed under the page's lock). */
hs_status hs_pk_index_move(hs_pk_index *ix, uint64_t key, hs_tid from, hs_tid to);

/* Rebuilds the index from `h`, the heap it indexes, as `hotset reindex`
 * does when the index is damaged or its heap lost rows: every version on
 * the heap is read (each tuple's first 8 bytes are its key), each key's
 * entry is set to the root of its update chain — the version no other
 * version of that key points to; of several roots (a version whose insert
 * was not indexed) the newest whose creator did not abort — and every
 * other entry is cleared. A key whose chain leads to a version the heap no
 * longer has (a deleter that did not abort, its new version on a lost
 * page) gets no entry: its current version is gone, and an older one must
 * not stand in for it; *lost (may be NULL) counts those keys. The index's pages are overwritten
 * without being read (a page that fails its checksum is replaced), each change logged, so a crash
 * midway leaves a log that replays to a partial rebuild and a second run finishes it. *keys (may be
 * NULL) counts the entries set. Rule: nothing else uses the heap or the index during the call (the
 * command holds the directory's lock). Errors: a heap page that fails its
 * checks (HS_ERR_CORRUPT naming it: a rebuild never skips rows), a key
 * past the index's reach (HS_ERR_INVALID), the pool's and the log's. */
hs_status hs_pk_index_rebuild(hs_pk_index *ix, hs_heap *h, uint64_t *keys, uint64_t *lost);

/* The version of `key` that `snap` sees as transaction `self` sees it:
 * *tid, its data (up to cap bytes, the key included) and *len, *found false
 * if none is visible. Safe beside a running vacuum: an entry that vacuum
 * moved meanwhile is read again. An entry that stays put while it points
 * at a slot holding no version of its key, or past the heap's end — the
 * index and the heap disagree: one was damaged, or the heap lost rows — is
 * HS_ERR_CORRUPT naming both relations, with the `hotset reindex` command
 * that rebuilds the index from the heap. Locks the index page, then (after
 * releasing it) each heap page in turn, never two at once. */
hs_status hs_pk_index_lookup(hs_pk_index *ix, hs_heap *h, uint64_t key, const hs_snapshot *snap,
                             hs_xid self, hs_tid *tid, void *out, uint32_t cap, uint32_t *len,
                             bool *found);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
