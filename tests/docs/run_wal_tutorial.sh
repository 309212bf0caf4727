#!/bin/sh
# Runs examples/wal_tutorial.c in a fresh directory: the first run commits
# a change and kills itself before any page is written; the second opens
# the pool (which replays the log) and must print the change.
bin=$1
d=$(mktemp -d) || exit 1
trap 'rm -rf "$d"' EXIT
fail() {
  echo "$out"
  echo "FAIL: $1"
  echo "0 passed, 1 failed"
  exit 1
}
out=$("$bin" "$d/data" write)
status=$?
[ "$status" -eq 137 ] || fail "the write run should die by SIGKILL (status 137), not $status"
echo "$out" | grep -q '^committed block 0 at LSN [0-9A-F]*; crashing' || fail "the write run did not commit"
out=$("$bin" "$d/data" check) || fail "the check run failed"
echo "$out"
echo "$out" | grep -qx 'block 0 after recovery: balance=100' || fail "the change was not recovered"
echo "2 passed, 0 failed"
