#!/usr/bin/env bash
#
# tests/docs_commands.sh — the docs cannot name what does not exist. For
# every `hotset SUBCOMMAND [LAB] ...` the README and docs/*.md quote (in a
# code block or a code span), the subcommand (and bench's lab) must be one
# the tool has, and every --flag after it must be one that subcommand's
# --help lists (or the --no- form of one, or the flag a --no- flag undoes).
# And every file of the repository they name (src/..., tests/...,
# tools/..., examples/..., include/..., docs/...) must exist.
#
# Usage: docs_commands.sh REPO_ROOT PATH/TO/hotset
# Prints "N passed, N failed" last and exits non-zero if anything failed.

set -u
top=${1:?usage: docs_commands.sh REPO_ROOT PATH/TO/hotset}
HOTSET=${2:?usage: docs_commands.sh REPO_ROOT PATH/TO/hotset}
passed=0
failed=0
ok() { passed=$((passed + 1)); }
bad() {
  failed=$((failed + 1))
  echo "FAIL: $*"
}
scratch=$(mktemp -d "${TMPDIR:-/tmp}/hotset-docs-XXXXXX") || exit 1
trap 'rm -rf "$scratch"' EXIT

subcommands=$("$HOTSET" --help | sed -n 's/^  \([a-z-]*\)  .*/\1/p')
labs=$("$HOTSET" --help | sed -n 's/^  bench  *the labs: //p' | sed 's/ ([^)]*)//g; s/,//g')
is_in() { # word list...
  local w=$1
  shift
  for x in "$@"; do [[ $x == "$w" ]] && return 0; done
  return 1
}

# The --help text of a subcommand (and lab), kept per command.
help_of() { # key args...
  local f="$scratch/help-$1"
  shift
  [[ -f $f ]] || "$HOTSET" "$@" --help >"$f" 2>&1
  cat "$f"
}

docs=("$top/README.md" "$top"/docs/*.md)

# ---- commands and their flags ----
# The command's text: from "hotset" to the end of its code span or line,
# cut at a shell separator or a comment.
while IFS=: read -r file line text; do
  cmd=$(sed -E 's/^.*\bhotset //' <<<"$text")
  cmd=${cmd%%\`*}
  cmd=$(sed -E 's/( \| | \|\| | && | ; | #|\) ).*//' <<<"$cmd")
  read -r sub lab rest <<<"$cmd"
  is_in "$sub" $subcommands || continue # prose: "hotset does not..."
  where="${file#"$top"/}:$line"
  key=$sub
  args=("$sub")
  if [[ $sub == bench ]]; then
    if ! is_in "$lab" $labs; then
      [[ $lab == -* || -z $lab || $lab == LAB* || $lab == "<"* ]] && continue
      bad "$where: hotset bench $lab: no such lab"
      continue
    fi
    key="bench-$lab"
    args=(bench "$lab")
  fi
  help=$(help_of "$key" "${args[@]}")
  for flag in $(grep -oE '(^| )--[a-z][a-z0-9-]*' <<<"$cmd" | tr -d ' '); do
    name=${flag#--}
    if grep -qE -- "(^|[^a-z-])--$name([^a-z-]|$)" <<<"$help" || [[ $name == help ]]; then
      ok
    elif [[ $name == no-* ]] && grep -qE -- "--${name#no-}([^a-z-]|$)" <<<"$help"; then
      ok
    elif grep -qE -- "--no-$name([^a-z-]|$)" <<<"$help"; then
      ok
    else
      bad "$where: hotset ${args[*]} has no flag $flag (quoted as: hotset $cmd)"
    fi
  done
done < <(grep -nE '(^|[ `(])(build/)?hotset [a-z]' "${docs[@]}" | grep -E '`|^[^:]*:[0-9]+:(\$ )?(build/)?hotset ')

# Lines inside fenced code blocks too (the grep above sees only lines that
# start with the command or hold a code span): every fenced line that is a
# hotset command goes through the same check.
for f in "${docs[@]}"; do
  awk -v F="$f" '/^```/{on=!on; next} on && /(^|[ (])(build\/)?hotset [a-z]/ {print F ":" NR ":" $0}' "$f"
done >"$scratch/fenced"
while IFS=: read -r file line text; do
  cmd=$(sed -E 's/^.*\bhotset //' <<<"$text")
  cmd=$(sed -E 's/( \| | \|\| | && | ; | #|\) ).*//' <<<"$cmd")
  read -r sub lab rest <<<"$cmd"
  is_in "$sub" $subcommands || continue
  where="${file#"$top"/}:$line"
  key=$sub
  args=("$sub")
  if [[ $sub == bench ]]; then
    is_in "$lab" $labs || continue
    key="bench-$lab"
    args=(bench "$lab")
  fi
  help=$(help_of "$key" "${args[@]}")
  for flag in $(grep -oE '(^| )--[a-z][a-z0-9-]*' <<<"$cmd" | tr -d ' '); do
    name=${flag#--}
    if grep -qE -- "(^|[^a-z-])--$name([^a-z-]|$)" <<<"$help" || [[ $name == help ]] ||
      { [[ $name == no-* ]] && grep -qE -- "--${name#no-}([^a-z-]|$)" <<<"$help"; } ||
      grep -qE -- "--no-$name([^a-z-]|$)" <<<"$help"; then
      ok
    else
      bad "$where: hotset ${args[*]} has no flag $flag (in a code block: hotset $cmd)"
    fi
  done
done <"$scratch/fenced"

# ---- files the docs name ----
for f in "${docs[@]}"; do
  grep -oE '(^|[ `(])(src|tests|tools|examples|include|docs)/[A-Za-z0-9_./*-]*[A-Za-z0-9_*]' "$f" |
    sed -E 's/^[ `(]//' | sort -u | while read -r path; do
    case $path in
    *'*'* | */) continue ;; # a pattern, a directory's contents
    esac
    if [[ -e $top/$path ]]; then echo ok; else echo "bad ${f#"$top"/} names $path, which does not exist"; fi
  done
done >"$scratch/files"
passed=$((passed + $(grep -c '^ok$' "$scratch/files")))
while read -r _ msg; do bad "$msg"; done < <(grep '^bad ' "$scratch/files")

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
