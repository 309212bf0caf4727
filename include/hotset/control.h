/*
 * hotset/control.h — the data directory's control file: what the
 * directory is, and where recovery must start.
 *
 * Every data directory a pool opens holds one small file, hotset.control
 * (PostgreSQL's pg_control): the format version, the page size and
 * whether pages carry checksums, the size of its log's segments and the
 * log's system identifier (a random number also stamped in every log
 * segment's header, so a log of another directory is refused), the state
 * the directory was left in, and the last checkpoint and its redo point.
 * It is written when the directory is created and replaced whole at every
 * checkpoint (written under a temporary name, fsynced, renamed, the
 * directory fsynced), so a crash leaves the old one or the new one.
 *
 * hs_pool_open reads it first. Options that contradict it are refused
 * naming both values; a page_size of 0 takes the directory's (8 KiB for a
 * new directory). With a log, opening refuses what it cannot prove — a
 * checkpoint record missing, damaged or not a checkpoint; a log that does
 * not reach it; a log of another system; a page whose LSN is past the end
 * of the log — each with a message naming the file, the LSN and what to do
 * (docs/wal.md, "What recovery refuses"). `hotset reset-log` is the
 * explicit way out for an operator who accepts the loss.
 *
 * Names, errors, ownership and threads follow docs/api.md; a call says
 * only where it differs.
 */
#ifndef HOTSET_CONTROL_H
#define HOTSET_CONTROL_H

#include "hotset/status.h"

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* The control file's format version this hotset writes and reads. */
#define HS_CONTROL_FORMAT 2u
/* Its name inside the data directory. */
#define HS_CONTROL_FILE "hotset.control"

/* The state a data directory was left in (PostgreSQL's DBState). */
typedef enum hs_db_state {
  HS_DB_SHUT_DOWN = 1,     /* closed cleanly: every page on disk, nothing to replay */
  HS_DB_IN_PRODUCTION = 2, /* open (or it crashed while open) */
  HS_DB_IN_RECOVERY = 3    /* replaying its log (or it crashed while replaying) */
} hs_db_state;

/* A short name: "shut down", "in production", "in recovery". */
const char *hs_control_state_name(hs_db_state state);

typedef struct hs_control {
  uint32_t format;        /* HS_CONTROL_FORMAT */
  uint32_t page_size;     /* bytes per page */
  bool checksums;         /* pages carry hotset's header (LSN and CRC-32C) */
  uint64_t segment_bytes; /* the log's segment size; 0: never opened with a log */
  uint64_t system_id;     /* the log's system identifier (never 0) */
  hs_db_state state;
  bool has_checkpoint; /* false until the first checkpoint */
  uint64_t checkpoint; /* where the last checkpoint's record starts */
  uint64_t redo;       /* its redo point: replay starts here */
  uint64_t time_ms;    /* when the file was written, ms since the epoch */
  /* The directory keeps the list of the relation files it must hold
   * (HS_SMGR_RELATIONS_FILE, hotset/storage.h): that file missing is then
   * damage, not a directory from before the list. */
  bool has_catalog;
  /* An engine's counter that must never go back, as of this file
   * (hs_pool_raise_id_floor, hotset/pool.h); 0: none. */
  uint64_t id_floor;
} hs_control;

/* Reads DIR/hotset.control. HS_ERR_NOENT if there is none (a new
 * directory, or one written before control files); HS_ERR_CORRUPT naming
 * the file if it is damaged or of an unknown format. */
hs_status hs_control_read(const char *dir, hs_control *out);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
