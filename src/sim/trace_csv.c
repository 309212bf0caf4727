/*
 * sim/trace_csv.c — CSV traces: splitting rows, and columns from a header.
 *
 * Only the columns the spec names are looked at, and a row is split only
 * as far as the last of them, in place: no allocation, no copy per row.
 *
 * Quoting follows RFC 4180 within a line: a field that starts with " runs
 * to the next lone ", with "" standing for one quote; spaces around a field
 * are not part of it. A quoted field cannot span lines (traces have no use
 * for that, and it would let one stray quote swallow the rest of the file);
 * an unclosed quote is a bad row. A quote inside an unquoted field is just
 * a character, as in most producers' output. With delimiter=space, runs of
 * spaces separate fields, since whitespace-aligned columns are the usual
 * reason for that choice.
 *
 * Values: the id as in trace_id.c; the size a non-negative decimal
 * integer; the time a non-negative decimal, its fraction dropped (some
 * traces keep seconds with decimals, and the simulator's clock is whole).
 *
 * Without a spec, the first line must be a header naming the columns
 * (libCacheSim's CloudPhysics csv starts "version,time,op,size,lbn"); the
 * id, size and time columns are picked by name, preferring the more
 * specific names (obj_id over id, obj_size over size). Guessing columns
 * from data rows instead would be a coin toss between, say, an lbn and a
 * sequence number, so without names we ask.
 */
#include "core/error.h"
#include "sim/trace_internal.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

typedef struct csv_field {
  const char *p;
  size_t len;
  bool escaped; /* quoted, with "" inside */
} csv_field;

static bool is_pad(char c, char delim) {
  return (c == ' ' || c == '\t') && c != delim;
}

/* Splits the field at *pos off the line; sets *last if it is the line's
 * last. NULL on success, else what is wrong. */
static const char *next_field(const char *line, size_t len, size_t *pos, char delim, csv_field *f,
                              bool *last) {
  size_t i = *pos;
  if (delim == ' ')
    while (i < len && line[i] == ' ') i++;
  while (i < len && is_pad(line[i], delim)) i++;
  f->escaped = false;
  if (i < len && line[i] == '"') {
    size_t j = i + 1;
    for (;;) {
      const char *q = memchr(line + j, '"', len - j);
      if (!q) return "unclosed quote";
      size_t k = (size_t)(q - line);
      if (k + 1 < len && line[k + 1] == '"') {
        f->escaped = true;
        j = k + 2;
        continue;
      }
      f->p = line + i + 1;
      f->len = k - i - 1;
      i = k + 1;
      break;
    }
    while (i < len && is_pad(line[i], delim)) i++;
    if (i < len && line[i] != delim) return "text after a closing quote";
    *last = i == len;
    *pos = i + 1;
    if (delim == ' ' && !*last) {
      /* Trailing spaces end the line rather than start an empty field. */
      while (i < len && line[i] == ' ') i++;
      if (i == len) *last = true;
    }
    return NULL;
  }
  const char *d = memchr(line + i, delim, len - i);
  size_t end = d ? (size_t)(d - line) : len;
  f->p = line + i;
  f->len = end - i;
  while (f->len > 0 && is_pad(f->p[f->len - 1], delim)) f->len--;
  *last = !d;
  *pos = end + 1;
  if (delim == ' ' && d) {
    /* Trailing spaces end the line rather than start an empty field. */
    size_t k = end;
    while (k < len && line[k] == ' ') k++;
    if (k == len) *last = true;
  }
  return NULL;
}

/* The value for a message: cut to fit `cap` (with "..."), control bytes
 * as ?, so the message stays one printable line. */
static const char *shown(char *buf, size_t cap, const csv_field *f) {
  size_t n = f->len < cap - 4 ? f->len : cap - 4;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)f->p[i];
    buf[i] = c < 0x20 || c == 0x7F ? '?' : (char)c;
  }
  if (n < f->len) memcpy(buf + n, "...", 3), n += 3;
  buf[n] = '\0';
  return buf;
}

/* A time stamp: decimal digits, maybe a fraction, which is dropped. */
static bool parse_time(const csv_field *f, uint64_t *out) {
  const char *dot = f->escaped ? NULL : memchr(f->p, '.', f->len);
  size_t whole = dot ? (size_t)(dot - f->p) : f->len;
  if (f->escaped || !trace_parse_u64(f->p, whole, out)) return false;
  for (size_t i = whole + 1; i < f->len; i++)
    if (f->p[i] < '0' || f->p[i] > '9') return false;
  return true;
}

/* Decodes one row into *r; on a bad row reports it through trace_bad and
 * sets *ok = false (the status says whether to go on). */
static hs_status parse_row(hs_trace *t, const char *line, size_t len, hs_request *r, bool *ok) {
  const hs_csv_spec *sp = &t->csv;
  unsigned maxcol = sp->id_col;
  if (sp->size_col > maxcol) maxcol = sp->size_col;
  if (sp->time_col > maxcol) maxcol = sp->time_col;
  csv_field id = {0}, size = {0}, time = {0}, f;
  unsigned long long lineno = (unsigned long long)t->records;
  size_t pos = 0;
  bool last = false;
  unsigned col = 0;
  char val[48];
  *ok = false;
  while (col < maxcol && !last) {
    const char *why = next_field(line, len, &pos, sp->delimiter, &f, &last);
    col++;
    if (why) return trace_bad(t, HS_ERR_CORRUPT, "line %llu: column %u: %s", lineno, col, why);
    if (col == sp->id_col) id = f;
    if (col == sp->size_col) size = f;
    if (col == sp->time_col) time = f;
  }
  if (col < maxcol) {
    /* Name the first column the spec wants that the line lacks. */
    unsigned want = maxcol;
    const char *what = want == sp->id_col ? "id" : want == sp->size_col ? "size" : "time";
    if (sp->time_col > col && sp->time_col <= want) want = sp->time_col, what = "time";
    if (sp->size_col > col && sp->size_col <= want) want = sp->size_col, what = "size";
    if (sp->id_col > col && sp->id_col <= want) want = sp->id_col, what = "id";
    return trace_bad(t, HS_ERR_CORRUPT, "line %llu: missing column %u (%s); the line has %u",
                     lineno, want, what, col);
  }
  if (id.len == 0)
    return trace_bad(t, HS_ERR_CORRUPT, "line %llu: column %u (id) is empty", lineno, sp->id_col);
  r->size = 1;
  if (sp->size_col && (size.escaped || !trace_parse_u64(size.p, size.len, &r->size)))
    return trace_bad(t, HS_ERR_CORRUPT,
                     "line %llu: bad size \"%s\" in column %u (want a non-negative integer)",
                     lineno, shown(val, sizeof val, &size), sp->size_col);
  if (sp->time_col && !parse_time(&time, &r->time))
    return trace_bad(t, HS_ERR_CORRUPT,
                     "line %llu: bad time \"%s\" in column %u (want a non-negative number)", lineno,
                     shown(val, sizeof val, &time), sp->time_col);
  r->id = trace_id_from_text(id.p, id.len, id.escaped);
  r->next = HS_TRACE_NO_NEXT;
  *ok = true;
  return HS_OK;
}

hs_status trace_read_csv(hs_trace *t, hs_request *reqs, size_t max, size_t *n) {
  size_t got = 0;
  while (got < max) {
    const char *line;
    size_t len;
    bool more, ok;
    hs_status st = trace_next_line(t, &line, &len, &more);
    if (st != HS_OK || !more) {
      *n = got;
      return st;
    }
    if (t->header_pending) {
      t->header_pending = false;
      continue;
    }
    hs_request *r = reqs + got;
    st = parse_row(t, line, len, r, &ok);
    if (st != HS_OK) {
      *n = got;
      return st;
    }
    if (!ok) continue;
    t->requests++;
    if (!t->csv.time_col) r->time = t->requests;
    got++;
  }
  *n = got;
  return HS_OK;
}

/* Column names, most specific first within each role. */
static const char *const id_names[] = {"obj_id", "object_id", "objid", "id", "key", "lbn", "lba"};
static const char *const size_names[] = {"obj_size", "object_size", "size",
                                         "len",      "length",      "bytes"};
static const char *const time_names[] = {"time", "timestamp", "ts", "clock_time"};

/* The rank of `f` in `names` (lower is better), or -1. */
static int name_rank(const csv_field *f, const char *const *names, size_t count) {
  for (size_t i = 0; i < count; i++)
    if (strlen(names[i]) == f->len && strncasecmp(names[i], f->p, f->len) == 0) return (int)i;
  return -1;
}

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

hs_status trace_csv_start(hs_trace *t) {
  if (t->csv.delimiter == '\0') t->csv.delimiter = ',';
  if (t->csv.id_col != 0) {
    t->header_pending = t->csv.header;
    return HS_OK;
  }
  const char *line;
  size_t len;
  bool got;
  hs_status st = trace_next_line(t, &line, &len, &got);
  if (st != HS_OK) return st;
  hs_csv_spec sp = {.header = true, .delimiter = ','};
  if (!got) {
    /* An empty file: no rows to read, so any columns do. */
    sp.id_col = 1;
    t->csv = sp;
    return HS_OK;
  }
  for (const char *d = ",\t;|"; *d; d++) {
    if (memchr(line, *d, len)) {
      sp.delimiter = *d;
      break;
    }
  }
  int best[3] = {-1, -1, -1};
  size_t pos = 0;
  bool last = false;
  csv_field f;
  for (unsigned col = 1; !last && col <= TRACE_CSV_MAX_COLUMN; col++) {
    if (next_field(line, len, &pos, sp.delimiter, &f, &last)) break;
    int r;
    if ((r = name_rank(&f, id_names, COUNT(id_names))) >= 0 && (best[0] < 0 || r < best[0]))
      best[0] = r, sp.id_col = col;
    if ((r = name_rank(&f, size_names, COUNT(size_names))) >= 0 && (best[1] < 0 || r < best[1]))
      best[1] = r, sp.size_col = col;
    if ((r = name_rank(&f, time_names, COUNT(time_names))) >= 0 && (best[2] < 0 || r < best[2]))
      best[2] = r, sp.time_col = col;
  }
  if (sp.id_col == 0) {
    csv_field whole = {line, len, false};
    char val[48];
    return hs_fail(HS_ERR_INVALID, 0,
                   "%s: no CSV columns given, and the first line (\"%s\") names no id column "
                   "(obj_id, id, key, lbn, ...): give them with --csv "
                   "id=COL[,size=COL][,time=COL][,header]",
                   t->path, shown(val, sizeof val, &whole));
  }
  t->csv = sp;
  size_t used = strlen(t->reason);
  snprintf(t->reason + used, sizeof t->reason - used, "; columns from the header: id=%u",
           sp.id_col);
  used = strlen(t->reason);
  if (sp.size_col) snprintf(t->reason + used, sizeof t->reason - used, " size=%u", sp.size_col);
  used = strlen(t->reason);
  if (sp.time_col) snprintf(t->reason + used, sizeof t->reason - used, " time=%u", sp.time_col);
  return HS_OK;
}
