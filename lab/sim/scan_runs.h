/*
 * sim/scan_runs.h — finding the sequential scans in a trace, and
 * PostgreSQL's rule for when a scan reads through a ring.
 *
 * PostgreSQL decides at the start of a sequential scan (initscan) whether
 * it reads through a bulkread ring: when the relation has more blocks than
 * a quarter of shared buffers. A trace does not say which accesses were a
 * sequential scan, so they are found: an access stream — one process's
 * accesses to one relation fork (per pid where the trace has pids, else all
 * processes together) — is in a *run* while each access reads the block
 * after the one before (or the same block again, or wraps from the last
 * block to block 0, as a synchronized scan that started mid-relation does).
 * A run's first access starts a new scan, which gets a new, empty ring, as
 * every scan in PostgreSQL gets its own strategy. A scan reads each block
 * once, so a run that has covered its whole relation ends there: the next
 * block (block 0 after the last, when scans follow each other) starts the
 * next scan. That matters: each finished scan leaves its ring's 32 pages
 * in the pool, and on a real PostgreSQL 15 trace of 30 scans the next
 * scans find hundreds of such pages each; read as one endless run, the
 * trace would leave none and miss 6 % more than the server did. A run shorter than
 * HS_MIN_SCAN_RUN accesses is taken for chance (an index lookup reading
 * neighbouring blocks), not for a scan.
 *
 * Page ids are read as PostgreSQL pages (hs_pg_page_id): relation fork =
 * id >> 28, block = id & 0x0fffffff; a relation's size is its highest
 * block read, plus one — what the replay makes its files from. Whether a
 * run's relation is "larger than a quarter of the pool" depends on the
 * pool, so the runs are found once per trace and the rule applied per pool
 * size.
 */
#ifndef HOTSET_SIM_SCAN_RUNS_H
#define HOTSET_SIM_SCAN_RUNS_H

#include "hotset/status.h"

#include <stdbool.h>
#include <stdint.h>

/* In hs_scan_runs.stream: the request starts a run (a new scan). */
#define HS_RUN_START (1u << 31)
/* The shortest run taken for a scan, in distinct blocks: an index lookup
 * may read two or three blocks in order by chance, a scan reads the
 * relation. */
#define HS_MIN_SCAN_RUN 4u
/* PostgreSQL's bulkread ring: 256 KiB, 32 buffers of 8 KiB. */
#define HS_PG_BULKREAD_BUFFERS 32u

typedef struct hs_scan_runs {
  uint32_t *stream;     /* per request: 0 = in no run; else the stream's
                           number + 1, with HS_RUN_START on a run's first */
  uint32_t *rel_blocks; /* per stream: its relation fork's blocks */
  uint32_t nstreams;
} hs_scan_runs;

/* Finds the runs of `n` requests with page ids `ids` and processes `pids`
 * (NULL: one process). On failure *out is empty. */
hs_status hs_scan_runs_find(const uint64_t *ids, const uint32_t *pids, uint64_t n,
                            hs_scan_runs *out);
void hs_scan_runs_free(hs_scan_runs *r);

/* initscan's rule: a scan of a relation of `rel_blocks` blocks uses a ring
 * in a pool of `pool_pages` buffers when rel_blocks > pool_pages / 4. */
static inline bool hs_pg_scan_uses_ring(uint32_t rel_blocks, uint64_t pool_pages) {
  return rel_blocks > pool_pages / 4;
}

/* GetAccessStrategy's size: 32 buffers, at most an eighth of the pool. */
static inline uint32_t hs_pg_bulkread_ring_size(uint64_t pool_pages) {
  return pool_pages / 8 < HS_PG_BULKREAD_BUFFERS ? (uint32_t)(pool_pages / 8)
                                                 : HS_PG_BULKREAD_BUFFERS;
}

#endif
