/*
 * hotset/fault.h — deliberate fault injection in the storage manager.
 *
 * The only fake storage in hotset: tests arm a fault and the storage manager
 * makes the Nth operation of a kind fail with a chosen errno, exactly as if the
 * kernel had returned it. An I/O observer sees every block transfer before it
 * happens, so tests can check ordering rules (WAL before data) and count or
 * stall I/O. Both cost one relaxed atomic load per operation when unused.
 *
 * Names, errors, ownership and threads follow docs/api.md; a call says
 * only where it differs.
 */
#ifndef HOTSET_FAULT_H
#define HOTSET_FAULT_H

#include "hotset/storage.h"
#include "hotset/wal.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The public API: exported from libhotset.so, which is otherwise built with
 * -fvisibility=hidden so its internals stay private. */
#pragma GCC visibility push(default)

typedef enum hs_io_op {
  HS_IO_OPEN = 0, /* opening or creating a fork's file */
  HS_IO_READ,     /* hs_smgr_read */
  HS_IO_WRITE,    /* hs_smgr_write */
  HS_IO_SYNC,     /* hs_smgr_sync */
  HS_IO_EXTEND,   /* hs_smgr_extend */
  HS_IO_OP_COUNT
} hs_io_op;

const char *hs_io_op_name(hs_io_op op);

/* Makes the `nth` operation of kind `op` from now on (1 = the next one) fail,
 * and the `times - 1` after it as well. `err` is the errno to fail with
 * (EIO, ENOSPC, EACCES, ...); err == 0 means a short transfer instead: half a
 * page is moved, the rest is not. Re-arming an op replaces its earlier fault. */
hs_status hs_smgr_inject_fault(hs_smgr *smgr, hs_io_op op, uint64_t nth, int err, uint32_t times);
/* Disarms every fault. */
void hs_smgr_clear_faults(hs_smgr *smgr);

/* Called before every block read, write and extend, with the page about to
 * be written (NULL for reads). It runs on the I/O thread and may block. */
typedef void (*hs_io_observer)(void *ctx, hs_io_op op, hs_relid rel, hs_fork fork, hs_blockno block,
                               const void *page);
void hs_smgr_set_observer(hs_smgr *smgr, hs_io_observer fn, void *ctx);

/* The log's faults: the `nth` write to a segment file (1 = the next), or
 * fdatasync of one, from now on fails with `err`, and the `times - 1` after
 * it as well; err 0 on a write moves half the bytes and then fails with
 * EIO (a torn write). Segment creation counts as writes and a sync, and so
 * does clearing the tail past a torn or damaged end before the first
 * write. */
typedef enum hs_wal_fault_op {
  HS_WAL_FAULT_WRITE = 0,
  HS_WAL_FAULT_SYNC,
  HS_WAL_FAULT_OPS
} hs_wal_fault_op;
hs_status hs_wal_inject_fault(hs_wal *wal, hs_wal_fault_op op, uint64_t nth, int err,
                              uint32_t times);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
