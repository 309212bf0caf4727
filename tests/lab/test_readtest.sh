#!/usr/bin/env bash
#
# tests/test_readtest.sh — `hotset bench readtest` end to end on a tiny run: one
# JSON line per size × mode with every field present and positive, the
# human table with a row per size and a column per mode under the CPU's
# caches, direct mode either measured or refused in one line naming the
# file system, usage errors one line naming the flag, a missing --file one
# line, and the data file removed afterwards. --huge-pages: off by default
# (the table as before, every JSON line "off" with no byte on huge pages);
# off,on doubles the cells, the "on" ones asked with madvise and — where the
# kernel has transparent huge pages — really on them, and the table gets a
# title per setting and a column of the share on huge pages. No speed is
# asserted (docs/results.md has the figures).
#
# Usage: test_readtest.sh PATH/TO/hotset
# Prints "N passed, N failed" last and exits non-zero if anything failed.

set -u

HOTSET=${1:?usage: test_readtest.sh PATH/TO/hotset}
source "$(dirname "$0")/../support/cli_lib.sh"
cli_setup readtest

run --help
run bench --help
if grep -q '^  readtest ' "$out"; then ok; else bad "hotset bench --help does not list readtest"; fi
run bench readtest --size 4KiB
expect_usage_error --size "readtest --size 4KiB (below --io)" "hotset bench readtest"
run bench readtest --size 24KiB --io 16KiB
expect_usage_error --size "readtest --size 24KiB --io 16KiB" "hotset bench readtest"
run bench readtest --size 1XB
expect_usage_error --size "readtest --size 1XB" "hotset bench readtest"
run bench readtest --size 16KiB,,32KiB
expect_usage_error --size "readtest --size with an empty item" "hotset bench readtest"
run bench readtest --mode read,sendfile
expect_usage_error --mode "readtest --mode read,sendfile" "hotset bench readtest"
run bench readtest --huge-pages off,maybe
expect_usage_error --huge-pages "readtest --huge-pages off,maybe" "hotset bench readtest"
run bench readtest --io 100
expect_usage_error --io "readtest --io 100" "hotset bench readtest"
run bench readtest --iterations 0
expect_usage_error --iterations "readtest --iterations 0" "hotset bench readtest"
run bench readtest --plot curve.jpg
expect_usage_error --plot "readtest --plot curve.jpg" "hotset bench readtest"
run bench readtest --file x --dir y
expect_usage_error --file "readtest --file with --dir" "hotset bench readtest"
run bench readtest --file "$scratch/none" --size 16KiB
expect_one_line_error "$scratch/none" "readtest --file missing"

tmp=$scratch/tmp
mkdir "$tmp"
json=$scratch/run.json
TMPDIR=$tmp "$HOTSET" bench readtest --size 16KiB,64KiB --iterations 2 --mode read,mmap,nt --json \
  >"$json" 2>"$err"
status=$?
expect_status 0 "readtest --json"
if [[ -z $(ls -A "$tmp") ]]; then ok; else bad "readtest left $(ls -A "$tmp") in \$TMPDIR"; fi
lines=$(wc -l <"$json")
if [[ $lines -eq 6 ]]; then ok; else bad "$lines JSON lines, want 6 (2 sizes x 3 modes)"; fi
seen=""
for n in $(seq 1 "$lines"); do
  for f in size io iterations ns_per_read mb_per_sec; do
    v=$(json_line_field "$json" "$n" $f)
    if awk -v v="$v" 'BEGIN { exit !(v + 0 > 0) }'; then ok; else bad "line $n: $f is \"$v\""; fi
  done
  if [[ $(json_line_field "$json" "$n" iterations) -eq 2 ]]; then ok; else
    bad "line $n: iterations $(json_line_field "$json" "$n" iterations), want 2"
  fi
  seen+=" $(json_line_field "$json" "$n" mode):$(json_line_field "$json" "$n" size)"
done
for m in read mmap nt; do
  for s in 16384 65536; do
    if [[ $seen == *" $m:$s"* ]]; then ok; else bad "no JSON line for mode $m, size $s"; fi
  done
done
# By default every cell is on small pages, and says so.
if [[ $(grep -c '"huge_pages":"off","huge_pages_used":"none","huge_page_bytes":0[,}]' "$json") -eq 6 ]]
then ok; else bad "default cells are not all huge_pages off with 0 bytes on huge pages"; fi

# --huge-pages off,on: each cell twice. "on" asks (madvise or reserved
# pages); where transparent huge pages are not "never", a fresh aligned
# 2 MiB region gets one when first touched, so the 2 MiB working set must be
# on one whole. "off" never is.
thp=$(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)
TMPDIR=$tmp "$HOTSET" bench readtest --size 16KiB,2MiB --iterations 1 --mode read,mmap --huge-pages off,on \
  --json >"$json" 2>"$err"
status=$?
expect_status 0 "readtest --huge-pages off,on --json"
if [[ $(wc -l <"$json") -eq 8 ]]; then ok; else bad "$(wc -l <"$json") JSON lines, want 8 (2 sizes x 2 modes x 2)"; fi
for m in read mmap; do
  for s in 16384 2097152; do
    off=$(grep -c "\"size\":$s,\"mode\":\"$m\".*\"huge_pages\":\"off\",\"huge_pages_used\":\"none\",\"huge_page_bytes\":0[,}]" "$json")
    if [[ $off -eq 1 ]]; then ok; else bad "no small-page line for $m at $s"; fi
    on=$(grep "\"size\":$s,\"mode\":\"$m\".*\"huge_pages\":\"on\"" "$json")
    used=$(grep -o '"huge_pages_used":"[a-z]*"' <<<"$on" | cut -d'"' -f4)
    bytes=$(grep -o '"huge_page_bytes":[0-9]*' <<<"$on" | cut -d: -f2)
    if [[ $used == transparent || $used == explicit ]]; then ok; else
      bad "$m at $s with huge pages on: huge_pages_used \"$used\""
    fi
    if [[ -n $bytes && $bytes -le $s ]]; then ok; else bad "$m at $s: huge_page_bytes \"$bytes\""; fi
    if [[ $thp == *"[never]"* || $s -ne 2097152 || $bytes -eq $s ]]; then ok; else
      bad "$m at $s with huge pages on: only $bytes bytes on huge pages (THP: $thp)"
    fi
  done
done

# The table: the caches above it, one row per size, one MB/s column per mode.
TMPDIR=$tmp "$HOTSET" bench readtest --size 16KiB,32KiB,64KiB --iterations 1 --mode read,nt \
  >"$out" 2>"$err"
status=$?
expect_status 0 "readtest (table)"
if grep -q '^CPU caches' "$out"; then ok; else bad "no CPU caches line above the table"; fi
if grep -q '^size .*read MB/s .*nt MB/s' "$out" && ! grep -q 'mmap' "$out"; then ok; else
  bad "table header is not size, read, nt: $(grep '^size' "$out")"
fi
for s in "16 KiB" "32 KiB" "64 KiB"; do
  if [[ $(grep -c "^$s " "$out") -eq 1 ]]; then ok; else bad "no single table row for $s"; fi
done
if [[ -z $(ls -A "$tmp") ]]; then ok; else bad "readtest left $(ls -A "$tmp") in \$TMPDIR"; fi
if ! grep -q 'huge' "$out"; then ok; else bad "the default table speaks of huge pages"; fi

# With --huge-pages off,on: a table per setting, each with its title and a
# column of the share on huge pages.
TMPDIR=$tmp "$HOTSET" bench readtest --size 16KiB,32KiB --iterations 1 --mode read --huge-pages off,on \
  >"$out" 2>"$err"
status=$?
expect_status 0 "readtest --huge-pages off,on (table)"
if grep -q '^huge pages off (MADV_NOHUGEPAGE):$' "$out" &&
  grep -q '^huge pages on (\(transparent\|explicit\)):$' "$out"; then ok; else
  bad "no title line per huge-pages setting"
fi
if [[ $(grep -c '^size .*read MB/s .*on huge$' "$out") -eq 2 ]]; then ok; else
  bad "the tables have no \"on huge\" column"
fi
if [[ $(grep -c '^16 KiB .* 0%$' "$out") -ge 1 && $(grep -c '^16 KiB ' "$out") -eq 2 ]]; then ok; else
  bad "no row per size and setting, with 0% on huge pages when off"
fi

# direct: measured, or refused in one line naming the file system.
TMPDIR=$tmp "$HOTSET" bench readtest --size 16KiB --iterations 1 --mode direct,read --json \
  >"$out" 2>"$err"
status=$?
expect_status 0 "readtest --mode direct,read"
if grep -q '"mode":"read"' "$out"; then ok; else bad "read did not run beside direct"; fi
if grep -q '"mode":"direct"' "$out" && [[ ! -s $err ]]; then ok
elif [[ $(wc -l <"$err") -eq 1 ]] && grep -q 'direct: .* refuses O_DIRECT on .*mode skipped' "$err"
then ok; else bad "direct neither measured nor refused in one line"; fi

# A file of our own, kept; one smaller than the largest size is refused.
head -c 65536 /dev/zero >"$scratch/data"
run bench readtest --file "$scratch/data" --size 16KiB,32KiB --iterations 1 --mode read,mmap --json
expect_status 0 "readtest --file"
if [[ $(wc -l <"$out") -eq 4 && -f $scratch/data ]]; then ok; else bad "readtest --file: $(wc -l <"$out") lines"; fi
run bench readtest --file "$scratch/data" --size 128KiB --iterations 1
expect_one_line_error "smaller than the largest --size" "readtest --file too small"

cli_finish
