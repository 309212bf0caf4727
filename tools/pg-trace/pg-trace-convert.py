#!/usr/bin/env python3
"""Turns pg-trace.bt output into hotset's PostgreSQL trace csv and into
libCacheSim's oracleGeneral format.

Input lines are "A nsecs pid fork block tablespace database relfilenode
found" (other lines, such as bpftrace's "Attaching N probes...", are
skipped; a "Lost N events" line is an error, since a trace with holes would
mislead every simulation made from it). Lines are sorted by their clock
first: bpftrace prints from per-CPU buffers, not in time order. The
accesses are then numbered from 1 (seq).

Outputs (either or both; a name ending in .zst is compressed with the zstd
command):
  --csv FILE     seq,pid,rel,fork,block,found (found 1 or 0), which hotset
                 reads by its header
  --oracle FILE  24-byte little-endian records u32 time, u64 obj_id,
                 u32 obj_size, i64 next_access_vtime, with
                 obj_id = rel << 32 ^ fork << 28 ^ block, time = seq, size
                 --page-size (default 8192: every PostgreSQL buffer holds one
                 8 KiB page, so byte-mode sizes mean shared_buffers), and
                 next_access_vtime the seq of the page's next access (-1:
                 none), libCacheSim's convention

The object id keeps only the relfilenode: two databases' relations with
the same relfilenode would share ids, so the converter fails when it sees
that (give --database OID to keep one database's accesses and those of the
shared catalogs, database 0, whose relfilenodes no database reuses).
"""

import argparse
import struct
import subprocess
import sys

BLOCK_LIMIT = 1 << 28
FORK_LIMIT = 16


def fail(msg):
    sys.stderr.write("pg-trace-convert: %s\n" % msg)
    sys.exit(1)


def read_accesses(path, database):
    """Returns (nsecs, pid, rel, fork, block, found) tuples in time order."""
    rows = []
    owner = {}  # relfilenode -> (tablespace, database) first seen with it
    with open(path, "r", encoding="utf-8", errors="replace") as f:
        for lineno, line in enumerate(f, 1):
            parts = line.split()
            if not parts:
                continue
            if parts[0] == "Lost":
                fail("%s: line %d: bpftrace lost events (%s): the trace has holes; "
                     "record again with a larger BPFTRACE_PERF_RB_PAGES"
                     % (path, lineno, line.strip()))
            if parts[0] != "A":
                continue
            if len(parts) != 9:
                fail("%s: line %d: want 9 fields (A nsecs pid fork block tablespace database "
                     "relfilenode found), got %d" % (path, lineno, len(parts)))
            try:
                nsecs, pid, fork, block, spc, db, rel, found = (int(x) for x in parts[1:])
            except ValueError:
                fail("%s: line %d: a field is not an integer: %s" % (path, lineno, line.strip()))
            if database is not None and db not in (database, 0):
                continue
            if not 0 <= fork < FORK_LIMIT:
                fail("%s: line %d: fork %d is not from 0 to 15" % (path, lineno, fork))
            if not 0 <= block < BLOCK_LIMIT:
                fail("%s: line %d: block %d does not fit the object id (below 2^28)"
                     % (path, lineno, block))
            if not 0 <= rel < 1 << 32:
                fail("%s: line %d: relfilenode %d is not below 2^32" % (path, lineno, rel))
            if found not in (0, 1):
                fail("%s: line %d: found %d is not 0 or 1" % (path, lineno, found))
            if owner.setdefault(rel, (spc, db)) != (spc, db):
                fail("%s: line %d: relfilenode %d is in tablespace/database %d/%d and %d/%d: "
                     "their pages would share ids; give --database OID"
                     % ((path, lineno, rel) + owner[rel] + (spc, db)))
            rows.append((nsecs, lineno, pid, rel, fork, block, found))
    rows.sort()  # by clock, then by line for equal clocks
    return rows


def open_output(name):
    """A binary file, or a zstd process writing it when the name ends in .zst."""
    if name.endswith(".zst"):
        out = open(name, "wb")
        proc = subprocess.Popen(["zstd", "-q", "-19", "-c"], stdin=subprocess.PIPE, stdout=out)
        out.close()
        return proc.stdin, proc
    return open(name, "wb"), None


def close_output(f, proc, name):
    f.close()
    if proc is not None and proc.wait() != 0:
        fail("%s: zstd failed" % name)


def page_id(rel, fork, block):
    return rel << 32 ^ fork << 28 ^ block


def write_csv(name, rows):
    f, proc = open_output(name)
    f.write(b"seq,pid,rel,fork,block,found\n")
    lines = []
    for seq, r in enumerate(rows, 1):
        lines.append("%d,%d,%d,%d,%d,%d\n" % (seq, r[2], r[3], r[4], r[5], r[6]))
        if len(lines) == 65536:
            f.write("".join(lines).encode())
            lines = []
    f.write("".join(lines).encode())
    close_output(f, proc, name)


def write_oracle(name, rows, page_size):
    ids = [page_id(r[3], r[4], r[5]) for r in rows]
    # The next access of each: a backward pass, remembering each page's
    # last seen (1-based) position.
    nxt = [-1] * len(ids)
    last = {}
    for i in range(len(ids) - 1, -1, -1):
        nxt[i] = last.get(ids[i], -1)
        last[ids[i]] = i + 1
    f, proc = open_output(name)
    rec = struct.Struct("<IQIq")
    buf = bytearray()
    for i, obj in enumerate(ids):
        buf += rec.pack(i + 1, obj, page_size, nxt[i])
        if len(buf) >= 1 << 20:
            f.write(buf)
            buf = bytearray()
    f.write(buf)
    close_output(f, proc, name)


def main():
    ap = argparse.ArgumentParser(
        description="Convert pg-trace.bt output to hotset's PostgreSQL csv and oracleGeneral.")
    ap.add_argument("input", help="pg-trace.bt output")
    ap.add_argument("--csv", help="write seq,pid,rel,fork,block,found here (.zst: compressed)")
    ap.add_argument("--oracle", help="write oracleGeneral records here (.zst: compressed)")
    ap.add_argument("--page-size", type=int, default=8192,
                    help="obj_size in the oracleGeneral records (default 8192)")
    ap.add_argument("--database", type=int, help="keep only this database's accesses (an OID) and the shared catalogs'")
    a = ap.parse_args()
    if not a.csv and not a.oracle:
        ap.error("give --csv FILE, --oracle FILE or both")
    if not 0 < a.page_size < 1 << 32:
        ap.error("--page-size must be from 1 to 2^32-1")
    rows = read_accesses(a.input, a.database)
    if a.csv:
        write_csv(a.csv, rows)
    if a.oracle:
        write_oracle(a.oracle, rows, a.page_size)
    hits = sum(r[6] for r in rows)
    sys.stderr.write("pg-trace-convert: %d accesses, %d found, %d missed, %d pids\n"
                     % (len(rows), hits, len(rows) - hits, len({r[2] for r in rows})))


if __name__ == "__main__":
    main()
