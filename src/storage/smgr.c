/*
 * storage/smgr.c — the storage manager: relation forks as files of blocks.
 *
 * Layout. One data directory; each fork of a relation is one file, "<rel>",
 * "<rel>_fsm", "<rel>_vm", "<rel>_init". Block b lives at byte b * page_size.
 * Blocks move whole with pread/pwrite, so there is no shared file position
 * and any number of threads can do I/O on one descriptor at once.
 *
 * Open files. A fork's file is opened on first use and stays open, in a hash
 * table keyed by (rel, fork) behind a readers-writer lock: the common path
 * (the file is already open) takes it shared; only opening, creating and
 * unlinking take it exclusively. Entries are allocated one by one and never
 * move, so a caller keeps using its entry after dropping the lock. One
 * descriptor per open fork, with no cache of descriptors: a data directory
 * with more forks than the process may open fails with EMFILE (HS_ERR_IO).
 *
 * Size. A fork's size is always its file's size (fstat), never a cached
 * count, so a file changed behind our back (a crash, a tool, a test) is
 * reported as it is. nblocks floors: a partial block at the end (left by a
 * failed extend, or a torn file) is not counted, reading it fails with
 * HS_ERR_SHORT_IO, and the next extend writes its block over it. Extending is
 * "fstat, then pwrite at the end" under the entry's own mutex, which makes it
 * atomic against other extenders (and truncate) of that fork; it costs
 * readers and writers of existing blocks nothing.
 *
 * Errors. Every failure goes through hs_fail with one line naming what
 * (the operation), where (the file and block) and why (strerror, or the
 * byte counts of a short transfer). pread and pwrite are retried on EINTR and
 * after partial transfers; a read that finds end-of-file at the start of the
 * block is HS_ERR_EOF, one that finds it inside the block HS_ERR_SHORT_IO.
 * Nothing is ever turned into zeros.
 *
 * Faults (hotset/fault.h) are injected in place of the system call: an
 * injected errno takes exactly the path, status and message the real one
 * would, and a short-transfer fault really moves half a page. Every fault
 * field is a C11 atomic, and one atomic flag says whether any fault is armed,
 * so an unarmed check is one relaxed load. Likewise the observer: one relaxed
 * load when none is set. The observer is called under a private rwlock held
 * shared, so once hs_smgr_set_observer returns no call of the previous
 * observer is still running (its ctx may be freed); an observer must
 * therefore not call hs_smgr_set_observer itself.
 *
 * Concurrency contract. read, write, extend, nblocks and sync may run from
 * any number of threads, also on the same fork. create, unlink and truncate
 * of a fork must not run concurrently with other calls on that same fork
 * (the buffer pool drops a relation's buffers before cutting or removing
 * it); hs_smgr_close must not run concurrently with anything.
 *
 * Durability. hs_smgr_sync is an fsync of the fork's file. After a failed
 * fsync the kernel may have dropped the dirty pages and cleared the error,
 * and a retry can succeed without the data reaching the disk (PostgreSQL's
 * "fsyncgate"). So a failed fsync is sticky: the file's entry records it
 * (sync_failed, and the first errno), and every later sync of it - alone, by
 * relation or all - fails at once without another fsync, until the handle
 * is closed (storage.h states the rule for callers). Only unlinking the file
 * (the entry goes) or creating it anew over a stale entry clears the record.
 * Creating and unlinking a file do not fsync the directory; hs_smgr_sync_all
 * does, when a file was created or removed since its last run, and a failure
 * of that fsync is sticky too. The exception is a listed fork on a handle
 * that keeps the directory's list of the files that must exist
 * (storage/smgr_catalog.h): its creation is made durable before it is
 * listed, and it comes off the list (or its recorded size down) before it
 * is removed (or cut).
 *
 * Direct I/O. A handle opened with direct_io opens every fork's file with
 * O_DIRECT, after storage/direct_io.c has tried the file system and found
 * the alignment it needs. Two rules keep the transfers legal: pages come
 * in aligned (check_buffer refuses others up front, rather than leave the
 * caller an EINVAL from deep inside the kernel), and an injected short
 * transfer moves only its aligned part while reporting the cut (moved_of),
 * so a fault test means the same both ways. The zero page extend writes is
 * aligned too. A torn last block needs nothing special: a direct read
 * across the end of the file stops there, like a buffered one, and the
 * retry from that (unaligned) offset finds the end before any alignment
 * check (test_direct_io's torn block).
 *
 * Directory lock. hs_smgr_lock_dir flocks "<dir>/hotset.lock" and keeps the
 * descriptor until close. flock belongs to the open file description, so a
 * second handle in the same process conflicts as one in another process does.
 */
#include "core/dir_lock.h"
#include "core/error.h"
#include "core/sysio.h"
#include "hotset/fault.h"
#include "hotset/storage.h"
#include "storage/direct_io.h"
#include "storage/smgr_catalog.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

_Static_assert(sizeof(off_t) >= 8, "hotset needs a 64-bit off_t (-D_FILE_OFFSET_BITS=64)");

#define INITIAL_BUCKETS 64u
#define ERRSTR_LEN      128
/* A data directory name leaves this much room for "/<rel>_init". */
#define DIR_MAX (PATH_MAX - 32)
/* fault_take's answer when no fault fires (an injected err is >= 0). */
#define NO_FAULT (-1)

/* One open fork. `fd` is set before the entry is published in the table and
 * changes only under the table's write lock (create over a stale entry). */
typedef struct smgr_file {
  struct smgr_file *next; /* hash chain */
  hs_relid rel;
  hs_fork fork;
  int fd;
  pthread_mutex_t size_lock; /* serializes extend and truncate; guards the failure record */
  atomic_bool needs_sync;    /* written, extended or cut since the last fsync */
  /* An fsync of this file failed: every later sync fails too (see
   * "Durability" above). Set once, under size_lock, after sync_errno, so a
   * reader that sees it true (acquire) reads a sync_errno that no longer
   * changes; cleared only where nothing else runs on the fork (a create over
   * a stale entry). */
  atomic_bool sync_failed;
  int sync_errno; /* why the first failed fsync failed */
} smgr_file;

/* An armed fault: the op `countdown` ops from now fails, and `remaining - 1`
 * after it. countdown 0 means disarmed; it stays at 1 while the fault fires. */
typedef struct smgr_fault {
  _Atomic uint64_t countdown;
  _Atomic uint32_t remaining;
  _Atomic int err;
} smgr_fault;

struct hs_smgr {
  char *dir;
  uint32_t page_size;
  void *zero_page; /* what extend writes when given no page (aligned for O_DIRECT) */

  /* Direct I/O (see "Direct I/O" above): every fork's file is opened with
   * O_DIRECT, and transfers keep to what the file system asked for. */
  bool direct;
  dio_info dio; /* the alignments and file system name (direct only) */

  pthread_rwlock_t table_lock; /* guards buckets, nbuckets, nfiles */
  smgr_file **buckets;
  uint32_t nbuckets; /* a power of two */
  uint32_t nfiles;

  atomic_bool dir_needs_sync; /* a file was created or removed since the last sync_all */
  /* The directory's fsync failed once: sticky like a file's (sync_failed),
   * with dir_sync_errno set before it under table_lock. */
  atomic_bool dir_sync_failed;
  int dir_sync_errno;

  int lock_fd; /* the locked lock file (hs_smgr_lock_dir), or -1 */

  smgr_catalog *catalog; /* the list of files that must exist (storage/smgr_catalog.h) */

  atomic_bool any_fault; /* some fault may be armed */
  smgr_fault faults[HS_IO_OP_COUNT];

  atomic_bool has_observer;       /* observer != NULL */
  pthread_rwlock_t observer_lock; /* guards observer, observer_ctx */
  hs_io_observer observer;
  void *observer_ctx;
};

static const char *const fork_suffix[HS_FORK_COUNT] = {
    [HS_FORK_MAIN] = "", [HS_FORK_FSM] = "_fsm", [HS_FORK_VM] = "_vm", [HS_FORK_INIT] = "_init"};

static const char *const io_op_names[HS_IO_OP_COUNT] = {
    [HS_IO_OPEN] = "open", [HS_IO_READ] = "read",     [HS_IO_WRITE] = "write",
    [HS_IO_SYNC] = "sync", [HS_IO_EXTEND] = "extend",
};

const char *hs_io_op_name(hs_io_op op) {
  if ((unsigned)op >= HS_IO_OP_COUNT) return "unknown";
  return io_op_names[op];
}

/* ---- messages ---------------------------------------------------------- */

/* strerror, without its static buffer (GNU and XSI strerror_r differ). */
static const char *errstr(int err, char buf[ERRSTR_LEN]) {
#if defined(__GLIBC__) && defined(_GNU_SOURCE)
  return strerror_r(err, buf, ERRSTR_LEN);
#else
  if (strerror_r(err, buf, ERRSTR_LEN) != 0) snprintf(buf, ERRSTR_LEN, "error %d", err);
  return buf;
#endif
}

/* Fails with the status for `err` and the message "<what>: <strerror>". */
static hs_status fail_sys(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static hs_status fail_sys(int err, const char *fmt, ...) {
  char what[PATH_MAX + 64], ebuf[ERRSTR_LEN];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  /* A full disk says so in words: it is the one failure an operator can
   * fix at once, and "No space left on device" alone reads like a fault. */
  bool full = err == ENOSPC || err == EDQUOT;
  return hs_fail(hs_status_from_errno(err), err, "%s: %s%s", what, full ? "the disk is full: " : "",
                 errstr(err, ebuf));
}

void hs_smgr_fork_filename(hs_relid rel, hs_fork fork, char *buf, size_t len) {
  if (!buf || len == 0) return;
  if ((unsigned)fork >= HS_FORK_COUNT) {
    snprintf(buf, len, "%u_fork%d", rel, (int)fork);
    return;
  }
  snprintf(buf, len, "%u%s", rel, fork_suffix[fork]);
}

bool hs_smgr_parse_fork_filename(const char *name, hs_relid *rel, hs_fork *fork) {
  if (!name) return false;
  size_t digits = strspn(name, "0123456789");
  if (digits == 0 || digits > 10) return false;
  errno = 0;
  unsigned long long r = strtoull(name, NULL, 10);
  if (errno || r > UINT32_MAX) return false;
  /* Whatever hs_smgr_fork_filename would write for it, and nothing else:
   * the two can never disagree on what a relation file is. */
  for (int f = 0; f < HS_FORK_COUNT; f++) {
    char want[32];
    hs_smgr_fork_filename((hs_relid)r, (hs_fork)f, want, sizeof want);
    if (strcmp(name, want) == 0) {
      if (rel) *rel = (hs_relid)r;
      if (fork) *fork = (hs_fork)f;
      return true;
    }
  }
  return false;
}

/* "<dir>/<file name>"; buf holds PATH_MAX bytes (hs_smgr_open checked the
 * directory name's length, so it always fits). */
static void fork_path(const hs_smgr *s, hs_relid rel, hs_fork fork, char *buf) {
  char name[32];
  hs_smgr_fork_filename(rel, fork, name, sizeof name);
  snprintf(buf, PATH_MAX, "%s/%s", s->dir, name);
}

static hs_status check_fork(hs_fork fork) {
  if ((unsigned)fork < HS_FORK_COUNT) return HS_OK;
  return hs_fail(HS_ERR_MISUSE, 0, "invalid fork number %d", (int)fork);
}

/* ---- fault injection and the observer ---------------------------------- */

/* Counts one op of kind `op` against its armed fault. Returns NO_FAULT, or
 * the errno to fail with (0: a short transfer). */
static int fault_take(hs_smgr *s, hs_io_op op) {
  if (!atomic_load_explicit(&s->any_fault, memory_order_relaxed)) return NO_FAULT;
  smgr_fault *f = &s->faults[op];
  uint64_t c = atomic_load_explicit(&f->countdown, memory_order_acquire);
  while (c > 1) {
    if (atomic_compare_exchange_weak_explicit(&f->countdown, &c, c - 1, memory_order_acq_rel,
                                              memory_order_acquire))
      return NO_FAULT;
  }
  if (c == 0) return NO_FAULT;
  uint32_t r = atomic_load_explicit(&f->remaining, memory_order_acquire);
  while (r > 0) {
    if (!atomic_compare_exchange_weak_explicit(&f->remaining, &r, r - 1, memory_order_acq_rel,
                                               memory_order_acquire))
      continue;
    if (r == 1) { /* the last failure: disarm, unless re-armed meanwhile */
      uint64_t one = 1;
      atomic_compare_exchange_strong_explicit(&f->countdown, &one, 0, memory_order_acq_rel,
                                              memory_order_relaxed);
    }
    return atomic_load_explicit(&f->err, memory_order_relaxed);
  }
  return NO_FAULT;
}

/* The injected errno for a transfer of kind `op` (0 if none); a short-transfer
 * fault halves *len instead. */
static int fault_transfer(hs_smgr *s, hs_io_op op, size_t *len) {
  int err = fault_take(s, op);
  if (err == 0) *len /= 2;
  return err > 0 ? err : 0;
}

hs_status hs_smgr_inject_fault(hs_smgr *smgr, hs_io_op op, uint64_t nth, int err, uint32_t times) {
  if ((unsigned)op >= HS_IO_OP_COUNT)
    return hs_fail(HS_ERR_MISUSE, 0, "cannot inject a fault: invalid I/O op %d", (int)op);
  if (nth == 0 || times == 0 || err < 0)
    return hs_fail(HS_ERR_INVALID, 0,
                   "cannot inject a %s fault: nth (%llu) and times (%u) must be >= 1, err (%d) "
                   ">= 0",
                   hs_io_op_name(op), (unsigned long long)nth, times, err);
  if (err == 0 && (op == HS_IO_OPEN || op == HS_IO_SYNC))
    return hs_fail(HS_ERR_INVALID, 0,
                   "cannot inject a short %s: only read, write and extend transfer a page",
                   hs_io_op_name(op));
  smgr_fault *f = &smgr->faults[op];
  atomic_store_explicit(&f->countdown, 0, memory_order_relaxed);
  atomic_store_explicit(&f->err, err, memory_order_relaxed);
  atomic_store_explicit(&f->remaining, times, memory_order_relaxed);
  atomic_store_explicit(&f->countdown, nth, memory_order_release);
  atomic_store_explicit(&smgr->any_fault, true, memory_order_release);
  return HS_OK;
}

void hs_smgr_clear_faults(hs_smgr *smgr) {
  atomic_store_explicit(&smgr->any_fault, false, memory_order_relaxed);
  for (int op = 0; op < HS_IO_OP_COUNT; op++)
    atomic_store_explicit(&smgr->faults[op].countdown, 0, memory_order_release);
}

void hs_smgr_set_observer(hs_smgr *smgr, hs_io_observer fn, void *ctx) {
  pthread_rwlock_wrlock(&smgr->observer_lock);
  smgr->observer = fn;
  smgr->observer_ctx = ctx;
  atomic_store_explicit(&smgr->has_observer, fn != NULL, memory_order_relaxed);
  pthread_rwlock_unlock(&smgr->observer_lock);
}

static void notify(hs_smgr *s, hs_io_op op, const smgr_file *f, hs_blockno block,
                   const void *page) {
  if (!atomic_load_explicit(&s->has_observer, memory_order_relaxed)) return;
  pthread_rwlock_rdlock(&s->observer_lock);
  if (s->observer) s->observer(s->observer_ctx, op, f->rel, f->fork, block, page);
  pthread_rwlock_unlock(&s->observer_lock);
}

/* ---- the table of open files ------------------------------------------- */

static uint32_t file_hash(hs_relid rel, hs_fork fork) {
  uint64_t key = ((uint64_t)rel << 2 | (uint64_t)fork) * 0x9E3779B97F4A7C15ull;
  return (uint32_t)(key >> 32);
}

/* The link pointing at (rel, fork)'s entry, or at the NULL ending its chain.
 * Caller holds table_lock. */
static smgr_file **find_link(hs_smgr *s, hs_relid rel, hs_fork fork) {
  smgr_file **link = &s->buckets[file_hash(rel, fork) & (s->nbuckets - 1)];
  while (*link && ((*link)->rel != rel || (*link)->fork != fork)) link = &(*link)->next;
  return link;
}

/* Doubles the bucket array; on allocation failure the chains just get longer.
 * Caller holds table_lock exclusively. */
static void table_grow(hs_smgr *s) {
  uint32_t n = s->nbuckets * 2;
  smgr_file **b = calloc(n, sizeof *b);
  if (!b) return;
  for (uint32_t i = 0; i < s->nbuckets; i++) {
    for (smgr_file *f = s->buckets[i], *next; f; f = next) {
      next = f->next;
      smgr_file **head = &b[file_hash(f->rel, f->fork) & (n - 1)];
      f->next = *head;
      *head = f;
    }
  }
  free(s->buckets);
  s->buckets = b;
  s->nbuckets = n;
}

/* Adds a new entry at `link`. Caller holds table_lock exclusively. */
static smgr_file *table_add(hs_smgr *s, smgr_file **link, hs_relid rel, hs_fork fork, int fd) {
  smgr_file *f = malloc(sizeof *f);
  if (!f) return NULL;
  if (pthread_mutex_init(&f->size_lock, NULL) != 0) {
    free(f);
    return NULL;
  }
  f->rel = rel;
  f->fork = fork;
  f->fd = fd;
  f->next = NULL;
  atomic_init(&f->needs_sync, false);
  atomic_init(&f->sync_failed, false);
  f->sync_errno = 0;
  *link = f;
  if (++s->nfiles > s->nbuckets) table_grow(s);
  return f;
}

/* Puts a freshly opened fd into the table. If another thread got there
 * first, its entry wins and fd is closed, unless `replace` (the file was just
 * created, so an existing entry is stale). Takes ownership of fd. */
static hs_status install_fd(hs_smgr *s, hs_relid rel, hs_fork fork, int fd, bool replace,
                            smgr_file **out) {
  pthread_rwlock_wrlock(&s->table_lock);
  smgr_file **link = find_link(s, rel, fork);
  smgr_file *f = *link;
  if (f) {
    close(replace ? f->fd : fd);
    if (replace) {
      f->fd = fd;
      /* A new file: what the removed one lost no longer matters. */
      atomic_store_explicit(&f->sync_failed, false, memory_order_relaxed);
    }
  } else {
    f = table_add(s, link, rel, fork, fd);
  }
  pthread_rwlock_unlock(&s->table_lock);
  if (!f) {
    close(fd);
    return hs_fail(HS_ERR_NOMEM, ENOMEM, "could not open relation %u: out of memory", rel);
  }
  *out = f;
  return HS_OK;
}

static void file_free(smgr_file *f) {
  close(f->fd);
  pthread_mutex_destroy(&f->size_lock);
  free(f);
}

/* open(2) with EINTR retried, or the HS_IO_OPEN fault in its place.
 * Returns 0 or the errno. */
static int open_fd(hs_smgr *s, const char *path, int flags, int *fd) {
  int err = fault_take(s, HS_IO_OPEN);
  if (err > 0) return err;
  do {
    *fd = sys_open(path, flags | O_CLOEXEC, 0600);
  } while (*fd < 0 && errno == EINTR);
  return *fd < 0 ? errno : 0;
}

/* O_DIRECT for a direct handle's relation files, else nothing. */
static int direct_flag(const hs_smgr *s) {
  return s->direct ? O_DIRECT : 0;
}

/* Fails for an open of a relation file that the file system refused
 * because of O_DIRECT (EINVAL, where a buffered handle would not get it):
 * the message names the file system, and there is no buffered retry. */
static hs_status direct_refused(const hs_smgr *s, int err, const char *path) {
  char fs[sizeof s->dio.fs_name];
  /* The file's own file system (it may be a link to another one), or the
   * directory's for a file not there yet. */
  struct stat sb;
  dio_fs_name(stat(path, &sb) == 0 ? path : s->dir, fs, sizeof fs);
  return hs_fail(HS_ERR_INVALID, err,
                 "could not open \"%s\" with O_DIRECT: the file system there (%s) refuses "
                 "direct I/O (Invalid argument); use a file system that supports it, or turn "
                 "direct_io off",
                 path, fs);
}

/* Fails for an open(2) of `path` done for `op` on `block`. */
static hs_status open_failed(const hs_smgr *s, int err, const char *path, hs_io_op op,
                             hs_blockno block) {
  if (s->direct && err == EINVAL) return direct_refused(s, err, path);
  if (op == HS_IO_READ || op == HS_IO_WRITE)
    return fail_sys(err, "could not open \"%s\" to %s block %u", path, hs_io_op_name(op), block);
  if (op == HS_IO_EXTEND) return fail_sys(err, "could not open \"%s\" to extend it", path);
  return fail_sys(err, "could not open \"%s\"", path);
}

/* The open file of (rel, fork), opening it on first use; `op` and `block`
 * (HS_IO_OPEN: none) say what for, in the message if opening fails. */
static hs_status get_file(hs_smgr *s, hs_relid rel, hs_fork fork, hs_io_op op, hs_blockno block,
                          smgr_file **out) {
  hs_status st = check_fork(fork);
  if (st) return st;
  pthread_rwlock_rdlock(&s->table_lock);
  smgr_file *f = *find_link(s, rel, fork);
  pthread_rwlock_unlock(&s->table_lock);
  if (f) {
    *out = f;
    return HS_OK;
  }
  char path[PATH_MAX];
  fork_path(s, rel, fork, path);
  int fd, err = open_fd(s, path, O_RDWR | direct_flag(s), &fd);
  if (err) return open_failed(s, err, path, op, block);
  return install_fd(s, rel, fork, fd, false, out);
}

/* ---- opening and closing ----------------------------------------------- */

static bool page_size_valid(uint32_t page_size) {
  return page_size >= HS_PAGE_SIZE_MIN && page_size <= HS_PAGE_SIZE_MAX &&
         (page_size & (page_size - 1)) == 0;
}

/* Creates `dir` if missing (not its parents); fails if it is not a directory. */
static hs_status make_dir(const char *dir) {
  if (sys_mkdir(dir, 0700) == 0) return HS_OK;
  if (errno != EEXIST) return fail_sys(errno, "could not create directory \"%s\"", dir);
  struct stat sb;
  if (stat(dir, &sb) != 0) return fail_sys(errno, "could not stat directory \"%s\"", dir);
  if (!S_ISDIR(sb.st_mode)) return fail_sys(ENOTDIR, "could not use \"%s\" as data directory", dir);
  return HS_OK;
}

/* The directory name without trailing slashes (but "/" stays "/"). */
static char *dir_dup(const char *dir) {
  size_t len = strlen(dir);
  while (len > 1 && dir[len - 1] == '/') len--;
  char *copy = malloc(len + 1);
  if (!copy) return NULL;
  memcpy(copy, dir, len);
  copy[len] = '\0';
  return copy;
}

/* Allocates an hs_smgr with every lock initialized, or returns NULL. The
 * zero page is aligned for direct I/O (`dio` NULL: buffered). */
static hs_smgr *smgr_alloc(const char *dir, uint32_t page_size, const dio_info *dio) {
  hs_smgr *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->page_size = page_size;
  s->lock_fd = -1;
  s->nbuckets = INITIAL_BUCKETS;
  s->dir = dir_dup(dir);
  if (dio) {
    s->direct = true;
    s->dio = *dio;
  }
  size_t align = dio && dio->mem_align > 4096 ? dio->mem_align : 4096;
  if (posix_memalign(&s->zero_page, align, page_size) == 0)
    memset(s->zero_page, 0, page_size);
  else
    s->zero_page = NULL;
  s->buckets = calloc(s->nbuckets, sizeof *s->buckets);
  s->catalog = smgr_catalog_new();
  bool locks = pthread_rwlock_init(&s->table_lock, NULL) == 0;
  if (locks && pthread_rwlock_init(&s->observer_lock, NULL) != 0) {
    pthread_rwlock_destroy(&s->table_lock);
    locks = false;
  }
  if (s->dir && s->zero_page && s->buckets && s->catalog && locks) return s;
  if (locks) {
    pthread_rwlock_destroy(&s->table_lock);
    pthread_rwlock_destroy(&s->observer_lock);
  }
  free(s->dir);
  free(s->zero_page);
  free(s->buckets);
  smgr_catalog_free(s->catalog);
  free(s);
  return NULL;
}

void hs_smgr_options_init(hs_smgr_options *opts) {
  if (opts) *opts = (hs_smgr_options){.page_size = HS_PAGE_SIZE_DEFAULT, .direct_io = false};
}

hs_status hs_smgr_open(const char *dir, const hs_smgr_options *opts, hs_smgr **out) {
  if (!out) return hs_fail(HS_ERR_MISUSE, 0, "hs_smgr_open: out is NULL");
  *out = NULL;
  hs_smgr_options defaults;
  hs_smgr_options_init(&defaults);
  if (!opts) opts = &defaults;
  uint32_t page_size = opts->page_size ? opts->page_size : HS_PAGE_SIZE_DEFAULT;
  if (!dir || !*dir) return hs_fail(HS_ERR_INVALID, 0, "no data directory given");
  if (strlen(dir) > DIR_MAX)
    return hs_fail(HS_ERR_INVALID, 0, "data directory name is too long (%zu bytes, at most %d)",
                   strlen(dir), DIR_MAX);
  if (!page_size_valid(page_size))
    return hs_fail(HS_ERR_INVALID, 0,
                   "invalid page size %u: must be a power of two from %u to %u bytes", page_size,
                   HS_PAGE_SIZE_MIN, HS_PAGE_SIZE_MAX);
  hs_status st = make_dir(dir);
  if (st) return st;
  dio_info dio;
  if (opts->direct_io && (st = dio_probe(dir, page_size, &dio)) != HS_OK) return st;
  hs_smgr *s = smgr_alloc(dir, page_size, opts->direct_io ? &dio : NULL);
  if (!s)
    return hs_fail(HS_ERR_NOMEM, ENOMEM, "could not allocate the storage manager for \"%s\"", dir);
  *out = s;
  return HS_OK;
}

void hs_smgr_close(hs_smgr *smgr) {
  if (!smgr) return;
  for (uint32_t i = 0; i < smgr->nbuckets; i++) {
    for (smgr_file *f = smgr->buckets[i], *next; f; f = next) {
      next = f->next;
      file_free(f);
    }
  }
  dir_lock_release(smgr->lock_fd); /* releases the flock, the pid cleared; the file stays */
  pthread_rwlock_destroy(&smgr->table_lock);
  pthread_rwlock_destroy(&smgr->observer_lock);
  free(smgr->buckets);
  free(smgr->zero_page);
  free(smgr->dir);
  smgr_catalog_free(smgr->catalog);
  free(smgr);
}

uint32_t hs_smgr_page_size(const hs_smgr *smgr) {
  return smgr->page_size;
}

const char *hs_smgr_dir(const hs_smgr *smgr) {
  return smgr->dir;
}

bool hs_smgr_direct_io(const hs_smgr *smgr) {
  return smgr->direct;
}

uint32_t hs_smgr_io_alignment(const hs_smgr *smgr) {
  return smgr->direct ? smgr->dio.mem_align : 1;
}

/* ---- creating and removing forks --------------------------------------- */

static hs_status create_failed(const hs_smgr *s, int err, const char *path) {
  if (s->direct && err == EINVAL) return direct_refused(s, err, path);
  return fail_sys(err, "could not create \"%s\"", path);
}

hs_status hs_smgr_create(hs_smgr *smgr, hs_relid rel, hs_fork fork) {
  hs_status st = check_fork(fork);
  if (st) return st;
  char path[PATH_MAX];
  fork_path(smgr, rel, fork, path);
  int fd, err = open_fd(smgr, path, O_RDWR | O_CREAT | O_EXCL | direct_flag(smgr), &fd);
  if (err) return create_failed(smgr, err, path);
  atomic_store(&smgr->dir_needs_sync, true);
  smgr_file *f;
  st = install_fd(smgr, rel, fork, fd, true, &f);
  if (st == HS_OK) st = smgr_catalog_note_created(smgr, rel, fork);
  return st;
}

hs_status hs_smgr_create_if_missing(hs_smgr *smgr, hs_relid rel, hs_fork fork, bool *created) {
  if (created) *created = false;
  hs_status st = check_fork(fork);
  if (st) return st;
  char path[PATH_MAX];
  fork_path(smgr, rel, fork, path);
  int fd, err = open_fd(smgr, path, O_RDWR | O_CREAT | O_EXCL | direct_flag(smgr), &fd);
  if (err == EEXIST) {
    /* Already there: fine if it is a fork's file, not if something else
     * took its name (a directory would fail every later read, unclearly). */
    struct stat sb;
    if (stat(path, &sb) != 0) return fail_sys(errno, "could not stat \"%s\"", path);
    if (!S_ISREG(sb.st_mode))
      return hs_fail(HS_ERR_EXISTS, 0, "\"%s\" exists but is not a regular file", path);
    /* Listed if it is not yet: a creator whose listing failed, or a file
     * a tool made, is listed by the next caller that needs it. */
    return smgr_catalog_note_created(smgr, rel, fork);
  }
  if (err) return create_failed(smgr, err, path);
  atomic_store(&smgr->dir_needs_sync, true);
  smgr_file *f;
  st = install_fd(smgr, rel, fork, fd, true, &f);
  if (st == HS_OK && created) *created = true;
  if (st == HS_OK) st = smgr_catalog_note_created(smgr, rel, fork);
  return st;
}

hs_status hs_smgr_exists(hs_smgr *smgr, hs_relid rel, hs_fork fork, bool *exists) {
  if (exists) *exists = false;
  if (!smgr) return hs_fail(HS_ERR_MISUSE, 0, "hs_smgr_exists: the storage manager is NULL");
  if (!exists) return hs_fail(HS_ERR_MISUSE, 0, "hs_smgr_exists: exists is NULL");
  if ((unsigned)fork >= HS_FORK_COUNT)
    return hs_fail(HS_ERR_MISUSE, 0, "hs_smgr_exists: fork %u is not a fork (0 to %u)",
                   (unsigned)fork, HS_FORK_COUNT - 1);
  char path[PATH_MAX];
  fork_path(smgr, rel, fork, path);
  struct stat sb;
  if (stat(path, &sb) == 0) {
    *exists = true;
    return HS_OK;
  }
  if (errno == ENOENT) return HS_OK;
  return fail_sys(errno, "could not stat %s", path);
}

/* Removing the file also forgets a failed fsync of it (its entry goes):
 * data lost from a file that no longer exists cannot be missed. An unlink
 * that fails keeps the entry, and so the failure, unless the file was
 * already gone. */
static hs_status unlink_file(hs_smgr *smgr, hs_relid rel, hs_fork fork) {
  char path[PATH_MAX];
  fork_path(smgr, rel, fork, path);
  int err = sys_unlink(path) != 0 ? errno : 0;
  if (err != 0 && err != ENOENT) return fail_sys(err, "could not unlink \"%s\"", path);
  pthread_rwlock_wrlock(&smgr->table_lock);
  smgr_file **link = find_link(smgr, rel, fork);
  smgr_file *f = *link;
  if (f) {
    *link = f->next;
    smgr->nfiles--;
  }
  pthread_rwlock_unlock(&smgr->table_lock);
  if (f) file_free(f);
  if (err) return fail_sys(err, "could not unlink \"%s\"", path);
  atomic_store(&smgr->dir_needs_sync, true);
  return HS_OK;
}

/* Off the list of files that must exist first: a crash in between leaves a
 * file nobody needs, never a listed file that is gone. */
hs_status hs_smgr_unlink(hs_smgr *smgr, hs_relid rel, hs_fork fork) {
  hs_status st = check_fork(fork);
  if (st) return st;
  st = smgr_catalog_begin_shrink(smgr, rel, fork, true, 0);
  if (st == HS_OK) st = unlink_file(smgr, rel, fork);
  smgr_catalog_end_shrink(smgr);
  return st;
}

/* ---- block I/O --------------------------------------------------------- */

/* pread of len bytes, retried on EINTR and partial reads; stops early at
 * end of file. Returns 0 or the errno; *done is what was read. */
static int pread_full(int fd, void *buf, size_t len, off_t off, size_t *done) {
  *done = 0;
  while (*done < len) {
    ssize_t n = pread(fd, (char *)buf + *done, len - *done, off + (off_t)*done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) break;
    *done += (size_t)n;
  }
  return 0;
}

/* preadv of iov[0..n-1] (all `len` bytes each), retried on EINTR and partial
 * transfers: a partial one resumes inside the iovec it stopped in. iov is
 * modified. */
static int preadv_full(int fd, struct iovec *iov, int n, off_t off, size_t *done) {
  *done = 0;
  while (n > 0) {
    ssize_t got = preadv(fd, iov, n < IOV_MAX ? n : IOV_MAX, off + (off_t)*done);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return errno;
    if (got == 0) break;
    *done += (size_t)got;
    size_t left = (size_t)got;
    while (n > 0 && left >= iov->iov_len) {
      left -= iov->iov_len;
      iov++;
      n--;
    }
    if (n > 0) {
      iov->iov_base = (char *)iov->iov_base + left;
      iov->iov_len -= left;
    }
  }
  return 0;
}

/* pwrite of len bytes, retried on EINTR and partial writes. */
static int pwrite_full(int fd, const void *buf, size_t len, off_t off, size_t *done) {
  *done = 0;
  while (*done < len) {
    ssize_t n = sys_pwrite(fd, (const char *)buf + *done, len - *done, off + (off_t)*done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) break; /* cannot happen for len > 0; never loop forever */
    *done += (size_t)n;
  }
  return 0;
}

/* A direct handle moves pages only from and to memory aligned as the file
 * system asked (hs_smgr_io_alignment); anything else is the caller's
 * mistake, said as such rather than as the kernel's EINVAL. */
static hs_status check_buffer(const hs_smgr *s, const char *fn, const void *page) {
  if (!s->direct || (uintptr_t)page % s->dio.mem_align == 0) return HS_OK;
  return hs_fail(HS_ERR_INVALID, 0,
                 "%s: the page at %p is not aligned to the %u bytes direct I/O needs in \"%s\" "
                 "(%s); allocate pages aligned to hs_smgr_io_alignment()",
                 fn, page, s->dio.mem_align, s->dir, s->dio.fs_name);
}

static off_t block_offset(const hs_smgr *s, hs_blockno block) {
  return (off_t)block * (off_t)s->page_size;
}

/* How much of an injected short transfer of `len` bytes really moves: all
 * of it on a buffered handle; on a direct one the aligned part before the
 * cut (perhaps nothing), since the kernel moves no partial block. What is
 * reported is still the cut, so the caller sees the same short transfer
 * either way. */
static size_t moved_of(const hs_smgr *s, size_t len) {
  return s->direct ? len - len % s->dio.offset_align : len;
}

/* One block's read, or the READ fault in its place. */
static int read_block(hs_smgr *s, smgr_file *f, hs_blockno block, void *page, size_t *done) {
  size_t len = s->page_size;
  int err = fault_transfer(s, HS_IO_READ, &len);
  if (err) {
    *done = 0;
    return err;
  }
  size_t moved = moved_of(s, len);
  err = pread_full(f->fd, page, moved, block_offset(s, block), done);
  if (!err && *done == moved) *done = len;
  return err;
}

/* One block's write for `op` (write or extend), or that op's fault instead. */
static int write_block(hs_smgr *s, hs_io_op op, smgr_file *f, hs_blockno block, const void *page,
                       size_t *done) {
  size_t len = s->page_size;
  int err = fault_transfer(s, op, &len);
  if (err) {
    *done = 0;
    return err;
  }
  size_t moved = moved_of(s, len);
  err = pwrite_full(f->fd, page, moved, block_offset(s, block), done);
  if (!err && *done == moved) *done = len;
  /* Even a failed or partial write may have changed the file. */
  atomic_store_explicit(&f->needs_sync, true, memory_order_release);
  return err;
}

/* The first half of every block I/O message, e.g.
 * `could not read block 7 of "/data/16384_fsm"`. */
static void describe(const hs_smgr *s, const smgr_file *f, hs_io_op op, hs_blockno block, char *buf,
                     size_t len) {
  char path[PATH_MAX];
  fork_path(s, f->rel, f->fork, path);
  if (op == HS_IO_EXTEND)
    snprintf(buf, len, "could not extend \"%s\" with block %u", path, block);
  else
    snprintf(buf, len, "could not %s block %u of \"%s\"", hs_io_op_name(op), block, path);
}

/* The number of whole blocks in f's file (a partial last block not counted). */
static hs_status file_nblocks(hs_smgr *s, smgr_file *f, hs_blockno *out) {
  char path[PATH_MAX];
  struct stat sb;
  if (fstat(f->fd, &sb) != 0) {
    int err = errno;
    fork_path(s, f->rel, f->fork, path);
    return fail_sys(err, "could not stat \"%s\"", path);
  }
  uint64_t n = (uint64_t)sb.st_size / s->page_size;
  if (n > HS_INVALID_BLOCK) {
    fork_path(s, f->rel, f->fork, path);
    return hs_fail(HS_ERR_CORRUPT, 0, "\"%s\" is too large: %llu blocks of %u bytes", path,
                   (unsigned long long)n, s->page_size);
  }
  *out = (hs_blockno)n;
  return HS_OK;
}

/* HS_ERR_EOF for `block`, with the file's size in the message. */
static hs_status past_end(hs_smgr *s, smgr_file *f, hs_io_op op, hs_blockno block) {
  char what[PATH_MAX + 64];
  describe(s, f, op, block, what, sizeof what);
  hs_blockno n;
  if (file_nblocks(s, f, &n) != HS_OK)
    return hs_fail(HS_ERR_EOF, 0, "%s: block %u is past the end of the file", what, block);
  return hs_fail(HS_ERR_EOF, 0, "%s: block %u is past the end of the file (%u blocks)", what, block,
                 n);
}

/* Turns a transfer's outcome into a status and message. */
static hs_status io_result(hs_smgr *s, smgr_file *f, hs_io_op op, hs_blockno block, int err,
                           size_t done) {
  if (!err && done == s->page_size) return HS_OK;
  if (!err && done == 0 && op == HS_IO_READ) return past_end(s, f, op, block);
  char what[PATH_MAX + 64];
  describe(s, f, op, block, what, sizeof what);
  if (err) return fail_sys(err, "%s", what);
  return hs_fail(HS_ERR_SHORT_IO, 0, "%s: %s only %zu of %u bytes", what,
                 op == HS_IO_READ ? "read" : "wrote", done, s->page_size);
}

hs_status hs_smgr_read(hs_smgr *smgr, hs_relid rel, hs_fork fork, hs_blockno block, void *page) {
  if (!page) return hs_fail(HS_ERR_MISUSE, 0, "hs_smgr_read: page is NULL");
  hs_status st = check_buffer(smgr, "hs_smgr_read", page);
  if (st) return st;
  smgr_file *f;
  st = get_file(smgr, rel, fork, HS_IO_READ, block, &f);
  if (st) return st;
  notify(smgr, HS_IO_READ, f, block, NULL);
  size_t done;
  int err = read_block(smgr, f, block, page, &done);
  return io_result(smgr, f, HS_IO_READ, block, err, done);
}

hs_status hs_smgr_readv(hs_smgr *smgr, hs_relid rel, hs_fork fork, hs_blockno block, uint32_t n,
                        void *const *pages) {
  if (!pages || n == 0 || n > HS_SMGR_READV_MAX)
    return hs_fail(HS_ERR_INVALID, 0,
                   "hs_smgr_readv: %u blocks asked for (1 to %u, pages not NULL)", n,
                   HS_SMGR_READV_MAX);
  if ((uint64_t)block + n - 1 >= HS_INVALID_BLOCK)
    return hs_fail(HS_ERR_INVALID, 0, "hs_smgr_readv: blocks %u..%u are past the largest block",
                   block, block + (n - 1));
  struct iovec iov[HS_SMGR_READV_MAX];
  for (uint32_t i = 0; i < n; i++) {
    if (!pages[i]) return hs_fail(HS_ERR_INVALID, 0, "hs_smgr_readv: page %u is NULL", i);
    hs_status st = check_buffer(smgr, "hs_smgr_readv", pages[i]);
    if (st) return st;
    iov[i].iov_base = pages[i];
    iov[i].iov_len = smgr->page_size;
  }
  smgr_file *f;
  hs_status st = get_file(smgr, rel, fork, HS_IO_READ, block, &f);
  if (st) return st;
  for (uint32_t i = 0; i < n; i++) notify(smgr, HS_IO_READ, f, block + i, NULL);
  size_t want = (size_t)n * smgr->page_size, len = want, done = 0;
  int err = fault_transfer(smgr, HS_IO_READ, &len);
  if (!err) {
    if (len < want) { /* an injected short transfer: really read only part */
      /* Cut inside a block, as a one-block read's short fault does (a cut
       * on a block boundary would look like the end of the file). */
      if (len % smgr->page_size == 0) len -= smgr->page_size / 2;
      size_t moved = moved_of(smgr, len);
      uint32_t keep = (uint32_t)((moved + smgr->page_size - 1) / smgr->page_size);
      if (keep > 0) iov[keep - 1].iov_len = moved - (size_t)(keep - 1) * smgr->page_size;
      if (keep > 0) err = preadv_full(f->fd, iov, (int)keep, block_offset(smgr, block), &done);
      if (!err && done == moved) done = len;
    } else {
      err = preadv_full(f->fd, iov, (int)n, block_offset(smgr, block), &done);
    }
  }
  if (!err && done == want) return HS_OK;
  /* Report the first block not fully read, as a one-block read would. */
  hs_blockno first_bad = block + (hs_blockno)(done / smgr->page_size);
  return io_result(smgr, f, HS_IO_READ, first_bad, err, done % smgr->page_size);
}

hs_status hs_smgr_write(hs_smgr *smgr, hs_relid rel, hs_fork fork, hs_blockno block,
                        const void *page) {
  if (!page) return hs_fail(HS_ERR_MISUSE, 0, "hs_smgr_write: page is NULL");
  hs_status st = check_buffer(smgr, "hs_smgr_write", page);
  if (st) return st;
  smgr_file *f;
  hs_blockno n;
  st = get_file(smgr, rel, fork, HS_IO_WRITE, block, &f);
  if (!st) st = file_nblocks(smgr, f, &n);
  if (st) return st;
  if (block >= n) return past_end(smgr, f, HS_IO_WRITE, block);
  notify(smgr, HS_IO_WRITE, f, block, page);
  size_t done;
  int err = write_block(smgr, HS_IO_WRITE, f, block, page, &done);
  return io_result(smgr, f, HS_IO_WRITE, block, err, done);
}

/* Writes `page` as block nblocks; caller holds f->size_lock. */
static hs_status extend_locked(hs_smgr *s, smgr_file *f, const void *page, hs_blockno *block) {
  hs_status st = file_nblocks(s, f, block);
  if (st) return st;
  if (*block == HS_INVALID_BLOCK) {
    char what[PATH_MAX + 64];
    describe(s, f, HS_IO_EXTEND, *block, what, sizeof what);
    return hs_fail(HS_ERR_NOSPACE, 0, "%s: a fork holds at most %u blocks", what, HS_INVALID_BLOCK);
  }
  notify(s, HS_IO_EXTEND, f, *block, page);
  size_t done;
  int err = write_block(s, HS_IO_EXTEND, f, *block, page, &done);
  return io_result(s, f, HS_IO_EXTEND, *block, err, done);
}

hs_status hs_smgr_extend(hs_smgr *smgr, hs_relid rel, hs_fork fork, const void *page,
                         hs_blockno *new_block) {
  hs_status st = page ? check_buffer(smgr, "hs_smgr_extend", page) : HS_OK;
  if (st) return st;
  smgr_file *f;
  st = get_file(smgr, rel, fork, HS_IO_EXTEND, 0, &f);
  if (st) return st;
  hs_blockno block;
  pthread_mutex_lock(&f->size_lock);
  st = extend_locked(smgr, f, page ? page : smgr->zero_page, &block);
  pthread_mutex_unlock(&f->size_lock);
  if (!st && new_block) *new_block = block;
  return st;
}

hs_status hs_smgr_nblocks(hs_smgr *smgr, hs_relid rel, hs_fork fork, hs_blockno *nblocks) {
  if (!nblocks) return hs_fail(HS_ERR_MISUSE, 0, "hs_smgr_nblocks: nblocks is NULL");
  smgr_file *f;
  hs_status st = get_file(smgr, rel, fork, HS_IO_OPEN, 0, &f);
  if (st) return st;
  return file_nblocks(smgr, f, nblocks);
}

/* Cuts f's file to nblocks; caller holds f->size_lock. */
static hs_status truncate_locked(hs_smgr *s, smgr_file *f, hs_blockno nblocks) {
  hs_blockno cur;
  hs_status st = file_nblocks(s, f, &cur);
  if (st) return st;
  char path[PATH_MAX];
  fork_path(s, f->rel, f->fork, path);
  if (nblocks > cur)
    return hs_fail(HS_ERR_INVALID, 0, "cannot truncate \"%s\" to %u blocks: it has only %u", path,
                   nblocks, cur);
  int rc;
  do {
    rc = sys_ftruncate(f->fd, block_offset(s, nblocks));
  } while (rc != 0 && errno == EINTR);
  atomic_store_explicit(&f->needs_sync, true, memory_order_release);
  if (rc != 0) return fail_sys(errno, "could not truncate \"%s\" to %u blocks", path, nblocks);
  return HS_OK;
}

/* The recorded size is lowered first, and the list held until the file is
 * cut, so neither a crash nor a checkpoint in between leaves a list asking
 * for blocks the file no longer has. */
hs_status hs_smgr_truncate(hs_smgr *smgr, hs_relid rel, hs_fork fork, hs_blockno nblocks) {
  smgr_file *f;
  hs_blockno cur;
  hs_status st = get_file(smgr, rel, fork, HS_IO_OPEN, 0, &f);
  if (!st) st = file_nblocks(smgr, f, &cur);
  if (st) return st;
  /* A length past the end is refused below, the list left alone. */
  bool shrinks = nblocks <= cur;
  if (shrinks) st = smgr_catalog_begin_shrink(smgr, rel, fork, false, nblocks);
  if (st == HS_OK) {
    pthread_mutex_lock(&f->size_lock);
    st = truncate_locked(smgr, f, nblocks);
    pthread_mutex_unlock(&f->size_lock);
  }
  if (shrinks) smgr_catalog_end_shrink(smgr);
  return st;
}

/* fsync(2) with EINTR retried, or the SYNC fault in its place. */
static int sync_fd(hs_smgr *s, int fd) {
  int err = fault_take(s, HS_IO_SYNC);
  if (err > 0) return err;
  int rc;
  do {
    rc = sys_fsync(fd);
  } while (rc != 0 && errno == EINTR);
  return rc != 0 ? errno : 0;
}

/* The failure of every sync after a failed fsync of `what` (a file or the
 * directory), with the first failure's errno. */
static hs_status earlier_sync_failed(const char *what, int first_errno) {
  char ebuf[ERRSTR_LEN];
  return hs_fail(HS_ERR_IO, first_errno,
                 "an earlier fsync of %s failed (%s), so data written since its last good sync "
                 "may not be on disk: close the storage manager and recover the data",
                 what, errstr(first_errno, ebuf));
}

static hs_status file_sync_failed(hs_smgr *s, smgr_file *f) {
  char path[PATH_MAX], what[PATH_MAX + 2];
  fork_path(s, f->rel, f->fork, path);
  snprintf(what, sizeof what, "\"%s\"", path);
  return earlier_sync_failed(what, f->sync_errno);
}

/* fsyncs one open file. The needs_sync flag is cleared first, so a write
 * that lands during the fsync sets it again and is synced next time. A
 * failed fsync is remembered for good (the first errno wins), and a file
 * with one on record is not fsynced again: the answer is that failure. A
 * successful fsync that ends after another thread's failed one on the same
 * file may have been told nothing of the lost pages, so it fails too. */
static hs_status sync_file(hs_smgr *s, smgr_file *f) {
  if (atomic_load_explicit(&f->sync_failed, memory_order_acquire)) return file_sync_failed(s, f);
  atomic_store_explicit(&f->needs_sync, false, memory_order_release);
  int err = sync_fd(s, f->fd);
  if (!err) {
    if (atomic_load_explicit(&f->sync_failed, memory_order_acquire)) return file_sync_failed(s, f);
    return HS_OK;
  }
  atomic_store_explicit(&f->needs_sync, true, memory_order_release);
  pthread_mutex_lock(&f->size_lock);
  if (!atomic_load_explicit(&f->sync_failed, memory_order_relaxed)) {
    f->sync_errno = err;
    atomic_store_explicit(&f->sync_failed, true, memory_order_release);
  }
  pthread_mutex_unlock(&f->size_lock);
  char path[PATH_MAX];
  fork_path(s, f->rel, f->fork, path);
  return fail_sys(err, "could not fsync \"%s\"", path);
}

hs_status hs_smgr_sync(hs_smgr *smgr, hs_relid rel, hs_fork fork) {
  smgr_file *f;
  hs_status st = get_file(smgr, rel, fork, HS_IO_OPEN, 0, &f);
  if (st) return st;
  return sync_file(smgr, f);
}

/* The open files (of one relation, or all) that need an fsync, collected
 * under the table lock; the fsyncs run after it is dropped (entries never
 * move, and unlink is not concurrent with sync by contract). */
static hs_status sync_matching(hs_smgr *s, bool one_rel, hs_relid rel) {
  pthread_rwlock_rdlock(&s->table_lock);
  smgr_file **todo = malloc(sizeof *todo * (s->nfiles + 1));
  uint32_t n = 0;
  if (todo) {
    for (uint32_t i = 0; i < s->nbuckets; i++)
      for (smgr_file *f = s->buckets[i]; f; f = f->next)
        if ((!one_rel || f->rel == rel) &&
            (atomic_load_explicit(&f->needs_sync, memory_order_acquire) ||
             atomic_load_explicit(&f->sync_failed, memory_order_acquire)))
          todo[n++] = f;
  }
  pthread_rwlock_unlock(&s->table_lock);
  if (!todo) return hs_fail(HS_ERR_NOMEM, ENOMEM, "could not sync: out of memory");
  hs_status first = HS_OK;
  char msg[512] = "";
  int first_errno = 0;
  for (uint32_t i = 0; i < n; i++) {
    hs_status st = sync_file(s, todo[i]);
    if (st != HS_OK && first == HS_OK) {
      first = st;
      first_errno = hs_last_errno();
      snprintf(msg, sizeof msg, "%s", hs_last_error());
    }
  }
  free(todo);
  if (first != HS_OK) return hs_fail(first, first_errno, "%s", msg);
  return HS_OK;
}

hs_status hs_smgr_sync_relation(hs_smgr *smgr, hs_relid rel) {
  return sync_matching(smgr, true, rel);
}

static hs_status dir_sync_failed(hs_smgr *s) {
  char what[PATH_MAX + 16];
  snprintf(what, sizeof what, "directory \"%s\"", s->dir);
  return earlier_sync_failed(what, s->dir_sync_errno);
}

/* fsync of the data directory, so created and removed files are durable. A
 * failed one is sticky, as a file's is (the entries it should have made
 * durable may be lost); one that could not even open the directory is not:
 * nothing was synced, so nothing can have been dropped. */
static hs_status sync_dir(hs_smgr *s) {
  if (atomic_load_explicit(&s->dir_sync_failed, memory_order_acquire)) return dir_sync_failed(s);
  if (!atomic_exchange(&s->dir_needs_sync, false)) return HS_OK;
  int fd, err = open_fd(s, s->dir, O_RDONLY | O_DIRECTORY, &fd);
  if (err) {
    atomic_store(&s->dir_needs_sync, true);
    return fail_sys(err, "could not open directory \"%s\" to fsync it", s->dir);
  }
  err = sync_fd(s, fd);
  close(fd);
  if (!err) return HS_OK;
  atomic_store(&s->dir_needs_sync, true);
  pthread_rwlock_wrlock(&s->table_lock);
  if (!atomic_load_explicit(&s->dir_sync_failed, memory_order_relaxed)) {
    s->dir_sync_errno = err;
    atomic_store_explicit(&s->dir_sync_failed, true, memory_order_release);
  }
  pthread_rwlock_unlock(&s->table_lock);
  return fail_sys(err, "could not fsync directory \"%s\"", s->dir);
}

smgr_catalog *smgr_catalog_of(hs_smgr *smgr) {
  return smgr->catalog;
}

hs_status smgr_sync_dir_now(hs_smgr *smgr) {
  atomic_store(&smgr->dir_needs_sync, true);
  return sync_dir(smgr);
}

hs_status hs_smgr_sync_all(hs_smgr *smgr) {
  hs_status st = sync_matching(smgr, false, 0);
  hs_status dst = sync_dir(smgr);
  return st != HS_OK ? st : dst;
}

/* ---- the data directory's lock ----------------------------------------- */

hs_status hs_smgr_lock_dir(hs_smgr *smgr) {
  if (!smgr) return hs_fail(HS_ERR_MISUSE, 0, "hs_smgr_lock_dir: smgr is NULL");
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/%s", smgr->dir, HS_SMGR_LOCK_FILE);
  hs_status st = HS_OK;
  pthread_rwlock_wrlock(&smgr->table_lock); /* guards lock_fd */
  if (smgr->lock_fd < 0) st = dir_lock_take("data directory", smgr->dir, path, &smgr->lock_fd);
  pthread_rwlock_unlock(&smgr->table_lock);
  return st;
}
