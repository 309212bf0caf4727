/*
 * sim/trace.c — opening a trace, choosing its format, and reading it.
 *
 * Opening does all the deciding: the file is opened (and found to be zstd
 * or not), the format is taken as given, from the name, or from the first
 * 64 KiB of content, and the format's start-up runs (the vscsi version,
 * the CSV header). So every "what is this file" error comes from
 * hs_trace_open, before the caller has read a single request, and
 * hs_trace_format_reason can say how the choice was made.
 *
 * Reading dispatches once per batch, not per request, to the format's
 * decoder, which fills the caller's array in a tight loop; hs_trace_next is
 * a batch of one for callers that do not care about speed.
 *
 * Errors are sticky: after a failed read every later read fails with the
 * same status and message, so a caller that drops one error (or reads
 * past it) still cannot mistake a broken trace for a short one. With
 * skip_bad, bad records are counted and the first message is kept, for the
 * end-of-run report; failures of the file itself (I/O, zstd) still fail.
 */
#include "core/error.h"
#include "sim/trace_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

hs_status trace_bad(hs_trace *t, hs_status st, const char *fmt, ...) {
  char msg[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (!t->skip_bad) return hs_fail(st, 0, "%s: %s", t->path, msg);
  if (t->bad++ == 0) snprintf(t->first_bad, sizeof t->first_bad, "%s: %s", t->path, msg);
  return HS_OK;
}

hs_status trace_fatal(hs_trace *t, hs_status st, int sys_errno, const char *fmt, ...) {
  char msg[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return hs_fail(st, sys_errno, "%s: %s", t->path, msg);
}

/* A caller may fill hs_csv_spec by hand rather than with
 * hs_csv_spec_parse; hold it to the same rules. */
static hs_status check_spec(const char *path, hs_csv_spec *sp) {
  if (sp->delimiter == '\0') sp->delimiter = ',';
  const char *why = trace_csv_spec_problem(sp);
  if (why) return hs_fail(HS_ERR_INVALID, 0, "%s: %s", path, why);
  if (sp->delimiter == '"' || sp->delimiter == '\n' || sp->delimiter == '\r')
    return hs_fail(HS_ERR_INVALID, 0, "%s: a quote or a line end cannot be the CSV delimiter",
                   path);
  return HS_OK;
}

const char *trace_format_hint(const hs_trace *t, char *buf, size_t len) {
  buf[0] = '\0';
  if (t->sniffed != HS_TRACE_AUTO && t->sniffed != t->format)
    snprintf(buf, len, "; the start of the file looks like %s %s trace: try --format %s",
             t->sniffed == HS_TRACE_ORACLEGENERAL ? "an" : "a", hs_trace_format_name(t->sniffed),
             hs_trace_format_name(t->sniffed));
  return buf;
}

/* The first decoded bytes, at most TRACE_SNIFF_BYTES of them. */
static hs_status sample(hs_trace *t, const unsigned char **p, size_t *n) {
  hs_status st = trace_src_fill(&t->src, TRACE_SNIFF_BYTES);
  if (st != HS_OK) return st;
  const trace_src *s = &t->src;
  *p = s->buf + s->pos;
  *n = s->len - s->pos < TRACE_SNIFF_BYTES ? s->len - s->pos : TRACE_SNIFF_BYTES;
  return HS_OK;
}

/* A format given by the user or by the name is checked against the
 * content: reading vscsi records as oraclegeneral ones "works" to the last
 * record, which then is "truncated", and an oraclegeneral file read as
 * vscsi fails on a version field. So when the content does not fit the
 * format but does look like another one, the open fails naming the one it
 * looks like. Content that fits, or fits nothing known, is read as told:
 * a given format is the user's call. A txt trace by name must still be
 * one id a line, as by content. */
static hs_status check_content(hs_trace *t, bool given, bool name_known, hs_trace_format by_name,
                               const char *suffix) {
  const unsigned char *p;
  size_t n;
  hs_status st = sample(t, &p, &n);
  if (st != HS_OK) return st;
  char looks_why[128], fit_why[128];
  bool prose;
  t->sniffed = trace_format_from_content(p, n, trace_csv_spec_given(&t->csv), looks_why,
                                         sizeof looks_why, &prose);
  const char *name = hs_trace_format_name(t->format), *looks = hs_trace_format_name(t->sniffed);
  uint64_t size = t->src.zstd ? 0 : t->src.file_size;
  bool fits = trace_content_fits(t->format, p, n, size, fit_why, sizeof fit_why);
  if (fits && !given && t->format == HS_TRACE_TXT &&
      !trace_text_is_ids(p, n, fit_why, sizeof fit_why))
    return hs_fail(HS_ERR_INVALID, 0,
                   "%s: not a txt trace (one id per line): %s; give --format txt to read it "
                   "anyway",
                   t->path, fit_why);
  if (fits || t->sniffed == HS_TRACE_AUTO || t->sniffed == t->format) return HS_OK;
  const char *article = t->sniffed == HS_TRACE_ORACLEGENERAL ? "an" : "a";
  if (given)
    return hs_fail(
        HS_ERR_INVALID, 0, "%s: not %s: %s%s; it looks like %s %s trace (%s): try --format %s%s",
        t->path, name, fit_why, t->src.zstd ? " (after zstd decompression)" : "", article, looks,
        looks_why, looks, !name_known || by_name == t->sniffed ? " or leave --format out" : "");
  return hs_fail(HS_ERR_INVALID, 0,
                 "%s: the name says %s (%s), but %s%s; it looks like %s %s trace (%s): give "
                 "--format %s",
                 t->path, name, suffix, fit_why, t->src.zstd ? " (after zstd decompression)" : "",
                 article, looks, looks_why, looks);
}

/* Picks the format; fills t->format and the "how" part of t->reason. */
static hs_status choose_format(hs_trace *t, hs_trace_format given, bool name_known,
                               hs_trace_format by_name, const char *suffix, char *how,
                               size_t how_len) {
  if (given != HS_TRACE_AUTO) {
    t->format = given;
    snprintf(how, how_len, "as given");
    return check_content(t, true, name_known, by_name, suffix);
  }
  if (name_known) {
    t->format = by_name;
    snprintf(how, how_len, "from the name (%s)", suffix);
    return check_content(t, false, name_known, by_name, suffix);
  }
  const unsigned char *p;
  size_t n;
  hs_status st = sample(t, &p, &n);
  if (st != HS_OK) return st;
  char why[128];
  bool prose;
  t->format =
      trace_format_from_content(p, n, trace_csv_spec_given(&t->csv), why, sizeof why, &prose);
  t->sniffed = t->format;
  const char *z = t->src.zstd ? " (after zstd decompression)" : "";
  if (prose)
    return hs_fail(
        HS_ERR_INVALID, 0,
        "%s: not a trace%s: text, but %s (a txt trace holds one id per line, a csv "
        "trace names its columns in its first line); give --format txt or csv to read it anyway",
        t->path, z, why);
  if (t->format == HS_TRACE_AUTO)
    return hs_fail(HS_ERR_INVALID, 0,
                   "%s: cannot tell the trace format from the name or the content (%s%s); give "
                   "--format oraclegeneral, vscsi, csv or txt",
                   t->path, why, t->src.zstd ? ", after zstd decompression" : "");
  snprintf(how, how_len, "from the content (%s)", why);
  return HS_OK;
}

hs_status hs_trace_open(const char *path, const hs_trace_options *opts, hs_trace **out) {
  if (!out) return hs_fail(HS_ERR_INVALID, 0, "hs_trace_open: no result pointer");
  *out = NULL;
  if (!path || !*path) return hs_fail(HS_ERR_INVALID, 0, "hs_trace_open: no trace path given");
  hs_trace_options o = opts ? *opts : (hs_trace_options){.format = HS_TRACE_AUTO};
  if ((unsigned)o.format > HS_TRACE_TXT)
    return hs_fail(HS_ERR_INVALID, 0, "%s: unknown trace format %d", path, (int)o.format);
  hs_status st = trace_csv_spec_given(&o.csv) ? check_spec(path, &o.csv) : HS_OK;
  if (st != HS_OK) return st;

  hs_trace *t = calloc(1, sizeof *t);
  if (!t) return hs_fail(HS_ERR_NOMEM, 0, "%s: out of memory", path);
  t->src.fd = -1;
  t->path = strdup(path);
  if (!t->path) {
    free(t);
    return hs_fail(HS_ERR_NOMEM, 0, "%s: out of memory", path);
  }
  t->csv = o.csv;
  t->skip_bad = o.skip_bad;
  t->csv_time_unit_ns = o.csv_time_unit_ns ? o.csv_time_unit_ns : 1000000000u;

  hs_trace_format by_name = HS_TRACE_AUTO;
  const char *suffix = "";
  bool zst;
  bool name_known = trace_format_from_name(t->path, &by_name, &suffix, &zst);
  st = trace_src_open(&t->src, t->path, zst);
  char how[192];
  if (st == HS_OK) st = choose_format(t, o.format, name_known, by_name, suffix, how, sizeof how);
  if (st == HS_OK && (t->format == HS_TRACE_ORACLEGENERAL || t->format == HS_TRACE_VSCSI))
    st = trace_binary_start(t);
  if (st == HS_OK) {
    char version[16] = "";
    if (t->format == HS_TRACE_VSCSI && t->vscsi_version)
      snprintf(version, sizeof version, " (v%u)", t->vscsi_version);
    snprintf(t->reason, sizeof t->reason, "%s%s%s %s%s",
             o.format == HS_TRACE_AUTO ? "guessed " : "", hs_trace_format_name(t->format), version,
             how, t->src.zstd ? ", zstd-compressed" : "");
    if (t->format == HS_TRACE_CSV) st = trace_csv_start(t);
  }
  if (st != HS_OK) {
    hs_trace_close(t);
    return st;
  }
  *out = t;
  return HS_OK;
}

hs_trace_format hs_trace_format_of(const hs_trace *t) {
  return t->format;
}

bool hs_trace_compressed(const hs_trace *t) {
  return t->src.zstd;
}

bool hs_trace_has_sizes(const hs_trace *t) {
  if (t->format == HS_TRACE_TXT) return false;
  if (t->format == HS_TRACE_CSV) return t->csv.size_col != 0;
  return true;
}

uint64_t hs_trace_time_unit_ns(const hs_trace *t) {
  switch (t->format) {
  case HS_TRACE_ORACLEGENERAL:
    return 1000000000u; /* libCacheSim's: seconds */
  case HS_TRACE_VSCSI:
    return 1000u; /* microseconds */
  case HS_TRACE_CSV:
    /* A sequence number orders requests; it is no time stamp. */
    return t->csv.time_col && !t->csv_time_is_seq ? t->csv_time_unit_ns : 0;
  default:
    return 0;
  }
}

bool hs_trace_has_pids(const hs_trace *t) {
  return t->format == HS_TRACE_CSV && t->csv.pid_col != 0;
}

bool hs_trace_has_found(const hs_trace *t) {
  return t->format == HS_TRACE_CSV && t->csv.found_col != 0;
}

const char *hs_trace_format_reason(const hs_trace *t) {
  return t->reason;
}

hs_status hs_trace_read(hs_trace *t, hs_request *reqs, size_t max, size_t *n) {
  if (!n) return hs_fail(HS_ERR_INVALID, 0, "hs_trace_read: no count pointer");
  *n = 0;
  if (!t || (!reqs && max))
    return hs_fail(HS_ERR_INVALID, 0, "hs_trace_read: no trace or no request array");
  if (t->failed) return hs_fail(t->failed, t->failed_errno, "%s", t->failed_msg);
  if (max == 0) return HS_OK;
  hs_status st;
  switch (t->format) {
  case HS_TRACE_ORACLEGENERAL:
    st = trace_read_oraclegeneral(t, reqs, max, n);
    break;
  case HS_TRACE_VSCSI:
    st = trace_read_vscsi(t, reqs, max, n);
    break;
  case HS_TRACE_CSV:
    st = trace_read_csv(t, reqs, max, n);
    break;
  case HS_TRACE_TXT:
    st = trace_read_txt(t, reqs, max, n);
    break;
  default:
    st = hs_fail(HS_ERR_INVALID, 0, "%s: no format chosen", t->path);
    break;
  }
  if (st != HS_OK) {
    t->failed = st;
    t->failed_errno = hs_last_errno();
    snprintf(t->failed_msg, sizeof t->failed_msg, "%s", hs_last_error());
  }
  return st;
}

hs_status hs_trace_next(hs_trace *t, hs_request *req, bool *got) {
  if (!got) return hs_fail(HS_ERR_INVALID, 0, "hs_trace_next: no result pointer");
  size_t n;
  hs_status st = hs_trace_read(t, req, 1, &n);
  *got = n == 1;
  return st;
}

uint64_t hs_trace_bad_records(const hs_trace *t) {
  return t->bad;
}

const char *hs_trace_first_bad(const hs_trace *t) {
  return t->first_bad;
}

uint64_t hs_trace_bytes_read(const hs_trace *t) {
  return trace_src_consumed(&t->src);
}

uint64_t hs_trace_file_size(const hs_trace *t) {
  return t->src.file_size;
}

void hs_trace_close(hs_trace *t) {
  if (!t) return;
  trace_src_close(&t->src);
  free(t->path);
  free(t);
}
