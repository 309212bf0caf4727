/*
 * hotset_rocksdb.h — hotset as RocksDB's block cache (libhotset-rocksdb.so,
 * docs/rocksdb.md).
 *
 * A rocksdb::Cache on hotset's object cache (hotset/object_cache.h): any
 * hotset replacement policy, RocksDB's block cache keys read for scans (an
 * iterator's or a compaction's blocks reach the policy as "used once"), the
 * semantics of rocksdb::Cache as cache.h documents them (handles, deferred
 * deleters, strict capacity, charges). Built against RocksDB 7.8's cache.h.
 *
 *   rocksdb::BlockBasedTableOptions t;
 *   t.block_cache = hotset::NewHotsetCache(lru_options);   // was NewLRUCache
 *
 * An unmodified program gets it with
 * LD_PRELOAD=libhotset-rocksdb-preload.so (docs/rocksdb.md).
 */
#ifndef HOTSET_ROCKSDB_H
#define HOTSET_ROCKSDB_H

#include "hotset/object_cache.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <rocksdb/cache.h>
#include <string>

#ifndef HOTSET_ROCKSDB_API
#define HOTSET_ROCKSDB_API __attribute__((visibility("default")))
#endif

namespace hotset {

struct HotsetCacheOptions {
  /* Bytes (the unit of the charges). */
  size_t capacity = 32 << 20;
  /* 2^num_shard_bits shards, 0 .. 16; -1: one per 512 KiB of capacity, at
   * most 64 (RocksDB's rule for its own caches). */
  int num_shard_bits = -1;
  /* Insert refuses (Status::MemoryLimit) rather than overfill when the
   * referenced entries leave no room (cache.h). */
  bool strict_capacity_limit = false;
  /* A hotset policy spec (docs/policies.md): "lru", "arc",
   * "s3fifo:small=0.2"...; empty: s3fifo. */
  std::string policy;
  /* Consecutive misses of one thread on nearby blocks of one file that
   * make a scan; 0: no scan detection. */
  uint32_t scan_run = 16;
  /* How far (in RocksDB's key units: the block offset / 4) the next miss
   * may be from the last one and still continue the scan. */
  uint64_t scan_gap = 64 << 10;
  /* The charge an entry is expected to have (sizes each shard's policy;
   * it grows when entries are smaller); 0: 4 KiB. */
  size_t estimated_entry_charge = 0;
  /* An Insert of a key already cached: false replaces the cached entry,
   * as LRUCache does; true keeps it and takes the Insert for a hit on it,
   * as HyperClockCache does — right for a block cache, whose keys always
   * name the same bytes, and cheaper (nothing evicted, no standing lost).
   * The new value is then deleted at once, or, when a handle is asked
   * for, held by that handle alone (no Lookup finds it) until released. */
  bool keep_cached = false;
  /* Handed to rocksdb::Cache: RocksDB allocates the blocks it caches with
   * it (the cache itself allocates no value). */
  std::shared_ptr<rocksdb::MemoryAllocator> memory_allocator;
};

/* A new cache, or nullptr when the options are refused (a policy spec
 * hotset does not know or a cache cannot use, num_shard_bits out of
 * range, out of memory): then the reason goes to *error when `error` is
 * given, else one line on stderr. Nothing aborts. */
HOTSET_ROCKSDB_API std::shared_ptr<rocksdb::Cache> NewHotsetCache(const HotsetCacheOptions &options,
                                                                  std::string *error = nullptr);

/* From the options an LRU cache takes, so that a program switches with one
 * line: capacity, num_shard_bits, strict_capacity_limit and
 * memory_allocator are used; the pool ratios, use_adaptive_mutex and
 * metadata_charge_policy do not apply (the usage is the charges only, as
 * with kDontChargeCacheMetadata); a secondary_cache is refused (nullptr:
 * not supported). `policy` as in HotsetCacheOptions; scan detection on;
 * an Insert of a cached key replaces it, as LRUCache's does. */
HOTSET_ROCKSDB_API std::shared_ptr<rocksdb::Cache>
NewHotsetCache(const rocksdb::LRUCacheOptions &options, const std::string &policy = std::string(),
               std::string *error = nullptr);

/* True when `cache` is one NewHotsetCache made. */
HOTSET_ROCKSDB_API bool IsHotsetCache(const rocksdb::Cache &cache);

/* The cache's counts (hotset/object_cache.h: lookups, hits, evictions,
 * scans...). False, and *out untouched, when `cache` is not a hotset
 * cache. */
HOTSET_ROCKSDB_API bool GetHotsetStats(const rocksdb::Cache &cache, hs_object_cache_stats *out);

/* The policy's canonical spec ("s3fifo", "lru"...) as the cache was made
 * with, or "" when `cache` is not a hotset cache. */
HOTSET_ROCKSDB_API std::string GetHotsetPolicy(const rocksdb::Cache &cache);

} // namespace hotset

#endif
