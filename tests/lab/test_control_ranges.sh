#!/usr/bin/env bash
#
# tests/test_control_ranges.sh — a control file whose CRC passes but whose
# fields are absurd (page size 0 or 3, a segment size no hotset writes, an
# unknown state, a redo point past the checkpoint, ...) is refused by every
# tool that reads it, with one line naming the file and the field, exit 1:
# never a crash (page size 0 once made `verify` die of SIGFPE and
# `reset-log` of SIGSEGV), never a run on the absurd value, and nothing on
# disk changed (every file's bytes and mtime compared).
#
# The control file is rewritten here with a CRC-32C written in Python, so
# the test does not trust the code it checks to compute it.
#
# Usage: test_control_ranges.sh PATH/TO/hotset
set -u

HOTSET=${1:?usage: test_control_ranges.sh PATH/TO/hotset}
source "$(dirname "$0")/../support/cli_lib.sh"
cli_setup control-ranges

base=$scratch/base
run workload --seconds 0.2 --pages 64 --pool 256KiB --threads 1 --seed 3 --dir "$base"
expect_status 0 "workload --dir (the directory the cases start from)"
[[ -f $base/hotset.control ]] || { bad "workload left no control file"; cli_finish; exit 1; }

# damage CONTROL CASE: rewrites one field of CONTROL (CRC recomputed). Pages
# are said to carry checksums, so that verify and reset-log would read them.
damage() {
  python3 - "$1" "$2" <<'PY'
import struct, sys

def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF

path, case = sys.argv[1], sys.argv[2]
b = bytearray(open(path, "rb").read())
put32 = lambda off, v: struct.pack_into("<I", b, off, v)
put64 = lambda off, v: struct.pack_into("<Q", b, off, v)
seg, = struct.unpack_from("<Q", b, 24)
ckpt, = struct.unpack_from("<Q", b, 40)
put32(16, 3)  # checksums, has a checkpoint
if case == "page_size_0": put32(12, 0)
elif case == "page_size_3": put32(12, 3)
elif case == "page_size_128k": put32(12, 131072)
elif case == "segment_12345": put64(24, 12345)
elif case == "segment_32k": put64(24, 32768)
elif case == "state_99": put32(20, 99)
elif case == "state_0": put32(20, 0)
elif case == "redo_past_checkpoint": put64(48, ckpt + 8)
elif case == "checkpoint_unaligned": put64(40, ckpt + 4)
elif case == "checkpoint_in_segment_header":
    put64(40, seg + 8); put64(48, seg)
elif case == "redo_in_segment_header":
    put64(40, seg + 64); put64(48, seg + 16)
elif case == "checkpoint_2_62": put64(40, 1 << 62); put64(48, 1 << 62)
elif case == "checkpoint_without_log": put64(24, 0)
elif case == "lsns_without_checkpoint": put32(16, 1)
elif case == "unknown_flag": put32(16, 3 | 0x100)
elif case == "reserved_byte": b[90] = 1
elif case == "system_id_0": put64(32, 0)
else: sys.exit("unknown case " + case)
put32(124, crc32c(bytes(b[:124])))
open(path, "wb").write(b)
PY
}

# Every file under the directory: name, size, mtime, contents.
# Lock files are left out: taking a lock (before anything is read) writes the
# holder's pid into it and empties it again; they hold no data.
state_of() { find "$1" -type f ! -name '*.lock' -printf '%P %s %T@\n' | sort; find "$1" -type f ! -name '*.lock' -exec sha1sum {} + | sort; }

# case and the field its message must name
cases=(
  "page_size_0 page_size"
  "page_size_3 page_size"
  "page_size_128k page_size"
  "segment_12345 segment_bytes"
  "segment_32k segment_bytes"
  "state_99 state"
  "state_0 state"
  "redo_past_checkpoint redo"
  "checkpoint_unaligned checkpoint"
  "checkpoint_in_segment_header checkpoint"
  "redo_in_segment_header redo"
  "checkpoint_2_62 checkpoint"
  "checkpoint_without_log checkpoint"
  "lsns_without_checkpoint checkpoint"
  "unknown_flag flags"
  "reserved_byte reserved area"
  "system_id_0 system_id"
)
tools=(
  "verify"
  "reset-log"
  "reset-log --force"
  "workload --seconds 0.1 --pages 64 --pool 256KiB --threads 1"
)
for c in "${cases[@]}"; do
  read -r name field <<<"$c"
  d=$scratch/$name
  cp -a "$base" "$d"
  damage "$d/hotset.control" "$name" || { bad "$name: could not write the control file"; continue; }
  before=$(state_of "$d")
  for tool in "${tools[@]}"; do
    read -ra argv <<<"$tool"
    run "${argv[@]}" --dir "$d"
    what="$tool on a control file with $name"
    if [[ $status -ge 128 ]]; then
      bad "$what: killed by signal $((status - 128))"
      continue
    fi
    expect_one_line_error "hotset.control: $field is " "$what"
    if [[ $(state_of "$d") == "$before" ]]; then ok; else bad "$what: changed files"; fi
  done
done

cli_finish
