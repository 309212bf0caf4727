#!/usr/bin/env bash
#
# tests/test_crash.sh — `hotset crash-test` and `hotset verify` end to end:
#   - 100 kill points (every fourth one after a torn page write) with nothing
#     lost, nothing half there, every torn page repaired, no corruption
#     passing a checksum;
#   - the aimed kill points (a page write, a checkpoint, a segment switch)
#     are each reached, and recovered from with every acknowledgement there;
#   - `hotset verify` passes the directory that leaves and one a kill left
#     unrecovered, names the file and block of a flipped byte, and flags
#     pages whose LSN is past the end of a log cut short;
#   - `crash-test --verify` fails on a page that fails its checksum;
#   - 50 power cuts (--power-loss), two on each of 25 directories
#     (--generations 2: a new child recovers and works between them), half
#     of the runs under the heap workload (rows updated in transactions
#     beside a vacuum thread): nothing acknowledged in either generation
#     lost, every directory opens, every heap row found whole, vacuum runs
#     through the recovered table, writes were dropped and torn, and some
#     cuts were aimed at a checkpoint's directory operations;
#   - usage errors are one line and a hint.
#
# Usage: test_crash.sh PATH/TO/hotset   (CTest passes $<TARGET_FILE:hotset>)
# Prints "N passed, N failed" last and exits non-zero if anything failed.

set -u

HOTSET=${1:?usage: test_crash.sh PATH/TO/hotset}
source "$(dirname "$0")/../support/cli_lib.sh"
cli_setup crash

# ---- usage errors ----

run crash-test --bogus
expect_usage_error --bogus "crash-test --bogus" "hotset crash-test"
run crash-test --workload
expect_usage_error --dir "crash-test --workload without --dir" "hotset crash-test"
run crash-test --verify
expect_usage_error --dir "crash-test --verify without --dir" "hotset crash-test"
run crash-test --runs 0
expect_usage_error --runs "crash-test --runs 0" "hotset crash-test"
run crash-test --workload --verify --dir "$scratch/x"
expect_usage_error --verify "crash-test --workload --verify" "hotset crash-test"
run crash-test --torn --dir "$scratch/x"
expect_usage_error --torn "crash-test --torn without --workload" "hotset crash-test"
run crash-test --workload --dir "$scratch/x" --kill-at soon
expect_usage_error --kill-at "crash-test --kill-at soon" "hotset crash-test"
run crash-test --kill-at checkpoint
expect_usage_error --kill-at "crash-test --kill-at without --workload" "hotset crash-test"
run verify
expect_usage_error --dir "verify without --dir" "hotset verify"
run verify --dir "$scratch" --page-size 3000
expect_usage_error --page-size "verify --page-size 3000" "hotset verify"
run crash-test --verify --dir "$scratch/missing"
expect_one_line_error missing "crash-test --verify of a missing directory"
if [[ ! -e $scratch/missing ]]; then ok; else bad "crash-test --verify created the directory it verified"; fi

# ---- kill points ----

# 100 kills and 50 power cuts (25 runs of 2); HOTSET_TEST_QUICK=1 (the
# sanitizer runs, where each run costs several times as much) takes 25 and
# 16 (8 of 2): the plain run and its own CI step keep the counts that judge
# the rate.
kill_runs=100 power_runs=25
if [[ ${HOTSET_TEST_QUICK:-0} == 1 ]]; then kill_runs=25 power_runs=8; fi
data=$scratch/data
run crash-test --runs $kill_runs --seed 1 --json --dir "$data"
expect_status 0 "crash-test --runs $kill_runs --seed 1"
for key in runs kills acknowledged lost torn_injected torn_repaired corrupt_undetected \
  recovery_ms_p50 recovery_mb_per_sec; do
  if [[ -n $(json_line_field "$out" 1 "$key") ]]; then ok; else bad "crash-test --json lacks $key"; fi
done
runs=$(json_line_field "$out" 1 runs)
kills=$(json_line_field "$out" 1 kills)
acked=$(json_line_field "$out" 1 acknowledged)
lost=$(json_line_field "$out" 1 lost)
torn=$(json_line_field "$out" 1 torn_injected)
repaired=$(json_line_field "$out" 1 torn_repaired)
undetected=$(json_line_field "$out" 1 corrupt_undetected)
if [[ $runs == "$kill_runs" && $kills == "$kill_runs" ]]; then ok; else
  bad "runs $runs, kills $kills: want $kill_runs of each"
fi
if [[ ${acked:-0} -gt 0 ]]; then ok; else bad "no transaction was acknowledged"; fi
if [[ $lost == 0 ]]; then ok; else bad "$lost acknowledged transactions lost"; fi
if [[ $undetected == 0 ]]; then ok; else bad "$undetected corrupt pages passed their checksum"; fi
if [[ ${torn:-0} -gt 0 && $torn == "$repaired" ]]; then ok; else
  bad "torn writes: $torn injected, $repaired repaired"
fi

# The values it recovered, once more from the outside.
run crash-test --verify --dir "$data" --json
expect_status 0 "crash-test --verify after the runs"
if [[ $(wc -l <"$out") -eq 4 && $(json_line_field "$out" 4 client) == 3 ]] &&
  [[ $(json_line_field "$out" 1 value) -gt 0 ]]; then ok; else
  bad "crash-test --verify --json: want 4 lines {\"client\": N, \"value\": V}, got: $(head -c 200 "$out")"
fi

# ---- aimed kills: each kill point is reached, and recovered from ----

# The workload alone, killing itself at a page write, during a checkpoint, in
# a commit's flush that switches segments; then --verify holds the directory
# to the acknowledgements it printed.
for point in page-write checkpoint segment-switch; do
  d=$scratch/at-$point
  # In a subshell whose stderr is dropped: bash reports the kill there.
  # A kill point never reached would run for ever: timeout kills it too,
  # without the "kill at" line.
  (timeout -s KILL 120 "$HOTSET" crash-test --workload --dir "$d" --kill-at "$point" --seed 5 \
    >"$out" 2>"$err"
    exit $?) 2>/dev/null
  status=$?
  expect_status 137 "crash-test --workload --kill-at $point dies by SIGKILL"
  if grep -qx "kill at $point" "$err"; then ok; else bad "--kill-at $point: no \"kill at $point\" on stderr"; fi
  mv "$out" "$scratch/acks"
  run crash-test --verify --dir "$d"
  expect_status 0 "crash-test --verify after --kill-at $point"
  if awk 'NR == FNR { acked[$2] = $4; next } { if ($4 < acked[$2] || $4 > acked[$2] + 1) bad = 1 }
          END { exit bad }' "$scratch/acks" "$out"; then ok; else
    bad "--kill-at $point: recovered values $(tr '\n' ' ' <"$out") against the last acknowledged $(tail -n 4 "$scratch/acks" | tr '\n' ' ')"
  fi
done

# ---- power cuts ----

# $power_runs runs of the recorder's cut (random operations, checkpoint steps, just
# after renames), each applied as a power loss would leave the directory:
# nothing acknowledged lost, the directory always opens, no page passes its
# checksum holding what nothing wrote; and the cut did drop writes. About
# half the runs are the heap workload's: no heap row wrong or missing, and
# vacuum runs through each recovered table.
run crash-test --power-loss --runs $power_runs --generations 2 --seed 7 --json --dir "$scratch/power"
expect_status 0 "crash-test --power-loss --runs $power_runs --generations 2 --seed 7"
for key in runs generations power_cuts dir_op_cuts cut_at_unlink cut_at_dir_sync two_name_cuts \
  heap_runs acknowledged lost corrupt_undetected partial heap_bad vacuum_failed refused_to_open \
  writes_dropped writes_torn dir_entries_lost; do
  if [[ -n $(json_line_field "$out" 1 "$key") ]]; then ok; else bad "crash-test --power-loss --json lacks $key"; fi
done
if [[ $(json_line_field "$out" 1 power_cuts) == $((power_runs * 2)) &&
  $(json_line_field "$out" 1 generations) == 2 ]]; then ok; else bad "power cuts: $(head -c 300 "$out")"; fi
if [[ $(json_line_field "$out" 1 dir_op_cuts) -gt 0 ]]; then ok; else
  bad "power cuts: none aimed at a directory operation: $(head -c 300 "$out")"
fi
for key in lost corrupt_undetected partial heap_bad vacuum_failed refused_to_open failed_runs; do
  if [[ $(json_line_field "$out" 1 "$key") == 0 ]]; then ok; else bad "power cuts: $key: $(head -c 400 "$out")"; fi
done
if [[ $(json_line_field "$out" 1 writes_dropped) -gt 0 && $(json_line_field "$out" 1 writes_torn) -gt 0 ]]; then
  ok
else
  bad "power cuts dropped or tore no write: $(head -c 300 "$out")"
fi
if [[ $(json_line_field "$out" 1 acknowledged) -gt 0 ]]; then ok; else bad "power cuts: nothing acknowledged"; fi
heap_runs=$(json_line_field "$out" 1 heap_runs)
if [[ $heap_runs -gt 0 && $heap_runs -lt $power_runs ]]; then ok; else
  bad "power cuts: $heap_runs heap runs of $power_runs"
fi
run crash-test --heap --dir "$scratch/x"
expect_usage_error --heap "crash-test --heap without --workload" "hotset crash-test"
run crash-test --workload --heap --torn --dir "$scratch/x"
expect_usage_error --heap "crash-test --workload --heap --torn" "hotset crash-test"
run crash-test --run 3
expect_usage_error --run "crash-test --run without --power-loss" "hotset crash-test"
run crash-test --power-loss --workload --dir "$scratch/x"
expect_usage_error --power-loss "crash-test --power-loss --workload" "hotset crash-test"
run crash-test --generations 2
expect_usage_error --generations "crash-test --generations without --power-loss" "hotset crash-test"
run crash-test --power-loss --generations 0
expect_usage_error --generations "crash-test --power-loss --generations 0" "hotset crash-test"
run crash-test --workload --dir "$scratch/x" --cut-dir-op 1 --cut-dir-kinds 1
expect_usage_error --cut-dir-kinds "crash-test --cut-dir-kinds 1 (a write)" "hotset crash-test"

# ---- hotset verify ----

run verify --dir "$data" --page-size 4KiB
expect_status 0 "verify of the recovered directory"
if grep -q ' 0 bad .*: ok$' "$out"; then ok; else bad "verify does not say ok: $(cat "$out")"; fi

# Flip one byte in the middle of block 1 of relation 1.
flip_byte() { # file offset
  local old
  old=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
  printf "$(printf '\\%03o' $((255 - old)))" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}
cp -r "$data" "$scratch/flipped"
flip_byte "$scratch/flipped/1" $((4096 + 2000))
run verify --dir "$scratch/flipped" --page-size 4KiB
expect_status 1 "verify of a flipped byte"
if grep -q "flipped/1 block 1: checksum expected" "$out" && [[ $(grep -c ' block ' "$out") -eq 1 ]]; then
  ok
else
  bad "verify does not name file 1, block 1 alone: $(cat "$out")"
fi
run verify --dir "$scratch/flipped" --page-size 4KiB --json
if [[ $(json_line_field "$out" 1 block) == 1 && $(json_line_field "$out" 1 problem) == checksum ]]; then
  ok
else
  bad "verify --json of a flipped byte: $(head -n 1 "$out")"
fi
run crash-test --verify --dir "$scratch/flipped"
expect_status 1 "crash-test --verify of a page failing its checksum"
if grep -q "block 1 fails its checksum" "$err"; then ok; else bad "crash-test --verify does not name block 1"; fi

# A directory as a kill leaves it, before any recovery: pages the pool
# wrote while the child ran carry LSNs the log must reach (WAL before data),
# so verify passes it; with the log's segments zeroed (a log cut short) those
# pages are past its end. The child is read until 400 acknowledgements, then
# killed: synchronised by its output, not by time.
crashed=$scratch/crashed
coproc WL { exec "$HOTSET" crash-test --workload --dir "$crashed" 2>"$scratch/wl.err"; }
wl_pid=$WL_PID
for ((i = 0; i < 400; i++)); do read -r _ <&"${WL[0]}" || break; done
{
  kill -KILL "$wl_pid"
  wait "$wl_pid"
} 2>/dev/null
if [[ $i -eq 400 ]]; then ok; else bad "the workload stopped after $i acknowledgements: $(head -c 300 "$scratch/wl.err")"; fi
run verify --dir "$crashed" --page-size 4KiB
expect_status 0 "verify of a killed workload's directory"
cp -r "$crashed" "$scratch/cut"
for seg in "$scratch"/cut/wal/*; do
  [[ $(basename "$seg") =~ ^[0-9A-F]{16}$ ]] || continue
  dd if=/dev/zero of="$seg" bs=4096 count=$(($(stat -c %s "$seg") / 4096)) conv=notrunc status=none
done
run verify --dir "$scratch/cut" --page-size 4KiB
expect_status 1 "verify with the log cut short"
if grep -q "cut/1 block [0-9]*: LSN [0-9A-F]* is past the end of the log at" "$out"; then ok; else
  bad "verify does not flag LSNs past the log's end: $(head -n 2 "$out")"
fi

cli_finish
