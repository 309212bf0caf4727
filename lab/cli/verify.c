/*
 * cli/verify.c — `hotset verify --dir D`: every page of a data directory
 * checked on disk.
 *
 * The relation files of D (named as the storage manager names them:
 * "<rel>", "<rel>_fsm", "<rel>_vm", "<rel>_init") are read with pread, not
 * through a pool: a pool would recover first and repair or hide what this
 * is meant to show. Each page must pass hs_page_verify at its block number
 * (a page of zeros does), and its LSN must not be past the end of the log
 * in D/wal — a page written ahead of its log record, or a log cut short.
 * The log is read as a pool reads it — from the control file's redo point
 * to its end — and its segments' sizes checked: a damaged or missing
 * segment, or a checkpoint record the log no longer holds, is bad, as the
 * pool would refuse it. The evidence kept in the log directory (kept-*,
 * reset-*) is listed. The log is only read, never opened for writing, so
 * verifying changes nothing.
 */
#include "cli/verify.h"

#include "cli/evidence.h"
#include "cli/relations.h"
#include "common/args.h"
#include "common/flags.h"
#include "common/json.h"
#include "common/resources.h"
#include "common/stamped.h"
#include "core/error.h"
#include "hotset/control.h"
#include "hotset/page.h"
#include "hotset/storage.h"
#include "hotset/wal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PROG "hotset verify"

static const args_command command = {
    .cmd = {.prog = PROG},
    .synopsis = "--dir DIR [--page-size SIZE] [--json]",
    .about = "Checks every page of the relation files in DIR on disk: its checksum (a page of\n"
             "zeros passes) and that its LSN is not past the end of the log in DIR/wal.\n"
             "The page size and the log's segment size come from DIR's control file.\n"
             "Prints each bad page on a line (file, block, what is wrong), then a summary.\n"
             "A file the directory must hold (`hotset relations`) that is missing or shorter\n"
             "than at the last checkpoint is bad too.\n",
    .notes = "Exit status 1 if any page or listed file is bad (or a file cannot be read).\n",
};
static const args_cmd *const cmd = &command.cmd;

static int cmp_names(const void *a, const void *b) {
  const char *x = *(char *const *)a, *y = *(char *const *)b;
  unsigned long rx = strtoul(x, NULL, 10), ry = strtoul(y, NULL, 10);
  if (rx != ry) return rx < ry ? -1 : 1;
  return strcmp(x, y);
}

/* The relation files of `dir`, sorted by relation, then fork. */
static hs_status list_relation_files(const char *dir, char ***names, size_t *n) {
  *names = NULL;
  *n = 0;
  DIR *d = opendir(dir);
  if (!d) return hs_fail(HS_ERR_NOENT, errno, "cannot list %s: %s", dir, strerror(errno));
  size_t cap = 0;
  hs_status st = HS_OK;
  for (struct dirent *e; st == HS_OK && (e = readdir(d)) != NULL;) {
    if (!hs_smgr_parse_fork_filename(e->d_name, NULL, NULL)) continue;
    if (*n == cap) {
      cap = cap ? cap * 2 : 16;
      char **more = realloc(*names, cap * sizeof *more);
      if (!more) {
        st = hs_fail(HS_ERR_NOMEM, ENOMEM, "out of memory listing %s", dir);
        break;
      }
      *names = more;
    }
    if (!((*names)[*n] = strdup(e->d_name)))
      st = hs_fail(HS_ERR_NOMEM, ENOMEM, "out of memory listing %s", dir);
    else
      (*n)++;
  }
  closedir(d);
  if (*n) qsort(*names, *n, sizeof **names, cmp_names);
  return st;
}

/* What the log in `waldir` says, read as a pool would: its segments (each
 * must be whole: `segment_bytes` long — from the control file, else the
 * size most segments have), from the control file's redo point to its end;
 * the end must be past the checkpoint record the control file names, and
 * no damage may have valid records of the log after it (docs/wal.md, "What
 * recovery refuses"). Each problem is a line and counts as bad. *have is
 * false if there is no log. */
typedef struct log_verdict {
  bool have;
  hs_lsn end;
  uint64_t bad;
} log_verdict;

static int u64_cmp(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* A problem with the log: a line, or a JSON object. */
static void report_log(bool json, const char *problem, const char *text) {
  if (json) {
    json_out j;
    json_begin(&j, stdout);
    json_str(&j, "problem", problem);
    json_str(&j, "detail", text);
    json_end_line(&j);
  } else {
    printf("%s\n", text);
  }
}

static hs_status check_log(const char *waldir, const hs_control *control, bool have_control,
                           bool json, log_verdict *v) {
  memset(v, 0, sizeof *v);
  char text[5000];
  /* A control file that names a checkpoint needs the log it is in: a pool
   * refuses to open without it, and so is it bad here. */
  bool needs_log = have_control && control->has_checkpoint;
  DIR *d = opendir(waldir);
  if (!d) {
    if (errno != ENOENT)
      return hs_fail(HS_ERR_IO, errno, "cannot list %s: %s", waldir, strerror(errno));
    if (needs_log) {
      v->bad++;
      snprintf(text, sizeof text,
               "%s: no log directory, but the control file names a checkpoint at %" PRIX64, waldir,
               control->checkpoint);
      report_log(json, "log_missing", text);
    }
    return HS_OK;
  }
  uint64_t sizes[4096];
  char names[4096][17];
  size_t n = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL && n < 4096;) {
    if (strlen(e->d_name) != 16 || strspn(e->d_name, "0123456789ABCDEF") != 16) continue;
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", waldir, e->d_name);
    struct stat sb;
    if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) continue;
    sizes[n] = (uint64_t)sb.st_size;
    snprintf(names[n++], sizeof names[0], "%.16s", e->d_name); /* 16 hex digits, checked above */
  }
  closedir(d);
  if (n == 0) {
    if (needs_log) {
      v->bad++;
      snprintf(text, sizeof text,
               "%s: no log segment, but the control file names a checkpoint at %" PRIX64, waldir,
               control->checkpoint);
      report_log(json, "log_missing", text);
    }
    return HS_OK;
  }
  uint64_t segment = have_control ? control->segment_bytes : 0;
  if (!segment) { /* the size most segments have */
    uint64_t sorted[4096];
    memcpy(sorted, sizes, n * sizeof *sizes);
    qsort(sorted, n, sizeof *sorted, u64_cmp);
    size_t best = 0, run = 0;
    for (size_t i = 0; i < n; i++) {
      run = i && sorted[i] == sorted[i - 1] ? run + 1 : 1;
      if (run > best) {
        best = run;
        segment = sorted[i];
      }
    }
  }
  for (size_t i = 0; i < n; i++)
    if (sizes[i] != segment) {
      v->bad++;
      snprintf(text, sizeof text, "%s/%.16s: %" PRIu64 " bytes, where a log segment has %" PRIu64,
               waldir, names[i], sizes[i], segment);
      report_log(json, "segment_size", text);
    }
  if (segment < HS_WAL_MIN_SEGMENT || segment > HS_WAL_MAX_SEGMENT || (segment & (segment - 1)))
    return HS_OK; /* no size to read the log with: said above */
  hs_lsn from = have_control && control->has_checkpoint ? control->redo : 0;
  hs_wal_reader *r;
  hs_status st = hs_wal_reader_open(waldir, segment, from, &r);
  if (st != HS_OK) return st;
  hs_wal_read_record rec;
  bool got;
  while ((st = hs_wal_reader_next(r, &rec, &got)) == HS_OK && got) {
  }
  if (st == HS_OK) {
    v->have = true;
    v->end = hs_wal_reader_end(r);
    if (hs_wal_reader_end_kind(r) == HS_WAL_END_CORRUPT) {
      v->bad++;
      snprintf(text, sizeof text, "%s: the log is damaged: %s", waldir, hs_wal_reader_why_end(r));
      report_log(json, "log_damaged", text);
    }
    if (have_control && control->has_checkpoint && v->end <= control->checkpoint) {
      v->bad++;
      snprintf(text, sizeof text,
               "%s: the log read from the redo point %" PRIX64 " ends at %" PRIX64
               ", before the checkpoint record at %" PRIX64 " that the control file names",
               waldir, from, v->end, control->checkpoint);
      report_log(json, "checkpoint_missing", text);
    }
  }
  hs_wal_reader_close(r);
  return st;
}

/* The evidence kept in the log directory (kept-*, reset-*): listed with
 * its size, never counted as bad — and the command that removes it. */
static void list_evidence(const char *dir, const char *waldir, bool json) {
  DIR *d = opendir(waldir);
  if (!d) return;
  size_t found = 0;
  uint64_t total = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    if (!evidence_name(e->d_name)) continue;
    char path[4500];
    snprintf(path, sizeof path, "%s/%s", waldir, e->d_name);
    uint64_t tree_bytes = evidence_bytes(path);
    found++;
    total += tree_bytes;
    if (json) {
      json_out j;
      json_begin(&j, stdout);
      json_str(&j, "evidence", path);
      json_u64(&j, "bytes", tree_bytes);
      json_end_line(&j);
    } else {
      printf("evidence: %s (%" PRIu64 " bytes)\n", path, tree_bytes);
    }
  }
  closedir(d);
  if (found && !json)
    printf("evidence: %zu directories, %" PRIu64 " bytes; remove them with `hotset reset-log "
           "--dir %s --remove-kept`\n",
           found, total, dir);
}

typedef struct verify_totals {
  uint64_t files, pages, bad;
} verify_totals;

static void report_bad(bool json, const char *path, hs_blockno block, const char *problem,
                       const char *detail_key1, uint64_t v1, const char *detail_key2, uint64_t v2,
                       const char *text) {
  if (json) {
    json_out j;
    json_begin(&j, stdout);
    json_str(&j, "file", path);
    json_u64(&j, "block", block);
    json_str(&j, "problem", problem);
    if (detail_key1) json_u64(&j, detail_key1, v1);
    if (detail_key2) json_u64(&j, detail_key2, v2);
    json_end_line(&j);
  } else {
    printf("%s block %u: %s\n", path, block, text);
  }
}

static hs_status verify_file(const char *path, uint32_t page_size, bool have_end, hs_lsn end,
                             uint16_t mark, bool json, void *page, verify_totals *t) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return hs_fail(HS_ERR_IO, errno, "cannot open %s: %s", path, strerror(errno));
  struct stat sb;
  if (fstat(fd, &sb) != 0) {
    int err = errno;
    close(fd);
    return hs_fail(HS_ERR_IO, err, "cannot stat %s: %s", path, strerror(err));
  }
  t->files++;
  uint64_t blocks = (uint64_t)sb.st_size / page_size;
  hs_status st = HS_OK;
  char text[160];
  for (hs_blockno b = 0; b < blocks; b++) {
    ssize_t n = pread(fd, page, page_size, (off_t)b * page_size);
    if (n != (ssize_t)page_size) {
      st = hs_fail(HS_ERR_IO, n < 0 ? errno : 0, "cannot read block %u of %s: %s", b, path,
                   n < 0 ? strerror(errno) : "short read");
      break;
    }
    t->pages++;
    uint32_t expected, found;
    if (!hs_page_verify(page, page_size, b, &expected, &found)) {
      t->bad++;
      snprintf(text, sizeof text, "checksum expected %08X, found %08X", expected, found);
      report_bad(json, path, b, "checksum", "expected", expected, "found", found, text);
      continue;
    }
    uint16_t theirs = hs_page_system(page);
    if (mark && theirs && theirs != mark) {
      t->bad++;
      snprintf(text, sizeof text,
               "written by another data directory (mark %04X; this directory's is %04X)", theirs,
               mark);
      report_bad(json, path, b, "system", "mark", theirs, "own_mark", mark, text);
      continue;
    }
    uint64_t lsn = hs_page_lsn(page);
    if (have_end && lsn > end) {
      t->bad++;
      snprintf(text, sizeof text, "LSN %" PRIX64 " is past the end of the log at %" PRIX64, lsn,
               end);
      report_bad(json, path, b, "lsn", "lsn", lsn, "log_end", end, text);
    }
  }
  if (st == HS_OK && (uint64_t)sb.st_size % page_size) {
    t->bad++;
    snprintf(text, sizeof text, "a partial page of %" PRIu64 " bytes at the end of the file",
             (uint64_t)sb.st_size % page_size);
    report_bad(json, path, (hs_blockno)blocks, "partial", "bytes", (uint64_t)sb.st_size % page_size,
               NULL, 0, text);
  }
  close(fd);
  return st;
}

int verify_main(int argc, char **argv) {
  const char *dir = NULL;
  uint64_t page_size = 0;
  bool json = false;
  const args_opt opts[] = {
      {.name = "dir",
       .kind = ARGS_PATH,
       .dest = &dir,
       .max = BENCH_DIR_MAX,
       .arg = "DIR",
       .help = "the data directory (its log in DIR/wal)"},
      BENCH_OPT_DIR_PAGE_SIZE(&page_size),
      {.name = "json",
       .kind = ARGS_FLAG,
       .dest = &json,
       .help = "one JSON object per bad page, then one for the summary"},
  };
  args_parse(cmd, opts, sizeof opts / sizeof opts[0], argc, argv, 0);
  if (!dir) args_usage_error(cmd, "--dir is required");

  char waldir[4200];
  snprintf(waldir, sizeof waldir, "%s/wal", dir);
  bool have_end = false;
  hs_lsn end = 0;
  char **names = NULL;
  size_t n = 0;
  /* The directory says what its pages are: their size, whether they carry
   * checksums to verify, and its log's segment size. */
  hs_control control;
  hs_status st = hs_control_read(dir, &control);
  bool have_control = st == HS_OK;
  if (st == HS_ERR_NOENT) st = HS_OK;
  if (st == HS_OK) st = bench_dir_page_size(dir, &page_size);
  if (st == HS_OK && have_control && !control.checksums) {
    fprintf(stderr,
            PROG ": %s: its pages carry no checksums (%s/" HS_CONTROL_FILE
                 "), so there is nothing to verify them against\n",
            dir, dir);
    return 1;
  }
  log_verdict lv = {0};
  if (st == HS_OK) st = check_log(waldir, &control, have_control, json, &lv);
  have_end = lv.have;
  end = lv.end;
  if (st == HS_OK) st = list_relation_files(dir, &names, &n);
  void *page = NULL;
  if (st == HS_OK && !(page = malloc(page_size)))
    st = hs_fail(HS_ERR_NOMEM, ENOMEM, "out of memory");
  verify_totals t = {0};
  for (size_t i = 0; st == HS_OK && i < n; i++) {
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    st = verify_file(path, (uint32_t)page_size, have_end, end,
                     have_control ? hs_page_system_tag(control.system_id) : 0, json, page, &t);
  }
  /* The files the directory must hold (hotset relations): one missing or
   * cut short is bad too, though no page of it is left to check. */
  if (st == HS_OK) t.bad += relations_verify(dir, have_control && control.has_catalog, json);
  for (size_t i = 0; i < n; i++) free(names[i]);
  free(names);
  free(page);
  if (st != HS_OK) {
    fprintf(stderr, PROG ": %s\n", hs_last_error());
    return 1;
  }
  t.bad += lv.bad;
  list_evidence(dir, waldir, json);
  if (json) {
    json_out j;
    json_begin(&j, stdout);
    json_str(&j, "dir", dir);
    json_u64(&j, "files", t.files);
    json_u64(&j, "pages", t.pages);
    json_u64(&j, "bad", t.bad);
    if (have_end) json_u64(&j, "log_end", end);
    json_end_line(&j);
  } else {
    char log[64] = "no log in DIR/wal: LSNs not checked";
    if (have_end) snprintf(log, sizeof log, "log ends at %" PRIX64, end);
    printf("%s: %" PRIu64 " files, %" PRIu64 " pages, %" PRIu64 " bad (%s): %s\n", dir, t.files,
           t.pages, t.bad, log, t.bad ? "FAILED" : "ok");
  }
  return t.bad ? 1 : 0;
}
