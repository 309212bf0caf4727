/*
 * tests/heap_env.h — the stack the heap's tests open over a directory: a
 * log (<dir>/wal) with the heap's redo registered, a pool with checksums,
 * the transaction manager, and optionally a heap and its primary-key
 * index. Opening recovers whatever a killed child left.
 */
#ifndef HOTSET_TESTS_HEAP_ENV_H
#define HOTSET_TESTS_HEAP_ENV_H

#include "check.h"
#include "direct_mode.h"
#include "hotset/durability.h"
#include "hotset/heap.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct heap_env {
  hs_wal *wal;
  hs_pool *pool;
  hs_xact_mgr *x;
  hs_heap *h;      /* NULL unless a heap relation was asked for */
  hs_pk_index *ix; /* NULL unless an index relation was asked for */
} heap_env;

/* heap_rel / index_rel 0: without a heap / an index. */
static inline hs_status heap_env_open(heap_env *e, const char *dir, uint32_t pool_pages,
                                      hs_relid heap_rel, hs_relid index_rel) {
  *e = (heap_env){0};
  char wd[4200];
  snprintf(wd, sizeof wd, "%s/wal", dir);
  hs_wal_options wo;
  hs_wal_options_init(&wo);
  wo.dir = wd;
  wo.writer_delay_ms = 0;
  hs_status st = hs_wal_open(&wo, &e->wal);
  if (st == HS_OK) st = hs_heap_register_redo(e->wal);
  if (st != HS_OK) return st;
  hs_pool_options po;
  hs_pool_options_init(&po);
  po.dir = dir;
  po.pool_pages = pool_pages;
  po.wal = e->wal;
  po.checksums = true;
  st = hs_pool_open(&po, &e->pool);
  if (st == HS_OK) st = hs_xact_open(e->pool, &e->x);
  if (st == HS_OK && heap_rel) st = hs_heap_open(e->pool, e->x, heap_rel, &e->h);
  if (st == HS_OK && index_rel) st = hs_pk_index_open(e->pool, index_rel, &e->ix);
  return st;
}

/* hs_pk_index_lookup through snapshot `s`, or through a fresh one taken and released
 * here when `s` is NULL. No CHECK inside: threads may call it. */
static inline hs_status heap_env_lookup(heap_env *e, uint64_t key, const hs_snapshot *s,
                                        hs_xid self, hs_tid *tid, void *out, uint32_t cap,
                                        uint32_t *len, bool *found) {
  hs_snapshot *mine = NULL;
  *found = false;
  if (!s) {
    mine = malloc(sizeof *mine);
    if (!mine) return HS_ERR_NOMEM;
    hs_status st = hs_xact_take_snapshot(e->x, mine);
    if (st != HS_OK) {
      free(mine);
      return st;
    }
    s = mine;
  }
  hs_status st = hs_pk_index_lookup(e->ix, e->h, key, s, self, tid, out, cap, len, found);
  if (mine) {
    hs_xact_release_snapshot(e->x, mine);
    free(mine);
  }
  return st;
}

static inline void heap_env_close(heap_env *e) {
  hs_pk_index_close(e->ix);
  hs_heap_close(e->h);
  hs_xact_close(e->x);
  CHECK_OK(hs_pool_close(e->pool));
  CHECK_OK(hs_wal_close(e->wal));
}

#endif
