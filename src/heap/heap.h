/*
 * heap/heap.h — tuples with versions: insert, fetch under a snapshot,
 * delete, and update (a new version, the old one marked deleted), every
 * change logged through the heap's resource manager and replayed by
 * recovery.
 *
 * A tuple is a 24-byte header and the caller's bytes: the transaction that
 * created it (xmin), the one that deleted it (xmax, 0 while it lives), and
 * where its newer version is (an update's chain, PostgreSQL's t_ctid). A
 * version is visible to a snapshot when its creator is visible to it (or is
 * the reader itself) and its deleter is not. Two writers of one tuple: the
 * second gets HS_ERR_BUSY while the first runs (no waiting: the caller
 * aborts or retries), HS_ERR_INVALID once the first committed (the tuple is
 * deleted), and takes it over if the first aborted.
 *
 * Records (rmgr HS_WAL_RMGR_HEAP):
 *   INSERT  one page: u16 slot, the tuple
 *   DELETE  one page: u16 slot, u64 xmax
 *   UPDATE  the old page and the new (one page if the same): u16 old slot,
 *           u64 xmax, u16 new slot, the new tuple
 *   PRUNE   one page: u16 removed, u16 frozen, u16 cleared, then the
 *           removed, frozen and cleared slots (u16 each); redo frees,
 *           compacts, freezes, and clears the xmax of versions whose
 *           deleter aborted
 *   VISIBLE one page, nothing: the page is all-visible (its flag set); every
 *           other record's redo clears that flag on the pages it changes
 * A page whose first change since the checkpoint carried its image is
 * restored from it and not redone (hotset/durability.h).
 *
 * Register the heap's redo on the log (heap_register_redo) before opening
 * the pool, so recovery can replay its records.
 */
#ifndef HOTSET_HEAP_HEAP_H
#define HOTSET_HEAP_HEAP_H

#include "heap/heap_page.h"
#include "heap/xact.h"
#include "hotset/pool.h"
#include "hotset/wal.h"

#include <stdbool.h>
#include <stdint.h>

#define HEAP_TUPLE_HEADER 24u
#define HEAP_MAX_DATA     (HEAP_MAX_TUPLE - HEAP_TUPLE_HEADER)

typedef struct hs_tid {
  hs_blockno block;
  uint16_t slot;
} hs_tid;

typedef struct heap heap;

hs_status heap_register_redo(hs_wal *wal);

/* The heap stored in relation `rel` of `pool` (created if missing). */
hs_status heap_open(hs_pool *pool, xact_mgr *xact, hs_relid rel, heap **out);
void heap_close(heap *h);
hs_pool *heap_pool(const heap *h);
hs_relid heap_rel(const heap *h);
xact_mgr *heap_xact(const heap *h);
/* The heap's free-space map (heap/fsm.h): vacuum records what it freed. */
struct fsm *heap_fsm(const heap *h);
/* Its visibility map (heap/vm.h): pages vacuum may skip. */
struct vmap *heap_vm(const heap *h);

hs_status heap_insert(heap *h, hs_xid xid, const void *data, uint32_t len, hs_tid *tid);
/* Copies the version at `tid` into out (up to cap bytes; *len its length)
 * if it is visible to `snap` as seen by transaction `self` (0: none);
 * *visible says whether it was. HS_ERR_NOENT for an empty slot. */
hs_status heap_fetch(heap *h, hs_tid tid, const xact_snapshot *snap, hs_xid self, void *out,
                     uint32_t cap, uint32_t *len, bool *visible);
hs_status heap_delete(heap *h, hs_xid xid, hs_tid tid);
hs_status heap_update(heap *h, hs_xid xid, hs_tid tid, const void *data, uint32_t len,
                      hs_tid *new_tid);

/* ---- pruning (vacuum) ---- */

/* What a prune did to a page. */
typedef struct heap_prune_counts {
  uint32_t removed; /* dead versions whose slots were freed */
  uint32_t frozen;  /* live versions whose creator became XACT_FROZEN */
  uint32_t live;    /* versions left */
  uint32_t kept;    /* dead versions kept for a later prune (heap_dead_fn) */
  uint32_t freed_bytes;
  uint32_t free_now; /* the page's room afterwards (for the free-space map) */
  bool changed;      /* the page changed (and was logged) */
  bool all_visible;  /* every version left is visible to every snapshot */
  bool set_visible;  /* ... and this prune marked it so (flag and map) */
} heap_prune_counts;

/* Called for each dead version before anything changes, with its tid, its
 * data (a keyed heap's key first) and its newer version's tid ({0, 0}:
 * none): the index moves its entry off it (pk_index_move). *remove comes in
 * true; the callback clears it to keep a version it cannot let go yet — one
 * in the middle of an update chain whose older versions still exist (on a
 * page not pruned yet): removing it would leave them pointing at an empty
 * slot that a later insert may fill. A version whose creator aborted is
 * removed whatever the callback says (nothing reaches it: its predecessor's
 * aborted xmax ends the walk there). */
typedef hs_status (*heap_dead_fn)(void *ctx, hs_tid tid, const void *data, uint32_t len,
                                  hs_tid next, bool *remove);

/* Prunes the page in buffer `b`, which the caller has pinned and locked
 * exclusively: a version is dead when its deleter committed below
 * `horizon`, or its creator aborted; dead versions' slots become UNUSED and
 * the page is compacted. With `freeze`, every live version whose creator
 * committed below the horizon gets XACT_FROZEN as creator (PostgreSQL's
 * VACUUM FREEZE: the page is rewritten so no commit-log lookup is needed
 * for it again). One record (PRUNE) logs it all; nothing is logged if
 * nothing changed. */
hs_status heap_prune(heap *h, hs_buf b, hs_xid horizon, bool freeze, heap_dead_fn on_dead,
                     void *ctx, heap_prune_counts *out);

/* A tuple's header fields (for vacuum and tests). */
typedef struct heap_tuple_info {
  hs_xid xmin, xmax;
  hs_tid next; /* the newer version; {0, 0} if none */
} heap_tuple_info;
hs_status heap_tuple_info_get(heap *h, hs_tid tid, heap_tuple_info *out);

#endif
