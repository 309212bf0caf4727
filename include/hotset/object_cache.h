/*
 * hotset/object_cache.h — a concurrent keyed cache of objects of any size,
 * each charged against a capacity in bytes: the shape of an LSM engine's
 * block cache (RocksDB's rocksdb::Cache is the first user:
 * adapters/rocksdb). The frame cache (hotset/frame_cache.h) holds fixed-size
 * page frames that it allocates itself; this cache holds the engine's own
 * objects — an opaque value pointer, a charge in bytes, and a release
 * callback the cache calls when the last holder lets go of an entry that has
 * left the cache.
 *
 * An entry is found by its key (a byte string, copied at insert). A lookup
 * or an insert that asks for one returns a *handle*: the entry, referenced
 * until the handle is released. A referenced entry is never evicted, and
 * its value stays valid until its last reference is released, even if it
 * was erased, replaced by a new insert of its key, or the capacity shrank
 * meanwhile: it has then left the key table (lookups no longer find it) but
 * its charge stays counted in the usage until it is freed.
 *
 * Capacity: the sum of the charges of the entries held (pinned or not,
 * in the table or not) is the usage. An insert that would take the usage
 * beyond the capacity first evicts unreferenced entries, victims named by
 * the policy. If not enough of them can be evicted (the rest are
 * referenced), a cache with a strict capacity limit refuses the insert
 * (HS_ERR_NO_BUFFERS) when the caller asked for a handle, and otherwise
 * takes the value and frees it at once, as if it had been inserted and
 * evicted (the caller lets go of the value either way); without the strict
 * limit the insert succeeds and the usage goes past the capacity until
 * references are released.
 *
 * Shards: the key space is split by hash into 2^shard_bits shards, each
 * with its own lock, key table, policy and share of the capacity, so
 * threads on different keys rarely meet. Capacity, usage and the strict
 * limit are per shard, as in RocksDB's own caches; the totals are sums.
 *
 * Scans: each thread's accesses are watched by a scan detector. A run of
 * misses on keys near each other in one stream — the next blocks of a file,
 * as an iterator or a compaction reads them — longer than `scan_run`, is
 * taken for a scan: its entries reach the policy as ring accesses
 * (HS_HINT_RING, "used once"), so they are the next victims and do not push
 * out the entries other threads keep using. An entry a scan brought in and
 * an ordinary access then finds is an ordinary entry from then on. Where a
 * key sits (its stream and position) is the engine's to say, through
 * `locate` (the RocksDB adapter reads it from RocksDB's block cache keys);
 * without it, no scan is detected.
 *
 * Names, errors, ownership and threads follow docs/api.md; a call says
 * only where it differs. Every call is thread-safe; a handle may be
 * released by another thread than the one that got it.
 */
#ifndef HOTSET_OBJECT_CACHE_H
#define HOTSET_OBJECT_CACHE_H

#include "hotset/status.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

typedef struct hs_object_cache hs_object_cache;
/* A referenced entry. Opaque; valid until released. */
typedef struct hs_object hs_object;

/* Called once for each entry the cache lets go of — evicted, erased,
 * replaced, refused under the strict limit, or at destroy — after its last
 * reference is released, with no lock of the cache held: it may call the
 * cache. `tag` is what the insert gave (the RocksDB adapter keeps the
 * engine's own deleter there). */
typedef void (*hs_object_free_fn)(const void *key, size_t key_len, void *value, void *tag,
                                  void *ctx);

/* Where a key sits, for the scan detector: the stream it belongs to (a
 * file) and its position in it (an offset). Returns false when the key has
 * no place in any stream (it is then never part of a scan). */
typedef bool (*hs_object_locate_fn)(const void *key, size_t key_len, uint64_t *stream,
                                    uint64_t *position, void *ctx);

/* How an entry stands when it is inserted. */
typedef enum hs_object_priority {
  HS_OBJECT_NORMAL = 0, /* an ordinary entry */
  HS_OBJECT_HIGH = 1,   /* as if looked up twice on arrival (index and
                           filter blocks) */
  HS_OBJECT_LOW = 2     /* a scan's entry from the start: the first victim
                           until looked up (RocksDB's BOTTOM; its LOW, the
                           data blocks' priority, is NORMAL here) */
} hs_object_priority;

typedef struct hs_object_cache_options {
  uint64_t capacity;    /* bytes; 0 holds nothing unreferenced */
  int shard_bits;       /* 0 .. 16; -1: one shard per 512 KiB of capacity,
                           at most 64 (RocksDB's rule) */
  bool strict_capacity; /* refuse rather than overfill (see above) */
  const char *policy;   /* a hotset policy spec; NULL: the default, s3fifo */
  /* The charge an entry is expected to have, used only to size each
   * shard's policy and home array when it is created (the policy grows if
   * entries turn out smaller; the entries beyond the home array's room go
   * to an overflow table, where a hit costs a second cache miss); 0:
   * 4 KiB. */
  uint32_t expected_charge;
  /* Consecutive misses of one thread near each other in a stream that make
   * a scan; 0: no detection. 16 by default. */
  uint32_t scan_run;
  /* A position is "near" the previous one in the same stream when they
   * differ by at most scan_gap, or when they differ only in scan_gap's
   * highest bit and the bits below it (p1 ^ p2 < 2^bitlen(scan_gap): keys
   * made by XOR-ing an offset into a per-file base, as RocksDB's are, move
   * that way). 64 Ki by default: the next block of a file, with a
   * readahead's worth skipped. */
  uint64_t scan_gap;
  /* An insert of a key already cached: false (the default) replaces the
   * cached entry, as RocksDB's LRUCache does; true keeps it, as its
   * HyperClockCache does, and takes the insert for a hit on it — right
   * where a key always names the same bytes (RocksDB's block cache keys
   * name a block of an immutable file), and cheaper: nothing is evicted,
   * and the entry keeps its standing. The new value is then freed at once
   * through free_object or, with `out`, held by an entry of its own that
   * no lookup finds, charged in the usage until its last release. */
  bool keep_cached;
  hs_object_locate_fn locate; /* NULL: no key has a place; no scans */
  hs_object_free_fn free_object;
  void *ctx; /* passed to locate and free_object */
} hs_object_cache_options;

/* Defaults: 64 MiB, shard_bits -1, not strict, s3fifo, 4 KiB expected,
 * scan_run 16, scan_gap 64 KiB, replacing, no locate, no free_object. */
void hs_object_cache_options_init(hs_object_cache_options *o);

hs_status hs_object_cache_create(const hs_object_cache_options *o, hs_object_cache **out);
/* Frees every entry (calling free_object for each). Every handle must have
 * been released (HS_ERR_MISUSE and nothing freed otherwise). NULL: HS_OK. */
hs_status hs_object_cache_destroy(hs_object_cache *c);

/* What an insert that returned HS_OK did with an entry of the same key. */
typedef enum {
  HS_OBJECT_ADDED = 0,    /* none was cached (or the insert was refused
                           * and its value freed: as if evicted at once) */
  HS_OBJECT_REPLACED = 1, /* one was cached, and the new entry replaced it */
  HS_OBJECT_KEPT = 2      /* keep_cached: one was cached and stays; the new
                           * value was freed, or with `out` is held by an
                           * entry no lookup finds */
} hs_object_insert_outcome;

/* Inserts `value` under a copy of `key`, charged `charge` bytes, replacing
 * (erasing) any entry of the same key — or, with keep_cached, keeping it
 * (see the option); `outcome` (may be NULL) says which, when HS_OK. With
 * `out`, returns the new entry
 * referenced; without, it is released at once. HS_ERR_NO_BUFFERS (strict
 * limit, `out` given, no room): nothing inserted, the value is still the
 * caller's, *out NULL. HS_ERR_NOMEM: likewise. With `out` NULL, a strict
 * refusal frees the value through free_object and returns HS_OK, and so
 * does an insert without `out`, strict or not, of a charge larger than its
 * shard's whole capacity. A charge of 0 counts 0 in the usage (1 byte
 * inside the policy). */
hs_status hs_object_cache_insert(hs_object_cache *c, const void *key, size_t key_len, void *value,
                                 size_t charge, void *tag, hs_object_priority priority,
                                 hs_object **out, hs_object_insert_outcome *outcome);
/* The entry for `key`, referenced, or NULL when it is not cached. */
hs_object *hs_object_cache_lookup(hs_object_cache *c, const void *key, size_t key_len);
/* Another reference to an entry the caller holds a reference to. */
hs_status hs_object_ref(hs_object_cache *c, hs_object *h);
/* Drops one reference. With `erase_if_last`, an entry whose last reference
 * this was leaves the cache; so does one whose shard is over its capacity.
 * Returns true when the entry was freed now. An entry with no reference:
 * HS_ERR_MISUSE in hs_last_error(), false. */
bool hs_object_release(hs_object_cache *c, hs_object *h, bool erase_if_last);

/* What a referenced entry holds. */
void *hs_object_value(const hs_object *h);
size_t hs_object_charge(const hs_object *h);
void *hs_object_tag(const hs_object *h);
const void *hs_object_key(const hs_object *h, size_t *key_len);

/* Takes the entry for `key` out of the table: freed now if unreferenced,
 * else when its last reference is released. */
void hs_object_cache_erase(hs_object_cache *c, const void *key, size_t key_len);
/* Frees every unreferenced entry. */
void hs_object_cache_erase_unreferenced(hs_object_cache *c);

/* A new capacity; unreferenced entries beyond it are evicted, victims
 * first. */
void hs_object_cache_set_capacity(hs_object_cache *c, uint64_t capacity);
void hs_object_cache_set_strict(hs_object_cache *c, bool strict);
bool hs_object_cache_strict(const hs_object_cache *c);
uint64_t hs_object_cache_capacity(const hs_object_cache *c);
/* Charges of every entry held, in the table or not yet freed. */
uint64_t hs_object_cache_usage(const hs_object_cache *c);
/* Charges of the referenced entries. */
uint64_t hs_object_cache_pinned_usage(const hs_object_cache *c);
/* Entries in the key table. */
uint64_t hs_object_cache_count(const hs_object_cache *c);
/* A new id, unique in this cache (RocksDB's NewId). */
uint64_t hs_object_cache_new_id(hs_object_cache *c);

/* Calls `fn` once for each entry in the key table, a shard's worth (at
 * most `per_lock` entries; 0: 256) under its lock at a time: `fn` must not
 * call the cache. Entries inserted or erased meanwhile may or may not be
 * seen; none is seen twice. */
void hs_object_cache_for_each(hs_object_cache *c,
                              void (*fn)(const void *key, size_t key_len, void *value,
                                         size_t charge, void *tag, void *arg),
                              void *arg, size_t per_lock);

typedef struct hs_object_cache_stats {
  uint64_t lookups, hits, misses;
  uint64_t inserts;
  uint64_t refusals;      /* inserts the strict limit refused */
  uint64_t evictions;     /* unreferenced entries the policies gave up */
  uint64_t erasures;      /* erased, replaced or erased at release */
  uint64_t kept;          /* inserts of a cached key that kept it (keep_cached) */
  uint64_t scan_accesses; /* lookups and inserts inside a detected scan */
  uint64_t scans;         /* scans detected */
  uint64_t usage, pinned_usage, capacity, count;
  uint32_t shards;
} hs_object_cache_stats;

hs_status hs_object_cache_stats_get(const hs_object_cache *c, hs_object_cache_stats *out);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
