/*
 * heap/pk_index.c — the direct-mapped primary-key index (hotset/heap.h).
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
 * head, moves the entry to the first surviving version (hs_pk_index_move).
 *
 * Tuples of an indexed heap start with their key (u64): a lookup checks
 * it, so an entry left pointing at a slot that vacuum emptied and an insert
 * reused is noticed (and read again) rather than followed.
 *
 * Each page holds (page size - 16) / 8 entries of 8 bytes: u32 block + 1
 * (0: no entry), u16 slot, u16 0. A change is a generic byte-range record
 * (hs_buf_log_change), so recovery replays the index with the heap.
 */
#include "core/error.h"
#include "heap/fork_extend.h"
#include "heap/heap.h"
#include "hotset/durability.h"
#include "hotset/page.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define ENTRY 8u

struct hs_pk_index {
  hs_pool *pool;
  fork_pages pages; /* the index relation's main fork */
  uint32_t per_page;
  /* Tests: called by hs_pk_lookup between reading the entry and the walk. */
  void (*lookup_hook)(void *ctx, uint64_t key, hs_tid entry);
  void *lookup_hook_ctx;
};

void pk_index_set_lookup_hook(hs_pk_index *ix, void (*fn)(void *ctx, uint64_t key, hs_tid entry),
                              void *ctx) {
  ix->lookup_hook = fn;
  ix->lookup_hook_ctx = ctx;
}

hs_status hs_pk_index_open(hs_pool *pool, hs_relid rel, hs_pk_index **out) {
  *out = NULL;
  if (!pool || !hs_pool_wal(pool))
    return hs_fail(HS_ERR_INVALID, 0, "hs_pk_index_open: a pool with a log is needed");
  hs_status st = hs_smgr_create_if_missing(hs_pool_smgr(pool), rel, HS_FORK_MAIN, NULL);
  if (st != HS_OK) return st;
  hs_pk_index *ix = calloc(1, sizeof *ix);
  if (!ix) return hs_fail(HS_ERR_NOMEM, 0, "no memory for an index");
  ix->pool = pool;
  fork_pages_init(&ix->pages, pool, rel, HS_FORK_MAIN);
  ix->per_page = (hs_pool_page_size(pool) - HS_PAGE_HEADER_SIZE) / ENTRY;
  *out = ix;
  return HS_OK;
}

void hs_pk_index_close(hs_pk_index *ix) {
  if (!ix) return;
  fork_pages_destroy(&ix->pages);
  free(ix);
}

/* Pins and locks the page holding key's entry; `create` adds pages up to it
 * (zeros: no entries); without it a page past the end means "no entry"
 * (*b = HS_INVALID_BUF). */
static hs_status entry_page(hs_pk_index *ix, uint64_t key, hs_lock_mode mode, bool create,
                            hs_buf *b, uint32_t *at) {
  *b = HS_INVALID_BUF;
  *at = 0;
  uint64_t block = key / ix->per_page;
  if (block >= HS_INVALID_BLOCK)
    return hs_fail(HS_ERR_INVALID, 0, "pk index: key %" PRIu64 " is past the index's reach", key);
  *at = HS_PAGE_HEADER_SIZE + (uint32_t)(key % ix->per_page) * ENTRY;
  return fork_pages_pin(&ix->pages, (hs_blockno)block, create, mode, b);
}

static void entry_get(const unsigned char *page, uint32_t at, hs_tid *tid, bool *found) {
  uint32_t block1;
  memcpy(&block1, page + at, 4);
  *found = block1 != 0;
  tid->block = block1 ? block1 - 1 : 0;
  memcpy(&tid->slot, page + at + 4, 2);
}

static hs_status entry_set(hs_pk_index *ix, hs_buf b, uint32_t at, hs_tid tid, bool present) {
  unsigned char *page = hs_buf_page(ix->pool, b);
  uint32_t block1 = present ? tid.block + 1 : 0;
  uint16_t slot = present ? tid.slot : 0, zero = 0;
  unsigned char before[ENTRY];
  memcpy(before, page + at, ENTRY);
  memcpy(page + at, &block1, 4);
  memcpy(page + at + 4, &slot, 2);
  memcpy(page + at + 6, &zero, 2);
  hs_wal_range r = {at, ENTRY};
  hs_status st = hs_buf_log_change(ix->pool, b, &r, 1, NULL);
  /* Not logged (the log failed or refused): the entry is put back, so a
   * failed call leaves the page as it was and nothing unlogged can reach
   * the disk (the change must precede the insert: its image may carry it). */
  if (st != HS_OK) memcpy(page + at, before, ENTRY);
  return st;
}

static void unlock_release(hs_pk_index *ix, hs_buf b) {
  fork_pages_unpin(&ix->pages, b);
}

hs_status hs_pk_index_insert(hs_pk_index *ix, uint64_t key, hs_tid tid) {
  hs_buf b;
  uint32_t at;
  hs_status st = entry_page(ix, key, HS_LOCK_EXCLUSIVE, true, &b, &at);
  if (st != HS_OK) return st;
  hs_tid old;
  bool found;
  entry_get(hs_buf_page(ix->pool, b), at, &old, &found);
  if (found)
    st = hs_fail(HS_ERR_EXISTS, 0, "pk index: key %" PRIu64 " has an entry (block %u slot %u)", key,
                 old.block, old.slot);
  else
    st = entry_set(ix, b, at, tid, true);
  unlock_release(ix, b);
  return st;
}

hs_status hs_pk_index_get(hs_pk_index *ix, uint64_t key, hs_tid *tid, bool *found) {
  *found = false;
  hs_buf b;
  uint32_t at;
  hs_status st = entry_page(ix, key, HS_LOCK_SHARE, false, &b, &at);
  if (st != HS_OK || b == HS_INVALID_BUF) return st;
  entry_get(hs_buf_page(ix->pool, b), at, tid, found);
  unlock_release(ix, b);
  return HS_OK;
}

hs_status hs_pk_index_move(hs_pk_index *ix, uint64_t key, hs_tid from, hs_tid to) {
  hs_buf b;
  uint32_t at;
  hs_status st = entry_page(ix, key, HS_LOCK_EXCLUSIVE, false, &b, &at);
  if (st != HS_OK) return st;
  if (b == HS_INVALID_BUF)
    return hs_fail(HS_ERR_BUSY, 0, "pk index: key %" PRIu64 " has no entry to move", key);
  hs_tid cur;
  bool found;
  entry_get(hs_buf_page(ix->pool, b), at, &cur, &found);
  if (!found || cur.block != from.block || cur.slot != from.slot)
    st = hs_fail(HS_ERR_BUSY, 0, "pk index: key %" PRIu64 "'s entry is not block %u slot %u", key,
                 from.block, from.slot);
  else
    st = entry_set(ix, b, at, to, to.block != 0 || to.slot != 0);
  unlock_release(ix, b);
  return st;
}

#define PK_LOOKUP_ATTEMPTS 16

hs_status hs_pk_lookup(hs_pk_index *ix, hs_heap *h, uint64_t key, const hs_snapshot *snap,
                       hs_xid self, hs_tid *tid, void *out, uint32_t cap, uint32_t *len,
                       bool *found) {
  *found = false;
  unsigned char *buf = malloc(HEAP_MAX_TUPLE);
  if (!buf) return hs_fail(HS_ERR_NOMEM, 0, "hs_pk_lookup: no memory");
  hs_status st = HS_OK;
  /* Another look at the index after landing on a slot vacuum emptied (or
   * emptied and gave another key): the entry has moved by then — though
   * vacuum may have moved it again by the next look, if the version it
   * moved to died too (each such look means vacuum went a version further
   * down a finite chain). */
  bool stale = false;
  for (int attempt = 0; attempt < PK_LOOKUP_ATTEMPTS && st == HS_OK && !*found; attempt++) {
    hs_tid at;
    bool present;
    st = hs_pk_index_get(ix, key, &at, &present);
    if (st != HS_OK || !present) break;
    hs_tid root = at;
    if (ix->lookup_hook) ix->lookup_hook(ix->lookup_hook_ctx, key, root);
    /* Walk the update chain from its root to the version the snapshot
     * sees; slot 0 (never a slot) ends it. */
    stale = false;
    while (st == HS_OK && !*found && !stale) {
      uint32_t l = 0;
      bool visible = false;
      st = hs_heap_fetch(h, at, snap, self, buf, HEAP_MAX_TUPLE, &l, &visible);
      if (st == HS_ERR_NOENT) {
        stale = true;
        st = HS_OK;
        break;
      }
      if (st != HS_OK) break;
      if (visible) {
        uint64_t k = 0;
        memcpy(&k, buf, l < 8 ? l : 8);
        if (l < 8 || k != key) {
          stale = true;
          break;
        }
        *tid = at;
        *len = l;
        memcpy(out, buf, l < cap ? l : cap);
        *found = true;
        break;
      }
      /* Vacuum may prune the version between the fetch above and this
       * look at its successor: then the index entry has moved. */
      hs_heap_tuple_info info;
      st = hs_heap_tuple_info_get(h, at, &info);
      if (st == HS_ERR_NOENT) {
        stale = true;
        st = HS_OK;
        break;
      }
      if (st != HS_OK || info.next.slot == 0) break; /* no newer version */
      at = info.next;
    }
    /* The walk found nothing: but it may have started from (or gone
     * through) a version vacuum removed meanwhile, its slot since given
     * to another tuple whose chain it then followed. Vacuum moves the
     * entry before it removes a root, so an entry that changed says so:
     * look again. */
    if (st == HS_OK && !*found && !stale) {
      hs_tid now;
      bool still;
      st = hs_pk_index_get(ix, key, &now, &still);
      if (st == HS_OK && still && (now.block != root.block || now.slot != root.slot)) stale = true;
    }
    if (!stale) break;
  }
  free(buf);
  if (st == HS_OK && stale)
    return hs_fail(HS_ERR_BUSY, 0,
                   "hs_pk_lookup: key %" PRIu64 "'s entry moved %d times while it was looked up",
                   key, PK_LOOKUP_ATTEMPTS);
  return st;
}
