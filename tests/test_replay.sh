#!/usr/bin/env bash
#
# tests/test_replay.sh — `hotset replay`: a trace through the real pool.
#
# The ordered replay must miss exactly where `hotset sim --ignore-size` does
# at the same number of pages (the pool and the simulator share each
# policy's code); relations are laid out from the trace's ids as documented
# (split: relation id >> 32, block id & 0xffffffff; dense otherwise); absurd
# layouts are refused before anything is written; temporary directories are
# removed; usage errors are one line and a hint.
#
# Usage: test_replay.sh PATH/TO/hotset
# Prints "N passed, N failed" last and exits non-zero if anything failed.

set -u

HOTSET=${1:?usage: test_replay.sh PATH/TO/hotset}
source "$(dirname "$0")/cli_lib.sh"
cli_setup replay
# The replay's temporary directories go here, so the test can see them go.
export TMPDIR=$scratch/tmp
mkdir -p "$TMPDIR"

trace=$scratch/zipf.bin
run gen-trace --zipf 0.9 --objects 2000 --requests 30000 --seed 7 -o "$trace"
expect_status 0 "gen-trace"

# ---- the ordered replay equals the simulator ----

# 200 pages of 8 KiB in the pool; 200 objects in the simulator.
policies=lru,fifo,sieve,arc,clock-sweep
run replay --trace "$trace" --pool 1600KiB --policy "$policies" --ordered --json
expect_status 0 "replay --json"
cp "$out" "$scratch/replay.json"
run sim --trace "$trace" --ignore-size --size 200 --policy "$policies" --json
expect_status 0 "sim --json"
cp "$out" "$scratch/sim.json"

field() { # file line key: one numeric or string field of a JSON line
  sed -n "$2p" "$1" | grep -o "\"$3\":[^,}]*" | cut -d: -f2- | tr -d '"'
}

i=0
for p in ${policies//,/ }; do
  i=$((i + 1))
  got_policy=$(field "$scratch/replay.json" $i policy)
  replay_misses=$(field "$scratch/replay.json" $i misses)
  sim_misses=$(field "$scratch/sim.json" $i misses)
  if [[ $got_policy == "$p" && -n $replay_misses && $replay_misses == "$sim_misses" ]]; then ok; else
    bad "$p: replay ($got_policy) missed $replay_misses times, the simulator $sim_misses"
  fi
  # Every miss is a read from the relation's file, and nothing else is.
  if [[ $(field "$scratch/replay.json" $i reads) == "$replay_misses" ]]; then ok; else
    bad "$p: reads $(field "$scratch/replay.json" $i reads) != misses $replay_misses"
  fi
done

# The promised fields, with the run's facts.
line1=$(sed -n 1p "$scratch/replay.json")
missing=
for k in trace policy pool_pages requests misses miss_ratio reads seconds ops_per_sec threads ordered; do
  [[ $line1 == *"\"$k\":"* ]] || missing="$missing $k"
done
if [[ -z $missing ]]; then ok; else bad "replay --json lacks:$missing"; fi
if [[ $(field "$scratch/replay.json" 1 pool_pages) == 200 &&
  $(field "$scratch/replay.json" 1 requests) == 30000 &&
  $(field "$scratch/replay.json" 1 threads) == 1 &&
  $(field "$scratch/replay.json" 1 ordered) == true &&
  $(field "$scratch/replay.json" 1 layout) == dense ]]; then ok; else
  bad "replay --json: unexpected run facts: $line1"
fi

# The table: a header and one line per policy, then the layout.
run replay --trace "$trace" --pool 1600KiB --policy lru,sieve
expect_status 0 "replay (table)"
if [[ $(wc -l <"$out") -eq 4 ]] && grep -q '^policy  *pool_pages' "$out" &&
  grep -q "^lru  *200  *30000  *$(field "$scratch/replay.json" 1 misses) " "$out" &&
  grep -q 'dense layout' "$out"; then ok; else bad "replay table: $(cat "$out")"; fi

# No temporary directory is left behind.
if [[ -z $(ls -A "$TMPDIR") ]]; then ok; else bad "replay left $(ls "$TMPDIR") behind"; fi

# ---- layouts ----

# Ids as (relation << 32 | block): relation 1 read up to block 9, relation 2
# up to block 4 (hex ids, as the txt reader takes them).
split=$scratch/split.txt
printf '0x100000000\n0x100000003\n0x100000009\n0x200000000\n0x200000004\n0x100000009\n' >"$split"
run replay --trace "$split" --pool 16KiB --page-size 1KiB --dir "$scratch/data" --json
expect_status 0 "replay of a split trace"
if [[ $(field "$out" 1 layout) == split && $(field "$out" 1 relations) == 2 &&
  $(field "$out" 1 blocks) == 15 && $(field "$out" 1 misses) == 5 ]]; then ok; else
  bad "split trace: $(cat "$out")"
fi
if [[ $(stat -c %s "$scratch/data/1") == 10240 && $(stat -c %s "$scratch/data/2") == 5120 ]]; then
  ok
else bad "split trace: relation files $(ls -l "$scratch/data")"; fi

run replay --trace "$split" --pool 16KiB --page-size 1KiB --layout dense --json
expect_status 0 "replay --layout dense"
if [[ $(field "$out" 1 layout) == dense && $(field "$out" 1 blocks) == 5 &&
  $(field "$out" 1 misses) == 5 ]]; then ok; else bad "dense layout: $(cat "$out")"; fi

# gen-trace's ids are scrambled 64-bit numbers: read as (relation, block)
# they would need petabytes. Refused before anything is written.
run replay --trace "$trace" --pool 1600KiB --layout split
expect_one_line_error "needs .* relations of .* blocks (split layout)" "replay --layout split of hashed ids"
if [[ -z $(ls -A "$TMPDIR") ]]; then ok; else bad "a refused replay left $(ls "$TMPDIR")"; fi

# ---- errors ----

run replay --trace "$scratch/no-such.bin" --pool 1MiB
expect_one_line_error "no-such.bin: cannot open" "replay of a missing trace"

run replay --pool 1MiB
expect_usage_error "--trace" "replay without --trace"
run replay --trace "$trace"
expect_usage_error "--pool" "replay without --pool"
run replay --trace "$trace" --pool 4KiB
expect_usage_error "holds no page" "replay with a pool smaller than a page"
run replay --trace "$trace" --pool 1MiB --layout sparse
expect_usage_error "--layout" "replay --layout sparse"
run replay --trace "$trace" --pool 1MiB --policy belady
expect_usage_error "belady" "replay of a simulator-only policy"
run replay --trace "$trace" --pool 1MiB --ordered=false
expect_usage_error "--ordered" "replay --ordered=false"
run replay --trace "$trace" --pool 1MB
expect_usage_error "--pool" "replay --pool 1MB"

run replay --help
expect_status 0 "replay --help"
if grep -q '^usage: hotset replay' "$out" && grep -q 'id >> 32' "$out"; then ok; else
  bad "replay --help: no usage or no layout note"
fi

cli_finish
