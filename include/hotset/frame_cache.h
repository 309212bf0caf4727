/*
 * hotset/frame_cache.h — a cache of page frames for an engine that does its
 * own I/O: page memory, a key → frame table, pins, and replacement by any
 * hotset policy (hotset/policy.h), with the engine's scans detected and
 * kept from pushing out its hot pages. The buffer pool (hotset/pool.h)
 * reads and writes its own pages; this is the layer below that, for an
 * engine whose page cache only holds memory — SQLite's pluggable page cache
 * is the first user (adapters/sqlite).
 *
 * A frame is fetched by key (a page number), pinned until unpinned, and
 * never evicted while pinned. An unpinned frame keeps its content and key
 * until the policy chooses it as a victim, or the engine discards it. The
 * cache holds at most `capacity` frames in the policy; a fetch that must
 * succeed while every one of them is pinned gets an overflow frame outside
 * the policy (SQLite asks for that). A frame unpinned while the cache holds
 * more than its capacity is dropped; an overflow frame unpinned when there
 * is room takes a free slot.
 *
 * Scans: a run of fetches that move through the keys — up or down, with
 * small gaps and a few strays allowed, or a run of misses on keys not
 * fetched lately — longer than `scan_run` is taken for a scan
 * (docs/frame-cache.md gives the rules), and its pages reach the policy as
 * ring accesses (HS_HINT_RING, at the victim end where the policy has one),
 * so they stand at "used once" and are the next victims; once the cache is
 * full the scan also recycles its own last frames (a ring of capacity/8, at
 * most 32, as PostgreSQL's scans do), since a clock's hand would otherwise
 * wear down the hot pages' counts on its many turns. A scan that turns out
 * to fit the cache (it misses on pages its own ring just recycled) is
 * cached like any page from then on. The engine need not say it is
 * scanning.
 *
 * Thread safety: every call on one cache takes that cache's mutex, so
 * threads may share a cache; distinct caches share nothing. An engine
 * that serializes its calls itself may drop the mutex (caller_serializes);
 * the statistics stay readable from any thread.
 *
 * Names, errors, ownership and threads follow docs/api.md; a call says
 * only where it differs.
 */
#ifndef HOTSET_FRAME_CACHE_H
#define HOTSET_FRAME_CACHE_H

#include "hotset/status.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* What an engine sees of a frame. The two pointers come first and stay
 * valid while the frame is pinned (an adapter may hand the frame out as
 * its own two-pointer page handle, as SQLite's sqlite3_pcache_page). */
typedef struct hs_frame {
  void *data;  /* frame_bytes of page content */
  void *extra; /* extra_bytes the engine keeps beside it; zeroed (all of
                  them, or the options' extra_zeroed first ones) when the
                  frame is created for its key */
} hs_frame;

typedef struct hs_frame_cache hs_frame_cache;

typedef struct hs_frame_cache_options {
  uint32_t frame_bytes; /* page size; 512 .. 65536 */
  uint32_t extra_bytes; /* per frame, beside the page; may be 0 */
  /* frames the policy holds (100 by default). 0: none is kept once it is
   * unpinned (every frame is an overflow frame) */
  uint32_t capacity;
  const char *policy; /* a hotset policy spec; NULL: clock-sweep */
  /* false: nothing is evicted (an engine's in-memory database): frames
   * leave only when discarded or truncated, and capacity does not bound
   * them */
  bool purgeable;
  uint32_t scan_run; /* consecutive keys that make a scan; 0: no detection */
  /* A key the engine fetches at the start of every statement or read
   * transaction (SQLite: page 1, whose header it checks each time), when
   * there is one: its fetch ends any run the scan detector is following,
   * so a scan's run does not go on into the lookups after it, nor a
   * lookup's into the scan. Used when has_boundary_key is set. */
  uint64_t boundary_key;
  bool has_boundary_key;
  /* The engine never calls one cache from two threads at once (SQLite
   * calls a page cache only under its owner's lock): the cache takes no
   * mutex of its own. Off by default. */
  bool caller_serializes;
  /* Recycle an unpinned frame rather than fill the last free slot: SQLite's
   * own cache allocates only while count + 1 < capacity, so a cache of N
   * pages used one at a time holds N - 1 (PRAGMA cache_size = 1 and 2 keep
   * one page). An adapter that must count pages as SQLite does sets it. */
  bool recycle_early;
  /* Where frame memory comes from, for an engine that accounts for its own
   * (SQLite: sqlite3_malloc64 and sqlite3_free, so sqlite3_memory_used and
   * its heap limits cover the cache). Both or neither; a block need only
   * be 8-byte aligned; alloc_block may return NULL (the fetch that needed
   * the frame then returns HS_ERR_NOMEM). NULL: the C library's, 64-byte aligned.
   * The cache's own tables stay on the C library's heap. */
  void *(*alloc_block)(size_t bytes, void *ctx);
  void (*free_block)(void *block, void *ctx);
  /* Whether the engine is short of memory now (SQLite: at its soft heap
   * limit). While it is, a new frame takes an unpinned frame's place rather
   * than new memory, and HS_FETCH_CREATE refuses when fewer frames are
   * unpinned than pinned. NULL: never. */
  bool (*under_pressure)(void *ctx);
  void *memory_ctx; /* passed to the three above */
  /* How many of the extra bytes, from the first, a created frame has
   * zeroed: all of them by default (UINT32_MAX). SQLite needs only the
   * first pointer's worth zeroed (it sets up the rest itself when it finds
   * that zero), and its own cache zeroes no more. (Last: added in 0.3.) */
  uint32_t extra_zeroed;
} hs_frame_cache_options;

/* Defaults: 4096-byte frames, no extra, 100 frames, clock-sweep,
 * purgeable, scan_run 32. */
void hs_frame_cache_options_init(hs_frame_cache_options *o);

/* o NULL: the defaults. */
hs_status hs_frame_cache_create(const hs_frame_cache_options *o, hs_frame_cache **out);
/* Frees every frame, pinned or not. */
void hs_frame_cache_destroy(hs_frame_cache *c);

typedef enum hs_fetch_mode {
  HS_FETCH_LOOKUP = 0, /* only if cached */
  /* create it if that is easy: *out NULL (no error) when 90 % of capacity
   * (rounded down) or more is pinned, or the engine is under memory
   * pressure and fewer frames are unpinned than pinned — SQLite's own
   * cache's rule, so the engine can free (spill) some first */
  HS_FETCH_CREATE = 1,
  /* create it whatever it takes: recycle any unpinned frame, else an
   * overflow frame; HS_ERR_NOMEM only when memory runs out */
  HS_FETCH_CREATE_HARD = 2
} hs_fetch_mode;

/* The frame for `key`, pinned, in *out (fetching a pinned frame again
 * returns it, still pinned once). HS_OK with *out NULL when it is not cached
 * and `mode` did not create it (a lookup that missed, or HS_FETCH_CREATE
 * refusing because the cache is full: neither is an error); HS_ERR_NOMEM
 * (*out NULL) when the frame's memory could not be had — alloc_block
 * returned NULL, or the cache's own tables could not grow; HS_ERR_MISUSE for
 * a NULL cache or out or an unknown mode. *created (if given) says whether
 * the frame was created now. */
hs_status hs_frame_cache_fetch(hs_frame_cache *c, uint64_t key, hs_fetch_mode mode, hs_frame **out,
                               bool *created);
/* hs_frame_cache_fetch for an engine's every page access, in fewer
 * instructions (no status to build, no handle stored through a pointer):
 * the frame, pinned, or NULL where hs_frame_cache_fetch's *out would be
 * NULL. It records HS_ERR_NOMEM or HS_ERR_MISUSE in hs_last_error() when
 * that is why, and nothing for a lookup that missed or a refused create;
 * an engine that must tell the three apart calls hs_frame_cache_fetch.
 * *created (if given) is set true when the frame was created now and left
 * alone otherwise: the caller sets it false first. */
hs_frame *hs_frame_cache_get(hs_frame_cache *c, uint64_t key, hs_fetch_mode mode, bool *created);
/* Unpins; `discard` drops the frame (its content is gone). An overflow
 * frame is dropped whatever `discard` says. HS_ERR_MISUSE, changing
 * nothing, for a frame that is not pinned (a debug build stops). */
hs_status hs_frame_cache_unpin(hs_frame_cache *c, hs_frame *f, bool discard);
/* The frame's key becomes `new_key`; a frame already cached under
 * `new_key` (which must not be pinned; if it is, it leaves the key table
 * but its memory stays valid until it is unpinned) is dropped.
 * HS_ERR_NOMEM if the key table or the policy could not take the frame
 * under its new key: it stays pinned and valid, but a fetch of the new key
 * may not find it. */
hs_status hs_frame_cache_rekey(hs_frame_cache *c, hs_frame *f, uint64_t new_key);
/* Drops every frame with key ≥ limit, pinned ones too: a pinned one leaves
 * the key table at once, and its memory stays valid (and counted) until it
 * is unpinned. */
void hs_frame_cache_truncate(hs_frame_cache *c, uint64_t limit);
/* A new capacity (0 or more). Unpinned frames beyond it are evicted,
 * victims first; pinned ones stay until unpinned. */
hs_status hs_frame_cache_set_capacity(hs_frame_cache *c, uint32_t capacity);
/* Frees the memory of every unpinned frame (they leave the cache), and of
 * the spare frames kept for reuse. A non-purgeable cache keeps its frames
 * (they are the engine's only copy) and frees only the spare ones. */
void hs_frame_cache_shrink(hs_frame_cache *c);
/* Frames held now, pinned or not. */
uint32_t hs_frame_cache_count(hs_frame_cache *c);
uint64_t hs_frame_key(const hs_frame *f);

typedef struct hs_frame_cache_stats {
  uint64_t fetches;      /* every fetch */
  uint64_t hits;         /* found cached */
  uint64_t misses;       /* not cached (created or not) */
  uint64_t creates;      /* frames created for their key */
  uint64_t refusals;     /* HS_FETCH_CREATE gave no frame: the cache was full */
  uint64_t evictions;    /* unpinned frames the policy gave up */
  uint64_t overflows;    /* frames created outside the policy (all pinned) */
  uint64_t discards;     /* dropped by unpin(discard), rekey or truncate */
  uint64_t scan_fetches; /* fetches inside a detected scan */
  uint32_t pinned, count, capacity;
} hs_frame_cache_stats;

hs_status hs_frame_cache_stats_get(const hs_frame_cache *c, hs_frame_cache_stats *out);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
