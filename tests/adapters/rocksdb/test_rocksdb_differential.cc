/*
 * test_rocksdb_differential.cc — HotsetCache beside RocksDB's LRUCache on
 * the same random operations (deterministic seeds), one shard each:
 *
 * 1. No eviction possible (capacity far above what is inserted): after
 *    every operation both agree on what the contract fixes — each
 *    Lookup's hit or miss, the usage, the pinned usage, each Release's
 *    return, and which values' deleters have run.
 * 2. Everything pinned under the strict limit: both refuse the same
 *    inserts (the usage decides, and it is the same).
 * 3. With evictions: what each keeps differs (the policy), so each is
 *    only held to the contract: the usage is the charges of the values not
 *    yet deleted, the pinned usage those of the held ones, a hit is a
 *    live value inserted under its key, no held value is deleted, and in
 *    the end every value is deleted exactly once.
 *
 *   test_rocksdb_differential [hotset:SPEC] [sequences] [ops]
 *
 * 16 sequences of 3,000 operations per phase by default (4 under
 * HOTSET_TEST_QUICK).
 */
#include "rocksdb_test_util.h"

#include <map>
#include <vector>

using rocksdb::Cache;
using rt::Value;

namespace {

std::string hotset_kind = "hotset";

/* One cache, the values it was given and the handles held on it. */
struct Side {
  std::shared_ptr<Cache> c;
  rt::Registry reg;
  std::vector<std::pair<Cache::Handle *, Value *>> held;
  std::map<std::string, Value *> last; /* the value last inserted per key */
};

size_t LiveCharges(Side &s, const std::vector<Value *> &all) {
  size_t sum = 0;
  for (Value *v : all)
    if (v->deleted.load() == 0) sum += v->charge;
  (void)s;
  return sum;
}

/* Phase 1 and 3: the same operations on both sides. `compare` says
 * whether both must agree on every result (no eviction possible). */
void Run(uint64_t seed, int ops, size_t capacity, bool compare) {
  Side a, b; /* a: LRUCache, b: HotsetCache */
  a.c = rt::MakeCache("lru", capacity, 0, false);
  b.c = rt::MakeCache(hotset_kind, capacity, 0, false);
  std::vector<Value *> va, vb; /* every value, in creation order */
  rt::Rng rng(seed);
  int overwrites = 0;
  for (int i = 0; i < ops; i++) {
    std::string key = "key" + std::to_string(rng.Below(40));
    uint64_t op = rng.Below(100);
    if (op < 35) {
      size_t charge = 1 + rng.Below(300);
      bool want = rng.Below(3) == 0;
      auto pri = static_cast<Cache::Priority>(rng.Below(3));
      bool overwritten[2];
      for (Side *s : {&a, &b}) {
        Value *v = s->reg.Make(key, charge);
        (s == &a ? va : vb).push_back(v);
        Cache::Handle *h = nullptr;
        rocksdb::Status st =
            s->c->Insert(key, v, charge, rt::CountingDeleter, want ? &h : nullptr, pri);
        RT_CHECK(st.ok());
        overwritten[s == &b] = st.IsOkOverwritten();
        if (h) s->held.emplace_back(h, v);
        s->last[key] = v;
      }
      /* OkOverwritten (a redundant insert to RocksDB's block cache): the
       * key had an entry, which the insert replaced. */
      if (compare) RT_CHECK_EQ(overwritten[0], overwritten[1]);
      if (compare) overwrites += overwritten[1];
    } else if (op < 65) {
      Cache::Handle *ha = a.c->Lookup(key), *hb = b.c->Lookup(key);
      if (compare) RT_CHECK_EQ(ha != nullptr, hb != nullptr);
      for (auto [s, h] : {std::pair<Side *, Cache::Handle *>{&a, ha}, {&b, hb}}) {
        if (!h) continue;
        Value *v = static_cast<Value *>(s->c->Value(h));
        /* Inserted under this key, not yet deleted; and where nothing
         * can be evicted, the last one inserted. (With evictions,
         * LRUCache can answer an older value: an insert without a handle
         * that finds no room drops the new value and keeps the old.) */
        RT_CHECK(v->key == key);
        if (compare) RT_CHECK(v == s->last[key]);
        RT_CHECK_EQ(v->deleted.load(), 0);
        s->held.emplace_back(h, v);
      }
      /* Unpaired handles (eviction phase) are released at once, so that
       * both sides hold the same handles by index. */
      if (!ha != !hb) {
        if (ha) a.c->Release(a.held.back().first), a.held.pop_back();
        if (hb) b.c->Release(b.held.back().first), b.held.pop_back();
      }
    } else if (op < 85 && !a.held.empty() && a.held.size() == b.held.size()) {
      size_t at = rng.Below(a.held.size());
      bool erase = rng.Below(3) == 0;
      bool ra = a.c->Release(a.held[at].first, erase);
      bool rb = b.c->Release(b.held[at].first, erase);
      if (compare) RT_CHECK_EQ(ra, rb);
      for (Side *s : {&a, &b}) {
        s->held[at] = s->held.back();
        s->held.pop_back();
      }
    } else if (op < 90 && !a.held.empty() && a.held.size() == b.held.size()) {
      size_t at = rng.Below(a.held.size());
      for (Side *s : {&a, &b}) {
        RT_CHECK(s->c->Ref(s->held[at].first));
        s->held.push_back(s->held[at]);
      }
    } else {
      a.c->Erase(key);
      b.c->Erase(key);
    }
    /* The contract, on each side. */
    for (auto [s, all] : {std::pair<Side *, std::vector<Value *> *>{&a, &va}, {&b, &vb}}) {
      RT_CHECK_EQ(s->c->GetUsage(), LiveCharges(*s, *all));
      std::map<Value *, int> distinct;
      for (auto &hv : s->held) distinct[hv.second]++;
      size_t pinned = 0;
      for (auto &dv : distinct) {
        pinned += dv.first->charge;
        RT_CHECK_EQ(dv.first->deleted.load(), 0);
      }
      RT_CHECK_EQ(s->c->GetPinnedUsage(), pinned);
    }
    if (compare) {
      RT_CHECK_EQ(a.c->GetUsage(), b.c->GetUsage());
      for (size_t j = 0; j < va.size(); j++)
        RT_CHECK_EQ(va[j]->deleted.load(), vb[j]->deleted.load());
    }
    if (rt::failed.load() > 20) return; /* enough said */
  }
  /* The check above is not idle: 40 keys, a third of the operations
   * inserts, few erases: most inserts find their key cached. */
  if (compare) RT_CHECK(overwrites > ops / 10);
  for (Side *s : {&a, &b}) {
    for (auto &hv : s->held) s->c->Release(hv.first);
    s->c.reset();
    std::string why;
    RT_CHECK(s->reg.AllDeletedOnce(&why) || (std::printf("  %s\n", why.c_str()), false));
  }
}

/* Phase 2: strict, every insert asks for a handle and keeps it, so
 * nothing can be evicted and only the usage decides a refusal. */
void AllPinnedStrict(uint64_t seed, int ops) {
  auto a = rt::MakeCache("lru", 5000, 0, true);
  auto b = rt::MakeCache(hotset_kind, 5000, 0, true);
  rt::Registry ra, rb;
  std::vector<Cache::Handle *> ha, hb;
  rt::Rng rng(seed);
  int refusals = 0;
  for (int i = 0; i < ops; i++) {
    std::string key = "key" + std::to_string(i);
    size_t charge = 1 + rng.Below(400);
    Value *x = ra.Make(key, charge), *y = rb.Make(key, charge);
    Cache::Handle *h1 = nullptr, *h2 = nullptr;
    rocksdb::Status s1 = a->Insert(key, x, charge, rt::CountingDeleter, &h1);
    rocksdb::Status s2 = b->Insert(key, y, charge, rt::CountingDeleter, &h2);
    RT_CHECK_EQ(s1.ok(), s2.ok());
    RT_CHECK_EQ(s1.IsMemoryLimit(), s2.IsMemoryLimit());
    if (h1)
      ha.push_back(h1);
    else
      x->deleted.fetch_add(1);
    if (h2)
      hb.push_back(h2);
    else
      y->deleted.fetch_add(1);
    refusals += !s1.ok();
    /* And without a handle: OK on both, the value freed at once. */
    Value *p = ra.Make("nh" + key, 4000), *q = rb.Make("nh" + key, 4000);
    RT_CHECK(a->Insert("nh" + key, p, 4000, rt::CountingDeleter).ok());
    RT_CHECK(b->Insert("nh" + key, q, 4000, rt::CountingDeleter).ok());
    RT_CHECK_EQ(p->deleted.load(), q->deleted.load());
    RT_CHECK_EQ(a->GetUsage(), b->GetUsage());
    RT_CHECK_EQ(a->GetPinnedUsage(), b->GetPinnedUsage());
    /* Now and then a release makes room again. */
    if (rng.Below(4) == 0 && !ha.empty() && ha.size() == hb.size()) {
      size_t at = rng.Below(ha.size());
      RT_CHECK_EQ(a->Release(ha[at], true), b->Release(hb[at], true));
      ha.erase(ha.begin() + static_cast<long>(at));
      hb.erase(hb.begin() + static_cast<long>(at));
    }
  }
  RT_CHECK(refusals > 0);
  for (auto *h : ha) a->Release(h);
  for (auto *h : hb) b->Release(h);
  a.reset();
  b.reset();
  std::string why;
  RT_CHECK(ra.AllDeletedOnce(&why) || (std::printf("  %s\n", why.c_str()), false));
  RT_CHECK(rb.AllDeletedOnce(&why) || (std::printf("  %s\n", why.c_str()), false));
}

} // namespace

int main(int argc, char **argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0); /* what was said before a crash stays */
  if (argc > 1) hotset_kind = argv[1];
  /* HOTSET_TEST_QUICK (CI's sanitizer runs, with the debug checks): a
   * quarter of the sequences. */
  const char *quick = std::getenv("HOTSET_TEST_QUICK");
  const int sequences = argc > 2 ? std::atoi(argv[2]) : quick && *quick ? 4 : 16;
  const int ops = argc > 3 ? std::atoi(argv[3]) : 3000;
  for (int s = 0; s < sequences; s++) {
    Run(7 + static_cast<uint64_t>(s), ops, size_t(1) << 40, true); /* no eviction */
    AllPinnedStrict(100 + static_cast<uint64_t>(s), 200);
    Run(500 + static_cast<uint64_t>(s), ops, 3000, false); /* evictions */
  }
  return rt::Finish(hotset_kind.c_str());
}
