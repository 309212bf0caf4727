#!/usr/bin/env bash
#
# tests/test_bench_sqlite.sh — `hotset bench sqlite` end to end on a tiny
# run: every JSON line has its workload's fields, stock and hotset rows are
# there for both workloads, hit ratios are shares counted over the lookups'
# page fetches only (never the scans'), the temporary directory is removed,
# and usage errors are one line naming the flag. No speed is asserted
# (docs/results.md has the figures). A hotset built without SQLite must say
# so on one line; the test is then skipped (status 77).
#
# Usage: test_bench_sqlite.sh PATH/TO/hotset
# Prints "N passed, N failed" last and exits non-zero if anything failed.

set -u

HOTSET=${1:?usage: test_bench_sqlite.sh PATH/TO/hotset}
source "$(dirname "$0")/../support/cli_lib.sh"
cli_setup bench-sqlite

run bench --help
if grep -q '^  sqlite ' "$out"; then ok; else bad "hotset bench --help does not list sqlite"; fi
run bench sqlite --help
if [[ $status -ne 0 ]] && grep -q 'built without SQLite' "$err"; then
  if [[ $(wc -l <"$err") -eq 1 ]]; then
    echo "SKIPPED: test_bench_sqlite: hotset was built without SQLite"
    exit 77
  fi
  bad "built without SQLite, but said so in $(wc -l <"$err") lines"
  cli_finish
  exit 1
fi
expect_status 0 "bench sqlite --help"

run bench sqlite --policy nosuch
expect_usage_error --policy "bench sqlite --policy nosuch" "hotset bench sqlite"
run bench sqlite --policy belady
expect_usage_error --policy "bench sqlite --policy belady (simulator only)" "hotset bench sqlite"
run bench sqlite --cache 0
expect_usage_error --cache "bench sqlite --cache 0" "hotset bench sqlite"
run bench sqlite --scan-detect sometimes
expect_usage_error --scan-detect "bench sqlite --scan-detect sometimes" "hotset bench sqlite"
run bench sqlite --workload oltp
expect_usage_error --workload "bench sqlite --workload oltp" "hotset bench sqlite"
run bench sqlite --lookups-between 0
expect_usage_error --lookups-between "bench sqlite --lookups-between 0" "hotset bench sqlite"

tmp=$scratch/tmp
mkdir "$tmp"
json=$scratch/run.json
# Two policies (the adapter's default, named "default", and lru), detection
# on and off: 1 + 4 lookups lines, 1 + 2 mix lines.
TMPDIR=$tmp "$HOTSET" bench sqlite --rounds 3 --lookups-between 20 --mix-runs 1 \
  --policy default,lru --json >"$json" 2>"$err"
status=$?
expect_status 0 "bench sqlite --json"
if [[ -z $(ls -A "$tmp") ]]; then ok; else bad "bench sqlite left $(ls -A "$tmp") in \$TMPDIR"; fi
lines=$(wc -l <"$json")
if [[ $lines -eq 8 ]]; then ok; else bad "$lines JSON lines, want 8 (5 lookups, 3 mix)"; fi
f() { json_line_field "$json" "$1" "$2"; }
declare -A seen
for ((n = 1; n <= lines; n++)); do
  w=$(f $n workload) cache=$(f $n cache)
  seen[$w/$cache]=1
  for k in workload cache policy scan_detect total_seconds; do
    if [[ -n $(f $n $k) ]]; then ok; else bad "line $n has no $k"; fi
  done
  if [[ $cache == stock && $(f $n policy) == null && $(f $n scan_detect) == null ]] ||
    [[ $cache == hotset && $(f $n policy) != null && $(f $n scan_detect) =~ ^(true|false)$ ]]
  then ok; else
    bad "line $n: cache '$cache' with policy '$(f $n policy)', scan_detect '$(f $n scan_detect)'"
  fi
  case $w in
  lookups)
    for k in lookup_hit_ratio lookups_per_sec lookup_p99_us scan_seconds; do
      if [[ -n $(f $n $k) ]]; then ok; else bad "line $n has no $k"; fi
    done
    if awk -v v="$(f $n lookup_hit_ratio)" 'BEGIN { exit !(v >= 0 && v <= 1) }'; then ok; else
      bad "line $n: lookup_hit_ratio $(f $n lookup_hit_ratio) is not within [0, 1]"
    fi
    if [[ $(f $n lookups) -eq 60 ]]; then ok; else bad "line $n: $(f $n lookups) lookups, want 3 x 20"; fi
    # A lookup descends the index and the table (a few pages each); a scan
    # of the big table counted with them would add some 50 fetches per lookup.
    fetches=$(($(f $n cache_hits) + $(f $n cache_misses)))
    if [[ $fetches -gt 0 && $fetches -le $((60 * 10)) ]]; then ok; else
      bad "line $n: $fetches page fetches for 60 lookups (the scans' counted too?)"
    fi
    ;;
  mix)
    for k in insert_seconds select_seconds update_seconds range_seconds join_seconds \
      delete_seconds; do
      if [[ -n $(f $n $k) ]]; then ok; else bad "line $n has no $k"; fi
    done
    if awk -v v="$(f $n hit_ratio)" 'BEGIN { exit !(v > 0 && v <= 1) }'; then ok; else
      bad "line $n: the mix's hit_ratio $(f $n hit_ratio) is not within (0, 1]"
    fi
    # CPU seconds beside the wall clock, and the paired ratios: stock's own
    # is 1 (each run over itself), another's a positive ratio.
    if awk -v u="$(f $n user_seconds)" -v s="$(f $n system_seconds)" \
      'BEGIN { exit !(u > 0 && s >= 0) }'; then ok; else
      bad "line $n: user_seconds '$(f $n user_seconds)', system_seconds '$(f $n system_seconds)'"
    fi
    if [[ $(f $n cache) == stock ]]; then
      if [[ $(f $n paired_ratio) == 1.0000 && $(f $n paired_cpu_ratio) == 1.0000 ]]; then ok; else
        bad "line $n: stock's paired ratios $(f $n paired_ratio), $(f $n paired_cpu_ratio), want 1.0000"
      fi
    elif awk -v p="$(f $n paired_ratio)" -v c="$(f $n paired_cpu_ratio)" \
      'BEGIN { exit !(p > 0 && c > 0) }'; then ok; else
      bad "line $n: paired ratios '$(f $n paired_ratio)', '$(f $n paired_cpu_ratio)'"
    fi
    ;;
  *) bad "line $n: workload '$w'" ;;
  esac
done
for k in lookups/stock lookups/hotset mix/stock mix/hotset; do
  if [[ -n ${seen[$k]:-} ]]; then ok; else bad "no $k row"; fi
done
# The configuration reached the adapter: with scan detection on it took the
# scans' fetches for a scan (3 rounds and the warm-up of a table of several
# hundred pages), with it off none.
for ((n = 2; n <= 5; n++)); do
  sd=$(f $n scan_detect) sf=$(f $n scan_fetches)
  if [[ $sd == true && $sf -gt 1000 ]] || [[ $sd == false && $sf -eq 0 ]]; then ok; else
    bad "line $n: scan_detect $sd with $sf scan fetches"
  fi
done
# The same lookups for every configuration: with the same keys, the pages
# a lookup reads (hits + misses) are the same whichever cache serves them.
if [[ $(($(f 1 cache_hits) + $(f 1 cache_misses))) -eq $(($(f 2 cache_hits) + $(f 2 cache_misses))) ]]
then ok; else bad "stock and the first hotset row fetched different numbers of pages"; fi

# The family: one shape, one policy; a JSON line for the shape with stock,
# the ceiling, the default and the policy, then the summary line.
fam=$scratch/family.json
TMPDIR=$tmp "$HOTSET" bench sqlite --workload family --shape 19 --family-rounds 2 --policy lru \
  --scan-detect on --cache 100 --json >"$fam" 2>"$err"
status=$?
expect_status 0 "bench sqlite --workload family --json"
if [[ $(wc -l <"$fam") -eq 2 ]]; then ok; else bad "family: $(wc -l <"$fam") JSON lines, want 2"; fi
g() { json_line_field "$fam" "$1" "$2"; }
if [[ $(g 1 workload) == family && $(g 1 shape) == 19 && $(g 2 workload) == family-summary ]]; then ok
else bad "family: lines '$(g 1 workload)' (shape '$(g 1 shape)'), '$(g 2 workload)'"; fi
for k in stock ceiling default; do
  if awk -v v="$(g 1 $k)" 'BEGIN { exit !(v > 0 && v <= 1) }'; then ok; else
    bad "family: $k '$(g 1 $k)' is not within (0, 1]"
  fi
done
# The ceiling's cache never evicts: nothing serves the lookups better.
if awk -v c="$(g 1 ceiling)" -v s="$(g 1 stock)" -v d="$(g 1 default)" \
  'BEGIN { exit !(c >= s - 1e-9 && c >= d - 1e-9) }'; then ok; else
  bad "family: ceiling $(g 1 ceiling) below stock $(g 1 stock) or default $(g 1 default)"
fi
run bench sqlite --workload family --shape 24
expect_usage_error --shape "bench sqlite --shape 24" "hotset bench sqlite"

# The human tables and the target checks; --dir is kept, its databases not.
dir=$scratch/dir
"$HOTSET" bench sqlite --rounds 2 --lookups-between 10 --mix-runs 1 --policy lru --dir "$dir" \
  >"$out" 2>"$err"
status=$?
expect_status 0 "bench sqlite --dir (tables)"
if grep -q '^lookups: ' "$out" && grep -q '^mix: ' "$out" && grep -q '^targets:' "$out"; then ok
else bad "the tables or the targets are missing"; fi
if [[ -d $dir && -z $(ls -A "$dir") ]]; then ok; else bad "--dir: $(ls -A "$dir" 2>&1) left"; fi

cli_finish
