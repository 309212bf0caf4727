#!/usr/bin/env bash
# An install into a prefix of one's own is usable and removable: the files go
# under that prefix, hotset.pc names it, the README's example program builds
# with nothing but `pkg-config --cflags --libs hotset` and runs without
# LD_LIBRARY_PATH (the .pc carries the rpath), so does the heap example
# (examples/heap_engine.c: hotset/heap.h and hotset/vacuum.h), the SQLite
# adapter's libraries, header and hotset-sqlite.pc are there when it was
# built (a program using it builds with `pkg-config --cflags --libs
# hotset-sqlite` and runs), and
# uninstalling leaves no file behind.
#
#   test_install.sh cmake <build dir> <source dir> <cc> [extra cflags]
#       installs with `cmake --install --prefix` (what ctest runs)
#   test_install.sh make <build dir> <source dir> <cc> [extra cflags]
#       installs with `make install PREFIX=` twice, to two prefixes, then
#       `make uninstall` (what .ci/run runs: it reconfigures the build dir)
set -euo pipefail
mode=$1
build=$(cd "$2" && pwd)
src=$(cd "$3" && pwd)
cc=$4
extra_cflags=${5:-}

# The soname names the release series (libhotset.so.MAJOR.MINOR before 1.0),
# read from the version header so that a new release needs no edit here.
version_part() { sed -n "s/^#define HOTSET_VERSION_$1 *\([0-9]*\)$/\1/p" "$src/include/hotset/version.h"; }
soname="libhotset.so.$(version_part MAJOR).$(version_part MINOR)"

command -v pkg-config >/dev/null || { echo "SKIPPED: pkg-config is not installed"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "FAIL: $*"
  exit 1
}

# The component install writes its own manifest, so a test run never
# replaces the install_manifest.txt of the user's real install.
manifest="$build/install_manifest_Unspecified.txt"
install_to() {
  case $mode in
  cmake)
    cmake --install "$build" --prefix "$1" --component Unspecified >"$tmp/install.log" 2>&1 ||
      { cat "$tmp/install.log"; fail "cmake --install --prefix $1"; } ;;
  make)
    make -s -C "$src" BUILD="$build" PREFIX="$1" install >"$tmp/install.log" 2>&1 ||
      { cat "$tmp/install.log"; fail "make install PREFIX=$1"; }
    manifest="$build/install_manifest.txt" ;;
  *) fail "unknown mode $mode" ;;
  esac
}
uninstall() {
  case $mode in
  cmake) cmake -DMANIFEST="$manifest" -P "$src/cmake/uninstall.cmake" >"$tmp/uninstall.log" 2>&1 ;;
  make) make -s -C "$src" BUILD="$build" uninstall >"$tmp/uninstall.log" 2>&1 ;;
  esac || { cat "$tmp/uninstall.log"; fail "uninstall"; }
}

check_prefix() {
  local prefix=$1
  local pc
  pc=$(find "$prefix" -name hotset.pc 2>/dev/null || true)
  [ -n "$pc" ] || fail "no hotset.pc under $prefix"
  for f in include/hotset/pool.h include/hotset/heap.h include/hotset/vacuum.h bin/hotset; do
    [ -e "$prefix/$f" ] || fail "$prefix/$f was not installed"
  done
  ls "$(dirname "$(dirname "$pc")")"/$soname >/dev/null || fail "$soname is not beside the pkgconfig directory"
  local got
  got=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --variable=prefix hotset)
  [ "$got" = "$prefix" ] || fail "hotset.pc says prefix=$got, installed into $prefix"

  # The README's program, built the way the README says.
  local flags
  flags=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --cflags --libs hotset)
  # shellcheck disable=SC2086
  "$cc" $extra_cflags "$src/examples/quickstart.c" $flags -o "$tmp/quickstart" ||
    fail "quickstart.c does not build with: $cc $flags"
  (unset LD_LIBRARY_PATH; "$tmp/quickstart" "$tmp/data" >"$tmp/run.log" 2>&1) ||
    { cat "$tmp/run.log"; fail "quickstart built with pkg-config does not run"; }
  grep -q '"hello, buffer pool"' "$tmp/run.log" || { cat "$tmp/run.log"; fail "quickstart printed no page"; }
  # It ran the installed shared library, not a copy found elsewhere.
  if command -v ldd >/dev/null; then
    # ldd's output is read whole first: `ldd | grep -q` under pipefail fails
    # whenever grep's early exit makes ldd die of SIGPIPE.
    local libs
    libs=$(ldd "$tmp/quickstart")
    grep -q "$prefix/.*$soname" <<<"$libs" ||
      { echo "$libs"; fail "quickstart does not load $soname from $prefix"; }
  fi
  rm -rf "$tmp/data" "$tmp/quickstart"
  # The heap example, from the installed heap.h and vacuum.h.
  # shellcheck disable=SC2086
  "$cc" $extra_cflags "$src/examples/heap_engine.c" $flags -o "$tmp/heap_engine" ||
    fail "heap_engine.c does not build with: $cc $flags"
  (unset LD_LIBRARY_PATH; "$tmp/heap_engine" "$tmp/data" >"$tmp/run.log" 2>&1) ||
    { cat "$tmp/run.log"; fail "heap_engine built with pkg-config does not run"; }
  grep -qx 'row 42: value 0' "$tmp/run.log" || { cat "$tmp/run.log"; fail "heap_engine read no row"; }
  rm -rf "$tmp/data" "$tmp/heap_engine"
  # And both against the static library, from the installed headers.
  local prog
  for prog in quickstart heap_engine; do
    # shellcheck disable=SC2086
    "$cc" $extra_cflags -I"$prefix/include" "$src/examples/$prog.c" \
      "$(dirname "$(dirname "$pc")")/libhotset.a" -lpthread -o "$tmp/$prog" ||
      fail "$prog.c does not link against the installed libhotset.a"
    "$tmp/$prog" "$tmp/data" >"$tmp/run.log" 2>&1 || { cat "$tmp/run.log"; fail "static $prog does not run"; }
    rm -rf "$tmp/data" "$tmp/$prog"
  done
  # The SQLite adapter, when this build has it: its library and header, and
  # hotset-sqlite.pc beside hotset.pc, with which a program of its own
  # builds and runs on hotset's cache (without LD_LIBRARY_PATH).
  if [ -e "$build/libhotset-sqlite.so" ]; then
    [ -e "$prefix/include/hotset_sqlite.h" ] || fail "hotset_sqlite.h was not installed"
    ls "$(dirname "$(dirname "$pc")")"/libhotset-sqlite.so "$(dirname "$(dirname "$pc")")"/libhotset-sqlite.a \
      >/dev/null || fail "libhotset-sqlite.so and .a are not beside $soname"
    [ -e "$(dirname "$pc")/hotset-sqlite.pc" ] || fail "no hotset-sqlite.pc beside $pc"
    local sflags
    sflags=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --cflags --libs hotset-sqlite) ||
      fail "pkg-config --cflags --libs hotset-sqlite fails"
    cat >"$tmp/sq.c" <<'C'
#include <hotset_sqlite.h>
#include <sqlite3.h>
#include <stdio.h>

int main(int argc, char **argv) {
  (void)argc;
  sqlite3 *db;
  sqlite3_stmt *st;
  hotset_sqlite_stats s;
  if (hotset_sqlite_install("LRU") != SQLITE_OK) return 1;
  if (sqlite3_open(argv[1], &db) != SQLITE_OK) return 2;
  if (sqlite3_exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES (42);", NULL, NULL, NULL) != SQLITE_OK)
    return 3;
  if (sqlite3_prepare_v2(db, "SELECT x FROM t", -1, &st, NULL) != SQLITE_OK) return 4;
  if (sqlite3_step(st) != SQLITE_ROW) return 5;
  printf("x %d\n", sqlite3_column_int(st, 0));
  sqlite3_finalize(st);
  sqlite3_close(db);
  hotset_sqlite_stats_get(&s);
  printf("caches %llu\n", (unsigned long long)s.caches);
  return 0;
}
C
    # shellcheck disable=SC2086
    "$cc" $extra_cflags "$tmp/sq.c" $sflags -o "$tmp/sq" ||
      fail "a program on libhotset-sqlite does not build with: $cc $sflags"
    (unset LD_LIBRARY_PATH; "$tmp/sq" "$tmp/sq.db" >"$tmp/run.log" 2>&1) ||
      { cat "$tmp/run.log"; fail "the program built with pkg-config hotset-sqlite does not run"; }
    grep -qx 'x 42' "$tmp/run.log" && ! grep -qx 'caches 0' "$tmp/run.log" ||
      { cat "$tmp/run.log"; fail "the program on libhotset-sqlite did not run on hotset's cache"; }
    rm -f "$tmp/sq" "$tmp/sq.c" "$tmp/sq.db"
  fi
  # The RocksDB adapter, when this build has it: its libraries, the preload
  # object, its header and hotset-rocksdb.pc, with which a C++ program of
  # its own builds and runs on hotset's cache (without LD_LIBRARY_PATH).
  if [ -e "$build/libhotset-rocksdb.so" ]; then
    local libdir
    libdir=$(dirname "$(dirname "$pc")")
    [ -e "$prefix/include/hotset_rocksdb.h" ] || fail "hotset_rocksdb.h was not installed"
    ls "$libdir/libhotset-rocksdb.so" "$libdir/libhotset-rocksdb.a" "$libdir/libhotset-rocksdb-preload.so" \
      >/dev/null || fail "libhotset-rocksdb.so, .a and -preload.so are not beside $soname"
    [ -e "$(dirname "$pc")/hotset-rocksdb.pc" ] || fail "no hotset-rocksdb.pc beside $pc"
    local rflags cxx=${CXX:-c++}
    rflags=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --cflags --libs hotset-rocksdb) ||
      fail "pkg-config --cflags --libs hotset-rocksdb fails"
    cat >"$tmp/rk.cc" <<'CC'
#include <hotset_rocksdb.h>
#include <cstdio>

static void del(const rocksdb::Slice &, void *) {}

int main() {
  rocksdb::LRUCacheOptions lru(1 << 20, 0, false, 0.5);
  std::shared_ptr<rocksdb::Cache> c = hotset::NewHotsetCache(lru, "lru");
  if (!c) return 1;
  static int v = 42;
  if (!c->Insert("k", &v, 10, del).ok()) return 2;
  rocksdb::Cache::Handle *h = c->Lookup("k");
  if (!h) return 3;
  std::printf("v %d %s\n", *static_cast<int *>(c->Value(h)), c->Name());
  c->Release(h);
  hs_object_cache_stats s;
  if (!hotset::GetHotsetStats(*c, &s)) return 4;
  std::printf("hits %llu\n", (unsigned long long)s.hits);
  return 0;
}
CC
    # shellcheck disable=SC2086
    # (a sanitizer build's library needs the program built with the same
    # runtime: extra_cflags carries it, as for the C programs above)
    "$cxx" -std=c++17 $extra_cflags "$tmp/rk.cc" $rflags -o "$tmp/rk" ||
      fail "a program on libhotset-rocksdb does not build with: $cxx -std=c++17 $extra_cflags $rflags"
    (unset LD_LIBRARY_PATH; "$tmp/rk" >"$tmp/run.log" 2>&1) ||
      { cat "$tmp/run.log"; fail "the program built with pkg-config hotset-rocksdb does not run"; }
    grep -qx 'v 42 HotsetCache' "$tmp/run.log" && grep -qx 'hits 1' "$tmp/run.log" ||
      { cat "$tmp/run.log"; fail "the program on libhotset-rocksdb did not run on hotset's cache"; }
    rm -f "$tmp/rk" "$tmp/rk.cc"
  fi
  echo "ok: installed into $prefix; $cc quickstart.c (and heap_engine.c) \$(pkg-config --cflags --libs hotset) run"
}

check_empty() {
  local left
  left=$(find "$1" ! -type d 2>/dev/null || true)
  [ -z "$left" ] || fail "uninstall left files behind: $left"
  [ ! -e "$1/include/hotset" ] || fail "uninstall left $1/include/hotset"
  # Nor the empty directories the install made under a prefix of its own.
  left=$(find "$1" -mindepth 1 -type d 2>/dev/null || true)
  [ -z "$left" ] || fail "uninstall left empty directories: $left"
  echo "ok: uninstall removed every file from $1"
}

first="$tmp/prefix-one"
install_to "$first"
check_prefix "$first"
if [ "$mode" = make ]; then
  # A second install with another PREFIX goes there, not to the first one.
  uninstall
  check_empty "$first"
  second="$tmp/prefix-two"
  install_to "$second"
  [ -z "$(find "$first" ! -type d 2>/dev/null || true)" ] || fail "make install PREFIX=$second installed into $first"
  check_prefix "$second"
  uninstall
  check_empty "$second"
else
  uninstall
  check_empty "$first"
  # A staged install (DESTDIR, as packagers do) puts the files under DESTDIR
  # but names the real prefix in hotset.pc.
  DESTDIR="$tmp/stage" cmake --install "$build" --prefix /opt/hotset --component Unspecified >"$tmp/install.log" 2>&1 ||
    { cat "$tmp/install.log"; fail "DESTDIR=... cmake --install --prefix /opt/hotset"; }
  pc=$(find "$tmp/stage" -name hotset.pc)
  [ "$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --variable=prefix hotset)" = /opt/hotset ] ||
    fail "a DESTDIR install's hotset.pc does not say prefix=/opt/hotset: $(cat "$pc")"
  echo "ok: DESTDIR install names prefix=/opt/hotset"
  rm -f "$manifest"
fi
