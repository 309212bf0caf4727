#!/usr/bin/env bash
# test_preload.sh — libhotset-rocksdb-preload.so in unmodified RocksDB
# programs: cache_bench makes its cache in the program (NewLRUCache,
# HyperClockCacheOptions::MakeSharedCache), ldb inside librocksdb (the
# block cache a BlockBasedTableFactory makes for itself); with
# HOTSET_ROCKSDB_VERBOSE=1 stderr shows each hotset cache made and, at its
# end, its statistics (lookups > 0: hotset's cache served them).
# HOTSET_ROCKSDB_REPLACE leaves a type stock; a bad variable costs one
# stderr line and every cache stays RocksDB's own; db_bench's readseq is
# seen as scans, readrandom is not.
#
#   test_preload.sh <libhotset-rocksdb-preload.so> [sanitizers the object was built with]
so=$1
sanitized=${2:-}
# shellcheck source=../../support/cli_lib.sh
. "$(dirname "$0")/../../support/cli_lib.sh"

if [[ -n $sanitized ]]; then
  echo "SKIPPED: test_rocksdb_preload: an object built with -fsanitize=$sanitized cannot be preloaded into unsanitized programs"
  exit 77
fi
for tool in cache_bench ldb db_bench; do
  if ! command -v $tool >/dev/null; then
    echo "SKIPPED: test_rocksdb_preload: no $tool (apt-get install rocksdb-tools)"
    exit 77
  fi
done
cli_setup rocksdb-preload

# stats_field NAME: a field of the last statistics line in $err.
stats_field() { grep ' cache: policy=' "$err" | tail -n 1 | grep -o " $1=[^ ]*" | cut -d= -f2; }

bench=(-threads=1 -ops_per_thread=20000 -cache_size=8388608 -value_bytes=1024)

# cache_bench, its LRU cache replaced.
HOTSET_ROCKSDB_VERBOSE=1 LD_PRELOAD=$so cache_bench -cache_type=lru_cache "${bench[@]}" >"$out" 2>"$err"
status=$?
expect_status 0 "cache_bench lru_cache"
if grep -q '^hotset-rocksdb: NewLRUCache -> HotsetCache policy=s3fifo' "$err"; then ok; else
  bad "cache_bench lru_cache: no hotset cache made (default policy s3fifo)"
fi
if [[ $(stats_field lookups) -gt 0 ]]; then ok; else bad "cache_bench lru_cache: lookups=$(stats_field lookups), want > 0"; fi
# An Insert of a cached key replaces it, as LRUCache's does.
if grep -q '^hotset-rocksdb: NewLRUCache -> .* duplicate=replace' "$err" && [[ $(stats_field kept) == 0 ]]; then ok; else
  bad "cache_bench lru_cache: want duplicate=replace and kept=0, got kept=$(stats_field kept)"
fi

# Its HyperClockCache replaced, under another policy.
HOTSET_ROCKSDB_VERBOSE=1 HOTSET_ROCKSDB_POLICY=arc LD_PRELOAD=$so \
  cache_bench -cache_type=hyper_clock_cache "${bench[@]}" >"$out" 2>"$err"
status=$?
expect_status 0 "cache_bench hyper_clock_cache"
if grep -q '^hotset-rocksdb: HyperClockCache -> HotsetCache policy=arc' "$err"; then ok; else
  bad "cache_bench hyper_clock_cache: no hotset cache under arc"
fi
# ... keeps it, as HyperClockCache does (cache_bench inserts keys it holds).
if grep -q '^hotset-rocksdb: HyperClockCache -> .* duplicate=keep' "$err" && [[ $(stats_field kept) -gt 0 ]]; then ok; else
  bad "cache_bench hyper_clock_cache: want duplicate=keep and kept > 0, got kept=$(stats_field kept)"
fi
# HOTSET_ROCKSDB_DUPLICATE says otherwise.
HOTSET_ROCKSDB_VERBOSE=1 HOTSET_ROCKSDB_DUPLICATE=replace LD_PRELOAD=$so \
  cache_bench -cache_type=hyper_clock_cache "${bench[@]}" >"$out" 2>"$err"
status=$?
expect_status 0 "cache_bench hyper_clock_cache, DUPLICATE=replace"
if grep -q '^hotset-rocksdb: HyperClockCache -> .* duplicate=replace' "$err" && [[ $(stats_field kept) == 0 ]]; then ok; else
  bad "DUPLICATE=replace: want duplicate=replace and kept=0, got kept=$(stats_field kept)"
fi

# HOTSET_ROCKSDB_REPLACE=hyper_clock leaves LRU caches stock.
HOTSET_ROCKSDB_VERBOSE=1 HOTSET_ROCKSDB_REPLACE=hyper_clock LD_PRELOAD=$so \
  cache_bench -cache_type=lru_cache "${bench[@]}" >"$out" 2>"$err"
status=$?
expect_status 0 "cache_bench lru_cache, REPLACE=hyper_clock"
if ! grep -q 'hotset-rocksdb' "$err"; then ok; else bad "REPLACE=hyper_clock: an LRU cache was replaced"; fi

# ldb: the block cache librocksdb makes for itself (8 MiB) is hotset's.
HOTSET_ROCKSDB_VERBOSE=1 LD_PRELOAD=$so ldb --db="$scratch/db" --create_if_missing put k1 v1 >"$out" 2>"$err"
status=$?
expect_status 0 "ldb put"
HOTSET_ROCKSDB_VERBOSE=1 LD_PRELOAD=$so ldb --db="$scratch/db" get k1 >"$out" 2>"$err"
status=$?
expect_status 0 "ldb get"
if [[ $(cat "$out") == v1 ]]; then ok; else bad "ldb get printed $(cat "$out")"; fi
if grep -q '^hotset-rocksdb: NewLRUCache -> HotsetCache .*capacity=8388608' "$err"; then ok; else
  bad "ldb: librocksdb's own 8 MiB block cache was not replaced"
fi

# A bad variable: one line naming it, RocksDB's caches, the right answer.
for bad_env in HOTSET_ROCKSDB_POLICY=bogus HOTSET_ROCKSDB_POLICY=belady HOTSET_ROCKSDB_SCAN_RUN=many \
  HOTSET_ROCKSDB_REPLACE=lru,fast_lru HOTSET_ROCKSDB_DUPLICATE=sometimes; do
  env "$bad_env" HOTSET_ROCKSDB_VERBOSE=1 LD_PRELOAD=$so ldb --db="$scratch/db" get k1 >"$out" 2>"$err"
  status=$?
  expect_status 0 "ldb get, $bad_env"
  if [[ $(cat "$out") == v1 ]]; then ok; else bad "$bad_env: ldb get printed $(cat "$out")"; fi
  if [[ $(wc -l <"$err") -eq 1 ]] && grep -q "^hotset-rocksdb: ${bad_env%%=*}=.*RocksDB's own caches stay" "$err"; then ok; else
    bad "$bad_env: want exactly one stderr line naming it"
  fi
done

# Scans: a full readseq is taken for scans, readrandom is not.
db_bench -benchmarks=fillseq -num=50000 -value_size=400 -db="$scratch/bench" -compression_type=none \
  -write_buffer_size=1048576 -target_file_size_base=1048576 >"$out" 2>"$err"
status=$?
expect_status 0 "db_bench fillseq"
common=(-use_existing_db -num=50000 -db="$scratch/bench" -cache_size=1048576 -threads=1)
HOTSET_ROCKSDB_VERBOSE=1 LD_PRELOAD=$so db_bench -benchmarks=readseq "${common[@]}" >"$out" 2>"$err"
status=$?
expect_status 0 "db_bench readseq"
scans=$(grep ' cache: policy=' "$err" | grep -o ' scans=[0-9]*' | cut -d= -f2 | sort -n | tail -n 1)
if [[ ${scans:-0} -gt 0 ]]; then ok; else bad "readseq: scans=${scans:-none}, want > 0"; fi
HOTSET_ROCKSDB_VERBOSE=1 LD_PRELOAD=$so db_bench -benchmarks=readrandom -reads=20000 "${common[@]}" >"$out" 2>"$err"
status=$?
expect_status 0 "db_bench readrandom"
lookups=$(grep ' cache: policy=' "$err" | grep -o ' lookups=[0-9]*' | cut -d= -f2 | sort -n | tail -n 1)
scans=$(grep ' cache: policy=' "$err" | grep -o ' scans=[0-9]*' | cut -d= -f2 | sort -n | tail -n 1)
if [[ ${lookups:-0} -gt 10000 && ${scans:-1} -eq 0 ]]; then ok; else
  bad "readrandom: lookups=${lookups:-none} scans=${scans:-none}, want many lookups and no scan"
fi

cli_finish
