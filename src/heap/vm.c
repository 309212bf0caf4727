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
  fork_pages pages;  /* the VM fork */
  uint32_t per_page; /* heap pages per map page */
};

hs_status vm_open(hs_pool *pool, hs_relid rel, vmap **out) {
  *out = NULL;
  hs_status st = hs_smgr_create_if_missing(hs_pool_smgr(pool), rel, HS_FORK_VM, NULL);
  if (st != HS_OK) return st;
  vmap *v = calloc(1, sizeof *v);
  if (!v) return hs_fail(HS_ERR_NOMEM, 0, "no memory for a visibility map");
  fork_pages_init(&v->pages, pool, rel, HS_FORK_VM);
  v->per_page = (hs_pool_page_size(pool) - HS_PAGE_HEADER_SIZE) * 8;
  *out = v;
  return HS_OK;
}

void vm_close(vmap *v) {
  if (!v) return;
  fork_pages_destroy(&v->pages);
  free(v);
}

hs_status vm_set(vmap *v, hs_blockno block, bool all_visible) {
  uint32_t bit = block % v->per_page;
  unsigned char mask = (unsigned char)(1u << (bit % 8));
  return fork_byte_update(&v->pages, block / v->per_page, HS_PAGE_HEADER_SIZE + bit / 8,
                          all_visible ? 0xFF : (unsigned char)~mask, all_visible ? mask : 0);
}

hs_status vm_get(vmap *v, hs_blockno block, bool *all_visible) {
  uint32_t bit = block % v->per_page;
  unsigned char byte;
  hs_status st =
      fork_byte_get(&v->pages, block / v->per_page, HS_PAGE_HEADER_SIZE + bit / 8, &byte);
  *all_visible = st == HS_OK && (byte & (1u << (bit % 8)));
  return st;
}
