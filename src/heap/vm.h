/*
 * heap/vm.h — the visibility map: one bit per heap page, set when every
 * version on the page is visible to every snapshot (created by a committed
 * transaction below the horizon, deleted by none), so vacuum skips the
 * page without reading it. Any change to the page clears the bit first.
 *
 * Each bit is set only after the page's own flag (HEAP_PAGE_ALL_VISIBLE,
 * logged) and cleared before the change that makes it untrue is logged, so
 * the map may say "not all visible" of a page that is (a vacuum reads it
 * once more) but never the reverse. Changes are logged one-byte changes.
 */
#ifndef HOTSET_HEAP_VM_H
#define HOTSET_HEAP_VM_H

#include "hotset/pool.h"

typedef struct vmap vmap;

hs_status vm_open(hs_pool *pool, hs_relid rel, vmap **out);
void vm_close(vmap *v);
hs_status vm_set(vmap *v, hs_blockno block, bool all_visible);
hs_status vm_get(vmap *v, hs_blockno block, bool *all_visible);

#endif
