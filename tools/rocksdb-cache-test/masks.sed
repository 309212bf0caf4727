# tools/rocksdb-cache-test/masks.sed — sed -E expressions `run` applies to
# a copy of cache/cache_test.cc (in the work directory; RocksDB's source is
# not changed) to build cache_test-masked: the same tests without the
# assertions that only hold for a cache that charges its metadata
# (kFullChargeCacheMetadata). When a test fails on hotset and
# expected.list explains it with class b, it runs again masked, so the
# rest of the test still checks hotset (UsageTest's and PinnedUsageTest's
# capacity and pinning checks come after the metadata ones). Each
# expression must match at least once (run says which did not).
#
# The cache made with kFullChargeCacheMetadata charges more than the sum of
# the charges (hotset charges only the charges: hotset_rocksdb.h).
s/ASSERT_LT\((pinned_usage|usage), precise_cache(->GetPinnedUsage\(\)|->GetUsage\(\)|_pinned_usage)\);/{} \/* masked: metadata charge *\//
# ... and so ends strictly below its capacity after overfilling (entries of
# charge 10 fill hotset's one-shard cache of 100000 exactly).
s/ASSERT_GT\(kCapacity, precise_cache->GetUsage\(\)\);/{} \/* masked: below capacity by the metadata charge *\//
