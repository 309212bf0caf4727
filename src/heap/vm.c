/*
 * heap/vm.c — the visibility map (heap/vm.h): bits in the VM fork, 8 heap
 * pages per byte past the page header.
 */
#include "heap/vm.h"

#include "core/error.h"
#include "heap/fork_extend.h"
#include "hotset/durability.h"
#include "hotset/page.h"

#include <pthread.h>
#include <stdlib.h>

struct vmap {
  hs_pool *pool;
  hs_relid rel;
  uint32_t per_page; /* heap pages per map page */
  pthread_mutex_t extend_mu;
};

hs_status vm_open(hs_pool *pool, hs_relid rel, vmap **out) {
  *out = NULL;
  hs_status st = hs_smgr_create_if_missing(hs_pool_smgr(pool), rel, HS_FORK_VM, NULL);
  if (st != HS_OK) return st;
  vmap *v = calloc(1, sizeof *v);
  if (!v) return hs_fail(HS_ERR_NOMEM, 0, "no memory for a visibility map");
  v->pool = pool;
  v->rel = rel;
  v->per_page = (hs_pool_page_size(pool) - HS_PAGE_HEADER_SIZE) * 8;
  pthread_mutex_init(&v->extend_mu, NULL);
  *out = v;
  return HS_OK;
}

void vm_close(vmap *v) {
  if (!v) return;
  pthread_mutex_destroy(&v->extend_mu);
  free(v);
}

hs_status vm_set(vmap *v, hs_blockno block, bool all_visible) {
  hs_blockno vblock = block / v->per_page, n;
  uint32_t bit = block % v->per_page, at = HS_PAGE_HEADER_SIZE + bit / 8;
  hs_status st = hs_smgr_nblocks(hs_pool_smgr(v->pool), v->rel, HS_FORK_VM, &n);
  if (st == HS_OK && n <= vblock) {
    if (!all_visible) return HS_OK; /* no page: no bit to clear */
    pthread_mutex_lock(&v->extend_mu);
    st = fork_extend_to(v->pool, v->rel, HS_FORK_VM, vblock);
    pthread_mutex_unlock(&v->extend_mu);
  }
  hs_buf b;
  if (st == HS_OK)
    st = hs_pool_read(v->pool, v->rel, HS_FORK_VM, vblock, HS_READ_NORMAL, NULL, &b, NULL);
  if (st != HS_OK) return st;
  hs_buf_lock(v->pool, b, HS_LOCK_EXCLUSIVE);
  unsigned char *p = (unsigned char *)hs_buf_page(v->pool, b) + at;
  unsigned char mask = (unsigned char)(1u << (bit % 8));
  unsigned char want = all_visible ? (unsigned char)(*p | mask) : (unsigned char)(*p & ~mask);
  if (want != *p) {
    *p = want;
    hs_wal_range r = {at, 1};
    st = hs_buf_log_change(v->pool, b, &r, 1, NULL);
  }
  hs_buf_unlock(v->pool, b);
  hs_buf_release(v->pool, b);
  return st;
}

hs_status vm_get(vmap *v, hs_blockno block, bool *all_visible) {
  *all_visible = false;
  hs_blockno vblock = block / v->per_page, n;
  uint32_t bit = block % v->per_page;
  hs_status st = hs_smgr_nblocks(hs_pool_smgr(v->pool), v->rel, HS_FORK_VM, &n);
  if (st != HS_OK || n <= vblock) return st;
  hs_buf b;
  st = hs_pool_read(v->pool, v->rel, HS_FORK_VM, vblock, HS_READ_NORMAL, NULL, &b, NULL);
  if (st != HS_OK) return st;
  hs_buf_lock(v->pool, b, HS_LOCK_SHARE);
  unsigned char byte = ((unsigned char *)hs_buf_page(v->pool, b))[HS_PAGE_HEADER_SIZE + bit / 8];
  *all_visible = byte & (1u << (bit % 8));
  hs_buf_unlock(v->pool, b);
  hs_buf_release(v->pool, b);
  return HS_OK;
}
