/*
 * storage/direct_io.h — what O_DIRECT needs on the file system under a data
 * directory, found out at run time: whether it accepts O_DIRECT at all, and
 * how the memory, file offsets and lengths of a direct transfer must be
 * aligned. The storage manager asks once, when a handle is opened with
 * direct I/O, so a refusal is one clear error at open rather than EINVAL
 * on the first read.
 */
#ifndef HOTSET_STORAGE_DIRECT_IO_H
#define HOTSET_STORAGE_DIRECT_IO_H

#include "hotset/status.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct dio_info {
  uint32_t mem_align;    /* a buffer's address must be a multiple of this */
  uint32_t offset_align; /* a transfer's file offset and length likewise */
  char fs_name[48];      /* e.g. "ext4", "tmpfs", "type 0x1234" (messages) */
} dio_info;

/* Checks that the file system holding `dir` (an existing directory) does
 * direct I/O on pages of `page_size` bytes, and fills *out. It opens an
 * unnamed temporary file in the directory (a named one, removed at once,
 * where O_TMPFILE is not supported), turns O_DIRECT on, asks statx for the
 * alignment (STATX_DIOALIGN; 4096 bytes where the kernel cannot say), and
 * writes and reads one page through it, so a file system that accepts the
 * flag but fails the transfers is caught too. Fails with HS_ERR_INVALID
 * and a message naming the directory and the file system when it refuses,
 * or when page_size is not a multiple of the alignment; HS_ERR_IO when the
 * probe file cannot be made. */
hs_status dio_probe(const char *dir, uint32_t page_size, dio_info *out);

/* The alignment statx reports for direct I/O on the open file fd into
 * out->mem_align and out->offset_align (4096 both where the kernel cannot
 * say); false if the file system says it does no direct I/O on this file.
 * out->fs_name is left alone. */
bool dio_alignment(int fd, dio_info *out);
/* The name of the file system that holds `path`, from statfs's magic
 * number ("type 0x..." for ones this table does not know). */
void dio_fs_name(const char *path, char *buf, size_t len);

#endif
