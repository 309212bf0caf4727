/*
 * common/json.h — the tools' one JSON writer.
 *
 * Every --json output of the command-line tools is one object per line.
 * This writes such an object field by field, escaping strings the one way
 * (quotes, backslashes, control characters as \u00XX; bytes >= 0x80 pass
 * through, so UTF-8 stays UTF-8), and keeps track of the commas. Objects may
 * nest (json_object_begin under a key).
 */
#ifndef HOTSET_LAB_COMMON_JSON_H
#define HOTSET_LAB_COMMON_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 8

typedef struct json_out {
  FILE *f;
  int depth;
  bool need_comma[JSON_MAX_DEPTH];
} json_out;

/* A JSON string literal: s quoted and escaped. */
void json_write_string(FILE *f, const char *s);

/* Starts the top-level object on f. */
void json_begin(json_out *j, FILE *f);
/* Ends the top-level object and the line ("}\n"), and flushes. */
void json_end_line(json_out *j);

/* A nested object under `key` (NULL inside an array-less object is not
 * allowed: every value has a key); close it with json_object_end. */
void json_object_begin(json_out *j, const char *key);
void json_object_end(json_out *j);

/* A value already written as JSON text by someone else (e.g. the library's
 * hs_pool_stats_format's JSON), placed under `key` as it is; trailing blanks and
 * newlines are dropped. */
void json_raw(json_out *j, const char *key, const char *json_text);
void json_str(json_out *j, const char *key, const char *value);
void json_u64(json_out *j, const char *key, uint64_t value);
void json_i64(json_out *j, const char *key, int64_t value);
void json_bool(json_out *j, const char *key, bool value);
/* A number printed with a printf format for one double ("%.4f", "%g"). A
 * value that is not finite is written as null (JSON has no NaN). */
void json_double(json_out *j, const char *key, const char *fmt, double value);

#endif
