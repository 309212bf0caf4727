/*
 * sim/trace.h — reading traces in libCacheSim's formats.
 *
 * A trace is a sequence of requests: an object id, a size in bytes, a time
 * stamp and, where the format carries it, the logical time of the object's
 * next request. Formats:
 *
 *   oraclegeneral  libCacheSim's binary format: packed little-endian 24-byte
 *                  records  u32 time, u64 obj_id, u32 obj_size,
 *                  i64 next_access_vtime (-1 = never again; libCacheSim
 *                  counts requests from 1, so for request i counted from
 *                  0 it is j + 1, j the object's next request)
 *   vscsi          v1: 32-byte records  u32 sn, u32 len, u32 nSG, u16 cmd,
 *                  u16 ver, u64 lbn, u64 ts;  v2: 40-byte records  u16 cmd,
 *                  u16 ver, u32 sn, u32 len, u32 nSG, u64 lbn, u64 ts, u64 rt;
 *                  the version is ver >> 8 (read from the first record;
 *                  a later record with another version is bad);
 *                  id = lbn, size = len, time = ts
 *   csv            delimited text, columns chosen by hs_csv_spec (1-based),
 *                  or without a spec by the names in a header line
 *                  (obj_id/id/key/lbn, obj_size/size, time/timestamp);
 *                  fields may be "quoted" ("" is a quote); numeric ids
 *                  (decimal or 0x-hex, fitting 64 bits) are used as they
 *                  are, other ids are hashed to 64 bits; the size is a
 *                  non-negative integer, the time a non-negative number
 *                  (a fraction is dropped)
 *                  A header may also name pid and found columns, and a
 *                  page by PostgreSQL's coordinates instead of an id:
 *                  rel/relfilenode, fork/forknum, block/blockno (time may
 *                  be called seq) — hotset's PostgreSQL trace csv
 *                  "seq,pid,rel,fork,block,found" (tools/pg-trace); see
 *                  hs_csv_spec for how its id is made
 *   txt            one id per line (numeric or hashed like csv), size 1
 *
 * Text lines end in LF or CRLF and hold at most 64 KiB; blank lines are
 * skipped. A longer line is bad as soon as 64 KiB of it have been read
 * (the rest is not read first: it may never end); with skip_bad it is read
 * past if it ends within 16 MiB, and fails the read if it does not.
 * Without a time column the time is the request number, from 1.
 *
 * Any of them may be compressed with zstd (told by the zstd magic number at
 * the start; a name ending in .zst without it is an error): it is
 * decompressed while streaming, never to disk.
 *
 * HS_TRACE_AUTO goes by the name first (.oracleGeneral or .bin, .vscsi,
 * .csv, .txt, any case, maybe followed by .zst), else by the first 64 KiB
 * of (decompressed) content: text with a delimiter in its first line is
 * csv, other text txt if every line is one id (no space or tab inside);
 * binary records are vscsi if every record's version field agrees,
 * oraclegeneral if the next-access times and time stamps are plausible;
 * anything else fails asking for a format. Text that is not a trace (a
 * README) fails naming its first line that is no id, also when its name
 * ends in .txt.
 *
 * A format given, or taken from the name, is checked against the same
 * first bytes: if they do not fit it (binary read as text, records without
 * vscsi's version field, a size that is no whole number of records...) and
 * do look like another format, the open fails naming that format, e.g.
 * "x.vscsi: not oraclegeneral: its 3643904 bytes are no whole number of
 * 24-byte records; it looks like a vscsi trace (...): try --format vscsi
 * or leave --format out". Content that fits no known format is read as
 * given.
 *
 * Errors: a truncated record, a malformed CSV row, an unknown format or an
 * unreadable file is an hs_status with a one-line message naming the file,
 * the record (1-based) or line number, and the problem, e.g.
 * "t.bin: record 11: truncated (got 5 of 24 bytes)" or
 * "t.csv: line 3: bad size "x" in column 4 (want a non-negative integer)".
 * With skip_bad, bad records are counted (hs_trace_bad_records) and skipped
 * instead, and the first message is kept for the report; a broken file
 * (read error, corrupt or truncated zstd) still fails. Format problems
 * (unknown format, bad vscsi version, CSV columns neither given nor named
 * in a header) fail hs_trace_open; a failed read fails every later read.
 */
#ifndef HOTSET_SIM_TRACE_H
#define HOTSET_SIM_TRACE_H

#include "hotset/status.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum hs_trace_format {
  HS_TRACE_AUTO = 0,
  HS_TRACE_ORACLEGENERAL,
  HS_TRACE_VSCSI,
  HS_TRACE_CSV,
  HS_TRACE_TXT
} hs_trace_format;

/* "oraclegeneral", "vscsi", "csv", "txt" (and "auto"). */
const char *hs_trace_format_name(hs_trace_format f);
/* Parses a format name; false if unknown. */
bool hs_trace_format_parse(const char *name, hs_trace_format *out);

/* A PostgreSQL page as one object id: relation (relfilenode) in the high
 * 32 bits, fork in the next 4, block in the low 28:
 *   id = rel << 32 ^ fork << 28 ^ block
 *   relation = id >> 32, fork = (id >> 28) & 0xf, block = id & 0x0fffffff
 * A row whose rel is 2^32 or more, fork 16 or more, or block 2^28 or more
 * (2 TiB of 8 KiB pages) is a bad record: its id would collide. */
#define HS_PG_BLOCK_BITS  28
#define HS_PG_BLOCK_LIMIT (1u << HS_PG_BLOCK_BITS)
#define HS_PG_FORK_LIMIT  16u
static inline uint64_t hs_pg_page_id(uint32_t rel, unsigned fork, uint32_t block) {
  return (uint64_t)rel << 32 ^ (uint64_t)fork << HS_PG_BLOCK_BITS ^ block;
}

typedef struct hs_csv_spec {
  unsigned id_col;    /* 1-based; required unless rel_col and block_col are
                         given instead */
  unsigned size_col;  /* 0: none (size 1) */
  unsigned time_col;  /* 0: none (time = request number) */
  unsigned pid_col;   /* 0: none (pid 0) */
  unsigned found_col; /* 0: none (found -1); t/f, true/false, 1/0 */
  unsigned rel_col;   /* a PostgreSQL page instead of an id column: */
  unsigned fork_col;  /* id = hs_pg_page_id(rel, fork, block); fork 0 */
  unsigned block_col; /* when fork_col is 0 */
  bool header;        /* skip the first line */
  char delimiter;     /* default ',' */
} hs_csv_spec;

/* Parses "id=COL[,size=COL][,time=COL][,pid=COL][,found=COL][,header]
 * [,delimiter=X]", or with rel=COL,block=COL[,fork=COL] instead of id=COL,
 * COL from 1 to 4096, in any order (X may be a character other than a
 * quote, or "tab", "space", "comma", "semicolon", "pipe"; with space, runs
 * of spaces separate fields). Strict: an unknown or repeated item, a bad
 * column, two roles on one column, rel without block (or the reverse),
 * fork without them, or id beside rel/block is HS_ERR_INVALID with a
 * message quoting the spec; *out is left alone then. */
hs_status hs_csv_spec_parse(const char *s, hs_csv_spec *out);

#define HS_TRACE_NO_NEXT INT64_MIN /* the format carries no next-access time */

typedef struct hs_request {
  uint64_t id;
  uint64_t size; /* bytes (txt: 1) */
  uint64_t time; /* the format's time stamp (csv without a time column,
                    txt: the request number, from 1) */
  int64_t next;  /* oraclegeneral: next_access_vtime, -1 = never;
                    others: HS_TRACE_NO_NEXT */
  uint32_t pid;  /* the process that made the request; 0 = not in the
                    trace (csv with a pid column only) */
  int8_t found;  /* whether the traced cache found the page: 1 yes, 0 no,
                    -1 unknown (csv with a found column only) */
} hs_request;

typedef struct hs_trace hs_trace;

typedef struct hs_trace_options {
  hs_trace_format format;    /* HS_TRACE_AUTO: guess from name and content */
  hs_csv_spec csv;           /* for HS_TRACE_CSV (no id_col, rel_col or block_col:
                                not given) */
  bool skip_bad;             /* count and skip bad records instead of failing */
  uint64_t csv_time_unit_ns; /* what one tick of a csv time column is, in
                                nanoseconds; 0 = a second */
} hs_trace_options;

/* opts NULL: auto, no CSV spec, no skipping. On failure *out is NULL. */
hs_status hs_trace_open(const char *path, const hs_trace_options *opts, hs_trace **out);
/* What the trace turned out to be (after HS_TRACE_AUTO: the guess), and
 * whether it is zstd-compressed. */
hs_trace_format hs_trace_format_of(const hs_trace *t);
bool hs_trace_compressed(const hs_trace *t);
/* Whether requests carry sizes: oraclegeneral and vscsi do, csv with a
 * size column does; txt and csv without one give every request size 1. */
bool hs_trace_has_sizes(const hs_trace *t);
/* Nanoseconds per tick of the requests' `time`, or 0 when the trace has no
 * time stamps (txt, csv without a time column or with only a "seq" column:
 * `time` is then an order). oraclegeneral counts seconds (as libCacheSim
 * writes it), vscsi microseconds, csv what
 * hs_trace_options.csv_time_unit_ns says. */
uint64_t hs_trace_time_unit_ns(const hs_trace *t);
/* Whether requests carry a pid, and the traced cache's found flag: only
 * csv with a pid (found) column does. */
bool hs_trace_has_pids(const hs_trace *t);
bool hs_trace_has_found(const hs_trace *t);
/* A sentence saying how the format was chosen, e.g. "guessed vscsi (v1)
 * from the name" — for `--format auto` to report. */
const char *hs_trace_format_reason(const hs_trace *t);

/* The next request: HS_OK with *got = true, or HS_OK with *got = false at
 * the end, or an error (see above) with *got = false. */
hs_status hs_trace_next(hs_trace *t, hs_request *req, bool *got);
/* Reads up to `max` requests into `reqs`; *n is how many. Faster than
 * hs_trace_next in a loop. *n < max only at the end, or on an error: then
 * *n requests before the bad spot were stored (good ones, which the caller
 * may use or drop) and the error is returned. */
hs_status hs_trace_read(hs_trace *t, hs_request *reqs, size_t max, size_t *n);

/* Bad records skipped so far (with skip_bad), and the first message ("" if
 * none). */
uint64_t hs_trace_bad_records(const hs_trace *t);
const char *hs_trace_first_bad(const hs_trace *t);
/* Bytes of the (possibly compressed) file consumed so far, and its size
 * (0 if it is not a regular file), for progress reports. */
uint64_t hs_trace_bytes_read(const hs_trace *t);
uint64_t hs_trace_file_size(const hs_trace *t);

void hs_trace_close(hs_trace *t);

/* Writes requests (for gen-trace and tests) in the format the name says,
 * so that a file reads back as what it is called:
 *   .csv   a header "time,obj_id,obj_size,next_access_vtime" and one row
 *          per request, in decimal (next -1 = never)
 *   .txt   the id alone, one a line (size, time and next are dropped)
 *   any other name (.oracleGeneral, .bin or none) oraclegeneral records
 * each compressed with zstd if the name then ends in .zst. A name ending
 * in .vscsi (hotset writes no vscsi) fails with HS_ERR_INVALID. Values are
 * written as given: the writer does not check or convert next. On failure
 * of open *out is NULL; a failed write fails every later one; close always
 * frees the writer. */
typedef struct hs_trace_writer hs_trace_writer;
hs_status hs_trace_writer_open(const char *path, hs_trace_writer **out);
/* HS_TRACE_ORACLEGENERAL, HS_TRACE_CSV or HS_TRACE_TXT. */
hs_trace_format hs_trace_writer_format(const hs_trace_writer *w);
hs_status hs_trace_write(hs_trace_writer *w, uint32_t time, uint64_t id, uint32_t size,
                         int64_t next);
hs_status hs_trace_writer_close(hs_trace_writer *w); /* flushes; reports write errors */

#endif
