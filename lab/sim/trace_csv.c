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
 *
 * hotset's PostgreSQL trace csv (tools/pg-trace) names its columns
 * seq,pid,rel,fork,block,found: with no id column, rel and block (and fork)
 * make the id (hs_pg_page_id), seq orders the rows (no time stamp), and pid and found fill the
 * request's fields of those names. A block number that does not fit the id
 * is a bad record rather than an id that silently collides with another.
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

/* What a column holds. ROLE_NONE columns are split past, not looked at. */
enum csv_role {
  ROLE_NONE,
  ROLE_ID,
  ROLE_SIZE,
  ROLE_TIME,
  ROLE_PID,
  ROLE_FOUND,
  ROLE_REL,
  ROLE_FORK,
  ROLE_BLOCK,
  ROLE_COUNT
};
static const char *const role_name[ROLE_COUNT] = {"",      "id",  "size", "time", "pid",
                                                  "found", "rel", "fork", "block"};

static void spec_columns(const hs_csv_spec *sp, unsigned col[ROLE_COUNT]) {
  col[ROLE_NONE] = 0;
  col[ROLE_ID] = sp->id_col;
  col[ROLE_SIZE] = sp->size_col;
  col[ROLE_TIME] = sp->time_col;
  col[ROLE_PID] = sp->pid_col;
  col[ROLE_FOUND] = sp->found_col;
  col[ROLE_REL] = sp->rel_col;
  col[ROLE_FORK] = sp->fork_col;
  col[ROLE_BLOCK] = sp->block_col;
}

/* Fills t->csv_role and t->csv_last_col from the spec. */
static void plan_columns(hs_trace *t) {
  unsigned col[ROLE_COUNT];
  spec_columns(&t->csv, col);
  memset(t->csv_role, ROLE_NONE, sizeof t->csv_role);
  t->csv_last_col = 0;
  for (unsigned r = ROLE_ID; r < ROLE_COUNT; r++) {
    if (!col[r]) continue;
    t->csv_role[col[r]] = (unsigned char)r;
    if (col[r] > t->csv_last_col) t->csv_last_col = col[r];
  }
}

/* found: t/f, true/false, 1/0 (PostgreSQL prints booleans as t and f). */
static bool parse_found(const csv_field *f, int8_t *out) {
  static const struct {
    const char *text;
    int8_t value;
  } words[] = {{"t", 1}, {"f", 0}, {"true", 1}, {"false", 0}, {"1", 1}, {"0", 0}};
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
    if (strlen(words[i].text) == f->len && strncasecmp(words[i].text, f->p, f->len) == 0) {
      *out = words[i].value;
      return true;
    }
  }
  return false;
}

/* An unsigned integer column below `limit`; else a bad record saying what
 * the column wants. */
static hs_status parse_bounded(hs_trace *t, const csv_field *fields, enum csv_role role,
                               uint64_t limit, const char *want, uint64_t *out, bool *ok) {
  const csv_field *f = &fields[role];
  unsigned col[ROLE_COUNT];
  spec_columns(&t->csv, col);
  if (!f->escaped && trace_parse_u64(f->p, f->len, out) && *out < limit) {
    *ok = true;
    return HS_OK;
  }
  char val[48];
  *ok = false;
  return trace_bad(t, HS_ERR_CORRUPT, "line %llu: bad %s \"%s\" in column %u (want %s)",
                   (unsigned long long)t->records, role_name[role], shown(val, sizeof val, f),
                   col[role], want);
}

/* The id of a PostgreSQL page row; *ok false after a bad record. */
static hs_status page_id(hs_trace *t, const csv_field *fields, uint64_t *id, bool *ok) {
  uint64_t rel, fork = 0, block;
  hs_status st = parse_bounded(t, fields, ROLE_REL, (uint64_t)1 << 32,
                               "a relation number below 2^32", &rel, ok);
  if (st == HS_OK && *ok && t->csv.fork_col)
    st = parse_bounded(t, fields, ROLE_FORK, HS_PG_FORK_LIMIT, "a fork number from 0 to 15", &fork,
                       ok);
  if (st == HS_OK && *ok)
    st = parse_bounded(t, fields, ROLE_BLOCK, HS_PG_BLOCK_LIMIT,
                       "a block number below 2^28 = 268435456, which the object id has room for",
                       &block, ok);
  if (st == HS_OK && *ok) *id = hs_pg_page_id((uint32_t)rel, (unsigned)fork, (uint32_t)block);
  return st;
}

/* Decodes one row into *r; on a bad row reports it through trace_bad and
 * sets *ok = false (the status says whether to go on). */
static hs_status parse_row(hs_trace *t, const char *line, size_t len, hs_request *r, bool *ok) {
  const hs_csv_spec *sp = &t->csv;
  const unsigned maxcol = t->csv_last_col;
  /* Not cleared: every role's column is at most maxcol, so each field
   * read below is set by the loop (ROLE_NONE collects the rest). */
  csv_field fields[ROLE_COUNT], f;
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
    fields[t->csv_role[col]] = f;
  }
  if (col < maxcol) {
    /* Name the first column the spec wants that the line lacks. */
    unsigned want = col + 1;
    while (t->csv_role[want] == ROLE_NONE) want++;
    return trace_bad(t, HS_ERR_CORRUPT, "line %llu: missing column %u (%s); the line has %u",
                     lineno, want, role_name[t->csv_role[want]], col);
  }
  if (sp->id_col) {
    if (fields[ROLE_ID].len == 0)
      return trace_bad(t, HS_ERR_CORRUPT, "line %llu: column %u (id) is empty", lineno, sp->id_col);
    r->id = trace_id_from_text(fields[ROLE_ID].p, fields[ROLE_ID].len, fields[ROLE_ID].escaped);
  } else {
    hs_status st = page_id(t, fields, &r->id, ok);
    if (st != HS_OK || !*ok) return st;
    *ok = false;
  }
  r->size = 1;
  if (sp->size_col && (fields[ROLE_SIZE].escaped ||
                       !trace_parse_u64(fields[ROLE_SIZE].p, fields[ROLE_SIZE].len, &r->size)))
    return trace_bad(t, HS_ERR_CORRUPT,
                     "line %llu: bad size \"%s\" in column %u (want a non-negative integer)",
                     lineno, shown(val, sizeof val, &fields[ROLE_SIZE]), sp->size_col);
  if (sp->time_col && !parse_time(&fields[ROLE_TIME], &r->time))
    return trace_bad(t, HS_ERR_CORRUPT,
                     "line %llu: bad time \"%s\" in column %u (want a non-negative number)", lineno,
                     shown(val, sizeof val, &fields[ROLE_TIME]), sp->time_col);
  r->pid = 0;
  if (sp->pid_col) {
    uint64_t pid;
    hs_status st =
        parse_bounded(t, fields, ROLE_PID, (uint64_t)1 << 32, "a process id below 2^32", &pid, ok);
    if (st != HS_OK || !*ok) return st;
    *ok = false;
    r->pid = (uint32_t)pid;
  }
  r->found = -1;
  if (sp->found_col && !parse_found(&fields[ROLE_FOUND], &r->found))
    return trace_bad(t, HS_ERR_CORRUPT,
                     "line %llu: bad found \"%s\" in column %u (want t, f, true, false, 1 or 0)",
                     lineno, shown(val, sizeof val, &fields[ROLE_FOUND]), sp->found_col);
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

/* Column names by role, most specific first within each. */
static const char *const id_names[] = {"obj_id", "object_id", "objid", "id", "key", "lbn", "lba"};
static const char *const size_names[] = {"obj_size", "object_size", "size",
                                         "len",      "length",      "bytes"};
static const char *const time_names[] = {"time", "timestamp", "ts", "clock_time", "seq"};
static const char *const pid_names[] = {"pid"};
static const char *const found_names[] = {"found"};
static const char *const rel_names[] = {"rel", "relfilenode", "relation"};
static const char *const fork_names[] = {"fork", "forknum"};
static const char *const block_names[] = {"block", "blockno", "blocknum", "blkno"};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const struct {
  const char *const *names;
  size_t count;
} header_names[ROLE_COUNT] = {
    [ROLE_ID] = {id_names, COUNT(id_names)},
    [ROLE_SIZE] = {size_names, COUNT(size_names)},
    [ROLE_TIME] = {time_names, COUNT(time_names)},
    [ROLE_PID] = {pid_names, COUNT(pid_names)},
    [ROLE_FOUND] = {found_names, COUNT(found_names)},
    [ROLE_REL] = {rel_names, COUNT(rel_names)},
    [ROLE_FORK] = {fork_names, COUNT(fork_names)},
    [ROLE_BLOCK] = {block_names, COUNT(block_names)},
};

/* The rank of `f` in `names` (lower is better), or -1. */
static int name_rank(const csv_field *f, const char *const *names, size_t count) {
  for (size_t i = 0; i < count; i++)
    if (strlen(names[i]) == f->len && strncasecmp(names[i], f->p, f->len) == 0) return (int)i;
  return -1;
}

/* Appends " role=COL" for each column in use to the format reason. */
static void describe_columns(hs_trace *t) {
  unsigned col[ROLE_COUNT];
  spec_columns(&t->csv, col);
  size_t used = strlen(t->reason);
  snprintf(t->reason + used, sizeof t->reason - used, "; columns from the header:");
  for (unsigned r = ROLE_ID; r < ROLE_COUNT; r++) {
    used = strlen(t->reason);
    if (col[r]) snprintf(t->reason + used, sizeof t->reason - used, " %s=%u", role_name[r], col[r]);
  }
}

hs_status trace_csv_start(hs_trace *t) {
  if (t->csv.delimiter == '\0') t->csv.delimiter = ',';
  if (trace_csv_spec_given(&t->csv)) {
    t->header_pending = t->csv.header;
    plan_columns(t);
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
    plan_columns(t);
    return HS_OK;
  }
  for (const char *d = ",\t;|"; *d; d++) {
    if (memchr(line, *d, len)) {
      sp.delimiter = *d;
      break;
    }
  }
  unsigned col_of[ROLE_COUNT] = {0};
  int best[ROLE_COUNT];
  for (unsigned r = 0; r < ROLE_COUNT; r++) best[r] = -1;
  size_t pos = 0;
  bool last = false;
  csv_field f;
  for (unsigned col = 1; !last && col <= TRACE_CSV_MAX_COLUMN; col++) {
    if (next_field(line, len, &pos, sp.delimiter, &f, &last)) break;
    for (unsigned r = ROLE_ID; r < ROLE_COUNT; r++) {
      int rank = name_rank(&f, header_names[r].names, header_names[r].count);
      if (rank >= 0 && (best[r] < 0 || rank < best[r])) best[r] = rank, col_of[r] = col;
    }
  }
  sp.id_col = col_of[ROLE_ID];
  sp.size_col = col_of[ROLE_SIZE];
  sp.time_col = col_of[ROLE_TIME];
  /* "seq" orders the requests (hotset's PostgreSQL csv) but is no time
   * stamp: the trace has no clock (hs_trace_time_unit_ns). */
  t->csv_time_is_seq = sp.time_col && strcmp(time_names[best[ROLE_TIME]], "seq") == 0;
  sp.pid_col = col_of[ROLE_PID];
  sp.found_col = col_of[ROLE_FOUND];
  /* A PostgreSQL page stands in for an id only where there is no id. */
  if (!sp.id_col && col_of[ROLE_REL] && col_of[ROLE_BLOCK]) {
    sp.rel_col = col_of[ROLE_REL];
    sp.fork_col = col_of[ROLE_FORK];
    sp.block_col = col_of[ROLE_BLOCK];
  }
  if (!sp.id_col && !sp.rel_col) {
    csv_field whole = {line, len, false};
    char val[48];
    return hs_fail(HS_ERR_INVALID, 0,
                   "%s: no CSV columns given, and the first line (\"%s\") names no id column "
                   "(obj_id, id, key, lbn, ..., or rel and block): give them with --csv "
                   "id=COL[,size=COL][,time=COL][,header]",
                   t->path, shown(val, sizeof val, &whole));
  }
  t->csv = sp;
  plan_columns(t);
  describe_columns(t);
  return HS_OK;
}
