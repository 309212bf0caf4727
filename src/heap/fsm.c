/*
 * heap/fsm.c — the free-space map (heap/fsm.h).
 */
#include "heap/fsm.h"

#include "core/error.h"
#include "heap/fork_extend.h"
#include "hotset/durability.h"
#include "hotset/page.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct fsm {
  fork_pages pages; /* the FSM fork */
  uint32_t per_page, unit;
  _Atomic hs_blockno next; /* where the next search starts (a heap block) */
};

hs_status fsm_open(hs_pool *pool, hs_relid rel, fsm **out) {
  *out = NULL;
  hs_status st = hs_smgr_create_if_missing(hs_pool_smgr(pool), rel, HS_FORK_FSM, NULL);
  if (st != HS_OK) return st;
  fsm *f = calloc(1, sizeof *f);
  if (!f) return hs_fail(HS_ERR_NOMEM, 0, "no memory for a free-space map");
  fork_pages_init(&f->pages, pool, rel, HS_FORK_FSM);
  /* The map is only a hint (every page it names is checked under its lock
   * before use), so a damaged FSM page is read as an empty one — "no free
   * space known" — and rewritten by its next change, as PostgreSQL reads
   * its FSM with RBM_ZERO_ON_ERROR: without this, one bad page would make
   * every insert and update that consults it fail until the file is
   * repaired by hand. Only this fork: the heap's pages, the visibility map,
   * the commit log and the index are refused when damaged. */
  f->pages.zero_on_error = true;
  f->per_page = hs_pool_page_size(pool) - HS_PAGE_HEADER_SIZE;
  f->unit = hs_pool_page_size(pool) / 256;
  atomic_init(&f->next, 0);
  *out = f;
  return HS_OK;
}

void fsm_close(fsm *f) {
  if (!f) return;
  fork_pages_destroy(&f->pages);
  free(f);
}

hs_status fsm_set(fsm *f, hs_blockno block, uint32_t free_bytes) {
  uint32_t cat = free_bytes / f->unit;
  return fork_byte_update(&f->pages, block / f->per_page, HS_PAGE_HEADER_SIZE + block % f->per_page,
                          0, (unsigned char)(cat > 255 ? 255 : cat));
}

hs_status fsm_get(fsm *f, hs_blockno block, uint32_t *free_bytes) {
  unsigned char cat;
  hs_status st = fork_byte_get(&f->pages, block / f->per_page,
                               HS_PAGE_HEADER_SIZE + block % f->per_page, &cat);
  *free_bytes = (uint32_t)cat * f->unit;
  return st;
}

hs_status fsm_find(fsm *f, uint32_t need, hs_blockno *block) {
  *block = HS_INVALID_BLOCK;
  /* Categories round down: a page recorded at category c has at least
   * c * unit bytes, so ask for the category that guarantees `need`. */
  uint32_t want = (need + f->unit - 1) / f->unit;
  if (want > 255) return HS_OK;
  hs_blockno n;
  hs_status st = fork_pages_count(&f->pages, &n);
  if (st != HS_OK || n == 0) return st;
  uint64_t total = (uint64_t)n * f->per_page;
  hs_blockno start = (hs_blockno)(atomic_load(&f->next) % total);
  /* Every FSM page once, starting with the one holding `start`. */
  for (hs_blockno k = 0; k <= n && *block == HS_INVALID_BLOCK && st == HS_OK; k++) {
    hs_blockno fblock = (start / f->per_page + k) % n;
    hs_buf b;
    st = fork_pages_pin(&f->pages, fblock, false, HS_LOCK_SHARE, &b);
    if (st != HS_OK || b == HS_INVALID_BUF) break;
    const unsigned char *p =
        (const unsigned char *)hs_buf_page(f->pages.pool, b) + HS_PAGE_HEADER_SIZE;
    uint32_t from = k == 0 ? start % f->per_page : 0;
    uint32_t to = k == n ? start % f->per_page : f->per_page; /* the wrap's rest */
    for (uint32_t i = from; i < to; i++)
      if (p[i] >= want) {
        *block = fblock * f->per_page + i;
        break;
      }
    fork_pages_unpin(&f->pages, b);
  }
  if (*block != HS_INVALID_BLOCK) atomic_store(&f->next, *block + 1);
  return st;
}
