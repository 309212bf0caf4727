/*
 * hotset/syncscan.h — synchronized sequential scans, after PostgreSQL's
 * syncscan.c.
 *
 * When a scan of a relation starts while another scan of it is under way,
 * the new one starts where the other one is and wraps around: the two then
 * read the same blocks at about the same time, so the second one's reads are
 * hits in the first one's ring instead of a second pass over the disk. The
 * pool keeps a small table of recently reported positions, one per relation
 * (least recently reported forgotten first); scans report their position
 * every HS_SYNCSCAN_REPORT_INTERVAL blocks.
 *
 * Names, errors, ownership and threads follow docs/api.md; a call says
 * only where it differs.
 */
#ifndef HOTSET_SYNCSCAN_H
#define HOTSET_SYNCSCAN_H

#include "hotset/pool.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The public API: exported from libhotset.so, which is otherwise built with
 * -fvisibility=hidden so its internals stay private. */
#pragma GCC visibility push(default)

#define HS_SYNCSCAN_REPORT_INTERVAL 16u
#define HS_SYNCSCAN_TABLE_SIZE      20u

/* Where a new scan of `rel` (of `nblocks` blocks) should start: the last
 * reported position of another scan of it, or 0. */
hs_blockno hs_syncscan_start(hs_pool *pool, hs_relid rel, hs_blockno nblocks);
/* Called by a scan for each block it reads; records the position every
 * HS_SYNCSCAN_REPORT_INTERVAL blocks (cheap otherwise). */
void hs_syncscan_report(hs_pool *pool, hs_relid rel, hs_blockno block);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
