#!/usr/bin/env bash
# The library writes no text to a stream (docs/api.md, "Output"): nothing in
# libhotset.so calls a stdio output function. Formatting is the caller's
# (hs_pool_stats_format fills a buffer); the debug build's one line before
# it stops goes out with write(2).
#
#   test_no_stdio_output.sh <libhotset.so>
set -euo pipefail
lib=$1
command -v nm >/dev/null || { echo "SKIPPED: nm (binutils) is not installed"; exit 77; }

banned='printf|fprintf|vprintf|vfprintf|dprintf|vdprintf|puts|fputs|putc|fputc|putchar|fwrite|perror|fflush|psignal|psiginfo|stdout|stderr|_IO_putc|__overflow'
# Fortified and unlocked forms too (__fprintf_chk, fputs_unlocked...).
used=$(nm -u "$lib" | awk '{print $NF}' | sed 's/@.*//' |
  grep -E "^(__)?(${banned})(_chk|_unlocked)?$" || true)
if [ -n "$used" ]; then
  echo "FAIL: libhotset.so calls stdio output functions:"
  echo "$used" | sed 's/^/  /'
  echo "The library must not write to a FILE *: return text in a caller's buffer"
  echo "(as hs_pool_stats_format does) and print it in the CLI."
  exit 1
fi
echo "ok: libhotset.so imports no stdio output function"
