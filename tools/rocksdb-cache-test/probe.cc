// tools/rocksdb-cache-test/probe.cc — which cache each of RocksDB's cache
// factories returns in this process. `run` builds it against the installed
// librocksdb.so and runs it with and without hotset's preload object: a
// factory whose cache's Name() changes under the preload is hotset's, and
// the tests that take their cache from that factory run on hotset.
//
// Prints one line per factory: the name the tests use for it (their
// GetParam() value) and the cache's Name(), tab-separated; then one line
// "roundtrip ok" when an insert, a lookup and a release through the
// NewLRUCache cache work.
#include <cstdio>
#include <memory>
#include <rocksdb/cache.h>

namespace {
void no_delete(const rocksdb::Slice &, void *) {}
} // namespace

int main() {
  auto lru = rocksdb::NewLRUCache(size_t{1} << 20);
  auto hcc = rocksdb::HyperClockCacheOptions(size_t{1} << 20, 4096).MakeSharedCache();
  std::printf("lru\t%s\n", lru ? lru->Name() : "(null)");
  std::printf("hyper_clock\t%s\n", hcc ? hcc->Name() : "(null)");
  if (!lru) return 1;
  static int value = 42;
  const std::string key(16, 'k');
  if (!lru->Insert(key, &value, 1, no_delete).ok()) return 1;
  rocksdb::Cache::Handle *h = lru->Lookup(key);
  if (h == nullptr || lru->Value(h) != &value) return 1;
  lru->Release(h);
  std::printf("roundtrip ok\n");
  return 0;
}
