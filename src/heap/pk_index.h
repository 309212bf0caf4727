/*
 * heap/pk_index.h — a primary-key index for dense integer keys: a
 * direct-mapped array of tuple ids in pool pages.
 *
 * Why not a B-tree: the tables this project measures (pgbench's accounts,
 * the vacuum lab's) have keys 1..N with no gaps, and a lookup by key is
 * what `pgbench -S` does. A direct-mapped array finds key k's entry at a
 * computed page and offset — one index page read per lookup, as the
 * B-tree's leaf would be, without inner pages, splits or their logging —
 * so the lab's buffer traffic is a lookup's real traffic (an index page and
 * a heap page) with none of a B-tree's own cost to blur it. Sparse keys
 * would waste pages; they are not this index's job.
 *
 * An entry holds the tid of the key's oldest version still on the heap —
 * the root of its update chain, as a PostgreSQL HOT chain's root line
 * pointer. An update does not touch the index: a lookup starts at the root
 * and follows the versions' next pointers to the one its snapshot sees. So
 * an aborted update costs the index nothing, and the old version stays
 * reachable for older snapshots. Vacuum, when it removes a chain's dead
 * head, moves the entry to the first surviving version (pk_index_move).
 *
 * Tuples of an indexed heap start with their key (u64): a lookup checks
 * it, so an entry left pointing at a slot that vacuum emptied and an insert
 * reused is noticed (and read again) rather than followed.
 *
 * Each page holds (page size - 16) / 8 entries of 8 bytes: u32 block + 1
 * (0: no entry), u16 slot, u16 0. A change is a generic byte-range record
 * (hs_buf_log_change), so recovery replays the index with the heap.
 */
#ifndef HOTSET_HEAP_PK_INDEX_H
#define HOTSET_HEAP_PK_INDEX_H

#include "heap/heap.h"

typedef struct pk_index pk_index;

hs_status pk_index_open(hs_pool *pool, hs_relid rel, pk_index **out);
void pk_index_close(pk_index *ix);

/* Records `key`'s first version. HS_ERR_EXISTS if the key has an entry. */
hs_status pk_index_insert(pk_index *ix, uint64_t key, hs_tid tid);
/* The entry of `key` (*found false if none). */
hs_status pk_index_get(pk_index *ix, uint64_t key, hs_tid *tid, bool *found);
/* Moves `key`'s entry from `from` to `to` (vacuum); HS_ERR_BUSY if it no
 * longer says `from`. `to` {0, 0} removes it. */
hs_status pk_index_move(pk_index *ix, uint64_t key, hs_tid from, hs_tid to);

/* The version of `key` that `snap` sees as transaction `self` sees it:
 * its tid and data (up to cap bytes, the key included), *found false if
 * none is visible. */
hs_status pk_lookup(pk_index *ix, heap *h, uint64_t key, const xact_snapshot *snap, hs_xid self,
                    hs_tid *tid, void *out, uint32_t cap, uint32_t *len, bool *found);

#endif
