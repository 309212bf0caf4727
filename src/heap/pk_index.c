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
#include "core/seams.h"
#include "heap/fork_extend.h"
#include "heap/heap.h"
#include "hotset/durability.h"
#include "hotset/page.h"
#include "storage/smgr_catalog.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ENTRY 8u

struct hs_pk_index {
  hs_pool *pool;
  fork_pages pages; /* the index relation's main fork */
  uint32_t per_page;
};

hs_status hs_pk_index_open(hs_pool *pool, hs_relid rel, hs_pk_index **out) {
  if (!out) return hs_fail(HS_ERR_MISUSE, 0, "hs_pk_index_open: out is NULL");
  *out = NULL;
  if (!pool) return hs_fail(HS_ERR_MISUSE, 0, "hs_pk_index_open: the pool is NULL");
  if (!hs_pool_wal(pool))
    return hs_fail(HS_ERR_INVALID, 0,
                   "hs_pk_index_open: the pool needs a log (hs_pool_options.wal)");
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
  if (!ix) return hs_fail(HS_ERR_MISUSE, 0, "hs_pk_index_insert: the index is NULL");
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
  if (!found) return hs_fail(HS_ERR_MISUSE, 0, "hs_pk_index_get: found is NULL");
  *found = false;
  if (!ix) return hs_fail(HS_ERR_MISUSE, 0, "hs_pk_index_get: the index is NULL");
  if (!tid) return hs_fail(HS_ERR_MISUSE, 0, "hs_pk_index_get: tid is NULL");
  hs_buf b;
  uint32_t at;
  hs_status st = entry_page(ix, key, HS_LOCK_SHARE, false, &b, &at);
  if (st != HS_OK || b == HS_INVALID_BUF) return st;
  entry_get(hs_buf_page(ix->pool, b), at, tid, found);
  unlock_release(ix, b);
  return HS_OK;
}

hs_status hs_pk_index_move(hs_pk_index *ix, uint64_t key, hs_tid from, hs_tid to) {
  if (!ix) return hs_fail(HS_ERR_MISUSE, 0, "hs_pk_index_move: the index is NULL");
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

/* The reindex command for this index and heap, ready to paste. */
static void reindex_hint(hs_pk_index *ix, hs_heap *h, char *out, size_t len) {
  const char *dir = hs_smgr_dir(hs_pool_smgr(ix->pool));
  const char *waldir = hs_wal_dir(hs_pool_wal(ix->pool));
  char own[4200], wal_arg[4300] = "";
  snprintf(own, sizeof own, "%s/wal", dir);
  if (strcmp(own, waldir) != 0) snprintf(wal_arg, sizeof wal_arg, " --wal %s", waldir);
  snprintf(out, len, "`hotset reindex --dir %s%s --heap %u --index %u --force`", dir, wal_arg,
           heap_rel(h), ix->pages.rel);
}

/* An index page that fails its checksum, another directory's, or a file
 * older than its last checkpoint: the index is derived from the heap, so
 * rebuilding it loses nothing. */
static hs_status damaged_index(hs_pk_index *ix, hs_heap *h) {
  char why[1024], hint[8800];
  snprintf(why, sizeof why, "%s", hs_last_error());
  reindex_hint(ix, h, hint, sizeof hint);
  /* The rebuild first: it loses nothing, where the way out the pool's
   * message offers (giving up the file) would leave an index without its
   * entries. */
  return hs_fail(
      HS_ERR_CORRUPT, 0,
      "hs_pk_index_lookup: the index in relation %u is damaged; it holds nothing the heap "
      "does not, so rebuild it from the heap with %s (reading it: %s)",
      ix->pages.rel, hint, why);
}

/* The refusal when key's entry points where its heap has no version of it,
 * with the command that rebuilds the index from the heap. */
static hs_status disagree(hs_pk_index *ix, hs_heap *h, uint64_t key, hs_tid root, hs_tid at,
                          const char *missing) {
  char hint[8800], where[160] = "";
  reindex_hint(ix, h, hint, sizeof hint);
  if (at.block != root.block || at.slot != root.slot)
    snprintf(where, sizeof where, ", whose update chain leads to block %u slot %u", at.block,
             at.slot);
  return hs_fail(HS_ERR_CORRUPT, 0,
                 "hs_pk_index_lookup: the index in relation %u says key %" PRIu64
                 " is at block %u slot %u of heap %u%s, which %s: the index or the heap in %s is "
                 "damaged (or the heap's rows were given up); rebuild the index from the heap "
                 "(a key whose newest version is gone loses its entry) with %s",
                 ix->pages.rel, key, root.block, root.slot, heap_rel(h), where, missing,
                 hs_smgr_dir(hs_pool_smgr(ix->pool)), hint);
}

hs_status hs_pk_index_lookup(hs_pk_index *ix, hs_heap *h, uint64_t key, const hs_snapshot *snap,
                             hs_xid self, hs_tid *tid, void *out, uint32_t cap, uint32_t *len,
                             bool *found) {
  static const char call[] = "hs_pk_index_lookup";
  if (!found) return hs_fail(HS_ERR_MISUSE, 0, "%s: found is NULL", call);
  *found = false;
  if (!ix) return hs_fail(HS_ERR_MISUSE, 0, "%s: the index is NULL", call);
  if (!h) return hs_fail(HS_ERR_MISUSE, 0, "%s: the heap is NULL", call);
  if (!snap) return hs_fail(HS_ERR_MISUSE, 0, "%s: the snapshot is NULL", call);
  if (!tid) return hs_fail(HS_ERR_MISUSE, 0, "%s: tid is NULL", call);
  if (!len) return hs_fail(HS_ERR_MISUSE, 0, "%s: len is NULL", call);
  if (!out && cap) return hs_fail(HS_ERR_MISUSE, 0, "%s: out is NULL (cap %u)", call, cap);
  unsigned char *buf = malloc(HEAP_MAX_TUPLE);
  if (!buf) return hs_fail(HS_ERR_NOMEM, 0, "hs_pk_index_lookup: no memory");
  hs_status st = HS_OK;
  /* Another look at the index after landing on a slot vacuum emptied (or
   * emptied and gave another key): the entry has moved by then — though
   * vacuum may have moved it again by the next look, if the version it
   * moved to died too (each such look means vacuum went a version further
   * down a finite chain). */
  bool stale = false, stale_at_same = false;
  hs_tid stale_root = {0, 0};
  for (int attempt = 0; attempt < PK_LOOKUP_ATTEMPTS && st == HS_OK && !*found; attempt++) {
    hs_tid at;
    bool present;
    st = hs_pk_index_get(ix, key, &at, &present);
    if (st == HS_ERR_CORRUPT) { /* the index's page failed its checks */
      free(buf);
      return damaged_index(ix, h);
    }
    if (st != HS_OK || !present) break;
    hs_tid root = at;
    if (seams.pk_lookup) seams.pk_lookup(seams.pk_lookup_ctx, key, &root);
    /* Walk the update chain from its root to the version the snapshot
     * sees; slot 0 (never a slot) ends it. */
    stale = false;
    const char *missing = "holds no version";
    while (st == HS_OK && !*found && !stale) {
      uint32_t l = 0;
      bool visible = false;
      st = hs_heap_fetch(h, at, snap, self, buf, HEAP_MAX_TUPLE, &l, &visible);
      if (st == HS_ERR_NOENT || st == HS_ERR_EOF) {
        stale = true;
        missing = st == HS_ERR_EOF ? "is past the heap's end" : "holds no version";
        st = HS_OK;
        break;
      }
      if (st != HS_OK) break;
      if (visible) {
        uint64_t k = 0;
        memcpy(&k, buf, l < 8 ? l : 8);
        if (l < 8 || k != key) {
          stale = true;
          missing = "holds another key's version";
          break;
        }
        *tid = at;
        *len = l;
        if (cap) memcpy(out, buf, l < cap ? l : cap); /* out may be NULL then */
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
      /* The newer version is its deleter's: one the snapshot does not see
       * (running, aborted — vacuum may have freed its version already — or
       * committed after it) made no version the snapshot sees, nor did
       * anyone after it. The walk ends here. */
      bool follow = self != HS_XACT_INVALID && info.xmax == self;
      if (!follow && (st = hs_xact_visible(heap_xact(h), snap, info.xmax, &follow)) != HS_OK) break;
      if (!follow) break;
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
    /* Landed on nothing, and the entry still names the same root: vacuum
     * moves an entry before it frees the root's slot, and keeps a chain's
     * later versions while older ones exist (the walk stops at a deleter
     * that aborted, whose version vacuum frees at once), so this is no
     * race but an index and a heap that disagree — the index damaged, or
     * the heap's rows lost (a page zeroed, a file given up). Retrying
     * cannot help; rebuilding the index from the heap does. */
    if (st == HS_OK && stale) {
      hs_tid now;
      bool still;
      st = hs_pk_index_get(ix, key, &now, &still);
      bool same = st == HS_OK && still && now.block == root.block && now.slot == root.slot;
      /* Twice in a row from the same entry: once could be vacuum freeing
       * the root and an insert of the same key taking its slot, the entry
       * set back to it, between the two reads. */
      if (same && stale_at_same && stale_root.block == root.block && stale_root.slot == root.slot) {
        free(buf);
        return disagree(ix, h, key, root, at, missing);
      }
      stale_at_same = same;
      stale_root = root;
    } else {
      stale_at_same = false;
    }
    if (!stale) break;
  }
  free(buf);
  if (st == HS_OK && stale)
    return hs_fail(HS_ERR_BUSY, 0,
                   "hs_pk_index_lookup: key %" PRIu64
                   "'s entry moved %d times while it was looked up",
                   key, PK_LOOKUP_ATTEMPTS);
  return st;
}

/* ---- rebuilding from the heap ---- */

typedef struct version {
  uint64_t key;
  hs_tid tid, next;
  hs_xid xmin, xmax;
  bool pointed; /* another version of its key names it as newer */
} version;

typedef struct versions {
  version *v;
  size_t n, cap;
} versions;

static hs_status collect(void *ctx, hs_tid tid, const hs_heap_tuple_info *info, const void *data,
                         uint32_t len) {
  versions *vs = ctx;
  if (len < 8)
    return hs_fail(HS_ERR_CORRUPT, 0,
                   "block %u slot %u holds %u bytes: a version of an indexed heap starts with "
                   "its 8-byte key",
                   tid.block, tid.slot, len);
  if (vs->n == vs->cap) {
    size_t cap = vs->cap ? 2 * vs->cap : 1024;
    version *v = realloc(vs->v, cap * sizeof *v);
    if (!v) return hs_fail(HS_ERR_NOMEM, 0, "no memory for %zu versions", cap);
    vs->v = v;
    vs->cap = cap;
  }
  version *v = &vs->v[vs->n++];
  memcpy(&v->key, data, 8);
  v->tid = tid;
  v->next = info->next;
  v->xmin = info->xmin;
  v->xmax = info->xmax;
  v->pointed = false;
  return HS_OK;
}

static int tid_cmp(hs_tid a, hs_tid b) {
  return a.block != b.block ? (a.block < b.block ? -1 : 1)
         : a.slot != b.slot ? (a.slot < b.slot ? -1 : 1)
                            : 0;
}

static int version_cmp(const void *pa, const void *pb) {
  const version *a = pa, *b = pb;
  if (a->key != b->key) return a->key < b->key ? -1 : 1;
  return tid_cmp(a->tid, b->tid);
}

/* The version of `key` at `tid` in the sorted array, or NULL. */
static version *find_version(versions *vs, uint64_t key, hs_tid tid) {
  size_t lo = 0, hi = vs->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    version *m = &vs->v[mid];
    int c = m->key != key ? (m->key < key ? -1 : 1) : tid_cmp(m->tid, tid);
    if (c == 0) return m;
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return NULL;
}

/* Writes index page `block` whole: the entries of `roots` that fall on it
 * (sorted by key, *next the first not yet written), every other entry
 * cleared. The page is taken without reading it, so a damaged one is
 * replaced; the change is logged as one range (a full image if it is the
 * page's first change since the redo point). */
static hs_status write_page(hs_pk_index *ix, hs_blockno block, const version *const *roots,
                            size_t nroots, size_t *next) {
  bool have;
  hs_status st = fork_pages_have(&ix->pages, block, true, &have);
  if (st != HS_OK) return st;
  hs_buf b;
  st = hs_pool_read(ix->pool, ix->pages.rel, HS_FORK_MAIN, block, HS_READ_ZERO_LOCKED, NULL, &b,
                    NULL);
  if (st != HS_OK) return st;
  uint32_t page_size = hs_pool_page_size(ix->pool);
  unsigned char *page = hs_buf_page(ix->pool, b);
  memset(page + HS_PAGE_HEADER_SIZE, 0, page_size - HS_PAGE_HEADER_SIZE);
  uint64_t first = (uint64_t)block * ix->per_page, past = first + ix->per_page;
  for (; *next < nroots && roots[*next]->key < past; (*next)++) {
    const version *r = roots[*next];
    uint32_t at = HS_PAGE_HEADER_SIZE + (uint32_t)(r->key - first) * ENTRY;
    uint32_t block1 = r->tid.block + 1;
    memcpy(page + at, &block1, 4);
    memcpy(page + at + 4, &r->tid.slot, 2);
  }
  hs_wal_range range = {HS_PAGE_HEADER_SIZE, page_size - HS_PAGE_HEADER_SIZE};
  st = hs_buf_log_change(ix->pool, b, &range, 1, NULL);
  hs_buf_unlock(ix->pool, b);
  hs_buf_release(ix->pool, b);
  return st;
}

/* Whether the commit log says `xid` aborted. An id it never gave (its
 * file was given up with what it recorded) is not known to have aborted:
 * the rebuild goes on, taking it as committed. */
static hs_status known_aborted(hs_heap *h, hs_xid xid, bool *aborted) {
  *aborted = false;
  if (xid == HS_XACT_INVALID || xid == HS_XACT_FROZEN) return HS_OK;
  hs_xact_status s;
  hs_status st = hs_xact_status_of(heap_xact(h), xid, &s);
  if (st == HS_ERR_INVALID) return HS_OK;
  *aborted = st == HS_OK && s == HS_XACT_ABORTED;
  return st;
}

hs_status hs_pk_index_rebuild(hs_pk_index *ix, hs_heap *h, uint64_t *keys, uint64_t *lost) {
  uint64_t lost_here = 0, *broken = lost ? lost : &lost_here;
  *broken = 0;
  if (keys) *keys = 0;
  if (!ix) return hs_fail(HS_ERR_MISUSE, 0, "hs_pk_index_rebuild: the index is NULL");
  if (!h) return hs_fail(HS_ERR_MISUSE, 0, "hs_pk_index_rebuild: the heap is NULL");
  if (heap_pool(h) != ix->pool)
    return hs_fail(HS_ERR_INVALID, 0,
                   "hs_pk_index_rebuild: the heap and the index are in two pools");
  versions vs = {0};
  hs_status st = heap_scan_versions(h, collect, &vs);
  if (st != HS_OK) {
    char why[1024];
    snprintf(why, sizeof why, "%s", hs_last_error());
    free(vs.v);
    return hs_fail(st, 0, "hs_pk_index_rebuild: reading heap %u: %s", heap_rel(h), why);
  }
  qsort(vs.v, vs.n, sizeof *vs.v, version_cmp);
  for (size_t i = 0; i < vs.n; i++) {
    if (vs.v[i].next.slot == 0) continue;
    version *newer = find_version(&vs, vs.v[i].key, vs.v[i].next);
    if (newer) newer->pointed = true;
  }
  /* One root per key: of several, one whose creator did not abort,
   * newest first (a version inserted but never indexed — its transaction
   * aborted when the index refused the key — must not win). */
  const version **roots = malloc((vs.n ? vs.n : 1) * sizeof *roots);
  if (!roots) {
    free(vs.v);
    return hs_fail(HS_ERR_NOMEM, 0, "hs_pk_index_rebuild: no memory");
  }
  size_t nroots = 0;
  for (size_t i = 0; st == HS_OK && i < vs.n;) {
    size_t j = i;
    const version *best = NULL;
    bool best_aborted = true;
    for (; j < vs.n && vs.v[j].key == vs.v[i].key; j++) {
      const version *v = &vs.v[j];
      if (v->pointed) continue;
      bool aborted;
      if ((st = known_aborted(h, v->xmin, &aborted)) != HS_OK) break;
      if (!best || (best_aborted && !aborted) || (best_aborted == aborted && v->xmin > best->xmin))
        best = v, best_aborted = aborted;
    }
    i = j;
    if (!best || st != HS_OK) continue;
    /* The chain from the root: a version whose deleter did not abort but
     * whose newer version is gone (its page lost) leaves the key without
     * its current version — lost, not to be answered by an older one. */
    const version *v = best;
    size_t steps = 0;
    while (st == HS_OK && v->next.slot != 0 && steps++ < vs.n) {
      bool aborted;
      if ((st = known_aborted(h, v->xmax, &aborted)) != HS_OK || aborted) break;
      const version *newer = find_version(&vs, v->key, v->next);
      if (!newer) {
        best = NULL;
        (*broken)++;
        break;
      }
      v = newer;
    }
    if (best) roots[nroots++] = best;
  }
  hs_blockno have = 0;
  if (st == HS_OK) st = fork_pages_count(&ix->pages, &have);
  uint64_t need = nroots ? roots[nroots - 1]->key / ix->per_page + 1 : 0;
  if (st == HS_OK && need > HS_INVALID_BLOCK)
    st =
        hs_fail(HS_ERR_INVALID, 0, "hs_pk_index_rebuild: key %" PRIu64 " is past the index's reach",
                roots[nroots - 1]->key);
  uint64_t blocks = need > have ? need : have;
  size_t next = 0;
  for (uint64_t block = 0; st == HS_OK && block < blocks; block++)
    st = write_page(ix, (hs_blockno)block, roots, nroots, &next);
  /* Every page rewritten from the heap: an index found to be an older or
   * zeroed copy of itself is proven again. */
  if (st == HS_OK)
    st = smgr_catalog_clear_stale(hs_pool_smgr(ix->pool), ix->pages.rel, HS_FORK_MAIN);
  if (st == HS_OK && keys) *keys = nroots;
  free(roots);
  free(vs.v);
  return st;
}
