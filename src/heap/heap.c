/*
 * heap/heap.c — versioned tuples in slotted pages, logged and replayed
 * (heap/heap.h).
 *
 * Where a new tuple goes: the page last inserted into if it has room, else
 * a new page at the end (the free-space map that lets inserts reuse what
 * vacuum frees comes with vacuum). Extending is serialized by `extend_mu`
 * so two inserters do not each add a page for one tuple.
 *
 * Every change follows the pool's order: pin, exclusive content lock,
 * change the page, log the record (hs_buf_log_record: the page marked dirty
 * before the insert, its image carried on its first change since the
 * checkpoint), unlock. An update that moves to another page locks both,
 * the lower block first, so two updates crossing the same pages cannot
 * deadlock.
 */
#include "heap/heap.h"

#include "core/error.h"
#include "heap/fsm.h"
#include "heap/heap_page.h"
#include "heap/vm.h"
#include "hotset/durability.h"
#include "wal/wal_durable.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { REC_INSERT = 1, REC_DELETE = 2, REC_UPDATE = 3, REC_PRUNE = 4, REC_VISIBLE = 5 };

struct hs_heap {
  hs_pool *pool;
  hs_xact_mgr *xact;
  hs_relid rel;
  uint32_t page_size;
  pthread_mutex_t extend_mu;
  _Atomic hs_blockno target; /* where the last insert went */
  fsm *fsm;                  /* the free-space map: pages vacuum freed */
  vmap *vm;                  /* the visibility map: pages vacuum may skip */
};

/* ---- tuple header ---- */

/* Header layout: u64 xmin, u64 xmax, u32 next block, u16 next slot, u16 0. */
static void tuple_set_xmin(unsigned char *t, hs_xid xmin) {
  memcpy(t, &xmin, 8);
}
static void tuple_set_xmax(unsigned char *t, hs_xid xmax, hs_tid next) {
  memcpy(t + 8, &xmax, 8);
  memcpy(t + 16, &next.block, 4);
  memcpy(t + 20, &next.slot, 2);
}
static void tuple_header(unsigned char *t, hs_xid xmin, hs_xid xmax, hs_tid next) {
  tuple_set_xmin(t, xmin);
  tuple_set_xmax(t, xmax, next);
  memset(t + 22, 0, 2);
}
static hs_tid tuple_next(const unsigned char *t) {
  hs_tid next;
  memcpy(&next.block, t + 16, 4);
  memcpy(&next.slot, t + 20, 2);
  return next;
}
static hs_xid tuple_xmin(const unsigned char *t) {
  hs_xid v;
  memcpy(&v, t, 8);
  return v;
}
static hs_xid tuple_xmax(const unsigned char *t) {
  hs_xid v;
  memcpy(&v, t + 8, 8);
  return v;
}

/* ---- redo ---- */

static hs_status redo_corrupt(const hs_wal_read_record *rec, const char *why) {
  return hs_fail(HS_ERR_CORRUPT, 0, "heap record at %" PRIX64 " (type %u): %s", rec->lsn, rec->type,
                 why);
}

/* Puts the record's tuple at `slot` of `page` (initialized first if new). */
/* A change to a page makes it not all-visible (the map's bit was cleared
 * by a record before this one). */
static void redo_not_visible(void *page) {
  heap_page_set_flags(page, (uint16_t)(heap_page_flags(page) & ~HEAP_PAGE_ALL_VISIBLE));
}

static hs_status redo_put(void *page, uint32_t page_size, uint16_t slot, const void *tuple,
                          uint32_t len) {
  if (heap_page_is_new(page)) heap_page_init(page, page_size);
  redo_not_visible(page);
  return heap_page_put(page, page_size, slot, tuple, len);
}

static hs_status redo_xmax(void *page, uint32_t page_size, uint16_t slot, hs_xid xmax,
                           hs_tid next) {
  void *t;
  uint32_t len;
  redo_not_visible(page);
  hs_status st = heap_page_get(page, page_size, slot, &t, &len);
  if (st == HS_OK && len < HEAP_TUPLE_HEADER)
    st = hs_fail(HS_ERR_CORRUPT, 0, "heap: slot %u holds %u bytes, less than a header", slot, len);
  if (st == HS_OK) tuple_set_xmax(t, xmax, next);
  return st;
}

/* Frees the removed slots, compacts, and freezes the frozen ones: what a
 * prune did, and what its redo does again. */
/* The i-th slot of a record's slot list (u16 each, unaligned). */
static uint16_t listed_slot(const void *list, uint16_t i) {
  uint16_t slot;
  memcpy(&slot, (const unsigned char *)list + 2 * i, 2);
  return slot;
}

static hs_status apply_prune(void *page, uint32_t page_size, const void *removed_list,
                             uint16_t nremoved, const void *frozen_list, uint16_t nfrozen,
                             const void *cleared_list, uint16_t ncleared) {
  hs_status st = HS_OK;
  for (uint16_t i = 0; i < nremoved && st == HS_OK; i++) {
    uint16_t slot = listed_slot(removed_list, i);
    if (heap_page_state(page, slot) == HEAP_LP_NORMAL)
      st = heap_page_set_dead(page, page_size, slot);
    if (st == HS_OK) st = heap_page_set_unused(page, page_size, slot);
  }
  if (st == HS_OK && nremoved) heap_page_compact(page, page_size);
  void *t;
  uint32_t len;
  for (uint16_t i = 0; i < nfrozen && st == HS_OK; i++) {
    st = heap_page_get(page, page_size, listed_slot(frozen_list, i), &t, &len);
    if (st == HS_OK) tuple_set_xmin(t, HS_XACT_FROZEN);
  }
  /* Deleted by a transaction that aborted: not deleted (PostgreSQL clears
   * such an xmax when it freezes; here every prune does, so the page can
   * become all-visible). */
  for (uint16_t i = 0; i < ncleared && st == HS_OK; i++) {
    st = heap_page_get(page, page_size, listed_slot(cleared_list, i), &t, &len);
    if (st == HS_OK) tuple_set_xmax(t, HS_XACT_INVALID, (hs_tid){0, 0});
  }
  return st;
}

static hs_status heap_redo(void *ctx, const hs_wal_read_record *rec, void *const *pages,
                           uint32_t page_size) {
  (void)ctx;
  const unsigned char *d = rec->data;
  uint16_t slot, new_slot;
  hs_xid xmax;
  switch (rec->type) {
  case REC_INSERT:
    if (rec->npages != 1 || rec->len < 2 + HEAP_TUPLE_HEADER)
      return redo_corrupt(rec, "an insert must name one page and carry a tuple");
    memcpy(&slot, d, 2);
    return pages[0] ? redo_put(pages[0], page_size, slot, d + 2, rec->len - 2) : HS_OK;
  case REC_DELETE:
    if (rec->npages != 1 || rec->len != 10)
      return redo_corrupt(rec, "a delete must name one page and carry a slot and an xmax");
    memcpy(&slot, d, 2);
    memcpy(&xmax, d + 2, 8);
    return pages[0] ? redo_xmax(pages[0], page_size, slot, xmax, (hs_tid){0, 0}) : HS_OK;
  case REC_UPDATE: {
    if (rec->npages < 1 || rec->npages > 2 || rec->len < 12 + HEAP_TUPLE_HEADER)
      return redo_corrupt(rec, "an update must name one or two pages and carry a tuple");
    memcpy(&slot, d, 2);
    memcpy(&xmax, d + 2, 8);
    memcpy(&new_slot, d + 10, 2);
    uint16_t new_page = rec->npages == 2 ? 1 : 0;
    hs_tid next = {rec->pages[new_page].block, new_slot};
    hs_status st = HS_OK;
    /* The new version first: on one page, the old tuple's bytes stay where
     * they are, so the order does not matter; on two, each is its own. */
    if (pages[new_page]) st = redo_put(pages[new_page], page_size, new_slot, d + 12, rec->len - 12);
    if (st == HS_OK && pages[0]) st = redo_xmax(pages[0], page_size, slot, xmax, next);
    return st;
  }
  case REC_PRUNE: {
    uint16_t nremoved, nfrozen, ncleared;
    if (rec->npages != 1 || rec->len < 6) return redo_corrupt(rec, "a prune must name one page");
    memcpy(&nremoved, d, 2);
    memcpy(&nfrozen, d + 2, 2);
    memcpy(&ncleared, d + 4, 2);
    if (rec->len != 6u + 2u * (nremoved + nfrozen + ncleared))
      return redo_corrupt(rec, "a prune's slot lists do not match its length");
    const unsigned char *lists = d + 6;
    return pages[0] ? apply_prune(pages[0], page_size, lists, nremoved, lists + 2 * nremoved,
                                  nfrozen, lists + 2 * (nremoved + nfrozen), ncleared)
                    : HS_OK;
  }
  case REC_VISIBLE:
    if (rec->npages != 1 || rec->len != 0)
      return redo_corrupt(rec, "an all-visible mark names one page and carries nothing");
    if (pages[0]) heap_page_set_flags(pages[0], heap_page_flags(pages[0]) | HEAP_PAGE_ALL_VISIBLE);
    return HS_OK;
  default:
    return redo_corrupt(rec, "an unknown type");
  }
}

hs_status hs_heap_register_redo(hs_wal *wal) {
  if (!wal) return hs_fail(HS_ERR_MISUSE, 0, "hs_heap_register_redo: the log is NULL");
  return wal_register_builtin_rmgr(wal, HS_WAL_RMGR_HEAP, "heap", heap_redo, NULL);
}

/* ---- open ---- */

/* What precedes the tuple in an INSERT and an UPDATE record (heap/heap.h). */
enum { INSERT_HEAD = 2, UPDATE_HEAD = 12, DELETE_LEN = 10, PRUNE_HEAD = 6 };

/* The most data one tuple can carry on pages of `page_size`: an empty page
 * less one line pointer, or the tuple format's limit. */
static uint32_t page_max_data(uint32_t page_size) {
  uint32_t room = page_size - HEAP_PAGE_FIRST_LP - HEAP_LINE_POINTER - HEAP_TUPLE_HEADER;
  return room < HS_HEAP_MAX_DATA ? room : HS_HEAP_MAX_DATA;
}

/* The largest record the heap writes, counted as the log counts it (the
 * payload and every page's full image): an update that moves the largest
 * tuple to another page, both pages carrying their images. A prune's slot
 * lists are smaller (at most 4 bytes per tuple on one page), a delete's and
 * an all-visible mark's payloads are a few bytes on one page. */
static uint64_t largest_record(uint32_t page_size) {
  return 2ull * page_size + UPDATE_HEAD + HEAP_TUPLE_HEADER + page_max_data(page_size);
}

hs_status hs_heap_open(hs_pool *pool, hs_xact_mgr *xact, hs_relid rel, hs_heap **out) {
  if (!out) return hs_fail(HS_ERR_MISUSE, 0, "hs_heap_open: out is NULL");
  *out = NULL;
  if (!pool) return hs_fail(HS_ERR_MISUSE, 0, "hs_heap_open: the pool is NULL");
  if (!xact) return hs_fail(HS_ERR_MISUSE, 0, "hs_heap_open: the transaction manager is NULL");
  if (!hs_pool_wal(pool))
    return hs_fail(HS_ERR_INVALID, 0, "hs_heap_open: the pool needs a log (hs_pool_options.wal)");
  /* Refused here rather than at the first update that moves a big tuple:
   * whether a record is too large must not depend on the data or on when a
   * checkpoint ran (hotset/heap.h, "Sizes"). */
  uint32_t page_size = hs_pool_page_size(pool);
  uint32_t max_record = hs_wal_max_record(hs_pool_wal(pool));
  if (largest_record(page_size) > max_record)
    return hs_fail(HS_ERR_INVALID, 0,
                   "hs_heap_open: relation %u: with %u-byte pages the heap's largest record (an "
                   "update moving a %u-byte tuple to another page, both pages' full images) "
                   "needs %" PRIu64 " bytes, the log's largest is %u; give the log a larger "
                   "buffer_bytes (and segment_bytes), or the pool smaller pages",
                   rel, page_size, page_max_data(page_size), largest_record(page_size), max_record);
  hs_status st = hs_smgr_create_if_missing(hs_pool_smgr(pool), rel, HS_FORK_MAIN, NULL);
  hs_blockno n = 0;
  if (st == HS_OK) st = hs_smgr_nblocks(hs_pool_smgr(pool), rel, HS_FORK_MAIN, &n);
  if (st != HS_OK) return st;
  hs_heap *h = calloc(1, sizeof *h);
  if (!h) return hs_fail(HS_ERR_NOMEM, 0, "no memory for a heap");
  h->pool = pool;
  h->xact = xact;
  h->rel = rel;
  h->page_size = page_size;
  pthread_mutex_init(&h->extend_mu, NULL);
  atomic_init(&h->target, n ? n - 1 : HS_INVALID_BLOCK);
  st = fsm_open(pool, rel, &h->fsm);
  if (st == HS_OK) st = vm_open(pool, rel, &h->vm);
  if (st != HS_OK) {
    hs_heap_close(h);
    return st;
  }
  *out = h;
  return HS_OK;
}

uint32_t hs_heap_max_data(const hs_heap *h) {
  return h ? page_max_data(h->page_size) : 0;
}

hs_pool *heap_pool(const hs_heap *h) {
  return h->pool;
}
hs_relid heap_rel(const hs_heap *h) {
  return h->rel;
}
hs_xact_mgr *heap_xact(const hs_heap *h) {
  return h->xact;
}

fsm *heap_fsm(const hs_heap *h) {
  return h->fsm;
}

vmap *heap_vm(const hs_heap *h) {
  return h->vm;
}

void hs_heap_close(hs_heap *h) {
  if (!h) return;
  fsm_close(h->fsm);
  vm_close(h->vm);
  pthread_mutex_destroy(&h->extend_mu);
  free(h);
}

/* ---- changes ----
 *
 * A call that fails changes nothing (hotset/heap.h). Every step that can
 * fail — the size checks, memory, reading and locking pages, extending the
 * relation, the visibility map — comes before the first byte of a heap page
 * changes; the one that cannot come before is the log's insert, since the
 * page image it may carry must hold the change. Each call therefore keeps
 * a copy of the pages it is about to change and puts them back if the
 * insert fails. Two things may remain, both states the heap reaches anyway
 * and neither visible to a reader: an empty page at the relation's end (an
 * extension cannot be taken back; the next insert uses it) and a cleared
 * visibility-map bit (the map's bit is logged before the change's own
 * record, so a crash between the two cannot leave a set bit over a changed
 * page; a clear bit only makes vacuum read the page). */

/* Whether a record of `payload` bytes on `npages` pages fits the log, every
 * page counted with its image: whether an image is attached depends on
 * when the last checkpoint ran, and a call must not fail because one just
 * did. Checked before anything changes. */
static hs_status record_fits(const hs_heap *h, const char *call, uint32_t data_len, uint16_t npages,
                             uint32_t payload) {
  uint64_t need = payload + (uint64_t)npages * h->page_size;
  uint32_t max = hs_wal_max_record(hs_pool_wal(h->pool));
  if (need <= max) return HS_OK;
  return hs_fail(HS_ERR_INVALID, 0,
                 "%s: relation %u: %u bytes of data make a record of %" PRIu64
                 " bytes (%u of payload and %u full page image(s) of %u bytes), more than the "
                 "log's largest (%u bytes); nothing was changed",
                 call, h->rel, data_len, need, payload, npages, h->page_size, max);
}

/* Copies of the pages a call changes, taken before the change and put back
 * if its record cannot be logged. */
typedef struct page_undo {
  unsigned n;
  void *page[2];
  unsigned char *copy[2];
} page_undo;

static hs_status undo_reserve(const hs_heap *h, const char *call, unsigned n, page_undo *u) {
  *u = (page_undo){0};
  for (unsigned i = 0; i < n; i++)
    if (!(u->copy[i] = malloc(h->page_size))) {
      for (unsigned j = 0; j < i; j++) free(u->copy[j]);
      *u = (page_undo){0};
      return hs_fail(HS_ERR_NOMEM, 0, "%s: no memory for a copy of a %u-byte page", call,
                     h->page_size);
    }
  return HS_OK;
}

static void undo_save(const hs_heap *h, page_undo *u, void *page) {
  for (unsigned i = 0; i < u->n; i++)
    if (u->page[i] == page) return; /* one page, changed twice */
  u->page[u->n] = page;
  memcpy(u->copy[u->n++], page, h->page_size);
}

static void undo_restore(const hs_heap *h, const page_undo *u) {
  for (unsigned i = 0; i < u->n; i++) memcpy(u->page[i], u->copy[i], h->page_size);
}

static void undo_free(page_undo *u) {
  for (unsigned i = 0; i < 2; i++) free(u->copy[i]);
}

static hs_status log_record(hs_heap *h, uint8_t type, const hs_buf *bufs, uint16_t npages,
                            const void *data, uint32_t len) {
  hs_wal_record rec = {
      .rmgr = HS_WAL_RMGR_HEAP, .type = type, .npages = npages, .data = data, .len = len};
  return hs_buf_log_record(h->pool, &rec, bufs, NULL);
}

static bool page_fits(const hs_heap *h, const void *page, uint32_t len);

/* A new page at the end with room for `len` bytes, pinned and exclusively
 * locked; the next inserts' target. Left all zeros (new): the caller
 * initializes it with its change, so a call that fails leaves it as the
 * extension made it. The page is checked, not assumed empty: a vacuum that
 * reads the block between the file's growth and the extender's buffer
 * offers it as free space, and other inserts may fill it before the
 * extender gets its lock — then it takes the next new page. */
static hs_status new_page(hs_heap *h, uint32_t len, hs_buf *out) {
  for (int tries = 0; tries < 64; tries++) {
    pthread_mutex_lock(&h->extend_mu);
    hs_blockno block;
    hs_status st = hs_pool_extend(h->pool, h->rel, HS_FORK_MAIN, NULL, true, out, &block);
    pthread_mutex_unlock(&h->extend_mu);
    if (st != HS_OK) return st;
    const void *page = hs_buf_page(h->pool, *out);
    if (page_fits(h, page, len)) {
      atomic_store(&h->target, block);
      return HS_OK;
    }
    uint32_t room = heap_page_free(page);
    hs_buf_unlock(h->pool, *out);
    hs_buf_release(h->pool, *out);
    if ((st = fsm_set(h->fsm, block, room)) != HS_OK) return st;
  }
  return hs_fail(HS_ERR_BUSY, 0,
                 "heap: relation %u: 64 new pages in a row were filled by other threads before "
                 "this one could use them; nothing was changed",
                 h->rel);
}

/* Whether a tuple of `len` fits the page, a new (all-zero) one read as the
 * empty page it will become, without initializing it yet. */
static bool page_fits(const hs_heap *h, const void *page, uint32_t len) {
  if (!heap_page_is_new(page)) return heap_page_fits(page, len);
  return len && len <= HEAP_MAX_TUPLE &&
         len + HEAP_LINE_POINTER <= h->page_size - HEAP_PAGE_FIRST_LP;
}

/* Tries page `block` for a tuple of `len`: *out pinned and locked if it
 * has room; otherwise the free-space map learns what it really has (a
 * hint, not the heap's contents: correcting it is no change to undo). */
static hs_status try_page(hs_heap *h, hs_blockno block, uint32_t len, hs_buf *out, bool *ok) {
  *ok = false;
  hs_buf b;
  hs_status st = hs_pool_read(h->pool, h->rel, HS_FORK_MAIN, block, HS_READ_NORMAL, NULL, &b, NULL);
  if (st != HS_OK) return st;
  hs_buf_lock(h->pool, b, HS_LOCK_EXCLUSIVE);
  void *page = hs_buf_page(h->pool, b);
  if (page_fits(h, page, len)) {
    *out = b;
    *ok = true;
    return HS_OK;
  }
  uint32_t room = heap_page_free(page);
  hs_buf_unlock(h->pool, b);
  hs_buf_release(h->pool, b);
  return fsm_set(h->fsm, block, room);
}

/* A page with room for `len` bytes, pinned and exclusively locked: the
 * last insert's page, else one the free-space map names (a few tries: the
 * map may be out of date), else a new one. */
static hs_status page_with_room(hs_heap *h, uint32_t len, hs_buf *out) {
  bool ok = false;
  hs_status st = HS_OK;
  hs_blockno t = atomic_load(&h->target);
  if (t != HS_INVALID_BLOCK) st = try_page(h, t, len, out, &ok);
  for (int tries = 0; st == HS_OK && !ok && tries < 4; tries++) {
    hs_blockno cand;
    st = fsm_find(h->fsm, len + HEAP_LINE_POINTER, &cand);
    if (st != HS_OK || cand == HS_INVALID_BLOCK) break;
    st = try_page(h, cand, len, out, &ok);
    if (ok) atomic_store(&h->target, cand);
  }
  if (st != HS_OK || ok) return st;
  return new_page(h, len, out);
}

static void unlock_release(hs_heap *h, hs_buf b) {
  hs_buf_unlock(h->pool, b);
  hs_buf_release(h->pool, b);
}

static hs_status check_data(const hs_heap *h, const char *call, const void *data, uint32_t len) {
  uint32_t max = page_max_data(h->page_size);
  if (len <= max && (data || !len)) return HS_OK;
  return hs_fail(HS_ERR_INVALID, 0,
                 "%s: relation %u: %u bytes of data (at most %u on %u-byte pages%s); nothing was "
                 "changed",
                 call, h->rel, len, max, h->page_size, data || !len ? "" : ", and data is NULL");
}

/* Before a change to the locked page in b: if it is all-visible, its map
 * bit is cleared, logged before the change's own record. Fallible, so it
 * runs before the page changes; the page's flag is cleared with the change
 * (clear_flag), and the change's redo clears it again. */
static hs_status clear_vm(hs_heap *h, hs_buf b) {
  const void *page = hs_buf_page(h->pool, b);
  if (heap_page_is_new(page) || !(heap_page_flags(page) & HEAP_PAGE_ALL_VISIBLE)) return HS_OK;
  return vm_set(h->vm, hs_buf_block(h->pool, b), false);
}

/* The first change to a page in a call: its copy is kept, a new page is
 * initialized, and it stops being all-visible. */
static void begin_change(hs_heap *h, page_undo *u, hs_buf b) {
  void *page = hs_buf_page(h->pool, b);
  undo_save(h, u, page);
  if (heap_page_is_new(page)) heap_page_init(page, h->page_size);
  heap_page_set_flags(page, (uint16_t)(heap_page_flags(page) & ~HEAP_PAGE_ALL_VISIBLE));
}

/* A record's buffer: `head` bytes the caller fills in, then a new tuple
 * (header with xmin = xid, then the data). Freed by the caller. Refused
 * before anything is read if the tuple is too large for the page or the
 * record (on `npages` pages) for the log. */
static hs_status record_with_tuple(const hs_heap *h, const char *call, uint32_t head,
                                   uint16_t npages, hs_xid xid, const void *data, uint32_t len,
                                   unsigned char **out) {
  *out = NULL; /* set on every path: gcc -O3 cannot see the callers return on failure */
  hs_status st = check_data(h, call, data, len);
  if (st == HS_OK) st = record_fits(h, call, len, npages, head + HEAP_TUPLE_HEADER + len);
  if (st != HS_OK) return st;
  unsigned char *rec = malloc(head + HEAP_TUPLE_HEADER + len);
  if (!rec) return hs_fail(HS_ERR_NOMEM, 0, "%s: no memory for the record", call);
  tuple_header(rec + head, xid, HS_XACT_INVALID, (hs_tid){0, 0});
  if (len) memcpy(rec + head + HEAP_TUPLE_HEADER, data, len);
  *out = rec;
  return HS_OK;
}

hs_status hs_heap_insert(hs_heap *h, hs_xid xid, const void *data, uint32_t len, hs_tid *tid) {
  static const char call[] = "hs_heap_insert";
  if (!h) return hs_fail(HS_ERR_MISUSE, 0, "%s: the heap is NULL", call);
  if (!tid) return hs_fail(HS_ERR_MISUSE, 0, "%s: tid is NULL", call);
  unsigned char *rec;
  hs_status st = record_with_tuple(h, call, INSERT_HEAD, 1, xid, data, len, &rec);
  if (st != HS_OK) return st;
  page_undo u;
  if ((st = undo_reserve(h, call, 1, &u)) != HS_OK) {
    free(rec);
    return st;
  }
  uint32_t total = HEAP_TUPLE_HEADER + len;
  hs_buf b;
  st = page_with_room(h, total, &b);
  if (st == HS_OK && (st = clear_vm(h, b)) != HS_OK) unlock_release(h, b);
  if (st == HS_OK) {
    /* Nothing fails from here to the insert: the page has room. */
    begin_change(h, &u, b);
    uint16_t slot;
    st = heap_page_add(hs_buf_page(h->pool, b), h->page_size, rec + INSERT_HEAD, total, &slot);
    if (st == HS_OK) {
      memcpy(rec, &slot, 2);
      st = log_record(h, REC_INSERT, &b, 1, rec, INSERT_HEAD + total);
    }
    if (st == HS_OK) {
      tid->block = hs_buf_block(h->pool, b);
      tid->slot = slot;
    } else {
      undo_restore(h, &u);
    }
    unlock_release(h, b);
  }
  undo_free(&u);
  free(rec);
  return st;
}

/* The tuple at tid on a pinned, locked page. */
static hs_status tuple_at(hs_heap *h, hs_buf b, hs_tid tid, unsigned char **t, uint32_t *len) {
  void *p;
  hs_status st = heap_page_get(hs_buf_page(h->pool, b), h->page_size, tid.slot, &p, len);
  if (st == HS_OK && *len < HEAP_TUPLE_HEADER)
    st = hs_fail(HS_ERR_CORRUPT, 0, "heap: block %u slot %u holds %u bytes, less than a header",
                 tid.block, tid.slot, *len);
  *t = p;
  return st;
}

static hs_status read_locked(hs_heap *h, hs_blockno block, hs_lock_mode mode, hs_buf *b) {
  hs_status st = hs_pool_read(h->pool, h->rel, HS_FORK_MAIN, block, HS_READ_NORMAL, NULL, b, NULL);
  if (st == HS_OK) hs_buf_lock(h->pool, *b, mode);
  return st;
}

static hs_status visible_to(hs_heap *h, const hs_snapshot *snap, hs_xid self, hs_xid x,
                            bool *visible) {
  if (x != HS_XACT_INVALID && x == self) {
    *visible = true;
    return HS_OK;
  }
  return hs_xact_visible(h->xact, snap, x, visible);
}

hs_status hs_heap_fetch(hs_heap *h, hs_tid tid, const hs_snapshot *snap, hs_xid self, void *out,
                        uint32_t cap, uint32_t *len, bool *visible) {
  if (!visible) return hs_fail(HS_ERR_MISUSE, 0, "hs_heap_fetch: visible is NULL");
  *visible = false;
  if (!h) return hs_fail(HS_ERR_MISUSE, 0, "hs_heap_fetch: the heap is NULL");
  if (!snap) return hs_fail(HS_ERR_MISUSE, 0, "hs_heap_fetch: the snapshot is NULL");
  if (!len) return hs_fail(HS_ERR_MISUSE, 0, "hs_heap_fetch: len is NULL");
  if (!out && cap) return hs_fail(HS_ERR_MISUSE, 0, "hs_heap_fetch: out is NULL (cap %u)", cap);
  hs_buf b;
  hs_status st = read_locked(h, tid.block, HS_LOCK_SHARE, &b);
  if (st != HS_OK) return st;
  unsigned char *t;
  uint32_t tlen;
  st = tuple_at(h, b, tid, &t, &tlen);
  bool created = false, deleted = false;
  if (st == HS_OK) st = visible_to(h, snap, self, tuple_xmin(t), &created);
  if (st == HS_OK && created && tuple_xmax(t) != HS_XACT_INVALID)
    st = visible_to(h, snap, self, tuple_xmax(t), &deleted);
  if (st == HS_OK && created && !deleted) {
    *visible = true;
    *len = tlen - HEAP_TUPLE_HEADER;
    if (cap) memcpy(out, t + HEAP_TUPLE_HEADER, *len < cap ? *len : cap); /* out may be NULL then */
  }
  unlock_release(h, b);
  return st;
}

/* May `xid` delete this tuple? Not if another transaction deleted it and
 * runs (HS_ERR_BUSY) or committed (HS_ERR_INVALID); an aborted deleter's
 * mark is taken over. */
static hs_status may_delete(hs_heap *h, const unsigned char *t, hs_xid xid, hs_tid tid) {
  hs_xid other = tuple_xmax(t);
  if (other == HS_XACT_INVALID || other == xid) return HS_OK;
  hs_xact_status s;
  hs_status st = hs_xact_status_of(h->xact, other, &s);
  if (st != HS_OK) return st;
  if (s == HS_XACT_ABORTED) return HS_OK;
  if (s == HS_XACT_COMMITTED)
    return hs_fail(HS_ERR_INVALID, 0,
                   "heap: block %u slot %u was deleted by transaction %" PRIu64 ", which committed",
                   tid.block, tid.slot, other);
  return hs_fail(HS_ERR_BUSY, 0,
                 "heap: block %u slot %u is being deleted by transaction %" PRIu64
                 ", still running",
                 tid.block, tid.slot, other);
}

hs_status hs_heap_delete(hs_heap *h, hs_xid xid, hs_tid tid) {
  static const char call[] = "hs_heap_delete";
  if (!h) return hs_fail(HS_ERR_MISUSE, 0, "%s: the heap is NULL", call);
  hs_status st = record_fits(h, call, 0, 1, DELETE_LEN);
  page_undo u;
  if (st == HS_OK) st = undo_reserve(h, call, 1, &u);
  if (st != HS_OK) return st;
  hs_buf b;
  if ((st = read_locked(h, tid.block, HS_LOCK_EXCLUSIVE, &b)) != HS_OK) {
    undo_free(&u);
    return st;
  }
  unsigned char *t;
  uint32_t len;
  st = tuple_at(h, b, tid, &t, &len);
  if (st == HS_OK) st = may_delete(h, t, xid, tid);
  if (st == HS_OK) st = clear_vm(h, b);
  if (st == HS_OK) {
    begin_change(h, &u, b);
    tuple_set_xmax(t, xid, (hs_tid){0, 0});
    unsigned char rec[DELETE_LEN];
    memcpy(rec, &tid.slot, 2);
    memcpy(rec + 2, &xid, 8);
    st = log_record(h, REC_DELETE, &b, 1, rec, sizeof rec);
    if (st != HS_OK) undo_restore(h, &u);
  }
  unlock_release(h, b);
  undo_free(&u);
  return st;
}

hs_status hs_heap_update(hs_heap *h, hs_xid xid, hs_tid tid, const void *data, uint32_t len,
                         hs_tid *new_tid) {
  static const char call[] = "hs_heap_update";
  if (!h) return hs_fail(HS_ERR_MISUSE, 0, "%s: the heap is NULL", call);
  if (!new_tid) return hs_fail(HS_ERR_MISUSE, 0, "%s: new_tid is NULL", call);
  unsigned char *rec;
  /* Two pages counted whether or not the tuple moves: which it does depends
   * on the page's room, and the same call must not fail on a fuller page. */
  hs_status st = record_with_tuple(h, call, UPDATE_HEAD, 2, xid, data, len, &rec);
  if (st != HS_OK) return st;
  page_undo u;
  if ((st = undo_reserve(h, call, 2, &u)) != HS_OK) {
    free(rec);
    return st;
  }
  uint32_t total = HEAP_TUPLE_HEADER + len;
  hs_buf old;
  st = read_locked(h, tid.block, HS_LOCK_EXCLUSIVE, &old);
  if (st != HS_OK) {
    undo_free(&u);
    free(rec);
    return st;
  }
  unsigned char *t;
  uint32_t tlen;
  st = tuple_at(h, old, tid, &t, &tlen);
  if (st == HS_OK) st = may_delete(h, t, xid, tid);
  hs_buf bufs[2] = {old, HS_INVALID_BUF};
  uint16_t npages = 1;
  void *old_page = hs_buf_page(h->pool, old);
  if (st == HS_OK && !page_fits(h, old_page, total)) {
    /* Another page, always a higher block than the old one, so the locks
     * are taken low to high: the insert target if it is higher and has
     * room, else a new page at the end. */
    hs_blockno target = atomic_load(&h->target);
    if (target != HS_INVALID_BLOCK && target > tid.block &&
        read_locked(h, target, HS_LOCK_EXCLUSIVE, &bufs[1]) == HS_OK) {
      if (page_fits(h, hs_buf_page(h->pool, bufs[1]), total))
        npages = 2;
      else
        unlock_release(h, bufs[1]);
    }
    if (npages == 1) {
      st = new_page(h, total, &bufs[1]);
      if (st == HS_OK) npages = 2;
    }
  }
  for (uint16_t i = 0; i < npages && st == HS_OK; i++) st = clear_vm(h, bufs[i]);
  if (st == HS_OK) {
    /* Nothing fails from here to the insert: the destination has room. */
    for (uint16_t i = 0; i < npages; i++) begin_change(h, &u, bufs[i]);
    hs_buf dest = bufs[npages - 1];
    uint16_t slot;
    st = heap_page_add(hs_buf_page(h->pool, dest), h->page_size, rec + UPDATE_HEAD, total, &slot);
    if (st == HS_OK) {
      /* Adding never moves tuples: the old one is still at t. */
      hs_tid to = {hs_buf_block(h->pool, dest), slot};
      tuple_set_xmax(t, xid, to);
      memcpy(rec, &tid.slot, 2);
      memcpy(rec + 2, &xid, 8);
      memcpy(rec + 10, &slot, 2);
      st = log_record(h, REC_UPDATE, bufs, npages, rec, UPDATE_HEAD + total);
      if (st == HS_OK) *new_tid = to;
    }
    if (st != HS_OK) undo_restore(h, &u);
  }
  if (npages == 2) unlock_release(h, bufs[1]);
  unlock_release(h, old);
  undo_free(&u);
  free(rec);
  return st;
}

hs_status hs_heap_tuple_info_get(hs_heap *h, hs_tid tid, hs_heap_tuple_info *out) {
  if (!h) return hs_fail(HS_ERR_MISUSE, 0, "hs_heap_tuple_info_get: the heap is NULL");
  if (!out) return hs_fail(HS_ERR_MISUSE, 0, "hs_heap_tuple_info_get: out is NULL");
  hs_buf b;
  hs_status st = read_locked(h, tid.block, HS_LOCK_SHARE, &b);
  if (st != HS_OK) return st;
  unsigned char *t;
  uint32_t len;
  st = tuple_at(h, b, tid, &t, &len);
  if (st == HS_OK) {
    out->xmin = tuple_xmin(t);
    out->xmax = tuple_xmax(t);
    out->next = tuple_next(t);
  }
  unlock_release(h, b);
  return st;
}

/* ---- every version ---- */

hs_status heap_scan_versions(hs_heap *h, heap_version_fn fn, void *ctx) {
  hs_blockno n;
  hs_status st = hs_smgr_nblocks(hs_pool_smgr(h->pool), h->rel, HS_FORK_MAIN, &n);
  for (hs_blockno block = 0; st == HS_OK && block < n; block++) {
    hs_buf b;
    if ((st = read_locked(h, block, HS_LOCK_SHARE, &b)) != HS_OK) break;
    const void *page = hs_buf_page(h->pool, b);
    if (!heap_page_is_new(page)) st = heap_page_check(page, h->page_size);
    if (st != HS_OK) {
      char why[512];
      snprintf(why, sizeof why, "%s", hs_last_error());
      st = hs_fail(st, 0, "heap %u block %u: %s", h->rel, block, why);
    }
    uint32_t slots = st == HS_OK && !heap_page_is_new(page) ? heap_page_slots(page) : 0;
    for (uint32_t slot = 1; st == HS_OK && slot <= slots; slot++) {
      if (heap_page_state(page, (uint16_t)slot) != HEAP_LP_NORMAL) continue;
      hs_tid tid = {block, (uint16_t)slot};
      unsigned char *t;
      uint32_t len;
      if ((st = tuple_at(h, b, tid, &t, &len)) != HS_OK) break;
      hs_heap_tuple_info info = {tuple_xmin(t), tuple_xmax(t), tuple_next(t)};
      st = fn(ctx, tid, &info, t + HEAP_TUPLE_HEADER, len - HEAP_TUPLE_HEADER);
    }
    unlock_release(h, b);
  }
  return st;
}

/* ---- pruning ---- */

hs_status heap_prune(hs_heap *h, hs_buf b, hs_xid horizon, bool freeze, heap_dead_fn on_dead,
                     void *ctx, heap_prune_counts *out) {
  memset(out, 0, sizeof *out);
  void *page = hs_buf_page(h->pool, b);
  if (heap_page_is_new(page)) {
    out->free_now = h->page_size - HEAP_PAGE_FIRST_LP;
    return HS_OK;
  }
  hs_status st = heap_page_check(page, h->page_size);
  if (st != HS_OK) return st;
  uint32_t n = heap_page_slots(page);
  /* The record's size is known before anything is decided, let alone
   * changed: a slot is in at most two of the lists (frozen and cleared), and
   * each list entry is a u16. */
  if ((st = record_fits(h, "heap_prune", 0, 1, PRUNE_HEAD + 4 * n)) != HS_OK) return st;
  page_undo u;
  if ((st = undo_reserve(h, "heap_prune", 1, &u)) != HS_OK) return st;
  /* The record: u16 nremoved, u16 nfrozen, removed slots, frozen slots. */
  uint16_t *removed = malloc((n + 1) * sizeof *removed), *frozen = malloc((n + 1) * sizeof *frozen),
           *cleared = malloc((n + 1) * sizeof *cleared),
           *pending = malloc((n + 1) * sizeof *pending);
  unsigned char *rec = malloc(6 + 6 * (size_t)(n + 1));
  if (!removed || !frozen || !cleared || !pending || !rec) {
    free(pending);
    free(removed);
    free(frozen);
    free(cleared);
    free(rec);
    undo_free(&u);
    return hs_fail(HS_ERR_NOMEM, 0, "heap_prune: no memory");
  }
  uint16_t nremoved = 0, nfrozen = 0, ncleared = 0, npending = 0;
  bool all_visible = true; /* every version left is visible to everyone */
  hs_blockno block = hs_buf_block(h->pool, b);
  for (uint32_t s = 1; s <= n && st == HS_OK; s++) {
    if (heap_page_state(page, (uint16_t)s) != HEAP_LP_NORMAL) continue;
    unsigned char *t;
    uint32_t len;
    hs_tid tid = {block, (uint16_t)s};
    if ((st = tuple_at(h, b, tid, &t, &len)) != HS_OK) break;
    hs_xid xmin = tuple_xmin(t), xmax = tuple_xmax(t);
    hs_xact_status smin = HS_XACT_COMMITTED, smax = HS_XACT_IN_PROGRESS;
    if (xmin != HS_XACT_FROZEN && (st = hs_xact_status_of(h->xact, xmin, &smin)) != HS_OK) break;
    if (xmax != HS_XACT_INVALID && (st = hs_xact_status_of(h->xact, xmax, &smax)) != HS_OK) break;
    bool dead = smin == HS_XACT_ABORTED || (xmax != HS_XACT_INVALID && xmax < horizon &&
                                            smax == HS_XACT_COMMITTED && smin == HS_XACT_COMMITTED);
    if (dead) {
      if (smin == HS_XACT_ABORTED) {
        /* An aborted creator's version goes whatever the callback says, and
         * has no successor: it is not what its predecessor's xmax means. */
        bool ignored = true;
        if (on_dead)
          st = on_dead(ctx, tid, t + HEAP_TUPLE_HEADER, len - HEAP_TUPLE_HEADER, (hs_tid){0, 0},
                       &ignored);
        if (st == HS_OK) removed[nremoved++] = (uint16_t)s;
      } else {
        pending[npending++] = (uint16_t)s;
      }
      continue;
    }
    out->live++;
    if (xmax != HS_XACT_INVALID && smax == HS_XACT_ABORTED) {
      cleared[ncleared++] = (uint16_t)s;
      xmax = HS_XACT_INVALID;
    }
    bool settled = smin == HS_XACT_COMMITTED && (xmin == HS_XACT_FROZEN || xmin < horizon);
    if (!settled || xmax != HS_XACT_INVALID) all_visible = false;
    if (freeze && xmin != HS_XACT_FROZEN && smin == HS_XACT_COMMITTED && xmin < horizon)
      frozen[nfrozen++] = (uint16_t)s;
  }
  /* The committed dead, in rounds: a version the callback keeps (further
   * down its chain than the index entry) may become the entry's version
   * once an older one on this page goes — an update's new version can sit
   * in a lower slot than its predecessor — so each round retries the kept
   * ones until a round removes none. */
  for (bool progress = true; st == HS_OK && progress && npending;) {
    progress = false;
    uint16_t left = 0;
    for (uint16_t i = 0; i < npending && st == HS_OK; i++) {
      hs_tid tid = {block, pending[i]};
      unsigned char *t;
      uint32_t len;
      bool remove = true;
      st = tuple_at(h, b, tid, &t, &len);
      if (st == HS_OK && on_dead)
        st = on_dead(ctx, tid, t + HEAP_TUPLE_HEADER, len - HEAP_TUPLE_HEADER, tuple_next(t),
                     &remove);
      if (st != HS_OK) break;
      if (remove) {
        removed[nremoved++] = pending[i];
        progress = true;
      } else {
        pending[left++] = pending[i];
      }
    }
    if (st == HS_OK) npending = left;
  }
  if (st == HS_OK && npending) {
    out->kept = npending;
    all_visible = false;
  }
  if (st == HS_OK && (nremoved || nfrozen || ncleared)) {
    uint32_t before = heap_page_free(page);
    undo_save(h, &u, page);
    st = apply_prune(page, h->page_size, removed, nremoved, frozen, nfrozen, cleared, ncleared);
    if (st == HS_OK) {
      memcpy(rec, &nremoved, 2);
      memcpy(rec + 2, &nfrozen, 2);
      memcpy(rec + 4, &ncleared, 2);
      unsigned char *lists = rec + 6;
      memcpy(lists, removed, 2 * (size_t)nremoved);
      memcpy(lists + 2 * (size_t)nremoved, frozen, 2 * (size_t)nfrozen);
      memcpy(lists + 2 * (size_t)(nremoved + nfrozen), cleared, 2 * (size_t)ncleared);
      st = log_record(h, REC_PRUNE, &b, 1, rec,
                      PRUNE_HEAD + 2 * (uint32_t)(nremoved + nfrozen + ncleared));
    }
    /* Not logged: the page goes back to what it was. (The index entries
     * the callback moved stay moved: they were logged, and they only ever
     * leave versions dead to everyone.) */
    if (st != HS_OK) undo_restore(h, &u);
    out->removed = nremoved;
    out->frozen = nfrozen;
    out->freed_bytes = heap_page_free(page) - before;
    out->changed = st == HS_OK;
  }
  /* All visible: the page's flag (logged), then the map's bit. */
  if (st == HS_OK && all_visible && !(heap_page_flags(page) & HEAP_PAGE_ALL_VISIBLE)) {
    uint16_t flags = heap_page_flags(page);
    heap_page_set_flags(page, flags | HEAP_PAGE_ALL_VISIBLE);
    st = log_record(h, REC_VISIBLE, &b, 1, NULL, 0);
    if (st != HS_OK) heap_page_set_flags(page, flags); /* not logged: put back */
    if (st == HS_OK) st = vm_set(h->vm, block, true);
    if (st == HS_OK) out->set_visible = out->changed = true;
  } else if (st == HS_OK && all_visible) {
    /* Flagged, but the map's bit may be clear: a change whose record could
     * not be logged leaves its page as it was and the bit it cleared
     * cleared (heap.c, "changes"). Setting it again is what makes vacuum
     * skip the page once more. */
    bool bit;
    st = vm_get(h->vm, block, &bit);
    if (st == HS_OK && !bit) st = vm_set(h->vm, block, true);
  }
  out->all_visible = all_visible;
  out->free_now = heap_page_free(page);
  free(removed);
  free(cleared);
  free(frozen);
  free(pending);
  free(rec);
  undo_free(&u);
  return st;
}
