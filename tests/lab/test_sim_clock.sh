#!/usr/bin/env bash
#
# tests/test_sim_clock.sh — one duration means one length of time.
#
# Durations in policy parameters (midpoint's time, lru-k's crp) are
# milliseconds in the pool and in the simulator alike: the simulator reads
# them off the trace's own time stamps, in the unit its format counts
# (oraclegeneral seconds, vscsi microseconds, csv --time-unit), or off
# --ms-per-request for a trace without time stamps, and refuses a nonzero
# duration when it has no clock. The same requests written with time stamps
# in seconds, milliseconds or microseconds must give the same misses; time
# stamps that go backwards count as the one before; and the clock must
# really be read (a trace whose requests all share one second never
# promotes a page that midpoint:time=1000 would otherwise promote).
#
# Usage: test_sim_clock.sh PATH/TO/hotset
# Prints "N passed, N failed" last and exits non-zero if anything failed.

set -u

HOTSET=${1:?usage: test_sim_clock.sh PATH/TO/hotset}
source "$(dirname "$0")/../support/cli_lib.sh"
cli_setup sim-clock

misses() { json_line_field "$out" 1 misses; } # of the first JSON line

# 20000 requests over 300 objects (a skewed, deterministic mix), 5 ms
# apart, written as csv with time stamps in s, ms and us, and as txt.
python3 - "$scratch" <<'PY'
import sys
d = sys.argv[1]
ids, x = [], 12345
for i in range(20000):
    x = (x * 1103515245 + 12345) % (1 << 31)
    r = x % 1000
    ids.append(r % 40 if r < 600 else r % 300)  # a hot 40 and a cold tail
with open(f"{d}/ms.csv", "w") as f:
    f.write("time,obj_id\n")
    for i, o in enumerate(ids):
        f.write(f"{i * 5},{o}\n")
with open(f"{d}/us.csv", "w") as f:
    f.write("time,obj_id\n")
    for i, o in enumerate(ids):
        f.write(f"{i * 5000},{o}\n")
with open(f"{d}/s.csv", "w") as f:  # whole seconds: every 200 requests
    f.write("time,obj_id\n")
    for i, o in enumerate(ids):
        f.write(f"{i // 200},{o}\n")
with open(f"{d}/s1000.csv", "w") as f:  # the same seconds, in ms
    f.write("time,obj_id\n")
    for i, o in enumerate(ids):
        f.write(f"{(i // 200) * 1000},{o}\n")
with open(f"{d}/back.csv", "w") as f:  # every 7th time stamp goes back
    f.write("time,obj_id\n")
    for i, o in enumerate(ids):
        f.write(f"{0 if i % 7 == 6 else i * 5},{o}\n")
with open(f"{d}/clamped.csv", "w") as f:  # ... which counts as the one before
    f.write("time,obj_id\n")
    for i, o in enumerate(ids):
        f.write(f"{(i - 1) * 5 if i % 7 == 6 else i * 5},{o}\n")
with open(f"{d}/same.csv", "w") as f:  # all in one second
    f.write("time,obj_id\n")
    for i, o in enumerate(ids):
        f.write(f"7,{o}\n")
with open(f"{d}/ids.txt", "w") as f:
    for o in ids:
        f.write(f"{o}\n")
PY

sim() { # trace policy [flags...]
  local trace=$1 policy=$2
  shift 2
  run sim --trace "$scratch/$trace" --policy "$policy" --size 60 --ignore-size --json "$@"
  if [[ $status -ne 0 ]]; then
    bad "sim $trace $policy $*: status $status"
    echo -1
  else misses; fi
}

for policy in midpoint:time=40 midpoint lru-k:crp=12; do
  ms=$(sim ms.csv "$policy" --time-unit ms)
  us=$(sim us.csv "$policy" --time-unit us)
  txt=$(sim ids.txt "$policy" --ms-per-request 5)
  if [[ $ms -gt 0 && $ms == "$us" && $ms == "$txt" ]]; then ok; else
    bad "$policy: ms $ms, us $us, txt at 5 ms a request $txt: one clock, three answers"
  fi
  s=$(sim s.csv "$policy")
  s1000=$(sim s1000.csv "$policy" --time-unit ms)
  if [[ $s -gt 0 && $s == "$s1000" ]]; then ok; else
    bad "$policy: seconds $s, the same in ms $s1000"
  fi
  back=$(sim back.csv "$policy" --time-unit ms)
  clamped=$(sim clamped.csv "$policy" --time-unit ms)
  if [[ $back -gt 0 && $back == "$clamped" ]]; then ok; else
    bad "$policy: time stamps going back $back, held at the one before $clamped"
  fi
done

# The clock is read: with every request in one second, midpoint:time=1000
# never promotes (as with an endless time), unlike time=0, and a 5 ms
# spacing at time=40 lies between them.
same=$(sim same.csv midpoint:time=1000)
never=$(sim ms.csv midpoint:time=1000000000 --time-unit ms)
always=$(sim ms.csv midpoint:time=0 --time-unit ms)
between=$(sim ms.csv midpoint:time=40 --time-unit ms)
if [[ $same == "$never" && $same != "$always" && $between != "$always" && $between != "$never" ]]; then
  ok
else bad "midpoint ignores the clock: one second $same, never $never, always $always, 5 ms at time=40 $between"; fi

# Durations are time, not requests: 40 ms at 5 ms a request is 8 requests,
# which is 8 ms at 1 ms a request (a clock of request numbers would read
# time=40 as 40 requests).
at5=$(sim ms.csv midpoint:time=40 --time-unit ms)
at1=$(sim ids.txt midpoint:time=8 --ms-per-request 1)
at1_40=$(sim ids.txt midpoint:time=40 --ms-per-request 1)
if [[ $at5 == "$at1" && $at5 != "$at1_40" ]]; then ok; else
  bad "midpoint:time=40 at 5 ms a request: $at5; time=8 at 1 ms: $at1; time=40 at 1 ms: $at1_40"
fi

# No clock, no duration: refused before any simulation, naming both ways out.
run sim --trace "$scratch/ids.txt" --format txt --policy lru,midpoint --size 60 --ignore-size
expect_one_line_error "no time stamps .*time=1000 is in milliseconds.*--ms-per-request" "midpoint on a txt trace"
run sim --trace "$scratch/ids.txt" --format txt --policy lru-k:crp=5 --size 60 --ignore-size
expect_one_line_error "crp=5 is in milliseconds" "lru-k:crp=5 on a txt trace"
# A "seq" column orders requests (the PostgreSQL trace csv) but tells no time.
printf 'seq,obj_id\n1,5\n2,6\n3,5\n' >"$scratch/seq.csv"
run sim --trace "$scratch/seq.csv" --format csv --policy midpoint --size 60 --ignore-size
expect_one_line_error "no time stamps .*time=1000 is in milliseconds" "midpoint on a csv with only seq"
# A zero duration needs no clock.
run sim --trace "$scratch/ids.txt" --policy midpoint:time=0,lru-k --size 60 --ignore-size
expect_status 0 "midpoint:time=0 and lru-k on a txt trace"
# --ms-per-request is for traces without time stamps only.
run sim --trace "$scratch/ms.csv" --format csv --policy lru --size 60 --ignore-size --ms-per-request 1
expect_one_line_error "has time stamps of its own" "--ms-per-request on a csv with times"
run sim --trace "$scratch/ms.csv" --policy lru --size 60 --time-unit minutes
expect_usage_error "--time-unit" "--time-unit minutes"
run sim --trace "$scratch/ids.txt" --policy lru --size 60 --ms-per-request 0
expect_usage_error "--ms-per-request" "--ms-per-request 0"

cli_finish
