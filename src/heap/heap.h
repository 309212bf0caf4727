/*
 * heap/heap.h — the heap's internals: what vacuum needs beyond the
 * public API (hotset/heap.h: insert, fetch under a snapshot, delete and
 * update, every change logged through the heap's resource manager and
 * replayed by recovery) — pruning a page, the heap's free-space and
 * visibility maps — and the tuple and record formats.
 *
 * A tuple is a 24-byte header and the caller's bytes: the transaction that
 * created it (xmin), the one that deleted it (xmax, 0 while it lives), and
 * where its newer version is (an update's chain, PostgreSQL's t_ctid).
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
 */
#ifndef HOTSET_HEAP_HEAP_H
#define HOTSET_HEAP_HEAP_H

#include "heap/heap_page.h"
#include "hotset/heap.h"
#include "hotset/pool.h"

#include <stdbool.h>
#include <stdint.h>

#define HEAP_TUPLE_HEADER 24u
_Static_assert(HS_HEAP_MAX_DATA == HEAP_MAX_TUPLE - HEAP_TUPLE_HEADER,
               "hotset/heap.h's HS_HEAP_MAX_DATA is the tuple format's limit");

hs_pool *heap_pool(const hs_heap *h);
hs_relid heap_rel(const hs_heap *h);
hs_xact_mgr *heap_xact(const hs_heap *h);
/* The heap's free-space map (heap/fsm.h): vacuum records what it freed. */
struct fsm *heap_fsm(const hs_heap *h);
/* Its visibility map (heap/vm.h): pages vacuum may skip. */
struct vmap *heap_vm(const hs_heap *h);

/* ---- pruning (vacuum) ---- */

/* What a prune did to a page. */
typedef struct heap_prune_counts {
  uint32_t removed; /* dead versions whose slots were freed */
  uint32_t frozen;  /* live versions whose creator became HS_XACT_FROZEN */
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
 * none): the index moves its entry off it (hs_pk_index_move). *remove comes in
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
 * committed below the horizon gets HS_XACT_FROZEN as creator (PostgreSQL's
 * VACUUM FREEZE: the page is rewritten so no commit-log lookup is needed
 * for it again). One record (PRUNE) logs it all; nothing is logged if
 * nothing changed. */
hs_status heap_prune(hs_heap *h, hs_buf b, hs_xid horizon, bool freeze, heap_dead_fn on_dead,
                     void *ctx, heap_prune_counts *out);

/* ---- every version (rebuilding an index) ---- */

/* Called for each version on the heap, whatever any snapshot sees: its
 * tid, header and data (a keyed heap's key first). */
typedef hs_status (*heap_version_fn)(void *ctx, hs_tid tid, const hs_heap_tuple_info *info,
                                     const void *data, uint32_t len);

/* Calls `fn` for every version, block by block, slot by slot, each page
 * share-locked while its versions are seen. A page that fails its
 * checksum or its layout check stops the walk with that error: a walk that
 * skipped a page would rebuild an index without its rows. The caller keeps
 * writers away (hs_pk_index_rebuild's rule). */
hs_status heap_scan_versions(hs_heap *h, heap_version_fn fn, void *ctx);

/* Tests: `fn` runs inside every hs_pk_index_lookup on `ix`, after the lookup
 * read `key`'s entry (`entry`) and before it walks the chain from there,
 * with no lock held (NULL: none). */
void pk_index_set_lookup_hook(hs_pk_index *ix, void (*fn)(void *ctx, uint64_t key, hs_tid entry),
                              void *ctx);

#endif
