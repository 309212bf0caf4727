#!/usr/bin/env bash
#
# tests/test_bench_vacuum.sh — `hotset bench vacuum` end to end on a small
# run: every cell's JSON line has the fields, the cells are the ones the
# flags ask for, vacuum removed the dead rows in each, the ring sizes are
# what the sweep says (1 buffer for 8KiB), the cost-delay cell slept, the
# auto cell ran under the throttle with a ring that writes its own pages,
# the calibration cells ran without vacuum (the spinner's CPU counted only
# in its cell), the temporary directory is removed, usage errors are one
# line with a hint, and the table's size: 2x the pool by default, 5x with
# --full, and a --table given wins over both. No speed is asserted
# (docs/results.md has the figures).
#
# Usage: test_bench_vacuum.sh PATH/TO/hotset
# Prints "N passed, N failed" last and exits non-zero if anything failed.

set -u

HOTSET=${1:?usage: test_bench_vacuum.sh PATH/TO/hotset}
source "$(dirname "$0")/../support/cli_lib.sh"
cli_setup bench-vacuum

run bench --help
if grep -q '^  vacuum ' "$out"; then ok; else bad "hotset bench --help does not list vacuum"; fi
run bench vacuum --fg sometimes
expect_usage_error --fg "bench vacuum --fg sometimes" "hotset bench vacuum"
run bench vacuum --throttle manual
expect_usage_error --throttle "bench vacuum --throttle manual" "hotset bench vacuum"
run bench vacuum --ring-size 256XB
expect_usage_error --ring-size "bench vacuum --ring-size 256XB" "hotset bench vacuum"
run bench vacuum --cost-delay 2,x
expect_usage_error --cost-delay "bench vacuum --cost-delay 2,x" "hotset bench vacuum"
run bench vacuum --fg-ops delete
expect_usage_error --fg-ops "bench vacuum --fg-ops delete" "hotset bench vacuum"
run bench vacuum --dead 0
expect_usage_error --dead "bench vacuum --dead 0" "hotset bench vacuum"
run bench vacuum --own-writes sometimes
expect_usage_error --own-writes "bench vacuum --own-writes sometimes" "hotset bench vacuum"
run bench vacuum --fg-tick -1
expect_usage_error --fg-tick "bench vacuum --fg-tick -1" "hotset bench vacuum"
run bench vacuum --calibrate -1
expect_usage_error --calibrate "bench vacuum --calibrate -1" "hotset bench vacuum"
run bench vacuum --plot chart.jpg
expect_usage_error --plot "bench vacuum --plot chart.jpg" "hotset bench vacuum"
for t in 0x 5y 1001x 512KiB; do
  run bench vacuum --table $t
  expect_usage_error --table "bench vacuum --table $t" "hotset bench vacuum"
done
# The help says the defaults: --full, and the table's 2x (5x with --full).
run bench vacuum --help
flat=$(tr -s ' \n' '  ' <"$out")
if [[ $flat == *" --full "* && $flat == *"(default 2x; 5x with --full)"* &&
  $flat == *"(default 128MiB)"* ]]; then ok; else
  bad "bench vacuum --help does not say --full, the table's 2x / 5x and the pool's 128MiB"
fi

tmp=$scratch/tmp
mkdir "$tmp"
json=$scratch/run.json
# A 4 MiB pool and a 16 MiB table: a ring sweep of two sizes, one cost-delay
# cell, and the auto throttle, all against a paced foreground. With --full,
# which changes only defaults: the --table and --cost-delay given win.
TMPDIR=$tmp "$HOTSET" bench vacuum --pool 4MiB --table 16MiB --full --baseline 0.2 --fg paced \
  --ring-size 8KiB,256KiB --cost-delay 1 --throttle off,auto --json >"$json" 2>"$err"
status=$?
expect_status 0 "bench vacuum --json"
if [[ -z $(ls -A "$tmp") ]]; then ok; else bad "bench vacuum left $(ls -A "$tmp") in \$TMPDIR"; fi
lines=$(wc -l <"$json")
if [[ $lines -eq 4 ]]; then ok; else bad "$lines JSON lines, want 4 (2 rings, 1 delay, 1 auto)"; fi
for n in 1 2 3 4; do
  for f in fg ring ring_buffers_end cost_delay_ms throttle vacuum_seconds pages_scanned \
    pages_dirtied pages_written ring_recycles wal_flushes_forced wal_syncs flushes_per_recycle \
    syncs_per_page_written fg_tps_baseline fg_tps_during fg_tps_loss fg_p99_us_baseline \
    fg_p99_us_during fg_hit_ratio_during fg_runq_us_per_op_baseline fg_runq_us_per_op_during \
    fg_service_p9999_us_baseline fg_service_p9999_us_during; do
    if [[ -n $(json_line_field "$json" $n $f) ]]; then ok; else bad "line $n has no $f"; fi
  done
  if [[ $(json_line_field "$json" $n removed) -gt 0 ]]; then ok; else bad "line $n removed nothing"; fi
  if [[ $(json_line_field "$json" $n pages_scanned) -gt 0 ]]; then ok; else bad "line $n scanned nothing"; fi
done
f() { json_line_field "$json" "$1" "$2"; }
for n in 1 2 3 4; do
  if [[ $(f $n full) == true && $(f $n table_spec) == 16MiB && $(f $n table_bytes) -eq 16777216 &&
    $(f $n pool_bytes) -eq 4194304 && $(f $n table_pages) -ge 2048 && $(f $n table_rows) -gt 0 ]]
  then ok; else
    bad "--full --table 16MiB: line $n says full $(f $n full), table $(f $n table_spec) =" \
      "$(f $n table_bytes) bytes, $(f $n table_pages) pages; want true, 16MiB = 16777216, >= 2048"
  fi
done
if [[ $(f 1 ring) == 8KiB && $(f 1 ring_buffers_end) -eq 1 ]]; then ok; else
  bad "cell 1: ring $(f 1 ring) of $(f 1 ring_buffers_end) buffers, want 8KiB of 1"
fi
if [[ $(f 2 ring_buffers_end) -eq 32 ]]; then ok; else bad "256KiB ring has $(f 2 ring_buffers_end) buffers"; fi
if [[ $(f 3 cost_delay_ms) == 1 && $(f 3 cost_sleeps) -gt 0 ]]; then ok; else
  bad "cost-delay cell: delay $(f 3 cost_delay_ms), $(f 3 cost_sleeps) sleeps"
fi
if [[ $(f 4 throttle) == auto && $(f 4 ring) == adaptive ]]; then ok; else
  bad "cell 4 is $(f 4 ring) under throttle $(f 4 throttle), want adaptive under auto"
fi
# --own-writes auto: only the throttled cell's ring writes its own pages.
if [[ $(f 1 own_writes) == false && $(f 3 own_writes) == false && $(f 4 own_writes) == true ]]
then ok; else
  bad "own_writes: cells 1, 3, 4 say $(f 1 own_writes), $(f 3 own_writes), $(f 4 own_writes)"
fi
for n in 1 2 3 4; do
  if [[ $(f $n cell) == vacuum && -n $(f $n other_pages_written) &&
    -n $(f $n checkpoint_pages_written) ]]; then ok; else
    bad "line $n: cell $(f $n cell), other_pages_written '$(f $n other_pages_written)'"
  fi
done
# --direct: the same lab over O_DIRECT files (one small cell), every line
# saying so; where the scratch file system refuses, one clear line instead.
djson=$scratch/direct.json
TMPDIR=$tmp "$HOTSET" bench vacuum --pool 4MiB --table 8MiB --baseline 0.2 --fg paced \
  --ring-size 256KiB --cost-delay 0 --throttle off --direct --fg-tick 0 --json >"$djson" 2>"$err"
status=$?
if [[ $status -ne 0 ]] && grep -q 'refuses\|moves blocks of' "$err"; then
  echo "SKIPPED: test_bench_vacuum: --direct: $(head -1 "$err")"
else
  expect_status 0 "bench vacuum --direct --json"
  if [[ $(wc -l <"$djson") -ge 1 && $(grep -c '"direct":true' "$djson") -eq $(wc -l <"$djson") ]] &&
    [[ $(json_line_field "$djson" 1 removed) -gt 0 ]]; then ok; else
    bad "bench vacuum --direct: lines without \"direct\":true, or nothing removed"
  fi
fi
if [[ $(grep -c '"direct":false' "$json") -eq 4 ]]; then ok; else bad "buffered cells do not say \"direct\":false"; fi
# Paced clients wake on a 1 ms tick by default; --fg-tick 0 is a sleep per
# lookup, and every line says which.
if [[ $(grep -c '"fg_tick_ms":1,' "$json") -eq 4 ]]; then ok; else bad "paced cells do not say fg_tick_ms 1"; fi
if [[ $status -ne 0 ]] || [[ $(grep -c '"fg_tick_ms":0,' "$djson") -eq $(wc -l <"$djson") ]]; then ok; else
  bad "--fg-tick 0: lines do not say fg_tick_ms 0"
fi

# A 1-buffer ring recycles its one buffer for nearly every page it dirties.
if [[ $(f 1 ring_recycles) -gt 0 && $(f 1 wal_flushes_forced) -gt 0 ]]; then ok; else
  bad "1-buffer ring: $(f 1 ring_recycles) recycles, $(f 1 wal_flushes_forced) forced flushes"
fi

# Calibration cells first: the clients alone, then beside the spinner; no
# vacuum in either (nothing removed), the spinner's CPU only in its own.
# With --full and no --table, the table is 5x the pool: 20 MiB here.
cal=$scratch/cal.json
TMPDIR=$tmp "$HOTSET" bench vacuum --pool 4MiB --full --baseline 0.2 --fg paced \
  --calibrate 0.3 --ring-size 256KiB --cost-delay 0 --throttle off --json >"$cal" 2>"$err"
status=$?
expect_status 0 "bench vacuum --calibrate"
g() { json_line_field "$cal" "$1" "$2"; }
if [[ $(g 3 full) == true && $(g 3 table_spec) == 5x && $(g 3 table_bytes) -eq 20971520 &&
  $(g 3 table_pages) -ge 2560 ]]; then ok; else
  bad "--full: table $(g 3 table_spec) = $(g 3 table_bytes) bytes, $(g 3 table_pages) pages;" \
    "want 5x = 20971520, >= 2560 pages"
fi
if [[ $(wc -l <"$cal") -eq 3 && $(g 1 cell) == alone && $(g 2 cell) == idle-spin &&
  $(g 3 cell) == vacuum ]]; then ok; else
  bad "calibration run: cells '$(g 1 cell)' '$(g 2 cell)' '$(g 3 cell)', want alone idle-spin vacuum"
fi
if [[ $(g 1 removed) -eq 0 && $(g 2 removed) -eq 0 && $(g 3 removed) -gt 0 ]]; then ok; else
  bad "removed: $(g 1 removed) $(g 2 removed) $(g 3 removed), want 0 0 >0"
fi
if [[ $(g 1 corunner_cpu_seconds) == 0.000 && $(g 3 corunner_cpu_seconds) == 0.000 &&
  -n $(g 2 corunner_cpu_seconds) ]]; then ok; else
  bad "corunner_cpu_seconds: $(g 1 corunner_cpu_seconds) $(g 2 corunner_cpu_seconds) $(g 3 corunner_cpu_seconds)"
fi
idle=$(g 1 cpu_idle_baseline)
if [[ ! -r /proc/stat && $idle == null ]] ||
  awk -v v="$idle" 'BEGIN { exit !(v != "null" && v >= 0 && v <= 1) }'; then ok; else
  bad "cpu_idle_baseline '$idle', want a share of 0..1"
fi

# The human table, its Pareto view and the target checks.
# No --table: the default, 2x the pool (8 MiB), which the header says.
TMPDIR=$tmp "$HOTSET" bench vacuum --pool 4MiB --baseline 0.2 --fg unpaced \
  --ring-size 256KiB --cost-delay 0,1 --throttle off --calibrate 0.2 >"$out" 2>"$err"
status=$?
expect_status 0 "bench vacuum (table)"
pages=$(sed -n 's/^table: [0-9]* rows, \([0-9]*\) pages (.*; --table 2x, the default; --full: 5x).*/\1/p' "$out")
if [[ -n $pages && $pages -ge 1024 && $pages -lt 2048 ]]; then ok; else
  bad "the default table: header '$(grep '^table: ' "$out")', want --table 2x, 1024 to 2047 pages"
fi
if grep -q '^Pareto view, unpaced foreground' "$out"; then ok; else bad "no Pareto view"; fi
if grep -q '^targets' "$out"; then ok; else bad "no targets section"; fi
if grep -q '^calibration: ' "$out" && grep -q '^unpaced idle-spin' "$out"; then ok; else
  bad "no calibration table"
fi
if grep -q '^table: .* rows' "$out"; then ok; else bad "no table line"; fi
if [[ ! -s $err ]]; then ok; else bad "bench vacuum (table) wrote to stderr, which is not a terminal: $(head -1 "$err")"; fi

cli_finish
