#!/usr/bin/env bash
#
# tests/test_bench_wal.sh — `hotset bench wal` end to end on a short run:
# every promised JSON field on every line, sane numbers (commits and syncs
# counted, group commit never worse than one sync per commit, single mode
# never sharing a sync: commits == syncs), nothing left behind in its
# temporary directory, and one-line usage errors with a hint. No speed is
# asserted: targets live in the benchmark's output (docs/results.md), never
# in a timed test.
#
# Usage: test_bench_wal.sh PATH/TO/hotset   (CTest passes $<TARGET_FILE:hotset>)
# Prints "N passed, N failed" last and exits non-zero if anything failed.

set -u

HOTSET=${1:?usage: test_bench_wal.sh PATH/TO/hotset}
source "$(dirname "$0")/../support/cli_lib.sh"
cli_setup bench-wal

# ---- dispatch and flags ----

run bench --help
if grep -q '^  wal ' "$out"; then ok; else bad "hotset bench --help does not list wal"; fi
run bench wal --help
expect_status 0 "hotset bench wal --help"
if grep -q -- '--clients' "$out" && grep -q -- '--mode' "$out" && grep -q 'single' "$out"; then ok; else
  bad "bench wal --help does not describe its flags"
fi

run bench wal --clients 0
expect_usage_error --clients "bench wal --clients 0" "hotset bench wal"
run bench wal --clients 1,,2
expect_usage_error --clients "bench wal --clients 1,,2" "hotset bench wal"
run bench wal --clients many
expect_usage_error --clients "bench wal --clients many" "hotset bench wal"
run bench wal --mode solo
expect_usage_error --mode "bench wal --mode solo" "hotset bench wal"
run bench wal --seconds 0
expect_usage_error --seconds "bench wal --seconds 0" "hotset bench wal"
run bench wal --seconds soon
expect_usage_error --seconds "bench wal --seconds soon" "hotset bench wal"
run bench wal --record 1MiB
expect_usage_error --record "bench wal --record 1MiB" "hotset bench wal"
run bench wal --segment 100KiB
expect_usage_error --segment "bench wal --segment 100KiB" "hotset bench wal"

# ---- the run ----

# Its temporary directory goes under $TMPDIR: a private one, to see it go.
tmp=$scratch/tmp
mkdir "$tmp"
json=$scratch/runs.json
TMPDIR=$tmp "$HOTSET" bench wal --seconds 0.3 --clients 1,4 --json >"$json" 2>"$err"
status=$?
expect_status 0 "bench wal --json"
if [[ ! -s $err ]]; then ok; else bad "bench wal wrote to stderr"; fi
if [[ -z $(ls -A "$tmp") ]]; then ok; else bad "bench wal left $(ls -A "$tmp") in \$TMPDIR"; fi

lines=$(wc -l <"$json")
if [[ $lines -eq 4 ]]; then ok; else bad "bench wal --json printed $lines lines, want 4 (2 modes x 2)"; fi
for f in mode clients seconds commits commits_per_sec syncs commits_per_sync sync_us_mean \
  commit_us_p50 commit_us_p99 raw_syncs_per_sec raw_overwrite_syncs_per_sec; do
  if [[ $(grep -c "\"$f\":" "$json") -eq $lines ]]; then ok; else bad "a line has no \"$f\""; fi
done

# check MODE CLIENTS AWK-CONDITION WHAT: the condition holds on that line.
check() {
  if awk -v m="\"mode\":\"$1\"" -v c="\"clients\":$2," '
    function num(f,   i, v) {
      i = index($0, "\"" f "\":")
      if (!i) return ""
      v = substr($0, i + length(f) + 3)
      sub(/[,}].*/, "", v)
      return v + 0
    }
    index($0, m) && index($0, c) { found = 1; if (!('"$3"')) bad = 1 }
    END { exit !(found && !bad) }' "$json"; then ok; else bad "$1 mode, $2 clients: $4"; fi
}
for c in 1 4; do
  for m in group single; do
    check $m $c 'num("commits") > 0 && num("syncs") > 0 && num("commits_per_sec") > 0' \
      "no commits or syncs counted"
    check $m $c 'num("sync_us_mean") > 0 && num("raw_syncs_per_sec") > 0' "no sync time"
    check $m $c 'num("commit_us_p50") > 0 && num("commit_us_p50") <= num("commit_us_p99")' \
      "commit latency percentiles out of order"
    check $m $c 'num("seconds") >= 0.3 && num("seconds") < 30' "measured time not --seconds"
  done
  check group $c 'num("commits_per_sync") >= 1 && num("commits") >= num("syncs")' \
    "group commit ran more syncs than commits"
  # Every commit its own fdatasync: never shared, never skipped.
  check single $c 'num("commits") == num("syncs") && num("commits_per_sync") == 1' \
    "single mode shared or skipped a sync"
done
check group 1 'num("commits") == num("syncs")' "one client alone shared a sync"

# ---- --dir: kept, what the runs made in it removed ----

dir=$scratch/logs
run bench wal --seconds 0.05 --clients 2 --mode single --dir "$dir"
expect_status 0 "bench wal --dir"
if grep -q '^single  *2 ' "$out"; then ok; else bad "bench wal printed no table row"; fi
if [[ -d $dir && -z $(ls -A "$dir") ]]; then ok; else bad "bench wal --dir: $dir not kept empty"; fi

cli_finish
