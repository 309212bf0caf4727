/*
 * heap/heap_page.h — the slotted page the heap stores tuples in.
 *
 * A heap page keeps an array of line pointers growing from the front and
 * tuple bytes growing from the back, free space between them, as
 * PostgreSQL's bufpage.c does. A tuple is named by its page and its line
 * pointer's number (a slot, from 1), which never changes while the tuple
 * lives: compacting a page moves tuple bytes, never line pointers, so
 * index entries that point at slots stay right.
 *
 * Layout, after the buffer manager's own header (HS_PAGE_HEADER_SIZE bytes,
 * hotset/page.h: LSN and checksum), little-endian:
 *
 *   +0  u32 lower      end of the line pointer array (a byte offset)
 *   +4  u32 upper      start of the tuple bytes; lower <= upper <= page size
 *   +8  u16 flags      HEAP_PAGE_ALL_VISIBLE, HEAP_PAGE_HAS_DEAD
 *   +10 u16 reserved   0
 *   +12 u32 reserved   0
 *   +16 u64 prune_xid  the oldest deleting transaction of a tuple still on
 *                      the page (0: none): a vacuum with an older horizon
 *                      has nothing to prune here
 *   +24 line pointers, 4 bytes each: u16 offset, u16 length (14 bits) with
 *       the state in the top 2 bits: UNUSED (free for a new tuple), NORMAL
 *       (a tuple at offset), DEAD (the tuple is gone but an index may
 *       still point at the slot: it stays taken until the index entries
 *       are removed, then becomes UNUSED)
 *
 * Offsets are 16-bit: pages are at most 64 KiB, and a tuple starts below
 * the page's end. upper is 32-bit because an empty 64 KiB page's upper is
 * 65536. A tuple is at most HEAP_MAX_TUPLE bytes (14-bit lengths).
 *
 * Every function takes the page's size and checks what it reads: a page
 * whose pointers do not fit is HS_ERR_CORRUPT naming what is wrong, never a
 * read out of bounds (heap_page_check walks all of it; the others check
 * what they touch).
 */
#ifndef HOTSET_HEAP_PAGE_H
#define HOTSET_HEAP_PAGE_H

#include "hotset/page.h"
#include "hotset/status.h"

#include <stdbool.h>
#include <stdint.h>

#define HEAP_PAGE_HEADER    24u /* after HS_PAGE_HEADER_SIZE */
#define HEAP_LINE_POINTER   4u
#define HEAP_MAX_TUPLE      16383u
#define HEAP_PAGE_FIRST_LP  (HS_PAGE_HEADER_SIZE + HEAP_PAGE_HEADER)
#define HEAP_PAGE_MAX_SLOTS 65535u

enum { HEAP_PAGE_ALL_VISIBLE = 1, HEAP_PAGE_HAS_DEAD = 2 };

typedef enum heap_lp_state {
  HEAP_LP_UNUSED = 0,
  HEAP_LP_NORMAL = 1,
  HEAP_LP_DEAD = 2,
} heap_lp_state;

/* Makes `page` an empty heap page (the buffer manager's header untouched). */
void heap_page_init(void *page, uint32_t page_size);

/* Whether the page was never initialized (all of the heap's part zeros, as
 * a block added by an extension is). */
bool heap_page_is_new(const void *page);

/* Line pointers on the page (taken or not), and the bytes a new tuple of
 * `len` could still use: 0 if it does not fit. */
uint32_t heap_page_slots(const void *page);
bool heap_page_fits(const void *page, uint32_t len);
/* Free bytes between the line pointers and the tuples (what the free-space
 * map records). */
uint32_t heap_page_free(const void *page);

/* Adds a tuple, reusing an UNUSED line pointer if there is one, and says
 * which slot it got. HS_ERR_NOSPACE if it does not fit (heap_page_fits
 * says beforehand), HS_ERR_INVALID if it is empty or longer than
 * HEAP_MAX_TUPLE. */
hs_status heap_page_add(void *page, uint32_t page_size, const void *tuple, uint32_t len,
                        uint16_t *slot);

/* Puts a tuple at a given slot — what redo does, so that a replayed insert
 * lands where the original did. The slot must be UNUSED or past the array
 * (the array grows to it, the slots in between UNUSED). HS_ERR_NOSPACE if
 * it does not fit, HS_ERR_INVALID if the slot is taken. */
hs_status heap_page_put(void *page, uint32_t page_size, uint16_t slot, const void *tuple,
                        uint32_t len);

/* The state of a slot; HEAP_LP_UNUSED for a slot past the array. */
heap_lp_state heap_page_state(const void *page, uint16_t slot);
/* A NORMAL slot's tuple: where it is on the page and its length.
 * HS_ERR_NOENT for a slot that holds none; HS_ERR_CORRUPT if its pointer
 * leaves the tuple area. */
hs_status heap_page_get(const void *page, uint32_t page_size, uint16_t slot, void **tuple,
                        uint32_t *len);

/* NORMAL -> DEAD (the tuple's bytes are reclaimed by the next compaction),
 * DEAD -> UNUSED (its index entries are gone). Anything else is
 * HS_ERR_INVALID. */
hs_status heap_page_set_dead(void *page, uint32_t page_size, uint16_t slot);
hs_status heap_page_set_unused(void *page, uint32_t page_size, uint16_t slot);

/* Moves the NORMAL tuples together at the page's end, so the space of DEAD
 * ones (and any holes) becomes free; trailing UNUSED line pointers are
 * dropped. Slots keep their numbers. Returns the bytes freed. */
uint32_t heap_page_compact(void *page, uint32_t page_size);

uint16_t heap_page_flags(const void *page);
void heap_page_set_flags(void *page, uint16_t flags);
uint64_t heap_page_prune_xid(const void *page);
void heap_page_set_prune_xid(void *page, uint64_t xid);

/* Checks the whole page: bounds, every NORMAL tuple inside the tuple area,
 * no two overlapping. HS_ERR_CORRUPT naming the first problem. */
hs_status heap_page_check(const void *page, uint32_t page_size);

#endif
