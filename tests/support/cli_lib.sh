# tests/cli_lib.sh — what the command-line tests share, sourced by them:
#   cli_setup NAME          scratch directory, counters, $out and $err
#   run ARGS...             runs hotset, keeping stdout, stderr and status
#   ok / bad MESSAGE        count a check (bad also prints stderr's start)
#   expect_status N WHAT
#   expect_usage_error NEEDLE WHAT [PREFIX]
#                           status 2, nothing on stdout, and exactly two
#                           stderr lines: the error, starting with PREFIX
#                           (default "hotset") and naming NEEDLE, then the
#                           hint "run '... --help' for the ..." (never the
#                           whole usage)
#   expect_one_line_error NEEDLE WHAT
#                           status 1 and exactly one stderr line naming NEEDLE
#   cli_finish              prints "N passed, N failed"; its status is the
#                           script's
#   traces_dir REPO_ROOT    sets TRACES to the sample traces' directory by
#                           the one rule (tests/support/traces_dir.h): $HOTSET_TRACES,
#                           else REPO/../shared/traces, else REPO/../traces;
#                           empty if none exists, and TRACES_LOOKED to the
#                           paths looked at, for the SKIPPED line
#   json_line_field FILE LINE KEY
#                           one numeric or string field of a flat JSON line
#                           (quotes removed; empty if absent)
# The scripts set HOTSET (the binary) before calling cli_setup.

cli_setup() { # name
  passed=0
  failed=0
  scratch=$(mktemp -d "${TMPDIR:-/tmp}/hotset-test-$1-XXXXXX") || exit 1
  trap 'rm -rf "$scratch"' EXIT
  out=$scratch/out
  err=$scratch/err
}

ok() { passed=$((passed + 1)); }

bad() {
  failed=$((failed + 1))
  echo "FAIL: $*" >&2
  if [[ -s $err ]]; then sed 's/^/  stderr: /' "$err" | head -n 5 >&2; fi
}

run() {
  "$HOTSET" "$@" >"$out" 2>"$err"
  status=$?
}

expect_status() { # want description
  if [[ $status -eq $1 ]]; then ok; else bad "$2: exit status $status, want $1"; fi
}

expect_usage_error() { # needle description [prefix]
  local prefix=${3:-hotset} first second
  expect_status 2 "$2"
  first=$(sed -n 1p "$err")
  second=$(sed -n 2p "$err")
  if [[ $first == "$prefix"* && $first == *"$1"* ]]; then ok; else
    bad "$2: first stderr line \"$first\" does not name $1"
  fi
  if [[ $second == "run 'hotset"*" --help' for the "* && $(wc -l <"$err") -eq 2 ]]; then ok; else
    bad "$2: stderr is not the error and one line \"run '... --help' for the ...\" ($(wc -l <"$err") lines)"
  fi
  if [[ ! -s $out ]]; then ok; else bad "$2: printed to stdout"; fi
}

expect_one_line_error() { # needle description
  expect_status 1 "$2"
  if [[ $(wc -l <"$err") -eq 1 ]] && grep -q -- "$1" "$err"; then ok; else
    bad "$2: want one stderr line naming \"$1\""
  fi
}

cli_finish() {
  echo "$passed passed, $failed failed"
  [[ $failed -eq 0 ]]
}

traces_dir() { # repo_root
  local candidates=() c
  if [[ -n ${HOTSET_TRACES:-} ]]; then
    candidates=("$HOTSET_TRACES")
  else
    candidates=("$1/../shared/traces" "$1/../traces")
  fi
  TRACES=
  TRACES_LOOKED=
  for c in "${candidates[@]}"; do
    if [[ -d $c ]]; then
      TRACES=$c
      return
    fi
    TRACES_LOOKED+=${TRACES_LOOKED:+, }$c
  done
}

json_line_field() { # file line key
  sed -n "$2p" "$1" | grep -o "\"$3\":[^,}]*" | head -n 1 | cut -d: -f2- | tr -d '"'
}
