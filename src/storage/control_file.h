/*
 * storage/control_file.h — writing the data directory's control file
 * (hotset/control.h), and a new system identifier.
 */
#ifndef HOTSET_CONTROL_FILE_H
#define HOTSET_CONTROL_FILE_H

#include "hotset/control.h"

/* Replaces DIR/hotset.control with `c` (format and time filled in): written
 * under a temporary name, fsynced, renamed over the old one, the directory
 * fsynced. A full disk is HS_ERR_NOSPACE. */
hs_status control_write(const char *dir, const hs_control *c);

/* A random, non-zero system identifier (getrandom; the clock and pid if
 * that fails). */
uint64_t control_new_system_id(void);

#endif
