/*
 * cli/reset_log.c — `hotset reset-log --dir D --force`: the explicit way
 * out for an operator whose data directory refuses to open because its log
 * cannot prove what recovery needs (PostgreSQL's pg_resetwal) — and which
 * gives up only what the log cannot prove.
 *
 * Offline, with the data directory's lock and the log's taken first (a
 * directory open elsewhere is refused: moving a live log aside would lose
 * everything that process writes). Then:
 *
 *  1. the control file, or — missing or damaged — one rebuilt from the log
 *     and the data files (cli/control_rebuild.h), losing nothing when the
 *     log is intact;
 *  2. the log read from the checkpoint's redo point: every record up to
 *     its end E (the first one that fails, or a missing segment) is kept;
 *     past E, the valid records the log still holds are counted — that
 *     count is exactly what is given up;
 *  3. with --force, one of:
 *     - nothing to do: the log reads from the redo point through the
 *       checkpoint to its end (a rebuilt control file is written, nothing
 *       else);
 *     - keep: the log ends at E. The bytes past E go to WALDIR/kept-<E>/
 *       (kept, not deleted), a new checkpoint record with the same redo
 *       point is logged at E, and the control file names it (state "in
 *       production": the next open replays from the redo point to E). The
 *       old redo point stays valid: every page changed before it is on
 *       disk, which is what the old checkpoint proved when it completed;
 *     - restart: when E is before the redo point's segment can be read at
 *       all, or a data page carries an LSN past E (pages written after
 *       records now lost: the log cannot be continued under them), every
 *       file of the log moves into WALDIR/reset-<LSN>/ and a new log begins
 *       one segment past every LSN seen, as before — and the count says
 *       every record from the redo point on is given up.
 *
 * Without --force it prints all of this and changes nothing (exit 1, or 0
 * when there is nothing to do: a directory shut down cleanly, its log
 * intact or never used, is healthy and says so). --remove-kept removes the evidence
 * directories (kept-*, reset-*) of the log directory, saying what each
 * held.
 */
#include "cli/reset_log.h"

#include "cli/control_rebuild.h"
#include "cli/evidence.h"
#include "common/args.h"
#include "common/flags.h"
#include "common/resources.h"
#include "core/dir_lock.h"
#include "core/error.h"
#include "core/sysio.h"
#include "hotset/control.h"
#include "hotset/heap.h"
#include "hotset/page.h"
#include "hotset/pool.h"
#include "hotset/storage.h"
#include "hotset/wal.h"
#include "storage/catalog.h"
#include "storage/control_file.h"
#include "wal/wal_durable.h"
#include "wal/wal_format.h"
#include "wal/wal_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PROG "hotset reset-log"

static const args_command command = {
    .cmd = {.prog = PROG},
    .synopsis = "--dir DIR [--wal DIR] [--force]\n"
                "       [--page-size SIZE --checksums on|off --segment-size SIZE]\n"
                "       hotset reset-log --dir DIR [--wal DIR] --remove-kept",
    .about = "The way out when opening DIR is refused because its log cannot prove what\n"
             "recovery needs (a damaged or missing segment, a damaged checkpoint record or\n"
             "control file, a stale control file, a lost log). Takes DIR's and its log's\n"
             "locks (refused while another process holds them), rebuilds a missing or\n"
             "damaged control file from the log and the data files, reads the log from the\n"
             "checkpoint's redo point, and prints exactly what is kept and what is given up;\n"
             "changes nothing without --force. With it, the log ends at its last readable\n"
             "record (the bytes past it moved into the log directory's kept-<LSN>, not deleted)\n"
             "under a "
             "new checkpoint, or — when the log cannot go on under the data pages — a new\n"
             "log starts past every LSN seen (the old one kept in its reset-<LSN>).\n"
             "--remove-kept removes that evidence once it is no longer wanted.\n",
    .notes = "--page-size, --checksums and --segment-size are used only when the control file is\n"
             "missing or damaged and the directory itself does not prove them. Exit status 0\n"
             "when done or when nothing needs doing; 1 without --force, or on an error.\n",
};
static const args_cmd *const cmd = &command.cmd;

/* The highest LSN carried by a page of DIR that passes its checksum, and
 * how many pages failed it (they stay as they are). */
static hs_status scan_pages(const char *dir, uint32_t page_size, hs_lsn *max_lsn, uint64_t *pages,
                            uint64_t *bad) {
  *max_lsn = *pages = *bad = 0;
  DIR *d = opendir(dir);
  if (!d) return hs_fail(HS_ERR_IO, errno, "cannot list %s: %s", dir, strerror(errno));
  void *page = malloc(page_size);
  hs_status st = page ? HS_OK : hs_fail(HS_ERR_NOMEM, ENOMEM, "out of memory");
  for (struct dirent *e; st == HS_OK && (e = readdir(d)) != NULL;) {
    if (!hs_smgr_parse_fork_filename(e->d_name, NULL, NULL)) continue;
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      st = hs_fail(HS_ERR_IO, errno, "cannot open %s: %s", path, strerror(errno));
      break;
    }
    for (hs_blockno b = 0;; b++) {
      ssize_t n = pread(fd, page, page_size, (off_t)b * page_size);
      if (n < 0) st = hs_fail(HS_ERR_IO, errno, "reading %s: %s", path, strerror(errno));
      if (n != (ssize_t)page_size) break;
      (*pages)++;
      uint32_t expected, found;
      if (!hs_page_verify(page, page_size, b, &expected, &found)) {
        (*bad)++;
        continue;
      }
      if (hs_page_lsn(page) > *max_lsn) *max_lsn = hs_page_lsn(page);
    }
    close(fd);
  }
  closedir(d);
  free(page);
  return st;
}

/* ---- the log from the redo point ------------------------------------- */

typedef struct log_look {
  bool readable;   /* a reader could be opened (the directory is a log) */
  size_t segments; /* files named as segments */
  hs_lsn end;      /* where reading from the redo point stops */
  hs_wal_end_kind kind;
  char why[700];
  uint64_t kept_records, kept_bytes; /* from the redo point to the end */
  bool checkpoint_read;              /* the control file's checkpoint record among them */
  int foreign_rmgr;                  /* an engine's resource manager among them (-1: none) */
  uint64_t lost_records;             /* valid records of this log past the end */
} log_look;

/* Counts the valid records of the log in `waldir` past `end`: those a
 * reader finds from each later record start of this log — the rest of
 * end's segment from the first valid record after it, and every later
 * segment whose header names it, from its first record. */
static uint64_t records_past(const char *waldir, uint64_t segment_bytes, hs_lsn end,
                             hs_lsn valid_after) {
  uint64_t count = 0, *later = NULL;
  size_t n = 0;
  uint64_t seg = end - end % segment_bytes;
  hs_wal_reader *r;
  if (valid_after && hs_wal_reader_open(waldir, segment_bytes, valid_after, &r) == HS_OK) {
    hs_wal_read_record rec;
    bool got;
    while (hs_wal_reader_next(r, &rec, &got) == HS_OK && got && rec.lsn < seg + segment_bytes)
      count++;
    hs_wal_reader_close(r);
  }
  if (wal_own_segments_after(waldir, segment_bytes, seg, &later, &n) != HS_OK) return count;
  for (size_t i = 0; i < n; i++) {
    if (hs_wal_reader_open(waldir, segment_bytes, later[i] + WAL_SEG_HEADER, &r) != HS_OK) continue;
    hs_wal_read_record rec;
    bool got;
    while (hs_wal_reader_next(r, &rec, &got) == HS_OK && got && rec.lsn < later[i] + segment_bytes)
      count++;
    hs_wal_reader_close(r);
  }
  free(later);
  return count;
}

static void look_at_log(const char *waldir, const hs_control *c, log_look *out) {
  memset(out, 0, sizeof *out);
  DIR *d = opendir(waldir);
  if (!d) {
    snprintf(out->why, sizeof out->why, "no log directory (%s)", strerror(errno));
    return;
  }
  for (struct dirent *e; (e = readdir(d)) != NULL;)
    if (strlen(e->d_name) == 16 && strspn(e->d_name, "0123456789ABCDEF") == 16) out->segments++;
  closedir(d);
  hs_lsn from = c->has_checkpoint ? c->redo : 0;
  hs_wal_reader *r;
  if (hs_wal_reader_open(waldir, c->segment_bytes, from, &r) != HS_OK) {
    snprintf(out->why, sizeof out->why, "unreadable: %s", hs_last_error());
    return;
  }
  out->readable = true;
  out->foreign_rmgr = -1;
  hs_wal_read_record rec;
  bool got;
  hs_status st;
  while ((st = hs_wal_reader_next(r, &rec, &got)) == HS_OK && got) {
    /* What this tool can replay over the pages: the log's own records and
     * hotset's (generic page changes, the heap's). An engine's records
     * mean only what its redo function makes of them. */
    if (out->foreign_rmgr < 0 && rec.npages && rec.rmgr != HS_WAL_RMGR_LOG &&
        rec.rmgr != HS_WAL_RMGR_GENERIC && rec.rmgr != HS_WAL_RMGR_HEAP)
      out->foreign_rmgr = rec.rmgr;
    out->kept_records++;
    out->kept_bytes += rec.end - rec.lsn;
    if (c->has_checkpoint && rec.lsn == c->checkpoint && wal_record_is_checkpoint(&rec, NULL))
      out->checkpoint_read = true;
  }
  if (st != HS_OK) {
    out->readable = false;
    snprintf(out->why, sizeof out->why, "unreadable: %s", hs_last_error());
    hs_wal_reader_close(r);
    return;
  }
  out->end = hs_wal_reader_end(r);
  out->kind = hs_wal_reader_end_kind(r);
  snprintf(out->why, sizeof out->why, "%s", hs_wal_reader_why_end(r));
  hs_lsn valid_after = wal_reader_valid_after(r);
  hs_wal_reader_close(r);
  out->lost_records = records_past(waldir, c->segment_bytes, out->end, valid_after);
}

/* ---- changing things ----------------------------------------------------- */

/* Moves every entry of `waldir` but `keep`, the lock file and earlier
 * evidence into `waldir/keep`. */
static hs_status move_log_aside(const char *waldir, const char *keep, size_t *moved) {
  *moved = 0;
  char aside[4400];
  snprintf(aside, sizeof aside, "%s/%s", waldir, keep);
  if (sys_mkdir(aside, 0700) != 0)
    return hs_fail(HS_ERR_IO, errno, "cannot create %s to keep the old log in: %s", aside,
                   strerror(errno));
  DIR *d = opendir(waldir);
  if (!d) return hs_fail(HS_ERR_IO, errno, "cannot list %s: %s", waldir, strerror(errno));
  hs_status st = HS_OK;
  for (struct dirent *e; st == HS_OK && (e = readdir(d)) != NULL;) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || !strcmp(e->d_name, keep) ||
        !strcmp(e->d_name, "wal.lock") || evidence_name(e->d_name))
      continue;
    char from[4700], to[5000];
    snprintf(from, sizeof from, "%s/%s", waldir, e->d_name);
    snprintf(to, sizeof to, "%s/%s", aside, e->d_name);
    if (sys_rename(from, to) != 0)
      st = hs_fail(HS_ERR_IO, errno, "cannot move %s to %s: %s", from, to, strerror(errno));
    else
      (*moved)++;
  }
  closedir(d);
  for (int i = 0; st == HS_OK && i < 2; i++) {
    int fd = open(i ? aside : waldir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 || sys_fsync(fd) != 0)
      st = hs_fail(HS_ERR_IO, errno, "fsync of %s failed: %s", i ? aside : waldir, strerror(errno));
    if (fd >= 0) close(fd);
  }
  return st;
}

static int fail(const char *what) {
  fprintf(stderr, PROG ": %s: %s\n", what, hs_last_error());
  return 1;
}

/* Opens the log in `waldir` for this tool: no writer thread. */
static hs_status open_log(const char *waldir, uint64_t segment_bytes, hs_wal **wal) {
  hs_wal_options wo;
  hs_wal_options_init(&wo);
  wo.dir = waldir;
  wo.segment_bytes = segment_bytes;
  wo.writer_delay_ms = 0;
  return hs_wal_open(&wo, wal);
}

/* The log ends at E and is kept to it: E's tail and the later segments of
 * this log go to kept-*, a checkpoint record with the old redo point is
 * logged at E, and the control file names it. */
static hs_status keep_to_end(const char *dir, const char *waldir, hs_control *c, hs_lsn *ckpt,
                             char *kept, size_t kept_len) {
  kept[0] = 0;
  hs_wal *wal;
  hs_status st = open_log(waldir, c->segment_bytes, &wal);
  if (st != HS_OK) return st;
  hs_lsn redo = c->has_checkpoint ? c->redo : 0;
  bool settled;
  st = wal_set_end_from(wal, redo, &settled);
  if (st == HS_OK) {
    if (wal_end_damaged(wal, NULL)) wal_accept_damage(wal);
    snprintf(kept, kept_len, "%s", wal->kept_dir);
    st = wal_checkpoint_log(wal, redo, ckpt);
  }
  hs_status closed = hs_wal_close(wal);
  if (st == HS_OK) st = closed;
  if (st != HS_OK) return st;
  c->has_checkpoint = true;
  c->checkpoint = *ckpt;
  c->redo = redo;
  c->state = HS_DB_IN_PRODUCTION; /* the next open replays from the redo point */
  return control_write(dir, c);
}

/* Replays the log, ended at its last readable record (keep_to_end), over
 * the data pages as they are — pages past that end accepted — so that
 * what it proves is on disk before a new log starts past those pages. The
 * heap's records are replayed; an engine's own resource manager is not
 * known here, and its records stop the replay (HS_ERR_INVALID naming it). */
static hs_status replay_over_pages(const char *dir, const char *waldir, const hs_control *c) {
  hs_wal *wal;
  hs_status st = open_log(waldir, c->segment_bytes, &wal);
  if (st != HS_OK) return st;
  st = hs_heap_register_redo(wal);
  hs_pool *pool = NULL;
  if (st == HS_OK) {
    hs_pool_options po;
    hs_pool_options_init(&po);
    po.dir = dir;
    po.page_size = c->page_size;
    po.checksums = c->checksums;
    po.pool_pages = 1024;
    po.wal = wal;
    po.accept_pages_past_log = true;
    st = hs_pool_open(&po, &pool);
  }
  if (st == HS_OK) st = hs_pool_close(pool);
  char why[2048];
  snprintf(why, sizeof why, "%s", hs_last_error());
  hs_status closed = hs_wal_close(wal);
  if (st != HS_OK) return hs_fail(st, 0, "%s", why);
  return closed;
}

/* Every listed file's mark (and stale flag) cleared in DIR/hotset.relations,
 * if there is one. */
static hs_status forget_marks(const char *dir) {
  catalog list;
  hs_status st = catalog_read(dir, &list);
  bool any = false;
  for (uint32_t i = 0; st == HS_OK && i < list.n; i++) {
    catalog_entry *e = &list.entries[i];
    any |= e->mark_lsn != 0 || e->stale;
    e->mark_block = 0;
    e->mark_lsn = 0;
    e->stale = false;
  }
  if (st == HS_OK && any) st = catalog_write(dir, &list);
  catalog_free(&list);
  return st == HS_ERR_NOENT ? HS_OK : st;
}

/* A new log past every LSN seen: the old one kept in reset-<start>. */
static hs_status restart_log(const char *dir, const char *waldir, hs_control *c, hs_lsn start,
                             hs_lsn *ckpt, size_t *moved, char *keep, size_t keep_len) {
  /* A name of its own: an earlier reset that stopped half-way (or the
   * same start reached again) keeps its directory as it is. */
  snprintf(keep, keep_len, "reset-%016" PRIX64, start);
  struct stat sb;
  char probe[4600];
  snprintf(probe, sizeof probe, "%s/%s", waldir, keep);
  for (unsigned k = 2; stat(probe, &sb) == 0; k++) {
    snprintf(keep, keep_len, "reset-%016" PRIX64 ".%u", start, k);
    snprintf(probe, sizeof probe, "%s/%s", waldir, keep);
  }
  *moved = 0;
  hs_status st = HS_OK;
  if (stat(waldir, &sb) == 0)
    st = move_log_aside(waldir, keep, moved);
  else if (sys_mkdir(waldir, 0700) != 0)
    st = hs_fail(HS_ERR_IO, errno, "cannot create %s: %s", waldir, strerror(errno));
  if (st != HS_OK) return st;
  hs_wal *wal;
  st = open_log(waldir, c->segment_bytes, &wal);
  if (st != HS_OK) return st;
  st = wal_adopt_identity(wal, c->system_id, start);
  if (st == HS_OK) st = wal_checkpoint_log(wal, start, ckpt);
  hs_status closed = hs_wal_close(wal);
  if (st == HS_OK) st = closed;
  if (st != HS_OK) return st;
  c->has_checkpoint = true;
  c->checkpoint = *ckpt;
  c->redo = start;
  c->state = HS_DB_SHUT_DOWN;
  return control_write(dir, c);
}

/* ---- --remove-kept ----------------------------------------------------- */

static int remove_entry(const char *path, const struct stat *sb, int type, struct FTW *ftw) {
  (void)sb;
  (void)type;
  (void)ftw;
  return remove(path);
}

/* Removes the evidence directories of `waldir`, printing each. */
static int remove_kept(const char *waldir) {
  DIR *d = opendir(waldir);
  if (!d) {
    fprintf(stderr, PROG ": cannot list %s: %s\n", waldir, strerror(errno));
    return 1;
  }
  int rc = 0;
  size_t removed = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    if (!evidence_name(e->d_name)) continue;
    char path[4500];
    snprintf(path, sizeof path, "%s/%s", waldir, e->d_name);
    uint64_t tree_bytes = evidence_bytes(path);
    if (nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0) {
      fprintf(stderr, PROG ": cannot remove %s: %s\n", path, strerror(errno));
      rc = 1;
      break;
    }
    printf("removed %s (%" PRIu64 " bytes of evidence)\n", path, tree_bytes);
    removed++;
  }
  closedir(d);
  if (rc == 0) printf("%zu evidence directories removed from %s\n", removed, waldir);
  return rc;
}

int reset_log_main(int argc, char **argv) {
  const char *dir = NULL, *waldir_flag = NULL, *checksums_flag = NULL;
  uint64_t page_size = 0, segment_bytes = 0;
  bool force = false, drop_kept = false;
  const args_opt opts[] = {
      BENCH_OPT_DATA_DIR(&dir),
      BENCH_OPT_WAL_DIR(&waldir_flag),
      {.name = "force",
       .kind = ARGS_FLAG,
       .dest = &force,
       .help = "do it (without: print what would be given up, change nothing)"},
      {.name = "remove-kept",
       .kind = ARGS_FLAG,
       .dest = &drop_kept,
       .help = "remove the log directory's evidence (kept-*, reset-*), nothing else"},
      {.name = "page-size",
       .kind = ARGS_SIZE,
       .dest = &page_size,
       .power_of_two = true,
       .min = HS_PAGE_SIZE_MIN,
       .max = HS_PAGE_SIZE_MAX,
       .help = "the pages' size, when the control file is unreadable and no page proves it"},
      {.name = "checksums",
       .kind = ARGS_STRING,
       .dest = &checksums_flag,
       .arg = "on|off",
       .help = "whether pages carry checksums, when the control file is unreadable and no "
               "page proves it"},
      {.name = "segment-size",
       .kind = ARGS_SIZE,
       .dest = &segment_bytes,
       .power_of_two = true,
       .min = HS_WAL_MIN_SEGMENT,
       .max = HS_WAL_MAX_SEGMENT,
       .help = "the log's segment size, when no segment header says it"},
  };
  args_parse(cmd, opts, sizeof opts / sizeof opts[0], argc, argv, 0);
  if (!dir) args_usage_error(cmd, "--dir is required");
  if (checksums_flag && strcmp(checksums_flag, "on") && strcmp(checksums_flag, "off"))
    args_usage_error(cmd, "--checksums: \"%s\" is not on or off", checksums_flag);
  char waldir[4200];
  snprintf(waldir, sizeof waldir, "%s", waldir_flag ? waldir_flag : "");
  if (!waldir_flag) snprintf(waldir, sizeof waldir, "%s/wal", dir);

  /* The locks first: a directory in use is refused before anything is read
   * or moved (the process holding it writes on). Held to the end. */
  hs_smgr *smgr = NULL;
  hs_status st = hs_smgr_open(dir, &(hs_smgr_options){.page_size = HS_PAGE_SIZE_DEFAULT}, &smgr);
  if (st == HS_OK) st = hs_smgr_lock_dir(smgr);
  if (st != HS_OK) {
    hs_smgr_close(smgr);
    return fail("taking the data directory's lock");
  }
  int wal_lock = -1;
  char lock_path[4400];
  snprintf(lock_path, sizeof lock_path, "%s/wal.lock", waldir);
  struct stat sb;
  if (stat(waldir, &sb) == 0 &&
      dir_lock_take("log directory", waldir, lock_path, &wal_lock) != HS_OK) {
    hs_smgr_close(smgr);
    return fail("taking the log directory's lock");
  }
  int rc = 0;
  if (drop_kept) {
    rc = remove_kept(waldir);
    dir_lock_release(wal_lock);
    hs_smgr_close(smgr);
    return rc;
  }

  hs_control c;
  st = hs_control_read(dir, &c);
  bool rebuilt = false;
  if (st != HS_OK) {
    char why[2048];
    snprintf(why, sizeof why, "%s", hs_last_error());
    if (st != HS_ERR_NOENT && st != HS_ERR_CORRUPT) {
      rc = fail("reading the control file");
      goto out;
    }
    rebuild_hints hints = {.page_size = (uint32_t)page_size,
                           .checksums = checksums_flag ? !strcmp(checksums_flag, "on") : -1,
                           .segment_bytes = segment_bytes};
    char how[1024];
    if (control_rebuild(dir, waldir, &hints, &c, how, sizeof how) != HS_OK) {
      fprintf(stderr, PROG ": the control file is unreadable (%s), and rebuilding it failed: %s\n",
              why, hs_last_error());
      rc = 1;
      goto out;
    }
    rebuilt = true;
    printf("control file: unreadable (%s); %s\n", why, how);
  } else {
    if (!c.segment_bytes) c.segment_bytes = segment_bytes ? segment_bytes : 16ull << 20;
    printf("control file: %s/%s: %u-byte pages, checksums %s, %" PRIu64
           "-byte log segments, system %016" PRIX64 ", state %s, ",
           dir, HS_CONTROL_FILE, c.page_size, c.checksums ? "on" : "off", c.segment_bytes,
           c.system_id, hs_control_state_name(c.state));
    if (c.has_checkpoint)
      printf("last checkpoint at %" PRIX64 " (redo %" PRIX64 ")\n", c.checkpoint, c.redo);
    else
      printf("no checkpoint yet\n");
  }

  log_look log;
  look_at_log(waldir, &c, &log);
  hs_lsn from = c.has_checkpoint ? c.redo : 0;
  if (log.readable)
    printf("log: %s: %zu segment%s; read from %" PRIX64 ": %" PRIu64 " records (%" PRIu64
           " bytes) to %" PRIX64 " (%s: %s)\n",
           waldir, log.segments, log.segments == 1 ? "" : "s", from, log.kept_records,
           log.kept_bytes, log.end, hs_wal_end_kind_name(log.kind), log.why);
  else
    printf("log: %s: %zu segment%s, %s\n", waldir, log.segments, log.segments == 1 ? "" : "s",
           log.why);

  hs_lsn max_page = 0;
  uint64_t pages = 0, bad = 0;
  if (c.checksums) {
    if (scan_pages(dir, c.page_size, &max_page, &pages, &bad) != HS_OK) {
      rc = fail("reading the data pages");
      goto out;
    }
    printf("data pages: %" PRIu64 ", the highest LSN among those passing their checksum %" PRIX64
           ", %" PRIu64 " failing it\n",
           pages, max_page, bad);
  } else {
    printf("data pages: no checksums, so no LSNs to read\n");
  }

  bool healthy = log.readable && log.kind != HS_WAL_END_CORRUPT &&
                 (!c.has_checkpoint || log.checkpoint_read) && max_page <= log.end &&
                 log.lost_records == 0;
  /* The log proves what it reads from the redo point to its end: kept in
   * place when no page is past that end; else replayed over the pages
   * first, and a new log started past them. */
  /* With no record readable from the redo point (its segment missing or
   * damaged) there is nothing to keep, and no segment header to go on
   * under: a new log. */
  bool provable = log.readable && log.end >= from && log.kept_records > 0;
  bool can_keep = provable && max_page <= log.end;
  bool replay_first = provable && max_page > log.end && log.foreign_rmgr < 0;
  /* Closed cleanly, with no log at all (run with a stand-in for one, as
   * workload and bench scan do by default): every page is on disk and
   * nothing waits to be replayed, so there is nothing to reset. --force
   * still starts a log, for who wants to open it with one. */
  bool clean_without_log = !rebuilt && c.state == HS_DB_SHUT_DOWN && log.segments == 0 &&
                           stat(waldir, &sb) != 0 && errno == ENOENT && bad == 0 &&
                           (!c.has_checkpoint || max_page <= c.checkpoint);
  if (clean_without_log && !force) {
    printf("nothing to reset: %s is healthy (clean shutdown, and no log: it was run without "
           "one); --force would start a log for it\n",
           dir);
    goto out;
  }
  if (healthy) {
    if (!rebuilt && c.state == HS_DB_SHUT_DOWN) {
      printf("nothing to reset: %s is healthy (clean shutdown, log intact)\n", dir);
      goto out;
    }
    if (!rebuilt) {
      printf("nothing to reset: the log reads from the redo point to its end and proves "
             "everything the data pages carry; %s opens as it is\n",
             dir);
      goto out;
    }
    printf("given up: nothing (the log reads from the rebuilt checkpoint's redo point to its "
           "end)\n");
    if (!force) {
      printf("nothing changed: run again with --force to write the rebuilt control file\n");
      rc = 1;
      goto out;
    }
    if (control_write(dir, &c) != HS_OK) {
      rc = fail("writing the control file");
      goto out;
    }
    printf("done: control file rebuilt; %s opens with its log now\n", dir);
    goto out;
  }

  hs_lsn past = log.end;
  if (max_page > past) past = max_page;
  if (c.has_checkpoint && c.checkpoint >= past) past = c.checkpoint + 1;
  hs_lsn start = (past / c.segment_bytes + 1) * c.segment_bytes;
  if (can_keep) {
    printf("given up: %" PRIu64 " valid records of the log past %" PRIX64
           " (its bytes from there on are kept, not deleted); kept: the %" PRIu64
           " records from the redo point %" PRIX64 " to %" PRIX64 ", replayed at the next open\n",
           log.lost_records, log.end, log.kept_records, from, log.end);
  } else if (replay_first) {
    printf("given up: %" PRIu64 " valid records of the log past %" PRIX64
           ", and what pages carry past it (up to LSN %" PRIX64 "); kept: the %" PRIu64
           " records from the redo point %" PRIX64 " to %" PRIX64 ", replayed over the pages "
           "before a new log starts at %" PRIX64 "\n",
           log.lost_records, log.end, max_page, log.kept_records, from, log.end, start);
  } else {
    char why[160];
    if (provable)
      snprintf(why, sizeof why,
               "data pages carry LSNs past where the log can be read, and its records of "
               "resource manager %d (an engine's own) can be replayed only by that engine",
               log.foreign_rmgr);
    else
      snprintf(why, sizeof why, "no record can be read from the redo point");
    printf("given up: every record from the redo point %" PRIX64 " on (%" PRIu64
           " readable, %" PRIu64 " more past the damage): %s; the data files stay as they are, "
           "torn or half-written pages included\n",
           from, log.kept_records, log.lost_records, why);
  }
  if (!force) {
    if (can_keep)
      printf("nothing changed: run again with --force to end the log at %" PRIX64
             " (the bytes past it moved into %s/kept-%016" PRIX64 ") and log a new checkpoint "
             "there\n",
             log.end, waldir, log.end);
    else
      printf("nothing changed: run again with --force to %smove the log into %s/reset-%016" PRIX64
             " and start a new one at %" PRIX64 "\n",
             replay_first ? "replay it to its last readable record, then " : "", waldir, start,
             start);
    rc = 1;
    goto out;
  }
  /* hs_wal_open takes the log's lock itself. */
  dir_lock_release(wal_lock);
  wal_lock = -1;
  hs_lsn checkpoint = 0;
  if (can_keep) {
    char kept[4400];
    if (keep_to_end(dir, waldir, &c, &checkpoint, kept, sizeof kept) != HS_OK) {
      rc = fail("ending the log at its last readable record");
      goto out;
    }
    printf("done: the log ends at %" PRIX64 "%s%s; a checkpoint at %" PRIX64 " (redo %" PRIX64
           "); %" PRIu64 " records given up; %s opens with it now, replaying %" PRIu64 " records\n",
           log.end, kept[0] ? ", the bytes past it kept in " : "", kept, checkpoint, c.redo,
           log.lost_records, dir, log.kept_records);
  } else {
    uint64_t given_up = log.kept_records + log.lost_records;
    if (replay_first) {
      char kept[4400];
      if (keep_to_end(dir, waldir, &c, &checkpoint, kept, sizeof kept) != HS_OK) {
        rc = fail("ending the log at its last readable record");
        goto out;
      }
      /* The pool takes the data directory's lock itself: handed over for
       * the replay, taken back at once after it. */
      hs_smgr_close(smgr);
      smgr = NULL;
      if (replay_over_pages(dir, waldir, &c) != HS_OK) {
        rc = fail("replaying the log to its last readable record");
        goto out;
      }
      if (hs_smgr_open(dir, &(hs_smgr_options){.page_size = HS_PAGE_SIZE_DEFAULT}, &smgr) !=
              HS_OK ||
          hs_smgr_lock_dir(smgr) != HS_OK) {
        rc = fail("taking the data directory's lock again");
        goto out;
      }
      given_up = log.lost_records;
      printf("replayed: the %" PRIu64 " records from %" PRIX64 " to %" PRIX64
             " are on the data pages%s%s\n",
             log.kept_records, from, log.end, kept[0] ? "; the bytes past them kept in " : "",
             kept);
    }
    char keep[64];
    size_t moved;
    /* The pages as they are now are the directory's truth: the marks the
     * old log's checkpoints left (pages as new as the log reached, which a
     * replay to an earlier end may leave older) would take healthy files
     * for older copies of themselves. */
    if (forget_marks(dir) != HS_OK) {
      rc = fail("clearing the relation files' marks");
      goto out;
    }
    if (restart_log(dir, waldir, &c, start, &checkpoint, &moved, keep, sizeof keep) != HS_OK) {
      rc = fail("starting the new log");
      goto out;
    }
    printf("done: %zu files of the old log kept in %s/%s; a new log begins at %" PRIX64
           ", checkpoint at %" PRIX64 "; %" PRIu64 " records given up; %s opens with it now\n",
           moved, waldir, keep, start, checkpoint, given_up, dir);
  }
out:
  dir_lock_release(wal_lock);
  hs_smgr_close(smgr);
  return rc;
}
