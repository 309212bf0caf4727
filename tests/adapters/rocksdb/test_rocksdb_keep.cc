/*
 * test_rocksdb_keep.cc — an Insert of a key already cached, where the
 * cache keeps the cached entry (HotsetCacheOptions::keep_cached, and what
 * RocksDB's HyperClockCache does; LRUCache replaces, which
 * test_rocksdb_contract checks). The same checks run on a cache named on
 * the command line:
 *
 *   test_rocksdb_keep hcc                 RocksDB's own HyperClockCache
 *   test_rocksdb_keep hotset-keep[:SPEC]  HotsetCache with keep_cached
 *
 * so what hotset does here is what HyperClockCache does, checked side by
 * side: lookups go on finding the cached value; without a handle the new
 * value is deleted at once; with one, the handle holds the caller's own
 * value, charged in the usage and pinned, and its release deletes it.
 * Keys are 16 bytes, as HyperClockCache requires (block cache keys).
 */
#include "rocksdb_test_util.h"

using rocksdb::Cache;
using rocksdb::Status;
using rt::Registry;
using rt::Value;

namespace {

std::string kind;
/* HyperClockCache takes block cache keys only: 16 bytes. */
const std::string K = "key-of-16-bytes!";

std::shared_ptr<Cache> Make(size_t capacity, bool strict = false) {
  return rt::MakeCache(kind, capacity, 0, strict, 100);
}

Status Put(Cache &c, Registry &r, const std::string &key, size_t charge, Cache::Handle **h,
           Value **out) {
  Value *v = r.Make(key, charge);
  *out = v;
  return c.Insert(key, v, charge, rt::CountingDeleter, h);
}

/* The value a Lookup finds, released at once; nullptr when none. */
Value *Found(Cache &c, const std::string &key) {
  Cache::Handle *h = c.Lookup(key);
  if (!h) return nullptr;
  Value *v = static_cast<Value *>(c.Value(h));
  c.Release(h);
  return v;
}

/* The cached value v1 (charge 100) is all the cache holds, nothing pinned;
 * then the cache goes, and every value was deleted once. */
void OnlyCachedLeft(std::shared_ptr<Cache> &c, const Registry &r, Value *v1) {
  RT_CHECK(Found(*c, K) == v1);
  RT_CHECK_EQ(c->GetUsage(), 100);
  RT_CHECK_EQ(c->GetPinnedUsage(), 0);
  c.reset();
  std::string why;
  RT_CHECK(r.AllDeletedOnce(&why));
}

void WithoutHandle() {
  Registry r;
  auto c = Make(10000);
  Value *v1, *v2;
  RT_CHECK(Put(*c, r, K, 100, nullptr, &v1).ok());
  /* Kept without a handle: OK, not OkOverwritten (nothing detached). */
  Status s = Put(*c, r, K, 150, nullptr, &v2);
  RT_CHECK(s.ok() && !s.IsOkOverwritten());
  RT_CHECK_EQ(v2->deleted.load(), 1); /* at once */
  RT_CHECK_EQ(v1->deleted.load(), 0);
  OnlyCachedLeft(c, r, v1);
}

void WithHandle() {
  Registry r;
  auto c = Make(10000);
  Value *v1, *v2;
  Status first = Put(*c, r, K, 100, nullptr, &v1);
  RT_CHECK(first.ok() && !first.IsOkOverwritten());
  Cache::Handle *h = nullptr;
  Status s = Put(*c, r, K, 150, &h, &v2);
  /* Kept, the new value handed back outside the table: OkOverwritten,
   * which the block cache counts as a redundant insert. */
  RT_CHECK(s.ok() && s.IsOkOverwritten());
  RT_CHECK(h != nullptr);
  if (!h) return;
  RT_CHECK(c->Value(h) == v2); /* the caller's own value */
  RT_CHECK(Found(*c, K) == v1);
  RT_CHECK_EQ(c->GetUsage(), 250); /* both charged */
  RT_CHECK_EQ(c->GetPinnedUsage(), 150);
  RT_CHECK_EQ(c->GetCharge(h), 150);
  RT_CHECK(c->Ref(h));
  RT_CHECK(!c->Release(h));
  RT_CHECK_EQ(v2->deleted.load(), 0);
  RT_CHECK(c->Release(h)); /* the last reference: deleted now */
  RT_CHECK_EQ(v2->deleted.load(), 1);
  RT_CHECK_EQ(v1->deleted.load(), 0);
  OnlyCachedLeft(c, r, v1);
}

/* The cached entry held by a handle: a second Insert still keeps it. */
void OverHeld() {
  Registry r;
  auto c = Make(10000);
  Value *v1, *v2;
  Cache::Handle *h1 = nullptr;
  RT_CHECK(Put(*c, r, K, 100, &h1, &v1).ok());
  RT_CHECK(Put(*c, r, K, 100, nullptr, &v2).ok());
  RT_CHECK_EQ(v2->deleted.load(), 1);
  RT_CHECK(Found(*c, K) == v1);
  if (h1) RT_CHECK(!c->Release(h1)); /* in the cache: stays */
  RT_CHECK_EQ(v1->deleted.load(), 0);
  /* once erased, an Insert puts the new value in */
  c->Erase(K);
  RT_CHECK_EQ(v1->deleted.load(), 1);
  Value *v3;
  Status s = Put(*c, r, K, 100, nullptr, &v3);
  RT_CHECK(s.ok() && !s.IsOkOverwritten());
  RT_CHECK(Found(*c, K) == v3);
  c.reset();
  std::string why;
  RT_CHECK(r.AllDeletedOnce(&why));
}

struct Case {
  const char *name;
  void (*fn)();
};

} // namespace

int main(int argc, char **argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s hcc | hotset-keep[:SPEC]\n", argv[0]);
    return 2;
  }
  kind = argv[1];
  const Case cases[] = {
      {"WithoutHandle", WithoutHandle}, {"WithHandle", WithHandle}, {"OverHeld", OverHeld}};
  for (const Case &c : cases) {
    unsigned before = rt::failed.load();
    c.fn();
    std::printf("%s %s\n", rt::failed.load() == before ? "ok  " : "FAIL", c.name);
  }
  return rt::Finish(argv[1]);
}
