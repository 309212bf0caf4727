/*
 * cli/evidence.h — what the log directory keeps as evidence: kept-<LSN>/
 * (the bytes past a damaged or torn end, wal.c) and reset-<LSN>/ (an old
 * log `hotset reset-log` moved aside). Nothing in hotset deletes them on
 * its own; `hotset verify` lists them, `hotset reset-log --remove-kept`
 * removes them.
 */
#ifndef HOTSET_CLI_EVIDENCE_H
#define HOTSET_CLI_EVIDENCE_H

#include <stdbool.h>
#include <stdint.h>

/* Whether a log directory's entry is an evidence directory. */
bool evidence_name(const char *name);
/* The bytes of the files under `path`. */
uint64_t evidence_bytes(const char *path);

#endif
