#!/usr/bin/env bash
# tests/test_pg_trace.sh HOTSET REPO — PostgreSQL buffer traces end to end.
#
# hotset trace-stats and hotset sim --compare-found on a hand-worked
# PostgreSQL trace csv (the lru example of test_compare_found.c): the
# server's found and missed counts, the pids, and the agree / sim-only /
# server-only split in the table, CSV and JSON; --compare-found without a
# found column is a one-line usage error naming the trace.
set -uo pipefail
HOTSET=$1
REPO=$2
# shellcheck source=cli_lib.sh
source "$(dirname "$0")/cli_lib.sh"
cli_setup pg-trace

expect_in() { # needle file description
  if grep -qF -- "$1" "$2"; then ok; else bad "$3: want \"$1\" in: $(head -c 600 "$2")"; fi
}

# ---- trace-stats and --compare-found on a hand-worked trace ------------------
hand=$scratch/hand.csv
printf 'seq,pid,rel,fork,block,found\n1,100,1,0,1,f\n2,101,1,0,2,t\n3,100,1,0,1,t\n4,102,1,0,3,f\n5,101,1,0,2,f\n6,100,1,0,3,f\n' >"$hand"
run trace-stats "$hand"
expect_status 0 "trace-stats of a PostgreSQL csv"
expect_in "server found       2 (hits)" "$out" "trace-stats found"
expect_in "server missed      4 (miss ratio 66.6667%)" "$out" "trace-stats missed"
expect_in "processes (pids)   3" "$out" "trace-stats pids"
run trace-stats "$hand" --json
expect_in '"server_hits":2,"server_misses":4,"server_miss_ratio":0.666667,"pids":3' "$out" \
  "trace-stats --json"

run sim --trace "$hand" --policy lru --size 2 --compare-found
expect_status 0 "sim --compare-found"
expect_in "# the server missed 4 of 6 requests" "$out" "--compare-found header line"
if awk '$1 == "lru" && $4 == 6 && $5 == 4 && $7 == 3 && $8 == 1 && $9 == 1 { f = 1 } END { exit !f }' "$out"; then
  ok
else bad "--compare-found table: want lru, 6 requests, 4 misses, agree 3, sim-only 1, server-only 1: $(cat "$out")"; fi
run sim --trace "$hand" --policy lru --size 2 --compare-found --json
expect_in '"server_misses":4,"agree_misses":3,"sim_only_misses":1,"server_only_misses":1' "$out" \
  "--compare-found --json"
run sim --trace "$hand" --policy lru --size 2 --compare-found --csv
expect_in ',server_misses,agree_misses,sim_only_misses,server_only_misses' "$out" "--compare-found --csv header"
expect_in ',4,3,1,1' "$out" "--compare-found --csv row"

plain=$scratch/plain.csv
printf 'obj_id\n1\n2\n1\n' >"$plain"
run sim --trace "$plain" --policy lru --size 2 --compare-found
expect_usage_error "$plain has no found column" "--compare-found without a found column"
run sim --trace "$hand" --policy lru --size 2 --compare-found --sample 0.5
expect_usage_error "--compare-found and --sample exclude each other" "--compare-found with --sample"
run trace-stats "$plain"
if grep -q "server\|pids" "$out"; then bad "trace-stats without found/pid columns shows them"; else ok; fi

cli_finish
