#!/usr/bin/env bash
#
# tests/test_cli.sh — the `hotset` command line as a user (or a script) sees it:
# exit statuses, the one-line error convention (the error and a hint to
# --help, never the whole usage), the one size grammar of every size flag and
# spec, and that bench pool and workload run end to end and print what they
# promise.
#
# Usage: test_cli.sh PATH/TO/hotset   (CTest passes $<TARGET_FILE:hotset>)
# Prints "N passed, N failed" last and exits non-zero if anything failed.

set -u

HOTSET=${1:?usage: test_cli.sh PATH/TO/hotset}
source "$(dirname "$0")/../support/cli_lib.sh"
cli_setup cli

# ---- help and dispatch ----

run --help
expect_status 0 "hotset --help"
if grep -q '^usage: hotset' "$out" && grep -q '^  bench .*pool' "$out" && grep -q 'workload' "$out"; then
  ok
else bad "hotset --help does not list the subcommands on stdout"; fi

run help
expect_status 0 "hotset help"

# Every subcommand --help lists answers its own --help, and every lab
# the bench line names is one `hotset bench` runs.
run --help
for sc in $(sed -n 's/^  \([a-z-]*\)  .*/\1/p' "$out"); do
  "$HOTSET" "$sc" --help >/dev/null 2>&1
  if [[ $? -eq 0 ]]; then ok; else bad "hotset --help lists $sc, whose --help fails"; fi
done
labs=$(sed -n 's/^  bench  *the labs: //p' "$out" | sed 's/ ([^)]*)//g; s/,//g')
for lab in $labs; do
  "$HOTSET" bench "$lab" --help >/dev/null 2>&1
  if [[ $? -eq 0 ]]; then ok; else bad "hotset --help names bench $lab, which bench does not run"; fi
done
if [[ $(echo $labs | wc -w) -eq 8 ]]; then ok; else bad "hotset --help names $(echo $labs | wc -w) labs of bench's 8: $labs"; fi
run --version
expect_status 0 "hotset --version"
if grep -qE '^hotset [0-9]+\.[0-9]+\.[0-9]+$' "$out"; then ok; else bad "hotset --version: $(cat "$out")"; fi

run bench --help
expect_status 0 "hotset bench --help"
if grep -q '^  pool ' "$out" && grep -q '^  readtest ' "$out"; then ok; else
  bad "hotset bench --help does not list pool and readtest"
fi

# The labs' 0.1 names went in 0.3: each is refused with its new name.
run --help
if grep -q 'pool-bench\|aliases' "$out"; then bad "hotset --help still lists the 0.1 aliases"; else ok; fi
run pool-bench --threads 2
expect_usage_error 'was renamed "hotset bench pool"' "pool-bench (renamed in 0.2, gone in 0.3)"
run help readtest
expect_usage_error 'was renamed "hotset bench readtest"' "hotset help readtest (renamed)"

run bench pool --help
expect_status 0 "hotset bench pool --help"
if grep -q '^usage: hotset bench pool' "$out"; then ok; else bad "bench pool --help: no usage on stdout"; fi

run workload --help
expect_status 0 "hotset workload --help"
# The usage is generated from the flag table: every flag, its default.
if grep -q '^  --threads N  *worker threads (default 4)$' "$out" &&
  grep -q '^  --pool SIZE  *pool size (default 4MiB)$' "$out" &&
  grep -q '^  --help  *show this help$' "$out"; then ok; else
  bad "workload --help: flags without their defaults"
fi

# `hotset demo` was renamed (make demo runs bench scan): no alias.
run demo
expect_usage_error 'unknown subcommand "demo"' "hotset demo (renamed workload)"

run
expect_status 2 "hotset without a subcommand"

run frobnicate
expect_usage_error frobnicate "unknown subcommand"
if [[ $(sed -n 2p "$err") == "run 'hotset --help' for the subcommands" ]]; then ok; else
  bad "unknown subcommand: the hint does not point at hotset --help"
fi

# ---- usage errors of the subcommands ----

run bench pool --bogus-flag 3
expect_usage_error --bogus-flag "unknown flag"

run workload --bogus-flag=3
expect_usage_error --bogus-flag "unknown flag with ="
if [[ $(sed -n 2p "$err") == "run 'hotset workload --help' for the flags" ]]; then ok; else
  bad "workload --bogus-flag: the hint does not name the subcommand's --help"
fi

run bench pool --threads x
expect_usage_error --threads "bench pool --threads x"

run bench pool --threads 1,,2
expect_usage_error --threads "bench pool --threads 1,,2"

run bench pool --threads 0
expect_usage_error --threads "bench pool --threads 0"

run bench pool --pool 12XB
expect_usage_error --pool "bench pool --pool 12XB"

run bench pool --seconds abc
expect_usage_error --seconds "bench pool --seconds abc"

run bench pool --pages -5
expect_usage_error --pages "bench pool --pages -5"

run bench pool --pages
expect_usage_error --pages "bench pool --pages without a value"

run bench pool --page-size 3000
expect_usage_error --page-size "bench pool --page-size 3000"

run bench pool stray
expect_usage_error stray "bench pool with a positional argument"

run workload --wal disk
expect_usage_error "--wal" "workload --wal disk"
run workload --threads 2x
expect_usage_error --threads "workload --threads 2x"

run workload --pool 8KiB
expect_usage_error --pool "workload with a pool smaller than its threads"
run workload --bgwriter-delay 5
expect_usage_error --bgwriter-delay "workload --bgwriter-delay below the background writer's 10 ms"
run workload --bgwriter-delay 10001
expect_usage_error --bgwriter-delay "workload --bgwriter-delay above 10 s"

# ---- one size grammar: every size flag and spec alike ----

# Each flag below takes 64 KiB. Accepted: bytes, B, and K, KB, KiB in any
# case, every one 1024 bytes; refused as no size: a space, a fraction, a
# sign, an unknown unit. A flag that parsed lets --help end the run
# (status 0).
size_flags=("bench pool --pool" "bench pool --page-size" "workload --pool" "workload --page-size"
  "bench scan --pool" "bench scan --hot" "bench scan --big" "bench scan --page-size"
  "bench scan --io-combine" "gen-trace --obj-size")
for f in "${size_flags[@]}"; do
  flag=${f##* }
  for v in 65536 65536B 65536b 64KiB 64kib 64KIB 64KB 64kb 64K 64k; do
    # shellcheck disable=SC2086
    run ${f% *} "$flag" "$v" --help
    expect_status 0 "$f $v"
  done
  for v in "64 KiB" 0.5KiB -64KiB 64XB KiB 64KIBB; do
    # shellcheck disable=SC2086
    run ${f% *} "$flag" "$v" --help
    expect_usage_error "$flag: \"$v\" is not a byte size" "$f \"$v\""
  done
done
# The value, not only the spelling: each unit is a power of 1024 however it
# is written (sim --size in bytes reports the size it ran with).
size_trace=$scratch/size.txt
printf '1\n2\n3\n' >"$size_trace"
for pair in 1024:1024 1k:1024 1KB:1024 1KiB:1024 3m:3145728 3MB:3145728 2G:2147483648 \
  2gb:2147483648 2GiB:2147483648 1T:1099511627776 1tb:1099511627776; do
  run sim "$size_trace" --policy lru --size "${pair%%:*}" --json
  if [[ $(json_line_field "$out" 1 size) == "${pair#*:}" ]]; then ok; else
    bad "sim --size ${pair%%:*}: size $(json_line_field "$out" 1 size), want ${pair#*:}"
  fi
  # cachesim's form reads its size with the same grammar.
  run sim "$size_trace" txt lru "${pair%%:*}" --json
  if [[ $(json_line_field "$out" 1 size) == "${pair#*:}" ]]; then ok; else
    bad "sim (cachesim's form) ${pair%%:*}: size $(json_line_field "$out" 1 size), want ${pair#*:}"
  fi
done
run sim "$size_trace" txt lru 1XB
expect_usage_error '"1XB" is not a byte size' "sim (cachesim's form) 1XB"
# The rule is stated in hotset --help.
run --help
if grep -q "1GB is 2^30 bytes" "$out" && grep -q "64KiB = 64KB = 64k = 65536" "$out"; then ok; else
  bad "hotset --help does not state the size grammar"
fi
# The ring's size, a spec parsed by the library (hs_strategy_options_parse): the
# same grammar. Accepted, the run goes on to refuse the tiny --pool.
for v in 65536 65536B 64KiB 64kib 64KIB 64KB 64kb 64K 64k; do
  run bench scan --ring-size "fixed:$v" --pool 64KiB
  expect_usage_error "--pool: 64 KiB holds 8 pages" "bench scan --ring-size fixed:$v"
done
for v in "64 KiB" 0.5KiB -64KiB 64XB KiB; do
  run bench scan --ring-size "fixed:$v" --pool 64KiB
  expect_usage_error "--ring-size: ring \"fixed:$v\": \"$v\" is not a byte size" \
    "bench scan --ring-size \"fixed:$v\""
done

# ---- bench pool end to end ----

# --repeat 3: each line gives the median of three runs with their min and
# max, and a policy's ratio to the baseline runs paired with its own.
# Both translations by default, each its own variant: 16 lines.
run bench pool --json --seconds 0.1 --repeat 3 --pages 64 --pool 256KiB --threads 1,2
expect_status 0 "bench pool --json --repeat 3"
lines=$(wc -l <"$out")
if [[ $lines -eq 16 ]]; then ok; else bad "bench pool --json printed $lines lines, want 16"; fi
if command -v python3 >/dev/null 2>&1; then
  if python3 - "$out" <<'EOF'; then ok; else bad "bench pool --json output fails the JSON checks"; fi
import json, sys
seen = set()
for line in open(sys.argv[1]):
    o = json.loads(line)
    for k in ("variant", "workload", "threads", "ops_per_sec", "ns_per_op", "ops_per_sec_min",
              "ops_per_sec_max", "runs"):
        assert k in o, f"missing {k}: {line}"
    assert o["ops_per_sec"] > 0 and o["ns_per_op"] > 0, line
    assert o["runs"] == 3, line
    assert o["ops_per_sec_min"] <= o["ops_per_sec"] <= o["ops_per_sec_max"], line
    if o["variant"] == "global-mutex-lru":
        assert o["paired_with"] in ("clock-sweep hash", "clock-sweep direct"), line
        seen.add((o["paired_with"], "base", o["workload"], o["threads"]))
        continue
    assert 0 < o["vs_baseline_min"] <= o["vs_baseline"] <= o["vs_baseline_max"], line
    assert o["variant"] == "clock-sweep " + o["translation"], line
    if o["workload"] == "hit":
        # What a hit may touch, and a dependent load over that much memory.
        assert o["metadata_bytes"] > 0 and o["chase_ns"] > 0, line
    else:
        assert "chase_ns" not in o, line
    seen.add((o["variant"], "pool", o["workload"], o["threads"]))
want = {("clock-sweep " + x, k, w, t) for x in ("hash", "direct") for k in ("pool", "base")
        for w in ("hit", "mixed") for t in (1, 2)}
assert seen == want, f"runs {sorted(seen)}, want {sorted(want)}"
EOF
else
  # Without python: every line is one object with the fields, min <= median <= max.
  n=$(grep -cE '^\{"variant":"[^"]+","workload":"(hit|mixed)","threads":[0-9]+,"ops_per_sec":[0-9.]+,"ns_per_op":[0-9.]+,"ops_per_sec_min":[0-9.]+,"ops_per_sec_max":[0-9.]+,"runs":3,.*\}$' "$out")
  if [[ $n -eq 16 ]]; then ok; else bad "bench pool --json: $n of 16 lines have the fields"; fi
  if awk '{ m = $0; sub(/.*"ops_per_sec":/, "", m); sub(/,.*/, "", m)
            lo = $0; sub(/.*"ops_per_sec_min":/, "", lo); sub(/,.*/, "", lo)
            hi = $0; sub(/.*"ops_per_sec_max":/, "", hi); sub(/,.*/, "", hi)
            if (!(lo + 0 <= m + 0 && m + 0 <= hi + 0)) exit 1 }' "$out"; then ok; else
    bad "bench pool --json: a line's median is outside its min-max"
  fi
fi

run bench pool --seconds 0.1 --repeat 2 --pages 64 --pool 256KiB --threads 1 --translation direct
expect_status 0 "bench pool table"
if grep -q 'hit bytes.*chase ns' "$out" && grep -qE '^clock-sweep +hit ' "$out"; then ok; else
  bad "bench pool table (one translation): no hit bytes and chase columns, or a variant suffix"
fi
if grep -q 'global-mutex-lru' "$out" && grep -q 'Mops/s.*(min-max).*vs base' "$out"; then ok; else
  bad "bench pool table lacks the baseline rows or the header"
fi
if grep -q 'mixed: the baseline' "$out" && grep -q 'content lock' "$out"; then ok; else
  bad "bench pool table does not qualify the mixed comparison"
fi

run bench pool --repeat 0
expect_usage_error --repeat "bench pool --repeat 0"

run bench pool --translation btree
expect_usage_error --translation "bench pool --translation btree"
run bench pool --translation hash,hash
expect_usage_error "given twice" "bench pool --translation hash,hash"
run bench pool --translation ,
expect_usage_error --translation "bench pool --translation ,"

# Every bench's list flags split the same way (args_split_list): an empty
# item is refused, never skipped; a repeated choice, too many items or one
# too long are refused by name.
run bench pool --translation hash,
expect_usage_error '--translation: "hash,": an item is empty' "bench pool --translation hash,"
run bench vacuum --ring-size 256KiB,,adaptive
expect_usage_error '--ring-size: "256KiB,,adaptive": an item is empty' "bench vacuum --ring-size 256KiB,,adaptive"
run bench vacuum --fg paced,paced,paced
expect_usage_error '--fg: "paced,paced,paced": more than 2 items' "bench vacuum --fg x3"
run bench vacuum --ring-size "fixed:$(printf '1%.0s' {1..60})"
expect_usage_error 'longer than 47 characters' "bench vacuum --ring-size (60 digits)"
run bench scan --ring ,on
expect_usage_error '--ring: ",on": an item is empty' "bench scan --ring ,on"
run bench sqlite --scan-detect on,on
expect_usage_error '--scan-detect: "on" is given twice' "bench sqlite --scan-detect on,on"
run bench sqlite --scan-detect on,sometimes
expect_usage_error '--scan-detect: "sometimes": want on or off' "bench sqlite --scan-detect on,sometimes"

# An error at run time: exit 1 and one line naming what failed.
run bench pool --seconds 0.1 --pages 64 --pool 256KiB --threads 1 --dir /proc/hotset-no-such-dir
expect_status 1 "bench pool with an unusable --dir"
if [[ $(wc -l <"$err") -eq 1 ]] && grep -q '^hotset bench pool: ' "$err"; then ok; else
  bad "bench pool with an unusable --dir: want one error line"
fi

# ---- workload end to end ----

run workload --seconds 0.5
expect_status 0 "workload --seconds 0.5"
if grep -qE '^context +hits' "$out" && grep -qE '^total ' "$out"; then ok; else
  bad "workload did not print the statistics table"
fi
if grep -q 'ops/s' "$out"; then ok; else bad "workload did not print ops/s"; fi

run workload --seconds 0.3 --threads 2 --pages 512 --pool 1MiB --json
expect_status 0 "workload --json"
if command -v python3 >/dev/null 2>&1; then
  if python3 -c '
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 1, lines
o = json.loads(lines[0])
assert o["ops_per_sec"] > 0 and o["updates"] == o["updates_on_disk"], o
assert "total" in o["stats"], o
for k in ("policy", "threads", "seconds", "ops", "reads", "pool_pages", "pages", "page_size",
          "wal_inserted_lsn", "wal_flushed_lsn", "wal_flushes", "writes_ahead_of_wal", "dir"):
    assert k in o, k
assert o["policy"] == "clock-sweep" and o["dir"] is None and o["writes_ahead_of_wal"] == 0, o
# The real log by default: a record per update (and the checkpoint record of
# closing the pool), durable to its end once the pool is closed, but for the
# sync point (40 bytes) that the flush of the shutdown checkpoint may leave,
# which closing the log flushes.
assert o["wal"] == "log" and o["wal_records"] == o["updates"] + 1 and o["updates"] > 0, o
assert o["wal_flushed_lsn"] > 0 and o["wal_syncs"] >= 1, o
assert o["wal_inserted_lsn"] - o["wal_flushed_lsn"] in (0, 40), o
' "$out"; then ok; else bad "workload --json output fails the JSON checks"; fi
  # --direct: the same run over O_DIRECT files, every update found on disk
  # by the check after close (or, where the file system refuses, one line).
  run workload --seconds 0.2 --threads 2 --pages 512 --pool 1MiB --direct --json
  if [[ $status -ne 0 ]] && grep -q 'refuses\|moves blocks of' "$err"; then
    echo "SKIPPED: test_cli: workload --direct: $(head -1 "$err")"
  elif python3 -c '
import json, sys
o = json.loads(open(sys.argv[1]).read())
assert o["direct"] is True and o["updates"] > 0 and o["updates"] == o["updates_on_disk"], o
assert o["writes_ahead_of_wal"] == 0, o
' "$out"; then ok; else bad "workload --direct fails the JSON checks"; fi
  run workload --seconds 0.2 --threads 2 --pages 512 --pool 1MiB --wal counter --json
  if python3 -c '
import json, sys
o = json.loads(open(sys.argv[1]).read())
assert o["wal"] == "counter" and o["wal_syncs"] == 0 and o["updates"] == o["updates_on_disk"], o
' "$out"; then ok; else bad "workload --wal counter fails the JSON checks"; fi
  # The background writer beside the workers: every update still on disk;
  # without it, no round and nothing written by it.
  run workload --seconds 0.3 --threads 2 --pages 512 --pool 512KiB --bgwriter-delay 10 --json
  if python3 -c '
import json, sys
o = json.loads(open(sys.argv[1]).read())
assert o["bgwriter_delay_ms"] == 10 and o["updates"] == o["updates_on_disk"], o
assert o["buffers_alloc"] > 0 and o["buffers_backend"] <= o["buffers_alloc"], o
assert o["maxwritten_clean"] <= o["bgwriter_rounds"], o
' "$out"; then ok; else bad "workload --bgwriter-delay 10 fails the JSON checks"; fi
  run workload --seconds 0.1 --threads 2 --pages 512 --pool 512KiB --json
  if python3 -c '
import json, sys
o = json.loads(open(sys.argv[1]).read())
assert o["bgwriter_delay_ms"] == 0 and o["bgwriter_rounds"] == 0 and o["buffers_clean"] == 0, o
' "$out"; then ok; else bad "workload without --bgwriter-delay ran a background writer"; fi
else
  echo "SKIPPED: test_cli: workload --json checks: python3 is not installed"
fi

# --keep leaves the data directory and says where.
run workload --seconds 0.1 --pages 256 --pool 512KiB --keep
expect_status 0 "workload --keep"
kept=$(sed -n 's/^data directory kept: //p' "$out")
if [[ -n $kept && -f $kept/16384 ]]; then ok; else bad "workload --keep: no kept data directory"; fi
if [[ -n $kept ]]; then rm -rf "$(dirname "$kept")"; fi

# ---- sizes that cannot fit are refused at once, leaving nothing behind ----

# The runs below make their temporary directories under $tmp, which must be
# empty after each. A size the disk cannot hold: 1 TiB, or 30 TiB on a file
# system with 1 TiB free. `timeout` only keeps a broken build from filling
# the disk; a refusal takes milliseconds.
tmp=$scratch/tmp
mkdir "$tmp"
huge=1TiB
if (($(df -Pk "$tmp" | awk 'NR == 2 { print $4 }') >= 1024 ** 3)); then huge=30TiB; fi

expect_nothing_left() { # description
  local left
  left=$(ls -A "$tmp")
  if [[ -z $left ]]; then ok; else
    bad "$1: left $left in TMPDIR"
    rm -rf "${tmp:?}"/*
  fi
}
refused() { # needle description ARGS...
  local needle=$1 what=$2
  shift 2
  TMPDIR=$tmp timeout 5 "$HOTSET" "$@" >"$out" 2>"$err"
  status=$?
  expect_one_line_error "$needle" "$what"
  expect_nothing_left "$what"
}

refused "free" "bench scan --hot $huge" bench scan --hot "$huge"
if grep -q "^hotset bench scan: needs .* in $tmp for its relations, .* free$" "$err"; then ok; else
  bad "bench scan --hot $huge: the message does not say what is needed where"
fi
refused "physical memory" "bench scan --pool 1TiB" bench scan --pool 1TiB
refused "free" "bench pool --pages 4294967294" bench pool --pages 4294967294
refused "physical memory" "bench pool --pool 1TiB" bench pool --pool 1TiB
refused "free" "workload --pages 4294967294" workload --pages 4294967294
refused "physical memory" "workload --pool 1TiB" workload --pool 1TiB
# --dir: the free space of the file system it would be made in.
refused "free" "bench pool --dir, --pages 4294967294" bench pool --pages 4294967294 \
  --dir "$tmp/not-yet/data"

# --plot into a directory that is not there: refused at once, in one line,
# before anything runs (nothing on stdout) and leaving nothing behind.
printf '1\n2\n1\n' >"$scratch/plot.txt"
if command -v gnuplot >/dev/null 2>&1; then
  for c in "bench scan" "bench readtest --size 16KiB --iterations 1" "bench vacuum" \
    "sim $scratch/plot.txt --policy lru --size 10,20"; do
    # shellcheck disable=SC2086
    refused "--plot: cannot write $scratch/missing/dir/x.png: No such file or directory" \
      "$c --plot missing/dir/x.png" $c --plot "$scratch/missing/dir/x.png"
    if [[ ! -s $out ]]; then ok; else bad "$c --plot missing/dir/x.png: ran before refusing"; fi
  done
  run bench scan --plot "$scratch/x.jpg"
  expect_usage_error "must end in .png or .svg" "bench scan --plot x.jpg"
else
  echo "SKIPPED: test_cli: --plot's early check: gnuplot is not installed (that error comes first)"
fi

# ---- SIGTERM / SIGINT: the workload stops, removes its directory, dies by it ----

# The workload runs in the background (with job control, so that SIGINT is not
# ignored as it is for a script's background jobs); once its temporary
# directory exists (polled, at most 10 s) it gets the signal. It must end by
# that signal (status 128 + N) and leave nothing in TMPDIR.
interrupt_workload() { # SIGNAL-NAME NUMBER
  local pid i
  set -m
  TMPDIR=$tmp "$HOTSET" workload --seconds 30 --pages 2048 >"$out" 2>"$err" &
  pid=$!
  set +m
  for ((i = 0; i < 200; i++)); do
    compgen -G "$tmp/hotset-workload-*" >/dev/null && break
    sleep 0.05
  done
  if ((i < 200)); then ok; else bad "workload made no temporary directory in 10 s"; fi
  kill -"$1" "$pid"
  wait "$pid"
  status=$?
  expect_status $((128 + $2)) "workload killed by SIG$1"
  if grep -q "^hotset workload: interrupted by SIG$1$" "$err"; then ok; else
    bad "workload killed by SIG$1: no line saying so"
  fi
  expect_nothing_left "workload killed by SIG$1"
}
interrupt_workload TERM 15
interrupt_workload INT 2

# A --dir too long to be a path is refused, never cut to another directory.
long_dir=/tmp/$(printf 'x%.0s' $(seq 1 4000))
for cmd in workload "bench pool" "bench scan"; do
  # shellcheck disable=SC2086
  run $cmd --dir "$long_dir"
  expect_usage_error "--dir: a path of 4005 characters" "$cmd --dir of 4005 characters"
done

# ---- the sample traces: one rule (cli_lib.sh's traces_dir, tests/support/traces_dir.h) ----
repo=$scratch/rule/repo
mkdir -p "$repo" "$scratch/rule/traces" "$scratch/own-traces"
(unset HOTSET_TRACES; traces_dir "$repo"; [[ $TRACES == "$repo/../traces" ]]) && ok ||
  bad "traces_dir: REPO/../traces is not taken when REPO/../shared/traces is missing"
mkdir -p "$scratch/rule/shared/traces"
(unset HOTSET_TRACES; traces_dir "$repo"; [[ $TRACES == "$repo/../shared/traces" ]]) && ok ||
  bad "traces_dir: REPO/../shared/traces does not come first"
(HOTSET_TRACES=$scratch/own-traces; traces_dir "$repo"; [[ $TRACES == "$scratch/own-traces" ]]) && ok ||
  bad "traces_dir: \$HOTSET_TRACES does not come first"
(HOTSET_TRACES=$scratch/none; traces_dir "$repo"; [[ -z $TRACES && $TRACES_LOOKED == "$scratch/none" ]]) && ok ||
  bad "traces_dir: a missing \$HOTSET_TRACES is not the only place looked in"
rm -r "$scratch/rule/shared" "$scratch/rule/traces"
(unset HOTSET_TRACES; traces_dir "$repo"; [[ -z $TRACES && $TRACES_LOOKED == "$repo/../shared/traces, $repo/../traces" ]]) && ok ||
  bad "traces_dir: with no traces, TRACES_LOOKED does not list both places"

# ---- an unknown policy is answered with the policies the command runs ----
printf '1\n2\n' >"$scratch/policy.txt"
for c in "bench pool" workload "bench scan" "bench vacuum" "bench sqlite" \
  "replay $scratch/policy.txt --pool 1MiB"; do
  # shellcheck disable=SC2086
  run $c --policy nosuch
  expect_usage_error '--policy: "nosuch": unknown replacement policy "nosuch" (the pool runs lru, ' "$c --policy nosuch"
  if grep -q "clock-sweep" "$err" && ! grep -q "belady\|fixedset" "$err"; then ok; else
    bad "$c --policy nosuch lists a policy the pool does not run: $(head -1 "$err")"
  fi
done
run sim "$scratch/policy.txt" --size 1 --policy nosuch
expect_usage_error '(the simulator runs lru, ' "sim --policy nosuch"
if grep -q "belady, fixedset" "$err"; then ok; else bad "sim --policy nosuch does not list belady and fixedset"; fi
run workload --policy belady
expect_usage_error "runs only in the simulator" "workload --policy belady"

# ---- a run that works writes nothing to stderr ----
# (Scripts and CI read anything on stderr as trouble; notes such as how a
# trace's format was guessed belong under --verbose.)
quiet_trace=$scratch/quiet.oracleGeneral.bin
run gen-trace -o "$quiet_trace" --zipf 0.8 --objects 100 --requests 2000 --seed 1
expect_status 0 "gen-trace"
if [[ ! -s $err ]] && grep -q "^wrote 2000 requests" "$out"; then ok; else bad "gen-trace: stderr not empty, or no summary on stdout: $(head -1 "$err")"; fi
for c in "sim $quiet_trace --policy lru,arc --size 50 --ignore-size" \
  "sim $quiet_trace oracleGeneral lru 50 --ignore-obj-size 1" \
  "sim $quiet_trace --policy lru --mrc 4 --json" \
  "trace-stats $quiet_trace" \
  "replay $quiet_trace --pool 64KiB --page-size 8KiB --dir $scratch/quiet-replay" \
  "bench pool --seconds 0.05 --repeat 1 --pages 64 --pool 256KiB --threads 1"; do
  # shellcheck disable=SC2086
  run $c
  expect_status 0 "$c"
  if [[ ! -s $err ]]; then ok; else bad "$c wrote to stderr on success: $(head -1 "$err")"; fi
done
run sim "$quiet_trace" --policy lru --size 50 --ignore-size --verbose
if grep -q "from the name" "$err"; then ok; else bad "sim --verbose does not say how the format was chosen"; fi

# ---- --dir creates its missing parents, in every command that makes one ----
for c in "workload --seconds 0.1 --pages 64 --pool 256KiB --threads 1" \
  "bench pool --seconds 0.05 --repeat 1 --pages 64 --pool 256KiB --threads 1" \
  "replay $quiet_trace --pool 64KiB --page-size 8KiB" \
  "bench wal --seconds 0.1 --clients 1 --mode group"; do
  nested=$scratch/parents-$RANDOM/a/b
  # shellcheck disable=SC2086
  run $c --dir "$nested"
  expect_status 0 "$c --dir with missing parents"
  if [[ -d $nested ]]; then ok; else bad "$c --dir: $nested was not created"; fi
done
# Where a parent cannot be made: one line naming the path.
run workload --seconds 0.1 --pages 64 --pool 256KiB --threads 1 --dir "$quiet_trace/a/b"
expect_one_line_error "$quiet_trace" "workload --dir under a file"

# ---- --flag=value wherever --flag value is taken ----
# Every flag whose --help shows a default, given it as --flag=DEFAULT, in
# every command and lab (a default in words is skipped: it is no value).
for c in workload sim gen-trace trace-stats replay crash-test verify reset-log relations reindex \
  "bench pool" "bench readtest" "bench scan" "bench wal" "bench wal-sync" "bench recovery" \
  "bench vacuum" "bench sqlite"; do
  # shellcheck disable=SC2086
  "$HOTSET" $c --help 2>/dev/null | sed -nE 's/^  --([a-z0-9-]+) [A-Z][A-Za-z|_.]* .*\(default ([^) /]+)\)$/\1 \2/p' >"$scratch/defaults"
  while read -r f d; do
    # shellcheck disable=SC2086
    run $c "--$f=$d" --help
    expect_status 0 "$c --$f=$d"
  done <"$scratch/defaults"
done
# cachesim's form has flags of its own: the same in both spellings.
eq_trace=$scratch/eq.csv
printf '1,1,100\n2,2,100\n3,1,100\n4,3,100\n5,1,100\n' >"$eq_trace"
run sim "$eq_trace" csv lru 2 -t "time-col=1, obj-id-col=2, obj-size-col=3" --ignore-obj-size 1 --num-thread 1 --json
expect_status 0 "cachesim form, --flag value"
spaced=$(cat "$out")
run sim "$eq_trace" csv lru 2 "--trace-type-params=time-col=1, obj-id-col=2, obj-size-col=3" \
  --ignore-obj-size=1 --num-thread=1 --max-requests=5 --json
expect_status 0 "cachesim form, --flag=value"
# Object mode (--ignore-obj-size 1 taken) and the same misses.
if [[ $spaced == *'"size_unit":"objects"'*'"misses":3,'* ]] &&
  grep -q '"size_unit":"objects".*"misses":3,' "$out"; then ok; else
  bad "cachesim form: --flag=value ran otherwise than --flag value: $(cat "$out")"
fi
run sim "$eq_trace" csv lru 2 -t "time-col=1, obj-id-col=2, obj-size-col=3" --ignore-obj-size=2
expect_usage_error "--ignore-obj-size" "cachesim form, --ignore-obj-size=2"

# ---- one grammar: --trace or the one argument, --no-X for every boolean ----

gtrace="$scratch/grammar.txt"
printf '1\n2\n1\n3\n1\n2\n' >"$gtrace"
run trace-stats --trace "$gtrace" --json
expect_status 0 "trace-stats --trace FILE"
if grep -q '"requests":6' "$out"; then ok; else bad "trace-stats --trace: $(cat "$out")"; fi
run trace-stats "$gtrace" --json
if grep -q '"requests":6' "$out"; then ok; else bad "trace-stats FILE: $(cat "$out")"; fi
run trace-stats "$gtrace" --trace "$gtrace"
expect_usage_error "given twice" "trace-stats with the trace twice"
run trace-stats
expect_usage_error "--trace FILE" "trace-stats without a trace"
run sim "$gtrace" --policy lru --size 2 --json
expect_status 0 "sim FILE --policy --size"
if grep -q '"misses":4' "$out"; then ok; else bad "sim FILE: $(cat "$out")"; fi
run sim "$gtrace" --trace "$gtrace" --policy lru --size 2
expect_usage_error "given twice" "sim with the trace twice"
run replay "$gtrace" --pool 64KiB --page-size 8KiB --json --dir "$scratch/grammar-replay"
expect_status 0 "replay FILE --pool"
if grep -q '"misses":3' "$out"; then ok; else bad "replay FILE: $(cat "$out")"; fi
# --no-json undoes --json; --json=false too; --no-json=x is refused.
run sim "$gtrace" --policy lru --size 2 --json --no-json
if grep -q '^{' "$out"; then bad "sim --json --no-json still printed JSON"; else ok; fi
run sim "$gtrace" --policy lru --size 2 --json=false
if grep -q '^{' "$out"; then bad "sim --json=false still printed JSON"; else ok; fi
run sim "$gtrace" --policy lru --size 2 --no-json=true
expect_usage_error "takes no value" "--no-json=true"
run sim "$gtrace" --policy lru --size 2 --no-bogus
expect_usage_error "unknown flag --no-bogus" "--no- of no flag"
# A flag named no-X is undone by --X (bench recovery's --no-checksums).
run bench recovery --help
if grep -q -- '--checksums turns --no-checksums off' "$out"; then ok; else
  bad "bench recovery --help does not say --checksums undoes --no-checksums"
fi
# Every subcommand whose flags include a boolean says so in its help.
for sc in workload sim replay trace-stats "bench pool" crash-test; do
  "$HOTSET" $sc --help >"$out" 2>&1
  if grep -q 'A flag without a value has an opposite: --no-' "$out"; then ok; else
    bad "$sc --help does not mention the --no- forms"
  fi
done
# One placeholder per kind: a seed is N everywhere, a trace FILE.
for sc in gen-trace crash-test workload sim replay trace-stats; do
  "$HOTSET" "$sc" --help >"$out" 2>&1
  if grep -qE -- '--seed [^N]|--trace [^F]' "$out"; then bad "$sc --help: $(grep -E -- '--seed [^N]|--trace [^F]' "$out" | head -1)"; else ok; fi
done

# ---- progress lines: on a terminal a line a second, never into a pipe ----
if command -v script >/dev/null 2>&1; then
  script -qc "'$HOTSET' workload --seconds 2 --dir '$scratch/prog-wl'" /dev/null >"$out" 2>&1
  if tr '\r' '\n' <"$out" | grep -qa '^workload: 1 of 2 s, [0-9]* reads, hit% '; then ok; else
    bad "workload on a terminal printed no progress line: $(tr '\r' '\n' <"$out" | head -3)"
  fi
  "$HOTSET" gen-trace -o "$scratch/prog.bin" --zipf 0.9 --objects 100000 --requests 1500000 >/dev/null 2>&1
  script -qc "'$HOTSET' replay '$scratch/prog.bin' --pool 64KiB --page-size 8KiB --dir '$scratch/prog-rp'" /dev/null >"$out" 2>&1
  if tr '\r' '\n' <"$out" | grep -qaE '^replay clock-sweep: [0-9]+% \([0-9.]+ M of 1\.5 M requests'; then ok; else
    bad "replay on a terminal printed no progress line: $(tr '\r' '\n' <"$out" | tail -3)"
  fi
else
  echo "skipped: the progress-line checks need script(1) (util-linux)"
fi
"$HOTSET" workload --seconds 1 --dir "$scratch/prog-wl2" >/dev/null 2>"$err"
if [[ ! -s $err ]]; then ok; else bad "workload wrote to stderr without a terminal: $(head -2 "$err")"; fi

cli_finish
