/*
 * test_rocksdb_contract.cc — rocksdb::Cache's documented semantics
 * (rocksdb/cache.h), checked on a cache named on the command line:
 *
 *   test_rocksdb_contract hotset[:SPEC]   HotsetCache under a policy
 *   test_rocksdb_contract lru             RocksDB's own LRUCache
 *
 * The same checks pass on both: what LRUCache does not do is not in the
 * contract, and is not checked here. One shard (num_shard_bits 0) where a
 * capacity is checked, so no hashing decides the outcome.
 */
#include "rocksdb_test_util.h"

#include <set>
#include <thread>
#include <vector>

using rocksdb::Cache;
using rocksdb::Slice;
using rocksdb::Status;
using rt::Registry;
using rt::Value;

namespace {

std::string kind;

std::shared_ptr<Cache> Make(size_t capacity, bool strict = false, int bits = 0) {
  return rt::MakeCache(kind, capacity, bits, strict);
}

Status Put(Cache &c, Registry &r, const std::string &key, size_t charge, Cache::Handle **h,
           Value **out = nullptr, Cache::Priority pri = Cache::Priority::LOW) {
  Value *v = r.Make(key, charge);
  if (out) *out = v;
  return c.Insert(key, v, charge, rt::CountingDeleter, h, pri);
}

/* A handle stays valid, and its value alive, until released, through an
 * Erase; the last release frees it (and says so). */
void HandleOutlivesErase() {
  Registry r;
  auto c = Make(1000);
  Cache::Handle *h = nullptr;
  Value *v;
  RT_CHECK(Put(*c, r, "k", 10, &h, &v).ok());
  RT_CHECK(h != nullptr);
  c->Erase("k");
  RT_CHECK(c->Lookup("k") == nullptr);
  RT_CHECK(c->Value(h) == v);
  RT_CHECK_EQ(v->deleted.load(), 0);
  RT_CHECK_EQ(c->GetUsage(), 10);       /* still held: still counted */
  RT_CHECK_EQ(c->GetPinnedUsage(), 10); /* and pinned */
  RT_CHECK(c->Release(h));              /* last reference of an erased entry */
  RT_CHECK_EQ(v->deleted.load(), 1);
  RT_CHECK_EQ(c->GetUsage(), 0);
  RT_CHECK_EQ(c->GetPinnedUsage(), 0);
}

/* Erase of an entry with two references: the deleter waits for both. */
void EraseDefersDeleter() {
  Registry r;
  auto c = Make(1000);
  Value *v;
  RT_CHECK(Put(*c, r, "k", 7, nullptr, &v).ok());
  Cache::Handle *h1 = c->Lookup("k");
  Cache::Handle *h2 = c->Lookup("k");
  RT_CHECK(h1 && h2);
  RT_CHECK(c->Ref(h1)); /* a third reference, through Ref */
  c->Erase("k");
  RT_CHECK(!c->Release(h1));
  RT_CHECK(!c->Release(h2));
  RT_CHECK_EQ(v->deleted.load(), 0);
  RT_CHECK(c->Value(h1) == v);
  RT_CHECK(c->Release(h1));
  RT_CHECK_EQ(v->deleted.load(), 1);
  c->Erase("k"); /* erasing what is not there */
  RT_CHECK_EQ(v->deleted.load(), 1);
}

/* Insert over a key whose entry is held: lookups find the new value, the
 * old one lives (and is counted) until its handle goes. */
void InsertOverHeld() {
  Registry r;
  auto c = Make(1000);
  Cache::Handle *h1 = nullptr;
  Value *v1, *v2;
  RT_CHECK(Put(*c, r, "k", 10, &h1, &v1).ok());
  RT_CHECK(Put(*c, r, "k", 20, nullptr, &v2).ok());
  Cache::Handle *h2 = c->Lookup("k");
  RT_CHECK(h2 && c->Value(h2) == v2);
  RT_CHECK(c->Value(h1) == v1);
  RT_CHECK_EQ(v1->deleted.load(), 0);
  RT_CHECK_EQ(c->GetUsage(), 30);
  RT_CHECK_EQ(c->GetPinnedUsage(), 30);
  if (kind != "lru") RT_CHECK_EQ(c->GetOccupancyCount(), 1); /* one entry in the table */
  RT_CHECK(c->Release(h1));                                  /* the replaced one goes now */
  RT_CHECK_EQ(v1->deleted.load(), 1);
  RT_CHECK_EQ(c->GetUsage(), 20);
  RT_CHECK(!c->Release(h2)); /* in the cache: stays */
  RT_CHECK_EQ(v2->deleted.load(), 0);
  RT_CHECK_EQ(c->GetPinnedUsage(), 0);
  /* Insert over an unreferenced entry frees it at once. */
  Value *v3;
  RT_CHECK(Put(*c, r, "k", 5, nullptr, &v3).ok());
  RT_CHECK_EQ(v2->deleted.load(), 1);
  RT_CHECK_EQ(c->GetUsage(), 5);
}

/* Strict capacity: an insert that cannot fit beside the pinned entries is
 * refused with MemoryLimit when a handle is asked for (value still the
 * caller's, *handle null) and, without a handle, OK with the value freed. */
void StrictCapacity() {
  Registry r;
  auto c = Make(100, true);
  RT_CHECK(c->HasStrictCapacityLimit());
  Cache::Handle *ha = nullptr, *hb = reinterpret_cast<Cache::Handle *>(&r);
  Value *a, *b, *d;
  RT_CHECK(Put(*c, r, "a", 60, &ha, &a).ok());
  Status s = Put(*c, r, "b", 60, &hb, &b);
  RT_CHECK(s.IsMemoryLimit());
  RT_CHECK(hb == nullptr);
  RT_CHECK_EQ(b->deleted.load(), 0); /* the caller's to clean up */
  RT_CHECK(c->Lookup("b") == nullptr);
  RT_CHECK_EQ(c->GetUsage(), 60);
  s = Put(*c, r, "d", 60, nullptr, &d);
  RT_CHECK(s.ok());
  RT_CHECK_EQ(d->deleted.load(), 1); /* "as if inserted and evicted" */
  RT_CHECK(c->Lookup("d") == nullptr);
  RT_CHECK_EQ(c->GetUsage(), 60);
  /* Unreferenced entries make room. */
  Value *e;
  c->Release(ha);
  RT_CHECK_EQ(a->deleted.load(), 0);
  Cache::Handle *he = nullptr;
  RT_CHECK(Put(*c, r, "e", 60, &he, &e).ok());
  RT_CHECK_EQ(a->deleted.load(), 1); /* evicted for e */
  RT_CHECK(c->GetUsage() <= 100);
  /* The limit lifted: the same insert goes over the capacity. */
  c->SetStrictCapacityLimit(false);
  RT_CHECK(!c->HasStrictCapacityLimit());
  Cache::Handle *hf = nullptr;
  Value *f;
  RT_CHECK(Put(*c, r, "f", 60, &hf, &f).ok());
  RT_CHECK(hf != nullptr);
  RT_CHECK_EQ(c->GetUsage(), 120);
  RT_CHECK_EQ(c->GetPinnedUsage(), 120);
  c->Release(he);
  c->Release(hf);
  c.reset();
  b->deleted.fetch_add(1); /* refused: ours, "deleted" here */
  std::string why;
  RT_CHECK(r.AllDeletedOnce(&why) || (std::printf("  %s\n", why.c_str()), false));
}

/* Usage, pinned usage and per-handle charges, exactly. */
void ChargeAccounting() {
  Registry r;
  auto c = Make(1 << 20);
  std::vector<Cache::Handle *> hs;
  size_t total = 0;
  for (int i = 0; i < 50; i++) {
    Cache::Handle *h = nullptr;
    size_t charge = 1 + static_cast<size_t>(i) * 37;
    RT_CHECK(Put(*c, r, "key" + std::to_string(i), charge, i % 3 ? nullptr : &h).ok());
    total += charge;
    if (h) {
      RT_CHECK_EQ(c->GetCharge(h), charge);
      RT_CHECK_EQ(c->GetUsage(h), charge);
      RT_CHECK(c->GetDeleter(h) == rt::CountingDeleter);
      hs.push_back(h);
    }
  }
  RT_CHECK_EQ(c->GetUsage(), total);
  /* LRUCache's count is its table's own measure, not the entries. */
  if (kind != "lru") RT_CHECK_EQ(c->GetOccupancyCount(), 50);
  size_t pinned = 0;
  for (Cache::Handle *h : hs) pinned += c->GetCharge(h);
  RT_CHECK_EQ(c->GetPinnedUsage(), pinned);
  Cache::Handle *again = c->Lookup("key3"); /* a second reference: counted once */
  RT_CHECK_EQ(c->GetPinnedUsage(), pinned);
  c->Release(again);
  for (Cache::Handle *h : hs) c->Release(h);
  RT_CHECK_EQ(c->GetPinnedUsage(), 0);
  RT_CHECK_EQ(c->GetUsage(), total);
  RT_CHECK_EQ(c->GetCapacity(), 1 << 20);
}

/* ApplyToAllEntries sees each entry once, with its value, charge and
 * deleter, whatever the entries per lock; the old form too. */
void ApplyToAll() {
  Registry r;
  auto c = Make(1 << 20, false, 2);
  const int n = 300;
  for (int i = 0; i < n; i++)
    RT_CHECK(Put(*c, r, "k" + std::to_string(i), 1 + i % 5, nullptr).ok());
  for (size_t per_lock : {size_t(1), size_t(3), size_t(256), size_t(100000)}) {
    std::set<std::string> seen;
    int twice = 0, wrong = 0;
    Cache::ApplyToAllEntriesOptions o;
    o.average_entries_per_lock = per_lock;
    c->ApplyToAllEntries(
        [&](const Slice &key, void *value, size_t charge, Cache::DeleterFn d) {
          Value *v = static_cast<Value *>(value);
          if (!seen.insert(key.ToString()).second) twice++;
          if (v->key != key.ToString() || v->charge != charge || d != rt::CountingDeleter) wrong++;
        },
        o);
    RT_CHECK_EQ(seen.size(), n);
    RT_CHECK_EQ(twice, 0);
    RT_CHECK_EQ(wrong, 0);
  }
  static size_t sum;
  sum = 0;
  c->ApplyToAllCacheEntries([](void *, size_t charge) { sum += charge; }, true);
  RT_CHECK_EQ(sum, c->GetUsage());
}

/* EraseUnRefEntries (its prerequisite: nothing referenced) empties it. */
void EraseUnRef() {
  Registry r;
  auto c = Make(1 << 20, false, 3);
  for (int i = 0; i < 100; i++) RT_CHECK(Put(*c, r, "k" + std::to_string(i), 10, nullptr).ok());
  c->EraseUnRefEntries();
  RT_CHECK_EQ(c->GetUsage(), 0);
  if (kind != "lru") RT_CHECK_EQ(c->GetOccupancyCount(), 0);
  RT_CHECK_EQ(rt::deleter_calls.load() >= 100, 1);
  std::string why;
  RT_CHECK(r.AllDeletedOnce(&why) || (std::printf("  %s\n", why.c_str()), false));
  RT_CHECK(c->Lookup("k5") == nullptr);
}

/* SetCapacity lower evicts unreferenced entries, never a referenced one. */
void ShrinkEvictsUnreferenced() {
  Registry r;
  auto c = Make(1000);
  std::vector<Value *> vs(10);
  Cache::Handle *h0 = nullptr, *h1 = nullptr;
  for (int i = 0; i < 10; i++)
    RT_CHECK(Put(*c, r, "k" + std::to_string(i), 10,
                 i == 0   ? &h0
                 : i == 1 ? &h1
                          : nullptr,
                 &vs[i])
                 .ok());
  RT_CHECK_EQ(c->GetUsage(), 100);
  c->SetCapacity(30);
  RT_CHECK_EQ(c->GetCapacity(), 30);
  RT_CHECK(c->GetUsage() <= 30);
  RT_CHECK_EQ(vs[0]->deleted.load(), 0);
  RT_CHECK_EQ(vs[1]->deleted.load(), 0);
  int gone = 0;
  for (Value *v : vs) gone += v->deleted.load();
  RT_CHECK(gone >= 7);
  /* Down to the pinned ones: what is left is only what is held. */
  c->SetCapacity(0);
  RT_CHECK_EQ(c->GetUsage(), 20);
  RT_CHECK(c->Value(h0) == vs[0]);
  RT_CHECK(c->Release(h0)); /* over capacity at its last release: freed */
  RT_CHECK(c->Release(h1, true));
  RT_CHECK_EQ(c->GetUsage(), 0);
}

/* Release(h, true) erases only at the last reference, and says so; the
 * last plain release of an entry in a cache within capacity keeps it. */
void ReleaseEraseIfLast() {
  Registry r;
  auto c = Make(1000);
  Value *v;
  Cache::Handle *h = nullptr;
  RT_CHECK(Put(*c, r, "k", 10, &h, &v).ok());
  RT_CHECK(c->Ref(h));
  RT_CHECK(!c->Release(h, true)); /* not the last */
  RT_CHECK_EQ(v->deleted.load(), 0);
  Cache::Handle *h2 = c->Lookup("k");
  RT_CHECK(h2 != nullptr); /* still cached */
  RT_CHECK(!c->Release(h2));
  RT_CHECK(c->Release(h, true)); /* the last: erased */
  RT_CHECK_EQ(v->deleted.load(), 1);
  RT_CHECK(c->Lookup("k") == nullptr);
  RT_CHECK_EQ(c->GetUsage(), 0);
  /* The plain last release: kept. */
  RT_CHECK(Put(*c, r, "j", 10, &h, &v).ok());
  RT_CHECK(!c->Release(h, false));
  RT_CHECK_EQ(v->deleted.load(), 0);
  h = c->Lookup("j");
  RT_CHECK(h != nullptr);
  RT_CHECK(c->Release(h, true));
}

/* NewId: unique, from any thread. */
void NewIdUnique() {
  auto c = Make(1000);
  const int threads = 4, per = 5000;
  std::vector<std::vector<uint64_t>> ids(threads);
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; t++)
    ts.emplace_back([&, t] {
      for (int i = 0; i < per; i++) ids[t].push_back(c->NewId());
    });
  for (auto &t : ts) t.join();
  std::set<uint64_t> all;
  for (auto &v : ids) all.insert(v.begin(), v.end());
  RT_CHECK_EQ(all.size(), threads * per);
}

/* The secondary-cache overloads behave as the plain ones. */
void SecondaryOverloads() {
  Registry r;
  auto c = Make(1000);
  Cache::CacheItemHelper helper(nullptr, nullptr, rt::CountingDeleter);
  Value *v = r.Make("k", 10);
  Cache::Handle *h = nullptr;
  RT_CHECK(c->Insert("k", v, &helper, 10, &h, Cache::Priority::HIGH).ok());
  RT_CHECK(c->GetDeleter(h) == rt::CountingDeleter);
  Cache::Handle *h2 = c->Lookup("k", &helper, Cache::CreateCallback(), Cache::Priority::LOW, true);
  RT_CHECK(h2 && c->Value(h2) == v);
  RT_CHECK(c->IsReady(h2));
  RT_CHECK(!c->Release(h2, true, false));
  RT_CHECK(c->Release(h, true, true));
  RT_CHECK_EQ(v->deleted.load(), 1);
  RT_CHECK(c->Insert("x", v, static_cast<const Cache::CacheItemHelper *>(nullptr), 1, nullptr)
               .IsInvalidArgument());
}

/* Every priority is cached and found. */
void Priorities() {
  Registry r;
  auto c = Make(1000);
  Cache::Priority ps[] = {Cache::Priority::HIGH, Cache::Priority::LOW, Cache::Priority::BOTTOM};
  for (int i = 0; i < 3; i++)
    RT_CHECK(Put(*c, r, "p" + std::to_string(i), 10, nullptr, nullptr, ps[i]).ok());
  for (int i = 0; i < 3; i++) {
    Cache::Handle *h = c->Lookup("p" + std::to_string(i));
    RT_CHECK(h != nullptr);
    if (h) c->Release(h);
  }
}

/* Destroying the cache runs every remaining deleter once; a null deleter
 * is allowed. */
void DestroyFreesAll() {
  Registry r;
  auto c = Make(1 << 20, false, 4);
  for (int i = 0; i < 200; i++) RT_CHECK(Put(*c, r, "k" + std::to_string(i), 10, nullptr).ok());
  Value *v = r.Make("n", 1);
  RT_CHECK(c->Insert("n", v, 1, nullptr).ok());
  v->deleted.store(1);
  c.reset();
  std::string why;
  RT_CHECK(r.AllDeletedOnce(&why) || (std::printf("  %s\n", why.c_str()), false));
}

/* DisownData: no deleter runs at destruction. LRUCache leaks its own
 * memory too, so it is checked only where leaks are not reported. */
void Disown() {
#if defined(__SANITIZE_ADDRESS__)
  if (kind == "lru") return;
#endif
  Registry r;
  auto c = Make(1000);
  RT_CHECK(Put(*c, r, "k", 10, nullptr).ok());
  c->DisownData();
  c.reset();
  RT_CHECK_EQ(rt::deleter_calls.load(), 0);
}

void HotsetOnly() {
  if (kind == "lru") return;
  auto c = Make(1 << 20, true, 3);
  RT_CHECK(std::string(c->Name()) == "HotsetCache");
  RT_CHECK(hotset::IsHotsetCache(*c));
  hs_object_cache_stats s;
  RT_CHECK(hotset::GetHotsetStats(*c, &s));
  RT_CHECK_EQ(s.shards, 8);
  std::string opts = c->GetPrintableOptions();
  RT_CHECK(opts.find("policy : ") != std::string::npos);
  RT_CHECK(opts.find("strict_capacity_limit : 1") != std::string::npos);
  RT_CHECK(opts.find("scan_run : 16") != std::string::npos);
  auto lru = rt::MakeCache("lru", 1000, 0, false);
  RT_CHECK(!hotset::IsHotsetCache(*lru));
  RT_CHECK(!hotset::GetHotsetStats(*lru, &s));
  /* A bad spec: nullptr and the reason, nothing aborts. */
  hotset::HotsetCacheOptions o;
  o.policy = "no-such-policy";
  std::string error;
  RT_CHECK(hotset::NewHotsetCache(o, &error) == nullptr);
  RT_CHECK(error.find("no-such-policy") != std::string::npos);
  o.policy = "";
  o.num_shard_bits = 17;
  RT_CHECK(hotset::NewHotsetCache(o, &error) == nullptr);
  rocksdb::LRUCacheOptions lo(1 << 20, 2, true, 0.5);
  auto from_lru = hotset::NewHotsetCache(lo, "lru", &error);
  RT_CHECK(from_lru && from_lru->HasStrictCapacityLimit() && from_lru->GetCapacity() == 1 << 20);
}

struct Case {
  const char *name;
  void (*fn)();
};

} // namespace

int main(int argc, char **argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0); /* what was said before a crash stays */
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s hotset[:SPEC] | lru\n", argv[0]);
    return 2;
  }
  kind = argv[1];
  const Case cases[] = {{"HandleOutlivesErase", HandleOutlivesErase},
                        {"EraseDefersDeleter", EraseDefersDeleter},
                        {"InsertOverHeld", InsertOverHeld},
                        {"StrictCapacity", StrictCapacity},
                        {"ChargeAccounting", ChargeAccounting},
                        {"ApplyToAll", ApplyToAll},
                        {"EraseUnRef", EraseUnRef},
                        {"ShrinkEvictsUnreferenced", ShrinkEvictsUnreferenced},
                        {"ReleaseEraseIfLast", ReleaseEraseIfLast},
                        {"NewIdUnique", NewIdUnique},
                        {"SecondaryOverloads", SecondaryOverloads},
                        {"Priorities", Priorities},
                        {"DestroyFreesAll", DestroyFreesAll},
                        {"Disown", Disown},
                        {"HotsetOnly", HotsetOnly}};
  for (const Case &c : cases) {
    unsigned before = rt::failed.load();
    rt::deleter_calls.store(0);
    c.fn();
    std::printf("%s %s\n", rt::failed.load() == before ? "ok  " : "FAIL", c.name);
  }
  return rt::Finish(argv[1]);
}
