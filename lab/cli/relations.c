/*
 * cli/relations.c — `hotset relations --dir D`: the list of the relation
 * files a data directory must hold (HS_SMGR_RELATIONS_FILE), shown against
 * what is on disk, and the explicit ways out when opening refuses a listed
 * file that is missing or cut short, or a list that is lost:
 *
 *   --forget NAME   takes one file off the list: the operator accepts that
 *                   what it held is gone (a file still there is taken as it
 *                   is, and listed again, with its size then, when the
 *                   directory next opens);
 *   --rebuild       writes a new list of the main and init forks present
 *                   now, each with no size required yet (the next
 *                   checkpoint records their sizes): a file already lost
 *                   goes unnoticed.
 *
 * Either changes nothing without --force (it prints what it would do and
 * exits 1), and takes the directory's lock first, so it refuses while a
 * pool has the directory open.
 */
#include "cli/relations.h"

#include "common/args.h"
#include "common/flags.h"
#include "common/json.h"
#include "common/resources.h"
#include "core/error.h"
#include "hotset/control.h"
#include "hotset/page.h"
#include "hotset/storage.h"
#include "storage/catalog.h"
#include "wal/wal_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PROG "hotset relations"

static const args_command command = {
    .cmd = {.prog = PROG},
    .synopsis = "--dir DIR [--json] [--forget NAME | --rebuild | --replace-damaged NAME] [--force]",
    .about = "Shows the list of the relation files the data directory DIR must hold "
             "(DIR/" HS_SMGR_RELATIONS_FILE "),\n"
             "each with the blocks it had at the last checkpoint, against what is on disk.\n"
             "Opening DIR refuses a listed file that is missing or shorter; --forget and\n"
             "--rebuild are the ways out for an operator who accepts the loss. A page that\n"
             "fails its checksum is refused when read; --replace-damaged is that way out.\n",
    .notes =
        "--forget, --rebuild and --replace-damaged change nothing without --force, and refuse\n"
        "while a pool has DIR open. Exit status 1 if a listed file is missing or short, the\n"
        "list is damaged or missing where the control file says there is one, a page was\n"
        "damaged and --force not given, or on an error.\n",
};
static const args_cmd *const cmd = &command.cmd;

static int fail(const char *what) {
  fprintf(stderr, PROG ": %s: %s\n", what, hs_last_error());
  return 1;
}

/* The page size to count blocks in: the control file's, else the list's,
 * else the default. */
static uint32_t dir_page_size(const hs_control *control, bool have_control, const catalog *list,
                              bool have_list) {
  if (have_control) return control->page_size;
  if (have_list) return list->page_size;
  return HS_PAGE_SIZE_DEFAULT;
}

typedef struct show_ctx {
  const char *dir;
  const catalog *list;
  bool json;
  uint32_t next; /* the next entry to print as fine */
} show_ctx;

static void show_one(show_ctx *s, const catalog_entry *e, const char *state, uint64_t blocks,
                     bool present) {
  char name[32];
  hs_smgr_fork_filename(e->rel, e->fork, name, sizeof name);
  if (s->json) {
    json_out j;
    json_begin(&j, stdout);
    json_str(&j, "file", name);
    json_u64(&j, "min_blocks", e->min_blocks);
    if (present) json_u64(&j, "blocks", blocks);
    json_str(&j, "state", state);
    json_end_line(&j);
    return;
  }
  if (present)
    printf("%s: at least %u blocks, %" PRIu64 " on disk: %s\n", name, e->min_blocks, blocks, state);
  else
    printf("%s: at least %u blocks, not on disk: %s\n", name, e->min_blocks, state);
}

static void show_fine_up_to(show_ctx *s, uint32_t upto) {
  for (; s->next < upto; s->next++) {
    const catalog_entry *e = &s->list->entries[s->next];
    char path[PATH_MAX + 64], name[32];
    hs_smgr_fork_filename(e->rel, e->fork, name, sizeof name);
    snprintf(path, sizeof path, "%s/%s", s->dir, name);
    struct stat sb;
    uint64_t blocks = stat(path, &sb) == 0 ? (uint64_t)sb.st_size / s->list->page_size : 0;
    show_one(s, e, "ok", blocks, true);
  }
}

static void show_problem(void *ctx, const catalog_problem *p) {
  show_ctx *s = ctx;
  uint32_t at = (uint32_t)(catalog_find(s->list, p->want.rel, p->want.fork) - s->list->entries);
  show_fine_up_to(s, at);
  show_one(s, &p->want, p->missing ? "MISSING" : "SHORT", p->blocks, !p->missing);
  s->next = at + 1;
}

/* Takes the directory's lock on a handle of its own (closed by the caller). */
static hs_status lock_dir(const char *dir, uint32_t page_size, hs_smgr **smgr) {
  hs_status st = hs_smgr_open(dir, &(hs_smgr_options){.page_size = page_size}, smgr);
  if (st == HS_OK) st = hs_smgr_lock_dir(*smgr);
  return st;
}

/* The main and init forks present in `dir`, none required yet. */
static hs_status list_present(const char *dir, catalog *out) {
  DIR *d = opendir(dir);
  if (!d) return hs_fail(HS_ERR_IO, errno, "cannot list %s: %s", dir, strerror(errno));
  hs_status st = HS_OK;
  for (struct dirent *e; st == HS_OK && (e = readdir(d)) != NULL;) {
    hs_relid rel;
    hs_fork fork;
    if (hs_smgr_parse_fork_filename(e->d_name, &rel, &fork) && catalog_fork_listed(fork))
      st = catalog_put(out, rel, fork, 0);
  }
  closedir(d);
  return st;
}

static int rebuild(const char *dir, uint32_t page_size, bool force) {
  catalog list;
  catalog_init(&list, page_size);
  if (list_present(dir, &list) != HS_OK) {
    catalog_free(&list);
    return fail("listing the relation files");
  }
  printf("a new list of the %u main and init relation files in %s, each required to exist (the "
         "next checkpoint records their sizes):",
         list.n, dir);
  for (uint32_t i = 0; i < list.n; i++) {
    char name[32];
    hs_smgr_fork_filename(list.entries[i].rel, list.entries[i].fork, name, sizeof name);
    printf(" %s", name);
  }
  printf("\n");
  int rc = 1;
  if (!force) {
    printf("nothing changed: run again with --force to write it\n");
  } else {
    hs_smgr *smgr = NULL;
    if (lock_dir(dir, page_size, &smgr) != HS_OK || catalog_write(dir, &list) != HS_OK) {
      rc = fail("writing the new list");
    } else {
      char path[PATH_MAX + 32];
      catalog_path(dir, path, sizeof path);
      printf("done: %s written\n", path);
      rc = 0;
    }
    hs_smgr_close(smgr);
  }
  catalog_free(&list);
  return rc;
}

static int forget(const char *dir, const catalog *seen, const char *name, bool force) {
  hs_relid rel;
  hs_fork fork;
  char path[PATH_MAX + 32];
  catalog_path(dir, path, sizeof path);
  if (!hs_smgr_parse_fork_filename(name, &rel, &fork) || !catalog_find(seen, rel, fork)) {
    fprintf(stderr, PROG ": %s is not on the list in %s (`" PROG " --dir DIR` shows it)\n", name,
            path);
    return 1;
  }
  printf("%s/%s comes off the list of files the directory must hold: whatever it held that is "
         "not on disk now is given up (a file still there is listed again, as it is, when the "
         "directory next opens)\n",
         dir, name);
  if (!force) {
    printf("nothing changed: run again with --force to do it\n");
    return 1;
  }
  /* Under the directory's lock, the list as it is now. */
  hs_smgr *smgr = NULL;
  catalog list;
  catalog_init(&list, seen->page_size);
  hs_status st = lock_dir(dir, seen->page_size, &smgr);
  if (st == HS_OK) {
    catalog_free(&list);
    st = catalog_read(dir, &list);
  }
  if (st == HS_OK) {
    catalog_remove(&list, rel, fork);
    st = catalog_write(dir, &list);
  }
  int rc = st == HS_OK ? 0 : fail("writing the list");
  if (st == HS_OK) printf("done: %s written\n", path);
  catalog_free(&list);
  hs_smgr_close(smgr);
  return rc;
}

/* The file NAME's pages that fail their checksums, each replaced by an
 * empty page (its header valid, the rest zeros), the damaged bytes kept in
 * DIR/damaged-pages/NAME.BLOCK. What such a page held is given up: the
 * heap's rows on it are gone (its index is rebuilt with `hotset reindex`,
 * which the next lookup prints), an index's entries come back with that
 * rebuild, a commit log page's statuses are gone for transactions that
 * ended before the last checkpoint (later ones are replayed). */
static hs_status save_damaged(const char *dir, const char *name, hs_blockno block, const void *page,
                              uint32_t page_size, char *saved, size_t len) {
  char keep[PATH_MAX + 64];
  snprintf(keep, sizeof keep, "%s/damaged-pages", dir);
  if (mkdir(keep, 0700) != 0 && errno != EEXIST)
    return hs_fail(HS_ERR_IO, errno, "cannot create %s: %s", keep, strerror(errno));
  snprintf(saved, len, "%s/%s.%u", keep, name, block);
  char probe[PATH_MAX + 200];
  snprintf(probe, sizeof probe, "%s", saved);
  struct stat sb;
  for (unsigned k = 2; stat(probe, &sb) == 0; k++) {
    int n = snprintf(probe, sizeof probe, "%s.%u", saved, k);
    if (n < 0 || (size_t)n >= sizeof probe) break; /* refused just below */
  }
  if (strlen(probe) >= len || strlen(probe) >= sizeof probe - 1)
    return hs_fail(HS_ERR_INVALID, 0, "%s: the path is too long", probe);
  memcpy(saved, probe, strlen(probe) + 1);
  int fd = open(saved, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  hs_status st = HS_OK;
  if (fd < 0 || pwrite(fd, page, page_size, 0) != (ssize_t)page_size || fsync(fd) != 0)
    st =
        hs_fail(HS_ERR_IO, errno, "cannot keep the damaged page in %s: %s", saved, strerror(errno));
  if (fd >= 0) close(fd);
  if (st == HS_OK) {
    int dfd = open(keep, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0 || fsync(dfd) != 0)
      st = hs_fail(HS_ERR_IO, errno, "fsync of %s failed: %s", keep, strerror(errno));
    if (dfd >= 0) close(dfd);
  }
  return st;
}

/* Whether some relation file of `dir` other than `skip` has a page that
 * carries `mark` (each read up to the first that does): pages of
 * another directory in one file are a stranger file only while the rest
 * of the directory carries the control file's mark — if nothing does, the
 * control file is the stranger (recreated, or another directory's). */
static bool others_carry_mark(const char *dir, const char *skip, uint32_t page_size,
                              uint16_t mark) {
  DIR *d = opendir(dir);
  unsigned char *page = malloc(page_size);
  bool found = false;
  for (struct dirent *e; d && page && !found && (e = readdir(d)) != NULL;) {
    if (!hs_smgr_parse_fork_filename(e->d_name, NULL, NULL) || !strcmp(e->d_name, skip)) continue;
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    for (hs_blockno b = 0; fd >= 0 && !found; b++) {
      if (pread(fd, page, page_size, (off_t)b * page_size) != (ssize_t)page_size) break;
      found = hs_page_verify(page, page_size, b, NULL, NULL) && hs_page_system(page) == mark;
    }
    if (fd >= 0) close(fd);
  }
  if (d) closedir(d);
  free(page);
  return found;
}

/* Whether a segment of the log in DIR/wal carries `system_id`: the log
 * and the control file agree, so the control file is no stranger. */
static bool log_agrees(const char *dir, uint64_t segment_bytes, uint64_t system_id) {
  char waldir[PATH_MAX + 8];
  snprintf(waldir, sizeof waldir, "%s/wal", dir);
  uint64_t *starts = NULL;
  size_t n = 0;
  bool agrees = false;
  if (segment_bytes && wal_segment_list(waldir, segment_bytes, &starts, &n) == HS_OK)
    for (size_t i = 0; i < n && !agrees; i++) {
      wal_seg_header_kind kind;
      wal_seg_header h;
      agrees = wal_segment_header(waldir, starts[i], &kind, &h) == HS_OK && kind == WAL_SEG_VALID &&
               h.system_id == system_id;
    }
  free(starts);
  return agrees;
}

static int replace_damaged(const char *dir, const char *name, bool force) {
  hs_relid rel;
  hs_fork fork;
  if (!hs_smgr_parse_fork_filename(name, &rel, &fork)) {
    fprintf(stderr, PROG ": %s is not a relation file's name (such as 16384 or 16384_fsm)\n", name);
    return 1;
  }
  hs_control c;
  if (hs_control_read(dir, &c) != HS_OK) return fail("reading the control file");
  if (!c.checksums) {
    fprintf(stderr,
            PROG ": %s/%s says the pages carry no checksums: no page can be proven damaged\n", dir,
            HS_CONTROL_FILE);
    return 1;
  }
  hs_smgr *smgr = NULL;
  hs_status st = force ? lock_dir(dir, c.page_size, &smgr)
                       : hs_smgr_open(dir, &(hs_smgr_options){.page_size = c.page_size}, &smgr);
  if (st != HS_OK) return fail(force ? "taking the directory's lock" : "opening the directory");
  char path[PATH_MAX + 64];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  int fd = open(path, (force ? O_RDWR : O_RDONLY) | O_CLOEXEC);
  if (fd < 0) {
    fprintf(stderr, PROG ": cannot open %s: %s\n", path, strerror(errno));
    hs_smgr_close(smgr);
    return 1;
  }
  unsigned char *page = malloc(c.page_size);
  uint64_t damaged = 0, blocks = 0;
  int rc = page ? 0 : 1;
  uint16_t mark = hs_page_system_tag(c.system_id);
  bool checked_others = false;
  for (hs_blockno block = 0; rc == 0; block++) {
    ssize_t got = pread(fd, page, c.page_size, (off_t)block * c.page_size);
    if (got == 0) break;
    if (got != (ssize_t)c.page_size) {
      fprintf(stderr, PROG ": %s: block %u: %s\n", path, block,
              got < 0 ? strerror(errno) : "a partial block at the end");
      rc = 1;
      break;
    }
    blocks++;
    bool intact = hs_page_verify(page, c.page_size, block, NULL, NULL);
    uint16_t theirs = intact ? hs_page_system(page) : 0;
    if (intact && (!theirs || theirs == mark)) continue;
    if (intact && !checked_others) {
      checked_others = true;
      if (!others_carry_mark(dir, name, c.page_size, mark) &&
          !log_agrees(dir, c.segment_bytes, c.system_id)) {
        fprintf(stderr,
                PROG ": %s's pages carry mark %04X, but neither another relation file in %s nor "
                     "its log (%s/wal) carries the system %016" PRIX64
                     " (mark %04X) its control file names: the control file may be the stranger "
                     "(recreated, or another directory's) rather than this file; restore the "
                     "control file that goes with the directory\n",
                path, theirs, dir, dir, c.system_id, mark);
        rc = 1;
        break;
      }
    }
    damaged++;
    if (intact)
      printf("%s: block %u was written by another data directory (mark %04X, this one's %04X)%s\n",
             path, block, theirs, mark, force ? "" : " (would be replaced by an empty page)");
    else
      printf("%s: block %u fails its checksum%s\n", path, block,
             force ? "" : " (would be replaced by an empty page)");
    if (!force) continue;
    char saved[PATH_MAX + 200];
    st = save_damaged(dir, name, block, page, c.page_size, saved, sizeof saved);
    if (st == HS_OK) {
      memset(page, 0, c.page_size);
      hs_page_stamp_system(page, c.page_size, block, 0, mark);
      if (pwrite(fd, page, c.page_size, (off_t)block * c.page_size) != (ssize_t)c.page_size)
        st = hs_fail(HS_ERR_IO, errno, "writing block %u of %s: %s", block, path, strerror(errno));
    }
    if (st != HS_OK) {
      rc = fail("replacing a damaged page");
      break;
    }
    printf("  replaced by an empty page; its bytes are kept in %s\n", saved);
  }
  if (rc == 0 && force && damaged && fsync(fd) != 0) {
    fprintf(stderr, PROG ": fsync of %s failed: %s\n", path, strerror(errno));
    rc = 1;
  }
  /* The file's mark (the newest page a checkpoint wrote) may be one of the
   * pages now empty: it says nothing any more. */
  if (rc == 0 && force && damaged) {
    catalog list;
    st = catalog_read(dir, &list);
    catalog_entry *e = st == HS_OK ? catalog_find(&list, rel, fork) : NULL;
    if (e && e->mark_lsn) {
      e->mark_block = 0;
      e->mark_lsn = 0;
      st = catalog_write(dir, &list);
    }
    catalog_free(&list);
    if (st != HS_OK && st != HS_ERR_NOENT) rc = fail("clearing the file's mark in the list");
  }
  close(fd);
  free(page);
  hs_smgr_close(smgr);
  if (rc) return rc;
  if (!damaged) {
    printf("%s: all %" PRIu64 " blocks pass their checksums and are this directory's: nothing to "
           "replace\n",
           path, blocks);
    return 0;
  }
  if (!force) {
    printf("nothing changed: run again with --force to replace the %" PRIu64
           " damaged pages, giving up what they held\n",
           damaged);
    return 1;
  }
  printf("done: %" PRIu64 " of %" PRIu64 " blocks of %s replaced by empty pages\n", damaged, blocks,
         path);
  return 0;
}

typedef struct verify_ctx {
  const char *dir;
  const catalog *list;
  bool json;
} verify_ctx;

static void verify_problem(void *ctx, const catalog_problem *p) {
  verify_ctx *v = ctx;
  char name[32], path[PATH_MAX + 64];
  hs_smgr_fork_filename(p->want.rel, p->want.fork, name, sizeof name);
  snprintf(path, sizeof path, "%s/%s", v->dir, name);
  if (v->json) {
    json_out j;
    json_begin(&j, stdout);
    json_str(&j, "file", path);
    json_str(&j, "problem", p->missing ? "missing" : "short");
    json_u64(&j, "min_blocks", p->want.min_blocks);
    if (!p->missing) json_u64(&j, "blocks", p->blocks);
    json_end_line(&j);
    return;
  }
  char what[PATH_MAX * 2 + 256];
  catalog_describe(v->dir, v->list, p, what, sizeof what);
  printf("%s\n", what);
}

/* A list that cannot be read, as one bad line. */
static void verify_list_lost(const char *dir, bool json, const char *problem, const char *why) {
  char path[PATH_MAX + 32];
  catalog_path(dir, path, sizeof path);
  if (json) {
    json_out j;
    json_begin(&j, stdout);
    json_str(&j, "file", path);
    json_str(&j, "problem", problem);
    json_end_line(&j);
  } else {
    printf("%s\n", why);
  }
}

uint64_t relations_verify(const char *dir, bool required, bool json) {
  catalog list;
  hs_status st = catalog_read(dir, &list);
  uint64_t bad = 0;
  if (st == HS_OK) {
    verify_ctx v = {.dir = dir, .list = &list, .json = json};
    bad = catalog_check(dir, &list, verify_problem, &v);
  } else if (st != HS_ERR_NOENT || required) {
    char why[1600];
    if (st == HS_ERR_NOENT)
      snprintf(why, sizeof why,
               "%s/%s is missing, but %s/%s says the directory keeps one: the files it must "
               "hold cannot be checked (`hotset relations --dir DIR --rebuild --force` writes a "
               "new one)",
               dir, HS_SMGR_RELATIONS_FILE, dir, HS_CONTROL_FILE);
    else
      snprintf(why, sizeof why, "%s", hs_last_error());
    verify_list_lost(dir, json, st == HS_ERR_NOENT ? "missing" : "damaged", why);
    bad = 1;
  }
  catalog_free(&list);
  return bad;
}

int relations_main(int argc, char **argv) {
  const char *dir = NULL, *forget_name = NULL, *replace_name = NULL;
  bool json = false, force = false, rebuild_flag = false;
  const args_opt opts[] = {
      BENCH_OPT_DATA_DIR(&dir),
      {.name = "json",
       .kind = ARGS_FLAG,
       .dest = &json,
       .help = "one JSON object per listed file, then one for the summary"},
      {.name = "forget",
       .kind = ARGS_STRING,
       .dest = &forget_name,
       .arg = "NAME",
       .help = "take the file NAME (e.g. 16384) off the list, giving up what it held"},
      {.name = "replace-damaged",
       .kind = ARGS_STRING,
       .dest = &replace_name,
       .arg = "NAME",
       .help = "replace each page of the file NAME that fails its checksum by an empty page, "
               "giving up what it held (its bytes are kept in DIR/damaged-pages)"},
      {.name = "rebuild",
       .kind = ARGS_FLAG,
       .dest = &rebuild_flag,
       .help = "write a new list of the relation files present now (for a lost or damaged list)"},
      {.name = "force",
       .kind = ARGS_FLAG,
       .dest = &force,
       .help = "do what --forget or --rebuild says (without: print it, change nothing)"},
  };
  args_parse(cmd, opts, sizeof opts / sizeof opts[0], argc, argv, 0);
  if (!dir) args_usage_error(cmd, "--dir is required");
  if ((forget_name != NULL) + rebuild_flag + (replace_name != NULL) > 1)
    args_usage_error(cmd, "--forget, --rebuild and --replace-damaged exclude each other");
  if (force && !forget_name && !rebuild_flag && !replace_name)
    args_usage_error(cmd, "--force goes with --forget, --rebuild or --replace-damaged");
  struct stat sb;
  if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
    fprintf(stderr, PROG ": %s: not a directory\n", dir);
    return 1;
  }

  if (replace_name) return replace_damaged(dir, replace_name, force);
  hs_control control;
  hs_status st = hs_control_read(dir, &control);
  bool have_control = st == HS_OK;
  catalog list;
  st = catalog_read(dir, &list);
  bool have_list = st == HS_OK;
  uint32_t page_size = dir_page_size(&control, have_control, &list, have_list);
  if (rebuild_flag) {
    catalog_free(&list);
    return rebuild(dir, page_size, force);
  }
  if (!have_list) {
    char path[PATH_MAX + 32];
    catalog_path(dir, path, sizeof path);
    int rc = 1;
    if (st == HS_ERR_NOENT && !(have_control && control.has_catalog)) {
      printf("%s: no list of relation files yet (the directory lists its files when a pool next "
             "opens it)\n",
             dir);
      rc = forget_name ? 1 : 0;
    } else if (st == HS_ERR_NOENT) {
      fprintf(stderr,
              PROG ": %s is missing, but %s/%s says the directory keeps one; `" PROG
                   " --dir DIR --rebuild --force` writes a new one\n",
              path, dir, HS_CONTROL_FILE);
    } else {
      fail("reading the list");
    }
    catalog_free(&list);
    return rc;
  }
  if (forget_name) {
    int rc = forget(dir, &list, forget_name, force);
    catalog_free(&list);
    return rc;
  }

  show_ctx s = {.dir = dir, .list = &list, .json = json};
  size_t bad = catalog_check(dir, &list, show_problem, &s);
  show_fine_up_to(&s, list.n);
  if (json) {
    json_out j;
    json_begin(&j, stdout);
    json_str(&j, "dir", dir);
    json_u64(&j, "listed", list.n);
    json_u64(&j, "bad", bad);
    json_u64(&j, "page_size", list.page_size);
    json_end_line(&j);
  } else {
    printf("%s: %u listed files (blocks of %u bytes), %zu missing or short: %s\n", dir, list.n,
           list.page_size, bad, bad ? "FAILED" : "ok");
  }
  catalog_free(&list);
  return bad ? 1 : 0;
}
