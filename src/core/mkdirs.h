/*
 * core/mkdirs.h — creating a directory and its missing parents (mkdir -p),
 * with an error that names the component that failed and why.
 */
#ifndef HOTSET_CORE_MKDIRS_H
#define HOTSET_CORE_MKDIRS_H

#include "hotset/status.h"

#include <sys/types.h>

/* Creates `path` and any missing parent (each with `mode`); an existing
 * directory is fine. On failure: the status of the errno (HS_ERR_NOSPACE
 * for a full disk, HS_ERR_ACCESS, ...) and a message "creating <what>
 * <path>: <component>: <reason>". */
hs_status make_dirs(const char *path, mode_t mode, const char *what);

#endif
