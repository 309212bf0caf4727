/*
 * heap/fsm.h — the free-space map: how much room each heap page has, so
 * inserts reuse what vacuum freed instead of growing the relation.
 *
 * One byte per heap page in the relation's FSM fork: the free bytes in
 * units of page_size / 256 (PostgreSQL's categories), rounded down, so a
 * page the map calls big enough is (the map is only advice: a page's room
 * is checked under its lock before use, and the map corrected if it was
 * wrong). Each FSM page covers (page_size - 16) heap pages — 8,176 pages,
 * 64 MiB of heap, for 8 KiB pages — searched from a moving start so that
 * concurrent inserters spread over the pages with room, as PostgreSQL's
 * fp_next_slot does. A change is a logged one-byte change (with full-page
 * writes), so a torn FSM page is repaired like any other; PostgreSQL does
 * not log its FSM and rebuilds bad pages as zeros instead. A page that
 * fails its checksum anyway (damaged on disk) is read as zeros here too,
 * "no free space known", and rewritten by its next change (fsm_open,
 * fork_pages_pin): the map is a hint, and a bad page must not stop inserts.
 */
#ifndef HOTSET_HEAP_FSM_H
#define HOTSET_HEAP_FSM_H

#include "hotset/pool.h"

typedef struct fsm fsm;

hs_status fsm_open(hs_pool *pool, hs_relid rel, fsm **out);
void fsm_close(fsm *f);

/* Records that heap page `block` has `free_bytes` of room. */
hs_status fsm_set(fsm *f, hs_blockno block, uint32_t free_bytes);
/* A heap page the map says has at least `need` bytes of room, or
 * HS_INVALID_BLOCK if none. */
hs_status fsm_find(fsm *f, uint32_t need, hs_blockno *block);
/* What the map says of one page, in bytes (a lower bound). */
hs_status fsm_get(fsm *f, hs_blockno block, uint32_t *free_bytes);

#endif
