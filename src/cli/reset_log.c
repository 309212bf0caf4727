/*
 * cli/reset_log.c — `hotset reset-log --dir D --force`: the explicit way
 * out for an operator whose data directory refuses to open because its log
 * cannot prove where recovery must start (PostgreSQL's pg_resetwal).
 *
 * hs_pool_open refuses a directory whose control file names a checkpoint
 * the log does not hold, a log of another system, or pages past the end of
 * the log: opening anyway would lose acknowledged commits without a word.
 * An operator who accepts that loss runs this, offline. It
 *
 *  1. reads what there is: the control file (or, when it is unreadable,
 *     the page size, checksums and segment size given on the command
 *     line), the log's segments and where they end, and — with checksums
 *     on — the highest LSN any data page carries;
 *  2. prints what is given up: the log's records after the checkpoint's
 *     redo point, which will never be replayed, and the state the data
 *     files are left in (whatever a crash left there, torn pages included);
 *  3. only with --force: moves every file of the log directory into a
 *     subdirectory reset-<LSN> (kept, never deleted), starts a new log
 *     with the directory's system identifier one segment past everything
 *     seen (so no data page's LSN is in the new log's future), logs a
 *     checkpoint at its start and writes a control file naming it, state
 *     "shut down".
 *
 * Without --force it changes nothing and exits 1.
 */
#include "cli/reset_log.h"

#include "bench/bench_util.h"
#include "cli/args.h"
#include "core/error.h"
#include "core/sysio.h"
#include "hotset/control.h"
#include "hotset/page.h"
#include "hotset/storage.h"
#include "hotset/wal.h"
#include "storage/control_file.h"
#include "wal/wal_durable.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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
                "       [--page-size SIZE --checksums on|off --segment-size SIZE]",
    .about = "Starts a new write-ahead log for the data directory DIR, giving up whatever the\n"
             "old log held past its last checkpoint: the way out when opening DIR is refused\n"
             "because its log cannot prove where recovery must start (a damaged checkpoint\n"
             "record, a stale control file, a lost log). Prints what is given up; changes\n"
             "nothing without --force. With it, every file of the log directory is moved\n"
             "into WALDIR/reset-<LSN> (kept, not deleted), a new log begins one segment past\n"
             "every LSN the log and the data pages have seen, and DIR's control file is\n"
             "rewritten to name its first checkpoint.\n",
    .notes = "--page-size, --checksums and --segment-size are used only when DIR's control file\n"
             "is missing or damaged. Exit status 1 without --force, or on an error.\n",
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

/* The log in `waldir`: where it ends and why, and the records and bytes
 * from `from` to the end (what a reset gives up). */
typedef struct log_look {
  bool readable;
  hs_lsn end;
  char why[256];
  uint64_t records_after, bytes_after;
  size_t segments;
} log_look;

static void look_at_log(const char *waldir, uint64_t segment_bytes, hs_lsn from, log_look *out) {
  memset(out, 0, sizeof *out);
  DIR *d = opendir(waldir);
  if (!d) {
    snprintf(out->why, sizeof out->why, "no log directory (%s)", strerror(errno));
    return;
  }
  for (struct dirent *e; (e = readdir(d)) != NULL;)
    if (strlen(e->d_name) == 16 && strspn(e->d_name, "0123456789ABCDEF") == 16) out->segments++;
  closedir(d);
  if (hs_wal_find_end(waldir, segment_bytes, &out->end) != HS_OK) {
    snprintf(out->why, sizeof out->why, "unreadable: %s", hs_last_error());
    return;
  }
  out->readable = true;
  hs_wal_reader *r;
  if (hs_wal_reader_open(waldir, segment_bytes, from, &r) != HS_OK) return;
  hs_wal_read_record rec;
  bool got;
  while (hs_wal_reader_next(r, &rec, &got) == HS_OK && got) {
    out->records_after++;
    out->bytes_after += rec.end - rec.lsn;
  }
  snprintf(out->why, sizeof out->why, "%s", hs_wal_reader_why_end(r));
  hs_wal_reader_close(r);
}

/* Moves every entry of `waldir` but `keep` into `waldir/keep`. */
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
        !strcmp(e->d_name, "wal.lock"))
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

int reset_log_main(int argc, char **argv) {
  const char *dir = NULL, *waldir_flag = NULL, *checksums_flag = NULL;
  uint64_t page_size = 0, segment_bytes = 0;
  bool force = false;
  const args_opt opts[] = {
      {.name = "dir",
       .kind = ARGS_PATH,
       .dest = &dir,
       .max = BENCH_DIR_MAX,
       .arg = "DIR",
       .help = "the data directory"},
      {.name = "wal",
       .kind = ARGS_PATH,
       .dest = &waldir_flag,
       .max = BENCH_DIR_MAX,
       .arg = "DIR",
       .help = "its log's directory (default DIR/wal)"},
      {.name = "force",
       .kind = ARGS_FLAG,
       .dest = &force,
       .help = "do it (without: print what would be given up, change nothing)"},
      {.name = "page-size",
       .kind = ARGS_SIZE,
       .dest = &page_size,
       .power_of_two = true,
       .min = HS_PAGE_SIZE_MIN,
       .max = HS_PAGE_SIZE_MAX,
       .help = "the pages' size, when the control file is unreadable"},
      {.name = "checksums",
       .kind = ARGS_STRING,
       .dest = &checksums_flag,
       .arg = "on|off",
       .help = "whether pages carry checksums, when the control file is unreadable"},
      {.name = "segment-size",
       .kind = ARGS_SIZE,
       .dest = &segment_bytes,
       .power_of_two = true,
       .min = HS_WAL_MIN_SEGMENT,
       .max = HS_WAL_MAX_SEGMENT,
       .help = "the log's segment size, when the control file is unreadable"},
  };
  args_parse(cmd, opts, sizeof opts / sizeof opts[0], argc, argv, 0);
  if (!dir) args_usage_error(cmd, "--dir is required");
  if (checksums_flag && strcmp(checksums_flag, "on") && strcmp(checksums_flag, "off"))
    args_usage_error(cmd, "--checksums: \"%s\" is not on or off", checksums_flag);
  char waldir[4200];
  snprintf(waldir, sizeof waldir, "%s", waldir_flag ? waldir_flag : "");
  if (!waldir_flag) snprintf(waldir, sizeof waldir, "%s/wal", dir);

  hs_control c;
  hs_status st = hs_control_read(dir, &c);
  bool had_control = st == HS_OK;
  if (!had_control) {
    char why[512];
    snprintf(why, sizeof why, "%s", hs_last_error());
    if (st != HS_ERR_NOENT && st != HS_ERR_CORRUPT) return fail("reading the control file");
    if (!page_size || !checksums_flag || !segment_bytes) {
      fprintf(stderr,
              PROG ": %s; without it, give --page-size, --checksums on|off and --segment-size "
                   "(what the directory was created with)\n",
              why);
      return 1;
    }
    memset(&c, 0, sizeof c);
    c.format = HS_CONTROL_FORMAT;
    c.page_size = (uint32_t)page_size;
    c.checksums = !strcmp(checksums_flag, "on");
    c.segment_bytes = segment_bytes;
    c.system_id = control_new_system_id();
    printf("control file: unreadable (%s); a new one: %u-byte pages, checksums %s, %" PRIu64
           "-byte log segments, system %016" PRIX64 "\n",
           why, c.page_size, c.checksums ? "on" : "off", c.segment_bytes, c.system_id);
  } else {
    if (!c.segment_bytes) c.segment_bytes = segment_bytes ? segment_bytes : 16ull << 20;
    printf("control file: %s/%s: %u-byte pages, checksums %s, %" PRIu64
           "-byte log segments, system %016" PRIX64 ", state %s, ",
           dir, HS_CONTROL_FILE, c.page_size, c.checksums ? "on" : "off", c.segment_bytes,
           c.system_id, hs_db_state_name(c.state));
    if (c.has_checkpoint)
      printf("last checkpoint at %" PRIX64 " (redo %" PRIX64 ")\n", c.checkpoint, c.redo);
    else
      printf("no checkpoint yet\n");
  }

  log_look log;
  look_at_log(waldir, c.segment_bytes, c.has_checkpoint ? c.redo : 0, &log);
  if (log.readable)
    printf("log: %s: %zu segments, ends at %" PRIX64 "; %" PRIu64 " records (%" PRIu64
           " bytes) from the redo point on, read to: %s\n",
           waldir, log.segments, log.end, log.records_after, log.bytes_after, log.why);
  else
    printf("log: %s: %zu segments, %s\n", waldir, log.segments, log.why);

  hs_lsn max_page = 0;
  uint64_t pages = 0, bad = 0;
  if (c.checksums) {
    if (scan_pages(dir, c.page_size, &max_page, &pages, &bad) != HS_OK)
      return fail("reading the data pages");
    printf("data pages: %" PRIu64 ", the highest LSN among those passing their checksum %" PRIX64
           ", %" PRIu64 " failing it\n",
           pages, max_page, bad);
  } else {
    printf("data pages: no checksums, so no LSNs to read\n");
  }

  hs_lsn past = log.end;
  if (max_page > past) past = max_page;
  if (c.has_checkpoint && c.checkpoint >= past) past = c.checkpoint + 1;
  hs_lsn start = (past / c.segment_bytes + 1) * c.segment_bytes;
  printf("given up: every change the log holds that is not on the data pages (up to %" PRIu64
         " records past the redo point); the data files stay as they are, torn or half-written "
         "pages included, and no transaction's outcome is checked\n",
         log.records_after);
  if (!force) {
    printf("nothing changed: run again with --force to move the log into %s/reset-%016" PRIX64
           " and start a new one at %" PRIX64 "\n",
           waldir, start, start);
    return 1;
  }

  char keep[64];
  snprintf(keep, sizeof keep, "reset-%016" PRIX64, start);
  size_t moved = 0;
  struct stat sb;
  if (stat(waldir, &sb) == 0) {
    if (move_log_aside(waldir, keep, &moved) != HS_OK) return fail("moving the old log aside");
  } else if (sys_mkdir(waldir, 0700) != 0) {
    hs_fail(HS_ERR_IO, errno, "cannot create %s: %s", waldir, strerror(errno));
    return fail("creating the log directory");
  }
  hs_wal_options wo;
  hs_wal_options_init(&wo);
  wo.dir = waldir;
  wo.segment_bytes = c.segment_bytes;
  wo.writer_delay_ms = 0;
  hs_wal *wal;
  if (hs_wal_open(&wo, &wal) != HS_OK) return fail("opening the new log");
  hs_lsn checkpoint = 0;
  st = wal_adopt_identity(wal, c.system_id, start);
  if (st == HS_OK) st = wal_checkpoint_log(wal, start, &checkpoint);
  hs_status closed = hs_wal_close(wal);
  if (st == HS_OK) st = closed;
  if (st != HS_OK) return fail("starting the new log");
  c.has_checkpoint = true;
  c.checkpoint = checkpoint;
  c.redo = start;
  c.state = HS_DB_SHUT_DOWN;
  if (control_write(dir, &c) != HS_OK) return fail("writing the control file");
  printf("done: %zu files of the old log kept in %s/%s; a new log begins at %" PRIX64
         ", checkpoint at %" PRIX64 "; %s opens with it now\n",
         moved, waldir, keep, start, checkpoint, dir);
  return 0;
}
