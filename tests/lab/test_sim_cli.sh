#!/usr/bin/env bash
#
# tests/test_sim_cli.sh — `hotset sim`, `gen-trace` and `trace-stats` end to
# end: the four encodings of the shared CloudPhysics trace agree, every size
# syntax and output mode works, bad input stops with one line (or is skipped
# and counted with --skip-bad), MRCs and plots come out, belady is a lower
# bound, and gen-trace is reproducible from its seed and writes the format
# its file name says.
#
# Input without end (/dev/zero in every format, a zstd stream of zeros)
# must stop with one line, quickly and in bounded memory; flags are checked
# before the trace is read; no flag value is cut short. Those runs go
# through `bounded`: under `timeout 20`, so that a regression shows as a
# failure rather than a hung test, and, unless the binary is built with
# AddressSanitizer (which reserves terabytes of address space), under a
# 2 GiB address-space limit, so that it cannot take the machine down.
#
# Usage: test_sim_cli.sh PATH/TO/hotset REPO_ROOT
# The sample traces are read from $HOTSET_TRACES, else the traces directory
# beside REPO_ROOT (cli_lib.sh's traces_dir); the checks that need them are
# skipped, with one line saying where it looked, if there is none.

set -u
HOTSET=${1:?usage: test_sim_cli.sh PATH/TO/hotset REPO_ROOT}
ROOT=${2:?usage: test_sim_cli.sh PATH/TO/hotset REPO_ROOT}
source "$(dirname "$0")/../support/cli_lib.sh"
traces_dir "$ROOT"
cli_setup sim
# json_field FILE LINE FIELD: a field of the LINE-th JSON object of FILE.
json_field() { python3 -c "import json,sys; print(json.loads(open(sys.argv[1]).read().splitlines()[int(sys.argv[2])-1])[sys.argv[3]])" "$@"; }

sanitized=false
if grep -q -a __asan_init "$HOTSET"; then sanitized=true; fi
# bounded ARGS...: like run, under the time limit and the memory guard.
bounded() {
  (
    $sanitized || ulimit -v 2097152
    exec timeout 20 "$HOTSET" "$@"
  ) >"$out" 2>"$err"
  status=$?
}

# ---- input without end: one line, at once, in bounded memory ----
run gen-trace -o "$scratch/small.oracleGeneral.bin" --zipf 0.8 --objects 500 --requests 20000 --seed 3
expect_status 0 "gen-trace small"
bounded sim --trace /dev/zero --format oraclegeneral --policy lru --size 10 --max-requests 100000
expect_one_line_error "stopped loading after 100000 requests, the limit" "/dev/zero as oraclegeneral, --max-requests"
if grep -q -- "--max-requests raises it" "$err"; then ok; else bad "the cap's error does not name --max-requests"; fi
if $sanitized; then
  echo "note: sanitized build; the default cap is checked only under ulimit -v in plain builds"
else
  # The default cap follows the address-space limit (unless memory is smaller).
  bounded sim --trace /dev/zero --format oraclegeneral --policy lru --size 10
  expect_one_line_error "requests, the default limit: what fits in half of the" "/dev/zero as oraclegeneral, default cap"
  if grep -q -- "--max-requests" "$err"; then ok; else bad "the default cap's error does not name --max-requests"; fi
fi
for f in txt csv; do
  bounded sim --trace /dev/zero --format $f --policy lru --size 10
  expect_one_line_error "/dev/zero: line 1: line too long (more than 65536 bytes)" "/dev/zero as $f"
done
bounded sim --trace /dev/zero --format csv --csv id=1 --policy lru --size 10
expect_one_line_error "/dev/zero: line 1: line too long" "/dev/zero as csv with columns given"
bounded sim --trace /dev/zero --format txt --skip-bad --policy lru --size 10
expect_one_line_error "/dev/zero: line 1: no line end in its first 16 MiB" "/dev/zero as txt, --skip-bad"
bounded sim --trace /dev/zero --format vscsi --policy lru --size 10
expect_one_line_error "/dev/zero: record 1: not vscsi" "/dev/zero as vscsi"
bounded sim --trace /dev/zero --policy lru --size 10
expect_one_line_error "/dev/zero: cannot tell the trace format" "/dev/zero, format auto"
bounded trace-stats /dev/zero --format oraclegeneral --max-requests 1000
expect_one_line_error "stopped loading after 1000 requests" "trace-stats on /dev/zero"
# A zstd frame of 65,536 RLE blocks: 256 KiB unpacking to 8 GiB of zeros.
python3 -c '
import sys
n = 65536
block = bytes([2, 0, 0x10, 0])  # RLE, 128 KiB of the byte that follows
sys.stdout.buffer.write(bytes([0x28, 0xB5, 0x2F, 0xFD, 0, 0x38]) + block * (n - 1) + bytes([3, 0, 0x10, 0]))
' >"$scratch/zeros.zst"
bounded sim --trace "$scratch/zeros.zst" --format oraclegeneral --policy lru --size 10 --max-requests 100000
expect_one_line_error "stopped loading after 100000 requests" "zstd zeros as oraclegeneral"
if ! $sanitized; then
  bounded sim --trace "$scratch/zeros.zst" --format oraclegeneral --policy lru --size 10
  expect_one_line_error "the default limit" "zstd zeros as oraclegeneral, default cap"
fi
for f in txt csv; do
  bounded sim --trace "$scratch/zeros.zst" --format $f --policy lru --size 10
  expect_one_line_error "zeros.zst: line 1: line too long" "zstd zeros as $f"
done
# A trace of exactly the cap loads.
bounded sim --trace "$scratch/small.oracleGeneral.bin" --policy lru --size 10 --max-requests 20000 --json
expect_status 0 "a trace of exactly --max-requests"
bounded sim --trace "$scratch/small.oracleGeneral.bin" --policy lru --size 10 --max-requests 19999
expect_one_line_error "stopped loading after 19999 requests" "a trace one over --max-requests"

# ---- flags are checked before the trace is read (it would never end) ----
for size in 12XB 1.5 0 1,,2 "1,"; do
  bounded sim --trace /dev/zero --format oraclegeneral --policy lru --size "$size"
  expect_usage_error "--size" "bad --size $size before loading" "hotset sim: --size"
done
bounded sim --trace /dev/zero --format oraclegeneral --policy lru --size 1MiB --ignore-size
expect_usage_error "a byte size with --ignore-size" "--size with a suffix and --ignore-size"
bounded sim --trace /dev/zero --format oraclegeneral --policy nosuch --size 10
expect_usage_error "nosuch" "unknown policy before loading"

# ---- no flag value is cut short, and messages name real flags ----
sizes=$(python3 -c 'print(",".join(str(100000000 + i) for i in range(230)))')
[[ ${#sizes} -gt 2047 ]] || bad "the size list should be longer than 2047 characters"
run sim --trace "$scratch/small.oracleGeneral.bin" --policy lru --size "$sizes" --json
expect_status 0 "230 sizes"
if [[ $(wc -l <"$out") -eq 230 && $(json_field "$out" 230 size) == 100000229 ]]; then ok; else
  bad "230 sizes ran $(wc -l <"$out") simulations, the last at size $(tail -1 "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["size"])' 2>/dev/null)"
fi
policies=$(python3 -c 'print(",".join(["lru"] * 65))')
bounded sim --trace /dev/zero --policy "$policies" --size 10
expect_usage_error "more than 64 policies" "65 policies"
long_policy="lru:$(python3 -c 'print("x" * 200)')=1"
bounded sim --trace /dev/zero --policy "$long_policy" --size 10
expect_usage_error "longer than 159 characters" "a policy spec too long"
run sim --trace "$scratch/small.oracleGeneral.bin" --policy lru --mrc 0
expect_usage_error '--mrc: "0" must be at least 1' "--mrc 0" "hotset sim: --mrc:"
run sim --trace "$scratch/small.oracleGeneral.bin" --policy lru --mrc 257
expect_usage_error '--mrc: "257" must be at most 256' "--mrc 257" "hotset sim: --mrc:"
run sim --trace "$scratch/small.oracleGeneral.bin" --policy lru --size 10 --csv=
expect_usage_error "--csv: missing value" "--csv= without a spec" "hotset sim: --csv:"
run sim --trace "$scratch/small.oracleGeneral.bin" --policy lru --mrc --ignore-size --json
expect_status 0 "bare --mrc"
if [[ $(wc -l <"$out") -ge 15 ]]; then ok; else bad "bare --mrc should sweep about 20 sizes"; fi
run sim --help
if grep -q -- "--max-requests N" "$out"; then ok; else bad "--help does not describe --max-requests"; fi

# ---- --mrc: plain lru's curve in one pass equals lru simulated at each size ----
run sim --trace "$scratch/small.oracleGeneral.bin" --policy lru,fifo --mrc 12 --ignore-size --json
expect_status 0 "--mrc lru,fifo"
python3 -c "
import json,sys
for l in open(sys.argv[1]):
    d=json.loads(l)
    if d['policy']=='lru': print(d['size'], d['misses'], d['method'])" "$out" >"$scratch/mrc.lru"
mrc_sizes=$(cut -d' ' -f1 "$scratch/mrc.lru" | paste -sd,)
run sim --trace "$scratch/small.oracleGeneral.bin" --policy lru --size "$mrc_sizes" --ignore-size --json
python3 -c "
import json,sys
for l in open(sys.argv[1]):
    d=json.loads(l); print(d['size'], d['misses'], d['method'])" "$out" >"$scratch/sim.lru"
if [[ $(wc -l <"$scratch/mrc.lru") -ge 10 ]] && ! grep -qv " stack-distance$" "$scratch/mrc.lru" &&
  ! grep -qv " simulation$" "$scratch/sim.lru" &&
  diff <(cut -d' ' -f1,2 "$scratch/mrc.lru") <(cut -d' ' -f1,2 "$scratch/sim.lru") >/dev/null; then ok; else
  bad "--mrc's one-pass lru curve differs from lru simulations at its sizes"
  diff "$scratch/mrc.lru" "$scratch/sim.lru" | head -5 >&2
fi
if [[ -n $(json_field "$out" 1 load_seconds) ]]; then ok; else bad "sim --json has no load_seconds"; fi

# ---- --sample R: a spatially hashed sample, simulated at R x each size ----
for rate in 0 -0.1 1.5 abc 1e-9; do # 1e-9 is below 2^-24: no object could be sampled
  run sim --trace "$scratch/no-such-trace" --policy lru --mrc 4 --sample "$rate"
  expect_usage_error "--sample: \"$rate\" is not a rate" "--sample $rate before loading" "hotset sim: --sample:"
done
run gen-trace -o "$scratch/zipf.oracleGeneral.bin" --zipf 0.9 --objects 100000 --requests 1000000 --seed 5
expect_status 0 "gen-trace zipf"
run sim --trace "$scratch/zipf.oracleGeneral.bin" --policy lru,fifo --mrc 8 --ignore-size --sample 0.01 \
  --sample-floor 0 --json
expect_status 0 "--sample 0.01 --mrc"
if python3 -c "
import json,sys
rows=[json.loads(l) for l in open(sys.argv[1])]
assert len(rows)==16, len(rows)
for d in rows:
    assert d['sample']==0.01 and d['requests']==1000000, d
    assert 0 < d['sampled_requests'] < 20000 and d['sampled_size']==max(1, round(d['size']*0.01)), d
    assert d['method']==('stack-distance' if d['policy']=='lru' else 'simulation'), d
    assert 0 < d['miss_ratio'] <= 1, d
" "$out"; then ok; else bad "--sample 0.01 --mrc: rows not marked as sampled, or not scaled"; fi
cp "$out" "$scratch/sampled.json"
# Near the exact curve (a loose bound: 905 objects are sampled here; test_shards
# holds the accuracy), which it cannot be if the sizes were not scaled.
run sim --trace "$scratch/zipf.oracleGeneral.bin" --policy lru,fifo --mrc 8 --ignore-size --json
if python3 -c "
import json,sys
a=[json.loads(l) for l in open(sys.argv[1])]; b=[json.loads(l) for l in open(sys.argv[2])]
err=[abs(x['miss_ratio']-y['miss_ratio']) for x,y in zip(a,b)]
assert len(err)==16 and sum(err)/len(err) <= 0.06, sum(err)/len(err)
" "$scratch/sampled.json" "$out"; then ok; else bad "--sample 0.01: the sampled curve is far from the exact one"; fi
run sim --trace "$scratch/zipf.oracleGeneral.bin" --policy lru,fifo --size 100,1000 --ignore-size --sample 0.01 \
  --sample-floor 0
if [[ $(head -1 "$out") == "# sampled (SHARDS) at rate 0.01: "* ]]; then ok; else bad "the table does not say it is sampled"; fi
# With the floor (default 32 entries), small sizes are sampled at the rate
# that leaves their caches 32 entries; large ones at R; misses still scaled
# to the whole trace, and the table says how many sizes were raised.
run sim --trace "$scratch/zipf.oracleGeneral.bin" --policy lru,fifo --size 100,1000,10000 --ignore-size \
  --sample 0.01 --json
if python3 -c "
import json,sys
rows=[json.loads(l) for l in open(sys.argv[1])]
assert len(rows)==6, len(rows)
for d in rows:
    want=max(0.01, min(1, 32/d['size']))
    assert abs(d['sample']-want) < 1e-3*want, d
    assert d['sampled_size'] >= 32 and d['requests']==1000000, d
    assert (d['sample'] == 1) == (d['sampled_requests'] == 1000000), d
" "$out"; then ok; else bad "--sample 0.01 with the floor: rates not raised for small sizes"; fi
run sim --trace "$scratch/zipf.oracleGeneral.bin" --policy lru --size 100,1000,10000 --ignore-size --sample 0.01
if [[ $(head -1 "$out") == "# sampled (SHARDS) at rate 0.01: "*"2 of 3 sizes at higher rates"* ]]; then ok; else
  bad "the table does not say which sizes were sampled at higher rates: $(head -1 "$out")"
fi
# Rate 1 keeps every object at every size: the unsampled results.
run sim --trace "$scratch/small.oracleGeneral.bin" --policy lru,fifo --mrc 6 --ignore-size --sample 1 --json
python3 -c "
import json,sys
for l in open(sys.argv[1]):
    d=json.loads(l); print(d['policy'], d['size'], d['requests'], d['misses'])" "$out" >"$scratch/sample1"
run sim --trace "$scratch/small.oracleGeneral.bin" --policy lru,fifo --mrc 6 --ignore-size --json
python3 -c "
import json,sys
for l in open(sys.argv[1]):
    d=json.loads(l); print(d['policy'], d['size'], d['requests'], d['misses'])" "$out" >"$scratch/sample0"
if [[ -s $scratch/sample1 ]] && diff "$scratch/sample1" "$scratch/sample0" >/dev/null; then ok; else
  bad "--sample 1 differs from the unsampled run"
fi

# ---- --shard I/N: the shards' outputs, concatenated in order, are the whole run's ----
# The timing fields (seconds, load_seconds, mqps) are dropped before comparing.
untimed() { python3 -c "
import csv,json,sys
for l in open(sys.argv[1]):
    if l.startswith('{'):
        d=json.loads(l)
        for k in ('seconds','load_seconds','mqps'): d.pop(k)
        print(json.dumps(d, sort_keys=True))
    else:
        print(next(csv.reader([l]))[:-2])" "$1"; }
for mode in "--json" "--csv"; do
  for sweep in "--size 10,50,0.3" "--mrc 6"; do
    run sim --trace "$scratch/small.oracleGeneral.bin" --policy lru,fifo,clock $sweep --ignore-size $mode
    untimed "$out" >"$scratch/whole"
    for n in 1 2 4 7 25; do
      : >"$scratch/parts"
      for ((i = 1; i <= n; i++)); do
        run sim --trace "$scratch/small.oracleGeneral.bin" --policy lru,fifo,clock $sweep --ignore-size $mode --shard $i/$n
        expect_status 0 "--shard $i/$n $mode $sweep"
        cat "$out" >>"$scratch/parts"
      done
      untimed "$scratch/parts" >"$scratch/joined"
      if [[ -s $scratch/whole ]] && cmp -s "$scratch/whole" "$scratch/joined"; then ok; else
        bad "$n shards ($mode $sweep) concatenated differ from the unsharded run"
        diff "$scratch/whole" "$scratch/joined" | head -5 >&2
      fi
    done
  done
done
for shard in 0/3 4/3 3 /3 2/ x/2 1/0; do
  bounded sim --trace /dev/zero --format oraclegeneral --policy lru --size 10 --shard "$shard"
  expect_usage_error "--shard" "--shard $shard before loading" "hotset sim: --shard"
done

# ---- gen-trace writes the format the name says ----
run sim --trace "$scratch/small.oracleGeneral.bin" --policy lru,belady --size 400KiB,1MiB --json
want=$(python3 -c 'import json,sys; print([json.loads(l)["misses"] for l in open(sys.argv[1])])' "$out")
for f in small.csv small.csv.zst; do
  run gen-trace -o "$scratch/$f" --zipf 0.8 --objects 500 --requests 20000 --seed 3
  expect_status 0 "gen-trace -o $f"
  if grep -q "(csv)" "$out" && [[ ! -s $err ]]; then ok; else bad "gen-trace -o $f did not say on stdout (only) that it wrote csv"; fi
  run sim --trace "$scratch/$f" --policy lru,belady --size 400KiB,1MiB --json
  expect_status 0 "sim on gen-trace's $f"
  got=$(python3 -c 'import json,sys; print([json.loads(l)["misses"] for l in open(sys.argv[1])])' "$out")
  if [[ $got == "$want" ]]; then ok; else bad "$f gives misses $got, the oracleGeneral file $want"; fi
done
run gen-trace -o "$scratch/small.txt" --zipf 0.8 --objects 500 --requests 20000 --seed 3
run sim --trace "$scratch/small.oracleGeneral.bin" --policy lru --size 50 --ignore-size --json
want=$(json_field "$out" 1 misses)
run sim --trace "$scratch/small.txt" --policy lru --size 50 --ignore-size --json
if [[ $(json_field "$out" 1 misses) == "$want" ]]; then ok; else bad "gen-trace's txt reads back otherwise"; fi
run gen-trace -o "$scratch/small.vscsi" --requests 100
expect_usage_error "does not write" "gen-trace -o x.vscsi" "hotset gen-trace: -o:"
if [[ ! -e $scratch/small.vscsi ]]; then ok; else bad "gen-trace -o x.vscsi left a file"; fi

# ---- text that is not a trace; a format that does not fit the file ----
run sim --trace "$ROOT/README.md" --policy lru --size 10
expect_one_line_error "README.md: not a trace: text, but line 1 (" "README.md as a trace"
run trace-stats "$ROOT/README.md"
expect_one_line_error "README.md: not a trace" "trace-stats on README.md"
printf '17\n18\nthis is a note, not an id\n' >"$scratch/notes.txt"
run sim --trace "$scratch/notes.txt" --policy lru --size 10
expect_one_line_error 'line 3 ("this is a note, not an id") is not an object id' "prose named .txt"
run sim --trace "$scratch/notes.txt" --format txt --policy lru --size 10 --json
expect_status 0 "prose given as txt is read as told"
run sim --trace "$scratch/small.oracleGeneral.bin" --format vscsi --policy lru --size 10
expect_one_line_error "not vscsi: " "--format vscsi on oracleGeneral"
if grep -q -- "it looks like an oraclegeneral trace (.*): try --format oraclegeneral or leave --format out" "$err"; then ok; else
  bad "--format vscsi on oracleGeneral does not suggest --format oraclegeneral"
fi
cp "$scratch/small.oracleGeneral.bin" "$scratch/misnamed.vscsi"
run sim --trace "$scratch/misnamed.vscsi" --policy lru --size 10
expect_one_line_error "the name says vscsi (.vscsi), but" "oracleGeneral named .vscsi"
if grep -q -- "give --format oraclegeneral" "$err"; then ok; else bad "a misleading name: no --format suggested"; fi

# ---- --plot: the output is checked before the trace is read ----
if command -v gnuplot >/dev/null; then
  bounded sim --trace /dev/zero --format oraclegeneral --policy lru --size 10 --max-requests 100000 --plot "$scratch/no/such/dir/mrc.png"
  expect_one_line_error "hotset sim: --plot: cannot write $scratch/no/such/dir/mrc.png: No such file or directory" "--plot into a missing directory"
  bounded sim --trace /dev/zero --format oraclegeneral --policy lru --size 10 --max-requests 1000 --plot "$scratch/later.png"
  expect_one_line_error "stopped loading after 1000 requests" "--plot checked, then loading fails"
  if [[ ! -e $scratch/later.png ]]; then ok; else bad "checking --plot left a file behind"; fi
else
  echo "SKIPPED: test_sim_cli: --plot's early check: gnuplot is not installed (that error comes first)"
fi

# ---- human units in the text outputs; JSON and CSV keep raw numbers ----
# small: 500 objects of 4096 bytes, so 2048000 bytes of working set.
run trace-stats "$scratch/small.oracleGeneral.bin"
expect_status 0 "trace-stats text"
if grep -q "^working set  *1.95 MiB (2048000 bytes)$" "$out"; then ok; else bad "trace-stats: working set not in human units: $(grep 'working set' "$out")"; fi
if grep -q "^  *4 KiB .. 8 KiB  *500 objects$" "$out"; then ok; else bad "trace-stats: size histogram: $(tail -1 "$out")"; fi
run trace-stats "$scratch/small.oracleGeneral.bin" --json
if [[ $(json_field "$out" 1 working_set_bytes) == 2048000 ]]; then ok; else bad "trace-stats --json: working_set_bytes is not the raw number"; fi
run trace-stats "$scratch/small.txt"
if grep -q "^working set  *500 objects" "$out" && ! grep -q "bytes" "$out"; then ok; else bad "trace-stats on a trace without sizes speaks of bytes"; fi
run sim --trace "$scratch/small.oracleGeneral.bin" --policy lru --size 1000000,1MiB
expect_status 0 "sim, byte mode, one object size"
if grep -q "^lru  *977 KiB " "$out" && grep -q "^lru  *1 MiB " "$out"; then ok; else bad "sim: sizes not in human units"; fi
# Every object one size: bytemiss% would only repeat miss%.
if ! grep -q "bytemiss%" "$out"; then ok; else bad "bytemiss% shown though every object has one size"; fi
run sim --trace "$scratch/small.oracleGeneral.bin" --policy lru --size 50 --ignore-size
if grep -q "^lru  *50 objects " "$out" && ! grep -q "bytemiss%" "$out"; then ok; else bad "sim --ignore-size: size not in objects, or bytemiss% shown"; fi
printf 'obj_id,obj_size\n1,100\n2,3000\n1,100\n3,100\n2,3000\n' >"$scratch/sizes.csv"
run sim --trace "$scratch/sizes.csv" --policy lru --size 3KiB
if grep -q "bytemiss%" "$out" && grep -q "^lru  *3 KiB " "$out"; then ok; else bad "bytemiss% missing where sizes differ"; fi
run sim --trace "$scratch/sizes.csv" --policy lru --size 3KiB --json
if [[ $(json_field "$out" 1 size) == 3072 && -n $(json_field "$out" 1 byte_miss_ratio) ]]; then ok; else bad "sim --json: raw size or byte_miss_ratio missing"; fi
# Paths that need escaping stay valid JSON and CSV.
odd="$scratch/we\"ird, name.oracleGeneral.bin"
cp "$scratch/small.oracleGeneral.bin" "$odd"
run trace-stats "$odd" --json
if [[ $(json_field "$out" 1 trace) == "$odd" ]]; then ok; else bad "trace-stats --json: a path with a quote is not escaped"; fi
run sim --trace "$odd" --policy lru --size 10 --json
if [[ $(json_field "$out" 1 trace) == "$odd" ]]; then ok; else bad "sim --json: a path with a quote is not escaped"; fi
run sim --trace "$odd" --policy lru --size 10 --csv
if [[ $(python3 -c 'import csv,sys; print(list(csv.reader(open(sys.argv[1])))[1][0])' "$out") == "$odd" ]]; then ok; else
  bad "sim --csv: a path with a quote is not quoted"
fi

if [[ -z $TRACES ]]; then
  echo "SKIPPED: test_sim_cli: the checks on the CloudPhysics trace (looked in: $TRACES_LOOKED; set HOTSET_TRACES=DIR)"
  cli_finish
  exit
fi

# ---- the four encodings agree (--ignore-size: same ids, same order) ----
policies=lru,fifo,clock,arc,sieve,belady,s3fifo,2q,fixedset
for f in cloudPhysicsIO.oracleGeneral.bin cloudPhysicsIO.vscsi cloudPhysicsIO.csv cloudPhysicsIO.txt; do
  run sim --trace "$TRACES/$f" --policy $policies --size 100,1000,0.1 --ignore-size --json
  expect_status 0 "sim $f"
  python3 -c "
import json,sys
for l in open(sys.argv[1]):
    d=json.loads(l); print(d['policy'], d['size'], d['requests'], d['misses'])" "$out" >"$scratch/$f.misses"
done
lines=$(wc -l <"$scratch/cloudPhysicsIO.txt.misses")
if [[ $lines -eq 27 ]]; then ok; else bad "expected 27 simulations, got $lines"; fi
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
# fixedset is its definition: the requests less, over the most-read objects
# that fit (ties: first read first), each one's reads but one.
python3 - "$scratch/cloudPhysicsIO.txt.misses" "$TRACES/cloudPhysicsIO.txt" <<'PY' && ok || bad "fixedset is not the best fixed set"
import sys, collections
ids = [l.split()[0] for l in open(sys.argv[2]) if l.strip()]
reads = collections.Counter(ids)
first = {}
for i, x in enumerate(ids): first.setdefault(x, i)
ranked = sorted(reads, key=lambda k: (-reads[k], first[k]))
got = {s: int(m) for p, s, r, m in (l.split() for l in open(sys.argv[1])) if p == "fixedset"}
assert len(got) == 3, got
for s, m in got.items():
    want = len(ids) - sum(reads[k] - 1 for k in ranked[:int(s)])
    assert m == want, (s, m, want)
PY

# ---- a format that does not fit, and sizes in human units ----
run sim "$TRACES/cloudPhysicsIO.oracleGeneral.bin" oracleGeneral LRU 1000 --ignore-obj-size 1 --json
a=$(json_field "$out" 1 miss_ratio)
run sim --trace "$TRACES/cloudPhysicsIO.oracleGeneral.bin" --policy lru --size 1000 --ignore-size --json
if [[ $a == $(json_field "$out" 1 miss_ratio) ]]; then ok; else bad "cachesim's form on CloudPhysics: $a"; fi
run sim --trace "$TRACES/cloudPhysicsIO.vscsi" --format oraclegeneral --policy lru --size 10
expect_one_line_error "cloudPhysicsIO.vscsi: not oraclegeneral: " "--format oraclegeneral on vscsi"
if grep -q -- "it looks like a vscsi trace (.*): try --format vscsi or leave --format out" "$err"; then ok; else
  bad "--format oraclegeneral on vscsi does not suggest --format vscsi"
fi
run sim --trace "$TRACES/cloudPhysicsIO.oracleGeneral.bin" --format vscsi --policy lru --size 10
expect_one_line_error "looks like an oraclegeneral trace" "--format vscsi on the oracleGeneral encoding"
run trace-stats "$TRACES/cloudPhysicsIO.vscsi"
if grep -q "^working set  *1.89 GiB (2029769728 bytes)$" "$out"; then ok; else bad "trace-stats: CloudPhysics working set is not 1.89 GiB"; fi
run trace-stats "$TRACES/cloudPhysicsIO.txt"
if grep -q "^working set  *48974 objects" "$out"; then ok; else bad "trace-stats: the txt encoding's working set is not in objects"; fi
run sim --trace "$TRACES/cloudPhysicsIO.txt" --policy lru --size 1000
if grep -q "^lru  *1000 objects " "$out" && ! grep -q "bytemiss%" "$out"; then ok; else bad "sim on txt: sizes are objects, bytemiss% repeats miss%"; fi

# ---- byte mode, table and CSV output, auto-detection message ----
run sim --trace "$TRACES/cloudPhysicsIO.vscsi" --policy lru --size 16MiB,256MiB
expect_status 0 "sim in byte mode"
if grep -q "16 MiB" "$out" && grep -q "256 MiB" "$out"; then ok; else bad "table lacks the sizes"; fi
if [[ ! -s $err ]]; then ok; else bad "sim wrote to stderr on success: $(head -1 "$err")"; fi
run sim --trace "$TRACES/cloudPhysicsIO.vscsi" --policy lru --size 16MiB --verbose
if grep -q "guessed vscsi" "$err"; then ok; else bad "sim --verbose did not say how the format was chosen"; fi
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
  echo "SKIPPED: test_sim_cli: --plot drawing: gnuplot is not installed (checking its error instead)"
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
else
  echo "SKIPPED: test_sim_cli: .zst traces: the zstd tool is not installed"
fi

# ---- --from: judged from a request on; fixedset learned before it ----
# A is read 3 times before request 4, B 5 times after: hindsight keeps B,
# the set learned before request 4 keeps A, so from 4 on every B misses.
printf '1\n1\n1\n2\n2\n2\n2\n2\n2\n1\n' >"$scratch/ab.txt"
run sim --trace "$scratch/ab.txt" --format txt --policy fixedset --size 1 --ignore-size --json
if [[ $(json_field "$out" 1 misses) == 5 && $(json_field "$out" 1 requests) == 10 ]]; then ok; else bad "fixedset with hindsight on the A/B trace: $(cat "$out")"; fi
run sim --trace "$scratch/ab.txt" --format txt --policy fixedset --size 1 --ignore-size --json --from 4
if [[ $(json_field "$out" 1 misses) == 5 && $(json_field "$out" 1 requests) == 6 && $(json_field "$out" 1 judged_from) == 4 ]]; then ok; else bad "fixedset learned before request 4: $(cat "$out")"; fi
run sim --trace "$scratch/ab.txt" --format txt --policy lru --size 1 --ignore-size --json --from 40%
if [[ $(json_field "$out" 1 misses) == 1 && $(json_field "$out" 1 requests) == 6 ]]; then ok; else bad "--from 40% is request 4 (lru: only the last A misses): $(cat "$out")"; fi
# Any policy: the misses from request N are the whole run's less those of
# the first N requests alone.
run gen-trace -o "$scratch/from.txt" --zipf 0.8 --objects 3000 --requests 30000 --seed 3
head -n 12000 "$scratch/from.txt" >"$scratch/from-head.txt"
for pol in lru s3fifo clock-admit; do
  run sim --trace "$scratch/from.txt" --format txt --policy $pol --size 300 --ignore-size --json
  whole=$(json_field "$out" 1 misses)
  run sim --trace "$scratch/from-head.txt" --format txt --policy $pol --size 300 --ignore-size --json
  head_misses=$(json_field "$out" 1 misses)
  run sim --trace "$scratch/from.txt" --format txt --policy $pol --size 300 --ignore-size --json --from 12000
  if [[ $(json_field "$out" 1 misses) == $((whole - head_misses)) && $(json_field "$out" 1 requests) == 18000 ]]; then ok; else
    bad "$pol --from 12000: $(json_field "$out" 1 misses) misses, want $whole - $head_misses"
  fi
done
# ---- policy names: any case, and libCacheSim's names ----
run sim --trace "$scratch/from.txt" --format txt --policy LRU,FIFO,Clock,ARC,TwoQ,S3FIFO,Sieve,LIRS,SLRU,Belady --size 300 --ignore-size --json
expect_status 0 "libCacheSim's policy names"
names=$(python3 -c "import json,sys; print(','.join(json.loads(l)['policy'].split(':')[0] for l in open(sys.argv[1])))" "$out")
if [[ $names == "lru,fifo,clock,arc,2q,s3fifo,sieve,lirs,slru,belady" ]]; then ok; else bad "aliases are printed as hotset's names: $names"; fi
mixed=$(python3 -c "import json,sys; print(' '.join(str(json.loads(l)['misses']) for l in open(sys.argv[1])))" "$out")
run sim --trace "$scratch/from.txt" --format txt --policy lru,fifo,clock,arc,2q,s3fifo,sieve,lirs,slru,belady --size 300 --ignore-size --json
lower=$(python3 -c "import json,sys; print(' '.join(str(json.loads(l)['misses']) for l in open(sys.argv[1])))" "$out")
if [[ $mixed == "$lower" ]]; then ok; else bad "aliases give other misses: $mixed / $lower"; fi
run sim --trace "$scratch/from.txt" --format txt --policy TwoQQ --size 300 --ignore-size
expect_usage_error "unknown replacement policy \"TwoQQ\"" "an unknown name"

# ---- cachesim's command line: TRACE TYPE ALGO SIZE [its flags] ----
run sim "$scratch/from.txt" txt LRU,TwoQ 300,0.05 --ignore-obj-size 1 --json
expect_status 0 "cachesim's form"
cs=$(python3 -c "import json,sys; print(' '.join(str(json.loads(l)['misses']) for l in open(sys.argv[1])))" "$out")
run sim --trace "$scratch/from.txt" --format txt --policy lru,2q --size 300,0.05 --ignore-size --json
hs=$(python3 -c "import json,sys; print(' '.join(str(json.loads(l)['misses']) for l in open(sys.argv[1])))" "$out")
if [[ $cs == "$hs" ]]; then ok; else bad "cachesim's form gives other misses: $cs / $hs"; fi
run sim "$scratch/from.txt" txt LRU 300 --ignore-obj-size 1
if [[ $(wc -l <"$out") -eq 1 ]] && grep -qE "^$scratch/from.txt lru cache size 300, 30000 req, miss ratio 0\.[0-9]{4}, byte miss ratio 0\.[0-9]{4}, throughput [0-9.]+ MQPS, misses [0-9]+$" "$out"; then ok; else bad "cachesim's result line: $(cat "$out")"; fi
# its csv parameters: the same requests as a csv with a header
python3 -c "
import sys
ids=open(sys.argv[1]).read().split()
with open(sys.argv[2],'w') as f:
    f.write('ts,key,bytes\n')
    for i,k in enumerate(ids): f.write('%d,%s,4096\n'%(i,k))
" "$scratch/from.txt" "$scratch/from.csv"
run sim "$scratch/from.csv" csv lru 300 -t "time-col=1, obj-id-col=2, obj-size-col=3, delimiter=,, has-header=true" --ignore-obj-size 1 --json
if [[ $(json_field "$out" 1 misses) == "${hs%% *}" ]]; then ok; else bad "cachesim's -t csv parameters: $(cat "$out" "$err")"; fi
run sim "$scratch/from.txt" txt LRU 300 --warmup-sec 10
expect_usage_error "--warmup-sec" "a cachesim flag hotset does not take"
run sim "$scratch/from.txt" lcs LRU 300
expect_usage_error "trace type \"lcs\"" "a trace type hotset does not read"
run sim "$scratch/from.txt" txt LRU
expect_usage_error "cachesim's form" "cachesim's form with three arguments"
run sim "$scratch/from.txt" txt LRU 300 --ignore-obj-size 2
expect_usage_error "--ignore-obj-size" "--ignore-obj-size 2"

run sim --trace "$scratch/ab.txt" --format txt --policy lru --size 1 --ignore-size --from 10
expect_one_line_error "has 10 requests" "--from at the trace's end"
run sim --trace "$scratch/ab.txt" --policy lru --size 1 --from 100%
expect_usage_error "--from" "--from 100%"
run sim --trace "$scratch/ab.txt" --policy lru --size 1 --from ten
expect_usage_error "--from" "--from ten"
run sim --trace "$scratch/ab.txt" --policy lru --mrc 4 --from 3
expect_usage_error "--from excludes" "--from with --mrc"

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
