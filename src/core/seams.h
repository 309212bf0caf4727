/*
 * core/seams.h — the one table through which a test or a lab tool may watch
 * or intercept the library from inside (internal, not part of the public
 * API, never exported from libhotset.so).
 *
 * Some defects live in a window a few instructions wide: a checkpoint that
 * collects its dirty buffers while an insert is between its record and its
 * page's LSN, a drop that looks at a buffer just before another thread
 * retags it, a power cut between a write and its fsync. A test can only
 * hold such a window open from inside. Rather than a hook per subsystem,
 * each guarded by its own field and setter, every such place calls through
 * this one table, which a program that is not a test never fills: each
 * call site is a load of a NULL pointer and a branch not taken.
 *
 * Rules:
 *  1. Only tests and the lab install seams; the library never sets one.
 *  2. A seam is installed before the threads it watches start, or from
 *     inside another seam on the thread it runs on (a "once" seam clears
 *     itself); `file_ops` alone may be installed while other threads run
 *     (it is atomic), which the power-cut recorder does when it arms.
 *  3. Seams run on the library's thread with whatever locks that call site
 *     holds (each says which below): they may block that thread, but must
 *     not call back into the object they watch unless the site says so.
 *  4. The table is process-wide: a seam sees every pool or log of the
 *     process, so a test that installs one works with one at a time.
 */
#ifndef HOTSET_CORE_SEAMS_H
#define HOTSET_CORE_SEAMS_H

#include "hotset/status.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

struct hs_pool;
typedef struct hs_wal hs_wal; /* as hotset/wal.h declares it (C11 allows the repeat) */
struct hs_tid;
struct dio_info;

/* Replacements for the system calls of core/sysio.h that change files:
 * each takes and returns what the system call does. Installed, every
 * wrapper calls its entry instead of the system call (sys_open only for
 * O_CREAT or O_TRUNC opens). The power-cut recorder (lab/crash/powercut.c)
 * journals each change and may stop the process instead of making it. */
typedef struct seam_file_ops {
  int (*open)(const char *path, int flags, mode_t mode);
  ssize_t (*pwrite)(int fd, const void *buf, size_t len, off_t off);
  ssize_t (*pwritev)(int fd, const struct iovec *iov, int iovcnt, off_t off);
  ssize_t (*write)(int fd, const void *buf, size_t len);
  int (*sync)(int fd, bool data_only);
  int (*ftruncate)(int fd, off_t len);
  int (*fallocate)(int fd, int mode, off_t off, off_t len);
  int (*rename)(const char *from, const char *to);
  int (*rename_noreplace)(const char *from, const char *to);
  int (*link)(const char *from, const char *to);
  int (*unlink)(const char *path);
  int (*mkdir)(const char *path, mode_t mode);
} seam_file_ops;

/* The phases of seams.pool_drop. */
enum { SEAM_DROP_LOOKED = 0, SEAM_DROP_TAKEN = 1 };

struct seams {
  /* core/sysio.c: see seam_file_ops. */
  _Atomic(const seam_file_ops *) file_ops;
  /* pool/checkpoint.c: around each checkpoint, on its thread, no lock
   * held (the power-cut recorder aims cuts inside the nth checkpoint). */
  void (*checkpoint_begin)(void);
  void (*checkpoint_end)(void);
  /* storage/direct_io.c: may change the alignment the file system
   * reported for O_DIRECT (a file system with wider demands than the
   * machine running the test). */
  void (*dio_alignment)(struct dio_info *out);

  /* pool/page_log.c: after hs_buf_log_change / hs_buf_log_record inserted
   * its record and before the buffer's LSN is raised (content lock held).
   * pool/checkpoint.c: right after a checkpoint collected the dirty
   * buffers. The two ends of the window in which a checkpoint could miss a
   * change. */
  void (*pool_logged)(struct hs_pool *pool, void *ctx);
  void (*pool_collected)(struct hs_pool *pool, void *ctx);
  /* pool/page_log.c: after hs_buf_log_record decided which pages carry a
   * full image, before it inserts (the window in which a checkpoint may
   * move the redo point under the decision). */
  void (*pool_decided)(struct hs_pool *pool, void *ctx);
  void *pool_durability_ctx;
  /* pool/flush_drop.c: hs_pool_drop_relation, with SEAM_DROP_LOOKED after
   * it decided from an unlocked look that buffer b belongs to the relation
   * (before it locks anything), and SEAM_DROP_TAKEN after b's page is gone
   * and before b reaches the free list. */
  void (*pool_drop)(struct hs_pool *pool, int32_t b, int phase, void *ctx);
  void *pool_drop_ctx;
  /* pool/pool.c: on the thread that zero-filled buffer b, right after its
   * page became valid and before the call returns. */
  void (*pool_zeroed)(struct hs_pool *pool, int32_t b, void *ctx);
  void *pool_zeroed_ctx;
  /* pool/pool.c: hs_pool_extend, after the file grew by `block` and
   * before the new block's buffer is in the page table. */
  void (*pool_extended)(struct hs_pool *pool, uint32_t rel, int fork, uint32_t block, void *ctx);
  void *pool_extended_ctx;

  /* wal/wal.c: a flush's leader, just before it takes the write lock. */
  void (*wal_before_write_lock)(void *ctx);
  void *wal_before_write_lock_ctx;
  /* wal/wal_checkpoint.c: a checkpoint's recycling, with the first future
   * segment name it will give a spare, before it gives any. */
  void (*wal_spare_name)(hs_wal *w, uint64_t next, void *ctx);
  void *wal_spare_name_ctx;

  /* cache/object_cache.c, debug builds only (HOTSET_DEBUG; the release
   * hit path has no call): a lock-free lookup, after it read a block's
   * hash and before it takes the block's reference, no lock held — the
   * window in which the block may be reused for another key. */
  void (*object_probe)(void);

  /* heap/pk_index.c: inside every primary-key lookup, after it read the
   * key's entry and before it walks the chain from there, no lock held. */
  void (*pk_lookup)(void *ctx, uint64_t key, const struct hs_tid *entry);
  void *pk_lookup_ctx;
};

/* The process's table: all NULL unless a test or a lab tool fills it. */
extern struct seams seams;

#endif
