#!/usr/bin/env bash
#
# tests/test_reset_log.sh — a directory refused at open, and `hotset
# reset-log` as the way out, end to end through the CLI:
#   - a crash-test directory whose checkpoint record has a flipped byte is
#     refused by `crash-test --verify` (one line naming the checkpoint and
#     reset-log), and `verify` takes the page size from the control file;
#   - `reset-log` without --force prints what is given up, changes nothing
#     (every file byte-identical) and exits 1;
#   - with --force it keeps the old log in wal/reset-<LSN>, the directory
#     opens again with every page passing (a transaction written only in
#     part may show: that is what is given up), and the control file says
#     "shut down";
#   - a directory without checksums is reported by verify as such;
#   - usage errors are one line and a hint;
#   - reset-log refuses a directory another process has open, moving nothing;
#   - a damaged control file's hint runs as printed: reset-log rebuilds it
#     from the log and the data files, and the directory opens with it;
#   - a healthy directory: nothing to reset; one shut down cleanly says
#     so in one line (status 0), with its log or run without one;
#   - verify names the segment of an odd size, still checks every page, and
#     is bad for a missing middle segment; it lists kept evidence, which
#     `reset-log --remove-kept` removes.
#
# Usage: test_reset_log.sh PATH/TO/hotset
set -u

HOTSET=${1:?usage: test_reset_log.sh PATH/TO/hotset}
source "$(dirname "$0")/../support/cli_lib.sh"
cli_setup reset-log

run reset-log
expect_usage_error "--dir is required" "reset-log without --dir" "hotset reset-log"

d=$scratch/d
# The crash test's child runs until killed; a second of it leaves a
# directory with checkpoints (every 150 ms) and a log.
timeout -s KILL 2 "$HOTSET" crash-test --workload --dir "$d" >"$out" 2>"$err" &
wait $! 2>/dev/null
if [[ -f $d/hotset.control ]]; then ok; else bad "crash-test --workload left no control file"; fi

run verify --dir "$d"
expect_status 0 "verify of a crashed directory (page size from its control file)"

# Flip a byte inside the checkpoint record the control file names.
python3 - "$d" <<'PY'
import os, struct, sys
d = sys.argv[1]
b = open(os.path.join(d, "hotset.control"), "rb").read()
ckpt, = struct.unpack_from("<Q", b, 40)
seg, = struct.unpack_from("<Q", b, 24)
path = os.path.join(d, "wal", "%016X" % (ckpt - ckpt % seg))
with open(path, "r+b") as f:
    f.seek(ckpt % seg + 36)
    c = f.read(1)
    f.seek(ckpt % seg + 36)
    f.write(bytes([c[0] ^ 0x40]))
PY

run crash-test --verify --dir "$d"
expect_status 1 "crash-test --verify of a damaged checkpoint record"
if grep -q "checkpoint record" "$err" && grep -q "reset-log" "$err"; then ok; else
  bad "the refusal names neither the checkpoint record nor reset-log"
fi

sums() { find "$d" -type f ! -name '*.lock' -print0 | sort -z | xargs -0 sha1sum; }
before=$(sums)
run reset-log --dir "$d"
expect_status 1 "reset-log without --force"
if grep -q "^given up:" "$out" && grep -q "nothing changed" "$out"; then ok; else
  bad "reset-log without --force does not say what is given up and that nothing changed"
fi
if [[ $(sums) == "$before" ]]; then ok; else bad "reset-log without --force changed files"; fi

run reset-log --dir "$d" --force
expect_status 0 "reset-log --force"
if ls -d "$d"/wal/reset-* >/dev/null 2>&1 && [[ -n $(ls "$d"/wal/reset-*) ]]; then ok; else
  bad "the old log was not kept in wal/reset-*"
fi
state=$(python3 -c 'import struct,sys; print(struct.unpack_from("<I", open(sys.argv[1],"rb").read(), 20)[0])' "$d/hotset.control")
if [[ $state == 1 ]]; then ok; else bad "control file state $state after reset-log, want 1 (shut down)"; fi
# The directory opens again. What reset-log gives up is exactly what the log
# would have repaired: a transaction whose pages were written only in part
# may now show (crash-test --verify then says so, exit 1) — but the open
# itself must not be refused.
run crash-test --verify --dir "$d"
if [[ $status -eq 0 ]] || { grep -q "a transaction there in part" "$err" && ! grep -q "hs_pool_open" "$err"; }; then
  ok
else
  bad "crash-test --verify after reset-log: exit status $status, and not only a transaction in part"
fi
run verify --dir "$d"
expect_status 0 "verify after reset-log"

# A directory whose pages carry no checksums: verify says so.
w=$scratch/w
run workload --seconds 0.2 --pages 64 --pool 256KiB --threads 1 --dir "$w" --wal counter
expect_status 0 "workload --dir"
run verify --dir "$w"
expect_one_line_error "no checksums" "verify of a directory without checksums"

# ---- a directory in use: refused before anything moves ------------------
h=$scratch/h
"$HOTSET" crash-test --workload --heap --dir "$h" >"$scratch/h.out" 2>"$scratch/h.err" &
worker=$!
# The workload prints an acknowledged value once it is running (the pool
# open, with its locks, done): wait for that, not for a time.
for _ in $(seq 1 500); do grep -q value "$scratch/h.out" 2>/dev/null && break; sleep 0.02; done
run reset-log --dir "$h" --force
expect_status 1 "reset-log --force on a directory another process has open"
if grep -q "in use by process $worker" "$err"; then ok; else bad "the refusal does not name the process holding the directory"; fi
if ls -d "$h"/wal/reset-* "$h"/wal/kept-* >/dev/null 2>&1; then bad "reset-log moved the live log aside"; else ok; fi
kill -KILL "$worker"
wait "$worker" 2>/dev/null
run crash-test --verify --heap --dir "$h"
expect_status 0 "the directory, after its process died, recovers as it is"

# ---- a healthy directory: nothing to do ------------------------------------
before_h=$(find "$h" -type f ! -name '*.lock' -print0 | sort -z | xargs -0 sha1sum)
# Shut down cleanly (the recovery above closed it), its log intact: said in
# one line, status 0, with or without --force.
run reset-log --dir "$h"
expect_status 0 "reset-log on a cleanly shut-down directory"
if grep -qx "nothing to reset: $h is healthy (clean shutdown, log intact)" "$out" &&
  ! grep -q "^given up\|nothing changed: run again" "$out"; then ok; else
  bad "reset-log on a cleanly shut-down directory: $(tail -1 "$out")"
fi
if [[ ! -s $err ]]; then ok; else bad "reset-log on a healthy directory wrote to stderr"; fi
run reset-log --dir "$h" --force
expect_status 0 "reset-log --force on a healthy directory"
if grep -q "^nothing to reset" "$out"; then ok; else bad "reset-log on a healthy directory does not say nothing needs doing"; fi
if [[ $(find "$h" -type f ! -name '*.lock' -print0 | sort -z | xargs -0 sha1sum) == "$before_h" ]]; then ok; else
  bad "reset-log on a healthy directory changed files"
fi

# A directory run without a log (workload's stand-in for one), shut down
# cleanly: healthy too; nothing is offered, nothing changes.
n=$scratch/n
run workload --seconds 0.1 --pages 64 --pool 256KiB --threads 1 --dir "$n" --wal counter
expect_status 0 "workload --dir (no log)"
before_n=$(find "$n" -type f ! -name '*.lock' -print0 | sort -z | xargs -0 sha1sum)
run reset-log --dir "$n"
expect_status 0 "reset-log on a cleanly shut-down directory without a log"
if grep -q "^nothing to reset: $n is healthy (clean shutdown" "$out" && ! grep -q "^given up" "$out"; then ok; else
  bad "reset-log on a clean directory without a log: $(tail -1 "$out")"
fi
if [[ $(find "$n" -type f ! -name '*.lock' -print0 | sort -z | xargs -0 sha1sum) == "$before_n" && ! -e $n/wal ]]; then ok; else
  bad "reset-log on a clean directory without a log changed it"
fi

# ---- a damaged control file: the hint runs as printed --------------------
cp "$h/hotset.control" "$scratch/control.good"
python3 - "$h/hotset.control" <<'PY'
import sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
b[44] ^= 0x10  # inside the checkpoint's LSN: the CRC fails
open(p, "wb").write(b)
PY
run crash-test --verify --heap --dir "$h"
expect_status 1 "crash-test --verify with a damaged control file"
hint=$(grep -o '`hotset reset-log[^`]*`' "$err" | head -n 1 | tr -d '`')
if [[ -n $hint ]]; then ok; else bad "the damaged control file's refusal offers no reset-log command"; fi
read -ra hint_argv <<<"${hint#hotset }"
run "${hint_argv[@]}"
expect_status 0 "the hint as printed: $hint"
if grep -q "rebuilt" "$out" && grep -q "given up: nothing" "$out"; then ok; else
  bad "reset-log did not rebuild the control file losing nothing"
fi
python3 - "$h/hotset.control" "$scratch/control.good" <<'PY'
import struct, sys
a = open(sys.argv[1], "rb").read(); b = open(sys.argv[2], "rb").read()
# page size, flags, segment size, system id, checkpoint, redo: as they were
fields = lambda x: (struct.unpack_from("<II", x, 12), struct.unpack_from("<QQQQ", x, 24))
sys.exit(0 if fields(a) == fields(b) else "rebuilt %r, was %r" % (fields(a), fields(b)))
PY
if [[ $? -eq 0 ]]; then ok; else bad "the rebuilt control file differs from the lost one"; fi
run crash-test --verify --heap --dir "$h"
expect_status 0 "the directory opens with the rebuilt control file"

# ---- verify: an odd-sized segment, a missing middle one, evidence ---------
v=$scratch/v
cp -a "$h" "$v"
segs=("$v"/wal/[0-9A-F][0-9A-F][0-9A-F][0-9A-F][0-9A-F][0-9A-F][0-9A-F][0-9A-F][0-9A-F][0-9A-F][0-9A-F][0-9A-F][0-9A-F][0-9A-F][0-9A-F][0-9A-F])
last=${segs[${#segs[@]}-1]}
truncate -s 1000 "$last"
run verify --dir "$v"
expect_status 1 "verify with a segment of an odd size"
if grep -q "$(basename "$last"): 1000 bytes" "$out"; then ok; else bad "verify does not name the odd-sized segment $(basename "$last")"; fi
if grep -Eq "[1-9][0-9]* pages" "$out"; then ok; else bad "verify checked no page after an odd-sized segment"; fi
m=$scratch/m
cp -a "$h" "$m"
# The segment the redo point is in, gone: the log cannot be read from it.
ctl_redo=$(python3 -c 'import struct,sys; b=open(sys.argv[1],"rb").read(); r,=struct.unpack_from("<Q",b,48); s,=struct.unpack_from("<Q",b,24); print("%016X" % (r - r % s))' "$m/hotset.control")
mv "$m/wal/$ctl_redo" "$scratch/aside"
run verify --dir "$m"
expect_status 1 "verify with the redo point's segment missing"
# (the only segment, when the workload was killed before the log left its
# first: then no segment is left at all)
if grep -q "before the checkpoint record\|no log segment, but" "$out"; then ok; else bad "verify does not report the log missing the checkpoint"; fi
mv "$scratch/aside" "$m/wal/$ctl_redo"
# No segment at all, under a control file naming a checkpoint: bad, as the
# open would refuse it (it used to say ok, "LSNs not checked").
mkdir "$scratch/segs"
mv "$m"/wal/[0-9A-F]*[0-9A-F] "$scratch/segs/"
run verify --dir "$m"
expect_status 1 "verify with no log segment under a checkpoint"
if grep -q "no log segment, but the control file names a checkpoint" "$out"; then ok; else bad "verify does not report the missing log"; fi
mv "$scratch/segs"/* "$m/wal/"
mkdir -p "$m/wal/kept-00000000000000F0"
head -c 5000 /dev/zero >"$m/wal/kept-00000000000000F0/0000000000000000.from-00000000000000F0"
run verify --dir "$m"
if grep -q "evidence: $m/wal/kept-00000000000000F0 (5000 bytes)" "$out" && grep -q -- "--remove-kept" "$out"; then ok; else
  bad "verify does not list the kept evidence with its size and how to remove it"
fi
run reset-log --dir "$m" --remove-kept
expect_status 0 "reset-log --remove-kept"
if [[ ! -e $m/wal/kept-00000000000000F0 ]]; then ok; else bad "reset-log --remove-kept left the evidence"; fi

cli_finish
