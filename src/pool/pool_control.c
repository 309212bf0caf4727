/*
 * pool/pool_control.c — the data directory's control file as the pool
 * uses it (hotset/control.h): what a directory is, checked before anything
 * in it is read, and where recovery must start, proven before replay.
 *
 * Opening refuses what it cannot prove. Each refusal below exists because
 * the alternative loses acknowledged commits without an error or leaves a
 * directory that never opens again:
 *
 *  - options that contradict the directory (page size, checksums): reading
 *    8 KiB pages as 16 KiB ones returns the wrong blocks' bytes;
 *  - a log of another system (its segments carry another identifier), or
 *    of another segment size;
 *  - a directory kept with a log opened without it, or with an empty log
 *    while its control file names a checkpoint: the changes since that
 *    checkpoint are in the log that is missing;
 *  - a checkpoint record that is missing, damaged, not a checkpoint, or
 *    past the end of the log (a stale control file put back from a backup
 *    names a redo point whose segment was recycled since; a flipped byte
 *    in the record). Treating that spot as the end of the log would drop
 *    everything after it.
 *
 * The way out is explicit: `hotset reset-log --dir D --force` starts a new
 * log past everything the data files have seen, printing what it gives up.
 */
#include "core/error.h"
#include "core/sysio.h"
#include "hotset/page.h"
#include "hotset/storage.h"
#include "pool/pins.h"
#include "storage/control_file.h"
#include "wal/wal_durable.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WAY_OUT                                                                                    \
  "restore the control file and log that belong together, or accept losing what the log "          \
  "cannot prove with %s"

void reset_log_hint(const char *dir, const char *waldir, char *out, size_t len) {
  char own[4200];
  snprintf(own, sizeof own, "%s/wal", dir);
  if (strcmp(own, waldir) == 0)
    snprintf(out, len, "`hotset reset-log --dir %s --force`", dir);
  else
    snprintf(out, len, "`hotset reset-log --dir %s --wal %s --force`", dir, waldir);
}

/* Whether `dir` holds a relation file (digits, then a fork's suffix). */
static bool has_relation_files(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return false;
  bool found = false;
  for (struct dirent *e; !found && (e = readdir(d)) != NULL;)
    found = hs_smgr_parse_fork_filename(e->d_name, NULL, NULL);
  closedir(d);
  return found;
}

hs_status pool_control_check(hs_pool *pool, const hs_pool_options *opts, uint32_t *page_size) {
  hs_control *c = &pool->control;
  if ((unsigned)opts->checksums > HS_CHECKSUMS_DEFAULT)
    return hs_fail(HS_ERR_INVALID, 0, "hs_pool_open: option checksums: unknown value %d",
                   (int)opts->checksums);
  hs_status st = hs_control_read(opts->dir, c);
  if (st == HS_ERR_NOENT) {
    memset(c, 0, sizeof *c); /* format 0: a new control file is written at start */
    bool has_files = has_relation_files(opts->dir);
    if (!opts->page_size && has_files)
      return hs_fail(HS_ERR_INVALID, 0,
                     "hs_pool_open: %s holds relation files but no control file (%s), so its "
                     "page size is unknown: pass option page_size (a new control file is then "
                     "written with it)",
                     opts->dir, HS_CONTROL_FILE);
    *page_size = opts->page_size ? opts->page_size : HS_PAGE_SIZE_DEFAULT;
    /* The default: on with a log, for a directory with nothing stored (the
     * pages of one from before control files were written without). */
    if (opts->checksums == HS_CHECKSUMS_DEFAULT)
      pool->checksums = opts->wal != NULL && !has_files;
    else
      pool->checksums = opts->checksums == HS_CHECKSUMS_ON;
    return HS_OK;
  }
  if (st != HS_OK) return st;
  /* Nothing stored depends on the page size yet (no relation file, no
   * log): the directory takes the option's, and says so in its next
   * control file. */
  if (opts->page_size && opts->page_size != c->page_size && !c->segment_bytes &&
      !has_relation_files(opts->dir))
    c->page_size = opts->page_size;
  if (opts->page_size && opts->page_size != c->page_size)
    return hs_fail(HS_ERR_INVALID, 0,
                   "hs_pool_open: %s/%s says its pages are %u bytes; option page_size is %u: "
                   "open it with page_size %u or 0 (the directory's)",
                   opts->dir, HS_CONTROL_FILE, c->page_size, opts->page_size, c->page_size);
  /* Nothing stored depends on it yet either: the option (the default: on
   * with a log) decides. Else the directory's setting stands. */
  bool empty = !c->segment_bytes && !has_relation_files(opts->dir);
  bool want = opts->checksums == HS_CHECKSUMS_DEFAULT ? (empty ? opts->wal != NULL : c->checksums)
                                                      : opts->checksums == HS_CHECKSUMS_ON;
  if (want != c->checksums && empty) c->checksums = want;
  if (want != c->checksums)
    return hs_fail(HS_ERR_INVALID, 0,
                   "hs_pool_open: %s/%s says its pages %s checksums; option checksums is %s: "
                   "open it with checksums %s (or HS_CHECKSUMS_DEFAULT, the directory's)",
                   opts->dir, HS_CONTROL_FILE, c->checksums ? "carry" : "carry no",
                   want ? "on" : "off", c->checksums ? "on" : "off");
  pool->checksums = c->checksums;
  *page_size = c->page_size;
  return HS_OK;
}

/* Proves the checkpoint record the control file names: it must be in the
 * log, whole, and a checkpoint with the same redo point. */
static hs_status check_checkpoint(hs_pool *pool, const char *dir) {
  hs_control *c = &pool->control;
  hs_wal *wal = pool->wal;
  char hint[8600];
  reset_log_hint(dir, hs_wal_dir(wal), hint, sizeof hint);
  hs_lsn end = hs_wal_insert_lsn(wal);
  /* The segment that should hold the record: the file to look at. */
  char seg[4300];
  wal_segment_path(hs_wal_dir(wal), c->checkpoint - c->checkpoint % wal_segment_bytes(wal), seg,
                   sizeof seg);
  if (c->checkpoint >= end)
    return hs_fail(HS_ERR_CORRUPT, 0,
                   "hs_pool_open: %s/%s names a checkpoint record at %" PRIX64
                   " (in segment %s), but the log in %s ends at %" PRIX64
                   ": the record is damaged, or the log was cut short or belongs to an older "
                   "state of the directory; " WAY_OUT ". Why the log ends there: %s",
                   dir, HS_CONTROL_FILE, c->checkpoint, seg, hs_wal_dir(wal), end, hint,
                   wal_open_why_end(wal));
  hs_wal_reader *r;
  hs_status st = hs_wal_reader_open(hs_wal_dir(wal), wal_segment_bytes(wal), c->checkpoint, &r);
  if (st != HS_OK) return st;
  hs_wal_read_record rec;
  bool got = false;
  st = hs_wal_reader_next(r, &rec, &got);
  char why[256];
  snprintf(why, sizeof why, "%s", got ? "" : hs_wal_reader_why_end(r));
  hs_lsn redo = 0;
  bool is_checkpoint = got && wal_record_is_checkpoint(&rec, &redo);
  uint8_t rmgr = got ? rec.rmgr : 0, type = got ? rec.type : 0;
  hs_wal_reader_close(r);
  if (st != HS_OK) return st;
  if (!got)
    return hs_fail(HS_ERR_CORRUPT, 0,
                   "hs_pool_open: could not read the checkpoint record at %" PRIX64
                   " that %s/%s names from segment %s (%s); " WAY_OUT,
                   c->checkpoint, dir, HS_CONTROL_FILE, seg, why, hint);
  if (!is_checkpoint)
    return hs_fail(HS_ERR_CORRUPT, 0,
                   "hs_pool_open: the record at %" PRIX64 " that %s/%s names as the last "
                   "checkpoint is not one (resource manager %u, type %u) in segment %s; " WAY_OUT,
                   c->checkpoint, dir, HS_CONTROL_FILE, rmgr, type, seg, hint);
  if (redo != c->redo)
    return hs_fail(HS_ERR_CORRUPT, 0,
                   "hs_pool_open: the checkpoint record at %" PRIX64
                   " in %s has redo point %" PRIX64 ", but %s/%s says %" PRIX64 "; " WAY_OUT,
                   c->checkpoint, hs_wal_dir(wal), redo, dir, HS_CONTROL_FILE, c->redo, hint);
  return HS_OK;
}

/* The system marks the relation files of `dir` carry: each file read up
 * to its first marked page, the files counted per mark. Unreadable files
 * and files without a marked page count for none. */
typedef struct mark_tally {
  uint16_t *marks;
  unsigned *counts, n;
} mark_tally;

static void tally_marks(const char *dir, uint32_t page_size, mark_tally *t) {
  *t = (mark_tally){0};
  DIR *d = opendir(dir);
  unsigned char *page = malloc(page_size);
  for (struct dirent *e; d && page && (e = readdir(d)) != NULL;) {
    if (!hs_smgr_parse_fork_filename(e->d_name, NULL, NULL)) continue;
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    for (hs_blockno blk = 0; fd >= 0; blk++) {
      if (pread(fd, page, page_size, (off_t)blk * page_size) != (ssize_t)page_size) break;
      uint16_t mark = hs_page_verify(page, page_size, blk, NULL, NULL) ? hs_page_system(page) : 0;
      if (!mark) continue;
      unsigned i = 0;
      while (i < t->n && t->marks[i] != mark) i++;
      if (i == t->n) {
        uint16_t *marks = realloc(t->marks, (t->n + 1) * sizeof *marks);
        if (marks) t->marks = marks;
        unsigned *counts = marks ? realloc(t->counts, (t->n + 1) * sizeof *counts) : NULL;
        if (counts) t->counts = counts;
        if (counts) t->marks[t->n] = mark, t->counts[t->n++] = 0;
      }
      if (i < t->n) t->counts[i]++;
      break;
    }
    if (fd >= 0) close(fd);
  }
  if (d) closedir(d);
  free(page);
}

static unsigned tally_of(const mark_tally *t, uint16_t mark) {
  for (unsigned i = 0; i < t->n; i++)
    if (t->marks[i] == mark) return t->counts[i];
  return 0;
}

static void tally_free(mark_tally *t) {
  free(t->marks);
  free(t->counts);
}

/* The mark most relation files of `dir` carry on their first marked page
 * (0: none carries one). */
static uint16_t majority_mark(const char *dir, uint32_t page_size) {
  mark_tally t;
  tally_marks(dir, page_size, &t);
  unsigned best = 0;
  for (unsigned i = 1; i < t.n; i++)
    if (t.counts[i] > t.counts[best]) best = i;
  uint16_t mark = t.n ? t.marks[best] : 0;
  tally_free(&t);
  return mark;
}

/* The log and the control file name two systems. The relation files' pages
 * say which one is the stranger: pages of the log's system and none of the
 * control file's prove the control file came from elsewhere (its way out:
 * moved aside, then rebuilt from the log); pages of the control file's
 * system, the log. Without pages to tell, both are named. */
static hs_status foreign_log_or_control(hs_pool *pool, const char *dir) {
  const hs_control *c = &pool->control;
  hs_wal *wal = pool->wal;
  uint64_t log_id = wal_system_id(wal);
  unsigned with_log = 0, with_control = 0;
  if (c->checksums) {
    mark_tally t;
    tally_marks(dir, c->page_size, &t);
    with_log = tally_of(&t, hs_page_system_tag(log_id));
    with_control = tally_of(&t, hs_page_system_tag(c->system_id));
    tally_free(&t);
  }
  if (with_log && !with_control)
    return hs_fail(HS_ERR_CORRUPT, 0,
                   "hs_pool_open: %s/%s names system %016" PRIX64 ", but the log in %s and the "
                   "pages of %u relation files in %s are system %016" PRIX64
                   "'s: the control file is another directory's; move it aside with `mv %s/%s "
                   "%s/%s.system-%016" PRIX64 "` and open again (a directory without its control "
                   "file is rebuilt from its log)",
                   dir, HS_CONTROL_FILE, c->system_id, hs_wal_dir(wal), with_log, dir, log_id, dir,
                   HS_CONTROL_FILE, dir, HS_CONTROL_FILE, c->system_id);
  if (with_control && !with_log)
    return hs_fail(HS_ERR_CORRUPT, 0,
                   "hs_pool_open: the log in %s belongs to system %016" PRIX64
                   ", but %s/%s and the pages of %u relation files in %s are system %016" PRIX64
                   "'s: the log is another directory's; open %s with its own log",
                   hs_wal_dir(wal), log_id, dir, HS_CONTROL_FILE, with_control, dir, c->system_id,
                   dir);
  return hs_fail(HS_ERR_CORRUPT, 0,
                 "hs_pool_open: the log in %s belongs to system %016" PRIX64
                 ", the data directory %s (its control file %s/%s) to system %016" PRIX64
                 ", and its relation files' pages do not tell which is the stranger: open %s "
                 "with its own log, or put back its own control file",
                 hs_wal_dir(wal), log_id, dir, dir, HS_CONTROL_FILE, c->system_id, dir);
}

/* The log `wal` against the control file `c` of `dir`: whose it is and
 * where recovery starts. */
static hs_status check_log(hs_pool *pool, const char *dir) {
  hs_control *c = &pool->control;
  hs_wal *wal = pool->wal;
  char hint[8600];
  reset_log_hint(dir, hs_wal_dir(wal), hint, sizeof hint);
  pool->recovery_start = 0;
  if (!c->segment_bytes) {
    /* A directory that never had a log: it takes an empty one, which gets
     * its identity. A log with records is some other directory's. */
    if (!wal_is_empty(wal))
      return hs_fail(HS_ERR_INVALID, 0,
                     "hs_pool_open: %s has never been opened with a log, but the log in %s "
                     "already holds records (system %016" PRIX64
                     "): it is another directory's; give %s an empty log directory",
                     dir, hs_wal_dir(wal), wal_system_id(wal), dir);
    c->segment_bytes = wal_segment_bytes(wal);
    return wal_adopt_identity(wal, c->system_id, 0);
  }
  if (c->segment_bytes != wal_segment_bytes(wal))
    return hs_fail(HS_ERR_INVALID, 0,
                   "hs_pool_open: %s/%s says its log has %" PRIu64
                   "-byte segments; the log in %s was opened with %" PRIu64
                   ": open the log with segment_bytes %" PRIu64,
                   dir, HS_CONTROL_FILE, c->segment_bytes, hs_wal_dir(wal), wal_segment_bytes(wal),
                   c->segment_bytes);
  if (wal_is_empty(wal)) {
    if (c->has_checkpoint)
      return hs_fail(HS_ERR_CORRUPT, 0,
                     "hs_pool_open: the log in %s is empty, but %s/%s names a checkpoint at "
                     "%" PRIX64 " in a log of system %016" PRIX64
                     ": the log is missing (or this is not its directory); " WAY_OUT,
                     hs_wal_dir(wal), dir, HS_CONTROL_FILE, c->checkpoint, c->system_id, hint);
    return wal_adopt_identity(wal, c->system_id, 0);
  }
  if (wal_system_id(wal) != c->system_id) return foreign_log_or_control(pool, dir);
  /* The log is read again from the redo point: what lies before it is
   * never replayed, and must not decide where the log ends (a damaged byte
   * there, an old segment of the same log left behind). A log that never
   * had a checkpoint is read from its start. */
  bool settled; /* written before the pool opened: its end is as found then */
  hs_status st = wal_set_end_from(wal, c->has_checkpoint ? c->redo : 0, &settled);
  if (st != HS_OK) return st;
  /* Damage at or before the checkpoint record is told as the checkpoint's
   * (a stale control file, a lost or damaged record): check_checkpoint's
   * message says which, and why the log ends there. */
  const char *damage;
  if (c->has_checkpoint && hs_wal_insert_lsn(wal) <= c->checkpoint)
    return check_checkpoint(pool, dir);
  if (wal_end_damaged(wal, &damage)) {
    return hs_fail(HS_ERR_CORRUPT, 0,
                   "hs_pool_open: %s; opening %s would lose acknowledged commits. The way out "
                   "that gives them up: %s",
                   damage, dir, hint);
  }
  if (!c->has_checkpoint) return HS_OK; /* a log that never had one starts at 0 */
  st = check_checkpoint(pool, dir);
  if (st == HS_OK) pool->recovery_start = c->redo;
  return st;
}

/* After a crash (the control file does not say "shut down"), every
 * relation file is fsynced before recovery: the process that wrote them
 * may have died with writes in the page cache only, and a checkpoint of
 * this process syncs just the files it wrote itself — it could move the
 * redo point past changes a power cut then takes back. PostgreSQL's
 * SyncDataDirectory, for the same reason. */
static hs_status sync_after_crash(const char *dir) {
  DIR *d = opendir(dir);
  if (!d)
    return hs_fail(HS_ERR_IO, errno, "%s: cannot list the data directory: %s", dir,
                   strerror(errno));
  hs_status st = HS_OK;
  for (struct dirent *e; st == HS_OK && (e = readdir(d)) != NULL;) {
    if (!hs_smgr_parse_fork_filename(e->d_name, NULL, NULL)) continue;
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      if (errno != ENOENT)
        st = hs_fail(HS_ERR_IO, errno, "%s: cannot open it to sync it: %s", path, strerror(errno));
      continue;
    }
    if (sys_fsync(fd) != 0)
      st = hs_fail(HS_ERR_IO, errno, "%s: fsync failed: %s", path, strerror(errno));
    close(fd);
  }
  closedir(d);
  if (st == HS_OK) {
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 || sys_fsync(fd) != 0)
      st = hs_fail(HS_ERR_IO, errno, "%s: fsync of the data directory failed: %s", dir,
                   strerror(errno));
    if (fd >= 0) close(fd);
  }
  return st;
}

/* Whether `b` says what `a` does, its state (and time) aside. */
static bool same_but_state(const hs_control *a, const hs_control *b) {
  return a->format == b->format && a->page_size == b->page_size && a->checksums == b->checksums &&
         a->segment_bytes == b->segment_bytes && a->system_id == b->system_id &&
         a->has_checkpoint == b->has_checkpoint && a->checkpoint == b->checkpoint &&
         a->redo == b->redo && a->has_catalog == b->has_catalog && a->id_floor == b->id_floor;
}

hs_status pool_control_start(hs_pool *pool) {
  hs_control *c = &pool->control;
  const hs_control before = *c;
  const char *dir = hs_smgr_dir(pool->smgr);
  hs_wal *wal = pool->wal;
  pool->recovery_start = 0;
  if (c->format == 0) {
    /* A new directory (or one from before control files, opened with an
     * explicit page size): its first control file. */
    c->format = HS_CONTROL_FORMAT;
    c->page_size = pool->page_size;
    c->checksums = pool->checksums;
    c->segment_bytes = wal ? wal_segment_bytes(wal) : 0;
    c->system_id = wal ? wal_system_id(wal) : control_new_system_id();
    /* Pages already there (a directory whose control file was lost, opened
     * with its page size) carry their directory's mark: a new identity
     * must keep it, or every page would read as another directory's. A
     * log with records keeps its own id. */
    uint16_t theirs = pool->checksums ? majority_mark(dir, pool->page_size) : 0;
    if (theirs && (!wal || wal_is_empty(wal)) && hs_page_system_tag(c->system_id) != theirs) {
      uint64_t id;
      do id = control_new_system_id();
      while (hs_page_system_tag(id) != theirs);
      c->system_id = id;
      if (wal) {
        hs_status adopted = wal_adopt_identity(wal, id, 0);
        if (adopted != HS_OK) return adopted;
      }
    }
    c->has_checkpoint = false;
    /* A log with records and no control file: replayable only from its
     * very start, which a log that never had a checkpoint still has. */
    if (wal && !wal_is_empty(wal)) {
      char hint[8600];
      reset_log_hint(dir, hs_wal_dir(wal), hint, sizeof hint);
      hs_wal_reader *r;
      hs_status st = hs_wal_reader_open(hs_wal_dir(wal), wal_segment_bytes(wal), 0, &r);
      if (st != HS_OK) return st;
      hs_wal_read_record rec;
      bool got = false;
      st = hs_wal_reader_next(r, &rec, &got);
      char why[256];
      snprintf(why, sizeof why, "%s", hs_wal_reader_why_end(r));
      hs_wal_reader_close(r);
      if (st != HS_OK) return st;
      if (!got && hs_wal_insert_lsn(wal) > 0)
        return hs_fail(HS_ERR_CORRUPT, 0,
                       "hs_pool_open: %s has no control file, and the log in %s cannot be "
                       "replayed from its start (%s): the directory that goes with this log is "
                       "elsewhere, or its control file was lost; " WAY_OUT,
                       dir, hs_wal_dir(wal), why, hint);
    }
  } else if (!wal) {
    if (c->segment_bytes)
      return hs_fail(HS_ERR_INVALID, 0,
                     "hs_pool_open: %s is kept with a write-ahead log (%" PRIu64
                     "-byte segments, system %016" PRIX64
                     "): open it with its log (option wal), or its changes since the last "
                     "checkpoint are lost and later ones unlogged",
                     dir, c->segment_bytes, c->system_id);
  } else {
    hs_status st = check_log(pool, dir);
    if (st != HS_OK) return st;
  }
  pool->system_tag = hs_page_system_tag(c->system_id);
  atomic_store(&pool->id_floor, c->id_floor);
  if (before.format != 0 && before.state != HS_DB_SHUT_DOWN) {
    hs_status synced = sync_after_crash(dir);
    if (synced != HS_OK) return synced;
  }
  c->state = wal ? HS_DB_IN_RECOVERY : HS_DB_IN_PRODUCTION;
  /* A control file that says everything it said before is not written
   * again now: recovery, which may still refuse (a page past the end of the
   * log), writes it when it ends. A refusal changes nothing on disk. */
  hs_status st = HS_OK;
  if (!same_but_state(&before, c)) st = control_write(dir, c);
  if (st == HS_OK && wal) wal_set_redo_point(wal, pool->recovery_start);
  return st;
}

hs_status pool_control_note_checkpoint(hs_pool *pool, hs_lsn checkpoint, hs_lsn redo) {
  hs_control next = pool->control;
  next.has_checkpoint = true;
  next.checkpoint = checkpoint;
  next.redo = redo;
  next.id_floor = atomic_load(&pool->id_floor);
  next.state = pool->shutting_down ? HS_DB_SHUT_DOWN : HS_DB_IN_PRODUCTION;
  hs_status st = control_write(hs_smgr_dir(pool->smgr), &next);
  if (st == HS_OK) pool->control = next;
  return st;
}
