#!/bin/sh
# The README shows examples/quickstart.c verbatim; fail if they drift apart.
top=$1
awk '/^```c quickstart/{on=1; next} on && /^```/{on=0} on' "$top/README.md" > "${TMPDIR:-/tmp}/readme-quickstart.$$"
if cmp -s "${TMPDIR:-/tmp}/readme-quickstart.$$" "$top/examples/quickstart.c"; then
  rm -f "${TMPDIR:-/tmp}/readme-quickstart.$$"
  echo "1 passed, 0 failed"
  exit 0
fi
diff "$top/examples/quickstart.c" "${TMPDIR:-/tmp}/readme-quickstart.$$"
rm -f "${TMPDIR:-/tmp}/readme-quickstart.$$"
echo "README.md's quickstart block differs from examples/quickstart.c"
echo "0 passed, 1 failed"
exit 1
