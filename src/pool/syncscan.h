/*
 * pool/syncscan.h — the pool's table of scan positions (hotset/syncscan.h),
 * as the pool sees it: something it creates when it opens and frees when it
 * closes. The table's layout stays private to syncscan.c, so the pool needs
 * nothing but these two calls.
 */
#ifndef HOTSET_POOL_SYNCSCAN_H
#define HOTSET_POOL_SYNCSCAN_H

#include "hotset/pool.h"

typedef struct hs_syncscan_table hs_syncscan_table;

/* A table with no recorded position, or NULL (with hs_last_error set) when
 * memory or a mutex cannot be had. */
hs_syncscan_table *syncscan_table_create(void);
/* Frees the table; NULL is allowed. No scan may be reporting into it. */
void syncscan_table_free(hs_syncscan_table *t);

/* The pool's table (pool.c). The public calls reach the table through it;
 * a pool without a table makes them no-ops (start returns 0). */
hs_syncscan_table *pool_syncscan_table(hs_pool *pool);

#endif
