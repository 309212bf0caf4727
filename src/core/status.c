/*
 * core/status.c — status names and the thread-local last error.
 *
 * A thread-local buffer (like errno) keeps the error path free of
 * allocation and the API free of error out-parameters on every call.
 */
#include "core/debug.h"
#include "core/error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static _Thread_local char last_message[8192];
static _Thread_local int last_errno;

static const char *const status_names[HS_STATUS_COUNT] = {
    [HS_OK] = "HS_OK",
    [HS_ERR_INVALID] = "HS_ERR_INVALID",
    [HS_ERR_NOMEM] = "HS_ERR_NOMEM",
    [HS_ERR_NOENT] = "HS_ERR_NOENT",
    [HS_ERR_EXISTS] = "HS_ERR_EXISTS",
    [HS_ERR_ACCESS] = "HS_ERR_ACCESS",
    [HS_ERR_IO] = "HS_ERR_IO",
    [HS_ERR_NOSPACE] = "HS_ERR_NOSPACE",
    [HS_ERR_SHORT_IO] = "HS_ERR_SHORT_IO",
    [HS_ERR_EOF] = "HS_ERR_EOF",
    [HS_ERR_NO_BUFFERS] = "HS_ERR_NO_BUFFERS",
    [HS_ERR_WAL] = "HS_ERR_WAL",
    [HS_ERR_BUSY] = "HS_ERR_BUSY",
    [HS_ERR_CORRUPT] = "HS_ERR_CORRUPT",
    [HS_ERR_MISUSE] = "HS_ERR_MISUSE",
};

const char *hs_status_name(hs_status st) {
  if ((unsigned)st >= HS_STATUS_COUNT) return "HS_ERR_UNKNOWN";
  return status_names[st];
}

const char *hs_last_error(void) {
  return last_message;
}

int hs_last_errno(void) {
  return last_errno;
}

void hs_clear_error(void) {
  last_message[0] = '\0';
  last_errno = 0;
}

hs_status hs_fail(hs_status st, int sys_errno, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_message, sizeof last_message, fmt, ap);
  va_end(ap);
  last_errno = sys_errno;
  return st;
}

hs_status hs_status_from_errno(int err) {
  switch (err) {
  case 0:
    return HS_OK;
  case ENOENT:
  case ENOTDIR:
    return HS_ERR_NOENT;
  case EEXIST:
    return HS_ERR_EXISTS;
  case EACCES:
  case EPERM:
  case EROFS:
    return HS_ERR_ACCESS;
  case ENOSPC:
  case EDQUOT:
  case EFBIG:
    return HS_ERR_NOSPACE;
  case ENOMEM:
    return HS_ERR_NOMEM;
  case EINVAL:
    return HS_ERR_INVALID;
  default:
    return HS_ERR_IO;
  }
}

_Noreturn void hs_debug_stop(const char *file, int line, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  /* One write(2) to descriptor 2, not stdio: the library writes to no
   * stdio stream (tests/test_no_stdio_output.sh checks its imports). */
  char line_text[1024];
  int n =
      snprintf(line_text, sizeof line_text, "hotset: broken rule (%s:%d): %s\n", file, line, msg);
  if (n > 0) {
    size_t len = (size_t)n < sizeof line_text ? (size_t)n : sizeof line_text - 1;
    ssize_t w = write(2, line_text, len);
    (void)w;
  }
  abort();
}
