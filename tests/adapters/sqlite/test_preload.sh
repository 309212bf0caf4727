#!/usr/bin/env bash
# test_preload.sh — libhotset-sqlite.so preloaded into unmodified programs:
# the sqlite3 shell and python3's sqlite3 module answer right, with
# HOTSET_SQLITE_STATS=1 stderr carries exactly the one statistics line
# (fetches > 0: hotset's cache served the pages) under the policy asked
# for, HOTSET_SQLITE_SCAN=off turns scan detection off, and a bad
# HOTSET_SQLITE_POLICY costs one clear stderr line and nothing else.
#
#   test_preload.sh <libhotset-sqlite.so> [sanitizers the library was built with]
so=$1
sanitized=${2:-}
# shellcheck source=../cli_lib.sh
. "$(dirname "$0")/../../support/cli_lib.sh"

if [[ -n $sanitized ]]; then
  echo "SKIPPED: test_sqlite_preload: a library built with -fsanitize=$sanitized cannot be preloaded into unsanitized programs (the sanitizer runtime must load first)"
  exit 77
fi
cli_setup sqlite-preload

# The query makes 20000 rows, several times SQLite's default cache, and
# checks them; integrity_check reads every page again.
query="PRAGMA cache_size = 50; CREATE TABLE t(x, pad);
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 20000)
  INSERT INTO t SELECT i, zeroblob(100) FROM c;
SELECT count(*), sum(x) FROM t; PRAGMA integrity_check;"
want="20000|200010000
ok"

# stats_field NAME: a field of the statistics line in $err.
stats_field() { grep -o " $1=[^ ]*" "$err" | head -n 1 | cut -d= -f2; }

expect_stats_line() { # policy scan_run description
  if [[ $(wc -l <"$err") -eq 1 ]] && grep -q '^hotset-sqlite: policy=' "$err"; then ok; else
    bad "$3: want exactly one statistics line on stderr"
  fi
  local fetches
  fetches=$(stats_field fetches)
  if [[ ${fetches:-0} -gt 0 ]]; then ok; else bad "$3: fetches=${fetches:-none}, want > 0"; fi
  if [[ $(stats_field policy) == "$1"* ]]; then ok; else bad "$3: policy=$(stats_field policy), want $1"; fi
  if [[ $(stats_field scan_run) == "$2" ]]; then ok; else bad "$3: scan_run=$(stats_field scan_run), want $2"; fi
}

expect_output() { # description
  expect_status 0 "$1"
  if [[ $(cat "$out") == "$want" ]]; then ok; else bad "$1: printed \"$(cat "$out")\""; fi
}

# Only a program that loads the shared libsqlite3 can get hotset's cache.
uses_shared_sqlite() { ldd "$1" 2>/dev/null | grep -q 'libsqlite3\.so'; }

shell=$(command -v sqlite3 || true)
if [[ -z $shell ]]; then
  echo "SKIPPED: test_sqlite_preload: no sqlite3 shell (apt-get install sqlite3)"
elif ! uses_shared_sqlite "$shell"; then
  echo "SKIPPED: test_sqlite_preload: $shell has SQLite built in, not the shared libsqlite3"
else
  rm -f "$scratch/a.db"
  HOTSET_SQLITE_STATS=1 LD_PRELOAD=$so "$shell" "$scratch/a.db" "$query" >"$out" 2>"$err"
  status=$?
  expect_output "sqlite3 shell"
  expect_stats_line lru 32 "sqlite3 shell"

  rm -f "$scratch/a.db"
  HOTSET_SQLITE_STATS=1 HOTSET_SQLITE_POLICY=lru HOTSET_SQLITE_SCAN=off LD_PRELOAD=$so \
    "$shell" "$scratch/a.db" "$query" >"$out" 2>"$err"
  status=$?
  expect_output "sqlite3 shell, lru, scan detection off"
  expect_stats_line lru 0 "sqlite3 shell, lru, scan detection off"
  if [[ $(stats_field scan_fetches) == 0 ]]; then ok; else bad "scan detection off: scan_fetches=$(stats_field scan_fetches)"; fi

  # Another simulator's name for a policy is accepted, and the statistics
  # give the policy's own name, as every hotset output does.
  for pair in LRU:lru TwoQ:2q S3-FIFO:s3fifo; do
    rm -f "$scratch/a.db"
    HOTSET_SQLITE_STATS=1 HOTSET_SQLITE_POLICY=${pair%%:*} LD_PRELOAD=$so \
      "$shell" "$scratch/a.db" "$query" >"$out" 2>"$err"
    status=$?
    expect_output "sqlite3 shell, policy ${pair%%:*}"
    if [[ $(stats_field policy) == "${pair#*:}" ]]; then ok; else
      bad "policy ${pair%%:*}: the statistics say policy=$(stats_field policy), want ${pair#*:}"
    fi
  done

  # Without HOTSET_SQLITE_STATS: nothing on stderr.
  rm -f "$scratch/a.db"
  LD_PRELOAD=$so "$shell" "$scratch/a.db" "$query" >"$out" 2>"$err"
  status=$?
  expect_output "sqlite3 shell, no statistics"
  if [[ ! -s $err ]]; then ok; else bad "no HOTSET_SQLITE_STATS: stderr is not empty"; fi

  # A policy hotset does not know: one line naming it, SQLite's own cache
  # (so no statistics line: no hotset cache was made), the right answer.
  rm -f "$scratch/a.db"
  HOTSET_SQLITE_STATS=1 HOTSET_SQLITE_POLICY=bogus LD_PRELOAD=$so \
    "$shell" "$scratch/a.db" "$query" >"$out" 2>"$err"
  status=$?
  expect_output "sqlite3 shell, HOTSET_SQLITE_POLICY=bogus"
  if [[ $(wc -l <"$err") -eq 1 ]] && grep -q '"bogus".*SQLite.s own page cache stays' "$err"; then ok; else
    bad "HOTSET_SQLITE_POLICY=bogus: want one stderr line naming it"
  fi
fi

python=$(command -v python3 || true)
# The interpreter itself, not a wrapper script (pyenv's shims are bash).
[[ -n $python ]] && python=$("$python" -c 'import sys; print(sys.executable)' 2>/dev/null)
module=""
[[ -n $python ]] && module=$("$python" -c 'import _sqlite3; print(_sqlite3.__file__)' 2>/dev/null)
if [[ -z $python || -z $module ]]; then
  echo "SKIPPED: test_sqlite_preload: no python3 with the sqlite3 module"
elif ! uses_shared_sqlite "$module"; then
  echo "SKIPPED: test_sqlite_preload: python3's sqlite3 module has SQLite built in"
else
  rm -f "$scratch/p.db"
  HOTSET_SQLITE_STATS=1 HOTSET_SQLITE_POLICY=s3fifo LD_PRELOAD=$so "$python" -c '
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.executescript(sys.argv[2].rsplit(";", 3)[0])
db.commit()
print("|".join(str(v) for v in db.execute("SELECT count(*), sum(x) FROM t").fetchone()))
print(db.execute("PRAGMA integrity_check").fetchone()[0])
' "$scratch/p.db" "$query" >"$out" 2>"$err"
  status=$?
  expect_output "python3 sqlite3"
  expect_stats_line s3fifo 32 "python3 sqlite3"
fi

cli_finish
