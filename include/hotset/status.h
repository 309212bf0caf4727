/*
 * hotset/status.h — how every hotset call reports failure.
 *
 * Every fallible function returns an hs_status (docs/api.md, "Errors"). HS_OK is zero, so
 * `if (st != HS_OK)` and `if (st)` both work. On failure the library also
 * leaves a one-line, human-readable message (what, where, why) in a
 * thread-local buffer, read with hs_last_error(); the operating-system errno
 * behind it, if any, is hs_last_errno(). The library never aborts or exits on
 * bad input or I/O errors.
 *
 * docs/api.md ("Errors") draws the line between HS_ERR_INVALID and
 * HS_ERR_MISUSE and says which calls return something else.
 */
#ifndef HOTSET_STATUS_H
#define HOTSET_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

/* The public API: exported from libhotset.so, which is otherwise built with
 * -fvisibility=hidden so its internals stay private. */
#pragma GCC visibility push(default)

typedef enum hs_status {
  HS_OK = 0,
  HS_ERR_INVALID,    /* bad input: an argument, option or data a caller may
                        legitimately pass and the library turns down */
  HS_ERR_NOMEM,      /* out of memory */
  HS_ERR_NOENT,      /* a missing file, directory or relation */
  HS_ERR_EXISTS,     /* the relation or file already exists */
  HS_ERR_ACCESS,     /* permission denied */
  HS_ERR_IO,         /* EIO or another I/O failure */
  HS_ERR_NOSPACE,    /* ENOSPC or EDQUOT */
  HS_ERR_SHORT_IO,   /* a read or write moved fewer bytes than a page */
  HS_ERR_EOF,        /* a block past the end of the relation */
  HS_ERR_NO_BUFFERS, /* every buffer of the pool is pinned */
  HS_ERR_WAL,        /* the WAL-before-data callback failed */
  HS_ERR_BUSY,       /* the object is in use (pinned buffers, open handles) */
  HS_ERR_CORRUPT,    /* data that fails a consistency check */
  HS_ERR_MISUSE,     /* a call that breaks a documented rule of the API: a bad
                        handle, the wrong state, a double release, an
                        argument outside the contract. A bug in the caller:
                        nothing was changed (docs/api.md, "Errors") */
  HS_STATUS_COUNT
} hs_status;

/* A short constant name for a status, e.g. "HS_ERR_NOSPACE". */
const char *hs_status_name(hs_status st);

/* The message of the last failure on the calling thread ("" if none). */
const char *hs_last_error(void);

/* The errno behind the last failure on the calling thread (0 if none). */
int hs_last_errno(void);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
