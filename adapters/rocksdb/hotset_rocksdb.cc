/*
 * adapters/rocksdb/hotset_rocksdb.cc — hotset as RocksDB's block cache: a
 * rocksdb::Cache whose every call is one call into an hs_object_cache
 * (hotset/object_cache.h), which holds the entries, counts references and
 * charges, and replaces them by a hotset policy. This file translates
 * RocksDB's words into the object cache's and reads RocksDB's block cache
 * keys for the scan detector; docs/rocksdb.md explains the mapping.
 *
 * The same file, compiled with HOTSET_ROCKSDB_PRELOAD, is the LD_PRELOAD
 * object (libhotset-rocksdb-preload.so): it also defines RocksDB's own
 * cache factories, so that an unmodified program's NewLRUCache and
 * HyperClockCacheOptions::MakeSharedCache return a hotset cache (the end
 * of this file).
 */
#include "hotset_rocksdb.h"

#include "hotset/policy.h"
#include "hotset/status.h"

#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <functional>

namespace hotset {
namespace {

const char kName[] = "HotsetCache";
const char kDefaultPolicy[] = "s3fifo";

/* RocksDB 7.8's block cache key is 16 bytes: 8 bytes that name the file
 * (the same for every block of it), then 8 bytes of a per-file base XOR-ed
 * with the block's offset / 4. The first half is the stream, the second
 * the position; the object cache's "near" rule takes positions that differ
 * only in low bits as neighbours, which is how XOR-ed offsets move. Other
 * entries (other key lengths: a table reader's or a memtable's charge)
 * have no place. docs/rocksdb.md gives the keys measured under db_bench. */
bool LocateBlock(const void *key, size_t key_len, uint64_t *stream, uint64_t *position,
                 void * /*ctx*/) {
  if (key_len != 16) return false;
  std::memcpy(stream, key, 8);
  std::memcpy(position, static_cast<const char *>(key) + 8, 8);
  return true;
}

hs_object_priority ToHotset(rocksdb::Cache::Priority p) {
  switch (p) {
  case rocksdb::Cache::Priority::HIGH:
    return HS_OBJECT_HIGH;
  case rocksdb::Cache::Priority::BOTTOM:
    return HS_OBJECT_LOW;
  case rocksdb::Cache::Priority::LOW:
    break;
  }
  return HS_OBJECT_NORMAL;
}

/* The deleter travels as the entry's tag. */
void *DeleterTag(rocksdb::Cache::DeleterFn d) {
  return reinterpret_cast<void *>(d);
}
rocksdb::Cache::DeleterFn TagDeleter(void *tag) {
  return reinterpret_cast<rocksdb::Cache::DeleterFn>(tag);
}

/* The spec as the policy itself spells it ("s3fifo:small=0.1,..."), for
 * GetPrintableOptions; the spec as given when no policy takes it. */
std::string CanonicalSpec(const std::string &spec) {
  hs_policy *p = nullptr;
  if (hs_policy_create(spec.c_str(), 1024, 1024, nullptr, &p) != HS_OK) return spec;
  std::string canonical = hs_policy_spec(p);
  hs_policy_destroy(p);
  return canonical;
}

class HotsetCache final : public rocksdb::Cache {
public:
  /* The object cache comes after (Attach): it is created with this
   * object as its callbacks' context. */
  HotsetCache(const HotsetCacheOptions &o, std::string policy)
      : rocksdb::Cache(o.memory_allocator), policy_(std::move(policy)),
        shard_bits_(o.num_shard_bits), scan_run_(o.scan_run), scan_gap_(o.scan_gap) {}

  void Attach(hs_object_cache *c) {
    c_ = c;
  }

  ~HotsetCache() override {
    if (!c_) return;
    if (!report_.empty()) Report();
    hs_status st = hs_object_cache_destroy(c_);
    if (st != HS_OK)
      std::fprintf(stderr,
                   "hotset-rocksdb: a HotsetCache was destroyed with handles still "
                   "referenced (%s): its entries are not freed\n",
                   hs_status_name(st));
  }

  /* The free_object callback: the deleter the entry was inserted with,
   * unless DisownData said to leave the values be. */
  static void FreeEntry(const void *key, size_t key_len, void *value, void *tag, void *ctx) {
    auto *self = static_cast<HotsetCache *>(ctx);
    rocksdb::Cache::DeleterFn d = TagDeleter(tag);
    if (d && !self->disowned_.load(std::memory_order_relaxed))
      d(rocksdb::Slice(static_cast<const char *>(key), key_len), value);
  }

  const char *Name() const override {
    return kName;
  }

  rocksdb::Status Insert(const rocksdb::Slice &key, void *value, size_t charge, DeleterFn deleter,
                         Handle **handle, Priority priority) override {
    hs_object *h = nullptr;
    hs_object_insert_outcome outcome;
    hs_status st =
        hs_object_cache_insert(c_, key.data(), key.size(), value, charge, DeleterTag(deleter),
                               ToHotset(priority), handle ? &h : nullptr, &outcome);
    if (handle) *handle = reinterpret_cast<Handle *>(h);
    /* OkOverwritten where RocksDB's own caches say it, which its block
     * cache counts as a redundant insert (BLOCK_CACHE_ADD_REDUNDANT):
     * LRUCache when it replaced an entry; HyperClockCache when it kept
     * the cached one and handed back the new value in an entry of its
     * own (without a handle it frees the value and says OK). */
    if (st == HS_OK)
      return outcome == HS_OBJECT_REPLACED || (outcome == HS_OBJECT_KEPT && handle)
                 ? rocksdb::Status::OkOverwritten()
                 : rocksdb::Status::OK();
    /* Not inserted, the value still ours: without a handle the cache
     * cleans it up (cache.h); with one, the caller does. A strict refusal
     * without a handle never comes here (the object cache frees the value
     * and says HS_OK, as RocksDB's LRUCache does). */
    if (!handle && deleter) deleter(key, value);
    if (st == HS_ERR_NO_BUFFERS)
      return rocksdb::Status::MemoryLimit("HotsetCache: insert refused, the referenced entries "
                                          "leave no room (strict capacity limit)");
    if (st == HS_ERR_NOMEM) return rocksdb::Status::MemoryLimit("HotsetCache: out of memory");
    return rocksdb::Status::Aborted("HotsetCache: insert failed", hs_last_error());
  }

  /* The secondary-cache flavour: there is no secondary cache, so it is
   * the plain insert with the helper's deleter. */
  rocksdb::Status Insert(const rocksdb::Slice &key, void *value, const CacheItemHelper *helper,
                         size_t charge, Handle **handle, Priority priority) override {
    if (!helper) return rocksdb::Status::InvalidArgument("HotsetCache: Insert without a helper");
    return Insert(key, value, charge, helper->del_cb, handle, priority);
  }

  Handle *Lookup(const rocksdb::Slice &key, rocksdb::Statistics * /*stats*/) override {
    return reinterpret_cast<Handle *>(hs_object_cache_lookup(c_, key.data(), key.size()));
  }

  Handle *Lookup(const rocksdb::Slice &key, const CacheItemHelper * /*helper*/,
                 const CreateCallback & /*create_cb*/, Priority /*priority*/, bool /*wait*/,
                 rocksdb::Statistics *stats) override {
    return Lookup(key, stats);
  }

  bool Ref(Handle *handle) override {
    return hs_object_ref(c_, Obj(handle)) == HS_OK;
  }

  bool Release(Handle *handle, bool erase_if_last_ref) override {
    return hs_object_release(c_, Obj(handle), erase_if_last_ref);
  }

  bool Release(Handle *handle, bool /*useful*/, bool erase_if_last_ref) override {
    return Release(handle, erase_if_last_ref);
  }

  void *Value(Handle *handle) override {
    return hs_object_value(Obj(handle));
  }

  void Erase(const rocksdb::Slice &key) override {
    hs_object_cache_erase(c_, key.data(), key.size());
  }

  uint64_t NewId() override {
    return hs_object_cache_new_id(c_);
  }

  void SetCapacity(size_t capacity) override {
    hs_object_cache_set_capacity(c_, capacity);
  }

  void SetStrictCapacityLimit(bool strict) override {
    hs_object_cache_set_strict(c_, strict);
  }

  bool HasStrictCapacityLimit() const override {
    return hs_object_cache_strict(c_);
  }

  size_t GetCapacity() const override {
    return static_cast<size_t>(hs_object_cache_capacity(c_));
  }

  size_t GetUsage() const override {
    return static_cast<size_t>(hs_object_cache_usage(c_));
  }

  size_t GetOccupancyCount() const override {
    return static_cast<size_t>(hs_object_cache_count(c_));
  }

  size_t GetUsage(Handle *handle) const override {
    return hs_object_charge(Obj(handle));
  }

  size_t GetPinnedUsage() const override {
    return static_cast<size_t>(hs_object_cache_pinned_usage(c_));
  }

  size_t GetCharge(Handle *handle) const override {
    return hs_object_charge(Obj(handle));
  }

  DeleterFn GetDeleter(Handle *handle) const override {
    return TagDeleter(hs_object_tag(Obj(handle)));
  }

  /* The values are left to the process's end: no deleter runs from now
   * on, not even at the cache's destruction (hotset's own memory is still
   * freed then). */
  void DisownData() override {
    disowned_.store(true, std::memory_order_relaxed);
  }

  void ApplyToAllEntries(const std::function<void(const rocksdb::Slice &key, void *value,
                                                  size_t charge, DeleterFn deleter)> &callback,
                         const ApplyToAllEntriesOptions &opts) override {
    using Callback = std::function<void(const rocksdb::Slice &, void *, size_t, DeleterFn)>;
    hs_object_cache_for_each(
        c_,
        [](const void *key, size_t key_len, void *value, size_t charge, void *tag, void *arg) {
          (*static_cast<const Callback *>(arg))(
              rocksdb::Slice(static_cast<const char *>(key), key_len), value, charge,
              TagDeleter(tag));
        },
        const_cast<Callback *>(&callback), opts.average_entries_per_lock);
  }

  void EraseUnRefEntries() override {
    hs_object_cache_erase_unreferenced(c_);
  }

  std::string GetPrintableOptions() const override {
    hs_object_cache_stats s;
    hs_object_cache_stats_get(c_, &s);
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "    policy : %s\n"
                  "    num_shard_bits : %d\n"
                  "    shards : %" PRIu32 "\n"
                  "    capacity : %" PRIu64 "\n"
                  "    strict_capacity_limit : %d\n"
                  "    scan_run : %" PRIu32 "%s\n"
                  "    scan_gap : %" PRIu64 "\n",
                  policy_.c_str(), shard_bits_, s.shards, s.capacity,
                  hs_object_cache_strict(c_) ? 1 : 0, scan_run_,
                  scan_run_ ? "" : " (no scan detection)", scan_gap_);
    return buf;
  }

  hs_object_cache *Raw() const {
    return c_;
  }
  const std::string &Policy() const {
    return policy_;
  }
  /* A statistics line on stderr at destruction, starting with `what`,
   * if the cache was used (the preload's HOTSET_ROCKSDB_VERBOSE). */
  void ReportAtEnd(std::string what) {
    report_ = std::move(what);
  }

private:
  static hs_object *Obj(Handle *h) {
    return reinterpret_cast<hs_object *>(h);
  }

  void Report() const {
    hs_object_cache_stats s;
    /* RocksDB makes caches it never uses (options objects): not worth a line. */
    if (hs_object_cache_stats_get(c_, &s) != HS_OK || (s.lookups == 0 && s.inserts == 0)) return;
    std::fprintf(
        stderr,
        "hotset-rocksdb: %s policy=%s lookups=%" PRIu64 " hits=%" PRIu64
        " (%.2f%%) inserts=%" PRIu64 " refusals=%" PRIu64 " evictions=%" PRIu64 " erasures=%" PRIu64
        " kept=%" PRIu64 " scans=%" PRIu64 " scan_accesses=%" PRIu64 "\n",
        report_.c_str(), policy_.c_str(), s.lookups, s.hits,
        s.lookups ? 100.0 * static_cast<double>(s.hits) / static_cast<double>(s.lookups) : 0.0,
        s.inserts, s.refusals, s.evictions, s.erasures, s.kept, s.scans, s.scan_accesses);
  }

  hs_object_cache *c_ = nullptr;
  std::string policy_;
  int shard_bits_;
  uint32_t scan_run_;
  uint64_t scan_gap_;
  std::atomic<bool> disowned_{false};
  std::string report_;
};

const HotsetCache *AsHotset(const rocksdb::Cache &cache) {
  /* Only HotsetCache answers this name (the pointer, not just the text). */
  if (cache.Name() != kName) return nullptr;
  return static_cast<const HotsetCache *>(&cache);
}

std::shared_ptr<rocksdb::Cache> Refuse(const std::string &why, std::string *error) {
  if (error)
    *error = why;
  else
    std::fprintf(stderr, "hotset-rocksdb: %s\n", why.c_str());
  return nullptr;
}

} // namespace

std::shared_ptr<rocksdb::Cache> NewHotsetCache(const HotsetCacheOptions &options,
                                               std::string *error) {
  if (options.num_shard_bits < -1 || options.num_shard_bits > 16)
    return Refuse(
        "num_shard_bits " + std::to_string(options.num_shard_bits) + " is outside -1 .. 16", error);
  if (options.estimated_entry_charge > UINT32_MAX)
    return Refuse("estimated_entry_charge " + std::to_string(options.estimated_entry_charge) +
                      " is above 4 GiB",
                  error);
  const std::string spec = options.policy.empty() ? kDefaultPolicy : options.policy;
  hs_object_cache_options o;
  hs_object_cache_options_init(&o);
  o.capacity = options.capacity;
  o.shard_bits = options.num_shard_bits;
  o.strict_capacity = options.strict_capacity_limit;
  o.policy = spec.c_str();
  o.expected_charge = static_cast<uint32_t>(options.estimated_entry_charge);
  o.scan_run = options.scan_run;
  o.scan_gap = options.scan_gap;
  o.keep_cached = options.keep_cached;
  o.locate = LocateBlock;
  o.free_object = HotsetCache::FreeEntry;
  std::unique_ptr<HotsetCache> cache(new HotsetCache(options, CanonicalSpec(spec)));
  o.ctx = cache.get();
  hs_object_cache *c = nullptr;
  if (hs_object_cache_create(&o, &c) != HS_OK)
    return Refuse(std::string("no cache made with policy \"") + spec + "\": " + hs_last_error(),
                  error);
  cache->Attach(c);
  return std::shared_ptr<rocksdb::Cache>(cache.release());
}

std::shared_ptr<rocksdb::Cache> NewHotsetCache(const rocksdb::LRUCacheOptions &options,
                                               const std::string &policy, std::string *error) {
  if (options.secondary_cache)
    return Refuse("a secondary cache is not supported (LRUCacheOptions::secondary_cache)", error);
  HotsetCacheOptions o;
  o.capacity = options.capacity;
  o.num_shard_bits = options.num_shard_bits;
  o.strict_capacity_limit = options.strict_capacity_limit;
  o.memory_allocator = options.memory_allocator;
  o.policy = policy;
  return NewHotsetCache(o, error);
}

bool IsHotsetCache(const rocksdb::Cache &cache) {
  return AsHotset(cache) != nullptr;
}

bool GetHotsetStats(const rocksdb::Cache &cache, hs_object_cache_stats *out) {
  const HotsetCache *h = AsHotset(cache);
  return h && hs_object_cache_stats_get(h->Raw(), out) == HS_OK;
}

std::string GetHotsetPolicy(const rocksdb::Cache &cache) {
  const HotsetCache *h = AsHotset(cache);
  return h ? h->Policy() : std::string();
}

} // namespace hotset

#ifdef HOTSET_ROCKSDB_PRELOAD
/*
 * The LD_PRELOAD object. Loaded first, its definitions of RocksDB's cache
 * factories come before librocksdb's, both for the program's calls and for
 * librocksdb's own (it calls NewLRUCache through its PLT: the block cache
 * BlockBasedTableOptions makes when none is given). Each makes a hotset
 * cache from the same options, or, when the environment leaves that cache
 * type stock or a cache cannot be made, calls librocksdb's own (found with
 * dlsym RTLD_NEXT). The environment is read once, at the first call:
 *   HOTSET_ROCKSDB_POLICY   a hotset policy spec (default s3fifo)
 *   HOTSET_ROCKSDB_SCAN_RUN misses that make a scan; 0 or "off": none (16)
 *   HOTSET_ROCKSDB_REPLACE  the cache types hotset replaces, a list of
 *                           "lru" (NewLRUCache, NewClockCache) and
 *                           "hyper_clock" (MakeSharedCache); "none" (both)
 *   HOTSET_ROCKSDB_DUPLICATE  what an Insert of a cached key does: "keep"
 *                           or "replace"; by default what the cache
 *                           replaced does (LRUCache replaces,
 *                           HyperClockCache keeps)
 *   HOTSET_ROCKSDB_VERBOSE  1: a line on stderr for each cache made and
 *                           its statistics when it is destroyed
 * A value it cannot use costs one line on stderr saying which, and every
 * cache stays RocksDB's own: it never guesses.
 */
#include <cstdlib>
#include <dlfcn.h>
#include <strings.h>

namespace hotset {
namespace {

struct PreloadConfig {
  bool usable = true; /* false: a bad variable, every cache stays stock */
  std::string policy = kDefaultPolicy;
  uint32_t scan_run = 16;
  bool lru = true, hyper_clock = true;
  enum { AS_REPLACED, KEEP, REPLACE } duplicate = AS_REPLACED;
  bool verbose = false;
};

bool Bad(const char *var, const char *value, const std::string &why) {
  std::fprintf(stderr,
               "hotset-rocksdb: %s=%s: %s; RocksDB's own caches stay (no hotset cache is made)\n",
               var, value, why.c_str());
  return false;
}

bool ReadPolicy(PreloadConfig &c) {
  const char *v = std::getenv("HOTSET_ROCKSDB_POLICY");
  if (!v || !*v) return true;
  /* A small cache made and dropped with it: the check each cache made
   * later will pass (a spec the object cache cannot use, as belady, is
   * refused here, once, not at every cache). */
  HotsetCacheOptions o;
  o.capacity = 1 << 20;
  o.num_shard_bits = 0;
  o.policy = v;
  std::string error;
  if (!NewHotsetCache(o, &error)) return Bad("HOTSET_ROCKSDB_POLICY", v, error);
  c.policy = v;
  return true;
}

bool ReadScanRun(PreloadConfig &c) {
  const char *v = std::getenv("HOTSET_ROCKSDB_SCAN_RUN");
  if (!v || !*v) return true;
  if (strcasecmp(v, "off") == 0) {
    c.scan_run = 0;
    return true;
  }
  char *end = nullptr;
  unsigned long n = std::strtoul(v, &end, 10);
  if (*end || v[0] == '-' || n > UINT32_MAX)
    return Bad("HOTSET_ROCKSDB_SCAN_RUN", v, "not a count of misses nor \"off\"");
  c.scan_run = static_cast<uint32_t>(n);
  return true;
}

bool ReadReplace(PreloadConfig &c) {
  const char *v = std::getenv("HOTSET_ROCKSDB_REPLACE");
  if (!v) return true;
  c.lru = c.hyper_clock = false;
  std::string list(v);
  if (list == "none") return true;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    std::string word = list.substr(start, comma == std::string::npos ? comma : comma - start);
    if (word == "lru")
      c.lru = true;
    else if (word == "hyper_clock")
      c.hyper_clock = true;
    else
      return Bad("HOTSET_ROCKSDB_REPLACE", v,
                 "\"" + word + "\" is not a cache type (lru, hyper_clock, or none)");
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return true;
}

bool ReadDuplicate(PreloadConfig &c) {
  const char *v = std::getenv("HOTSET_ROCKSDB_DUPLICATE");
  if (!v || !*v) return true;
  if (std::strcmp(v, "keep") == 0)
    c.duplicate = PreloadConfig::KEEP;
  else if (std::strcmp(v, "replace") == 0)
    c.duplicate = PreloadConfig::REPLACE;
  else
    return Bad("HOTSET_ROCKSDB_DUPLICATE", v, "neither \"keep\" nor \"replace\"");
  return true;
}

const PreloadConfig &Config() {
  static const PreloadConfig config = [] {
    PreloadConfig c;
    const char *v = std::getenv("HOTSET_ROCKSDB_VERBOSE");
    c.verbose = v && *v && std::strcmp(v, "0") != 0;
    c.usable = ReadPolicy(c) && ReadScanRun(c) && ReadReplace(c) && ReadDuplicate(c);
    return c;
  }();
  return config;
}

/* A hotset cache for `what` (the factory interposed), or nullptr for the
 * stock one: the type is left stock, or this cache cannot be made (one
 * line says why). */
std::shared_ptr<rocksdb::Cache> Replace(bool replaced_type, const char *what,
                                        HotsetCacheOptions o) {
  const PreloadConfig &c = Config();
  if (!c.usable || !replaced_type) return nullptr;
  o.policy = c.policy;
  o.scan_run = c.scan_run;
  if (c.duplicate != PreloadConfig::AS_REPLACED) o.keep_cached = c.duplicate == PreloadConfig::KEEP;
  std::string error;
  std::shared_ptr<rocksdb::Cache> cache = NewHotsetCache(o, &error);
  if (!cache) {
    std::fprintf(stderr, "hotset-rocksdb: %s(capacity %zu): %s; RocksDB's own cache is used\n",
                 what, o.capacity, error.c_str());
    return nullptr;
  }
  if (c.verbose) {
    hs_object_cache_stats s;
    GetHotsetStats(*cache, &s);
    std::fprintf(stderr,
                 "hotset-rocksdb: %s -> HotsetCache policy=%s capacity=%zu shards=%" PRIu32
                 " strict=%d scan_run=%" PRIu32 " duplicate=%s\n",
                 what, GetHotsetPolicy(*cache).c_str(), o.capacity, s.shards,
                 o.strict_capacity_limit ? 1 : 0, o.scan_run, o.keep_cached ? "keep" : "replace");
    static_cast<HotsetCache *>(cache.get())->ReportAtEnd(std::string(what) + " cache:");
  }
  return cache;
}

std::shared_ptr<rocksdb::Cache> ReplaceLru(const rocksdb::LRUCacheOptions &lo, const char *what) {
  const PreloadConfig &c = Config();
  if (!c.usable || !c.lru) return nullptr;
  if (lo.secondary_cache) {
    std::fprintf(stderr,
                 "hotset-rocksdb: %s with a secondary cache: not supported; RocksDB's own "
                 "cache is used\n",
                 what);
    return nullptr;
  }
  HotsetCacheOptions o;
  o.capacity = lo.capacity;
  o.num_shard_bits = lo.num_shard_bits;
  o.strict_capacity_limit = lo.strict_capacity_limit;
  o.memory_allocator = lo.memory_allocator;
  return Replace(true, what, o);
}

/* librocksdb's own definition of a symbol this object defines too. */
template <typename Fn> Fn Stock(const char *mangled) {
  void *f = dlsym(RTLD_NEXT, mangled);
  if (!f) {
    std::fprintf(stderr, "hotset-rocksdb: %s is not in any library loaded after the preload\n",
                 mangled);
    std::abort();
  }
  return reinterpret_cast<Fn>(f);
}

} // namespace
} // namespace hotset

namespace rocksdb {

/* Not in 7.8's cache.h, but librocksdb 7.8 still exports it (an older
 * release's overload, with the secondary cache as an argument). */
std::shared_ptr<Cache>
NewLRUCache(size_t capacity, int num_shard_bits, bool strict_capacity_limit,
            double high_pri_pool_ratio, std::shared_ptr<MemoryAllocator> memory_allocator,
            bool use_adaptive_mutex, CacheMetadataChargePolicy metadata_charge_policy,
            const std::shared_ptr<SecondaryCache> &secondary_cache, double low_pri_pool_ratio);

std::shared_ptr<Cache> NewLRUCache(const LRUCacheOptions &options) {
  if (auto c = hotset::ReplaceLru(options, "NewLRUCache")) return c;
  using Fn = std::shared_ptr<Cache> (*)(const LRUCacheOptions &);
  static const Fn stock = hotset::Stock<Fn>("_ZN7rocksdb11NewLRUCacheERKNS_15LRUCacheOptionsE");
  return stock(options);
}

std::shared_ptr<Cache> NewLRUCache(size_t capacity, int num_shard_bits, bool strict_capacity_limit,
                                   double high_pri_pool_ratio,
                                   std::shared_ptr<MemoryAllocator> memory_allocator,
                                   bool use_adaptive_mutex,
                                   CacheMetadataChargePolicy metadata_charge_policy,
                                   double low_pri_pool_ratio) {
  LRUCacheOptions o(capacity, num_shard_bits, strict_capacity_limit, high_pri_pool_ratio,
                    memory_allocator, use_adaptive_mutex, metadata_charge_policy,
                    low_pri_pool_ratio);
  if (auto c = hotset::ReplaceLru(o, "NewLRUCache")) return c;
  using Fn = std::shared_ptr<Cache> (*)(size_t, int, bool, double, std::shared_ptr<MemoryAllocator>,
                                        bool, CacheMetadataChargePolicy, double);
  static const Fn stock =
      hotset::Stock<Fn>("_ZN7rocksdb11NewLRUCacheEmibdSt10shared_ptrINS_15MemoryAllocatorEEbNS_"
                        "25CacheMetadataChargePolicyEd");
  return stock(capacity, num_shard_bits, strict_capacity_limit, high_pri_pool_ratio,
               std::move(memory_allocator), use_adaptive_mutex, metadata_charge_policy,
               low_pri_pool_ratio);
}

std::shared_ptr<Cache>
NewLRUCache(size_t capacity, int num_shard_bits, bool strict_capacity_limit,
            double high_pri_pool_ratio, std::shared_ptr<MemoryAllocator> memory_allocator,
            bool use_adaptive_mutex, CacheMetadataChargePolicy metadata_charge_policy,
            const std::shared_ptr<SecondaryCache> &secondary_cache, double low_pri_pool_ratio) {
  LRUCacheOptions o(capacity, num_shard_bits, strict_capacity_limit, high_pri_pool_ratio,
                    memory_allocator, use_adaptive_mutex, metadata_charge_policy,
                    low_pri_pool_ratio);
  o.secondary_cache = secondary_cache;
  if (auto c = hotset::ReplaceLru(o, "NewLRUCache")) return c;
  using Fn = std::shared_ptr<Cache> (*)(size_t, int, bool, double, std::shared_ptr<MemoryAllocator>,
                                        bool, CacheMetadataChargePolicy,
                                        const std::shared_ptr<SecondaryCache> &, double);
  static const Fn stock =
      hotset::Stock<Fn>("_ZN7rocksdb11NewLRUCacheEmibdSt10shared_ptrINS_15MemoryAllocatorEEbNS_"
                        "25CacheMetadataChargePolicyERKS0_INS_14SecondaryCacheEEd");
  return stock(capacity, num_shard_bits, strict_capacity_limit, high_pri_pool_ratio,
               std::move(memory_allocator), use_adaptive_mutex, metadata_charge_policy,
               secondary_cache, low_pri_pool_ratio);
}

/* In 7.8 NewClockCache makes an LRUCache (cache.h): it goes with "lru". */
std::shared_ptr<Cache> NewClockCache(size_t capacity, int num_shard_bits,
                                     bool strict_capacity_limit,
                                     CacheMetadataChargePolicy metadata_charge_policy) {
  LRUCacheOptions o;
  o.capacity = capacity;
  o.num_shard_bits = num_shard_bits;
  o.strict_capacity_limit = strict_capacity_limit;
  if (auto c = hotset::ReplaceLru(o, "NewClockCache")) return c;
  using Fn = std::shared_ptr<Cache> (*)(size_t, int, bool, CacheMetadataChargePolicy);
  static const Fn stock =
      hotset::Stock<Fn>("_ZN7rocksdb13NewClockCacheEmibNS_25CacheMetadataChargePolicyE");
  return stock(capacity, num_shard_bits, strict_capacity_limit, metadata_charge_policy);
}

std::shared_ptr<Cache> HyperClockCacheOptions::MakeSharedCache() const {
  hotset::HotsetCacheOptions o;
  o.capacity = capacity;
  o.num_shard_bits = num_shard_bits;
  o.strict_capacity_limit = strict_capacity_limit;
  o.memory_allocator = memory_allocator;
  o.estimated_entry_charge = estimated_entry_charge;
  o.keep_cached = true; /* as HyperClockCache: an Insert of a cached key keeps it */
  if (auto c = hotset::Replace(hotset::Config().hyper_clock, "HyperClockCache", o)) return c;
  /* The member function, called as the Itanium C++ ABI passes it: the
   * object as the first argument. */
  using Fn = std::shared_ptr<Cache> (*)(const HyperClockCacheOptions *);
  static const Fn stock =
      hotset::Stock<Fn>("_ZNK7rocksdb22HyperClockCacheOptions15MakeSharedCacheEv");
  return stock(this);
}

} // namespace rocksdb
#endif
