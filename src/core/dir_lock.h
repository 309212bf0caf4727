/*
 * core/dir_lock.h — one process at a time in a directory: an flock on a
 * lock file in it, holding the holder's pid for the message the next one
 * gets. The data directory (storage manager) and the log's directory use it.
 */
#ifndef HOTSET_CORE_DIR_LOCK_H
#define HOTSET_CORE_DIR_LOCK_H

#include "hotset/status.h"

/* Opens (creating) and flocks the lock file at `path` without waiting; the
 * descriptor, which holds the lock until closed, goes to *out. Taken by
 * another open of the file — another process, or another handle in this
 * one — it is HS_ERR_BUSY naming `what` (e.g. "data directory"), `dir` and
 * the holder's pid. */
hs_status dir_lock_take(const char *what, const char *dir, const char *path, int *out);
/* Empties the lock file (no pid in it names a process that has let go: a
 * reader of the file, or the next process's message, would blame a process
 * long gone, or another that reused its pid) and closes it, which releases
 * the lock. The file stays. A negative fd is a no-op. */
void dir_lock_release(int fd);

#endif
