#!/usr/bin/env bash
#
# tests/test_bench_scan.sh — `hotset bench scan` end to end on a tiny setup,
# and the result it exists to show: a big sequential scan through the normal
# policy pushes an OLTP workload's hot pages out of an LRU pool, and a ring
# keeps them in (here checked for clock-sweep, PostgreSQL's own policy).
# Also: the JSON fields, the flag errors, nothing on stderr when it is not a
# terminal, --plot when gnuplot is installed, and a list of ring sizes
# (--ring-size 64KiB,...,sweep): a cell per ring with its ring_bytes, the
# scan alone with --oltp-threads 0, a ring over the pool's cap skipped with
# a one-line note (or refused when none fits), bad items refused.
#
# Usage: test_bench_scan.sh PATH/TO/hotset   (CTest passes $<TARGET_FILE:hotset>)
# Prints "N passed, N failed" last and exits non-zero if anything failed.

set -u

HOTSET=${1:?usage: test_bench_scan.sh PATH/TO/hotset}
source "$(dirname "$0")/../support/cli_lib.sh"
cli_setup bench-scan

# field FILE POLICY RING SCAN NAME: a numeric field of the cell's JSON line.
field() {
  awk -v p="\"policy\":\"$2\"" -v r="\"ring\":\"$3\"" -v s="\"scan\":\"$4\"" -v f="\"$5\":" '
    index($0, p) && index($0, r) && index($0, s) {
      i = index($0, f)
      if (!i) exit
      v = substr($0, i + length(f))
      sub(/[,}].*/, "", v)
      print v
      exit
    }' "$1"
}
# holds A OP B: a floating-point comparison (awk), e.g. holds 0.5 '<' 0.9.
holds() { awk -v a="$1" -v b="$3" -v op="$2" 'BEGIN {
  if (a == "" || b == "") exit 1
  if (op == "<") exit !(a + 0 < b + 0)
  if (op == ">=") exit !(a + 0 >= b + 0)
  if (op == ">") exit !(a + 0 > b + 0)
  exit 1 }'; }

# ---- dispatch and flags ----

run bench --help
expect_status 0 "hotset bench --help"
if grep -q '^usage: hotset bench' "$out" && grep -q 'scan' "$out"; then ok; else
  bad "hotset bench --help does not list the experiments"
fi
run bench
expect_status 2 "hotset bench without an experiment"
run bench nosuch
expect_status 2 "hotset bench nosuch"
if grep -q 'unknown experiment' "$err"; then ok; else bad "unknown experiment not named"; fi
run bench scan --help
expect_status 0 "hotset bench scan --help"
if grep -q -- '--ring-size' "$out" && grep -q -- '--oltp-rate' "$out"; then ok; else
  bad "bench scan --help does not describe its flags"
fi
run help bench
expect_status 0 "hotset help bench"

run bench scan --ring maybe
expect_usage_error --ring "bench scan --ring maybe" "hotset bench"
run bench scan --scan full
expect_usage_error --scan "bench scan --scan full" "hotset bench"
run bench scan --policy belady
expect_usage_error --policy "bench scan --policy belady" "hotset bench"
run bench scan --policy nosuch
expect_usage_error --policy "bench scan --policy nosuch" "hotset bench"
run bench scan --ring-size fixed:lots
expect_usage_error --ring-size "bench scan --ring-size fixed:lots" "hotset bench"
run bench scan --pool 64KiB
expect_usage_error --pool "bench scan --pool 64KiB" "hotset bench"
run bench scan --hot 1KiB
expect_usage_error --hot "bench scan --hot 1KiB" "hotset bench"
run bench scan --update-ratio 2
expect_usage_error --update-ratio "bench scan --update-ratio 2" "hotset bench"
run bench scan --seconds 0
expect_usage_error --seconds "bench scan --seconds 0" "hotset bench"
run bench scan --io-combine 100
expect_usage_error --io-combine "bench scan --io-combine 100" "hotset bench"
run bench scan --warmup-turns -1
expect_usage_error --warmup-turns "bench scan --warmup-turns -1" "hotset bench"
run bench scan --io sideways
expect_usage_error --io "bench scan --io sideways" "hotset bench"
run bench scan --io auto --direct
expect_usage_error "--direct and --io auto" "bench scan --io auto --direct" "hotset bench"
run bench scan --io buffered --direct
expect_usage_error "--direct and --io buffered" "bench scan --io buffered --direct" "hotset bench"
# A list of rings: an empty item, an option word before any ring, a word
# that is neither, the same ring twice, and a list whose every ring is over
# the pool's cap (1/8 of 4 MiB) are refused.
for list in 64KiB,,1MiB own-writes,64KiB 64KiB,bogus 64KiB,fixed:64KiB sweep,1MiB 1MiB,2MiB; do
  run bench scan --pool 4MiB --policy lru --scan seq --ring-size "$list"
  expect_usage_error --ring-size "bench scan --ring-size $list" "hotset bench"
done
if grep -q 'over the cap of 512 KiB.*--pool 8 MiB or more' "$err"; then ok; else
  bad "a list with no ring under the cap does not say which --pool runs one"
fi

# ---- the experiment ----

# Paced clients at a quarter of the default rate and the scanner reading on
# its own thread: the suite runs tests side by side on two cores, and the
# qualitative result must not depend on the scanner getting a second core
# for its I/O worker.
json=$scratch/cells.json
"$HOTSET" bench scan --pool 4MiB --hot 1MiB --big 16MiB --seconds 0.5 --warmup 0.2 --settle 0.3 \
  --oltp-rate 20000 --io-workers 0 \
  --policy clock-sweep,lru --json >"$json" 2>"$err"
status=$?
expect_status 0 "bench scan --json"
if [[ ! -s $err ]]; then ok; else bad "bench scan wrote to stderr, which is not a terminal"; fi

# Per policy: none, seq ring on, seq ring off, index (ring off).
lines=$(wc -l <"$json")
if [[ $lines -eq 8 ]]; then ok; else bad "bench scan --json printed $lines lines, want 8"; fi
for f in policy ring scan oltp_ops_per_sec oltp_hit_ratio oltp_p50_us oltp_p99_us hot_share \
  scan_mb_per_sec raw_mb_per_sec scan_cpu_seconds scanner_cpu_seconds scan_cpus scan_mb_per_cpu_sec \
  raw_mb_per_cpu_sec scan_raw_cpu_ratio; do
  if [[ $(grep -c "\"$f\":" "$json") -eq $lines ]]; then ok; else bad "a cell has no \"$f\""; fi
done
if grep -q '"ring":"on","scan":"index"' "$json"; then bad "an index scan ran with a ring"; else ok; fi
if [[ $(grep -c '"ring":"off","scan":"none"' "$json") -eq 2 ]]; then ok; else
  bad "no baseline (ring off, scan none) per policy"
fi
if command -v python3 >/dev/null 2>&1; then
  if python3 - "$json" <<'EOF'; then ok; else bad "bench scan --json is not valid JSON lines"; fi
import json, sys
for line in open(sys.argv[1]):
    c = json.loads(line)
    assert c["ring"] in ("on", "off") and c["scan"] in ("none", "seq", "index")
    assert 0 <= c["oltp_hit_ratio"] <= 1 and 0 <= c["hot_share"] <= 1
    assert c["oltp_ops_per_sec"] > 0 and c["raw_mb_per_sec"] > 0
    assert 0 < c["oltp_p50_us"] <= c["oltp_p99_us"]
    assert (c["scan_mb_per_sec"] > 0) == (c["scan"] != "none")
    # The scan's CPU time (scanner, no I/O worker here) is counted, and it
    # cannot exceed the scanner's thread's share of the process's.
    if c["scan"] != "none":
        assert c["scan_cpu_seconds"] > 0 and c["scan_mb_per_cpu_sec"] > 0, c
        assert c["scanner_cpu_seconds"] <= c["scan_cpu_seconds"] * 1.05 + 0.01, c
        assert 0 < c["scan_cpus"] <= 2.2, c
        assert c["raw_mb_per_cpu_sec"] >= 0.95 * c["raw_mb_per_sec"], c
    else:
        assert c["scan_mb_per_cpu_sec"] == 0 and c["scan_raw_cpu_ratio"] == 0, c
EOF
else
  echo "SKIPPED: test_bench_scan: --json validation: python3 is not installed"
fi

base_cs=$(field "$json" clock-sweep off none oltp_hit_ratio)
ring_cs=$(field "$json" clock-sweep on seq oltp_hit_ratio)
base_lru=$(field "$json" lru off none oltp_hit_ratio)
noring_lru=$(field "$json" lru off seq oltp_hit_ratio)
share_base_lru=$(field "$json" lru off none hot_share)
share_noring_lru=$(field "$json" lru off seq hot_share)

# The ring protects the hot set: clock-sweep's hit ratio with a ring-using
# scan stays at the baseline's.
if holds "$ring_cs" '>=' "$(awk -v b="$base_cs" 'BEGIN { print 0.99 * b }')"; then ok; else
  bad "clock-sweep, seq scan with a ring: hit ratio $ring_cs, baseline $base_cs (want >= 99%)"
fi
# Without a ring, the scan floods LRU: the hit ratio and the hot pages'
# share of the pool fall clearly below the baseline's.
if holds "$noring_lru" '<' "$(awk -v b="$base_lru" 'BEGIN { print 0.9 * b }')"; then ok; else
  bad "lru, seq scan without a ring: hit ratio $noring_lru, baseline $base_lru (want < 90%)"
fi
if holds "$share_noring_lru" '<' "$(awk -v b="$share_base_lru" 'BEGIN { print 0.9 * b }')"; then
  ok
else
  bad "lru, seq scan without a ring: hot share $share_noring_lru, baseline $share_base_lru"
fi
# The baseline holds the whole hot relation: 128 of 512 buffers.
if holds "$share_base_lru" '>=' 0.24; then ok; else bad "lru baseline hot share $share_base_lru"; fi

# A vacuum dirties every page it reads; recycling a dirty buffer forces a WAL
# flush unless the log is already durable past the page's LSN. A 1-page ring
# flushes on every recycle; a 32-page one (read stream on the scanning
# thread, batches of 16) about once per 32.
vac=$scratch/vacuum.json
for rs in fixed:1KiB fixed:32KiB; do
  "$HOTSET" bench scan --pool 4MiB --hot 1MiB --big 16MiB --page-size 1KiB --seconds 0.3 \
    --warmup 0.1 --settle 0.1 --policy clock-sweep --scan vacuum --ring on --ring-size "$rs" \
    --io-workers 0 --json >"$vac.$rs" 2>"$err"
  status=$?
  expect_status 0 "bench scan --scan vacuum --ring-size $rs"
done
per_recycle() {
  awk '/"scan":"vacuum"/ {
    r = $0; sub(/.*"reuses":/, "", r); sub(/[,}].*/, "", r)
    f = $0; sub(/.*"wal_flushes":/, "", f); sub(/[,}].*/, "", f)
    if (r > 0) printf "%.4f", f / r }' "$1"
}
# One ring spec, as before lists: its JSON names it as given, and the ring
# it made (1 page of 1 KiB).
if grep -q '"ring":"on","scan":"vacuum".*"ring_size":"fixed:1KiB","ring_bytes":1024,' "$vac.fixed:1KiB"
then ok; else bad "vacuum cell with --ring-size fixed:1KiB: no ring_size fixed:1KiB, ring_bytes 1024"; fi
one=$(per_recycle "$vac.fixed:1KiB")
big=$(per_recycle "$vac.fixed:32KiB")
if holds "$one" '>=' 0.99; then ok; else bad "vacuum, 1-page ring: $one WAL flushes per recycle"; fi
if holds "$big" '<' 0.05; then ok; else bad "vacuum, 32-page ring: $big WAL flushes per recycle"; fi
run bench scan --pool 4MiB --hot 1MiB --big 16MiB --seconds 0.1 --warmup 0 --settle 0 \
  --policy lru --scan vacuum --ring on
expect_status 0 "bench scan --scan vacuum (table)"
if grep -q '^vacuum scans' "$out" && grep -q 'per recycle' "$out"; then ok; else
  bad "bench scan --scan vacuum prints no WAL-flush table"
fi

# The table, for one policy: the baseline, seq with and without a ring, index.
run bench scan --pool 4MiB --hot 1MiB --big 16MiB --seconds 0.1 --warmup 0 --settle 0 --policy lru \
  --scan seq,index --ring on,off --io-workers 0
expect_status 0 "bench scan (table)"
if grep -q '^policy .*hit%.*p99 us.*hot share.*scan MB/s.*MB/CPU-s.*scan/raw.*per CPU' "$out" &&
  grep -q '^lru .* on .* seq ' "$out"; then ok; else
  bad "bench scan's table lacks its header or the lru ring-on row"
fi
if grep -q 'MB/CPU-s: scan MB per' "$out"; then ok; else bad "bench scan's footer does not say what MB/CPU-s is"; fi
if [[ ! -s $err ]]; then ok; else bad "bench scan (table) wrote to stderr"; fi
# An index scan is paced: its scan/raw cell (the 13th column) says "-";
# the sequential scans' have a ratio.
if awk '$3 == "index" { found = 1; if ($13 != "-") wrong = 1 } END { exit wrong || !found }' "$out"; then ok
else bad "bench scan: an index-scan row has a scan/raw figure"; fi
if awk '$3 == "seq" { n++; if ($13 !~ /^[0-9.]+$/) wrong = 1 } END { exit wrong || n != 2 }' "$out"; then ok
else bad "bench scan: a seq-scan row lacks its scan/raw figure"; fi
# The table says the best possible hot share (a quarter of the pool here)
# and ends with what the run showed, computed from the cells: the ring kept
# lru's hot set; without a ring and under index scans, a verdict each; the
# ring's speed against raw reads.
if grep -q 'at most 25.0% of the pool: the best possible hot share' "$out"; then ok; else
  bad "bench scan: the header does not say the best possible hot share"
fi
# (The conclusion's lines wrap; continuation lines start with two blanks.)
joined=$scratch/joined
awk '/^  / { sub(/^  /, " "); printf "%s", $0; next } NR > 1 { print "" } { printf "%s", $0 }
  END { print "" }' "$out" >"$joined"
if grep -q '^What this run shows' "$joined" &&
  grep -q '^- seq scan with a ring: lru kept the hot set (hot share 2[45]\.[0-9]%' "$joined"; then ok
else bad "bench scan: no conclusion that the ring kept lru's hot set"; fi
for line in '- seq scan without a ring: lru \(kept the hot set\|lost part of the hot set\|collapsed\) (hot share' \
  '- index scan (no ring can help): lru \(kept the hot set\|lost part of the hot set\|collapsed\) (hot share' \
  "- seq scan speed against one thread's 256 KiB preads: [0-9.-]*x through the ring" \
  '- OLTP p99 beside a seq scan, against the same policy without one: [0-9.-]*x with a ring; [0-9.-]*x without one'; do
  if grep -q "^$line" "$joined"; then ok; else bad "bench scan: no conclusion line \"$line\""; fi
done

# ---- --direct: misses are device reads ----

# The same lab with O_DIRECT: every JSON line says so and has the misses'
# cost; lru still loses its hot set without a ring (the hit ratio, not the
# latency, is asserted: timing is the benchmark's business, not a test's),
# and the mean miss of that cell is a real read (> 0). Where the scratch
# directory's file system refuses O_DIRECT, --io direct fails naming it and
# --io auto runs buffered, saying why.
djson=$scratch/direct.json
# A paced OLTP rate low enough that a slow scan (ASan, a loaded machine:
# direct reads cost a syscall each) still passes more pages through the
# pool between two touches of a hot page than the pool holds.
"$HOTSET" bench scan --pool 4MiB --hot 1MiB --big 16MiB --seconds 0.3 --warmup 0.1 --settle 0.2 \
  --oltp-rate 4000 --io-workers 0 --policy lru --scan seq --direct --dir "$scratch/ddata" \
  --json >"$djson" 2>"$err"
status=$?
if [[ $status -ne 0 ]] && grep -q 'refuses\|moves blocks of' "$err"; then
  echo "SKIPPED: test_bench_scan: --direct: $(head -1 "$err")"
  run bench scan --pool 4MiB --hot 1MiB --big 16MiB --seconds 0.1 --warmup 0 --settle 0 \
    --policy lru --scan seq --ring on --io auto --dir "$scratch/adata"
  expect_status 0 "bench scan --io auto where direct I/O is refused"
  if grep -q '^I/O: buffered, as direct I/O is not possible here (--io auto)' "$out"; then ok; else
    bad "bench scan --io auto did not say why it ran buffered"
  fi
else
  expect_status 0 "bench scan --direct --json"
  if [[ $(grep -c '"direct":true' "$djson") -eq 3 ]]; then ok; else
    bad "bench scan --direct: not every cell says \"direct\":true"
  fi
  d_base=$(field "$djson" lru off none oltp_hit_ratio)
  d_noring=$(field "$djson" lru off seq oltp_hit_ratio)
  d_miss=$(field "$djson" lru off seq oltp_miss_us)
  d_misses=$(field "$djson" lru off seq oltp_misses)
  if holds "$d_noring" '<' "$(awk -v b="$d_base" 'BEGIN { print 0.9 * b }')"; then ok; else
    bad "lru, direct seq scan without a ring: hit ratio $d_noring, baseline $d_base (want < 90%)"
  fi
  if holds "$d_misses" '>' 0 && holds "$d_miss" '>' 0; then ok; else
    bad "lru, direct seq scan without a ring: $d_misses misses costing $d_miss us"
  fi
  if [[ $(field "$djson" lru off none oltp_misses) == 0 ]] &&
    [[ $(field "$djson" lru off none oltp_miss_us) == 0.000 ]]; then ok; else
    bad "a baseline with no misses reports a miss cost"
  fi
  run bench scan --pool 4MiB --hot 1MiB --big 16MiB --seconds 0.1 --warmup 0 --settle 0 \
    --policy lru --scan seq --ring on --io auto --dir "$scratch/adata"
  expect_status 0 "bench scan --io auto"
  if grep -q '^I/O: direct (O_DIRECT): a miss is a device read' "$out" &&
    grep -q 'raw O_DIRECT pread of it' "$out"; then ok; else
    bad "bench scan --io auto on a file system with O_DIRECT did not run direct"
  fi
fi

# ---- a list of ring sizes ----

# The scan alone (no OLTP clients, so no baseline cells), a ring per listed
# size, one with its own option; 1 MiB is over the cap of a 4 MiB pool
# (512 KiB), so its cell is skipped with one note rather than run as a
# second 512 KiB ring.
sweep=$scratch/sweep.json
"$HOTSET" bench scan --pool 4MiB --hot 1MiB --big 16MiB --seconds 0.1 --warmup 0 --warmup-turns 1 \
  --oltp-threads 0 --policy clock-sweep --scan seq --ring on --io-workers 0 \
  --ring-size 64KiB,128KiB,own-writes,1MiB,fixed:256KiB --json >"$sweep" 2>"$err"
status=$?
expect_status 0 "bench scan --ring-size 64KiB,128KiB,own-writes,1MiB,fixed:256KiB"
if [[ $(wc -l <"$sweep") -eq 3 ]]; then ok; else bad "$(wc -l <"$sweep") JSON lines, want 3 (one per ring that fits)"; fi
n=0
for want in fixed:64KiB:65536 fixed:128KiB,own-writes:131072 fixed:256KiB:262144; do
  n=$((n + 1))
  spec=${want%:*}
  bytes=${want##*:}
  # (json_line_field stops at a comma, which a ring spec may hold.)
  if sed -n "${n}p" "$sweep" | grep -q "\"ring_size\":\"$spec\",\"ring_bytes\":$bytes,"; then ok; else
    bad "line $n: want ring_size $spec, ring_bytes $bytes: $(sed -n "${n}p" "$sweep" | grep -o '"ring_size.*ring_bytes":[0-9]*')"
  fi
  if [[ $(json_line_field "$sweep" $n scan) == seq && $(json_line_field "$sweep" $n ring) == on &&
    $(json_line_field "$sweep" $n oltp_threads) == 0 && $(json_line_field "$sweep" $n oltp_ops) == 0 ]]
  then ok; else bad "line $n is not a seq scan with a ring and no OLTP"; fi
  if holds "$(json_line_field "$sweep" $n scan_mb_per_sec)" '>' 0; then ok; else bad "line $n: no scan MB/s"; fi
done
if [[ $(wc -l <"$err") -eq 1 ]] &&
  grep -q '^hotset bench scan: --ring-size fixed:1MiB: over the ring cap of 512 KiB .* skipped (--pool 8 MiB or more' "$err"
then ok; else bad "the 1 MiB ring over a 4 MiB pool's cap is not skipped with one note"; fi

# sweep: 64 KiB to 64 MiB, doubling; on a 1 MiB-capped pool (8 MiB) the
# five that fit run, the six over it are each noted. The table gets a ring
# size column, and a row per ring.
run bench scan --pool 8MiB --hot 1MiB --big 32MiB --seconds 0.05 --warmup 0 --warmup-turns 1 \
  --oltp-threads 0 --policy clock-sweep --scan seq --ring on --io-workers 0 --ring-size sweep
expect_status 0 "bench scan --ring-size sweep"
if [[ $(grep -c 'skipped (--pool' "$err") -eq 6 && $(wc -l <"$err") -eq 6 ]]; then ok; else
  bad "sweep over an 8 MiB pool: $(grep -c 'skipped' "$err") notes, want 6 (2 MiB ... 64 MiB)"
fi
if grep -q '^policy  *ring ring size scan ' "$out"; then ok; else bad "no ring size column"; fi
for size in "64 KiB" "128 KiB" "256 KiB" "512 KiB" "1 MiB"; do
  if [[ $(grep -c "^clock-sweep  *on  *$size seq  *- " "$out") -eq 1 ]]; then ok; else
    bad "no single table row for the $size ring (OLTP columns \"-\")"
  fi
done
if grep -q 'by ring (mean over policies): fixed:64KiB [0-9]' "$out"; then ok; else
  bad "no conclusion line of MB/s by ring"
fi

# ---- --plot ----

if command -v gnuplot >/dev/null 2>&1; then
  run bench scan --pool 4MiB --hot 1MiB --big 16MiB --seconds 0.1 --warmup 0 --settle 0 \
    --policy clock-sweep,lru --scan seq --plot "$scratch/scan.png"
  expect_status 0 "bench scan --plot"
  if [[ -s $scratch/scan.png ]] && head -c 4 "$scratch/scan.png" | grep -q PNG; then ok; else
    bad "bench scan --plot drew no PNG"
  fi
else
  echo "SKIPPED: test_bench_scan: --plot drawing: gnuplot is not installed (checking its error instead)"
  run bench scan --policy lru --plot "$scratch/scan.png"
  expect_status 1 "bench scan --plot without gnuplot"
  if grep -q 'gnuplot is not installed' "$err"; then ok; else bad "missing gnuplot not reported"; fi
fi

cli_finish
