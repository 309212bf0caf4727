/*
 * crash/powercut.c — the power-cut recorder and its applier
 * (crash/powercut.h; the model is in docs/wal.md, "Power cuts in the test
 * suite").
 *
 * The journal is a sequence of records, each a pc_rec header followed by
 * its path(s), the bytes it saved (what a write overwrote, what a
 * truncation cut off, the content of a file a rename replaced or an unlink
 * removed) and, for a write, the bytes written (none when they are all
 * zeros). Records are appended with one writev(2) to an O_APPEND
 * descriptor and never synced: the process's death keeps the page cache.
 *
 * Recording. Each change is journaled and made under one lock, so the
 * bytes read before a write are the ones it overwrote, and the journal's
 * order is the order the changes were made in. Files are known by an id
 * the recorder gives each inode (a reused inode number gets a new id), so
 * a file keeps its history through renames and links. A sync is counted
 * (it may be the cut) but made outside the lock; its record, appended once
 * it returned, covers the operations numbered before it — a sync the
 * process did not live to finish covers nothing.
 */
#include "crash/powercut.h"

#include "core/error.h"
#include "core/seams.h"
#include "core/sysio.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

enum {
  R_WRITE = 1, /* id, off, len, old_size; saved old bytes, new bytes */
  R_SYNC,      /* id (a file) or path (a directory, F_DIR); covers ops < since */
  R_TRUNC,     /* id, off = new size, old_size; saved bytes past the new size */
  R_CREATE,    /* id, path */
  R_RENAME,    /* id, path -> path2; id2 replaced (F_CONTENT: its bytes saved;
                  off, len: its inode and device numbers) */
  R_LINK,      /* id, path -> path2 */
  R_UNLINK,    /* id, path (F_CONTENT: the file's bytes saved: its last name;
                  off, len: its inode and device numbers) */
  R_MKDIR,     /* path */
  R_MARK,      /* a checkpoint began (not an operation) */
  R_CUT,       /* the operation the cut stopped (flags: its PC_OP_ kind; path) */
};
#define F_ZERO    1u /* a write of zeros: its bytes are not stored */
#define F_DIR     2u /* a sync of a directory */
#define F_CONTENT 4u /* the content of a file that lost its last name is saved */
#define F_DATA    8u /* a sync by fdatasync */

#define REC_MAGIC 0x31524350u /* "PCR1" */
#define SAVE_MAX  (64u << 20) /* larger files that lose their last name are not saved */
#define SECTOR    512u

typedef struct pc_rec {
  uint32_t magic;
  uint16_t type, flags;
  uint64_t op;    /* the operation's number */
  uint64_t since; /* a sync: it covers the operations numbered below */
  uint64_t id, id2;
  int64_t off, len; /* a write's range; a truncation's new size in off */
  int64_t old_size; /* the file's size before */
  uint64_t saved;   /* bytes saved after the paths */
  uint32_t path_len, path2_len;
} pc_rec;

/* ---- the recorder ------------------------------------------------------ */

typedef struct id_entry {
  dev_t dev;
  ino_t ino;
  uint64_t id;
} id_entry;

static struct {
  pthread_mutex_t lock;
  char root[PATH_MAX];
  size_t rootlen;
  int jfd;
  uint64_t ops;
  uint64_t cut_at;
  uint64_t mark_k, mark_nth, marks;
  uint64_t rename_k, rename_nth, renames;
  uint64_t dir_k, dir_mark, dir_ops;
  unsigned dir_kinds;
  bool skip_syncs;
  id_entry *ids;
  size_t nids, capids;
  uint64_t next_id;
} rec = {.lock = PTHREAD_MUTEX_INITIALIZER, .jfd = -1};

static _Thread_local bool in_target_mark;
static _Thread_local uint64_t target_mark_ops;
/* Inside the checkpoint whose directory operations a cut_dir_op counts. */
static _Thread_local bool in_dir_mark;

const char *pc_op_kind_name(unsigned kind) {
  static const char *const names[] = {"write", "file-sync", "resize", "create",  "rename",
                                      "link",  "unlink",    "mkdir",  "dir-sync"};
  for (unsigned i = 0; i < sizeof names / sizeof names[0]; i++)
    if (kind == 1u << i) return names[i];
  return "";
}

/* The recorder's replacements for the file-changing system calls, installed
 * through the library's seams when it arms (core/seams.h). */
static int pc_open(const char *path, int flags, mode_t mode);
static ssize_t pc_pwrite(int fd, const void *buf, size_t len, off_t off);
static ssize_t pc_pwritev(int fd, const struct iovec *iov, int iovcnt, off_t off);
static ssize_t pc_write(int fd, const void *buf, size_t len);
static int pc_sync(int fd, bool data_only);
static int pc_ftruncate(int fd, off_t len);
static int pc_fallocate(int fd, int mode, off_t off, off_t len);
static int pc_rename(const char *from, const char *to);
static int pc_rename_noreplace(const char *from, const char *to);
static int pc_link(const char *from, const char *to);
static int pc_unlink(const char *path);
static int pc_mkdir(const char *path, mode_t mode);
static void pc_mark_begin(void);
static void pc_mark_end(void);
static const seam_file_ops recorder_ops = {
    .open = pc_open,
    .pwrite = pc_pwrite,
    .pwritev = pc_pwritev,
    .write = pc_write,
    .sync = pc_sync,
    .ftruncate = pc_ftruncate,
    .fallocate = pc_fallocate,
    .rename = pc_rename,
    .rename_noreplace = pc_rename_noreplace,
    .link = pc_link,
    .unlink = pc_unlink,
    .mkdir = pc_mkdir,
};

hs_status pc_arm_recorder(const pc_arm *arm) {
  if (!arm || !arm->root || !arm->journal)
    return hs_fail(HS_ERR_INVALID, 0, "pc_arm_recorder: a root and a journal");
  pthread_mutex_lock(&rec.lock);
  hs_status st = HS_OK;
  if (!realpath(arm->root, rec.root)) {
    st = hs_fail(HS_ERR_IO, errno, "power-cut recorder: cannot resolve %s", arm->root);
  } else {
    rec.rootlen = strlen(rec.root);
    rec.jfd = open(arm->journal, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
    if (rec.jfd < 0)
      st = hs_fail(HS_ERR_IO, errno, "power-cut recorder: cannot create %s", arm->journal);
  }
  if (st == HS_OK) {
    rec.ops = 0;
    rec.cut_at = arm->cut_after_mark || arm->cut_after_rename || arm->cut_dir_op ? 0 : arm->cut_at;
    rec.dir_k = arm->cut_dir_op;
    rec.dir_kinds = arm->dir_op_kinds ? arm->dir_op_kinds : PC_OP_DIRECTORY;
    rec.dir_mark = arm->dir_op_mark;
    rec.dir_ops = 0;
    rec.rename_k = arm->cut_after_rename;
    rec.rename_nth = arm->rename_nth ? arm->rename_nth : 1;
    rec.renames = 0;
    rec.mark_k = arm->cut_after_mark;
    rec.mark_nth = arm->mark_nth ? arm->mark_nth : 1;
    rec.marks = 0;
    rec.skip_syncs = arm->skip_syncs;
    rec.next_id = 1;
    seams.checkpoint_begin = pc_mark_begin;
    seams.checkpoint_end = pc_mark_end;
    atomic_store(&seams.file_ops, &recorder_ops);
  }
  pthread_mutex_unlock(&rec.lock);
  return st;
}

uint64_t pc_operations(void) {
  pthread_mutex_lock(&rec.lock);
  uint64_t n = rec.ops;
  pthread_mutex_unlock(&rec.lock);
  return n;
}

static void journal_append(pc_rec *r, const char *path, const char *path2, const void *saved,
                           const void *bytes, size_t nbytes) {
  r->magic = REC_MAGIC;
  r->path_len = path ? (uint32_t)strlen(path) : 0;
  r->path2_len = path2 ? (uint32_t)strlen(path2) : 0;
  struct iovec iov[5] = {{r, sizeof *r},
                         {(void *)path, r->path_len},
                         {(void *)path2, r->path2_len},
                         {(void *)saved, saved ? r->saved : 0},
                         {(void *)bytes, bytes ? nbytes : 0}};
  size_t total = 0;
  for (int i = 0; i < 5; i++) total += iov[i].iov_len;
  /* One writev to an O_APPEND file; a short one (no space) leaves a
   * record the applier stops at. */
  ssize_t n = writev(rec.jfd, iov, 5);
  (void)n;
  (void)total;
}

/* Counts an operation of `kind` on `rel` (its path under the root); the
 * cut one is journaled as the cut and ends the process here. Under
 * rec.lock. */
static void count_op(unsigned kind, const char *rel) {
  uint64_t n = ++rec.ops;
  bool cut = n == rec.cut_at;
  if (in_target_mark && ++target_mark_ops == rec.mark_k) cut = true;
  if (rec.dir_k && (kind & rec.dir_kinds) && (rec.dir_mark == 0 || in_dir_mark) &&
      ++rec.dir_ops == rec.dir_k)
    cut = true;
  if (!cut) return;
  pc_rec r = {.type = R_CUT, .flags = (uint16_t)kind, .op = n};
  journal_append(&r, rel, NULL, NULL, NULL, 0);
  _exit(PC_CUT_EXIT);
}

static void pc_mark_begin(void) {
  pthread_mutex_lock(&rec.lock);
  rec.marks++;
  if (rec.mark_k && rec.marks == rec.mark_nth) {
    in_target_mark = true;
    target_mark_ops = 0;
  }
  if (rec.dir_k && rec.dir_mark && rec.marks == rec.dir_mark) in_dir_mark = true;
  pc_rec r = {.type = R_MARK, .op = rec.ops};
  journal_append(&r, NULL, NULL, NULL, NULL, 0);
  pthread_mutex_unlock(&rec.lock);
}

static void pc_mark_end(void) {
  if (!in_target_mark && !in_dir_mark) return;
  in_target_mark = in_dir_mark = false;
  /* The checkpoint made fewer than k operations: the cut falls at the
   * next operation after it. */
  pthread_mutex_lock(&rec.lock);
  rec.cut_at = rec.ops + 1;
  pthread_mutex_unlock(&rec.lock);
}

/* The path of `abs` under the root ("" for the root), or NULL. */
static const char *under_root(const char *abs) {
  if (strncmp(abs, rec.root, rec.rootlen) != 0) return NULL;
  if (abs[rec.rootlen] == '\0') return abs + rec.rootlen;
  if (abs[rec.rootlen] == '/') return abs + rec.rootlen + 1;
  return NULL;
}

/* The file behind fd under the root: its path there (in abs), or NULL. */
static const char *fd_under_root(int fd, char *abs) {
  char link[64];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, abs, PATH_MAX - 1);
  if (n <= 0) return NULL;
  abs[n] = '\0';
  if (strstr(abs, " (deleted)")) return NULL; /* no name left: nothing to recover */
  return under_root(abs);
}

/* `path` made absolute through its directory's real path (the last
 * component may not exist yet), or false. */
static bool resolve(const char *path, char *abs) {
  char dir[PATH_MAX], real[PATH_MAX];
  const char *slash = strrchr(path, '/');
  const char *base = slash ? slash + 1 : path;
  if (slash) {
    size_t len = slash == path ? 1 : (size_t)(slash - path);
    if (len >= sizeof dir) return false;
    memcpy(dir, path, len);
    dir[len] = '\0';
  } else {
    strcpy(dir, ".");
  }
  if (!realpath(dir, real)) return false;
  return snprintf(abs, PATH_MAX, "%s/%s", strcmp(real, "/") ? real : "", base) < PATH_MAX;
}

static void id_forget(dev_t dev, ino_t ino) {
  for (size_t i = 0; i < rec.nids; i++)
    if (rec.ids[i].dev == dev && rec.ids[i].ino == ino) {
      rec.ids[i] = rec.ids[--rec.nids];
      return;
    }
}

/* The id of an inode; a new one for one not seen (or `fresh`). */
static uint64_t id_of(const struct stat *sb, bool fresh) {
  if (fresh) id_forget(sb->st_dev, sb->st_ino);
  for (size_t i = 0; i < rec.nids; i++)
    if (rec.ids[i].dev == sb->st_dev && rec.ids[i].ino == sb->st_ino) return rec.ids[i].id;
  if (rec.nids == rec.capids) {
    size_t cap = rec.capids ? rec.capids * 2 : 64;
    id_entry *more = realloc(rec.ids, cap * sizeof *more);
    if (!more) return 0;
    rec.ids = more;
    rec.capids = cap;
  }
  rec.ids[rec.nids] = (id_entry){sb->st_dev, sb->st_ino, rec.next_id++};
  return rec.ids[rec.nids++].id;
}

/* Reads [off, off+len) of the file at `path` (a write-only descriptor
 * cannot be read: the file is opened again). NULL if it cannot. */
static void *read_range(const char *path, off_t off, size_t len) {
  void *buf = malloc(len ? len : 1);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (!buf || fd < 0) {
    free(buf);
    if (fd >= 0) close(fd);
    return NULL;
  }
  size_t done = 0;
  while (done < len) {
    ssize_t n = pread(fd, (char *)buf + done, len - done, off + (off_t)done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += (size_t)n;
  }
  close(fd);
  if (done < len) memset((char *)buf + done, 0, len - done);
  return buf;
}

static bool all_zero(const void *buf, size_t len) {
  const unsigned char *p = buf;
  for (size_t i = 0; i < len; i++)
    if (p[i]) return false;
  return true;
}

static ssize_t record_write(int fd, const void *buf, size_t len, off_t off, bool advance) {
  char abs[PATH_MAX];
  pthread_mutex_lock(&rec.lock);
  const char *rel = fd_under_root(fd, abs);
  if (!rel) {
    pthread_mutex_unlock(&rec.lock);
    return advance ? write(fd, buf, len) : pwrite(fd, buf, len, off);
  }
  count_op(PC_OP_WRITE, rel);
  struct stat sb;
  if (fstat(fd, &sb) != 0) {
    pthread_mutex_unlock(&rec.lock);
    return -1;
  }
  if (advance) {
    int fl = fcntl(fd, F_GETFL);
    off = fl >= 0 && (fl & O_APPEND) ? sb.st_size : lseek(fd, 0, SEEK_CUR);
  }
  size_t keep = off < sb.st_size ? (size_t)(sb.st_size - off) : 0;
  if (keep > len) keep = len;
  void *old = read_range(abs, off, keep);
  ssize_t n = pwrite(fd, buf, len, off);
  int err = errno;
  if (n > 0) {
    if (advance) lseek(fd, off + n, SEEK_SET);
    bool zero = all_zero(buf, (size_t)n);
    pc_rec r = {.type = R_WRITE,
                .flags = zero ? F_ZERO : 0,
                .op = rec.ops,
                .id = id_of(&sb, false),
                .off = off,
                .len = n,
                .old_size = sb.st_size,
                .saved = old ? ((size_t)n < keep ? (size_t)n : keep) : 0};
    journal_append(&r, rel, NULL, old, zero ? NULL : buf, (size_t)n);
  }
  pthread_mutex_unlock(&rec.lock);
  free(old);
  errno = err;
  return n;
}

static ssize_t pc_pwrite(int fd, const void *buf, size_t len, off_t off) {
  return record_write(fd, buf, len, off, false);
}

static ssize_t pc_write(int fd, const void *buf, size_t len) {
  return record_write(fd, buf, len, 0, true);
}

static ssize_t pc_pwritev(int fd, const struct iovec *iov, int iovcnt, off_t off) {
  size_t len = 0;
  for (int i = 0; i < iovcnt; i++) len += iov[i].iov_len;
  char *buf = malloc(len ? len : 1);
  if (!buf) {
    errno = ENOMEM;
    return -1;
  }
  size_t at = 0;
  for (int i = 0; i < iovcnt; i++) {
    memcpy(buf + at, iov[i].iov_base, iov[i].iov_len);
    at += iov[i].iov_len;
  }
  ssize_t n = record_write(fd, buf, len, off, false);
  int err = errno;
  free(buf);
  errno = err;
  return n;
}

static int pc_sync(int fd, bool data_only) {
  char abs[PATH_MAX];
  pthread_mutex_lock(&rec.lock);
  const char *rel = fd_under_root(fd, abs);
  if (!rel) {
    pthread_mutex_unlock(&rec.lock);
    return data_only ? fdatasync(fd) : fsync(fd);
  }
  struct stat sb;
  if (fstat(fd, &sb) != 0) {
    pthread_mutex_unlock(&rec.lock);
    return -1;
  }
  bool dir = S_ISDIR(sb.st_mode);
  count_op(dir ? PC_OP_DIR_SYNC : PC_OP_FILE_SYNC, rel);
  uint64_t since = rec.ops;
  uint64_t id = dir ? 0 : id_of(&sb, false);
  bool skip = rec.skip_syncs;
  pthread_mutex_unlock(&rec.lock);
  int rc = skip ? 0 : data_only ? fdatasync(fd) : fsync(fd);
  int err = errno;
  if (rc == 0) {
    pthread_mutex_lock(&rec.lock);
    pc_rec r = {.type = R_SYNC,
                .flags = (uint16_t)((dir ? F_DIR : 0) | (data_only ? F_DATA : 0)),
                .op = since,
                .since = since,
                .id = id};
    journal_append(&r, rel, NULL, NULL, NULL, 0);
    pthread_mutex_unlock(&rec.lock);
  }
  errno = err;
  return rc;
}

/* Journals a size change of fd's file to `len` and makes it with `change`. */
static int record_resize(int fd, off_t len, int (*change)(int, off_t, off_t, int), off_t a, off_t b,
                         int mode) {
  char abs[PATH_MAX];
  pthread_mutex_lock(&rec.lock);
  const char *rel = fd_under_root(fd, abs);
  if (!rel) {
    pthread_mutex_unlock(&rec.lock);
    return change(fd, a, b, mode);
  }
  count_op(PC_OP_RESIZE, rel);
  struct stat sb;
  if (fstat(fd, &sb) != 0) {
    pthread_mutex_unlock(&rec.lock);
    return -1;
  }
  void *old = NULL;
  size_t saved = 0;
  if (len < sb.st_size) {
    saved = (size_t)(sb.st_size - len);
    old = read_range(abs, len, saved);
    if (!old) saved = 0;
  }
  int rc = change(fd, a, b, mode);
  int err = errno;
  if (rc == 0 && len != sb.st_size) {
    pc_rec r = {.type = R_TRUNC,
                .op = rec.ops,
                .id = id_of(&sb, false),
                .off = len,
                .old_size = sb.st_size,
                .saved = saved};
    journal_append(&r, rel, NULL, old, NULL, 0);
  }
  pthread_mutex_unlock(&rec.lock);
  free(old);
  errno = err;
  return rc;
}

static int do_ftruncate(int fd, off_t len, off_t unused, int mode) {
  (void)unused;
  (void)mode;
  return ftruncate(fd, len);
}

static int do_fallocate(int fd, off_t off, off_t len, int mode) {
  return fallocate(fd, mode, off, len);
}

static int pc_ftruncate(int fd, off_t len) {
  return record_resize(fd, len, do_ftruncate, len, 0, 0);
}

static int pc_fallocate(int fd, int mode, off_t off, off_t len) {
  struct stat sb;
  if (mode != 0 || fstat(fd, &sb) != 0 || off + len <= sb.st_size)
    return fallocate(fd, mode, off, len); /* no size change: nothing to lose */
  return record_resize(fd, off + len, do_fallocate, off, len, mode);
}

/* The whole content of the file at abs (with its size), or NULL. */
static void *save_content(const char *abs, const struct stat *sb, uint64_t *saved) {
  *saved = 0;
  if (!S_ISREG(sb->st_mode) || sb->st_nlink != 1 || sb->st_size > (off_t)SAVE_MAX) return NULL;
  void *buf = read_range(abs, 0, (size_t)sb->st_size);
  if (buf) *saved = (uint64_t)sb->st_size;
  return buf;
}

static int pc_open(const char *path, int flags, mode_t mode) {
  char abs[PATH_MAX];
  const char *rel = resolve(path, abs) ? under_root(abs) : NULL;
  if (!rel) return open(path, flags, mode);
  pthread_mutex_lock(&rec.lock);
  struct stat sb;
  bool exists = stat(abs, &sb) == 0;
  if ((exists && !(flags & O_TRUNC)) || (exists && (flags & O_EXCL)) ||
      (!exists && !(flags & O_CREAT))) {
    pthread_mutex_unlock(&rec.lock);
    return open(path, flags, mode); /* changes nothing (or fails) */
  }
  count_op(exists ? PC_OP_RESIZE : PC_OP_CREATE, rel);
  void *old = NULL;
  uint64_t saved = 0;
  if (exists && sb.st_size > 0) {
    saved = (uint64_t)sb.st_size;
    old = read_range(abs, 0, (size_t)saved);
    if (!old) saved = 0;
  }
  int fd = open(path, flags, mode);
  int err = errno;
  struct stat now;
  if (fd >= 0 && fstat(fd, &now) == 0) {
    if (!exists) {
      pc_rec r = {.type = R_CREATE, .op = rec.ops, .id = id_of(&now, true)};
      journal_append(&r, rel, NULL, NULL, NULL, 0);
    } else if (sb.st_size > 0) {
      pc_rec r = {.type = R_TRUNC,
                  .op = rec.ops,
                  .id = id_of(&now, false),
                  .off = 0,
                  .old_size = sb.st_size,
                  .saved = saved};
      journal_append(&r, rel, NULL, old, NULL, 0);
    }
  }
  pthread_mutex_unlock(&rec.lock);
  free(old);
  errno = err;
  return fd;
}

static int pc_rename(const char *from, const char *to) {
  char afrom[PATH_MAX], ato[PATH_MAX];
  const char *rfrom = resolve(from, afrom) ? under_root(afrom) : NULL;
  const char *rto = resolve(to, ato) ? under_root(ato) : NULL;
  if (!rfrom || !rto) return rename(from, to);
  pthread_mutex_lock(&rec.lock);
  count_op(PC_OP_RENAME, rto);
  struct stat sf, st;
  bool have_from = lstat(afrom, &sf) == 0;
  bool replaces = lstat(ato, &st) == 0;
  uint64_t saved = 0;
  void *old = replaces ? save_content(ato, &st, &saved) : NULL;
  int rc = rename(from, to);
  int err = errno;
  if (rc == 0 && rec.rename_k && ++rec.renames == rec.rename_nth)
    rec.cut_at = rec.ops + rec.rename_k;
  if (rc == 0 && have_from) {
    pc_rec r = {.type = R_RENAME, .op = rec.ops, .id = id_of(&sf, false), .saved = saved};
    if (replaces) {
      r.id2 = id_of(&st, false);
      r.off = (int64_t)st.st_ino;
      r.len = (int64_t)st.st_dev;
      if (old) r.flags |= F_CONTENT;
      if (st.st_nlink == 1) id_forget(st.st_dev, st.st_ino);
    }
    journal_append(&r, rfrom, rto, old, NULL, 0);
  }
  pthread_mutex_unlock(&rec.lock);
  free(old);
  errno = err;
  return rc;
}

/* A rename that never replaces anything: journaled as a plain rename with
 * no overwritten file. */
static int pc_rename_noreplace(const char *from, const char *to) {
  char afrom[PATH_MAX], ato[PATH_MAX];
  const char *rfrom = resolve(from, afrom) ? under_root(afrom) : NULL;
  const char *rto = resolve(to, ato) ? under_root(ato) : NULL;
  if (!rfrom || !rto) return rename_noreplace(from, to);
  pthread_mutex_lock(&rec.lock);
  count_op(PC_OP_RENAME, rto);
  struct stat sf;
  bool have_from = lstat(afrom, &sf) == 0;
  int rc = rename_noreplace(from, to);
  int err = errno;
  if (rc == 0 && rec.rename_k && ++rec.renames == rec.rename_nth)
    rec.cut_at = rec.ops + rec.rename_k;
  if (rc == 0 && have_from) {
    pc_rec r = {.type = R_RENAME, .op = rec.ops, .id = id_of(&sf, false)};
    journal_append(&r, rfrom, rto, NULL, NULL, 0);
  }
  pthread_mutex_unlock(&rec.lock);
  errno = err;
  return rc;
}

static int pc_link(const char *from, const char *to) {
  char afrom[PATH_MAX], ato[PATH_MAX];
  const char *rfrom = resolve(from, afrom) ? under_root(afrom) : NULL;
  const char *rto = resolve(to, ato) ? under_root(ato) : NULL;
  if (!rfrom || !rto) return link(from, to);
  pthread_mutex_lock(&rec.lock);
  count_op(PC_OP_LINK, rto);
  struct stat sf;
  bool have_from = lstat(afrom, &sf) == 0;
  int rc = link(from, to);
  int err = errno;
  if (rc == 0 && have_from) {
    pc_rec r = {.type = R_LINK, .op = rec.ops, .id = id_of(&sf, false)};
    journal_append(&r, rfrom, rto, NULL, NULL, 0);
  }
  pthread_mutex_unlock(&rec.lock);
  errno = err;
  return rc;
}

static int pc_unlink(const char *path) {
  char abs[PATH_MAX];
  const char *rel = resolve(path, abs) ? under_root(abs) : NULL;
  if (!rel) return unlink(path);
  pthread_mutex_lock(&rec.lock);
  count_op(PC_OP_UNLINK, rel);
  struct stat sb;
  bool exists = lstat(abs, &sb) == 0;
  uint64_t saved = 0;
  void *old = exists ? save_content(abs, &sb, &saved) : NULL;
  int rc = unlink(path);
  int err = errno;
  if (rc == 0 && exists) {
    pc_rec r = {.type = R_UNLINK,
                .flags = old ? F_CONTENT : 0,
                .op = rec.ops,
                .id = id_of(&sb, false),
                .off = (int64_t)sb.st_ino,
                .len = (int64_t)sb.st_dev,
                .saved = saved};
    if (sb.st_nlink == 1) id_forget(sb.st_dev, sb.st_ino);
    journal_append(&r, rel, NULL, old, NULL, 0);
  }
  pthread_mutex_unlock(&rec.lock);
  free(old);
  errno = err;
  return rc;
}

static int pc_mkdir(const char *path, mode_t mode) {
  char abs[PATH_MAX];
  const char *rel = resolve(path, abs) ? under_root(abs) : NULL;
  if (!rel) return mkdir(path, mode);
  pthread_mutex_lock(&rec.lock);
  count_op(PC_OP_MKDIR, rel);
  int rc = mkdir(path, mode);
  int err = errno;
  if (rc == 0) {
    pc_rec r = {.type = R_MKDIR, .op = rec.ops};
    journal_append(&r, rel, NULL, NULL, NULL, 0);
  }
  pthread_mutex_unlock(&rec.lock);
  errno = err;
  return rc;
}

/* ---- the applier ------------------------------------------------------- */

typedef struct jrec {
  pc_rec h;
  const char *path, *path2; /* NUL-terminated copies */
  const unsigned char *saved, *bytes;
} jrec;

typedef struct pc_file {
  uint64_t id;
  int64_t synced_size; /* the size a power loss keeps, short of later syncs */
  bool seen;
  size_t *ops; /* indices of its unsynced writes and truncations, in order */
  size_t nops, capops;
} pc_file;

typedef struct pc_name {
  char *path;
  uint64_t id;
} pc_name;

typedef struct pc_dir {
  char *path;
  size_t *ops; /* indices of its unsynced entry changes, in order */
  size_t nops, capops;
} pc_dir;

typedef struct applier {
  const char *root;
  jrec *recs;
  size_t nrecs;
  pc_file *files;
  size_t nfiles;
  pc_name *names;
  size_t nnames, capnames;
  pc_dir *dirs;
  size_t ndirs, capdirs;
  uint64_t rng;
  bool strict_fdatasync;
  pc_result *out;
} applier;

static uint64_t rnd(applier *a) {
  uint64_t z = (a->rng += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static uint64_t below(applier *a, uint64_t n) {
  return n ? rnd(a) % n : 0;
}

static bool push_index(size_t **v, size_t *n, size_t *cap, size_t x) {
  if (*n == *cap) {
    size_t c = *cap ? *cap * 2 : 16;
    size_t *more = realloc(*v, c * sizeof *more);
    if (!more) return false;
    *v = more;
    *cap = c;
  }
  (*v)[(*n)++] = x;
  return true;
}

static pc_file *file_of(applier *a, uint64_t id) {
  return id && id <= a->nfiles ? &a->files[id - 1] : NULL;
}

static pc_name *name_find(applier *a, const char *path) {
  for (size_t i = 0; i < a->nnames; i++)
    if (strcmp(a->names[i].path, path) == 0) return &a->names[i];
  return NULL;
}

static uint64_t name_id(applier *a, const char *path) {
  pc_name *n = name_find(a, path);
  return n ? n->id : 0;
}

static const char *name_of_id(applier *a, uint64_t id) {
  for (size_t i = 0; i < a->nnames; i++)
    if (a->names[i].id == id) return a->names[i].path;
  return NULL;
}

static bool name_set(applier *a, const char *path, uint64_t id) {
  pc_name *n = name_find(a, path);
  if (n) {
    n->id = id;
    return true;
  }
  if (a->nnames == a->capnames) {
    size_t c = a->capnames ? a->capnames * 2 : 64;
    pc_name *more = realloc(a->names, c * sizeof *more);
    if (!more) return false;
    a->names = more;
    a->capnames = c;
  }
  a->names[a->nnames].path = strdup(path);
  if (!a->names[a->nnames].path) return false;
  a->names[a->nnames++].id = id;
  return true;
}

static void name_drop(applier *a, const char *path) {
  pc_name *n = name_find(a, path);
  if (!n) return;
  free(n->path);
  *n = a->names[--a->nnames];
}

/* The directory part of a path under the root ("" for the root itself). */
static void dir_part(const char *path, char *out, size_t len) {
  const char *slash = strrchr(path, '/');
  size_t n = slash ? (size_t)(slash - path) : 0;
  if (n >= len) n = len - 1;
  memcpy(out, path, n);
  out[n] = '\0';
}

static pc_dir *dir_get(applier *a, const char *dir) {
  for (size_t i = 0; i < a->ndirs; i++)
    if (strcmp(a->dirs[i].path, dir) == 0) return &a->dirs[i];
  if (a->ndirs == a->capdirs) {
    size_t c = a->capdirs ? a->capdirs * 2 : 8;
    pc_dir *more = realloc(a->dirs, c * sizeof *more);
    if (!more) return NULL;
    a->dirs = more;
    a->capdirs = c;
  }
  pc_dir *d = &a->dirs[a->ndirs];
  *d = (pc_dir){.path = strdup(dir)};
  if (!d->path) return NULL;
  a->ndirs++;
  return d;
}

static void abs_path(const applier *a, const char *rel, char *out) {
  snprintf(out, PATH_MAX, "%s%s%s", a->root, rel[0] ? "/" : "", rel);
}

/* The size a file has after the operation rec `i` on it. */
static int64_t size_after(const jrec *r) {
  if (r->h.type == R_TRUNC) return r->h.off;
  int64_t end = r->h.off + r->h.len;
  return end > r->h.old_size ? end : r->h.old_size;
}

/* Reads the journal into a->recs; a record cut short ends it. */
static hs_status load_journal(applier *a, const char *journal, unsigned char **data) {
  int fd = open(journal, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return hs_fail(HS_ERR_IO, errno, "%s: cannot open the power-cut journal", journal);
  struct stat sb;
  if (fstat(fd, &sb) != 0) {
    close(fd);
    return hs_fail(HS_ERR_IO, errno, "%s: cannot stat the power-cut journal", journal);
  }
  size_t size = (size_t)sb.st_size;
  *data = malloc(size ? size : 1);
  if (!*data) {
    close(fd);
    return hs_fail(HS_ERR_NOMEM, ENOMEM, "no memory for the power-cut journal");
  }
  size_t got = 0;
  while (got < size) {
    ssize_t n = pread(fd, *data + got, size - got, (off_t)got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += (size_t)n;
  }
  close(fd);
  size_t cap = 0;
  for (size_t at = 0; at + sizeof(pc_rec) <= got;) {
    pc_rec hdr;
    memcpy(&hdr, *data + at, sizeof hdr);
    if (hdr.magic != REC_MAGIC) break;
    uint64_t nbytes = hdr.type == R_WRITE && !(hdr.flags & F_ZERO) ? (uint64_t)hdr.len : 0;
    uint64_t need = sizeof hdr + hdr.path_len + hdr.path2_len + hdr.saved + nbytes;
    if (need > got - at) break;
    if (a->nrecs == cap) {
      cap = cap ? cap * 2 : 1024;
      jrec *more = realloc(a->recs, cap * sizeof *more);
      if (!more) return hs_fail(HS_ERR_NOMEM, ENOMEM, "no memory for the power-cut journal");
      a->recs = more;
    }
    jrec *r = &a->recs[a->nrecs++];
    *r = (jrec){0};
    r->h = hdr; /* copied: records are not aligned in the journal */
    const unsigned char *p = *data + at + sizeof hdr;
    char *path = malloc(hdr.path_len + 1u), *path2 = malloc(hdr.path2_len + 1u);
    if (!path || !path2) {
      free(path);
      free(path2);
      a->nrecs--;
      return hs_fail(HS_ERR_NOMEM, ENOMEM, "no memory for the power-cut journal");
    }
    memcpy(path, p, hdr.path_len);
    path[hdr.path_len] = '\0';
    p += hdr.path_len;
    memcpy(path2, p, hdr.path2_len);
    path2[hdr.path2_len] = '\0';
    p += hdr.path2_len;
    r->path = path;
    r->path2 = path2;
    r->saved = p;
    r->bytes = nbytes ? p + hdr.saved : NULL;
    at += need;
  }
  return HS_OK;
}

static hs_status nomem(void) {
  return hs_fail(HS_ERR_NOMEM, ENOMEM, "no memory applying a power cut");
}

/* Drops from ops[] the operations numbered below `since` (now durable);
 * returns the index (in ops) past the last one dropped, 0 for none. */
static size_t drop_synced(const applier *a, size_t *ops, size_t *n, uint64_t since) {
  size_t k = 0, last = 0;
  for (size_t j = 0; j < *n; j++) {
    if (a->recs[ops[j]].h.op < since)
      last = j + 1;
    else
      ops[k++] = ops[j];
  }
  size_t dropped = *n - k;
  *n = k;
  return dropped ? last : 0;
}

/* Replays the journal's names and syncs: what is unsynced at its end. */
static hs_status forward(applier *a) {
  uint64_t maxid = 0;
  for (size_t i = 0; i < a->nrecs; i++) {
    if (a->recs[i].h.id > maxid) maxid = a->recs[i].h.id;
    if (a->recs[i].h.id2 > maxid) maxid = a->recs[i].h.id2;
    if (a->recs[i].h.type == R_CUT) a->out->cut_kind = a->recs[i].h.flags;
    if (a->recs[i].h.type != R_MARK && a->recs[i].h.type != R_CUT &&
        a->recs[i].h.op > a->out->operations)
      a->out->operations = a->recs[i].h.op;
  }
  a->files = calloc(maxid ? maxid : 1, sizeof *a->files);
  if (!a->files) return nomem();
  a->nfiles = maxid;
  for (uint64_t i = 0; i < maxid; i++) a->files[i].id = i + 1;
  for (size_t i = 0; i < a->nrecs; i++) {
    const jrec *r = &a->recs[i];
    pc_file *f = file_of(a, r->h.id);
    char dir[PATH_MAX];
    dir_part(r->path2[0] ? r->path2 : r->path, dir, sizeof dir);
    bool ok = true;
    switch (r->h.type) {
    case R_WRITE:
    case R_TRUNC:
      if (!f) break;
      if (!f->seen) {
        f->seen = true;
        f->synced_size = r->h.old_size; /* before arming: durable */
        if (!name_id(a, r->path)) ok = name_set(a, r->path, f->id);
      } else if (f->synced_size < 0) {
        f->synced_size = r->h.old_size;
      }
      ok = ok && push_index(&f->ops, &f->nops, &f->capops, i);
      break;
    case R_SYNC:
      if (r->h.flags & F_DIR) {
        pc_dir *d = dir_get(a, r->path);
        if (!d) return nomem();
        drop_synced(a, d->ops, &d->nops, r->h.since);
      } else if (f) {
        if (!f->seen) {
          f->seen = true;
          f->synced_size = -1; /* not changed since arming */
        }
        size_t *ops = f->ops;
        size_t before = f->nops;
        /* The last op made durable sets the durable size. */
        size_t last_idx = 0;
        for (size_t j = 0; j < before; j++)
          if (a->recs[ops[j]].h.op < r->h.since) last_idx = ops[j] + 1;
        drop_synced(a, f->ops, &f->nops, r->h.since);
        /* fdatasync keeps the size the data needs (Linux), unless strict:
         * then only fsync makes growth durable. */
        bool keeps_size = !(r->h.flags & F_DATA) || !a->strict_fdatasync;
        if (last_idx && keeps_size) f->synced_size = size_after(&a->recs[last_idx - 1]);
      }
      break;
    case R_CREATE:
      if (!f) break;
      f->seen = true;
      f->synced_size = 0;
      ok = name_set(a, r->path, f->id);
      break;
    case R_RENAME:
      if (f && !f->seen) {
        f->seen = true;
        f->synced_size = -1;
      }
      name_drop(a, r->path);
      ok = name_set(a, r->path2, r->h.id);
      break;
    case R_LINK:
      if (f && !f->seen) {
        f->seen = true;
        f->synced_size = -1;
      }
      ok = name_set(a, r->path2, r->h.id);
      break;
    case R_UNLINK:
      name_drop(a, r->path);
      break;
    default:
      break;
    }
    if (!ok) return nomem();
    if (r->h.type == R_CREATE || r->h.type == R_RENAME || r->h.type == R_LINK ||
        r->h.type == R_UNLINK || r->h.type == R_MKDIR) {
      pc_dir *d = dir_get(a, dir);
      if (!d || !push_index(&d->ops, &d->nops, &d->capops, i)) return nomem();
    }
  }
  return HS_OK;
}

static hs_status write_file(const char *abs, const unsigned char *bytes, uint64_t len) {
  int fd = open(abs, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return hs_fail(HS_ERR_IO, errno, "power cut: cannot recreate %s", abs);
  uint64_t done = 0;
  while (done < len) {
    ssize_t n = pwrite(fd, bytes + done, len - done, (off_t)done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      close(fd);
      return hs_fail(HS_ERR_IO, errno, "power cut: cannot write %s", abs);
    }
    done += (uint64_t)n;
  }
  close(fd);
  return HS_OK;
}

/* Finds, under `dir`, a name of the inode (ino, dev): into `out`. */
static bool find_inode(const char *dir, uint64_t ino, uint64_t dev, char *out, int depth) {
  DIR *d = opendir(dir);
  if (!d) return false;
  bool found = false;
  struct dirent *e;
  while (!found && (e = readdir(d))) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path) continue;
    struct stat sb;
    if (lstat(path, &sb) != 0) continue;
    if (S_ISREG(sb.st_mode) && (uint64_t)sb.st_ino == ino && (uint64_t)sb.st_dev == dev) {
      strcpy(out, path);
      found = true;
    } else if (S_ISDIR(sb.st_mode) && depth < 8) {
      found = find_inode(path, ino, dev, out, depth + 1);
    }
  }
  closedir(d);
  return found;
}

/* Gives `rel` back to file `id` (inode ino on device dev): its saved
 * content, else a link to another of its names — one the journal showed,
 * or, for a name it had before arming (a file with two names of which one
 * was removed), one found by its inode. */
static hs_status restore_name(applier *a, const jrec *r, const char *rel, uint64_t id, int64_t ino,
                              int64_t dev) {
  char abs[PATH_MAX], other[PATH_MAX];
  abs_path(a, rel, abs);
  if (r->h.flags & F_CONTENT) {
    hs_status st = write_file(abs, r->saved, r->h.saved);
    if (st != HS_OK) return st;
  } else {
    const char *o = name_of_id(a, id);
    if (o)
      abs_path(a, o, other);
    else if (!find_inode(a->root, (uint64_t)ino, (uint64_t)dev, other, 0))
      return HS_OK; /* no name left and the content not saved (too big) */
    if (link(other, abs) != 0 && errno != EEXIST)
      return hs_fail(HS_ERR_IO, errno, "power cut: cannot link %s to %s", other, abs);
  }
  return name_set(a, rel, id) ? HS_OK : nomem();
}

/* Undoes one directory change. */
static hs_status undo_entry(applier *a, const jrec *r) {
  char abs[PATH_MAX], abs2[PATH_MAX];
  abs_path(a, r->path, abs);
  abs_path(a, r->path2, abs2);
  switch (r->h.type) {
  case R_CREATE:
    if (unlink(abs) != 0 && errno != ENOENT)
      return hs_fail(HS_ERR_IO, errno, "power cut: cannot remove %s", abs);
    name_drop(a, r->path);
    return HS_OK;
  case R_RENAME: {
    uint64_t id = name_id(a, r->path2);
    if (rename(abs2, abs) != 0)
      return hs_fail(HS_ERR_IO, errno, "power cut: cannot rename %s back to %s", abs2, abs);
    name_drop(a, r->path2);
    if (id && !name_set(a, r->path, id)) return nomem();
    return r->h.id2 ? restore_name(a, r, r->path2, r->h.id2, r->h.off, r->h.len) : HS_OK;
  }
  case R_LINK:
    if (unlink(abs2) != 0 && errno != ENOENT)
      return hs_fail(HS_ERR_IO, errno, "power cut: cannot remove %s", abs2);
    name_drop(a, r->path2);
    return HS_OK;
  case R_UNLINK:
    return restore_name(a, r, r->path, r->h.id, r->h.off, r->h.len);
  case R_MKDIR:
    (void)rmdir(abs); /* one that holds files stays */
    return HS_OK;
  default:
    return HS_OK;
  }
}

static int desc_index(const void *x, const void *y) {
  size_t a = *(const size_t *)x, b = *(const size_t *)y;
  return (a < b) - (a > b);
}

/* How many of n unsynced changes survive: all, none, or a random prefix. */
static size_t survivors(applier *a, size_t n) {
  switch (below(a, 4)) {
  case 0:
    return n;
  case 1:
    return 0;
  default:
    return (size_t)below(a, n + 1);
  }
}

static hs_status undo_entries(applier *a) {
  size_t *lost = NULL, nlost = 0, cap = 0;
  for (size_t i = 0; i < a->ndirs; i++) {
    pc_dir *d = &a->dirs[i];
    for (size_t j = survivors(a, d->nops); j < d->nops; j++)
      if (!push_index(&lost, &nlost, &cap, d->ops[j])) {
        free(lost);
        return nomem();
      }
  }
  if (nlost) qsort(lost, nlost, sizeof *lost, desc_index);
  hs_status st = HS_OK;
  for (size_t i = 0; i < nlost && st == HS_OK; i++) {
    st = undo_entry(a, &a->recs[lost[i]]);
    a->out->dir_entries_lost++;
  }
  free(lost);
  return st;
}

/* Restores, in [lo, hi), what write r overwrote. */
static hs_status unwrite(int fd, const char *abs, const jrec *r, int64_t lo, int64_t hi) {
  unsigned char buf[SECTOR];
  for (int64_t pos = lo; pos < hi; pos++) {
    int64_t k = pos - r->h.off;
    buf[pos - lo] = (uint64_t)k < r->h.saved && pos < r->h.old_size ? r->saved[k] : 0;
  }
  if (pwrite(fd, buf, (size_t)(hi - lo), lo) != hi - lo)
    return hs_fail(HS_ERR_IO, errno, "power cut: cannot write back %s at %" PRId64, abs, lo);
  return HS_OK;
}

/* A power loss on one file: its unsynced writes kept, dropped or torn
 * sector by sector, its unsynced growth cut back. */
static hs_status cut_file(applier *a, pc_file *f) {
  const char *rel = name_of_id(a, f->id);
  if (!rel || (!f->nops && f->synced_size < 0)) return HS_OK;
  char abs[PATH_MAX];
  abs_path(a, rel, abs);
  int fd = open(abs, O_RDWR | O_CLOEXEC);
  if (fd < 0) return hs_fail(HS_ERR_IO, errno, "power cut: cannot open %s", abs);
  int64_t ext = 0;
  for (size_t j = 0; j < f->nops; j++) {
    const jrec *r = &a->recs[f->ops[j]];
    int64_t e = r->h.type == R_WRITE ? r->h.off + r->h.len : r->h.old_size;
    if (e > ext) ext = e;
  }
  size_t nsect = (size_t)((ext + SECTOR - 1) / SECTOR);
  uint32_t *first = malloc((nsect ? nsect : 1) * sizeof *first);
  if (!first) {
    close(fd);
    return nomem();
  }
  memset(first, 0xFF, (nsect ? nsect : 1) * sizeof *first);
  /* Out of 1024: how likely each sector keeps each next write. */
  uint64_t modes[4] = {1024, 0, 512, below(a, 1025)};
  uint64_t keep = modes[below(a, 4)];
  for (size_t j = 0; j < f->nops; j++) {
    const jrec *r = &a->recs[f->ops[j]];
    if (r->h.type != R_WRITE || r->h.len <= 0) continue;
    size_t s0 = (size_t)(r->h.off / SECTOR), s1 = (size_t)((r->h.off + r->h.len - 1) / SECTOR);
    uint64_t kept = 0, dropped = 0;
    for (size_t s = s0; s <= s1; s++) {
      if (first[s] == UINT32_MAX && below(a, 1024) >= keep) first[s] = (uint32_t)j;
      if (first[s] > j)
        kept++;
      else
        dropped++;
    }
    if (!dropped)
      a->out->writes_kept++;
    else if (!kept)
      a->out->writes_dropped++;
    else
      a->out->writes_torn++;
  }
  hs_status st = HS_OK;
  int64_t limit = INT64_MAX;
  for (size_t j = f->nops; j-- > 0 && st == HS_OK;) {
    const jrec *r = &a->recs[f->ops[j]];
    if (r->h.type == R_TRUNC) {
      if (r->h.off < limit) limit = r->h.off;
      continue;
    }
    if (r->h.len <= 0) continue;
    size_t s0 = (size_t)(r->h.off / SECTOR), s1 = (size_t)((r->h.off + r->h.len - 1) / SECTOR);
    for (size_t s = s0; s <= s1 && st == HS_OK; s++) {
      if (first[s] > j) continue;
      int64_t lo = (int64_t)s * SECTOR, hi = lo + SECTOR;
      if (lo < r->h.off) lo = r->h.off;
      if (hi > r->h.off + r->h.len) hi = r->h.off + r->h.len;
      if (hi > limit) hi = limit;
      if (lo < hi) st = unwrite(fd, abs, r, lo, hi);
    }
  }
  free(first);
  struct stat sb;
  if (st == HS_OK && f->synced_size >= 0 && fstat(fd, &sb) == 0 && sb.st_size > f->synced_size) {
    int64_t growth = sb.st_size - f->synced_size, to;
    switch (below(a, 3)) {
    case 0:
      to = f->synced_size;
      break;
    case 1:
      to = sb.st_size;
      break;
    default:
      to = f->synced_size + (int64_t)below(a, (uint64_t)growth + 1) / SECTOR * SECTOR;
    }
    if (to < sb.st_size) {
      if (ftruncate(fd, to) != 0)
        st = hs_fail(HS_ERR_IO, errno, "power cut: cannot cut %s to %" PRId64, abs, to);
      a->out->files_cut++;
    }
  }
  close(fd);
  return st;
}

hs_status pc_apply(const char *root, const char *journal, uint64_t seed, bool strict_fdatasync,
                   pc_result *out) {
  memset(out, 0, sizeof *out);
  applier a = {.root = root, .rng = seed, .strict_fdatasync = strict_fdatasync, .out = out};
  unsigned char *data = NULL;
  hs_status st = load_journal(&a, journal, &data);
  if (st == HS_OK) st = forward(&a);
  if (st == HS_OK) st = undo_entries(&a);
  for (size_t i = 0; st == HS_OK && i < a.nfiles; i++)
    if (a.files[i].seen) st = cut_file(&a, &a.files[i]);
  for (size_t i = 0; i < a.nrecs; i++) {
    free((char *)a.recs[i].path);
    free((char *)a.recs[i].path2);
  }
  for (size_t i = 0; i < a.nfiles; i++) free(a.files[i].ops);
  for (size_t i = 0; i < a.nnames; i++) free(a.names[i].path);
  for (size_t i = 0; i < a.ndirs; i++) {
    free(a.dirs[i].path);
    free(a.dirs[i].ops);
  }
  free(a.recs);
  free(a.files);
  free(a.names);
  free(a.dirs);
  free(data);
  return st;
}
