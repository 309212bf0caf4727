/*
 * sim/trace_csv_spec.c — parsing a CSV column spec ("id=5,size=4,time=2").
 *
 * The spec is a comma-separated list of key=value items (and the bare flag
 * "header"), checked strictly: an unknown key, a repeated key, a column
 * that is not a number from 1 to 4096, a missing id (or half a PostgreSQL
 * page: rel without block) is an error naming
 * the item, because a silently ignored typo ("szie=4") would simulate the
 * wrong trace without a word. The delimiter may be given by name since a
 * comma cannot be written inside the spec itself; a quote or a line end
 * cannot be a delimiter, as they already mean something in a CSV line.
 *
 * Messages are "SPEC": problem, so the caller can prefix its flag name.
 */
#include "core/error.h"
#include "sim/trace_internal.h"

#include <string.h>

static bool parse_column(const char *p, size_t len, unsigned *out) {
  uint64_t v;
  if (!trace_parse_u64(p, len, &v) || v == 0 || v > TRACE_CSV_MAX_COLUMN) return false;
  *out = (unsigned)v;
  return true;
}

static bool parse_delimiter(const char *p, size_t len, char *out) {
  static const struct {
    const char *name;
    char c;
  } names[] = {{"tab", '\t'}, {"space", ' '}, {"comma", ','}, {"semicolon", ';'}, {"pipe", '|'}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    if (strlen(names[i].name) == len && memcmp(names[i].name, p, len) == 0) {
      *out = names[i].c;
      return true;
    }
  }
  if (len != 1 || p[0] == '"' || p[0] == '\n' || p[0] == '\r' || p[0] == '\0') return false;
  *out = p[0];
  return true;
}

static bool key_is(const char *key, size_t klen, const char *name) {
  return strlen(name) == klen && memcmp(key, name, klen) == 0;
}

/* The spec's field for a column role named `key`, or NULL. */
static unsigned *role_column(hs_csv_spec *sp, const char *key, size_t klen) {
  const struct {
    const char *name;
    unsigned *col;
  } roles[] = {{"id", &sp->id_col},     {"size", &sp->size_col},   {"time", &sp->time_col},
               {"pid", &sp->pid_col},   {"found", &sp->found_col}, {"rel", &sp->rel_col},
               {"fork", &sp->fork_col}, {"block", &sp->block_col}};
  for (size_t i = 0; i < sizeof roles / sizeof roles[0]; i++)
    if (key_is(key, klen, roles[i].name)) return roles[i].col;
  return NULL;
}

const char *trace_csv_spec_problem(const hs_csv_spec *sp) {
  const unsigned cols[] = {sp->id_col,    sp->size_col, sp->time_col, sp->pid_col,
                           sp->found_col, sp->rel_col,  sp->fork_col, sp->block_col};
  const size_t n = sizeof cols / sizeof cols[0];
  for (size_t i = 0; i < n; i++)
    if (cols[i] > TRACE_CSV_MAX_COLUMN) return "CSV columns must be from 1 to 4096";
  bool page = sp->rel_col || sp->block_col || sp->fork_col;
  if (page && sp->id_col) return "give either id=COL or rel=COL,block=COL, not both";
  if (page && (!sp->rel_col || !sp->block_col))
    return "a page needs both rel=COL and block=COL (fork=COL is optional)";
  if (!page && !sp->id_col) return "the id column is missing (id=COL, or rel=COL,block=COL)";
  /* One column cannot be two things; it is surely a typo. */
  for (size_t i = 0; i < n; i++)
    for (size_t j = i + 1; j < n; j++)
      if (cols[i] && cols[i] == cols[j]) return "two roles name the same column";
  return NULL;
}

hs_status hs_csv_spec_parse(const char *s, hs_csv_spec *out) {
  if (!s) return hs_fail(HS_ERR_INVALID, 0, "no CSV spec given");
  hs_csv_spec sp = {.delimiter = ','};
  bool seen_delim = false, seen_header = false;
  const char *p = s;
  for (;;) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    const char *eq = memchr(p, '=', len);
    size_t klen = eq ? (size_t)(eq - p) : len;
    const char *val = eq ? eq + 1 : NULL;
    size_t vlen = eq ? len - klen - 1 : 0;
    int ilen = len > 64 ? 64 : (int)len; /* how much of the item to show */
    unsigned *col;

    if (len == 0)
      return hs_fail(HS_ERR_INVALID, 0,
                     "\"%s\": empty item (want id=COL[,size=COL][,time=COL]"
                     "[,header][,delimiter=X])",
                     s);
    if (key_is(p, klen, "header")) {
      if (val || seen_header)
        return hs_fail(HS_ERR_INVALID, 0, "\"%s\": \"%.*s\": header takes no value, once", s, ilen,
                       p);
      sp.header = seen_header = true;
    } else if ((col = role_column(&sp, p, klen)) != NULL) {
      if (*col != 0)
        return hs_fail(HS_ERR_INVALID, 0, "\"%s\": %.*s is given twice", s, (int)klen, p);
      if (!val || !parse_column(val, vlen, col))
        return hs_fail(HS_ERR_INVALID, 0,
                       "\"%s\": \"%.*s\": the column must be a number from 1 to %u", s, ilen, p,
                       TRACE_CSV_MAX_COLUMN);
    } else if (key_is(p, klen, "delimiter")) {
      if (seen_delim) return hs_fail(HS_ERR_INVALID, 0, "\"%s\": the delimiter is given twice", s);
      if (!val || !parse_delimiter(val, vlen, &sp.delimiter))
        return hs_fail(HS_ERR_INVALID, 0,
                       "\"%s\": \"%.*s\": the delimiter must be one character (not a quote) or "
                       "tab, space, comma, semicolon, pipe",
                       s, ilen, p);
      seen_delim = true;
    } else {
      return hs_fail(HS_ERR_INVALID, 0,
                     "\"%s\": unknown item \"%.*s\" (want id=COL, size=COL, time=COL, pid=COL, "
                     "found=COL, rel=COL, fork=COL, block=COL, header, delimiter=X)",
                     s, ilen, p);
    }
    if (!end) break;
    p = end + 1;
  }
  const char *why = trace_csv_spec_problem(&sp);
  if (why) return hs_fail(HS_ERR_INVALID, 0, "\"%s\": %s", s, why);
  *out = sp;
  return HS_OK;
}
