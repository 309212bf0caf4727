#!/usr/bin/env bash
#
# tests/test_sim_cli.sh — `hotset sim`, `gen-trace` and `trace-stats` end to
# end: the four encodings of the shared CloudPhysics trace agree, every size
# syntax and output mode works, bad input stops with one line (or is skipped
# and counted with --skip-bad), MRCs and plots come out, belady is a lower
# bound, and gen-trace is reproducible from its seed.
#
# Usage: test_sim_cli.sh PATH/TO/hotset REPO_ROOT
# The shared traces are read from REPO_ROOT/../shared/traces; the test fails
# with a clear message if that directory is missing.

set -u
HOTSET=${1:?usage: test_sim_cli.sh PATH/TO/hotset REPO_ROOT}
ROOT=${2:?usage: test_sim_cli.sh PATH/TO/hotset REPO_ROOT}
TRACES=$ROOT/../shared/traces
source "$(dirname "$0")/cli_lib.sh"
cli_setup sim
# json_field FILE LINE FIELD: a field of the LINE-th JSON object of FILE.
json_field() { python3 -c "import json,sys; print(json.loads(open(sys.argv[1]).read().splitlines()[int(sys.argv[2])-1])[sys.argv[3]])" "$@"; }

if [[ ! -d $TRACES ]]; then
  echo "FAIL: the shared traces are missing: $TRACES does not exist (CI lays ../shared beside the repo)" >&2
  echo "0 passed, 1 failed"
  exit 1
fi

# ---- the four encodings agree (--ignore-size: same ids, same order) ----
policies=lru,fifo,clock,arc,sieve,belady,s3fifo,2q
for f in cloudPhysicsIO.oracleGeneral.bin cloudPhysicsIO.vscsi cloudPhysicsIO.csv cloudPhysicsIO.txt; do
  run sim --trace "$TRACES/$f" --policy $policies --size 100,1000,0.1 --ignore-size --json
  expect_status 0 "sim $f"
  python3 -c "
import json,sys
for l in open(sys.argv[1]):
    d=json.loads(l); print(d['policy'], d['size'], d['requests'], d['misses'])" "$out" >"$scratch/$f.misses"
done
lines=$(wc -l <"$scratch/cloudPhysicsIO.txt.misses")
if [[ $lines -eq 24 ]]; then ok; else bad "expected 24 simulations, got $lines"; fi
for f in cloudPhysicsIO.oracleGeneral.bin cloudPhysicsIO.vscsi cloudPhysicsIO.csv; do
  if cmp -s "$scratch/$f.misses" "$scratch/cloudPhysicsIO.txt.misses"; then ok; else
    bad "$f and the txt encoding disagree"
    diff "$scratch/$f.misses" "$scratch/cloudPhysicsIO.txt.misses" | head -5 >&2
  fi
done
if grep -q " 113872 " "$scratch/cloudPhysicsIO.txt.misses"; then ok; else bad "request count is not 113872"; fi
# 0.1 of 48,974 distinct objects is 4897.
if grep -q "^lru 4897 " "$scratch/cloudPhysicsIO.txt.misses"; then ok; else bad "fraction 0.1 did not give 4897 objects"; fi
# belady is a lower bound at every size.
python3 - "$scratch/cloudPhysicsIO.txt.misses" <<'PY' && ok || bad "belady is not the lower bound"
import sys, collections
best = {}
rows = [l.split() for l in open(sys.argv[1])]
for p, size, req, miss in rows:
    if p.startswith("belady"): best[size] = int(miss)
assert all(int(m) >= best[s] for p, s, r, m in rows), rows
PY

# ---- byte mode, table and CSV output, auto-detection message ----
run sim --trace "$TRACES/cloudPhysicsIO.vscsi" --policy lru --size 16MiB,256MiB
expect_status 0 "sim in byte mode"
if grep -q "16 MiB" "$out" && grep -q "256 MiB" "$out"; then ok; else bad "table lacks the sizes"; fi
if grep -q "guessed\|vscsi" "$err"; then ok; else bad "auto detection was not reported"; fi
run sim --trace "$TRACES/cloudPhysicsIO.vscsi" --policy lru,sieve --size 16MiB --csv
expect_status 0 "sim --csv output"
if [[ $(head -1 "$out") == trace,policy,size,size_unit,requests,misses,miss_ratio,byte_misses,byte_miss_ratio,seconds,mqps ]] && [[ $(wc -l <"$out") -eq 3 ]]; then ok; else bad "CSV output malformed"; fi
run sim --trace "$TRACES/cloudPhysicsIO.vscsi" --policy lru --size 16MiB --json
if [[ $(json_field "$out" 1 size_unit) == bytes && $(json_field "$out" 1 size) == 16777216 ]]; then ok; else bad "byte-mode JSON fields"; fi
for field in trace policy size size_unit requests misses miss_ratio byte_misses byte_miss_ratio seconds mqps; do
  json_field "$out" 1 $field >/dev/null 2>&1 && ok || bad "JSON lacks $field"
done
run sim --trace "$TRACES/cloudPhysicsIO.csv" --csv id=5,size=4,time=2,header --policy lru --size 16MiB --json
expect_status 0 "explicit --csv spec"
run sim --trace "$TRACES/cloudPhysicsIO.vscsi" --policy "s3fifo:small=0.2,move=1" --size 1000 --ignore-size --json
if [[ $(json_field "$out" 1 policy) == "s3fifo:small=0.2,ghost=0.9,move=1" ]]; then ok; else bad "policy parameters not in the output"; fi

# ---- MRC and plot ----
run sim --trace "$TRACES/cloudPhysicsIO.txt" --policy lru,belady --mrc 8 --ignore-size --json
expect_status 0 "sim --mrc 8"
if [[ $(wc -l <"$out") -eq 16 ]]; then ok; else bad "--mrc 8 with 2 policies should give 16 lines"; fi
if command -v gnuplot >/dev/null; then
  run sim --trace "$TRACES/cloudPhysicsIO.txt" --policy lru,arc,belady --mrc 6 --ignore-size --plot "$scratch/mrc.png"
  expect_status 0 "sim --plot"
  if [[ -s $scratch/mrc.png ]] && head -c 4 "$scratch/mrc.png" | grep -q PNG; then ok; else bad "no PNG drawn"; fi
  run sim --trace "$TRACES/cloudPhysicsIO.txt" --policy lru --mrc 4 --ignore-size --plot "$scratch/mrc.svg"
  if grep -q "<svg" "$scratch/mrc.svg"; then ok; else bad "no SVG drawn"; fi
else
  echo "note: gnuplot not installed; checking the missing-gnuplot error instead"
  run sim --trace "$TRACES/cloudPhysicsIO.txt" --policy lru --mrc 4 --ignore-size --plot "$scratch/mrc.png"
  expect_one_line_error gnuplot "sim --plot without gnuplot"
fi

# ---- bad input ----
head -c 1000 "$TRACES/cloudPhysicsIO.oracleGeneral.bin" >"$scratch/cut.oracleGeneral.bin" # 41 records + 16 bytes
run sim --trace "$scratch/cut.oracleGeneral.bin" --policy lru --size 10 --ignore-size
expect_one_line_error "record 42" "truncated record"
if grep -q "cut.oracleGeneral.bin" "$err"; then ok; else bad "error does not name the file"; fi
run sim --trace "$scratch/cut.oracleGeneral.bin" --policy lru --size 10 --ignore-size --skip-bad --json
expect_status 0 "--skip-bad"
if [[ $(json_field "$out" 1 requests) == 41 ]] && grep -q "skipped 1 bad record" "$err"; then ok; else bad "--skip-bad did not count the bad record"; fi
printf 'version,time,op,size,lbn\n1,2,r,4096,77\n1,3,r,xyz,78\n1,4,r,4096,79\n' >"$scratch/bad.csv"
run sim --trace "$scratch/bad.csv" --policy lru --size 1MiB
expect_one_line_error "line 3" "malformed CSV row"
run sim --trace "$scratch/does-not-exist.bin" --policy lru --size 10
expect_one_line_error "does-not-exist.bin" "missing file"
printf '\x01\x02\x03\x04\xff\xfe\x00' >"$scratch/mystery.dat"
run sim --trace "$scratch/mystery.dat" --policy lru --size 10
expect_one_line_error "mystery.dat" "unknown format"
run sim --trace "$TRACES/cloudPhysicsIO.txt" --policy lru --size 10 --format nosuch
expect_status 2 "bad --format"
run sim --trace "$TRACES/cloudPhysicsIO.txt" --policy nosuch --size 10
expect_status 2 "unknown policy"
run sim --trace "$TRACES/cloudPhysicsIO.txt" --policy lru --size 12XB
expect_status 2 "bad size"
run sim --trace "$TRACES/cloudPhysicsIO.txt" --policy lru --size 1.5
expect_status 2 "fraction above 1"
run sim --trace "$TRACES/cloudPhysicsIO.txt" --policy lru
expect_status 2 "no size"

# ---- zstd ----
if command -v zstd >/dev/null; then
  zstd -q -o "$scratch/cp.vscsi.zst" "$TRACES/cloudPhysicsIO.vscsi"
  run sim --trace "$scratch/cp.vscsi.zst" --policy lru --size 1000 --ignore-size --json
  expect_status 0 "sim on .zst"
  if [[ $(json_field "$out" 1 misses) == $(grep "^lru 1000 " "$scratch/cloudPhysicsIO.txt.misses" | cut -d' ' -f4) ]]; then ok; else bad "zstd trace gives other misses"; fi
fi

# ---- gen-trace and trace-stats ----
run gen-trace -o "$scratch/z.oracleGeneral.bin" --zipf 0.9 --objects 2000 --requests 50000 --seed 7
expect_status 0 "gen-trace zipf"
run gen-trace -o "$scratch/z2.oracleGeneral.bin" --zipf 0.9 --objects 2000 --requests 50000 --seed 7
if cmp -s "$scratch/z.oracleGeneral.bin" "$scratch/z2.oracleGeneral.bin"; then ok; else bad "gen-trace is not reproducible"; fi
run gen-trace -o "$scratch/scan.oracleGeneral.bin.zst" --zipf 1.0 --objects 1000 --requests 20000 --scan 3000 --scan-period 5000
expect_status 0 "gen-trace scan mix, compressed"
run trace-stats "$scratch/scan.oracleGeneral.bin.zst" --json
expect_status 0 "trace-stats"
if [[ $(json_field "$out" 1 requests) == 32000 ]]; then ok; else bad "scan mix should have 20000 + 4*3000 requests"; fi
run trace-stats "$TRACES/cloudPhysicsIO.oracleGeneral.bin" --json
if [[ $(json_field "$out" 1 objects) == 48974 && $(json_field "$out" 1 one_hit_wonders) == 21049 ]]; then ok; else bad "trace-stats of CloudPhysics"; fi
run gen-trace -o "$scratch/loop.oracleGeneral.bin" --loop --objects 100 --requests 1000
run sim --trace "$scratch/loop.oracleGeneral.bin" --policy lru,belady --size 50 --ignore-size --json
if [[ $(json_field "$out" 1 misses) == 1000 ]]; then ok; else bad "LRU on a loop larger than the cache must miss every time"; fi
run gen-trace --zipf 0.9
expect_status 2 "gen-trace without -o"

cli_finish
