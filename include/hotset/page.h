/*
 * hotset/page.h — the small header hotset keeps at the start of every page
 * when the pool runs with checksums (hs_pool_options.checksums).
 *
 * Layout (little-endian), HS_PAGE_HEADER_SIZE = 16 bytes:
 *
 *    0  u64 lsn       the end LSN of the last log record that changed the
 *                     page, as it was when the page was written: recovery
 *                     applies a record only to a page whose LSN is older,
 *                     and a page read back keeps its LSN (WAL before data
 *                     holds for it too)
 *    8  u32 checksum  CRC-32C of the block number, then bytes [0, 8) and
 *                     [12, page_size) — the whole page but this field
 *   12  u16 magic     HS_PAGE_MAGIC: tells a written page from zeros
 *   14  u16 system    the data directory's mark (hs_page_system_tag of its
 *                     system id; never 0): a file copied in from another
 *                     directory passes its checksums, but its pages carry
 *                     another mark, and the pool refuses them. 0 on pages
 *                     stamped without one (hs_page_stamp)
 *
 * The engine owns bytes [HS_PAGE_HEADER_SIZE, page_size): it must not store
 * anything in the first 16 bytes of a page it reads through a pool with
 * checksums on (the pool fills them in on the copy it writes, so what the
 * engine leaves there is overwritten on disk). A page of all zeros — a block
 * added by an extension and never written — is valid and has LSN 0, as in
 * PostgreSQL (PageIsNew).
 *
 * The block number is folded into the checksum so that a page written to
 * the wrong place (or a file's blocks shuffled) fails it, as PostgreSQL's
 * pg_checksum_page does. hotset uses CRC-32C rather than PostgreSQL's
 * 16-bit FNV-derived sum because the log already computes it with the
 * SSE4.2 instruction: 32 bits catch every burst up to 32 bits long.
 *
 * Names, errors, ownership and threads follow docs/api.md; a call says
 * only where it differs.
 */
#ifndef HOTSET_PAGE_H
#define HOTSET_PAGE_H

#include "hotset/storage.h"

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

#define HS_PAGE_HEADER_SIZE 16u
#define HS_PAGE_MAGIC       0x4853u /* "HS" */

/* The LSN stored in a page's header (0 for a page of zeros). */
uint64_t hs_page_lsn(const void *page);

/* The checksum a page at `block` should carry. */
uint32_t hs_page_checksum(const void *page, uint32_t page_size, hs_blockno block);

/* Fills in the header of a page about to be written: its LSN, the magic and
 * its checksum (computed last); the system mark 0. */
void hs_page_stamp(void *page, uint32_t page_size, hs_blockno block, uint64_t lsn);
/* The same, with the system mark `system_tag` (what the pool writes). */
void hs_page_stamp_system(void *page, uint32_t page_size, hs_blockno block, uint64_t lsn,
                          uint16_t system_tag);
/* The mark of a directory whose control file says `system_id`: 16 bits of
 * it, never 0 (one foreign directory in 65,535 shares a directory's). */
uint16_t hs_page_system_tag(uint64_t system_id);
/* The system mark a page carries (0 for zeros or a page stamped without). */
uint16_t hs_page_system(const void *page);

/* Whether a page read from `block` is intact: all zeros, or the magic and
 * a checksum that matches. *expected and *found (may be NULL) are the
 * checksum the page should carry and the one it does (both 0 for zeros). */
bool hs_page_verify(const void *page, uint32_t page_size, hs_blockno block, uint32_t *expected,
                    uint32_t *found);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
