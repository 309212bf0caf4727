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
#   - usage errors are one line and a hint.
#
# Usage: test_reset_log.sh PATH/TO/hotset
set -u

HOTSET=${1:?usage: test_reset_log.sh PATH/TO/hotset}
source "$(dirname "$0")/cli_lib.sh"
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

cli_finish
