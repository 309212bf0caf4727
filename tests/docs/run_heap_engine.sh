#!/bin/sh
# Runs examples/heap_engine.c in a fresh directory twice: the first run
# loads the rows (nothing to vacuum), the second finds them recovered,
# updates each once more and vacuums the 100 versions that made dead.
bin=$1
d=$(mktemp -d) || exit 1
trap 'rm -rf "$d"' EXIT
fail() {
  echo "$out"
  echo "FAIL: $1"
  echo "0 passed, 1 failed"
  exit 1
}
out=$("$bin" "$d/data") || fail "the first run failed"
echo "$out"
echo "$out" | grep -qx 'row 42: value 0' || fail "the first run did not load row 42"
echo "$out" | grep -qx 'vacuum: 0 dead versions removed, 0 index entries moved' ||
  fail "the first run's vacuum found dead versions"
out=$("$bin" "$d/data") || fail "the second run failed"
echo "$out"
echo "$out" | grep -qx 'row 42: value 1' || fail "the second run did not see row 42 recovered and updated"
echo "$out" | grep -qx 'vacuum: 100 dead versions removed, 100 index entries moved' ||
  fail "the second run's vacuum did not remove the 100 old versions and move their entries"
echo "2 passed, 0 failed"
