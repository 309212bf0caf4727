/*
 * storage/control_file.h — the data directory's control file
 * (hotset/control.h) as bytes: encoding, decoding with every field checked,
 * writing, and a new system identifier.
 */
#ifndef HOTSET_CONTROL_FILE_H
#define HOTSET_CONTROL_FILE_H

#include "hotset/control.h"

#include <stddef.h>

/* The file's size: one sector. */
#define CONTROL_FILE_BYTES 128u

/* The CONTROL_FILE_BYTES bytes of `c` (its format is HS_CONTROL_FORMAT),
 * stamped with `time_ms`, CRC included. */
void control_encode(const hs_control *c, uint64_t time_ms, unsigned char *b);

/* Decodes the `n` bytes read from DIR/hotset.control into *out. Refused
 * with HS_ERR_CORRUPT naming the file (`dir` is only named in the message):
 * a size other than CONTROL_FILE_BYTES, a bad magic or CRC, another format,
 * and any field out of range — a non-zero reserved byte, an unknown flag, a
 * page size or segment size that no hotset writes, an unknown state, system
 * id 0, checkpoint and redo LSNs that are not log positions of the segment
 * size or with the redo point past the checkpoint. So every caller may
 * divide by the page and segment sizes. On failure *out is zeros. */
hs_status control_decode(const unsigned char *b, size_t n, const char *dir, hs_control *out);

/* Replaces DIR/hotset.control with `c` (format and time filled in): written
 * under a temporary name, fsynced, renamed over the old one, the directory
 * fsynced. A full disk is HS_ERR_NOSPACE. */
hs_status control_write(const char *dir, const hs_control *c);

/* A random, non-zero system identifier (getrandom; the clock and pid if
 * that fails). */
uint64_t control_new_system_id(void);

#endif
