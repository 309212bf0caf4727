#!/bin/sh
# docs/wal.md shows examples/wal_tutorial.c verbatim; fail if they drift apart.
top=$1
tmp="${TMPDIR:-/tmp}/wal-tutorial.$$"
awk '/^```c wal_tutorial/{on=1; next} on && /^```/{on=0} on' "$top/docs/wal.md" > "$tmp"
if cmp -s "$tmp" "$top/examples/wal_tutorial.c"; then
  rm -f "$tmp"
  echo "1 passed, 0 failed"
  exit 0
fi
diff "$top/examples/wal_tutorial.c" "$tmp"
rm -f "$tmp"
echo "docs/wal.md's wal_tutorial block differs from examples/wal_tutorial.c"
echo "0 passed, 1 failed"
exit 1
