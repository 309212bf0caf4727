#!/usr/bin/env bash
#
# tests/test_bench_recovery.sh — `hotset bench recovery` end to end on a
# small run: recovery replays what was written (a full image for each page
# touched, every other change applied), the JSON fields are there, nothing
# is left in its temporary directory, usage errors are one line with a
# hint. No speed is asserted (docs/results.md has the figures).
#
# Usage: test_bench_recovery.sh PATH/TO/hotset
# Prints "N passed, N failed" last and exits non-zero if anything failed.

set -u

HOTSET=${1:?usage: test_bench_recovery.sh PATH/TO/hotset}
source "$(dirname "$0")/../support/cli_lib.sh"
cli_setup bench-recovery

run bench --help
if grep -q '^  recovery ' "$out"; then ok; else bad "hotset bench --help does not list recovery"; fi
run bench recovery --log 0
expect_usage_error --log "bench recovery --log 0" "hotset bench recovery"
run bench recovery --pages 0
expect_usage_error --pages "bench recovery --pages 0" "hotset bench recovery"
run bench recovery --change 8B
expect_usage_error --change "bench recovery --change 8B" "hotset bench recovery"

tmp=$scratch/tmp
mkdir "$tmp"
json=$scratch/run.json
# 200 pages in a 1 MiB pool (128 pages): replay also reads and evicts.
TMPDIR=$tmp "$HOTSET" bench recovery --log 4MiB --pages 200 --pool 1MiB --json >"$json" 2>"$err"
status=$?
expect_status 0 "bench recovery --json"
if [[ -z $(ls -A "$tmp") ]]; then ok; else bad "bench recovery left $(ls -A "$tmp") in \$TMPDIR"; fi
field() { json_line_field "$json" 1 "$1"; }
if [[ $(field images) -eq 200 ]]; then ok; else bad "images $(field images), want 200 (one per page)"; fi
if [[ $(field records) -eq $(($(field changes) + 1)) ]]; then ok; else
  bad "records $(field records) is not changes $(field changes) + the checkpoint record"
fi
if [[ $(field applied) -eq $(($(field changes) - 200)) ]]; then ok; else
  bad "applied $(field applied), want every change but the 200 first ones (images)"
fi
if [[ $(field log_bytes) -ge 4194304 ]]; then ok; else bad "log_bytes $(field log_bytes) < 4 MiB"; fi
for f in replay_seconds replay_mb_per_sec checkpoint_seconds open_seconds; do
  if awk -v v="$(field $f)" 'BEGIN { exit !(v > 0) }'; then ok; else bad "$f is not positive"; fi
done

run bench recovery --log 2MiB --pages 64 --no-checksums
expect_status 0 "bench recovery --no-checksums"
if grep -q '^recovery: .* MB/s' "$out"; then ok; else bad "bench recovery printed no summary"; fi

cli_finish
