/*
 * tests/adapters/rocksdb/rocksdb_test_util.h — what the RocksDB adapter's
 * tests share: checks (tests/support/check.h's, in C++), the caches under
 * test (hotset's under a policy, or RocksDB's own LRUCache with usage =
 * charges, kDontChargeCacheMetadata), and values whose deleter calls are
 * counted.
 */
#ifndef HOTSET_TESTS_ROCKSDB_TEST_UTIL_H
#define HOTSET_TESTS_ROCKSDB_TEST_UTIL_H

#include "hotset_rocksdb.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <memory>
#include <mutex>
#include <rocksdb/cache.h>
#include <string>

namespace rt {

inline std::atomic<unsigned> passed{0}, failed{0};

#define RT_CHECK(cond)                                                                             \
  do {                                                                                             \
    if (cond) {                                                                                    \
      rt::passed.fetch_add(1, std::memory_order_relaxed);                                          \
    } else {                                                                                       \
      rt::failed.fetch_add(1, std::memory_order_relaxed);                                          \
      std::printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);                                  \
    }                                                                                              \
  } while (0)

#define RT_CHECK_EQ(a, b)                                                                          \
  do {                                                                                             \
    unsigned long long va_ = (unsigned long long)(a), vb_ = (unsigned long long)(b);               \
    if (va_ == vb_) {                                                                              \
      rt::passed.fetch_add(1, std::memory_order_relaxed);                                          \
    } else {                                                                                       \
      rt::failed.fetch_add(1, std::memory_order_relaxed);                                          \
      std::printf("FAIL %s:%d: %s == %s (%llu vs %llu)\n", __FILE__, __LINE__, #a, #b, va_, vb_);  \
    }                                                                                              \
  } while (0)

inline int Finish(const char *name) {
  std::printf("%s: %u passed, %u failed\n", name, passed.load(), failed.load());
  return failed.load() ? 1 : 0;
}

/* A cached value: its key and charge, and how many times the deleter ran
 * on it (exactly once, after its last handle, is the contract). The
 * memory is the registry's, never the deleter's, so a second deleter call
 * is counted rather than a double free. */
struct Value {
  std::string key;
  size_t charge = 0;
  int id = 0;
  std::atomic<int> deleted{0};
  std::atomic<int> bad_key{0}; /* the deleter got another key */
};

class Registry {
public:
  Value *Make(const std::string &key, size_t charge) {
    std::lock_guard<std::mutex> l(mu_);
    values_.emplace_back();
    Value *v = &values_.back();
    v->key = key;
    v->charge = charge;
    v->id = static_cast<int>(values_.size()) - 1;
    return v;
  }
  /* Every value's deleter ran exactly once with its own key. */
  bool AllDeletedOnce(std::string *why) const {
    std::lock_guard<std::mutex> l(mu_);
    for (const Value &v : values_) {
      if (v.deleted.load() != 1 || v.bad_key.load()) {
        *why = "value " + std::to_string(v.id) + " (key " + v.key + ") deleted " +
               std::to_string(v.deleted.load()) + " times" +
               (v.bad_key.load() ? ", wrong key" : "");
        return false;
      }
    }
    return true;
  }
  size_t Size() const {
    std::lock_guard<std::mutex> l(mu_);
    return values_.size();
  }

private:
  mutable std::mutex mu_;
  std::deque<Value> values_; /* stable addresses */
};

inline std::atomic<long> deleter_calls{0};

inline void CountingDeleter(const rocksdb::Slice &key, void *value) {
  Value *v = static_cast<Value *>(value);
  if (key.ToString() != v->key) v->bad_key.fetch_add(1);
  v->deleted.fetch_add(1);
  deleter_calls.fetch_add(1);
}

/* "lru": RocksDB's LRUCache; "hcc": its HyperClockCache (entries of
 * about `expected_charge` bytes); "hotset" or "hotset:SPEC": a
 * HotsetCache; "hotset-keep" or "hotset-keep:SPEC": one that keeps a
 * cached key's entry on a second Insert, as HyperClockCache does. Usage is
 * the charges alone (kDontChargeCacheMetadata) for RocksDB's own. */
inline std::shared_ptr<rocksdb::Cache> MakeCache(const std::string &kind, size_t capacity,
                                                 int shard_bits, bool strict,
                                                 size_t expected_charge = 64) {
  if (kind == "lru") {
    rocksdb::LRUCacheOptions o;
    o.capacity = capacity;
    o.num_shard_bits = shard_bits;
    o.strict_capacity_limit = strict;
    o.metadata_charge_policy = rocksdb::kDontChargeCacheMetadata;
    return rocksdb::NewLRUCache(o);
  }
  if (kind == "hcc")
    return rocksdb::HyperClockCacheOptions(capacity, expected_charge, shard_bits, strict, nullptr,
                                           rocksdb::kDontChargeCacheMetadata)
        .MakeSharedCache();
  bool keep = kind.compare(0, 11, "hotset-keep") == 0;
  if (kind.compare(0, 6, "hotset") != 0 || (!keep && kind.size() > 6 && kind[6] != ':')) {
    std::fprintf(stderr,
                 "unknown cache kind %s (lru, hcc, hotset, hotset:SPEC, hotset-keep, "
                 "hotset-keep:SPEC)\n",
                 kind.c_str());
    std::exit(2);
  }
  hotset::HotsetCacheOptions o;
  o.capacity = capacity;
  o.num_shard_bits = shard_bits;
  o.strict_capacity_limit = strict;
  o.keep_cached = keep;
  size_t spec = keep ? 12 : 7;
  if (kind.size() > spec) o.policy = kind.substr(spec);
  std::string error;
  std::shared_ptr<rocksdb::Cache> c = hotset::NewHotsetCache(o, &error);
  if (!c) {
    std::fprintf(stderr, "NewHotsetCache: %s\n", error.c_str());
    std::exit(2);
  }
  return c;
}

/* A small deterministic generator (splitmix64), the same everywhere. */
struct Rng {
  uint64_t s;
  explicit Rng(uint64_t seed) : s(seed) {}
  uint64_t Next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  uint64_t Below(uint64_t n) {
    return Next() % n;
  }
};

} // namespace rt

#endif
