/*
 * test_rocksdb_threads.cc — threads racing Insert, Lookup, Ref, Release
 * (with and without erase), Erase and SetCapacity on the same few keys of
 * one cache, then: every value's deleter ran exactly once, with its own
 * key, and never while a handle to it was held (a looked-up value is
 * checked alive through the handle).
 *
 *   test_rocksdb_threads hotset[:SPEC] | lru   [threads] [ops per thread]
 *
 * Deterministic per-thread seeds and no sleeps: the interleaving is the
 * scheduler's, the operations are not.
 */
#include "rocksdb_test_util.h"

#include <thread>
#include <vector>

using rocksdb::Cache;
using rt::Value;

int main(int argc, char **argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0); /* what was said before a crash stays */
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s hotset[:SPEC] | lru [threads] [ops]\n", argv[0]);
    return 2;
  }
  const std::string kind = argv[1];
  const int threads = argc > 2 ? std::atoi(argv[2]) : 4;
  const int ops = argc > 3 ? std::atoi(argv[3]) : 20000;
  rt::Registry reg;
  std::atomic<int> dead_seen{0}, wrong_value{0}, refused{0};
  {
    /* Small: evictions and strict refusals happen all the time. */
    std::shared_ptr<Cache> c = rt::MakeCache(kind, 4000, 2, false);
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; t++) {
      ts.emplace_back([&, t] {
        rt::Rng rng(1000 + static_cast<uint64_t>(t));
        std::vector<Cache::Handle *> held;
        auto check = [&](Cache::Handle *h, const std::string *key) {
          Value *v = static_cast<Value *>(c->Value(h));
          if (v->deleted.load() != 0) dead_seen.fetch_add(1);
          if (key && v->key != *key) wrong_value.fetch_add(1);
          if (c->GetCharge(h) != v->charge) wrong_value.fetch_add(1);
        };
        for (int i = 0; i < ops; i++) {
          std::string key = "k" + std::to_string(rng.Below(64));
          uint64_t op = rng.Below(100);
          if (op < 30) {
            size_t charge = 1 + rng.Below(200);
            Value *v = reg.Make(key, charge);
            bool want = rng.Below(2) == 0;
            Cache::Handle *h = nullptr;
            rocksdb::Status s = c->Insert(key, v, charge, rt::CountingDeleter, want ? &h : nullptr,
                                          static_cast<Cache::Priority>(rng.Below(3)));
            if (!s.ok()) {
              /* Refused with a handle asked for: the value is ours. */
              refused.fetch_add(1);
              v->deleted.fetch_add(1);
            } else if (h) {
              check(h, &key);
              held.push_back(h);
            }
          } else if (op < 65) {
            Cache::Handle *h = c->Lookup(key);
            if (h) {
              check(h, &key);
              held.push_back(h);
            }
          } else if (op < 70 && !held.empty()) {
            Cache::Handle *h = held[rng.Below(held.size())];
            if (c->Ref(h)) held.push_back(h);
          } else if (op < 90 && !held.empty()) {
            size_t at = rng.Below(held.size());
            check(held[at], nullptr);
            c->Release(held[at], rng.Below(4) == 0);
            held[at] = held.back();
            held.pop_back();
          } else if (op < 97) {
            c->Erase(key);
          } else if (op < 98) {
            c->SetCapacity(2000 + rng.Below(4000));
          } else if (op < 99) {
            c->SetStrictCapacityLimit(rng.Below(2) == 0);
          } else {
            (void)c->NewId();
          }
          while (held.size() > 8) {
            check(held.front(), nullptr);
            c->Release(held.front());
            held.erase(held.begin());
          }
          (void)c->GetUsage();
          (void)c->GetPinnedUsage();
        }
        for (Cache::Handle *h : held) c->Release(h);
      });
    }
    for (auto &t : ts) t.join();
    RT_CHECK_EQ(c->GetPinnedUsage(), 0);
  } /* the cache goes: the rest of the deleters run */
  RT_CHECK_EQ(dead_seen.load(), 0);
  RT_CHECK_EQ(wrong_value.load(), 0);
  std::string why;
  RT_CHECK(reg.AllDeletedOnce(&why) || (std::printf("  %s\n", why.c_str()), false));
  std::printf("%zu values, %d refused inserts\n", reg.Size(), refused.load());
  return rt::Finish(argv[1]);
}
