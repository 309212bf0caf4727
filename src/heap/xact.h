/*
 * heap/xact.h — transactions for the heap: ids, commit and abort, the
 * commit log, snapshots, and the horizon below which a deleted version is
 * dead to everyone.
 *
 * Transaction ids are 64-bit and never wrap (PostgreSQL's 32-bit ids wrap,
 * which is what its freezing exists for; here freezing only spares the
 * commit-log lookups). 0 is "none", 1 is "frozen": committed before every
 * snapshot. Ids are given from 2 up.
 *
 * The commit log is two bits per id — in progress, committed, aborted — in
 * pages of a relation of its own (XACT_CLOG_REL) read through the buffer
 * pool, so it is cached, written and checkpointed like any page, and a
 * commit is a one-byte change to a commit-log page logged with
 * hs_buf_log_change, then a flush of the log to that record: the commit
 * record and the commit-log update are the same record, and recovery
 * replays it with everything else. A transaction that was running when the
 * process died is left "in progress" in the log; the next start treats
 * every id below its first new one as finished, so such an id reads as
 * aborted (PostgreSQL's rule after a crash).
 *
 * Ids survive a crash by reservation: page 0 of the commit log keeps "ids
 * are given below R"; when the next id reaches R, R moves up by
 * XACT_ID_BATCH (a logged change) before the id is given. A restart starts
 * at R, skipping at most a batch of ids nobody used.
 *
 * A snapshot is PostgreSQL's: the next id when it was taken (xmax), and the
 * ids running then; an id is "visible as committed" to it when it committed,
 * is below xmax, and was not running.
 */
#ifndef HOTSET_HEAP_XACT_H
#define HOTSET_HEAP_XACT_H

#include "hotset/pool.h"
#include "hotset/status.h"

#include <stdbool.h>
#include <stdint.h>

typedef uint64_t hs_xid;

#define XACT_INVALID     ((hs_xid)0)
#define XACT_FROZEN      ((hs_xid)1)
#define XACT_FIRST       ((hs_xid)2)
#define XACT_CLOG_REL    0xFFFFFF00u /* the commit log's relation id */
#define XACT_ID_BATCH    4096u
#define XACT_MAX_RUNNING 1024u

typedef enum xact_status {
  XACT_IN_PROGRESS = 0,
  XACT_COMMITTED = 1,
  XACT_ABORTED = 2,
} xact_status;

typedef struct xact_mgr xact_mgr;

/* Opens the commit log in `pool` (which must have a log: hs_pool_options.wal),
 * creating it if missing; ids start past every id given before. */
hs_status xact_open(hs_pool *pool, xact_mgr **out);
void xact_close(xact_mgr *m);

/* A new transaction: its id, running from now. HS_ERR_BUSY if
 * XACT_MAX_RUNNING are running. */
hs_status xact_begin(xact_mgr *m, hs_xid *xid);
/* Commits: the commit log says so, durably (the log flushed to it), and the
 * id stops running. */
hs_status xact_commit(xact_mgr *m, hs_xid xid);
/* Aborts: recorded (not flushed: an abort lost in a crash reads as aborted
 * anyway), and the id stops running. */
hs_status xact_abort(xact_mgr *m, hs_xid xid);

/* What the commit log says (an id below this start's first id that never
 * finished reads as aborted). XACT_FROZEN is committed. */
hs_status xact_status_of(xact_mgr *m, hs_xid xid, xact_status *out);

typedef struct xact_snapshot {
  hs_xid xmin; /* the oldest id running when taken */
  hs_xid xmax; /* the next id when taken */
  uint32_t nrunning;
  hs_xid running[XACT_MAX_RUNNING]; /* ids running when taken */
} xact_snapshot;

/* Takes a snapshot, and counts it among the oldest-running horizon's
 * holders until xact_release_snapshot. */
hs_status xact_take_snapshot(xact_mgr *m, xact_snapshot *s);
void xact_release_snapshot(xact_mgr *m, const xact_snapshot *s);
/* Whether `xid`'s work is visible to the snapshot: committed, and finished
 * before the snapshot was taken. The snapshot's own transaction is the
 * caller's to handle. */
hs_status xact_visible(xact_mgr *m, const xact_snapshot *s, hs_xid xid, bool *visible);

/* The oldest id any running transaction or held snapshot may still need to
 * see as running: a version deleted by a committed id below this is dead to
 * everyone (vacuum may remove it). */
hs_xid xact_horizon(xact_mgr *m);
/* The next id to be given. */
hs_xid xact_next(xact_mgr *m);

#endif
