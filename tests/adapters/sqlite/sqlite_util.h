/*
 * tests/sqlite/sqlite_util.h — what the SQLite adapter's tests share: a
 * seeded generator, a digest that hashes every row a query returns (so two
 * runs compare by one number per part), statements run into a digest with
 * their errors kept rather than checked (threads may not CHECK), and
 * stderr caught into a string.
 */
#ifndef HOTSET_TESTS_SQLITE_UTIL_H
#define HOTSET_TESTS_SQLITE_UTIL_H

#include <fcntl.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static inline uint64_t rng_next(uint64_t *s) {
  /* xorshift64*: deterministic for a seed, good enough for test data. */
  uint64_t x = *s;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *s = x;
  return x * 0x2545F4914F6CDD1Dull;
}

/* What a part of a workload returned, hashed, and what went wrong. */
typedef struct digest {
  uint64_t hash;
  unsigned rows;
  unsigned errors;
  unsigned integrity_ok; /* PRAGMA integrity_check runs that said ok */
  char first_error[256];
} digest;

static inline void digest_init(digest *d) {
  memset(d, 0, sizeof *d);
  d->hash = 0xcbf29ce484222325ull;
}

static inline void digest_bytes(digest *d, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) d->hash = (d->hash ^ b[i]) * 0x100000001b3ull;
}

static inline void digest_error(digest *d, const char *what, sqlite3 *db) {
  if (!d->errors++)
    snprintf(d->first_error, sizeof d->first_error, "%.100s: %.140s", what,
             db ? sqlite3_errmsg(db) : "(no connection)");
}

/* Steps a prepared statement to its end, hashing every row. */
static inline void digest_step(digest *d, sqlite3 *db, sqlite3_stmt *st, const char *what) {
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    int n = sqlite3_column_count(st);
    d->rows++;
    for (int i = 0; i < n; i++) {
      unsigned char type = (unsigned char)sqlite3_column_type(st, i);
      digest_bytes(d, &type, 1);
      if (type == SQLITE_INTEGER) {
        int64_t v = sqlite3_column_int64(st, i);
        digest_bytes(d, &v, sizeof v);
      } else if (type == SQLITE_FLOAT) {
        double v = sqlite3_column_double(st, i);
        digest_bytes(d, &v, sizeof v);
      } else if (type != SQLITE_NULL) {
        const void *p = type == SQLITE_TEXT ? (const void *)sqlite3_column_text(st, i)
                                            : sqlite3_column_blob(st, i);
        int len = sqlite3_column_bytes(st, i);
        digest_bytes(d, &len, sizeof len);
        if (len) digest_bytes(d, p, (size_t)len);
      }
    }
  }
  if (rc != SQLITE_DONE) digest_error(d, what, db);
}

/* Runs every statement of `sql`, hashing what they return. */
static inline void sql(digest *d, sqlite3 *db, const char *text) {
  const char *tail = text;
  while (tail && *tail) {
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, tail, -1, &st, &tail) != SQLITE_OK) {
      digest_error(d, text, db);
      return;
    }
    if (!st) break; /* only white space or a comment was left */
    digest_step(d, db, st, text);
    sqlite3_finalize(st);
  }
}

/* PRAGMA integrity_check must say exactly "ok". */
static inline void integrity(digest *d, sqlite3 *db) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL) != SQLITE_OK) {
    digest_error(d, "integrity_check", db);
    return;
  }
  int rows = 0;
  bool ok = false;
  while (sqlite3_step(st) == SQLITE_ROW) {
    const char *msg = (const char *)sqlite3_column_text(st, 0);
    ok = rows++ == 0 && msg && strcmp(msg, "ok") == 0;
    if (!ok && !d->errors++)
      snprintf(d->first_error, sizeof d->first_error, "integrity_check: %s", msg ? msg : "?");
  }
  sqlite3_finalize(st);
  if (ok && rows == 1) d->integrity_ok++;
}

/* Catches what a call writes on stderr (fd 2) into buf. */
typedef struct stderr_catch {
  int saved;
  FILE *tmp;
} stderr_catch;

static inline void stderr_catch_begin(stderr_catch *c) {
  fflush(stderr);
  c->tmp = tmpfile();
  c->saved = dup(2);
  if (c->tmp) dup2(fileno(c->tmp), 2);
}

static inline void stderr_catch_end(stderr_catch *c, char *buf, size_t len) {
  fflush(stderr);
  dup2(c->saved, 2);
  close(c->saved);
  buf[0] = 0;
  if (!c->tmp) return;
  rewind(c->tmp);
  size_t n = fread(buf, 1, len - 1, c->tmp);
  buf[n] = 0;
  fclose(c->tmp);
}

#endif
