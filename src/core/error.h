/*
 * core/error.h — internal helpers for reporting failures.
 *
 * hs_fail records the thread's last error (status, errno, message) and
 * returns the status, so error paths read `return hs_fail(...)`.
 */
#ifndef HOTSET_CORE_ERROR_H
#define HOTSET_CORE_ERROR_H

#include "hotset/status.h"

/* Records a failure with a printf-style message; returns `st`. */
hs_status hs_fail(hs_status st, int sys_errno, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Maps an errno from a system call to the closest status. */
hs_status hs_status_from_errno(int err);

/* Clears the thread's last error. */
void hs_clear_error(void);

#endif
