/*
 * cli/control_rebuild.h — a data directory's control file worked out again
 * from what the directory still holds, for `hotset reset-log` when the
 * control file is missing or damaged.
 *
 * Every field comes from a proof, never a default:
 *  - the log's segment size and system id from its segment headers (each
 *    carries both, under a CRC);
 *  - the page size, and whether pages carry checksums, from the relation
 *    files: the one page size at which their non-zero pages pass their
 *    checksums at their block numbers (a page's checksum covers its block
 *    number, so a wrong size fails);
 *  - the last checkpoint: the checkpoint record of the log with the highest
 *    LSN from whose redo point the log reads, record by record, to it.
 * What cannot be proven is refused with the flag that supplies it.
 */
#ifndef HOTSET_CLI_CONTROL_REBUILD_H
#define HOTSET_CLI_CONTROL_REBUILD_H

#include "hotset/control.h"

#include <stddef.h>
#include <stdint.h>

/* What the operator gave for fields the directory cannot prove (0 / -1:
 * not given). A given value must agree with what is proven. */
typedef struct rebuild_hints {
  uint32_t page_size;
  int checksums; /* -1: not given */
  uint64_t segment_bytes;
} rebuild_hints;

/* Fills *c for `dir` with its log in `waldir` (state "in production", so
 * the next open replays from the checkpoint's redo point), and in `how`
 * one line saying where each field came from. HS_ERR_INVALID naming the
 * flag when a field cannot be proven. */
hs_status control_rebuild(const char *dir, const char *waldir, const rebuild_hints *hints,
                          hs_control *c, char *how, size_t how_len);

#endif
