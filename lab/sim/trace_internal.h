/*
 * sim/trace_internal.h — what the trace reader's files share.
 *
 * The reader is split by concern: trace_source.c turns a file (plain or
 * zstd) into a window of decoded bytes; trace_detect.c names formats and
 * guesses them; trace_binary.c decodes the fixed-size record formats;
 * trace_text.c cuts text into lines and reads txt; trace_csv.c splits CSV
 * rows and reads column names from a header; trace_id.c turns id text into
 * 64-bit ids; trace.c ties them together behind sim/trace.h.
 *
 * The byte source keeps one buffer of decoded bytes, [pos, len) unread.
 * Decoders work in place on that window and advance pos themselves, so a
 * record costs no copy and no call beyond its decoding; they ask for more
 * with trace_src_fill only when the window holds less than they need.
 */
#ifndef HOTSET_SIM_TRACE_INTERNAL_H
#define HOTSET_SIM_TRACE_INTERNAL_H

#include "sim/trace.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <zstd.h>

/* The longest text line accepted, newline and carriage return excluded. */
#define TRACE_MAX_LINE (64u * 1024u)
/* The longest over-long line skip_bad reads past; beyond it the file is not
 * taken for text at all (see trace_text.c). */
#define TRACE_MAX_SKIPPED_LINE (16u << 20)
/* The decoded window's usual size: big enough that read() and the zstd
 * call are amortized over tens of thousands of records. */
#define TRACE_BUF_SIZE (1u << 20)
/* The window size new traces get (files smaller than it get a window of
 * their size). Only tests and the fuzzer change it, before opening, to a
 * few bytes, so that small inputs go through every refill path. */
extern size_t trace_window_size;
/* The highest CSV column number a spec may name. */
#define TRACE_CSV_MAX_COLUMN 4096u
/* How much of the start of a file content sniffing looks at. */
#define TRACE_SNIFF_BYTES (64u * 1024u)

typedef struct trace_src {
  const char *path; /* for messages; owned by the trace */
  int fd;
  uint64_t file_size; /* 0 if not a regular file */
  uint64_t raw_read;  /* bytes read from the file so far */
  bool raw_eof;       /* read() has returned 0 */

  unsigned char *buf; /* decoded bytes; [pos, len) not yet consumed */
  size_t cap, pos, len;
  bool eof; /* no decoded byte will follow buf[len - 1] */

  /* zstd only: compressed bytes read ahead, [in_pos, in_len) unused. */
  bool zstd;
  ZSTD_DStream *zds;
  unsigned char *in;
  size_t in_cap, in_pos, in_len;
  size_t zret; /* the last hint from a call that made progress; 0 at a
                  frame's end */

  /* A read or zstd failure held back until the bytes decoded before it
   * are used up. */
  hs_status failed;
  int failed_errno;
  char failed_msg[512];
} trace_src;

/* Opens `path`, reads its first bytes and sets up zstd decompression if
 * they carry the zstd magic number (or fails if `named_zst` and they do
 * not). On failure everything is released. */
hs_status trace_src_open(trace_src *s, const char *path, bool named_zst);
/* Makes at least `want` decoded bytes available at buf + pos, unless the
 * stream ends first (then eof is set and fewer are there). May move the
 * window to the start of the buffer, and grows the buffer if `want` does
 * not fit. A read or zstd failure is returned only once the bytes decoded
 * before it cannot satisfy `want`. */
hs_status trace_src_fill(trace_src *s, size_t want);
/* Bytes of the file consumed by the decoder so far. */
uint64_t trace_src_consumed(const trace_src *s);
void trace_src_close(trace_src *s);

struct hs_trace {
  trace_src src;
  char *path;
  hs_trace_format format;
  hs_csv_spec csv;
  /* csv: each column's role (csv_role[col], an enum in trace_csv.c), up to
   * the last column any role names, so a row is split once, that far. */
  unsigned char csv_role[TRACE_CSV_MAX_COLUMN + 1];
  unsigned csv_last_col;
  bool skip_bad;
  uint64_t csv_time_unit_ns; /* what one tick of the csv time column is */
  bool csv_time_is_seq;      /* the header calls it "seq": an order, not a time */
  bool header_pending;       /* csv: the header line is still to be skipped */
  unsigned vscsi_version;
  size_t record_size; /* binary formats */

  uint64_t records;  /* binary: records consumed; text: lines consumed */
  uint64_t requests; /* requests returned (the time of txt and some csv) */

  uint64_t bad;
  char first_bad[512]; /* "" until a record is skipped */
  char reason[320];
  /* What the first bytes look like, whatever format was chosen (AUTO:
   * nothing in particular), for hints in later errors. */
  hs_trace_format sniffed;

  hs_status failed; /* sticky: once a read fails, every later one does */
  int failed_errno;
  char failed_msg[512];
};

/* A bad record or line: with skip_bad counts it and returns HS_OK (the
 * caller skips it), else fails with "PATH: message". (hs_trace_read makes
 * any failure sticky, so decoders need not.) */
hs_status trace_bad(hs_trace *t, hs_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* "" or, when the start of the file looked like another format than the
 * one being read, a clause saying so ("; the start of the file looks like
 * a vscsi trace: try --format vscsi"), for errors that may come from
 * reading the wrong format. Returns buf. */
const char *trace_format_hint(const hs_trace *t, char *buf, size_t len);
/* A failure that is not about one record: "PATH: message", never skipped. */
hs_status trace_fatal(hs_trace *t, hs_status st, int sys_errno, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* trace_detect.c */
/* The format the file name says, and the suffix that said it; false if
 * none. *zst tells whether the name ends in .zst. */
bool trace_format_from_name(const char *path, hs_trace_format *f, const char **suffix, bool *zst);
/* Guesses the format from the first decoded bytes; HS_TRACE_AUTO if they
 * fit none. `why` gets a phrase saying what gave it away, or why nothing
 * did. *prose is set when the bytes are text but not a trace (a line that
 * is no id, see trace_text_is_ids); `why` then names the line. */
hs_trace_format trace_format_from_content(const unsigned char *p, size_t n, bool csv_given,
                                          char *why, size_t why_len, bool *prose);
/* Whether every line of a text sample is one id (no space or tab inside it
 * once trimmed); if not, `why` gets "line N ("...") is not an object id". */
bool trace_text_is_ids(const unsigned char *p, size_t n, char *why, size_t why_len);
/* Whether the first decoded bytes (and the file's size, if known: 0 for
 * none) fit format f; if not, `why` gets a phrase saying what does not. */
bool trace_content_fits(hs_trace_format f, const unsigned char *p, size_t n, uint64_t file_size,
                        char *why, size_t why_len);
/* The vscsi version of a first record of `n` bytes: 1 or 2, or 0 with the
 * two candidate version fields in *v1 and *v2. */
unsigned trace_vscsi_version(const unsigned char *p, size_t n, unsigned *v1, unsigned *v2);

/* trace_binary.c */
hs_status trace_binary_start(hs_trace *t);
hs_status trace_read_oraclegeneral(hs_trace *t, hs_request *reqs, size_t max, size_t *n);
hs_status trace_read_vscsi(hs_trace *t, hs_request *reqs, size_t max, size_t *n);

/* trace_text.c */
/* The next line that is not blank, without its line end; *got = false at
 * the end. The line lives in the source buffer until the next call. */
hs_status trace_next_line(hs_trace *t, const char **line, size_t *len, bool *got);
hs_status trace_read_txt(hs_trace *t, hs_request *reqs, size_t max, size_t *n);

/* trace_csv_spec.c */
/* What is wrong with a spec's columns (too large, shared, no id or half a
 * page), or NULL; the delimiter is not checked. */
const char *trace_csv_spec_problem(const hs_csv_spec *sp);
/* Whether a spec names columns at all (else the header is to name them). */
static inline bool trace_csv_spec_given(const hs_csv_spec *sp) {
  return sp->id_col || sp->rel_col || sp->block_col || sp->fork_col;
}

/* trace_csv.c */
/* Without a spec: reads the header line and picks the columns from its
 * names, or fails asking for one. */
hs_status trace_csv_start(hs_trace *t);
hs_status trace_read_csv(hs_trace *t, hs_request *reqs, size_t max, size_t *n);

/* trace_id.c */
/* An id from its text: a decimal or 0x-hex number that fits 64 bits is
 * itself, anything else is hashed. `quoted` text has "" for each ". */
uint64_t trace_id_from_text(const char *p, size_t len, bool quoted);
/* A non-negative decimal integer; false if `p` is not one or overflows. */
bool trace_parse_u64(const char *p, size_t len, uint64_t *out);

#endif
