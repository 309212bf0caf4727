#!/usr/bin/env bash
# tests/test_pg_trace.sh HOTSET REPO — PostgreSQL buffer traces end to end.
#
# hotset trace-stats and hotset sim --compare-found on a hand-worked
# PostgreSQL trace csv (the lru example of test_compare_found.c): the
# server's found and missed counts, the pids, and the agree / sim-only /
# server-only split in the table, CSV and JSON; --compare-found without a
# found column is a one-line usage error naming the trace.
#
# tools/pg-trace/pg-trace-convert.py on tests/data/pg-trace-sample.txt,
# real pg-trace.bt output captured from PostgreSQL 15 (two sessions of
# index lookups and TID range scans, lines out of clock order across CPUs,
# template1's catalogs beside bench's): the csv must be the sample's lines
# sorted by clock (computed here with sort and awk), the oracleGeneral
# records the same accesses with id rel<<32 ^ fork<<28 ^ block, size 8192
# and next-access times (computed here with a backward awk pass), and
# hotset must read both alike, with the sample's found counts.
set -uo pipefail
HOTSET=$1
REPO=$2
# shellcheck source=cli_lib.sh
source "$(dirname "$0")/../support/cli_lib.sh"
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

# ---- the checked-in PostgreSQL 15 trace reads with its found counts -----------
real=$REPO/tests/data/pg15-pgbench-seqscan.csv.zst
run trace-stats "$real" --json
expect_in '"requests":235302,' "$out" "the checked-in trace's requests"
expect_in '"server_hits":18229,"server_misses":217073,' "$out" "the checked-in trace's found counts"
expect_in '"pids":5' "$out" "the checked-in trace's pids"

# ---- the converter on real bpftrace output -----------------------------------
sample=$REPO/tests/data/pg-trace-sample.txt
convert=$REPO/tools/pg-trace/pg-trace-convert.py
if ! command -v python3 >/dev/null || ! command -v zstd >/dev/null; then
  echo "SKIPPED: test_pg_trace: the converter needs python3 and zstd"
  cli_finish
  exit
fi
db=16384 # bench's OID in the sample
python3 "$convert" "$sample" --csv "$scratch/s.csv" >"$out" 2>"$err"
status=$?
expect_one_line_error "relfilenode 1259 is in tablespace/database 1663/1 and 1663/16384" \
  "two databases' catalogs without --database"
python3 "$convert" "$sample" --database $db --csv "$scratch/s.csv" --oracle "$scratch/s.og" \
  2>"$err"
status=$?
expect_status 0 "converting the sample"
expect_in "652 accesses, 570 found, 82 missed, 4 pids" "$err" "the converter's summary"

# The csv, independently: database $db's and the shared catalogs' lines,
# stably sorted by clock, numbered.
{
  echo "seq,pid,rel,fork,block,found"
  awk -v db=$db '$1 == "A" && ($7 == db || $7 == 0)' "$sample" | sort -s -n -k2,2 |
    awk '{ print NR "," $3 "," $8 "," $4 "," $5 "," $9 }'
} >"$scratch/want.csv"
if cmp -s "$scratch/want.csv" "$scratch/s.csv"; then ok; else
  bad "csv differs from the sorted sample: $(diff "$scratch/want.csv" "$scratch/s.csv" | head -5)"
fi
# The sample really is out of clock order somewhere, so the sort is tested.
if awk '$1 == "A" { if ($2 < last) o = 1; last = $2 } END { exit !o }' "$sample"; then ok; else
  bad "the sample has no out-of-order lines"
fi

# oracleGeneral: decoded here, against a backward pass over the csv.
python3 -c '
import struct, sys
data = open(sys.argv[1], "rb").read()
for t, i, s, n in struct.iter_unpack("<IQIq", data):
    print(t, i >> 32, i >> 28 & 15, i & 0xfffffff, s, n)' "$scratch/s.og" >"$scratch/got.og.txt"
tail -n +2 "$scratch/want.csv" | tac |
  awk -F, '{ k = $3 ":" $4 ":" $5; n = (k in last) ? last[k] : -1; last[k] = $1;
             print $1, $3, $4, $5, 8192, n }' | tac >"$scratch/want.og.txt"
if cmp -s "$scratch/want.og.txt" "$scratch/got.og.txt"; then ok; else
  bad "oracleGeneral records differ: $(diff "$scratch/want.og.txt" "$scratch/got.og.txt" | head -5)"
fi
if grep -q " -1$" "$scratch/got.og.txt" && grep -qv " -1$" "$scratch/got.og.txt"; then ok; else
  bad "the sample's next-access times are all -1 or none is"
fi

# hotset reads both, and the compressed csv, alike.
run trace-stats "$scratch/s.csv"
expect_in "requests           652" "$out" "trace-stats of the converted csv"
expect_in "server found       570 (hits)" "$out" "trace-stats found of the converted csv"
expect_in "server missed      82 (miss ratio 12.5767%)" "$out" "trace-stats missed"
expect_in "processes (pids)   4" "$out" "trace-stats pids of the converted csv"
objects=$(awk '/^distinct objects/ { print $3 }' "$out")
run trace-stats "$scratch/s.og"
expect_in "distinct objects   $objects" "$out" "oracleGeneral: the csv's objects"
python3 "$convert" "$sample" --database $db --csv "$scratch/s.csv.zst" 2>/dev/null
run sim --trace "$scratch/s.csv.zst" --policy lru --size 100 --ignore-size --csv
lru_csv=$(tail -1 "$out" | cut -d, -f6)
run sim --trace "$scratch/s.og" --policy lru --size 100 --ignore-size --csv
lru_og=$(tail -1 "$out" | cut -d, -f6)
if [[ -n $lru_csv && $lru_csv == "$lru_og" ]]; then ok; else
  bad "lru misses: csv.zst $lru_csv, oracleGeneral $lru_og"
fi

cli_finish
