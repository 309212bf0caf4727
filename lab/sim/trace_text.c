/*
 * sim/trace_text.c — text traces cut into lines, and the txt format.
 *
 * Lines are found with memchr in the source window and handed out in
 * place, never copied; a line is whole in the window because the window
 * is refilled (and grown if need be) until it holds a line end or the
 * limit. The limit, 64 KiB, bounds the buffer a hostile file can make us
 * allocate; a longer line is a bad line, reported as soon as the window
 * holds more than the limit without a line end (not when the line ends:
 * /dev/zero never does). With skip_bad its bytes are read past without
 * being kept, but only up to TRACE_MAX_SKIPPED_LINE: a "line" that long is
 * not a damaged line of a text trace but some other kind of file, and
 * reading on would never end on an endless one.
 *
 * Line ends are LF or CRLF; the last line may lack one. Blank lines (only
 * spaces and tabs) are skipped without complaint, as trailing empty lines
 * are common and mean nothing. Line numbers count every line, blank or
 * not, so they match an editor's.
 *
 * txt: the whole line, spaces and tabs trimmed, is the id (trace_id.c);
 * the size is 1 and the time is the request number, from 1.
 */
#include "sim/trace_internal.h"

#include <string.h>

static bool is_blank(const char *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (p[i] != ' ' && p[i] != '\t') return false;
  return true;
}

/* Reads past the rest of a line too long to keep, up to the line end or
 * TRACE_MAX_SKIPPED_LINE bytes of it. */
static hs_status skip_rest_of_line(hs_trace *t) {
  trace_src *s = &t->src;
  uint64_t skipped = 0;
  for (;;) {
    const unsigned char *p = s->buf + s->pos;
    const unsigned char *nl = memchr(p, '\n', s->len - s->pos);
    if (nl) {
      s->pos = (size_t)(nl - s->buf) + 1;
      return HS_OK;
    }
    skipped += s->len - s->pos;
    s->pos = s->len;
    if (s->eof) return HS_OK;
    if (skipped > TRACE_MAX_SKIPPED_LINE)
      return trace_fatal(t, HS_ERR_CORRUPT, 0,
                         "line %llu: no line end in its first %u MiB: not a text trace",
                         (unsigned long long)t->records, TRACE_MAX_SKIPPED_LINE >> 20);
    hs_status st = trace_src_fill(s, 1);
    if (st != HS_OK) return st;
  }
}

hs_status trace_next_line(hs_trace *t, const char **line, size_t *len, bool *got) {
  trace_src *s = &t->src;
  for (;;) {
    size_t avail = s->len - s->pos;
    const char *p = (const char *)s->buf + s->pos;
    const char *nl = memchr(p, '\n', avail);
    size_t n;
    if (nl) {
      n = (size_t)(nl - p);
    } else if (!s->eof && avail <= TRACE_MAX_LINE + 1) {
      /* The line may go on: get more (+1 for a CR before the LF). */
      hs_status st = trace_src_fill(s, avail + 1);
      if (st != HS_OK) return st;
      continue;
    } else if (avail == 0) {
      *got = false;
      return HS_OK;
    } else {
      n = avail; /* the last line, or one too long to hold */
    }
    t->records++;
    size_t text = n > 0 && p[n - 1] == '\r' ? n - 1 : n;
    if (text > TRACE_MAX_LINE) {
      /* Fail (or count it) before reading the rest: the rest may not end. */
      hs_status st = trace_bad(t, HS_ERR_CORRUPT, "line %llu: line too long (more than %u bytes)",
                               (unsigned long long)t->records, TRACE_MAX_LINE);
      if (st != HS_OK) return st;
      st = skip_rest_of_line(t);
      if (st != HS_OK) return st;
      continue;
    }
    s->pos += nl ? n + 1 : n;
    if (is_blank(p, text)) continue;
    *line = p;
    *len = text;
    *got = true;
    return HS_OK;
  }
}

hs_status trace_read_txt(hs_trace *t, hs_request *reqs, size_t max, size_t *n) {
  size_t got = 0;
  while (got < max) {
    const char *line;
    size_t len;
    bool more;
    hs_status st = trace_next_line(t, &line, &len, &more);
    if (st != HS_OK || !more) {
      *n = got;
      return st;
    }
    while (len > 0 && (line[len - 1] == ' ' || line[len - 1] == '\t')) len--;
    while (len > 0 && (*line == ' ' || *line == '\t')) line++, len--;
    hs_request *r = reqs + got++;
    r->id = trace_id_from_text(line, len, false);
    r->size = 1;
    r->time = ++t->requests;
    r->next = HS_TRACE_NO_NEXT;
    r->pid = 0;
    r->found = -1;
  }
  *n = got;
  return HS_OK;
}
