/*
 * crash/powercut.h — the power-cut recorder and its applier (internal; for
 * tests and `hotset crash-test --power-loss`).
 *
 * Armed in a child process, the recorder journals every change the
 * core/sysio.h wrappers make (installed through core/seams.h) to files under one root directory,
 * before making it: a write with the bytes it overwrites, a sync, a size change, a new, renamed,
 * linked or removed directory entry, a directory sync. Each such change is an operation with a
 * number (1, 2, ...); armed to cut at operation N, the recorder does not do the Nth: the process
 * _exits (status PC_CUT_EXIT) at once, leaving the page cache with everything before it — what a
 * SIGKILL leaves.
 *
 * The applier, in another process once the child is gone, reads the
 * journal and turns the directory into one state a power loss at that
 * moment could have left: every write since its file's last sync kept,
 * dropped or torn (per 512-byte sector), growth since the last sync cut
 * back, and directory entries since their directory's last sync undone
 * past a random point. docs/wal.md, "Power cuts in the test suite".
 */
#ifndef HOTSET_LAB_POWERCUT_H
#define HOTSET_LAB_POWERCUT_H

#include "hotset/status.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

/* The exit status of a child the recorder cut. */
#define PC_CUT_EXIT 86

/* The kinds of operation the recorder counts, as bits: an aimed cut can
 * count only some kinds, and the journal says which kind the cut stopped. */
enum {
  PC_OP_WRITE = 1u << 0,     /* pwrite, pwritev, write */
  PC_OP_FILE_SYNC = 1u << 1, /* fsync or fdatasync of a file */
  PC_OP_RESIZE = 1u << 2,    /* ftruncate, growing fallocate, O_TRUNC of a file */
  PC_OP_CREATE = 1u << 3,    /* a new name: open with O_CREAT of a missing file */
  PC_OP_RENAME = 1u << 4,
  PC_OP_LINK = 1u << 5,
  PC_OP_UNLINK = 1u << 6,
  PC_OP_MKDIR = 1u << 7,
  PC_OP_DIR_SYNC = 1u << 8, /* fsync of a directory */
};
#define PC_OP_KINDS 9
/* The directory operations: what a power cut can take back, and the
 * directory fsync that stops it. */
#define PC_OP_DIRECTORY                                                                            \
  (PC_OP_CREATE | PC_OP_RENAME | PC_OP_LINK | PC_OP_UNLINK | PC_OP_MKDIR | PC_OP_DIR_SYNC)
/* The kind's name ("write", "file-sync", ..., "dir-sync"; "" for none). */
const char *pc_op_kind_name(unsigned kind);

typedef struct pc_arm {
  const char *root;        /* changes to files under it are journaled */
  const char *journal;     /* the journal file (outside root), created */
  uint64_t cut_at;         /* the operation not done; 0: never */
  uint64_t cut_after_mark; /* 0, or k: cut at the kth operation after the
                              mark_nth-th pc_mark (cut_at then unused) */
  uint64_t mark_nth;
  uint64_t cut_after_rename; /* 0, or k: cut at the kth operation after the
                                rename_nth-th rename (a new log segment or
                                control file: k = 1 is its directory's
                                fsync); cut_at then unused */
  uint64_t rename_nth;
  uint64_t cut_dir_op; /* 0, or k: cut at the kth operation of the kinds in
                          dir_op_kinds (0: PC_OP_DIRECTORY) — inside the
                          dir_op_mark-th checkpoint, on its thread, or, with
                          dir_op_mark 0, from arming on any thread. Aimed by
                          kind, not by the code that makes the call, so the
                          same aim finds a recycling step however it is
                          written (cut_at then unused) */
  unsigned dir_op_kinds;
  uint64_t dir_op_mark;
  bool skip_syncs; /* journal syncs without doing them (the journal, not
                      the device, decides what survives) */
} pc_arm;

/* Arms the recorder in this process. */
hs_status pc_arm_recorder(const pc_arm *arm);
/* Armed, the recorder counts checkpoints through the library's seams
 * (core/seams.h's checkpoint_begin/end): with cut_after_mark, the kth
 * operation the checkpointing thread makes inside the mark_nth-th
 * checkpoint is the cut (with cut_dir_op and dir_op_mark, the kth of the
 * chosen kinds inside the dir_op_mark-th); a checkpoint that ends before
 * the kth puts the cut at the very next operation. */
/* Operations journaled so far (armed process). */
uint64_t pc_operations(void);

typedef struct pc_result {
  uint64_t operations;       /* operations in the journal */
  uint64_t writes_dropped;   /* unsynced writes none of whose sectors survived */
  uint64_t writes_torn;      /* unsynced writes some of whose sectors survived */
  uint64_t writes_kept;      /* unsynced writes all of whose sectors survived */
  uint64_t dir_entries_lost; /* directory changes undone */
  uint64_t files_cut;        /* files whose unsynced growth was cut */
  uint64_t checkpoint_ops;   /* operations after the last mark (info) */
  unsigned cut_kind;         /* the kind (PC_OP_*) of the operation the cut
                                stopped; 0: the child was not cut */
} pc_result;

/* Applies a power cut described by `journal` to the directory tree under
 * `root`, in place, with choices drawn from `seed`. An fdatasync makes the
 * file's size durable with its data, as Linux does, unless
 * `strict_fdatasync` (then only fsync does: growth synced by fdatasync
 * alone may be lost, as POSIX's weakest reading allows). */
hs_status pc_apply(const char *root, const char *journal, uint64_t seed, bool strict_fdatasync,
                   pc_result *out);

#endif
