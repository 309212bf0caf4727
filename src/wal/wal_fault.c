/*
 * wal/wal_fault.c — the log's deliberate faults (hotset/fault.h).
 *
 * Every write to a segment file and every fdatasync of one goes through
 * here, so a test can make the Nth of them fail as the kernel would (EIO,
 * ENOSPC) or stop a write half way (a torn write, what a crash in the middle
 * of one leaves). Unarmed, a call costs one relaxed atomic load.
 */
#include "core/error.h"
#include "core/sysio.h"
#include "hotset/fault.h"
#include "wal/wal_internal.h"

#include <errno.h>
#include <unistd.h>

hs_status hs_wal_inject_fault(hs_wal *w, hs_wal_fault_op op, uint64_t nth, int err,
                              uint32_t times) {
  if (!w || (unsigned)op >= HS_WAL_FAULT_OPS || nth == 0 || times == 0)
    return hs_fail(HS_ERR_INVALID, 0,
                   "hs_wal_inject_fault: a log, a known operation, nth >= 1 and times >= 1");
  if (op == HS_WAL_FAULT_SYNC && err == 0)
    return hs_fail(HS_ERR_INVALID, 0, "hs_wal_inject_fault: a failed sync needs an errno");
  pthread_mutex_lock(&w->fault_lock);
  w->fault_at[op] = w->fault_count[op] + nth;
  w->fault_err[op] = err;
  w->fault_times[op] = times;
  atomic_store_explicit(&w->faults_armed, true, memory_order_release);
  pthread_mutex_unlock(&w->fault_lock);
  return HS_OK;
}

/* Counts an operation; true (with *err) when it is to fail. */
static bool fault_hits(hs_wal *w, hs_wal_fault_op op, int *err) {
  if (!atomic_load_explicit(&w->faults_armed, memory_order_acquire)) return false;
  pthread_mutex_lock(&w->fault_lock);
  uint64_t n = ++w->fault_count[op];
  bool hit = w->fault_times[op] > 0 && n >= w->fault_at[op];
  if (hit) {
    *err = w->fault_err[op];
    w->fault_times[op]--;
  }
  pthread_mutex_unlock(&w->fault_lock);
  return hit;
}

ssize_t wal_pwrite(hs_wal *w, int fd, const void *buf, size_t n, off_t off) {
  int err;
  if (fault_hits(w, HS_WAL_FAULT_WRITE, &err)) {
    if (err != 0) {
      errno = err;
      return -1;
    }
    /* Torn: half of it reaches the file, the rest does not, and the call
     * fails (EIO) — a short count alone would be retried by the caller, as
     * a real short write must be. */
    ssize_t half = sys_pwrite(fd, buf, n / 2, off);
    if (half >= 0) errno = EIO;
    return -1;
  }
  return sys_pwrite(fd, buf, n, off);
}

int wal_fdatasync(hs_wal *w, int fd) {
  int err;
  if (fault_hits(w, HS_WAL_FAULT_SYNC, &err)) {
    errno = err;
    return -1;
  }
  return sys_fdatasync(fd);
}

int wal_fsync(hs_wal *w, int fd) {
  int err;
  if (fault_hits(w, HS_WAL_FAULT_SYNC, &err)) {
    errno = err;
    return -1;
  }
  return sys_fsync(fd);
}
