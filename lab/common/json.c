/*
 * common/json.c — the tools' one JSON writer (see the header).
 */
#include "common/json.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

void json_write_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      fprintf(f, "\\%c", c);
    else if (c < 0x20)
      fprintf(f, "\\u%04x", c);
    else
      fputc(c, f);
  }
  fputc('"', f);
}

void json_begin(json_out *j, FILE *f) {
  j->f = f;
  j->depth = 0;
  j->need_comma[0] = false;
  fputc('{', f);
}

void json_end_line(json_out *j) {
  fputs("}\n", j->f);
  fflush(j->f);
}

/* The separator and the key of the next value. */
static void key(json_out *j, const char *k) {
  if (j->need_comma[j->depth]) fputc(',', j->f);
  j->need_comma[j->depth] = true;
  json_write_string(j->f, k);
  fputc(':', j->f);
}

void json_object_begin(json_out *j, const char *k) {
  key(j, k);
  fputc('{', j->f);
  if (j->depth + 1 < JSON_MAX_DEPTH) j->depth++;
  j->need_comma[j->depth] = false;
}

void json_object_end(json_out *j) {
  fputc('}', j->f);
  if (j->depth > 0) j->depth--;
}

void json_raw(json_out *j, const char *k, const char *json_text) {
  key(j, k);
  size_t n = strlen(json_text);
  while (n > 0 && (json_text[n - 1] == '\n' || json_text[n - 1] == ' ')) n--;
  fwrite(json_text, 1, n, j->f);
}

void json_str(json_out *j, const char *k, const char *value) {
  key(j, k);
  if (value)
    json_write_string(j->f, value);
  else
    fputs("null", j->f);
}

void json_u64(json_out *j, const char *k, uint64_t value) {
  key(j, k);
  fprintf(j->f, "%" PRIu64, value);
}

void json_i64(json_out *j, const char *k, int64_t value) {
  key(j, k);
  fprintf(j->f, "%" PRId64, value);
}

void json_bool(json_out *j, const char *k, bool value) {
  key(j, k);
  fputs(value ? "true" : "false", j->f);
}

void json_double(json_out *j, const char *k, const char *fmt, double value) {
  key(j, k);
  if (!isfinite(value)) {
    fputs("null", j->f);
    return;
  }
  fprintf(j->f, fmt, value);
}
