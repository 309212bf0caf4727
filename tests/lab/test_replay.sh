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
source "$(dirname "$0")/../support/cli_lib.sh"
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

field() { json_line_field "$@"; }

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

# ---- a PostgreSQL-style trace: pids, scans, the ring rule, the clock ----

# Three clients read a hot relation (100, 300 blocks, skewed); pid 9 scans
# relation 200 (1200 blocks, more than a quarter of a 256-page pool) block
# after block, over and over, interleaved with them; every request 0.25 ms
# after the one before.
python3 - "$scratch/pg.csv" <<'PY'
import random, sys
r = random.Random(11)
pos = 0
with open(sys.argv[1], "w") as f:
    f.write("seq,pid,rel,fork,block,found\n")
    for i in range(60000):
        if r.random() < 0.35:
            f.write(f"{i + 1},{r.choice([11, 12, 13])},100,0,{int(300 * r.random() ** 3)},t\n")
        else:
            f.write(f"{i + 1},9,200,0,{pos},f\n")
            pos = (pos + 1) % 1200
PY
pg=$scratch/pg.csv
# Every pool policy, defaults included (midpoint's time=1000 is 1000 ms of
# the trace's time, on the pool's clock as in the simulator), with and
# without PostgreSQL's ring rule: the ordered replay misses exactly where
# the simulator does.
for rule in none pg; do
  run replay --trace "$pg" --pool 2MiB --policy all,midpoint:time=40,lru-k:crp=3 --ring-rule $rule \
    --ms-per-request 0.25 --json
  expect_status 0 "replay --ring-rule $rule"
  cp "$out" "$scratch/pg-replay-$rule.json"
  n=$(wc -l <"$scratch/pg-replay-$rule.json")
  run sim --trace "$pg" --ignore-size --size 256 --ring-rule $rule --ms-per-request 0.25 --json \
    --policy "$(grep -o '"policy":"[^"]*"' "$scratch/pg-replay-$rule.json" | cut -d'"' -f4 | paste -sd, -)"
  expect_status 0 "sim --ring-rule $rule"
  cp "$out" "$scratch/pg-sim-$rule.json"
  differ=
  for i in $(seq 1 "$n"); do
    a=$(field "$scratch/pg-replay-$rule.json" "$i" misses)
    b=$(field "$scratch/pg-sim-$rule.json" "$i" misses)
    [[ -n $a && $a == "$b" ]] || differ="$differ $(field "$scratch/pg-replay-$rule.json" "$i" policy) ($a vs $b)"
  done
  if [[ $n -ge 15 && -z $differ ]]; then ok; else bad "ring rule $rule: replay and sim differ:$differ"; fi
done
# The rule puts the scan's requests through rings, and the hot set survives.
scan_requests=$(grep -c '^[0-9]*,9,200,' "$pg")
ring_requests=$(field "$scratch/pg-replay-pg.json" 1 ring_requests)
# Every scan request goes through a ring; a client's lookups hardly ever do
# (only a run of 4 or more blocks in order counts as a scan).
if [[ $scan_requests -gt 30000 && $ring_requests -ge $scan_requests &&
  $ring_requests -le $((scan_requests + scan_requests / 200)) && $(field "$scratch/pg-replay-pg.json" 1 ring_rule) == pg ]]; then ok; else
  bad "ring rule: $ring_requests requests through rings, want the scan's $scan_requests (+0.5 %)"
fi
for i in 1 4; do # lru and clock-sweep
  with=$(field "$scratch/pg-replay-pg.json" $i misses)
  without=$(field "$scratch/pg-replay-none.json" $i misses)
  if [[ $with -lt $((without * 9 / 10)) ]]; then ok; else
    bad "$(field "$scratch/pg-replay-pg.json" $i policy): $with misses with rings, $without without"
  fi
done

# One thread per pid, as the server ran: four threads here.
run replay --trace "$pg" --pool 2MiB --policy clock-sweep --by-pid --ring-rule pg --json
expect_status 0 "replay --by-pid"
if [[ $(field "$out" 1 threads) == 4 && $(field "$out" 1 mode) == by-pid &&
  $(field "$out" 1 ordered) == false && $(field "$out" 1 requests) == 60000 &&
  $(field "$out" 1 reads) == "$(field "$out" 1 misses)" &&
  $(field "$out" 1 ring_requests) == "$ring_requests" ]]; then ok; else bad "replay --by-pid: $(cat "$out")"; fi
run replay --trace "$pg" --pool 2MiB --policy lru,clock-sweep --threads 3 --json
expect_status 0 "replay --threads 3"
if [[ $(field "$out" 2 threads) == 3 && $(field "$out" 2 mode) == threads &&
  $(field "$out" 2 reads) == "$(field "$out" 2 misses)" ]]; then ok; else
  bad "replay --threads 3: $(cat "$out")"
fi
# Without a clock, durations are refused as by the simulator.
run replay --trace "$pg" --pool 2MiB --policy midpoint
expect_one_line_error "no time stamps.*time=1000 is in milliseconds" "replay of midpoint without a clock"

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
expect_one_line_error "fork ((id >> 28) & 15) is 4 or more" "replay --layout split of hashed ids"
# Ids whose fork bits are in range but whose relations would be absurdly long.
python3 -c "
import random
r = random.Random(3)
print('\n'.join(str(r.randrange(1 << 20) << 32 | r.randrange(1 << 27)) for _ in range(2000)))" >"$scratch/sparse.txt"
run replay --trace "$scratch/sparse.txt" --pool 1600KiB --layout split
expect_one_line_error "needs .* relations of .* blocks (split layout)" "replay --layout split of sparse ids"
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
run replay --trace "$trace" --pool 1MiB --ordered --threads 2
expect_usage_error "--ordered" "replay --ordered --threads 2"
run replay --trace "$trace" --pool 1MiB --by-pid --threads 2
expect_usage_error "--by-pid" "replay --by-pid --threads 2"
run replay --trace "$trace" --pool 1MiB --by-pid
expect_one_line_error "--by-pid needs a trace with a pid column" "replay --by-pid of a trace without pids"
run replay --trace "$trace" --pool 1MiB --threads 2 --ring-rule pg
expect_usage_error "--ring-rule" "replay --threads 2 --ring-rule pg"
run replay --trace "$trace" --pool 1MiB --ring-rule postgres
expect_usage_error "--ring-rule" "replay --ring-rule postgres"
run replay --trace "$trace" --pool 1XB
expect_usage_error "--pool" "replay --pool 1XB"

run replay --help
expect_status 0 "replay --help"
if grep -q '^usage: hotset replay' "$out" && grep -q 'id >> 32' "$out"; then ok; else
  bad "replay --help: no usage or no layout note"
fi

cli_finish
