#!/usr/bin/env bash
# The shared library exports exactly the public API: every dynamic symbol
# libhotset.so defines is declared in include/hotset/*.h and named hs_*, and
# every function those headers declare is exported. Internals (the page
# table, keymaps, ghosts, hs_fail...) stay hidden, so programs cannot come to
# depend on them and the library is free to change them.
#
# With a symbol list (abi/libhotset.symbols) and the project's version, the
# exports must also be exactly the list: a change to them is a change of
# the ABI, which takes a new version and a new list (tools/update-symbols).
#
#   test_exports.sh <libhotset.so> <include dir> [<symbol list> <version>]
set -euo pipefail
lib=$1
incdir=$2
symlist=${3:-}
version=${4:-}

command -v nm >/dev/null || { echo "SKIPPED: nm (binutils) is not installed"; exit 77; }

# Names the headers declare: functions (and extern variables), not types,
# macros or static inline helpers. Declarations are read at brace depth 0
# after comments, preprocessor lines and the C++ linkage wrapper are removed.
declared=$(python3 - "$incdir"/hotset/*.h <<'EOF'
import re, sys
names = set()
for path in sys.argv[1:]:
    text = open(path).read()
    text = re.sub(r'/\*.*?\*/', ' ', text, flags=re.S)
    text = re.sub(r'//[^\n]*', ' ', text)
    text = re.sub(r'#ifdef __cplusplus.*?#endif', ' ', text, flags=re.S)
    text = re.sub(r'^[ \t]*#(?:[^\n]*\\\n)*[^\n]*', ' ', text, flags=re.M)
    depth, decl = 0, ''
    for ch in text:
        if ch == '{':
            depth += 1
        elif ch == '}':
            depth -= 1
        if ch == ';' and depth == 0:
            d = ' '.join(decl.split())
            decl = ''
            if re.match(r'(static|typedef)\b', d):
                continue
            call = re.search(r'([A-Za-z_]\w*)\s*\(', d)
            if call:
                names.add(call.group(1))
                continue
            # A type's definition or forward declaration declares no object.
            d = re.sub(r'\{.*\}', ' ', d).strip()
            if not re.fullmatch(r'(struct|enum|union)(\s+\w+)?', d):
                names.add(re.findall(r'([A-Za-z_]\w*)\s*(?:\[[^\]]*\]\s*)?$', d)[0])
        else:
            decl += ch
for n in sorted(names):
    print(n)
EOF
)
[ -n "$declared" ] || { echo "FAIL: found no declarations in $incdir/hotset"; exit 1; }

# Defined dynamic symbols, without the markers some linkers add.
exported=$(nm -D --defined-only "$lib" | awk '{print $NF}' | sed 's/@.*//' |
  grep -v -x -E '_init|_fini|_edata|_end|__bss_start' | sort -u)

fail=0
extra=$(comm -13 <(echo "$declared") <(echo "$exported"))
if [ -n "$extra" ]; then
  echo "FAIL: libhotset.so exports $(echo "$extra" | wc -l) symbols not declared in include/hotset:"
  echo "$extra" | sed 's/^/  /'
  fail=1
fi
missing=$(comm -23 <(echo "$declared") <(echo "$exported"))
if [ -n "$missing" ]; then
  echo "FAIL: $(echo "$missing" | wc -l) public functions are not exported by libhotset.so:"
  echo "$missing" | sed 's/^/  /'
  fail=1
fi
not_hs=$(echo "$exported" | grep -v '^hs_' || true)
if [ -n "$not_hs" ]; then
  echo "FAIL: exported symbols outside the hs_ namespace:"
  echo "$not_hs" | sed 's/^/  /'
  fail=1
fi

if [ -n "$symlist" ]; then
  [ -f "$symlist" ] || { echo "FAIL: no symbol list $symlist (run tools/update-symbols $lib)"; exit 1; }
  recorded=$(sed -n 's/^# version \(.*\)$/\1/p' "$symlist")
  listed=$(grep -v '^#' "$symlist")
  if [ "$listed" != "$(echo "$listed" | LC_ALL=C sort -u)" ]; then
    echo "FAIL: $symlist is not sorted and unique (tools/update-symbols writes it so)"
    fail=1
  fi
  listed=$(echo "$listed" | LC_ALL=C sort -u)
  exported_c=$(echo "$exported" | LC_ALL=C sort -u)
  if [ "$listed" != "$exported_c" ]; then
    added=$(comm -13 <(echo "$listed") <(echo "$exported_c"))
    removed=$(comm -23 <(echo "$listed") <(echo "$exported_c"))
    if [ "$recorded" = "$version" ]; then
      echo "FAIL: the exported symbols changed without a version bump (still $version):"
    else
      echo "FAIL: the version is $version but $symlist records the symbols of $recorded:"
    fi
    [ -z "$added" ] || echo "$added" | sed 's/^/  + /'
    [ -z "$removed" ] || echo "$removed" | sed 's/^/  - /'
    echo "An exported symbol added, removed or renamed changes libhotset's ABI. To accept it:"
    if [ "$recorded" = "$version" ]; then
      echo "  1. bump the version in CMakeLists.txt (project VERSION) and include/hotset/version.h"
      echo "     (before 1.0 the minor: every 0.x minor may break the ABI), unless $version is"
      echo "     not released yet (no tag v$version);"
      echo "  2. tools/update-symbols $lib"
    else
      echo "  tools/update-symbols $lib"
    fi
    echo "and commit abi/libhotset.symbols with the change (and say it in CHANGELOG.md)."
    fail=1
  fi
fi
[ $fail -eq 0 ] || exit 1
echo "ok: libhotset.so exports the $(echo "$exported" | wc -l) functions of include/hotset and nothing else${symlist:+, as $(basename "$symlist") lists for $recorded}"
