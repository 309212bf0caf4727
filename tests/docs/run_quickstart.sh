#!/bin/sh
# Runs the README's example in a fresh directory, twice (the second run finds
# the relation already there), and checks what it prints.
bin=$1
d=$(mktemp -d) || exit 1
trap 'rm -rf "$d"' EXIT
out=$("$bin" "$d/data") || { echo "$out"; echo "0 passed, 1 failed"; exit 1; }
echo "$out"
echo "$out" | grep -q '^block 0: "hello, buffer pool" (hit)$' || { echo "0 passed, 1 failed"; exit 1; }
out=$("$bin" "$d/data") || { echo "$out"; echo "0 passed, 1 failed"; exit 1; }
echo "$out" | grep -q '^block 1: "hello, buffer pool" (hit)$' || { echo "$out"; echo "0 passed, 1 failed"; exit 1; }
echo "2 passed, 0 failed"
