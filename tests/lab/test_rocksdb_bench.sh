#!/usr/bin/env bash
#
# tests/lab/test_rocksdb_bench.sh — tools/rocksdb-bench/run end to end on
# its --quick run with two stock contenders (LRUCache with midpoint
# insertion, HyperClockCache), no perf: every cell has both contenders'
# samples, the foreground's block cache lookups are exactly its Gets where
# each Get reads one data block (so the scan's lookups were taken out), the
# LOG names the cache each contender asked for, the scan went over the whole
# DB, the compaction cell saw a compaction; and its refusals are one line
# (missing benchmark or preload: status 1) or a usage error (status 2, the
# error naming the flag and one line saying where the options are). No
# speed is asserted (docs/rocksdb-bench.md has the figures). Without
# RocksDB's cache_bench or db_bench the run is skipped (status 77).
#
# Usage: test_rocksdb_bench.sh REPO_ROOT
# Prints "N passed, N failed" last and exits non-zero if anything failed.

set -u

REPO=${1:?usage: test_rocksdb_bench.sh REPO_ROOT}
TOOL=$REPO/tools/rocksdb-bench/run
source "$(dirname "$0")/../support/cli_lib.sh"
cli_setup rocksdb-bench

tool() {
  python3 "$TOOL" "$@" >"$out" 2>"$err"
  status=$?
}

one_line() { # status needle description
  if [[ $status -eq $1 && $(wc -l <"$err") -eq 1 ]] && grep -qF -- "$2" "$err" && [[ ! -s $out ]]; then
    ok
  else
    bad "$3: status $status, want $1 and one stderr line naming \"$2\" ($(wc -l <"$err") lines)"
  fi
}

usage_error() { # needle description
  if [[ $status -eq 2 && $(wc -l <"$err") -eq 2 ]] && head -1 "$err" | grep -qF -- "$1" &&
    sed -n 2p "$err" | grep -q "^run 'tools/rocksdb-bench/run --help' for the options$" && [[ ! -s $out ]]; then
    ok
  else
    bad "$2: status $status, want 2, the error naming \"$1\" and the hint ($(wc -l <"$err") lines)"
  fi
}

if ! command -v python3 >/dev/null; then
  echo "SKIPPED: test_rocksdb_bench: python3 is not installed"
  exit 77
fi

# ---- refusals, with or without RocksDB ------------------------------------
tool --db-bench "$scratch/no-db_bench" --parts db_bench --contenders lru --work "$scratch/w"
one_line 1 "no db_bench at $scratch/no-db_bench" "a missing db_bench"
tool --cache-bench "$scratch/no-cache_bench" --parts cache_bench --contenders lru --work "$scratch/w"
one_line 1 "no cache_bench at $scratch/no-cache_bench" "a missing cache_bench"
tool --contenders lru,nosuch
usage_error "--contenders lru,nosuch: unknown contender nosuch" "an unknown contender"
tool --contenders lru,lru
usage_error "a contender is named twice" "a contender named twice"
tool --reps 0
usage_error "--reps 0" "--reps 0"
tool --reps 41
usage_error "--reps 41: must be 1 to 40" "--reps 41"
tool --reps many
usage_error "--reps" "--reps many"
tool --pace 0
usage_error "--pace 0" "--pace 0"
tool --workloads hot99
usage_error "--workloads hot99" "an unknown key set"
tool --parts sqlite
usage_error "--parts sqlite" "an unknown part"
tool --frobnicate
usage_error "--frobnicate" "an unknown flag"
tool --json "$scratch/no-dir/x.json" --work "$scratch/w"
one_line 1 "cannot write --json $scratch/no-dir/x.json" "an unwritable --json"

for b in cache_bench db_bench; do
  if ! command -v $b >/dev/null; then
    echo "SKIPPED: test_rocksdb_bench: the runs: no $b in PATH (Debian: rocksdb-tools)"
    cli_finish
    exit 77
  fi
done

# The preload: missing, it is refused unless --stock-only says to go on
# without it; --stock-only with hotset alone leaves nothing to run.
tool --preload "$scratch/no.so" --contenders lru,hotset --work "$scratch/w"
one_line 1 "no preload at $scratch/no.so" "a missing preload"
if grep -q -- "--stock-only" "$err"; then ok; else bad "the missing preload's line does not name --stock-only"; fi
tool --preload "$scratch/no.so" --contenders hotset --stock-only --work "$scratch/w"
one_line 1 "--stock-only leaves no contender" "--stock-only with hotset alone"

# ---- reps: each in the order opposite the last's ----------------------------
tool --quick --parts cache_bench --contenders lru,hcc --reps 2 --work "$scratch/w" --json "$scratch/reps.json"
expect_status 0 "the two-rep cache_bench run"
order=$(sed -n 's/^rocksdb-bench: \[cache_bench [0-9]*\/24\] threads=\([12]\) \([a-z-]*\) \([a-z0-9]*\):.*/\1 \2 \3/p' "$err" |
  awk '{cell[$1" "$2] = cell[$1" "$2] $3 ","} END {for (k in cell) print cell[k]}' | sort -u)
if [[ $order == "lru,hcc,hcc,lru," ]]; then ok; else bad "the contenders' order in a cell's reps: '$order', want lru,hcc,hcc,lru, in each"; fi
python3 - "$scratch/reps.json" >"$scratch/check" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
bad = []
for r in d["cache_bench"]:
    for c in ("lru", "hcc"):
        e = r["contenders"][c]
        cpu = e.get("cpu_us_per_op", [])
        if len(e["samples"]) != 2 or len(cpu) != 2 or not all(x > 0 for x in cpu):
            bad.append(f"{r['threads']} {r['mix']} {c}: samples {e['samples']}, CPU us/op {cpu}")
    if r.get("paired") != {}:
        bad.append(f"{r['threads']} {r['mix']}: paired {r.get('paired')}, want none (no hotset contender)")
for b in bad:
    print(b)
print(len(bad))
PY
if [[ $(tail -1 "$scratch/check") == 0 ]]; then ok; else bad "the two-rep JSON: $(head -20 "$scratch/check")"; fi

# ---- the quick run ---------------------------------------------------------
json=$scratch/r.json
tool --quick --contenders lru,hcc --no-perf --work "$scratch/w" --json "$json"
expect_status 0 "the quick run"
if grep -q "^## cache_bench" "$out" && grep -q "^## db_bench" "$out"; then ok; else
  bad "the table lacks its cache_bench or db_bench part: $(head -c 400 "$out")"
fi
if grep -q "^scan hot50 paced t1 warm " "$out"; then ok; else bad "no scan row in the table"; fi
python3 - "$json" >"$scratch/check" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
bad = []
m = d["meta"]
for k in ("date", "nproc", "rocksdb_version", "assertions_enabled", "contenders"):
    if k not in m:
        bad.append(f"meta has no {k}")
if m.get("contenders") != ["lru", "hcc"]:
    bad.append(f"contenders {m.get('contenders')}")
if len(d["cache_bench"]) != 6:
    bad.append(f"{len(d['cache_bench'])} cache_bench cells, want 6 (2 thread counts x 3 mixes)")
for r in d["cache_bench"]:
    for c in ("lru", "hcc"):
        e = r["contenders"].get(c)
        if not e or len(e["samples"]) != 1 or not e["median"] or e["median"] <= 0:
            bad.append(f"cache_bench {r['threads']} {r['mix']} {c}: {e}")
        elif "cache_bench" not in e["command"]:
            bad.append(f"cache_bench {c}: command {e['command']}")
names = [r["name"] for r in d["db_bench"]]
want = ["alone hot50 fast t1", "alone hot50 paced t1 warm", "scan hot50 paced t1 warm", "compaction hot50 paced t1"]
if names != want:
    bad.append(f"db_bench cells {names}, want {want}")
cache_name = {"lru": "LRUCache", "hcc": "HyperClockCache"}
for r in d["db_bench"]:
    for c in ("lru", "hcc"):
        e = r["contenders"].get(c)
        if not e or len(e["samples"]) != 1:
            bad.append(f"{r['name']} {c}: samples {e and e['samples']}")
            continue
        s = e["samples"][0]
        if not (0 < s["hit_ratio"] <= 1) or s["gets"] <= 0 or s["p99_us"] is None:
            bad.append(f"{r['name']} {c}: {s}")
        if s["block_cache_name"] != cache_name[c]:
            bad.append(f"{r['name']} {c}: the LOG says {s['block_cache_name']}")
        if c == "lru" and s["high_pri_pool_ratio"] != 0.5:
            bad.append(f"{r['name']} lru: high_pri_pool_ratio {s['high_pri_pool_ratio']}")
        # One level, bloom filters: a Get reads one data block, so the
        # foreground's lookups are its Gets when the scan's are taken out.
        if (r["kind"] == "alone") != (s.get("cpu_us_per_get") is not None) or \
                (s.get("cpu_us_per_get") is not None and not s["cpu_us_per_get"] > 0) or not s["cpu_s"] > 0:
            bad.append(f"{r['name']} {c}: CPU {s['cpu_s']} s, {s.get('cpu_us_per_get')} us a Get")
        if r["kind"] != "compaction" and s["hits"] + s["misses"] != s["gets"]:
            bad.append(f"{r['name']} {c}: lookups {s['hits'] + s['misses']} != Gets {s['gets']}")
        if r["kind"] == "scan" and not s.get("scan_passes", 0) >= 1:
            bad.append(f"{r['name']} {c}: the scan went over the DB {s.get('scan_passes')} times")
        if r["kind"] == "compaction" and not s.get("compactions", 0) >= 1:
            bad.append(f"{r['name']} {c}: no compaction finished")
        if r["pace"] == "paced" and not 0.5 * 20000 < s["ops_per_s"] < 1.5 * 20000:
            bad.append(f"{r['name']} {c}: paced at {s['ops_per_s']} Gets/s, want about 20000")
    if not 0.4 < r["hot_share_of_cache"] < 0.6:
        bad.append(f"{r['name']}: hot set {r['hot_share_of_cache']} of the cache, want 0.5")
j = d["judgements"]["scan_retention"]
for c in ("lru", "hcc"):
    if j[c]["worst"] is None:
        bad.append(f"no scan retention for {c}")
for b in bad:
    print(b)
print(len(bad))
PY
if [[ $(tail -1 "$scratch/check") == 0 ]]; then ok; else bad "the JSON: $(head -20 "$scratch/check")"; fi
if [[ -z $(ls "$scratch/w/db-run" 2>/dev/null) ]]; then ok; else bad "the compaction's run copy was left behind"; fi

cli_finish
