#!/bin/sh
# The README shows three example programs verbatim, each in a block fenced as
# ```c NAME: examples/quickstart.c, examples/wal_tutorial.c and
# examples/heap_engine.c. Fail if a block is missing or has drifted from its
# file, and if a program grows past what a reader takes in at once.
top=$1
tmp="${TMPDIR:-/tmp}/readme-example.$$"
trap 'rm -f "$tmp"' EXIT
passed=0
failed=0
for name in quickstart wal_tutorial heap_engine; do
  awk -v name="$name" '$0 == "```c " name {on=1; next} on && /^```/{on=0} on' "$top/README.md" > "$tmp"
  lines=$(wc -l < "$top/examples/$name.c")
  if [ ! -s "$tmp" ]; then
    echo "README.md has no block fenced as \`\`\`c $name"
    failed=$((failed + 1))
  elif ! cmp -s "$tmp" "$top/examples/$name.c"; then
    diff "$top/examples/$name.c" "$tmp"
    echo "README.md's $name block differs from examples/$name.c"
    failed=$((failed + 1))
  elif [ "$lines" -ge 60 ]; then
    echo "examples/$name.c has $lines lines: the README's examples stay under 60"
    failed=$((failed + 1))
  else
    passed=$((passed + 1))
  fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
