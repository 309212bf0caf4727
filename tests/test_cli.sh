#!/usr/bin/env bash
#
# tests/test_cli.sh — the `hotset` command line as a user (or a script) sees it:
# exit statuses, the one-line error convention, and that pool-bench and demo
# run end to end and print what they promise.
#
# Usage: test_cli.sh PATH/TO/hotset   (CTest passes $<TARGET_FILE:hotset>)
# Prints "N passed, N failed" last and exits non-zero if anything failed.

set -u

HOTSET=${1:?usage: test_cli.sh PATH/TO/hotset}
source "$(dirname "$0")/cli_lib.sh"
cli_setup cli

# ---- help and dispatch ----

run --help
expect_status 0 "hotset --help"
if grep -q '^usage: hotset' "$out" && grep -q 'pool-bench' "$out" && grep -q 'demo' "$out"; then
  ok
else bad "hotset --help does not list the subcommands on stdout"; fi

run help
expect_status 0 "hotset help"

run help pool-bench
expect_status 0 "hotset help pool-bench"
if grep -q -- '--threads' "$out"; then ok; else bad "hotset help pool-bench shows no flags"; fi

run pool-bench --help
expect_status 0 "hotset pool-bench --help"
if grep -q '^usage: hotset pool-bench' "$out"; then ok; else bad "pool-bench --help: no usage on stdout"; fi

run demo --help
expect_status 0 "hotset demo --help"

run
expect_status 2 "hotset without a subcommand"

run frobnicate
expect_usage_error frobnicate "unknown subcommand"

# ---- usage errors of the subcommands ----

run pool-bench --bogus-flag 3
expect_usage_error --bogus-flag "unknown flag"

run demo --bogus-flag=3
expect_usage_error --bogus-flag "unknown flag with ="

run pool-bench --threads x
expect_usage_error --threads "pool-bench --threads x"

run pool-bench --threads 1,,2
expect_usage_error --threads "pool-bench --threads 1,,2"

run pool-bench --threads 0
expect_usage_error --threads "pool-bench --threads 0"

run pool-bench --pool 12XB
expect_usage_error --pool "pool-bench --pool 12XB"

run pool-bench --seconds abc
expect_usage_error --seconds "pool-bench --seconds abc"

run pool-bench --pages -5
expect_usage_error --pages "pool-bench --pages -5"

run pool-bench --pages
expect_usage_error --pages "pool-bench --pages without a value"

run pool-bench --page-size 3000
expect_usage_error --page-size "pool-bench --page-size 3000"

run pool-bench stray
expect_usage_error stray "pool-bench with a positional argument"

run demo --threads 2x
expect_usage_error --threads "demo --threads 2x"

run demo --pool 8KiB
expect_usage_error --pool "demo with a pool smaller than its threads"

# ---- pool-bench end to end ----

run pool-bench --json --seconds 0.2 --pages 64 --pool 256KiB --threads 1,2
expect_status 0 "pool-bench --json"
lines=$(wc -l <"$out")
if [[ $lines -eq 8 ]]; then ok; else bad "pool-bench --json printed $lines lines, want 8"; fi
if command -v python3 >/dev/null 2>&1; then
  if python3 - "$out" <<'EOF'; then ok; else bad "pool-bench --json output fails the JSON checks"; fi
import json, sys
seen = set()
for line in open(sys.argv[1]):
    o = json.loads(line)
    for k in ("variant", "workload", "threads", "ops_per_sec", "ns_per_op"):
        assert k in o, f"missing {k}: {line}"
    assert o["ops_per_sec"] > 0 and o["ns_per_op"] > 0, line
    seen.add((o["variant"], o["workload"], o["threads"]))
want = {(v, w, t) for v in ("clock-sweep", "global-mutex-lru") for w in ("hit", "mixed") for t in (1, 2)}
assert seen == want, f"runs {sorted(seen)}, want {sorted(want)}"
EOF
else
  # Without python: every line is one object with the five fields.
  n=$(grep -cE '^\{"variant":"[^"]+","workload":"(hit|mixed)","threads":[0-9]+,"ops_per_sec":[0-9.]+,"ns_per_op":[0-9.]+.*\}$' "$out")
  if [[ $n -eq 8 ]]; then ok; else bad "pool-bench --json: $n of 8 lines have the five fields"; fi
fi

run pool-bench --seconds 0.1 --pages 64 --pool 256KiB --threads 1
expect_status 0 "pool-bench table"
if grep -q 'global-mutex-lru' "$out" && grep -q 'ops/s' "$out"; then ok; else
  bad "pool-bench table lacks the baseline rows or the header"
fi

# An error at run time: exit 1 and one line naming what failed.
run pool-bench --seconds 0.1 --pages 64 --pool 256KiB --threads 1 --dir /proc/hotset-no-such-dir
expect_status 1 "pool-bench with an unusable --dir"
if [[ $(wc -l <"$err") -eq 1 ]] && grep -q '^hotset pool-bench: ' "$err"; then ok; else
  bad "pool-bench with an unusable --dir: want one error line"
fi

# ---- demo end to end ----

run demo --seconds 0.5
expect_status 0 "demo --seconds 0.5"
if grep -qE '^context +hits' "$out" && grep -qE '^total ' "$out"; then ok; else
  bad "demo did not print the statistics table"
fi
if grep -q 'ops/s' "$out"; then ok; else bad "demo did not print ops/s"; fi

run demo --seconds 0.3 --threads 2 --pages 512 --pool 1MiB --json
expect_status 0 "demo --json"
if command -v python3 >/dev/null 2>&1; then
  if python3 -c '
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 1, lines
o = json.loads(lines[0])
assert o["ops_per_sec"] > 0 and o["updates"] == o["updates_on_disk"], o
assert "total" in o["stats"], o
' "$out"; then ok; else bad "demo --json output fails the JSON checks"; fi
fi

# --keep leaves the data directory and says where.
run demo --seconds 0.1 --pages 256 --pool 512KiB --keep
expect_status 0 "demo --keep"
kept=$(sed -n 's/^data directory kept: //p' "$out")
if [[ -n $kept && -f $kept/16384 ]]; then ok; else bad "demo --keep: no kept data directory"; fi
if [[ -n $kept ]]; then rm -rf "$(dirname "$kept")"; fi

cli_finish
