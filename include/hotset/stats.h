/*
 * hotset/stats.h — I/O statistics per context, after PostgreSQL's pg_stat_io.
 *
 * Every buffer access is counted in one I/O context: `normal` for ordinary
 * reads, or the context of the buffer access strategy (ring) it ran under.
 * The counters mean what pg_stat_io's columns mean:
 *   hits       the block was found in the pool;
 *   reads      the block was read from its file into a buffer;
 *   writes     a dirty buffer was written to its file (evicted, flushed);
 *   extends    the relation grew by a block through the pool;
 *   evictions  a buffer holding a valid page was taken for another block;
 *   reuses     a ring slot's buffer was reused (rings only);
 *   rejects    a bulkread ring refused its slot's dirty buffer because its
 *              WAL was not yet durable, and took another (rings only);
 *   wal_flushes  the WAL-before-data callback had to flush the log before
 *              a write (calls that found the log already flushed don't count).
 * Counting is sharded per thread, so it costs the hit path no shared write.
 *
 * Names, errors, ownership and threads follow docs/api.md; a call says
 * only where it differs.
 */
#ifndef HOTSET_STATS_H
#define HOTSET_STATS_H

#include "hotset/status.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The public API: exported from libhotset.so, which is otherwise built with
 * -fvisibility=hidden so its internals stay private. */
#pragma GCC visibility push(default)

typedef enum hs_io_context {
  HS_IOCTX_NORMAL = 0,
  HS_IOCTX_BULKREAD,
  HS_IOCTX_BULKWRITE,
  HS_IOCTX_VACUUM,
  HS_IOCTX_COUNT
} hs_io_context;

typedef enum hs_io_counter {
  HS_STAT_HITS = 0,
  HS_STAT_READS,
  HS_STAT_WRITES,
  HS_STAT_EXTENDS,
  HS_STAT_EVICTIONS,
  HS_STAT_REUSES,
  HS_STAT_REJECTS,
  HS_STAT_WAL_FLUSHES,
  HS_STAT_READ_ERRORS,
  HS_STAT_WRITE_ERRORS,
  HS_STAT_COUNT
} hs_io_counter;

typedef struct hs_pool_stats {
  uint64_t count[HS_IOCTX_COUNT][HS_STAT_COUNT];
  uint32_t nbuffers;  /* frames in the pool */
  uint32_t page_size; /* bytes per page */
  uint32_t valid;     /* buffers holding a valid page at snapshot time */
  uint32_t dirty;     /* of which dirty */
  uint32_t pinned;    /* buffers pinned at snapshot time */
  uint64_t misuse;    /* calls refused because they broke a rule of the API
                         (a double release, an unlock without the lock...);
                         hs_last_error() said which at the time */
} hs_pool_stats;

/* The background writer's work, after pg_stat_bgwriter (hotset/pool.h,
 * hs_pool_bgwriter_stats_get). */
typedef struct hs_pool_bgwriter_stats {
  uint64_t rounds;           /* writer rounds run (the thread's and hs_pool_bgwriter_round) */
  uint64_t buffers_clean;    /* dirty buffers the writer wrote */
  uint64_t maxwritten_clean; /* rounds that stopped at bgwriter_lru_maxpages */
  uint64_t buffers_backend;  /* dirty victims a miss had to write itself (any context) */
  uint64_t buffers_alloc;    /* buffers taken for new pages (free list or policy; a ring
                                reusing its own slot is not an allocation, as in PostgreSQL) */
} hs_pool_bgwriter_stats;

const char *hs_io_context_name(hs_io_context ctx);
const char *hs_io_counter_name(hs_io_counter c);

/* Sum of one counter over every context. */
uint64_t hs_pool_stats_total(const hs_pool_stats *s, hs_io_counter c);
/* hits / (hits + reads) over every context, 0 when there was no access. */
double hs_pool_stats_hit_ratio(const hs_pool_stats *s);

/* The statistics as text in buf (len bytes, NUL-terminated): a readable
 * table — one row per context that saw any I/O, plus a total — or, with
 * `json`, one JSON object on one line:
 * {"nbuffers":..,"page_size":..,"valid":..,"dirty":..,"pinned":..,
 *  "hit_ratio":..,"misuse":..,"contexts":{"normal":{"hits":..,...},...},"total":{...}}
 * HS_ERR_INVALID (buf holds what fitted) if len is too small;
 * HS_POOL_STATS_FORMAT_BYTES always suffices. */
#define HS_POOL_STATS_FORMAT_BYTES 4096u
hs_status hs_pool_stats_format(const hs_pool_stats *s, bool json, char *buf, size_t len);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
