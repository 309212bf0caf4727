#!/usr/bin/env bash
#
# tests/test_bench_wal_sync.sh — `hotset bench wal-sync` end to end on a
# tiny run: one JSON line per method, each with every promised field and
# positive, self-consistent figures (or, for the O_DIRECT methods only, a
# refusal with its reason), write+fdatasync measured and the base of the
# comparison, the table with a row per method, nothing left in $TMPDIR or
# in a --dir, and usage errors one line naming the flag. No speed is
# asserted: the figures are in docs/results.md.
#
# Usage: test_bench_wal_sync.sh PATH/TO/hotset   (CTest passes $<TARGET_FILE:hotset>)
# Prints "N passed, N failed" last and exits non-zero if anything failed.

set -u

HOTSET=${1:?usage: test_bench_wal_sync.sh PATH/TO/hotset}
source "$(dirname "$0")/../support/cli_lib.sh"
cli_setup bench-wal-sync

methods="write+fdatasync write+fsync open_datasync open_sync open_datasync+direct open_sync+direct write-only"

# ---- dispatch and flags ----

run bench --help
if grep -q '^  wal-sync ' "$out"; then ok; else bad "hotset bench --help does not list wal-sync"; fi
run bench wal-sync --help
expect_status 0 "hotset bench wal-sync --help"
if grep -q -- '--sizes' "$out" && grep -q -- '--file-size' "$out" && grep -q 'open_datasync' "$out"
then ok; else bad "bench wal-sync --help does not describe its flags and methods"; fi

P="hotset bench wal-sync"
run bench wal-sync --sizes 0
expect_usage_error --sizes "bench wal-sync --sizes 0" "$P"
run bench wal-sync --sizes 3000
expect_usage_error --sizes "bench wal-sync --sizes 3000 (below 4 KiB)" "$P"
run bench wal-sync --sizes 8KiB,6000
expect_usage_error --sizes "bench wal-sync --sizes 8KiB,6000 (no multiple of 4 KiB)" "$P"
run bench wal-sync --sizes 8KiB,,16KiB
expect_usage_error --sizes "bench wal-sync --sizes with an empty item" "$P"
run bench wal-sync --sizes 8XB
expect_usage_error --sizes "bench wal-sync --sizes 8XB" "$P"
run bench wal-sync --sizes 2MiB --file-size 1MiB
expect_usage_error --sizes "bench wal-sync --sizes larger than --file-size" "$P"
run bench wal-sync --file-size 100000
expect_usage_error --file-size "bench wal-sync --file-size 100000" "$P"
run bench wal-sync --seconds -1
expect_usage_error --seconds "bench wal-sync --seconds -1" "$P"
run bench wal-sync --seconds soon
expect_usage_error --seconds "bench wal-sync --seconds soon" "$P"
: >"$scratch/plain"
run bench wal-sync --seconds 0.05 --sizes 4KiB --file-size 64KiB --dir "$scratch/plain"
expect_one_line_error "is not a directory" "bench wal-sync --dir on a regular file"
if [[ ! -s $out ]]; then ok; else bad "bench wal-sync --dir on a file printed to stdout"; fi

# ---- the run ----

tmp=$scratch/tmp
mkdir "$tmp"
json=$scratch/run.json
TMPDIR=$tmp "$HOTSET" bench wal-sync --seconds 0.2 --sizes 8KiB --file-size 1MiB --json \
  >"$json" 2>"$err"
status=$?
expect_status 0 "bench wal-sync --json"
if [[ ! -s $err ]]; then ok; else bad "bench wal-sync wrote to stderr"; fi
if [[ -z $(ls -A "$tmp") ]]; then ok; else bad "bench wal-sync left $(ls -A "$tmp") in \$TMPDIR"; fi

n_methods=$(wc -w <<<"$methods")
lines=$(wc -l <"$json")
if [[ $lines -eq $n_methods ]]; then ok; else bad "$lines JSON lines, want $n_methods (one per method)"; fi
for m in $methods; do
  if [[ $(grep -c "\"method\":\"$m\"" "$json") -eq 1 ]]; then ok; else bad "not one JSON line for $m"; fi
done

positive() { awk -v v="$1" 'BEGIN { exit !(v + 0 > 0) }'; }
for n in $(seq 1 "$lines"); do
  m=$(json_line_field "$json" "$n" method)
  if [[ $(json_line_field "$json" "$n" io_bytes) == 8192 ]]; then ok; else bad "$m: io_bytes not 8192"; fi
  if [[ -n $(json_line_field "$json" "$n" file_system) ]]; then ok; else bad "$m: no file_system"; fi
  fs=$(json_line_field "$json" "$n" file_system)
  if [[ $(json_line_field "$json" "$n" refused) == true ]]; then
    # Only O_DIRECT may be refused, with a reason, and not where the
    # file system is known to take it.
    if [[ $m == *+direct && -n $(json_line_field "$json" "$n" reason) && $fs != *ext4 && $fs != xfs ]]
    then ok; else
      bad "$m: refused (\"$(json_line_field "$json" "$n" reason)\")"
    fi
    continue
  fi
  for f in ops ops_per_sec us_per_op p99_us mb_per_sec vs_fdatasync; do
    v=$(json_line_field "$json" "$n" $f)
    if positive "$v"; then ok; else bad "$m: $f is \"$v\""; fi
  done
  # The figures describe the same run: ops/s x us/op = 10^6, MB/s = ops/s x io.
  if awk -v s="$(json_line_field "$json" "$n" seconds)" \
    -v ops="$(json_line_field "$json" "$n" ops)" \
    -v r="$(json_line_field "$json" "$n" ops_per_sec)" \
    -v us="$(json_line_field "$json" "$n" us_per_op)" \
    -v mb="$(json_line_field "$json" "$n" mb_per_sec)" '
    function near(a, b) { return a > 0.99 * b - 0.02 && a < 1.01 * b + 0.02 }
    BEGIN { exit !(s >= 0.2 && s < 30 && near(r, ops / s) && near(r * us, 1e6) && near(mb, r * 8192 / 1e6)) }'
  then ok; else bad "$m: seconds, ops, ops_per_sec, us_per_op and mb_per_sec disagree"; fi
done
base=$(grep -n '"method":"write+fdatasync"' "$json" | cut -d: -f1)
if [[ -n $base && $(json_line_field "$json" "$base" refused) == false &&
  $(json_line_field "$json" "$base" vs_fdatasync) == 1.000 ]]; then ok; else
  bad "write+fdatasync is not measured as the base (vs_fdatasync 1.000)"
fi

# ---- the table, in a --dir: kept, the file removed ----

dir=$scratch/data
run bench wal-sync --seconds 0.05 --sizes 4KiB,8KiB --file-size 64KiB --dir "$dir"
expect_status 0 "bench wal-sync --dir (table)"
if grep -q '^size .*method .*ops/s .*us/op .*p99_us .*MB/s' "$out"; then ok; else
  bad "no table header: $(sed -n 2p "$out")"
fi
for s in 4 8; do
  for m in $methods; do
    if [[ $(awk -v s=$s -v m="$m" '$1 == s && $2 == "KiB" && $3 == m' "$out" | wc -l) -eq 1 ]]
    then ok; else bad "not one table row for $s KiB $m"; fi
  done
done
if [[ -d $dir && -z $(ls -A "$dir") ]]; then ok; else bad "bench wal-sync --dir: $dir not kept empty"; fi

cli_finish
