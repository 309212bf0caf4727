#!/usr/bin/env bash
#
# tests/test_relations_cli.sh — the files a data directory must hold, through
# the CLI (issue 37, findings 3 and 9: `verify` said ok with a relation file
# missing):
#   - a crash-test directory lists its relation files (`hotset relations`),
#     and `verify` says ok;
#   - a listed file removed: `verify` exits 1 naming it, `relations` marks
#     it MISSING, `crash-test --verify` (which opens a pool) is refused
#     naming it and printing `hotset relations ... --forget ... --force`;
#   - a listed file cut short: `verify` and `relations` say so;
#   - `--forget` without --force changes nothing (every file byte-identical)
#     and exits 1; the printed command, run as printed, takes the file off
#     the list, and `verify` is ok again;
#   - the list removed: `verify` exits 1 naming it (the control file says
#     there is one); `--rebuild --force` writes a new one;
#   - `--forget` and `--rebuild` refuse while the directory's lock is held;
#   - usage errors are one line and a hint;
#   - a relation file copied in from another directory (its pages pass their
#     checksums but carry another directory's mark): `verify` and an open
#     refuse it; `--replace-damaged` lists, changes nothing without
#     --force, refuses beside a lock holder or when the control file is the
#     stranger, and run as the refusal prints it keeps the pages' bytes in
#     damaged-pages/ and leaves a directory `verify` finds ok; a flipped
#     byte replaces that page alone.
#
# Usage: test_relations_cli.sh PATH/TO/hotset
set -u

HOTSET=${1:?usage: test_relations_cli.sh PATH/TO/hotset}
source "$(dirname "$0")/../support/cli_lib.sh"
cli_setup relations

run relations
expect_usage_error "--dir is required" "relations without --dir" "hotset relations"
run relations --dir "$scratch" --force
expect_usage_error "--force goes with" "relations --force alone" "hotset relations"
run relations --dir "$scratch" --forget 1 --rebuild
expect_usage_error "exclude each other" "relations --forget with --rebuild" "hotset relations"
run relations --dir "$scratch" --forget 1 --replace-damaged 1
expect_usage_error "exclude each other" "relations --forget with --replace-damaged" "hotset relations"
# reindex: its usage; the rebuild itself is tests/test_pk_reindex.c's, and
# the damage matrix runs the command as lookups print it.
run reindex --dir "$scratch" --heap 5
expect_usage_error "--heap and --index are required" "reindex without --index" "hotset reindex"
run reindex --dir "$scratch" --heap 5 --index 5
expect_usage_error "name one relation" "reindex of a relation into itself" "hotset reindex"
run reindex --dir "$scratch/nosuch" --heap 5 --index 6 --force
expect_one_line_error "not a directory" "reindex of a missing directory"
run reindex --dir "$scratch" --heap 5 --index 6
expect_status 1 "reindex without --force"
if grep -q "run again with --force" "$out"; then ok; else bad "reindex without --force does not say so: $(cat "$out")"; fi

d=$scratch/d
# The crash test's child runs until killed; a second of it leaves a
# directory with checkpoints (every 150 ms), its two relations listed.
timeout -s KILL 2 "$HOTSET" crash-test --workload --dir "$d" >"$out" 2>"$err" &
wait $! 2>/dev/null
if [[ -f $d/hotset.relations ]]; then ok; else bad "crash-test --workload left no hotset.relations"; fi

run relations --dir "$d"
expect_status 0 "relations of a crashed directory"
if grep -q "^1: at least [1-9][0-9]* blocks, [0-9]* on disk: ok$" "$out" &&
  grep -q "^2: at least" "$out" && grep -q ": ok$" "$out"; then ok; else
  bad "relations does not list files 1 and 2 with their sizes: $(cat "$out")"
fi
run verify --dir "$d"
expect_status 0 "verify of an intact directory"

# A listed file removed.
cp "$d/2" "$scratch/2.saved"
rm "$d/2"
run verify --dir "$d"
expect_status 1 "verify with a listed file removed"
if grep -q "\"$d/2\" is missing, but $d/hotset.relations requires it" "$out" &&
  grep -q "FAILED" "$out"; then ok; else
  bad "verify does not name the missing file: $(cat "$out")"
fi
run verify --dir "$d" --json
if grep -q "\"file\":\"$d/2\",\"problem\":\"missing\"" "$out"; then ok; else
  bad "verify --json does not report the missing file: $(cat "$out")"
fi
run relations --dir "$d"
expect_status 1 "relations with a listed file removed"
if grep -q "^2: at least [0-9]* blocks, not on disk: MISSING$" "$out"; then ok; else
  bad "relations does not mark file 2 missing: $(cat "$out")"
fi
run crash-test --verify --dir "$d"
expect_status 1 "crash-test --verify with a listed file removed"
if grep -q "\"$d/2\" is missing" "$err" &&
  grep -q "\`hotset relations --dir $d --forget 2 --force\`" "$err"; then ok; else
  bad "the refusal does not name the file and the way out: $(cat "$err")"
fi

# The file back, then one block short.
cp "$scratch/2.saved" "$d/2"
size=$(stat -c %s "$d/2")
truncate -s $((size - 4096)) "$d/2"
run verify --dir "$d"
expect_status 1 "verify with a listed file cut short"
if grep -q "\"$d/2\" has [0-9]* blocks of 4096 bytes, but" "$out"; then ok; else
  bad "verify does not say the file is short: $(cat "$out")"
fi
run relations --dir "$d" --json
expect_status 1 "relations --json with a file cut short"
if grep -q '"file":"2",.*"state":"SHORT"' "$out"; then ok; else
  bad "relations --json does not mark file 2 short: $(cat "$out")"
fi

# Accepting the loss: without --force nothing changes.
sums() { find "$d" -type f ! -name '*.lock' -print0 | sort -z | xargs -0 sha1sum; }
before=$(sums)
run relations --dir "$d" --forget 2
expect_status 1 "relations --forget without --force"
if grep -q "nothing changed" "$out"; then ok; else bad "--forget without --force does not say nothing changed"; fi
if [[ $(sums) == "$before" ]]; then ok; else bad "--forget without --force changed files"; fi
run relations --dir "$d" --forget 7
expect_one_line_error "is not on the list" "relations --forget of an unlisted file"

# The way out exactly as the refusal prints it.
run crash-test --verify --dir "$d"
hint=$(grep -o '`hotset relations [^`]*`' "$err" | head -n 1 | tr -d '`')
if [[ -n $hint ]]; then ok; else bad "crash-test --verify printed no way out: $(cat "$err")"; fi
eval "\"\$HOTSET\" ${hint#hotset }" >"$out" 2>"$err"
status=$?
expect_status 0 "the printed way out ($hint)"
run verify --dir "$d"
expect_status 0 "verify after --forget"

# The list itself lost: the control file says there is one.
rm "$d/hotset.relations"
run verify --dir "$d"
expect_status 1 "verify with the list removed"
if grep -q "hotset.relations is missing" "$out"; then ok; else bad "verify does not name the lost list: $(cat "$out")"; fi
run relations --dir "$d"
expect_one_line_error "hotset.relations is missing" "relations with the list removed"
run relations --dir "$d" --rebuild --force
expect_status 0 "relations --rebuild --force"
run relations --dir "$d"
expect_status 0 "relations after --rebuild"
if grep -q "^1: at least 0 blocks" "$out" && grep -q "^2: at least 0 blocks" "$out"; then ok; else
  bad "the rebuilt list does not hold files 1 and 2: $(cat "$out")"
fi

# Refused while a pool holds the directory: the lock a pool takes is an
# flock of hotset.lock, which flock(1) holds here.
flock -n "$d/hotset.lock" "$HOTSET" relations --dir "$d" --rebuild --force >"$out" 2>"$err"
status=$?
expect_status 1 "relations --rebuild --force beside a lock holder"
if grep -q "is in use by" "$err"; then ok; else bad "--rebuild --force ran beside a lock holder: $(cat "$err")"; fi
flock -n "$d/hotset.lock" "$HOTSET" relations --dir "$d" --forget 1 --force >"$out" 2>"$err"
status=$?
expect_status 1 "relations --forget --force beside a lock holder"
if grep -q "is in use by" "$err"; then ok; else bad "--forget --force ran beside a lock holder: $(cat "$err")"; fi
run relations --dir "$d"
if grep -q "^1: at least" "$out"; then ok; else bad "--forget beside a lock holder changed the list"; fi

# Pages that fail their checksums, or that another directory wrote: the
# way out gives up what they held, keeping their bytes.
run relations --dir "$d" --replace-damaged nosuch
expect_one_line_error "is not a relation file's name" "relations --replace-damaged of a bad name"
run relations --dir "$d" --replace-damaged 1
expect_status 0 "relations --replace-damaged with nothing damaged"
if grep -q "nothing to replace" "$out"; then ok; else bad "an intact file is not said to be intact: $(cat "$out")"; fi
# Recovered and shut down cleanly: nothing in the log repairs the pages now.
run crash-test --verify --dir "$d"
expect_status 0 "crash-test --verify of the directory"
e=$scratch/e # another directory: another system id, the same relations
timeout -s KILL 2 "$HOTSET" crash-test --workload --dir "$e" >"$out" 2>"$err" &
wait $! 2>/dev/null
cp "$d/1" "$scratch/1.saved"
cp "$e/1" "$d/1"
run verify --dir "$d"
expect_status 1 "verify with a relation file of another directory"
if grep -q "written by another data directory" "$out"; then ok; else
  bad "verify does not tell another directory's pages: $(cat "$out")"
fi
run crash-test --verify --dir "$d"
expect_status 1 "crash-test --verify with a relation file of another directory"
hint=$(grep -o '`hotset relations [^`]*--replace-damaged[^`]*`' "$err" | head -n 1 | tr -d '`')
if grep -q "was written by another data directory" "$err" && [[ -n $hint ]]; then ok; else
  bad "the refusal does not say the file is another directory's, with the way out: $(cat "$err")"
fi
before=$(sums)
run relations --dir "$d" --replace-damaged 1
expect_status 1 "relations --replace-damaged without --force"
if grep -q "nothing changed" "$out" && grep -q "written by another data directory" "$out"; then ok; else
  bad "--replace-damaged without --force does not list the pages: $(cat "$out")"
fi
if [[ $(sums) == "$before" ]]; then ok; else bad "--replace-damaged without --force changed files"; fi
# With the control file of the other directory, the log (and any other
# relation file) tells the control file is the stranger: nothing replaced.
cp "$d/hotset.control" "$scratch/control.saved"
cp "$e/hotset.control" "$d/hotset.control"
cp "$scratch/1.saved" "$d/1"
before=$(sums)
run relations --dir "$d" --replace-damaged 1 --force
expect_one_line_error "the control file may be the stranger" "relations --replace-damaged under another's control file"
if [[ $(sums) == "$before" ]]; then ok; else bad "--replace-damaged under another's control file changed files"; fi
cp "$scratch/control.saved" "$d/hotset.control"
cp "$e/1" "$d/1"
flock -n "$d/hotset.lock" "$HOTSET" relations --dir "$d" --replace-damaged 1 --force >"$out" 2>"$err"
status=$?
expect_status 1 "relations --replace-damaged --force beside a lock holder"
if grep -q "is in use by" "$err"; then ok; else bad "--replace-damaged ran beside a lock holder: $(cat "$err")"; fi
eval "\"\$HOTSET\" ${hint#hotset }" >"$out" 2>"$err"
status=$?
expect_status 0 "the printed way out ($hint)"
kept=$(ls "$d/damaged-pages" 2>/dev/null | wc -l)
if [[ $kept -ge 1 ]] && cmp -s "$d/damaged-pages/1.0" <(head -c 4096 "$e/1"); then ok; else
  bad "the replaced pages' bytes are not kept in damaged-pages: $(ls "$d/damaged-pages" 2>&1)"
fi
run verify --dir "$d"
expect_status 0 "verify after --replace-damaged"
# One flipped byte: that page alone.
printf '\x5a' | dd of="$d/2" bs=1 seek=100 conv=notrunc status=none
run relations --dir "$d" --replace-damaged 2 --force
expect_status 0 "relations --replace-damaged --force of one flipped byte"
if grep -q "block 0 fails its checksum" "$out" && grep -q "done: 1 of [0-9]* blocks" "$out"; then ok; else
  bad "--replace-damaged did not replace exactly the flipped page: $(cat "$out")"
fi
run verify --dir "$d"
expect_status 0 "verify after replacing the flipped page"

cli_finish
